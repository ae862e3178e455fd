//! [`Piece`]: a base producer and its length, which an adaptor may split anywhere in
//! `0..=len` while the base is only ever split strictly inside (rayon's contract, which
//! producers written for rayon rely on: the plumbing's module docs, "Splitting").
//!
//! An adaptor whose cut points can fall at either end of one of its bases (`chain` at the
//! boundary between its sides, `skip(0)`, `take(len)`, `interleave` and `intersperse` when
//! one side of a piece runs out) holds that base as a `Piece`: a split at `0` or at `len`
//! hands the whole base to one side and an empty piece, with no base at all, to the other,
//! without asking the base.

use super::plumbing::{Folder, Producer};

/// A base producer of `len` items, or no base (`len == 0`, nothing to produce).
pub(super) struct Piece<P> {
    base: Option<P>,
    len: usize,
}

impl<P: Producer> Piece<P> {
    /// `base`, which holds `len` items.
    pub(super) fn new(base: P, len: usize) -> Self {
        Piece {
            base: Some(base),
            len,
        }
    }

    fn empty() -> Self {
        Piece { base: None, len: 0 }
    }

    /// The number of items.
    pub(super) fn len(&self) -> usize {
        self.len
    }
}

impl<P: Producer> Producer for Piece<P> {
    type Item = P::Item;
    type IntoIter = PieceIter<P::IntoIter>;

    fn into_iter(self) -> Self::IntoIter {
        PieceIter(self.base.map(P::into_iter))
    }

    /// Splits the base only strictly inside; at `0` (or with no base) the left piece is
    /// empty, at `len` or beyond the right one is.
    fn split_at(self, index: usize) -> (Self, Self) {
        let len = self.len;
        match self.base {
            Some(base) if 0 < index && index < len => {
                let (a, b) = base.split_at(index);
                (Piece::new(a, index), Piece::new(b, len - index))
            }
            base if index == 0 => (Piece::empty(), Piece { base, len }),
            base => (Piece { base, len }, Piece::empty()),
        }
    }

    fn min_len(&self) -> usize {
        self.base.as_ref().map_or(1, P::min_len)
    }

    fn max_len(&self) -> usize {
        self.base.as_ref().map_or(usize::MAX, P::max_len)
    }

    fn fold_with<F: Folder<P::Item>>(self, folder: F) -> F {
        match self.base {
            Some(base) => base.fold_with(folder),
            None => folder,
        }
    }
}

/// The sequential iterator of a [`Piece`]: the base's, or nothing.
pub(super) struct PieceIter<I>(Option<I>);

impl<I: Iterator> Iterator for PieceIter<I> {
    type Item = I::Item;

    #[inline]
    fn next(&mut self) -> Option<I::Item> {
        self.0.as_mut()?.next()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.as_ref().map_or((0, Some(0)), I::size_hint)
    }

    fn fold<B, F: FnMut(B, I::Item) -> B>(self, init: B, f: F) -> B {
        match self.0 {
            Some(it) => it.fold(init, f),
            None => init,
        }
    }
}

impl<I: DoubleEndedIterator> DoubleEndedIterator for PieceIter<I> {
    #[inline]
    fn next_back(&mut self) -> Option<I::Item> {
        self.0.as_mut()?.next_back()
    }

    fn rfold<B, F: FnMut(B, I::Item) -> B>(self, init: B, f: F) -> B {
        match self.0 {
            Some(it) => it.rfold(init, f),
            None => init,
        }
    }
}

impl<I: ExactSizeIterator> ExactSizeIterator for PieceIter<I> {}
