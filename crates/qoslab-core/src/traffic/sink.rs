//! TCP receiver (ns-2 `TCPSink` / `TCPSink/DelAck`): acknowledges the highest in-order
//! sequence number received. Out-of-order segments are remembered in a ring of flags, so a
//! retransmission that fills a hole advances the cumulative ACK past everything behind it.

use std::collections::VecDeque;

#[derive(Debug, Clone, Default)]
pub struct TcpSink {
    /// Next in-order sequence number expected.
    pub next: u64,
    /// received[k] is true when segment next + k has arrived (k >= 1 only, index 0 unused).
    ooo: VecDeque<bool>,
    /// Delayed ACK: an in-order segment is waiting to be acknowledged.
    pub pending: bool,
    pub delayed: bool,
    /// Unique segments delivered in order (goodput).
    pub goodput_pkts: u64,
    /// ECN (RFC 3168 §6.1.3, ns-2 `ecn_unacked`): CE was seen and no CWR since.
    ecn_unacked: bool,
    /// ECN flags of the segments this ACK will cover (the held segment of a delayed ACK and
    /// the current one): bits [`SEEN_ECT`], [`SEEN_CE`], [`SEEN_CWR`], [`SEEN_NEGOTIATION`].
    seen: u8,
}

const SEEN_ECT: u8 = 1;
const SEEN_CE: u8 = 2;
const SEEN_CWR: u8 = 4;
const SEEN_NEGOTIATION: u8 = 8;

/// What the sink does after a segment arrives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SinkAction {
    /// Send an ACK now for the cumulative sequence number (`next - 1`, may be -1 → None).
    AckNow,
    /// Hold the ACK and arm the delayed-ACK timer.
    Delay,
}

impl TcpSink {
    /// Heap memory held by the reassembly map, bytes.
    pub fn heap_bytes(&self) -> usize {
        self.ooo.capacity() * std::mem::size_of::<bool>()
    }

    pub fn new(delayed: bool) -> Self {
        TcpSink {
            delayed,
            ..Default::default()
        }
    }

    /// Notes the ECN codepoint and flags of an arriving segment: ECN-capable (`ect`),
    /// Congestion Experienced (`ce`), carrying CWR, or carrying ECE without ECT (ns-2's
    /// negotiation on segment 0).
    pub fn on_ecn(&mut self, ect: bool, ce: bool, cwr: bool, ece: bool) {
        if ect {
            self.seen |= SEEN_ECT;
            if ce {
                self.seen |= SEEN_CE;
            }
        } else if ece {
            self.seen |= SEEN_NEGOTIATION;
        }
        if cwr {
            self.seen |= SEEN_CWR;
        }
    }

    /// Whether the ACK being sent carries ECN-Echo (ns-2 `TcpSink::ack`): CWR on a covered
    /// segment clears the echo, CE on one sets it (CWR first, so CE after CWR in the same
    /// ACK still echoes); ECN-capable segments carry the state; a negotiation is answered.
    pub fn take_ece(&mut self) -> bool {
        let seen = std::mem::take(&mut self.seen);
        if seen & SEEN_CWR != 0 {
            self.ecn_unacked = false;
        }
        if seen & SEEN_CE != 0 {
            self.ecn_unacked = true;
        }
        (seen & SEEN_ECT != 0 && self.ecn_unacked) || seen & SEEN_NEGOTIATION != 0
    }

    /// The cumulative ACK number: the highest in-order sequence number received.
    pub fn ackno(&self) -> i64 {
        self.next as i64 - 1
    }

    /// Records segment `seq` and returns how to acknowledge it.
    pub fn on_data(&mut self, seq: u64) -> SinkAction {
        let in_order = seq == self.next;
        let before = self.next;
        if seq == self.next {
            self.next += 1;
            self.ooo.pop_front();
            while self.ooo.front() == Some(&true) {
                self.ooo.pop_front();
                self.next += 1;
            }
        } else if seq > self.next {
            let k = (seq - self.next) as usize;
            if self.ooo.len() <= k {
                self.ooo.resize(k + 1, false);
            }
            self.ooo[k] = true;
        }
        self.goodput_pkts += self.next - before;
        // As ns-2's DelAckSink: out of order, in order below the highest segment seen (it
        // filled a hole, all of it or the first of several: RFC2581_immediate_ack_), or
        // segment 0 (SYN_immediate_ack_): ACK at once.
        let below_max_seen = self.next - before > 1 || self.ooo.iter().any(|&b| b);
        if !self.delayed || !in_order || below_max_seen || seq == 0 {
            self.pending = false;
            return SinkAction::AckNow;
        }
        if self.pending {
            self.pending = false;
            SinkAction::AckNow
        } else {
            self.pending = true;
            SinkAction::Delay
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cumulative_acks_with_a_hole() {
        let mut s = TcpSink::new(false);
        for q in [0, 1, 3, 4] {
            assert_eq!(s.on_data(q), SinkAction::AckNow);
        }
        assert_eq!(s.ackno(), 1);
        s.on_data(2);
        assert_eq!(s.ackno(), 4);
        s.on_data(1); // duplicate
        assert_eq!(s.ackno(), 4);
        assert_eq!(s.goodput_pkts, 5);
    }

    #[test]
    fn ecn_echo_from_ce_until_cwr() {
        let mut s = TcpSink::new(false);
        // segment 0: ns-2's negotiation (ECE, not ECT) is answered with ECE
        s.on_ecn(false, false, false, true);
        assert!(s.take_ece());
        s.on_ecn(true, false, false, false);
        assert!(!s.take_ece());
        s.on_ecn(true, true, false, false); // CE
        assert!(s.take_ece());
        s.on_ecn(true, false, false, false); // echoed until CWR
        assert!(s.take_ece());
        s.on_ecn(true, false, true, false); // CWR
        assert!(!s.take_ece());
        // CWR and a new CE covered by one (delayed) ACK: the CE wins
        s.on_ecn(true, false, true, false);
        s.on_ecn(true, true, false, false);
        assert!(s.take_ece());
        // Not-ECT segments carry no echo even while the state is set
        s.on_ecn(false, false, false, false);
        assert!(!s.take_ece());
    }

    #[test]
    fn delayed_ack_every_second_segment() {
        let mut s = TcpSink::new(true);
        // ns-2 SYN_immediate_ack_: segment 0 (the SYN) is acknowledged at once.
        assert_eq!(s.on_data(0), SinkAction::AckNow);
        assert_eq!(s.on_data(1), SinkAction::Delay);
        assert_eq!(s.on_data(2), SinkAction::AckNow);
        assert_eq!(s.on_data(4), SinkAction::AckNow);
        assert_eq!(s.on_data(3), SinkAction::AckNow);
        assert_eq!(s.ackno(), 4);
    }

    #[test]
    fn filling_the_first_of_two_holes_is_acknowledged_at_once() {
        // ns-2 RFC2581_immediate_ack_: an in-order segment below the highest seen.
        let mut s = TcpSink::new(true);
        assert_eq!(s.on_data(0), SinkAction::AckNow);
        assert_eq!(s.on_data(2), SinkAction::AckNow);
        assert_eq!(s.on_data(4), SinkAction::AckNow);
        assert_eq!(s.on_data(1), SinkAction::AckNow); // releases 1, 2; 4 still above
        assert_eq!(s.ackno(), 2);
        assert_eq!(s.on_data(3), SinkAction::AckNow); // releases 3, 4
        assert_eq!(s.on_data(5), SinkAction::Delay);
    }
}
