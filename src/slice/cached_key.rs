//! `par_sort_by_cached_key`: the key of every element computed once, in parallel; the
//! (key, index) pairs sorted in parallel; the slice then permuted in place to that order.

use crate::iter::{IndexedParallelIterator, IntoParallelRefMutIterator, ParallelIterator};
use crate::slice::ParallelSliceMut;

/// Sorts `slice` stably by `f`, calling `f` once per element.
pub(super) fn par_sort_by_cached_key<T, K, F>(slice: &mut [T], f: F)
where
    T: Send,
    K: Ord + Send,
    F: Fn(&T) -> K + Sync,
{
    if slice.len() < 2 {
        return;
    }
    let mut keyed: Vec<(K, usize)> = slice
        .par_iter_mut()
        .enumerate()
        .map(|(i, x)| (f(x), i))
        .collect();
    // The indices make every pair distinct, so an unstable sort keeps equal keys in their
    // original order.
    keyed.par_sort_unstable();
    // `order[i]`: the index of the element that belongs at `i`.
    let order: Vec<usize> = keyed.into_iter().map(|(_, i)| i).collect();
    apply_permutation(slice, order);
}

/// Moves the element at `order[i]` to `i`, for every `i`, by following the permutation's
/// cycles with swaps.
fn apply_permutation<T>(slice: &mut [T], mut order: Vec<usize>) {
    for start in 0..slice.len() {
        let mut i = start;
        // `order[i] == i` once `i` holds its element; a cycle ends back at `start`.
        while order[i] != start {
            let next = order[i];
            slice.swap(i, next);
            order[i] = i;
            i = next;
        }
        order[i] = i;
    }
}

#[cfg(test)]
mod tests {
    use super::apply_permutation;

    #[test]
    fn permutation_cycles() {
        let mut v = ['a', 'b', 'c', 'd', 'e'];
        apply_permutation(&mut v, vec![3, 0, 4, 1, 2]);
        assert_eq!(v, ['d', 'a', 'e', 'b', 'c']);
        let mut w = [1, 2, 3];
        apply_permutation(&mut w, vec![0, 1, 2]);
        assert_eq!(w, [1, 2, 3]);
    }
}
