//! Communication on the calling thread while the pool computes (the protocol is in the
//! [crate documentation](crate#the-overlap-protocol)).

use std::thread::ThreadId;
use std::time::{Duration, Instant};

use zonal_runtime::ThreadPool;

use crate::MpiError;

/// What [`overlap`] returns: both results and where the time went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Overlapped<A, B> {
    /// What `compute` returned.
    pub compute: A,
    /// What `comm` returned.
    pub comm: B,
    /// How long `compute` ran on its worker (with the work it forked and joined).
    pub compute_time: Duration,
    /// How long the calling thread spent in `comm`, its MPI waits included.
    pub comm_time: Duration,
    /// How long the calling thread then waited for `compute` to finish (0 when it had
    /// finished before `comm` did).
    pub wait_time: Duration,
}

/// Runs `compute` on `pool` and, meanwhile, `comm` on the calling thread (the thread that
/// initialised MPI, [`init_funneled`](crate::init_funneled)); returns once both have
/// finished. `compute` never runs on the calling thread and `comm` never on a worker, so no
/// worker calls MPI or waits on a request.
///
/// ```
/// let pool = zonal_runtime::ThreadPoolBuilder::new().num_threads(2).build()?;
/// let mut halo = [0.0f64; 4];
/// let interior = vec![1.0f64; 1000];
/// let out = zonal_mpi::overlap(
///     &pool,
///     || interior.iter().sum::<f64>(),   // on a worker
///     || { halo.fill(2.0); "exchanged" },  // here: MPI Isend/Irecv and their waits
/// )?;
/// assert_eq!((out.compute, out.comm), (1000.0, "exchanged"));
/// assert_eq!(halo, [2.0; 4]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// [`MpiError::OnWorker`] when called from a worker of `pool`; [`MpiError::NotInitThread`]
/// when MPI was initialised through [`init_funneled`](crate::init_funneled) on another
/// thread. Neither closure runs then.
///
/// # Panics
/// A panic of either closure resumes here, once `compute` has finished.
pub fn overlap<C, M, A, B>(
    pool: &ThreadPool,
    compute: C,
    comm: M,
) -> Result<Overlapped<A, B>, MpiError>
where
    C: FnOnce() -> A + Send,
    A: Send,
    M: FnOnce() -> B,
{
    overlap_on(pool, crate::init::init_thread(), compute, comm)
}

/// [`overlap`] with the thread allowed to communicate given: `Some(id)` requires the
/// calling thread to be `id`, `None` accepts any thread that is not a worker of `pool`.
///
/// # Errors
/// As [`overlap`].
///
/// # Panics
/// As [`overlap`].
pub fn overlap_on<C, M, A, B>(
    pool: &ThreadPool,
    comm_thread: Option<ThreadId>,
    compute: C,
    comm: M,
) -> Result<Overlapped<A, B>, MpiError>
where
    C: FnOnce() -> A + Send,
    A: Send,
    M: FnOnce() -> B,
{
    if let Some(worker) = pool.current_thread_index() {
        return Err(MpiError::OnWorker { worker });
    }
    if comm_thread.is_some_and(|id| id != std::thread::current().id()) {
        return Err(MpiError::NotInitThread);
    }
    let mut computed: Option<(A, Duration)> = None;
    let slot = &mut computed;
    // `in_place_scope` runs its body on this thread and waits, outside the pool, for what
    // it spawned: the body spawns `compute`, runs `comm`, and the scope's end is the wait.
    let (comm_out, comm_time, comm_end) = pool.in_place_scope(move |s| {
        s.spawn(move |_| {
            let t = Instant::now();
            let a = compute();
            *slot = Some((a, t.elapsed()));
        });
        let t = Instant::now();
        let b = comm();
        let end = Instant::now();
        (b, end - t, end)
    });
    let wait_time = comm_end.elapsed();
    let (compute_out, compute_time) = computed.unwrap_or_else(|| {
        unreachable!(
            "in_place_scope returned before its spawned task ran, or without resuming its panic"
        )
    });
    Ok(Overlapped {
        compute: compute_out,
        comm: comm_out,
        compute_time,
        comm_time,
        wait_time,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use zonal_runtime::ThreadPoolBuilder;

    fn pool(n: usize) -> ThreadPool {
        ThreadPoolBuilder::new().num_threads(n).build().unwrap()
    }

    #[test]
    fn compute_on_a_worker_comm_here() {
        let pool = pool(2);
        let me = std::thread::current().id();
        let out = overlap_on(
            &pool,
            Some(me),
            || {
                (
                    zonal_runtime::current_worker_index(),
                    std::thread::current().id(),
                )
            },
            || {
                (
                    zonal_runtime::current_worker_index(),
                    std::thread::current().id(),
                )
            },
        )
        .unwrap();
        assert!(out.compute.0.is_some());
        assert_ne!(out.compute.1, me);
        assert_eq!(out.comm, (None, me));
    }

    #[test]
    fn both_run_at_once() {
        // Each side waits for the other's message: run one after the other, this would time
        // out (the timeout only keeps a broken build from hanging the test run).
        let pool = pool(1);
        let (to_comm, from_compute) = mpsc::channel();
        let (to_compute, from_comm) = mpsc::channel();
        let long = Duration::from_secs(120);
        let out = overlap(
            &pool,
            move || {
                to_comm.send(1).unwrap();
                from_comm.recv_timeout(long).is_ok()
            },
            move || {
                let got = from_compute.recv_timeout(long).is_ok();
                to_compute.send(2).unwrap();
                got
            },
        )
        .unwrap();
        assert!(out.compute && out.comm);
    }

    #[test]
    fn borrows_one_side_shared_and_the_other_exclusive() {
        let pool = pool(2);
        let data: Vec<u64> = (0..10_000).collect();
        let mut halo = vec![0u64; 8];
        let out = overlap(
            &pool,
            || {
                pool.par_reduce(
                    0..data.len(),
                    64,
                    || 0,
                    |r| data[r].iter().sum(),
                    |a, b| a + b,
                )
            },
            || {
                halo.iter_mut().enumerate().for_each(|(i, h)| *h = i as u64);
                halo.len()
            },
        )
        .unwrap();
        assert_eq!(out.compute, 10_000 * 9_999 / 2);
        assert_eq!(out.comm, 8);
        assert_eq!(halo, [0, 1, 2, 3, 4, 5, 6, 7]);
    }

    #[test]
    fn refused_on_a_worker() {
        let pool = pool(1);
        let inner = pool.install(|| {
            let mut ran = false;
            let r = overlap_on(&pool, None, || (), || ran = true);
            (r.map(|_| ()), ran)
        });
        assert!(matches!(inner.0, Err(MpiError::OnWorker { worker: 0 })));
        assert!(!inner.1);
    }

    #[test]
    fn refused_on_another_thread() {
        let pool = pool(1);
        let other = std::thread::spawn(|| std::thread::current().id())
            .join()
            .unwrap();
        let mut ran = false;
        let r = overlap_on(&pool, Some(other), || (), || ran = true);
        assert!(matches!(r, Err(MpiError::NotInitThread)));
        assert!(!ran);
    }

    #[test]
    fn a_compute_panic_resumes_here() {
        let pool = pool(1);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            overlap(&pool, || panic!("boom"), || 1)
        }));
        assert!(r.is_err());
    }
}
