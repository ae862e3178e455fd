//! The lazily built global pool: the free functions from plain threads run on it. (Its own
//! test binary: the global pool is process-wide.)

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

use zonal_runtime::{current_num_threads, current_thread_index, ThreadPoolBuilder};

#[test]
fn join_scope_spawn_from_a_plain_thread_run_on_the_global_pool() {
    assert_eq!(current_thread_index(), None);
    let (a, b) = zonal_runtime::join(current_thread_index, current_thread_index);
    assert!(a.is_some() && b.is_some());

    let mut seen = vec![None; 16];
    zonal_runtime::scope(|s| {
        for x in &mut seen {
            s.spawn(move |_| *x = current_thread_index());
        }
    });
    assert!(seen.iter().all(Option::is_some), "{seen:?}");

    let (tx, rx) = mpsc::channel();
    zonal_runtime::spawn(move || tx.send(current_thread_index()).unwrap());
    assert!(rx.recv().unwrap().is_some());

    let (tx, rx) = mpsc::channel();
    zonal_runtime::spawn_fifo(move || tx.send(current_thread_index()).unwrap());
    assert!(rx.recv().unwrap().is_some());

    let mut v = vec![0usize; 8];
    zonal_runtime::scope_fifo(|s| {
        for (i, x) in v.iter_mut().enumerate() {
            s.spawn_fifo(move |_| *x = i + usize::from(current_thread_index().is_some()));
        }
    });
    assert_eq!(v, (1..=8).collect::<Vec<_>>());
}

#[test]
fn the_global_pool_is_one_pool_sized_like_a_default_pool() {
    let n = current_num_threads();
    assert!(n >= 1);
    assert_eq!(zonal_runtime::join(current_num_threads, || ()).0, n);
    let counts = zonal_runtime::broadcast(|ctx| (ctx.index(), ctx.num_threads()));
    assert_eq!(counts.len(), n);
    for (i, &(idx, k)) in counts.iter().enumerate() {
        assert_eq!((idx, k), (i, n));
    }
    let parts = zonal_runtime::current_node_partition(0..1000);
    assert_eq!(parts.iter().map(|(_, r)| r.len()).sum::<usize>(), 1000);
}

#[test]
fn build_global_after_the_global_pool_exists_is_a_typed_error() {
    let _ = current_num_threads(); // builds it if no other test has
    let err = ThreadPoolBuilder::new()
        .num_threads(1)
        .build_global()
        .unwrap_err();
    assert!(err.is_global_pool_already_initialized(), "{err}");
    assert!(!err.is_input_error());
}

#[test]
fn in_place_scope_runs_its_body_here_and_waits_for_its_spawns() {
    let caller = std::thread::current().id();
    let total = AtomicUsize::new(0);
    let data: Vec<usize> = (1..=100).collect();
    let body_thread = zonal_runtime::in_place_scope(|s| {
        for chunk in data.chunks(10) {
            let total = &total;
            s.spawn(move |_| {
                assert!(current_thread_index().is_some());
                total.fetch_add(chunk.iter().sum::<usize>(), Ordering::Relaxed);
            });
        }
        std::thread::current().id()
    });
    assert_eq!(body_thread, caller);
    assert_eq!(total.into_inner(), 5050);
}

#[test]
fn yield_now_off_a_worker_is_none() {
    assert_eq!(zonal_runtime::yield_now(), None);
}
