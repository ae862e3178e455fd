//! Pinning changes process-wide state (thread affinities): its own binary, one test.
//! DO NOT CREATE ANY OTHER #[test] IN THIS FILE.

use zonal_runtime::{Pinning, ThreadPoolBuilder, VirtualPinning};

#[test]
fn pinning() {
    let allowed = zonal_topology::allowed_cpus().expect("hwloc");
    // 1. Default pool on this machine: one pinned worker per allowed CPU, each on its CPU.
    let pool = ThreadPoolBuilder::new()
        .no_policy()
        .build()
        .expect("pinned pool");
    assert_eq!(pool.pinning(), Pinning::Pinned);
    assert!(!pool.is_virtual());
    assert_eq!(pool.num_workers(), allowed.len());
    let (tx, rx) = std::sync::mpsc::channel();
    for w in 0..pool.num_workers() {
        let tx = tx.clone();
        pool.spawn_pinned(w, move || {
            // SAFETY: sched_getcpu has no preconditions.
            let cpu = unsafe { libc::sched_getcpu() };
            tx.send((w, cpu)).unwrap();
        });
    }
    for _ in 0..pool.num_workers() {
        let (w, cpu) = rx.recv().unwrap();
        let os = pool
            .topology()
            .machine()
            .cpu(zonal_topology::CpuId::new(w))
            .os_index;
        assert_eq!(
            cpu as u32, os,
            "worker {w} runs on CPU {cpu}, not its CPU {os}"
        );
    }
    drop(pool);

    // 2. A CPU outside the affinity mask is a typed error naming it.
    let e = ThreadPoolBuilder::new()
        .no_policy()
        .worker_cpus([4095])
        .build()
        .unwrap_err();
    assert_eq!(e.cpu(), Some(4095));

    // 3. A virtual topology spread over the allowed CPUs.
    let pool = ThreadPoolBuilder::new()
        .preset("s1")
        .no_policy()
        .virtual_pinning(VirtualPinning::Spread)
        .build()
        .expect("spread pool");
    assert_eq!(pool.pinning(), Pinning::Spread);
    assert_eq!(pool.install(|| 1 + 1), 2);

    // 4. Opting out of pinning.
    let pool = ThreadPoolBuilder::new()
        .no_policy()
        .pin(false)
        .build()
        .unwrap();
    assert_eq!(pool.pinning(), Pinning::Unpinned);
}
