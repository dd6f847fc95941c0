//! TCP Reno and NewReno senders with the behaviour of ns-2.35's one-way agents
//! (`Agent/TCP/Reno`, `Agent/TCP/Newreno`; see docs/ns2-behaviour.md and docs/models/tcp.md).
//!
//! The sender is a pure state machine in packets (sequence numbers count segments from 0, as
//! in ns-2): the host calls [`TcpSender::on_ack`] and [`TcpSender::on_timeout`] with the
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

use crate::units::{SimTime, NS_PER_SEC};

/// TCP congestion control: ns-2.35's one-way `Agent/TCP/Reno` and `Agent/TCP/Newreno`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TcpVariant {
    Reno,
    Newreno,
}

/// A TCP flow's resolved settings (ns-2.35's defaults unless the scenario says otherwise).
#[derive(Debug, Clone, serde::Serialize)]
pub struct TcpConfig {
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
}

impl TcpConfig {
    pub fn is_newreno(&self) -> bool {
        self.variant == TcpVariant::Newreno
    }
}

const T_SRTT_BITS: u32 = 3;
const T_RTTVAR_BITS: u32 = 2;
const RTTVAR_EXP: u32 = 2;

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

#[derive(Debug, Clone)]
pub struct TcpSender {
    newreno: bool,
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
    /// A finite transfer's limit as started (`curseq` then; [`TcpSender::stop`] lowers
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
}

/// Segments to send, filled by the sender: (sequence number, is a retransmission, carries
/// CWR).
pub type SendBuf = Vec<(u64, bool, bool)>;

impl TcpSender {
    /// A sender with the configuration `cfg`; `boot_phase` in [0, 1) sets the phase of its
    /// tick clock (ns-2 draws it uniformly per agent).
    pub fn new(cfg: &TcpConfig, boot_phase: f64) -> Self {
        let tick = cfg.tick_ns as f64 / NS_PER_SEC as f64;
        TcpSender {
            newreno: cfg.is_newreno(),
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
            t_rttvar: ((12.0 / tick) as i64) << T_RTTVAR_BITS,
            t_rtxcur: cfg.initial_rto_ns as f64 / NS_PER_SEC as f64,
            backoff: 1,
            rtt_active: false,
            rtt_seq: -1,
            rtt_ts: 0,
            rtx_deadline: None,
            rtx_gen: 0,
            stats: TcpStats::default(),
        }
    }

    /// The usable window in packets: min(int(cwnd) + dupwnd, wnd), as ns-2's `window()`.
    pub fn window(&self) -> i64 {
        let w = self.cwnd.trunc() as i64 + self.dupwnd;
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
            let s = self.t_seqno;
            self.output(now, s, out);
            n += 1;
            self.t_seqno += 1;
            win = self.window();
            if max_burst > 0 && n == max_burst {
                break;
            }
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

    // --- timers and RTT -------------------------------------------------------------

    fn rtt_timeout(&self) -> f64 {
        // RFC 2988 as in ns-2 (rfc2988_ true): clamp to min_rto before backing off.
        let mut t = if self.t_rtxcur < self.min_rto {
            self.min_rto * self.backoff as f64
        } else {
            self.t_rtxcur * self.backoff as f64
        };
        if t > self.max_rto {
            t = self.max_rto;
        }
        if t < 2.0 * self.tick {
            t = 2.0 * self.tick;
        }
        t
    }

    /// The current retransmission timeout in seconds.
    pub fn rto(&self) -> f64 {
        self.rtt_timeout()
    }

    fn set_rtx_timer(&mut self, now: SimTime) {
        let d = (self.rtt_timeout() * NS_PER_SEC as f64).round() as u64;
        self.rtx_deadline = Some(now + d);
        self.rtx_gen = self.rtx_gen.wrapping_add(1);
    }

    fn cancel_rtx_timer(&mut self) {
        if self.rtx_deadline.is_some() {
            self.rtx_deadline = None;
            self.rtx_gen = self.rtx_gen.wrapping_add(1);
        }
    }

    fn newtimer(&mut self, now: SimTime, ackno: i64) {
        if self.t_seqno > ackno || ackno < self.maxseq || self.cwnd < 1.0 {
            self.set_rtx_timer(now);
        } else {
            self.cancel_rtx_timer();
        }
    }

    fn rtt_backoff(&mut self) {
        if self.backoff < 64 || self.rtt_timeout() < self.max_rto {
            self.backoff <<= 1;
        }
        if self.backoff > 8 {
            // Backed off this far: move srtt into the variance (ns-2, after BSD).
            self.t_rttvar += self.t_srtt >> T_SRTT_BITS;
            self.t_srtt = 0;
        }
    }

    fn reset_rtx_timer(&mut self, now: SimTime, mild: bool, backoff: bool) {
        if backoff {
            self.rtt_backoff();
        }
        self.set_rtx_timer(now);
        if !mild {
            self.t_seqno = self.highest_ack + 1;
        }
        self.rtt_active = false;
    }

    /// Jacobson/Karels on a clock of granularity `tick` (ns-2 `rtt_update`, no timestamps):
    /// the sample is measured in whole ticks of a clock whose phase is `boot_time`.
    fn rtt_update(&mut self, now: SimTime, tao_ns: u64) {
        let tao = tao_ns as f64 / NS_PER_SEC as f64;
        let sendtime = (now - tao_ns) as f64 / NS_PER_SEC as f64 + self.boot_time;
        let tickoff = sendtime % self.tick;
        let mut t_rtt = ((tao + tickoff) / self.tick) as i64;
        if t_rtt < 1 {
            t_rtt = 1;
        }
        if self.t_srtt != 0 {
            // ns-2 keeps delta in a short; the values here never approach its range.
            let mut delta = t_rtt - (self.t_srtt >> T_SRTT_BITS);
            self.t_srtt += delta;
            if self.t_srtt <= 0 {
                self.t_srtt = 1;
            }
            if delta < 0 {
                delta = -delta;
            }
            delta -= self.t_rttvar >> T_RTTVAR_BITS;
            self.t_rttvar += delta;
            if self.t_rttvar <= 0 {
                self.t_rttvar = 1;
            }
        } else {
            self.t_srtt = t_rtt << T_SRTT_BITS;
            self.t_rttvar = t_rtt << (T_RTTVAR_BITS - 1);
        }
        let scaled = (self.t_rttvar << (RTTVAR_EXP + (T_SRTT_BITS - T_RTTVAR_BITS))) + self.t_srtt;
        self.t_rtxcur = (scaled >> T_SRTT_BITS) as f64 * self.tick;
    }

    /// Smoothed RTT estimate in seconds (0 before the first sample).
    pub fn srtt(&self) -> f64 {
        (self.t_srtt as f64 / (1 << T_SRTT_BITS) as f64) * self.tick
    }

    // --- window changes -------------------------------------------------------------

    fn opencwnd(&mut self) {
        if self.cwnd < self.ssthresh {
            self.cwnd += 1.0;
        } else {
            self.cwnd += 1.0 / self.cwnd;
        }
    }

    /// ns-2 `slowdown(CLOSE_SSTHRESH_HALF | CLOSE_CWND_HALF)` (`to_one` false) or
    /// `slowdown(CLOSE_SSTHRESH_HALF | CLOSE_CWND_RESTART)` (`to_one` true): ssthresh is
    /// floored to an integer (at least 2), cwnd keeps its fraction.
    fn slowdown(&mut self, to_one: bool) {
        let halfwin = self.windowd() / 2.0;
        self.ssthresh = halfwin.trunc().max(2.0);
        self.cwnd = if to_one { 1.0 } else { halfwin };
        self.cong_action = true;
    }

    /// The response to an ECN-Echo (ns-2 `TcpAgent::ecn`, RFC 3168 §6.1.2): halve the window
    /// at most once per window of data (not again until `recover` is acknowledged, unless a
    /// timeout intervened), without retransmitting anything.
    fn ecn_response(&mut self, ackno: i64) {
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
            self.slowdown(false);
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
        self.slowdown(false);
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

    /// Processes a cumulative ACK for sequence number `ackno` (-1: nothing received yet),
    /// carrying ECN-Echo if `ece`.
    pub fn on_ack(&mut self, now: SimTime, ackno: i64, ece: bool, out: &mut SendBuf) {
        self.stats.acks_received += 1;
        if ece && self.ecn {
            self.ecn_response(ackno);
        }
        if ackno > self.last_ack {
            let partial =
                self.newreno && ackno < self.recover && self.last_cwnd_action == CwndAction::DupAck;
            if partial {
                self.partial_ack(now, ackno, out);
            } else {
                if self.dupwnd > 0 || !self.newreno {
                    self.dupwnd = 0;
                    if self.last_cwnd_action == CwndAction::DupAck {
                        self.last_cwnd_action = CwndAction::Exited;
                    }
                }
                self.first_partial = false;
                self.newack(now, ackno, ece);
                // An ACK carrying ECN-Echo does not open the window (ns-2 `old_ecn_` 0).
                if !self.ect || !ece {
                    self.opencwnd();
                }
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
            self.slowdown(true);
        } else {
            self.cwnd = 1.0;
        }
        self.reset_rtx_timer(now, false, outstanding);
        self.last_cwnd_action = CwndAction::Timeout;
        self.send_much(now, self.max_burst, out);
    }
}

#[cfg(test)]
#[path = "tests/mod.rs"]
mod tests;
