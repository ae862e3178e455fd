//! `step_by`: every `step`-th item, starting with the first (indexed: item `k` of the result
//! is item `k * step` of the base).

use super::plumbing::{BridgeCallback, Producer, ProducerCallback, UnindexedConsumer};
use super::{IndexedParallelIterator, ParallelIterator};

/// Every `step`-th item ([`IndexedParallelIterator::step_by`]).
///
/// ```
/// use zonal::prelude::*;
/// let v: Vec<u32> = (0..10u32).into_par_iter().step_by(3).collect();
/// assert_eq!(v, [0, 3, 6, 9]);
/// ```
#[derive(Clone, Debug)]
#[must_use = "iterator adaptors are lazy"]
pub struct StepBy<I> {
    base: I,
    step: usize,
}

impl<I> StepBy<I> {
    /// # Panics
    /// If `step` is 0.
    pub(super) fn new(base: I, step: usize) -> Self {
        assert!(step != 0, "step_by: the step must not be 0");
        StepBy { base, step }
    }
}

impl<I: IndexedParallelIterator> ParallelIterator for StepBy<I> {
    type Item = I::Item;

    fn drive_unindexed<C: UnindexedConsumer<I::Item>>(self, consumer: C) -> C::Result {
        let len = self.len();
        self.with_producer(BridgeCallback { len, consumer })
    }
    fn opt_len(&self) -> Option<usize> {
        Some(self.len())
    }
}

impl<I: IndexedParallelIterator> IndexedParallelIterator for StepBy<I> {
    fn len(&self) -> usize {
        self.base.len().div_ceil(self.step)
    }

    fn with_producer<CB: ProducerCallback<I::Item>>(self, callback: CB) -> CB::Output {
        let len = self.base.len();
        return self.base.with_producer(Callback {
            callback,
            step: self.step,
            len,
        });

        struct Callback<CB> {
            callback: CB,
            step: usize,
            len: usize,
        }
        impl<T, CB: ProducerCallback<T>> ProducerCallback<T> for Callback<CB> {
            type Output = CB::Output;
            fn callback<P: Producer<Item = T>>(self, base: P) -> CB::Output {
                self.callback.callback(StepProducer {
                    base,
                    step: self.step,
                    len: self.len,
                })
            }
        }
    }
}

/// Every `step`-th item of the base producer (of `len` items).
struct StepProducer<P> {
    base: P,
    step: usize,
    len: usize,
}

impl<P: Producer> Producer for StepProducer<P> {
    type Item = P::Item;
    type IntoIter = StepIter<P::IntoIter>;

    fn into_iter(self) -> Self::IntoIter {
        StepIter {
            rest: self.len,
            len: self.len.div_ceil(self.step),
            base: self.base.into_iter(),
            step: self.step,
        }
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let at = index.saturating_mul(self.step).min(self.len);
        let (a, b) = self.base.split_at(at);
        (
            StepProducer {
                base: a,
                step: self.step,
                len: at,
            },
            StepProducer {
                base: b,
                step: self.step,
                len: self.len - at,
            },
        )
    }
    fn min_len(&self) -> usize {
        self.base.min_len().div_ceil(self.step)
    }
    fn max_len(&self) -> usize {
        (self.base.max_len() / self.step).max(1)
    }
}

/// The sequential iterator of a stepped piece: `len` items left to yield out of the base's
/// `rest` items; the base items between them are dropped as they are passed.
struct StepIter<I> {
    base: I,
    step: usize,
    len: usize,
    rest: usize,
}

impl<I: Iterator> Iterator for StepIter<I> {
    type Item = I::Item;
    fn next(&mut self) -> Option<I::Item> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        let x = self.base.next();
        self.rest -= 1;
        if self.len > 0 {
            // Drop the items up to the next one yielded.
            for _ in 1..self.step {
                self.base.next();
                self.rest -= 1;
            }
        }
        x
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.len, Some(self.len))
    }
}

impl<I: DoubleEndedIterator> DoubleEndedIterator for StepIter<I> {
    fn next_back(&mut self) -> Option<I::Item> {
        if self.len == 0 {
            return None;
        }
        // The last item yielded is at `(len - 1) * step` from the front: drop those after it.
        let last = (self.len - 1) * self.step;
        while self.rest > last + 1 {
            self.base.next_back();
            self.rest -= 1;
        }
        self.len -= 1;
        self.rest -= 1;
        self.base.next_back()
    }
}

impl<I: Iterator> ExactSizeIterator for StepIter<I> {}
