//! The sources of rayon's API agree with std's sequential counterparts: the
//! free-function sources (`empty`, `once`, `repeat`, `repeat_n`, `split`, the tree walks),
//! `char` ranges across the surrogate gap, 128-bit and inclusive ranges, draining (the range
//! removed and the rest kept, even when the iterator is dropped or a consumer stops early or
//! panics: every item dropped exactly once), `Option`/`Result`, tuples zipped, and the
//! per-type modules' names. Each check runs off any pool and on a virtual pool of two
//! nodes, where indexed iterators are cut per node.

use std::collections::{BTreeSet, BinaryHeap, HashMap, HashSet, VecDeque};
use std::fmt::Debug;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use zonal::prelude::*;
use zonal::runtime::{ThreadPool, ThreadPoolBuilder};

/// A virtual pool of two workers on two nodes of the `s1` preset.
fn two_nodes() -> &'static ThreadPool {
    static POOL: OnceLock<ThreadPool> = OnceLock::new();
    POOL.get_or_init(|| {
        ThreadPoolBuilder::new()
            .preset("s1")
            .no_policy()
            .worker_cpus(0..4)
            .build()
            .expect("a virtual pool")
    })
}

/// Runs `f` off any pool and on the two-node pool; both results must agree.
fn both<R: PartialEq + Debug + Send>(f: impl Fn() -> R + Sync) -> R {
    let here = f();
    let there = two_nodes().install(&f);
    assert_eq!(here, there, "off the pool vs on two nodes");
    there
}

#[test]
fn the_pool_has_two_nodes() {
    let parts = two_nodes().install(|| zonal::runtime::current_node_partition(0..100));
    assert_eq!(parts.len(), 2, "{parts:?}");
}

#[test]
fn empty_and_once() {
    both(|| {
        let e: Vec<String> = zonal::iter::empty().collect();
        assert!(e.is_empty());
        assert_eq!(zonal::iter::empty::<u8>().len(), 0);
        assert_eq!(zonal::iter::empty::<u8>().opt_len(), Some(0));
        let o: Vec<String> = zonal::iter::once("x".to_string()).collect();
        assert_eq!(o, ["x"]);
        assert_eq!(zonal::iter::once(1).len(), 1);
        // Indexed: through the producer (zip, rev, enumerate).
        let z: Vec<(u8, i32)> = zonal::iter::once(7u8).zip(zonal::iter::once(-1)).collect();
        assert_eq!(z, [(7, -1)]);
        let chained: Vec<i32> = zonal::iter::empty()
            .chain(zonal::iter::once(1))
            .chain((2..5).into_par_iter())
            .chain(zonal::iter::empty())
            .rev()
            .collect();
        assert_eq!(chained, [4, 3, 2, 1]);
        let e: Vec<u8> = zonal::iter::empty()
            .zip(0..10u8)
            .map(|(a, _): (u8, u8)| a)
            .collect();
        assert!(e.is_empty());
    });
    assert_eq!(format!("{:?}", zonal::iter::empty::<u8>()), "Empty");
    assert_eq!(format!("{:?}", zonal::iter::once(3)), "Once { item: 3 }");
}

#[test]
fn repeat_and_repeat_n() {
    both(|| {
        for n in [0usize, 1, 2, 1000] {
            let v: Vec<String> = zonal::iter::repeat_n("ab".to_string(), n).collect();
            assert_eq!(v, vec!["ab".to_string(); n]);
            assert_eq!(zonal::iter::repeat_n(0u8, n).len(), n);
            let t: Vec<u8> = zonal::iter::repeat(3u8).take(n).collect();
            assert_eq!(t, vec![3u8; n]);
            let e: Vec<(usize, char)> = zonal::iter::repeat_n('c', n).enumerate().rev().collect();
            let want: Vec<(usize, char)> = std::iter::repeat_n('c', n).enumerate().rev().collect();
            assert_eq!(e, want);
        }
        #[allow(deprecated)]
        let old: Vec<i32> = zonal::iter::repeatn(1, 3).collect();
        assert_eq!(old, [1, 1, 1]);
        let z: Vec<(char, u32)> = zonal::iter::repeat('z').zip(5..8u32).collect();
        assert_eq!(z, [('z', 5), ('z', 6), ('z', 7)]);
        // Endless, bounded by short-circuiting consumers.
        assert_eq!(zonal::iter::repeat(4u64).find_any(|&x| x == 4), Some(4));
        assert!(zonal::iter::repeat(()).any(|()| true));
        assert_eq!(zonal::iter::repeat(1u8).opt_len(), None);
    });
    assert_eq!(
        format!("{:?}", zonal::iter::repeat_n(5, 2)),
        "RepeatN { count: 2, element: 5 }"
    );
    assert_eq!(
        format!("{:?}", zonal::iter::repeat_n(5, 0)),
        "RepeatN { count: 0, .. }"
    );
    assert_eq!(
        format!("{:?}", zonal::iter::repeat(5)),
        "Repeat { element: 5 }"
    );
}

/// A value whose drops are counted per id.
#[derive(Debug)]
struct Tracked {
    id: usize,
    drops: Arc<Vec<AtomicUsize>>,
}

impl Clone for Tracked {
    fn clone(&self) -> Self {
        Tracked {
            id: self.id,
            drops: Arc::clone(&self.drops),
        }
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.drops[self.id].fetch_add(1, Ordering::SeqCst);
    }
}

impl PartialEq for Tracked {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

/// `n` tracked values, ids `0..n`, and their drop counters.
fn tracked(n: usize) -> (Vec<Tracked>, Arc<Vec<AtomicUsize>>) {
    let drops: Arc<Vec<AtomicUsize>> = Arc::new((0..n).map(|_| AtomicUsize::new(0)).collect());
    let v = (0..n)
        .map(|id| Tracked {
            id,
            drops: Arc::clone(&drops),
        })
        .collect();
    (v, drops)
}

fn drop_counts(drops: &[AtomicUsize]) -> Vec<usize> {
    drops.iter().map(|d| d.load(Ordering::SeqCst)).collect()
}

fn ids(v: &[Tracked]) -> Vec<usize> {
    v.iter().map(|t| t.id).collect()
}

#[test]
fn repeat_n_drops_what_it_clones() {
    let (mut v, drops) = tracked(1);
    let one = v.pop().expect("one");
    let got: Vec<Tracked> = two_nodes().install(|| zonal::iter::repeat_n(one, 500).collect());
    assert_eq!(got.len(), 500);
    drop(got);
    // 499 clones and the element itself: all dropped, none twice (the counter is shared).
    assert_eq!(drop_counts(&drops), [500]);
    let (mut v, drops) = tracked(1);
    drop(zonal::iter::repeat_n(v.pop().expect("one"), 0));
    assert_eq!(drop_counts(&drops), [1]);
}

#[test]
fn split_yields_the_unsplit_pieces_in_order() {
    // How far the data is split depends on the pool; the pieces always cover it in order.
    let flat = both(|| {
        let pieces: Vec<std::ops::Range<u32>> = zonal::iter::split(0..1000u32, |r| {
            if r.len() <= 10 {
                (r, None)
            } else {
                let mid = r.start + r.len() as u32 / 2;
                (r.start..mid, Some(mid..r.end))
            }
        })
        .collect();
        assert!(pieces.iter().all(|r| !r.is_empty()));
        pieces.into_iter().flatten().collect::<Vec<u32>>()
    });
    assert_eq!(flat, (0..1000).collect::<Vec<_>>());
    let total: u32 = both(|| zonal::iter::split(5u32, |d| (d, None)).sum());
    assert_eq!(total, 5);
    assert_eq!(
        format!("{:?}", zonal::iter::split(1, |d| (d, None))),
        "Split { data: 1 }"
    );
}

/// A tree of `usize` nodes: node `n`'s children are listed in `kids[n]`.
fn children(kids: &[Vec<usize>]) -> impl Fn(&usize) -> Vec<usize> + Sync + Send + '_ {
    move |n: &usize| kids[*n].clone()
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

/// Trees: a lone root, a path, a complete binary tree, a wide star, a random one.
fn trees() -> Vec<Vec<Vec<usize>>> {
    let path: Vec<Vec<usize>> = (0..50)
        .map(|n| if n < 49 { vec![n + 1] } else { vec![] })
        .collect();
    let binary: Vec<Vec<usize>> = (0..1023)
        .map(|n| {
            if 2 * n + 2 < 1023 {
                vec![2 * n + 1, 2 * n + 2]
            } else {
                vec![]
            }
        })
        .collect();
    let star: Vec<Vec<usize>> = (0..200)
        .map(|n| if n == 0 { (1..200).collect() } else { vec![] })
        .collect();
    let mut random: Vec<Vec<usize>> = vec![Vec::new(); 500];
    let mut seed = 12345u64;
    for n in 1..500 {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let parent = (seed >> 33) as usize % n;
        random[parent].push(n);
    }
    vec![vec![vec![]], path, binary, star, random]
}

#[test]
fn tree_walks_keep_their_order() {
    for kids in trees() {
        let (mut pre, mut post) = (Vec::new(), Vec::new());
        prefix(&kids, 0, &mut pre);
        postfix(&kids, 0, &mut post);
        let got_pre =
            both(|| zonal::iter::walk_tree_prefix(0, children(&kids)).collect::<Vec<_>>());
        assert_eq!(got_pre, pre);
        let got_post =
            both(|| zonal::iter::walk_tree_postfix(0, children(&kids)).collect::<Vec<_>>());
        assert_eq!(got_post, post);
        let any: BTreeSet<usize> = both(|| zonal::iter::walk_tree(0, children(&kids)).collect());
        assert_eq!(any, pre.iter().copied().collect::<BTreeSet<_>>());
        assert_eq!(
            both(|| zonal::iter::walk_tree(0, children(&kids)).count()),
            pre.len()
        );
        // Short-circuiting stops the walk early and still finds the first match.
        let last = *pre.last().expect("a node");
        let first =
            both(|| zonal::iter::walk_tree_prefix(0, children(&kids)).find_first(|&n| n == last));
        assert_eq!(first, Some(last));
    }
}

#[test]
fn char_ranges_skip_the_surrogate_gap() {
    let cases = [
        ('\u{D7F0}', '\u{E010}'),
        ('\u{D7FF}', '\u{E000}'),
        ('\u{D7FF}', '\u{E001}'),
        ('a', 'a'),
        ('a', 'b'),
        ('z', 'a'),
        ('\0', char::MAX),
    ];
    for (a, b) in cases {
        let seq: Vec<char> = (a..b).collect();
        let par: Vec<char> = both(|| (a..b).into_par_iter().collect());
        assert_eq!(par, seq, "{a:?}..{b:?}");
        assert_eq!(both(|| (a..b).into_par_iter().len()), seq.len());
        let seq: Vec<char> = (a..=b).collect();
        let par: Vec<char> = both(|| (a..=b).into_par_iter().collect());
        assert_eq!(par, seq, "{a:?}..={b:?}");
        assert_eq!(both(|| (a..=b).into_par_iter().len()), seq.len());
        // Splitting at every index (skip/take cut the producer).
        let mid = seq.len() / 3;
        let par: Vec<char> = both(|| (a..=b).into_par_iter().skip(mid).take(7).rev().collect());
        let want: Vec<char> = seq.iter().copied().skip(mid).take(7).rev().collect();
        assert_eq!(par, want);
    }
    assert_eq!(('\0'..=char::MAX).into_par_iter().len(), 0x11_0000 - 0x800);
}

#[test]
fn integer_inclusive_ranges() {
    both(|| {
        assert_eq!((0..=u8::MAX).into_par_iter().len(), 256);
        assert_eq!(
            (i8::MIN..=i8::MAX).into_par_iter().collect::<Vec<_>>(),
            (i8::MIN..=i8::MAX).collect::<Vec<_>>()
        );
        assert_eq!((i16::MIN..=i16::MAX).into_par_iter().len(), 65536);
        let (five, four) = (5u16, 4u16);
        assert_eq!((five..=four).into_par_iter().len(), 0);
        assert_eq!(
            (u32::MAX - 3..=u32::MAX)
                .into_par_iter()
                .collect::<Vec<_>>(),
            (u32::MAX - 3..=u32::MAX).collect::<Vec<_>>()
        );
        assert_eq!(
            (i64::MAX - 2..=i64::MAX)
                .into_par_iter()
                .collect::<Vec<_>>(),
            (i64::MAX - 2..=i64::MAX).collect::<Vec<_>>()
        );
        assert_eq!((usize::MAX - 1..=usize::MAX).into_par_iter().count(), 2);
        assert_eq!(
            (isize::MIN..=isize::MIN + 2)
                .into_par_iter()
                .map(|x| x - isize::MIN)
                .sum::<isize>(),
            3
        );
        assert_eq!((1..=100u64).into_par_iter().opt_len(), Some(100));
        assert_eq!((0..=u64::MAX).into_par_iter().opt_len(), None);
    });
}

#[test]
fn ranges_wider_than_usize_are_unindexed() {
    const OCTILLION: u128 = 1_000_000_000_000_000_000_000_000_000;
    both(|| {
        let r: zonal::range::Iter<u128> = (0..OCTILLION).into_par_iter();
        assert_eq!(r.opt_len(), None);
        assert_eq!((0..OCTILLION).into_par_iter().find_first(|_| true), Some(0));
        assert_eq!(
            (0..=OCTILLION).into_par_iter().find_first(|&x| x > 5),
            Some(6)
        );
        assert_eq!(
            (0..=u128::MAX).into_par_iter().find_any(|&x| x == 7),
            Some(7)
        );
        assert_eq!(
            (i128::MIN..=i128::MAX).into_par_iter().find_first(|_| true),
            Some(i128::MIN)
        );
        assert_eq!((i128::MIN..i128::MAX).into_par_iter().opt_len(), None);
        // Small 128-bit and 64-bit ranges: indexed runs, exact contents.
        let big = 1u128 << 100;
        assert_eq!((big..big + 1000).into_par_iter().opt_len(), Some(1000));
        assert_eq!(
            (big..big + 1000).into_par_iter().collect::<Vec<_>>(),
            (big..big + 1000).collect::<Vec<_>>()
        );
        assert_eq!(
            (-3i128..=3).into_par_iter().collect::<Vec<_>>(),
            (-3i128..=3).collect::<Vec<_>>()
        );
        assert_eq!(
            (u64::MAX - 5..u64::MAX).into_par_iter().collect::<Vec<_>>(),
            (u64::MAX - 5..u64::MAX).collect::<Vec<_>>()
        );
        assert_eq!(
            (i64::MIN..i64::MIN + 3).into_par_iter().collect::<Vec<_>>(),
            (i64::MIN..i64::MIN + 3).collect::<Vec<_>>()
        );
        assert_eq!((5u128..5).into_par_iter().count(), 0);
        let (five, four) = (5u128, 4u128);
        assert_eq!((five..=four).into_par_iter().count(), 0);
        // Large enough to split many times, unindexed: the sum of a span of 2^70 numbers.
        let lo = 1u128 << 80;
        let n = 1u128 << 20;
        let s: u128 = (lo..lo + n).into_par_iter().map(|x| x - lo).sum();
        assert_eq!(s, n * (n - 1) / 2);
    });
}

#[test]
fn vec_drain_removes_the_range_and_keeps_the_rest() {
    let ranges = [(0usize, 0usize), (0, 10), (2, 5), (9, 10), (10, 10), (3, 3)];
    for (a, b) in ranges {
        let (out, rest) = both(|| {
            let mut v: Vec<String> = (0..10).map(|i| i.to_string()).collect();
            let out: Vec<String> = v.par_drain(a..b).collect();
            (out, v)
        });
        let mut v: Vec<String> = (0..10).map(|i| i.to_string()).collect();
        let want: Vec<String> = v.drain(a..b).collect();
        assert_eq!((out, rest), (want, v));
    }
    both(|| {
        let mut v: Vec<u32> = (0..100).collect();
        assert_eq!(v.par_drain(..).len(), 100);
        assert!(v.is_empty());
        let mut v: Vec<u32> = (0..100).collect();
        let d: zonal::vec::Drain<'_, u32> = v.par_drain(10..=19);
        assert_eq!(d.rev().take(2).collect::<Vec<_>>(), [19, 18]);
        assert_eq!(v.len(), 90);
        assert_eq!(v[10], 20);
    });
}

#[test]
#[should_panic]
fn vec_drain_out_of_bounds_panics() {
    let mut v = vec![1, 2, 3];
    let _ = v.par_drain(2..5);
}

#[test]
fn vec_drain_dropped_or_stopped_early_drops_each_item_once() {
    for pool in [false, true] {
        // Dropped unused.
        let (mut v, drops) = tracked(10);
        drop(v.par_drain(2..6));
        assert_eq!(ids(&v), [0, 1, 6, 7, 8, 9]);
        assert_eq!(drop_counts(&drops), [0, 0, 1, 1, 1, 1, 0, 0, 0, 0]);
        drop(v);
        assert_eq!(drop_counts(&drops), [1; 10]);
        // A consumer that stops early.
        let (v, drops) = tracked(1000);
        let mut v = v;
        let d = v.par_drain(100..900);
        let found = if pool {
            two_nodes().install(|| d.map(|t| t.id).find_first(|&id| id >= 150))
        } else {
            d.map(|t| t.id).find_first(|&id| id >= 150)
        };
        assert_eq!(found, Some(150));
        assert_eq!(v.len(), 200);
        assert_eq!(v[100].id, 900);
        drop(v);
        assert_eq!(drop_counts(&drops), vec![1; 1000]);
    }
}

#[test]
fn vec_drain_under_a_panicking_consumer_drops_each_item_once() {
    for pool in [false, true] {
        let (mut v, drops) = tracked(1000);
        let seen = AtomicUsize::new(0);
        let mut work = || {
            catch_unwind(AssertUnwindSafe(|| {
                v.par_drain(10..990).for_each(|t| {
                    seen.fetch_add(1, Ordering::SeqCst);
                    assert!(t.id != 500, "boom");
                })
            }))
        };
        let r = if pool {
            two_nodes().install(work)
        } else {
            work()
        };
        assert!(r.is_err(), "the consumer's panic comes back");
        assert!(seen.load(Ordering::SeqCst) >= 1);
        assert_eq!(ids(&v), (0..10).chain(990..1000).collect::<Vec<_>>());
        drop(v);
        assert_eq!(
            drop_counts(&drops),
            vec![1; 1000],
            "every item dropped exactly once"
        );
    }
}

#[test]
fn other_drains() {
    both(|| {
        let mut d: VecDeque<u32> = (0..20).collect();
        d.rotate_left(7); // not contiguous
        let mut seq = d.clone();
        let got: Vec<u32> = d.par_drain(3..15).collect();
        let want: Vec<u32> = seq.drain(3..15).collect();
        assert_eq!((got, &d), (want, &seq));

        let mut s = String::from("aé€😀b-ñ");
        let mut seq = s.clone();
        let got: String = s.par_drain(1..11).collect();
        let want: String = seq.drain(1..11).collect();
        assert_eq!((got, &s), (want, &seq));
        let got: zonal::string::Drain<'_> = s.par_drain(..);
        assert_eq!(got.count(), seq.chars().count());
        assert!(s.is_empty());

        let mut m: HashMap<u32, String> = (0..100).map(|i| (i, i.to_string())).collect();
        let want = m.clone();
        let got: HashMap<u32, String> = m.par_drain().collect();
        assert_eq!((got, m.len()), (want, 0));

        let mut h: HashSet<u32> = (0..100).collect();
        let got: HashSet<u32> = h.par_drain().collect();
        assert_eq!((got.len(), h.len()), (100, 0));

        let mut b: BinaryHeap<u32> = (0..100).collect();
        let mut got: Vec<u32> = b.par_drain().collect();
        got.sort_unstable();
        assert_eq!((got, b.len()), ((0..100).collect::<Vec<_>>(), 0));
    });
}

#[test]
fn options_and_results() {
    both(|| {
        let ok: Result<u8, String> = Ok(3);
        let err: Result<u8, String> = Err("e".into());
        assert_eq!(ok.par_iter().copied().collect::<Vec<_>>(), [3]);
        assert_eq!(err.par_iter().count(), 0);
        assert_eq!(ok.clone().into_par_iter().len(), 1);
        let mut r: Result<u8, ()> = Ok(1);
        r.par_iter_mut().for_each(|x| *x += 1);
        assert_eq!(r, Ok(2));
        let it: zonal::result::IntoIter<u8> = err.into_par_iter();
        assert_eq!(it.len(), 0);
        let o: zonal::option::IntoIter<u8> = Some(4).into_par_iter();
        assert_eq!(o.collect::<Vec<_>>(), [4]);
    });
}

#[test]
fn tuples_zip_their_parts() {
    both(|| {
        let a: Vec<u32> = (0..100).collect();
        let b: Vec<char> = ('a'..='z').collect();
        let c: Vec<String> = (0..50).map(|i| i.to_string()).collect();
        let got: Vec<(u32, char, String)> =
            (a.clone(), b.clone(), c.clone()).into_par_iter().collect();
        let want: Vec<(u32, char, String)> = a
            .iter()
            .zip(&b)
            .zip(&c)
            .map(|((x, y), z)| (*x, *y, z.clone()))
            .collect();
        assert_eq!(got, want);
        let refs: Vec<(&u32, &char)> = (&a, &b).into_par_iter().collect();
        assert_eq!(refs.len(), 26);
        let t = (a.clone(), c.clone());
        let n: usize = t.par_iter().map(|(x, s)| *x as usize + s.len()).sum();
        assert_eq!(
            n,
            a.iter()
                .zip(&c)
                .map(|(x, s)| *x as usize + s.len())
                .sum::<usize>()
        );
        let mut t = (vec![0u32; 10], vec![1u32; 12]);
        t.par_iter_mut().for_each(|(x, y)| {
            *x += 5;
            *y += 1;
        });
        assert_eq!(t.0, vec![5; 10]);
        assert_eq!(&t.1[..10], &[2; 10]);
        assert_eq!(t.1[10..], [1, 1]);
        let one: Vec<(u8,)> = (vec![1u8, 2],).into_par_iter().collect();
        assert_eq!(one, [(1,), (2,)]);
        let twelve = (
            0..3,
            0..4,
            0..5,
            0..6,
            0..7,
            0..8,
            0..9,
            0..10,
            0..11,
            0..12,
            0..13,
            0..14u8,
        );
        let v: Vec<_> = twelve.into_par_iter().rev().collect();
        assert_eq!(v.len(), 3);
        assert_eq!(v[0], (2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2));
        let m: zonal::iter::MultiZip<_> = (0..5, vec![1; 3]).into_par_iter();
        assert_eq!(m.len(), 3);
    });
}

#[test]
fn per_type_module_names() {
    use std::collections::{BTreeMap, LinkedList};
    let v: Vec<u8> = vec![1, 2];
    let _: zonal::vec::IntoIter<u8> = v.clone().into_par_iter();
    let arr: zonal::array::IntoIter<u8, 2> = [1u8, 2].into_par_iter();
    assert_eq!(arr.collect::<Vec<_>>(), [1, 2]);
    let _: zonal::range_inclusive::Iter<u128> = (0..=1u128).into_par_iter();
    let mut o = Some(1);
    let _: zonal::option::Iter<'_, i32> = o.par_iter();
    let _: zonal::option::IterMut<'_, i32> = o.par_iter_mut();
    let mut r: Result<i32, ()> = Ok(1);
    let _: zonal::result::Iter<'_, i32> = r.par_iter();
    let _: zonal::result::IterMut<'_, i32> = r.par_iter_mut();
    let mut m: HashMap<u8, u8> = HashMap::new();
    let _: zonal::collections::hash_map::Iter<'_, u8, u8> = m.par_iter();
    let _: zonal::collections::hash_map::IterMut<'_, u8, u8> = m.par_iter_mut();
    let _: zonal::collections::hash_map::Drain<'_, u8, u8> = m.par_drain();
    let _: zonal::collections::hash_map::IntoIter<u8, u8> = m.into_par_iter();
    let mut bm: BTreeMap<u8, u8> = BTreeMap::new();
    let _: zonal::collections::btree_map::IterMut<'_, u8, u8> = bm.par_iter_mut();
    let _: zonal::collections::btree_map::IntoIter<u8, u8> = bm.into_par_iter();
    let bs: BTreeSet<u8> = BTreeSet::new();
    let _: zonal::collections::btree_set::Iter<'_, u8> = bs.par_iter();
    let mut hs: HashSet<u8> = HashSet::new();
    let _: zonal::collections::hash_set::Drain<'_, u8> = hs.par_drain();
    let mut ll: LinkedList<u8> = LinkedList::new();
    let _: zonal::collections::linked_list::IterMut<'_, u8> = ll.par_iter_mut();
    let mut dq: VecDeque<u8> = VecDeque::new();
    let _: zonal::collections::vec_deque::IterMut<'_, u8> = dq.par_iter_mut();
    let _: zonal::collections::vec_deque::Drain<'_, u8> = dq.par_drain(..);
    let mut bh: BinaryHeap<u8> = BinaryHeap::new();
    let _: zonal::collections::binary_heap::Iter<'_, u8> = bh.par_iter();
    let _: zonal::collections::binary_heap::Drain<'_, u8> = bh.par_drain();
}
