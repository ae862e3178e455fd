//! The merge sort's laws on small shapes (every path: leaves of one element, merges split
//! down to single elements), its panic safety with drop-counting elements, and its span.
//!
//! Under Miri (`cfg(miri)`) the law tests run on one pool of 2 workers, over two shapes
//! ([`MIRI_SHAPES`]: merges split down to single elements, and leaves of several), with
//! fewer and shorter inputs, key sets and panic points: Miri interprets every worker, idle
//! ones included, and the 16-worker pools did not finish in 40 minutes, nor pools of 1 and 3
//! workers over all five shapes in 12 minutes for the panic test alone. What Miri checks is
//! the same: leaves and merges run on several workers at once, a panic at the first and at
//! a middle comparison, each element dropped once. The one-worker pool and the other
//! shapes run natively.

use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};
use std::sync::Arc;

use super::*;
use zonal_runtime::{ThreadPool, ThreadPoolBuilder};

fn pool(workers: usize) -> ThreadPool {
    ThreadPoolBuilder::new()
        .num_threads(workers)
        .build()
        .expect("a pool of logical workers")
}

/// Pseudo-random `u32`s (xorshift), reproducible.
fn noise(n: usize, seed: u64) -> Vec<u32> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 32) as u32
        })
        .collect()
}

/// Worker counts for the pools of the law tests: Miri runs a 16-worker pool too slowly.
const WORKERS: &[usize] = if cfg!(miri) { &[2] } else { &[1, 3, 16] };

const SHAPES: [Shape; 5] = [
    Shape { leaf: 1, cutoff: 1 },
    Shape { leaf: 1, cutoff: 7 },
    Shape { leaf: 5, cutoff: 2 },
    Shape {
        leaf: 16,
        cutoff: 64,
    },
    Shape {
        leaf: 300,
        cutoff: 1,
    },
];

/// The shapes the law tests run under Miri: merges split down to single elements, and
/// leaves of several elements with small merges.
const MIRI_SHAPES: [Shape; 2] = [SHAPES[0], SHAPES[2]];

/// The shapes the law tests run: [`SHAPES`], or [`MIRI_SHAPES`] under Miri.
fn shapes() -> &'static [Shape] {
    if cfg!(miri) {
        &MIRI_SHAPES
    } else {
        &SHAPES
    }
}

#[test]
fn stable_like_std_on_every_shape() {
    let n = if cfg!(miri) { 24 } else { 3_000 };
    let keys: &[(u64, u32)] = if cfg!(miri) {
        &[(1, 4), (3, u32::MAX)]
    } else {
        &[(1, 4), (2, 100), (3, u32::MAX)]
    };
    for &workers in WORKERS {
        let pool = pool(workers);
        for &shape in shapes() {
            for &(seed, keys) in keys {
                // (key, original index): equal keys must keep their order.
                let v: Vec<(u32, usize)> = noise(n, seed)
                    .into_iter()
                    .map(|x| x % keys)
                    .enumerate()
                    .map(|(i, k)| (k, i))
                    .collect();
                let mut want = v.clone();
                want.sort_by_key(|p| p.0);
                let mut got = v.clone();
                pool.install(|| merge_sort(&mut got, &|a, b| a.0.cmp(&b.0), shape, &NoProbe));
                assert_eq!(got, want, "{shape:?}, {workers} workers, {keys} keys");
            }
        }
    }
}

#[test]
fn edge_lengths_and_sorted_inputs() {
    let pool = pool(if cfg!(miri) { 2 } else { 4 });
    let lens: Vec<usize> = if cfg!(miri) {
        vec![0, 1, 2, 7, 16]
    } else {
        (0..40).collect()
    };
    for len in lens {
        for &shape in shapes() {
            let mut inputs = vec![
                (0..len).rev().collect::<Vec<_>>(),
                (0..len).map(|i| i % 3).collect(),
            ];
            if !cfg!(miri) {
                inputs.extend([(0..len).collect(), vec![7; len]]);
            }
            for v in inputs {
                let mut want = v.clone();
                want.sort();
                let mut got = v;
                pool.install(|| merge_sort(&mut got, &Ord::cmp, shape, &NoProbe));
                assert_eq!(got, want, "{shape:?}, len {len}");
            }
        }
    }
    // Zero-sized elements: std's sort.
    let mut units = vec![(); 100];
    merge_sort(&mut units, &Ord::cmp, SHAPES[0], &NoProbe);
    assert_eq!(units.len(), 100);
}

/// An element that counts its drops in a shared table, by its id.
struct Counted {
    key: u32,
    id: usize,
    drops: Arc<Vec<AtomicUsize>>,
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.drops[self.id].fetch_add(1, AtomicOrdering::Relaxed);
    }
}

#[test]
fn a_panicking_comparison_loses_and_duplicates_nothing() {
    let n = if cfg!(miri) { 16 } else { 2_000 };
    let keys = noise(n, 9);
    // Roughly how many comparisons one sort makes, to spread the panic points over it.
    let total = {
        let calls = AtomicUsize::new(0);
        let mut v = keys.clone();
        merge_sort(
            &mut v,
            &|a: &u32, b: &u32| {
                calls.fetch_add(1, AtomicOrdering::Relaxed);
                a.cmp(b)
            },
            SHAPES[1],
            &NoProbe,
        );
        calls.into_inner()
    };
    let points = if cfg!(miri) {
        vec![0, total / 2]
    } else {
        vec![
            0,
            1,
            total / 7,
            total / 3,
            total / 2,
            total - total / 5,
            total - 1,
        ]
    };
    let pools: &[usize] = if cfg!(miri) { WORKERS } else { &[1, 16] };
    for &workers in pools {
        let pool = pool(workers);
        for &shape in shapes() {
            for &point in &points {
                let drops: Arc<Vec<AtomicUsize>> =
                    Arc::new((0..n).map(|_| AtomicUsize::new(0)).collect());
                let mut v: Vec<Counted> = keys
                    .iter()
                    .enumerate()
                    .map(|(id, &key)| Counted {
                        key,
                        id,
                        drops: Arc::clone(&drops),
                    })
                    .collect();
                let calls = AtomicUsize::new(0);
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    pool.install(|| {
                        let cmp = |a: &Counted, b: &Counted| {
                            if calls.fetch_add(1, AtomicOrdering::Relaxed) == point {
                                panic!("comparison {point} fails");
                            }
                            a.key.cmp(&b.key)
                        };
                        merge_sort(&mut v, &cmp, shape, &NoProbe);
                    });
                }));
                let panicked = r.is_err();
                assert!(
                    panicked || calls.load(AtomicOrdering::Relaxed) <= point,
                    "a panic at comparison {point} reaches the caller"
                );
                assert!(
                    drops.iter().all(|d| d.load(AtomicOrdering::Relaxed) == 0),
                    "nothing dropped during the sort ({shape:?}, point {point})"
                );
                let mut ids: Vec<usize> = v.iter().map(|c| c.id).collect();
                ids.sort_unstable();
                assert!(
                    ids.iter().copied().eq(0..n),
                    "a permutation ({shape:?}, {workers} workers, point {point})"
                );
                drop(v);
                assert!(
                    drops.iter().all(|d| d.load(AtomicOrdering::Relaxed) == 1),
                    "every element dropped once ({shape:?}, point {point})"
                );
            }
        }
    }
}

#[test]
fn the_span_is_polylogarithmic() {
    // Large enough that a merge on one thread would be the whole input.
    let log = if cfg!(miri) { 8 } else { 20 };
    let n = 1usize << log;
    let pool = pool(if cfg!(miri) { 2 } else { 16 });
    let mut v = noise(n, 5);
    let mut want = v.clone();
    want.sort();
    let probe = SpanProbe::default();
    let shape = pool.install(|| {
        let shape = crate::slice::sort::merge_shape(n);
        merge_sort(&mut v, &Ord::cmp, shape, &probe);
        shape
    });
    assert_eq!(v, want);
    let depth = probe.max_depth.into_inner();
    let pass = probe.max_pass.into_inner();
    let passes = probe.passes.into_inner();
    // The longest sequential pass is a leaf or a merge below the cutoff: a sixteenth of a
    // worker's share here (under Miri, a leaf of `MIN_LEAF`), far from the whole input that
    // a one-thread merge handles.
    assert!(pass <= n / 8, "longest sequential pass {pass} of {n}");
    assert!(passes >= 16, "{passes} sequential passes");
    // log2(n / leaf) sort levels, each merge at most log_{4/3}(n / cutoff) levels deep.
    assert!(depth <= log * log, "depth {depth} for 2^{log} elements");
    let levels = (n / shape.leaf).ilog2() as usize;
    assert!(
        depth > levels,
        "depth {depth}: {levels} sort levels, and the top merge splits"
    );
}
