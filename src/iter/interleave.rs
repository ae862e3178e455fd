//! `interleave` and `interleave_shortest`: the items of two indexed iterators taken in
//! turns (indexed: a piece knows how many items of each side it has and which side is
//! next).

use super::piece::Piece;
use super::plumbing::{BridgeCallback, Producer, ProducerCallback, UnindexedConsumer};
use super::{IndexedParallelIterator, ParallelIterator, Take};

/// `i`'s and `j`'s items in turns, then the rest of the longer one
/// ([`IndexedParallelIterator::interleave`]).
///
/// ```
/// use zonal::prelude::*;
/// let v: Vec<i32> = (0..3i32).into_par_iter().interleave(10..15i32).collect();
/// assert_eq!(v, [0, 10, 1, 11, 2, 12, 13, 14]);
/// ```
#[derive(Clone, Debug)]
#[must_use = "iterator adaptors are lazy"]
pub struct Interleave<I, J> {
    i: I,
    j: J,
}

impl<I, J> Interleave<I, J> {
    pub(super) fn new(i: I, j: J) -> Self {
        Interleave { i, j }
    }
}

impl<I, J> ParallelIterator for Interleave<I, J>
where
    I: IndexedParallelIterator,
    J: IndexedParallelIterator<Item = I::Item>,
{
    type Item = I::Item;

    fn drive_unindexed<C: UnindexedConsumer<I::Item>>(self, consumer: C) -> C::Result {
        let len = self.len();
        self.with_producer(BridgeCallback { len, consumer })
    }
    fn opt_len(&self) -> Option<usize> {
        Some(self.len())
    }
}

impl<I, J> IndexedParallelIterator for Interleave<I, J>
where
    I: IndexedParallelIterator,
    J: IndexedParallelIterator<Item = I::Item>,
{
    fn len(&self) -> usize {
        self.i.len().checked_add(self.j.len()).expect("overflow")
    }

    fn with_producer<CB: ProducerCallback<I::Item>>(self, callback: CB) -> CB::Output {
        let (i_len, j_len) = (self.i.len(), self.j.len());
        return self.i.with_producer(CallbackI {
            callback,
            i_len,
            j_len,
            j: self.j,
        });

        struct CallbackI<CB, J> {
            callback: CB,
            i_len: usize,
            j_len: usize,
            j: J,
        }
        impl<CB, J> ProducerCallback<J::Item> for CallbackI<CB, J>
        where
            J: IndexedParallelIterator,
            CB: ProducerCallback<J::Item>,
        {
            type Output = CB::Output;
            fn callback<PI: Producer<Item = J::Item>>(self, i: PI) -> CB::Output {
                self.j.with_producer(CallbackJ {
                    callback: self.callback,
                    i_len: self.i_len,
                    j_len: self.j_len,
                    i,
                })
            }
        }

        struct CallbackJ<CB, PI> {
            callback: CB,
            i_len: usize,
            j_len: usize,
            i: PI,
        }
        impl<CB, PI> ProducerCallback<PI::Item> for CallbackJ<CB, PI>
        where
            PI: Producer,
            CB: ProducerCallback<PI::Item>,
        {
            type Output = CB::Output;
            fn callback<PJ: Producer<Item = PI::Item>>(self, j: PJ) -> CB::Output {
                // A piece may take all or none of a side's items: the sides are split only
                // strictly inside ([`Piece`]).
                self.callback.callback(InterleaveProducer {
                    i: Piece::new(self.i, self.i_len),
                    j: Piece::new(j, self.j_len),
                    i_len: self.i_len,
                    j_len: self.j_len,
                    i_next: true,
                })
            }
        }
    }
}

/// `i`'s and `j`'s items in turns, up to the end of the shorter one
/// ([`IndexedParallelIterator::interleave_shortest`]).
///
/// ```
/// use zonal::prelude::*;
/// let v: Vec<i32> = (0..4i32).into_par_iter().interleave_shortest(10..12i32).collect();
/// assert_eq!(v, [0, 10, 1, 11, 2]);
/// ```
#[derive(Clone, Debug)]
#[must_use = "iterator adaptors are lazy"]
pub struct InterleaveShortest<I, J> {
    interleave: Interleave<Take<I>, Take<J>>,
}

impl<I: IndexedParallelIterator, J: IndexedParallelIterator> InterleaveShortest<I, J> {
    pub(super) fn new(i: I, j: J) -> Self {
        let (i_len, j_len) = (i.len(), j.len());
        let interleave = if i_len <= j_len {
            // i ends first: as many of j.
            Interleave::new(i.take(i_len), j.take(i_len))
        } else {
            // j ends first: one more of i.
            Interleave::new(i.take(j_len + 1), j.take(j_len))
        };
        InterleaveShortest { interleave }
    }
}

impl<I, J> ParallelIterator for InterleaveShortest<I, J>
where
    I: IndexedParallelIterator,
    J: IndexedParallelIterator<Item = I::Item>,
{
    type Item = I::Item;

    fn drive_unindexed<C: UnindexedConsumer<I::Item>>(self, consumer: C) -> C::Result {
        self.interleave.drive_unindexed(consumer)
    }
    fn opt_len(&self) -> Option<usize> {
        Some(self.len())
    }
}

impl<I, J> IndexedParallelIterator for InterleaveShortest<I, J>
where
    I: IndexedParallelIterator,
    J: IndexedParallelIterator<Item = I::Item>,
{
    fn len(&self) -> usize {
        self.interleave.len()
    }
    fn with_producer<CB: ProducerCallback<I::Item>>(self, callback: CB) -> CB::Output {
        self.interleave.with_producer(callback)
    }
}

/// A piece: `i`'s `i_len` and `j`'s `j_len` items in turns starting with `i` when
/// `i_next`, then the rest of the longer side.
struct InterleaveProducer<PI, PJ> {
    i: PI,
    j: PJ,
    i_len: usize,
    j_len: usize,
    i_next: bool,
}

impl<PI, PJ> Producer for InterleaveProducer<PI, PJ>
where
    PI: Producer,
    PJ: Producer<Item = PI::Item>,
{
    type Item = PI::Item;
    type IntoIter = InterleaveIter<PI::IntoIter, PJ::IntoIter>;

    fn into_iter(self) -> Self::IntoIter {
        InterleaveIter {
            i_len: self.i_len,
            j_len: self.j_len,
            i: self.i.into_iter(),
            j: self.j.into_iter(),
            i_next: self.i_next,
        }
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (i_len, j_len) = (self.i_len, self.j_len);
        // In turns, `i` gives the odd one out when it is next.
        let (first, second) = (index.div_ceil(2), index / 2);
        let (i_turns, j_turns) = if self.i_next {
            (first, second)
        } else {
            (second, first)
        };
        let (i_count, j_count) = if i_turns <= i_len && j_turns <= j_len {
            (i_turns, j_turns)
        } else if i_turns > i_len {
            (i_len, index - i_len)
        } else {
            (index - j_len, j_len)
        };
        let (i1, i2) = self.i.split_at(i_count);
        let (j1, j2) = self.j.split_at(j_count);
        (
            InterleaveProducer {
                i: i1,
                j: j1,
                i_len: i_count,
                j_len: j_count,
                i_next: self.i_next,
            },
            InterleaveProducer {
                i: i2,
                j: j2,
                i_len: i_len - i_count,
                j_len: j_len - j_count,
                // Only matters while both sides have items, that is when the left part
                // took its items in turns.
                i_next: self.i_next != (index % 2 == 1),
            },
        )
    }
    fn min_len(&self) -> usize {
        self.i.min_len().max(self.j.min_len())
    }
    fn max_len(&self) -> usize {
        self.i.max_len().min(self.j.max_len())
    }
}

/// The sequential iterator of an interleaved piece (`i_len`, `j_len`: the items left on each
/// side).
struct InterleaveIter<I, J> {
    i: I,
    j: J,
    i_len: usize,
    j_len: usize,
    i_next: bool,
}

impl<I, J> Iterator for InterleaveIter<I, J>
where
    I: Iterator,
    J: Iterator<Item = I::Item>,
{
    type Item = I::Item;
    fn next(&mut self) -> Option<I::Item> {
        let take_i = match (self.i_len, self.j_len) {
            (0, 0) => return None,
            (0, _) => false,
            (_, 0) => true,
            _ => self.i_next,
        };
        self.i_next = !take_i;
        if take_i {
            self.i_len -= 1;
            self.i.next()
        } else {
            self.j_len -= 1;
            self.j.next()
        }
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.i_len + self.j_len;
        (n, Some(n))
    }
}

impl<I, J> DoubleEndedIterator for InterleaveIter<I, J>
where
    I: DoubleEndedIterator,
    J: DoubleEndedIterator<Item = I::Item>,
{
    fn next_back(&mut self) -> Option<I::Item> {
        // The longer side's rest comes last; with equal sides, the side that is not next.
        let take_i = match self.i_len.cmp(&self.j_len) {
            std::cmp::Ordering::Greater => true,
            std::cmp::Ordering::Less => false,
            std::cmp::Ordering::Equal if self.i_len == 0 => return None,
            std::cmp::Ordering::Equal => !self.i_next,
        };
        if take_i {
            self.i_len -= 1;
            self.i.next_back()
        } else {
            self.j_len -= 1;
            self.j.next_back()
        }
    }
}

impl<I, J> ExactSizeIterator for InterleaveIter<I, J>
where
    I: Iterator,
    J: Iterator<Item = I::Item>,
{
}
