//! DiffServ traffic conditioning (RFC 2475 §2.3.3): the meters and markers of a boundary
//! node's traffic conditioning block, as pure state machines.
//!
//! A meter measures a traffic stream against a profile and gives each packet a [`Color`];
//! a marker then writes the colour into the DS field (AFx1/AFx2/AFx3, see [`Color`]). The
//! meters here are:
//!
//! * [`TokenBucket`] — single-rate two-colour token bucket (CIR, CBS), the papers' IN/OUT
//!   profile marker;
//! * [`SrTcm`] — RFC 2697 single-rate three-colour marker (CIR, CBS, EBS);
//! * [`TrTcm`] — RFC 2698 two-rate three-colour marker (PIR, PBS, CIR, CBS);
//! * [`Tsw2cm`] — Clark & Fang's time-sliding-window two-colour tagger (CTR, win_len);
//! * [`Tsw3cm`] — RFC 2859 time-sliding-window three-colour marker (CTR, PTR, win_len);
//! * [`Ard`] — Hur's aggregate Adaptive Regulating Marker (ARM) and Drop marker (ARD): a
//!   leaky bucket filled at an adaptive Temporary Permitted Rate that re-marks (and, ARD,
//!   drops) IN packets of the aggregate;
//! * [`Twam`] — Bouras & Sevasti's TCP-Window-Aware Marker: per-flow IN probabilities from the
//!   flows' congestion windows and contracted rates (Eq. 3), recomputed every `α·RTT_LSP`.
//! * [`ProbeMarker`] — Neglia et al.'s per-flow adaptive low-priority (probe) marker: IN
//!   bursts of adaptive length `A_IN` closed by one OUT probe, read from TCP sequence numbers.
//!
//! Like the queue disciplines in [`crate::aqm`], a meter never owns packets, never reads a
//! clock and never draws from a global RNG: the host passes in the arrival time, the packet's
//! size and pre-colour, and the component's own random stream (only the TSW markers draw).
//!
//! Units: rates in bit/s (u64), sizes in bytes, time in integer nanoseconds. The token
//! buckets keep their credit as an exact integer count of 10⁻⁹ bit ([`Bucket`]): an update
//! adds `elapsed_ns × rate_bps`, saturating at the bucket size, and a packet of `len` bytes
//! costs `8·len·10⁹`. No fractional credit is ever lost, however small the packets and
//! however often the bucket is updated (STYLE.md §B.6; INET's truncating refill is the
//! counter-example).

pub mod ard;
pub mod ns2_policy;
pub mod probe;
pub mod registry;
pub mod srtcm;
pub mod token_bucket;
pub mod trtcm;
pub mod tswtcm;
pub mod twam;

use serde::Serialize;

use crate::packet::PacketMeta;
use crate::rng::SimRng;
use crate::units::SimTime;

pub use ard::{Ard, ArdParams, ArmParams, DropOrder};
pub use probe::{IncreaseRule, ProbeMarker, ProbeParams};
pub use srtcm::{SrTcm, SrTcmParams};
pub use token_bucket::{TokenBucket, TokenBucketParams};
pub use trtcm::{TrTcm, TrTcmParams};
pub use tswtcm::{Tsw2cm, Tsw2cmParams, Tsw3cm, Tsw3cmParams, TswEstimator};
pub use twam::{Twam, TwamFormula, TwamParams, WindowSource};

/// A packet's conformance colour (RFC 2697/2698 vocabulary), ordered by drop precedence:
/// `Green < Yellow < Red`.
///
/// With the AF PHB group (RFC 2597) the colour selects the drop precedence within a class:
/// green → AFx1 (low), yellow → AFx2 (medium), red → AFx3 (high). The two-colour markers of
/// the papers call green packets IN (in-profile) and yellow packets OUT (out-of-profile);
/// they never produce red.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Color {
    Green = 0,
    Yellow = 1,
    Red = 2,
}

/// Colour names, indexed by `Color as usize` (for per-colour counters and outputs).
pub const COLOR_NAMES: [&str; 3] = ["green", "yellow", "red"];

impl Color {
    pub const ALL: [Color; 3] = [Color::Green, Color::Yellow, Color::Red];

    pub fn name(self) -> &'static str {
        COLOR_NAMES[self as usize]
    }

    /// The AF drop precedence index used by the queues ([`crate::ds::drop_precedence`]):
    /// 0 for AFx1 (green, IN), 1 for AFx2 (yellow, OUT), 2 for AFx3 (red).
    #[inline]
    pub fn drop_precedence(self) -> u8 {
        self as u8
    }

    /// The colour of a drop precedence index; anything beyond 2 is red.
    #[inline]
    pub fn from_drop_precedence(prec: u8) -> Color {
        match prec {
            0 => Color::Green,
            1 => Color::Yellow,
            _ => Color::Red,
        }
    }

    /// The AF codepoint of this colour in AF class `class` (1..=4): `8·class + 2·(prec + 1)`,
    /// e.g. AF11 = 10 (green), AF12 = 12 (yellow), AF13 = 14 (red) in class 1.
    pub fn af_dscp(self, class: u8) -> u8 {
        debug_assert!((1..=4).contains(&class), "AF classes are 1..=4");
        8 * class + 2 * (self as u8 + 1)
    }
}

/// Whether a meter looks at the colour a packet already carries (RFC 2697/2698 §3).
///
/// In colour-aware mode a meter never promotes a packet: the result is at least as high a
/// drop precedence as the pre-colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ColorMode {
    /// Every packet is treated as uncoloured (green).
    #[default]
    Blind,
    /// The pre-colour restricts the outcome (and, for the token buckets, which tokens a packet
    /// may use).
    Aware,
}

/// A meter/marker as a state machine (RFC 2475 "meter" followed by "marker").
pub trait Meter {
    /// Colours a packet of `size_bytes` arriving at `now`. `pre_color` is the colour it carries
    /// on arrival; colour-blind meters ignore it. Arrival times must not decrease.
    fn meter(&mut self, now: SimTime, size_bytes: u32, pre_color: Color, rng: &mut SimRng)
        -> Color;

    /// The committed bucket's token count at `now`, in bytes (for time series): `Tc` of the
    /// token bucket, srTCM and trTCM. `None` (the default) for meters without a bucket (TSW,
    /// TWAM, the probe marker).
    fn token_level(&self, _now: SimTime) -> Option<f64> {
        None
    }

    /// Colours a whole packet. Markers that read more than the size and the pre-colour (the
    /// flow, the TCP sequence number, whether it is a pure ACK) override this; the default
    /// meters the size alone, as a rate meter does.
    #[inline]
    fn meter_packet(
        &mut self,
        now: SimTime,
        pkt: &PacketMeta,
        pre_color: Color,
        rng: &mut SimRng,
    ) -> Color {
        self.meter(now, pkt.size, pre_color, rng)
    }

    /// Named state variables for time series (e.g. ARD's `tpr_bps`, `lambda_in_bps`), each
    /// passed to `out`; cumulative counters are reported as their running totals. The
    /// default reports none.
    fn gauges(&self, _now: SimTime, _out: &mut dyn FnMut(&'static str, f64)) {}

    /// The period of the meter's timer, if it keeps one (TWAM's operating interval).
    fn timer_period(&self) -> Option<SimTime> {
        None
    }

    /// The timer fires at `now`. `windows[k]` is flow `k`'s congestion window (packets; 0
    /// for UDP), for markers that read the senders' windows. Returns the value the meter
    /// signals to the queues that follow it (TWAM: the LSP window Σ W_k), if any.
    fn on_timer(&mut self, _now: SimTime, _windows: &[f64]) -> Option<f64> {
        None
    }
}

/// Token-bucket credit per byte: one token is one byte (RFC 2697/2698), kept in units of
/// 10⁻⁹ bit so that `elapsed_ns × rate_bps` is exact.
pub const CREDIT_PER_BYTE: u128 = 8 * 1_000_000_000;

/// The credit a packet of `bytes` bytes costs (`8·bytes·10⁹`).
#[inline]
pub fn credit_of_bytes(bytes: u64) -> u128 {
    bytes as u128 * CREDIT_PER_BYTE
}

/// The credit a rate of `rate_bps` earns in `elapsed_ns`. Exact: the product of two u64 fits
/// in a u128 ((2⁶⁴ − 1)² < 2¹²⁸).
#[inline]
pub fn credit_earned(elapsed_ns: u64, rate_bps: u64) -> u128 {
    elapsed_ns as u128 * rate_bps as u128
}

/// How long since `last`, the time a meter's buckets were last brought up to date, for an
/// arrival at `now`; moves `last` to `now`. Arrival times must not decrease (checked in debug
/// builds); an earlier `now` earns nothing and leaves `last` where it was.
#[inline]
pub fn elapsed_since(last: &mut SimTime, now: SimTime) -> u64 {
    debug_assert!(now >= *last, "time went backwards: {now} < {}", *last);
    let dt = now.saturating_sub(*last);
    *last = (*last).max(now);
    dt
}

/// `Err` naming `key` when a rate is 0 (every meter's rates must be positive).
pub fn positive_rate(key: &str, bps: u64) -> Result<(), String> {
    if bps == 0 {
        return Err(format!("{key} must be a positive rate (bit/s), got 0"));
    }
    Ok(())
}

/// One token bucket's count and size, in exact credit units of 10⁻⁹ bit (the RFCs' `Tc`,
/// `Te`, `Tp` against `CBS`, `EBS`, `PBS`). Filling is separate from time keeping so that
/// srTCM can pour the overflow of bucket C into bucket E.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bucket {
    /// Current token count (credit units); always `<= size`.
    pub tokens: u128,
    /// Bucket size (credit units).
    pub size: u128,
}

impl Bucket {
    /// A bucket of `size_bytes`, initially full (RFC 2697/2698: "initially (at time 0) full").
    pub fn full(size_bytes: u64) -> Self {
        let size = credit_of_bytes(size_bytes);
        Bucket { tokens: size, size }
    }

    /// Adds `credit`, saturating at the size; returns the credit that did not fit.
    #[inline]
    pub fn fill(&mut self, credit: u128) -> u128 {
        let room = self.size - self.tokens;
        if credit <= room {
            self.tokens += credit;
            0
        } else {
            self.tokens = self.size;
            credit - room
        }
    }

    /// True when the bucket holds at least `cost` (the RFCs' `T(t) − B ≥ 0`).
    #[inline]
    pub fn holds(&self, cost: u128) -> bool {
        self.tokens >= cost
    }

    /// Removes `cost`; the caller has checked [`Bucket::holds`].
    #[inline]
    pub fn take(&mut self, cost: u128) {
        debug_assert!(self.tokens >= cost);
        self.tokens -= cost;
    }

    /// The token count in bytes (fractional), for reporting.
    pub fn bytes(&self) -> f64 {
        self.tokens as f64 / CREDIT_PER_BYTE as f64
    }
}

pub use registry::{AnyMeter, MeterKind, MeterSpec, METER_TYPES};

/// Drivers shared by the meters' tests: scripted arrivals, greedy sources, random sequences.
#[cfg(test)]
pub(crate) mod testkit {
    use super::{Color, Meter};
    use crate::rng::SimRng;
    use crate::units::SimTime;
    use proptest::prelude::*;

    /// One millisecond in ns.
    pub const MS: u64 = 1_000_000;

    /// Colours for conformance tables.
    pub const G: Color = Color::Green;
    pub const Y: Color = Color::Yellow;
    pub const R: Color = Color::Red;

    /// Colours from a compact string: `"GGYR"`.
    pub fn seq(s: &str) -> Vec<Color> {
        s.chars()
            .map(|c| match c {
                'G' => Color::Green,
                'Y' => Color::Yellow,
                'R' => Color::Red,
                _ => panic!("bad colour {c:?}"),
            })
            .collect()
    }

    /// Meters `(time ns, size bytes, pre-colour)` arrivals in order and returns the colours.
    pub fn colours<M: Meter>(m: &mut M, arrivals: &[(SimTime, u32, Color)]) -> Vec<Color> {
        let mut rng = SimRng::derive(0, 0);
        arrivals
            .iter()
            .map(|&(t, size, pre)| m.meter(t, size, pre, &mut rng))
            .collect()
    }

    /// A greedy constant-rate source: one `size`-byte (uncoloured) packet every `gap_ns` from
    /// t = 0 while t < `horizon_ns`. Returns the bytes metered green, yellow and red.
    pub fn greedy<M: Meter>(
        m: &mut M,
        size: u32,
        gap_ns: u64,
        horizon_ns: u64,
        rng: &mut SimRng,
    ) -> [u64; 3] {
        let mut bytes = [0u64; 3];
        let mut t = 0;
        while t < horizon_ns {
            bytes[m.meter(t, size, Color::Green, rng) as usize] += size as u64;
            t += gap_ns;
        }
        bytes
    }

    /// Random arrival sequences: (gap since the previous arrival in ns, size in bytes,
    /// pre-colour), gaps from back-to-back to 20 ms.
    pub fn arrivals() -> impl Strategy<Value = Vec<(u64, u32, Color)>> {
        proptest::collection::vec(
            (
                prop_oneof![Just(0u64), 0u64..20_000, 0u64..20_000_000],
                prop_oneof![Just(40u32), Just(1500u32), 1u32..2000],
                prop_oneof![Just(Color::Green), Just(Color::Yellow), Just(Color::Red)],
            ),
            1..400,
        )
    }

    /// Meters the random arrivals `seq` (from [`arrivals`]) with `m` and checks what every
    /// colour meter owes (RFC 2697/2698 §3): colour-aware, it never promotes a packet;
    /// colour-blind, it colours each packet as a copy of `m` colours the same arrivals all
    /// pre-coloured green. After each arrival `profile(t, bytes)` is given the time and the
    /// bytes coloured so far (green, yellow, red), to check the meter's own bounds. Returns
    /// those bytes at the end.
    pub fn check_run<M: Meter + Clone>(
        m: &mut M,
        aware: bool,
        seq: &[(u64, u32, Color)],
        mut profile: impl FnMut(SimTime, [u64; 3]) -> Result<(), TestCaseError>,
    ) -> Result<[u64; 3], TestCaseError> {
        let mut uncoloured = m.clone();
        let (mut rng, mut twin_rng) = (SimRng::derive(0, 0), SimRng::derive(0, 0));
        let (mut t, mut bytes) = (0u64, [0u64; 3]);
        for &(gap, size, pre) in seq {
            t += gap;
            let c = m.meter(t, size, pre, &mut rng);
            if aware {
                prop_assert!(c >= pre, "{:?} promoted to {:?} at t {}", pre, c, t);
            } else {
                prop_assert_eq!(c, uncoloured.meter(t, size, Color::Green, &mut twin_rng));
            }
            bytes[c as usize] += size as u64;
            profile(t, bytes)?;
        }
        Ok(bytes)
    }

    /// True when `bytes` fit in a bucket of `size` bytes refilled at `rate` bit/s for `t` ns
    /// (exact: `8·bytes·10⁹ ≤ 8·size·10⁹ + rate·t`).
    pub fn within_profile(bytes: u64, size: u64, rate: u64, t: SimTime) -> bool {
        bytes as u128 * 8_000_000_000 <= size as u128 * 8_000_000_000 + rate as u128 * t as u128
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Flavour;
    use crate::units::NS_PER_SEC;

    #[test]
    fn colours_map_to_af_drop_precedences() {
        assert_eq!(Color::Green.af_dscp(1), 10); // AF11
        assert_eq!(Color::Yellow.af_dscp(1), 12); // AF12
        assert_eq!(Color::Red.af_dscp(4), 38); // AF43
        for c in Color::ALL {
            assert_eq!(Color::from_drop_precedence(c.drop_precedence()), c);
            assert_eq!(
                crate::ds::drop_precedence(c.af_dscp(2)),
                c.drop_precedence()
            );
        }
        assert!(Color::Green < Color::Yellow && Color::Yellow < Color::Red);
        assert_eq!(Color::Yellow.name(), "yellow");
    }

    #[test]
    fn bucket_fill_saturates_and_returns_overflow() {
        let mut b = Bucket::full(10);
        assert_eq!(b.size, 80 * NS_PER_SEC as u128);
        b.take(credit_of_bytes(4));
        assert_eq!(b.fill(credit_of_bytes(3)), 0);
        assert_eq!(b.fill(credit_of_bytes(3)), credit_of_bytes(2));
        assert_eq!(b.tokens, b.size);
        assert!(b.holds(credit_of_bytes(10)) && !b.holds(credit_of_bytes(10) + 1));
        // The largest product still fits: (2⁶⁴ − 1)² = u128::MAX − 2·u64::MAX.
        assert_eq!(
            credit_earned(u64::MAX, u64::MAX),
            u128::MAX - 2 * u64::MAX as u128
        );
    }

    fn all_specs() -> Vec<MeterSpec> {
        vec![
            MeterSpec::TokenBucket(TokenBucketParams {
                cir: 1_000_000,
                cbs: 3000,
                mode: ColorMode::Blind,
                flavour: Flavour::Reference,
            }),
            MeterSpec::Srtcm(SrTcmParams {
                cir: 1_000_000,
                cbs: 3000,
                ebs: 3000,
                mode: ColorMode::Aware,
                flavour: Flavour::Reference,
            }),
            MeterSpec::Trtcm(TrTcmParams {
                cir: 1_000_000,
                cbs: 3000,
                pir: 2_000_000,
                pbs: 3000,
                mode: ColorMode::Blind,
                flavour: Flavour::Reference,
            }),
            MeterSpec::Tsw2cm(Tsw2cmParams {
                ctr: 1_000_000,
                win_len: NS_PER_SEC,
                flavour: Flavour::Reference,
            }),
            MeterSpec::Tsw3cm(Tsw3cmParams {
                ctr: 1_000_000,
                ptr: 2_000_000,
                win_len: NS_PER_SEC,
                flavour: Flavour::Reference,
            }),
        ]
    }

    #[test]
    fn specs_build_dispatch_and_serialise_with_a_type_tag() {
        let mut rng = SimRng::derive(1, 1);
        for spec in all_specs() {
            let mut m = spec.build().unwrap();
            // A first small packet conforms to every profile (buckets start full, the TSW
            // estimate starts at CTR and a packet 1 ms in keeps it below).
            assert_eq!(
                m.meter(1_000_000, 100, Color::Green, &mut rng),
                Color::Green
            );
            let has_bucket = !matches!(spec, MeterSpec::Tsw2cm(_) | MeterSpec::Tsw3cm(_));
            assert_eq!(m.token_level(1_000_000).is_some(), has_bucket);
            let s = toml::to_string(&spec).unwrap();
            assert!(s.contains(&format!("type = \"{}\"", spec.kind())), "{s}");
        }
        let s = toml::to_string(&all_specs()[1]).unwrap();
        assert!(
            s.contains("mode = \"aware\"") && s.contains("ebs = 3000"),
            "{s}"
        );
    }

    #[test]
    fn build_rejects_invalid_parameters() {
        let bad = MeterSpec::Trtcm(TrTcmParams {
            cir: 2_000_000,
            cbs: 3000,
            pir: 1_000_000,
            pbs: 3000,
            mode: ColorMode::Blind,
            flavour: Flavour::Reference,
        });
        let e = bad.build().unwrap_err();
        assert!(e.contains("pir") && e.contains("cir"), "{e}");
    }
}
