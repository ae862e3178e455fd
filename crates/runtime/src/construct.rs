//! Building a pool: its shared registry (queues, steal walks, sleep state) and its worker
//! threads (named, sized, pinned), from what [`ThreadPoolBuilder`](crate::ThreadPoolBuilder)
//! chose.

use std::any::Any;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::Instant;

use crossbeam_deque::{Injector, Worker};
use crossbeam_utils::CachePadded;
use zonal_policy::Policy;
use zonal_topology::{CpuId, Topology};

use crate::async_task::AsyncTasks;
use crate::balance::{Balancer, IdleSignal};
use crate::blocks::SharedBlocks;
use crate::builder::NameFn;
use crate::error::{BuildError, ErrorKind};
use crate::fifo::FifoQueue;
use crate::metrics::WorkerCounters;
use crate::policy_switch::PolicySlot;
use crate::pool::{Layout, ThreadPool};
use crate::registry::{PanicHandler, Registry, StealObserver, ThreadHandler, WorkerShared};
use crate::sleep::Sleep;
use crate::task::{Meta, Task};
use crate::worker::WorkerThread;

/// The user's handlers, moved into the registry.
pub(crate) struct Hooks {
    pub(crate) panic_handler: Option<Box<PanicHandler>>,
    pub(crate) start_handler: Option<Box<ThreadHandler>>,
    pub(crate) exit_handler: Option<Box<ThreadHandler>>,
    pub(crate) observer: Option<Box<StealObserver>>,
}

/// How worker threads are made.
pub(crate) struct Threads {
    pub(crate) name: Option<NameFn>,
    pub(crate) stack_size: Option<usize>,
    /// The tokio runtime each worker enters for its life (feature `tokio`).
    #[cfg(feature = "tokio")]
    pub(crate) tokio: Option<tokio::runtime::Handle>,
}

/// Builds the registry for workers on `cpus` and starts one thread per worker, pinned to
/// `targets[i]` where given. On an error the workers already started are stopped.
pub(crate) fn start(
    topo: Arc<Topology>,
    policy: Arc<dyn Policy>,
    cpus: Vec<CpuId>,
    targets: &[Option<u32>],
    hooks: Hooks,
    threads: Threads,
    layout: Layout,
) -> Result<ThreadPool, BuildError> {
    let (registry, deques) = registry(topo, policy, cpus, targets, hooks);
    start_workers(registry, deques, targets, threads, layout)
}

/// The shared state of a pool, and the deques its workers will own.
fn registry(
    topo: Arc<Topology>,
    policy: Arc<dyn Policy>,
    cpus: Vec<CpuId>,
    targets: &[Option<u32>],
    hooks: Hooks,
) -> (Arc<Registry>, Vec<Worker<Task>>) {
    let n = cpus.len();
    let deques: Vec<Worker<Task>> = (0..n).map(|_| Worker::new_lifo()).collect();
    let shared = worker_shared(&deques, topo.mal_count(), targets);
    let worker_node: Box<[u32]> = cpus.iter().map(|&c| topo.node_of(c).0).collect();
    let nodes = topo.node_count();
    let registry = Arc::new(Registry {
        topo: Arc::clone(&topo),
        shared,
        worker_cpu: cpus.clone().into_boxed_slice(),
        worker_pin: targets.into(),
        worker_node,
        policy: PolicySlot::new(policy, &topo, &cpus),
        balancer: Balancer::default(),
        node_injectors: (0..nodes)
            .map(|_| CachePadded::new(Injector::new()))
            .collect(),
        fresh_meta: (0..nodes).map(|n| Meta::fresh(n as u32)).collect(),
        node_has_workers: node_has_workers(&topo, &cpus),
        worker_nodes: worker_nodes(&topo, &cpus),
        next_node: CachePadded::new(AtomicUsize::new(0)),
        global: Injector::new(),
        sleep: Sleep::new(n, nodes),
        terminate: AtomicBool::new(false),
        pending: CachePadded::new(AtomicUsize::new(0)),
        injected: CachePadded::new(AtomicU64::new(0)),
        panic_handler: hooks.panic_handler,
        start_handler: hooks.start_handler,
        exit_handler: hooks.exit_handler,
        observer: hooks.observer,
        epoch: Instant::now(),
        turnaround: CachePadded::default(),
        async_tasks: AsyncTasks::default(),
    });
    (registry, deques)
}

/// Each worker's shared half, around the stealer of its deque.
fn worker_shared(
    deques: &[Worker<Task>],
    levels: usize,
    targets: &[Option<u32>],
) -> Box<[CachePadded<WorkerShared>]> {
    deques
        .iter()
        .zip(targets)
        .map(|(d, pin)| {
            CachePadded::new(WorkerShared {
                stealer: d.stealer(),
                inbox: Injector::new(),
                away: Injector::new(),
                away_len: AtomicUsize::new(0),
                counters: CachePadded::new(WorkerCounters::new(levels, pin.is_some())),
                blocks: CachePadded::new(SharedBlocks::new()),
                fifo: FifoQueue::default(),
                idle: IdleSignal::default(),
            })
        })
        .collect()
}

/// The nodes that have a worker, ascending (where outside spawns are spread).
fn worker_nodes(topo: &Topology, cpus: &[CpuId]) -> Box<[u32]> {
    let mut nodes: Vec<u32> = cpus.iter().map(|&c| topo.node_of(c).0).collect();
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
    /// already started are stopped and joined.
    Panicked(Box<dyn Any + Send>),
}

/// Starts one thread per worker; waits until each is pinned (or failed to be).
///
/// On the first failure — a name the OS cannot take, a thread the OS refuses (out of
/// memory for its stack, out of threads: `std::thread::Builder::spawn`'s error), a worker
/// that cannot be pinned, a panicking name callback — no further worker is started, and
/// the ones already started are stopped and joined (dropping the pool sets `terminate`,
/// wakes every sleeper and joins each thread) before the error is returned: no thread of
/// the failed pool outlives `build`.
fn start_workers(
    registry: Arc<Registry>,
    deques: Vec<Worker<Task>>,
    targets: &[Option<u32>],
    mut threads: Threads,
    layout: Layout,
) -> Result<ThreadPool, BuildError> {
    let (tx, rx) = mpsc::channel::<Result<(), BuildError>>();
    let workers = deques.len();
    // Sized by the worker count, which `num_threads::check` and the topology's `MAX_CPUS`
    // bound before anything is allocated.
    let mut handles = Vec::with_capacity(workers);
    let mut stopped = None;
    for (i, deque) in deques.into_iter().enumerate() {
        let pin = targets[i];
        let reg = Arc::clone(&registry);
        let started = thread_name(&mut threads, i).and_then(|name| {
            let how = Spawn {
                name,
                stack_size: threads.stack_size,
                #[cfg(feature = "tokio")]
                tokio: threads.tokio.clone(),
            };
            spawn_worker(how, (deque, i, reg), pin, tx.clone()).map_err(|source| {
                Stopped::Failed(BuildError::new(ErrorKind::Spawn {
                    worker: i,
                    workers,
                    source,
                }))
            })
        });
        match started {
            Ok(h) => handles.push(h),
            Err(e) => {
                stopped = Some(e);
                break;
            }
        }
    }
    drop(tx);
    if let Err(e) = await_pinning(&rx, handles.len()) {
        stopped.get_or_insert(Stopped::Failed(e));
    }
    let pool = ThreadPool::new(registry, handles, layout);
    match stopped {
        None => Ok(pool),
        Some(why) => {
            pool.shutdown_and_wait(); // terminates and joins the workers already started
            match why {
                Stopped::Failed(e) => Err(e),
                Stopped::Panicked(payload) => std::panic::resume_unwind(payload),
            }
        }
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

/// How one worker thread is made.
struct Spawn {
    name: String,
    stack_size: Option<usize>,
    #[cfg(feature = "tokio")]
    tokio: Option<tokio::runtime::Handle>,
}

/// Starts the thread of worker `i` (with its deque), named `how.name`, with
/// `how.stack_size` bytes of stack if given; bound to `pin`'s CPU if given; it reports how
/// binding went on `report`, then runs the worker (inside `how.tokio`'s runtime context if
/// given). The OS's error if the thread cannot be created.
fn spawn_worker(
    how: Spawn,
    (deque, i, registry): (Worker<Task>, usize, Arc<Registry>),
    pin: Option<u32>,
    report: mpsc::Sender<Result<(), BuildError>>,
) -> std::io::Result<JoinHandle<()>> {
    let mut b = std::thread::Builder::new().name(how.name);
    if let Some(s) = how.stack_size {
        b = b.stack_size(s);
    }
    #[cfg(feature = "tokio")]
    let tokio = how.tokio;
    b.spawn(move || {
        let res = pin.map_or(Ok(()), |cpu| {
            crate::os::pin_current_thread(cpu).map_err(|e| {
                BuildError::new(ErrorKind::Pin {
                    worker: i,
                    cpu,
                    reason: format!("sched_setaffinity: {e}"),
                })
            })
        });
        let _ = report.send(res);
        // The worker's whole life, start and exit handlers included, in the runtime's
        // context; the guard drops after `run` returns (no other guard nests inside it).
        #[cfg(feature = "tokio")]
        let _tokio = tokio.as_ref().map(tokio::runtime::Handle::enter);
        WorkerThread::new(deque, i, registry).run();
    })
}

/// Waits for the binding reports of `started` workers; the first error, if any.
fn await_pinning(
    reports: &mpsc::Receiver<Result<(), BuildError>>,
    started: usize,
) -> Result<(), BuildError> {
    let mut first_err = None;
    for _ in 0..started {
        match reports.recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                first_err.get_or_insert(e);
            }
            Err(_) => break,
        }
    }
    first_err.map_or(Ok(()), Err)
}
