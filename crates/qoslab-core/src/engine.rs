//! The event queue: a binary heap ordered by (time, sequence number). The sequence number is
//! assigned at scheduling time, so simultaneous events run in the order they were scheduled
//! (FIFO), whatever the heap does internally. Components keep at most one or two pending
//! events each (a link schedules only its next transmission end and its next arrival), so the
//! heap scales with the number of components, not with the number of packets.
//! Timers are cancelled lazily: a timer event carries a generation number and is ignored when
//! it pops if the owner's generation has moved on.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::units::SimTime;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// The transmitter of link direction `0` finishes serialising its packet.
    TxDone(u32),
    /// The packet at the head of link direction `0`'s propagation pipe reaches the far node.
    Arrive(u32),
    /// A flow starts sending.
    FlowStart(u32),
    /// A flow stops sending.
    FlowStop(u32),
    /// A UDP source's next packet.
    UdpSend(u32),
    /// A UDP ON/OFF source toggles state.
    UdpToggle(u32),
    /// TCP retransmission timer of flow `0`, generation `1`.
    Rto(u32, u32),
    /// Delayed-ACK timer of flow `0`'s sink, generation `1`.
    DelAck(u32, u32),
    /// Take a time-series sample.
    Sample,
    /// Open or close the measurement window.
    MeasureStart,
    MeasureEnd,
}

#[derive(Debug, Clone, Copy)]
pub struct Event {
    pub time: SimTime,
    seq: u64,
    pub kind: EventKind,
}

impl PartialEq for Event {
    fn eq(&self, o: &Self) -> bool {
        self.time == o.time && self.seq == o.seq
    }
}
impl Eq for Event {}
impl PartialOrd for Event {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Event {
    /// Reversed, so that `BinaryHeap` (a max-heap) pops the earliest event first.
    fn cmp(&self, o: &Self) -> Ordering {
        (o.time, o.seq).cmp(&(self.time, self.seq))
    }
}

#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Event>,
    next_seq: u64,
    now: SimTime,
}

impl EventQueue {
    pub fn new() -> Self {
        Self::default()
    }
    #[inline]
    pub fn now(&self) -> SimTime {
        self.now
    }
    /// Schedules `kind` at absolute time `time` (never in the past).
    #[inline]
    pub fn at(&mut self, time: SimTime, kind: EventKind) {
        debug_assert!(time >= self.now, "event scheduled in the past");
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Event { time, seq, kind });
    }
    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        let e = self.heap.pop()?;
        self.now = e.time;
        Some(e)
    }
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|e| e.time)
    }
    pub fn len(&self) -> usize {
        self.heap.len()
    }
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simultaneous_events_are_fifo() {
        let mut q = EventQueue::new();
        q.at(10, EventKind::FlowStart(2));
        q.at(5, EventKind::FlowStart(9));
        q.at(10, EventKind::FlowStart(0));
        q.at(10, EventKind::FlowStart(1));
        let order: Vec<_> = std::iter::from_fn(|| q.pop())
            .map(|e| (e.time, e.kind))
            .collect();
        assert_eq!(
            order,
            vec![
                (5, EventKind::FlowStart(9)),
                (10, EventKind::FlowStart(2)),
                (10, EventKind::FlowStart(0)),
                (10, EventKind::FlowStart(1)),
            ]
        );
    }
}
