//! Ranges (`a..b`, `a..=b`) of every integer type and of `char`: [`range::Iter`] and
//! [`range_inclusive::Iter`], as rayon's. As in rayon, a range type whose length always
//! fits a `usize` is indexed (exclusive ranges of `u8`, `u16`, `u32`, `usize`, their signed
//! twins and `char`; inclusive ranges of `u8`, `u16`, `i8`, `i16` and `char`); the others
//! are plain parallel iterators, which still run as indexed ones (node cut included) when
//! the length of the range at hand fits a `usize`, and otherwise split in halves
//! (`0..10u128.pow(27)`).
//!
//! Every item maps to a `u128` key preserving order ([`RangeKey`]): integers with their
//! sign bit flipped where signed, `char`s without the surrogate gap (`'\u{D7FF}'` and
//! `'\u{E000}'` have adjacent keys), so one implementation serves every type.
//!
//! [`range::Iter`]: crate::range::Iter
//! [`range_inclusive::Iter`]: crate::range_inclusive::Iter

use std::marker::PhantomData;
use std::ops::{Range, RangeInclusive};

use crate::iter::plumbing::{
    bridge_producer_consumer, bridge_unindexed, Folder, Producer, ProducerCallback,
    UnindexedConsumer, UnindexedProducer,
};
use crate::iter::{IndexedParallelIterator, IntoParallelIterator, ParallelIterator};

/// A type usable in parallel ranges: an order-preserving, gapless map to `u128` (the
/// successor of a value has the next key).
pub trait RangeKey: Copy + Send + Sync + Ord + 'static {
    /// The key of `self`.
    fn to_key(self) -> u128;
    /// The value of a key (of a value of this type).
    fn from_key(key: u128) -> Self;
}

/// The types whose exclusive ranges are indexed: their length always fits a `usize`.
pub trait IndexedRangeKey: RangeKey {}

/// The types whose inclusive ranges are indexed: their length always fits a `usize`.
pub trait IndexedInclusiveRangeKey: RangeKey {}

macro_rules! unsigned_key {
    ($($t:ty)*) => {$(
        impl RangeKey for $t {
            #[inline]
            fn to_key(self) -> u128 {
                self as u128
            }
            #[inline]
            fn from_key(key: u128) -> Self {
                key as $t
            }
        }
    )*};
}

macro_rules! signed_key {
    ($($t:ty)*) => {$(
        impl RangeKey for $t {
            #[inline]
            fn to_key(self) -> u128 {
                (self as i128 as u128) ^ (1 << 127)
            }
            #[inline]
            fn from_key(key: u128) -> Self {
                (key ^ (1 << 127)) as i128 as $t
            }
        }
    )*};
}

unsigned_key!(u8 u16 u32 u64 u128 usize);
signed_key!(i8 i16 i32 i64 i128 isize);

/// The first surrogate code point and the size of the gap.
const SURROGATES: u32 = 0xD800;
const GAP: u32 = 0x800;

impl RangeKey for char {
    #[inline]
    fn to_key(self) -> u128 {
        let c = u32::from(self);
        u128::from(if c < SURROGATES { c } else { c - GAP })
    }
    #[inline]
    fn from_key(key: u128) -> Self {
        let k = key as u32;
        let c = if k < SURROGATES { k } else { k + GAP };
        char::from_u32(c).expect("the key of a char")
    }
}

// rayon's choice: indexed where the length fits a `usize` on every platform.
macro_rules! marker {
    ($tr:ident: $($t:ty)*) => {$( impl $tr for $t {} )*};
}
marker!(IndexedRangeKey: u8 u16 u32 usize i8 i16 i32 isize char);
marker!(IndexedInclusiveRangeKey: u8 u16 i8 i16 char);

/// The keys `lo ..= hi` of a non-empty range, or `None`.
type Keys = Option<(u128, u128)>;

/// The number of keys, if it fits a `usize`.
fn keys_len(keys: Keys) -> Option<usize> {
    match keys {
        None => Some(0),
        Some((lo, hi)) => usize::try_from(hi - lo).ok()?.checked_add(1),
    }
}

/// Runs the keys as an indexed iterator where their number fits a `usize`, else as an
/// unindexed one split in halves.
fn drive_keys<T: RangeKey, C: UnindexedConsumer<T>>(keys: Keys, consumer: C) -> C::Result {
    match (keys, keys_len(keys)) {
        (Some((lo, _)), Some(len)) => {
            bridge_producer_consumer(len, KeyProducer::<T>::new(lo, len), consumer)
        }
        (None, _) => bridge_producer_consumer(0, KeyProducer::<T>::new(0, 0), consumer),
        (Some(_), None) => bridge_unindexed(
            KeySpan::<T> {
                keys,
                marker: PhantomData,
            },
            consumer,
        ),
    }
}

/// The producer of `len` consecutive keys from `start`.
#[derive(Debug)]
struct KeyProducer<T> {
    start: u128,
    len: usize,
    marker: PhantomData<fn() -> T>,
}

impl<T> KeyProducer<T> {
    fn new(start: u128, len: usize) -> Self {
        KeyProducer {
            start,
            len,
            marker: PhantomData,
        }
    }
}

impl<T: RangeKey> Producer for KeyProducer<T> {
    type Item = T;
    type IntoIter = KeyIter<T>;
    fn into_iter(self) -> KeyIter<T> {
        KeyIter {
            next: self.start,
            left: self.len as u128,
            marker: PhantomData,
        }
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        (
            KeyProducer::new(self.start, index),
            KeyProducer::new(self.start + index as u128, self.len - index),
        )
    }
}

/// The sequential iteration of keys `next ..` (`left` of them).
#[derive(Debug)]
struct KeyIter<T> {
    next: u128,
    left: u128,
    marker: PhantomData<fn() -> T>,
}

impl<T: RangeKey> Iterator for KeyIter<T> {
    type Item = T;
    #[inline]
    fn next(&mut self) -> Option<T> {
        if self.left == 0 {
            return None;
        }
        let k = self.next;
        self.left -= 1;
        // Wrapping: the last key of `0..=u128::MAX` has no successor.
        self.next = self.next.wrapping_add(1);
        Some(T::from_key(k))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = usize::try_from(self.left).unwrap_or(usize::MAX);
        (n, usize::try_from(self.left).ok())
    }
}

// Exact for a producer's keys (their number is a `usize`); a `KeySpan`'s may be longer, but
// only its folder iterates them.
impl<T: RangeKey> ExactSizeIterator for KeyIter<T> {}

impl<T: RangeKey> DoubleEndedIterator for KeyIter<T> {
    #[inline]
    fn next_back(&mut self) -> Option<T> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        Some(T::from_key(self.next.wrapping_add(self.left)))
    }
}

/// Keys `lo ..= hi` too many for a `usize`: split in halves.
struct KeySpan<T> {
    keys: Keys,
    marker: PhantomData<fn() -> T>,
}

impl<T: RangeKey> UnindexedProducer for KeySpan<T> {
    type Item = T;
    fn split(self) -> (Self, Option<Self>) {
        match self.keys {
            Some((lo, hi)) if hi > lo => {
                let mid = lo + (hi - lo) / 2;
                let part = |b| KeySpan {
                    keys: Some(b),
                    marker: PhantomData,
                };
                (part((lo, mid)), Some(part((mid + 1, hi))))
            }
            _ => (self, None),
        }
    }
    fn fold_with<F: Folder<T>>(self, folder: F) -> F {
        match self.keys {
            None => folder,
            Some((lo, hi)) => folder.consume_iter(KeyIter {
                next: lo,
                left: (hi - lo).wrapping_add(1),
                marker: PhantomData,
            }),
        }
    }
}

/// Generates one range iterator (`range::Iter` or `range_inclusive::Iter`).
macro_rules! range_iter {
    (
        $(#[$doc:meta])*
        $iter:ident, $range:ident, $indexed:ident, |$r:ident| $keys:expr
    ) => {
        $(#[$doc])*
        #[derive(Clone, Debug)]
        pub struct $iter<T> {
            range: $range<T>,
        }

        impl<T: RangeKey> $iter<T> {
            fn keys(&self) -> Keys {
                let $r = &self.range;
                $keys
            }
        }

        impl<T: RangeKey> IntoParallelIterator for $range<T> {
            type Iter = $iter<T>;
            type Item = T;
            fn into_par_iter(self) -> $iter<T> {
                $iter { range: self }
            }
        }

        impl<T: RangeKey> ParallelIterator for $iter<T> {
            type Item = T;
            fn drive_unindexed<C: UnindexedConsumer<T>>(self, consumer: C) -> C::Result {
                drive_keys(self.keys(), consumer)
            }
            fn opt_len(&self) -> Option<usize> {
                keys_len(self.keys())
            }
        }

        impl<T: $indexed> IndexedParallelIterator for $iter<T> {
            fn len(&self) -> usize {
                keys_len(self.keys()).expect("an indexed range's length fits a usize")
            }
            fn with_producer<CB: ProducerCallback<T>>(self, callback: CB) -> CB::Output {
                let len = IndexedParallelIterator::len(&self);
                let start = self.keys().map_or(0, |(lo, _)| lo);
                callback.callback(KeyProducer::new(start, len))
            }
        }
    };
}

range_iter! {
    /// A parallel iterator over a range `a..b` (rayon's `range::Iter`): indexed for the
    /// [`IndexedRangeKey`] types.
    ///
    /// ```
    /// use zonal::prelude::*;
    /// let it: zonal::range::Iter<char> = ('a'..'e').into_par_iter();
    /// assert_eq!(it.len(), 4);
    /// assert_eq!(it.collect::<String>(), "abcd");
    /// let big = 1u128 << 100;
    /// assert_eq!((big..big + 3).into_par_iter().max(), Some(big + 2));
    /// ```
    RangeIter, Range, IndexedRangeKey,
    |r| (r.start < r.end).then(|| (r.start.to_key(), r.end.to_key() - 1))
}

range_iter! {
    /// A parallel iterator over a range `a..=b` (rayon's `range_inclusive::Iter`): indexed
    /// for the [`IndexedInclusiveRangeKey`] types.
    ///
    /// ```
    /// use zonal::prelude::*;
    /// let it: zonal::range_inclusive::Iter<u8> = (250..=u8::MAX).into_par_iter();
    /// assert_eq!(it.len(), 6);
    /// assert_eq!((0..=u128::MAX).into_par_iter().opt_len(), None); // too long for a usize
    /// assert_eq!((1..=100u64).into_par_iter().sum::<u64>(), 5050);
    /// ```
    RangeInclusiveIter, RangeInclusive, IndexedInclusiveRangeKey,
    |r| (!r.is_empty()).then(|| (r.start().to_key(), r.end().to_key()))
}
