//! Loss recovery as net/ipv4/tcp_input.c's `tcp_fastretrans_alert`: the states Open,
//! Disorder, CWR (an ECN or TLP-detected reduction), Recovery (fast recovery, entered when
//! RACK marks a segment lost) and Loss (after a timeout). In CWR and Recovery the window
//! follows Proportional Rate Reduction (RFC 6937, `tcp_cwnd_reduction`): while pipe exceeds
//! ssthresh, sndcnt = ⌈ssthresh·prr_delivered/prior_cwnd⌉ − prr_out; below it, slow start
//! bounded by the deficit (PRR-SSRB); on exit cwnd = ssthresh. A reduction is undone when
//! D-SACKs show every retransmission was spurious (`tcp_try_undo_dsack`,
//! `tcp_try_undo_recovery`) or F-RTO (RFC 5682) finds a timeout spurious.

use super::ack::{
    DATA_ACKED, DATA_SACKED, DSACK_TLP, ECE, LOST_RETRANS, ORIG_SACK_ACKED, SET_XMIT_TIMER,
    SND_UNA_ADVANCED,
};
use super::cc::{CaEvent, CaState, LinuxCongestion, INFINITE_SSTHRESH};
use super::rate::RateSample;
use super::scoreboard::{EVER_RETRANS, RETRANS, SACKED};
use super::Linux;
use crate::units::SimTime;

/// What `tcp_xmit_recovery` sends after the ACK.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rexmit {
    None,
    /// Retransmit what is marked lost.
    Lost,
    /// F-RTO step 2b: new data first.
    New,
}

impl Linux {
    /// `tcp_init_undo`.
    fn init_undo(&mut self) {
        self.undo_marker = Some(self.sb.una);
        let mut r = self.sb.retrans_out as i32;
        if self.tlp_high_seq.is_some() && self.tlp_retrans {
            r += 1;
        }
        self.undo_retrans = if r == 0 { -1 } else { r };
    }

    /// `tcp_init_cwnd_reduction`.
    fn init_cwnd_reduction(&mut self) {
        self.high_seq = self.sb.nxt();
        self.tlp_high_seq = None;
        self.conn.cwnd_cnt = 0;
        self.conn.prior_cwnd = self.conn.cwnd;
        self.prr_delivered = 0;
        self.prr_out = 0;
        self.conn.ssthresh = self.cc.ssthresh(&self.conn);
        if self.ecn {
            self.queue_cwr = true;
        }
    }

    /// `tcp_enter_cwr` (an ECN-Echo in Open or Disorder).
    pub(crate) fn enter_cwr(&mut self, stats: &mut crate::traffic::tcp::TcpStats) {
        self.prior_ssthresh = 0;
        if self.conn.ca_state < CaState::Cwr {
            self.undo_marker = None;
            self.init_cwnd_reduction();
            self.set_ca_state(CaState::Cwr);
            stats.ecn_responses += 1;
        }
    }

    /// `tcp_end_cwnd_reduction`.
    fn end_cwnd_reduction(&mut self) {
        if matches!(self.cc, super::cc::LinuxCc::Bbr(_)) {
            return; // BBR sets its own window (cong_control)
        }
        if self.conn.ssthresh < INFINITE_SSTHRESH
            && (self.conn.ca_state == CaState::Cwr || self.undo_marker.is_some())
        {
            self.conn.cwnd = self.conn.ssthresh;
        }
    }

    /// `tcp_enter_recovery`.
    pub(crate) fn enter_recovery(&mut self, ece_ack: bool) {
        self.prior_ssthresh = 0;
        self.init_undo();
        if !self.in_cwnd_reduction() {
            if !ece_ack {
                self.prior_ssthresh = self.current_ssthresh();
            }
            self.init_cwnd_reduction();
        }
        self.set_ca_state(CaState::Recovery);
        self.fast_retransmits += 1;
    }

    fn current_ssthresh(&self) -> u32 {
        if self.in_cwnd_reduction() {
            self.conn.ssthresh
        } else {
            self.conn.ssthresh.max(self.conn.cwnd.saturating_mul(3) / 4)
        }
    }

    /// `tcp_any_retrans_done`.
    fn any_retrans_done(&self) -> bool {
        self.sb.retrans_out > 0
            || self
                .sb
                .segs()
                .front()
                .is_some_and(|s| s.flags() & EVER_RETRANS != 0)
    }

    /// `tcp_try_keep_open`.
    fn try_keep_open(&mut self) {
        let state = if self.sb.left_out() > 0 || self.any_retrans_done() {
            CaState::Disorder
        } else {
            CaState::Open
        };
        if self.conn.ca_state != state {
            self.set_ca_state(state);
            self.high_seq = self.sb.nxt();
        }
    }

    /// `tcp_try_to_open`.
    fn try_to_open(&mut self, flag: u32, stats: &mut crate::traffic::tcp::TcpStats) {
        if !self.any_retrans_done() {
            self.retrans_stamp = None;
        }
        if flag & ECE != 0 {
            self.enter_cwr(stats);
        }
        if self.conn.ca_state != CaState::Cwr {
            self.try_keep_open();
        }
    }

    /// `tcp_may_undo` (without timestamps: only when D-SACKs covered every retransmission).
    fn may_undo(&self) -> bool {
        self.undo_marker.is_some() && self.undo_retrans == 0
    }

    /// `tcp_undo_cwnd_reduction`.
    fn undo_cwnd_reduction(&mut self, unmark_loss: bool) {
        if unmark_loss {
            self.sb.unmark_lost();
        }
        if self.prior_ssthresh > 0 {
            self.conn.cwnd = self.cc.undo_cwnd(&self.conn);
            if self.prior_ssthresh > self.conn.ssthresh {
                self.conn.ssthresh = self.prior_ssthresh;
                self.queue_cwr = false;
            }
        }
        self.undo_marker = None;
        self.rack.advanced = true;
        self.counts.add(&super::sender::SPURIOUS_UNDOS);
    }

    fn try_undo_dsack(&mut self) -> bool {
        if self.undo_marker.is_some() && self.undo_retrans == 0 {
            self.rack.reo_wnd_persist =
                (self.rack.reo_wnd_persist + 1).min(super::rack::RECOVERY_THRESH);
            self.undo_cwnd_reduction(false);
            return true;
        }
        false
    }

    /// `tcp_try_undo_recovery`: returns true to hold the state (never, with SACK).
    fn try_undo_recovery(&mut self) {
        if self.may_undo() {
            self.undo_cwnd_reduction(false);
        } else if self.rack.reo_wnd_persist > 0 {
            self.rack.reo_wnd_persist -= 1;
        }
        self.set_ca_state(CaState::Open);
    }

    fn try_undo_loss(&mut self, frto_undo: bool) -> bool {
        if frto_undo || self.may_undo() {
            self.undo_cwnd_reduction(true);
            self.retransmits = 0;
            self.set_ca_state(CaState::Open);
            self.frto = false;
            return true;
        }
        false
    }

    /// `tcp_identify_packet_loss` with RACK (`tcp_rack_mark_lost`); may arm the reordering
    /// timer.
    fn identify_packet_loss(&mut self, now: SimTime, flag: &mut u32) {
        if self.sb.segs().is_empty() || !self.rack.advanced {
            return;
        }
        self.rack.advanced = false;
        let prior_retrans = self.sb.retrans_out;
        let timeout = self.rack_detect(now);
        if timeout > 0 {
            // TCP_TIMEOUT_MIN: 2 ms (two jiffies).
            self.arm_timer(super::Timer::Reo, now + timeout + 2_000_000);
            *flag &= !SET_XMIT_TIMER;
        }
        if prior_retrans > self.sb.retrans_out {
            *flag |= LOST_RETRANS;
        }
    }

    /// `tcp_rack_detect_loss`: marks what RACK finds lost; returns the reordering wait.
    pub(crate) fn rack_detect(&mut self, now: SimTime) -> u64 {
        let reo_wnd = self.rack.reo_wnd(
            self.conn.ca_state >= CaState::Recovery,
            self.sb.sacked_out,
            self.reordering,
            self.rtt.min_rtt_ns(),
            self.rtt.srtt_ns(),
        );
        let mut lost = std::mem::take(&mut self.lost_buf);
        lost.clear();
        let timeout = self.rack.detect_loss(now, &mut self.sb, reo_wnd, &mut lost);
        for &seq in &lost {
            if self.mark_lost(seq) {
                self.counts.add(&super::sender::RACK_MARKS);
            }
            self.sb.off_rack(seq);
        }
        self.lost_buf = lost;
        timeout
    }

    /// `tcp_mark_skb_lost` with the connection's loss count: whether `seq` was newly marked.
    pub(crate) fn mark_lost(&mut self, seq: i64) -> bool {
        let (newly, _) = self.sb.mark_lost(seq);
        if newly {
            self.conn.lost += 1;
        }
        newly
    }

    /// `tcp_time_to_recover` with RACK: something is marked lost.
    fn time_to_recover(&self) -> bool {
        self.sb.lost_out > 0
    }

    /// `tcp_fastretrans_alert`.
    pub(crate) fn fastretrans_alert(
        &mut self,
        now: SimTime,
        _prior_una: i64,
        dupack: bool,
        flag: &mut u32,
        stats: &mut crate::traffic::tcp::TcpStats,
    ) -> Rexmit {
        let ece_ack = *flag & ECE != 0;
        if self.sb.packets_out() == 0 && self.sb.sacked_out > 0 {
            self.sb.sacked_out = 0;
        }
        if ece_ack {
            self.prior_ssthresh = 0;
        }
        // D. State exits when high_seq is acknowledged.
        if self.conn.ca_state == CaState::Open {
            self.retrans_stamp = None;
        } else if self.sb.una >= self.high_seq {
            match self.conn.ca_state {
                // CWR ends once something above high_seq is acknowledged.
                CaState::Cwr if self.sb.una != self.high_seq => {
                    self.end_cwnd_reduction();
                    self.set_ca_state(CaState::Open);
                }
                CaState::Recovery => {
                    self.try_undo_recovery();
                    self.end_cwnd_reduction();
                }
                _ => {}
            }
        }
        // E. Process the state.
        match self.conn.ca_state {
            CaState::Recovery => {
                if self.try_undo_dsack() {
                    self.try_keep_open();
                }
                self.identify_packet_loss(now, flag);
                if self.conn.ca_state != CaState::Recovery {
                    if !self.time_to_recover() {
                        return Rexmit::None;
                    }
                    self.enter_recovery(ece_ack);
                }
            }
            CaState::Loss => {
                let r = self.process_loss(*flag, dupack);
                self.identify_packet_loss(now, flag);
                if !(self.conn.ca_state == CaState::Open || *flag & LOST_RETRANS != 0) {
                    return r;
                }
                // The window was undone or retransmissions were lost: as in Open.
                if self.conn.ca_state <= CaState::Disorder {
                    self.try_undo_dsack();
                }
                if !self.time_to_recover() {
                    self.try_to_open(*flag, stats);
                    return r;
                }
                self.enter_recovery(ece_ack);
            }
            _ => {
                if self.conn.ca_state <= CaState::Disorder {
                    self.try_undo_dsack();
                }
                self.identify_packet_loss(now, flag);
                if !self.time_to_recover() {
                    self.try_to_open(*flag, stats);
                    return Rexmit::None;
                }
                self.enter_recovery(ece_ack);
            }
        }
        Rexmit::Lost
    }

    /// `tcp_process_loss` (SACK, F-RTO): what to send.
    fn process_loss(&mut self, flag: u32, dupack: bool) -> Rexmit {
        let recovered = self.sb.una >= self.high_seq;
        if flag & SND_UNA_ADVANCED != 0 && self.try_undo_loss(false) {
            return Rexmit::None;
        }
        if self.frto {
            // Step 3.b: never-retransmitted data was delivered: the timeout was spurious.
            if flag & ORIG_SACK_ACKED != 0 && self.try_undo_loss(true) {
                return Rexmit::None;
            }
            if self.sb.nxt() > self.high_seq {
                if flag & DATA_SACKED != 0 || dupack {
                    self.frto = false; // step 3.a: the loss was real
                }
            } else if flag & SND_UNA_ADVANCED != 0 && !recovered {
                self.high_seq = self.sb.nxt();
                // Step 2.b: send new data if there is any.
                if self.sb.nxt() < self.app_end && self.sb.nxt() < self.sb.una + self.rwnd as i64 {
                    return Rexmit::New;
                }
                self.frto = false;
            }
        }
        if recovered {
            self.try_undo_recovery();
            return Rexmit::None;
        }
        Rexmit::Lost
    }

    /// `tcp_process_tlp_ack`.
    pub(crate) fn process_tlp_ack(&mut self, ack: i64, flag: u32) {
        let Some(h) = self.tlp_high_seq else { return };
        if ack < h {
            return;
        }
        if !self.tlp_retrans || flag & DSACK_TLP != 0 {
            self.tlp_high_seq = None;
        } else if ack > h {
            // The probe repaired a loss: reduce once.
            self.init_cwnd_reduction();
            self.set_ca_state(CaState::Cwr);
            self.end_cwnd_reduction();
            self.try_keep_open();
        } else if flag & (SND_UNA_ADVANCED | DATA_ACKED | DATA_SACKED) == 0 {
            self.tlp_high_seq = None;
        }
    }

    /// `tcp_enter_loss`, on a retransmission timeout.
    pub(crate) fn enter_loss(&mut self, now: SimTime) {
        let new_recovery = self.conn.ca_state < CaState::Recovery;
        // tcp_timeout_mark_lost: the head and every segment RACK would not still wait for.
        let una = self.sb.una;
        let rack_rtt = self.rack.rtt;
        let n = self.sb.segs().len();
        for k in 0..n {
            let s = self.sb.segs()[k];
            if s.flags() & SACKED != 0 {
                continue;
            }
            if k > 0 && rack_rtt > now.saturating_sub(s.xmit) {
                continue; // sent too recently
            }
            self.mark_lost(una + k as i64);
        }
        if self.conn.ca_state <= CaState::Disorder
            || self.high_seq <= self.sb.una
            || (self.conn.ca_state == CaState::Loss && self.retransmits == 0)
        {
            self.prior_ssthresh = self.current_ssthresh();
            self.conn.prior_cwnd = self.conn.cwnd;
            self.conn.ssthresh = self.cc.ssthresh(&self.conn);
            self.cc.cwnd_event(&mut self.conn, CaEvent::Loss);
            self.init_undo();
        }
        self.conn.cwnd = self.sb.in_flight() + 1;
        self.conn.cwnd_cnt = 0;
        self.set_ca_state(CaState::Loss);
        self.high_seq = self.sb.nxt();
        self.tlp_high_seq = None;
        if self.ecn {
            self.queue_cwr = true;
        }
        self.frto = new_recovery || self.retransmits > 0;
    }

    /// `tcp_cong_control`: the module's own control (BBR), or PRR in a reduction, or growth.
    pub(crate) fn cong_control(&mut self, rs: &mut RateSample, flag: u32) {
        if self.cc.cong_control(&mut self.conn, rs) {
            self.apply_conn();
            return;
        }
        if self.in_cwnd_reduction() {
            self.cwnd_reduction(rs.acked_sacked, rs.losses, flag);
        } else if flag & DATA_ACKED != 0 {
            // tcp_may_raise_cwnd: data was cumulatively acknowledged.
            let acked = rs.acked_sacked;
            self.cc.cong_avoid(&mut self.conn, acked);
        }
        self.update_pacing_rate();
    }

    /// `tcp_cwnd_reduction` (PRR, RFC 6937).
    pub(crate) fn cwnd_reduction(&mut self, newly_acked_sacked: u32, newly_lost: u32, flag: u32) {
        if newly_acked_sacked == 0 || self.conn.prior_cwnd == 0 {
            return;
        }
        let in_flight = self.sb.in_flight() as i64;
        let ssthresh = self.conn.ssthresh as i64;
        self.prr_delivered += newly_acked_sacked;
        if self.no_prr {
            self.conn.cwnd = self.conn.ssthresh.max(1);
            return;
        }
        let delta = ssthresh - in_flight;
        let mut sndcnt: i64;
        if delta < 0 {
            let dividend =
                ssthresh as u64 * self.prr_delivered as u64 + self.conn.prior_cwnd as u64 - 1;
            sndcnt = (dividend / self.conn.prior_cwnd as u64) as i64 - self.prr_out as i64;
        } else {
            sndcnt =
                (self.prr_delivered as i64 - self.prr_out as i64).max(newly_acked_sacked as i64);
            if flag & SND_UNA_ADVANCED != 0 && newly_lost == 0 {
                sndcnt += 1;
            }
            sndcnt = sndcnt.min(delta);
        }
        // A fast retransmit goes out on entering recovery.
        sndcnt = sndcnt.max(if self.prr_out > 0 { 0 } else { 1 });
        self.conn.cwnd = (in_flight + sndcnt).max(1) as u32;
    }

    /// A segment was retransmitted (`tcp_retransmit_skb`'s bookkeeping).
    pub(crate) fn note_retransmit(&mut self, now: SimTime, seq: i64, tlp: bool) {
        if self.retrans_stamp.is_none() {
            self.retrans_stamp = Some(now);
        }
        if tlp {
            return;
        }
        if let Some(f) = self.sb.get(seq).map(|s| s.flags()) {
            self.sb.set_flags(seq, f | RETRANS | EVER_RETRANS);
            self.sb.retrans_out += 1;
        }
        if self.undo_retrans < 0 {
            self.undo_retrans = 0;
        }
        self.undo_retrans += 1;
    }
}
