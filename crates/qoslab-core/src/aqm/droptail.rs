//! DropTail: accept while the buffer has room ("tail dropper", RFC 3290).

use super::registry::{LineDiscipline, Ns2Export, Ns2Value, QueueDiscipline};
use super::{Aqm, QueueView, Verdict};
use crate::packet::PacketMeta;
use crate::params::{KeyError, Param, Table, LIMIT};
use crate::rng::SimRng;
use crate::units::{Limit, SimTime};

#[derive(Debug, Clone, Default)]
pub struct DropTail;

/// DropTail's configuration: only the buffer limit, which the host keeps.
#[derive(Debug, Clone, Copy)]
pub struct DropTailConfig;

impl QueueDiscipline for DropTailConfig {
    const DOC: &'static str = "Tail drop: a packet that does not fit in the buffer is dropped.";
    const NS3: Result<&'static str, &'static str> = Ok("ns3::FifoQueueDisc");
    const PARAMS: &'static [Param] = &[LIMIT];
    fn from_table(_t: &Table, _limit: Limit) -> Result<Self, KeyError> {
        Ok(DropTailConfig)
    }
    /// ns-2's DropTail drops an arrival when the queue *including the packet being sent*
    /// holds `limit_`, so the limit is one more than qoslab's; a byte limit is counted in
    /// 1-byte "packets".
    fn ns2(&self, limit: Limit) -> Ns2Export {
        let (in_bytes, limit) = match limit {
            Limit::Bytes(b) => (true, b + 1),
            Limit::Packets(p) => (false, p + 1),
        };
        Ns2Export::Queue {
            class: "DropTail",
            settings: vec![
                (
                    "queue_in_bytes_",
                    Ns2Value::Str(if in_bytes { "true" } else { "false" }),
                ),
                ("mean_pktsize_", Ns2Value::Str("1")),
                ("limit_", Ns2Value::Int(limit)),
                ("drop_front_", Ns2Value::Str("false")),
                ("summarystats_", Ns2Value::Str("false")),
            ],
            early_drops: false,
            ecn: false,
        }
    }
    fn emulable(&self) -> bool {
        // decides at enqueue from the queue length, as in the simulator
        true
    }
}

impl LineDiscipline for DropTailConfig {
    type Runtime = DropTail;
    fn build(&self, _link_bps: u64) -> DropTail {
        DropTail
    }
}

impl Aqm for DropTail {
    fn on_enqueue(
        &mut self,
        _now: SimTime,
        _pkt: &PacketMeta,
        _q: QueueView,
        _rng: &mut SimRng,
    ) -> Verdict {
        // Only the buffer drops: the host's check (`aqm::admit`).
        Verdict::Enqueue
    }
    /// Only the buffer drops: the host's check alone decides.
    fn wants_enqueue(&self) -> bool {
        false
    }
    /// Idle periods do not matter to a tail drop: the host need not watch for them.
    fn wants_idle(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::PacketKind;
    use crate::units::Limit;

    #[test]
    fn drops_only_when_full() {
        let mut d = DropTail;
        let mut rng = SimRng::derive(1, 1);
        let p = PacketMeta::new(0, PacketKind::Data, 500, 0, 0);
        let view = |n, b| QueueView {
            len_pkts: n,
            len_bytes: b,
            limit: Limit::Packets(3),
            len_by_prec: [0; 3],
        };
        assert_eq!(
            d.on_enqueue(0, &p, view(2, 1000), &mut rng),
            Verdict::Enqueue
        );
        // The buffer check is the host's (`aqm::admit`), the same for every discipline.
        assert_eq!(
            crate::aqm::admit(&mut d, 0, &p, view(3, 1500), &mut rng),
            Verdict::Overflow
        );
        let bytes = QueueView {
            len_pkts: 2,
            len_bytes: 1000,
            limit: Limit::Bytes(1499),
            len_by_prec: [0; 3],
        };
        assert_eq!(
            crate::aqm::admit(&mut d, 0, &p, bytes, &mut rng),
            Verdict::Overflow
        );
    }

    /// A tail drop does not judge arrivals (`wants_enqueue` false), so the host's shortcut,
    /// the buffer check alone, gives the full admission's verdict for every queue state.
    #[test]
    fn the_buffer_check_alone_is_a_tail_drops_admission() {
        let mut d = DropTail;
        assert!(!d.wants_enqueue());
        let mut rng = SimRng::derive(0, 0);
        let p = PacketMeta::new(0, PacketKind::Data, 500, 0, 0);
        for limit in [Limit::Packets(3), Limit::Bytes(1499), Limit::Bytes(1500)] {
            for n in 0..5u64 {
                let q = QueueView {
                    len_pkts: n,
                    len_bytes: n * 500,
                    limit,
                    len_by_prec: [0; 3],
                };
                assert_eq!(
                    crate::aqm::admit_by_buffer(&p, q),
                    crate::aqm::admit(&mut d, 0, &p, q, &mut rng),
                    "{limit:?}, {n} waiting"
                );
            }
        }
    }
}
