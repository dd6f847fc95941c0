//! One direction of a full-duplex point-to-point link: a queue host (FIFO storage, the queue
//! discipline's verdicts, counters), a transmitter serialising one packet at a time, and a
//! propagation pipe. The pipe is FIFO because the delay is constant, so the link keeps at most
//! two pending events: the end of the current transmission and the next arrival.

use std::collections::VecDeque;

use crate::aqm::{AnyAqm, Aqm, DropReason, QueueView, Verdict};
use crate::packet::{PacketArena, PacketId};
use crate::rng::SimRng;
use crate::units::{ceil_div, Limit, SimTime, NS_PER_SEC};

#[derive(Debug, Clone, Default)]
pub struct LinkStats {
    pub arrivals: u64,
    pub departures: u64,
    pub departed_bytes: u64,
    pub drops: [u64; 3],
    pub marks: u64,
    /// Bytes whose transmission ended inside the measurement window.
    pub window_bytes: u64,
}

impl LinkStats {
    pub fn total_drops(&self) -> u64 {
        self.drops.iter().sum()
    }
}

pub struct LinkDir {
    pub link: usize,
    pub from: usize,
    pub to: usize,
    pub bps: u64,
    pub delay: SimTime,
    pub fifo: VecDeque<PacketId>,
    pub q_bytes: u64,
    pub limit: Limit,
    pub aqm: AnyAqm,
    pub rng: SimRng,
    /// Packet being serialised.
    pub tx: Option<PacketId>,
    busy_start: SimTime,
    busy_bits: u128,
    last_done: SimTime,
    /// Packets propagating: (arrival time at the far node, packet).
    pub pipe: VecDeque<(SimTime, PacketId)>,
    pub stats: LinkStats,
    pub capture: Option<usize>,
}

/// What happened to an arriving packet.
pub enum Admit {
    /// Queued; `start_tx` says whether the transmitter was idle and should start.
    Queued {
        start_tx: bool,
    },
    Dropped(DropReason),
}

impl LinkDir {
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
    ) -> Self {
        LinkDir {
            link,
            from,
            to,
            bps,
            delay,
            fifo: VecDeque::new(),
            q_bytes: 0,
            limit,
            aqm,
            rng,
            tx: None,
            busy_start: 0,
            busy_bits: 0,
            last_done: 0,
            pipe: VecDeque::new(),
            stats: LinkStats::default(),
            capture: None,
        }
    }

    pub fn view(&self) -> QueueView {
        QueueView {
            len_pkts: self.fifo.len() as u64,
            len_bytes: self.q_bytes,
            limit: self.limit,
        }
    }

    /// A packet arrives at the queue. Dropped packets stay in the arena: the caller frees them.
    #[inline]
    pub fn enqueue(&mut self, now: SimTime, id: PacketId, arena: &mut PacketArena) -> Admit {
        self.stats.arrivals += 1;
        let view = self.view();
        let pkt = arena.get(id);
        let verdict = self.aqm.on_enqueue(now, pkt, view, &mut self.rng);
        let reason = match verdict {
            Verdict::Enqueue => None,
            Verdict::Mark => {
                self.stats.marks += 1;
                arena.get_mut(id).ecn = 3;
                None
            }
            Verdict::EarlyDrop => Some(DropReason::Early),
            Verdict::ForcedDrop => Some(DropReason::Forced),
            Verdict::Overflow => Some(DropReason::Overflow),
        };
        if let Some(r) = reason {
            self.stats.drops[r as usize] += 1;
            return Admit::Dropped(r);
        }
        let p = arena.get_mut(id);
        p.enqueued_at = now;
        self.q_bytes += p.size as u64;
        self.fifo.push_back(id);
        Admit::Queued {
            start_tx: self.tx.is_none(),
        }
    }

    /// Starts serialising the head packet; returns when it will be fully sent, or `None` (and
    /// tells the queue discipline that an idle period starts) when the queue is empty.
    #[inline]
    pub fn start_tx(&mut self, now: SimTime, arena: &PacketArena) -> Option<SimTime> {
        debug_assert!(self.tx.is_none());
        let Some(id) = self.fifo.pop_front() else {
            self.aqm.on_idle(now);
            return None;
        };
        let size = arena.get(id).size as u64;
        self.q_bytes -= size;
        self.tx = Some(id);
        // Departure times come from the cumulative bits of the busy period, so rounding never
        // accumulates: each departure is within 1 ns of the exact value.
        if now != self.last_done || self.busy_bits == 0 {
            self.busy_start = now;
            self.busy_bits = 0;
        }
        self.busy_bits += size as u128 * 8;
        let done = self.busy_start
            + ceil_div(self.busy_bits * NS_PER_SEC as u128, self.bps as u128) as u64;
        self.last_done = done;
        Some(done)
    }

    /// The transmission ended: the packet enters the propagation pipe. Returns the packet and
    /// whether the pipe was empty (so the caller schedules its arrival event).
    #[inline]
    pub fn finish_tx(
        &mut self,
        now: SimTime,
        arena: &PacketArena,
        in_window: bool,
    ) -> (PacketId, bool) {
        let id = self.tx.take().expect("a transmission in progress");
        let size = arena.get(id).size as u64;
        self.stats.departures += 1;
        self.stats.departed_bytes += size;
        if in_window {
            self.stats.window_bytes += size;
        }
        let was_empty = self.pipe.is_empty();
        self.pipe.push_back((now + self.delay, id));
        (id, was_empty)
    }

    /// Packets held: queued, being serialised, or propagating.
    pub fn held(&self) -> u64 {
        self.fifo.len() as u64 + u64::from(self.tx.is_some()) + self.pipe.len() as u64
    }
}
