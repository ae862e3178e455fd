//! Collecting an iterator of known length into a `Vec` in place (rayon's `collect_into_vec`
//! and `special_extend`): the vector reserves the items' room, each piece of the iterator
//! writes its items straight into its own part of the spare capacity, and the vector's
//! length is set once at the end.
//!
//! # The protocol
//! 1. [`extend_in_place`] reserves `len` slots (the iterator's `opt_len`) and drives the
//!    iterator into a [`CollectConsumer`] over those slots.
//! 2. [`Consumer::split_at`] splits the slots at the index (the producer is split at the
//!    same index), so each piece owns the slots of its items; its folder writes them in
//!    order and returns a [`CollectResult`]: the run of slots it initialised.
//! 3. The reducer joins two adjacent results: when the left run ends where the right one
//!    starts (always, for an iterator that splits as it says), one longer run.
//! 4. At the root, a single run of `len` items at the first slot: the vector's length is
//!    set (no item moves).
//!
//! # Robustness: no item lost, none dropped twice
//! A result owns the items it records: dropping it (a panic in another piece unwinds
//! through the reducers) drops them, so a panicking collect leaks nothing and drops every
//! item it made exactly once; the vector's length is untouched. An iterator whose `opt_len`
//! is wrong, or an adaptor that splits without the index ([`UnindexedConsumer::split_off_left`],
//! which cannot know where the left piece's slots end), still collects every item in order,
//! by a slower path: a piece that runs out of slots, or was split off without any, keeps
//! its items in a `Vec` of its own (a *spill*), and a result is then a list of segments in
//! order (runs of slots and spills); the root moves them into the vector one after the
//! other. The fast path (one run) is what every indexed iterator of Zonal's takes. A length
//! the vector cannot even reserve goes the gathering way of unindexed iterators instead (the
//! caller, `collect.rs`, tries the reservation first).

use std::marker::PhantomData;
use std::mem::{self, MaybeUninit};
use std::ptr;

use crate::iter::plumbing::{Consumer, Folder, Reducer, UnindexedConsumer};
use crate::iter::ParallelIterator;

/// How an [`extend_in_place`] went (tests observe it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Written {
    /// How many pieces wrote into the vector's spare capacity.
    pub(crate) parts: usize,
    /// Whether every item was written in place (the fast path).
    pub(crate) in_place: bool,
}

/// Extends `vec` with the items of `iter`, of which there should be `len` (its `opt_len`),
/// written in place by the pieces.
pub(crate) fn extend_in_place<I>(vec: &mut Vec<I::Item>, len: usize, iter: I) -> Written
where
    I: ParallelIterator,
{
    let old_len = vec.len();
    vec.reserve(len);
    let slots = &mut vec.spare_capacity_mut()[..len];
    let first = slots.as_mut_ptr().cast::<I::Item>();
    // Every piece's pointer is derived from `first` by arithmetic (`split_at`), never by
    // reborrowing a sub-slice: a result that joins its right neighbour's run then reads and
    // drops those slots through a pointer allowed to (Miri's Tree Borrows refused the
    // sub-slice version, where the left piece's pointer had no permission over the right
    // piece's slots).
    // SAFETY: `first..first + len` are `vec`'s spare slots, which nothing else touches
    // until the consumer's results are given up below.
    let result = iter.drive_unindexed(unsafe { CollectConsumer::new(first, len) });
    let parts = result.parts;
    let segments = result.into_segments();
    let in_place = match segments[..] {
        [] => len == 0,
        [Segment::Slots { start, len: n }] => start == first && n == len,
        _ => false,
    };
    if in_place {
        // SAFETY: the one run initialised the `len` slots after the vector's items
        // (`first` is the first spare slot), and `into_segments` gave up its ownership.
        unsafe { vec.set_len(old_len + len) };
    } else {
        append_segments(vec, segments);
    }
    Written { parts, in_place }
}

/// The slow path: moves the segments' items, in order, to the end of `vec` (module docs).
fn append_segments<T>(vec: &mut Vec<T>, segments: Vec<Segment<T>>) {
    let total = segments.iter().map(Segment::len).sum();
    // The runs of slots lie in `vec`'s spare capacity: gather everything in a new vector
    // first (no item is dropped or read twice: each is moved once), then append it.
    let mut all: Vec<T> = Vec::with_capacity(total);
    for segment in segments {
        match segment {
            Segment::Slots { start, len } => {
                // SAFETY: `start..start + len` are initialised items owned by this segment
                // (given up by `into_segments`), in `vec`'s spare capacity, which `all` does
                // not overlap; `all` has room for `total` items and holds fewer before this.
                unsafe {
                    ptr::copy_nonoverlapping(start, all.as_mut_ptr().add(all.len()), len);
                    all.set_len(all.len() + len);
                }
            }
            Segment::Spill(mut items) => all.append(&mut items),
        }
    }
    vec.append(&mut all);
}

/// One piece's slots: the spare capacity its items go to.
///
/// Invariant: `start..start + len` are uninitialised slots this piece alone may write (a
/// part of the vector's spare capacity, borrowed for `'c`), and `start` derives from the
/// root's pointer by arithmetic only.
pub(crate) struct CollectConsumer<'c, T> {
    start: *mut T,
    len: usize,
    marker: PhantomData<&'c mut [MaybeUninit<T>]>,
}

// SAFETY: the consumer stands for exclusive access to its slots (type invariant), as a
// `&mut [MaybeUninit<T>]` would, which is `Send` for `T: Send`.
unsafe impl<T: Send> Send for CollectConsumer<'_, T> {}

impl<'c, T> CollectConsumer<'c, T> {
    /// # Safety
    /// `start..start + len` must be uninitialised slots that nothing else reads or writes
    /// for `'c` (the type's invariant).
    unsafe fn new(start: *mut T, len: usize) -> Self {
        CollectConsumer {
            start,
            len,
            marker: PhantomData,
        }
    }
}

impl<'c, T: Send + 'c> Consumer<T> for CollectConsumer<'c, T> {
    type Folder = CollectFolder<'c, T>;
    type Reducer = CollectReducer;
    type Result = CollectResult<'c, T>;

    fn split_at(self, index: usize) -> (Self, Self, CollectReducer) {
        // An index past the slots (a wrong length) leaves the right piece none: it spills.
        let mid = index.min(self.len);
        // SAFETY: the two pieces split `self`'s slots (type invariant) at `mid <= len`: each
        // gets its own part, and `start + mid` stays inside (or one past) the slots.
        unsafe {
            (
                CollectConsumer::new(self.start, mid),
                CollectConsumer::new(self.start.add(mid), self.len - mid),
                CollectReducer,
            )
        }
    }

    fn into_folder(self) -> CollectFolder<'c, T> {
        let start = self.start;
        CollectFolder {
            slots: self.len,
            result: CollectResult {
                run: Run { start, len: 0 },
                more: Vec::new(),
                parts: 0,
                marker: PhantomData,
            },
        }
    }

    fn full(&self) -> bool {
        false
    }
}

impl<'c, T: Send + 'c> UnindexedConsumer<T> for CollectConsumer<'c, T> {
    /// A piece split off without an index cannot know which slots are its: it spills
    /// (module docs), and `self` keeps every slot.
    fn split_off_left(&self) -> Self {
        // SAFETY: no slot at all (a dangling, aligned pointer with length 0).
        unsafe { CollectConsumer::new(ptr::NonNull::dangling().as_ptr(), 0) }
    }

    fn to_reducer(&self) -> CollectReducer {
        CollectReducer
    }
}

/// Writes a piece's items into its slots, in order; spills the items past its slots.
pub(crate) struct CollectFolder<'c, T> {
    /// How many slots the piece has (from `result.run.start`).
    slots: usize,
    result: CollectResult<'c, T>,
}

impl<'c, T> Folder<T> for CollectFolder<'c, T> {
    type Result = CollectResult<'c, T>;

    #[inline]
    fn consume(mut self, item: T) -> Self {
        let run = &mut self.result.run;
        if run.len < self.slots && self.result.more.is_empty() {
            // SAFETY: slot `run.len` is one of the piece's slots (`run.len < slots`), not yet
            // initialised; the run takes ownership of the item by growing right after.
            unsafe { run.start.add(run.len).write(item) };
            run.len += 1;
        } else {
            match self.result.more.last_mut() {
                Some(Segment::Spill(items)) => items.push(item),
                _ => self.result.more.push(Segment::Spill(vec![item])),
            }
        }
        self
    }

    /// The hot loop: each item written to the next slot, the run grown right after (so a
    /// panic in `iter` drops exactly the items written), then the rest spilled.
    #[inline]
    fn consume_iter<I: IntoIterator<Item = T>>(mut self, iter: I) -> Self {
        let mut iter = iter.into_iter();
        if self.result.more.is_empty() {
            let run = &mut self.result.run;
            while run.len < self.slots {
                let Some(item) = iter.next() else {
                    return self;
                };
                // SAFETY: as in `consume`: slot `run.len` is the piece's next free slot.
                unsafe { run.start.add(run.len).write(item) };
                run.len += 1;
            }
        }
        for item in iter {
            self = self.consume(item);
        }
        self
    }

    fn complete(mut self) -> CollectResult<'c, T> {
        self.result.parts = usize::from(self.result.run.len > 0);
        self.result
    }

    fn full(&self) -> bool {
        false
    }
}

/// Joins adjacent pieces' results.
pub(crate) struct CollectReducer;

impl<'c, T> Reducer<CollectResult<'c, T>> for CollectReducer {
    fn reduce(
        self,
        mut left: CollectResult<'c, T>,
        mut right: CollectResult<'c, T>,
    ) -> CollectResult<'c, T> {
        left.parts += right.parts;
        // Take `right`'s segments (it then owns nothing, and its drop drops nothing).
        let right_run = mem::replace(&mut right.run.len, 0);
        let right_more = mem::take(&mut right.more);
        if right_run > 0 {
            let start = right.run.start;
            // (Addresses compared with `wrapping_add`: a run's end is within its slots or
            // one past them, so it never wraps.)
            match left.more.last_mut() {
                // The usual case: the left run ends where the right one starts.
                None if left.run.start.wrapping_add(left.run.len) == start => {
                    left.run.len += right_run;
                }
                None if left.run.len == 0 => {
                    left.run = Run {
                        start,
                        len: right_run,
                    };
                }
                Some(Segment::Slots { start: s, len }) if s.wrapping_add(*len) == start => {
                    *len += right_run;
                }
                _ => left.more.push(Segment::Slots {
                    start,
                    len: right_run,
                }),
            }
        }
        left.more.extend(right_more);
        left
    }
}

/// A run of initialised slots.
struct Run<T> {
    start: *mut T,
    len: usize,
}

/// A part of a result: a run of slots, or items that found no slot.
enum Segment<T> {
    Slots { start: *mut T, len: usize },
    Spill(Vec<T>),
}

impl<T> Segment<T> {
    fn len(&self) -> usize {
        match self {
            Segment::Slots { len, .. } => *len,
            Segment::Spill(items) => items.len(),
        }
    }
}

/// What pieces collected: the items of `run` (slots), then those of `more` in order. It owns
/// them: dropping it drops them (a panic elsewhere).
pub(crate) struct CollectResult<'c, T> {
    run: Run<T>,
    more: Vec<Segment<T>>,
    /// How many pieces wrote into slots.
    parts: usize,
    /// The slots are borrowed from the vector for `'c`.
    marker: PhantomData<&'c mut [T]>,
}

// SAFETY: a result owns its items (`T: Send`) and the slots it points into are borrowed
// mutably for `'c` by this collect alone; moving it to another thread moves the items.
unsafe impl<T: Send> Send for CollectResult<'_, T> {}

impl<T> CollectResult<'_, T> {
    /// The segments in order; `self` gives up their ownership (the caller takes it).
    fn into_segments(mut self) -> Vec<Segment<T>> {
        let run = Segment::Slots {
            start: self.run.start,
            len: mem::replace(&mut self.run.len, 0),
        };
        let more = mem::take(&mut self.more);
        let mut segments = Vec::with_capacity(1 + more.len());
        if run.len() > 0 {
            segments.push(run);
        }
        segments.extend(more);
        segments
    }
}

impl<T> Drop for CollectResult<'_, T> {
    fn drop(&mut self) {
        // SAFETY: the run's slots are initialised items that this result owns (a result
        // gives them up only by zeroing `run.len` or moving its segments out).
        unsafe { drop_slots(self.run.start, self.run.len) };
        for segment in mem::take(&mut self.more) {
            if let Segment::Slots { start, len } = segment {
                // SAFETY: as above, for a later run of slots.
                unsafe { drop_slots(start, len) };
            }
        }
    }
}

/// Drops `len` initialised items from `start`.
///
/// # Safety
/// They are initialised, owned by the caller, and never used again.
unsafe fn drop_slots<T>(start: *mut T, len: usize) {
    // SAFETY: the contract.
    unsafe { ptr::drop_in_place(ptr::slice_from_raw_parts_mut(start, len)) };
}

#[cfg(test)]
mod test;
