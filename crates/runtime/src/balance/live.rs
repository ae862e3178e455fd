//! The pool's live queues as the driver sees them ([`Queues`] for the registry), and the
//! pool's one balancer ([`Balancer`]): a lock that only balancing passes take.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use zonal_topology::{CpuId, Level, Topology};

use crate::registry::Registry;
use crate::sleep::Others;
use crate::task_meta::{Meta, Task};
use std::sync::Mutex;

use super::driver::{Driver, Queues};
use super::load::Probe;
use super::PassReport;

/// The pool's balancer state, created at the first pass. Only passes take its lock (the
/// control plane's, [`ThreadPool::balance_now`](crate::ThreadPool::balance_now)); workers
/// never do.
#[derive(Debug, Default)]
pub(crate) struct Balancer(Mutex<Option<Driver>>);

/// One balancing pass of `registry`'s pool at `now_us` (µs of the pool's clock) under the
/// current policy. Concurrent passes run one after the other.
pub(crate) fn pass(registry: &Registry, now_us: u64) -> PassReport {
    let epoch = registry.policy.current();
    let balancer: &Balancer = registry.extension();
    let mut guard = balancer.0.lock().unwrap_or_else(|e| e.into_inner());
    let driver = guard
        .get_or_insert_with(|| Driver::new(Arc::clone(&registry.topo), registry.num_workers()));
    driver.pass(registry, &*epoch.policy, epoch.generation, now_us)
}

impl Queues for Registry {
    type Task = Task;

    fn topology(&self) -> &Arc<Topology> {
        &self.topo
    }

    fn worker_cpus(&self) -> &[CpuId] {
        &self.worker_cpu
    }

    fn cpu_worker(&self) -> &[usize] {
        self.policy.cpu_worker()
    }

    fn probe(&self, w: usize) -> Probe {
        let s = &self.shared[w];
        let away = s.away.len_bound();
        let queued = s.stealer.len() + s.inbox.len() + away;
        Probe {
            queued: u32::try_from(queued).unwrap_or(u32::MAX),
            away: u32::try_from(away).unwrap_or(u32::MAX),
            idle_since_us: s.idle.idle_since(),
            idle_ns: s.counters.idle_ns.load(Ordering::Relaxed),
        }
    }

    fn pop_away(&self, w: usize) -> Option<Task> {
        let s = &self.shared[w];
        s.away.pop()
    }

    fn meta(&self, w: usize, t: &Task) -> (Meta, u64) {
        // Away queues hold jobs with a header only (bare jobs never leave their deque).
        debug_assert!(!t.job.is_bare());
        let home = &self.fresh_meta[self.worker_node[w] as usize];
        (t.meta(home), t.job.id())
    }

    fn set_moved(&self, t: &Task, meta: Meta, to: usize) {
        t.set_meta(meta);
        crate::async_task::async_moved(self, t, to);
    }

    /// The task was given to `w`: only `w` is woken (`queues/push.rs`).
    fn push_away(&self, w: usize, t: Task) {
        Registry::push_away(self, w, Others::None, t);
    }

    fn push_inbox(&self, w: usize, t: Task) {
        Registry::push_inbox(self, w, t);
    }

    fn record_move(&self, from: usize, level: Level) {
        self.shared[from]
            .counters
            .balance_migrated(level.index(), 1);
    }
}
