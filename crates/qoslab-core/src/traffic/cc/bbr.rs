//! BBR v1 (Cardwell et al., "BBR: Congestion-Based Congestion Control", ACM Queue 14(5),
//! 2016; draft-cardwell-iccrg-bbr-congestion-control-00), in packets and nanoseconds.
//!
//! The model: BtlBw, the windowed maximum of delivery-rate samples ([`super::rate`]) over the
//! last 10 round trips (§4.1.1; a round ends when a segment sent after the previous round's
//! end is delivered), and RTprop, the minimum RTT over 10 s (§4.1.2; never from an ACK that
//! covers a retransmission, Karn's rule). Application-limited
//! samples enter the filter only if they raise it. RTprop takes a sample that is strictly
//! lower, or any sample once 10 s old (Linux's rule; the draft also accepts an equal one).
//!
//! The states (§4.3): Startup paces at 2/ln 2 · BtlBw with cwnd gain 2/ln 2 until BtlBw grows
//! less than 25 % in three rounds (the pipe is full); Drain paces at ln 2/2 until the data in
//! flight is at most one BDP = BtlBw · RTprop; ProbeBW cycles the pacing gain through the eight
//! phases [5/4, 3/4, 1, 1, 1, 1, 1, 1], each at least one RTprop long (the 5/4 phase until the
//! flight reaches 5/4 BDP or a loss, the 3/4 phase ends early at one BDP), cwnd gain 2;
//! ProbeRTT, entered when RTprop has not been refreshed for 10 s, holds cwnd at 4 packets for
//! 200 ms and one round, then returns to ProbeBW (or Startup if the pipe was never full).
//! cwnd = cwnd_gain · BDP + 3 send quanta (§4.2.3.2; the quantum is 1 segment below
//! 1.2 Mbit/s of pacing rate, 2 below 24 Mbit/s, else 1 ms of it up to 64 KB, §4.2.2), grown by
//! the segments acknowledged towards it (§4.2.3); pacing rate pacing_gain · BtlBw, which never
//! falls during Startup (§4.2.1). Losses: at fast retransmit cwnd becomes the flight, and on a
//! timeout 1; the window before either is restored when recovery ends. ECN is ignored (v1).
//!
//! Deviations: the ProbeBW cycle's first phase is derived from the sender's clock phase (a
//! per-flow uniform draw), not a fresh random number; no long-term bandwidth (policer)
//! detection; until the first rate sample the pacing rate is 2/ln 2 · cwnd / srtt. The window
//! is held through loss recovery, where the draft (§4.2.3.4-5) and Linux grow it towards its
//! target after one round of packet conservation: on top of the sender's Reno-style window
//! inflation (its stand-in, without SACK, for the packets that left the network) that growth
//! overshot: on the 5-flow BBR cross-check against ns-3 it gave 8461 drops in the window
//! against ns-3's 282 (2893 while held). Growing it needs a recovery that counts delivered and
//! lost segments out of the flight (RFC 6675's pipe) for BBR.

use super::exports::{Ns3Cc, Ns3Value, SenderExports};
use super::rate::{RateSample, RateSampler};
use super::{AckSample, CongestionControl, Tunable, Window};
use crate::params::typed::Decl;
use crate::params::{open, KeyError, Param, Table};
use crate::units::{SimTime, NS_PER_SEC};

/// 2/ln 2: Startup's gains.
pub const HIGH_GAIN: f64 = 2.885_390_081_777_927;

/// ns-2.35 has no BBR agent. ns-3.37's `TcpBbr` (its ProbeBW phase drawn from a stream set
/// per flow); Linux's `bbr` module.
pub const EXPORTS: SenderExports = SenderExports {
    ns2: None,
    ns3: Some(Ns3Cc {
        type_id: "ns3::TcpBbr",
        defaults: &[
            ("ns3::TcpBbr::HighGain", Ns3Value::Text("2.89")),
            ("ns3::TcpBbr::BwWindowLength", Ns3Value::Text("10")),
            (
                "ns3::TcpBbr::RttWindowLength",
                Ns3Value::Text("10000000000ns"),
            ),
            (
                "ns3::TcpBbr::ProbeRttDuration",
                Ns3Value::Text("200000000ns"),
            ),
        ],
        needs_pacing: Some("BBR without pacing cannot be expressed (ns-3's TcpBbr needs pacing)"),
        stream: Some("ns3::TcpBbr::Stream"),
        note: None,
    }),
    kernel: Some("bbr"),
};
/// ProbeBW's pacing gains.
pub const GAIN_CYCLE: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
/// BtlBw filter length, round trips.
pub const BTLBW_ROUNDS: u64 = 10;
/// RTprop filter length.
pub const RTPROP_WINDOW: SimTime = 10 * NS_PER_SEC;
/// ProbeRTT's minimum duration.
pub const PROBE_RTT_TIME: SimTime = 200_000_000;
/// The smallest cwnd, packets (BBRMinPipeCwnd).
pub const MIN_PIPE_CWND: f64 = 4.0;

/// ProbeBW's cwnd gain.
pub const PROBE_BW_CWND_GAIN: f64 = 2.0;

const HIGH_GAIN_KEY: Decl<f64> = Decl::new(
    "high_gain",
    open(1.0, 100.0),
    "2.885390081777927",
    "Startup's pacing and cwnd gain, Drain's cwnd gain and 1/Drain's pacing gain (2/ln 2).",
);
const CWND_GAIN_KEY: Decl<f64> = Decl::new(
    "cwnd_gain",
    open(1.0, 100.0),
    "2",
    "ProbeBW's cwnd gain: cwnd = cwnd_gain · BDP + 3 send quanta.",
);

/// BBR's gains.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct BbrParams {
    pub high_gain: f64,
    pub cwnd_gain: f64,
}

impl Default for BbrParams {
    fn default() -> Self {
        BbrParams {
            high_gain: HIGH_GAIN,
            cwnd_gain: PROBE_BW_CWND_GAIN,
        }
    }
}

impl Tunable for Bbr {
    type Params = BbrParams;
    const PARAMS: &'static [Param] = &[HIGH_GAIN_KEY.param, CWND_GAIN_KEY.param];
    fn read(t: &Table) -> Result<BbrParams, KeyError> {
        Ok(BbrParams {
            high_gain: t.get(&HIGH_GAIN_KEY)?,
            cwnd_gain: t.get(&CWND_GAIN_KEY)?,
        })
    }
    fn with_params(p: &BbrParams) -> Self {
        Bbr {
            params: *p,
            pacing_gain: p.high_gain,
            cwnd_gain: p.high_gain,
            ..Bbr::default()
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    #[default]
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

#[derive(Debug, Clone)]
pub struct Bbr {
    /// Its gains.
    pub params: BbrParams,
    pub mode: Mode,
    pub pacing_gain: f64,
    pub cwnd_gain: f64,
    /// The largest rate sample of each of the last rounds: (round, packets/s).
    bw_rounds: [(u64, f64); BTLBW_ROUNDS as usize],
    /// BtlBw, packets per second (0 before a sample).
    pub btlbw: f64,
    /// RTprop, ns (`u64::MAX` before a sample), and when it was last set.
    pub rtprop: u64,
    rtprop_stamp: SimTime,
    pub round_count: u64,
    next_round_delivered: u64,
    round_start: bool,
    pub filled_pipe: bool,
    full_bw: f64,
    full_bw_count: u32,
    /// The ProbeBW phase (an index of [`GAIN_CYCLE`]; a byte, as `cycle_start`, so that the
    /// gains fit in the state's former size).
    pub cycle_index: u8,
    cycle_stamp: SimTime,
    /// The first ProbeBW phase (a per-flow draw, never the 3/4 phase).
    cycle_start: u8,
    probe_rtt_done: Option<SimTime>,
    probe_rtt_round_done: bool,
    /// Times ProbeRTT was entered.
    pub probe_rtt_count: u64,
    prior_cwnd: f64,
    /// In fast recovery or after a timeout: the segment whose acknowledgement ends it
    /// (None until the first ACK after a timeout tells SND.NXT).
    recovering: Option<Option<i64>>,
    loss_seen: bool,
    /// The segment size, bytes, for the send quantum (0: unknown, no quantum).
    segment_bytes: u32,
    /// The pacing rate, packets per second (0: not yet known).
    pub pacing_rate: f64,
    pub sampler: RateSampler,
}

impl Default for Bbr {
    fn default() -> Self {
        Bbr {
            params: BbrParams::default(),
            mode: Mode::Startup,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            bw_rounds: [(0, 0.0); BTLBW_ROUNDS as usize],
            btlbw: 0.0,
            rtprop: u64::MAX,
            rtprop_stamp: 0,
            round_count: 0,
            next_round_delivered: 0,
            round_start: false,
            filled_pipe: false,
            full_bw: 0.0,
            full_bw_count: 0,
            cycle_index: 0,
            cycle_stamp: 0,
            cycle_start: 2,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            probe_rtt_count: 0,
            prior_cwnd: 0.0,
            recovering: None,
            loss_seen: false,
            segment_bytes: 0,
            pacing_rate: 0.0,
            sampler: RateSampler::default(),
        }
    }
}

impl Bbr {
    /// BBRInflight (§4.2.3.2): BDP · gain plus three send quanta, packets (None before RTprop
    /// and BtlBw are known).
    pub(crate) fn inflight(&self, gain: f64) -> Option<f64> {
        (self.rtprop != u64::MAX && self.btlbw > 0.0).then(|| {
            gain * self.btlbw * self.rtprop as f64 / NS_PER_SEC as f64 + 3.0 * self.send_quantum()
        })
    }

    /// BBRSetSendQuantum (§4.2.2), packets: 1 segment below a pacing rate of 1.2 Mbit/s, 2
    /// below 24 Mbit/s, else the segments of 1 ms at the pacing rate, at most 64 KB.
    pub fn send_quantum(&self) -> f64 {
        if self.segment_bytes == 0 {
            return 0.0;
        }
        let seg = self.segment_bytes as f64;
        let bps = self.pacing_rate * seg * 8.0;
        if bps < 1.2e6 {
            1.0
        } else if bps < 24e6 {
            2.0
        } else {
            (self.pacing_rate * 1e-3)
                .min(65536.0 / seg)
                .floor()
                .max(2.0)
        }
    }

    fn update_btlbw(&mut self, rs: &RateSample) {
        if rs.prior_delivered >= self.next_round_delivered {
            self.next_round_delivered = self.sampler.delivered;
            self.round_count += 1;
            self.round_start = true;
        } else {
            self.round_start = false;
        }
        if rs.delivery_rate >= self.btlbw || !rs.is_app_limited {
            let slot = &mut self.bw_rounds[(self.round_count % BTLBW_ROUNDS) as usize];
            if slot.0 != self.round_count {
                *slot = (self.round_count, 0.0);
            }
            slot.1 = slot.1.max(rs.delivery_rate);
            let oldest = self.round_count.saturating_sub(BTLBW_ROUNDS - 1);
            self.btlbw = self
                .bw_rounds
                .iter()
                .filter(|(r, _)| *r >= oldest)
                .fold(0.0, |m, (_, b)| f64::max(m, *b));
        }
    }

    fn enter_probe_bw(&mut self, now: SimTime) {
        self.mode = Mode::ProbeBw;
        self.pacing_gain = 1.0;
        self.cwnd_gain = self.params.cwnd_gain;
        self.cycle_index = self.cycle_start;
        self.cycle_stamp = now;
        self.pacing_gain = GAIN_CYCLE[self.cycle_index as usize];
    }

    fn check_cycle_phase(&mut self, now: SimTime, prior_inflight: f64) {
        if self.mode != Mode::ProbeBw {
            return;
        }
        let full_length = now - self.cycle_stamp > self.rtprop;
        let bdp = |g| self.inflight(g).unwrap_or(f64::MAX);
        let next = if self.pacing_gain > 1.0 {
            full_length && (self.loss_seen || prior_inflight >= bdp(self.pacing_gain))
        } else if self.pacing_gain < 1.0 {
            full_length || prior_inflight <= bdp(1.0)
        } else {
            full_length
        };
        if next {
            self.cycle_index = ((self.cycle_index as usize + 1) % GAIN_CYCLE.len()) as u8;
            self.cycle_stamp = now;
            self.pacing_gain = GAIN_CYCLE[self.cycle_index as usize];
        }
    }

    fn check_full_pipe_and_drain(&mut self, now: SimTime, rs: &RateSample, in_flight: f64) {
        if !self.filled_pipe && self.round_start && !rs.is_app_limited {
            if self.btlbw >= self.full_bw * 1.25 {
                self.full_bw = self.btlbw;
                self.full_bw_count = 0;
            } else {
                self.full_bw_count += 1;
                self.filled_pipe = self.full_bw_count >= 3;
            }
        }
        if self.mode == Mode::Startup && self.filled_pipe {
            self.mode = Mode::Drain;
            self.pacing_gain = 1.0 / self.params.high_gain;
            self.cwnd_gain = self.params.high_gain;
        }
        if self.mode == Mode::Drain && self.inflight(1.0).is_some_and(|b| in_flight <= b) {
            self.enter_probe_bw(now);
        }
    }

    fn check_probe_rtt(
        &mut self,
        w: &mut Window,
        now: SimTime,
        rtprop_expired: bool,
        in_flight: f64,
    ) {
        if self.mode != Mode::ProbeRtt && rtprop_expired {
            // BBRSaveCwnd: the window now, unless a recovery already saved a larger one.
            self.prior_cwnd = if self.recovering.is_none() {
                w.cwnd
            } else {
                self.prior_cwnd.max(w.cwnd)
            };
            self.mode = Mode::ProbeRtt;
            self.pacing_gain = 1.0;
            self.cwnd_gain = 1.0;
            self.probe_rtt_done = None;
            self.probe_rtt_count += 1;
        }
        if self.mode != Mode::ProbeRtt {
            return;
        }
        // Keep the low delivery rates of ProbeRTT out of the BtlBw filter (Linux marks the
        // connection application-limited while in ProbeRTT).
        self.sampler.on_app_limited(in_flight as i64);
        match self.probe_rtt_done {
            None if in_flight <= MIN_PIPE_CWND => {
                self.probe_rtt_done = Some(now + PROBE_RTT_TIME);
                self.probe_rtt_round_done = false;
                self.next_round_delivered = self.sampler.delivered;
            }
            Some(done) => {
                self.probe_rtt_round_done |= self.round_start;
                if self.probe_rtt_round_done && now > done {
                    self.rtprop_stamp = now;
                    if self.recovering.is_none() {
                        w.cwnd = w.cwnd.max(self.prior_cwnd); // BBRRestoreCwnd
                    }
                    if self.filled_pipe {
                        self.enter_probe_bw(now);
                    } else {
                        self.mode = Mode::Startup;
                        self.pacing_gain = self.params.high_gain;
                        self.cwnd_gain = self.params.high_gain;
                    }
                }
            }
            None => {}
        }
    }

    fn set_cwnd(&mut self, w: &mut Window, ack: &AckSample) {
        let acked = ack.acked as f64;
        if let Some(target) = self.inflight(self.cwnd_gain) {
            if self.filled_pipe {
                w.cwnd = (w.cwnd + acked).min(target);
            } else if w.cwnd < target || self.sampler.delivered < 10 {
                w.cwnd += acked;
            }
        } else {
            w.cwnd += acked;
        }
        w.cwnd = w.cwnd.max(MIN_PIPE_CWND);
        if self.mode == Mode::ProbeRtt {
            w.cwnd = w.cwnd.min(MIN_PIPE_CWND);
        }
    }
}

impl CongestionControl for Bbr {
    fn on_ack(&mut self, w: &mut Window, ack: &AckSample) {
        let rs = self
            .sampler
            .on_ack(ack.now, ack.ackno - ack.acked as i64 + 1, ack.ackno);
        let in_flight = ack.in_flight as f64;
        let prior_inflight = in_flight + ack.acked as f64;
        let rtprop_expired = ack.now > self.rtprop_stamp + RTPROP_WINDOW;
        if let Some(rs) = rs {
            self.update_btlbw(&rs);
            self.check_cycle_phase(ack.now, prior_inflight);
            self.check_full_pipe_and_drain(ack.now, &rs, in_flight);
            // Strictly lower, as Linux's `bbr_update_min_rtt`: on a steady path RTprop then
            // expires every 10 s and ProbeRTT re-measures it. No sample from an ACK that
            // covers a retransmission (Karn): a go-back-N resend of a segment the receiver
            // already holds is acknowledged within a millisecond.
            if let Some(rtt) = rs.rtt_ns.filter(|&r| r < self.rtprop || rtprop_expired) {
                self.rtprop = rtt;
                self.rtprop_stamp = ack.now;
            }
        } else {
            self.round_start = false;
        }
        self.check_probe_rtt(w, ack.now, rtprop_expired, in_flight);
        self.loss_seen = false;
        // Pacing rate (§4.2.1): never lowered while the pipe is not yet full.
        let rate = self.pacing_gain * self.btlbw;
        if self.btlbw > 0.0 && (self.filled_pipe || rate > self.pacing_rate) {
            self.pacing_rate = rate;
        } else if self.pacing_rate == 0.0 {
            if let Some(r) = ack.rtt_ns {
                self.pacing_rate =
                    self.params.high_gain * w.cwnd * NS_PER_SEC as f64 / r.max(1) as f64;
            }
        }
        // cwnd: recovery keeps the sender's window until it ends; then the window before it
        // is restored (see the module's deviations).
        if let Some(end) = self.recovering {
            let end = *self.recovering.insert(Some(end.unwrap_or(ack.snd_nxt - 1)));
            if ack.in_recovery || end.is_some_and(|e| ack.ackno < e) {
                return;
            }
            self.recovering = None;
            w.cwnd = w.cwnd.max(self.prior_cwnd);
        }
        self.set_cwnd(w, ack);
    }

    fn increase(&mut self, _w: &mut Window, _ack: &AckSample) {}

    fn on_congestion(&mut self, w: &mut Window, flight: f64, _now: SimTime) {
        self.loss_seen = true;
        if self.recovering.is_none() {
            self.prior_cwnd = if self.mode == Mode::ProbeRtt {
                self.prior_cwnd.max(w.cwnd)
            } else {
                w.cwnd
            };
        }
        self.recovering = Some(Some(i64::MIN));
        w.cwnd = flight.max(MIN_PIPE_CWND);
    }

    fn on_ecn_echo(&mut self, _w: &mut Window, _flight: f64, _now: SimTime) {}

    fn on_timeout(&mut self, w: &mut Window, _flight: f64, _now: SimTime) {
        self.loss_seen = true;
        if self.recovering.is_none() {
            self.prior_cwnd = w.cwnd;
        }
        self.recovering = Some(None);
        w.cwnd = 1.0;
    }

    fn on_send(&mut self, seq: i64, now: SimTime, in_flight: i64, highest_ack: i64) {
        self.sampler.on_send(seq, now, in_flight, highest_ack);
    }

    fn on_app_limited(&mut self, in_flight: i64) {
        self.sampler.on_app_limited(in_flight);
    }

    fn pacing_rate(&self) -> Option<f64> {
        (self.pacing_rate > 0.0).then_some(self.pacing_rate)
    }

    fn always_paces(&self) -> bool {
        true
    }

    fn set_segment_size(&mut self, bytes: u32) {
        self.segment_bytes = bytes;
    }

    fn set_phase(&mut self, phase: f64) {
        // Any phase but the 3/4 one (index 1), as the draft's random start.
        let k = ((phase * 7.0) as usize).min(6);
        self.cycle_start = if k == 0 { 0 } else { k as u8 + 1 };
    }
}
