//! Adaptive RED (Floyd, Gummadi & Shenker, "Adaptive RED: An Algorithm for Increasing the
//! Robustness of RED's Active Queue Management", 2001), as ns-2.35's `Queue/RED` with
//! `adaptive_ 1` (`queue/red.cc`: `estimator`, `updateMaxP`).
//!
//! RED whose `max_p` adapts so that the average stays in the target band
//! `[min_th + 0.4·(max_th − min_th), max_th − 0.4·(max_th − min_th)]`: on an arrival, once
//! `interval` has passed since `max_p` last changed, the new average is compared with the band
//!
//! ```text
//!     avg < min_th + 0.4·Δ  and max_p > bottom:  max_p ← max_p · β          (multiplicative decrease)
//!     avg > max_th − 0.4·Δ  and max_p < top:     max_p ← max_p + min(α, max_p/4)  (additive increase)
//! ```
//!
//! and only a change restarts the interval. Defaults are the paper's and ns-2's: α = 0.01,
//! β = 0.9, interval 0.5 s, top 0.5, bottom min(0.01, 8·10⁴ / bandwidth) (ns-2 sets bottom
//! to 1/W for 1000-byte packets and 100 ms RTTs when `bottom_` is 0).
//!
//! One ns-2 detail is kept deliberately: in gentle mode the line from `max_th` to `2·max_th`
//! is computed once, from the *initial* `max_p` (`v_c`, `v_d` in `REDQueue::reset`), while the
//! linear region uses the adapted `max_p`. The paper's Fig. 2 draws the gentle line from the
//! current `max_p`; we follow ns-2 so that the two agree packet for packet, and say so here.
//! Everything else (averaging, idle correction, count spreading, `wait`, ECN) is RED's
//! ([`super::red`]).

use super::red::{
    Red, RedConfig, BYTE_MODE, ECN, GENTLE, MAX_P, MAX_TH, MEAN_PKT_SIZE, MIN_TH, WAIT, W_Q,
};
use super::registry::{LineDiscipline, Ns2Export, Ns2Value, QueueDiscipline};
use super::{Aqm, Gauge, QueueView, Verdict};
use crate::packet::PacketMeta;
use crate::params::typed::{Decl, Duration};
use crate::params::{key_error, open, open_closed, KeyError, Param, ParamKind, Table, LIMIT};
use crate::rng::SimRng;
use crate::units::{Limit, SimTime};

/// The adaptation's parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AredParams {
    /// α: the additive increase of max_p (capped at max_p/4).
    pub alpha: f64,
    /// β: the multiplicative decrease of max_p.
    pub beta: f64,
    /// Least time between two changes of max_p, ns.
    pub interval: SimTime,
    /// Bounds of max_p; `None`: bottom = min(0.01, 8·10⁴ / link bandwidth), as ns-2.
    pub top: f64,
    pub bottom: Option<f64>,
}

/// Adaptive RED's configuration: RED's and the adaptation's parameters.
#[derive(Debug, Clone, Copy)]
pub struct AredConfig {
    pub red: RedConfig,
    pub adapt: AredParams,
}

#[derive(Debug, Clone)]
pub struct AdaptiveRed {
    pub red: Red,
    pub adapt: AredParams,
    /// The max_p the queue was configured with (ns-2's gentle line uses it).
    pub initial_max_p: f64,
    /// The current, adapted max_p.
    pub cur_max_p: f64,
    /// The bottom of max_p for this link.
    pub bottom: f64,
    /// When max_p last changed.
    pub last_set: SimTime,
    /// How many times max_p went up and down.
    pub increases: u64,
    pub decreases: u64,
}

impl AdaptiveRed {
    pub fn new(c: &AredConfig, link_bps: u64) -> Self {
        let max_p = c.red.curve.max_p;
        AdaptiveRed {
            red: Red::new(c.red.params(link_bps)),
            adapt: c.adapt,
            initial_max_p: max_p,
            cur_max_p: max_p,
            bottom: c.adapt.bottom.unwrap_or_else(|| default_bottom(link_bps)),
            last_set: 0,
            increases: 0,
            decreases: 0,
        }
    }

    /// ns-2's `updateMaxP`: the AIMD rule on the new average.
    pub fn update_max_p(&mut self, avg: f64, now: SimTime) {
        // The dropper's thresholds are in the unit of the average (bytes in byte mode).
        let c = &self.red.dropper.curve;
        let (min_th, max_th) = (c.min_th, c.max_th);
        let part = 0.4 * (max_th - min_th);
        if avg < min_th + part && self.cur_max_p > self.bottom {
            self.cur_max_p *= self.adapt.beta;
            self.last_set = now;
            self.decreases += 1;
        } else if avg > max_th - part && self.adapt.top > self.cur_max_p {
            self.cur_max_p += self.adapt.alpha.min(0.25 * self.cur_max_p);
            self.last_set = now;
            self.increases += 1;
        }
    }
}

/// ns-2's bottom when `bottom_` is 0: 0.01, or 1/W for W the bandwidth-delay product of a
/// 100 ms RTT in 1000-byte packets when that is smaller.
pub fn default_bottom(link_bps: u64) -> f64 {
    (80_000.0 / link_bps as f64).min(0.01)
}

impl Aqm for AdaptiveRed {
    fn on_enqueue(
        &mut self,
        now: SimTime,
        pkt: &PacketMeta,
        q: QueueView,
        rng: &mut SimRng,
    ) -> Verdict {
        let avg = self.red.update_average(now, &q);
        if now > self.last_set + self.adapt.interval {
            self.update_max_p(avg, now);
        }
        // The linear region uses the adapted max_p, ns-2's gentle line the initial one.
        let curve = &mut self.red.dropper.curve;
        let gentle_region = curve.gentle && avg >= curve.max_th;
        curve.max_p = if gentle_region {
            self.initial_max_p
        } else {
            self.cur_max_p
        };
        self.red.decide(avg, pkt, &q, rng)
    }

    fn on_idle(&mut self, now: SimTime) {
        self.red.on_idle(now);
    }

    fn on_overflow(&mut self, now: SimTime, pkt: &PacketMeta, decided: Verdict) {
        self.red.on_overflow(now, pkt, decided);
    }

    fn gauges(&self, _now: SimTime, out: &mut dyn FnMut(&'static str, f64)) {
        out("max_p", self.cur_max_p);
    }

    fn average(&self) -> Option<f64> {
        self.red.average()
    }
}

const ALPHA: Decl<f64> = Decl::new(
    "alpha",
    open_closed(0.0, 1.0),
    "0.01",
    "α: additive increase of max_p (at most max_p/4 per step).",
);
const BETA: Decl<f64> = Decl::new(
    "beta",
    open(0.0, 1.0),
    "0.9",
    "β: multiplicative decrease of max_p.",
);
const INTERVAL: Decl<Duration> = Decl::new(
    "interval",
    ParamKind::Duration,
    "0.5s",
    "Least time between two changes of max_p.",
)
.positive();
const TOP: Decl<f64> = Decl::new("top", open_closed(0.0, 1.0), "0.5", "Upper bound of max_p.");
const BOTTOM: Decl<f64> = Decl::new(
    "bottom",
    open(0.0, 1.0),
    "min(0.01, 80000 / bandwidth in bit/s), as ns-2",
    "Lower bound of max_p.",
);

impl QueueDiscipline for AredConfig {
    const AVERAGES: crate::aqm::registry::Averages = crate::aqm::registry::Averages {
        one: Some("ARED's average queue"),
        by_mode: &[],
    };
    const DOC: &'static str = "Adaptive RED (Floyd, Gummadi & Shenker 2001; ns-2.35's Queue/RED with adaptive_ 1): RED whose max_p adapts (AIMD every `interval`) to keep the average between min_th + 0.4Δ and max_th − 0.4Δ.";
    const NS3: Result<&'static str, &'static str> = Err(
        "Adaptive RED is not mapped to ns-3's ARED (its adaptation differs in interval and bounds)",
    );
    const GAUGES: &'static [Gauge] = &[Gauge {
        name: "max_p",
        unit: "fraction 0–1",
        doc: "Adaptive RED's adapted max_p at the sample time (NaN for other kinds).",
    }];
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
        ALPHA.param,
        BETA.param,
        INTERVAL.param,
        TOP.param,
        BOTTOM.param,
    ];
    fn from_table(t: &Table, _limit: Limit) -> Result<Self, KeyError> {
        let red = RedConfig::read(t)?;
        let adapt = AredParams {
            alpha: t.get(&ALPHA)?,
            beta: t.get(&BETA)?,
            interval: t.get(&INTERVAL)?,
            top: t.get(&TOP)?,
            bottom: t.opt(&BOTTOM)?,
        };
        if let Some(b) = adapt.bottom {
            if b >= adapt.top {
                return Err(key_error(
                    t.key(BOTTOM.name()),
                    format!("bottom must be in (0, top = {}), got {b}", adapt.top),
                ));
            }
        }
        Ok(AredConfig { red, adapt })
    }
    fn ns2(&self, limit: Limit) -> Ns2Export {
        let mut settings = match self.red.ns2_settings(limit) {
            Ok(s) => s,
            Err(e) => return Ns2Export::Refused(e),
        };
        let a = &self.adapt;
        for (k, v) in settings.iter_mut() {
            if *k == "adaptive_" {
                *v = Ns2Value::Str("1");
            }
        }
        settings.extend([
            ("alpha_", Ns2Value::Float(a.alpha)),
            ("beta_", Ns2Value::Float(a.beta)),
            ("interval_", Ns2Value::Float(a.interval as f64 / 1e9)),
            ("top_", Ns2Value::Float(a.top)),
            // 0 lets ns-2 choose min(0.01, 80000 / bandwidth), as qoslab does.
            ("bottom_", Ns2Value::Float(a.bottom.unwrap_or(0.0))),
        ]);
        Ns2Export::Queue {
            class: "RED",
            settings,
            early_drops: true,
            ecn: self.red.ecn,
        }
    }
    fn emulable(&self) -> bool {
        // decides at enqueue from its own state, as in the simulator
        true
    }
}

impl LineDiscipline for AredConfig {
    type Runtime = AdaptiveRed;
    fn build(&self, link_bps: u64) -> AdaptiveRed {
        AdaptiveRed::new(self, link_bps)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::red::RedCurve;
    use crate::packet::PacketKind;

    const MS: SimTime = 1_000_000;

    fn config(gentle: bool) -> AredConfig {
        AredConfig {
            red: RedConfig {
                curve: RedCurve {
                    min_th: 20.0,
                    max_th: 80.0,
                    max_p: 0.1,
                    gentle,
                },
                w_q: 0.002,
                wait: true,
                byte_mode: false,
                mean_pkt_size: 500,
                ecn: false,
            },
            adapt: AredParams {
                alpha: 0.01,
                beta: 0.9,
                interval: 500 * MS,
                top: 0.5,
                bottom: None,
            },
        }
    }

    fn view(len: u64) -> QueueView {
        QueueView {
            len_pkts: len,
            len_bytes: len * 500,
            limit: Limit::Packets(1000),
            len_by_prec: [0, 0, len],
        }
    }

    /// Keeps the instantaneous queue at `len` packets with an arrival every ms for `ms` ms;
    /// returns the average at the end.
    fn drive(a: &mut AdaptiveRed, from: SimTime, ms: u64, len: u64) -> f64 {
        let mut rng = SimRng::derive(1, 1);
        let p = PacketMeta::new(0, PacketKind::Data, 500, 0, 0);
        for i in 0..ms {
            a.on_enqueue(from + i * MS, &p, view(len), &mut rng);
        }
        a.red.average().unwrap()
    }

    #[test]
    fn max_p_rises_additively_while_the_average_is_above_the_band() {
        // Band: [20 + 24, 80 − 24] = [44, 56]. A standing queue of 70 packets keeps the
        // average above 56 after ~1 s; from then on max_p rises by min(α, max_p/4) = 0.01
        // once per 0.5 s interval (the first arrival after it).
        let mut a = AdaptiveRed::new(&config(false), 10_000_000);
        let avg = drive(&mut a, 0, 10_000, 70);
        assert!(avg > 56.0, "{avg}");
        assert_eq!(a.decreases, 0);
        // 10 s of arrivals with the average above the band for all but the first ~1.1 s.
        assert!((16..=19).contains(&a.increases), "{}", a.increases);
        let expected = 0.1 + 0.01 * a.increases as f64;
        assert!((a.cur_max_p - expected).abs() < 1e-12, "{}", a.cur_max_p);
    }

    #[test]
    fn max_p_falls_multiplicatively_below_the_band_down_to_bottom() {
        // A queue of 25 packets: the average settles near 25, below the band (44): max_p is
        // multiplied by β = 0.9 once per interval until it reaches bottom. On 10 Mbit/s
        // bottom = min(0.01, 80000/1e7) = 0.008.
        let mut a = AdaptiveRed::new(&config(false), 10_000_000);
        assert!((a.bottom - 0.008).abs() < 1e-15);
        drive(&mut a, 0, 60_000, 25);
        assert_eq!(a.increases, 0);
        // 0.1 · 0.9^k ≤ 0.008 first at k = 24; the decrease stops once max_p ≤ bottom.
        assert_eq!(a.decreases, 24);
        assert!((a.cur_max_p - 0.1 * 0.9f64.powi(24)).abs() < 1e-15);
    }

    #[test]
    fn no_change_inside_the_band_or_before_the_interval() {
        let mut a = AdaptiveRed::new(&config(false), 10_000_000);
        // Exactly inside the band: nothing changes.
        a.update_max_p(50.0, 600 * MS);
        assert_eq!((a.increases, a.decreases), (0, 0));
        // Above it: a change at 600 ms; another arrival 100 ms later does not change it.
        let mut rng = SimRng::derive(1, 1);
        let p = PacketMeta::new(0, PacketKind::Data, 500, 0, 0);
        a.red.est.avg = 70.0;
        a.red.est.idle = false;
        a.on_enqueue(600 * MS, &p, view(70), &mut rng);
        assert_eq!(a.increases, 1);
        a.on_enqueue(700 * MS, &p, view(70), &mut rng);
        assert_eq!(a.increases, 1);
        a.on_enqueue(1101 * MS, &p, view(70), &mut rng);
        assert_eq!(a.increases, 2);
    }

    #[test]
    fn gentle_line_keeps_the_initial_max_p_as_ns2() {
        let mut a = AdaptiveRed::new(&config(true), 10_000_000);
        a.cur_max_p = 0.3;
        let mut rng = SimRng::derive(1, 1);
        let p = PacketMeta::new(0, PacketKind::Data, 500, 0, 0);
        // Average in the gentle region (between max_th and 2·max_th).
        a.red.est.avg = 100.0;
        a.red.est.idle = false;
        a.last_set = 10_000 * MS; // no adaptation on this arrival
        a.on_enqueue(10_001 * MS, &p, view(100), &mut rng);
        assert_eq!(a.red.dropper.curve.max_p, 0.1);
        // Back in the linear region the adapted max_p applies.
        a.red.est.avg = 60.0;
        a.on_enqueue(10_002 * MS, &p, view(60), &mut rng);
        assert_eq!(a.red.dropper.curve.max_p, 0.3);
    }

    #[test]
    fn without_adaptation_it_is_red() {
        // β = 1 − ε and α tiny is not "off"; instead a very long interval never adapts, so
        // the drops equal RED's on the same arrivals and random stream.
        let mut c = config(false);
        c.adapt.interval = u64::MAX / 2;
        let mut a = AdaptiveRed::new(&c, 10_000_000);
        let mut r = Red::new(c.red.params(10_000_000));
        let (mut ra, mut rr) = (SimRng::derive(5, 5), SimRng::derive(5, 5));
        let p = PacketMeta::new(0, PacketKind::Data, 500, 0, 0);
        for i in 0..20_000u64 {
            let len = 30 + (i / 100) % 60;
            let va = a.on_enqueue(i * MS, &p, view(len), &mut ra);
            let vr = r.on_enqueue(i * MS, &p, view(len), &mut rr);
            assert_eq!(va, vr, "arrival {i}");
        }
    }
}
