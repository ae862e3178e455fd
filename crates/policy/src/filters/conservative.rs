//! The conservative balancer's three rules (Mehta & Kanungo, as docs/DESIGN.md reads them).
//!
//! # The rules, in the order they are checked
//!
//! 1. **Zone.** The thief's load-balancing zone is levels I..S
//!    ([`Topology::zone_depth`]). Under [`ZoneMode::Hard`] nothing beyond level S is ever a
//!    victim: [`ConservativeFilter::victim`] answers `Stop(Zone)` for the first victim beyond
//!    the zone (victim orders put the in-zone victims first, so the walk may end there) and a
//!    move whose source lies beyond the zone is refused with [`Refusal::Zone`]. Under
//!    [`ZoneMode::Soft`] a victim beyond S is examined only when its load exceeds
//!    [`SOFT_VICTIM_PCT`]% of the thief's (otherwise `Skip(SoftThreshold)`), and periodic
//!    passes beyond S use a doubled imbalance threshold (25% → 50%).
//! 2. **Origin.** The task's origin node must lie inside the thief's zone
//!    ([`Refusal::OriginOutsideZone`]), and under [`OriginRule::NoFarther`] a task already away
//!    from home never moves farther from it: `d(origin, to) ≤ d(origin, from)`
//!    ([`Refusal::Origin`]). [`OriginRule::Strict`] applies the distance rule to tasks at home
//!    too (which keeps them on their birth node); [`OriginRule::Off`] disables both origin
//!    checks.
//! 3. **Ageing.** A task that has migrated `age_limit` times is aged: it never moves again
//!    ([`Refusal::Aged`]). The rule itself is [`Ageing`], defined once for every policy.
//!
//! # Whole computations
//!
//! The rules read a task's *origin*, and a driver decides what that is. In the runtime a
//! child task (a `join` half, a scope spawn, `spawn`, `spawn_async`, an iterator's split)
//! inherits its parent's origin, so the origin of every task of a computation is the node
//! the computation is rooted on: the node named with `spawn_on` or an origin option, or, for
//! a call from outside the pool, the node the pool routed it to. Every steal of any of its
//! tasks is checked against that node, which gives the invariant the runtime's
//! execution-level tests check (`tests/whole_computations.rs`, recording the node of every
//! execution):
//!
//! - under `conservative-hard`, no task of a computation rooted on node N ever runs outside
//!   N's zone;
//! - under `conservative-soft`, only through the soft test (a victim beyond the zone loaded
//!   above [`SOFT_VICTIM_PCT`]% of the thief) — and with the origin rule on, never at all,
//!   since the origin must lie in the thief's zone;
//! - under every conservative policy, never farther from the root's origin than the origin
//!   rule allows (`d(origin, to) ≤ d(origin, from)` under `no-farther`).
//!
//! A child's migration count starts at 0 (ageing is about how often one task moved; the
//! spread of the whole computation is bounded by the inherited origin).
//!
//! # Cost
//!
//! Every check is a handful of table lookups in the topology (node of a CPU, level of a node
//! pair, distance of a node pair): no allocation, no loop.

use zonal_topology::{CpuId, Level, NodeId, Topology, Victim};

use crate::ageing::{Ageing, DEFAULT_AGE_LIMIT};
use crate::config::{OriginRule, PolicyConfig};
use crate::decision::{Refusal, VictimDecision};
use crate::view::TaskMeta;

/// Under the soft zone, a victim beyond the zone is examined only when its load exceeds
/// this percentage of the thief's.
pub const SOFT_VICTIM_PCT: u64 = 150;

/// A [`ConservativeFilter::age_limit`] that means "tasks never age" (the ablation's filters
/// that check no age, [`PolicyConfig::mechanism_filters`]).
pub const NEVER_AGED: u32 = u32::MAX;

/// How the zone boundary is enforced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
#[non_exhaustive]
pub enum ZoneMode {
    /// Nothing beyond level S is ever a victim.
    #[default]
    Hard,
    /// Beyond S only from victims loaded above 150% of the thief (threshold 25% → 50%).
    Soft,
    /// No zone at all: only the origin check and ageing apply (the ablation's filters of
    /// one mechanism, `origin_check` and `ageing` on `linux`; no policy of the catalogue
    /// filters this way).
    Off,
}

/// The conservative rules as a filter in front of any selection rule.
///
/// ```
/// # use zonal_policy::doc_facade as zonal;
/// use zonal::policy::{ConservativeFilter, ZoneMode, OriginRule, Refusal, TaskMeta, TaskId};
/// use zonal::topology::{presets, CpuId, NodeId};
/// let topo = presets::preset("s1")?;
/// let f = ConservativeFilter { zone: ZoneMode::Hard, origin: OriginRule::NoFarther, age_limit: 3 };
/// // Node 8 is four ring hops from node 0 (level VI): outside node 0's zone (levels I–IV).
/// let far = topo.cpus_of(NodeId(8))[0];
/// let t = TaskMeta::new(TaskId(1), NodeId(8), far);
/// assert_eq!(f.check_move(&topo, &t, CpuId(0)), Err(Refusal::Zone));
/// # Ok::<(), zonal::topology::TopologyError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ConservativeFilter {
    /// Hard, soft or no zone.
    pub zone: ZoneMode,
    /// The origin-distance rule.
    pub origin: OriginRule,
    /// Migrations after which a task is aged (≥ 1; [`NEVER_AGED`]: never).
    pub age_limit: u32,
}

impl Default for ConservativeFilter {
    fn default() -> Self {
        Self {
            zone: ZoneMode::Hard,
            origin: OriginRule::NoFarther,
            age_limit: DEFAULT_AGE_LIMIT,
        }
    }
}

impl ConservativeFilter {
    /// The filter's ageing rule: aged after `age_limit` migrations (never for
    /// [`NEVER_AGED`]).
    #[inline]
    #[must_use]
    pub const fn ageing(&self) -> Ageing {
        if self.age_limit == NEVER_AGED {
            Ageing::Never
        } else {
            Ageing::After(self.age_limit)
        }
    }

    /// Whether an idle `thief` should look at `victim` (loads in one unit for both).
    #[inline]
    pub fn victim(
        &self,
        topo: &Topology,
        victim: &Victim,
        thief_load: u64,
        victim_load: u64,
    ) -> VictimDecision {
        if self.zone == ZoneMode::Off || !topo.beyond_zone(victim.level) {
            return VictimDecision::Examine;
        }
        match self.zone {
            ZoneMode::Hard => VictimDecision::Stop(Refusal::Zone),
            ZoneMode::Off => VictimDecision::Examine,
            ZoneMode::Soft if soft_victim_loaded(thief_load, victim_load) => {
                VictimDecision::Examine
            }
            ZoneMode::Soft => VictimDecision::Skip(Refusal::SoftThreshold),
        }
    }

    /// Whether a periodic or new-idle pass may balance at `level` at all: under the hard zone
    /// only levels inside the zone.
    #[inline]
    #[must_use]
    pub fn level_allowed(&self, topo: &Topology, level: Level) -> bool {
        self.zone != ZoneMode::Hard || !topo.beyond_zone(level)
    }

    /// Whether `level` lies beyond the zone (where the soft zone doubles the threshold).
    #[inline]
    #[must_use]
    pub fn beyond_zone(&self, topo: &Topology, level: Level) -> bool {
        topo.beyond_zone(level)
    }

    /// Checks moving `task` from `task.cpu` to `to` against the zone, origin and ageing
    /// rules.
    ///
    /// # Errors
    /// The first rule that refuses: [`Refusal::Zone`] (hard zone only),
    /// [`Refusal::OriginOutsideZone`], [`Refusal::Origin`], [`Refusal::Aged`].
    #[inline]
    pub fn check_move(&self, topo: &Topology, task: &TaskMeta, to: CpuId) -> Result<(), Refusal> {
        let from_node = topo.node_of(task.cpu);
        let to_node = topo.node_of(to);
        if self.zone == ZoneMode::Hard && !topo.node_in_zone(to_node, from_node) {
            return Err(Refusal::Zone);
        }
        if self.origin != OriginRule::Off {
            self.check_origin(topo, task.origin, from_node, to_node)?;
        }
        if self.ageing().is_aged(task) {
            return Err(Refusal::Aged);
        }
        Ok(())
    }

    #[inline]
    fn check_origin(
        &self,
        topo: &Topology,
        origin: NodeId,
        from: NodeId,
        to: NodeId,
    ) -> Result<(), Refusal> {
        if origin == to {
            // Coming home (or staying there): always closest, and home is in every zone of
            // its own node.
            return Ok(());
        }
        // A task at home on `from`: under the hard zone `from` was just found in the zone.
        let known_in_zone = origin == from && self.zone == ZoneMode::Hard;
        if !known_in_zone && !topo.origin_in_zone(to, origin) {
            return Err(Refusal::OriginOutsideZone);
        }
        let check_distance = self.origin == OriginRule::Strict || origin != from;
        if check_distance && topo.farther_from(origin, from, to) {
            return Err(Refusal::Origin);
        }
        Ok(())
    }
}

impl PolicyConfig {
    /// The conservative filter with this config's origin rule and age limit.
    pub(crate) fn filter(&self, zone: ZoneMode) -> ConservativeFilter {
        ConservativeFilter {
            zone,
            origin: self.origin,
            age_limit: self.age_limit.unwrap_or(DEFAULT_AGE_LIMIT),
        }
    }

    /// The hard conservative filter when `conservative_filters = true`.
    pub(crate) fn composed_filter(&self) -> Option<ConservativeFilter> {
        (self.conservative_filters == Some(true)).then(|| self.filter(ZoneMode::Hard))
    }

    /// The ablation's filters (`linux` with single mechanisms switched on,
    /// [`Mechanism`](crate::Mechanism)): the periodic balancer's (`zone_periodic`: the hard
    /// zone; `origin_check`: `no-farther`; `ageing`: after [`DEFAULT_AGE_LIMIT`] migrations;
    /// each only what its switch asks, the rest off) and new-idle balancing's
    /// (`newidle_zone`: the hard zone, nothing else), fork placement's (`fork_zone`: the
    /// hard zone as the affinity mask, nothing else) and wake-up placement's (`wake_zone`:
    /// the hard zone, nothing else). `None` where nothing is switched on.
    /// The placement rule is no filter: fork placement asks `placement_rule` itself.
    #[must_use]
    pub fn mechanism_filters(&self) -> MechanismFilters {
        let periodic = (self.zone_periodic || self.origin_check || self.ageing).then_some(
            ConservativeFilter {
                zone: if self.zone_periodic {
                    ZoneMode::Hard
                } else {
                    ZoneMode::Off
                },
                origin: if self.origin_check {
                    OriginRule::NoFarther
                } else {
                    OriginRule::Off
                },
                age_limit: if self.ageing {
                    DEFAULT_AGE_LIMIT
                } else {
                    NEVER_AGED
                },
            },
        );
        let hard_zone_only = ConservativeFilter {
            zone: ZoneMode::Hard,
            origin: OriginRule::Off,
            age_limit: NEVER_AGED,
        };
        MechanismFilters {
            periodic,
            new_idle: self.newidle_zone.then_some(hard_zone_only),
            fork: self.fork_zone.then_some(hard_zone_only),
            wake: self.wake_zone.then_some(hard_zone_only),
        }
    }
}

/// The filters of `linux` with ablation switches on ([`PolicyConfig::mechanism_filters`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MechanismFilters {
    /// On the periodic balancer (and the steal side).
    pub periodic: Option<ConservativeFilter>,
    /// On new-idle balancing.
    pub new_idle: Option<ConservativeFilter>,
    /// On fork placement.
    pub fork: Option<ConservativeFilter>,
    /// On wake-up placement.
    pub wake: Option<ConservativeFilter>,
}

/// The soft zone's load test: `victim > 150% × thief` (an idle thief examines any loaded
/// victim).
#[inline]
pub(crate) fn soft_victim_loaded(thief_load: u64, victim_load: u64) -> bool {
    u128::from(victim_load) * 100 > u128::from(thief_load) * u128::from(SOFT_VICTIM_PCT)
}

/// [`soft_victim_loaded`] on average loads (a group's load per CPU): work may go beyond the
/// soft zone only from a source loaded *strictly* above 150% of the destination. Fork
/// placement asks it with the parent's group as the source and the idlest group beyond
/// the zone as the destination, so two equally idle groups keep the task inside the zone.
#[inline]
pub(crate) fn soft_source_loaded(dest_load: f64, source_load: f64) -> bool {
    source_load * 100.0 > dest_load * SOFT_VICTIM_PCT as f64
}

#[cfg(test)]
mod test;
