//! The TCP sender as the host sees it: one implementation per transport flavour
//! (`tcp.flavour`), ns-2.35's one-way agents ([`Ns2Sender`], with its SACK recovery) and
//! Linux's ([`LinuxSender`]). The host drives either through [`Sender`] and builds the
//! receiver each flavour talks to with [`sink_for`]; nothing outside this enum's dispatch
//! asks which one a flow holds.

use super::counters::{Counter, Counts};
use super::linux::config::Flavour;
use super::linux::sender::{self as linux_sender, LinuxSender};
use super::pacing::Pacer;
use super::sink::{SackBlocks, TcpSink};
use super::tcp::{self as ns2, Ns2Sender, SendBuf, TcpConfig, TcpStats};
use crate::units::SimTime;

/// Each flavour's declared per-flow counters ([`super::counters`]), in the order of the flows
/// table's counter columns: ns-2's, then Linux's.
pub const COUNTERS_BY_FLAVOUR: [(Flavour, &[Counter]); 2] = [
    (Flavour::Ns2, ns2::COUNTERS),
    (Flavour::Linux, linux_sender::COUNTERS),
];

/// How many counters the flavours declare together.
pub const N_COUNTERS: usize = ns2::COUNTERS.len() + linux_sender::COUNTERS.len();

/// A flow's values of every flavour's declared counters, in the order of [`counters`]: its own
/// sender's, 0 for the other flavour's (and for a UDP flow).
pub type FlowCounts = Counts<N_COUNTERS>;

/// Every declared counter, in the order of [`FlowCounts`].
pub fn counters() -> impl Iterator<Item = &'static Counter> {
    COUNTERS_BY_FLAVOUR.iter().flat_map(|(_, list)| list.iter())
}

/// A TCP flow's sender, each flavour's boxed at its own size (a flow's endpoint holds the
/// enum itself).
#[derive(Debug, Clone)]
pub enum Sender {
    Ns2(Box<Ns2Sender>),
    Linux(Box<LinuxSender>),
}

/// The receiver a flow of configuration `t` talks to: ns-2's `TCPSink` (SACK blocks when the
/// sender uses them) or Linux's (quick ACKs, SACK and D-SACK).
pub fn sink_for(t: &TcpConfig) -> TcpSink {
    match t.flavour {
        Flavour::Ns2 => TcpSink::ns2(t),
        Flavour::Linux => TcpSink::linux(t),
    }
}

/// Calls `$body` with `$s` bound to the sender whichever flavour it is.
macro_rules! each {
    ($self:expr, $s:ident => $body:expr) => {
        match $self {
            Sender::Ns2($s) => $body,
            Sender::Linux($s) => $body,
        }
    };
}

impl Sender {
    /// The window the ACK about to be processed offers, in segments (`tcp_ack_update_window`):
    /// a linux sender's limit, at most its configured `window`; ns-2's agents keep `window`.
    pub fn set_send_window(&mut self, ack: i64, segs: u32) {
        if let Sender::Linux(l) = self {
            l.linux.set_send_window(ack, segs);
        }
    }

    /// The sender of configuration `cfg` sending `segment_bytes`-byte segments; `boot_phase`
    /// in [0, 1) is its per-flow draw (ns-2's tick-clock phase; BBR's first ProbeBW phase).
    pub fn new(cfg: &TcpConfig, boot_phase: f64, segment_bytes: u32) -> Self {
        match cfg.flavour {
            Flavour::Ns2 => Sender::Ns2(Box::new(Ns2Sender::with_segments(
                cfg,
                boot_phase,
                segment_bytes,
            ))),
            Flavour::Linux => {
                Sender::Linux(Box::new(LinuxSender::new(cfg, boot_phase, segment_bytes)))
            }
        }
    }

    /// Memory the sender holds on the heap, bytes (its flavour's box and what that holds).
    pub fn heap_bytes(&self) -> usize {
        each!(self, s => s.heap_bytes())
    }

    /// Starts the bulk application (unlimited data).
    pub fn start(&mut self, now: SimTime, out: &mut SendBuf) {
        each!(self, s => s.start(now, out))
    }

    /// Starts a finite transfer of `segments` data segments.
    pub fn start_transfer(&mut self, now: SimTime, segments: u64, out: &mut SendBuf) {
        each!(self, s => s.start_transfer(now, segments, out))
    }

    /// A finite transfer is complete: its last segment has been acknowledged.
    pub fn transfer_done(&self) -> bool {
        each!(self, s => s.transfer_done())
    }

    /// The pacing timer allows the next segment.
    pub fn on_pace(&mut self, now: SimTime, out: &mut SendBuf) {
        each!(self, s => s.on_pace(now, out))
    }

    /// Stops the application: no new data; what is outstanding is still recovered.
    pub fn stop(&mut self) {
        each!(self, s => s.stop())
    }

    /// An ACK for cumulative sequence number `ackno`, with ECN-Echo if `ece` and the SACK
    /// blocks the receiver put on it (none: `[(0, 0); 3]`).
    #[inline]
    pub fn on_ack(
        &mut self,
        now: SimTime,
        ackno: i64,
        ece: bool,
        blocks: &SackBlocks,
        out: &mut SendBuf,
    ) {
        match self {
            Sender::Ns2(s) if s.sack.is_some() => s.on_ack_sack(now, ackno, ece, blocks, out),
            Sender::Ns2(s) => s.on_ack(now, ackno, ece, out),
            Sender::Linux(s) => s.on_ack(now, ackno, ece, blocks, out),
        }
    }

    /// The retransmission (or probe) timer expired.
    pub fn on_timeout(&mut self, now: SimTime, out: &mut SendBuf) {
        each!(self, s => s.on_timeout(now, out))
    }

    /// The deadline of the sender's pending timer.
    pub fn rtx_deadline(&self) -> Option<SimTime> {
        match self {
            Sender::Ns2(s) => s.rtx_deadline,
            Sender::Linux(s) => s.rtx_deadline(),
        }
    }

    /// Congestion window and slow-start threshold, packets (the linux flavour's infinite
    /// ssthresh reported as its receive window).
    pub fn window(&self) -> (f64, f64) {
        match self {
            Sender::Ns2(s) => (s.cwnd, s.ssthresh),
            Sender::Linux(s) => s.linux.window(),
        }
    }

    /// Congestion window, packets.
    pub fn cwnd(&self) -> f64 {
        match self {
            Sender::Ns2(s) => s.cwnd,
            Sender::Linux(s) => s.linux.conn.cwnd as f64,
        }
    }

    /// Smoothed RTT, seconds (0 before the first sample).
    pub fn srtt(&self) -> f64 {
        each!(self, s => s.srtt())
    }

    /// Its declared counters' values among every flavour's ([`counters`]).
    pub fn counts(&self) -> FlowCounts {
        let (at, own): (usize, &[u64]) = match self {
            Sender::Ns2(s) => (0, &s.counts.0),
            Sender::Linux(s) => (ns2::COUNTERS.len(), &s.linux.counts.0),
        };
        let mut c = FlowCounts::default();
        c.0[at..at + own.len()].copy_from_slice(own);
        c
    }

    /// Starts a new connection in its place (an arrival slot's next transfer): the sender of
    /// `cfg` as [`Sender::new`] builds it, with this one's counters running on.
    pub fn renew(&mut self, cfg: &TcpConfig, boot_phase: f64, segment_bytes: u32) {
        let mut next = Sender::new(cfg, boot_phase, segment_bytes);
        *next.stats_mut() = std::mem::take(self.stats_mut());
        match (&mut next, &*self) {
            (Sender::Ns2(n), Sender::Ns2(o)) => n.counts = o.counts,
            (Sender::Linux(n), Sender::Linux(o)) => n.linux.counts = o.linux.counts,
            // A slot's flavour is its process's: it never changes between connections.
            _ => {}
        }
        *self = next;
    }

    pub fn stats(&self) -> &TcpStats {
        each!(self, s => &s.stats)
    }

    pub fn stats_mut(&mut self) -> &mut TcpStats {
        each!(self, s => &mut s.stats)
    }

    pub fn pacer_mut(&mut self) -> &mut Pacer {
        each!(self, s => &mut s.pacer)
    }

    /// Segment 0 is ns-2's 40-byte SYN.
    pub fn syn(&self) -> bool {
        match self {
            Sender::Ns2(s) => s.syn,
            Sender::Linux(_) => false,
        }
    }

    /// Segment 0 carries ns-2's ECN negotiation (ECE, not ECT); the linux flavour models no
    /// handshake and starts negotiated.
    pub fn negotiates_ecn(&self) -> bool {
        matches!(self, Sender::Ns2(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each flavour's list is well formed, and a name is one column: no two flavours declare
    /// the same (the bindings' test checks they do not collide with the table's own columns).
    #[test]
    fn every_flavours_counters_are_well_declared() {
        for (flavour, list) in COUNTERS_BY_FLAVOUR {
            super::super::counters::check(list)
                .unwrap_or_else(|e| panic!("{}: {e}", flavour.name()));
        }
        let names: Vec<&str> = counters().map(|c| c.name).collect();
        for (i, n) in names.iter().enumerate() {
            assert!(
                !names[..i].contains(n),
                "counter `{n}` declared by two flavours"
            );
        }
        assert_eq!(names.len(), N_COUNTERS);
    }
}
