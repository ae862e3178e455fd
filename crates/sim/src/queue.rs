//! The event queue: a binary heap ordered by (time, sequence number).
//!
//! The sequence number makes the order of simultaneous events the order in which they were
//! scheduled, so a run is a pure function of its inputs and seed. Events are small `Copy`
//! values; the heap's storage is reused, so scheduling does not allocate once it has grown.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// What happens at an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum EventKind {
    /// Process `a` arrives.
    Arrive,
    /// CPU `a`'s current run segment ends, if its generation is still `gen`.
    SegmentEnd,
    /// Process `a` finishes its I/O wait.
    IoDone,
    /// CPU `a`'s scheduler tick (periodic balancing).
    Tick,
}

/// One scheduled event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Event {
    pub(crate) time_us: u64,
    seq: u64,
    pub(crate) kind: EventKind,
    pub(crate) a: u32,
    pub(crate) gen: u32,
}

/// A min-heap of events.
#[derive(Debug, Default)]
pub(crate) struct EventQueue {
    heap: BinaryHeap<Reverse<Event>>,
    seq: u64,
}

impl EventQueue {
    pub(crate) fn with_capacity(n: usize) -> Self {
        Self {
            heap: BinaryHeap::with_capacity(n),
            seq: 0,
        }
    }

    #[inline]
    pub(crate) fn push(&mut self, time_us: u64, kind: EventKind, a: u32, gen: u32) {
        self.seq += 1;
        self.heap.push(Reverse(Event {
            time_us,
            seq: self.seq,
            kind,
            a,
            gen,
        }));
    }

    #[inline]
    pub(crate) fn pop(&mut self) -> Option<Event> {
        self.heap.pop().map(|Reverse(e)| e)
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn pops_in_time_then_schedule_order() {
        let mut q = EventQueue::default();
        q.push(5, EventKind::Tick, 1, 0);
        q.push(3, EventKind::Tick, 2, 0);
        q.push(5, EventKind::Arrive, 3, 0);
        let order: Vec<u32> = std::iter::from_fn(|| q.pop()).map(|e| e.a).collect();
        assert_eq!(order, vec![2, 1, 3]);
    }
}
