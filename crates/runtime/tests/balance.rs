//! Periodic balancing passes over live queues, and live policy switches (`src/balance/`,
//! `src/policy_switch.rs`).
//!
//! Pools on S1 with workers on CPUs 0–3 (nodes 0 and 1, one board: level II apart) and
//! 16–17 (node 8, four ring hops away: level VI, beyond node 0's zone of levels I–IV); and,
//! for the counting of an async task's moves, a pool on CPUs 0, 2, 4, 6 (nodes 0–3) under a
//! scripted policy whose passes make exactly the moves the test asks for.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use zonal_policy::{
    Ageing, BalanceOutcome, BalanceSide, CpuPass, Eligibility, Migration, MoveContext, NoPolicy,
    Placement, Policy, PolicyConfig, PolicyError, Refusal, Rng, StealSide, TaskMeta,
    VictimDecision,
};
use zonal_runtime::{MoveRecord, TaskInfo, TaskOptions, ThreadPool, ThreadPoolBuilder};
use zonal_topology::{CpuId, NodeId, Topology, Victim};

#[path = "common/parked.rs"]
mod parked;

use parked::{park, pool, release, CPUS};

/// Passes far enough apart that every level is due, busy CPUs included.
fn passes(pool: &ThreadPool, n: usize) -> Vec<MoveRecord> {
    let mut moves = Vec::new();
    for k in 1..=n {
        let r = pool.balance_at(k as u64 * 2_000_000);
        assert!(r.balances, "{r:?}");
        moves.extend(r.moves);
    }
    moves
}

#[test]
fn a_linux_pass_moves_queued_tasks_between_nodes() {
    let pool = pool(PolicyConfig::named("linux").unwrap());
    let origins = vec![NodeId(1); 24];
    let (gate, seen) = park(&pool, &origins);
    let moves = passes(&pool, 3);
    assert!(!moves.is_empty(), "nothing moved");
    // The first moves leave worker 0, the only one with queued tasks; later ones may move
    // them on.
    assert_eq!(moves[0].from_worker, 0, "{moves:?}");
    assert!(
        moves
            .iter()
            .any(|m| m.from_node == NodeId(0) && m.to_node != NodeId(0)),
        "no move between nodes: {moves:?}"
    );
    assert!(moves.iter().all(|m| m.from_worker != m.to_worker));
    for m in &moves {
        assert_eq!(pool.worker_node(m.to_worker), m.to_node);
        assert_eq!(
            m.level,
            pool.topology().node_level(m.from_node, m.to_node).unwrap()
        );
    }
    let by_level: u64 = pool
        .balance_at(6_000_000)
        .total_migrations_by_level
        .iter()
        .sum();
    assert_eq!(by_level as usize, moves.len());
    release(gate, &seen, origins.len());
    // A task moved by a pass ran with one more migration (steals after the release may
    // add more, never fewer).
    let moved = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|(_, info, _)| info.migrations >= 1)
        .count();
    assert!(moved >= moves.len().min(origins.len()));
}

#[test]
fn conservative_hard_passes_keep_the_zone_the_origin_and_aged_tasks() {
    let mut cfg = PolicyConfig::named("conservative-hard").unwrap();
    cfg.age_limit = Some(1);
    let pool = pool(cfg);
    let topo = pool.topology().clone();
    // Origins on node 1 (coming home is allowed), node 0's board partner… and node 8,
    // outside the zone of nodes 0 and 1 (never moved: the zone, or the origin's zone).
    let origins: Vec<NodeId> = (0..24)
        .map(|i| if i % 3 == 0 { NodeId(8) } else { NodeId(1) })
        .collect();
    let (gate, seen) = park(&pool, &origins);
    let moves = passes(&pool, 6);
    assert!(!moves.is_empty(), "nothing moved");
    for m in &moves {
        assert!(
            topo.node_in_zone(m.to_node, m.from_node),
            "beyond the zone: {m:?}"
        );
        assert!(
            topo.distance(m.origin, m.to_node) <= topo.distance(m.origin, m.from_node),
            "farther from its origin: {m:?}"
        );
        assert_ne!(m.origin, NodeId(8), "{m:?}");
        // The age limit is 1: a move ages the task, and an aged task never moves.
        assert_eq!((m.migrations_before, m.aged), (0, true), "{m:?}");
    }
    release(gate, &seen, origins.len());
    let m = pool.metrics();
    assert_eq!(m.total.migrations_beyond_zone, 0, "{m:#?}");
    assert_eq!(m.total.moves_farther_from_origin, 0, "{m:#?}");
    for (_, info, node) in seen.lock().unwrap().iter() {
        assert!(info.migrations <= 1, "{info:?}");
        if info.origin == NodeId(8) {
            assert_eq!(*node, NodeId(0), "{info:?} left node 0");
        }
    }
}

#[test]
fn every_task_runs_once_while_passes_run_and_the_policy_switches() {
    const TASKS: usize = 20_000;
    let pool = Arc::new(pool(PolicyConfig::named("conservative-hard").unwrap()));
    let runs: Arc<Vec<AtomicU32>> = Arc::new((0..TASKS).map(|_| AtomicU32::new(0)).collect());
    let stop = Arc::new(AtomicBool::new(false));
    let balancer = {
        let (pool, stop) = (Arc::clone(&pool), Arc::clone(&stop));
        std::thread::spawn(move || {
            let (mut now, mut passes) = (0u64, 0u64);
            while !stop.load(Ordering::SeqCst) {
                now += 5_000;
                let _ = pool.balance_at(now);
                passes += 1;
            }
            passes
        })
    };
    let switcher = {
        let (pool, stop) = (Arc::clone(&pool), Arc::clone(&stop));
        std::thread::spawn(move || {
            let mut k = 0usize;
            while !stop.load(Ordering::SeqCst) {
                match k % 4 {
                    0 => pool.set_policy("linux").unwrap(),
                    1 => pool.set_policy("conservative-hard").unwrap(),
                    2 => pool.set_policy("unrestricted").unwrap(),
                    _ => pool.set_policy_object(Arc::new(NoPolicy)),
                }
                k += 1;
                std::thread::sleep(Duration::from_millis(2));
            }
            k
        })
    };
    let nodes = [NodeId(0), NodeId(1), NodeId(8), NodeId(5)];
    pool.install(|| {
        zonal_runtime::scope(|s| {
            for i in 0..TASKS {
                let runs = Arc::clone(&runs);
                let work = move || {
                    runs[i].fetch_add(1, Ordering::Relaxed);
                    // About 10 µs of work: the run spans many passes and switches.
                    std::hint::black_box((0..std::hint::black_box(2_000u64)).sum::<u64>());
                };
                match i % 4 {
                    0 => s.spawn(move |_| work()),
                    1 => s.spawn_with(TaskOptions::new().origin(nodes[i / 4 % 4]), move |_| work()),
                    2 => s.spawn_on(nodes[i / 4 % 3], move |_| work()),
                    _ => s.spawn_with(TaskOptions::new().continuation(), move |_| work()),
                }
            }
        });
    });
    stop.store(true, Ordering::SeqCst);
    let passes = balancer.join().unwrap();
    let switches = switcher.join().unwrap();
    let counts: Vec<u32> = runs.iter().map(|r| r.load(Ordering::Relaxed)).collect();
    let wrong: Vec<(usize, u32)> = counts
        .iter()
        .enumerate()
        .filter(|(_, &c)| c != 1)
        .map(|(i, &c)| (i, c))
        .take(10)
        .collect();
    assert!(wrong.is_empty(), "tasks not run exactly once: {wrong:?}");
    assert!(passes > 0 && switches > 0);
    assert_eq!(pool.metrics().policy_switches, switches as u64);
}

#[test]
fn an_unknown_policy_name_is_a_typed_error_and_changes_nothing() {
    let pool = pool(PolicyConfig::named("linux").unwrap());
    let err = pool.set_policy("no-such-policy").unwrap_err();
    match &err {
        PolicyError::UnknownPolicy { name, .. } => assert_eq!(name, "no-such-policy"),
        e => panic!("unexpected error {e:?}"),
    }
    assert_eq!(pool.policy_name(), "linux");
    let m = pool.metrics();
    assert_eq!((m.policy.as_str(), m.policy_switches), ("linux", 0));
    pool.set_policy("conservative-hard").unwrap();
    let m = pool.metrics();
    assert_eq!(
        (m.policy.as_str(), m.policy_switches),
        ("conservative-hard", 1)
    );
    assert_eq!(pool.balance_now().policy, "conservative-hard");
}

/// A metrics handle runs the pool's passes from any thread (what the control plane does):
/// the same balancer as the pool's own, under the current policy.
#[test]
fn a_metrics_handle_balances_the_pool_from_another_thread() {
    let pool = pool(PolicyConfig::named("linux").unwrap());
    let handle = pool.metrics_handle();
    let r = std::thread::spawn(move || handle.balance_now())
        .join()
        .unwrap();
    assert_eq!(r.policy, "linux");
    pool.set_policy("conservative-hard").unwrap();
    assert_eq!(
        pool.metrics_handle().balance_now().policy,
        "conservative-hard"
    );
}

#[test]
fn steal_only_policies_make_passes_do_nothing() {
    let pool = ThreadPoolBuilder::new()
        .preset("s1")
        .worker_cpus(CPUS)
        .no_policy()
        .build()
        .unwrap();
    let (gate, seen) = park(&pool, &[NodeId(1); 8]);
    let r = pool.balance_at(10_000_000);
    assert!(!r.balances);
    assert_eq!((r.attempts, r.asked, r.moves.len()), (0, 0, 0));
    release(gate, &seen, 8);
}

/// What the scripted policy does next: the move of the next pass, and whether thieves may
/// steal (they never do otherwise: every walk stops at once).
#[derive(Debug, Default)]
struct Script {
    next: Mutex<Option<(CpuId, CpuId)>>,
    steals: AtomicBool,
}

/// A policy whose passes make exactly the moves of its [`Script`], ageing tasks after 3
/// migrations (the default limit).
#[derive(Debug)]
struct Scripted(Arc<Script>);

const SCRIPTED_AGEING: Ageing = Ageing::After(3);

impl Policy for Scripted {
    fn name(&self) -> &str {
        "scripted"
    }

    fn steal_side(&self) -> &dyn StealSide {
        self
    }

    fn balance_side(&self) -> Option<&dyn BalanceSide> {
        Some(self)
    }
}

impl StealSide for Scripted {
    fn victim(&self, _: &Topology, _: CpuId, _: &Victim, _: u64, _: u64) -> VictimDecision {
        if self.0.steals.load(Ordering::SeqCst) {
            VictimDecision::Examine
        } else {
            VictimDecision::Stop(Refusal::Zone)
        }
    }

    fn eligibility(&self, _: &Topology, task: &TaskMeta, _: CpuId, _: MoveContext) -> Eligibility {
        if SCRIPTED_AGEING.is_aged(task) {
            Eligibility::Refused(Refusal::Aged)
        } else {
            Eligibility::Allowed
        }
    }

    fn ageing(&self) -> Ageing {
        SCRIPTED_AGEING
    }
}

impl BalanceSide for Scripted {
    /// The CPU the script names as destination pulls one task of the source's away queue.
    fn balance(&self, pass: CpuPass<'_>) -> BalanceOutcome {
        let mut next = self.0.next.lock().unwrap();
        let Some((from, to)) = *next else {
            return BalanceOutcome::default();
        };
        if pass.cpu() != to {
            return BalanceOutcome::default();
        }
        *next = None;
        let Some(task) = pass.view.tasks(from).first() else {
            return BalanceOutcome::default();
        };
        BalanceOutcome {
            migrations: vec![Migration {
                task: task.id,
                from,
                to,
                level: pass.view.topology().level_between(from, to),
            }],
            ..BalanceOutcome::default()
        }
    }

    fn idle_balance(&self, _: CpuPass<'_>) -> BalanceOutcome {
        BalanceOutcome::default()
    }

    fn place(
        &self,
        view: &dyn zonal_policy::MachineView,
        parent: CpuId,
        _: &TaskMeta,
        _: &mut Rng,
    ) -> Placement {
        Placement {
            cpu: parent,
            level: view.topology().level_between(parent, parent),
        }
    }
}

/// A one-shot gate an async task awaits; opened from any thread (its waker is woken there).
#[derive(Clone, Default)]
struct Door(Arc<Mutex<(bool, Option<Waker>)>>);

impl Door {
    fn open(&self) {
        let w = {
            let mut g = self.0.lock().unwrap();
            g.0 = true;
            g.1.take()
        };
        if let Some(w) = w {
            w.wake();
        }
    }
}

impl Future for Door {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut g = self.0.lock().unwrap();
        if g.0 {
            Poll::Ready(())
        } else {
            g.1 = Some(cx.waker().clone());
            Poll::Pending
        }
    }
}

/// Keeps worker `w` busy until dropped (returns once the blocker runs).
struct Blocker(Arc<AtomicBool>);

impl Drop for Blocker {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

fn block(pool: &ThreadPool, w: usize) -> Blocker {
    let (done, started) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicBool::new(false)),
    );
    let (d, s) = (Arc::clone(&done), Arc::clone(&started));
    pool.spawn_pinned(w, move || {
        s.store(true, Ordering::SeqCst);
        let start = Instant::now();
        while !d.load(Ordering::SeqCst) && start.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(1));
        }
    });
    let start = Instant::now();
    while !started.load(Ordering::SeqCst) {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "worker {w} never ran its blocker"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    Blocker(done)
}

/// The scripted pool: workers 0–3 on CPUs 0, 2, 4, 6 (nodes 0–3 of S1).
fn scripted_pool() -> (ThreadPool, Arc<Script>) {
    let script = Arc::new(Script::default());
    let pool = ThreadPoolBuilder::new()
        .preset("s1")
        .worker_cpus([0, 2, 4, 6])
        .policy(Arc::new(Scripted(Arc::clone(&script))))
        .build()
        .expect("pool on s1");
    (pool, script)
}

/// Each poll of a [`gated_task`]: its worker, and what the task knows of itself.
type Polls = mpsc::Receiver<(usize, TaskInfo)>;

/// An async task spawned on worker 0 that reports every poll and, between polls, waits at
/// the next of its doors. Returns the doors, the polls, and (once spawned) its handle.
fn gated_task(
    pool: &ThreadPool,
    gates: usize,
) -> (
    Vec<Door>,
    Polls,
    mpsc::Receiver<zonal_runtime::JoinHandle<()>>,
) {
    let gates: Vec<Door> = (0..gates).map(|_| Door::default()).collect();
    let (polls_tx, polls) = mpsc::channel();
    let (handle_tx, handle) = mpsc::channel();
    let gs = gates.clone();
    pool.spawn_pinned(0, move || {
        let h = zonal_runtime::spawn_async(async move {
            let here = || {
                (
                    zonal_runtime::current_worker_index().unwrap(),
                    zonal_runtime::current_task().unwrap(),
                )
            };
            for g in gs {
                polls_tx.send(here()).unwrap();
                g.await;
            }
            polls_tx.send(here()).unwrap();
        });
        handle_tx.send(h).unwrap();
    });
    (gates, polls, handle)
}

fn next_poll(polls: &Polls) -> (usize, TaskInfo) {
    polls
        .recv_timeout(Duration::from_secs(20))
        .expect("the task was not polled within 20 s")
}

/// The moves counted in the pool's metrics: steals and balancing passes.
fn counted_moves(pool: &ThreadPool) -> (u64, u64) {
    let m = pool.metrics().total;
    (
        m.steals_by_level.iter().sum(),
        m.balance_migrations_by_level.iter().sum(),
    )
}

#[test]
fn an_async_task_moved_by_passes_counts_each_move_once_and_ages_at_the_limit() {
    let (pool, script) = scripted_pool();
    let cpu = |w: usize| CpuId::new(w * 2);
    let (gates, polls, handle) = gated_task(&pool, 4);
    assert_eq!(next_poll(&polls).0, 0, "first polled on its spawner");
    let mut now = 0;
    for (k, (from, to)) in [(0, 1), (1, 2), (2, 3)].into_iter().enumerate() {
        // The task waits, idle, at gate k; its worker is kept busy, so the wake leaves it in
        // that worker's away queue, where only the pass can take it.
        let blocker = block(&pool, from);
        gates[k].open();
        *script.next.lock().unwrap() = Some((cpu(from), cpu(to)));
        now += 10_000_000;
        let r = pool.balance_at(now);
        assert_eq!(r.moves.len(), 1, "move {k}: {r:?}");
        let m = r.moves[0];
        assert_eq!((m.from_worker, m.to_worker), (from, to), "{m:?}");
        assert_eq!(m.migrations_before, k as u32, "move {k}: {m:?}");
        // Age limit 3: not aged after one or two moves, aged by the third.
        assert_eq!(m.aged, k == 2, "move {k}: {m:?}");
        let (w, info) = next_poll(&polls);
        assert_eq!(w, to);
        assert_eq!(
            info.migrations,
            k as u32 + 1,
            "polled after move {k}: {info:?}"
        );
        assert_eq!(counted_moves(&pool), (0, k as u64 + 1));
        drop(blocker);
    }
    // Aged: woken into its worker's inbox, where no pass takes it.
    let blocker = block(&pool, 3);
    gates[3].open();
    *script.next.lock().unwrap() = Some((cpu(3), cpu(0)));
    let r = pool.balance_at(now + 10_000_000);
    assert!(r.moves.is_empty(), "an aged task moved: {r:?}");
    drop(blocker);
    let (w, info) = next_poll(&polls);
    assert_eq!((w, info.migrations), (3, 3), "{info:?}");
    handle.recv().unwrap().join().unwrap();
    assert_eq!(counted_moves(&pool), (0, 3));
}

#[test]
fn an_async_task_moved_by_a_pass_then_stolen_counts_two_moves() {
    let (pool, script) = scripted_pool();
    let cpu = |w: usize| CpuId::new(w * 2);
    let (gates, polls, handle) = gated_task(&pool, 1);
    assert_eq!(next_poll(&polls).0, 0);
    let b0 = block(&pool, 0);
    gates[0].open();
    *script.next.lock().unwrap() = Some((cpu(0), cpu(1)));
    let b1 = block(&pool, 1);
    let r = pool.balance_at(10_000_000);
    assert_eq!(r.moves.len(), 1, "{r:?}");
    assert_eq!(r.moves[0].to_worker, 1);
    // Worker 1 is busy: a thief takes the task from its away queue (worker 2, woken by a
    // pinned no-op, searches before it sleeps again; or any other idle worker).
    script.steals.store(true, Ordering::SeqCst);
    pool.spawn_pinned(2, || {});
    let (w, info) = next_poll(&polls);
    assert!(w == 2 || w == 3, "polled on worker {w}");
    assert_eq!(info.migrations, 2, "one pass, one steal: {info:?}");
    assert_eq!(counted_moves(&pool), (1, 1));
    drop((b0, b1));
    handle.recv().unwrap().join().unwrap();
}
