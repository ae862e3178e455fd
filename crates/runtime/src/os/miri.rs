//! Under Miri: the kernel's side of [`crate::os`] as stubs, memory as the real allocator's.
//!
//! Miri runs no system call it does not model (`mbind`, `move_pages`, `get_mempolicy`,
//! `sched_setaffinity` among them), so these stand in for them: the queries and the
//! affinity calls say they are unsupported, `mbind` accepts and places nothing. Memory is
//! what `NodeBuffer` writes, reads and drops, and Miri checks that code: it comes from
//! `std::alloc`, page aligned, as `mmap` would give it. Pools under Miri are virtual (no
//! topology is discovered), so `NodeBuffer` takes the virtual path, whose fill (split over
//! the node's workers) and drop are the real ones.

use std::io;

use super::{KernelPolicy, MemoryPolicy};

// Memory: page-aligned allocations from the global allocator, 4 KiB pages (`heap.rs`).
pub(super) use super::heap::{map, page_size, unmap};

pub(super) const CAN_BIND_MEMORY: bool = true;

fn unsupported(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        format!("{what} is a stub under Miri"),
    )
}

pub(super) const PIN_CALL: &str = "sched_setaffinity (a stub under Miri)";

pub(super) fn pin_current_thread(_cpu: u32) -> io::Result<()> {
    Err(unsupported("sched_setaffinity"))
}

pub(super) fn set_thread_affinity(_cpus: &[u32]) -> io::Result<()> {
    Err(unsupported("sched_setaffinity"))
}

pub(super) fn set_thread_affinity_of(_tid: i64, _cpus: &[u32]) -> io::Result<()> {
    Err(unsupported("sched_setaffinity"))
}

pub(super) fn current_thread_id() -> Option<i64> {
    None
}

pub(super) fn thread_affinity() -> io::Result<Vec<u32>> {
    Err(unsupported("sched_getaffinity"))
}

pub(super) fn process_affinity() -> io::Result<Vec<u32>> {
    Err(unsupported("sched_getaffinity"))
}

pub(super) fn current_cpu() -> Option<u32> {
    None
}

pub(super) fn bind_area(_: *mut u8, _: usize, _: u32, _: MemoryPolicy) -> io::Result<()> {
    Ok(())
}

pub(super) fn page_nodes(
    _: *const u8,
    len: usize,
) -> io::Result<Vec<Result<u32, super::PageUnknown>>> {
    if len == 0 {
        return Ok(Vec::new());
    }
    Err(unsupported("move_pages"))
}

pub(super) fn area_policy(_: *const u8) -> io::Result<KernelPolicy> {
    Err(unsupported("get_mempolicy"))
}
