//! Model tests of the async task's state machine (`state.rs`) and of the join waker's
//! hand-off (`join_handle.rs`) under loom: every interleaving (up to a preemption bound)
//! of wakes from several threads, polls, completion, handle drops and shutdown, on the very
//! `State` and `JoinWaker` the tasks run.
//!
//! ```text
//! RUSTFLAGS="--cfg zonal_loom" cargo test -p zonal-runtime --lib --release async_task::loom
//! ```
//!
//! The model does see lost wake-ups: with `end_poll` dropping the notification (idle
//! instead of `Requeue` when `SCHEDULED` is set), `a_wake_while_running_queues_the_task_once`
//! fails (checked by hand).
//!
//! A queue is a counter of pushed tasks: a task is pushed only by whoever made it
//! `SCHEDULED` (a waker's `Wake::Push`, a poller's `AfterPoll::Requeue`).

use std::sync::Arc as StdArc;
use std::task::{Wake as StdWake, Waker};

use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use loom::sync::Arc;
use loom::thread;

use super::join_handle::JoinWaker;
use super::state::{refs, AfterPoll, Run, State, Wake, COMPLETE, RUNNING, SCHEDULED};
use crate::loom_support::{self, take};

/// Explores with at most 3 preemptions per execution unless `LOOM_MAX_PREEMPTIONS` says
/// otherwise (the state machine is small: seconds).
fn model(f: impl Fn() + Sync + Send + 'static) {
    loom_support::model(3, f);
}

/// A wake, pushing the task on `queue` when asked to.
fn wake(s: &State, queue: &AtomicUsize) {
    if s.wake() == Wake::Push {
        queue.fetch_add(1, Ordering::Relaxed);
    }
}

/// One run of a popped task that returns `Pending`: never concurrent with another
/// (`polling` says so), then re-queued or idle as the state machine says.
fn run_pending(s: &State, queue: &AtomicUsize, polling: &AtomicBool, polls: &AtomicUsize) {
    assert_eq!(s.start_run(), Run::Poll);
    assert!(
        !polling.swap(true, Ordering::Relaxed),
        "polled concurrently"
    );
    polls.fetch_add(1, Ordering::Relaxed);
    polling.store(false, Ordering::Relaxed);
    match s.end_poll() {
        AfterPoll::Requeue => {
            queue.fetch_add(1, Ordering::Relaxed);
        }
        AfterPoll::Idle => assert!(!s.ref_dec()),
        AfterPoll::Cancel => unreachable!("never cancelled here"),
    }
}

/// A wake during a poll is not lost: whichever comes first, the task ends up queued exactly
/// once, with exactly the queue's reference added.
#[test]
fn a_wake_while_running_queues_the_task_once() {
    model(|| {
        // Running (the runner holds the queue's reference), with its handle.
        let s = Arc::new(State::new_scheduled(2));
        assert_eq!(s.start_run(), Run::Poll);
        let queue = Arc::new(AtomicUsize::new(0));
        let (s2, q2) = (Arc::clone(&s), Arc::clone(&queue));
        let waker = thread::spawn(move || wake(&s2, &q2));
        match s.end_poll() {
            AfterPoll::Requeue => {
                queue.fetch_add(1, Ordering::Relaxed);
            }
            AfterPoll::Idle => assert!(!s.ref_dec()),
            AfterPoll::Cancel => unreachable!(),
        }
        waker.join().unwrap();
        assert_eq!(queue.load(Ordering::Relaxed), 1, "queued exactly once");
        let st = s.load();
        assert_eq!(st & (SCHEDULED | RUNNING), SCHEDULED);
        assert_eq!(refs(st), 2, "the handle's and the queue's");
    });
}

/// Two workers and a foreign waker: the task is never polled concurrently, and every wake
/// is followed by a poll (no task left scheduled with nobody to run it).
#[test]
fn wakes_from_anywhere_never_poll_concurrently_and_are_never_lost() {
    model(|| {
        let s = Arc::new(State::new_scheduled(2));
        let queue = Arc::new(AtomicUsize::new(1));
        let polling = Arc::new(AtomicBool::new(false));
        let polls = Arc::new(AtomicUsize::new(0));
        let worker =
            |s: Arc<State>, q: Arc<AtomicUsize>, p: Arc<AtomicBool>, n: Arc<AtomicUsize>| {
                move || {
                    while take(&q) {
                        run_pending(&s, &q, &p, &n);
                    }
                }
            };
        let a = thread::spawn(worker(
            Arc::clone(&s),
            Arc::clone(&queue),
            Arc::clone(&polling),
            Arc::clone(&polls),
        ));
        let (s2, q2) = (Arc::clone(&s), Arc::clone(&queue));
        let w = thread::spawn(move || wake(&s2, &q2));
        worker(
            Arc::clone(&s),
            Arc::clone(&queue),
            Arc::clone(&polling),
            Arc::clone(&polls),
        )();
        a.join().unwrap();
        w.join().unwrap();
        // What the workers left (they may have quit before the wake's push) runs now.
        while take(&queue) {
            run_pending(&s, &queue, &polling, &polls);
        }
        let st = s.load();
        assert_eq!(st & (SCHEDULED | RUNNING), 0, "idle at the end: {st:#x}");
        assert_eq!(refs(st), 1, "the handle's reference only");
        let n = polls.load(Ordering::Relaxed);
        assert!((1..=2).contains(&n), "{n} polls");
    });
}

/// Completion against the handle's drop: the output is dropped exactly once, by one of
/// them; the last reference is released exactly once.
#[test]
fn the_output_is_dropped_once_whoever_comes_last() {
    model(|| {
        let s = Arc::new(State::new_scheduled(2));
        let dropped = Arc::new(AtomicUsize::new(0));
        let freed = Arc::new(AtomicUsize::new(0));
        let (s2, d2, f2) = (Arc::clone(&s), Arc::clone(&dropped), Arc::clone(&freed));
        let runner = thread::spawn(move || {
            assert_eq!(s2.start_run(), Run::Poll);
            if !s2.complete() {
                d2.fetch_add(1, Ordering::Relaxed);
            }
            if s2.ref_dec() {
                f2.fetch_add(1, Ordering::Relaxed);
            }
        });
        if s.drop_handle() {
            dropped.fetch_add(1, Ordering::Relaxed);
        }
        if s.ref_dec() {
            freed.fetch_add(1, Ordering::Relaxed);
        }
        runner.join().unwrap();
        assert_eq!(dropped.load(Ordering::Relaxed), 1);
        assert_eq!(freed.load(Ordering::Relaxed), 1);
        assert!(s.load() & COMPLETE != 0);
    });
}

/// Shutdown against a wake of an idle task: exactly one runner — the canceller, or the
/// worker that pops the pushed task and sees it cancelled.
#[test]
fn shutdown_and_a_wake_give_the_task_one_runner() {
    model(|| {
        // Idle after one poll: the handle's and the list's references.
        let s = Arc::new(State::new_scheduled(3));
        assert_eq!(s.start_run(), Run::Poll);
        assert_eq!(s.end_poll(), AfterPoll::Idle);
        assert!(!s.ref_dec());
        let queue = Arc::new(AtomicUsize::new(0));
        let (s2, q2) = (Arc::clone(&s), Arc::clone(&queue));
        let waker = thread::spawn(move || wake(&s2, &q2));
        let claimed = s.cancel();
        waker.join().unwrap();
        let queued = take(&queue);
        assert!(
            claimed != queued,
            "one runner: claimed {claimed}, queued {queued}"
        );
        if queued {
            assert_eq!(s.start_run(), Run::Cancel);
        }
        assert!(s.complete());
        assert_eq!(s.wake(), Wake::Nothing);
    });
}

/// The handle's waker is never lost: either the handle sees the task complete after it
/// registered, or the runner wakes what it registered.
#[test]
fn the_join_waker_is_woken_or_the_completion_seen() {
    struct Flag(std::sync::atomic::AtomicBool);
    impl StdWake for Flag {
        fn wake(self: StdArc<Self>) {
            self.0.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    }
    model(|| {
        let s = Arc::new(State::new_scheduled(2));
        let jw = Arc::new(JoinWaker::new());
        let (s2, jw2) = (Arc::clone(&s), Arc::clone(&jw));
        let runner = thread::spawn(move || {
            assert_eq!(s2.start_run(), Run::Poll);
            assert!(s2.complete());
            jw2.wake();
        });
        let flag = StdArc::new(Flag(std::sync::atomic::AtomicBool::new(false)));
        jw.register(&Waker::from(StdArc::clone(&flag)));
        let seen = s.load() & COMPLETE != 0;
        runner.join().unwrap();
        let woken = flag.0.load(std::sync::atomic::Ordering::SeqCst);
        assert!(seen || woken, "a lost join wake-up");
    });
}
