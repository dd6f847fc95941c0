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
/// Not a kernel bit: RACK marked the segment lost and took it off its send-ordered list
/// (`list_del_init` in `tcp_rack_detect_loss`); its next transmission puts it back. RACK's walk
/// passes it by meanwhile, as Linux's never meets it.
pub const OFF_RACK: u8 = 16;

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
    /// Written only through [`Scoreboard::set_flags`] (and [`Scoreboard::push`]), which keep
    /// the scoreboard's bits: read with [`Seg::flags`].
    flags: u8,
    /// Its last (re)transmission, ns.
    pub xmit: SimTime,
    pub tx: TxState,
}

#[derive(Debug, Clone, Default)]
pub struct Scoreboard {
    /// segs[k] is segment una + k; private so that every change of a segment's flags goes
    /// through [`Self::set_flags`] (read with [`Self::segs`]).
    segs: VecDeque<Seg>,
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
    /// One bit a segment of SND.UNA..SND.NXT, set where RACK's walk must look at it
    /// ([`walkable`]; `segment mod 64 × words`); the rest of the walk is skipped 64 segments a
    /// word (a walk over every segment on every ACK in recovery was 4 % of a BBR flow's run
    /// beside CUBIC). Kept by every change of a segment's flags, which goes through
    /// [`Self::set_flags`], [`Self::push`] or [`Self::pop_front`].
    walk: Vec<u64>,
    /// One bit a segment, in the same geometry, set where a segment waits for its
    /// retransmission ([`waits_retransmit`]): `tcp_xmit_retransmit_queue` goes from one to the
    /// next, 64 segments a word, instead of looking at every segment from SND.UNA on every
    /// call. Kept as `walk` is, by every change of a segment's flags.
    rexmit: Vec<u64>,
}

/// A segment waits for its retransmission: marked lost, neither SACKed nor retransmitted since
/// (`tcp_xmit_retransmit_queue`'s candidates).
#[inline]
pub fn waits_retransmit(flags: u8) -> bool {
    flags & (LOST | SACKED | RETRANS) == LOST
}

/// RACK's walk looks at a segment that is neither SACKed nor marked lost and waiting for its
/// retransmission (`tcp_rack_detect_loss`), nor off its list since RACK marked it ([`OFF_RACK`]).
#[inline]
pub fn walkable(flags: u8) -> bool {
    flags & (SACKED | OFF_RACK) == 0 && flags & (LOST | RETRANS) != LOST
}

impl Seg {
    /// Its `tcp_skb_cb->sacked` bits.
    #[inline]
    pub fn flags(&self) -> u8 {
        self.flags
    }
}

impl Scoreboard {
    pub fn new() -> Self {
        Scoreboard {
            highest_sack: -1,
            high_rexmit: -1,
            ..Default::default()
        }
    }

    /// The outstanding segments, SND.UNA first.
    #[inline]
    pub fn segs(&self) -> &VecDeque<Seg> {
        &self.segs
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
        if self.segs.len() + 1 > self.walk.len() * 64 {
            self.grow_walk();
        }
        let seq = self.nxt();
        self.segs.push_back(Seg { flags: 0, xmit, tx });
        // A new segment is walked and waits for nothing; its bits' last owner (the segment a
        // whole ring of bits earlier) has left through `pop_front`, which cleared them.
        self.set_bits(seq, true, false);
    }

    /// SND.UNA's segment is acknowledged: it leaves the queue, SND.UNA moves up one.
    #[inline]
    pub fn pop_front(&mut self) -> Option<Seg> {
        let seg = self.segs.pop_front()?;
        self.set_bits(self.una, false, false);
        self.una += 1;
        Some(seg)
    }

    /// Sets the flags of segment `seq` (in SND.UNA..SND.NXT).
    #[inline]
    pub fn set_flags(&mut self, seq: i64, flags: u8) {
        self.segs[(seq - self.una) as usize].flags = flags;
        self.set_bits(seq, walkable(flags), waits_retransmit(flags));
    }

    /// Segment `seq`'s bit in the walk's and in the retransmission queue's bits.
    #[inline]
    fn set_bits(&mut self, seq: i64, walk: bool, rexmit: bool) {
        let (w, bit) = self.walk_bit(seq);
        self.walk[w] = if walk {
            self.walk[w] | bit
        } else {
            self.walk[w] & !bit
        };
        self.rexmit[w] = if rexmit {
            self.rexmit[w] | bit
        } else {
            self.rexmit[w] & !bit
        };
    }

    /// The first segment of `from..SND.NXT` that waits for its retransmission
    /// ([`waits_retransmit`]), if any.
    #[inline]
    pub fn next_waiting_retransmit(&self, from: i64) -> Option<i64> {
        let mut found = None;
        self.for_set(&self.rexmit, from, |seq| {
            found = Some(seq);
            false
        });
        found
    }

    /// The walk's bit of segment `seq` is set (checks).
    pub fn walks(&self, seq: i64) -> bool {
        let (w, bit) = self.walk_bit(seq);
        self.walk[w] & bit != 0
    }

    /// The retransmission queue's bit of segment `seq` is set (checks).
    pub fn waits(&self, seq: i64) -> bool {
        let (w, bit) = self.walk_bit(seq);
        self.rexmit[w] & bit != 0
    }

    #[inline]
    fn walk_bit(&self, seq: i64) -> (usize, u64) {
        let s = seq as u64;
        ((s >> 6) as usize & (self.walk.len() - 1), 1 << (s & 63))
    }

    /// Twice the bits (a power of two of words, so that SND.UNA..SND.NXT, at most that many
    /// segments, map to distinct bits), filled again from the flags.
    #[cold]
    fn grow_walk(&mut self) {
        self.walk = vec![0; (self.walk.len() * 2).max(2)];
        self.rexmit = vec![0; self.walk.len()];
        for k in 0..self.segs.len() {
            let f = self.segs[k].flags;
            self.set_bits(self.una + k as i64, walkable(f), waits_retransmit(f));
        }
    }

    /// The segments of `from..SND.NXT` RACK's walk looks at, in order, until `go` returns
    /// false.
    #[inline]
    pub fn for_walkable(&self, from: i64, mut go: impl FnMut(i64, &Seg) -> bool) {
        self.for_set(&self.walk, from, |seq| {
            go(seq, &self.segs[(seq - self.una) as usize])
        });
    }

    /// The segments of `from..SND.NXT` whose bit is set in `bits` (the walk's or the
    /// retransmission queue's), in order, until `go` returns false; 64 segments a word.
    #[inline]
    fn for_set(&self, bits: &[u64], from: i64, mut go: impl FnMut(i64) -> bool) {
        let nxt = self.nxt();
        let mut base = from.max(self.una);
        while base < nxt {
            let (w, _) = self.walk_bit(base);
            let off = (base as u64 & 63) as u32;
            let mut word = bits[w] >> off;
            let span = 64 - off as i64;
            if nxt - base < span {
                word &= (1u64 << (nxt - base)) - 1;
            }
            while word != 0 {
                let seq = base + word.trailing_zeros() as i64;
                if !go(seq) {
                    return;
                }
                word &= word - 1;
            }
            base += span;
        }
    }

    /// `tcp_mark_skb_lost`: marks `seq` lost unless SACKed or already lost and not
    /// retransmitted since; a retransmission in flight is lost again. Returns whether it was
    /// newly marked and whether a retransmission was lost.
    pub fn mark_lost(&mut self, seq: i64) -> (bool, bool) {
        if seq < self.una || seq >= self.nxt() {
            return (false, false);
        }
        let f = self.segs[(seq - self.una) as usize].flags;
        if f & SACKED != 0 {
            return (false, false);
        }
        // Linux 6.x's `tcp_mark_skb_lost`: a segment already marked lost whose retransmission
        // is in flight has lost that retransmission too; a segment not yet marked becomes
        // lost and keeps its retransmission mark (one is left only where an undo cleared the
        // LOST marks), so that it is not sent again while that retransmission may arrive.
        if f & LOST != 0 {
            if f & RETRANS == 0 {
                return (false, false);
            }
            self.set_flags(seq, f & !RETRANS);
            self.retrans_out -= 1;
            return (true, true);
        }
        self.set_flags(seq, f | LOST);
        self.lost_out += 1;
        (true, false)
    }

    /// RACK marked `seq` lost: off its list until `seq` is sent again ([`OFF_RACK`]).
    pub fn off_rack(&mut self, seq: i64) {
        if let Some(f) = self.get(seq).map(Seg::flags) {
            self.set_flags(seq, f | OFF_RACK);
        }
    }

    /// `seq` was sent again: back on RACK's list (`tcp_update_skb_after_send`).
    pub fn on_rack(&mut self, seq: i64) {
        if let Some(f) = self.get(seq).map(Seg::flags).filter(|f| f & OFF_RACK != 0) {
            self.set_flags(seq, f & !OFF_RACK);
        }
    }

    /// Clears every LOST mark (undo: `tcp_undo_cwnd_reduction` with `unmark_loss`).
    pub fn unmark_lost(&mut self) {
        for k in 0..self.segs.len() {
            let seq = self.una + k as i64;
            self.set_flags(seq, self.segs[k].flags & !LOST);
        }
        self.lost_out = 0;
    }

    /// Heap bytes held by the queue.
    pub fn heap_bytes(&self) -> usize {
        self.segs.capacity() * std::mem::size_of::<Seg>()
            + (self.walk.capacity() + self.rexmit.capacity()) * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The walk's segments, in order: those a walk over every segment would look at.
    fn walked(sb: &Scoreboard) -> Vec<i64> {
        let mut v = Vec::new();
        sb.for_walkable(sb.una, |seq, _| {
            v.push(seq);
            true
        });
        v
    }

    /// The segments waiting for their retransmission, from one to the next through the bits.
    fn waiting(sb: &Scoreboard) -> Vec<i64> {
        let mut v = Vec::new();
        let mut from = sb.una;
        while let Some(seq) = sb.next_waiting_retransmit(from) {
            v.push(seq);
            from = seq + 1;
        }
        v
    }

    fn every_waiting(sb: &Scoreboard) -> Vec<i64> {
        (0..sb.segs.len())
            .filter(|&k| waits_retransmit(sb.segs[k].flags))
            .map(|k| sb.una + k as i64)
            .collect()
    }

    fn every_walkable(sb: &Scoreboard) -> Vec<i64> {
        (0..sb.segs.len())
            .filter(|&k| walkable(sb.segs[k].flags))
            .map(|k| sb.una + k as i64)
            .collect()
    }

    /// Through the bits' growth (8 to 512 segments), SND.UNA moving over word and ring
    /// boundaries, SACKs, losses, retransmissions and an undo, the walk looks at exactly the
    /// segments neither SACKed nor lost and waiting, in order, and stops where told; the
    /// retransmission queue's bits give exactly the segments waiting for a retransmission.
    #[test]
    fn the_walk_looks_at_exactly_the_walkable_segments() {
        let mut sb = Scoreboard::new();
        let mut x = 12345u64;
        for round in 0..40 {
            for _ in 0..(round * 7) % 90 + 5 {
                sb.push(0, TxState::default());
            }
            for k in 0..sb.segs.len() {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let seq = sb.una + k as i64;
                match x >> 61 {
                    0 => sb.set_flags(seq, sb.segs[k].flags | SACKED),
                    1 => {
                        sb.mark_lost(seq);
                    }
                    2 if sb.segs[k].flags & (RETRANS | SACKED) == 0 => {
                        sb.set_flags(seq, sb.segs[k].flags | RETRANS | EVER_RETRANS);
                        sb.retrans_out += 1;
                    }
                    3 => sb.off_rack(seq),
                    4 => sb.on_rack(seq),
                    _ => {}
                }
            }
            if round % 9 == 8 {
                sb.unmark_lost();
            }
            assert_eq!(walked(&sb), every_walkable(&sb), "round {round}");
            assert_eq!(waiting(&sb), every_waiting(&sb), "round {round}");
            for _ in 0..(round * 13) % 70 {
                sb.pop_front();
            }
            assert_eq!(
                walked(&sb),
                every_walkable(&sb),
                "round {round}, after the ACK"
            );
            assert_eq!(
                waiting(&sb),
                every_waiting(&sb),
                "round {round}, after the ACK"
            );
        }
        assert!(sb.walk.len() * 64 >= 256, "the bits grew");
        let all = every_walkable(&sb);
        let mut first_three = Vec::new();
        sb.for_walkable(sb.una, |seq, _| {
            first_three.push(seq);
            first_three.len() < 3
        });
        assert_eq!(first_three, all[..3.min(all.len())]);
    }
}
