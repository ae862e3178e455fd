//! Delegation to an inner [`Balancer`](super::Balancer) for policies that replace only
//! Linux's periodic pass.
//!
//! `numalb` and `average-weight` bring their own periodic selection; their steal side
//! (`victim`, `eligibility`, `ageing`, `static_fresh_steal`) *is* the inner balancer's
//! ([`Policy::steal_side`](crate::Policy::steal_side) hands it out), and so are their
//! new-idle balancing, fork placement and wake-up placement, conservative filter included. The two macros write
//! that once, for any type with `name: String` and `inner: Balancer` fields.

/// Expands to `impl Policy for $t`: its name, the inner balancer as its steal side, and
/// itself as its balance side.
macro_rules! policy_over_inner_balancer {
    ($t:ty) => {
        impl $crate::Policy for $t {
            fn name(&self) -> &str {
                &self.name
            }

            fn steal_side(&self) -> &dyn $crate::StealSide {
                &self.inner.rules
            }

            fn balance_side(&self) -> Option<&dyn $crate::BalanceSide> {
                Some(self)
            }
        }
    };
}

/// Expands, inside an `impl BalanceSide for T` block, to `idle_balance`, `place`,
/// `select_wake` and `new_state`, delegating to `self.inner`; the type writes `balance` itself.
macro_rules! inner_idle_and_place {
    () => {
        fn idle_balance(&self, pass: $crate::CpuPass<'_>) -> $crate::BalanceOutcome {
            self.inner.new_idle(pass.view, pass.state)
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

        fn select_wake(
            &self,
            view: &dyn $crate::MachineView,
            task: &$crate::TaskMeta,
            prev: ::zonal_topology::CpuId,
            waker: ::zonal_topology::CpuId,
            _rng: &mut $crate::Rng,
        ) -> ::zonal_topology::CpuId {
            self.inner.wake(view, task, prev, waker)
        }

        fn new_state(
            &self,
            topo: &::zonal_topology::Topology,
            cpu: ::zonal_topology::CpuId,
        ) -> $crate::CpuBalanceState {
            self.inner.params.new_state(topo, cpu)
        }
    };
}

pub(crate) use {inner_idle_and_place, policy_over_inner_balancer};
