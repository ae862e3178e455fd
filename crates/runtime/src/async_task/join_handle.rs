//! [`JoinHandle`]: the owner's side of an async task — await it, [`join`](JoinHandle::join)
//! it from a plain thread or a worker, or drop it to detach the task — and [`JoinError`].

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::ptr::NonNull;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use super::raw::{drop_ref, Header};
use super::state::is_complete;
use super::waker::wake_foreign;
use crate::latch::{CrossLatch, Latch};
use crate::sync::Mutex;
use crate::worker::WorkerThread;

/// Why an async task produced no value: its future panicked, or its pool shut down before
/// it finished (the future was then dropped unpolled).
///
/// ```
/// # use zonal_runtime::doc_facade as zonal;
/// let pool = zonal::ThreadPoolBuilder::new().preset("s1").no_policy().build()?;
/// let h = pool.spawn_async(async { panic!("boom") });
/// let err = h.join().unwrap_err();
/// assert!(err.is_panic());
/// assert_eq!(err.into_panic().downcast_ref::<&str>(), Some(&"boom"));
/// # Ok::<(), zonal::BuildError>(())
/// ```
pub struct JoinError {
    repr: Repr,
}

enum Repr {
    Cancelled,
    Panic(Box<dyn Any + Send + 'static>),
}

impl JoinError {
    pub(crate) fn cancelled() -> Self {
        Self {
            repr: Repr::Cancelled,
        }
    }

    pub(crate) fn panic(payload: Box<dyn Any + Send + 'static>) -> Self {
        Self {
            repr: Repr::Panic(payload),
        }
    }

    /// Whether the task was cancelled: its pool shut down before it finished.
    #[must_use]
    pub fn is_cancelled(&self) -> bool {
        matches!(self.repr, Repr::Cancelled)
    }

    /// Whether the task's future panicked.
    #[must_use]
    pub fn is_panic(&self) -> bool {
        matches!(self.repr, Repr::Panic(_))
    }

    /// The panic's payload.
    ///
    /// # Panics
    /// If the task was cancelled rather than panicked; see
    /// [`try_into_panic`](Self::try_into_panic).
    #[must_use]
    pub fn into_panic(self) -> Box<dyn Any + Send + 'static> {
        self.try_into_panic()
            .unwrap_or_else(|e| panic!("`JoinError::into_panic` on an error that is no panic: {e}"))
    }

    /// The panic's payload, or the error itself if the task was cancelled.
    ///
    /// # Errors
    /// `self` when the task was cancelled.
    pub fn try_into_panic(self) -> Result<Box<dyn Any + Send + 'static>, JoinError> {
        match self.repr {
            Repr::Panic(p) => Ok(p),
            Repr::Cancelled => Err(self),
        }
    }

    /// The payload, if a panic (for the panic handler of a detached task).
    pub(crate) fn into_panic_payload(self) -> Option<Box<dyn Any + Send + 'static>> {
        self.try_into_panic().ok()
    }

    /// The panic message, when the payload is a string.
    fn message(&self) -> Option<&str> {
        match &self.repr {
            Repr::Panic(p) => p
                .downcast_ref::<&str>()
                .copied()
                .or_else(|| p.downcast_ref::<String>().map(String::as_str)),
            Repr::Cancelled => None,
        }
    }
}

impl fmt::Display for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.repr, self.message()) {
            (Repr::Cancelled, _) => f.write_str("task cancelled: its pool shut down"),
            (Repr::Panic(_), Some(m)) => write!(f, "task panicked: {m}"),
            (Repr::Panic(_), None) => f.write_str("task panicked"),
        }
    }
}

impl std::error::Error for JoinError {}

impl fmt::Debug for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.repr, self.message()) {
            (Repr::Cancelled, _) => f.write_str("JoinError::Cancelled"),
            (Repr::Panic(_), m) => f.debug_tuple("JoinError::Panic").field(&m).finish(),
        }
    }
}

/// The waker of whoever waits for the task's completion: set by the handle, taken and woken
/// once by the runner that completes the task.
///
/// No lost wake-up: the handle stores its waker under the lock, then reads the state; the
/// runner sets `COMPLETE`, then takes the waker under the lock. Whichever critical section
/// comes second sees the other's write (the loom model checks it, `loom.rs`).
#[derive(Debug)]
pub(crate) struct JoinWaker(Mutex<Option<Waker>>);

impl JoinWaker {
    pub(crate) fn new() -> Self {
        Self(Mutex::new(None))
    }

    /// Stores `w` (unless it would wake the same task as the one stored).
    pub(crate) fn register(&self, w: &Waker) {
        let mut g = self.0.lock().unwrap_or_else(|e| e.into_inner());
        match &*g {
            Some(old) if old.will_wake(w) => {}
            _ => *g = Some(w.clone()),
        }
    }

    /// Wakes the stored waker, if any (at completion). It is the awaiter's, of any
    /// executor: its panic is caught and logged (`waker::wake_foreign`), and the completion
    /// goes on (the output is already published).
    pub(crate) fn wake(&self) {
        let w = self.0.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(w) = w {
            wake_foreign(w, "the completion of the task it awaits");
        }
    }
}

/// The handle of an async task ([`ThreadPool::spawn_async`](crate::ThreadPool::spawn_async),
/// [`ThreadPool::spawn_handle`](crate::ThreadPool::spawn_handle),
/// [`spawn_async`](crate::spawn_async)): a future of the task's result, awaitable from any
/// async context (another Zonal task included), or [`join`](Self::join)ed from a thread.
/// Dropping it detaches the task, which runs on (a panic of a detached task goes to the
/// pool's panic handler).
///
/// ```
/// # use zonal_runtime::doc_facade as zonal;
/// let pool = zonal::ThreadPoolBuilder::new().preset("s1").no_policy().build()?;
/// let a = pool.spawn_async(async { 20 });
/// let b = pool.spawn_async(async move { a.await.unwrap() + 22 });
/// assert_eq!(b.join().unwrap(), 42);
/// # Ok::<(), zonal::BuildError>(())
/// ```
pub struct JoinHandle<T> {
    /// `None` once the output was taken.
    raw: Option<NonNull<Header>>,
    _output: PhantomData<T>,
}

// SAFETY: the handle only moves the output (`T: Send`) out of the task, once.
unsafe impl<T: Send> Send for JoinHandle<T> {}
// SAFETY: `&JoinHandle` only reads the state word (`is_finished`).
unsafe impl<T: Send> Sync for JoinHandle<T> {}

impl<T> Unpin for JoinHandle<T> {}

impl<T> fmt::Debug for JoinHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinHandle")
            .field("finished", &self.is_finished())
            .finish()
    }
}

impl<T> JoinHandle<T> {
    /// # Safety
    /// `raw` is a task whose output is a `T`, and the caller hands over the handle's
    /// reference (the state's `HANDLE` flag is set).
    pub(crate) unsafe fn new(raw: NonNull<Header>) -> Self {
        Self {
            raw: Some(raw),
            _output: PhantomData,
        }
    }

    fn header(&self) -> Option<&Header> {
        // SAFETY: the handle holds a reference while `raw` is `Some`.
        self.raw.map(|h| unsafe { &*h.as_ptr() })
    }

    /// Whether the task has finished (its output, or its error, is ready). Once the output
    /// has been taken (the handle was awaited to the end), `true`.
    #[must_use]
    pub fn is_finished(&self) -> bool {
        self.header().is_none_or(|h| is_complete(h.state.load()))
    }

    /// The output, if the task is complete: moved out, and the handle's reference dropped.
    fn try_take(&mut self) -> Option<Result<T, JoinError>> {
        let h = self.raw?;
        // SAFETY: we hold a reference.
        let hd = unsafe { h.as_ref() };
        if !is_complete(hd.state.load()) {
            return None;
        }
        let mut out: Option<Result<T, JoinError>> = None;
        // SAFETY: complete (Acquire): the stage is the handle's; `out` has the type the
        // task's `take_output` writes (type invariant).
        unsafe { (hd.vtable.take_output)(h, (&raw mut out).cast()) };
        self.release();
        Some(out.unwrap_or_else(|| unreachable!("a complete task holds its output until taken")))
    }

    /// Drops the handle's reference (the output, if any, was taken or is dropped here).
    fn release(&mut self) {
        if let Some(h) = self.raw.take() {
            // SAFETY: we hold a reference.
            let hd = unsafe { h.as_ref() };
            if hd.state.drop_handle() {
                let mut out: Option<Result<T, JoinError>> = None;
                // SAFETY: complete: the stage is ours; dropped here.
                unsafe { (hd.vtable.take_output)(h, (&raw mut out).cast()) };
                drop(out);
            }
            drop_ref(h);
        }
    }

    /// Blocks until the task finishes and returns its output, or why there is none.
    ///
    /// On a thread outside every pool, the thread blocks. On a worker (of any pool, the
    /// task's included) it does not block the worker: it runs other queued work of its own
    /// pool meanwhile, as `join` and `scope` do (rayon's latch wait), so the task it waits
    /// for can run, even on this worker.
    ///
    /// ```
    /// # use zonal_runtime::doc_facade as zonal;
    /// let pool = zonal::ThreadPoolBuilder::new().preset("s1").no_policy().build()?;
    /// let h = pool.spawn_handle(|| 6 * 7);
    /// assert_eq!(h.join().unwrap(), 42);
    /// # Ok::<(), zonal::BuildError>(())
    /// ```
    ///
    /// # Errors
    /// [`JoinError`]: the future panicked, or the pool shut down before it finished.
    ///
    /// # Panics
    /// If the handle was already awaited to the end (its output taken).
    pub fn join(mut self) -> Result<T, JoinError> {
        let Some(hd) = self.header() else {
            panic!("`JoinHandle::join` after the output was taken");
        };
        if !is_complete(hd.state.load()) {
            WorkerThread::with_current(|w| match w {
                Some(w) => {
                    let latch = Arc::new(LatchWaker(CrossLatch::new(&w.registry, w.index)));
                    hd.join_waker.register(&Waker::from(Arc::clone(&latch)));
                    if !is_complete(hd.state.load()) {
                        w.wait_until(&latch.0);
                    }
                }
                None => {
                    let thread = Arc::new(ThreadWaker(std::thread::current()));
                    hd.join_waker.register(&Waker::from(thread));
                    while !is_complete(hd.state.load()) {
                        std::thread::park();
                    }
                }
            });
        }
        self.try_take()
            .unwrap_or_else(|| unreachable!("woken at completion"))
    }
}

impl<T> Future for JoinHandle<T> {
    type Output = Result<T, JoinError>;

    /// # Panics
    /// If polled again after it returned `Ready`.
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Some(out) = self.try_take() {
            return Poll::Ready(out);
        }
        let Some(hd) = self.header() else {
            panic!("`JoinHandle` polled after it returned `Ready`");
        };
        hd.join_waker.register(cx.waker());
        match self.try_take() {
            Some(out) => Poll::Ready(out),
            None => Poll::Pending,
        }
    }
}

impl<T> Drop for JoinHandle<T> {
    fn drop(&mut self) {
        self.release();
    }
}

/// Wakes a worker blocked in [`JoinHandle::join`] by setting its latch.
struct LatchWaker(CrossLatch);

impl Wake for LatchWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        // SAFETY: the `Arc` keeps the latch alive through the call.
        unsafe { Latch::set(&self.0) };
    }
}

/// Wakes a plain thread blocked in [`JoinHandle::join`].
struct ThreadWaker(std::thread::Thread);

impl Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}
