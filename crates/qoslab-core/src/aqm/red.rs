//! RED — Random Early Detection (Floyd & Jacobson, "Random Early Detection Gateways for
//! Congestion Avoidance", IEEE/ACM ToN 1993), with the behaviour of ns-2.35's `REDQueue`:
//!
//! * the average is updated on every arrival from the queue length *before* the arrival
//!   (see [`AvgQueue`]), with the idle-period correction;
//! * `p_b = max_p · (avg − min_th) / (max_th − min_th)` between the thresholds; in gentle mode
//!   `p_b` rises linearly from `max_p` at `max_th` to 1 at `2·max_th` instead of jumping to 1;
//! * drops are spread by `count` (packets accepted since the last early drop). With
//!   `wait = false` this is the paper's `p_a = p_b / (1 − count·p_b)`; with `wait = true`
//!   (ns-2's default) `p_a = 0` while `count·p_b < 1`, then `p_b / (2 − count·p_b)`, which
//!   spaces drops more evenly;
//! * the first arrival after the average crosses `min_th` is never dropped (count := 1), and
//!   nothing is dropped early while the instantaneous queue holds at most one packet;
//! * in byte mode the average and thresholds are in bytes (thresholds given in mean-size
//!   packets are scaled by `mean_pkt_size`) and `p_a` is scaled by `size / mean_pkt_size`;
//! * with `ecn`, an early "drop" of an ECN-capable packet marks it instead.
//!
//! The pieces ([`RedCurve`], [`RedDropper`]) are public so that RIO, WRED and the papers'
//! variants reuse them.

use super::ewma::AvgQueue;
use super::{Aqm, QueueView, Verdict};
use crate::packet::PacketMeta;
use crate::rng::SimRng;
use crate::units::SimTime;

/// The drop-probability curve: thresholds in the unit of the average (packets or bytes).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RedCurve {
    pub min_th: f64,
    pub max_th: f64,
    pub max_p: f64,
    pub gentle: bool,
}

impl RedCurve {
    pub fn validate(&self) -> Result<(), String> {
        if self.min_th.is_nan() || self.min_th < 0.0 {
            return Err(format!("min_th must be >= 0, got {}", self.min_th));
        }
        if self.max_th.is_nan() || self.max_th <= self.min_th {
            return Err(format!(
                "min_th ({}) must be smaller than max_th ({})",
                self.min_th, self.max_th
            ));
        }
        if !(self.max_p > 0.0 && self.max_p <= 1.0) {
            return Err(format!("max_p must be in (0, 1], got {}", self.max_p));
        }
        Ok(())
    }

    /// `p_b` for an average `avg` (before count-based spreading); `None` above the forced-drop
    /// boundary (`max_th`, or `2·max_th` in gentle mode).
    #[inline]
    pub fn p_b(&self, avg: f64) -> Option<f64> {
        if avg < self.min_th {
            Some(0.0)
        } else if avg < self.max_th {
            Some(self.max_p * (avg - self.min_th) / (self.max_th - self.min_th))
        } else if self.gentle && avg < 2.0 * self.max_th {
            Some(self.max_p + (1.0 - self.max_p) * (avg - self.max_th) / self.max_th)
        } else {
            None
        }
    }
}

/// RED's count-based early-drop decision for one curve (one drop precedence in RIO/WRED).
#[derive(Debug, Clone, Copy)]
pub struct RedDropper {
    pub curve: RedCurve,
    pub wait: bool,
    /// Packets accepted since the last early drop.
    pub count: f64,
    /// Bytes accepted since the last early drop (byte mode).
    pub count_bytes: u64,
    /// Whether the previous arrival already saw the average above `min_th`.
    above_min: bool,
    /// The last early-drop probability `p_a` (for inspection).
    pub last_p: f64,
}

impl RedDropper {
    pub fn new(curve: RedCurve, wait: bool) -> Self {
        RedDropper {
            curve,
            wait,
            count: 0.0,
            count_bytes: 0,
            above_min: false,
            last_p: 0.0,
        }
    }

    /// Count-based spreading of `p_b` into `p_a` (ns-2 `modify_p`), for `count` arrivals.
    #[inline]
    pub fn spread(p_b: f64, count: f64, wait: bool) -> f64 {
        let cp = count * p_b;
        let p = if wait {
            if cp < 1.0 {
                0.0
            } else if cp < 2.0 {
                p_b / (2.0 - cp)
            } else {
                1.0
            }
        } else if cp < 1.0 {
            p_b / (1.0 - cp)
        } else {
            1.0
        };
        p.min(1.0)
    }

    /// Decides for an arrival of `size` bytes. `qlen` is the instantaneous queue in the
    /// unit of the average (packets, or bytes in byte mode, where `mean_pkt_size` is given):
    /// nothing is dropped early while it holds at most one unit.
    #[inline]
    pub fn judge(
        &mut self,
        avg: f64,
        size: u32,
        mean_pkt_size: Option<u32>,
        qlen: f64,
        rng: &mut SimRng,
    ) -> Verdict {
        self.count += 1.0;
        self.count_bytes += size as u64;
        if avg >= self.curve.min_th && qlen > 1.0 {
            match self.curve.p_b(avg) {
                None => Verdict::ForcedDrop,
                Some(_) if !self.above_min => {
                    // First arrival above min_th: restart the count, never drop.
                    self.count = 1.0;
                    self.count_bytes = size as u64;
                    self.above_min = true;
                    self.last_p = 0.0;
                    Verdict::Enqueue
                }
                Some(p_b) => {
                    let p = match mean_pkt_size {
                        None => Self::spread(p_b, self.count, self.wait),
                        Some(mean) => {
                            // ns-2 byte mode: whole mean-size packets since the last drop,
                            // then scaled by this packet's size.
                            let count1 = (self.count_bytes / mean as u64) as f64;
                            let p = Self::spread(p_b, count1, self.wait);
                            if p < 1.0 {
                                (p * size as f64 / mean as f64).min(1.0)
                            } else {
                                p
                            }
                        }
                    };
                    self.last_p = p;
                    if p > 0.0 && rng.uniform() <= p {
                        self.count = 0.0;
                        self.count_bytes = 0;
                        Verdict::EarlyDrop
                    } else {
                        Verdict::Enqueue
                    }
                }
            }
        } else {
            self.last_p = 0.0;
            self.above_min = false;
            Verdict::Enqueue
        }
    }

    /// A forced or overflow drop restarts the count (ns-2's fix credited to Philip Liu).
    #[inline]
    pub fn on_forced_drop(&mut self) {
        self.count = 0.0;
        self.count_bytes = 0;
    }
}

/// RED parameters, validated. Thresholds are in packets (of `mean_pkt_size` in byte mode).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RedParams {
    pub curve: RedCurve,
    /// `w_q`, the EWMA weight, in (0, 1).
    pub w_q: f64,
    pub wait: bool,
    pub byte_mode: bool,
    /// Mean packet size in bytes: scales thresholds in byte mode and the idle correction.
    pub mean_pkt_size: u32,
    pub ecn: bool,
    /// Link capacity in mean-size packets per second (idle correction), set by the host.
    pub ptc: f64,
}

impl RedParams {
    pub fn validate(&self) -> Result<(), String> {
        self.curve.validate()?;
        if !(self.w_q > 0.0 && self.w_q < 1.0) {
            return Err(format!("w_q must be in (0, 1), got {}", self.w_q));
        }
        if self.mean_pkt_size == 0 {
            return Err("mean_pkt_size must be positive".into());
        }
        Ok(())
    }
}

#[derive(Debug, Clone)]
pub struct Red {
    pub params: RedParams,
    pub est: AvgQueue,
    pub dropper: RedDropper,
}

impl Red {
    pub fn new(params: RedParams) -> Self {
        let mut curve = params.curve;
        if params.byte_mode {
            let s = params.mean_pkt_size as f64;
            curve.min_th *= s;
            curve.max_th *= s;
        }
        Red {
            params,
            est: AvgQueue::default(),
            dropper: RedDropper::new(curve, params.wait),
        }
    }
}

impl Aqm for Red {
    fn on_enqueue(
        &mut self,
        now: SimTime,
        pkt: &PacketMeta,
        q: QueueView,
        rng: &mut SimRng,
    ) -> Verdict {
        let p = &self.params;
        let (qlen, mean) = if p.byte_mode {
            (q.len_bytes as f64, Some(p.mean_pkt_size))
        } else {
            (q.len_pkts as f64, None)
        };
        let avg = self.est.on_arrival(now, qlen, p.w_q, p.ptc);
        let mut v = self.dropper.judge(avg, pkt.size, mean, qlen, rng);
        if q.full_for(pkt.size as u64) {
            v = Verdict::Overflow;
        }
        match v {
            Verdict::ForcedDrop | Verdict::Overflow => self.dropper.on_forced_drop(),
            Verdict::EarlyDrop if p.ecn && pkt.ecn != 0 => v = Verdict::Mark,
            _ => {}
        }
        v
    }

    fn on_idle(&mut self, now: SimTime) {
        self.est.on_idle(now);
    }

    fn average(&self) -> Option<f64> {
        Some(self.est.avg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::PacketKind;
    use crate::units::Limit;

    fn curve(gentle: bool) -> RedCurve {
        RedCurve {
            min_th: 25.0,
            max_th: 75.0,
            max_p: 0.01,
            gentle,
        }
    }

    #[test]
    fn p_b_matches_the_formula_gentle_included() {
        let c = curve(false);
        assert_eq!(c.p_b(10.0), Some(0.0));
        assert!((c.p_b(25.0).unwrap() - 0.0).abs() < 1e-15);
        assert!((c.p_b(50.0).unwrap() - 0.005).abs() < 1e-15);
        assert!((c.p_b(74.999).unwrap() - 0.01 * 49.999 / 50.0).abs() < 1e-12);
        assert_eq!(c.p_b(75.0), None);
        let g = curve(true);
        assert!((g.p_b(75.0).unwrap() - 0.01).abs() < 1e-15);
        assert!((g.p_b(112.5).unwrap() - (0.01 + 0.99 * 0.5)).abs() < 1e-12);
        assert_eq!(g.p_b(150.0), None);
    }

    #[test]
    fn spreading_matches_both_forms() {
        // Floyd & Jacobson: p_a = p_b / (1 - count p_b).
        assert!((RedDropper::spread(0.01, 50.0, false) - 0.01 / 0.5).abs() < 1e-15);
        assert_eq!(RedDropper::spread(0.01, 100.0, false), 1.0);
        // ns-2 wait_: zero until count p_b reaches 1, then p_b / (2 - count p_b).
        assert_eq!(RedDropper::spread(0.01, 99.0, true), 0.0);
        assert!((RedDropper::spread(0.01, 150.0, true) - 0.01 / 0.5).abs() < 1e-15);
        assert_eq!(RedDropper::spread(0.01, 200.0, true), 1.0);
    }

    /// With the average held at a fixed level, the fraction of early drops is the inverse of
    /// the mean inter-drop gap. ns-2 counts the arriving packet before deciding, so the gap
    /// survives k arrivals with probability (1 − (k+1) p_b) / (1 − p_b); summing over k gives a
    /// mean gap of 1 / (2 p_b), i.e. a drop rate of 2 p_b.
    #[test]
    fn early_drop_rate_at_fixed_average() {
        let p_b = 0.02;
        let c = RedCurve {
            min_th: 0.0,
            max_th: 100.0,
            max_p: p_b * 2.0,
            gentle: false,
        };
        let mut d = RedDropper::new(c, false);
        d.above_min = true;
        let mut rng = SimRng::derive(3, 3);
        let n = 400_000;
        let drops = (0..n)
            .filter(|_| d.judge(50.0, 500, None, 10.0, &mut rng) == Verdict::EarlyDrop)
            .count();
        let rate = drops as f64 / n as f64;
        let expect = 2.0 * p_b;
        assert!((rate - expect).abs() / expect < 0.02, "{rate} vs {expect}");
    }

    #[test]
    fn first_packet_above_min_is_never_dropped_and_tiny_queues_are_safe() {
        let mut d = RedDropper::new(curve(false), false);
        let mut rng = SimRng::derive(1, 1);
        // avg far above max_th but only one packet queued: no drop.
        assert_eq!(d.judge(80.0, 500, None, 1.0, &mut rng), Verdict::Enqueue);
        assert_eq!(d.judge(80.0, 500, None, 5.0, &mut rng), Verdict::ForcedDrop);
        let mut d = RedDropper::new(curve(false), false);
        assert_eq!(d.judge(30.0, 500, None, 5.0, &mut rng), Verdict::Enqueue);
        assert_eq!(d.count, 1.0);
    }

    #[test]
    fn overflow_and_ecn() {
        let params = RedParams {
            curve: curve(false),
            w_q: 0.002,
            wait: true,
            byte_mode: false,
            mean_pkt_size: 500,
            ecn: true,
            ptc: 250.0,
        };
        let mut red = Red::new(params);
        let mut rng = SimRng::derive(1, 1);
        let mut p = PacketMeta::new(0, PacketKind::Data, 500, 0, 0);
        let full = QueueView {
            len_pkts: 10,
            len_bytes: 5000,
            limit: Limit::Packets(10),
            len_by_prec: [0; 3],
        };
        assert_eq!(red.on_enqueue(0, &p, full, &mut rng), Verdict::Overflow);
        // Hold the average between the thresholds: an ECN-capable packet is marked, never
        // early-dropped.
        red.est.avg = 74.0;
        red.est.idle = false;
        p.ecn = 2;
        let view = QueueView {
            len_pkts: 74,
            len_bytes: 37000,
            limit: Limit::Packets(1000),
            len_by_prec: [0; 3],
        };
        let mut marks = 0;
        for i in 0..5000 {
            match red.on_enqueue(i, &p, view, &mut rng) {
                Verdict::Mark => marks += 1,
                Verdict::Enqueue => {}
                v => panic!("unexpected {v:?}"),
            }
        }
        assert!(marks > 10, "{marks}");
    }
}
