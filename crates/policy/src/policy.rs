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
//! - **Decisions known in advance** ([`Policy::static_fresh_steal`]): for a (thief, victim)
//!   pair whose steal-path answer for *fresh tasks at home* depends on the two CPUs alone, a
//!   policy may say so once, and a caller may cache the answer instead of asking
//!   [`Policy::victim`] and [`Policy::eligibility`] on every steal (see [`FreshSteal`]).
//!
//! Policies are deterministic: the same view, state and RNG seed give the same decisions.

use std::fmt;

use zonal_topology::{CpuId, Topology, Victim};

use crate::decision::{BalanceOutcome, Eligibility, MoveContext, Placement, VictimDecision};
use crate::rng::Rng;
use crate::state::CpuBalanceState;
use crate::view::{MachineView, TaskMeta};

mod fresh;

pub use fresh::FreshSteal;
pub(crate) use fresh::{derive_fresh_steal, fresh_steal_of_balancer};

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
    ///
    /// The default does nothing: a steal-only policy (plain work stealing) need not balance.
    fn balance(
        &self,
        view: &dyn MachineView,
        cpu: CpuId,
        state: &mut CpuBalanceState,
        rng: &mut Rng,
    ) -> BalanceOutcome {
        let _ = (view, cpu, state, rng);
        BalanceOutcome::default()
    }

    /// New-idle balancing for `cpu`, which has nothing to run.
    ///
    /// The default does nothing (a steal-only policy's idle CPUs steal instead).
    fn idle_balance(
        &self,
        view: &dyn MachineView,
        cpu: CpuId,
        state: &mut CpuBalanceState,
        rng: &mut Rng,
    ) -> BalanceOutcome {
        let _ = (view, cpu, state, rng);
        BalanceOutcome::default()
    }

    /// Where a new task, spawned from `parent`, should start.
    ///
    /// The default starts it on the parent's CPU, as a work-stealing pool pushes a spawned
    /// task onto the spawning worker's own deque.
    fn place(
        &self,
        view: &dyn MachineView,
        parent: CpuId,
        task: &TaskMeta,
        rng: &mut Rng,
    ) -> Placement {
        let _ = (view, task, rng);
        Placement {
            cpu: parent,
            level: zonal_topology::Level::LOCAL,
        }
    }

    /// The steal-path answer for *fresh tasks at home* on `victim.cpu`, taken by `thief`,
    /// when it depends on the two CPUs alone — no load, no clock, no failure count — so that
    /// a caller may decide once (when it builds its victim order) and cache it.
    ///
    /// A *fresh task at home* is [`FreshSteal::task`]: queued on `victim.cpu`, its origin is
    /// that CPU's node, it never migrated and never ran, it has the default weight
    /// ([`NICE_0_WEIGHT`](crate::NICE_0_WEIGHT)), no group, no message counts, it is
    /// migratable and not running. Its id is irrelevant.
    ///
    /// `Some(answer)` promises, for every `thief_load`, `victim_load` and [`MoveContext`]:
    /// - `self.victim(topo, thief, victim, ..)` equals [`answer.victim_decision()`](FreshSteal::victim_decision);
    /// - when that is `Examine`, `self.eligibility(topo, &FreshSteal::task(topo, victim.cpu),
    ///   thief, ctx)` equals [`answer.fresh_eligibility()`](FreshSteal::fresh_eligibility).
    ///
    /// `None` (the default) promises nothing: ask every time. A caller that caches the
    /// answer must still ask [`eligibility`](Policy::eligibility) for every task that is not
    /// fresh at home (migrated, away from its origin, another weight or group, …), and ask
    /// [`victim`](Policy::victim) for pairs answered `None`. The property test
    /// `tests/static_steal.rs` checks the promise for every built-in policy.
    ///
    /// ```
    /// use zonal_policy::{FreshSteal, PolicyConfig, Refusal};
    /// use zonal_topology::{presets, CpuId};
    /// let topo = presets::preset("s1")?;
    /// let p = PolicyConfig::named("conservative-hard")?.build()?;
    /// let vs = topo.victims(CpuId(0));
    /// // The nearest victim (same node) may always give up a fresh task…
    /// assert_eq!(p.static_fresh_steal(&topo, CpuId(0), &vs[0]), Some(FreshSteal::Allowed));
    /// // …and the farthest lies beyond the hard zone: the walk stops there.
    /// let last = vs.last().unwrap();
    /// assert_eq!(
    ///     p.static_fresh_steal(&topo, CpuId(0), last),
    ///     Some(FreshSteal::Stop(Refusal::Zone))
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn static_fresh_steal(
        &self,
        topo: &Topology,
        thief: CpuId,
        victim: &Victim,
    ) -> Option<FreshSteal> {
        let _ = (topo, thief, victim);
        None
    }
}
