//! `zones [--policy NAME]… [--per-node N] [--spin N] [--slices N]`: does work stay inside
//! its origin's load-balancing zone, as the kernel sees where it ran?
//!
//! Per policy (default: `conservative-hard`, then `linux` as the control run), a pool on
//! this machine runs computations rooted on each node, skewed so that most are born on the
//! first node and others must steal: `spawn_on(node)`, `scope` with `spawn_on`, a
//! node-partitioned parallel iterator, and async tasks holding node-local `NodeBuffer`
//! state under a control plane balancing every 4 ms. Every execution records its id, the
//! origin of the task it ran in (`current_task()`), and the CPU it ran on (`sched_getcpu`)
//! mapped to a node by the kernel's `/sys/devices/system/node/node*/cpulist`. Children
//! inherit their root's origin, so the origin an execution reports is its computation's
//! root (`meant`: the node it was spawned on, or the iterator's node part holding its
//! item); `origin_mismatch` counts executions where they differ. The report
//! counts, per kind of computation: executions outside the root's zone (the pool's
//! topology: `node_in_zone`), ids run twice or never, origins that ran on more than one node
//! of their zone (stealing happened), and the pool's own counters.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use zonal::prelude::*;
use zonal_runtime::{NodeBuffer, TaskOptions, ThreadPool};
use zonal_topology::{NodeId, Topology};

use crate::kernel::CpuNodes;
use crate::work::{self, PREFIX};

/// One execution of a piece of work.
#[derive(Clone, Copy, Debug)]
struct Exec {
    kind: Kind,
    id: usize,
    /// The origin the work was given (dense node index), where known.
    meant: Option<usize>,
    /// `current_task().origin` (dense).
    origin: Option<usize>,
    cpu: Option<u32>,
    /// The kernel's node of `cpu` (OS id).
    node_os: Option<u32>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    SpawnOn,
    Scope,
    Iter,
    Async,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::SpawnOn => "spawn_on",
            Kind::Scope => "scope_spawn_on",
            Kind::Iter => "parallel_iterator",
            Kind::Async => "async_node_buffer",
        }
    }
}

/// Every execution, appended from the workers.
struct Log {
    nodes: CpuNodes,
    execs: Mutex<Vec<Exec>>,
}

impl Log {
    fn record(&self, kind: Kind, id: usize, meant: Option<usize>) {
        let (cpu, node_os) = self.nodes.here();
        let origin = zonal_runtime::current_task().map(|t| t.origin.index());
        let e = Exec {
            kind,
            id,
            meant,
            origin,
            cpu,
            node_os,
        };
        self.execs.lock().unwrap_or_else(|e| e.into_inner()).push(e);
    }
}

/// The sizes of one run.
#[derive(Clone, Copy, Debug)]
struct Sizes {
    per_node: usize,
    spin: u64,
    slices: usize,
}

pub(crate) fn run(args: &[String]) -> crate::Outcome {
    let mut policies: Vec<&str> = args
        .windows(2)
        .filter(|w| w[0] == "--policy")
        .map(|w| w[1].as_str())
        .collect();
    if policies.is_empty() {
        policies = vec!["conservative-hard", "linux"];
    }
    let sizes = Sizes {
        per_node: usize::try_from(work::num_arg(args, "--per-node", 4)?)
            .map_err(|e| e.to_string())?,
        spin: work::num_arg(args, "--spin", 4_000)?,
        slices: usize::try_from(work::num_arg(args, "--slices", 6)?).map_err(|e| e.to_string())?,
    };
    let mut runs = Vec::new();
    for p in policies {
        runs.push(one_policy(p, sizes)?);
    }
    Ok(json!({ "check": "zones", "runs": runs }))
}

fn one_policy(policy: &str, sizes: Sizes) -> Result<Value, String> {
    let pool = work::pool(Some(policy), PREFIX)?;
    let topo = pool.topology().clone();
    let log = Arc::new(Log {
        nodes: CpuNodes::read()?,
        execs: Mutex::new(Vec::new()),
    });
    let homes = skewed_homes(&pool.worker_nodes(), sizes.per_node);
    let mut expected = BTreeMap::new();

    expected.insert(Kind::SpawnOn, homes.len());
    spawn_on(&pool, &log, &homes, sizes.spin);

    expected.insert(Kind::Scope, homes.len());
    pool.scope(|s| {
        for (id, &home) in homes.iter().enumerate() {
            let log = &log;
            s.spawn_on(home, move |_| {
                log.record(Kind::Scope, id, Some(home.index()));
                std::hint::black_box(work::spin(sizes.spin));
            });
        }
    });

    // Rooted from outside the pool: the iterator cuts its index space by node, each part
    // the root of a computation on its node, which every piece of it inherits.
    let items = homes.len() * 8;
    expected.insert(Kind::Iter, items);
    let parts = pool.node_partition(0..items);
    let part_of = |i: usize| {
        parts
            .iter()
            .find(|(_, r)| r.contains(&i))
            .map(|(n, _)| n.index())
    };
    pool.install(|| {
        (0..items).into_par_iter().for_each(|i| {
            log.record(Kind::Iter, i, part_of(i));
            std::hint::black_box(work::spin(sizes.spin / 4));
        });
    });

    expected.insert(Kind::Async, homes.len() * sizes.slices);
    let balance = async_state(&pool, &log, &homes, sizes)?;

    let m = pool.metrics();
    let execs = std::mem::take(&mut *log.execs.lock().unwrap_or_else(|e| e.into_inner()));
    let mut kinds = Vec::new();
    let mut total = Tally::default();
    for (kind, want) in expected {
        let of_kind: Vec<Exec> = execs.iter().copied().filter(|e| e.kind == kind).collect();
        let t = tally(&topo, &of_kind, want);
        kinds.push(t.json(kind.name()));
        total.add(&t);
    }
    let depth = m.zone_depth;
    let beyond = |v: &[u64]| v.iter().skip(depth).sum::<u64>();
    Ok(json!({
        "policy": policy,
        "nodes": topo.node_count(),
        "workers": pool.num_workers(),
        "zone_depth": depth,
        "levels": m.levels,
        "zones": (0..topo.node_count())
            .map(|a| (0..topo.node_count()).filter(|&b| topo.node_in_zone(NodeId::new(a), NodeId::new(b))).collect::<Vec<_>>())
            .collect::<Vec<_>>(),
        "kinds": kinds,
        "total": total.json("total"),
        "counters": {
            "steals_by_level": m.total.steals_by_level,
            "steals_beyond_zone": beyond(&m.total.steals_by_level),
            "migrations": m.total.migrations,
            "migrations_beyond_zone": m.total.migrations_beyond_zone,
            "moves_farther_from_origin": m.total.moves_farther_from_origin,
            "balance_migrations_by_level": m.total.balance_migrations_by_level,
            "balance_beyond_zone": beyond(&m.total.balance_migrations_by_level),
            "balance_passes": balance,
        },
    }))
}

/// `per_node` homes on each worker node, and as many again for every node on the first one
/// (so that the first node has work to spare and the others steal).
fn skewed_homes(nodes: &[NodeId], per_node: usize) -> Vec<NodeId> {
    let mut homes: Vec<NodeId> = nodes
        .iter()
        .flat_map(|&n| std::iter::repeat_n(n, per_node))
        .collect();
    homes.extend(std::iter::repeat_n(nodes[0], per_node * nodes.len()));
    homes
}

fn spawn_on(pool: &ThreadPool, log: &Arc<Log>, homes: &[NodeId], spin: u64) {
    let done = Arc::new((Mutex::new(0usize), std::sync::Condvar::new()));
    for (id, &home) in homes.iter().enumerate() {
        let log = Arc::clone(log);
        let done = Arc::clone(&done);
        pool.spawn_on(home, move || {
            log.record(Kind::SpawnOn, id, Some(home.index()));
            std::hint::black_box(work::spin(spin));
            let (count, cv) = &*done;
            *count.lock().unwrap_or_else(|e| e.into_inner()) += 1;
            cv.notify_all();
        });
    }
    let (count, cv) = &*done;
    let mut n = count.lock().unwrap_or_else(|e| e.into_inner());
    while *n < homes.len() {
        n = cv.wait(n).unwrap_or_else(|e| e.into_inner());
    }
}

/// Async tasks, each with a `NodeBuffer` on its home node as state, `sizes.slices` slices
/// each (a yield between slices), under a control plane balancing every 4 ms. Returns the
/// balancing passes made.
fn async_state(
    pool: &ThreadPool,
    log: &Arc<Log>,
    homes: &[NodeId],
    sizes: Sizes,
) -> Result<u64, String> {
    let cp = work::balancing(pool)?;
    let mut states = Vec::new();
    for &home in homes {
        states.push(
            NodeBuffer::try_new_in(pool, home, 1024, |i| i as u64)
                .map_err(|e| format!("NodeBuffer on {home}: {e}"))?,
        );
    }
    let mut handles = Vec::new();
    for (t, (home, state)) in homes.iter().zip(states).enumerate() {
        let log = Arc::clone(log);
        let slices = sizes.slices;
        let spin = sizes.spin;
        let home = home.index();
        handles.push(pool.spawn_async_with(
            TaskOptions::new().origin(NodeId::new(home)),
            async move {
                let mut acc = 0u64;
                for s in 0..slices {
                    log.record(Kind::Async, t * slices + s, Some(home));
                    acc = acc.wrapping_add(state.iter().sum::<u64>());
                    std::hint::black_box(work::spin(spin));
                    zonal::task::yield_now().await;
                }
                acc
            },
        ));
    }
    let passes = work::finish(handles, cp)?;
    Ok(passes)
}

/// Counts over the executions of one kind.
#[derive(Default)]
struct Tally {
    executions: usize,
    expected: usize,
    outside_zone: usize,
    off_origin_node: usize,
    origin_mismatch: usize,
    no_origin: usize,
    unmapped: usize,
    lost: usize,
    duplicated: usize,
    /// Per origin (dense), the nodes (dense) its executions ran on.
    ran_on: BTreeMap<usize, BTreeSet<usize>>,
    examples_outside: Vec<Value>,
}

fn tally(topo: &Topology, execs: &[Exec], expected: usize) -> Tally {
    let mut t = Tally {
        expected,
        executions: execs.len(),
        ..Tally::default()
    };
    let mut runs = vec![0u32; expected];
    for e in execs {
        match runs.get_mut(e.id) {
            Some(r) => *r += 1,
            None => t.duplicated += 1,
        }
        if e.meant.is_some() && e.origin.is_some() && e.meant != e.origin {
            t.origin_mismatch += 1;
        }
        let Some(origin) = e.origin else {
            t.no_origin += 1;
            continue;
        };
        let Some(ran) = e.node_os.and_then(|os| work::node_of_os(topo, os)) else {
            t.unmapped += 1;
            continue;
        };
        t.ran_on.entry(origin).or_default().insert(ran.index());
        if ran.index() != origin {
            t.off_origin_node += 1;
        }
        // As the conservative filter reads it: the origin inside the zone of where it ran.
        if !topo.node_in_zone(ran, NodeId::new(origin)) {
            t.outside_zone += 1;
            if t.examples_outside.len() < 5 {
                t.examples_outside.push(
                    json!({ "id": e.id, "origin": origin, "cpu": e.cpu, "node": ran.index() }),
                );
            }
        }
    }
    t.lost = runs.iter().filter(|&&r| r == 0).count();
    t.duplicated += runs.iter().filter(|&&r| r > 1).count();
    t.ran_on.retain(|_, v| !v.is_empty());
    t
}

impl Tally {
    fn add(&mut self, o: &Tally) {
        self.executions += o.executions;
        self.expected += o.expected;
        self.outside_zone += o.outside_zone;
        self.off_origin_node += o.off_origin_node;
        self.origin_mismatch += o.origin_mismatch;
        self.no_origin += o.no_origin;
        self.unmapped += o.unmapped;
        self.lost += o.lost;
        self.duplicated += o.duplicated;
        for (k, v) in &o.ran_on {
            self.ran_on.entry(*k).or_default().extend(v);
        }
        for e in &o.examples_outside {
            if self.examples_outside.len() < 5 {
                self.examples_outside.push(e.clone());
            }
        }
    }

    fn json(&self, kind: &str) -> Value {
        let spread: Vec<usize> = self
            .ran_on
            .iter()
            .filter(|(_, v)| v.len() >= 2)
            .map(|(k, _)| *k)
            .collect();
        json!({
            "kind": kind,
            "expected": self.expected,
            "executions": self.executions,
            "outside_zone": self.outside_zone,
            "off_origin_node": self.off_origin_node,
            "origin_mismatch": self.origin_mismatch,
            "no_origin": self.no_origin,
            "unmapped": self.unmapped,
            "lost": self.lost,
            "duplicated": self.duplicated,
            "ran_on": self.ran_on.iter().map(|(k, v)| (k.to_string(), v.iter().copied().collect::<Vec<_>>())).collect::<BTreeMap<_, _>>(),
            "origins_spread_over_several_nodes": spread,
            "examples_outside_zone": self.examples_outside,
        })
    }
}
