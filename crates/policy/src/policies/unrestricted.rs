//! `unrestricted`: plain random work stealing over every CPU, as rayon does.
//!
//! - Every victim is examined ([`VictimDecision::Examine`]) and every task may move except a
//!   running or pinned one: no zone, no origin, no ageing, no cache-hotness.
//! - A thief with nothing to do picks a random starting victim with the passed [`Rng`] and
//!   walks its whole victim order from there (rayon starts its scan at a random victim too),
//!   taking the *oldest* movable task of the first victim that has one (a deque thief steals
//!   from the cold end).
//! - There is no periodic balancing: [`BalanceSide::balance`] steals only when the CPU is idle,
//!   and records nothing when it is busy.
//! - A new task starts on its parent's CPU (work stealing spawns locally).
//! - A waking task is queued on the waker's CPU (a work-stealing pool pushes work that
//!   becomes runnable onto the local deque of the thread that makes it runnable; idle
//!   thieves take it from there); a pinned task, or one whose waker is not a CPU of the
//!   view, wakes on its previous CPU. The simulator's waker is the previous CPU.

use zonal_topology::{CpuId, Level};

use crate::config::{ConfigField, Fields};
use crate::decision::{Attempt, AttemptOutcome, BalanceOutcome, Migration, MoveContext, Placement};
use crate::policies::linux::is_idle;
use crate::policy::{BalanceSide, CpuPass, Policy, StealSide, WakeUp};
use crate::rng::Rng;
use crate::rules::MoveRules;
use crate::view::{MachineView, TaskMeta};

/// What `unrestricted` takes: `linux_era` only, as a label. Its constructor reads no field;
/// the era is accepted (and changes nothing) because the paper's grids run every policy
/// of the catalogue under each Linux era, the era naming the variant of the whole grid (and
/// shown in each run's report). Every other field is refused.
pub(crate) const ACCEPTS: Fields = Fields::of(&[ConfigField::LinuxEra]);

/// `unrestricted` (catalogue constructor); it reads no parameter ([`ACCEPTS`]).
pub(crate) fn build(_cfg: &crate::PolicyConfig) -> std::sync::Arc<dyn Policy> {
    std::sync::Arc::new(Unrestricted::new())
}

/// Random work stealing.
#[derive(Clone, Debug)]
pub(crate) struct Unrestricted {
    rules: MoveRules,
}

impl Unrestricted {
    pub(crate) fn new() -> Self {
        Self {
            rules: MoveRules {
                filter: None,
                cache_hot: false,
            },
        }
    }

    fn steal(&self, view: &dyn MachineView, cpu: CpuId, rng: &mut Rng) -> BalanceOutcome {
        let topo = view.topology();
        let victims = topo.victims(cpu);
        let mut out = BalanceOutcome::default();
        let mut attempt = Attempt {
            cpu,
            level: Level(topo.mal_count().saturating_sub(1) as u8),
            cpus_scanned: 0,
            outcome: AttemptOutcome::NothingToMove,
            moved: 0,
        };
        let n = victims.len();
        let start = rng.below(n);
        let ctx = MoveContext::steal(view.now_us());
        'walk: for k in 0..n {
            let v = victims[(start + k) % n];
            attempt.cpus_scanned += 1;
            for t in view.tasks(v.cpu) {
                match self.rules.check(topo, t, cpu, ctx) {
                    Ok(()) => {
                        out.migrations.push(Migration {
                            task: t.id,
                            from: v.cpu,
                            to: cpu,
                            level: v.level,
                        });
                        attempt.level = v.level;
                        attempt.outcome = AttemptOutcome::Moved;
                        attempt.moved = 1;
                        break 'walk;
                    }
                    Err(r) => {
                        out.refused.add(r);
                        attempt.outcome = AttemptOutcome::AllRefused;
                    }
                }
            }
        }
        out.attempts.push(attempt);
        out
    }
}

impl Policy for Unrestricted {
    fn name(&self) -> &str {
        "unrestricted"
    }

    /// Its move rules, without filter or cache-hotness: every victim is examined, every
    /// fresh task may go, and the answers are static.
    fn steal_side(&self) -> &dyn StealSide {
        &self.rules
    }

    fn balance_side(&self) -> Option<&dyn BalanceSide> {
        Some(self)
    }
}

/// The simulator's process model has no deques: `unrestricted` steals through the balance
/// side, at each tick of an idle CPU and at new-idle time.
impl BalanceSide for Unrestricted {
    fn balance(&self, pass: CpuPass<'_>) -> BalanceOutcome {
        if is_idle(&pass.view.cpu_load(pass.cpu())) {
            self.steal(pass.view, pass.cpu(), pass.rng)
        } else {
            BalanceOutcome::default()
        }
    }

    fn idle_balance(&self, pass: CpuPass<'_>) -> BalanceOutcome {
        self.steal(pass.view, pass.cpu(), pass.rng)
    }

    fn place(
        &self,
        _view: &dyn MachineView,
        parent: CpuId,
        _task: &TaskMeta,
        _rng: &mut Rng,
    ) -> Placement {
        Placement {
            cpu: parent,
            level: Level::LOCAL,
        }
    }

    fn select_wake(&self, view: &dyn MachineView, wake: WakeUp<'_>, _rng: &mut Rng) -> CpuId {
        if wake.task.migratable && wake.waker.index() < view.topology().cpu_count() {
            wake.waker
        } else {
            wake.prev
        }
    }
}

#[cfg(test)]
mod test;
