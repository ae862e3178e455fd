//! Model tests of the job blocks' cross-thread protocol under loom: blocks freed by other
//! threads (Treiber pushes on the owner's remote lists, `push_remote`) while the owner takes
//! those lists whole (`alloc_cold`) or trims its slabs (`trim`), on the very `SharedBlocks`
//! and `LocalBlocks` the pool runs. A block lost, handed out twice, or left on a list after
//! its slab was freed fails the checks at the end of each execution.
//!
//! ```text
//! RUSTFLAGS="--cfg zonal_loom" cargo test -p zonal-runtime --lib --release blocks::loom
//! ```
//!
//! Loom sees the atomics (`crate::sync`), not the plain writes of a block's link word; those
//! are ordered by the Release push and the Acquire swap that the model explores.

use std::collections::BTreeSet;

use loom::sync::Arc;
use loom::thread;

use super::{next_of, slab_of, BlockPtr, LocalBlocks, SharedBlocks, CLASS_SIZE, SLAB_BYTES};
use crate::loom_support;

/// The class the models use (32-byte blocks).
const CLASS: usize = 0;

/// A block handed to another thread to free.
struct Sent(BlockPtr);
// SAFETY: a block is plain memory; the receiving thread is its only user.
unsafe impl Send for Sent {}

/// Explores with at most 3 preemptions per execution, unless `LOOM_MAX_PREEMPTIONS` says
/// otherwise.
fn model(f: impl Fn() + Sync + Send + 'static) {
    loom_support::model(3, f);
}

/// Allocates a new slab's blocks, every one of them: all in use, the free list empty.
fn drain(local: &LocalBlocks) -> Vec<BlockPtr> {
    assert!(local.free[CLASS].get().is_null());
    let mut out = vec![local.alloc(CLASS)];
    while !local.free[CLASS].get().is_null() {
        out.push(local.alloc(CLASS));
    }
    out
}

/// Every block on a list starting at `head`.
fn walk(mut head: BlockPtr) -> Vec<BlockPtr> {
    let mut out = Vec::new();
    while !head.is_null() {
        out.push(head);
        // SAFETY: blocks on the owner's lists are free; their first word is the link.
        head = unsafe { *next_of(head) };
    }
    out
}

/// The free blocks the owner can reach once every other thread is done: its free list and
/// its remote list (taken whole, as `alloc_cold` does).
fn reachable(local: &LocalBlocks, shared: &SharedBlocks) -> Vec<BlockPtr> {
    let mut out = walk(local.free[CLASS].get());
    out.extend(walk(
        shared.remote[CLASS].swap(std::ptr::null_mut(), std::sync::atomic::Ordering::Acquire),
    ));
    out
}

/// Frees `blocks` on threads of their own, one each (`push_remote`).
fn free_elsewhere(shared: &Arc<SharedBlocks>, blocks: &[BlockPtr]) -> Vec<thread::JoinHandle<()>> {
    blocks
        .iter()
        .map(|&b| {
            let (s, b) = (Arc::clone(shared), Sent(b));
            thread::spawn(move || {
                let b = b;
                // SAFETY: an owned block of `s`'s worker, in use by nobody now.
                unsafe { s.push_remote(b.0, CLASS) }
            })
        })
        .collect()
}

/// Two threads free a block each while the owner, its free list empty, allocates: it takes
/// the remote list (whatever part of it is there) or makes a new slab. Every block freed is
/// reachable exactly once afterwards, or was handed out by that allocation.
#[test]
fn remote_frees_race_the_owners_allocation() {
    model(|| {
        let shared = Arc::new(SharedBlocks::new());
        // SAFETY: `shared` outlives `local` and every block (dropped last, below).
        let local = unsafe { LocalBlocks::new(&shared) };
        let mut used = drain(&local);
        assert_eq!(used.len(), SLAB_BYTES / CLASS_SIZE[CLASS]);
        let freed = [used.pop().unwrap(), used.pop().unwrap()];
        let threads = free_elsewhere(&shared, &freed);
        let got = local.alloc(CLASS);
        for t in threads {
            t.join().unwrap();
        }
        let mut seen = reachable(&local, &shared);
        seen.push(got);
        let distinct: BTreeSet<usize> = seen.iter().map(|b| b.addr()).collect();
        assert_eq!(distinct.len(), seen.len(), "a block reachable twice");
        for b in freed {
            assert!(distinct.contains(&b.addr()), "a freed block was lost");
        }
        for b in &used {
            assert!(
                !distinct.contains(&b.addr()),
                "a block in use is on a free list"
            );
        }
        drop(local);
        drop(shared);
    });
}

/// Two threads free the last two blocks of a second slab while the owner trims: the slab
/// goes back only if both frees reached the remote list before the trim's swap. After a
/// second trim (the frees done) only the kept slab is left, and no list holds a block of a
/// freed slab.
#[test]
fn a_trim_races_remote_frees() {
    model(|| {
        let shared = Arc::new(SharedBlocks::new());
        // SAFETY: as above.
        let local = unsafe { LocalBlocks::new(&shared) };
        let first = drain(&local);
        let mut second = drain(&local);
        assert_eq!(shared.slabs().len(), 2);
        let remote = [second.pop().unwrap(), second.pop().unwrap()];
        for b in second {
            // SAFETY: owned blocks of ours, in use by nobody.
            unsafe { local.push_local(b, CLASS) };
        }
        let threads = free_elsewhere(&shared, &remote);
        local.trim();
        for t in threads {
            t.join().unwrap();
        }
        local.trim();
        let slabs: BTreeSet<usize> = shared.slabs().iter().map(|s| s.0.addr()).collect();
        assert_eq!(
            slabs.into_iter().collect::<Vec<_>>(),
            [slab_of(first[0])],
            "the all-free second slab went back, the first (in use) stayed"
        );
        assert!(
            reachable(&local, &shared).is_empty(),
            "a free block of a freed slab"
        );
        drop(local);
        drop(shared);
    });
}
