//! Laws of the sources of rayon's API, for random inputs: `par_drain(r)` is
//! std's `drain(r)` (what comes out and what stays) for `Vec`, `VecDeque` and `String`;
//! tuples zip as std's `zip`; ranges (`char` across the surrogate gap, 128-bit, inclusive)
//! yield std's items; `repeat_n`, `split` and the tree walks agree with their sequential
//! definitions. Each law holds off any pool, on one worker, and on a virtual pool of two
//! nodes (the node cut).

use std::collections::VecDeque;
use std::sync::OnceLock;

use proptest::prelude::*;
use zonal::prelude::*;
use zonal::runtime::{ThreadPool, ThreadPoolBuilder};

/// Pool 0: one worker; pool 1: two workers on two nodes of the `s1` preset.
fn pool(k: usize) -> &'static ThreadPool {
    static POOLS: OnceLock<[ThreadPool; 2]> = OnceLock::new();
    let pools = POOLS.get_or_init(|| {
        let build = |cpus: std::ops::Range<u32>| {
            ThreadPoolBuilder::new()
                .preset("s1")
                .no_policy()
                .worker_cpus(cpus)
                .build()
                .expect("a virtual pool")
        };
        [build(0..1), build(0..4)]
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

fn pools() -> impl Strategy<Value = usize> {
    0usize..3
}

fn vec_u16() -> impl Strategy<Value = Vec<u16>> {
    prop_oneof![
        proptest::collection::vec(any::<u16>(), 0..4),
        proptest::collection::vec(any::<u16>(), 0..2000),
    ]
}

/// A range `a..b` within `0..=len`, from two fractions.
fn sub_range(len: usize, x: f64, y: f64) -> std::ops::Range<usize> {
    let (a, b) = ((len as f64 * x) as usize, (len as f64 * y) as usize);
    a.min(b).min(len)..a.max(b).min(len)
}

/// A tree of `n` nodes (node 0 the root; each other node's parent an earlier node).
fn tree() -> impl Strategy<Value = Vec<Vec<usize>>> {
    proptest::collection::vec(any::<u32>(), 0..400).prop_map(|parents| {
        let mut kids = vec![Vec::new(); parents.len() + 1];
        for (i, p) in parents.iter().enumerate() {
            let n = i + 1;
            kids[*p as usize % n].push(n);
        }
        kids
    })
}

fn prefix(kids: &[Vec<usize>], n: usize, out: &mut Vec<usize>) {
    out.push(n);
    for &c in &kids[n] {
        prefix(kids, c, out);
    }
}

fn postfix(kids: &[Vec<usize>], n: usize, out: &mut Vec<usize>) {
    for &c in &kids[n] {
        postfix(kids, c, out);
    }
    out.push(n);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn par_drain_is_drain(v in vec_u16(), x in 0.0..1.0f64, y in 0.0..1.0f64, k in pools()) {
        let r = sub_range(v.len(), x, y);
        let mut seq = v.clone();
        let want: Vec<u16> = seq.drain(r.clone()).collect();

        let mut par = v.clone();
        let got: Vec<u16> = on(k, || par.par_drain(r.clone()).collect());
        prop_assert_eq!(&got, &want);
        prop_assert_eq!(&par, &seq);

        // Inclusive and open-ended bounds, and indexed adaptors over the drain.
        let mut par = v.clone();
        let got: Vec<(usize, u16)> = on(k, || par.par_drain(r.start..).enumerate().rev().collect());
        let mut seq2 = v.clone();
        let want2: Vec<(usize, u16)> = seq2.drain(r.start..).enumerate().rev().collect();
        prop_assert_eq!(got, want2);
        prop_assert_eq!(&par, &seq2);

        let mut dq: VecDeque<u16> = v.iter().copied().collect();
        dq.rotate_left(v.len() / 3);
        let mut seq_dq = dq.clone();
        let got: Vec<u16> = on(k, || dq.par_drain(r.clone()).collect());
        let want: Vec<u16> = seq_dq.drain(r.clone()).collect();
        prop_assert_eq!(got, want);
        prop_assert_eq!(dq, seq_dq);
    }

    #[test]
    fn string_par_drain_is_drain(s in "[a-zé€😀]{0,60}", x in 0.0..1.0f64, y in 0.0..1.0f64, k in pools()) {
        // Byte offsets on char boundaries.
        let bounds: Vec<usize> = s.char_indices().map(|(i, _)| i).chain([s.len()]).collect();
        let r = sub_range(bounds.len() - 1, x, y);
        let (a, b) = (bounds[r.start], bounds[r.end]);
        let mut seq = s.clone();
        let want: String = seq.drain(a..b).collect();
        let mut par = s.clone();
        let got: String = on(k, || par.par_drain(a..b).collect());
        prop_assert_eq!(got, want);
        prop_assert_eq!(par, seq);
    }

    #[test]
    fn multizip_is_zip(a in vec_u16(), b in vec_u16(), c in vec_u16(), k in pools()) {
        let want: Vec<(u16, u16, u16)> = a.iter().zip(&b).zip(&c).map(|((x, y), z)| (*x, *y, *z)).collect();
        let got: Vec<(u16, u16, u16)> = on(k, || (a.clone(), b.clone(), c.clone()).into_par_iter().collect());
        prop_assert_eq!(&got, &want);
        let got: Vec<(u16, u16, u16)> = on(k, || (&a, &b, &c).into_par_iter().map(|(x, y, z)| (*x, *y, *z)).collect());
        prop_assert_eq!(&got, &want);
        let got: Vec<(u16, u16, u16)> = on(k, || (a.clone(), b.clone(), c.clone()).par_iter().map(|(x, y, z)| (*x, *y, *z)).rev().collect());
        let rev: Vec<(u16, u16, u16)> = want.iter().rev().copied().collect();
        prop_assert_eq!(got, rev);
        let len = on(k, || (&a, &b, &c).into_par_iter().len());
        prop_assert_eq!(len, want.len());
    }

    #[test]
    fn char_ranges_are_std(a in any::<char>(), span in 0u32..5000, near_gap in any::<bool>(), k in pools()) {
        // Near the surrogate gap half of the time.
        let a = if near_gap { char::from_u32(0xD7FF - span % 3000).unwrap_or(a) } else { a };
        let b = char::from_u32(u32::from(a).saturating_add(span))
            .or_else(|| char::from_u32(u32::from(a) + span + 0x800))
            .unwrap_or(char::MAX);
        let want: Vec<char> = (a..b).collect();
        let got: Vec<char> = on(k, || (a..b).into_par_iter().collect());
        prop_assert_eq!(got, want);
        let want: Vec<char> = (a..=b).rev().collect();
        let got: Vec<char> = on(k, || (a..=b).into_par_iter().rev().collect());
        prop_assert_eq!(got, want);
    }

    #[test]
    fn wide_ranges_are_std(a in any::<i128>(), span in 0u16..3000, b in any::<u64>(), k in pools()) {
        let end = a.saturating_add(i128::from(span));
        let want: Vec<i128> = (a..end).collect();
        let got: Vec<i128> = on(k, || (a..end).into_par_iter().collect());
        prop_assert_eq!(got, want);
        let want: Vec<i128> = (a..=end).collect();
        let got: Vec<i128> = on(k, || (a..=end).into_par_iter().collect());
        prop_assert_eq!(got, want);
        let top = b.saturating_add(u64::from(span));
        let want: Vec<u64> = (b..=top).collect();
        let got: Vec<u64> = on(k, || (b..=top).into_par_iter().collect());
        prop_assert_eq!(got, want);
        // Unindexed when longer than a usize: the first item is still found first.
        let first = on(k, || (a.min(0)..i128::MAX).into_par_iter().find_first(|_| true));
        prop_assert_eq!(first, Some(a.min(0)));
    }

    #[test]
    fn repeat_and_split_agree(x in any::<u32>(), n in 0usize..3000, data in vec_u16(), piece in 1usize..64, k in pools()) {
        let got: Vec<u32> = on(k, || zonal::iter::repeat_n(x, n).collect());
        prop_assert_eq!(got, vec![x; n]);
        let got: Vec<(u32, u16)> = on(k, || zonal::iter::repeat(x).zip(&data).map(|(a, b)| (a, *b)).collect());
        prop_assert_eq!(got, data.iter().map(|b| (x, *b)).collect::<Vec<_>>());
        let pieces: Vec<&[u16]> = on(k, || {
            zonal::iter::split(&data[..], |s: &[u16]| {
                if s.len() <= piece {
                    (s, None)
                } else {
                    let (l, r) = s.split_at(s.len() / 2);
                    (l, Some(r))
                }
            })
            .collect()
        });
        prop_assert_eq!(pieces.concat(), data.clone());
    }

    #[test]
    fn tree_walks_are_sequential_walks(kids in tree(), k in pools()) {
        let (mut pre, mut post) = (Vec::new(), Vec::new());
        prefix(&kids, 0, &mut pre);
        postfix(&kids, 0, &mut post);
        let children = |n: &usize| kids[*n].clone();
        let got: Vec<usize> = on(k, || zonal::iter::walk_tree_prefix(0, children).collect());
        prop_assert_eq!(got, pre.clone());
        let got: Vec<usize> = on(k, || zonal::iter::walk_tree_postfix(0, children).collect());
        prop_assert_eq!(got, post);
        let mut got: Vec<usize> = on(k, || zonal::iter::walk_tree(0, children).collect());
        got.sort_unstable();
        pre.sort_unstable();
        prop_assert_eq!(got, pre);
    }
}
