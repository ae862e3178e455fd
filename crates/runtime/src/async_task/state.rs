//! The state word of an async task: its life-cycle flags and its reference count in one
//! atomic, so that every transition is one compare-and-swap (the protocol is in `mod.rs`).
//!
//! Flags (low bits) and references (`REF_ONE` and up):
//!
//! | flags | meaning |
//! |---|---|
//! | none | *idle*: polled, returned `Pending`, waiting for a wake |
//! | `SCHEDULED` | queued (or about to be pushed by whoever set the flag) |
//! | `RUNNING` | being polled (or cancelled) by the one thread that set the flag |
//! | `RUNNING \| SCHEDULED` | *notified while running*: the poller re-queues it after the poll |
//! | `COMPLETE` | the output (or the error) is stored, the future is dropped |
//! | `CANCELLED` | the pool shuts down: the next runner drops the future unpolled |
//! | `HANDLE` | the [`JoinHandle`](super::JoinHandle) is alive |
//!
//! References: the pool's list of live tasks, the join handle, every `Waker`, and the queue
//! while the task is scheduled (the runner inherits it). The last one frees the task.

use std::sync::atomic::Ordering;

use crate::sync::AtomicUsize;

/// Queued, or notified while running.
pub(crate) const SCHEDULED: usize = 1;
/// Being polled or cancelled.
pub(crate) const RUNNING: usize = 1 << 1;
/// Output stored, future dropped.
pub(crate) const COMPLETE: usize = 1 << 2;
/// The pool shuts down: drop the future instead of polling it.
pub(crate) const CANCELLED: usize = 1 << 3;
/// The join handle is alive.
pub(crate) const HANDLE: usize = 1 << 4;
/// One reference.
pub(crate) const REF_ONE: usize = 1 << 6;
const FLAGS: usize = REF_ONE - 1;

/// What a wake asks of the waker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wake {
    /// Nothing to do: already queued, running (the poller re-queues it), or complete.
    Nothing,
    /// The task was idle: it is now scheduled and a reference was taken for the queue; the
    /// waker must push it.
    Push,
}

/// What a runner that popped the task does with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Run {
    /// Poll the future.
    Poll,
    /// The pool shuts down: drop the future unpolled, complete with `Cancelled`.
    Cancel,
}

/// What the poller does after a poll that returned `Pending`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AfterPoll {
    /// Idle now: drop the runner's reference.
    Idle,
    /// Woken during the poll: push it again (the runner's reference becomes the queue's).
    Requeue,
    /// Cancelled during the poll: still running, the poller drops the future now.
    Cancel,
}

/// The state word (module docs).
#[derive(Debug)]
pub(crate) struct State(AtomicUsize);

impl State {
    /// A new task, scheduled, with its handle and `refs` references.
    pub(crate) fn new_scheduled(refs: usize) -> Self {
        Self(AtomicUsize::new(SCHEDULED | HANDLE | (refs * REF_ONE)))
    }

    /// The flags and count now (Acquire: a `COMPLETE` seen here makes the output visible).
    pub(crate) fn load(&self) -> usize {
        self.0.load(Ordering::Acquire)
    }

    /// One compare-and-swap loop: `f` maps the current word to the new one (or `None`: no
    /// change) and an answer.
    fn update<R>(&self, mut f: impl FnMut(usize) -> (Option<usize>, R)) -> R {
        let mut cur = self.0.load(Ordering::Acquire);
        loop {
            let (next, r) = f(cur);
            let Some(next) = next else { return r };
            // AcqRel: Release publishes what the thread wrote before the transition (the
            // future's progress, the output, the task's metadata), Acquire makes the previous
            // owner's writes visible to whoever takes the task next.
            match self
                .0
                .compare_exchange_weak(cur, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return r,
                Err(actual) => cur = actual,
            }
        }
    }

    /// A wake: idle → scheduled (+1 reference, the queue's: [`Wake::Push`]); running →
    /// notified; otherwise nothing.
    pub(crate) fn wake(&self) -> Wake {
        self.update(|s| {
            if s & (COMPLETE | SCHEDULED) != 0 {
                (None, Wake::Nothing)
            } else if s & RUNNING != 0 {
                (Some(s | SCHEDULED), Wake::Nothing)
            } else {
                (Some((s | SCHEDULED) + REF_ONE), Wake::Push)
            }
        })
    }

    /// A runner popped the task: scheduled → running.
    pub(crate) fn start_run(&self) -> Run {
        self.update(|s| {
            debug_assert_eq!(s & (SCHEDULED | RUNNING | COMPLETE), SCHEDULED, "{s:#x}");
            let run = if s & CANCELLED != 0 {
                Run::Cancel
            } else {
                Run::Poll
            };
            (Some((s & !SCHEDULED) | RUNNING), run)
        })
    }

    /// A poll returned `Pending`: running → idle, or → scheduled again if woken meanwhile;
    /// cancelled meanwhile → still running, to be cancelled by the poller.
    pub(crate) fn end_poll(&self) -> AfterPoll {
        self.update(|s| {
            debug_assert!(s & RUNNING != 0 && s & COMPLETE == 0, "{s:#x}");
            if s & CANCELLED != 0 {
                (None, AfterPoll::Cancel)
            } else if s & SCHEDULED != 0 {
                (Some(s & !RUNNING), AfterPoll::Requeue)
            } else {
                (Some(s & !RUNNING), AfterPoll::Idle)
            }
        })
    }

    /// The runner stored the output: running → complete (a pending notification is moot).
    /// Returns whether the handle is still alive (it then owns the output; otherwise the
    /// runner drops it).
    pub(crate) fn complete(&self) -> bool {
        self.update(|s| {
            debug_assert!(s & RUNNING != 0 && s & COMPLETE == 0, "{s:#x}");
            (
                Some((s & !(RUNNING | SCHEDULED)) | COMPLETE),
                s & HANDLE != 0,
            )
        })
    }

    /// The pool shuts down: marks the task cancelled and, if it is idle, claims it (sets
    /// `RUNNING`: the caller cancels it now). A scheduled or running task is cancelled by
    /// its next runner or its poller. `false` for a complete task.
    pub(crate) fn cancel(&self) -> bool {
        self.update(|s| {
            if s & COMPLETE != 0 || s & CANCELLED != 0 {
                (None, false)
            } else if s & (SCHEDULED | RUNNING) == 0 {
                (Some(s | CANCELLED | RUNNING), true)
            } else {
                (Some(s | CANCELLED), false)
            }
        })
    }

    /// The handle is dropped; returns whether the task was complete (the handle then drops
    /// the output, which the runner left to it).
    pub(crate) fn drop_handle(&self) -> bool {
        self.0.fetch_and(!HANDLE, Ordering::AcqRel) & COMPLETE != 0
    }

    /// One more reference.
    pub(crate) fn ref_inc(&self) {
        // Relaxed, as `Arc::clone`: the caller holds a reference already.
        let prev = self.0.fetch_add(REF_ONE, Ordering::Relaxed);
        if prev > usize::MAX / 2 {
            // As `Arc`: a count this high means leaked wakers by the billion.
            std::process::abort();
        }
    }

    /// One reference less; `true` if it was the last (the caller frees the task).
    pub(crate) fn ref_dec(&self) -> bool {
        // AcqRel, as `Arc::drop`: every use of the task happens before its release.
        let prev = self.0.fetch_sub(REF_ONE, Ordering::AcqRel);
        debug_assert!(prev >= REF_ONE);
        prev & !FLAGS == REF_ONE
    }
}

/// Whether `state` (a [`State::load`]) is complete.
pub(crate) fn is_complete(state: usize) -> bool {
    state & COMPLETE != 0
}

/// The references counted in `state`.
#[cfg(test)]
pub(crate) fn refs(state: usize) -> usize {
    state / REF_ONE
}

#[cfg(all(test, not(zonal_loom)))]
mod test {
    use super::*;

    #[test]
    fn a_wake_while_running_requeues_once_and_idle_wakes_push_once() {
        let s = State::new_scheduled(2);
        assert_eq!(s.start_run(), Run::Poll);
        assert_eq!(s.wake(), Wake::Nothing); // notified while running
        assert_eq!(s.wake(), Wake::Nothing); // still one notification
        assert_eq!(s.end_poll(), AfterPoll::Requeue);
        assert_eq!(s.wake(), Wake::Nothing); // already queued
        assert_eq!(s.start_run(), Run::Poll);
        assert_eq!(s.end_poll(), AfterPoll::Idle);
        assert!(!s.ref_dec()); // the runner's reference
        assert_eq!(s.wake(), Wake::Push);
        assert_eq!(refs(s.load()), 2);
        assert_eq!(s.start_run(), Run::Poll);
        assert!(s.complete(), "the handle is alive");
        assert!(is_complete(s.load()));
        assert_eq!(s.wake(), Wake::Nothing);
        assert!(!s.ref_dec());
        assert!(s.drop_handle());
        assert!(s.ref_dec(), "the handle's reference was the last");
    }

    #[test]
    fn cancel_claims_idle_tasks_only() {
        let s = State::new_scheduled(2);
        assert!(!s.cancel(), "scheduled: its runner cancels it");
        assert_eq!(s.start_run(), Run::Cancel);
        assert!(!s.cancel(), "twice is once");
        let s = State::new_scheduled(2);
        assert_eq!(s.start_run(), Run::Poll);
        assert_eq!(s.end_poll(), AfterPoll::Idle);
        assert!(s.cancel(), "idle: claimed");
        assert_eq!(s.wake(), Wake::Nothing, "claimed: running");
        assert!(s.complete());
        let s = State::new_scheduled(2);
        assert_eq!(s.start_run(), Run::Poll);
        assert!(!s.cancel());
        assert_eq!(s.end_poll(), AfterPoll::Cancel);
    }

    #[test]
    fn a_detached_task_leaves_its_output_to_the_runner() {
        let s = State::new_scheduled(2);
        assert!(
            !s.drop_handle(),
            "not complete: the runner drops the output"
        );
        assert!(!s.ref_dec());
        assert_eq!(s.start_run(), Run::Poll);
        assert!(!s.complete(), "no handle");
        assert!(s.ref_dec());
    }
}
