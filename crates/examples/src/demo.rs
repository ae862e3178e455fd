//! The rayon-demo-style workloads, written once with rayon's method names and compiled twice:
//! `rayon_impl` against `rayon::prelude`, `zonal_impl` against `zonal::prelude`. That the
//! second module compiles is itself the claim of the migration guide: the port is the import.
//!
//! Shared by `benches/rayon_demo.rs` (criterion) and `examples/rayon_demo.rs` (paired runs
//! and the table in BENCHMARKS.md).

/// One body of the n-body problem.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Body {
    /// Position.
    pub pos: [f64; 3],
    /// Velocity.
    pub vel: [f64; 3],
    /// Mass.
    pub mass: f64,
}

/// Deterministic inputs (xorshift), so both runtimes get the same data.
pub fn random_u64s(n: usize, mut seed: u64) -> Vec<u64> {
    (0..n)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        })
        .collect()
}

/// `n` bodies on a deterministic spiral.
pub fn bodies(n: usize) -> Vec<Body> {
    (0..n)
        .map(|i| {
            let t = i as f64 * 0.37;
            Body {
                pos: [
                    t.cos() * (1.0 + t),
                    t.sin() * (1.0 + t),
                    (i % 17) as f64 * 0.1,
                ],
                vel: [0.0; 3],
                mass: 1.0 + (i % 5) as f64,
            }
        })
        .collect()
}

/// A `w × h` Game of Life board with a deterministic pattern.
pub fn board(w: usize, h: usize) -> Vec<u8> {
    random_u64s(w * h, 0x5eed)
        .into_iter()
        .map(|x| (x % 3 == 0) as u8)
        .collect()
}

/// An `n × n` matrix with deterministic entries.
pub fn matrix(n: usize, seed: u64) -> Vec<f64> {
    random_u64s(n * n, seed)
        .into_iter()
        .map(|x| (x % 1000) as f64 / 1000.0)
        .collect()
}

macro_rules! demo_workloads {
    ($name:ident, $($prelude:ident)::+) => {
        /// The workloads on one runtime's parallel iterators.
        pub mod $name {
            use super::Body;
            use $($prelude)::+::*;

            /// Unstable parallel sort (quicksort in both).
            pub fn quicksort(v: &mut [u64]) {
                v.par_sort_unstable();
            }

            /// Stable parallel sort (merge sort in both).
            pub fn mergesort(v: &mut [u64]) {
                v.par_sort();
            }

            /// One all-pairs step: accelerations by `par_iter().map().collect()`, then the
            /// update by `par_iter_mut().zip()`.
            pub fn nbody_step(bodies: &mut [Body], dt: f64) {
                let all: &[Body] = bodies;
                let acc: Vec<[f64; 3]> = all
                    .par_iter()
                    .map(|b| {
                        let mut a = [0.0f64; 3];
                        for o in all {
                            let d = [o.pos[0] - b.pos[0], o.pos[1] - b.pos[1], o.pos[2] - b.pos[2]];
                            let r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + 1e-3;
                            let f = o.mass / (r2 * r2.sqrt());
                            for k in 0..3 {
                                a[k] += d[k] * f;
                            }
                        }
                        a
                    })
                    .collect();
                bodies.par_iter_mut().zip(acc.par_iter()).for_each(|(b, a)| {
                    for k in 0..3 {
                        b.vel[k] += a[k] * dt;
                        b.pos[k] += b.vel[k] * dt;
                    }
                });
            }

            /// One Game of Life generation, a row per item of `par_chunks_mut(w)`.
            pub fn life_step(cur: &[u8], next: &mut [u8], w: usize, h: usize) {
                next.par_chunks_mut(w).enumerate().for_each(|(y, row)| {
                    for (x, cell) in row.iter_mut().enumerate() {
                        let mut n = 0;
                        for dy in [h - 1, 0, 1] {
                            for dx in [w - 1, 0, 1] {
                                if dy == 0 && dx == 0 {
                                    continue;
                                }
                                n += cur[((y + dy) % h) * w + (x + dx) % w];
                            }
                        }
                        let alive = cur[y * w + x] == 1;
                        *cell = u8::from(n == 3 || (alive && n == 2));
                    }
                });
            }

            /// `c = a × b` for `n × n` row-major matrices, a row of `c` per item.
            pub fn matmul(a: &[f64], b: &[f64], c: &mut [f64], n: usize) {
                c.par_chunks_mut(n).enumerate().for_each(|(i, row)| {
                    let ai = &a[i * n..(i + 1) * n];
                    for (k, &aik) in ai.iter().enumerate() {
                        let bk = &b[k * n..(k + 1) * n];
                        for (cij, &bkj) in row.iter_mut().zip(bk) {
                            *cij += aik * bkj;
                        }
                    }
                });
            }

            /// Map-reduce: a filtered sum of squares.
            pub fn map_reduce(v: &[u64]) -> u64 {
                v.par_iter()
                    .map(|&x| (x % 1024) * (x % 1024))
                    .filter(|x| x % 3 != 0)
                    .sum()
            }

            /// Word-count-like map-reduce over integer keys with `fold` + `reduce`.
            pub fn histogram(v: &[u64]) -> Vec<u64> {
                v.par_iter()
                    .fold(|| vec![0u64; 64], |mut h, &x| {
                        h[(x % 64) as usize] += 1;
                        h
                    })
                    .reduce(|| vec![0u64; 64], |mut a, b| {
                        for (x, y) in a.iter_mut().zip(b) {
                            *x += y;
                        }
                        a
                    })
            }
        }
    };
}

demo_workloads!(rayon_impl, rayon::prelude);
demo_workloads!(zonal_impl, zonal::prelude);
