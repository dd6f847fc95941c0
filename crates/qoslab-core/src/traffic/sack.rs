//! SACK loss recovery (RFC 6675) for the sender of [`super::Ns2Sender`], in segments; the
//! receiver's blocks are RFC 2018's ([`crate::traffic::sink::TcpSink::sack_blocks`]).
//!
//! The scoreboard marks the segments SACKed above SND.UNA (HighACK + 1). As §4 defines them:
//! IsLost(S) holds when DupThresh segments above S are SACKed; `pipe` counts each
//! outstanding segment not SACKed and not lost, and each retransmitted one (S ≤ HighRxt)
//! once more; NextSeg is (1) the first unSACKed lost segment above HighRxt, else (2) new
//! data, else (3) the first unSACKed segment above HighRxt below the highest SACKed one.
//! Recovery (§5) starts on the DupThresh-th duplicate ACK or when HighACK + 1 IsLost (not for
//! losses of a window already recovered, ns-2's `bug_fix_`): RecoveryPoint = HighData, the
//! congestion control's decrease, the first lost segment retransmitted at once, then NextSeg
//! while cwnd − pipe ≥ 1 on every ACK, until the cumulative ACK reaches RecoveryPoint.
//! A timeout forgets the scoreboard and goes back to SND.UNA (as ns-2's `Sack1`).
//! Left out: the rescue retransmission (§4 NextSeg rule 4), D-SACK, reneging; segments sent
//! in recovery are not paced.

use std::collections::VecDeque;

use super::{CongestionControl, CwndAction, Ns2Sender, Reduction, SendBuf};
use crate::traffic::sink::SackBlocks;
use crate::units::SimTime;

#[derive(Debug, Clone, Default)]
pub struct Scoreboard {
    /// `sacked[k]`: segment `base + k` has been SACKed.
    sacked: VecDeque<bool>,
    /// SND.UNA: the first unacknowledged segment.
    base: i64,
    /// In SACK loss recovery.
    pub in_recovery: bool,
    /// RecoveryPoint: HighData when recovery began.
    pub recovery_point: i64,
    /// HighRxt: the highest segment retransmitted in this recovery.
    pub high_rxt: i64,
}

impl Scoreboard {
    /// Heap memory held by the scoreboard, bytes.
    pub fn heap_bytes(&self) -> usize {
        self.sacked.capacity() * std::mem::size_of::<bool>()
    }

    fn advance(&mut self, snd_una: i64) {
        while self.base < snd_una {
            self.sacked.pop_front();
            self.base += 1;
        }
    }

    fn mark(&mut self, blocks: &SackBlocks, high_data: i64) {
        for &(l, r) in blocks {
            let (l, r) = ((l as i64).max(self.base), (r as i64).min(high_data + 1));
            for s in l..r {
                let k = (s - self.base) as usize;
                if self.sacked.len() <= k {
                    self.sacked.resize(k + 1, false);
                }
                self.sacked[k] = true;
            }
        }
    }

    fn is_sacked(&self, s: i64) -> bool {
        s >= self.base && self.sacked.get((s - self.base) as usize) == Some(&true)
    }

    /// One past the highest SACKed segment (SND.UNA when none is).
    fn sacked_end(&self) -> i64 {
        self.base
            + self
                .sacked
                .iter()
                .rposition(|&b| b)
                .map_or(0, |k| k as i64 + 1)
    }

    /// Unsacked segments below this bound are lost (IsLost): the DupThresh-th SACKed segment
    /// counted from the top.
    fn lost_below(&self, dup_thresh: u32) -> i64 {
        let mut seen = 0;
        for (k, &b) in self.sacked.iter().enumerate().rev() {
            seen += u32::from(b);
            if b && seen >= dup_thresh {
                return self.base + k as i64;
            }
        }
        self.base
    }

    /// SetPipe (§4), over SND.UNA ..= HighData.
    fn pipe(&self, high_data: i64, lost_below: i64) -> i64 {
        (self.base..=high_data)
            .filter(|&s| !self.is_sacked(s))
            .map(|s| i64::from(s >= lost_below) + i64::from(s <= self.high_rxt))
            .sum()
    }

    /// The first unSACKed segment above HighRxt and below `end`.
    fn first_hole(&self, end: i64) -> Option<i64> {
        ((self.high_rxt + 1).max(self.base)..end).find(|&s| !self.is_sacked(s))
    }

    pub(super) fn reset(&mut self) {
        self.sacked.clear();
        self.in_recovery = false;
    }
}

impl Ns2Sender {
    /// Processes an ACK carrying the SACK blocks `blocks` (see the module documentation).
    pub fn on_ack_sack(
        &mut self,
        now: SimTime,
        ackno: i64,
        ece: bool,
        blocks: &SackBlocks,
        out: &mut SendBuf,
    ) {
        self.stats.acks_received += 1;
        if ece && self.ecn {
            self.ecn_response(now, ackno);
        }
        let mut sb = self.sack.take().expect("a SACK sender");
        sb.advance(ackno + 1);
        sb.mark(blocks, self.maxseq);
        if ackno > self.last_ack {
            let recovering = sb.in_recovery && ackno < sb.recovery_point;
            let sample = self.ack_sample(now, ackno, ece, recovering);
            if sb.in_recovery && !recovering {
                sb.in_recovery = false;
                self.last_cwnd_action = CwndAction::Exited;
            }
            self.newack(now, ackno, ece);
            let mut w = self.cc_window();
            self.cc.on_ack(&mut w, &sample);
            if !recovering && (!self.ect || !ece) {
                self.cc.increase(&mut w, &sample);
            }
            self.set_cc_window(w);
            if self.ect && !ece {
                self.ecn_backoff = false;
            }
            if !self.ect && ece {
                self.ect = true;
            }
            if self.last_ack == 0 {
                self.cwnd = self.wnd_init;
            }
        } else if ackno == self.last_ack && !sb.in_recovery {
            self.dupacks += 1;
            let lost = sb.lost_below(self.numdupacks) > ackno + 1;
            let new_window = self.highest_ack > self.recover || self.highest_ack == 0;
            if (self.dupacks >= self.numdupacks || lost) && new_window {
                self.enter_sack_recovery(now, &mut sb, out);
            } else if self.dupacks < self.numdupacks {
                self.send_one(now, out);
            }
        }
        if sb.in_recovery {
            self.sack_send(now, &mut sb, out);
        } else if self.dupacks == 0 {
            self.send_much(now, self.max_burst, out);
        }
        self.sack = Some(sb);
    }

    /// §5 step 4: RecoveryPoint, the decrease, and the first lost segment at once.
    fn enter_sack_recovery(&mut self, now: SimTime, sb: &mut Scoreboard, out: &mut SendBuf) {
        sb.in_recovery = true;
        sb.recovery_point = self.maxseq;
        self.recover = self.maxseq;
        self.last_cwnd_action = CwndAction::DupAck;
        self.reduce(now, Reduction::Loss);
        self.reset_rtx_timer(now, true, false);
        self.stats.fast_retransmits += 1;
        let first = self.highest_ack + 1;
        self.output(now, first, out);
        sb.high_rxt = first;
    }

    /// §5 step (C): NextSeg while cwnd − pipe ≥ 1.
    fn sack_send(&mut self, now: SimTime, sb: &mut Scoreboard, out: &mut SendBuf) {
        let lost_below = sb.lost_below(self.numdupacks);
        let end = sb.sacked_end();
        let mut pipe = sb.pipe(self.maxseq, lost_below);
        let room = self.cwnd.min(self.wnd);
        while (pipe + 1) as f64 <= room {
            if let Some(s) = sb.first_hole(end.min(lost_below)) {
                self.output(now, s, out);
                sb.high_rxt = s;
            } else if self.t_seqno < self.curseq
                && self.t_seqno <= self.highest_ack + self.wnd as i64
            {
                let s = self.t_seqno;
                self.output(now, s, out);
                self.t_seqno += 1;
            } else if let Some(s) = sb.first_hole(end) {
                self.output(now, s, out);
                sb.high_rxt = s;
            } else {
                break;
            }
            pipe += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn is_lost_and_pipe_as_rfc_6675_section_4() {
        // SND.UNA 10, HighData 19; SACKed 12, 13, 15, 17.
        let mut sb = Scoreboard {
            base: 10,
            high_rxt: 9,
            ..Default::default()
        };
        sb.mark(&[(17, 18), (15, 16), (12, 14)], 19);
        assert_eq!(sb.sacked_end(), 18);
        // DupThresh 3: three SACKed segments above 11 and 10 (13, 15, 17), not above 14.
        assert_eq!(sb.lost_below(3), 13);
        // Outstanding, not SACKed: 10, 11 (lost), 14, 16, 18, 19 → pipe 4.
        assert_eq!(sb.pipe(19, 13), 4);
        sb.high_rxt = 10; // 10 retransmitted: counted once more
        assert_eq!(sb.pipe(19, 13), 5);
        assert_eq!(sb.first_hole(13), Some(11));
        sb.advance(14);
        assert!(sb.is_sacked(15) && !sb.is_sacked(14) && !sb.is_sacked(13));
    }
}
