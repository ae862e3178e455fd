//! The registry: the state a pool's threads share — every queue, each worker's shared half
//! (its stealer, inbox, away queue, counters), the steal walks, the sleep state — and the
//! calls that run work on a worker (`in_worker`). Workers are in `worker.rs`, routing in
//! `route.rs`.
//!
//! Queue layout (see `steal/README.md` for who may take what):
//! - per worker: a LIFO [`Worker`] deque of *fresh tasks at home* (origin = this node, never
//!   migrated); an `inbox` injector only its owner pops (pinned and aged tasks); an `away`
//!   injector of tasks that migrated or live away from their origin;
//! - per NUMA node: an injector of work aimed at the node (`spawn_on`, `par_for`);
//! - one global injector for work from outside the pool.

use std::any::Any;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use crossbeam_deque::{Injector, Stealer};
use crossbeam_utils::CachePadded;
use zonal_policy::{Ageing, Policy, StealWalker};
use zonal_topology::{CpuId, NodeId, Topology};

use crate::blocks::SharedBlocks;
use crate::error::SpawnError;
use crate::job::StackJob;
use crate::latch::{CrossLatch, Latch, LockLatch};
use crate::metrics::{bump, WorkerCounters};
use crate::route::Target;
use crate::sleep::Sleep;
use crate::task::{Meta, Task, TaskOptions, NO_ORIGIN};
use crate::unwind;
use crate::worker::WorkerThread;

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

    /// Runs `op` on a worker of this registry: here if we are one; else via the global
    /// injector, the calling thread blocking meanwhile, or, if it is a worker of another
    /// pool, working for that pool meanwhile.
    #[inline]
    pub(crate) fn in_worker<OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&WorkerThread, bool) -> R + Send,
        R: Send,
    {
        WorkerThread::with_current(|w| match w {
            Some(w) if ptr::eq(&*w.registry, self) => op(w, false),
            Some(w) => self.in_worker_cross(w, op),
            None => self.in_worker_cold(op),
        })
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
                WorkerThread::with_current(|w| {
                    // The job was queued here: only a worker of this registry runs it.
                    op(w.expect("an injected job runs on a worker"), injected)
                })
            },
            latch,
            Meta::fresh(NO_ORIGIN),
        );
        // SAFETY: `job` outlives its task: `wait` returns only once the latch is set, that
        // is, once the job has run, and `job` lives until the end of this function.
        let task: Task = unsafe { job.as_task() };
        self.route(task, Target::Here);
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
        WorkerThread::with_current(|w| {
            if let Some(w) = w {
                bump(&w.counters().panics, 1);
            }
        });
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
