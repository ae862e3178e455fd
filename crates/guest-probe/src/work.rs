//! What the checks share: pools on this machine with named workers, the synthetic work they
//! run, and the translation between the kernel's node ids and the pool's.

use std::collections::BTreeMap;

use zonal_runtime::os::PageUnknown;
use zonal_runtime::{ControlOptions, ControlPlane, JoinHandle, ThreadPool, ThreadPoolBuilder};
use zonal_topology::{CpuId, NodeId, Topology};

/// The worker-name prefix of the pool a check studies (`/proc/self/task/*/comm`).
pub(crate) const PREFIX: &str = "zw";

/// The control plane the async checks run under: a balancing pass every 4 ms.
pub(crate) fn balancing(pool: &ThreadPool) -> Result<ControlPlane, String> {
    ControlPlane::start_with(
        pool.metrics_handle(),
        ControlOptions::new().balance_every(zonal_runtime::BALANCE_TICK),
    )
    .map_err(|e| format!("control plane: {e}"))
}

/// Waits for every task, then stops the control plane: the balancing passes it made.
pub(crate) fn finish<T>(handles: Vec<JoinHandle<T>>, cp: ControlPlane) -> Result<u64, String> {
    for h in handles {
        h.join().map_err(|e| format!("async task: {e}"))?;
    }
    let passes = cp.balance_stats().passes;
    drop(cp);
    Ok(passes)
}

/// A pool on this machine (pinned, the default), its workers named `{prefix}{i}`, under
/// `policy` (the default policy for `None`).
pub(crate) fn pool(policy: Option<&str>, prefix: &'static str) -> Result<ThreadPool, String> {
    let mut b = ThreadPoolBuilder::new().thread_name(move |i| format!("{prefix}{i}"));
    if let Some(p) = policy {
        b = b.policy_name(p);
    }
    b.build()
        .map_err(|e| format!("building a pool ({policy:?}): {e}"))
}

/// Busy work the optimiser cannot remove: `iters` rounds of a multiply-rotate.
pub(crate) fn spin(iters: u64) -> u64 {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for i in 0..iters {
        x = std::hint::black_box(x.rotate_left(7) ^ i).wrapping_mul(0x2545_F491_4F6C_DD1D);
    }
    x
}

/// Each worker's CPU as an OS index (the metrics give the topology's dense index).
pub(crate) fn worker_cpus(pool: &ThreadPool) -> Vec<u32> {
    let machine = pool.topology().machine();
    pool.metrics()
        .workers
        .iter()
        .filter_map(|w| w.cpu)
        .map(|cpu| machine.cpu(CpuId(cpu)).os_index)
        .collect()
}

/// The pool's node for a kernel node id (OS id), if the topology has it.
pub(crate) fn node_of_os(topo: &Topology, os_id: u32) -> Option<NodeId> {
    topo.machine().node_by_os_id(os_id)
}

/// A kernel node id (OS id) for a pool node.
pub(crate) fn os_of_node(topo: &Topology, node: NodeId) -> u32 {
    topo.machine().node(node).os_id
}

/// The node most of `pages` lie on (ties to the lower id), `None` when no page has a node.
pub(crate) fn majority(pages: &[Result<u32, PageUnknown>]) -> Option<u32> {
    let mut counts = BTreeMap::new();
    for n in pages.iter().flatten() {
        *counts.entry(*n).or_insert(0usize) += 1;
    }
    let best = counts.values().copied().max()?;
    counts.into_iter().find(|&(_, c)| c == best).map(|(n, _)| n)
}

/// Counts of pages per node (OS id, as text for JSON keys) and per reason the node is
/// unknown (`PageUnknown`'s debug form).
pub(crate) fn page_histogram(pages: &[Result<u32, PageUnknown>]) -> serde_json::Value {
    let mut nodes: BTreeMap<String, usize> = BTreeMap::new();
    let mut errors: BTreeMap<String, usize> = BTreeMap::new();
    for p in pages {
        match p {
            Ok(n) => *nodes.entry(n.to_string()).or_default() += 1,
            Err(e) => *errors.entry(format!("{e:?}")).or_default() += 1,
        }
    }
    serde_json::json!({ "pages": pages.len(), "nodes": nodes, "errors": errors })
}

/// `--name value` from a check's arguments.
pub(crate) fn arg<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(String::as_str)
}

/// `--name N` as a number, or `default`.
pub(crate) fn num_arg(args: &[String], name: &str, default: u64) -> Result<u64, String> {
    match arg(args, name) {
        None => Ok(default),
        Some(v) => v.parse().map_err(|e| format!("{name} {v:?}: {e}")),
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn majority_and_args() {
        let hidden = PageUnknown::Hidden;
        assert_eq!(majority(&[Ok(1), Ok(2), Ok(2), Err(hidden)]), Some(2));
        assert_eq!(majority(&[Ok(3), Ok(1)]), Some(1));
        assert_eq!(majority(&[Err(PageUnknown::NotPresent)]), None);
        let args: Vec<String> = ["--slices", "7", "--x"].map(String::from).to_vec();
        assert_eq!(num_arg(&args, "--slices", 1), Ok(7));
        assert_eq!(num_arg(&args, "--tasks", 5), Ok(5));
        assert!(num_arg(&args, "--x", 0).is_ok());
        let bad: Vec<String> = ["--slices", "x"].map(String::from).to_vec();
        assert!(num_arg(&bad, "--slices", 1).is_err());
    }
}
