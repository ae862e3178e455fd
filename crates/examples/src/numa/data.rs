//! The workloads' data, in parts: each part owns its memory, so that one closure per part
//! runs it on any runtime (tokio's tasks own what they touch). A part's memory ([`Mem`]) is
//! a Zonal [`NodeBuffer`] (filled by its node's workers, bound there) or a `Vec` first
//! touched by the runtime thread that made the part.
//!
//! - [`TriadPart`]: STREAM's triad, `a = b + s·c` over `f64`s.
//! - [`StencilPart`]: a block of rows of a heat grid (5-point stencil), with copies of the
//!   neighbouring blocks' edge rows (halos) refreshed between steps by the driver.
//! - [`ChasePart`]: a pointer chase over one random-looking cycle through the whole part
//!   (`next(i) = (a·i + c) mod n`, `n` a power of two: a full period by Hull–Dobell), so
//!   every step is a dependent load: latency-bound.

use std::ops::{Deref, DerefMut};

use zonal::runtime::NodeBuffer;

/// A part's memory.
#[derive(Debug)]
pub enum Mem<T> {
    /// Zonal's node-local buffer.
    Node(NodeBuffer<T>),
    /// An ordinary vector, placed where its first writer ran.
    Heap(Vec<T>),
}

impl<T> Deref for Mem<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        match self {
            Mem::Node(b) => b,
            Mem::Heap(v) => v,
        }
    }
}

impl<T> DerefMut for Mem<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        match self {
            Mem::Node(b) => b,
            Mem::Heap(v) => v,
        }
    }
}

/// The triad's scalar.
pub const TRIAD_SCALAR: f64 = 3.0;

/// One part of the triad.
#[derive(Debug)]
pub struct TriadPart {
    /// Written.
    pub a: Mem<f64>,
    /// Read.
    pub b: Mem<f64>,
    /// Read.
    pub c: Mem<f64>,
}

/// `b`'s value at global index `g`.
pub fn triad_b(g: usize) -> f64 {
    (g % 97) as f64
}

/// `c`'s value at global index `g`.
pub fn triad_c(g: usize) -> f64 {
    (g % 89) as f64 * 0.5
}

impl TriadPart {
    /// One pass: `a = b + s·c`.
    pub fn run(&mut self) {
        for ((a, b), c) in self.a.iter_mut().zip(self.b.iter()).zip(self.c.iter()) {
            *a = b + TRIAD_SCALAR * c;
        }
    }

    /// The sum of `a`.
    pub fn sum(&self) -> f64 {
        self.a.iter().sum()
    }
}

/// One block of rows of the heat grid.
#[derive(Debug)]
pub struct StencilPart {
    /// The rows now, row-major.
    pub cur: Mem<f64>,
    /// The rows of the next step.
    pub next: Mem<f64>,
    /// Columns per row.
    pub cols: usize,
    /// The row above the block (zeros at the grid's top).
    pub above: Vec<f64>,
    /// The row below the block (zeros at the grid's bottom).
    pub below: Vec<f64>,
}

/// The heat grid's initial value at row `r`, column `c` (global).
pub fn stencil_init(r: usize, c: usize) -> f64 {
    ((r * 7 + c * 13) % 101) as f64
}

/// The diffusion coefficient of a step.
const K: f64 = 0.1;

impl StencilPart {
    /// Rows in the block.
    pub fn rows(&self) -> usize {
        self.cur.len() / self.cols.max(1)
    }

    /// One step: `next` from `cur` and the halos, then the two swap. (The slices are taken
    /// once, so that the loop indexes plain slices whatever memory holds them.)
    pub fn step(&mut self) {
        let (cols, rows) = (self.cols, self.rows());
        let (cur, next): (&[f64], &mut [f64]) = (&self.cur, &mut self.next);
        let (above, below) = (&self.above[..], &self.below[..]);
        for r in 0..rows {
            for c in 0..cols {
                let i = r * cols + c;
                let here = cur[i];
                let up = if r == 0 { above[c] } else { cur[i - cols] };
                let down = if r + 1 == rows {
                    below[c]
                } else {
                    cur[i + cols]
                };
                let left = if c == 0 { 0.0 } else { cur[i - 1] };
                let right = if c + 1 == cols { 0.0 } else { cur[i + 1] };
                next[i] = here + K * (up + down + left + right - 4.0 * here);
            }
        }
        std::mem::swap(&mut self.cur, &mut self.next);
    }

    /// The block's first row.
    pub fn first_row(&self) -> &[f64] {
        &self.cur[..self.cols]
    }

    /// The block's last row.
    pub fn last_row(&self) -> &[f64] {
        &self.cur[self.cur.len() - self.cols..]
    }

    /// The sum of the block.
    pub fn sum(&self) -> f64 {
        self.cur.iter().sum()
    }
}

/// Refreshes every block's halos from its neighbours' edge rows (zeros at the ends).
pub fn exchange_halos(parts: &mut [StencilPart]) {
    let n = parts.len();
    for i in 0..n {
        let cols = parts[i].cols;
        let above = if i == 0 {
            vec![0.0; cols]
        } else {
            parts[i - 1].last_row().to_vec()
        };
        let below = if i + 1 == n {
            vec![0.0; cols]
        } else {
            parts[i + 1].first_row().to_vec()
        };
        parts[i].above = above;
        parts[i].below = below;
    }
}

/// One part of the pointer chase.
#[derive(Debug)]
pub struct ChasePart {
    /// `next[i]`: the index after `i`.
    pub next: Mem<u32>,
    /// Where the last chase ended.
    pub pos: u32,
}

/// `next(i)` over `n` elements (`n` a power of two).
pub fn chase_next(i: usize, n: usize) -> u32 {
    (i.wrapping_mul(1_664_525).wrapping_add(1_013_904_223) & (n - 1)) as u32
}

impl ChasePart {
    /// Steps per run: half the cycle, at most 2^20 (about 0.1 s at 100 ns a miss).
    pub fn steps(&self) -> usize {
        (self.next.len() / 2).min(1 << 20)
    }

    /// Follows `steps` links from 0; the end is kept in `pos`.
    pub fn chase(&mut self, steps: usize) {
        let next: &[u32] = &self.next;
        let mut p = 0u32;
        for _ in 0..steps {
            p = next[p as usize];
        }
        self.pos = p;
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn the_chase_is_one_cycle_through_every_element() {
        for n in [1usize, 2, 1024, 1 << 16] {
            let mut seen = vec![false; n];
            let mut p = 0usize;
            for _ in 0..n {
                assert!(!seen[p], "n {n}: {p} visited twice");
                seen[p] = true;
                p = chase_next(p, n) as usize;
            }
            assert_eq!(p, 0, "n {n}: back at the start after n steps");
        }
    }

    #[test]
    fn a_stencil_step_keeps_a_uniform_interior_and_cools_the_edges() {
        let mut p = StencilPart {
            cur: Mem::Heap(vec![1.0; 9]),
            next: Mem::Heap(vec![0.0; 9]),
            cols: 3,
            above: vec![1.0; 3],
            below: vec![1.0; 3],
        };
        p.step();
        assert_eq!(p.cur[4], 1.0, "the centre sees only ones");
        assert!(
            (p.cur[3] - 0.9).abs() < 1e-12,
            "a left edge loses to the zero border"
        );
    }
}
