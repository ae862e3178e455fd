//! [`NoPolicy`]: no balancing rule at all — every victim examined, every move allowed, and
//! no balance side (no periodic or new-idle pass; drivers place new tasks on the parent). Plain nearest-first work
//! stealing, as rayon does, and the engine-only baseline of the simulator's benches.

use zonal_topology::{CpuId, Topology, Victim};

use crate::decision::{Eligibility, MoveContext, VictimDecision};
use crate::policy::{FreshSteal, Policy, StealSide};
use crate::view::TaskMeta;

/// No balancing rule at all: every victim is examined and every move allowed; a steal-only
/// policy (no balance side). Useful as a baseline and in tests; the real rules are the named policies.
///
/// ```
/// # use zonal_policy::doc_facade as zonal;
/// use zonal::policy::{NoPolicy, Policy};
/// assert_eq!(NoPolicy.name(), "none");
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct NoPolicy;

impl Policy for NoPolicy {
    fn name(&self) -> &str {
        "none"
    }

    fn steal_side(&self) -> &dyn StealSide {
        self
    }
}

impl StealSide for NoPolicy {
    fn victim(&self, _: &Topology, _: CpuId, _: &Victim, _: u64, _: u64) -> VictimDecision {
        VictimDecision::Examine
    }

    fn eligibility(&self, _: &Topology, _: &TaskMeta, _: CpuId, _: MoveContext) -> Eligibility {
        Eligibility::Allowed
    }

    fn static_fresh_steal(&self, _: &Topology, _: CpuId, _: &Victim) -> Option<FreshSteal> {
        Some(FreshSteal::Allowed)
    }
}
