//! A deterministic model of the pool's wake-up decisions (no threads): the real [`Sleep`],
//! driven by model workers that follow the idle loop of `worker.rs` one step at a time, on
//! random multi-node machines, worker sets, placements, blocked owners and spawn sources.
//!
//! A model worker searches its own deque, its node's injector, then the other workers'
//! deques and nodes' injectors, and takes a task there only if the policy lets its node take
//! a task of that origin (`may_take`, the same relation given to [`Sleep::set_takers`]); a
//! task it is refused stays queued, and the refusal is handed to the push-and-wake function
//! as `Thief::put_back` does (owners only). Tasks are placed as `route.rs` places roots: on
//! the spawner's deque when it is a worker of the placement node, else on the injector of
//! that node (or of the nearest node with workers).
//!
//! The laws, for every generated case:
//! - **Quiescence.** While the owners are blocked, the idle workers all park within a
//!   bounded number of steps, with no token pending: once nothing queued is allowed to an
//!   idle worker, no wake-up is issued (a ring of refused workers waking each other never
//!   parks, and fails here).
//! - **No lost wake-up.** At quiescence no queued task's owner — the worker whose deque or
//!   away queue holds it, a worker of the node whose injector holds it — is parked.
//! - **Exactly once.** When the owners return, every task runs exactly once.
//!
//! What the laws do not promise, and the model shows: a task that the policy lets a parked
//! worker of another node take, but that sits in a queue behind more refused tasks than one
//! search examines (a steal walk takes one task of a node's injector and up to
//! `AWAY_EXAMINE` of an away queue per visit; a refused one goes to the back), waits for its
//! queue's owners, or for the next push that wakes that worker. Parallelism, not liveness:
//! the owners run it when they return.
//!
//! The model also carries the rule an earlier version had — the last searcher that met
//! refused work woke a sleeper of that work's node, whether or not that sleeper could take
//! it — to show that the laws catch it (`the_old_refusal_wake_never_quiesces`).

use std::time::Duration;

use proptest::prelude::*;

use super::{Others, Owner, Sleep, Sleepy};

/// A queued task: its id and its origin node.
#[derive(Clone, Copy, Debug)]
struct Task {
    id: usize,
    origin: u32,
}

/// How long a task keeps the worker that takes it busy (`Case::spawns`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Work {
    /// Runs in the step that takes it (the model of earlier versions).
    Instant,
    /// Keeps its worker busy, not searching, for this many of its steps.
    Steps(u32),
    /// Blocks its worker until the owners are released (a root that waits for another
    /// root, or for something outside the pool): its worker becomes a blocked owner.
    Hold,
}

#[derive(Debug)]
enum State {
    /// Blocked in user code (an owner): runs nothing until released.
    Blocked,
    /// Running a task for `left` more steps: neither searching nor parked.
    Busy { left: u32 },
    /// Idle, searching (or not yet, if displaced… never here), `rounds` fruitless searches.
    Idle { searching: bool, rounds: u32 },
    /// Registered and parked.
    Parked(Sleepy),
}

/// One generated case.
#[derive(Clone, Debug)]
struct Case {
    /// Distances between nodes (symmetric, 10 on the diagonal).
    distance: Vec<Vec<u32>>,
    /// `may_take[origin][node]`.
    may_take: Vec<Vec<bool>>,
    /// Per worker, its node.
    worker_node: Vec<u32>,
    /// Per worker, whether it is a blocked owner at the start.
    blocked: Vec<bool>,
    /// Spawns: (source: `None` outside the pool, or a worker — which spawns only while it
    /// is blocked or busy, else the spawn comes from outside; the task's origin; whether it
    /// is a child of the source's computation rooted on that origin — on the source's deque
    /// — rather than a root placed there; how long it keeps its worker).
    spawns: Vec<(Option<usize>, u32, bool, Work)>,
    /// The scheduler's choices (which worker steps next), cycled.
    schedule: Vec<usize>,
    /// Per worker: fruitless searches before it registers (the pool's `SPIN_ROUNDS`, 32,
    /// often shortened: searchers that give up soon reach more states in few steps; long
    /// ones keep a node's searcher counted while other nodes' workers park).
    spin: Vec<u32>,
    /// Whether a thief's walk stops before the nodes whose own tasks its node may not take
    /// (the hard zone boundary: the walk's `Stop`, so those queues are never probed and no
    /// refusal there is handed back); else it probes every queue and hands refusals back.
    zone_stop: bool,
}

struct Model<'a> {
    case: &'a Case,
    sleep: Sleep,
    deques: Vec<Vec<Task>>,
    /// Per worker: its away queue, where a task refused from its deque goes.
    aways: Vec<Vec<Task>>,
    injectors: Vec<Vec<Task>>,
    state: Vec<State>,
    ran: Vec<u32>,
    /// Wake-ups observed: parked workers that found their token set.
    wakeups: u64,
    /// The earlier rule (module docs).
    old_refusal_wake: bool,
    /// Whether the owners were released: a held task then runs at once.
    released: bool,
}

impl<'a> Model<'a> {
    fn new(case: &'a Case, old_refusal_wake: bool) -> Self {
        let nodes = case.distance.len();
        let sleep = Sleep::new(&case.worker_node, nodes, |a, b| {
            case.distance[a as usize][b as usize]
        });
        sleep.set_takers(|o, n| case.may_take[o as usize][n as usize]);
        let state = case
            .blocked
            .iter()
            .map(|&b| {
                if b {
                    State::Blocked
                } else {
                    State::Idle {
                        searching: false,
                        rounds: 0,
                    }
                }
            })
            .collect();
        Self {
            case,
            sleep,
            deques: vec![Vec::new(); case.worker_node.len()],
            aways: vec![Vec::new(); case.worker_node.len()],
            injectors: vec![Vec::new(); nodes],
            state,
            ran: vec![0; case.spawns.len()],
            wakeups: 0,
            old_refusal_wake,
            released: false,
        }
    }

    fn node(&self, w: usize) -> u32 {
        self.case.worker_node[w]
    }

    /// Where a root placed on `n` is queued (`Registry::placed_on`): `n` if it has workers,
    /// else the nearest node with workers, lowest id on ties.
    fn placed_on(&self, n: u32) -> u32 {
        let with = |m: u32| self.case.worker_node.contains(&m);
        (0..self.injectors.len() as u32)
            .filter(|&m| with(m))
            .min_by_key(|&m| (self.case.distance[n as usize][m as usize], m))
            .expect("some node has workers")
    }

    /// Spawn `id`, as `route.rs` routes a placed root, with its push-and-wake.
    fn spawn(&mut self, id: usize) {
        let (source, placed, child, _) = self.case.spawns[id];
        let task = Task { id, origin: placed };
        let dest = self.placed_on(placed);
        // Only a worker that runs something spawns (a blocked owner, or a busy worker).
        let source =
            source.filter(|&w| matches!(self.state[w], State::Blocked | State::Busy { .. }));
        match source {
            Some(w) if child || self.node(w) == dest => {
                let dest = self.node(w);
                self.deques[w].push(task);
                self.sleep.push_and_wake(
                    Owner::Pusher { node: dest },
                    Others::Origin(placed),
                    || {},
                );
            }
            _ => {
                self.injectors[dest as usize].push(task);
                self.sleep
                    .push_and_wake(Owner::Node(dest), Others::Origin(placed), || {});
            }
        }
    }

    fn may_take(&self, w: usize, t: Task) -> bool {
        self.case.may_take[t.origin as usize][self.node(w) as usize]
    }

    /// One search by worker `w` (own deque, own node's injector, then — searching — the
    /// others, checked by the policy). `Ok(task)`, or `Err(refused)`: whether it met work it
    /// was refused.
    fn search(&mut self, w: usize, steal: bool) -> Result<Task, bool> {
        if let Some(t) = self.deques[w].pop() {
            return Ok(t);
        }
        if !self.aways[w].is_empty() {
            return Ok(self.aways[w].remove(0));
        }
        let node = self.node(w) as usize;
        if !self.injectors[node].is_empty() {
            return Ok(self.injectors[node].remove(0));
        }
        if !steal {
            return Err(false);
        }
        let mut refused = false;
        let beyond = |n: u32| self.case.zone_stop && !self.case.may_take[n as usize][node];
        for v in 0..self.deques.len() {
            if v == w || beyond(self.node(v)) {
                continue;
            }
            // The oldest of the victim's deque; refused, it goes to the victim's away queue
            // (`Thief::put_back`), its owner only woken.
            if let Some(&t) = self.deques[v].first() {
                let t_taken = self.deques[v].remove(0);
                debug_assert_eq!(t_taken.id, t.id);
                if self.may_take(w, t) {
                    return Ok(t);
                }
                refused = true;
                self.aways[v].push(t);
                self.sleep
                    .push_and_wake(Owner::Worker(v), Others::None, || {});
            }
            // Its away queue, task by task; a refused one goes back, its owner only woken.
            if let Some(i) = self.aways[v].iter().position(|&t| self.may_take(w, t)) {
                return Ok(self.aways[v].remove(i));
            }
            if !self.aways[v].is_empty() {
                refused = true;
                self.sleep
                    .push_and_wake(Owner::Worker(v), Others::None, || {});
            }
        }
        for n in 0..self.injectors.len() {
            if n == node || self.injectors[n].is_empty() || beyond(n as u32) {
                continue;
            }
            // The oldest; refused, it goes to the back (`Thief::put_back`), the node's
            // workers only woken.
            let t = self.injectors[n].remove(0);
            if self.may_take(w, t) {
                return Ok(t);
            }
            refused = true;
            self.injectors[n].push(t);
            self.sleep
                .push_and_wake(Owner::Node(n as u32), Others::None, || {});
        }
        Err(refused)
    }

    /// Worker `w` takes `t`: it runs at once, or keeps `w` busy (or blocked) for a while.
    fn run(&mut self, w: usize, t: Task) {
        self.ran[t.id] += 1;
        self.state[w] = match self.case.spawns[t.id].3 {
            Work::Instant => State::Idle {
                searching: false,
                rounds: 0,
            },
            Work::Steps(n) => State::Busy { left: n },
            Work::Hold if !self.released => State::Blocked,
            Work::Hold => State::Idle {
                searching: false,
                rounds: 0,
            },
        };
    }

    /// One step of worker `w`'s idle loop (`worker.rs`: `run_found`, `spin`, `sleep`).
    fn step(&mut self, w: usize) {
        let node = self.node(w);
        match std::mem::replace(&mut self.state[w], State::Blocked) {
            State::Blocked => self.state[w] = State::Blocked,
            State::Busy { left } => {
                self.state[w] = if left > 1 {
                    State::Busy { left: left - 1 }
                } else {
                    State::Idle {
                        searching: false,
                        rounds: 0,
                    }
                };
            }
            State::Idle {
                mut searching,
                rounds,
            } => {
                if !searching {
                    self.sleep.start_searching(node);
                    searching = true;
                }
                match self.search(w, true) {
                    Ok(t) => {
                        self.sleep.found_work(node);
                        self.run(w, t);
                    }
                    Err(_) if rounds + 1 < self.case.spin[w] => {
                        self.state[w] = State::Idle {
                            searching,
                            rounds: rounds + 1,
                        };
                    }
                    Err(_) => self.give_up(w),
                }
            }
            State::Parked(token) => {
                if !self.sleep.notified(w) {
                    self.state[w] = State::Parked(token);
                    return;
                }
                self.wakeups += 1;
                let searching = self.sleep.park_for(token, Some(Duration::ZERO));
                self.state[w] = State::Idle {
                    searching,
                    rounds: 0,
                };
            }
        }
    }

    /// Steps 0c–4: stop searching, get sleepy, search in full once more, then cancel and run
    /// what it found, or park.
    fn give_up(&mut self, w: usize) {
        let node = self.node(w);
        let last = self.sleep.stop_searching(node);
        let token = self.sleep.get_sleepy(w);
        match self.search(w, true) {
            Ok(t) => {
                if self.sleep.cancel(token) {
                    self.sleep.found_work(node);
                }
                self.run(w, t);
            }
            Err(refused) => {
                if self.old_refusal_wake && last && refused {
                    // The earlier step 0c: wake a sleeper of a node (not ours) with visible
                    // work, whether it may take that work or not.
                    let other = (0..self.injectors.len() as u32).find(|&n| {
                        n != node
                            && (!self.injectors[n as usize].is_empty()
                                || (0..self.deques.len()).any(|v| {
                                    self.node(v) == n
                                        && !(self.deques[v].is_empty() && self.aways[v].is_empty())
                                }))
                    });
                    if let Some(n) = other {
                        self.sleep.wake_among(Some(n), Others::None);
                    }
                }
                self.state[w] = State::Parked(token);
            }
        }
    }

    /// Whether worker `w` has nothing to do: blocked, or parked with no token.
    fn quiet(&self, w: usize) -> bool {
        match self.state[w] {
            State::Blocked => true,
            State::Parked(_) => !self.sleep.notified(w),
            State::Idle { .. } | State::Busy { .. } => false,
        }
    }

    /// Whether every idle worker is parked with no token pending.
    fn quiescent(&self) -> bool {
        (0..self.state.len()).all(|w| self.quiet(w))
    }

    /// One step of the worker the schedule picks, or of the next one (cyclically) that has
    /// something to do.
    fn step_next(&mut self, cursor: &mut usize) {
        let n = self.state.len();
        let start = self.case.schedule[*cursor % self.case.schedule.len()] % n;
        *cursor += 1;
        if let Some(w) = (0..n).map(|k| (start + k) % n).find(|&w| !self.quiet(w)) {
            self.step(w);
        }
    }

    /// Steps workers in the case's schedule order until quiescent; `false` if `max` steps
    /// did not get there.
    fn settle(&mut self, cursor: &mut usize, max: usize) -> bool {
        for _ in 0..max {
            if self.quiescent() {
                return true;
            }
            self.step_next(cursor);
        }
        self.quiescent()
    }

    /// Releases the blocked owners: they become idle and drain their queues.
    fn release(&mut self) {
        self.released = true;
        for s in &mut self.state {
            if matches!(s, State::Blocked) {
                *s = State::Idle {
                    searching: false,
                    rounds: 0,
                };
            }
        }
    }

    fn queued(&self) -> impl Iterator<Item = (Option<usize>, u32, Task)> + '_ {
        let d = self
            .deques
            .iter()
            .enumerate()
            .chain(self.aways.iter().enumerate())
            .flat_map(move |(w, q)| q.iter().map(move |&t| (Some(w), self.node(w), t)));
        let i = self
            .injectors
            .iter()
            .enumerate()
            .flat_map(|(n, q)| q.iter().map(move |&t| (None, n as u32, t)));
        d.chain(i)
    }
}

/// What one run of a case found.
#[derive(Debug)]
struct Outcome {
    quiesced: bool,
    /// Queued tasks whose queue's owner is parked at quiescence: lost wake-ups.
    stranded: Vec<usize>,
    /// Queued tasks at quiescence that some worker may take (an owner of their queue, or a
    /// worker the policy lets take their origin) while every such worker is parked.
    unserved: Vec<usize>,
    ran: Vec<u32>,
}

fn run_case(case: &Case, old_refusal_wake: bool) -> Outcome {
    let mut m = Model::new(case, old_refusal_wake);
    let mut cursor = 0;
    // Spawns interleaved with steps.
    for id in 0..case.spawns.len() {
        m.spawn(id);
        for _ in 0..3 {
            m.step_next(&mut cursor);
        }
    }
    let budget = 200 * m.state.len() * (case.spawns.len() + 1);
    let quiesced = m.settle(&mut cursor, budget);
    let mut stranded = Vec::new();
    let mut unserved = Vec::new();
    if quiesced {
        for (owner, node, t) in m.queued() {
            // A task whose queue's owner is parked: its own deque or away queue, or its
            // node's injector. (A task the policy lets another parked worker take, but that
            // sits behind more refused tasks than a search examines, waits for its owners:
            // see the module docs.)
            let parked_owner = (0..m.state.len()).any(|w| {
                matches!(m.state[w], State::Parked(_))
                    && (Some(w) == owner || (owner.is_none() && m.node(w) == node))
            });
            if parked_owner {
                stranded.push(t.id);
            }
            let mut allowed = (0..m.state.len()).filter(|&w| {
                Some(w) == owner || (owner.is_none() && m.node(w) == node) || m.may_take(w, t)
            });
            if allowed.all(|w| matches!(m.state[w], State::Parked(_))) {
                unserved.push(t.id);
            }
        }
    }
    // The owners return: everything runs.
    m.release();
    let _ = m.settle(&mut cursor, budget);
    Outcome {
        quiesced,
        stranded,
        unserved,
        ran: m.ran,
    }
}

/// Random cases: 2–5 nodes (some without workers), 2–6 workers, random distances and a
/// zone relation (each node takes its own tasks), blocked owners, spawns from outside or
/// from workers that are blocked or busy, placed on any node, each task running at once,
/// keeping its worker busy for several steps, or holding it (a root that waits for another).
fn cases() -> impl Strategy<Value = Case> {
    (2usize..=5, 2usize..=6).prop_flat_map(|(nodes, workers)| {
        (
            proptest::collection::vec(12u32..=40, nodes * nodes),
            proptest::collection::vec(any::<bool>(), nodes * nodes),
            proptest::collection::vec(0..nodes as u32, workers),
            proptest::collection::vec(any::<bool>(), workers),
            proptest::collection::vec(
                (
                    any::<Option<prop::sample::Index>>(),
                    0..nodes as u32,
                    any::<bool>(),
                    prop_oneof![
                        2 => Just(Work::Instant),
                        2 => (1u32..8).prop_map(Work::Steps),
                        1 => Just(Work::Hold),
                    ],
                ),
                1..12,
            ),
            proptest::collection::vec(0usize..64, 1..64),
            proptest::collection::vec(prop_oneof![3 => Just(3u32), 1 => 1u32..=32], workers),
            any::<bool>(),
        )
            .prop_map(
                move |(d, take, worker_node, blocked, spawns, schedule, spin, zone_stop)| {
                    let distance = (0..nodes)
                        .map(|a| {
                            (0..nodes)
                                .map(|b| match a.cmp(&b) {
                                    std::cmp::Ordering::Equal => 10,
                                    std::cmp::Ordering::Less => d[a * nodes + b],
                                    std::cmp::Ordering::Greater => d[b * nodes + a],
                                })
                                .collect()
                        })
                        .collect();
                    let may_take = (0..nodes)
                        .map(|o| (0..nodes).map(|n| o == n || take[o * nodes + n]).collect())
                        .collect();
                    let spawns = spawns
                        .into_iter()
                        .map(|(src, placed, child, work)| {
                            (src.map(|i| i.index(workers)), placed, child, work)
                        })
                        .collect();
                    Case {
                        distance,
                        may_take,
                        worker_node,
                        blocked,
                        spawns,
                        schedule,
                        spin,
                        zone_stop,
                    }
                },
            )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn refused_work_wakes_nobody_who_would_refuse_it(case in cases()) {
        let out = run_case(&case, false);
        prop_assert!(out.quiesced, "idle workers kept waking each other: {case:?}");
        prop_assert!(out.stranded.is_empty(), "tasks {:?} wait while their owner is parked: {case:?}", out.stranded);
        prop_assert!(out.unserved.is_empty(), "tasks {:?} wait while every worker that may take them is parked: {case:?}", out.unserved);
        for (id, &n) in out.ran.iter().enumerate() {
            prop_assert_eq!(n, 1, "task {} ran {} times: {:?}", id, n, case);
        }
    }
}

/// The two-owner case of the pool (`tests/refusals.rs`): nodes 0 and 1, two workers each;
/// one worker of each node blocked, each with a task of a computation rooted on node 2 on
/// its deque (node 2 has no workers, and neither node may take its tasks). The earlier
/// refusal wake — the last searcher wakes a sleeper of the node whose work it was refused
/// — makes the two idle workers wake each other for ever; the push-and-wake rule parks
/// them, and the owners run their tasks when they return.
#[test]
fn the_old_refusal_wake_never_quiesces() {
    let case = Case {
        distance: vec![vec![10, 20, 40], vec![20, 10, 40], vec![40, 40, 10]],
        may_take: vec![
            vec![true, true, false],
            vec![true, true, false],
            vec![false, false, true],
        ],
        worker_node: vec![0, 0, 1, 1],
        blocked: vec![true, false, true, false],
        spawns: vec![
            (Some(0), 2, true, Work::Instant),
            (Some(2), 2, true, Work::Instant),
        ],
        schedule: (0..64).collect(),
        spin: vec![3; 4],
        zone_stop: false,
    };
    let old = run_case(&case, true);
    assert!(!old.quiesced, "the old rule was expected to ring: {old:?}");
    let new = run_case(&case, false);
    assert!(new.quiesced && new.stranded.is_empty(), "{new:?}");
    assert_eq!(new.ran, [1, 1]);
}

/// The issue-40 case: nodes 0 and 1 in different zones, two workers each. Worker 2 (node 1)
/// is busy spawning tiny tasks of its node, so worker 3 keeps searching; two roots are
/// placed on node 0 from outside, the first holding its worker (it waits for the second).
/// The second root's push skips its wake-up while a worker of node 0 searches; that
/// searcher then takes the first root, and must pass the wake-up on: it is the last
/// searcher *of node 0*, though not of the pool (worker 3 searches). Answered from the
/// pool's count (the earlier `stop_searching`), worker 1 stayed parked with the second root
/// queued on its node's injector in some of these schedules; every schedule must run it.
#[test]
fn a_searcher_of_another_zone_does_not_hide_the_last_searcher_of_a_node() {
    let mut spawns = Vec::new();
    for _ in 0..12 {
        spawns.push((Some(2), 1, true, Work::Steps(1)));
    }
    spawns.push((None, 0, false, Work::Hold));
    spawns.push((None, 0, false, Work::Steps(2)));
    for _ in 0..12 {
        spawns.push((Some(2), 1, true, Work::Steps(1)));
    }
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut unserved = 0;
    for _ in 0..400 {
        let schedule = (0..64)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                (seed % 4) as usize
            })
            .collect();
        let case = Case {
            distance: vec![vec![10, 40], vec![40, 10]],
            may_take: vec![vec![true, false], vec![false, true]],
            worker_node: vec![0, 0, 1, 1],
            blocked: vec![false, false, true, false],
            spawns: spawns.clone(),
            schedule,
            // Node 0's workers park soon; node 1's idle worker keeps searching between its
            // node's tiny tasks, as the pool's do (32 rounds).
            spin: vec![3, 3, 32, 32],
            // Under conservative-hard node 1's walk stops before node 0's queues.
            zone_stop: true,
        };
        let out = run_case(&case, false);
        assert!(out.quiesced && out.stranded.is_empty(), "{out:?}: {case:?}");
        unserved += usize::from(!out.unserved.is_empty());
        assert_eq!(out.ran, vec![1; spawns.len()], "{case:?}");
    }
    assert_eq!(
        unserved, 0,
        "schedules with a root left for a parked worker"
    );
}
