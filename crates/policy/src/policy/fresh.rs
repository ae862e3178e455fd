//! [`FreshSteal`]: steal-path decisions a policy can give once, in advance.
//!
//! A work-stealing runtime asks [`StealSide::victim`] and [`StealSide::eligibility`] on every
//! steal. For most (thief, victim) pairs the answer for a *fresh task at home* — the task a
//! deque is full of — follows from the topology alone, and two dynamic calls per steal of a
//! task that runs for a few nanoseconds cost more than the task. [`StealSide::static_fresh_steal`]
//! lets a policy hand that answer over once.
//!
//! # How the built-in policies derive it
//!
//! No rule is written twice: the answer is computed by calling the policy's own
//! [`victim`](StealSide::victim) (with zero loads) and [`eligibility`](StealSide::eligibility) (on
//! [`FreshSteal::task`], clock 0) — see [`derive_fresh_steal`]. What each policy contributes
//! is the *argument* that those calls do not depend on what was left out:
//!
//! - **Eligibility of a fresh task** (the shared move rules, `rules.rs`): pinned and
//!   running are fields of the task (false); the conservative filter reads the topology, the
//!   task's origin and CPU and its migration count; cache-hotness needs `last_ran_us`, which
//!   a task that never ran does not have. Nothing reads the clock, the failure count or a
//!   load. This holds for every policy built on `MoveRules`.
//! - **Victim decision**: `linux`, `thread-aware`, `numalb`, `average-weight` without the
//!   filter and `unrestricted` examine every victim. With the conservative filter a victim
//!   inside the zone is examined and one beyond a *hard* zone stops the walk, whatever the
//!   loads; beyond a *soft* zone the decision compares the loads, so the answer is `None`.
//! - `numalb` and `average-weight` answer `victim` and `eligibility` with their inner
//!   Linux balancer, so they answer this with it too.

use zonal_topology::{CpuId, Topology, Victim};

use crate::decision::{Eligibility, MoveContext, Refusal, VictimDecision};
use crate::policy::StealSide;
use crate::view::{TaskId, TaskMeta};

/// The steal-path answer for fresh tasks at home on one victim, known in advance
/// ([`StealSide::static_fresh_steal`]).
///
/// ```
/// # use zonal_policy::doc_facade as zonal;
/// use zonal::policy::{Eligibility, FreshSteal, Refusal, VictimDecision};
/// assert_eq!(FreshSteal::Allowed.fresh_eligibility(), Some(Eligibility::Allowed));
/// let stop = FreshSteal::Stop(Refusal::Zone);
/// assert_eq!(stop.victim_decision(), VictimDecision::Stop(Refusal::Zone));
/// assert_eq!(stop.fresh_eligibility(), None);
/// ```
#[must_use]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FreshSteal {
    /// The victim is examined, and a fresh task at home may be taken.
    Allowed,
    /// The victim is examined, but a fresh task at home is refused for this reason. Its
    /// other tasks (migrated, away from home) must still be asked about one by one.
    Refused(Refusal),
    /// The victim is skipped (`victim` answers `Skip`), with this reason.
    Skip(Refusal),
    /// The walk ends at this victim (`victim` answers `Stop`), with this reason.
    Stop(Refusal),
}

impl FreshSteal {
    /// What [`StealSide::victim`] answers for the pair, whatever the loads.
    #[inline]
    pub const fn victim_decision(self) -> VictimDecision {
        match self {
            FreshSteal::Allowed | FreshSteal::Refused(_) => VictimDecision::Examine,
            FreshSteal::Skip(r) => VictimDecision::Skip(r),
            FreshSteal::Stop(r) => VictimDecision::Stop(r),
        }
    }

    /// What [`StealSide::eligibility`] answers for [`FreshSteal::task`] moving to the thief,
    /// whatever the context; `None` when the victim is not examined at all.
    #[inline]
    #[must_use]
    pub const fn fresh_eligibility(self) -> Option<Eligibility> {
        match self {
            FreshSteal::Allowed => Some(Eligibility::Allowed),
            FreshSteal::Refused(r) => Some(Eligibility::Refused(r)),
            FreshSteal::Skip(_) | FreshSteal::Stop(_) => None,
        }
    }

    /// Whether a fresh task at home may be taken from the victim.
    #[inline]
    #[must_use]
    pub const fn is_allowed(self) -> bool {
        matches!(self, FreshSteal::Allowed)
    }

    /// The fresh task at home queued on `cpu` that the answer is about: origin = `cpu`'s
    /// node, no migration, never ran, nice 0, no group, migratable, not running.
    ///
    /// ```
    /// # use zonal_policy::doc_facade as zonal;
    /// use zonal::policy::FreshSteal;
    /// use zonal::topology::{presets, CpuId};
    /// let topo = presets::preset("s1")?;
    /// let t = FreshSteal::task(&topo, CpuId(5));
    /// assert_eq!((t.origin, t.cpu, t.migrations), (topo.node_of(CpuId(5)), CpuId(5), 0));
    /// # Ok::<(), zonal::topology::TopologyError>(())
    /// ```
    #[must_use]
    pub fn task(topo: &Topology, cpu: CpuId) -> TaskMeta {
        TaskMeta::new(TaskId(0), topo.node_of(cpu), cpu)
    }
}

/// The answer read off `policy`'s own `victim` (zero loads) and `eligibility` (on
/// [`FreshSteal::task`], clock 0, no failures). Only correct where the caller knows that
/// neither depends on what it leaves out (module docs).
pub(crate) fn derive_fresh_steal<P: StealSide + ?Sized>(
    policy: &P,
    topo: &Topology,
    thief: CpuId,
    victim: &Victim,
) -> FreshSteal {
    match policy.victim(topo, thief, victim, 0, 0) {
        VictimDecision::Examine => {
            let task = FreshSteal::task(topo, victim.cpu);
            match policy.eligibility(topo, &task, thief, MoveContext::steal(0)) {
                Eligibility::Allowed => FreshSteal::Allowed,
                Eligibility::Refused(r) => FreshSteal::Refused(r),
            }
        }
        VictimDecision::Skip(r) => FreshSteal::Skip(r),
        VictimDecision::Stop(r) => FreshSteal::Stop(r),
    }
}
