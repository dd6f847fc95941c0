//! PIE, "Proportional Integral controller Enhanced" (RFC 8033; DOCSIS 3.1's AQM).
//!
//! An arriving packet is dropped at random with probability `drop_prob`; every `t_update`
//! the controller moves `drop_prob` by α·(qdelay − target) + β·(qdelay − qdelay_old), scaled
//! down while `drop_prob` is small (RFC 8033 §4.2's table), the increase capped at 2 % above
//! 10 %, and decayed by 2 % per update while the queue stays empty. A burst allowance
//! (`max_burst`) lets a new burst through unharmed; the de-randomisation of RFC 8033 §5.1
//! (`accu_prob`) spaces drops more evenly than independent coin flips; the work-conserving
//! safeguard never drops while the delay is under half the target and `drop_prob` under 20 %,
//! or while at most two packets' worth of bytes wait. With `ecn`, an ECN-capable packet is
//! marked instead while `drop_prob` ≤ `mark_ecn_th` (RFC 8033 §5.1).
//!
//! The queueing delay is measured with timestamps, as Linux's default: the sojourn time of the
//! packet that last left (0 once the queue is empty). PIE holds its packets so that the delay
//! is read at dequeue; the periodic update runs in order at its own times, caught up at each
//! enqueue and dequeue (nothing that the update reads changes in between). Left out: the
//! 250 ms "p += 2 %" rule of Linux (not in RFC 8033), byte mode, and the rate estimator.

use super::codel::{fits, Fifo, Held};
use super::registry::{HeldDiscipline, Ns2Export, QdiscEnv, QueueDiscipline};
use super::{Dequeued, Dropped, Gauge, Qdisc, QueueSample, Verdict};
use crate::packet::{PacketArena, PacketId};
use crate::params::typed::{Bytes, Decl, Duration};
use crate::params::{at_least, open_closed, KeyError, Param, ParamKind, Table, LIMIT};
use crate::rng::SimRng;
use crate::units::{Limit, SimTime};

const TARGET: Decl<Duration> = Decl::new(
    "target",
    ParamKind::Duration,
    "15ms",
    "QDELAY_REF: the target queueing delay.",
)
.positive();
const T_UPDATE: Decl<Duration> = Decl::new(
    "t_update",
    ParamKind::Duration,
    "15ms",
    "T_UPDATE: how often drop_prob is updated (at least 1us: it paces the controller).",
)
.at_least(1_000, "1us");
const ALPHA: Decl<f64> = Decl::new(
    "alpha",
    at_least(0.0),
    "0.125",
    "α, per second: the weight of the delay's distance from target.",
);
const BETA: Decl<f64> = Decl::new(
    "beta",
    at_least(0.0),
    "1.25",
    "β, per second: the weight of the delay's change since the last update.",
);
const MAX_BURST: Decl<Duration> = Decl::new(
    "max_burst",
    ParamKind::Duration,
    "150ms",
    "MAX_BURST: the burst allowance after an idle period.",
);
const ECN: Decl<bool> = Decl::new(
    "ecn",
    ParamKind::Bool,
    "false",
    "Mark ECN-capable packets instead of dropping them while drop_prob ≤ mark_ecn_th.",
);
const MARK_ECN_TH: Decl<f64> = Decl::new(
    "mark_ecn_th",
    open_closed(0.0, 1.0),
    "0.1",
    "Above this drop probability ECN-capable packets are dropped too (RFC 8033 §5.1).",
);
const DERANDOMIZE: Decl<bool> = Decl::new(
    "derandomize",
    ParamKind::Bool,
    "true",
    "De-randomise drops with accu_prob (RFC 8033 §5.1); false: independent drops with probability drop_prob.",
);
const MEAN_PKT_SIZE: Decl<Bytes> = Decl::new(
    "mean_pkt_size",
    ParamKind::Bytes,
    "1500B",
    "MEAN_PKTSIZE: no early drop while at most two such packets' bytes wait.",
);

const PARAMS: &[Param] = &[
    LIMIT,
    TARGET.param,
    T_UPDATE.param,
    ALPHA.param,
    BETA.param,
    MAX_BURST.param,
    ECN.param,
    MARK_ECN_TH.param,
    DERANDOMIZE.param,
    MEAN_PKT_SIZE.param,
];

/// PIE's configuration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PieConfig {
    pub target: SimTime,
    pub t_update: SimTime,
    pub alpha: f64,
    pub beta: f64,
    pub max_burst: SimTime,
    pub ecn: bool,
    pub mark_ecn_th: f64,
    pub derandomize: bool,
    pub mean_pkt_size: u64,
}

impl QueueDiscipline for PieConfig {
    const DOC: &'static str = "PIE (RFC 8033): random early drop with a probability a PI controller sets from the queueing delay every t_update; burst allowance and de-randomised drops.";
    const NS3: Result<&'static str, &'static str> = Ok("ns3::PieQueueDisc");
    const PARAMS: &'static [Param] = PARAMS;
    const GAUGES: &'static [Gauge] = &[Gauge {
        name: "drop_prob",
        unit: "fraction 0–1",
        doc: "PIE's drop probability drop_prob (RFC 8033) at the sample time, after the updates due by then (NaN for other kinds).",
    }];
    fn from_table(t: &Table, _limit: Limit) -> Result<Self, KeyError> {
        let c = PieConfig {
            target: t.get(&TARGET)?,
            t_update: t.get(&T_UPDATE)?,
            alpha: t.get(&ALPHA)?,
            beta: t.get(&BETA)?,
            max_burst: t.get(&MAX_BURST)?,
            ecn: t.get(&ECN)?,
            mark_ecn_th: t.get(&MARK_ECN_TH)?,
            derandomize: t.get(&DERANDOMIZE)?,
            mean_pkt_size: t.get(&MEAN_PKT_SIZE)?,
        };
        Ok(c)
    }
    fn ns2(&self, _limit: Limit) -> Ns2Export {
        Ns2Export::Refused("ns-2.35 has no PIE (use the ns-3 cross-check)".into())
    }
    fn emulable(&self) -> bool {
        // the link daemon drives packet-holding queues through the same enqueue and dequeue
        // calls as the simulator, and drops the kernel's packets they drop at dequeue
        true
    }
}

impl HeldDiscipline for PieConfig {
    fn qdisc(&self, env: &QdiscEnv) -> Box<dyn Qdisc> {
        Box::new(Pie::new(*self, env.limit, env.rng()))
    }
}

/// The drop-probability update of RFC 8033 §4.2, from the current and previous queueing
/// delays (seconds): the new `drop_prob`.
pub fn update_drop_prob(c: &PieConfig, drop_prob: f64, qdelay: f64, qdelay_old: f64) -> f64 {
    let target = c.target as f64 / 1e9;
    let mut p = c.alpha * (qdelay - target) + c.beta * (qdelay - qdelay_old);
    // Auto-tuning: small probabilities move in small steps.
    p /= match drop_prob {
        x if x < 0.000_001 => 2048.0,
        x if x < 0.000_01 => 512.0,
        x if x < 0.000_1 => 128.0,
        x if x < 0.001 => 32.0,
        x if x < 0.01 => 8.0,
        x if x < 0.1 => 2.0,
        _ => 1.0,
    };
    if drop_prob >= 0.1 && p > 0.02 {
        p = 0.02;
    }
    let mut next = drop_prob + p;
    if qdelay == 0.0 && qdelay_old == 0.0 {
        next *= 0.98;
    }
    next.clamp(0.0, 1.0)
}

/// The PIE discipline.
#[derive(Debug, Clone)]
pub struct Pie {
    cfg: PieConfig,
    limit: Limit,
    fifo: Fifo,
    rng: SimRng,
    pub drop_prob: f64,
    /// Queueing delay of the last departure, s (0 once the queue is empty).
    pub qdelay: f64,
    pub qdelay_old: f64,
    pub burst_allowance: SimTime,
    accu_prob: f64,
    /// When the next update is due.
    next_update: SimTime,
}

impl Pie {
    pub fn new(cfg: PieConfig, limit: Limit, rng: SimRng) -> Self {
        Pie {
            cfg,
            limit,
            fifo: Fifo::default(),
            rng,
            drop_prob: 0.0,
            qdelay: 0.0,
            qdelay_old: 0.0,
            burst_allowance: cfg.max_burst,
            accu_prob: 0.0,
            next_update: cfg.t_update,
        }
    }

    /// Runs the periodic updates due by `now`, in order.
    pub fn catch_up(&mut self, now: SimTime) {
        while self.next_update <= now {
            self.update();
            self.next_update += self.cfg.t_update;
            if self.next_update <= now
                && self.drop_prob == 0.0
                && self.qdelay == 0.0
                && self.qdelay_old == 0.0
                && self.burst_allowance == self.cfg.max_burst
            {
                // Idle and settled: every further update until `now` leaves drop_prob at 0
                // and the burst allowance full.
                let skipped = (now - self.next_update) / self.cfg.t_update + 1;
                self.next_update += skipped * self.cfg.t_update;
            }
        }
    }

    /// `drop_prob` at `now`: after the periodic updates due by then, which [`Pie::catch_up`]
    /// runs only at the next arrival or departure (the time series samples in between).
    pub fn drop_prob_at(&self, now: SimTime) -> f64 {
        let mut controller = Pie {
            cfg: self.cfg,
            limit: self.limit,
            fifo: Fifo::default(),
            rng: self.rng.clone(),
            drop_prob: self.drop_prob,
            qdelay: self.qdelay,
            qdelay_old: self.qdelay_old,
            burst_allowance: self.burst_allowance,
            accu_prob: self.accu_prob,
            next_update: self.next_update,
        };
        controller.catch_up(now);
        controller.drop_prob
    }

    /// One update (RFC 8033 §4.2–4.3).
    fn update(&mut self) {
        let half = self.cfg.target as f64 / 2e9;
        self.drop_prob = update_drop_prob(&self.cfg, self.drop_prob, self.qdelay, self.qdelay_old);
        self.burst_allowance = self.burst_allowance.saturating_sub(self.cfg.t_update);
        if self.drop_prob == 0.0 && self.qdelay < half && self.qdelay_old < half {
            self.burst_allowance = self.cfg.max_burst;
        }
        self.qdelay_old = self.qdelay;
    }

    /// RFC 8033 §5.1 `drop_early`, with the de-randomisation.
    fn drop_early(&mut self) -> bool {
        let half = self.cfg.target as f64 / 2e9;
        if (self.qdelay_old < half && self.drop_prob < 0.2)
            || self.fifo.bytes <= 2 * self.cfg.mean_pkt_size
        {
            return false;
        }
        if !self.cfg.derandomize {
            return self.rng.uniform() < self.drop_prob;
        }
        if self.drop_prob == 0.0 {
            self.accu_prob = 0.0;
        }
        self.accu_prob += self.drop_prob;
        if self.accu_prob < 0.85 {
            return false;
        }
        if self.accu_prob >= 8.5 {
            self.accu_prob = 0.0;
            return true;
        }
        if self.rng.uniform() < self.drop_prob {
            self.accu_prob = 0.0;
            return true;
        }
        false
    }
}

impl Qdisc for Pie {
    fn enqueue(
        &mut self,
        now: SimTime,
        id: PacketId,
        arena: &mut PacketArena,
        _dropped: &mut Dropped,
    ) -> Verdict {
        self.catch_up(now);
        let pkt = arena.get(id);
        let (size, ect) = (pkt.size, pkt.ecn != 0);
        if !fits(self.limit, self.fifo.len(), self.fifo.bytes, size) {
            return Verdict::Overflow;
        }
        let mut verdict = Verdict::Enqueue;
        if self.burst_allowance == 0 && self.drop_early() {
            if self.cfg.ecn && ect && self.drop_prob <= self.cfg.mark_ecn_th {
                verdict = Verdict::Mark;
                arena.get_mut(id).ecn = 3;
            } else {
                return Verdict::EarlyDrop;
            }
        }
        self.fifo.push(Held {
            id,
            size,
            enqueued_at: now,
        });
        verdict
    }

    fn dequeue(
        &mut self,
        now: SimTime,
        _arena: &mut PacketArena,
        _dropped: &mut Dropped,
    ) -> Option<Dequeued> {
        self.catch_up(now);
        let h = self.fifo.pop();
        self.qdelay = match h {
            Some(h) if !self.fifo.is_empty() => (now - h.enqueued_at) as f64 / 1e9,
            _ => 0.0,
        };
        h.map(|h| Dequeued {
            id: h.id,
            size: h.size,
            marked: false,
        })
    }

    fn waiting(&self) -> usize {
        self.fifo.len()
    }

    fn gauges(&self, _i: usize, now: SimTime, out: &mut dyn FnMut(&'static str, f64)) {
        out("drop_prob", self.drop_prob_at(now));
    }

    fn waiting_bytes(&self) -> u64 {
        self.fifo.bytes
    }

    fn sample(&self, _i: usize) -> QueueSample {
        self.fifo.sample()
    }

    fn heap_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.fifo.heap_bytes()
    }
}

#[cfg(test)]
#[path = "pie_tests.rs"]
mod tests;
