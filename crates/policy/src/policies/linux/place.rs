//! Fork/exec placement: Linux's `sched_balance_find_dst_cpu` (`find_idlest_cpu` before
//! 6.10) walking down the domains with `sched_balance_find_dst_group` (`find_idlest_group`),
//! in the shape it has had since the v5.5 load-balance rework (group types instead of raw
//! loads).
//!
//! # The walk
//!
//! `cpu` starts as the parent's CPU and `L` as the highest fork-balancing level: the highest
//! level whose distance is at most `RECLAIM_DISTANCE` (Linux clears `SD_BALANCE_FORK` on
//! NUMA levels beyond it), clipped to the zone under the hard zone (the caller,
//! `Balancer::placement`). Then, while there is a level to try:
//!
//! 1. A degenerate level-`L` domain of `cpu` (one CPU, or the same span as the level below;
//!    Linux removes it) has a single group: go down to `L − 1`.
//! 2. Build the groups of `cpu`'s level-`L` domain ([`Loads::build_groups`]: the local group
//!    first, then the others nearest first) and pick the *idlest* non-local allowed group
//!    (`update_pick_idlest`): lowest group type (has_spare < fully_busy < overloaded, on
//!    task counts, [`GroupStat::class`]); among has_spare groups the most idle CPUs, then
//!    the lowest summed load; among busy groups the lowest load per CPU (`avg_load`). Ties
//!    keep the earlier, i.e. nearer, group.
//! 3. Compare it with the local group (`find_idlest_group`'s tail). Stay local (go down to
//!    `cpu`'s level `L − 1`) when
//!    - the local group's type is lower than the idlest group's;
//!    - both have spare capacity and `local.idle_cpus ≥ idlest.idle_cpus`;
//!    - both are fully busy or overloaded and, with `imbalance = 1024·(pct − 100)/100`
//!      (`pct` = the level's `imbalance_pct`: 125 at NUMA levels by default, the paper's
//!      25%, 117 at level I, the soft zone's doubled threshold beyond its zone):
//!      at a NUMA level (≥ II) `idlest.avg + imbalance ≥ local.avg` (the `SD_NUMA` rule
//!      the rework kept from v4.19); or `idlest.avg ≥ local.avg + imbalance`; or
//!      `100·local.avg ≤ pct·idlest.avg`. `avg` is the load per CPU, in CFS weight units
//!      (a nice-0 task = 1024, as the kernel's `avg_load` with capacity 1024 per CPU).
//!
//!    Otherwise the idlest group wins (also when its type is lower than the local group's).
//! 4. In the winning group take the idlest CPU (`sched_balance_find_dst_group_cpu`): the
//!    only CPU of a one-CPU group; otherwise the first idle CPU in the group's member order
//!    (the span of its first node, nearest first), else the CPU with the least load, then
//!    the fewest tasks, then the first.
//! 5. Continue in that CPU's own domains: `cpu` becomes it, and `L` the highest level
//!    (at most the current one) whose domain of the new CPU spans fewer CPUs than the domain
//!    just balanced (`for_each_domain … if (weight <= tmp->span_weight) break`). When there
//!    is none, or the walk went below level I, `cpu` is the placement.
//!
//! Under `placement = "paper"` the walk runs without the filter (the caller passes the
//! rules without it): no hard-zone mask, no soft rule below, exactly `linux`'s placement.
//!
//! Under the soft zone, a group with no node in the parent's zone is also refused, at any
//! level of the walk (overlapping domains let a walk that moved reach such groups at low
//! levels), unless the local group's load per CPU exceeds 150% of that group's
//! (`soft_may_leave`, the steal side's soft test): work leaves the zone only from a clearly
//! busier place. `linux` with the ablation switch `placement_rule` applies this rule alone:
//! no filter, every threshold `linux`'s.
//!
//! An idle machine therefore keeps a task on its parent's CPU; a task goes remote only
//! when the local group is in a worse state than the idlest one, or, in the same state, has
//! fewer idle CPUs or is clearly more loaded.
//!
//! NUMA domains overlap, so once the walk has moved to a CPU of another node, that CPU's
//! domains may reach nodes outside the parent's top domain: as in Linux, `linux` can place
//! a task farther from its parent than `RECLAIM_DISTANCE`. Under the hard zone the zone of
//! the parent's node acts as the task's affinity mask (Linux's `p->cpus_ptr`): groups
//! without a CPU in it are skipped and only its CPUs are picked, so `conservative-hard`
//! never places beyond its zone. Group statistics still cover whole groups.
//!
//! # The 2.6 era
//!
//! `linux_era = "2.6"` keeps the walk and changes three things ([`super::era`]): `L`
//! starts at the top level (2.6's node domain has `SD_BALANCE_FORK`; no `RECLAIM_DISTANCE`
//! cut), NUMA-level groups are single nodes, and step 3 is 2.6's `find_idlest_group`: the
//! non-local group with the least load per CPU wins unless
//! `100·local.avg < (100 + (pct − 100)/2)·idlest.avg` (112 at `imbalance_pct` 125), with no
//! group types. A task forked on a loaded node therefore goes to the least loaded node of
//! the whole machine when that node is about 12% less loaded, however far it is.
//!
//! # What it leaves out
//!
//! - The NUMA-locality rules of the has_spare case at `SD_NUMA` levels: the rework's first
//!   version stayed local whenever the local group had an idle CPU, later kernels keep the
//!   task local while the local group runs few tasks (`allow_numa_imbalance`, then
//!   `adjust_numa_imbalance`), and automatic NUMA balancing prefers `numa_preferred_nid`. The
//!   paper-era kernel had none of these (it compared raw loads with half the
//!   `imbalance_pct` margin); we keep the plain `idle_cpus` comparison.
//! - Utilisation: the kernel classifies groups on utilisation and runnable time as well
//!   as task counts, and breaks has_spare ties on `group_util`; the view has no group
//!   utilisation, so we classify on task counts and break ties on summed load.
//! - Idle states: among idle CPUs the kernel prefers the shallowest idle state, then the
//!   most recently idled CPU; we take the first idle CPU. `sched_idle_cpu` (a CPU running
//!   only SCHED_IDLE tasks) does not exist here.
//! - Affinity masks (except the hard zone's, above) and core-scheduling cookies.

use zonal_topology::{CpuId, Level, NodeId, Topology};

use crate::decision::Placement;
use crate::filters::{soft_source_loaded, ZoneMode};

use super::groups::{is_idle, GroupClass, GroupStat, Loads};
use super::{LinuxEra, LinuxParams};
use crate::rules::MoveRules;

#[cfg(test)]
mod test;

/// The highest level whose distance is at most `max_distance` (level I at least).
pub(super) fn fork_level(topo: &Topology, max_distance: u32) -> Level {
    let n = topo
        .levels()
        .iter()
        .take_while(|&&d| d <= max_distance)
        .count();
    Level(n.saturating_sub(1).min(usize::from(u8::MAX)) as u8)
}

/// The number of CPUs in the level-`level` domain of `node` (Linux's `span_weight`).
fn span_weight(topo: &Topology, node: NodeId, level: Level) -> usize {
    topo.span(node, level)
        .iter()
        .map(|&n| topo.cpus_of(n).len())
        .sum()
}

/// `update_pick_idlest`: whether candidate `g` is idler than the current pick `cur`.
fn idler(g: &GroupStat, cur: &GroupStat) -> bool {
    let (cg, cc) = (g.class(), cur.class());
    if cg != cc {
        return cg < cc;
    }
    match cg {
        GroupClass::HasSpare => g.idle > cur.idle || (g.idle == cur.idle && g.load < cur.load),
        GroupClass::FullyBusy | GroupClass::Overloaded => g.avg() < cur.avg(),
    }
}

/// `find_idlest_group` over the groups just built (local first), skipping groups without
/// an allowed CPU: the group to move to, or `None` to stay in the local group.
fn idlest_group(loads: &Loads<'_, '_>, level: Level, mask: &Mask, pct: u32) -> Option<GroupStat> {
    let (local, rest) = loads.s.groups.split_first()?;
    let mut idlest: Option<&GroupStat> = None;
    for g in rest {
        if idlest.is_none_or(|i| idler(g, i)) && mask.group_allowed(loads, g, level) {
            idlest = Some(g);
        }
    }
    let idlest = *idlest?;
    let (lc, ic) = (local.class(), idlest.class());
    if lc != ic {
        return (lc > ic).then_some(idlest);
    }
    let stay = match lc {
        GroupClass::HasSpare => local.idle >= idlest.idle,
        GroupClass::FullyBusy | GroupClass::Overloaded => {
            let imbalance = f64::from(1024 * (pct - 100) / 100);
            let (la, ia) = (local.avg(), idlest.avg());
            let numa = level.0 > 0;
            (numa && ia + imbalance >= la)
                || ia >= la + imbalance
                || 100.0 * la <= f64::from(pct) * ia
        }
    };
    (!stay).then_some(idlest)
}

/// The CPUs a task may be placed on (Linux's `p->cpus_ptr`): all of them, or under the hard
/// zone those within the zone of the parent's node.
struct Mask {
    zone_of: Option<NodeId>,
}

impl Mask {
    fn node_allowed(&self, topo: &Topology, n: NodeId) -> bool {
        self.zone_of.is_none_or(|p| topo.node_in_zone(p, n))
    }

    fn group_allowed(&self, loads: &Loads<'_, '_>, g: &GroupStat, level: Level) -> bool {
        if self.zone_of.is_none() || level.0 == 0 {
            // Level I groups are CPUs of the current node, which is allowed.
            return true;
        }
        let members = &loads.s.members[g.first as usize..(g.first + g.len) as usize];
        members
            .iter()
            .any(|&n| self.node_allowed(loads.topo, NodeId(n)))
    }
}

/// The soft zone's rule at fork time: a group with no node inside the parent's zone is taken
/// only when the local group's load per CPU exceeds 150% of its own
/// ([`soft_source_loaded`], the steal side's test for a victim beyond the zone). Linux's
/// margins alone would send a task forked on an idle machine to an equally idle node
/// anywhere (2.6's `find_idlest_group` moves on a tie); the soft zone keeps it home.
fn soft_may_leave(loads: &Loads<'_, '_>, parent: CpuId, g: &GroupStat, level: Level) -> bool {
    let topo = loads.topo;
    let home = topo.node_of(parent);
    let members = &loads.s.members[g.first as usize..(g.first + g.len) as usize];
    let in_zone = level.0 == 0 || members.iter().any(|&n| topo.node_in_zone(home, NodeId(n)));
    in_zone
        || loads
            .s
            .groups
            .first()
            .is_some_and(|local| soft_source_loaded(g.avg(), local.avg()))
}

/// `sched_balance_find_dst_group_cpu`: the first allowed idle CPU of `g`, else its least
/// loaded allowed CPU.
fn idlest_cpu(loads: &Loads<'_, '_>, g: &GroupStat, level: Level, mask: &Mask) -> CpuId {
    let topo = loads.topo;
    let mut idle: Option<CpuId> = None;
    let mut least: Option<(CpuId, (u64, u32))> = None;
    loads.for_each_cpu(g, level, |c| {
        if idle.is_some() || !mask.node_allowed(topo, topo.node_of(c)) {
            return;
        }
        let l = loads.cpu(c);
        if is_idle(&l) {
            idle = Some(c);
            return;
        }
        let key = (l.weighted_load, l.nr_running);
        if least.is_none_or(|(_, k)| key < k) {
            least = Some((c, key));
        }
    });
    idle.or(least.map(|(c, _)| c))
        .expect("an allowed group has an allowed CPU")
}

/// Places a task forked on `parent`, walking down from its level-`top` domain (module docs).
pub(super) fn place(
    loads: &mut Loads<'_, '_>,
    parent: CpuId,
    top: Level,
    params: &LinuxParams,
    rules: &MoveRules,
    placement_rule: bool,
) -> Placement {
    let topo = loads.topo;
    let hard = rules.filter.is_some_and(|f| f.zone == ZoneMode::Hard);
    // The 150% rule: the soft zone's, or alone (the ablation's `placement_rule`, which
    // keeps the threshold and everything else `linux`'s).
    let soft = placement_rule || rules.filter.is_some_and(|f| f.zone == ZoneMode::Soft);
    let mask = Mask {
        zone_of: hard.then(|| topo.node_of(parent)),
    };
    let mut cpu = parent;
    let mut level = Some(top);
    while let Some(l) = level {
        let below = l.0.checked_sub(1).map(Level);
        let node = topo.node_of(cpu);
        if loads.degenerate(node, l) {
            level = below;
            continue;
        }
        loads.build_groups(cpu, l);
        let soft_beyond = rules
            .filter
            .is_some_and(|f| f.zone == ZoneMode::Soft && f.beyond_zone(topo, l));
        let pct = params.imbalance_pct(l, soft_beyond);
        let idlest = if params.era == LinuxEra::V2_6 {
            super::era::idlest_group(&loads.s.groups, pct, |g| mask.group_allowed(loads, g, l))
                .copied()
        } else {
            idlest_group(loads, l, &mask, pct)
        };
        let Some(g) = idlest.filter(|g| !soft || soft_may_leave(loads, parent, g, l)) else {
            level = below;
            continue;
        };
        let new = idlest_cpu(loads, &g, l, &mask);
        if new == cpu {
            level = below;
            continue;
        }
        let weight = span_weight(topo, node, l);
        cpu = new;
        let new_node = topo.node_of(cpu);
        level = (0..=l.0)
            .rev()
            .map(Level)
            .find(|&k| span_weight(topo, new_node, k) < weight);
    }
    Placement {
        cpu,
        level: topo.level_between(parent, cpu),
    }
}
