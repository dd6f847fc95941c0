//! TCP receiver (ns-2 `TCPSink` / `TCPSink/DelAck`): acknowledges the highest in-order
//! sequence number received. Out-of-order segments are remembered as blocks of contiguous
//! segments, so a retransmission that fills a hole advances the cumulative ACK past everything
//! behind it.
//!
//! ECN-Echo follows RFC 3168 §6.1.3 as ns-2 does (set by CE, held until CWR), or for DCTCP
//! RFC 8257 §3.2: each ACK echoes the CE state of the segments it covers, and with delayed
//! ACKs a change of that state first acknowledges the held segment at once with the old
//! state ([`TcpSink::dctcp_ce_change`]).
//!
//! With SACK (RFC 2018 §4) every ACK reports up to three blocks of out-of-order data, the
//! first holding the segment that arrived last, then the blocks most recently reported.

use crate::units::SimTime;

#[derive(Debug, Clone, Default)]
pub struct TcpSink {
    /// Next in-order sequence number expected.
    pub next: u64,
    /// The segments held above `next`, as blocks `[left, right)` in order, neither
    /// overlapping nor touching (every `left > next`): what a SACK block reports is one of
    /// them, found without walking the segments (a ring of one flag a segment, walked both
    /// ways from a segment to report its block, was 3.5 % of the instructions beside BBR).
    ooo: Vec<(u64, u64)>,
    /// Segments held in `ooo`.
    held: u32,
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
    /// RFC 8257 §3.2 echo (DCTCP) instead of RFC 3168's.
    dctcp: bool,
    /// DCTCP.CE: the CE state of the last ECN-capable segment received.
    ce_state: bool,
    /// RFC 2018 SACK: one out-of-order segment of each of the most recently changed blocks,
    /// newest first (`u64::MAX`: none).
    sack_recent: Option<[u64; 3]>,
    /// Linux's receiver (net/ipv4/tcp_input.c): quick ACKs at the start, D-SACK blocks.
    linux: bool,
    /// Quick-ACK mode: this many more segments are acknowledged at once (`icsk_ack.quick`).
    quick: u32,
    /// A duplicate segment to report in the next ACK's first block (RFC 2883 D-SACK).
    dsack: Option<u64>,
    /// Linux's receive-window growth, which asks for quick ACKs while the window grows.
    rcv: super::linux::rcv_space::RcvSpace,
}

/// `TCP_MAX_QUICKACKS`.
const MAX_QUICKACKS: u32 = 16;

/// SACK blocks of one ACK: [left edge, right edge) in segments, newest first; (0, 0) unused.
pub type SackBlocks = [(u64, u64); 3];

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
        self.ooo.capacity() * std::mem::size_of::<(u64, u64)>()
    }

    /// A sink with delayed ACKs or not, echoing ECN as DCTCP's receiver (`dctcp`) or as
    /// RFC 3168's.
    pub fn new(delayed: bool, dctcp: bool) -> Self {
        TcpSink {
            delayed,
            dctcp,
            ..Default::default()
        }
    }

    /// ns-2's sink for a sender of configuration `t` (SACK blocks when it uses them).
    pub fn ns2(t: &super::tcp::TcpConfig) -> Self {
        let mut s = TcpSink::new(t.delayed_ack, t.variant.dctcp_receiver());
        if t.uses_sack() {
            s.sack_recent = Some([u64::MAX; 3]);
        }
        s
    }

    /// Linux's receiver for a sender of configuration `t`: SACK and D-SACK blocks, quick
    /// ACKs at the start.
    pub fn linux(t: &super::tcp::TcpConfig) -> Self {
        TcpSink {
            sack_recent: Some([u64::MAX; 3]),
            linux: true,
            quick: MAX_QUICKACKS,
            ..TcpSink::new(t.delayed_ack, t.variant.dctcp_receiver())
        }
    }

    /// The window the next ACK offers, in segments: Linux's receiver's (`u32::MAX`, no limit
    /// but the sender's `window`, before its first segment); None for ns-2's, whose sender's
    /// window is its fixed `window`.
    pub fn select_window(&mut self) -> Option<u32> {
        self.linux
            .then(|| self.rcv.select_window(self.next).unwrap_or(u32::MAX))
    }

    /// Its ACKs offer a window (Linux's receiver).
    pub fn offers_window(&self) -> bool {
        self.linux
    }

    /// Its ACKs carry SACK blocks ([`TcpSink::sack_blocks`] is never None).
    pub fn sends_sack(&self) -> bool {
        self.sack_recent.is_some()
    }

    /// The SACK blocks for the ACK about to be sent (None without SACK); a pending D-SACK
    /// goes first (RFC 2883 §4) and is reported once.
    #[inline]
    pub fn sack_blocks(&mut self) -> Option<SackBlocks> {
        let mut b = self.sack_recent.as_ref().map(|r| self.blocks(r))?;
        if let Some(d) = self.dsack.take() {
            b = [(d, d + 1), b[0], b[1]];
        }
        Some(b)
    }

    fn blocks(&self, recent: &[u64; 3]) -> SackBlocks {
        let mut out: SackBlocks = [(0, 0); 3];
        let mut n = 0;
        for &s in recent {
            if let Some(b) = self.block_of(s) {
                if !out[..n].contains(&b) {
                    out[n] = b;
                    n += 1;
                }
            }
        }
        out
    }

    /// The block of out-of-order data holding segment `s`, if it is held.
    fn block_of(&self, s: u64) -> Option<(u64, u64)> {
        if s == u64::MAX || s <= self.next {
            return None;
        }
        let i = self.blocks_from(s);
        self.ooo
            .get(i.wrapping_sub(1))
            .copied()
            .filter(|&(_, r)| s < r)
    }

    /// How many blocks start at or below segment `s` (the one that may hold it is the last of
    /// them).
    #[inline]
    fn blocks_from(&self, s: u64) -> usize {
        self.ooo.partition_point(|&(l, _)| l <= s)
    }

    /// Segment `s` (above `next`) is held.
    fn holds(&self, s: u64) -> bool {
        self.block_of(s).is_some()
    }

    fn note_sack(&mut self, seq: u64) {
        if self.sack_recent.is_none() {
            return;
        }
        let Some(block) = self.block_of(seq) else {
            return;
        };
        let Some(recent) = self.sack_recent.as_mut() else {
            return;
        };
        // Entries of the same (possibly merged) block give way to the newest arrival.
        let mut kept = [u64::MAX; 3];
        kept[0] = seq;
        let mut n = 1;
        for &r in recent.iter() {
            if n < 3 && r != u64::MAX && !(block.0..block.1).contains(&r) {
                kept[n] = r;
                n += 1;
            }
        }
        *recent = kept;
    }

    /// DCTCP (RFC 8257 §3.2): a segment with CE state `ce` arrives. If that changes the state
    /// while a delayed ACK is held, the held ACK must go out now, before the segment is
    /// recorded, carrying the old state: returns true (and the held ACK is no longer pending).
    pub fn dctcp_ce_change(&mut self, ce: bool) -> bool {
        if !self.dctcp || ce == self.ce_state {
            return false;
        }
        std::mem::take(&mut self.pending)
    }

    /// Notes the ECN codepoint and flags of an arriving segment: ECN-capable (`ect`),
    /// Congestion Experienced (`ce`), carrying CWR, or carrying ECE without ECT (ns-2's
    /// negotiation on segment 0).
    pub fn on_ecn(&mut self, ect: bool, ce: bool, cwr: bool, ece: bool) {
        if self.dctcp && (ect || !ece) {
            self.ce_state = ect && ce;
        }
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
        if self.dctcp {
            return self.ce_state || seen & SEEN_NEGOTIATION != 0;
        }
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

    /// Records segment `seq` of `len` bytes, arrived at `now`, and returns how to acknowledge
    /// it. Linux's receiver grows its window from
    /// the segments and their timing ([`RcvSpace`](super::linux::rcv_space::RcvSpace)); ns-2's
    /// uses neither.
    pub fn on_arrival(&mut self, seq: u64, now: SimTime, len: u32) -> SinkAction {
        if !self.linux {
            return self.on_data(seq);
        }
        // the window counts payload (`skb->len`): the segment less its headers
        let len = crate::packet::tcp_payload_bytes(len);
        self.rcv.on_segment(now, len, self.next);
        let action = self.on_data_linux(seq, now, len);
        // the application reads what arrived in order (`tcp_rcv_space_adjust`)
        self.rcv.on_read(now, len, self.next);
        action
    }

    /// Records segment `seq` and returns how to acknowledge it (no window growth: the linux
    /// receiver's timing comes through [`TcpSink::on_arrival`]).
    pub fn on_data(&mut self, seq: u64) -> SinkAction {
        if self.linux {
            return self.on_data_linux(seq, 0, 0);
        }
        let in_order = seq == self.next;
        let before = self.receive(seq);
        // As ns-2's DelAckSink: out of order, in order below the highest segment seen (it
        // filled a hole, all of it or the first of several: RFC2581_immediate_ack_), or
        // segment 0 (SYN_immediate_ack_): ACK at once.
        let below_max_seen = self.next - before > 1 || self.held > 0;
        if !self.delayed || !in_order || below_max_seen || seq == 0 {
            self.pending = false;
            return SinkAction::AckNow;
        }
        self.every_second()
    }

    /// Takes segment `seq` into the sequence space (in order: the cumulative point advances
    /// over any segments held above it; above it: held and SACKed; below it: nothing) and
    /// counts the goodput; returns the cumulative point before it.
    fn receive(&mut self, seq: u64) -> u64 {
        let before = self.next;
        if seq == self.next {
            self.next += 1;
            if let Some(&(l, r)) = self.ooo.first() {
                if l == self.next {
                    self.next = r;
                    self.held -= (r - l) as u32;
                    self.ooo.remove(0);
                }
            }
        } else if seq > self.next {
            self.hold(seq);
            self.note_sack(seq);
        }
        self.goodput_pkts += self.next - before;
        debug_assert_eq!(
            self.held as u64,
            self.ooo.iter().map(|&(l, r)| r - l).sum::<u64>()
        );
        before
    }

    /// Holds segment `seq` (above `next`) in its block, joining the blocks it touches.
    fn hold(&mut self, seq: u64) {
        let i = self.blocks_from(seq);
        let below = i.checked_sub(1).map(|j| self.ooo[j].1);
        if below.is_some_and(|r| seq < r) {
            return; // already held
        }
        self.held += 1;
        let joins_below = below == Some(seq);
        let joins_above = self.ooo.get(i).is_some_and(|&(l, _)| l == seq + 1);
        match (joins_below, joins_above) {
            (true, true) => {
                self.ooo[i - 1].1 = self.ooo[i].1;
                self.ooo.remove(i);
            }
            (true, false) => self.ooo[i - 1].1 = seq + 1,
            (false, true) => self.ooo[i].0 = seq,
            (false, false) => self.ooo.insert(i, (seq, seq + 1)),
        }
    }

    /// The delayed ACK of both receivers: every second in-order segment at once, the first
    /// held for the timer.
    fn every_second(&mut self) -> SinkAction {
        if self.pending {
            self.pending = false;
            SinkAction::AckNow
        } else {
            self.pending = true;
            SinkAction::Delay
        }
    }
}

impl TcpSink {
    /// Linux's receiver (`tcp_data_queue`, `tcp_event_data_recv`, `__tcp_ack_snd_check`): a
    /// duplicate is answered at once with a D-SACK; out-of-order data, data filling a hole, the
    /// first `TCP_MAX_QUICKACKS` segments and every in-order segment that grows the window
    /// (`tcp_grow_window`: `icsk_ack.quick |= 1`) are acknowledged at once; otherwise every
    /// second segment, or the delayed-ACK timer. Every ACK sent for data takes one from the
    /// quick-ACK count (`tcp_dec_quickack_mode`). `len` 0: no window growth.
    fn on_data_linux(&mut self, seq: u64, now: SimTime, len: u32) -> SinkAction {
        let dup = seq < self.next || (seq > self.next && self.holds(seq));
        if dup {
            self.dsack = Some(seq);
            self.pending = false;
            return SinkAction::AckNow;
        }
        let had_ooo = self.held > 0;
        let before = self.receive(seq); // seq >= next here: duplicates were answered above
        if seq == before && self.rcv.on_in_order(now, len, self.next) {
            self.quick |= 1;
        }
        if seq != before || had_ooo || !self.delayed || self.quick > 0 {
            self.quick = self.quick.saturating_sub(1);
            self.pending = false;
            return SinkAction::AckNow;
        }
        self.every_second()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Against a set of the segments received: the cumulative point, the count held
        /// above it, and the block every segment above it is reported in (the longest run of
        /// held segments around it), after every arrival, in any order, duplicates included.
        #[test]
        fn the_blocks_are_the_runs_of_held_segments(
            arrivals in proptest::collection::vec(0u64..60, 1..200),
        ) {
            let mut s = TcpSink::new(false, false);
            s.sack_recent = Some([u64::MAX; 3]);
            let mut got = std::collections::BTreeSet::new();
            for a in arrivals {
                s.receive(a);
                got.insert(a);
                let next = (0..).find(|q| !got.contains(q)).unwrap();
                prop_assert_eq!(s.next, next);
                prop_assert_eq!(s.held as usize, got.range(next..).count());
                for q in next..62 {
                    let run = got.contains(&q).then(|| {
                        let lo = (next..=q).rev().take_while(|x| got.contains(x)).last().unwrap();
                        let hi = (q..).take_while(|x| got.contains(x)).last().unwrap() + 1;
                        (lo, hi)
                    });
                    prop_assert_eq!(s.block_of(q), run, "segment {}", q);
                }
            }
        }
    }

    #[test]
    fn cumulative_acks_with_a_hole() {
        let mut s = TcpSink::new(false, false);
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
        let mut s = TcpSink::new(false, false);
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
    fn dctcp_echo_reflects_each_segments_ce_state() {
        // RFC 8257 §3.2: no latching until CWR; the echo follows CE segment by segment.
        let mut s = TcpSink::new(false, true);
        s.on_ecn(false, false, false, true); // the negotiation is answered
        assert!(s.take_ece());
        for (ce, cwr) in [(true, false), (false, false), (true, true), (true, false)] {
            assert!(!s.dctcp_ce_change(ce), "no held ACK without delayed ACKs");
            s.on_ecn(true, ce, cwr, false);
            assert_eq!(s.take_ece(), ce);
        }
        // The RFC 3168 sink would have kept echoing after the first CE.
        let mut s = TcpSink::new(false, false);
        s.on_ecn(true, true, false, false);
        s.take_ece();
        s.on_ecn(true, false, false, false);
        assert!(s.take_ece());
    }

    #[test]
    fn dctcp_delayed_ack_flushed_when_ce_state_changes() {
        let mut s = TcpSink::new(true, true);
        assert_eq!(s.on_data(0), SinkAction::AckNow);
        s.take_ece();
        // Segment 1 (not CE) is held; segment 2 arrives CE: the held ACK goes first, not CE.
        assert!(!s.dctcp_ce_change(false));
        s.on_ecn(true, false, false, false);
        assert_eq!(s.on_data(1), SinkAction::Delay);
        assert!(s.dctcp_ce_change(true));
        assert!(!s.pending);
        assert_eq!((s.ackno(), s.take_ece()), (1, false));
        s.on_ecn(true, true, false, false);
        assert_eq!(s.on_data(2), SinkAction::Delay);
        // Segment 3 also CE: the state did not change, one ACK for both, with ECE.
        assert!(!s.dctcp_ce_change(true));
        s.on_ecn(true, true, false, false);
        assert_eq!(s.on_data(3), SinkAction::AckNow);
        assert_eq!((s.ackno(), s.take_ece()), (3, true));
    }

    #[test]
    fn sack_blocks_newest_first_as_rfc_2018() {
        // RFC 2018 §4's rules: segments 0..=1 in order, then 3, 5, 6, 8 (holes 2, 4, 7).
        let mut s = TcpSink::new(false, false);
        s.sack_recent = Some([u64::MAX; 3]);
        for q in [0, 1, 3] {
            s.on_data(q);
        }
        assert_eq!(s.sack_blocks(), Some([(3, 4), (0, 0), (0, 0)]));
        s.on_data(5);
        s.on_data(6);
        assert_eq!(s.sack_blocks(), Some([(5, 7), (3, 4), (0, 0)]));
        s.on_data(8);
        assert_eq!(s.sack_blocks(), Some([(8, 9), (5, 7), (3, 4)]));
        // 4 fills a hole between two blocks: they merge, and the merged block comes first.
        s.on_data(4);
        assert_eq!(s.sack_blocks(), Some([(3, 7), (8, 9), (0, 0)]));
        // 2 fills the first hole: the cumulative ACK passes 3..7; 8 is still reported.
        s.on_data(2);
        assert_eq!(s.ackno(), 6);
        assert_eq!(s.sack_blocks(), Some([(8, 9), (0, 0), (0, 0)]));
        assert_eq!(TcpSink::new(false, false).sack_blocks(), None);
    }

    #[test]
    fn delayed_ack_every_second_segment() {
        let mut s = TcpSink::new(true, false);
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
        let mut s = TcpSink::new(true, false);
        assert_eq!(s.on_data(0), SinkAction::AckNow);
        assert_eq!(s.on_data(2), SinkAction::AckNow);
        assert_eq!(s.on_data(4), SinkAction::AckNow);
        assert_eq!(s.on_data(1), SinkAction::AckNow); // releases 1, 2; 4 still above
        assert_eq!(s.ackno(), 2);
        assert_eq!(s.on_data(3), SinkAction::AckNow); // releases 3, 4
        assert_eq!(s.on_data(5), SinkAction::Delay);
    }
}
