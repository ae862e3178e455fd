//! `locality [--policy NAME]… [--tasks-per-node N] [--slices N] [--spin N]`: how much of a
//! service-like load runs where its data lives, per policy (every policy of the catalogue
//! unless named).
//!
//! Long-lived async tasks, each with a `NodeBuffer` state bound to its home node (homes
//! spread over the nodes, with half the tasks on the first quarter of them so that others
//! must steal), under a control plane balancing every 4 ms. The data's node is what the
//! kernel says (the majority of the state's pages, `move_pages`), read once after creation
//! and again at the end (`data_moved` counts the states whose majority changed). Each slice
//! records the node it ran on (`sched_getcpu`, the kernel's CPU → node map). A placement
//! figure, never a speed one: TCG models no memory latency, so no times are reported.

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use zonal_runtime::{NodeBuffer, TaskOptions};
use zonal_topology::NodeId;

use crate::kernel::CpuNodes;
use crate::work::{self, PREFIX};

/// Elements (u64) of each task's state: 4 pages.
const STATE_LEN: usize = 2048;

pub(crate) fn run(args: &[String]) -> crate::Outcome {
    let mut policies: Vec<String> = args
        .windows(2)
        .filter(|w| w[0] == "--policy")
        .map(|w| w[1].clone())
        .collect();
    if policies.is_empty() {
        policies = zonal_policy::catalogue()
            .iter()
            .map(|e| e.name.to_owned())
            .collect();
    }
    let per_node = work::num_arg(args, "--tasks-per-node", 2)?;
    let slices = work::num_arg(args, "--slices", 8)?;
    let spin = work::num_arg(args, "--spin", 3_000)?;
    let nodes = CpuNodes::read()?;
    let mut rows = Vec::new();
    for p in &policies {
        rows.push(one_policy(p, &nodes, per_node, slices, spin)?);
    }
    Ok(json!({ "check": "locality", "policies": rows }))
}

/// Per slice: (the data's node, the node it ran on), dense indexes; `None` when unmapped.
type Slices = Mutex<Vec<(usize, Option<usize>)>>;

fn one_policy(
    policy: &str,
    cpu_nodes: &CpuNodes,
    per_node: u64,
    slices: u64,
    spin: u64,
) -> Result<Value, String> {
    let pool = work::pool(Some(policy), PREFIX)?;
    let topo = pool.topology().clone();
    let nodes = pool.worker_nodes();
    let hot = (nodes.len() / 4).max(1);
    let count = usize::try_from(per_node).map_err(|e| e.to_string())? * nodes.len();
    // Half the tasks on the first quarter of the nodes, the rest round-robin over all.
    let homes: Vec<NodeId> = (0..count)
        .map(|i| {
            if i % 2 == 0 {
                nodes[(i / 2) % hot]
            } else {
                nodes[(i / 2) % nodes.len()]
            }
        })
        .collect();
    let cp = work::balancing(&pool)?;
    let mut states = Vec::new();
    let mut data_nodes = Vec::new();
    for &home in &homes {
        let s = NodeBuffer::try_new_in(&pool, home, STATE_LEN, |i| i as u64)
            .map_err(|e| format!("NodeBuffer on {home}: {e}"))?;
        let pages = s.page_nodes().map_err(|e| format!("move_pages: {e}"))?;
        let data = work::majority(&pages)
            .and_then(|os| work::node_of_os(&topo, os))
            .ok_or_else(|| format!("state on {home}: no page on a known node: {pages:?}"))?;
        data_nodes.push(data);
        states.push(Arc::new(s));
    }
    let log: Arc<Slices> = Arc::new(Mutex::new(Vec::new()));
    let mut handles = Vec::new();
    for ((&home, &data), state) in homes.iter().zip(&data_nodes).zip(&states) {
        let log = Arc::clone(&log);
        let state = Arc::clone(state);
        let cpu_nodes = cpu_nodes.clone();
        let topo = topo.clone();
        handles.push(
            pool.spawn_async_with(TaskOptions::new().origin(home), async move {
                let mut acc = 0u64;
                for _ in 0..slices {
                    let ran = cpu_nodes
                        .here()
                        .1
                        .and_then(|os| work::node_of_os(&topo, os));
                    acc = acc.wrapping_add(state.iter().sum::<u64>());
                    std::hint::black_box(work::spin(spin));
                    log.lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push((data.index(), ran.map(NodeId::index)));
                    zonal::task::yield_now().await;
                }
                acc
            }),
        );
    }
    let passes = work::finish(handles, cp)?;
    let mut moved = 0usize;
    for (s, &data) in states.iter().zip(&data_nodes) {
        let now = s
            .page_nodes()
            .ok()
            .and_then(|p| work::majority(&p))
            .and_then(|os| work::node_of_os(&topo, os));
        moved += usize::from(now != Some(data));
    }
    let m = pool.metrics();
    let log = std::mem::take(&mut *log.lock().unwrap_or_else(|e| e.into_inner()));
    let total = log.len();
    let on_node = log.iter().filter(|(d, r)| *r == Some(*d)).count();
    let in_zone = log
        .iter()
        .filter(|(d, r)| r.is_some_and(|r| topo.node_in_zone(NodeId::new(*d), NodeId::new(r))))
        .count();
    let unmapped = log.iter().filter(|(_, r)| r.is_none()).count();
    let share = |n: usize| {
        if total == 0 {
            0.0
        } else {
            n as f64 / total as f64
        }
    };
    let depth = m.zone_depth;
    Ok(json!({
        "policy": policy,
        "nodes": topo.node_count(),
        "workers": pool.num_workers(),
        "zone_depth": depth,
        "tasks": homes.len(),
        "slices": total,
        "slices_expected": homes.len() as u64 * slices,
        "on_data_node": on_node,
        "in_data_zone": in_zone,
        "unmapped": unmapped,
        "on_data_node_share": share(on_node),
        "in_data_zone_share": share(in_zone),
        "data_on_home": homes.iter().zip(&data_nodes).filter(|(h, d)| h == d).count(),
        "data_moved": moved,
        "steals_by_level": m.total.steals_by_level,
        "balance_migrations_by_level": m.total.balance_migrations_by_level,
        "migrations": m.total.migrations,
        "migrations_beyond_zone": m.total.migrations_beyond_zone,
        "balance_passes": passes,
    }))
}
