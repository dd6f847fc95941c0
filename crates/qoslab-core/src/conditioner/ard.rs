//! ARM and ARD: the Adaptive Regulating Marker and the Adaptive Regulating Drop marker of Hur
//! (KICS 2006), aggregate conditioners at an ingress edge router.
//!
//! Hosts mark their own packets IN (green) up to their contract rate and OUT (yellow) beyond.
//! At the edge, for the aggregate of the flows it classifies:
//!
//! * two input meters count the IN and OUT bytes arriving during each interval `nτ` and give
//!   `λ_IN`, `λ_OUT` at its end; the Temporary Permitted Rate is then recomputed for the next
//!   interval (Eq. 2): `TPR = TPR_max · λ_IN / (λ_IN + λ_OUT)`. It starts at `TPR_max`; an
//!   interval with no arrivals at all leaves it unchanged.
//! * a leaky bucket of `b` packets is filled at TPR. An IN packet that is neither re-marked nor
//!   dropped consumes tokens (its size); re-marked and dropped packets consume none.
//! * in the re-marking (and drop) region, token level `TK < T_rd` packets, an arriving IN
//!   packet is re-marked OUT with probability `P_rem = (T_rd − TK)·MAX_rem / T_rd` (Eq. 1);
//!   with too few tokens for the packet every IN packet is re-marked.
//! * ARD only: in the same region an IN packet is dropped with probability `P_drop` instead.
//!
//! Choices the paper leaves open (see docs/models/ard.md): OUT packets pass untouched and
//! never touch the bucket; the token level `TK` is the bucket content divided by the
//! configured packet size (the paper counts tokens in packets); in ARD the drop decision is
//! taken first and the re-mark decision applies to the survivors (`DropOrder::BeforeRemark`,
//! so the drop rate in the region is `P_drop`), or, selectable, a fraction `P_drop` of the
//! packets that would be re-marked is dropped instead (`DropOrder::AmongRemarked`).
//!
//! As a [`Meter`] it returns green (stays IN, token consumed), yellow (OUT on arrival, or
//! re-marked) or red (dropped by ARD's dropper: the conditioner's red action is `drop`).
//! Packets arriving red (AFx3) are OUT as well and leave yellow: ARM/ARD are two-colour.

use serde::Serialize;

use super::{credit_earned, credit_of_bytes, Bucket, Color, Meter, CREDIT_PER_BYTE};
use crate::params::typed::Shown;
use crate::rng::SimRng;
use crate::units::{SimTime, NS_PER_SEC};

/// Where ARD's drop decision sits relative to the re-mark decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DropOrder {
    /// Drop with `P_drop` first; survivors face the re-mark decision (default).
    BeforeRemark,
    /// Re-mark decision first; of the packets to be re-marked, a fraction `P_drop` is dropped.
    AmongRemarked,
}

/// ARM/ARD parameters (rates in bit/s, sizes in bytes, times in ns).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ArdParams {
    /// `TPR_max`: the SLA rate, the bottleneck bandwidth in the paper.
    pub tpr_max: u64,
    /// Leaky bucket size `b`, in packets (paper: 60).
    pub bucket_pkts: f64,
    /// Re-marking (and drop) threshold `T_rd`, in packets (paper: 15).
    pub t_rd_pkts: f64,
    /// `MAX_rem` (paper: 0.5).
    pub max_rem: f64,
    /// The measurement and TPR update interval `nτ` (paper: n = 1000, τ = 0.1 s: 100 s).
    pub interval: SimTime,
    /// `P_drop` (paper: 0.02); 0 makes the marker ARM.
    pub p_drop: f64,
    /// The packet size the token counts are expressed in (bytes).
    pub packet_size: u32,
    pub drop_order: DropOrder,
}

impl ArdParams {
    /// The paper's defaults for a given `TPR_max`, as ARD (`p_drop` = 0.02) with 1000-byte
    /// packets.
    pub fn paper(tpr_max: u64) -> Self {
        ArdParams {
            tpr_max,
            bucket_pkts: 60.0,
            t_rd_pkts: 15.0,
            max_rem: 0.5,
            interval: 100 * NS_PER_SEC,
            p_drop: 0.02,
            packet_size: 1000,
            drop_order: DropOrder::BeforeRemark,
        }
    }

    pub fn validate(&self) -> Result<(), String> {
        if self.tpr_max == 0 {
            return Err("tpr_max must be positive".into());
        }
        if !(self.bucket_pkts.is_finite() && self.bucket_pkts > 0.0) {
            return Err(format!(
                "bucket must be positive, got {}",
                Shown(self.bucket_pkts)
            ));
        }
        if !(self.t_rd_pkts.is_finite() && self.t_rd_pkts >= 0.0)
            || self.t_rd_pkts > self.bucket_pkts
        {
            return Err(format!(
                "t_rd must be in [0, bucket = {}], got {}",
                Shown(self.bucket_pkts),
                Shown(self.t_rd_pkts)
            ));
        }
        for (name, p) in [("max_rem", self.max_rem), ("p_drop", self.p_drop)] {
            if !(0.0..=1.0).contains(&p) {
                return Err(format!("{name} must be a probability in [0, 1], got {p}"));
            }
        }
        if self.interval == 0 {
            return Err("the interval n·tau must be positive".into());
        }
        if self.packet_size == 0 {
            return Err("packet_size must be positive".into());
        }
        Ok(())
    }
}

/// The ARM/ARD state machine.
#[derive(Debug, Clone)]
pub struct Ard {
    p: ArdParams,
    bucket: Bucket,
    /// Current token filling rate (bit/s).
    tpr: u64,
    /// Time up to which the bucket has been filled.
    last: SimTime,
    /// End of the current measurement interval.
    interval_end: SimTime,
    /// Bytes of IN / OUT packets arrived in the current interval.
    in_bytes: u64,
    out_bytes: u64,
    /// `λ_IN`, `λ_OUT` of the last completed interval (bit/s; NaN before the first).
    lambda_in: f64,
    lambda_out: f64,
    /// Cumulative counts: IN packets re-marked OUT, IN packets dropped, IN packets passed.
    pub remarked: u64,
    pub dropped: u64,
    pub passed_in: u64,
    /// Completed intervals.
    pub intervals: u64,
}

impl Ard {
    pub fn new(p: ArdParams) -> Self {
        let size = (p.bucket_pkts * p.packet_size as f64).round() as u64;
        Ard {
            p,
            bucket: Bucket::full(size.max(1)),
            tpr: p.tpr_max,
            last: 0,
            interval_end: p.interval,
            in_bytes: 0,
            out_bytes: 0,
            lambda_in: f64::NAN,
            lambda_out: f64::NAN,
            remarked: 0,
            dropped: 0,
            passed_in: 0,
            intervals: 0,
        }
    }

    pub fn params(&self) -> &ArdParams {
        &self.p
    }

    /// The current Temporary Permitted Rate (bit/s).
    pub fn tpr(&self) -> u64 {
        self.tpr
    }

    /// `(λ_IN, λ_OUT)` measured over the last completed interval (bit/s; NaN before).
    pub fn lambdas(&self) -> (f64, f64) {
        (self.lambda_in, self.lambda_out)
    }

    /// Eq. 2: the TPR for measured rates; `None` when nothing arrived (TPR kept).
    pub fn tpr_for(tpr_max: u64, lambda_in: f64, lambda_out: f64) -> Option<u64> {
        let total = lambda_in + lambda_out;
        (total > 0.0).then(|| (tpr_max as f64 * lambda_in / total).round() as u64)
    }

    /// Token level `TK` in packets at the last update.
    pub fn tokens_pkts(&self) -> f64 {
        self.bucket.tokens as f64 / (CREDIT_PER_BYTE as f64 * self.p.packet_size as f64)
    }

    /// Brings the bucket and the interval bookkeeping up to `now`: fills at the TPR of each
    /// interval crossed, closing every interval that ended (its rates give the next TPR).
    fn advance(&mut self, now: SimTime) {
        while now >= self.interval_end {
            let end = self.interval_end;
            self.bucket
                .fill(credit_earned(end.saturating_sub(self.last), self.tpr));
            self.last = end;
            let secs = self.p.interval as f64 / NS_PER_SEC as f64;
            self.lambda_in = self.in_bytes as f64 * 8.0 / secs;
            self.lambda_out = self.out_bytes as f64 * 8.0 / secs;
            if let Some(t) = Self::tpr_for(self.p.tpr_max, self.lambda_in, self.lambda_out) {
                self.tpr = t;
            }
            self.in_bytes = 0;
            self.out_bytes = 0;
            self.intervals += 1;
            self.interval_end = end + self.p.interval;
        }
        if now > self.last {
            self.bucket.fill(credit_earned(now - self.last, self.tpr));
            self.last = now;
        }
    }

    /// `P_rem` at token level `tk` packets (Eq. 1); 0 at or above `T_rd`.
    pub fn p_rem(&self, tk: f64) -> f64 {
        if tk >= self.p.t_rd_pkts || self.p.t_rd_pkts == 0.0 {
            0.0
        } else {
            (self.p.t_rd_pkts - tk.max(0.0)) * self.p.max_rem / self.p.t_rd_pkts
        }
    }
}

impl Meter for Ard {
    fn meter(&mut self, now: SimTime, size: u32, pre_color: Color, rng: &mut SimRng) -> Color {
        self.advance(now);
        if pre_color != Color::Green {
            self.out_bytes += size as u64;
            return Color::Yellow;
        }
        self.in_bytes += size as u64;
        let cost = credit_of_bytes(size as u64);
        let tk = self.tokens_pkts();
        let in_region = tk < self.p.t_rd_pkts;
        let exhausted = !self.bucket.holds(cost);
        if !(in_region || exhausted) {
            self.bucket.take(cost);
            self.passed_in += 1;
            return Color::Green;
        }
        let draw_drop = |rng: &mut SimRng, p: f64| p > 0.0 && rng.uniform() < p;
        match self.p.drop_order {
            DropOrder::BeforeRemark => {
                if draw_drop(rng, self.p.p_drop) {
                    self.dropped += 1;
                    return Color::Red;
                }
                if exhausted || rng.uniform() < self.p_rem(tk) {
                    self.remarked += 1;
                    return Color::Yellow;
                }
            }
            DropOrder::AmongRemarked => {
                if exhausted || rng.uniform() < self.p_rem(tk) {
                    if draw_drop(rng, self.p.p_drop) {
                        self.dropped += 1;
                        return Color::Red;
                    }
                    self.remarked += 1;
                    return Color::Yellow;
                }
            }
        }
        self.bucket.take(cost);
        self.passed_in += 1;
        Color::Green
    }

    fn token_level(&self, _now: SimTime) -> Option<f64> {
        Some(self.bucket.bytes())
    }

    fn gauges(&self, now: SimTime, out: &mut dyn FnMut(&'static str, f64)) {
        // The bucket as it would be at `now` (without mutating): level at the last update plus
        // what TPR has poured in since, capped at b.
        let pending = credit_earned(now.saturating_sub(self.last), self.tpr);
        let tokens = (self.bucket.tokens.saturating_add(pending)).min(self.bucket.size);
        out(
            "tokens_pkts",
            tokens as f64 / (CREDIT_PER_BYTE as f64 * self.p.packet_size as f64),
        );
        out("tpr_bps", self.tpr as f64);
        out("lambda_in_bps", self.lambda_in);
        out("lambda_out_bps", self.lambda_out);
        out("remarked", self.remarked as f64);
        out("dropped", self.dropped as f64);
        out("passed_in", self.passed_in as f64);
    }
}

// --- scenario keys ----------------------------------------------------------------------

use super::registry::{FlatMeter, MeterContext, MeterKind, ScopeRule};
use crate::params::typed::{Bytes32, Decl, Duration, Rate, Word};
use crate::params::{at_least, closed, key_error, KeyError, Param, ParamKind, Table};

/// ARM: ARD's parameters with `p_drop` = 0 (a marker that never drops).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(transparent)]
pub struct ArmParams(pub ArdParams);

const TPR_MAX: Decl<Rate> = Decl::new(
    "tpr_max",
    ParamKind::Rate,
    "required",
    "The SLA rate, the maximum TPR.",
)
.positive();
const BUCKET: Decl<f64> = Decl::new(
    "bucket",
    ParamKind::Number {
        min: Some(0.0),
        max: None,
        min_open: true,
        max_open: false,
    },
    "60",
    "Leaky bucket size b, packets.",
);
const T_RD: Decl<f64> = Decl::new(
    "t_rd",
    at_least(0.0),
    "15",
    "Re-marking threshold T_rd, packets (at most bucket).",
);
const MAX_REM: Decl<f64> = Decl::new(
    "max_rem",
    closed(0.0, 1.0),
    "0.5",
    "Maximum re-marking probability MAX_rem.",
);
const TAU: Decl<Duration> = Decl::new(
    "tau",
    ParamKind::Duration,
    "0.1s",
    "Sampling period τ; the TPR interval is n·τ.",
)
.positive();
const N: Decl<u32> = Decl::new(
    "n",
    ParamKind::Integer { min: 1 },
    "1000",
    "τ per TPR interval.",
);
const PACKET_SIZE: Decl<Bytes32> = Decl::new(
    "packet_size",
    ParamKind::Bytes,
    "1000B",
    "The unit of token counts.",
)
.positive();
const DROP_ORDER: Decl<Word> = Decl::new(
    "drop_order",
    ParamKind::Choice {
        choices: &["before_remark", "among_remarked"],
    },
    "before_remark",
    "Where ARD's dropper acts: before re-marking, or among the re-marked packets.",
);
const P_DROP: Decl<f64> = Decl::new(
    "p_drop",
    closed(0.0, 1.0),
    "0.02",
    "The dropper's probability P_drop.",
);

const ARM_KEYS: [Param; 8] = [
    TPR_MAX.param,
    BUCKET.param,
    T_RD.param,
    MAX_REM.param,
    TAU.param,
    N.param,
    PACKET_SIZE.param,
    DROP_ORDER.param,
];

/// ARM/ARD parameters with the paper's defaults (b = 60, T_rd = 15, MAX_rem = 0.5,
/// τ = 0.1 s, n = 1000, P_drop = 0.02 for ARD and 0 for ARM, 1000-byte packets).
fn read_ard(t: &Table, p_drop: f64) -> Result<ArdParams, KeyError> {
    let bucket_pkts = t.get(&BUCKET)?;
    let t_rd_pkts = t.get(&T_RD)?;
    if t_rd_pkts > bucket_pkts {
        return Err(key_error(
            t.key(T_RD.name()),
            format!(
                "t_rd must be in [0, bucket = {}], got {}",
                Shown(bucket_pkts),
                Shown(t_rd_pkts)
            ),
        ));
    }
    Ok(ArdParams {
        tpr_max: t.get(&TPR_MAX)?,
        bucket_pkts,
        t_rd_pkts,
        max_rem: t.get(&MAX_REM)?,
        interval: t.get(&TAU)?.saturating_mul(u64::from(t.get(&N)?)),
        p_drop,
        packet_size: t.get(&PACKET_SIZE)?,
        drop_order: match t.get(&DROP_ORDER)? {
            "among_remarked" => DropOrder::AmongRemarked,
            _ => DropOrder::BeforeRemark,
        },
    })
}

fn ard_flat<'a>(p: &'a ArdParams, f: &mut FlatMeter<'a>) {
    f.ard = Some(p);
}

fn ard_hint(key: &str) -> &'static str {
    match key {
        "mode" => ": ARM and ARD always read the hosts' IN/OUT marks: remove `mode`",
        "p_drop" => ": an arm marker never drops: use type = \"ard\" for a dropper",
        _ => "",
    }
}

impl MeterKind for ArmParams {
    type Runtime = Ard;
    const DOC: &'static str = "Hur's Adaptive Regulating Marker: a leaky bucket filled at an adaptive Temporary Permitted Rate re-marks the aggregate's IN packets.";
    const PARAMS: &'static [Param] = &ARM_KEYS;
    const SCOPE: ScopeRule =
        ScopeRule::Aggregate("an arm marker acts on the aggregate: scope must be \"aggregate\"");
    const RED_DROPS: bool = true;
    fn hint(key: &str) -> &'static str {
        ard_hint(key)
    }
    fn from_table(t: &Table, _ctx: &MeterContext) -> Result<Self, KeyError> {
        read_ard(t, 0.0).map(ArmParams)
    }
    /// A marker: it re-marks IN packets yellow and drops none.
    fn never_red(&self) -> Option<&'static str> {
        Some("an arm marker re-marks packets yellow and drops none")
    }
    fn check(&self) -> Result<(), String> {
        self.0.validate()
    }
    fn build(&self) -> Ard {
        Ard::new(self.0)
    }
    fn flat<'a>(&'a self, f: &mut FlatMeter<'a>) {
        ard_flat(&self.0, f);
    }
}

impl MeterKind for ArdParams {
    type Runtime = Ard;
    const DOC: &'static str = "Hur's Adaptive Regulating Drop marker: ARM plus an aggregate dropper of IN packets (P_drop).";
    const PARAMS: &'static [Param] = &[
        ARM_KEYS[0],
        ARM_KEYS[1],
        ARM_KEYS[2],
        ARM_KEYS[3],
        ARM_KEYS[4],
        ARM_KEYS[5],
        ARM_KEYS[6],
        ARM_KEYS[7],
        P_DROP.param,
    ];
    const SCOPE: ScopeRule =
        ScopeRule::Aggregate("an ard marker acts on the aggregate: scope must be \"aggregate\"");
    const RED_DROPS: bool = true;
    fn hint(key: &str) -> &'static str {
        ard_hint(key)
    }
    /// Its dropper colours a packet red with probability `p_drop`.
    fn never_red(&self) -> Option<&'static str> {
        (self.p_drop == 0.0).then_some("with p_drop = 0 its dropper never colours a packet red")
    }
    fn from_table(t: &Table, _ctx: &MeterContext) -> Result<Self, KeyError> {
        let p_drop = t.get(&P_DROP)?;
        read_ard(t, p_drop)
    }
    fn check(&self) -> Result<(), String> {
        self.validate()
    }
    fn build(&self) -> Ard {
        Ard::new(*self)
    }
    fn flat<'a>(&'a self, f: &mut FlatMeter<'a>) {
        ard_flat(self, f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conditioner::testkit::MS;

    fn params(p_drop: f64) -> ArdParams {
        ArdParams {
            interval: 10 * NS_PER_SEC,
            p_drop,
            ..ArdParams::paper(1_200_000)
        }
    }

    #[test]
    fn tpr_equation_matches_the_papers_numbers() {
        // Section III: 494 / 546 kbps at TPR_max 1.2 Mbps gives 570 kbps; 1658 / 4102 kbps at
        // 6 Mbps gives 1727 kbps.
        let t = Ard::tpr_for(1_200_000, 494e3, 546e3).unwrap();
        assert!((t as f64 - 570e3).abs() < 1e3, "{t}");
        let t = Ard::tpr_for(6_000_000, 1658e3, 4102e3).unwrap();
        assert!((t as f64 - 1727e3).abs() < 1e3, "{t}");
        // No OUT traffic: TPR = TPR_max; nothing at all: unchanged.
        assert_eq!(Ard::tpr_for(1_000, 5.0, 0.0), Some(1_000));
        assert_eq!(Ard::tpr_for(1_000, 0.0, 0.0), None);
    }

    #[test]
    fn p_rem_is_linear_below_t_rd() {
        let a = Ard::new(params(0.0));
        assert_eq!(a.p_rem(15.0), 0.0);
        assert_eq!(a.p_rem(60.0), 0.0);
        assert!((a.p_rem(0.0) - 0.5).abs() < 1e-12);
        assert!((a.p_rem(7.5) - 0.25).abs() < 1e-12);
        assert!((a.p_rem(12.0) - 0.1).abs() < 1e-12);
        assert!((a.p_rem(-1.0) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn interval_bookkeeping_sets_tpr_from_the_last_interval_rates() {
        let mut a = Ard::new(params(0.0));
        let mut rng = SimRng::derive(1, 1);
        // 10 s interval: 50 IN and 50 OUT packets of 1000 B: λ_IN = λ_OUT = 40 kbit/s.
        for k in 0..100u64 {
            let c = if k % 2 == 0 {
                Color::Green
            } else {
                Color::Yellow
            };
            a.meter(k * 50 * MS, 1000, c, &mut rng);
        }
        assert_eq!(a.tpr(), 1_200_000);
        assert_eq!(a.intervals, 0);
        assert!(a.lambdas().0.is_nan());
        // The first arrival after 10 s closes the interval.
        a.meter(10 * NS_PER_SEC, 1000, Color::Yellow, &mut rng);
        assert_eq!(a.intervals, 1);
        assert_eq!(a.lambdas(), (40_000.0, 40_000.0));
        assert_eq!(a.tpr(), 600_000);
        // Two empty intervals later: rates 0 → TPR kept; the arrival at 10 s counts in the
        // second interval only (λ_OUT = 800 bit/s, λ_IN = 0 → TPR 0).
        a.meter(35 * NS_PER_SEC, 1000, Color::Green, &mut rng);
        assert_eq!(a.intervals, 3);
        assert_eq!(a.tpr(), 0);
    }

    #[test]
    fn passed_in_packets_consume_tokens_re_marked_and_dropped_do_not() {
        // A bucket of 60 packets, TPR 1.2 Mbps, fed 1000-byte IN packets back to back at t = 0
        // (no refill): the first 45 pass (TK from 60 down to 15), then the region starts.
        let mut a = Ard::new(params(0.0));
        let mut rng = SimRng::derive(2, 2);
        let mut colours = Vec::new();
        for _ in 0..45 {
            colours.push(a.meter(0, 1000, Color::Green, &mut rng));
        }
        assert!(colours.iter().all(|&c| c == Color::Green));
        assert!((a.tokens_pkts() - 15.0).abs() < 1e-9);
        assert_eq!(a.passed_in, 45);
        // In the region, ARM re-marks with P_rem; re-marks leave the level unchanged.
        let before = a.tokens_pkts();
        let mut passed = 0;
        let mut remarked = 0;
        for _ in 0..200 {
            match a.meter(0, 1000, Color::Green, &mut rng) {
                Color::Green => passed += 1,
                Color::Yellow => remarked += 1,
                Color::Red => panic!("ARM never drops"),
            }
        }
        assert_eq!(a.remarked, remarked);
        assert!((before - a.tokens_pkts() - passed as f64).abs() < 1e-9);
        // Passed packets emptied the bucket: 15 tokens' worth at most.
        assert_eq!(passed, 15);
        // With no token left every IN packet is re-marked.
        for _ in 0..50 {
            assert_eq!(a.meter(0, 1000, Color::Green, &mut rng), Color::Yellow);
        }
        // OUT packets pass as OUT and never touch the bucket.
        let lvl = a.bucket.tokens;
        assert_eq!(a.meter(0, 1000, Color::Yellow, &mut rng), Color::Yellow);
        assert_eq!(a.meter(0, 1000, Color::Red, &mut rng), Color::Yellow);
        assert_eq!(a.bucket.tokens, lvl);
        // Refill at TPR: 10 ms at 1.2 Mbit/s = 1500 bytes = 1.5 packets.
        a.meter(10 * MS, 1000, Color::Yellow, &mut rng);
        assert!((a.tokens_pkts() - 1.5).abs() < 1e-9, "{}", a.tokens_pkts());
    }

    #[test]
    fn ard_drops_with_p_drop_in_the_region_without_consuming_tokens() {
        let mut a = Ard::new(ArdParams {
            p_drop: 0.2,
            ..params(0.0)
        });
        let mut rng = SimRng::derive(3, 3);
        for _ in 0..1000 {
            a.meter(0, 1000, Color::Green, &mut rng);
        }
        // Passed packets emptied the bucket by now (at most 60 pass at t = 0); every IN
        // arrival with no token left: dropped w.p. 0.2, else re-marked.
        assert!(a.tokens_pkts() < 1.0);
        let n = 20_000;
        let (mut d, mut r) = (0u64, 0u64);
        let tokens = a.bucket.tokens;
        for _ in 0..n {
            match a.meter(0, 1000, Color::Green, &mut rng) {
                Color::Red => d += 1,
                Color::Yellow => r += 1,
                Color::Green => {}
            }
        }
        assert_eq!(a.bucket.tokens, tokens);
        assert_eq!(d + r, n);
        let frac = d as f64 / n as f64;
        assert!((frac - 0.2).abs() < 0.015, "{frac}");
        // Above T_rd nothing is dropped.
        let mut b = Ard::new(ArdParams {
            p_drop: 1.0,
            ..params(0.0)
        });
        // 46 pass (TK from 60 down to 14: the one arriving at exactly T_rd is outside the
        // region), then the first in the region is dropped.
        for _ in 0..46 {
            assert_eq!(b.meter(0, 1000, Color::Green, &mut rng), Color::Green);
        }
        assert_eq!(b.meter(0, 1000, Color::Green, &mut rng), Color::Red);
    }

    #[test]
    fn drop_order_among_remarked_drops_p_drop_of_the_re_marks() {
        // Hold TK at 10 packets (P_rem = 5·0.5/15 = 1/6) and count outcomes per order.
        let mut rng = SimRng::derive(4, 4);
        let mut run = |order: DropOrder| {
            let mut a = Ard::new(ArdParams {
                p_drop: 0.5,
                drop_order: order,
                ..params(0.0)
            });
            let level = credit_of_bytes(10_000);
            let mut n = [0u64; 3];
            for _ in 0..30_000 {
                a.bucket.tokens = level;
                n[a.meter(0, 1000, Color::Green, &mut rng) as usize] += 1;
            }
            n.map(|k| k as f64 / 30_000.0)
        };
        let [g, y, r] = run(DropOrder::BeforeRemark);
        assert!((r - 0.5).abs() < 0.015, "{r}");
        assert!((y - 0.5 / 6.0).abs() < 0.01, "{y}");
        assert!((g - 0.5 * 5.0 / 6.0).abs() < 0.015, "{g}");
        let [g, y, r] = run(DropOrder::AmongRemarked);
        assert!((r - 1.0 / 12.0).abs() < 0.01, "{r}");
        assert!((y - 1.0 / 12.0).abs() < 0.01, "{y}");
        assert!((g - 5.0 / 6.0).abs() < 0.015, "{g}");
    }

    #[test]
    fn validation_names_the_parameter() {
        let bad = ArdParams {
            t_rd_pkts: 70.0,
            ..ArdParams::paper(1)
        };
        assert!(bad.validate().unwrap_err().contains("t_rd"));
        let bad = ArdParams {
            bucket_pkts: 1e300,
            t_rd_pkts: 2e300,
            ..ArdParams::paper(1)
        };
        let e = bad.validate().unwrap_err();
        assert_eq!(e, "t_rd must be in [0, bucket = 1e300], got 2e300");
        let bad = ArdParams {
            p_drop: 1.5,
            ..ArdParams::paper(1)
        };
        assert!(bad.validate().unwrap_err().contains("p_drop"));
        assert!(ArdParams::paper(0)
            .validate()
            .unwrap_err()
            .contains("tpr_max"));
    }
}
