//! Per-CPU balancing state that a policy reads and updates across passes (Linux keeps it in
//! each `sched_domain`): the balance interval, when the level is next due, and how many
//! attempts in a row failed (`nr_balance_failed`, which lets cache-hot tasks move).

use zonal_topology::{CpuId, Topology};

use crate::decision::AttemptOutcome;

/// Linux's `busy_factor`: a busy CPU balances this many times less often.
pub const BUSY_FACTOR: u64 = 16;

/// `next_due_us` of a level the policy never balances at: so far ahead (2^63 µs, about
/// 292,000 years) that it never comes, yet half of `u64::MAX`, so that callers may add an
/// interval or round it up to a tick without overflowing.
pub const NEVER_DUE_US: u64 = 1 << 63;

/// State of one CPU at one level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LevelState {
    /// Current balance interval, µs (between `min` and `max`).
    pub interval_us: u64,
    /// The level's minimum interval, µs (Linux: span weight in ms).
    pub min_interval_us: u64,
    /// The level's maximum interval, µs (2 × minimum).
    pub max_interval_us: u64,
    /// Caller time (µs) at which the level is next due for an *idle* CPU: the last balance
    /// plus `interval_us`. A busy CPU is due at the last balance plus
    /// `interval_us × busy_factor` (see [`LevelState::due_at`]). [`NEVER_DUE_US`] when the
    /// policy never balances this CPU at this level (beyond a hard zone, a degenerate
    /// level, or a level a policy does not use); callers that sleep until the earliest due
    /// level can skip those.
    pub next_due_us: u64,
    /// Consecutive failed attempts.
    pub nr_balance_failed: u32,
    /// How many times less often a busy CPU balances this level (Linux's `busy_factor`:
    /// [`BUSY_FACTOR`] = 16 in modern kernels; the 2.6 era's values are
    /// in the Linux baseline's `era` module).
    pub busy_factor: u64,
}

impl LevelState {
    /// When the level is next due: `next_due_us` for an idle CPU, the last balance plus
    /// `interval_us × busy_factor` (modern Linux: 16) for a busy one. Callers that schedule ticks
    /// can wait until the earliest `due_at` over the levels.
    ///
    /// ```
    /// # use zonal_policy::doc_facade as zonal;
    /// # use zonal::policy::{CpuBalanceState, BUSY_FACTOR};
    /// # use zonal::topology::{presets, CpuId};
    /// let topo = presets::preset("s1")?;
    /// let l = CpuBalanceState::new(&topo, CpuId(0)).levels[0];
    /// assert_eq!(l.due_at(false), 2_000);
    /// assert_eq!(l.due_at(true), 2_000 * BUSY_FACTOR);
    /// # Ok::<(), zonal::topology::TopologyError>(())
    /// ```
    #[must_use]
    pub fn due_at(&self, busy: bool) -> u64 {
        let factor = if busy { self.busy_factor } else { 1 };
        let last = self.next_due_us.saturating_sub(self.interval_us);
        last.saturating_add(self.interval_us.saturating_mul(factor))
    }
}

impl LevelState {
    /// Books one attempt at this level at `now` — the interval back-off every policy shares
    /// (Linux's `sched_balance_rq` and `sched_balance_domains`):
    ///
    /// | outcome | `nr_balance_failed` | interval |
    /// |---|---|---|
    /// | [`Moved`](AttemptOutcome::Moved) | 0 | the minimum |
    /// | [`AllRefused`](AttemptOutcome::AllRefused), [`NothingToMove`](AttemptOutcome::NothingToMove) (an imbalance, nothing moved) | + 1 | the minimum |
    /// | [`Balanced`](AttemptOutcome::Balanced) | 0 | doubled, up to the maximum |
    ///
    /// and the level is next due one interval from `now`.
    ///
    /// ```
    /// # use zonal_policy::doc_facade as zonal;
    /// # use zonal::policy::{AttemptOutcome, CpuBalanceState};
    /// # use zonal::topology::{presets, CpuId};
    /// let topo = presets::preset("s1")?;
    /// let mut l = CpuBalanceState::new(&topo, CpuId(0)).levels[0];
    /// l.record(AttemptOutcome::Balanced, 10_000);
    /// assert_eq!((l.interval_us, l.next_due_us), (4_000, 14_000));
    /// l.record(AttemptOutcome::AllRefused, 20_000);
    /// assert_eq!((l.interval_us, l.nr_balance_failed), (2_000, 1));
    /// # Ok::<(), zonal::topology::TopologyError>(())
    /// ```
    pub fn record(&mut self, outcome: AttemptOutcome, now_us: u64) {
        match outcome {
            AttemptOutcome::Moved => {
                self.nr_balance_failed = 0;
                self.interval_us = self.min_interval_us;
            }
            AttemptOutcome::AllRefused | AttemptOutcome::NothingToMove => {
                self.nr_balance_failed = self.nr_balance_failed.saturating_add(1);
                self.interval_us = self.min_interval_us;
            }
            AttemptOutcome::Balanced => {
                self.nr_balance_failed = 0;
                self.back_off();
            }
        }
        self.next_due_us = now_us.saturating_add(self.interval_us);
    }

    /// Linux 2.6's booking after kicking active balancing (after [`record`](Self::record)):
    /// `nr_balance_failed` becomes `failed` (2.6: `cache_nice_tries + 1`), the interval backs
    /// off (doubles, up to the maximum) and the level is next due one interval from `now`.
    ///
    /// ```
    /// # use zonal_policy::doc_facade as zonal;
    /// # use zonal::policy::{AttemptOutcome, CpuBalanceState};
    /// # use zonal::topology::{presets, CpuId};
    /// let topo = presets::preset("s1")?;
    /// let mut l = CpuBalanceState::new(&topo, CpuId(0)).levels[0];
    /// l.record(AttemptOutcome::AllRefused, 10_000);
    /// l.record_active(2, 10_000);
    /// assert_eq!((l.interval_us, l.next_due_us, l.nr_balance_failed), (4_000, 14_000, 2));
    /// # Ok::<(), zonal::topology::TopologyError>(())
    /// ```
    pub fn record_active(&mut self, failed: u32, now_us: u64) {
        self.nr_balance_failed = failed;
        self.back_off();
        self.next_due_us = now_us.saturating_add(self.interval_us);
    }

    /// The interval back-off: doubled, up to the maximum.
    fn back_off(&mut self) {
        self.interval_us = (self.interval_us * 2).min(self.max_interval_us);
    }
}

/// The balancing state of one CPU, one [`LevelState`] per memory access level.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuBalanceState {
    /// The CPU.
    pub cpu: CpuId,
    /// Per level, index 0 = level I.
    pub levels: Vec<LevelState>,
}

impl CpuBalanceState {
    /// Linux's initial intervals: a level's minimum interval is its span weight (CPUs) in ms,
    /// its maximum twice that.
    #[must_use]
    pub fn new(topo: &Topology, cpu: CpuId) -> Self {
        let node = topo.node_of(cpu);
        let levels = (0..topo.mal_count())
            .map(|l| {
                let span = topo.span(node, zonal_topology::Level(l as u8));
                let weight: usize = span.iter().map(|&n| topo.cpus_of(n).len()).sum();
                let min = weight.max(1) as u64 * 1000;
                LevelState {
                    interval_us: min,
                    min_interval_us: min,
                    max_interval_us: 2 * min,
                    next_due_us: min,
                    nr_balance_failed: 0,
                    busy_factor: BUSY_FACTOR,
                }
            })
            .collect();
        Self { cpu, levels }
    }
}

impl CpuBalanceState {
    /// For a centralised pass that balances only at the top level (`numalb`,
    /// `average-weight`): marks every lower level never due, and returns the top level if it
    /// is due at `now_us`.
    pub(crate) fn top_level_due(&mut self, now_us: u64) -> Option<&mut LevelState> {
        let (top, lower) = self.levels.split_last_mut()?;
        lower.iter_mut().for_each(|s| s.next_due_us = NEVER_DUE_US);
        (now_us >= top.next_due_us).then_some(top)
    }

    /// Marks every level never due (a CPU whose pass never balances).
    pub(crate) fn never_due(&mut self) {
        self.levels
            .iter_mut()
            .for_each(|s| s.next_due_us = NEVER_DUE_US);
    }
}
