//! One balancing pass: per-CPU states, the due levels, and applying the migrations the
//! policy asks for to real queues — the runtime's counterpart of the simulator's `tick` and
//! `apply` (`crates/sim/src/engine.rs`).
//!
//! The driver is generic over [`Queues`], so that the same code runs over the pool's live
//! queues (`live.rs`) and over the synthetic machine of the benchmark (`synthetic.rs`).

use std::sync::Arc;

use zonal_policy::{
    Ageing, CpuBalanceState, CpuPass, Eligibility, Migration, MoveContext, MoveKind, Policy, Rng,
    AWAY_EXAMINE,
};
use zonal_topology::{CpuId, Level, NodeId, Topology};

use crate::queues::OwnQueue;
use crate::task_meta::Meta;

use super::load::{Probe, WorkerLoad};
use super::snapshot::LiveView;
use super::{MoveRecord, PassReport};

/// The seed of the balancer's random stream (policies are deterministic given it).
const SEED: u64 = 0x5a6f_6e61_6c20_4c42;

/// The queues a pass reads and moves tasks between. Every method is safe to call while the
/// workers run: reads are hints, pops hand a task to exactly one taker, pushes wake the
/// queue's owner.
pub(crate) trait Queues {
    /// A queued task.
    type Task: Copy;
    /// The machine.
    fn topology(&self) -> &Arc<Topology>;
    /// Each worker's CPU.
    fn worker_cpus(&self) -> &[CpuId];
    /// Per CPU of the topology: its worker, or `usize::MAX`.
    fn cpu_worker(&self) -> &[usize];
    /// What worker `w` looks like now.
    fn probe(&self, w: usize) -> Probe;
    /// Pops one task of `w`'s away queue.
    fn pop_away(&self, w: usize) -> Option<Self::Task>;
    /// A popped task's real metadata, and an id stable while it lives.
    fn meta(&self, w: usize, t: &Self::Task) -> (Meta, u64);
    /// Writes the metadata of a popped task that moves to worker `to`, and tells the task
    /// where it goes (an async task then counts the move as made: its next poll, on `to`,
    /// does not count it again; `async_task/mod.rs`, "Routing, ageing and migrations").
    fn set_moved(&self, t: &Self::Task, meta: Meta, to: usize);
    /// Queues `t` on `w`'s away queue (and wakes `w`).
    fn push_away(&self, w: usize, t: Self::Task);
    /// Queues `t` on `w`'s inbox, where it is never stolen (and wakes `w`).
    fn push_inbox(&self, w: usize, t: Self::Task);
    /// Counts one task moved off worker `from` at `level` (the metrics' balance migrations).
    fn record_move(&self, from: usize, level: Level);
}

/// The balancer's state across passes: one [`CpuBalanceState`] and one load average per
/// worker, the view, the random stream, the totals.
#[derive(Clone, Debug)]
pub(crate) struct Driver {
    /// The policy generation `states` belong to.
    generation: Option<u64>,
    states: Vec<CpuBalanceState>,
    loads: Vec<WorkerLoad>,
    view: LiveView,
    rng: Rng,
    last_now_us: u64,
    total_by_level: Vec<u64>,
}

impl Driver {
    pub(crate) fn new(topo: Arc<Topology>, workers: usize) -> Self {
        let levels = topo.mal_count();
        Self {
            generation: None,
            states: Vec::new(),
            loads: vec![WorkerLoad::default(); workers],
            view: LiveView::new(topo),
            rng: Rng::new(SEED),
            last_now_us: 0,
            total_by_level: vec![0; levels],
        }
    }

    /// Starts the policy's per-CPU states if the policy changed (or on the first pass).
    fn adopt<Q: Queues>(&mut self, q: &Q, policy: &dyn Policy, generation: u64) {
        if self.generation == Some(generation) {
            return;
        }
        self.generation = Some(generation);
        let topo = q.topology();
        self.states = match policy.balance_side() {
            Some(side) => q
                .worker_cpus()
                .iter()
                .map(|&c| side.new_state(topo, c))
                .collect(),
            None => Vec::new(),
        };
    }

    /// Reads every worker's queues into the view and advances the load averages.
    fn sample<Q: Queues>(&mut self, q: &Q, now_us: u64) {
        self.view.set_now(now_us);
        for (w, &cpu) in q.worker_cpus().iter().enumerate() {
            let probe = q.probe(w);
            let load = &mut self.loads[w];
            let runnable = load.update(now_us, &probe);
            let idle = probe.idle_since_us.is_some() && probe.queued == 0;
            let avgs = (load.load.value(), load.util.value());
            self.view.set_cpu(cpu, w, runnable, probe.away, avgs, idle);
        }
    }

    /// One pass at `now_us` (an earlier time than the last pass's counts as that time) under
    /// `policy`, whose epoch is `generation`: every worker's CPU whose levels are due
    /// balances, in worker order, each seeing the moves of the ones before. A policy without
    /// a balance side makes the pass do nothing.
    pub(crate) fn pass<Q: Queues>(
        &mut self,
        q: &Q,
        policy: &dyn Policy,
        generation: u64,
        now_us: u64,
    ) -> PassReport {
        let now_us = now_us.max(self.last_now_us);
        self.last_now_us = now_us;
        self.adopt(q, policy, generation);
        let levels = q.topology().mal_count();
        let mut report = PassReport {
            now_us,
            policy: policy.name().to_owned(),
            migrations_by_level: vec![0; levels],
            ..PassReport::default()
        };
        let Some(side) = policy.balance_side() else {
            report.total_migrations_by_level = self.total_by_level.clone();
            return report;
        };
        report.balances = true;
        self.sample(q, now_us);
        for w in 0..self.states.len() {
            // `next_due_us` is a level's earliest due time (an idle CPU's): a CPU with no
            // level due has nothing to do this pass (Linux's `rebalance_domains` checks
            // `last_balance + interval` the same way before it looks at any load), and the
            // simulator only ticks a CPU at its earliest due time.
            if self.states[w].levels.iter().all(|l| l.next_due_us > now_us) {
                continue;
            }
            let out = side.balance(CpuPass::new(
                self.view.view(),
                &mut self.states[w],
                &mut self.rng,
            ));
            if out.attempts.is_empty() && out.migrations.is_empty() {
                continue;
            }
            report.cpus_balanced += 1;
            report.attempts += out.attempts.len() as u32;
            report.refused_by_policy.merge(&out.refused);
            for mig in &out.migrations {
                report.asked += 1;
                let failed = self.states[w]
                    .levels
                    .get(mig.level.index())
                    .map_or(0, |l| l.nr_balance_failed);
                let ctx = MoveContext {
                    kind: MoveKind::Periodic,
                    now_us,
                    nr_balance_failed: failed,
                };
                self.apply(q, policy, mig, ctx, &mut report);
            }
        }
        for (t, p) in self
            .total_by_level
            .iter_mut()
            .zip(&report.migrations_by_level)
        {
            *t += p;
        }
        report.total_migrations_by_level = self.total_by_level.clone();
        report
    }

    /// Applies one migration "from `mig.from`'s worker to `mig.to`'s": pops up to
    /// `AWAY_EXAMINE` real tasks of the source's away queue until one passes the policy's
    /// eligibility check with its real metadata; that one gets one more migration and goes
    /// to the destination's away queue (its inbox if it is now aged). Refused tasks go back
    /// to the source: its inbox if aged, else its away queue. Each popped task ends in
    /// exactly one queue; a running task is never in an away queue.
    fn apply<Q: Queues>(
        &mut self,
        q: &Q,
        policy: &dyn Policy,
        mig: &Migration,
        ctx: MoveContext,
        report: &mut PassReport,
    ) {
        let topo = Arc::clone(q.topology());
        let cw = q.cpu_worker();
        let (a, b) = (
            cw.get(mig.from.index()).copied().unwrap_or(usize::MAX),
            cw.get(mig.to.index()).copied().unwrap_or(usize::MAX),
        );
        if a == usize::MAX || b == usize::MAX || a == b {
            report.not_found += 1;
            self.view.unlisted(mig.task, mig.from);
            return;
        }
        let side = policy.steal_side();
        let ageing: Ageing = side.ageing();
        let mut held: [Option<Q::Task>; AWAY_EXAMINE] = [None; AWAY_EXAMINE];
        let mut nheld = 0;
        let mut moved = false;
        while nheld < AWAY_EXAMINE {
            let Some(t) = q.pop_away(a) else { break };
            let (mut meta, id) = q.meta(a, &t);
            let tm = meta.to_policy(id, mig.from);
            match side.eligibility(&topo, &tm, mig.to, ctx) {
                Eligibility::Allowed => {
                    let from_node = topo.node_of(mig.from);
                    let to_node = topo.node_of(mig.to);
                    let level = topo.level_between(mig.from, mig.to);
                    meta = meta.moved();
                    q.set_moved(&t, meta, b);
                    let own = OwnQueue::of(ageing, &meta);
                    match own {
                        OwnQueue::Inbox => q.push_inbox(b, t),
                        OwnQueue::Away => q.push_away(b, t),
                    }
                    let aged = own == OwnQueue::Inbox;
                    if let Some(n) = report.migrations_by_level.get_mut(level.index()) {
                        *n += 1;
                    }
                    q.record_move(a, level);
                    report.moves.push(MoveRecord {
                        from_worker: a,
                        to_worker: b,
                        from_node,
                        to_node,
                        origin: NodeId(meta.origin),
                        migrations_before: meta.moves() - 1,
                        level,
                        aged,
                    });
                    moved = true;
                    break;
                }
                Eligibility::Refused(r) => {
                    report.refused_on_apply.add(r);
                    held[nheld] = Some(t);
                    nheld += 1;
                }
                #[allow(unreachable_patterns)]
                _ => {
                    held[nheld] = Some(t);
                    nheld += 1;
                }
            }
        }
        for t in held.into_iter().flatten() {
            let (meta, _) = q.meta(a, &t);
            match OwnQueue::of(ageing, &meta) {
                OwnQueue::Inbox => q.push_inbox(a, t),
                OwnQueue::Away => q.push_away(a, t),
            }
        }
        if moved {
            self.view.moved(mig.task, mig.from, mig.to);
        } else {
            if nheld == 0 {
                report.not_found += 1;
            }
            self.view.unlisted(mig.task, mig.from);
        }
    }
}
