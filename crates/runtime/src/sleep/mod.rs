//! Parking idle workers without lost wake-ups, and the one push-and-wake function every
//! queue of the pool is pushed through ([`Sleep::push_and_wake`]). The protocol is written
//! down in `README.md`, next to this file; the comments below cite its numbered steps.
//!
//! No global lock: sleepers register in per-node bit sets (one bit per worker of the node),
//! a waker claims one by clearing its bit, and each worker parks on a mutex and condition
//! variable of its own.

use std::sync::atomic::Ordering;

use crate::sync::{fence, AtomicU64, AtomicUsize, Condvar, Mutex, MutexGuard};

use crossbeam_utils::CachePadded;

use crate::steal::hints::NodeHints;

/// One worker's parking spot.
#[derive(Debug, Default)]
struct WorkerSleep {
    /// A wake-up token: set by wakers, consumed by the worker when it unparks.
    notified: Mutex<bool>,
    cv: Condvar,
}

/// The sleepers of one node: a bit per worker of the node (its ordinal among them), set
/// while that worker is registered as sleepy or parked (step 1), and their count.
#[derive(Debug)]
struct NodeSleepers {
    /// How many bits of `bits` are set (a hint read without claiming: step 5).
    count: AtomicUsize,
    /// Searching workers of this node (step 0a), when the pool has more than one node.
    searching: AtomicUsize,
    bits: Box<[AtomicU64]>,
    /// Ordinal → worker index.
    workers: Box<[usize]>,
}

/// Who drains the queue a task is pushed on: the workers that take it from there without
/// asking the policy. Their searchers make a wake-up unnecessary (steps 5, 5'), and they
/// are woken first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Owner {
    /// The pusher itself, a worker of `node`: its own deque or away queue (step 5': no
    /// fence, the pusher drains the queue before it can park).
    Pusher {
        /// The pusher's node.
        node: u32,
    },
    /// One worker, not the pusher: its inbox or its away queue.
    Worker(usize),
    /// The workers of a node: its injector.
    Node(u32),
}

/// Which sleepers besides the owners may be woken for a task: the ones the policy may let
/// take it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Others {
    /// Nobody else (a refused task handed back, a task the balancer gave to one worker, a
    /// pinned one): only the owners.
    None,
    /// The workers of the nodes that may take a task whose origin is this node
    /// ([`Sleep::set_takers`]), nearest to it first.
    Origin(u32),
}

/// The pool's sleep state.
#[derive(Debug)]
pub(crate) struct Sleep {
    /// Registered sleepers, the pool over (steps 2 and 5): the producers' first check.
    num_sleepers: CachePadded<AtomicUsize>,
    /// Searching workers, the pool over (step 0a).
    searching: CachePadded<AtomicUsize>,
    /// Per node of the topology (an empty set for a node without workers).
    nodes: Box<[CachePadded<NodeSleepers>]>,
    /// Per worker: its node and its ordinal there.
    slot: Box<[(u32, u32)]>,
    /// Whether the pool has more than one node with workers: per-node searcher counts.
    per_node: bool,
    /// `takers[origin * nodes + node]`, bit-packed: whether workers of `node` may take a
    /// task whose origin is `origin` (the policy's answer, [`set_takers`](Self::set_takers)).
    takers: Box<[AtomicU64]>,
    /// Per origin node: the nodes with workers, nearest first (ties: lowest id).
    nearest: Box<[Box<[u32]>]>,
    workers: Box<[CachePadded<WorkerSleep>]>,
    /// Per node: whether its stealable queues may hold work, set by every push here before
    /// its wake-up, read and cleared by thieves (`../steal/hints.rs`).
    hints: NodeHints,
}

/// Whether a searcher count that would wrap below zero panics: in debug builds and in the
/// loom models (which run in release).
const CHECK_COUNTS: bool = cfg!(any(debug_assertions, zonal_loom));

/// What a claim got.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Claimed {
    /// This worker, out of its set and counted as a searcher: to be notified.
    Worker(usize),
    /// Nobody (no bit set, or every bit seen was cleared first); `last_place`: the
    /// searcher's place the claim took and gave back was the last one of its count.
    Nobody { last_place: bool },
}

/// How many times a wake-up whose claims found nobody tries again when it owes one
/// ([`Sleep::wake_among`]).
const CLAIM_TRIES: u32 = 4;

/// Evidence that a worker registered as sleepy (step 1); consumed by [`Sleep::park_for`] or
/// [`Sleep::cancel`]. Producing one is evidence that the worker's bit is set or that a
/// waker cleared it.
#[must_use]
#[derive(Debug)]
pub(crate) struct Sleepy {
    worker: usize,
}

impl Sleep {
    /// The sleep state of workers on `worker_node` (per worker, its node), on a machine of
    /// `nodes` nodes whose distances `distance(a, b)` gives. Every worker may take every
    /// task until [`set_takers`](Self::set_takers) says otherwise.
    pub(crate) fn new(
        worker_node: &[u32],
        nodes: usize,
        distance: impl Fn(u32, u32) -> u32,
    ) -> Self {
        let mut members: Vec<Vec<usize>> = vec![Vec::new(); nodes];
        let mut slot = Vec::with_capacity(worker_node.len());
        for (w, &n) in worker_node.iter().enumerate() {
            let m = &mut members[n as usize];
            slot.push((n, m.len() as u32));
            m.push(w);
        }
        let with_workers: Vec<u32> = (0..nodes as u32)
            .filter(|&n| !members[n as usize].is_empty())
            .collect();
        let nearest = (0..nodes as u32)
            .map(|o| {
                let mut v = with_workers.clone();
                v.sort_by_key(|&n| (n != o, distance(o, n), n));
                v.into_boxed_slice()
            })
            .collect();
        let nodes_sleepers = members
            .into_iter()
            .map(|m| {
                CachePadded::new(NodeSleepers {
                    count: AtomicUsize::new(0),
                    searching: AtomicUsize::new(0),
                    bits: (0..m.len().div_ceil(64))
                        .map(|_| AtomicU64::new(0))
                        .collect(),
                    workers: m.into_boxed_slice(),
                })
            })
            .collect();
        Self {
            num_sleepers: CachePadded::new(AtomicUsize::new(0)),
            searching: CachePadded::new(AtomicUsize::new(0)),
            nodes: nodes_sleepers,
            slot: slot.into_boxed_slice(),
            per_node: with_workers.len() > 1,
            takers: (0..(nodes * nodes).div_ceil(64))
                .map(|_| AtomicU64::new(u64::MAX))
                .collect(),
            nearest,
            workers: (0..worker_node.len())
                .map(|_| CachePadded::new(WorkerSleep::default()))
                .collect(),
            hints: NodeHints::new(nodes),
        }
    }

    /// The workers of `node` (empty for a node without workers or outside the topology).
    pub(crate) fn node_members(&self, node: u32) -> &[usize] {
        self.nodes.get(node as usize).map_or(&[], |n| &n.workers)
    }

    /// The per-node work hints the pushes set (`../steal/hints.rs`).
    #[inline]
    pub(crate) fn hints(&self) -> &NodeHints {
        &self.hints
    }

    /// Records which nodes' workers may take a task of which origin (`may_take(origin,
    /// node)`): the policy's answer, given when the pool starts and at every policy switch.
    /// A stale answer read by a concurrent wake-up costs one wake-up too many or too few for
    /// parallelism, never a task: the owners of every queue are woken whatever it says.
    pub(crate) fn set_takers(&self, may_take: impl Fn(u32, u32) -> bool) {
        let nodes = self.nodes.len();
        for (i, word) in self.takers.iter().enumerate() {
            let mut v = 0u64;
            for b in 0..64 {
                let k = i * 64 + b;
                if k < nodes * nodes && may_take((k / nodes) as u32, (k % nodes) as u32) {
                    v |= 1 << b;
                }
            }
            word.store(v, Ordering::Relaxed);
        }
    }

    /// [`may_take`](Self::may_take), for the tests of the switch (`policy_switch.rs`).
    #[cfg(test)]
    pub(crate) fn takes(&self, origin: u32, node: u32) -> bool {
        self.may_take(origin, node)
    }

    /// Whether workers of `node` may take a task of `origin` ([`set_takers`](Self::set_takers)).
    fn may_take(&self, origin: u32, node: u32) -> bool {
        let k = origin as usize * self.nodes.len() + node as usize;
        self.takers
            .get(k / 64)
            .is_some_and(|w| w.load(Ordering::Relaxed) & (1 << (k % 64)) != 0)
    }

    // ---- Pushing (steps 5, 5', 5'') ----

    /// The one push-and-wake function: runs `push` (which queues work on a queue drained by
    /// `owner`), then the wake-up check that queue kind needs (README steps 5, 5', 5''):
    ///
    /// - [`Owner::Pusher`]: no fence; wakes a sleeper only if no worker of the pusher's node
    ///   searches (5').
    /// - any other owner: `fence(SeqCst)` after the push (the Dekker handshake with a
    ///   sleeper's fence, step 1), then: a sleeping owner worker is woken; otherwise, if no
    ///   searcher of the owners would find the task (5), one sleeper of the owners — or of
    ///   the `others` — is.
    ///
    /// Whom it wakes: the owners first, then the nearest node of `others` with a sleeper;
    /// never anyone else, so that refused work does not wake workers who would refuse it.
    /// Nothing else in the pool wakes a worker for work (latches and shutdown wake their
    /// own): so once no queued task is allowed to an idle worker, no wake-up is issued.
    #[inline]
    pub(crate) fn push_and_wake(&self, owner: Owner, others: Others, push: impl FnOnce()) {
        push();
        match owner {
            Owner::Pusher { node } => {
                // The node's hint before any wake-up (`../steal/hints.rs`), no fence.
                self.hints.pushed(node);
                // Relaxed: see README step 5' (the pusher drains the queue itself).
                if self.num_sleepers.load(Ordering::Relaxed) != 0 {
                    self.wake_thieves(node, others);
                }
            }
            _ => {
                // SeqCst fence: pairs with the fence in `get_sleepy` (README step 5). After
                // it, Relaxed loads suffice: if the sleeper's fence came first we see its
                // registration (and its searcher place given back), otherwise its re-search
                // sees our push.
                fence(Ordering::SeqCst);
                // The queue's node's hint, after the fence and before any wake-up
                // (`../steal/hints.rs`: the Dekker pair with a thief that clears it).
                self.hints.pushed(match owner {
                    Owner::Worker(w) => self.slot[w].0,
                    Owner::Node(n) | Owner::Pusher { node: n } => n,
                });
                if self.num_sleepers.load(Ordering::Relaxed) != 0 {
                    self.wake_for(owner, others);
                }
            }
        }
    }

    /// Step 5 past the fence, with someone asleep.
    #[cold]
    fn wake_for(&self, owner: Owner, others: Others) {
        match owner {
            Owner::Worker(w) => {
                let node = self.slot[w].0;
                match self.claim_worker(w) {
                    Claimed::Worker(w) => {
                        self.notify(w);
                        return;
                    }
                    // The place we took and gave back was the last one (see `wake_among`).
                    Claimed::Nobody { last_place: true } if self.owe_wake(node) => {
                        self.wake_among(Some(node), Others::Origin(node));
                        return;
                    }
                    Claimed::Nobody { .. } => {}
                }
                // The owner is awake: it drains the queue before it parks (its re-search,
                // step 2). More hands only if the task may go to others.
                if others != Others::None {
                    self.wake_thieves(node, others);
                }
            }
            Owner::Node(n) => {
                // The node's workers pop its injector without asking the policy.
                if self.searching_on(n).load(Ordering::Relaxed) == 0 {
                    self.wake_among(Some(n), others);
                }
            }
            Owner::Pusher { node } => self.wake_thieves(node, others),
        }
    }

    /// A task on a queue of a worker of `node` that its owner drains: other workers take it
    /// as thieves, which the policy checks. A searcher of `node` makes a wake-up
    /// unnecessary only if the policy lets `node` take the task (it finds it first: own-node
    /// victims come first in every walk); a sleeper of `node` is woken first only then too.
    #[cold]
    fn wake_thieves(&self, node: u32, others: Others) {
        let allowed = match others {
            Others::None => return,
            Others::Origin(o) => self.may_take(o, node),
        };
        if allowed && self.searching_on(node).load(Ordering::Relaxed) != 0 {
            return;
        }
        self.wake_among(allowed.then_some(node), others);
    }

    /// Wakes one sleeper of `first` if given, else of the nearest node that `others`
    /// allows.
    ///
    /// A claim that finds nobody gives back the searcher's place it took (see
    /// [`claim_in`](Self::claim_in)). If that was the last place of its node's count (the
    /// count producers of that node trust, `searching_on`) and someone still sleeps, the
    /// place may have hidden the stop of that node's last real searcher (step 0b: it saw
    /// us and woke nobody), so we owe the wake-up *that searcher* would have given — one
    /// sleeper of its node, else of the nearest node that may take its node's tasks — and
    /// try that, at most [`CLAIM_TRIES`] times in all. Each failed try means a sleeper left
    /// its set while we looked: a worker that is awake.
    #[cold]
    fn wake_among(&self, first: Option<u32>, others: Others) {
        let (mut first, mut others) = (first, others);
        for _ in 0..CLAIM_TRIES {
            let mut owed = None;
            let mut claim = |n: u32| match self.claim_in(n) {
                Claimed::Worker(w) => Some(w),
                Claimed::Nobody { last_place } => {
                    if last_place {
                        owed.get_or_insert(n);
                    }
                    None
                }
            };
            let w = first.and_then(&mut claim).or_else(|| match others {
                Others::None => None,
                Others::Origin(o) => self
                    .nearest
                    .get(o as usize)?
                    .iter()
                    .filter(|&&n| Some(n) != first && self.may_take(o, n))
                    .find_map(|&n| claim(n)),
            });
            if let Some(w) = w {
                self.notify(w);
                return;
            }
            match owed {
                Some(n) if self.owe_wake(n) => {
                    first = Some(n);
                    others = Others::Origin(n);
                }
                _ => return,
            }
        }
    }

    /// After giving back the last searcher's place of `node`'s count: whether a sleeper
    /// must still be woken for it (0b's check, after its fence): someone sleeps and no
    /// worker of `node` searches.
    fn owe_wake(&self, node: u32) -> bool {
        // SeqCst fence: as in `found_work`.
        fence(Ordering::SeqCst);
        self.num_sleepers.load(Ordering::Relaxed) != 0
            && self.searching_on(node).load(Ordering::Relaxed) == 0
    }

    /// Takes one registered sleeper of `node` out of its set, counted as a searcher (a woken
    /// worker searches, step 0a), to be notified.
    ///
    /// The searcher's place is taken *before* the bit is cleared: the claimed worker may
    /// see its bit cleared (`cancel`, `park`), find work and give the place back at once
    /// (0b), and its decrement must find our increment there. Counted after the clear, a
    /// waker preempted between the two let the count wrap below zero. So the count is never
    /// below the searchers there are, and at most one above it per claim under way.
    fn claim_in(&self, node: u32) -> Claimed {
        let Some(ns) = self.nodes.get(node as usize) else {
            return Claimed::Nobody { last_place: false };
        };
        if ns.count.load(Ordering::Relaxed) == 0 {
            return Claimed::Nobody { last_place: false };
        }
        self.add_searcher(node);
        for (i, word) in ns.bits.iter().enumerate() {
            let mut v = word.load(Ordering::Relaxed);
            while v != 0 {
                let bit = 1u64 << v.trailing_zeros();
                // AcqRel: whoever clears a bit owns that registration (the worker itself in
                // `deregister`, or one waker); the other sees it cleared.
                let prev = word.fetch_and(!bit, Ordering::AcqRel);
                if prev & bit != 0 {
                    let w = ns.workers[i * 64 + bit.trailing_zeros() as usize];
                    self.claimed(w);
                    return Claimed::Worker(w);
                }
                v = prev & !bit;
            }
        }
        Claimed::Nobody {
            last_place: self.stop_searching(node),
        }
    }

    /// Takes `worker` out of its node's set if it is registered there: `Worker` if it was
    /// (counted as a searcher, to be notified). Its place is taken before the bit is
    /// cleared, as in [`claim_in`](Self::claim_in).
    fn claim_worker(&self, worker: usize) -> Claimed {
        let (word, bit) = self.bit_of(worker);
        if word.load(Ordering::Relaxed) & bit == 0 {
            return Claimed::Nobody { last_place: false };
        }
        let node = self.slot[worker].0;
        self.add_searcher(node);
        if word.fetch_and(!bit, Ordering::AcqRel) & bit != 0 {
            self.claimed(worker);
            Claimed::Worker(worker)
        } else {
            Claimed::Nobody {
                last_place: self.stop_searching(node),
            }
        }
    }

    /// A waker cleared `worker`'s bit, after counting it as a searcher (so that other
    /// producers see someone searching meanwhile): the sleeper counts follow.
    fn claimed(&self, worker: usize) {
        let node = self.slot[worker].0;
        self.nodes[node as usize]
            .count
            .fetch_sub(1, Ordering::Relaxed);
        self.num_sleepers.fetch_sub(1, Ordering::Relaxed);
    }

    fn bit_of(&self, worker: usize) -> (&AtomicU64, u64) {
        let (node, ord) = self.slot[worker];
        let ns = &self.nodes[node as usize];
        (&ns.bits[ord as usize / 64], 1u64 << (ord % 64))
    }

    // ---- An idle worker (steps 0–4) ----

    /// Step 1: register as sleepy. The caller must then search every queue once more
    /// (step 2) before parking.
    #[cold]
    pub(crate) fn get_sleepy(&self, worker: usize) -> Sleepy {
        // A stale token from an earlier registration only causes a spurious wake-up; a token
        // for *this* registration cannot exist yet, as nobody has seen our bit.
        *lock(&self.workers[worker].notified) = false;
        let node = self.slot[worker].0;
        // The counts first, then the bit: a waker that clears the bit decrements counts that
        // are already there (a count never wraps below zero).
        self.nodes[node as usize]
            .count
            .fetch_add(1, Ordering::Relaxed);
        self.num_sleepers.fetch_add(1, Ordering::Relaxed);
        let (word, bit) = self.bit_of(worker);
        word.fetch_or(bit, Ordering::Relaxed);
        // SeqCst fence: orders our registration before our re-search of the queues; pairs
        // with the producer's fence after its push (step 5). See README, "Why no wake-up is
        // lost".
        fence(Ordering::SeqCst);
        Sleepy { worker }
    }

    /// Step 3: the re-search found work (or the wait is over): leave the set. `true`: a
    /// waker took us out first (step 5) and made us a searcher (step 0a): the caller now
    /// holds a searcher's place and must give it back (steps 0b, 0c).
    #[cold]
    #[must_use]
    pub(crate) fn cancel(&self, token: Sleepy) -> bool {
        !self.deregister(token.worker)
    }

    /// Step 4: park until notified, then leave the set. `true`: woken by a claim (a
    /// producer or a searcher, steps 0b, 0c, 5), and made a searcher by the waker; `false`:
    /// woken by a latch, shutdown, or a stale token (a spurious wake-up).
    /// (The model tests call it; the pool calls [`park_for`](Self::park_for).)
    #[cfg(all(test, zonal_loom))]
    #[cold]
    #[must_use]
    pub(crate) fn park(&self, token: Sleepy) -> bool {
        self.park_for(token, None)
    }

    /// [`park`](Self::park), for at most `timeout` when given (a displaced worker,
    /// `displacement.rs`). A timeout is a spurious wake-up: the worker leaves the set as
    /// after a stale token (`false`), unless a waker took it out first, which made it a
    /// searcher (`true`, as for `park`); that waker's token then arrives later and is stale.
    #[cold]
    #[must_use]
    pub(crate) fn park_for(&self, token: Sleepy, timeout: Option<std::time::Duration>) -> bool {
        let w = &self.workers[token.worker];
        let mut g = lock(&w.notified);
        match timeout {
            None => {
                while !*g {
                    g = w.cv.wait(g).unwrap_or_else(|e| e.into_inner());
                }
            }
            // One wait: a wake-up before the time is up, spurious or not, ends it too.
            Some(t) if !*g => {
                g =
                    w.cv.wait_timeout(g, t)
                        .map_or_else(|e| e.into_inner().0, |(g, _)| g);
            }
            Some(_) => {}
        }
        *g = false;
        drop(g);
        !self.deregister(token.worker)
    }

    /// Leaves the set; `false`: a waker took us out already, and counted us as a searcher.
    fn deregister(&self, worker: usize) -> bool {
        let (word, bit) = self.bit_of(worker);
        if word.fetch_and(!bit, Ordering::AcqRel) & bit == 0 {
            return false;
        }
        let node = self.slot[worker].0;
        self.nodes[node as usize]
            .count
            .fetch_sub(1, Ordering::Relaxed);
        self.num_sleepers.fetch_sub(1, Ordering::Relaxed);
        true
    }

    /// The searcher count that a queue drained by the workers of `node` cares about (steps
    /// 5, 5'): its node's, or the pool's with one node.
    #[inline]
    fn searching_on(&self, node: u32) -> &AtomicUsize {
        match self.nodes.get(node as usize) {
            Some(ns) if self.per_node => &ns.searching,
            _ => &self.searching,
        }
    }

    /// Step 0a: an idle worker of `node` starts searching (there is no bound: every idle
    /// worker searches, and spins, before it parks, as rayon's do). It must give its place
    /// back (steps 0b, 0c).
    #[inline]
    pub(crate) fn start_searching(&self, node: u32) {
        self.add_searcher(node);
    }

    /// Searching workers, the pool over (the model tests and the unit tests read it).
    #[cfg(test)]
    pub(crate) fn searching(&self) -> usize {
        self.searching.load(Ordering::Relaxed)
    }

    /// Whether `worker`'s wake-up token is set (the wake model reads it, `wake_model.rs`).
    #[cfg(all(test, not(zonal_loom)))]
    pub(crate) fn notified(&self, worker: usize) -> bool {
        *lock(&self.workers[worker].notified)
    }

    /// Registered sleepers, the pool over (the unit and model tests read it).
    #[cfg(test)]
    pub(crate) fn sleepers(&self) -> usize {
        self.num_sleepers.load(Ordering::Relaxed)
    }

    /// Counts a worker of `node` as searching (the waker does it for the worker it claims,
    /// before the wake-up, so that other producers see a searcher meanwhile).
    fn add_searcher(&self, node: u32) {
        self.searching.fetch_add(1, Ordering::Relaxed);
        if self.per_node {
            self.nodes[node as usize]
                .searching
                .fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Steps 0b, 0c: a searcher of `node` stops searching. `true`: it was the last one *of
    /// the count that producers for `node`'s queues trust* (`searching_on`: its node's with
    /// several nodes, the pool's with one). A producer that skipped its wake-up trusted
    /// exactly that count, so the answer the chain (0b) acts on must come from it: answered
    /// from the pool's count, a searcher of another node hid the last searcher of `node`,
    /// and a push onto `node`'s injector stayed there while `node`'s other workers slept
    /// (README, "Why no wake-up is lost", several nodes).
    #[inline]
    pub(crate) fn stop_searching(&self, node: u32) -> bool {
        let prev = self.searching.fetch_sub(1, Ordering::Relaxed);
        assert!(prev > 0 || !CHECK_COUNTS, "searcher count underflows");
        if self.per_node {
            let prev = self.nodes[node as usize]
                .searching
                .fetch_sub(1, Ordering::Relaxed);
            assert!(
                prev > 0 || !CHECK_COUNTS,
                "searcher count of node {node} underflows"
            );
            return prev == 1;
        }
        prev == 1
    }

    /// Step 0b: a searcher of `node` found work. It stops searching and, if it was the last
    /// searcher of its node's count ([`stop_searching`](Self::stop_searching)) and someone
    /// sleeps, wakes one more worker of its node, else of the nearest node that may take its
    /// node's tasks (which searches: the chain that ramps parallelism up one worker at a
    /// time).
    #[inline]
    pub(crate) fn found_work(&self, node: u32) {
        if self.stop_searching(node) {
            // `owe_wake`'s SeqCst fence pairs with a sleeper's fence (step 1), so that the
            // worker that registers while we stop either is seen here or sees, in its
            // re-search, what we left in the queue we took from (README step 0b).
            if self.owe_wake(node) {
                self.wake_among(Some(node), Others::Origin(node));
            }
        }
    }

    /// Wakes one specific worker whatever it is doing (a latch it waits on was set): its
    /// token is set, and a registered worker stays registered (not a searcher).
    #[cold]
    pub(crate) fn wake_worker(&self, worker: usize) {
        self.notify(worker);
    }

    /// Wakes every worker (shutdown).
    #[cold]
    pub(crate) fn wake_all(&self) {
        for w in 0..self.workers.len() {
            self.notify(w);
        }
    }

    fn notify(&self, worker: usize) {
        let w = &self.workers[worker];
        let mut g = lock(&w.notified);
        *g = true;
        w.cv.notify_one();
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Nothing panics while holding these locks (flag writes); recover anyway.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(all(test, zonal_loom))]
mod loom;

#[cfg(all(test, not(zonal_loom)))]
mod test;

#[cfg(all(test, not(zonal_loom)))]
mod wake_model;
