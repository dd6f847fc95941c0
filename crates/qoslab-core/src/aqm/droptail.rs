//! DropTail: accept while the buffer has room ("tail dropper", RFC 3290).

use super::{Aqm, QueueView, Verdict};
use crate::packet::PacketMeta;
use crate::rng::SimRng;
use crate::units::SimTime;

#[derive(Debug, Clone, Default)]
pub struct DropTail;

impl Aqm for DropTail {
    fn on_enqueue(
        &mut self,
        _now: SimTime,
        pkt: &PacketMeta,
        q: QueueView,
        _rng: &mut SimRng,
    ) -> Verdict {
        if q.full_for(pkt.size as u64) {
            Verdict::Overflow
        } else {
            Verdict::Enqueue
        }
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
        assert_eq!(
            d.on_enqueue(0, &p, view(3, 1500), &mut rng),
            Verdict::Overflow
        );
        let bytes = QueueView {
            len_pkts: 2,
            len_bytes: 1000,
            limit: Limit::Bytes(1499),
            len_by_prec: [0; 3],
        };
        assert_eq!(d.on_enqueue(0, &p, bytes, &mut rng), Verdict::Overflow);
    }
}
