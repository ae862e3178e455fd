//! The shapes of program where a parallel loop's own cost shows (issue 42): many short
//! loops (a solver's time steps: thousands of `par_iter` loops of about a thousand cheap
//! items each), items of uneven cost (the later ones heavier, so that an even split is an
//! uneven load), a sparse matrix-vector product over rows of very different lengths, and
//! n-body with dynamic splitting at a small and a large size. Written once with rayon's
//! method names and compiled twice, as [`demo`](crate::demo): `rayon_impl` against
//! `rayon::prelude`, `zonal_impl` against `zonal::prelude`.
//!
//! Shared by `benches/loops.rs` (criterion; `cargo test --bench loops` runs each once, in
//! CI) and `examples/vs_rayon.rs` (paired, interleaved runs: the tables of BENCHMARKS.md,
//! "Parallel loops").

/// The items of one short loop.
pub const SHORT_ITEMS: usize = 1_000;

/// The short loops of one run.
pub const SHORT_LOOPS: usize = 10_000;

/// The items of the uneven loop.
pub const UNEVEN_ITEMS: usize = 4_096;

/// A sparse matrix in compressed-row form.
#[derive(Clone, Debug)]
pub struct Csr {
    /// Row `i`'s entries are `offsets[i]..offsets[i + 1]` of `cols` and `vals`.
    pub offsets: Vec<usize>,
    /// Column of each entry.
    pub cols: Vec<u32>,
    /// Value of each entry.
    pub vals: Vec<f64>,
}

impl Csr {
    /// `rows × rows`, deterministic: most rows hold a few entries, one in 16 about 50 times
    /// as many (the skew of a graph's adjacency or a mesh with refined regions).
    #[must_use]
    pub fn skewed(rows: usize) -> Csr {
        let mut offsets = Vec::with_capacity(rows + 1);
        let (mut cols, mut vals) = (Vec::new(), Vec::new());
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        offsets.push(0);
        for i in 0..rows {
            let nnz = if i % 16 == 7 { 200 } else { 4 };
            for _ in 0..nnz {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                cols.push((seed % rows as u64) as u32);
                vals.push((seed % 1000) as f64 / 1000.0);
            }
            offsets.push(cols.len());
        }
        Csr {
            offsets,
            cols,
            vals,
        }
    }

    /// The number of rows.
    #[must_use]
    pub fn rows(&self) -> usize {
        self.offsets.len() - 1
    }
}

/// The cost of item `i` of the uneven loop: `i / 4` rounds of a xorshift (item 4,095 about
/// a microsecond, the first ones nothing), folded into the result so none is optimised away.
#[inline]
#[must_use]
pub fn uneven_item(i: usize) -> u64 {
    let mut x = i as u64 | 1;
    for _ in 0..i / 4 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    x
}

macro_rules! loop_workloads {
    ($name:ident, $($prelude:ident)::+) => {
        /// The loops on one runtime's parallel iterators.
        pub mod $name {
            use super::{uneven_item, Csr};
            use $($prelude)::+::*;

            /// `loops` parallel loops over `v` (each item a multiply-add), one after the
            /// other, as a time-stepping solver runs them.
            pub fn short_loops(v: &mut [f64], loops: usize) {
                for _ in 0..loops {
                    v.par_iter_mut().for_each(|x| *x = *x * 0.999 + 0.001);
                }
            }

            /// `loops` parallel reductions over `v` (a residual norm per step).
            pub fn short_sums(v: &[f64], loops: usize) -> f64 {
                (0..loops)
                    .map(|k| v.par_iter().map(|x| x * (k as f64)).sum::<f64>())
                    .sum()
            }

            /// Items `0..n` of growing cost ([`uneven_item`]), reduced.
            pub fn uneven(n: usize) -> u64 {
                (0..n).into_par_iter().map(uneven_item).reduce(|| 0, |a, b| a ^ b)
            }

            /// `y = A x`, one row per item.
            pub fn spmv(a: &Csr, x: &[f64], y: &mut [f64]) {
                y.par_iter_mut().enumerate().for_each(|(i, yi)| {
                    let (lo, hi) = (a.offsets[i], a.offsets[i + 1]);
                    *yi = a.cols[lo..hi]
                        .iter()
                        .zip(&a.vals[lo..hi])
                        .map(|(&c, v)| v * x[c as usize])
                        .sum();
                });
            }
        }
    };
}

loop_workloads!(rayon_impl, rayon::prelude);
loop_workloads!(zonal_impl, zonal::prelude);
