//! Zonal's own reading of an hwloc XML export, before hwloc sees it: what hwloc would refuse
//! with a bare "errno 22", and what it would silently misread, become errors that name the
//! file, the line, the element, the attribute and the value.
//!
//! | what | checked | why |
//! |---|---|---|
//! | the document | well-formed UTF-8 XML whose root is `<topology>` | hwloc only says "errno 22" |
//! | `<object type=…>` | a type name hwloc knows (its own matching: a case-insensitive prefix of `Package`, `NUMANode`, `L2Cache`, …, or a version-1 name) | hwloc only says "errno 22" |
//! | bitmaps (`cpuset`, `complete_cpuset`, `allowed_cpuset`, `online_cpuset`, `nodeset`, `complete_nodeset`, `allowed_nodeset`) | comma-separated `0x` words of 1–8 hex digits (empty words are zero words, as hwloc writes them), optionally led by `0xf...f,`; at most [`MAX_BITMAP_WORDS`] words | hwloc reads `0xzz` as an empty set and carries on |
//! | numbers (`os_index`, `gp_index`, `local_memory`, `cache_size`, `depth`) | unsigned decimal integers in range | hwloc's `strtoul` reads `-5` as a huge number |
//! | `NUMANode`, `PU` | an `os_index` other than hwloc's "unknown" (4294967295); a PU's `cpuset` is exactly its `os_index`, a node's `nodeset` exactly its `os_index` | a node or CPU without an index is dropped |
//! | an object's sets | `cpuset`, `complete_cpuset`, `nodeset`, `complete_nodeset` all present on CPU-tree and memory objects, absent on I/O and Misc ones; `allowed_cpuset` and `allowed_nodeset` on the root (hwloc 2) | libhwloc 2.9's importer dereferences a missing one: a segmentation fault |
//! | an object's children | the `cpuset`s of its normal children (not memory, I/O or Misc) add up to its own | an inconsistent tree drops CPUs, and makes libhwloc's self-check abort the process in debug builds |
//! | `<distances2>` (hwloc 2) | `nbobjs` in 1..=4096, as many `<indexes>` as objects, exactly `nbobjs²` values, each an unsigned decimal; with `os` or `gp` indexing on NUMA nodes, every index names a node of the document | hwloc ignores extra values, reads `-5` as 2^64 − 5 and drops a matrix naming no node |
//! | `<distances>` (hwloc 1) | `nbobjs` in 1..=4096 and exactly `nbobjs²` `<latency value=…>`, each finite and ≥ 0 | as above |
//!
//! Anything else (attributes and elements this module does not know) is left to hwloc.

use std::collections::BTreeSet;
use std::path::Path;

use crate::error::{Result, TopologyError};
use crate::machine::{MAX_CPUS, MAX_NODES};

/// The longest bitmap accepted, in 32-bit words (131,072 bits: CPU and node OS indexes below
/// that). A longer one is refused before anything grows with it.
pub(crate) const MAX_BITMAP_WORDS: usize = 4_096;

/// The most objects a distance matrix may relate.
const MAX_MATRIX_OBJECTS: usize = if MAX_CPUS > MAX_NODES {
    MAX_CPUS
} else {
    MAX_NODES
};

/// hwloc's "unknown" OS index, `(unsigned) -1`.
const UNKNOWN_INDEX: u64 = u32::MAX as u64;

/// The attributes that hold bitmaps.
const BITMAPS: [&str; 7] = [
    "cpuset",
    "complete_cpuset",
    "allowed_cpuset",
    "online_cpuset",
    "nodeset",
    "complete_nodeset",
    "allowed_nodeset",
];

/// Numeric attributes of `<object>` and their largest value.
const NUMBERS: [(&str, u64); 5] = [
    ("os_index", u32::MAX as u64),
    ("gp_index", u64::MAX),
    ("local_memory", u64::MAX),
    ("cache_size", u64::MAX),
    ("depth", u32::MAX as u64),
];

/// Checks an hwloc XML document (module docs).
///
/// # Errors
/// [`TopologyError::Xml`] naming `path`, the line and what is wrong.
pub(crate) fn check(path: &Path, bytes: &[u8]) -> Result<()> {
    let err = |line: u32, message: String| TopologyError::Xml {
        path: path.into(),
        line,
        message,
    };
    let text = std::str::from_utf8(bytes).map_err(|e| {
        err(
            line_of_offset(bytes, e.valid_up_to()),
            format!("not UTF-8 text (at byte {})", e.valid_up_to()),
        )
    })?;
    let options = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..roxmltree::ParsingOptions::default()
    };
    let doc = roxmltree::Document::parse_with_options(text, options)
        .map_err(|e| err(e.pos().row, format!("not well-formed XML: {e}")))?;
    let mut c = Checker {
        doc: &doc,
        node_os: BTreeSet::new(),
        node_gp: BTreeSet::new(),
    };
    let root = doc.root_element();
    if root.tag_name().name() != "topology" {
        return Err(err(
            c.line(root),
            format!(
                "the root element is <{}>, not <topology>: not an hwloc export",
                root.tag_name().name()
            ),
        ));
    }
    // hwloc 1 exports carry no version; 2 and 3 say so.
    let v1 = root.attribute("version").is_none();
    c.objects(root, v1).map_err(|(line, m)| err(line, m))?;
    for d in root.descendants().filter(|n| n.is_element()) {
        match d.tag_name().name() {
            "distances2" | "distances2hetero" => c.distances2(d),
            "distances" => c.distances1(d),
            _ => Ok(()),
        }
        .map_err(|(line, m)| err(line, m))?;
    }
    Ok(())
}

/// An error before it is tied to the file: its line and message.
type Found = (u32, String);

struct Checker<'a, 'input> {
    doc: &'a roxmltree::Document<'input>,
    /// The OS and global indexes of the document's NUMA nodes.
    node_os: BTreeSet<u64>,
    node_gp: BTreeSet<u64>,
}

/// What the tree check needs of an object.
struct Object {
    kind: Kind,
    cpuset: Option<Bitmap>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    /// Takes part in the CPU tree (Machine, Package, Core, PU, caches, groups, …).
    Normal,
    /// NUMANode or MemCache: shares its parent's CPUs.
    Memory,
    /// Bridge, PCI device, OS device or Misc: no CPUs of its own.
    Other,
}

impl<'input> Checker<'_, 'input> {
    fn line(&self, n: roxmltree::Node<'_, 'input>) -> u32 {
        self.doc.text_pos_at(n.range().start).row
    }

    /// Walks every `<object>` under `root` (iteratively: no recursion, whatever the depth),
    /// checking each and how its children's cpusets fit it: the normal children's are
    /// disjoint and add up to its own; a memory child's equals it (hwloc 2).
    fn objects(
        &mut self,
        root: roxmltree::Node<'_, 'input>,
        v1: bool,
    ) -> std::result::Result<(), Found> {
        let mut stack: Vec<(roxmltree::Node<'_, 'input>, Option<Bitmap>)> = vec![(root, None)];
        while let Some((n, own)) = stack.pop() {
            let mut union: Option<Bitmap> = None;
            for child in n
                .children()
                .filter(|c| c.is_element() && c.tag_name().name() == "object")
            {
                let o = self.object(child, v1)?;
                let ty = child.attribute("type").unwrap_or("?");
                match (o.kind, &o.cpuset) {
                    (Kind::Normal, Some(set)) => {
                        let u = union.get_or_insert_with(Bitmap::default);
                        if u.intersects(set) {
                            return Err((
                                self.line(child),
                                format!(
                                    "<object type=\"{ty}\"> cpuset=\"{}\" overlaps a sibling's",
                                    child.attribute("cpuset").unwrap_or("")
                                ),
                            ));
                        }
                        u.union_with(set);
                    }
                    (Kind::Memory, Some(set)) => {
                        if let Some(parent) = own.as_ref().filter(|p| *p != set) {
                            return Err((
                                self.line(child),
                                format!(
                                    "<object type=\"{ty}\"> cpuset=\"{}\" differs from its \
                                     parent's {} (a memory object shares its parent's CPUs)",
                                    child.attribute("cpuset").unwrap_or(""),
                                    parent.describe()
                                ),
                            ));
                        }
                    }
                    _ => {}
                }
                stack.push((child, o.cpuset));
            }
            if let (Some(set), Some(union)) = (&own, &union) {
                if set != union {
                    return Err((
                        self.line(n),
                        format!(
                            "<object type=\"{}\"> has cpuset=\"{}\" but its children's cpusets \
                             add up to {}",
                            n.attribute("type").unwrap_or("?"),
                            n.attribute("cpuset").unwrap_or(""),
                            union.describe()
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Checks one `<object>`'s attributes; records NUMA nodes' indexes.
    fn object(
        &mut self,
        n: roxmltree::Node<'_, 'input>,
        v1: bool,
    ) -> std::result::Result<Object, Found> {
        let line = self.line(n);
        let Some(ty) = n.attribute("type") else {
            return Err((line, "<object> has no type attribute".into()));
        };
        let Some(mut kind) = object_kind(ty) else {
            return Err((
                line,
                format!("<object type=\"{ty}\">: not an hwloc object type"),
            ));
        };
        let mut cpuset = None;
        let mut nodeset = None;
        for attr in BITMAPS {
            if let Some(v) = n.attribute(attr) {
                let set = Bitmap::parse(v).map_err(|why| {
                    (
                        line,
                        format!(
                            "<object type=\"{ty}\">: {attr}=\"{v}\" is not an hwloc bitmap: {why}"
                        ),
                    )
                })?;
                match attr {
                    "cpuset" => cpuset = Some(set),
                    "nodeset" => nodeset = Some(set),
                    _ => {}
                }
            }
        }
        // The sets come in pairs, as every hwloc export writes them: libhwloc 2.9's importer
        // reads `complete_cpuset` wherever `cpuset` is set (a NULL dereference otherwise),
        // and I/O and Misc objects carry none.
        let has = |a: &str| n.attribute(a).is_some();
        if kind == Kind::Other && (has("cpuset") || has("nodeset")) {
            return Err((
                line,
                format!("<object type=\"{ty}\">: an I/O or Misc object has no cpuset or nodeset"),
            ));
        }
        if kind != Kind::Other {
            for (a, b) in [
                ("cpuset", "complete_cpuset"),
                ("nodeset", "complete_nodeset"),
                ("cpuset", "nodeset"),
            ] {
                if has(a) != has(b) {
                    let (with, without) = if has(a) { (a, b) } else { (b, a) };
                    return Err((
                        line,
                        format!("<object type=\"{ty}\"> has {with} but no {without}"),
                    ));
                }
            }
            if !has("cpuset") {
                return Err((line, format!("<object type=\"{ty}\"> has no cpuset")));
            }
        }
        if n.parent_element()
            .is_some_and(|p| p.tag_name().name() == "topology")
        {
            for a in ["allowed_cpuset", "allowed_nodeset"] {
                if !has(a) && !v1 {
                    return Err((line, format!("the root <object type=\"{ty}\"> has no {a}")));
                }
            }
        }
        let mut numbers = [None; NUMBERS.len()];
        for (slot, (attr, max)) in numbers.iter_mut().zip(NUMBERS) {
            if let Some(v) = n.attribute(attr) {
                *slot = Some(unsigned(v, max).map_err(|why| {
                    (
                        line,
                        format!("<object type=\"{ty}\">: {attr}=\"{v}\" {why}"),
                    )
                })?);
            }
        }
        let [os_index, gp_index, ..] = numbers;
        let is_node =
            kind == Kind::Memory && (object_is(ty, "numanode", 2) || object_is(ty, "node", 2));
        let is_pu = object_is(ty, "pu", 2) && kind == Kind::Normal;
        if v1 && kind == Kind::Memory {
            // hwloc 1 put NUMA nodes in the CPU tree, as parents of packages.
            kind = Kind::Normal;
        }
        if is_node || is_pu {
            let os = match os_index {
                Some(i) if i != UNKNOWN_INDEX => i,
                Some(_) => {
                    return Err((
                        line,
                        format!(
                            "<object type=\"{ty}\">: os_index=\"{UNKNOWN_INDEX}\" is hwloc's \
                             \"unknown index\": the {} would be dropped",
                            if is_node { "node" } else { "CPU" }
                        ),
                    ))
                }
                None => {
                    return Err((line, format!("<object type=\"{ty}\"> has no os_index")));
                }
            };
            let (attr, set) = if is_node {
                ("nodeset", &nodeset)
            } else {
                ("cpuset", &cpuset)
            };
            if let Some(set) = set {
                if !set.is_exactly(os) {
                    return Err((
                        line,
                        format!(
                            "<object type=\"{ty}\" os_index=\"{os}\">: {attr}=\"{}\" must hold \
                             exactly its os_index",
                            n.attribute(attr).unwrap_or("")
                        ),
                    ));
                }
            }
            if is_node {
                self.node_os.insert(os);
                if let Some(gp) = gp_index {
                    self.node_gp.insert(gp);
                }
            }
        }
        Ok(Object { kind, cpuset })
    }

    /// `<distances2 type nbobjs indexing>` with `<indexes>` and `<u64values>` (hwloc 2).
    fn distances2(&self, d: roxmltree::Node<'_, 'input>) -> std::result::Result<(), Found> {
        let line = self.line(d);
        let tag = d.tag_name().name();
        let n = self.nbobjs(d)?;
        let hetero = tag == "distances2hetero";
        let mut indexes: Vec<&str> = Vec::new();
        let mut values = 0usize;
        for part in d.children().filter(|c| c.is_element()) {
            let text = part.text().unwrap_or("");
            match part.tag_name().name() {
                "indexes" => indexes.extend(text.split_whitespace()),
                "u64values" => {
                    for v in text.split_whitespace() {
                        unsigned(v, u64::MAX).map_err(|why| {
                            (
                                self.line(part),
                                format!("<{tag}>: distance value \"{v}\" {why}"),
                            )
                        })?;
                        values += 1;
                    }
                }
                _ => {}
            }
        }
        // A heterogeneous matrix names each object by type and index: two words each.
        let per_object = if hetero { 2 } else { 1 };
        if indexes.len() != n * per_object {
            return Err((
                line,
                format!(
                    "<{tag} nbobjs=\"{n}\"> lists {} indexes, expected {}",
                    indexes.len(),
                    n * per_object
                ),
            ));
        }
        if values != n * n {
            return Err((
                line,
                format!(
                    "<{tag} nbobjs=\"{n}\"> holds {values} distance values, expected {} \
                     ({n} × {n})",
                    n * n
                ),
            ));
        }
        let of_nodes = d
            .attribute("type")
            .is_some_and(|t| object_is(t, "numanode", 2) || object_is(t, "node", 2));
        if of_nodes && !hetero {
            let known = match d.attribute("indexing") {
                Some("os") => Some(("os_index", &self.node_os)),
                Some("gp") => Some(("gp_index", &self.node_gp)),
                _ => None,
            };
            if let Some((which, known)) = known {
                for ix in &indexes {
                    let v = unsigned(ix, u64::MAX)
                        .map_err(|why| (line, format!("<{tag}>: index \"{ix}\" {why}")))?;
                    if !known.contains(&v) {
                        return Err((
                            line,
                            format!(
                                "<{tag} type=\"NUMANode\">: index {ix} names no NUMA node \
                                 (no node has {which}=\"{ix}\")"
                            ),
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// `<distances nbobjs>` with `<latency value>` children (hwloc 1).
    fn distances1(&self, d: roxmltree::Node<'_, 'input>) -> std::result::Result<(), Found> {
        let n = self.nbobjs(d)?;
        let mut count = 0usize;
        for l in d
            .children()
            .filter(|c| c.is_element() && c.tag_name().name() == "latency")
        {
            let v = l.attribute("value").unwrap_or("");
            match v.trim().parse::<f64>() {
                Ok(x) if x.is_finite() && x >= 0.0 => count += 1,
                _ => {
                    return Err((
                        self.line(l),
                        format!("<latency value=\"{v}\">: not a finite, non-negative number"),
                    ))
                }
            }
        }
        if count != n * n {
            return Err((
                self.line(d),
                format!(
                    "<distances nbobjs=\"{n}\"> holds {count} latencies, expected {}",
                    n * n
                ),
            ));
        }
        Ok(())
    }

    fn nbobjs(&self, d: roxmltree::Node<'_, 'input>) -> std::result::Result<usize, Found> {
        let tag = d.tag_name().name();
        let v = d.attribute("nbobjs").unwrap_or("");
        let n = unsigned(v, MAX_MATRIX_OBJECTS as u64)
            .map_err(|why| (self.line(d), format!("<{tag}>: nbobjs=\"{v}\" {why}")))?;
        if n == 0 {
            return Err((
                self.line(d),
                format!("<{tag}>: nbobjs=\"0\": an empty matrix"),
            ));
        }
        Ok(usize::try_from(n).unwrap_or(usize::MAX))
    }
}

/// An unsigned decimal integer of at most `max`, or why not (words that follow the value in
/// a message: `is negative`, …).
fn unsigned(v: &str, max: u64) -> std::result::Result<u64, String> {
    if v.starts_with('-') {
        return Err("is negative".into());
    }
    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
        return Err("is not an unsigned decimal integer".into());
    }
    match v.parse::<u64>() {
        Ok(x) if x <= max => Ok(x),
        _ => Err(format!("is out of range (at most {max})")),
    }
}

/// hwloc's matching of a type name (`hwloc__type_match`): `s` spells a prefix of `name`
/// (letters and dashes, case-insensitively) at least `min` characters long; a character
/// other than a letter or a dash ends it (`core:2`).
fn type_prefix<'s>(s: &'s str, name: &str, min: usize) -> Option<&'s str> {
    let name = name.as_bytes();
    for (i, &b) in s.as_bytes().iter().enumerate() {
        let matches = name.get(i).is_some_and(|&t| b.eq_ignore_ascii_case(&t));
        if !matches {
            return if b.is_ascii_alphabetic() || b == b'-' || i < min {
                None
            } else {
                Some(&s[i..])
            };
        }
    }
    (s.len() >= min).then_some("")
}

fn object_is(s: &str, name: &str, min: usize) -> bool {
    type_prefix(s, name, min).is_some()
}

/// The kind of an object type hwloc accepts, or `None` (hwloc's `hwloc_type_sscanf`, plus
/// the version-1 names its XML import maps).
fn object_kind(s: &str) -> Option<Kind> {
    const OTHER: [(&str, usize); 13] = [
        ("osdev", 2),
        ("block", 4),
        ("network", 3),
        ("openfabrics", 7),
        ("dma", 3),
        ("gpu", 3),
        ("coproc", 5),
        ("co-processor", 6),
        ("misc", 4),
        ("bridge", 4),
        ("hostbridge", 6),
        ("pcibridge", 5),
        ("pcidev", 3),
    ];
    const MEMORY: [(&str, usize); 4] = [
        ("numanode", 2),
        ("node", 2),
        ("memcache", 5),
        ("memory-side cache", 8),
    ];
    const NORMAL: [(&str, usize); 6] = [
        ("machine", 2),
        ("package", 2),
        ("socket", 2),
        ("die", 2),
        ("core", 2),
        ("pu", 2),
    ];
    // Order as hwloc tries them: OS devices first ("coproc" before "core").
    if OTHER[..8].iter().any(|&(n, m)| object_is(s, n, m)) {
        return Some(Kind::Other);
    }
    if NORMAL[..1].iter().any(|&(n, m)| object_is(s, n, m)) {
        return Some(Kind::Normal);
    }
    if MEMORY.iter().any(|&(n, m)| object_is(s, n, m)) {
        return Some(Kind::Memory);
    }
    if NORMAL[1..].iter().any(|&(n, m)| object_is(s, n, m)) {
        return Some(Kind::Normal);
    }
    if OTHER[8..].iter().any(|&(n, m)| object_is(s, n, m)) {
        return Some(Kind::Other);
    }
    if cache_type(s) || type_prefix(s, "group", 2).is_some() {
        return Some(Kind::Normal);
    }
    // Version-1 names hwloc's XML import maps itself.
    ["cache", "system", "tile", "module"]
        .iter()
        .any(|n| s.eq_ignore_ascii_case(n))
        .then_some(Kind::Normal)
}

/// `L<depth>[i|d|u][cache]`: depth 1–5, or 1–3 for instruction caches.
fn cache_type(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 2 || !b[0].eq_ignore_ascii_case(&b'l') || !b[1].is_ascii_digit() {
        return false;
    }
    let digits = b[1..].iter().take_while(|c| c.is_ascii_digit()).count();
    let Ok(depth) = s[1..1 + digits].parse::<u32>() else {
        return false;
    };
    let rest = &s[1 + digits..];
    let (max, rest) = match rest.as_bytes().first() {
        Some(b'i' | b'I') => (3, &rest[1..]),
        Some(b'd' | b'D' | b'u' | b'U') => (5, &rest[1..]),
        _ => (5, rest),
    };
    (1..=max).contains(&depth) && type_prefix(rest, "cache", 0).is_some()
}

/// A bitmap as hwloc writes it, as 32-bit words, least significant first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Bitmap {
    words: Vec<u32>,
    /// Led by `0xf...f,`: every bit above the words is set.
    infinite: bool,
}

impl Bitmap {
    /// Parses `0xf...f,0x00000003,0xffffffff` (hwloc's `hwloc_bitmap_sscanf` syntax, written
    /// most significant word first).
    fn parse(s: &str) -> std::result::Result<Self, String> {
        let (infinite, rest) = match s.strip_prefix("0xf...f") {
            Some("") => {
                return Ok(Self {
                    words: Vec::new(),
                    infinite: true,
                })
            }
            Some(r) => (
                true,
                r.strip_prefix(',')
                    .ok_or_else(|| "`0xf...f` must be followed by a comma".to_owned())?,
            ),
            None => (false, s),
        };
        // hwloc counts a bitmap's words by the commas *after* its first character
        // (`strchr(current + 1, ',')`), so a comma in first place is not counted, and the
        // word it leaves empty overflows that count: `hwloc_bitmap_sscanf` then fails an
        // assertion (libhwloc 2.9 aborts). Found by the `xml` fuzz target.
        if !infinite && s.starts_with(',') {
            return Err("it starts with a comma (an empty first word)".to_owned());
        }
        let count = rest.split(',').count();
        if count > MAX_BITMAP_WORDS {
            return Err(format!(
                "{count} words, more than the limit of {MAX_BITMAP_WORDS}"
            ));
        }
        let mut words = Vec::with_capacity(count);
        for w in rest.split(',') {
            // hwloc writes a run of zero words as empty words: `0x000000ff,,,,0x00000001`.
            if w.is_empty() && count > 1 {
                words.push(0);
                continue;
            }
            let hex = w
                .strip_prefix("0x")
                .ok_or_else(|| format!("word \"{w}\" does not start with 0x"))?;
            if hex.is_empty() || hex.len() > 8 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(format!("word \"{w}\" is not 0x and 1 to 8 hex digits"));
            }
            words.push(u32::from_str_radix(hex, 16).map_err(|e| format!("word \"{w}\": {e}"))?);
        }
        words.reverse();
        let mut b = Self { words, infinite };
        b.trim();
        Ok(b)
    }

    fn trim(&mut self) {
        let fill = if self.infinite { u32::MAX } else { 0 };
        while self.words.last() == Some(&fill) {
            self.words.pop();
        }
    }

    fn union_with(&mut self, other: &Bitmap) {
        if other.words.len() > self.words.len() {
            let fill = if self.infinite { u32::MAX } else { 0 };
            self.words.resize(other.words.len(), fill);
        }
        let fill = if other.infinite { u32::MAX } else { 0 };
        for (i, w) in self.words.iter_mut().enumerate() {
            *w |= other.words.get(i).copied().unwrap_or(fill);
        }
        self.infinite |= other.infinite;
        self.trim();
    }

    fn intersects(&self, other: &Bitmap) -> bool {
        if self.infinite && other.infinite {
            return true;
        }
        let n = self.words.len().max(other.words.len());
        (0..n).any(|i| {
            let a = self
                .words
                .get(i)
                .copied()
                .unwrap_or(if self.infinite { u32::MAX } else { 0 });
            let b =
                other
                    .words
                    .get(i)
                    .copied()
                    .unwrap_or(if other.infinite { u32::MAX } else { 0 });
            a & b != 0
        })
    }

    /// Whether the set is exactly `{bit}`.
    fn is_exactly(&self, bit: u64) -> bool {
        let (word, shift) = (bit / 32, bit % 32);
        !self.infinite
            && usize::try_from(word).is_ok_and(|w| w + 1 == self.words.len())
            && self.words.last() == Some(&(1u32 << shift))
            && self.words[..self.words.len() - 1].iter().all(|&w| w == 0)
    }

    /// The set in hwloc's syntax.
    fn describe(&self) -> String {
        let mut parts: Vec<String> = self
            .words
            .iter()
            .rev()
            .map(|w| format!("0x{w:08x}"))
            .collect();
        if parts.is_empty() {
            parts.push("0x0".into());
        }
        if self.infinite {
            parts.insert(0, "0xf...f".into());
        }
        parts.join(",")
    }
}

/// The 1-based line of byte `offset`.
fn line_of_offset(bytes: &[u8], offset: usize) -> u32 {
    let lines = bytes[..offset.min(bytes.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count();
    u32::try_from(lines + 1).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod test;
