//! The heat example under `mpirun -np 2` on this machine: two ranks the launcher
//! does not bind (`--bind-to none --oversubscribe`) split the CPUs they are allowed, so the
//! CPUs their workers are allowed (as the kernel reports them) are disjoint; and the answer
//! matches the serial run.
//!
//! Needs Open MPI's `mpirun` on the PATH (scripts/setup.sh installs `openmpi-bin`) and the
//! example built: `cargo test` builds the package's examples before its tests, beside the
//! test binary (`target/<profile>/examples/heat`). As root, Open MPI needs its
//! allow-run-as-root variables, set here for the child only.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;

/// `target/<profile>/examples/heat`, beside this test's `target/<profile>/deps/`.
fn heat() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let profile = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target/<profile>/deps/<test>");
    let heat = profile.join("examples").join("heat");
    assert!(
        heat.is_file(),
        "{} is missing: build it with `cargo build -p zonal-mpi --example heat`",
        heat.display()
    );
    heat
}

/// The fields of `heat: rank=R size=S allowed=L nodes=L workers=L`.
#[derive(Debug)]
struct RankLine {
    rank: usize,
    size: usize,
    allowed: BTreeSet<u32>,
    workers: BTreeSet<u32>,
}

fn cpus(list: &str) -> BTreeSet<u32> {
    zonal_topology::parse_cpulist(list)
        .unwrap_or_else(|e| panic!("cpulist {list:?}: {e}"))
        .into_iter()
        .collect()
}

fn rank_lines(text: &str) -> Vec<RankLine> {
    text.lines()
        .filter_map(|l| l.strip_prefix("heat: rank="))
        .map(|l| {
            let l = format!("rank={l}");
            let field = |name: &str| -> String {
                l.split_whitespace()
                    .find_map(|w| w.strip_prefix(name)?.strip_prefix('='))
                    .unwrap_or_else(|| panic!("no {name}= in {l:?}"))
                    .to_owned()
            };
            RankLine {
                rank: field("rank").parse().expect("rank"),
                size: field("size").parse().expect("size"),
                allowed: cpus(&field("allowed")),
                workers: cpus(&field("workers")),
            }
        })
        .collect()
}

fn mpirun(args: &[&str]) -> (i32, String) {
    let out = Command::new("mpirun")
        .args(["-np", "2", "--bind-to", "none", "--oversubscribe"])
        .arg(heat())
        .args(args)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .output()
        .unwrap_or_else(|e| panic!("running mpirun (install openmpi-bin): {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

#[test]
fn two_unbound_ranks_split_the_cpus_and_agree_with_the_serial_run() {
    let (rc, text) = mpirun(&["--rows", "64", "--cols", "48", "--steps", "30"]);
    assert_eq!(rc, 0, "{text}");
    let last = text
        .lines()
        .rfind(|l| l.starts_with("heat: answer"))
        .unwrap_or_else(|| panic!("no answer line:\n{text}"));
    assert!(last.starts_with("heat: answer ok"), "{text}");

    let lines = rank_lines(&text);
    assert_eq!(lines.len(), 2, "{text}");
    for (i, l) in lines.iter().enumerate() {
        assert_eq!((l.rank, l.size), (i, 2), "{text}");
        assert!(!l.workers.is_empty(), "{text}");
        assert!(l.workers.is_subset(&l.allowed), "{text}");
    }
    let (a, b) = (&lines[0], &lines[1]);
    assert_eq!(
        a.allowed, b.allowed,
        "unbound ranks are allowed the same CPUs"
    );
    if a.allowed.len() >= 2 {
        assert!(a.workers.is_disjoint(&b.workers), "{text}");
    } else {
        // One CPU for two ranks: both take it (oversubscribed).
        assert_eq!(a.workers, b.workers, "{text}");
    }
}

#[test]
fn blocks_over_several_nodes_give_the_same_answer() {
    // A virtual 16-node machine per rank: each block is cut into one node-local part per
    // node with workers, and sweeps cross the parts.
    let (rc, text) = mpirun(&[
        "--preset",
        "s1",
        "--threads",
        "8",
        "--rows",
        "50",
        "--cols",
        "20",
        "--steps",
        "7",
    ]);
    assert_eq!(rc, 0, "{text}");
    assert!(text.contains("heat: answer ok"), "{text}");
}

#[test]
fn bad_flags_exit_2() {
    let (rc, text) = mpirun(&["--rows", "1"]);
    assert_eq!(rc, 2, "{text}");
    for bad in [
        &["--no-such-flag"][..],
        &["--policy", "linux"],
        &["--preset", "s9"],
    ] {
        let (rc, text) = mpirun(bad);
        assert_eq!(rc, 2, "{bad:?}: {text}");
    }
}
