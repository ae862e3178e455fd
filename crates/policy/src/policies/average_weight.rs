//! `average-weight`: Sharma & Agrawal's threshold balancing on CFS weights.
//!
//! # The pass
//!
//! - **Threshold.** `threshold = Σ weighted_load / CPUs` over the whole machine (weights are
//!   CFS's `1024 / 1.25^nice`, [`nice_to_weight`](crate::nice_to_weight)).
//! - A CPU at or below the threshold does nothing (one `Balanced` attempt).
//! - A CPU above it **sheds**: its tasks, tail first (at most `nr_migrate` examined, each
//!   passing the move rules), go to the CPUs below the threshold, nearest first (its victim
//!   order). A receiver takes tasks while it is below the threshold; the source sheds while it
//!   is above it, and never so far that it ends lighter than the receiver was
//!   (`src − w ≥ recv`), which stops ping-pong between two CPUs.
//! - With the conservative filter composed, a receiver that would not examine this CPU as a
//!   victim (beyond a hard zone, or not loaded enough under a soft one) is passed over.
//! - The pass runs at the interval of the CPU's top level, without the busy factor (a CPU
//!   that sheds is busy by definition). One [`Attempt`](crate::Attempt) at the top level is
//!   recorded; the other levels get `next_due_us = NEVER_DUE_US` (unused).
//!
//! New-idle balancing and placement are Linux's, through the same move rules.

use std::sync::Arc;

use zonal_topology::{CpuId, Topology, Victim};

use crate::config::{Fields, PolicyConfig};
use crate::decision::{AttemptOutcome, BalanceOutcome, Migration, MoveContext, VictimDecision};
use crate::policies::linux::{
    Balancer, Centralised, MachinePass, WholeMachine, FILTER_ACCEPTS, NR_MIGRATE_MAX, WALK_ACCEPTS,
};
use crate::policy::Policy;
use crate::rules::MoveRules;
use crate::view::MachineView;

/// What `average-weight` takes: the walk's parameters (the walk keeps new-idle balancing
/// and fork placement, of either era, and their imbalance threshold) and the composed
/// filter's (`origin` and `age_limit` only with `conservative_filters = true`). Its pass has
/// no parameter of its own.
pub(crate) const ACCEPTS: Fields = WALK_ACCEPTS.union(FILTER_ACCEPTS);

/// `average-weight` (catalogue constructor): the threshold pass over Linux's steal side,
/// new-idle balancing and placement, behind the hard conservative filter when
/// `conservative_filters = true`.
pub(crate) fn build(cfg: &PolicyConfig) -> Arc<dyn Policy> {
    Arc::new(Balancer::from_config(
        cfg,
        cfg.composed_filter(),
        Centralised(AverageWeight),
    ))
}

/// Average-weight's periodic pass, a [`WholeMachine`] pass of the Linux walk: the walk keeps
/// the steal side, new-idle balancing and placement (Linux's tail-first order).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct AverageWeight;

impl AverageWeight {
    /// Sheds `cpu`'s excess (module docs); returns (moved, any refused).
    fn shed(
        &self,
        rules: &MoveRules,
        view: &dyn MachineView,
        cpu: CpuId,
        ctx: MoveContext,
        out: &mut BalanceOutcome,
    ) -> (AttemptOutcome, u32) {
        let topo = view.topology();
        let ncpu = topo.cpu_count() as u64;
        let total: u64 = (0..topo.cpu_count())
            .map(|c| view.cpu_load(CpuId::new(c)).weighted_load)
            .sum();
        // Compare in units of 1/ncpu to stay in integers: x > total/ncpu ⇔ x·ncpu > total.
        let mut src = view.cpu_load(cpu).weighted_load;
        if src * ncpu <= total {
            return (AttemptOutcome::Balanced, 0);
        }
        let tasks = view.tasks(cpu);
        let victims = topo.victims(cpu);
        let mut recv_idx = 0usize;
        let mut recv_load = None::<u64>;
        let (mut moved, mut refused) = (0u32, false);
        let loop_max = NR_MIGRATE_MAX.min(tasks.len());
        for t in tasks.iter().rev().take(loop_max) {
            if src * ncpu <= total {
                break;
            }
            // The next receiver below the threshold, nearest first.
            let to = loop {
                let Some(v) = victims.get(recv_idx) else {
                    break None;
                };
                let load = *recv_load.get_or_insert_with(|| view.cpu_load(v.cpu).weighted_load);
                if load * ncpu < total && self.receiver_examines(rules, topo, cpu, v.cpu, load, src)
                {
                    break Some((v.cpu, load));
                }
                recv_idx += 1;
                recv_load = None;
            };
            let Some((to, load)) = to else { break };
            let w = u64::from(t.weight);
            if src.saturating_sub(w) < load {
                out.refused.add(crate::Refusal::TooHeavy);
                refused = true;
                continue;
            }
            if let Err(r) = rules.check(topo, t, to, ctx) {
                out.refused.add(r);
                refused = true;
                continue;
            }
            out.migrations.push(Migration {
                task: t.id,
                from: cpu,
                to,
                level: topo.level_between(cpu, to),
            });
            moved += 1;
            src -= w;
            recv_load = Some(load + w);
        }
        let outcome = if moved > 0 {
            AttemptOutcome::Moved
        } else if refused {
            AttemptOutcome::AllRefused
        } else {
            AttemptOutcome::NothingToMove
        };
        (outcome, moved)
    }

    /// Whether `receiver`, as a thief, would examine `source` under the composed filter.
    fn receiver_examines(
        &self,
        rules: &MoveRules,
        topo: &Topology,
        source: CpuId,
        receiver: CpuId,
        receiver_load: u64,
        source_load: u64,
    ) -> bool {
        let Some(f) = &rules.filter else {
            return true;
        };
        let v = Victim {
            cpu: source,
            level: topo.level_between(receiver, source),
            tier: zonal_topology::Tier::Remote,
        };
        matches!(
            f.victim(topo, &v, receiver_load, source_load),
            VictimDecision::Examine
        )
    }
}

impl WholeMachine for AverageWeight {
    fn pass(&self, p: &MachinePass<'_>, out: &mut BalanceOutcome) -> (AttemptOutcome, u32) {
        self.shed(p.rules, p.view, p.cpu, p.ctx, out)
    }
}

#[cfg(test)]
mod test;
