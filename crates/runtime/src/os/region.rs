//! `PageRegion`: page-aligned memory of its own, bound before its first touch.
//!
//! A `NodeBuffer` used to live in the malloc heap, so binding it bound whatever else shared
//! its first and last pages, and pages malloc had touched before stayed where they were. A
//! region is a mapping of whole pages that nothing else uses: `mbind` on it changes only it,
//! and a fresh mapping has no page yet, so every page is allocated under the policy.

use std::io;
use std::ptr::NonNull;

use super::{imp, KernelPolicy, MemoryPolicy, PageUnknown};

/// Whole pages of anonymous memory, unmapped on drop. Zero bytes map nothing.
#[derive(Debug)]
pub(crate) struct PageRegion {
    ptr: NonNull<u8>,
    /// Mapped bytes (a page multiple; 0 for an empty region).
    len: usize,
}

// SAFETY: the region is plain memory owned by this value; who reads or writes it is the
// owner's business (NodeBuffer hands it out as a slice under Rust's borrow rules).
unsafe impl Send for PageRegion {}
// SAFETY: as above; `&PageRegion` only reads the pointer and asks the kernel about it.
unsafe impl Sync for PageRegion {}

impl PageRegion {
    /// A region of at least `bytes` bytes, rounded up to whole pages, not yet touched.
    pub(crate) fn new(bytes: usize) -> io::Result<Self> {
        if bytes == 0 {
            return Ok(Self {
                ptr: NonNull::dangling(),
                len: 0,
            });
        }
        let page = imp::page_size();
        let len = bytes
            .checked_next_multiple_of(page)
            .filter(|&l| l <= isize::MAX as usize)
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("{bytes} bytes cannot be mapped"),
                )
            })?;
        let p = imp::map(len)?;
        let ptr = NonNull::new(p)
            .ok_or_else(|| io::Error::new(io::ErrorKind::OutOfMemory, "null mapping"))?;
        Ok(Self { ptr, len })
    }

    /// The start of the region (page aligned; dangling when empty).
    pub(crate) fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// Mapped bytes.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Applies `policy` for `node` (OS id) to the whole region.
    pub(crate) fn bind(&self, node: u32, policy: MemoryPolicy) -> io::Result<()> {
        if self.len == 0 {
            return Ok(());
        }
        imp::bind_area(self.as_ptr(), self.len, node, policy)
    }

    /// Per page, the kernel's node (or its per-page error); none for an empty region (its
    /// dangling pointer names no page of ours).
    pub(crate) fn page_nodes(&self) -> io::Result<Vec<Result<u32, PageUnknown>>> {
        if self.len == 0 {
            return Ok(Vec::new());
        }
        imp::page_nodes(self.as_ptr(), self.len)
    }

    /// The policy the kernel applies to the region (read at its first page).
    pub(crate) fn policy(&self) -> io::Result<KernelPolicy> {
        if self.len == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "an empty region has no pages",
            ));
        }
        imp::area_policy(self.as_ptr())
    }
}

impl Drop for PageRegion {
    fn drop(&mut self) {
        if self.len > 0 {
            // SAFETY: `ptr`/`len` are the mapping made in `new`, dropped once.
            unsafe { imp::unmap(self.ptr.as_ptr(), self.len) };
        }
    }
}
