//! rayon-core 1.13's pool API items in Zonal, by behaviour: spawn handlers (std threads,
//! scoped threads, `build_scoped`), `use_current_thread`, `join_context`, the scopes'
//! `spawn_broadcast`, the deprecated `Configuration`/`initialize`/`breadth_first`, and
//! rayon's error texts.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;

use zonal_runtime::{ThreadBuilder, ThreadPool, ThreadPoolBuilder};

#[path = "support/exactly_once.rs"]
mod exactly_once;

/// Many tasks, by a scope, spawns and nested joins, each run exactly once.
fn every_task_runs_once(pool: &ThreadPool) {
    exactly_once::scope_and_joins_run_once(pool, 2_000);
    let (tx, rx) = mpsc::channel();
    let spawned = Arc::new(AtomicUsize::new(0));
    for _ in 0..100 {
        let (tx, spawned) = (tx.clone(), Arc::clone(&spawned));
        pool.spawn(move || {
            spawned.fetch_add(1, Ordering::Relaxed);
            tx.send(()).unwrap();
        });
    }
    drop(tx);
    // A thread adopted as worker 0 runs queued work only when it yields to the pool (a
    // pool of one such worker has no other thread to run the spawns).
    let mut got = 0;
    while got < 100 {
        match rx.try_recv() {
            Ok(()) => got += 1,
            Err(mpsc::TryRecvError::Empty) => {
                if zonal_runtime::yield_now() != Some(zonal_runtime::Yield::Executed) {
                    std::thread::yield_now();
                }
            }
            Err(mpsc::TryRecvError::Disconnected) => panic!("a spawn was dropped unrun"),
        }
    }
    assert_eq!(spawned.load(Ordering::Relaxed), 100);
}

#[test]
fn a_spawn_handler_starts_every_worker_and_shutdown_waits_for_its_threads() {
    let handles: Mutex<Vec<JoinHandle<()>>> = Mutex::new(Vec::new());
    let seen = Mutex::new(Vec::new());
    let exited = Arc::new(AtomicUsize::new(0));
    let e = Arc::clone(&exited);
    let pool = ThreadPoolBuilder::new()
        .num_threads(3)
        .thread_name(|i| format!("custom-{i}"))
        .stack_size(1 << 20)
        .exit_handler(move |_| {
            e.fetch_add(1, Ordering::SeqCst);
        })
        .spawn_handler(|thread: ThreadBuilder| {
            seen.lock().unwrap().push((
                thread.index(),
                thread.name().map(str::to_owned),
                thread.stack_size(),
            ));
            let h = std::thread::Builder::new().spawn(move || thread.run())?;
            handles.lock().unwrap().push(h);
            Ok(())
        })
        .build()
        .unwrap();
    assert_eq!(pool.num_workers(), 3);
    assert_eq!(pool.current_num_threads(), 3);
    let seen = seen.into_inner().unwrap();
    assert_eq!(
        seen,
        (0..3)
            .map(|i| (i, Some(format!("custom-{i}")), Some(1 << 20)))
            .collect::<Vec<_>>()
    );
    every_task_runs_once(&pool);
    let mut idx = pool.broadcast(|_| pool.current_thread_index().unwrap());
    idx.sort_unstable();
    assert_eq!(idx, [0, 1, 2]);
    // Without a JoinHandle of its own, the pool still waits for every worker's exit.
    pool.shutdown_and_wait();
    assert_eq!(exited.load(Ordering::SeqCst), 3);
    for h in handles.into_inner().unwrap() {
        assert!(h.is_finished() || h.join().is_ok());
    }
}

#[test]
fn a_spawn_handler_with_std_scoped_threads_may_borrow() {
    let local = String::from("from the caller's stack");
    let count = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        let pool = ThreadPoolBuilder::new()
            .num_threads(2)
            .spawn_handler(|thread| {
                let (local, count) = (&local, &count);
                std::thread::Builder::new().spawn_scoped(scope, move || {
                    assert_eq!(local, "from the caller's stack");
                    count.fetch_add(1, Ordering::SeqCst);
                    thread.run();
                })?;
                Ok(())
            })
            .build()
            .unwrap();
        assert_eq!(pool.install(|| 2 + 2), 4);
        every_task_runs_once(&pool);
        // Dropped here; `std::thread::scope` then waits for the workers, which exit.
    });
    assert_eq!(count.into_inner(), 2);
}

#[test]
fn build_scoped_runs_the_wrapper_on_every_worker_and_returns_the_result() {
    let wrapped = AtomicUsize::new(0);
    let r = ThreadPoolBuilder::new()
        .num_threads(2)
        .build_scoped(
            |thread| {
                wrapped.fetch_add(1, Ordering::SeqCst);
                thread.run();
            },
            |pool| {
                every_task_runs_once(pool);
                pool.install(|| 7)
            },
        )
        .unwrap();
    assert_eq!(r, 7);
    assert_eq!(wrapped.into_inner(), 2);
}

#[test]
fn a_spawn_handler_error_fails_the_build() {
    let mut calls = 0;
    let e = ThreadPoolBuilder::new()
        .num_threads(3)
        .spawn_handler(|thread| {
            calls += 1;
            if thread.index() == 1 {
                return Err(std::io::Error::other("no thread for you"));
            }
            std::thread::spawn(move || thread.run());
            Ok(())
        })
        .build()
        .unwrap_err();
    assert_eq!(calls, 2, "no worker is started after the failure");
    assert_eq!(e.worker(), Some(1));
    assert!(e.to_string().contains("no thread for you"), "{e}");
}

#[test]
fn a_thread_builder_dropped_without_run_fails_the_build() {
    let e = ThreadPoolBuilder::new()
        .num_threads(2)
        .spawn_handler(|thread| {
            if thread.index() == 0 {
                std::thread::spawn(move || thread.run());
            }
            Ok(())
        })
        .build()
        .unwrap_err();
    assert_eq!(e.worker(), Some(1));
    assert!(e.to_string().contains("ThreadBuilder"), "{e}");
}

#[test]
fn use_current_thread_makes_the_caller_worker_0() {
    let spawned = Mutex::new(Vec::new());
    let pool = ThreadPoolBuilder::new()
        .num_threads(2)
        .use_current_thread()
        .spawn_handler(|thread| {
            spawned.lock().unwrap().push(thread.index());
            std::thread::spawn(move || thread.run());
            Ok(())
        })
        .build()
        .unwrap();
    assert_eq!(zonal_runtime::current_thread_index(), Some(0));
    assert_eq!(pool.current_thread_index(), Some(0));
    assert_eq!(*spawned.lock().unwrap(), [1], "one fewer thread");
    assert_eq!(zonal_runtime::current_num_threads(), 2);

    // Already a worker: a second such pool is refused, with rayon's message.
    let e = ThreadPoolBuilder::new()
        .num_threads(2)
        .use_current_thread()
        .build()
        .unwrap_err();
    assert!(e.is_current_thread_already_in_pool());
    assert_eq!(
        e.to_string(),
        "The current thread is already part of another thread pool."
    );
    assert!(std::error::Error::source(&e).is_none());

    // A spawn runs on the other worker while this thread blocks outside the pool.
    let (tx, rx) = mpsc::channel();
    pool.spawn(move || tx.send(zonal_runtime::current_thread_index()).unwrap());
    assert_eq!(rx.recv().unwrap(), Some(1));

    // It takes part when it waits in the pool; every task runs once.
    every_task_runs_once(&pool);
    let mut b = pool.broadcast(|ctx| ctx.index());
    b.sort_unstable();
    assert_eq!(b, [0, 1]);
    assert_eq!(pool.install(zonal_runtime::current_thread_index), Some(0));

    // Worker 0 may wait for the pool's end: pending spawns (one pinned to it) run first.
    let ran = Arc::new(AtomicUsize::new(0));
    for w in [0, 1, 0, 1] {
        let ran = Arc::clone(&ran);
        pool.spawn_pinned(w, move || {
            ran.fetch_add(1, Ordering::SeqCst);
        });
    }
    pool.shutdown_and_wait();
    assert_eq!(ran.load(Ordering::SeqCst), 4);
    // As in rayon, the thread stays worker 0.
    assert_eq!(zonal_runtime::current_thread_index(), Some(0));
}

#[test]
fn use_current_thread_from_a_pools_worker_is_refused() {
    let pool = ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let e = pool
        .install(|| {
            ThreadPoolBuilder::new()
                .num_threads(1)
                .use_current_thread()
                .build()
        })
        .unwrap_err();
    assert!(e.is_current_thread_already_in_pool(), "{e}");
}

#[test]
fn use_current_thread_with_one_thread_spawns_none() {
    let pool = ThreadPoolBuilder::new()
        .num_threads(1)
        .use_current_thread()
        .spawn_handler(|_| panic!("no thread to spawn"))
        .build()
        .unwrap();
    assert_eq!(pool.join(|| 1, || 2), (1, 2));
    every_task_runs_once(&pool);
    drop(pool);
}

#[test]
fn join_context_says_whether_b_was_stolen() {
    let pool = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    pool.install(|| {
        let caller = std::thread::current().id();
        let (a, (b_migrated, b_thread)) = zonal_runtime::join_context(
            |ctx| ctx.migrated(),
            |ctx| (ctx.migrated(), std::thread::current().id()),
        );
        assert!(!a);
        assert_eq!(b_migrated, b_thread != caller);
    });
    // Make B be stolen: A waits until B has run elsewhere.
    let (b_migrated, b_thread, caller) = pool.install(|| {
        let done = std::sync::atomic::AtomicBool::new(false);
        let caller = std::thread::current().id();
        let (_, b) = zonal_runtime::join_context(
            |_| {
                while !done.load(Ordering::Acquire) {
                    std::thread::yield_now();
                }
            },
            |ctx| {
                done.store(true, Ordering::Release);
                (ctx.migrated(), std::thread::current().id())
            },
        );
        (b.0, b.1, caller)
    });
    assert!(b_migrated);
    assert_ne!(b_thread, caller);
}

#[test]
fn scope_spawn_broadcast_runs_once_per_worker_and_the_scope_waits() {
    let pool = ThreadPoolBuilder::new().num_threads(3).build().unwrap();
    let seen = Mutex::new(Vec::new());
    pool.scope(|s| {
        s.spawn_broadcast(|_, ctx| {
            assert_eq!(ctx.num_threads(), 3);
            assert_eq!(zonal_runtime::current_thread_index(), Some(ctx.index()));
            seen.lock().unwrap().push(ctx.index());
        });
    });
    let mut v = seen.into_inner().unwrap();
    v.sort_unstable();
    assert_eq!(v, [0, 1, 2]);

    let seen = Mutex::new(Vec::new());
    pool.scope_fifo(|s| {
        s.spawn_broadcast(|s, ctx| {
            let (seen, index) = (&seen, ctx.index());
            s.spawn_fifo(move |_| seen.lock().unwrap().push(index));
        });
    });
    let mut v = seen.into_inner().unwrap();
    v.sort_unstable();
    assert_eq!(v, [0, 1, 2]);
}

#[test]
fn rayon_error_texts() {
    // This test binary's global pool is built here only.
    ThreadPoolBuilder::new()
        .num_threads(2)
        .build_global()
        .unwrap();
    let e = ThreadPoolBuilder::new().build_global().unwrap_err();
    assert!(e.is_global_pool_already_initialized());
    assert!(std::error::Error::source(&e).is_none());
    assert_eq!(
        e.to_string(),
        "The global thread pool has already been initialized."
    );
    #[allow(deprecated)]
    let e =
        zonal_runtime::initialize(zonal_runtime::Configuration::new().num_threads(1)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "The global thread pool has already been initialized."
    );
    // join_context from outside every pool: A is injected into the global pool, so
    // migrated.
    let (a, _) = zonal_runtime::join_context(|ctx| ctx.migrated(), |_| ());
    assert!(a);
}

#[test]
#[allow(deprecated)]
fn deprecated_configuration_and_breadth_first() {
    let pool = ThreadPool::new(
        zonal_runtime::Configuration::new()
            .num_threads(1)
            .thread_name(|i| format!("cfg-{i}"))
            .breadth_first(),
    )
    .unwrap();
    assert_eq!(pool.num_workers(), 1);
    // breadth_first: one worker's spawns run oldest first.
    let order = Arc::new(Mutex::new(Vec::new()));
    let (tx, rx) = mpsc::channel();
    let o = Arc::clone(&order);
    pool.spawn(move || {
        for i in 0..5 {
            let (o, tx) = (Arc::clone(&o), tx.clone());
            zonal_runtime::spawn(move || {
                o.lock().unwrap().push(i);
                tx.send(()).unwrap();
            });
        }
    });
    for _ in 0..5 {
        rx.recv().unwrap();
    }
    assert_eq!(*order.lock().unwrap(), [0, 1, 2, 3, 4]);
    pool.shutdown_and_wait();
}
