//! [`repeat`](crate::iter::repeat) (endless, unindexed) and
//! [`repeat_n`](crate::iter::repeat_n) (`n` clones, indexed): clones of one item.

use std::fmt;

use crate::iter::plumbing::{
    bridge, bridge_unindexed, Folder, Producer, ProducerCallback, UnindexedConsumer,
    UnindexedProducer,
};
use crate::iter::{IndexedParallelIterator, IntoParallelIterator, ParallelIterator, Zip};

/// An endless parallel iterator of clones of one item (rayon's `Repeat`), made by
/// [`repeat`](crate::iter::repeat). Bound it with [`take`](Self::take), a short-circuiting
/// consumer (`find_any`, `any`, ...), or [`zip`](Self::zip).
#[derive(Clone, Debug)]
pub struct Repeat<T> {
    element: T,
}

impl<T: Clone + Send> Repeat<T> {
    pub(crate) fn new(element: T) -> Self {
        Repeat { element }
    }

    /// The first `n` items: [`repeat_n`](crate::iter::repeat_n)`(element, n)`.
    ///
    /// ```
    /// use zonal::prelude::*;
    /// let v: Vec<char> = zonal::iter::repeat('x').take(3).collect();
    /// assert_eq!(v, ['x', 'x', 'x']);
    /// ```
    pub fn take(self, n: usize) -> RepeatN<T> {
        RepeatN::new(self.element, n)
    }

    /// Pairs each item of `zip_op` with a clone of the element (as many as `zip_op` has).
    ///
    /// ```
    /// use zonal::prelude::*;
    /// let v: Vec<(u8, u32)> = zonal::iter::repeat(7u8).zip(0..3u32).collect();
    /// assert_eq!(v, [(7, 0), (7, 1), (7, 2)]);
    /// ```
    pub fn zip<Z>(self, zip_op: Z) -> Zip<RepeatN<T>, Z::Iter>
    where
        Z: IntoParallelIterator,
        Z::Iter: IndexedParallelIterator,
    {
        let z = zip_op.into_par_iter();
        let n = z.len();
        self.take(n).zip(z)
    }
}

impl<T: Clone + Send> ParallelIterator for Repeat<T> {
    type Item = T;
    fn drive_unindexed<C: UnindexedConsumer<T>>(self, consumer: C) -> C::Result {
        bridge_unindexed(
            RepeatProducer {
                element: self.element,
            },
            consumer,
        )
    }
}

/// Endless clones; every split makes one more clone.
struct RepeatProducer<T> {
    element: T,
}

impl<T: Clone + Send> UnindexedProducer for RepeatProducer<T> {
    type Item = T;
    fn split(self) -> (Self, Option<Self>) {
        let left = RepeatProducer {
            element: self.element.clone(),
        };
        (left, Some(self))
    }
    fn fold_with<F: Folder<T>>(self, folder: F) -> F {
        folder.consume_iter(std::iter::repeat(self.element))
    }
}

/// A parallel iterator of `n` clones of one item (rayon's `RepeatN`), made by
/// [`repeat_n`](crate::iter::repeat_n): indexed.
#[derive(Clone)]
pub struct RepeatN<T> {
    /// The element, `None` when `count` is 0 (no clone is ever made then).
    element: Option<T>,
    count: usize,
}

impl<T> RepeatN<T> {
    pub(crate) fn new(element: T, count: usize) -> Self {
        RepeatN {
            element: (count > 0).then_some(element),
            count,
        }
    }
}

impl<T: fmt::Debug> fmt::Debug for RepeatN<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("RepeatN");
        d.field("count", &self.count);
        match &self.element {
            Some(element) => d.field("element", element).finish(),
            None => d.finish_non_exhaustive(),
        }
    }
}

impl<T: Clone + Send> ParallelIterator for RepeatN<T> {
    type Item = T;
    fn drive_unindexed<C: UnindexedConsumer<T>>(self, consumer: C) -> C::Result {
        bridge(self, consumer)
    }
    fn opt_len(&self) -> Option<usize> {
        Some(self.count)
    }
}

impl<T: Clone + Send> IndexedParallelIterator for RepeatN<T> {
    fn len(&self) -> usize {
        self.count
    }
    fn with_producer<CB: ProducerCallback<T>>(self, callback: CB) -> CB::Output {
        callback.callback(self)
    }
}

/// The producer: the element is cloned once per split and once per item but the last of
/// each piece, which takes the element itself.
impl<T: Clone + Send> Producer for RepeatN<T> {
    type Item = T;
    type IntoIter = RepeatNIter<T>;
    fn into_iter(self) -> RepeatNIter<T> {
        RepeatNIter {
            element: self.element,
            count: self.count,
        }
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let rest = self.count - index;
        match self.element {
            None => (self, RepeatN::new_empty()),
            Some(element) if index == 0 => (RepeatN::new_empty(), RepeatN::new(element, rest)),
            Some(element) if rest == 0 => (RepeatN::new(element, index), RepeatN::new_empty()),
            Some(element) => (
                RepeatN::new(element.clone(), index),
                RepeatN::new(element, rest),
            ),
        }
    }
}

impl<T> RepeatN<T> {
    fn new_empty() -> Self {
        RepeatN {
            element: None,
            count: 0,
        }
    }
}

/// The sequential iterator of a [`RepeatN`]: `count` clones (the last one the element).
#[derive(Clone, Debug)]
pub struct RepeatNIter<T> {
    element: Option<T>,
    count: usize,
}

impl<T: Clone> Iterator for RepeatNIter<T> {
    type Item = T;
    #[inline]
    fn next(&mut self) -> Option<T> {
        match self.count {
            0 => None,
            1 => {
                self.count = 0;
                self.element.take()
            }
            _ => {
                self.count -= 1;
                self.element.clone()
            }
        }
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.count, Some(self.count))
    }
}

impl<T: Clone> DoubleEndedIterator for RepeatNIter<T> {
    #[inline]
    fn next_back(&mut self) -> Option<T> {
        self.next()
    }
}

impl<T: Clone> ExactSizeIterator for RepeatNIter<T> {}
