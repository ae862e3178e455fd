//! Typed errors for every way a machine description can be wrong.

use std::path::PathBuf;

/// What went wrong while reading or validating a machine description.
///
/// Each variant names the input at fault (file, node, matrix cell) so that the message alone
/// is enough to fix the input.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TopologyError {
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The machine has more nodes or CPUs than Zonal handles.
    #[error("the machine has {count} {what}, more than the limit of {limit}")]
    TooMany {
        /// `"NUMA nodes"` or `"CPUs"`.
        what: &'static str,
        /// How many it has (at least).
        count: usize,
        /// The limit (`MAX_NODES`, `MAX_CPUS`).
        limit: usize,
    },
    /// The distance matrix relates so many nodes at so many distinct distances that the
    /// hierarchy's per-level spans would list more node ids than the limit (they grow as
    /// nodes² × levels; see [`MAX_SPAN_ENTRIES`](crate::MAX_SPAN_ENTRIES)). Checked from the
    /// matrix before any hierarchy is built.
    #[error(
        "the distance matrix has {levels} distinct distances ({first}..={last}) over {nodes} \
         nodes with CPUs: their per-level spans would list {entries} node ids, more than the \
         limit of {limit}"
    )]
    TooManySpanEntries {
        /// Nodes with CPUs (the nodes the hierarchy relates).
        nodes: usize,
        /// Distinct distances among them: the memory access levels `M`.
        levels: usize,
        /// The smallest of those distances.
        first: u32,
        /// The largest of those distances.
        last: u32,
        /// How many node ids the spans of every node at every level would list.
        entries: u64,
        /// The limit (`MAX_SPAN_ENTRIES`).
        limit: u64,
    },
    /// The path is not a regular file (a FIFO, device, socket or directory).
    #[error("cannot read {path}: it is {kind}, not a regular file")]
    NotAFile {
        /// The path.
        path: PathBuf,
        /// What it is.
        kind: &'static str,
    },
    /// The file is larger than the limit.
    #[error("cannot read {path}: {bytes} bytes, more than the limit of {limit}")]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size (at least).
        bytes: u64,
        /// The limit (`MAX_INPUT_BYTES`).
        limit: u64,
    },
    /// An XML file nests its elements deeper than the limit.
    #[error("{path}: XML elements nest {depth} deep, more than the limit of {limit}")]
    XmlTooDeep {
        /// The file.
        path: PathBuf,
        /// Its nesting depth.
        depth: usize,
        /// The limit (`MAX_XML_DEPTH`).
        limit: usize,
    },
    /// A `--nodes` JSON document did not parse.
    #[cfg(feature = "json")]
    #[error("malformed node dump {origin}: {source}")]
    Json {
        /// Where the JSON came from (a path or `<string>`).
        origin: String,
        /// The parser's error.
        #[source]
        source: serde_json::Error,
    },
    /// A `--nodes` JSON document repeats a key in one object (serde_json would keep the
    /// last one silently). Checked at every nesting level before the document is read.
    #[error(
        "{origin}: key {key:?} appears twice in {} (line {line}, column {column})",
        object_at(.path)
    )]
    DuplicateKey {
        /// Where the JSON came from (a path or `<string>`).
        origin: String,
        /// Where the object sits in the document (`nodes[2]`; empty for the top level).
        path: String,
        /// The repeated key.
        key: String,
        /// The 1-based line of its second occurrence.
        line: usize,
        /// The column just past it.
        column: usize,
    },
    /// hwloc could not load or read an XML file or this machine.
    #[error("hwloc failed on {origin}: {message}")]
    Hwloc {
        /// What was being loaded (a path, or `this machine`).
        origin: String,
        /// hwloc's complaint.
        message: String,
    },
    /// A sysfs file had content we could not parse.
    #[error("malformed sysfs file {path}: {message}")]
    Sysfs {
        /// The file.
        path: PathBuf,
        /// What was wrong.
        message: String,
    },
    /// A `/proc/…/status` file whose `Cpus_allowed_list` is missing or malformed.
    #[error("malformed {path}: {message}")]
    ProcStatus {
        /// The file.
        path: PathBuf,
        /// What was wrong, with the value.
        message: String,
    },
    /// This machine cannot be discovered: not Linux, and built without the `hwloc` feature.
    #[error(
        "cannot discover this machine on {os}: zonal-topology reads sysfs on Linux only; \
         build with the `hwloc` feature (libhwloc) for other systems"
    )]
    NoDiscovery {
        /// The OS (`std::env::consts::OS`).
        os: &'static str,
    },
    /// This Linux machine cannot be discovered: neither `/sys/devices/system/node` nor
    /// `/sys/devices/system/cpu/online` is there (sysfs not mounted, or masked).
    #[error(
        "cannot discover this machine: neither {}/node nor {}/cpu/online exists \
         (is sysfs mounted?)",
        .path.display(),
        .path.display()
    )]
    NoSysfs {
        /// `…/sys/devices/system` under the root read.
        path: PathBuf,
    },
    /// The description has no NUMA node at all.
    #[error("the machine description has no NUMA node")]
    NoNodes,
    /// No node has a CPU.
    #[error("the machine description has no CPU")]
    NoCpus,
    /// Two nodes carry the same OS id.
    #[error("node id {id} appears more than once")]
    DuplicateNode {
        /// The repeated OS node id.
        id: u32,
    },
    /// Two nodes claim the same CPU.
    #[error("CPU {cpu} is listed by both node {first} and node {second}")]
    OverlappingCpus {
        /// The CPU's OS index.
        cpu: u32,
        /// OS id of the first node listing it.
        first: u32,
        /// OS id of the second node listing it.
        second: u32,
    },
    /// The distance matrix is not `nodes × nodes`.
    #[error("distance matrix is not square: {nodes} nodes but row {row} has {len} entries")]
    NonSquareMatrix {
        /// Number of nodes.
        nodes: usize,
        /// The offending row (node index in input order).
        row: usize,
        /// Its length.
        len: usize,
    },
    /// The matrix has a different number of rows than there are nodes.
    #[error("distance matrix has {rows} rows for {nodes} nodes")]
    MatrixRows {
        /// Rows given.
        rows: usize,
        /// Nodes described.
        nodes: usize,
    },
    /// A distance outside Linux's accepted range 10..=255.
    #[error("distance from node {from} to node {to} is {value}, outside 10..=255")]
    DistanceOutOfRange {
        /// OS id of the row's node.
        from: u32,
        /// OS id of the column's node.
        to: u32,
        /// The value.
        value: u64,
    },
    /// A node's distance to itself is zero.
    #[error("distance from node {node} to itself is 0")]
    ZeroDiagonal {
        /// OS id of the node.
        node: u32,
    },
    /// `d(i, j) != d(j, i)` (only reported when strict symmetry is asked for; Linux only warns).
    #[error("distance matrix is asymmetric: d({a},{b}) = {ab} but d({b},{a}) = {ba}")]
    AsymmetricMatrix {
        /// OS id of one node.
        a: u32,
        /// OS id of the other.
        b: u32,
        /// `d(a, b)`.
        ab: u32,
        /// `d(b, a)`.
        ba: u32,
    },
    /// A preset name we do not know.
    #[error("unknown preset {name:?}; valid presets: {valid}")]
    UnknownPreset {
        /// The name asked for.
        name: String,
        /// The valid names, comma-separated.
        valid: String,
    },
    /// A generator was asked for an impossible shape.
    #[error("invalid generator parameters: {0}")]
    InvalidGenerator(String),
    /// A CPU list such as `0-3,8` did not parse.
    #[error("malformed CPU list {text:?}: {message}")]
    CpuList {
        /// The text.
        text: String,
        /// What was wrong.
        message: String,
    },
    /// An hwloc XML export that is malformed, or holds a value hwloc would refuse without
    /// saying why or misread (`source/xml_check.rs` lists the checks).
    #[error("{path}:{line}: {message}")]
    Xml {
        /// The file.
        path: PathBuf,
        /// The 1-based line of the element at fault.
        line: u32,
        /// What is wrong: the element, the attribute and the value.
        message: String,
    },
    /// The nodes' memory sizes do not add up to a byte count (the sum passes 2^64).
    #[error("node {node}'s memory of {bytes} bytes takes the machine's total past 2^64 bytes")]
    MemoryOverflow {
        /// The node whose size makes the sum overflow.
        node: u32,
        /// Its size in bytes.
        bytes: u64,
    },
    /// An error in an input file's content: the file, then what is wrong in it (see
    /// [`TopologyError::cause`] for the error itself).
    #[error("{path}: {source}")]
    InFile {
        /// The file (or, for a sysfs root, the root).
        path: PathBuf,
        /// What is wrong in it.
        #[source]
        source: Box<TopologyError>,
    },
}

impl TopologyError {
    /// Ties an error to the input file it was found in, unless its message already names a
    /// file.
    #[must_use]
    pub fn in_file(self, path: impl Into<PathBuf>) -> Self {
        match self {
            TopologyError::Io { .. }
            | TopologyError::NotAFile { .. }
            | TopologyError::TooLarge { .. }
            | TopologyError::XmlTooDeep { .. }
            | TopologyError::Xml { .. }
            | TopologyError::DuplicateKey { .. }
            | TopologyError::Hwloc { .. }
            | TopologyError::Sysfs { .. }
            | TopologyError::ProcStatus { .. }
            | TopologyError::NoSysfs { .. }
            | TopologyError::InFile { .. } => self,
            #[cfg(feature = "json")]
            TopologyError::Json { .. } => self,
            other => TopologyError::InFile {
                path: path.into(),
                source: Box::new(other),
            },
        }
    }

    /// The error itself, without the file it was found in ([`TopologyError::InFile`]).
    ///
    /// ```
    /// # use zonal_topology::doc_facade as zonal;
    /// use zonal::topology::TopologyError;
    /// let e = TopologyError::NoNodes.in_file("dump.json");
    /// assert!(e.to_string().starts_with("dump.json: "));
    /// assert!(matches!(e.cause(), TopologyError::NoNodes));
    /// ```
    #[must_use]
    pub fn cause(&self) -> &TopologyError {
        match self {
            TopologyError::InFile { source, .. } => source.cause(),
            other => other,
        }
    }
}

/// `the object at nodes[2]`, or `the top-level object` for an empty path.
fn object_at(path: &str) -> String {
    if path.is_empty() {
        "the top-level object".to_owned()
    } else {
        format!("the object at {path}")
    }
}

/// Shorthand for results of this crate.
pub type Result<T, E = TopologyError> = std::result::Result<T, E>;
