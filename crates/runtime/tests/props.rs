//! Property tests: the parallel loops agree with their sequential definitions for any range
//! and grain, and any pool shape (one shared pool per topology: pools are not cheap).

use std::sync::OnceLock;

use proptest::prelude::*;
use zonal_runtime::{ThreadPool, ThreadPoolBuilder};

fn s1() -> &'static ThreadPool {
    static POOL: OnceLock<ThreadPool> = OnceLock::new();
    POOL.get_or_init(|| {
        ThreadPoolBuilder::new()
            .preset("s1")
            .no_policy()
            .build()
            .unwrap()
    })
}

fn mesh() -> &'static ThreadPool {
    static POOL: OnceLock<ThreadPool> = OnceLock::new();
    POOL.get_or_init(|| {
        let topo = zonal_topology::presets::mesh(3, 2, false, 1).unwrap();
        ThreadPoolBuilder::new()
            .topology(topo)
            .no_policy()
            .build()
            .unwrap()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn par_reduce_is_the_sequential_sum(start in 0usize..1000, len in 0usize..20_000, grain in prop_oneof![4 => 1usize..512, 1 => 512usize..40_000], which in 0..2u8) {
        let pool = if which == 0 { s1() } else { mesh() };
        let range = start..start + len;
        let want: u64 = range.clone().map(|i| i as u64 * 3 + 1).sum();
        let got = pool.par_reduce(range, grain, || 0u64, |r| r.map(|i| i as u64 * 3 + 1).sum(), |a, b| a + b);
        prop_assert_eq!(got, want);
    }

    #[test]
    fn node_partition_tiles_the_range(start in 0usize..1000, len in 0usize..100_000) {
        let parts = s1().node_partition(start..start + len);
        prop_assert_eq!(parts.len(), 16);
        let mut at = start;
        for (_, r) in &parts {
            prop_assert_eq!(r.start, at);
            at = r.end;
        }
        prop_assert_eq!(at, start + len);
    }
}
