//! `zonal-probe CHECK [ARGS]`: one check of a Zonal pool against the kernel's own view, run
//! inside a NUMA guest (`crates/guest`). Each check prints its findings as one JSON object
//! on a line of its own after `PROBE-RESULT ` and exits 0 when it ran to the end (the host
//! test decides what the findings mean), 1 when it could not run, 2 on a usage error.
//!
//! Checks: `pinning`, `memory`, `first-touch`, `hidden-pages`, `zones`, `locality`, `faults`,
//! `cpuset` (see
//! each module).
//!
//! Feature `hwloc` (default): `pinning` also runs hwloc's discovery. Without it
//! (`--no-default-features`) the probe links no libhwloc.

use std::process::ExitCode;

mod faults;
mod first_touch;
mod hidden_pages;
mod kernel;
mod locality;
mod memory;
mod pinning;
mod work;
mod zones;

/// What a check returns: its findings, or why it could not run.
type Outcome = Result<serde_json::Value, String>;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((check, rest)) = args.split_first() else {
        eprintln!(
            "usage: zonal-probe pinning|memory|first-touch|hidden-pages|zones|locality|faults|cpuset [ARGS]"
        );
        return ExitCode::from(2);
    };
    let outcome: Outcome = match check.as_str() {
        "pinning" => pinning::run(rest),
        "memory" => memory::run(rest),
        "first-touch" => first_touch::run(rest),
        "hidden-pages" => hidden_pages::run(rest),
        "zones" => zones::run(rest),
        "locality" => locality::run(rest),
        "faults" => faults::run(rest),
        "cpuset" => faults::run_cpuset(rest),
        other => {
            eprintln!("zonal-probe: unknown check {other:?}");
            return ExitCode::from(2);
        }
    };
    match outcome {
        Ok(v) => {
            println!("PROBE-RESULT {v}");
            ExitCode::SUCCESS
        }
        Err(why) => {
            eprintln!("zonal-probe {check}: {why}");
            ExitCode::from(1)
        }
    }
}
