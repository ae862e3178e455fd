//! The paper-faithful placement mode (`placement = "paper"`) in the simulator: runs are
//! deterministic, the JSON names the mode only when it is not the default, and the mode
//! changes where the conservative policies place their processes.

use zonal_policy::{LinuxEra, PlacementMode, PolicyConfig};
use zonal_sim::experiment::{self, paper_workload, Job, System, WorkloadId};
use zonal_sim::{CostModel, OriginAt};

fn job(policy: &str, era: LinuxEra, placement: PlacementMode) -> Job {
    let mut cfg = PolicyConfig::named(policy).unwrap();
    cfg.linux_era = era;
    cfg.placement = placement;
    Job {
        system: System::S1,
        label: "w2".into(),
        workload: paper_workload(System::S1, WorkloadId::W2, 100),
        policy: cfg,
        seed: 2,
        cost: CostModel::default(),
        origin_at: OriginAt::Parent,
    }
}

fn json(j: &Job) -> serde_json::Value {
    zonal_sim::report::json(j, &experiment::run(j, false).unwrap().stats)
}

#[test]
fn the_json_names_placement_only_when_paper() {
    for era in LinuxEra::ALL {
        let zone = json(&job("conservative-soft", era, PlacementMode::Zone));
        assert!(zone.get("placement").is_none(), "{zone}");
        let j = job("conservative-soft", era, PlacementMode::Paper);
        let (a, b) = (json(&j), json(&j));
        assert_eq!(a.to_string(), b.to_string());
        assert_eq!(a["placement"], "paper");
        assert_eq!(a["linux_era"], era.as_str());
    }
}

#[test]
fn paper_placement_changes_where_conservative_policies_place() {
    for policy in ["conservative-hard", "conservative-soft"] {
        let zone = json(&job(policy, LinuxEra::V2_6, PlacementMode::Zone));
        let paper = json(&job(policy, LinuxEra::V2_6, PlacementMode::Paper));
        assert_ne!(
            zone["placements_by_level"], paper["placements_by_level"],
            "{policy}"
        );
    }
}

#[test]
fn linux_refuses_paper_placement() {
    let j = job("linux", LinuxEra::Modern, PlacementMode::Paper);
    match experiment::run(&j, false) {
        Err(e) => assert!(e.to_string().contains("placement"), "{e}"),
        Ok(_) => panic!("linux accepted placement = \"paper\""),
    }
}
