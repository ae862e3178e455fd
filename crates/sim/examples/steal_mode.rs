//! The simulator's work-stealing mode on the paper's machines: a skewed fork-join forest
//! (64 divide-and-conquer trees born on two nodes, three slices per task) under every policy
//! of the catalogue, seeds 1..=N (default 3), on S1 (16 nodes × 2 CPUs) and S3 (32 × 2).
//!
//! ```text
//! cargo run --release -p zonal-sim --example steal_mode [-- SEEDS]
//! ```
//!
//! Every steal is decided by the policy crate's steal walker, as in the runtime. The cost
//! model (remote slowdown, steal latency) is this mode's assumption: see
//! `crates/sim/src/steal/engine.rs`.

use zonal_policy::{PolicyConfig, PolicyName};
use zonal_sim::{simulate_stealing, GraphSpec, StealRun, TaskGraph};

fn main() {
    let seeds: u64 = match std::env::args().nth(1).map(|s| s.parse()) {
        None => 3,
        Some(Ok(n)) if (1..=100).contains(&n) => n,
        Some(_) => {
            eprintln!("usage: steal_mode [SEEDS in 1..=100]");
            std::process::exit(2);
        }
    };
    let spec = GraphSpec::skewed();
    println!("graph: {spec:?}; seeds 1..={seeds}; means over seeds");
    for preset in ["s1", "s3"] {
        let topo = zonal_topology::presets::preset(preset).expect("preset");
        println!(
            "\n== {preset}: {} nodes, {} CPUs, zone I..{}",
            topo.node_count(),
            topo.cpu_count(),
            topo.zone_depth()
        );
        println!(
            "| policy | makespan ms | vs linux | steals by level (I..) | beyond zone | refusals | remote run share | aged |"
        );
        println!("|---|---|---|---|---|---|---|---|");
        let mut linux_ms = None;
        for name in PolicyName::all() {
            let policy = PolicyConfig::new(name).build().expect("catalogue policy");
            let runs: Vec<StealRun> = (1..=seeds)
                .map(|seed| {
                    let g = TaskGraph::generate(&spec, seed).expect("valid spec");
                    simulate_stealing(&topo, policy.as_ref(), &g)
                })
                .collect();
            let n = runs.len() as f64;
            let ms = runs.iter().map(|r| r.makespan_ns as f64 / 1e6).sum::<f64>() / n;
            let base = *linux_ms.get_or_insert(ms);
            let mut steals = vec![0u64; topo.mal_count()];
            for r in &runs {
                assert_eq!(r.tasks_run, r.tasks, "{name}: a task was lost or run twice");
                for (s, x) in steals.iter_mut().zip(&r.steals_by_level) {
                    *s += x;
                }
            }
            let per = |f: &dyn Fn(&StealRun) -> u64| runs.iter().map(f).sum::<u64>() / seeds;
            let steals: Vec<String> = steals.iter().map(|s| (s / seeds).to_string()).collect();
            println!(
                "| {name} | {ms:.2} | {:.3}× | {} | {} | {} | {:.1}% | {} |",
                ms / base,
                steals.join("/"),
                per(&|r| r.steals_beyond_zone),
                per(&|r| r.refused.total()),
                100.0 * runs.iter().map(StealRun::remote_share).sum::<f64>() / n,
                per(&|r| r.tasks_aged),
            );
        }
    }
}
