//! The splitting engine behind every "split at separators" iterator (`par_split` and its
//! kin on slices and strings, `par_chunk_by`): an unindexed producer over a piece of data
//! that splits itself *at a separator* near its middle, so that the pieces each half yields
//! sequentially, concatenated, are exactly those the whole would yield.
//!
//! The producer remembers how far its data is known to hold no separator (`tail`: none at
//! positions `tail..`), so no position is searched twice: a split searches forward from the
//! middle of `..tail`, then backward from it, and the halves inherit what was learnt.

use crate::iter::plumbing::{Folder, UnindexedProducer};

/// Data that can be split at separators described by `P` (a slice and a predicate, a string
/// and a pattern). Positions are indices into the data (bytes for strings).
pub(crate) trait Fissile<P>: Sized + Send {
    /// The length of the data.
    fn length(&self) -> usize;

    /// A position near `end / 2` where the data may be cut (`0..=end`; a char boundary for
    /// strings).
    fn midpoint(&self, end: usize) -> usize;

    /// The first separator starting in `start..end`.
    fn find(&self, sep: &P, start: usize, end: usize) -> Option<usize>;

    /// The last separator starting in `..end`.
    fn rfind(&self, sep: &P, end: usize) -> Option<usize>;

    /// Splits around the separator at `pos`: the data before it (and the separator itself
    /// when `inclusive`), and the data after it.
    fn cut(self, sep: &P, pos: usize, inclusive: bool) -> (Self, Self);

    /// Feeds the pieces of the data, sequentially, to `folder`; `skip_last`: drop a last piece
    /// that is empty (`split_terminator`).
    fn fold_pieces<F: Folder<Self>>(
        self,
        sep: &P,
        folder: F,
        inclusive: bool,
        skip_last: bool,
    ) -> F;
}

/// The unindexed producer of the pieces of `data` between separators.
pub(crate) struct FissionProducer<'p, P, D> {
    data: D,
    sep: &'p P,
    /// No separator starts at `tail..` (searched already).
    tail: usize,
    inclusive: bool,
    skip_last: bool,
}

impl<'p, P, D: Fissile<P>> FissionProducer<'p, P, D> {
    /// The producer of all of `data`'s pieces; `inclusive`: each piece keeps its separator;
    /// `skip_last`: a last piece that is empty is dropped.
    pub(crate) fn new(data: D, sep: &'p P, inclusive: bool, skip_last: bool) -> Self {
        FissionProducer {
            tail: data.length(),
            data,
            sep,
            inclusive,
            skip_last,
        }
    }
}

impl<P: Sync, D: Fissile<P>> UnindexedProducer for FissionProducer<'_, P, D> {
    type Item = D;

    fn split(self) -> (Self, Option<Self>) {
        if self.tail == 0 {
            return (self, None);
        }
        let mid = self.data.midpoint(self.tail);
        let (pos, forward) = match self.data.find(self.sep, mid, self.tail) {
            Some(pos) => (pos, true),
            None => match self.data.rfind(self.sep, mid) {
                Some(pos) => (pos, false),
                None => {
                    // No separator at all: nothing to split.
                    let whole = FissionProducer { tail: 0, ..self };
                    return (whole, None);
                }
            },
        };
        let total = self.data.length();
        let (left, right) = self.data.cut(self.sep, pos, self.inclusive);
        let right_start = total - right.length();
        // Left: nothing at `mid..pos` (forward) or `pos + 1..mid` (backward), and the
        // separator at `pos` is no cut point of its own.
        let left = FissionProducer {
            data: left,
            sep: self.sep,
            tail: mid.min(pos),
            inclusive: self.inclusive,
            skip_last: false,
        };
        // Right: forward, nothing past the old tail; backward, nothing at all.
        let right_tail = if forward {
            self.tail.saturating_sub(right_start)
        } else {
            0
        };
        let right = FissionProducer {
            data: right,
            sep: self.sep,
            tail: right_tail,
            inclusive: self.inclusive,
            skip_last: self.skip_last,
        };
        (left, Some(right))
    }

    fn fold_with<F: Folder<D>>(self, folder: F) -> F {
        self.data
            .fold_pieces(self.sep, folder, self.inclusive, self.skip_last)
    }
}
