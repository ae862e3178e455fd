//! Building a pool: its shared registry (queues, steal walks, sleep state) and its worker
//! threads (named, sized, pinned), from what [`ThreadPoolBuilder`](crate::ThreadPoolBuilder)
//! chose.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};
use std::sync::{mpsc, Arc};
use std::time::Instant;

use crossbeam_deque::{Injector, Worker};
use crossbeam_utils::CachePadded;
use zonal_policy::{Policy, StealWalker};
use zonal_topology::{CpuId, Topology};

use crate::blocks::SharedBlocks;
use crate::builder::{NameFn, Placement};
use crate::error::{BuildError, ErrorKind};
use crate::metrics::WorkerCounters;
use crate::pin::Binder;
use crate::pool::ThreadPool;
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
}

/// Builds the registry for workers on `cpus` and starts one thread per worker, pinned to
/// `targets[i]` where given. On an error the workers already started are stopped.
#[allow(clippy::too_many_arguments)]
pub(crate) fn start(
    topo: Arc<Topology>,
    policy: Arc<dyn Policy>,
    cpus: Vec<CpuId>,
    targets: &[Option<u32>],
    hooks: Hooks,
    threads: Threads,
    placement: Placement,
    is_virtual: bool,
) -> Result<ThreadPool, BuildError> {
    let (registry, deques) = registry(topo, policy, cpus, hooks);
    start_workers(registry, deques, targets, threads, placement, is_virtual)
}

/// The shared state of a pool, and the deques its workers will own.
fn registry(
    topo: Arc<Topology>,
    policy: Arc<dyn Policy>,
    cpus: Vec<CpuId>,
    hooks: Hooks,
) -> (Arc<Registry>, Vec<Worker<Task>>) {
    let n = cpus.len();
    let levels = topo.mal_count();

    let deques: Vec<Worker<Task>> = (0..n).map(|_| Worker::new_lifo()).collect();
    let shared = deques
        .iter()
        .map(|d| {
            CachePadded::new(WorkerShared {
                stealer: d.stealer(),
                inbox: Injector::new(),
                away: Injector::new(),
                away_len: AtomicUsize::new(0),
                counters: CachePadded::new(WorkerCounters::new(levels)),
                blocks: CachePadded::new(SharedBlocks::new()),
            })
        })
        .collect();
    let worker_node: Box<[u32]> = cpus.iter().map(|&c| topo.node_of(c).0).collect();
    let mut cpu_worker = vec![usize::MAX; topo.cpu_count()];
    for (w, &c) in cpus.iter().enumerate() {
        cpu_worker[c.index()] = w;
    }
    let side = policy.steal_side();
    let walkers: Box<[StealWalker]> = cpus
        .iter()
        .map(|&c| StealWalker::new(side, &topo, c, |v| cpu_worker[v.index()] != usize::MAX))
        .collect();
    let slot_worker = walkers
        .iter()
        .map(|w| {
            w.slots()
                .iter()
                .map(|s| cpu_worker[s.victim.cpu.index()])
                .collect()
        })
        .collect();
    let ageing = side.ageing();
    let mut node_has_workers = vec![false; topo.node_count()];
    for &c in &cpus {
        node_has_workers[topo.node_of(c).index()] = true;
    }
    let node_injectors = (0..topo.node_count())
        .map(|_| CachePadded::new(Injector::new()))
        .collect();
    let registry = Arc::new(Registry {
        topo: Arc::clone(&topo),
        policy,
        shared,
        worker_cpu: cpus.clone().into_boxed_slice(),
        worker_node,
        walkers,
        slot_worker,
        ageing,
        node_injectors,
        fresh_meta: (0..topo.node_count())
            .map(|n| Meta::fresh(n as u32))
            .collect(),
        node_has_workers: node_has_workers.into_boxed_slice(),
        global: Injector::new(),
        sleep: Sleep::new(n),
        terminate: AtomicBool::new(false),
        pending: CachePadded::new(AtomicUsize::new(0)),
        injected: CachePadded::new(AtomicU64::new(0)),
        panic_handler: hooks.panic_handler,
        start_handler: hooks.start_handler,
        exit_handler: hooks.exit_handler,
        observer: hooks.observer,
        epoch: Instant::now(),
    });

    (registry, deques)
}

/// Starts one thread per worker; waits until each is pinned (or failed to be).
fn start_workers(
    registry: Arc<Registry>,
    deques: Vec<Worker<Task>>,
    targets: &[Option<u32>],
    mut threads: Threads,
    placement: Placement,
    is_virtual: bool,
) -> Result<ThreadPool, BuildError> {
    let n = deques.len();
    let binder = targets.iter().any(Option::is_some).then(Binder::new);
    let (tx, rx) = mpsc::channel::<Result<(), BuildError>>();
    let mut handles = Vec::with_capacity(n);
    let mut first_err = None;
    for (i, deque) in deques.into_iter().enumerate() {
        let name = match &mut threads.name {
            Some(f) => f(i),
            None => format!("zonal-worker-{i}"),
        };
        let mut b = std::thread::Builder::new().name(name);
        if let Some(s) = threads.stack_size {
            b = b.stack_size(s);
        }
        let reg = Arc::clone(&registry);
        let target = targets[i];
        let binder = binder.clone();
        let tx = tx.clone();
        let spawned = b.spawn(move || {
            let res = match (target, &binder) {
                (Some(cpu), Some(bd)) => bd.bind_current_thread(cpu).map_err(|reason| {
                    BuildError::new(ErrorKind::Pin {
                        worker: i,
                        cpu,
                        reason,
                    })
                }),
                _ => Ok(()),
            };
            let _ = tx.send(res);
            WorkerThread::new(deque, i, reg).run();
        });
        match spawned {
            Ok(h) => handles.push(h),
            Err(source) => {
                first_err = Some(BuildError::new(ErrorKind::Spawn { worker: i, source }));
                break;
            }
        }
    }
    drop(tx);
    for _ in 0..handles.len() {
        match rx.recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                first_err.get_or_insert(e);
            }
            Err(_) => break,
        }
    }
    let pool = ThreadPool::new(registry, handles, placement, is_virtual);
    match first_err {
        None => Ok(pool),
        Some(e) => {
            drop(pool); // terminates and joins the workers already started
            Err(e)
        }
    }
}
