//! The interface every balancing policy implements, split by what drives it.
//!
//! A policy is a name and up to two *sides*:
//!
//! - the **steal side** ([`StealSide`]), asked by an idle worker that looks for work: the
//!   victim decision, per-task eligibility with a typed refusal reason, and the ageing rule.
//!   Every policy has one. Drivers do not walk victims themselves: the
//!   `StealWalker` (`walker.rs`, the layer above) runs the steal side for a thief, in the runtime's
//!   workers and in the simulator's work-stealing mode alike;
//! - the **balance side** ([`BalanceSide`]), asked by a balancer that looks at the whole
//!   machine: the periodic pass over a load snapshot that returns migrations, new-idle
//!   balancing, and placement at spawn and at wake-up. Steal-only policies have none
//!   ([`Policy::balance_side`] is `None`).
//!
//! # How a decision is asked for
//!
//! - **Steal path** (runtime workers, the simulator's work-stealing mode): the thief walks
//!   its [`Topology::victims`] order and asks [`StealSide::victim`] for each victim
//!   (`Examine`, `Skip(reason)` or `Stop(reason)`: past the hard zone nothing farther can be
//!   taken, so the walk ends). For each candidate task it asks [`StealSide::eligibility`]. Both
//!   read only the topology, the task's metadata and two loads: they are the hot path and
//!   must not allocate.
//! - **Periodic pass** ([`BalanceSide::balance`]): called for one CPU at the caller's tick; the
//!   policy decides which levels are due (from [`CpuBalanceState`]), finds the busiest group
//!   and CPU, filters tasks, and returns the migrations plus one [`Attempt`](crate::Attempt)
//!   per level examined. Its interval back-off is [`LevelState::record`](crate::LevelState::record),
//!   shared by every policy.
//! - **New-idle pass** ([`BalanceSide::idle_balance`]): a CPU about to idle pulls, bottom-up,
//!   ignoring intervals, and stops at the first level that yields a task.
//! - **Placement** ([`BalanceSide::place`]): fork/exec balancing of a new task.
//! - **Wake-up** ([`BalanceSide::select_wake`]): where a task that blocked (I/O, a lock)
//!   is queued when it becomes runnable again, from its previous CPU and the waker's.
//! - **Ageing** ([`StealSide::ageing`]): the one [`Ageing`] rule of the policy, which the
//!   runtime and simulator ask instead of guessing from refusals.
//! - **Decisions known in advance** ([`StealSide::static_fresh_steal`]): for a (thief, victim)
//!   pair whose steal-path answer for *fresh tasks at home* depends on the two CPUs alone, a
//!   policy may say so once, and a caller may cache the answer instead of asking
//!   [`StealSide::victim`] and [`StealSide::eligibility`] on every steal (see [`FreshSteal`]).
//!
//! Policies are deterministic: the same view, state and RNG seed give the same decisions.

use std::fmt;

use zonal_topology::{CpuId, Topology, Victim};

use crate::ageing::Ageing;
use crate::decision::{BalanceOutcome, Eligibility, MoveContext, Placement, VictimDecision};
use crate::rng::Rng;
use crate::state::CpuBalanceState;
use crate::view::{MachineView, TaskMeta};

mod fresh;

pub(crate) use fresh::derive_fresh_steal;
pub use fresh::FreshSteal;

/// A balancing policy: a name and the sides it has. Object-safe: the runtime and simulator
/// hold `Arc<dyn Policy>`.
///
/// ```
/// # use zonal_policy::doc_facade as zonal;
/// use zonal::policy::{PolicyConfig, Sides};
/// let p = PolicyConfig::named("conservative-hard")?.build()?;
/// assert_eq!(p.name(), "conservative-hard");
/// assert_eq!(p.sides(), Sides::BOTH);
/// assert!(p.balance_side().is_some());
/// # Ok::<(), zonal::policy::PolicyError>(())
/// ```
pub trait Policy: Send + Sync + fmt::Debug {
    /// The policy's configured name (`linux`, `conservative-hard`, …).
    fn name(&self) -> &str;

    /// The steal side: what an idle worker may take, and from whom.
    fn steal_side(&self) -> &dyn StealSide;

    /// The balance side, if the policy balances at all (`None` for steal-only policies).
    fn balance_side(&self) -> Option<&dyn BalanceSide> {
        None
    }

    /// Which sides the policy has.
    fn sides(&self) -> Sides {
        if self.balance_side().is_some() {
            Sides::BOTH
        } else {
            Sides::STEAL
        }
    }
}

/// Which sides a policy has (catalogue rows and [`Policy::sides`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Sides {
    /// It answers steal-path questions (every policy does).
    pub steal: bool,
    /// It balances periodically, at new-idle time, and places new tasks.
    pub balance: bool,
}

impl Sides {
    /// A steal-only policy.
    pub const STEAL: Sides = Sides {
        steal: true,
        balance: false,
    };
    /// A policy with both sides.
    pub const BOTH: Sides = Sides {
        steal: true,
        balance: true,
    };
}

impl fmt::Display for Sides {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.balance {
            "steal + balance"
        } else {
            "steal"
        })
    }
}

/// The steal side of a policy: the hot path of a work-stealing pool. Every answer reads only
/// the topology, the task's metadata and two loads; none allocates.
pub trait StealSide: Send + Sync + fmt::Debug {
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

    /// The policy's ageing rule. [`StealSide::eligibility`] refuses every move of an aged
    /// task with [`Refusal::Aged`](crate::Refusal::Aged) (the laws check it); drivers ask
    /// this to keep aged tasks out of stealable queues. The default never ages.
    fn ageing(&self) -> Ageing {
        Ageing::Never
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
    /// answer must still ask [`eligibility`](StealSide::eligibility) for every task that is not
    /// fresh at home (migrated, away from its origin, another weight or group, …), and ask
    /// [`victim`](StealSide::victim) for pairs answered `None`. The property test
    /// `tests/static_steal.rs` checks the promise for every built-in policy.
    ///
    /// ```
    /// # use zonal_policy::doc_facade as zonal;
    /// use zonal::policy::{FreshSteal, PolicyConfig, Refusal};
    /// use zonal::topology::{presets, CpuId};
    /// let topo = presets::preset("s1")?;
    /// let p = PolicyConfig::named("conservative-hard")?.build()?;
    /// let vs = topo.victims(CpuId(0));
    /// // The nearest victim (same node) may always give up a fresh task…
    /// assert_eq!(p.steal_side().static_fresh_steal(&topo, CpuId(0), &vs[0]), Some(FreshSteal::Allowed));
    /// // …and the farthest lies beyond the hard zone: the walk stops there.
    /// let last = vs.last().unwrap();
    /// assert_eq!(
    ///     p.steal_side().static_fresh_steal(&topo, CpuId(0), last),
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

/// One CPU's balance-side call: the machine as the driver sees it, the balancing state of
/// the CPU that balances (its [`CpuBalanceState::cpu`]), and the driver's random stream.
pub struct CpuPass<'a> {
    /// The machine.
    pub view: &'a dyn MachineView,
    /// The balancing CPU's state (intervals, failures), updated by the pass.
    pub state: &'a mut CpuBalanceState,
    /// The driver's random stream (seeded: the same seed, the same decisions).
    pub rng: &'a mut Rng,
}

impl<'a> CpuPass<'a> {
    /// A pass of `state.cpu` over `view`.
    pub fn new(
        view: &'a dyn MachineView,
        state: &'a mut CpuBalanceState,
        rng: &'a mut Rng,
    ) -> Self {
        Self { view, state, rng }
    }

    /// The CPU that balances.
    #[inline]
    #[must_use]
    pub fn cpu(&self) -> CpuId {
        self.state.cpu
    }
}

impl fmt::Debug for CpuPass<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CpuPass")
            .field("cpu", &self.state.cpu)
            .field("now_us", &self.view.now_us())
            .finish_non_exhaustive()
    }
}

/// The balance side of a policy: decisions over the whole machine's load, at the driver's
/// tick (the simulator's, or the runtime's control plane).
pub trait BalanceSide: Send + Sync + fmt::Debug {
    /// One periodic balancing pass for `pass.cpu()` at `pass.view.now_us()`.
    fn balance(&self, pass: CpuPass<'_>) -> BalanceOutcome;

    /// New-idle balancing for `pass.cpu()`, which has nothing to run.
    fn idle_balance(&self, pass: CpuPass<'_>) -> BalanceOutcome;

    /// Where a new task, spawned from `parent`, should start.
    fn place(
        &self,
        view: &dyn MachineView,
        parent: CpuId,
        task: &TaskMeta,
        rng: &mut Rng,
    ) -> Placement;

    /// Where a task that wakes up should be queued (Linux's `select_task_rq` at
    /// `try_to_wake_up`, which takes the task and its wake context: here one [`WakeUp`]).
    /// `wake.task` is the waking task, whose `task.cpu` is `wake.prev`, the CPU it last ran
    /// on; `wake.waker` is the CPU that wakes it (the CPU completing its I/O, or the thread
    /// that signals it; `prev` itself when the caller has no better answer). The answer is a
    /// CPU of `view`'s topology; a driver that moves the task to another node counts that as
    /// a migration.
    ///
    /// The default is [`wake_near_prev`]: `prev` if idle, else the first idle CPU of
    /// `prev`'s node, else `prev`. The Linux-family policies answer with the era's wake-up
    /// logic (module `policies::linux::wake`), which the conservative filter restricts.
    ///
    /// ```
    /// # use zonal_policy::doc_facade as zonal;
    /// use zonal::policy::{PolicyConfig, Rng, SnapshotView, TaskId, TaskMeta, WakeUp};
    /// use zonal::topology::{presets, CpuId};
    /// let topo = presets::preset("s1")?;
    /// let view = SnapshotView::new(topo.clone());
    /// let task = TaskMeta::new(TaskId(1), topo.node_of(CpuId(0)), CpuId(0));
    /// let p = PolicyConfig::named("conservative-hard")?.build()?;
    /// let b = p.balance_side().expect("balances");
    /// // An idle machine: the task wakes where it last ran.
    /// let wake = WakeUp { task: &task, prev: CpuId(0), waker: CpuId(0) };
    /// assert_eq!(b.select_wake(&view, wake, &mut Rng::new(1)), CpuId(0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn select_wake(&self, view: &dyn MachineView, wake: WakeUp<'_>, rng: &mut Rng) -> CpuId {
        let _ = rng;
        wake_near_prev(view, wake.task, wake.prev)
    }

    /// The balancing state `cpu` starts with: its per-level intervals and busy factor.
    /// Defaults to Linux's modern values ([`CpuBalanceState::new`]); a policy with other
    /// intervals (the Linux baseline's 2.6 era) returns its own. Drivers create each CPU's
    /// state with it.
    fn new_state(&self, topo: &Topology, cpu: CpuId) -> CpuBalanceState {
        CpuBalanceState::new(topo, cpu)
    }
}

/// A task waking up and its wake context: the argument of [`BalanceSide::select_wake`], as
/// Linux's `select_task_rq` takes the task and where it wakes from.
#[derive(Clone, Copy, Debug)]
pub struct WakeUp<'a> {
    /// The waking task (on no queue).
    pub task: &'a TaskMeta,
    /// The CPU it last ran on (`task.cpu`).
    pub prev: CpuId,
    /// The CPU that wakes it (`prev` when the caller has no better answer).
    pub waker: CpuId,
}

/// The default wake-up placement ([`BalanceSide::select_wake`]), also what a driver uses for
/// a policy without a balance side: `prev` if it is idle, else the first idle CPU of
/// `prev`'s node (in the topology's order), else `prev`. A pinned task
/// (`!task.migratable`) and a `prev` outside the view's topology get `prev`.
///
/// This is Linux's `select_idle_sibling` within the last-level cache, which the presets put
/// at the node, with the waker taken to be `prev`.
///
/// ```
/// # use zonal_policy::doc_facade as zonal;
/// use zonal::policy::{wake_near_prev, SnapshotView, TaskId, TaskMeta};
/// use zonal::topology::{presets, CpuId};
/// let topo = presets::preset("s1")?;
/// let mut view = SnapshotView::new(topo.clone());
/// let node = topo.node_of(CpuId(0));
/// view.push_task(TaskMeta::new(TaskId(1), node, CpuId(0)));
/// let sibling = topo.cpus_of(node).iter().copied().find(|&c| c != CpuId(0)).unwrap();
/// let waking = TaskMeta::new(TaskId(2), node, CpuId(0));
/// assert_eq!(wake_near_prev(&view, &waking, CpuId(0)), sibling);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[must_use]
pub fn wake_near_prev(view: &dyn MachineView, task: &TaskMeta, prev: CpuId) -> CpuId {
    let topo = view.topology();
    if !task.migratable || prev.index() >= topo.cpu_count() || cpu_idle(view, prev) {
        return prev;
    }
    topo.cpus_of(topo.node_of(prev))
        .iter()
        .copied()
        .find(|&c| cpu_idle(view, c))
        .unwrap_or(prev)
}

/// Whether `cpu` runs nothing and has nothing queued.
fn cpu_idle(view: &dyn MachineView, cpu: CpuId) -> bool {
    let l = view.cpu_load(cpu);
    l.idle || l.nr_running == 0
}
