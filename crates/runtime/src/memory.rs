//! Node-local memory: [`NodeBuffer`], an owned buffer whose pages live on a chosen node.
//!
//! The protocol, on a real machine (not a virtual pool):
//! 1. **Memory of its own.** The buffer is a fresh anonymous mapping of whole pages
//!    (`os::PageRegion`), shared with no other allocation, so a policy set on it applies to
//!    it alone, and no page of it exists yet.
//! 2. **Bound before first touch.** `mbind(2)` sets the policy the caller chose
//!    ([`MemoryPolicy::Bind`], the default, or [`MemoryPolicy::Preferred`]) for the node
//!    on the whole mapping, before anything writes to it: every page is then allocated under
//!    that policy wherever the writing thread runs.
//! 3. **Filled on the node.** The elements are initialised by a task spawned on the node,
//!    so that a failed bind still leaves first touch on the right node; a node without
//!    workers (memory only, or no allowed or online CPU) is filled by the calling thread,
//!    and its pages still go to the node through the policy.
//!
//! [`NodeBuffer::placement`] names what was applied; [`NodeBuffer::kernel_policy`] and
//! [`NodeBuffer::page_nodes`] ask the kernel what it did (`get_mempolicy`, `move_pages`).
//! In a virtual pool (a topology that is not this machine's) nodes are not real memory:
//! the buffer is still initialised on the node's workers ([`MemoryPlacement::Virtual`]).

use std::io;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};

use zonal_topology::NodeId;

use crate::os::{self, KernelPolicy, MemoryPolicy, PageRegion};
use crate::{MemoryError, SpawnError, ThreadPool};

/// How a [`NodeBuffer`]'s memory was placed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
#[non_exhaustive]
pub enum MemoryPlacement {
    /// `MPOL_BIND` to the node before first touch: the kernel allocated every page there.
    Bound,
    /// `MPOL_PREFERRED` for the node before first touch: pages there while it had room.
    Preferred,
    /// Not bound (the reason); initialised by a worker of the node, so Linux's default
    /// first-touch policy placed the pages.
    FirstTouch(String),
    /// Initialised by a worker of a virtual node (not real memory placement).
    Virtual,
    /// The node has no worker and the memory could not be bound: initialised by the calling
    /// thread, wherever it ran.
    Unplaced,
}

/// An owned buffer of `T` placed on one NUMA node.
///
/// ```
/// use zonal_runtime::{NodeBuffer, MemoryPlacement, ThreadPoolBuilder};
/// use zonal_topology::NodeId;
/// let pool = ThreadPoolBuilder::new().preset("s1").no_policy().build()?;
/// let buf = NodeBuffer::new_in(&pool, NodeId(3), 1000, |i| i as f64);
/// assert_eq!(buf[999], 999.0);
/// assert_eq!(buf.node(), NodeId(3));
/// assert_eq!(*buf.placement(), MemoryPlacement::Virtual);
/// # Ok::<(), zonal_runtime::BuildError>(())
/// ```
pub struct NodeBuffer<T> {
    region: PageRegion,
    len: usize,
    node: NodeId,
    placement: MemoryPlacement,
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
            .field("placement", &self.placement)
            .field("data", &&**self)
            .finish()
    }
}

impl<T: Send + Sync> NodeBuffer<T> {
    /// Allocates `len` elements bound to `node` ([`MemoryPolicy::Bind`]), initialising
    /// element `i` to `init(i)` on a worker of that node.
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
    /// use zonal_runtime::{os::MemoryPolicy, NodeBuffer, ThreadPoolBuilder};
    /// use zonal_topology::NodeId;
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
        let has_worker = pool.worker_nodes().contains(&node);
        let placement = if pool.is_virtual() {
            MemoryPlacement::Virtual
        } else {
            match bind(&region, topo.machine().node(node).os_id, policy) {
                Ok(()) => match policy {
                    MemoryPolicy::Bind => MemoryPlacement::Bound,
                    MemoryPolicy::Preferred => MemoryPlacement::Preferred,
                },
                Err(why) if has_worker => {
                    tracing::warn!(target: "zonal_runtime", "node {node}: {why}; first touch");
                    MemoryPlacement::FirstTouch(why)
                }
                Err(why) => {
                    tracing::warn!(target: "zonal_runtime", "node {node} has no worker and {why}; unplaced");
                    MemoryPlacement::Unplaced
                }
            }
        };
        let base = Base(region.as_ptr().cast::<T>());
        let fill = |_: &crate::Scope<'_>| {
            let base = &base;
            for i in 0..len {
                // SAFETY: `i < len` and the region holds `len` elements of `T` (aligned:
                // page-aligned start, align ≤ page); only this task writes them.
                unsafe { base.0.add(i).write(init(i)) };
            }
        };
        if has_worker {
            pool.scope(|s| s.spawn_on(node, fill));
        } else {
            pool.scope(|s| fill(s));
        }
        // The scope waited for the task; a panic in `init` resumed before here, and the
        // region is unmapped without dropping the elements written (they leak, as a Vec's
        // spare capacity would).
        Ok(Self {
            region,
            len,
            node,
            placement,
            _owns: PhantomData,
        })
    }
}

impl<T> NodeBuffer<T> {
    /// The node the buffer was placed on.
    #[must_use]
    pub fn node(&self) -> NodeId {
        self.node
    }

    /// Which placement path was taken.
    #[must_use]
    pub fn placement(&self) -> &MemoryPlacement {
        &self.placement
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

    /// Per page of the buffer, the node the kernel holds it on, or its per-page error
    /// (`move_pages(2)` as a query).
    ///
    /// # Errors
    /// The kernel's error for the whole query; `Unsupported` off Linux.
    pub fn page_nodes(&self) -> io::Result<Vec<Result<u32, i32>>> {
        self.region.page_nodes()
    }
}

impl<T> Deref for NodeBuffer<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: the region holds `len` initialised `T`s, aligned (see `try_new_in_with`);
        // an empty buffer's pointer is dangling but `len` is then 0 or `T` is zero-sized
        // (a page-aligned dangling pointer: `NonNull::dangling` for u8 is 1, and ZSTs need
        // only alignment, given below).
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
    /// The elements' start: the region's, or an aligned dangling pointer when it maps
    /// nothing (zero length or zero-sized `T`).
    fn elems(&self) -> *mut T {
        if self.region.len() == 0 {
            std::ptr::NonNull::<T>::dangling().as_ptr()
        } else {
            self.region.as_ptr().cast()
        }
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

struct Base<T>(*mut T);
// SAFETY: hands the buffer's memory (for T: Send) to the one task that fills it.
unsafe impl<T: Send> Send for Base<T> {}
// SAFETY: as above; only one task writes through it.
unsafe impl<T: Send> Sync for Base<T> {}

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
    use super::*;
    use crate::ThreadPoolBuilder;

    #[test]
    fn buffers_of_any_shape_hold_their_elements_and_drop_them() {
        let pool = ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let empty: NodeBuffer<u64> = NodeBuffer::new_in(&pool, NodeId(0), 0, |_| 1);
        assert!(empty.is_empty());
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
        let pool = ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let e = NodeBuffer::<u64>::try_new_in(&pool, NodeId(0), usize::MAX / 2, |_| 0).unwrap_err();
        assert!(matches!(e, SpawnError::Memory { .. }), "{e}");
        let e = NodeBuffer::<u64>::try_new_in(&pool, NodeId(7), 1, |_| 0).unwrap_err();
        assert!(matches!(e, SpawnError::UnknownNode { .. }), "{e}");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_kernel_confirms_the_policy_and_the_pages() {
        use crate::os::PolicyMode;
        let pool = ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let os_id = pool.topology().machine().node(NodeId(0)).os_id;
        for (policy, mode, placement) in [
            (MemoryPolicy::Bind, PolicyMode::Bind, MemoryPlacement::Bound),
            (
                MemoryPolicy::Preferred,
                PolicyMode::Preferred,
                MemoryPlacement::Preferred,
            ),
        ] {
            let buf = NodeBuffer::try_new_in_with(&pool, NodeId(0), 10_000, policy, |i| i as u64)
                .unwrap();
            assert_eq!(*buf.placement(), placement);
            let k = buf.kernel_policy().unwrap();
            assert_eq!((k.mode, k.nodes), (mode, vec![os_id]));
            let pages = buf.page_nodes().unwrap();
            assert_eq!(pages.len(), (10_000 * 8usize).div_ceil(os::page_size()));
            assert!(pages.iter().all(|p| *p == Ok(os_id)), "{pages:?}");
        }
    }
}
