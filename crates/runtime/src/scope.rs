//! `scope` and `in_place_scope`: spawn borrowing closures; the scope returns once all of
//! them have finished.
//!
//! Spawned closures are heap jobs whose lifetime `'scope` is erased in the `JobRef`. This
//! is sound because `Scope::complete` does not return before the scope's [`ScopeLatch`]
//! reaches zero, that is, before every spawned job has run, and the jobs only borrow data
//! that outlives the scope. Panics are kept (the first one) and resumed in the caller.
//!
//! The scope's owner — the thread that runs its body and waits for its jobs — is a worker of
//! the scope's pool (`scope`, and `in_place_scope` there), a worker of another pool
//! (`in_place_scope` there: it keeps working for its own pool while it waits), or a plain
//! thread (`in_place_scope` outside every pool: it blocks). Spawns go to the scope's pool
//! through the one routing path (`route.rs`), from whatever thread spawns.

use std::any::Any;
use std::marker::PhantomData;
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Arc;

use zonal_topology::NodeId;

use crate::error::SpawnError;
use crate::latch::{CountLatch, CountLockLatch, Latch, ScopeLatch};
use crate::registry::Registry;
use crate::route::Target;
use crate::task_meta::TaskOptions;
use crate::unwind;
use crate::worker::WorkerThread;

/// Makes `Scope` invariant in `'scope` (rayon's marker).
type ScopeMarker<'scope> = Box<dyn FnOnce(&Scope<'scope>) + Send + Sync + 'scope>;

/// A scope for spawning borrowing tasks; see [`ThreadPool::scope`](crate::ThreadPool::scope).
pub struct Scope<'scope> {
    pub(crate) registry: Arc<Registry>,
    pub(crate) latch: ScopeLatch,
    panic: AtomicPtr<Box<dyn Any + Send>>,
    /// Invariant in `'scope`, as rayon's.
    marker: PhantomData<ScopeMarker<'scope>>,
}

impl std::fmt::Debug for Scope<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scope").finish_non_exhaustive()
    }
}

/// A `*const Scope` that may cross threads: the scope outlives every job that holds one.
pub(crate) struct ScopePtr<T>(pub(crate) *const T);
// SAFETY: `Scope` is `Sync` (atomics, an `Arc`, a `CountLatch` that is Sync) and outlives
// the jobs holding this pointer (module doc).
unsafe impl<T: Sync> Send for ScopePtr<T> {}
impl<T> ScopePtr<T> {
    /// # Safety
    /// The scope must still be alive (it is, while any of its jobs runs).
    pub(crate) unsafe fn as_ref(&self) -> &T {
        // SAFETY: guaranteed by the caller.
        unsafe { &*self.0 }
    }
}

pub(crate) fn scope_in_worker<'scope, OP, R>(wt: &WorkerThread, op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R + Send,
    R: Send,
{
    let scope = Scope::new(&wt.registry, Some(wt));
    scope.complete(Some(wt), || op(&scope))
}

/// `in_place_scope` on `registry`'s pool: the body runs here, on the calling thread.
pub(crate) fn in_place_scope_in<'scope, OP, R>(registry: &Arc<Registry>, op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R,
{
    WorkerThread::with_current(|owner| {
        let scope = Scope::new(registry, owner);
        scope.complete(owner, || op(&scope))
    })
}

impl<'scope> Scope<'scope> {
    /// A scope on `registry`'s pool, owned by the current thread (`owner`: its worker, of
    /// any pool, if it is one).
    pub(crate) fn new(registry: &Arc<Registry>, owner: Option<&WorkerThread>) -> Self {
        let latch = match owner {
            Some(w) => ScopeLatch::Stealing(CountLatch::new(&w.registry, w.index)),
            None => ScopeLatch::Blocking(CountLockLatch::new()),
        };
        Self {
            registry: Arc::clone(registry),
            latch,
            panic: AtomicPtr::new(ptr::null_mut()),
            marker: PhantomData,
        }
    }

    /// Runs the scope's body `op` here, then waits (working if `owner` is a worker) until
    /// every spawned job has finished; resumes the first panic.
    pub(crate) fn complete<R>(&self, owner: Option<&WorkerThread>, op: impl FnOnce() -> R) -> R {
        let result = match unwind::halt_unwinding(op) {
            Ok(r) => Some(r),
            Err(p) => {
                self.job_panicked(p);
                None
            }
        };
        // Our own count.
        // SAFETY: the latch lives in `self`, which the caller keeps alive until we return.
        unsafe { Latch::set(&self.latch) };
        match (&self.latch, owner) {
            (ScopeLatch::Stealing(l), Some(w)) => w.wait_until(l),
            (ScopeLatch::Blocking(l), _) => l.wait(),
            (ScopeLatch::Stealing(_), None) => unreachable!("a stealing latch has an owner"),
        }
        self.maybe_propagate_panic();
        result.expect("scope operation panicked, but no panic was recorded")
    }

    /// Spawns a task that may borrow from outside the scope; it is a child of the task
    /// running here and inherits its origin (from outside the pool: the next node with
    /// workers).
    ///
    /// ```
    /// # use zonal_runtime::doc_facade as zonal;
    /// let pool = zonal::ThreadPoolBuilder::new().preset("s1").no_policy().build()?;
    /// let mut v = vec![0; 4];
    /// pool.scope(|s| for (i, x) in v.iter_mut().enumerate() { s.spawn(move |_| *x = i) });
    /// assert_eq!(v, [0, 1, 2, 3]);
    /// # Ok::<(), zonal::BuildError>(())
    /// ```
    pub fn spawn<F>(&self, body: F)
    where
        F: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        self.spawn_inner(TaskOptions::new(), Target::Here, body);
    }

    /// Spawns with explicit [`TaskOptions`] (origin, group, weight, continuation). With an
    /// origin and from outside the pool, the task goes to that node's injector.
    ///
    /// # Panics
    /// If the options name an origin outside the pool's topology; see
    /// [`try_spawn_with`](Self::try_spawn_with).
    pub fn spawn_with<F>(&self, opts: TaskOptions, body: F)
    where
        F: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        if let Err(e) = self.try_spawn_with(opts, body) {
            panic!("{e}");
        }
    }

    /// [`spawn_with`](Self::spawn_with), or an error (and the task not accepted) if the
    /// options name an origin outside the pool's topology.
    ///
    /// # Errors
    /// [`SpawnError::UnknownNode`] for such an origin.
    pub fn try_spawn_with<F>(&self, opts: TaskOptions, body: F) -> Result<(), SpawnError>
    where
        F: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        self.registry.check_options(&opts)?;
        self.spawn_inner(opts, Target::Here, body);
        Ok(())
    }

    /// Spawns onto `node`'s injector: the task's origin is `node` (a [`NodeId`], or its
    /// dense index as a `usize`: `s.spawn_on(1, ...)`).
    ///
    /// # Panics
    /// If `node` is not a node of the pool's topology; see
    /// [`try_spawn_on`](Self::try_spawn_on).
    pub fn spawn_on<F>(&self, node: impl Into<NodeId>, body: F)
    where
        F: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        if let Err(e) = self.try_spawn_on(node.into(), body) {
            panic!("{e}");
        }
    }

    /// [`spawn_on`](Self::spawn_on), or an error (and the task not accepted) if `node` is not
    /// a node of the pool's topology.
    ///
    /// # Errors
    /// [`SpawnError::UnknownNode`].
    pub fn try_spawn_on<F>(&self, node: NodeId, body: F) -> Result<(), SpawnError>
    where
        F: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        self.registry.check_node(node)?;
        self.spawn_inner(TaskOptions::new(), Target::Node(node), body);
        Ok(())
    }

    /// Spawns onto worker `worker`'s inbox (never stolen): `broadcast`.
    pub(crate) fn spawn_pinned<F>(&self, worker: usize, body: F)
    where
        F: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        self.spawn_inner(TaskOptions::new(), Target::Worker(worker), body);
    }

    /// Every spawn of the scope: counts the job in the scope's latch and routes it.
    fn spawn_inner<F>(&self, opts: TaskOptions, target: Target, body: F)
    where
        F: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        self.latch.increment();
        let me = ScopePtr(self as *const Scope<'scope>);
        crate::route::spawn(&self.registry, opts, target, move || {
            // SAFETY: the scope waits for this job (its count) before it goes away.
            let scope = unsafe { me.as_ref() };
            if let Err(p) = unwind::halt_unwinding(|| body(scope)) {
                scope.job_panicked(p);
            }
            // SAFETY: the latch is alive: we still hold our count.
            unsafe { Latch::set(&scope.latch) };
        });
    }

    pub(crate) fn job_panicked(&self, p: Box<dyn Any + Send>) {
        let boxed = Box::into_raw(Box::new(p));
        // AcqRel on success: publishes the payload to `maybe_propagate_panic`; only the
        // first panic is kept.
        if self
            .panic
            .compare_exchange(ptr::null_mut(), boxed, Ordering::AcqRel, Ordering::Relaxed)
            .is_err()
        {
            // SAFETY: `boxed` came from Box::into_raw just above and was not published.
            drop(unsafe { Box::from_raw(boxed) });
        }
    }

    fn maybe_propagate_panic(&self) {
        // Acquire: pairs with the AcqRel CAS in `job_panicked` (and the latch already
        // ordered every job's end before us).
        let p = self.panic.swap(ptr::null_mut(), Ordering::Acquire);
        if !p.is_null() {
            // SAFETY: a non-null pointer came from Box::into_raw in `job_panicked`, and the
            // swap took it out, so we own it.
            let payload = unsafe { Box::from_raw(p) };
            unwind::resume_unwinding(*payload);
        }
    }
}
