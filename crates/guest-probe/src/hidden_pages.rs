//! `hidden-pages`: does `NodeBuffer::page_nodes()` locate every page while automatic NUMA
//! balancing hides pages from `move_pages`?
//!
//! Run under an aggressive scanner (the guest's setup sets `kernel.numa_balancing` and the
//! scanner's period, delay and size). For every node, a first-touch buffer (`--mib` MiB,
//! default 1: the memory the scanner makes `PROT_NONE`) and a bound one (256 KiB: never
//! scanned) are written on the node's workers. The calling thread then spins (the scanner
//! runs from a running thread's ticks) until `move_pages` itself answers `ENOENT` for pages
//! of every first-touch buffer, or `--rounds` rounds (default 600) have passed. Reported per
//! buffer: the raw `move_pages` answers (`raw_enoent`: how many pages it could not follow),
//! then what `page_nodes()` says (every page, by node and by reason). `/proc/vmstat`'s NUMA
//! balancing counters before and after say what the scanner did. Nothing touches a buffer
//! after its fill.

use serde_json::{json, Value};
use zonal_runtime::os::{self, MemoryPolicy};
use zonal_runtime::{NodeBuffer, ThreadPool};
use zonal_topology::NodeId;

use crate::work::{self, PREFIX};

/// Rounds between two progress lines.
const PROGRESS_EVERY: u64 = 10;

pub(crate) fn run(args: &[String]) -> crate::Outcome {
    let mib = work::num_arg(args, "--mib", 1)?;
    let rounds = work::num_arg(args, "--rounds", 600)?;
    let bytes = usize::try_from(mib << 20).map_err(|e| format!("--mib {mib}: {e}"))?;
    let before = vmstat();
    let pool = work::pool(None, PREFIX)?;
    let topo = pool.topology().clone();
    let mut buffers = Vec::new();
    for n in 0..topo.node_count() {
        let node = NodeId::new(n);
        for (policy, size) in [
            (MemoryPolicy::FirstTouch, bytes),
            (MemoryPolicy::Bind, 256 << 10),
        ] {
            buffers.push(buffer(&pool, node, size, policy)?);
        }
    }
    // Spin until the scanner has hidden pages of every first-touch buffer from move_pages.
    let mut raw: Vec<usize> = vec![0; buffers.len()];
    let mut spun = 0;
    let mut acc = 0u64;
    while spun < rounds {
        acc = acc.wrapping_add(work::spin(2_000_000));
        spun += 1;
        for (r, (_, b)) in raw.iter_mut().zip(&buffers) {
            *r = (*r).max(raw_enoent(b)?);
        }
        let all_hidden = buffers
            .iter()
            .zip(&raw)
            .filter(|((p, _), _)| *p == MemoryPolicy::FirstTouch)
            .all(|(_, &r)| r > 0);
        if all_hidden {
            break;
        }
        if spun % PROGRESS_EVERY == 0 {
            // A heartbeat for the host's quiet limit (`crates/guest/tests/common`): on a
            // loaded host a TCG guest of 32 CPUs takes seconds a round, and 600 silent
            // rounds outlast the 10 minutes after which a silent guest counts as hung.
            let hidden = raw.iter().filter(|&&r| r > 0).count();
            println!("hidden-pages: round {spun} of {rounds}, {hidden} buffers with hidden pages");
        }
    }
    std::hint::black_box(acc);
    let after = vmstat();
    let mut out = Vec::new();
    for ((policy, b), raw) in buffers.iter().zip(raw) {
        let os_id = work::os_of_node(&topo, b.node());
        let pages = b.page_nodes();
        out.push(json!({
            "node": b.node().index(),
            "node_os_id": os_id,
            "policy": policy,
            "binding": b.binding(),
            "bytes": std::mem::size_of_val(&b[..]),
            "raw_enoent": raw,
            "page_nodes": pages.as_ref().map(|p| work::page_histogram(p)).map_err(|e| e.to_string()),
            "all_pages_on_node": pages.as_ref().is_ok_and(|p| !p.is_empty() && p.iter().all(|r| *r == Ok(os_id))),
        }));
    }
    Ok(json!({
        "check": "hidden-pages",
        "rounds": spun,
        "numa_balancing": crate::kernel::read("/proc/sys/kernel/numa_balancing").map(|s| s.trim().to_owned()),
        "vmstat_before": before,
        "vmstat_after": after,
        "buffers": out,
    }))
}

/// A buffer of `bytes` bytes on `node` under `policy`, each byte written on the node.
fn buffer(
    pool: &ThreadPool,
    node: NodeId,
    bytes: usize,
    policy: MemoryPolicy,
) -> Result<(MemoryPolicy, NodeBuffer<u8>), String> {
    NodeBuffer::try_new_in_with(pool, node, bytes, policy, |i| i as u8)
        .map(|b| (policy, b))
        .map_err(|e| format!("NodeBuffer of {bytes} on node {node} ({policy:?}): {e}"))
}

/// How many pages of `b` `move_pages(2)` itself (no second source) answers `ENOENT` for.
fn raw_enoent(b: &NodeBuffer<u8>) -> Result<usize, String> {
    let page = os::page_size();
    let pages: Vec<*const libc::c_void> = b
        .chunks(page)
        .map(|c| c.as_ptr().cast::<libc::c_void>())
        .collect();
    let mut status = vec![0 as libc::c_int; pages.len()];
    // SAFETY: `pages` and `status` hold `pages.len()` entries each; a null node list makes
    // move_pages a query that moves nothing; pid 0 is this process. The addresses are the
    // buffer's, only looked up by the kernel.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_move_pages,
            0,
            pages.len(),
            pages.as_ptr(),
            std::ptr::null::<libc::c_int>(),
            status.as_mut_ptr(),
            0,
        )
    };
    if ret < 0 {
        return Err(format!("move_pages: {}", std::io::Error::last_os_error()));
    }
    Ok(status.iter().filter(|&&s| s == -libc::ENOENT).count())
}

/// `/proc/vmstat`'s `numa_*` counters.
fn vmstat() -> Value {
    let text = crate::kernel::read("/proc/vmstat").unwrap_or_default();
    let counters: serde_json::Map<String, Value> = text
        .lines()
        .filter_map(|l| l.split_once(' '))
        .filter(|(k, _)| k.starts_with("numa_"))
        .filter_map(|(k, v)| Some((k.to_owned(), json!(v.trim().parse::<u64>().ok()?))))
        .collect();
    Value::Object(counters)
}
