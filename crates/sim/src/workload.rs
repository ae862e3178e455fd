//! Workloads: processes with an arrival time, a parent CPU, a memory-bound share, and a
//! sequence of CPU bursts separated by I/O waits.
//!
//! A [`WorkloadSpec`] describes a family (how many processes, how long, how they arrive,
//! CPU- or I/O-bound); [`WorkloadSpec::generate`] draws one concrete [`Workload`] from a
//! seed. The paper's workloads (Tables 3–5) are in [`crate::experiment`].
//!
//! # I/O-bound processes
//!
//! The paper's traces (`P10.run(79) - IO(21) - P10.run(77) - IO(23)`) show an I/O-bound
//! process computing about 80 ms, then waiting about 20 ms for I/O. We draw each CPU burst
//! uniformly from [`IO_BURST_CPU_MS`] and each I/O wait from [`IO_WAIT_MS`]; the last
//! burst takes what is left of the process's execution time.

use zonal_policy::Rng;

/// CPU burst of an I/O-bound process, ms (from the paper's traces: run ~80 ms).
pub const IO_BURST_CPU_MS: (u64, u64) = (70, 90);

/// I/O wait of an I/O-bound process, ms (from the paper's traces: IO ~20 ms).
pub const IO_WAIT_MS: (u64, u64) = (15, 25);

/// How processes arrive.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
#[non_exhaustive]
pub enum Arrival {
    /// All at time 0.
    AllAtOnce,
    /// Uniformly at random over `[0, window_ms)`.
    Uniform {
        /// The arrival window, ms.
        window_ms: u64,
    },
}

/// Execution time (total CPU demand at local speed) of each process.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
#[non_exhaustive]
pub enum ExecTime {
    /// Every process needs exactly this many ms.
    Fixed(u64),
    /// Uniform over `[lo, hi]` ms.
    Uniform(u64, u64),
}

/// A family of workloads.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct WorkloadSpec {
    /// Number of processes.
    pub procs: usize,
    /// Execution time.
    pub exec: ExecTime,
    /// Arrival pattern.
    pub arrival: Arrival,
    /// Share of I/O-bound processes (0 = all CPU-bound).
    pub io_share: f64,
}

/// One CPU burst and the I/O wait after it (0 for a process's last burst).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Burst {
    /// CPU work, µs at local speed.
    pub cpu_us: u64,
    /// I/O wait after the burst, µs.
    pub io_us: u64,
}

/// One process of a concrete workload.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProcSpec {
    /// Arrival time, µs.
    pub arrival_us: u64,
    /// The CPU it is forked from (fork placement starts there).
    pub parent_cpu: u32,
    /// Memory-bound share of its run time at local latency.
    pub mem_bound: f64,
    /// Index of its first burst in [`Workload::bursts`].
    pub first_burst: u32,
    /// Number of bursts.
    pub bursts: u32,
    /// Total CPU demand, µs at local speed.
    pub demand_us: u64,
}

/// A concrete workload: processes and their bursts, in flat arrays.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Workload {
    /// Processes, in id order.
    pub procs: Vec<ProcSpec>,
    /// Every process's bursts, back to back.
    pub bursts: Vec<Burst>,
}

impl Workload {
    /// Adds a process with explicit bursts (for hand-built scenarios).
    ///
    /// ```
    /// use zonal_sim::{Burst, Workload};
    /// let mut w = Workload::default();
    /// w.push(0, 0, 0.0, &[Burst { cpu_us: 1000, io_us: 0 }]);
    /// assert_eq!(w.procs[0].demand_us, 1000);
    /// ```
    pub fn push(&mut self, arrival_us: u64, parent_cpu: u32, mem_bound: f64, bursts: &[Burst]) {
        let first = self.bursts.len() as u32;
        self.bursts.extend_from_slice(bursts);
        self.procs.push(ProcSpec {
            arrival_us,
            parent_cpu,
            mem_bound,
            first_burst: first,
            bursts: bursts.len() as u32,
            demand_us: bursts.iter().map(|b| b.cpu_us).sum(),
        });
    }

    /// The bursts of process `p`.
    #[must_use]
    pub fn bursts_of(&self, p: usize) -> &[Burst] {
        let s = &self.procs[p];
        &self.bursts[s.first_burst as usize..(s.first_burst + s.bursts) as usize]
    }

    /// Total CPU demand, µs.
    #[must_use]
    pub fn demand_us(&self) -> u64 {
        self.procs.iter().map(|p| p.demand_us).sum()
    }
}

fn uniform(rng: &mut Rng, lo: u64, hi: u64) -> u64 {
    lo + rng.below((hi - lo + 1) as usize) as u64
}

impl WorkloadSpec {
    /// Draws a workload for a machine of `cpus` CPUs, with memory-bound shares drawn from
    /// `mem_bound` (lo, hi). The same `rng` state gives the same workload.
    ///
    /// ```
    /// use zonal_sim::{Arrival, ExecTime, WorkloadSpec};
    /// use zonal_policy::Rng;
    /// let spec = WorkloadSpec { procs: 4, exec: ExecTime::Fixed(200), arrival: Arrival::AllAtOnce, io_share: 0.0 };
    /// let w = spec.generate(2, (0.1, 0.5), &mut Rng::new(1));
    /// assert_eq!(w.demand_us(), 800_000);
    /// ```
    #[must_use]
    pub fn generate(&self, cpus: usize, mem_bound: (f64, f64), rng: &mut Rng) -> Workload {
        let mut w = Workload::default();
        let mut bursts = Vec::new();
        for i in 0..self.procs {
            let arrival_us = match self.arrival {
                Arrival::AllAtOnce => 0,
                Arrival::Uniform { window_ms } => rng.below((window_ms * 1000) as usize) as u64,
            };
            let exec_ms = match self.exec {
                ExecTime::Fixed(ms) => ms,
                ExecTime::Uniform(lo, hi) => uniform(rng, lo, hi),
            };
            let parent_cpu = rng.below(cpus) as u32;
            let mb = mem_bound.0 + (mem_bound.1 - mem_bound.0) * rng.unit();
            let io_bound = rng.unit() < self.io_share;
            bursts.clear();
            let total = exec_ms * 1000;
            if io_bound {
                let mut left = total;
                while left > 0 {
                    let cpu = (uniform(rng, IO_BURST_CPU_MS.0, IO_BURST_CPU_MS.1) * 1000).min(left);
                    left -= cpu;
                    let io = if left > 0 {
                        uniform(rng, IO_WAIT_MS.0, IO_WAIT_MS.1) * 1000
                    } else {
                        0
                    };
                    bursts.push(Burst {
                        cpu_us: cpu,
                        io_us: io,
                    });
                }
            } else {
                bursts.push(Burst {
                    cpu_us: total,
                    io_us: 0,
                });
            }
            let _ = i;
            w.push(arrival_us, parent_cpu, mb, &bursts);
        }
        w
    }
}
