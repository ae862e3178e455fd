//! Parallel loops over index ranges and slices: cut by node first (one contiguous part per
//! node with workers, each spawned on its node, so that the conservative policies keep it
//! there), then split by recursive `join` down to a grain.

use std::ops::Range;
use std::sync::Mutex;

use zonal_topology::NodeId;

use crate::pool::ThreadPool;
use crate::registry::Registry;

impl ThreadPool {
    /// Calls `f` on sub-ranges of `range` of at most `grain` items, in parallel. The range is
    /// first cut into one contiguous part per node (in proportion to its workers), each
    /// spawned on its node (a placed computation of its own); each part is then split by
    /// recursive `join`. Called from a task of a placed computation of this pool (rooted
    /// with `spawn_on`, an origin option or `spawn_pinned`), there is no cut: the range is
    /// split by `join` inside that computation's zone.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// let pool = zonal_runtime::ThreadPoolBuilder::new().preset("s1").no_policy().build()?;
    /// let n = AtomicUsize::new(0);
    /// pool.par_for(0..1000, 10, |r| { n.fetch_add(r.len(), Ordering::Relaxed); });
    /// assert_eq!(n.into_inner(), 1000);
    /// # Ok::<(), zonal_runtime::BuildError>(())
    /// ```
    pub fn par_for<F>(&self, range: Range<usize>, grain: usize, f: F)
    where
        F: Fn(Range<usize>) + Sync + Send,
    {
        self.par_reduce(range, grain, || (), &f, |(), ()| ());
    }

    /// Calls `f(offset, chunk)` on chunks of `slice` of at most `grain` items, split by node
    /// as [`par_for`](Self::par_for).
    pub fn par_chunks<T, F>(&self, slice: &[T], grain: usize, f: F)
    where
        T: Sync,
        F: Fn(usize, &[T]) + Sync + Send,
    {
        self.par_for(0..slice.len(), grain, |r| f(r.start, &slice[r]));
    }

    /// Calls `f(offset, chunk)` on disjoint mutable chunks of `slice`, split by node.
    pub fn par_chunks_mut<T, F>(&self, slice: &mut [T], grain: usize, f: F)
    where
        T: Send + Sync,
        F: Fn(usize, &mut [T]) + Sync + Send,
    {
        let base = SendPtr(slice.as_mut_ptr());
        let len = slice.len();
        self.par_for(0..len, grain, move |r| {
            let base = &base;
            // SAFETY: `par_for` hands out disjoint sub-ranges of 0..len, each exactly once,
            // and `slice` is mutably borrowed for the whole call.
            let chunk = unsafe { std::slice::from_raw_parts_mut(base.0.add(r.start), r.len()) };
            f(r.start, chunk);
        });
    }

    /// How [`par_for`](Self::par_for) and friends cut `range` by node: one contiguous part
    /// per node with workers, in proportion to its workers, nodes ascending. Use it to place
    /// the data each part works on (e.g. a [`NodeBuffer`](crate::NodeBuffer) per part).
    ///
    /// ```
    /// let pool = zonal_runtime::ThreadPoolBuilder::new().preset("s1").no_policy().build()?;
    /// let parts = pool.node_partition(0..1600);
    /// assert_eq!(parts.len(), 16);
    /// assert_eq!(parts[1], (zonal_topology::NodeId(1), 100..200));
    /// # Ok::<(), zonal_runtime::BuildError>(())
    /// ```
    #[must_use]
    pub fn node_partition(&self, range: Range<usize>) -> Vec<(NodeId, Range<usize>)> {
        self.registry.node_partition(range)
    }

    /// A parallel map-reduce over `range`, split by node then by `join` down to `grain`.
    ///
    /// ```
    /// let pool = zonal_runtime::ThreadPoolBuilder::new().preset("s1").no_policy().build()?;
    /// let s = pool.par_reduce(0..101, 8, || 0u64, |r| r.map(|i| i as u64).sum(), |a, b| a + b);
    /// assert_eq!(s, 5050);
    /// # Ok::<(), zonal_runtime::BuildError>(())
    /// ```
    pub fn par_reduce<R, ID, M, RED>(
        &self,
        range: Range<usize>,
        grain: usize,
        identity: ID,
        map: M,
        reduce: RED,
    ) -> R
    where
        R: Send,
        ID: Fn() -> R + Sync + Send,
        M: Fn(Range<usize>) -> R + Sync + Send,
        RED: Fn(R, R) -> R + Sync + Send,
    {
        let grain = grain.max(1);
        let parts = self.node_partition(range.clone());
        // Inside a placed computation of this pool, no cut: its parts would be rooted on
        // every node, out of its origin's zone (`task.rs`, "Whole computations").
        let placed = self.with_worker(|w| w.is_some_and(|w| w.current.get().placed()));
        if parts.len() <= 1 || range.len() <= grain || placed {
            return self.install(|| split(range, grain, &map, &reduce));
        }
        let slots: Vec<Mutex<Option<R>>> = parts.iter().map(|_| Mutex::new(None)).collect();
        self.scope(|s| {
            for ((node, part), slot) in parts.into_iter().zip(&slots) {
                let (map, reduce) = (&map, &reduce);
                s.spawn_on(node, move |_| {
                    let v = split(part, grain, map, reduce);
                    *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(v);
                });
            }
        });
        slots
            .into_iter()
            .filter_map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()))
            .fold(identity(), &reduce)
    }
}

impl Registry {
    /// One contiguous part of `range` per node with workers, in proportion to its workers,
    /// nodes ascending (see [`ThreadPool::node_partition`]).
    pub(crate) fn node_partition(&self, range: Range<usize>) -> Vec<(NodeId, Range<usize>)> {
        let mut nodes: Vec<u32> = self.worker_node.to_vec();
        nodes.sort_unstable();
        nodes.dedup();
        let weights: Vec<usize> = nodes
            .iter()
            .map(|n| self.worker_node.iter().filter(|&x| x == n).count())
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
}

/// How the current pool cuts `range` by node ([`ThreadPool::node_partition`]): on a worker,
/// its pool's partition; on any other thread, the global pool's (built if needed).
///
/// ```
/// let pool = zonal_runtime::ThreadPoolBuilder::new().preset("s1").no_policy().build()?;
/// let parts = pool.install(|| zonal_runtime::current_node_partition(0..1600));
/// assert_eq!(parts, pool.node_partition(0..1600));
/// # Ok::<(), zonal_runtime::BuildError>(())
/// ```
#[must_use]
pub fn current_node_partition(range: Range<usize>) -> Vec<(NodeId, Range<usize>)> {
    crate::global::current_or_global(
        range,
        |w, range| w.registry.node_partition(range),
        ThreadPool::node_partition,
    )
}

struct SendPtr<T>(*mut T);
// SAFETY: used only to hand disjoint sub-slices of a `&mut [T]` (T: Send) to other threads.
unsafe impl<T: Send> Send for SendPtr<T> {}
// SAFETY: as above: each thread derives a disjoint chunk from the shared base pointer.
unsafe impl<T: Send> Sync for SendPtr<T> {}

fn split<R, M, RED>(range: Range<usize>, grain: usize, map: &M, reduce: &RED) -> R
where
    R: Send,
    M: Fn(Range<usize>) -> R + Sync,
    RED: Fn(R, R) -> R + Sync,
{
    if range.len() <= grain {
        return map(range);
    }
    let mid = range.start + range.len() / 2;
    let (a, b) = crate::join::join(
        || split(range.start..mid, grain, map, reduce),
        || split(mid..range.end, grain, map, reduce),
    );
    reduce(a, b)
}
