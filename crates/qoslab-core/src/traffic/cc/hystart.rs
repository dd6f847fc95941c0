//! HyStart, CUBIC's hybrid slow start as Linux runs it (Ha and Rhee, "Taming the Elephants:
//! New TCP Slow Start", Computer Networks 2011; Linux net/ipv4/tcp_cubic.c `hystart_update`).
//!
//! Slow start ends early (ssthresh = cwnd) on either signal, once cwnd ≥ 16 packets
//! (`hystart_low_window`), at most once until the next timeout:
//! * ACK train: ACKs of one round that keep arriving within 2 ms of each other
//!   (`hystart_ack_delta`) for longer than delay_min/2 (delay_min as is for a paced sender):
//!   the window already fills the path;
//! * delay increase: the smallest RTT of the round's first 8 samples exceeds delay_min by
//!   clamp(delay_min/8, 4 ms, 16 ms): a queue is building.
//!
//! A round starts when the cumulative ACK passes the SND.NXT recorded at the last round start.
//! Each ACK's RTT sample is the time since its segment was sent (never a retransmitted one),
//! from a ring of send times indexed by sequence number; delay_min is the smallest sample
//! seen. Left out: Linux's TSO/GRO allowance `hystart_ack_delay` (no segmentation offload).

use crate::units::SimTime;

/// cwnd from which HyStart acts, packets.
pub const LOW_WINDOW: f64 = 16.0;
/// ACKs closer than this form a train.
pub const ACK_DELTA: SimTime = 2_000_000;
/// RTT samples per round for the delay test.
pub const MIN_SAMPLES: u32 = 8;
const DELAY_THRESH_MIN: SimTime = 4_000_000;
const DELAY_THRESH_MAX: SimTime = 16_000_000;
/// Marks a retransmitted segment's slot: no RTT sample.
const RETRANSMITTED: SimTime = SimTime::MAX;

#[derive(Debug, Clone, Default)]
pub struct HyStart {
    /// Send time of segment `seq` at `sent[seq & mask]`, with the sequence number.
    sent: Vec<(i64, SimTime)>,
    max_sent: i64,
    /// The smallest RTT sample, ns (0: none yet).
    pub delay_min: SimTime,
    round_start: SimTime,
    last_ack: SimTime,
    end_seq: i64,
    curr_rtt: SimTime,
    sample_cnt: u32,
    /// Slow start was ended by HyStart (until the next timeout).
    pub found: bool,
}

impl HyStart {
    /// Heap memory held by the send-time ring, bytes.
    pub fn heap_bytes(&self) -> usize {
        self.sent.capacity() * std::mem::size_of::<(i64, SimTime)>()
    }

    /// Segment `seq` is sent at `now` (`highest_ack` acknowledged so far).
    pub fn on_send(&mut self, seq: i64, now: SimTime, highest_ack: i64) {
        let span = (seq - highest_ack).max(1) as usize;
        if span >= self.sent.len() {
            let len = (span + 1).next_power_of_two().max(64);
            let old = std::mem::replace(&mut self.sent, vec![(-1, 0); len]);
            for e in old.into_iter().filter(|e| e.0 > highest_ack) {
                self.sent[e.0 as usize & (len - 1)] = e;
            }
        }
        let t = if seq <= self.max_sent {
            RETRANSMITTED
        } else {
            now
        };
        self.max_sent = self.max_sent.max(seq);
        let mask = self.sent.len() - 1;
        self.sent[seq as usize & mask] = (seq, t);
    }

    /// An ACK of new data up to `ackno` at `now`, in slow start with window `cwnd`, SND.NXT
    /// `snd_nxt`: whether slow start should end here (ssthresh = cwnd).
    pub fn on_ack(
        &mut self,
        now: SimTime,
        ackno: i64,
        snd_nxt: i64,
        cwnd: f64,
        paced: bool,
    ) -> bool {
        let mask = self.sent.len().wrapping_sub(1);
        let delay = match self.sent.get(ackno as usize & mask) {
            Some(&(s, t)) if s == ackno && t != RETRANSMITTED => Some(now - t),
            _ => None,
        };
        if let Some(d) = delay {
            if self.delay_min == 0 || d < self.delay_min {
                self.delay_min = d;
            }
        }
        if ackno >= self.end_seq {
            // A new round.
            self.round_start = now;
            self.last_ack = now;
            self.end_seq = snd_nxt;
            self.curr_rtt = SimTime::MAX;
            self.sample_cnt = 0;
        }
        if self.found || cwnd < LOW_WINDOW || self.delay_min == 0 {
            return false;
        }
        if now - self.last_ack <= ACK_DELTA {
            self.last_ack = now;
            let threshold = if paced {
                self.delay_min
            } else {
                self.delay_min / 2
            };
            if now - self.round_start > threshold {
                self.found = true;
            }
        }
        if let Some(d) = delay {
            self.curr_rtt = self.curr_rtt.min(d);
            if self.sample_cnt < MIN_SAMPLES {
                self.sample_cnt += 1;
            } else {
                let thresh = (self.delay_min / 8).clamp(DELAY_THRESH_MIN, DELAY_THRESH_MAX);
                if self.curr_rtt > self.delay_min + thresh {
                    self.found = true;
                }
            }
        }
        self.found
    }

    /// A timeout: HyStart may act again in the next slow start.
    pub fn reset(&mut self) {
        self.found = false;
        self.end_seq = 0;
    }
}
