//! The registry: the state a pool's threads share — every queue, each worker's shared half
//! (its stealer, inbox, away queue, counters), the steal walks, the sleep state, the
//! handlers. Workers are in `worker.rs`, routing in `route.rs`, entering the pool in
//! `enter.rs`, the life of spawned tasks in `spawn.rs`.
//!
//! Queue layout (see `steal/README.md` for who may take what):
//! - per worker: a LIFO [`Worker`] deque of *fresh tasks at home* (origin = this node, never
//!   migrated); an `inbox` injector only its owner pops (pinned and aged tasks); an `away`
//!   injector of tasks that migrated or live away from their origin;
//! - per NUMA node: an injector of work aimed at the node (`spawn_on`, `par_for`), and of
//!   work from outside the pool (spread round-robin over the nodes that have workers);
//!
//! Work aimed at a node without workers goes to the injector of the nearest node with
//! workers (`Registry::placed_on`).

use std::any::Any;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};
use std::sync::Arc;
use std::time::Instant;

use crossbeam_deque::Stealer;
use crossbeam_utils::CachePadded;
use zonal_topology::{CpuId, NodeId, Topology};

use crate::blocks::SharedBlocks;
use crate::error::SpawnError;
use crate::idle_signal::IdleSignal;
use crate::metrics::WorkerCounters;
use crate::policy_switch::PolicySlot;
use crate::queues::{AwayQueue, FifoQueue, SharedQueue};
use crate::sleep::Sleep;
use crate::steal::StealRecord;
use crate::task_meta::{Meta, Task, TaskOptions};
use crate::turnaround::TurnaroundHistogram;

/// A handler for panics of spawned tasks.
pub(crate) type PanicHandler = dyn Fn(Box<dyn Any + Send>) + Send + Sync;
/// A start or exit handler, given the worker index.
pub(crate) type ThreadHandler = dyn Fn(usize) + Send + Sync;
/// A steal observer.
pub(crate) type StealObserver = dyn Fn(&StealRecord) + Send + Sync;

/// The state of one worker that other threads touch.
pub(crate) struct WorkerShared {
    pub(crate) stealer: Stealer<Task>,
    pub(crate) inbox: SharedQueue,
    /// Tasks away from home or migrated, with their length bound (`queues.rs`).
    pub(crate) away: AwayQueue,
    /// Written by the owner on every task: padded away from what thieves read (`stealer`,
    /// `away`'s bound), or every steal walk would bounce the owner's counter line.
    pub(crate) counters: CachePadded<WorkerCounters>,
    /// The worker's job blocks as other threads see them (`blocks.rs`): written by thieves
    /// that free the worker's jobs, so on a line of its own.
    pub(crate) blocks: CachePadded<SharedBlocks>,
    /// The worker's `spawn_fifo` jobs waiting for their proxies (`fifo.rs`).
    pub(crate) fifo: FifoQueue,
    /// Since when the worker idles, for the balancer's load tracking (`balance/load.rs`):
    /// written by the owner only when an idle span starts or ends.
    pub(crate) idle: IdleSignal,
}

pub(crate) struct Registry {
    pub(crate) topo: Arc<Topology>,
    /// The current policy and what workers derive from it, swappable while the pool runs
    /// (`policy_switch.rs`).
    pub(crate) policy: PolicySlot,
    pub(crate) shared: Box<[CachePadded<WorkerShared>]>,
    pub(crate) worker_cpu: Box<[CpuId]>,
    /// Per worker: the CPU (OS index) it is pinned to, if any (`displacement.rs`).
    pub(crate) worker_pin: Box<[Option<u32>]>,
    pub(crate) worker_node: Box<[u32]>,
    pub(crate) node_injectors: Box<[CachePadded<SharedQueue>]>,
    /// Per node: `Meta::fresh(node)`, the metadata of the bare jobs of that node's deques
    /// (`Task::meta`).
    pub(crate) fresh_meta: Box<[Meta]>,
    /// The nodes that have a worker, ascending: work from outside the pool without an origin
    /// is spread over their injectors, round-robin (`route.rs`).
    pub(crate) worker_nodes: Box<[u32]>,
    /// The round-robin counter over `worker_nodes`.
    pub(crate) next_node: CachePadded<AtomicUsize>,
    /// Per node of the topology: the node whose injector takes work placed there — itself
    /// if it has workers, else the nearest node with workers (smallest distance, lowest id
    /// on ties; `route.rs`).
    pub(crate) placed_on: Box<[u32]>,
    pub(crate) sleep: Sleep,
    pub(crate) terminate: AtomicBool,
    /// Spawned (`'static`) tasks accepted and not yet finished.
    pub(crate) pending: CachePadded<AtomicUsize>,
    pub(crate) injected: CachePadded<AtomicU64>,
    pub(crate) panic_handler: Option<Box<PanicHandler>>,
    pub(crate) start_handler: Option<Box<ThreadHandler>>,
    pub(crate) exit_handler: Option<Box<ThreadHandler>>,
    pub(crate) observer: Option<Box<StealObserver>>,
    /// `ThreadPool::spawn` and the free `spawn` on this pool are FIFO spawns
    /// (`ThreadPoolBuilder::breadth_first`, deprecated).
    pub(crate) breadth_first: bool,
    pub(crate) epoch: Instant,
    /// Task turnaround (queued to completed), recorded by the tasks that carry a completion
    /// (`turnaround.rs`): written by every worker, so on lines of its own.
    pub(crate) turnaround: CachePadded<TurnaroundHistogram>,
    /// The state of the features built over the core that the pool keeps for them (the
    /// live async tasks, `async_task/`; the periodic balancer, `balance/`), which the core
    /// holds without knowing its types: see [`Registry::extension`].
    pub(crate) extensions: Extensions,
    /// Whether the workers entered a tokio runtime for their life
    /// (`ThreadPoolBuilder::tokio_handle`); if not, each async task enters the runtime it
    /// was spawned in (`async_task/tokio_context.rs`).
    #[cfg(feature = "tokio")]
    pub(crate) workers_in_tokio: bool,
}

/// A feature's state in the registry, found by its type (one value per type).
pub(crate) type Extension = Box<dyn Any + Send + Sync>;

/// The registry's feature states ([`Registry::extension`]): made when the pool is built
/// (`construct.rs`), never changed after.
pub(crate) type Extensions = Box<[Extension]>;

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("workers", &self.shared.len())
            .field("policy", &self.policy)
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

    /// The state of the feature whose type is `T`, installed when the pool was built: a
    /// search of a few entries and a type check, for the features' paths only (spawning an
    /// async task, a balancing pass, shutdown), never the workers' push, pop, steal, join or
    /// latch paths.
    ///
    /// # Panics
    /// If the pool was built without it: a bug of `construct.rs`, which installs every
    /// feature's state.
    pub(crate) fn extension<T: Any>(&self) -> &T {
        self.extensions
            .iter()
            .find_map(|e| e.downcast_ref::<T>())
            .expect("every feature's state is installed when the pool is built")
    }

    /// Tells the sleep protocol which workers the current policy lets take which node's
    /// tasks (`Sleep::set_takers`), when the pool is built.
    pub(crate) fn refresh_takers(&self) {
        self.publish_takers(&self.policy.current());
    }

    /// Switches the pool's policy; the sleep protocol's takers follow under the switch's
    /// lock, so that concurrent switches publish them in their own order.
    pub(crate) fn switch_policy(&self, policy: Arc<dyn zonal_policy::Policy>) {
        self.policy.switch(policy, &self.topo, self.now_us(), |e| {
            self.publish_takers(e)
        });
    }

    fn publish_takers(&self, epoch: &crate::policy_switch::PolicyEpoch) {
        let nodes = self.topo.node_count();
        let takers = epoch.takers(&self.topo, &self.worker_node);
        self.sleep
            .set_takers(|origin, node| takers[origin as usize * nodes + node as usize]);
    }

    /// Wakes one specific worker (latch set, or work pinned to it).
    pub(crate) fn wake_worker(&self, worker: usize) {
        self.sleep.wake_worker(worker);
    }
}
