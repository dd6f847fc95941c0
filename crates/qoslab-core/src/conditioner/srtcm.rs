//! srTCM — single-rate three-colour marker (RFC 2697, Heinanen & Guérin 1999).
//!
//! Two token buckets share one rate, CIR: the committed bucket C (size CBS) and the excess
//! bucket E (size EBS), both full at time 0 (`Tc(0) = CBS`, `Te(0) = EBS`). Tokens go to C
//! while `Tc < CBS`, then to E while `Te < EBS`, then are discarded (§3): E fills only while C
//! is full. A packet of B bytes arriving at t is coloured (§3):
//!
//! * colour-blind: green if `Tc(t) − B ≥ 0` (then `Tc −= B`), else yellow if
//!   `Te(t) − B ≥ 0` (then `Te −= B`), else red and neither count changes;
//! * colour-aware: green only if pre-coloured green and `Tc(t) − B ≥ 0`; else yellow only if
//!   pre-coloured green or yellow and `Te(t) − B ≥ 0`; else red. A pre-coloured yellow packet
//!   therefore never uses C's tokens, and a pre-coloured red one uses nothing.
//!
//! A packet is coloured only if the bucket holds all of it: there is no partial credit.
//!
//! Deviation: the RFC adds one byte token CIR times per second (CIR in bytes/s); qoslab adds
//! the exact fluid `elapsed_ns × CIR` in 10⁻⁹ bit (see [`super::token_bucket`]), splitting an
//! update at the instant C becomes full, so E receives exactly the credit C could not hold.
//! CIR here is in bit/s (RFC: bytes of IP packets per second).

use serde::Serialize;

use super::ns2_policy::{FlavouredMeter, Ns2Policy, Policy};
use super::{
    credit_earned, credit_of_bytes, elapsed_since, positive_rate, Bucket, Color, ColorMode, Meter,
};
use crate::params::Flavour;
use crate::rng::SimRng;
use crate::units::SimTime;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SrTcmParams {
    /// CIR — Committed Information Rate, bit/s (RFC 2697 §2). Must be positive.
    pub cir: u64,
    /// CBS — Committed Burst Size, bytes: bucket C.
    pub cbs: u64,
    /// EBS — Excess Burst Size, bytes: bucket E. At least one of CBS and EBS must be positive;
    /// EBS = 0 makes a two-colour (green/red) marker.
    pub ebs: u64,
    /// Colour-blind (default) or colour-aware.
    pub mode: ColorMode,
    /// The reference meter, or ns-2's policy of the same name (`conditioner::ns2_policy`).
    pub flavour: Flavour,
}

impl SrTcmParams {
    pub fn validate(&self) -> Result<(), String> {
        positive_rate("cir", self.cir)?;
        if self.cbs == 0 && self.ebs == 0 {
            return Err(
                "cbs and ebs are both 0: at least one must be positive (RFC 2697 §2)".into(),
            );
        }
        Ok(())
    }
}

#[derive(Debug, Clone)]
pub struct SrTcm {
    pub params: SrTcmParams,
    /// Bucket C: `Tc` against CBS.
    pub tc: Bucket,
    /// Bucket E: `Te` against EBS.
    pub te: Bucket,
    /// The time the buckets were last brought up to date.
    pub last: SimTime,
}

impl SrTcm {
    /// An srTCM in its initial state: both buckets full at time 0.
    pub fn new(params: SrTcmParams) -> Self {
        debug_assert!(params.validate().is_ok(), "{:?}", params.validate());
        SrTcm {
            params,
            tc: Bucket::full(params.cbs),
            te: Bucket::full(params.ebs),
            last: 0,
        }
    }

    /// Buckets C and E as they stand at `now` (refilled, not consumed).
    pub fn buckets_at(&self, now: SimTime) -> (Bucket, Bucket) {
        self.refilled(now.saturating_sub(self.last))
    }

    /// Buckets C and E after `dt` ns more at CIR (§3): the credit goes to C up to CBS, what C
    /// cannot hold to E up to EBS, the rest is discarded.
    #[inline]
    fn refilled(&self, dt: u64) -> (Bucket, Bucket) {
        let (mut tc, mut te) = (self.tc, self.te);
        let overflow = tc.fill(credit_earned(dt, self.params.cir));
        te.fill(overflow);
        (tc, te)
    }

    /// `(Tc, Te)` at `now`, in bytes.
    pub fn levels(&self, now: SimTime) -> (f64, f64) {
        let (tc, te) = self.buckets_at(now);
        (tc.bytes(), te.bytes())
    }

    #[inline]
    fn advance(&mut self, now: SimTime) {
        let dt = elapsed_since(&mut self.last, now);
        (self.tc, self.te) = self.refilled(dt);
    }
}

impl Meter for SrTcm {
    fn meter(&mut self, now: SimTime, size_bytes: u32, pre_color: Color, _: &mut SimRng) -> Color {
        self.advance(now);
        let aware = self.params.mode == ColorMode::Aware;
        let cost = credit_of_bytes(size_bytes as u64);
        if (!aware || pre_color == Color::Green) && self.tc.holds(cost) {
            self.tc.take(cost);
            Color::Green
        } else if (!aware || pre_color != Color::Red) && self.te.holds(cost) {
            self.te.take(cost);
            Color::Yellow
        } else {
            Color::Red
        }
    }

    fn token_level(&self, now: SimTime) -> Option<f64> {
        Some(self.buckets_at(now).0.bytes())
    }
}

const EBS: crate::params::typed::Decl<crate::params::typed::Bytes> =
    crate::params::typed::Decl::new(
        "ebs",
        crate::params::ParamKind::Bytes,
        "required",
        "Excess burst size (RFC 2697).",
    );

impl super::registry::MeterKind for SrTcmParams {
    type Runtime = FlavouredMeter<SrTcm>;
    const EXPORTS: super::registry::MeterExports = super::registry::MeterExports {
        ns2: Ok(super::registry::Ns2PolicyEntry {
            policy: "srTCM",
            colours: &["green", "yellow", "red"],
            args: &[
                super::registry::Ns2Arg::Number("cir_bps"),
                super::registry::Ns2Arg::Integer("cbs_bytes"),
                super::registry::Ns2Arg::Integer("ebs_bytes"),
            ],
            any_pre_colour: false,
            fixed_window_s: None,
        }),
        emulator: Ok(()),
    };
    const DOC: &'static str = "RFC 2697 single-rate three-colour marker (CIR, CBS, EBS).";
    const PARAMS: &'static [crate::params::Param] = &[
        super::registry::MODE.param,
        super::registry::CIR.param,
        super::registry::CBS.param,
        EBS.param,
        crate::params::FLAVOUR,
    ];
    fn from_table(
        t: &crate::params::Table,
        _ctx: &super::registry::MeterContext,
    ) -> Result<Self, crate::params::KeyError> {
        use super::registry::{read_mode, CBS, CIR};
        let cir = t.get(&CIR)?;
        let cbs = t.get(&CBS)?;
        Ok(SrTcmParams {
            cir,
            cbs,
            ebs: t.get(&EBS)?,
            mode: read_mode(t)?,
            flavour: super::registry::read_flavour(t, read_mode(t)?)?,
        })
    }
    fn check(&self) -> Result<(), String> {
        self.validate()
    }
    fn build(&self) -> FlavouredMeter<SrTcm> {
        match self.flavour {
            Flavour::Reference => FlavouredMeter::Reference(SrTcm::new(*self)),
            Flavour::Ns2 => FlavouredMeter::Ns2(Ns2Policy::new(Policy::SrTcm {
                cir: self.cir as f64 / 8.0,
                cbs: self.cbs as f64,
                ebs: self.ebs as f64,
            })),
        }
    }
    fn flat<'a>(&'a self, f: &mut super::registry::FlatMeter<'a>) {
        (f.cir_bps, f.cbs_bytes, f.ebs_bytes) = (self.cir, Some(self.cbs), Some(self.ebs));
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

    /// CIR 8000 bit/s = 1000 B/s (one byte token per ms), CBS 2000 B, EBS 3000 B.
    fn srtcm(mode: ColorMode) -> SrTcm {
        SrTcm::new(SrTcmParams {
            cir: 8000,
            cbs: 2000,
            ebs: 3000,
            mode,
            flavour: Flavour::Reference,
        })
    }

    #[test]
    fn conformance_colour_blind() {
        let mut m = srtcm(ColorMode::Blind);
        let mut got = colours(
            &mut m,
            &[
                // A burst of 1000-B packets at t = 0 with Tc = 2000, Te = 3000: two fit in C
                // (green), the next three in E (yellow), the sixth fits in neither (red, and
                // nothing is consumed).
                (0, 1000, G),
                (0, 1000, G),
                (0, 1000, G),
                (0, 1000, G),
                (0, 1000, G),
                (0, 1000, G),
                // t = 0.999 s: C has refilled to 999 B (E gets nothing while C is not full):
                // a 1000-B packet is red...
                (999 * MS, 1000, G),
                // ... and at t = 1 s, Tc = 1000 B exactly: green (Tc → 0).
                (1000 * MS, 1000, G),
            ],
        );
        // From t = 1 s, C needs 2 s to fill (t = 3 s); only then does E fill, at the same
        // 1000 B/s: at t = 3.5 s, Tc = 2000 and Te = 500.
        assert_eq!(m.levels(3500 * MS), (2000.0, 500.0));
        got.extend(colours(
            &mut m,
            &[
                // t = 4 s: Tc = 2000, Te = 1000. 2000 B green, 1000 B yellow (Te → 0), and
                // then 1 B finds both buckets empty: red.
                (4000 * MS, 2000, G),
                (4000 * MS, 1000, G),
                (4000 * MS, 1, G),
                // Sub-byte credit: at t = 4.0005 s Tc = 0.5 B < 1 B (red, nothing consumed),
                // at t = 4.001 s Tc = 1 B: green.
                (4000 * MS + MS / 2, 1, G),
                (4001 * MS, 1, G),
            ],
        ));
        assert_eq!(got, seq("GGYYYRRGGYRRG"));
    }

    #[test]
    fn conformance_colour_aware() {
        let mut m = srtcm(ColorMode::Aware);
        let got = colours(
            &mut m,
            &[
                // t = 0, Tc = 2000, Te = 3000.
                // Pre-yellow 1000 B: C is not consulted; E holds it: yellow, Te → 2000.
                (0, 1000, Y),
                // Pre-green 1000 B: green, Tc → 1000.
                (0, 1000, G),
                // Pre-red: red whatever the buckets hold, nothing consumed.
                (0, 1, R),
                // Pre-green 2000 B: Tc = 1000 < 2000, Te = 2000 ≥ 2000: yellow, Te → 0.
                (0, 2000, G),
                // Pre-green 1000 B: Tc = 1000: green, Tc → 0.
                (0, 1000, G),
                // Pre-yellow 1000 B: Te = 0: red (a pre-yellow packet never uses C).
                (0, 1000, Y),
                // t = 5 s: C is full again after 2 s (t = 2 s), E after 3 more (t = 5 s):
                // Tc = 2000, Te = 3000. A pre-yellow 1000-B packet is yellow and takes E's
                // tokens (Te → 2000), not C's...
                (5 * NS_PER_SEC, 1000, Y),
                // ... so a pre-green 2000-B packet still finds C full: green.
                (5 * NS_PER_SEC, 2000, G),
                (5 * NS_PER_SEC, 1, R),
            ],
        );
        assert_eq!(got, seq("YGRYGRYGR"));
        assert_eq!(m.levels(5 * NS_PER_SEC), (0.0, 2000.0));
    }

    /// A greedy source (1000-B packets every 800 µs, 10 Mb/s) against CIR = 1 Mb/s,
    /// CBS = 10 kB, EBS = 20 kB for 100 s. Bucket C behaves like the two-colour token bucket
    /// (green bytes 1000·⌊(CBS + CIR·t_last/8)/1000⌋ = 12 509 000). C is never full again after
    /// the start, so E never refills: the yellow bytes are exactly the initial EBS.
    #[test]
    fn greedy_source_gets_cir_and_e_never_refills() {
        let mut m = SrTcm::new(SrTcmParams {
            cir: 1_000_000,
            cbs: 10_000,
            ebs: 20_000,
            mode: ColorMode::Blind,
            flavour: Flavour::Reference,
        });
        let t = 100 * NS_PER_SEC;
        let bytes = greedy(&mut m, 1000, 800_000, t, &mut SimRng::derive(0, 0));
        assert_eq!(bytes, [12_509_000, 20_000, 125_000_000 - 12_529_000]);
        let green_bps = (bytes[0] - 10_000) as f64 * 8.0 / 100.0;
        assert!((green_bps / 1e6 - 1.0).abs() < 1e-4, "{green_bps}");
    }

    /// 64-B packets every 512 ns against CIR = 1 Mb/s (0.512 bit of credit per update),
    /// CBS = EBS = 1500 B, for 1 s: green ⌊(8·CBS + CIR·t_last)/512⌋ = 1976 as for the token
    /// bucket, yellow ⌊EBS/64⌋ = 23 (E is drained by the initial burst and never refills).
    #[test]
    fn no_lost_fractional_credit() {
        let mut m = SrTcm::new(SrTcmParams {
            cir: 1_000_000,
            cbs: 1500,
            ebs: 1500,
            mode: ColorMode::Blind,
            flavour: Flavour::Reference,
        });
        let bytes = greedy(&mut m, 64, 512, NS_PER_SEC, &mut SimRng::derive(0, 0));
        assert_eq!(bytes[0] / 64, 1976);
        assert_eq!(bytes[1] / 64, 23);
    }

    #[test]
    fn validation() {
        let mut p = SrTcmParams {
            cir: 1,
            cbs: 0,
            ebs: 1500,
            mode: ColorMode::Blind,
            flavour: Flavour::Reference,
        };
        assert!(p.validate().is_ok());
        p.ebs = 0;
        assert!(p.validate().unwrap_err().contains("at least one"));
        p.cbs = 1500;
        p.cir = 0;
        assert!(p.validate().unwrap_err().contains("cir"));
    }

    proptest! {
        /// For any arrivals, up to any arrival time t: green bytes ≤ CBS + CIR·t and
        /// green + yellow ≤ CBS + EBS + CIR·t (both buckets draw on one CIR); colour-aware
        /// mode never promotes; colour-blind mode ignores the pre-colour.
        #[test]
        fn colours_never_exceed_the_profile(
            cir in 1_000u64..100_000_000,
            cbs in 0u64..20_000,
            ebs in 1u64..20_000,
            aware in any::<bool>(),
            seq in arrivals(),
        ) {
            let mode = if aware { ColorMode::Aware } else { ColorMode::Blind };
            let mut m = SrTcm::new(SrTcmParams { cir, cbs, ebs, mode, flavour: Flavour::Reference, });
            check_run(&mut m, aware, &seq, |t, [green, yellow, _]| {
                prop_assert!(within_profile(green, cbs, cir, t));
                prop_assert!(within_profile(green + yellow, cbs + ebs, cir, t));
                Ok(())
            })?;
        }
    }
}
