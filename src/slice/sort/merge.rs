//! The stable parallel merge sort (`par_sort*`): sorted leaves, then parallel merges that
//! ping-pong between the slice and one scratch buffer.
//!
//! # The algorithm
//! [`Sort::sort_range`] halves the range down to leaves of at most `leaf` elements, which std's
//! stable sort sorts in place; the two sorted halves of a range are then merged by
//! [`Sort::par_merge`]: the longer run is cut at its midpoint, the cut's element is looked up by
//! binary search in the other run, and the two pairs of pieces are merged by `join`,
//! recursively, down to a sequential merge of at most `cutoff` elements.
//!
//! Stability: when the left run is cut at its element `x`, the right run is cut before its
//! first element not less than `x` (elements equal to `x` stay after it); when the right
//! run is cut at `y`, the left run is cut after its last element not greater than `y`
//! (elements equal to `y` stay before it). The sequential merge takes from the right run
//! only when its element is strictly less.
//!
//! # One buffer, ping-pong
//! The scratch buffer has the slice's length; it is allocated once, uninitialised and
//! untouched: its first touch is each leaf's or merge's own write, on the worker that runs
//! it (so the pages are spread over the merging workers, not faulted by one thread). A
//! call to [`Sort::sort_range`] is told where its result goes (`into_buf`): its halves put theirs
//! in the other place, so each level moves every element exactly once (from the slice into
//! the buffer or back), and the top call puts its result in the slice.
//!
//! # Span
//! The sort's recursion is `log2(n / leaf)` levels deep, each merge's at most
//! `log_{4/3}(n / cutoff)` (a split leaves each side at most three quarters of the
//! elements): `O(log² n)` levels of `join` in all. Every sequential pass (a leaf's sort and
//! copy, a merge below the cutoff) handles at most `max(leaf, cutoff)` elements; the binary
//! searches add `O(log n)` comparisons per merge level (`O(log³ n)` comparisons on the
//! critical path, against `O(n)` for a merge on one thread). `SpanProbe` observes both
//! (tests).
//!
//! # Panic safety
//! A comparison may panic anywhere. Every element lives, at any time, either in the slice
//! or in the buffer (the buffer's copies are bitwise moves, never dropped by the buffer);
//! the invariant every call keeps is: *when it unwinds, all the elements of its range are
//! in its destination*, each exactly once.
//! - A leaf sorts in the slice (std's sort leaves a permutation when it unwinds) and, when
//!   its destination is the buffer, copies its range there, on success or unwind alike.
//! - A range whose halves unwind (one may have finished): both halves' elements are in the
//!   halves' destination, which is the range's source; a [`CopyOnDrop`] guard copies the
//!   whole range into the range's destination.
//! - A merge reads its source and writes its destination (the source keeps stale bitwise
//!   copies): when a comparison panics, [`MergeState`]'s drop copies the elements not yet
//!   merged into the remaining slots of the destination, in order. A parallel merge whose
//!   binary search panics copies both runs whole; its two sub-merges write disjoint parts.
//!
//! The top call's destination is the slice: whatever panics, the slice ends as a
//! permutation of its elements, nothing lost or duplicated (as std's `MergeHole`).

use std::cmp::Ordering;
use std::mem;
use std::ptr;
#[cfg(test)]
use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};

/// What the sort reports about its shape: a no-op in the sort itself ([`NoProbe`]), the
/// recursion depth and the longest sequential pass in tests (`SpanProbe`).
pub(crate) trait Probe: Sync {
    /// A sequential pass (a leaf, a merge below the cutoff) of `len` elements, at `depth`
    /// levels of `join` below the top.
    fn sequential(&self, len: usize, depth: usize);
}

/// The sort's probe: observes nothing.
pub(crate) struct NoProbe;

impl Probe for NoProbe {
    #[inline(always)]
    fn sequential(&self, _len: usize, _depth: usize) {}
}

/// The deepest recursion and the longest sequential pass of a sort (the span's two parts).
#[cfg(test)]
#[derive(Debug, Default)]
pub(crate) struct SpanProbe {
    /// The most levels of `join` above a sequential pass.
    pub(crate) max_depth: AtomicUsize,
    /// The most elements one sequential pass handled.
    pub(crate) max_pass: AtomicUsize,
    /// How many sequential passes ran.
    pub(crate) passes: AtomicUsize,
}

#[cfg(test)]
impl Probe for SpanProbe {
    fn sequential(&self, len: usize, depth: usize) {
        // Relaxed: counters read after the sort's `join`s have returned (which synchronise).
        self.max_depth.fetch_max(depth, AtomicOrdering::Relaxed);
        self.max_pass.fetch_max(len, AtomicOrdering::Relaxed);
        self.passes.fetch_add(1, AtomicOrdering::Relaxed);
    }
}

/// The shape of one sort: leaves of at most `leaf` elements, sequential merges of at most
/// `cutoff`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Shape {
    pub(crate) leaf: usize,
    pub(crate) cutoff: usize,
}

/// Sorts `v` stably by `compare`, in parallel, with the given shape (module docs).
pub(crate) fn merge_sort<T, F, P>(v: &mut [T], compare: &F, shape: Shape, probe: &P)
where
    T: Send,
    F: Fn(&T, &T) -> Ordering + Sync,
    P: Probe,
{
    let len = v.len();
    // A merge of more than two elements, none of its runs empty, has a run of two or more
    // to cut at its midpoint: both halves are then smaller than the merge.
    let shape = Shape {
        leaf: shape.leaf.max(1),
        cutoff: shape.cutoff.max(2),
    };
    if len <= shape.leaf || mem::size_of::<T>() == 0 {
        v.sort_by(compare);
        probe.sequential(len, 0);
        return;
    }
    // Never initialised nor read as a `Vec`: its length stays 0, so dropping it frees the
    // memory without dropping any element (the elements all end in `v`).
    let mut buf: Vec<T> = Vec::with_capacity(len);
    let sort = Sort {
        v: Ptr(v.as_mut_ptr()),
        buf: Ptr(buf.as_mut_ptr()),
        compare,
        shape,
        probe,
    };
    // SAFETY: `v` (through `sort.v`) holds `len` initialised elements and is borrowed
    // mutably for the whole call; `buf` has room for `len` elements and is not otherwise
    // used; the top call's destination is `v` (`into_buf` false), so every element is back
    // in `v` when it returns or unwinds (module docs: panic safety).
    unsafe { sort.sort_range(0, len, false, 0) };
}

/// A raw pointer that may cross to another worker.
struct Ptr<T>(*mut T);

impl<T> Clone for Ptr<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Ptr<T> {}

impl<T> Ptr<T> {
    /// The pointer (a method, so that closures capture the whole `Ptr`, which is `Send`,
    /// and not its field).
    fn get(self) -> *mut T {
        self.0
    }
}

// SAFETY: a `Ptr` is only the address of a slice's or the buffer's elements; the sort hands
// disjoint ranges of them to concurrent tasks (module docs), and the elements are `Send`.
unsafe impl<T: Send> Send for Ptr<T> {}
// SAFETY: as for `Send`: sharing the address hands out no access by itself.
unsafe impl<T: Send> Sync for Ptr<T> {}

/// One sort's constant state: the slice, the buffer, the comparison, the shape, the probe.
struct Sort<'a, T, F, P> {
    v: Ptr<T>,
    buf: Ptr<T>,
    compare: &'a F,
    shape: Shape,
    probe: &'a P,
}

impl<T, F, P> Sort<'_, T, F, P>
where
    T: Send,
    F: Fn(&T, &T) -> Ordering + Sync,
    P: Probe,
{
    /// Sorts the elements `start..end` of the slice; the result goes to the buffer's
    /// `start..end` when `into_buf`, else to the slice's.
    ///
    /// # Safety
    /// `start..end` is within the sort's length; the slice's `start..end` holds the range's
    /// elements (the buffer's holds nothing owned) and no other task touches either range
    /// during the call. When the call returns or unwinds, all the range's elements are in
    /// its destination, each once, and its source range holds nothing owned.
    unsafe fn sort_range(&self, start: usize, end: usize, into_buf: bool, depth: usize) {
        let len = end - start;
        if len <= self.shape.leaf {
            // SAFETY: the range is within the slice and ours alone (the contract).
            let run = unsafe { std::slice::from_raw_parts_mut(self.v.get().add(start), len) };
            // On success or unwind alike, the leaf's elements (a permutation of them, if
            // std's sort unwinds) go to the buffer when it is the destination.
            // (`src` is not derived from `run`, which the sort borrows mutably.)
            let _copy = into_buf.then(|| CopyOnDrop {
                // SAFETY: `start` is within the slice.
                src: unsafe { self.v.get().add(start) },
                // SAFETY: `start` is within the buffer, which has the slice's length.
                dest: unsafe { self.buf.get().add(start) },
                len,
            });
            run.sort_by(self.compare);
            self.probe.sequential(len, depth);
            return;
        }
        let mid = start + len / 2;
        let (src, dest) = if into_buf {
            (self.v.get(), self.buf.get())
        } else {
            (self.buf.get(), self.v.get())
        };
        // The halves put their results in `src` (they are told `!into_buf`), and so do
        // they when they unwind: the guard then moves the whole range to `dest`. (`join`
        // returns or unwinds only once both halves are done: the guard never races one.)
        let guard = CopyOnDrop {
            // SAFETY: `start` is within both the slice and the buffer (same length).
            src: unsafe { src.add(start) },
            // SAFETY: as above.
            dest: unsafe { dest.add(start) },
            len,
        };
        zonal_runtime::join(
            // SAFETY: the halves are disjoint parts of our range: each is its own.
            || unsafe { self.sort_range(start, mid, !into_buf, depth + 1) },
            // SAFETY: as above.
            || unsafe { self.sort_range(mid, end, !into_buf, depth + 1) },
        );
        mem::forget(guard);
        // SAFETY: both halves are sorted in `src`, which owns them; `dest`'s range holds
        // nothing owned and is ours; the runs and the destination do not overlap (the slice
        // and the buffer are different allocations).
        unsafe {
            self.par_merge(
                Run::new(src.add(start), mid - start),
                Run::new(src.add(mid), end - mid),
                Ptr(dest.add(start)),
                depth + 1,
            );
        }
    }

    /// Merges the sorted runs `left` and `right` into `dest` (stable: `left`'s elements
    /// first among equals), in parallel above the cutoff.
    ///
    /// # Safety
    /// Both runs are initialised, owned by this call and not written by anyone during it;
    /// `dest` has room for `left.len + right.len` elements, is owned by this call, and
    /// overlaps neither run. When the call returns or unwinds, `dest` holds all the runs'
    /// elements, each once (the runs' copies are then stale).
    unsafe fn par_merge(&self, left: Run<T>, right: Run<T>, dest: Ptr<T>, depth: usize) {
        let len = left.len + right.len;
        if len <= self.shape.cutoff || left.len == 0 || right.len == 0 {
            // SAFETY: the contract, passed on.
            unsafe { self.merge(left, right, dest.get()) };
            self.probe.sequential(len, depth);
            return;
        }
        // A panicking comparison in the search: both runs go to `dest` whole.
        let guard = MergeState {
            left: left.ptr.get(),
            // SAFETY: one past the end of the left run.
            left_end: unsafe { left.ptr.get().add(left.len) },
            right: right.ptr.get(),
            // SAFETY: one past the end of the right run.
            right_end: unsafe { right.ptr.get().add(right.len) },
            out: dest.get(),
        };
        // SAFETY: the runs are initialised and nobody writes them during the call.
        let (l, r) = unsafe { (left.as_slice(), right.as_slice()) };
        let (lmid, rmid) = if l.len() >= r.len() {
            let lmid = l.len() / 2;
            // Before `l[lmid]`: the right run's elements less than it.
            let rmid = r.partition_point(|y| (self.compare)(y, &l[lmid]) == Ordering::Less);
            (lmid, rmid)
        } else {
            let rmid = r.len() / 2;
            // Before `r[rmid]`: the left run's elements not greater than it.
            let lmid = l.partition_point(|x| (self.compare)(x, &r[rmid]) != Ordering::Greater);
            (lmid, rmid)
        };
        mem::forget(guard);
        // SAFETY: the pieces split both runs and `dest` at matching points (the first pair
        // fills `dest[..lmid + rmid]`, the second the rest): each sub-merge owns its pieces.
        let (left_hi, right_hi, dest_hi) = unsafe {
            (
                Run::new(left.ptr.get().add(lmid), left.len - lmid),
                Run::new(right.ptr.get().add(rmid), right.len - rmid),
                Ptr(dest.get().add(lmid + rmid)),
            )
        };
        zonal_runtime::join(
            // SAFETY: the split above: disjoint pieces, each owned by its sub-merge.
            || unsafe {
                self.par_merge(
                    Run::new(left.ptr.get(), lmid),
                    Run::new(right.ptr.get(), rmid),
                    dest,
                    depth + 1,
                )
            },
            // SAFETY: as above.
            || unsafe { self.par_merge(left_hi, right_hi, dest_hi, depth + 1) },
        );
    }

    /// Merges `left` and `right` into `dest` on this thread.
    ///
    /// # Safety
    /// As [`Sort::par_merge`](Self::par_merge).
    unsafe fn merge(&self, left: Run<T>, right: Run<T>, dest: *mut T) {
        let mut state = MergeState {
            left: left.ptr.get(),
            // SAFETY: one past the end of the left run.
            left_end: unsafe { left.ptr.get().add(left.len) },
            right: right.ptr.get(),
            // SAFETY: one past the end of the right run.
            right_end: unsafe { right.ptr.get().add(right.len) },
            out: dest,
        };
        while state.left < state.left_end && state.right < state.right_end {
            // SAFETY: both cursors are before their run's end: initialised elements that
            // nobody writes during the call.
            let take_right =
                unsafe { (self.compare)(&*state.right, &*state.left) == Ordering::Less };
            let from = if take_right { state.right } else { state.left };
            // SAFETY: `from` is an element of a run and `out` the next free slot of `dest`
            // (it has room for what is left of both runs); they do not overlap. The cursor
            // taken from moves past the element, so it is copied exactly once.
            unsafe {
                ptr::copy_nonoverlapping(from, state.out, 1);
                state.out = state.out.add(1);
                if take_right {
                    state.right = state.right.add(1);
                } else {
                    state.left = state.left.add(1);
                }
            }
        }
        // `state`'s drop copies what is left of either run (on unwind too).
    }
}

/// A run of initialised elements: its start and length.
struct Run<T> {
    ptr: Ptr<T>,
    len: usize,
}

impl<T> Run<T> {
    /// # Safety
    /// `ptr..ptr + len` is within one allocation.
    unsafe fn new(ptr: *mut T, len: usize) -> Self {
        Run { ptr: Ptr(ptr), len }
    }

    /// The run as a shared slice.
    ///
    /// # Safety
    /// The run's elements are initialised and nobody writes them while the slice lives.
    unsafe fn as_slice<'a>(&self) -> &'a [T] {
        // SAFETY: the contract.
        unsafe { std::slice::from_raw_parts(self.ptr.get(), self.len) }
    }
}

/// On drop, copies `len` elements from `src` to `dest` (moves a range to its destination,
/// on success or unwind).
struct CopyOnDrop<T> {
    src: *const T,
    dest: *mut T,
    len: usize,
}

impl<T> Drop for CopyOnDrop<T> {
    fn drop(&mut self) {
        // SAFETY: whoever built the guard made `src` hold `len` owned elements and `dest` room
        // for them in another allocation (the slice and the buffer); after the copy the
        // `src` copies are stale and never dropped.
        unsafe { ptr::copy_nonoverlapping(self.src, self.dest, self.len) };
    }
}

/// A sequential merge in progress: the cursors in both runs and the next free slot of the
/// destination. On drop (at the end, or when a comparison unwinds) the rest of the left run
/// and then the rest of the right run are copied to the destination, so the destination
/// holds every element once (std's `MergeHole`).
struct MergeState<T> {
    left: *mut T,
    left_end: *mut T,
    right: *mut T,
    right_end: *mut T,
    out: *mut T,
}

impl<T> Drop for MergeState<T> {
    fn drop(&mut self) {
        // SAFETY: `left..left_end` and `right..right_end` are what is left of the runs
        // (owned, initialised, not yet copied), and `out` has room for exactly that many
        // elements (the destination's length is the runs' total, less what was copied); the
        // destination overlaps neither run. Cursors only move forward within their runs, so
        // the differences are non-negative (the casts are exact; `offset_from_unsigned` is
        // newer than the MSRV).
        unsafe {
            let l = self.left_end.offset_from(self.left) as usize;
            ptr::copy_nonoverlapping(self.left, self.out, l);
            let r = self.right_end.offset_from(self.right) as usize;
            ptr::copy_nonoverlapping(self.right, self.out.add(l), r);
        }
    }
}

#[cfg(test)]
mod test;
