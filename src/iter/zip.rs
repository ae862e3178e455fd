//! `zip` and `zip_eq`: pairs of two indexed iterators' items (indexed), as long as the
//! shorter (`zip_eq`: of equal lengths).

use super::plumbing::{BridgeCallback, Producer, ProducerCallback, UnindexedConsumer};
use super::{IndexedParallelIterator, ParallelIterator};

/// Pairs of items ([`IndexedParallelIterator::zip`]).
#[derive(Clone, Debug)]
#[must_use = "iterator adaptors are lazy"]
pub struct Zip<A, B> {
    a: A,
    b: B,
}

impl<A, B> Zip<A, B> {
    pub(super) fn new(a: A, b: B) -> Self {
        Zip { a, b }
    }
}

impl<A, B> ParallelIterator for Zip<A, B>
where
    A: IndexedParallelIterator,
    B: IndexedParallelIterator,
{
    type Item = (A::Item, B::Item);

    fn drive_unindexed<C: UnindexedConsumer<Self::Item>>(self, consumer: C) -> C::Result {
        let len = self.len();
        self.with_producer(BridgeCallback { len, consumer })
    }
    fn opt_len(&self) -> Option<usize> {
        Some(self.len())
    }
}

impl<A, B> IndexedParallelIterator for Zip<A, B>
where
    A: IndexedParallelIterator,
    B: IndexedParallelIterator,
{
    fn len(&self) -> usize {
        self.a.len().min(self.b.len())
    }

    fn with_producer<CB: ProducerCallback<Self::Item>>(self, callback: CB) -> CB::Output {
        return self.a.with_producer(CallbackA {
            callback,
            b: self.b,
        });

        struct CallbackA<CB, B> {
            callback: CB,
            b: B,
        }
        impl<CB, B, TA> ProducerCallback<TA> for CallbackA<CB, B>
        where
            B: IndexedParallelIterator,
            CB: ProducerCallback<(TA, B::Item)>,
        {
            type Output = CB::Output;
            fn callback<PA: Producer<Item = TA>>(self, a: PA) -> CB::Output {
                self.b.with_producer(CallbackB {
                    callback: self.callback,
                    a,
                })
            }
        }

        struct CallbackB<CB, PA> {
            callback: CB,
            a: PA,
        }
        impl<CB, PA, TB> ProducerCallback<TB> for CallbackB<CB, PA>
        where
            PA: Producer,
            CB: ProducerCallback<(PA::Item, TB)>,
        {
            type Output = CB::Output;
            fn callback<PB: Producer<Item = TB>>(self, b: PB) -> CB::Output {
                self.callback.callback(ZipProducer { a: self.a, b })
            }
        }
    }
}

/// Both bases, whole: the shorter one's length is the piece's. Neither is cut to the other's
/// length (a cut at the common length is `split_at(len)` of a base as long as the other,
/// which producers written for rayon never see); a split strictly inside the shorter is
/// strictly inside both, and the sequential iterator stops with the shorter (from the
/// back, `std`'s `Zip` first drops the longer one's extra items).
struct ZipProducer<A, B> {
    a: A,
    b: B,
}

impl<A: Producer, B: Producer> Producer for ZipProducer<A, B> {
    type Item = (A::Item, B::Item);
    type IntoIter = std::iter::Zip<A::IntoIter, B::IntoIter>;

    fn into_iter(self) -> Self::IntoIter {
        self.a.into_iter().zip(self.b.into_iter())
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (a1, a2) = self.a.split_at(index);
        let (b1, b2) = self.b.split_at(index);
        (ZipProducer { a: a1, b: b1 }, ZipProducer { a: a2, b: b2 })
    }
    fn min_len(&self) -> usize {
        self.a.min_len().max(self.b.min_len())
    }
    fn max_len(&self) -> usize {
        self.a.max_len().min(self.b.max_len())
    }
}

/// Pairs of items of two iterators of equal lengths ([`IndexedParallelIterator::zip_eq`]).
///
/// ```
/// use zonal::prelude::*;
/// let v: Vec<(u32, char)> = (0..3u32).into_par_iter().zip_eq(vec!['a', 'b', 'c']).collect();
/// assert_eq!(v, [(0, 'a'), (1, 'b'), (2, 'c')]);
/// ```
#[derive(Clone, Debug)]
#[must_use = "iterator adaptors are lazy"]
pub struct ZipEq<A, B> {
    zip: Zip<A, B>,
}

impl<A: IndexedParallelIterator, B: IndexedParallelIterator> ZipEq<A, B> {
    /// # Panics
    /// If the lengths differ.
    pub(super) fn new(a: A, b: B) -> Self {
        assert_eq!(a.len(), b.len(), "zip_eq: the iterators' lengths differ");
        ZipEq {
            zip: Zip::new(a, b),
        }
    }
}

impl<A, B> ParallelIterator for ZipEq<A, B>
where
    A: IndexedParallelIterator,
    B: IndexedParallelIterator,
{
    type Item = (A::Item, B::Item);

    fn drive_unindexed<C: UnindexedConsumer<Self::Item>>(self, consumer: C) -> C::Result {
        self.zip.drive_unindexed(consumer)
    }
    fn opt_len(&self) -> Option<usize> {
        Some(self.zip.len())
    }
}

impl<A, B> IndexedParallelIterator for ZipEq<A, B>
where
    A: IndexedParallelIterator,
    B: IndexedParallelIterator,
{
    fn len(&self) -> usize {
        self.zip.len()
    }
    fn with_producer<CB: ProducerCallback<Self::Item>>(self, callback: CB) -> CB::Output {
        self.zip.with_producer(callback)
    }
}
