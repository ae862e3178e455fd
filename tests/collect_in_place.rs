//! Collecting into a `Vec` (and `par_extend`, `collect_into_vec`) writes in place for
//! iterators of known length: the results equal std's for every indexed adaptor chain (and
//! the unindexed ones, which keep the gathering path), on pools of 1, 2, 16 and 32 (virtual,
//! 16 nodes: the node cut) workers; a panic mid-collect drops every made item once.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use proptest::prelude::*;
use zonal::prelude::*;
use zonal::runtime::{ThreadPool, ThreadPoolBuilder};

fn pool(k: usize) -> &'static ThreadPool {
    static POOLS: OnceLock<Vec<ThreadPool>> = OnceLock::new();
    let pools = POOLS.get_or_init(|| {
        let virt = |n: u32| {
            let b = ThreadPoolBuilder::new().preset("s1").no_policy();
            let b = if n < 32 { b.worker_cpus(0..n) } else { b };
            b.build().expect("a virtual pool")
        };
        vec![
            virt(1),
            virt(2),
            ThreadPoolBuilder::new()
                .num_threads(16)
                .build()
                .expect("sixteen logical workers"),
            virt(32),
        ]
    });
    &pools[k]
}

/// Runs `f` on pool `k` (0..4), or on this thread (4).
fn on<R: Send>(k: usize, f: impl FnOnce() -> R + Send) -> R {
    if k == 4 {
        f()
    } else {
        pool(k).install(f)
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    #[test]
    fn indexed_collects_equal_std(
        v in proptest::collection::vec(any::<u32>(), 0..3_000),
        w in proptest::collection::vec(any::<u32>(), 0..3_000),
        k in 0usize..5,
        n in 0usize..4_000,
        step in 1usize..9,
    ) {
        on(k, || -> Result<(), TestCaseError> {
            let got: Vec<u64> = v.par_iter().map(|&x| u64::from(x) * 3).collect();
            let want: Vec<u64> = v.iter().map(|&x| u64::from(x) * 3).collect();
            prop_assert_eq!(got, want);

            let got: Vec<(usize, u32)> = v.par_iter().copied().enumerate().rev().collect();
            let want: Vec<(usize, u32)> = v.iter().copied().enumerate().rev().collect();
            prop_assert_eq!(got, want);

            let got: Vec<(u32, u32)> = v.par_iter().copied().zip(w.par_iter().copied()).collect();
            let want: Vec<(u32, u32)> = v.iter().copied().zip(w.iter().copied()).collect();
            prop_assert_eq!(got, want);

            let got: Vec<u32> = v.par_iter().chain(w.par_iter()).copied().skip(n / 2).take(n).collect();
            let want: Vec<u32> = v.iter().chain(w.iter()).copied().skip(n / 2).take(n).collect();
            prop_assert_eq!(got, want);

            let got: Vec<u32> = v.par_iter().copied().step_by(step).collect();
            let want: Vec<u32> = v.iter().copied().step_by(step).collect();
            prop_assert_eq!(got, want);

            let got: Vec<Vec<u32>> = v.par_iter().copied().chunks(step).collect();
            let want: Vec<Vec<u32>> = v.chunks(step).map(<[u32]>::to_vec).collect();
            prop_assert_eq!(got, want);

            let got: Vec<u32> = v.par_iter().copied().intersperse(7).collect();
            let mut want = Vec::new();
            for (i, &x) in v.iter().enumerate() {
                if i > 0 {
                    want.push(7);
                }
                want.push(x);
            }
            prop_assert_eq!(got, want);

            let got: Vec<u32> = v.par_iter().copied().interleave(w.par_iter().copied()).collect();
            let mut want: Vec<u32> = Vec::new();
            for i in 0..v.len().max(w.len()) {
                want.extend(v.get(i));
                want.extend(w.get(i));
            }
            prop_assert_eq!(got, want);

            let got: Vec<u32> = v.par_iter().copied().with_min_len(step * 100).map(|x| x ^ 1).collect();
            let want: Vec<u32> = v.iter().map(|&x| x ^ 1).collect();
            prop_assert_eq!(got, want);

            let got: Vec<u32> = v.par_iter().copied().with_max_len(step).collect();
            prop_assert_eq!(&got, &v);

            let got: Vec<usize> = (0..n).into_par_iter().rev().collect();
            let want: Vec<usize> = (0..n).rev().collect();
            prop_assert_eq!(got, want);

            let got: Vec<String> = v.clone().into_par_iter().map(|x| x.to_string()).collect();
            let want: Vec<String> = v.iter().map(|x| x.to_string()).collect();
            prop_assert_eq!(got, want);

            let got: Box<[u32]> = w.par_iter().copied().collect();
            prop_assert_eq!(&got[..], &w[..]);
            Ok(())
        })?;
    }

    #[test]
    fn extends_and_unindexed_collects_equal_std(
        v in proptest::collection::vec(any::<u16>(), 0..3_000),
        prefix in proptest::collection::vec(any::<u16>(), 0..20),
        k in 0usize..5,
    ) {
        on(k, || -> Result<(), TestCaseError> {
            // `par_extend` after existing items, by value and by reference.
            let mut got = prefix.clone();
            got.par_extend(v.par_iter().map(|&x| x.wrapping_mul(5)));
            let mut want = prefix.clone();
            want.extend(v.iter().map(|&x| x.wrapping_mul(5)));
            prop_assert_eq!(&got, &want);

            let mut got = prefix.clone();
            got.par_extend(&v);
            let mut want = prefix.clone();
            want.extend(&v);
            prop_assert_eq!(&got, &want);

            // `collect_into_vec` clears first; `unzip` keeps working.
            let mut target = prefix.clone();
            v.par_iter().map(|&x| x / 2).collect_into_vec(&mut target);
            let want: Vec<u16> = v.iter().map(|&x| x / 2).collect();
            prop_assert_eq!(&target, &want);
            let (a, b): (Vec<u16>, Vec<usize>) = v.par_iter().map(|&x| (x, x as usize)).unzip();
            prop_assert_eq!(&a, &v);
            prop_assert!(b.iter().map(|&x| x as u16).eq(v.iter().copied()));

            // Unindexed: the gathering path.
            let got: Vec<u16> = v.par_iter().copied().filter(|x| x % 3 == 0).collect();
            let want: Vec<u16> = v.iter().copied().filter(|x| x % 3 == 0).collect();
            prop_assert_eq!(got, want);
            let got: Vec<u16> = v.par_iter().flat_map_iter(|&x| [x, x]).collect();
            let want: Vec<u16> = v.iter().flat_map(|&x| [x, x]).collect();
            prop_assert_eq!(got, want);
            // An unindexed side of a chain: the indexed side is split off without an index.
            let got: Vec<u16> = v
                .par_iter()
                .copied()
                .filter(|x| x % 2 == 0)
                .chain(v.par_iter().copied())
                .collect();
            let want: Vec<u16> = v
                .iter()
                .copied()
                .filter(|x| x % 2 == 0)
                .chain(v.iter().copied())
                .collect();
            prop_assert_eq!(got, want);
            Ok(())
        })?;
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
fn a_panic_mid_collect_leaks_nothing_and_drops_nothing_twice() {
    let n = 50_000;
    for k in 0..4 {
        for bad in [0, n / 2, n - 1] {
            let drops: Arc<Vec<AtomicUsize>> =
                Arc::new((0..n).map(|_| AtomicUsize::new(0)).collect());
            let made = AtomicUsize::new(0);
            let mut existing: Vec<Counted> = Vec::new();
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                on(k, || {
                    let items = (0..n).into_par_iter().map(|id| {
                        assert!(id != bad, "item {bad} fails");
                        made.fetch_add(1, Ordering::Relaxed);
                        Counted {
                            id,
                            drops: Arc::clone(&drops),
                        }
                    });
                    if bad == n / 2 {
                        existing.par_extend(items);
                    } else {
                        let v: Vec<Counted> = items.collect();
                        drop(v);
                    }
                })
            }));
            assert!(r.is_err(), "the panic reaches the caller");
            assert!(existing.is_empty(), "the target's length is untouched");
            let made = made.into_inner();
            let dropped: usize = drops.iter().map(|d| d.load(Ordering::Relaxed)).sum();
            assert_eq!(
                dropped, made,
                "every made item dropped (pool {k}, item {bad})"
            );
            assert!(
                drops.iter().all(|d| d.load(Ordering::Relaxed) <= 1),
                "no item dropped twice (pool {k}, item {bad})"
            );
        }
    }
}
