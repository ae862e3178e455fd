//! Routing: the one path where a new task's metadata (its origin above all) and its queue
//! are decided ([`route`]), and where it is counted ([`Route::queue`]).
//!
//! Every way of queueing new work goes through it: `join` halves, scope spawns (bare jobs
//! included), `spawn`, `spawn_with`, `spawn_on`, `spawn_pinned` (on the pool or from a worker),
//! `par_for` chunks, spawns from threads outside the pool, operations injected by `install`
//! from outside, FIFO spawns (whose proxy job is what is queued, `fifo.rs`) and `broadcast`'s
//! jobs (`Target::Worker`). A caller asks for a [`Target`]; [`route`] turns it,
//! the [`TaskOptions`] and the thread it runs on into the task's [`Meta`] and its [`Queue`];
//! the caller builds the job with that metadata (a stack, heap or bare job, `job.rs`); then
//! [`Route::queue`] counts it once — in the worker's `spawned` when a worker of the pool
//! queues it, else in the pool's `injected` — and pushes it (see `steal/README.md` for who
//! may take from which queue):
//!
//! **Placed roots.** A root placed on node `N` — `spawn_on`, `spawn_with` with an origin, a
//! pool's or a scope's `spawn_on`, a node part of a parallel loop (`par_for`) — is queued
//! where `N`'s zone takes it, whoever spawns it: from outside the pool, from a worker of any
//! node, or from inside another placed computation. The one table, also in the user docs
//! (`ThreadPool::spawn_on`):
//!
//! | placed on `N` | queued on |
//! |---|---|
//! | `N` has workers, spawned by a worker of `N` | that worker's own queues (its deque, fresh at home: `N`'s workers and thieves of `N`'s zone take it from there) |
//! | `N` has workers, spawned anywhere else (outside the pool, a worker of another node, any computation) | `N`'s injector |
//! | `N` has no workers | the injector of the nearest node with workers (smallest distance to `N`, lowest id on ties; `Registry::placed_on`); the task keeps `N` as its origin, and its executions count in `executions_outside_zone` where that node's zone does not hold `N` |
//!
//! Every other target:
//!
//! | target | on a worker of the pool | from outside |
//! |---|---|---|
//! | `Here`, no origin named | never migrated → its deque (a child of a computation rooted elsewhere carries that origin in its header); aged (`StealSide::ageing`) → its inbox; else → its away queue | the injector of the next node with workers, round-robin, which becomes its origin |
//! | `Worker(w)` | `w`'s inbox (never stolen) | likewise |
//!
//! On a worker, a task's origin is its parent's — the task the worker runs — unless the
//! options name one, the target is a node, or the target pins it to a worker (`task_meta.rs`,
//! "Whole computations"). From outside, the origin is the one named, or, with none, the next
//! node with workers, round-robin: the node that call's computation is rooted on.
//!
//! Every push goes through the core's push-and-wake function of its queue
//! (`queues/push.rs`, `sleep/README.md`). Tasks
//! that already exist and move — a refused steal put back — are not routed: the steal path
//! returns them to their queues (`steal/`). A woken async task goes back to the worker that
//! polled it last ([`requeue`]: aged → its inbox, else → its away queue).

use std::sync::atomic::Ordering;

use zonal_topology::NodeId;

use crate::blocks::LocalBlocks;
use crate::job::{BareJob, HeapJob};
use crate::metrics::bump;
use crate::queues::OwnQueue;
use crate::registry::Registry;
use crate::sleep::Others;
use crate::task_meta::{Meta, Task, TaskOptions, NO_ORIGIN};
use crate::worker::WorkerThread;

/// Where the caller aims a task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// Wherever its metadata says.
    Here,
    /// A node: it becomes the task's origin, and the task goes to that node's injector
    /// (but see the module's table).
    Node(NodeId),
    /// One worker's inbox: only that worker runs it.
    Worker(usize),
}

/// The queue a task goes to (decided by [`route`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Queue {
    /// The queueing worker's deque: fresh at home.
    Deque,
    /// The queueing worker's inbox: aged, it stays with us.
    Kept,
    /// The queueing worker's away queue: away from home or already migrated.
    Away,
    /// A worker's inbox: pinned there. (A `u32`, as a node: with payloads of one size, a
    /// `Queue` passes in registers, not through the stack, on the hot path.)
    Inbox(u32),
    /// A node's injector.
    Node(NodeId),
}

/// A new task's route: its metadata and its queue, decided once; [`queue`](Self::queue)
/// counts the task and pushes it.
#[must_use]
pub(crate) struct Route<'a> {
    registry: &'a Registry,
    /// The worker of `registry` that queues the task, if we run on one.
    here: Option<&'a WorkerThread>,
    /// The task's metadata: the job is built with it (bare jobs imply it).
    pub(crate) meta: Meta,
    queue: Queue,
}

/// The one decision: the metadata and the queue of a new task aimed at `target` with
/// `opts`, queued by `here` (the current thread's worker if it is one of ours, see
/// [`WorkerThread::with_current_in`]) or from outside.
#[inline(always)]
pub(crate) fn route<'a>(
    registry: &'a Registry,
    here: Option<&'a WorkerThread>,
    opts: TaskOptions,
    target: Target,
) -> Route<'a> {
    let opts = match target {
        Target::Node(n) => opts.origin(n),
        _ => opts,
    };
    let (meta, queue) = match here {
        Some(w) => route_on_worker(registry, w, opts, target),
        None => route_from_outside(registry, opts, target),
    };
    Route {
        registry,
        here,
        meta,
        queue,
    }
}

/// From one of our workers: a child of its current task (its origin, `task_meta.rs`, "Whole
/// computations"), unless the options name an origin or the target pins it to a worker
/// (placed on that worker's node).
#[inline(always)]
fn route_on_worker(
    registry: &Registry,
    w: &WorkerThread,
    opts: TaskOptions,
    target: Target,
) -> (Meta, Queue) {
    let pinned = match target {
        Target::Worker(x) => Some(registry.worker_node[x]),
        _ => None,
    };
    let meta = opts.resolve(Some(w.current.get()), pinned);
    let queue = match target {
        // A root placed on another node by its options (`spawn_with(origin)`): that node's
        // injector, as from outside the pool (the placed roots' table above). Queued with
        // us, only we could take it back past the zone's edge.
        Target::Here => match opts.named_origin() {
            Some(o) if o.0 != w.node => node_queue(registry, o),
            _ => own_queue(w, &meta),
        },
        Target::Node(n) if n.0 == w.node => own_queue(w, &meta),
        Target::Node(n) => node_queue(registry, n),
        Target::Worker(x) => Queue::Inbox(x as u32),
    };
    (meta, queue)
}

/// From a thread outside the pool: no parent; the origin is the one named, or, with
/// none, the next node with workers, round-robin ([`next_node`]): the
/// task goes to that node's injector and takes the node as its origin, as if aimed
/// there.
#[inline]
fn route_from_outside(registry: &Registry, opts: TaskOptions, target: Target) -> (Meta, Queue) {
    let pinned = match target {
        Target::Worker(x) => Some(registry.worker_node[x]),
        _ => None,
    };
    let mut meta = opts.resolve(None, pinned);
    let queue = match target {
        Target::Worker(x) => Queue::Inbox(x as u32),
        _ if meta.origin == NO_ORIGIN => {
            let node = next_node(registry);
            meta.origin = node.0;
            Queue::Node(node)
        }
        _ => node_queue(registry, NodeId(meta.origin)),
    };
    (meta, queue)
}

/// The next node with workers, round-robin, for work from outside the pool.
#[inline]
fn next_node(registry: &Registry) -> NodeId {
    let nodes = &registry.worker_nodes;
    let i = if nodes.len() == 1 {
        0
    } else {
        registry.next_node.fetch_add(1, Ordering::Relaxed) % nodes.len()
    };
    NodeId(nodes[i])
}

/// Placed on `node` from elsewhere: its injector; if no worker sits on it, the injector of
/// the nearest node with workers (`Registry::placed_on`; the task keeps `node` as its
/// origin).
#[inline]
fn node_queue(registry: &Registry, node: NodeId) -> Queue {
    Queue::Node(NodeId(registry.placed_on[node.index()]))
}

/// Spawns `job` as a heap job (or a bare job when it may be one, `job.rs`) routed to
/// `target` with `opts`, from whatever thread we run on.
#[inline(always)]
pub(crate) fn spawn<F: FnOnce() + Send>(
    registry: &Registry,
    opts: TaskOptions,
    target: Target,
    job: F,
) {
    // `move`, and no call out of line with the options, the target or the job: any of
    // them behind a pointer would be written to the stack on every spawn, next to the
    // spawner's scope (whose latch a thief writes: false sharing).
    WorkerThread::with_current_in(registry, move |here| {
        route(registry, here, opts, target).queue_job(job);
    });
}

impl From<OwnQueue> for Queue {
    /// A task of the queueing worker's own: its inbox (`Kept`) or its away queue.
    #[inline(always)]
    fn from(own: OwnQueue) -> Self {
        match own {
            OwnQueue::Inbox => Queue::Kept,
            OwnQueue::Away => Queue::Away,
        }
    }
}

/// A task of `worker`'s aimed nowhere else, by its metadata: never migrated → its deque
/// (one branch), whatever its origin: a child of a computation rooted elsewhere carries that
/// origin in its header, and a thief checks it with it (`Thief::meta`); migrated (a
/// continuation) → the cold path.
#[inline(always)]
fn own_queue(worker: &WorkerThread, meta: &Meta) -> Queue {
    if meta.migrations == 0 {
        Queue::Deque
    } else {
        away_queue(worker, meta)
    }
}

/// A task away from home or already migrated: an aged one stays in the worker's inbox,
/// others go to its away queue (the core's rule, [`WorkerThread::own_queue_of`]).
#[cold]
fn away_queue(worker: &WorkerThread, meta: &Meta) -> Queue {
    worker.own_queue_of(meta).into()
}

impl<'a> Route<'a> {
    /// Whether the job may be bare (no header, `job.rs`): it goes on the queueing worker's
    /// deque, fresh at home, unplaced, with the default group and weight — exactly the
    /// metadata a bare job on that deque implies.
    #[inline(always)]
    pub(crate) fn bare(&self) -> bool {
        self.queue == Queue::Deque && self.here.is_some_and(|w| self.meta.is_fresh_at(w.node))
    }

    /// Whether the task may go through a FIFO queue and a proxy (`fifo.rs`): bound for the
    /// queueing worker's deque *and* at home there. A proxy runs the oldest job of its
    /// queue, which a thief's check of the proxy must speak for: all of a worker's FIFO jobs
    /// must share an origin (its node) and a migration count (0).
    #[inline(always)]
    pub(crate) fn to_fifo(&self) -> bool {
        self.queue == Queue::Deque && self.here.is_some_and(|w| self.meta.origin == w.node)
    }

    /// A FIFO spawn that may not use a proxy ([`to_fifo`](Self::to_fifo) is false) but is
    /// bound for the deque: the queueing worker's away queue instead, FIFO already.
    #[inline]
    pub(crate) fn fifo_elsewhere(mut self) -> Self {
        if self.queue == Queue::Deque {
            self.queue = Queue::Away;
        }
        self
    }

    /// The job blocks to allocate the job from: the queueing worker's (`blocks.rs`).
    #[inline(always)]
    pub(crate) fn blocks(&self) -> Option<&'a LocalBlocks> {
        self.here.map(|w| &w.blocks)
    }

    /// Builds `job` as a heap job with the route's metadata, or as a bare job when the
    /// route allows it, and queues it.
    #[inline(always)]
    pub(crate) fn queue_job<F: FnOnce() + Send>(self, job: F) {
        let task = if self.bare() {
            BareJob::task(self.blocks(), job)
        } else {
            HeapJob::task(self.blocks(), self.meta, job)
        };
        self.queue(task);
    }

    /// Counts the task once — the queueing worker's `spawned`, or the pool's `injected` —
    /// and pushes it on its queue. `task` must carry `self.meta` (or be bare, when
    /// [`bare`](Self::bare) allows it).
    #[inline(always)]
    pub(crate) fn queue(self, task: Task) {
        let r = self.registry;
        match self.here {
            Some(w) => {
                bump(&w.counters().spawned, 1);
                if self.queue == Queue::Deque {
                    w.push_fresh(self.meta.origin, task);
                } else {
                    push_own(w, self.queue, self.meta.origin, task);
                }
            }
            None => {
                r.injected.fetch_add(1, Ordering::Relaxed);
                push_shared(r, self.queue, self.meta.origin, task);
            }
        }
    }
}

/// A task of `worker`'s bound for its inbox or away queue (`origin`: its origin; the
/// core's [`WorkerThread::push_own`]), or for a shared queue. Its arguments are scalars: a
/// `Route` passed here would be written to the stack on the hot path too.
#[cold]
fn push_own(worker: &WorkerThread, queue: Queue, origin: u32, task: Task) {
    match queue {
        Queue::Kept => worker.push_own(OwnQueue::Inbox, origin, task),
        Queue::Away => worker.push_own(OwnQueue::Away, origin, task),
        _ => push_shared(&worker.registry, queue, origin, task),
    }
}

/// A woken async task goes back to `last`, the worker that polled it last
/// (`async_task/mod.rs`, "Routing"), by its metadata: aged → `last`'s inbox (never
/// stolen); else → `last`'s away queue. From `last` itself (`here`) these are its own
/// pushes (counted in `aged_kept`, `new_local_work`); from any other thread, shared
/// pushes with the full wake-up check. Not a new task: not counted in `spawned`.
pub(crate) fn requeue(
    registry: &Registry,
    here: Option<&WorkerThread>,
    last: usize,
    meta: &Meta,
    task: Task,
) {
    debug_assert!(
        last < registry.num_workers(),
        "a woken task was polled before"
    );
    // On a worker, its cached epoch's ageing rule (refreshed if the policy switched);
    // from any other thread, the current epoch's (a lock, off the workers' path).
    let ageing = match here {
        Some(w) => {
            w.refresh_policy();
            w.ageing.get()
        }
        None => registry.policy.current().ageing,
    };
    let own = OwnQueue::of(ageing, meta);
    match here {
        Some(w) if w.index == last => {
            w.push_own(own, meta.origin, task);
        }
        _ if own == OwnQueue::Inbox => registry.push_inbox(last, task),
        _ => registry.push_away(last, Others::Origin(meta.origin), task),
    }
}

/// Pushes on a queue any thread may push to — a worker's inbox, a node's injector —
/// through the core's push-and-wake function of that queue
/// (`queues/push.rs`).
/// (`origin`: the task's, which decides who besides the node's workers may be woken).
fn push_shared(registry: &Registry, queue: Queue, origin: u32, task: Task) {
    match queue {
        Queue::Inbox(worker) => registry.push_inbox(worker as usize, task),
        Queue::Node(node) => registry.push_node(node.0, Others::Origin(origin), task),
        // `route_from_outside` never chooses a worker's own queues, and `push_own` takes
        // them on a worker: a bug of this file, not of the caller.
        Queue::Deque | Queue::Kept | Queue::Away => unreachable!("own queues need a worker"),
    }
}

#[cfg(test)]
mod test {
    use std::sync::mpsc;

    use zonal_policy::Ageing;

    use super::*;
    use crate::{ThreadPool, ThreadPoolBuilder};

    /// A pool on S1 (16 nodes of 2 CPUs) with workers on CPUs 0–3 only: two nodes have
    /// workers, the others none.
    fn pool() -> ThreadPool {
        ThreadPoolBuilder::new()
            .preset("s1")
            .worker_cpus([0, 1, 2, 3])
            .build()
            .expect("pool on s1")
    }

    /// A node with workers other than `node`, and a node without any.
    fn other_nodes(r: &Registry, node: u32) -> (NodeId, NodeId) {
        let with = r.worker_node.iter().copied().find(|&n| n != node);
        let without = (0..r.placed_on.len()).position(|n| r.placed_on[n] != n as u32);
        (
            NodeId(with.expect("two nodes with workers")),
            NodeId(without.expect("a node without workers") as u32),
        )
    }

    #[test]
    fn from_outside_the_queue_follows_the_target_and_the_named_origin() {
        let pool = pool();
        let r = pool.registry();
        let (with, without) = other_nodes(r, r.worker_node[0]);
        let decide = |opts, target| {
            let route = route(r, None, opts, target);
            (route.meta.origin, route.queue)
        };
        let none = TaskOptions::new();
        // No origin: the nodes with workers in turn, each the task's origin.
        let nodes = [r.worker_node[0], r.worker_node[2]];
        assert_ne!(nodes[0], nodes[1]);
        let first = decide(none, Target::Here).0;
        let second = if first == nodes[0] {
            nodes[1]
        } else {
            nodes[0]
        };
        for n in [second, first, second] {
            assert_eq!(decide(none, Target::Here), (n, Queue::Node(NodeId(n))));
        }
        assert_eq!(
            decide(none.origin(with), Target::Here),
            (with.0, Queue::Node(with))
        );
        assert_eq!(
            decide(none, Target::Node(with)),
            (with.0, Queue::Node(with))
        );
        // A node without workers: the nearest node with workers takes it, origin kept.
        let near = NodeId(r.placed_on[without.index()]);
        assert_eq!(r.placed_on[near.index()], near.0, "a node with workers");
        assert_eq!(
            decide(none, Target::Node(without)),
            (without.0, Queue::Node(near))
        );
        assert_eq!(
            decide(none, Target::Worker(3)),
            (r.worker_node[3], Queue::Inbox(3))
        );
    }

    #[test]
    fn on_a_worker_the_queue_follows_the_target_and_the_metadata() {
        let pool = pool();
        let aged_after = match pool.registry().policy.current().ageing {
            Ageing::After(k) => k,
            _ => panic!("the default policy ages tasks"),
        };
        pool.install(|| {
            WorkerThread::with_current_in(pool.registry(), |w| {
                let w = w.expect("install runs on a worker");
                let r = pool.registry();
                let (with, without) = other_nodes(r, w.node);
                let decide = |opts, target| {
                    let route = route(r, Some(w), opts, target);
                    (route.meta.origin, route.queue, route.bare())
                };
                let none = TaskOptions::new();
                // The installed operation is rooted on some node and may have been stolen
                // to ours: its children inherit that origin. Start from a task at home.
                let saved = w.current.replace(Meta::fresh(w.node));
                // Fresh at home: our deque; a bare job with the defaults only.
                assert_eq!(decide(none, Target::Here), (w.node, Queue::Deque, true));
                assert_eq!(
                    decide(none.group(1), Target::Here),
                    (w.node, Queue::Deque, false)
                );
                // Aimed at our node: placed there (a header says so), our deque.
                assert_eq!(
                    decide(none, Target::Node(NodeId(w.node))),
                    (w.node, Queue::Deque, false)
                );
                // Placed on another node by the options or by the target: its injector, or
                // the nearest node's with workers when no worker sits there.
                assert_eq!(
                    decide(none.origin(with), Target::Here),
                    (with.0, Queue::Node(with), false)
                );
                // A child of a task of a computation rooted on another node inherits that
                // origin (and its placed flag): our deque, with a header.
                let parent = w.current.get();
                for flags in [0, crate::task_meta::PLACED] {
                    w.current.set(Meta {
                        origin: with.0,
                        migrations: 2,
                        flags,
                        ..parent
                    });
                    let route = route(r, Some(w), none, Target::Here);
                    assert_eq!((route.meta.origin, route.meta.migrations), (with.0, 0));
                    assert_eq!(route.meta.flags, flags);
                    assert_eq!((route.queue, route.bare()), (Queue::Deque, false));
                }
                w.current.set(parent);
                assert_eq!(
                    decide(none, Target::Node(with)),
                    (with.0, Queue::Node(with), false)
                );
                let near = NodeId(r.placed_on[without.index()]);
                assert_eq!(
                    decide(none, Target::Node(without)),
                    (without.0, Queue::Node(near), false)
                );
                assert_eq!(
                    decide(none.origin(without), Target::Here),
                    (without.0, Queue::Node(near), false)
                );
                assert_eq!(
                    decide(none, Target::Worker(3)),
                    (r.worker_node[3], Queue::Inbox(3), false)
                );
                // A continuation of an aged task stays with us; one that has migrated
                // less goes to our away queue.
                let parent = w.current.get();
                for (migrations, queue) in [(aged_after, Queue::Kept), (1, Queue::Away)] {
                    w.current.set(Meta {
                        migrations: migrations as u16,
                        ..parent
                    });
                    let route = route(r, Some(w), none.continuation(), Target::Here);
                    assert_eq!(route.queue, queue, "{migrations} migrations");
                }
                w.current.set(parent);
                w.current.set(saved);
            });
        });
    }

    /// The placed roots' table is written once for the user docs (`ThreadPool::spawn_on`)
    /// and once here: the same rows.
    #[test]
    fn the_placed_roots_table_is_the_same_in_the_user_docs() {
        let rows = |src: &str, prefix: &str| -> Vec<String> {
            let start = src
                .find(&format!("{prefix}| placed on `N` | queued on |"))
                .unwrap();
            src[start..]
                .lines()
                .take_while(|l| l.trim_start().starts_with(prefix.trim()))
                .map(|l| {
                    l.trim_start()
                        .trim_start_matches(prefix.trim())
                        .trim()
                        .to_owned()
                })
                .take_while(|l| l.starts_with('|'))
                .collect()
        };
        let here = rows(include_str!("route.rs"), "//! ");
        let docs = rows(include_str!("pool.rs"), "    /// ");
        assert_eq!(here.len(), 5, "{here:#?}");
        assert_eq!(here, docs);
    }

    /// Every path counts its task once: a worker's `spawned`, or the pool's `injected`.
    #[test]
    fn every_path_counts_its_task_once() {
        let pool = pool();
        let (tx, rx) = mpsc::channel();
        let tx2 = tx.clone();
        pool.spawn(move || tx2.send(()).unwrap()); // injected
        pool.install(|| {
            // install from outside: injected
            crate::join(|| (), || ()); // 1
            pool.scope(|s| {
                s.spawn(|_| ()); // 2
                s.spawn_on(NodeId(0), |_| ()); // 3
            });
            let (a, b, c) = (tx.clone(), tx.clone(), tx.clone());
            pool.spawn(move || a.send(()).unwrap()); // 4
            pool.spawn_on(NodeId(1), move || b.send(()).unwrap()); // 5
            pool.spawn_pinned(2, move || c.send(()).unwrap()); // 6
        });
        for _ in 0..4 {
            rx.recv().unwrap();
        }
        let m = pool.metrics();
        assert_eq!((m.total.tasks_spawned, m.tasks_injected), (6, 2), "{m:#?}");
    }
}
