//! BBR v1 as Linux's net/ipv4/tcp_bbr.c (`cong_control` = `bbr_main`), in the kernel's fixed
//! point (bandwidth in segments per µs << 24, gains << 8): the 10-round windowed max of the
//! delivery rate (lib/win_minmax.c), the 10 s min-RTT filter and ProbeRTT (cwnd 4 for
//! max(200 ms, one round)), Startup (gain 2.885) with full-pipe detection (three rounds
//! without 25 % growth), Drain, ProbeBW's eight-phase gain cycle entered at a random phase,
//! packet conservation in the first round of recovery and the window saved before recovery
//! restored on exit, the long-term bandwidth sampling for policers, the ACK-aggregation
//! allowance (extra_acked over 5 rounds, at most 100 ms of bandwidth) and the quantization
//! budget (3 × the TSO goal, rounded up to even, +2 in the probing phase).

use super::{CaEvent, CaState, Conn, LinuxCongestion};
use crate::traffic::linux::rate::RateSample;
use crate::units::SimTime;

const BW_SCALE: u32 = 24;
const BW_UNIT: u64 = 1 << BW_SCALE;
const BBR_SCALE: u32 = 8;
const BBR_UNIT: u32 = 1 << BBR_SCALE;
const CYCLE_LEN: u32 = 8;
const HIGH_GAIN: u32 = BBR_UNIT * 2885 / 1000 + 1;
const DRAIN_GAIN: u32 = BBR_UNIT * 1000 / 2885;
const CWND_GAIN: u32 = BBR_UNIT * 2;
const PACING_GAIN: [u32; 8] = [
    BBR_UNIT * 5 / 4,
    BBR_UNIT * 3 / 4,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
];
const CYCLE_RAND: u32 = 7;
const CWND_MIN_TARGET: u32 = 4;
const BW_RTTS: u32 = CYCLE_LEN + 2;
const MIN_RTT_WIN_NS: u64 = 10_000_000_000;
const PROBE_RTT_MODE_NS: u64 = 200_000_000;
const FULL_BW_THRESH: u32 = BBR_UNIT * 5 / 4;
const FULL_BW_CNT: u32 = 3;
const LT_INTVL_MIN_RTTS: u32 = 4;
const LT_LOSS_THRESH: u32 = 50;
const LT_BW_RATIO: u32 = BBR_UNIT / 8;
/// 4 kbit/s in bytes per second.
const LT_BW_DIFF: u64 = 4000 / 8;
const LT_BW_MAX_RTTS: u32 = 48;
const EXTRA_ACKED_GAIN: u32 = BBR_UNIT;
const EXTRA_ACKED_WIN_RTTS: u32 = 5;
const ACK_EPOCH_ACKED_RESET: u32 = 1 << 20;
const EXTRA_ACKED_MAX_US: u64 = 100_000;
const INIT_CWND: u32 = 10;
/// 1.2 Mbit/s, bytes per second.
const MIN_TSO_RATE: f64 = 1_200_000.0 / 8.0;
const PACING_MARGIN_PERCENT: f64 = 1.0;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

/// lib/win_minmax.c: the best three samples of a sliding window.
#[derive(Debug, Clone, Copy, Default)]
struct MinMax {
    s: [(u32, u64); 3],
}

impl MinMax {
    fn reset(&mut self, t: u32, v: u64) -> u64 {
        self.s = [(t, v); 3];
        v
    }

    fn running_max(&mut self, win: u32, t: u32, v: u64) -> u64 {
        let val = (t, v);
        if v >= self.s[0].1 || t.wrapping_sub(self.s[2].0) > win {
            return self.reset(t, v);
        }
        if v >= self.s[1].1 {
            self.s[2] = val;
            self.s[1] = val;
        } else if v >= self.s[2].1 {
            self.s[2] = val;
        }
        let dt = t.wrapping_sub(self.s[0].0);
        if dt > win {
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if t.wrapping_sub(self.s[0].0) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].0 == self.s[0].0 && dt > win / 4 {
            self.s[2] = val;
            self.s[1] = val;
        } else if self.s[2].0 == self.s[1].0 && dt > win / 2 {
            self.s[2] = val;
        }
        self.s[0].1
    }

    fn get(&self) -> u64 {
        self.s[0].1
    }
}

#[derive(Debug, Clone)]
pub struct Bbr {
    pub mode: Mode,
    min_rtt_us: u32,
    min_rtt_stamp: SimTime,
    probe_rtt_done_stamp: Option<SimTime>,
    bw: MinMax,
    rtt_cnt: u32,
    next_rtt_delivered: u64,
    cycle_mstamp: SimTime,
    prev_ca_state: CaState,
    packet_conservation: bool,
    round_start: bool,
    idle_restart: bool,
    probe_rtt_round_done: bool,
    lt_is_sampling: bool,
    lt_rtt_cnt: u32,
    lt_use_bw: bool,
    lt_bw: u64,
    lt_last_delivered: u64,
    lt_last_stamp_ms: u64,
    lt_last_lost: u64,
    pacing_gain: u32,
    cwnd_gain: u32,
    full_bw_reached: bool,
    full_bw_cnt: u32,
    cycle_idx: u32,
    has_seen_rtt: bool,
    pub prior_cwnd: u32,
    full_bw: u64,
    ack_epoch_mstamp: SimTime,
    extra_acked: [u32; 2],
    ack_epoch_acked: u32,
    extra_acked_win_rtts: u32,
    extra_acked_win_idx: usize,
    rng: u64,
    /// The last (bw, gain) → pacing rate and (rate bits, mss) → TSO goal, asked every ACK (the
    /// goal every segment too) of inputs that seldom change: recomputed when one does.
    pacing_memo: std::cell::Cell<Option<((u64, u32), f64)>>,
    tso_memo: std::cell::Cell<Option<((u64, u32), u32)>>,
}

impl Bbr {
    /// `bbr_init`; `phase` in [0, 1) seeds the random start of the gain cycle.
    pub fn new(c: &Conn, phase: f64) -> Self {
        let mut b = Bbr {
            mode: Mode::Startup,
            min_rtt_us: if c.min_rtt_ns == u64::MAX {
                u32::MAX
            } else {
                (c.min_rtt_ns / 1000) as u32
            },
            min_rtt_stamp: c.now,
            probe_rtt_done_stamp: None,
            bw: MinMax::default(),
            rtt_cnt: 0,
            next_rtt_delivered: c.delivered,
            cycle_mstamp: 0,
            prev_ca_state: CaState::Open,
            packet_conservation: false,
            round_start: false,
            idle_restart: false,
            probe_rtt_round_done: false,
            lt_is_sampling: false,
            lt_rtt_cnt: 0,
            lt_use_bw: false,
            lt_bw: 0,
            lt_last_delivered: 0,
            lt_last_stamp_ms: 0,
            lt_last_lost: 0,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            full_bw_reached: false,
            full_bw_cnt: 0,
            cycle_idx: 0,
            has_seen_rtt: false,
            prior_cwnd: 0,
            full_bw: 0,
            ack_epoch_mstamp: c.now,
            extra_acked: [0; 2],
            ack_epoch_acked: 0,
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
            rng: ((phase * (1u64 << 53) as f64) as u64) | 1,
            pacing_memo: Default::default(),
            tso_memo: Default::default(),
        };
        b.reset_lt_bw_sampling(c);
        b
    }

    fn random_below(&mut self, n: u32) -> u32 {
        // xorshift64*: a per-flow stream for `get_random_u32_below`.
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        let r = self.rng.wrapping_mul(0x2545_F491_4F6C_DD1D);
        ((r >> 32) % n as u64) as u32
    }

    pub fn max_bw(&self) -> u64 {
        self.bw.get()
    }

    /// `bbr_bw`: the estimate in use (long-term while policed).
    pub fn bw(&self) -> u64 {
        if self.lt_use_bw {
            self.lt_bw
        } else {
            self.max_bw()
        }
    }

    /// Bottleneck bandwidth estimate, segments per second.
    pub fn bw_pps(&self) -> f64 {
        self.bw() as f64 * 1e6 / BW_UNIT as f64
    }

    fn bw_to_pacing_rate(&self, bw: u64, gain: u32) -> f64 {
        match self.pacing_memo.get() {
            Some((k, rate)) if k == (bw, gain) => rate,
            _ => {
                let r = (bw as f64) * gain as f64 / BBR_UNIT as f64 * 1e6 / BW_UNIT as f64;
                let rate = r * (100.0 - PACING_MARGIN_PERCENT) / 100.0;
                self.pacing_memo.set(Some(((bw, gain), rate)));
                rate
            }
        }
    }

    fn init_pacing_rate_from_rtt(&mut self, c: &mut Conn) {
        let rtt_us = if c.srtt_ns > 0 {
            self.has_seen_rtt = true;
            (c.srtt_ns / 1000).max(1)
        } else {
            1000
        };
        let bw = c.cwnd as u64 * BW_UNIT / rtt_us;
        c.pacing_rate = self.bw_to_pacing_rate(bw, HIGH_GAIN);
    }

    fn set_pacing_rate(&mut self, c: &mut Conn, bw: u64, gain: u32) {
        let rate = self.bw_to_pacing_rate(bw, gain);
        if !self.has_seen_rtt && c.srtt_ns > 0 {
            self.init_pacing_rate_from_rtt(c);
        }
        if self.full_bw_reached || rate > c.pacing_rate {
            c.pacing_rate = rate;
        }
    }

    fn tso_segs_goal(&self, c: &Conn) -> u32 {
        let key = (c.pacing_rate.to_bits(), c.mss);
        if let Some((_, goal)) = self.tso_memo.get().filter(|m| m.0 == key) {
            return goal;
        }
        let bytes_per_s = c.pacing_rate * c.mss as f64;
        let min_segs = if bytes_per_s < MIN_TSO_RATE { 1 } else { 2 };
        let bytes = (bytes_per_s / 1024.0) as u64; // sk_pacing_shift 10
        let goal = ((bytes / c.mss.max(1) as u64) as u32)
            .max(min_segs)
            .min(0x7f);
        self.tso_memo.set(Some((key, goal)));
        goal
    }

    fn bdp(&self, bw: u64, gain: u32) -> u32 {
        if self.min_rtt_us == u32::MAX {
            return INIT_CWND;
        }
        let w = bw * self.min_rtt_us as u64;
        (((w * gain as u64) >> BBR_SCALE).div_ceil(BW_UNIT)) as u32
    }

    fn quantization_budget(&self, c: &Conn, cwnd: u32) -> u32 {
        let mut cwnd = cwnd + 3 * self.tso_segs_goal(c);
        cwnd = (cwnd + 1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            cwnd += 2;
        }
        cwnd
    }

    fn inflight(&self, c: &Conn, bw: u64, gain: u32) -> u32 {
        let b = self.bdp(bw, gain);
        self.quantization_budget(c, b)
    }

    /// `bbr_packets_in_net_at_edt`: what will still be in flight when the next segment's
    /// earliest departure time comes.
    fn packets_in_net_at_edt(&self, c: &Conn, inflight_now: u32) -> u32 {
        let interval_us = c.edt.saturating_sub(c.now) / 1000;
        let interval_delivered = (self.bw() * interval_us) >> BW_SCALE;
        let mut at_edt = inflight_now;
        if self.pacing_gain > BBR_UNIT {
            at_edt += self.tso_segs_goal(c);
        }
        if interval_delivered >= at_edt as u64 {
            0
        } else {
            at_edt - interval_delivered as u32
        }
    }

    fn extra_acked_max(&self) -> u32 {
        self.extra_acked[0].max(self.extra_acked[1])
    }

    fn ack_aggregation_cwnd(&self) -> u32 {
        if !self.full_bw_reached {
            return 0;
        }
        let max_aggr = (self.bw() * EXTRA_ACKED_MAX_US / BW_UNIT) as u32;
        let aggr = (EXTRA_ACKED_GAIN * self.extra_acked_max()) >> BBR_SCALE;
        aggr.min(max_aggr)
    }

    fn save_cwnd(&mut self, c: &Conn) {
        if self.prev_ca_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = c.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(c.cwnd);
        }
    }

    fn advance_cycle_phase(&mut self, c: &Conn) {
        self.cycle_idx = (self.cycle_idx + 1) & (CYCLE_LEN - 1);
        self.cycle_mstamp = c.delivered_time;
    }

    fn is_next_cycle_phase(&self, c: &Conn, rs: &RateSample) -> bool {
        let full_length =
            c.delivered_time.saturating_sub(self.cycle_mstamp) / 1000 > self.min_rtt_us as u64;
        if self.pacing_gain == BBR_UNIT {
            return full_length;
        }
        let inflight = self.packets_in_net_at_edt(c, rs.prior_in_flight);
        let bw = self.max_bw();
        if self.pacing_gain > BBR_UNIT {
            return full_length
                && (rs.losses > 0 || inflight >= self.inflight(c, bw, self.pacing_gain));
        }
        full_length || inflight <= self.inflight(c, bw, BBR_UNIT)
    }

    fn reset_probe_bw_mode(&mut self, c: &Conn) {
        self.mode = Mode::ProbeBw;
        self.cycle_idx = CYCLE_LEN - 1 - self.random_below(CYCLE_RAND);
        self.advance_cycle_phase(c);
    }

    fn reset_mode(&mut self, c: &Conn) {
        if !self.full_bw_reached {
            self.mode = Mode::Startup;
        } else {
            self.reset_probe_bw_mode(c);
        }
    }

    fn reset_lt_bw_sampling_interval(&mut self, c: &Conn) {
        self.lt_last_stamp_ms = c.delivered_time / 1_000_000;
        self.lt_last_delivered = c.delivered;
        self.lt_last_lost = c.lost;
        self.lt_rtt_cnt = 0;
    }

    fn reset_lt_bw_sampling(&mut self, c: &Conn) {
        self.lt_bw = 0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.reset_lt_bw_sampling_interval(c);
    }

    fn lt_bw_interval_done(&mut self, c: &Conn, bw: u64) {
        if self.lt_bw > 0 {
            let diff = bw.abs_diff(self.lt_bw);
            let diff_bytes_per_s = diff as f64 * c.mss as f64 * 1e6 / BW_UNIT as f64;
            if diff * BBR_UNIT as u64 <= LT_BW_RATIO as u64 * self.lt_bw
                || diff_bytes_per_s <= LT_BW_DIFF as f64
            {
                // Policed: use the average of the two intervals.
                self.lt_bw = (bw + self.lt_bw) >> 1;
                self.lt_use_bw = true;
                self.pacing_gain = BBR_UNIT;
                self.lt_rtt_cnt = 0;
                return;
            }
        }
        self.lt_bw = bw;
        self.reset_lt_bw_sampling_interval(c);
    }

    fn lt_bw_sampling(&mut self, c: &Conn, losses: u32, app_limited: bool) {
        if self.lt_use_bw {
            if self.mode == Mode::ProbeBw && self.round_start {
                self.lt_rtt_cnt += 1;
                if self.lt_rtt_cnt >= LT_BW_MAX_RTTS {
                    self.reset_lt_bw_sampling(c);
                    self.reset_probe_bw_mode(c);
                }
            }
            return;
        }
        if !self.lt_is_sampling {
            if losses == 0 {
                return;
            }
            self.reset_lt_bw_sampling_interval(c);
            self.lt_is_sampling = true;
        }
        if app_limited {
            self.reset_lt_bw_sampling(c);
            return;
        }
        if self.round_start {
            self.lt_rtt_cnt += 1;
        }
        if self.lt_rtt_cnt < LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt_rtt_cnt > 4 * LT_INTVL_MIN_RTTS {
            self.reset_lt_bw_sampling(c);
            return;
        }
        if losses == 0 {
            return;
        }
        let lost = c.lost - self.lt_last_lost;
        let delivered = c.delivered - self.lt_last_delivered;
        if delivered == 0 || (lost << BBR_SCALE) < LT_LOSS_THRESH as u64 * delivered {
            return;
        }
        let t_ms = (c.delivered_time / 1_000_000).saturating_sub(self.lt_last_stamp_ms);
        if t_ms < 1 {
            return;
        }
        let bw = delivered * BW_UNIT / (t_ms * 1000);
        self.lt_bw_interval_done(c, bw);
    }

    fn update_bw(&mut self, c: &Conn, rs: &RateSample) {
        self.round_start = false;
        let (Some(delivered), Some(interval)) = (rs.delivered, rs.interval) else {
            return;
        };
        let interval_us = interval / 1000;
        if interval_us == 0 {
            return;
        }
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = c.delivered;
            self.rtt_cnt += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_bw_sampling(c, rs.losses, rs.is_app_limited);
        let bw = delivered * BW_UNIT / interval_us;
        if !rs.is_app_limited || bw >= self.max_bw() {
            self.bw.running_max(BW_RTTS, self.rtt_cnt, bw);
        }
    }

    fn update_ack_aggregation(&mut self, c: &Conn, rs: &RateSample) {
        if rs.acked_sacked == 0 || rs.delivered.is_none() || rs.interval.is_none() {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1f);
            if self.extra_acked_win_rtts >= EXTRA_ACKED_WIN_RTTS {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let epoch_us = c.delivered_time.saturating_sub(self.ack_epoch_mstamp) / 1000;
        let mut expected = (self.bw() * epoch_us / BW_UNIT) as u32;
        if self.ack_epoch_acked <= expected
            || self.ack_epoch_acked + rs.acked_sacked >= ACK_EPOCH_ACKED_RESET
        {
            self.ack_epoch_acked = 0;
            self.ack_epoch_mstamp = c.delivered_time;
            expected = 0;
        }
        self.ack_epoch_acked = (self.ack_epoch_acked + rs.acked_sacked).min(0xfffff);
        let extra = (self.ack_epoch_acked - expected).min(c.cwnd);
        let i = self.extra_acked_win_idx;
        if extra > self.extra_acked[i] {
            self.extra_acked[i] = extra;
        }
    }

    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        let thresh = (self.full_bw * FULL_BW_THRESH as u64) >> BBR_SCALE;
        if self.max_bw() >= thresh {
            self.full_bw = self.max_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_CNT;
    }

    fn check_drain(&mut self, c: &mut Conn) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            c.ssthresh = self.inflight(c, self.max_bw(), BBR_UNIT);
        }
        if self.mode == Mode::Drain
            && self.packets_in_net_at_edt(c, c.in_flight)
                <= self.inflight(c, self.max_bw(), BBR_UNIT)
        {
            self.reset_probe_bw_mode(c);
        }
    }

    fn check_probe_rtt_done(&mut self, c: &mut Conn) {
        if self.probe_rtt_done_stamp.is_none_or(|d| c.now <= d) {
            return;
        }
        self.min_rtt_stamp = c.now;
        c.cwnd = c.cwnd.max(self.prior_cwnd);
        self.reset_mode(c);
    }

    fn update_min_rtt(&mut self, c: &mut Conn, rs: &RateSample) {
        let expired = c.now > self.min_rtt_stamp + MIN_RTT_WIN_NS;
        if let Some(rtt) = rs.rtt {
            let rtt_us = (rtt / 1000) as u32; // only a shorter one renews the stamp (Linux 5.10+)
            if rtt_us < self.min_rtt_us || expired {
                self.min_rtt_us = rtt_us;
                self.min_rtt_stamp = c.now;
            }
        }
        if expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(c);
            self.probe_rtt_done_stamp = None;
        }
        if self.mode == Mode::ProbeRtt {
            c.app_limited_until = Some((c.delivered + c.in_flight as u64).max(1));
            if self.probe_rtt_done_stamp.is_none() && c.in_flight <= CWND_MIN_TARGET {
                self.probe_rtt_done_stamp = Some(c.now + PROBE_RTT_MODE_NS);
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = c.delivered;
            } else if self.probe_rtt_done_stamp.is_some() {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(c);
                }
            }
        }
        if rs.delivered.is_some_and(|d| d > 0) {
            self.idle_restart = false;
        }
    }

    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (HIGH_GAIN, HIGH_GAIN),
            Mode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            Mode::ProbeBw => (
                if self.lt_use_bw {
                    BBR_UNIT
                } else {
                    PACING_GAIN[self.cycle_idx as usize]
                },
                CWND_GAIN,
            ),
            Mode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: Some(cwnd) while conserving packets.
    fn recover_or_restore(&mut self, c: &Conn, rs: &RateSample, acked: u32) -> (u32, bool) {
        let state = c.ca_state;
        let mut cwnd = c.cwnd;
        if rs.losses > 0 {
            cwnd = cwnd.saturating_sub(rs.losses).max(1);
        }
        if state == CaState::Recovery && self.prev_ca_state != CaState::Recovery {
            self.packet_conservation = true;
            self.next_rtt_delivered = c.delivered;
            cwnd = c.in_flight + acked;
        } else if self.prev_ca_state >= CaState::Recovery && state < CaState::Recovery {
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            return (cwnd.max(c.in_flight + acked), true);
        }
        (cwnd, false)
    }

    fn set_cwnd(&mut self, c: &mut Conn, rs: &RateSample, acked: u32, bw: u64, gain: u32) {
        let mut cwnd = c.cwnd;
        if acked > 0 {
            let (w, conserving) = self.recover_or_restore(c, rs, acked);
            cwnd = w;
            if !conserving {
                let mut target = self.bdp(bw, gain);
                target += self.ack_aggregation_cwnd();
                target = self.quantization_budget(c, target);
                if self.full_bw_reached {
                    cwnd = (cwnd + acked).min(target);
                } else if cwnd < target || c.delivered < INIT_CWND as u64 {
                    cwnd += acked;
                }
                cwnd = cwnd.max(CWND_MIN_TARGET);
            }
        }
        c.cwnd = cwnd.min(c.cwnd_clamp);
        if self.mode == Mode::ProbeRtt {
            c.cwnd = c.cwnd.min(CWND_MIN_TARGET);
        }
    }
}

impl LinuxCongestion for Bbr {
    fn ssthresh(&mut self, c: &Conn) -> u32 {
        self.save_cwnd(c);
        c.ssthresh
    }

    fn cong_avoid(&mut self, _c: &mut Conn, _acked: u32) {}

    fn undo_cwnd(&mut self, c: &Conn) -> u32 {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.reset_lt_bw_sampling(c);
        c.cwnd
    }

    fn set_state(&mut self, c: &mut Conn, new: CaState) {
        if new == CaState::Loss {
            self.prev_ca_state = CaState::Loss;
            self.full_bw = 0;
            self.round_start = true;
            self.lt_bw_sampling(c, 1, false);
        }
    }

    fn cwnd_event(&mut self, c: &mut Conn, ev: CaEvent) {
        if ev == CaEvent::TxStart && c.app_limited {
            self.idle_restart = true;
            self.ack_epoch_mstamp = c.now;
            self.ack_epoch_acked = 0;
            if self.mode == Mode::ProbeBw {
                let bw = self.bw();
                self.set_pacing_rate(c, bw, BBR_UNIT);
            } else if self.mode == Mode::ProbeRtt {
                self.check_probe_rtt_done(c);
            }
        }
    }

    /// `bbr_main`.
    fn cong_control(&mut self, c: &mut Conn, rs: &RateSample) -> bool {
        if c.pacing_rate == 0.0 {
            self.init_pacing_rate_from_rtt(c);
        }
        self.update_bw(c, rs);
        self.update_ack_aggregation(c, rs);
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(c, rs) {
            self.advance_cycle_phase(c);
        }
        self.check_full_bw_reached(rs);
        self.check_drain(c);
        self.update_min_rtt(c, rs);
        self.update_gains();
        let bw = self.bw();
        self.set_pacing_rate(c, bw, self.pacing_gain);
        self.set_cwnd(c, rs, rs.acked_sacked, bw, self.cwnd_gain);
        true
    }

    fn wants_pacing(&self) -> bool {
        true
    }

    /// `bbr_min_tso_segs` through `tcp_tso_autosize`: about 1 ms of data at the pacing rate, at
    /// least two segments (one below 1.2 Mbit/s).
    fn tso_segs(&self, c: &Conn) -> u32 {
        self.tso_segs_goal(c)
    }
}
