//! `memory`: where do a `NodeBuffer`'s pages live, and under which policy, as the kernel
//! says?
//!
//! For every node, buffers with `MemoryPolicy::Bind` and `MemoryPolicy::Preferred` in two
//! sizes (1 MiB, and an odd size that ends inside a page). For each: the binding Zonal
//! reports, the kernel's policy for it (`get_mempolicy`), the node of every page
//! (`move_pages`), and its `/proc/self/numa_maps` line. Then every *other* mapping of the
//! process whose `numa_maps` policy is not `default` (there should be none: binding must
//! never leak onto the heap or another buffer).

use serde_json::{json, Value};
use zonal_runtime::os::MemoryPolicy;
use zonal_runtime::{NodeBuffer, ThreadPool};
use zonal_topology::NodeId;

use crate::kernel::{self, Mapping};
use crate::work::{self, PREFIX};

/// The odd size, in bytes: 5 pages and 123 bytes (of 4 KiB pages).
const ODD_BYTES: usize = 5 * 4096 + 123;

/// A buffer of either element type, with what was asked of it.
struct Probe {
    node: NodeId,
    policy: MemoryPolicy,
    bytes: usize,
    addr: u64,
    report: Value,
}

pub(crate) fn run(args: &[String]) -> crate::Outcome {
    let mib = work::num_arg(args, "--mib", 1)?;
    let pool = work::pool(None, PREFIX)?;
    let topo = pool.topology().clone();
    let big = usize::try_from(mib << 20).map_err(|e| format!("--mib {mib}: {e}"))?;
    let mut bytes_bufs: Vec<NodeBuffer<u8>> = Vec::new();
    let mut word_bufs: Vec<NodeBuffer<u64>> = Vec::new();
    let mut probes = Vec::new();
    for n in 0..topo.node_count() {
        let node = NodeId::new(n);
        for policy in [MemoryPolicy::Bind, MemoryPolicy::Preferred] {
            let b = alloc(&pool, node, big, policy, |i| i as u8)?;
            probes.push(describe(&b, &pool, policy, big));
            bytes_bufs.push(b);
            let w = alloc(&pool, node, ODD_BYTES / 8, policy, |i| i as u64)?;
            probes.push(describe(&w, &pool, policy, ODD_BYTES / 8 * 8));
            word_bufs.push(w);
        }
    }
    // Every buffer is alive: read the mappings once, for all of them.
    let maps = kernel::mappings()?;
    let mut buffers = Vec::new();
    for p in &probes {
        let line = maps
            .iter()
            .find(|m| m.start <= p.addr && p.addr < m.end)
            .cloned();
        let os = work::os_of_node(&topo, p.node);
        let want = match p.policy {
            MemoryPolicy::Bind => format!("bind:{os}"),
            MemoryPolicy::Preferred => format!("prefer:{os}"),
            MemoryPolicy::FirstTouch => "default".to_owned(),
        };
        let mut r = p.report.clone();
        r["numa_maps"] = json!(line);
        r["numa_maps_expected"] = json!(want);
        r["numa_maps_ok"] = json!(line.as_ref().is_some_and(|m| m.policy == want));
        buffers.push(r);
    }
    let covered = |m: &Mapping| {
        probes
            .iter()
            .any(|p| m.start < p.addr + p.bytes as u64 && p.addr < m.end)
    };
    let others: Vec<&Mapping> = maps
        .iter()
        .filter(|m| !covered(m) && m.policy != "default")
        .collect();
    let checked = maps.iter().filter(|m| !covered(m)).count();
    drop((bytes_bufs, word_bufs));
    Ok(json!({
        "check": "memory",
        "nodes": topo.node_count(),
        "node_os_ids": (0..topo.node_count()).map(|n| work::os_of_node(&topo, NodeId::new(n))).collect::<Vec<_>>(),
        "page_size": zonal_runtime::os::page_size(),
        "buffers": buffers,
        "other_mappings_checked": checked,
        "other_mappings_with_policy": others,
    }))
}

fn alloc<T: Send + Sync>(
    pool: &ThreadPool,
    node: NodeId,
    len: usize,
    policy: MemoryPolicy,
    init: impl Fn(usize) -> T + Send + Sync,
) -> Result<NodeBuffer<T>, String> {
    NodeBuffer::try_new_in_with(pool, node, len, policy, init)
        .map_err(|e| format!("NodeBuffer of {len} on node {node} ({policy:?}): {e}"))
}

/// Zonal's and the kernel's account of one buffer.
fn describe<T>(b: &NodeBuffer<T>, pool: &ThreadPool, policy: MemoryPolicy, bytes: usize) -> Probe {
    let topo = pool.topology();
    let os = work::os_of_node(topo, b.node());
    let pages = b.page_nodes();
    let on_node = pages
        .as_ref()
        .map(|p| p.iter().filter(|r| **r == Ok(os)).count())
        .ok();
    let kernel_policy = b.kernel_policy();
    let addr = b.as_ptr() as u64;
    let report = json!({
        "node": b.node().index(),
        "node_os_id": os,
        "policy": policy,
        "bytes": bytes,
        "binding": b.binding(),
        "kernel_policy": kernel_policy.as_ref().map_err(|e| e.to_string()),
        "kernel_policy_matches": kernel_policy
            .as_ref()
            .is_ok_and(|k| k.mode == policy.mode() && k.nodes == [os]),
        "page_nodes": pages.as_ref().map(|p| work::page_histogram(p)).map_err(|e| e.to_string()),
        "pages_on_node": on_node,
        "all_pages_on_node": pages.as_ref().is_ok_and(|p| !p.is_empty() && p.iter().all(|r| *r == Ok(os))),
    });
    Probe {
        node: b.node(),
        policy,
        bytes,
        addr,
        report,
    }
}
