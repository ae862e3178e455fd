//! Jobs: type-erased pointers to work, as rayon-core's `job.rs`.
//!
//! A [`JobRef`] is a pointer plus the function that knows its real type. Three job kinds:
//! - [`StackJob`]: lives on the stack of a thread blocked in `join`/`install` until the job's
//!   latch is set, so the pointer stays valid for as long as the job is queued or running.
//! - [`HeapJob`]: on the heap, owned by the queue; executing it frees it. Small jobs live in
//!   the spawning worker's job blocks (`blocks.rs`), big ones in a `Box`.
//! - [`BareJob`]: a `HeapJob` without a header, for the commonest spawn — a fresh task at
//!   home with the default group and weight, queued on its spawner's deque (see below).
//!
//! Every job but a bare one starts with a [`JobHeader`] holding its [`Meta`] (`#[repr(C)]`,
//! first field), so that a queued `Task` (`task_meta.rs`) is just the 16-byte `JobRef` (as small as rayon's)
//! and the thief that pops it can read and update the metadata through the pointer.
//!
//! # Bare jobs
//!
//! A scope's spawn of a few-byte closure is a 24-byte job without a header and a 40-byte one
//! with it: a 32-byte job block against a 64-byte one (`blocks.rs`), half the memory the
//! spawner writes and a thief pulls from the spawner's core.
//! A bare job's `JobRef` has bit 0 of its pointer set ([`BARE`]; jobs are at least 8-aligned),
//! and its metadata is implied by where it lies: it is only ever created fresh at home
//! (origin = its spawner's node, no migration, no group, nice 0) and pushed on its spawner's
//! deque, and it leaves that deque only to run — popped by the owner or stolen (a default
//! task passes the re-check after a steal, so it is never re-queued elsewhere). So whoever
//! takes it knows its metadata: `Meta::fresh(node of that deque)` (`Task::meta`'s `home`).

use std::any::Any;
use std::cell::UnsafeCell;
use std::mem;

use crate::blocks::{self, LocalBlocks};
use crate::latch::Latch;
use crate::task_meta::{Meta, Task};
use crate::unwind;

/// Executes a type-erased job.
pub(crate) trait Job {
    /// # Safety
    /// `this` must come from a live `JobRef` of this type, executed at most once.
    unsafe fn execute(this: *const ());
}

/// Bit 0 of a [`JobRef`]'s pointer: the job is a [`BareJob`] (no header).
const BARE: usize = 1;

/// A type-erased job pointer.
///
/// Invariant: `pointer`, with the [`BARE`] bit cleared, designates a live job of the type
/// `execute_fn` expects, and the job is executed at most once (the queues hand each `Task`
/// to exactly one thread). The bit is set exactly when the job is a [`BareJob`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct JobRef {
    pointer: *const (),
    execute_fn: unsafe fn(*const ()),
}

impl PartialEq for JobRef {
    /// Identity of the job (its address); the function pointer is implied by it.
    fn eq(&self, other: &Self) -> bool {
        self.pointer == other.pointer
    }
}

impl Eq for JobRef {}

// SAFETY: a JobRef is only created for jobs that are `Send` (the closures of `spawn`, `join`
// and `scope` are required to be `Send`), so handing the pointer to another thread is sound.
unsafe impl Send for JobRef {}
// SAFETY: as above; the pointer is only dereferenced by the single thread that executes it.
unsafe impl Sync for JobRef {}

impl JobRef {
    /// # Safety
    /// `data` must stay valid until the job has executed (see the type invariant).
    #[inline]
    pub(crate) unsafe fn new<T: Job>(data: *const T) -> JobRef {
        debug_assert!(data.addr() & BARE == 0, "jobs are at least 2-aligned");
        JobRef {
            pointer: data.cast(),
            execute_fn: <T as Job>::execute,
        }
    }

    /// A `JobRef` to a [`BareJob`]: tagged with [`BARE`].
    ///
    /// # Safety
    /// As [`JobRef::new`]; `data` must be a `BareJob` (8-aligned, so bit 0 is free).
    #[inline]
    unsafe fn new_bare<T: Job>(data: *const T) -> JobRef {
        debug_assert!(data.addr() & BARE == 0, "bare jobs are 8-aligned");
        JobRef {
            pointer: data.cast::<()>().map_addr(|a| a | BARE),
            execute_fn: <T as Job>::execute,
        }
    }

    /// Whether the job is a [`BareJob`] (has no header).
    #[inline]
    pub(crate) fn is_bare(&self) -> bool {
        self.pointer.addr() & BARE != 0
    }

    /// The job's address, tag cleared.
    #[inline]
    pub(crate) fn untagged(&self) -> *const () {
        self.pointer.map_addr(|a| a & !BARE)
    }

    /// An id stable while the job is alive (for `TaskMeta::id` and identity checks).
    #[inline]
    pub(crate) fn id(&self) -> u64 {
        self.untagged().addr() as u64
    }

    /// # Safety
    /// The job must not have executed yet, and this must be its only execution.
    #[inline]
    pub(crate) unsafe fn execute(self) {
        // SAFETY: the caller guarantees the job is live and executed once; the untagged
        // pointer is the job's address (type invariant).
        unsafe { (self.execute_fn)(self.untagged()) }
    }
}

/// The first field of every job: its metadata.
#[derive(Debug)]
#[repr(C)]
pub(crate) struct JobHeader {
    pub(crate) meta: UnsafeCell<Meta>,
}

impl JobHeader {
    pub(crate) const fn new(meta: Meta) -> Self {
        Self {
            meta: UnsafeCell::new(meta),
        }
    }
}

/// The outcome of a job run on another thread.
#[derive(Debug, Default)]
pub(crate) enum JobResult<T> {
    #[default]
    None,
    Ok(T),
    Panic(Box<dyn Any + Send>),
}

impl<T> JobResult<T> {
    fn call(func: impl FnOnce(bool) -> T) -> Self {
        match unwind::halt_unwinding(|| func(true)) {
            Ok(x) => JobResult::Ok(x),
            Err(x) => JobResult::Panic(x),
        }
    }

    /// The value, resuming the job's panic in this thread.
    pub(crate) fn into_return_value(self) -> T {
        match self {
            JobResult::None => unreachable!("job result read before the job ran"),
            JobResult::Ok(x) => x,
            JobResult::Panic(x) => unwind::resume_unwinding(x),
        }
    }
}

/// A job on the stack of a thread that waits for its latch before returning.
#[repr(C)]
pub(crate) struct StackJob<L, F, R> {
    header: JobHeader,
    pub(crate) latch: L,
    func: UnsafeCell<Option<F>>,
    result: UnsafeCell<JobResult<R>>,
}

impl<L: Latch, F: FnOnce(bool) -> R + Send, R: Send> StackJob<L, F, R> {
    pub(crate) fn new(func: F, latch: L, meta: Meta) -> Self {
        Self {
            header: JobHeader::new(meta),
            latch,
            func: UnsafeCell::new(Some(func)),
            result: UnsafeCell::new(JobResult::None),
        }
    }

    /// # Safety
    /// The job must outlive every use of the returned `JobRef`: its owner waits on `latch`
    /// (or takes the job back unexecuted) before it goes out of scope.
    pub(crate) unsafe fn as_task(&self) -> Task {
        // SAFETY: guaranteed by the caller; `header` is the first field (repr(C)).
        unsafe { Task::new(JobRef::new(self)) }
    }

    /// Runs the job inline (it was popped back by its owner, never shared further).
    ///
    /// Takes `&mut self` rather than `self`: moving the job out would copy it with 16-byte
    /// loads right after its fields were stored one by one (for a `join` whose first half
    /// is tiny), a store-forwarding stall on the hottest path of `join`.
    pub(crate) fn run_inline(&mut self, stolen: bool) -> R {
        let f = self.func.get_mut().take().expect("stack job already taken");
        f(stolen)
    }

    /// The result, once the latch is set.
    pub(crate) fn into_result(self) -> R {
        self.result.into_inner().into_return_value()
    }
}

impl<L: Latch, F: FnOnce(bool) -> R + Send, R: Send> Job for StackJob<L, F, R> {
    unsafe fn execute(this: *const ()) {
        // SAFETY: `this` is the `StackJob` the JobRef was made from (JobRef invariant), alive
        // until its latch is set below, and executed once, so the cells are ours alone.
        let this = unsafe { &*this.cast::<Self>() };
        let abort = unwind::AbortIfPanic;
        // SAFETY: only the executing thread touches `func` and `result` before the latch is
        // set; the owner reads `result` only after observing the latch (Acquire).
        let func = unsafe { (*this.func.get()).take() }.expect("stack job executed twice");
        // SAFETY: as above.
        unsafe { *this.result.get() = JobResult::call(func) };
        // SAFETY: the owner may free `this` as soon as the latch is set: nothing touches
        // `this` afterwards (Latch::set copies what it needs first).
        unsafe { Latch::set(&this.latch) };
        mem::forget(abort);
    }
}

/// A boxed job, owned by whoever holds its `JobRef`.
#[repr(C)]
pub(crate) struct HeapJob<F> {
    header: JobHeader,
    job: F,
}

impl<F: FnOnce() + Send> HeapJob<F> {
    /// Moves the job to the heap (a job block of `local`'s worker when it fits, see
    /// `blocks.rs`) as a task; executing the task frees it. The closure must catch its own
    /// panics (spawn wrappers do). `local` must be the block cache of a worker of the pool
    /// the task is queued in, or `None`.
    ///
    /// The `'static` bound is relaxed by the scope (see `scope.rs`), which waits for every
    /// job it spawned before its borrowed data can go away.
    pub(crate) fn task(local: Option<&LocalBlocks>, meta: Meta, job: F) -> Task {
        let p = blocks::alloc(
            local,
            HeapJob {
                header: JobHeader::new(meta),
                job,
            },
        );
        // SAFETY: the job stays on the heap until `execute` frees it, which happens exactly
        // once (JobRef invariant); `header` is the first field.
        unsafe { Task::new(JobRef::new(p)) }
    }
}

impl<F: FnOnce() + Send> Job for HeapJob<F> {
    unsafe fn execute(this: *const ()) {
        // SAFETY: `this` came from `blocks::alloc` in `task` and is executed (freed) once.
        // The memory goes back before the job runs: the owner can reuse it at once.
        let this = unsafe { blocks::free(this.cast::<Self>().cast_mut()) };
        (this.job)();
    }
}

/// A boxed job without a header (module docs, "Bare jobs"). At least 8-aligned, so that bit
/// 0 of its address is free for the [`BARE`] tag.
#[repr(C, align(8))]
pub(crate) struct BareJob<F> {
    job: F,
}

impl<F: FnOnce() + Send> BareJob<F> {
    /// Moves the job to the heap (a job block of `local`'s worker when it fits) as a tagged
    /// task; executing the task frees it. The closure must catch its own panics. The task
    /// must go onto the deque of the worker spawning it (the node of that deque is its
    /// origin), and `local` must be that worker's block cache (or `None`).
    pub(crate) fn task(local: Option<&LocalBlocks>, job: F) -> Task {
        let p = blocks::alloc(local, BareJob { job });
        // SAFETY: the job stays on the heap until `execute` frees it, which happens exactly
        // once (JobRef invariant); `BareJob` is 8-aligned (blocks 64-aligned), and the
        // caller queues it on its spawner's deque (Task invariant).
        unsafe { Task::new(JobRef::new_bare(p)) }
    }
}

impl<F: FnOnce() + Send> Job for BareJob<F> {
    unsafe fn execute(this: *const ()) {
        // SAFETY: `this` is the untagged address from `blocks::alloc` in `task`, and the job
        // is executed (freed) once.
        let this = unsafe { blocks::free(this.cast::<Self>().cast_mut()) };
        (this.job)();
    }
}

#[cfg(test)]
mod test {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[test]
    fn bare_jobs_are_tagged_and_carry_their_home() {
        static RUNS: AtomicUsize = AtomicUsize::new(0);
        let x = 7usize;
        let task = BareJob::task(None, move || {
            RUNS.fetch_add(x, Ordering::Relaxed);
        });
        assert!(task.job.is_bare());
        assert_eq!(task.job.id() % 8, 0, "the id is the untagged address");
        assert_eq!(task.meta(&Meta::fresh(3)), Meta::fresh(3));
        // SAFETY: the job is live and this is its only execution.
        unsafe { task.job.execute() };
        assert_eq!(RUNS.load(Ordering::Relaxed), 7);

        let meta = Meta {
            origin: 1,
            migrations: 2,
            flags: 0,
            group: 3,
            weight: 4,
        };
        let task = HeapJob::task(None, meta, || {});
        assert!(!task.job.is_bare());
        assert_eq!(
            task.meta(&Meta::fresh(9)),
            meta,
            "a header wins over the home node"
        );
        // SAFETY: as above.
        unsafe { task.job.execute() };
    }

    #[test]
    #[should_panic(expected = "no header")]
    fn bare_jobs_have_no_header_to_write() {
        let task = BareJob::task(None, || {});
        // Leaks the job: the panic comes first.
        task.set_meta(Meta::fresh(0));
    }
}
