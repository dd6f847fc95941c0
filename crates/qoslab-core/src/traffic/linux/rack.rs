//! RACK-TLP loss detection (RFC 8985) as Linux's net/ipv4/tcp_recovery.c: a segment is lost
//! when a segment sent after it has been delivered (SACKed or ACKed) and more than
//! RACK.rtt + reo_wnd has passed since it was sent. reo_wnd is min_rtt/4 (× steps that grow
//! on D-SACKs, up to srtt), or 0 when no reordering has been seen and either the sender is
//! already in recovery or DupThresh segments are SACKed (`tcp_rack_reo_wnd`). A segment not
//! yet overdue arms the reordering timer for the time it has left.

use super::scoreboard::{Scoreboard, Seg};
use crate::units::SimTime;

/// `TCP_RACK_RECOVERY_THRESH`.
pub const RECOVERY_THRESH: u32 = 16;

#[derive(Debug, Clone)]
pub struct Rack {
    /// Send time and sequence of the most recently sent segment delivered.
    pub mstamp: SimTime,
    pub end_seq: i64,
    /// RACK.rtt, ns.
    pub rtt: u64,
    /// A delivery advanced the state since the last detection.
    pub advanced: bool,
    pub reo_wnd_steps: u32,
    pub reo_wnd_persist: u32,
    pub dsack_seen: bool,
    pub last_delivered: u64,
    /// Reordering was observed on the connection (`tp->reord_seen`).
    pub reord_seen: bool,
    /// Disabled (tests only: RACK switched off, losses wait for the RTO).
    pub disabled: bool,
}

impl Default for Rack {
    fn default() -> Self {
        Rack {
            mstamp: 0,
            end_seq: -1,
            rtt: 0,
            advanced: false,
            reo_wnd_steps: 1,
            reo_wnd_persist: 0,
            dsack_seen: false,
            last_delivered: 0,
            reord_seen: false,
            disabled: false,
        }
    }
}

/// `tcp_skb_sent_after`: (t1, seq1) was sent after (t2, seq2).
#[inline]
pub fn sent_after(t1: SimTime, t2: SimTime, seq1: i64, seq2: i64) -> bool {
    t1 > t2 || (t1 == t2 && seq1 > seq2)
}

impl Rack {
    /// `tcp_rack_advance`: segment `seq`, sent at `xmit`, was delivered at `now`.
    pub fn advance(&mut self, now: SimTime, seq: i64, xmit: SimTime, retrans: bool, min_rtt: u64) {
        let rtt = now.saturating_sub(xmit);
        if retrans && rtt < min_rtt {
            // Ambiguous: the original, not the retransmission, may have been delivered.
            return;
        }
        self.advanced = true;
        self.rtt = rtt;
        if sent_after(xmit, self.mstamp, seq, self.end_seq) {
            self.mstamp = xmit;
            self.end_seq = seq;
        }
    }

    /// `tcp_rack_reo_wnd`, ns.
    pub fn reo_wnd(
        &self,
        in_recovery: bool,
        sacked_out: u32,
        reordering: u32,
        min_rtt: u64,
        srtt: u64,
    ) -> u64 {
        if !self.reord_seen && (in_recovery || sacked_out >= reordering) {
            return 0;
        }
        if min_rtt == u64::MAX {
            return 0;
        }
        ((min_rtt / 4) * self.reo_wnd_steps as u64).min(srtt)
    }

    /// `tcp_rack_detect_loss`: marks overdue segments lost (pushing them to `lost`), returns
    /// the longest wait (ns) of those not yet overdue (0: none).
    pub fn detect_loss(
        &self,
        now: SimTime,
        sb: &mut Scoreboard,
        reo_wnd: u64,
        lost: &mut Vec<i64>,
    ) -> u64 {
        if self.disabled {
            return 0;
        }
        let scan = Scan {
            now,
            limit: self.rtt + reo_wnd,
            high_rexmit: sb.high_rexmit,
            mstamp: self.mstamp,
            end_seq: self.end_seq,
        };
        let mut timeout = 0u64;
        // Only the segments the walk looks at ([`super::scoreboard::walkable`]), in order: it
        // passes over the rest, and beyond the segment where it stops none can be overdue
        // ([`Scan::stops_at`]), so stopping at the first of those it looks at finds the same.
        #[cfg(debug_assertions)]
        let first = lost.len();
        sb.for_walkable(sb.una, |seq, s| {
            if scan.stops_at(seq, s) {
                return false;
            }
            scan.look(seq, s, lost, &mut timeout);
            true
        });
        #[cfg(debug_assertions)]
        {
            let (mut all, mut t_all) = (Vec::new(), 0u64);
            for (k, s) in sb.segs().iter().enumerate() {
                let seq = sb.una + k as i64;
                debug_assert_eq!(sb.walks(seq), super::scoreboard::walkable(s.flags()));
                if scan.stops_at(seq, s) {
                    break;
                }
                if super::scoreboard::walkable(s.flags()) {
                    scan.look(seq, s, &mut all, &mut t_all);
                }
            }
            debug_assert_eq!(
                (&lost[first..], timeout),
                (&all[..], t_all),
                "the walk skips only what it passes over"
            );
        }
        timeout
    }
}

/// One [`Rack::detect_loss`] walk's constants.
struct Scan {
    now: SimTime,
    /// RACK.rtt + reo_wnd, ns.
    limit: u64,
    high_rexmit: i64,
    mstamp: SimTime,
    end_seq: i64,
}

impl Scan {
    /// The walk may stop at segment `seq`: sent once and not before RACK's segment, as is
    /// every later one (sent once, in order, above the highest retransmission), so none of
    /// them can be overdue. Linux stops here too, walking its queue in send order
    /// (`tsorted_sent_queue`).
    #[inline]
    fn stops_at(&self, seq: i64, s: &Seg) -> bool {
        seq > self.high_rexmit && !sent_after(self.mstamp, s.xmit, self.end_seq, seq)
    }

    /// Segment `seq` (one the walk looks at): pushed to `lost` if overdue, otherwise its wait
    /// raises `timeout` if RACK's segment was sent after it.
    #[inline]
    fn look(&self, seq: i64, s: &Seg, lost: &mut Vec<i64>, timeout: &mut u64) {
        if !sent_after(self.mstamp, s.xmit, self.end_seq, seq) {
            return;
        }
        let elapsed = self.now.saturating_sub(s.xmit);
        if elapsed >= self.limit {
            lost.push(seq);
        } else {
            *timeout = (*timeout).max(self.limit - elapsed);
        }
    }
}
