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
//! The model does see lost wake-ups: with `new_local_work` (no fence; correct only for a
//! pusher that searches its own queue before it sleeps) in place of `new_work` in the first
//! test, loom reports `deadlock; threads = [.. Blocked ..]` (checked by hand; loom aborts
//! on that path, so it cannot be kept as a `should_panic` test).

use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use loom::sync::{Arc, Condvar, Mutex};
use loom::thread;

use super::Sleep;
use crate::latch::CoreLatch;
use crate::loom_support::{self, take};

/// A worker's idle loop (`worker.rs`, `idle_loop`, without the spinning): search, get
/// sleepy, search again, park; until it has taken one job (exact with one worker; with
/// several, see `pool_worker`).
fn worker(sleep: &Sleep, queue: &AtomicUsize, index: usize) {
    loop {
        if take(queue) {
            return;
        }
        let sleepy = sleep.get_sleepy(index, 0);
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

#[test]
fn a_push_wakes_the_worker_going_to_sleep() {
    model(|| {
        let sleep = Arc::new(Sleep::new(1, 1));
        let queue = Arc::new(AtomicUsize::new(0));
        let (s, q) = (Arc::clone(&sleep), Arc::clone(&queue));
        let w = thread::spawn(move || worker(&s, &q, 0));
        queue.fetch_add(1, Ordering::Relaxed);
        sleep.new_work(0);
        w.join().unwrap();
    });
}

/// Jobs a model has finished, for the producer to wait on.
struct Done {
    count: Mutex<usize>,
    cv: Condvar,
}

/// A worker as the pool runs one: it searches again after every job and exits only when the
/// pool terminates (README step 7).
fn pool_worker(sleep: &Sleep, queue: &AtomicUsize, done: &Done, stop: &AtomicBool, index: usize) {
    let finish = || {
        *done.count.lock().unwrap() += 1;
        done.cv.notify_all();
    };
    loop {
        if take(queue) {
            finish();
            continue;
        }
        if stop.load(Ordering::SeqCst) {
            return;
        }
        let sleepy = sleep.get_sleepy(index, 0);
        if take(queue) {
            let _ = sleep.cancel(sleepy);
            finish();
            continue;
        }
        if stop.load(Ordering::SeqCst) {
            let _ = sleep.cancel(sleepy);
            return;
        }
        let _ = sleep.park(sleepy);
    }
}

/// Two workers and two pushes. A wake-up may reach a worker that found the other job in its
/// re-search (it was still on the list): that worker is awake and searches again after its
/// job, so nothing is stranded. (A model whose workers quit after one job deadlocks here:
/// the README's "whoever is woken may not be the one who needs the task".) A job left in
/// the queue with both workers parked would leave the producer waiting for ever: a deadlock.
#[test]
fn two_pushes_reach_two_workers() {
    model(|| {
        let sleep = Arc::new(Sleep::new(2, 1));
        let queue = Arc::new(AtomicUsize::new(0));
        let done = Arc::new(Done {
            count: Mutex::new(0),
            cv: Condvar::new(),
        });
        let stop = Arc::new(AtomicBool::new(false));
        let workers: Vec<_> = (0..2)
            .map(|i| {
                let (s, q, d, t) = (
                    Arc::clone(&sleep),
                    Arc::clone(&queue),
                    Arc::clone(&done),
                    Arc::clone(&stop),
                );
                thread::spawn(move || pool_worker(&s, &q, &d, &t, i))
            })
            .collect();
        for _ in 0..2 {
            queue.fetch_add(1, Ordering::Relaxed);
            sleep.new_work(0);
        }
        let mut n = done.count.lock().unwrap();
        while *n < 2 {
            n = done.cv.wait(n).unwrap();
        }
        drop(n);
        stop.store(true, Ordering::SeqCst);
        sleep.wake_all();
        for w in workers {
            w.join().unwrap();
        }
    });
}

/// The other half of the idle loop: a worker blocked in `join` waits on a latch, parks,
/// and is woken by whoever sets it; the result written before the latch is set is seen.
#[test]
fn a_latch_set_wakes_its_sleeping_owner_and_publishes_the_result() {
    model(|| {
        let sleep = Arc::new(Sleep::new(1, 1));
        let latch = Arc::new(CoreLatch::new());
        let result = Arc::new(AtomicUsize::new(0));
        let (s, l, r) = (Arc::clone(&sleep), Arc::clone(&latch), Arc::clone(&result));
        let owner = thread::spawn(move || {
            loop {
                if l.probe() {
                    break;
                }
                let sleepy = s.get_sleepy(0, 0);
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

// ---- The bounded searchers (README steps 0a–0c, 5') ----

/// What a model of the bounded-search protocol shares: the sleep state, a queue per node
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
    fn new(workers: usize, nodes: usize, barrier: usize) -> Arc<Self> {
        Arc::new(Self {
            sleep: Sleep::new(workers, nodes),
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
    /// queue behind the steal walk): become a searcher within the bound (0a), search; found
    /// as a searcher: stop and maybe wake one more (0b); else stop searching — the last
    /// searcher notes it (0c) — get sleepy (1), search again (2), cancel (3) or wake a
    /// sleeper of refused work (0c) and park (4); a wake-up by `wake_one` makes it a
    /// searcher. Exits on `stop` (7).
    fn worker(&self, index: usize, node: usize) {
        let s = &self.sleep;
        let n = node as u32;
        let mut searching = false;
        loop {
            if !searching {
                searching = s.try_search(n);
            }
            if searching && self.search(node) == Ok(true) {
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
            let last = searching && s.stop_searching(n);
            searching = false;
            let sleepy = s.get_sleepy(index, n);
            match self.search(node) {
                Ok(true) => {
                    if s.cancel(sleepy) {
                        s.found_work(n);
                    }
                    self.job();
                    continue;
                }
                Err(()) if last => {
                    for other in (0..self.queues.len()).filter(|&o| o != node) {
                        if self.queues[other].load(Ordering::Relaxed) != 0 {
                            s.wake_node(other as u32);
                        }
                    }
                }
                _ => {}
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

fn spawn_workers(m: &Arc<Model>, nodes: &[usize]) -> Vec<thread::JoinHandle<()>> {
    nodes
        .iter()
        .enumerate()
        .map(|(i, &node)| {
            let m = Arc::clone(m);
            thread::spawn(move || m.worker(i, node))
        })
        .collect()
}

/// (a) Two workers, so at most one searches (2 * 1 < 2 fails): the other goes straight to
/// sleep. A busy worker (the main thread) pushes on its own queue with `new_local_work`,
/// which wakes nobody while someone searches (step 5'), and, as a pusher does before it
/// could park, searches its own queue once. The job is run, by whoever: a lost wake-up
/// would leave it queued with both workers parked.
#[test]
fn a_local_push_with_a_searcher_and_a_sleeper_is_run() {
    model(|| {
        let m = Model::new(2, 1, 0);
        let workers = spawn_workers(&m, &[0, 0]);
        m.queues[0].fetch_add(1, Ordering::Relaxed);
        m.sleep.new_local_work(0);
        if take(&m.queues[0]) {
            m.job();
        }
        m.finish(1, workers);
    });
}

/// (b) Two workers (at most one searches: 2 * 1 < 2 fails, so the other sleeps at once;
/// three workers, of which two may search, make a state space loom takes many minutes
/// over), two pushes and a single wake-up (`new_work` once for both: the second push's wake-up
/// skipped, as step 5' skips it while someone searches). Each job waits until both have
/// started, so both must run at once on two workers: a worker woken for the first job
/// that takes it is the last searcher and must wake one more (step 0b), or the second
/// job waits for ever (loom: a deadlock; checked by hand with the wake of `found_work`
/// removed).
#[test]
fn the_last_searcher_to_find_work_wakes_one_more() {
    model(|| {
        let m = Model::new(2, 1, 2);
        let workers = spawn_workers(&m, &[0, 0]);
        m.queues[0].fetch_add(2, Ordering::Relaxed);
        m.sleep.new_work(0);
        m.finish(2, workers);
    });
}

/// (c) Worker 0 (node 0) and worker 1 (node 1); a job on node 1's queue, which worker 0 is
/// refused. The producer fences and wakes nobody if any worker searches (a producer that
/// relies on any searcher, as the per-node test of step 5' avoids, but the handshake of
/// step 0c must cover): if worker 0 is that searcher, it gives up, and as the last
/// searcher with refused work in its final search, wakes worker 1 (`wake_node`).
#[test]
fn the_last_searcher_refused_work_wakes_a_worker_of_its_node() {
    model(|| {
        let m = Model::new(2, 2, 0);
        let workers = spawn_workers(&m, &[0, 1]);
        m.queues[1].fetch_add(1, Ordering::Relaxed);
        loom::sync::atomic::fence(Ordering::SeqCst);
        if m.sleep.searching() == 0 {
            m.sleep.new_work(1);
        }
        m.finish(1, workers);
    });
}
