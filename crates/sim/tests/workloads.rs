//! The paper's workloads (Tables 3–5) come out as README.md describes them.

use zonal_policy::Rng;
use zonal_sim::experiment::{paper_procs, paper_workload, System, WorkloadId};
use zonal_sim::{ExecTime, IO_BURST_CPU_MS, IO_WAIT_MS};

#[test]
fn paper_workloads_match_their_definitions() {
    for system in [System::S1, System::S2, System::S3] {
        let cpus = system.topology().unwrap().cpu_count();
        for w in WorkloadId::ALL {
            for &n in paper_procs(system) {
                let spec = paper_workload(system, w, n);
                let wl = spec.generate(cpus, (0.1, 0.5), &mut Rng::new(n as u64));
                assert_eq!(wl.procs.len(), n);
                let max_arrival = wl.procs.iter().map(|p| p.arrival_us).max().unwrap();
                match (system, w) {
                    (System::S1, WorkloadId::W1) => assert_eq!(max_arrival, 0),
                    (System::S2 | System::S3, WorkloadId::W2) | (System::S2, WorkloadId::W3) => {
                        assert!(max_arrival < 20_000, "{system} {w:?}");
                    }
                    _ => assert!(
                        max_arrival < 1_000_000 && max_arrival > 20_000,
                        "{system} {w:?}"
                    ),
                }
                let mut io_bound = 0;
                for (i, p) in wl.procs.iter().enumerate() {
                    assert!((p.parent_cpu as usize) < cpus);
                    assert!((0.1..0.5).contains(&p.mem_bound));
                    let ms = p.demand_us / 1000;
                    match spec.exec {
                        ExecTime::Fixed(x) => assert_eq!(ms, x),
                        ExecTime::Uniform(lo, hi) => assert!((lo..=hi).contains(&ms)),
                        other => panic!("a workload of the paper draws {other:?}"),
                    }
                    let bursts = wl.bursts_of(i);
                    assert_eq!(bursts.last().unwrap().io_us, 0);
                    if bursts.len() > 1 {
                        io_bound += 1;
                        for b in &bursts[..bursts.len() - 1] {
                            assert!((IO_BURST_CPU_MS.0 * 1000..=IO_BURST_CPU_MS.1 * 1000)
                                .contains(&b.cpu_us));
                            assert!((IO_WAIT_MS.0 * 1000..=IO_WAIT_MS.1 * 1000).contains(&b.io_us));
                        }
                    }
                }
                let mixed = matches!((system, w), (System::S2 | System::S3, WorkloadId::W3));
                if mixed {
                    // About half I/O-bound (a short process may fit in one burst).
                    assert!(
                        io_bound * 4 > n && io_bound * 4 < 3 * n,
                        "{system} {w:?}: {io_bound}/{n}"
                    );
                } else {
                    assert_eq!(io_bound, 0, "{system} {w:?}");
                }
            }
        }
    }
}
