//! One direction of a full-duplex point-to-point link: a FIFO queue host (storage, the queue
//! discipline's verdicts, counters), a transmitter serialising one packet at a time, and a
//! propagation pipe.
//!
//! Because the queue is FIFO and never drops a packet once it has been admitted, a packet's
//! transmission start and end are known when it is admitted:
//! `start = max(now, end of the previous packet)`, `end = start + size / rate`. So the link
//! keeps every admitted packet in one time-ordered line (waiting, being serialised, or
//! propagating) and needs one pending event only: the arrival of the line's head at the far
//! node. "Who is waiting" is derived lazily from the times by [`LinkDir::advance`], called
//! before anything looks at the queue. This halves the events per packet-hop compared with
//! an explicit end-of-transmission event, with identical semantics: the queue a new arrival
//! sees is exactly the packets whose transmission has not started, and an idle period starts
//! at the end of the last transmission (ns-2's `REDQueue::deque` on an empty queue).
//!
//! A discipline that holds its packets and decides at dequeue ([`Qdisc`]: a multi queue's
//! scheduler, CoDel, FQ-CoDel, PIE) cannot fix departure times at admission: such a link
//! direction asks it for a packet whenever the transmitter is free, driven by an explicit
//! end-of-transmission event, and its packets enter the line when their transmission starts.

use crate::aqm::{AnyAqm, Aqm, DropReason, Dropped, Qdisc, QueueView, Verdict};
use crate::net::busy_clock::BusyClock;
use crate::net::jitter::Jitter;
use crate::net::ring::Ring;
use crate::packet::{PacketArena, PacketId, MAX_PACKET_BYTES};
use crate::rng::SimRng;
use crate::units::{Limit, SimTime, NS_PER_SEC};

/// `repr(C)`: the counters every packet-hop updates first (two cache lines), then those of
/// drops and marks.
#[derive(Debug, Clone, Default)]
#[repr(C)]
pub struct LinkStats {
    pub arrivals: u64,
    pub departures: u64,
    pub departed_bytes: u64,
    /// Bytes whose transmission ended inside the measurement window.
    pub window_bytes: u64,
    /// Arrivals and drops per drop precedence (AFx1, AFx2, AFx3/best effort).
    pub arrivals_by_prec: [u64; 3],
    /// Arrivals and drops per drop precedence of packets arriving inside the window.
    pub window_arrivals_by_prec: [u64; 3],
    /// Packets admitted inside the window and the sum of their waiting times before
    /// transmission starts (ns): fixed at admission on the FIFO line; counted when their
    /// transmission starts under a [`Qdisc`] (packets it drops at dequeue are not counted).
    pub window_admitted: u64,
    pub window_wait_ns: u64,
    pub drops: [u64; 4],
    pub drops_by_prec: [u64; 3],
    pub marks: u64,
    pub window_drops_by_prec: [u64; 3],
}

impl LinkStats {
    pub fn total_drops(&self) -> u64 {
        self.drops.iter().sum()
    }
}

/// Entries a link direction's line holds from the start, and the least it is shrunk to
/// ([`LinkDir::shrink_line`]): a line's ring doubles when it fills and, shrunk only to a
/// floor it did not start at, the state would creep up towards that floor over a long run
/// (every line that ever held more than half of it). 8 entries, 192 bytes: most directions
/// of a many-flow dumbbell carry one flow's packets and hold one or two (at 10,000 flows,
/// 39,900 of 40,002 lines held 0.7 entries on average after the warm-up); at 32 entries their
/// empty slots were 2.3 kB of the 10 kB a flow took.
pub const LINE_FLOOR: usize = 8;

/// How often (simulated time, or the emulation daemon's clock) every line gives back the
/// capacity it no longer needs ([`LinkDir::shrink_line`]).
pub const LINE_SHRINK_EVERY_NS: SimTime = NS_PER_SEC;

/// An admitted packet with its transmission times, in 24 bytes: the packet's id in 32 bits
/// (the arena never holds more: [`PacketArena::alloc`]) and its size in 16 (no packet is
/// larger than an IP packet: [`MAX_PACKET_BYTES`]). At 32 bytes a line's ring held two
/// entries a cache line; at 10,000 flows writing a new entry missed the last-level cache 0.34
/// times a hop (6 s, cachegrind).
#[derive(Debug, Clone, Copy, Default)]
pub struct InLine {
    pub start: SimTime,
    pub done: SimTime,
    id: u32,
    size: u16,
    prec: u8,
}

impl InLine {
    #[inline(always)]
    pub fn new(id: PacketId, size: u32, prec: u8, start: SimTime, done: SimTime) -> Self {
        debug_assert!(id <= u32::MAX as usize && size <= MAX_PACKET_BYTES);
        InLine {
            start,
            done,
            id: id as u32,
            size: size as u16,
            prec,
        }
    }
    #[inline(always)]
    pub fn id(&self) -> PacketId {
        self.id as PacketId
    }
    /// Size on the wire, bytes.
    #[inline(always)]
    pub fn size(&self) -> u32 {
        self.size as u32
    }
    /// Drop precedence at this queue.
    #[inline(always)]
    pub fn prec(&self) -> u8 {
        self.prec
    }
}

/// `repr(C)`, in this order: what every packet-hop reads and writes (the line and its
/// cursors; the transmitter's times, the window and the flags; the transmitter's clock and
/// the waiting counts; the buffer limit and the counters every arrival and departure
/// updates: the first four cache lines of 64 bytes, the struct being aligned to 64), then
/// the rest of the counters, the queue discipline's state (not touched by a hop through a
/// tail-drop queue) and what only set-up and the results read. Left to the compiler the hot
/// fields were spread over the whole 768 bytes; in the previous order a hop through a
/// tail-drop queue touched seven lines, and until the fourteenth round five (304 bytes,
/// starting 16 bytes into a line as the allocator placed the directions).
#[repr(C, align(64))]
pub struct LinkDir {
    /// Every admitted packet not yet arrived at the far node, in order.
    pub line: Ring<InLine>,
    /// `line[..started]` have started transmission (as of the last `advance`); 32 bits, as
    /// the ring's length.
    started: u32,
    /// `line[..departed]` have finished transmission and are propagating.
    departed: u32,
    /// Bytes waiting (not started).
    pub q_bytes: u64,
    /// End of the last admitted packet's transmission.
    pub last_done: SimTime,
    pub bps: u64,
    pub delay: SimTime,
    /// The measurement window `[start, start + len)`, kept as its start and length so that
    /// [`Self::in_window`] is one subtraction and one comparison.
    win_start: SimTime,
    win_len: SimTime,
    idle_notified: bool,
    /// The discipline watches dequeues ([`crate::aqm::Aqm::wants_dequeue`]).
    dequeue_hook: bool,
    /// The discipline watches idle periods ([`crate::aqm::Aqm::wants_idle`]).
    idle_hook: bool,
    /// The discipline judges arrivals ([`crate::aqm::Aqm::wants_enqueue`]).
    enqueue_hook: bool,
    /// An end-of-transmission event is pending (`held` links only).
    pub tx_pending: bool,
    /// [`Self::lazy`], kept up to date by [`Self::set_held`] and [`Self::set_capture`]
    /// (through which `held` and `capture` are set).
    lazy: bool,
    /// The forwarding plane's marks, kept here to be read with the rest of a hop: traffic
    /// conditioners guard this direction's entrance; the queue of the opposite direction
    /// watches the packets reaching this direction's far end ([`crate::aqm::Aqm::on_reverse`]).
    pub guarded: bool,
    pub watched: bool,
    busy: BusyClock,
    /// Packets waiting per drop precedence (fewer than the arena's 2^32 packets).
    waiting_by_prec: [u32; 3],
    /// `jitter` is set: read by every hop, so kept here (in the padding before `limit`)
    /// rather than with the noise's state at the end.
    jittered: bool,
    pub limit: Limit,
    pub stats: LinkStats,
    pub aqm: AnyAqm,
    pub rng: SimRng,
    capture: Option<usize>,
    /// A discipline holding its packets instead of the single FIFO ([`Qdisc`]); packets then
    /// enter `line` when their transmission starts, and an end-of-transmission event asks it
    /// for the next.
    held: Option<Box<dyn Qdisc>>,
    pub link: usize,
    pub from: usize,
    pub to: usize,
    /// Packets the [`Qdisc`] dropped, accounted for and waiting for the caller to free them
    /// ([`Self::take_dropped`]).
    dropped: Dropped,
    /// Timing noise ([`Self::set_jitter`]; `None`: exact timing, no draw).
    jitter: Option<Jitter>,
}

/// What happened to an arriving packet.
pub enum Admit {
    /// Admitted; `schedule_arrival` is the far-end arrival time to schedule when the line was
    /// empty (otherwise an arrival event is already pending for the head).
    Queued {
        schedule_arrival: Option<SimTime>,
    },
    Dropped(DropReason),
}

impl LinkDir {
    /// Starts loading the four cache lines a hop reads of the direction at `p` (no effect on
    /// results; nothing is read).
    #[inline(always)]
    pub fn prefetch_hot(p: *const LinkDir) {
        let b = p.cast::<u8>();
        for line in 0..4 {
            crate::prefetch::read(b.wrapping_add(64 * line));
        }
    }
    /// Starts loading the line's slots of the head packet and the next (read on arrival).
    #[inline(always)]
    pub fn prefetch_line_front(&self) {
        self.line.prefetch_front();
    }
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        link: usize,
        from: usize,
        to: usize,
        bps: u64,
        delay: SimTime,
        limit: Limit,
        aqm: AnyAqm,
        rng: SimRng,
        win: (SimTime, SimTime),
    ) -> Self {
        let dequeue_hook = aqm.wants_dequeue();
        LinkDir {
            dequeue_hook,
            idle_hook: aqm.wants_idle(),
            enqueue_hook: aqm.wants_enqueue(),
            link,
            from,
            to,
            bps,
            delay,
            line: Ring::with_capacity(LINE_FLOOR, InLine::default()),
            started: 0,
            departed: 0,
            q_bytes: 0,
            waiting_by_prec: [0; 3],
            limit,
            aqm,
            rng,
            busy: BusyClock::default(),
            last_done: 0,
            // ns-2 starts every RED queue idle at time 0 (`AvgQueue::default`).
            idle_notified: true,
            win_start: win.0,
            win_len: win.1.saturating_sub(win.0),
            stats: LinkStats::default(),
            capture: None,
            held: None,
            tx_pending: false,
            lazy: !dequeue_hook,
            guarded: false,
            watched: false,
            dropped: Vec::new(),
            jitter: None,
            jittered: false,
        }
    }

    /// Gives this direction a packet-holding discipline (or none).
    pub fn set_held(&mut self, held: Option<Box<dyn Qdisc>>) {
        self.held = held;
        self.lazy = !self.dequeue_hook && self.capture.is_none() && self.held.is_none();
    }

    /// Timing noise of up to `jitter` ns a packet, drawn from `rng` ([`Jitter`]); at 0 the
    /// direction keeps exact timing and draws nothing.
    pub fn set_jitter(&mut self, jitter: SimTime, rng: SimRng) {
        self.jitter = Jitter::new(jitter, rng);
        self.jittered = self.jitter.is_some();
    }

    /// The far-end arrival time of a packet whose transmission ends at `done`.
    #[inline(always)]
    fn arrival_of(&mut self, done: SimTime) -> SimTime {
        let exact = done + self.delay;
        if !self.jittered {
            return exact;
        }
        match &mut self.jitter {
            None => exact,
            Some(j) => j.arrival(exact),
        }
    }

    /// The packet-holding discipline, if any ([`Self::set_held`]).
    pub fn held(&self) -> Option<&dyn Qdisc> {
        self.held.as_deref()
    }

    pub fn held_mut(&mut self) -> Option<&mut (dyn Qdisc + 'static)> {
        self.held.as_deref_mut()
    }

    /// The capture this direction's packets go to, if any ([`Self::set_capture`]).
    pub fn capture(&self) -> Option<usize> {
        self.capture
    }

    /// Captures this direction's packets into capture `c`.
    pub fn set_capture(&mut self, c: usize) {
        self.capture = Some(c);
        self.lazy = false;
    }

    /// The start cursor as a position in the line.
    #[inline(always)]
    fn started(&self) -> usize {
        self.started as usize
    }

    /// The departure cursor as a position in the line.
    #[inline(always)]
    fn departed(&self) -> usize {
        self.departed as usize
    }

    /// `now` is inside the measurement window.
    #[inline(always)]
    fn in_window(&self, now: SimTime) -> bool {
        // Before the start, the difference wraps above any length.
        now.wrapping_sub(self.win_start) < self.win_len
    }

    /// Packets waiting (not yet being transmitted).
    #[inline]
    pub fn waiting(&self) -> usize {
        match &self.held {
            Some(m) => m.waiting(),
            None => self.line.len() - self.started(),
        }
    }

    /// Bytes waiting.
    pub fn waiting_bytes(&self) -> u64 {
        match &self.held {
            Some(m) => m.waiting_bytes(),
            None => self.q_bytes,
        }
    }

    /// `held` links: the discipline judges an arriving packet (and may drop packets it holds:
    /// see [`Self::take_dropped`]).
    pub fn enqueue_held(&mut self, now: SimTime, id: PacketId, arena: &mut PacketArena) -> Admit {
        self.stats.arrivals += 1;
        let pkt = arena.get_mut(id);
        pkt.prec = crate::ds::drop_precedence(pkt.dscp);
        pkt.enqueued_at = now;
        let prec = pkt.prec;
        let m = self
            .held
            .as_mut()
            .expect("a link with a packet-holding queue");
        let from = self.dropped.len();
        let v = m.enqueue(now, id, arena, &mut self.dropped);
        self.account_dropped(from, arena);
        let in_win = self.in_window(now);
        match self.account(in_win, prec, v) {
            Some(r) => Admit::Dropped(r),
            None => Admit::Queued {
                schedule_arrival: None,
            },
        }
    }

    /// Counts the drops the discipline reported from `dropped[from..]` (by the precedence of
    /// each packet, in the window when it arrived in the window).
    fn account_dropped(&mut self, from: usize, arena: &PacketArena) {
        for k in from..self.dropped.len() {
            let (id, r) = self.dropped[k];
            let p = arena.get(id);
            let prec = p.prec as usize;
            self.stats.drops[r as usize] += 1;
            self.stats.drops_by_prec[prec] += 1;
            if self.in_window(p.enqueued_at) {
                self.stats.window_drops_by_prec[prec] += 1;
            }
        }
    }

    /// The packets the [`Qdisc`] dropped since the last call (already counted here): the
    /// caller frees them and tells their flows.
    pub fn take_dropped(&mut self) -> Option<Dropped> {
        if self.dropped.is_empty() {
            None
        } else {
            Some(std::mem::take(&mut self.dropped))
        }
    }

    /// Gives back the buffer [`Self::take_dropped`] took, emptied, to reuse its allocation.
    pub fn restore_dropped(&mut self, mut buf: Dropped) {
        if self.dropped.is_empty() {
            buf.clear();
            self.dropped = buf;
        }
    }

    /// The host's bookkeeping of one arrival of drop precedence `prec` and the verdict its
    /// queue discipline gave: arrivals, marks and drops, by precedence, over the run and in
    /// the measurement window. Returns why the packet is dropped, if it is.
    fn account(&mut self, in_win: bool, prec: u8, v: Verdict) -> Option<DropReason> {
        let prec = prec as usize;
        self.stats.arrivals_by_prec[prec] += 1;
        if in_win {
            self.stats.window_arrivals_by_prec[prec] += 1;
        }
        let reason = match v {
            Verdict::Enqueue => None,
            Verdict::Mark => {
                self.stats.marks += 1;
                None
            }
            Verdict::EarlyDrop => Some(DropReason::Early),
            Verdict::ForcedDrop => Some(DropReason::Forced),
            Verdict::Overflow => Some(DropReason::Overflow),
        };
        if let Some(r) = reason {
            self.stats.drops[r as usize] += 1;
            self.stats.drops_by_prec[prec] += 1;
            if in_win {
                self.stats.window_drops_by_prec[prec] += 1;
            }
        }
        reason
    }

    /// `held` links: if the transmitter is free, starts the packet the discipline hands over.
    /// Returns the end of its transmission, and its far-end arrival time and id when an arrival
    /// event must be scheduled (the line was empty). Packets dropped at dequeue are left for
    /// [`Self::take_dropped`].
    pub fn start_next(
        &mut self,
        now: SimTime,
        arena: &mut PacketArena,
    ) -> Option<(SimTime, Option<(SimTime, PacketId)>)> {
        if self.tx_pending || self.last_done > now {
            return None;
        }
        let m = self
            .held
            .as_mut()
            .expect("a link with a packet-holding queue");
        let from = self.dropped.len();
        let next = m.dequeue(now, arena, &mut self.dropped);
        self.account_dropped(from, arena);
        let d = next?;
        if d.marked {
            self.stats.marks += 1;
        }
        let p = arena.get(d.id);
        if self.in_window(p.enqueued_at) {
            self.stats.window_admitted += 1;
            self.stats.window_wait_ns += now - p.enqueued_at;
        }
        let (id, size, prec) = (d.id, d.size, p.prec);
        // At `last_done == now` the period goes on. (It used to restart there too when no
        // bits had been added since the last restart; `last_done` is then the period's start,
        // where a restart at `now` leaves the clock.)
        if self.last_done < now {
            self.busy.restart(now);
        }
        let done = self.busy.add(size, self.bps);
        self.last_done = done;
        let was_empty = self.line.is_empty();
        self.line.push_back(InLine::new(id, size, prec, now, done));
        self.started += 1;
        self.tx_pending = true;
        let arrival = was_empty.then(|| self.arrival_of(done));
        Some((done, arrival.map(|at| (at, id))))
    }

    /// Moves the link to `now`: the start cursor past the packets whose transmission has
    /// started, and the departure counters past those whose transmission has ended. Returns
    /// the range of `line` that ended since the last call (for the caller's capture).
    #[inline]
    pub fn advance(&mut self, now: SimTime) -> std::ops::Range<usize> {
        self.advance_starts(now);
        let from = self.departed();
        while self.departed < self.started {
            let e = self.line.at(self.departed());
            if e.done > now {
                break;
            }
            self.departed += 1;
            self.count_departure(&e);
        }
        from..self.departed()
    }

    /// Gives back the capacity of the line that it no longer needs: it halves while a quarter
    /// or less is in use, down to [`LINE_FLOOR`]. A line's ring doubles when it fills; without
    /// this it would keep the capacity of its longest queue ever (at 10,000 flows the state
    /// crept up long after the warm-up: docs/performance.md, "After the warm-up").
    pub fn shrink_line(&mut self) {
        self.line.shrink(LINE_FLOOR);
    }

    /// Moves the start cursor to `now` only: what a new arrival's queue discipline sees (the
    /// packets waiting). The departures' counters may lag: they are sums, brought up to date
    /// by [`Self::advance`] before anything reads them, and [`Self::arrive`] counts the head
    /// itself if they lag behind it. Only for a direction that is [`Self::lazy`].
    #[inline(always)]
    pub fn advance_starts(&mut self, now: SimTime) {
        // Usually nothing started since the last look (the check inlined, the loop not).
        if self.started() < self.line.len() && self.line.at(self.started()).start <= now {
            self.advance_starts_from(now);
        }
    }

    #[inline(never)]
    fn advance_starts_from(&mut self, now: SimTime) {
        let len = self.line.len();
        while self.started() < len {
            let e = self.line.at(self.started());
            if e.start > now {
                break;
            }
            let (start, size, prec) = (e.start, e.size(), e.prec());
            self.count_start(size, prec);
            self.started += 1;
            if self.dequeue_hook {
                let view = self.view();
                self.aqm.on_dequeue(start, prec, view);
            }
        }
    }

    /// A packet's transmission started: it no longer waits.
    #[inline(always)]
    fn count_start(&mut self, size: u32, prec: u8) {
        self.q_bytes -= size as u64;
        self.waiting_by_prec[prec as usize] -= 1;
    }

    /// A packet's transmission ended: one packet-hop.
    #[inline(always)]
    fn count_departure(&mut self, e: &InLine) {
        self.stats.departures += 1;
        self.stats.departed_bytes += e.size() as u64;
        if self.in_window(e.done) {
            self.stats.window_bytes += e.size() as u64;
        }
    }

    /// Nothing but sums depends on when this direction's cursors are moved: no discipline
    /// watching dequeues (its calls must come in time order), no capture (its records are
    /// written as transmissions end) and no packet-holding discipline. Such a direction's
    /// arrivals skip [`Self::advance`] ([`Self::arrive`] keeps the sums right).
    #[inline(always)]
    pub fn lazy(&self) -> bool {
        debug_assert_eq!(
            self.lazy,
            !self.dequeue_hook && self.capture.is_none() && self.held.is_none()
        );
        self.lazy
    }

    pub fn view(&self) -> QueueView {
        self.view_of(self.waiting())
    }

    /// The queue's view with `len_pkts` packets waiting.
    #[inline(always)]
    fn view_of(&self, len_pkts: usize) -> QueueView {
        QueueView {
            len_pkts: len_pkts as u64,
            len_bytes: self.q_bytes,
            limit: self.limit,
            len_by_prec: self.waiting_by_prec.map(u64::from),
        }
    }

    /// [`Self::view`] of the FIFO line (no packet-holding queue), from the hop's own cache
    /// lines: asking [`Self::waiting`] would read `held`, far behind them, and cost a hop
    /// through a tail-drop queue a sixth line (at 10,000 flows, 0.33 first-level misses a hop
    /// on that read alone, cachegrind).
    #[inline(always)]
    fn line_view(&self) -> QueueView {
        self.view_of(self.line.len() - self.started())
    }

    /// A packet arrives at the FIFO line of a direction without a packet-holding queue (those
    /// take [`Self::enqueue_held`]), after [`Self::advance`] to `now`. Dropped packets stay in
    /// the arena: the caller frees them.
    #[inline]
    pub fn enqueue(&mut self, now: SimTime, id: PacketId, arena: &mut PacketArena) -> Admit {
        debug_assert!(
            self.held.is_none(),
            "a held queue's arrival on the FIFO line"
        );
        self.stats.arrivals += 1;
        if self.idle_hook
            && self.started() == self.line.len()
            && self.last_done <= now
            && !self.idle_notified
        {
            // The transmitter found nothing to send when it finished at `last_done`.
            self.aqm.on_idle(self.last_done);
            self.idle_notified = true;
        }
        let view = self.line_view();
        let pkt = arena.get_mut(id);
        pkt.prec = crate::ds::drop_precedence(pkt.dscp);
        let prec = pkt.prec;
        let in_win = self.in_window(now);
        let verdict = if self.enqueue_hook {
            crate::aqm::admit(&mut self.aqm, now, pkt, view, &mut self.rng)
        } else {
            crate::aqm::admit_by_buffer(pkt, view)
        };
        if let Some(r) = self.account(in_win, prec, verdict) {
            return Admit::Dropped(r);
        }
        if verdict == Verdict::Mark {
            pkt.ecn = 3;
        }
        pkt.enqueued_at = now;
        let size = pkt.size;
        // Transmission times come from the cumulative bits of the busy period, so rounding
        // never accumulates: each end is within 1 ns of the exact value.
        let start = if self.last_done <= now {
            self.busy.restart(now);
            now
        } else {
            self.last_done
        };
        let done = self.busy.add(size, self.bps);
        self.last_done = done;
        self.idle_notified = false;
        if in_win {
            self.stats.window_admitted += 1;
            self.stats.window_wait_ns += start - now;
        }
        let was_empty = self.line.is_empty();
        self.line
            .push_back(InLine::new(id, size, prec, start, done));
        if start <= now {
            // Starts at once: never counted as waiting.
            self.started += 1;
            if self.dequeue_hook {
                let view = self.line_view();
                self.aqm.on_dequeue(now, prec, view);
            }
        } else {
            self.q_bytes += size as u64;
            self.waiting_by_prec[prec as usize] += 1;
        }
        Admit::Queued {
            schedule_arrival: was_empty.then(|| self.arrival_of(done)),
        }
    }

    /// The head reaches the far node: removes it and returns it, with the next head's arrival
    /// time and id if any. After [`Self::advance`] to `now`, or on a [`Self::lazy`] direction
    /// whose cursors lag: the head's start and end (both at or before `now`, since it
    /// arrives) are then counted here.
    #[inline]
    pub fn arrive(&mut self) -> (PacketId, Option<(SimTime, PacketId)>) {
        let head = self
            .line
            .pop_front()
            .expect("an arrival is scheduled only for a packet");
        if self.started == 0 {
            debug_assert!(self.lazy(), "only a lazy direction's cursors lag");
            self.count_start(head.size(), head.prec());
        } else {
            self.started -= 1;
        }
        if self.departed == 0 {
            debug_assert!(self.lazy(), "only a lazy direction's cursors lag");
            self.count_departure(&head);
        } else {
            self.departed -= 1;
        }
        let next = self.line.front().map(|h| (h.done, h.id()));
        (
            head.id(),
            next.map(|(done, id)| (self.arrival_of(done), id)),
        )
    }

    /// Packets admitted and not yet transmitted completely (waiting or being serialised).
    pub fn queued(&self) -> u64 {
        let waiting_elsewhere = self.held.as_ref().map_or(0, |m| m.waiting());
        (self.line.len() - self.departed() + waiting_elsewhere) as u64
    }

    /// Packets propagating.
    pub fn in_pipe(&self) -> u64 {
        self.departed as u64
    }
}

#[cfg(test)]
#[path = "link_tests.rs"]
mod tests;
