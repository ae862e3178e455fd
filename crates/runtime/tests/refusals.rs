//! Idle workers park while a task they are refused waits for its busy owner
//! (`crates/runtime/src/steal/README.md`, "Refused work"): a refusal wakes the task's owner only, never
//! another worker the policy would refuse the same task.
//!
//! A pool on S1 with workers on CPUs 0–3 (nodes 0 and 1, one board: level II apart). A root
//! placed on node 8 (no workers; four ring hops away: outside the zone of nodes 0 and 1)
//! runs on node 0, the nearest node with workers, queues a child — which inherits origin 8,
//! so every other worker is refused it, `OriginOutsideZone` — then stays busy. The three
//! idle workers search, are refused, and park; over the next second nothing changes, and
//! none of them wakes or parks again. When the owner is free, it runs the task itself.
//! Waits are bounded (a failure, not a hang); nothing asserts on how long anything took.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use zonal_policy::PolicyConfig;
use zonal_runtime::{PoolMetrics, ThreadPoolBuilder};
use zonal_topology::NodeId;

/// Wake-ups and parks of every worker but `owner`.
fn idle_counts(m: &PoolMetrics, owner: usize) -> Vec<(u64, u64)> {
    m.workers
        .iter()
        .filter(|w| w.worker != Some(owner))
        .map(|w| (w.wakeups, w.parks))
        .collect()
}

/// Refusals met by every worker but `owner`.
fn refusals(m: &PoolMetrics, owner: usize) -> u64 {
    m.workers
        .iter()
        .filter(|w| w.worker != Some(owner))
        .map(|w| w.refused.total())
        .sum()
}

#[test]
fn idle_workers_park_while_a_refused_task_waits_for_its_busy_owner() {
    let pool = ThreadPoolBuilder::new()
        .preset("s1")
        .worker_cpus([0, 1, 2, 3])
        .policy_config(PolicyConfig::named("conservative-hard").unwrap())
        .build()
        .expect("pool on s1");
    let far = NodeId(8);
    assert!(!pool.topology().node_in_zone(NodeId(0), far));
    assert!(!pool.topology().node_in_zone(NodeId(1), far));

    let gate = Arc::new(AtomicBool::new(false));
    let owner = Arc::new(AtomicUsize::new(usize::MAX));
    let ran_on = Arc::new(AtomicUsize::new(usize::MAX));
    let (done_tx, done_rx) = mpsc::channel();
    {
        let (gate, owner, ran_on) = (Arc::clone(&gate), Arc::clone(&owner), Arc::clone(&ran_on));
        // A root placed on node 8, which has no workers: it runs on the nearest node with
        // workers (node 0), and its child inherits origin 8 on its runner's deque.
        pool.spawn_on(far, move || {
            zonal_runtime::spawn(move || {
                ran_on.store(
                    zonal_runtime::current_thread_index().unwrap(),
                    Ordering::SeqCst,
                );
                done_tx.send(()).unwrap();
            });
            owner.store(
                zonal_runtime::current_thread_index().unwrap(),
                Ordering::SeqCst,
            );
            while !gate.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(1));
            }
        });
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    while owner.load(Ordering::SeqCst) == usize::MAX {
        assert!(Instant::now() < deadline, "the root never queued its child");
        std::thread::yield_now();
    }
    let owner = owner.load(Ordering::SeqCst);
    let refusals = |m: &PoolMetrics| refusals(m, owner);
    let idle_counts = |m: &PoolMetrics| idle_counts(m, owner);
    // The idle workers find the task and are refused it; then they all park.
    let settled = |m: &PoolMetrics| refusals(m) > 0;
    let mut m = pool.metrics();
    while !settled(&m) {
        assert!(
            Instant::now() < deadline,
            "nobody was refused the task: {m:#?}"
        );
        std::thread::sleep(Duration::from_millis(5));
        m = pool.metrics();
    }
    // Wait until the counts stop moving (each idle worker parked after its last refusal):
    // unchanged over three polls in a row, as every idle worker searches and spins a
    // bounded number of rounds before it parks, which on a loaded machine takes a while.
    let mut before = idle_counts(&m);
    let mut still = 0;
    loop {
        std::thread::sleep(Duration::from_millis(100));
        let now = idle_counts(&pool.metrics());
        if now == before {
            still += 1;
            if still == 3 {
                break;
            }
            continue;
        }
        still = 0;
        assert!(
            Instant::now() < deadline,
            "the idle workers never settled: they keep waking up ({before:?} -> {now:?})"
        );
        before = now;
    }
    // A second with the refused task outstanding and nothing else happening.
    let r0 = refusals(&pool.metrics());
    std::thread::sleep(Duration::from_secs(1));
    let m = pool.metrics();
    assert_eq!(
        idle_counts(&m),
        before,
        "a refused worker woke up while nothing changed: {m:#?}"
    );
    assert_eq!(refusals(&m), r0, "refused again while parked");
    assert_eq!(
        ran_on.load(Ordering::SeqCst),
        usize::MAX,
        "somebody took it"
    );

    // The owner, once free, runs it itself.
    gate.store(true, Ordering::SeqCst);
    done_rx
        .recv_timeout(Duration::from_secs(30))
        .expect("the task ran");
    assert_eq!(ran_on.load(Ordering::SeqCst), owner);
}

/// Two owners on two nodes: workers on CPUs 0, 1 (node 0) and 4, 5 (node 2) of S1. Roots
/// placed on nodes 10 and 8 (nodes without workers, outside the zones of nodes 0 and 2,
/// whose nearest nodes with workers are 0 and 2) run on a worker of each node, leave a
/// child of their origin on its deque, and block. The other worker of each node is refused
/// both children. An earlier rule (the last searcher woke a sleeper of the node whose work it
/// was refused) had them wake each other for ever. Counted in events, not time: the two
/// pushes may wake an idle worker once each, and a refusal wakes only a task's owner, so the
/// idle workers are woken at most twice in all, whenever we look.
#[test]
fn refused_work_on_two_nodes_wakes_nobody_who_would_refuse_it() {
    let pool = ThreadPoolBuilder::new()
        .preset("s1")
        .worker_cpus([0, 1, 4, 5])
        .policy_config(PolicyConfig::named("conservative-hard").unwrap())
        .build()
        .expect("pool on s1");
    let topo = pool.topology();
    // Node 10's nearest node with workers is 0, node 8's is 2; neither is in the zone of
    // nodes 0 or 2.
    for (node, far) in [(NodeId(0), NodeId(10)), (NodeId(2), NodeId(8))] {
        for idle in [NodeId(0), NodeId(2)] {
            assert!(!topo.node_in_zone(idle, far), "{far:?} in {idle:?}'s zone");
        }
        assert!(topo.distance(far, node) < topo.distance(far, NodeId(2 - node.0)));
    }
    let gate = Arc::new(AtomicBool::new(false));
    let owners: Arc<Vec<AtomicUsize>> =
        Arc::new((0..2).map(|_| AtomicUsize::new(usize::MAX)).collect());
    let ran: Arc<Vec<AtomicUsize>> = Arc::new((0..2).map(|_| AtomicUsize::new(0)).collect());
    let (done_tx, done_rx) = mpsc::channel();
    for (k, far) in [NodeId(10), NodeId(8)].into_iter().enumerate() {
        let (gate, owners, ran, done_tx) = (
            Arc::clone(&gate),
            Arc::clone(&owners),
            Arc::clone(&ran),
            done_tx.clone(),
        );
        // Each root runs on a worker of its nearest node and leaves a child of origin `far`
        // on that worker's deque, then blocks.
        pool.spawn_on(far, move || {
            zonal_runtime::spawn(move || {
                ran[k].fetch_add(1, Ordering::SeqCst);
                done_tx.send(zonal_runtime::current_thread_index()).unwrap();
            });
            owners[k].store(
                zonal_runtime::current_thread_index().unwrap(),
                Ordering::SeqCst,
            );
            while !gate.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(1));
            }
        });
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    while owners
        .iter()
        .any(|o| o.load(Ordering::SeqCst) == usize::MAX)
    {
        assert!(Instant::now() < deadline, "the owners never queued");
        std::thread::yield_now();
    }
    let owner: Vec<usize> = owners.iter().map(|o| o.load(Ordering::SeqCst)).collect();
    let others: Vec<usize> = (0..4).filter(|w| !owner.contains(w)).collect();
    assert_eq!(others.len(), 2, "one owner on each node: {owner:?}");
    let idle = |m: &PoolMetrics| -> (u64, u64, u64) {
        let w = [&m.workers[others[0]], &m.workers[others[1]]];
        (
            w.iter().map(|w| w.wakeups).sum(),
            w.iter().map(|w| w.parks).sum(),
            w.iter().map(|w| w.refused.total()).sum(),
        )
    };
    // Until both idle workers have been refused and parked since.
    let mut m = pool.metrics();
    loop {
        let (wakeups, parks, refused) = idle(&m);
        assert!(wakeups <= 2, "idle workers woken {wakeups} times: {m:#?}");
        if refused > 0 && parks > wakeups + 1 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the idle workers never parked: {m:#?}"
        );
        std::thread::sleep(Duration::from_millis(5));
        m = pool.metrics();
    }
    // However long we look: nothing new happens, so nobody is woken again.
    for _ in 0..20 {
        std::thread::sleep(Duration::from_millis(10));
        let m = pool.metrics();
        let (wakeups, parks, _) = idle(&m);
        assert!(wakeups <= 2, "idle workers woken {wakeups} times: {m:#?}");
        assert!(
            parks <= wakeups + 2,
            "idle workers parked {parks} times: {m:#?}"
        );
    }
    assert!(
        ran.iter().all(|r| r.load(Ordering::SeqCst) == 0),
        "taken while refused"
    );
    gate.store(true, Ordering::SeqCst);
    let mut by = Vec::new();
    for _ in 0..2 {
        by.push(
            done_rx
                .recv_timeout(Duration::from_secs(30))
                .expect("the owners run their tasks"),
        );
    }
    by.sort();
    let mut owner = owner.into_iter().map(Some).collect::<Vec<_>>();
    owner.sort();
    assert_eq!(by, owner, "each owner ran its own task");
    assert!(ran.iter().all(|r| r.load(Ordering::SeqCst) == 1));
}
