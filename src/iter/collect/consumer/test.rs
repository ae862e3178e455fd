//! The in-place collect: pieces write in parallel parts; the slow path (a wrong length, a
//! split without an index) keeps every item in order; a panic drops each item once.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use super::*;
use crate::iter::plumbing::{bridge_unindexed, UnindexedProducer};
use crate::prelude::*;
use zonal_runtime::{ThreadPool, ThreadPoolBuilder};

fn pool(workers: usize) -> ThreadPool {
    ThreadPoolBuilder::new()
        .num_threads(workers)
        .build()
        .expect("a pool of logical workers")
}

#[test]
fn the_pieces_write_their_own_parts() {
    let n = if cfg!(miri) { 64 } else { 100_000 };
    for workers in [4, 16] {
        let pool = pool(workers);
        let mut v = vec![7u64];
        let written = pool
            .install(|| extend_in_place(&mut v, n, (0..n as u64).into_par_iter().map(|x| x * 3)));
        assert!(written.in_place);
        assert!(written.parts > 1, "{written:?} on {workers} workers");
        assert_eq!(v.len(), n + 1);
        assert_eq!(v[0], 7);
        assert!(v[1..].iter().copied().eq((0..n as u64).map(|x| x * 3)));
    }
}

/// Runs `iter` through [`extend_in_place`] on a 4-worker pool; the items and how it went.
fn written<I>(iter: I) -> (Vec<I::Item>, Written)
where
    I: IndexedParallelIterator,
{
    let mut v = Vec::new();
    let len = iter.len();
    let w = pool(4).install(|| extend_in_place(&mut v, len, iter));
    (v, w)
}

#[test]
fn indexed_adaptors_take_the_fast_path() {
    let n = if cfg!(miri) { 40 } else { 20_000 };
    let a: Vec<u32> = (0..n).collect();
    let (v, w) = written(a.par_iter().chain(a.par_iter().rev()).copied());
    assert!(w.in_place && w.parts > 1, "chain: {w:?}");
    assert!(v
        .iter()
        .copied()
        .eq(a.iter().copied().chain(a.iter().rev().copied())));
    let (v, w) = written(a.par_iter().copied().intersperse(0));
    assert!(w.in_place && w.parts > 1, "intersperse: {w:?}");
    assert_eq!(v.len(), 2 * a.len() - 1);
    assert!(v.iter().step_by(2).copied().eq(a.iter().copied()));
    let (v, w) = written(a.par_iter().zip(a.par_iter().skip(1)).map(|(x, y)| x + y));
    assert!(w.in_place && w.parts > 1, "zip: {w:?}");
    assert!(v.iter().copied().eq((0..n - 1).map(|i| 2 * i + 1)));
    let (v, w) = written(
        a.par_iter()
            .copied()
            .interleave(a.par_iter().copied().take(3)),
    );
    assert!(w.in_place, "interleave: {w:?}");
    assert_eq!(v.len(), a.len() + 3);
}

/// An unindexed source that reports a length (possibly wrong) and splits without an
/// index: the collect's slow path.
struct Liar {
    items: std::ops::Range<usize>,
    claimed: usize,
}

struct LiarProducer(std::ops::Range<usize>);

impl UnindexedProducer for LiarProducer {
    type Item = usize;
    fn split(self) -> (Self, Option<Self>) {
        let r = self.0;
        if r.len() < 2 {
            return (LiarProducer(r), None);
        }
        let mid = r.start + r.len() / 2;
        (LiarProducer(r.start..mid), Some(LiarProducer(mid..r.end)))
    }
    fn fold_with<F: Folder<usize>>(self, folder: F) -> F {
        folder.consume_iter(self.0)
    }
}

impl ParallelIterator for Liar {
    type Item = usize;
    fn drive_unindexed<C: UnindexedConsumer<usize>>(self, consumer: C) -> C::Result {
        bridge_unindexed(LiarProducer(self.items), consumer)
    }
    fn opt_len(&self) -> Option<usize> {
        Some(self.claimed)
    }
}

#[test]
fn a_wrong_length_or_an_unindexed_split_still_collects_in_order() {
    let n = if cfg!(miri) { 50 } else { 10_000 };
    let pool = pool(4);
    for claimed in [0, 1, n / 2, n - 1, n, n + 1, 3 * n, usize::MAX / 2] {
        let got: Vec<usize> = pool.install(|| {
            Liar {
                items: 0..n,
                claimed,
            }
            .collect()
        });
        assert!(got.iter().copied().eq(0..n), "claimed {claimed}");
        let mut ext = vec![usize::MAX; 3];
        pool.install(|| {
            ext.par_extend(Liar {
                items: 0..n,
                claimed,
            })
        });
        assert_eq!(ext[..3], [usize::MAX; 3]);
        assert!(ext[3..].iter().copied().eq(0..n), "claimed {claimed}");
    }
}

/// An item that counts its drops by its id.
struct Counted {
    id: usize,
    drops: Arc<Vec<AtomicUsize>>,
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.drops[self.id].fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn a_panic_mid_collect_drops_every_made_item_once() {
    let n = if cfg!(miri) { 40 } else { 20_000 };
    for workers in [1, 4] {
        let pool = pool(workers);
        for bad in [0, 1, n / 3, n - 1] {
            for claimed in [n, n / 2] {
                let drops: Arc<Vec<AtomicUsize>> =
                    Arc::new((0..n).map(|_| AtomicUsize::new(0)).collect());
                let made = AtomicUsize::new(0);
                let mut v: Vec<Counted> = Vec::new();
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    pool.install(|| {
                        let items = (0..n).into_par_iter().map(|id| {
                            assert!(id != bad, "item {bad} fails");
                            made.fetch_add(1, Ordering::Relaxed);
                            Counted {
                                id,
                                drops: Arc::clone(&drops),
                            }
                        });
                        if claimed == n {
                            v.par_extend(items);
                        } else {
                            // The slow path: spilled items are dropped too.
                            let liar = Liar {
                                items: 0..n,
                                claimed,
                            };
                            v.par_extend(liar.map(|id| {
                                assert!(id != bad, "item {bad} fails");
                                made.fetch_add(1, Ordering::Relaxed);
                                Counted {
                                    id,
                                    drops: Arc::clone(&drops),
                                }
                            }));
                        }
                    });
                }));
                assert!(r.is_err(), "the panic reaches the caller");
                assert!(v.is_empty(), "the vector's length is untouched");
                let made = made.into_inner();
                let dropped: usize = drops.iter().map(|d| d.load(Ordering::Relaxed)).sum();
                assert_eq!(dropped, made, "every made item dropped (item {bad})");
                assert!(
                    drops.iter().all(|d| d.load(Ordering::Relaxed) <= 1),
                    "none dropped twice (item {bad}, {workers} workers)"
                );
            }
        }
    }
}
