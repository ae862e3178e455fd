//! `by_exponential_blocks` and `by_uniform_blocks`: an indexed iterator run as a sequence
//! of blocks, one after the other, each block in parallel (and cut by node, as any indexed
//! iterator); a short-circuiting consumer (`find_first`, ...) stops before the next block.

use super::plumbing::{
    bridge_producer_consumer, Folder, Producer, ProducerCallback, Reducer, UnindexedConsumer,
};
use super::{IndexedParallelIterator, ParallelIterator};

/// Blocks of growing sizes: the first as large as the pool, then each twice the one before
/// ([`IndexedParallelIterator::by_exponential_blocks`]).
///
/// ```
/// use zonal::prelude::*;
/// let first = (0..10_000u32).into_par_iter().by_exponential_blocks().find_first(|x| x % 997 == 5);
/// assert_eq!(first, Some(5));
/// ```
#[derive(Clone, Debug)]
#[must_use = "iterator adaptors are lazy"]
pub struct ExponentialBlocks<I> {
    base: I,
}

/// Blocks of `block_size` items ([`IndexedParallelIterator::by_uniform_blocks`]).
///
/// ```
/// use zonal::prelude::*;
/// let v: Vec<u32> = (0..10u32).into_par_iter().by_uniform_blocks(3).collect();
/// assert_eq!(v, (0..10).collect::<Vec<_>>());
/// ```
#[derive(Clone, Debug)]
#[must_use = "iterator adaptors are lazy"]
pub struct UniformBlocks<I> {
    base: I,
    block_size: usize,
}

impl<I> ExponentialBlocks<I> {
    pub(super) fn new(base: I) -> Self {
        ExponentialBlocks { base }
    }
}

impl<I> UniformBlocks<I> {
    /// # Panics
    /// If `block_size` is 0.
    pub(super) fn new(base: I, block_size: usize) -> Self {
        assert!(block_size != 0, "block_size must not be zero");
        UniformBlocks { base, block_size }
    }
}

impl<I: IndexedParallelIterator> ParallelIterator for ExponentialBlocks<I> {
    type Item = I::Item;

    fn drive_unindexed<C: UnindexedConsumer<I::Item>>(self, consumer: C) -> C::Result {
        let first = zonal_runtime::current_num_threads().max(1);
        let sizes = std::iter::successors(Some(first), |&n| Some(n.saturating_mul(2)));
        let len = self.base.len();
        self.base.with_producer(BlocksCallback {
            consumer,
            sizes,
            len,
        })
    }
}

impl<I: IndexedParallelIterator> ParallelIterator for UniformBlocks<I> {
    type Item = I::Item;

    fn drive_unindexed<C: UnindexedConsumer<I::Item>>(self, consumer: C) -> C::Result {
        let sizes = std::iter::repeat(self.block_size);
        let len = self.base.len();
        self.base.with_producer(BlocksCallback {
            consumer,
            sizes,
            len,
        })
    }
}

/// Runs a producer of `len` items in blocks of the sizes given.
struct BlocksCallback<C, S> {
    consumer: C,
    sizes: S,
    len: usize,
}

impl<T, C, S> ProducerCallback<T> for BlocksCallback<C, S>
where
    C: UnindexedConsumer<T>,
    S: Iterator<Item = usize>,
{
    type Output = C::Result;

    fn callback<P: Producer<Item = T>>(self, producer: P) -> C::Result {
        let BlocksCallback {
            consumer,
            mut sizes,
            len,
        } = self;
        let mut acc = consumer.split_off_left().into_folder().complete();
        let mut rest = Some(producer);
        let mut rest_len = len;
        while rest_len > 0 && !consumer.full() {
            let Some(p) = rest.take() else { break };
            let size = sizes.next().unwrap_or(usize::MAX).min(rest_len);
            // The last block is what is left, not split off it (never `split_at(len)`).
            let block = if size < rest_len {
                let (block, tail) = p.split_at(size);
                rest = Some(tail);
                block
            } else {
                p
            };
            rest_len -= size;
            let left = consumer.split_off_left();
            let reducer = consumer.to_reducer();
            let result = bridge_producer_consumer(size, block, left);
            acc = reducer.reduce(acc, result);
        }
        let reducer = consumer.to_reducer();
        reducer.reduce(acc, consumer.into_folder().complete())
    }
}
