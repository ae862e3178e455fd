//! Platforms other than Linux: pinning through `core_affinity` where it works; no memory
//! binding (buffers fall back to first touch and say so); no kernel queries.

use std::io;

use super::{KernelPolicy, MemoryPolicy};

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

pub(super) fn page_size() -> usize {
    4096
}

pub(super) fn bind_area(_: *mut u8, _: usize, _: u32, _: MemoryPolicy) -> io::Result<()> {
    Err(unsupported("memory binding"))
}

pub(super) fn page_nodes(_: *const u8, _: usize) -> io::Result<Vec<Result<u32, i32>>> {
    Err(unsupported("page node queries"))
}

pub(super) fn area_policy(_: *const u8) -> io::Result<KernelPolicy> {
    Err(unsupported("memory policy queries"))
}

pub(super) fn map(len: usize) -> io::Result<*mut u8> {
    let layout = std::alloc::Layout::from_size_align(len, page_size())
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    // SAFETY: `len > 0` (PageRegion never maps zero bytes).
    let p = unsafe { std::alloc::alloc(layout) };
    if p.is_null() {
        Err(io::Error::new(
            io::ErrorKind::OutOfMemory,
            "allocation failed",
        ))
    } else {
        Ok(p)
    }
}

/// # Safety
/// `addr`/`len` are exactly an allocation from [`map`], no longer used.
pub(super) unsafe fn unmap(addr: *mut u8, len: usize) {
    // SAFETY: the caller's contract; the layout is the one `map` used.
    unsafe {
        std::alloc::dealloc(
            addr,
            std::alloc::Layout::from_size_align_unchecked(len, page_size()),
        )
    };
}
