//! The same seed gives a byte-identical trace; different seeds give different runs.

mod common;

use zonal_policy::{PolicyName, Rng};
use zonal_sim::experiment::{self, paper_workload, Job, System, WorkloadId};
use zonal_sim::{fnv1a, simulate, CostModel, SimConfig};

fn trace_hash(policy: &dyn zonal_policy::Policy, seed: u64) -> (u64, String) {
    let topo = zonal_topology::presets::preset("s1").unwrap();
    let spec = paper_workload(System::S1, WorkloadId::W3, 120);
    let w = spec.generate(topo.cpu_count(), (0.1, 0.5), &mut Rng::new(seed));
    let cfg = SimConfig {
        seed,
        trace: true,
        cost: CostModel::default(),
        ..SimConfig::default()
    };
    let r = simulate(&topo, policy, &w, &cfg);
    let t = r.trace.unwrap();
    (fnv1a(t.as_bytes()), t)
}

#[test]
fn same_seed_same_trace_with_the_test_policy() {
    let p = common::Greedy::default();
    let (a, ta) = trace_hash(&p, 42);
    let (b, tb) = trace_hash(&p, 42);
    assert_eq!(a, b);
    assert_eq!(ta, tb);
    assert!(ta.contains("Process-119:"));
    let (c, _) = trace_hash(&p, 43);
    assert_ne!(a, c);
}

#[test]
fn same_seed_same_trace_with_every_policy() {
    for name in PolicyName::all() {
        let Some(p) = common::real(name.as_str()) else {
            continue;
        };
        let (a, _) = trace_hash(p.as_ref(), 7);
        let (b, _) = trace_hash(p.as_ref(), 7);
        assert_eq!(a, b, "{name}");
        let (c, _) = trace_hash(p.as_ref(), 8);
        assert_ne!(a, c, "{name}");
    }
}

#[test]
fn jobs_are_reproducible_and_json_stable() {
    let Ok(policy) = zonal_policy::PolicyConfig::named("conservative-soft") else {
        return;
    };
    if policy.build().is_err() {
        return;
    }
    let job = Job {
        system: System::S2,
        label: "w3".into(),
        workload: paper_workload(System::S2, WorkloadId::W3, 100),
        policy,
        seed: 5,
        cost: CostModel::default(),
        origin_at: Default::default(),
    };
    let a = experiment::run(&job, true).unwrap();
    let b = experiment::run(&job, true).unwrap();
    assert_eq!(a.trace, b.trace);
    assert_eq!(
        zonal_sim::report::json(&job, &a.stats).to_string(),
        zonal_sim::report::json(&job, &b.stats).to_string()
    );
}
