//! Shared test helpers: a small conservative policy of our own, so that the runtime's
//! enforcement can be tested independently of zonal-policy's implementations.
#![allow(dead_code, unreachable_pub, missing_docs)]

use zonal_policy::{
    Ageing, Eligibility, MoveContext, Policy, Refusal, StealSide, TaskMeta, VictimDecision,
};
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
