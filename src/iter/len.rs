//! `with_min_len` and `with_max_len`: bounds on the length of the pieces an indexed
//! iterator is split into.

use super::plumbing::{BridgeCallback, Producer, ProducerCallback, UnindexedConsumer};
use super::{IndexedParallelIterator, ParallelIterator};

macro_rules! len_adaptor {
    ($(#[$doc:meta])* $name:ident, $field:ident, $method:ident, $other:ident, $combine:ident) => {
        $(#[$doc])*
        #[derive(Clone, Debug)]
        #[must_use = "iterator adaptors are lazy"]
        pub struct $name<I> {
            base: I,
            $field: usize,
        }

        impl<I> $name<I> {
            pub(super) fn new(base: I, $field: usize) -> Self {
                $name { base, $field }
            }
        }

        impl<I: IndexedParallelIterator> ParallelIterator for $name<I> {
            type Item = I::Item;

            fn drive_unindexed<C: UnindexedConsumer<Self::Item>>(self, consumer: C) -> C::Result {
                let len = self.len();
                self.with_producer(BridgeCallback { len, consumer })
            }
            fn opt_len(&self) -> Option<usize> {
                Some(self.base.len())
            }
        }

        impl<I: IndexedParallelIterator> IndexedParallelIterator for $name<I> {
            fn len(&self) -> usize {
                self.base.len()
            }

            fn with_producer<CB: ProducerCallback<Self::Item>>(self, callback: CB) -> CB::Output {
                return self.base.with_producer(Callback {
                    callback,
                    $field: self.$field,
                });

                struct Callback<CB> {
                    callback: CB,
                    $field: usize,
                }
                impl<T, CB: ProducerCallback<T>> ProducerCallback<T> for Callback<CB> {
                    type Output = CB::Output;
                    fn callback<P: Producer<Item = T>>(self, base: P) -> CB::Output {
                        self.callback.callback(Bounded {
                            base,
                            $field: self.$field,
                        })
                    }
                }

                struct Bounded<P> {
                    base: P,
                    $field: usize,
                }
                impl<P: Producer> Producer for Bounded<P> {
                    type Item = P::Item;
                    type IntoIter = P::IntoIter;
                    fn into_iter(self) -> P::IntoIter {
                        self.base.into_iter()
                    }
                    fn split_at(self, index: usize) -> (Self, Self) {
                        let (a, b) = self.base.split_at(index);
                        (
                            Bounded { base: a, $field: self.$field },
                            Bounded { base: b, $field: self.$field },
                        )
                    }
                    fn $method(&self) -> usize {
                        self.base.$method().$combine(self.$field)
                    }
                    fn $other(&self) -> usize {
                        self.base.$other()
                    }
                    fn fold_with<F: super::plumbing::Folder<P::Item>>(self, folder: F) -> F {
                        self.base.fold_with(folder)
                    }
                }
            }
        }
    };
}

len_adaptor!(
    /// Pieces of at least `min` items ([`IndexedParallelIterator::with_min_len`]).
    MinLen, min, min_len, max_len, max
);
len_adaptor!(
    /// Pieces of at most `max` items ([`IndexedParallelIterator::with_max_len`]).
    MaxLen, max, max_len, min_len, min
);
