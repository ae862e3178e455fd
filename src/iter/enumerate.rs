//! `enumerate`: items paired with their indexes (indexed).

use super::plumbing::{BridgeCallback, Producer, ProducerCallback, UnindexedConsumer};
use super::{IndexedParallelIterator, ParallelIterator};

/// Items paired with their indexes ([`IndexedParallelIterator::enumerate`]).
#[derive(Clone, Debug)]
#[must_use = "iterator adaptors are lazy"]
pub struct Enumerate<I> {
    base: I,
}

impl<I> Enumerate<I> {
    pub(super) fn new(base: I) -> Self {
        Enumerate { base }
    }
}

impl<I: IndexedParallelIterator> ParallelIterator for Enumerate<I> {
    type Item = (usize, I::Item);

    fn drive_unindexed<C: UnindexedConsumer<Self::Item>>(self, consumer: C) -> C::Result {
        let len = self.len();
        self.with_producer(BridgeCallback { len, consumer })
    }
    fn opt_len(&self) -> Option<usize> {
        Some(self.base.len())
    }
}

impl<I: IndexedParallelIterator> IndexedParallelIterator for Enumerate<I> {
    fn len(&self) -> usize {
        self.base.len()
    }

    fn with_producer<CB: ProducerCallback<Self::Item>>(self, callback: CB) -> CB::Output {
        let len = self.base.len();
        return self.base.with_producer(Callback { callback, len });

        struct Callback<CB> {
            callback: CB,
            len: usize,
        }
        impl<T, CB: ProducerCallback<(usize, T)>> ProducerCallback<T> for Callback<CB> {
            type Output = CB::Output;
            fn callback<P: Producer<Item = T>>(self, base: P) -> CB::Output {
                self.callback.callback(EnumerateProducer {
                    base,
                    offset: 0,
                    len: self.len,
                })
            }
        }
    }
}

/// The base producer's `len` items, the first one at index `offset`.
struct EnumerateProducer<P> {
    base: P,
    offset: usize,
    len: usize,
}

impl<P: Producer> Producer for EnumerateProducer<P> {
    type Item = (usize, P::Item);
    type IntoIter = EnumerateIter<P::IntoIter>;

    fn into_iter(self) -> Self::IntoIter {
        EnumerateIter {
            front: self.offset,
            back: self.offset + self.len,
            iter: self.base.into_iter(),
        }
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (a, b) = self.base.split_at(index);
        (
            EnumerateProducer {
                base: a,
                offset: self.offset,
                len: index,
            },
            EnumerateProducer {
                base: b,
                offset: self.offset + index,
                len: self.len - index,
            },
        )
    }
    fn min_len(&self) -> usize {
        self.base.min_len()
    }
    fn max_len(&self) -> usize {
        self.base.max_len()
    }
}

/// The sequential iterator of an enumerated producer: `front..back` are the indexes of the
/// items left (the producer's length is exact).
struct EnumerateIter<I> {
    iter: I,
    front: usize,
    back: usize,
}

impl<I: Iterator> Iterator for EnumerateIter<I> {
    type Item = (usize, I::Item);
    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let x = self.iter.next()?;
        self.front += 1;
        Some((self.front - 1, x))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.iter.size_hint()
    }
}

impl<I: ExactSizeIterator> ExactSizeIterator for EnumerateIter<I> {}

impl<I: DoubleEndedIterator> DoubleEndedIterator for EnumerateIter<I> {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        let x = self.iter.next_back()?;
        self.back -= 1;
        Some((self.back, x))
    }
}
