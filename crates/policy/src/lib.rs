//! # zonal-policy
//!
//! Every balancing rule of Zonal, written once, as pure and deterministic code: the runtime
//! and the simulator both ask these policies, through the [`Policy`] trait, about a machine
//! they describe with a [`MachineView`].
//!
//! ## Map
//! - [`MachineView`], [`TaskMeta`], [`CpuLoad`]: what a policy may read.
//! - [`Policy`]: the steal path ([`Policy::victim`], [`Policy::eligibility`]), the periodic
//!   and new-idle passes, and placement.
//! - Results: [`Eligibility`], [`VictimDecision`], [`BalanceOutcome`], [`Placement`], with
//!   refusals carrying a [`Refusal`] reason.
//! - [`PolicyConfig`]: choose a policy by name and parameters (TOML/JSON); `build()` gives
//!   an `Arc<dyn Policy>`.
//! - [`ConservativeFilter`]: the conservative rules (zone, origin, ageing) as a filter that
//!   composes with any selection rule.
//! - [`SnapshotView`]: an owned view for tests, benches and simple callers.
//!
//! ## Policies (by config name)
//! - `linux`: the sched-domain walk of reference/linux-lb.md (module `linux`).
//! - `conservative-hard` / `conservative-soft`: the same walk behind [`ConservativeFilter`].
//! - `thread-aware`: Chiang & Su's order for inter-node moves.
//! - `numalb`: Pilla et al.'s greedy NUMA cost.
//! - `average-weight`: Sharma & Agrawal's threshold.
//! - `unrestricted`: random work stealing.
//!
//! ```
//! use zonal_policy::{PolicyConfig, SnapshotView, CpuBalanceState, Rng, TaskMeta, TaskId};
//! use zonal_topology::{presets, CpuId, NodeId};
//! let topo = presets::preset("s1")?;
//! let policy = PolicyConfig::named("conservative-hard")?.build()?;
//! let mut view = SnapshotView::new(topo.clone());
//! for i in 0..4 {
//!     view.push_task(TaskMeta::new(TaskId(i), NodeId(0), CpuId(0)));
//! }
//! view.set_now(1_000_000);
//! let mut state = CpuBalanceState::new(&topo, CpuId(1));
//! let out = policy.balance(&view, CpuId(1), &mut state, &mut Rng::new(1));
//! assert!(!out.migrations.is_empty());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod average_weight;
mod config;
mod decision;
mod filters;
mod linux;
mod no_policy;
mod numalb;
mod policy;
mod registry;
mod rng;
mod rules;
mod snapshot;
mod state;
mod thread_aware;
mod unrestricted;
mod view;
mod weight;

#[cfg(test)]
mod testing;

pub use config::{OriginRule, PolicyConfig, PolicyError, PolicyName};
pub use decision::{
    Attempt, AttemptOutcome, BalanceOutcome, Eligibility, Migration, MoveContext, MoveKind,
    Placement, Refusal, RefusalCounts, VictimDecision,
};
pub use filters::{ConservativeFilter, ZoneMode, DEFAULT_AGE_LIMIT, SOFT_VICTIM_PCT};
pub use linux::{BUSY_FACTOR, DEFAULT_NUMA_IMBALANCE_PCT, LOCAL_IMBALANCE_PCT, RECLAIM_DISTANCE};
pub use no_policy::NoPolicy;
pub use numalb::DEFAULT_ALPHA as DEFAULT_NUMALB_ALPHA;
pub use policy::{FreshSteal, Policy};
pub use rng::Rng;
pub use rules::{cache_nice_tries, MIGRATION_COST_US};
pub use snapshot::SnapshotView;
pub use state::{CpuBalanceState, LevelState, NEVER_DUE_US};
pub use view::{CommCounts, CpuLoad, GroupId, MachineView, NodeLoad, TaskId, TaskMeta};
pub use weight::{nice_to_weight, NICE_0_WEIGHT};
