//! The hard conservative policy never migrates a task beyond the zone, nor an aged task.

mod common;

use zonal_policy::Rng;
use zonal_sim::experiment::{effective_age_limit, paper_workload, System, WorkloadId};
use zonal_sim::{simulate, SimConfig};

#[test]
fn hard_policy_stays_in_the_zone() {
    let Some(hard) = common::real("conservative-hard") else {
        eprintln!(
            "conservative-hard is not implemented yet: checking the zone-limited test policy"
        );
        return check(&common::Greedy { zone_only: true }, None);
    };
    let cfg = zonal_policy::PolicyConfig::named("conservative-hard").unwrap();
    assert_eq!(
        effective_age_limit(&cfg),
        Some(zonal_policy::DEFAULT_AGE_LIMIT)
    );
    check(hard.as_ref(), hard.steal_side().ageing().limit());
}

fn check(policy: &dyn zonal_policy::Policy, age_limit: Option<u32>) {
    let mut moved = 0;
    for system in [System::S1, System::S2, System::S3] {
        let topo = system.topology().unwrap();
        let s = topo.zone_depth();
        for (w, seed) in [
            (WorkloadId::W1, 1),
            (WorkloadId::W2, 2),
            (WorkloadId::W3, 3),
        ] {
            let wl = paper_workload(system, w, 300).generate(
                topo.cpu_count(),
                (0.1, 0.5),
                &mut Rng::new(seed),
            );
            let cfg = SimConfig {
                seed,
                trace: true,
                ..SimConfig::default()
            };
            let r = simulate(&topo, policy, &wl, &cfg);
            assert_eq!(r.stats.finished, 300);
            for m in &r.migration_log {
                assert!(
                    usize::from(m.level) < s,
                    "{system} {w:?}: {m:?} beyond level {s}"
                );
            }
            assert!(r.stats.migrations_by_level[s..].iter().all(|&n| n == 0));
            if let Some(limit) = age_limit {
                // Count each process's migrations: none passes the age limit.
                let mut per = vec![0u32; 300];
                for m in &r.migration_log {
                    per[m.proc as usize] += 1;
                }
                assert!(
                    per.iter().all(|&n| n <= limit),
                    "{system} {w:?}: {:?}",
                    per.iter().max()
                );
            }
            moved += r.stats.migrations;
        }
    }
    assert!(moved > 0, "the check is vacuous: nothing migrated");
}

#[test]
fn linux_does_cross_the_zone_somewhere() {
    // The contrast that makes the hard-zone check meaningful.
    let Some(linux) = common::real("linux") else {
        return;
    };
    let topo = System::S3.topology().unwrap();
    let mut beyond = 0;
    for seed in 1..=5 {
        let wl = paper_workload(System::S3, WorkloadId::W3, 300).generate(
            topo.cpu_count(),
            (0.1, 0.5),
            &mut Rng::new(seed),
        );
        let r = simulate(
            &topo,
            linux.as_ref(),
            &wl,
            &SimConfig {
                seed,
                ..SimConfig::default()
            },
        );
        beyond += r.stats.migrations_by_level[topo.zone_depth()..]
            .iter()
            .sum::<u64>();
    }
    assert!(beyond > 0);
}

#[test]
fn conservative_moves_never_take_a_task_farther_from_home() {
    // docs/DESIGN.md's origin check (`no-farther`): a task away from home only moves to a node
    // no farther from its origin than the one it leaves, and only to thieves whose zone
    // holds its origin.
    for name in ["conservative-hard", "conservative-soft"] {
        let Some(policy) = common::real(name) else {
            continue;
        };
        let mut checked = 0;
        for system in [System::S1, System::S3] {
            let topo = system.topology().unwrap();
            for seed in 1..=3 {
                let wl = paper_workload(system, WorkloadId::W3, 300).generate(
                    topo.cpu_count(),
                    (0.1, 0.5),
                    &mut Rng::new(seed),
                );
                let sim = SimConfig {
                    seed,
                    trace: true,
                    ..SimConfig::default()
                };
                let r = simulate(&topo, policy.as_ref(), &wl, &sim);
                for m in &r.migration_log {
                    let origin = zonal_topology::NodeId(r.procs[m.proc as usize].origin);
                    let from = topo.node_of(zonal_topology::CpuId(m.from));
                    let to = topo.node_of(zonal_topology::CpuId(m.to));
                    assert!(
                        topo.node_in_zone(to, origin),
                        "{name}: {m:?} origin {origin:?} outside the thief's zone"
                    );
                    if from != origin {
                        assert!(
                            topo.distance(origin, to) <= topo.distance(origin, from),
                            "{name}: {m:?} moves farther from {origin:?}"
                        );
                    }
                    checked += 1;
                }
            }
        }
        assert!(checked > 0, "{name}: nothing migrated");
    }
}
