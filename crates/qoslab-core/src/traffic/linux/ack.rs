//! `tcp_ack` (net/ipv4/tcp_input.c): an ACK's SACK blocks are tagged first
//! (`tcp_sacktag_write_queue`; a first block below the cumulative ACK or inside the second is
//! a D-SACK, RFC 2883), then the cumulative ACK frees the queue (`tcp_clean_rtx_queue`). Both
//! deliver segments to the rate sampler and to RACK. The RTT sample is the oldest newly
//! acknowledged never-retransmitted segment's (or, without one, the oldest newly SACKed
//! one's), and the module's the newest's; then come loss detection and the state machine
//! ([`super::recovery`]), the rate sample, `tcp_cong_control` and the transmissions.

use super::cc::{CaState, LinuxCongestion};
use super::rate::RateSample;
use super::recovery::Rexmit;
use super::scoreboard::{EVER_RETRANS, LOST, RETRANS, SACKED};
use super::{Io, Linux, Timer};
use crate::traffic::sink::SackBlocks;
use crate::units::SimTime;

// `tcp_ack`'s flags.
pub const DATA_ACKED: u32 = 1;
pub const DATA_SACKED: u32 = 2;
pub const ECE: u32 = 4;
pub const SND_UNA_ADVANCED: u32 = 8;
pub const DSACKING_ACK: u32 = 16;
pub const ORIG_SACK_ACKED: u32 = 32;
pub const RETRANS_DATA_ACKED: u32 = 64;
pub const SET_XMIT_TIMER: u32 = 128;
pub const LOST_RETRANS: u32 = 256;
pub const DSACK_TLP: u32 = 512;

/// Timing of one ACK's deliveries (`tcp_sacktag_state`).
#[derive(Default)]
struct Times {
    first_ackt: Option<SimTime>,
    last_ackt: Option<SimTime>,
    first_sackt: Option<SimTime>,
    last_sackt: Option<SimTime>,
}

impl Linux {
    /// An ACK for everything below `ackno + 1`, with ECN-Echo if `ece` and up to three SACK
    /// blocks ([left, right) segments; (0, 0) unused).
    pub fn on_ack(
        &mut self,
        now: SimTime,
        ackno: i64,
        ece: bool,
        blocks: &SackBlocks,
        io: &mut Io,
    ) {
        io.stats.acks_received += 1;
        let ack = ackno + 1;
        let prior_una = self.sb.una;
        if ack < prior_una || ack > self.sb.nxt() {
            return; // old or impossible
        }
        self.sync_conn(now, io.pacer);
        let prior_in_flight = self.sb.in_flight();
        let prior_delivered = self.rate.delivered;
        let prior_lost = self.conn.lost;
        let prior_packets = self.sb.packets_out();
        let mut rs = RateSample::default();
        rs.prior_in_flight = prior_in_flight;
        let mut flag = 0;
        let mut t = Times::default();
        if ece && self.ecn {
            flag |= ECE;
        }
        if ack > prior_una {
            flag |= SND_UNA_ADVANCED;
            self.retransmits = 0;
        }
        if blocks[0].1 > blocks[0].0 {
            self.sacktag(now, prior_una, blocks, &mut flag, &mut t, &mut rs);
        }
        if prior_packets > 0 {
            self.clean_rtx_queue(now, ack, &mut flag, &mut t, &mut rs);
        }
        // tcp_rack_update_reo_wnd
        if rs.prior_delivered > 0 || rs.delivered.is_some() {
            if rs.prior_delivered < self.rack.last_delivered {
                self.rack.dsack_seen = false;
            }
            if self.rack.dsack_seen {
                self.rack.reo_wnd_steps = (self.rack.reo_wnd_steps + 1).min(0xff);
                self.rack.dsack_seen = false;
                self.rack.last_delivered = self.rate.delivered;
                self.rack.reo_wnd_persist = super::rack::RECOVERY_THRESH;
            } else if self.rack.reo_wnd_persist == 0 {
                self.rack.reo_wnd_steps = 1;
            }
        }
        self.sync_conn(now, io.pacer);
        self.cc.in_ack_event(&mut self.conn);
        if self.tlp_high_seq.is_some() {
            self.process_tlp_ack(ack, flag);
        }
        let dubious = flag & SND_UNA_ADVANCED == 0
            || flag & (DATA_SACKED | ECE) != 0
            || self.conn.ca_state != CaState::Open;
        let mut rexmit = Rexmit::None;
        if dubious {
            let dupack = flag & (SND_UNA_ADVANCED | DSACKING_ACK) == 0;
            rexmit = self.fastretrans_alert(now, prior_una, dupack, &mut flag, io.stats);
        }
        if flag & SET_XMIT_TIMER != 0 {
            self.set_xmit_timer(now);
        }
        let delivered = (self.rate.delivered - prior_delivered) as u32;
        let lost = (self.conn.lost - prior_lost) as u32;
        let min_rtt = self.rtt.min_rtt_ns();
        self.rate.gen(now, delivered, lost, min_rtt, &mut rs);
        self.sync_conn(now, io.pacer);
        self.cong_control(&mut rs, flag);
        #[cfg(test)]
        {
            self.last_rs = rs;
        }
        // tcp_xmit_recovery
        match rexmit {
            Rexmit::None => {}
            Rexmit::New => {
                let before = self.sb.nxt();
                self.write_xmit(now, io);
                if self.sb.nxt() <= self.high_seq.max(before) {
                    self.frto = false;
                    self.xmit_retransmit_queue(now, io);
                }
            }
            Rexmit::Lost => self.xmit_retransmit_queue(now, io),
        }
        self.write_xmit(now, io);
        if self.sb.packets_out() == 0 {
            self.timer = Timer::None;
            self.deadline = None;
        }
    }

    /// `tcp_sacktag_write_queue`.
    fn sacktag(
        &mut self,
        now: SimTime,
        prior_una: i64,
        blocks: &SackBlocks,
        flag: &mut u32,
        t: &mut Times,
        rs: &mut RateSample,
    ) {
        // tcp_check_dsack: the first block is a D-SACK when below the cumulative ACK or
        // inside the second block.
        let (s0, e0) = (blocks[0].0 as i64, blocks[0].1 as i64);
        let b1 = blocks[1];
        let dsack = e0 <= prior_una.max(self.sb.una)
            || (b1.1 > b1.0 && s0 >= b1.0 as i64 && e0 <= b1.1 as i64);
        if dsack {
            *flag |= DSACKING_ACK;
            self.rack.dsack_seen = true;
            if let Some(m) = self.undo_marker {
                if e0 <= prior_una && e0 > m && self.undo_retrans > 0 {
                    self.undo_retrans = (self.undo_retrans - (e0 - s0) as i32).max(0);
                }
            }
            if self.tlp_high_seq.is_some_and(|h| e0 == h) && self.tlp_retrans {
                *flag |= DSACK_TLP;
            }
        }
        let min_rtt = self.rtt.min_rtt_ns();
        let high_seq = self.high_seq;
        // The last ACK's blocks were tagged in full and SACKED is never cleared: their
        // segments are skipped (they would be, one by one, below), as Linux skips what its
        // `recv_sack_cache` says was already processed.
        let mut known = self.sb.sack_cache;
        known.sort_unstable();
        let mut tagged = [(0i64, 0i64); 3];
        for (i, &(bs, be)) in blocks.iter().enumerate() {
            if be <= bs {
                continue;
            }
            let is_dup = dsack && i == 0;
            let lo = (bs as i64).max(self.sb.una);
            let hi = (be as i64).min(self.sb.nxt());
            let (pieces, n) = if is_dup {
                ([(lo, hi); 4], 1)
            } else {
                tagged[i] = (lo, hi);
                super::scoreboard::uncovered(lo, hi, &known)
            };
            for seq in pieces[..n].iter().flat_map(|&(a, b)| a..b) {
                let una = self.sb.una;
                let seg = &self.sb.segs()[(seq - una) as usize];
                if is_dup {
                    if seg.flags() & EVER_RETRANS != 0
                        && self.undo_marker.is_some_and(|m| seq >= m)
                        && self.undo_retrans > 0
                    {
                        self.undo_retrans -= 1;
                    }
                    continue;
                }
                if seg.flags() & SACKED != 0 {
                    continue;
                }
                // tcp_sacktag_one
                let flags = seg.flags();
                if flags & (RETRANS | EVER_RETRANS) == 0 {
                    if seq < self.sb.highest_sack {
                        self.rack.reord_seen = true;
                    }
                    if seq < high_seq {
                        *flag |= ORIG_SACK_ACKED;
                    }
                    if t.first_sackt.is_none() {
                        t.first_sackt = Some(seg.xmit);
                    }
                    t.last_sackt = Some(seg.xmit);
                }
                let xmit = seg.xmit;
                self.rack
                    .advance(now, seq, xmit, flags & EVER_RETRANS != 0, min_rtt);
                if flags & LOST != 0 {
                    self.sb.lost_out -= 1;
                }
                if flags & RETRANS != 0 {
                    self.sb.retrans_out -= 1;
                }
                self.sb.set_flags(seq, (flags | SACKED) & !(LOST | RETRANS));
                let seg_tx = self.sb.segs()[(seq - una) as usize].tx;
                self.sb.sacked_out += 1;
                if !self.rate_cum_only {
                    self.rate.delivered += 1;
                    if *flag & ECE != 0 {
                        self.rate.delivered_ce += 1;
                    }
                    let mut tx = seg_tx;
                    self.rate.skb_delivered(
                        &mut tx,
                        seq,
                        xmit,
                        flags & EVER_RETRANS != 0,
                        true,
                        rs,
                    );
                    if let Some(s) = self.sb.get_mut(seq) {
                        s.tx = tx;
                    }
                }
                if seq > self.sb.highest_sack {
                    self.sb.highest_sack = seq;
                }
                *flag |= DATA_SACKED;
            }
        }
        self.sb.sack_cache = tagged;
    }

    /// `tcp_clean_rtx_queue`: frees SND.UNA..`ack`.
    fn clean_rtx_queue(
        &mut self,
        now: SimTime,
        ack: i64,
        flag: &mut u32,
        t: &mut Times,
        rs: &mut RateSample,
    ) {
        let min_rtt = self.rtt.min_rtt_ns();
        let prior_una = self.sb.una;
        let mut acked = 0u32;
        while self.sb.una < ack {
            let seq = self.sb.una;
            let Some(mut seg) = self.sb.pop_front() else {
                break;
            };
            acked += 1;
            let f = seg.flags();
            if f & (RETRANS | EVER_RETRANS) != 0 {
                if f & RETRANS != 0 {
                    self.sb.retrans_out -= 1;
                }
                *flag |= RETRANS_DATA_ACKED;
            } else if f & SACKED == 0 {
                t.last_ackt = Some(seg.xmit);
                if t.first_ackt.is_none() {
                    t.first_ackt = Some(seg.xmit);
                }
                if seq < self.high_seq {
                    *flag |= ORIG_SACK_ACKED;
                }
            }
            if f & SACKED != 0 {
                self.sb.sacked_out -= 1;
                if self.rate_cum_only {
                    self.rate.delivered += 1;
                }
            } else {
                self.rate.delivered += 1;
                if *flag & ECE != 0 {
                    self.rate.delivered_ce += 1;
                }
                self.rack
                    .advance(now, seq, seg.xmit, f & EVER_RETRANS != 0, min_rtt);
            }
            if f & LOST != 0 {
                self.sb.lost_out -= 1;
            }
            self.rate
                .skb_delivered(&mut seg.tx, seq, seg.xmit, f & EVER_RETRANS != 0, false, rs);
        }
        if self.sb.highest_sack < self.sb.una {
            self.sb.highest_sack = -1;
        }
        if acked > 0 {
            *flag |= DATA_ACKED;
        }
        // RTT samples (tcp_ack_update_rtt): Karn's rule through RETRANS_DATA_ACKED.
        let mut seq_rtt = None;
        let mut ca_rtt = None;
        if let (Some(f), Some(l)) = (t.first_ackt, t.last_ackt) {
            if *flag & RETRANS_DATA_ACKED == 0 {
                seq_rtt = Some(now - f);
                ca_rtt = Some(now - l);
            }
        }
        let mut sack_rtt = None;
        if let (Some(f), Some(l)) = (t.first_sackt, t.last_sackt) {
            sack_rtt = Some(now - f);
            ca_rtt = Some(now - l);
        }
        rs.rtt = ca_rtt;
        let sample = seq_rtt.or(sack_rtt);
        if let Some(r) = sample {
            if let Some(c) = ca_rtt {
                self.rtt.update_min(now, c);
            }
            self.rtt.sample(r, self.sb.una, self.sb.nxt());
            self.backoff = 0;
        }
        if self.sb.una > prior_una || sample.is_some() {
            *flag |= SET_XMIT_TIMER;
        }
        // Every ACK that reaches tcp_clean_rtx_queue, SACK-only ones included, gives the
        // module its RTT sample (`ack_sample.rtt_us`: the newest (S)ACKed segment's).
        self.sync_conn_fields();
        self.cc.pkts_acked(&mut self.conn, acked, ca_rtt);
        // FASTRETRANS_DEBUG (1 in include/net/tcp.h): with nothing outstanding every count is
        // 0; one that is not leaked and is reset. retrans_out leaks where a segment already
        // retransmitted is sent again by the timeout (`tcp_retransmit_skb` counts it twice).
        if self.sb.packets_out() == 0 {
            self.sb.lost_out = 0;
            self.sb.sacked_out = 0;
            self.sb.retrans_out = 0;
        }
    }

    /// The fields of [`Conn`](super::cc::Conn) that the queue changes, without the pacer.
    pub(super) fn sync_conn_fields(&mut self) {
        let c = &mut self.conn;
        c.una = self.sb.una;
        c.nxt = self.sb.nxt();
        c.packets_out = self.sb.packets_out();
        c.in_flight = self.sb.in_flight();
        c.srtt_ns = self.rtt.srtt_ns();
        c.min_rtt_ns = self.rtt.min_rtt_ns();
        c.delivered = self.rate.delivered;
        c.delivered_ce = self.rate.delivered_ce;
    }
}
