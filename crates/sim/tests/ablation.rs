//! The ablation's mechanisms in the simulator (`linux` with one switch of
//! `zonal_policy::Mechanism` on): each restricts what it names and nothing else, and changes
//! the run the way it should (`wake_zone` changes none: no wake-up leaves its node here).
//!
//! The runs are S1 (zone: levels I–IV of six) under the 2.6 era, whose `linux` balances and
//! places across the whole machine, at W2 and W3 with 300 processes, two seeds: there
//! `linux` moves processes beyond the zone in periodic passes, in new-idle passes and at
//! fork time. The migration log tells periodic moves from new-idle ones (on S1 no wake-up
//! leaves its node, README).

use zonal_policy::{LinuxEra, Mechanism, PolicyConfig, PolicyName, Refusal};
use zonal_sim::experiment::{self, paper_workload, Job, System, WorkloadId};
use zonal_sim::{CostModel, OriginAt, RunResult};
use zonal_topology::Level;

/// The runs of `linux` (2.6) with mechanism `m` on (`None`: plain `linux`).
fn runs(m: Option<Mechanism>) -> Vec<RunResult> {
    let mut out = Vec::new();
    for w in [WorkloadId::W2, WorkloadId::W3] {
        for seed in [1, 2] {
            let mut cfg = PolicyConfig::new(PolicyName::LINUX);
            cfg.linux_era = LinuxEra::V2_6;
            if let Some(m) = m {
                cfg = cfg.with_mechanism(m);
            }
            let job = Job {
                system: System::S1,
                label: w.as_str().into(),
                workload: paper_workload(System::S1, w, 300),
                policy: cfg,
                seed,
                cost: CostModel::default(),
                origin_at: OriginAt::Parent,
            };
            out.push(experiment::run(&job, true).unwrap());
        }
    }
    out
}

fn sum(rs: &[RunResult], f: impl Fn(&RunResult) -> u64) -> u64 {
    rs.iter().map(f).sum()
}

fn beyond_zone(level: u8) -> bool {
    let topo = System::S1.topology().unwrap();
    topo.beyond_zone(Level(level))
}

/// (periodic, new-idle) migrations beyond the zone.
fn far_moves(r: &RunResult) -> (usize, usize) {
    let far = r.migration_log.iter().filter(|m| beyond_zone(m.level));
    let newidle = far.clone().filter(|m| m.newidle).count();
    (far.count() - newidle, newidle)
}

/// Placements beyond the zone (relative to the parent's CPU).
fn far_placements(r: &RunResult) -> u64 {
    r.stats
        .placements_by_level
        .iter()
        .enumerate()
        .filter(|&(l, _)| beyond_zone(l as u8))
        .map(|(_, &n)| n)
        .sum()
}

#[test]
fn every_mechanism_alone_changes_the_runs_and_is_deterministic() {
    let linux = runs(None);
    for m in Mechanism::ALL {
        let (a, b) = (runs(Some(m)), runs(Some(m)));
        for (x, y) in a.iter().zip(&b) {
            assert!(x.trace == y.trace, "{m}: not deterministic");
            assert_eq!(x.stats.finished, x.stats.procs, "{m}");
        }
        let changed = a
            .iter()
            .zip(&linux)
            .filter(|(x, l)| x.trace != l.trace)
            .count();
        // `wake_zone` has nothing to restrict here (its own test below).
        assert!(
            changed > 0 || m == Mechanism::WakeZone,
            "{m} changed no run"
        );
    }
}

#[test]
fn zone_on_periodic_balancing_keeps_periodic_moves_in_the_zone_only() {
    let linux = runs(None);
    let z = runs(Some(Mechanism::ZonePeriodic));
    assert!(
        sum(&linux, |r| far_moves(r).0 as u64) > 0,
        "linux's periodic passes cross the zone"
    );
    assert_eq!(sum(&z, |r| far_moves(r).0 as u64), 0);
    // New-idle balancing and fork placement are linux's: they still cross the zone.
    assert!(sum(&z, |r| far_moves(r).1 as u64) > 0);
    assert!(sum(&z, far_placements) > 0);
    assert_eq!(sum(&z, |r| r.stats.aged_tasks), 0);
}

#[test]
fn new_idle_in_the_zone_keeps_new_idle_moves_in_the_zone_only() {
    let linux = runs(None);
    let n = runs(Some(Mechanism::NewIdleZone));
    assert!(
        sum(&linux, |r| far_moves(r).1 as u64) > 0,
        "linux's new-idle crosses the zone"
    );
    assert_eq!(sum(&n, |r| far_moves(r).1 as u64), 0);
    assert!(
        sum(&n, |r| far_moves(r).0 as u64) > 0,
        "periodic balancing still crosses"
    );
    assert!(sum(&n, far_placements) > 0, "placement still crosses");
}

#[test]
fn the_origin_check_refuses_by_origin_and_nothing_ages() {
    let by_origin = |r: &RunResult| {
        r.stats.refused.get(Refusal::Origin) + r.stats.refused.get(Refusal::OriginOutsideZone)
    };
    let linux = runs(None);
    let o = runs(Some(Mechanism::OriginCheck));
    assert_eq!(sum(&linux, by_origin), 0);
    assert!(sum(&o, by_origin) > 0);
    assert_eq!(sum(&o, |r| r.stats.refused.get(Refusal::Zone)), 0);
    assert_eq!(sum(&o, |r| r.stats.aged_tasks), 0);
}

#[test]
fn ageing_alone_ages_tasks_and_refuses_nothing_by_zone_or_origin() {
    let linux = runs(None);
    let a = runs(Some(Mechanism::Ageing));
    assert_eq!(sum(&linux, |r| r.stats.aged_tasks), 0);
    assert!(sum(&a, |r| r.stats.aged_tasks) > 0);
    for refusal in [Refusal::Zone, Refusal::Origin, Refusal::OriginOutsideZone] {
        assert_eq!(sum(&a, |r| r.stats.refused.get(refusal)), 0, "{refusal:?}");
    }
}

#[test]
fn the_placement_rule_alone_places_fewer_processes_beyond_the_zone() {
    let linux = runs(None);
    let p = runs(Some(Mechanism::PlacementRule));
    assert!(sum(&p, far_placements) < sum(&linux, far_placements));
    // Balancing is linux's: nothing refused by zone or origin, nothing aged.
    assert_eq!(sum(&p, |r| r.stats.refused.get(Refusal::Zone)), 0);
    assert_eq!(sum(&p, |r| r.stats.aged_tasks), 0);
}

#[test]
fn fork_placement_in_the_zone_places_nothing_beyond_it_and_balances_as_linux() {
    let linux = runs(None);
    let f = runs(Some(Mechanism::ForkZone));
    assert!(
        sum(&linux, far_placements) > 0,
        "2.6 linux places beyond the zone"
    );
    assert_eq!(sum(&f, far_placements), 0);
    // Balancing is linux's: its moves still cross the zone.
    assert!(sum(&f, |r| (far_moves(r).0 + far_moves(r).1) as u64) > 0);
    assert_eq!(sum(&f, |r| r.stats.refused.get(Refusal::Zone)), 0);
}

#[test]
fn wake_ups_in_the_zone_change_nothing_where_no_wake_up_leaves_its_node() {
    // On S1 no wake-up of `linux` leaves its node (the module docs), so the hard zone on
    // wake-ups alone leaves every run exactly as `linux`'s: it restricts nothing else.
    let linux = runs(None);
    let w = runs(Some(Mechanism::WakeZone));
    assert_eq!(sum(&linux, |r| r.stats.wake_migrations), 0);
    for (a, b) in linux.iter().zip(&w) {
        assert_eq!(a.stats, b.stats);
    }
}
