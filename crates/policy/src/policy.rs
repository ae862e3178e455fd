//! The one interface every balancing policy implements.
//!
//! # How a decision is asked for
//!
//! - **Steal path** (runtime workers, simulator new-idle pulls): the thief walks its
//!   [`Topology::victims`] order and asks [`Policy::victim`] for each victim
//!   (`Examine`, `Skip(reason)` or `Stop(reason)`: past the hard zone nothing farther can be
//!   taken, so the walk ends). For each candidate task it asks [`Policy::eligibility`]. Both
//!   read only the topology, the task's metadata and two loads: they are the hot path and
//!   must not allocate.
//! - **Periodic pass** ([`Policy::balance`]): called for one CPU at the caller's tick; the
//!   policy decides which levels are due (from [`CpuBalanceState`]), finds the busiest group
//!   and CPU, filters tasks, and returns the migrations plus one [`Attempt`](crate::Attempt)
//!   per level examined.
//! - **New-idle pass** ([`Policy::idle_balance`]): a CPU about to idle pulls, bottom-up,
//!   ignoring intervals, and stops at the first level that yields a task.
//! - **Placement** ([`Policy::place`]): fork/exec balancing of a new task.
//!
//! Policies are deterministic: the same view, state and RNG seed give the same decisions.

use std::fmt;

use zonal_topology::{CpuId, Topology, Victim};

use crate::decision::{BalanceOutcome, Eligibility, MoveContext, Placement, VictimDecision};
use crate::rng::Rng;
use crate::state::CpuBalanceState;
use crate::view::{MachineView, TaskMeta};

/// A balancing policy. Object-safe: the runtime and simulator hold `Arc<dyn Policy>`.
pub trait Policy: Send + Sync + fmt::Debug {
    /// The policy's configured name (`linux`, `conservative-hard`, …).
    fn name(&self) -> &str;

    /// Whether an idle `thief` should look at `victim`. `thief_load` and `victim_load` are
    /// the two CPUs' queue lengths (or weighted loads; the same unit for both).
    fn victim(
        &self,
        topo: &Topology,
        thief: CpuId,
        victim: &Victim,
        thief_load: u64,
        victim_load: u64,
    ) -> VictimDecision;

    /// Whether `task` (on `task.cpu`) may move to `to`.
    fn eligibility(
        &self,
        topo: &Topology,
        task: &TaskMeta,
        to: CpuId,
        ctx: MoveContext,
    ) -> Eligibility;

    /// One periodic balancing pass for `cpu` at `view.now_us()`.
    fn balance(
        &self,
        view: &dyn MachineView,
        cpu: CpuId,
        state: &mut CpuBalanceState,
        rng: &mut Rng,
    ) -> BalanceOutcome;

    /// New-idle balancing for `cpu`, which has nothing to run.
    fn idle_balance(
        &self,
        view: &dyn MachineView,
        cpu: CpuId,
        state: &mut CpuBalanceState,
        rng: &mut Rng,
    ) -> BalanceOutcome;

    /// Where a new task, spawned from `parent`, should start.
    fn place(
        &self,
        view: &dyn MachineView,
        parent: CpuId,
        task: &TaskMeta,
        rng: &mut Rng,
    ) -> Placement;
}
