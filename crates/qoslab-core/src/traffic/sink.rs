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
}

/// What the sink does after a segment arrives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SinkAction {
    /// Send an ACK now for the cumulative sequence number (`next - 1`, may be -1 → None).
    AckNow,
    /// Hold the ACK and arm the delayed-ACK timer.
    Delay,
}

impl TcpSink {
    pub fn new(delayed: bool) -> Self {
        TcpSink {
            delayed,
            ..Default::default()
        }
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
        // Filling a hole (more than one segment released) or out of order: ACK at once.
        let filled_hole = self.next - before > 1;
        if !self.delayed || !in_order || filled_hole {
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
    fn delayed_ack_every_second_segment() {
        let mut s = TcpSink::new(true);
        assert_eq!(s.on_data(0), SinkAction::Delay);
        assert_eq!(s.on_data(1), SinkAction::AckNow);
        assert_eq!(s.on_data(3), SinkAction::AckNow);
        assert_eq!(s.on_data(2), SinkAction::AckNow);
        assert_eq!(s.ackno(), 3);
    }
}
