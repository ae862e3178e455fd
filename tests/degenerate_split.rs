//! rayon's splitting contract, as producers written for rayon rely on it: a producer is only
//! ever split strictly inside (`split_at(index)` with `0 < index < len`, so never one of
//! fewer than 2 items), and `with_min_len` / `with_max_len` bound the pieces. A producer that
//! panics on any other split ([`Strict`], as a suite's offsets-array producer does when asked
//! for `split_at(len)`) is driven through every indexed adaptor and every consumer, on pools
//! of 1, 2, 4 and 16 workers and on virtual pools of 2 and 8 nodes (where the node cut
//! applies), against the same computation on `std`'s iterators; a property test draws the
//! length (0–10,000), the case and the pool.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use proptest::prelude::*;
use zonal::iter::plumbing::*;
use zonal::prelude::*;
use zonal::runtime::{ThreadPool, ThreadPoolBuilder};

// ---- the strict producer ---------------------------------------------------------------

/// The numbers `start..end`; panics when split anywhere but strictly inside.
struct Strict {
    start: usize,
    end: usize,
}

impl Producer for Strict {
    type Item = usize;
    type IntoIter = std::ops::Range<usize>;

    fn into_iter(self) -> Self::IntoIter {
        self.start..self.end
    }

    fn split_at(self, index: usize) -> (Self, Self) {
        let len = self.end - self.start;
        assert!(
            0 < index && index < len,
            "degenerate split: split_at({index}) of a producer of {len} items"
        );
        let mid = self.start + index;
        (
            Strict {
                start: self.start,
                end: mid,
            },
            Strict {
                start: mid,
                end: self.end,
            },
        )
    }
}

/// The indexed iterator that hands out a [`Strict`] producer over `0..n`.
struct StrictIter(usize);

fn s(n: usize) -> StrictIter {
    StrictIter(n)
}

impl ParallelIterator for StrictIter {
    type Item = usize;
    fn drive_unindexed<C: UnindexedConsumer<usize>>(self, consumer: C) -> C::Result {
        bridge(self, consumer)
    }
    fn opt_len(&self) -> Option<usize> {
        Some(self.0)
    }
}

impl IndexedParallelIterator for StrictIter {
    fn drive<C: Consumer<usize>>(self, consumer: C) -> C::Result {
        bridge(self, consumer)
    }
    fn len(&self) -> usize {
        self.0
    }
    fn with_producer<CB: ProducerCallback<usize>>(self, callback: CB) -> CB::Output {
        callback.callback(Strict {
            start: 0,
            end: self.0,
        })
    }
}

// ---- the pools ---------------------------------------------------------------------------

/// 1, 2, 4 and 16 workers on this machine; 4 workers on 2 nodes and 8 on 8 nodes of the
/// `s1` preset (virtual pools: the node cut applies).
fn pools() -> &'static [(&'static str, ThreadPool)] {
    static POOLS: OnceLock<Vec<(&'static str, ThreadPool)>> = OnceLock::new();
    POOLS.get_or_init(|| {
        let threads = |n| {
            ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .expect("a pool")
        };
        let s1 = |cpus: Vec<u32>| {
            ThreadPoolBuilder::new()
                .preset("s1")
                .worker_cpus(cpus)
                .build()
                .expect("a virtual pool")
        };
        vec![
            ("1 worker", threads(1)),
            ("2 workers", threads(2)),
            ("4 workers", threads(4)),
            ("16 workers", threads(16)),
            ("s1, 2 nodes", s1((0..4).collect())),
            ("s1, 8 nodes", s1((0..16).step_by(2).collect())),
        ]
    })
}

// ---- the cases ---------------------------------------------------------------------------

fn seq(n: usize) -> Vec<usize> {
    (0..n).collect()
}

/// Sizes of the pieces a consumer was folded in (one `fold` state per piece).
fn pieces<I: ParallelIterator>(it: I) -> Vec<usize> {
    it.fold(|| 0usize, |k, _| k + 1)
        .collect::<Vec<usize>>()
        .into_iter()
        .filter(|&k| k > 0)
        .collect()
}

/// Every case: a name and a check of `n` items (panics on a wrong answer or a degenerate
/// split).
type Case = (&'static str, fn(usize));

fn cases() -> Vec<Case> {
    vec![
        // Consumers.
        ("collect", |n| assert_eq!(s(n).collect::<Vec<_>>(), seq(n))),
        ("for_each", |n| {
            let sum = AtomicUsize::new(0);
            s(n).for_each(|x| {
                sum.fetch_add(x, Ordering::Relaxed);
            });
            assert_eq!(sum.into_inner(), seq(n).iter().sum::<usize>());
        }),
        ("reduce", |n| {
            assert_eq!(
                s(n).reduce(|| 0, |a, b| a + b),
                seq(n).iter().sum::<usize>()
            )
        }),
        ("reduce_with", |n| {
            assert_eq!(
                s(n).reduce_with(|a, b| a + b),
                seq(n).into_iter().reduce(|a, b| a + b)
            )
        }),
        ("sum", |n| {
            assert_eq!(s(n).sum::<usize>(), seq(n).iter().sum::<usize>())
        }),
        ("count", |n| assert_eq!(s(n).count(), n)),
        ("min max", |n| {
            assert_eq!(s(n).min(), seq(n).into_iter().min());
            assert_eq!(s(n).max(), seq(n).into_iter().max());
        }),
        ("find_any", |n| {
            assert_eq!(s(n).find_any(|&x| x == n / 2), (n > 0).then_some(n / 2))
        }),
        ("find_first find_last", |n| {
            assert_eq!(
                s(n).find_first(|&x| x % 7 == 3),
                seq(n).into_iter().find(|&x| x % 7 == 3)
            );
            assert_eq!(
                s(n).find_last(|&x| x % 7 == 3),
                seq(n).into_iter().rfind(|&x| x % 7 == 3)
            );
        }),
        ("position", |n| {
            assert_eq!(
                s(n).position_first(|x| x == n / 3),
                (n > 0).then_some(n / 3)
            );
            assert_eq!(s(n).position_any(|x| x == n / 3), (n > 0).then_some(n / 3));
            assert_eq!(s(n).position_last(|x| x == n / 3), (n > 0).then_some(n / 3));
        }),
        ("any all", |n| {
            assert_eq!(s(n).any(|x| x == n.saturating_sub(1)), n > 0);
            assert!(s(n).all(|x| x < n));
        }),
        ("collect_into_vec", |n| {
            let mut v = vec![7];
            s(n).collect_into_vec(&mut v);
            assert_eq!(v, seq(n));
        }),
        ("unzip", |n| {
            let (a, b): (Vec<usize>, Vec<usize>) = s(n).map(|x| (x, 2 * x)).unzip();
            assert_eq!(a, seq(n));
            assert_eq!(b, seq(n).iter().map(|x| 2 * x).collect::<Vec<_>>());
        }),
        ("fold sum", |n| {
            assert_eq!(
                s(n).fold(|| 0, |a, x| a + x).sum::<usize>(),
                seq(n).iter().sum::<usize>()
            )
        }),
        ("try_for_each", |n| {
            assert_eq!(
                s(n).try_for_each(|x| if x < n { Ok(()) } else { Err(x) }),
                Ok(())
            )
        }),
        ("filter flat_map_iter", |n| {
            let v: Vec<usize> = s(n)
                .filter(|x| x % 3 == 0)
                .flat_map_iter(|x| [x, x])
                .collect();
            let w: Vec<usize> = seq(n)
                .into_iter()
                .filter(|x| x % 3 == 0)
                .flat_map(|x| [x, x])
                .collect();
            assert_eq!(v, w);
        }),
        ("cmp eq", |n| {
            assert_eq!(s(n).cmp(s(n)), std::cmp::Ordering::Equal);
            assert!(s(n).eq(s(n)));
            assert_eq!(s(n).cmp(s(n + 1)), std::cmp::Ordering::Less);
        }),
        // Adaptors.
        ("map enumerate", |n| {
            let v: Vec<(usize, usize)> = s(n).map(|x| x + 1).enumerate().collect();
            assert_eq!(
                v,
                seq(n)
                    .into_iter()
                    .map(|x| x + 1)
                    .enumerate()
                    .collect::<Vec<_>>()
            );
        }),
        ("zip equal", |n| {
            let v: Vec<(usize, usize)> = s(n).zip(s(n)).collect();
            assert_eq!(v, seq(n).into_iter().map(|x| (x, x)).collect::<Vec<_>>());
        }),
        ("zip shorter and longer", |n| {
            let m = n / 2 + 1;
            let v: Vec<(usize, usize)> = s(n).zip(s(m)).collect();
            assert_eq!(v, seq(n).into_iter().zip(seq(m)).collect::<Vec<_>>());
            let v: Vec<(usize, usize)> = s(m).zip(s(n)).rev().collect();
            assert_eq!(v, seq(m).into_iter().zip(seq(n)).rev().collect::<Vec<_>>());
        }),
        ("zip empty", |n| {
            assert_eq!(s(n).zip(s(0)).count(), 0);
            assert_eq!(s(0).zip(s(n)).count(), 0);
        }),
        ("zip_eq multizip", |n| {
            let v: Vec<(usize, usize)> = s(n).zip_eq(s(n)).collect();
            assert_eq!(v.len(), n);
            let w: Vec<(usize, usize, usize)> = (s(n), s(n), s(n)).into_par_iter().collect();
            assert_eq!(w, seq(n).into_iter().map(|x| (x, x, x)).collect::<Vec<_>>());
        }),
        ("chain", |n| {
            for (a, b) in [(n, n), (0, n), (n, 0), (n / 3, n - n / 3), (1, n)] {
                let v: Vec<usize> = s(a).chain(s(b)).collect();
                assert_eq!(v, seq(a).into_iter().chain(seq(b)).collect::<Vec<_>>());
                let v: Vec<usize> = s(a).chain(s(b)).rev().collect();
                assert_eq!(
                    v,
                    seq(a).into_iter().chain(seq(b)).rev().collect::<Vec<_>>()
                );
            }
        }),
        ("chunks", |n| {
            for k in [1, 2, 3, 7, 64, n.max(1), n + 1] {
                let v: Vec<Vec<usize>> = s(n).chunks(k).collect();
                assert_eq!(
                    v,
                    seq(n).chunks(k).map(<[usize]>::to_vec).collect::<Vec<_>>()
                );
                let v: Vec<Vec<usize>> = s(n).chunks(k).rev().collect();
                assert_eq!(
                    v,
                    seq(n)
                        .chunks(k)
                        .rev()
                        .map(<[usize]>::to_vec)
                        .collect::<Vec<_>>()
                );
            }
        }),
        ("fold_chunks", |n| {
            for k in [1, 3, n.max(1)] {
                let v: Vec<usize> = s(n).fold_chunks(k, || 0, |a, x| a + x).collect();
                let w: Vec<usize> = seq(n).chunks(k).map(|c| c.iter().sum()).collect();
                assert_eq!(v, w);
                let v: Vec<usize> = s(n).fold_chunks(k, || 0, |a, x| a + x).rev().collect();
                assert_eq!(v, w.into_iter().rev().collect::<Vec<_>>());
            }
        }),
        ("step_by", |n| {
            for k in [1, 2, 3, 100] {
                let v: Vec<usize> = s(n).step_by(k).collect();
                assert_eq!(v, seq(n).into_iter().step_by(k).collect::<Vec<_>>());
                let v: Vec<usize> = s(n).step_by(k).rev().collect();
                assert_eq!(v, seq(n).into_iter().step_by(k).rev().collect::<Vec<_>>());
            }
        }),
        ("rev", |n| {
            let v: Vec<usize> = s(n).rev().collect();
            assert_eq!(v, seq(n).into_iter().rev().collect::<Vec<_>>());
            let v: Vec<usize> = s(n).rev().rev().collect();
            assert_eq!(v, seq(n));
        }),
        ("interleave", |n| {
            for m in [0, 1, n / 2, n, n + 3] {
                let v: Vec<usize> = s(n).interleave(s(m)).collect();
                let w = interleave_seq(seq(n), seq(m));
                assert_eq!(v, w);
                let v: Vec<usize> = s(n).interleave(s(m)).rev().collect();
                assert_eq!(v, w.into_iter().rev().collect::<Vec<_>>());
                let v: Vec<usize> = s(m).interleave_shortest(s(n)).collect();
                assert_eq!(v.len(), if m <= n { 2 * m } else { 2 * n + 1 });
            }
        }),
        ("intersperse", |n| {
            let v: Vec<usize> = s(n).intersperse(usize::MAX).collect();
            let mut w = Vec::new();
            for x in 0..n {
                if x > 0 {
                    w.push(usize::MAX);
                }
                w.push(x);
            }
            assert_eq!(v, w);
            let v: Vec<usize> = s(n).intersperse(usize::MAX).rev().collect();
            assert_eq!(v, w.into_iter().rev().collect::<Vec<_>>());
        }),
        ("skip take", |n| {
            for k in [0, 1, n / 2, n.saturating_sub(1), n, n + 5] {
                let v: Vec<usize> = s(n).skip(k).collect();
                assert_eq!(v, seq(n).into_iter().skip(k).collect::<Vec<_>>());
                let v: Vec<usize> = s(n).take(k).collect();
                assert_eq!(v, seq(n).into_iter().take(k).collect::<Vec<_>>());
                let v: Vec<usize> = s(n).skip(k).rev().take(k).collect();
                assert_eq!(
                    v,
                    seq(n).into_iter().skip(k).rev().take(k).collect::<Vec<_>>()
                );
            }
        }),
        ("with_min_len", |n| {
            for m in [1, 2, 7, 1000] {
                assert_eq!(s(n).with_min_len(m).collect::<Vec<_>>(), seq(n));
                for k in pieces(s(n).with_min_len(m)) {
                    assert!(
                        k >= m.min(n),
                        "a piece of {k} items under with_min_len({m}), n = {n}"
                    );
                }
            }
        }),
        ("with_max_len", |n| {
            for m in [1, 2, 7, 1000] {
                assert_eq!(s(n).with_max_len(m).collect::<Vec<_>>(), seq(n));
                for k in pieces(s(n).with_max_len(m)) {
                    assert!(
                        k <= m,
                        "a piece of {k} items under with_max_len({m}), n = {n}"
                    );
                }
            }
        }),
        ("with_min_len over with_max_len", |n| {
            assert_eq!(
                s(n).with_min_len(8).with_max_len(2).collect::<Vec<_>>(),
                seq(n)
            );
            for k in pieces(s(n).with_max_len(2).with_min_len(8)) {
                assert!(
                    k >= 8.min(n),
                    "a piece of {k} items under with_min_len(8), n = {n}"
                );
            }
        }),
        ("blocks", |n| {
            assert_eq!(s(n).by_uniform_blocks(5).collect::<Vec<_>>(), seq(n));
            assert_eq!(s(n).by_uniform_blocks(n.max(1)).collect::<Vec<_>>(), seq(n));
            assert_eq!(s(n).by_exponential_blocks().collect::<Vec<_>>(), seq(n));
            assert_eq!(
                s(n).by_exponential_blocks().find_first(|&x| x == n / 2),
                (n > 0).then_some(n / 2)
            );
        }),
        ("map_init map_with update inspect panic_fuse", |n| {
            let v: Vec<usize> = s(n)
                .map_init(|| 1, |k, x| x + *k)
                .map_with(1, |k, x| x + *k)
                .update(|x| *x -= 2)
                .inspect(|_| {})
                .panic_fuse()
                .collect();
            assert_eq!(v, seq(n));
        }),
        ("compositions", |n| {
            let v: Vec<(usize, usize)> = s(n)
                .rev()
                .enumerate()
                .skip(1)
                .step_by(2)
                .map(|(i, x)| (x, i))
                .chain(s(n).take(n / 2).map(|x| (x, x)))
                .collect();
            let w: Vec<(usize, usize)> = seq(n)
                .into_iter()
                .rev()
                .enumerate()
                .skip(1)
                .step_by(2)
                .map(|(i, x)| (x, i))
                .chain(seq(n).into_iter().take(n / 2).map(|x| (x, x)))
                .collect();
            assert_eq!(v, w);
            let total: usize = s(n).zip(s(n).rev()).chunks(3).map(|c| c.len()).sum();
            assert_eq!(total, n);
            let v: Vec<usize> = s(n)
                .with_max_len(3)
                .zip(s(n).with_min_len(5))
                .map(|(a, b)| a + b)
                .collect();
            assert_eq!(v, seq(n).into_iter().map(|x| 2 * x).collect::<Vec<_>>());
        }),
    ]
}

fn interleave_seq(a: Vec<usize>, b: Vec<usize>) -> Vec<usize> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut a, mut b) = (a.into_iter(), b.into_iter());
    loop {
        match (a.next(), b.next()) {
            (None, None) => return out,
            (x, y) => out.extend(x.into_iter().chain(y)),
        }
    }
}

const LENGTHS: [usize; 14] = [0, 1, 2, 3, 4, 5, 8, 15, 16, 17, 31, 32, 33, 1000];

#[test]
fn every_case_on_every_pool() {
    let mut failures = Vec::new();
    for (pool_name, pool) in pools() {
        for (case, check) in cases() {
            for n in LENGTHS {
                let run = std::panic::AssertUnwindSafe(|| pool.install(|| check(n)));
                if let Err(e) = std::panic::catch_unwind(run) {
                    let msg = e
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| e.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                        .unwrap_or_default();
                    failures.push(format!("{case}, n = {n}, on {pool_name}: {msg}"));
                    // The first failure of a case on a pool says enough.
                    break;
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn off_any_pool() {
    // A plain thread: the iterators run on the global pool.
    for (_, check) in cases() {
        for n in [0, 1, 2, 17, 1000] {
            check(n);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Any length in 0–10,000, any case, any pool.
    #[test]
    fn any_length(n in 0usize..=10_000, case in any::<prop::sample::Index>(), pool in any::<prop::sample::Index>()) {
        let cases = cases();
        let (_, check) = cases[case.index(cases.len())];
        let (_, pool) = &pools()[pool.index(pools().len())];
        pool.install(|| check(n));
    }
}
