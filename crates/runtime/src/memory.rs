//! Node-local memory: [`NodeBuffer`], an owned buffer whose pages live on a chosen node.
//!
//! Two paths, and the buffer says which was taken ([`NodeBuffer::placement`]):
//! 1. **hwloc binding** (`hwloc_set_area_membind`, policy `Bind`) of the not-yet-touched
//!    allocation to the node, when this machine has several NUMA nodes and hwloc supports
//!    area binding; the buffer is then initialised by a worker of the node anyway.
//! 2. **First touch**: otherwise the buffer is initialised by a task spawned on the node, so
//!    Linux's default first-touch policy places each page there. On a single-node machine
//!    binding is meaningless and this is the path taken.
//!
//! In a virtual pool (a topology that is not this machine's) nodes are not real memory:
//! the buffer is still initialised on the node's workers ([`MemoryPlacement::Virtual`]).

use std::mem::MaybeUninit;
use std::ops::{Deref, DerefMut};

use hwlocality::memory::binding::{MemoryBindingFlags, MemoryBindingPolicy};
use hwlocality::memory::nodeset::NodeSet;
use zonal_topology::NodeId;

use crate::{SpawnError, ThreadPool};

/// How a [`NodeBuffer`]'s memory was placed.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum MemoryPlacement {
    /// Bound to the node with hwloc, then initialised there.
    Bound,
    /// Initialised by a worker of the node (first touch); the reason binding was not used.
    FirstTouch(String),
    /// Initialised by a worker of a virtual node (not real memory placement).
    Virtual,
    /// The node has no worker: initialised by the calling thread.
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
#[derive(Debug)]
pub struct NodeBuffer<T> {
    data: Vec<T>,
    node: NodeId,
    placement: MemoryPlacement,
}

impl<T: Send + Sync> NodeBuffer<T> {
    /// Allocates `len` elements on `node`, initialising element `i` to `init(i)` on a worker
    /// of that node.
    ///
    /// # Panics
    /// If `node` is not a node of the pool's topology (see [`try_new_in`](Self::try_new_in)),
    /// or if `init` panics.
    pub fn new_in(
        pool: &ThreadPool,
        node: NodeId,
        len: usize,
        init: impl Fn(usize) -> T + Sync + Send,
    ) -> Self {
        Self::try_new_in(pool, node, len, init).unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`new_in`](Self::new_in), or an error if `node` is not a node of the pool's topology.
    ///
    /// # Errors
    /// [`SpawnError::UnknownNode`].
    ///
    /// # Panics
    /// If `init` panics (the panic resumes here).
    pub fn try_new_in(
        pool: &ThreadPool,
        node: NodeId,
        len: usize,
        init: impl Fn(usize) -> T + Sync + Send,
    ) -> Result<Self, SpawnError> {
        let topo = pool.topology();
        if node.index() >= topo.node_count() {
            return Err(SpawnError::UnknownNode {
                node,
                nodes: topo.node_count(),
            });
        }
        let mut data: Vec<T> = Vec::with_capacity(len);
        let has_worker = pool.worker_nodes().contains(&node);
        let placement = if !has_worker {
            MemoryPlacement::Unplaced
        } else if pool.is_virtual() {
            MemoryPlacement::Virtual
        } else {
            match bind(
                &data.spare_capacity_mut()[..len],
                topo.machine().node(node).os_id,
                topo.node_count(),
            ) {
                Ok(()) => MemoryPlacement::Bound,
                Err(why) => MemoryPlacement::FirstTouch(why),
            }
        };
        let spare = SendSlice(data.spare_capacity_mut()[..len].as_mut_ptr());
        let fill = |_: &crate::Scope<'_>| {
            let spare = &spare;
            for i in 0..len {
                // SAFETY: `i < len <= capacity`; only this task writes the spare capacity.
                unsafe { (*spare.0.add(i)).write(init(i)) };
            }
        };
        if has_worker {
            pool.scope(|s| s.spawn_on(node, fill));
        } else {
            pool.scope(|s| fill(s));
        }
        // SAFETY: the first `len` elements were initialised above (the scope waited for the
        // task; a panic in `init` resumed before we get here, leaking the written ones).
        unsafe { data.set_len(len) };
        Ok(Self {
            data,
            node,
            placement,
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
}

impl<T> Deref for NodeBuffer<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.data
    }
}

impl<T> DerefMut for NodeBuffer<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.data
    }
}

struct SendSlice<T>(*mut MaybeUninit<T>);
// SAFETY: hands the spare capacity of a Vec<T> (T: Send) to the one task that fills it.
unsafe impl<T: Send> Send for SendSlice<T> {}
// SAFETY: as above; only one task dereferences it.
unsafe impl<T: Send> Sync for SendSlice<T> {}

#[doc(alias = "hwloc_set_area_membind")]
fn bind<T>(area: &[MaybeUninit<T>], node_os_id: u32, nodes: usize) -> Result<(), String> {
    if nodes < 2 {
        return Err("single-node machine: hwloc binding not needed, first touch".into());
    }
    if std::mem::size_of_val(area) == 0 {
        return Err("empty buffer".into());
    }
    let topo = hwlocality::Topology::new().map_err(|e| format!("hwloc unavailable: {e}"))?;
    let supported = topo
        .feature_support()
        .memory_binding()
        .is_some_and(|m| m.set_area());
    if !supported {
        return Err("hwloc cannot bind memory areas on this system".into());
    }
    let mut set = NodeSet::new();
    set.set(node_os_id as usize);
    topo.bind_memory_area(
        area,
        &set,
        MemoryBindingPolicy::Bind,
        MemoryBindingFlags::empty(),
    )
    .map_err(|e| format!("hwloc_set_area_membind failed: {e}"))
}
