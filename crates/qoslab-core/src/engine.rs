//! The event queue, ordered by (time, sequence number). The sequence number is assigned at
//! scheduling time, so simultaneous events run in the order they were scheduled (FIFO),
//! whatever the structure does internally; the order is total, so every structure below pops
//! exactly the same sequence.
//!
//! Three structures, chosen by the number of pending events:
//! - very few (up to [`SMALL_ON`]: one or two flows): one sorted run, taken in order, where a
//!   new event is placed by counting the pending events later than it, without a branch on
//!   each (a heap's sifts branch on every comparison, and mispredict on about half: the run
//!   took 5 % off both flavours' BBR-beside-CUBIC point, docs/performance.md, round 22);
//! - few (the 20- and 200-flow workloads: tens to hundreds): one binary heap, which stays in
//!   L1;
//! - many (10,000 flows: tens of thousands, one per busy link direction and armed timer): a
//!   calendar queue ([`EventQueue`]), where scheduling is a vector push and popping works on
//!   one 8.2 µs bucket's events instead of a heap of all of them, whose lower levels miss the
//!   cache (27 % fewer instructions than one heap at 10,000 flows, cachegrind). The bucket is
//!   sorted once and taken in order, unless events scheduled into it while it is current
//!   outnumber its own; then it is a small heap (7.6 % fewer instructions for the whole
//!   2,000-flow run than always a heap, 0.9 % more at 10,000 flows; docs/performance.md).
//!
//! An entry is 24 bytes: the time, the sequence number with the kind's tag in its low byte, and
//! two u32 operands. Measured and set aside (docs/performance.md): a radix heap (events move between
//! its buckets 10–20 times), a calendar at every size (more L1 misses with few events), a
//! 4-ary heap (more instructions than the standard binary heap below 1,000 events).
//!
//! Components keep at most one pending event each (a link schedules only the arrival of
//! its head packet at the far node), so the queue scales with the number of components,
//! not with the number of packets.

use std::collections::BinaryHeap;

pub use crate::event::{Event, EventKind};

use crate::units::SimTime;

/// Heap entry: ordered by (`time`, `seq_tag`); `seq_tag` is the sequence number shifted left
/// by 8 with the kind's tag in the low byte, so the tag never decides an order (sequence
/// numbers are unique; 2^56 of them are never exhausted). 24 bytes: measured against a `u128`
/// key (32 bytes with its alignment), 3 % fewer instructions on the 5-flow workload and 5 %
/// on the 200-flow one.
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
    #[inline(always)]
    fn time(&self) -> SimTime {
        self.time
    }
    #[inline(always)]
    fn tag(&self) -> u8 {
        self.seq_tag as u8
    }
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.key() == o.key()
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    /// Reversed, so that `BinaryHeap` (a max-heap) pops the earliest first.
    #[inline]
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        o.key().cmp(&self.key())
    }
}

/// A min-heap of entries (by [`Entry`]'s reversed order): the whole queue while few events
/// are pending, and the calendar's current bucket and overflow. The standard library's
/// binary heap (sift to the bottom, then up) executed fewer instructions on the 5- and
/// 200-flow workloads than a 4-ary heap of our own (cachegrind: 121 M against 137 M
/// instructions for scenarios/fdd-red-s1.toml), and than a binary heap of our own, whose top
/// replacement sank the hole to a leaf first (+21 % at 200 flows: a replaced entry settles at
/// depth 3 in the median of 9 levels) or sifted from the top (+4.6 %; docs/performance.md).
type Heap = BinaryHeap<Entry>;

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

/// Pending events above which one sorted run becomes one heap, and below which it goes back.
/// Placing an event counts every pending one, so the run pays off only while they are few: at
/// 16 and 8 the BBR-beside-CUBIC point ran 5 % faster than with a heap and five CUBIC flows as
/// fast; at 32 and 16 those five flows, with 20–30 events pending, ran 4–6 % slower, and at
/// 128 and 64 the 20-flow RIO scenario 22 % slower.
pub(crate) const SMALL_ON: usize = 16;
pub(crate) const SMALL_OFF: usize = 8;
/// Spent entries at the head of a small run dropped at once.
const SMALL_COMPACT: usize = 64;

/// The pending events: while many are pending, a calendar queue with exact order (R. Brown, CACM 1988, without its
/// resizing). Bucket number `b = time >> BUCKET_SHIFT`:
/// - the current bucket `cur` (with any event scheduled between the last event and `cur`'s
///   start) is either `run`, sorted, or `front`, a small heap; events leave from here, in
///   (time, sequence) order;
/// - `buckets[b % BUCKETS]` holds the events of bucket `b` for `cur < b < cur + BUCKETS`,
///   unordered; a bitmap finds the next non-empty one;
/// - `overflow`, a heap, holds everything later (retransmission timers, far samples), moved
///   into the calendar as the horizon passes it.
///
/// Scheduling is a vector push for most events, and popping works on one bucket's events
/// (hot in cache) instead of a heap of every pending event: at 10,000 flows that is tens
/// instead of tens of thousands. Every event of the current bucket is earlier than every event
/// in the later buckets, and those than every event in the overflow, so the order popped is
/// exactly the (time, sequence) order of one heap.
///
/// Which form the current bucket takes follows the events handled in the last buckets
/// (decaying sums, updated once a bucket, out of the event loop):
/// - a run, while few events are scheduled into the bucket being handled (2,000 flows at
///   1 Gbit/s: 3.5 % of events): sorted once, each event is the next entry instead of a heap's
///   pop (sift to the bottom and back up), and a late event is moved into place from the end;
/// - a heap, while such late events outnumber the bucket's own (10,000 flows at 10 Gbit/s:
///   78 %, among them each bottleneck arrival's successor, one transmission time, 0.8 µs,
///   later): each handled event's successor replaces the heap's top in place,
///   which a run cannot do.
///
/// Both forms give the same order, so the choice changes speed only. Brown's resizing (a
/// bucket width following the spacing of events) is left out, untried: to keep those late
/// events out of the current bucket the width would have to fall below 0.8 µs, and 2^14
/// buckets would then reach 13 ms ahead, less than the access links' 4–94 ms delays.
pub struct EventQueue {
    /// Calendar mode; otherwise every pending event is in `front`, a plain heap (few pending
    /// events: a heap of a few hundred entries stays in L1, where the calendar's buckets
    /// would spread single events over many cache lines).
    calendar: bool,
    calendar_on: usize,
    calendar_off: usize,
    /// Pending events above which one run (the small form) becomes one heap, and below which
    /// a heap goes back to a run.
    small_on: usize,
    small_off: usize,
    /// One heap's entries, or a calendar's current bucket kept as a heap (empty while the
    /// bucket is a run).
    front: Heap,
    /// Every pending event while very few are pending (no calendar: the small form), or a
    /// calendar's current bucket kept as a run; in (time, sequence) order, `run[pos..]`
    /// pending.
    run: Vec<Entry>,
    /// The pending events (no calendar) or the current bucket (a calendar) are a run (possibly
    /// spent): events scheduled join the run, and the front stays empty. Otherwise the front
    /// holds every event before `front_end`.
    run_mode: bool,
    pos: usize,
    cur: u64,
    buckets: Vec<Vec<Entry>>,
    occupied: Vec<u64>,
    in_buckets: usize,
    overflow: Heap,
    /// The front's top is the event [`Self::pop_until`] returned last, not yet removed.
    /// Handling an event usually schedules one (the link's next arrival), so the next
    /// [`Self::at`] overwrites the top and sifts it down once, instead of a pop (sift to the
    /// bottom and back up) followed by a push; any other operation removes it first. In a
    /// calendar, only an event of the current bucket takes the top's place.
    top_taken: bool,
    /// Events before this time belong in the front: the end of the current bucket in a
    /// calendar, the end of time in one heap.
    front_end: SimTime,
    /// Events taken out of the calendar (scheduled and no longer pending) when the current
    /// bucket became current, and how many the bucket held then: at the next refill, the
    /// events handled in between less the bucket's are the late ones, scheduled into the
    /// bucket while it was current.
    out_mark: u64,
    bucket_len: u64,
    /// Decaying sums (each bucket's weight 1/16 less than the next's) of late and bucketed
    /// events: while late events outnumber bucketed ones, a bucket becomes the front, a heap,
    /// rather than a run.
    late_sum: u64,
    bucketed_sum: u64,
    next_seq: u64,
    now: SimTime,
}

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue {
            calendar: false,
            calendar_on: CALENDAR_ON,
            calendar_off: CALENDAR_OFF,
            small_on: SMALL_ON,
            small_off: SMALL_OFF,
            front: Heap::new(),
            run: Vec::new(),
            run_mode: true,
            pos: 0,
            cur: 0,
            // Allocated when the queue first becomes a calendar (most runs never do).
            buckets: Vec::new(),
            occupied: Vec::new(),
            in_buckets: 0,
            overflow: Heap::new(),
            top_taken: false,
            front_end: SimTime::MAX,
            out_mark: 0,
            bucket_len: 0,
            late_sum: 0,
            bucketed_sum: 0,
            next_seq: 0,
            now: 0,
        }
    }
}

impl EventQueue {
    pub fn new() -> Self {
        Self::default()
    }
    /// A queue that is never one run, and turns into a calendar above `on` pending events and
    /// back into a heap below `off` (for tests of both modes and the switches between them).
    pub fn with_calendar_thresholds(on: usize, off: usize) -> Self {
        Self::with_thresholds((0, 0), (on, off))
    }
    /// A queue kept as one sorted run up to `small.0` pending events (back below `small.1`),
    /// as one heap above, and as a calendar above `calendar.0` (back below `calendar.1`).
    pub fn with_thresholds(small: (usize, usize), calendar: (usize, usize)) -> Self {
        EventQueue {
            small_on: small.0,
            small_off: small.1,
            calendar_on: calendar.0,
            calendar_off: calendar.1,
            ..Self::default()
        }
    }
    #[inline]
    pub fn now(&self) -> SimTime {
        self.now
    }
    /// Schedules `kind` at absolute time `time` (never in the past).
    #[inline(always)]
    pub fn at(&mut self, time: SimTime, kind: EventKind) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.push(time, seq, kind);
    }
    /// Takes the next sequence number without scheduling anything: an event scheduled later
    /// under it ([`Self::at_reserved`]) runs exactly where an event scheduled now for the same
    /// time would, and every other event keeps its number. A timer armed lazily, as Linux's
    /// `inet_csk` timers (one pending event re-checked at expiry instead of one per re-arming),
    /// keeps the order of the events it stands for this way.
    #[inline]
    pub fn reserve(&mut self) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        seq
    }
    /// Schedules `kind` at `time` (never in the past) under a sequence number taken earlier
    /// with [`Self::reserve`] and not used since.
    #[inline]
    pub fn at_reserved(&mut self, time: SimTime, seq: u64, kind: EventKind) {
        debug_assert!(seq < self.next_seq, "a reserved sequence number");
        self.push(time, seq, kind);
    }
    #[inline(always)]
    fn push(&mut self, time: SimTime, seq: u64, kind: EventKind) {
        debug_assert!(time >= self.now, "event scheduled in the past");
        let (tag, a, b) = kind.encode();
        let e = Entry {
            time,
            seq_tag: (seq << 8) | tag as u64,
            a,
            b,
        };
        if self.top_taken {
            // The taken top is the event being handled, earlier than `e` (time never goes
            // back, and at the same time `e`'s sequence number, assigned after the top's, is
            // larger); replacing a heap's top by any entry and sifting it down keeps the heap
            // either way. `e` takes its place if it belongs in the front (a calendar's run and
            // later buckets hold the rest).
            self.top_taken = false;
            if e.time() < self.front_end {
                // Never empty here: every other operation removes the taken top first. (An
                // `expect` instead of `if let` cost 3.6 % more instructions at 200 flows: the
                // loop's inlining changed.)
                debug_assert!(!self.front.is_empty(), "the taken top is in the front");
                if let Some(mut top) = self.front.peek_mut() {
                    *top = e;
                }
            } else {
                self.pop_and_place(e);
            }
            return;
        }
        if self.calendar {
            self.place(e);
        } else if self.run_mode {
            self.insert_small(e);
        } else {
            self.front.push(e);
            if self.front.len() > self.calendar_on {
                self.become_calendar();
            }
        }
    }
    /// A calendar's taken top goes, and `e`, of a later bucket, is placed.
    #[inline(never)]
    fn pop_and_place(&mut self, e: Entry) {
        self.front.pop();
        self.place(e);
    }
    /// Removes the taken top, if any (before anything else looks at the front).
    #[inline(always)]
    fn settle(&mut self) {
        if self.top_taken {
            self.top_taken = false;
            self.front.pop();
            if !self.calendar && self.front.len() < self.small_off {
                self.become_small();
            }
        }
    }
    /// One run's event, in order (few pending, no calendar); the run's spent head is dropped
    /// now and then, and above `small_on` pending events the run becomes one heap.
    #[inline(always)]
    fn insert_small(&mut self, e: Entry) {
        if self.pos >= SMALL_COMPACT {
            self.run.drain(..self.pos);
            self.pos = 0;
        }
        let k = e.key();
        let later: usize = self.run[self.pos..]
            .iter()
            .map(|x| (x.key() > k) as usize)
            .sum();
        let i = self.run.len() - later;
        self.run.insert(i, e);
        if self.run.len() - self.pos > self.small_on {
            self.become_large();
        }
    }
    /// From one run to one heap (and on to a calendar if that many are pending; only from one
    /// heap does the queue become a calendar).
    #[cold]
    fn become_large(&mut self) {
        self.run_mode = false;
        self.front = Heap::from(self.run.split_off(self.pos));
        self.run.clear();
        self.pos = 0;
        if self.front.len() > self.calendar_on {
            self.become_calendar();
        }
    }
    /// From one heap to one run.
    #[cold]
    fn become_small(&mut self) {
        let mut all = std::mem::take(&mut self.front).into_vec();
        all.sort_unstable_by_key(Entry::key);
        self.run = all;
        self.pos = 0;
        self.run_mode = true;
    }
    /// From one heap to the calendar: every entry placed by its bucket.
    #[cold]
    fn become_calendar(&mut self) {
        self.calendar = true;
        if self.buckets.is_empty() {
            self.buckets = vec![Vec::new(); BUCKETS];
            self.occupied = vec![0; BUCKETS / 64];
        }
        self.set_cur(self.now >> BUCKET_SHIFT);
        // The first bucket is a heap (the events of the current bucket go back to the front).
        let all = std::mem::take(&mut self.front).into_vec();
        for e in all {
            self.place(e);
        }
        self.bucket_len = self.front.len() as u64;
        self.out_mark = self.next_seq - self.len() as u64;
    }
    /// Makes bucket `b` the calendar's current one.
    fn set_cur(&mut self, b: u64) {
        self.cur = b;
        self.front_end = (b + 1).saturating_mul(1 << BUCKET_SHIFT);
    }
    /// From the calendar back to one heap.
    #[cold]
    fn become_heap(&mut self) {
        self.calendar = false;
        self.run_mode = false;
        self.front_end = SimTime::MAX;
        // Called by the refill only, with the run spent and cleared.
        let mut all = std::mem::take(&mut self.front).into_vec();
        for (w, word) in self.occupied.iter_mut().enumerate() {
            while *word != 0 {
                let slot = w * 64 + word.trailing_zeros() as usize;
                *word &= *word - 1;
                all.append(&mut self.buckets[slot]);
            }
        }
        self.in_buckets = 0;
        all.append(&mut std::mem::take(&mut self.overflow).into_vec());
        self.front = Heap::from(all);
    }
    #[inline]
    fn place(&mut self, e: Entry) {
        let b = e.time() >> BUCKET_SHIFT;
        if b <= self.cur {
            if self.run_mode {
                self.insert_run(e);
            } else {
                self.front.push(e);
            }
        } else if b < self.cur + BUCKETS as u64 {
            let slot = b as usize & (BUCKETS - 1);
            self.buckets[slot].push(e);
            self.occupied[slot / 64] |= 1 << (slot % 64);
            self.in_buckets += 1;
        } else {
            self.overflow.push(e);
        }
    }
    /// An event of the current bucket (or earlier) joins the run, in order: moved into place
    /// from the end, as it is usually among the latest. (A bucket is a run only while such
    /// events are fewer than the bucket's own.)
    #[inline(never)]
    fn insert_run(&mut self, e: Entry) {
        let mut i = self.run.len();
        self.run.push(e);
        while i > self.pos && self.run[i - 1].key() > e.key() {
            self.run[i] = self.run[i - 1];
            i -= 1;
        }
        self.run[i] = e;
    }
    /// A calendar's run and front are spent: makes the next non-empty bucket (or the
    /// overflow's first) current, as a run or a heap, or turns the calendar back into one
    /// heap. Returns false when no event is pending.
    #[cold]
    fn refill(&mut self) -> bool {
        if !self.calendar {
            return false;
        }
        self.run.clear();
        self.pos = 0;
        if self.in_buckets + self.overflow.len() < self.calendar_off {
            self.become_heap();
            return !self.front.is_empty();
        }
        // Events out of the calendar now (the front and run are spent): those handled since
        // the last refill, less the last bucket's, were scheduled into it while it was current.
        let out = self.next_seq - (self.in_buckets + self.overflow.len()) as u64;
        // Every event of the last bucket was handled before this refill. (A number reserved
        // and scheduled later counts as out from its reservation until then: an estimate,
        // which chooses the bucket's form only, never the order.)
        let late = out.saturating_sub(self.out_mark + self.bucket_len);
        self.late_sum = self.late_sum - self.late_sum / 16 + late;
        self.bucketed_sum = self.bucketed_sum - self.bucketed_sum / 16 + self.bucket_len;
        self.bucket_len = 0;
        if self.in_buckets > 0 {
            let next = self.next_occupied();
            self.set_cur(next);
            let slot = next as usize & (BUCKETS - 1);
            let as_heap = self.late_sum > self.bucketed_sum;
            // The spent run's or front's storage goes back to the bucket for reuse.
            let spare = if as_heap {
                std::mem::take(&mut self.front).into_vec()
            } else {
                std::mem::take(&mut self.run)
            };
            let mut bucket = std::mem::replace(&mut self.buckets[slot], spare);
            self.occupied[slot / 64] &= !(1 << (slot % 64));
            self.in_buckets -= bucket.len();
            self.bucket_len = bucket.len() as u64;
            self.run_mode = !as_heap;
            if as_heap {
                self.front = Heap::from(bucket);
            } else {
                // Keys are unique (sequence numbers), so an unstable sort gives the one order.
                bucket.sort_unstable_by_key(Entry::key);
                self.run = bucket;
            }
        } else if let Some(e) = self.overflow.peek() {
            self.set_cur(e.time() >> BUCKET_SHIFT);
        } else {
            return false;
        }
        self.out_mark = out;
        // The horizon moved: bring the overflow's events inside it into the calendar.
        while let Some(e) = self.overflow.peek() {
            if e.time() >> BUCKET_SHIFT >= self.cur + BUCKETS as u64 {
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
        self.pop_until(SimTime::MAX)
    }
    /// The next event if it is due no later than `until` (the event loop's one call per event).
    #[inline(always)]
    pub fn pop_until(&mut self, until: SimTime) -> Option<Event> {
        self.settle();
        // The front is never empty in one heap with events pending, and always empty while a
        // calendar's bucket is a run.
        if self.front.is_empty() {
            if let Some(next) = self.next_of_run()? {
                if next.time() > until {
                    return None;
                }
                self.pos += 1;
                self.now = next.time();
                return Some(Event {
                    time: next.time(),
                    kind: EventKind::decode(next.tag(), next.a, next.b),
                });
            }
        }
        let top = *self.front.peek()?;
        if top.time() > until {
            return None;
        }
        self.top_taken = true;
        self.now = top.time();
        Some(Event {
            time: top.time(),
            kind: EventKind::decode(top.tag(), top.a, top.b),
        })
    }
    /// With the front empty: `Some(Some(e))` if the next event is the run's `e`, `Some(None)`
    /// if it is the front's top (after a refill made a bucket the front, or turned the
    /// calendar into one heap), `None` if no event is pending.
    #[inline(always)]
    fn next_of_run(&mut self) -> Option<Option<Entry>> {
        loop {
            if let Some(&next) = self.run.get(self.pos) {
                return Some(Some(next));
            }
            if !self.front.is_empty() {
                return Some(None);
            }
            if !self.refill() {
                return None;
            }
        }
    }
    /// Many events are pending (the queue is a calendar).
    #[inline]
    pub fn is_large(&self) -> bool {
        self.calendar
    }
    /// Very few events are pending (the queue is one run).
    pub fn is_run(&self) -> bool {
        !self.calendar && self.run_mode
    }
    /// The kind of the next event if it is already known without moving the calendar (for
    /// prefetching what it will touch).
    #[inline]
    pub fn peek_kind(&self) -> Option<EventKind> {
        let next = if self.top_taken {
            // The next event, unless the one being handled schedules an earlier one, is the
            // earlier of the taken top's children.
            match self.front.as_slice() {
                [_, a, b, ..] => Some(if a.key() < b.key() { a } else { b }),
                [_, a] => Some(a),
                _ => None,
            }
        } else if self.front.is_empty() {
            // A calendar's run, if its bucket is one (the top is never taken then).
            self.run.get(self.pos)
        } else {
            self.front.peek()
        };
        next.map(|e| EventKind::decode(e.tag(), e.a, e.b))
    }
    /// The kind of the event `k` places after the next (`k` = 1: the one after the next),
    /// where it is known without moving the calendar: in a calendar's run only (for
    /// prefetching several events ahead).
    #[inline]
    pub fn peek_kind_after(&self, k: usize) -> Option<EventKind> {
        if self.top_taken || !self.front.is_empty() {
            return None;
        }
        self.run
            .get(self.pos + k)
            .map(|e| EventKind::decode(e.tag(), e.a, e.b))
    }
    pub fn peek_time(&mut self) -> Option<SimTime> {
        self.settle();
        if self.front.is_empty() {
            if let Some(next) = self.next_of_run()? {
                return Some(next.time());
            }
        }
        self.front.peek().map(|e| e.time())
    }
    pub fn len(&self) -> usize {
        self.front.len() - self.top_taken as usize
            + (self.run.len() - self.pos)
            + self.in_buckets
            + self.overflow.len()
    }
    /// Heap memory held (allocated capacity), bytes.
    pub fn heap_bytes(&self) -> usize {
        let entry = std::mem::size_of::<Entry>();
        (self.front.capacity() + self.run.capacity() + self.overflow.capacity()) * entry
            + self.buckets.capacity() * std::mem::size_of::<Vec<Entry>>()
            + self
                .buckets
                .iter()
                .map(|b| b.capacity() * entry)
                .sum::<usize>()
            + self.occupied.capacity() * 8
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
#[path = "engine_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "engine_prop.rs"]
mod prop;
