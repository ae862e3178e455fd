//! Parallel sorts over [`zonal_runtime::join`]: a stable merge sort (`par_sort*`) and an
//! unstable quicksort (`par_sort_unstable*`).
//!
//! # Stable: merge sort
//! [`merge`]: leaves sorted by std's stable sort, then parallel merges (the longer run cut
//! at its midpoint, the other at the matching point found by binary search, both halves
//! merged by `join`), ping-ponging between the slice and one scratch buffer of the slice's
//! length whose pages each merging worker touches first. Its span is `O(log² n)` levels of
//! `join` over sequential passes of at most a leaf's length (the module's docs).
//!
//! # Unstable: quicksort
//! Partition around the median of three (a branchless Lomuto partition); when the split is
//! lopsided (fewer than an eighth on one side: many equal keys or an adversarial input),
//! partition at the exact median instead (`select_nth_unstable_by`, linear), so the depth
//! stays logarithmic. Both sides are sorted in parallel; leaves by `sort_unstable_by`. No
//! `unsafe`: the sequential work (the partitions, the leaves) is the standard library's.
//! The partitions are sequential (the top one reads the whole slice on one thread), as in
//! rayon's `par_sort_unstable`.
//!
//! # Panics
//! A panic in the comparison reaches the caller (through `join`); the slice then holds a
//! permutation of its elements, as after std's sorts: nothing is lost or duplicated.

use std::cmp::Ordering;

mod merge;

/// The smallest piece worth a task of its own.
const MIN_LEAF: usize = if cfg!(miri) { 1 << 4 } else { 1 << 12 };

/// The length under which a piece of a `len`-element sort is sorted sequentially: about
/// sixteen pieces per worker, so that stealing evens out unequal pieces, and never tiny.
fn leaf_len(len: usize) -> usize {
    let pieces = zonal_runtime::current_num_threads()
        .saturating_mul(16)
        .max(1);
    (len / pieces).max(MIN_LEAF)
}

/// The merge sort's shape for `len` elements on the current pool: leaves and sequential
/// merges of at most [`leaf_len`] elements (a merge above it is cut into about sixteen
/// pieces per worker, as the sort is).
pub(crate) fn merge_shape(len: usize) -> merge::Shape {
    let leaf = leaf_len(len);
    merge::Shape { leaf, cutoff: leaf }
}

/// Sorts `v` stably by `compare`, in parallel.
pub(crate) fn par_merge_sort<T, F>(v: &mut [T], compare: &F)
where
    T: Send,
    F: Fn(&T, &T) -> Ordering + Sync,
{
    let shape = merge_shape(v.len());
    merge::merge_sort(v, compare, shape, &merge::NoProbe);
}

/// Sorts `v` by `compare`, in parallel, not keeping the order of equal elements.
pub(crate) fn par_quicksort<T, F>(v: &mut [T], compare: &F)
where
    T: Send,
    F: Fn(&T, &T) -> Ordering + Sync,
{
    let leaf = leaf_len(v.len());
    quicksort(v, compare, leaf);
}

fn quicksort<T, F>(v: &mut [T], compare: &F, leaf: usize)
where
    T: Send,
    F: Fn(&T, &T) -> Ordering + Sync,
{
    if v.len() <= leaf.max(2) {
        v.sort_unstable_by(compare);
        return;
    }
    let len = v.len();
    let mut p = partition(v, compare);
    if p < len / 8 || p > len - len / 8 {
        // Lopsided: split at the exact median instead.
        p = len / 2;
        v.select_nth_unstable_by(p, compare);
    }
    let (a, rest) = v.split_at_mut(p);
    // `rest[0]` is the pivot, in its final place.
    let b = &mut rest[1..];
    zonal_runtime::join(
        || quicksort(a, compare, leaf),
        || quicksort(b, compare, leaf),
    );
}

/// Partitions `v` (at least three elements) around the median of its first, middle and
/// last elements; returns the pivot's final index: everything before it is not greater,
/// everything after it not less.
fn partition<T, F>(v: &mut [T], compare: &F) -> usize
where
    F: Fn(&T, &T) -> Ordering,
{
    let less = |a: &T, b: &T| compare(a, b) == Ordering::Less;
    let (a, b, c) = (0, v.len() / 2, v.len() - 1);
    // Order v[a] <= v[b] <= v[c]; the median ends at b.
    if less(&v[b], &v[a]) {
        v.swap(a, b);
    }
    if less(&v[c], &v[b]) {
        v.swap(b, c);
        if less(&v[b], &v[a]) {
            v.swap(a, b);
        }
    }
    v.swap(0, b);
    let (pivot, rest) = v.split_first_mut().expect("at least three elements");
    // Branchless Lomuto: every element is swapped into the "less" prefix's next slot and the
    // prefix grows by the comparison's outcome, so random data costs no mispredicted branch.
    let mut l = 0;
    for i in 0..rest.len() {
        let lt = less(&rest[i], pivot);
        rest.swap(l, i);
        l += usize::from(lt);
    }
    // rest[..l] < pivot <= rest[l..]: the pivot goes to index l of `v`.
    v.swap(0, l);
    l
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn partition_places_the_pivot() {
        for v in [
            vec![3, 1, 2],
            vec![5, 5, 5, 5],
            vec![9, 8, 7, 6, 5, 4, 3, 2, 1],
            vec![1, 9, 1, 9, 1, 9, 5],
        ] {
            let mut w = v.clone();
            let p = partition(&mut w, &Ord::cmp);
            assert!(w[..p].iter().all(|x| x <= &w[p]), "{v:?} → {w:?} at {p}");
            assert!(
                w[p + 1..].iter().all(|x| x >= &w[p]),
                "{v:?} → {w:?} at {p}"
            );
            let (mut a, mut b) = (v.clone(), w.clone());
            a.sort_unstable();
            b.sort_unstable();
            assert_eq!(a, b, "a permutation");
        }
    }

    #[test]
    fn small_leaves_sort_like_std() {
        // A leaf of 1 forces the parallel path down to single elements.
        let n = if cfg!(miri) { 200 } else { 5_000 };
        let mut x: Vec<u32> = (0..n).map(|i| (i * 7_919) % 1_013).collect();
        let mut y = x.clone();
        let mut s = x.clone();
        s.sort();
        let shape = merge::Shape { leaf: 1, cutoff: 1 };
        merge::merge_sort(&mut x, &Ord::cmp, shape, &merge::NoProbe);
        quicksort(&mut y, &Ord::cmp, 3);
        assert_eq!(x, s);
        assert_eq!(y, s);
    }
}
