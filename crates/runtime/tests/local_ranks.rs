//! Pools built inside one of several ranks on this machine: each rank takes its
//! share of the allowed CPUs (`ThreadPoolBuilder::local_ranks`), read here as the kernel
//! sees each worker's affinity. The launcher's environment is read in a child process (this
//! test binary, run again with one test selected and the variables set), never by changing
//! this process's environment under the other tests.

#![cfg(target_os = "linux")]

use std::collections::BTreeSet;
use std::process::Command;

use zonal_runtime::{LocalRanks, LocalShare, ShareSource, ThreadPool, ThreadPoolBuilder};

#[path = "support/required.rs"]
mod required;

/// Each worker's affinity as the kernel says, read on the worker, by worker index.
fn affinities(pool: &ThreadPool) -> Vec<Vec<u32>> {
    pool.broadcast(|_| zonal_runtime::os::thread_affinity().unwrap())
}

/// The CPUs this test thread may run on (a pool's workers inherit no more).
fn allowed() -> Vec<u32> {
    zonal_runtime::os::thread_affinity().unwrap()
}

fn split(rank: usize, size: usize) -> ThreadPool {
    ThreadPoolBuilder::new()
        .no_policy()
        .local_ranks(LocalRanks::Split { rank, size })
        .build()
        .unwrap()
}

/// The CPUs the workers of `pool` are pinned to (each to one CPU).
fn pinned_cpus(pool: &ThreadPool) -> BTreeSet<u32> {
    affinities(pool)
        .into_iter()
        .map(|a| {
            assert_eq!(
                a.len(),
                1,
                "a split pool's worker is pinned to one CPU: {a:?}"
            );
            a[0]
        })
        .collect()
}

#[test]
fn two_ranks_pin_their_workers_to_disjoint_cpus_covering_the_allowed_set() {
    let allowed = allowed();
    if allowed.len() < 2 {
        required::cannot_run(&format!(
            "two ranks need two allowed CPUs; this thread may use {allowed:?}"
        ));
        return;
    }
    let (a, b) = (split(0, 2), split(1, 2));
    let (ca, cb) = (pinned_cpus(&a), pinned_cpus(&b));
    assert!(ca.is_disjoint(&cb), "{ca:?} {cb:?}");
    let union: BTreeSet<u32> = ca.union(&cb).copied().collect();
    assert_eq!(union, allowed.iter().copied().collect::<BTreeSet<_>>());
    for (pool, rank, cpus) in [(&a, 0, &ca), (&b, 1, &cb)] {
        let share = pool.local_share();
        assert_eq!((share.local_rank, share.local_ranks), (rank, 2));
        assert_eq!(share.source, ShareSource::Explicit);
        assert!(share.split && !share.oversubscribed);
        assert_eq!(&share.cpus.iter().copied().collect::<BTreeSet<_>>(), cpus);
        assert_eq!(pool.num_workers(), cpus.len());
        // The pool's topology is the share: its levels and zones are built over it.
        assert_eq!(pool.topology().cpu_count(), cpus.len());
        assert_eq!(&pool.metrics().local_share, share);
    }
}

#[test]
fn more_ranks_than_cpus_are_reported_oversubscribed() {
    let allowed = allowed();
    let size = allowed.len() + 1;
    for rank in 0..size {
        let pool = split(rank, size);
        let share = pool.local_share();
        assert!(share.split && share.oversubscribed, "{share:?}");
        assert_eq!(share.cpus.len(), 1);
        assert_eq!(
            pinned_cpus(&pool).into_iter().collect::<Vec<_>>(),
            share.cpus
        );
        assert!(pool.metrics().local_share.oversubscribed);
    }
    if allowed.len() < 3 {
        // This 2-CPU machine: three ranks oversubscribe it.
        assert!(split(2, 3).local_share().oversubscribed);
    }
}

#[test]
fn auto_without_launcher_variables_is_todays_pool() {
    let auto = ThreadPoolBuilder::new().no_policy().build().unwrap();
    let ignore = ThreadPoolBuilder::new()
        .no_policy()
        .local_ranks(LocalRanks::Ignore)
        .build()
        .unwrap();
    assert_eq!(auto.local_share(), &LocalShare::default());
    assert_eq!(auto.metrics().local_share, LocalShare::default());
    assert_eq!(auto.num_workers(), allowed().len());
    assert_eq!(affinities(&auto), affinities(&ignore));
}

#[test]
fn explicit_worker_cpus_win_over_a_split() {
    let allowed = allowed();
    let pool = ThreadPoolBuilder::new()
        .no_policy()
        .worker_cpus(allowed.iter().copied())
        .local_ranks(LocalRanks::Split { rank: 1, size: 2 })
        .build()
        .unwrap();
    assert_eq!(pool.num_workers(), allowed.len());
    assert_eq!(pool.local_share().source, ShareSource::None);
}

#[test]
fn a_split_sizes_the_pool_within_its_share() {
    let pool = ThreadPoolBuilder::new()
        .no_policy()
        .local_ranks(LocalRanks::Split { rank: 0, size: 1 })
        .num_threads(1)
        .build()
        .unwrap();
    assert_eq!(pool.num_workers(), 1);
    let share = pool.local_share();
    assert!(share.split);
    assert_eq!(share.cpus, allowed());
}

#[test]
fn an_explicit_rank_not_below_its_size_is_a_typed_error() {
    let e = ThreadPoolBuilder::new()
        .local_ranks(LocalRanks::Split { rank: 2, size: 2 })
        .build()
        .unwrap_err();
    assert!(
        matches!(
            e.launcher_error(),
            Some(zonal_runtime::LauncherError::BadSplit {
                rank: 2,
                size: 2,
                ..
            })
        ),
        "{e}"
    );
    assert!(e.is_input_error());
}

/// Set in the child process this file starts.
const CHILD: &str = "ZONAL_TEST_LOCAL_RANKS_CHILD";

/// Runs the test `name` of this binary in a child process with `vars` set.
fn run_child(name: &str, vars: &[(&str, &str)]) {
    let exe = std::env::current_exe().unwrap();
    let out = Command::new(exe)
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .envs(vars.iter().copied())
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    assert!(text.contains("1 passed"), "the child ran no test: {text}");
}

#[test]
fn open_mpi_variables_split_an_unbound_rank() {
    run_child(
        "child_open_mpi_rank_1_of_2",
        &[
            ("OMPI_COMM_WORLD_LOCAL_RANK", "1"),
            ("OMPI_COMM_WORLD_LOCAL_SIZE", "2"),
        ],
    );
}

#[test]
fn a_malformed_launcher_variable_fails_the_build() {
    run_child(
        "child_malformed_rank",
        &[
            ("OMPI_COMM_WORLD_LOCAL_RANK", "2"),
            ("OMPI_COMM_WORLD_LOCAL_SIZE", "2"),
        ],
    );
}

/// In the child only: rank 1 of 2 from Open MPI's variables.
#[test]
fn child_open_mpi_rank_1_of_2() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let pool = ThreadPoolBuilder::new().no_policy().build().unwrap();
    let share = pool.local_share();
    assert_eq!((share.local_rank, share.local_ranks), (1, 2));
    assert_eq!(share.source, ShareSource::Env("OMPI_COMM_WORLD_LOCAL_RANK"));
    let allowed = allowed();
    let online: Vec<u32> = zonal_topology::this_machine_unrestricted()
        .unwrap()
        .cpus()
        .iter()
        .map(|c| c.os_index)
        .collect();
    if allowed == online {
        // Not bound (as `cargo test` runs here): this rank takes its share.
        assert!(share.split, "{share:?}");
    }
    if share.split && allowed.len() >= 2 {
        let cpus = pinned_cpus(&pool);
        assert_eq!(cpus, share.cpus.iter().copied().collect::<BTreeSet<_>>());
        assert!(cpus.len() < allowed.len());
        assert!(!share.oversubscribed);
    } else if !share.split {
        assert_eq!(pool.num_workers(), allowed.len());
    }
}

/// In the child only: a rank not below the size is the build's typed error.
#[test]
fn child_malformed_rank() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let e = ThreadPoolBuilder::new().build().unwrap_err();
    let l = e.launcher_error().expect("a launcher error");
    assert_eq!(l.var(), Some("OMPI_COMM_WORLD_LOCAL_RANK"));
    assert!(
        e.to_string().contains("OMPI_COMM_WORLD_LOCAL_RANK=\"2\""),
        "{e}"
    );
    // `Ignore` does not read the environment.
    ThreadPoolBuilder::new()
        .local_ranks(LocalRanks::Ignore)
        .build()
        .unwrap();
}
