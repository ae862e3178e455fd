//! `numalb`: Pilla et al.'s Charm++ NUMALB, a greedy list scheduler with a NUMA cost.
//!
//! # The pass
//!
//! NUMALB is centralised: one balancer assigns every task of the machine. In Zonal's per-CPU
//! protocol the pass of the *root* CPU (the machine's first CPU, `CpuId(0)`) does it, at the
//! interval of its top level ([`LevelState`](crate::LevelState)); every other CPU's periodic
//! pass returns nothing. Levels the pass does not use get `next_due_us = NEVER_DUE_US` (all of
//! them on non-root CPUs), so a caller that sleeps until the earliest due level wakes only
//! the root, at the top level's interval.
//!
//! 1. Every CPU starts with its current load (`weighted_load`); the running task, pinned
//!    tasks and whatever the view counts but does not list never move.
//! 2. The movable tasks (listed, not running, migratable) are taken heaviest first (ties:
//!    by CPU, then queue position).
//! 3. Each is lifted off its CPU and put back on the CPU `p` that minimises
//!    `cost(t, p) = load(p) + a · (remote(t, p) · numa_factor(p, c) − local(t, p))`,
//!    with `c` the task's current node and `load(p)` the load with every task not yet
//!    processed still in place. (Classic greedy list scheduling starts from empty CPUs; on a
//!    balanced machine that swaps equal tasks between CPUs for nothing. Starting from the
//!    current placement keeps the greedy order and cost and moves only what lowers the
//!    cost.) Message counts come from [`CommCounts`](crate::CommCounts), relative to the
//!    current node: on `c`, `local = local_msgs` and `remote = remote_msgs` (factor 1:
//!    partners stay where they are); elsewhere every message becomes remote (`local = 0`,
//!    `remote = local_msgs + remote_msgs`) at factor `d(p, c) / d(p, p)`. Tasks without
//!    counts pay no communication term.
//! 4. **Ties keep the task in place**: another CPU wins only with a strictly lower cost, so
//!    balanced machines see no moves and few tasks move overall. A CPU the move rules refuse
//!    (cache-hot, pinned, and the conservative filter when composed) is not a candidate.
//!
//! # `a`
//!
//! [`DEFAULT_ALPHA`] = 1: one message costs one unit of CFS weight, so a nice-0 task
//! (1024) outweighs about a thousand messages per balancing period. Pilla et al. leave `a` to
//! the application; the simulator sweeps it (`numalb_alpha`).
//!
//! New-idle balancing and placement are Linux's, through the same move rules.

use std::sync::Arc;

use zonal_topology::{CpuId, NodeId, Topology};

use crate::config::{ConfigField, Fields, PolicyConfig};
use crate::decision::{AttemptOutcome, BalanceOutcome, Migration, MoveContext};
use crate::policies::linux::{
    Balancer, Centralised, MachinePass, WholeMachine, FILTER_ACCEPTS, WALK_ACCEPTS,
};
use crate::policy::Policy;
use crate::rules::MoveRules;
use crate::view::{MachineView, TaskMeta};

/// The default communication weight `a` (weight units per message).
pub const DEFAULT_ALPHA: f64 = 1.0;

/// What `numalb` takes: `numalb_alpha` (its pass's `a`), the walk's parameters (the walk
/// keeps new-idle balancing and fork placement, of either era, and their imbalance
/// threshold), and the composed filter's (`origin` and `age_limit` only with
/// `conservative_filters = true`).
pub(crate) const ACCEPTS: Fields = WALK_ACCEPTS
    .union(FILTER_ACCEPTS)
    .with(ConfigField::NumalbAlpha);

/// `numalb` (catalogue constructor): the greedy pass over Linux's steal side, new-idle
/// balancing and placement, behind the hard conservative filter when
/// `conservative_filters = true`.
pub(crate) fn build(cfg: &PolicyConfig) -> Arc<dyn Policy> {
    Arc::new(Balancer::from_config(
        cfg,
        cfg.composed_filter(),
        Centralised(Numalb::new(cfg.numalb_alpha.unwrap_or(DEFAULT_ALPHA))),
    ))
}

/// The CPU whose pass runs the centralised step.
const ROOT: CpuId = CpuId(0);

/// NUMALB's periodic pass, a [`WholeMachine`] pass of the Linux walk: the walk keeps the
/// steal side, new-idle balancing and placement (Linux's tail-first order).
#[derive(Clone, Debug)]
pub(crate) struct Numalb {
    alpha: f64,
}

impl Numalb {
    pub(crate) fn new(alpha: f64) -> Self {
        Self { alpha }
    }

    fn comm_cost(&self, topo: &Topology, t: &TaskMeta, cur: NodeId, p: NodeId) -> f64 {
        let Some(c) = t.comm else { return 0.0 };
        let (l, r) = (f64::from(c.local_msgs), f64::from(c.remote_msgs));
        if p == cur {
            self.alpha * (r - l)
        } else {
            self.alpha * (l + r) * topo.numa_factor(p, cur)
        }
    }

    /// The greedy assignment of every movable task (module docs).
    fn assign(
        &self,
        rules: &MoveRules,
        view: &dyn MachineView,
        ctx: MoveContext,
        out: &mut BalanceOutcome,
    ) {
        let topo = view.topology();
        let ncpu = topo.cpu_count();
        let mut load = vec![0f64; ncpu];
        let mut movable: Vec<(u32, usize, usize)> = Vec::new();
        for (c, slot) in load.iter_mut().enumerate() {
            let cpu = CpuId::new(c);
            *slot = view.cpu_load(cpu).weighted_load as f64;
            for (i, t) in view.tasks(cpu).iter().enumerate() {
                if t.migratable && !t.running {
                    movable.push((t.weight, c, i));
                }
            }
        }
        movable.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        for &(w, c, i) in &movable {
            let from = CpuId::new(c);
            let t = &view.tasks(from)[i];
            let cur_node = topo.node_of(from);
            load[c] -= f64::from(w);
            let mut best = from;
            let mut best_cost = load[c] + self.comm_cost(topo, t, cur_node, cur_node);
            for (p, &lp) in load.iter().enumerate() {
                if p == c {
                    continue;
                }
                let to = CpuId::new(p);
                let cost = lp + self.comm_cost(topo, t, cur_node, topo.node_of(to));
                if cost < best_cost && rules.check(topo, t, to, ctx).is_ok() {
                    best = to;
                    best_cost = cost;
                }
            }
            load[best.index()] += f64::from(w);
            if best != from {
                out.migrations.push(Migration {
                    task: t.id,
                    from,
                    to: best,
                    level: topo.level_between(best, from),
                });
            }
        }
    }
}

impl WholeMachine for Numalb {
    /// The root CPU only (module docs).
    fn runs_on(&self, cpu: CpuId) -> bool {
        cpu == ROOT
    }

    fn pass(&self, p: &MachinePass<'_>, out: &mut BalanceOutcome) -> (AttemptOutcome, u32) {
        self.assign(p.rules, p.view, p.ctx, out);
        let moved = out.migrations.len() as u32;
        // The greedy assignment never fails: it moves, or the machine is balanced.
        let outcome = if moved > 0 {
            AttemptOutcome::Moved
        } else {
            AttemptOutcome::Balanced
        };
        (outcome, moved)
    }
}

#[cfg(test)]
mod test;
