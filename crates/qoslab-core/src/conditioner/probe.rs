//! The adaptive low-priority ("probe") marker of Neglia, Bianchi, Saitta and Lombardo
//! ("Adaptive low priority packet marking for better TCP performance", Section 2, Fig. 1):
//! a per-flow marker at the ingress router that marks almost every TCP segment IN and only
//! occasionally one OUT, as a probe that a RIO core drops first when congestion builds.
//!
//! State per flow, created on the flow's first segment (the paper: on its SYN):
//!
//! * `SN_h` — the highest sequence number seen, compared "in a cyclical sense" (32-bit serial
//!   number arithmetic, RFC 1982): initially the first segment's SN (the SYN's ISN);
//! * `L_IN` — the length of the current burst of IN-marked segments, initially 0;
//! * `A_IN` — an autoregressive average of past burst lengths, initially `A_0`.
//!
//! For every non-empty segment with sequence number SN (Fig. 1):
//!
//! * `SN ≤ SN_h` (a replica: the original was probably lost): `A_IN ← (1 − α)·A_IN + α·L_IN`,
//!   `L_IN ← 0`, the segment goes IN;
//! * `SN > SN_h` (new): `SN_h ← SN`, `L_IN ← L_IN + 1`; IN while `L_IN < A_IN`, otherwise the
//!   segment goes OUT, `L_IN ← 0` and `A_IN ← increase(A_IN)`, one of `2·A_IN + 1` (the
//!   paper's default), `A_IN + 1`, or `A_IN / (1 − α)` (the stop-and-wait steady-state rule).
//!
//! Pure ACKs are not marked: they leave with the colour they arrived with and do not touch the
//! state. The marker reads only the sequence number, as a router would: it never looks at the
//! simulator's `retransmit` flag. The simulator numbers TCP segments in packets from 0 (segment
//! 0 is the SYN); the marker's 32-bit SN is `(isn + seq) mod 2³²`, so that a non-zero `isn`
//! exercises the wrap-around in a run.
//!
//! IN is [`Color::Green`] (AFx1), OUT is [`Color::Yellow`] (AFx2); the marker is colour-blind.

use serde::Serialize;

use super::{Color, Meter};
use crate::packet::{PacketKind, PacketMeta};
use crate::rng::SimRng;
use crate::units::SimTime;

/// How `A_IN` grows after an OUT-marked segment (`increase(A_IN)` in Fig. 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IncreaseRule {
    /// `A_IN ← 2·A_IN + 1` (the paper's default).
    DoublePlusOne,
    /// `A_IN ← A_IN + 1` (the "less aggressive" law of Section 4).
    PlusOne,
    /// `A_IN ← A_IN / (1 − α)` (constant `A_IN` under stop-and-wait with every OUT lost).
    Divide,
}

impl IncreaseRule {
    pub fn name(self) -> &'static str {
        match self {
            IncreaseRule::DoublePlusOne => "double_plus_one",
            IncreaseRule::PlusOne => "plus_one",
            IncreaseRule::Divide => "divide",
        }
    }
}

/// Probe marker parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ProbeParams {
    /// `α`, the weight of the last burst in `A_IN` (paper: 0.5); in (0, 1).
    pub alpha: f64,
    /// `A_0`, the initial `A_IN` (paper: 10); positive.
    pub a0: f64,
    pub increase: IncreaseRule,
    /// Offset added to the simulator's segment number to form the 32-bit SN (the ISN).
    pub isn: u32,
}

impl ProbeParams {
    /// The paper's defaults: α = 0.5, A_0 = 10, `A_IN ← 2·A_IN + 1`, ISN 0.
    pub fn paper() -> Self {
        ProbeParams {
            alpha: 0.5,
            a0: 10.0,
            increase: IncreaseRule::DoublePlusOne,
            isn: 0,
        }
    }

    pub fn validate(&self) -> Result<(), String> {
        if !(self.alpha > 0.0 && self.alpha < 1.0) {
            return Err(format!("alpha must be in (0, 1), got {}", self.alpha));
        }
        if !(self.a0.is_finite() && self.a0 > 0.0) {
            return Err(format!("a0 must be positive, got {}", self.a0));
        }
        Ok(())
    }

    /// `increase(A_IN)`.
    #[inline]
    pub fn increase(&self, a_in: f64) -> f64 {
        match self.increase {
            IncreaseRule::DoublePlusOne => 2.0 * a_in + 1.0,
            IncreaseRule::PlusOne => a_in + 1.0,
            IncreaseRule::Divide => a_in / (1.0 - self.alpha),
        }
    }
}

/// `a > b` in 32-bit serial number arithmetic (RFC 1982 §3.2): `b` precedes `a` by less than
/// half the sequence space. At a distance of exactly 2³¹ neither is greater; the marker then
/// treats the segment as not new.
#[inline]
pub fn serial_gt(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

/// What the marker did with one segment (for tests and counters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The flow's first segment: state created, IN.
    First,
    /// `SN ≤ SN_h`: a replica, `A_IN` filtered, IN.
    Retransmission,
    /// A new segment marked IN.
    NewIn,
    /// A new segment marked OUT (`A_IN` increased).
    NewOut,
}

/// The per-flow probe marker state machine.
#[derive(Debug, Clone)]
pub struct ProbeMarker {
    p: ProbeParams,
    /// `SN_h`; `None` until the flow's first segment.
    sn_h: Option<u32>,
    /// `L_IN`.
    l_in: u64,
    /// `A_IN`.
    a_in: f64,
    /// Cumulative counts: segments marked IN (retransmissions and the first included), OUT,
    /// and segments recognised as retransmissions.
    pub marked_in: u64,
    pub marked_out: u64,
    pub retransmissions: u64,
}

impl ProbeMarker {
    pub fn new(p: ProbeParams) -> Self {
        ProbeMarker {
            p,
            sn_h: None,
            l_in: 0,
            a_in: p.a0,
            marked_in: 0,
            marked_out: 0,
            retransmissions: 0,
        }
    }

    pub fn params(&self) -> &ProbeParams {
        &self.p
    }

    /// `A_IN`.
    pub fn a_in(&self) -> f64 {
        self.a_in
    }

    /// `L_IN`.
    pub fn l_in(&self) -> u64 {
        self.l_in
    }

    /// `SN_h` (`None` before the first segment).
    pub fn sn_h(&self) -> Option<u32> {
        self.sn_h
    }

    /// The 32-bit SN of the simulator's segment number `seq`.
    #[inline]
    pub fn sn_of(&self, seq: u64) -> u32 {
        (seq as u32).wrapping_add(self.p.isn)
    }

    /// Fig. 1 for a non-empty segment with 32-bit sequence number `sn`.
    pub fn on_segment(&mut self, sn: u32) -> (Color, Outcome) {
        let Some(sn_h) = self.sn_h else {
            self.sn_h = Some(sn);
            self.marked_in += 1;
            return (Color::Green, Outcome::First);
        };
        if !serial_gt(sn, sn_h) {
            self.retransmissions += 1;
            self.a_in = (1.0 - self.p.alpha) * self.a_in + self.p.alpha * self.l_in as f64;
            self.l_in = 0;
            self.marked_in += 1;
            return (Color::Green, Outcome::Retransmission);
        }
        self.sn_h = Some(sn);
        self.l_in += 1;
        if (self.l_in as f64) < self.a_in {
            self.marked_in += 1;
            (Color::Green, Outcome::NewIn)
        } else {
            self.l_in = 0;
            self.a_in = self.p.increase(self.a_in);
            self.marked_out += 1;
            (Color::Yellow, Outcome::NewOut)
        }
    }
}

impl Meter for ProbeMarker {
    /// Without a sequence number the marker cannot act: the size-only entry point leaves the
    /// packet's colour unchanged. The simulator calls [`Meter::meter_packet`].
    fn meter(&mut self, _now: SimTime, _size: u32, pre_color: Color, _rng: &mut SimRng) -> Color {
        pre_color
    }

    fn meter_packet(
        &mut self,
        _now: SimTime,
        pkt: &PacketMeta,
        pre_color: Color,
        _rng: &mut SimRng,
    ) -> Color {
        if pkt.kind == PacketKind::Ack {
            return pre_color;
        }
        let sn = self.sn_of(pkt.seq);
        self.on_segment(sn).0
    }

    fn gauges(&self, _now: SimTime, out: &mut dyn FnMut(&'static str, f64)) {
        out("a_in", self.a_in);
        out("l_in", self.l_in as f64);
        out("marked_in", self.marked_in as f64);
        out("marked_out", self.marked_out as f64);
        out("retransmissions", self.retransmissions as f64);
    }
}

// --- scenario keys ----------------------------------------------------------------------

use super::registry::{FlatMeter, MeterContext, MeterExports, MeterKind, ScopeRule};
use crate::params::typed::{Decl, Word};
use crate::params::{open, KeyError, Param, ParamKind, Table};

const ALPHA: Decl<f64> = Decl::new(
    "alpha",
    open(0.0, 1.0),
    "0.5",
    "α: the weight of the last burst in A_IN (the filter gain).",
);
const A0: Decl<f64> = Decl::new(
    "a0",
    ParamKind::Number {
        min: Some(0.0),
        max: None,
        min_open: true,
        max_open: false,
    },
    "10",
    "A_0: the initial A_IN (positive).",
);
const INCREASE: Decl<Word> = Decl::new(
    "increase",
    ParamKind::Choice {
        choices: &["double_plus_one", "plus_one", "divide"],
    },
    "double_plus_one",
    "The increase(A_IN) rule: 2·A+1, A+1 or A/(1−α).",
);
const ISN: Decl<u32> = Decl::new(
    "isn",
    ParamKind::Integer { min: 0 },
    "0",
    "ISN added to the segment number to form the 32-bit SN.",
);

impl MeterKind for ProbeParams {
    type Runtime = ProbeMarker;
    const EXPORTS: MeterExports = MeterExports {
        ns2: Err("the adaptive probe marker (meter type 'probe') reads each flow's TCP sequence numbers; ns-2's dsRED policers only meter rates, so it cannot be exported"),
        emulator: Ok(()),
    };
    const DOC: &'static str = "Neglia et al.'s per-flow adaptive probe marker: IN bursts of adaptive length A_IN closed by one OUT probe, read from TCP sequence numbers.";
    const PARAMS: &'static [Param] = &[ALPHA.param, A0.param, INCREASE.param, ISN.param];
    const SCOPE: ScopeRule =
        ScopeRule::PerFlow("a probe marker keeps state per flow: scope must be \"per_flow\"");
    fn hint(key: &str) -> &'static str {
        if key == "mode" {
            ": a probe marker marks every segment itself (colour-blind): remove `mode`"
        } else {
            ""
        }
    }
    fn from_table(t: &Table, _ctx: &MeterContext) -> Result<Self, KeyError> {
        Ok(ProbeParams {
            alpha: t.get(&ALPHA)?,
            a0: t.get(&A0)?,
            increase: match t.get(&INCREASE)? {
                "plus_one" => IncreaseRule::PlusOne,
                "divide" => IncreaseRule::Divide,
                _ => IncreaseRule::DoublePlusOne,
            },
            isn: t.get(&ISN)?,
        })
    }
    fn check(&self) -> Result<(), String> {
        self.validate()
    }
    fn build(&self) -> ProbeMarker {
        ProbeMarker::new(*self)
    }
    fn flat<'a>(&'a self, f: &mut FlatMeter<'a>) {
        f.probe = Some(self);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marker(increase: IncreaseRule) -> ProbeMarker {
        ProbeMarker::new(ProbeParams {
            increase,
            ..ProbeParams::paper()
        })
    }

    /// Feeds segments `sns` and returns the colours as a string ("I"/"O").
    fn run(m: &mut ProbeMarker, sns: impl IntoIterator<Item = u32>) -> String {
        sns.into_iter()
            .map(|s| match m.on_segment(s).0 {
                Color::Green => 'I',
                _ => 'O',
            })
            .collect()
    }

    #[test]
    fn new_segments_form_in_bursts_closed_by_an_out_probe() {
        let mut m = marker(IncreaseRule::DoublePlusOne);
        // The SYN (SN 0) creates the state and goes IN without counting in L_IN.
        assert_eq!(m.on_segment(0), (Color::Green, Outcome::First));
        assert_eq!((m.sn_h(), m.l_in(), m.a_in()), (Some(0), 0, 10.0));
        // A_IN = 10: L_IN = 1..9 IN, the 10th new segment OUT; A_IN → 21.
        assert_eq!(run(&mut m, 1..=10), "IIIIIIIIIO");
        assert_eq!((m.l_in(), m.a_in(), m.sn_h()), (0, 21.0, Some(10)));
        // Then 20 IN and one OUT; A_IN → 43.
        assert_eq!(run(&mut m, 11..=31), format!("{}O", "I".repeat(20)));
        assert_eq!(m.a_in(), 43.0);
        assert_eq!((m.marked_in, m.marked_out, m.retransmissions), (30, 2, 0));
    }

    #[test]
    fn a_retransmission_filters_a_in_resets_l_in_and_goes_in() {
        let mut m = marker(IncreaseRule::DoublePlusOne);
        run(&mut m, 0..=6); // SYN + 6 new segments IN: L_IN = 6
        assert_eq!(m.l_in(), 6);
        // Segment 3 again: A_IN = 0.5·10 + 0.5·6 = 8, L_IN = 0, IN; SN_h unchanged.
        assert_eq!(m.on_segment(3), (Color::Green, Outcome::Retransmission));
        assert_eq!((m.a_in(), m.l_in(), m.sn_h()), (8.0, 0, Some(6)));
        // A replica of the highest segment is a retransmission too (SN = SN_h).
        assert_eq!(m.on_segment(6).1, Outcome::Retransmission);
        assert_eq!(m.a_in(), 4.0);
        // New segments: L_IN = 1, 2, 3 IN, the 4th OUT (4 ≥ A_IN = 4); A_IN → 9.
        assert_eq!(run(&mut m, 7..=10), "IIIO");
        assert_eq!(m.a_in(), 9.0);
        assert_eq!(m.retransmissions, 2);
    }

    #[test]
    fn repeated_losses_shrink_a_in_geometrically_and_probes_then_come_sooner() {
        let mut m = marker(IncreaseRule::DoublePlusOne);
        run(&mut m, 0..=5); // L_IN = 5
                            // Three replicas in a row: A_IN = 7.5, then halves twice (L_IN = 0): 3.75, 1.875.
        for (sn, a) in [(1, 7.5), (2, 3.75), (3, 1.875)] {
            assert_eq!(m.on_segment(sn).1, Outcome::Retransmission);
            assert_eq!(m.a_in(), a);
        }
        // Next new segment: L_IN = 1 < 1.875 IN; then 2 ≥ 1.875 OUT, A_IN = 4.75.
        assert_eq!(run(&mut m, 6..=7), "IO");
        assert_eq!(m.a_in(), 4.75);
        // Many losses drive A_IN towards 0: every new segment is then OUT until it regrows.
        let mut m = marker(IncreaseRule::DoublePlusOne);
        m.on_segment(100);
        for _ in 0..20 {
            m.on_segment(50);
        }
        assert!(m.a_in() < 1e-4);
        // With ε = A_IN: L_IN = 1 ≥ ε: OUT, A_IN = 1 + 2ε; L_IN = 1 IN, 2 OUT, A_IN = 3 + 4ε;
        // then bursts grow again (1, 2, 3 IN).
        assert_eq!(run(&mut m, 101..=106), "OIOIII");
    }

    #[test]
    fn sequence_numbers_wrap_in_a_cyclical_sense() {
        assert!(serial_gt(0, u32::MAX));
        assert!(serial_gt(5, u32::MAX - 5));
        assert!(!serial_gt(u32::MAX, 0));
        assert!(!serial_gt(7, 7));
        assert!(!serial_gt(1 << 31, 0) && !serial_gt(0, 1 << 31));
        let mut m = ProbeMarker::new(ProbeParams {
            isn: u32::MAX - 2,
            ..ProbeParams::paper()
        });
        // Segment numbers 0..6 map to SNs 2³²−3, −2, −1, 0, 1, 2, 3: all new across the wrap.
        let sns: Vec<u32> = (0..7u64).map(|s| m.sn_of(s)).collect();
        assert_eq!(sns, vec![u32::MAX - 2, u32::MAX - 1, u32::MAX, 0, 1, 2, 3]);
        assert_eq!(run(&mut m, sns.iter().copied()), "IIIIIII");
        assert_eq!((m.l_in(), m.sn_h(), m.retransmissions), (6, Some(3), 0));
        // A replica from before the wrap (2³² − 1) is recognised as old.
        assert_eq!(m.on_segment(u32::MAX).1, Outcome::Retransmission);
        assert_eq!(m.a_in(), 8.0);
        // Through meter_packet with the simulator's u64 segment numbers.
        let mut rng = SimRng::derive(0, 0);
        let mut p = PacketMeta::new(0, PacketKind::Data, 1000, 7, 0);
        assert_eq!(m.meter_packet(0, &p, Color::Green, &mut rng), Color::Green);
        assert_eq!(m.sn_h(), Some(4));
        p.seq = 2; // SN 2³² − 1: a retransmission
        m.meter_packet(0, &p, Color::Green, &mut rng);
        assert_eq!(m.retransmissions, 2);
    }

    #[test]
    fn each_increase_rule_after_an_out_probe() {
        // From A_IN = 10, the 10th new segment goes OUT and A_IN becomes:
        for (rule, after) in [
            (IncreaseRule::DoublePlusOne, 21.0),
            (IncreaseRule::PlusOne, 11.0),
            (IncreaseRule::Divide, 20.0),
        ] {
            let mut m = marker(rule);
            assert_eq!(run(&mut m, 0..=10), "IIIIIIIIIIO", "{}", rule.name());
            assert_eq!(m.a_in(), after, "{}", rule.name());
        }
        // A_IN + 1 from 10: bursts of 10, 11, 12 IN between probes.
        let mut m = marker(IncreaseRule::PlusOne);
        let s = run(&mut m, 0..=33);
        assert_eq!(
            s,
            format!("I{}O{}O{}O", "I".repeat(9), "I".repeat(10), "I".repeat(11))
        );
        // α = 0.25 with A_IN / (1 − α): 10 → 13.33…
        let mut m = ProbeMarker::new(ProbeParams {
            alpha: 0.25,
            increase: IncreaseRule::Divide,
            ..ProbeParams::paper()
        });
        run(&mut m, 0..=10);
        assert!((m.a_in() - 40.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn divide_rule_keeps_a_in_constant_under_stop_and_wait_with_every_out_lost() {
        // The paper's argument (Section 2): window 1, IN segments delivered, every OUT segment
        // lost and retransmitted (as IN). A cycle is L new IN segments, one OUT, its replica.
        for alpha in [0.5, 0.25, 0.75] {
            let mut m = ProbeMarker::new(ProbeParams {
                alpha,
                a0: 8.0,
                increase: IncreaseRule::Divide,
                isn: 0,
            });
            let mut sn = 0u32;
            m.on_segment(sn);
            let mut a_at_cycle_start = Vec::new();
            for _ in 0..6 {
                a_at_cycle_start.push(m.a_in());
                loop {
                    sn += 1;
                    if m.on_segment(sn).0 == Color::Yellow {
                        break;
                    }
                }
                // The OUT segment is lost: it comes back as a replica.
                assert_eq!(m.on_segment(sn).1, Outcome::Retransmission);
            }
            // L_IN at the replica is 0 (reset by the OUT): A ← (1 − α)·A/(1 − α) = A.
            for a in &a_at_cycle_start {
                assert!(
                    (a - 8.0).abs() < 1e-9,
                    "alpha {alpha}: {a_at_cycle_start:?}"
                );
            }
        }
    }

    #[test]
    fn pure_acks_are_left_unchanged_and_do_not_touch_the_state() {
        let mut m = ProbeMarker::new(ProbeParams::paper());
        let mut rng = SimRng::derive(0, 0);
        let ack = PacketMeta::new(0, PacketKind::Ack, 40, 0, 0);
        assert_eq!(
            m.meter_packet(0, &ack, Color::Yellow, &mut rng),
            Color::Yellow
        );
        assert_eq!(m.sn_h(), None);
        // The retransmit flag is never read: a "retransmission" with a new SN is new.
        let mut d = PacketMeta::new(0, PacketKind::Data, 1000, 0, 0);
        m.meter_packet(0, &d, Color::Yellow, &mut rng);
        d.seq = 1;
        d.retransmit = true;
        m.meter_packet(0, &d, Color::Green, &mut rng);
        assert_eq!((m.retransmissions, m.l_in()), (0, 1));
        let mut g = Vec::new();
        m.gauges(0, &mut |n, v| g.push((n, v)));
        assert_eq!(g[0], ("a_in", 10.0));
        assert_eq!(g[1], ("l_in", 1.0));
    }

    #[test]
    fn validation_names_the_parameter() {
        let bad = ProbeParams {
            alpha: 1.0,
            ..ProbeParams::paper()
        };
        assert!(bad.validate().unwrap_err().starts_with("alpha"));
        let bad = ProbeParams {
            a0: 0.0,
            ..ProbeParams::paper()
        };
        assert!(bad.validate().unwrap_err().starts_with("a0"));
        assert!(ProbeParams::paper().validate().is_ok());
    }
}
