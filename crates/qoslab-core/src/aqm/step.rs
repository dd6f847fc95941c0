//! Step marking at an instantaneous threshold: the switch side of DCTCP (RFC 8257 §3.1;
//! Alizadeh et al., SIGCOMM 2010). An ECN-capable packet arriving while more than `threshold`
//! packets (or bytes) wait is marked Congestion Experienced; nothing is dropped early. Packets
//! that are not ECN-capable are only tail dropped at the buffer limit, as with DCTCP's
//! recommended switch configuration where non-ECT traffic is not subject to the marking
//! threshold.

use super::registry::{LineDiscipline, Ns2Export, QueueDiscipline};
use super::{Aqm, QueueView, Verdict};
use crate::packet::PacketMeta;
use crate::params::typed::{Decl, QueueLimit};
use crate::params::{key_error, KeyError, Param, ParamKind, Table, LIMIT};
use crate::rng::SimRng;
use crate::units::{Limit, SimTime};

const THRESHOLD: Decl<QueueLimit> = Decl::new(
    "threshold",
    ParamKind::Limit,
    "required",
    "K: mark ECN-capable arrivals while more than this waits, in packets (\"65pkts\") or \
     bytes (\"90KB\"); DCTCP's guideline is K > C·RTT/7.",
);

/// The step queue's configuration.
#[derive(Debug, Clone, Copy)]
pub struct StepConfig {
    pub threshold: Limit,
}

impl QueueDiscipline for StepConfig {
    const ALWAYS_MARKS: bool = true;
    const DOC: &'static str = "Step marking (DCTCP's switch, RFC 8257 §3.1): ECN-capable arrivals are marked while more than threshold waits; tail drop at the limit.";
    const NS3: Result<&'static str, &'static str> = Ok("ns3::QoslabStepQueueDisc");
    const PARAMS: &'static [Param] = &[LIMIT, THRESHOLD.param];
    fn from_table(t: &Table, limit: Limit) -> Result<Self, KeyError> {
        let threshold = t.get(&THRESHOLD)?;
        let below = match (threshold, limit) {
            (Limit::Packets(k), Limit::Packets(l)) => k < l,
            (Limit::Bytes(k), Limit::Bytes(l)) => k < l,
            _ => {
                return Err(key_error(
                    t.key("threshold"),
                    format!(
                        "threshold ({threshold}) and limit ({limit}) must both be in packets or \
                         both in bytes"
                    ),
                ))
            }
        };
        if !below {
            return Err(key_error(
                t.key("threshold"),
                format!("threshold ({threshold}) must be below the limit ({limit})"),
            ));
        }
        Ok(StepConfig { threshold })
    }
    fn ns2(&self, _limit: Limit) -> Ns2Export {
        Ns2Export::Refused(
            "ns-2.35's RED cannot mark at an instantaneous threshold without also dropping \
             non-ECN packets early (use the ns-3 cross-check)"
                .into(),
        )
    }
    fn emulable(&self) -> bool {
        // marks or drops at enqueue from the queue length, as in the simulator
        true
    }
}

impl LineDiscipline for StepConfig {
    type Runtime = Step;
    fn build(&self, _link_bps: u64) -> Step {
        Step {
            threshold: self.threshold,
        }
    }
}

/// The step-marking discipline.
#[derive(Debug, Clone)]
pub struct Step {
    threshold: Limit,
}

impl Aqm for Step {
    fn on_enqueue(
        &mut self,
        _now: SimTime,
        pkt: &PacketMeta,
        q: QueueView,
        _rng: &mut SimRng,
    ) -> Verdict {
        let above = match self.threshold {
            Limit::Packets(k) => q.len_pkts > k,
            Limit::Bytes(k) => q.len_bytes > k,
        };
        if above && pkt.ecn != 0 {
            Verdict::Mark
        } else {
            Verdict::Enqueue
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::PacketKind;

    #[test]
    fn marks_ect_arrivals_only_above_the_threshold() {
        let mut s = Step {
            threshold: Limit::Packets(3),
        };
        let mut rng = SimRng::derive(0, 0);
        let view = |n| QueueView {
            len_pkts: n,
            len_bytes: n * 1000,
            limit: Limit::Packets(10),
            len_by_prec: [0; 3],
        };
        let mut ect = PacketMeta::new(0, PacketKind::Data, 1000, 0, 0);
        ect.ecn = 2;
        let not_ect = PacketMeta::new(0, PacketKind::Data, 1000, 0, 0);
        let marks: Vec<bool> = (0..6)
            .map(|n| s.on_enqueue(0, &ect, view(n), &mut rng) == Verdict::Mark)
            .collect();
        assert_eq!(marks, [false, false, false, false, true, true]);
        assert!((0..10).all(|n| s.on_enqueue(0, &not_ect, view(n), &mut rng) == Verdict::Enqueue));
        let mut bytes = Step {
            threshold: Limit::Bytes(2500),
        };
        assert_eq!(
            bytes.on_enqueue(0, &ect, view(2), &mut rng),
            Verdict::Enqueue
        );
        assert_eq!(bytes.on_enqueue(0, &ect, view(3), &mut rng), Verdict::Mark);
    }
}
