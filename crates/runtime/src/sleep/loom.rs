//! Model tests of the sleep protocol and the latch handshake under loom: every interleaving
//! (up to a preemption bound) of workers going to sleep while others push work or set the
//! latch they wait on, on the very `Sleep` and `CoreLatch` the pool runs. A lost wake-up
//! leaves a worker parked for ever, which loom reports as a deadlock.
//!
//! ```text
//! RUSTFLAGS="--cfg zonal_loom" cargo test -p zonal-runtime --lib --release sleep::loom
//! ```
//!
//! The queue is a counter pushed and searched with `Relaxed` accesses: the protocol must not
//! lean on the queue's own ordering, only on its fences (README, "Why no wake-up is lost").
//!
//! Every push goes through the pool's one push-and-wake function (`Sleep::push_and_wake`),
//! with the queue kind's [`Owner`] and [`Others`], exactly as `queues/push.rs` calls it.
//!
//! The model does see lost wake-ups: with `Owner::Pusher` (no fence; correct only for a
//! pusher that searches its own queue before it sleeps) in place of `Owner::Node` in the
//! first test, loom reports `deadlock; threads = [.. Blocked ..]` (checked by hand; loom
//! aborts on that path, so it cannot be kept as a `should_panic` test).

use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use loom::sync::{Arc, Condvar, Mutex};
use loom::thread;

use super::{Others, Owner, Sleep};
use crate::latch::CoreLatch;
use crate::loom_support::{self, take};

/// A worker's idle loop (`worker.rs`, `idle_loop`, without the spinning): search, get
/// sleepy, search again, park; until it has taken one job (exact with one worker, and no
/// later push to trust its searcher's place; with several, see `Model::worker`).
fn worker(sleep: &Sleep, queue: &AtomicUsize, index: usize) {
    loop {
        if take(queue) {
            return;
        }
        let sleepy = sleep.get_sleepy(index);
        if take(queue) {
            let _ = sleep.cancel(sleepy);
            return;
        }
        let _ = sleep.park(sleepy);
    }
}

/// Explores with at most 2 preemptions per execution (seconds), unless
/// `LOOM_MAX_PREEMPTIONS` says otherwise (3 takes minutes).
fn model(f: impl Fn() + Sync + Send + 'static) {
    loom_support::model(2, f);
}

/// The searcher models (two model workers and a producer, each worker looping until it
/// parks): with at most 1 preemption per execution, unless `LOOM_MAX_PREEMPTIONS` says
/// otherwise. Every idle worker searches, so both workers run the whole protocol at once,
/// and a bound of 2 takes loom well over ten minutes on two shared cores (run it so before
/// changing the protocol: `LOOM_MAX_PREEMPTIONS=2`).
fn model_searchers(f: impl Fn() + Sync + Send + 'static) {
    loom_support::model(1, f);
}

#[test]
fn a_push_wakes_the_worker_going_to_sleep() {
    model(|| {
        let sleep = Arc::new(new_sleep(&[0], 1));
        let queue = Arc::new(AtomicUsize::new(0));
        let (s, q) = (Arc::clone(&sleep), Arc::clone(&queue));
        let w = thread::spawn(move || worker(&s, &q, 0));
        sleep.push_and_wake(Owner::Node(0), Others::Origin(0), || {
            queue.fetch_add(1, Ordering::Relaxed);
        });
        w.join().unwrap();
    });
}

/// Jobs a model has finished, for the producer to wait on.
struct Done {
    count: Mutex<usize>,
    cv: Condvar,
}

/// The other half of the idle loop: a worker blocked in `join` waits on a latch, parks,
/// and is woken by whoever sets it; the result written before the latch is set is seen.
#[test]
fn a_latch_set_wakes_its_sleeping_owner_and_publishes_the_result() {
    model(|| {
        let sleep = Arc::new(new_sleep(&[0], 1));
        let latch = Arc::new(CoreLatch::new());
        let result = Arc::new(AtomicUsize::new(0));
        let (s, l, r) = (Arc::clone(&sleep), Arc::clone(&latch), Arc::clone(&result));
        let owner = thread::spawn(move || {
            loop {
                if l.probe() {
                    break;
                }
                let sleepy = s.get_sleepy(0);
                if l.probe() || !l.fall_asleep() {
                    let _ = s.cancel(sleepy);
                    break;
                }
                let _ = s.park(sleepy);
                l.wake_up();
            }
            assert_eq!(r.load(Ordering::Relaxed), 42, "the result is visible");
        });
        result.store(42, Ordering::Relaxed);
        // SAFETY: the latch is alive (an Arc) and set once.
        if unsafe { CoreLatch::set(&*latch) } {
            sleep.wake_worker(0);
        }
        owner.join().unwrap();
    });
}

// ---- The searchers (README steps 0a–0c, 5') ----

/// What a model of the searching protocol shares: the sleep state, a queue per node
/// (`queues[n]`: only workers of node `n` may take from it, the others are refused, as the
/// policy refuses another zone's task), the jobs run, and the stop flag of step 7.
struct Model {
    sleep: Sleep,
    queues: Vec<AtomicUsize>,
    done: Done,
    stop: AtomicBool,
    /// Jobs started, for jobs that wait until `barrier` of them have started (jobs that
    /// need that many workers at once); 0: jobs do not wait.
    started: Mutex<usize>,
    started_cv: Condvar,
    barrier: usize,
}

impl Model {
    fn new(worker_node: &[u32], nodes: usize, barrier: usize) -> Arc<Self> {
        Arc::new(Self {
            sleep: new_sleep(worker_node, nodes),
            queues: (0..nodes).map(|_| AtomicUsize::new(0)).collect(),
            done: Done {
                count: Mutex::new(0),
                cv: Condvar::new(),
            },
            stop: AtomicBool::new(false),
            started: Mutex::new(0),
            started_cv: Condvar::new(),
            barrier,
        })
    }

    fn job(&self) {
        if self.barrier > 0 {
            let mut s = self.started.lock().unwrap();
            *s += 1;
            self.started_cv.notify_all();
            while *s < self.barrier {
                s = self.started_cv.wait(s).unwrap();
            }
        }
        *self.done.count.lock().unwrap() += 1;
        self.done.cv.notify_all();
    }

    /// A search by a worker of `node`: takes a job of its node's queue; `Err(())`: none,
    /// but another node's queue had one (refused).
    fn search(&self, node: usize) -> Result<bool, ()> {
        if take(&self.queues[node]) {
            return Ok(true);
        }
        let refused = self
            .queues
            .iter()
            .enumerate()
            .any(|(n, q)| n != node && q.load(Ordering::Relaxed) != 0);
        if refused {
            Err(())
        } else {
            Ok(false)
        }
    }

    /// A worker's idle loop as `worker.rs` runs it (without spinning, and with every
    /// queue behind the steal walk): become a searcher (0a), search; found
    /// as a searcher: stop and maybe wake one more (0b); else stop searching — the last
    /// searcher notes it (0c) — get sleepy (1), search again (2), cancel (3) or wake a
    /// sleeper of refused work (0c) and park (4); a wake-up by `wake_one` makes it a
    /// searcher. Exits on `stop` (7).
    fn worker(&self, index: usize, node: usize) {
        self.worker_from(index, node, None);
    }

    /// [`worker`](Self::worker), starting registered as sleepy (step 1 done for it, by the
    /// thread that spawned it): its first step is the re-search (step 2).
    fn worker_from(&self, index: usize, node: usize, mut sleepy: Option<super::Sleepy>) {
        let s = &self.sleep;
        let n = node as u32;
        let mut searching = false;
        loop {
            if let Some(token) = sleepy.take() {
                if self.search(node) == Ok(true) {
                    if s.cancel(token) {
                        s.found_work(n);
                    }
                    self.job();
                    continue;
                }
                searching = s.park(token);
                continue;
            }
            if !searching {
                s.start_searching(n);
                searching = true;
            }
            if self.search(node) == Ok(true) {
                searching = false;
                s.found_work(n);
                self.job();
                continue;
            }
            if self.stop.load(Ordering::SeqCst) {
                if searching {
                    s.found_work(n);
                }
                return;
            }
            if searching {
                let _ = s.stop_searching(n);
            }
            searching = false;
            let sleepy = s.get_sleepy(index);
            if self.search(node) == Ok(true) {
                if s.cancel(sleepy) {
                    s.found_work(n);
                }
                self.job();
                continue;
            }
            if self.stop.load(Ordering::SeqCst) {
                if s.cancel(sleepy) {
                    s.found_work(n);
                }
                return;
            }
            searching = s.park(sleepy);
        }
    }

    /// Waits until `jobs` have run, then shuts the workers down (step 7).
    fn finish(&self, jobs: usize, workers: Vec<thread::JoinHandle<()>>) {
        let mut n = self.done.count.lock().unwrap();
        while *n < jobs {
            n = self.done.cv.wait(n).unwrap();
        }
        drop(n);
        self.stop.store(true, Ordering::SeqCst);
        self.sleep.wake_all();
        for w in workers {
            w.join().unwrap();
        }
        assert_eq!(
            self.sleep.searching(),
            0,
            "every searcher's place was given back"
        );
    }
}

/// The sleep state of workers on `worker_node`, on `nodes` nodes in a line.
fn new_sleep(worker_node: &[u32], nodes: usize) -> Sleep {
    Sleep::new(worker_node, nodes, |a, b| 10 + 10 * a.abs_diff(b))
}

fn spawn_workers(m: &Arc<Model>, nodes: &[u32]) -> Vec<thread::JoinHandle<()>> {
    nodes
        .iter()
        .enumerate()
        .map(|(i, &node)| {
            let m = Arc::clone(m);
            thread::spawn(move || m.worker(i, node as usize))
        })
        .collect()
}

/// (a) Two workers, both searching when idle. A busy worker (the main thread) pushes on its
/// own queue (`Owner::Pusher`: no fence, and no wake-up while someone searches, step 5'),
/// and, as a pusher does before it could park, searches its own queue once. The job is
/// run, by whoever: a lost wake-up would leave it queued with both workers parked.
#[test]
fn a_local_push_with_a_searcher_and_a_sleeper_is_run() {
    model_searchers(|| {
        let m = Model::new(&[0, 0], 1, 0);
        let workers = spawn_workers(&m, &[0, 0]);
        m.sleep
            .push_and_wake(Owner::Pusher { node: 0 }, Others::Origin(0), || {
                m.queues[0].fetch_add(1, Ordering::Relaxed);
            });
        if take(&m.queues[0]) {
            m.job();
        }
        m.finish(1, workers);
    });
}

/// (b) Two workers, two jobs pushed at once with a single wake-up check (one
/// `push_and_wake` for both: the second push's check skipped, as step 5' skips it while
/// someone searches). Each job waits until both have started, so both must run at once
/// on two workers: a worker woken for the first job that takes it is the last searcher and
/// must wake one more (step 0b), or the second job waits for ever (loom: a deadlock;
/// checked by hand with the wake of `found_work` removed).
#[test]
fn the_last_searcher_to_find_work_wakes_one_more() {
    model_searchers(|| {
        let m = Model::new(&[0, 0], 1, 2);
        let workers = spawn_workers(&m, &[0, 0]);
        m.sleep
            .push_and_wake(Owner::Node(0), Others::Origin(0), || {
                m.queues[0].fetch_add(2, Ordering::Relaxed);
            });
        m.finish(2, workers);
    });
}

/// (c) Worker 0 (node 0) and worker 1 (node 1); a job on node 1's injector, which worker 0
/// is refused (another zone). Worker 0 may be searching when the job is pushed: the
/// producer does not trust it (only a searcher of node 1 would make the wake-up
/// unnecessary), so worker 1 is woken if it sleeps, and nobody else ever is — no refused
/// worker wakes anyone (there is no step that would).
#[test]
fn a_searcher_that_may_not_take_the_job_does_not_stop_its_wake_up() {
    model_searchers(|| {
        let m = Model::new(&[0, 1], 2, 0);
        // The policy: each node's workers take their own node's tasks only.
        m.sleep.set_takers(|origin, node| origin == node);
        let workers = spawn_workers(&m, &[0, 1]);
        m.sleep
            .push_and_wake(Owner::Node(1), Others::Origin(1), || {
                m.queues[1].fetch_add(1, Ordering::Relaxed);
            });
        m.finish(1, workers);
    });
}

/// (d) A task pushed on one worker's queue from another thread (an inbox, a refused task
/// handed back: `Owner::Worker`, nobody else woken), while that worker, on node 1, goes to
/// sleep and node 0's worker may not take it: the owner is claimed if it registered before
/// the producer's fence, or its re-search sees the task.
#[test]
fn a_push_on_a_workers_queue_reaches_that_worker() {
    model_searchers(|| {
        let m = Model::new(&[0, 1], 2, 0);
        let workers = spawn_workers(&m, &[0, 1]);
        m.sleep.push_and_wake(Owner::Worker(1), Others::None, || {
            m.queues[1].fetch_add(1, Ordering::Relaxed);
        });
        m.finish(1, workers);
    });
}

/// Two workers and two pushes, each with its own wake-up check. A wake-up may reach a worker
/// that found the other job in its re-search (it was still registered): that worker is
/// awake and searches again after its job, so nothing is stranded; and the worker a push
/// claims is a searcher, which must give its place back (0b, 0c) or the next push would
/// wrongly trust it (a model worker that ignored its claim deadlocked here). A job left in
/// the queue with both workers parked would leave the producer waiting for ever: a
/// deadlock.
#[test]
fn two_pushes_reach_two_workers() {
    model_searchers(|| {
        let m = Model::new(&[0, 0], 1, 0);
        let workers = spawn_workers(&m, &[0, 0]);
        for _ in 0..2 {
            m.sleep
                .push_and_wake(Owner::Node(0), Others::Origin(0), || {
                    m.queues[0].fetch_add(1, Ordering::Relaxed);
                });
        }
        m.finish(2, workers);
    });
}

/// A waker's claim racing the claimed worker's own way out (its re-search found work, step
/// 3, then 0b): the worker sees its bit cleared and gives its searcher's place back, maybe
/// before the waker has finished claiming it. The place must have been counted first: the
/// count never wraps below zero (`stop_searching` asserts it) and ends at zero. (With the
/// place counted after the bit was cleared, loom finds the wrap at a bound of 4: the
/// assertion fails.)
#[test]
fn a_claimed_worker_gives_back_a_place_the_claim_has_counted() {
    // Bound 4 (milliseconds): the wrap needs the worker to run first, then the waker to be
    // preempted between its clear and its count.
    loom_support::model(4, || {
        let sleep = Arc::new(new_sleep(&[0], 1));
        let s = Arc::clone(&sleep);
        let w = thread::spawn(move || {
            let sleepy = s.get_sleepy(0);
            if s.cancel(sleepy) {
                s.found_work(0);
            }
        });
        sleep.push_and_wake(Owner::Worker(0), Others::None, || {});
        w.join().unwrap();
        assert_eq!(sleep.searching(), 0);
    });
}

/// (f) Three workers on two nodes: workers 0 and 1 on node 0, and a worker of node 1 that
/// keeps a searcher's place throughout (the main thread holds it: the pool's idle workers
/// spin 32 rounds between their node's tiny tasks) and may not take node 0's tasks. With
/// both node-0 workers registered as sleepers, two roots are pushed on node 0's
/// injector, each with its own wake-up check; each waits until both have started, so both
/// node-0 workers must run at once. The second push skips its wake-up when the first one's
/// woken worker still searches; that worker then takes a root and must pass the wake-up on,
/// as the last searcher *of node 0*. With the answer taken from the pool's count (node 1's
/// searcher counted), loom reports the deadlock: the second root stranded with worker 1
/// parked (checked by hand with the earlier `stop_searching`).
#[test]
fn a_searcher_of_another_node_does_not_hide_the_last_searcher_of_a_node() {
    model_searchers(|| {
        let m = Model::new(&[0, 0, 1], 2, 2);
        m.sleep.set_takers(|origin, node| origin == node);
        // Worker 2's searcher's place (node 1), held until the roots have run.
        m.sleep.start_searching(1);
        // Workers 0 and 1 start registered as sleepers (step 1 done for them here, before
        // they run): the pushes below find them registered, as the pool's rounds do.
        let workers: Vec<_> = (0..2)
            .map(|i| {
                let sleepy = m.sleep.get_sleepy(i);
                let m = Arc::clone(&m);
                thread::spawn(move || m.worker_from(i, 0, Some(sleepy)))
            })
            .collect();
        for _ in 0..2 {
            m.sleep
                .push_and_wake(Owner::Node(0), Others::Origin(0), || {
                    m.queues[0].fetch_add(1, Ordering::Relaxed);
                });
        }
        let mut n = m.done.count.lock().unwrap();
        while *n < 2 {
            n = m.done.cv.wait(n).unwrap();
        }
        drop(n);
        m.sleep.found_work(1);
        m.finish(2, workers);
    });
}
