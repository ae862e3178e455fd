//! Parallel sorts over [`zonal_runtime::join`]: a stable merge sort (`par_sort*`) and an
//! unstable quicksort (`par_sort_unstable*`). No `unsafe`: the sequential work (the leaves,
//! the merges, the partitions) is the standard library's.
//!
//! # Stable: merge sort
//! Halve, sort both halves in parallel, then merge. The merge is `slice::sort_by` on the
//! whole range: std's stable sort finds the two sorted runs and merges them in one linear
//! pass (its documented behaviour on "two or more sorted sequences concatenated"), and it
//! is skipped when the halves are already in order. Leaves of at most [`leaf_len`] elements
//! are sorted by std directly.
//!
//! # Unstable: quicksort
//! Partition around the median of three (a branchless Lomuto partition); when the split is
//! lopsided (fewer than an eighth on one side: many equal keys or an adversarial input),
//! partition at the exact median instead (`select_nth_unstable_by`, linear), so the depth
//! stays logarithmic. Both sides are sorted in parallel; leaves by `sort_unstable_by`.
//!
//! # Panics
//! A panic in the comparison reaches the caller (through `join`); the slice then holds a
//! permutation of its elements, as after std's sorts: nothing is lost or duplicated.

use std::cmp::Ordering;

/// The smallest piece worth a task of its own.
const MIN_LEAF: usize = 1 << 12;

/// The length under which a piece of a `len`-element sort is sorted sequentially: about
/// sixteen pieces per worker, so that stealing evens out unequal pieces, and never tiny.
fn leaf_len(len: usize) -> usize {
    let pieces = zonal_runtime::current_num_threads()
        .saturating_mul(16)
        .max(1);
    (len / pieces).max(MIN_LEAF)
}

/// Sorts `v` stably by `compare`, in parallel.
pub(crate) fn par_merge_sort<T, F>(v: &mut [T], compare: &F)
where
    T: Send,
    F: Fn(&T, &T) -> Ordering + Sync,
{
    let leaf = leaf_len(v.len());
    merge_sort(v, compare, leaf);
}

fn merge_sort<T, F>(v: &mut [T], compare: &F, leaf: usize)
where
    T: Send,
    F: Fn(&T, &T) -> Ordering + Sync,
{
    if v.len() <= leaf {
        v.sort_by(compare);
        return;
    }
    let mid = v.len() / 2;
    let (a, b) = v.split_at_mut(mid);
    zonal_runtime::join(
        || merge_sort(a, compare, leaf),
        || merge_sort(b, compare, leaf),
    );
    // Already in order: nothing to merge.
    if compare(&v[mid - 1], &v[mid]) != Ordering::Greater {
        return;
    }
    v.sort_by(compare);
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
        let mut x: Vec<u32> = (0..5_000).map(|i| (i * 7_919) % 1_013).collect();
        let mut y = x.clone();
        let mut s = x.clone();
        s.sort();
        merge_sort(&mut x, &Ord::cmp, 1);
        quicksort(&mut y, &Ord::cmp, 3);
        assert_eq!(x, s);
        assert_eq!(y, s);
    }
}
