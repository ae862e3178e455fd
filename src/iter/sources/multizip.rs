//! Tuples of indexed parallel iterators, zipped: `(a, b, c).into_par_iter()` yields
//! `(x, y, z)` tuples, as many as the shortest has ([`MultiZip`]); `(a, b).par_iter()` and
//! `(a, b).par_iter_mut()` zip the parts' `par_iter()` / `par_iter_mut()`. Up to 12 parts,
//! as rayon's.

use crate::iter::plumbing::{ProducerCallback, UnindexedConsumer};
use crate::iter::{
    IndexedParallelIterator, IntoParallelIterator, IntoParallelRefIterator,
    IntoParallelRefMutIterator, ParallelIterator,
};

/// A tuple of indexed parallel iterators, run in lock step (rayon's `MultiZip`): the tuples
/// of their items, as many as the shortest has (indexed).
///
/// ```
/// use zonal::prelude::*;
/// let (a, b, c) = (vec![1, 2, 3], vec!['x', 'y', 'z'], vec![true, false]);
/// let v: Vec<(i32, char, bool)> = (a, b, c).into_par_iter().collect();
/// assert_eq!(v, [(1, 'x', true), (2, 'y', false)]);
///
/// let (mut p, q) = (vec![0; 3], vec![1, 2, 3]);
/// (&mut p, &q).into_par_iter().for_each(|(p, q)| *p = q * 10);
/// assert_eq!(p, [10, 20, 30]);
/// let sums: Vec<i32> = (p, q).par_iter().map(|(p, q)| p + q).collect();
/// assert_eq!(sums, [11, 22, 33]);
/// ```
#[derive(Clone, Debug)]
pub struct MultiZip<T> {
    tuple: T,
}

/// `a.zip(b.zip(c.zip(..)))`.
macro_rules! zip_right {
    ($x:expr) => { $x };
    ($x:expr, $($rest:expr),+) => { $x.zip(zip_right!($($rest),+)) };
}

/// The pattern `(a, (b, (c, ..)))` of the items of [`zip_right!`].
macro_rules! nested {
    ($x:ident) => { $x };
    ($x:ident, $($rest:ident),+) => { ($x, nested!($($rest),+)) };
}

macro_rules! multizip {
    ($(($($T:ident $t:ident),+))*) => {$(
        impl<$($T,)+> IntoParallelIterator for ($($T,)+)
        where
            $($T: IntoParallelIterator, $T::Iter: IndexedParallelIterator,)+
        {
            type Iter = MultiZip<($($T::Iter,)+)>;
            type Item = ($($T::Item,)+);
            fn into_par_iter(self) -> Self::Iter {
                let ($($t,)+) = self;
                MultiZip { tuple: ($($t.into_par_iter(),)+) }
            }
        }

        impl<'a, $($T,)+> IntoParallelIterator for &'a ($($T,)+)
        where
            $($T: IntoParallelRefIterator<'a>, $T::Iter: IndexedParallelIterator,)+
        {
            type Iter = MultiZip<($($T::Iter,)+)>;
            type Item = ($($T::Item,)+);
            fn into_par_iter(self) -> Self::Iter {
                let ($($t,)+) = self;
                MultiZip { tuple: ($($t.par_iter(),)+) }
            }
        }

        impl<'a, $($T,)+> IntoParallelIterator for &'a mut ($($T,)+)
        where
            $($T: IntoParallelRefMutIterator<'a>, $T::Iter: IndexedParallelIterator,)+
        {
            type Iter = MultiZip<($($T::Iter,)+)>;
            type Item = ($($T::Item,)+);
            fn into_par_iter(self) -> Self::Iter {
                let ($($t,)+) = self;
                MultiZip { tuple: ($($t.par_iter_mut(),)+) }
            }
        }

        impl<$($T,)+> ParallelIterator for MultiZip<($($T,)+)>
        where
            $($T: IndexedParallelIterator,)+
        {
            type Item = ($($T::Item,)+);
            fn drive_unindexed<CONSUMER: UnindexedConsumer<Self::Item>>(
                self,
                consumer: CONSUMER,
            ) -> CONSUMER::Result {
                let len = self.len();
                self.with_producer(crate::iter::plumbing::BridgeCallback { len, consumer })
            }
            fn opt_len(&self) -> Option<usize> {
                Some(self.len())
            }
        }

        impl<$($T,)+> IndexedParallelIterator for MultiZip<($($T,)+)>
        where
            $($T: IndexedParallelIterator,)+
        {
            fn len(&self) -> usize {
                let ($($t,)+) = &self.tuple;
                [$($t.len(),)+].into_iter().min().unwrap_or(0)
            }
            fn with_producer<CALLBACK: ProducerCallback<Self::Item>>(
                self,
                callback: CALLBACK,
            ) -> CALLBACK::Output {
                let ($($t,)+) = self.tuple;
                zip_right!($($t),+)
                    .map(|nested!($($t),+)| ($($t,)+))
                    .with_producer(callback)
            }
        }
    )*};
}

multizip! {
    (A a)
    (A a, B b)
    (A a, B b, C c)
    (A a, B b, C c, D d)
    (A a, B b, C c, D d, E e)
    (A a, B b, C c, D d, E e, F f)
    (A a, B b, C c, D d, E e, F f, G g)
    (A a, B b, C c, D d, E e, F f, G g, H h)
    (A a, B b, C c, D d, E e, F f, G g, H h, I i)
    (A a, B b, C c, D d, E e, F f, G g, H h, I i, J j)
    (A a, B b, C c, D d, E e, F f, G g, H h, I i, J j, K k)
    (A a, B b, C c, D d, E e, F f, G g, H h, I i, J j, K k, L l)
}
