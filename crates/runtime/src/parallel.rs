//! Parallel loops over index ranges and slices: cut by node first (one contiguous part per
//! node with workers, each spawned on its node, so that the conservative policies keep it
//! there), then split by recursive `join` down to a grain.

use std::ops::Range;

use zonal_topology::NodeId;

use crate::join::join_in_worker;
use crate::registry::Registry;
use crate::worker::WorkerThread;

/// One contiguous part of `range` per node with workers, in proportion to its workers,
/// nodes ascending (see [`ThreadPool::node_partition`]).
pub(crate) fn node_partition(
    registry: &Registry,
    range: Range<usize>,
) -> Vec<(NodeId, Range<usize>)> {
    if let [node] = *registry.worker_nodes {
        // One node with workers (most machines): the whole range, without counting. Every
        // parallel iterator asks, once per loop.
        return vec![(NodeId(node), range)];
    }
    let nodes = &registry.worker_nodes;
    let weights: Vec<usize> = nodes
        .iter()
        .map(|n| registry.worker_node.iter().filter(|&x| x == n).count())
        .collect();
    let total: usize = weights.iter().sum();
    let len = range.len();
    let mut parts = Vec::with_capacity(nodes.len());
    let mut start = range.start;
    let mut acc = 0;
    for (k, w) in weights.iter().enumerate() {
        acc += w;
        let end = if k + 1 == weights.len() {
            range.end
        } else {
            // u128: `len * acc` may not fit a usize for ranges near usize::MAX.
            range.start + (len as u128 * acc as u128 / total as u128) as usize
        };
        parts.push((NodeId(nodes[k]), start..end));
        start = end;
    }
    parts
}

pub(crate) struct SendPtr<T>(pub(crate) *mut T);
// SAFETY: used only to hand disjoint sub-slices of a `&mut [T]` (T: Send) to other threads.
unsafe impl<T: Send> Send for SendPtr<T> {}
// SAFETY: as above: each thread derives a disjoint chunk from the shared base pointer.
unsafe impl<T: Send> Sync for SendPtr<T> {}

pub(crate) fn split<R, M, RED>(range: Range<usize>, grain: usize, map: &M, reduce: &RED) -> R
where
    R: Send,
    M: Fn(Range<usize>) -> R + Sync,
    RED: Fn(R, R) -> R + Sync,
{
    if range.len() <= grain {
        return map(range);
    }
    let mid = range.start + range.len() / 2;
    // Always on a worker: the loops `install` the first split or spawn it in a scope.
    let (left, right) = (
        || split(range.start..mid, grain, map, reduce),
        || split(mid..range.end, grain, map, reduce),
    );
    let (a, b) = WorkerThread::with_current(|w| match w {
        Some(w) => join_in_worker(w, left, right),
        None => (left(), right()),
    });
    reduce(a, b)
}
