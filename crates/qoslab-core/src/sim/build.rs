//! Building run-time components from the resolved scenario: queue disciplines, multi-queue
//! schedulers and traffic conditioners. Shared with the emulator's link daemon, so that both
//! drive the very same state machines. Every kind is built by its own configuration
//! ([`crate::aqm::registry`]): there is no fallback to a default algorithm.

use crate::aqm::registry::QdiscEnv;
use crate::aqm::{AnyAqm, Qdisc};
use crate::conditioner::{AnyMeter, Color, Meter, MeterSpec};
use crate::packet::PacketMeta;
use crate::rng::{stream, SimRng};
use crate::scenario::{Action, ConditionerConfig, QueueConfig, Scope};
use crate::units::SimTime;

/// The FIFO line's discipline of a resolved queue on a link of `bps` bit/s. A packet-holding
/// kind has none there ([`crate::aqm::NoLine`]): its queue is built by [`build_qdisc`].
pub fn build_aqm(qc: &QueueConfig, bps: u64) -> AnyAqm {
    qc.discipline.build(bps)
}

/// The packet-holding queue of a link direction whose discipline decides at dequeue (CoDel,
/// FQ-CoDel, PIE, a multi queue's scheduler); `None` for the kinds the FIFO line runs.
pub fn build_qdisc(qc: &QueueConfig, bps: u64, seed: u64, dir_id: u64) -> Option<Box<dyn Qdisc>> {
    qc.discipline.qdisc(&QdiscEnv {
        link_bps: bps,
        limit: qc.limit(),
        seed,
        dir_id,
    })
}

/// A traffic conditioner at run time (RFC 2475 classifier, meter, marker/dropper): its meters,
/// one per flow or one for the aggregate, built on the first packet they see.
pub struct Conditioner {
    pub cfg: ConditionerConfig,
    pub meters: Vec<Option<AnyMeter>>,
    pub rng: SimRng,
    /// Packets coloured green, yellow, red.
    pub colored: [u64; 3],
}

impl Conditioner {
    /// Conditioner number `index` of a scenario with `n_flows` flows, with its own random
    /// stream of run `seed`.
    pub fn new(cfg: &ConditionerConfig, index: usize, n_flows: usize, seed: u64) -> Self {
        let n = match cfg.scope {
            Scope::Aggregate => 1,
            Scope::PerFlow => n_flows,
        };
        Conditioner {
            cfg: cfg.clone(),
            meters: vec![None; n],
            rng: SimRng::derive(seed, stream::MARKER | index as u64),
            colored: [0; 3],
        }
    }

    /// The meter's parameters.
    pub fn spec(&self) -> &MeterSpec {
        &self.cfg.meter.spec
    }

    /// Classifies packet `p` (travelling from node `src` to node `dst`) and, when it matches,
    /// meters it and returns its colour and the action for that colour; `None` when the
    /// classifier does not select it.
    #[inline]
    pub fn apply(
        &mut self,
        now: SimTime,
        p: &PacketMeta,
        src: usize,
        dst: usize,
    ) -> Option<(Color, Action)> {
        if !self.cfg.classifier.selects(p.flow, p.dscp, src, dst) {
            return None;
        }
        let slot = match self.cfg.scope {
            Scope::Aggregate => 0,
            Scope::PerFlow => p.flow as usize,
        };
        let spec = &self.cfg.meter.spec;
        let meter = self.meters[slot].get_or_insert_with(|| {
            spec.build()
                .expect("validated when the scenario was resolved")
        });
        let color = meter.meter_packet(now, p, pre_color(p.dscp), &mut self.rng);
        self.colored[color as usize] += 1;
        let action = match color {
            Color::Green => self.cfg.green,
            Color::Yellow => self.cfg.yellow,
            Color::Red => self.cfg.red,
        };
        Some((color, action))
    }
}

/// The colour a packet carries into a colour-aware meter: AFx2 yellow, AFx3 red, else green.
pub fn pre_color(dscp: u8) -> Color {
    match dscp {
        12 | 20 | 28 | 36 => Color::Yellow,
        14 | 22 | 30 | 38 => Color::Red,
        _ => Color::Green,
    }
}
