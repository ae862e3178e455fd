//! Thread-aware selection for inter-node moves (Chiang & Su).
//!
//! When a pass must move a task across nodes (level ≥ II), a thread of a multithreaded
//! group pays for the move in shared data left behind. Chiang & Su pick the thread from the
//! group with the *least exclusive* distribution. Zonal's exact reading:
//!
//! - **Measure.** For a candidate task `t` of group `g` on source node `S`,
//!   `share(t) = threads of g on S / threads of g` (every task of the view counts; queued and
//!   running alike). A task with no group is a group of one: share 1. Candidates (the
//!   busiest CPU's last `nr_migrate` tasks) are tried in increasing share; ties keep Linux's
//!   tail-first order.
//! - **Refusal.** A move from `S` to destination node `D` is refused with
//!   [`Refusal::GroupConcentration`](crate::Refusal::GroupConcentration) when it would leave
//!   the group more concentrated on `D` than it was on `S`: `on_D + 1 > on_S`. A group of one
//!   (`0 + 1 > 1` is false) may always move; a group spread evenly may move one thread; a
//!   thread never joins a node that already holds at least as many of its siblings as its
//!   current node.
//! - Counts are updated as the pass moves tasks, so one pass cannot pile a group onto a node.
//!
//! Moves inside a node (level I) use Linux's order and no group rule. The counting walks the
//! view's task lists once per inter-node detach; nothing is allocated (at most
//! [`NR_MIGRATE_MAX`] groups are tracked, one per candidate).

use std::sync::Arc;

use zonal_topology::{CpuId, NodeId};

use crate::config::{Fields, PolicyConfig};
use crate::decision::Refusal;
use crate::policies::linux::{
    Balancer, Candidates, Guard, Selection, FILTER_ACCEPTS, NR_MIGRATE_MAX, NUMA_BALANCING_ACCEPTS,
    WALK_ACCEPTS,
};
use crate::policy::Policy;
use crate::view::{GroupId, MachineView, TaskMeta};

/// What `thread-aware` takes: the walk's parameters (its selection runs inside the walk, of
/// either era), the composed filter's (`origin` and `age_limit` only with
/// `conservative_filters = true`), and NUMA balancing (a modern Linux baseline).
pub(crate) const ACCEPTS: Fields = WALK_ACCEPTS
    .union(FILTER_ACCEPTS)
    .union(NUMA_BALANCING_ACCEPTS);

/// `thread-aware` (catalogue constructor): the Linux walk with this selection across
/// nodes, behind the hard conservative filter when `conservative_filters = true`.
pub(crate) fn build(cfg: &PolicyConfig) -> Arc<dyn Policy> {
    Arc::new(Balancer::from_config(
        cfg,
        cfg.composed_filter(),
        ThreadAware,
    ))
}

/// Chiang & Su's selection for the Linux walk: at levels ≥ II candidates in increasing
/// group share, moves that concentrate a group refused (module docs); Linux's order inside
/// a node.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ThreadAware;

impl Selection for ThreadAware {
    /// The group counts across nodes; `None` inside a node.
    type Guard = Option<Counts>;

    fn order(&self, c: &Candidates<'_>, order: &mut [usize]) -> Option<Counts> {
        (c.level.0 > 0).then(|| self::order(c.view, c.src, c.dst, c.tasks, order))
    }
}

impl Guard for Option<Counts> {
    fn refuse(&self, t: &TaskMeta) -> Option<Refusal> {
        self.as_ref()
            .is_some_and(|c| c.more_concentrated(t))
            .then_some(Refusal::GroupConcentration)
    }

    fn note_move(&mut self, t: &TaskMeta) {
        if let Some(c) = self {
            c.note_move(t);
        }
    }
}

/// Per-group thread counts for the candidates of one detach.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Counts {
    len: usize,
    groups: [GroupCount; NR_MIGRATE_MAX],
}

#[derive(Clone, Copy, Debug, Default)]
struct GroupCount {
    group: GroupId,
    on_src: u32,
    on_dst: u32,
    total: u32,
}

impl Counts {
    fn find(&self, g: GroupId) -> Option<&GroupCount> {
        self.groups[..self.len].iter().find(|c| c.group == g)
    }

    /// `(threads on the source node, threads)` of `t`'s group; `(1, 1)` for a task alone.
    fn share(&self, t: &TaskMeta) -> (u32, u32) {
        t.group
            .and_then(|g| self.find(g))
            .map_or((1, 1), |c| (c.on_src, c.total.max(1)))
    }

    /// Whether moving `t` would leave its group more concentrated on the destination node
    /// than it was on the source node.
    pub(crate) fn more_concentrated(&self, t: &TaskMeta) -> bool {
        t.group
            .and_then(|g| self.find(g))
            .is_some_and(|c| c.on_dst + 1 > c.on_src)
    }

    /// Records that `t` moved from the source node to the destination node.
    pub(crate) fn note_move(&mut self, t: &TaskMeta) {
        if let Some(g) = t.group {
            if let Some(c) = self.groups[..self.len].iter_mut().find(|c| c.group == g) {
                c.on_src = c.on_src.saturating_sub(1);
                c.on_dst += 1;
            }
        }
    }
}

/// Counts the candidates' groups and sorts `order` (indexes into `tasks`, the task list of
/// `src`) by increasing share on `src`'s node.
pub(crate) fn order(
    view: &dyn MachineView,
    src: CpuId,
    dst: CpuId,
    tasks: &[TaskMeta],
    order: &mut [usize],
) -> Counts {
    let topo = view.topology();
    let (src_node, dst_node) = (topo.node_of(src), topo.node_of(dst));
    let mut counts = Counts::default();
    for &i in order.iter() {
        if let Some(g) = tasks[i].group {
            if counts.find(g).is_none() && counts.len < NR_MIGRATE_MAX {
                counts.groups[counts.len] = GroupCount {
                    group: g,
                    ..GroupCount::default()
                };
                counts.len += 1;
            }
        }
    }
    if counts.len > 0 {
        for node in topo.cpu_nodes() {
            count_node(view, node, src_node, dst_node, &mut counts);
        }
    }
    // Stable insertion sort (at most 32 items; no allocation).
    let less = |a: usize, b: usize| {
        let (sa, ta) = counts.share(&tasks[a]);
        let (sb, tb) = counts.share(&tasks[b]);
        u64::from(sa) * u64::from(tb) < u64::from(sb) * u64::from(ta)
    };
    for i in 1..order.len() {
        let mut j = i;
        while j > 0 && less(order[j], order[j - 1]) {
            order.swap(j, j - 1);
            j -= 1;
        }
    }
    counts
}

fn count_node(
    view: &dyn MachineView,
    node: NodeId,
    src_node: NodeId,
    dst_node: NodeId,
    counts: &mut Counts,
) {
    let len = counts.len;
    for &c in view.topology().cpus_of(node) {
        for t in view.tasks(c) {
            let Some(g) = t.group else { continue };
            if let Some(gc) = counts.groups[..len].iter_mut().find(|x| x.group == g) {
                gc.total += 1;
                gc.on_src += u32::from(node == src_node);
                gc.on_dst += u32::from(node == dst_node);
            }
        }
    }
}

#[cfg(test)]
mod test;
