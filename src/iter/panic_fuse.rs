//! `panic_fuse`: once an item's processing panics (in any piece), the other pieces stop
//! consuming items as soon as they check, instead of running to their end; the panic is
//! then propagated as without the fuse. Indexed when the base is.

use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;

use super::plumbing::{
    consume_until_full, Consumer, Folder, Producer, ProducerCallback, UnindexedConsumer,
};
use super::{IndexedParallelIterator, ParallelIterator};

/// Stops early after a panic ([`ParallelIterator::panic_fuse`]).
///
/// ```
/// use zonal::prelude::*;
/// let r = std::panic::catch_unwind(|| {
///     (0..1000u32).into_par_iter().panic_fuse().for_each(|x| assert_ne!(x, 500));
/// });
/// assert!(r.is_err());
/// ```
#[derive(Clone, Debug)]
#[must_use = "iterator adaptors are lazy"]
pub struct PanicFuse<I> {
    base: I,
}

impl<I> PanicFuse<I> {
    pub(super) fn new(base: I) -> Self {
        PanicFuse { base }
    }
}

/// Sets the shared flag when dropped during a panic (every consumer, folder and producer of
/// the fused iterator holds one).
#[derive(Clone)]
struct Fuse<'f>(&'f AtomicBool);

impl Drop for Fuse<'_> {
    fn drop(&mut self) {
        if thread::panicking() {
            self.0.store(true, Ordering::Relaxed);
        }
    }
}

impl Fuse<'_> {
    fn blown(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

impl<I: ParallelIterator> ParallelIterator for PanicFuse<I> {
    type Item = I::Item;

    fn drive_unindexed<C: UnindexedConsumer<I::Item>>(self, consumer: C) -> C::Result {
        let blown = AtomicBool::new(false);
        self.base.drive_unindexed(FuseConsumer {
            base: consumer,
            fuse: Fuse(&blown),
        })
    }
    fn opt_len(&self) -> Option<usize> {
        self.base.opt_len()
    }
}

impl<I: IndexedParallelIterator> IndexedParallelIterator for PanicFuse<I> {
    fn len(&self) -> usize {
        self.base.len()
    }

    fn with_producer<CB: ProducerCallback<I::Item>>(self, callback: CB) -> CB::Output {
        let blown = AtomicBool::new(false);
        return self.base.with_producer(Callback {
            callback,
            blown: &blown,
        });

        struct Callback<'f, CB> {
            callback: CB,
            blown: &'f AtomicBool,
        }
        impl<T, CB: ProducerCallback<T>> ProducerCallback<T> for Callback<'_, CB> {
            type Output = CB::Output;
            fn callback<P: Producer<Item = T>>(self, base: P) -> CB::Output {
                self.callback.callback(FuseProducer {
                    base,
                    fuse: Fuse(self.blown),
                })
            }
        }
    }
}

struct FuseProducer<'f, P> {
    base: P,
    fuse: Fuse<'f>,
}

impl<'f, P: Producer> Producer for FuseProducer<'f, P> {
    type Item = P::Item;
    type IntoIter = FuseIter<'f, P::IntoIter>;

    fn into_iter(self) -> Self::IntoIter {
        FuseIter {
            base: self.base.into_iter(),
            fuse: self.fuse,
        }
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (a, b) = self.base.split_at(index);
        (
            FuseProducer {
                base: a,
                fuse: self.fuse.clone(),
            },
            FuseProducer {
                base: b,
                fuse: self.fuse,
            },
        )
    }
    fn min_len(&self) -> usize {
        self.base.min_len()
    }
    fn max_len(&self) -> usize {
        self.base.max_len()
    }
    fn fold_with<G: Folder<P::Item>>(self, folder: G) -> G {
        if self.fuse.blown() {
            return folder;
        }
        self.base
            .fold_with(FuseConsumer {
                base: folder,
                fuse: self.fuse,
            })
            .base
    }
}

/// The sequential iterator of a fused producer: holds the fuse (a panic while it is in use
/// blows it) and ends early once the fuse is blown (its exact size then no longer holds,
/// but the computation is panicking anyway).
struct FuseIter<'f, I> {
    base: I,
    fuse: Fuse<'f>,
}

impl<I: Iterator> Iterator for FuseIter<'_, I> {
    type Item = I::Item;
    fn next(&mut self) -> Option<I::Item> {
        if self.fuse.blown() {
            None
        } else {
            self.base.next()
        }
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.base.size_hint()
    }
}

impl<I: DoubleEndedIterator> DoubleEndedIterator for FuseIter<'_, I> {
    fn next_back(&mut self) -> Option<I::Item> {
        if self.fuse.blown() {
            None
        } else {
            self.base.next_back()
        }
    }
}

impl<I: ExactSizeIterator> ExactSizeIterator for FuseIter<'_, I> {}

struct FuseConsumer<'f, C> {
    base: C,
    fuse: Fuse<'f>,
}

impl<'f, T, C: Consumer<T>> Consumer<T> for FuseConsumer<'f, C> {
    type Folder = FuseConsumer<'f, C::Folder>;
    type Reducer = C::Reducer;
    type Result = C::Result;

    fn split_at(self, index: usize) -> (Self, Self, Self::Reducer) {
        let (left_base, right_base, reducer) = self.base.split_at(index);
        let left = FuseConsumer {
            base: left_base,
            fuse: self.fuse.clone(),
        };
        let right = FuseConsumer {
            base: right_base,
            ..self
        };
        (left, right, reducer)
    }

    fn into_folder(self) -> Self::Folder {
        FuseConsumer {
            base: self.base.into_folder(),
            fuse: self.fuse,
        }
    }
    fn full(&self) -> bool {
        self.fuse.blown() || self.base.full()
    }
}

impl<'f, T, C: UnindexedConsumer<T>> UnindexedConsumer<T> for FuseConsumer<'f, C> {
    fn split_off_left(&self) -> Self {
        FuseConsumer {
            base: self.base.split_off_left(),
            fuse: self.fuse.clone(),
        }
    }
    fn to_reducer(&self) -> C::Reducer {
        self.base.to_reducer()
    }
}

impl<T, G: Folder<T>> Folder<T> for FuseConsumer<'_, G> {
    type Result = G::Result;

    fn consume(self, item: T) -> Self {
        FuseConsumer {
            base: self.base.consume(item),
            fuse: self.fuse,
        }
    }
    fn consume_iter<It: IntoIterator<Item = T>>(self, iter: It) -> Self {
        consume_until_full(self, iter)
    }
    fn complete(self) -> G::Result {
        self.base.complete()
    }
    fn full(&self) -> bool {
        self.fuse.blown() || self.base.full()
    }
}
