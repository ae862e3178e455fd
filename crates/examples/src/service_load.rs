//! The service load: long-lived async tasks that each own node-local state, arriving in
//! bursts skewed towards a few nodes, run on a Zonal pool until `--seconds` have passed and
//! every task has finished.
//!
//! # The arrival plan ([`Plan`])
//!
//! A seeded, deterministic sequence of bursts (the same seed and nodes give the same tasks;
//! timing is real). A burst holds `2 × capacity` tasks (at least 4), where the capacity is
//! the number of workers or of the machine's CPUs, whichever is smaller; [`HOT_PERCENT`] of them
//! are born on the *hot* nodes — the first quarter of the nodes with workers (at least one)
//! — and the rest on any node. Each task ([`TaskSpec`]) has:
//! - its state: a [`NodeBuffer`] of `u64` words on its home node, 4 KiB to 256 KiB,
//!   allocated once before the task is spawned (by a worker of that node);
//! - a quota of 10 to 40 *slices*, each a number of write passes over the state worth
//!   20 µs to 200 µs of work (calibrated at start-up: [`Calibration`]);
//! - a wait of 1 to 5 ms: after an even-numbered slice the task yields
//!   ([`yield_now`]), after an odd-numbered one it sleeps that long ([`sleep`]).
//!
//! # The driver ([`run`])
//!
//! One burst every [`BURST_EVERY`], each task spawned with its home as origin
//! (`TaskOptions::origin`: the node's injector), until the time is up; then it waits for the
//! live tasks to finish. *Back-pressure*: a burst waits while more than `8 × workers` tasks
//! are live (a virtual pool of many workers on a small machine cannot keep up with the
//! plan), and such bursts are counted ([`Outcome::bursts_delayed`]).
//!
//! # What each task records ([`TaskRecord`])
//!
//! At the start of every poll (the task's start, and after every `.await`) it reads
//! [`current_node`](zonal::runtime::current_node), the current worker and
//! [`current_task`](zonal::runtime::current_task)'s migration count. A task is *aged* once
//! its migration count reaches the policy's age limit ([`Ageing`]); every node change (and
//! every worker change) seen at a poll after the poll that found it aged is a *move after
//! aged* — a bug under a policy that ages tasks, since aged tasks never move again.
//!
//! # Remote-access emulation (`--emulate-remote`, off by default)
//!
//! A slice that runs on a node other than its state's home pays `ceil(d(home, here) /
//! d(home, home)) - 1` extra passes for every pass (`remote_passes`): a labelled cost in
//! proportion to the distance, as `examples/workload.rs` charges, not a measurement.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use zonal::policy::{Ageing, Rng};
use zonal::runtime::task::{sleep, yield_now};
use zonal::runtime::{NodeBuffer, SpawnError, TaskOptions, ThreadPool};
use zonal::topology::{NodeId, Topology};

use crate::machine::remote_passes;

/// Share of each burst born on the hot nodes, in percent.
pub const HOT_PERCENT: u64 = 70;
/// Time between two bursts.
pub const BURST_EVERY: Duration = Duration::from_millis(20);

/// Sleeps until the burst due at `next`, then sets `next` to the one after it; a burst that
/// is late does not make the next ones catch up.
pub fn wait_for_next_burst(next: &mut Instant) {
    *next += BURST_EVERY;
    let now = Instant::now();
    if *next > now {
        std::thread::sleep(*next - now);
    } else {
        *next = now;
    }
}
/// Live tasks per worker above which the next burst waits.
pub const LIVE_PER_WORKER: u64 = 8;
/// Words of state per task: 4 KiB to 256 KiB.
const WORDS: (u64, u64) = (512, 32 * 1024);
/// Slices per task.
const SLICES: (u64, u64) = (10, 40);
/// Work per slice, µs.
const SLICE_US: (u64, u64) = (20, 200);
/// Wait between slices, ms.
const WAIT_MS: (u64, u64) = (1, 5);

/// Uniform in `lo..=hi`, from the policy crate's seeded generator.
fn within(rng: &mut Rng, (lo, hi): (u64, u64)) -> u64 {
    let span = usize::try_from(hi - lo + 1).unwrap_or(usize::MAX);
    lo + rng.below(span) as u64
}

/// One task of the plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskSpec {
    /// The node its state lives on (its origin).
    pub home: NodeId,
    /// Words (`u64`) of state.
    pub words: usize,
    /// Slices of work before it ends.
    pub slices: u32,
    /// Work per slice, µs.
    pub slice_us: u32,
    /// The timed wait after an odd-numbered slice, ms.
    pub wait_ms: u32,
}

/// The seeded arrival plan: an endless, deterministic sequence of bursts (module docs).
#[derive(Clone, Debug)]
pub struct Plan {
    rng: Rng,
    nodes: Vec<NodeId>,
    hot: usize,
    burst: usize,
}

impl Plan {
    /// The plan over `nodes` (the nodes with workers, ascending; at least one) for a pool of
    /// `workers` workers.
    pub fn new(nodes: &[NodeId], workers: usize, seed: u64) -> Self {
        assert!(
            !nodes.is_empty(),
            "a pool has at least one node with workers"
        );
        Self {
            rng: Rng::new(seed),
            nodes: nodes.to_vec(),
            hot: (nodes.len() / 4).max(1),
            burst: (2 * workers).max(4),
        }
    }

    /// The hot nodes: the first quarter of the nodes (at least one).
    pub fn hot_nodes(&self) -> &[NodeId] {
        &self.nodes[..self.hot]
    }

    /// Tasks per burst.
    pub fn burst_len(&self) -> usize {
        self.burst
    }

    /// The next burst.
    pub fn next_burst(&mut self) -> Vec<TaskSpec> {
        (0..self.burst)
            .map(|_| {
                let r = &mut self.rng;
                let home = if (r.below(100) as u64) < HOT_PERCENT {
                    self.nodes[r.below(self.hot)]
                } else {
                    self.nodes[r.below(self.nodes.len())]
                };
                TaskSpec {
                    home,
                    words: within(r, WORDS) as usize,
                    slices: within(r, SLICES) as u32,
                    slice_us: within(r, SLICE_US) as u32,
                    wait_ms: within(r, WAIT_MS) as u32,
                }
            })
            .collect()
    }
}

/// One write pass over a task's state; returns its first word.
pub fn pass(state: &mut [u64], salt: u64) -> u64 {
    for w in state.iter_mut() {
        *w = w.wrapping_mul(0x5851_F42D_4C95_7F2D).wrapping_add(salt);
    }
    state.first().copied().unwrap_or(0)
}

/// How long a pass takes on this machine: picoseconds per word, measured at start-up.
#[derive(Clone, Copy, Debug)]
pub struct Calibration {
    ps_per_word: u64,
}

impl Calibration {
    /// Times passes over a 64 KiB buffer (the middle of the state sizes).
    pub fn measure() -> Self {
        let mut buf = vec![1u64; 8 * 1024];
        let mut passes = 0u64;
        let start = Instant::now();
        while start.elapsed() < Duration::from_millis(20) {
            for _ in 0..16 {
                std::hint::black_box(pass(&mut buf, passes));
                passes += 1;
            }
        }
        let ps = start.elapsed().as_nanos() as u64 * 1000 / (passes * buf.len() as u64);
        Self {
            ps_per_word: ps.max(1),
        }
    }

    /// Passes over `words` words worth `us` µs of work (at least one).
    pub fn passes(&self, words: usize, us: u32) -> u64 {
        (u64::from(us) * 1_000_000 / (words as u64 * self.ps_per_word).max(1)).max(1)
    }
}

/// What one task saw, recorded when it finishes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TaskRecord {
    /// Its number in spawn order (each must appear exactly once).
    pub id: u64,
    /// Spawn to completion, µs.
    pub turnaround_us: u64,
    /// Polls observed.
    pub polls: u32,
    /// Polls that ran on another node than its home.
    pub polls_away: u32,
    /// Polls that ran on another node than the poll before.
    pub node_changes: u32,
    /// Its final migration count.
    pub migrations: u32,
    /// Whether it reached the policy's age limit.
    pub aged: bool,
    /// Node changes seen after it aged.
    pub moves_after_aged: u32,
    /// Worker changes seen after it aged (node changes included).
    pub worker_moves_after_aged: u32,
}

/// Per-task bookkeeping of the observations at each poll.
struct Observer {
    rec: TaskRecord,
    home: NodeId,
    ageing: Ageing,
    last: Option<(Option<NodeId>, Option<usize>)>,
    aged: bool,
}

impl Observer {
    /// Records one poll; returns the node it runs on.
    fn poll(&mut self) -> Option<NodeId> {
        let node = zonal::runtime::current_node();
        let worker = zonal::runtime::current_worker_index();
        let migrations = zonal::runtime::current_task().map_or(0, |t| t.migrations);
        self.rec.polls += 1;
        if node != Some(self.home) {
            self.rec.polls_away += 1;
        }
        if let Some((last_node, last_worker)) = self.last {
            if last_node != node {
                self.rec.node_changes += 1;
            }
            // Aged at an earlier poll: it must not have moved since.
            if self.aged && last_node != node {
                self.rec.moves_after_aged += 1;
            }
            if self.aged && last_worker != worker {
                self.rec.worker_moves_after_aged += 1;
            }
        }
        self.last = Some((node, worker));
        self.rec.migrations = migrations;
        self.aged = self.ageing.is_aged_after(migrations);
        self.rec.aged |= self.aged;
        node
    }
}

/// What every task of one run shares.
struct Shared {
    topo: Topology,
    emulate: bool,
    calibration: Calibration,
    ageing: Ageing,
    completed: AtomicU64,
    records: Mutex<Vec<TaskRecord>>,
    observe: Option<SliceObserver>,
}

/// Called at the start of every slice with the task's state, on the thread that runs the
/// slice (the NUMA kit records there where the slice ran and where its state lives).
pub type SliceObserver = Arc<dyn Fn(&[u64]) + Send + Sync>;

/// One task: its slices over its state, then its record.
async fn service_task(
    id: u64,
    spec: TaskSpec,
    mut state: NodeBuffer<u64>,
    shared: Arc<Shared>,
    spawned: Instant,
) {
    let mut obs = Observer {
        rec: TaskRecord {
            id,
            ..TaskRecord::default()
        },
        home: spec.home,
        ageing: shared.ageing,
        last: None,
        aged: false,
    };
    let base = shared.calibration.passes(state.len(), spec.slice_us);
    let mut here = obs.poll();
    for slice in 0..spec.slices {
        if let Some(observe) = &shared.observe {
            observe(&state);
        }
        let extra = u64::from(remote_passes(&shared.topo, spec.home, here, shared.emulate));
        let mut x = 0u64;
        for p in 0..base * (1 + extra) {
            x ^= pass(&mut state, p);
        }
        std::hint::black_box(x);
        if slice % 2 == 0 {
            yield_now().await;
        } else {
            sleep(Duration::from_millis(u64::from(spec.wait_ms))).await;
        }
        here = obs.poll();
    }
    obs.rec.turnaround_us = spawned.elapsed().as_micros() as u64;
    shared
        .records
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .push(obs.rec);
    shared.completed.fetch_add(1, Ordering::Release);
}

/// How a run goes.
#[derive(Clone, Copy, Debug)]
pub struct LoadOptions {
    /// Time to keep new bursts coming.
    pub seconds: u64,
    /// The remote-access emulation (module docs).
    pub emulate_remote: bool,
    /// The policy's ageing rule.
    pub ageing: Ageing,
    /// How long the live tasks may go with none finishing once arrivals stop
    /// ([`wait_for_drain`]): a slow or loaded machine drains slowly, and only a drain that
    /// stalls this long fails.
    pub stall_limit: Duration,
}

/// Progress, reported after every burst and while draining.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    /// Time since the start.
    pub elapsed: Duration,
    /// Tasks spawned so far.
    pub spawned: u64,
    /// Tasks finished so far.
    pub completed: u64,
}

/// What a run did.
#[derive(Debug)]
pub struct Outcome {
    /// Tasks spawned.
    pub spawned: u64,
    /// One record per task that finished (in completion order).
    pub records: Vec<TaskRecord>,
    /// Bursts spawned.
    pub bursts: u64,
    /// Bursts that waited for live tasks to drop below the back-pressure bound.
    pub bursts_delayed: u64,
    /// Whether every task finished, none waiting longer than the stall limit for the one
    /// before it.
    pub drained: bool,
    /// Time from the first burst until the last task finished (or the drain stalled).
    pub elapsed: Duration,
}

/// Why a run could not go on.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// A task's state could not be placed (a node outside the pool's topology).
    #[error("cannot place a task's state: {0}")]
    Place(#[from] SpawnError),
}

/// Allocates the states of one burst, each on its home node, in one scope.
fn place_states(pool: &ThreadPool, burst: &[TaskSpec]) -> Result<Vec<NodeBuffer<u64>>, LoadError> {
    let mut slots: Vec<Option<Result<NodeBuffer<u64>, SpawnError>>> =
        burst.iter().map(|_| None).collect();
    pool.scope(|s| {
        for (slot, spec) in slots.iter_mut().zip(burst) {
            let spec = *spec;
            s.spawn_on(spec.home, move |_| {
                *slot = Some(NodeBuffer::try_new_in(pool, spec.home, spec.words, |i| {
                    i as u64
                }));
            });
        }
    });
    slots
        .into_iter()
        .map(|s| {
            s.expect("the scope ran every placement")
                .map_err(LoadError::from)
        })
        .collect()
}

/// Runs the load of `plan` on `pool` (module docs), calling `progress` after every burst
/// and while the live tasks drain.
///
/// # Errors
/// [`LoadError`] when a task's state cannot be placed.
pub fn run(
    pool: &ThreadPool,
    plan: &mut Plan,
    opts: LoadOptions,
    progress: impl FnMut(Progress),
) -> Result<Outcome, LoadError> {
    run_observed(pool, plan, opts, None, progress)
}

/// [`run`], calling `observe` (if any) at the start of every slice of every task.
///
/// # Errors
/// [`LoadError`] when a task's state cannot be placed.
pub fn run_observed(
    pool: &ThreadPool,
    plan: &mut Plan,
    opts: LoadOptions,
    observe: Option<SliceObserver>,
    mut progress: impl FnMut(Progress),
) -> Result<Outcome, LoadError> {
    let shared = Arc::new(Shared {
        observe,
        topo: pool.topology().clone(),
        emulate: opts.emulate_remote,
        calibration: Calibration::measure(),
        ageing: opts.ageing,
        completed: AtomicU64::new(0),
        records: Mutex::new(Vec::new()),
    });
    let live_bound = LIVE_PER_WORKER * pool.num_workers() as u64;
    let until = Duration::from_secs(opts.seconds);
    let start = Instant::now();
    let (mut spawned, mut bursts, mut bursts_delayed) = (0u64, 0u64, 0u64);
    let report = |spawned: u64, shared: &Shared| Progress {
        elapsed: start.elapsed(),
        spawned,
        completed: shared.completed.load(Ordering::Acquire),
    };
    let mut next = start;
    while start.elapsed() < until {
        let mut delayed = false;
        while spawned - shared.completed.load(Ordering::Acquire) > live_bound
            && start.elapsed() < until
        {
            delayed = true;
            std::thread::sleep(Duration::from_micros(500));
        }
        if start.elapsed() >= until {
            break;
        }
        bursts_delayed += u64::from(delayed);
        let burst = plan.next_burst();
        let states = place_states(pool, &burst)?;
        for (spec, state) in burst.into_iter().zip(states) {
            let (id, s) = (spawned, Arc::clone(&shared));
            let fut = service_task(id, spec, state, s, Instant::now());
            // Detached: each task reports itself (its record); the count checks it.
            drop(pool.spawn_async_with(TaskOptions::new().origin(spec.home), fut));
            spawned += 1;
        }
        bursts += 1;
        progress(report(spawned, &shared));
        wait_for_next_burst(&mut next);
    }
    let drained = wait_for_drain(
        || shared.completed.load(Ordering::Acquire),
        spawned,
        opts.stall_limit,
        || progress(report(spawned, &shared)),
    );
    let elapsed = start.elapsed();
    let records = std::mem::take(
        &mut *shared
            .records
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    );
    Ok(Outcome {
        spawned,
        records,
        bursts,
        bursts_delayed,
        drained,
        elapsed,
    })
}

/// Waits until `completed()` reaches `spawned`, calling `tick` every 2 ms; `false` when
/// `stall_limit` passes with no task finishing. The wait holds however slowly the tasks
/// finish (an emulated guest on a loaded host runs them 10–50 times slower) and ends only
/// a drain that stopped making progress: a lost wake-up or a task that never runs again.
pub fn wait_for_drain(
    completed: impl Fn() -> u64,
    spawned: u64,
    stall_limit: Duration,
    mut tick: impl FnMut(),
) -> bool {
    let mut last = completed();
    let mut last_at = Instant::now();
    while last < spawned {
        if last_at.elapsed() > stall_limit {
            return false;
        }
        std::thread::sleep(Duration::from_millis(2));
        tick();
        let now = completed();
        if now != last {
            (last, last_at) = (now, Instant::now());
        }
    }
    true
}

/// Whether every task of `0..spawned` finished exactly once: the ids missing and the ids
/// recorded more than once.
pub fn exactly_once(spawned: u64, records: &[TaskRecord]) -> (Vec<u64>, Vec<u64>) {
    let mut seen = vec![0u32; spawned as usize];
    let mut extra = Vec::new();
    for r in records {
        match seen.get_mut(r.id as usize) {
            Some(n) => *n += 1,
            None => extra.push(r.id),
        }
    }
    let missing = (0..spawned).filter(|&i| seen[i as usize] == 0).collect();
    extra.extend((0..spawned).filter(|&i| seen[i as usize] > 1));
    (missing, extra)
}

#[cfg(test)]
mod test {
    use super::*;

    fn nodes(n: u32) -> Vec<NodeId> {
        (0..n).map(NodeId).collect()
    }

    #[test]
    fn the_plan_is_the_same_for_the_same_seed_and_differs_for_another() {
        let mut a = Plan::new(&nodes(16), 32, 7);
        let mut b = Plan::new(&nodes(16), 32, 7);
        let mut c = Plan::new(&nodes(16), 32, 8);
        let (a1, a2) = (a.next_burst(), a.next_burst());
        assert_eq!(a1, b.next_burst());
        assert_eq!(a2, b.next_burst());
        assert_ne!(a1, a2, "bursts differ from one another");
        assert_ne!(a1, c.next_burst(), "another seed, another plan");
        assert_eq!(a1.len(), 64);
    }

    #[test]
    fn bursts_are_skewed_to_the_first_quarter_of_the_nodes() {
        let mut plan = Plan::new(&nodes(16), 32, 42);
        assert_eq!(plan.hot_nodes(), &nodes(4)[..]);
        let tasks: Vec<TaskSpec> = (0..50).flat_map(|_| plan.next_burst()).collect();
        let hot = tasks.iter().filter(|t| t.home.0 < 4).count() as f64;
        let share = hot / tasks.len() as f64;
        // 70% born hot, plus the cold draws that land on a hot node (30% × 4/16 = 7.5%).
        assert!((0.72..0.83).contains(&share), "hot share {share}");
        // Every node gets some tasks: the rest are spread over all nodes.
        for n in 0..16 {
            assert!(tasks.iter().any(|t| t.home.0 == n), "node {n} never chosen");
        }
    }

    #[test]
    fn task_specs_stay_in_their_ranges() {
        let mut plan = Plan::new(&nodes(3), 2, 1);
        assert_eq!(plan.burst_len(), 4);
        for t in (0..100).flat_map(|_| plan.next_burst()) {
            assert!((512..=32 * 1024).contains(&t.words));
            assert!((10..=40).contains(&t.slices));
            assert!((20..=200).contains(&t.slice_us));
            assert!((1..=5).contains(&t.wait_ms));
            assert!(t.home.0 < 3);
        }
    }

    #[test]
    fn one_node_is_hot_on_a_single_node_machine() {
        let mut plan = Plan::new(&nodes(1), 2, 3);
        assert_eq!(plan.hot_nodes(), &nodes(1)[..]);
        assert!(plan.next_burst().iter().all(|t| t.home == NodeId(0)));
    }

    #[test]
    fn remote_passes_grow_with_the_distance_and_only_when_asked() {
        let topo = zonal::topology::presets::preset("s1").expect("s1");
        let home = NodeId(0);
        let mut by_distance: Vec<NodeId> = (0..16).map(NodeId).collect();
        by_distance.sort_by_key(|&n| topo.distance(home, n));
        let passes: Vec<u32> = by_distance
            .iter()
            .map(|&n| remote_passes(&topo, home, Some(n), true))
            .collect();
        assert_eq!(passes[0], 0, "at home: no extra pass");
        assert!(passes.windows(2).all(|w| w[0] <= w[1]), "{passes:?}");
        assert!(passes[15] >= 1, "the farthest node costs extra: {passes:?}");
        assert_eq!(remote_passes(&topo, home, Some(NodeId(15)), false), 0);
        assert_eq!(remote_passes(&topo, home, None, true), 0);
    }

    #[test]
    fn exactly_once_finds_missing_and_repeated_tasks() {
        let rec = |id| TaskRecord {
            id,
            ..TaskRecord::default()
        };
        assert_eq!(exactly_once(3, &[rec(2), rec(0), rec(1)]), (vec![], vec![]));
        assert_eq!(
            exactly_once(3, &[rec(0), rec(0), rec(7)]),
            (vec![1, 2], vec![7, 0])
        );
    }

    #[test]
    fn calibrated_passes_scale_with_the_work_asked() {
        let c = Calibration { ps_per_word: 500 };
        // 1,000 words at 0.5 ns: 0.5 µs a pass; 100 µs is 200 passes.
        assert_eq!(c.passes(1000, 100), 200);
        assert_eq!(c.passes(1_000_000, 20), 1, "at least one pass");
    }
}
