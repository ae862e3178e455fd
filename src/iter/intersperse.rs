//! `intersperse`: a clone of a separator between every two items (indexed when the base
//! is: a piece of the interspersed sequence knows whether it starts with a separator).

use std::cell::Cell;

use super::piece::Piece;
use super::plumbing::{Consumer, Folder, Producer, ProducerCallback, UnindexedConsumer};
use super::{IndexedParallelIterator, ParallelIterator};

/// The items with a separator between every two ([`ParallelIterator::intersperse`]).
///
/// ```
/// use zonal::prelude::*;
/// let v: Vec<i32> = (1..4i32).into_par_iter().intersperse(0).collect();
/// assert_eq!(v, [1, 0, 2, 0, 3]);
/// ```
///
/// On an unindexed iterator, a piece that is not the first one puts a separator before its
/// first item, as rayon's: when all the pieces before it are empty, the result starts with
/// a separator. Indexed iterators are exact.
#[derive(Clone, Debug)]
#[must_use = "iterator adaptors are lazy"]
pub struct Intersperse<I: ParallelIterator> {
    base: I,
    item: I::Item,
}

impl<I: ParallelIterator> Intersperse<I> {
    pub(super) fn new(base: I, item: I::Item) -> Self {
        Intersperse { base, item }
    }
}

impl<I> ParallelIterator for Intersperse<I>
where
    I: ParallelIterator,
    I::Item: Clone + Send,
{
    type Item = I::Item;

    fn drive_unindexed<C: UnindexedConsumer<I::Item>>(self, consumer: C) -> C::Result {
        self.base.drive_unindexed(IntersperseConsumer {
            base: consumer,
            item: self.item,
            clone_first: Cell::new(false),
        })
    }
    fn opt_len(&self) -> Option<usize> {
        Some(interspersed_len(self.base.opt_len()?))
    }
}

fn interspersed_len(len: usize) -> usize {
    len.checked_mul(2)
        .and_then(|n| n.checked_sub(1))
        .unwrap_or(0)
        .max(len)
}

impl<I> IndexedParallelIterator for Intersperse<I>
where
    I: IndexedParallelIterator,
    I::Item: Clone + Send,
{
    fn len(&self) -> usize {
        interspersed_len(self.base.len())
    }

    fn with_producer<CB: ProducerCallback<I::Item>>(self, callback: CB) -> CB::Output {
        let (len, base_len) = (self.len(), self.base.len());
        return self.base.with_producer(Callback {
            callback,
            item: self.item,
            len,
            base_len,
        });

        struct Callback<CB, T> {
            callback: CB,
            item: T,
            len: usize,
            base_len: usize,
        }
        impl<T: Clone + Send, CB: ProducerCallback<T>> ProducerCallback<T> for Callback<CB, T> {
            type Output = CB::Output;
            fn callback<P: Producer<Item = T>>(self, base: P) -> CB::Output {
                // A piece of one separator has no base item: the base is split only
                // strictly inside ([`Piece`]).
                self.callback.callback(IntersperseProducer {
                    base: Piece::new(base, self.base_len),
                    item: self.item,
                    len: self.len,
                    clone_first: false,
                })
            }
        }
    }
}

/// A piece of `len` positions of the interspersed sequence; `clone_first`: it starts with a
/// separator (at an odd position).
struct IntersperseProducer<P: Producer> {
    base: P,
    item: P::Item,
    len: usize,
    clone_first: bool,
}

impl<P> Producer for IntersperseProducer<P>
where
    P: Producer,
    P::Item: Clone + Send,
{
    type Item = P::Item;
    type IntoIter = IntersperseIter<P::IntoIter>;

    fn into_iter(self) -> Self::IntoIter {
        let clone_last = self.len > 0 && (self.clone_first != ((self.len - 1) % 2 == 1));
        IntersperseIter {
            base: self.base.into_iter(),
            item: self.item,
            len: self.len,
            clone_first: self.clone_first,
            clone_last,
        }
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        debug_assert!(index <= self.len);
        // The base items of the left part: its even positions (relative to the sequence).
        let base_index = if self.clone_first {
            index / 2
        } else {
            index.div_ceil(2)
        };
        let (a, b) = self.base.split_at(base_index);
        (
            IntersperseProducer {
                base: a,
                item: self.item.clone(),
                len: index,
                clone_first: self.clone_first,
            },
            IntersperseProducer {
                base: b,
                item: self.item,
                len: self.len - index,
                clone_first: self.clone_first != (index % 2 == 1),
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

/// The sequential iterator of an interspersed piece: `len` positions left, the front one a
/// separator when `clone_first`, the back one when `clone_last`.
struct IntersperseIter<I: Iterator> {
    base: I,
    item: I::Item,
    len: usize,
    clone_first: bool,
    clone_last: bool,
}

impl<I: Iterator> Iterator for IntersperseIter<I>
where
    I::Item: Clone,
{
    type Item = I::Item;
    fn next(&mut self) -> Option<I::Item> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        if self.clone_first {
            self.clone_first = false;
            Some(self.item.clone())
        } else {
            self.clone_first = true;
            self.base.next()
        }
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.len, Some(self.len))
    }
}

impl<I: DoubleEndedIterator> DoubleEndedIterator for IntersperseIter<I>
where
    I::Item: Clone,
{
    fn next_back(&mut self) -> Option<I::Item> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        if self.clone_last {
            self.clone_last = false;
            Some(self.item.clone())
        } else {
            self.clone_last = true;
            self.base.next_back()
        }
    }
}

impl<I: ExactSizeIterator> ExactSizeIterator for IntersperseIter<I> where I::Item: Clone {}

/// The unindexed case: every consumer split off to the right puts a separator before its
/// first item; every item after the first one of a piece gets one.
struct IntersperseConsumer<C, T> {
    base: C,
    item: T,
    /// A split sets it on the right consumer (rayon's `Cell`), through `&self`.
    clone_first: Cell<bool>,
}

impl<T: Clone + Send, C: Consumer<T>> Consumer<T> for IntersperseConsumer<C, T> {
    type Folder = IntersperseConsumer<C::Folder, T>;
    type Reducer = C::Reducer;
    type Result = C::Result;

    fn split_at(self, index: usize) -> (Self, Self, Self::Reducer) {
        // `index` counts the base's items: the left piece passes on each with a separator
        // before it, but the first when it does not start with one.
        let base_index = index + index.saturating_sub(usize::from(!self.clone_first.get()));
        let (left_base, right_base, reducer) = self.base.split_at(base_index);
        let left = IntersperseConsumer {
            base: left_base,
            item: self.item.clone(),
            clone_first: self.clone_first,
        };
        let right = IntersperseConsumer {
            base: right_base,
            item: self.item,
            clone_first: Cell::new(true),
        };
        (left, right, reducer)
    }

    fn into_folder(self) -> Self::Folder {
        IntersperseConsumer {
            base: self.base.into_folder(),
            item: self.item,
            clone_first: self.clone_first,
        }
    }
    fn full(&self) -> bool {
        self.base.full()
    }
}

impl<T: Clone + Send, C: UnindexedConsumer<T>> UnindexedConsumer<T> for IntersperseConsumer<C, T> {
    fn split_off_left(&self) -> Self {
        let left = IntersperseConsumer {
            base: self.base.split_off_left(),
            item: self.item.clone(),
            clone_first: Cell::new(self.clone_first.get()),
        };
        self.clone_first.set(true);
        left
    }
    fn to_reducer(&self) -> C::Reducer {
        self.base.to_reducer()
    }
}

impl<T: Clone, G: Folder<T>> Folder<T> for IntersperseConsumer<G, T> {
    type Result = G::Result;

    fn consume(mut self, item: T) -> Self {
        if self.clone_first.get() {
            self.base = self.base.consume(self.item.clone());
            if self.base.full() {
                return self;
            }
        }
        self.clone_first.set(true);
        self.base = self.base.consume(item);
        self
    }
    fn complete(self) -> G::Result {
        self.base.complete()
    }
    fn full(&self) -> bool {
        self.base.full()
    }
}
