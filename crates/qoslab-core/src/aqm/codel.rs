//! CoDel, "Controlled Delay" (RFC 8289; Nichols & Jacobson, ACM Queue 2012).
//!
//! CoDel judges packets at dequeue by their sojourn time, the time they spent in the queue.
//! While the sojourn time has stayed at or above `target` for a whole `interval` (and more
//! than one MTU waits), it enters the dropping state and drops the packet it dequeues; it then
//! drops again at intervals shrinking as `interval / √count` (the control law), until a packet
//! leaves below target. Re-entering the dropping state soon after leaving it resumes from the
//! previous drop rate (RFC 8289 §5.5, `count - lastcount`). With `ecn`, an ECN-capable packet
//! is marked Congestion Experienced instead of dropped (RFC 8289 §5.7) and the next drop time
//! moves on as for a drop.
//!
//! The state machine ([`CodelState`]) runs on any FIFO of [`Held`] packets, so FQ-CoDel
//! (`fq_codel.rs`) runs one per flow queue; [`Codel`] is the single-queue discipline.

use std::collections::VecDeque;

use super::registry::{HeldDiscipline, Ns2Export, QdiscEnv, QueueDiscipline};
use super::{Dequeued, DropReason, Dropped, Gauge, Qdisc, QueueSample, Verdict};
use crate::packet::{PacketArena, PacketId};
use crate::params::typed::{Decl, Duration};
use crate::params::{key_error, KeyError, Param, ParamKind, Table, LIMIT};
use crate::units::{Limit, SimTime};

/// CoDel's `target`: the acceptable standing queueing delay.
pub const TARGET: Decl<Duration> = Decl::new(
    "target",
    ParamKind::Duration,
    "5ms",
    "Acceptable standing queue delay (RFC 8289 TARGET).",
)
.positive();
/// CoDel's `interval`: the window over which the sojourn time must stay above target.
pub const INTERVAL: Decl<Duration> = Decl::new(
    "interval",
    ParamKind::Duration,
    "100ms",
    "Sliding window of the minimum sojourn time, on the order of a worst-case RTT \
          (RFC 8289 INTERVAL); also the control law's base.",
);
/// CoDel's `ecn`.
pub const CODEL_ECN: Decl<bool> = Decl::new(
    "ecn",
    ParamKind::Bool,
    "false",
    "Mark ECN-capable packets Congestion Experienced instead of dropping them \
          (RFC 8289 §5.7); packets that are not ECN-capable are still dropped.",
);

/// CoDel's two times, in ns, as read and validated from a table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CodelParams {
    pub target: SimTime,
    pub interval: SimTime,
    pub ecn: bool,
}

impl CodelParams {
    /// Reads `target`, `interval` and `ecn` with RFC 8289's defaults (5 ms, 100 ms).
    pub fn read(t: &Table) -> Result<CodelParams, KeyError> {
        let p = CodelParams {
            target: t.get(&TARGET)?,
            interval: t.get(&INTERVAL)?,
            ecn: t.get(&CODEL_ECN)?,
        };
        if p.interval < p.target {
            return Err(key_error(
                t.key("interval"),
                format!(
                    "interval ({} ms) must be at least target ({} ms)",
                    p.interval as f64 / 1e6,
                    p.target as f64 / 1e6
                ),
            ));
        }
        Ok(p)
    }
}

/// A held packet: its id, size and when it entered the queue.
#[derive(Debug, Clone, Copy)]
pub struct Held {
    pub id: PacketId,
    pub size: u32,
    pub enqueued_at: SimTime,
}

/// A FIFO of held packets and its byte count.
#[derive(Debug, Clone, Default)]
pub struct Fifo {
    pub packets: VecDeque<Held>,
    pub bytes: u64,
}

impl Fifo {
    pub fn push(&mut self, h: Held) {
        self.bytes += h.size as u64;
        self.packets.push_back(h);
    }

    pub fn pop(&mut self) -> Option<Held> {
        let h = self.packets.pop_front()?;
        self.bytes -= h.size as u64;
        Some(h)
    }

    pub fn len(&self) -> usize {
        self.packets.len()
    }

    pub fn is_empty(&self) -> bool {
        self.packets.is_empty()
    }

    /// Its state for the time series (no average).
    pub fn sample(&self) -> QueueSample {
        QueueSample {
            len_pkts: self.packets.len() as u64,
            len_bytes: self.bytes,
            average: f64::NAN,
            averages: [f64::NAN; 3],
        }
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.packets.capacity() * std::mem::size_of::<Held>()
    }
}

/// CoDel's per-queue state (RFC 8289 §5's variables).
#[derive(Debug, Clone, Default)]
pub struct CodelState {
    /// When the sojourn time first went above target in the current episode (0: it is not).
    first_above_time: SimTime,
    /// When the next drop is due in the dropping state.
    drop_next: SimTime,
    /// Drops (and marks) since entering the dropping state.
    pub count: u32,
    lastcount: u32,
    pub dropping: bool,
}

/// The control law: the next drop time, `t + interval / √count`.
pub fn control_law(t: SimTime, interval: SimTime, count: u32) -> SimTime {
    t + (interval as f64 / (count.max(1) as f64).sqrt()) as SimTime
}

/// What CoDel is run with: its parameters and the largest packet its queue has seen (a queue
/// holding at most that many bytes is never "above target", RFC 8289 `maxpacket`; Linux uses
/// the MTU).
#[derive(Debug, Clone, Copy)]
pub struct CodelRun<'a> {
    pub params: &'a CodelParams,
    pub maxpacket: u32,
}

impl CodelState {
    /// RFC 8289 `dodequeue`: the head packet and whether it may be dropped.
    fn dodequeue(&mut self, now: SimTime, q: &mut Fifo, r: CodelRun) -> Option<(Held, bool)> {
        let p = r.params;
        let Some(h) = q.pop() else {
            self.first_above_time = 0;
            return None;
        };
        let sojourn = now - h.enqueued_at;
        let mut ok_to_drop = false;
        if sojourn < p.target || q.bytes <= r.maxpacket as u64 {
            // Below target, or too little left to form a standing queue.
            self.first_above_time = 0;
        } else if self.first_above_time == 0 {
            self.first_above_time = now + p.interval;
        } else if now >= self.first_above_time {
            ok_to_drop = true;
        }
        Some((h, ok_to_drop))
    }

    /// Whether the packet is marked instead of dropped (ECN-capable, `ecn` on); marks it.
    fn try_mark(h: &Held, p: &CodelParams, arena: &mut PacketArena) -> bool {
        if !p.ecn {
            return false;
        }
        let pkt = arena.get_mut(h.id);
        if pkt.ecn == 0 {
            return false;
        }
        pkt.ecn = 3;
        true
    }

    /// RFC 8289 `dequeue`: the packet to send, if any; drops go to `dropped` (reason
    /// [`DropReason::Early`]). Returns the packet and whether it was marked.
    pub fn dequeue(
        &mut self,
        now: SimTime,
        q: &mut Fifo,
        r: CodelRun,
        arena: &mut PacketArena,
        dropped: &mut Dropped,
    ) -> Option<(Held, bool)> {
        let p = r.params;
        let Some((mut h, mut ok_to_drop)) = self.dodequeue(now, q, r) else {
            self.dropping = false;
            return None;
        };
        if self.dropping {
            if !ok_to_drop {
                // Sojourn time below target: leave the dropping state.
                self.dropping = false;
            }
            while self.dropping && now >= self.drop_next {
                self.count += 1;
                if Self::try_mark(&h, p, arena) {
                    self.drop_next = control_law(self.drop_next, p.interval, self.count);
                    return Some((h, true));
                }
                dropped.push((h.id, DropReason::Early));
                match self.dodequeue(now, q, r) {
                    None => {
                        self.dropping = false;
                        return None;
                    }
                    Some((next, ok)) => {
                        h = next;
                        ok_to_drop = ok;
                    }
                }
                if !ok_to_drop {
                    self.dropping = false;
                } else {
                    self.drop_next = control_law(self.drop_next, p.interval, self.count);
                }
            }
            return Some((h, false));
        }
        if !ok_to_drop {
            return Some((h, false));
        }
        // Enter the dropping state: drop (or mark) this packet.
        let marked = Self::try_mark(&h, p, arena);
        if !marked {
            dropped.push((h.id, DropReason::Early));
        }
        self.dropping = true;
        // Resume from the previous drop rate if the last episode ended recently.
        let delta = self.count.wrapping_sub(self.lastcount);
        self.count = if delta > 1 && now.saturating_sub(self.drop_next) < 16 * p.interval {
            delta
        } else {
            1
        };
        self.drop_next = control_law(now, p.interval, self.count);
        self.lastcount = self.count;
        if marked {
            return Some((h, true));
        }
        self.dodequeue(now, q, r).map(|(next, _)| (next, false))
    }
}

/// CoDel's configuration.
#[derive(Debug, Clone, Copy)]
pub struct CodelConfig {
    pub params: CodelParams,
}

impl QueueDiscipline for CodelConfig {
    const DOC: &'static str = "CoDel (RFC 8289): drops, or marks with ecn, at dequeue once the sojourn time has stayed above target for an interval, at a rate growing as √count.";
    const NS3: Result<&'static str, &'static str> = Ok("ns3::CoDelQueueDisc");
    const PARAMS: &'static [Param] = &[LIMIT, TARGET.param, INTERVAL.param, CODEL_ECN.param];
    const GAUGES: &'static [Gauge] = &[
        Gauge {
            name: "dropping",
            unit: "boolean",
            doc: "Whether CoDel is in its dropping state (RFC 8289 `dropping`: 1 or 0) at the sample time (NaN for other kinds).",
        },
        Gauge {
            name: "count",
            unit: "count",
            doc: "CoDel's count (RFC 8289): the drops and marks of its current or last dropping state, which set the control law's interval/√count (NaN for other kinds).",
        },
    ];
    fn from_table(t: &Table, _limit: Limit) -> Result<Self, KeyError> {
        Ok(CodelConfig {
            params: CodelParams::read(t)?,
        })
    }
    fn ns2(&self, _limit: Limit) -> Ns2Export {
        Ns2Export::Refused("ns-2.35 has no CoDel (use the ns-3 cross-check)".into())
    }
    fn emulable(&self) -> bool {
        // the link daemon drives packet-holding queues through the same enqueue and dequeue
        // calls as the simulator, and drops the kernel's packets they drop at dequeue
        true
    }
}

impl HeldDiscipline for CodelConfig {
    fn qdisc(&self, env: &QdiscEnv) -> Box<dyn Qdisc> {
        Box::new(Codel::new(self.params, env.limit))
    }
}

/// The CoDel discipline: one FIFO, tail drop at the buffer limit, CoDel at dequeue.
#[derive(Debug, Clone)]
pub struct Codel {
    params: CodelParams,
    limit: Limit,
    fifo: Fifo,
    maxpacket: u32,
    pub state: CodelState,
}

impl Codel {
    pub fn new(params: CodelParams, limit: Limit) -> Self {
        Codel {
            params,
            limit,
            fifo: Fifo::default(),
            maxpacket: 0,
            state: CodelState::default(),
        }
    }
}

/// Whether a queue of `pkts` packets and `bytes` bytes has room for `size` more bytes.
pub fn fits(limit: Limit, pkts: usize, bytes: u64, size: u32) -> bool {
    match limit {
        Limit::Packets(n) => (pkts as u64) < n,
        Limit::Bytes(b) => bytes + size as u64 <= b,
    }
}

impl Qdisc for Codel {
    fn enqueue(
        &mut self,
        now: SimTime,
        id: PacketId,
        arena: &mut PacketArena,
        _dropped: &mut Dropped,
    ) -> Verdict {
        let size = arena.get(id).size;
        if !fits(self.limit, self.fifo.len(), self.fifo.bytes, size) {
            return Verdict::Overflow;
        }
        self.maxpacket = self.maxpacket.max(size);
        self.fifo.push(Held {
            id,
            size,
            enqueued_at: now,
        });
        Verdict::Enqueue
    }

    fn dequeue(
        &mut self,
        now: SimTime,
        arena: &mut PacketArena,
        dropped: &mut Dropped,
    ) -> Option<Dequeued> {
        let run = CodelRun {
            params: &self.params,
            maxpacket: self.maxpacket,
        };
        let (h, marked) = self
            .state
            .dequeue(now, &mut self.fifo, run, arena, dropped)?;
        Some(Dequeued {
            id: h.id,
            size: h.size,
            marked,
        })
    }

    fn waiting(&self) -> usize {
        self.fifo.len()
    }

    fn gauges(&self, _i: usize, _now: SimTime, out: &mut dyn FnMut(&'static str, f64)) {
        out("dropping", f64::from(u8::from(self.state.dropping)));
        out("count", f64::from(self.state.count));
    }

    fn waiting_bytes(&self) -> u64 {
        self.fifo.bytes
    }

    fn sample(&self, _i: usize) -> QueueSample {
        self.fifo.sample()
    }

    fn heap_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.fifo.heap_bytes()
    }
}

#[cfg(test)]
#[path = "codel_tests.rs"]
mod tests;
