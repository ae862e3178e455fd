//! The live policy switch: the pool's current policy, and what workers derive from it (their
//! steal walks with cached answers, the ageing rule), swapped while the pool runs.
//!
//! # Protocol
//!
//! - Everything a worker derives from the policy lives in one immutable [`PolicyEpoch`]
//!   (the policy, every worker's [`StealWalker`] and victim map, the [`Ageing`] rule, and a
//!   generation number). The pool holds the current one in a [`PolicySlot`]: an
//!   `Arc<PolicyEpoch>` behind a mutex, plus the generation as an atomic.
//! - [`PolicySlot::switch`] builds the new epoch *outside* the lock (walks for every worker),
//!   then, under the lock, numbers it (old generation + 1) and swaps it in, and only then
//!   publishes the generation (Release). Switches are serialised by that lock.
//! - A worker caches its own `Arc<PolicyEpoch>` and its generation (`WorkerThread`). Once per
//!   search (`WorkerThread::steal`) and when it routes a task away from home, it compares
//!   its generation with the slot's (one Relaxed-then-Acquire load of a line written only by
//!   switches); only when they differ does it take the lock, clone the `Arc` and rebuild its
//!   ageing rule. The hot path takes no lock and no read-modify-write.
//! - A walk uses one epoch from start to end (the worker holds its cached epoch for the
//!   whole walk), so every decision of a walk comes from one policy: the switch takes effect
//!   *between* decisions. Workers that have not searched since keep deciding with the old
//!   epoch until their next search; that is the "between decisions" window.
//! - No task is lost or run twice: a policy holds no task, and the switch touches no queue.
//!   Aged tasks already in inboxes stay there (a worker pops its inbox whatever the policy);
//!   a task routed with the old ageing rule lies in a queue its owner drains either way.
//! - The balancer (`balance/`) reads the current epoch at the start of each pass and, when
//!   the generation changed, starts the new policy's per-CPU states
//!   (`BalanceSide::new_state`).
//! - Metrics: [`PolicySlot::switches`] counts switches (`PoolMetrics::policy_switches`),
//!   [`PolicySlot::switched_at_us`] says when the last one happened
//!   (`PoolMetrics::last_policy_switch_us`), and the current name is `PoolMetrics::policy`.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use crossbeam_utils::CachePadded;
use zonal_policy::{Ageing, Policy, StealWalker};
use zonal_topology::{CpuId, Topology};

use crate::sync::{AtomicU64, Mutex};

/// What the workers derive from one policy, built once per switch.
pub(crate) struct PolicyEpoch {
    pub(crate) policy: Arc<dyn Policy>,
    /// Per worker: its steal walk (the policy crate's [`StealWalker`]) over the CPUs that
    /// have a worker, nearest first, with the policy's cached answers; compact (its node's
    /// victims and one run per other node, over per-node CPU lists they share), so the
    /// epoch is O(workers × (workers per node + nodes)). A victim's worker is
    /// `PolicySlot::cpu_worker` of its CPU.
    pub(crate) walkers: Box<[StealWalker]>,
    /// The policy's ageing rule (`StealSide::ageing`), read once.
    pub(crate) ageing: Ageing,
    /// 0 for the policy the pool was built with, + 1 per switch.
    pub(crate) generation: u64,
}

impl std::fmt::Debug for PolicyEpoch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PolicyEpoch")
            .field("policy", &self.policy.name())
            .field("generation", &self.generation)
            .finish_non_exhaustive()
    }
}

impl PolicyEpoch {
    /// The epoch of `policy` for workers on `cpus` (`cpu_worker`: per CPU of `topo`, its
    /// worker or `usize::MAX`).
    fn build(
        policy: Arc<dyn Policy>,
        topo: &Topology,
        cpus: &[CpuId],
        cpu_worker: &[usize],
        generation: u64,
    ) -> Self {
        let side = policy.steal_side();
        let walkers: Box<[StealWalker]> =
            StealWalker::for_thieves(side, topo, cpus, |v| cpu_worker[v.index()] != usize::MAX)
                .into_boxed_slice();
        Self {
            ageing: side.ageing(),
            policy,
            walkers,
            generation,
        }
    }
}

impl PolicyEpoch {
    /// Which nodes' workers may take a task of which origin node, as the policy answers:
    /// `out[origin * nodes + node]`. The sleep protocol wakes only such workers besides a
    /// queue's owners (`Sleep::set_takers`).
    ///
    /// For each node with workers, one of its workers' walks stands for the node (every
    /// built-in policy answers by nodes and levels, which the node's workers share). Along
    /// it, up to its `Stop`, at the first slot of each victim node `v`, a task of origin `o`
    /// lying there is asked about:
    /// - `o == v` (fresh at home on `v`): the slot's cached answer (`None`, an answer that
    ///   depends on loads, counts as "may");
    /// - `o != v` (a child of a computation rooted on `o`, or a root placed on `o`, which
    ///   has no workers, queued on the nearest node that has): the policy's eligibility of
    ///   such a task (never migrated) at the victim's CPU, asked directly — not only read
    ///   off the walk's slots, which exist only for nodes with workers: a workerless `o`
    ///   would otherwise have no takers, and its children's pushes would wake nobody.
    ///
    /// A worker always takes its own node's tasks (its deque, its node's injector).
    /// `nodes³` questions at most, asked when the pool is built and at each switch.
    pub(crate) fn takers(&self, topo: &Topology, worker_node: &[u32]) -> Vec<bool> {
        use zonal_policy::{Eligibility, FreshSteal, MoveContext, VictimDecision};
        let nodes = topo.node_count();
        let side = self.policy.steal_side();
        let mut out = vec![false; nodes * nodes];
        let mut seen_thief = vec![false; nodes];
        for (w, walker) in self.walkers.iter().enumerate() {
            let thief = worker_node[w] as usize;
            out[thief * nodes + thief] = true;
            if std::mem::replace(&mut seen_thief[thief], true) {
                continue;
            }
            let mut seen_victim = vec![false; nodes];
            for slot in walker.slots() {
                let slot = &slot;
                let v = topo.node_of(slot.victim.cpu).index();
                let decision = slot.fresh.map(FreshSteal::victim_decision);
                if let Some(VictimDecision::Stop(_)) = decision {
                    break;
                }
                if matches!(decision, Some(VictimDecision::Skip(_)))
                    || std::mem::replace(&mut seen_victim[v], true)
                {
                    continue;
                }
                for o in 0..nodes {
                    let may = if o == v {
                        !matches!(slot.fresh, Some(FreshSteal::Refused(_)))
                    } else {
                        let mut task = FreshSteal::task(topo, slot.victim.cpu);
                        task.origin = zonal_topology::NodeId(o as u32);
                        side.eligibility(topo, &task, walker.thief(), MoveContext::steal(0))
                            == Eligibility::Allowed
                    };
                    out[o * nodes + thief] |= may;
                }
            }
        }
        out
    }
}

/// The pool's current policy epoch, swappable (module docs).
pub(crate) struct PolicySlot {
    /// The current epoch's generation, read by workers once per search.
    generation: CachePadded<AtomicU64>,
    current: Mutex<Arc<PolicyEpoch>>,
    /// Per CPU of the topology: its worker's index, or `usize::MAX`.
    cpu_worker: Box<[usize]>,
    /// The workers' CPUs.
    cpus: Box<[CpuId]>,
    /// Switches so far.
    switches: AtomicU64,
    /// When the last switch happened, µs of the pool's clock (`u64::MAX`: never).
    switched_at_us: AtomicU64,
}

impl std::fmt::Debug for PolicySlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PolicySlot")
            .field("policy", &self.name())
            .field("generation", &self.generation())
            .finish_non_exhaustive()
    }
}

impl PolicySlot {
    /// The slot of a pool with workers on `cpus`, starting with `policy`.
    pub(crate) fn new(policy: Arc<dyn Policy>, topo: &Topology, cpus: &[CpuId]) -> Self {
        let mut cpu_worker = vec![usize::MAX; topo.cpu_count()];
        for (w, &c) in cpus.iter().enumerate() {
            cpu_worker[c.index()] = w;
        }
        let epoch = PolicyEpoch::build(policy, topo, cpus, &cpu_worker, 0);
        Self {
            generation: CachePadded::new(AtomicU64::new(0)),
            current: Mutex::new(Arc::new(epoch)),
            cpu_worker: cpu_worker.into_boxed_slice(),
            cpus: cpus.into(),
            switches: AtomicU64::new(0),
            switched_at_us: AtomicU64::new(u64::MAX),
        }
    }

    /// The current generation (Acquire: a worker that sees it then finds at least this
    /// epoch under the lock).
    #[inline]
    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// The current epoch (takes the lock: not for the hot path).
    pub(crate) fn current(&self) -> Arc<PolicyEpoch> {
        Arc::clone(&self.current.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// The current policy's name.
    pub(crate) fn name(&self) -> String {
        self.current().policy.name().to_owned()
    }

    /// Per CPU of the topology: its worker's index, or `usize::MAX`.
    pub(crate) fn cpu_worker(&self) -> &[usize] {
        &self.cpu_worker
    }

    /// Switches so far.
    pub(crate) fn switches(&self) -> u64 {
        self.switches.load(Ordering::Relaxed)
    }

    /// Makes `policy` the pool's policy; returns the new generation.
    /// When the last switch happened (µs of the pool's clock), if one did.
    pub(crate) fn switched_at_us(&self) -> Option<u64> {
        let at = self.switched_at_us.load(Ordering::Relaxed);
        (at != u64::MAX).then_some(at)
    }

    ///
    /// `publish` is called with the new epoch under the switch's lock, after the swap: what
    /// it derives from the epoch (the sleep protocol's takers, `Registry::refresh_takers`)
    /// is published in the order of the switches, so two concurrent switches cannot leave
    /// the older epoch's answer behind.
    pub(crate) fn switch(
        &self,
        policy: Arc<dyn Policy>,
        topo: &Topology,
        now_us: u64,
        publish: impl FnOnce(&PolicyEpoch),
    ) -> u64 {
        let mut epoch = PolicyEpoch::build(policy, topo, &self.cpus, &self.cpu_worker, 0);
        let mut cur = self.current.lock().unwrap_or_else(|e| e.into_inner());
        let generation = cur.generation + 1;
        epoch.generation = generation;
        *cur = Arc::new(epoch);
        publish(&cur);
        // Release, after the swap: a worker that sees the new generation finds the new
        // epoch (or a later one) when it takes the lock.
        self.generation.store(generation, Ordering::Release);
        self.switches.fetch_add(1, Ordering::Relaxed);
        self.switched_at_us.store(now_us, Ordering::Relaxed);
        drop(cur);
        tracing::debug!(generation, "policy switched");
        generation
    }
}

#[cfg(test)]
mod test {
    use zonal_policy::PolicyConfig;
    use zonal_topology::presets;

    use super::*;

    #[test]
    fn a_switch_numbers_the_new_epoch_and_counts_itself() {
        let topo = presets::preset("s1").unwrap();
        let cpus: Vec<CpuId> = (0..4).map(CpuId).collect();
        let linux = PolicyConfig::named("linux").unwrap().build().unwrap();
        let slot = PolicySlot::new(linux, &topo, &cpus);
        assert_eq!((slot.generation(), slot.switches()), (0, 0));
        assert_eq!(slot.current().ageing, Ageing::Never);
        let hard = PolicyConfig::named("conservative-hard")
            .unwrap()
            .build()
            .unwrap();
        assert_eq!(slot.switched_at_us(), None);
        assert_eq!(slot.switch(hard, &topo, 1_234, |_| {}), 1);
        assert_eq!(slot.switched_at_us(), Some(1_234));
        let e = slot.current();
        assert_eq!(
            (e.generation, slot.generation(), slot.switches()),
            (1, 1, 1)
        );
        assert_eq!(slot.name(), "conservative-hard");
        assert!(e.ageing.limit().is_some());
        assert_eq!(e.walkers.len(), 4);
        assert!(e
            .walkers
            .iter()
            .flat_map(StealWalker::slots)
            .all(|s| slot.cpu_worker()[s.victim.cpu.index()] < 4));
    }
}

/// The sleep protocol's takers follow the pool's policy through concurrent switches: they
/// are published under the switch's lock (`PolicySlot::switch`'s `publish`), so the last
/// switch's takers are the ones left, never an older epoch's (before, each switch published
/// after releasing the lock, and two racing switches could leave the older answer).
#[cfg(all(test, not(zonal_loom)))]
mod takers_test {
    use std::sync::Arc;

    use zonal_policy::{NoPolicy, Policy, PolicyConfig};

    use crate::ThreadPoolBuilder;

    #[test]
    fn concurrent_switches_leave_the_current_epochs_takers() {
        let pool = ThreadPoolBuilder::new()
            .preset("s1")
            .worker_cpus([0, 1, 2, 3, 16, 17])
            .policy_name("conservative-hard")
            .build()
            .expect("pool on s1");
        let r = pool.registry();
        let hard: Arc<dyn Policy> = PolicyConfig::named("conservative-hard")
            .unwrap()
            .build()
            .unwrap();
        let none: Arc<dyn Policy> = Arc::new(NoPolicy);
        let nodes = r.topo.node_count();
        for _ in 0..200 {
            std::thread::scope(|s| {
                s.spawn(|| pool.set_policy_object(Arc::clone(&hard)));
                s.spawn(|| pool.set_policy_object(Arc::clone(&none)));
            });
            let want = r.policy.current().takers(&r.topo, &r.worker_node);
            for o in 0..nodes {
                for n in 0..nodes {
                    assert_eq!(
                        r.sleep.takes(o as u32, n as u32),
                        want[o * nodes + n],
                        "origin {o}, node {n}: the takers of an older epoch"
                    );
                }
            }
        }
    }
}

/// Model test of the switch under loom (`RUSTFLAGS="--cfg zonal_loom" cargo test -p
/// zonal-runtime --lib --release policy_switch::loom`): a worker that sees a generation
/// finds that epoch or a later one under the lock, whatever the interleaving with a switch.
/// The model does catch a generation published before its epoch is swapped in (checked by
/// hand: storing it first, then swapping under a second lock, fails the assertion).
#[cfg(all(test, zonal_loom))]
mod loom_model {
    use std::sync::Arc;

    use zonal_policy::{NoPolicy, PolicyConfig};
    use zonal_topology::{presets, CpuId};

    use super::PolicySlot;

    #[test]
    fn a_seen_generation_finds_its_epoch_or_a_later_one() {
        let topo = Arc::new(presets::preset("s1").unwrap());
        let cpus = [CpuId(0), CpuId(16)];
        crate::loom_support::model(3, move || {
            let slot = Arc::new(PolicySlot::new(Arc::new(NoPolicy), &topo, &cpus));
            let (s2, t2) = (Arc::clone(&slot), Arc::clone(&topo));
            let switcher = loom::thread::spawn(move || {
                let hard = PolicyConfig::named("conservative-hard")
                    .unwrap()
                    .build()
                    .unwrap();
                s2.switch(hard, &t2, 7, |_| {});
            });
            // The worker's refresh: the generation (Acquire), then the epoch under the lock.
            let seen = slot.generation();
            let epoch = slot.current();
            assert!(
                epoch.generation >= seen,
                "saw {seen}, found {}",
                epoch.generation
            );
            if seen == 1 {
                assert_eq!(epoch.policy.name(), "conservative-hard");
            }
            switcher.join().unwrap();
            assert_eq!((slot.generation(), slot.current().generation), (1, 1));
            assert_eq!(slot.switches(), 1);
        });
    }
}
