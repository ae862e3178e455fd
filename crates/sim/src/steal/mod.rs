//! The work-stealing mode: simulated workers with deques run a seeded fork-join task graph
//! ([`TaskGraph`]), and every steal is decided by the policy crate's
//! [`StealWalker`](zonal_policy::StealWalker) — the very walk the runtime's workers run — so
//! that the runtime's stealing can be studied on the paper's 16- and 32-node machines.
//!
//! ```
//! use zonal_sim::{simulate_stealing, GraphSpec, TaskGraph};
//! let topo = zonal_topology::presets::preset("s1")?;
//! let policy = zonal_policy::PolicyConfig::named("conservative-hard")?.build()?;
//! let graph = TaskGraph::generate(&GraphSpec::skewed(), 1)?;
//! let run = simulate_stealing(&topo, policy.as_ref(), &graph);
//! assert_eq!(run.tasks_run, run.tasks);
//! assert_eq!(run.steals_beyond_zone, 0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The machine, its queues and its cost model are documented in `engine.rs`; the graphs in
//! [`GraphSpec`].

mod engine;
mod graph;

use std::collections::BTreeMap;

use zonal_policy::{Policy, RefusalCounts};
use zonal_topology::Topology;

pub use engine::{IDLE_BACKOFF_NS, REMOTE_SHARE, STEAL_NS};
pub use graph::{GraphSpec, GraphTask, TaskGraph, MAX_SEGMENTS, MAX_SLICE_US, MAX_TASKS};

/// A bad graph spec.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StealModeError {
    /// A field of [`GraphSpec`] is out of range.
    #[error("bad value {value} for {field}: expected {expected}")]
    BadSpec {
        /// The field.
        field: &'static str,
        /// The value given.
        value: String,
        /// What is accepted.
        expected: String,
    },
}

/// What one work-stealing run did.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct StealRun {
    /// Tasks in the graph.
    pub tasks: u64,
    /// Tasks whose last slice ran (must equal `tasks`: every task exactly once).
    pub tasks_run: u64,
    /// Slices run (tasks × segments).
    pub slices_run: u64,
    /// The graph's work at local speed, ns.
    pub work_ns: u64,
    /// When the last slice ended, ns.
    pub makespan_ns: u64,
    /// Steals per level between thief and victim (index 0 = same node).
    pub steals_by_level: Vec<u64>,
    /// Steals that took a task out of its origin's zone (for a task at home: from a victim
    /// beyond the thief's zone; children inherit their root's origin): 0 under a hard zone.
    pub steals_beyond_zone: u64,
    /// Steals that took a task already away from home farther from its origin (0 under the
    /// conservative `no-farther` rule; a task at home may leave it).
    pub moves_farther_from_origin: u64,
    /// Tasks that became aged (their migration count reached the policy's age limit).
    pub tasks_aged: u64,
    /// Steals of tasks that were already aged (0 under an ageing policy).
    pub aged_tasks_stolen: u64,
    /// Refusals by reason.
    #[serde(serialize_with = "refusals_by_name")]
    pub refused: RefusalCounts,
    /// Refusals per level of the refused victim.
    pub refusals_by_level: Vec<u64>,
    /// Run time per level between the running CPU and the task's origin node, ns.
    pub run_ns_by_level: Vec<u64>,
    /// A hash of every slice's (end time, worker, task, slice): the same inputs give the
    /// same fingerprint.
    pub fingerprint: u64,
}

fn refusals_by_name<S: serde::Serializer>(r: &RefusalCounts, s: S) -> Result<S::Ok, S::Error> {
    let m: BTreeMap<&str, u64> = r.iter().map(|(k, v)| (k.as_str(), v)).collect();
    serde::Serialize::serialize(&m, s)
}

impl StealRun {
    fn new(levels: usize, graph: &TaskGraph) -> Self {
        Self {
            tasks: graph.tasks.len() as u64,
            tasks_run: 0,
            slices_run: 0,
            work_ns: graph.work_us() * 1000,
            makespan_ns: 0,
            steals_by_level: vec![0; levels],
            steals_beyond_zone: 0,
            moves_farther_from_origin: 0,
            tasks_aged: 0,
            aged_tasks_stolen: 0,
            refused: RefusalCounts::default(),
            refusals_by_level: vec![0; levels],
            run_ns_by_level: vec![0; levels],
            fingerprint: 0,
        }
    }

    /// Share of run time spent away from the task's origin node.
    #[must_use]
    pub fn remote_share(&self) -> f64 {
        let total: u64 = self.run_ns_by_level.iter().sum();
        let remote: u64 = self.run_ns_by_level.iter().skip(1).sum();
        if total == 0 {
            0.0
        } else {
            remote as f64 / total as f64
        }
    }
}

/// Runs `graph` on `topo` with one simulated worker per CPU, every steal decided by
/// `policy`'s steal side through the [`StealWalker`](zonal_policy::StealWalker).
#[must_use]
pub fn simulate_stealing(topo: &Topology, policy: &dyn Policy, graph: &TaskGraph) -> StealRun {
    engine::run(topo, policy, graph)
}
