//! The event queue: a 4-ary min-heap of 24-byte entries ordered by (time, sequence number).
//! The sequence number is assigned at scheduling time, so simultaneous events run in the order
//! they were scheduled (FIFO), whatever the heap does internally; the order is total, so any
//! correct heap pops exactly the same sequence.
//!
//! The layout is chosen for large runs, where the heap holds one entry per busy link direction
//! and per armed timer (tens of thousands at 10,000 flows) and its lower levels miss the
//! cache: an entry is 24 bytes (the kind packed into the sequence number's low byte and two
//! u32 operands) instead of the 32 of a `u128` key and an enum, and each node's four children
//! are adjacent, so a sift-down level reads about one cache line where a binary heap reads
//! two levels' worth of lines. Measured alternatives (docs/performance.md): a radix heap was
//! slower (events move between its buckets 10–20 times); a calendar queue (2^13 buckets of
//! 32.8 µs) executed 8 % fewer instructions but had 20 % more L1 data misses.
//!
//! Components keep at most one pending event each (a link schedules only the arrival of
//! its head packet at the far node), so the queue scales with the number of components,
//! not with the number of packets.

use crate::units::SimTime;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// Multi-queue link direction `0` finishes a transmission (its scheduler picks the next).
    TxDone(u32),
    /// The packet at the head of link direction `0`'s propagation pipe reaches the far node;
    /// `1` is that packet's id (the link's line is authoritative; the id lets the loop
    /// prefetch the packet before the event is handled).
    Arrive(u32, u32),
    /// A flow starts sending.
    FlowStart(u32),
    /// A flow stops sending.
    FlowStop(u32),
    /// A UDP source's next packet.
    UdpSend(u32),
    /// A UDP ON/OFF source toggles state.
    UdpToggle(u32),
    /// TCP retransmission timer of flow `0` (checked against the sender's deadline).
    Rto(u32),
    /// Delayed-ACK timer of flow `0`'s sink, generation `1`.
    DelAck(u32, u32),
    /// The timer of conditioner `0`'s meter fires ([`crate::conditioner::Meter::on_timer`]).
    Timer(u32),
    /// A signal reaches the queue of signal route `0` (`sim::signals`); `1` is the value, as
    /// `f32` bits (it keeps the event entry small).
    Signal(u32, u32),
    /// Take a time-series sample.
    Sample,
    /// Open or close the measurement window.
    MeasureStart,
    MeasureEnd,
}

impl EventKind {
    /// (tag, first operand, second operand).
    #[inline(always)]
    fn encode(self) -> (u8, u32, u32) {
        match self {
            EventKind::TxDone(a) => (0, a, 0),
            EventKind::Arrive(a, b) => (1, a, b),
            EventKind::FlowStart(a) => (2, a, 0),
            EventKind::FlowStop(a) => (3, a, 0),
            EventKind::UdpSend(a) => (4, a, 0),
            EventKind::UdpToggle(a) => (5, a, 0),
            EventKind::Rto(a) => (6, a, 0),
            EventKind::DelAck(a, b) => (7, a, b),
            EventKind::Timer(a) => (8, a, 0),
            EventKind::Signal(a, b) => (9, a, b),
            EventKind::Sample => (10, 0, 0),
            EventKind::MeasureStart => (11, 0, 0),
            EventKind::MeasureEnd => (12, 0, 0),
        }
    }
    #[inline(always)]
    fn decode(tag: u8, a: u32, b: u32) -> EventKind {
        match tag {
            0 => EventKind::TxDone(a),
            1 => EventKind::Arrive(a, b),
            2 => EventKind::FlowStart(a),
            3 => EventKind::FlowStop(a),
            4 => EventKind::UdpSend(a),
            5 => EventKind::UdpToggle(a),
            6 => EventKind::Rto(a),
            7 => EventKind::DelAck(a, b),
            8 => EventKind::Timer(a),
            9 => EventKind::Signal(a, b),
            10 => EventKind::Sample,
            11 => EventKind::MeasureStart,
            _ => EventKind::MeasureEnd,
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct Event {
    pub time: SimTime,
    pub kind: EventKind,
}

/// Heap entry: ordered by (`time`, `seq_tag`); `seq_tag` is the sequence number shifted left
/// by 8 with the kind's tag in the low byte, so the tag never decides an order (sequence
/// numbers are unique; 2^56 of them are never exhausted).
#[derive(Clone, Copy)]
struct Entry {
    time: SimTime,
    seq_tag: u64,
    a: u32,
    b: u32,
}

impl Entry {
    /// The order key: (time, sequence number) as one integer, compared without branches.
    #[inline(always)]
    fn key(&self) -> u128 {
        ((self.time as u128) << 64) | self.seq_tag as u128
    }
}

/// Children of node `i` are `ARITY * i + 1 ..= ARITY * i + ARITY`.
const ARITY: usize = 4;

/// A 4-ary min-heap of entries (the calendar's current bucket and its far-future overflow).
#[derive(Default)]
struct Heap {
    v: Vec<Entry>,
}

impl Heap {
    #[inline]
    fn push(&mut self, e: Entry) {
        let key = e.key();
        let mut i = self.v.len();
        self.v.push(e);
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if key >= self.v[parent].key() {
                break;
            }
            self.v[i] = self.v[parent];
            i = parent;
        }
        self.v[i] = e;
    }
    #[inline]
    fn peek(&self) -> Option<&Entry> {
        self.v.first()
    }
    #[inline]
    fn pop(&mut self) -> Option<Entry> {
        let last = self.v.pop()?;
        if self.v.is_empty() {
            return Some(last);
        }
        let top = self.v[0];
        self.sift_down(0, last);
        Some(top)
    }
    /// Places `e` in the hole at `i` and moves it down until no child is earlier.
    #[inline]
    fn sift_down(&mut self, mut i: usize, e: Entry) {
        let h = &mut self.v[..];
        let n = h.len();
        let key = e.key();
        loop {
            let first = ARITY * i + 1;
            if first >= n {
                break;
            }
            let kids = &h[first..(first + ARITY).min(n)];
            let mut best = 0;
            let mut best_key = kids[0].key();
            for (c, k) in kids.iter().enumerate().skip(1) {
                let k = k.key();
                if k < best_key {
                    best = c;
                    best_key = k;
                }
            }
            if key <= best_key {
                break;
            }
            h[i] = h[first + best];
            i = first + best;
        }
        h[i] = e;
    }
    /// Restores the heap order of arbitrary contents (Floyd's bottom-up construction).
    fn heapify(&mut self) {
        let n = self.v.len();
        if n < 2 {
            return;
        }
        for i in (0..=(n - 2) / ARITY).rev() {
            let e = self.v[i];
            self.sift_down(i, e);
        }
    }
}

/// Width of a calendar bucket: 2^13 ns (8.2 µs).
const BUCKET_SHIFT: u32 = 13;
/// Buckets in the calendar: 2^14, a horizon of 134 ms ahead of the current bucket.
const BUCKETS: usize = 1 << 14;

/// Pending events above which the queue becomes a calendar, and below which it goes back to
/// one heap (measured: with 5 and 200 flows, a few hundred events pending, the heap executes
/// fewer instructions and misses the cache less; at 10,000 flows, tens of thousands pending,
/// the calendar executes 27 % fewer).
const CALENDAR_ON: usize = 4096;
const CALENDAR_OFF: usize = 1024;

/// The pending events: while many are pending, a calendar queue with exact order (R. Brown, CACM 1988, without its
/// resizing). Bucket number `b = time >> BUCKET_SHIFT`:
/// - `front`, a small heap, holds every event of the current bucket `cur` (and any scheduled
///   between the last event and `cur`'s start); events leave from here, in (time, sequence)
///   order;
/// - `buckets[b % BUCKETS]` holds the events of bucket `b` for `cur < b < cur + BUCKETS`,
///   unordered; a bitmap finds the next non-empty one;
/// - `overflow`, a heap, holds everything later (retransmission timers, far samples), moved
///   into the calendar as the horizon passes it.
///
/// Scheduling is a vector push for most events, and popping works on a heap of one bucket's
/// events (hot in cache) instead of one holding every pending event: at 10,000 flows that is
/// tens instead of tens of thousands. Every event of the front is earlier than every event
/// in the buckets, and those than every event in the overflow, so the order popped is
/// exactly the (time, sequence) order of one heap.
pub struct EventQueue {
    /// Calendar mode; otherwise every pending event is in `front`, a plain heap (few pending
    /// events: a heap of a few hundred entries stays in L1, where the calendar's buckets
    /// would spread single events over many cache lines).
    calendar: bool,
    calendar_on: usize,
    calendar_off: usize,
    front: Heap,
    cur: u64,
    buckets: Vec<Vec<Entry>>,
    occupied: Vec<u64>,
    in_buckets: usize,
    overflow: Heap,
    next_seq: u64,
    now: SimTime,
}

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue {
            calendar: false,
            calendar_on: CALENDAR_ON,
            calendar_off: CALENDAR_OFF,
            front: Heap::default(),
            cur: 0,
            // Allocated when the queue first becomes a calendar (most runs never do).
            buckets: Vec::new(),
            occupied: Vec::new(),
            in_buckets: 0,
            overflow: Heap::default(),
            next_seq: 0,
            now: 0,
        }
    }
}

impl EventQueue {
    pub fn new() -> Self {
        Self::default()
    }
    /// A queue that turns into a calendar above `on` pending events and back into a heap
    /// below `off` (for tests of both modes and the switches between them).
    pub fn with_calendar_thresholds(on: usize, off: usize) -> Self {
        EventQueue {
            calendar_on: on,
            calendar_off: off,
            ..Self::default()
        }
    }
    #[inline]
    pub fn now(&self) -> SimTime {
        self.now
    }
    /// Schedules `kind` at absolute time `time` (never in the past).
    #[inline]
    pub fn at(&mut self, time: SimTime, kind: EventKind) {
        debug_assert!(time >= self.now, "event scheduled in the past");
        let (tag, a, b) = kind.encode();
        let e = Entry {
            time,
            seq_tag: (self.next_seq << 8) | tag as u64,
            a,
            b,
        };
        self.next_seq += 1;
        if self.calendar {
            self.place(e);
        } else {
            self.front.push(e);
            if self.front.v.len() > self.calendar_on {
                self.become_calendar();
            }
        }
    }
    /// From one heap to the calendar: every entry placed by its bucket.
    #[cold]
    fn become_calendar(&mut self) {
        self.calendar = true;
        if self.buckets.is_empty() {
            self.buckets = vec![Vec::new(); BUCKETS];
            self.occupied = vec![0; BUCKETS / 64];
        }
        self.cur = self.now >> BUCKET_SHIFT;
        let all = std::mem::take(&mut self.front.v);
        for e in all {
            self.place(e);
        }
    }
    /// From the calendar back to one heap.
    #[cold]
    fn become_heap(&mut self) {
        self.calendar = false;
        for (w, word) in self.occupied.iter_mut().enumerate() {
            while *word != 0 {
                let slot = w * 64 + word.trailing_zeros() as usize;
                *word &= *word - 1;
                self.front.v.append(&mut self.buckets[slot]);
            }
        }
        self.in_buckets = 0;
        self.front.v.append(&mut self.overflow.v);
        self.front.heapify();
    }
    #[inline]
    fn place(&mut self, e: Entry) {
        let b = e.time >> BUCKET_SHIFT;
        if b <= self.cur {
            self.front.push(e);
        } else if b < self.cur + BUCKETS as u64 {
            let slot = b as usize & (BUCKETS - 1);
            self.buckets[slot].push(e);
            self.occupied[slot / 64] |= 1 << (slot % 64);
            self.in_buckets += 1;
        } else {
            self.overflow.push(e);
        }
    }
    /// The front is empty: makes the next non-empty bucket (or the overflow's first) current.
    /// Returns false when no event is pending.
    #[cold]
    fn refill(&mut self) -> bool {
        if !self.calendar {
            return false;
        }
        if self.in_buckets + self.overflow.v.len() < self.calendar_off {
            self.become_heap();
            return !self.front.v.is_empty();
        }
        if self.in_buckets > 0 {
            let next = self.next_occupied();
            self.cur = next;
            let slot = next as usize & (BUCKETS - 1);
            std::mem::swap(&mut self.front.v, &mut self.buckets[slot]);
            self.occupied[slot / 64] &= !(1 << (slot % 64));
            self.in_buckets -= self.front.v.len();
            self.front.heapify();
        } else if let Some(e) = self.overflow.peek() {
            self.cur = e.time >> BUCKET_SHIFT;
        } else {
            return false;
        }
        // The horizon moved: bring the overflow's events inside it into the calendar.
        while let Some(e) = self.overflow.peek() {
            if e.time >> BUCKET_SHIFT >= self.cur + BUCKETS as u64 {
                break;
            }
            let e = self.overflow.pop().expect("peeked");
            self.place(e);
        }
        true
    }
    /// The first non-empty bucket after `cur` (one exists).
    fn next_occupied(&self) -> u64 {
        let start = (self.cur as usize + 1) & (BUCKETS - 1);
        let words = BUCKETS / 64;
        let (w0, bit0) = (start / 64, start % 64);
        for k in 0..=words {
            let w = (w0 + k) % words;
            let mut bits = self.occupied[w];
            if k == 0 {
                bits &= !0u64 << bit0;
            }
            if bits != 0 {
                let slot = w * 64 + bits.trailing_zeros() as usize;
                let ahead = (slot + BUCKETS - start) % BUCKETS;
                return self.cur + 1 + ahead as u64;
            }
        }
        unreachable!("in_buckets > 0 but no bucket occupied")
    }
    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        if self.front.v.is_empty() && !self.refill() {
            return None;
        }
        let top = self.front.pop()?;
        self.now = top.time;
        Some(Event {
            time: top.time,
            kind: EventKind::decode(top.seq_tag as u8, top.a, top.b),
        })
    }
    /// The kind of the next event if it is already known without moving the calendar (for
    /// prefetching what it will touch).
    #[inline]
    pub fn peek_kind(&self) -> Option<EventKind> {
        self.front
            .peek()
            .map(|e| EventKind::decode(e.seq_tag as u8, e.a, e.b))
    }
    pub fn peek_time(&mut self) -> Option<SimTime> {
        if self.front.v.is_empty() && !self.refill() {
            return None;
        }
        self.front.peek().map(|e| e.time)
    }
    pub fn len(&self) -> usize {
        self.front.v.len() + self.in_buckets + self.overflow.v.len()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_survives_the_queue() {
        let kinds = [
            EventKind::TxDone(u32::MAX),
            EventKind::Arrive(7, u32::MAX),
            EventKind::FlowStart(1),
            EventKind::FlowStop(2),
            EventKind::UdpSend(3),
            EventKind::UdpToggle(4),
            EventKind::Rto(5),
            EventKind::DelAck(6, u32::MAX),
            EventKind::Timer(8),
            EventKind::Signal(9, 1.5f32.to_bits()),
            EventKind::Sample,
            EventKind::MeasureStart,
            EventKind::MeasureEnd,
        ];
        let mut q = EventQueue::new();
        for k in kinds {
            q.at(3, k);
        }
        let back: Vec<_> = std::iter::from_fn(|| q.pop()).map(|e| e.kind).collect();
        assert_eq!(back, kinds);
    }

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

#[cfg(test)]
mod prop {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Against a reference (stable sort by time): same order, FIFO among equal times,
        /// with events scheduled while popping (never in the past).
        #[test]
        fn matches_a_stable_sort(
            ops in proptest::collection::vec((0u64..1_000, 0u32..5, 0u64..4, any::<bool>()), 1..400),
            thresholds in prop_oneof![Just((usize::MAX, 0)), Just((0, 0)), Just((8, 2)), Just((40, 10))],
        ) {
            // Thresholds: always a heap, always a calendar, and switching often both ways.
            let mut q = EventQueue::with_calendar_thresholds(thresholds.0, thresholds.1);
            let mut reference: Vec<(u64, u32)> = Vec::new();
            let mut popped = Vec::new();
            let mut expected = Vec::new();
            let mut id = 0u32;
            for (dt, scale, burst, pop) in ops {
                // Gaps from nanoseconds to minutes, around a bucket's width and beyond the
                // calendar's horizon.
                let dt = dt * [1, 20_000, 1_000_000, 60_000_000_000, 8_192][scale as usize];
                for _ in 0..=burst {
                    let t = q.now() + dt;
                    q.at(t, EventKind::FlowStart(id));
                    reference.push((t, id));
                    id += 1;
                }
                if pop {
                    reference.sort_by_key(|&(t, _)| t);
                    let (t, i) = reference.remove(0);
                    expected.push((t, i));
                    let e = q.pop().unwrap();
                    let EventKind::FlowStart(j) = e.kind else { unreachable!() };
                    popped.push((e.time, j));
                }
            }
            reference.sort_by_key(|&(t, _)| t);
            expected.extend(reference);
            while let Some(e) = q.pop() {
                let EventKind::FlowStart(j) = e.kind else { unreachable!() };
                popped.push((e.time, j));
            }
            prop_assert_eq!(popped, expected);
        }
    }
}
