//! The pool's list of live async tasks: how the pool finds, at shutdown, the tasks that
//! nobody will wake, and drops their futures (module docs of `mod.rs`, "Shutdown").

use std::collections::HashMap;
use std::ptr::NonNull;
use std::sync::Mutex;

use super::raw::{drop_ref, Header};

/// A counted reference to a task.
struct TaskRef(NonNull<Header>);

// SAFETY: a reference to a task may be dropped on any thread (the task is `Send`, and its
// count is atomic).
unsafe impl Send for TaskRef {}

impl Drop for TaskRef {
    fn drop(&mut self) {
        drop_ref(self.0);
    }
}

#[derive(Default)]
struct Inner {
    /// Set at shutdown: no task joins the list afterwards.
    closed: bool,
    /// The live tasks, by address; each entry holds one reference.
    tasks: HashMap<usize, TaskRef>,
}

/// The live (not yet complete) async tasks of a pool.
#[derive(Default)]
pub(crate) struct AsyncTasks(Mutex<Inner>);

impl std::fmt::Debug for AsyncTasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AsyncTasks").finish_non_exhaustive()
    }
}

impl AsyncTasks {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Lists a new task, taking over one of its references; `false` (the reference not
    /// taken) once the pool shuts down.
    pub(crate) fn insert(&self, h: NonNull<Header>) -> bool {
        let mut g = self.lock();
        if g.closed {
            return false;
        }
        g.tasks.insert(h.as_ptr().addr(), TaskRef(h));
        true
    }

    /// The listed task at `addr` (its header's address), if any. A queued task's cell is
    /// listed until it completes, so a live job found here is that task.
    pub(crate) fn find(&self, addr: usize) -> Option<NonNull<Header>> {
        self.lock().tasks.get(&addr).map(|t| t.0)
    }

    /// Unlists a completed task (its reference is dropped; the caller holds another).
    pub(crate) fn remove(&self, h: NonNull<Header>) {
        let r = self.lock().tasks.remove(&h.as_ptr().addr());
        drop(r);
    }

    /// Shutdown: closes the list and cancels every listed task — at once if idle (its future
    /// is dropped on this thread), else by its next runner or its poller. Returns how many
    /// were cancelled here.
    pub(crate) fn close_and_cancel(&self) -> usize {
        let live: Vec<TaskRef> = {
            let mut g = self.lock();
            g.closed = true;
            g.tasks
                .values()
                .map(|t| {
                    // SAFETY: the list's reference keeps the task alive under the lock.
                    unsafe { t.0.as_ref() }.state.ref_inc();
                    TaskRef(t.0)
                })
                .collect()
        };
        let mut cancelled = 0;
        for t in live {
            // SAFETY: `t` is a reference of ours.
            let hd = unsafe { t.0.as_ref() };
            if hd.state.cancel() {
                let h = t.0;
                // The reference becomes the canceller's, dropped by the completion.
                std::mem::forget(t);
                // SAFETY: `cancel` claimed the idle task (`RUNNING`); we hold a reference.
                unsafe { (hd.vtable.cancel)(h) };
                cancelled += 1;
            }
        }
        cancelled
    }
}
