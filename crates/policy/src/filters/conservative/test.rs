use zonal_topology::{CpuId, Level, NodeId, Tier, Victim};

use super::*;
use crate::testing::s1;
use crate::TaskId;

fn filter(zone: ZoneMode, origin: OriginRule) -> ConservativeFilter {
    ConservativeFilter {
        zone,
        origin,
        age_limit: 3,
    }
}

fn cpu_of(topo: &Topology, node: u32) -> CpuId {
    topo.cpus_of(NodeId(node))[0]
}

fn task(topo: &Topology, origin: u32, on_node: u32) -> TaskMeta {
    TaskMeta::new(TaskId(1), NodeId(origin), cpu_of(topo, on_node))
}

/// The paper's example: on the 16-node, six-level machine the zone of node N0 is levels
/// I–IV, i.e. its own node, its board partner and the boards up to two ring hops away.
#[test]
fn zone_of_n0_is_levels_one_to_four() {
    let topo = s1();
    assert_eq!(topo.mal_count(), 6);
    assert_eq!(topo.zone_depth(), 4);
    let f = filter(ZoneMode::Hard, OriginRule::NoFarther);
    let mut decisions = Vec::new();
    for v in topo.victims(CpuId(0)) {
        let d = f.victim(&topo, v, 0, 10);
        decisions.push((v.level, d));
        if let VictimDecision::Stop(_) = d {
            break;
        }
    }
    let (last_level, last) = *decisions.last().unwrap();
    assert_eq!(last, VictimDecision::Stop(Refusal::Zone));
    assert_eq!(
        last_level,
        Level(4),
        "the first victim past the zone is at level V"
    );
    assert!(decisions[..decisions.len() - 1]
        .iter()
        .all(|&(l, d)| l < Level(4) && d == VictimDecision::Examine));
    // 10 nodes × 2 CPUs in the zone, minus the thief.
    assert_eq!(decisions.len() - 1, 19);
    for n in 0..16 {
        let ok = f.check_move(&topo, &task(&topo, n, n), CpuId(0)).is_ok();
        assert_eq!(
            ok,
            [0, 1, 2, 3, 4, 5, 12, 13, 14, 15].contains(&n),
            "node {n}"
        );
    }
}

#[test]
fn soft_zone_examines_far_victims_only_above_150_percent() {
    let topo = s1();
    let f = filter(ZoneMode::Soft, OriginRule::NoFarther);
    let far = Victim {
        cpu: cpu_of(&topo, 8),
        level: Level(5),
        tier: Tier::Remote,
    };
    let near = Victim {
        cpu: cpu_of(&topo, 1),
        level: Level(1),
        tier: Tier::Remote,
    };
    assert_eq!(
        f.victim(&topo, &far, 2, 3),
        VictimDecision::Skip(Refusal::SoftThreshold)
    );
    assert_eq!(f.victim(&topo, &far, 2, 4), VictimDecision::Examine);
    assert_eq!(f.victim(&topo, &far, 0, 1), VictimDecision::Examine);
    assert_eq!(f.victim(&topo, &near, 5, 0), VictimDecision::Examine);
    // Under the soft zone a far move is not refused for the zone, but its origin (node 8)
    // lies outside the thief's zone.
    assert_eq!(
        f.check_move(&topo, &task(&topo, 8, 8), CpuId(0)),
        Err(Refusal::OriginOutsideZone)
    );
    // With a home inside the zone it may come.
    assert_eq!(f.check_move(&topo, &task(&topo, 2, 8), CpuId(0)), Ok(()));
}

#[test]
fn hard_zone_refuses_moves_from_beyond_the_zone() {
    let topo = s1();
    let f = filter(ZoneMode::Hard, OriginRule::Off);
    assert_eq!(
        f.check_move(&topo, &task(&topo, 0, 8), CpuId(0)),
        Err(Refusal::Zone)
    );
    assert_eq!(f.check_move(&topo, &task(&topo, 0, 4), CpuId(0)), Ok(()));
}

#[test]
fn no_farther_keeps_away_tasks_from_drifting() {
    let topo = s1();
    let f = filter(ZoneMode::Hard, OriginRule::NoFarther);
    // Born on node 0, now on node 1 (d = 16).
    let t = task(&topo, 0, 1);
    assert_eq!(
        f.check_move(&topo, &t, cpu_of(&topo, 2)),
        Err(Refusal::Origin),
        "node 2 is 22 from home"
    );
    assert_eq!(f.check_move(&topo, &t, cpu_of(&topo, 0)), Ok(()), "home");
    assert_eq!(
        f.check_move(&topo, &t, cpu_of(&topo, 1)),
        Ok(()),
        "same distance"
    );
    // At home: NoFarther lets it leave; Strict does not; Off does.
    let home = task(&topo, 0, 0);
    assert_eq!(f.check_move(&topo, &home, cpu_of(&topo, 1)), Ok(()));
    let strict = filter(ZoneMode::Hard, OriginRule::Strict);
    assert_eq!(
        strict.check_move(&topo, &home, cpu_of(&topo, 1)),
        Err(Refusal::Origin)
    );
    assert_eq!(
        strict.check_move(&topo, &home, CpuId(1)),
        Ok(()),
        "same node"
    );
    let off = filter(ZoneMode::Hard, OriginRule::Off);
    assert_eq!(off.check_move(&topo, &t, cpu_of(&topo, 2)), Ok(()));
}

#[test]
fn origin_outside_the_thiefs_zone_is_refused() {
    let topo = s1();
    let f = filter(ZoneMode::Hard, OriginRule::NoFarther);
    // Born on node 8 (outside node 0's zone), now on node 2 (inside it).
    let t = task(&topo, 8, 2);
    assert_eq!(
        f.check_move(&topo, &t, CpuId(0)),
        Err(Refusal::OriginOutsideZone)
    );
    let off = filter(ZoneMode::Hard, OriginRule::Off);
    assert_eq!(off.check_move(&topo, &t, CpuId(0)), Ok(()));
}

#[test]
fn aged_tasks_stay() {
    let topo = s1();
    let f = filter(ZoneMode::Hard, OriginRule::NoFarther);
    let mut t = task(&topo, 0, 0);
    t.migrations = 2;
    assert_eq!(f.check_move(&topo, &t, CpuId(1)), Ok(()));
    t.migrations = 3;
    assert_eq!(f.check_move(&topo, &t, CpuId(1)), Err(Refusal::Aged));
}

#[test]
fn hard_zone_bounds_the_walk() {
    let topo = s1();
    let hard = filter(ZoneMode::Hard, OriginRule::NoFarther);
    let soft = filter(ZoneMode::Soft, OriginRule::NoFarther);
    assert!(hard.level_allowed(&topo, Level(3)));
    assert!(!hard.level_allowed(&topo, Level(4)));
    assert!(soft.level_allowed(&topo, Level(5)));
    assert!(soft.beyond_zone(&topo, Level(4)) && !soft.beyond_zone(&topo, Level(3)));
}

/// `ZoneMode::Off` (the ablation's origin-only and ageing-only filters): no victim, level or
/// move is refused for lying beyond the zone; only the origin rule and ageing refuse.
#[test]
fn no_zone_refuses_only_by_origin_and_age() {
    let topo = s1();
    let origin_only = filter(ZoneMode::Off, OriginRule::NoFarther);
    let age_only = ConservativeFilter {
        zone: ZoneMode::Off,
        origin: OriginRule::Off,
        age_limit: 3,
    };
    for v in topo.victims(CpuId(0)) {
        assert_eq!(origin_only.victim(&topo, v, 10, 0), VictimDecision::Examine);
    }
    for l in 0..topo.mal_count() {
        assert!(origin_only.level_allowed(&topo, Level(l as u8)));
    }
    // Node 8 lies beyond node 0's zone (level VI).
    let far = cpu_of(&topo, 8);
    // A task born on node 8, running at home there, moved to node 0: its origin lies
    // outside the thief's zone, which the origin rule refuses; the age-only filter moves it.
    let t = task(&topo, 8, 8);
    assert_eq!(
        origin_only.check_move(&topo, &t, CpuId(0)),
        Err(Refusal::OriginOutsideZone)
    );
    assert_eq!(age_only.check_move(&topo, &t, CpuId(0)), Ok(()));
    // Coming home is always allowed, however far.
    let away = task(&topo, 8, 0);
    assert_eq!(origin_only.check_move(&topo, &away, far), Ok(()));
    // Ageing: three migrations age a task under the age-only filter, never under
    // `NEVER_AGED`.
    let mut aged = task(&topo, 0, 0);
    aged.migrations = 3;
    assert_eq!(
        age_only.check_move(&topo, &aged, CpuId(1)),
        Err(Refusal::Aged)
    );
    let never = ConservativeFilter {
        age_limit: NEVER_AGED,
        ..age_only
    };
    aged.migrations = u32::MAX - 1;
    assert_eq!(never.check_move(&topo, &aged, far), Ok(()));
    assert_eq!(never.ageing(), Ageing::Never);
}
