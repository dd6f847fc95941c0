//! The `linux` transport flavour: a TCP sender modelled on Linux 6.x's, file by file as the
//! kernel splits it (docs/models/tcp-linux.md):
//!
//! * [`scoreboard`]: the retransmission queue's per-segment SACKED / LOST / RETRANS state and
//!   RFC 6675's pipe (`tcp_packets_in_flight`);
//! * [`ack`]: `tcp_ack` — SACK tagging with D-SACK (`tcp_sacktag_write_queue`), the
//!   cumulative ACK (`tcp_clean_rtx_queue`) and the RTT sample (`tcp_ack_update_rtt`);
//! * [`recovery`]: the state machine of net/ipv4/tcp_input.c (`tcp_fastretrans_alert`:
//!   Open, Disorder, CWR, Recovery, Loss), PRR (RFC 6937, `tcp_cwnd_reduction`), undo on
//!   D-SACK and F-RTO (RFC 5682) after a timeout;
//! * [`rack`]: RACK-TLP (RFC 8985, net/ipv4/tcp_recovery.c);
//! * [`output`]: `tcp_write_xmit`, `tcp_xmit_retransmit_queue`, the tail loss probe,
//!   pacing (`tcp_update_pacing_rate`, the EDT model of `sch_fq`) and the timers
//!   (net/ipv4/tcp_timer.c: RTO with exponential backoff, probe, reordering timeout);
//! * [`rate`]: delivery-rate sampling (net/ipv4/tcp_rate.c);
//! * [`rtt`]: `tcp_rtt_estimator` and `tcp_set_rto` (RTO ≥ srtt + 200 ms);
//! * [`cc`]: Reno (tcp_cong.c), CUBIC (tcp_cubic.c), DCTCP (tcp_dctcp.c), BBR v1
//!   (tcp_bbr.c), as `tcp_congestion_ops`.
//!
//! Sequence numbers count segments from 0 (no handshake). The host talks to it through
//! [`sender::LinuxSender`], which owns the pacer and the statistics.

pub mod ack;
pub mod cc;
pub mod config;
pub mod output;
pub mod rack;
pub mod rate;
pub mod rcv_space;
pub mod recovery;
pub mod rtt;
pub mod scoreboard;
pub mod sender;

#[cfg(test)]
mod tests;

use self::cc::{CaState, Conn, LinuxCc, LinuxCongestion, INFINITE_SSTHRESH};
use self::rack::Rack;
use self::rate::RateState;
use self::rtt::RttEstimator;
use self::scoreboard::Scoreboard;
use super::pacing::Pacer;
use super::tcp::{SendBuf, TcpConfig, TcpStats};
use crate::units::SimTime;

/// Which timer is pending (`icsk_pending`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timer {
    None,
    Rto,
    Probe,
    Reo,
}

/// What the sender shares with its host: the pacer, the counters and the segments to send.
pub struct Io<'a> {
    pub pacer: &'a mut Pacer,
    pub stats: &'a mut TcpStats,
    pub out: &'a mut SendBuf,
}

/// The window a SYN-ACK offers (no window scaling on SYNs): 65,535 bytes.
const SYN_WINDOW_BYTES: u32 = 65_535;

#[derive(Debug, Clone)]
pub struct Linux {
    pub sb: Scoreboard,
    pub conn: Conn,
    pub cc: LinuxCc,
    pub rate: RateState,
    pub rtt: RttEstimator,
    pub rack: Rack,
    /// `high_seq`: SND.NXT when the current reduction or loss recovery began.
    pub high_seq: i64,
    pub prr_delivered: u32,
    pub prr_out: u32,
    prior_ssthresh: u32,
    /// `undo_marker` (None: no undo possible) and `undo_retrans`.
    undo_marker: Option<i64>,
    undo_retrans: i32,
    retrans_stamp: Option<SimTime>,
    /// F-RTO (RFC 5682) in progress after a timeout.
    frto: bool,
    /// SND.NXT when the outstanding tail loss probe was sent.
    tlp_high_seq: Option<i64>,
    tlp_retrans: bool,
    pub timer: Timer,
    /// The pending timer's deadline.
    pub deadline: Option<SimTime>,
    /// Tail loss probes switched off (tests only).
    pub tlp_disabled: bool,
    /// `icsk_backoff` and `icsk_retransmits`.
    pub backoff: u32,
    retransmits: u32,
    /// The application's limit (`write_seq`): segments below it may be sent.
    pub app_end: i64,
    /// `snd_wnd`: the window the last ACK offered (segments), at most `window_cap`.
    rwnd: u32,
    /// The configured `window` (segments): the most `rwnd` may be.
    window_cap: u32,
    pub ecn: bool,
    queue_cwr: bool,
    /// `tp->reordering` (DupThresh).
    reordering: u32,
    /// PRR disabled (tests only: the reduction is a plain cwnd = ssthresh).
    pub no_prr: bool,
    /// Scratch list of segments newly marked lost.
    lost_buf: Vec<i64>,
    /// The last ACK's rate sample (kept for the tests only: a copy of the whole sample on
    /// every ACK is work no model reads).
    #[cfg(test)]
    pub last_rs: self::rate::RateSample,
    /// Count segments as delivered only when cumulatively acknowledged (tests only: the
    /// sampler without SACK).
    pub rate_cum_only: bool,
    /// Entries into fast recovery.
    pub fast_retransmits: u64,
    /// The counters [`sender::COUNTERS`] declares, counted where their events happen.
    pub counts: sender::LinuxCounts,
    /// The pacer refused a segment and the sender has not transmitted since (one
    /// [`sender::PACING_STALLS`] a wait).
    pacing_wait: bool,
}

impl Linux {
    pub fn new(cfg: &TcpConfig, phase: f64, mss: u32) -> Self {
        // tcp_init_cwnd: the initial window, at most the window clamp.
        let cwnd_clamp = cfg.window_pkts.max(1);
        let mut conn = Conn {
            now: 0,
            cwnd: cfg.initial_window_pkts.min(cwnd_clamp),
            cwnd_cnt: 0,
            ssthresh: INFINITE_SSTHRESH,
            cwnd_clamp,
            prior_cwnd: 0,
            ca_state: CaState::Open,
            una: 0,
            nxt: 0,
            packets_out: 0,
            in_flight: 0,
            srtt_ns: 0,
            min_rtt_ns: u64::MAX,
            delivered: 0,
            delivered_ce: 0,
            lost: 0,
            app_limited: false,
            cwnd_limited: true,
            pacing_rate: 0.0,
            paced: false,
            mss,
            lsndtime: 0,
            delivered_time: 0,
            edt: 0,
            app_limited_until: None,
        };
        let cc = LinuxCc::new(cfg.variant, &mut conn, phase, cfg.linux_cc.as_ref());
        Linux {
            sb: Scoreboard::new(),
            conn,
            cc,
            rate: RateState::default(),
            rtt: RttEstimator::new(cfg.initial_rto_ns, cfg.min_rto_ns, cfg.max_rto_ns),
            rack: Rack::default(),
            high_seq: 0,
            prr_delivered: 0,
            prr_out: 0,
            prior_ssthresh: 0,
            undo_marker: None,
            undo_retrans: 0,
            retrans_stamp: None,
            frto: false,
            tlp_high_seq: None,
            tlp_retrans: false,
            timer: Timer::None,
            deadline: None,
            tlp_disabled: false,
            backoff: 0,
            retransmits: 0,
            app_end: 0,
            // the SYN-ACK's window, 65,535 bytes unscaled, until the first ACK
            rwnd: cwnd_clamp.min(SYN_WINDOW_BYTES / crate::packet::tcp_payload_bytes(mss)),
            window_cap: cwnd_clamp,
            ecn: cfg.ecn,
            queue_cwr: false,
            reordering: cfg.dupack_threshold.max(1),
            no_prr: false,
            lost_buf: Vec::new(),
            #[cfg(test)]
            last_rs: Default::default(),
            rate_cum_only: false,
            fast_retransmits: 0,
            counts: Default::default(),
            pacing_wait: false,
        }
    }

    /// Heap bytes held (queue, module).
    pub fn heap_bytes(&self) -> usize {
        std::mem::size_of::<Linux>() + self.sb.heap_bytes() + self.cc.heap_bytes()
    }

    /// The window reported to traces: cwnd, and ssthresh (the configured `window` while
    /// infinite: not the receiver's window, which moves).
    pub fn window(&self) -> (f64, f64) {
        let ss = if self.conn.ssthresh >= INFINITE_SSTHRESH {
            self.window_cap as f64
        } else {
            self.conn.ssthresh as f64
        };
        (self.conn.cwnd as f64, ss)
    }

    /// Refreshes the socket fields a congestion control reads.
    pub(crate) fn sync_conn(&mut self, now: SimTime, pacer: &Pacer) {
        self.sync_conn_fields();
        let c = &mut self.conn;
        c.now = now;
        c.delivered_time = self.rate.delivered_time;
        c.app_limited = self.rate.app_limited != 0;
        c.edt = pacer.next;
        c.paced = pacer.enabled;
    }

    /// Applies what a module asked of the socket beyond cwnd and ssthresh.
    pub(crate) fn apply_conn(&mut self) {
        if let Some(a) = self.conn.app_limited_until.take() {
            self.rate.app_limited = a;
        }
    }

    /// `tcp_set_ca_state`: the module sees the change first.
    pub(crate) fn set_ca_state(&mut self, s: CaState) {
        self.cc.set_state(&mut self.conn, s);
        self.conn.ca_state = s;
    }

    /// Starts an application with `segments` to send (`i64::MAX`: bulk).
    pub fn start(&mut self, now: SimTime, segments: i64, io: &mut Io) {
        self.app_end = segments;
        self.sync_conn(now, io.pacer);
        self.write_xmit(now, io);
    }

    /// Stops the application: nothing new is sent.
    pub fn stop(&mut self) {
        self.app_end = self.sb.nxt();
    }

    /// `snd_wnd` from the window (segments) of an ACK covering segments up to `ack`
    /// (`tcp_ack_update_window` behind `tcp_may_update_window`: an ACK of new data, or a
    /// duplicate offering more; an older ACK's window is ignored), at most the configured
    /// `window`: `tcp_snd_wnd_test` then sends nothing past `snd_una` + it.
    pub fn set_send_window(&mut self, ack: i64, segs: u32) {
        let (w, una) = (segs.min(self.window_cap).max(1), ack + 1);
        if una > self.sb.una || (una == self.sb.una && w > self.rwnd) {
            self.rwnd = w;
        }
    }

    /// The pacing timer fired. The socket fields a module reads ([`Conn`]) are not refreshed
    /// here: what a release runs reads none of them but through `transmit`'s
    /// `cwnd_event`, which refreshes them itself, and every other entry point (ACK, timer,
    /// start) refreshes them before its module calls.
    pub fn on_pace(&mut self, now: SimTime, io: &mut Io) {
        if self.sb.lost_out > self.sb.retrans_out {
            self.xmit_retransmit_queue(now, io);
        }
        self.write_xmit(now, io);
    }

    /// `tcp_in_cwnd_reduction`: CWR or Recovery.
    pub fn in_cwnd_reduction(&self) -> bool {
        matches!(self.conn.ca_state, CaState::Cwr | CaState::Recovery)
    }
}
