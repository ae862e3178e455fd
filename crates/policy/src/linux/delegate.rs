//! Delegation of everything but the periodic pass to an inner [`Balancer`](super::Balancer).
//!
//! `numalb` and `average-weight` replace only Linux's periodic pass with their own
//! selection; their steal path (`victim`, `eligibility`, `static_fresh_steal`), new-idle
//! balancing and fork placement are the inner balancer's, conservative filter included.
//! The macro writes those six trait methods once, for any type with `name: String` and
//! `inner: Balancer` fields; the type writes `balance` itself.

/// Expands, inside an `impl Policy for T` block, to `name`, `victim`, `eligibility`,
/// `static_fresh_steal`, `idle_balance` and `place`, delegating to `self.inner`.
macro_rules! delegate_to_inner_balancer {
    () => {
        fn name(&self) -> &str {
            &self.name
        }

        #[inline]
        fn victim(
            &self,
            topo: &::zonal_topology::Topology,
            thief: ::zonal_topology::CpuId,
            victim: &::zonal_topology::Victim,
            thief_load: u64,
            victim_load: u64,
        ) -> $crate::VictimDecision {
            self.inner
                .victim(topo, thief, victim, thief_load, victim_load)
        }

        #[inline]
        fn eligibility(
            &self,
            topo: &::zonal_topology::Topology,
            task: &$crate::TaskMeta,
            to: ::zonal_topology::CpuId,
            ctx: $crate::MoveContext,
        ) -> $crate::Eligibility {
            self.inner.eligibility(topo, task, to, ctx)
        }

        /// `victim` and `eligibility` are the inner balancer's, so is this.
        fn static_fresh_steal(
            &self,
            topo: &::zonal_topology::Topology,
            thief: ::zonal_topology::CpuId,
            victim: &::zonal_topology::Victim,
        ) -> Option<$crate::FreshSteal> {
            self.inner.static_fresh_steal(topo, thief, victim)
        }

        fn idle_balance(
            &self,
            view: &dyn $crate::MachineView,
            cpu: ::zonal_topology::CpuId,
            state: &mut $crate::CpuBalanceState,
            _rng: &mut $crate::Rng,
        ) -> $crate::BalanceOutcome {
            self.inner.new_idle(view, cpu, state)
        }

        fn place(
            &self,
            view: &dyn $crate::MachineView,
            parent: ::zonal_topology::CpuId,
            _task: &$crate::TaskMeta,
            _rng: &mut $crate::Rng,
        ) -> $crate::Placement {
            self.inner.placement(view, parent)
        }
    };
}

pub(crate) use delegate_to_inner_balancer;
