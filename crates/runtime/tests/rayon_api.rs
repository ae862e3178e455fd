//! rayon's pool API on explicit pools: FIFO spawns and scopes, broadcast, yield_now,
//! in_place_scope, panics, and exactly-once under stress. (Virtual pools: no process-wide
//! state, no global pool.)

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};

use zonal_runtime::{ThreadPool, ThreadPoolBuilder, Yield};

fn one_worker() -> ThreadPool {
    ThreadPoolBuilder::new()
        .preset("s1")
        .num_threads(1)
        .build()
        .unwrap()
}

fn s1() -> ThreadPool {
    ThreadPoolBuilder::new()
        .preset("s1")
        .no_policy()
        .build()
        .unwrap()
}

#[test]
fn fifo_spawns_run_in_spawn_order_and_lifo_spawns_in_reverse() {
    let pool = one_worker();
    let fifo = Mutex::new(Vec::new());
    pool.scope_fifo(|s| {
        for i in 0..20 {
            let fifo = &fifo;
            s.spawn_fifo(move |_| fifo.lock().unwrap().push(i));
        }
    });
    assert_eq!(fifo.into_inner().unwrap(), (0..20).collect::<Vec<_>>());

    let lifo = Mutex::new(Vec::new());
    pool.scope(|s| {
        for i in 0..20 {
            let lifo = &lifo;
            s.spawn(move |_| lifo.lock().unwrap().push(i));
        }
    });
    assert_eq!(
        lifo.into_inner().unwrap(),
        (0..20).rev().collect::<Vec<_>>()
    );
}

#[test]
fn static_fifo_spawns_from_a_worker_run_in_spawn_order() {
    let pool = one_worker();
    let order = Arc::new(Mutex::new(Vec::new()));
    let (tx, rx) = mpsc::channel();
    let (o, t) = (Arc::clone(&order), tx.clone());
    pool.spawn(move || {
        for i in 0..20 {
            let (o, t) = (Arc::clone(&o), t.clone());
            zonal_runtime::spawn_fifo(move || {
                o.lock().unwrap().push(i);
                t.send(()).unwrap();
            });
        }
    });
    for _ in 0..20 {
        rx.recv().unwrap();
    }
    assert_eq!(*order.lock().unwrap(), (0..20).collect::<Vec<_>>());
    // From outside the pool: a node's injector, FIFO too.
    order.lock().unwrap().clear();
    for i in 0..20 {
        let (o, t) = (Arc::clone(&order), tx.clone());
        pool.spawn_fifo(move || {
            o.lock().unwrap().push(i);
            t.send(()).unwrap();
        });
    }
    for _ in 0..20 {
        rx.recv().unwrap();
    }
    assert_eq!(*order.lock().unwrap(), (0..20).collect::<Vec<_>>());
}

#[test]
fn nested_fifo_scopes_keep_their_own_order() {
    let pool = one_worker();
    let log = Mutex::new(Vec::new());
    pool.scope_fifo(|outer| {
        for i in 0..3 {
            let log = &log;
            outer.spawn_fifo(move |_| {
                zonal_runtime::scope_fifo(|inner| {
                    for j in 0..3 {
                        inner.spawn_fifo(move |_| log.lock().unwrap().push((i, j)));
                    }
                });
            });
        }
    });
    let log = log.into_inner().unwrap();
    let want: Vec<_> = (0..3).flat_map(|i| (0..3).map(move |j| (i, j))).collect();
    assert_eq!(log, want);
}

#[test]
fn broadcast_runs_once_on_every_worker_with_each_index_once() {
    let pool = s1();
    let runs: Vec<AtomicUsize> = (0..32).map(|_| AtomicUsize::new(0)).collect();
    let out = pool.broadcast(|ctx| {
        assert_eq!(ctx.num_threads(), 32);
        assert_eq!(zonal_runtime::current_thread_index(), Some(ctx.index()));
        runs[ctx.index()].fetch_add(1, Ordering::Relaxed);
        ctx.index() * 2
    });
    assert_eq!(out, (0..32).map(|i| i * 2).collect::<Vec<_>>());
    assert!(runs.iter().all(|r| r.load(Ordering::Relaxed) == 1));
    // From inside the pool, and nested in a scope.
    let inner = pool.install(|| zonal_runtime::broadcast(|ctx| ctx.index()));
    assert_eq!(inner, (0..32).collect::<Vec<_>>());
}

#[test]
fn yield_now_runs_a_pending_task_or_reports_idle() {
    let pool = one_worker();
    assert_eq!(pool.yield_now(), None);
    assert_eq!(zonal_runtime::yield_now(), None);
    let (ran, then) = pool.install(|| {
        let ran = Arc::new(AtomicUsize::new(0));
        let r = Arc::clone(&ran);
        zonal_runtime::spawn(move || {
            r.fetch_add(1, Ordering::Relaxed);
        });
        let first = zonal_runtime::yield_now();
        let seen = ran.load(Ordering::Relaxed);
        (first.map(|y| (y, seen)), pool.yield_now())
    });
    assert_eq!(ran, Some((Yield::Executed, 1)));
    assert_eq!(then, Some(Yield::Idle));
}

#[test]
fn in_place_scope_runs_here_borrows_and_waits() {
    let pool = s1();
    let caller = std::thread::current().id();
    let mut data = vec![0u64; 1000];
    let not_send = std::rc::Rc::new(5); // the body need not be Send
    pool.in_place_scope(|s| {
        assert_eq!(std::thread::current().id(), caller);
        assert_eq!(*not_send, 5);
        for (i, chunk) in data.chunks_mut(10).enumerate() {
            s.spawn(move |_| {
                assert!(zonal_runtime::current_thread_index().is_some());
                chunk.iter_mut().for_each(|x| *x = i as u64);
            });
        }
    });
    assert!(data
        .chunks(10)
        .enumerate()
        .all(|(i, c)| c.iter().all(|&x| x == i as u64)));
    // From a worker of another pool: the body runs on that worker, spawns go to `pool`.
    let other = one_worker();
    let (here, spawned) = other.install(|| {
        let here = zonal_runtime::current_thread_index();
        let mut spawned = Vec::new();
        let pool = &pool;
        pool.in_place_scope(|s| {
            let v = &mut spawned;
            s.spawn(move |_| v.push(pool.current_worker_index()));
        });
        (here, spawned)
    });
    assert_eq!(here, Some(0));
    assert!(spawned[0].is_some());
}

fn panic_message(r: std::thread::Result<()>) -> String {
    let p = r.expect_err("a panic");
    p.downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}

#[test]
fn panics_propagate_from_scope_fifo_in_place_scope_and_broadcast() {
    let pool = s1();
    let done = AtomicUsize::new(0);
    let r = catch_unwind(AssertUnwindSafe(|| {
        pool.scope_fifo(|s| {
            for i in 0..10 {
                let done = &done;
                s.spawn_fifo(move |_| {
                    done.fetch_add(1, Ordering::Relaxed);
                    assert!(i != 3, "fifo boom");
                });
            }
        });
    }));
    assert!(panic_message(r).contains("fifo boom"));
    assert_eq!(
        done.load(Ordering::Relaxed),
        10,
        "every task ran before the panic resumed"
    );

    let r = catch_unwind(AssertUnwindSafe(|| {
        pool.in_place_scope(|s| {
            s.spawn(|_| panic!("in place boom"));
        });
    }));
    assert!(panic_message(r).contains("in place boom"));

    let r = catch_unwind(AssertUnwindSafe(|| {
        pool.broadcast(|ctx| assert!(ctx.index() != 7, "broadcast boom"));
    }));
    assert!(panic_message(r).contains("broadcast boom"));

    // The pool still works.
    assert_eq!(pool.broadcast(|ctx| ctx.index()).len(), 32);
}

#[test]
fn many_fifo_spawns_from_many_threads_each_run_exactly_once() {
    let pool = Arc::new(s1());
    const PER: usize = 2_000;
    const THREADS: usize = 4;
    let runs: Arc<Vec<AtomicU8>> =
        Arc::new((0..PER * THREADS * 2).map(|_| AtomicU8::new(0)).collect());
    let (tx, rx) = mpsc::channel();
    let outside: Vec<_> = (0..THREADS)
        .map(|t| {
            let (pool, runs, tx) = (Arc::clone(&pool), Arc::clone(&runs), tx.clone());
            std::thread::spawn(move || {
                for i in 0..PER {
                    let (runs, tx) = (Arc::clone(&runs), tx.clone());
                    pool.spawn_fifo(move || {
                        runs[t * PER + i].fetch_add(1, Ordering::Relaxed);
                        tx.send(()).unwrap();
                    });
                }
            })
        })
        .collect();
    // And from workers: each of THREADS tasks spawns PER FIFO tasks.
    for t in 0..THREADS {
        let (runs, tx) = (Arc::clone(&runs), tx.clone());
        pool.spawn(move || {
            for i in 0..PER {
                let (runs, tx) = (Arc::clone(&runs), tx.clone());
                zonal_runtime::spawn_fifo(move || {
                    runs[(THREADS + t) * PER + i].fetch_add(1, Ordering::Relaxed);
                    tx.send(()).unwrap();
                });
            }
        });
    }
    for h in outside {
        h.join().unwrap();
    }
    for _ in 0..PER * THREADS * 2 {
        rx.recv().unwrap();
    }
    assert!(runs.iter().all(|r| r.load(Ordering::Relaxed) == 1));
    // Scoped FIFO spawns from many workers at once.
    let counts: Vec<AtomicU8> = (0..10_000).map(|_| AtomicU8::new(0)).collect();
    pool.scope_fifo(|s| {
        for part in counts.chunks(500) {
            s.spawn_fifo(move |s| {
                for c in part {
                    s.spawn_fifo(move |_| {
                        c.fetch_add(1, Ordering::Relaxed);
                    });
                }
            });
        }
    });
    assert!(counts.iter().all(|c| c.load(Ordering::Relaxed) == 1));
}

#[test]
fn spawn_broadcast_runs_once_on_every_worker_without_waiting() {
    let pool = s1();
    let n = pool.num_workers();
    let counts: Arc<Vec<AtomicUsize>> = Arc::new((0..n).map(|_| AtomicUsize::new(0)).collect());
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    let c = Arc::clone(&counts);
    pool.spawn_broadcast(move |ctx| {
        assert_eq!(ctx.num_threads(), n);
        assert_eq!(zonal_runtime::current_thread_index(), Some(ctx.index()));
        c[ctx.index()].fetch_add(1, Ordering::SeqCst);
        tx.lock().unwrap().send(ctx.index()).unwrap();
    });
    let mut seen: Vec<usize> = rx.iter().take(n).collect();
    seen.sort_unstable();
    assert_eq!(seen, (0..n).collect::<Vec<_>>());
    pool.shutdown_and_wait();
    assert!(counts.iter().all(|c| c.load(Ordering::SeqCst) == 1));
}

#[test]
fn spawn_broadcast_panics_go_to_the_panic_handler() {
    let caught = Arc::new(AtomicUsize::new(0));
    let c = Arc::clone(&caught);
    let pool = ThreadPoolBuilder::new()
        .preset("s1")
        .num_threads(3)
        .panic_handler(move |_| {
            c.fetch_add(1, Ordering::SeqCst);
        })
        .build()
        .unwrap();
    pool.spawn_broadcast(|ctx| {
        if ctx.index() == 1 {
            panic!("worker 1");
        }
    });
    pool.shutdown_and_wait();
    assert_eq!(caught.load(Ordering::SeqCst), 1);
}

#[test]
fn yield_local_runs_only_this_workers_own_tasks() {
    let pool = ThreadPoolBuilder::new()
        .preset("s1")
        .num_threads(2)
        .no_policy()
        .build()
        .unwrap();
    assert_eq!(pool.yield_local(), None);
    assert_eq!(pool.current_thread_has_pending_tasks(), None);
    // A task pinned to the other worker is in its inbox: not ours to run.
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let (done_tx, done_rx) = mpsc::channel();
    let r = pool.install(|| {
        let me = zonal_runtime::current_thread_index().unwrap();
        let other = 1 - me;
        // Keep the other worker busy so that its inbox task waits.
        pool.spawn_pinned(other, move || {
            go_rx.recv().unwrap();
        });
        let done = done_tx.clone();
        pool.spawn_pinned(other, move || done.send("other").unwrap());
        let before = (
            zonal_runtime::current_thread_has_pending_tasks(),
            zonal_runtime::yield_local(),
        );
        // One of our own: found and run by yield_local.
        zonal_runtime::spawn(move || done_tx.send("ours").unwrap());
        let pending = zonal_runtime::current_thread_has_pending_tasks();
        let ran = zonal_runtime::yield_local();
        (before, pending, ran)
    });
    assert_eq!(r.0, (Some(false), Some(Yield::Idle)));
    assert_eq!(r.1, Some(true));
    assert_eq!(r.2, Some(Yield::Executed));
    assert_eq!(done_rx.recv().unwrap(), "ours");
    go_tx.send(()).unwrap();
    assert_eq!(done_rx.recv().unwrap(), "other");
}

#[test]
fn in_place_scope_fifo_runs_here_in_fifo_order_and_waits() {
    let pool = one_worker();
    let caller = std::thread::current().id();
    let order = Mutex::new(Vec::new());
    let here = pool.in_place_scope_fifo(|s| {
        for i in 0..10 {
            let order = &order;
            s.spawn_fifo(move |_| order.lock().unwrap().push(i));
        }
        std::thread::current().id()
    });
    assert_eq!(here, caller);
    assert_eq!(order.into_inner().unwrap().len(), 10);
    // From a worker: FIFO among that worker's spawns.
    let order = pool.install(|| {
        let order = Mutex::new(Vec::new());
        zonal_runtime::in_place_scope_fifo(|s| {
            for i in 0..10 {
                let order = &order;
                s.spawn_fifo(move |_| order.lock().unwrap().push(i));
            }
        });
        order.into_inner().unwrap()
    });
    assert_eq!(order, (0..10).collect::<Vec<_>>());
}
