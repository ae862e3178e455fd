//! The paper's experiments: its machines, its workloads (Tables 3–5), and parallel grids.
//!
//! # Workloads, as we read Tables 3–5
//!
//! | system | W1 | W2 | W3 |
//! |---|---|---|---|
//! | S1 (16×2) | CPU-bound, 200 ms, all at once | CPU-bound, 200 ms, random | CPU-bound, 300 ms, random |
//! | S2 (16×4) | CPU-bound, 300 ms, random | CPU-bound, 300 ms, almost same time | half CPU-, half I/O-bound, 50–400 ms, almost same time |
//! | S3 (32×2) | CPU-bound, 300 ms, random | CPU-bound, 100–500 ms, almost same time | half CPU-, half I/O-bound, 400 ms, random |
//!
//! - *Random arrival*: uniform over a [`RANDOM_WINDOW_MS`] window (the paper gives no
//!   window; one second is a few slices, shorter than every run's makespan).
//!   [`paper_workload_windowed`] takes another window (the `paper` example's
//!   `--arrival-window-ms` and `--window-sweep`); [`has_random_arrival`] says which
//!   workloads it changes.
//! - *Almost same arrival time*: uniform over [`ALMOST_SAME_WINDOW_MS`].
//! - "200 ms" is every process's exact CPU demand; "50–400 ms" is uniform over the range.
//! - *Mix*: each process is I/O-bound with probability [`MIX_IO_SHARE`]; I/O-bound processes
//!   alternate ~80 ms bursts and ~20 ms waits ([`crate::IO_BURST_CPU_MS`]).
//! - Every process forks from a CPU drawn uniformly; that CPU's node is its origin and
//!   memory node ([`OriginAt::Parent`]); fork placement decides where it starts.
//!
//! # Seeds
//!
//! Seed `k` draws the workload from one stream and the policy's randomness from another,
//! so every policy sees the same processes for a seed (paired comparisons).

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use zonal_policy::{NumaBalancing, PolicyConfig, PolicyError, Rng};
use zonal_topology::{presets, Topology, TopologyError};

use crate::cost::CostModel;
use crate::engine::{simulate, OriginAt, SimConfig};
use crate::stats::RunResult;
use crate::workload::{Arrival, ExecTime, WorkloadSpec};

/// Random arrival window, ms.
pub const RANDOM_WINDOW_MS: u64 = 1_000;
/// "Almost same arrival time" window, ms.
pub const ALMOST_SAME_WINDOW_MS: u64 = 20;
/// Share of I/O-bound processes in the mixed workloads.
pub const MIX_IO_SHARE: f64 = 0.5;

/// Errors setting up a run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SimError {
    /// The policy could not be built.
    #[error(transparent)]
    Policy(#[from] PolicyError),
    /// The machine could not be built.
    #[error(transparent)]
    Topology(#[from] TopologyError),
    /// A name (system, workload) is not known.
    #[error("unknown {what} {name:?}; valid: {valid}")]
    Unknown {
        /// What kind of name.
        what: &'static str,
        /// The name given.
        name: String,
        /// The valid names.
        valid: String,
    },
}

/// The machines: the paper's three systems, and Table 1's two smaller ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[non_exhaustive]
pub enum System {
    /// 16 nodes × 2 CPUs, 6 levels (preset `s1`).
    S1,
    /// 16 nodes × 4 CPUs, 6 levels (preset `s2`).
    S2,
    /// 32 nodes × 2 CPUs, 6 levels (preset `s3`).
    S3,
    /// Table 1's 8-4-6: 8 nodes × 4 CPUs, 6 levels.
    T846,
    /// Table 1's 8-2-3: 8 nodes × 2 CPUs, 3 levels.
    T823,
}

impl System {
    /// Every system, by name.
    pub const ALL: [System; 5] = [
        System::S1,
        System::S2,
        System::S3,
        System::T846,
        System::T823,
    ];

    /// The name used on the command line.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            System::S1 => "s1",
            System::S2 => "s2",
            System::S3 => "s3",
            System::T846 => "8-4-6",
            System::T823 => "8-2-3",
        }
    }

    /// The paper's label (nodes-CPUs per node-levels).
    #[must_use]
    pub const fn paper_label(self) -> &'static str {
        match self {
            System::S1 => "16-2-6",
            System::S2 => "16-4-6",
            System::S3 => "32-2-6",
            System::T846 => "8-4-6",
            System::T823 => "8-2-3",
        }
    }

    /// Builds the machine.
    ///
    /// `s1`–`s3` are zonal-topology's presets. The paper prints no matrices for Table 1's
    /// machines; we build 8-4-6 as 8 nodes on a line, `d = 10 + 6·min(hops, 5)` (levels 10,
    /// 16, 22, 28, 34, 40), and 8-2-3 as zonal-topology's fan-out tree `[2, 4]` (levels 10,
    /// 20, 30).
    ///
    /// # Errors
    /// [`SimError::Topology`] if the machine model is rejected.
    pub fn topology(self) -> Result<Topology, SimError> {
        Ok(match self {
            System::S1 | System::S2 | System::S3 => presets::preset(self.as_str())?,
            System::T846 => Topology::new(presets::distance_rule("8-4-6", 8, 4, |i, j| {
                10 + 6 * i.abs_diff(j).min(5) as u64
            })?),
            System::T823 => presets::hierarchical(&[2, 4], 2)?,
        })
    }
}

impl fmt::Display for System {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for System {
    type Err = SimError;

    fn from_str(s: &str) -> Result<Self, SimError> {
        System::ALL
            .into_iter()
            .find(|x| x.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| SimError::Unknown {
                what: "system",
                name: s.into(),
                valid: System::ALL.map(System::as_str).join(", "),
            })
    }
}

/// One of a system's three workloads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[non_exhaustive]
pub enum WorkloadId {
    /// W1.
    W1,
    /// W2.
    W2,
    /// W3.
    W3,
}

impl WorkloadId {
    /// All three.
    pub const ALL: [WorkloadId; 3] = [WorkloadId::W1, WorkloadId::W2, WorkloadId::W3];

    /// `w1`, `w2`, `w3`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            WorkloadId::W1 => "w1",
            WorkloadId::W2 => "w2",
            WorkloadId::W3 => "w3",
        }
    }

    /// 0, 1, 2.
    #[must_use]
    pub const fn index(self) -> usize {
        self as usize
    }
}

impl FromStr for WorkloadId {
    type Err = SimError;

    fn from_str(s: &str) -> Result<Self, SimError> {
        WorkloadId::ALL
            .into_iter()
            .find(|x| x.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| SimError::Unknown {
                what: "workload",
                name: s.into(),
                valid: "w1, w2, w3".into(),
            })
    }
}

/// The paper's workload `w` on `system` with `procs` processes (Tables 3–5); for Table 1's
/// machines, W1 is CPU-bound 300 ms with random arrival and W2 its I/O-bound variant.
#[must_use]
pub fn paper_workload(system: System, w: WorkloadId, procs: usize) -> WorkloadSpec {
    paper_workload_windowed(system, w, procs, RANDOM_WINDOW_MS)
}

/// [`paper_workload`] with random arrival over `random_window_ms` instead of
/// [`RANDOM_WINDOW_MS`] (the "almost same time" and all-at-once workloads are unchanged).
///
/// ```
/// use zonal_sim::experiment::{paper_workload_windowed, System, WorkloadId};
/// use zonal_sim::Arrival;
/// let w = paper_workload_windowed(System::S1, WorkloadId::W2, 200, 250);
/// assert_eq!(w.arrival, Arrival::Uniform { window_ms: 250 });
/// let w1 = paper_workload_windowed(System::S1, WorkloadId::W1, 200, 250);
/// assert_eq!(w1.arrival, Arrival::AllAtOnce);
/// ```
#[must_use]
pub fn paper_workload_windowed(
    system: System,
    w: WorkloadId,
    procs: usize,
    random_window_ms: u64,
) -> WorkloadSpec {
    use WorkloadId::{W1, W2, W3};
    let random = Arrival::Uniform {
        window_ms: random_window_ms,
    };
    let same = Arrival::Uniform {
        window_ms: ALMOST_SAME_WINDOW_MS,
    };
    let (exec, arrival, io_share) = match (system, w) {
        (System::S1, W1) => (ExecTime::Fixed(200), Arrival::AllAtOnce, 0.0),
        (System::S1, W2) => (ExecTime::Fixed(200), random, 0.0),
        (System::S1, W3) => (ExecTime::Fixed(300), random, 0.0),
        (System::S2, W1) => (ExecTime::Fixed(300), random, 0.0),
        (System::S2, W2) => (ExecTime::Fixed(300), same, 0.0),
        (System::S2, W3) => (ExecTime::Uniform(50, 400), same, MIX_IO_SHARE),
        (System::S3, W1) => (ExecTime::Fixed(300), random, 0.0),
        (System::S3, W2) => (ExecTime::Uniform(100, 500), same, 0.0),
        (System::S3, W3) => (ExecTime::Fixed(400), random, MIX_IO_SHARE),
        (System::T846 | System::T823, W2) => (ExecTime::Fixed(300), random, 1.0),
        (System::T846 | System::T823, _) => (ExecTime::Fixed(300), random, 0.0),
    };
    WorkloadSpec {
        procs,
        exec,
        arrival,
        io_share,
    }
}

/// Whether workload `w` of `system` arrives at random (over the random window), the points
/// an arrival-window sweep varies.
#[must_use]
pub fn has_random_arrival(system: System, w: WorkloadId) -> bool {
    // Any window distinguishes random arrival from the 20 ms "almost same time".
    paper_workload_windowed(system, w, 1, RANDOM_WINDOW_MS + 1).arrival
        != paper_workload(system, w, 1).arrival
}

/// The process counts of the paper's grid for a system.
#[must_use]
pub fn paper_procs(system: System) -> &'static [usize] {
    match system {
        System::S1 => &[50, 100, 200, 300, 400],
        System::S2 => &[50, 100, 150, 200, 250, 350],
        System::S3 => &[100, 200, 300, 400],
        System::T846 | System::T823 => &[100],
    }
}

/// The age limit of the policy a config builds (the policy crate's one ageing rule,
/// [`StealSide::ageing`](zonal_policy::StealSide::ageing)), for reports; `None` for
/// policies that do not age tasks, or a config that does not build.
#[must_use]
pub fn effective_age_limit(cfg: &PolicyConfig) -> Option<u32> {
    cfg.build().ok()?.steal_side().ageing().limit()
}

/// One simulation to run.
#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    /// The machine.
    pub system: System,
    /// A label for the workload (`w1`…, or a Table 1 row).
    pub label: String,
    /// The workload family.
    pub workload: WorkloadSpec,
    /// The policy.
    pub policy: PolicyConfig,
    /// The seed.
    pub seed: u64,
    /// The cost model.
    pub cost: CostModel,
    /// Where origins are.
    pub origin_at: OriginAt,
}

/// Runs one job on an already built topology.
///
/// The policy config's automatic NUMA balancing ([`NumaBalancing::from_config`]) drives
/// the run's page moves.
///
/// # Errors
/// [`SimError::Policy`] if the policy does not build.
pub fn run_on(topo: &Topology, job: &Job, trace: bool) -> Result<RunResult, SimError> {
    let policy = job.policy.build()?;
    let numa_balancing = NumaBalancing::from_config(&job.policy)?;
    let mut wrng = Rng::new(job.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x5745_4C4F_4144);
    let workload = job
        .workload
        .generate(topo.cpu_count(), job.cost.mem_bound_range, &mut wrng);
    let cfg = SimConfig {
        seed: job.seed ^ 0x504F_4C49_4359,
        cost: job.cost,
        trace,
        origin_at: job.origin_at,
        numa_balancing,
        ..SimConfig::default()
    };
    Ok(simulate(topo, policy.as_ref(), &workload, &cfg))
}

/// Runs one job.
///
/// # Errors
/// [`SimError`] if the machine or policy cannot be built.
pub fn run(job: &Job, trace: bool) -> Result<RunResult, SimError> {
    run_on(&job.system.topology()?, job, trace)
}

/// Runs jobs on `threads` threads, calling `progress` after each; results come back in
/// job order.
///
/// # Errors
/// The first [`SimError`] met.
pub fn run_all(
    jobs: &[Job],
    threads: usize,
    progress: &(dyn Fn() + Sync),
) -> Result<Vec<RunResult>, SimError> {
    let mut topos = BTreeMap::new();
    for j in jobs {
        if let std::collections::btree_map::Entry::Vacant(e) = topos.entry(j.system) {
            e.insert(j.system.topology()?);
        }
    }
    let next = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<Result<RunResult, SimError>>>> =
        jobs.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for _ in 0..threads.max(1) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(job) = jobs.get(i) else { break };
                let r = run_on(&topos[&job.system], job, false);
                *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
                progress();
            });
        }
    });
    slots
        .into_iter()
        .map(|m| {
            m.into_inner()
                .unwrap_or_else(|e| e.into_inner())
                .unwrap_or_else(|| unreachable!("every job ran"))
        })
        .collect()
}

/// Mean and 95% confidence half-width (Student's t) of a sample.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct Summary {
    /// Mean.
    pub mean: f64,
    /// Half-width of the 95% interval (0 for fewer than two values).
    pub ci95: f64,
    /// Sample size.
    pub n: usize,
}

impl Summary {
    /// Summarises `xs`.
    ///
    /// ```
    /// let s = zonal_sim::experiment::Summary::of(&[1.0, 2.0, 3.0]);
    /// assert_eq!(s.mean, 2.0);
    /// assert!((s.ci95 - 4.303 / 3f64.sqrt()).abs() < 1e-3);
    /// ```
    #[must_use]
    pub fn of(xs: &[f64]) -> Self {
        let n = xs.len();
        if n == 0 {
            return Self::default();
        }
        let mean = xs.iter().sum::<f64>() / n as f64;
        if n < 2 {
            return Self { mean, ci95: 0.0, n };
        }
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        Self {
            mean,
            ci95: t975(n - 1) * (var / n as f64).sqrt(),
            n,
        }
    }
}

/// Student's t, 97.5% quantile, for `df` degrees of freedom.
fn t975(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    T.get(df.wrapping_sub(1)).copied().unwrap_or(1.96)
}
