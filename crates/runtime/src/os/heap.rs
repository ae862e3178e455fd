//! Page-aligned regions from the global allocator, where no `mmap` is used: under Miri
//! (which checks this code as it checks `NodeBuffer`'s) and on platforms other than Linux.
//! The memory is not zeroed, unlike `mmap`'s pages: nothing reads a region before writing
//! it (`NodeBuffer` fills first; a pool's headroom is never touched), and Miri would report
//! a read of uninitialised memory.

use std::io;

/// The page size these regions are aligned to (4 KiB, as `mmap` gives on the platforms
/// Zonal runs on).
pub(super) fn page_size() -> usize {
    4096
}

/// A page-aligned allocation of `len > 0` bytes.
pub(super) fn map(len: usize) -> io::Result<*mut u8> {
    let layout = std::alloc::Layout::from_size_align(len, page_size())
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    // SAFETY: `len > 0` (PageRegion never maps zero bytes), so the layout is not zero-sized.
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
