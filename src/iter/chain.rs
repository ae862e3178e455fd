//! `chain`: one iterator's items, then another's (indexed when both are).

use super::piece::{Piece, PieceIter};
use super::plumbing::{join_reduce, Producer, ProducerCallback, UnindexedConsumer};
use super::{IndexedParallelIterator, ParallelIterator};

/// `a`'s items, then `b`'s ([`ParallelIterator::chain`]).
#[derive(Clone, Debug)]
#[must_use = "iterator adaptors are lazy"]
pub struct Chain<A, B> {
    a: A,
    b: B,
}

impl<A, B> Chain<A, B> {
    pub(super) fn new(a: A, b: B) -> Self {
        Chain { a, b }
    }
}

impl<A, B> ParallelIterator for Chain<A, B>
where
    A: ParallelIterator,
    B: ParallelIterator<Item = A::Item>,
{
    type Item = A::Item;

    fn drive_unindexed<C: UnindexedConsumer<Self::Item>>(self, consumer: C) -> C::Result {
        let Chain { a, b } = self;
        // When `a` knows its length, split at it: a consumer that places items by index
        // (collect into a `Vec`) then gives each side its own part.
        let (left, consumer, reducer) = match a.opt_len() {
            Some(len) => consumer.split_at(len),
            None => {
                let reducer = consumer.to_reducer();
                (consumer.split_off_left(), consumer, reducer)
            }
        };
        join_reduce(
            reducer,
            move || a.drive_unindexed(left),
            move || b.drive_unindexed(consumer),
        )
    }
    fn opt_len(&self) -> Option<usize> {
        self.a.opt_len()?.checked_add(self.b.opt_len()?)
    }
}

impl<A, B> IndexedParallelIterator for Chain<A, B>
where
    A: IndexedParallelIterator,
    B: IndexedParallelIterator<Item = A::Item>,
{
    fn len(&self) -> usize {
        self.a.len() + self.b.len()
    }

    fn with_producer<CB: ProducerCallback<Self::Item>>(self, callback: CB) -> CB::Output {
        let (a_len, b_len) = (self.a.len(), self.b.len());
        return self.a.with_producer(CallbackA {
            callback,
            a_len,
            b_len,
            b: self.b,
        });

        struct CallbackA<CB, B> {
            callback: CB,
            a_len: usize,
            b_len: usize,
            b: B,
        }
        impl<CB, B> ProducerCallback<B::Item> for CallbackA<CB, B>
        where
            B: IndexedParallelIterator,
            CB: ProducerCallback<B::Item>,
        {
            type Output = CB::Output;
            fn callback<PA: Producer<Item = B::Item>>(self, a: PA) -> CB::Output {
                self.b.with_producer(CallbackB {
                    callback: self.callback,
                    a: Piece::new(a, self.a_len),
                    b_len: self.b_len,
                })
            }
        }

        struct CallbackB<CB, PA> {
            callback: CB,
            a: Piece<PA>,
            b_len: usize,
        }
        impl<CB, PA> ProducerCallback<PA::Item> for CallbackB<CB, PA>
        where
            PA: Producer,
            CB: ProducerCallback<PA::Item>,
        {
            type Output = CB::Output;
            fn callback<PB: Producer<Item = PA::Item>>(self, b: PB) -> CB::Output {
                self.callback.callback(ChainProducer {
                    a: self.a,
                    b: Piece::new(b, self.b_len),
                })
            }
        }
    }
}

/// `a`'s items, then `b`'s. A split at the boundary (or at either end) hands a side whole
/// to one part and nothing of it to the other ([`Piece`]): neither base is split at its
/// own `0` or `len`.
struct ChainProducer<A, B> {
    a: Piece<A>,
    b: Piece<B>,
}

impl<A: Producer, B: Producer<Item = A::Item>> Producer for ChainProducer<A, B> {
    type Item = A::Item;
    type IntoIter = ChainIter<PieceIter<A::IntoIter>, PieceIter<B::IntoIter>>;

    fn into_iter(self) -> Self::IntoIter {
        ChainIter {
            a: self.a.into_iter(),
            b: self.b.into_iter(),
        }
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let a_len = self.a.len();
        let (a1, a2) = self.a.split_at(index);
        let (b1, b2) = self.b.split_at(index.saturating_sub(a_len));
        (
            ChainProducer { a: a1, b: b1 },
            ChainProducer { a: a2, b: b2 },
        )
    }
    fn min_len(&self) -> usize {
        self.a.min_len().max(self.b.min_len())
    }
    fn max_len(&self) -> usize {
        self.a.max_len().min(self.b.max_len())
    }
    fn fold_with<F: super::plumbing::Folder<A::Item>>(self, folder: F) -> F {
        let folder = self.a.fold_with(folder);
        if folder.full() {
            return folder;
        }
        self.b.fold_with(folder)
    }
}

/// The sequential iterator of a chained producer: `a`'s items, then `b`'s (unlike
/// `std::iter::Chain`, exact-sized when both sides are).
struct ChainIter<A, B> {
    a: A,
    b: B,
}

impl<A: Iterator, B: Iterator<Item = A::Item>> Iterator for ChainIter<A, B> {
    type Item = A::Item;
    #[inline]
    fn next(&mut self) -> Option<A::Item> {
        self.a.next().or_else(|| self.b.next())
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let (a, b) = (self.a.size_hint(), self.b.size_hint());
        let hi = match (a.1, b.1) {
            (Some(x), Some(y)) => x.checked_add(y),
            _ => None,
        };
        (a.0.saturating_add(b.0), hi)
    }
}

impl<A, B> DoubleEndedIterator for ChainIter<A, B>
where
    A: DoubleEndedIterator,
    B: DoubleEndedIterator<Item = A::Item>,
{
    #[inline]
    fn next_back(&mut self) -> Option<A::Item> {
        self.b.next_back().or_else(|| self.a.next_back())
    }
}

impl<A, B> ExactSizeIterator for ChainIter<A, B>
where
    A: ExactSizeIterator,
    B: ExactSizeIterator<Item = A::Item>,
{
}
