//! Which kernel the Linux baseline imitates: modern Linux (the default, docs/reference/linux-lb.md)
//! or the 2.6-era balancer the conservative paper (Mehta & Kanungo) compared against.
//!
//! # Why an era
//!
//! Modern Linux keeps work near home: fork balancing stops at `RECLAIM_DISTANCE`,
//! `should_we_balance` lets one CPU per group balance, NUMA groups are the overlapping
//! spans of the level below, and busy CPUs balance 16× less often. On the paper's S1 machine
//! our modern baseline runs processes at levels V–VI for about 1% of their run time; the
//! paper's Table 2 puts 21% of its processes there. The paper's kernel was a 2.6 kernel
//! (O(1) scheduler, `sched_balance_self`, `find_busiest_group` on raw loads).
//!
//! # What `2.6` changes, and where
//!
//! Every difference is a parameter of [`LinuxParams`](super::LinuxParams) read by the
//! shared walk (`mod.rs`), pass (`pass.rs`), groups (`groups.rs`) and placement
//! (`place.rs`); the 2.6 arithmetic itself is in this file.
//!
//! | mechanism | modern | 2.6 | where |
//! |---|---|---|---|
//! | groups at NUMA levels | spans of the level below (overlapping) | one group per node of the domain | `Loads::build_groups` (`single_node_groups`) |
//! | who balances | `should_we_balance`: first idle CPU of the local group | every CPU (2.6's `rebalance_tick` has no such check) | `Balancer::periodic` |
//! | intervals | min = span weight ms, max = 2×, busy factor 16 | `SD_NODE_INIT` at NUMA levels: 8–32 ms, busy factor 32; `SD_CPU_INIT` at level I: 1–4 ms, busy factor 64 | [`level_state`], `Balancer::new_state` |
//! | `imbalance_pct` | 125 at NUMA levels (the paper's 25 %), 117 at level I | 125 at every level | `LinuxParams::imbalance_pct` |
//! | busiest group and imbalance | group classes (v5.5 rework) | [`decide`]: raw average loads, the busiest group's excess over the domain average | `pass.rs` |
//! | too-heavy skip | `weight >> nr_balance_failed > remaining` | `weight / 2 > remaining` (`skip_for_load`) | `pass.rs` |
//! | active balance | not modelled | after more than `cache_nice_tries + 2` failures, one task from the busiest CPU | `Attempter::active`, `pass.rs` |
//! | new-idle | every level | every level (x86_64's `SD_NODE_INIT` has `SD_BALANCE_NEWIDLE`) | `Balancer::new_idle` |
//! | fork placement | up to `RECLAIM_DISTANCE`, group types | every level (`SD_BALANCE_FORK` at the node domain), least loaded group if `100·local ≥ (100 + (pct−100)/2)·idlest` | [`idlest_group`], `place.rs` |
//!
//! # The constants and their sources
//!
//! From Linux 2.6 (`include/asm-x86_64/topology.h` for `SD_NODE_INIT`,
//! `include/linux/sched.h` / `include/linux/topology.h` for `SD_CPU_INIT`, `kernel/sched.c`
//! for the arithmetic). The `SD_NODE_INIT` and `SD_CPU_INIT` values below were checked
//! against public copies of those headers (x86_64's node domain, 2.6.x, and the generic
//! CPU domain of 2.6.5–2.6.18); the arithmetic of `find_busiest_group`,
//! `sched_balance_self` and active balancing is written from our reading of `sched.c`
//! and was not checked line by line. They are named constants so that a reader with the
//! sources can correct them in one place.
//!
//! - `SD_NODE_INIT` (x86_64): `min_interval` 8 ms ([`NODE_MIN_INTERVAL_MS`]),
//!   `max_interval` 32 ms ([`NODE_MAX_INTERVAL_MS`]), `busy_factor` 32
//!   ([`NODE_BUSY_FACTOR`]), `imbalance_pct` 125, `cache_hot_time` 10 ms,
//!   `cache_nice_tries` 1 ([`CACHE_NICE_TRIES_2_6`]); flags `SD_LOAD_BALANCE |
//!   SD_BALANCE_NEWIDLE | SD_BALANCE_EXEC | SD_WAKE_IDLE | SD_WAKE_BALANCE`. (The generic
//!   `SD_NODE_INIT` of 2.6.5 had no `SD_BALANCE_NEWIDLE` and `max_interval` 256 × fls(CPUs);
//!   ia64's used 80–320 ms in 2.6.8: we follow x86_64.) A busy CPU therefore balances
//!   each NUMA level about once per 8 × 32 = 256 ms, up to once per 32 × 32 ≈ 1 s when the
//!   level keeps finding balance.
//! - `SD_CPU_INIT` (the node's CPUs): `min_interval` 1 ms, `max_interval` 4 ms,
//!   `busy_factor` 64, `imbalance_pct` 125, `cache_hot_time` 2.5 ms, `cache_nice_tries` 1
//!   ([`CPU_MIN_INTERVAL_MS`], [`CPU_MAX_INTERVAL_MS`], [`CPU_BUSY_FACTOR`]).
//! - `SCHED_LOAD_SCALE` 1024 (a nice-0 task's load); `SCHED_LOAD_SCALE_FUZZ`: we use 0
//!   ([`SCHED_LOAD_SCALE_FUZZ`]; its value changed across 2.6 releases).
//! - `sched_balance_self` / `find_idlest_group`: `imbalance = 100 + (imbalance_pct − 100)/2`
//!   (112 at `imbalance_pct` 125); the idlest group wins unless
//!   `100 · this_load < imbalance · min_load`.
//! - `SD_NODES_PER_DOMAIN` 16: 2.6's node domain spans a node's 16 nearest nodes, and an
//!   `ALLNODES` domain spans the rest. On S1 and S2 (16 nodes) that node domain is our top
//!   level. We keep one domain per memory access level (every NUMA level balanced with
//!   single-node groups and the node domain's timings), so that the conservative zone can
//!   clip levels as on the modern walk: the lower NUMA levels are domains 2.6 did not have.
//!
//! # Not modelled
//!
//! - `source_load`/`target_load` (2.6 reads a decayed `cpu_load[idx]` and takes the minimum
//!   of it and the instant load for a source, the maximum for a target): we use the view's
//!   instant `weighted_load` for both.
//! - After a pull at a level, 2.6's `rebalance_tick` treats the CPU as busy at higher
//!   levels; we keep its state for the whole walk, as the modern walk does.
//! - Active balance moves a task at once (2.6 wakes the busiest CPU's migration thread,
//!   which then pushes one task, cache-hot or not: `nr_balance_failed` is left above
//!   `cache_nice_tries`). The migration thread preempts the running task, so the task pushed
//!   may be the one that was running: we take the queue's tail first and the running task
//!   last, skipping pinned tasks and those the conservative filter refuses; the simulator
//!   cuts the running segment of a running task it moves.
//! - Decayed `cpu_load[idx]` is not read by the policy: the simulator's 2.6 cost model
//!   gives periodic balancing lagged loads instead (`zonal-sim`'s `Linux26Cost`).
//!
//! # Cache-hot tasks
//!
//! 2.6's `can_migrate_task` (2.6.18 `kernel/sched.c`) refuses a queued task while
//! `task_hot(p, now, sd)`, i.e. `now − p->last_ran < sd->cache_hot_time`, unless
//! `sd->nr_balance_failed > sd->cache_nice_tries`. `cache_hot_time` is 10 ms in x86_64's
//! `SD_NODE_INIT` ([`NODE_CACHE_HOT_TIME_US`]) and 2.5 ms in `SD_CPU_INIT`
//! ([`CPU_CACHE_HOT_TIME_US`]). [`task_hot`] applies it on top of the shared move rules
//! (whose 0.5 ms modern horizon is shorter); active balance ignores it, as 2.6's does.
//! - Wake-up placement (`SD_WAKE_AFFINE`, `SD_WAKE_BALANCE`, `wake_idle`) is modelled in
//!   `wake.rs` (`try_to_wake_up`'s choice between the waker and the previous CPU), with the
//!   wake flags of these initialisers.

use zonal_topology::Level;

pub(crate) use crate::config::{ImbalanceRule, LinuxEra};
use crate::state::LevelState;

use super::groups::GroupStat;

/// `SD_NODE_INIT.min_interval`, ms (x86_64).
pub(crate) const NODE_MIN_INTERVAL_MS: u64 = 8;
/// `SD_NODE_INIT.max_interval`, ms (x86_64).
pub(crate) const NODE_MAX_INTERVAL_MS: u64 = 32;
/// `SD_NODE_INIT.busy_factor` (x86_64).
pub(crate) const NODE_BUSY_FACTOR: u64 = 32;
/// `cache_nice_tries` of `SD_CPU_INIT` and of x86_64's `SD_NODE_INIT` alike.
pub(crate) const CACHE_NICE_TRIES_2_6: u32 = 1;
/// `SD_CPU_INIT.min_interval`, ms.
pub(crate) const CPU_MIN_INTERVAL_MS: u64 = 1;
/// `SD_CPU_INIT.max_interval`, ms.
pub(crate) const CPU_MAX_INTERVAL_MS: u64 = 4;
/// `SD_CPU_INIT.busy_factor`.
pub(crate) const CPU_BUSY_FACTOR: u64 = 64;
/// `imbalance_pct − 100` of `SD_CPU_INIT` and `SD_NODE_INIT`: 125 at every level.
pub(crate) const IMBALANCE_PCT_2_6: u32 = 25;
/// `SD_NODE_INIT.cache_hot_time` (x86_64, 2.6.x: `10*1000000` ns), µs.
pub(crate) const NODE_CACHE_HOT_TIME_US: u64 = 10_000;
/// `SD_CPU_INIT.cache_hot_time` (2.6.x: `5*1000000/2` ns), µs.
pub(crate) const CPU_CACHE_HOT_TIME_US: u64 = 2_500;

/// 2.6's `task_hot` as `can_migrate_task` applies it: a task that last ran less than the
/// level's `cache_hot_time` before `now_us` is hot, unless the level has failed more than
/// `cache_nice_tries` times in a row (`nr_balance_failed`). A task that never ran is cold.
pub(crate) fn task_hot(
    level: Level,
    last_ran_us: Option<u64>,
    now_us: u64,
    nr_balance_failed: u32,
) -> bool {
    if nr_balance_failed > CACHE_NICE_TRIES_2_6 {
        return false;
    }
    let horizon = if level.0 == 0 {
        CPU_CACHE_HOT_TIME_US
    } else {
        NODE_CACHE_HOT_TIME_US
    };
    last_ran_us.is_some_and(|ran| now_us.saturating_sub(ran) < horizon)
}

/// `SCHED_LOAD_SCALE`: the load of one nice-0 task.
pub(crate) const SCHED_LOAD_SCALE: i64 = 1024;
/// `SCHED_LOAD_SCALE_FUZZ` of the small-imbalance check (0 here; its value changed across
/// 2.6 releases).
pub(crate) const SCHED_LOAD_SCALE_FUZZ: i64 = 0;

/// The initial state of one level in the 2.6 era: `SD_CPU_INIT` at level I, `SD_NODE_INIT`
/// at NUMA levels.
#[must_use]
pub(crate) fn level_state(level: Level) -> LevelState {
    let (min, max, busy) = if level.0 == 0 {
        (CPU_MIN_INTERVAL_MS, CPU_MAX_INTERVAL_MS, CPU_BUSY_FACTOR)
    } else {
        (NODE_MIN_INTERVAL_MS, NODE_MAX_INTERVAL_MS, NODE_BUSY_FACTOR)
    };
    LevelState {
        interval_us: min * 1000,
        min_interval_us: min * 1000,
        max_interval_us: max * 1000,
        next_due_us: min * 1000,
        nr_balance_failed: 0,
        busy_factor: busy,
    }
}

/// What 2.6's `find_busiest_group` decides for the busiest group it found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Verdict {
    /// Nothing to do.
    Balanced,
    /// Stopped by `imbalance_pct` (`100·max_load ≤ pct·this_load`).
    BelowThreshold,
    /// Move this much load (weight units).
    Load(i64),
}

/// 2.6's `find_busiest_group` after the group scan (2.6.18 `kernel/sched.c`):
///
/// ```text
/// balanced if !busiest, this_load ≥ max_load, or busiest runs nothing
/// avg_load = domain load / domain CPUs
/// balanced if this_load ≥ avg_load;  below threshold if 100·max_load ≤ pct·this_load
/// busiest_load_per_task = busiest load / its tasks;  balanced if max_load ≤ that
/// max_pull  = min(max_load − avg_load, max_load − busiest_load_per_task)
/// imbalance = min(max_pull · busiest CPUs, (avg_load − this_load) · local CPUs)
/// if imbalance < busiest_load_per_task: small_imbalance (below)
/// ```
///
/// `small_imbalance`: with `imbn = 2` (1 when the busiest group's tasks are heavier than
/// ours), move one of the busiest group's tasks if `max_load − this_load + FUZZ ≥
/// busiest_load_per_task · imbn`; otherwise only if moving it raises the CPU power used
/// (`pwr_move > pwr_now`). Loads are per CPU (`avg_load` with `cpu_power` = 1024 per CPU).
/// `busiest` is the busiest non-local group among those running more tasks than they have
/// CPUs ([`busier`]).
///
/// Under [`ImbalanceRule::Threshold`] (the paper's description of its Linux: "periodic
/// balancing, thresholds 25%, or 12% in some cases"), the checks up to the threshold are
/// the same, and past it the move is always made:
///
/// ```text
/// imbalance = max(min(max_load − avg_load, avg_load − this_load) · local CPUs,
///                 busiest_load_per_task)
/// ```
///
/// that is 2.6.9's `min(max − avg, avg − this)` without the `busiest_load_per_task` check
/// and the small-imbalance arithmetic, at least one task. It is where the two rules part:
/// the kernel's arithmetic refuses a one-task move that gains no CPU power (2 tasks on a
/// CPU against 1 here), the threshold rule makes it.
pub(crate) fn decide(
    rule: ImbalanceRule,
    local: &GroupStat,
    busiest: &GroupStat,
    domain_load: u64,
    domain_cpus: u32,
    pct: u32,
) -> Verdict {
    let this_load = local.avg();
    let max_load = busiest.avg();
    if this_load >= max_load || busiest.nr == 0 {
        return Verdict::Balanced;
    }
    let avg_load = domain_load as f64 / f64::from(domain_cpus.max(1));
    if this_load >= avg_load {
        return Verdict::Balanced;
    }
    if 100.0 * max_load <= f64::from(pct) * this_load {
        return Verdict::BelowThreshold;
    }
    let blpt = busiest.load as f64 / f64::from(busiest.nr);
    if rule == ImbalanceRule::Threshold {
        let toward_avg = (max_load - avg_load).min(avg_load - this_load) * f64::from(local.cpus);
        return Verdict::Load(toward_avg.max(blpt).ceil() as i64);
    }
    if max_load <= blpt {
        return Verdict::Balanced;
    }
    let (bc, lc) = (f64::from(busiest.cpus), f64::from(local.cpus));
    let imbalance = if max_load < avg_load {
        0.0
    } else {
        let max_pull = (max_load - avg_load).min(max_load - blpt);
        (max_pull * bc).min((avg_load - this_load) * lc)
    };
    if imbalance >= blpt {
        return Verdict::Load(imbalance as i64);
    }
    // small_imbalance
    let scale = SCHED_LOAD_SCALE as f64;
    let (imbn, tlpt) = if local.nr > 0 {
        let t = local.load as f64 / f64::from(local.nr);
        (if blpt > t { 1.0 } else { 2.0 }, t)
    } else {
        (2.0, scale)
    };
    if max_load - this_load + SCHED_LOAD_SCALE_FUZZ as f64 >= blpt * imbn {
        return Verdict::Load(blpt.ceil() as i64);
    }
    // Would moving one task raise the CPU power in use? (cpu_power = 1024 × CPUs.)
    let (bp, lp) = (bc * scale, lc * scale);
    let pwr_now = (bp * blpt.min(max_load) + lp * tlpt.min(this_load)) / scale;
    let mut pwr_move = 0.0;
    let sub = blpt * scale / bp;
    if max_load > sub {
        pwr_move += bp * blpt.min(max_load - sub);
    }
    let add = if max_load * bp < blpt * scale {
        max_load * bp / lp
    } else {
        blpt * scale / lp
    };
    pwr_move += lp * tlpt.min(this_load + add);
    pwr_move /= scale;
    if pwr_move > pwr_now {
        Verdict::Load(blpt.ceil() as i64)
    } else {
        Verdict::Balanced
    }
}

/// 2.6's group choice in `find_busiest_group`: a candidate must run more tasks than it has
/// CPUs (`sum_nr_running > group_capacity`); among candidates the highest average load.
pub(crate) fn busier(g: &GroupStat, cur: Option<&GroupStat>) -> bool {
    g.nr > g.cpus && cur.is_none_or(|c| g.avg() > c.avg())
}

/// 2.6's `find_idlest_group` over groups built local first: the non-local allowed group of
/// least average load (ties keep the nearer one), chosen unless
/// `100 · this_load < (100 + (pct − 100)/2) · min_load` (the `sd->imbalance_pct` halved
/// margin: 112 for 125).
pub(crate) fn idlest_group(
    groups: &[GroupStat],
    pct: u32,
    allowed: impl Fn(&GroupStat) -> bool,
) -> Option<&GroupStat> {
    let (local, rest) = groups.split_first()?;
    let mut idlest: Option<&GroupStat> = None;
    for g in rest {
        if idlest.is_none_or(|i| g.avg() < i.avg()) && allowed(g) {
            idlest = Some(g);
        }
    }
    let idlest = idlest?;
    let margin = super::halved_margin(pct);
    (100.0 * local.avg() >= f64::from(margin) * idlest.avg()).then_some(idlest)
}

/// Whether the 2.6 walk may actively balance after `failed` consecutive failures at
/// `level` (2.6: `nr_balance_failed > cache_nice_tries + 2`, counted after this failure).
pub(crate) fn active_due(_level: Level, failed_before: u32) -> bool {
    // `cache_nice_tries` is 1 at every level in 2.6 (`SD_CPU_INIT` and `SD_NODE_INIT`).
    failed_before + 1 > CACHE_NICE_TRIES_2_6 + 2
}

/// The failure count 2.6 leaves after kicking active balancing (`cache_nice_tries + 1`).
pub(crate) fn failed_after_active(_level: Level) -> u32 {
    CACHE_NICE_TRIES_2_6 + 1
}

#[cfg(test)]
mod test;
