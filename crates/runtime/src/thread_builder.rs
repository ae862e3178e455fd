//! How worker threads are made (rayon's `ThreadBuilder` and spawn handlers), and how a pool
//! waits for them to exit whoever spawned them.
//!
//! Every worker but an adopted one ([`ThreadPoolBuilder::use_current_thread`]) starts as a
//! [`ThreadBuilder`] handed to the builder's spawner: [`DefaultSpawn`] (a
//! `std::thread::Builder` with the worker's name and stack size) or the user's
//! [`ThreadPoolBuilder::spawn_handler`]. The thread it makes calls [`ThreadBuilder::run`],
//! which is the whole life of a worker thread, the same for both: pin itself, report how
//! that went, wait for the pool's registry, run the worker loop.
//!
//! Zonal holds no `JoinHandle` of its workers: each `ThreadBuilder` holds one count of the
//! pool's [`Exits`] from its creation, given back when the worker's body has returned (after
//! its exit handler, its registry released) or when the builder is dropped without running.
//! [`ThreadPool::shutdown_and_wait`] waits for that count to reach zero, so its semantics do
//! not depend on how the threads were spawned.
//!
//! [`ThreadPoolBuilder::use_current_thread`]: crate::ThreadPoolBuilder::use_current_thread
//! [`ThreadPoolBuilder::spawn_handler`]: crate::ThreadPoolBuilder::spawn_handler
//! [`ThreadPool::shutdown_and_wait`]: crate::ThreadPool::shutdown_and_wait

use std::fmt;
use std::io;
use std::sync::{mpsc, Arc, Condvar, Mutex};

use crate::queues::Deque;
use crate::registry::Registry;
use crate::worker::WorkerThread;

/// The worker threads of a pool that have not exited yet.
#[derive(Debug, Default)]
pub(crate) struct Exits {
    live: Mutex<usize>,
    all_gone: Condvar,
    /// The threads [`DefaultSpawn`] started: joined by [`wait`](Self::wait), so that once it
    /// returns they are gone from the process, not only done (a custom spawner's threads
    /// are the spawner's to join).
    handles: Mutex<Vec<std::thread::JoinHandle<()>>>,
}

impl Exits {
    /// One more worker thread to wait for; its count is given back when the guard drops.
    pub(crate) fn enter(self: &Arc<Self>) -> ExitGuard {
        *self.live.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        ExitGuard(Arc::clone(self))
    }

    /// Blocks until every counted worker thread has exited, and joins those the default
    /// spawner started. Never called from one of them.
    pub(crate) fn wait(&self) {
        let live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        let gone = self
            .all_gone
            .wait_while(live, |n| *n > 0)
            .unwrap_or_else(|e| e.into_inner());
        drop(gone);
        let handles = std::mem::take(&mut *self.handles.lock().unwrap_or_else(|e| e.into_inner()));
        for h in handles {
            // A worker's body catches its tasks' panics; a panic of its own was reported.
            let _ = h.join();
        }
    }

    /// Keeps the handle of a thread the default spawner started, for [`wait`](Self::wait).
    fn adopt(&self, h: std::thread::JoinHandle<()>) {
        self.handles
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(h);
    }
}

/// One worker thread's count in [`Exits`].
#[derive(Debug)]
pub(crate) struct ExitGuard(Arc<Exits>);

impl Drop for ExitGuard {
    fn drop(&mut self) {
        let mut live = self.0.live.lock().unwrap_or_else(|e| e.into_inner());
        *live -= 1;
        if *live == 0 {
            self.0.all_gone.notify_all();
        }
    }
}

/// A worker that could not be pinned.
#[derive(Clone, Debug)]
pub(crate) struct PinFailure {
    pub(crate) worker: usize,
    pub(crate) cpu: u32,
    /// The call and the OS's error (`sched_setaffinity: Invalid argument (os error 22)`).
    pub(crate) reason: String,
}

/// What each worker thread reports to the build, once.
#[derive(Debug)]
pub(crate) enum Report {
    /// It started and pinned itself (or not: the failure).
    Started(Option<PinFailure>),
    /// Its [`ThreadBuilder`] was dropped without [`run`](ThreadBuilder::run): the spawn
    /// handler failed, or did not run it.
    Dropped(usize),
}

/// What a worker's thread needs besides its name and stack size.
pub(crate) struct Body {
    pub(crate) deque: Deque,
    pub(crate) pin: Option<u32>,
    pub(crate) report: mpsc::Sender<Report>,
    pub(crate) go: mpsc::Receiver<Arc<Registry>>,
    #[cfg(feature = "tokio")]
    pub(crate) tokio: Option<tokio::runtime::Handle>,
    pub(crate) exit: ExitGuard,
}

/// A worker thread to be started (rayon's `ThreadBuilder`): handed to a
/// [`spawn_handler`](crate::ThreadPoolBuilder::spawn_handler), whose thread must call
/// [`run`](Self::run).
///
/// [`ThreadPoolBuilder::build`](crate::ThreadPoolBuilder::build) returns once every worker
/// has started running (it waits for each to pin itself): a handler must start the thread
/// before it returns, or at least not make its start wait for `build`. A `ThreadBuilder`
/// dropped without being run fails the build ([`BuildError`](crate::BuildError)).
pub struct ThreadBuilder {
    index: usize,
    name: Option<String>,
    stack_size: Option<usize>,
    /// `None` once run.
    body: Option<Body>,
}

impl fmt::Debug for ThreadBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThreadBuilder")
            .field("index", &self.index)
            .field("name", &self.name)
            .field("stack_size", &self.stack_size)
            .finish_non_exhaustive()
    }
}

impl ThreadBuilder {
    pub(crate) fn new(
        index: usize,
        name: Option<String>,
        stack_size: Option<usize>,
        body: Body,
    ) -> Self {
        Self {
            index,
            name,
            stack_size,
            body: Some(body),
        }
    }

    /// The index of the worker this thread will be.
    #[must_use]
    pub fn index(&self) -> usize {
        self.index
    }

    /// The name the thread should have: the builder's
    /// [`thread_name`](crate::ThreadPoolBuilder::thread_name), or `zonal-worker-{index}`.
    #[must_use]
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The stack size the thread should have, if the builder was given one
    /// ([`stack_size`](crate::ThreadPoolBuilder::stack_size)).
    #[must_use]
    pub fn stack_size(&self) -> Option<usize> {
        self.stack_size
    }

    /// Runs the worker on the current thread until the pool terminates: pins the thread to
    /// the worker's CPU (where the pool pins), waits until the pool is built, then works.
    /// Returns when the pool has been dropped and has no task left (after the worker's
    /// [`exit_handler`](crate::ThreadPoolBuilder::exit_handler)), or at once if the build
    /// failed.
    pub fn run(mut self) {
        let Some(body) = self.body.take() else {
            return;
        };
        run_body(self.index, body);
    }
}

impl Drop for ThreadBuilder {
    fn drop(&mut self) {
        if let Some(body) = self.body.take() {
            let _ = body.report.send(Report::Dropped(self.index));
        }
    }
}

/// The life of worker thread `i`; its count in [`Exits`] is given back when it returns.
fn run_body(i: usize, body: Body) {
    let Body {
        deque,
        pin,
        report,
        go,
        #[cfg(feature = "tokio")]
        tokio,
        exit,
    } = body;
    let failed = pin.and_then(|cpu| pin_current(i, cpu).err());
    let _ = report.send(Report::Started(failed));
    drop(report);
    if let Ok(registry) = go.recv() {
        // The worker's whole life, start and exit handlers included, in the runtime's
        // context; the guard drops after `run` returns (no other guard nests inside it).
        #[cfg(feature = "tokio")]
        let _tokio = tokio.as_ref().map(tokio::runtime::Handle::enter);
        WorkerThread::new(deque, i, registry).run();
    }
    drop(exit);
}

/// Pins the current thread, as worker `worker`, to `cpu`.
pub(crate) fn pin_current(worker: usize, cpu: u32) -> Result<(), PinFailure> {
    crate::os::pin_current_thread(cpu).map_err(|e| PinFailure {
        worker,
        cpu,
        reason: format!("{}: {e}", crate::os::PIN_CALL),
    })
}

mod sealed {
    /// Seals [`ThreadSpawn`](super::ThreadSpawn): its implementations are this crate's.
    #[allow(unreachable_pub)]
    pub trait Sealed {}
}

/// How a builder starts its worker threads: [`DefaultSpawn`], or a
/// [`spawn_handler`](crate::ThreadPoolBuilder::spawn_handler)'s [`CustomSpawn`]. Sealed, as
/// rayon's.
pub trait ThreadSpawn: sealed::Sealed {
    /// Starts a thread that calls `thread.run()`.
    ///
    /// # Errors
    /// The OS's (or the handler's) error if the thread cannot be started.
    fn spawn(&mut self, thread: ThreadBuilder) -> io::Result<()>;
}

/// The default spawner: a `std::thread::Builder` with the worker's name and stack size.
#[derive(Debug, Default, Clone, Copy)]
pub struct DefaultSpawn;

impl sealed::Sealed for DefaultSpawn {}

impl ThreadSpawn for DefaultSpawn {
    fn spawn(&mut self, thread: ThreadBuilder) -> io::Result<()> {
        let mut b = std::thread::Builder::new();
        if let Some(name) = thread.name() {
            b = b.name(name.to_owned());
        }
        if let Some(size) = thread.stack_size() {
            b = b.stack_size(size);
        }
        let exits = thread.body.as_ref().map(|b| Arc::clone(&b.exit.0));
        let handle = b.spawn(move || thread.run())?;
        if let Some(exits) = exits {
            exits.adopt(handle);
        }
        Ok(())
    }
}

/// A user's spawn handler ([`ThreadPoolBuilder::spawn_handler`](crate::ThreadPoolBuilder::spawn_handler)).
pub struct CustomSpawn<F>(F);

impl<F> fmt::Debug for CustomSpawn<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CustomSpawn(<closure>)")
    }
}

impl<F> CustomSpawn<F>
where
    F: FnMut(ThreadBuilder) -> io::Result<()>,
{
    pub(crate) fn new(f: F) -> Self {
        Self(f)
    }
}

impl<F> sealed::Sealed for CustomSpawn<F> where F: FnMut(ThreadBuilder) -> io::Result<()> {}

impl<F> ThreadSpawn for CustomSpawn<F>
where
    F: FnMut(ThreadBuilder) -> io::Result<()>,
{
    fn spawn(&mut self, thread: ThreadBuilder) -> io::Result<()> {
        (self.0)(thread)
    }
}
