//! Displaced workers: a pinned worker whose CPU went away (taken offline, or its affinity
//! widened by someone else) notices, says so, and pins itself again when it can.
//!
//! # What the kernel does
//!
//! When a CPU is taken offline (`echo 0 > /sys/devices/system/cpu/cpuN/online`), every
//! thread whose affinity holds only that CPU is moved elsewhere and its affinity is *widened*
//! to its cpuset's CPUs (`select_fallback_rq`): the pinning is broken for good, and nothing
//! tells the thread. When the CPU comes back, the affinity stays wide. The same state
//! follows from anyone calling `sched_setaffinity` on a worker with a wider mask.
//!
//! # The protocol
//!
//! Each pinned worker keeps its target CPU (OS index) and a [`PinWatch`]; the state it
//! publishes is in its counters (`pin_state`, `displacements`, `repins`, one writer each:
//! the worker), read by [`ThreadPool::metrics`](crate::ThreadPool::metrics).
//!
//! 1. **Every [`CHECK_EVERY`] tasks** it runs (`WorkerThread::execute_with`: a `Cell`
//!    countdown, no syscall), and **after every wake-up**, a worker that believes itself
//!    pinned compares `sched_getcpu()` (the vDSO on x86-64, no syscall) with its CPU. Equal:
//!    nothing to do. Different: step 3.
//! 2. **Before it parks** it checks as in step 1, and before every [`AFFINITY_EVERY`]th
//!    park it reads its affinity (`sched_getaffinity`, a syscall) and compares it with
//!    `[cpu]`. This catches a widened mask that left the thread where it was (still on its
//!    CPU, so step 1 cannot). Not at every park: in join-heavy work a worker parks and
//!    wakes often, and a syscall each time cost `fib` about 7% against rayon.
//! 3. **Confirm**: a different CPU alone proves nothing if the mask is still `[cpu]` (a
//!    read racing a migration); the worker reads its affinity. Still `[cpu]`: nothing to do.
//!    Anything else: the worker is **displaced**: `pin_state = DISPLACED`,
//!    `displacements += 1`, a `tracing::warn!` naming the worker, its CPU and its new mask;
//!    then step 4 at once.
//! 4. **Re-pin** (a displaced worker, at each check of steps 1–2): `sched_setaffinity([cpu])`.
//!    It fails with `EINVAL` while the CPU is offline: the worker stays displaced and keeps
//!    running tasks wherever the kernel puts it. It succeeds once the CPU is back (or at
//!    once when the mask was only widened): `pin_state = PINNED`, `repins += 1`, a
//!    `tracing::info!`.
//! 5. **A displaced worker never parks for good, and backs off**: it parks with a timeout
//!    ([`PinWatch::park_timeout`]: [`DISPLACED_PARK`] at first, doubled at each displaced
//!    park up to [`DISPLACED_PARK_MAX`], back to the start once it is pinned again), so an
//!    idle pool still re-pins after the CPU's return, but a worker whose CPU never comes
//!    back (taken out of the cgroup's cpuset for good) wakes about once a second rather
//!    than twenty times. The price: an idle displaced worker re-pins up to
//!    [`DISPLACED_PARK_MAX`] after its CPU is back (a busy one, at its next check of steps
//!    1–2). A timeout is a spurious wake-up for the sleep protocol (`sleep/README.md`), and
//!    a displaced worker ([`PinWatch::is_displaced`]) takes no searcher place when it wakes:
//!    a wake-up that is only the back-off's is no reason to walk the other workers' queues.
//! 6. **Released** (the caller's thread adopted as worker 0, `use_current_thread`, at its
//!    pool's end: `construct/caller.rs`): the thread's affinity is given back and its
//!    `pin_state` set to `UNPINNED` by whichever thread drops the pool, under [`REPIN`]; a
//!    watch that finds `UNPINNED` (under the same lock, before it would report or re-pin)
//!    stops watching for good, so the thread is never pinned again by a pool that is gone.
//!    Every re-pin (step 4) holds [`REPIN`] from that read to its `PINNED`, so a release
//!    never lands between a watch's read and its `sched_setaffinity`.
//!
//! Nothing moves a task: displacement only changes where the thread runs, so the
//! exactly-once guarantee of the queues is untouched. Unpinned workers (virtual topologies,
//! `pin(false)`) have no target and skip every step. So does a worker whose pinning failed
//! when the pool was built (the default pinning mode runs it unpinned): the build records
//! it in the registry as never pinned (`worker_pin` is `None`, `pin_state` is
//! `UNPINNED`), since that worker was never on its CPU, a CPU it cannot be pinned to would
//! only make step 4 fail at every check, and a displaced worker never parks for good
//! (step 5).

use std::cell::Cell;
use std::sync::atomic::Ordering;
use std::sync::Mutex;
use std::time::Duration;

use crate::metrics::{bump, WorkerCounters, DISPLACED, PINNED, UNPINNED};

/// Tasks run between two `sched_getcpu` checks of a pinned worker (step 1).
pub(crate) const CHECK_EVERY: u32 = 1024;

/// Parks between two affinity reads of a pinned worker (step 2).
pub(crate) const AFFINITY_EVERY: u32 = 64;

/// How long a displaced worker parks at most before it tries to re-pin again, the first
/// time (step 5).
pub(crate) const DISPLACED_PARK: Duration = Duration::from_millis(50);

/// The longest a displaced worker's park timeout grows to (step 5): 50 ms doubled four
/// times is 800 ms, the fifth doubling stops here.
pub(crate) const DISPLACED_PARK_MAX: Duration = Duration::from_secs(1);

/// Held from a watch's release check to its re-pin (steps 4 and 6), and by the thread
/// that releases a worker: a release never lands between the two. Re-pinning is rare (a
/// displaced worker's checks) and so is a release (once per pool that adopted its caller):
/// one lock for the process costs nothing on any hot path.
pub(crate) static REPIN: Mutex<()> = Mutex::new(());

/// Step 6: marks the worker whose counters are `counters` released (its watch stops at its
/// next check) and runs `give_back` (which restores the thread's affinity), both under
/// [`REPIN`].
pub(crate) fn release(counters: &WorkerCounters, give_back: impl FnOnce()) {
    let _g = REPIN.lock().unwrap_or_else(|e| e.into_inner());
    counters.pin_state.store(UNPINNED, Ordering::Relaxed);
    give_back();
}

/// A worker's own half of the protocol (its thread only).
#[derive(Debug)]
pub(crate) struct PinWatch {
    /// The CPU (OS index) the worker is pinned to; `None`: unpinned, nothing to watch (or
    /// released, step 6).
    target: Cell<Option<u32>>,
    /// Tasks until the next periodic check (step 1).
    countdown: Cell<u32>,
    /// Parks until the next affinity read (step 2).
    parks: Cell<u32>,
    displaced: Cell<bool>,
    /// The next displaced park's timeout (step 5).
    backoff: Cell<Duration>,
}

/// How thorough a check is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Check {
    /// Steps 1 and 3: `sched_getcpu`, confirmed by the affinity only when it differs.
    Cpu,
    /// Step 2: the affinity itself.
    Affinity,
}

impl PinWatch {
    /// The watch of a worker pinned to `target` (OS index), or of an unpinned one.
    pub(crate) fn new(target: Option<u32>) -> Self {
        Self {
            target: Cell::new(target),
            countdown: Cell::new(CHECK_EVERY),
            parks: Cell::new(0),
            displaced: Cell::new(false),
            backoff: Cell::new(DISPLACED_PARK),
        }
    }

    /// Step 1's countdown, on every task run: `true` when a check is due.
    #[inline(always)]
    pub(crate) fn tick(&self) -> bool {
        let n = self.countdown.get();
        if n == 0 {
            self.countdown.set(CHECK_EVERY);
            self.target.get().is_some()
        } else {
            self.countdown.set(n - 1);
            false
        }
    }

    /// Step 2: the check to make before a park (the affinity itself every
    /// [`AFFINITY_EVERY`] parks, the CPU otherwise).
    #[inline]
    pub(crate) fn before_park(&self) -> Check {
        let n = self.parks.get();
        if n == 0 {
            self.parks.set(AFFINITY_EVERY - 1);
            Check::Affinity
        } else {
            self.parks.set(n - 1);
            Check::Cpu
        }
    }

    /// Whether the worker is displaced now (it then parks with a timeout and takes no
    /// searcher place, step 5).
    #[inline]
    pub(crate) fn is_displaced(&self) -> bool {
        self.displaced.get()
    }

    /// Step 5: the timeout of the park about to start — `None` (park until woken) for a
    /// worker that is not displaced; for a displaced one, [`DISPLACED_PARK`] at its first
    /// park, doubled at each further one up to [`DISPLACED_PARK_MAX`] (reset when it is
    /// pinned again).
    #[inline]
    pub(crate) fn park_timeout(&self) -> Option<Duration> {
        if !self.displaced.get() {
            return None;
        }
        let t = self.backoff.get();
        self.backoff.set((t * 2).min(DISPLACED_PARK_MAX));
        Some(t)
    }

    /// Steps 1–4 and 6 for worker `worker`, publishing into `counters`.
    #[cold]
    pub(crate) fn check(&self, check: Check, worker: usize, counters: &WorkerCounters) {
        let Some(cpu) = self.target.get() else { return };
        let mut widened = None;
        if !self.displaced.get() {
            if check == Check::Cpu && crate::os::current_cpu().is_none_or(|c| c == cpu) {
                return;
            }
            match crate::os::thread_affinity() {
                Ok(m) if m != [cpu] => widened = Some(m),
                // Still `[cpu]`, or the kernel will not say: nothing to report.
                _ => return,
            }
        }
        let _g = REPIN.lock().unwrap_or_else(|e| e.into_inner());
        if counters.pin_state.load(Ordering::Relaxed) == UNPINNED {
            // Step 6: released; the mask is the thread's own again. Never watched again.
            self.target.set(None);
            self.displaced.set(false);
            return;
        }
        if let Some(mask) = widened {
            self.displaced.set(true);
            self.backoff.set(DISPLACED_PARK);
            counters.pin_state.store(DISPLACED, Ordering::Relaxed);
            bump(&counters.displacements, 1);
            tracing::warn!(
                target: "zonal_runtime",
                worker,
                cpu,
                allowed = ?mask,
                "worker {worker} was displaced from CPU {cpu} (offline, or its affinity was \
                 changed); it runs on {mask:?} until it can be pinned again"
            );
        }
        if crate::os::pin_current_thread(cpu).is_ok() {
            self.displaced.set(false);
            self.backoff.set(DISPLACED_PARK);
            counters.pin_state.store(PINNED, Ordering::Relaxed);
            bump(&counters.repins, 1);
            tracing::info!(
                target: "zonal_runtime",
                worker,
                cpu,
                "worker {worker} is pinned to CPU {cpu} again"
            );
        }
    }
}

// The behaviour tests' "cannot run here" rule (one copy: `tests/support/required.rs`).
#[cfg(all(test, target_os = "linux", not(zonal_loom)))]
#[path = "../tests/support/required.rs"]
mod required;

#[cfg(all(test, not(zonal_loom)))]
mod backoff_tests {
    use super::*;

    /// A watch displaced as step 3 leaves it, without touching this thread's affinity.
    fn displaced_watch() -> PinWatch {
        let watch = PinWatch::new(Some(0));
        watch.displaced.set(true);
        watch
    }

    #[test]
    fn a_pinned_or_unpinned_worker_parks_until_woken() {
        assert_eq!(PinWatch::new(Some(0)).park_timeout(), None);
        assert_eq!(PinWatch::new(None).park_timeout(), None);
    }

    #[test]
    fn a_displaced_worker_doubles_its_park_up_to_about_a_second() {
        let watch = displaced_watch();
        let parks: Vec<u64> = (0..8)
            .map(|_| watch.park_timeout().unwrap().as_millis() as u64)
            .collect();
        assert_eq!(parks, [50, 100, 200, 400, 800, 1000, 1000, 1000]);
        assert!(watch.is_displaced());
    }

    #[test]
    fn the_back_off_starts_again_once_pinned_again() {
        let watch = displaced_watch();
        for _ in 0..4 {
            watch.park_timeout();
        }
        // What a successful re-pin (step 4) does to the watch.
        watch.displaced.set(false);
        watch.backoff.set(DISPLACED_PARK);
        assert_eq!(watch.park_timeout(), None);
        watch.displaced.set(true);
        assert_eq!(watch.park_timeout(), Some(DISPLACED_PARK));
    }
}

#[cfg(all(test, target_os = "linux", not(zonal_loom)))]
mod tests {
    use std::sync::mpsc;
    use std::time::{Duration, Instant};

    use super::required::cannot_run;
    use super::*;
    use crate::ThreadPoolBuilder;

    /// Polls `f` until it holds; fails the test after a generous deadline (the deadline
    /// only turns a hang into a failure: nothing asserts on how long it took).
    fn eventually(what: &str, mut f: impl FnMut() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !f() {
            assert!(Instant::now() < deadline, "gave up waiting: {what}");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// The CPUs this thread may use, if there are at least two (else the test cannot move
    /// a thread off its CPU: it fails where required, `tests/support/required.rs`, and is
    /// skipped elsewhere).
    fn two_cpus() -> Option<Vec<u32>> {
        let cpus = crate::os::thread_affinity().unwrap();
        if cpus.len() < 2 {
            cannot_run(&format!(
                "the test needs two CPUs; this thread may use {cpus:?}"
            ));
            return None;
        }
        Some(cpus)
    }

    #[test]
    fn the_countdown_fires_every_check_every_tasks_and_only_when_pinned() {
        let pinned = PinWatch::new(Some(0));
        let fired = (0..3 * (CHECK_EVERY + 1)).filter(|_| pinned.tick()).count();
        assert_eq!(fired, 3);
        let unpinned = PinWatch::new(None);
        assert!((0..3 * (CHECK_EVERY + 1)).all(|_| !unpinned.tick()));
    }

    #[test]
    fn a_thread_moved_off_its_cpu_is_displaced_then_pinned_again() {
        let Some(cpus) = two_cpus() else { return };
        let cpu = cpus[0];
        crate::os::pin_current_thread(cpu).unwrap();
        let counters = WorkerCounters::new(1, true);
        let watch = PinWatch::new(Some(cpu));
        watch.check(Check::Cpu, 0, &counters);
        assert_eq!(counters.pin_state.load(Ordering::Relaxed), PINNED);
        assert_eq!(counters.displacements.load(Ordering::Relaxed), 0);
        // What offlining does: the kernel moves the thread and widens its mask (here to
        // every other CPU, so that `sched_getcpu` alone sees it, as step 1 expects).
        crate::os::set_thread_affinity(&cpus[1..]).unwrap();
        watch.check(Check::Cpu, 0, &counters);
        // The CPU is online: re-pinned at once.
        assert_eq!(counters.displacements.load(Ordering::Relaxed), 1);
        assert_eq!(counters.repins.load(Ordering::Relaxed), 1);
        assert_eq!(counters.pin_state.load(Ordering::Relaxed), PINNED);
        assert!(!watch.is_displaced());
        assert_eq!(watch.park_timeout(), None);
        assert_eq!(crate::os::thread_affinity().unwrap(), [cpu]);
        crate::os::set_thread_affinity(&cpus).unwrap();
    }

    #[test]
    fn a_worker_stays_displaced_while_its_cpu_is_gone_and_backs_off() {
        // CPU 8000 is not online here (the masks hold `MASK_BITS`, 8,192, bits; no test
        // machine has that many CPUs): pinning to it fails as for an offline CPU, and the
        // thread's own mask is untouched.
        let before = crate::os::thread_affinity().unwrap();
        let counters = WorkerCounters::new(1, true);
        let watch = PinWatch::new(Some(8000));
        let mut parks = Vec::new();
        for _ in 0..7 {
            watch.check(Check::Affinity, 7, &counters);
            parks.push(watch.park_timeout().unwrap().as_millis());
        }
        assert_eq!(parks, [50, 100, 200, 400, 800, 1000, 1000]);
        assert!(watch.is_displaced());
        assert_eq!(counters.pin_state.load(Ordering::Relaxed), DISPLACED);
        assert_eq!(
            counters.displacements.load(Ordering::Relaxed),
            1,
            "one displacement"
        );
        assert_eq!(counters.repins.load(Ordering::Relaxed), 0);
        let m = counters.snapshot(7, 0, 0, 0, 0);
        assert!(m.displaced && !m.pinned);
        assert_eq!(crate::os::thread_affinity().unwrap(), before);
    }

    #[test]
    fn a_released_worker_is_never_watched_or_pinned_again() {
        let Some(cpus) = two_cpus() else { return };
        let cpu = cpus[0];
        std::thread::spawn(move || {
            crate::os::pin_current_thread(cpu).unwrap();
            let counters = WorkerCounters::new(1, true);
            let watch = PinWatch::new(Some(cpu));
            // Step 6, as a pool's end does it for its adopted caller.
            release(&counters, || crate::os::set_thread_affinity(&cpus).unwrap());
            for check in [Check::Cpu, Check::Affinity, Check::Cpu] {
                watch.check(check, 0, &counters);
            }
            assert_eq!(crate::os::thread_affinity().unwrap(), cpus);
            assert_eq!(counters.pin_state.load(Ordering::Relaxed), UNPINNED);
            assert_eq!(counters.displacements.load(Ordering::Relaxed), 0);
            assert_eq!(counters.repins.load(Ordering::Relaxed), 0);
            assert!(!watch.is_displaced());
            assert!((0..2 * (CHECK_EVERY + 1)).all(|_| !watch.tick()));
        })
        .join()
        .unwrap();
    }

    /// A pool with a pinned worker 0 (`None`: the test cannot run here).
    fn pinned_pool() -> Option<(crate::ThreadPool, u32, Vec<u32>)> {
        let cpus = two_cpus()?;
        let pool = ThreadPoolBuilder::new().no_policy().build().unwrap();
        let Some(cpu) = pool.registry().worker_pin[0] else {
            cannot_run("worker 0 of a pool of this machine could not be pinned");
            return None;
        };
        assert!(pool.metrics().workers[0].pinned);
        Some((pool, cpu, cpus))
    }

    /// Runs `f` on worker 0 and waits for it.
    fn on_worker_0<R: Send + 'static>(
        pool: &crate::ThreadPool,
        f: impl FnOnce() -> R + Send + 'static,
    ) -> R {
        let (tx, rx) = mpsc::channel();
        pool.spawn_pinned(0, move || tx.send(f()).unwrap());
        rx.recv().unwrap()
    }

    /// After one displacement and one re-pin: the metrics say so, the kernel agrees (the
    /// mask is the CPU again), and a burst of tasks still runs exactly once each.
    fn assert_repinned_once(pool: &crate::ThreadPool, cpu: u32) {
        let m = pool.metrics();
        let w = &m.workers[0];
        assert_eq!((w.displacements, w.repins), (1, 1), "{w:?}");
        assert!(w.pinned && !w.displaced);
        assert_eq!(m.displaced_workers, 0);
        assert_eq!(m.total.displacements, 1);
        assert_eq!(
            on_worker_0(pool, crate::os::thread_affinity).unwrap(),
            [cpu]
        );
        let count = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        pool.scope(|s| {
            for _ in 0..10_000 {
                let count = std::sync::Arc::clone(&count);
                s.spawn(move |_| {
                    count.fetch_add(1, Ordering::Relaxed);
                });
            }
        });
        assert_eq!(count.load(Ordering::Relaxed), 10_000);
    }

    /// What offlining does to worker 0, from inside one of its tasks: the thread is moved
    /// off its CPU and its mask is every other CPU (`sched_setaffinity` on the calling
    /// thread migrates it before returning). The worker's next CPU check (before it
    /// parks, at the latest) sees it, reports it, and re-pins.
    #[test]
    fn a_pool_worker_moved_off_its_cpu_notices_and_repins_itself() {
        let Some((pool, cpu, cpus)) = pinned_pool() else {
            return;
        };
        let others: Vec<u32> = cpus.iter().copied().filter(|&c| c != cpu).collect();
        on_worker_0(&pool, move || {
            crate::os::set_thread_affinity(&others).unwrap()
        });
        eventually("worker 0 re-pinned", || {
            pool.metrics().workers[0].repins >= 1
        });
        assert_repinned_once(&pool, cpu);
    }

    /// Worker 0's mask is widened but the thread stays on its CPU, so `sched_getcpu`
    /// cannot tell: only the affinity read before every [`AFFINITY_EVERY`]th park (step 2)
    /// can. The test keeps the worker waking and parking (one empty task at a time) until
    /// that read comes due; it then reports and re-pins as above.
    #[test]
    fn a_pool_worker_with_a_widened_mask_notices_within_affinity_every_parks() {
        let Some((pool, cpu, cpus)) = pinned_pool() else {
            return;
        };
        on_worker_0(&pool, move || {
            crate::os::set_thread_affinity(&cpus).unwrap()
        });
        eventually("worker 0 re-pinned", || {
            if pool.metrics().workers[0].repins >= 1 {
                return true;
            }
            // One more wake-up and park for worker 0.
            pool.spawn_pinned(0, || {});
            false
        });
        assert_repinned_once(&pool, cpu);
    }
}
