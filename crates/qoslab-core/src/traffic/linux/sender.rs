//! The linux flavour's sender as the host sees it ([`crate::traffic::sender::Sender`]): the
//! model of [`super::Linux`] with the pacer, the counters and the application's limit it
//! shares with nothing else.

use super::{Io, Linux};
use crate::traffic::counters::{Counter, Counts};
use crate::traffic::pacing::Pacer;
use crate::traffic::sink::SackBlocks;
use crate::traffic::tcp::{SendBuf, TcpConfig, TcpStats};
use crate::units::SimTime;

/// Tail loss probes sent.
pub const TLP_PROBES: Counter = Counter::sum(
    0,
    "tlp_probes",
    "count",
    "Tail loss probes the TCP sender sent {span} (`tcp_send_loss_probe`, RFC 8985 §7: new data, or \
     the last segment again, when the probe timer of about two smoothed RTTs expired with data \
     outstanding and no ACK).",
);
/// Segments RACK marked lost.
pub const RACK_MARKS: Counter = Counter::sum(
    1,
    "rack_marks",
    "packets",
    "Segments RACK-TLP's loss detection marked lost {span} (`tcp_rack_detect_loss`, RFC 8985 §6.2: \
     sent before a segment since delivered and outstanding longer than RACK.rtt + reo_wnd; a \
     retransmission found lost again counts again), on an ACK or when the reordering timer fired; \
     the timeout's own marking (`tcp_timeout_mark_lost`) is not counted.",
);
/// Reductions undone as spurious.
pub const SPURIOUS_UNDOS: Counter = Counter::sum(
    2,
    "spurious_undos",
    "count",
    "Congestion-window reductions the TCP sender undid {span} as spurious \
     (`tcp_undo_cwnd_reduction`): D-SACKs showed every retransmission of the episode unneeded, or \
     F-RTO (RFC 5682) found the timeout spurious.",
);
/// Waits for the pacer.
pub const PACING_STALLS: Counter = Counter::sum(
    3,
    "pacing_stalls",
    "count",
    "Times the pacer held the TCP sender back {span}: window and a segment to send (new data or a \
     lost segment), but the earliest departure time of its pacing rate (`tcp_pacing_check`, EDT) \
     still to come; one count per wait, which ends at its next transmission; 0 when it does not \
     pace.",
);

/// The per-flow counters the linux flavour's sender declares ([`crate::traffic::counters`]:
/// columns of the flows table, whole run and window; those of [`TcpStats`] are the table's own).
pub const COUNTERS: &[Counter] = &[TLP_PROBES, RACK_MARKS, SPURIOUS_UNDOS, PACING_STALLS];

/// The linux sender's counter values, in the order of [`COUNTERS`].
pub type LinuxCounts = Counts<{ COUNTERS.len() }>;

#[derive(Debug, Clone)]
pub struct LinuxSender {
    pub linux: Linux,
    pub pacer: Pacer,
    pub stats: TcpStats,
    /// A finite transfer's end (one past its last segment) as started.
    transfer_end: Option<i64>,
}

impl LinuxSender {
    /// A sender of `segment_bytes`-byte segments with the configuration `cfg`; `phase` in
    /// [0, 1) is its per-flow draw (BBR's first ProbeBW phase).
    pub fn new(cfg: &TcpConfig, phase: f64, segment_bytes: u32) -> Self {
        LinuxSender {
            linux: Linux::new(cfg, phase, segment_bytes),
            pacer: Pacer::new(cfg.pacing || cfg.variant.always_paces()),
            stats: TcpStats::default(),
            transfer_end: None,
        }
    }

    /// Runs `f` on the model with the pacer, the counters and the send buffer.
    #[inline]
    fn run(&mut self, out: &mut SendBuf, f: impl FnOnce(&mut Linux, &mut Io)) {
        let mut io = Io {
            pacer: &mut self.pacer,
            stats: &mut self.stats,
            out,
        };
        let before = self.linux.fast_retransmits;
        f(&mut self.linux, &mut io);
        // Added, not copied: an [[arrivals]] slot starts each connection with a new sender
        // (fresh count) and keeps its counters running across them (sim/arrivals.rs).
        self.stats.fast_retransmits += self.linux.fast_retransmits - before;
    }

    /// Bytes held: itself (the model inline) and the model's queue and module.
    pub fn heap_bytes(&self) -> usize {
        std::mem::size_of::<LinuxSender>() + self.linux.sb.heap_bytes() + self.linux.cc.heap_bytes()
    }

    pub fn start(&mut self, now: SimTime, out: &mut SendBuf) {
        self.run(out, |l, io| l.start(now, i64::MAX, io));
    }

    pub fn start_transfer(&mut self, now: SimTime, segments: u64, out: &mut SendBuf) {
        let end = segments.min(i64::MAX as u64 / 2) as i64;
        self.transfer_end = Some(end);
        self.run(out, |l, io| l.start(now, end, io));
    }

    /// A finite transfer's last segment is acknowledged.
    pub fn transfer_done(&self) -> bool {
        self.transfer_end
            .is_some_and(|end| self.linux.sb.una >= end)
    }

    pub fn on_pace(&mut self, now: SimTime, out: &mut SendBuf) {
        self.run(out, |l, io| l.on_pace(now, io));
    }

    pub fn stop(&mut self) {
        self.linux.stop();
    }

    pub fn on_ack(
        &mut self,
        now: SimTime,
        ackno: i64,
        ece: bool,
        blocks: &SackBlocks,
        out: &mut SendBuf,
    ) {
        self.run(out, |l, io| l.on_ack(now, ackno, ece, blocks, io));
    }

    pub fn on_timeout(&mut self, now: SimTime, out: &mut SendBuf) {
        self.run(out, |l, io| l.on_timeout(now, io));
    }

    /// The pending timer's deadline.
    pub fn rtx_deadline(&self) -> Option<SimTime> {
        self.linux.deadline
    }

    /// Smoothed RTT, seconds (0 before the first sample).
    pub fn srtt(&self) -> f64 {
        self.linux.rtt.srtt_ns() as f64 / 1e9
    }
}
