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
                self.callback.callback(ChunkProducer {
                    base,
                    size: self.size,
                    len: self.len,
                })
            }
        }
    }
}

/// The base producer (of `len` items) in chunks of `size`.
struct ChunkProducer<P> {
    base: P,
    size: usize,
    len: usize,
}

impl<P: Producer> Producer for ChunkProducer<P> {
    type Item = Vec<P::Item>;
    type IntoIter = ChunkIter<P>;

    fn into_iter(self) -> ChunkIter<P> {
        ChunkIter {
            rest: Some(self.base),
            size: self.size,
            len: self.len,
        }
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let at = index.saturating_mul(self.size).min(self.len);
        let (a, b) = self.base.split_at(at);
        (
            ChunkProducer {
                base: a,
                size: self.size,
                len: at,
            },
            ChunkProducer {
                base: b,
                size: self.size,
                len: self.len - at,
            },
        )
    }
}

/// The sequential iterator of a chunked producer: splits one chunk off at a time from the
/// `len` items left.
struct ChunkIter<P> {
    rest: Option<P>,
    size: usize,
    len: usize,
}

impl<P: Producer> DoubleEndedIterator for ChunkIter<P> {
    fn next_back(&mut self) -> Option<Vec<P::Item>> {
        let p = self.rest.take()?;
        let len = self.len;
        if len == 0 {
            return None;
        }
        let last = match len % self.size {
            0 => self.size,
            r => r,
        };
        let (rest, chunk) = p.split_at(len - last);
        self.rest = Some(rest);
        self.len = len - last;
        Some(chunk.into_iter().collect())
    }
}

impl<P: Producer> Iterator for ChunkIter<P> {
    type Item = Vec<P::Item>;
    fn next(&mut self) -> Option<Vec<P::Item>> {
        let p = self.rest.take()?;
        let len = self.len;
        if len == 0 {
            return None;
        }
        let n = self.size.min(len);
        let (chunk, rest) = p.split_at(n);
        self.rest = Some(rest);
        self.len = len - n;
        Some(chunk.into_iter().collect())
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

impl<P: Producer> ExactSizeIterator for ChunkIter<P> {}
