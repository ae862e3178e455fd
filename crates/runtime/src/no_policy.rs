//! [`NoPolicy`]: steal anything from anyone, nearest first (plain work stealing, as rayon).

use zonal_policy::{
    BalanceOutcome, CpuBalanceState, Eligibility, FreshSteal, MachineView, MoveContext, Placement,
    Policy, Rng, TaskMeta, VictimDecision,
};
use zonal_topology::{CpuId, Level, Topology, Victim};

/// No balancing rule at all: every victim is examined and every move allowed. This is the
/// runtime without a policy (what [`ThreadPoolBuilder::no_policy`](crate::ThreadPoolBuilder::no_policy)
/// selects), useful as a baseline and in tests; the real rules live in `zonal-policy`.
///
/// ```
/// use zonal_policy::Policy;
/// assert_eq!(zonal_runtime::NoPolicy.name(), "none");
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct NoPolicy;

impl Policy for NoPolicy {
    fn name(&self) -> &str {
        "none"
    }

    fn victim(&self, _: &Topology, _: CpuId, _: &Victim, _: u64, _: u64) -> VictimDecision {
        VictimDecision::Examine
    }

    fn eligibility(&self, _: &Topology, _: &TaskMeta, _: CpuId, _: MoveContext) -> Eligibility {
        Eligibility::Allowed
    }

    fn static_fresh_steal(&self, _: &Topology, _: CpuId, _: &Victim) -> Option<FreshSteal> {
        Some(FreshSteal::Allowed)
    }

    fn balance(
        &self,
        _: &dyn MachineView,
        _: CpuId,
        _: &mut CpuBalanceState,
        _: &mut Rng,
    ) -> BalanceOutcome {
        BalanceOutcome::default()
    }

    fn idle_balance(
        &self,
        _: &dyn MachineView,
        _: CpuId,
        _: &mut CpuBalanceState,
        _: &mut Rng,
    ) -> BalanceOutcome {
        BalanceOutcome::default()
    }

    fn place(&self, _: &dyn MachineView, parent: CpuId, _: &TaskMeta, _: &mut Rng) -> Placement {
        Placement {
            cpu: parent,
            level: Level::LOCAL,
        }
    }
}
