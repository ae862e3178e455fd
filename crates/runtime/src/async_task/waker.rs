//! The task's `Waker`: a counted reference to the task whose `wake` re-queues it (state
//! machine: `state.rs`; routing: `route.rs`, `route::requeue`). It may be woken from
//! any thread: a worker of the task's pool, of another pool, a timer or a plain thread.
//!
//! And the other way round, [`wake_foreign`]: how the runtime wakes a waker it did not
//! make — a join handle's awaiter at completion, a timed wait's task when the timer fires.
//! Such a waker runs someone else's code, which may panic; the panic is caught and logged,
//! never let through: it would abort the process on a worker (a completion runs inside the
//! worker's abort guard) and kill the timer thread (every later `sleep` would hang).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::NonNull;
use std::task::{RawWaker, RawWakerVTable, Waker};

use super::raw::{drop_ref, requeue, Header};
use super::state::Wake;
use crate::worker::WorkerThread;

static VTABLE: RawWakerVTable = RawWakerVTable::new(clone, wake, wake_by_ref, drop_waker);

/// A waker for the task that does not own a reference: the caller keeps it in a
/// `ManuallyDrop` and drops it never (clones of it do own one).
///
/// # Safety
/// The caller holds a reference to the task for as long as the waker is used.
pub(crate) unsafe fn borrowed(h: NonNull<Header>) -> Waker {
    // SAFETY: the vtable's functions follow the `RawWaker` contract for a pointer to a
    // live header (each clone takes a reference, each drop releases one).
    unsafe { Waker::from_raw(RawWaker::new(h.as_ptr().cast_const().cast(), &VTABLE)) }
}

fn header(p: *const ()) -> NonNull<Header> {
    // SAFETY: every `RawWaker` of this vtable is made from a non-null header pointer.
    unsafe { NonNull::new_unchecked(p.cast_mut().cast()) }
}

unsafe fn clone(p: *const ()) -> RawWaker {
    // SAFETY: the waker being cloned holds (or borrows) a reference: the task is alive.
    unsafe { header(p).as_ref() }.state.ref_inc();
    RawWaker::new(p, &VTABLE)
}

unsafe fn wake(p: *const ()) {
    // SAFETY: this waker owns a reference, released after the wake.
    unsafe { wake_by_ref(p) };
    drop_ref(header(p));
}

unsafe fn wake_by_ref(p: *const ()) {
    let h = header(p);
    // SAFETY: the waker holds (or borrows) a reference: the task is alive.
    let hd = unsafe { h.as_ref() };
    if hd.state.wake() == Wake::Push {
        WorkerThread::with_current_in(&hd.registry, |here| {
            // SAFETY: we set `SCHEDULED` on an idle task, which was polled before, and
            // took the queue's reference.
            unsafe { requeue(h, here) }
        });
    }
}

unsafe fn drop_waker(p: *const ()) {
    drop_ref(header(p));
}

/// Wakes `w`, a waker the runtime did not make, on behalf of `by` (for the log): a panic of
/// its `wake` (or of its drop) is caught, logged with `tracing::warn!` (target
/// `zonal_runtime`) and ignored, so that the waking thread carries on (module docs).
pub(crate) fn wake_foreign(w: Waker, by: &str) {
    if let Err(payload) = catch_unwind(AssertUnwindSafe(|| w.wake())) {
        let msg = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "<non-string panic payload>".into());
        tracing::warn!(
            target: "zonal_runtime",
            "a waker panicked when woken by {by}: {msg} (ignored)"
        );
        // The payload's own drop is someone else's code too.
        let _ = catch_unwind(AssertUnwindSafe(move || drop(payload)));
    }
}
