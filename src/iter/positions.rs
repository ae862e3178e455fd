//! `positions`: the indexes of the items for which a predicate holds, in order.

use super::plumbing::UnindexedConsumer;
use super::{IndexedParallelIterator, ParallelIterator};

/// The indexes of the matching items ([`IndexedParallelIterator::positions`]).
///
/// ```
/// use zonal::prelude::*;
/// let v: Vec<usize> = [1, 4, 6, 7, 8].par_iter().positions(|&x| x % 2 == 0).collect();
/// assert_eq!(v, [1, 2, 4]);
/// ```
#[derive(Clone)]
#[must_use = "iterator adaptors are lazy"]
pub struct Positions<I, P> {
    base: I,
    predicate: P,
}

/// Shows the base iterator (and the state), not the closures, as rayon's.
impl<I: std::fmt::Debug, P> std::fmt::Debug for Positions<I, P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Positions")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

impl<I, P> Positions<I, P> {
    pub(super) fn new(base: I, predicate: P) -> Self {
        Positions { base, predicate }
    }
}

impl<I, P> ParallelIterator for Positions<I, P>
where
    I: IndexedParallelIterator,
    P: Fn(I::Item) -> bool + Sync + Send,
{
    type Item = usize;

    fn drive_unindexed<C: UnindexedConsumer<usize>>(self, consumer: C) -> C::Result {
        let predicate = &self.predicate;
        self.base
            .enumerate()
            .filter_map(move |(i, x)| predicate(x).then_some(i))
            .drive_unindexed(consumer)
    }
}
