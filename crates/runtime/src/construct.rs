//! Building a pool: its shared registry (queues, steal walks, sleep state) and its worker
//! threads (named, sized, pinned), from what [`ThreadPoolBuilder`](crate::ThreadPoolBuilder)
//! chose.

use std::any::Any;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};
use std::sync::{mpsc, Arc};
use std::time::Instant;

use crossbeam_deque::Stealer;
use crossbeam_utils::CachePadded;
use zonal_policy::Policy;
use zonal_topology::{CpuId, NodeId, Topology};

use crate::async_task::AsyncTasks;
use crate::balance::Balancer;
use crate::blocks::SharedBlocks;
use crate::error::{BuildError, ErrorKind};
use crate::idle_signal::IdleSignal;
use crate::metrics::WorkerCounters;
use crate::policy_switch::PolicySlot;
use crate::pool::Pinning;
use crate::pool::{Layout, ThreadPool};
use crate::queues::{AwayQueue, Deque, FifoQueue, SharedQueue};
use crate::registry::{
    Extension, PanicHandler, Registry, StealObserver, ThreadHandler, WorkerShared,
};
use crate::sleep::Sleep;
use crate::task_meta::{Meta, Task};
use crate::thread_builder::{
    pin_current, Body, Exits, PinFailure, Report, ThreadBuilder, ThreadSpawn,
};
use crate::worker::WorkerThread;

mod caller;
pub(crate) use caller::{give_back as give_back_caller, Caller};

/// The user's handlers, moved into the registry.
pub(crate) struct Hooks {
    pub(crate) panic_handler: Option<Box<PanicHandler>>,
    pub(crate) start_handler: Option<Box<ThreadHandler>>,
    pub(crate) exit_handler: Option<Box<ThreadHandler>>,
    pub(crate) observer: Option<Box<StealObserver>>,
    /// `spawn` behaves as `spawn_fifo` (`breadth_first`).
    pub(crate) breadth_first: bool,
    /// The workers enter a tokio runtime (`Threads::tokio` is set).
    #[cfg(feature = "tokio")]
    pub(crate) workers_in_tokio: bool,
}

/// How worker threads are made.
pub(crate) struct Threads {
    pub(crate) name: Option<NameFn>,
    pub(crate) stack_size: Option<usize>,
    /// Whether a worker that cannot be pinned fails the build (`pin(true)`, or a spread
    /// virtual pool) rather than running unpinned (the default).
    pub(crate) pin_required: bool,
    /// The tokio runtime each worker enters for its life (feature `tokio`).
    #[cfg(feature = "tokio")]
    pub(crate) tokio: Option<tokio::runtime::Handle>,
    /// Whether the calling thread becomes worker 0 (`use_current_thread`).
    pub(crate) adopt: bool,
}

/// Starts one thread per worker (through `spawner`), pinned to `targets[i]` where given,
/// then builds the registry for workers on `cpus` and lets the workers run. With
/// `threads.adopt`, worker 0 is the calling thread (`use_current_thread`): it is pinned
/// last, once every other worker has started, and registered as this thread's worker once
/// the pool is built. A worker whose pinning failed runs unpinned, unless
/// `threads.pin_required` (then the build fails, naming the worker, the CPU and the
/// reason). On an error the workers already started are stopped.
#[allow(clippy::too_many_arguments)]
pub(crate) fn start(
    topo: Arc<Topology>,
    policy: Arc<dyn Policy>,
    cpus: Vec<CpuId>,
    targets: &[Option<u32>],
    hooks: Hooks,
    threads: Threads,
    spawner: &mut dyn ThreadSpawn,
    mut layout: Layout,
) -> Result<ThreadPool, BuildError> {
    let adopt = threads.adopt;
    let in_a_pool = WorkerThread::with_current(|w| w.is_some());
    if adopt && in_a_pool {
        return Err(BuildError::new(ErrorKind::CurrentThreadAlreadyInPool));
    }
    // Before anything is pinned: the building thread's own mask, for the helper threads
    // (a worker of another pool has one CPU, no mask for helpers), and, when it becomes
    // worker 0, to be given back at the pool's end (`construct/caller.rs`).
    if !in_a_pool {
        crate::os::note_builder_cpus();
    }
    let caller = match (adopt, targets.first()) {
        (true, Some(Some(_))) => Caller::save_current(),
        (true, _) => Caller::adopted_unpinned(),
        (false, _) => Caller::none(),
    };
    // The pool's largest allocation (each worker's steal walk over every other worker:
    // quadratic in the workers, some 500 MiB for 4,096) is made before any thread is
    // started: where the OS runs short (an address-space or commit limit), the threads'
    // stacks are then what it refuses, and a refused thread is the build's typed error
    // (`ErrorKind::Spawn`), where a refused allocation after them would abort the process.
    let policy = PolicySlot::new(policy, &topo, &cpus);
    // And what the pool allocates after its threads are started (the rest of the registry,
    // each worker's own state once it runs) is kept back while they are started, then
    // given back before anything needs it (`Headroom`).
    let headroom = Headroom::keep(cpus.len())?;
    let mut deques: Vec<Deque> = (0..cpus.len()).map(|_| Deque::new_lifo()).collect();
    let stealers: Vec<Stealer<Task>> = deques.iter().map(Deque::stealer).collect();
    let required = threads.pin_required;
    let exits = Arc::new(Exits::default());
    let own = adopt.then(|| deques.remove(0));
    let first = usize::from(adopt);
    let mut started = start_threads(deques, first, targets, threads, spawner, &exits);
    let mut failed = await_pinning(&started.reports, started.created);
    if let Some(i) = failed.dropped {
        started
            .stopped
            .get_or_insert(Stopped::Failed(BuildError::new(ErrorKind::NotRun {
                worker: i,
            })));
    }
    // The calling thread, as worker 0: pinned only once the others have started.
    if let (true, None, Some(cpu)) = (adopt, &started.stopped, targets[0]) {
        if let Err(f) = pin_current(0, cpu) {
            failed.pins.insert(0, f);
        }
    }
    if let (true, Some(first)) = (required, failed.pins.first()) {
        started
            .stopped
            .get_or_insert(Stopped::Failed(first.clone().into_error()));
    }
    // The pins that held: the registry (and each worker's displacement watch, which reads
    // it) knows a worker whose pinning failed as never pinned, so it never tries again.
    let mut pins = targets.to_vec();
    for f in &failed.pins {
        pins[f.worker] = None;
    }
    if started.stopped.is_none() && !failed.pins.is_empty() {
        fall_back(&mut layout, &failed.pins, targets, &pins);
    }
    drop(headroom);
    let (gate, hooks) = StartGate::around(hooks);
    let registry = registry(topo, policy, cpus, &pins, stealers, hooks, caller);
    for go in started.go.drain(..) {
        // Every started worker waits for this; one that is gone (it could only have
        // panicked) has nothing to run.
        let _ = go.send(Arc::clone(&registry));
    }
    gate.open();
    let pool = ThreadPool::from_parts(Arc::clone(&registry), exits, layout);
    match started.stopped {
        None => {
            if let Some(deque) = own {
                crate::worker::adopt(WorkerThread::new(deque, 0, registry));
            }
            Ok(pool)
        }
        Some(why) => {
            pool.shutdown_and_wait(); // terminates the workers already started, waits for them
            match why {
                Stopped::Failed(e) => Err(e),
                Stopped::Panicked(payload) => std::panic::resume_unwind(payload),
            }
        }
    }
}

/// Holds the workers that have their registry back until every worker has it: each waits
/// at its start (before the start handler, which it wraps) for the build to open it. A
/// worker let loose at once searches for work (steal walks over every other worker) and,
/// with thousands of workers on a few cores, takes the CPU the building thread needs to
/// hand the registry to the rest: a 4,096-worker pool on 2 cores spent 12 of its 16 s of
/// build there.
#[derive(Default)]
struct StartGate {
    open: std::sync::Mutex<bool>,
    opened: std::sync::Condvar,
}

impl StartGate {
    /// A gate, and `hooks` with a start handler that waits at it first.
    fn around(mut hooks: Hooks) -> (Arc<Self>, Hooks) {
        let gate = Arc::new(Self::default());
        let at = Arc::clone(&gate);
        let user = hooks.start_handler.take();
        hooks.start_handler = Some(Box::new(move |i| {
            at.wait();
            if let Some(h) = &user {
                h(i);
            }
        }));
        (gate, hooks)
    }

    fn wait(&self) {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        while !*open {
            open = self.opened.wait(open).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn open(&self) {
        *self.open.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.opened.notify_all();
    }
}

/// Memory kept back while a pool's threads are started: a mapping, never touched, of
/// [`HEADROOM_BASE`] plus [`HEADROOM_PER_WORKER`] per worker — more than the registry's
/// per-worker queues and counters and each worker's own state (its batch deque, job blocks,
/// policy epoch: a few KiB each) take once the threads run. Where the process's address
/// space or the system's commit is limited (`ulimit -v`, `vm.overcommit_memory=2`), 4,096
/// threads' stacks (2 MiB each by default) can use up the rest: with the headroom kept
/// back, a stack is what the OS refuses, a typed error ([`ErrorKind::Spawn`]), never one of
/// the small allocations after it (which would abort the process: measured with `ulimit -v
/// 8000000` and 4,096 workers, a worker's first deque). Released (unmapped) before the
/// registry is built and the workers run. Refused itself: the build's error, before any
/// thread is started.
struct Headroom(#[allow(dead_code)] crate::os::PageRegion);

/// The headroom every pool keeps back, whatever its size.
const HEADROOM_BASE: usize = 16 << 20;
/// The headroom kept back per worker.
const HEADROOM_PER_WORKER: usize = 64 << 10;

impl Headroom {
    fn keep(workers: usize) -> Result<Self, BuildError> {
        let bytes = HEADROOM_PER_WORKER
            .saturating_mul(workers)
            .saturating_add(HEADROOM_BASE);
        crate::os::PageRegion::new(bytes).map(Self).map_err(|e| {
            let mib = bytes >> 20;
            BuildError::new(ErrorKind::Spawn {
                worker: 0,
                workers,
                source: std::io::Error::new(
                    e.kind(),
                    format!(
                        "the OS refuses the {mib} MiB kept back for {workers} workers beyond \
                         their stacks: {e}"
                    ),
                ),
            })
        })
    }
}

/// The default pinning mode's fallback: the `failed` workers run unpinned. Says so once
/// (a `tracing` warning naming how many and the first CPU and reason) and records it in
/// `layout` (the pool's metrics report it); a pool none of whose workers is pinned any
/// more is [`Pinning::Unpinned`].
fn fall_back(
    layout: &mut Layout,
    failed: &[PinFailure],
    targets: &[Option<u32>],
    pins: &[Option<u32>],
) {
    let first = &failed[0];
    let tried = targets.iter().filter(|t| t.is_some()).count();
    tracing::warn!(
        target: "zonal_runtime",
        workers = failed.len(),
        cpu = first.cpu,
        reason = %first.reason,
        "cannot pin {} of {tried} workers (first: worker {} to CPU {}: {}); they run \
         unpinned (`pin(true)` makes this an error, `pin(false)` does not try)",
        failed.len(),
        first.worker,
        first.cpu,
        first.reason
    );
    layout.unpinned_workers += failed.len();
    if pins.iter().all(Option::is_none) {
        layout.pinning = Pinning::Unpinned;
    }
    let facts = Arc::make_mut(&mut layout.facts);
    facts.pin_fallback_workers = failed.len();
    facts.pin_fallback_reason = Some(format!(
        "worker {}, CPU {}: {}",
        first.worker, first.cpu, first.reason
    ));
}

/// A worker thread's name, by worker index (`ThreadPoolBuilder::thread_name`).
pub(crate) type NameFn = Box<dyn FnMut(usize) -> String>;

/// The shared state of a pool, around the stealers of its workers' deques; `pins[i]` is
/// the CPU worker `i` is pinned to, if it is.
fn registry(
    topo: Arc<Topology>,
    policy: PolicySlot,
    cpus: Vec<CpuId>,
    pins: &[Option<u32>],
    stealers: Vec<Stealer<Task>>,
    hooks: Hooks,
    caller: Caller,
) -> Arc<Registry> {
    let adopted = caller.adopted();
    let shared = worker_shared(stealers, topo.mal_count(), pins);
    let worker_node: Box<[u32]> = cpus.iter().map(|&c| topo.node_of(c).0).collect();
    let nodes = topo.node_count();
    let sleep = Sleep::new(&worker_node, nodes, |a, b| {
        topo.distance(NodeId(a), NodeId(b))
    });
    let registry = Arc::new(Registry {
        topo: Arc::clone(&topo),
        shared,
        worker_cpu: cpus.clone().into_boxed_slice(),
        worker_pin: pins.into(),
        worker_node,
        policy,
        node_injectors: (0..nodes)
            .map(|_| CachePadded::new(SharedQueue::default()))
            .collect(),
        fresh_meta: (0..nodes).map(|n| Meta::fresh(n as u32)).collect(),
        worker_nodes: worker_nodes(&topo, &cpus, adopted),
        next_node: CachePadded::new(AtomicUsize::new(0)),
        placed_on: placed_on(&topo, &cpus),
        sleep,
        terminate: AtomicBool::new(false),
        pending: CachePadded::new(AtomicUsize::new(0)),
        injected: CachePadded::new(AtomicU64::new(0)),
        panic_handler: hooks.panic_handler,
        start_handler: hooks.start_handler,
        exit_handler: hooks.exit_handler,
        observer: hooks.observer,
        breadth_first: hooks.breadth_first,
        epoch: Instant::now(),
        turnaround: CachePadded::default(),
        extensions: Box::new([
            Box::new(AsyncTasks::default()) as Extension,
            Box::new(Balancer::default()),
            Box::new(caller),
        ]),
        #[cfg(feature = "tokio")]
        workers_in_tokio: hooks.workers_in_tokio,
    });
    registry.refresh_takers();
    registry
}

/// Per node: itself if a worker sits on it, else the nearest node with workers (smallest
/// distance, lowest id on ties), whose injector takes work placed there (`route.rs`).
fn placed_on(topo: &Topology, cpus: &[CpuId]) -> Box<[u32]> {
    let has = node_has_workers(topo, cpus);
    let with: Vec<u32> = (0..has.len() as u32).filter(|&n| has[n as usize]).collect();
    (0..has.len() as u32)
        .map(|n| {
            with.iter()
                .copied()
                .min_by_key(|&m| (topo.distance(NodeId(n), NodeId(m)), m))
                .unwrap_or(n)
        })
        .collect()
}

/// Each worker's shared half, around the stealer of its deque.
fn worker_shared(
    stealers: Vec<Stealer<Task>>,
    levels: usize,
    pins: &[Option<u32>],
) -> Box<[CachePadded<WorkerShared>]> {
    stealers
        .into_iter()
        .zip(pins)
        .map(|(stealer, pin)| {
            CachePadded::new(WorkerShared {
                stealer,
                inbox: SharedQueue::default(),
                away: AwayQueue::default(),
                counters: CachePadded::new(WorkerCounters::new(levels, pin.is_some())),
                blocks: CachePadded::new(SharedBlocks::new()),
                fifo: FifoQueue::default(),
                idle: IdleSignal::default(),
            })
        })
        .collect()
}

/// The nodes that have a worker, ascending (where outside spawns are spread). An adopted
/// worker 0 (`use_current_thread`) runs the pool's work only when its thread blocks in the
/// pool: its node counts only if no other worker has one.
fn worker_nodes(topo: &Topology, cpus: &[CpuId], adopted: bool) -> Box<[u32]> {
    let looping = if adopted && cpus.len() > 1 {
        &cpus[1..]
    } else {
        cpus
    };
    let mut nodes: Vec<u32> = looping.iter().map(|&c| topo.node_of(c).0).collect();
    nodes.sort_unstable();
    nodes.dedup();
    nodes.into_boxed_slice()
}

/// Per node: whether a worker sits on it.
fn node_has_workers(topo: &Topology, cpus: &[CpuId]) -> Box<[bool]> {
    let mut has = vec![false; topo.node_count()];
    for &c in cpus {
        has[topo.node_of(c).index()] = true;
    }
    has.into_boxed_slice()
}

/// Why starting the workers stopped before the last one.
enum Stopped {
    /// A worker could not be started or pinned.
    Failed(BuildError),
    /// The thread-name callback panicked: the panic resumes in the caller once the workers
    /// already started are stopped and have exited.
    Panicked(Box<dyn Any + Send>),
}

impl PinFailure {
    /// The build's error when pinning is required.
    fn into_error(self) -> BuildError {
        BuildError::new(ErrorKind::Pin {
            worker: self.worker,
            cpu: self.cpu,
            reason: self.reason,
        })
    }
}

/// The worker threads started so far.
struct Started {
    /// How many [`ThreadBuilder`]s were made (each reports once: started, or dropped).
    created: usize,
    /// Per started worker: where its registry is sent once every worker has pinned.
    go: Vec<mpsc::Sender<Arc<Registry>>>,
    /// Where the workers report how pinning went.
    reports: mpsc::Receiver<Report>,
    /// Why no further worker was started, if one was not.
    stopped: Option<Stopped>,
}

/// Starts one thread per worker from index `first` on (each deque's worker), through
/// `spawner`: each pins itself, reports, and waits for the registry.
///
/// On the first failure — a name the OS cannot take, a thread the spawner cannot start
/// (out of memory for its stack, out of threads: `std::thread::Builder::spawn`'s error, or
/// the spawn handler's), a panicking name callback — no further worker is started; the
/// caller then stops the ones already started (terminating the pool wakes every sleeper)
/// and waits for them to exit before it returns the error: no thread of the failed pool
/// outlives `build`. A worker that cannot be pinned is such a failure only when pinning is
/// required (the caller decides, from the reports).
fn start_threads(
    deques: Vec<Deque>,
    first: usize,
    targets: &[Option<u32>],
    mut threads: Threads,
    spawner: &mut dyn ThreadSpawn,
    exits: &Arc<Exits>,
) -> Started {
    let (tx, reports) = mpsc::channel();
    let workers = targets.len();
    // Sized by the worker count, which `num_threads::check` and the topology's `MAX_CPUS`
    // bound before anything is allocated.
    let mut go = Vec::with_capacity(workers);
    let mut stopped = None;
    let mut created = 0;
    for (i, deque) in (first..).zip(deques) {
        let (go_tx, go_rx) = mpsc::channel();
        let started = thread_name(&mut threads, i).and_then(|name| {
            let body = Body {
                deque,
                pin: targets[i],
                report: tx.clone(),
                go: go_rx,
                #[cfg(feature = "tokio")]
                tokio: threads.tokio.clone(),
                exit: exits.enter(),
            };
            created += 1;
            let thread = ThreadBuilder::new(i, Some(name), threads.stack_size, body);
            spawner.spawn(thread).map_err(|source| {
                Stopped::Failed(BuildError::new(ErrorKind::Spawn {
                    worker: i,
                    workers,
                    source,
                }))
            })
        });
        match started {
            Ok(()) => go.push(go_tx),
            Err(e) => {
                stopped = Some(e);
                break;
            }
        }
    }
    Started {
        created,
        go,
        reports,
        stopped,
    }
}

/// The name of worker `i`'s thread: the builder's callback, or `zonal-worker-i`. A name
/// with a NUL byte is refused here (`std::thread::Builder::spawn` would panic on it).
fn thread_name(threads: &mut Threads, i: usize) -> Result<String, Stopped> {
    let name = match &mut threads.name {
        Some(f) => {
            std::panic::catch_unwind(AssertUnwindSafe(|| f(i))).map_err(Stopped::Panicked)?
        }
        None => format!("zonal-worker-{i}"),
    };
    if name.contains('\0') {
        return Err(Stopped::Failed(BuildError::new(ErrorKind::ThreadName {
            worker: i,
            name,
        })));
    }
    Ok(name)
}

/// What the workers reported.
struct Reports {
    /// The pinning failures, by worker.
    pins: Vec<PinFailure>,
    /// The first worker whose `ThreadBuilder` was dropped without running, if one was.
    dropped: Option<usize>,
}

/// Waits for the reports of the `created` workers (each reports once).
fn await_pinning(reports: &mpsc::Receiver<Report>, created: usize) -> Reports {
    let mut out = Reports {
        pins: Vec::new(),
        dropped: None,
    };
    for r in reports.iter().take(created) {
        match r {
            Report::Started(Some(f)) => out.pins.push(f),
            Report::Started(None) => {}
            Report::Dropped(i) => {
                out.dropped = Some(out.dropped.map_or(i, |d: usize| d.min(i)));
            }
        }
    }
    out.pins.sort_by_key(|f| f.worker);
    out
}

/// Pinning that fails, made to fail here by the test seam `os::fail_pins` (on the workers
/// of the test's own pool, named by the test), and the three pinning modes.
// The behaviour tests' exactly-once check (one copy: `tests/support/exactly_once.rs`).
#[cfg(all(test, target_os = "linux", not(zonal_loom)))]
#[path = "../tests/support/exactly_once.rs"]
mod exactly_once;

#[cfg(all(test, target_os = "linux", not(zonal_loom)))]
mod tests {
    use crate::os::fail_pins::FailPins;
    use crate::pool::Pinning;
    use crate::{ThreadPool, ThreadPoolBuilder};

    /// The CPUs the test thread (and so a fresh worker thread, which inherits its mask) may
    /// run on.
    fn allowed() -> Vec<u32> {
        crate::os::thread_affinity().unwrap()
    }

    /// A pool over this machine whose workers are named `{prefix}{i}`.
    fn builder(prefix: &'static str) -> ThreadPoolBuilder {
        ThreadPoolBuilder::new()
            .no_policy()
            .thread_name(move |i| format!("{prefix}{i}"))
    }

    /// Each worker's affinity as the kernel says, read on the worker, by worker index.
    fn affinities(pool: &ThreadPool) -> Vec<Vec<u32>> {
        pool.broadcast(|_| crate::os::thread_affinity().unwrap())
    }

    /// The OS CPU worker `w` stands for.
    fn os_cpu(pool: &ThreadPool, w: usize) -> u32 {
        pool.topology()
            .machine()
            .cpu(pool.registry().worker_cpu[w])
            .os_index
    }

    use super::exactly_once;

    /// Many tasks, by a scope and by nested joins, each run exactly once.
    fn every_task_runs_once(pool: &ThreadPool) {
        exactly_once::scope_and_joins_run_once(pool, 10_000);
    }

    #[test]
    fn by_default_a_worker_that_cannot_be_pinned_runs_unpinned() {
        let allowed = allowed();
        let cpu = allowed[0];
        let _fail = FailPins::new("pinfail-default-", &[cpu]);
        let pool = builder("pinfail-default-").build().unwrap();
        let n = pool.num_workers();
        let w = (0..n).find(|&w| os_cpu(&pool, w) == cpu).unwrap();

        // Said by the pool, its metrics and the registry the displacement watch reads.
        assert_eq!(pool.pin_fallback_workers(), 1);
        assert_eq!(pool.unpinned_workers(), 1);
        let want = if n == 1 {
            Pinning::Unpinned
        } else {
            Pinning::Pinned
        };
        assert_eq!(pool.pinning(), want);
        let m = pool.metrics();
        assert_eq!(m.pin_fallback_workers, 1);
        let reason = m.pin_fallback_reason.clone().unwrap();
        assert!(
            reason.starts_with(&format!("worker {w}, CPU {cpu}: sched_setaffinity: "))
                && reason.contains("refused by the test"),
            "{reason}"
        );
        assert!(m.topology_discovered);
        assert_eq!(pool.registry().worker_pin[w], None);
        for (i, wm) in m.workers.iter().enumerate() {
            assert_eq!(wm.pinned, i != w, "worker {i}: {wm:?}");
        }

        // The kernel agrees: the worker's mask is the one it inherited, not its CPU; the
        // others are on theirs.
        let masks = affinities(&pool);
        for (i, mask) in masks.iter().enumerate() {
            if i == w {
                assert_eq!(*mask, allowed, "worker {i}");
                if allowed.len() > 1 {
                    assert_ne!(*mask, [cpu], "worker {i} is pinned");
                }
            } else {
                assert_eq!(*mask, [os_cpu(&pool, i)], "worker {i}");
            }
        }

        // Every task runs once; past many displacement checks (`CHECK_EVERY` tasks, parks),
        // the unpinned worker is no displaced worker and was never pinned again.
        every_task_runs_once(&pool);
        let m = pool.metrics();
        let wm = &m.workers[w];
        assert_eq!((wm.pinned, wm.displaced), (false, false), "{wm:?}");
        assert_eq!((wm.displacements, wm.repins), (0, 0), "{wm:?}");
        assert_eq!(affinities(&pool)[w], allowed);
    }

    #[test]
    fn by_default_a_pool_none_of_whose_workers_can_be_pinned_builds_unpinned() {
        let allowed = allowed();
        let _fail = FailPins::new("pinfail-all-", &allowed);
        let pool = builder("pinfail-all-").build().unwrap();
        let n = pool.num_workers();
        assert_eq!(pool.pinning(), Pinning::Unpinned);
        assert_eq!(
            (pool.pin_fallback_workers(), pool.unpinned_workers()),
            (n, n)
        );
        let m = pool.metrics();
        assert_eq!(m.pin_fallback_workers, n);
        assert!(m.pin_fallback_reason.unwrap().starts_with("worker 0, CPU "));
        assert!(m.workers.iter().all(|w| !w.pinned));
        assert!(affinities(&pool).iter().all(|m| *m == allowed));
        every_task_runs_once(&pool);
    }

    #[test]
    fn pin_true_makes_the_failure_the_builds_error() {
        let cpu = allowed()[0];
        let _fail = FailPins::new("pinfail-required-", &[cpu]);
        let e = builder("pinfail-required-").pin(true).build().unwrap_err();
        assert!(e.is_pinning_error(), "{e}");
        assert!(!e.is_input_error());
        assert_eq!(e.cpu(), Some(cpu));
        assert!(e.worker().is_some());
        let msg = e.to_string();
        assert!(
            msg.contains(&format!("to CPU {cpu}: sched_setaffinity: "))
                && msg.contains("refused by the test"),
            "{msg}"
        );
    }

    #[test]
    fn pin_false_never_pins() {
        let allowed = allowed();
        // Were pinning tried, it would fail (and be counted).
        let _fail = FailPins::new("pinfail-off-", &allowed);
        let pool = builder("pinfail-off-").pin(false).build().unwrap();
        let n = pool.num_workers();
        assert_eq!(pool.pinning(), Pinning::Unpinned);
        assert_eq!(
            (pool.pin_fallback_workers(), pool.unpinned_workers()),
            (0, n)
        );
        let m = pool.metrics();
        assert_eq!((m.pin_fallback_workers, m.pin_fallback_reason), (0, None));
        assert!(m.workers.iter().all(|w| !w.pinned));
        assert!(affinities(&pool).iter().all(|m| *m == allowed));
    }

    #[test]
    fn a_pool_that_pins_reports_no_fallback() {
        let pool = builder("pinfail-none-").build().unwrap();
        assert_eq!(pool.pin_fallback_workers(), 0);
        assert_eq!(pool.metrics().pin_fallback_reason, None);
        for (i, mask) in affinities(&pool).iter().enumerate() {
            assert_eq!(*mask, [os_cpu(&pool, i)], "worker {i}");
        }
    }
}
