//! Linux: the syscalls behind [`crate::os`], called directly through `libc`.

use std::io;

use super::{ids_of, mask_of, KernelPolicy, MemoryPolicy, PageUnknown, PolicyMode, MASK_BITS};

pub(super) const CAN_BIND_MEMORY: bool = true;

// `linux/mempolicy.h`: mbind flags and the get_mempolicy flag.
const MPOL_MF_STRICT: libc::c_uint = 1;
const MPOL_MF_MOVE: libc::c_uint = 1 << 1;
const MPOL_F_ADDR: libc::c_ulong = 1 << 1;
const MPOL_PREFERRED_MANY: libc::c_int = 5;
const MODE_FLAGS: libc::c_int =
    libc::MPOL_F_STATIC_NODES | libc::MPOL_F_RELATIVE_NODES | libc::MPOL_F_NUMA_BALANCING;

fn check(ret: libc::c_long) -> io::Result<libc::c_long> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

pub(super) const PIN_CALL: &str = "sched_setaffinity";

pub(super) fn pin_current_thread(cpu: u32) -> io::Result<()> {
    set_thread_affinity(&[cpu])
}

pub(super) fn set_thread_affinity(cpus: &[u32]) -> io::Result<()> {
    set_affinity(0, cpus)
}

pub(super) fn set_thread_affinity_of(tid: i64, cpus: &[u32]) -> io::Result<()> {
    let tid = libc::pid_t::try_from(tid)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, format!("thread id {tid}")))?;
    set_affinity(tid, cpus)
}

pub(super) fn current_thread_id() -> Option<i64> {
    // SAFETY: gettid has no preconditions and cannot fail.
    Some(unsafe { libc::syscall(libc::SYS_gettid) })
}

fn set_affinity(tid: libc::pid_t, cpus: &[u32]) -> io::Result<()> {
    let mask = mask_of(cpus)?;
    // SAFETY: `mask` is a live buffer of `MASK_BITS / 8` bytes, 8-byte aligned as
    // `cpu_set_t` needs; the kernel reads that many bytes and no more. `tid` is 0 (the
    // calling thread) or a thread id of this process.
    let ret = unsafe {
        libc::sched_setaffinity(tid, MASK_BITS / 8, mask.as_ptr().cast::<libc::cpu_set_t>())
    };
    check(ret.into()).map(drop)
}

pub(super) fn thread_affinity() -> io::Result<Vec<u32>> {
    affinity_of(0)
}

pub(super) fn process_affinity() -> io::Result<Vec<u32>> {
    // SAFETY: getpid has no preconditions. The process id is the main thread's id.
    affinity_of(unsafe { libc::getpid() })
}

fn affinity_of(pid: libc::pid_t) -> io::Result<Vec<u32>> {
    let mut mask = vec![0u64; MASK_BITS / 64];
    // SAFETY: as in `set_thread_affinity`; the kernel writes at most `MASK_BITS / 8` bytes
    // into the buffer. `pid` is 0 (the calling thread) or a thread id of this process.
    let ret = unsafe {
        libc::sched_getaffinity(
            pid,
            MASK_BITS / 8,
            mask.as_mut_ptr().cast::<libc::cpu_set_t>(),
        )
    };
    check(ret.into())?;
    Ok(ids_of(&mask))
}

pub(super) fn current_cpu() -> Option<u32> {
    // SAFETY: no arguments; returns -1 on failure.
    let cpu = unsafe { libc::sched_getcpu() };
    u32::try_from(cpu).ok()
}

pub(super) fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let s = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(s).ok().filter(|&s| s > 0).unwrap_or(4096)
}

/// `mbind(addr, len, mode, {node}, MPOL_MF_STRICT | MPOL_MF_MOVE)`. `addr` must be page
/// aligned and the range mapped by the caller (`PageRegion`).
pub(super) fn bind_area(
    addr: *mut u8,
    len: usize,
    node: u32,
    policy: MemoryPolicy,
) -> io::Result<()> {
    let mask = mask_of(&[node])?;
    // Pages already touched move with MOVE; STRICT reports those that cannot (only with
    // BIND: a preferred policy has nothing to be strict about). The default policy takes
    // an empty node mask (a null one).
    let (mode, flags, nodes) = match policy {
        MemoryPolicy::Bind => (
            libc::MPOL_BIND,
            MPOL_MF_STRICT | MPOL_MF_MOVE,
            mask.as_ptr(),
        ),
        MemoryPolicy::Preferred => (libc::MPOL_PREFERRED, 0, mask.as_ptr()),
        MemoryPolicy::FirstTouch => (libc::MPOL_DEFAULT, 0, std::ptr::null()),
    };
    // SAFETY: `addr..addr + len` is a mapping the caller owns; `nodes` is null or `mask`,
    // which holds `MASK_BITS` bits, and the kernel reads `maxnode - 1` of them (it
    // decrements maxnode first).
    let ret = unsafe {
        libc::syscall(
            libc::SYS_mbind,
            addr,
            len,
            mode,
            nodes,
            MASK_BITS + 1,
            flags,
        )
    };
    check(ret).map(drop)
}

pub(super) fn page_nodes(addr: *const u8, len: usize) -> io::Result<Vec<Result<u32, PageUnknown>>> {
    if len == 0 {
        // No byte, no page (rounding `addr` down would name the page before it).
        return Ok(Vec::new());
    }
    let page = page_size();
    let start = addr as usize & !(page - 1);
    let end = (addr as usize).saturating_add(len);
    let count = end.saturating_sub(start).div_ceil(page);
    if count == 0 {
        return Ok(Vec::new());
    }
    let pages: Vec<*const libc::c_void> = (0..count)
        .map(|i| (start + i * page) as *const libc::c_void)
        .collect();
    let mut status = vec![0 as libc::c_int; count];
    // SAFETY: `pages` and `status` hold `count` entries each; a null `nodes` makes
    // move_pages a query that moves nothing; pid 0 is this process.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_move_pages,
            0,
            count,
            pages.as_ptr(),
            std::ptr::null::<libc::c_int>(),
            status.as_mut_ptr(),
            0,
        )
    };
    check(ret)?;
    let mut out: Vec<Result<u32, PageUnknown>> = status
        .iter()
        .map(|&s| u32::try_from(s).map_err(|_| PageUnknown::Kernel(-s)))
        .collect();
    // `ENOENT`: never touched, or hidden by NUMA balancing; the second sources say which
    // (pagemap.rs), and where a hidden page is.
    let unfollowed: Vec<usize> = (0..count).filter(|&i| status[i] == -libc::ENOENT).collect();
    super::pagemap::resolve(start, page, &unfollowed, &mut out);
    Ok(out)
}

pub(super) fn area_policy(addr: *const u8) -> io::Result<KernelPolicy> {
    let mut mode: libc::c_int = 0;
    let mut mask = vec![0 as libc::c_ulong; MASK_BITS / 64];
    // SAFETY: `mode` and `mask` are live; the kernel writes `MASK_BITS` bits of mask at
    // most (maxnode = MASK_BITS); `addr` is only looked up, never dereferenced by us.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_get_mempolicy,
            &mut mode as *mut libc::c_int,
            mask.as_mut_ptr(),
            MASK_BITS,
            addr,
            MPOL_F_ADDR,
        )
    };
    check(ret)?;
    let mode = match mode & !MODE_FLAGS {
        libc::MPOL_DEFAULT => PolicyMode::Default,
        libc::MPOL_PREFERRED => PolicyMode::Preferred,
        libc::MPOL_BIND => PolicyMode::Bind,
        libc::MPOL_INTERLEAVE => PolicyMode::Interleave,
        libc::MPOL_LOCAL => PolicyMode::Local,
        MPOL_PREFERRED_MANY => PolicyMode::PreferredMany,
        m => PolicyMode::Other(m),
    };
    #[allow(clippy::unnecessary_cast)] // c_ulong is u64 on the 64-bit targets only
    let words: Vec<u64> = mask.iter().map(|&w| w as u64).collect();
    Ok(KernelPolicy {
        mode,
        nodes: ids_of(&words),
    })
}

/// An anonymous private mapping of `len` bytes (page multiple), never touched.
pub(super) fn map(len: usize) -> io::Result<*mut u8> {
    // SAFETY: a fresh anonymous mapping; no address hint, no file.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        Err(io::Error::last_os_error())
    } else {
        Ok(p.cast())
    }
}

/// Unmaps what [`map`] returned.
///
/// # Safety
/// `addr`/`len` are exactly a mapping from [`map`], no longer used.
pub(super) unsafe fn unmap(addr: *mut u8, len: usize) {
    // SAFETY: the caller's contract.
    unsafe { libc::munmap(addr.cast(), len) };
}
