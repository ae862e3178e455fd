//! Async tasks on Zonal workers (`src/async_task/`): every task completes exactly once and
//! is polled exactly once per wake; handles are awaited from other tasks, joined from plain
//! threads and from workers; panics surface as `JoinError`; wakes come from any thread; a
//! pool dropped with tasks nobody will wake returns and drops their futures; and the
//! conservative laws hold for tasks that live across many polls (aged tasks stay on their
//! worker, nothing leaves the origin's zone), with each move counted once; and a user's
//! waker that panics when woken (by the timer, or at a task's completion) is caught and
//! logged: the timer keeps firing, the result is still published, the pool lives on.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use zonal_policy::PolicyConfig;
use zonal_runtime::task::{sleep, yield_now};
use zonal_runtime::{JoinHandle, TaskOptions, ThreadPool, ThreadPoolBuilder};
use zonal_topology::NodeId;

/// The pools of the exactly-once tests: one worker, two workers on two nodes, and the
/// whole `s1` preset (16 nodes × 2 CPUs).
fn pools() -> Vec<(&'static str, ThreadPool)> {
    let b = || ThreadPoolBuilder::new().preset("s1");
    vec![
        ("1 worker", b().worker_cpus([0]).build().unwrap()),
        ("2 workers", b().worker_cpus([0, 2]).build().unwrap()),
        ("s1", b().build().unwrap()),
    ]
}

#[test]
fn many_tasks_that_yield_and_sleep_complete_exactly_once() {
    const N: usize = 10_000;
    for (name, pool) in pools() {
        let done: Arc<Vec<AtomicU32>> = Arc::new((0..N).map(|_| AtomicU32::new(0)).collect());
        let handles: Vec<JoinHandle<usize>> = (0..N)
            .map(|i| {
                let done = Arc::clone(&done);
                pool.spawn_async(async move {
                    for k in 0..4 {
                        if (i + k) % 3 == 0 {
                            sleep(Duration::from_micros((i % 200) as u64)).await;
                        } else {
                            yield_now().await;
                        }
                    }
                    done[i].fetch_add(1, Ordering::Relaxed);
                    i
                })
            })
            .collect();
        for (i, h) in handles.into_iter().enumerate() {
            assert_eq!(h.join().unwrap(), i, "{name}");
        }
        for (i, d) in done.iter().enumerate() {
            assert_eq!(d.load(Ordering::Relaxed), 1, "{name}: task {i}");
        }
        let m = pool.metrics();
        assert_eq!(m.total.async_tasks_completed, N as u64, "{name}");
        // At least the first poll and one per yield (a sleep whose deadline has passed
        // when it is first polled costs no poll).
        assert!(m.total.async_polls >= 3 * N as u64, "{name}: {m:?}");
    }
}

/// With yields only, each task is polled exactly once per wake plus its first poll.
#[test]
fn a_task_is_polled_exactly_once_per_wake() {
    const N: usize = 2_000;
    const YIELDS: usize = 5;
    for (name, pool) in pools() {
        let polls = Arc::new(AtomicUsize::new(0));
        let handles: Vec<_> = (0..N)
            .map(|_| {
                let polls = Arc::clone(&polls);
                pool.spawn_async(async move {
                    polls.fetch_add(1, Ordering::Relaxed);
                    for _ in 0..YIELDS {
                        yield_now().await;
                        polls.fetch_add(1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        let expected = (N * (YIELDS + 1)) as u64;
        assert_eq!(polls.load(Ordering::Relaxed) as u64, expected, "{name}");
        let m = pool.metrics();
        assert_eq!(m.total.async_polls, expected, "{name}");
        assert_eq!(m.total.async_tasks_completed, N as u64, "{name}");
    }
}

#[test]
fn handles_are_awaited_from_other_tasks_and_joined_from_threads_and_workers() {
    let pool = ThreadPoolBuilder::new()
        .preset("s1")
        .worker_cpus([0])
        .build()
        .unwrap();
    // A chain: each task awaits the previous one's handle.
    let mut h = pool.spawn_async(async { 1u64 });
    for _ in 0..100 {
        h = pool.spawn_async(async move {
            yield_now().await;
            h.await.unwrap() + 1
        });
    }
    assert_eq!(h.join().unwrap(), 101);
    // `join` on the pool's only worker: it runs the task itself while it waits.
    let r = pool.install(|| {
        let h = zonal_runtime::spawn_async(async {
            yield_now().await;
            zonal_runtime::current_worker_index()
        });
        let c = zonal_runtime::spawn_async(async { 5 });
        (h.join().unwrap(), c.join().unwrap())
    });
    assert_eq!(r, (Some(0), 5));
    // `join` inside an async task of the same one-worker pool.
    let outer = pool.spawn_async(async {
        let inner = zonal_runtime::spawn_async(async {
            yield_now().await;
            7
        });
        inner.join().unwrap()
    });
    assert_eq!(outer.join().unwrap(), 7);
    // A closure's handle, and `is_finished`.
    let h = pool.spawn_handle(|| "closure");
    assert_eq!(h.join().unwrap(), "closure");
    let (tx, rx) = oneshot::<()>();
    let h = pool.spawn_async(rx);
    assert!(!h.is_finished());
    tx.send(());
    h.join().unwrap();
}

#[test]
fn panics_surface_as_join_errors_and_detached_ones_reach_the_handler() {
    let handled = Arc::new(AtomicUsize::new(0));
    let hd = Arc::clone(&handled);
    let pool = ThreadPoolBuilder::new()
        .preset("s1")
        .worker_cpus([0])
        .panic_handler(move |_| {
            hd.fetch_add(1, Ordering::SeqCst);
        })
        .build()
        .unwrap();
    let h = pool.spawn_async(async {
        yield_now().await;
        panic!("async boom");
    });
    let e = h.join().unwrap_err();
    assert!(e.is_panic() && !e.is_cancelled());
    assert_eq!(e.to_string(), "task panicked: async boom");
    assert_eq!(
        e.into_panic().downcast_ref::<&str>(),
        Some(&"async boom"),
        "the payload"
    );
    let e = pool
        .spawn_handle(|| -> u8 { panic!("closure boom") })
        .join()
        .unwrap_err();
    assert!(e.is_panic());
    assert_eq!(
        handled.load(Ordering::SeqCst),
        0,
        "joined panics are the handle's"
    );
    // Detached: the handler gets it.
    drop(pool.spawn_async(async {
        yield_now().await;
        panic!("detached");
    }));
    // The single worker survived every panic.
    assert_eq!(pool.spawn_handle(|| 3).join().unwrap(), 3);
    pool.shutdown_and_wait(); // the detached task is done
    assert_eq!(handled.load(Ordering::SeqCst), 1);
}

/// A one-shot channel whose receiver is a future (its waker is woken by the sender, from
/// whatever thread sends).
struct Shared<T> {
    value: Option<T>,
    waker: Option<Waker>,
}
struct Sender<T>(Arc<Mutex<Shared<T>>>);
struct Receiver<T>(Arc<Mutex<Shared<T>>>);

fn oneshot<T>() -> (Sender<T>, Receiver<T>) {
    let s = Arc::new(Mutex::new(Shared {
        value: None,
        waker: None,
    }));
    (Sender(Arc::clone(&s)), Receiver(s))
}

impl<T> Sender<T> {
    fn send(self, v: T) {
        let w = {
            let mut g = self.0.lock().unwrap();
            g.value = Some(v);
            g.waker.take()
        };
        if let Some(w) = w {
            w.wake();
        }
    }
}

impl<T> Future for Receiver<T> {
    type Output = T;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        let mut g = self.0.lock().unwrap();
        match g.value.take() {
            Some(v) => Poll::Ready(v),
            None => {
                g.waker = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

#[test]
fn wakes_from_foreign_threads_run_each_task_once() {
    const N: usize = 1_000;
    for (name, pool) in pools() {
        let (senders, handles): (Vec<_>, Vec<_>) = (0..N)
            .map(|i| {
                let (tx, rx) = oneshot::<usize>();
                let (tx2, rx2) = oneshot::<usize>();
                let h = pool.spawn_async(async move {
                    let a = rx.await;
                    let b = rx2.await;
                    a + b + i
                });
                ((tx, tx2), h)
            })
            .unzip();
        // Four plain threads wake them, each its share, twice.
        let mut chunks: Vec<Vec<(Sender<usize>, Sender<usize>)>> = (0..4).map(|_| vec![]).collect();
        for (i, s) in senders.into_iter().enumerate() {
            chunks[i % 4].push(s);
        }
        let threads: Vec<_> = chunks
            .into_iter()
            .map(|c| {
                std::thread::spawn(move || {
                    let mut second = vec![];
                    for (a, b) in c {
                        a.send(1);
                        second.push(b);
                    }
                    for b in second {
                        b.send(2);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        for (i, h) in handles.into_iter().enumerate() {
            assert_eq!(h.join().unwrap(), i + 3, "{name}");
        }
        assert_eq!(
            pool.metrics().total.async_tasks_completed,
            N as u64,
            "{name}"
        );
    }
}

/// Counts its drops.
struct DropCount(Arc<AtomicUsize>);
impl Drop for DropCount {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn dropping_a_pool_with_never_woken_tasks_returns_and_drops_their_futures() {
    for (name, pool) in pools() {
        let drops = Arc::new(AtomicUsize::new(0));
        let mut keep = vec![];
        let mut handles = vec![];
        for i in 0..100 {
            let guard = DropCount(Arc::clone(&drops));
            let (tx, rx) = oneshot::<()>();
            // Senders kept: the wakers stay registered, yet nobody will wake them.
            keep.push(tx);
            let h = pool.spawn_async(async move {
                let _guard = guard;
                rx.await;
                if i % 2 == 0 {
                    std::future::pending::<()>().await;
                }
            });
            if i % 2 == 0 {
                handles.push(h);
            }
        }
        // Let them all reach their wait.
        let polled = |p: &ThreadPool| p.metrics().total.async_polls;
        while polled(&pool) < 100 {
            std::thread::yield_now();
        }
        // The drop returns at once: the idle tasks' futures are dropped on this thread, one
        // still in its poll by its worker right after.
        drop(pool);
        wait_until(name, || drops.load(Ordering::SeqCst) >= 100);
        assert_eq!(
            drops.load(Ordering::SeqCst),
            100,
            "{name}: every future dropped once"
        );
        for h in handles {
            let e = h.join().unwrap_err();
            assert!(e.is_cancelled(), "{name}: {e}");
        }
        // Waking them now is harmless.
        for tx in keep {
            tx.send(());
        }
        assert_eq!(drops.load(Ordering::SeqCst), 100, "{name}");
    }
}

/// What one poll saw.
#[derive(Clone, Copy, Debug)]
struct PollRecord {
    worker: usize,
    node: NodeId,
    migrations: u32,
}

fn here() -> PollRecord {
    let t = zonal_runtime::current_task().expect("polled on a worker");
    PollRecord {
        worker: zonal_runtime::current_worker_index().unwrap(),
        node: zonal_runtime::current_node().unwrap(),
        migrations: t.migrations,
    }
}

/// Tasks born on node 0 (a skewed load: two workers of 32), each yielding many times; the
/// node, worker and migration count of every poll is recorded. Returns the records, by task.
fn skewed_run(pool: &ThreadPool, tasks: usize, yields: usize) -> Vec<Vec<PollRecord>> {
    let handles: Vec<_> = (0..tasks)
        .map(|_| {
            pool.spawn_async_with(TaskOptions::new().origin(NodeId(0)), async move {
                let mut rec = vec![here()];
                for _ in 0..yields {
                    yield_now().await;
                    rec.push(here());
                }
                rec
            })
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

/// Each move is counted once: between two polls, a change of worker is one migration and
/// staying is none; the pool's migration counter is the sum of the tasks' counts; every
/// poll is one `async_polls`.
fn check_counting(pool: &ThreadPool, records: &[Vec<PollRecord>]) -> u64 {
    let mut moves = 0u64;
    for rec in records {
        for w in rec.windows(2) {
            let (a, b) = (w[0], w[1]);
            if a.worker == b.worker {
                assert_eq!(b.migrations, a.migrations, "{rec:?}");
            } else {
                assert_eq!(b.migrations, a.migrations + 1, "{rec:?}");
            }
        }
        moves += u64::from(rec.last().unwrap().migrations);
    }
    let m = pool.metrics();
    assert_eq!(m.total.migrations, moves, "{:?}", m.total.steals_by_level);
    let polls: usize = records.iter().map(Vec::len).sum();
    assert_eq!(m.total.async_polls, polls as u64);
    moves
}

#[test]
fn under_conservative_hard_aged_tasks_stay_and_nothing_leaves_the_zone() {
    for limit in [1, 2] {
        let mut cfg = PolicyConfig::named("conservative-hard").unwrap();
        cfg.age_limit = Some(limit);
        let pool = ThreadPoolBuilder::new()
            .preset("s1")
            .policy(cfg.build().unwrap())
            .build()
            .unwrap();
        let topo = pool.topology().clone();
        let records = skewed_run(&pool, 300, 20);
        let mut aged = 0;
        for rec in &records {
            for r in rec {
                assert!(
                    topo.node_in_zone(NodeId(0), r.node),
                    "polled outside the origin's zone: {r:?}"
                );
            }
            if let Some(first) = rec.iter().position(|r| r.migrations >= limit) {
                aged += 1;
                let w = rec[first].worker;
                assert!(
                    rec[first..].iter().all(|r| r.worker == w),
                    "an aged task moved: {rec:?}"
                );
            }
        }
        let moves = check_counting(&pool, &records);
        let m = pool.metrics();
        assert_eq!(m.total.migrations_beyond_zone, 0);
        assert_eq!(m.total.moves_farther_from_origin, 0);
        eprintln!(
            "conservative-hard, age limit {limit}: {moves} moves, {aged} of 300 tasks aged, \
             steals by level {:?}",
            m.total.steals_by_level
        );
    }
}

#[test]
fn under_linux_and_unrestricted_moves_are_counted_once() {
    for name in ["linux", "unrestricted"] {
        let pool = ThreadPoolBuilder::new()
            .preset("s1")
            .policy_name(name)
            .build()
            .unwrap();
        let records = skewed_run(&pool, 300, 20);
        let moves = check_counting(&pool, &records);
        eprintln!("{name}: {moves} moves of async tasks");
    }
}

/// A woken task whose worker is busy is taken by a thief (a deterministic migration): its
/// first poll parks it and pins a blocker on its worker; a plain thread then wakes it.
#[test]
fn under_unrestricted_a_woken_task_of_a_busy_worker_migrates() {
    let pool = Arc::new(
        ThreadPoolBuilder::new()
            .preset("s1")
            .policy_name("unrestricted")
            .build()
            .unwrap(),
    );
    let moved = Arc::new(AtomicBool::new(false));
    let blocking = Arc::new(AtomicBool::new(false));
    let (tx, rx) = oneshot::<()>();
    let (p, mv, bl) = (Arc::clone(&pool), Arc::clone(&moved), Arc::clone(&blocking));
    let h = pool.spawn_async(async move {
        let first = here();
        let (mv2, bl2) = (Arc::clone(&mv), Arc::clone(&bl));
        // Keep our worker busy until we have been polled elsewhere (bounded, so that a
        // failure fails rather than hangs).
        p.spawn_pinned(first.worker, move || {
            bl2.store(true, Ordering::SeqCst);
            let start = Instant::now();
            while !mv2.load(Ordering::SeqCst) && start.elapsed() < Duration::from_secs(30) {
                std::thread::yield_now();
            }
        });
        rx.await;
        let second = here();
        mv.store(true, Ordering::SeqCst);
        (first, second)
    });
    while !blocking.load(Ordering::SeqCst) {
        std::thread::yield_now();
    }
    tx.send(());
    let (first, second) = h.join().unwrap();
    assert_ne!(first.worker, second.worker, "{first:?} {second:?}");
    assert_eq!(second.migrations, first.migrations + 1);
    assert!(pool.metrics().total.migrations > 0);
}

#[test]
fn the_free_function_uses_the_current_pool() {
    let pool = ThreadPoolBuilder::new()
        .preset("s1")
        .worker_cpus([0, 1])
        .build()
        .unwrap();
    let on_pool =
        pool.install(|| zonal_runtime::spawn_async(async { zonal_runtime::current_num_threads() }));
    assert_eq!(on_pool.join().unwrap(), 2);
    assert_eq!(pool.metrics().total.async_tasks_completed, 1);
    let bad = pool.try_spawn_async_with(TaskOptions::new().origin(NodeId(99)), async {});
    assert!(bad.is_err());
}

#[test]
fn every_completed_task_records_its_turnaround_once() {
    let pool = ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .expect("pool");
    let handles: Vec<JoinHandle<u32>> = (0..500u32)
        .map(|i| {
            pool.spawn_async(async move {
                yield_now().await;
                i
            })
        })
        .collect();
    let closures: Vec<JoinHandle<u32>> =
        (0..100u32).map(|i| pool.spawn_handle(move || i)).collect();
    for (i, h) in handles.into_iter().chain(closures).enumerate() {
        assert_eq!(h.join().expect("no panic"), (i % 500) as u32);
    }
    let m = pool.metrics();
    assert_eq!(m.turnaround.count, 600);
    assert_eq!(m.total.async_tasks_completed, 600);
    assert_eq!(m.turnaround.counts.iter().sum::<u64>(), 600);
}

/// A waker whose wake counts, then panics.
#[derive(Default)]
struct PanickingWaker(AtomicUsize);

impl std::task::Wake for PanickingWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
        panic!("a waker that panics");
    }
}

/// Waits (bounded: fails after 20 s rather than hang) until `done`.
fn wait_until(what: &str, done: impl Fn() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{what}: not after 20 s"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Joins `h` on another thread, failing after 20 s rather than hang.
fn join_bounded<T: Send + 'static>(h: JoinHandle<T>, what: &str) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(h.join());
    });
    rx.recv_timeout(Duration::from_secs(20))
        .unwrap_or_else(|_| panic!("{what}: not done after 20 s"))
        .expect("no panic")
}

#[test]
fn a_waker_that_panics_when_the_timer_fires_leaves_the_timer_running() {
    let pw = Arc::new(PanickingWaker::default());
    let waker = Waker::from(Arc::clone(&pw));
    let mut s = Box::pin(sleep(Duration::from_millis(1)));
    assert!(s
        .as_mut()
        .poll(&mut Context::from_waker(&waker))
        .is_pending());
    wait_until("the timer wakes the waker", || {
        pw.0.load(Ordering::SeqCst) == 1
    });
    assert!(s
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
        .is_ready());
    // Later sleeps still fire: in a task of a pool, and under another executor.
    let pool = ThreadPoolBuilder::new()
        .preset("s1")
        .worker_cpus([0, 2])
        .build()
        .unwrap();
    let h = pool.spawn_async(async {
        sleep(Duration::from_millis(1)).await;
        7
    });
    assert_eq!(join_bounded(h, "a sleep on the pool"), 7);
    let woken = Arc::new(AtomicBool::new(false));
    struct Flag(Arc<AtomicBool>);
    impl std::task::Wake for Flag {
        fn wake(self: Arc<Self>) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
    let flag = Waker::from(Arc::new(Flag(Arc::clone(&woken))));
    let mut s = Box::pin(sleep(Duration::from_millis(1)));
    assert!(s
        .as_mut()
        .poll(&mut Context::from_waker(&flag))
        .is_pending());
    wait_until("a sleep on a plain thread", || woken.load(Ordering::SeqCst));
    assert!(s.as_mut().poll(&mut Context::from_waker(&flag)).is_ready());
    assert_eq!(pw.0.load(Ordering::SeqCst), 1, "woken once");
}

#[test]
fn a_join_waker_that_panics_at_completion_is_caught_and_the_result_published() {
    let pool = ThreadPoolBuilder::new()
        .preset("s1")
        .worker_cpus([0, 2])
        .build()
        .unwrap();
    let pw = Arc::new(PanickingWaker::default());
    let waker = Waker::from(Arc::clone(&pw));
    // Awaited by an outside executor (this thread) with the panicking waker; completed on
    // a worker, which wakes it.
    let (tx, rx) = oneshot::<u32>();
    let mut h = pool.spawn_async(async move { rx.await + 1 });
    assert!(Pin::new(&mut h)
        .poll(&mut Context::from_waker(&waker))
        .is_pending());
    tx.send(41);
    wait_until("the completion wakes the waker", || {
        pw.0.load(Ordering::SeqCst) == 1
    });
    assert!(h.is_finished());
    match Pin::new(&mut h).poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(Ok(v)) => assert_eq!(v, 42),
        other => panic!("the result was not published: {other:?}"),
    }
    // The workers live on.
    assert_eq!(pool.spawn_handle(|| 3).join().unwrap(), 3);
    assert_eq!(pool.metrics().total.async_tasks_completed, 2);
    // Completed by the shutdown (cancelled on the dropping thread: nobody wakes it): the
    // drop returns, and the handle says so.
    let polls = pool.metrics().total.async_polls;
    let (_keep, rx) = oneshot::<()>();
    let mut idle = pool.spawn_async(rx);
    assert!(Pin::new(&mut idle)
        .poll(&mut Context::from_waker(&waker))
        .is_pending());
    wait_until("the task waits", || {
        pool.metrics().total.async_polls > polls
    });
    pool.shutdown_and_wait();
    assert_eq!(pw.0.load(Ordering::SeqCst), 2);
    let e = idle.join().unwrap_err();
    assert!(e.is_cancelled(), "{e}");
}
