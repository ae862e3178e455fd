//! How big the workloads are: scaled to the machine (memory and CPUs per node), or set with
//! [`BYTES_VAR`].
//!
//! Each workload's data per node is a share of the node's memory: 1/64 for `--quick`
//! (between 1 MiB and 16 MiB), 1/16 otherwise (between 8 MiB and 1 GiB); five runtimes'
//! copies of one workload live at once, so at most 5/16 of a node is used. Each node's data
//! is cut into two parts per allowed CPU of the node.

use crate::numa::host::Topo;

/// The override: bytes of each workload's data per node, e.g. `64M`, `1G`, `524288`.
pub const BYTES_VAR: &str = "ZONAL_NUMA_BYTES";

const KIB: usize = 1 << 10;
const MIB: usize = 1 << 20;
const GIB: usize = 1 << 30;

/// A bad [`BYTES_VAR`].
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SizeError {
    /// Not a number of bytes.
    #[error(
        "{BYTES_VAR}={0:?} is not a size: expected bytes, optionally with K, M or G (e.g. 64M)"
    )]
    Parse(String),
    /// Out of range.
    #[error("{BYTES_VAR}={0:?} is out of range: expected 64K..=1024G")]
    Range(String),
}

/// Parses a size (`123`, `64K`, `16M`, `2G`; binary units).
///
/// # Errors
/// [`SizeError`] naming the value.
pub fn parse_bytes(text: &str) -> Result<usize, SizeError> {
    let t = text.trim();
    let (num, unit) = match t.char_indices().last() {
        Some((i, 'K' | 'k')) => (&t[..i], KIB),
        Some((i, 'M' | 'm')) => (&t[..i], MIB),
        Some((i, 'G' | 'g')) => (&t[..i], GIB),
        _ => (t, 1),
    };
    let n: usize = num.parse().map_err(|_| SizeError::Parse(text.to_owned()))?;
    let bytes = n
        .checked_mul(unit)
        .ok_or_else(|| SizeError::Range(text.to_owned()))?;
    if (64 * KIB..=1024 * GIB).contains(&bytes) {
        Ok(bytes)
    } else {
        Err(SizeError::Range(text.to_owned()))
    }
}

/// The sizes of one run.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Sizes {
    /// Bytes of each workload's data per node.
    pub bytes_per_node: usize,
    /// Where that came from: `BYTES_VAR` or the memory share.
    pub source: String,
    /// Parts per node.
    pub parts_per_node: usize,
    /// Columns of the heat grid.
    pub stencil_cols: usize,
    /// Heat steps per measured run.
    pub stencil_steps: usize,
    /// Seconds of arrivals of the service load per run.
    pub service_seconds: u64,
}

impl Sizes {
    /// The sizes for `topo` (quick or not), [`BYTES_VAR`] read from `var` (the environment's
    /// value, if set).
    ///
    /// # Errors
    /// A bad [`BYTES_VAR`].
    pub fn new(topo: &Topo, quick: bool, var: Option<&str>) -> Result<Self, SizeError> {
        let nodes = topo.nodes_with_cpus();
        let node_mem = nodes
            .iter()
            .filter_map(|n| n.memory_bytes)
            .min()
            .unwrap_or(1 << 30) as usize;
        let (bytes_per_node, source) = match var {
            Some(v) => (parse_bytes(v)?, format!("{BYTES_VAR}={v}")),
            None if quick => (
                (node_mem / 64).clamp(MIB, 16 * MIB),
                "1/64 of the smallest node's memory, 1 MiB..=16 MiB (--quick)".to_owned(),
            ),
            None => (
                (node_mem / 16).clamp(8 * MIB, GIB),
                "1/16 of the smallest node's memory, 8 MiB..=1 GiB".to_owned(),
            ),
        };
        let cpus = nodes
            .iter()
            .map(|n| n.allowed_cpus.len())
            .max()
            .unwrap_or(1);
        Ok(Self {
            bytes_per_node,
            source,
            parts_per_node: 2 * cpus.max(1),
            stencil_cols: 512,
            stencil_steps: if quick { 4 } else { 16 },
            service_seconds: if quick { 1 } else { 3 },
        })
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn sizes_parse_with_units_and_bad_ones_are_named() {
        assert_eq!(parse_bytes("64K"), Ok(64 * KIB));
        assert_eq!(parse_bytes("16m"), Ok(16 * MIB));
        assert_eq!(parse_bytes("2G"), Ok(2 * GIB));
        assert_eq!(parse_bytes("1048576"), Ok(MIB));
        assert_eq!(parse_bytes("lots"), Err(SizeError::Parse("lots".into())));
        assert_eq!(parse_bytes("1K"), Err(SizeError::Range("1K".into())));
        assert_eq!(
            parse_bytes("99999999999999999G"),
            Err(SizeError::Range("99999999999999999G".into()))
        );
        assert!(SizeError::Parse("x".into()).to_string().contains(BYTES_VAR));
    }
}
