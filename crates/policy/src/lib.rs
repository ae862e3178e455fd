//! # zonal-policy
//!
//! Every balancing rule of Zonal, written once, as pure and deterministic code: the runtime
//! and the simulator both ask these policies, through the [`Policy`] trait, about a machine
//! they describe with a [`MachineView`].
//!
//! ## Map
//! - [`MachineView`], [`TaskMeta`], [`CpuLoad`]: what a policy may read.
//! - [`Policy`]: a name and its sides. The [`StealSide`] answers an idle thief (victim
//!   decision, per-task eligibility with a typed [`Refusal`], the [`Ageing`] rule, cached
//!   [`FreshSteal`] answers); the [`BalanceSide`] runs periodic and new-idle passes over a
//!   load snapshot and places new tasks. The interval back-off of every pass is
//!   [`LevelState::record`].
//! - [`StealWalker`]: the steal walk itself — which victims a thief tries, in which order,
//!   and whether each task may move — over any driver's queues ([`VictimQueues`]). The
//!   runtime's workers and the simulator's work-stealing mode both run it.
//! - Results: [`Eligibility`], [`VictimDecision`], [`BalanceOutcome`], [`Placement`], with
//!   refusals carrying a [`Refusal`] reason.
//! - [`catalogue`]: every policy, one row each (name, summary, sides, constructor);
//!   [`PolicyConfig`] chooses one by name and parameters (TOML/JSON), and `build()` gives an
//!   `Arc<dyn Policy>`.
//! - [`ConservativeFilter`]: the conservative rules (zone, origin, ageing) as a filter that
//!   composes with any selection rule.
//! - [`NumaBalancing`]: Linux's automatic NUMA balancing as a rule over one task's scan
//!   history (when its pages follow it), for drivers that model memory placement.
//! - [`SnapshotView`]: an owned view for tests, benches and simple callers.
//!
//! ## Policies (by config name)
//! - `linux`: the sched-domain walk of docs/reference/linux-lb.md (module `policies::linux`).
//! - `conservative-hard` / `conservative-soft`: the same walk behind [`ConservativeFilter`].
//! - `thread-aware`: Chiang & Su's order for inter-node moves.
//! - `numalb`: Pilla et al.'s greedy NUMA cost.
//! - `average-weight`: Sharma & Agrawal's threshold.
//! - `unrestricted`: random work stealing.
//!
//! ```
//! # use zonal_policy::doc_facade as zonal;
//! use zonal::policy::{PolicyConfig, SnapshotView, CpuBalanceState, CpuPass, Rng, TaskMeta, TaskId};
//! use zonal::topology::{presets, CpuId, NodeId};
//! let topo = presets::preset("s1")?;
//! let policy = PolicyConfig::named("conservative-hard")?.build()?;
//! let mut view = SnapshotView::new(topo.clone());
//! for i in 0..4 {
//!     view.push_task(TaskMeta::new(TaskId(i), NodeId(0), CpuId(0)));
//! }
//! view.set_now(1_000_000);
//! let mut state = CpuBalanceState::new(&topo, CpuId(1));
//! let balancer = policy.balance_side().expect("conservative-hard balances");
//! let out = balancer.balance(CpuPass::new(&view, &mut state, &mut Rng::new(1)));
//! assert!(!out.migrations.is_empty());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]
// The README's example runs as a doc test.
#![cfg_attr(doctest, doc = include_str!("../README.md"))]

mod ageing;
mod config;
mod decision;
mod filters;
mod numa_balancing;
mod pelt;
mod policies;
mod policy;
mod rng;
mod rules;
mod snapshot;
mod state;
mod view;
mod walker;
mod weight;

#[cfg(test)]
mod testing;

pub use ageing::{Ageing, DEFAULT_AGE_LIMIT};
pub use config::{
    ConfigField, Fields, ImbalanceRule, LinuxEra, Mechanism, OriginRule, PlacementMode,
    PolicyConfig, PolicyError, PolicyName,
};
pub use decision::{
    Attempt, AttemptOutcome, BalanceOutcome, Eligibility, Migration, MoveContext, MoveKind,
    Placement, Refusal, RefusalCounts, VictimDecision,
};
pub use filters::{ConservativeFilter, MechanismFilters, ZoneMode, NEVER_AGED, SOFT_VICTIM_PCT};
pub use numa_balancing::{
    NumaBalancing, NumaTaskState, ScanOutcome, EARLY_SCAN_SEQ, MAX_SCAN_WINDOW_MB, MAX_SYSCTL_MS,
    NUMA_PERIOD_SLOTS, NUMA_PERIOD_THRESHOLD, SCAN_DELAY_MS, SCAN_PERIOD_MAX_MS,
    SCAN_PERIOD_MIN_MS, SCAN_SIZE_MB,
};
pub use pelt::{pelt_decay, pelt_periods, PeltAverage, PELT_PERIOD_SHIFT, PELT_TABLE_LEN};
pub use policies::linux::{DEFAULT_NUMA_IMBALANCE_PCT, LOCAL_IMBALANCE_PCT, RECLAIM_DISTANCE};
pub use policies::no_policy::NoPolicy;
pub use policies::numalb::DEFAULT_ALPHA as DEFAULT_NUMALB_ALPHA;
pub use policies::{catalogue, Constructor, Filters, PolicyEntry, CATALOGUE};
pub use policy::{
    wake_near_prev, BalanceSide, CpuPass, FreshSteal, Policy, Sides, StealSide, WakeUp,
};
pub use rng::Rng;
pub use rules::{cache_nice_tries, MIGRATION_COST_US, TICK_US};
pub use snapshot::SnapshotView;
pub use state::{CpuBalanceState, LevelState, BUSY_FACTOR, NEVER_DUE_US};
pub use view::{CommCounts, CpuLoad, GroupId, MachineView, NodeLoad, TaskId, TaskMeta};
pub use walker::{
    Probe, Source, StealWalker, Stolen, VictimQueues, WalkSlot, AWAY_EXAMINE, BATCH_MAX,
};
pub use weight::{nice_to_weight, NICE_0_WEIGHT};

/// The `zonal` facade's paths, for this crate's doc examples (`# use
/// zonal_policy::doc_facade as zonal;`), which appear on the facade's pages and so are
/// written as a `zonal` user writes them: `zonal::policy::…`, `zonal::topology::…`
/// (`tests/doc_paths.rs` in the facade checks them).
#[doc(hidden)]
pub mod doc_facade {
    pub use crate as policy;
    pub use zonal_topology as topology;
}
