//! [`split`](crate::iter::split): an unindexed source made of a piece of data and a function
//! that splits a piece in two (or says it is too small to split).

use std::fmt;

use crate::iter::plumbing::{bridge_unindexed, Folder, UnindexedConsumer, UnindexedProducer};
use crate::iter::ParallelIterator;

/// A parallel iterator over the pieces that `splitter` splits `data` into (rayon's `Split`),
/// made by [`split`](crate::iter::split). Its items are the pieces that were not split
/// further, in order.
#[derive(Clone)]
pub struct Split<D, S> {
    data: D,
    splitter: S,
}

impl<D, S> Split<D, S> {
    pub(crate) fn new(data: D, splitter: S) -> Self {
        Split { data, splitter }
    }
}

impl<D: fmt::Debug, S> fmt::Debug for Split<D, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Split").field("data", &self.data).finish()
    }
}

impl<D, S> ParallelIterator for Split<D, S>
where
    D: Send,
    S: Fn(D) -> (D, Option<D>) + Sync + Send,
{
    type Item = D;
    fn drive_unindexed<C: UnindexedConsumer<D>>(self, consumer: C) -> C::Result {
        let producer = SplitProducer {
            data: self.data,
            splitter: &self.splitter,
        };
        bridge_unindexed(producer, consumer)
    }
}

/// One piece, and the shared splitter.
struct SplitProducer<'s, D, S> {
    data: D,
    splitter: &'s S,
}

impl<D, S> UnindexedProducer for SplitProducer<'_, D, S>
where
    D: Send,
    S: Fn(D) -> (D, Option<D>) + Sync,
{
    type Item = D;
    fn split(self) -> (Self, Option<Self>) {
        let splitter = self.splitter;
        let (left, right) = splitter(self.data);
        let right = right.map(|data| SplitProducer { data, splitter });
        (
            SplitProducer {
                data: left,
                splitter,
            },
            right,
        )
    }
    fn fold_with<F: Folder<D>>(self, folder: F) -> F {
        folder.consume(self.data)
    }
}
