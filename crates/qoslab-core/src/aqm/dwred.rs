//! DWRED — Dynamic WRED (Bouras & Sevasti, Section 4): a WRED queue whose OUT thresholds follow
//! the congestion window of the AF FEC LSP it serves.
//!
//! Every operating interval the LSP's ingress (the TWAM, [`crate::conditioner::Twam`]) signals
//! the aggregate window `W_LSP ≈ Σ_k W_k` (packets); on receipt the queue sets (Eqs. 4–5)
//!
//! ```text
//!     max_th = Σ_k W_k,   min_th = b · max_th  (b = 0.15),   max_p = 0.1
//! ```
//!
//! for the OUT precedences (AFx2, AFx3 and best effort). The paper gives no IN thresholds;
//! here IN packets (AFx1) are judged on an optional static curve and, without one, are only
//! dropped when the buffer overflows (the variant of the paper's reference [16], where AQM
//! thresholds apply to OUT packets only). A signal of zero (an interval in which the ingress
//! saw nothing) leaves the thresholds as they are. Averaging, idle correction and count
//! spreading are RED's, over one average of the whole physical queue, as in [`super::Wred`].

use super::af::{read_curve, AF_WAIT};
use super::ewma::AvgQueue;
use super::red::{RedCurve, RedDropper, MAX_P, MEAN_PKT_SIZE, W_Q};
use super::registry::{LineDiscipline, Ns2Export, QueueDiscipline};
use super::{Aqm, QueueView, Verdict};
use crate::packet::PacketMeta;
use crate::params::typed::{Decl, Duration, Text};
use crate::params::{at_least, key_error, open, KeyError, Param, ParamKind, Table, LIMIT};
use crate::rng::SimRng;
use crate::units::{Limit, SimTime};

/// DWRED's configuration: its parameters and the TWAM conditioner it listens to.
#[derive(Debug, Clone)]
pub struct DwredConfig {
    pub params: DwredParams,
    pub mean_pkt_size: u32,
    /// The TWAM conditioner whose window signal it follows.
    pub signal: String,
    pub signal_delay_ns: u64,
}

/// The OUT maximum threshold before the first signal.
const MAX_TH: Decl<f64> = Decl::new(
    "max_th",
    ParamKind::Number {
        min: Some(0.0),
        max: None,
        min_open: true,
        max_open: false,
    },
    "the limit in packets",
    "The OUT maximum threshold until the first signal arrives, packets.",
);
const B: Decl<f64> = Decl::new(
    "b",
    open(0.0, 1.0),
    "0.15",
    "b of Eq. 5: min_th = b·max_th.",
);
const SIGNAL_DELAY: Decl<Duration> = Decl::new(
    "signal_delay",
    ParamKind::Duration,
    "0s",
    "How long the signal takes from the ingress to this queue.",
);
const SIGNAL: Decl<Text> = Decl::new(
    "signal",
    ParamKind::Name,
    "required",
    "The twam conditioner at the LSP's ingress whose window signal sets the thresholds.",
);
const IN_FACTOR: Decl<f64> = Decl::new(
    "in_factor",
    at_least(1.0),
    "none",
    "IN packets follow the signal too, on the OUT curve scaled by this factor.",
);

impl QueueDiscipline for DwredConfig {
    const AVERAGES: crate::aqm::registry::Averages = crate::aqm::registry::Averages {
        one: Some("DWRED's average queue"),
        by_mode: &[],
    };
    const DOC: &'static str = "Dynamic WRED (Bouras & Sevasti): OUT thresholds max_th = the window a TWAM ingress signals, min_th = b·max_th.";
    const NS3: Result<&'static str, &'static str> = Err("DWRED has no ns-3 queue disc");
    const PARAMS: &'static [Param] = &[
        LIMIT,
        MAX_TH.param,
        MAX_P.param,
        W_Q.param,
        AF_WAIT.param,
        MEAN_PKT_SIZE.param,
        super::af::optional_curve_param(
            "in",
            "A static IN curve (without it IN packets are only tail-dropped).",
        ),
        B.param,
        SIGNAL.param,
        SIGNAL_DELAY.param,
        IN_FACTOR.param,
    ];
    fn hint(key: &str) -> &'static str {
        match key {
            "min_th" | "out" | "mid" => ": DWRED sets the OUT curve itself (min_th = b·max_th, max_th = the signalled window)",
            "flavour" => ": ns-2 has no DWRED, so there is no ns2 flavour of it",
            _ => "",
        }
    }
    fn from_table(t: &Table, limit: Limit) -> Result<Self, KeyError> {
        let max_th =
            match (t.opt(&MAX_TH)?, limit) {
                (Some(m), _) => m,
                (None, Limit::Packets(p)) => p as f64,
                (None, Limit::Bytes(_)) => return Err(key_error(
                    t.key("max_th"),
                    "a dwred queue with a byte limit needs max_th (the initial threshold, packets)",
                )),
            };
        t.record_value(&MAX_TH, &max_th);
        let signal = t.opt(&SIGNAL)?.ok_or_else(|| {
            key_error(
                t.key("signal"),
                "a dwred queue needs `signal`, the name of the twam conditioner at its LSP's ingress",
            )
        })?;
        let params = DwredParams {
            b: t.get(&B)?,
            max_p: t.get(&MAX_P)?,
            initial_max_th: max_th,
            in_curve: read_curve(t, "in", false)?,
            in_factor: t.opt(&IN_FACTOR)?,
            w_q: t.get(&W_Q)?,
            wait: t.get(&AF_WAIT)?,
        };
        params.validate().map_err(|e| {
            let field = if e.starts_with("in:") {
                "in.min_th"
            } else {
                ["b", "max_p", "max_th", "w_q", "in_factor"]
                    .into_iter()
                    .find(|f| e.starts_with(f))
                    .unwrap_or("b")
            };
            key_error(t.key(field), e)
        })?;
        Ok(DwredConfig {
            params,
            mean_pkt_size: t.get(&MEAN_PKT_SIZE)?,
            signal,
            signal_delay_ns: t.get(&SIGNAL_DELAY)?,
        })
    }
    fn ns2(&self, _limit: Limit) -> Ns2Export {
        Ns2Export::Refused(
            "DWRED (Bouras & Sevasti's dynamic WRED, whose thresholds follow the window a TWAM \
             ingress signals every alpha*RTT) has no ns-2 counterpart: dsRED's thresholds are static"
                .into(),
        )
    }
    fn emulable(&self) -> bool {
        false
    }
    fn signal_source(&self) -> Option<(&str, u64)> {
        Some((&self.signal, self.signal_delay_ns))
    }
}

impl LineDiscipline for DwredConfig {
    type Runtime = Dwred;
    fn build(&self, link_bps: u64) -> Dwred {
        Dwred::new(
            self.params,
            link_bps as f64 / (8.0 * self.mean_pkt_size as f64),
        )
    }
}

/// DWRED's fixed parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DwredParams {
    /// `b` of Eq. 5: `min_th = b · max_th` (paper: 0.15).
    pub b: f64,
    /// `max_p` of Eq. 5 (paper: 0.1).
    pub max_p: f64,
    /// `max_th` until the first signal arrives (packets).
    pub initial_max_th: f64,
    /// The IN precedence's static curve; `None`: IN packets are only tail-dropped (unless
    /// `in_factor` is set).
    pub in_curve: Option<RedCurve>,
    /// When set, IN packets follow the signal too, on the OUT curve with both thresholds
    /// multiplied by this factor (`≥ 1`); exclusive with `in_curve`.
    pub in_factor: Option<f64>,
    pub w_q: f64,
    pub wait: bool,
}

impl DwredParams {
    pub fn validate(&self) -> Result<(), String> {
        if !(self.b > 0.0 && self.b < 1.0) {
            return Err(format!("b must be in (0, 1), got {}", self.b));
        }
        if !(self.max_p > 0.0 && self.max_p <= 1.0) {
            return Err(format!("max_p must be in (0, 1], got {}", self.max_p));
        }
        if !(self.initial_max_th.is_finite() && self.initial_max_th > 0.0) {
            return Err(format!(
                "max_th (the initial maximum threshold) must be positive, got {}",
                self.initial_max_th
            ));
        }
        if !(self.w_q > 0.0 && self.w_q < 1.0) {
            return Err(format!("w_q must be in (0, 1), got {}", self.w_q));
        }
        if let Some(c) = &self.in_curve {
            c.validate().map_err(|e| format!("in: {e}"))?;
        }
        if let Some(k) = self.in_factor {
            if !(k.is_finite() && k >= 1.0) {
                return Err(format!("in_factor must be at least 1, got {k}"));
            }
            if self.in_curve.is_some() {
                return Err("in_factor and a static `in` curve exclude each other".into());
            }
        }
        Ok(())
    }
}

#[derive(Debug, Clone)]
pub struct Dwred {
    pub p: DwredParams,
    pub ptc: f64,
    pub avg: AvgQueue,
    /// The OUT precedences' dropper, whose curve is rewritten by [`Dwred::on_window_signal`].
    pub out: RedDropper,
    pub in_: Option<RedDropper>,
    /// Signals applied.
    pub updates: u64,
}

impl Dwred {
    pub fn new(p: DwredParams, ptc: f64) -> Self {
        Dwred {
            out: RedDropper::new(Self::curve(&p, p.initial_max_th), p.wait),
            in_: match p.in_factor {
                Some(k) => Some(RedDropper::new(
                    Self::in_curve(&p, p.initial_max_th, k),
                    p.wait,
                )),
                None => p.in_curve.map(|c| RedDropper::new(c, p.wait)),
            },
            p,
            ptc,
            avg: AvgQueue::default(),
            updates: 0,
        }
    }

    /// Eqs. 4–5: the OUT curve for an LSP window of `window` packets.
    pub fn curve(p: &DwredParams, window: f64) -> RedCurve {
        RedCurve {
            min_th: p.b * window,
            max_th: window,
            max_p: p.max_p,
            gentle: false,
        }
    }

    /// The IN curve under `in_factor = k`: the OUT curve's thresholds times `k`.
    pub fn in_curve(p: &DwredParams, window: f64, k: f64) -> RedCurve {
        RedCurve {
            min_th: k * p.b * window,
            max_th: k * window,
            max_p: p.max_p,
            gentle: false,
        }
    }

    /// A forced drop (or overflow) of precedence `prec` restarts its dropper's count.
    fn forced_drop(&mut self, prec: u8) {
        if prec == 0 {
            if let Some(d) = self.in_.as_mut() {
                d.on_forced_drop();
            }
        } else {
            self.out.on_forced_drop();
        }
    }

    /// The aggregate window signalled by the ingress (packets) arrives.
    pub fn on_window_signal(&mut self, window: f64) {
        if window.is_finite() && window > 0.0 {
            self.out.curve = Self::curve(&self.p, window);
            if let (Some(k), Some(d)) = (self.p.in_factor, self.in_.as_mut()) {
                d.curve = Self::in_curve(&self.p, window, k);
            }
            self.updates += 1;
        }
    }

    /// The current OUT thresholds `(min_th, max_th)`.
    pub fn thresholds(&self) -> (f64, f64) {
        (self.out.curve.min_th, self.out.curve.max_th)
    }
}

impl Aqm for Dwred {
    fn on_signal(&mut self, _now: SimTime, value: f64) {
        self.on_window_signal(value);
    }
    fn on_enqueue(
        &mut self,
        now: SimTime,
        pkt: &PacketMeta,
        q: QueueView,
        rng: &mut SimRng,
    ) -> Verdict {
        let avg = self
            .avg
            .on_arrival(now, q.len_pkts as f64, self.p.w_q, self.ptc);
        let dropper = if pkt.prec == 0 {
            self.in_.as_mut()
        } else {
            Some(&mut self.out)
        };
        let v = match dropper {
            Some(d) => d.judge(avg, pkt.size, None, q.len_pkts as f64, rng),
            None => Verdict::Enqueue,
        };
        if v == Verdict::ForcedDrop {
            self.forced_drop(pkt.prec);
        }
        v
    }

    fn on_overflow(&mut self, _now: SimTime, pkt: &PacketMeta, _decided: Verdict) {
        self.forced_drop(pkt.prec);
    }

    fn on_idle(&mut self, now: SimTime) {
        self.avg.on_idle(now);
    }

    fn average(&self) -> Option<f64> {
        Some(self.avg.avg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::PacketKind;
    use crate::units::Limit;

    fn params() -> DwredParams {
        DwredParams {
            b: 0.15,
            max_p: 0.1,
            initial_max_th: 160.0,
            in_curve: None,
            in_factor: None,
            w_q: 0.002,
            wait: false,
        }
    }

    fn view(len: u64) -> QueueView {
        QueueView {
            len_pkts: len,
            len_bytes: len * 1000,
            limit: Limit::Packets(500),
            len_by_prec: [0, len, 0],
        }
    }

    #[test]
    fn thresholds_follow_the_signalled_window() {
        let mut d = Dwred::new(params(), 1000.0);
        assert_eq!(d.thresholds(), (0.15 * 160.0, 160.0));
        d.on_window_signal(200.0);
        assert_eq!(d.thresholds(), (30.0, 200.0));
        assert_eq!(d.out.curve.max_p, 0.1);
        d.on_window_signal(40.0);
        assert!((d.thresholds().0 - 6.0).abs() < 1e-12);
        assert_eq!(d.thresholds().1, 40.0);
        // Nothing seen in an interval: thresholds kept.
        d.on_window_signal(0.0);
        d.on_window_signal(f64::NAN);
        assert_eq!(d.thresholds().1, 40.0);
        assert_eq!(d.updates, 2);
    }

    #[test]
    fn out_drop_rate_matches_the_curve_at_the_new_thresholds_and_in_is_tail_dropped_only() {
        let mut d = Dwred::new(params(), 1000.0);
        d.on_window_signal(100.0); // min_th 15, max_th 100
        d.avg.idle = false;
        let mut rng = SimRng::derive(5, 5);
        let n = 100_000;
        let mut out_drops = 0;
        let mut in_drops = 0;
        for i in 0..n {
            d.avg.avg = 57.5; // half way: p_b = 0.05
            let mut p = PacketMeta::new(0, PacketKind::Data, 1000, 0, 0);
            p.prec = (i % 2) as u8;
            let v = d.on_enqueue(i as u64, &p, view(57), &mut rng);
            if v != Verdict::Enqueue {
                if p.prec == 0 {
                    in_drops += 1;
                } else {
                    out_drops += 1;
                }
            }
        }
        // Count spreading without `wait`: p_a = p_b / (1 − count p_b) has mean rate 2 p_b.
        let rate = out_drops as f64 / (n / 2) as f64;
        assert!((rate - 0.1).abs() < 0.01, "{rate}");
        assert_eq!(in_drops, 0);
        // Above max_th every OUT packet is dropped; IN only when the buffer is full.
        d.avg.avg = 150.0;
        let mut p = PacketMeta::new(0, PacketKind::Data, 1000, 0, 0);
        p.prec = 1;
        assert_eq!(
            d.on_enqueue(1, &p, view(150), &mut rng),
            Verdict::ForcedDrop
        );
        p.prec = 0;
        d.avg.avg = 150.0;
        assert_eq!(d.on_enqueue(2, &p, view(150), &mut rng), Verdict::Enqueue);
        assert_eq!(
            crate::aqm::admit(&mut d, 3, &p, view(500), &mut rng),
            Verdict::Overflow
        );
    }

    #[test]
    fn validation_names_the_parameter() {
        let bad = DwredParams { b: 1.5, ..params() };
        assert!(bad.validate().unwrap_err().starts_with("b "));
        let bad = DwredParams {
            max_p: 0.0,
            ..params()
        };
        assert!(bad.validate().unwrap_err().starts_with("max_p"));
    }
}
