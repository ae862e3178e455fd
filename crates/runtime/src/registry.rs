//! The registry: every queue of a pool, its workers' shared state, and the worker loop.
//!
//! Queue layout (see `steal/README.md` for who may take what):
//! - per worker: a LIFO [`Worker`] deque of *fresh tasks at home* (origin = this node, never
//!   migrated); an `inbox` injector only its owner pops (pinned and aged tasks); an `away`
//!   injector of tasks that migrated or live away from their origin;
//! - per NUMA node: an injector of work aimed at the node (`spawn_on`, `par_for`);
//! - one global injector for work from outside the pool.

use std::any::Any;
use std::cell::Cell;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use crossbeam_deque::{Injector, Steal, Stealer, Worker};
use crossbeam_utils::CachePadded;
use zonal_policy::{Ageing, Policy, StealWalker};
use zonal_topology::{CpuId, NodeId, Topology};

use crate::blocks::{LocalBlocks, SharedBlocks};
use crate::error::SpawnError;
use crate::job::{StackJob, Task};
use crate::latch::{AsCoreLatch, CoreLatch, CrossLatch, Latch, LockLatch};
use crate::metrics::{bump, WorkerCounters};
use crate::sleep::Sleep;
use crate::task::{Meta, TaskOptions, NO_ORIGIN};
use crate::unwind;

/// Fruitless searches (each followed by `yield_now`) before a worker gets sleepy.
const SPIN_ROUNDS: u32 = 32;

/// A handler for panics of spawned tasks.
pub(crate) type PanicHandler = dyn Fn(Box<dyn Any + Send>) + Send + Sync;
/// A start or exit handler, given the worker index.
pub(crate) type ThreadHandler = dyn Fn(usize) + Send + Sync;
/// A steal observer.
pub(crate) type StealObserver = dyn Fn(&crate::StealRecord) + Send + Sync;

/// The state of one worker that other threads touch.
pub(crate) struct WorkerShared {
    pub(crate) stealer: Stealer<Task>,
    pub(crate) inbox: Injector<Task>,
    pub(crate) away: Injector<Task>,
    /// Upper bound on `away.len()`: incremented before a push, decremented after a pop.
    pub(crate) away_len: AtomicUsize,
    /// Written by the owner on every task: padded away from what thieves read (`stealer`,
    /// `away_len`), or every steal walk would bounce the owner's counter line.
    pub(crate) counters: CachePadded<WorkerCounters>,
    /// The worker's job blocks as other threads see them (`blocks.rs`): written by thieves
    /// that free the worker's jobs, so on a line of its own.
    pub(crate) blocks: CachePadded<SharedBlocks>,
}

pub(crate) struct Registry {
    pub(crate) topo: Arc<Topology>,
    pub(crate) policy: Arc<dyn Policy>,
    pub(crate) shared: Box<[CachePadded<WorkerShared>]>,
    pub(crate) worker_cpu: Box<[CpuId]>,
    pub(crate) worker_node: Box<[u32]>,
    /// Per worker: its steal walk (the policy crate's [`StealWalker`]) over the CPUs that
    /// have a worker, nearest first, with the policy's cached answers.
    pub(crate) walkers: Box<[StealWalker]>,
    /// Per worker, per slot of its walk: the victim's worker index.
    pub(crate) slot_worker: Box<[Box<[usize]>]>,
    /// The policy's ageing rule (`StealSide::ageing`), read once.
    pub(crate) ageing: Ageing,
    pub(crate) node_injectors: Box<[CachePadded<Injector<Task>>]>,
    /// Per node: `Meta::fresh(node)`, the metadata of the bare jobs of that node's deques
    /// (`Task::meta`).
    pub(crate) fresh_meta: Box<[Meta]>,
    /// Per node: whether any worker sits on it (work aimed at a node without workers goes to
    /// the global injector).
    pub(crate) node_has_workers: Box<[bool]>,
    pub(crate) global: Injector<Task>,
    pub(crate) sleep: Sleep,
    pub(crate) terminate: AtomicBool,
    /// Spawned (`'static`) tasks accepted and not yet finished.
    pub(crate) pending: CachePadded<AtomicUsize>,
    pub(crate) injected: CachePadded<AtomicU64>,
    pub(crate) panic_handler: Option<Box<PanicHandler>>,
    pub(crate) start_handler: Option<Box<ThreadHandler>>,
    pub(crate) exit_handler: Option<Box<ThreadHandler>>,
    pub(crate) observer: Option<Box<StealObserver>>,
    pub(crate) epoch: Instant,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("workers", &self.shared.len())
            .field("policy", &self.policy.name())
            .finish_non_exhaustive()
    }
}

thread_local! {
    static WORKER: Cell<*const WorkerThread> = const { Cell::new(ptr::null()) };
}

/// The thread-owned half of a worker.
pub(crate) struct WorkerThread {
    pub(crate) deque: Worker<Task>,
    pub(crate) index: usize,
    pub(crate) node: u32,
    pub(crate) cpu: CpuId,
    pub(crate) registry: Arc<Registry>,
    /// Metadata of the task running now (children inherit group and weight).
    pub(crate) current: Cell<Meta>,
    /// `Meta::fresh(node)`: the metadata of the bare jobs of our deque (`Task::meta`).
    pub(crate) home: Meta,
    /// `&registry.shared[index].counters`, cached for the hot path.
    ///
    /// Invariant: points into `registry`, which this struct keeps alive (it owns an `Arc`),
    /// and `shared` is never reallocated.
    counters: *const WorkerCounters,
    /// A coarse clock for the policies (µs since the pool started), refreshed when the
    /// worker starts idling and every `CLOCK_REFRESH` steal walks: reading the real clock
    /// on every steal costs more than the steal.
    pub(crate) clock_us: Cell<u64>,
    pub(crate) walks: Cell<u32>,
    /// The free list of our job blocks (`blocks.rs`).
    pub(crate) blocks: LocalBlocks,
}

/// Steal walks between two refreshes of [`WorkerThread::clock_us`].
pub(crate) const CLOCK_REFRESH: u32 = 64;

impl WorkerThread {
    /// The worker running on this thread, if any.
    #[inline]
    pub(crate) fn current() -> *const WorkerThread {
        WORKER.with(Cell::get)
    }

    pub(crate) fn new(deque: Worker<Task>, index: usize, registry: Arc<Registry>) -> Self {
        let counters: *const WorkerCounters = &*registry.shared[index].counters;
        // SAFETY: the shared half lives in the registry, which this worker keeps alive, as
        // long as every block (slabs are freed when the registry drops).
        let blocks = unsafe { LocalBlocks::new(&registry.shared[index].blocks) };
        let node = registry.worker_node[index];
        Self {
            deque,
            index,
            node,
            cpu: registry.worker_cpu[index],
            current: Cell::new(Meta::fresh(node)),
            home: Meta::fresh(node),
            counters,
            clock_us: Cell::new(0),
            walks: Cell::new(0),
            blocks,
            registry,
        }
    }

    #[inline]
    pub(crate) fn counters(&self) -> &WorkerCounters {
        // SAFETY: type invariant of `counters`: it points into the registry we keep alive.
        unsafe { &*self.counters }
    }

    /// Queues a task known to be fresh at home (a `join` half): straight onto the deque.
    #[inline]
    pub(crate) fn push_fresh(&self, task: Task) {
        debug_assert!(
            task.meta(&self.home).origin == self.node && task.meta(&self.home).migrations == 0
        );
        bump(&self.counters().spawned, 1);
        self.deque.push(task);
        self.registry.sleep.new_local_work(self.node);
    }

    /// Queues a bare job (`BareJob`) this worker just created: fresh at home by
    /// construction, so straight onto the deque, the only queue a bare job may be in.
    #[inline]
    pub(crate) fn push_bare(&self, task: Task) {
        debug_assert!(task.job.is_bare());
        bump(&self.counters().spawned, 1);
        self.deque.push(task);
        self.registry.sleep.new_local_work(self.node);
    }

    /// Runs the worker until the pool terminates. Called on the worker's own thread.
    pub(crate) fn run(self) {
        let this = &self;
        WORKER.with(|w| w.set(this));
        let registry = &*self.registry;
        if let Some(h) = &registry.start_handler {
            let _ = unwind::halt_unwinding(|| h(self.index));
        }
        self.idle_loop(None);
        if let Some(h) = &registry.exit_handler {
            let _ = unwind::halt_unwinding(|| h(self.index));
        }
        WORKER.with(|w| w.set(ptr::null()));
    }

    /// Queues a task created by this worker.
    #[inline]
    pub(crate) fn push(&self, task: Task) {
        bump(&self.counters().spawned, 1);
        let meta = task.meta(&self.home);
        if meta.origin == self.node && meta.migrations == 0 {
            self.deque.push(task);
            self.registry.sleep.new_local_work(self.node);
        } else {
            self.push_cold(task);
        }
    }

    /// A task away from home or already migrated: aged ones stay in our inbox, others go to
    /// our away queue.
    #[cold]
    fn push_cold(&self, task: Task) {
        let r = &*self.registry;
        let me = &r.shared[self.index];
        if self.is_aged(&task) {
            bump(&me.counters.aged_kept, 1);
            me.inbox.push(task);
        } else {
            me.away_len.fetch_add(1, Ordering::Relaxed);
            me.away.push(task);
            r.sleep.new_local_work(task.meta(&self.home).origin);
        }
    }

    /// Whether the task is aged under the policy's one ageing rule (then no thief may see it).
    fn is_aged(&self, task: &Task) -> bool {
        self.registry
            .ageing
            .is_aged_after(task.meta(&self.home).migrations)
    }

    /// Pops the most recent task of our own deque (for `join`).
    #[inline]
    pub(crate) fn take_local(&self) -> Option<Task> {
        let t = self.deque.pop();
        if t.is_some() {
            bump(&self.counters().local_pops, 1);
        }
        t
    }

    /// Runs one queued task.
    #[inline]
    pub(crate) fn execute(&self, task: Task) {
        self.execute_with(task, task.meta(&self.home));
    }

    /// Runs one task whose metadata the caller already holds (a thief updates the migration
    /// count in its copy rather than writing the job's header, a line the victim's
    /// allocator may still be using).
    #[inline]
    pub(crate) fn execute_with(&self, task: Task, meta: Meta) {
        bump(&self.counters().tasks_run, 1);
        let prev = self.current.replace(meta);
        // SAFETY: every Task is handed out by exactly one queue operation, so this is the
        // job's only execution (JobRef invariant).
        unsafe { task.job.execute() };
        self.current.set(prev);
    }

    /// Finds a task and its metadata: own deque, inbox, away queue, node injector, global
    /// injector, steal.
    #[inline]
    pub(crate) fn find_work(&self) -> Option<(Task, Meta)> {
        if let Some(t) = self.take_local() {
            return Some((t, t.meta(&self.home)));
        }
        self.find_work_cold()
    }

    #[cold]
    fn find_work_cold(&self) -> Option<(Task, Meta)> {
        let r = &*self.registry;
        let me = &r.shared[self.index];
        if let Some(t) = pop_injector(&me.inbox) {
            bump(&me.counters.inbox_pops, 1);
            return Some((t, t.meta(&self.home)));
        }
        if me.away_len.load(Ordering::Relaxed) != 0 {
            if let Some(t) = pop_injector(&me.away) {
                me.away_len.fetch_sub(1, Ordering::Relaxed);
                bump(&me.counters.local_pops, 1);
                return Some((t, t.meta(&self.home)));
            }
        }
        let injected =
            pop_injector(&r.node_injectors[self.node as usize]).or_else(|| pop_injector(&r.global));
        if let Some(t) = injected {
            let mut meta = t.meta(&self.home);
            if meta.origin == NO_ORIGIN {
                meta.origin = self.node;
            }
            bump(&me.counters.injector_pops, 1);
            return Some((t, meta));
        }
        self.steal()
    }

    /// Works (or sleeps) until `latch` is set.
    #[inline]
    pub(crate) fn wait_until<L: AsCoreLatch>(&self, latch: &L) {
        let core = latch.as_core_latch();
        if !core.probe() {
            self.idle_loop(Some(core));
        }
    }

    /// The search/sleep loop (`sleep/README.md`, steps 0–4). With a latch: until it is set.
    /// Without: until the pool terminates with nothing pending.
    #[cold]
    fn idle_loop(&self, latch: Option<&CoreLatch>) {
        let abort = unwind::AbortIfPanic;
        let r = &*self.registry;
        let done = || match latch {
            Some(l) => l.probe(),
            // SeqCst: pairs with the SeqCst store of `terminate` and the SeqCst decrement of
            // `pending` (README step 7), read after the sleepy fence.
            None => r.terminate.load(Ordering::SeqCst) && r.pending.load(Ordering::SeqCst) == 0,
        };
        let mut rounds = 0u32;
        let mut idle_since: Option<Instant> = None;
        let counters = self.counters();
        let end_idle = |since: &mut Option<Instant>| {
            if let Some(t) = since.take() {
                bump(&counters.idle_ns, t.elapsed().as_nanos() as u64);
            }
        };
        loop {
            if done() {
                break;
            }
            if let Some((t, meta)) = self.find_work() {
                end_idle(&mut idle_since);
                rounds = 0;
                self.execute_with(t, meta);
                continue;
            }
            rounds += 1;
            // Idle time counts from the second fruitless search: a single miss between two
            // tasks (common for a busy thief) does not pay for two clock reads.
            if rounds == 2 {
                let now = Instant::now();
                self.clock_us
                    .set(now.saturating_duration_since(r.epoch).as_micros() as u64);
                idle_since = Some(now);
            }
            if rounds < SPIN_ROUNDS {
                std::thread::yield_now();
                continue;
            }
            let sleepy = r.sleep.get_sleepy(self.index, self.node);
            if done() {
                r.sleep.cancel(sleepy);
                break;
            }
            if let Some((t, meta)) = self.find_work() {
                r.sleep.cancel(sleepy);
                end_idle(&mut idle_since);
                rounds = 0;
                self.execute_with(t, meta);
                continue;
            }
            if let Some(l) = latch {
                if !l.fall_asleep() {
                    r.sleep.cancel(sleepy);
                    break;
                }
            }
            bump(&counters.parks, 1);
            // Out of work: give back the job memory of the last burst (`blocks.rs`).
            self.blocks.trim();
            r.sleep.park(sleepy);
            if let Some(l) = latch {
                l.wake_up();
            }
            rounds = 0;
        }
        end_idle(&mut idle_since);
        std::mem::forget(abort);
    }
}

/// Pops an injector. `Injector::steal` runs a SeqCst fence even when the queue is empty;
/// `is_empty` is two loads, so an idle worker checking its (usually empty) injectors stays
/// cheap. A stale "empty" is harmless: the sleep protocol re-checks after its fence, and
/// `is_empty`'s loads are SeqCst.
#[inline]
pub(crate) fn pop_injector(inj: &Injector<Task>) -> Option<Task> {
    if inj.is_empty() {
        None
    } else {
        steal_loop(|| inj.steal())
    }
}

/// Loops on `Retry` (never treat it as empty: the queue may hold work).
#[inline]
pub(crate) fn steal_loop(mut f: impl FnMut() -> Steal<Task>) -> Option<Task> {
    loop {
        match f() {
            Steal::Success(t) => return Some(t),
            Steal::Empty => return None,
            Steal::Retry => std::hint::spin_loop(),
        }
    }
}

impl Registry {
    /// Microseconds since the pool started (the policies' clock).
    pub(crate) fn now_us(&self) -> u64 {
        self.epoch.elapsed().as_micros() as u64
    }

    pub(crate) fn num_workers(&self) -> usize {
        self.shared.len()
    }

    /// Whether `node` is a node of the pool's topology.
    pub(crate) fn check_node(&self, node: NodeId) -> Result<(), SpawnError> {
        let nodes = self.node_injectors.len();
        if node.index() < nodes {
            Ok(())
        } else {
            Err(SpawnError::UnknownNode { node, nodes })
        }
    }

    /// Whether spawn options fit the pool (an origin it has).
    pub(crate) fn check_options(&self, opts: &TaskOptions) -> Result<(), SpawnError> {
        opts.named_origin().map_or(Ok(()), |n| self.check_node(n))
    }

    /// Wakes one specific worker (latch set, or work pinned to it).
    pub(crate) fn wake_worker(&self, worker: usize) {
        self.sleep.wake_worker(worker);
    }

    /// Queues a task from a thread that is not one of our workers (aimed at `node` if given
    /// and the node has workers; the global injector otherwise).
    #[cold]
    pub(crate) fn inject(&self, task: Task, node: Option<NodeId>) {
        self.injected.fetch_add(1, Ordering::Relaxed);
        match node {
            Some(n) if self.node_has_workers[n.index()] => {
                self.node_injectors[n.index()].push(task);
                self.sleep.new_work(n.0);
            }
            _ => {
                self.global.push(task);
                self.sleep.new_work(u32::MAX);
            }
        }
    }

    /// Queues a task for node `node`'s injector from anywhere.
    pub(crate) fn push_to_node(&self, task: Task, node: NodeId) {
        let wt = WorkerThread::current();
        // SAFETY: a non-null WORKER points at the WorkerThread living on this thread's stack
        // for the duration of `WorkerThread::run`, which outlives this call.
        match unsafe { wt.as_ref() } {
            // Aimed at our own node: that is our own deque (the task is fresh at home), which
            // a worker blocked on it pops first.
            Some(w) if ptr::eq(&*w.registry, self) && w.node == node.0 => w.push(task),
            // A node without workers: the task keeps its origin but goes where anyone may
            // take it (its node injector could be out of every worker's zone).
            Some(w) if ptr::eq(&*w.registry, self) && !self.node_has_workers[node.index()] => {
                bump(&w.counters().spawned, 1);
                self.global.push(task);
                self.sleep.new_work(u32::MAX);
            }
            Some(w) if ptr::eq(&*w.registry, self) => {
                bump(&w.counters().spawned, 1);
                self.node_injectors[node.index()].push(task);
                self.sleep.new_work(node.0);
            }
            _ => self.inject(task, Some(node)),
        }
    }

    /// Queues a task in one worker's inbox (never stolen), from anywhere.
    pub(crate) fn push_pinned(&self, task: Task, worker: usize) {
        let wt = WorkerThread::current();
        // SAFETY: as in `push_to_node`.
        match unsafe { wt.as_ref() } {
            Some(w) if ptr::eq(&*w.registry, self) => bump(&w.counters().spawned, 1),
            _ => {
                self.injected.fetch_add(1, Ordering::Relaxed);
            }
        }
        self.shared[worker].inbox.push(task);
        self.sleep.wake_worker(worker);
    }

    /// Runs `op` on a worker of this registry: here if we are one; else via the global
    /// injector, the calling thread blocking meanwhile, or, if it is a worker of another
    /// pool, working for that pool meanwhile.
    #[inline]
    pub(crate) fn in_worker<OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&WorkerThread, bool) -> R + Send,
        R: Send,
    {
        let wt = WorkerThread::current();
        // SAFETY: as in `push_to_node`.
        match unsafe { wt.as_ref() } {
            Some(w) if ptr::eq(&*w.registry, self) => op(w, false),
            Some(w) => self.in_worker_cross(w, op),
            None => self.in_worker_cold(op),
        }
    }

    /// `in_worker` from a worker of another pool: inject the job here and keep that worker
    /// busy with its own pool's work until a worker of ours has run it. Blocking it instead
    /// would idle a core of the other pool, and deadlock if that pool's work is what ours
    /// waits for.
    #[cold]
    fn in_worker_cross<OP, R>(&self, current: &WorkerThread, op: OP) -> R
    where
        OP: FnOnce(&WorkerThread, bool) -> R + Send,
        R: Send,
    {
        let latch = CrossLatch::new(&current.registry, current.index);
        self.run_injected(op, latch, |l| current.wait_until(l))
    }

    /// `in_worker` from a thread outside every pool: it blocks until a worker has run `op`.
    #[cold]
    fn in_worker_cold<OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&WorkerThread, bool) -> R + Send,
        R: Send,
    {
        self.run_injected(op, LockLatch::new(), LockLatch::wait)
    }

    /// Queues `op` on the global injector as a job on this stack, then `wait`s for `latch`,
    /// which the worker that runs it sets.
    fn run_injected<OP, R, L: Latch>(&self, op: OP, latch: L, wait: impl FnOnce(&L)) -> R
    where
        OP: FnOnce(&WorkerThread, bool) -> R + Send,
        R: Send,
    {
        let job = StackJob::new(
            |injected| {
                let wt = WorkerThread::current();
                // SAFETY: the job runs on a worker of this registry (it was queued here), so
                // WORKER is set and valid for the duration of the call.
                op(unsafe { &*wt }, injected)
            },
            latch,
            Meta::fresh(NO_ORIGIN),
        );
        // SAFETY: `job` outlives its task: `wait` returns only once the latch is set, that
        // is, once the job has run, and `job` lives until the end of this function.
        let task: Task = unsafe { job.as_task() };
        self.inject(task, None);
        wait(&job.latch);
        job.into_result()
    }

    /// A spawned task finished (README step 7).
    pub(crate) fn task_done(&self) {
        // SeqCst: pairs with the SeqCst `terminate` store in `ThreadPool::drop`: whichever
        // comes second sees the other and wakes everyone.
        if self.pending.fetch_sub(1, Ordering::SeqCst) == 1 && self.terminate.load(Ordering::SeqCst)
        {
            self.sleep.wake_all();
        }
    }

    /// Hands a spawned task's panic to the handler (or reports it).
    #[cold]
    pub(crate) fn handle_panic(&self, payload: Box<dyn Any + Send>) {
        let wt = WorkerThread::current();
        // SAFETY: as in `push_to_node`.
        if let Some(w) = unsafe { wt.as_ref() } {
            bump(&w.counters().panics, 1);
        }
        match &self.panic_handler {
            Some(h) => {
                // A panicking handler must not kill the worker either.
                let _ = unwind::halt_unwinding(|| h(payload));
            }
            None => {
                let msg = payload
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_owned())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "<non-string panic payload>".into());
                tracing::error!(target: "zonal_runtime", "a spawned task panicked: {msg}");
            }
        }
    }
}
