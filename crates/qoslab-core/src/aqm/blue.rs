//! BLUE (Feng, Kandlur, Saha & Shin, "The BLUE active queue management algorithms", IEEE/ACM
//! Transactions on Networking 10(4), 2002; Fig. 4 of the paper).
//!
//! One marking probability `p_m`, driven by loss and idleness rather than by a queue average:
//!
//! ```text
//!     on a buffer overflow (or, with `threshold` L, an arrival while more than L waits):
//!         if now − last_update > freeze_time:  p_m ← min(p_m + d1, 1);  last_update ← now
//!     when the link goes idle:
//!         if now − last_update > freeze_time:  p_m ← max(p_m − d2, 0);  last_update ← now
//! ```
//!
//! Every other arrival is dropped with probability `p_m` (ECN-marked instead, with `ecn`, when
//! the packet is ECN-capable). As in the ns-3 port of the authors' ns code, the buffer check
//! comes first: an arrival to a full buffer is an overflow, counts as the loss
//! event and draws no random number; `last_update` starts at 0, so the first change waits for
//! `freeze_time` after the start. `p_m` is published as the gauge `p_m` (a column of
//! series_queue).

use super::red::ECN;
use super::registry::{LineDiscipline, Ns2Export, QueueDiscipline};
use super::{Aqm, Gauge, QueueView, Verdict};
use crate::packet::PacketMeta;
use crate::params::typed::{Decl, Duration, QueueLimit};
use crate::params::{key_error, open_closed, KeyError, Param, ParamKind, Table, LIMIT};
use crate::rng::SimRng;
use crate::units::{Limit, SimTime};

const D1: Decl<f64> = Decl::new(
    "d1",
    open_closed(0.0, 1.0),
    "0.02",
    "Increment of p_m on a loss event (a buffer overflow, or an arrival above `threshold`).",
);
const D2: Decl<f64> = Decl::new(
    "d2",
    open_closed(0.0, 1.0),
    "0.002",
    "Decrement of p_m when the link goes idle (the paper sets d1 significantly larger than d2).",
);
const FREEZE_TIME: Decl<Duration> = Decl::new(
    "freeze_time",
    ParamKind::Duration,
    "100ms",
    "Least time between two changes of p_m.",
)
.positive();
const THRESHOLD: Decl<QueueLimit> = Decl::new(
    "threshold",
    ParamKind::Limit,
    "none",
    "L: an arrival while more than this waits (\"40pkts\", \"60KB\") is a loss event too; \
     without it only overflows are.",
)
.positive();

/// BLUE's configuration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BlueConfig {
    pub d1: f64,
    pub d2: f64,
    /// ns.
    pub freeze_time: SimTime,
    pub threshold: Option<Limit>,
    pub ecn: bool,
}

impl QueueDiscipline for BlueConfig {
    const DOC: &'static str = "BLUE (Feng, Kandlur, Saha & Shin 2002): one drop/mark probability p_m, raised by d1 on buffer overflow and lowered by d2 when the link goes idle, at most once per freeze_time.";
    const PARAMS: &'static [Param] = &[
        LIMIT,
        D1.param,
        D2.param,
        FREEZE_TIME.param,
        THRESHOLD.param,
        ECN.param,
    ];
    const GAUGES: &'static [Gauge] = &[Gauge {
        name: "p_m",
        unit: "fraction 0–1",
        doc: "BLUE's drop (or mark) probability p_m at the sample time (NaN for other kinds).",
    }];
    fn from_table(t: &Table, limit: Limit) -> Result<Self, KeyError> {
        let threshold = t.opt(&THRESHOLD)?;
        // An arrival finding more than the limit less one waiting overflows (a loss event of its
        // own), so a threshold from there up would never count one.
        let idle = match (threshold, limit) {
            (Some(Limit::Packets(k)), Limit::Packets(l))
            | (Some(Limit::Bytes(k)), Limit::Bytes(l)) => k.saturating_add(1) >= l,
            _ => false,
        };
        if idle {
            return Err(key_error(
                t.key("threshold"),
                format!(
                    "threshold ({}) must be at most the limit ({limit}) less 2: an arrival \
                     finding more waiting overflows the buffer anyway",
                    threshold.expect("set")
                ),
            ));
        }
        Ok(BlueConfig {
            d1: t.get(&D1)?,
            d2: t.get(&D2)?,
            freeze_time: t.get(&FREEZE_TIME)?,
            threshold,
            ecn: t.get(&ECN)?,
        })
    }
    fn ns2(&self, _limit: Limit) -> Ns2Export {
        Ns2Export::Refused("ns-2.35 has no BLUE queue class".into())
    }
    fn emulable(&self) -> bool {
        // decides at enqueue from its own state, as in the simulator
        true
    }
}

impl LineDiscipline for BlueConfig {
    type Runtime = Blue;
    fn build(&self, _link_bps: u64) -> Blue {
        Blue::new(*self)
    }
}

/// BLUE's state machine.
#[derive(Debug, Clone)]
pub struct Blue {
    pub cfg: BlueConfig,
    /// The drop/mark probability.
    pub p_m: f64,
    /// When p_m last changed.
    pub last_update: SimTime,
    /// How many times p_m went up and down.
    pub increases: u64,
    pub decreases: u64,
}

impl Blue {
    pub fn new(cfg: BlueConfig) -> Self {
        Blue {
            cfg,
            p_m: 0.0,
            last_update: 0,
            increases: 0,
            decreases: 0,
        }
    }

    fn thawed(&self, now: SimTime) -> bool {
        now.saturating_sub(self.last_update) > self.cfg.freeze_time
    }

    /// A loss event (an overflow, or an arrival above the threshold).
    pub fn on_loss(&mut self, now: SimTime) {
        if self.thawed(now) {
            self.p_m = (self.p_m + self.cfg.d1).min(1.0);
            self.last_update = now;
            self.increases += 1;
        }
    }
}

impl Aqm for Blue {
    fn on_enqueue(
        &mut self,
        now: SimTime,
        pkt: &PacketMeta,
        q: QueueView,
        rng: &mut SimRng,
    ) -> Verdict {
        if q.full_for(pkt.size as u64) {
            self.on_loss(now);
            return Verdict::Overflow;
        }
        let above = match self.cfg.threshold {
            Some(Limit::Packets(l)) => q.len_pkts > l,
            Some(Limit::Bytes(l)) => q.len_bytes > l,
            None => false,
        };
        if above {
            self.on_loss(now);
        }
        if self.p_m > 0.0 && rng.uniform() < self.p_m {
            if self.cfg.ecn && pkt.ecn != 0 {
                return Verdict::Mark;
            }
            return Verdict::EarlyDrop;
        }
        Verdict::Enqueue
    }

    fn on_overflow(&mut self, now: SimTime, _pkt: &PacketMeta, _decided: Verdict) {
        self.on_loss(now);
    }

    fn on_idle(&mut self, now: SimTime) {
        if self.thawed(now) {
            self.p_m = (self.p_m - self.cfg.d2).max(0.0);
            self.last_update = now;
            self.decreases += 1;
        }
    }

    fn gauges(&self, _now: SimTime, out: &mut dyn FnMut(&'static str, f64)) {
        out("p_m", self.p_m);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::PacketKind;

    const MS: SimTime = 1_000_000;

    fn blue() -> Blue {
        Blue::new(BlueConfig {
            d1: 0.02,
            d2: 0.002,
            freeze_time: 100 * MS,
            threshold: None,
            ecn: false,
        })
    }

    fn view(len: u64) -> QueueView {
        QueueView {
            len_pkts: len,
            len_bytes: len * 1000,
            limit: Limit::Packets(10),
            len_by_prec: [0, 0, len],
        }
    }

    #[test]
    fn p_m_rises_by_d1_per_freeze_time_under_overflow_and_falls_by_d2_when_idle() {
        let mut b = blue();
        let mut rng = SimRng::derive(1, 1);
        let p = PacketMeta::new(0, PacketKind::Data, 1000, 0, 0);
        // An arrival to a full buffer every ms for 1 s: an increase at the first arrival
        // after 100 ms, then one every 101 ms (strictly more than freeze_time apart).
        for i in 0..1000 {
            assert_eq!(
                b.on_enqueue(i * MS, &p, view(10), &mut rng),
                Verdict::Overflow
            );
        }
        // at 101, 202, …, 909 ms: 9 increases
        assert_eq!(b.increases, 9);
        assert!((b.p_m - 9.0 * 0.02).abs() < 1e-12, "{}", b.p_m);
        // Idle periods start every 50 ms from 1010 ms: only those more than 100 ms after the
        // last change lower p_m, by d2 each (1010, 1160, 1310, … 1910 ms: exactly 100 ms later
        // is not more than freeze_time).
        let before = b.p_m;
        for i in 0..20 {
            b.on_idle(1000 * MS + i * 50 * MS + 10 * MS);
        }
        assert_eq!(b.decreases, 7, "{}", b.decreases);
        assert!((b.p_m - (before - 7.0 * 0.002)).abs() < 1e-12);
    }

    #[test]
    fn p_m_stays_within_zero_and_one() {
        let mut b = Blue::new(BlueConfig {
            d1: 0.6,
            ..blue().cfg
        });
        b.on_loss(101 * MS);
        b.on_loss(202 * MS);
        assert_eq!(b.p_m, 1.0);
        let mut b = blue();
        b.on_idle(500 * MS);
        assert_eq!((b.p_m, b.decreases), (0.0, 1));
    }

    #[test]
    fn arrivals_are_dropped_with_probability_p_m() {
        let mut b = blue();
        b.p_m = 0.3;
        let mut rng = SimRng::derive(7, 7);
        let p = PacketMeta::new(0, PacketKind::Data, 1000, 0, 0);
        let n = 100_000;
        let drops = (0..n)
            .filter(|_| b.on_enqueue(0, &p, view(3), &mut rng) == Verdict::EarlyDrop)
            .count();
        // binomial: σ = sqrt(n·0.3·0.7) ≈ 145
        assert!(
            (drops as f64 - 0.3 * n as f64).abs() < 5.0 * 145.0,
            "{drops}"
        );
        // nothing changes p_m here: no loss event, no idle period
        assert_eq!((b.increases, b.decreases), (0, 0));
    }

    #[test]
    fn ecn_capable_packets_are_marked_instead_with_ecn() {
        let mut b = Blue::new(BlueConfig {
            ecn: true,
            ..blue().cfg
        });
        b.p_m = 1.0;
        let mut rng = SimRng::derive(1, 2);
        let mut ect = PacketMeta::new(0, PacketKind::Data, 1000, 0, 0);
        ect.ecn = 2;
        let plain = PacketMeta::new(0, PacketKind::Data, 1000, 0, 0);
        assert_eq!(b.on_enqueue(0, &ect, view(1), &mut rng), Verdict::Mark);
        assert_eq!(
            b.on_enqueue(0, &plain, view(1), &mut rng),
            Verdict::EarlyDrop
        );
    }

    #[test]
    fn an_arrival_above_the_threshold_is_a_loss_event() {
        let mut b = Blue::new(BlueConfig {
            threshold: Some(Limit::Packets(5)),
            ..blue().cfg
        });
        let mut rng = SimRng::derive(1, 3);
        let p = PacketMeta::new(0, PacketKind::Data, 1000, 0, 0);
        b.on_enqueue(200 * MS, &p, view(5), &mut rng);
        assert_eq!(b.increases, 0);
        b.on_enqueue(201 * MS, &p, view(6), &mut rng);
        assert_eq!(b.increases, 1);
        let mut seen = Vec::new();
        b.gauges(0, &mut |n, v| seen.push((n, v)));
        assert_eq!(seen, [("p_m", 0.02)]);
    }
}
