//! The sender's retransmission timer and RTT estimator, as ns-2.35's `TcpAgent`
//! (`rtt_update`, `rtt_timeout`, `set_rtx_timer`, `newtimer`, `rtt_backoff`): Jacobson/Karels
//! with integer-scaled srtt/rttvar on a clock of granularity `tick`, RFC 2988's clamp to
//! `min_rto` before backing off, exponential backoff capped at 64 and `max_rto`.

use super::Ns2Sender;
use crate::units::{SimTime, NS_PER_SEC};

const T_SRTT_BITS: u32 = 3;
pub(super) const T_RTTVAR_BITS: u32 = 2;
const RTTVAR_EXP: u32 = 2;

impl Ns2Sender {
    pub(super) fn rtt_timeout(&self) -> f64 {
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

    pub(super) fn set_rtx_timer(&mut self, now: SimTime) {
        let d = crate::units::from_secs(self.rtt_timeout());
        self.rtx_deadline = Some(now + d);
        self.rtx_gen = self.rtx_gen.wrapping_add(1);
    }

    pub(super) fn cancel_rtx_timer(&mut self) {
        if self.rtx_deadline.is_some() {
            self.rtx_deadline = None;
            self.rtx_gen = self.rtx_gen.wrapping_add(1);
        }
    }

    pub(super) fn newtimer(&mut self, now: SimTime, ackno: i64) {
        if self.t_seqno > ackno || ackno < self.maxseq || self.cwnd < 1.0 {
            self.set_rtx_timer(now);
        } else {
            self.cancel_rtx_timer();
        }
    }

    pub(super) fn rtt_backoff(&mut self) {
        if self.backoff < 64 || self.rtt_timeout() < self.max_rto {
            self.backoff <<= 1;
        }
        if self.backoff > 8 {
            // Backed off this far: move srtt into the variance (ns-2, after BSD).
            self.t_rttvar += self.t_srtt >> T_SRTT_BITS;
            self.t_srtt = 0;
        }
    }

    pub(super) fn reset_rtx_timer(&mut self, now: SimTime, mild: bool, backoff: bool) {
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
    pub(super) fn rtt_update(&mut self, now: SimTime, tao_ns: u64) {
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
}
