//! Model tests of the sleep protocol and the latch handshake under loom: every interleaving
//! (up to a preemption bound) of workers going to sleep while others push work or set the
//! latch they wait on, on the very `Sleep` and `CoreLatch` the pool runs. A lost wake-up
//! leaves a worker parked for ever, which loom reports as a deadlock.
//!
//! ```text
//! RUSTFLAGS="--cfg zonal_loom" cargo test -p zonal-runtime --lib --release sleep::loom
//! ```
//!
//! The queue is a counter pushed and searched with `Relaxed` accesses: the protocol must not
//! lean on the queue's own ordering, only on its fences (README, "Why no wake-up is lost").
//!
//! The model does see lost wake-ups: with `new_local_work` (no fence; correct only for a
//! pusher that searches its own queue before it sleeps) in place of `new_work` in the first
//! test, loom reports `deadlock; threads = [.. Blocked ..]` (checked by hand; loom aborts
//! on that path, so it cannot be kept as a `should_panic` test).

use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use loom::sync::{Arc, Condvar, Mutex};
use loom::thread;

use super::Sleep;
use crate::latch::CoreLatch;

/// Takes one job if there is one (a worker's search).
fn take(queue: &AtomicUsize) -> bool {
    let mut n = queue.load(Ordering::Relaxed);
    while n > 0 {
        match queue.compare_exchange(n, n - 1, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return true,
            Err(m) => n = m,
        }
    }
    false
}

/// A worker's idle loop (`worker.rs`, `idle_loop`, without the spinning): search, get
/// sleepy, search again, park; until it has taken one job (exact with one worker; with
/// several, see `pool_worker`).
fn worker(sleep: &Sleep, queue: &AtomicUsize, index: usize) {
    loop {
        if take(queue) {
            return;
        }
        let sleepy = sleep.get_sleepy(index, 0);
        if take(queue) {
            let _ = sleep.cancel(sleepy);
            return;
        }
        let _ = sleep.park(sleepy);
    }
}

/// Explores with at most 2 preemptions per execution (seconds), unless
/// `LOOM_MAX_PREEMPTIONS` says otherwise (3 takes minutes).
fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    if std::env::var_os("LOOM_MAX_PREEMPTIONS").is_none() {
        b.preemption_bound = Some(2);
    }
    b.check(f);
}

#[test]
fn a_push_wakes_the_worker_going_to_sleep() {
    model(|| {
        let sleep = Arc::new(Sleep::new(1, 1));
        let queue = Arc::new(AtomicUsize::new(0));
        let (s, q) = (Arc::clone(&sleep), Arc::clone(&queue));
        let w = thread::spawn(move || worker(&s, &q, 0));
        queue.fetch_add(1, Ordering::Relaxed);
        sleep.new_work(0);
        w.join().unwrap();
    });
}

/// Jobs a model has finished, for the producer to wait on.
struct Done {
    count: Mutex<usize>,
    cv: Condvar,
}

/// A worker as the pool runs one: it searches again after every job and exits only when the
/// pool terminates (README step 7).
fn pool_worker(sleep: &Sleep, queue: &AtomicUsize, done: &Done, stop: &AtomicBool, index: usize) {
    let finish = || {
        *done.count.lock().unwrap() += 1;
        done.cv.notify_all();
    };
    loop {
        if take(queue) {
            finish();
            continue;
        }
        if stop.load(Ordering::SeqCst) {
            return;
        }
        let sleepy = sleep.get_sleepy(index, 0);
        if take(queue) {
            let _ = sleep.cancel(sleepy);
            finish();
            continue;
        }
        if stop.load(Ordering::SeqCst) {
            let _ = sleep.cancel(sleepy);
            return;
        }
        let _ = sleep.park(sleepy);
    }
}

/// Two workers and two pushes. A wake-up may reach a worker that found the other job in its
/// re-search (it was still on the list): that worker is awake and searches again after its
/// job, so nothing is stranded. (A model whose workers quit after one job deadlocks here:
/// the README's "whoever is woken may not be the one who needs the task".) A job left in
/// the queue with both workers parked would leave the producer waiting for ever: a deadlock.
#[test]
fn two_pushes_reach_two_workers() {
    model(|| {
        let sleep = Arc::new(Sleep::new(2, 1));
        let queue = Arc::new(AtomicUsize::new(0));
        let done = Arc::new(Done {
            count: Mutex::new(0),
            cv: Condvar::new(),
        });
        let stop = Arc::new(AtomicBool::new(false));
        let workers: Vec<_> = (0..2)
            .map(|i| {
                let (s, q, d, t) = (
                    Arc::clone(&sleep),
                    Arc::clone(&queue),
                    Arc::clone(&done),
                    Arc::clone(&stop),
                );
                thread::spawn(move || pool_worker(&s, &q, &d, &t, i))
            })
            .collect();
        for _ in 0..2 {
            queue.fetch_add(1, Ordering::Relaxed);
            sleep.new_work(0);
        }
        let mut n = done.count.lock().unwrap();
        while *n < 2 {
            n = done.cv.wait(n).unwrap();
        }
        drop(n);
        stop.store(true, Ordering::SeqCst);
        sleep.wake_all();
        for w in workers {
            w.join().unwrap();
        }
    });
}

/// The other half of the idle loop: a worker blocked in `join` waits on a latch, parks,
/// and is woken by whoever sets it; the result written before the latch is set is seen.
#[test]
fn a_latch_set_wakes_its_sleeping_owner_and_publishes_the_result() {
    model(|| {
        let sleep = Arc::new(Sleep::new(1, 1));
        let latch = Arc::new(CoreLatch::new());
        let result = Arc::new(AtomicUsize::new(0));
        let (s, l, r) = (Arc::clone(&sleep), Arc::clone(&latch), Arc::clone(&result));
        let owner = thread::spawn(move || {
            loop {
                if l.probe() {
                    break;
                }
                let sleepy = s.get_sleepy(0, 0);
                if l.probe() || !l.fall_asleep() {
                    let _ = s.cancel(sleepy);
                    break;
                }
                let _ = s.park(sleepy);
                l.wake_up();
            }
            assert_eq!(r.load(Ordering::Relaxed), 42, "the result is visible");
        });
        result.store(42, Ordering::Relaxed);
        // SAFETY: the latch is alive (an Arc) and set once.
        if unsafe { CoreLatch::set(&*latch) } {
            sleep.wake_worker(0);
        }
        owner.join().unwrap();
    });
}
