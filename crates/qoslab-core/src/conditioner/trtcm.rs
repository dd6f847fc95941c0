//! trTCM — two-rate three-colour marker (RFC 2698, Heinanen & Guérin 1999).
//!
//! Two token buckets with their own rates: the peak bucket P (size PBS, rate PIR) and the
//! committed bucket C (size CBS, rate CIR), both full at time 0 (`Tp(0) = PBS`,
//! `Tc(0) = CBS`), each filling up to its size (§3). A packet of B bytes arriving at t is
//! coloured (§3):
//!
//! * colour-blind: red if `Tp(t) − B < 0`; else yellow if `Tc(t) − B < 0` (then `Tp −= B`);
//!   else green (then `Tp −= B` and `Tc −= B`);
//! * colour-aware: red if pre-coloured red or `Tp(t) − B < 0`; else yellow if pre-coloured
//!   yellow or `Tc(t) − B < 0` (then `Tp −= B`); else green (both decremented).
//!
//! So green traffic is bounded by both profiles (CIR/CBS and PIR/PBS) and green + yellow by
//! the peak profile; red packets consume nothing.
//!
//! Deviation: the RFC adds one byte token PIR (CIR) times per second; qoslab adds the exact
//! fluid `elapsed_ns × rate` in 10⁻⁹ bit (see [`super::token_bucket`]). Rates here are in
//! bit/s (RFC: bytes of IP packets per second).

use serde::Serialize;

use super::ns2_policy::{FlavouredMeter, Ns2Policy, Policy};
use super::{
    credit_earned, credit_of_bytes, elapsed_since, positive_rate, Bucket, Color, ColorMode, Meter,
};
use crate::params::Flavour;
use crate::rng::SimRng;
use crate::units::SimTime;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TrTcmParams {
    /// CIR — Committed Information Rate, bit/s (RFC 2698 §2). Must be positive.
    pub cir: u64,
    /// CBS — Committed Burst Size, bytes: bucket C. Must be positive.
    pub cbs: u64,
    /// PIR — Peak Information Rate, bit/s. Must be at least CIR.
    pub pir: u64,
    /// PBS — Peak Burst Size, bytes: bucket P. Must be positive.
    pub pbs: u64,
    /// Colour-blind (default) or colour-aware.
    pub mode: ColorMode,
    /// The reference meter, or ns-2's policy of the same name (`conditioner::ns2_policy`).
    pub flavour: Flavour,
}

impl TrTcmParams {
    pub fn validate(&self) -> Result<(), String> {
        positive_rate("cir", self.cir)?;
        if self.pir < self.cir {
            return Err(format!(
                "pir ({} bit/s) must be at least cir ({} bit/s) (RFC 2698 §2)",
                self.pir, self.cir
            ));
        }
        if self.cbs == 0 {
            return Err("cbs must be a positive size (bytes), got 0 (RFC 2698 §2)".into());
        }
        if self.pbs == 0 {
            return Err("pbs must be a positive size (bytes), got 0 (RFC 2698 §2)".into());
        }
        Ok(())
    }
}

#[derive(Debug, Clone)]
pub struct TrTcm {
    pub params: TrTcmParams,
    /// Bucket P: `Tp` against PBS, filled at PIR.
    pub tp: Bucket,
    /// Bucket C: `Tc` against CBS, filled at CIR.
    pub tc: Bucket,
    /// The time the buckets were last brought up to date.
    pub last: SimTime,
}

impl TrTcm {
    /// A trTCM in its initial state: both buckets full at time 0.
    pub fn new(params: TrTcmParams) -> Self {
        debug_assert!(params.validate().is_ok(), "{:?}", params.validate());
        TrTcm {
            params,
            tp: Bucket::full(params.pbs),
            tc: Bucket::full(params.cbs),
            last: 0,
        }
    }

    /// Buckets P and C as they stand at `now` (refilled, not consumed).
    pub fn buckets_at(&self, now: SimTime) -> (Bucket, Bucket) {
        self.refilled(now.saturating_sub(self.last))
    }

    /// Buckets P and C after `dt` ns more, each at its own rate up to its own size (§3).
    #[inline]
    fn refilled(&self, dt: u64) -> (Bucket, Bucket) {
        let (mut tp, mut tc) = (self.tp, self.tc);
        tp.fill(credit_earned(dt, self.params.pir));
        tc.fill(credit_earned(dt, self.params.cir));
        (tp, tc)
    }

    /// `(Tp, Tc)` at `now`, in bytes.
    pub fn levels(&self, now: SimTime) -> (f64, f64) {
        let (tp, tc) = self.buckets_at(now);
        (tp.bytes(), tc.bytes())
    }

    #[inline]
    fn advance(&mut self, now: SimTime) {
        let dt = elapsed_since(&mut self.last, now);
        (self.tp, self.tc) = self.refilled(dt);
    }
}

impl Meter for TrTcm {
    fn meter(&mut self, now: SimTime, size_bytes: u32, pre_color: Color, _: &mut SimRng) -> Color {
        self.advance(now);
        let aware = self.params.mode == ColorMode::Aware;
        let cost = credit_of_bytes(size_bytes as u64);
        if (aware && pre_color == Color::Red) || !self.tp.holds(cost) {
            Color::Red
        } else if (aware && pre_color == Color::Yellow) || !self.tc.holds(cost) {
            self.tp.take(cost);
            Color::Yellow
        } else {
            self.tp.take(cost);
            self.tc.take(cost);
            Color::Green
        }
    }

    fn token_level(&self, now: SimTime) -> Option<f64> {
        Some(self.buckets_at(now).1.bytes())
    }
}

const PBS: crate::params::typed::Decl<crate::params::typed::Bytes> =
    crate::params::typed::Decl::new(
        "pbs",
        crate::params::ParamKind::Bytes,
        "required",
        "Peak burst size (RFC 2698).",
    );

impl super::registry::MeterKind for TrTcmParams {
    type Runtime = FlavouredMeter<TrTcm>;
    const EXPORTS: super::registry::MeterExports = super::registry::MeterExports {
        ns2: Ok(super::registry::Ns2PolicyEntry {
            policy: "trTCM",
            colours: &["green", "yellow", "red"],
            args: &[
                super::registry::Ns2Arg::Number("cir_bps"),
                super::registry::Ns2Arg::Integer("cbs_bytes"),
                super::registry::Ns2Arg::Number("pir_bps"),
                super::registry::Ns2Arg::Integer("pbs_bytes"),
            ],
            any_pre_colour: false,
            fixed_window_s: None,
        }),
        emulator: Ok(()),
    };
    const DOC: &'static str = "RFC 2698 two-rate three-colour marker (PIR, PBS, CIR, CBS).";
    const PARAMS: &'static [crate::params::Param] = &[
        super::registry::MODE.param,
        super::registry::CIR.param,
        super::registry::CBS.param,
        super::registry::PIR.param,
        PBS.param,
        crate::params::FLAVOUR,
    ];
    fn from_table(
        t: &crate::params::Table,
        _ctx: &super::registry::MeterContext,
    ) -> Result<Self, crate::params::KeyError> {
        use super::registry::{read_mode, read_pir, CBS, CIR};
        let cir = t.get(&CIR)?;
        let cbs = t.get(&CBS)?;
        let pir = read_pir(t, cir)?;
        Ok(TrTcmParams {
            cir,
            cbs,
            pir,
            pbs: t.get(&PBS)?,
            mode: read_mode(t)?,
            flavour: super::registry::read_flavour(t, read_mode(t)?)?,
        })
    }
    fn check(&self) -> Result<(), String> {
        self.validate()
    }
    fn build(&self) -> FlavouredMeter<TrTcm> {
        match self.flavour {
            Flavour::Reference => FlavouredMeter::Reference(TrTcm::new(*self)),
            Flavour::Ns2 => FlavouredMeter::Ns2(Ns2Policy::new(Policy::TrTcm {
                cir: self.cir as f64 / 8.0,
                cbs: self.cbs as f64,
                pir: self.pir as f64 / 8.0,
                pbs: self.pbs as f64,
            })),
        }
    }
    fn flat<'a>(&'a self, f: &mut super::registry::FlatMeter<'a>) {
        (f.cir_bps, f.cbs_bytes) = (self.cir, Some(self.cbs));
        (f.pir_bps, f.pbs_bytes) = (Some(self.pir), Some(self.pbs));
        f.mode = super::registry::mode_name(self.mode);
        f.flavour = self.flavour.name();
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{
        arrivals, check_run, colours, greedy, seq, within_profile, G, MS, R, Y,
    };
    use super::*;
    use crate::units::NS_PER_SEC;
    use proptest::prelude::*;

    /// CIR 8000 bit/s = 1000 B/s, CBS 2000 B; PIR 16 000 bit/s = 2000 B/s, PBS 4000 B.
    fn trtcm(mode: ColorMode) -> TrTcm {
        TrTcm::new(TrTcmParams {
            cir: 8000,
            cbs: 2000,
            pir: 16_000,
            pbs: 4000,
            mode,
            flavour: Flavour::Reference,
        })
    }

    #[test]
    fn conformance_colour_blind() {
        let mut m = trtcm(ColorMode::Blind);
        let mut got = colours(
            &mut m,
            &[
                // t = 0, Tp = 4000, Tc = 2000. 1000 B: green (Tp 3000, Tc 1000); green
                // (Tp 2000, Tc 0); then Tc < 1000: yellow (Tp 1000); yellow (Tp 0); then
                // Tp < 1000: red, nothing consumed.
                (0, 1000, G),
                (0, 1000, G),
                (0, 1000, G),
                (0, 1000, G),
                (0, 1000, G),
                // t = 0.5 s: Tp = 1000, Tc = 500: 1000 B is yellow (Tp → 0, Tc stays 500).
                (500 * MS, 1000, G),
                // t = 1 s: Tp = 1000, Tc = 1000: green (both → 0).
                (1000 * MS, 1000, G),
                // t = 1.25 s: Tp = 500, Tc = 250. 600 B: Tp < 600, red. 500 B: Tp holds it,
                // Tc does not: yellow (Tp → 0).
                (1250 * MS, 600, G),
                (1250 * MS, 500, G),
            ],
        );
        // t = 3.25 s: P refilled 2 s × 2000 B/s = 4000 (= PBS); C 250 + 2000, capped at CBS.
        assert_eq!(m.levels(3250 * MS), (4000.0, 2000.0));
        got.extend(colours(
            &mut m,
            &[
                // 2000 B green (Tp 2000, Tc 0); 2000 B yellow (Tp 0); 1 B red.
                (3250 * MS, 2000, G),
                (3250 * MS, 2000, G),
                (3250 * MS, 1, G),
            ],
        ));
        assert_eq!(got, seq("GGYYRYGRYGYR"));
    }

    #[test]
    fn conformance_colour_aware() {
        let mut m = trtcm(ColorMode::Aware);
        let got = colours(
            &mut m,
            &[
                // t = 0, Tp = 4000, Tc = 2000.
                // Pre-red: red, nothing consumed, whatever the buckets hold.
                (0, 1000, R),
                // Pre-yellow 1000 B: Tp holds it: yellow, Tp → 3000 (Tc untouched).
                (0, 1000, Y),
                // Pre-green 2000 B: both hold it: green, Tp → 1000, Tc → 0.
                (0, 2000, G),
                // Pre-green 1000 B: Tp = 1000 holds it, Tc = 0 does not: yellow, Tp → 0.
                (0, 1000, G),
                // Pre-yellow 1 B: Tp = 0: red.
                (0, 1, Y),
                // t = 2 s: Tp = 4000, Tc = 2000 (both full). Pre-yellow 2000 B: yellow,
                // Tp → 2000, Tc untouched...
                (2 * NS_PER_SEC, 2000, Y),
                // ... so a pre-green 2000 B packet still finds Tc = 2000: green.
                (2 * NS_PER_SEC, 2000, G),
            ],
        );
        assert_eq!(got, seq("RYGYRYG"));
        assert_eq!(m.levels(2 * NS_PER_SEC), (0.0, 0.0));
    }

    /// A greedy source (1000-B packets every 800 µs, 10 Mb/s) against CIR = 1 Mb/s,
    /// CBS = 10 kB, PIR = 2 Mb/s, PBS = 20 kB, for 100 s (last arrival t_last = 99.9992 s).
    /// P gains 200 B per arrival and a packet is non-red as soon as P holds 1000 B, so P never
    /// fills again after the start and loses no credit: green + yellow =
    /// 1000·⌊(PBS + PIR·t_last/8)/1000⌋ = 1000·⌊25 019 800/1000⌋ = 25 019 000 B. C gains 500 B
    /// between two such opportunities and is spent at the first one where it holds 1000 B, so
    /// it never fills either: green = CBS + CIR·t_last/8 − Tc with 0 ≤ Tc < 1500 B, i.e.
    /// 12 509 000 B (⌊12 509 900/1000⌋ packets) or one packet less if the last green is still
    /// waiting for P. Green rate = CIR and green + yellow rate = PIR once the initial bursts
    /// are taken out, to within 1.5 kB in 100 s (1.2·10⁻⁴).
    #[test]
    fn greedy_source_gets_cir_green_and_pir_green_plus_yellow() {
        let p = TrTcmParams {
            cir: 1_000_000,
            cbs: 10_000,
            pir: 2_000_000,
            pbs: 20_000,
            mode: ColorMode::Blind,
            flavour: Flavour::Reference,
        };
        let mut m = TrTcm::new(p);
        let t = 100 * NS_PER_SEC;
        let [green, yellow, red] = greedy(&mut m, 1000, 800_000, t, &mut SimRng::derive(0, 0));
        assert_eq!(green + yellow + red, 125_000_000);
        assert_eq!(green + yellow, 25_019_000);
        assert!(green == 12_509_000 || green == 12_508_000, "{green}");
        let t_last = t - 800_000;
        assert!(within_profile(green, p.cbs, p.cir, t_last));
        assert!(within_profile(green + yellow, p.pbs, p.pir, t_last));
        let secs = t_last as f64 / NS_PER_SEC as f64;
        let green_bps = (green - p.cbs) as f64 * 8.0 / secs;
        let peak_bps = (green + yellow - p.pbs) as f64 * 8.0 / secs;
        assert!((green_bps / 1e6 - 1.0).abs() < 1.2e-4, "{green_bps}");
        assert!((peak_bps / 2e6 - 1.0).abs() < 1.2e-4, "{peak_bps}");
    }

    /// 64-B packets every 512 ns against PIR = 2 Mb/s (1.024 bit of credit per arrival) and
    /// CIR = 1 Mb/s (0.512 bit), PBS 3000 B, CBS 1500 B, for 1 s. P is spent whenever it holds
    /// 512 bit, so green + yellow = ⌊(8·PBS + PIR·t_last)/512⌋ = ⌊2 023 998.976/512⌋ = 3953.
    /// Green needs both buckets; C's credit keeps accumulating while it waits for P, so green
    /// is ⌊(8·CBS + CIR·t_last)/512⌋ = 1976, or one less if the last green is still waiting for
    /// P at the end of the run.
    #[test]
    fn no_lost_fractional_credit() {
        let mut m = TrTcm::new(TrTcmParams {
            cir: 1_000_000,
            cbs: 1500,
            pir: 2_000_000,
            pbs: 3000,
            mode: ColorMode::Blind,
            flavour: Flavour::Reference,
        });
        let [green, yellow, _] = greedy(&mut m, 64, 512, NS_PER_SEC, &mut SimRng::derive(0, 0));
        assert_eq!((green + yellow) / 64, 3953);
        assert!((1975..=1976).contains(&(green / 64)), "{}", green / 64);
    }

    #[test]
    fn validation() {
        let mut p = TrTcmParams {
            cir: 1_000_000,
            cbs: 1500,
            pir: 1_000_000,
            pbs: 1500,
            mode: ColorMode::Blind,
            flavour: Flavour::Reference,
        };
        assert!(p.validate().is_ok());
        p.pir = 999_999;
        assert!(p.validate().unwrap_err().contains("pir"));
        p.pir = 2_000_000;
        p.pbs = 0;
        assert!(p.validate().unwrap_err().contains("pbs"));
        p.pbs = 1500;
        p.cbs = 0;
        assert!(p.validate().unwrap_err().contains("cbs"));
    }

    proptest! {
        /// For any arrivals, up to any arrival time t: green ≤ CBS + CIR·t, green ≤ PBS + PIR·t
        /// and green + yellow ≤ PBS + PIR·t; colour-aware mode never promotes; colour-blind
        /// mode ignores the pre-colour.
        #[test]
        fn colours_never_exceed_either_profile(
            cir in 1_000u64..50_000_000,
            extra in 0u64..50_000_000,
            cbs in 1u64..20_000,
            pbs in 1u64..20_000,
            aware in any::<bool>(),
            seq in arrivals(),
        ) {
            let mode = if aware { ColorMode::Aware } else { ColorMode::Blind };
            let p = TrTcmParams { cir, cbs, pir: cir + extra, pbs, mode, flavour: Flavour::Reference, };
            let mut m = TrTcm::new(p);
            check_run(&mut m, aware, &seq, |t, [green, yellow, _]| {
                prop_assert!(within_profile(green, cbs, cir, t));
                prop_assert!(within_profile(green, pbs, p.pir, t));
                prop_assert!(within_profile(green + yellow, pbs, p.pir, t));
                Ok(())
            })?;
        }
    }
}
