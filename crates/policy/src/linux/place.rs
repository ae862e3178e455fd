//! Fork/exec placement (`sched_balance_find_dst_group` / `find_idlest_cpu`), as the paper
//! describes it: the least loaded CPU of the least loaded group of the parent's domain.
//!
//! # Which domain
//!
//! Linux clears fork/exec balancing on NUMA levels whose distance exceeds
//! `RECLAIM_DISTANCE` (30), so the domain is the highest level whose distance is at most 30
//! (level I when even the nearest remote level is farther). Policies with a hard zone clip it
//! to the zone. Linux then walks down level by level; we simplify to one step:
//!
//! 1. the groups of that domain ([`Loads::build_groups`]); the *idlest* group is the one in
//!    the lowest class (spare capacity first), then with the most idle CPUs (spare) or the
//!    lowest load per CPU (busy); ties keep the nearest group, the parent's own first;
//! 2. in it, the CPU with the fewest runnable tasks, then the least load; ties keep the
//!    parent, then the first in the group's order.

use zonal_topology::{CpuId, Level, Topology};

use crate::decision::Placement;

use super::groups::{GroupClass, GroupStat, Loads};

/// The highest level whose distance is at most `max_distance` (level I at least).
pub(super) fn fork_level(topo: &Topology, max_distance: u32) -> Level {
    let n = topo
        .levels()
        .iter()
        .take_while(|&&d| d <= max_distance)
        .count();
    Level(n.saturating_sub(1).min(usize::from(u8::MAX)) as u8)
}

fn idler(a: &GroupStat, b: &GroupStat) -> bool {
    let (ca, cb) = (a.class(), b.class());
    if ca != cb {
        return ca < cb;
    }
    if ca == GroupClass::HasSpare {
        // More idle CPUs per CPU is idler.
        return u64::from(a.idle) * u64::from(b.cpus) > u64::from(b.idle) * u64::from(a.cpus);
    }
    a.avg() < b.avg()
}

/// Places a task spawned on `parent` within its level-`top` domain.
pub(super) fn place(loads: &mut Loads<'_, '_>, parent: CpuId, top: Level) -> Placement {
    let topo = loads.topo;
    let level = if top.0 > 0 && loads.degenerate(topo.node_of(parent), top) {
        // A degenerate top level has one group: the level below decides.
        Level(top.0 - 1)
    } else {
        top
    };
    loads.build_groups(parent, level);
    let groups = &loads.s.groups;
    let mut best = groups[0];
    for g in &groups[1..] {
        if idler(g, &best) {
            best = *g;
        }
    }
    let mut choice: Option<(CpuId, (u32, u64))> = None;
    loads.for_each_cpu(&best, level, |c| {
        let l = loads.cpu(c);
        let key = (l.nr_running, l.weighted_load);
        let better = match choice {
            None => true,
            Some((cur, k)) => key < k || (key == k && c == parent && cur != parent),
        };
        if better {
            choice = Some((c, key));
        }
    });
    let cpu = choice.map_or(parent, |(c, _)| c);
    Placement {
        cpu,
        level: topo.level_between(parent, cpu),
    }
}
