//! A pool of [`MAX_THREADS`] (4,096) workers, the builder's limit, on a machine of a few
//! cores: a virtual pool (the `s1` preset, 32 CPUs, and 4,064 extra workers on virtual CPUs
//! dealt over its 16 nodes) builds, runs every task of a scope exactly once, and shuts
//! down; and where the OS refuses the threads (an
//! address-space limit, `RLIMIT_AS`, in a child process: the limit is process-wide), the
//! build returns the typed error naming the worker and the OS's error — the process does
//! not abort.
//!
//! What it costs, measured on the 2-core development machine (debug build, shared): the
//! build a few seconds (the steal walks are compact now: the pool's heap is some 40 MiB,
//! `pool_memory.rs`), the 4,096 threads about 10 GiB of address space (2 MiB stacks). Waking every worker costs far more at this size (a `broadcast` took
//! 39 s, a `NodeBuffer` filled by one node's 256 workers 8 s: each wake-up walks every
//! other worker's queues), so neither is done here.

#![cfg(target_os = "linux")]

use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use zonal_runtime::{ThreadPoolBuilder, MAX_THREADS};

const CHILD: &str = "ZONAL_TEST_MANY_WORKERS_CHILD";

fn builder() -> ThreadPoolBuilder {
    ThreadPoolBuilder::new()
        .preset("s1")
        .num_threads(MAX_THREADS)
        .no_policy()
}

#[test]
fn a_pool_of_4096_virtual_workers_builds_runs_and_shuts_down() {
    assert_eq!(MAX_THREADS, 4096);
    let pool = builder().build().unwrap();
    assert_eq!(pool.num_workers(), MAX_THREADS);
    assert_eq!(pool.extra_workers(), MAX_THREADS - 32);
    // Every task once.
    let ran = AtomicUsize::new(0);
    pool.scope(|s| {
        for _ in 0..10_000 {
            s.spawn(|_| {
                ran.fetch_add(1, Ordering::Relaxed);
            });
        }
    });
    assert_eq!(ran.load(Ordering::Relaxed), 10_000);
    pool.shutdown_and_wait();
}

/// In the child only: under an address-space limit with room for about half of the
/// workers' stacks, the build fails with the typed error.
#[test]
fn child_builds_4096_workers_under_an_address_space_limit() {
    if std::env::var_os(CHILD).is_none() {
        return; // only meaningful in the child
    }
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let vm_kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmSize:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap();
    // Room for about 16 stacks of 256 MiB: the OS refuses a stack, not a worker's smaller
    // mappings after it started (with 2 MiB stacks, the address space ran out as often in
    // a started thread's signal stack, which std cannot report: it aborts). What is left
    // after the last stack, up to 256 MiB, is room for those.
    let limit = vm_kb * 1024 + (4 << 30);
    let rl = libc::rlimit {
        rlim_cur: limit,
        rlim_max: libc::RLIM_INFINITY,
    };
    // SAFETY: setrlimit reads the struct; lowering the soft limit needs no privilege.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_AS, &rl) }, 0);
    match builder().stack_size(256 << 20).build() {
        Ok(pool) => panic!(
            "{} workers built within {limit} bytes of address space",
            pool.num_workers()
        ),
        Err(e) => {
            let w = e.worker().expect("the error names a worker");
            assert!(0 < w && w < MAX_THREADS, "{e}");
            println!("refused: {e}");
        }
    }
}

#[test]
fn the_os_refusing_4096_workers_is_a_typed_error_not_an_abort() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_builds_4096_workers_under_an_address_space_limit",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the child did not pass ({:?}):\n{stdout}\n{stderr}",
        out.status
    );
    assert!(
        stdout.contains("refused: cannot spawn worker thread"),
        "{stdout}\n{stderr}"
    );
}
