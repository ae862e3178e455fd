//! The event queue: a binary heap ordered by (time, sequence number), plus the arrivals.
//!
//! The sequence number makes the order of simultaneous events the order in which they were
//! scheduled, so a run is a pure function of its inputs and seed. Events are small `Copy`
//! values; the heap's storage is reused, so scheduling does not allocate once it has grown.
//!
//! # Arrivals
//!
//! Every arrival is known before the run starts and is scheduled before anything else, so
//! arrivals hold the smallest sequence numbers, in process order. Instead of sitting in the
//! heap (100,000 of them on a large run, making every heap operation deeper), they are kept
//! in one list sorted by (time, process) ([`EventQueue::set_arrivals`]) and merged on
//! [`pop`](EventQueue::pop): the next arrival goes first when its time is at most the heap's
//! earliest, exactly the order a heap holding them would give.

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
    /// Arrivals as (time, process), sorted; `next_arrival` indexes the next one.
    arrivals: Vec<(u64, u32)>,
    next_arrival: usize,
}

impl EventQueue {
    pub(crate) fn with_capacity(n: usize) -> Self {
        Self {
            heap: BinaryHeap::with_capacity(n),
            seq: 0,
            arrivals: Vec::new(),
            next_arrival: 0,
        }
    }

    /// Schedules every arrival (`Arrive` events, process `p` at `times[p]`) before any
    /// other event: equivalent to pushing them in process order into an empty queue.
    pub(crate) fn set_arrivals(&mut self, times: impl IntoIterator<Item = u64>) {
        debug_assert!(self.heap.is_empty() && self.seq == 0);
        self.arrivals = times
            .into_iter()
            .enumerate()
            .map(|(p, t)| (t, p as u32))
            .collect();
        self.arrivals.sort_unstable();
        self.next_arrival = 0;
        // The sequence numbers they would have taken.
        self.seq = self.arrivals.len() as u64;
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
        if let Some(&(t, p)) = self.arrivals.get(self.next_arrival) {
            // Arrivals were scheduled first: they win ties.
            if self.heap.peek().is_none_or(|Reverse(e)| t <= e.time_us) {
                self.next_arrival += 1;
                return Some(Event {
                    time_us: t,
                    seq: self.next_arrival as u64,
                    kind: EventKind::Arrive,
                    a: p,
                    gen: 0,
                });
            }
        }
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

    #[test]
    fn arrivals_pop_as_if_pushed_first() {
        let times = [5, 3, 5, 9, 0];
        let mut heap = EventQueue::default();
        for (p, &t) in times.iter().enumerate() {
            heap.push(t, EventKind::Arrive, p as u32, 0);
        }
        let mut merged = EventQueue::default();
        merged.set_arrivals(times);
        for q in [&mut heap, &mut merged] {
            q.push(5, EventKind::Tick, 100, 0);
            q.push(0, EventKind::Tick, 101, 0);
            q.push(4, EventKind::IoDone, 102, 0);
            q.push(9, EventKind::SegmentEnd, 103, 7);
        }
        let drain = |q: &mut EventQueue| {
            std::iter::from_fn(|| q.pop())
                .map(|e| (e.time_us, e.kind, e.a, e.gen))
                .collect::<Vec<_>>()
        };
        let (a, b) = (drain(&mut heap), drain(&mut merged));
        assert_eq!(a, b);
        assert_eq!(a.len(), 9);
    }
}
