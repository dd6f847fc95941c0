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
//! The victim ([`VictimRule`]): the greatest penalty (Fig. 2 line 5, the default), or, as a
//! control that keeps everything but FDD-RED's choice, a flow drawn uniformly from those seen
//! during the last `RTT_avg` (`victim = "random"`): RED's decisions, the deferred payment and
//! the penalties' bookkeeping are unchanged, only *whose* drop it is no longer follows the FDI.
//!
//! Per-flow RTT ([`RttSource`]): the scenario's propagation RTTs (oracle), or an online
//! estimator at the router ([`RttEstimator`]) that matches TCP timestamps (RFC 7323 TSval /
//! TSecr) in both directions, as passive monitors such as pping do: downstream half = data
//! packet seen → the ACK echoing its TSval seen on the reverse direction; upstream half = ACK
//! seen → the data packet echoing the ACK's TSval. `RTT_i` = smoothed downstream + smoothed
//! upstream half (gain 1/8 each, like TCP's SRTT). Only router clock differences are used.

use super::red::{
    Red, RedConfig, RedParams, GENTLE, MAX_P, MAX_TH, MEAN_PKT_SIZE, MIN_TH, WAIT, W_Q,
};
use super::registry::{LineDiscipline, Ns2Export, QueueDiscipline};
use super::{Aqm, QueueView, Verdict};
use crate::packet::{PacketKind, PacketMeta};
use crate::params::typed::{Decl, Word};
use crate::params::{key_error, KeyError, Param, ParamKind, Table, LIMIT};
use crate::rng::SimRng;
use crate::units::{Limit, SimTime};

/// FDD-RED's configuration: RED's parameters, the penalty rule and where RTTs come from.
#[derive(Debug, Clone)]
pub struct FddRedConfig {
    pub red: RedConfig,
    pub penalty: PenaltyRule,
    pub rtt_source: RttSource,
    pub victim: VictimRule,
}

const RTT_SOURCE: Decl<Word> = Decl::new(
    "rtt_source",
    ParamKind::Choice {
        choices: &["estimator", "oracle"],
    },
    "estimator",
    "Per-flow RTTs from the router's TCP-timestamp estimator, or the configured path RTTs.",
);

const PENALTY: Decl<Word> = Decl::new(
    "penalty",
    ParamKind::Choice {
        choices: &["shares", "fig2"],
    },
    "shares",
    "How drop decisions accrue to the flows' penalties: by shares, or Fig. 2 as printed.",
);

const VICTIM: Decl<Word> = Decl::new(
    "victim",
    ParamKind::Choice {
        choices: &["penalty", "random"],
    },
    "penalty",
    "Whose drop it is: the flow with the greatest penalty (FDD-RED), or a flow drawn uniformly from those seen during the last RTT_avg (a control with FDD-RED's choice disabled).",
);

impl QueueDiscipline for FddRedConfig {
    const AVERAGES: crate::aqm::registry::Averages = crate::aqm::registry::Averages {
        one: Some("FDD-RED's average queue"),
        by_mode: &[],
    };
    const DOC: &'static str = "FDD-RED (Hashemi et al.): RED decides when to drop, a per-flow penalty from the Fair Dropping Index decides whose packet (deferred victim drops).";
    const NS3: Result<&'static str, &'static str> = Err("FDD-RED has no ns-3 queue disc");
    const PARAMS: &'static [Param] = &[
        LIMIT,
        MIN_TH.param,
        MAX_TH.param,
        MAX_P.param,
        W_Q.param,
        GENTLE.param,
        WAIT.param,
        MEAN_PKT_SIZE.param,
        RTT_SOURCE.param,
        PENALTY.param,
        VICTIM.param,
    ];
    fn from_table(t: &Table, limit: Limit) -> Result<Self, KeyError> {
        if let Limit::Bytes(_) = limit {
            return Err(key_error(
                t.key("limit"),
                "an fdd_red queue counts packets: give the limit in packets (e.g. \"100pkts\")",
            ));
        }
        let red = RedConfig::read(t)?;
        let penalty = match t.get(&PENALTY)? {
            "fig2" => PenaltyRule::Fig2,
            _ => PenaltyRule::Shares,
        };
        let rtt_source = match t.get(&RTT_SOURCE)? {
            "oracle" => RttSource::Oracle,
            _ => RttSource::Estimator,
        };
        let victim = match t.get(&VICTIM)? {
            "random" => VictimRule::Random,
            _ => VictimRule::Penalty,
        };
        Ok(FddRedConfig {
            red,
            penalty,
            rtt_source,
            victim,
        })
    }
    fn ns2(&self, _limit: Limit) -> Ns2Export {
        Ns2Export::Refused(
            "an fdd_red queue (FDD-RED, Hashemi et al.) cannot be exported: ns-2.35 has no \
             FDD-RED (the paper's authors extended ns-2's RED module themselves); run it in qoslab, \
             or use type = \"red\" for the ns-2 baseline"
                .into(),
        )
    }
    fn emulable(&self) -> bool {
        false
    }
}

impl LineDiscipline for FddRedConfig {
    type Runtime = Box<FddRed>;
    fn build(&self, link_bps: u64) -> Box<FddRed> {
        let mut q = FddRed::new(self.red.params(link_bps), self.penalty, self.rtt_source);
        q.victim_rule = self.victim;
        Box::new(q)
    }
}

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

/// Whose drop a RED drop decision becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum VictimRule {
    /// The flow with the greatest penalty (Fig. 2 line 5).
    #[default]
    Penalty,
    /// A flow drawn uniformly from those seen during the last `RTT_avg` (the arriving flow
    /// included): FDD-RED's choice disabled, everything else kept.
    Random,
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
    pub victim_rule: VictimRule,
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
            victim_rule: VictimRule::Penalty,
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
    /// `flow` and returns the victim flow (`rng` is drawn only with [`VictimRule::Random`]).
    pub fn penalize(&mut self, now: SimTime, flow: u32, rng: &mut SimRng) -> u32 {
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
        let victim = match self.victim_rule {
            VictimRule::Penalty => self.greatest_penalty(now, flow),
            VictimRule::Random => self.random_active(now, flow, rng),
        };
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

    /// Fig. 2 line 5: the greatest penalty among the flows seen during the last `RTT_avg`;
    /// ties go to the arriving `flow`, then to the lowest flow id.
    fn greatest_penalty(&self, now: SimTime, flow: u32) -> u32 {
        let mut victim = flow;
        let mut best = self.flows[flow as usize].penalty;
        for (i, f) in self.flows.iter().enumerate() {
            if i as u32 != flow && self.active(now, f) && f.penalty > best {
                best = f.penalty;
                victim = i as u32;
            }
        }
        victim
    }

    /// A flow drawn uniformly from the arriving `flow` and the others seen during the last
    /// `RTT_avg`.
    fn random_active(&self, now: SimTime, flow: u32, rng: &mut SimRng) -> u32 {
        let eligible = |i: usize, f: &FlowState| i as u32 == flow || self.active(now, f);
        let n = self
            .flows
            .iter()
            .enumerate()
            .filter(|&(i, f)| eligible(i, f))
            .count();
        let k = ((rng.uniform() * n as f64) as usize).min(n - 1);
        self.flows
            .iter()
            .enumerate()
            .filter(|&(i, f)| eligible(i, f))
            .nth(k)
            .map_or(flow, |(i, _)| i as u32)
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
        // FDD-RED chooses its victim knowing whether the buffer is full, so it applies the
        // host's buffer check (`aqm::admit`) to RED's decision itself.
        let mut v = self.red.on_enqueue(now, pkt, q, rng);
        if q.full_for(pkt.size as u64) {
            self.red.on_overflow(now, pkt, v);
            v = Verdict::Overflow;
        }
        match v {
            Verdict::Overflow => {
                // The buffer is full: the arrival is lost whatever FDD-RED would choose; it pays
                // an owed drop if its flow has one.
                let _ = self.pay(flow);
                return Verdict::Overflow;
            }
            Verdict::EarlyDrop | Verdict::ForcedDrop | Verdict::Mark => {
                let victim = self.penalize(now, flow, rng);
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
mod tests;
