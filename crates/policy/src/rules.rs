//! The per-task move rules every balancing policy shares: Linux's `can_migrate_task`
//! (pinned, running, cache-hot) with an optional [`ConservativeFilter`] in front.
//!
//! # Order of the checks
//!
//! 1. pinned ([`Refusal::Pinned`]) — the task may not run elsewhere at all;
//! 2. running ([`Refusal::Running`]) — a pass never moves the running task;
//! 3. the conservative filter, when composed: zone, origin, ageing;
//! 4. cache-hot ([`Refusal::CacheHot`]): the task ran less than
//!    [`MIGRATION_COST_US`] ago (`sysctl_sched_migration_cost`), unless balancing at this
//!    level has failed more than `cache_nice_tries` times in a row (1 at level I, 2 at NUMA
//!    levels).
//!
//! Every check is O(1) and allocation-free: this is the steal path.

use zonal_topology::{CpuId, Level, Topology, Victim};

use crate::ageing::Ageing;
use crate::decision::{Eligibility, MoveContext, Refusal, VictimDecision};
use crate::filters::ConservativeFilter;
use crate::filters::ZoneMode;
use crate::policy::{derive_fresh_steal, FreshSteal, StealSide};
use crate::view::TaskMeta;

/// Linux's `sysctl_sched_migration_cost`: a task that ran within 0.5 ms is cache-hot.
pub const MIGRATION_COST_US: u64 = 500;

/// The scheduler tick, µs: `CONFIG_HZ=250`, the common distribution kernel setting (4 ms).
/// The simulator's tick and the service example's use this one constant.
pub const TICK_US: u64 = 4_000;

/// Linux's `cache_nice_tries` for a level: 1 at level I (the node/MC level), 2 at NUMA levels.
#[inline]
#[must_use]
pub const fn cache_nice_tries(level: Level) -> u32 {
    if level.0 == 0 {
        1
    } else {
        2
    }
}

/// The shared move rules of a policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MoveRules {
    /// The conservative filter, when composed.
    pub(crate) filter: Option<ConservativeFilter>,
    /// Whether cache-hot tasks are refused (Linux-derived policies; not `unrestricted`).
    pub(crate) cache_hot: bool,
}

/// The shared move rules are the steal side of every Linux-derived policy and of
/// `unrestricted`: the filter's victim decision, the move rules as eligibility, the filter's
/// ageing, and the fresh-task answers derived from them (`policy/fresh.rs`).
impl StealSide for MoveRules {
    #[inline]
    fn victim(
        &self,
        topo: &Topology,
        _thief: CpuId,
        victim: &Victim,
        thief_load: u64,
        victim_load: u64,
    ) -> VictimDecision {
        match &self.filter {
            Some(f) => f.victim(topo, victim, thief_load, victim_load),
            None => VictimDecision::Examine,
        }
    }

    #[inline]
    fn eligibility(
        &self,
        topo: &Topology,
        task: &TaskMeta,
        to: CpuId,
        ctx: MoveContext,
    ) -> Eligibility {
        match self.check(topo, task, to, ctx) {
            Ok(()) => Eligibility::Allowed,
            Err(r) => Eligibility::Refused(r),
        }
    }

    fn ageing(&self) -> Ageing {
        self.filter.map_or(Ageing::Never, |f| f.ageing())
    }

    fn static_fresh_steal(
        &self,
        topo: &Topology,
        thief: CpuId,
        victim: &Victim,
    ) -> Option<FreshSteal> {
        fresh_steal_of_rules(self, topo, thief, victim)
    }
}

impl MoveRules {
    #[inline]
    pub(crate) fn check(
        &self,
        topo: &Topology,
        task: &TaskMeta,
        to: CpuId,
        ctx: MoveContext,
    ) -> Result<(), Refusal> {
        if !task.migratable {
            return Err(Refusal::Pinned);
        }
        if task.running {
            return Err(Refusal::Running);
        }
        if let Some(f) = &self.filter {
            f.check_move(topo, task, to)?;
        }
        if self.cache_hot {
            if let Some(ran) = task.last_ran_us {
                if ctx.now_us.saturating_sub(ran) < MIGRATION_COST_US {
                    let level = topo.level_between(to, task.cpu);
                    if ctx.nr_balance_failed <= cache_nice_tries(level) {
                        return Err(Refusal::CacheHot);
                    }
                }
            }
        }
        Ok(())
    }
}

/// [`StealSide::static_fresh_steal`] for the shared move rules (`linux`,
/// `conservative-hard`/`-soft`, `thread-aware`, `numalb`, `average-weight`, `unrestricted`):
/// static except beyond a soft zone, where the victim decision compares loads.
pub(crate) fn fresh_steal_of_rules(
    rules: &MoveRules,
    topo: &Topology,
    thief: CpuId,
    victim: &Victim,
) -> Option<FreshSteal> {
    let soft_beyond = rules
        .filter
        .is_some_and(|f| f.zone == ZoneMode::Soft && f.beyond_zone(topo, victim.level));
    (!soft_beyond).then(|| derive_fresh_steal(rules, topo, thief, victim))
}

#[cfg(test)]
mod test {
    use zonal_topology::{CpuId, NodeId};

    use super::*;
    use crate::decision::MoveKind;
    use crate::filters::ZoneMode;
    use crate::testing::two_nodes;
    use crate::{OriginRule, TaskId};

    fn rules() -> MoveRules {
        MoveRules {
            filter: None,
            cache_hot: true,
        }
    }

    #[test]
    fn pinned_and_running_never_move() {
        let topo = two_nodes();
        let mut t = TaskMeta::new(TaskId(1), NodeId(0), CpuId(0));
        t.migratable = false;
        let ctx = MoveContext::steal(0);
        assert_eq!(
            rules().eligibility(&topo, &t, CpuId(1), ctx),
            Eligibility::Refused(Refusal::Pinned)
        );
        t.migratable = true;
        t.running = true;
        assert_eq!(
            rules().eligibility(&topo, &t, CpuId(1), ctx),
            Eligibility::Refused(Refusal::Running)
        );
    }

    #[test]
    fn cache_hot_until_enough_failures() {
        let topo = two_nodes();
        let mut t = TaskMeta::new(TaskId(1), NodeId(0), CpuId(0));
        t.last_ran_us = Some(1_000);
        let mut ctx = MoveContext {
            kind: MoveKind::Periodic,
            now_us: 1_400,
            nr_balance_failed: 1,
        };
        // Level I: cache_nice_tries = 1, so one failure is not enough.
        assert_eq!(
            rules().eligibility(&topo, &t, CpuId(1), ctx),
            Eligibility::Refused(Refusal::CacheHot)
        );
        ctx.nr_balance_failed = 2;
        assert!(rules().eligibility(&topo, &t, CpuId(1), ctx).is_allowed());
        // Level II: cache_nice_tries = 2.
        assert_eq!(
            rules().eligibility(&topo, &t, CpuId(2), ctx),
            Eligibility::Refused(Refusal::CacheHot)
        );
        ctx.nr_balance_failed = 3;
        assert!(rules().eligibility(&topo, &t, CpuId(2), ctx).is_allowed());
        // 0.5 ms later it is cold.
        ctx.nr_balance_failed = 0;
        ctx.now_us = 1_500;
        assert!(rules().eligibility(&topo, &t, CpuId(2), ctx).is_allowed());
        // Never ran: cold.
        t.last_ran_us = None;
        ctx.now_us = 1_000;
        assert!(rules().eligibility(&topo, &t, CpuId(2), ctx).is_allowed());
    }

    #[test]
    fn filter_runs_before_cache_hotness() {
        let topo = two_nodes();
        let mut t = TaskMeta::new(TaskId(1), NodeId(0), CpuId(0));
        t.migrations = 5;
        t.last_ran_us = Some(0);
        let r = MoveRules {
            filter: Some(ConservativeFilter {
                zone: ZoneMode::Hard,
                origin: OriginRule::NoFarther,
                age_limit: 3,
            }),
            cache_hot: true,
        };
        assert_eq!(
            r.eligibility(&topo, &t, CpuId(1), MoveContext::steal(0)),
            Eligibility::Refused(Refusal::Aged)
        );
    }
}
