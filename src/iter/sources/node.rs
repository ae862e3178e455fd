//! Data placed per node: a [`NodeVec`] (or a slice of
//! [`NodeBuffer`](zonal_runtime::NodeBuffer)s) iterated so that every buffer's items are
//! processed by tasks whose origin is the buffer's node.

use zonal_runtime::NodeBuffer;

use crate::iter::plumbing::{bridge_parts, UnindexedConsumer};
use crate::iter::{IntoParallelIterator, ParallelIterator};

use super::slice::SliceIter;

/// Buffers placed on nodes, iterated in parallel with every buffer's part spawned on its
/// node (`par_iter()`), in buffer order.
///
/// ```
/// use zonal::prelude::*;
/// use zonal::iter::NodeVec;
/// use zonal::runtime::NodeBuffer;
/// use zonal::topology::NodeId;
/// let pool = zonal::ThreadPoolBuilder::new().preset("s1").no_policy().build()?;
/// let data = NodeVec::new(
///     (0..4).map(|n| NodeBuffer::new_in(&pool, NodeId(n), 100, |i| i as u64)).collect(),
/// );
/// let sum: u64 = pool.install(|| data.par_iter().sum());
/// assert_eq!(sum, 4 * 4950);
/// # Ok::<(), zonal::BuildError>(())
/// ```
#[derive(Debug)]
pub struct NodeVec<T> {
    buffers: Vec<NodeBuffer<T>>,
}

impl<T> NodeVec<T> {
    /// Wraps the buffers (their order is the iteration order).
    #[must_use]
    pub fn new(buffers: Vec<NodeBuffer<T>>) -> Self {
        NodeVec { buffers }
    }

    /// The buffers.
    #[must_use]
    pub fn buffers(&self) -> &[NodeBuffer<T>] {
        &self.buffers
    }

    /// The buffers, mutably.
    pub fn buffers_mut(&mut self) -> &mut [NodeBuffer<T>] {
        &mut self.buffers
    }

    /// The total number of items.
    #[must_use]
    pub fn len(&self) -> usize {
        self.buffers.iter().map(|b| b.len()).sum()
    }

    /// Whether there are no items.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The buffers back.
    #[must_use]
    pub fn into_inner(self) -> Vec<NodeBuffer<T>> {
        self.buffers
    }
}

/// A parallel iterator over the items of node-placed buffers, each buffer's part spawned
/// with its node as origin ([`NodeVec`], [`par_iter_nodes`]).
#[derive(Debug)]
pub struct NodeIter<'a, T> {
    buffers: &'a [NodeBuffer<T>],
}

/// Iterates `buffers` in parallel, every buffer's items in tasks whose origin is its node.
#[must_use]
pub fn par_iter_nodes<T: Sync>(buffers: &[NodeBuffer<T>]) -> NodeIter<'_, T> {
    NodeIter { buffers }
}

impl<'a, T: Sync + 'a> IntoParallelIterator for &'a NodeVec<T> {
    type Iter = NodeIter<'a, T>;
    type Item = &'a T;
    fn into_par_iter(self) -> NodeIter<'a, T> {
        NodeIter {
            buffers: &self.buffers,
        }
    }
}

impl<'a, T: Sync + 'a> ParallelIterator for NodeIter<'a, T> {
    type Item = &'a T;

    fn drive_unindexed<C: UnindexedConsumer<&'a T>>(self, consumer: C) -> C::Result {
        let parts: Vec<_> = self
            .buffers
            .iter()
            .filter(|b| !b.is_empty())
            .map(|b| (b.node(), b.len(), SliceIter::from(&b[..])))
            .collect();
        bridge_parts(parts, consumer)
    }

    fn opt_len(&self) -> Option<usize> {
        Some(self.buffers.iter().map(|b| b.len()).sum())
    }
}
