//! Per-process traces in the paper's format.
//!
//! ```text
//! Process-255: P10.wait(1384) - P10.run(79) - IO(21) - P10.wait(1680) - P10.run(77) - IO(23)
//! ```
//!
//! `Pk.wait(ms)`: queued on CPU `k`; `Pk.run(ms)`: on CPU `k` (charged overheads included);
//! `IO(ms)`: waiting for I/O. Consecutive pieces of the same kind on the same CPU merge
//! (a task that keeps its CPU for two slices shows one `run`). Times are rounded to ms.
//! The trace is only collected when asked for; it is the simulator's determinism witness.

use std::fmt::Write as _;

/// One piece of a process's life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Piece {
    Wait { cpu: u32, us: u64 },
    Run { cpu: u32, us: u64 },
    Io { us: u64 },
}

/// The pieces of every process.
#[derive(Debug, Default)]
pub(crate) struct Tracer {
    procs: Vec<Vec<Piece>>,
}

impl Tracer {
    pub(crate) fn new(procs: usize) -> Self {
        Self {
            procs: vec![Vec::new(); procs],
        }
    }

    pub(crate) fn add(&mut self, proc: usize, piece: Piece) {
        let v = &mut self.procs[proc];
        if let Some(last) = v.last_mut() {
            match (last, piece) {
                (Piece::Wait { cpu: a, us }, Piece::Wait { cpu: b, us: d })
                | (Piece::Run { cpu: a, us }, Piece::Run { cpu: b, us: d })
                    if *a == b =>
                {
                    *us += d;
                    return;
                }
                _ => {}
            }
        }
        v.push(piece);
    }

    /// The whole trace, one line per process.
    pub(crate) fn render(&self) -> String {
        let mut out = String::new();
        for (p, pieces) in self.procs.iter().enumerate() {
            let _ = write!(out, "Process-{p}:");
            for (i, piece) in pieces.iter().enumerate() {
                out.push_str(if i == 0 { " " } else { " - " });
                let ms = |us: u64| (us + 500) / 1000;
                let _ = match *piece {
                    Piece::Wait { cpu, us } => write!(out, "P{cpu}.wait({})", ms(us)),
                    Piece::Run { cpu, us } => write!(out, "P{cpu}.run({})", ms(us)),
                    Piece::Io { us } => write!(out, "IO({})", ms(us)),
                };
            }
            out.push('\n');
        }
        out
    }
}

/// FNV-1a, 64 bits: a stable hash for determinism checks (std's hashers may change
/// between Rust versions).
///
/// ```
/// assert_eq!(zonal_sim::fnv1a(b""), 0xcbf2_9ce4_8422_2325);
/// ```
#[must_use]
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn merges_and_formats() {
        let mut t = Tracer::new(1);
        t.add(
            0,
            Piece::Wait {
                cpu: 10,
                us: 1_384_000,
            },
        );
        t.add(
            0,
            Piece::Run {
                cpu: 10,
                us: 40_000,
            },
        );
        t.add(
            0,
            Piece::Run {
                cpu: 10,
                us: 39_000,
            },
        );
        t.add(0, Piece::Io { us: 21_000 });
        assert_eq!(
            t.render(),
            "Process-0: P10.wait(1384) - P10.run(79) - IO(21)\n"
        );
    }
}
