//! Single-rate two-colour token bucket (CIR, CBS): the IN/OUT profile marker of the Assured
//! Service papers (Clark & Fang 1998; Sahu et al., SIGMETRICS 2000; Kim's RI+O and Neglia's
//! studies compare against it) and ns-2's `TokenBucket` policy.
//!
//! Bucket C, of size CBS bytes, is full at time 0 and fills at CIR. A packet of B bytes is
//! green (IN) if `Tc − B ≥ 0`, and then `Tc ← Tc − B`; otherwise it is yellow (OUT) and
//! nothing is consumed. These are RFC 2697 §3's rules for bucket C alone (srTCM with EBS = 0,
//! yellow in place of red).
//!
//! Colour-aware mode (no RFC defines one for two colours; this follows RFC 2697's rule for
//! bucket C): a packet pre-coloured yellow or red keeps its colour and consumes nothing; a
//! pre-green packet is metered as above, so it may be demoted but nothing is ever promoted.
//!
//! Deviation, shared with [`super::srtcm`] and [`super::trtcm`]: the RFCs add one byte
//! token CIR times per second (CIR in bytes/s there); qoslab adds credit as an exact fluid
//! (`elapsed_ns × CIR` in 10⁻⁹ bit), the limit of that process and what ns-2 does in floating
//! point. Long-run rates and burst bounds (CBS + CIR·t) are the same; individual decisions
//! can differ for packets arriving within a byte-time (8/CIR s) of a tick, since the RFC's
//! ticks have a phase fixed at time 0 and the fluid has none.

use serde::Serialize;

use super::ns2_policy::{FlavouredMeter, Ns2Policy, Policy};
use super::{
    credit_earned, credit_of_bytes, elapsed_since, positive_rate, Bucket, Color, ColorMode, Meter,
};
use crate::params::Flavour;
use crate::rng::SimRng;
use crate::units::SimTime;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TokenBucketParams {
    /// CIR — Committed Information Rate, bit/s: the token rate. Must be positive.
    pub cir: u64,
    /// CBS — Committed Burst Size, bytes: the bucket size. Must be positive; a packet larger
    /// than CBS is never green.
    pub cbs: u64,
    /// Colour-blind (default) or colour-aware.
    pub mode: ColorMode,
    /// The reference meter, or ns-2's policy of the same name (`conditioner::ns2_policy`).
    pub flavour: Flavour,
}

impl TokenBucketParams {
    pub fn validate(&self) -> Result<(), String> {
        positive_rate("cir", self.cir)?;
        if self.cbs == 0 {
            return Err("cbs must be a positive size (bytes), got 0".into());
        }
        Ok(())
    }
}

#[derive(Debug, Clone)]
pub struct TokenBucket {
    pub params: TokenBucketParams,
    /// Bucket C: `Tc` against CBS.
    pub tc: Bucket,
    /// The time `tc` was last brought up to date.
    pub last: SimTime,
}

impl TokenBucket {
    /// A token bucket in its initial state: full at time 0.
    pub fn new(params: TokenBucketParams) -> Self {
        debug_assert!(params.validate().is_ok(), "{:?}", params.validate());
        TokenBucket {
            params,
            tc: Bucket::full(params.cbs),
            last: 0,
        }
    }

    /// Bucket C as it stands at `now` (refilled, not consumed).
    pub fn tc_at(&self, now: SimTime) -> Bucket {
        self.refilled(now.saturating_sub(self.last))
    }

    /// Bucket C after `dt` ns more at CIR, saturating at CBS.
    #[inline]
    fn refilled(&self, dt: u64) -> Bucket {
        let mut tc = self.tc;
        tc.fill(credit_earned(dt, self.params.cir));
        tc
    }

    #[inline]
    fn advance(&mut self, now: SimTime) {
        let dt = elapsed_since(&mut self.last, now);
        self.tc = self.refilled(dt);
    }
}

impl Meter for TokenBucket {
    fn meter(&mut self, now: SimTime, size_bytes: u32, pre_color: Color, _: &mut SimRng) -> Color {
        self.advance(now);
        if self.params.mode == ColorMode::Aware && pre_color != Color::Green {
            return pre_color;
        }
        let cost = credit_of_bytes(size_bytes as u64);
        if self.tc.holds(cost) {
            self.tc.take(cost);
            Color::Green
        } else {
            Color::Yellow
        }
    }

    fn token_level(&self, now: SimTime) -> Option<f64> {
        Some(self.tc_at(now).bytes())
    }
}

impl super::registry::MeterKind for TokenBucketParams {
    type Runtime = FlavouredMeter<TokenBucket>;
    const EXPORTS: super::registry::MeterExports = super::registry::MeterExports {
        ns2: Ok(super::registry::Ns2PolicyEntry {
            policy: "TokenBucket",
            colours: &["green", "yellow"],
            args: &[
                super::registry::Ns2Arg::Number("cir_bps"),
                super::registry::Ns2Arg::Integer("cbs_bytes"),
            ],
            any_pre_colour: false,
            fixed_window_s: None,
        }),
        emulator: Ok(()),
    };
    const DOC: &'static str =
        "Single-rate two-colour token bucket (CIR, CBS): green within the profile, yellow (OUT) beyond it.";
    /// Red only as a packet that arrives red, kept red in colour-aware mode.
    fn never_red(&self) -> Option<&'static str> {
        match (self.flavour, self.mode) {
            (Flavour::Ns2, _) => Some("ns-2's TokenBucket policer is colour-blind: it colours a packet green or yellow"),
            (_, ColorMode::Blind) => Some("colour-blind, it colours a packet green or yellow (with meter.mode = \"aware\" a packet that arrives red stays red)"),
            (_, ColorMode::Aware) => None,
        }
    }
    const PARAMS: &'static [crate::params::Param] = &[
        super::registry::MODE.param,
        super::registry::CIR.param,
        super::registry::CBS.param,
        crate::params::FLAVOUR,
    ];
    fn from_table(
        t: &crate::params::Table,
        _ctx: &super::registry::MeterContext,
    ) -> Result<Self, crate::params::KeyError> {
        use super::registry::{read_mode, CBS, CIR};
        Ok(TokenBucketParams {
            cir: t.get(&CIR)?,
            cbs: t.get(&CBS)?,
            mode: read_mode(t)?,
            flavour: super::registry::read_flavour(t, read_mode(t)?)?,
        })
    }
    fn check(&self) -> Result<(), String> {
        self.validate()
    }
    fn build(&self) -> FlavouredMeter<TokenBucket> {
        match self.flavour {
            Flavour::Reference => FlavouredMeter::Reference(TokenBucket::new(*self)),
            Flavour::Ns2 => FlavouredMeter::Ns2(Ns2Policy::new(Policy::TokenBucket {
                cir: self.cir as f64 / 8.0,
                cbs: self.cbs as f64,
            })),
        }
    }
    fn flat<'a>(&'a self, f: &mut super::registry::FlatMeter<'a>) {
        (f.cir_bps, f.cbs_bytes) = (self.cir, Some(self.cbs));
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

    /// CIR 8000 bit/s = 1000 B/s, i.e. one byte of tokens per millisecond; CBS 2000 B.
    fn tb(mode: ColorMode) -> TokenBucket {
        TokenBucket::new(TokenBucketParams {
            cir: 8000,
            cbs: 2000,
            mode,
            flavour: Flavour::Reference,
        })
    }

    #[test]
    fn conformance_colour_blind() {
        let mut m = tb(ColorMode::Blind);
        let got = colours(
            &mut m,
            &[
                // t = 0, Tc = 2000: two 1000-B packets fit (Tc 2000 → 1000 → 0), the third
                // finds Tc = 0 < 1000: yellow, nothing consumed.
                (0, 1000, G),
                (0, 1000, G),
                (0, 1000, G),
                // t = 0.5 s: 500 bytes of tokens. A 500-B packet uses them all (green); a
                // 1-B packet at the same instant finds Tc = 0 (yellow).
                (500 * MS, 500, G),
                (500 * MS, 1, G),
                // t = 0.5005 s: Tc = 0.5 B < 1 B: yellow, and the half byte is kept...
                (500 * MS + MS / 2, 1, G),
                // ... so at t = 0.501 s Tc = 1 B exactly: green.
                (501 * MS, 1, G),
                // t = 10.501 s: 10 s of tokens, but C holds at most CBS = 2000: a 2000-B
                // packet is green and a further byte is yellow.
                (10_501 * MS, 2000, G),
                (10_501 * MS, 1, G),
            ],
        );
        assert_eq!(got, seq("GGYGYYGGY"));
        assert_eq!(m.token_level(10_501 * MS), Some(0.0));
        // 250 ms later: 250 bytes of tokens.
        assert_eq!(m.token_level(10_751 * MS), Some(250.0));
    }

    #[test]
    fn conformance_colour_aware() {
        let mut m = tb(ColorMode::Aware);
        let got = colours(
            &mut m,
            &[
                // Pre-coloured yellow and red packets keep their colour and consume nothing,
                (0, 1000, Y),
                (0, 1, R),
                // so bucket C is still full (2000) for a pre-green 2000-B packet: green.
                (0, 2000, G),
                // A pre-green packet that does not fit is demoted to yellow.
                (0, 1, G),
                // With C full again (t = 2 s), a pre-yellow packet still stays yellow.
                (2 * NS_PER_SEC, 1, Y),
                (2 * NS_PER_SEC, 2000, G),
            ],
        );
        assert_eq!(got, seq("YRGYYG"));
    }

    /// A greedy source (10 Mb/s of 1000-B packets, one every 800 µs) against CIR = 1 Mb/s,
    /// CBS = 10 kB for 100 s. Each arrival adds 100 B of tokens, and a packet is green as soon
    /// as 1000 B have gathered, so after the arrival at t the green bytes are
    /// 1000·⌊(CBS + CIR·t/8) / 1000⌋ — 12 509 packets at t_last = 99.9992 s — and the green
    /// rate over the run is CIR plus the initial burst CBS/T.
    #[test]
    fn greedy_source_gets_cir() {
        let mut m = TokenBucket::new(TokenBucketParams {
            cir: 1_000_000,
            cbs: 10_000,
            mode: ColorMode::Blind,
            flavour: Flavour::Reference,
        });
        let t = 100 * NS_PER_SEC;
        let bytes = greedy(&mut m, 1000, 800_000, t, &mut SimRng::derive(0, 0));
        assert_eq!(bytes[Color::Green as usize], 12_509_000);
        assert_eq!(bytes[Color::Red as usize], 0);
        let green_bps = (bytes[0] - 10_000) as f64 * 8.0 / 100.0;
        assert!((green_bps / 1e6 - 1.0).abs() < 1e-4, "{green_bps}");
    }

    /// 64-byte packets (512 bit) against CIR = 1 Mb/s, CBS = 1500 B, for 1 s, at gaps of 1 µs,
    /// 512 ns (64 B at 1 Gb/s) and 333 ns: every update adds 1, 0.512 or 0.333 bit of credit,
    /// always less than one byte, and often less than one bit. With exact credit the green
    /// count is the same for all three, ⌊(8·CBS + CIR·t_last) / 512⌋ = ⌊1 011 999.x / 512⌋ =
    /// 1976 (t_last ≈ 1 s). A refill truncated to whole bytes (or bits) per update would give
    /// only the initial ⌊12 000 / 512⌋ = 23.
    #[test]
    fn no_lost_fractional_credit() {
        for gap in [1000, 512, 333] {
            let mut m = TokenBucket::new(TokenBucketParams {
                cir: 1_000_000,
                cbs: 1500,
                mode: ColorMode::Blind,
                flavour: Flavour::Reference,
            });
            let bytes = greedy(&mut m, 64, gap, NS_PER_SEC, &mut SimRng::derive(0, 0));
            let t_last = (NS_PER_SEC - 1) / gap * gap;
            let expect = (1500u128 * 8 * NS_PER_SEC as u128 + 1_000_000 * t_last as u128)
                / (512 * NS_PER_SEC as u128);
            assert_eq!(expect, 1976);
            assert_eq!(bytes[0] / 64, 1976, "gap {gap} ns");
        }
    }

    proptest! {
        /// Whatever the arrivals, the green bytes up to any arrival time t never exceed
        /// CBS + CIR·t (exactly, in integers); colour-aware mode never promotes and
        /// colour-blind mode ignores the pre-colour; red is only ever a pre-coloured red
        /// packet kept red.
        #[test]
        fn green_never_exceeds_the_profile(
            cir in 1_000u64..100_000_000,
            cbs in 1u64..20_000,
            aware in any::<bool>(),
            seq in arrivals(),
        ) {
            let mode = if aware { ColorMode::Aware } else { ColorMode::Blind };
            let mut m = TokenBucket::new(TokenBucketParams { cir, cbs, mode, flavour: Flavour::Reference, });
            let bytes = check_run(&mut m, aware, &seq, |t, [green, _, _]| {
                prop_assert!(within_profile(green, cbs, cir, t), "green {} at t {}", green, t);
                Ok(())
            })?;
            let pre_red: u64 = seq.iter().filter(|a| a.2 == Color::Red).map(|a| a.1 as u64).sum();
            prop_assert_eq!(bytes[Color::Red as usize], if aware { pre_red } else { 0 });
        }
    }
}
