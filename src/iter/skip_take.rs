//! `skip` and `take` on indexed iterators (indexed).

use super::piece::Piece;
use super::plumbing::{BridgeCallback, Producer, ProducerCallback, UnindexedConsumer};
use super::{IndexedParallelIterator, ParallelIterator};

macro_rules! cut {
    ($(#[$doc:meta])* $name:ident, |$len:ident, $n:ident| $len_expr:expr, |$p:ident, $m:ident| $pick:expr) => {
        $(#[$doc])*
        #[derive(Clone, Debug)]
        #[must_use = "iterator adaptors are lazy"]
        pub struct $name<I> {
            base: I,
            n: usize,
        }

        impl<I> $name<I> {
            pub(super) fn new(base: I, n: usize) -> Self {
                $name { base, n }
            }
        }

        impl<I: IndexedParallelIterator> ParallelIterator for $name<I> {
            type Item = I::Item;
            fn drive_unindexed<C: UnindexedConsumer<Self::Item>>(self, consumer: C) -> C::Result {
                let len = self.len();
                self.with_producer(BridgeCallback { len, consumer })
            }
            fn opt_len(&self) -> Option<usize> {
                Some(self.len())
            }
        }

        impl<I: IndexedParallelIterator> IndexedParallelIterator for $name<I> {
            fn len(&self) -> usize {
                let ($len, $n) = (self.base.len(), self.n);
                $len_expr
            }
            fn with_producer<CB: ProducerCallback<Self::Item>>(self, callback: CB) -> CB::Output {
                // Where to cut the base producer: `n`, at most the base's length; a cut at
                // either end leaves the base whole ([`Piece`]).
                let len = self.base.len();
                let n = self.n.min(len);
                return self.base.with_producer(Callback { callback, n, len });

                struct Callback<CB> {
                    callback: CB,
                    n: usize,
                    len: usize,
                }
                impl<T, CB: ProducerCallback<T>> ProducerCallback<T> for Callback<CB> {
                    type Output = CB::Output;
                    fn callback<P: Producer<Item = T>>(self, base: P) -> CB::Output {
                        let ($p, $m) = (Piece::new(base, self.len), self.n);
                        self.callback.callback($pick)
                    }
                }
            }
        }
    };
}

cut!(
    /// All but the first `n` items ([`IndexedParallelIterator::skip`]).
    Skip, |len, n| len.saturating_sub(n), |p, m| p.split_at(m).1
);
cut!(
    /// The first `n` items ([`IndexedParallelIterator::take`]).
    Take, |len, n| len.min(n), |p, m| p.split_at(m).0
);
