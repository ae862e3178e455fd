//! `fold_chunks` and `fold_chunks_with`: every chunk of `chunk_size` consecutive items
//! folded sequentially (indexed: one item per chunk, as `chunks` but without the vectors).

use super::chunks::{ChunkCut, ChunkCuts};
use super::map_with::{CloneSource, InitSource, StateSource};
use super::plumbing::{BridgeCallback, Producer, ProducerCallback, UnindexedConsumer};
use super::{IndexedParallelIterator, ParallelIterator};

/// Every chunk folded from `identity()` ([`IndexedParallelIterator::fold_chunks`]).
///
/// ```
/// use zonal::prelude::*;
/// let sums: Vec<u32> = (1..11u32).into_par_iter().fold_chunks(4, || 0, |a, x| a + x).collect();
/// assert_eq!(sums, [10, 26, 19]);
/// ```
#[derive(Clone)]
#[must_use = "iterator adaptors are lazy"]
pub struct FoldChunks<I, ID, F> {
    base: I,
    chunk_size: usize,
    identity: ID,
    fold_op: F,
}

/// Shows the base iterator (and the state), not the closures, as rayon's.
impl<I: std::fmt::Debug, ID, F> std::fmt::Debug for FoldChunks<I, ID, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FoldChunks")
            .field("base", &self.base)
            .field("chunk_size", &self.chunk_size)
            .finish_non_exhaustive()
    }
}

/// Every chunk folded from a clone of `init` ([`IndexedParallelIterator::fold_chunks_with`]).
///
/// ```
/// use zonal::prelude::*;
/// let v: Vec<Vec<u32>> = (0..5u32)
///     .into_par_iter()
///     .fold_chunks_with(2, Vec::new(), |mut v, x| {
///         v.push(x);
///         v
///     })
///     .collect();
/// assert_eq!(v, [vec![0, 1], vec![2, 3], vec![4]]);
/// ```
#[derive(Clone)]
#[must_use = "iterator adaptors are lazy"]
pub struct FoldChunksWith<I, T, F> {
    base: I,
    chunk_size: usize,
    item: T,
    fold_op: F,
}

/// Shows the base iterator (and the state), not the closures, as rayon's.
impl<I: std::fmt::Debug, T: std::fmt::Debug, F> std::fmt::Debug for FoldChunksWith<I, T, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FoldChunksWith")
            .field("base", &self.base)
            .field("chunk_size", &self.chunk_size)
            .field("item", &self.item)
            .finish_non_exhaustive()
    }
}

impl<I, ID, F> FoldChunks<I, ID, F> {
    /// # Panics
    /// If `chunk_size` is 0.
    pub(super) fn new(base: I, chunk_size: usize, identity: ID, fold_op: F) -> Self {
        assert!(chunk_size != 0, "chunk_size must not be zero");
        FoldChunks {
            base,
            chunk_size,
            identity,
            fold_op,
        }
    }
}

impl<I, T, F> FoldChunksWith<I, T, F> {
    /// # Panics
    /// If `chunk_size` is 0.
    pub(super) fn new(base: I, chunk_size: usize, item: T, fold_op: F) -> Self {
        assert!(chunk_size != 0, "chunk_size must not be zero");
        FoldChunksWith {
            base,
            chunk_size,
            item,
            fold_op,
        }
    }
}

impl<I, ID, F, T> ParallelIterator for FoldChunks<I, ID, F>
where
    I: IndexedParallelIterator,
    ID: Fn() -> T + Sync + Send,
    F: Fn(T, I::Item) -> T + Sync + Send,
    T: Send,
{
    type Item = T;

    fn drive_unindexed<C: UnindexedConsumer<T>>(self, consumer: C) -> C::Result {
        let len = self.len();
        self.with_producer(BridgeCallback { len, consumer })
    }
    fn opt_len(&self) -> Option<usize> {
        Some(self.len())
    }
}

impl<I, ID, F, T> IndexedParallelIterator for FoldChunks<I, ID, F>
where
    I: IndexedParallelIterator,
    ID: Fn() -> T + Sync + Send,
    F: Fn(T, I::Item) -> T + Sync + Send,
    T: Send,
{
    fn len(&self) -> usize {
        self.base.len().div_ceil(self.chunk_size)
    }
    fn with_producer<CB: ProducerCallback<T>>(self, callback: CB) -> CB::Output {
        let FoldChunks {
            base,
            chunk_size,
            identity,
            fold_op,
        } = self;
        let len = base.len();
        base.with_producer(FoldChunksCallback {
            callback,
            size: chunk_size,
            len,
            source: InitSource::new(&identity),
            fold_op: &fold_op,
        })
    }
}

impl<I, T, F> ParallelIterator for FoldChunksWith<I, T, F>
where
    I: IndexedParallelIterator,
    F: Fn(T, I::Item) -> T + Sync + Send,
    T: Send + Clone,
{
    type Item = T;

    fn drive_unindexed<C: UnindexedConsumer<T>>(self, consumer: C) -> C::Result {
        let len = self.len();
        self.with_producer(BridgeCallback { len, consumer })
    }
    fn opt_len(&self) -> Option<usize> {
        Some(self.len())
    }
}

impl<I, T, F> IndexedParallelIterator for FoldChunksWith<I, T, F>
where
    I: IndexedParallelIterator,
    F: Fn(T, I::Item) -> T + Sync + Send,
    T: Send + Clone,
{
    fn len(&self) -> usize {
        self.base.len().div_ceil(self.chunk_size)
    }
    fn with_producer<CB: ProducerCallback<T>>(self, callback: CB) -> CB::Output {
        let FoldChunksWith {
            base,
            chunk_size,
            item,
            fold_op,
        } = self;
        let len = base.len();
        base.with_producer(FoldChunksCallback {
            callback,
            size: chunk_size,
            len,
            source: CloneSource::new(item),
            fold_op: &fold_op,
        })
    }
}

struct FoldChunksCallback<'f, CB, S, F> {
    callback: CB,
    size: usize,
    len: usize,
    source: S,
    fold_op: &'f F,
}

impl<U, T, CB, S, F> ProducerCallback<U> for FoldChunksCallback<'_, CB, S, F>
where
    CB: ProducerCallback<T>,
    S: StateSource<State = T>,
    F: Fn(T, U) -> T + Sync,
    T: Send,
{
    type Output = CB::Output;
    fn callback<P: Producer<Item = U>>(self, base: P) -> CB::Output {
        self.callback.callback(FoldChunksProducer {
            cut: ChunkCut {
                base,
                size: self.size,
                len: self.len,
            },
            source: self.source,
            fold_op: self.fold_op,
        })
    }
}

/// The base producer's `len` items, folded in chunks of `size`.
struct FoldChunksProducer<'f, P, S, F> {
    cut: ChunkCut<P>,
    source: S,
    fold_op: &'f F,
}

impl<'f, P, S, F, T> Producer for FoldChunksProducer<'f, P, S, F>
where
    P: Producer,
    S: StateSource<State = T>,
    F: Fn(T, P::Item) -> T + Sync,
    T: Send,
{
    type Item = T;
    type IntoIter = FoldChunksIter<'f, P, S, F>;

    fn into_iter(self) -> Self::IntoIter {
        FoldChunksIter {
            chunks: self.cut.into_chunks(),
            source: self.source,
            fold_op: self.fold_op,
        }
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (a, b) = self.cut.split_at(index);
        (
            FoldChunksProducer {
                cut: a,
                source: self.source.split(),
                fold_op: self.fold_op,
            },
            FoldChunksProducer {
                cut: b,
                source: self.source,
                fold_op: self.fold_op,
            },
        )
    }
    fn min_len(&self) -> usize {
        self.cut.base.min_len().div_ceil(self.cut.size)
    }
    fn max_len(&self) -> usize {
        (self.cut.base.max_len() / self.cut.size).max(1)
    }
}

/// The sequential iterator of a piece of chunks: folds each chunk from a fresh state.
struct FoldChunksIter<'f, P, S, F> {
    chunks: ChunkCuts<P>,
    source: S,
    fold_op: &'f F,
}

impl<P, S, F, T> FoldChunksIter<'_, P, S, F>
where
    P: Producer,
    S: StateSource<State = T>,
    F: Fn(T, P::Item) -> T,
{
    fn fold(&mut self, chunk: P) -> T {
        chunk
            .into_iter()
            .fold(self.source.split().into_state(), self.fold_op)
    }
}

impl<P, S, F, T> Iterator for FoldChunksIter<'_, P, S, F>
where
    P: Producer,
    S: StateSource<State = T>,
    F: Fn(T, P::Item) -> T,
{
    type Item = T;
    fn next(&mut self) -> Option<T> {
        let chunk = self.chunks.next()?;
        Some(self.fold(chunk))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.chunks.size_hint()
    }
}

impl<P, S, F, T> DoubleEndedIterator for FoldChunksIter<'_, P, S, F>
where
    P: Producer,
    S: StateSource<State = T>,
    F: Fn(T, P::Item) -> T,
{
    fn next_back(&mut self) -> Option<T> {
        let chunk = self.chunks.next_back()?;
        Some(self.fold(chunk))
    }
}

impl<P, S, F, T> ExactSizeIterator for FoldChunksIter<'_, P, S, F>
where
    P: Producer,
    S: StateSource<State = T>,
    F: Fn(T, P::Item) -> T,
{
}
