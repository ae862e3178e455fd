//! A pool without threads: queues in plain memory, driven by the very pass code the live
//! pool runs (`driver.rs`). For benchmarks of the pass on machines larger than the host
//! (`benches/control_pass.rs`: 1024 CPUs on a 2-core machine) and for tests of the pass's
//! bookkeeping. Not part of the supported API.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::sync::Arc;

use zonal_policy::Policy;
use zonal_topology::{CpuId, Level, Topology};

use crate::task_meta::Meta;

use super::driver::{Driver, Queues};
use super::load::Probe;
use super::PassReport;

/// A worker of the synthetic pool.
#[derive(Clone, Debug, Default)]
struct Worker {
    /// Fresh tasks in the deque (never moved by a pass).
    deque: u32,
    /// Task ids in the inbox.
    inbox: Vec<u32>,
    /// Task ids in the away queue, oldest first.
    away: VecDeque<u32>,
    /// Since when the worker idles.
    idle_since_us: Option<u64>,
}

/// The queues of a synthetic pool.
#[derive(Clone, Debug)]
struct Machine {
    topo: Arc<Topology>,
    cpus: Vec<CpuId>,
    cpu_worker: Vec<usize>,
    workers: RefCell<Vec<Worker>>,
    metas: RefCell<Vec<Meta>>,
}

/// A pool of one worker per CPU of a topology, without threads, whose away queues hold
/// tasks born on their worker's node; [`pass`](Self::pass) runs one balancing pass over it
/// with the code the live pool runs. For benchmarks and tests, not the supported API.
#[doc(hidden)]
#[derive(Clone, Debug)]
pub struct SyntheticPool {
    machine: Machine,
    policy: Arc<dyn Policy>,
    driver: Driver,
}

impl SyntheticPool {
    /// One worker per CPU of `topo`; `fill(cpu)` gives the number of tasks in its away queue,
    /// and whether it idles.
    pub fn new(
        topo: Arc<Topology>,
        policy: Arc<dyn Policy>,
        mut fill: impl FnMut(CpuId) -> (u32, bool),
    ) -> Self {
        let cpus: Vec<CpuId> = (0..topo.cpu_count()).map(CpuId::new).collect();
        let mut metas = Vec::new();
        let workers = cpus
            .iter()
            .map(|&c| {
                let (n, idle) = fill(c);
                let node = topo.node_of(c).0;
                let away = (0..n)
                    .map(|_| {
                        metas.push(Meta::fresh(node));
                        (metas.len() - 1) as u32
                    })
                    .collect();
                Worker {
                    away,
                    idle_since_us: idle.then_some(0),
                    ..Worker::default()
                }
            })
            .collect();
        let machine = Machine {
            cpu_worker: (0..cpus.len()).collect(),
            topo: Arc::clone(&topo),
            cpus,
            workers: RefCell::new(workers),
            metas: RefCell::new(metas),
        };
        let n = machine.cpus.len();
        Self {
            machine,
            policy,
            driver: Driver::new(topo, n),
        }
    }

    /// One balancing pass at `now_us`.
    pub fn pass(&mut self, now_us: u64) -> PassReport {
        self.driver.pass(&self.machine, &*self.policy, 0, now_us)
    }

    /// Tasks queued over all workers (away queues and inboxes).
    #[must_use]
    pub fn queued(&self) -> usize {
        let w = self.machine.workers.borrow();
        w.iter().map(|w| w.away.len() + w.inbox.len()).sum()
    }

    /// Every task's migration count, by task.
    #[must_use]
    pub fn migrations(&self) -> Vec<u32> {
        self.machine
            .metas
            .borrow()
            .iter()
            .map(|m| m.moves())
            .collect()
    }
}

impl Queues for Machine {
    type Task = u32;

    fn topology(&self) -> &Arc<Topology> {
        &self.topo
    }

    fn worker_cpus(&self) -> &[CpuId] {
        &self.cpus
    }

    fn cpu_worker(&self) -> &[usize] {
        &self.cpu_worker
    }

    fn probe(&self, w: usize) -> Probe {
        let ws = self.workers.borrow();
        let x = &ws[w];
        Probe {
            queued: x.deque + (x.inbox.len() + x.away.len()) as u32,
            away: x.away.len() as u32,
            idle_since_us: x.idle_since_us,
            idle_ns: 0,
        }
    }

    fn pop_away(&self, w: usize) -> Option<u32> {
        self.workers.borrow_mut()[w].away.pop_front()
    }

    fn meta(&self, _w: usize, t: &u32) -> (Meta, u64) {
        (self.metas.borrow()[*t as usize], u64::from(*t))
    }

    fn set_moved(&self, t: &u32, meta: Meta, _to: usize) {
        self.metas.borrow_mut()[*t as usize] = meta;
    }

    fn push_away(&self, w: usize, t: u32) {
        let mut ws = self.workers.borrow_mut();
        ws[w].away.push_back(t);
        ws[w].idle_since_us = None;
    }

    fn push_inbox(&self, w: usize, t: u32) {
        let mut ws = self.workers.borrow_mut();
        ws[w].inbox.push(t);
        ws[w].idle_since_us = None;
    }

    fn record_move(&self, _from: usize, _level: Level) {
        // The pass report counts moves by level; the synthetic pool has no metrics.
    }
}

#[cfg(test)]
mod test {
    use zonal_policy::PolicyConfig;
    use zonal_topology::{presets, NodeId};

    use super::*;

    fn uneven(policy: &str) -> SyntheticPool {
        uneven_with(PolicyConfig::named(policy).unwrap().build().unwrap())
    }

    fn uneven_with(policy: Arc<dyn Policy>) -> SyntheticPool {
        let topo = Arc::new(presets::preset("s1").unwrap());
        let t = Arc::clone(&topo);
        // Node 0's two workers hold 16 tasks each and run; everyone else idles.
        SyntheticPool::new(topo, policy, move |c| {
            if t.node_of(c) == NodeId(0) {
                (16, false)
            } else {
                (0, true)
            }
        })
    }

    #[test]
    fn a_pass_moves_tasks_off_the_loaded_node_and_keeps_every_task() {
        let mut p = uneven("linux");
        let r = p.pass(100_000);
        assert!(r.balances);
        assert!(!r.moves.is_empty(), "{r:#?}");
        assert!(r.moves.iter().all(|m| m.from_node == NodeId(0)));
        assert!(r.moves.iter().any(|m| m.to_node != NodeId(0)));
        assert_eq!(p.queued(), 32);
        let moved: u32 = p.migrations().iter().sum();
        assert_eq!(moved as usize, r.moves.len());
        let by_level: u64 = r.migrations_by_level.iter().sum();
        assert_eq!(by_level as usize, r.moves.len());
        assert_eq!(r.total_migrations_by_level, r.migrations_by_level);
    }

    #[test]
    fn steal_only_policies_make_passes_do_nothing() {
        let mut p = uneven_with(Arc::new(crate::NoPolicy));
        let r = p.pass(100_000);
        assert!(!r.balances);
        assert_eq!((r.attempts, r.moves.len()), (0, 0));
        assert!(p.migrations().iter().all(|&m| m == 0));
    }

    #[test]
    fn under_conservative_hard_no_move_leaves_the_zone_and_aged_tasks_stay() {
        let mut p = uneven("conservative-hard");
        let topo = presets::preset("s1").unwrap();
        let mut now = 100_000;
        let mut moves = Vec::new();
        for _ in 0..50 {
            let r = p.pass(now);
            moves.extend(r.moves);
            now += 50_000;
        }
        assert!(!moves.is_empty());
        let limit = PolicyConfig::named("conservative-hard")
            .unwrap()
            .build()
            .unwrap()
            .steal_side()
            .ageing()
            .limit()
            .unwrap();
        for m in &moves {
            assert!(topo.node_in_zone(m.to_node, m.from_node), "{m:?}");
            assert!(
                !topo.farther_from(m.origin, m.from_node, m.to_node) || m.origin == m.from_node,
                "{m:?}"
            );
            assert!(m.migrations_before < limit, "{m:?}");
        }
        assert!(p.migrations().iter().all(|&m| m <= limit));
        assert_eq!(p.queued(), 32);
    }
}
