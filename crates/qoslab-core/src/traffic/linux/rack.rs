//! RACK-TLP loss detection (RFC 8985) as Linux's net/ipv4/tcp_recovery.c: a segment is lost
//! when a segment sent after it has been delivered (SACKed or ACKed) and more than
//! RACK.rtt + reo_wnd has passed since it was sent. reo_wnd is min_rtt/4 (× steps that grow
//! on D-SACKs, up to srtt), or 0 when no reordering has been seen and either the sender is
//! already in recovery or DupThresh segments are SACKed (`tcp_rack_reo_wnd`). A segment not
//! yet overdue arms the reordering timer for the time it has left.

use super::scoreboard::{Scoreboard, Seg, LOST, RETRANS, SACKED};
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
        // The queue's two halves as plain slices: walking a `VecDeque` element by element
        // pays its wrap-around check on every segment (a scan of the whole outstanding window
        // on every ACK in recovery).
        let (front, back) = sb.segs.as_slices();
        let scan = Scan {
            now,
            limit: self.rtt + reo_wnd,
            high_rexmit: sb.high_rexmit,
            mstamp: self.mstamp,
            end_seq: self.end_seq,
        };
        let mut timeout = 0u64;
        if scan.run(front, sb.una, lost, &mut timeout) {
            scan.run(back, sb.una + front.len() as i64, lost, &mut timeout);
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
    /// Walks `segs` (the first is segment `first`): pushes the overdue ones to `lost`, raises
    /// `timeout` to the longest wait of those not yet overdue; false when the walk may stop.
    #[inline]
    fn run(&self, segs: &[Seg], first: i64, lost: &mut Vec<i64>, timeout: &mut u64) -> bool {
        for (k, s) in segs.iter().enumerate() {
            let seq = first + k as i64;
            let after = sent_after(self.mstamp, s.xmit, self.end_seq, seq);
            if !after && seq > self.high_rexmit {
                // Sent once, not before RACK's segment, and so is every later one (sent
                // once, in order): none of them can be overdue. Linux stops here too,
                // walking its queue in send order (`tsorted_sent_queue`).
                return false;
            }
            if s.flags & SACKED != 0 {
                continue;
            }
            if s.flags & LOST != 0 && s.flags & RETRANS == 0 {
                continue;
            }
            if !after {
                continue;
            }
            let elapsed = self.now.saturating_sub(s.xmit);
            if elapsed >= self.limit {
                lost.push(seq);
            } else {
                *timeout = (*timeout).max(self.limit - elapsed);
            }
        }
        true
    }
}
