//! Job blocks: the memory a worker's spawned jobs live in.
//!
//! Every spawn allocates its job, and whoever runs the job frees it. With the global
//! allocator that is a `malloc` on the spawner's thread and, whenever the job was stolen, a
//! `free` on the thief's: glibc then sends the chunk back to the spawner's arena under that
//! arena's lock, and the spawner's thread cache keeps running dry. In a scope spawning many
//! small tasks those two calls were ~40 % of the profile. TBB and Cilk give each worker its
//! own task allocator for the same reason; this module is ours.
//!
//! # Layout
//!
//! A block is 32 or 64 bytes (its *class*): the job, then, in the block's last word, the
//! address of the [`SharedBlocks`] of the worker it belongs to. A job of at most 24 or 56
//! bytes and at most 16-byte alignment lives in a block of the smallest class that holds
//! it ([`class_of`]); bigger ones are boxed. Both sides decide by the job's type, so
//! [`alloc`] and [`free`] always agree.
//!
//! Each worker carves its blocks out of slabs of [`SLAB_BYTES`], aligned to their size (so
//! a block's slab is its address rounded down), one class per slab. A block never straddles
//! two cache lines. For jobs spawned from outside the pool a block belongs to nobody (a null
//! owner): it is a plain allocation of the global allocator and goes back there when the
//! job runs.
//!
//! # Who frees where
//!
//! - The owner's free lists ([`LocalBlocks`], one per class) are singly linked lists that
//!   only the owning worker thread touches: allocation pops one, and a block freed *by its
//!   owner* (a task it spawned and then popped itself, the common case) is pushed back with
//!   two plain stores.
//! - A block freed by any other thread (a thief ran the job) is pushed on its owner's
//!   `remote` list for its class ([`SharedBlocks`]), a Treiber stack: one compare-and-swap,
//!   Release.
//! - When a free list is empty the owner takes the whole remote list with one swap
//!   (Acquire, pairing with the pushers' Release: their last reads of the block happen
//!   before the owner writes a new job into it). Only whole-list swaps remove blocks from a
//!   remote stack, so pushes cannot suffer ABA.
//!
//! # How memory goes back
//!
//! A burst of spawns grows the slabs to the burst's size. When the worker runs out of work
//! and is about to park, it [trims](LocalBlocks::trim): it takes its remote lists, counts
//! its free blocks per slab, and frees every slab whose blocks are all free, keeping
//! [`KEEP_SLABS`] per class. The rest are freed when the pool's registry is dropped.
//!
//! Keeping a burst's slabs for the next one instead (reused through the old links, or
//! carved again in address order) measured slower on the 100,000-spawn scope, 4.1–5.4 ms
//! against 3.0–4.2 ms with one worker: the next burst's allocations then walk memory that
//! went cold while the worker slept, where fresh slabs are linked in one sequential pass.
//! Giving the memory back at the first park also bounds what an idle pool holds.
//!
//! # Why a block is never used after its slab is gone
//!
//! An owned block is only handed to jobs queued in its owner's own pool (the caller of
//! [`alloc`] passes its cache only then), and only that pool's workers run them; a worker
//! holds its registry alive while it runs a job. A trim frees a slab only when each of its
//! blocks is on one of the owner's lists, that is, freed by its last user (a thief's push
//! is its last touch of the block). So every block, its slab and the owner's remote lists
//! outlive every use.

use std::alloc::{alloc as raw_alloc, dealloc, handle_alloc_error, Layout};
use std::cell::Cell;
use std::collections::HashMap;
use std::mem::{align_of, size_of, MaybeUninit};
use std::ptr;
use std::sync::atomic::Ordering;

use crate::sync::{AtomicPtr, AtomicUsize, Mutex, MutexGuard};

thread_local! {
    /// The free lists of the worker running on this thread, null on any other thread: set
    /// by the worker for exactly as long as it runs ([`LocalBlocks::enter`]), so that a job
    /// freed by its owner's thread goes back on the owner's free list (`release`).
    static CURRENT: Cell<*const LocalBlocks> = const { Cell::new(ptr::null()) };
}

/// Block sizes, one per class.
const CLASS_SIZE: [usize; CLASSES] = [32, 64];
/// Number of classes.
const CLASSES: usize = 2;
/// The owner word at the end of each block.
const OWNER_WORD: usize = size_of::<*const SharedBlocks>();
/// Alignment a job in a block may need: the global allocator's for a small request, which
/// is what an unowned block is.
const JOB_ALIGN: usize = 16;
/// Bytes per slab, and its alignment.
pub(crate) const SLAB_BYTES: usize = 16 << 10;
/// Slabs per class a trim keeps even when they are free (16 KiB per class).
pub(crate) const KEEP_SLABS: usize = 1;

/// A block: `CLASS_SIZE[class]` bytes, at least `JOB_ALIGN`-aligned. Its bytes hold the job
/// (or, while free, the free-list link in the first word), and its last word the owner's
/// `SharedBlocks` (null: the global allocator's), written once when the block is made.
type BlockPtr = *mut u8;

/// The class of block a `T` lives in, or `None` if it is boxed.
pub(crate) const fn class_of<T>() -> Option<usize> {
    if align_of::<T>() > JOB_ALIGN {
        return None;
    }
    let need = size_of::<T>() + OWNER_WORD;
    let mut c = 0;
    while c < CLASSES {
        if need <= CLASS_SIZE[c] {
            return Some(c);
        }
        c += 1;
    }
    None
}

/// The free-list link of a free block.
///
/// # Safety
/// `b` must be a block no job occupies.
unsafe fn next_of(b: BlockPtr) -> *mut BlockPtr {
    b.cast()
}

/// The owner word of a block of class `class`.
///
/// # Safety
/// `b` must be a block of that class.
unsafe fn owner_of(b: BlockPtr, class: usize) -> *mut *const SharedBlocks {
    // SAFETY: the last word is inside the block, and 8-aligned in a 16-aligned block.
    unsafe { b.add(CLASS_SIZE[class] - OWNER_WORD).cast() }
}

fn unowned_layout(class: usize) -> Layout {
    // A plain `malloc` for glibc: its fast path (16-byte alignment), unlike an over-aligned
    // request.
    Layout::from_size_align(CLASS_SIZE[class], JOB_ALIGN).expect("a valid layout")
}

fn slab_layout() -> Layout {
    Layout::from_size_align(SLAB_BYTES, SLAB_BYTES).expect("a valid layout")
}

/// The slab a block of a worker lies in.
fn slab_of(b: BlockPtr) -> usize {
    b.addr() & !(SLAB_BYTES - 1)
}

/// The part of a worker's blocks other threads touch: frees from other threads and the slabs.
pub(crate) struct SharedBlocks {
    /// Per class, blocks freed by other threads (Treiber stacks; the owner takes them whole).
    remote: [AtomicPtr<u8>; CLASSES],
    /// Every live slab of this worker, freed by a trim or on drop.
    slabs: Mutex<Vec<SlabPtr>>,
    /// `slabs.len()`, for metrics without the lock.
    live: AtomicUsize,
}

/// A slab's address (owned by its `SharedBlocks`).
struct SlabPtr(*mut u8);

// SAFETY: a slab is plain memory owned by its `SharedBlocks`; the pointer is only used to
// free it, once, by a trim of the owner or in `SharedBlocks::drop`.
unsafe impl Send for SlabPtr {}

impl SharedBlocks {
    pub(crate) fn new() -> Self {
        Self {
            // Not `[const { .. }; CLASSES]`: loom's atomics have no const constructor.
            remote: std::array::from_fn(|_| AtomicPtr::new(ptr::null_mut())),
            slabs: Mutex::new(Vec::new()),
            live: AtomicUsize::new(0),
        }
    }

    fn slabs(&self) -> MutexGuard<'_, Vec<SlabPtr>> {
        // Nothing panics while holding the lock (pushes and retains); recover anyway.
        self.slabs.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Pushes a block freed by a thread other than its owner.
    ///
    /// # Safety
    /// `b` is an owned block of this worker, of class `class`, that no job occupies any more.
    unsafe fn push_remote(&self, b: BlockPtr, class: usize) {
        let remote = &self.remote[class];
        let mut head = remote.load(Ordering::Relaxed);
        loop {
            // SAFETY: the block is free and ours to link until the CAS publishes it.
            unsafe { *next_of(b) = head };
            // Release: our last reads of the job (and the link just written) happen before
            // the owner's Acquire swap that takes the list. After success we never touch
            // the block again.
            match remote.compare_exchange_weak(head, b, Ordering::Release, Ordering::Relaxed) {
                Ok(_) => return,
                Err(h) => head = h,
            }
        }
    }

    /// Bytes of slabs this worker holds (a metric; Relaxed, may lag a concurrent change).
    pub(crate) fn memory_bytes(&self) -> u64 {
        (self.live.load(Ordering::Relaxed) * SLAB_BYTES) as u64
    }

    /// Number of live slabs (for tests).
    #[cfg(all(test, not(zonal_loom)))]
    fn slab_count(&self) -> usize {
        self.slabs().len()
    }
}

impl Default for SharedBlocks {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for SharedBlocks {
    fn drop(&mut self) {
        // The registry is going away: no worker runs, so no job occupies a block any more
        // (a job never run leaks its captures, not its block's memory).
        let slabs = self.slabs.get_mut().unwrap_or_else(|e| e.into_inner());
        for s in slabs.drain(..) {
            // SAFETY: `s` was allocated in `LocalBlocks::new_slab` with `slab_layout()` and
            // is freed only here or by a trim, which removed it from this list.
            unsafe { dealloc(s.0, slab_layout()) };
        }
    }
}

/// The owner's side of a worker's blocks: its free lists. Lives in the `WorkerThread`, so
/// only the owning thread touches it (it is `!Sync` through the `Cell`s).
pub(crate) struct LocalBlocks {
    free: [Cell<BlockPtr>; CLASSES],
    /// Live slabs per class.
    slabs: [Cell<usize>; CLASSES],
    /// Per class, whether the owner freed a block since the last trim (a slab can only have
    /// become all free if some block was freed: here, or on the remote list).
    freed: [Cell<bool>; CLASSES],
    shared: *const SharedBlocks,
}

impl LocalBlocks {
    /// # Safety
    /// `shared` must outlive this value and every block it hands out (it lives in the
    /// registry that the worker holding this value keeps alive).
    pub(crate) unsafe fn new(shared: &SharedBlocks) -> Self {
        Self {
            free: [const { Cell::new(ptr::null_mut()) }; CLASSES],
            slabs: [const { Cell::new(0) }; CLASSES],
            freed: [const { Cell::new(false) }; CLASSES],
            shared,
        }
    }

    /// Makes these the free lists of this thread's jobs (`release`): the worker that owns
    /// them calls this when it starts running on its thread.
    ///
    /// # Safety
    /// `self` must stay where it is, alive, until [`leave`](Self::leave) on this thread.
    pub(crate) unsafe fn enter(&self) {
        CURRENT.with(|c| c.set(self));
    }

    /// Ends [`enter`](Self::enter) on this thread (a no-op during the thread's TLS teardown).
    pub(crate) fn leave() {
        let _ = CURRENT.try_with(|c| c.set(ptr::null()));
    }

    fn shared(&self) -> &SharedBlocks {
        // SAFETY: `new`'s contract.
        unsafe { &*self.shared }
    }

    /// A block of class `class` for a new job.
    #[inline]
    fn alloc(&self, class: usize) -> BlockPtr {
        let b = self.free[class].get();
        if b.is_null() {
            return self.alloc_cold(class);
        }
        // SAFETY: blocks on our free list are free and ours.
        self.free[class].set(unsafe { *next_of(b) });
        b
    }

    #[cold]
    fn alloc_cold(&self, class: usize) -> BlockPtr {
        // Acquire: pairs with `push_remote`'s Release.
        let taken = self.shared().remote[class].swap(ptr::null_mut(), Ordering::Acquire);
        if !taken.is_null() {
            // SAFETY: the swap made the list ours; its blocks are free.
            self.free[class].set(unsafe { *next_of(taken) });
            return taken;
        }
        self.new_slab(class)
    }

    /// Makes a slab of class `class`, keeps its first block and puts the rest on the (empty)
    /// free list.
    fn new_slab(&self, class: usize) -> BlockPtr {
        let layout = slab_layout();
        // SAFETY: the layout has a non-zero size.
        let slab = unsafe { raw_alloc(layout) };
        if slab.is_null() {
            handle_alloc_error(layout);
        }
        let size = CLASS_SIZE[class];
        let n = SLAB_BYTES / size;
        for i in 0..n {
            // SAFETY: block `i` is inside the slab just allocated, ours alone; the link goes
            // to the next block, the last one's to the current (empty) free list.
            unsafe {
                let b = slab.add(i * size);
                *owner_of(b, class) = self.shared;
                *next_of(b) = if i + 1 < n {
                    slab.add((i + 1) * size)
                } else {
                    self.free[class].get()
                };
            }
        }
        let mut slabs = self.shared().slabs();
        slabs.push(SlabPtr(slab));
        self.shared().live.store(slabs.len(), Ordering::Relaxed);
        drop(slabs);
        self.slabs[class].set(self.slabs[class].get() + 1);
        // SAFETY: block 0 is free and ours; it links to block 1.
        self.free[class].set(unsafe { *next_of(slab) });
        slab
    }

    /// Puts back a block of ours freed on our own thread.
    ///
    /// # Safety
    /// `b` is an owned block of this worker, of class `class`, that no job occupies any more.
    #[inline]
    unsafe fn push_local(&self, b: BlockPtr, class: usize) {
        // SAFETY: the block is free and ours.
        unsafe { *next_of(b) = self.free[class].get() };
        self.free[class].set(b);
        self.freed[class].set(true);
    }

    /// Gives back every slab whose blocks are all free, keeping [`KEEP_SLABS`] per class
    /// (module docs, "How memory goes back"). Called by the owner before it parks; costs a
    /// walk of the free lists, and nothing when the worker has few slabs or nothing was
    /// freed since the last trim (so a worker whose slabs stay partly in use does not walk
    /// them at every park).
    #[cold]
    pub(crate) fn trim(&self) {
        for class in 0..CLASSES {
            let freed = self.freed[class].replace(false)
                || !self.shared().remote[class]
                    .load(Ordering::Relaxed)
                    .is_null();
            if freed && self.slabs[class].get() > KEEP_SLABS {
                self.trim_class(class);
            }
        }
    }

    fn trim_class(&self, class: usize) {
        let mut blocks = Vec::new();
        // Acquire: as in `alloc_cold`.
        let remote = self.shared().remote[class].swap(ptr::null_mut(), Ordering::Acquire);
        for head in [self.free[class].replace(ptr::null_mut()), remote] {
            let mut b = head;
            while !b.is_null() {
                blocks.push(b);
                // SAFETY: blocks on our lists are free and ours.
                b = unsafe { *next_of(b) };
            }
        }
        let per_slab = SLAB_BYTES / CLASS_SIZE[class];
        let mut free_in: HashMap<usize, usize> = HashMap::new();
        for &b in &blocks {
            *free_in.entry(slab_of(b)).or_default() += 1;
        }
        let mut empty: Vec<usize> = free_in
            .into_iter()
            .filter_map(|(slab, n)| (n == per_slab).then_some(slab))
            .collect();
        empty.truncate(self.slabs[class].get().saturating_sub(KEEP_SLABS));
        empty.sort_unstable();
        let doomed = |b: BlockPtr| empty.binary_search(&slab_of(b)).is_ok();
        for &b in blocks.iter().rev() {
            if !doomed(b) {
                // SAFETY: `b` is free and ours, of this class.
                unsafe { self.push_local(b, class) };
            }
        }
        // Putting the survivors back is not a new free.
        self.freed[class].set(false);
        if empty.is_empty() {
            return;
        }
        let mut slabs = self.shared().slabs();
        slabs.retain(|s| {
            let gone = empty.binary_search(&s.0.addr()).is_ok();
            if gone {
                // SAFETY: every block of this slab was on our lists and is on none now, so
                // nothing refers to it; it came from `new_slab` with `slab_layout()` and
                // leaves the list here, so it is freed once.
                unsafe { dealloc(s.0, slab_layout()) };
            }
            !gone
        });
        self.shared().live.store(slabs.len(), Ordering::Relaxed);
        drop(slabs);
        self.slabs[class].set(self.slabs[class].get() - empty.len());
    }
}

/// A block that belongs to nobody (a job spawned from outside the pool).
fn unowned_block(class: usize) -> BlockPtr {
    let layout = unowned_layout(class);
    // SAFETY: the layout has a non-zero size.
    let b = unsafe { raw_alloc(layout) };
    if b.is_null() {
        handle_alloc_error(layout);
    }
    // SAFETY: `b` is a fresh block of this class.
    unsafe { *owner_of(b, class) = ptr::null() };
    b
}

/// Moves `value` to the heap: into a block from `local` if it has a [class](class_of) (a
/// block of nobody's without `local`), else into a `Box`. Undo with [`free`].
///
/// `local` must be the cache of a worker of the pool whose queues the job goes to (module
/// docs, "Why a block is never used after its slab is gone").
#[inline]
pub(crate) fn alloc<T>(local: Option<&LocalBlocks>, value: T) -> *mut T {
    let Some(class) = (const { class_of::<T>() }) else {
        return Box::into_raw(Box::new(value));
    };
    let b = match local {
        Some(l) => l.alloc(class),
        None => unowned_block(class),
    };
    let p = b.cast::<T>();
    // SAFETY: the block is free, at least `JOB_ALIGN`-aligned, and holds `size_of::<T>()`
    // bytes before its owner word; `T`'s alignment is at most `JOB_ALIGN` (`class_of`).
    unsafe { p.write(value) };
    p
}

/// Moves the value back out of memory from [`alloc`] and frees that memory.
///
/// # Safety
/// `p` came from [`alloc::<T>`](alloc) and is freed once.
#[inline]
pub(crate) unsafe fn free<T>(p: *mut T) -> T {
    // SAFETY: `p` holds a live `T` (caller); it is moved out exactly once.
    let value = unsafe { p.read() };
    match const { class_of::<T>() } {
        // SAFETY: `alloc` put the `T` in a block of this class; the value was moved out.
        Some(class) => unsafe { release(p.cast(), class) },
        // SAFETY: `alloc` boxed it; `MaybeUninit` frees the box without dropping the value
        // we moved out.
        None => drop(unsafe { Box::from_raw(p.cast::<MaybeUninit<T>>()) }),
    }
    value
}

/// Returns a block no job occupies any more to where it belongs.
///
/// # Safety
/// `b` came from `alloc` as a block of class `class` and is released once.
#[inline]
unsafe fn release(b: BlockPtr, class: usize) {
    // SAFETY: the owner word is written once when the block is made.
    let owner = unsafe { *owner_of(b, class) };
    if owner.is_null() {
        // SAFETY: an unowned block was allocated alone with this layout.
        unsafe { dealloc(b, unowned_layout(class)) };
        return;
    }
    let local = CURRENT.with(Cell::get);
    // SAFETY: CURRENT is non-null only while the worker that set it runs on this thread
    // (`LocalBlocks::enter`), and its `LocalBlocks` lives (in the worker) until it clears it.
    match unsafe { local.as_ref() } {
        // SAFETY: the block is ours and free.
        Some(l) if ptr::eq(l.shared, owner) => unsafe { l.push_local(b, class) },
        // SAFETY: the owner's registry is alive (module docs) and the block is free.
        _ => unsafe { (*owner).push_remote(b, class) },
    }
}

#[cfg(all(test, zonal_loom))]
mod loom;

#[cfg(all(test, not(zonal_loom)))]
mod test {
    use std::sync::Arc;

    use super::*;

    fn cache(shared: &SharedBlocks) -> LocalBlocks {
        // SAFETY: every test keeps `shared` alive past the cache and its blocks.
        unsafe { LocalBlocks::new(shared) }
    }

    #[test]
    fn classes_by_size_and_alignment() {
        assert_eq!(class_of::<()>(), Some(0));
        assert_eq!(class_of::<[u64; 3]>(), Some(0));
        assert_eq!(class_of::<[u64; 4]>(), Some(1));
        assert_eq!(class_of::<[u64; 7]>(), Some(1));
        assert_eq!(class_of::<[u64; 8]>(), None);
        assert_eq!(
            class_of::<crossbeam_utils::CachePadded<u8>>(),
            None,
            "over-aligned"
        );
    }

    #[test]
    fn small_values_share_slabs_big_ones_are_boxed() {
        let shared = SharedBlocks::new();
        let local = cache(&shared);
        let a = alloc(Some(&local), [1u64; 7]);
        let b = alloc(Some(&local), [2u64; 6]);
        let c = alloc(Some(&local), 3u8);
        assert_eq!(a.addr() % SLAB_BYTES, 0, "the first block of a new slab");
        assert_eq!(b.addr() - a.addr(), 64, "consecutive blocks of one slab");
        assert_eq!(c.addr() % SLAB_BYTES, 0, "a slab of the other class");
        let big = alloc(Some(&local), [4u64; 8]);
        // SAFETY: each came from `alloc` and is freed once.
        unsafe {
            assert_eq!(free(a), [1; 7]);
            assert_eq!(free(big), [4; 8]);
            assert_eq!(free(c), 3);
            // Not on a worker thread: the block goes to the owner's remote list...
            assert_eq!(free(b), [2; 6]);
        }
        // ... which the next allocation takes once the free list runs dry.
        let seen: Vec<_> = (0..SLAB_BYTES / 64)
            .map(|_| alloc(Some(&local), [0u64; 7]))
            .collect();
        assert_eq!(shared.slab_count(), 2, "freed blocks were reused");
        for p in seen {
            // SAFETY: as above.
            unsafe { free(p) };
        }
    }

    #[test]
    fn unowned_blocks_go_back_to_the_allocator() {
        let p = alloc(None, [5u64; 2]);
        // SAFETY: as above.
        assert_eq!(unsafe { free(p) }, [5, 5]);
    }

    /// A job pointer handed to another thread to free.
    struct Sent(*mut usize);
    // SAFETY: the pointee is a plain `usize` in a block; one thread frees it.
    unsafe impl Send for Sent {}

    #[test]
    fn blocks_freed_on_other_threads_come_back() {
        let shared = Arc::new(SharedBlocks::new());
        let local = cache(&shared);
        let per_slab = SLAB_BYTES / 32;
        for _round in 0..4 {
            let mut ps: Vec<Sent> = (0..1000).map(|i| Sent(alloc(Some(&local), i))).collect();
            std::thread::scope(|s| {
                while !ps.is_empty() {
                    let chunk = ps.split_off(ps.len().saturating_sub(250));
                    s.spawn(move || {
                        for p in chunk {
                            // SAFETY: each pointer came from `alloc::<usize>` and is freed
                            // once, by this thread alone.
                            unsafe { free(p.0) };
                        }
                    });
                }
            });
        }
        assert_eq!(
            shared.slab_count(),
            1000_usize.div_ceil(per_slab),
            "every round reused the blocks of the first"
        );
    }

    #[test]
    fn trim_frees_empty_slabs_beyond_the_kept_ones_and_only_those() {
        let shared = SharedBlocks::new();
        let local = cache(&shared);
        let per_slab = SLAB_BYTES / 32;
        let n = per_slab * (KEEP_SLABS + 6);
        let ps: Vec<_> = (0..n).map(|i| alloc(Some(&local), i)).collect();
        assert_eq!(shared.slab_count(), KEEP_SLABS + 6);
        // Free all but one block of the last slab (its blocks went out last).
        let (free_now, held) = ps.split_at(n - 1);
        for &p in free_now {
            // SAFETY: as above.
            unsafe { free(p) };
        }
        local.trim();
        assert_eq!(
            shared.slab_count(),
            KEEP_SLABS,
            "the empty slabs beyond the kept ones went back"
        );
        // SAFETY: `held[0]` is live: its slab survived and its value is intact.
        assert_eq!(unsafe { held[0].read() }, n - 1);
        // The lists are sound after the trim.
        // SAFETY: as above.
        assert_eq!(unsafe { free(held[0]) }, n - 1);
        let again: Vec<_> = (0..n).map(|i| alloc(Some(&local), i)).collect();
        for (i, p) in again.into_iter().enumerate() {
            // SAFETY: as above.
            assert_eq!(unsafe { free(p) }, i);
        }
        local.trim();
        assert_eq!(shared.slab_count(), KEEP_SLABS);
    }
}
