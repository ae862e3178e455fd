//! Every way a root enters the pool keeps its zone (`src/route.rs`, "Placed roots"): a root
//! placed on node N — `spawn_on`, `spawn_with` with an origin, a pool's or a scope's
//! `spawn_on`, a node part of `par_for` — from outside the pool, from a worker of another
//! node, or from inside another placed computation, runs with its whole computation (split
//! by `join` and `scope`) inside N's zone; every task runs exactly once; and a spawner that
//! blocks outside the pool waiting for its root is not deadlocked.
//!
//! The pool: the paper's S1 (16 nodes of 2 CPUs, virtual), workers on CPUs 0–3 (nodes 0
//! and 1) and 16–17 (node 8), under conservative-hard. Nodes 0 and 1 are outside node 8's
//! zone and node 8 outside theirs, so a root of node 8 queued where node 0's workers keep
//! it would run outside its zone. Waits are bounded (a failure, not a hang); nothing here
//! asserts on time.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use zonal_policy::PolicyConfig;
use zonal_runtime::{TaskOptions, ThreadPool, ThreadPoolBuilder};
use zonal_topology::NodeId;

const FAR: NodeId = NodeId(8);

fn pool() -> ThreadPool {
    ThreadPoolBuilder::new()
        .preset("s1")
        .worker_cpus([0, 1, 2, 3, 16, 17])
        .policy_config(PolicyConfig::named("conservative-hard").expect("policy"))
        .build()
        .expect("pool on s1")
}

/// What the executions of one computation recorded.
struct Record {
    root: NodeId,
    per_node: Vec<AtomicU64>,
    done: AtomicU64,
}

impl Record {
    fn new(root: NodeId) -> Arc<Self> {
        Arc::new(Self {
            root,
            per_node: (0..16).map(|_| AtomicU64::new(0)).collect(),
            done: AtomicU64::new(0),
        })
    }

    fn note(&self) {
        let node = zonal_runtime::current_node().expect("tasks run on workers");
        self.per_node[node.index()].fetch_add(1, Ordering::Relaxed);
        let mut x = 0u64;
        for i in 0..2_000u64 {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
        }
        self.done.fetch_add(1, Ordering::Release);
    }

    /// Executions on nodes outside the root's zone.
    fn outside(&self, pool: &ThreadPool) -> u64 {
        let topo = pool.topology();
        self.per_node
            .iter()
            .enumerate()
            .filter(|&(n, _)| !topo.node_in_zone(NodeId(n as u32), self.root))
            .map(|(_, c)| c.load(Ordering::Relaxed))
            .sum()
    }

    /// Waits (bounded) for `expected` executions.
    fn wait(&self, expected: u64) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while self.done.load(Ordering::Acquire) < expected {
            assert!(
                Instant::now() < deadline,
                "the computation did not finish: {} of {expected}",
                self.done.load(Ordering::Acquire)
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(
            self.done.load(Ordering::Acquire),
            expected,
            "a task ran twice"
        );
    }
}

/// A computation of 1 + 2 * (1 + 2 + 4 + …) tasks: a root that splits with `join` and
/// `scope` to `depth`.
fn body(rec: &Arc<Record>, depth: u32) {
    rec.note();
    if depth == 0 {
        return;
    }
    let (a, b) = (Arc::clone(rec), Arc::clone(rec));
    zonal_runtime::join(
        || body(&a, depth - 1),
        || {
            zonal_runtime::scope(|s| {
                let b = &b;
                s.spawn(move |_| body(b, depth - 1));
            })
        },
    );
}

fn executions(depth: u32) -> u64 {
    if depth == 0 {
        1
    } else {
        1 + 2 * executions(depth - 1)
    }
}

const DEPTH: u32 = 7;

/// The ways to place a root on `node`, from whatever thread calls them.
#[derive(Clone, Copy, Debug)]
enum Way {
    PoolSpawnOn,
    PoolSpawnWith,
    /// The free `spawn_with` (on a worker: its pool), or the pool's from outside.
    FreeSpawnWith,
    ScopeSpawnOn,
}

const WAYS: [Way; 4] = [
    Way::PoolSpawnOn,
    Way::PoolSpawnWith,
    Way::FreeSpawnWith,
    Way::ScopeSpawnOn,
];

fn place(pool: &ThreadPool, way: Way, node: NodeId, rec: Arc<Record>) {
    let opts = TaskOptions::new().origin(node);
    let on_worker = zonal_runtime::current_thread_index().is_some();
    match way {
        Way::PoolSpawnOn => pool.spawn_on(node, move || body(&rec, DEPTH)),
        Way::PoolSpawnWith => pool.spawn_with(opts, move || body(&rec, DEPTH)),
        Way::FreeSpawnWith if on_worker => {
            zonal_runtime::spawn_with(opts, move || body(&rec, DEPTH));
        }
        Way::FreeSpawnWith => pool.spawn_with(opts, move || body(&rec, DEPTH)),
        Way::ScopeSpawnOn if on_worker => zonal_runtime::scope(|s| {
            s.spawn_on(node, move |_| body(&rec, DEPTH));
        }),
        Way::ScopeSpawnOn => pool.scope(|s| {
            s.spawn_on(node, move |_| body(&rec, DEPTH));
        }),
    }
}

/// Runs `f` on worker 0 (node 0) and waits for it.
fn on_worker0(pool: &ThreadPool, f: impl FnOnce() + Send + 'static) {
    let (tx, rx) = mpsc::channel();
    pool.spawn_pinned(0, move || {
        assert_eq!(zonal_runtime::current_node(), Some(NodeId(0)));
        f();
        tx.send(()).unwrap();
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("worker 0 ran the spawner");
}

fn check(pool: &ThreadPool, rec: &Record, what: &str) {
    rec.wait(executions(DEPTH));
    assert_eq!(
        rec.outside(pool),
        0,
        "{what}: executions outside the root's zone"
    );
}

#[test]
fn a_root_placed_from_outside_the_pool_stays_in_its_zone() {
    let pool = pool();
    for way in WAYS {
        let rec = Record::new(FAR);
        place(&pool, way, FAR, Arc::clone(&rec));
        check(&pool, &rec, &format!("{way:?} from outside"));
    }
    assert_eq!(pool.metrics().total.executions_outside_zone, 0);
}

#[test]
fn a_root_placed_from_a_worker_of_another_node_stays_in_its_zone() {
    let pool = Arc::new(pool());
    for way in WAYS {
        let rec = Record::new(FAR);
        let (p, r) = (Arc::clone(&pool), Arc::clone(&rec));
        on_worker0(&pool, move || place(&p, way, FAR, r));
        check(&pool, &rec, &format!("{way:?} from worker 0"));
    }
    assert_eq!(pool.metrics().total.executions_outside_zone, 0);
}

#[test]
fn a_root_placed_inside_another_placed_computation_stays_in_its_zone() {
    let pool = Arc::new(pool());
    let outer = Record::new(NodeId(0));
    let inner = Record::new(FAR);
    let (p, o, i) = (Arc::clone(&pool), Arc::clone(&outer), Arc::clone(&inner));
    pool.spawn_on(NodeId(0), move || {
        o.note();
        // Inside a computation rooted on node 0, a new root on node 8.
        let (p2, i2) = (Arc::clone(&p), Arc::clone(&i));
        zonal_runtime::join(
            || body(&o, DEPTH - 1),
            move || place(&p2, Way::FreeSpawnWith, FAR, i2),
        );
    });
    outer.wait(1 + executions(DEPTH - 1));
    check(&pool, &inner, "a root inside a computation of node 0");
    assert_eq!(outer.outside(&pool), 0);
    assert_eq!(pool.metrics().total.executions_outside_zone, 0);
}

/// A worker of node 0 places a root on node 8 and then blocks outside the pool until the
/// root has run. Queued where only it could take it, the root would never run.
#[test]
fn a_spawner_that_blocks_waiting_for_its_root_is_not_deadlocked() {
    let pool = Arc::new(pool());
    for way in [Way::PoolSpawnOn, Way::PoolSpawnWith, Way::FreeSpawnWith] {
        let rec = Record::new(FAR);
        let (p, r) = (Arc::clone(&pool), Arc::clone(&rec));
        on_worker0(&pool, move || {
            let (tx, rx) = mpsc::channel();
            let r2 = Arc::clone(&r);
            let opts = TaskOptions::new().origin(FAR);
            let root = move || {
                body(&r2, DEPTH);
                let _ = tx.send(());
            };
            match way {
                Way::PoolSpawnOn => p.spawn_on(FAR, root),
                Way::PoolSpawnWith => p.spawn_with(opts, root),
                _ => zonal_runtime::spawn_with(opts, root),
            }
            // Blocks in user code, not in the pool: worker 0 runs nothing meanwhile.
            rx.recv_timeout(Duration::from_secs(60))
                .unwrap_or_else(|_| panic!("{way:?}: the root never ran while its spawner waited"));
        });
        check(&pool, &rec, &format!("{way:?}, spawner blocked"));
    }
}

/// `par_for` splits its range by node: each node's part is a root placed there, and runs
/// in that node's zone, from outside the pool and from a worker.
#[test]
fn the_node_parts_of_a_parallel_loop_stay_in_their_zones() {
    let pool = Arc::new(pool());
    for from_worker in [false, true] {
        let bad = Arc::new(AtomicU64::new(0));
        let seen = Arc::new((0..4096).map(|_| AtomicU64::new(0)).collect::<Vec<_>>());
        let (p, b, s) = (Arc::clone(&pool), Arc::clone(&bad), Arc::clone(&seen));
        let p3 = Arc::clone(&pool);
        let run = move || {
            p.par_for(0..4096, 16, |r| {
                let info = zonal_runtime::current_task().expect("on a worker");
                let node = zonal_runtime::current_node().expect("on a worker");
                if !p3.topology().node_in_zone(node, info.origin) {
                    b.fetch_add(1, Ordering::Relaxed);
                }
                for i in r {
                    s[i].fetch_add(1, Ordering::Relaxed);
                }
            });
        };
        if from_worker {
            on_worker0(&pool, run);
        } else {
            run();
        }
        assert_eq!(
            bad.load(Ordering::Relaxed),
            0,
            "from a worker: {from_worker}"
        );
        assert!(seen.iter().all(|c| c.load(Ordering::Relaxed) == 1));
    }
}

/// A root placed on a node without workers goes to the injector of the nearest node with
/// workers; its executions there count in `executions_outside_zone` exactly when that
/// node's zone does not hold the root's node.
#[test]
fn a_root_placed_on_a_node_without_workers_runs_on_the_nearest_and_is_counted() {
    let pool = pool();
    let topo = pool.topology();
    let with = [NodeId(0), NodeId(1), NodeId(8)];
    for n in (0..16).map(NodeId).filter(|n| !with.contains(n)) {
        let before = pool.metrics().total.executions_outside_zone;
        let rec = Record::new(n);
        place(&pool, Way::PoolSpawnOn, n, Arc::clone(&rec));
        rec.wait(executions(DEPTH));
        let nearest = with
            .iter()
            .copied()
            .min_by_key(|&m| (topo.distance(n, m), m.0))
            .unwrap();
        let ran_on: Vec<usize> = (0..16)
            .filter(|&k| rec.per_node[k].load(Ordering::Relaxed) > 0)
            .collect();
        let counted = pool.metrics().total.executions_outside_zone - before;
        if topo.node_in_zone(nearest, n) {
            assert_eq!(rec.outside(&pool), 0, "node {n:?}: ran on {ran_on:?}");
        } else {
            // Its computation stays on the nearest node (and on nodes whose zone holds the
            // root, if any): what ran outside the zone is what the counter says.
            assert!(
                ran_on.contains(&nearest.index()),
                "node {n:?}: ran on {ran_on:?}"
            );
        }
        assert_eq!(counted, rec.outside(&pool), "node {n:?}: ran on {ran_on:?}");
    }
}
