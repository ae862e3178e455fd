//! Wake-up placement: where the Linux baseline queues a task that becomes runnable again
//! (`try_to_wake_up` → `select_task_rq`), for both eras, and how the conservative filter
//! restricts it.
//!
//! The inputs are the waking task (not on any queue), `prev` (the CPU it last ran on) and
//! `waker` (the CPU that wakes it). Loads are the view's instant `weighted_load` (CFS weight
//! units, a nice-0 task = 1024) and idleness its `idle` flag, as in fork placement; the waking
//! task's own load is on no CPU.
//!
//! # Modern (`select_task_rq_fair`, Linux ≥ 5.x)
//!
//! 1. **Wake-affine domain.** Walk the waker's domains bottom-up for the first with
//!    `SD_WAKE_AFFINE` whose span holds `prev`. `sd_init` sets `SD_WAKE_AFFINE` on every
//!    level and clears it (with `SD_BALANCE_FORK`/`SD_BALANCE_EXEC`) on NUMA levels whose
//!    distance exceeds `RECLAIM_DISTANCE` ([`RECLAIM_DISTANCE`](super::RECLAIM_DISTANCE)).
//!    In our model the lowest domain of `waker` spanning `prev` is level
//!    `level_between(waker, prev)`, and it is wake-affine when that level's distance is at
//!    most `RECLAIM_DISTANCE`; higher levels are farther, so none of them is either.
//!    `want_affine` also needs the waker to be in the task's allowed CPUs (below);
//!    `wake_wide` (wakee flips) is not modelled, so a task is never "wide".
//! 2. **`wake_affine`** (only when such a domain exists and `waker ≠ prev`), choosing
//!    between `waker` and `prev`:
//!    - `wake_affine_idle`: an idle waker sharing the LLC (= the node) with `prev` gives
//!      `prev` if `prev` is idle, else the waker; otherwise an idle `prev` wins. (No sync
//!      wake-ups: the `WF_SYNC` case is left out.)
//!    - `wake_affine_weight` (`WA_WEIGHT`, `WA_BIAS`): the waker wins when
//!      `100 · (load(waker) + weight(task)) < (100 + (pct − 100)/2) · load(prev)`, `pct` the
//!      domain's `imbalance_pct` (117 at level I, 125 at NUMA levels by default); CPU
//!      capacities are equal and cancel. The kernel subtracts the task's blocked load from
//!      `prev`'s PELT load; our instant load never held it.
//!    - Otherwise `prev`.
//!
//!    Without a wake-affine domain the target is `prev` (`SD_BALANCE_WAKE` is not set by
//!    default, so the slow path never runs).
//! 3. **`select_idle_sibling(prev, target)`**: `target` if idle; else `prev` if it shares the
//!    LLC with `target` and is idle; else the first idle allowed CPU of `target`'s LLC (the
//!    node), scanning from the CPU after `target` and wrapping (`select_idle_cpu`'s
//!    `for_each_cpu_wrap`); else `target`. Not modelled: `recent_used_cpu` (no per-task
//!    memory in [`TaskMeta`]), idle cores (no SMT), `SIS_UTIL`'s scan limit, capacity fits.
//!
//! # 2.6 (`try_to_wake_up` and `wake_idle`, 2.6.x `kernel/sched.c`)
//!
//! 1. When `waker = prev`, or the waker is not allowed, the candidate is `prev`.
//! 2. Otherwise `this_sd` is the waker's lowest domain spanning `prev` (level
//!    `level_between(waker, prev)`), `imbalance = 100 + (imbalance_pct − 100)/2` (112 at
//!    125), `load = load(prev)` (`source_load`), `this_load = load(waker)` (`target_load`; we
//!    use the instant load for both, as [`super::era`] does), and:
//!    - with `SD_WAKE_AFFINE`: the waker wins if `tl ≤ load` and
//!      `tl + load ≤ tl_per_task` (the waker's load per task, `cpu_avg_load_per_task`), or
//!      if `100 · (tl + weight(task)) ≤ imbalance · load` (`tl = this_load`; no sync);
//!    - else, or if that failed, with `SD_WAKE_BALANCE`: the waker wins if
//!      `imbalance · this_load ≤ 100 · load` (passive balancing);
//!    - otherwise `prev`.
//! 3. `wake_idle(candidate)`: the candidate if idle; else, walking its domains bottom-up
//!    while they have `SD_WAKE_IDLE`, the first idle allowed CPU of the domain's span (span
//!    order: nearest nodes first); else the candidate.
//!
//! The flags are the 2.6 initialisers' ([`flags_2_6`]): `SD_CPU_INIT` (level I) has
//! `SD_WAKE_AFFINE | SD_WAKE_BALANCE` and no `SD_WAKE_IDLE` (only the SMT sibling domain had
//! it); x86_64's `SD_NODE_INIT` (levels ≥ II) has `SD_WAKE_BALANCE` and, in the releases
//! [`super::era`] follows, `SD_WAKE_IDLE`, never `SD_WAKE_AFFINE`. Since `wake_idle` stops
//! at the first domain without `SD_WAKE_IDLE`, a machine with two or more CPUs per node never
//! searches for an idle CPU at wake-up in this era: the task wakes on its candidate, and idle
//! CPUs pull it at their next balance. `task_hot` (used by the sync affine case) is not
//! modelled.
//!
//! # The waker in the simulator
//!
//! An I/O completion is woken by the CPU that handles the completion. Since 2.6.28 the block
//! layer's `rq_affinity` (default 1) completes a request on a CPU sharing the submitter's
//! LLC, and `rq_affinity = 2` on the submitting CPU itself; the submitter is the task's
//! `prev`. The simulator therefore passes `waker = prev` in both eras (the 2.6 kernel of the
//! paper completed on the IRQ's CPU, which depends on `irqbalance`; we do not model it).
//! With `waker = prev`, the modern wake is `select_idle_sibling(prev, prev)` and the 2.6
//! wake is `prev` on machines with more than one CPU per node.
//!
//! # Allowed CPUs: the conservative filter
//!
//! Linux restricts every step to the task's affinity mask (`p->cpus_ptr`). Under the
//! conservative filter (in both zone modes) the mask of a waking task is:
//! - every CPU of `prev`'s node (waking there is not a migration);
//! - a CPU of another node only when that node lies in `prev`'s zone and
//!   [`ConservativeFilter::check_move`] allows the move from `prev` (origin rule, ageing:
//!   an aged task therefore wakes only on `prev`'s node).
//!
//! A waker outside the mask makes the wake non-affine (Linux's `want_affine` needs the waker
//! in the mask; 2.6 jumps straight to `wake_idle(prev)`), and idle-CPU scans skip CPUs outside
//! it, so the answer is always allowed: the Linux choice filtered, falling back to the
//! era's search around `prev`. The soft zone's load exception is a stealing rule and does not
//! apply to wake-ups. Pinned tasks (`!migratable`) wake on `prev`. Without a filter
//! (`linux`, `thread-aware` without `conservative_filters`) every CPU is allowed.
//! `thread-aware` changes only which task a pass moves across nodes, so its wake-up is
//! Linux's.
//!
//! A `prev` or `waker` outside the view's topology is not a CPU the task can wake on: the
//! answer is `prev` for a bad `prev`, and a bad `waker` is treated as `prev`.

use zonal_topology::{CpuId, Level, NodeId, Topology};

use crate::filters::ConservativeFilter;
use crate::policy::WakeUp;
use crate::view::{MachineView, TaskMeta};

use super::groups::is_idle;
use super::{halved_margin, Balancer, LinuxEra, Selection};

#[cfg(test)]
mod test;

/// The wake-up flags of one sched-domain level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct WakeFlags {
    /// `SD_WAKE_AFFINE`: the waker's CPU may take the task.
    pub(crate) affine: bool,
    /// `SD_WAKE_BALANCE` (2.6): passive balancing at wake-up.
    pub(crate) balance: bool,
    /// `SD_WAKE_IDLE` (2.6): `wake_idle` may look for an idle CPU in this domain.
    pub(crate) idle: bool,
}

/// The 2.6 era's wake flags of `level`: `SD_CPU_INIT` at level I, x86_64's `SD_NODE_INIT`
/// at NUMA levels (module docs).
#[must_use]
pub(crate) const fn flags_2_6(level: Level) -> WakeFlags {
    if level.0 == 0 {
        WakeFlags {
            affine: true,
            balance: true,
            idle: false,
        }
    } else {
        WakeFlags {
            affine: false,
            balance: true,
            idle: true,
        }
    }
}

/// Which CPUs a waking task may be queued on (module docs, "Allowed CPUs").
struct Mask<'a> {
    topo: &'a Topology,
    task: TaskMeta,
    prev_node: NodeId,
    filter: Option<ConservativeFilter>,
}

impl Mask<'_> {
    fn allows(&self, cpu: CpuId) -> bool {
        let Some(f) = &self.filter else { return true };
        let node = self.topo.node_of(cpu);
        node == self.prev_node
            || (self.topo.node_in_zone(node, self.prev_node)
                && f.check_move(self.topo, &self.task, cpu).is_ok())
    }
}

/// One wake-up decision.
struct Wake<'a> {
    view: &'a dyn MachineView,
    topo: &'a Topology,
    mask: Mask<'a>,
    prev: CpuId,
    weight: u64,
}

impl Wake<'_> {
    fn idle(&self, cpu: CpuId) -> bool {
        is_idle(&self.view.cpu_load(cpu))
    }

    fn load(&self, cpu: CpuId) -> u64 {
        self.view.cpu_load(cpu).weighted_load
    }

    fn same_node(&self, a: CpuId, b: CpuId) -> bool {
        self.topo.node_of(a) == self.topo.node_of(b)
    }

    /// `wake_affine`: `waker` or `prev`, in the wake-affine domain at `level`.
    fn wake_affine(&self, b: &Balancer<impl Selection>, waker: CpuId, level: Level) -> CpuId {
        let prev = self.prev;
        // wake_affine_idle.
        if self.idle(waker) && self.same_node(waker, prev) {
            return if self.idle(prev) { prev } else { waker };
        }
        if self.idle(prev) {
            return prev;
        }
        // wake_affine_weight, with WA_BIAS.
        let margin = halved_margin(b.params.imbalance_pct(level, false));
        let this_eff = u128::from(self.load(waker) + self.weight) * 100;
        let prev_eff = u128::from(self.load(prev)) * u128::from(margin);
        if this_eff < prev_eff {
            waker
        } else {
            prev
        }
    }

    /// `select_idle_sibling(p, prev, target)` with the LLC at the node.
    fn select_idle_sibling(&self, target: CpuId) -> CpuId {
        let prev = self.prev;
        if self.idle(target) {
            return target;
        }
        if prev != target && self.same_node(prev, target) && self.idle(prev) {
            return prev;
        }
        let llc = self.topo.cpus_of(self.topo.node_of(target));
        let start = llc.iter().position(|&c| c == target).map_or(0, |i| i + 1);
        (0..llc.len())
            .map(|k| llc[(start + k) % llc.len()])
            .find(|&c| c != target && self.mask.allows(c) && self.idle(c))
            .unwrap_or(target)
    }

    /// The modern `select_task_rq_fair` wake-up path.
    fn modern(&self, b: &Balancer<impl Selection>, waker: CpuId) -> CpuId {
        let prev = self.prev;
        let mut target = prev;
        if waker != prev && self.mask.allows(waker) {
            let level = self.topo.level_between(waker, prev);
            let affine = self
                .topo
                .levels()
                .get(level.index())
                .is_some_and(|&d| d <= b.params.fork_max_distance);
            if affine {
                target = self.wake_affine(b, waker, level);
            }
        }
        self.select_idle_sibling(target)
    }

    /// 2.6's `try_to_wake_up` choice between `waker` and `prev`.
    fn candidate_2_6(&self, b: &Balancer<impl Selection>, waker: CpuId) -> CpuId {
        let prev = self.prev;
        if waker == prev || !self.mask.allows(waker) {
            return prev;
        }
        let level = self.topo.level_between(waker, prev);
        let flags = flags_2_6(level);
        let imbalance = u128::from(halved_margin(b.params.imbalance_pct(level, false)));
        let load = u128::from(self.load(prev));
        let this = self.view.cpu_load(waker);
        let tl = u128::from(this.weighted_load);
        if flags.affine {
            let per_task = match this.nr_running {
                0 => 0,
                n => tl / u128::from(n),
            };
            let weight = u128::from(self.weight);
            if (tl <= load && tl + load <= per_task) || 100 * (tl + weight) <= imbalance * load {
                return waker;
            }
        }
        if flags.balance && imbalance * tl <= 100 * load {
            return waker;
        }
        prev
    }

    /// 2.6's `wake_idle(cpu)`.
    fn wake_idle(&self, cpu: CpuId) -> CpuId {
        if self.idle(cpu) {
            return cpu;
        }
        let node = self.topo.node_of(cpu);
        for l in 0..self.topo.mal_count() {
            let level = Level(l as u8);
            if super::degenerate(self.topo, node, level) {
                continue;
            }
            if !flags_2_6(level).idle {
                break;
            }
            for &n in self.topo.span(node, level) {
                for &c in self.topo.cpus_of(n) {
                    if self.mask.allows(c) && self.idle(c) {
                        return c;
                    }
                }
            }
        }
        cpu
    }
}

/// The Linux baseline's wake-up placement (module docs), behind `b`'s conservative filter.
pub(super) fn select(
    b: &Balancer<impl Selection>,
    view: &dyn MachineView,
    WakeUp { task, prev, waker }: WakeUp<'_>,
) -> CpuId {
    let topo = view.topology();
    let n = topo.cpu_count();
    if prev.index() >= n || !task.migratable {
        return prev;
    }
    let waker = if waker.index() < n { waker } else { prev };
    let w = Wake {
        view,
        topo,
        mask: Mask {
            topo,
            task: TaskMeta { cpu: prev, ..*task },
            prev_node: topo.node_of(prev),
            filter: b.wake_filter,
        },
        prev,
        weight: u64::from(task.weight),
    };
    let cpu = match b.params.era {
        LinuxEra::Modern => w.modern(b, waker),
        LinuxEra::V2_6 => w.wake_idle(w.candidate_2_6(b, waker)),
    };
    debug_assert!(w.mask.allows(cpu), "wake to a CPU outside the mask");
    cpu
}
