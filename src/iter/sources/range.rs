//! Integer ranges (`a..b`, `a..=b`) of every integer type. As in rayon, ranges whose length
//! always fits a `usize` are indexed; the others (`u64`, `i64`, `u128`, `i128` ranges and
//! wide inclusive ranges) are unindexed, split in halves.
//!
//! Every integer maps to a `u128` key preserving order (signed ones with their sign bit
//! flipped), so one implementation serves every type.

use std::ops::{Range, RangeInclusive};

use crate::iter::plumbing::{
    bridge, bridge_unindexed, Consumer, Folder, Producer, ProducerCallback, UnindexedProducer,
};
use crate::iter::{IndexedParallelIterator, IntoParallelIterator, ParallelIterator};

/// An integer type usable in parallel ranges: an order-preserving map to `u128`.
pub trait RangeKey: Copy + Send + Sync + Ord + 'static {
    /// The key of `self`.
    fn to_key(self) -> u128;
    /// The integer of a key (of a value of this type).
    fn from_key(key: u128) -> Self;
}

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

/// A parallel iterator over an integer range of known `usize` length (indexed).
#[derive(Clone, Copy, Debug)]
pub struct RangeIter<T> {
    start: u128,
    len: usize,
    marker: std::marker::PhantomData<fn() -> T>,
}

impl<T: RangeKey> RangeIter<T> {
    fn new(start: u128, len: usize) -> Self {
        RangeIter {
            start,
            len,
            marker: std::marker::PhantomData,
        }
    }
}

impl<T: RangeKey> ParallelIterator for RangeIter<T> {
    type Item = T;
    fn drive_unindexed<C: Consumer<T>>(self, consumer: C) -> C::Result {
        bridge(self, consumer)
    }
    fn opt_len(&self) -> Option<usize> {
        Some(self.len)
    }
}

impl<T: RangeKey> IndexedParallelIterator for RangeIter<T> {
    fn len(&self) -> usize {
        self.len
    }
    fn with_producer<CB: ProducerCallback<T>>(self, callback: CB) -> CB::Output {
        callback.callback(self)
    }
}

impl<T: RangeKey> Producer for RangeIter<T> {
    type Item = T;
    type IntoIter = KeyIter<T>;
    fn len(&self) -> usize {
        self.len
    }
    fn into_iter(self) -> KeyIter<T> {
        KeyIter {
            next: self.start,
            left: self.len as u128,
            marker: std::marker::PhantomData,
        }
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        (
            RangeIter::new(self.start, index),
            RangeIter::new(self.start + index as u128, self.len - index),
        )
    }
}

/// The sequential iteration of keys `next ..` (`left` of them).
#[derive(Debug)]
pub struct KeyIter<T> {
    next: u128,
    left: u128,
    marker: std::marker::PhantomData<fn() -> T>,
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

/// A parallel iterator over an integer range whose length may not fit a `usize`
/// (unindexed): keys `lo ..= hi`, or nothing.
#[derive(Clone, Copy, Debug)]
pub struct UnindexedRangeIter<T> {
    bounds: Option<(u128, u128)>,
    marker: std::marker::PhantomData<fn() -> T>,
}

impl<T: RangeKey> ParallelIterator for UnindexedRangeIter<T> {
    type Item = T;
    fn drive_unindexed<C: Consumer<T>>(self, consumer: C) -> C::Result {
        bridge_unindexed(self, consumer)
    }
    fn opt_len(&self) -> Option<usize> {
        match self.bounds {
            None => Some(0),
            Some((lo, hi)) => usize::try_from(hi - lo).ok()?.checked_add(1),
        }
    }
}

impl<T: RangeKey> UnindexedProducer for UnindexedRangeIter<T> {
    type Item = T;
    fn split(self) -> (Self, Option<Self>) {
        match self.bounds {
            Some((lo, hi)) if hi > lo => {
                let mid = lo + (hi - lo) / 2;
                let part = |b| UnindexedRangeIter {
                    bounds: Some(b),
                    marker: std::marker::PhantomData,
                };
                (part((lo, mid)), Some(part((mid + 1, hi))))
            }
            _ => (self, None),
        }
    }
    fn fold_with<F: Folder<T>>(self, folder: F) -> F {
        match self.bounds {
            None => folder,
            Some((lo, hi)) => folder.consume_iter(KeyIter {
                next: lo,
                left: (hi - lo).wrapping_add(1),
                marker: std::marker::PhantomData,
            }),
        }
    }
}

fn keys_exclusive<T: RangeKey>(r: &Range<T>) -> Option<(u128, u128)> {
    (r.start < r.end).then(|| (r.start.to_key(), r.end.to_key() - 1))
}

fn keys_inclusive<T: RangeKey>(r: &RangeInclusive<T>) -> Option<(u128, u128)> {
    (!r.is_empty()).then(|| (r.start().to_key(), r.end().to_key()))
}

macro_rules! indexed_range {
    ($range:ident, $keys:ident: $($t:ty)*) => {$(
        impl IntoParallelIterator for $range<$t> {
            type Iter = RangeIter<$t>;
            type Item = $t;
            fn into_par_iter(self) -> RangeIter<$t> {
                match $keys(&self) {
                    None => RangeIter::new(0, 0),
                    Some((lo, hi)) => RangeIter::new(lo, (hi - lo + 1) as usize),
                }
            }
        }
    )*};
}

macro_rules! unindexed_range {
    ($range:ident, $keys:ident: $($t:ty)*) => {$(
        impl IntoParallelIterator for $range<$t> {
            type Iter = UnindexedRangeIter<$t>;
            type Item = $t;
            fn into_par_iter(self) -> UnindexedRangeIter<$t> {
                UnindexedRangeIter {
                    bounds: $keys(&self),
                    marker: std::marker::PhantomData,
                }
            }
        }
    )*};
}

// rayon's choice: indexed where the length fits a `usize` on every platform.
indexed_range!(Range, keys_exclusive: u8 u16 u32 usize i8 i16 i32 isize);
unindexed_range!(Range, keys_exclusive: u64 i64 u128 i128);
indexed_range!(RangeInclusive, keys_inclusive: u8 u16 i8 i16);
unindexed_range!(RangeInclusive, keys_inclusive: u32 u64 u128 usize i32 i64 i128 isize);
