//! Queue disciplines as pure state machines ("algorithmic droppers" in RFC 3290 terms).
//!
//! An AQM never owns packets, never reads a clock and never draws from a global RNG: the
//! queue host (`net::queue`) passes in the time, the arriving packet's metadata, a view of the
//! queue and the component's own random stream, and applies the returned [`Verdict`]. The
//! same code can therefore be driven by the simulator or by real packets.

pub mod af;
pub mod ared;
pub mod blue;
pub mod codel;
pub mod droptail;
pub mod dsred;
pub mod dwred;
pub mod ewma;
pub mod fdd_red;
pub mod fq_codel;
pub mod multi;
pub mod pie;
pub mod red;
pub mod registry;
pub mod rio;
pub mod rio_plus_o;
pub mod scheduler;
pub mod step;
pub mod wred;

use crate::packet::{PacketArena, PacketId, PacketMeta};
use crate::rng::SimRng;
use crate::units::{Limit, SimTime};

pub use droptail::DropTail;
pub use dwred::{Dwred, DwredParams};
pub use fdd_red::{FddRed, PenaltyRule, RttSource};
pub use red::{Red, RedParams};
pub use registry::{
    AnyAqm, Discipline, HeldDiscipline, LineDiscipline, NoLine, QueueConfig, QueueDiscipline,
    QUEUE_TYPES,
};
pub use rio::{Rio, RioMode};
pub use rio_plus_o::RioPlusO;
pub use wred::Wred;

/// What the queue holds when a packet arrives (the arriving packet not included; the packet
/// being serialised by the link's transmitter not included either, as in ns-2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueView {
    pub len_pkts: u64,
    pub len_bytes: u64,
    pub limit: Limit,
    /// Packets waiting per drop precedence (0 = AFx1/IN/green, 1 = AFx2, 2 = AFx3/OUT), as
    /// the queue host's PHB mapping assigns them; they add up to `len_pkts`.
    pub len_by_prec: [u64; 3],
}

impl QueueView {
    /// True when one more packet of `size` bytes would not fit.
    pub fn full_for(&self, size: u64) -> bool {
        match self.limit {
            Limit::Packets(n) => self.len_pkts >= n,
            Limit::Bytes(b) => self.len_bytes + size > b,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Enqueue,
    /// Enqueue with ECN Congestion Experienced set.
    Mark,
    /// Probabilistic early drop (RED's "unforced" drop).
    EarlyDrop,
    /// Deterministic drop because the average is above the maximum threshold.
    ForcedDrop,
    /// The physical buffer is full.
    Overflow,
}

/// The host's admission of an arrival: the discipline decides, then the buffer has the last
/// word (the one buffer check of every queue, single or physical queue of a multi queue).
#[inline]
pub fn admit<A: Aqm + ?Sized>(
    aqm: &mut A,
    now: SimTime,
    pkt: &PacketMeta,
    q: QueueView,
    rng: &mut SimRng,
) -> Verdict {
    let v = aqm.on_enqueue(now, pkt, q, rng);
    if v != Verdict::Overflow && admit_by_buffer(pkt, q) == Verdict::Overflow {
        aqm.on_overflow(now, pkt, v);
        return Verdict::Overflow;
    }
    v
}

/// [`admit`] for a discipline that does not judge arrivals ([`Aqm::wants_enqueue`] false):
/// the buffer check alone, without calling the discipline.
#[inline]
pub fn admit_by_buffer(pkt: &PacketMeta, q: QueueView) -> Verdict {
    if q.full_for(pkt.size as u64) {
        Verdict::Overflow
    } else {
        Verdict::Enqueue
    }
}

/// Why a packet was dropped; counters are indexed by `as usize`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropReason {
    Early = 0,
    Forced = 1,
    Overflow = 2,
    /// Dropped by a traffic conditioner's dropper (a policer), before the queue.
    Policed = 3,
}
pub const DROP_REASONS: [&str; 4] = ["early", "forced", "overflow", "policed"];

pub trait Aqm {
    /// Decides the fate of a packet arriving at the queue.
    fn on_enqueue(
        &mut self,
        now: SimTime,
        pkt: &PacketMeta,
        q: QueueView,
        rng: &mut SimRng,
    ) -> Verdict;
    /// Whether [`Aqm::on_enqueue`] can decide anything but [`Verdict::Enqueue`] or
    /// [`Aqm::on_overflow`] does anything; when not, the host admits on its buffer check
    /// alone ([`admit`] without the calls). True unless a discipline says otherwise.
    fn wants_enqueue(&self) -> bool {
        true
    }
    /// The transmitter asked for a packet and found the queue empty: an idle period starts.
    fn on_idle(&mut self, _now: SimTime) {}
    /// Whether [`Aqm::on_idle`] does anything (so the host can skip watching for idle
    /// periods). True unless a discipline says otherwise.
    fn wants_idle(&self) -> bool {
        true
    }
    /// A packet of drop precedence `prec` left the queue for the transmitter at `at` (the
    /// start of its transmission); `q` is what waits after it. Called only when
    /// [`Aqm::wants_dequeue`] (ns-2's dsRED starts idle periods per precedence here).
    fn on_dequeue(&mut self, _at: SimTime, _prec: u8, _q: QueueView) {}
    /// Whether [`Aqm::on_dequeue`] does anything (so the host can skip the call).
    fn wants_dequeue(&self) -> bool {
        false
    }
    /// The current average queue estimate, if the discipline keeps one (for time series).
    fn average(&self) -> Option<f64> {
        None
    }
    /// Per drop precedence, the average that precedence is judged on (RIO: `avg_in`, then
    /// `avg_total` for RIO-C; WRED and RED: the one average); NaN where there is none.
    fn averages(&self) -> [f64; 3] {
        [self.average().unwrap_or(f64::NAN), f64::NAN, f64::NAN]
    }
    /// A packet of the same link travelling the other way reached this queue's router (the
    /// far end of the reverse direction): disciplines that watch ACKs (FDD-RED's RTT
    /// estimator) look at it.
    fn on_reverse(&mut self, _now: SimTime, _pkt: &PacketMeta) {}
    /// Whether [`Aqm::on_reverse`] does anything (so the host can skip the call).
    fn wants_reverse(&self) -> bool {
        false
    }
    /// The host's round-trip propagation delay of each flow, by flow id (FDD-RED's oracle).
    fn set_path_rtts(&mut self, _rtts: &[SimTime]) {}
    /// The host found the buffer full at `now` after the discipline decided `decided` for
    /// `pkt`: the arrival is an overflow drop. Disciplines that count arrivals between drops (RED's
    /// `count`) restart them here, as for a forced drop.
    fn on_overflow(&mut self, _now: SimTime, _pkt: &PacketMeta, _decided: Verdict) {}
    /// A signal from another component arrives at `now` (the value it carries; DWRED: the window a
    /// TWAM ingress signals). See [`registry::QueueDiscipline::signal_source`].
    fn on_signal(&mut self, _now: SimTime, _value: f64) {}
    /// Its state variables at `now` for the time series: `out(name, value)` for each gauge its
    /// kind declares ([`registry::QueueDiscipline::GAUGES`]; BLUE's `p_m`). Each becomes a
    /// column of the queue series, NaN in the rows of queues that do not publish it.
    fn gauges(&self, _now: SimTime, _out: &mut dyn FnMut(&'static str, f64)) {}
}

/// A state variable a queue discipline publishes in the time series: a column of the queue
/// series (`series_queue`) named `name`, documented in the outputs catalogue from `unit` and
/// `doc` with no other edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gauge {
    pub name: &'static str,
    /// One of qoslab.outputs.UNITS (`fraction 0–1`, `packets`, `count`, …).
    pub unit: &'static str,
    /// What it is, one sentence.
    pub doc: &'static str,
}

/// A packet a [`Qdisc`] hands to the transmitter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dequeued {
    pub id: PacketId,
    pub size: u32,
    /// The discipline set ECN Congestion Experienced on it at dequeue (CoDel).
    pub marked: bool,
}

/// One queue's state for the time series: packets and bytes waiting, and the discipline's
/// averages ([`Aqm::average`], [`Aqm::averages`]; NaN where there is none).
#[derive(Debug, Clone, Copy)]
pub struct QueueSample {
    pub len_pkts: u64,
    pub len_bytes: u64,
    pub average: f64,
    pub averages: [f64; 3],
}

/// Packets a [`Qdisc`] dropped while deciding (at dequeue, or to make room for an arrival),
/// with the reason; the host accounts for them and frees them.
pub type Dropped = Vec<(PacketId, DropReason)>;

/// A queue discipline that holds its packets and decides at dequeue too, Linux's qdisc: CoDel's
/// sojourn-time drops, FQ-CoDel's flow queues, PIE's dequeue-side delay estimate, a multi
/// queue's scheduler. Unlike an [`Aqm`] on the FIFO line, departure times depend on later
/// decisions, so the link host drives it with an explicit end-of-transmission event and asks
/// for one packet each time the transmitter is free.
pub trait Qdisc: Send {
    /// A packet arrives (the host has set its `prec`); the verdict on it. Packets already held
    /// that the discipline drops instead (FQ-CoDel's drop from the fattest flow) go to
    /// `dropped`; the arriving packet is never among them.
    fn enqueue(
        &mut self,
        now: SimTime,
        id: PacketId,
        arena: &mut PacketArena,
        dropped: &mut Dropped,
    ) -> Verdict;
    /// The transmitter is free at `now`: the packet it sends next, if any. Packets dropped on
    /// the way (CoDel) go to `dropped`.
    fn dequeue(
        &mut self,
        now: SimTime,
        arena: &mut PacketArena,
        dropped: &mut Dropped,
    ) -> Option<Dequeued>;
    /// Packets waiting.
    fn waiting(&self) -> usize;
    /// Bytes waiting.
    fn waiting_bytes(&self) -> u64;
    /// How many queues it reports in time series (a multi queue: its physical queues).
    fn queues(&self) -> usize {
        1
    }
    /// The state of reported queue `i` (`i < queues()`).
    fn sample(&self, i: usize) -> QueueSample;
    /// The gauges of reported queue `i` at `now` ([`Aqm::gauges`]).
    fn gauges(&self, _i: usize, _now: SimTime, _out: &mut dyn FnMut(&'static str, f64)) {}
    /// The discipline of reported queue `i`, for signals (DWRED inside a multi queue).
    fn aqm_mut(&mut self, _i: usize) -> Option<&mut AnyAqm> {
        None
    }
    /// Heap bytes held (memory accounting).
    fn heap_bytes(&self) -> usize;
}
