//! The Linux baseline (docs/reference/linux-lb.md), and the walk the conservative and
//! thread-aware policies share with it.
//!
//! # The periodic walk (`sched_balance_domains`)
//!
//! For one CPU at the caller's tick, levels bottom-up (level I = the CPU's node, whose
//! groups are its single CPUs; level L ≥ II = the nodes within the L-th distance, whose
//! groups are the level L−1 spans, see [`groups`]):
//!
//! 1. Levels the filter forbids end the walk (the hard zone: levels I..S only).
//!    Degenerate levels (one CPU, or the same span as the level below) are skipped, as Linux
//!    removes them.
//! 2. A level is *due* when `now ≥ last + interval × (busy ? busy_factor : 1)`, with
//!    `busy_factor = 16`, `last = next_due_us − interval_us` ([`LevelState`]). Levels not
//!    due are skipped.
//! 3. `should_we_balance`: at levels ≥ II only the first idle CPU of the local group (the
//!    level-below span of our node) balances, or, when none is idle, the group's first CPU.
//!    Any other CPU ends its walk here (Linux clears `continue_balancing`), and the level
//!    counts as balanced.
//! 4. One attempt ([`pass`]) at the level's threshold, booked by the shared back-off
//!    [`LevelState::record`]: balanced → `nr_balance_failed = 0`, the interval doubles up to
//!    its maximum; an imbalance found → the interval resets to its minimum, and
//!    `nr_balance_failed += 1` if nothing moved, else 0.
//! 5. `next_due_us = now + interval`. One [`Attempt`] is recorded per level attempted.
//!    Levels the walk can never reach (beyond a hard zone, degenerate) get
//!    `next_due_us = NEVER_DUE_US`, so callers that sleep until the earliest due level do not
//!    wake up for them.
//!
//! # What a pass reads
//!
//! Callers tick often (the simulator every 4 ms per CPU) and most ticks find no level due.
//! Loads are read lazily ([`groups`]): a node's CPUs are read the first time the pass needs
//! that node, so an attempt at level L reads only the level-L domain, and starting a pass
//! reads nothing. Levels already marked never due are skipped at once, and the CPU's own
//! load (busy or idle, for the busy factor) is read only for a level past its idle due time
//! (`due_at(false) ≤ due_at(true)`). A pass with nothing due therefore reads at most that
//! one load and allocates nothing. None of this changes a decision: the pass sees the same
//! figures and takes the same steps.
//!
//! # New-idle (`sched_balance_newidle`)
//!
//! Bottom-up over the same levels, ignoring intervals and `should_we_balance`, the CPU
//! counts as idle, at most one task per level; the walk stops at the first level that
//! yields. State is read (for `nr_balance_failed`) but not changed.
//!
//! # Placement
//!
//! Fork placement: see [`place`]. Wake-up placement (`select_task_rq` at wake-up, both
//! eras, and the conservative filter as the waking task's affinity mask): see [`wake`].
//!
//! Fork placement and new-idle balancing follow `Balancer::placement_rules` and
//! `Balancer::newidle_rules`: the move rules with the filter (`placement = "zone"`, the
//! default), or without it (`"paper"`: the paper's "usual manner", so both decide exactly
//! as `linux` of the same era; only the periodic walk, the steal side and wake-ups keep
//! the filter).
//!
//! # The ablation
//!
//! `linux` with the switches of [`Mechanism`](crate::Mechanism) (`zone_periodic`,
//! `origin_check`, `ageing`, `placement_rule`, `newidle_zone`, `fork_zone`, `wake_zone`)
//! runs one mechanism of the conservative policies at a time: the first three put a filter
//! of their own on the periodic walk (and the steal side), `newidle_zone` the hard zone on
//! new-idle balancing, `fork_zone` the hard zone on fork placement (the affinity mask),
//! `placement_rule` the soft zone's 150% rule (and nothing else) on fork placement,
//! `wake_zone` the hard zone on wake-up placement. Without `wake_zone`, wake-ups stay
//! `linux`'s.
//!
//! # Eras
//!
//! Everything above is the modern kernel. `linux_era = "2.6"` ([`era`]) switches off
//! `should_we_balance`, makes NUMA-level groups single nodes, uses 2.6's intervals, busiest-
//! and idlest-group arithmetic and active balancing, and lets fork placement reach every
//! level; new-idle balancing walks every level, as x86_64's `SD_NODE_INIT` asks
//! (`SD_BALANCE_NEWIDLE`).
//!
//! [`LevelState`]: crate::LevelState
//! [`Attempt`]: crate::Attempt

pub(crate) mod era;
mod groups;
mod pass;
mod place;
mod selection;
mod wake;

use std::sync::Arc;

use zonal_topology::{CpuId, Level, Topology};

use crate::config::{ConfigField, Fields, ImbalanceRule, PlacementMode, PolicyConfig};
use crate::decision::{AttemptOutcome, BalanceOutcome, Placement};
use crate::filters::{ConservativeFilter, ZoneMode};
use crate::policy::{BalanceSide, CpuPass, Policy, StealSide, WakeUp};
use crate::rng::Rng;
use crate::rules::MoveRules;
use crate::state::CpuBalanceState;
use crate::view::{MachineView, TaskMeta};

pub(crate) use era::LinuxEra;
pub(crate) use groups::{is_idle, with_scratch, Loads};
pub(crate) use pass::NR_MIGRATE_MAX;
pub(crate) use selection::{
    Candidates, Centralised, Guard, MachinePass, Selection, Tail, WholeMachine,
};

use pass::{AttemptAt, Attempter, IdleKind};

/// The default imbalance threshold at NUMA levels, percent (the paper's 25%; Linux ≥ 5.x
/// uses 17).
pub const DEFAULT_NUMA_IMBALANCE_PCT: u32 = 25;
/// The imbalance threshold at level I (Linux's MC/PKG `imbalance_pct` 117).
pub const LOCAL_IMBALANCE_PCT: u32 = 17;
/// Linux's `RECLAIM_DISTANCE`: no fork balancing across larger distances.
pub const RECLAIM_DISTANCE: u32 = 30;

pub(crate) use crate::state::NEVER_DUE_US as NEVER;

/// The constants of the Linux walk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LinuxParams {
    /// Threshold at levels ≥ II, percent.
    pub(crate) numa_pct: u32,
    /// Threshold at level I, percent.
    pub(crate) local_pct: u32,
    /// Tasks examined per attempt.
    pub(crate) nr_migrate: usize,
    /// Largest distance fork balancing spans.
    pub(crate) fork_max_distance: u32,
    /// The kernel imitated: the busiest-group and idlest-group arithmetic, active balancing,
    /// the too-heavy skip and the intervals ([`era`]).
    pub(crate) era: LinuxEra,
    /// How the 2.6 era finds an imbalance ([`era::decide`]); `Kernel` under the modern era.
    pub(crate) rule: ImbalanceRule,
    /// Groups at NUMA levels are single nodes (2.6) instead of the level-below spans.
    pub(crate) single_node_groups: bool,
    /// Only the first idle CPU of the local group balances (modern `should_we_balance`).
    pub(crate) should_we_balance: bool,
}

impl Default for LinuxParams {
    fn default() -> Self {
        Self {
            numa_pct: DEFAULT_NUMA_IMBALANCE_PCT,
            local_pct: LOCAL_IMBALANCE_PCT,
            nr_migrate: NR_MIGRATE_MAX,
            fork_max_distance: RECLAIM_DISTANCE,
            era: LinuxEra::Modern,
            rule: ImbalanceRule::Kernel,
            single_node_groups: false,
            should_we_balance: true,
        }
    }
}

impl LinuxParams {
    /// The constants of an era ([`era`]); the NUMA threshold is the paper's 25 % in both.
    pub(crate) fn of_era(e: LinuxEra) -> Self {
        match e {
            LinuxEra::Modern => Self::default(),
            LinuxEra::V2_6 => Self {
                local_pct: era::IMBALANCE_PCT_2_6,
                numa_pct: era::IMBALANCE_PCT_2_6,
                fork_max_distance: u32::MAX,
                era: e,
                single_node_groups: true,
                should_we_balance: false,
                ..Self::default()
            },
        }
    }

    /// The era's defaults, with the config's NUMA imbalance threshold and imbalance rule.
    pub(crate) fn from_config(cfg: &PolicyConfig) -> Self {
        let base = Self::of_era(cfg.linux_era);
        Self {
            numa_pct: cfg.numa_imbalance_pct.unwrap_or(base.numa_pct),
            rule: cfg.imbalance_rule,
            ..base
        }
    }

    /// The state a CPU starts with: modern intervals (span weight in ms, busy factor 16), or
    /// the 2.6 era's `SD_CPU_INIT` / `SD_NODE_INIT` ones.
    pub(crate) fn new_state(&self, topo: &Topology, cpu: CpuId) -> CpuBalanceState {
        let mut st = CpuBalanceState::new(topo, cpu);
        if self.era == LinuxEra::V2_6 {
            for (l, s) in st.levels.iter_mut().enumerate() {
                *s = era::level_state(Level(l as u8));
            }
        }
        st
    }

    /// Linux's `imbalance_pct` of a level (100 + threshold); the soft zone doubles the
    /// threshold beyond the zone.
    pub(crate) fn imbalance_pct(&self, level: Level, soft_beyond_zone: bool) -> u32 {
        100 + match (level.0, soft_beyond_zone) {
            (0, _) => self.local_pct,
            (_, false) => self.numa_pct,
            (_, true) => 2 * self.numa_pct,
        }
    }
}

/// Linux's halved imbalance margin `100 + (pct − 100)/2` (112 for `imbalance_pct` 125): how
/// much more loaded the other side must be before a wake-up (`wake_affine_weight`, 2.6's
/// `try_to_wake_up`) or a fork (2.6's `find_idlest_group`) leaves the local one.
#[inline]
#[must_use]
pub(crate) const fn halved_margin(pct: u32) -> u32 {
    100 + pct.saturating_sub(100) / 2
}

/// Linux's balancer, optionally behind the conservative filter, parameterised by a
/// [`Selection`]: `linux`, `conservative-hard` and `conservative-soft` ([`Tail`]), and the
/// policies that build on the walk (`thread-aware`, `numalb`, `average-weight`).
#[derive(Clone, Debug)]
pub(crate) struct Balancer<S: Selection = Tail> {
    name: String,
    pub(crate) params: LinuxParams,
    pub(crate) rules: MoveRules,
    /// The rules fork placement follows: `rules`, or under `placement = "paper"` the same
    /// without the filter (as `linux` decides them).
    pub(crate) placement_rules: MoveRules,
    /// The rules new-idle balancing follows: as `placement_rules`, or for `linux` with the
    /// ablation switch `newidle_zone` the hard zone alone.
    pub(crate) newidle_rules: MoveRules,
    /// The filter wake-up placement follows (the waking task's affinity mask): `rules`'s,
    /// except for `linux`, which wakes as `linux` does unless the ablation switch
    /// `wake_zone` puts the hard zone alone there.
    pub(crate) wake_filter: Option<ConservativeFilter>,
    /// The soft zone's 150% rule at fork placement without the filter (`linux` with the
    /// ablation switch `placement_rule`).
    pub(crate) placement_rule: bool,
    selection: S,
}

/// The parameters of the Linux walk itself, read by [`LinuxParams::from_config`] for every
/// policy built on the walk: its era, its imbalance rule and its NUMA imbalance threshold.
pub(crate) const WALK_ACCEPTS: Fields = Fields::of(&[
    ConfigField::NumaImbalancePct,
    ConfigField::LinuxEra,
    ConfigField::ImbalanceRule,
]);

/// The conservative filter's parameters ([`PolicyConfig::filter`]): its origin rule and age
/// limit, `conservative_filters` itself, and `placement` (whether the filter also restricts
/// fork placement and new-idle balancing, [`Balancer::from_config`]).
pub(crate) const FILTER_ACCEPTS: Fields = Fields::of(&[
    ConfigField::Origin,
    ConfigField::AgeLimit,
    ConfigField::ConservativeFilters,
    ConfigField::Placement,
]);

/// Linux's automatic NUMA balancing, which the drivers run for the modern Linux baselines
/// (`NumaBalancing::from_config`): the switch and its two sysctls.
pub(crate) const NUMA_BALANCING_ACCEPTS: Fields = Fields::of(&[
    ConfigField::NumaBalancing,
    ConfigField::NumaScanDelayMs,
    ConfigField::NumaScanPeriodMinMs,
]);

/// The ablation's switches ([`Mechanism`](crate::Mechanism)): `linux` with one mechanism
/// of the conservative policies on ([`PolicyConfig::mechanism_filters`],
/// [`Balancer::from_config`]).
pub(crate) const MECHANISM_ACCEPTS: Fields = crate::Mechanism::FIELDS;

/// What `linux` takes: the walk's parameters, NUMA balancing and the ablation's switches
/// (no filter: refused).
pub(crate) const ACCEPTS: Fields = WALK_ACCEPTS
    .union(NUMA_BALANCING_ACCEPTS)
    .union(MECHANISM_ACCEPTS);

/// What `conservative-hard` and `conservative-soft` take: the walk's parameters and the
/// filter's.
pub(crate) const CONSERVATIVE_ACCEPTS: Fields = WALK_ACCEPTS.union(FILTER_ACCEPTS);

/// `linux` (catalogue constructor), with the ablation's switches if any are on.
pub(crate) fn build(cfg: &PolicyConfig) -> Arc<dyn Policy> {
    let m = cfg.mechanism_filters();
    let mut b = Balancer::from_config(cfg, m.periodic, Tail);
    // Each switch restricts only what it names: new-idle balancing, fork placement and
    // wake-ups stay `linux`'s unless a switch of their own says otherwise.
    b.placement_rules.filter = m.fork;
    b.newidle_rules.filter = m.new_idle;
    b.wake_filter = m.wake;
    b.placement_rule = cfg.placement_rule;
    Arc::new(b)
}

/// `conservative-hard` and `conservative-soft` (catalogue constructors): the Linux walk
/// behind the conservative filter.
pub(crate) fn build_conservative(cfg: &PolicyConfig, zone: ZoneMode) -> Arc<dyn Policy> {
    Arc::new(Balancer::from_config(cfg, Some(cfg.filter(zone)), Tail))
}

impl<S: Selection> Balancer<S> {
    /// The balancer a config describes, with the given filter and selection.
    pub(crate) fn from_config(
        cfg: &PolicyConfig,
        filter: Option<ConservativeFilter>,
        selection: S,
    ) -> Self {
        let rules = MoveRules {
            filter,
            cache_hot: true,
        };
        let mut b = Self::new(
            cfg.display_name(),
            LinuxParams::from_config(cfg),
            rules,
            selection,
        );
        if cfg.placement == PlacementMode::Paper {
            // The paper's "usual manner": placement and new-idle as `linux` of the era.
            b.placement_rules.filter = None;
            b.newidle_rules.filter = None;
        }
        b
    }

    pub(crate) fn new(
        name: impl Into<String>,
        params: LinuxParams,
        rules: MoveRules,
        selection: S,
    ) -> Self {
        Self {
            name: name.into(),
            params,
            rules,
            placement_rules: rules,
            newidle_rules: rules,
            wake_filter: rules.filter,
            placement_rule: false,
            selection,
        }
    }

    /// The attempter of the periodic walk (`rules`), or of new-idle balancing
    /// (`newidle_rules`).
    fn attempter<'a>(&'a self, rules: &'a MoveRules) -> Attempter<'a, S> {
        Attempter {
            params: &self.params,
            rules,
            selection: &self.selection,
        }
    }

    /// Whether a walk under `rules` may go to `level`.
    fn level_allowed(rules: &MoveRules, topo: &Topology, level: Level) -> bool {
        rules.filter.is_none_or(|f| f.level_allowed(topo, level))
    }

    /// Runs `f` over the loads a pass reads (the thread's scratch, the era's groups).
    fn with_loads<R>(&self, view: &dyn MachineView, f: impl FnOnce(&mut Loads<'_, '_>) -> R) -> R {
        with_scratch(|s| {
            let mut loads = Loads::new(view, s);
            loads.single_node_groups = self.params.single_node_groups;
            f(&mut loads)
        })
    }

    /// The periodic walk (module docs).
    pub(crate) fn periodic(
        &self,
        view: &dyn MachineView,
        state: &mut CpuBalanceState,
    ) -> BalanceOutcome {
        let cpu = state.cpu;
        let topo = view.topology();
        let node = topo.node_of(cpu);
        let now = view.now_us();
        let m = topo.mal_count().min(state.levels.len());
        let mut out = BalanceOutcome::default();
        let attempter = self.attempter(&self.rules);
        self.with_loads(view, |loads| {
            for l in 0..m {
                if state.levels[l].next_due_us == NEVER {
                    // Never attempted (beyond the zone, degenerate, or `due_at` ≥ 2^63);
                    // levels past a zone's end are all marked, so skipping them is exact.
                    continue;
                }
                let level = Level(l as u8);
                if !Self::level_allowed(&self.rules, topo, level) {
                    // Never walked: tell the caller not to wake up for these levels.
                    state.levels[l..]
                        .iter_mut()
                        .for_each(|s| s.next_due_us = NEVER);
                    break;
                }
                if loads.degenerate(node, level) {
                    state.levels[l].next_due_us = NEVER;
                    continue;
                }
                let st = &mut state.levels[l];
                // `due_at(false) ≤ due_at(true)`: read our own load only when it matters.
                if now < st.due_at(false) {
                    continue;
                }
                let busy = !is_idle(&loads.cpu(cpu));
                if now < st.due_at(busy) {
                    continue;
                }
                if self.params.should_we_balance && !should_we_balance(loads, cpu, level) {
                    // Another CPU balances this level: for us it counts as balanced.
                    st.record(AttemptOutcome::Balanced, now);
                    break;
                }
                let idle = if busy { IdleKind::Busy } else { IdleKind::Idle };
                let at = AttemptAt {
                    cpu,
                    level,
                    idle,
                    nr_balance_failed: st.nr_balance_failed,
                };
                let a = attempter.attempt(loads, at, &mut out);
                let active = a.active;
                st.record(a.attempt.outcome, now);
                if active {
                    // 2.6: after kicking active balancing, `nr_balance_failed =
                    // cache_nice_tries + 1` and the interval backs off (doubles).
                    st.record_active(era::failed_after_active(level), now);
                }
                out.attempts.push(a.attempt);
            }
        });
        out
    }

    /// New-idle balancing (module docs).
    pub(crate) fn new_idle(
        &self,
        view: &dyn MachineView,
        state: &CpuBalanceState,
    ) -> BalanceOutcome {
        let cpu = state.cpu;
        let topo = view.topology();
        let node = topo.node_of(cpu);
        let m = topo.mal_count();
        let mut out = BalanceOutcome::default();
        let rules = &self.newidle_rules;
        let attempter = self.attempter(rules);
        self.with_loads(view, |loads| {
            for l in 0..m {
                let level = Level(l as u8);
                if !Self::level_allowed(rules, topo, level) {
                    break;
                }
                if loads.degenerate(node, level) {
                    continue;
                }
                let failed = state.levels.get(l).map_or(0, |s| s.nr_balance_failed);
                let at = AttemptAt {
                    cpu,
                    level,
                    idle: IdleKind::NewlyIdle,
                    nr_balance_failed: failed,
                };
                let a = attempter.attempt(loads, at, &mut out);
                out.attempts.push(a.attempt);
                if a.attempt.succeeded() {
                    break;
                }
            }
        });
        out
    }

    /// Fork placement ([`place`]).
    pub(crate) fn placement(&self, view: &dyn MachineView, parent: CpuId) -> Placement {
        let topo = view.topology();
        let mut top = place::fork_level(topo, self.params.fork_max_distance);
        let rules = &self.placement_rules;
        while top.0 > 0 && !Self::level_allowed(rules, topo, top) {
            top = Level(top.0 - 1);
        }
        self.with_loads(view, |loads| {
            place::place(loads, parent, top, &self.params, rules, self.placement_rule)
        })
    }

    /// Wake-up placement ([`wake`]).
    pub(crate) fn wake(&self, view: &dyn MachineView, wake: WakeUp<'_>) -> CpuId {
        wake::select(self, view, wake)
    }
}

/// Whether the level-`level` domain of `node` is degenerate (Linux removes it): one CPU
/// at level I, or the same span as the level below.
pub(crate) fn degenerate(topo: &Topology, node: zonal_topology::NodeId, level: Level) -> bool {
    if level.0 == 0 {
        let cpus: usize = topo
            .span(node, level)
            .iter()
            .map(|&n| topo.cpus_of(n).len())
            .sum();
        cpus <= 1
    } else {
        topo.span(node, level).len() == topo.span(node, Level(level.0 - 1)).len()
    }
}

/// Linux's `should_we_balance` for a periodic pass at `level`: in the local group (the
/// level below's span), the first idle CPU balances, or the group's first CPU when none
/// idles.
///
/// Equivalently, and cheaper for the common busy CPU: a busy CPU balances only when it is
/// the group's first CPU and no CPU of the group idles; an idle CPU balances when no CPU
/// of the group below it idles. (The group always holds `cpu`.)
fn should_we_balance(loads: &Loads<'_, '_>, cpu: CpuId, level: Level) -> bool {
    if level.0 == 0 {
        return true;
    }
    let topo = loads.topo;
    let span = topo.span(topo.node_of(cpu), Level(level.0 - 1));
    let idle_where = |pred: &dyn Fn(CpuId) -> bool| {
        span.iter().any(|&n| {
            topo.cpus_of(n)
                .iter()
                .any(|&c| pred(c) && is_idle(&loads.cpu(c)))
        })
    };
    if is_idle(&loads.cpu(cpu)) {
        return !idle_where(&|c| c < cpu);
    }
    let first = span
        .iter()
        .filter_map(|&n| topo.cpus_of(n).iter().min())
        .min();
    first == Some(&cpu) && !idle_where(&|_| true)
}

impl<S: Selection> Policy for Balancer<S> {
    fn name(&self) -> &str {
        &self.name
    }

    fn steal_side(&self) -> &dyn StealSide {
        &self.rules
    }

    fn balance_side(&self) -> Option<&dyn BalanceSide> {
        Some(self)
    }
}

impl<S: Selection> BalanceSide for Balancer<S> {
    fn balance(&self, pass: CpuPass<'_>) -> BalanceOutcome {
        match self.selection.whole_machine() {
            Some(w) => selection::whole_machine_pass(w, &self.rules, pass),
            None => self.periodic(pass.view, pass.state),
        }
    }

    fn idle_balance(&self, pass: CpuPass<'_>) -> BalanceOutcome {
        self.new_idle(pass.view, pass.state)
    }

    fn place(
        &self,
        view: &dyn MachineView,
        parent: CpuId,
        _task: &TaskMeta,
        _rng: &mut Rng,
    ) -> Placement {
        self.placement(view, parent)
    }

    fn select_wake(&self, view: &dyn MachineView, wake: WakeUp<'_>, _rng: &mut Rng) -> CpuId {
        self.wake(view, wake)
    }

    fn new_state(&self, topo: &Topology, cpu: CpuId) -> CpuBalanceState {
        self.params.new_state(topo, cpu)
    }
}

#[cfg(test)]
mod test;
