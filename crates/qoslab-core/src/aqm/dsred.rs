//! The `ns2` flavour of the AF queues: the RED of one physical queue of ns-2.35's dsRED
//! (`diffserv/dsredq.cc`, Nortel's DiffServ module), rule for rule, so that `crosscheck` and
//! `export-ns2` compare like with like. The reference flavour (Clark & Fang's RIO, WRED on
//! Floyd & Jacobson's RED) is [`super::rio`] and [`super::wred`]; docs/ns2-behaviour.md §9.3
//! lists what differs, and every difference is one rule below, each with its own test:
//!
//! 1. **Limit first.** A packet that finds `limit` packets waiting is refused before anything
//!    else: the averages, counts and idle state are left as they were.
//! 2. **Single-precision averages.** `calcAvg` keeps the average in a C `float`, rounded after
//!    every multiply and add; the idle decay is `m = int(ptc · idle time)` extra steps.
//! 3. **Which averages move.** RIO-C: an arrival of precedence p updates the averages of
//!    precedences p..n (average k counts packets of precedence ≤ k, with precedence k's w_q);
//!    RIO-D: only its own; WRED: the one shared average (precedence 0's w_q, whole queue).
//! 4. **Idle per precedence, from the dequeue.** Idle starts when a dequeue (start of
//!    transmission) empties a virtual queue — RIO-C: precedence p and the following empty
//!    ones, only when every better precedence is empty; RIO-D: p; WRED: the shared average,
//!    whenever the dequeued packet's precedence empties, even if others are queued. Only an
//!    accepted arrival ends it (a dropped one decays again from the same instant).
//! 5. **The drop test.** Integer thresholds; early region `th_min < avg ≤ th_max` (strict
//!    lower bound); `count` is −1 after an arrival at or below th_min, incremented before use,
//!    and `p_a = p_b / (1 − count·p_b)` is not clamped (once count·p_b > 1, p_a < 0 and no
//!    early drop happens); one uniform draw per arrival in the early region; above th_max a
//!    forced drop (no gentle region).
//! 6. **ECN** (`ecn = true`, ns-2's `ecn_`): an ECN-capable packet is marked instead of
//!    dropped, in the early *and* the forced region (dsRED enqueues it first).

use super::af::AfAverage;
use super::red::RedCurve;
use super::registry::Ns2Export;
use super::{Aqm, QueueView, Verdict};
use crate::packet::PacketMeta;
use crate::params::typed::Decl;
use crate::params::{key_error, Flavour, KeyError, ParamKind, Table};
use crate::rng::SimRng;
use crate::units::{Limit, SimTime};

/// The `ecn` key of RIO and WRED.
pub const AF_ECN: Decl<bool> = Decl::new(
    "ecn",
    ParamKind::Bool,
    "false",
    "Mark ECN-capable packets instead of dropping them early (RFC 3168; ns-2's ecn_); \
          in the ns2 flavour also above max_th, as dsRED does.",
);

/// What RIO and WRED add to the AF averaging: ECN, and which flavour runs.
#[derive(Debug, Clone, Copy, Default)]
pub struct DsredOptions {
    pub ecn: bool,
    pub flavour: Flavour,
}

impl DsredOptions {
    /// Reads `ecn` and `flavour`; the `ns2` flavour needs what dsRED can express (a packet
    /// limit, no gentle region, no `wait`, whole-packet thresholds), each error naming its key.
    pub fn read(
        t: &Table,
        avg: &AfAverage,
        curves: &[RedCurve],
        limit: Limit,
    ) -> Result<DsredOptions, KeyError> {
        let o = DsredOptions {
            ecn: t.get(&AF_ECN)?,
            flavour: t.flavour()?,
        };
        if o.flavour == Flavour::Ns2 {
            if let Some((key, why)) = avg.dsred_refusal(curves, limit) {
                return Err(key_error(t.key(&key), format!("flavour = \"ns2\": {why}")));
            }
        }
        Ok(o)
    }

    /// The ns-2 export of an RIO or WRED queue: one of dsRED's physical queues, or refused.
    pub fn ns2(avg: &AfAverage, curves: &[RedCurve], limit: Limit) -> Ns2Export {
        match avg.dsred_refusal(curves, limit) {
            Some((_, reason)) => Ns2Export::Refused(reason),
            None => Ns2Export::Dsred,
        }
    }

    /// The runtime: `reference`, or ns-2's dsRED queue in `mode`.
    pub fn build<R>(
        &self,
        reference: R,
        mode: DsredMode,
        avg: &AfAverage,
        curves: &[RedCurve],
        link_bps: u64,
    ) -> Flavoured<R> {
        match self.flavour {
            Flavour::Reference => Flavoured::Reference {
                aqm: reference,
                ecn: self.ecn,
            },
            Flavour::Ns2 => {
                let c: Vec<DsredCurve> = curves
                    .iter()
                    .map(|c| DsredCurve {
                        th_min: c.min_th as i64,
                        th_max: c.max_th as i64,
                        max_p: c.max_p,
                    })
                    .collect();
                Flavoured::Ns2(DsredRed::new(
                    mode,
                    &c,
                    avg.w_q,
                    avg.ptc(link_bps),
                    self.ecn,
                ))
            }
        }
    }
}

/// How a dsRED physical queue averages: `setMREDMode RIO-C | RIO-D | WRED`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DsredMode {
    RioC,
    RioD,
    Wred,
}

/// One virtual queue (precedence) of a dsRED physical queue: `qParam` in dsredq.h.
#[derive(Debug, Clone)]
pub struct VirtualQueue {
    pub th_min: i64,
    pub th_max: i64,
    /// `max_p_inv = 1 / max_p`, as dsRED stores it.
    pub max_p_inv: f64,
    pub q_w: f64,
    /// Packets per second at the mean packet size (`ptc`), for the idle decay.
    pub ptc: f64,
    /// The average, a value of a C `float`.
    pub v_ave: f32,
    pub count: i64,
    pub idle: bool,
    pub idle_since: SimTime,
}

/// The RED of one dsRED physical queue.
#[derive(Debug, Clone)]
pub struct DsredRed {
    pub mode: DsredMode,
    pub vq: Vec<VirtualQueue>,
    pub ecn: bool,
}

/// One curve of a virtual queue: `configQ q p th_min th_max max_p w_q`.
#[derive(Debug, Clone, Copy)]
pub struct DsredCurve {
    pub th_min: i64,
    pub th_max: i64,
    pub max_p: f64,
}

impl DsredRed {
    /// `curves[p]` per precedence (1 to 3), all with weight `q_w`; `ptc` =
    /// bandwidth / (8 · meanPktSize). Every virtual queue starts idle at time 0 (`configQ`).
    pub fn new(mode: DsredMode, curves: &[DsredCurve], q_w: f64, ptc: f64, ecn: bool) -> Self {
        assert!(
            (1..=3).contains(&curves.len()),
            "dsRED has 1 to 3 precedences"
        );
        DsredRed {
            mode,
            ecn,
            vq: curves
                .iter()
                .map(|c| VirtualQueue {
                    th_min: c.th_min,
                    th_max: c.th_max,
                    max_p_inv: 1.0 / c.max_p,
                    q_w,
                    ptc,
                    v_ave: 0.0,
                    count: 0,
                    idle: true,
                    idle_since: 0,
                })
                .collect(),
        }
    }

    /// The virtual queue of drop precedence `prec` (precedences beyond the configured ones
    /// fold into the last, as the exporter's PHB table maps them).
    #[inline]
    fn level(&self, prec: u8) -> usize {
        (prec as usize).min(self.vq.len() - 1)
    }

    /// Packets waiting in virtual queue `k` (the folded precedences count in the last).
    #[inline]
    fn qlen(&self, k: usize, q: &QueueView) -> u64 {
        if k == self.vq.len() - 1 {
            q.len_by_prec[k..].iter().sum()
        } else {
            q.len_by_prec[k]
        }
    }

    /// Rule 2: `calcAvg(k, m + 1)` in single precision.
    fn calc_avg(&mut self, k: usize, now: SimTime, q: &QueueView) {
        let v = &self.vq[k];
        let m = if v.idle {
            // int(ptc * (now - idletime_)), truncated toward zero as C does.
            (v.ptc * ((now - v.idle_since) as f64 * 1e-9)) as i64
        } else {
            0
        };
        let decay = 1.0 - v.q_w;
        let mut f = v.v_ave;
        for _ in 0..m {
            f = (f as f64 * decay) as f32;
        }
        f = (f as f64 * decay) as f32;
        match self.mode {
            DsredMode::RioC => {
                for i in 0..=k {
                    f = (f as f64 + self.vq[i].q_w * self.qlen(i, q) as f64) as f32;
                }
            }
            DsredMode::RioD => f = (f as f64 + v.q_w * self.qlen(k, q) as f64) as f32,
            DsredMode::Wred => f = (f as f64 + v.q_w * q.len_pkts as f64) as f32,
        }
        if self.mode == DsredMode::Wred {
            for v in &mut self.vq {
                v.v_ave = f;
            }
        } else {
            self.vq[k].v_ave = f;
        }
    }

    /// Rule 4, for an accepted arrival (`updateIdleFlag`).
    fn busy(&mut self, p: usize) {
        match self.mode {
            DsredMode::RioC => self.vq[p..].iter_mut().for_each(|v| v.idle = false),
            DsredMode::RioD => self.vq[p].idle = false,
            DsredMode::Wred => self.vq[0].idle = false,
        }
    }

    /// Rule 5: the verdict on the average of precedence `p` (before ECN).
    fn judge(&mut self, p: usize, rng: &mut SimRng) -> Verdict {
        let v = &mut self.vq[p];
        let a = v.v_ave as f64;
        if a > v.th_min as f64 {
            if a <= v.th_max as f64 {
                v.count += 1;
                let pb = (1.0 / v.max_p_inv) * (a - v.th_min as f64) / (v.th_max - v.th_min) as f64;
                let pa = pb / (1.0 - v.count as f64 * pb);
                if rng.uniform() <= pa {
                    v.count = 0;
                    return Verdict::EarlyDrop;
                }
                Verdict::Enqueue
            } else {
                v.count = 0;
                Verdict::ForcedDrop
            }
        } else {
            v.count = -1;
            Verdict::Enqueue
        }
    }
}

impl Aqm for DsredRed {
    fn on_enqueue(
        &mut self,
        now: SimTime,
        pkt: &PacketMeta,
        q: QueueView,
        rng: &mut SimRng,
    ) -> Verdict {
        // Rule 1: the physical limit before anything else.
        if q.full_for(pkt.size as u64) {
            return Verdict::Overflow;
        }
        let p = self.level(pkt.prec);
        match self.mode {
            DsredMode::RioC => (p..self.vq.len()).for_each(|k| self.calc_avg(k, now, &q)),
            DsredMode::RioD => self.calc_avg(p, now, &q),
            DsredMode::Wred => self.calc_avg(0, now, &q),
        }
        let v = match self.judge(p, rng) {
            Verdict::EarlyDrop | Verdict::ForcedDrop if self.ecn && pkt.ecn != 0 => Verdict::Mark,
            v => v,
        };
        if matches!(v, Verdict::Enqueue | Verdict::Mark) {
            self.busy(p);
        }
        v
    }

    fn wants_dequeue(&self) -> bool {
        true
    }

    /// Rule 4 (`updateREDStateVar` after the dequeue).
    fn on_dequeue(&mut self, at: SimTime, prec: u8, q: QueueView) {
        let p = self.level(prec);
        if self.qlen(p, &q) != 0 {
            return;
        }
        match self.mode {
            DsredMode::RioC => {
                if (0..p).any(|j| self.qlen(j, &q) != 0) {
                    return;
                }
                for i in p..self.vq.len() {
                    if self.qlen(i, &q) != 0 {
                        break;
                    }
                    self.vq[i].idle = true;
                    self.vq[i].idle_since = at;
                }
            }
            DsredMode::RioD => {
                self.vq[p].idle = true;
                self.vq[p].idle_since = at;
            }
            DsredMode::Wred => {
                self.vq[0].idle = true;
                self.vq[0].idle_since = at;
            }
        }
    }

    fn average(&self) -> Option<f64> {
        Some(self.vq[0].v_ave as f64)
    }

    fn averages(&self) -> [f64; 3] {
        let mut out = [f64::NAN; 3];
        for (o, v) in out.iter_mut().zip(&self.vq) {
            *o = v.v_ave as f64;
        }
        out
    }
}

/// An AF queue in the flavour its scenario chose: the reference algorithm (with ECN marking
/// of early drops of ECN-capable packets when `ecn`), or ns-2's dsRED.
#[derive(Debug, Clone)]
pub enum Flavoured<R> {
    Reference { aqm: R, ecn: bool },
    Ns2(DsredRed),
}

impl<R: Aqm> Aqm for Flavoured<R> {
    #[inline]
    fn on_enqueue(
        &mut self,
        now: SimTime,
        pkt: &PacketMeta,
        q: QueueView,
        rng: &mut SimRng,
    ) -> Verdict {
        match self {
            Flavoured::Reference { aqm, ecn } => match aqm.on_enqueue(now, pkt, q, rng) {
                // RFC 3168 §7: mark instead of an early drop; above max_th still drop.
                Verdict::EarlyDrop if *ecn && pkt.ecn != 0 => Verdict::Mark,
                v => v,
            },
            Flavoured::Ns2(d) => d.on_enqueue(now, pkt, q, rng),
        }
    }
    fn on_idle(&mut self, now: SimTime) {
        if let Flavoured::Reference { aqm, .. } = self {
            aqm.on_idle(now);
        }
    }
    fn wants_dequeue(&self) -> bool {
        matches!(self, Flavoured::Ns2(_))
    }
    fn on_dequeue(&mut self, at: SimTime, prec: u8, q: QueueView) {
        if let Flavoured::Ns2(d) = self {
            d.on_dequeue(at, prec, q);
        }
    }
    fn on_overflow(&mut self, now: SimTime, pkt: &PacketMeta, decided: Verdict) {
        if let Flavoured::Reference { aqm, .. } = self {
            aqm.on_overflow(now, pkt, decided);
        }
    }
    fn average(&self) -> Option<f64> {
        match self {
            Flavoured::Reference { aqm, .. } => aqm.average(),
            Flavoured::Ns2(d) => d.average(),
        }
    }
    fn averages(&self) -> [f64; 3] {
        match self {
            Flavoured::Reference { aqm, .. } => aqm.averages(),
            Flavoured::Ns2(d) => d.averages(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::PacketKind;

    const SEC: SimTime = 1_000_000_000;

    fn curves() -> [DsredCurve; 2] {
        [
            DsredCurve {
                th_min: 40,
                th_max: 70,
                max_p: 0.02,
            },
            DsredCurve {
                th_min: 10,
                th_max: 40,
                max_p: 0.2,
            },
        ]
    }

    fn q(mode: DsredMode) -> DsredRed {
        DsredRed::new(mode, &curves(), 0.002, 1000.0, false)
    }

    fn pkt(prec: u8) -> PacketMeta {
        let mut p = PacketMeta::new(0, PacketKind::Data, 1000, 0, 0);
        p.prec = prec;
        p
    }

    fn view(in_: u64, out: u64, limit: u64) -> QueueView {
        QueueView {
            len_pkts: in_ + out,
            len_bytes: 1000 * (in_ + out),
            limit: Limit::Packets(limit),
            len_by_prec: [in_, out, 0],
        }
    }

    /// Rule 1: a packet finding the buffer full is refused before the averages, counts and
    /// idle state are touched (the reference RIO updates the average first).
    #[test]
    fn limit_is_tested_first() {
        let mut d = q(DsredMode::RioC);
        let mut rng = SimRng::derive(1, 1);
        d.vq[1].v_ave = 25.0;
        d.vq[1].count = 3;
        let before = (d.vq[1].v_ave, d.vq[1].count, d.vq[1].idle);
        let v = d.on_enqueue(5 * SEC, &pkt(1), view(10, 20, 30), &mut rng);
        assert_eq!(v, Verdict::Overflow);
        assert_eq!((d.vq[1].v_ave, d.vq[1].count, d.vq[1].idle), before);
    }

    /// Rule 2: the average is a C float rounded after every operation, and an idle period
    /// of t seconds decays it by int(ptc·t) extra steps.
    #[test]
    fn single_precision_average_and_idle_decay() {
        let mut d = q(DsredMode::RioD);
        let mut rng = SimRng::derive(1, 1);
        d.on_enqueue(0, &pkt(0), view(10, 0, 100), &mut rng);
        let expect = (0.0f64 + 0.002 * 10.0) as f32;
        assert_eq!(d.vq[0].v_ave, expect);
        assert_ne!(
            d.vq[0].v_ave as f64,
            0.002 * 10.0,
            "f32 rounding is visible"
        );
        // Idle since 1 s, next arrival at 1.0105 s: ptc 1000/s → m = 10 extra steps.
        d.vq[0].v_ave = 30.0;
        d.vq[0].idle = true;
        d.vq[0].idle_since = SEC;
        d.on_enqueue(SEC + 10_500_000, &pkt(0), view(0, 0, 100), &mut rng);
        let mut f = 30.0f32;
        for _ in 0..11 {
            f = (f as f64 * 0.998) as f32;
        }
        assert_eq!(d.vq[0].v_ave, f);
    }

    /// Rule 3: RIO-C moves the arriving precedence's average and every worse one's (average
    /// k counting precedences ≤ k); RIO-D only its own; WRED one shared average.
    #[test]
    fn which_averages_move() {
        let mut rng = SimRng::derive(1, 1);
        let mut c = q(DsredMode::RioC);
        c.on_enqueue(0, &pkt(0), view(5, 20, 100), &mut rng);
        assert_eq!(c.vq[0].v_ave, (0.002 * 5.0) as f32);
        assert_eq!(
            c.vq[1].v_ave,
            ((0.002 * 5.0) as f32 as f64 + 0.002 * 20.0) as f32
        );
        let in_before = c.vq[0].v_ave;
        c.on_enqueue(0, &pkt(1), view(5, 20, 100), &mut rng);
        assert_eq!(
            c.vq[0].v_ave, in_before,
            "an OUT arrival leaves avg_in alone"
        );
        let mut dd = q(DsredMode::RioD);
        dd.on_enqueue(0, &pkt(1), view(5, 20, 100), &mut rng);
        assert_eq!(
            (dd.vq[0].v_ave, dd.vq[1].v_ave),
            (0.0, (0.002 * 20.0) as f32)
        );
        let mut w = q(DsredMode::Wred);
        w.on_enqueue(0, &pkt(1), view(5, 20, 100), &mut rng);
        assert_eq!(w.vq[0].v_ave, (0.002 * 25.0) as f32);
        assert_eq!(w.vq[1].v_ave, w.vq[0].v_ave);
    }

    /// Rule 4: idle starts at the dequeue that empties a virtual queue. RIO-C only when the
    /// better precedences are empty too; WRED whenever the dequeued precedence empties, even
    /// with other packets queued; a dropped arrival does not end an idle period.
    #[test]
    fn idle_per_precedence_from_the_dequeue() {
        let mut rng = SimRng::derive(1, 1);
        let mut c = q(DsredMode::RioC);
        for v in &mut c.vq {
            v.idle = false;
        }
        c.on_dequeue(2 * SEC, 1, view(3, 0, 100));
        assert!(!c.vq[1].idle, "IN packets still queued");
        c.on_dequeue(3 * SEC, 0, view(0, 0, 100));
        assert!(c.vq[0].idle && c.vq[1].idle);
        assert_eq!(c.vq[0].idle_since, 3 * SEC);
        let mut w = q(DsredMode::Wred);
        w.vq[0].idle = false;
        w.on_dequeue(SEC, 0, view(0, 12, 100));
        assert!(
            w.vq[0].idle,
            "WRED goes idle with 12 OUT packets queued (dsRED's rule)"
        );
        assert_eq!(w.vq[0].idle_since, SEC);
        // A forced drop keeps it idle; an accepted arrival ends it.
        w.vq[0].v_ave = 90.0;
        w.vq[1].v_ave = 90.0;
        let v = w.on_enqueue(SEC + 1, &pkt(1), view(0, 12, 100), &mut rng);
        assert_eq!(v, Verdict::ForcedDrop);
        assert!(w.vq[0].idle && w.vq[0].idle_since == SEC);
        w.vq[0].v_ave = 0.0;
        let v = w.on_enqueue(SEC + 2, &pkt(1), view(0, 12, 100), &mut rng);
        assert_eq!(v, Verdict::Enqueue);
        assert!(!w.vq[0].idle);
    }

    /// Rule 5: the early region starts strictly above th_min; count is −1 below it and
    /// p_a = p_b/(1 − count·p_b) is not clamped, so once count·p_b > 1 no early drop can
    /// happen; above th_max every arrival is a forced drop.
    #[test]
    fn drop_test() {
        let mut rng = SimRng::derive(7, 1);
        let mut d = q(DsredMode::RioD);
        for v in &mut d.vq {
            v.idle = false;
            v.q_w = 1e-12; // hold the average still
        }
        d.vq[1].v_ave = 10.0; // == th_min: not in the early region
        assert_eq!(d.judge(1, &mut rng), Verdict::Enqueue);
        assert_eq!(d.vq[1].count, -1);
        // p_b = 0.2·(25−10)/30 = 0.1: with count ≥ 10, p_a < 0 and nothing is dropped.
        d.vq[1].v_ave = 25.0;
        d.vq[1].count = 10;
        for _ in 0..10_000 {
            assert_eq!(d.judge(1, &mut rng), Verdict::Enqueue);
        }
        // From count −1 the early drops come, spread as p_b/(1 − count·p_b).
        d.vq[1].count = -1;
        let drops = (0..10_000)
            .filter(|_| {
                let v = d.judge(1, &mut rng);
                if d.vq[1].count > 9 {
                    d.vq[1].count = -1; // restart the cycle before p_a turns negative
                }
                v == Verdict::EarlyDrop
            })
            .count();
        assert!(drops > 1000, "{drops}");
        d.vq[1].v_ave = 40.5;
        assert_eq!(d.judge(1, &mut rng), Verdict::ForcedDrop);
        assert_eq!(d.vq[1].count, 0);
    }

    /// Rule 6: with `ecn`, an ECN-capable packet is marked in the early and forced regions;
    /// a packet that is not ECN-capable is still dropped.
    #[test]
    fn ecn_marks_in_both_regions() {
        let mut rng = SimRng::derive(1, 1);
        let mut d = DsredRed::new(DsredMode::Wred, &curves(), 0.002, 1000.0, true);
        d.vq[0].idle = false;
        d.vq[0].v_ave = 80.0;
        d.vq[1].v_ave = 80.0;
        let mut ect = pkt(1);
        ect.ecn = 2;
        assert_eq!(
            d.on_enqueue(0, &ect, view(0, 60, 100), &mut rng),
            Verdict::Mark
        );
        assert_eq!(
            d.on_enqueue(0, &pkt(1), view(0, 60, 100), &mut rng),
            Verdict::ForcedDrop
        );
    }
}
