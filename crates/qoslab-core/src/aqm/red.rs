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
use super::registry::{LineDiscipline, Ns2Export, Ns2Value, QueueDiscipline};
use super::{Aqm, QueueView, Verdict};
use crate::packet::PacketMeta;
use crate::params::typed::{Bytes32, Decl};
use crate::params::{
    at_least, key_error, open, open_closed, KeyError, Param, ParamKind, Table, LIMIT,
};
use crate::rng::SimRng;
use crate::units::{Limit, SimTime};

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
        self.check().map_err(|(_, e)| e)
    }

    /// The curve's first bad field, named (`min_th`, `max_th` or `max_p`), and why.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if self.min_th.is_nan() || self.min_th < 0.0 {
            return Err((
                "min_th",
                format!("min_th must be >= 0, got {}", self.min_th),
            ));
        }
        if self.max_th.is_infinite() {
            // the early-drop slope would be 0: a curve that never drops early
            return Err((
                "max_th",
                format!("max_th must be finite, got {}", self.max_th),
            ));
        }
        if self.max_th.is_nan() || self.max_th <= self.min_th {
            return Err((
                "min_th",
                format!(
                    "min_th ({}) must be smaller than max_th ({})",
                    self.min_th, self.max_th
                ),
            ));
        }
        if !(self.max_p > 0.0 && self.max_p <= 1.0) {
            return Err((
                "max_p",
                format!("max_p must be in (0, 1], got {}", self.max_p),
            ));
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

impl Red {
    /// The queue length in the unit of the average (packets, or bytes in byte mode) and the
    /// mean packet size in byte mode.
    #[inline]
    fn backlog(&self, q: &QueueView) -> (f64, Option<u32>) {
        if self.params.byte_mode {
            (q.len_bytes as f64, Some(self.params.mean_pkt_size))
        } else {
            (q.len_pkts as f64, None)
        }
    }

    /// Updates the average for an arrival that finds `q`; returns the new average.
    #[inline]
    pub fn update_average(&mut self, now: SimTime, q: &QueueView) -> f64 {
        let (qlen, _) = self.backlog(q);
        let p = &self.params;
        self.est.on_arrival(now, qlen, p.w_q, p.ptc)
    }

    /// RED's decision for an arrival of `pkt` given the (updated) average `avg`.
    #[inline]
    pub fn decide(
        &mut self,
        avg: f64,
        pkt: &PacketMeta,
        q: &QueueView,
        rng: &mut SimRng,
    ) -> Verdict {
        let (qlen, mean) = self.backlog(q);
        let mut v = self.dropper.judge(avg, pkt.size, mean, qlen, rng);
        match v {
            Verdict::ForcedDrop => self.dropper.on_forced_drop(),
            Verdict::EarlyDrop if self.params.ecn && pkt.ecn != 0 => v = Verdict::Mark,
            _ => {}
        }
        v
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
        let avg = self.update_average(now, &q);
        self.decide(avg, pkt, &q, rng)
    }

    fn on_idle(&mut self, now: SimTime) {
        self.est.on_idle(now);
    }

    fn on_overflow(&mut self, _now: SimTime, _pkt: &PacketMeta, _decided: Verdict) {
        self.dropper.on_forced_drop();
    }

    fn average(&self) -> Option<f64> {
        Some(self.est.avg)
    }
}

pub const MIN_TH: Decl<f64> = Decl::new(
    "min_th",
    at_least(0.0),
    "required",
    "Minimum threshold of the average, packets (below it nothing is dropped early).",
);
pub const MAX_TH: Decl<f64> = Decl::new(
    "max_th",
    ParamKind::Number {
        min: Some(0.0),
        max: None,
        min_open: true,
        max_open: false,
    },
    "required",
    "Maximum threshold of the average, packets (greater than min_th).",
);
pub const MAX_P: Decl<f64> = Decl::new(
    "max_p",
    open_closed(0.0, 1.0),
    "0.1",
    "Early-drop probability at max_th.",
);
pub const W_Q: Decl<f64> = Decl::new(
    "w_q",
    open(0.0, 1.0),
    "0.002",
    "Weight of the average (EWMA of the queue length on each arrival).",
);
pub const GENTLE: Decl<bool> = Decl::new(
    "gentle",
    ParamKind::Bool,
    "false",
    "Gentle RED: the drop probability rises from max_p at max_th to 1 at 2·max_th.",
);
pub const WAIT: Decl<bool> = Decl::new(
    "wait",
    ParamKind::Bool,
    "true",
    "ns-2's wait_: no early drop until count·p_b ≥ 1, then p_b/(2 − count·p_b).",
);
pub const BYTE_MODE: Decl<bool> = Decl::new(
    "byte_mode",
    ParamKind::Bool,
    "false",
    "Average and thresholds in bytes (thresholds scaled by mean_pkt_size).",
);
pub const MEAN_PKT_SIZE: Decl<Bytes32> = Decl::new(
    "mean_pkt_size",
    ParamKind::Bytes,
    "500B",
    "Mean packet size: idle-time correction, and the byte-mode unit.",
)
.positive();
pub const ECN: Decl<bool> = Decl::new(
    "ecn",
    ParamKind::Bool,
    "false",
    "Mark ECN-capable packets instead of dropping them early (ns-2's setbit_).",
);

/// RED's configuration (the link's capacity is added when it is built).
#[derive(Debug, Clone, Copy)]
pub struct RedConfig {
    pub curve: RedCurve,
    pub w_q: f64,
    pub wait: bool,
    pub byte_mode: bool,
    pub mean_pkt_size: u32,
    pub ecn: bool,
}

impl RedConfig {
    pub fn params(&self, link_bps: u64) -> RedParams {
        RedParams {
            curve: self.curve,
            w_q: self.w_q,
            wait: self.wait,
            byte_mode: self.byte_mode,
            mean_pkt_size: self.mean_pkt_size,
            ecn: self.ecn,
            ptc: link_bps as f64 / (8.0 * self.mean_pkt_size as f64),
        }
    }

    /// Reads RED's keys with ns-2's defaults (max_p 0.1, w_q 0.002, `wait`, 500-byte packets);
    /// keys the kind does not take (e.g. FDD-RED's byte_mode) keep their defaults.
    pub fn read(t: &Table) -> Result<RedConfig, KeyError> {
        let c = RedConfig {
            curve: RedCurve {
                min_th: t.get(&MIN_TH)?,
                max_th: t.get(&MAX_TH)?,
                max_p: t.get(&MAX_P)?,
                gentle: t.get(&GENTLE)?,
            },
            w_q: t.get(&W_Q)?,
            wait: t.get(&WAIT)?,
            byte_mode: t.get(&BYTE_MODE)?,
            mean_pkt_size: t.get(&MEAN_PKT_SIZE)?,
            ecn: t.get(&ECN)?,
        };
        // an infinite max_th would make the early-drop slope 0: a queue that never drops early
        c.curve
            .check()
            .map_err(|(field, e)| key_error(t.key(field), e))?;
        Ok(c)
    }

    /// ns-2.35's Queue/RED settings for these parameters, non-adaptive (docs/ns2-behaviour.md).
    /// A byte limit is counted in mean-size packets (`queue_in_bytes_`); ns-2 reads a
    /// `thresh_` of 0 as "choose automatically", so 0 becomes 10⁻⁹.
    pub fn ns2_settings(&self, limit: Limit) -> Result<Vec<(&'static str, Ns2Value)>, String> {
        let mps = self.mean_pkt_size as u64;
        let (in_bytes, limit) = match limit {
            Limit::Bytes(b) if b % mps != 0 => {
                return Err(format!(
                    "ns-2 RED measures a byte limit in units of mean_pkt_size_bytes; limit_bytes {b} is not a multiple of {mps}"
                ))
            }
            Limit::Bytes(b) => (true, b / mps),
            Limit::Packets(p) => (false, p),
        };
        let min_th = if self.curve.min_th > 0.0 {
            self.curve.min_th
        } else {
            1.0e-9
        };
        let b = Ns2Value::Bool;
        Ok(vec![
            ("bytes_", b(self.byte_mode)),
            ("queue_in_bytes_", b(in_bytes)),
            ("thresh_", Ns2Value::Float(min_th)),
            ("maxthresh_", Ns2Value::Float(self.curve.max_th)),
            ("q_weight_", Ns2Value::Float(self.w_q)),
            ("linterm_", Ns2Value::Float(1.0 / self.curve.max_p)),
            ("mark_p_", Ns2Value::Str("1.0")),
            ("use_mark_p_", Ns2Value::Str("false")),
            ("gentle_", b(self.curve.gentle)),
            ("wait_", b(self.wait)),
            ("setbit_", b(self.ecn)),
            ("mean_pktsize_", Ns2Value::Int(mps)),
            ("idle_pktsize_", Ns2Value::Int(mps)),
            ("limit_", Ns2Value::Int(limit)),
            ("drop_tail_", Ns2Value::Str("true")),
            ("drop_front_", Ns2Value::Str("false")),
            ("drop_rand_", Ns2Value::Str("false")),
            ("ns1_compat_", Ns2Value::Str("false")),
            ("doubleq_", Ns2Value::Str("false")),
            ("adaptive_", Ns2Value::Str("0")),
            ("feng_adaptive_", Ns2Value::Str("0")),
            ("cautious_", Ns2Value::Str("0")),
            ("summarystats_", Ns2Value::Str("false")),
        ])
    }
}

impl QueueDiscipline for RedConfig {
    const AVERAGES: crate::aqm::registry::Averages = crate::aqm::registry::Averages {
        one: Some("RED's average queue"),
        by_mode: &[],
    };
    const DOC: &'static str =
        "RED (Floyd & Jacobson 1993) with ns-2.35's Queue/RED behaviour: idle correction, count spreading with `wait`, gentle, byte mode, ECN marking.";
    const NS3: Result<&'static str, &'static str> = Ok("ns3::RedQueueDisc");
    const PARAMS: &'static [Param] = &[
        LIMIT,
        MIN_TH.param,
        MAX_TH.param,
        MAX_P.param,
        W_Q.param,
        GENTLE.param,
        WAIT.param,
        BYTE_MODE.param,
        MEAN_PKT_SIZE.param,
        ECN.param,
    ];
    fn from_table(t: &Table, _limit: Limit) -> Result<Self, KeyError> {
        RedConfig::read(t)
    }
    fn ns2(&self, limit: Limit) -> Ns2Export {
        match self.ns2_settings(limit) {
            Ok(settings) => Ns2Export::Queue {
                class: "RED",
                settings,
                early_drops: true,
                ecn: self.ecn,
            },
            Err(e) => Ns2Export::Refused(e),
        }
    }
    fn emulable(&self) -> bool {
        // decides at enqueue from its own state, as in the simulator
        true
    }
}

impl LineDiscipline for RedConfig {
    type Runtime = Red;
    fn build(&self, link_bps: u64) -> Red {
        Red::new(self.params(link_bps))
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
        assert_eq!(
            crate::aqm::admit(&mut red, 0, &p, full, &mut rng),
            Verdict::Overflow
        );
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
