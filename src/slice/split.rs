//! `par_split`, `par_split_inclusive` and their `_mut` forms: the subslices between
//! elements matching a predicate, as `slice::split` yields them (unindexed; split at a
//! separator near the middle by the [fission](super::fission) engine).

use std::fmt;

use super::fission::{Fissile, FissionProducer};
use crate::iter::plumbing::{bridge_unindexed, Folder, UnindexedConsumer};
use crate::iter::ParallelIterator;

impl<T, P> Fissile<P> for &[T]
where
    T: Sync,
    P: Fn(&T) -> bool,
{
    fn length(&self) -> usize {
        self.len()
    }

    fn midpoint(&self, end: usize) -> usize {
        end / 2
    }

    fn find(&self, sep: &P, start: usize, end: usize) -> Option<usize> {
        self[start..end].iter().position(sep).map(|i| start + i)
    }

    fn rfind(&self, sep: &P, end: usize) -> Option<usize> {
        self[..end].iter().rposition(sep)
    }

    fn cut(self, _sep: &P, pos: usize, inclusive: bool) -> (Self, Self) {
        let (left, right) = self.split_at(pos + 1);
        if inclusive {
            (left, right)
        } else {
            (&left[..pos], right)
        }
    }

    fn fold_pieces<F: Folder<Self>>(self, sep: &P, folder: F, inclusive: bool, _: bool) -> F {
        if inclusive {
            folder.consume_iter(self.split_inclusive(sep))
        } else {
            folder.consume_iter(self.split(sep))
        }
    }
}

impl<T, P> Fissile<P> for &mut [T]
where
    T: Send,
    P: Fn(&T) -> bool,
{
    fn length(&self) -> usize {
        self.len()
    }

    fn midpoint(&self, end: usize) -> usize {
        end / 2
    }

    fn find(&self, sep: &P, start: usize, end: usize) -> Option<usize> {
        self[start..end].iter().position(sep).map(|i| start + i)
    }

    fn rfind(&self, sep: &P, end: usize) -> Option<usize> {
        self[..end].iter().rposition(sep)
    }

    fn cut(self, _sep: &P, pos: usize, inclusive: bool) -> (Self, Self) {
        let (left, right) = self.split_at_mut(pos + 1);
        if inclusive {
            (left, right)
        } else {
            (&mut left[..pos], right)
        }
    }

    fn fold_pieces<F: Folder<Self>>(self, sep: &P, folder: F, inclusive: bool, _: bool) -> F {
        if inclusive {
            folder.consume_iter(self.split_inclusive_mut(sep))
        } else {
            folder.consume_iter(self.split_mut(sep))
        }
    }
}

/// Declares one split iterator: the struct, its `Debug` (the slice, not the predicate) and
/// its `ParallelIterator` impl.
macro_rules! split_iter {
    ($(#[$doc:meta])* $name:ident, $slice:ty, $bound:ident, $inclusive:expr) => {
        $(#[$doc])*
        #[must_use = "iterator adaptors are lazy"]
        pub struct $name<'data, T, P> {
            slice: $slice,
            separator: P,
        }

        impl<'data, T, P> $name<'data, T, P> {
            pub(super) fn new(slice: $slice, separator: P) -> Self {
                $name { slice, separator }
            }
        }

        impl<T: fmt::Debug, P> fmt::Debug for $name<'_, T, P> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($name))
                    .field("slice", &self.slice)
                    .finish()
            }
        }

        impl<'data, T, P> ParallelIterator for $name<'data, T, P>
        where
            T: $bound,
            P: Fn(&T) -> bool + Sync + Send,
        {
            type Item = $slice;

            fn drive_unindexed<C: UnindexedConsumer<Self::Item>>(self, consumer: C) -> C::Result {
                let producer = FissionProducer::new(self.slice, &self.separator, $inclusive, false);
                bridge_unindexed(producer, consumer)
            }
        }
    };
}

split_iter!(
    /// The subslices between elements matching a predicate (unindexed;
    /// [`ParallelSlice::par_split`](super::ParallelSlice::par_split)).
    Split, &'data [T], Sync, false
);
split_iter!(
    /// The subslices ending with an element matching a predicate, or with the slice's end
    /// (unindexed; [`ParallelSlice::par_split_inclusive`](super::ParallelSlice::par_split_inclusive)).
    SplitInclusive, &'data [T], Sync, true
);
split_iter!(
    /// The mutable subslices between elements matching a predicate (unindexed;
    /// [`ParallelSliceMut::par_split_mut`](super::ParallelSliceMut::par_split_mut)).
    SplitMut, &'data mut [T], Send, false
);
split_iter!(
    /// The mutable subslices ending with an element matching a predicate, or with the
    /// slice's end (unindexed;
    /// [`ParallelSliceMut::par_split_inclusive_mut`](super::ParallelSliceMut::par_split_inclusive_mut)).
    SplitInclusiveMut, &'data mut [T], Send, true
);

impl<T, P: Clone> Clone for Split<'_, T, P> {
    fn clone(&self) -> Self {
        Split::new(self.slice, self.separator.clone())
    }
}

impl<T, P: Clone> Clone for SplitInclusive<'_, T, P> {
    fn clone(&self) -> Self {
        SplitInclusive::new(self.slice, self.separator.clone())
    }
}
