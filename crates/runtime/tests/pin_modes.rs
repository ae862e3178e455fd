//! The three pinning modes of `ThreadPoolBuilder::pin` as a user sees them on this machine,
//! and what the metrics say of pinning and discovery. (Making pinning *fail* needs the
//! runtime's test seam: those cases are unit tests in `src/construct.rs`, `src/builder.rs`
//! and `src/global.rs`.) Affinities are per thread: each test reads its own pool's workers.

#![cfg(target_os = "linux")]

use zonal_runtime::{Pinning, ThreadPool, ThreadPoolBuilder};

/// Each worker's affinity as the kernel says, read on the worker, by worker index.
fn affinities(pool: &ThreadPool) -> Vec<Vec<u32>> {
    pool.broadcast(|_| zonal_runtime::os::thread_affinity().unwrap())
}

/// The OS CPU of worker `w` (the pool's CPUs are in worker order).
fn os_cpu(pool: &ThreadPool, w: usize) -> u32 {
    pool.topology()
        .machine()
        .cpu(zonal_topology::CpuId::new(w))
        .os_index
}

#[test]
fn the_default_mode_pins_every_worker_here_and_reports_no_fallback() {
    let pool = ThreadPoolBuilder::new().no_policy().build().unwrap();
    assert_eq!(pool.pinning(), Pinning::Pinned);
    assert!(pool.is_topology_discovered());
    assert_eq!(
        (pool.pin_fallback_workers(), pool.unpinned_workers()),
        (0, 0)
    );
    for (w, mask) in affinities(&pool).iter().enumerate() {
        assert_eq!(*mask, [os_cpu(&pool, w)], "worker {w}");
    }
    let m = pool.metrics();
    assert!(m.topology_discovered);
    assert_eq!(
        (m.pin_fallback_workers, m.pin_fallback_reason.as_deref()),
        (0, None)
    );
    assert!(m.total.pinned);
    // Serialised (feature `serde`) beside the other pool-wide fields.
    let json = serde_json::to_value(&m).unwrap();
    assert_eq!(json["topology_discovered"], true);
    assert_eq!(json["pin_fallback_workers"], 0);
    assert!(json["pin_fallback_reason"].is_null());
}

#[test]
fn pin_true_requires_pinning_and_gets_it_here() {
    let pool = ThreadPoolBuilder::new()
        .no_policy()
        .pin(true)
        .build()
        .unwrap();
    assert_eq!(pool.pinning(), Pinning::Pinned);
    assert_eq!(pool.pin_fallback_workers(), 0);
    for (w, mask) in affinities(&pool).iter().enumerate() {
        assert_eq!(*mask, [os_cpu(&pool, w)], "worker {w}");
    }
}

#[test]
fn pin_false_leaves_every_worker_on_the_mask_it_inherited() {
    let inherited = zonal_runtime::os::thread_affinity().unwrap();
    let pool = ThreadPoolBuilder::new()
        .no_policy()
        .pin(false)
        .build()
        .unwrap();
    let n = pool.num_workers();
    assert_eq!(pool.pinning(), Pinning::Unpinned);
    assert_eq!(
        (pool.pin_fallback_workers(), pool.unpinned_workers()),
        (0, n)
    );
    assert!(pool.is_topology_discovered());
    assert!(affinities(&pool).iter().all(|m| *m == inherited));
    let m = pool.metrics();
    assert!(m.workers.iter().all(|w| !w.pinned && !w.displaced));
    assert_eq!(m.pin_fallback_workers, 0);
}

#[test]
fn a_virtual_pool_is_not_a_discovered_topology() {
    let pool = ThreadPoolBuilder::new().preset("s1").build().unwrap();
    assert!(pool.is_virtual() && !pool.is_topology_discovered());
    let m = pool.metrics_handle().snapshot();
    assert!(!m.topology_discovered);
    assert_eq!(m.pin_fallback_workers, 0);
}
