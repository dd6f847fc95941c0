//! RIO — RED with In and Out (Clark & Fang, "Explicit Allocation of Best-Effort Packet
//! Delivery Service", IEEE/ACM ToN 1998), generalised to up to three drop precedences
//! (RFC 2597: AFx1, AFx2, AFx3; precedence 0 is IN/green).
//!
//! Each precedence `p` has its own RED curve and count (a [`RedDropper`]) and is judged on its
//! own average:
//! * **RIO-C** (coupled, Clark & Fang's RIO): `avg[p]` estimates the number of queued packets
//!   of precedence ≤ p — `avg_in` counts IN packets only, `avg_total` every packet. An arrival
//!   of precedence `p` updates every average that counts it (`avg[j]` for `j ≥ p`), each
//!   from the backlog it estimates.
//! * **RIO-D** (decoupled): `avg[p]` estimates the backlog of precedence `p` alone and only
//!   arrivals of precedence `p` update it.
//!
//! The averaging, idle correction, count spreading and forced drops are RED's (see
//! [`super::red`]); the physical limit applies to the whole queue. Packet mode only.

use super::af::{curve_param, read_curve, AfAverage, AF_AVERAGE};
use super::dsred::{DsredMode, DsredOptions, Flavoured, AF_ECN};
use super::ewma::AvgQueue;
use super::red::{RedCurve, RedDropper};
use super::registry::{LineDiscipline, Ns2Export, QueueDiscipline};
use super::{Aqm, QueueView, Verdict};
use crate::packet::PacketMeta;
use crate::params::typed::{Decl, Word};
use crate::params::{key_error, KeyError, Param, ParamKind, Table, FLAVOUR, LIMIT};
use crate::rng::SimRng;
use crate::units::{Limit, SimTime};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RioMode {
    Coupled,
    Decoupled,
}

#[derive(Debug, Clone)]
pub struct Rio {
    pub mode: RioMode,
    pub w_q: f64,
    /// Link capacity in mean-size packets per second (idle correction).
    pub ptc: f64,
    /// Per precedence: the average it is judged on, and its dropper.
    pub avg: Vec<AvgQueue>,
    pub droppers: Vec<RedDropper>,
}

impl Rio {
    /// `curves[p]` is precedence p's RED curve (1 to 3 of them).
    pub fn new(mode: RioMode, curves: &[RedCurve], w_q: f64, wait: bool, ptc: f64) -> Self {
        assert!(
            (1..=3).contains(&curves.len()),
            "RIO takes 1 to 3 precedences"
        );
        Rio {
            mode,
            w_q,
            ptc,
            avg: vec![AvgQueue::default(); curves.len()],
            droppers: curves.iter().map(|c| RedDropper::new(*c, wait)).collect(),
        }
    }

    /// Precedences beyond the configured ones are judged as the last (lowest priority) one.
    #[inline]
    pub fn level(&self, prec: u8) -> usize {
        (prec as usize).min(self.droppers.len() - 1)
    }

    /// The backlog `avg[j]` estimates, from the per-precedence queue lengths.
    #[inline]
    fn backlog(&self, j: usize, q: &QueueView) -> f64 {
        let n = self.droppers.len();
        let by = |k: usize| -> u64 {
            // Packets of precedences the configuration folds into the last level count there.
            if k == n - 1 {
                q.len_by_prec[k..].iter().sum()
            } else {
                q.len_by_prec[k]
            }
        };
        match self.mode {
            RioMode::Coupled => (0..=j).map(by).sum::<u64>() as f64,
            RioMode::Decoupled => by(j) as f64,
        }
    }
}

impl Aqm for Rio {
    fn on_enqueue(
        &mut self,
        now: SimTime,
        pkt: &PacketMeta,
        q: QueueView,
        rng: &mut SimRng,
    ) -> Verdict {
        let p = self.level(pkt.prec);
        let n = self.droppers.len();
        let updated = match self.mode {
            RioMode::Coupled => p..n,
            RioMode::Decoupled => p..p + 1,
        };
        for j in updated {
            let b = self.backlog(j, &q);
            self.avg[j].on_arrival(now, b, self.w_q, self.ptc);
        }
        let avg = self.avg[p].avg;
        let v = self.droppers[p].judge(avg, pkt.size, None, q.len_pkts as f64, rng);
        if v == Verdict::ForcedDrop {
            self.droppers[p].on_forced_drop();
        }
        v
    }

    fn on_overflow(&mut self, _now: SimTime, pkt: &PacketMeta, _decided: Verdict) {
        let p = self.level(pkt.prec);
        self.droppers[p].on_forced_drop();
    }

    fn on_idle(&mut self, now: SimTime) {
        for a in &mut self.avg {
            a.on_idle(now);
        }
    }

    /// `avg_in` (the average of precedence 0).
    fn average(&self) -> Option<f64> {
        Some(self.avg[0].avg)
    }

    fn averages(&self) -> [f64; 3] {
        let mut out = [f64::NAN; 3];
        for (o, a) in out.iter_mut().zip(&self.avg) {
            *o = a.avg;
        }
        out
    }
}

/// RIO's configuration: the mode, the averaging and a curve per precedence, IN first.
#[derive(Debug, Clone)]
pub struct RioConfig {
    pub mode: RioMode,
    pub avg: AfAverage,
    pub curves: Vec<RedCurve>,
    pub options: DsredOptions,
}

/// The `in`, `mid` and `out` curve keys of RIO and WRED.
pub const PRECEDENCE_CURVES: [Param; 3] = [
    curve_param("in", "Curve of precedence 0 (AFx1, IN, green)."),
    super::af::optional_curve_param(
        "mid",
        "Curve of precedence 1 (AFx2) when three precedences are used (optional).",
    ),
    curve_param(
        "out",
        "Curve of the lowest precedence (OUT; AFx3, or AFx2 with two; and best effort).",
    ),
];

/// RIO's `mode`.
const MODE: Decl<Word> = Decl::new(
    "mode",
    ParamKind::Choice {
        choices: &["coupled", "decoupled"],
    },
    "coupled",
    "RIO-C (each average counts its precedence and all better ones) or RIO-D.",
);

/// The IN, optional mid and OUT curves of a RIO or WRED queue.
pub fn read_precedences(t: &Table, gentle: bool) -> Result<Vec<RedCurve>, KeyError> {
    for name in ["in", "out"] {
        if !t.has(name) {
            return Err(key_error(
                t.key(name),
                format!(
                    "a {} queue needs an `{name}` curve {{ min_th, max_th, max_p }}",
                    t.kind()
                ),
            ));
        }
    }
    let mut curves = vec![read_curve(t, "in", gentle)?.expect("present")];
    if let Some(m) = read_curve(t, "mid", gentle)? {
        curves.push(m);
    }
    curves.push(read_curve(t, "out", gentle)?.expect("present"));
    Ok(curves)
}

impl QueueDiscipline for RioConfig {
    const AVERAGES: crate::aqm::registry::Averages = crate::aqm::registry::Averages {
        one: None,
        by_mode: &[
            (
                "coupled",
                ["avg_in (RIO-C)", "avg_total (RIO-C)"],
                ["avg_in (RIO-C)", "avg_in+mid (RIO-C)", "avg_total (RIO-C)"],
            ),
            (
                "decoupled",
                ["avg_in (RIO-D)", "avg_out (RIO-D)"],
                ["avg_in (RIO-D)", "avg_mid (RIO-D)", "avg_out (RIO-D)"],
            ),
        ],
    };
    const DOC: &'static str = "RIO (Clark & Fang 1998): a RED curve and count per drop precedence; coupled (RIO-C, avg_in and avg_total) or decoupled (RIO-D).";
    const NS3: Result<&'static str, &'static str> =
        Err("RIO (multi-precedence RED) has no ns-3 queue disc");
    const NS2_DSRED: &'static [(&'static str, &'static str)] =
        &[("coupled", "RIO-C"), ("decoupled", "RIO-D")];
    const PARAMS: &'static [Param] = &[
        LIMIT,
        AF_AVERAGE[0],
        AF_AVERAGE[1],
        AF_AVERAGE[2],
        AF_AVERAGE[3],
        MODE.param,
        PRECEDENCE_CURVES[0],
        PRECEDENCE_CURVES[1],
        PRECEDENCE_CURVES[2],
        AF_ECN.param,
        FLAVOUR,
    ];
    fn hint(key: &str) -> &'static str {
        match key {
            "min_th" | "max_th" | "max_p" => {
                ": give each precedence's curve as `in`, `mid` and `out` tables"
            }
            "avg_out" => ": an `avg_out` curve makes it RI+O, use type = \"rio_plus_o\"",
            _ => "",
        }
    }
    fn from_table(t: &Table, limit: Limit) -> Result<Self, KeyError> {
        let avg = AfAverage::read(t)?;
        let mode = match t.get(&MODE)? {
            "decoupled" => RioMode::Decoupled,
            _ => RioMode::Coupled,
        };
        let curves = read_precedences(t, avg.gentle)?;
        Ok(RioConfig {
            mode,
            avg,
            options: DsredOptions::read(t, &avg, &curves, limit)?,
            curves,
        })
    }
    fn ns2(&self, limit: Limit) -> Ns2Export {
        DsredOptions::ns2(&self.avg, &self.curves, limit)
    }
    fn emulable(&self) -> bool {
        // decides at enqueue from the codepoint and its own state, as in the simulator
        true
    }
}

impl LineDiscipline for RioConfig {
    type Runtime = Flavoured<Rio>;
    fn build(&self, link_bps: u64) -> Flavoured<Rio> {
        let a = &self.avg;
        let reference = Rio::new(self.mode, &self.curves, a.w_q, a.wait, a.ptc(link_bps));
        let mode = match self.mode {
            RioMode::Coupled => DsredMode::RioC,
            RioMode::Decoupled => DsredMode::RioD,
        };
        self.options
            .build(reference, mode, a, &self.curves, link_bps)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::PacketKind;
    use crate::units::Limit;

    fn curves() -> [RedCurve; 2] {
        [
            RedCurve {
                min_th: 40.0,
                max_th: 70.0,
                max_p: 0.02,
                gentle: false,
            },
            RedCurve {
                min_th: 10.0,
                max_th: 40.0,
                max_p: 0.2,
                gentle: false,
            },
        ]
    }

    fn pkt(prec: u8) -> PacketMeta {
        let mut p = PacketMeta::new(0, PacketKind::Data, 1000, 0, 0);
        p.prec = prec;
        p
    }

    fn view(in_: u64, out: u64) -> QueueView {
        QueueView {
            len_pkts: in_ + out,
            len_bytes: 1000 * (in_ + out),
            limit: Limit::Packets(1000),
            len_by_prec: [in_, out, 0],
        }
    }

    /// RIO-C: avg_in follows only the IN backlog and moves only on IN arrivals; avg_total
    /// follows the whole backlog and moves on every arrival.
    #[test]
    fn coupled_averages_follow_their_backlogs() {
        let w = 0.01;
        let mut r = Rio::new(RioMode::Coupled, &curves(), w, true, 1000.0);
        for a in &mut r.avg {
            a.idle = false;
        }
        let mut rng = SimRng::derive(1, 1);
        let (mut ein, mut etot) = (0.0, 0.0);
        for i in 0..2000u64 {
            let (qi, qo) = (i % 7, 20 + i % 5);
            let prec = (i % 3 == 0) as u8; // one OUT in three
            r.on_enqueue(i, &pkt(prec), view(qi, qo), &mut rng);
            if prec == 0 {
                ein = (1.0 - w) * ein + w * qi as f64;
            }
            etot = (1.0 - w) * etot + w * (qi + qo) as f64;
            assert!((r.avg[0].avg - ein).abs() < 1e-9);
            assert!((r.avg[1].avg - etot).abs() < 1e-9);
        }
    }

    /// RIO-D: each average follows its own precedence's backlog only.
    #[test]
    fn decoupled_averages_are_independent() {
        let w = 0.01;
        let mut r = Rio::new(RioMode::Decoupled, &curves(), w, true, 1000.0);
        for a in &mut r.avg {
            a.idle = false;
        }
        let mut rng = SimRng::derive(1, 1);
        let (mut ein, mut eout) = (0.0, 0.0);
        for i in 0..2000u64 {
            let (qi, qo) = (i % 7, 20 + i % 5);
            let prec = (i % 3 == 0) as u8;
            r.on_enqueue(i, &pkt(prec), view(qi, qo), &mut rng);
            if prec == 0 {
                ein = (1.0 - w) * ein + w * qi as f64;
            } else {
                eout = (1.0 - w) * eout + w * qo as f64;
            }
            assert!((r.avg[0].avg - ein).abs() < 1e-9);
            assert!((r.avg[1].avg - eout).abs() < 1e-9);
        }
    }

    /// With the averages held fixed, each precedence is dropped at the rate its own curve
    /// gives (2·p_b for ns-2's count spreading without `wait`), OUT far more than IN.
    #[test]
    fn drop_rates_follow_each_precedence_curve() {
        let mut r = Rio::new(RioMode::Coupled, &curves(), 1e-9, false, 1000.0);
        let mut rng = SimRng::derive(7, 7);
        // avg_in = 55 (p_b = 0.02 * 15/30 = 0.01); avg_total = 25 (p_b = 0.2 * 15/30 = 0.1).
        r.avg[0].avg = 55.0;
        r.avg[1].avg = 25.0;
        for a in &mut r.avg {
            a.idle = false;
        }
        let n = 200_000;
        let mut drops = [0u32; 2];
        for i in 0..n {
            let prec = (i % 2) as u8;
            // Feed the backlogs equal to the averages so the tiny w_q keeps them in place.
            let v = r.on_enqueue(i as u64, &pkt(prec), view(55, 0), &mut rng);
            r.avg[0].avg = 55.0;
            r.avg[1].avg = 25.0;
            if v == Verdict::EarlyDrop {
                drops[prec as usize] += 1;
            }
        }
        let rate_in = drops[0] as f64 / (n / 2) as f64;
        let rate_out = drops[1] as f64 / (n / 2) as f64;
        assert!((rate_in - 0.02).abs() < 0.002, "{rate_in}");
        assert!((rate_out - 0.2).abs() < 0.01, "{rate_out}");
    }

    #[test]
    fn unconfigured_precedences_fold_into_the_last() {
        let r = Rio::new(RioMode::Coupled, &curves(), 0.002, true, 1000.0);
        assert_eq!(r.level(2), 1);
        assert_eq!(
            r.backlog(
                1,
                &QueueView {
                    len_pkts: 6,
                    len_bytes: 0,
                    limit: Limit::Packets(10),
                    len_by_prec: [1, 2, 3]
                }
            ),
            6.0
        );
    }
}
