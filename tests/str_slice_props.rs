//! Laws of `ParallelString` and the rayon-parity slice views: for arbitrary strings
//! (non-ASCII and line endings included), slices and chunk sizes, each parallel method
//! yields exactly what std's sequential method yields, in order, off any pool, on one
//! worker and on a 2-node virtual pool (the node cut of the indexed views).

use std::sync::OnceLock;

use proptest::prelude::*;
use zonal::prelude::*;
use zonal::runtime::{ThreadPool, ThreadPoolBuilder};

/// One worker; two workers on two nodes.
fn pool(k: usize) -> &'static ThreadPool {
    static POOLS: OnceLock<Vec<ThreadPool>> = OnceLock::new();
    let pools = POOLS.get_or_init(|| {
        let s1 = || ThreadPoolBuilder::new().preset("s1").no_policy();
        vec![
            s1().worker_cpus([0]).build().expect("a virtual pool"),
            s1().worker_cpus([0, 2]).build().expect("a virtual pool"),
        ]
    });
    &pools[k]
}

/// Runs `f` on pool `k` (0, 1), or on this thread (2).
fn on<R: Send>(k: usize, f: impl FnOnce() -> R + Send) -> R {
    if k == 2 {
        f()
    } else {
        pool(k).install(f)
    }
}

/// Strings over a small alphabet of separators, whitespace, line endings and 1- to 4-byte
/// chars, so separators are frequent; sometimes long.
fn text() -> impl Strategy<Value = String> {
    let ch = prop_oneof![
        Just(' '),
        Just(','),
        Just('\n'),
        Just('\r'),
        Just('\t'),
        Just('\u{2009}'),
        Just('é'),
        Just('語'),
        Just('🦀'),
        proptest::char::range('a', 'e'),
        any::<char>(),
    ];
    prop_oneof![
        proptest::collection::vec(ch.clone(), 0..4),
        proptest::collection::vec(ch, 0..3000),
    ]
    .prop_map(|v| v.into_iter().collect())
}

fn sep() -> impl Strategy<Value = char> {
    prop_oneof![
        Just(' '),
        Just(','),
        Just('\n'),
        Just('語'),
        Just('🦀'),
        Just('a')
    ]
}

fn slice() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        proptest::collection::vec(0u8..4, 0..4),
        proptest::collection::vec(0u8..4, 0..3000),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn char_wise_equal_std(s in text(), k in 0usize..3, sep in sep()) {
        let s = s.as_str();
        let got = on(k, || (
            s.par_chars().collect::<Vec<_>>(),
            s.par_char_indices().collect::<Vec<_>>(),
            s.par_bytes().collect::<Vec<_>>(),
            s.par_encode_utf16().collect::<Vec<_>>(),
            s.par_matches(sep).collect::<Vec<_>>(),
            s.par_match_indices([sep, 'b']).collect::<Vec<_>>(),
        ));
        prop_assert_eq!(got.0, s.chars().collect::<Vec<_>>());
        prop_assert_eq!(got.1, s.char_indices().collect::<Vec<_>>());
        prop_assert_eq!(got.2, s.bytes().collect::<Vec<_>>());
        prop_assert_eq!(got.3, s.encode_utf16().collect::<Vec<_>>());
        prop_assert_eq!(got.4, s.matches(sep).collect::<Vec<_>>());
        prop_assert_eq!(got.5, s.match_indices([sep, 'b']).collect::<Vec<_>>());
    }

    #[test]
    fn separator_wise_equal_std(s in text(), k in 0usize..3, sep in sep()) {
        let s = s.as_str();
        let seps = [sep, '\r'];
        let got = on(k, || (
            s.par_split(sep).collect::<Vec<_>>(),
            s.par_split_inclusive(&seps).collect::<Vec<_>>(),
            s.par_split_terminator(&seps[..]).collect::<Vec<_>>(),
            s.par_split(|c: char| c.is_alphabetic()).collect::<Vec<_>>(),
            s.par_lines().collect::<Vec<_>>(),
            s.par_split_whitespace().collect::<Vec<_>>(),
            s.par_split_ascii_whitespace().collect::<Vec<_>>(),
        ));
        prop_assert_eq!(got.0, s.split(sep).collect::<Vec<_>>());
        prop_assert_eq!(got.1, s.split_inclusive(&seps).collect::<Vec<_>>());
        prop_assert_eq!(got.2, s.split_terminator(&seps[..]).collect::<Vec<_>>());
        prop_assert_eq!(got.3, s.split(|c: char| c.is_alphabetic()).collect::<Vec<_>>());
        prop_assert_eq!(got.4, s.lines().collect::<Vec<_>>());
        prop_assert_eq!(got.5, s.split_whitespace().collect::<Vec<_>>());
        prop_assert_eq!(got.6, s.split_ascii_whitespace().collect::<Vec<_>>());
    }

    #[test]
    fn shared_slice_views_equal_std(v in slice(), k in 0usize..3, size in 1usize..40) {
        let v = v.as_slice();
        let got = on(k, || (
            v.par_chunks_exact(size).collect::<Vec<_>>(),
            v.par_rchunks(size).collect::<Vec<_>>(),
            v.par_rchunks_exact(size).collect::<Vec<_>>(),
            v.par_chunk_by(|a, b| a <= b).collect::<Vec<_>>(),
            v.par_split(|x| *x == 0).collect::<Vec<_>>(),
            v.par_split_inclusive(|x| *x == 0).collect::<Vec<_>>(),
            v.par_array_windows::<2>().collect::<Vec<_>>(),
            v.par_rchunks(size).rev().enumerate().collect::<Vec<_>>(),
        ));
        prop_assert_eq!(got.0, v.chunks_exact(size).collect::<Vec<_>>());
        prop_assert_eq!(got.1, v.rchunks(size).collect::<Vec<_>>());
        prop_assert_eq!(got.2, v.rchunks_exact(size).collect::<Vec<_>>());
        prop_assert_eq!(got.3, v.chunk_by(|a, b| a <= b).collect::<Vec<_>>());
        prop_assert_eq!(got.4, v.split(|x| *x == 0).collect::<Vec<_>>());
        prop_assert_eq!(got.5, v.split_inclusive(|x| *x == 0).collect::<Vec<_>>());
        let w2: Vec<&[u8; 2]> = v.windows(2).map(|w| <&[u8; 2]>::try_from(w).unwrap()).collect();
        prop_assert_eq!(got.6, w2);
        prop_assert_eq!(got.7, v.rchunks(size).rev().enumerate().collect::<Vec<_>>());
        prop_assert_eq!(v.par_chunks_exact(size).remainder(), v.chunks_exact(size).remainder());
        prop_assert_eq!(v.par_rchunks_exact(size).remainder(), v.rchunks_exact(size).remainder());
    }

    #[test]
    fn mutable_slice_views_equal_std(v in slice(), k in 0usize..3, size in 1usize..40) {
        // Every item gets the number of its piece added: pieces and their order must match.
        fn tag<'a>(pieces: impl Iterator<Item = &'a mut [u8]>) {
            for (i, p) in pieces.enumerate() {
                p.iter_mut().for_each(|x| *x = x.wrapping_add((i % 200) as u8));
            }
        }
        fn par_tag<'a, I>(pieces: I)
        where
            I: IndexedParallelIterator<Item = &'a mut [u8]>,
        {
            pieces.enumerate().for_each(|(i, p)| {
                p.iter_mut().for_each(|x| *x = x.wrapping_add((i % 200) as u8));
            });
        }
        let mut want = [v.clone(), v.clone(), v.clone(), v.clone(), v.clone(), v.clone()];
        tag(want[0].chunks_exact_mut(size));
        tag(want[1].rchunks_mut(size));
        tag(want[2].rchunks_exact_mut(size));
        want[3].chunk_by_mut(|a, b| a == b).for_each(|p| p.reverse());
        want[4].split_mut(|x| *x == 0).for_each(|p| p.sort_unstable());
        want[5].split_inclusive_mut(|x| *x == 0).for_each(|p| p.sort_unstable());
        let got = on(k, || {
            let mut got = [v.clone(), v.clone(), v.clone(), v.clone(), v.clone(), v.clone()];
            par_tag(got[0].par_chunks_exact_mut(size));
            par_tag(got[1].par_rchunks_mut(size));
            par_tag(got[2].par_rchunks_exact_mut(size));
            got[3].par_chunk_by_mut(|a, b| a == b).for_each(|p| p.reverse());
            got[4].par_split_mut(|x| *x == 0).for_each(|p| p.sort_unstable());
            got[5].par_split_inclusive_mut(|x| *x == 0).for_each(|p| p.sort_unstable());
            got
        });
        prop_assert_eq!(got, want);
    }

    #[test]
    fn char_ranges_equal_std(a in any::<char>(), len in 0u32..5000, k in 0usize..3) {
        let b = char::from_u32(u32::from(a).saturating_add(len)).unwrap_or(char::MAX);
        let got = on(k, || (
            (a..b).into_par_iter().collect::<Vec<_>>(),
            (a..=b).into_par_iter().collect::<Vec<_>>(),
        ));
        prop_assert_eq!(got.0, (a..b).collect::<Vec<_>>());
        prop_assert_eq!(got.1, (a..=b).collect::<Vec<_>>());
    }

    #[test]
    fn sort_by_cached_key_equals_stable_sort(v in slice(), k in 0usize..3) {
        let pairs: Vec<(u8, usize)> = v.iter().copied().zip(0..).collect();
        let mut want = pairs.clone();
        want.sort_by_key(|p| p.0 % 3);
        let got = on(k, || {
            let mut got = pairs.clone();
            got.par_sort_by_cached_key(|p| p.0 % 3);
            got
        });
        prop_assert_eq!(got, want);
    }
}
