//! The paper's own figures (Mehta & Kanungo, Tables 1–5), printed beside ours.

use crate::experiment::{System, WorkloadId};
use crate::workload::{Arrival, ExecTime, WorkloadSpec};

/// One row of Table 1: the Linux balancer's unsuccessful attempts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Table1Row {
    /// The machine.
    pub system: System,
    /// Processes (arriving randomly).
    pub procs: usize,
    /// Average execution time, ms.
    pub exec_ms: u64,
    /// I/O-bound (else CPU-bound).
    pub io_bound: bool,
    /// Attempts.
    pub attempts: u32,
    /// Attempts that did not succeed.
    pub failed: u32,
}

impl Table1Row {
    /// The row's workload: its processes, each needing exactly the row's execution time,
    /// arriving uniformly over `window_ms`, all CPU-bound or all I/O-bound.
    ///
    /// ```
    /// use zonal_sim::{paper::TABLE1, Arrival, ExecTime};
    /// let w = TABLE1[9].workload(1_000);
    /// assert_eq!((w.procs, w.exec, w.io_share), (200, ExecTime::Fixed(300), 1.0));
    /// assert_eq!(w.arrival, Arrival::Uniform { window_ms: 1_000 });
    /// ```
    #[must_use]
    pub fn workload(&self, window_ms: u64) -> WorkloadSpec {
        WorkloadSpec {
            procs: self.procs,
            exec: ExecTime::Fixed(self.exec_ms),
            arrival: Arrival::Uniform { window_ms },
            io_share: if self.io_bound { 1.0 } else { 0.0 },
        }
    }
}

/// Table 1.
pub const TABLE1: [Table1Row; 10] = {
    const fn r(
        system: System,
        procs: usize,
        exec_ms: u64,
        io_bound: bool,
        attempts: u32,
        failed: u32,
    ) -> Table1Row {
        Table1Row {
            system,
            procs,
            exec_ms,
            io_bound,
            attempts,
            failed,
        }
    }
    [
        r(System::S1, 50, 500, false, 244, 211),
        r(System::S1, 100, 500, false, 270, 182),
        r(System::S1, 150, 500, false, 345, 263),
        r(System::S1, 200, 500, false, 497, 299),
        r(System::S1, 400, 500, false, 804, 422),
        r(System::S1, 200, 200, false, 238, 109),
        r(System::T846, 100, 300, false, 213, 152),
        r(System::T823, 100, 300, false, 148, 88),
        r(System::T823, 400, 300, false, 519, 277),
        r(System::T823, 200, 300, true, 390, 140),
    ]
};

/// Table 2: processes (of 200, Linux, S1) by the level they ran on, I–VI.
pub const TABLE2: [u32; 6] = [87, 27, 23, 21, 15, 27];

/// Average turnaround times of Tables 3–5, ms: `(procs, [(linux, conservative); 3])`, one
/// pair per workload W1–W3.
pub type TatRow = (usize, [(u32, u32); 3]);

/// Table 3 (S1).
pub const TABLE3: [TatRow; 5] = [
    (50, [(376, 361), (459, 448), (690, 645)]),
    (100, [(633, 588), (620, 577), (1010, 909)]),
    (200, [(1263, 1174), (993, 896), (1750, 1581)]),
    (300, [(1799, 1620), (1449, 1303), (2470, 2292)]),
    (400, [(2402, 2237), (1815, 1613), (3047, 2805)]),
];

/// Table 4 (S2).
pub const TABLE4: [TatRow; 6] = [
    (50, [(875, 860), (560, 534), (419, 404)]),
    (100, [(977, 928), (823, 762), (552, 510)]),
    (150, [(1202, 1098), (1080, 979), (691, 623)]),
    (200, [(1545, 1366), (1277, 1155), (820, 755)]),
    (250, [(1639, 1470), (1627, 1453), (1062, 936)]),
    (350, [(2026, 1812), (2206, 2025), (1363, 1243)]),
];

/// Table 5 (S3).
pub const TABLE5: [TatRow; 4] = [
    (100, [(1061, 966), (679, 610), (1234, 1123)]),
    (200, [(1564, 1414), (942, 848), (1918, 1737)]),
    (300, [(2038, 1883), (1592, 1422), (2472, 2225)]),
    (400, [(2676, 2453), (2164, 1987), (3376, 3028)]),
];

/// The paper's (linux, conservative) average TAT for a grid point, ms.
#[must_use]
pub fn tat(system: System, w: WorkloadId, procs: usize) -> Option<(u32, u32)> {
    let table: &[TatRow] = match system {
        System::S1 => &TABLE3,
        System::S2 => &TABLE4,
        System::S3 => &TABLE5,
        _ => return None,
    };
    table.iter().find(|r| r.0 == procs).map(|r| r.1[w.index()])
}
