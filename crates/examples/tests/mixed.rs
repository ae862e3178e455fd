//! The mixed-load benchmark (`zonal_examples::mixed`) once at a tiny size, every setup (the
//! virtual S1 pool included), two rounds: every setup completes all its requests and its
//! batch job runs; then the `mixed` example's command line (the built example,
//! `target/<profile>/examples/mixed`, which `cargo test` builds beside this test) once,
//! tiny, and its usage errors. Counts only, never timing: the deadline is a bound that keeps
//! a broken setup from hanging the test, not something measured.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

use zonal_examples::mixed::{self, Config, LoadPlan, MixedError, Setup};

const REQUESTS: u64 = 40;

fn tiny(setups: Vec<Setup>) -> Config {
    Config {
        setups,
        rounds: 2,
        plan: LoadPlan {
            requests: REQUESTS,
            rate: 200.0,
            compute_percent: 25,
            // Generous: a loaded 2-core machine may run this far slower than planned.
            grace: Duration::from_secs(60),
            max_connections: 16,
        },
        wait: Duration::from_millis(1),
        request_ms: 0.2,
        batch_ms: 2.0,
    }
}

#[test]
fn every_setup_completes_all_its_requests_and_runs_its_batch_job() {
    let all = vec![
        Setup::TokioRayon,
        Setup::TokioBlocking,
        Setup::Zonal,
        Setup::ZonalS1,
    ];
    let run = mixed::run(&tiny(all.clone()), |_| {}).expect("the benchmark runs");
    assert_eq!(run.samples.len(), 2 * all.len());
    // Alternated: the second round runs the setups in reverse.
    let order: Vec<Setup> = run.samples.iter().map(|s| s.setup).collect();
    let mut want = all.clone();
    want.extend(all.iter().rev());
    assert_eq!(order, want);
    for s in &run.samples {
        let what = format!("{} in round {}", s.setup, s.round);
        assert_eq!(s.planned, REQUESTS, "{what}");
        assert_eq!(s.sent, REQUESTS, "{what}: every request sent");
        assert_eq!(s.completed, REQUESTS, "{what}: every request completed");
        assert_eq!(s.failed, 0, "{what}");
        assert!(s.connections >= 1, "{what}");
        assert!(s.batch_computations >= 1, "{what}: the batch job ran");
        assert!(s.latency_us.iter().all(Option::is_some), "{what}");
    }
    let summaries = run.summaries();
    assert_eq!(summaries.len(), all.len());
    for s in &summaries {
        assert_eq!((s.rounds, s.completed), (2, 2 * REQUESTS), "{}", s.setup);
        assert_eq!(s.emulated, s.setup == Setup::ZonalS1);
    }
    let table = mixed::report::table(&run);
    assert!(table.contains("zonal-s1 (virtual S1, emulated)"), "{table}");
    let json = run.to_json();
    assert_eq!(json["summaries"].as_array().map(Vec::len), Some(all.len()));
    assert_eq!(
        json["samples"].as_array().map(Vec::len),
        Some(2 * all.len())
    );
}

#[test]
fn settings_out_of_range_are_usage_errors_before_anything_runs() {
    let mut c = tiny(vec![Setup::Zonal]);
    c.plan.rate = f64::NAN;
    let e = mixed::run(&c, |_| {}).expect_err("NaN rate");
    assert!(e.is_usage(), "{e}");
    assert!(e.to_string().contains("--rate"), "{e}");
    let mut c = tiny(vec![Setup::Zonal]);
    c.plan.requests = 0;
    assert!(matches!(
        c.check(),
        Err(MixedError::Invalid {
            name: "--requests",
            ..
        })
    ));
    assert!(matches!(tiny(vec![]).check(), Err(MixedError::NoSetup)));
}

/// `target/<profile>/examples/mixed`, from this test's path (`…/deps/name-hash`).
fn mixed_binary() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps");
    let p = dir.join("examples/mixed");
    assert!(
        p.is_file(),
        "{} is missing: build it with `cargo build -p zonal-examples --example mixed`",
        p.display()
    );
    p
}

/// A scratch directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let p = std::env::temp_dir().join(format!("zonal-mixed-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        Self(p)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn mixed_cli(args: &[&str]) -> Output {
    Command::new(mixed_binary())
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("mixed runs")
}

#[test]
fn the_command_line_prints_the_table_and_writes_the_json_and_the_plot() {
    let dir = Scratch::new("cli");
    let out_dir = dir.0.to_string_lossy().into_owned();
    let out = mixed_cli(&[
        "--quick",
        "--s1",
        "--requests",
        "30",
        "--rounds",
        "1",
        "--batch-ms",
        "2",
        "--request-ms",
        "0.2",
        "--grace",
        "60",
        "--out",
        &out_dir,
    ]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "mixed: {stderr}");
    for setup in [
        "tokio-rayon",
        "tokio-blocking",
        "| zonal |",
        "zonal-s1 (virtual S1, emulated)",
    ] {
        assert!(stdout.contains(setup), "{setup} in the table: {stdout}");
    }
    assert!(dir.0.join("mixed.svg").is_file(), "the plot");
    let text = std::fs::read_to_string(dir.0.join("mixed.json")).expect("mixed.json");
    let json: Value = serde_json::from_str(&text).expect("mixed.json parses");
    let summaries = json["summaries"].as_array().expect("summaries");
    assert_eq!(summaries.len(), 4);
    for s in summaries {
        assert_eq!(s["completed"], 30, "{s}");
        assert_eq!(s["sent"], 30, "{s}");
        assert!(s["batch_computations"].as_u64() >= Some(1), "{s}");
    }
}

#[test]
fn bad_flags_exit_2_naming_the_flag() {
    for (args, flag) in [
        (&["--rate", "0"][..], "--rate"),
        (&["--requests", "0"][..], "--requests"),
        (&["--compute-percent", "101"][..], "--compute-percent"),
        (&["--grace", "NaN"][..], "--grace"),
        (&["--setups", "zonal,zonal"][..], "--setups"),
        (&["--setups", "nginx"][..], "--setups"),
    ] {
        let out = mixed_cli(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(flag), "{args:?}: {stderr}");
    }
}
