//! Node-local memory: [`NodeBuffer`], an owned buffer whose pages live on a chosen node.
//!
//! The protocol, on a real machine (not a virtual pool):
//! 1. **Memory of its own.** The buffer is a fresh anonymous mapping of whole pages
//!    (`os::PageRegion`), shared with no other allocation, so a policy set on it applies to
//!    it alone, and no page of it exists yet.
//! 2. **Bound before first touch.** `mbind(2)` sets the policy the caller chose
//!    ([`MemoryPolicy::Bind`], the default, or [`MemoryPolicy::Preferred`]) for the node
//!    on the whole mapping, before anything writes to it: every page is then allocated under
//!    that policy wherever the writing thread runs. [`MemoryPolicy::FirstTouch`] sets none:
//!    the pages go where step 3 writes them.
//! 3. **Filled on the node, in parallel.** The elements are split into contiguous parts,
//!    one per worker of the node (at most one per page), and each part is written by a
//!    task pinned to its worker (`spawn_pinned`: never stolen, so never written from
//!    another node), so that first touch happens on the node even without a policy (one
//!    asked for, or a failed bind) and a large buffer fills at the node's speed rather than
//!    one core's. A node without such a worker (memory only, no allowed or online CPU, or
//!    only the caller adopted as worker 0 while another thread asks) is filled by the
//!    calling thread, and its pages still go to the node through the policy.
//! 4. **Where it was touched, as seen.** Each part notes the node of the CPU it ran on
//!    (`sched_getcpu`, at its start and at its end); [`NodeBuffer::first_touch_nodes`]
//!    reports them, so a worker that was not on its node (its pinning failed) shows.
//!
//! [`NodeBuffer::binding`] names what was applied; [`NodeBuffer::kernel_policy`] and
//! [`NodeBuffer::page_nodes`] ask the kernel what it did (`get_mempolicy`, `move_pages`, and
//! for the pages NUMA balancing hides from `move_pages`, `/proc/self/pagemap`).
//! In a virtual pool (a topology that is not this machine's) nodes are not real memory:
//! the buffer is still initialised on the node's workers ([`MemoryBinding::Virtual`]),
//! whose virtual nodes are then the first-touch nodes reported.
//!
//! Zero-sized `T` and empty buffers map nothing: their elements live at an aligned dangling
//! pointer (as a `Vec`'s do), they have no page, and the kernel is not asked about them.

use std::collections::BTreeSet;
use std::io;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut, Range};
use std::ptr::NonNull;
use std::sync::Mutex;

use zonal_topology::NodeId;

use crate::construct::Caller;
use crate::os::{self, KernelPolicy, MemoryPolicy, PageRegion, PageUnknown};
use crate::{MemoryError, SpawnError, ThreadPool};

/// How a [`NodeBuffer`]'s memory was bound to its node (or why it was not).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
#[non_exhaustive]
pub enum MemoryBinding {
    /// `MPOL_BIND` to the node before first touch: the kernel allocated every page there.
    Bound,
    /// `MPOL_PREFERRED` for the node before first touch: pages there while it had room.
    Preferred,
    /// Not bound (the reason: [`MemoryPolicy::FirstTouch`] asked for it, or why the bind
    /// failed); initialised by the node's workers, so Linux's default first-touch policy
    /// put the pages on the nodes [`NodeBuffer::first_touch_nodes`] names.
    FirstTouch(String),
    /// Initialised by the workers of a virtual node (not real memory binding).
    Virtual,
    /// The node has no worker to fill it and the memory is not bound (the bind failed, or
    /// [`MemoryPolicy::FirstTouch`] asked for none): initialised by the calling thread,
    /// wherever it ran ([`NodeBuffer::first_touch_nodes`] says where).
    CallerTouch,
}

/// An owned buffer of `T` on one NUMA node.
///
/// ```
/// # use zonal_runtime::doc_facade as zonal;
/// use zonal::runtime::{NodeBuffer, MemoryBinding, ThreadPoolBuilder};
/// use zonal::topology::NodeId;
/// let pool = ThreadPoolBuilder::new().preset("s1").no_policy().build()?;
/// let buf = NodeBuffer::new_in(&pool, NodeId(3), 1000, |i| i as f64);
/// assert_eq!(buf[999], 999.0);
/// assert_eq!(buf.node(), NodeId(3));
/// assert_eq!(*buf.binding(), MemoryBinding::Virtual);
/// # Ok::<(), zonal::BuildError>(())
/// ```
pub struct NodeBuffer<T> {
    region: PageRegion,
    len: usize,
    node: NodeId,
    binding: MemoryBinding,
    /// The nodes the filling threads ran on (step 4), ascending.
    touched: Vec<NodeId>,
    _owns: PhantomData<T>,
}

// SAFETY: the buffer owns its `T`s (as a Vec<T> would): sending it sends them.
unsafe impl<T: Send> Send for NodeBuffer<T> {}
// SAFETY: `&NodeBuffer<T>` only hands out `&[T]`.
unsafe impl<T: Sync> Sync for NodeBuffer<T> {}

impl<T: std::fmt::Debug> std::fmt::Debug for NodeBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NodeBuffer")
            .field("node", &self.node)
            .field("binding", &self.binding)
            .field("first_touch_nodes", &self.touched)
            .field("data", &&**self)
            .finish()
    }
}

impl<T: Send + Sync> NodeBuffer<T> {
    /// Allocates `len` elements bound to `node` ([`MemoryPolicy::Bind`]), initialising
    /// element `i` to `init(i)` on the workers of that node (each a part of the buffer, in
    /// parallel; module docs).
    ///
    /// # Panics
    /// If `node` is not a node of the pool's topology or the memory cannot be mapped (see
    /// [`try_new_in`](Self::try_new_in)), or if `init` panics.
    pub fn new_in(
        pool: &ThreadPool,
        node: NodeId,
        len: usize,
        init: impl Fn(usize) -> T + Sync + Send,
    ) -> Self {
        Self::try_new_in(pool, node, len, init).unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`new_in`](Self::new_in), or an error.
    ///
    /// # Errors
    /// [`SpawnError::UnknownNode`], [`SpawnError::Memory`].
    ///
    /// # Panics
    /// If `init` panics (the panic resumes here).
    pub fn try_new_in(
        pool: &ThreadPool,
        node: NodeId,
        len: usize,
        init: impl Fn(usize) -> T + Sync + Send,
    ) -> Result<Self, SpawnError> {
        Self::try_new_in_with(pool, node, len, MemoryPolicy::Bind, init)
    }

    /// [`try_new_in`](Self::try_new_in) with the memory policy to apply on a real machine.
    ///
    /// ```
    /// # use zonal_runtime::doc_facade as zonal;
    /// use zonal::runtime::{os::MemoryPolicy, NodeBuffer, ThreadPoolBuilder};
    /// use zonal::topology::NodeId;
    /// let pool = ThreadPoolBuilder::new().num_threads(1).build()?;
    /// let buf = NodeBuffer::try_new_in_with(&pool, NodeId(0), 4096, MemoryPolicy::Preferred, |i| i)?;
    /// assert_eq!(buf.iter().sum::<usize>(), 4095 * 4096 / 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`SpawnError::UnknownNode`], [`SpawnError::Memory`].
    ///
    /// # Panics
    /// If `init` panics (the panic resumes here).
    pub fn try_new_in_with(
        pool: &ThreadPool,
        node: NodeId,
        len: usize,
        policy: MemoryPolicy,
        init: impl Fn(usize) -> T + Sync + Send,
    ) -> Result<Self, SpawnError> {
        let topo = pool.topology();
        if node.index() >= topo.node_count() {
            return Err(SpawnError::UnknownNode {
                node,
                nodes: topo.node_count(),
            });
        }
        let elem = std::mem::size_of::<T>();
        let memory_error = |reason: MemoryError| SpawnError::Memory {
            node,
            len,
            elem_bytes: elem,
            reason,
        };
        if std::mem::align_of::<T>() > os::page_size() {
            return Err(memory_error(MemoryError::Alignment(
                std::mem::align_of::<T>(),
            )));
        }
        let bytes = len
            .checked_mul(elem)
            .ok_or(memory_error(MemoryError::Overflow))?;
        let region = PageRegion::new(bytes).map_err(|e| {
            memory_error(
                e.raw_os_error()
                    .map_or(MemoryError::Overflow, MemoryError::Map),
            )
        })?;
        let fillers = fillers(pool, node);
        let binding = if pool.is_virtual() {
            MemoryBinding::Virtual
        } else {
            place(&region, pool, node, policy, !fillers.is_empty())
        };
        let touched = fill(pool, &region, len, &fillers, &init);
        // The parts are written (a panic in `init` resumed in `fill`; the region is then
        // unmapped without dropping the elements written: they leak, as a Vec's spare
        // capacity would).
        Ok(Self {
            region,
            len,
            node,
            binding,
            touched,
            _owns: PhantomData,
        })
    }
}

/// The workers that fill a buffer on `node` (step 3): the node's, except an adopted caller
/// (`use_current_thread`, worker 0) when another thread asks (it would run its part only
/// once it waits in the pool).
fn fillers(pool: &ThreadPool, node: NodeId) -> Vec<usize> {
    let r = &*pool.registry;
    let adopted = r.extension::<Caller>().adopted();
    let asking = pool.current_worker_index();
    (0..r.num_workers())
        .filter(|&w| r.worker_node[w] == node.0)
        .filter(|&w| !(adopted && w == 0 && asking != Some(0)))
        .collect()
}

/// Step 2 on a real machine: the policy applied, and the binding it gives.
fn place(
    region: &PageRegion,
    pool: &ThreadPool,
    node: NodeId,
    policy: MemoryPolicy,
    has_fillers: bool,
) -> MemoryBinding {
    let bound = match policy {
        MemoryPolicy::FirstTouch => Err("first touch asked (MemoryPolicy::FirstTouch)".to_owned()),
        _ => bind(region, pool.topology().machine().node(node).os_id, policy),
    };
    match bound {
        Ok(()) if policy == MemoryPolicy::Preferred => MemoryBinding::Preferred,
        Ok(()) => MemoryBinding::Bound,
        Err(why) if has_fillers => {
            if policy != MemoryPolicy::FirstTouch {
                tracing::warn!(target: "zonal_runtime", "node {node}: {why}; first touch");
            }
            MemoryBinding::FirstTouch(why)
        }
        Err(why) => {
            tracing::warn!(target: "zonal_runtime", "node {node} has no worker and {why}; the caller fills it");
            MemoryBinding::CallerTouch
        }
    }
}

/// Step 3: writes `init(i)` into element `i` of the `len` elements at the start of
/// `region`, split over `fillers` (the calling thread where there is none); returns the
/// first-touch nodes seen (step 4), ascending.
fn fill<T: Send + Sync>(
    pool: &ThreadPool,
    region: &PageRegion,
    len: usize,
    fillers: &[usize],
    init: &(impl Fn(usize) -> T + Sync + Send),
) -> Vec<NodeId> {
    if len == 0 {
        return Vec::new();
    }
    let base = Base(elems_at::<T>(region));
    let seen = Mutex::new(BTreeSet::new());
    let write = |part: Range<usize>| {
        let before = touch_node(pool);
        for i in part {
            // SAFETY: `i < len`, and the region holds `len` elements of `T` (aligned: a
            // page-aligned start and align ≤ page, or an aligned dangling pointer for a
            // zero-sized `T`); the parts are disjoint, so only this part writes element `i`.
            unsafe { base.at(i).write(init(i)) };
        }
        let after = touch_node(pool);
        let mut seen = seen.lock().unwrap_or_else(|e| e.into_inner());
        seen.extend(before);
        seen.extend(after);
    };
    if fillers.is_empty() {
        write(0..len);
    } else {
        let parts = parts(len, std::mem::size_of::<T>(), fillers.len());
        let chunk = len.div_ceil(parts);
        let write = &write;
        pool.scope(|s| {
            for (k, &worker) in fillers.iter().take(parts).enumerate() {
                // `k * chunk < parts * chunk < len + parts`: no overflow.
                let part = (k * chunk).min(len)..((k + 1) * chunk).min(len);
                s.spawn_pinned(worker, move |_| write(part));
            }
        });
    }
    let seen = seen.into_inner().unwrap_or_else(|e| e.into_inner());
    seen.into_iter().map(NodeId).collect()
}

/// How many parts `len` elements of `elem` bytes are written in, with `workers` to write
/// them: one per worker, but at most one per page (a part of less than a page costs more
/// to hand out than to write) and at least one.
fn parts(len: usize, elem: usize, workers: usize) -> usize {
    let pages = len.saturating_mul(elem).div_ceil(os::page_size());
    workers.min(pages).clamp(1, len.max(1))
}

/// The node the calling thread runs on, for step 4: in a virtual pool its worker's node;
/// on a real machine the node of its CPU now (`sched_getcpu`), if the pool's topology has
/// that CPU.
fn touch_node(pool: &ThreadPool) -> Option<u32> {
    if pool.is_virtual() {
        return pool
            .current_worker_index()
            .map(|w| pool.registry.worker_node[w]);
    }
    let topo = pool.topology();
    let cpu = topo.machine().cpu_by_os_index(os::current_cpu()?)?;
    Some(topo.node_of(cpu).0)
}

/// The elements' start in `region`: its start, or an aligned dangling pointer when it maps
/// nothing (zero length or zero-sized `T`), never the region's unaligned dangling one.
fn elems_at<T>(region: &PageRegion) -> NonNull<T> {
    match NonNull::new(region.as_ptr()) {
        Some(p) if region.len() > 0 => p.cast(),
        _ => NonNull::dangling(),
    }
}

impl<T> NodeBuffer<T> {
    /// The node the buffer is on.
    #[must_use]
    pub fn node(&self) -> NodeId {
        self.node
    }

    /// Which binding path was taken.
    #[must_use]
    pub fn binding(&self) -> &MemoryBinding {
        &self.binding
    }

    /// The nodes the threads that wrote the elements first ran on, ascending: on a real
    /// machine the node of each filling thread's CPU at the start and at the end of its
    /// part (`sched_getcpu`; a CPU outside the pool's topology, or a platform that cannot
    /// say, adds none); in a virtual pool the filling workers' nodes (a calling thread that
    /// filled it, on no virtual node, adds none). `[node]` when the node's workers filled
    /// it from their CPUs; empty for a buffer without elements. Under
    /// [`MemoryBinding::FirstTouch`] these are where the pages went.
    #[must_use]
    pub fn first_touch_nodes(&self) -> &[NodeId] {
        &self.touched
    }

    /// The memory policy the kernel applies to the buffer (`get_mempolicy(2)` at its first
    /// page).
    ///
    /// # Errors
    /// The kernel's error; `InvalidInput` for a buffer of zero bytes; `Unsupported` off
    /// Linux.
    pub fn kernel_policy(&self) -> io::Result<KernelPolicy> {
        self.region.policy()
    }

    /// Per page of the buffer, the node the kernel holds it on (OS id), or why it cannot
    /// say ([`PageUnknown`]): [`os::page_nodes`] over the buffer, which moves and touches
    /// nothing.
    ///
    /// With automatic NUMA balancing on (`kernel.numa_balancing = 1`, the default on most
    /// distributions on NUMA hardware), a first-touch buffer's idle pages are made
    /// `PROT_NONE` every scanner period, and Linux 6.1–6.4's `move_pages` answers `ENOENT`
    /// for them; such pages are read from `/proc/self/pagemap` instead (every one, with
    /// `CAP_SYS_ADMIN`), or from `/proc/self/numa_maps` when the buffer's mapping is on one
    /// node. What a user sees: a node for every page as root; without the capability,
    /// [`PageUnknown::Hidden`] for the hidden pages of a mapping spread over several nodes.
    /// Bound and preferred buffers are never scanned, so always answer. The kernel may
    /// still *move* a first-touch buffer's pages (to the node of a thread that keeps
    /// touching them): the answer is where they are now.
    ///
    /// # Errors
    /// The kernel's error for the whole query; `Unsupported` off Linux.
    pub fn page_nodes(&self) -> io::Result<Vec<Result<u32, PageUnknown>>> {
        self.region.page_nodes()
    }
}

impl<T> Deref for NodeBuffer<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: the region holds `len` initialised `T`s, aligned (see `fill`); a region
        // that maps nothing (`len` is 0, or `T` is zero-sized) gives an aligned dangling
        // pointer, which is all a slice of no bytes needs.
        unsafe { std::slice::from_raw_parts(self.elems(), self.len) }
    }
}

impl<T> DerefMut for NodeBuffer<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, and `&mut self` makes the access unique.
        unsafe { std::slice::from_raw_parts_mut(self.elems(), self.len) }
    }
}

impl<T> NodeBuffer<T> {
    /// The elements' start (`elems_at`).
    fn elems(&self) -> *mut T {
        elems_at::<T>(&self.region).as_ptr()
    }
}

impl<T> Drop for NodeBuffer<T> {
    fn drop(&mut self) {
        // SAFETY: the `len` elements are initialised and dropped once, before the region
        // is unmapped.
        unsafe {
            std::ptr::drop_in_place(std::ptr::slice_from_raw_parts_mut(self.elems(), self.len))
        };
    }
}

/// The elements' start, shared by the tasks that fill the buffer.
struct Base<T>(NonNull<T>);
// SAFETY: hands the buffer's memory (for T: Send) to the tasks that fill it.
unsafe impl<T: Send> Send for Base<T> {}
// SAFETY: as above; each task writes its own part only (`fill`).
unsafe impl<T: Send> Sync for Base<T> {}

impl<T> Base<T> {
    /// Element `i`'s place (a method: a closure that calls it captures the whole `Base`,
    /// which is `Sync`, not its pointer field, which is not).
    fn at(&self, i: usize) -> *mut T {
        self.0.as_ptr().wrapping_add(i)
    }
}

#[doc(alias = "mbind")]
fn bind(region: &PageRegion, node_os_id: u32, policy: MemoryPolicy) -> Result<(), String> {
    if !os::can_bind_memory() {
        return Err("this platform cannot bind memory".into());
    }
    region
        .bind(node_os_id, policy)
        .map_err(|e| format!("mbind to node {node_os_id} failed: {e}"))
}

#[cfg(test)]
mod test {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::ThreadPoolBuilder;

    /// A pool whose worker threads have all exited when it drops at the end of its test
    /// ([`ThreadPool::shutdown_and_wait`]), where a dropped pool's workers would exit on
    /// their own later. Miri runs threads slowly: a worker left running would still be
    /// running through the next tests and the harness's exit, and whatever it did there
    /// would be reported against no test.
    struct Joined(Option<ThreadPool>);

    impl std::ops::Deref for Joined {
        type Target = ThreadPool;
        fn deref(&self) -> &ThreadPool {
            self.0.as_ref().expect("the pool is taken only by drop")
        }
    }

    impl Drop for Joined {
        fn drop(&mut self) {
            if let Some(pool) = self.0.take() {
                // Unwinding from a failed assertion: the pool is dropped (not waited for),
                // so that the failure is reported rather than a hang.
                if !std::thread::panicking() {
                    pool.shutdown_and_wait();
                }
            }
        }
    }

    /// A virtual pool of 2 nodes × 2 workers (small enough for Miri).
    fn two_by_two() -> Joined {
        let topo = zonal_topology::presets::hierarchical(&[2], 2).unwrap();
        Joined(Some(
            ThreadPoolBuilder::new()
                .topology(topo)
                .no_policy()
                .build()
                .unwrap(),
        ))
    }

    /// The workers (by index) that ran `init` for a buffer, and the buffer.
    fn written_by<T: Send + Sync>(
        pool: &ThreadPool,
        node: NodeId,
        len: usize,
        init: impl Fn(usize) -> T + Send + Sync,
    ) -> (NodeBuffer<T>, BTreeSet<Option<usize>>) {
        let who = Mutex::new(BTreeSet::new());
        let buf = NodeBuffer::new_in(pool, node, len, |i| {
            who.lock().unwrap().insert(crate::current_worker_index());
            init(i)
        });
        (buf, who.into_inner().unwrap())
    }

    #[test]
    fn the_fill_is_split_over_every_worker_of_the_node_and_no_other() {
        let pool = two_by_two();
        for node in [NodeId(0), NodeId(1)] {
            let mine: BTreeSet<Option<usize>> = (0..pool.num_workers())
                .filter(|&w| pool.worker_node(w) == node)
                .map(Some)
                .collect();
            assert_eq!(mine.len(), 2);
            // Two pages of u64 or more: one part per worker.
            let (buf, who) = written_by(&pool, node, 3 * os::page_size() / 8, |i| i as u64);
            assert_eq!(who, mine, "node {node}");
            assert_eq!(buf.first_touch_nodes(), [node]);
            assert_eq!(*buf.binding(), MemoryBinding::Virtual);
            assert!(buf.iter().enumerate().all(|(i, &x)| x == i as u64));
            // Less than a page: one part, on one of the node's workers.
            let (small, who) = written_by(&pool, node, 10, |i| i as u8);
            assert_eq!(who.len(), 1);
            assert!(who.is_subset(&mine), "{who:?}");
            assert_eq!(small.first_touch_nodes(), [node]);
        }
    }

    #[test]
    fn parts_are_one_per_worker_at_most_one_per_page_and_at_least_one() {
        let page = os::page_size();
        assert_eq!(parts(10 * page, 1, 4), 4);
        assert_eq!(parts(10 * page, 1, 64), 10);
        assert_eq!(parts(10, 8, 4), 1);
        assert_eq!(parts(0, 8, 4), 1);
        // Zero-sized elements: no page, one part.
        assert_eq!(parts(1000, 0, 4), 1);
        assert_eq!(parts(usize::MAX, 8, 4), 4);
    }

    /// Drops of [`AlignedUnit`] (only the test below makes any).
    static UNIT_DROPS: AtomicUsize = AtomicUsize::new(0);

    /// Zero-sized and aligned to 64 bytes; counts its drops.
    #[repr(align(64))]
    struct AlignedUnit;
    impl Drop for AlignedUnit {
        fn drop(&mut self) {
            UNIT_DROPS.fetch_add(1, Ordering::Relaxed);
        }
    }

    #[test]
    fn zero_sized_elements_of_any_alignment_live_at_an_aligned_pointer_and_drop_once() {
        assert_eq!(std::mem::size_of::<AlignedUnit>(), 0);
        let pool = two_by_two();
        let inits = AtomicUsize::new(0);
        let buf = NodeBuffer::new_in(&pool, NodeId(1), 1000, |_| {
            inits.fetch_add(1, Ordering::Relaxed);
            AlignedUnit
        });
        assert_eq!(inits.load(Ordering::Relaxed), 1000);
        assert_eq!(buf.len(), 1000);
        assert_eq!(buf.as_ptr() as usize % 64, 0);
        assert_eq!(buf.first_touch_nodes(), [NodeId(1)]);
        // No page to ask the kernel about.
        assert_eq!(buf.page_nodes().unwrap(), []);
        assert_eq!(UNIT_DROPS.load(Ordering::Relaxed), 0);
        drop(buf);
        assert_eq!(UNIT_DROPS.load(Ordering::Relaxed), 1000);
    }

    #[test]
    fn an_empty_buffer_has_no_page_no_fill_and_no_first_touch() {
        let pool = two_by_two();
        let calls = AtomicUsize::new(0);
        let empty: NodeBuffer<u64> = NodeBuffer::new_in(&pool, NodeId(0), 0, |_| {
            calls.fetch_add(1, Ordering::Relaxed);
            1
        });
        assert!(empty.is_empty());
        assert_eq!(calls.load(Ordering::Relaxed), 0);
        assert_eq!(empty.as_ptr() as usize % std::mem::align_of::<u64>(), 0);
        assert_eq!(empty.page_nodes().unwrap(), []);
        assert_eq!(
            empty.kernel_policy().unwrap_err().kind(),
            io::ErrorKind::InvalidInput
        );
        assert_eq!(empty.first_touch_nodes(), []);
        #[repr(align(64))]
        struct Wide;
        let empty_units: NodeBuffer<Wide> =
            NodeBuffer::new_in(&pool, NodeId(0), 0, |_| unreachable!());
        assert_eq!(empty_units.as_ptr() as usize % 64, 0);
        assert_eq!(empty_units.page_nodes().unwrap(), []);
    }

    #[test]
    fn a_panic_in_init_resumes_in_the_caller_and_drops_nothing_twice() {
        let pool = two_by_two();
        let drops = AtomicUsize::new(0);
        struct Counted<'a>(&'a AtomicUsize);
        impl Drop for Counted<'_> {
            fn drop(&mut self) {
                self.0.fetch_add(1, Ordering::Relaxed);
            }
        }
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            NodeBuffer::new_in(&pool, NodeId(0), 2 * os::page_size(), |i| {
                assert!(i != 100, "init fails at 100");
                Counted(&drops)
            })
        }));
        assert!(r.is_err());
        // The elements written leak (as a Vec's spare capacity would): none is dropped,
        // so none twice.
        assert_eq!(drops.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn an_adopted_caller_fills_its_node_only_when_it_asks() {
        std::thread::spawn(|| {
            let topo = zonal_topology::presets::hierarchical(&[2], 2).unwrap();
            let pool = Joined(Some(
                ThreadPoolBuilder::new()
                    .topology(topo)
                    .no_policy()
                    .use_current_thread()
                    .build()
                    .unwrap(),
            ));
            let node = pool.worker_node(0);
            let big = 3 * os::page_size();
            // Asked by the adopted thread: it writes a part too.
            let (_, who) = written_by(&pool, node, big, |i| i as u8);
            assert!(who.contains(&Some(0)), "{who:?}");
            // Asked by another thread: worker 0 is not waiting in the pool, so its node's
            // other worker writes it all (and nothing waits for worker 0).
            std::thread::scope(|s| {
                s.spawn(|| {
                    let (buf, who) = written_by(&pool, node, big, |i| i as u8);
                    assert_eq!(who.len(), 1, "{who:?}");
                    assert!(!who.contains(&Some(0)), "{who:?}");
                    assert_eq!(buf.first_touch_nodes(), [node]);
                });
            });
        })
        .join()
        .unwrap();
    }

    #[cfg_attr(miri, ignore = "this machine's topology: no discovery under Miri")]
    #[test]
    fn buffers_of_any_shape_hold_their_elements_and_drop_them() {
        let pool = Joined(Some(
            ThreadPoolBuilder::new().num_threads(1).build().unwrap(),
        ));
        let empty: NodeBuffer<u64> = NodeBuffer::new_in(&pool, NodeId(0), 0, |_| 1);
        assert!(empty.is_empty());
        assert_eq!(empty.page_nodes().unwrap(), []);
        let unit = NodeBuffer::new_in(&pool, NodeId(0), 10, |_| ());
        assert_eq!(unit.len(), 10);
        let counter = std::sync::Arc::new(());
        let c = &counter;
        let rcs = NodeBuffer::new_in(&pool, NodeId(0), 100, |_| std::sync::Arc::clone(c));
        assert_eq!(std::sync::Arc::strong_count(&counter), 101);
        drop(rcs);
        assert_eq!(std::sync::Arc::strong_count(&counter), 1);
        #[repr(align(64))]
        struct Wide(u8);
        let wide = NodeBuffer::new_in(&pool, NodeId(0), 3, |i| Wide(i as u8));
        assert_eq!(wide.as_ptr() as usize % 64, 0);
        assert_eq!(wide[2].0, 2);
    }

    #[test]
    fn sizes_that_overflow_are_typed_errors() {
        let pool = two_by_two();
        let e = NodeBuffer::<u64>::try_new_in(&pool, NodeId(0), usize::MAX / 2, |_| 0).unwrap_err();
        assert!(matches!(e, SpawnError::Memory { .. }), "{e}");
        let e = NodeBuffer::<u64>::try_new_in(&pool, NodeId(7), 1, |_| 0).unwrap_err();
        assert!(matches!(e, SpawnError::UnknownNode { .. }), "{e}");
    }

    #[cfg(all(target_os = "linux", not(miri)))]
    #[test]
    fn the_kernel_confirms_the_policy_and_the_pages() {
        use crate::os::PolicyMode;
        let pool = ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let os_id = pool.topology().machine().node(NodeId(0)).os_id;
        for (policy, mode, nodes, binding) in [
            (
                MemoryPolicy::Bind,
                PolicyMode::Bind,
                vec![os_id],
                MemoryBinding::Bound,
            ),
            (
                MemoryPolicy::Preferred,
                PolicyMode::Preferred,
                vec![os_id],
                MemoryBinding::Preferred,
            ),
            (
                MemoryPolicy::FirstTouch,
                PolicyMode::Default,
                vec![],
                MemoryBinding::FirstTouch("first touch asked (MemoryPolicy::FirstTouch)".into()),
            ),
        ] {
            let buf = NodeBuffer::try_new_in_with(&pool, NodeId(0), 10_000, policy, |i| i as u64)
                .unwrap();
            assert_eq!(*buf.binding(), binding);
            let k = buf.kernel_policy().unwrap();
            assert_eq!((k.mode, k.nodes), (mode, nodes));
            let pages = buf.page_nodes().unwrap();
            assert_eq!(pages.len(), (10_000 * 8usize).div_ceil(os::page_size()));
            assert!(pages.iter().all(|p| *p == Ok(os_id)), "{pages:?}");
            // Filled by the node's worker, on its CPU (this machine's nodes: node 0).
            assert_eq!(buf.first_touch_nodes(), [NodeId(0)], "{policy:?}");
        }
    }
}
