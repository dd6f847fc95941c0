//! FDD-RED — Fair Dropping Discipline over RED (Seyyed Hashemi, Jamali, Motarez, "A
//! High-Performance Router: Using Fair-Dropping Policy", Sec. II, Eq. 1, Fig. 2).
//!
//! RED decides *when* a packet must be dropped; FDD-RED decides *whose*. For the flows seen
//! during the last `RTT_avg` it keeps a penalty built from the Fair Dropping Index
//! `FDI_i = Drop_i · RTT_avg / RTT_i` (Eq. 1): each RED drop decision adds to the penalties
//! in proportion to `RTT_avg / RTT_i` (short-RTT flows, which take more than their share,
//! accrue faster), the flow with the greatest penalty is the victim and pays 1.
//!
//! Two accrual rules ([`PenaltyRule`]):
//!
//! * [`PenaltyRule::Shares`] (default): on each drop decision every flow seen during the last
//!   `RTT_avg` accrues its share `w_i / Σ_j w_j`, `w_i = RTT_avg / RTT_i`. Drops are then spread
//!   over the flows in proportion to `1 / RTT_i` whichever flow's packet RED picked — the
//!   paper's text: "FDD-RED drops packets uniformly from all passing flows", "a source whose RTT
//!   is lower than average encounters more drops".
//! * [`PenaltyRule::Fig2`]: Fig. 2 as printed: the arriving flow (line 3) and the flow with the
//!   latest drop time (lines 1 and 4) each accrue `RTT_avg / RTT_i`; the victim pays 1 (line 8).
//!   Line 4 keeps re-charging the last victim, so drops tend to stay on one flow for a while
//!   (see the tests); `docs/models/fdd-red.md` discusses it.
//!
//! The victim packet: the link's queue fixes departure times at admission (a FIFO line), so
//! FDD-RED never removes a queued packet. If the victim is the arriving packet's flow, the
//! arrival is dropped; otherwise the arrival is admitted and the victim flow *owes* a drop,
//! paid with its next arriving packet (arriving position, deferred). An overflow drop of a
//! flow that owes drops pays one of them. A flow not seen for `RTT_avg` is forgotten: its
//! penalty and owed drops are cleared (Sec. II: state is kept only for the flows that passed
//! during the last `RTT_avg`).
//!
//! Per-flow RTT ([`RttSource`]): the scenario's propagation RTTs (oracle), or an online
//! estimator at the router ([`RttEstimator`]) that matches TCP timestamps (RFC 7323 TSval /
//! TSecr) in both directions, as passive monitors such as pping do: downstream half = data
//! packet seen → the ACK echoing its TSval seen on the reverse direction; upstream half = ACK
//! seen → the data packet echoing the ACK's TSval. `RTT_i` = smoothed downstream + smoothed
//! upstream half (gain 1/8 each, like TCP's SRTT). Only router clock differences are used.

use super::red::{Red, RedParams};
use super::{Aqm, QueueView, Verdict};
use crate::packet::{PacketKind, PacketMeta};
use crate::rng::SimRng;
use crate::units::SimTime;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RttSource {
    /// Online estimation from TCP timestamps seen at the router.
    Estimator,
    /// The scenario's round-trip propagation delays, given by the host.
    Oracle,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PenaltyRule {
    Shares,
    Fig2,
}

/// Timestamps remembered per flow and direction for matching (a ring, overwritten oldest
/// first).
const RING: usize = 32;
/// EWMA gain of each RTT half (TCP's SRTT gain).
const RTT_GAIN: f64 = 0.125;

/// Passive per-flow RTT estimator from TCP timestamps (see the module docs).
#[derive(Debug, Clone)]
pub struct RttEstimator {
    /// (TSval of an admitted data packet, when it was seen).
    data: [(u64, SimTime); RING],
    data_next: usize,
    /// (TSval of an ACK seen on the reverse direction, when it was seen).
    acks: [(u64, SimTime); RING],
    acks_next: usize,
    /// Smoothed downstream and upstream halves, ns.
    pub down: Option<f64>,
    pub up: Option<f64>,
    pub samples: u64,
}

impl Default for RttEstimator {
    fn default() -> Self {
        RttEstimator {
            data: [(u64::MAX, 0); RING],
            data_next: 0,
            acks: [(u64::MAX, 0); RING],
            acks_next: 0,
            down: None,
            up: None,
            samples: 0,
        }
    }
}

fn smooth(x: &mut Option<f64>, sample: f64) {
    *x = Some(match *x {
        None => sample,
        Some(v) => v + RTT_GAIN * (sample - v),
    });
}

/// Removes the first entry with timestamp `ts` and returns when it was seen.
fn take(ring: &mut [(u64, SimTime); RING], ts: u64) -> Option<SimTime> {
    let e = ring.iter_mut().find(|e| e.0 == ts)?;
    e.0 = u64::MAX;
    Some(e.1)
}

impl RttEstimator {
    /// A data packet with `tsval` (and echoing `tsecr`) was admitted at `now`.
    pub fn on_data(&mut self, now: SimTime, tsval: u64, tsecr: u64) {
        if let Some(t1) = take(&mut self.acks, tsecr) {
            smooth(&mut self.up, (now - t1) as f64);
            self.samples += 1;
        }
        self.data[self.data_next] = (tsval, now);
        self.data_next = (self.data_next + 1) % RING;
    }

    /// An ACK with `tsval` echoing `tsecr` was seen on the reverse direction at `now`.
    pub fn on_ack(&mut self, now: SimTime, tsval: u64, tsecr: u64) {
        if let Some(t0) = take(&mut self.data, tsecr) {
            smooth(&mut self.down, (now - t0) as f64);
            self.samples += 1;
        }
        self.acks[self.acks_next] = (tsval, now);
        self.acks_next = (self.acks_next + 1) % RING;
    }

    /// The estimated RTT in ns, once both halves have a sample.
    pub fn rtt(&self) -> Option<f64> {
        Some(self.down? + self.up?)
    }
}

/// What FDD-RED keeps per flow (allocated when a flow id first appears, never per packet).
#[derive(Debug, Clone, Default)]
pub struct FlowState {
    pub penalty: f64,
    /// Drop decisions charged to this flow (Fig. 2 `lastDropMarkTime` is `last_drop`).
    pub charged: u64,
    pub last_drop: Option<SimTime>,
    pub last_seen: Option<SimTime>,
    /// Drops owed: (early, forced), paid by the flow's next arrivals.
    pub owed: [u32; 2],
    /// The oracle RTT (ns), if the host gave one.
    pub oracle_rtt: Option<f64>,
    pub est: RttEstimator,
}

#[derive(Debug, Clone, Copy, Default)]
pub struct FddStats {
    /// RED drop decisions handed to `PenalizeFlow`.
    pub decisions: u64,
    /// Decisions whose victim was the arriving packet's own flow.
    pub immediate: u64,
    /// Decisions charged to another flow (paid later).
    pub deferred: u64,
    /// Owed drops paid by a later arrival or by an overflow drop.
    pub paid: u64,
    /// Owed drops cancelled because the flow was not seen for `RTT_avg`.
    pub cancelled: u64,
}

#[derive(Debug, Clone)]
pub struct FddRed {
    pub red: Red,
    pub rule: PenaltyRule,
    pub source: RttSource,
    pub flows: Vec<FlowState>,
    /// The last `RTT_avg` (ns) computed; 0 until a flow has an RTT.
    pub avg_rtt: f64,
    pub stats: FddStats,
}

/// Which drop the victim owes (index into `FlowState::owed`).
const EARLY: usize = 0;
const FORCED: usize = 1;

impl FddRed {
    pub fn new(params: RedParams, rule: PenaltyRule, source: RttSource) -> Self {
        FddRed {
            red: Red::new(params),
            rule,
            source,
            flows: Vec::new(),
            avg_rtt: 0.0,
            stats: FddStats::default(),
        }
    }

    /// The host's round-trip propagation delays per flow id (used with [`RttSource::Oracle`]).
    pub fn set_path_rtts(&mut self, rtts: &[SimTime]) {
        if self.flows.len() < rtts.len() {
            self.flows.resize_with(rtts.len(), FlowState::default);
        }
        for (f, &r) in self.flows.iter_mut().zip(rtts) {
            f.oracle_rtt = Some(r as f64);
        }
    }

    fn flow_mut(&mut self, flow: u32) -> &mut FlowState {
        let i = flow as usize;
        if i >= self.flows.len() {
            self.flows.resize_with(i + 1, FlowState::default);
        }
        &mut self.flows[i]
    }

    /// `RTT_i` in ns as the configured source gives it (None while unknown).
    pub fn rtt_of(&self, flow: u32) -> Option<f64> {
        let f = self.flows.get(flow as usize)?;
        match self.source {
            RttSource::Oracle => f.oracle_rtt,
            RttSource::Estimator => f.est.rtt(),
        }
    }

    /// Whether `flow` passed during the last `RTT_avg` (every flow seen counts while no RTT
    /// is known yet).
    fn active(&self, now: SimTime, f: &FlowState) -> bool {
        match f.last_seen {
            None => false,
            Some(t) => self.avg_rtt <= 0.0 || (now - t) as f64 <= self.avg_rtt,
        }
    }

    /// Recomputes `RTT_avg` over the active flows with a known RTT.
    fn update_avg_rtt(&mut self, now: SimTime) {
        let (mut s, mut n) = (0.0, 0u32);
        for i in 0..self.flows.len() {
            if self.active(now, &self.flows[i]) {
                if let Some(r) = self.rtt_of(i as u32) {
                    s += r;
                    n += 1;
                }
            }
        }
        if n > 0 {
            self.avg_rtt = s / n as f64;
        }
    }

    /// The weight `RTT_avg / RTT_i` (1 while either is unknown).
    fn weight(&self, flow: u32) -> f64 {
        match self.rtt_of(flow) {
            Some(r) if r > 0.0 && self.avg_rtt > 0.0 => self.avg_rtt / r,
            _ => 1.0,
        }
    }

    /// An arrival of `flow` at `now`: a flow unseen for `RTT_avg` starts afresh.
    pub fn touch(&mut self, now: SimTime, flow: u32) {
        self.flow_mut(flow);
        let stale = {
            let f = &self.flows[flow as usize];
            f.last_seen.is_some() && !self.active(now, f)
        };
        let f = &mut self.flows[flow as usize];
        if stale {
            let owed = f.owed[0] + f.owed[1];
            self.stats.cancelled += owed as u64;
            f.owed = [0; 2];
            f.penalty = 0.0;
        }
        f.last_seen = Some(now);
    }

    /// Fig. 2 `PenalizeFlow(flow)`: charges a RED drop decision triggered by an arrival of
    /// `flow` and returns the victim flow.
    pub fn penalize(&mut self, now: SimTime, flow: u32) -> u32 {
        self.update_avg_rtt(now);
        self.stats.decisions += 1;
        match self.rule {
            PenaltyRule::Shares => {
                let mut total = 0.0;
                for i in 0..self.flows.len() {
                    if i as u32 == flow || self.active(now, &self.flows[i]) {
                        total += self.weight(i as u32);
                    }
                }
                for i in 0..self.flows.len() {
                    if i as u32 == flow || self.active(now, &self.flows[i]) {
                        let w = self.weight(i as u32) / total;
                        self.flows[i].penalty += w;
                    }
                }
            }
            PenaltyRule::Fig2 => {
                // line 1: the flow with the latest drop/mark time (none before the first drop)
                let last = self
                    .flows
                    .iter()
                    .enumerate()
                    .filter(|(_, f)| f.last_drop.is_some() && self.active(now, f))
                    .max_by_key(|(i, f)| (f.last_drop, std::cmp::Reverse(*i)))
                    .map(|(i, _)| i as u32);
                // lines 3-4
                let w = self.weight(flow);
                self.flows[flow as usize].penalty += w;
                if let Some(l) = last {
                    let w = self.weight(l);
                    self.flows[l as usize].penalty += w;
                }
            }
        }
        // line 5: the greatest penalty among the flows seen during the last RTT_avg; ties go
        // to the arriving flow, then to the lowest flow id.
        let mut victim = flow;
        let mut best = self.flows[flow as usize].penalty;
        for i in 0..self.flows.len() {
            let f = &self.flows[i];
            if i as u32 != flow && self.active(now, f) && f.penalty > best {
                best = f.penalty;
                victim = i as u32;
            }
        }
        // lines 8 and 10
        let v = &mut self.flows[victim as usize];
        v.penalty -= 1.0;
        v.charged += 1;
        v.last_drop = Some(now);
        if victim == flow {
            self.stats.immediate += 1;
        } else {
            self.stats.deferred += 1;
        }
        victim
    }

    /// Pays one owed drop of `flow` if it has any: the kind of drop, else None.
    fn pay(&mut self, flow: u32) -> Option<Verdict> {
        let f = &mut self.flows[flow as usize];
        let k = if f.owed[EARLY] > 0 {
            EARLY
        } else if f.owed[FORCED] > 0 {
            FORCED
        } else {
            return None;
        };
        f.owed[k] -= 1;
        self.stats.paid += 1;
        Some(if k == EARLY {
            Verdict::EarlyDrop
        } else {
            Verdict::ForcedDrop
        })
    }

    /// Drops owed by `flow` (early + forced).
    pub fn owed(&self, flow: u32) -> u32 {
        self.flows
            .get(flow as usize)
            .map_or(0, |f| f.owed[0] + f.owed[1])
    }
}

impl Aqm for FddRed {
    fn on_enqueue(
        &mut self,
        now: SimTime,
        pkt: &PacketMeta,
        q: QueueView,
        rng: &mut SimRng,
    ) -> Verdict {
        let flow = pkt.flow;
        self.touch(now, flow);
        let v = self.red.on_enqueue(now, pkt, q, rng);
        match v {
            Verdict::Overflow => {
                // The buffer is full: the arrival is lost whatever FDD-RED would choose; it pays
                // an owed drop if its flow has one.
                let _ = self.pay(flow);
                return Verdict::Overflow;
            }
            Verdict::EarlyDrop | Verdict::ForcedDrop | Verdict::Mark => {
                let victim = self.penalize(now, flow);
                let k = if v == Verdict::ForcedDrop {
                    FORCED
                } else {
                    EARLY
                };
                self.flows[victim as usize].owed[k] += 1;
            }
            Verdict::Enqueue => {}
        }
        if let Some(drop) = self.pay(flow) {
            return drop;
        }
        if pkt.kind == PacketKind::Data && self.source == RttSource::Estimator {
            self.flows[flow as usize]
                .est
                .on_data(now, pkt.created_at, pkt.ts_echo);
        }
        Verdict::Enqueue
    }

    fn on_idle(&mut self, now: SimTime) {
        self.red.on_idle(now);
    }

    fn average(&self) -> Option<f64> {
        self.red.average()
    }

    fn on_reverse(&mut self, now: SimTime, pkt: &PacketMeta) {
        if pkt.kind == PacketKind::Ack && self.source == RttSource::Estimator {
            self.flow_mut(pkt.flow)
                .est
                .on_ack(now, pkt.created_at, pkt.ts_echo);
        }
    }

    fn wants_reverse(&self) -> bool {
        self.source == RttSource::Estimator
    }

    fn set_path_rtts(&mut self, rtts: &[SimTime]) {
        FddRed::set_path_rtts(self, rtts);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::red::RedCurve;
    use crate::units::Limit;

    const MS: SimTime = 1_000_000;

    fn params() -> RedParams {
        RedParams {
            curve: RedCurve {
                min_th: 25.0,
                max_th: 75.0,
                max_p: 0.01,
                gentle: false,
            },
            w_q: 0.002,
            wait: true,
            byte_mode: false,
            mean_pkt_size: 500,
            ecn: false,
            ptc: 250.0,
        }
    }

    fn fdd(rule: PenaltyRule, rtts_ms: &[u64]) -> FddRed {
        let mut a = FddRed::new(params(), rule, RttSource::Oracle);
        let r: Vec<SimTime> = rtts_ms.iter().map(|x| x * MS).collect();
        a.set_path_rtts(&r);
        a
    }

    /// Scripted arrivals: flow `arrivals[k]` arrives at k ms and RED asks for a drop; returns
    /// the victims.
    fn script(a: &mut FddRed, arrivals: &[u32]) -> Vec<u32> {
        arrivals
            .iter()
            .enumerate()
            .map(|(k, &f)| {
                let now = k as SimTime * MS;
                a.touch(now, f);
                a.penalize(now, f)
            })
            .collect()
    }

    #[test]
    fn shares_spread_drops_evenly_over_equal_rtt_flows() {
        let mut a = fdd(PenaltyRule::Shares, &[100, 100, 100, 100]);
        // Every flow passes once, then flow 0 triggers every RED drop.
        for f in 0..4 {
            a.touch(0, f);
        }
        let v = script(&mut a, &[0; 8]);
        // Equal shares 1/4: ties go to the arriving flow, then to the lowest id.
        assert_eq!(v, vec![0, 1, 2, 3, 0, 1, 2, 3]);
        for f in &a.flows {
            assert!(f.penalty.abs() < 1e-12, "{}", f.penalty);
            assert_eq!(f.charged, 2);
        }
        assert_eq!(a.stats.immediate, 2);
        assert_eq!(a.stats.deferred, 6);
    }

    #[test]
    fn shares_weight_drops_by_inverse_rtt() {
        // RTTs 20 and 80 ms: RTT_avg = 50 ms, weights 2.5 and 0.625, shares 0.8 and 0.2.
        let mut a = fdd(PenaltyRule::Shares, &[20, 80]);
        a.touch(0, 0);
        a.touch(0, 1);
        let v = script(&mut a, &[1; 10]);
        assert!((a.avg_rtt - 50.0 * MS as f64).abs() < 1e-6);
        let short = v.iter().filter(|&&x| x == 0).count();
        assert_eq!(short, 8, "{v:?}");
        // FDI-style balance: drops × RTT_i / RTT_avg equal, i.e. 8·20 = 2·80.
        assert_eq!(a.flows[0].charged * 20, a.flows[1].charged * 80);
        // The first decision: flow 1 accrues 0.2, flow 0 0.8 — flow 0 is the victim.
        assert_eq!(v[0], 0);
    }

    #[test]
    fn flows_not_seen_for_rtt_avg_are_forgotten() {
        let mut a = fdd(PenaltyRule::Shares, &[100, 100]);
        a.touch(0, 0);
        a.touch(0, 1);
        a.penalize(0, 0); // both accrue 0.5; flow 0 (arriving) pays
        assert!((a.flows[1].penalty - 0.5).abs() < 1e-12);
        // 150 ms later only flow 0 has passed: flow 1 is not eligible and not charged.
        a.touch(150 * MS, 0);
        assert_eq!(a.penalize(150 * MS, 0), 0);
        assert!((a.flows[1].penalty - 0.5).abs() < 1e-12);
        // When flow 1 reappears its state starts afresh.
        a.flows[1].owed = [1, 0];
        a.touch(160 * MS, 1);
        assert_eq!(a.flows[1].penalty, 0.0);
        assert_eq!(a.owed(1), 0);
        assert_eq!(a.stats.cancelled, 1);
    }

    #[test]
    fn fig2_as_printed_recharges_the_last_victim() {
        // Equal RTTs: line 4 gives the last victim +1 at every decision and it pays 1, so the
        // arriving flow wins only when its own accrued penalty exceeds the victim's.
        let mut a = fdd(PenaltyRule::Fig2, &[100, 100, 100]);
        let v = script(&mut a, &[0, 1, 2, 1, 2, 1, 2]);
        // k=0: no previous drop, flow 0 +1 → victim 0 (pen 0).
        // k=1: flow 1 +1, last (0) +1 → tie 1 vs 1: arriving flow 1 wins (pen 0, flow 0 at 1).
        // k=2: flow 2 +1, last (1) +1 → 0:1, 1:1, 2:1 → arriving 2 (then 2:0).
        // k=3: flow 1 +1 → 2, last (2) +1 → 1 → victim 1 (1:1).
        // k=4: flow 2 +1 → 2, last (1) +1 → 2 → tie: arriving 2 (2:1).
        // k=5: flow 1 +1 → 3, last (2) +1 → 2 → victim 1 (1:2).
        // k=6: flow 2 +1 → 3, last (1) +1 → 3 → arriving 2 (2:2).
        assert_eq!(v, vec![0, 1, 2, 1, 2, 1, 2]);
        let p: Vec<f64> = a.flows.iter().map(|f| f.penalty).collect();
        assert_eq!(p, vec![1.0, 3.0, 2.0]);
        // Penalties grow by one per decision in total (two accruals, one payment).
        assert_eq!(p.iter().sum::<f64>(), 6.0);
    }

    #[test]
    fn fig2_keeps_charging_a_short_rtt_victim() {
        // RTTs 25 and 100 ms: RTT_avg = 62.5 ms, weights 2.5 and 0.625. Once the short-RTT flow
        // has been the victim, line 4 adds 2.5 to it at every decision and it pays 1: its
        // penalty grows by 1.5 per decision and it takes every drop, whoever triggers them.
        let mut a = fdd(PenaltyRule::Fig2, &[25, 100]);
        a.touch(0, 1);
        let v = script(&mut a, &[0, 1, 1, 1, 1]);
        assert_eq!(v, vec![0, 0, 0, 0, 0]);
        assert!((a.flows[0].penalty - (2.5 - 1.0 + 4.0 * 1.5)).abs() < 1e-12);
        assert!((a.flows[1].penalty - 4.0 * 0.625).abs() < 1e-12);
    }

    fn view(n: u64) -> QueueView {
        QueueView {
            len_pkts: n,
            len_bytes: n * 500,
            limit: Limit::Packets(100),
            len_by_prec: [n, 0, 0],
        }
    }

    #[test]
    fn a_deferred_drop_is_paid_by_the_victims_next_arrival() {
        let mut a = fdd(PenaltyRule::Shares, &[100, 100]);
        let mut rng = SimRng::derive(1, 1);
        // Hold the average above max_th: every arrival is a forced drop decision.
        a.red.est.avg = 80.0;
        a.red.est.idle = false;
        let p0 = PacketMeta::new(0, PacketKind::Data, 500, 0, 0);
        let p1 = PacketMeta::new(1, PacketKind::Data, 500, 0, 0);
        a.touch(0, 1);
        // Flow 0 arrives: shares 0.5/0.5, tie → arriving flow 0 dropped at once.
        assert_eq!(
            a.on_enqueue(MS, &p0, view(80), &mut rng),
            Verdict::ForcedDrop
        );
        // Flow 0 again: flow 1 now holds 1.0 > 0.5 → flow 1 owes; the arrival is admitted.
        assert_eq!(
            a.on_enqueue(2 * MS, &p0, view(80), &mut rng),
            Verdict::Enqueue
        );
        assert_eq!(a.owed(1), 1);
        // Flow 1's arrival triggers a decision (victim: flow 1 itself, tie at 0.5) and pays
        // one of its two owed drops.
        assert_eq!(
            a.on_enqueue(3 * MS, &p1, view(80), &mut rng),
            Verdict::ForcedDrop
        );
        assert_eq!(a.owed(1), 1);
        // A full buffer drops the arrival and pays the remaining owed drop.
        let full = QueueView {
            limit: Limit::Packets(80),
            ..view(80)
        };
        assert_eq!(a.on_enqueue(4 * MS, &p1, full, &mut rng), Verdict::Overflow);
        assert_eq!(a.owed(1), 0);
        assert_eq!(a.stats.decisions, 3);
        assert_eq!(a.stats.paid, 3);
    }

    #[test]
    fn below_min_th_fdd_red_is_transparent() {
        let mut a = fdd(PenaltyRule::Shares, &[100]);
        let mut rng = SimRng::derive(1, 1);
        let p = PacketMeta::new(0, PacketKind::Data, 500, 0, 0);
        for k in 0..1000 {
            assert_eq!(
                a.on_enqueue(k * MS, &p, view(10), &mut rng),
                Verdict::Enqueue
            );
        }
        assert_eq!(a.stats.decisions, 0);
    }

    #[test]
    fn estimator_adds_the_two_halves() {
        // Source → router: 40 ms; router → receiver and back: 30 ms; router → source: 40 ms.
        let mut e = RttEstimator::default();
        // data TSval 1000 seen at t = 40 ms; its ACK (TSval 5000, echo 1000) back at 70 ms.
        e.on_data(40 * MS, 1000, 0);
        assert_eq!(e.rtt(), None);
        e.on_ack(70 * MS, 5000, 1000);
        assert_eq!(e.down, Some(30.0 * MS as f64));
        assert_eq!(e.rtt(), None);
        // The source answers the ACK at 110 ms; the data echoing 5000 is seen at 150 ms.
        e.on_data(150 * MS, 2000, 5000);
        assert_eq!(e.up, Some(80.0 * MS as f64));
        assert_eq!(e.rtt(), Some(110.0 * MS as f64));
        // A second data echoing the same ACK gives no sample (the entry was consumed).
        e.on_data(151 * MS, 2001, 5000);
        assert_eq!(e.samples, 2);
        // Smoothing: a 50 ms downstream sample moves the half by 1/8 of the difference.
        e.on_ack(200 * MS, 6000, 2000);
        let d = 30.0 + 0.125 * (50.0 - 30.0);
        assert!((e.down.unwrap() - d * MS as f64).abs() < 1e-6);
    }

    #[test]
    fn estimator_feeds_the_weights() {
        let mut a = FddRed::new(params(), PenaltyRule::Shares, RttSource::Estimator);
        let mut rng = SimRng::derive(1, 1);
        // Flow 0: 20 ms RTT, flow 1: 80 ms, each as one down sample + one up sample.
        for (f, half) in [(0u32, 10u64), (1, 40)] {
            let mut d = PacketMeta::new(f, PacketKind::Data, 500, 0, 0);
            d.created_at = 7;
            a.on_enqueue(0, &d, view(0), &mut rng);
            let mut ack = PacketMeta::new(f, PacketKind::Ack, 40, 0, 0);
            ack.created_at = 9;
            ack.ts_echo = 7;
            a.on_reverse(half * MS, &ack);
            let mut d2 = PacketMeta::new(f, PacketKind::Data, 500, 1, 0);
            d2.created_at = 11;
            d2.ts_echo = 9;
            a.on_enqueue(2 * half * MS, &d2, view(0), &mut rng);
        }
        assert_eq!(a.rtt_of(0), Some(20.0 * MS as f64));
        assert_eq!(a.rtt_of(1), Some(80.0 * MS as f64));
        a.update_avg_rtt(80 * MS);
        assert!((a.weight(0) / a.weight(1) - 4.0).abs() < 1e-12);
    }

    /// Scenario 3 of the paper (RTTs 20-100 ms) with an fdd_red bottleneck.
    fn dumbbell(rtt_source: &str, delays: &str, limit: u32) -> crate::scenario::Scenario {
        let src = format!(
            r#"
name = "fdd"
duration = "30s"
[tcp]
packet_size = "500B"
window = 1000
[[node]]
name = "s{{i}}"
count = 5
[[node]]
name = "r1"
[[node]]
name = "r2"
[[node]]
name = "d{{i}}"
count = 5
[[link]]
name = "access{{i}}"
count = 5
a = "s{{i}}"
b = "r1"
bandwidth = "10Mbps"
delay = {delays}
queue = {{ type = "droptail", limit = "100pkts" }}
[[link]]
name = "bottleneck"
a = "r1"
b = "r2"
bandwidth = "1Mbps"
delay = "5ms"
queue_ab = {{ type = "fdd_red", limit = "{limit}pkts", min_th = 25, max_th = 75, max_p = 0.01, rtt_source = "{rtt_source}" }}
queue_ba = {{ type = "droptail", limit = "100pkts" }}
[[link]]
name = "exit{{i}}"
count = 5
a = "r2"
b = "d{{i}}"
bandwidth = "10Mbps"
delay = "1ms"
queue = {{ type = "droptail", limit = "100pkts" }}
[[flow]]
name = "ftp{{i}}"
count = 5
src = "s{{i}}"
dst = "d{{i}}"
start = "uniform(0s, 1s)"
"#
        );
        crate::scenario::Scenario::from_toml(&src, "fdd.toml").expect("valid")
    }

    const HETERO: &str = r#"["4ms", "14ms", "24ms", "34ms", "44ms"]"#;

    fn run(rtt_source: &str, delays: &str) -> FddRed {
        run_with(rtt_source, delays, 100)
    }

    fn run_with(rtt_source: &str, delays: &str, limit: u32) -> FddRed {
        let sc = dumbbell(rtt_source, delays, limit);
        let mut sim = crate::sim::Simulation::new(&sc, 1);
        sim.run();
        // link 5 is the bottleneck; direction a→b
        match sim.aqm(10) {
            crate::aqm::AnyAqm::FddRed(a) => (**a).clone(),
            other => panic!("expected fdd_red, got {other:?}"),
        }
    }

    #[test]
    fn in_a_simulation_the_oracle_gets_the_propagation_rtts() {
        let a = run("oracle", HETERO);
        let got: Vec<f64> = (0..5).map(|f| a.rtt_of(f).unwrap() / MS as f64).collect();
        assert_eq!(got, vec![20.0, 40.0, 60.0, 80.0, 100.0]);
        assert!(a.stats.decisions > 0);
        assert_eq!(
            a.stats.decisions,
            a.stats.immediate + a.stats.deferred,
            "{:?}",
            a.stats
        );
    }

    #[test]
    fn in_a_simulation_the_estimator_tracks_propagation_plus_queueing() {
        let a = run("estimator", HETERO);
        for f in 0..5u32 {
            let prop = 20.0 + 20.0 * f as f64;
            let est = a.rtt_of(f).expect("an estimate") / MS as f64;
            // Propagation + serialisation (4 ms of a 500-byte packet at 1 Mbps, 0.4 ms on each
            // 10 Mbps link) + the bottleneck queue (up to 100 packets, 400 ms).
            assert!(
                est > prop + 4.0 && est < prop + 4.0 + 400.0,
                "flow {f}: {est} vs {prop}"
            );
            assert!(a.flows[f as usize].est.samples > 100);
        }
        // The order of the RTTs is recovered (the queueing delay is common to all flows).
        let e: Vec<f64> = (0..5).map(|f| a.rtt_of(f).unwrap()).collect();
        assert!(e.windows(2).all(|w| w[0] < w[1]), "{e:?}");
    }

    #[test]
    fn in_a_simulation_the_oracle_window_forgets_bursty_flows() {
        // Equal RTTs: the configured RTT (100 ms) excludes the ~250 ms of queueing, so within
        // one RTT_avg only some flows pass; the others are forgotten between RED's sparse drop
        // decisions and every decision falls on the arriving flow, as under RED.
        let a = run("oracle", r#""44ms""#);
        assert!(a.stats.decisions > 10);
        assert_eq!(a.stats.deferred, 0, "{:?}", a.stats);
        // With the estimator's RTT_avg (propagation + queueing) the flows stay in the window.
        let e = run("estimator", r#""44ms""#);
        assert!(e.stats.deferred > e.stats.decisions / 2, "{:?}", e.stats);
    }

    #[test]
    fn with_a_large_buffer_many_deferred_drops_are_cancelled() {
        // B = 200: the slow-start burst pushes RED's average above max_th; every arrival is a
        // drop decision, many charged to flows that then fall silent (timeouts) and are
        // forgotten with their owed drops. Fewer drops are executed than RED decided.
        let a = run_with("estimator", r#""44ms""#, 200);
        assert!(a.stats.decisions > 200, "{:?}", a.stats);
        assert!(a.stats.cancelled * 5 > a.stats.decisions, "{:?}", a.stats);
        assert!(a.stats.paid + a.stats.cancelled <= a.stats.decisions);
        // B = 100: few decisions, almost all paid.
        let b = run_with("estimator", r#""44ms""#, 100);
        assert!(
            b.stats.cancelled * 10 < b.stats.decisions.max(10),
            "{:?}",
            b.stats
        );
    }
}
