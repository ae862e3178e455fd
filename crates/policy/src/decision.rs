//! The results of policy decisions: rich, `#[must_use]` values rather than booleans.

use std::fmt;

use zonal_topology::{CpuId, Level};

use crate::view::TaskId;

/// Why a move (steal or migration) was refused, or a victim skipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[non_exhaustive]
pub enum Refusal {
    /// The victim lies beyond the load-balancing zone (hard policy).
    Zone,
    /// Beyond the zone and not loaded above 150% of the thief (soft policy).
    SoftThreshold,
    /// The task's origin node lies outside the thief's zone.
    OriginOutsideZone,
    /// The move would take the task farther from its origin (or, under `Strict`, away from it).
    Origin,
    /// The task has been migrated `age_limit` times: it stays put.
    Aged,
    /// The task ran too recently (cache-hot) and balancing has not failed often enough.
    CacheHot,
    /// The imbalance is below the level's threshold.
    BelowThreshold,
    /// The task is running right now.
    Running,
    /// The task may not run on the destination (pinned).
    Pinned,
    /// Moving the task would overshoot the remaining imbalance.
    TooHeavy,
    /// Thread-aware selection: the task's group would become more concentrated.
    GroupConcentration,
}

impl Refusal {
    /// Every reason, in a stable order (for metrics arrays).
    pub const ALL: [Refusal; 11] = [
        Refusal::Zone,
        Refusal::SoftThreshold,
        Refusal::OriginOutsideZone,
        Refusal::Origin,
        Refusal::Aged,
        Refusal::CacheHot,
        Refusal::BelowThreshold,
        Refusal::Running,
        Refusal::Pinned,
        Refusal::TooHeavy,
        Refusal::GroupConcentration,
    ];

    /// A stable, snake_case name (`zone`, `origin`, `aged`, …) for reports and JSON.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Refusal::Zone => "zone",
            Refusal::SoftThreshold => "soft_threshold",
            Refusal::OriginOutsideZone => "origin_outside_zone",
            Refusal::Origin => "origin",
            Refusal::Aged => "aged",
            Refusal::CacheHot => "cache_hot",
            Refusal::BelowThreshold => "below_threshold",
            Refusal::Running => "running",
            Refusal::Pinned => "pinned",
            Refusal::TooHeavy => "too_heavy",
            Refusal::GroupConcentration => "group_concentration",
        }
    }

    /// Position in [`Refusal::ALL`].
    #[must_use]
    pub const fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether a task may move from one CPU to another.
#[must_use]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Eligibility {
    /// The move is allowed.
    Allowed,
    /// The move is refused, with the reason.
    Refused(Refusal),
}

impl Eligibility {
    /// Whether the move is allowed.
    #[inline]
    #[must_use]
    pub const fn is_allowed(self) -> bool {
        matches!(self, Eligibility::Allowed)
    }
}

/// Whether an idle thief should look at a victim at all.
#[must_use]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum VictimDecision {
    /// Try to steal from it.
    Examine,
    /// Skip it, with the reason.
    Skip(Refusal),
    /// Stop walking the victim order: nothing farther may be taken (hard zone boundary).
    Stop(Refusal),
}

/// The kind of move being asked about (Linux treats them differently).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MoveKind {
    /// An idle worker stealing (runtime) or a CPU going idle pulling (new-idle balance).
    Steal,
    /// A periodic balancing pass.
    Periodic,
}

/// Context for one eligibility check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoveContext {
    /// The kind of move.
    pub kind: MoveKind,
    /// The caller's clock, µs (cache-hotness).
    pub now_us: u64,
    /// Failed balancing attempts at this level so far (Linux's `nr_balance_failed`).
    pub nr_balance_failed: u32,
}

impl MoveContext {
    /// A steal at time `now_us`, no failures recorded.
    #[must_use]
    pub const fn steal(now_us: u64) -> Self {
        Self {
            kind: MoveKind::Steal,
            now_us,
            nr_balance_failed: 0,
        }
    }
}

/// One migration a balancing pass asks for.
#[must_use]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Migration {
    /// The task.
    pub task: TaskId,
    /// Where it is.
    pub from: CpuId,
    /// Where it should go.
    pub to: CpuId,
    /// The level of `to` relative to `from`.
    pub level: Level,
}

/// How one balancing attempt (one CPU, one level) ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[non_exhaustive]
pub enum AttemptOutcome {
    /// Tasks were chosen for migration.
    Moved,
    /// The level was balanced (no busiest group, or the imbalance under the threshold).
    Balanced,
    /// An imbalance was found but every candidate task was refused.
    AllRefused,
    /// An imbalance was found but the busiest CPU had nothing movable.
    NothingToMove,
}

/// One balancing attempt: the paper counts these (Table 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attempt {
    /// The CPU that balanced.
    pub cpu: CpuId,
    /// The level it balanced at.
    pub level: Level,
    /// CPUs whose load it examined (the cost of the attempt grows with this).
    pub cpus_scanned: u32,
    /// How it ended.
    pub outcome: AttemptOutcome,
    /// Tasks it chose to move.
    pub moved: u32,
}

impl Attempt {
    /// An attempt of a centralised pass that scans every CPU, booked at the top level.
    pub fn whole_machine(
        topo: &zonal_topology::Topology,
        cpu: CpuId,
        outcome: AttemptOutcome,
        moved: u32,
    ) -> Self {
        Self {
            cpu,
            level: Level(topo.mal_count().saturating_sub(1) as u8),
            cpus_scanned: topo.cpu_count() as u32,
            outcome,
            moved,
        }
    }

    /// Whether the attempt found an imbalance and moved something.
    #[must_use]
    pub fn succeeded(&self) -> bool {
        self.outcome == AttemptOutcome::Moved
    }

    /// Whether the attempt found an imbalance it could not fix (the paper's unsuccessful attempt).
    #[must_use]
    pub fn failed(&self) -> bool {
        matches!(
            self.outcome,
            AttemptOutcome::AllRefused | AttemptOutcome::NothingToMove
        )
    }
}

/// Counts of refusals by reason, indexed by [`Refusal::index`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct RefusalCounts(pub [u64; Refusal::ALL.len()]);

impl RefusalCounts {
    /// Counts one refusal.
    #[inline]
    pub fn add(&mut self, r: Refusal) {
        self.0[r.index()] += 1;
    }

    /// The count for one reason.
    #[must_use]
    pub fn get(&self, r: Refusal) -> u64 {
        self.0[r.index()]
    }

    /// Adds another set of counts.
    #[inline]
    pub fn merge(&mut self, other: &RefusalCounts) {
        for (a, b) in self.0.iter_mut().zip(other.0) {
            *a += b;
        }
    }

    /// Total refusals.
    #[must_use]
    #[inline]
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }

    /// `(reason, count)` pairs with a non-zero count.
    pub fn iter(&self) -> impl Iterator<Item = (Refusal, u64)> + '_ {
        Refusal::ALL
            .iter()
            .map(|&r| (r, self.get(r)))
            .filter(|&(_, n)| n > 0)
    }
}

/// What a balancing pass (periodic or new-idle) decided.
#[must_use]
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BalanceOutcome {
    /// The migrations to perform, in order.
    pub migrations: Vec<Migration>,
    /// One record per (CPU, level) attempt made.
    pub attempts: Vec<Attempt>,
    /// Candidate tasks refused during the pass, by reason.
    pub refused: RefusalCounts,
}

/// Where a new task should start.
#[must_use]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    /// The chosen CPU.
    pub cpu: CpuId,
    /// Its level relative to the parent's CPU.
    pub level: Level,
}
