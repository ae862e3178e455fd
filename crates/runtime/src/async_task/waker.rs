//! The task's `Waker`: a counted reference to the task whose `wake` re-queues it (state
//! machine: `state.rs`; routing: `route.rs`, `Registry::requeue`). It may be woken from
//! any thread: a worker of the task's pool, of another pool, a timer or a plain thread.

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
