//! `chunks`: an indexed iterator's items in `Vec`s of a given size (indexed).

use super::plumbing::{BridgeCallback, Producer, ProducerCallback, UnindexedConsumer};
use super::{IndexedParallelIterator, ParallelIterator};

/// Items in `Vec`s of `size`, the last one possibly shorter
/// ([`IndexedParallelIterator::chunks`]).
#[derive(Clone, Debug)]
#[must_use = "iterator adaptors are lazy"]
pub struct Chunks<I> {
    base: I,
    size: usize,
}

impl<I> Chunks<I> {
    pub(super) fn new(base: I, size: usize) -> Self {
        assert!(size != 0, "chunk size must be non-zero");
        Chunks { base, size }
    }
}

impl<I: IndexedParallelIterator> ParallelIterator for Chunks<I> {
    type Item = Vec<I::Item>;

    fn drive_unindexed<C: UnindexedConsumer<Self::Item>>(self, consumer: C) -> C::Result {
        let len = self.len();
        self.with_producer(BridgeCallback { len, consumer })
    }
    fn opt_len(&self) -> Option<usize> {
        Some(self.len())
    }
}

impl<I: IndexedParallelIterator> IndexedParallelIterator for Chunks<I> {
    fn len(&self) -> usize {
        self.base.len().div_ceil(self.size)
    }

    fn with_producer<CB: ProducerCallback<Self::Item>>(self, callback: CB) -> CB::Output {
        let len = self.base.len();
        return self.base.with_producer(Callback {
            callback,
            size: self.size,
            len,
        });

        struct Callback<CB> {
            callback: CB,
            size: usize,
            len: usize,
        }
        impl<T, CB: ProducerCallback<Vec<T>>> ProducerCallback<T> for Callback<CB> {
            type Output = CB::Output;
            fn callback<P: Producer<Item = T>>(self, base: P) -> CB::Output {
                self.callback.callback(ChunkProducer(ChunkCut {
                    base,
                    size: self.size,
                    len: self.len,
                }))
            }
        }
    }
}

/// The base producer (of `len` items) in chunks of `size`.
struct ChunkProducer<P>(ChunkCut<P>);

impl<P: Producer> Producer for ChunkProducer<P> {
    type Item = Vec<P::Item>;
    type IntoIter = ChunkIter<P>;

    fn into_iter(self) -> ChunkIter<P> {
        ChunkIter(self.0.into_chunks())
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (a, b) = self.0.split_at(index);
        (ChunkProducer(a), ChunkProducer(b))
    }
}

/// The sequential iterator of a chunked producer: each chunk collected.
struct ChunkIter<P>(ChunkCuts<P>);

impl<P: Producer> Iterator for ChunkIter<P> {
    type Item = Vec<P::Item>;
    fn next(&mut self) -> Option<Vec<P::Item>> {
        self.0.next().map(|chunk| chunk.into_iter().collect())
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl<P: Producer> DoubleEndedIterator for ChunkIter<P> {
    fn next_back(&mut self) -> Option<Vec<P::Item>> {
        self.0.next_back().map(|chunk| chunk.into_iter().collect())
    }
}

impl<P: Producer> ExactSizeIterator for ChunkIter<P> {}

/// A base producer's `len` items cut in chunks of `size` (the last one possibly shorter):
/// the split arithmetic and the sequential cut that `chunks` and `fold_chunks` share.
pub(super) struct ChunkCut<P> {
    pub(super) base: P,
    pub(super) size: usize,
    pub(super) len: usize,
}

impl<P: Producer> ChunkCut<P> {
    /// The first `index` chunks, and the rest.
    pub(super) fn split_at(self, index: usize) -> (Self, Self) {
        let at = index.saturating_mul(self.size).min(self.len);
        let (a, b) = self.base.split_at(at);
        (
            ChunkCut {
                base: a,
                size: self.size,
                len: at,
            },
            ChunkCut {
                base: b,
                size: self.size,
                len: self.len - at,
            },
        )
    }

    /// The chunks one at a time, each a producer of its items, from either end.
    pub(super) fn into_chunks(self) -> ChunkCuts<P> {
        ChunkCuts {
            rest: Some(self.base),
            size: self.size,
            len: self.len,
        }
    }
}

/// [`ChunkCut::into_chunks`]: splits one chunk off at a time from the `len` items left.
pub(super) struct ChunkCuts<P> {
    rest: Option<P>,
    size: usize,
    len: usize,
}

impl<P: Producer> Iterator for ChunkCuts<P> {
    type Item = P;
    fn next(&mut self) -> Option<P> {
        let p = self.rest.take()?;
        let len = self.len;
        if len == 0 {
            return None;
        }
        if len <= self.size {
            // The last chunk: all that is left, not split off (never `split_at(len)`).
            self.len = 0;
            return Some(p);
        }
        let (chunk, rest) = p.split_at(self.size);
        self.rest = Some(rest);
        self.len = len - self.size;
        Some(chunk)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = if self.rest.is_some() {
            self.len.div_ceil(self.size)
        } else {
            0
        };
        (n, Some(n))
    }
}

impl<P: Producer> DoubleEndedIterator for ChunkCuts<P> {
    fn next_back(&mut self) -> Option<P> {
        let p = self.rest.take()?;
        let len = self.len;
        if len == 0 {
            return None;
        }
        let last = match len % self.size {
            0 => self.size,
            r => r,
        };
        if len == last {
            // The first chunk: all that is left (never `split_at(0)`).
            self.len = 0;
            return Some(p);
        }
        let (rest, chunk) = p.split_at(len - last);
        self.rest = Some(rest);
        self.len = len - last;
        Some(chunk)
    }
}

impl<P: Producer> ExactSizeIterator for ChunkCuts<P> {}
