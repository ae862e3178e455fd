//! The reducing consumers: `for_each`, `reduce`, `sum`, `product`.

use std::iter::{Product, Sum};
use std::marker::PhantomData;

use super::plumbing::{split_ignoring_index, Consumer, Folder, Reducer, UnindexedConsumer};

/// `for_each`: calls `op` on every item.
pub(super) struct ForEachConsumer<'f, F> {
    pub(super) op: &'f F,
}

impl<T, F: Fn(T) + Sync> Consumer<T> for ForEachConsumer<'_, F> {
    type Folder = Self;
    type Reducer = NoopReducer;
    type Result = ();

    fn split_at(self, _index: usize) -> (Self, Self, Self::Reducer) {
        split_ignoring_index::<T, _>(self)
    }

    fn into_folder(self) -> Self {
        self
    }
    fn full(&self) -> bool {
        false
    }
}

impl<T, F: Fn(T) + Sync> UnindexedConsumer<T> for ForEachConsumer<'_, F> {
    fn split_off_left(&self) -> Self {
        ForEachConsumer { op: self.op }
    }
    fn to_reducer(&self) -> NoopReducer {
        NoopReducer
    }
}

impl<T, F: Fn(T) + Sync> Folder<T> for ForEachConsumer<'_, F> {
    type Result = ();
    fn consume(self, item: T) -> Self {
        (self.op)(item);
        self
    }
    fn consume_iter<I: IntoIterator<Item = T>>(self, iter: I) -> Self {
        iter.into_iter().for_each(self.op);
        self
    }
    fn complete(self) {}
    fn full(&self) -> bool {
        false
    }
}

/// Joins two `()`.
pub(super) struct NoopReducer;

impl Reducer<()> for NoopReducer {
    fn reduce(self, (): (), (): ()) {}
}

/// `reduce(identity, op)`.
pub(super) struct ReduceConsumer<'f, ID, OP> {
    pub(super) identity: &'f ID,
    pub(super) op: &'f OP,
}

impl<'f, T, ID, OP> Consumer<T> for ReduceConsumer<'f, ID, OP>
where
    T: Send,
    ID: Fn() -> T + Sync,
    OP: Fn(T, T) -> T + Sync,
{
    type Folder = ReduceFolder<'f, OP, T>;
    type Reducer = Self;
    type Result = T;

    fn split_at(self, _index: usize) -> (Self, Self, Self::Reducer) {
        split_ignoring_index::<T, _>(self)
    }

    fn into_folder(self) -> Self::Folder {
        ReduceFolder {
            op: self.op,
            acc: (self.identity)(),
        }
    }
    fn full(&self) -> bool {
        false
    }
}

impl<'f, T, ID, OP> UnindexedConsumer<T> for ReduceConsumer<'f, ID, OP>
where
    T: Send,
    ID: Fn() -> T + Sync,
    OP: Fn(T, T) -> T + Sync,
{
    fn split_off_left(&self) -> Self {
        ReduceConsumer { ..*self }
    }
    fn to_reducer(&self) -> Self {
        ReduceConsumer { ..*self }
    }
}

impl<T, ID, OP: Fn(T, T) -> T> Reducer<T> for ReduceConsumer<'_, ID, OP> {
    fn reduce(self, left: T, right: T) -> T {
        (self.op)(left, right)
    }
}

/// The folder of [`ReduceConsumer`].
pub(super) struct ReduceFolder<'f, OP, T> {
    op: &'f OP,
    acc: T,
}

impl<T, OP: Fn(T, T) -> T> Folder<T> for ReduceFolder<'_, OP, T> {
    type Result = T;
    fn consume(self, item: T) -> Self {
        ReduceFolder {
            acc: (self.op)(self.acc, item),
            op: self.op,
        }
    }
    fn consume_iter<I: IntoIterator<Item = T>>(self, iter: I) -> Self {
        ReduceFolder {
            acc: iter.into_iter().fold(self.acc, self.op),
            op: self.op,
        }
    }
    fn complete(self) -> T {
        self.acc
    }
    fn full(&self) -> bool {
        false
    }
}

macro_rules! summing_consumer {
    ($consumer:ident, $folder:ident, $trait:ident, $method:ident) => {
        /// The consumer of `$method`: partial results of every piece, then of pairs.
        pub(super) struct $consumer<S>(PhantomData<fn() -> S>);

        impl<S> $consumer<S> {
            pub(super) fn new() -> Self {
                $consumer(PhantomData)
            }
        }

        impl<T, S: Send + $trait<T> + $trait<S>> Consumer<T> for $consumer<S> {
            type Folder = $folder<S>;
            type Reducer = Self;
            type Result = S;

            fn split_at(self, _index: usize) -> (Self, Self, Self::Reducer) {
                split_ignoring_index::<T, _>(self)
            }

            fn into_folder(self) -> $folder<S> {
                $folder(std::iter::empty::<S>().$method())
            }
            fn full(&self) -> bool {
                false
            }
        }

        impl<T, S: Send + $trait<T> + $trait<S>> UnindexedConsumer<T> for $consumer<S> {
            fn split_off_left(&self) -> Self {
                $consumer::new()
            }
            fn to_reducer(&self) -> Self {
                $consumer::new()
            }
        }

        impl<S: $trait<S>> Reducer<S> for $consumer<S> {
            fn reduce(self, left: S, right: S) -> S {
                [left, right].into_iter().$method()
            }
        }

        /// The folder of the consumer above.
        pub(super) struct $folder<S>(S);

        impl<T, S: $trait<T> + $trait<S>> Folder<T> for $folder<S> {
            type Result = S;
            fn consume(self, item: T) -> Self {
                self.consume_iter(std::iter::once(item))
            }
            fn consume_iter<I: IntoIterator<Item = T>>(self, iter: I) -> Self {
                let part: S = iter.into_iter().$method();
                $folder([self.0, part].into_iter().$method())
            }
            fn complete(self) -> S {
                self.0
            }
            fn full(&self) -> bool {
                false
            }
        }
    };
}

summing_consumer!(SumConsumer, SumFolder, Sum, sum);
summing_consumer!(ProductConsumer, ProductFolder, Product, product);
