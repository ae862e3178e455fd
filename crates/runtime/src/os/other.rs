//! Platforms other than Linux: pinning through `core_affinity` where it works; no memory
//! binding (buffers fall back to first touch and say so); no kernel queries.

use std::io;

use super::{KernelPolicy, MemoryPolicy};

// Memory: page-aligned allocations from the global allocator, 4 KiB pages (`heap.rs`).
pub(super) use super::heap::{map, page_size, unmap};

pub(super) const CAN_BIND_MEMORY: bool = false;

fn unsupported(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        format!("{what} is not supported on this platform"),
    )
}

pub(super) const PIN_CALL: &str = "core_affinity";

pub(super) fn pin_current_thread(cpu: u32) -> io::Result<()> {
    if core_affinity::set_for_current(core_affinity::CoreId { id: cpu as usize }) {
        Ok(())
    } else {
        Err(unsupported("thread affinity"))
    }
}

pub(super) fn set_thread_affinity(_cpus: &[u32]) -> io::Result<()> {
    Err(unsupported("thread affinity to a set of CPUs"))
}

pub(super) fn set_thread_affinity_of(_tid: i64, _cpus: &[u32]) -> io::Result<()> {
    Err(unsupported("thread affinity to a set of CPUs"))
}

pub(super) fn current_thread_id() -> Option<i64> {
    None
}

pub(super) fn thread_affinity() -> io::Result<Vec<u32>> {
    Err(unsupported("reading thread affinity"))
}

pub(super) fn process_affinity() -> io::Result<Vec<u32>> {
    Err(unsupported("reading process affinity"))
}

pub(super) fn current_cpu() -> Option<u32> {
    None
}

pub(super) fn bind_area(_: *mut u8, _: usize, _: u32, _: MemoryPolicy) -> io::Result<()> {
    Err(unsupported("memory binding"))
}

pub(super) fn page_nodes(
    _: *const u8,
    _: usize,
) -> io::Result<Vec<Result<u32, super::PageUnknown>>> {
    Err(unsupported("page node queries"))
}

pub(super) fn area_policy(_: *const u8) -> io::Result<KernelPolicy> {
    Err(unsupported("memory policy queries"))
}
