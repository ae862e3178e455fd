//! The machine as the balance side sees it during one pass: a [`MachineView`] over a
//! snapshot of the pool's live queues, kept up to date as the pass moves tasks.
//!
//! # What it shows
//!
//! - `cpu_load(c)` for the CPU `c` of a worker: `nr_running` = queued tasks (deque, inbox,
//!   away queue) + 1 if the worker is not idle; `weighted_load` = 1024 × that (queued tasks'
//!   weights cannot be read from lock-free queues); `load_avg` and `util_avg` from
//!   `load.rs`; `idle`. A CPU without a worker shows idle and empty.
//! - `tasks(c)`: the worker's **movable** queued tasks only — its away queue, the one queue
//!   whose tasks carry their metadata in a header and that a balancer may pop (the deque
//!   holds bare jobs, stolen by idle workers instead; the inbox holds pinned and aged tasks,
//!   which never move; the running task is never moved). Lock-free queues cannot be listed,
//!   so the away queue is shown by its length (up to [`LISTED_MAX`]) as *representative*
//!   tasks: origin = the worker's node, never migrated, nice 0, not running, migratable.
//!   The real task a migration takes is checked again with its real metadata when the
//!   migration is applied (`driver.rs`), so a representative never lets a rule be broken:
//!   at worst the pass asks for a move the real check refuses.
//! - Task ids are `worker << 32 | k`, unique within the view.
//!
//! After each applied (or refused) migration the driver updates the view
//! ([`LiveView::moved`], [`LiveView::unlisted`]) so that the next CPU's pass sees the
//! machine as it is, as the simulator's `apply` does between two CPUs' ticks.

use std::sync::Arc;

use zonal_policy::{CpuLoad, MachineView, SnapshotView, TaskId, TaskMeta, NICE_0_WEIGHT};
use zonal_topology::{CpuId, NodeId, Topology};

/// The most representative tasks listed per worker: a pass examines at most 32 tasks per
/// attempt (Linux's `nr_migrate`), and a CPU's pass makes one attempt per level.
pub(crate) const LISTED_MAX: u32 = 64;

/// The pass's view of the pool: the policy crate's [`SnapshotView`], filled from the live
/// queues ([`set_cpu`](Self::set_cpu)) and kept up to date as moves are applied.
#[derive(Clone, Debug)]
pub(crate) struct LiveView(SnapshotView);

impl LiveView {
    /// An idle, empty machine.
    pub(crate) fn new(topo: Arc<Topology>) -> Self {
        Self(SnapshotView::new(topo))
    }

    /// The view the balance side reads.
    pub(crate) fn view(&self) -> &SnapshotView {
        &self.0
    }

    /// Sets the clock.
    pub(crate) fn set_now(&mut self, now_us: u64) {
        self.0.set_now(now_us);
    }

    /// Sets what `cpu` (worker `worker`'s) shows: `runnable` tasks, `away` of them movable,
    /// the averages, idle or not.
    pub(crate) fn set_cpu(
        &mut self,
        cpu: CpuId,
        worker: usize,
        runnable: u32,
        away: u32,
        avgs: (f64, f64),
        idle: bool,
    ) {
        self.0.set_load(
            cpu,
            CpuLoad {
                nr_running: runnable,
                weighted_load: u64::from(runnable) * u64::from(NICE_0_WEIGHT),
                load_avg: avgs.0,
                util_avg: avgs.1,
                idle,
            },
        );
        let node = self.0.topology().node_of(cpu);
        let list = self.0.tasks_mut(cpu);
        list.clear();
        let listed = away.min(LISTED_MAX).min(runnable);
        list.extend((0..listed).map(|k| representative(worker, k, node, cpu)));
    }

    /// A migration of task `id` from `from` to `to` was applied: one task less there, one
    /// more here (not listed: it is no candidate for this pass any more).
    pub(crate) fn moved(&mut self, id: TaskId, from: CpuId, to: CpuId) {
        self.unlisted(id, from);
        let w = u64::from(NICE_0_WEIGHT);
        let mut f = self.0.cpu_load(from);
        f.nr_running = f.nr_running.saturating_sub(1);
        f.weighted_load = f.weighted_load.saturating_sub(w);
        f.load_avg = (f.load_avg - w as f64).max(0.0);
        self.0.set_load(from, f);
        let mut t = self.0.cpu_load(to);
        t.nr_running += 1;
        t.weighted_load += w;
        t.load_avg += w as f64;
        t.idle = false;
        self.0.set_load(to, t);
    }

    /// Task `id` is no candidate any more (its migration was refused or found nothing).
    pub(crate) fn unlisted(&mut self, id: TaskId, cpu: CpuId) {
        let list = self.0.tasks_mut(cpu);
        if let Some(i) = list.iter().position(|t| t.id == id) {
            list.remove(i);
        }
    }
}

/// The `k`-th representative task of worker `worker`'s away queue (module docs).
fn representative(worker: usize, k: u32, node: NodeId, cpu: CpuId) -> TaskMeta {
    TaskMeta::new(TaskId(((worker as u64) << 32) | u64::from(k)), node, cpu)
}

#[cfg(test)]
mod test {
    use zonal_topology::presets;

    use super::*;

    #[test]
    fn the_view_lists_movable_tasks_and_follows_moves() {
        let topo = Arc::new(presets::preset("s1").unwrap());
        let mut v = LiveView::new(Arc::clone(&topo));
        v.set_cpu(CpuId(0), 0, 5, 3, (5120.0, 1024.0), false);
        let l = v.view().cpu_load(CpuId(0));
        assert_eq!(
            (l.nr_running, l.weighted_load, l.idle),
            (5, 5 * 1024, false)
        );
        assert_eq!(v.view().tasks(CpuId(0)).len(), 3);
        assert!(v
            .view()
            .tasks(CpuId(0))
            .iter()
            .all(|t| t.migratable && !t.running));
        assert!(v.view().cpu_load(CpuId(4)).idle);
        let id = v.view().tasks(CpuId(0))[2].id;
        v.moved(id, CpuId(0), CpuId(4));
        assert_eq!(v.view().tasks(CpuId(0)).len(), 2);
        assert_eq!(v.view().cpu_load(CpuId(0)).nr_running, 4);
        let to = v.view().cpu_load(CpuId(4));
        assert_eq!((to.nr_running, to.idle), (1, false));
        assert!(v.view().tasks(CpuId(4)).is_empty());
    }
}
