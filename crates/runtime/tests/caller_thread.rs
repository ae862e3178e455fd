//! A pool built with `use_current_thread` pins its caller as worker 0 while it lives and
//! gives the thread its affinity back when it ends — dropped on the caller, dropped on
//! another thread, or shut down —, as the kernel says (`sched_getaffinity` of the thread);
//! threads the caller starts afterwards inherit the old mask again, and the runtime's helper
//! threads (the timer) get the caller's mask from before the build, not worker 0's CPU.
//!
//! Each test runs its pool on a thread of its own: a thread adopted as worker 0 stays its
//! pool's worker 0 for the rest of its life.

use std::time::{Duration, Instant};

use zonal_runtime::os::thread_affinity;
use zonal_runtime::{ThreadPool, ThreadPoolBuilder};

#[path = "support/required.rs"]
mod required;

/// Builds a pool of this machine with the calling thread as worker 0; returns it and the
/// CPU worker 0 is pinned to, or `None` (after `required::cannot_run`) where it could not
/// be pinned.
fn adopting_pool() -> Option<(ThreadPool, u32)> {
    let pool = ThreadPoolBuilder::new()
        .no_policy()
        .use_current_thread()
        .build()
        .unwrap();
    let w0 = &pool.metrics().workers[0];
    if !w0.pinned {
        required::cannot_run("worker 0 (the caller's thread) could not be pinned here");
        return None;
    }
    let cpu = pool
        .topology()
        .machine()
        .cpu(zonal_topology::CpuId::new(w0.cpu.unwrap() as usize))
        .os_index;
    assert_eq!(thread_affinity().unwrap(), [cpu], "worker 0 is pinned");
    Some((pool, cpu))
}

/// Some work through the pool from the adopted thread (it takes part while it waits), past
/// a displacement check of its own (every 1,024 tasks it runs).
fn some_work(pool: &ThreadPool) {
    fn fib(n: u32) -> u64 {
        if n < 2 {
            return n as u64;
        }
        let (a, b) = zonal_runtime::join(|| fib(n - 1), || fib(n - 2));
        a + b
    }
    assert_eq!(pool.install(|| fib(18)), 2584);
}

/// Runs `f` on a fresh thread whose mask is every CPU this process may use.
fn on_a_fresh_thread(f: impl FnOnce() + Send + 'static) {
    std::thread::spawn(f).join().unwrap();
}

#[test]
fn the_callers_affinity_is_given_back_when_it_drops_the_pool() {
    on_a_fresh_thread(|| {
        let before = thread_affinity().unwrap();
        let Some((pool, cpu)) = adopting_pool() else {
            return;
        };
        some_work(&pool);
        // A thread started now inherits worker 0's one CPU.
        let inherited = std::thread::spawn(|| thread_affinity().unwrap());
        assert_eq!(inherited.join().unwrap(), [cpu]);
        drop(pool);
        assert_eq!(thread_affinity().unwrap(), before);
        let inherited = std::thread::spawn(|| thread_affinity().unwrap());
        assert_eq!(inherited.join().unwrap(), before);
        // Still worker 0 of the pool that is gone (as in rayon); its own joins there run
        // past its displacement checks, which no longer pin it.
        for _ in 0..3 {
            some_work_here();
        }
        assert_eq!(thread_affinity().unwrap(), before);
    });
}

/// Joins on the current thread's own (terminated) pool, 3,000 of them.
fn some_work_here() {
    for i in 0..3_000u64 {
        let (a, b) = zonal_runtime::join(|| i, || i + 1);
        assert_eq!(a + 1, b);
    }
}

#[test]
fn the_callers_affinity_is_given_back_at_shutdown_and_wait() {
    on_a_fresh_thread(|| {
        let before = thread_affinity().unwrap();
        let Some((pool, _)) = adopting_pool() else {
            return;
        };
        for _ in 0..100 {
            pool.spawn(|| {
                std::hint::black_box(0u64);
            });
        }
        pool.shutdown_and_wait();
        assert_eq!(thread_affinity().unwrap(), before);
    });
}

#[test]
fn the_callers_affinity_is_given_back_when_another_thread_drops_the_pool() {
    on_a_fresh_thread(|| {
        let before = thread_affinity().unwrap();
        let Some((pool, cpu)) = adopting_pool() else {
            return;
        };
        some_work(&pool);
        std::thread::spawn(move || {
            // This thread's mask is not the caller's: only the caller's changes.
            let own = thread_affinity().unwrap();
            drop(pool);
            assert_eq!(thread_affinity().unwrap(), own);
        })
        .join()
        .unwrap();
        assert_ne!(
            before,
            [cpu],
            "needs a mask wider than one CPU to mean anything"
        );
        assert_eq!(thread_affinity().unwrap(), before);
    });
}

#[test]
fn the_timer_thread_gets_the_callers_mask_not_worker_0s_cpu() {
    on_a_fresh_thread(|| {
        let before = thread_affinity().unwrap();
        let Some((pool, cpu)) = adopting_pool() else {
            return;
        };
        if before == [cpu] {
            required::cannot_run("the test needs two CPUs");
            return;
        }
        // The first sleep of the process starts the timer thread, from this thread
        // (pinned to worker 0's CPU): polled once, here.
        let mut sleep = std::pin::pin!(zonal_runtime::task::sleep(Duration::from_secs(60)));
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        assert!(std::future::Future::poll(sleep.as_mut(), &mut cx).is_pending());
        let deadline = Instant::now() + Duration::from_secs(60);
        let timer = loop {
            match thread_named("zonal-timer") {
                // It takes the mask as its first act: wait for that.
                Some(tid) if affinity_of(tid) != [cpu] => break tid,
                _ => {}
            }
            assert!(Instant::now() < deadline, "no timer thread off CPU {cpu}");
            std::thread::sleep(Duration::from_millis(5));
        };
        assert_eq!(affinity_of(timer), before);
        drop(pool);
    });
}

/// The id of this process's thread named `name` (`/proc/self/task/*/comm`).
fn thread_named(name: &str) -> Option<i32> {
    std::fs::read_dir("/proc/self/task").ok()?.find_map(|e| {
        let e = e.ok()?;
        let comm = std::fs::read_to_string(e.path().join("comm")).ok()?;
        (comm.trim_end() == name).then(|| e.file_name().to_str()?.parse().ok())?
    })
}

/// Thread `tid`'s CPUs, as the kernel says (`sched_getaffinity`).
fn affinity_of(tid: i32) -> Vec<u32> {
    let mut set = std::mem::MaybeUninit::<libc::cpu_set_t>::zeroed();
    // SAFETY: `set` is a zeroed `cpu_set_t` of the size passed; `tid` is a thread of this
    // process.
    let ret = unsafe {
        libc::sched_getaffinity(
            tid,
            std::mem::size_of::<libc::cpu_set_t>(),
            set.as_mut_ptr(),
        )
    };
    assert_eq!(
        ret,
        0,
        "sched_getaffinity({tid}): {}",
        std::io::Error::last_os_error()
    );
    // SAFETY: zeroed, then written by the kernel.
    let set = unsafe { set.assume_init() };
    (0..libc::CPU_SETSIZE as usize)
        // SAFETY: `c` is below CPU_SETSIZE.
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .map(|c| c as u32)
        .collect()
}
