//! One Zonal pool per MPI rank, on a real multi-node kernel: `mpirun` starts four
//! ranks of the distributed heat example (`zonal-mpi`'s `heat`) in the 4-node guest.
//!
//! - `--bind-to numa --map-by numa`: the launcher binds each rank to one node. Each rank's
//!   pool must keep that binding: the CPUs its workers are allowed, as the guest's kernel
//!   reports them (`/proc/thread-self/status`, read by each worker), are exactly its node's
//!   CPUs, and the four ranks sit on four different nodes.
//! - `--bind-to none --oversubscribe`: the launcher binds nothing, every rank is allowed
//!   every CPU, and the pools split them by local rank: the workers of different ranks are
//!   allowed disjoint CPU sets that together cover the machine, and no two ranks pin a
//!   worker to one CPU.
//!
//! Both runs must also give the right answer (the example checks itself against a serial
//! run of the whole grid on rank 0). The guest models no latency: nothing is timed here.

mod common;

use std::collections::BTreeSet;

use common::{binary, boot_with, host_can_boot, numa4, Step};
use zonal_guest::open_mpi::JOB_SETUP;
use zonal_guest::OpenMpi;

/// The heat example's per-rank affinity line, parsed.
#[derive(Debug)]
struct RankLine {
    rank: usize,
    size: usize,
    allowed: BTreeSet<u32>,
    nodes: BTreeSet<u32>,
    workers: BTreeSet<u32>,
}

/// A kernel cpulist (`0-3,8`).
fn cpulist(text: &str) -> BTreeSet<u32> {
    let mut set = BTreeSet::new();
    for part in text.split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u32, u32) = (a.parse().expect("cpulist"), b.parse().expect("cpulist"));
                set.extend(a..=b);
            }
            None => {
                set.insert(part.parse().expect("cpulist"));
            }
        }
    }
    set
}

/// `heat: rank=R size=S allowed=L nodes=L workers=L` lines of one step's output.
fn rank_lines(text: &str) -> Vec<RankLine> {
    text.lines()
        .filter_map(|l| l.find("heat: rank=").map(|i| &l[i + "heat: ".len()..]))
        .map(|l| {
            let field = |name: &str| -> &str {
                l.split_whitespace()
                    .find_map(|w| w.strip_prefix(name)?.strip_prefix('='))
                    .unwrap_or_else(|| panic!("no {name}= in {l:?}"))
            };
            RankLine {
                rank: field("rank").parse().expect("rank"),
                size: field("size").parse().expect("size"),
                allowed: cpulist(field("allowed")),
                nodes: cpulist(field("nodes")),
                workers: cpulist(field("workers")),
            }
        })
        .collect()
}

#[test]
fn four_ranks_keep_the_launchers_binding_or_split_the_machine() {
    let heat = binary("examples/heat", "cargo build -p zonal-mpi --example heat");
    if !host_can_boot() {
        return;
    }
    let ompi = OpenMpi::find().unwrap_or_else(|e| panic!("{e}"));
    // A small grid: the guest emulates every instruction.
    let run =
        |bind: &str| format!("mpirun -np 4 {bind} /bin/heat --rows 64 --cols 64 --steps 20 2>&1");
    let steps = [
        Step {
            name: "bound",
            command: run("--bind-to numa --map-by numa"),
        },
        Step {
            name: "unbound",
            command: run("--bind-to none --oversubscribe"),
        },
    ];
    let spec = numa4();
    let node_cpus: Vec<BTreeSet<u32>> = spec
        .node_cpu_ranges()
        .into_iter()
        .map(|r| r.collect())
        .collect();
    let all: BTreeSet<u32> = node_cpus.iter().flatten().copied().collect();
    let Some(boot) = boot_with(&spec, &[(heat, "/bin/heat")], &steps, JOB_SETUP, &|i| {
        ompi.add_to(i)
    }) else {
        return;
    };

    // Bound by the launcher: rank r's workers on exactly one node's CPUs, four nodes.
    let bound = &boot.step("bound").text;
    assert_eq!(boot.step("bound").rc, Some(0), "bound run failed:\n{bound}");
    assert!(
        bound.contains("heat: answer ok"),
        "bound run's answer:\n{bound}"
    );
    let lines = rank_lines(bound);
    assert_eq!(lines.len(), 4, "{bound}");
    let mut nodes_seen = BTreeSet::new();
    for l in &lines {
        assert_eq!(l.size, 4);
        assert_eq!(
            l.nodes.len(),
            1,
            "rank {} covers nodes {:?}",
            l.rank,
            l.nodes
        );
        let node = *l.nodes.first().expect("one node");
        assert_eq!(
            l.allowed, node_cpus[node as usize],
            "rank {}: allowed CPUs are not node {node}'s",
            l.rank
        );
        assert_eq!(
            l.workers, l.allowed,
            "rank {}: the kernel's affinity of the workers is not the rank's binding",
            l.rank
        );
        nodes_seen.insert(node);
    }
    assert_eq!(nodes_seen.len(), 4, "two ranks on one node: {lines:?}");

    // Unbound: disjoint shares that cover the machine.
    let unbound = &boot.step("unbound").text;
    assert_eq!(
        boot.step("unbound").rc,
        Some(0),
        "unbound run failed:\n{unbound}"
    );
    assert!(
        unbound.contains("heat: answer ok"),
        "unbound run's answer:\n{unbound}"
    );
    let lines = rank_lines(unbound);
    assert_eq!(lines.len(), 4, "{unbound}");
    let mut union = BTreeSet::new();
    for l in &lines {
        assert_eq!(l.allowed, all, "rank {} was bound: {:?}", l.rank, l.allowed);
        assert!(!l.workers.is_empty());
        assert!(
            union.is_disjoint(&l.workers),
            "rank {}'s workers share a CPU with another rank's: {lines:?}",
            l.rank
        );
        union.extend(l.workers.iter().copied());
    }
    assert_eq!(union, all, "the ranks' shares do not cover the machine");
}

#[test]
fn cpulists_parse_as_the_kernel_writes_them() {
    assert_eq!(cpulist("0-2,5"), BTreeSet::from([0, 1, 2, 5]));
    assert_eq!(cpulist("7"), BTreeSet::from([7]));
    let l = rank_lines("x heat: rank=1 size=4 allowed=2-3 nodes=1 workers=2-3\n");
    assert_eq!((l[0].rank, l[0].size), (1, 4));
    assert_eq!(l[0].workers, BTreeSet::from([2, 3]));
}
