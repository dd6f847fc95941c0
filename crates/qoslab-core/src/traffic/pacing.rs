//! Sender pacing: segments leave at most at the pacing rate instead of in ACK-clocked bursts.
//!
//! The rate is Linux's default (`tcp_update_pacing_rate`, net/ipv4/tcp_input.c):
//! pacing_rate = gain · cwnd · MSS / srtt with gain 2 while cwnd < ssthresh/2 (slow start;
//! Linux's `tcp_pacing_ss_ratio` 200 %) and 1.2 otherwise (`tcp_pacing_ca_ratio` 120 %), or the
//! rate the congestion control asks for (BBR). Segments are of one size, so the rate becomes
//! a gap between segment releases: gap = srtt / (gain · cwnd). srtt is the RFC 6298 smoothed
//! RTT (gain 1/8) of the sender's exact Karn samples, not the tick-granular estimate of the
//! retransmission timer; before the first sample the sender is not paced (as Linux, whose
//! rate is unlimited until srtt is known).
//!
//! A release at `now` sets the earliest next release to max(now, next) + gap (earliest
//! departure time, as Linux's EDT model with the `fq` qdisc). The host keeps at most one
//! pending [`crate::engine::EventKind::Pace`] per flow: [`Pacer::request`] says when one is
//! needed. Fast retransmissions and limited transmit are not paced (they repair the ACK
//! clock); new data and the go-back-N after a timeout are.

use crate::units::SimTime;

#[derive(Debug, Clone, Default)]
pub struct Pacer {
    /// Pacing applies (the `pacing` key, or a congestion control that always paces).
    pub enabled: bool,
    /// Smoothed RTT of exact samples, ns (0: none yet).
    pub srtt_ns: f64,
    /// Earliest time of the next release.
    pub next: SimTime,
    /// A release was refused: the sender waits for `next`.
    waiting: bool,
    /// The time of the pending pace event the host has scheduled, if any.
    scheduled: Option<SimTime>,
    /// Segments a release may carry back to back, as one GSO skb (the linux flavour's
    /// `tcp_tso_segs` for a module that sets `min_tso_segs`, BBR; 0 or 1: one segment a
    /// release), and the release in progress: its time and the segments it has sent.
    pub skb_segs: u32,
    skb_at: SimTime,
    skb_sent: u32,
}

impl Pacer {
    pub fn new(enabled: bool) -> Self {
        Pacer {
            enabled,
            ..Default::default()
        }
    }

    /// An exact RTT sample, ns.
    pub fn on_rtt_sample(&mut self, rtt_ns: u64) {
        let r = rtt_ns as f64;
        self.srtt_ns = if self.srtt_ns == 0.0 {
            r
        } else {
            0.875 * self.srtt_ns + 0.125 * r
        };
    }

    /// Linux's pacing gap (ns) for a window of `cwnd` packets with slow-start threshold
    /// `ssthresh`, or the congestion control's own rate (`rate_pps`, packets per second).
    pub fn gap_ns(&self, cwnd: f64, ssthresh: f64, rate_pps: Option<f64>) -> f64 {
        if let Some(r) = rate_pps {
            return if r > 0.0 { 1e9 / r } else { 0.0 };
        }
        if self.srtt_ns == 0.0 {
            return 0.0;
        }
        let gain = if cwnd < ssthresh / 2.0 { 2.0 } else { 1.2 };
        self.srtt_ns / (gain * cwnd.max(1.0))
    }

    /// Whether a segment may leave at `now`: when `next` has come, or as a further segment of
    /// the skb released at `now` ([`Pacer::skb_segs`]). A refusal makes the sender wait for
    /// `next`.
    #[inline]
    pub fn may_send(&mut self, now: SimTime) -> bool {
        if !self.enabled || now >= self.next || self.in_skb(now) {
            return true;
        }
        self.waiting = true;
        false
    }

    /// A segment sent at `now` would join the skb released at `now`.
    #[inline]
    fn in_skb(&self, now: SimTime) -> bool {
        self.skb_sent > 0 && self.skb_sent < self.skb_segs && now == self.skb_at
    }

    /// A segment left at `now` with usable window `cwnd` (capped by the advertised window):
    /// the next may leave one gap later ([`Pacer::gap_ns`]).
    #[inline]
    pub fn on_send(&mut self, now: SimTime, cwnd: f64, ssthresh: f64, rate_pps: Option<f64>) {
        if self.enabled {
            if self.skb_segs > 1 {
                // an skb's segments leave together; each is charged its gap, so the next skb
                // waits for all of them (`tcp_update_skb_after_send` charges skb->len)
                self.skb_sent = if self.in_skb(now) {
                    self.skb_sent + 1
                } else {
                    1
                };
                self.skb_at = now;
            }
            let gap = self.gap_ns(cwnd, ssthresh, rate_pps);
            self.next = now.max(self.next) + crate::units::round_u64(gap);
        }
    }

    /// The time at which the host must schedule a pace event, when the sender waits and no
    /// event is pending for that time or earlier.
    pub fn request(&mut self) -> Option<SimTime> {
        if !self.waiting || self.scheduled.is_some_and(|s| s <= self.next) {
            return None;
        }
        self.scheduled = Some(self.next);
        Some(self.next)
    }

    /// A pace event scheduled for `at` fires: whether it is the pending one (a stale one is
    /// ignored). The sender then stops waiting and tries to send again.
    pub fn on_event(&mut self, at: SimTime) -> bool {
        if self.scheduled != Some(at) {
            return false;
        }
        self.scheduled = None;
        self.waiting = false;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linux_gains_and_spacing() {
        let mut p = Pacer::new(true);
        assert_eq!(
            p.gap_ns(10.0, 100.0, None),
            0.0,
            "unpaced before an RTT sample"
        );
        p.on_rtt_sample(100_000_000);
        // Slow start (cwnd < ssthresh/2): 2·cwnd per RTT → 100 ms / 20 = 5 ms.
        assert_eq!(p.gap_ns(10.0, 100.0, None), 5e6);
        // Congestion avoidance: 1.2·cwnd per RTT.
        assert!((p.gap_ns(60.0, 100.0, None) - 1e8 / 72.0).abs() < 1e-6);
        assert_eq!(p.gap_ns(60.0, 100.0, Some(1000.0)), 1e6);
        assert!(p.may_send(0));
        p.on_send(0, 10.0, 100.0, None); // gap 5 ms
        assert!(!p.may_send(1_000_000));
        assert_eq!(p.request(), Some(5_000_000));
        assert_eq!(p.request(), None, "one pending event");
        assert!(!p.on_event(4_000_000), "a stale event");
        assert!(p.on_event(5_000_000));
        assert!(p.may_send(5_000_000));
        // Disabled: never refuses.
        let mut q = Pacer::new(false);
        q.on_send(0, 10.0, 100.0, None);
        assert!(q.may_send(0));
        assert_eq!(q.request(), None);
    }

    #[test]
    fn an_skbs_segments_leave_together_and_are_charged_together() {
        // 1 ms a segment at the CC's rate; skbs of two segments.
        let mut p = Pacer::new(true);
        p.skb_segs = 2;
        let rate = Some(1000.0);
        assert!(p.may_send(0));
        p.on_send(0, 10.0, 0.0, rate);
        assert!(p.may_send(0), "the skb's second segment leaves at once");
        p.on_send(0, 10.0, 0.0, rate);
        assert!(!p.may_send(0), "a third would start the next skb");
        assert_eq!(p.next, 2_000_000, "both segments charged");
        assert!(!p.may_send(1_999_999));
        assert!(p.may_send(2_000_000));
        p.on_send(2_000_000, 10.0, 0.0, rate);
        // A lone segment (nothing more to send at once) is charged alone: the skb it began
        // does not leave open for a later instant.
        assert!(!p.may_send(2_500_000));
        assert_eq!(p.next, 3_000_000);
        // One segment an skb (0 or 1): as before, one gap after each segment.
        let mut q = Pacer::new(true);
        q.skb_segs = 1;
        q.on_send(0, 10.0, 0.0, rate);
        assert!(!q.may_send(0));
    }
}
