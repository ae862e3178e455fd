//! The parallel sorts agree with std's: the same order (stable ones keep equal elements in
//! place), for random inputs, lengths and pools; a panicking comparison reaches the caller
//! and leaves a permutation.

use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::prelude::*;
use zonal::runtime::{ThreadPool, ThreadPoolBuilder};
use zonal::slice::ParallelSliceMut;

fn pool(workers: usize) -> ThreadPool {
    let b = ThreadPoolBuilder::new().preset("s1").no_policy();
    let b = if workers < 32 {
        b.worker_cpus(0..u32::try_from(workers).expect("small"))
    } else {
        b
    };
    b.build().expect("a virtual pool")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn sorts_agree_with_std(
        v in proptest::collection::vec((0u8..16, any::<u16>()), 0..20_000),
        workers in prop_oneof![Just(1usize), Just(2), Just(32)],
    ) {
        let pool = pool(workers);
        // Stable, by key: equal keys keep their order.
        let mut want = v.clone();
        want.sort_by_key(|p| p.0);
        let mut got = v.clone();
        pool.install(|| got.par_sort_by_key(|p| p.0));
        prop_assert_eq!(&got, &want);
        // Stable, by full order; and by a comparison.
        let mut want = v.clone();
        want.sort();
        let mut got = v.clone();
        pool.install(|| got.par_sort());
        prop_assert_eq!(&got, &want);
        let mut got = v.clone();
        pool.install(|| got.par_sort_by(|a, b| b.cmp(a)));
        want.reverse();
        prop_assert_eq!(&got, &want);
        // Unstable: the same multiset in order.
        let mut want = v.clone();
        want.sort_unstable();
        let mut got = v.clone();
        pool.install(|| got.par_sort_unstable());
        prop_assert_eq!(&got, &want);
        let mut got: Vec<u8> = v.iter().map(|p| p.0).collect();
        pool.install(|| got.par_sort_unstable_by_key(|&k| std::cmp::Reverse(k)));
        prop_assert!(got.windows(2).all(|w| w[0] >= w[1]));
        let mut got = v.clone();
        pool.install(|| got.par_sort_unstable_by(|a, b| a.1.cmp(&b.1)));
        prop_assert!(got.windows(2).all(|w| w[0].1 <= w[1].1));
    }
}

#[test]
fn adversarial_inputs_sort() {
    let pool = pool(2);
    for v in [
        vec![7u32; 100_000],
        (0..100_000).collect(),
        (0..100_000).rev().collect(),
        (0..100_000).map(|i| i % 2).collect::<Vec<u32>>(),
        (0..100_000)
            .map(|i| if i < 50_000 { i } else { 100_000 - i })
            .collect(),
    ] {
        let mut want = v.clone();
        want.sort_unstable();
        let mut a = v.clone();
        pool.install(|| a.par_sort_unstable());
        assert_eq!(a, want);
        let mut b = v;
        pool.install(|| b.par_sort());
        assert_eq!(b, want);
    }
}

#[test]
fn a_panicking_comparison_reaches_the_caller_and_loses_nothing() {
    let pool = pool(2);
    let v: Vec<u32> = (0..50_000).map(|i| (i * 7_919) % 50_021).collect();
    for stable in [true, false] {
        let calls = AtomicUsize::new(0);
        let mut w = v.clone();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            pool.install(|| {
                let cmp = |a: &u32, b: &u32| {
                    if calls.fetch_add(1, Ordering::Relaxed) == 100_000 {
                        panic!("comparison failed");
                    }
                    a.cmp(b)
                };
                if stable {
                    w.par_sort_by(cmp);
                } else {
                    w.par_sort_unstable_by(cmp);
                }
            });
        }));
        assert!(r.is_err(), "the panic reached the caller");
        let (mut a, mut b) = (v.clone(), w);
        a.sort_unstable();
        b.sort_unstable();
        assert_eq!(a, b, "still a permutation (stable: {stable})");
    }
}

/// A 16-worker pool of logical workers (unpinned: any machine has them).
fn sixteen() -> ThreadPool {
    ThreadPoolBuilder::new()
        .num_threads(16)
        .build()
        .expect("sixteen logical workers")
}

#[test]
fn stable_on_sixteen_workers() {
    let pool = sixteen();
    // Few keys, many equal elements: every merge meets ties across its runs.
    for (len, keys) in [(300_000usize, 3u32), (100_000, 1_000), (70_001, u32::MAX)] {
        let v: Vec<(u32, usize)> = (0..len)
            .map(|i| ((i as u32).wrapping_mul(2_654_435_761) % keys, i))
            .collect();
        let mut want = v.clone();
        want.sort_by_key(|p| p.0);
        let mut got = v.clone();
        pool.install(|| got.par_sort_by_key(|p| p.0));
        assert_eq!(got, want, "{len} elements, {keys} keys");
        let mut got = v;
        pool.install(|| got.par_sort_by(|a, b| b.0.cmp(&a.0)));
        want.sort_by_key(|p| std::cmp::Reverse(p.0));
        assert_eq!(got, want, "descending, {len} elements, {keys} keys");
    }
}

/// An element that counts its drops by its id.
struct Counted {
    key: u32,
    id: usize,
    drops: std::sync::Arc<Vec<AtomicUsize>>,
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.drops[self.id].fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn a_panicking_comparison_drops_every_element_once() {
    let n = 40_000;
    for workers in [2, 16] {
        let pool = if workers == 16 { sixteen() } else { pool(2) };
        // Panics in the leaves' sorts (early), in the merges (late), and in between.
        for point in [10, 50_000, 300_000, 450_000, 560_000] {
            let drops = std::sync::Arc::new((0..n).map(|_| AtomicUsize::new(0)).collect());
            let mut v: Vec<Counted> = (0..n)
                .map(|id| Counted {
                    key: (id as u32).wrapping_mul(2_654_435_761) % 1_000,
                    id,
                    drops: std::sync::Arc::clone(&drops),
                })
                .collect();
            let calls = AtomicUsize::new(0);
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                pool.install(|| {
                    v.par_sort_by(|a, b| {
                        if calls.fetch_add(1, Ordering::Relaxed) == point {
                            panic!("comparison {point} fails");
                        }
                        a.key.cmp(&b.key)
                    });
                });
            }));
            let made = calls.load(Ordering::Relaxed);
            assert!(r.is_err(), "panic at {point} of {made} reached the caller");
            let mut ids: Vec<usize> = v.iter().map(|c| c.id).collect();
            ids.sort_unstable();
            assert!(ids.into_iter().eq(0..n), "a permutation (panic at {point})");
            assert!(drops.iter().all(|d| d.load(Ordering::Relaxed) == 0));
            drop(v);
            assert!(
                drops.iter().all(|d| d.load(Ordering::Relaxed) == 1),
                "every element dropped once (panic at {point}, {workers} workers)"
            );
        }
    }
}
