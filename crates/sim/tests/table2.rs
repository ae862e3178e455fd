//! The paper's Table 2 measure (processes by the level, relative to their origin, they ran
//! on most) on hand-built runs with known answers, and the machines it is read on: the
//! S1–S3 presets as documented (unchanged) and the `s1-alt` variant.

use std::sync::atomic::{AtomicBool, Ordering};

use zonal_policy::{
    BalanceOutcome, BalanceSide, CpuPass, Eligibility, LinuxEra, MachineView, Migration,
    MoveContext, Placement, Policy, PolicyConfig, Refusal, Rng, StealSide, TaskMeta,
    VictimDecision,
};
use zonal_sim::experiment::{self, paper_workload, Job, System, WorkloadId};
use zonal_sim::{
    ran_most_level, simulate, Burst, CostModel, OriginAt, RunResult, SimConfig, Workload,
};
use zonal_topology::{presets, CpuId, NodeId, Topology, Victim};

/// Places process `i` on `place_on[i]`; at the first tick at or after `move_at_us`, moves
/// process 0 to `move_to` (once). No attempts are reported, so nothing is charged.
#[derive(Debug)]
struct Script {
    place_on: Vec<u32>,
    move_at_us: u64,
    move_to: u32,
    moved: AtomicBool,
}

impl Script {
    fn new(place_on: &[u32], move_at_us: u64, move_to: u32) -> Self {
        Self {
            place_on: place_on.to_vec(),
            move_at_us,
            move_to,
            moved: AtomicBool::new(false),
        }
    }
}

impl Policy for Script {
    fn name(&self) -> &str {
        "script-test"
    }

    fn steal_side(&self) -> &dyn StealSide {
        self
    }

    fn balance_side(&self) -> Option<&dyn BalanceSide> {
        Some(self)
    }
}

impl StealSide for Script {
    fn victim(&self, _: &Topology, _: CpuId, _: &Victim, _: u64, _: u64) -> VictimDecision {
        VictimDecision::Skip(Refusal::BelowThreshold)
    }

    fn eligibility(&self, _: &Topology, _: &TaskMeta, _: CpuId, _: MoveContext) -> Eligibility {
        Eligibility::Allowed
    }
}

impl BalanceSide for Script {
    fn balance(&self, pass: CpuPass<'_>) -> BalanceOutcome {
        let view = pass.view;
        let mut out = BalanceOutcome::default();
        if view.now_us() < self.move_at_us || self.moved.load(Ordering::Relaxed) {
            return out;
        }
        let topo = view.topology();
        let to = CpuId(self.move_to);
        for c in 0..topo.cpu_count() {
            let from = CpuId::new(c);
            if from == to {
                continue;
            }
            if let Some(t) = view.tasks(from).iter().find(|t| t.id.0 == 0) {
                out.migrations.push(Migration {
                    task: t.id,
                    from,
                    to,
                    level: topo.level_between(from, to),
                });
                self.moved.store(true, Ordering::Relaxed);
                break;
            }
        }
        out
    }

    fn idle_balance(&self, _: CpuPass<'_>) -> BalanceOutcome {
        BalanceOutcome::default()
    }

    fn place(
        &self,
        view: &dyn MachineView,
        parent: CpuId,
        task: &TaskMeta,
        _: &mut Rng,
    ) -> Placement {
        let topo = view.topology();
        let cpu = self
            .place_on
            .get(task.id.0 as usize)
            .map_or(parent, |&c| CpuId(c));
        Placement {
            cpu,
            level: topo.level_between(parent, cpu),
        }
    }
}

fn s1() -> Topology {
    presets::preset("s1").unwrap()
}

fn cfg(origin_at: OriginAt) -> SimConfig {
    SimConfig {
        cost: CostModel::free(),
        origin_at,
        ..SimConfig::default()
    }
}

/// One process forked on CPU 0 (node 0), `demand_us` of CPU, placed on `place_on`, moved
/// to `move_to` at `move_at_us`.
fn one(demand_us: u64, place_on: u32, move_at_us: u64, move_to: u32) -> RunResult {
    let mut w = Workload::default();
    w.push(
        0,
        0,
        0.5,
        &[Burst {
            cpu_us: demand_us,
            io_us: 0,
        }],
    );
    let p = Script::new(&[place_on], move_at_us, move_to);
    simulate(&s1(), &p, &w, &cfg(OriginAt::Parent))
}

fn level(t: &Topology, a: u32, b: u32) -> usize {
    t.node_level(NodeId(a), NodeId(b)).unwrap().index()
}

#[test]
fn the_machine_levels_these_tests_use() {
    let t = s1();
    // CPU 16 is on node 8, the opposite board: level VI from node 0; CPU 2 on node 1, the
    // board partner: level II.
    assert_eq!(t.node_of(CpuId(16)), NodeId(8));
    assert_eq!(level(&t, 0, 8), 5);
    assert_eq!(level(&t, 0, 1), 1);
}

#[test]
fn a_process_counts_at_its_level_relative_to_the_origin() {
    let mut w = Workload::default();
    w.push(
        0,
        0,
        0.5,
        &[Burst {
            cpu_us: 50_000,
            io_us: 0,
        }],
    );
    let p = || Script::new(&[16], u64::MAX, 0);
    // Origin at the parent (node 0): it ran on node 8 only, level VI.
    let r = simulate(&s1(), &p(), &w, &cfg(OriginAt::Parent));
    assert_eq!(r.stats.exec_by_level, vec![0, 0, 0, 0, 0, 1]);
    assert_eq!(r.procs[0].main_level, 5);
    assert_eq!(r.procs[0].origin, 0);
    // Origin at the placement node: the same run is level I.
    let r = simulate(&s1(), &p(), &w, &cfg(OriginAt::Placement));
    assert_eq!(r.stats.exec_by_level, vec![1, 0, 0, 0, 0, 0]);
    assert_eq!((r.procs[0].main_level, r.procs[0].origin), (0, 8));
}

#[test]
fn ties_go_to_the_level_nearest_the_origin() {
    // Placed at level VI, moved to level II at the first tick from 30 ms: find that time
    // in the migration log of a probe run.
    let moved_at = {
        let mut w = Workload::default();
        w.push(
            0,
            0,
            0.5,
            &[Burst {
                cpu_us: 100_000,
                io_us: 0,
            }],
        );
        let p = Script::new(&[16], 30_000, 2);
        let c = SimConfig {
            trace: true,
            ..cfg(OriginAt::Parent)
        };
        let r = simulate(&s1(), &p, &w, &c);
        assert_eq!(r.stats.migrations, 1);
        r.migration_log[0].time_us
    };
    assert!(moved_at >= 30_000);
    // Equal time at VI (before the move) and II (after): the nearer level, II.
    let tie = one(2 * moved_at, 16, 30_000, 2);
    assert_eq!(tie.stats.finished, 1);
    assert_eq!(tie.stats.exec_by_level, vec![0, 1, 0, 0, 0, 0]);
    assert_eq!(tie.procs[0].main_level, 1);
    // The tie is exact: one µs less after the move and VI has the most time.
    assert_eq!(one(2 * moved_at - 1, 16, 30_000, 2).procs[0].main_level, 5);
    // One ms more after the move: still II; one ms less: VI, where it ran longer.
    let more = one(2 * moved_at + 1_000, 16, 30_000, 2);
    assert_eq!(more.procs[0].main_level, 1);
    let less = one(2 * moved_at - 1_000, 16, 30_000, 2);
    assert_eq!(less.stats.exec_by_level, vec![0, 0, 0, 0, 0, 1]);
    assert_eq!(less.procs[0].main_level, 5);
}

#[test]
fn a_process_that_never_ran_is_not_counted() {
    let mut w = Workload::default();
    for arrival in [0, 50_000] {
        w.push(
            arrival,
            0,
            0.5,
            &[Burst {
                cpu_us: 10_000,
                io_us: 0,
            }],
        );
    }
    let p = Script::new(&[16, 16], u64::MAX, 0);
    let c = SimConfig {
        time_limit_us: 20_000,
        ..cfg(OriginAt::Parent)
    };
    let r = simulate(&s1(), &p, &w, &c);
    assert_eq!((r.stats.procs, r.stats.finished), (2, 1));
    assert_eq!(r.procs[1].run_us, 0);
    // Process 0 counts at level VI; process 1, which never ran, nowhere.
    assert_eq!(r.stats.exec_by_level, vec![0, 0, 0, 0, 0, 1]);
    assert_eq!(r.procs[1].main_level, 0);
    assert_eq!(ran_most_level(&[0; 6]), None);
}

#[test]
fn exec_by_level_is_the_histogram_of_each_process_main_level() {
    for (topo, era) in [("s1", LinuxEra::V2_6), ("s1-alt", LinuxEra::Modern)] {
        let mut policy = PolicyConfig::named("linux").unwrap();
        policy.linux_era = era;
        let job = Job {
            system: System::S1,
            label: "w2".into(),
            workload: paper_workload(System::S1, WorkloadId::W2, 200),
            policy,
            seed: 1,
            cost: CostModel::default(),
            origin_at: OriginAt::Parent,
        };
        let t = presets::preset(topo).unwrap();
        let r = experiment::run_on(&t, &job, false).unwrap();
        let mut hist = vec![0u64; 6];
        for p in &r.procs {
            assert!(p.run_us > 0);
            hist[usize::from(p.main_level)] += 1;
        }
        assert_eq!(r.stats.exec_by_level, hist, "{topo}");
        assert_eq!(hist.iter().sum::<u64>(), 200);
    }
}

/// The presets' distances as `crates/topology`'s presets docs state them: 10 on the
/// diagonal, 16 to the board partner (nodes `2k`, `2k+1`), `16 + 6·hops` between boards
/// (ring of 8 for S1 and S2, 4-D hypercube of 16 for S3).
#[test]
fn the_s1_to_s3_presets_are_unchanged() {
    type Hops = fn(usize, usize) -> usize;
    fn ring(a: usize, b: usize) -> usize {
        let d = a.abs_diff(b);
        d.min(8 - d)
    }
    fn cube(a: usize, b: usize) -> usize {
        (a ^ b).count_ones() as usize
    }
    let cases: [(&str, usize, usize, Hops); 3] = [
        ("s1", 16, 2, ring),
        ("s2", 16, 4, ring),
        ("s3", 32, 2, cube),
    ];
    for (name, nodes, cpus, hops) in cases {
        let t = presets::preset(name).unwrap();
        assert_eq!(
            (t.node_count(), t.cpu_count()),
            (nodes, nodes * cpus),
            "{name}"
        );
        let want: Vec<Vec<u32>> = (0..nodes)
            .map(|i| {
                (0..nodes)
                    .map(|j| {
                        if i == j {
                            10
                        } else {
                            16 + 6 * hops(i / 2, j / 2) as u32
                        }
                    })
                    .collect()
            })
            .collect();
        assert_eq!(t.machine().distance_rows(), want, "{name}");
    }
}

#[test]
fn s1_alt_is_valid_symmetric_and_not_s1() {
    let t = presets::preset("s1-alt").unwrap();
    let rows = t.machine().distance_rows();
    assert!(t.machine().require_symmetric().is_ok());
    assert_eq!((t.node_count(), t.cpu_count()), (16, 32));
    assert_eq!(t.levels(), s1().levels());
    for (i, row) in rows.iter().enumerate() {
        for (j, &d) in row.iter().enumerate() {
            let hops = i.abs_diff(j).min(16 - i.abs_diff(j));
            assert_eq!(d, 10 + 6 * hops.min(5) as u32, "{i} -> {j}");
            assert_eq!(d, rows[j][i]);
        }
    }
    assert_ne!(rows, s1().machine().distance_rows());
    // Level VI holds 7 of the 15 other nodes (s1: 2).
    let far = |t: &Topology| (0..16).filter(|&b| level(t, 0, b) == 5).count();
    assert_eq!((far(&t), far(&s1())), (7, 2));
    assert!(presets::VARIANT_NAMES.contains(&"s1-alt"));
    assert!(!presets::PRESET_NAMES.contains(&"s1-alt"));
}
