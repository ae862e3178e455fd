//! One balancing attempt at one level (Linux's `sched_balance_rq`).
//!
//! # Steps
//!
//! 1. Build the domain's groups and their statistics ([`Loads::build_groups`]; only the
//!    domain's nodes are read).
//! 2. Busiest group: the busiest non-local group ([`GroupStat::busier_than`]).
//! 3. Balanced? (`sched_balance_find_src_group`) — no busiest or it runs nothing; the local
//!    group is in a higher class; the local group is overloaded and at or above the busiest
//!    group's or the domain's average load, or within the level's `imbalance_pct`; the
//!    busiest group is not overloaded and this CPU is busy, or the idle-CPU counts differ by
//!    at most one, or it runs a single task.
//! 4. Imbalance (`calculate_imbalance`): with spare capacity locally, a number of tasks
//!    (*migrate_task*: half the task-count difference between single-CPU groups, half the
//!    idle-CPU difference otherwise, or as many tasks as we have idle CPUs when the busiest
//!    group is overloaded — Linux's *migrate_util* on CPU-bound tasks); otherwise
//!    *migrate_load*: `min((busiest − avg)·cpus_b, (avg − local)·cpus_l)` weight units, after
//!    the level's `imbalance_pct` check (`100·busiest ≤ pct·local` is balanced: the paper's
//!    25% at NUMA levels, 17% at level I; doubled beyond the zone under the soft zone).
//! 5. Busiest CPU in the busiest group (`sched_balance_find_src_rq`): most load (skipping a
//!    CPU whose single task outweighs the imbalance) or most tasks; never the balancing CPU.
//! 6. Detach from the busiest CPU's tail, examining at most `nr_migrate` (32) tasks: each must
//!    pass the move rules ([`MoveRules`]); under *migrate_load* a task whose
//!    `weight >> nr_balance_failed` exceeds the remaining imbalance is skipped (too heavy).
//!    A new-idle pass stops after the first task (as preemptible kernels do).
//!
//! Not modelled (modern era): SMT/cluster levels below the node, misfit/asymmetric packing,
//! the NUMA "small imbalance allowed" rule of kernels ≥ 5.11 (the paper's kernel predates
//! it), and active balancing of the running task.
//!
//! # The 2.6 era
//!
//! Steps 2–4 follow 2.6's `find_busiest_group` ([`era::decide`]: candidates run more tasks
//! than they have CPUs, the highest average load wins, the imbalance is the busiest group's
//! excess over the domain average, always in load units); step 6 skips a task when
//! `weight / 2` exceeds the remaining imbalance (2.6's `skip_for_load`); and when a periodic
//! attempt moves nothing after more than `cache_nice_tries + 2` failures in a row, one task
//! of the busiest CPU is pushed to us regardless of cache-hotness, the running one included
//! (`active_load_balance`, [`era`]'s module docs). A candidate is also refused as cache-hot
//! when it ran less than 2.6's `cache_hot_time` ago (10 ms at NUMA levels, 2.5 ms at level I,
//! [`era::task_hot`]) while the level has failed at most `cache_nice_tries` times.

use zonal_topology::{CpuId, Level, NodeId};

use crate::decision::{
    Attempt, AttemptOutcome, BalanceOutcome, Migration, MoveContext, MoveKind, Refusal,
};
use crate::filters::{soft_victim_loaded, ZoneMode};
use crate::rules::MoveRules;

use super::era::{self, LinuxEra, Verdict};
use super::groups::{GroupClass, GroupStat, Loads};
use super::{Candidates, Guard, LinuxParams, Selection};

/// How idle the balancing CPU is (Linux's `cpu_idle_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IdleKind {
    /// Running something: a periodic pass at `interval × busy_factor`.
    Busy,
    /// Idle at a periodic tick.
    Idle,
    /// About to go idle (new-idle balancing).
    NewlyIdle,
}

/// Where and how one attempt balances.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct AttemptAt {
    /// The balancing CPU.
    pub(crate) cpu: CpuId,
    /// The level balanced.
    pub(crate) level: Level,
    /// How idle the balancing CPU is.
    pub(crate) idle: IdleKind,
    /// The level's consecutive failed attempts.
    pub(crate) nr_balance_failed: u32,
}

/// What a pass would move.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Imbalance {
    /// Weight units.
    Load(i64),
    /// Tasks.
    Tasks(i64),
}

impl Imbalance {
    fn remaining(self) -> i64 {
        match self {
            Imbalance::Load(x) | Imbalance::Tasks(x) => x,
        }
    }
}

/// One attempt's record, and whether it ended in active balancing (2.6 era).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct AttemptResult {
    pub(crate) attempt: Attempt,
    /// A task was pushed by active balancing; the caller books 2.6's back-off.
    pub(crate) active: bool,
}

/// The policy pieces one attempt needs.
pub(crate) struct Attempter<'p, S: Selection> {
    pub(crate) params: &'p LinuxParams,
    pub(crate) rules: &'p MoveRules,
    pub(crate) selection: &'p S,
}

impl<S: Selection> Attempter<'_, S> {
    /// One attempt for `cpu` at `level`; appends migrations and refusals to `out` and
    /// returns the attempt record.
    pub(crate) fn attempt(
        &self,
        loads: &mut Loads<'_, '_>,
        at: AttemptAt,
        out: &mut BalanceOutcome,
    ) -> AttemptResult {
        let (attempt, src) = self.attempt_inner(loads, at, out);
        let Some(src) = src else {
            return AttemptResult {
                attempt,
                active: false,
            };
        };
        if self.params.era != LinuxEra::V2_6
            || at.idle == IdleKind::NewlyIdle
            || attempt.outcome == AttemptOutcome::Balanced
            || attempt.moved > 0
            || !era::active_due(at.level, at.nr_balance_failed)
        {
            return AttemptResult {
                attempt,
                active: false,
            };
        }
        let active = self.active(loads, src, at.cpu, out);
        let mut attempt = attempt;
        if active {
            attempt.moved = 1;
            attempt.outcome = AttemptOutcome::Moved;
        }
        AttemptResult { attempt, active }
    }

    /// 2.6's active balance: pushes one task from `src`, the busiest CPU the failed attempt
    /// chose, to `dst`, cache-hot or running (tail first, the running task last); only pinned
    /// tasks and the conservative filter's refusals stay, and a CPU running a single task is
    /// left alone (2.6's `active_load_balance` checks `nr_running > 1`). Returns whether one
    /// moved.
    fn active(
        &self,
        loads: &mut Loads<'_, '_>,
        src: CpuId,
        dst: CpuId,
        out: &mut BalanceOutcome,
    ) -> bool {
        let topo = loads.topo;
        if loads.cpu(src).nr_running < 2 {
            return false;
        }
        let tasks = loads.view.tasks(src);
        for i in (0..tasks.len()).rev() {
            let t = &tasks[i];
            if out.migrations.iter().any(|m| m.task == t.id) {
                continue;
            }
            if !t.migratable {
                out.refused.add(Refusal::Pinned);
                continue;
            }
            if let Some(f) = &self.rules.filter {
                if let Err(r) = f.check_move(topo, t, dst) {
                    out.refused.add(r);
                    continue;
                }
            }
            record_move(loads, t, src, dst, out);
            return true;
        }
        false
    }

    fn attempt_inner(
        &self,
        loads: &mut Loads<'_, '_>,
        at: AttemptAt,
        out: &mut BalanceOutcome,
    ) -> (Attempt, Option<CpuId>) {
        let AttemptAt {
            cpu,
            level,
            idle,
            nr_balance_failed,
        } = at;
        let topo = loads.topo;
        let node = topo.node_of(cpu);
        let cpus_scanned = loads.build_groups(cpu, level);
        let mut attempt = Attempt {
            cpu,
            level,
            cpus_scanned,
            outcome: AttemptOutcome::Balanced,
            moved: 0,
        };
        let soft_beyond = self
            .rules
            .filter
            .is_some_and(|f| f.zone == ZoneMode::Soft && f.beyond_zone(topo, level));
        let pct = self.params.imbalance_pct(level, soft_beyond);

        let groups = &loads.s.groups;
        let local = groups[0];
        let v2_6 = self.params.era == LinuxEra::V2_6;
        let mut busiest: Option<GroupStat> = None;
        for g in &groups[1..] {
            let busier = if v2_6 {
                era::busier(g, busiest.as_ref())
            } else {
                busiest.is_none_or(|b| g.busier_than(&b))
            };
            if busier {
                busiest = Some(*g);
            }
        }
        let Some(busiest) = busiest else {
            return (attempt, None);
        };
        let this_idle = idle != IdleKind::Busy;
        let decision = if v2_6 {
            let (domain_load, domain_cpus) = loads.domain_totals(node, level);
            match era::decide(
                self.params.rule,
                &local,
                &busiest,
                domain_load,
                domain_cpus,
                pct,
            ) {
                Verdict::Balanced => Decision::Balanced,
                Verdict::BelowThreshold => Decision::BelowThreshold,
                Verdict::Load(x) if x > 0 => Decision::Imbalanced(Imbalance::Load(x)),
                Verdict::Load(_) => Decision::Balanced,
            }
        } else {
            decide(loads, node, level, &local, &busiest, this_idle, pct)
        };
        let imbalance = match decision {
            Decision::Balanced => return (attempt, None),
            Decision::BelowThreshold => {
                out.refused.add(Refusal::BelowThreshold);
                return (attempt, None);
            }
            Decision::Imbalanced(i) => i,
        };

        let Some(src) = busiest_cpu(loads, cpu, level, &busiest, imbalance) else {
            attempt.outcome = AttemptOutcome::NothingToMove;
            return (attempt, None);
        };
        if soft_beyond {
            let this_load = loads.cpu(cpu).weighted_load;
            let src_load = loads.cpu(src).weighted_load;
            if !soft_victim_loaded(this_load, src_load) {
                out.refused.add(Refusal::SoftThreshold);
                return (attempt, None);
            }
        }
        let kind = if idle == IdleKind::NewlyIdle {
            MoveKind::Steal
        } else {
            MoveKind::Periodic
        };
        let ctx = MoveContext {
            kind,
            now_us: loads.view.now_us(),
            nr_balance_failed,
        };
        let (moved, refused) = self.detach(loads, src, cpu, level, imbalance, ctx, idle, out);
        attempt.moved = moved;
        attempt.outcome = if moved > 0 {
            AttemptOutcome::Moved
        } else if refused {
            AttemptOutcome::AllRefused
        } else {
            AttemptOutcome::NothingToMove
        };
        (attempt, Some(src))
    }

    /// Detaches tasks from `src`'s tail for `dst`; returns (moved, whether any was refused).
    #[allow(clippy::too_many_arguments)]
    fn detach(
        &self,
        loads: &mut Loads<'_, '_>,
        src: CpuId,
        dst: CpuId,
        level: Level,
        mut imbalance: Imbalance,
        ctx: MoveContext,
        idle: IdleKind,
        out: &mut BalanceOutcome,
    ) -> (u32, bool) {
        let view = loads.view;
        let topo = loads.topo;
        let tasks = view.tasks(src);
        let loop_max = self.params.nr_migrate.min(tasks.len()).min(NR_MIGRATE_MAX);
        // Candidate order: the tail first (most recently queued last in `tasks`).
        let mut order = [0usize; NR_MIGRATE_MAX];
        for (k, slot) in order.iter_mut().take(loop_max).enumerate() {
            *slot = tasks.len() - 1 - k;
        }
        let order = &mut order[..loop_max];
        let candidates = Candidates {
            view,
            src,
            dst,
            level,
            tasks,
        };
        let mut guard = self.selection.order(&candidates, order);

        let (mut moved, mut refused) = (0u32, false);
        for &i in order.iter() {
            if imbalance.remaining() <= 0 {
                break;
            }
            let t = &tasks[i];
            if out.migrations.iter().any(|m| m.task == t.id) {
                continue;
            }
            if let Err(r) = self.rules.check(topo, t, dst, ctx) {
                out.refused.add(r);
                refused = true;
                continue;
            }
            if self.params.era == LinuxEra::V2_6
                && self.rules.cache_hot
                && era::task_hot(level, t.last_ran_us, ctx.now_us, ctx.nr_balance_failed)
            {
                out.refused.add(Refusal::CacheHot);
                refused = true;
                continue;
            }
            if let Some(r) = guard.refuse(t) {
                out.refused.add(r);
                refused = true;
                continue;
            }
            match &mut imbalance {
                Imbalance::Load(rem) => {
                    let w = i64::from(t.weight);
                    let too_heavy = if self.params.era == LinuxEra::V2_6 {
                        // 2.6's skip_for_load: half the task's weight above what remains.
                        (w >> 1) > *rem + era::SCHED_LOAD_SCALE_FUZZ
                    } else {
                        (w >> ctx.nr_balance_failed.min(63)) > *rem
                    };
                    if too_heavy {
                        out.refused.add(Refusal::TooHeavy);
                        refused = true;
                        continue;
                    }
                    *rem -= w;
                }
                Imbalance::Tasks(rem) => *rem -= 1,
            }
            record_move(loads, t, src, dst, out);
            guard.note_move(t);
            moved += 1;
            if idle == IdleKind::NewlyIdle {
                break;
            }
        }
        (moved, refused)
    }
}

/// The most tasks one pass examines (Linux's `sysctl_sched_nr_migrate`).
pub(crate) const NR_MIGRATE_MAX: usize = 32;

enum Decision {
    Balanced,
    BelowThreshold,
    Imbalanced(Imbalance),
}

/// Moves `t` from `src` to `dst` in the pass's books: the migration it returns, and the loads
/// the rest of the pass sees.
fn record_move(
    loads: &mut Loads<'_, '_>,
    t: &crate::TaskMeta,
    src: CpuId,
    dst: CpuId,
    out: &mut BalanceOutcome,
) {
    out.migrations.push(Migration {
        task: t.id,
        from: src,
        to: dst,
        level: loads.topo.level_between(dst, src),
    });
    loads.apply_move(src, dst, t.weight);
}

fn decide(
    loads: &mut Loads<'_, '_>,
    node: NodeId,
    level: Level,
    local: &GroupStat,
    busiest: &GroupStat,
    this_idle: bool,
    pct: u32,
) -> Decision {
    use GroupClass::{HasSpare, Overloaded};
    if busiest.nr == 0 {
        return Decision::Balanced;
    }
    let (lc, bc) = (local.class(), busiest.class());
    if lc > bc {
        return Decision::Balanced;
    }
    let (domain_load, domain_cpus) = loads.domain_totals(node, level);
    let domain_avg = domain_load as f64 / f64::from(domain_cpus.max(1));
    let below_pct = || 100.0 * busiest.avg() <= f64::from(pct) * local.avg();
    if lc == Overloaded {
        if local.avg() >= busiest.avg() || local.avg() >= domain_avg {
            return Decision::Balanced;
        }
        if below_pct() {
            return Decision::BelowThreshold;
        }
    }
    if bc != Overloaded {
        if !this_idle {
            return Decision::Balanced;
        }
        if busiest.cpus > 1 && local.idle <= busiest.idle + 1 {
            return Decision::Balanced;
        }
        if busiest.nr <= 1 {
            return Decision::Balanced;
        }
    }
    if lc == HasSpare {
        let n = if bc == Overloaded && busiest.cpus > 1 {
            // migrate_util: fill our spare capacity, at least one task when we are idle.
            i64::from(local.idle.max(u32::from(this_idle)))
        } else if busiest.cpus == 1 {
            (i64::from(busiest.nr) - i64::from(local.nr)) / 2
        } else {
            (i64::from(local.idle) - i64::from(busiest.idle)).max(0) / 2
        };
        return if n > 0 {
            Decision::Imbalanced(Imbalance::Tasks(n))
        } else {
            Decision::Balanced
        };
    }
    // Local fully busy or overloaded: migrate_load towards the domain average.
    if local.avg() >= busiest.avg() || local.avg() >= domain_avg {
        return Decision::Balanced;
    }
    if lc != Overloaded && below_pct() {
        return Decision::BelowThreshold;
    }
    let amount = ((busiest.avg() - domain_avg) * f64::from(busiest.cpus))
        .min((domain_avg - local.avg()) * f64::from(local.cpus));
    let amount = amount as i64;
    if amount > 0 {
        Decision::Imbalanced(Imbalance::Load(amount))
    } else {
        Decision::Balanced
    }
}

fn busiest_cpu(
    loads: &Loads<'_, '_>,
    dst: CpuId,
    level: Level,
    group: &GroupStat,
    imbalance: Imbalance,
) -> Option<CpuId> {
    let mut best: Option<(CpuId, u64)> = None;
    loads.for_each_cpu(group, level, |c| {
        if c == dst {
            return;
        }
        let l = loads.cpu(c);
        if l.nr_running == 0 {
            return;
        }
        let key = match imbalance {
            Imbalance::Load(imb) => {
                if l.nr_running == 1 && l.weighted_load as i64 > imb {
                    return;
                }
                l.weighted_load
            }
            Imbalance::Tasks(_) => u64::from(l.nr_running),
        };
        if best.is_none_or(|(_, k)| key > k) {
            best = Some((c, key));
        }
    });
    best.map(|(c, _)| c)
}
