//! The retransmission queue's per-segment state, as Linux keeps it in each skb's
//! `tcp_skb_cb->sacked` (net/ipv4/tcp_input.c, include/net/tcp.h), and the counters of
//! RFC 6675's pipe as `tcp_packets_in_flight` computes it:
//!
//! in_flight = packets_out − (sacked_out + lost_out) + retrans_out.
//!
//! A segment is SACKED (`TCPCB_SACKED_ACKED`), LOST (`TCPCB_LOST`), a retransmission in
//! flight (`TCPCB_SACKED_RETRANS`) and/or was ever retransmitted (`TCPCB_EVER_RETRANS`). The
//! queue holds SND.UNA..SND.NXT, one entry per segment, with the segment's last transmission
//! time and its delivery-rate state ([`super::rate::TxState`]).

use std::collections::VecDeque;

use super::rate::TxState;
use crate::units::SimTime;

pub const SACKED: u8 = 1;
pub const LOST: u8 = 2;
pub const RETRANS: u8 = 4;
pub const EVER_RETRANS: u8 = 8;

/// `lo..hi` less the ranges of `known`, sorted by their start (empty ones, `(0, 0)`,
/// ignored), as at most four ascending pieces: the pieces and how many.
#[inline]
pub fn uncovered(lo: i64, hi: i64, known: &[(i64, i64); 3]) -> ([(i64, i64); 4], usize) {
    debug_assert!(known.windows(2).all(|w| w[0] <= w[1]), "sorted");
    let mut out = [(0, 0); 4];
    let mut n = 0;
    let mut start = lo;
    for &(s, e) in known {
        if e <= s || e <= start || s >= hi {
            continue;
        }
        if s > start {
            out[n] = (start, s);
            n += 1;
        }
        start = e;
        if start >= hi {
            break;
        }
    }
    if start < hi {
        out[n] = (start, hi);
        n += 1;
    }
    (out, n)
}

/// One outstanding segment.
#[derive(Debug, Clone, Copy, Default)]
pub struct Seg {
    pub flags: u8,
    /// Its last (re)transmission, ns.
    pub xmit: SimTime,
    pub tx: TxState,
}

#[derive(Debug, Clone, Default)]
pub struct Scoreboard {
    /// segs[k] is segment una + k.
    pub segs: VecDeque<Seg>,
    /// SND.UNA.
    pub una: i64,
    pub sacked_out: u32,
    pub lost_out: u32,
    pub retrans_out: u32,
    /// The highest SACKed segment (-1: none above SND.UNA).
    pub highest_sack: i64,
    /// The highest segment ever retransmitted (a tail loss probe included; -1: none). Above
    /// it every segment was sent once, in sequence order, so send times do not decrease
    /// with the sequence number there (what lets RACK stop early: [`super::rack`]).
    pub high_rexmit: i64,
    /// The last ACK's SACK blocks (D-SACK left out), clipped to SND.UNA..SND.NXT when they
    /// were tagged: every segment in them is SACKED (a mark never cleared).
    pub sack_cache: [(i64, i64); 3],
}

impl Scoreboard {
    pub fn new() -> Self {
        Scoreboard {
            highest_sack: -1,
            high_rexmit: -1,
            ..Default::default()
        }
    }

    /// SND.NXT.
    #[inline]
    pub fn nxt(&self) -> i64 {
        self.una + self.segs.len() as i64
    }

    /// `packets_out`: segments sent and not cumulatively acknowledged.
    #[inline]
    pub fn packets_out(&self) -> u32 {
        self.segs.len() as u32
    }

    /// `tcp_packets_in_flight` (RFC 6675 pipe).
    #[inline]
    pub fn in_flight(&self) -> u32 {
        (self.packets_out() + self.retrans_out).saturating_sub(self.sacked_out + self.lost_out)
    }

    /// `tcp_left_out`.
    pub fn left_out(&self) -> u32 {
        self.sacked_out + self.lost_out
    }

    #[inline]
    pub fn get(&self, seq: i64) -> Option<&Seg> {
        if seq < self.una {
            return None;
        }
        self.segs.get((seq - self.una) as usize)
    }

    #[inline]
    pub fn get_mut(&mut self, seq: i64) -> Option<&mut Seg> {
        if seq < self.una {
            return None;
        }
        self.segs.get_mut((seq - self.una) as usize)
    }

    /// A new segment (SND.NXT) leaves.
    pub fn push(&mut self, xmit: SimTime, tx: TxState) {
        self.segs.push_back(Seg { flags: 0, xmit, tx });
    }

    /// `tcp_mark_skb_lost`: marks `seq` lost unless SACKed or already lost and not
    /// retransmitted since; a retransmission in flight is lost again. Returns whether it was
    /// newly marked and whether a retransmission was lost.
    pub fn mark_lost(&mut self, seq: i64) -> (bool, bool) {
        if seq < self.una || seq >= self.nxt() {
            return (false, false);
        }
        let s = &mut self.segs[(seq - self.una) as usize];
        if s.flags & SACKED != 0 {
            return (false, false);
        }
        let mut lost_retrans = false;
        let mut newly = false;
        let f = s.flags;
        s.flags = (f & !RETRANS) | LOST;
        if f & RETRANS != 0 {
            lost_retrans = true;
            self.retrans_out -= 1;
            newly = true;
        }
        if f & LOST == 0 {
            self.lost_out += 1;
            newly = true;
        }
        (newly, lost_retrans)
    }

    /// Clears every LOST mark (undo: `tcp_undo_cwnd_reduction` with `unmark_loss`).
    pub fn unmark_lost(&mut self) {
        for s in self.segs.iter_mut() {
            s.flags &= !LOST;
        }
        self.lost_out = 0;
    }

    /// Heap bytes held by the queue.
    pub fn heap_bytes(&self) -> usize {
        self.segs.capacity() * std::mem::size_of::<Seg>()
    }
}
