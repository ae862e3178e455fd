//! # zonal-sim
//!
//! A deterministic discrete-event simulator of a NUMA machine, driving the balancing
//! policies of [`zonal_policy`] — the same code the runtime asks — on machines no box here
//! has: the conservative balancer paper's 16- and 32-node systems, or 1024-CPU trees.
//!
//! ## Map
//! - [`simulate`] runs one [`Workload`] on a [`Topology`](zonal_topology::Topology) under a
//!   policy, with a [`SimConfig`] (seed, [`CostModel`], age limit, tracing), and returns a
//!   [`RunResult`]: [`RunStats`] (turnaround, makespan, balancing attempts, migrations by
//!   level, futile migrations, refusals, aged tasks, the paper's Table 2 histogram), one
//!   [`ProcRecord`] per process, and optionally the paper-format trace.
//! - [`WorkloadSpec`] draws workloads; [`experiment`] defines the paper's systems and
//!   workloads (Tables 3–5) and runs grids; [`paper`] holds the paper's figures;
//!   [`report`] is the data of a run's report (its JSON object). The `paper` example
//!   (`crates/examples/examples/paper/`) holds the command line, the markdown and CSV
//!   tables and the SVG plots: this library has no command-line code.
//! - [`verdict`] judges the paper's claims against the reproduction's tolerances.
//! - [`cost`] holds every constant of the cost model, with its source.
//! - Work-stealing mode: [`simulate_stealing`] runs a seeded fork-join [`TaskGraph`] on
//!   simulated workers with deques, every steal decided by the policy crate's steal walker —
//!   the walk the runtime's workers run ([`StealRun`] says what happened).
//!
//! ## Determinism
//!
//! One run is single-threaded; events are ordered by (time, schedule order); the policy's
//! randomness comes from one [`Rng`](zonal_policy::Rng) seeded from [`SimConfig::seed`].
//! The same inputs give a byte-identical trace.
#![cfg_attr(docsrs, feature(doc_cfg))]
// `report::json` builds one `serde_json::json!` object with more keys than the macro's
// default recursion limit allows.
#![recursion_limit = "256"]

pub mod cost;
mod engine;
pub mod experiment;
mod machine;
pub mod paper;
mod queue;
pub mod report;
mod stats;
mod steal;
mod trace;
pub mod verdict;
mod workload;

pub use cost::{CostModel, CostPreset};
pub use engine::{simulate, OriginAt, SimConfig};
pub use stats::{ran_most_level, share_by_level, MigrationRecord, ProcRecord, RunResult, RunStats};
pub use steal::{
    simulate_stealing, GraphSpec, GraphTask, StealModeError, StealRun, TaskGraph, IDLE_BACKOFF_NS,
    MAX_SEGMENTS, MAX_SLICE_US, MAX_TASKS, REMOTE_SHARE, STEAL_NS,
};
pub use trace::fnv1a;
pub use workload::{
    Arrival, Burst, ExecTime, ProcSpec, Workload, WorkloadSpec, IO_BURST_CPU_MS, IO_WAIT_MS,
};
