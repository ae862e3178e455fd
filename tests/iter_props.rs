//! The parallel iterators agree with std's sequential iterators: every adaptor chain and
//! consumer, for random inputs and lengths (0 and 1 included), on pools of 1, 2 and 32
//! (virtual, 16 nodes: the node cut) workers, and off any pool.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use proptest::prelude::*;
use zonal::prelude::*;
use zonal::runtime::{ThreadPool, ThreadPoolBuilder};

fn pool(k: usize) -> &'static ThreadPool {
    static POOLS: OnceLock<Vec<ThreadPool>> = OnceLock::new();
    let pools = POOLS.get_or_init(|| {
        [1u32, 2, 32]
            .iter()
            .map(|&n| {
                let b = ThreadPoolBuilder::new().preset("s1").no_policy();
                let b = if n < 32 { b.worker_cpus(0..n) } else { b };
                b.build().expect("a virtual pool")
            })
            .collect()
    });
    &pools[k]
}

/// Runs `f` on pool `k` (0, 1, 2), or on this thread (3).
fn on<R: Send>(k: usize, f: impl FnOnce() -> R + Send) -> R {
    if k == 3 {
        f()
    } else {
        pool(k).install(f)
    }
}

fn pools() -> impl Strategy<Value = usize> {
    0usize..4
}

fn vec_i32() -> impl Strategy<Value = Vec<i32>> {
    prop_oneof![
        proptest::collection::vec(any::<i32>(), 0..3),
        proptest::collection::vec(-1000i32..1000, 0..3000),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn adaptors_agree(v in vec_i32(), w in vec_i32(), k in pools(), min in 1usize..50, max in 1usize..50, size in 1usize..20) {
        let got = on(k, || {
            (
                v.par_iter().map(|x| i64::from(*x) * 3).collect::<Vec<_>>(),
                v.par_iter().filter(|x| **x % 3 == 0).cloned().collect::<Vec<_>>(),
                v.par_iter().filter_map(|x| (x % 2 == 0).then_some(x / 2)).collect::<Vec<_>>(),
                v.par_iter().flat_map(|x| vec![*x; (x.unsigned_abs() % 3) as usize]).collect::<Vec<_>>(),
                v.par_iter().flat_map_iter(|x| 0..(x.unsigned_abs() % 4)).collect::<Vec<_>>(),
                v.par_iter().copied().enumerate().collect::<Vec<_>>(),
                v.par_iter().zip(w.par_iter()).map(|(a, b)| (*a, *b)).collect::<Vec<_>>(),
                v.par_iter().chain(w.par_iter()).copied().collect::<Vec<_>>(),
                v.par_iter().copied().filter(|x| *x > 0).chain(w.par_iter().copied()).collect::<Vec<_>>(),
                v.par_iter().with_min_len(min).copied().collect::<Vec<_>>(),
                v.par_iter().with_max_len(max).copied().collect::<Vec<_>>(),
                v.par_iter().copied().chunks(size).collect::<Vec<_>>(),
            )
        });
        prop_assert_eq!(got.0, v.iter().map(|x| i64::from(*x) * 3).collect::<Vec<_>>());
        prop_assert_eq!(got.1, v.iter().filter(|x| **x % 3 == 0).cloned().collect::<Vec<_>>());
        prop_assert_eq!(got.2, v.iter().filter_map(|x| (x % 2 == 0).then_some(x / 2)).collect::<Vec<_>>());
        prop_assert_eq!(got.3, v.iter().flat_map(|x| vec![*x; (x.unsigned_abs() % 3) as usize]).collect::<Vec<_>>());
        prop_assert_eq!(got.4, v.iter().flat_map(|x| 0..(x.unsigned_abs() % 4)).collect::<Vec<_>>());
        prop_assert_eq!(got.5, v.iter().copied().enumerate().collect::<Vec<_>>());
        prop_assert_eq!(got.6, v.iter().copied().zip(w.iter().copied()).collect::<Vec<_>>());
        prop_assert_eq!(got.7, v.iter().chain(&w).copied().collect::<Vec<_>>());
        prop_assert_eq!(got.8, v.iter().copied().filter(|x| *x > 0).chain(w.iter().copied()).collect::<Vec<_>>());
        prop_assert_eq!(&got.9, &v);
        prop_assert_eq!(&got.10, &v);
        prop_assert_eq!(got.11, v.chunks(size).map(<[i32]>::to_vec).collect::<Vec<_>>());
    }

    #[test]
    fn inspect_sees_every_item(v in vec_i32(), k in pools()) {
        let seen = AtomicUsize::new(0);
        let n = on(k, || v.par_iter().inspect(|_| { seen.fetch_add(1, Ordering::Relaxed); }).count());
        prop_assert_eq!(n, v.len());
        prop_assert_eq!(seen.into_inner(), v.len());
    }

    #[test]
    fn piece_lengths_obey_min_and_max(n in 0usize..5000, k in pools(), min in 1usize..300, max in 1usize..300) {
        let pieces: Vec<usize> = on(k, || (0..n).into_par_iter().with_min_len(min).fold(|| 0usize, |a, _| a + 1).collect());
        prop_assert_eq!(pieces.iter().sum::<usize>(), n);
        if n >= min {
            prop_assert!(pieces.iter().all(|&p| p >= min), "{pieces:?}");
        }
        let pieces: Vec<usize> = on(k, || (0..n).into_par_iter().with_max_len(max).fold(|| 0usize, |a, _| a + 1).collect());
        prop_assert_eq!(pieces.iter().sum::<usize>(), n);
        prop_assert!(pieces.iter().all(|&p| p <= max), "{pieces:?}");
    }

    #[test]
    fn consumers_agree(v in vec_i32(), k in pools(), t in -1000i32..1000) {
        let w: Vec<u64> = v.iter().map(|x| u64::from(x.unsigned_abs() % 5)).collect();
        let got = on(k, || {
            (
                v.par_iter().map(|x| i64::from(*x)).sum::<i64>(),
                w.par_iter().take_product(),
                v.par_iter().map(|x| i64::from(*x)).reduce(|| 0, |a, b| a + b),
                v.par_iter().map(|x| i64::from(*x)).fold(|| 0i64, |a, b| a + b).sum::<i64>(),
                v.par_iter().filter(|x| **x > t).count(),
                (v.par_iter().min(), v.par_iter().max()),
                (v.par_iter().copied().enumerate().min_by_key(|p| p.1 % 7), v.par_iter().copied().enumerate().max_by_key(|p| p.1 % 7)),
                (v.par_iter().copied().enumerate().min_by(|a, b| (a.1 / 10).cmp(&(b.1 / 10))), v.par_iter().copied().enumerate().max_by(|a, b| (a.1 / 10).cmp(&(b.1 / 10)))),
                (v.par_iter().any(|x| *x == t), v.par_iter().all(|x| *x != t), v.par_iter().all(|x| *x < 1000)),
                v.par_iter().copied().enumerate().find_first(|p| p.1 > t),
                v.par_iter().position_first(|x| *x > t),
                v.par_iter().copied().find_any(|x| *x > t),
                v.par_iter().position_any(|x| *x > t),
                v.par_iter().copied().reduce_with(i32::max),
            )
        });
        prop_assert_eq!(got.0, v.iter().map(|x| i64::from(*x)).sum::<i64>());
        prop_assert_eq!(got.1, w.iter().fold(1u64, |a, b| a.wrapping_mul(*b)));
        prop_assert_eq!(got.2, got.0);
        prop_assert_eq!(got.3, got.0);
        prop_assert_eq!(got.4, v.iter().filter(|x| **x > t).count());
        prop_assert_eq!(got.5, (v.iter().min(), v.iter().max()));
        prop_assert_eq!(got.6, (v.iter().copied().enumerate().min_by_key(|p| p.1 % 7), v.iter().copied().enumerate().max_by_key(|p| p.1 % 7)));
        prop_assert_eq!(got.7, (v.iter().copied().enumerate().min_by(|a, b| (a.1 / 10).cmp(&(b.1 / 10))), v.iter().copied().enumerate().max_by(|a, b| (a.1 / 10).cmp(&(b.1 / 10)))));
        prop_assert_eq!(got.8, (v.contains(&t), !v.contains(&t), v.iter().all(|x| *x < 1000)));
        let first = v.iter().position(|x| *x > t);
        prop_assert_eq!(got.9, first.map(|i| (i, v[i])));
        prop_assert_eq!(got.10, first);
        prop_assert_eq!(got.11.is_some(), first.is_some());
        if let Some(x) = got.11 { prop_assert!(x > t); }
        match got.12 { Some(i) => prop_assert!(v[i] > t), None => prop_assert!(first.is_none()) }
        prop_assert_eq!(got.13, v.iter().copied().max());
    }

    #[test]
    fn collections_agree(v in vec_i32(), k in pools()) {
        let got = on(k, || {
            let pairs: Vec<(i32, usize)> = v.par_iter().copied().enumerate().map(|(i, x)| (x % 50, i)).collect();
            (
                pairs.par_iter().copied().collect::<HashMap<i32, usize>>(),
                v.par_iter().map(|x| x % 17).collect::<HashSet<i32>>(),
                pairs.par_iter().copied().collect::<BTreeMap<i32, usize>>(),
                v.par_iter().map(|x| char::from(b'a' + (x.unsigned_abs() % 26) as u8)).collect::<String>(),
                v.par_iter().map(|x| x.to_string()).collect::<String>(),
                v.par_iter().map(|x| if *x > 0 { "+" } else { "-" }).collect::<String>(),
                v.par_iter().map(|x| (*x, i64::from(*x) * 2)).unzip::<_, _, Vec<i32>, Vec<i64>>(),
            )
        });
        let pairs: Vec<(i32, usize)> = v.iter().copied().enumerate().map(|(i, x)| (x % 50, i)).collect();
        prop_assert_eq!(got.0, pairs.iter().copied().collect::<HashMap<_, _>>());
        prop_assert_eq!(got.1, v.iter().map(|x| x % 17).collect::<HashSet<_>>());
        prop_assert_eq!(got.2, pairs.iter().copied().collect::<BTreeMap<_, _>>());
        prop_assert_eq!(got.3, v.iter().map(|x| char::from(b'a' + (x.unsigned_abs() % 26) as u8)).collect::<String>());
        prop_assert_eq!(got.4, v.iter().map(|x| x.to_string()).collect::<String>());
        prop_assert_eq!(got.5, v.iter().map(|x| if *x > 0 { "+" } else { "-" }).collect::<String>());
        prop_assert_eq!(got.6, v.iter().map(|x| (*x, i64::from(*x) * 2)).unzip::<_, _, Vec<i32>, Vec<i64>>());
    }

    #[test]
    fn sources_agree(v in vec_i32(), k in pools()) {
        let set: HashSet<i32> = v.iter().copied().collect();
        let map: BTreeMap<i32, i32> = v.iter().map(|x| (*x, x / 2)).collect();
        let got = on(k, || {
            let mut owned = v.clone();
            owned.par_iter_mut().for_each(|x| *x = x.wrapping_mul(3));
            (
                v.clone().into_par_iter().map(|x| x / 3).collect::<Vec<_>>(),
                owned,
                set.clone().into_par_iter().collect::<HashSet<_>>(),
                set.par_iter().map(|x| i64::from(*x)).sum::<i64>(),
                map.par_iter().map(|(a, b)| (*a, *b)).collect::<Vec<_>>(),
                map.clone().into_par_iter().collect::<BTreeMap<_, _>>(),
                v.first().copied().into_par_iter().collect::<Vec<_>>(),
                v.last().into_par_iter().count(),
            )
        });
        prop_assert_eq!(got.0, v.iter().map(|x| x / 3).collect::<Vec<_>>());
        prop_assert_eq!(got.1, v.iter().map(|x| x.wrapping_mul(3)).collect::<Vec<_>>());
        prop_assert_eq!(&got.2, &set);
        prop_assert_eq!(got.3, set.iter().map(|x| i64::from(*x)).sum::<i64>());
        prop_assert_eq!(got.4, map.iter().map(|(a, b)| (*a, *b)).collect::<Vec<_>>());
        prop_assert_eq!(&got.5, &map);
        prop_assert_eq!(got.6, v.first().copied().into_iter().collect::<Vec<_>>());
        prop_assert_eq!(got.7, usize::from(!v.is_empty()));
    }

    #[test]
    fn slices_agree(v in vec_i32(), k in pools(), size in 1usize..40) {
        let got = on(k, || {
            let mut m = v.clone();
            m.par_chunks_mut(size).enumerate().for_each(|(i, c)| {
                let n = i32::try_from(c.len()).expect("small");
                for x in c.iter_mut() {
                    *x = i32::try_from(i).expect("small") * 1000 + n;
                }
            });
            (
                v.par_chunks(size).map(<[i32]>::to_vec).collect::<Vec<_>>(),
                m,
                v.par_windows(size).map(<[i32]>::to_vec).collect::<Vec<_>>(),
                v.par_chunks(size).len(),
                v.par_windows(size).len(),
            )
        });
        prop_assert_eq!(got.0, v.chunks(size).map(<[i32]>::to_vec).collect::<Vec<_>>());
        let want: Vec<i32> = v.chunks(size).enumerate().flat_map(|(i, c)| vec![i32::try_from(i).expect("small") * 1000 + i32::try_from(c.len()).expect("small"); c.len()]).collect();
        prop_assert_eq!(got.1, want);
        prop_assert_eq!(got.2, v.windows(size).map(<[i32]>::to_vec).collect::<Vec<_>>());
        prop_assert_eq!(got.3, v.chunks(size).len());
        prop_assert_eq!(got.4, v.windows(size).len());
    }

    #[test]
    fn ranges_agree(a in any::<i64>(), len in 0u64..3000, b in any::<u8>(), c in any::<u8>(), k in pools()) {
        let end = a.saturating_add(i64::try_from(len).expect("small"));
        let got = on(k, || {
            (
                (a..end).into_par_iter().map(i128::from).sum::<i128>(),
                (a..=end).into_par_iter().count(),
                (b..c).into_par_iter().collect::<Vec<u8>>(),
                (b..=c).into_par_iter().collect::<Vec<u8>>(),
                (i16::from(b) - 128..=i16::from(c)).into_par_iter().enumerate().map(|(i, x)| (i, x)).collect::<Vec<_>>(),
                (u32::from(b)..u32::from(c) * 7).into_par_iter().rev_free_sum(),
                (i32::from(b) - 200..=i32::from(c)).into_par_iter().collect::<Vec<i32>>(),
                (u128::from(c)..u128::from(c) + u128::from(len)).into_par_iter().find_first(|x| x % 13 == 12),
            )
        });
        prop_assert_eq!(got.0, (a..end).map(i128::from).sum::<i128>());
        prop_assert_eq!(got.1, (a..=end).count());
        prop_assert_eq!(got.2, (b..c).collect::<Vec<u8>>());
        prop_assert_eq!(got.3, (b..=c).collect::<Vec<u8>>());
        prop_assert_eq!(got.4, (i16::from(b) - 128..=i16::from(c)).enumerate().collect::<Vec<_>>());
        prop_assert_eq!(got.5, (u32::from(b)..u32::from(c) * 7).map(u64::from).sum::<u64>());
        prop_assert_eq!(got.6, (i32::from(b) - 200..=i32::from(c)).collect::<Vec<i32>>());
        prop_assert_eq!(got.7, (u128::from(c)..u128::from(c) + u128::from(len)).find(|x| x % 13 == 12));
    }
}

/// `product` of small numbers (wrapping) through the `Product` of `Wrapping`.
trait TakeProduct {
    fn take_product(self) -> u64;
}

impl<'a, I: ParallelIterator<Item = &'a u64>> TakeProduct for I {
    fn take_product(self) -> u64 {
        self.map(|x| std::num::Wrapping(*x))
            .product::<std::num::Wrapping<u64>>()
            .0
    }
}

/// The sum of a `u32` range as `u64`.
trait RevFreeSum {
    fn rev_free_sum(self) -> u64;
}

impl<I: ParallelIterator<Item = u32>> RevFreeSum for I {
    fn rev_free_sum(self) -> u64 {
        self.map(u64::from).sum()
    }
}

#[test]
fn edge_ranges() {
    for k in 0..4 {
        let got = on(k, || {
            (
                (u8::MIN..=u8::MAX)
                    .into_par_iter()
                    .map(u32::from)
                    .sum::<u32>(),
                (i8::MIN..=i8::MAX).into_par_iter().count(),
                (0u8..0).into_par_iter().count(),
                #[allow(clippy::reversed_empty_ranges)]
                (5i32..=4).into_par_iter().count(),
                (i64::MAX - 10..=i64::MAX)
                    .into_par_iter()
                    .collect::<Vec<_>>(),
                (i64::MAX - 10..i64::MAX).into_par_iter().count(),
                (u64::MAX - 3..=u64::MAX)
                    .into_par_iter()
                    .collect::<Vec<_>>(),
                (i128::MIN..i128::MIN + 5)
                    .into_par_iter()
                    .collect::<Vec<_>>(),
                (usize::MAX - 2..usize::MAX)
                    .into_par_iter()
                    .enumerate()
                    .collect::<Vec<_>>(),
                (isize::MIN..isize::MIN + 3).into_par_iter().len(),
                (u128::MAX - 1..=u128::MAX)
                    .into_par_iter()
                    .collect::<Vec<_>>(),
                (0u64..=u64::MAX).into_par_iter().find_first(|x| *x > 5),
                (i64::MIN..=i64::MAX)
                    .into_par_iter()
                    .any(|x| x == i64::MIN + 3),
            )
        });
        assert_eq!(got.0, 255 * 256 / 2);
        assert_eq!(got.1, 256);
        assert_eq!(got.2, 0);
        assert_eq!(got.3, 0);
        assert_eq!(got.4, (i64::MAX - 10..=i64::MAX).collect::<Vec<_>>());
        assert_eq!(got.5, 10);
        assert_eq!(got.6, (u64::MAX - 3..=u64::MAX).collect::<Vec<_>>());
        assert_eq!(got.7, (i128::MIN..i128::MIN + 5).collect::<Vec<_>>());
        assert_eq!(got.8, vec![(0, usize::MAX - 2), (1, usize::MAX - 1)]);
        assert_eq!(got.9, 3);
        assert_eq!(got.10, vec![u128::MAX - 1, u128::MAX]);
        assert_eq!(got.11, Some(6));
        assert!(got.12);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn extras_agree(v in vec_i32(), k in pools(), n in 0usize..3500, t in -1000i32..1000) {
        let nested: Vec<Vec<i32>> = v.chunks(7).map(<[i32]>::to_vec).collect();
        let got = on(k, || {
            let mut into = vec![1, 2, 3];
            v.par_iter().copied().skip(n / 2).collect_into_vec(&mut into);
            let pieces = AtomicUsize::new(0);
            let hits = AtomicUsize::new(0);
            v.par_iter().for_each_init(|| pieces.fetch_add(1, Ordering::Relaxed), |_, x| {
                if *x > t { hits.fetch_add(1, Ordering::Relaxed); }
            });
            (
                v.par_iter().map_with(10i64, |s, x| { *s += 1; i64::from(*x) + *s - *s }).collect::<Vec<_>>(),
                v.par_iter().map_init(|| 5i32, |s, x| x.wrapping_add(*s)).enumerate().collect::<Vec<_>>(),
                v.par_iter().try_for_each(|x| if *x > t { Err(*x) } else { Ok(()) }),
                nested.par_iter().flatten().copied().collect::<Vec<_>>(),
                nested.clone().into_par_iter().flatten_iter().collect::<Vec<_>>(),
                (v.par_iter().skip(n).copied().collect::<Vec<_>>(), v.par_iter().take(n).copied().collect::<Vec<_>>()),
                v.par_iter().copied().partition::<Vec<_>, Vec<_>, _>(|x| *x > t),
                v.par_iter().map(|x| if *x > t { Err(*x) } else { Ok(*x) }).collect::<Result<Vec<_>, _>>(),
                v.par_iter().map(|x| (*x <= t).then_some(*x)).collect::<Option<Vec<_>>>(),
                {
                    let mut b: Vec<i32> = v.iter().copied().par_bridge().map(|x| x / 2).collect();
                    b.sort_unstable();
                    b
                },
                into,
                v.par_iter().find_map_first(|x| (*x > t).then_some(x / 3)),
                hits.into_inner(),
                pieces.into_inner() >= usize::from(!v.is_empty()),
                v.par_iter().copied().enumerate().rev().collect::<Vec<_>>(),
                v.clone().into_par_iter().zip(0..v.len()).rev().skip(n / 3).map(|p| p.0).chunks(3).rev().collect::<Vec<_>>(),
                (0..n).into_par_iter().rev().with_max_len(7).map(|i| i * 2).collect::<Vec<_>>(),
                v.par_chunks(5).rev().map(<[i32]>::to_vec).collect::<Vec<_>>(),
            )
        });
        prop_assert_eq!(got.0, v.iter().map(|x| i64::from(*x)).collect::<Vec<_>>());
        prop_assert_eq!(got.1, v.iter().map(|x| x.wrapping_add(5)).enumerate().collect::<Vec<_>>());
        match got.2 {
            Ok(()) => prop_assert!(v.iter().all(|x| *x <= t)),
            Err(x) => prop_assert!(x > t && v.contains(&x)),
        }
        prop_assert_eq!(&got.3, &v);
        prop_assert_eq!(&got.4, &v);
        prop_assert_eq!(got.5, (v.iter().skip(n).copied().collect::<Vec<_>>(), v.iter().take(n).copied().collect::<Vec<_>>()));
        prop_assert_eq!(got.6, v.iter().copied().partition::<Vec<_>, _>(|x| *x > t));
        match got.7 {
            Ok(all) => prop_assert_eq!(&all, &v),
            Err(x) => prop_assert!(x > t && v.contains(&x)),
        }
        prop_assert_eq!(got.8, v.iter().map(|x| (*x <= t).then_some(*x)).collect::<Option<Vec<_>>>());
        let mut halves: Vec<i32> = v.iter().map(|x| x / 2).collect();
        halves.sort_unstable();
        prop_assert_eq!(got.9, halves);
        prop_assert_eq!(got.10, v.iter().copied().skip(n / 2).collect::<Vec<_>>());
        prop_assert_eq!(got.11, v.iter().find_map(|x| (*x > t).then_some(x / 3)));
        prop_assert_eq!(got.12, v.iter().filter(|x| **x > t).count());
        prop_assert!(got.13);
        prop_assert_eq!(got.14, v.iter().copied().enumerate().rev().collect::<Vec<_>>());
        let back: Vec<i32> = v.iter().copied().rev().skip(n / 3).collect();
        let mut want: Vec<Vec<i32>> = back.chunks(3).map(<[i32]>::to_vec).collect();
        want.reverse();
        prop_assert_eq!(got.15, want);
        prop_assert_eq!(got.16, (0..n).rev().map(|i| i * 2).collect::<Vec<_>>());
        prop_assert_eq!(got.17, v.chunks(5).rev().map(<[i32]>::to_vec).collect::<Vec<_>>());
    }
}

// --- rayon's further adaptors and consumers ------------------------------------------------------

/// A producer callback that splits a producer of `len` items at `at` (clamped) and collects
/// the left part forward and the right part backward (reversed back): checks `split_at`, both
/// ends of the sequential iterators and their exact sizes. As in rayon, the length comes
/// from the iterator, not from the producer ([`split_check`]).
struct SplitCheck {
    at: usize,
    len: usize,
}

impl<T> zonal::iter::plumbing::ProducerCallback<T> for SplitCheck {
    type Output = Vec<T>;
    fn callback<P: zonal::iter::plumbing::Producer<Item = T>>(self, p: P) -> Vec<T> {
        let len = self.len;
        let at = self.at.min(len);
        let (a, b) = p.split_at(at);
        let (a, b) = (a.into_iter(), b.into_iter());
        assert_eq!(a.size_hint(), (at, Some(at)));
        assert_eq!(b.size_hint(), (len - at, Some(len - at)));
        assert_eq!((a.len(), b.len()), (at, len - at));
        let mut out: Vec<T> = a.collect();
        let mut back: Vec<T> = b.rev().collect();
        back.reverse();
        out.append(&mut back);
        out
    }
}

/// Runs [`SplitCheck`] on `iter`'s producer, split at `at`.
fn split_check<I: IndexedParallelIterator>(iter: I, at: usize) -> Vec<I::Item> {
    let len = iter.len();
    iter.with_producer(SplitCheck { at, len })
}

fn interleave_seq(a: &[i32], b: &[i32]) -> Vec<i32> {
    let mut out = Vec::new();
    let (mut i, mut j) = (a.iter(), b.iter());
    loop {
        match (i.next(), j.next()) {
            (None, None) => return out,
            (x, y) => out.extend(x.into_iter().chain(y).copied()),
        }
    }
}

fn intersperse_seq(a: &[i32], sep: i32) -> Vec<i32> {
    let mut out = Vec::new();
    for (k, x) in a.iter().enumerate() {
        if k > 0 {
            out.push(sep);
        }
        out.push(*x);
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn indexed_adaptors_agree(v in vec_i32(), w in vec_i32(), k in pools(), step in 1usize..9, size in 1usize..20) {
        let short = w.len().min(v.len());
        let got = on(k, || {
            (
                v.par_iter().copied().interleave(w.par_iter().copied()).collect::<Vec<_>>(),
                v.par_iter().copied().interleave_shortest(w.par_iter().copied()).collect::<Vec<_>>(),
                v.par_iter().copied().intersperse(7).collect::<Vec<_>>(),
                v.par_iter().copied().step_by(step).collect::<Vec<_>>(),
                v.par_iter().fold_chunks(size, || 0i64, |a, x| a + i64::from(*x)).collect::<Vec<_>>(),
                v.par_iter().fold_chunks_with(size, Vec::new(), |mut a, x| { a.push(*x); a }).collect::<Vec<_>>(),
                v.par_iter().positions(|x| x % 3 == 0).collect::<Vec<_>>(),
                v[..short].par_iter().zip_eq(&w[..short]).map(|(a, b)| a ^ b).collect::<Vec<_>>(),
                v.par_iter().copied().update(|x| *x /= 2).collect::<Vec<_>>(),
                v.par_iter().copied().interleave(w.par_iter().copied()).rev().collect::<Vec<_>>(),
                v.par_iter().copied().intersperse(-7).step_by(step).rev().collect::<Vec<_>>(),
                v.par_iter().copied().by_uniform_blocks(size).collect::<Vec<_>>(),
                v.par_iter().copied().by_exponential_blocks().collect::<Vec<_>>(),
            )
        });
        let ileave = interleave_seq(&v, &w);
        prop_assert_eq!(&got.0, &ileave);
        let n_short = if v.len() <= w.len() { 2 * v.len() } else { 2 * w.len() + 1 };
        prop_assert_eq!(&got.1[..], &ileave[..n_short]);
        prop_assert_eq!(&got.2, &intersperse_seq(&v, 7));
        prop_assert_eq!(&got.3, &v.iter().copied().step_by(step).collect::<Vec<_>>());
        prop_assert_eq!(&got.4, &v.chunks(size).map(|c| c.iter().map(|&x| i64::from(x)).sum::<i64>()).collect::<Vec<_>>());
        prop_assert_eq!(&got.5, &v.chunks(size).map(<[i32]>::to_vec).collect::<Vec<_>>());
        prop_assert_eq!(&got.6, &v.iter().enumerate().filter(|(_, x)| *x % 3 == 0).map(|(i, _)| i).collect::<Vec<_>>());
        prop_assert_eq!(&got.7, &v.iter().zip(&w).map(|(a, b)| a ^ b).collect::<Vec<_>>());
        prop_assert_eq!(&got.8, &v.iter().map(|x| x / 2).collect::<Vec<_>>());
        prop_assert_eq!(&got.9, &ileave.iter().rev().copied().collect::<Vec<_>>());
        prop_assert_eq!(&got.10, &intersperse_seq(&v, -7).into_iter().step_by(step).rev().collect::<Vec<_>>());
        prop_assert_eq!(&got.11, &v);
        prop_assert_eq!(&got.12, &v);
    }

    #[test]
    fn indexed_adaptors_split_anywhere(v in proptest::collection::vec(-50i32..50, 0..40), w in proptest::collection::vec(-50i32..50, 0..40), at in 0usize..90, step in 1usize..5, size in 1usize..6) {
        let p = |x: &i32| x % 2 == 0;
        prop_assert_eq!(split_check(v.par_iter().copied().interleave(w.par_iter().copied()), at), interleave_seq(&v, &w));
        prop_assert_eq!(split_check(v.par_iter().copied().intersperse(0), at), intersperse_seq(&v, 0));
        prop_assert_eq!(split_check(v.par_iter().copied().step_by(step), at), v.iter().copied().step_by(step).collect::<Vec<_>>());
        prop_assert_eq!(split_check(v.par_iter().fold_chunks(size, || 0, |a, x| a + x), at), v.chunks(size).map(|c| c.iter().sum::<i32>()).collect::<Vec<_>>());
        prop_assert_eq!(split_check(v.par_iter().chain(&w).copied(), at), v.iter().chain(&w).copied().collect::<Vec<_>>());
        prop_assert_eq!(split_check(v.par_iter().copied().panic_fuse().enumerate(), at), v.iter().copied().enumerate().collect::<Vec<_>>());
        prop_assert_eq!(v.par_iter().copied().filter(p).count(), v.iter().copied().filter(p).count());
    }

    #[test]
    fn new_consumers_agree(v in vec_i32(), w in vec_i32(), k in pools(), t in -1000i32..1000, n in 0usize..3500) {
        let got = on(k, || {
            (
                v.par_iter().find_last(|x| **x < t).copied(),
                v.par_iter().find_map_last(|x| (*x > t).then_some(x / 2)),
                v.par_iter().position_last(|x| *x == t),
                v.par_iter().fold_with(0i64, |a, x| a + i64::from(*x)).sum::<i64>(),
                v.par_iter().map(|&x| Some(i64::from(x))).try_reduce(|| 0, |a, b| Some(a + b)),
                v.par_iter().map(|&x| if x < t { Ok(x) } else { Err(x) }).try_reduce(|| 0, |a, b| Ok(a.max(b))),
                v.par_iter().try_fold(|| 0i64, |a, &x| (x != t).then_some(a + i64::from(x))).try_reduce_with(|a, b| Some(a + b)),
                v.par_iter().try_for_each(|&x| if x == t { Err(x) } else { Ok(()) }),
                v.par_iter().copied().partition_map::<Vec<_>, Vec<_>, _, _, _>(|x| if x < t { zonal::iter::Either::Left(x) } else { zonal::iter::Either::Right(i64::from(x)) }),
                v.par_iter().copied().map(|x| (x, -x)).unzip::<_, _, Vec<_>, Vec<_>>(),
                v.par_iter().copied().collect_vec_list().into_iter().flatten().collect::<Vec<_>>(),
                v.par_iter().copied().take_any(n).count(),
                v.par_iter().copied().skip_any(n).count(),
                v.par_iter().copied().cmp(w.par_iter().copied()),
                v.par_iter().eq(&w[..]),
                v.par_iter().lt(&w[..]),
                v.par_iter().copied().take_any_while(|&x| x != t).collect::<Vec<_>>(),
                v.par_iter().map(|&x| (x != t).then_some(x)).while_some().collect::<Vec<_>>(),
            )
        });
        prop_assert_eq!(got.0, v.iter().rev().find(|x| **x < t).copied());
        prop_assert_eq!(got.1, v.iter().rev().find_map(|x| (*x > t).then_some(x / 2)));
        prop_assert_eq!(got.2, v.iter().rposition(|x| *x == t));
        let sum: i64 = v.iter().map(|&x| i64::from(x)).sum();
        prop_assert_eq!(got.3, sum);
        prop_assert_eq!(got.4, Some(sum));
        match got.5 {
            Ok(m) => { prop_assert!(v.iter().all(|&x| x < t)); prop_assert_eq!(m, v.iter().copied().max().unwrap_or(0).max(0)); }
            Err(e) => prop_assert!(e >= t && v.contains(&e)),
        }
        if v.contains(&t) { prop_assert_eq!(got.6, Some(None)); } else if !v.is_empty() { prop_assert_eq!(got.6, Some(Some(sum))); }
        prop_assert_eq!(got.7.is_err(), v.contains(&t));
        let (lo, hi): (Vec<i32>, Vec<i32>) = v.iter().partition(|&&x| x < t);
        prop_assert_eq!(got.8, (lo, hi.iter().map(|&x| i64::from(x)).collect::<Vec<_>>()));
        prop_assert_eq!(got.9, (v.clone(), v.iter().map(|x| -x).collect::<Vec<_>>()));
        prop_assert_eq!(&got.10, &v);
        prop_assert_eq!(got.11, n.min(v.len()));
        prop_assert_eq!(got.12, v.len().saturating_sub(n));
        prop_assert_eq!(got.13, v.iter().cmp(w.iter()));
        prop_assert_eq!(got.14, v == w);
        prop_assert_eq!(got.15, v.iter().lt(w.iter()));
        // Taken items: in order, none equal to `t`, a subsequence of v's prefix before `t`
        // (the pieces after the first `t` may have taken theirs before it was seen).
        prop_assert!(!got.16.contains(&t));
        let mut it = v.iter();
        prop_assert!(got.16.iter().all(|x| it.any(|y| y == x)));
        prop_assert!(!got.17.contains(&t));
        if !v.contains(&t) { prop_assert_eq!(&got.16, &v); prop_assert_eq!(&got.17, &v); }
    }

    #[test]
    fn take_any_keeps_a_subsequence(v in vec_i32(), k in pools(), n in 0usize..3500) {
        let (taken, skipped) = on(k, || {
            (
                v.par_iter().copied().enumerate().take_any(n).collect::<Vec<_>>(),
                v.par_iter().copied().enumerate().skip_any(n).collect::<Vec<_>>(),
            )
        });
        prop_assert_eq!(taken.len(), n.min(v.len()));
        prop_assert_eq!(skipped.len(), v.len().saturating_sub(n));
        prop_assert!(taken.windows(2).all(|p| p[0].0 < p[1].0));
        prop_assert!(skipped.windows(2).all(|p| p[0].0 < p[1].0));
        prop_assert!(taken.iter().chain(&skipped).all(|&(i, x)| v[i] == x));
    }
}
