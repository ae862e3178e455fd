//! Domains, groups and their load statistics, as one balancing pass sees them.
//!
//! # Domains and groups
//!
//! The level-L domain of node `n` spans `span(n, L)`. Its groups are the spans at level
//! L−1 of the nodes in `span(n, L)`, built the way Linux's `build_overlap_sched_groups`
//! builds them: walk the span nearest first (our own node first), skip nodes an earlier
//! group already covers, and add `span(m, L−1)` as a new group. At NUMA levels these groups
//! may overlap. Every group is clipped to the domain's span (Linux iterates
//! `sched_group_span ∩ env->cpus`, and `env->cpus` starts as the domain span), so a pass
//! at level L never looks, or pulls, beyond level L. At level I the groups are the single
//! CPUs of the node, our own CPU first.
//!
//! With [`Loads::single_node_groups`] (the 2.6 era, [`super::era`]) every group at a NUMA
//! level is one node of the domain, our own node first, then the others nearest first (2.6's
//! node domain had one group per node).
//!
//! # Load figures
//!
//! A pass reads a CPU's [`CpuLoad`] into its node's sums ([`NodeAgg`]) only when it first
//! needs that node: [`Loads::new`] reads nothing, and a node's sums are filled (from the
//! view, all its CPUs at once) the first time a group, a domain total or a migration of the
//! pass touches the node. A pass at level L therefore reads only the CPUs of the level-L
//! domain, and a pass with no level due reads at most its own CPU. Each node's sums are
//! marked with the pass's epoch (`node_stamp`), so starting a pass costs no clearing.
//! Groups are sums of node sums. The load of a CPU is its `weighted_load` (the summed CFS
//! weight of its runnable tasks, the paper-era kernel's `weighted_cpuload`); PELT averages
//! are the caller's business (a view may put them into `weighted_load`). Migrations chosen
//! earlier in the same pass are applied as deltas, so higher levels see the loads after
//! them; a node's sums are always filled from the view before a delta changes them.
//!
//! # Allocation
//!
//! All buffers live in a [`Scratch`] reused across passes (one per thread), so a pass
//! allocates only its [`BalanceOutcome`](crate::BalanceOutcome).

use std::cell::RefCell;

use zonal_topology::{CpuId, Level, NodeId, Topology};

use crate::view::{CpuLoad, MachineView};

/// Per-node sums of the CPU loads.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct NodeAgg {
    pub(crate) nr: u32,
    pub(crate) load: u64,
    pub(crate) idle: u32,
    pub(crate) cpus: u32,
}

/// Linux's group classification (pull priority, lowest first).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum GroupClass {
    /// Fewer runnable tasks than CPUs.
    HasSpare,
    /// As many runnable tasks as CPUs.
    FullyBusy,
    /// More runnable tasks than CPUs.
    Overloaded,
}

/// The statistics of one group; `first..first+len` indexes [`Scratch::members`] (CPU ids at
/// level I, node ids above).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct GroupStat {
    pub(crate) nr: u32,
    pub(crate) load: u64,
    pub(crate) idle: u32,
    pub(crate) cpus: u32,
    pub(crate) first: u32,
    pub(crate) len: u32,
}

impl GroupStat {
    fn add(&mut self, a: &NodeAgg) {
        self.nr += a.nr;
        self.load += a.load;
        self.idle += a.idle;
        self.cpus += a.cpus;
    }

    /// Linux's `group_classify`, on task counts: overloaded when more tasks than CPUs,
    /// fully busy when exactly as many, otherwise spare capacity.
    pub(crate) fn class(&self) -> GroupClass {
        if self.nr > self.cpus {
            GroupClass::Overloaded
        } else if self.nr == self.cpus {
            GroupClass::FullyBusy
        } else {
            GroupClass::HasSpare
        }
    }

    /// Load per CPU (Linux's `avg_load` with equal CPU capacities).
    pub(crate) fn avg(&self) -> f64 {
        self.load as f64 / f64::from(self.cpus.max(1))
    }

    /// Whether `self` is busier than `other` (Linux's `update_sd_pick_busiest`): higher
    /// class; in the same class, higher average load, except among groups with spare
    /// capacity, where fewer idle CPUs and then more tasks is busier.
    pub(crate) fn busier_than(&self, other: &GroupStat) -> bool {
        let (a, b) = (self.class(), other.class());
        if a != b {
            return a > b;
        }
        if a == GroupClass::HasSpare {
            return self.idle < other.idle || (self.idle == other.idle && self.nr > other.nr);
        }
        self.avg() > other.avg()
    }
}

/// A load change a pass has already decided (applied on top of the view).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct CpuDelta {
    cpu: CpuId,
    nr: i64,
    load: i64,
}

/// Buffers reused across passes.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    /// Per-node sums; valid for a node when its `node_stamp` equals `node_epoch`.
    nodes: Vec<NodeAgg>,
    node_stamp: Vec<u32>,
    node_epoch: u32,
    stamp: Vec<u32>,
    epoch: u32,
    pub(crate) groups: Vec<GroupStat>,
    pub(crate) members: Vec<u32>,
    deltas: Vec<CpuDelta>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Runs `f` with this thread's scratch buffers (a fresh set if they are already in use).
pub(crate) fn with_scratch<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
    let mut f = Some(f);
    let r = SCRATCH.with(|cell| {
        cell.try_borrow_mut()
            .ok()
            .map(|mut s| (f.take().expect("called once"))(&mut s))
    });
    match r {
        Some(r) => r,
        None => (f.take().expect("called once"))(&mut Scratch::default()),
    }
}

/// The sums of node `i`'s CPUs as the view shows them.
#[inline(always)]
fn read_node(view: &dyn MachineView, topo: &Topology, i: usize) -> NodeAgg {
    let mut agg = NodeAgg::default();
    for &c in topo.cpus_of(NodeId::new(i)) {
        let l = view.cpu_load(c);
        agg.nr += l.nr_running;
        agg.load += l.weighted_load;
        agg.idle += u32::from(is_idle(&l));
        agg.cpus += 1;
    }
    agg
}

/// Whether a CPU counts as idle.
#[inline]
pub(crate) fn is_idle(l: &CpuLoad) -> bool {
    l.idle || l.nr_running == 0
}

/// One pass's view of the machine: the caller's view plus the pass's own decisions.
pub(crate) struct Loads<'v, 's> {
    pub(crate) view: &'v dyn MachineView,
    pub(crate) topo: &'v Topology,
    pub(crate) s: &'s mut Scratch,
    /// Groups at NUMA levels are single nodes (2.6 era) instead of level-below spans.
    pub(crate) single_node_groups: bool,
}

impl<'v, 's> Loads<'v, 's> {
    /// Starts a pass: no load is read yet (node sums are filled on first use).
    pub(crate) fn new(view: &'v dyn MachineView, s: &'s mut Scratch) -> Self {
        let topo = view.topology();
        let n = topo.node_count();
        if s.stamp.len() != n {
            s.stamp.clear();
            s.stamp.resize(n, 0);
            s.epoch = 0;
        }
        if s.nodes.len() != n {
            s.nodes.clear();
            s.nodes.resize(n, NodeAgg::default());
            s.node_stamp.clear();
            s.node_stamp.resize(n, 0);
            s.node_epoch = 0;
        }
        s.node_epoch = s.node_epoch.wrapping_add(1);
        if s.node_epoch == 0 {
            s.node_stamp.iter_mut().for_each(|x| *x = 0);
            s.node_epoch = 1;
        }
        s.deltas.clear();
        Self {
            view,
            topo,
            s,
            single_node_groups: false,
        }
    }

    /// The sums of `node`'s CPUs as this pass sees them (the view plus this pass's
    /// migrations), read from the view on first use.
    #[inline(always)]
    pub(crate) fn node(&mut self, node: NodeId) -> NodeAgg {
        let i = node.index();
        if self.s.node_stamp[i] != self.s.node_epoch {
            // Use the returned sums, not a reload of what was just stored.
            return self.fill_node(i);
        }
        self.s.nodes[i]
    }

    /// Reads the loads of `node`'s CPUs from the view. Called before any migration of the
    /// pass touches the node (`apply_move` fills a node before changing it), so the view's
    /// figures are the pass's figures.
    #[inline(never)]
    fn fill_node(&mut self, i: usize) -> NodeAgg {
        let agg = read_node(self.view, self.topo, i);
        self.s.nodes[i] = agg;
        self.s.node_stamp[i] = self.s.node_epoch;
        agg
    }

    /// Reads every node of the level-`level` domain of `node` not read yet, in one loop.
    fn fill_span(&mut self, node: NodeId, level: Level) {
        let epoch = self.s.node_epoch;
        for &x in self.topo.span(node, level) {
            let i = x.index();
            if self.s.node_stamp[i] != epoch {
                self.s.nodes[i] = read_node(self.view, self.topo, i);
                self.s.node_stamp[i] = epoch;
            }
        }
    }

    /// A CPU's load with this pass's migrations applied.
    #[inline]
    pub(crate) fn cpu(&self, cpu: CpuId) -> CpuLoad {
        let mut l = self.view.cpu_load(cpu);
        for d in &self.s.deltas {
            if d.cpu == cpu {
                l.nr_running = (i64::from(l.nr_running) + d.nr).max(0) as u32;
                l.weighted_load = (l.weighted_load as i64 + d.load).max(0) as u64;
                l.idle = l.nr_running == 0;
            }
        }
        l
    }

    /// Records a migration of a task of `weight` from `from` to `to`.
    pub(crate) fn apply_move(&mut self, from: CpuId, to: CpuId, weight: u32) {
        let w = i64::from(weight);
        for (cpu, nr, load) in [(from, -1, -w), (to, 1, w)] {
            let before = is_idle(&self.cpu(cpu));
            match self.s.deltas.iter_mut().find(|d| d.cpu == cpu) {
                Some(d) => {
                    d.nr += nr;
                    d.load += load;
                }
                None => self.s.deltas.push(CpuDelta { cpu, nr, load }),
            }
            let after = is_idle(&self.cpu(cpu));
            let node = self.topo.node_of(cpu);
            // Fill the node's sums before changing them (they then include the move).
            let _ = self.node(node);
            let agg = &mut self.s.nodes[node.index()];
            agg.nr = (i64::from(agg.nr) + nr).max(0) as u32;
            agg.load = (agg.load as i64 + load).max(0) as u64;
            match (before, after) {
                (true, false) => agg.idle = agg.idle.saturating_sub(1),
                (false, true) => agg.idle += 1,
                _ => {}
            }
        }
    }

    /// Whether the level-`level` domain of `node` is degenerate (Linux removes it): one CPU
    /// at level I, or the same span as the level below.
    pub(crate) fn degenerate(&self, node: NodeId, level: Level) -> bool {
        super::degenerate(self.topo, node, level)
    }

    /// Sums over the domain span of `node` at `level`: (load, cpus).
    pub(crate) fn domain_totals(&mut self, node: NodeId, level: Level) -> (u64, u32) {
        let topo = self.topo;
        topo.span(node, level)
            .iter()
            .map(|&n| self.node(n))
            .fold((0, 0), |(l, c), a| (l + a.load, c + a.cpus))
    }

    /// Builds the groups of the level-`level` domain of `cpu` into `s.groups` (local group
    /// first) and returns how many CPUs they cover (overlaps counted each time).
    pub(crate) fn build_groups(&mut self, cpu: CpuId, level: Level) -> u32 {
        let topo = self.topo;
        let node = topo.node_of(cpu);
        self.s.groups.clear();
        self.s.members.clear();
        if level.0 == 0 {
            let me = self.cpu(cpu);
            self.push_cpu_group(cpu, &me);
            for &n in topo.span(node, level) {
                for &c in topo.cpus_of(n) {
                    if c != cpu {
                        let l = self.cpu(c);
                        self.push_cpu_group(c, &l);
                    }
                }
            }
        } else {
            self.s.epoch = self.s.epoch.wrapping_add(1);
            if self.s.epoch == 0 {
                self.s.stamp.iter_mut().for_each(|x| *x = 0);
                self.s.epoch = 1;
            }
            // Read the whole domain first, in one tight loop; the groups then sum node sums.
            self.fill_span(node, level);
            if self.single_node_groups {
                for m in single_node_groups(topo, node, level) {
                    self.push_single_node_group(m);
                }
                return self.s.groups.iter().map(|g| g.cpus).sum();
            }
            let child = Level(level.0 - 1);
            self.push_node_group(node, node, level, child);
            for &m in topo.span(node, level) {
                if self.s.stamp[m.index()] != self.s.epoch {
                    self.push_node_group(node, m, level, child);
                }
            }
        }
        self.s.groups.iter().map(|g| g.cpus).sum()
    }

    fn push_cpu_group(&mut self, cpu: CpuId, l: &CpuLoad) {
        let first = self.s.members.len() as u32;
        self.s.members.push(cpu.0);
        self.s.groups.push(GroupStat {
            nr: l.nr_running,
            load: l.weighted_load,
            idle: u32::from(is_idle(l)),
            cpus: 1,
            first,
            len: 1,
        });
    }

    /// One group of one node (the 2.6 era), inside the domain whose sums are read.
    fn push_single_node_group(&mut self, m: NodeId) {
        let first = self.s.members.len() as u32;
        self.s.members.push(m.0);
        debug_assert_eq!(self.s.node_stamp[m.index()], self.s.node_epoch);
        let mut g = GroupStat {
            first,
            len: 1,
            ..GroupStat::default()
        };
        g.add(&self.s.nodes[m.index()]);
        self.s.groups.push(g);
    }

    fn push_node_group(&mut self, node: NodeId, m: NodeId, level: Level, child: Level) {
        let topo = self.topo;
        let first = self.s.members.len() as u32;
        let mut g = GroupStat {
            first,
            ..GroupStat::default()
        };
        for &x in topo.span(m, child) {
            if topo.node_level(node, x).is_none_or(|l| l > level) {
                continue;
            }
            self.s.stamp[x.index()] = self.s.epoch;
            self.s.members.push(x.0);
            // Inside the domain, whose sums `build_groups` has read.
            debug_assert_eq!(self.s.node_stamp[x.index()], self.s.node_epoch);
            g.add(&self.s.nodes[x.index()]);
        }
        g.len = self.s.members.len() as u32 - first;
        self.s.groups.push(g);
    }

    /// The CPUs of group `g` (built at `level`), in member order.
    pub(crate) fn for_each_cpu(&self, g: &GroupStat, level: Level, mut f: impl FnMut(CpuId)) {
        let members = &self.s.members[g.first as usize..(g.first + g.len) as usize];
        if level.0 == 0 {
            members.iter().for_each(|&c| f(CpuId(c)));
        } else {
            for &n in members {
                self.topo.cpus_of(NodeId(n)).iter().for_each(|&c| f(c));
            }
        }
    }
}

/// Nodes of the level-`level` domain of `node`, nearest first, our own node first: the
/// 2.6 era's groups at NUMA levels, one per node.
fn single_node_groups(
    topo: &Topology,
    node: NodeId,
    level: Level,
) -> impl Iterator<Item = NodeId> + '_ {
    std::iter::once(node).chain(
        topo.span(node, level)
            .iter()
            .copied()
            .filter(move |&m| m != node),
    )
}
