//! The kernel's side of pinning and memory binding, behind one small interface.
//!
//! Everything Zonal asks of the operating system about *where* things run and live goes
//! through this module, and nothing here loads a topology library:
//! - [`pin_current_thread`] / [`thread_affinity`] / [`current_cpu`]: a thread's CPU
//!   (`sched_setaffinity`, `sched_getaffinity`, `sched_getcpu` on Linux);
//! - `PageRegion`: page-aligned anonymous memory of its own (`mmap`), never shared with
//!   other allocations, so that a policy set on it (`mbind(2)` before the first touch) applies to it alone;
//! - [`page_nodes`] and [`area_policy`]: what the kernel says of memory (`move_pages(2)` as a
//!   query, `get_mempolicy(2)` with `MPOL_F_ADDR`), so that reports and tests read the
//!   kernel's view rather than our bookkeeping.
//!
//! Why not hwloc: loading an hwloc topology on x86 runs its `x86` backend, which binds the
//! loading thread to each PU in turn to read CPUID, then restores its binding. Zonal used to
//! load one for every `NodeBuffer`, on a worker: for the length of each load that worker ran
//! on every other worker's CPU, and a service creating buffers all the time always had one
//! mid-probe (seen in a 4-node guest, sampled from `/proc` while `service` ran:
//! `zonal-worker-5` on CPU 2, back on 5 a second later; the samples
//! `5,3,2,0,3,5,6,7`). Loads replayed one at a time and read *after* they finish show every
//! worker back on its CPU, which is why only sampling during the run (the guest test
//! `service_pinning.rs`) catches it. Syscalls on the calling thread change
//! nothing else. On platforms other than Linux, pinning goes through `core_affinity` and
//! memory binding is unsupported (buffers fall back to first touch, and say so).
//!
//! Under Miri (`cfg(miri)`), which runs no system call it does not model, the kernel's
//! side is `miri.rs`: memory is the real allocator's (so that `NodeBuffer`'s fill and drop
//! are checked as they are), and `mbind`, `move_pages`, `get_mempolicy` and the affinity
//! calls are stubs that say they are unsupported (`mbind` accepts and does nothing).

use std::io;
use std::sync::Mutex;

#[cfg(all(target_os = "linux", not(miri)))]
mod linux;
#[cfg(all(target_os = "linux", not(miri)))]
use linux as imp;
// Where a page is when `move_pages` cannot say (NUMA balancing's hinting faults).
#[cfg(all(target_os = "linux", not(miri)))]
mod pagemap;

#[cfg(all(not(target_os = "linux"), not(miri)))]
mod other;
#[cfg(all(not(target_os = "linux"), not(miri)))]
use other as imp;

#[cfg(miri)]
mod miri;
#[cfg(miri)]
use miri as imp;

// Page regions from the allocator where no `mmap` is used (`heap.rs`).
#[cfg(any(miri, not(target_os = "linux")))]
mod heap;
mod region;
pub(crate) use region::PageRegion;

/// How memory is tied to its node: the user's choice for a
/// [`NodeBuffer`](crate::NodeBuffer).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub enum MemoryPolicy {
    /// `MPOL_BIND`: pages come from the node only; when it is full the allocation fails
    /// (the kernel reclaims, then the OOM killer acts) rather than going elsewhere.
    #[default]
    Bind,
    /// `MPOL_PREFERRED`: pages come from the node while it has free memory, else from the
    /// nearest node that has.
    Preferred,
    /// No policy (`MPOL_DEFAULT`, Linux's local allocation): each page comes from the node
    /// of the thread that first writes it — for a [`NodeBuffer`](crate::NodeBuffer), the
    /// node's own workers, which fill it — and from elsewhere only when that node is full.
    /// The kernel may move the pages later (automatic NUMA balancing); nothing holds them.
    FirstTouch,
}

/// A memory policy as the kernel reports it for an address (`get_mempolicy(2)`).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct KernelPolicy {
    /// The mode.
    pub mode: PolicyMode,
    /// The nodes of the policy's node mask (OS ids), ascending; empty for modes without one.
    pub nodes: Vec<u32>,
}

/// The kernel's memory-policy modes (`MPOL_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
#[non_exhaustive]
pub enum PolicyMode {
    /// `MPOL_DEFAULT`: the task's policy, by default local allocation (first touch).
    Default,
    /// `MPOL_PREFERRED`.
    Preferred,
    /// `MPOL_BIND`.
    Bind,
    /// `MPOL_INTERLEAVE`.
    Interleave,
    /// `MPOL_LOCAL`.
    Local,
    /// `MPOL_PREFERRED_MANY` (what hwloc's non-strict bind becomes on Linux ≥ 5.15).
    PreferredMany,
    /// A mode this crate does not know, by number.
    Other(i32),
}

impl MemoryPolicy {
    /// The kernel mode this policy is applied as.
    #[must_use]
    pub fn mode(self) -> PolicyMode {
        match self {
            MemoryPolicy::Bind => PolicyMode::Bind,
            MemoryPolicy::Preferred => PolicyMode::Preferred,
            MemoryPolicy::FirstTouch => PolicyMode::Default,
        }
    }
}

/// Pins the calling thread to CPU `cpu` (OS index) and nothing else.
///
/// # Errors
/// The kernel's error: `EINVAL` for a CPU that is offline or outside the process's cpuset,
/// for example. On platforms without thread affinity, [`io::ErrorKind::Unsupported`].
pub fn pin_current_thread(cpu: u32) -> io::Result<()> {
    #[cfg(test)]
    if let Some(e) = fail_pins::injected(cpu) {
        return Err(e);
    }
    imp::pin_current_thread(cpu)
}

/// The call behind [`pin_current_thread`], to name in a pinning failure's reason.
pub(crate) const PIN_CALL: &str = imp::PIN_CALL;

/// Lets the calling thread run on every CPU in `cpus` (OS indexes).
///
/// # Errors
/// As [`pin_current_thread`].
pub fn set_thread_affinity(cpus: &[u32]) -> io::Result<()> {
    imp::set_thread_affinity(cpus)
}

/// The CPUs the calling thread may run on, ascending (OS indexes), as the kernel says.
///
/// # Errors
/// The kernel's error; [`io::ErrorKind::Unsupported`] where there is no thread affinity.
pub fn thread_affinity() -> io::Result<Vec<u32>> {
    imp::thread_affinity()
}

/// The CPUs the process's main thread may run on, ascending (`sched_getaffinity` of the
/// process id, which is the main thread's id: not the process's union, and not the calling
/// thread's).
///
/// # Errors
/// The kernel's error; [`io::ErrorKind::Unsupported`] where there is no thread affinity.
pub fn process_affinity() -> io::Result<Vec<u32>> {
    imp::process_affinity()
}

/// Lets thread `tid` (a thread id of this process, as [`current_thread_id`] gave it) run
/// on every CPU in `cpus` (OS indexes).
///
/// # Errors
/// As [`pin_current_thread`]; `ESRCH` for a thread that is gone.
pub(crate) fn set_thread_affinity_of(tid: i64, cpus: &[u32]) -> io::Result<()> {
    imp::set_thread_affinity_of(tid, cpus)
}

/// The calling thread's id (`gettid`), for [`set_thread_affinity_of`]; `None` where the
/// platform has none.
pub(crate) fn current_thread_id() -> Option<i64> {
    imp::current_thread_id()
}

/// The CPUs for the runtime's helper threads: the mask of the thread that last built a pool
/// from outside every pool, read before that build pinned anything ([`note_builder_cpus`]).
/// Empty until then.
static HELPER_CPUS: Mutex<Vec<u32>> = Mutex::new(Vec::new());

/// Called by a pool's build, from the building thread (not a worker of another pool),
/// before anything is pinned: its mask is what the helper threads get
/// ([`release_current_thread`]). The process's main thread is no stand-in for it: a pool
/// built on main with `use_current_thread` pins main to worker 0's CPU while the pool lives.
pub(crate) fn note_builder_cpus() {
    if let Ok(cpus) = thread_affinity() {
        if !cpus.is_empty() {
            *HELPER_CPUS.lock().unwrap_or_else(|e| e.into_inner()) = cpus;
        }
    }
}

/// The CPUs a helper thread runs on: [`note_builder_cpus`]'s, or, before any pool was
/// built, the main thread's ([`process_affinity`]).
fn helper_cpus() -> io::Result<Vec<u32>> {
    let noted = HELPER_CPUS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    if noted.is_empty() {
        process_affinity()
    } else {
        Ok(noted)
    }
}

/// Gives the calling thread the helper CPUs (the mask of the thread that built the last
/// pool, read before the build pinned anything: [`note_builder_cpus`]): for the runtime's
/// own helper threads (the timer, the control plane), which may be started from a pinned
/// worker, or from a caller pinned as worker 0 (`use_current_thread`), and would otherwise
/// inherit its one CPU. Best effort: where affinity cannot be read or set, the thread keeps
/// what it has.
pub(crate) fn release_current_thread() {
    if let Ok(cpus) = helper_cpus() {
        if let Err(e) = set_thread_affinity(&cpus) {
            tracing::debug!(target: "zonal_runtime", "helper thread keeps its affinity: {e}");
        }
    }
}

/// The CPU the calling thread runs on right now (`sched_getcpu`), if the platform says.
#[must_use]
pub fn current_cpu() -> Option<u32> {
    imp::current_cpu()
}

/// The page size.
#[must_use]
pub fn page_size() -> usize {
    imp::page_size()
}

/// Per page of `[addr, addr + len)`, the node the kernel holds it on (`Ok(node)`), or why
/// it cannot say ([`PageUnknown`]). A query: nothing moves, and no page is touched.
///
/// The first source is `move_pages(2)` with no target nodes. Linux 6.1 to 6.4 answer
/// `ENOENT` there for a page that automatic NUMA balancing (`kernel.numa_balancing = 1`)
/// has made `PROT_NONE` to sample its accesses, until the page is touched again: on a
/// default kernel, most pages of a buffer idle for a few scanner periods. Each page that
/// answered `ENOENT` is then looked up in `/proc/self/pagemap`: absent there, it is
/// [`PageUnknown::NotPresent`]; present with its frame number, its node is the node whose
/// memory block holds that frame (`/sys/devices/system/node/node*/memory*`). Without
/// `CAP_SYS_ADMIN` the kernel hides frame numbers; the page is then located only when its
/// mapping's pages all lie on one node (`/proc/self/numa_maps`), else it is
/// [`PageUnknown::Hidden`]. Touching the page would answer too, but would move it: a
/// hinting fault migrates a default-policy page to the node of the thread that touches it.
/// The protocol, with the evidence, is in `os/pagemap.rs`.
///
/// # Errors
/// The kernel's error for the whole call; [`io::ErrorKind::Unsupported`] off Linux.
pub fn page_nodes(addr: *const u8, len: usize) -> io::Result<Vec<Result<u32, PageUnknown>>> {
    imp::page_nodes(addr, len)
}

/// Why [`page_nodes`] cannot name a page's node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, thiserror::Error)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
#[non_exhaustive]
pub enum PageUnknown {
    /// No page: never touched (or discarded since), as `/proc/self/pagemap` confirms.
    #[error("no page: never touched")]
    NotPresent,
    /// Swapped out: on no node.
    #[error("swapped out")]
    Swapped,
    /// Present, but `move_pages` cannot follow it (NUMA balancing has made it `PROT_NONE`
    /// for a hinting fault) and no second source names its node: frame numbers are hidden
    /// without `CAP_SYS_ADMIN`, and its mapping's pages lie on several nodes.
    #[error(
        "present but hidden by NUMA balancing (PROT_NONE for a hinting fault); its frame \
         number needs CAP_SYS_ADMIN and its mapping spans several nodes"
    )]
    Hidden,
    /// `move_pages` answered `ENOENT` and `/proc/self/pagemap` could not be read: never
    /// touched, or hidden by NUMA balancing.
    #[error("move_pages answered ENOENT and /proc/self/pagemap is unreadable")]
    Unconfirmed,
    /// Another per-page error of `move_pages` (its errno: `EFAULT` for an address that is
    /// not mapped, say).
    #[error("move_pages: {}", io::Error::from_raw_os_error(*.0))]
    Kernel(i32),
}

/// The memory policy the kernel applies at `addr` (`get_mempolicy` with `MPOL_F_ADDR`).
///
/// # Errors
/// The kernel's error (`EFAULT` for an unmapped address); [`io::ErrorKind::Unsupported`]
/// off Linux.
pub fn area_policy(addr: *const u8) -> io::Result<KernelPolicy> {
    imp::area_policy(addr)
}

/// Whether this platform can place memory on a node (what [`NodeBuffer`](crate::NodeBuffer)
/// binds its pages with: `mbind` on Linux).
#[must_use]
pub fn can_bind_memory() -> bool {
    imp::CAN_BIND_MEMORY
}

/// The most CPUs and nodes the masks here describe (Debian's `CONFIG_NR_CPUS` is 8,192 and
/// `NODES_SHIFT` 10; Zonal's models stop at 4,096 of each).
#[cfg_attr(miri, allow(dead_code))] // the Miri stubs use no mask
pub(crate) const MASK_BITS: usize = 8_192;

/// A bit mask of `MASK_BITS` bits with `ids` set, or `InvalidInput` naming an id beyond it.
#[cfg_attr(miri, allow(dead_code))] // the Miri stubs use no mask
pub(crate) fn mask_of(ids: &[u32]) -> io::Result<Vec<u64>> {
    let mut mask = vec![0u64; MASK_BITS / 64];
    for &id in ids {
        let i = id as usize;
        if i >= MASK_BITS {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("id {id} is beyond the {MASK_BITS}-bit mask"),
            ));
        }
        mask[i / 64] |= 1 << (i % 64);
    }
    Ok(mask)
}

/// The ids set in `mask`, ascending.
#[cfg_attr(miri, allow(dead_code))] // the Miri stubs use no mask
pub(crate) fn ids_of(mask: &[u64]) -> Vec<u32> {
    let mut out = Vec::new();
    for (w, &word) in mask.iter().enumerate() {
        let mut bits = word;
        while bits != 0 {
            let b = bits.trailing_zeros();
            out.push((w * 64) as u32 + b);
            bits &= bits - 1;
        }
    }
    out
}

#[cfg(test)]
mod test;

/// Unit tests only: makes [`pin_current_thread`] fail, as on a platform or in a cpuset
/// where pinning is refused, for chosen CPUs on threads whose name starts with a chosen
/// prefix (a pool's workers, named by the test with `thread_name`), so that tests running
/// in parallel in the same process, and their pools, are not affected. Not compiled
/// outside `cargo test`.
#[cfg(test)]
#[cfg_attr(not(target_os = "linux"), allow(dead_code))] // its tests read Linux affinities
pub(crate) mod fail_pins {
    use std::io;
    use std::sync::Mutex;

    /// `(thread name prefix, CPUs)`: the failures in force.
    static FAILING: Mutex<Vec<(String, Vec<u32>)>> = Mutex::new(Vec::new());

    /// Pinning to any of `cpus` fails on threads named `prefix…` while this lives.
    #[derive(Debug)]
    pub(crate) struct FailPins {
        prefix: String,
    }

    impl FailPins {
        pub(crate) fn new(prefix: &str, cpus: &[u32]) -> Self {
            let mut f = FAILING.lock().unwrap_or_else(|e| e.into_inner());
            assert!(
                f.iter()
                    .all(|(p, _)| !p.starts_with(prefix) && !prefix.starts_with(p)),
                "failure prefixes must not overlap: {prefix:?}"
            );
            f.push((prefix.to_owned(), cpus.to_vec()));
            Self {
                prefix: prefix.to_owned(),
            }
        }
    }

    impl Drop for FailPins {
        fn drop(&mut self) {
            let mut f = FAILING.lock().unwrap_or_else(|e| e.into_inner());
            f.retain(|(p, _)| *p != self.prefix);
        }
    }

    /// The injected error for pinning the calling thread to `cpu`, if any.
    pub(super) fn injected(cpu: u32) -> Option<io::Error> {
        let thread = std::thread::current();
        let name = thread.name()?;
        let f = FAILING.lock().unwrap_or_else(|e| e.into_inner());
        f.iter()
            .any(|(p, cpus)| name.starts_with(p.as_str()) && cpus.contains(&cpu))
            .then(|| io::Error::new(io::ErrorKind::PermissionDenied, "refused by the test"))
    }
}
