//! Delivery-rate estimation (draft-cheng-iccrg-delivery-rate-estimation-00), in packets.
//!
//! The connection keeps C.delivered (segments delivered so far), C.delivered_time (when the
//! last of them was acknowledged), C.first_sent_time (the send time of the segment whose
//! acknowledgement began the current sampling interval) and C.app_limited. Each transmission
//! records, in a ring indexed by sequence number, P.delivered, P.delivered_time,
//! P.first_sent_time, P.sent_time and P.is_app_limited (§3.2). An ACK delivers the segments it
//! newly covers; the one with the largest P.delivered (the latest sent) gives the rate sample
//! (§3.3): delivered = C.delivered − P.delivered over
//! interval = max(send_elapsed, ack_elapsed), send_elapsed = P.sent_time − P.first_sent_time,
//! ack_elapsed = C.delivered_time − P.delivered_time.
//!
//! Only cumulative ACKs are modelled (no SACK: a segment is delivered when the cumulative ACK
//! passes it). The ring holds one entry per outstanding segment; it doubles when the window
//! outgrows it, so nothing is allocated per packet once the largest window has been reached.

use crate::units::SimTime;

#[derive(Debug, Clone, Copy)]
struct SendState {
    seq: i64,
    delivered: u64,
    delivered_time: SimTime,
    first_sent_time: SimTime,
    sent_time: SimTime,
    is_app_limited: bool,
    /// Sent more than once (its slot already held it when it was sent).
    retransmitted: bool,
}

/// A slot that holds no segment.
const EMPTY: SendState = SendState {
    seq: i64::MIN,
    delivered: 0,
    delivered_time: 0,
    first_sent_time: 0,
    sent_time: 0,
    is_app_limited: false,
    retransmitted: false,
};

/// One rate sample (RS in the draft).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RateSample {
    /// RS.delivery_rate, packets per second.
    pub delivery_rate: f64,
    /// RS.delivered over RS.interval.
    pub delivered: u64,
    pub interval_ns: u64,
    /// RS.prior_delivered: C.delivered when the sampled segment was sent.
    pub prior_delivered: u64,
    pub is_app_limited: bool,
    /// RS.rtt: now − P.sent_time of the sampled segment, ns; None when the ACK covers a
    /// retransmitted segment (Karn's rule, RFC 6298 §3, as Linux's `tcp_clean_rtx_queue`).
    pub rtt_ns: Option<u64>,
}

#[derive(Debug, Clone, Default)]
pub struct RateSampler {
    /// C.delivered.
    pub delivered: u64,
    /// C.delivered_time.
    pub delivered_time: SimTime,
    first_sent_time: SimTime,
    /// C.app_limited: 0, or the C.delivered value that ends the application-limited period.
    pub app_limited: u64,
    ring: Vec<SendState>,
}

impl RateSampler {
    fn slot(&mut self, seq: i64) -> &mut SendState {
        let mask = self.ring.len() - 1;
        &mut self.ring[seq as usize & mask]
    }

    /// Segment `seq` is sent (or retransmitted) at `now` with `in_flight` segments
    /// outstanding before it (§3.2: a send into an empty pipe restarts the interval).
    pub fn on_send(&mut self, seq: i64, now: SimTime, in_flight: i64, highest_ack: i64) {
        if in_flight <= 0 {
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        // Grow the ring (a power of two) to cover every outstanding segment.
        let span = (seq - highest_ack).max(1) as usize;
        if span >= self.ring.len() {
            self.grow((span + 1).next_power_of_two().max(64), highest_ack, seq);
        }
        // Its slot still holds it (the ring covers every outstanding segment): a retransmission.
        let retransmitted = self.slot(seq).seq == seq;
        let p = SendState {
            seq,
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent_time: self.first_sent_time,
            sent_time: now,
            is_app_limited: self.app_limited != 0,
            retransmitted,
        };
        *self.slot(seq) = p;
    }

    fn grow(&mut self, len: usize, highest_ack: i64, upto: i64) {
        let old = std::mem::replace(&mut self.ring, vec![EMPTY; len]);
        if !old.is_empty() {
            let mask = old.len() - 1;
            for seq in (highest_ack + 1).max(0)..=upto {
                let e = old[seq as usize & mask];
                if e.seq == seq {
                    *self.slot(seq) = e;
                }
            }
        }
    }

    /// The sender has no data to send while the window has room (§3.4): packets sent until
    /// `in_flight` more are delivered are application-limited.
    pub fn on_app_limited(&mut self, in_flight: i64) {
        self.app_limited = (self.delivered + in_flight.max(0) as u64).max(1);
    }

    /// A cumulative ACK at `now` newly covering segments `from..=to`: the rate sample, if one
    /// can be taken (§3.3).
    pub fn on_ack(&mut self, now: SimTime, from: i64, to: i64) -> Option<RateSample> {
        if self.ring.is_empty() {
            return None;
        }
        let mut best: Option<SendState> = None;
        let mut retransmitted = false;
        for seq in from.max(0)..=to {
            let p = *self.slot(seq);
            if p.seq != seq {
                continue; // never recorded (overwritten by a later window)
            }
            retransmitted |= p.retransmitted;
            self.delivered += 1;
            self.delivered_time = now;
            let later = |b: SendState| {
                p.delivered > b.delivered
                    || (p.delivered == b.delivered && p.sent_time > b.sent_time)
            };
            if best.is_none_or(later) {
                best = Some(p);
            }
        }
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        let p = best?;
        self.first_sent_time = p.sent_time;
        let send_elapsed = p.sent_time - p.first_sent_time;
        let ack_elapsed = self.delivered_time - p.delivered_time;
        let interval = send_elapsed.max(ack_elapsed);
        let delivered = self.delivered - p.delivered;
        if interval == 0 {
            return None;
        }
        Some(RateSample {
            delivery_rate: delivered as f64 * 1e9 / interval as f64,
            delivered,
            interval_ns: interval,
            prior_delivered: p.delivered,
            is_app_limited: p.is_app_limited,
            rtt_ns: (!retransmitted).then(|| now - p.sent_time),
        })
    }

    /// Heap bytes of the ring.
    pub fn heap_bytes(&self) -> usize {
        self.ring.capacity() * std::mem::size_of::<SendState>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: SimTime = 1_000_000;

    /// Segments sent every 1 ms, each acknowledged 10 ms later: 1000 packets/s.
    #[test]
    fn steady_flow_measures_its_send_rate() {
        let mut r = RateSampler::default();
        let mut last = None;
        for s in 0..200i64 {
            let now = s as u64 * MS;
            // ACKs due by now (sent 10 ms ago) come first.
            if s >= 10 {
                last = r.on_ack(now, s - 10, s - 10);
            }
            let in_flight = s.min(10);
            r.on_send(s, now, in_flight, s - 1 - in_flight);
        }
        let rs = last.unwrap();
        assert!((rs.delivery_rate - 1000.0).abs() < 1.0, "{rs:?}");
        assert_eq!(rs.rtt_ns, Some(10 * MS));
        assert!(!rs.is_app_limited);
        assert!(
            r.heap_bytes() > 0 && r.ring.len() == 64,
            "no growth past the window"
        );
    }

    /// After a timeout, go-back-N resends segments the receiver already holds: the ACK of
    /// the first resend covers them 1 ms after the second left. No RTT from that ACK (Karn);
    /// the next ACK of new data is timed again.
    #[test]
    fn no_rtt_sample_from_an_ack_covering_a_retransmission() {
        let mut r = RateSampler::default();
        for s in 0..4i64 {
            r.on_send(s, s as u64 * MS, s, -1);
        }
        r.on_send(0, 300 * MS, 4, -1);
        r.on_send(1, 339 * MS, 4, -1);
        let rs = r.on_ack(340 * MS, 0, 3).unwrap();
        assert_eq!(rs.rtt_ns, None, "{rs:?}");
        r.on_send(4, 340 * MS, 0, 3);
        let rs = r.on_ack(380 * MS, 4, 4).unwrap();
        assert_eq!(rs.rtt_ns, Some(40 * MS));
    }

    #[test]
    fn app_limited_marks_until_delivered() {
        let mut r = RateSampler::default();
        r.on_send(0, 0, 0, -1);
        r.on_app_limited(1);
        r.on_send(1, MS, 1, -1);
        let rs = r.on_ack(10 * MS, 0, 1).unwrap();
        assert!(rs.is_app_limited);
        assert_eq!(r.app_limited, 0, "cleared once C.delivered passes it");
    }
}
