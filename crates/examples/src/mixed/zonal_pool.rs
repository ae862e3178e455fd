//! Setup (c): Zonal alone. The server's tasks are the pool's async tasks, entering a tokio
//! runtime whose only job is its reactor and timers (a current-thread runtime kept in
//! `block_on` by one thread of its own, given to the pool with
//! `ThreadPoolBuilder::tokio_handle`); the requests' computations and the batch job run
//! `par_iter` on the same pool.

use std::thread::JoinHandle;

use zonal::prelude::*;
use zonal::runtime::ThreadPool;

use super::setup::{Backend, BoxFuture};
use super::work::{mix, Work};
use super::MixedError;

/// The tokio runtime that drives the sockets and timers: one thread in `block_on` until
/// dropped.
#[derive(Debug)]
struct Reactor {
    handle: tokio::runtime::Handle,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Reactor {
    fn start() -> Result<Self, MixedError> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| MixedError::io("start tokio's reactor", e))?;
        let handle = rt.handle().clone();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("mixed-reactor".into())
            .spawn(move || {
                // Either a stop or a dropped sender ends it.
                let _ = rt.block_on(stopped);
            })
            .map_err(|e| MixedError::io("start the reactor's thread", e))?;
        Ok(Self {
            handle,
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

impl Drop for Reactor {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            // A panic on that thread has been printed already; nothing more to do here.
            let _ = t.join();
        }
    }
}

/// Zonal's pool (this machine's, or a virtual S1 one) and the reactor its tasks enter.
#[derive(Debug)]
pub(crate) struct ZonalPool {
    // Dropped before the reactor: the tasks use it until they are cancelled.
    pool: Option<ThreadPool>,
    reactor: Reactor,
}

impl ZonalPool {
    /// A pool on this machine (one worker per CPU), or on the S1 preset with `s1`.
    pub(crate) fn start(s1: bool) -> Result<Box<dyn Backend>, MixedError> {
        let reactor = Reactor::start()?;
        let mut builder = zonal::ThreadPoolBuilder::new()
            .tokio_handle(reactor.handle.clone())
            .thread_name(|i| format!("mixed-zonal-{i}"));
        if s1 {
            builder = builder.preset("s1");
        }
        let pool = builder.build()?;
        Ok(Box::new(Self {
            pool: Some(pool),
            reactor,
        }))
    }

    fn pool(&self) -> &ThreadPool {
        self.pool.as_ref().expect("the pool lives until drop")
    }
}

/// The computation with Zonal's `par_iter` (on the pool of the calling worker).
fn par_fold(work: &Work) -> u64 {
    work.slice()
        .par_iter()
        .map(|&x| mix(x))
        .reduce(|| 0, u64::wrapping_add)
}

impl Backend for ZonalPool {
    fn reactor(&self) -> tokio::runtime::Handle {
        self.reactor.handle.clone()
    }

    fn spawn(&self, task: BoxFuture<()>) {
        // Detached: the server's tasks end on their own, or are cancelled at shutdown.
        drop(self.pool().spawn_async(task));
    }

    fn compute(&self, work: Work) -> BoxFuture<Option<u64>> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.pool().spawn(move || {
            // The receiver may be gone (the request was abandoned): nothing to do.
            let _ = tx.send(par_fold(&work));
        });
        Box::pin(async move { rx.await.ok() })
    }

    fn batch(&self, work: &Work) -> u64 {
        self.pool().install(|| par_fold(work))
    }

    fn threads(&self) -> String {
        let pool = self.pool();
        if pool.is_virtual() {
            format!("{} Zonal (virtual)", pool.num_workers())
        } else {
            format!("{} Zonal", pool.num_workers())
        }
    }
}

impl Drop for ZonalPool {
    fn drop(&mut self) {
        // Cancels the idle tasks and waits for the workers, so that the next setup starts
        // on quiet CPUs; the reactor stops after.
        if let Some(pool) = self.pool.take() {
            pool.shutdown_and_wait();
        }
    }
}
