//! Pool memory is linear in the workers (`src/steal/README.md`, "Compact walks"): a
//! virtual pool of [`MAX_THREADS`] (4,096) workers on the paper's S1 (16 nodes, 256 workers
//! each) under conservative-hard holds at most 64 MiB of heap — queues, walks, sleep state,
//! counters, everything the pool and its threads allocate, besides the threads' stacks —
//! and a live policy switch, while both epochs are alive, stays under the same bound.
//!
//! Measured by this binary's own global allocator (live bytes and their high-water mark),
//! not by our own accounting. Before the walks were compact, each worker kept a slot per
//! other worker (about 40 bytes a pair): 640 MiB at this size.

#![cfg(target_os = "linux")]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use zonal_policy::PolicyConfig;
use zonal_runtime::{ThreadPoolBuilder, MAX_THREADS};

/// Counts live heap bytes and their high-water mark.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to the system allocator unchanged; the counters only
// observe sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, forwarded.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(live, Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract, forwarded.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                let live = LIVE.fetch_add(new_size - layout.size(), Ordering::Relaxed) + new_size
                    - layout.size();
                PEAK.fetch_max(live, Ordering::Relaxed);
            } else {
                LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

const BOUND: usize = 64 << 20;

/// The tests of this binary measure one global counter: one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The heap a pool of `n` workers holds once built and every worker has run once.
fn heap_of(n: usize) -> usize {
    let before = LIVE.load(Ordering::Relaxed);
    let pool = ThreadPoolBuilder::new()
        .preset("s1")
        .num_threads(n)
        .policy_config(PolicyConfig::named("conservative-hard").expect("policy"))
        .build()
        .expect("a virtual pool");
    pool.broadcast(|_| ());
    let held = LIVE.load(Ordering::Relaxed).saturating_sub(before);
    pool.shutdown_and_wait();
    held
}

/// The heap grows with the workers, not their square: per worker, a pool of 4,096 holds
/// at most twice what a pool of 256 holds per worker (the walks' runs per other node and
/// the per-node lists grow a little with the pool; a slot per pair of workers would make
/// it sixteen times).
#[test]
fn pool_heap_grows_linearly_with_the_workers() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let sizes = [16usize, 64, 256, 1024, 4096];
    let heap: Vec<usize> = sizes.iter().map(|&n| heap_of(n)).collect();
    for (n, h) in sizes.iter().zip(&heap) {
        eprintln!(
            "{n:>5} workers: {:>8.2} MiB, {:>6} bytes a worker",
            *h as f64 / (1 << 20) as f64,
            h / n
        );
    }
    let per = |i: usize| heap[i] as f64 / sizes[i] as f64;
    assert!(
        per(4) <= 2.0 * per(2),
        "{:.0} bytes a worker at 4096 against {:.0} at 256",
        per(4),
        per(2)
    );
}

#[test]
fn a_pool_of_4096_workers_holds_at_most_64_mib_and_a_switch_does_not_double_it() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let hard = PolicyConfig::named("conservative-hard").expect("policy");
    let soft = PolicyConfig::named("conservative-soft").expect("policy");
    let before = LIVE.load(Ordering::Relaxed);
    let pool = ThreadPoolBuilder::new()
        .preset("s1")
        .num_threads(MAX_THREADS)
        .policy_config(hard)
        .build()
        .expect("a virtual pool of 4096 workers");
    assert_eq!(pool.num_workers(), MAX_THREADS);
    // Every worker searches once (a burst), so that lazily built state is there too.
    pool.broadcast(|_| ());
    let built = LIVE.load(Ordering::Relaxed).saturating_sub(before);
    PEAK.store(LIVE.load(Ordering::Relaxed), Ordering::Relaxed);
    pool.set_policy_config(&soft).expect("switch");
    // Every worker picks the new epoch up at its next search, the old one is freed.
    pool.broadcast(|_| ());
    let switch_peak = PEAK.load(Ordering::Relaxed).saturating_sub(before);
    eprintln!(
        "pool heap: {:.1} MiB built, {:.1} MiB at the peak of a policy switch",
        built as f64 / (1 << 20) as f64,
        switch_peak as f64 / (1 << 20) as f64
    );
    assert!(built <= BOUND, "{built} bytes for {MAX_THREADS} workers");
    assert!(switch_peak <= BOUND, "{switch_peak} bytes during a switch");
    pool.shutdown_and_wait();
}
