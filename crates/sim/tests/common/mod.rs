//! A tiny reference policy for the simulator's tests, independent of zonal-policy's
//! implementations: greedy, optionally limited to the zone.
#![allow(dead_code, unreachable_pub)]

use zonal_policy::{
    Attempt, AttemptOutcome, BalanceOutcome, BalanceSide, CpuPass, Eligibility, MachineView,
    Migration, MoveContext, Placement, Policy, Refusal, Rng, StealSide, TaskMeta, VictimDecision,
};
use zonal_topology::{CpuId, Topology, Victim};

/// Places on the least loaded CPU (lowest index on ties); balances by pulling the tail
/// queued task of the most loaded CPU when it has at least two more tasks (periodic) or any
/// queued task (new-idle).
#[derive(Debug, Default)]
pub struct Greedy {
    /// Only look inside the zone.
    pub zone_only: bool,
}

impl Greedy {
    fn pull(&self, view: &dyn MachineView, cpu: CpuId, min_gap: u32) -> BalanceOutcome {
        let topo = view.topology();
        let mine = view.cpu_load(cpu).nr_running;
        let mut best: Option<(u32, CpuId)> = None;
        let mut scanned = 0;
        for c in 0..topo.cpu_count() {
            let c = CpuId::new(c);
            if c == cpu || (self.zone_only && !topo.in_zone(cpu, topo.node_of(c))) {
                continue;
            }
            scanned += 1;
            let n = view.cpu_load(c).nr_running;
            if best.is_none_or(|(b, _)| n > b) {
                best = Some((n, c));
            }
        }
        let mut out = BalanceOutcome::default();
        let Some((n, busiest)) = best else { return out };
        let level = topo.level_between(cpu, busiest);
        let mut attempt = Attempt {
            cpu,
            level,
            cpus_scanned: scanned,
            outcome: AttemptOutcome::Balanced,
            moved: 0,
        };
        if n >= mine + min_gap && n >= 2 {
            match view.tasks(busiest).iter().rev().find(|t| !t.running) {
                Some(t) => {
                    out.migrations.push(Migration {
                        task: t.id,
                        from: busiest,
                        to: cpu,
                        level,
                    });
                    attempt.outcome = AttemptOutcome::Moved;
                    attempt.moved = 1;
                }
                None => {
                    out.refused.add(Refusal::Running);
                    attempt.outcome = AttemptOutcome::NothingToMove;
                }
            }
        }
        out.attempts.push(attempt);
        out
    }
}

impl Policy for Greedy {
    fn name(&self) -> &str {
        "greedy-test"
    }

    fn steal_side(&self) -> &dyn StealSide {
        self
    }

    fn balance_side(&self) -> Option<&dyn BalanceSide> {
        Some(self)
    }
}

impl StealSide for Greedy {
    fn victim(
        &self,
        _: &Topology,
        _: CpuId,
        _: &Victim,
        thief: u64,
        victim: u64,
    ) -> VictimDecision {
        if victim > thief + 1 {
            VictimDecision::Examine
        } else {
            VictimDecision::Skip(Refusal::BelowThreshold)
        }
    }

    fn eligibility(&self, _: &Topology, task: &TaskMeta, _: CpuId, _: MoveContext) -> Eligibility {
        if task.running {
            Eligibility::Refused(Refusal::Running)
        } else {
            Eligibility::Allowed
        }
    }
}

impl BalanceSide for Greedy {
    fn balance(&self, pass: CpuPass<'_>) -> BalanceOutcome {
        let now = pass.view.now_us();
        let l = &mut pass.state.levels[0];
        if now < l.next_due_us {
            return BalanceOutcome::default();
        }
        l.next_due_us = now + 8_000;
        self.pull(pass.view, pass.cpu(), 2)
    }

    fn idle_balance(&self, pass: CpuPass<'_>) -> BalanceOutcome {
        self.pull(pass.view, pass.cpu(), 2)
    }

    fn place(&self, view: &dyn MachineView, parent: CpuId, _: &TaskMeta, _: &mut Rng) -> Placement {
        let topo = view.topology();
        let cpu = (0..topo.cpu_count())
            .map(CpuId::new)
            .min_by_key(|&c| (view.cpu_load(c).nr_running, c))
            .unwrap_or(parent);
        Placement {
            cpu,
            level: topo.level_between(parent, cpu),
        }
    }
}

/// A policy by name from zonal-policy, if it is implemented yet.
pub fn real(name: &str) -> Option<std::sync::Arc<dyn Policy>> {
    zonal_policy::PolicyConfig::named(name).ok()?.build().ok()
}

/// Every catalogue policy that has a balance side (a steal-only policy does not balance
/// processes: its stealing is simulated by the work-stealing mode), with its name.
pub fn balancing_policies(
) -> impl Iterator<Item = (zonal_policy::PolicyName, std::sync::Arc<dyn Policy>)> {
    zonal_policy::PolicyName::all()
        .filter_map(|n| real(n.as_str()).map(|p| (n, p)))
        .filter(|(_, p)| p.balance_side().is_some())
}
