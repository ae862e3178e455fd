//! `par_bridge`: a sequential iterator shared by the pool's workers (items in no particular
//! order, as rayon's).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use super::plumbing::{bridge_unindexed, Folder, UnindexedConsumer, UnindexedProducer};
use super::ParallelIterator;

/// `par_bridge()` for every `Iterator + Send` with `Send` items (rayon's
/// `ParallelBridge`): workers take the items one at a time, in no particular order.
///
/// ```
/// use zonal::prelude::*;
/// let mut v: Vec<u32> = (0..100u32).filter(|x| x % 3 == 0).par_bridge().map(|x| x * 2).collect();
/// v.sort_unstable();
/// assert_eq!(v[..3], [0, 6, 12]);
/// ```
pub trait ParallelBridge: Sized {
    /// The iterator, shared by the workers.
    fn par_bridge(self) -> IterBridge<Self>;
}

impl<I: Iterator + Send> ParallelBridge for I
where
    I::Item: Send,
{
    fn par_bridge(self) -> IterBridge<Self> {
        IterBridge { iter: self }
    }
}

/// A sequential iterator run in parallel ([`ParallelBridge::par_bridge`]).
#[derive(Clone, Debug)]
#[must_use = "iterator adaptors are lazy"]
pub struct IterBridge<I> {
    iter: I,
}

impl<I: Iterator + Send> ParallelIterator for IterBridge<I>
where
    I::Item: Send,
{
    type Item = I::Item;

    fn drive_unindexed<C: UnindexedConsumer<Self::Item>>(self, consumer: C) -> C::Result {
        let shared = Mutex::new(self.iter.fuse());
        let splits = AtomicUsize::new(zonal_runtime::current_num_threads());
        bridge_unindexed(
            Shared {
                iter: &shared,
                splits: &splits,
            },
            consumer,
        )
    }
}

struct Shared<'a, I> {
    iter: &'a Mutex<std::iter::Fuse<I>>,
    splits: &'a AtomicUsize,
}

impl<I: Iterator + Send> UnindexedProducer for Shared<'_, I> {
    type Item = I::Item;

    fn split(self) -> (Self, Option<Self>) {
        let more = self
            .splits
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
            .is_ok();
        let other = more.then_some(Shared {
            iter: self.iter,
            splits: self.splits,
        });
        (self, other)
    }

    fn fold_with<F: Folder<I::Item>>(self, mut folder: F) -> F {
        while !folder.full() {
            let next = self.iter.lock().unwrap_or_else(|e| e.into_inner()).next();
            match next {
                Some(item) => folder = folder.consume(item),
                None => break,
            }
        }
        folder
    }
}
