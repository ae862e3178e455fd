//! The searching consumers: `find_any` (and through it `any`, `all`, `position_any`) and
//! `find_first`, `find_last`. They stop early through a shared atomic: pieces that start after an item
//! was found (any item for `find_any`, an earlier one for `find_first`) are not split or
//! folded further.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use super::plumbing::{split_ignoring_index, Consumer, Folder, Reducer, UnindexedConsumer};
use super::ParallelIterator;

pub(super) fn find_any<I, P>(iter: I, predicate: &P) -> Option<I::Item>
where
    I: ParallelIterator,
    P: Fn(&I::Item) -> bool + Sync,
{
    let found = AtomicBool::new(false);
    iter.drive_unindexed(FindAny {
        predicate,
        found: &found,
    })
}

pub(super) fn find_first<I, P>(iter: I, predicate: &P) -> Option<I::Item>
where
    I: ParallelIterator,
    P: Fn(&I::Item) -> bool + Sync,
{
    let best = AtomicUsize::new(usize::MAX);
    iter.drive_unindexed(FindFirst {
        predicate,
        lo: Cell::new(0),
        hi: usize::MAX,
        best: &best,
    })
}

pub(super) fn find_last<I, P>(iter: I, predicate: &P) -> Option<I::Item>
where
    I: ParallelIterator,
    P: Fn(&I::Item) -> bool + Sync,
{
    let best = AtomicUsize::new(0);
    iter.drive_unindexed(FindLast {
        predicate,
        lo: Cell::new(0),
        hi: usize::MAX,
        best: &best,
    })
}

/// Keeps the right result if there is one.
pub(super) struct LastSome;

impl<T> Reducer<Option<T>> for LastSome {
    fn reduce(self, left: Option<T>, right: Option<T>) -> Option<T> {
        right.or(left)
    }
}

/// `find_last`'s consumer: the mirror image of [`FindFirst`]; `best` is the largest `hi` of
/// a consumer that found an item.
struct FindLast<'f, P> {
    predicate: &'f P,
    /// The start of the positions: a split moves it (rayon's `Cell`), through `&self`.
    lo: Cell<usize>,
    hi: usize,
    best: &'f AtomicUsize,
}

impl<'f, T: Send, P: Fn(&T) -> bool + Sync> Consumer<T> for FindLast<'f, P> {
    type Folder = FindFolder<'f, P, T>;
    type Reducer = LastSome;
    type Result = Option<T>;

    fn split_at(self, _index: usize) -> (Self, Self, Self::Reducer) {
        split_ignoring_index::<T, _>(self)
    }

    fn into_folder(self) -> Self::Folder {
        FindFolder {
            predicate: self.predicate,
            item: None,
            done: Done::Last(self.hi, self.best),
        }
    }
    fn full(&self) -> bool {
        // Strictly larger: a consumer with an equal `hi` may lie to our right.
        self.best.load(Ordering::Relaxed) > self.hi
    }
}

impl<'f, T: Send, P: Fn(&T) -> bool + Sync> UnindexedConsumer<T> for FindLast<'f, P> {
    fn split_off_left(&self) -> Self {
        let lo = self.lo.get();
        let mid = lo + (self.hi - lo) / 2;
        self.lo.set(mid);
        FindLast {
            predicate: self.predicate,
            lo: Cell::new(lo),
            hi: mid,
            best: self.best,
        }
    }
    fn to_reducer(&self) -> LastSome {
        LastSome
    }
}

/// Keeps the left result if there is one.
pub(super) struct FirstSome;

impl<T> Reducer<Option<T>> for FirstSome {
    fn reduce(self, left: Option<T>, right: Option<T>) -> Option<T> {
        left.or(right)
    }
}

struct FindAny<'f, P> {
    predicate: &'f P,
    found: &'f AtomicBool,
}

impl<'f, T: Send, P: Fn(&T) -> bool + Sync> Consumer<T> for FindAny<'f, P> {
    type Folder = FindFolder<'f, P, T>;
    type Reducer = FirstSome;
    type Result = Option<T>;

    fn split_at(self, _index: usize) -> (Self, Self, Self::Reducer) {
        split_ignoring_index::<T, _>(self)
    }

    fn into_folder(self) -> Self::Folder {
        FindFolder {
            predicate: self.predicate,
            item: None,
            done: Done::Any(self.found),
        }
    }
    fn full(&self) -> bool {
        // Relaxed: a hint to stop early; the result travels through the reductions.
        self.found.load(Ordering::Relaxed)
    }
}

impl<'f, T: Send, P: Fn(&T) -> bool + Sync> UnindexedConsumer<T> for FindAny<'f, P> {
    fn split_off_left(&self) -> Self {
        FindAny { ..*self }
    }
    fn to_reducer(&self) -> FirstSome {
        FirstSome
    }
}

/// `find_first`'s consumer: it owns the positions `lo..hi` of an abstract space that is
/// halved at every split, so that consumers further right have larger `lo`s.
struct FindFirst<'f, P> {
    predicate: &'f P,
    /// The start of the positions: a split moves it (rayon's `Cell`), through `&self`.
    lo: Cell<usize>,
    hi: usize,
    /// The smallest `lo` of a consumer that found an item.
    best: &'f AtomicUsize,
}

impl<'f, T: Send, P: Fn(&T) -> bool + Sync> Consumer<T> for FindFirst<'f, P> {
    type Folder = FindFolder<'f, P, T>;
    type Reducer = FirstSome;
    type Result = Option<T>;

    fn split_at(self, _index: usize) -> (Self, Self, Self::Reducer) {
        split_ignoring_index::<T, _>(self)
    }

    fn into_folder(self) -> Self::Folder {
        FindFolder {
            predicate: self.predicate,
            item: None,
            done: Done::First(self.lo.get(), self.best),
        }
    }
    fn full(&self) -> bool {
        // Strictly smaller: a consumer with an equal `lo` may lie to our left.
        self.best.load(Ordering::Relaxed) < self.lo.get()
    }
}

impl<'f, T: Send, P: Fn(&T) -> bool + Sync> UnindexedConsumer<T> for FindFirst<'f, P> {
    fn split_off_left(&self) -> Self {
        let lo = self.lo.get();
        let mid = lo + (self.hi - lo) / 2;
        self.lo.set(mid);
        FindFirst {
            predicate: self.predicate,
            lo: Cell::new(lo),
            hi: mid,
            best: self.best,
        }
    }
    fn to_reducer(&self) -> FirstSome {
        FirstSome
    }
}

enum Done<'f> {
    Any(&'f AtomicBool),
    First(usize, &'f AtomicUsize),
    Last(usize, &'f AtomicUsize),
}

struct FindFolder<'f, P, T> {
    predicate: &'f P,
    item: Option<T>,
    done: Done<'f>,
}

impl<T, P: Fn(&T) -> bool> Folder<T> for FindFolder<'_, P, T> {
    type Result = Option<T>;

    fn consume(mut self, item: T) -> Self {
        if let Done::Last(hi, best) = self.done {
            // The last match of the piece wins: keep consuming.
            if (self.predicate)(&item) {
                self.item = Some(item);
                best.fetch_max(hi, Ordering::Relaxed);
            }
            return self;
        }
        if self.item.is_none() && (self.predicate)(&item) {
            self.item = Some(item);
            match self.done {
                Done::Any(found) => found.store(true, Ordering::Relaxed),
                Done::First(lo, best) => {
                    best.fetch_min(lo, Ordering::Relaxed);
                }
                Done::Last(..) => {}
            }
        }
        self
    }
    fn complete(self) -> Option<T> {
        self.item
    }
    fn full(&self) -> bool {
        if let Done::Last(hi, best) = self.done {
            return best.load(Ordering::Relaxed) > hi;
        }
        self.item.is_some()
            || match self.done {
                Done::Any(found) => found.load(Ordering::Relaxed),
                Done::First(lo, best) => best.load(Ordering::Relaxed) < lo,
                Done::Last(..) => false,
            }
    }
}
