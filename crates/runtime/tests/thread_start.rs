//! The OS refusing a worker thread partway through `build` (a real failure, not a hook):
//! under an address-space limit (`RLIMIT_AS`) that leaves room for two 1 GiB stacks, the
//! third worker's `pthread_create` fails. `build` returns the typed error naming that
//! worker and the OS's error, after stopping and joining the workers already started: no
//! thread of the failed pool is left. The limit is process-wide, so the check runs in a
//! child process (this test binary again), alone.

#![cfg(target_os = "linux")]

use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

const CHILD: &str = "ZONAL_TEST_THREAD_START_CHILD";

/// Each worker's stack: large against everything else the child maps, so that the limit
/// decides how many workers start.
const STACK: u64 = 1 << 30;

/// A `/proc/self/status` field in kB, as bytes.
fn status_bytes(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status
        .lines()
        .find(|l| l.starts_with(field))
        .unwrap_or_else(|| panic!("{field} in /proc/self/status"));
    let kb: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap();
    kb * 1024
}

/// The threads of this process now.
fn threads() -> usize {
    std::fs::read_dir("/proc/self/task").unwrap().count()
}

#[test]
fn child_builds_a_pool_under_an_address_space_limit() {
    if std::env::var_os(CHILD).is_none() {
        return; // only meaningful in the child
    }
    let before = threads();
    let limit = status_bytes("VmSize:") + 2 * STACK + (512 << 20);
    let rl = libc::rlimit {
        rlim_cur: limit,
        rlim_max: libc::RLIM_INFINITY,
    };
    // SAFETY: setrlimit reads the struct; lowering the soft limit needs no privilege.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_AS, &rl) }, 0);
    let (started, exited) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (s, x) = (Arc::clone(&started), Arc::clone(&exited));
    let result = zonal_runtime::ThreadPoolBuilder::new()
        .preset("s1")
        .no_policy()
        .stack_size(STACK as usize)
        .start_handler(move |_| {
            s.fetch_add(1, Ordering::SeqCst);
        })
        .exit_handler(move |_| {
            x.fetch_add(1, Ordering::SeqCst);
        })
        .build();
    let rl = libc::rlimit {
        rlim_cur: libc::RLIM_INFINITY,
        rlim_max: libc::RLIM_INFINITY,
    };
    // SAFETY: as above (raising the soft limit back to the hard one).
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_AS, &rl) }, 0);
    let err = result
        .map(|_| ())
        .expect_err("32 stacks of 1 GiB under the limit");
    let worker = err.worker().expect("the error names the worker");
    assert!(
        (1..32).contains(&worker),
        "some workers started first: {err}"
    );
    assert!(!err.is_input_error(), "{err}");
    let os = std::error::Error::source(&err)
        .and_then(|e| e.downcast_ref::<std::io::Error>())
        .expect("the OS's error is the source");
    assert!(os.raw_os_error().is_some(), "{os:?}");
    // Every worker that started ran its exit handler, and was joined: the process has the
    // threads it had before.
    assert_eq!(started.load(Ordering::SeqCst), worker, "{err}");
    assert_eq!(exited.load(Ordering::SeqCst), worker, "{err}");
    assert_eq!(threads(), before);
    println!("refused at worker {worker}: {err}");
}

#[test]
fn the_os_refusing_a_worker_partway_stops_and_joins_the_started_ones() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_builds_a_pool_under_an_address_space_limit",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        // One malloc arena: worker threads do not each reserve 64 MiB of address space.
        .env("MALLOC_ARENA_MAX", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("refused at worker") && stdout.contains("cannot spawn worker thread"),
        "{stdout}\n{stderr}"
    );
}
