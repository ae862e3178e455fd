//! `first-touch`: is a `NodeBuffer` written where it says, and do its pages lie where that
//! first touch put them, as the kernel says?
//!
//! For every node, a buffer with `MemoryPolicy::FirstTouch` (no policy: every page goes to
//! the node of the thread that first writes it) of `--mib` MiB (default 1): the binding
//! Zonal reports, the first-touch nodes it reports (`NodeBuffer::first_touch_nodes`), the
//! workers that ran the fill and the CPUs they ran it on (`sched_getcpu`, sampled every
//! page), the kernel's policy for it (`get_mempolicy`) and the node of every page
//! (`move_pages`). Beside it, a bound buffer's first-touch report (64 KiB, written on the
//! node too), and an empty buffer and one of zero-sized elements (no page: `move_pages` is
//! asked nothing).

use std::collections::BTreeSet;
use std::sync::Mutex;

use serde_json::{json, Value};
use zonal_runtime::os::{self, MemoryPolicy};
use zonal_runtime::{NodeBuffer, ThreadPool};
use zonal_topology::NodeId;

use crate::work::{self, PREFIX};

pub(crate) fn run(args: &[String]) -> crate::Outcome {
    let mib = work::num_arg(args, "--mib", 1)?;
    let bytes = usize::try_from(mib << 20).map_err(|e| format!("--mib {mib}: {e}"))?;
    let pool = work::pool(None, PREFIX)?;
    let topo = pool.topology().clone();
    let cpus = work::worker_cpus(&pool);
    let mut nodes = Vec::new();
    for n in 0..topo.node_count() {
        let node = NodeId::new(n);
        let workers: Vec<usize> = (0..pool.num_workers())
            .filter(|&w| pool.worker_node(w) == node)
            .collect();
        let first_touch = buffer(&pool, node, bytes, MemoryPolicy::FirstTouch)?;
        let bound = buffer(&pool, node, 64 << 10, MemoryPolicy::Bind)?;
        nodes.push(json!({
            "node": n,
            "node_os_id": work::os_of_node(&topo, node),
            "workers": workers,
            "worker_cpus": workers.iter().map(|&w| cpus[w]).collect::<Vec<_>>(),
            "first_touch": first_touch,
            "bind": bound,
        }));
    }
    let empty: NodeBuffer<u64> = NodeBuffer::try_new_in(&pool, NodeId::new(0), 0, |_| 0)
        .map_err(|e| format!("empty buffer: {e}"))?;
    #[repr(align(64))]
    struct WideUnit;
    let units = NodeBuffer::try_new_in(&pool, NodeId::new(0), 1000, |_| WideUnit)
        .map_err(|e| format!("zero-sized elements: {e}"))?;
    Ok(json!({
        "check": "first-touch",
        "nodes": nodes,
        "empty": {
            "len": empty.len(),
            "page_nodes": empty.page_nodes().map_err(|e| e.to_string()),
            "first_touch_nodes": indexes(empty.first_touch_nodes()),
        },
        "zero_sized": {
            "len": units.len(),
            "aligned": (units.as_ptr() as usize) % 64 == 0,
            "page_nodes": units.page_nodes().map_err(|e| e.to_string()),
        },
    }))
}

fn indexes(nodes: &[NodeId]) -> Vec<usize> {
    nodes.iter().map(|n| n.index()).collect()
}

/// A buffer of `bytes` bytes on `node` under `policy`, described (it is dropped after).
fn buffer(
    pool: &ThreadPool,
    node: NodeId,
    bytes: usize,
    policy: MemoryPolicy,
) -> Result<Value, String> {
    let page = os::page_size();
    let writers = Mutex::new(BTreeSet::new());
    let buf = NodeBuffer::try_new_in_with(pool, node, bytes, policy, |i| {
        if i % page == 0 {
            let who = (pool.current_worker_index(), os::current_cpu());
            writers
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(who);
        }
        i as u8
    })
    .map_err(|e| format!("NodeBuffer of {bytes} on node {node} ({policy:?}): {e}"))?;
    let writers = writers.into_inner().unwrap_or_else(|e| e.into_inner());
    let pages = buf.page_nodes();
    let os = work::os_of_node(pool.topology(), node);
    Ok(json!({
        "policy": policy,
        "bytes": bytes,
        "binding": buf.binding(),
        "first_touch_nodes": indexes(buf.first_touch_nodes()),
        "writer_workers": writers.iter().map(|(w, _)| *w).collect::<BTreeSet<_>>(),
        "writer_cpus": writers.iter().map(|(_, c)| *c).collect::<BTreeSet<_>>(),
        "kernel_policy": buf.kernel_policy().map_err(|e| e.to_string()),
        "page_nodes": pages.as_ref().map(|p| work::page_histogram(p)).map_err(|e| e.to_string()),
        "all_pages_on_node": pages.as_ref().is_ok_and(|p| !p.is_empty() && p.iter().all(|r| *r == Ok(os))),
    }))
}
