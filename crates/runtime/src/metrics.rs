//! Metrics: per-worker counters, written by their worker only and published as atomics in a
//! cache-padded block, read as snapshots by [`ThreadPool::metrics`](crate::ThreadPool::metrics)
//! or a [`MetricsHandle`].
//!
//! Each counter has one writer (its worker), so an update is a Relaxed load and store (a
//! plain `add` on x86), not a locked read-modify-write. Readers may see a snapshot that is
//! a few events stale and not consistent across counters; that is the price of a free hot
//! path. Totals are exact once the pool is quiescent.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};

use zonal_policy::Refusal;

use crate::turnaround::Turnaround;

const NREASONS: usize = Refusal::ALL.len();

/// `WorkerCounters::pin_state`: a worker with no CPU to be pinned to.
pub(crate) const UNPINNED: u8 = 0;
/// `WorkerCounters::pin_state`: pinned to its CPU, as far as the last check knows.
pub(crate) const PINNED: u8 = 1;
/// `WorkerCounters::pin_state`: displaced from its CPU, re-pinning at each check.
pub(crate) const DISPLACED: u8 = 2;

/// Adds `n` to a single-writer counter.
#[inline]
pub(crate) fn bump(c: &AtomicU64, n: u64) {
    c.store(c.load(Ordering::Relaxed).wrapping_add(n), Ordering::Relaxed);
}

/// The shared counters of one worker.
#[derive(Debug)]
pub(crate) struct WorkerCounters {
    pub(crate) spawned: AtomicU64,
    pub(crate) tasks_run: AtomicU64,
    pub(crate) local_pops: AtomicU64,
    /// `join` halves popped back and run inline: each is a local pop and a task run.
    pub(crate) joins_inline: AtomicU64,
    pub(crate) inbox_pops: AtomicU64,
    /// Addressed tasks taken at a `join` boundary (`boundary.rs`).
    pub(crate) boundary_picks: AtomicU64,
    pub(crate) injector_pops: AtomicU64,
    pub(crate) batch_moved: AtomicU64,
    pub(crate) steals: Box<[AtomicU64]>,
    pub(crate) refused: [AtomicU64; NREASONS],
    pub(crate) refused_by_level: Box<[AtomicU64]>,
    pub(crate) beyond_zone: AtomicU64,
    pub(crate) farther: AtomicU64,
    /// Tasks with a header run outside their root's zone (`WorkerThread::execute_with`).
    pub(crate) outside_zone: AtomicU64,
    pub(crate) aged_kept: AtomicU64,
    pub(crate) idle_ns: AtomicU64,
    pub(crate) parks: AtomicU64,
    pub(crate) wakeups: AtomicU64,
    /// Victims probed and node hints read by steal walks (`steal/mod.rs`).
    pub(crate) victim_probes: AtomicU64,
    /// Steal walks that took nothing.
    pub(crate) fruitless_rounds: AtomicU64,
    pub(crate) panics: AtomicU64,
    /// [`UNPINNED`], [`PINNED`] or [`DISPLACED`] (`displacement.rs`).
    pub(crate) pin_state: AtomicU8,
    pub(crate) displacements: AtomicU64,
    pub(crate) repins: AtomicU64,
    // --- Written by the control plane, not the worker ---------------------------------
    /// Tasks the control-plane balancer moved off this worker, by level (see
    /// [`WorkerCounters::balance_migrated`]).
    pub(crate) balance_migrations: Box<[AtomicU64]>,
    pub(crate) async_polls: AtomicU64,
    pub(crate) async_tasks_completed: AtomicU64,
}

impl WorkerCounters {
    pub(crate) fn new(levels: usize, pinned: bool) -> Self {
        let pin_state = if pinned { PINNED } else { UNPINNED };
        let zeros = |n: usize| (0..n).map(|_| AtomicU64::new(0)).collect::<Box<[_]>>();
        Self {
            spawned: AtomicU64::new(0),
            tasks_run: AtomicU64::new(0),
            local_pops: AtomicU64::new(0),
            joins_inline: AtomicU64::new(0),
            inbox_pops: AtomicU64::new(0),
            boundary_picks: AtomicU64::new(0),
            injector_pops: AtomicU64::new(0),
            batch_moved: AtomicU64::new(0),
            steals: zeros(levels),
            refused: std::array::from_fn(|_| AtomicU64::new(0)),
            refused_by_level: zeros(levels),
            beyond_zone: AtomicU64::new(0),
            farther: AtomicU64::new(0),
            outside_zone: AtomicU64::new(0),
            aged_kept: AtomicU64::new(0),
            idle_ns: AtomicU64::new(0),
            parks: AtomicU64::new(0),
            wakeups: AtomicU64::new(0),
            victim_probes: AtomicU64::new(0),
            fruitless_rounds: AtomicU64::new(0),
            panics: AtomicU64::new(0),
            pin_state: AtomicU8::new(pin_state),
            displacements: AtomicU64::new(0),
            repins: AtomicU64::new(0),
            balance_migrations: zeros(levels),
            async_polls: AtomicU64::new(0),
            async_tasks_completed: AtomicU64::new(0),
        }
    }

    #[cold]
    pub(crate) fn refuse(&self, r: Refusal, level: usize) {
        bump(&self.refused[r.index()], 1);
        if let Some(c) = self.refused_by_level.get(level) {
            bump(c, 1);
        }
    }

    /// Counts `n` tasks that the control-plane balancer (`control/balance.rs`) migrated from
    /// this worker's queues to a worker at `level` (0 = same node). The balancer calls it
    /// once per move it carried out, never for one it only planned; unlike the worker's
    /// own counters this one may have several writers (one per control plane), hence a
    /// locked add. A level outside the topology is a caller's bug: it is not counted.
    pub(crate) fn balance_migrated(&self, level: usize, n: u64) {
        debug_assert!(
            level < self.balance_migrations.len(),
            "balance migration at level {level} of {}",
            self.balance_migrations.len()
        );
        if let Some(c) = self.balance_migrations.get(level) {
            c.fetch_add(n, Ordering::Relaxed);
        }
    }

    /// A snapshot of the counters, with what the registry knows of the worker: `queue_len`
    /// is read by the caller from the worker's queues.
    pub(crate) fn snapshot(
        &self,
        worker: usize,
        cpu: u32,
        node: u32,
        job_memory_bytes: u64,
        queue_len: u64,
    ) -> WorkerMetrics {
        let ld = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let steals_by_level: Vec<u64> = self.steals.iter().map(ld).collect();
        WorkerMetrics {
            worker: Some(worker),
            cpu: Some(cpu),
            node: Some(node),
            tasks_spawned: ld(&self.spawned),
            tasks_run: ld(&self.tasks_run) + ld(&self.joins_inline),
            local_pops: ld(&self.local_pops) + ld(&self.joins_inline),
            inbox_pops: ld(&self.inbox_pops),
            boundary_picks: ld(&self.boundary_picks),
            injector_pops: ld(&self.injector_pops),
            batch_moved: ld(&self.batch_moved),
            migrations: steals_by_level.iter().sum(),
            steals_by_level,
            refused: Refusals(std::array::from_fn(|i| ld(&self.refused[i]))),
            refused_by_level: self.refused_by_level.iter().map(ld).collect(),
            migrations_beyond_zone: ld(&self.beyond_zone),
            moves_farther_from_origin: ld(&self.farther),
            executions_outside_zone: ld(&self.outside_zone),
            aged_kept: ld(&self.aged_kept),
            idle_ns: ld(&self.idle_ns),
            parks: ld(&self.parks),
            wakeups: ld(&self.wakeups),
            victim_probes: ld(&self.victim_probes),
            fruitless_rounds: ld(&self.fruitless_rounds),
            panics: ld(&self.panics),
            pinned: self.pin_state.load(Ordering::Relaxed) == PINNED,
            displaced: self.pin_state.load(Ordering::Relaxed) == DISPLACED,
            displacements: ld(&self.displacements),
            repins: ld(&self.repins),
            job_memory_bytes,
            balance_migrations_by_level: self.balance_migrations.iter().map(ld).collect(),
            queue_len,
            async_polls: ld(&self.async_polls),
            async_tasks_completed: ld(&self.async_tasks_completed),
        }
    }
}

/// Refusal counts by reason; serialises as a map from [`Refusal::as_str`] to the count,
/// every reason present.
///
/// ```
/// # use zonal_runtime::doc_facade as zonal;
/// use zonal::runtime::Refusals;
/// use zonal::policy::Refusal;
/// let r = Refusals::default();
/// assert_eq!(r.get(Refusal::Zone), 0);
/// assert_eq!(r.by_name().len(), Refusal::ALL.len());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Refusals(pub [u64; NREASONS]);

impl Refusals {
    /// The count for one reason.
    #[must_use]
    pub fn get(&self, r: Refusal) -> u64 {
        self.0[r.index()]
    }

    /// Every count, by reason name.
    #[must_use]
    pub fn by_name(&self) -> BTreeMap<&'static str, u64> {
        Refusal::ALL
            .iter()
            .map(|&r| (r.as_str(), self.get(r)))
            .collect()
    }

    /// All refusals.
    #[must_use]
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }

    fn add(&mut self, o: &Refusals) {
        for (a, b) in self.0.iter_mut().zip(o.0) {
            *a += b;
        }
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for Refusals {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(Refusal::ALL.iter().map(|&r| (r.as_str(), self.get(r))))
    }
}

/// One worker's counters (or, in [`PoolMetrics::total`], the sum over workers).
///
/// Non-exhaustive: fields may be added; read them, or start from `Default`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct WorkerMetrics {
    /// Worker index (`None` in [`PoolMetrics::total`], which is no one worker).
    pub worker: Option<usize>,
    /// The topology CPU it stands for (dense index; `None` in a total).
    pub cpu: Option<u32>,
    /// Its node (dense index; `None` in a total).
    pub node: Option<u32>,
    /// Tasks it queued (spawns and `join` halves).
    pub tasks_spawned: u64,
    /// Tasks it ran (popped, stolen, or taken back by `join`).
    pub tasks_run: u64,
    /// Tasks taken from its own deque.
    pub local_pops: u64,
    /// Tasks taken from its own inbox (pinned and aged tasks).
    pub inbox_pops: u64,
    /// Tasks addressed to it (its inbox and away queue: woken async tasks, pinned tasks)
    /// that it took at a `join` boundary, nested in fork-join work rather than after it
    /// (each also counts in `inbox_pops` or `local_pops`, and in `tasks_run`).
    pub boundary_picks: u64,
    /// Tasks taken from its node's injector.
    pub injector_pops: u64,
    /// Tasks moved into its deque by a batch, besides the one it ran at once: from the deque
    /// of a worker of its node (a batch steal: a same-node move of fresh tasks at home, level
    /// I, not a migration — the steal itself is in `steals_by_level`), or from its node's
    /// injector. Each is counted again when it runs (`local_pops`, or a thief's steal).
    pub batch_moved: u64,
    /// Steals it made, by the level of the victim (index 0 = level I).
    pub steals_by_level: Vec<u64>,
    /// Steals it made: each moves a task, so this is also its migration count.
    pub migrations: u64,
    /// Refusals it met while stealing, by reason: one per refused attempt (a thief that
    /// retries the same victim counts again). Empty victims are skipped without asking.
    pub refused: Refusals,
    /// Refusals by the level of the victim.
    pub refused_by_level: Vec<u64>,
    /// Steals from beyond the load-balancing zone.
    pub migrations_beyond_zone: u64,
    /// Steals that took a task already away from home farther from its origin.
    pub moves_farther_from_origin: u64,
    /// Tasks it ran outside their root's zone: tasks with a header (placed roots, their
    /// children, async tasks, …) whose origin — the node their computation is rooted on —
    /// is not in its node's zone. A root placed on a node without workers runs on the
    /// nearest node with workers, and counts here when that node's zone does not hold it.
    pub executions_outside_zone: u64,
    /// Tasks it queued as aged (kept in its inbox, never stolen).
    pub aged_kept: u64,
    /// Time spent searching or parked, ns (from the second fruitless search on).
    pub idle_ns: u64,
    /// Times it parked.
    pub parks: u64,
    /// Times it was woken to search (by a producer, or by a searcher that found work or was
    /// refused work: `sleep/README.md`, steps 0b, 0c, 5); latches, pinned tasks and shutdown
    /// wake without counting here.
    pub wakeups: u64,
    /// Victims its steal walks probed, and node hints they read (`steal/hints.rs`): the
    /// cost of idle searching, in cache lines read of other workers' queues (a fruitless
    /// walk on a quiet pool reads one hint per node and probes nothing).
    pub victim_probes: u64,
    /// Its steal walks that took nothing.
    pub fruitless_rounds: u64,
    /// Spawned tasks of its that panicked.
    pub panics: u64,
    /// Whether it is pinned to its CPU now (`false` for an unpinned worker, and while
    /// displaced). In a total: whether every worker is.
    pub pinned: bool,
    /// Whether it was displaced from its CPU (the CPU went offline, or its affinity was
    /// widened) and is not pinned again yet (`displacement.rs`). In a total: whether any
    /// worker is.
    pub displaced: bool,
    /// Times it found itself displaced.
    pub displacements: u64,
    /// Times it pinned itself again after a displacement.
    pub repins: u64,
    /// Bytes of job memory it holds (its slabs of job blocks, in use or free; see
    /// `blocks.rs`). Grows with a burst of spawns and shrinks when the worker parks.
    pub job_memory_bytes: u64,
    // --- The control plane's view (Prometheus endpoint, balancer) ---------------------
    /// Tasks moved off this worker by the control plane's balancer (not by steals), by the
    /// level of the destination (index 0 = level I, same node). Not in `migrations`.
    pub balance_migrations_by_level: Vec<u64>,
    /// Tasks waiting in its queues when the snapshot was taken (a gauge): its deque, its
    /// inbox and its away queue. Read without locks while workers run, so approximate.
    pub queue_len: u64,
    /// Polls of async tasks it made (each also counts in `tasks_run`).
    pub async_polls: u64,
    /// Async tasks that finished on it (a value or a panic; cancellations at shutdown are
    /// not counted).
    pub async_tasks_completed: u64,
}

impl WorkerMetrics {
    fn add(&mut self, o: &WorkerMetrics) {
        self.tasks_spawned += o.tasks_spawned;
        self.tasks_run += o.tasks_run;
        self.local_pops += o.local_pops;
        self.inbox_pops += o.inbox_pops;
        self.boundary_picks += o.boundary_picks;
        self.injector_pops += o.injector_pops;
        self.batch_moved += o.batch_moved;
        if self.steals_by_level.len() < o.steals_by_level.len() {
            self.steals_by_level.resize(o.steals_by_level.len(), 0);
            self.refused_by_level.resize(o.refused_by_level.len(), 0);
        }
        for (a, b) in self.steals_by_level.iter_mut().zip(&o.steals_by_level) {
            *a += b;
        }
        for (a, b) in self.refused_by_level.iter_mut().zip(&o.refused_by_level) {
            *a += b;
        }
        self.migrations += o.migrations;
        self.refused.add(&o.refused);
        self.migrations_beyond_zone += o.migrations_beyond_zone;
        self.moves_farther_from_origin += o.moves_farther_from_origin;
        self.executions_outside_zone += o.executions_outside_zone;
        self.aged_kept += o.aged_kept;
        self.idle_ns += o.idle_ns;
        self.parks += o.parks;
        self.wakeups += o.wakeups;
        self.victim_probes += o.victim_probes;
        self.fruitless_rounds += o.fruitless_rounds;
        self.panics += o.panics;
        self.displaced |= o.displaced;
        self.displacements += o.displacements;
        self.repins += o.repins;
        self.job_memory_bytes += o.job_memory_bytes;
        if self.balance_migrations_by_level.len() < o.balance_migrations_by_level.len() {
            self.balance_migrations_by_level
                .resize(o.balance_migrations_by_level.len(), 0);
        }
        for (a, b) in self
            .balance_migrations_by_level
            .iter_mut()
            .zip(&o.balance_migrations_by_level)
        {
            *a += b;
        }
        self.queue_len += o.queue_len;
        self.async_polls += o.async_polls;
        self.async_tasks_completed += o.async_tasks_completed;
    }
}

/// A snapshot of a pool's metrics: per worker, and summed. Non-exhaustive, as
/// [`WorkerMetrics`].
///
/// ```
/// # use zonal_runtime::doc_facade as zonal;
/// let pool = zonal::ThreadPoolBuilder::new().preset("s1").no_policy().build()?;
/// pool.join(|| (), || ());
/// let m = pool.metrics();
/// assert_eq!(m.workers.len(), 32);
/// assert_eq!(m.total.steals_by_level.len(), 6);
/// # Ok::<(), zonal::BuildError>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct PoolMetrics {
    /// The current policy's name.
    pub policy: String,
    /// Live policy switches so far ([`ThreadPool::set_policy`](crate::ThreadPool::set_policy)).
    pub policy_switches: u64,
    /// When the last live switch happened, µs since the pool started (`None`: never).
    pub last_policy_switch_us: Option<u64>,
    /// Memory access levels (`M`).
    pub levels: usize,
    /// Levels inside the load-balancing zone (`S`).
    pub zone_depth: usize,
    /// Tasks queued from outside the pool (`install`, `spawn` from other threads).
    pub tasks_injected: u64,
    /// Per worker.
    pub workers: Vec<WorkerMetrics>,
    /// Summed over workers (`worker`, `cpu` and `node` are `None`).
    pub total: WorkerMetrics,
    /// Workers displaced from their CPU now ([`WorkerMetrics::displaced`]).
    pub displaced_workers: usize,
    /// Task turnaround (queued to completed) of the tasks that record it: async tasks and
    /// spawned tasks with a handle (`turnaround.rs`).
    pub turnaround: Turnaround,
    /// Whether the topology is this machine's, discovered (sysfs on Linux, hwloc with the
    /// `hwloc` feature). `false` where this machine could not be discovered and the pool
    /// runs over the flat fallback (one node of `available_parallelism` CPUs, unpinned,
    /// said with a `tracing` warning at the build), and for a pool over a topology that is
    /// not this machine's ([`ThreadPool::is_virtual`](crate::ThreadPool::is_virtual)).
    pub topology_discovered: bool,
    /// Workers that were to be pinned but run unpinned because pinning them failed (the
    /// default pinning mode of [`ThreadPoolBuilder::pin`](crate::ThreadPoolBuilder::pin)):
    /// 0 when every pin held or none was tried. Fixed at the build.
    pub pin_fallback_workers: usize,
    /// Why the first of those workers could not be pinned, e.g. `worker 0, CPU 3:
    /// sched_setaffinity: Invalid argument (os error 22)`; `None` when
    /// [`pin_fallback_workers`](Self::pin_fallback_workers) is 0.
    pub pin_fallback_reason: Option<String>,
    /// The share of this machine's CPUs the pool took as one of several ranks on it
    /// ([`ThreadPoolBuilder::local_ranks`](crate::ThreadPoolBuilder::local_ranks)); the
    /// default (rank 0 of 1, no source) without a launcher. Fixed at the build.
    pub local_share: crate::launcher::LocalShare,
}

impl PoolMetrics {
    pub(crate) fn from_workers(
        policy: String,
        levels: usize,
        zone_depth: usize,
        tasks_injected: u64,
        workers: Vec<WorkerMetrics>,
    ) -> Self {
        let mut total = WorkerMetrics {
            worker: None,
            cpu: None,
            node: None,
            steals_by_level: vec![0; levels],
            refused_by_level: vec![0; levels],
            balance_migrations_by_level: vec![0; levels],
            ..WorkerMetrics::default()
        };
        for w in &workers {
            total.add(w);
        }
        total.pinned = !workers.is_empty() && workers.iter().all(|w| w.pinned);
        let displaced_workers = workers.iter().filter(|w| w.displaced).count();
        Self {
            policy,
            policy_switches: 0,
            last_policy_switch_us: None,
            levels,
            zone_depth,
            tasks_injected,
            workers,
            total,
            displaced_workers,
            turnaround: Turnaround::default(),
            topology_discovered: false,
            pin_fallback_workers: 0,
            pin_fallback_reason: None,
            local_share: crate::launcher::LocalShare::default(),
        }
    }

    /// Tasks queued in all (by workers and from outside).
    #[must_use]
    pub fn tasks_spawned(&self) -> u64 {
        self.total.tasks_spawned + self.tasks_injected
    }
}

/// What a pool's build found about where it runs, fixed for the pool's life and folded
/// into each of its snapshots ([`PoolFacts::snapshot`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct PoolFacts {
    /// [`PoolMetrics::topology_discovered`].
    pub(crate) topology_discovered: bool,
    /// [`PoolMetrics::pin_fallback_workers`].
    pub(crate) pin_fallback_workers: usize,
    /// [`PoolMetrics::pin_fallback_reason`].
    pub(crate) pin_fallback_reason: Option<String>,
    /// [`PoolMetrics::local_share`].
    pub(crate) local_share: crate::launcher::LocalShare,
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;

    use super::*;
    use crate::ThreadPoolBuilder;

    #[test]
    fn balance_migrations_are_counted_by_level_and_summed() {
        let a = WorkerCounters::new(3, false);
        let b = WorkerCounters::new(3, false);
        a.balance_migrated(0, 2);
        a.balance_migrated(2, 1);
        b.balance_migrated(2, 4);
        let wa = a.snapshot(0, 0, 0, 0, 0);
        assert_eq!(wa.balance_migrations_by_level, [2, 0, 1]);
        assert_eq!(wa.migrations, 0, "balance moves are not steals");
        let m = PoolMetrics::from_workers("p".into(), 3, 1, 0, vec![wa, b.snapshot(1, 1, 0, 0, 0)]);
        assert_eq!(m.total.balance_migrations_by_level, [2, 0, 5]);
    }

    #[test]
    fn queue_len_counts_the_waiting_tasks_of_a_worker() {
        let pool = ThreadPoolBuilder::new()
            .preset("s1")
            .no_policy()
            .build()
            .unwrap();
        let (started_tx, started) = mpsc::channel();
        let (release, gate) = mpsc::channel::<()>();
        // Worker 0 blocks; five more tasks pinned to it wait in its inbox.
        pool.spawn_pinned(0, move || {
            started_tx.send(()).unwrap();
            gate.recv().unwrap();
        });
        started.recv().unwrap();
        let (done_tx, done) = mpsc::channel();
        for _ in 0..5 {
            let done_tx = done_tx.clone();
            pool.spawn_pinned(0, move || done_tx.send(()).unwrap());
        }
        let m = pool.metrics();
        assert_eq!(m.workers[0].queue_len, 5);
        assert_eq!(m.total.queue_len, 5);
        release.send(()).unwrap();
        for _ in 0..5 {
            done.recv().unwrap();
        }
        // The pinned tasks ran: the inbox is empty again.
        assert_eq!(pool.metrics().workers[0].queue_len, 0);
    }
}
