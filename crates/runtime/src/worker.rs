//! A worker: the thread-owned half (its deque, its current task's metadata, its job
//! blocks), its loop — find work, run it, or follow the sleep protocol
//! (`sleep/README.md`) — and the one accessor for the worker running on this thread
//! ([`WorkerThread::with_current`]).

use std::cell::{Cell, RefCell};
use std::ptr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use crossbeam_deque::{Stealer, Worker};
use zonal_policy::Ageing;
use zonal_topology::{CpuId, NodeId};

use crate::blocks::LocalBlocks;
use crate::displacement::{Check, PinWatch};
use crate::latch::{AsCoreLatch, CoreLatch};
use crate::metrics::{bump, WorkerCounters};
use crate::policy_switch::PolicyEpoch;
use crate::queues::{Deque, OwnQueue, SharedQueue};
use crate::registry::{Registry, WorkerShared};
use crate::sleep::Others;
use crate::task_meta::{Meta, Task, NO_ORIGIN};
use crate::unwind;

/// Fruitless searches (each followed by `yield_now`) before a worker gets sleepy.
const SPIN_ROUNDS: u32 = 32;

thread_local! {
    static WORKER: Cell<*const WorkerThread> = const { Cell::new(ptr::null()) };
    /// This thread's worker when it was adopted by a pool (`use_current_thread`): it lives
    /// as long as the thread (rayon leaks it), and WORKER points into it.
    static ADOPTED: RefCell<Option<Adopted>> = const { RefCell::new(None) };
}

/// An adopted worker (`use_current_thread`), owned by its thread's `ADOPTED`.
///
/// Invariant: `worker` comes from `Box::into_raw` and is freed only by `Drop`. It is held as
/// a raw pointer, not a `Box`: moving a `Box` asserts it is unique, which would invalidate
/// the pointer WORKER holds (Miri's Stacked Borrows reported exactly that when the worker
/// was a `Box` moved into `ADOPTED` after WORKER's pointer was taken from it).
struct Adopted {
    worker: ptr::NonNull<WorkerThread>,
}

impl Drop for Adopted {
    /// At the thread's exit: WORKER stops pointing at the worker before it is freed.
    fn drop(&mut self) {
        let _ = WORKER.try_with(|w| w.set(ptr::null()));
        LocalBlocks::leave();
        // SAFETY: type invariant: from `Box::into_raw`, freed once, here; WORKER no longer
        // points at it and the blocks left it.
        drop(unsafe { Box::from_raw(self.worker.as_ptr()) });
    }
}

/// Makes `worker` the current thread's worker for the rest of the thread's life
/// (`ThreadPoolBuilder::use_current_thread`): it does not run the worker loop, but works
/// for its pool whenever it waits in it (`wait_until`). The caller checked that the thread
/// is no worker yet.
pub(crate) fn adopt(mut worker: WorkerThread) {
    worker.adopted = true;
    let at = ptr::NonNull::from(Box::leak(Box::new(worker)));
    // SAFETY: the worker never moves and lives until `Adopted::drop` (which owns it from
    // here on), which leaves the blocks first.
    unsafe { at.as_ref().blocks.enter() };
    ADOPTED.with(|a| {
        let mut a = a.borrow_mut();
        debug_assert!(a.is_none(), "a thread is adopted by one pool at most");
        *a = Some(Adopted { worker: at });
    });
    WORKER.with(|w| w.set(at.as_ptr()));
}

/// The thread-owned half of a worker.
pub(crate) struct WorkerThread {
    pub(crate) deque: Deque,
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
    /// `&registry.shared[index]`, cached for the `join` hot path (`boundary.rs`). Same
    /// invariant as `counters`.
    shared: *const WorkerShared,
    /// A coarse clock for the policies (µs since the pool started), refreshed when the
    /// worker starts idling and every `CLOCK_REFRESH` steal walks: reading the real clock
    /// on every steal costs more than the steal.
    pub(crate) clock_us: Cell<u64>,
    pub(crate) walks: Cell<u32>,
    /// The free list of our job blocks (`blocks.rs`).
    pub(crate) blocks: LocalBlocks,
    /// Where a batch (a steal batch, or one from our node's injector) waits to be checked
    /// task by task; empty between two searches (`steal/README.md`, "Batches"). LIFO, as
    /// the victims' deques: a batch stolen from a deque lies in it in the victim's order,
    /// oldest at the front, where `batch_front` takes it.
    pub(crate) batch: Worker<Task>,
    /// The front (oldest end) of `batch`: a steal batch is run and kept oldest first, so the
    /// thief runs the task a single steal would have taken (the largest piece of a split
    /// computation) and its deque keeps the victim's order.
    pub(crate) batch_front: Stealer<Task>,
    /// Our copy of the pool's policy epoch (`policy_switch.rs`), refreshed when the pool's
    /// generation differs from `policy_gen`; a steal walk holds it for the whole walk.
    pub(crate) policy: RefCell<Arc<PolicyEpoch>>,
    pub(crate) policy_gen: Cell<u64>,
    /// `policy`'s ageing rule, for routing.
    pub(crate) ageing: Cell<Ageing>,
    /// Whether we are still on our CPU (`displacement.rs`).
    pin: PinWatch,
    /// How many tasks this thread is running, nested (`execute_with`): an adopted worker
    /// may wait for its pool's end only outside every task.
    depth: Cell<u32>,
    /// How many tasks taken at `join` boundaries run nested on this thread now
    /// (`boundary.rs`, bounded by `PICK_DEPTH`).
    pub(crate) picking: Cell<u32>,
    /// Whether this is a thread adopted as worker 0 (`use_current_thread`), which runs no
    /// worker loop.
    adopted: bool,
    /// Per node of the topology: whether our node's zone holds it (`Topology::origin_in_zone`),
    /// to count the tasks we run outside their root's zone (`execute_with`).
    in_zone: Box<[bool]>,
}

/// Steal walks between two refreshes of [`WorkerThread::clock_us`].
pub(crate) const CLOCK_REFRESH: u32 = 64;

impl WorkerThread {
    /// The one accessor for the worker running on this thread: calls `f` with it, or with
    /// `None` on a thread that is no worker. The reference cannot outlive `f`.
    #[inline(always)]
    pub(crate) fn with_current<R>(f: impl FnOnce(Option<&WorkerThread>) -> R) -> R {
        let wt = WORKER.with(Cell::get);
        // SAFETY: WORKER is non-null only (a) while `WorkerThread::run` runs on this thread:
        // it points at that function's `self`, which lives on this thread's stack until
        // `run` clears WORKER before returning; or (b) while this thread's `ADOPTED` holds
        // an adopted worker (`adopt`): it points into that box, which is freed only by
        // `Adopted::drop` at the thread's exit, after it cleared WORKER. `f` runs on this
        // thread, inside that span, and the higher-ranked borrow cannot escape it.
        f(unsafe { wt.as_ref() })
    }

    /// [`with_current`](Self::with_current), for a worker of `registry` only: `None` on a
    /// thread that is no worker, or a worker of another pool.
    #[inline(always)]
    pub(crate) fn with_current_in<R>(
        registry: &Registry,
        f: impl FnOnce(Option<&WorkerThread>) -> R,
    ) -> R {
        Self::with_current(move |w| f(w.filter(|w| ptr::eq(&*w.registry, registry))))
    }

    pub(crate) fn new(deque: Deque, index: usize, registry: Arc<Registry>) -> Self {
        let counters: *const WorkerCounters = &*registry.shared[index].counters;
        let shared: *const WorkerShared = &*registry.shared[index];
        // SAFETY: the shared half lives in the registry, which this worker keeps alive, as
        // long as every block (slabs are freed when the registry drops).
        let blocks = unsafe { LocalBlocks::new(&registry.shared[index].blocks) };
        let batch = Worker::new_lifo();
        let node = registry.worker_node[index];
        let epoch = registry.policy.current();
        let topo = &registry.topo;
        let in_zone = (0..topo.node_count() as u32)
            .map(|o| topo.origin_in_zone(NodeId(node), NodeId(o)))
            .collect();
        Self {
            in_zone,
            policy_gen: Cell::new(epoch.generation),
            ageing: Cell::new(epoch.ageing),
            policy: RefCell::new(epoch),
            deque,
            index,
            node,
            cpu: registry.worker_cpu[index],
            current: Cell::new(Meta::fresh(node)),
            home: Meta::fresh(node),
            counters,
            shared,
            clock_us: Cell::new(0),
            walks: Cell::new(0),
            blocks,
            batch_front: batch.stealer(),
            batch,
            pin: PinWatch::new(registry.worker_pin[index]),
            depth: Cell::new(0),
            picking: Cell::new(0),
            adopted: false,
            registry,
        }
    }

    /// Picks up a policy switch (`policy_switch.rs`): one Acquire load of the pool's
    /// generation; only when it changed, the lock, an `Arc` clone and the ageing rule. Not
    /// while a walk holds our epoch (it then picks it up at the next search).
    #[inline]
    pub(crate) fn refresh_policy(&self) {
        let slot = &self.registry.policy;
        if slot.generation() != self.policy_gen.get() {
            self.refresh_policy_cold();
        }
    }

    #[cold]
    fn refresh_policy_cold(&self) {
        if let Ok(mut mine) = self.policy.try_borrow_mut() {
            let epoch = self.registry.policy.current();
            self.policy_gen.set(epoch.generation);
            self.ageing.set(epoch.ageing);
            *mine = epoch;
        }
    }

    /// Which of our own queues a task of ours with `meta` waits in: the one rule
    /// ([`OwnQueue::of`]) under our epoch's ageing rule, refreshed first.
    #[inline]
    pub(crate) fn own_queue_of(&self, meta: &Meta) -> OwnQueue {
        self.refresh_policy();
        OwnQueue::of(self.ageing.get(), meta)
    }

    /// An existing task of our node's injector taken in a batch that is not fresh at home
    /// (`batch_injected`): aged → our inbox (only we run it, as the policy says for an aged
    /// task); otherwise back onto our node's injector, where every worker of the node pops
    /// it without asking the policy — not our away queue, where our node-mates would take
    /// it only as thieves, and the policy refuses a node-mate a task whose origin lies
    /// outside the node's zone (a root placed on a node without workers, queued here as
    /// its nearest): it would wait for us alone. The injector's other workers are woken for
    /// it as for a refused task handed back (its owners only).
    #[cold]
    pub(crate) fn keep_away(&self, meta: &Meta, task: Task) {
        match self.own_queue_of(meta) {
            OwnQueue::Inbox => self.push_own(OwnQueue::Inbox, meta.origin, task),
            OwnQueue::Away => self.registry.push_node(self.node, Others::None, task),
        }
    }

    /// Our shared half (`registry.shared[index]`).
    #[inline(always)]
    pub(crate) fn shared(&self) -> &WorkerShared {
        // SAFETY: type invariant of `shared`: it points into the registry we keep alive.
        unsafe { &*self.shared }
    }

    #[inline]
    pub(crate) fn counters(&self) -> &WorkerCounters {
        // SAFETY: type invariant of `counters`: it points into the registry we keep alive.
        unsafe { &*self.counters }
    }

    /// Runs the worker until the pool terminates. Called on the worker's own thread.
    pub(crate) fn run(self) {
        let this = &self;
        WORKER.with(|w| w.set(this));
        // SAFETY: `self` stays on this frame until the `leave` below.
        unsafe { self.blocks.enter() };
        let registry = &*self.registry;
        if let Some(h) = &registry.start_handler {
            let _ = unwind::halt_unwinding(|| h(self.index));
        }
        self.idle_loop(None);
        if let Some(h) = &registry.exit_handler {
            let _ = unwind::halt_unwinding(|| h(self.index));
        }
        LocalBlocks::leave();
        WORKER.with(|w| w.set(ptr::null()));
    }

    /// Whether this is a thread adopted as worker 0 (`use_current_thread`).
    pub(crate) fn is_adopted(&self) -> bool {
        self.adopted
    }

    /// Whether this worker is running a task (nested in `execute_with`).
    pub(crate) fn in_task(&self) -> bool {
        self.depth.get() > 0
    }

    /// An adopted worker (`use_current_thread`) at its pool's end: works with the other
    /// workers until the pool, terminated, has no task pending (as a worker's loop ends).
    pub(crate) fn work_until_done(&self) {
        self.idle_loop(None);
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
        if !task.job.is_bare() {
            self.count_placement(meta.origin);
        }
        if self.pin.tick() {
            self.check_pin(Check::Cpu);
        }
        let prev = self.current.replace(meta);
        self.depth.set(self.depth.get() + 1);
        // SAFETY: every Task is handed out by exactly one queue operation, so this is the
        // job's only execution (JobRef invariant).
        unsafe { task.job.execute() };
        self.depth.set(self.depth.get() - 1);
        self.current.set(prev);
    }

    /// Counts a task with a header that runs outside its root's zone: its origin (the node
    /// its computation is rooted on) is not in our node's zone. (A bare job runs on its
    /// spawner's node or where a thief took it, which `steals_by_level` counts. A `join`
    /// half popped back and run inline is counted by `join.rs`.)
    #[inline]
    pub(crate) fn count_placement(&self, origin: u32) {
        if !self.in_zone.get(origin as usize).copied().unwrap_or(true) {
            bump(&self.counters().outside_zone, 1);
        }
    }

    /// Finds a task and its metadata: own inbox and away queue (a job boundary,
    /// `boundary.rs`), own deque, node injector, steal.
    #[inline]
    pub(crate) fn find_work(&self) -> Option<(Task, Meta)> {
        if let Some(found) = self.find_unstolen() {
            return Some(found);
        }
        self.steal()
    }

    /// Work that needs no steal walk: our own queues and the injectors (step 0: anyone
    /// may look there; only searchers walk the other workers' queues).
    #[inline]
    fn find_unstolen(&self) -> Option<(Task, Meta)> {
        // A job boundary: addressed tasks before the deque (`boundary.rs`; the check
        // inline, the pops out of line).
        if self.addressed_waiting() {
            if let Some(found) = self.take_addressed_cold() {
                return Some(found);
            }
        }
        if let Some(t) = self.take_local() {
            return Some((t, t.meta(&self.home)));
        }
        self.find_unstolen_cold()
    }

    /// [`find_unstolen`](Self::find_unstolen) past our deque.
    #[cold]
    fn find_unstolen_cold(&self) -> Option<(Task, Meta)> {
        self.pop_inbox()
            .or_else(|| self.pop_away())
            .or_else(|| self.pop_injected())
    }

    /// Work of this worker's own queues only: its inbox, its away queue (`boundary.rs`), its
    /// deque; no injector, no steal (`yield_local`).
    pub(crate) fn find_local(&self) -> Option<(Task, Meta)> {
        // A job boundary: addressed tasks before the deque (`boundary.rs`).
        if let Some(found) = self.take_addressed() {
            return Some(found);
        }
        self.take_local().map(|t| (t, t.meta(&self.home)))
    }

    /// Whether this worker's own queues (deque, inbox, away queue) hold a task.
    pub(crate) fn has_local_work(&self) -> bool {
        let me = self.shared();
        !self.deque.is_empty() || !me.inbox.is_empty() || me.away.len_bound() > 0
    }

    /// Our inbox: pinned and aged tasks, never stolen.
    #[inline]
    pub(crate) fn pop_inbox(&self) -> Option<(Task, Meta)> {
        let me = self.shared();
        let t = me.inbox.pop()?;
        bump(&me.counters.inbox_pops, 1);
        Some((t, t.meta(&self.home)))
    }

    /// Our away queue (checked through its length hint first: cheaper than the injector).
    #[inline]
    pub(crate) fn pop_away(&self) -> Option<(Task, Meta)> {
        let me = self.shared();
        if me.away.len_bound() == 0 {
            return None;
        }
        let t = me.away.pop()?;
        bump(&me.counters.local_pops, 1);
        Some((t, t.meta(&self.home)))
    }

    /// Our node's injector (a batch, [`batch_injected`](Self::batch_injected)). A task
    /// injected without an origin takes our node (not a migration).
    #[inline]
    fn pop_injected(&self) -> Option<(Task, Meta)> {
        let r = &*self.registry;
        let own = &r.node_injectors[self.node as usize];
        let t = if own.is_empty() {
            None
        } else {
            self.batch_injected(own)
        };
        let t = t?;
        let mut meta = t.meta(&self.home);
        if meta.origin == NO_ORIGIN {
            meta.origin = self.node;
        }
        bump(&self.counters().injector_pops, 1);
        Some((t, meta))
    }

    /// Takes a batch of our node's injector — up to `BATCH_MAX` tasks and half of what it
    /// holds, rounded up — and returns the first. Each other task is checked with its real
    /// metadata: fresh at home (origin our node, never migrated) → our deque, where it is
    /// what any task we spawn there is; aged → our inbox; anything else back onto the
    /// injector, where every worker of our node may pop it (`keep_away`). None of
    /// these moves is a migration (the node's injector is ours to drain, as the task we run
    /// at once), so none is checked by the policy, as a pop of the injector is not; they are
    /// counted in `batch_moved` (`steal/README.md`, "Batches").
    ///
    /// The deque gets them newest first, so that we pop them oldest first: the injector's
    /// FIFO order (`spawn_fifo` from outside) holds for what one worker takes.
    #[cold]
    fn batch_injected(&self, own: &SharedQueue) -> Option<Task> {
        const MAX: usize = zonal_policy::BATCH_MAX;
        let limit = MAX.min(own.len().div_ceil(2)).max(1);
        let first = own.steal_batch_into(&self.batch, limit)?;
        let mut taken = [None; MAX];
        let mut moved = 0;
        while let Some(t) = self.batch.pop() {
            taken[moved] = Some(t);
            moved += 1;
        }
        let mut fresh = [None; MAX];
        let mut n_fresh = 0;
        for t in taken[..moved].iter().rev().flatten() {
            let t = *t;
            let mut meta = t.meta(&self.home);
            if meta.origin == NO_ORIGIN {
                // Fixed in the header: the task is queued again.
                meta.origin = self.node;
                t.set_meta(meta);
            }
            if meta.origin == self.node && meta.migrations == 0 {
                fresh[n_fresh] = Some(t);
                n_fresh += 1;
            } else {
                self.keep_away(&meta, t);
            }
        }
        if moved != 0 {
            bump(&self.counters().batch_moved, moved as u64);
        }
        if n_fresh != 0 {
            self.push_fresh_batch(fresh[..n_fresh].iter().flatten().copied());
        }
        Some(first)
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
        let mut idle = Idle::default();
        while !self.idle_done(latch) {
            if self.run_found(&mut idle) || self.spin(latch, &mut idle) {
                continue;
            }
            if !self.sleep(latch, &mut idle) {
                break;
            }
        }
        if idle.searching {
            // Leaving as a searcher (the latch is set, or the pool is done): as if it found
            // work (step 0b), so that a wake-up it was given is passed on.
            self.registry.sleep.found_work(self.node);
        }
        idle.end(self);
        std::mem::forget(abort);
    }

    /// The idle loop's exit condition: `latch` is set; without one, the pool terminates
    /// with no task pending.
    #[inline]
    fn idle_done(&self, latch: Option<&CoreLatch>) -> bool {
        match latch {
            Some(l) => l.probe(),
            // SeqCst: pairs with the SeqCst store of `terminate` and the SeqCst decrement of
            // `pending` (README step 7), read after the sleepy fence.
            None => {
                let r = &*self.registry;
                r.terminate.load(Ordering::SeqCst) && r.pending.load(Ordering::SeqCst) == 0
            }
        }
    }

    /// Step 0: one search; runs what it finds (the idle span ends). `false`: nothing found.
    /// Our own queues and the injectors first, then the steal walk as a searcher (step 0a:
    /// every idle worker searches, but one displaced from its CPU, which only looks at its
    /// own queues and the injectors until it parks). A searcher that finds work stops
    /// searching (step 0b).
    #[inline]
    fn run_found(&self, idle: &mut Idle) -> bool {
        let found = self.find_unstolen().or_else(|| {
            if !idle.searching {
                if self.pin.is_displaced() {
                    return None;
                }
                self.registry.sleep.start_searching(self.node);
                idle.searching = true;
            }
            self.steal()
        });
        match found {
            Some((t, meta)) => {
                if idle.searching {
                    idle.searching = false;
                    self.registry.sleep.found_work(self.node);
                }
                idle.found(self);
                self.execute_with(t, meta);
                true
            }
            None => false,
        }
    }

    /// After a fruitless search: yields, or, after `SPIN_ROUNDS` of them, returns `false`
    /// (time to get sleepy). Idle time counts from the second fruitless search: a single
    /// miss between two tasks (common for a busy thief) does not pay for two clock reads.
    ///
    /// A searcher spins (every idle worker is one, step 0a), and so does a worker waiting on
    /// a latch; a displaced worker that is neither goes to sleep at once (steps 1–4, whose
    /// re-search is a full one).
    #[inline]
    fn spin(&self, latch: Option<&CoreLatch>, idle: &mut Idle) -> bool {
        idle.rounds += 1;
        let keep = idle.rounds < SPIN_ROUNDS && (idle.searching || latch.is_some());
        if idle.rounds == 2 || (!keep && idle.since.is_none()) {
            let now = Instant::now();
            let since_start = now.saturating_duration_since(self.registry.epoch);
            self.clock_us.set(since_start.as_micros() as u64);
            idle.since = Some(now);
            self.registry.shared[self.index]
                .idle
                .set_idle(since_start.as_micros() as u64);
        }
        if keep {
            std::thread::yield_now();
        }
        keep
    }

    /// Steps 1–4: stop searching (step 0c), get sleepy, search once more, then park (giving
    /// back the job memory of the last burst, `blocks.rs`) until woken. `false`: the loop is
    /// done.
    fn sleep(&self, latch: Option<&CoreLatch>, idle: &mut Idle) -> bool {
        let r = &*self.registry;
        // Step 0c: a searcher gives its place back before it registers, so that a producer
        // that no longer sees it searching wakes a sleeper instead.
        if idle.searching {
            let _ = r.sleep.stop_searching(self.node);
        }
        idle.searching = false;
        let sleepy = r.sleep.get_sleepy(self.index);
        if self.idle_done(latch) {
            // Granted a searcher's place by a waker meanwhile: `idle_loop` passes it on.
            idle.searching = r.sleep.cancel(sleepy);
            return false;
        }
        if let Some((t, meta)) = self.find_work() {
            if r.sleep.cancel(sleepy) {
                // A waker made us a searcher (step 0a), and we found work (step 0b).
                r.sleep.found_work(self.node);
            }
            idle.found(self);
            self.execute_with(t, meta);
            return true;
        }
        if let Some(l) = latch {
            if !l.fall_asleep() {
                idle.searching = r.sleep.cancel(sleepy);
                return false;
            }
        }
        bump(&self.counters().parks, 1);
        self.blocks.trim();
        // `displacement.rs`, steps 2 and 5: a displaced worker parks for a while only.
        self.check_pin(self.pin.before_park());
        let timeout = self.pin.park_timeout();
        let woken = r.sleep.park_for(sleepy, timeout);
        // Step 1: after every wake-up.
        self.check_pin(Check::Cpu);
        if woken {
            // Woken to search (steps 0a, 5): whatever the bound.
            bump(&self.counters().wakeups, 1);
            idle.searching = true;
        }
        if let Some(l) = latch {
            l.wake_up();
        }
        idle.rounds = 0;
        true
    }

    /// Steps 1–4 of `displacement.rs`: are we still on our CPU? Re-pins if we can.
    #[cold]
    fn check_pin(&self, check: Check) {
        self.pin.check(check, self.index, self.counters());
    }
}

/// The bookkeeping of one idle loop: fruitless searches in a row, and since when the
/// worker idles (from its second fruitless search).
#[derive(Default)]
struct Idle {
    rounds: u32,
    since: Option<Instant>,
    /// Whether we hold a searcher's place (step 0a): taken within the bound, or given by
    /// the waker that woke us; given back when we find work (0b) or sleep (0c).
    searching: bool,
}

impl Idle {
    /// Work found: the count starts again and the idle span, if any, ends.
    #[inline]
    fn found(&mut self, w: &WorkerThread) {
        self.rounds = 0;
        self.end(w);
    }

    /// Books the idle span, if any, in `idle_ns`, and tells the balancer it ended.
    #[inline]
    fn end(&mut self, w: &WorkerThread) {
        if let Some(t) = self.since.take() {
            bump(&w.counters().idle_ns, t.elapsed().as_nanos() as u64);
            w.registry.shared[w.index].idle.set_busy();
        }
    }
}
