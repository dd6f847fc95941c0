//! CUBIC as Linux's net/ipv4/tcp_cubic.c (RFC 9438): β = 717/1024, C = 410/1024 (bic_scale
//! 41), fast convergence, the TCP-friendly (Reno-emulation) region, the cnt cap of 1 segment
//! per 2 acknowledged, the 5 %/RTT cap before the first loss, epoch shift after idle, and
//! HyStart with both ACK-train and delay detection (`hystart_detect` 3, low window 16,
//! ACK delta 2 ms, delay threshold clamp(min_rtt/8, 4, 16) ms over 8 samples).
//!
//! Time is kept in ns rather than jiffies; the cubic root is computed exactly instead of by
//! the kernel's table-and-Newton approximation (which is within 0.2 %).

use super::{CaEvent, CaState, Conn, LinuxCongestion};
use crate::units::SimTime;

const BETA: u32 = 717;
const BETA_SCALE: u32 = 1024;
/// C = bic_scale·10/1024.
const C: f64 = 410.0 / 1024.0;
/// `beta_scale` = 8·(1024 + 717)/3/(1024 − 717): Reno-emulation increments.
const FRIENDLY_SCALE: u32 = 8 * (BETA_SCALE + BETA) / 3 / (BETA_SCALE - BETA);
const HYSTART_LOW_WINDOW: u32 = 16;
const HYSTART_ACK_DELTA_NS: u64 = 2_000_000;
const HYSTART_MIN_SAMPLES: u32 = 8;
const HYSTART_DELAY_MIN_NS: u64 = 4_000_000;
const HYSTART_DELAY_MAX_NS: u64 = 16_000_000;
const MS: u64 = 1_000_000;
const JIFFY: u64 = MS;

#[derive(Debug, Clone, Default)]
pub struct Cubic {
    cnt: u32,
    /// Wmax.
    pub last_max_cwnd: u32,
    last_cwnd: u32,
    last_time: SimTime,
    bic_origin_point: u32,
    /// K, seconds.
    bic_k: f64,
    /// Minimum delay, ns (0: none).
    pub delay_min: u64,
    epoch_start: Option<SimTime>,
    ack_cnt: u32,
    tcp_cwnd: u32,
    // HyStart
    pub found: bool,
    round_start: SimTime,
    end_seq: i64,
    last_ack: SimTime,
    curr_rtt: u64,
    sample_cnt: u32,
    /// Enabled (`hystart` module parameter).
    pub hystart: bool,
}

impl Cubic {
    pub fn new(c: &Conn) -> Self {
        let mut s = Cubic {
            hystart: true,
            ..Default::default()
        };
        s.hystart_reset(c);
        s
    }

    fn reset(&mut self) {
        let hystart = self.hystart;
        *self = Cubic {
            hystart,
            ..Default::default()
        };
    }

    fn hystart_reset(&mut self, c: &Conn) {
        self.round_start = c.now;
        self.last_ack = c.now;
        self.end_seq = c.nxt;
        self.curr_rtt = u64::MAX;
        self.sample_cnt = 0;
    }

    /// `bictcp_update`: sets `cnt`, the segments to acknowledge per cwnd increment.
    fn update(&mut self, c: &Conn, acked: u32) {
        let cwnd = c.cwnd;
        let now = c.now;
        self.ack_cnt += acked;
        if self.last_cwnd == cwnd && now.saturating_sub(self.last_time) <= 1_000_000_000 / 32 {
            return;
        }
        // The cubic function is re-evaluated at most once per jiffy.
        let same_jiffy = self.epoch_start.is_some() && now / JIFFY == self.last_time / JIFFY;
        if !same_jiffy {
            self.last_cwnd = cwnd;
            self.last_time = now;
            let epoch = match self.epoch_start {
                Some(e) => e,
                None => {
                    self.epoch_start = Some(now);
                    self.ack_cnt = acked;
                    self.tcp_cwnd = cwnd;
                    if self.last_max_cwnd <= cwnd {
                        self.bic_k = 0.0;
                        self.bic_origin_point = cwnd;
                    } else {
                        self.bic_k = ((self.last_max_cwnd - cwnd) as f64 / C).cbrt();
                        self.bic_origin_point = self.last_max_cwnd;
                    }
                    now
                }
            };
            // t = time since the epoch plus the minimum delay, in jiffies' resolution.
            let t_ns = (now - epoch) / JIFFY * JIFFY + self.delay_min / JIFFY * JIFFY;
            let t = t_ns as f64 / 1e9;
            let offs = (t - self.bic_k).abs();
            let delta = (C * offs * offs * offs) as u32;
            let target = if t < self.bic_k {
                self.bic_origin_point.saturating_sub(delta)
            } else {
                self.bic_origin_point + delta
            };
            self.cnt = if target > cwnd {
                cwnd / (target - cwnd)
            } else {
                100 * cwnd
            };
            if self.last_max_cwnd == 0 && self.cnt > 20 {
                self.cnt = 20; // 5 % per RTT before the first loss
            }
        }
        // TCP friendliness: the window Reno would have (tcp_friendliness = 1).
        let delta = (cwnd * FRIENDLY_SCALE) >> 3;
        if delta > 0 {
            while self.ack_cnt > delta {
                self.ack_cnt -= delta;
                self.tcp_cwnd += 1;
            }
        }
        if self.tcp_cwnd > cwnd {
            let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
            if self.cnt > max_cnt {
                self.cnt = max_cnt;
            }
        }
        self.cnt = self.cnt.max(2);
    }

    fn hystart_update(&mut self, c: &mut Conn, delay: u64) {
        if c.una > self.end_seq {
            self.hystart_reset(c);
        }
        // ACK train: ACKs closely spaced for longer than half the minimum delay.
        if c.now.saturating_sub(self.last_ack) <= HYSTART_ACK_DELTA_NS {
            self.last_ack = c.now;
            let mut threshold = self.delay_min + hystart_ack_delay(c);
            // An unpaced sender's ACK train is judged against half the minimum delay
            // (sk_pacing_status == SK_PACING_NONE), whatever its computed pacing rate.
            if !c.paced {
                threshold >>= 1;
            }
            if c.now.saturating_sub(self.round_start) > threshold {
                self.found = true;
                c.ssthresh = c.cwnd;
            }
        }
        // Delay increase over the round's first samples.
        if self.curr_rtt > delay {
            self.curr_rtt = delay;
        }
        if self.sample_cnt < HYSTART_MIN_SAMPLES {
            self.sample_cnt += 1;
        } else {
            let thresh = (self.delay_min >> 3).clamp(HYSTART_DELAY_MIN_NS, HYSTART_DELAY_MAX_NS);
            if self.curr_rtt > self.delay_min + thresh {
                self.found = true;
                c.ssthresh = c.cwnd;
            }
        }
    }
}

/// `hystart_ack_delay`: the ACK-train allowance for a paced sender, min(1 ms, 4 × 64 KB at
/// the pacing rate).
fn hystart_ack_delay(c: &Conn) -> u64 {
    if c.pacing_rate <= 0.0 {
        return 0;
    }
    let bytes_per_s = c.pacing_rate * c.mss as f64;
    ((4.0 * 65536.0 / bytes_per_s * 1e9) as u64).min(MS)
}

impl LinuxCongestion for Cubic {
    fn ssthresh(&mut self, c: &Conn) -> u32 {
        self.epoch_start = None;
        // Fast convergence: release bandwidth faster to newcomers.
        self.last_max_cwnd = if c.cwnd < self.last_max_cwnd {
            c.cwnd * (BETA_SCALE + BETA) / (2 * BETA_SCALE)
        } else {
            c.cwnd
        };
        (c.cwnd * BETA / BETA_SCALE).max(2)
    }

    fn cong_avoid(&mut self, c: &mut Conn, acked: u32) {
        if !c.is_cwnd_limited() {
            return;
        }
        let mut acked = acked;
        if c.in_slow_start() {
            acked = c.slow_start(acked);
            if acked == 0 {
                return;
            }
        }
        self.update(c, acked);
        c.cong_avoid_ai(self.cnt, acked);
    }

    fn set_state(&mut self, c: &mut Conn, new: CaState) {
        if new == CaState::Loss {
            self.reset();
            self.hystart_reset(c);
        }
    }

    fn cwnd_event(&mut self, c: &mut Conn, ev: CaEvent) {
        if ev == CaEvent::TxStart {
            // Idle: shift the epoch so the curve resumes where it stopped.
            if let Some(e) = self.epoch_start {
                let delta = c.now.saturating_sub(c.lsndtime);
                if delta > 0 {
                    self.epoch_start = Some((e + delta).min(c.now));
                }
            }
        }
    }

    fn pkts_acked(&mut self, c: &mut Conn, _acked: u32, rtt_ns: Option<u64>) {
        let Some(rtt) = rtt_ns else { return };
        // No delay samples within a second of a reduction.
        if self
            .epoch_start
            .is_some_and(|e| c.now.saturating_sub(e) < 1_000_000_000)
        {
            return;
        }
        let delay = rtt.max(1000);
        if self.delay_min == 0 || self.delay_min > delay {
            self.delay_min = delay;
        }
        if self.hystart && !self.found && c.in_slow_start() && c.cwnd >= HYSTART_LOW_WINDOW {
            self.hystart_update(c, delay);
        }
    }
}
