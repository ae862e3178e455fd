//! The `--nodes` format: a JSON mirror of Linux's `/sys/devices/system/node`.
//!
//! ```json
//! {"nodes": [{"id": 0, "cpus": [0, 1], "distance": [10, 20]},
//!            {"id": 1, "cpus": [2, 3], "distance": [20, 10]}]}
//! ```
//! `distance` is the node's row in the order of `nodes`. `cpus` may be given as a list of OS
//! indexes or, like sysfs, as a `cpulist` string (`"0-3,8"`); extra fields are ignored, so the
//! dumps in `crates/topology/tests/data/` read as they are. A node without `cpus`/`cpulist` is
//! memory-only. If no node has a `distance`, several nodes get Linux's 10/20 fallback. A key
//! repeated in one object (`{"id": 0, "id": 1}`), known or ignored, is refused naming it.

use std::path::Path;

use serde::Deserialize;

use crate::error::{Result, TopologyError};
use crate::machine::{CpuSpec, Machine, NodeSpec};
use crate::source::cpulist::parse_cpulist;
use crate::source::json_keys::{check as check_keys, KeyError};

#[derive(Deserialize)]
struct Dump {
    nodes: Vec<DumpNode>,
    #[serde(default)]
    name: Option<String>,
}

#[derive(Deserialize)]
struct DumpNode {
    id: u32,
    #[serde(default)]
    cpus: Option<Cpus>,
    #[serde(default)]
    cpulist: Option<String>,
    #[serde(default)]
    distance: Option<Vec<u64>>,
    #[serde(default)]
    memory_bytes: Option<u64>,
}

/// `cpus`: a list of OS indexes, or a cpulist string as sysfs writes it.
#[derive(Deserialize)]
#[serde(untagged)]
enum Cpus {
    List(Vec<u32>),
    Text(String),
}

/// Reads a `--nodes` file.
///
/// # Errors
/// [`TopologyError::Io`] (and the other errors of reading a file: `NotAFile`, `TooLarge`),
/// [`TopologyError::Json`], [`TopologyError::DuplicateKey`] (a key repeated in one object,
/// at any level), and, wrapped in [`TopologyError::InFile`] naming the file,
/// [`TopologyError::CpuList`] and every validation error of [`Machine::from_specs`].
pub fn from_nodes_file(path: impl AsRef<Path>) -> Result<Machine> {
    let path = path.as_ref();
    let text = super::input::read_text(path)?;
    let name = path.file_stem().map_or_else(
        || path.display().to_string(),
        |s| s.to_string_lossy().into_owned(),
    );
    parse_nodes_json(&text, &path.display().to_string(), &name).map_err(|e| e.in_file(path))
}

/// Parses a `--nodes` document; `origin` names it in errors.
///
/// # Errors
/// As [`from_nodes_file`], less the I/O error.
///
/// ```
/// # use zonal_topology::doc_facade as zonal;
/// let m = zonal::topology::parse_nodes_json(
///     r#"{"nodes":[{"id":0,"cpus":[0],"distance":[10,21]},{"id":1,"cpulist":"1-2","distance":[21,10]}]}"#,
///     "<doc>", "demo")?;
/// assert_eq!(m.cpus().len(), 3);
/// # Ok::<(), zonal::topology::TopologyError>(())
/// ```
pub fn parse_nodes_json(text: &str, origin: &str, default_name: &str) -> Result<Machine> {
    // A key repeated in any object is refused before anything is read (`json_keys.rs`).
    check_keys(text).map_err(|e| match e {
        KeyError::Json(source) => TopologyError::Json {
            origin: origin.to_owned(),
            source,
        },
        KeyError::Duplicate(d) => TopologyError::DuplicateKey {
            origin: origin.to_owned(),
            path: d.path,
            key: d.key,
            line: d.at.line(),
            column: d.at.column(),
        },
    })?;
    let dump: Dump = serde_json::from_str(text).map_err(|source| TopologyError::Json {
        origin: origin.to_owned(),
        source,
    })?;
    let mut specs = Vec::with_capacity(dump.nodes.len());
    let mut rows = Vec::with_capacity(dump.nodes.len());
    let any_distance = dump.nodes.iter().any(|n| n.distance.is_some());
    for node in dump.nodes {
        let as_list = |c: Cpus| match c {
            Cpus::List(list) => Ok(list),
            Cpus::Text(text) => parse_cpulist(&text),
        };
        let cpus = match (node.cpus.map(as_list).transpose()?, node.cpulist) {
            (Some(list), Some(text)) if parse_cpulist(&text)? != list => {
                return Err(TopologyError::CpuList {
                    text,
                    message: format!("node {}: `cpulist` disagrees with `cpus` {list:?}", node.id),
                });
            }
            (Some(list), _) => list,
            (None, Some(text)) => parse_cpulist(&text)?,
            (None, None) => Vec::new(),
        };
        specs.push(NodeSpec {
            os_id: node.id,
            cpus: cpus
                .into_iter()
                .map(|c| CpuSpec::alone(c, node.id))
                .collect(),
            memory_bytes: node.memory_bytes,
        });
        if any_distance {
            // A node without a row gives an empty row: reported as a non-square matrix.
            rows.push(node.distance.unwrap_or_default());
        }
    }
    let name = dump.name.unwrap_or_else(|| default_name.to_owned());
    Machine::from_specs(name, specs, any_distance.then_some(rows))
}
