//! TCP Reno and NewReno senders with the behaviour of ns-2.35's one-way agents
//! (`Agent/TCP/Reno`, `Agent/TCP/Newreno`; see docs/ns2-behaviour.md and docs/models/tcp.md).
//!
//! The sender is a pure state machine in packets (sequence numbers count segments from 0, as
//! in ns-2): the host calls [`Ns2Sender::on_ack`] and [`Ns2Sender::on_timeout`] with the
//! current time and collects the segments to transmit in a reusable buffer. The retransmission
//! timer is a deadline plus a generation number that changes whenever the timer is re-armed or
//! cancelled, so the host can discard stale timer events.
//!
//! Modelled: slow start, congestion avoidance (cwnd += 1/cwnd per new ACK), fast retransmit on
//! the third duplicate ACK, Reno fast recovery with window inflation (`dupwnd`), NewReno
//! partial-ACK handling, retransmission timeout with Jacobson/Karels estimation on a timer of
//! granularity `tick` (integer-scaled srtt/rttvar as in ns-2 and BSD), Karn's rule (one timed
//! segment per RTT, never a retransmission), exponential backoff capped at 64 and `max_rto`,
//! the advertised-window cap `window` and `max_burst`, limited transmit, and ns-2's SYN
//! (segment 0 is a 40-byte SYN; cwnd opens to the initial window when it is acknowledged).
//!
//! The window itself is set by the congestion control of the flow's variant
//! ([`super::cc`]; `reno` and `newreno` keep ns-2's arithmetic bit for bit); the timer and
//! RTT estimator are in `rto.rs`, SACK recovery (RFC 6675) in `sack.rs`, pacing in
//! [`super::pacing`].

pub use super::cc::TcpVariant;
use super::cc::{AckSample, AnyCc, CongestionControl, Recovery, Window};
use super::counters::{Counter, Counts};
use super::pacing::Pacer;
use crate::params::ParamKind;
use crate::units::{SimTime, NS_PER_SEC};

/// The range of `tcp.window` and `tcp.initial_window` in both flavours: at most 2^30 packets,
/// the largest window TCP's window scale can advertise (65,535 · 2^14 bytes) in one-byte
/// segments, so that a sender's window arithmetic stays inside u32.
pub const WINDOW_PKTS: ParamKind = ParamKind::IntegerIn {
    min: 1,
    max: 1 << 30,
};
pub use sack::Scoreboard;

pub use super::linux::config::{explicit, Flavour, FLAVOUR_NAMES};

/// A TCP flow's resolved settings (ns-2.35's defaults unless the scenario says otherwise).
#[derive(Debug, Clone, serde::Serialize)]
pub struct TcpConfig {
    /// Not serialised for ns2 flows, so their resolved scenarios are unchanged.
    #[serde(skip_serializing_if = "Flavour::is_ns2")]
    pub flavour: Flavour,
    pub variant: TcpVariant,
    pub ack_size_bytes: u32,
    pub window_pkts: u32,
    pub initial_window_pkts: u32,
    pub min_rto_ns: u64,
    pub max_rto_ns: u64,
    pub initial_rto_ns: u64,
    pub tick_ns: u64,
    pub delayed_ack: bool,
    pub delack_interval_ns: u64,
    pub max_burst: u32,
    pub dupack_threshold: u32,
    pub ecn: bool,
    /// ns-2 `syn_`: segment 0 is a 40-byte SYN; cwnd is 1 until it is acknowledged.
    pub syn: bool,
    /// Pace new segments at Linux's rate ([`super::pacing`]).
    pub pacing: bool,
    /// SACK loss recovery (RFC 6675) whatever the variant's own (implied by `sack`).
    pub sack: bool,
    /// The variant's constants when a scenario sets them (`None`: its declared defaults,
    /// not serialised, so a resolved scenario that sets none is unchanged).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cc: Option<super::cc::CcParams>,
    /// The linux flavour's module parameters when a scenario sets them (`tcp.cc.cubic`,
    /// `tcp.cc.dctcp` under `flavour = "linux"`; `None`: the kernel's defaults, not
    /// serialised).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub linux_cc: Option<super::linux::cc::LinuxCcParams>,
    /// Every variant's `tcp.cc.VARIANT` table as given so far (checked), merged over the
    /// defaults' (`[tcp]`): a flow that changes its variant takes that variant's table.
    #[serde(skip)]
    pub cc_tables: std::collections::BTreeMap<String, toml::Table>,
    /// Keys a scenario table set explicitly ([`explicit`] bits; `sack` also when a table's
    /// variant implies it), so the flow's flavour's defaults fill only the others.
    #[serde(skip)]
    pub explicit: u16,
}

impl TcpConfig {
    /// NewReno loss recovery (RFC 6582 partial ACKs), for every variant but `reno`.
    pub fn is_newreno(&self) -> bool {
        self.variant.recovery() == Recovery::NewReno && !self.sack
    }

    /// SACK blocks on ACKs and RFC 6675 recovery.
    pub fn uses_sack(&self) -> bool {
        self.sack || self.variant.recovery() == Recovery::Sack
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CwndAction {
    None,
    DupAck,
    Timeout,
    Exited,
    /// Reduced on an ECN-Echo (ns-2 `CWND_ACTION_ECN`).
    Ecn,
}

#[derive(Debug, Clone, Default)]
pub struct TcpStats {
    pub data_sent: u64,
    pub retransmits: u64,
    pub acks_received: u64,
    pub fast_retransmits: u64,
    pub timeouts: u64,
    /// Window reductions in response to ECN-Echo (ns-2 `necnresponses_`).
    pub ecn_responses: u64,
}

/// Which window reduction the congestion control is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reduction {
    Loss,
    Ecn,
    Timeout,
}

#[derive(Debug, Clone)]
pub struct Ns2Sender {
    newreno: bool,
    /// The congestion-control algorithm: it sets `cwnd` and `ssthresh`.
    pub cc: AnyCc,
    pub pacer: Pacer,
    /// SACK recovery's scoreboard (RFC 6675), for SACK senders.
    pub sack: Option<Box<Scoreboard>>,
    /// Advertised window cap `wnd_`, packets.
    wnd: f64,
    /// Initial window after the SYN is acknowledged (`windowInit_`).
    wnd_init: f64,
    numdupacks: u32,
    max_burst: u32,
    tick: f64,
    min_rto: f64,
    max_rto: f64,
    /// Random phase of the sender's tick clock (ns-2 `boot_time_`), seconds in [0, tick).
    boot_time: f64,
    /// Segment 0 is a 40-byte SYN and cwnd stays 1 until it is acknowledged.
    pub syn: bool,
    /// ECN-capable (ns-2 `ecn_`): data segments are ECT, ECN-Echo halves the window.
    pub ecn: bool,
    /// ECN negotiated (ns-2 `ect_`): set by the first ACK carrying ECN-Echo.
    ect: bool,
    /// ns-2 `ecn_backoff_`: an ECN-Echo arrived with cwnd already at 1.
    ecn_backoff: bool,
    /// ns-2 `cong_action_`: the window was reduced; the next segment carries CWR.
    cong_action: bool,

    /// Congestion window, packets (fractional).
    pub cwnd: f64,
    /// Slow-start threshold, packets (an integer in ns-2).
    pub ssthresh: f64,
    /// Next new sequence number to send.
    pub t_seqno: i64,
    /// Highest cumulative ACK received (-1 before any).
    pub highest_ack: i64,
    last_ack: i64,
    /// Highest sequence number sent so far.
    pub maxseq: i64,
    /// The application's limit: segments below it may be sent.
    curseq: i64,
    /// A finite transfer's limit as started (`curseq` then; [`Ns2Sender::stop`] lowers
    /// `curseq`, never this).
    transfer_end: Option<i64>,
    pub dupacks: u32,
    /// Reno window inflation during fast recovery.
    pub dupwnd: i64,
    recover: i64,
    last_cwnd_action: CwndAction,
    first_partial: bool,

    // RTT estimation (ns-2 TcpAgent::rtt_update), in ticks, scaled.
    t_srtt: i64,
    t_rttvar: i64,
    t_rtxcur: f64,
    pub backoff: i64,
    rtt_active: bool,
    rtt_seq: i64,
    rtt_ts: SimTime,

    /// Armed retransmission deadline; `rtx_gen` changes whenever it is re-armed or cancelled.
    pub rtx_deadline: Option<SimTime>,
    pub rtx_gen: u32,
    pub stats: TcpStats,
    /// Its declared counters' values ([`COUNTERS`]).
    pub counts: Counts<{ COUNTERS.len() }>,
}

/// The per-flow counters ns-2's sender declares ([`crate::traffic::counters`]; those of
/// [`TcpStats`] are the flows table's own columns).
pub const COUNTERS: &[Counter] = &[];

/// Segments to send, filled by the sender: (sequence number, is a retransmission, carries
/// CWR).
pub type SendBuf = Vec<(u64, bool, bool)>;

impl Ns2Sender {
    /// A sender of `segment_bytes`-byte segments (algorithms that size in bytes, such as
    /// BBR's send quantum, are told the size).
    pub fn with_segments(cfg: &TcpConfig, boot_phase: f64, segment_bytes: u32) -> Self {
        let mut s = Ns2Sender::new(cfg, boot_phase);
        s.cc.set_segment_size(segment_bytes);
        s
    }

    /// Memory the sender holds, bytes: itself, its SACK scoreboard and its congestion
    /// control's buffers (HyStart's send times, BBR's delivery-rate states).
    pub fn heap_bytes(&self) -> usize {
        std::mem::size_of::<Ns2Sender>()
            + self.cc.heap_bytes()
            + self
                .sack
                .as_ref()
                .map_or(0, |s| std::mem::size_of::<Scoreboard>() + s.heap_bytes())
    }

    /// A sender with the configuration `cfg`; `boot_phase` in [0, 1) sets the phase of its
    /// tick clock (ns-2 draws it uniformly per agent).
    pub fn new(cfg: &TcpConfig, boot_phase: f64) -> Self {
        let tick = cfg.tick_ns as f64 / NS_PER_SEC as f64;
        let mut cc = AnyCc::new(cfg.variant, cfg.cc.as_ref());
        cc.set_phase(boot_phase);
        Ns2Sender {
            newreno: cfg.is_newreno(),
            pacer: Pacer::new(cfg.pacing || cc.always_paces()),
            cc,
            sack: cfg.uses_sack().then(Box::default),
            wnd: cfg.window_pkts as f64,
            wnd_init: cfg.initial_window_pkts as f64,
            numdupacks: cfg.dupack_threshold,
            max_burst: cfg.max_burst,
            tick,
            min_rto: cfg.min_rto_ns as f64 / NS_PER_SEC as f64,
            max_rto: cfg.max_rto_ns as f64 / NS_PER_SEC as f64,
            boot_time: boot_phase * tick,
            syn: cfg.syn,
            ecn: cfg.ecn,
            ect: false,
            ecn_backoff: false,
            cong_action: false,
            cwnd: if cfg.syn {
                1.0
            } else {
                cfg.initial_window_pkts as f64
            },
            ssthresh: cfg.window_pkts as f64,
            t_seqno: 0,
            highest_ack: -1,
            last_ack: -1,
            maxseq: -1,
            curseq: 0,
            transfer_end: None,
            dupacks: 0,
            dupwnd: 0,
            recover: 0,
            last_cwnd_action: CwndAction::None,
            first_partial: false,
            t_srtt: 0,
            // ns-2 rttvar_init_ = 12 s: only matters if the first RTO backs off past 8.
            t_rttvar: ((12.0 / tick) as i64) << rto::T_RTTVAR_BITS,
            t_rtxcur: cfg.initial_rto_ns as f64 / NS_PER_SEC as f64,
            backoff: 1,
            rtt_active: false,
            rtt_seq: -1,
            rtt_ts: 0,
            rtx_deadline: None,
            rtx_gen: 0,
            stats: TcpStats::default(),
            counts: Counts::default(),
        }
    }

    /// The usable window in packets: min(int(cwnd) + dupwnd, wnd), as ns-2's `window()`.
    pub fn window(&self) -> i64 {
        // The cast truncates as `trunc` does (ns-2's `int(cwnd_)`), without its library call.
        let w = self.cwnd as i64 + self.dupwnd;
        w.min(self.wnd as i64)
    }

    /// The same without truncation (ns-2 `windowd()`), used when halving.
    fn windowd(&self) -> f64 {
        (self.cwnd + self.dupwnd as f64).min(self.wnd)
    }

    /// Starts the bulk application (unlimited data): send what the window allows.
    pub fn start(&mut self, now: SimTime, out: &mut SendBuf) {
        self.curseq = i64::MAX;
        self.send_much(now, 0, out);
    }

    /// Starts a finite transfer of `segments` data segments (after ns-2's SYN, segment 0, when
    /// the sender has one), as ns-2's `send`/`produce`: the application limit is fixed.
    pub fn start_transfer(&mut self, now: SimTime, segments: u64, out: &mut SendBuf) {
        let n = segments.min(i64::MAX as u64 / 2) as i64;
        self.curseq = if self.syn { n + 1 } else { n };
        self.transfer_end = Some(self.curseq);
        self.send_much(now, 0, out);
    }

    /// A finite transfer is complete: its last segment has been acknowledged (a transfer
    /// stopped before its end never is).
    pub fn transfer_done(&self) -> bool {
        self.transfer_end
            .is_some_and(|end| self.highest_ack + 1 >= end)
    }

    /// The pacing timer allows the next segment ([`Pacer::on_event`] was true).
    pub fn on_pace(&mut self, now: SimTime, out: &mut SendBuf) {
        self.send_much(now, self.max_burst, out);
    }

    /// Stops the application: no new data; what is outstanding is still recovered.
    pub fn stop(&mut self) {
        self.curseq = self.t_seqno.max(self.maxseq + 1);
    }

    fn output(&mut self, now: SimTime, seqno: i64, out: &mut SendBuf) {
        let retransmit = seqno <= self.maxseq;
        let force = self.highest_ack == self.maxseq;
        // ns-2 SetCWRonRetransmit_ (default true): CWR goes on the next segment, whatever it is.
        let cwr = self.ecn && self.cong_action;
        self.cong_action = false;
        out.push((seqno as u64, retransmit, cwr));
        self.cc
            .on_send(seqno, now, self.maxseq - self.highest_ack, self.highest_ack);
        self.stats.data_sent += 1;
        if retransmit {
            self.stats.retransmits += 1;
        } else {
            self.maxseq = seqno;
            // Karn: time one new segment per RTT, never a retransmission.
            if !self.rtt_active {
                self.rtt_active = true;
                if seqno > self.rtt_seq {
                    self.rtt_seq = seqno;
                    self.rtt_ts = now;
                }
            }
        }
        if self.rtx_deadline.is_none() || force {
            self.set_rtx_timer(now);
        }
    }

    fn send_much(&mut self, now: SimTime, max_burst: u32, out: &mut SendBuf) {
        let mut win = self.window();
        let mut n = 0;
        while self.t_seqno <= self.highest_ack + win && self.t_seqno < self.curseq {
            if !self.pacer.may_send(now) {
                break;
            }
            let s = self.t_seqno;
            self.output(now, s, out);
            if self.pacer.enabled {
                let (w, rate) = (self.cwnd.min(self.wnd), self.cc.pacing_rate());
                self.pacer.on_send(now, w, self.ssthresh, rate);
            }
            n += 1;
            self.t_seqno += 1;
            win = self.window();
            if max_burst > 0 && n == max_burst {
                break;
            }
        }
        if self.t_seqno >= self.curseq && self.t_seqno <= self.highest_ack + win {
            // Application-limited: the window has room and nothing is left to send.
            self.cc.on_app_limited(self.maxseq - self.highest_ack);
        }
    }

    /// Limited transmit (RFC 3042, ns-2 `singledup_`): one new segment on each of the first
    /// duplicate ACKs.
    fn send_one(&mut self, now: SimTime, out: &mut SendBuf) {
        let t = self.t_seqno;
        if t <= self.highest_ack + self.wnd as i64
            && t < self.curseq
            && (t as f64) <= self.highest_ack as f64 + self.cwnd + self.dupacks as f64
        {
            self.output(now, t, out);
            self.t_seqno += 1;
        }
    }

    // --- window changes -------------------------------------------------------------

    fn cc_window(&self) -> Window {
        Window {
            cwnd: self.cwnd,
            ssthresh: self.ssthresh,
        }
    }

    fn set_cc_window(&mut self, w: Window) {
        self.cwnd = w.cwnd;
        self.ssthresh = w.ssthresh;
    }

    /// A window reduction decided by the congestion control from ns-2's `windowd()` (for Reno
    /// ns-2's `slowdown(CLOSE_SSTHRESH_HALF | CLOSE_CWND_HALF)`, or `CLOSE_CWND_RESTART` on a
    /// timeout); the next segment carries CWR.
    fn reduce(&mut self, now: SimTime, why: Reduction) {
        let flight = self.windowd();
        let mut w = self.cc_window();
        match why {
            Reduction::Loss => self.cc.on_congestion(&mut w, flight, now),
            Reduction::Ecn => self.cc.on_ecn_echo(&mut w, flight, now),
            Reduction::Timeout => self.cc.on_timeout(&mut w, flight, now),
        }
        self.set_cc_window(w);
        self.cong_action = true;
    }

    /// The response to an ECN-Echo (ns-2 `TcpAgent::ecn`, RFC 3168 §6.1.2): halve the window
    /// at most once per window of data (not again until `recover` is acknowledged, unless a
    /// timeout intervened), without retransmitting anything.
    fn ecn_response(&mut self, now: SimTime, ackno: i64) {
        if ackno > self.recover || self.last_cwnd_action == CwndAction::Timeout {
            self.recover = self.maxseq;
            self.last_cwnd_action = CwndAction::Ecn;
            if self.cwnd <= 1.0 {
                // cwnd is already 1: back the timer off instead (a second time in a row).
                if self.ecn_backoff {
                    self.rtt_backoff();
                } else {
                    self.ecn_backoff = true;
                }
            } else {
                self.ecn_backoff = false;
            }
            self.reduce(now, Reduction::Ecn);
            self.stats.ecn_responses += 1;
        }
    }

    /// A new cumulative ACK (`ece`: it carries ECN-Echo).
    fn newack(&mut self, now: SimTime, ackno: i64, ece: bool) {
        self.dupacks = 0;
        self.last_ack = ackno;
        self.highest_ack = ackno;
        if self.t_seqno < ackno + 1 {
            self.t_seqno = ackno + 1;
        }
        if self.rtt_active && ackno >= self.rtt_seq {
            // Do not end the backoff while ECN-Echo keeps cwnd at 1 (ns-2 `newack`).
            if !self.ect || !self.ecn_backoff || !ece {
                self.backoff = 1;
                self.ecn_backoff = false;
            }
            self.rtt_active = false;
            self.rtt_update(now, now - self.rtt_ts);
        }
        // ns-2 timerfix_: re-arm after the RTT update.
        self.newtimer(now, ackno);
    }

    fn dupack_action(&mut self, now: SimTime, out: &mut SendBuf) {
        let recovered = self.highest_ack > self.recover;
        // Reno also acts again while already in recovery (ns-2 allow_fast_retransmit).
        let reno_again = !self.newreno && self.last_cwnd_action == CwndAction::DupAck;
        // bug_fix_: otherwise no second fast retransmit for losses in the same window.
        if !(recovered || reno_again || self.highest_ack == 0) {
            if self.ecn && self.last_cwnd_action == CwndAction::Ecn {
                // The window was already halved for this window of data by an ECN-Echo:
                // retransmit without halving again (ns-2 `dupack_action`).
                self.last_cwnd_action = CwndAction::DupAck;
                self.reset_rtx_timer(now, true, false);
                self.stats.fast_retransmits += 1;
                let s = self.last_ack + 1;
                self.output(now, s, out);
                self.dupwnd = self.numdupacks as i64;
            }
            return;
        }
        self.recover = self.maxseq;
        self.last_cwnd_action = CwndAction::DupAck;
        self.reduce(now, Reduction::Loss);
        self.reset_rtx_timer(now, true, false);
        self.stats.fast_retransmits += 1;
        let s = self.last_ack + 1;
        self.output(now, s, out);
        self.dupwnd = self.numdupacks as i64;
    }

    /// NewReno partial ACK (ns-2 `partialnewack_helper`, with partial window deflation and
    /// `newreno_changes1_`: the timer is restarted only on the first partial ACK).
    fn partial_ack(&mut self, now: SimTime, ackno: i64, out: &mut SendBuf) {
        if !self.first_partial {
            self.first_partial = true;
            self.newtimer(now, ackno);
        }
        let deflate = ackno - self.last_ack;
        if self.dupwnd > deflate {
            self.dupwnd -= deflate - 1;
        } else {
            self.cwnd -= (deflate - self.dupwnd) as f64;
            self.dupwnd = 1;
        }
        if self.cwnd < 1.0 {
            self.cwnd = 1.0;
        }
        self.last_ack = ackno;
        self.highest_ack = ackno;
        if self.t_seqno < ackno + 1 {
            self.t_seqno = ackno + 1;
        }
        if self.rtt_active && ackno >= self.rtt_seq {
            self.rtt_active = false;
            self.backoff = 1;
        }
        let s = self.last_ack + 1;
        self.output(now, s, out);
    }

    /// What a new cumulative ACK tells the congestion control (before the sender's state
    /// moves); the pacer takes its RTT sample.
    fn ack_sample(&mut self, now: SimTime, ackno: i64, ece: bool, recovering: bool) -> AckSample {
        let sample = AckSample {
            now,
            acked: (ackno - self.last_ack).min(u32::MAX as i64) as u32,
            ece,
            ackno,
            snd_nxt: self.maxseq.max(ackno) + 1,
            rtt_ns: (!recovering && self.rtt_active && ackno >= self.rtt_seq)
                .then(|| now - self.rtt_ts),
            in_flight: (self.maxseq - ackno).max(0),
            in_recovery: recovering,
        };
        if let Some(r) = sample.rtt_ns {
            self.pacer.on_rtt_sample(r);
        }
        sample
    }

    /// Processes a cumulative ACK for sequence number `ackno` (-1: nothing received yet),
    /// carrying ECN-Echo if `ece` (a SACK sender: an ACK without SACK blocks).
    pub fn on_ack(&mut self, now: SimTime, ackno: i64, ece: bool, out: &mut SendBuf) {
        if self.sack.is_some() {
            return self.on_ack_sack(now, ackno, ece, &[(0, 0); 3], out);
        }
        self.stats.acks_received += 1;
        if ece && self.ecn {
            self.ecn_response(now, ackno);
        }
        if ackno > self.last_ack {
            let partial =
                self.newreno && ackno < self.recover && self.last_cwnd_action == CwndAction::DupAck;
            let sample = self.ack_sample(now, ackno, ece, partial);
            if partial {
                self.partial_ack(now, ackno, out);
                let mut w = self.cc_window();
                self.cc.on_ack(&mut w, &sample);
                self.set_cc_window(w);
            } else {
                if self.dupwnd > 0 || !self.newreno {
                    self.dupwnd = 0;
                    if self.last_cwnd_action == CwndAction::DupAck {
                        self.last_cwnd_action = CwndAction::Exited;
                    }
                }
                self.first_partial = false;
                self.newack(now, ackno, ece);
                let mut w = self.cc_window();
                self.cc.on_ack(&mut w, &sample);
                // An ACK carrying ECN-Echo does not open the window (ns-2 `old_ecn_` 0).
                if !self.ect || !ece {
                    self.cc.increase(&mut w, &sample);
                }
                self.set_cc_window(w);
                if self.ect && !ece {
                    self.ecn_backoff = false;
                }
                if !self.ect && ece {
                    self.ect = true; // negotiated: the receiver echoes
                }
                if self.last_ack == 0 {
                    // Segment 0 (the SYN, if `syn`) is acknowledged: cwnd = initial window.
                    // ns-2 tests `delay_growth_` (always true here), not `syn_`
                    // (docs/ns2-behaviour.md §4.3).
                    self.cwnd = self.wnd_init;
                }
            }
        } else if ackno == self.last_ack {
            self.dupacks += 1;
            if self.dupacks == self.numdupacks {
                self.dupack_action(now, out);
            } else if self.dupacks > self.numdupacks && self.last_cwnd_action == CwndAction::DupAck
            {
                self.dupwnd += 1;
            } else if self.dupacks < self.numdupacks {
                self.send_one(now, out);
            }
        }
        // ns-2 aggressive_maxburst_: old ACKs may also trigger sending.
        if self.dupacks == 0 {
            self.send_much(now, self.max_burst, out);
        } else if self.dupacks >= self.numdupacks {
            let burst = if self.newreno { 2 } else { self.max_burst };
            self.send_much(now, burst, out);
        }
    }

    /// The retransmission timer expired.
    pub fn on_timeout(&mut self, now: SimTime, out: &mut SendBuf) {
        if let Some(sb) = self.sack.as_mut() {
            sb.reset(); // go back to the first unacknowledged segment, forgetting SACKs
        }
        self.rtx_deadline = None;
        self.dupwnd = 0;
        self.dupacks = 0;
        if self.cwnd < 1.0 {
            self.cwnd = 1.0;
        }
        self.recover = self.maxseq;
        if self.highest_ack == -1 && self.wnd_init > 1.0 {
            // The SYN was lost: do not use a larger initial window.
            self.wnd_init = 1.0;
        }
        let outstanding = self.highest_ack != self.maxseq;
        if outstanding && self.last_cwnd_action == CwndAction::Ecn {
            // Already in recovery from an ECN-Echo: restart at 1 packet, keep ssthresh
            // (ns-2 `timeout`, `slowdown(CLOSE_CWND_ONE)`).
            self.stats.timeouts += 1;
            self.cwnd = 1.0;
            self.ssthresh = self.ssthresh.max(2.0);
            self.cong_action = true;
        } else if outstanding {
            self.stats.timeouts += 1;
            self.reduce(now, Reduction::Timeout);
        } else {
            self.cwnd = 1.0;
        }
        self.reset_rtx_timer(now, false, outstanding);
        self.last_cwnd_action = CwndAction::Timeout;
        self.send_much(now, self.max_burst, out);
    }
}

#[path = "rto.rs"]
mod rto;
#[path = "sack.rs"]
mod sack;

#[cfg(test)]
#[path = "tests/mod.rs"]
mod tests;
