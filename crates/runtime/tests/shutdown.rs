//! Shutting a pool down (`src/pool.rs`): dropping a [`ThreadPool`] does not wait, as
//! rayon's — the workers finish the pending tasks and exit on their own —, and
//! [`ThreadPool::shutdown_and_wait`] waits for all of that: every pending task ran exactly
//! once, every async task finished (or was cancelled), every exit handler ran.
//!
//! Waits are bounded (a test fails after 20 s rather than hang); nothing asserts on time.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use zonal_runtime::{ThreadPool, ThreadPoolBuilder};
use zonal_topology::NodeId;

const BOUND: Duration = Duration::from_secs(20);

/// Four workers on S1's nodes 0 and 1, counting their starts and exits.
fn pool(starts: &Arc<AtomicUsize>, exits: &Arc<AtomicUsize>) -> ThreadPool {
    let (s, x) = (Arc::clone(starts), Arc::clone(exits));
    ThreadPoolBuilder::new()
        .preset("s1")
        .worker_cpus([0, 1, 2, 3])
        .start_handler(move |_| {
            s.fetch_add(1, Ordering::SeqCst);
        })
        .exit_handler(move |_| {
            x.fetch_add(1, Ordering::SeqCst);
        })
        .build()
        .expect("pool on s1")
}

fn counters() -> (Arc<AtomicUsize>, Arc<AtomicUsize>) {
    (Arc::default(), Arc::default())
}

/// Waits (bounded) until `done`.
fn wait_until(what: &str, done: impl Fn() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < BOUND, "{what}: not after 20 s");
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn dropping_a_pool_returns_while_a_task_still_waits_for_the_dropper() {
    let (starts, exits) = counters();
    let pool = pool(&starts, &exits);
    let (tx, rx) = mpsc::channel::<()>();
    let (done_tx, done_rx) = mpsc::channel();
    pool.spawn(move || {
        rx.recv().unwrap();
        done_tx.send(zonal_runtime::current_worker_index()).unwrap();
    });
    // Dropped on another thread, so that a drop that waits fails the test instead of
    // hanging it.
    let (dropped_tx, dropped_rx) = mpsc::channel();
    std::thread::spawn(move || {
        drop(pool);
        dropped_tx.send(()).unwrap();
    });
    let dropped = dropped_rx.recv_timeout(BOUND);
    tx.send(()).unwrap(); // rayon's scenario: the task needs the dropper to go on
    assert!(dropped.is_ok(), "the drop waited for a pending task");
    // The task still runs after the drop, on a worker, and then the workers exit.
    let w = done_rx.recv_timeout(BOUND).expect("the pending task ran");
    assert!(w.is_some());
    wait_until("every worker exits", || exits.load(Ordering::SeqCst) == 4);
    assert_eq!(starts.load(Ordering::SeqCst), 4);
}

#[test]
fn shutdown_and_wait_returns_once_every_pending_task_ran_exactly_once() {
    const TASKS: usize = 2_000;
    let (starts, exits) = counters();
    let pool = pool(&starts, &exits);
    let runs: Arc<Vec<AtomicU32>> = Arc::new((0..2 * TASKS).map(|_| AtomicU32::new(0)).collect());
    let slow = |runs: &Arc<Vec<AtomicU32>>, i: usize| {
        let runs = Arc::clone(runs);
        move || {
            if i % 100 == 0 {
                std::thread::sleep(Duration::from_millis(1));
            }
            runs[i].fetch_add(1, Ordering::SeqCst);
        }
    };
    for i in 0..TASKS {
        let run = slow(&runs, i);
        // Every kind of `'static` spawn, half of them spawning one more task when they run
        // (after the shutdown began, for some).
        let nested = slow(&runs, TASKS + i);
        let task = move || {
            run();
            if i % 2 == 0 {
                zonal_runtime::spawn(nested);
            } else {
                nested();
            }
        };
        match i % 4 {
            0 => pool.spawn(task),
            1 => pool.spawn_on(NodeId((i / 4 % 2) as u32), task),
            2 => pool.spawn_pinned(i / 4 % 4, task),
            _ => pool.spawn_fifo(task),
        }
    }
    let handles: Vec<_> = (0..100u32)
        .map(|i| {
            pool.spawn_async(async move {
                zonal_runtime::task::yield_now().await;
                i
            })
        })
        .collect();
    pool.shutdown_and_wait();
    // No wait here: everything happened before the call returned.
    let wrong: Vec<(usize, u32)> = runs
        .iter()
        .map(|r| r.load(Ordering::SeqCst))
        .enumerate()
        .filter(|&(_, n)| n != 1)
        .take(10)
        .collect();
    assert!(wrong.is_empty(), "tasks not run exactly once: {wrong:?}");
    assert_eq!(exits.load(Ordering::SeqCst), 4, "every exit handler ran");
    assert_eq!(starts.load(Ordering::SeqCst), 4);
    // Each async task finished: with its value, or cancelled by the shutdown.
    for (i, h) in handles.into_iter().enumerate() {
        assert!(h.is_finished(), "async task {i}");
        match h.join() {
            Ok(v) => assert_eq!(v as usize, i),
            Err(e) => assert!(e.is_cancelled(), "{e}"),
        }
    }
}

#[test]
fn shutdown_and_wait_cancels_the_async_tasks_nobody_wakes() {
    let (starts, exits) = counters();
    let pool = pool(&starts, &exits);
    let h = pool.spawn_async(std::future::pending::<()>());
    wait_until("the task waits", || pool.metrics().total.async_polls == 1);
    pool.shutdown_and_wait();
    assert!(h.join().unwrap_err().is_cancelled());
    assert_eq!(exits.load(Ordering::SeqCst), 4);
}

#[test]
fn a_pool_dropped_on_one_of_its_own_workers_finishes_its_tasks_and_stops() {
    let (starts, exits) = counters();
    let pool = Arc::new(pool(&starts, &exits));
    let (tx, rx) = mpsc::channel();
    let p = Arc::clone(&pool);
    pool.spawn(move || {
        // The last reference to the pool is dropped here, on its worker.
        let start = Instant::now();
        while Arc::strong_count(&p) > 1 && start.elapsed() < BOUND {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(Arc::strong_count(&p), 1);
        drop(p);
        // The pool terminates, yet what is pending still runs, spawns included.
        let tx2 = tx.clone();
        zonal_runtime::spawn(move || tx2.send("spawned after the drop").unwrap());
        tx.send("dropped").unwrap();
    });
    drop(pool);
    let mut got = [
        rx.recv_timeout(BOUND).unwrap(),
        rx.recv_timeout(BOUND).unwrap(),
    ];
    got.sort_unstable();
    assert_eq!(got, ["dropped", "spawned after the drop"]);
    wait_until("every worker exits", || exits.load(Ordering::SeqCst) == 4);
}

#[test]
fn shutdown_and_wait_on_one_of_its_own_workers_panics_and_the_pool_still_stops() {
    let (starts, exits) = counters();
    let pool = pool(&starts, &exits);
    let slot = Arc::new(std::sync::Mutex::new(None::<ThreadPool>));
    let (tx, rx) = mpsc::channel();
    let s = Arc::clone(&slot);
    let (go_tx, go_rx) = mpsc::channel::<()>();
    pool.spawn(move || {
        go_rx.recv().unwrap();
        let p = s.lock().unwrap().take().expect("the pool");
        let r = catch_unwind(AssertUnwindSafe(move || p.shutdown_and_wait()));
        tx.send(r.map_err(|e| {
            e.downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| e.downcast_ref::<String>().cloned())
        }))
        .unwrap();
    });
    *slot.lock().unwrap() = Some(pool);
    go_tx.send(()).unwrap();
    let r = rx.recv_timeout(BOUND).expect("the task ran");
    let msg = r
        .expect_err("a worker cannot wait for its own pool")
        .unwrap();
    assert!(msg.contains("own workers"), "{msg}");
    // The pool was dropped as it unwound: it stops.
    wait_until("every worker exits", || exits.load(Ordering::SeqCst) == 4);
}
