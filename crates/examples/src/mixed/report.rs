//! What a run measured: one [`Sample`] per setup and round, and per setup a [`Summary`]
//! over its rounds; as a markdown table ([`table`]) and JSON ([`Run::to_json`]).
//!
//! Latency percentiles are taken over every *planned* request, a request not completed
//! (not answered by the deadline, failed, or never sent) counting as slower than any that
//! completed: a percentile that falls on one is shown as `incomplete`, not left out.

use std::fmt::Write as _;
use std::time::Duration;

use serde::Serialize;

use super::batch::BatchResult;
use super::load::{LoadResult, Outcome};
use super::{Config, Setup};

/// The percentiles reported, as fractions.
pub const PERCENTILES: [(&str, f64); 3] = [("p50", 0.50), ("p99", 0.99), ("p99.9", 0.999)];

/// One setup's run in one round.
#[derive(Clone, Debug, Serialize)]
pub struct Sample {
    /// The setup.
    pub setup: Setup,
    /// The round (from 0).
    pub round: u32,
    /// Its pools' worker threads, in words.
    pub threads: String,
    /// Requests planned.
    pub planned: u64,
    /// Requests sent before the deadline.
    pub sent: u64,
    /// Requests answered with success.
    pub completed: u64,
    /// Requests answered with an error, or lost with their connection.
    pub failed: u64,
    /// Connections the load generator opened.
    pub connections: u64,
    /// p50, p99 and p99.9 latency in µs ([`PERCENTILES`]); `None`: incomplete.
    pub latency_us: [Option<u64>; 3],
    /// Batch computations finished.
    pub batch_computations: u64,
    /// Batch computations per second.
    pub batch_per_s: f64,
    /// Process CPU time over the run, the load generator's thread left out, in s.
    pub cpu_s: f64,
    /// Wall time of the run, in s.
    pub wall_s: f64,
    /// Every planned request's latency in µs (`None`: not completed), for the summary.
    #[serde(skip)]
    pub latencies: Vec<Option<u64>>,
}

impl Sample {
    /// The sample of one run.
    pub fn new(
        setup: Setup,
        round: u32,
        threads: String,
        load: &LoadResult,
        batch: BatchResult,
        cpu: Duration,
        wall: Duration,
    ) -> Self {
        let latencies: Vec<Option<u64>> = load
            .outcomes
            .iter()
            .map(|o| match o {
                Outcome::Done(us) => Some(*us),
                _ => None,
            })
            .collect();
        Self {
            setup,
            round,
            threads,
            planned: load.outcomes.len() as u64,
            sent: load.sent(),
            completed: load.completed(),
            failed: load.failed(),
            connections: load.connections,
            latency_us: percentiles(&latencies),
            batch_computations: batch.computations,
            batch_per_s: batch.per_second(),
            cpu_s: cpu.as_secs_f64(),
            wall_s: wall.as_secs_f64(),
            latencies,
        }
    }
}

/// The percentiles of [`PERCENTILES`] over `latencies` (module docs: `None` is slower than
/// any value, and a percentile on it is `None`): the nearest-rank value, the smallest with
/// at least that share of the requests at or below it.
pub fn percentiles(latencies: &[Option<u64>]) -> [Option<u64>; 3] {
    let mut sorted: Vec<u64> = latencies.iter().flatten().copied().collect();
    sorted.sort_unstable();
    let n = latencies.len();
    PERCENTILES.map(|(_, q)| {
        if n == 0 {
            return None;
        }
        let rank = ((q * n as f64).ceil() as usize).clamp(1, n);
        sorted.get(rank - 1).copied()
    })
}

/// One setup over every round.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// The setup.
    pub setup: Setup,
    /// What it is.
    pub description: &'static str,
    /// Whether it ran on an emulated topology.
    pub emulated: bool,
    /// Its pools' worker threads, in words.
    pub threads: String,
    /// Rounds run.
    pub rounds: u32,
    /// Requests planned, over every round.
    pub planned: u64,
    /// Requests sent.
    pub sent: u64,
    /// Requests completed.
    pub completed: u64,
    /// Requests failed.
    pub failed: u64,
    /// p50, p99, p99.9 in µs over every round's requests together.
    pub latency_us: [Option<u64>; 3],
    /// The median over rounds of the batch computations per second.
    pub batch_per_s: f64,
    /// Batch computations, over every round.
    pub batch_computations: u64,
    /// The median over rounds of the CPU time, in s.
    pub cpu_s: f64,
    /// The median over rounds of the CPU time per second of wall time (cores busy).
    pub cpu_cores: f64,
}

/// The median of `v` (the mean of the middle two for an even count; 0 when empty).
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// The benchmark's record: its settings, the machine, and every sample.
#[derive(Clone, Debug)]
pub struct Run {
    /// The settings.
    pub config: Config,
    /// CPUs available to this process.
    pub cpus: usize,
    /// The calibration: ns per element on one core.
    pub ns_per_element: f64,
    /// Elements of a request's computation.
    pub request_elements: usize,
    /// Elements of a batch computation.
    pub batch_elements: usize,
    /// One per setup and round, in the order run.
    pub samples: Vec<Sample>,
}

impl Run {
    /// One summary per setup, in the order of [`Config::setups`].
    pub fn summaries(&self) -> Vec<Summary> {
        self.config
            .setups
            .iter()
            .map(|&setup| {
                let mine: Vec<&Sample> = self.samples.iter().filter(|s| s.setup == setup).collect();
                let all: Vec<Option<u64>> = mine
                    .iter()
                    .flat_map(|s| s.latencies.iter().copied())
                    .collect();
                let sum = |f: fn(&Sample) -> u64| mine.iter().map(|s| f(s)).sum::<u64>();
                Summary {
                    setup,
                    description: setup.describe(),
                    emulated: setup.is_virtual(),
                    threads: mine.first().map(|s| s.threads.clone()).unwrap_or_default(),
                    rounds: mine.len() as u32,
                    planned: sum(|s| s.planned),
                    sent: sum(|s| s.sent),
                    completed: sum(|s| s.completed),
                    failed: sum(|s| s.failed),
                    latency_us: percentiles(&all),
                    batch_per_s: median(mine.iter().map(|s| s.batch_per_s).collect()),
                    batch_computations: sum(|s| s.batch_computations),
                    cpu_s: median(mine.iter().map(|s| s.cpu_s).collect()),
                    cpu_cores: median(mine.iter().map(|s| s.cpu_s / s.wall_s.max(1e-9)).collect()),
                }
            })
            .collect()
    }

    /// The whole record as one JSON document: settings, machine, summaries, samples.
    pub fn to_json(&self) -> serde_json::Value {
        let c = &self.config;
        serde_json::json!({
            "benchmark": "mixed",
            "machine": { "cpus": self.cpus },
            "settings": {
                "setups": c.setups,
                "rounds": c.rounds,
                "requests": c.plan.requests,
                "rate_per_s": c.plan.rate,
                "compute_percent": c.plan.compute_percent,
                "wait_ms": c.wait.as_secs_f64() * 1e3,
                "request_ms": c.request_ms,
                "batch_ms": c.batch_ms,
                "grace_s": c.plan.grace.as_secs_f64(),
                "max_connections": c.plan.max_connections,
            },
            "calibration": {
                "ns_per_element": self.ns_per_element,
                "request_elements": self.request_elements,
                "batch_elements": self.batch_elements,
            },
            "summaries": self.summaries(),
            "samples": self.samples,
        })
    }
}

/// A latency in µs as ms for the table, or `incomplete`.
pub fn ms(us: Option<u64>) -> String {
    match us {
        Some(us) => format!("{:.2}", us as f64 / 1e3),
        None => "incomplete".to_owned(),
    }
}

/// The markdown table of `run`: a header naming the settings and machine, one row per setup.
pub fn table(run: &Run) -> String {
    let c = &run.config;
    let mut t = String::new();
    let _ = writeln!(
        t,
        "mixed load: {} requests per setup and round at {} /s ({}% compute {} ms, every one \
         waits {} ms), batch computations of {} ms, {} round(s), {} CPU(s)",
        c.plan.requests,
        c.plan.rate,
        c.plan.compute_percent,
        c.request_ms,
        c.wait.as_secs_f64() * 1e3,
        c.batch_ms,
        c.rounds,
        run.cpus,
    );
    let _ = writeln!(
        t,
        "latency from each request's intended send time, over every round's requests; batch \
         and CPU: median over rounds (CPU: the process's, less the load generator's thread)\n"
    );
    let _ = writeln!(
        t,
        "| setup | threads | p50 ms | p99 ms | p99.9 ms | completed / sent | failed | batch /s | CPU s | cores busy |"
    );
    let _ = writeln!(t, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for s in run.summaries() {
        let name = if s.emulated {
            format!("{} (virtual S1, emulated)", s.setup)
        } else {
            s.setup.to_string()
        };
        let [p50, p99, p999] = s.latency_us;
        let _ = writeln!(
            t,
            "| {name} | {} | {} | {} | {} | {} / {} | {} | {:.2} | {:.2} | {:.2} |",
            s.threads,
            ms(p50),
            ms(p99),
            ms(p999),
            s.completed,
            s.sent,
            s.failed,
            s.batch_per_s,
            s.cpu_s,
            s.cpu_cores,
        );
    }
    if run.samples.iter().any(|s| s.sent < s.planned) {
        let _ = writeln!(
            t,
            "\nsome requests were never sent: the deadline came first (see the JSON)"
        );
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_take_the_nearest_rank() {
        let v: Vec<Option<u64>> = (1..=1000).map(Some).collect();
        assert_eq!(percentiles(&v), [Some(500), Some(990), Some(999)]);
        assert_eq!(percentiles(&[Some(7)]), [Some(7); 3]);
        assert_eq!(percentiles(&[]), [None; 3]);
    }

    #[test]
    fn requests_not_completed_count_as_slowest() {
        let mut v: Vec<Option<u64>> = (1..=98).map(Some).collect();
        v.extend([None, None]);
        assert_eq!(percentiles(&v), [Some(50), None, None]);
    }

    #[test]
    fn the_median_of_even_and_odd_counts() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0]), 2.5);
        assert_eq!(median(vec![]), 0.0);
    }
}
