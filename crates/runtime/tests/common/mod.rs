//! Shared test helpers: a small conservative policy of our own, so that the runtime's
//! enforcement can be tested independently of zonal-policy's implementations.
#![allow(dead_code, unreachable_pub, missing_docs)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use zonal_policy::{
    Ageing, Eligibility, MoveContext, Policy, Refusal, StealSide, TaskMeta, VictimDecision,
};

use zonal_runtime::TaskOptions;
use zonal_topology::{CpuId, Topology, Victim};

/// Conservative, hard zone, `NoFarther` origin rule, ageing after `age_limit` migrations.
#[derive(Debug, Clone, Copy)]
pub struct MiniConservative {
    pub age_limit: u32,
}

impl Policy for MiniConservative {
    fn name(&self) -> &str {
        "mini-conservative"
    }

    fn steal_side(&self) -> &dyn StealSide {
        self
    }
}

impl StealSide for MiniConservative {
    fn ageing(&self) -> Ageing {
        Ageing::After(self.age_limit)
    }

    fn victim(&self, topo: &Topology, thief: CpuId, v: &Victim, _: u64, _: u64) -> VictimDecision {
        if v.level.index() >= topo.zone_depth() {
            VictimDecision::Stop(Refusal::Zone)
        } else {
            let _ = thief;
            VictimDecision::Examine
        }
    }

    fn eligibility(&self, topo: &Topology, t: &TaskMeta, to: CpuId, _: MoveContext) -> Eligibility {
        if t.migrations >= self.age_limit {
            return Eligibility::Refused(Refusal::Aged);
        }
        let (o, v, th) = (t.origin, topo.node_of(t.cpu), topo.node_of(to));
        if !topo.node_in_zone(th, o) {
            return Eligibility::Refused(Refusal::OriginOutsideZone);
        }
        if o != v && topo.distance(o, th) > topo.distance(o, v) {
            return Eligibility::Refused(Refusal::Origin);
        }
        Eligibility::Allowed
    }
}

/// Busy work that the optimiser keeps.
pub fn spin(iters: u32) -> u64 {
    let mut x = 0u64;
    for i in 0..iters {
        x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(u64::from(i)));
    }
    x
}

/// One link of a chain: a little work, then its continuation (same origin, migrations
/// inherited), so that tasks travel and age; the last link counts itself `done`.
pub fn link(done: Arc<AtomicUsize>, hops_left: u32) {
    if hops_left == 0 {
        spin(2_000);
        done.fetch_add(1, Ordering::Relaxed);
        return;
    }
    // Queue the continuation first and work after, so that it waits in a queue (the away
    // queue once the chain has left home) where thieves can see it.
    zonal_runtime::spawn_with(TaskOptions::new().continuation(), move || {
        link(done, hops_left - 1)
    });
    spin(2_000);
}
