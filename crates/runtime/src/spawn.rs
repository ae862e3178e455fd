//! Spawned `'static` tasks, from acceptance to completion: counted as pending when accepted
//! (the pool does not terminate before they finish), run with their panics handed to the
//! panic handler, and done (`sleep/README.md`, step 7). Where they go is `route.rs`'s.

use std::any::Any;
use std::sync::atomic::Ordering;

use crate::metrics::bump;
use crate::registry::Registry;
use crate::route::Target;
use crate::task_meta::TaskOptions;
use crate::unwind;
use crate::worker::WorkerThread;

/// Accepts a spawned `'static` task and routes it to `target` with `opts`.
#[inline]
pub(crate) fn spawn_static<F>(registry: &Registry, opts: TaskOptions, target: Target, f: F)
where
    F: FnOnce() + Send + 'static,
{
    accept_static(registry);
    crate::route::spawn(registry, opts, target, static_job(f));
}

/// Accepts a spawned `'static` task and queues it on `worker`'s away queue as a task of
/// `origin` living away from it (never migrated): the state a balancing pass moves tasks out
/// of (`ThreadPool::spawn_away`, for tests and benchmarks of the passes). Not routed: only
/// `worker` is woken, as for a task the balancer gives it.
pub(crate) fn spawn_away<F>(registry: &Registry, worker: usize, origin: u32, f: F)
where
    F: FnOnce() + Send + 'static,
{
    accept_static(registry);
    registry.injected.fetch_add(1, Ordering::Relaxed);
    let meta = crate::task_meta::Meta {
        flags: crate::task_meta::PLACED,
        ..crate::task_meta::Meta::fresh(origin)
    };
    let task = crate::job::HeapJob::task(None, meta, static_job(f));
    registry.push_away(worker, crate::sleep::Others::None, task);
}

/// Accepts a spawned `'static` task and queues it FIFO among the current worker's
/// FIFO spawns (`fifo.rs`).
#[inline]
pub(crate) fn spawn_static_fifo<F>(registry: &Registry, f: F)
where
    F: FnOnce() + Send + 'static,
{
    accept_static(registry);
    crate::fifo::spawn_fifo(
        registry,
        TaskOptions::new(),
        |w| &registry.shared[w].fifo,
        static_job(f),
    );
}

/// Counts an accepted `'static` task as pending.
#[inline]
fn accept_static(registry: &Registry) {
    // Relaxed: the pool cannot terminate while the caller holds `&ThreadPool` or runs as
    // a task of the pool (a task keeps its own count, or its owner blocks the pool's
    // drop); termination reads `pending` SeqCst after this increment in its
    // modification order.
    registry.pending.fetch_add(1, Ordering::Relaxed);
}

/// A spawned task finished (README step 7).
pub(crate) fn task_done(registry: &Registry) {
    // SeqCst: pairs with the SeqCst `terminate` store in `ThreadPool::drop`: whichever
    // comes second sees the other and wakes everyone.
    if registry.pending.fetch_sub(1, Ordering::SeqCst) == 1
        && registry.terminate.load(Ordering::SeqCst)
    {
        registry.sleep.wake_all();
    }
}

/// Hands a spawned task's panic to the handler (or reports it).
#[cold]
pub(crate) fn handle_panic(registry: &Registry, payload: Box<dyn Any + Send>) {
    WorkerThread::with_current(|w| {
        if let Some(w) = w {
            bump(&w.counters().panics, 1);
        }
    });
    match &registry.panic_handler {
        Some(h) => {
            // A panicking handler must not kill the worker either.
            let _ = unwind::halt_unwinding(|| h(payload));
        }
        None => {
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "<non-string panic payload>".into());
            tracing::error!(target: "zonal_runtime", "a spawned task panicked: {msg}");
        }
    }
}

/// The job of a spawned `'static` task: runs `f` on a worker, hands its panic to the
/// pool's handler, and marks the task done.
#[inline]
fn static_job<F: FnOnce() + Send + 'static>(f: F) -> impl FnOnce() + Send + 'static {
    move || {
        WorkerThread::with_current(|w| {
            // Spawned jobs run only on workers: they are queued in a registry.
            let registry = &w.expect("a spawned job runs on a worker").registry;
            if let Err(p) = unwind::halt_unwinding(f) {
                handle_panic(registry, p);
            }
            task_done(registry);
        });
    }
}
