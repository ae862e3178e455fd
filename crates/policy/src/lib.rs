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
//! - [`PolicyConfig`]: choose a policy by name and parameters (TOML/JSON).

mod config;
mod decision;
mod policy;
mod registry;
mod rng;
mod state;
mod view;
mod weight;

pub use config::{OriginRule, PolicyConfig, PolicyError, PolicyName};
pub use decision::{
    Attempt, AttemptOutcome, BalanceOutcome, Eligibility, Migration, MoveContext, MoveKind,
    Placement, Refusal, RefusalCounts, VictimDecision,
};
pub use policy::Policy;
pub use rng::Rng;
pub use state::{CpuBalanceState, LevelState};
pub use view::{CommCounts, CpuLoad, GroupId, MachineView, NodeLoad, TaskId, TaskMeta};
pub use weight::{nice_to_weight, NICE_0_WEIGHT};
