//! `RAYON_NUM_THREADS` under the patch: it sizes the global pool as it sizes rayon's, and
//! a `ThreadPoolBuilder` given no count, after `ZONAL_NUM_THREADS` (when that is a non-zero
//! count); a value that is not a count, or `0`, gives the default count, as in rayon. Each
//! check runs in a child process (this test binary again), since the global pool is
//! process-wide and built once; the parent's own variables are removed from the children.

use std::process::Command;

use rayon::prelude::*;

const CHILD: &str = "ZONAL_TEST_RAYON_ENV_CHILD";

/// In the child: what `$CHILD` names starts the pool, then the worker count is printed.
/// - `join`: rayon-core's free `join` builds the global pool (what unpatched rayon code,
///   over the patched rayon-core, calls);
/// - `iter`: a parallel iterator of the patched rayon builds it (Zonal's iterators, which
///   enter the global pool themselves);
/// - `builder`: a pool of its own, `ThreadPoolBuilder::new().build()`;
/// - `explicit`: a pool of its own with `num_threads(1)`.
#[test]
fn child() {
    let Some(mode) = std::env::var_os(CHILD) else {
        return; // only meaningful in the child, which the tests below run
    };
    let n = match mode.to_str() {
        Some("join") => {
            let (a, b) = rayon::join(|| 1, || 2);
            assert_eq!(a + b, 3);
            rayon::current_num_threads()
        }
        Some("iter") => {
            let workers: Vec<Option<usize>> = (0..64)
                .into_par_iter()
                .map(|_| rayon::current_thread_index())
                .collect();
            assert!(workers.iter().all(Option::is_some), "ran on workers");
            rayon::current_num_threads()
        }
        Some("builder") => rayon::ThreadPoolBuilder::new()
            .build()
            .unwrap()
            .current_num_threads(),
        Some("explicit") => rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap()
            .current_num_threads(),
        other => panic!("unknown mode {other:?}"),
    };
    println!("workers: {n}");
}

/// The child's worker count, `mode` as in [`child`], with exactly the variables `vars`.
fn workers(mode: &str, vars: &[(&str, &str)]) -> usize {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", "child", "--nocapture"])
        .env(CHILD, mode)
        .env_remove("ZONAL_NUM_THREADS")
        .env_remove("RAYON_NUM_THREADS")
        .env_remove("RAYON_RS_NUM_CPUS");
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{mode} {vars:?}:\n{stdout}\n{stderr}");
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("workers: "))
        .unwrap_or_else(|| panic!("{mode} {vars:?}: no worker count printed:\n{stdout}\n{stderr}"))
        .parse()
        .unwrap()
}

/// The count with neither variable set (one worker per allowed CPU).
fn default_count() -> usize {
    workers("builder", &[])
}

/// A count other than the default, so that the checks below can tell them apart.
fn other_than(default: usize) -> usize {
    if default == 3 {
        2
    } else {
        3
    }
}

#[test]
fn rayon_num_threads_sizes_the_global_pool_and_unsized_builders() {
    let n = other_than(default_count());
    let value = n.to_string();
    for mode in ["join", "iter", "builder"] {
        assert_eq!(workers(mode, &[("RAYON_NUM_THREADS", &value)]), n, "{mode}");
    }
}

#[test]
fn zonal_num_threads_comes_first() {
    let default = default_count();
    let zonal = other_than(default);
    let rayon = zonal + 1;
    let both = [
        ("ZONAL_NUM_THREADS", zonal.to_string()),
        ("RAYON_NUM_THREADS", rayon.to_string()),
    ];
    let both: Vec<(&str, &str)> = both.iter().map(|(k, v)| (*k, v.as_str())).collect();
    for mode in ["join", "iter", "builder"] {
        assert_eq!(workers(mode, &both), zonal, "{mode}");
    }
    // A ZONAL_NUM_THREADS that gives no count leaves the choice to RAYON_NUM_THREADS.
    let rayon_value = rayon.to_string();
    for zonal_value in ["0", "lots"] {
        let vars = [
            ("ZONAL_NUM_THREADS", zonal_value),
            ("RAYON_NUM_THREADS", rayon_value.as_str()),
        ];
        assert_eq!(workers("join", &vars), rayon, "{zonal_value:?}");
    }
}

#[test]
fn an_invalid_or_zero_rayon_num_threads_gives_the_default_count() {
    let default = default_count();
    for garbage in ["lots", "-1", "2.5", "", "0"] {
        for mode in ["join", "iter", "builder"] {
            assert_eq!(
                workers(mode, &[("RAYON_NUM_THREADS", garbage)]),
                default,
                "{mode} {garbage:?}"
            );
        }
    }
}

#[test]
fn the_deprecated_rayon_rs_num_cpus_comes_after_rayon_num_threads() {
    let n = other_than(default_count());
    let value = n.to_string();
    assert_eq!(workers("join", &[("RAYON_RS_NUM_CPUS", &value)]), n);
    let vars = [
        ("RAYON_NUM_THREADS", "1"),
        ("RAYON_RS_NUM_CPUS", value.as_str()),
    ];
    assert_eq!(workers("join", &vars), 1);
}

#[test]
fn an_explicit_count_wins_over_the_environment() {
    let n = other_than(default_count()).to_string();
    for var in ["ZONAL_NUM_THREADS", "RAYON_NUM_THREADS"] {
        assert_eq!(workers("explicit", &[(var, &n)]), 1, "{var}");
    }
}
