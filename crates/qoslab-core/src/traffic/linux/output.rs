//! Transmission and timers as net/ipv4/tcp_output.c and tcp_timer.c: lost segments are
//! retransmitted first (`tcp_xmit_retransmit_queue`), then new data while the pipe is below
//! cwnd and the receiver's window allows (`tcp_write_xmit`); both wait for the pacer when
//! pacing applies. The pacing rate is `tcp_update_pacing_rate`'s (2·cwnd/srtt in slow start
//! below ssthresh/2, 1.2·cwnd/srtt otherwise) unless the module sets its own (BBR).
//!
//! One timer, as `icsk_pending`: the RTO (`tcp_rearm_rto`, backed off exponentially), the
//! tail loss probe (`tcp_schedule_loss_probe`: 2·srtt, plus the minimum RTO when a single
//! segment is out, never later than the RTO; `tcp_send_loss_probe` sends new data or
//! retransmits the last segment, ignoring cwnd) and RACK's reordering timer.

use super::cc::{CaEvent, CaState, LinuxCongestion};
use super::{Io, Linux, Timer};
use crate::units::SimTime;

impl Linux {
    /// Sends segment `seq` (new if it is SND.NXT).
    fn transmit(&mut self, now: SimTime, seq: i64, tlp: bool, io: &mut Io) {
        let new = seq == self.sb.nxt();
        let packets_out = self.sb.packets_out();
        if self.sb.in_flight() == 0 {
            self.sync_conn(now, io.pacer);
            self.cc.cwnd_event(&mut self.conn, CaEvent::TxStart);
        }
        let tx = self.rate.on_send(now, packets_out);
        let cwr = new && std::mem::take(&mut self.queue_cwr);
        io.out.push((seq as u64, !new, cwr));
        io.stats.data_sent += 1;
        self.pacing_wait = false;
        if new {
            self.sb.push(now, tx);
        } else {
            io.stats.retransmits += 1;
            self.sb.high_rexmit = self.sb.high_rexmit.max(seq);
            if let Some(s) = self.sb.get_mut(seq) {
                s.xmit = now;
                s.tx = tx;
            }
            self.sb.on_rack(seq);
            self.note_retransmit(now, seq, tlp);
        }
        if self.in_cwnd_reduction() {
            self.prr_out += 1;
        }
        self.conn.lsndtime = now;
        if io.pacer.enabled {
            // an skb holds at most half the window (`tcp_cwnd_test`)
            io.pacer.skb_segs = self
                .cc
                .tso_segs(&self.conn)
                .min((self.conn.cwnd / 2).max(1));
            io.pacer
                .on_send(now, self.conn.cwnd as f64, 0.0, Some(self.conn.pacing_rate));
        }
        if new && (packets_out == 0 || self.timer == Timer::Probe) {
            self.rearm_rto(now);
        }
    }

    /// `tcp_xmit_retransmit_queue`: lost segments not yet retransmitted, oldest first.
    pub(crate) fn xmit_retransmit_queue(&mut self, now: SimTime, io: &mut Io) {
        if self.sb.lost_out == 0 {
            return;
        }
        // The candidates in order, from one to the next through the scoreboard's bits
        // (`waits_retransmit`), 64 segments a word, where the loop once looked at every segment
        // from SND.UNA on every call (under heavy loss a tenth of a run). Linux spares itself the
        // same walk differently, resuming from its `retransmit_skb_hint`. The walk it replaces
        // stopped after the lost_out-th lost segment; each lost segment is counted in lost_out,
        // so no candidate lies beyond it (checked in debug builds, with the bits).
        #[cfg(debug_assertions)]
        {
            use super::scoreboard::{waits_retransmit, LOST};
            let lost = self
                .sb
                .segs()
                .iter()
                .filter(|s| s.flags() & LOST != 0)
                .count();
            debug_assert_eq!(
                self.sb.lost_out as usize, lost,
                "lost_out counts the LOST marks"
            );
            for (k, s) in self.sb.segs().iter().enumerate() {
                let seq = self.sb.una + k as i64;
                debug_assert_eq!(
                    self.sb.waits(seq),
                    waits_retransmit(s.flags()),
                    "segment {seq}"
                );
            }
        }
        let mut from = self.sb.una;
        while let Some(seq) = self.sb.next_waiting_retransmit(from) {
            from = seq + 1;
            if self.sb.in_flight() >= self.conn.cwnd {
                break;
            }
            if !io.pacer.may_send(now) {
                self.pacing_stall();
                break;
            }
            // Linux stops once as many retransmissions are in flight as segments are marked
            // lost. Each waiting segment is marked lost and not retransmitted, so this stops
            // before a waiting segment only where retransmissions in flight are not marked
            // lost: after an undo cleared the LOST marks (`tcp_undo_cwnd_reduction`).
            if self.sb.retrans_out >= self.sb.lost_out {
                break;
            }
            let first = self.sb.retrans_out == 0 && self.sb.una == seq;
            self.transmit(now, seq, false, io);
            if first {
                self.rearm_rto(now);
            }
        }
    }

    /// `tcp_write_xmit`: new data.
    pub(crate) fn write_xmit(&mut self, now: SimTime, io: &mut Io) {
        let mut sent = false;
        let mut cwnd_limited = false;
        loop {
            let nxt = self.sb.nxt();
            if nxt >= self.app_end {
                break;
            }
            if nxt >= self.sb.una + self.rwnd as i64 {
                break;
            }
            if self.sb.in_flight() >= self.conn.cwnd {
                cwnd_limited = true;
                break;
            }
            if !io.pacer.may_send(now) {
                self.pacing_stall();
                cwnd_limited = true;
                break;
            }
            self.transmit(now, nxt, false, io);
            sent = true;
        }
        if self.sb.nxt() >= self.app_end {
            // tcp_rate_check_app_limited
            self.rate.check_app_limited(
                self.sb.in_flight(),
                self.conn.cwnd,
                self.sb.lost_out,
                self.sb.retrans_out,
            );
        }
        self.conn.cwnd_limited = cwnd_limited || self.sb.in_flight() >= self.conn.cwnd;
        if sent {
            self.schedule_loss_probe(now, false);
        }
    }

    /// The pacer refused a segment the window allowed (`tcp_pacing_check` true): a new wait
    /// unless the sender has been waiting since its last transmission.
    fn pacing_stall(&mut self) {
        if !std::mem::replace(&mut self.pacing_wait, true) {
            self.counts.add(&super::sender::PACING_STALLS);
        }
    }

    /// `tcp_update_pacing_rate` for modules that do not pace themselves, segments per s.
    pub(crate) fn update_pacing_rate(&mut self) {
        let srtt = self.rtt.srtt_ns();
        let c = &mut self.conn;
        if srtt == 0 {
            c.pacing_rate = 0.0;
            return;
        }
        let ratio = if c.cwnd < c.ssthresh / 2 { 2.0 } else { 1.2 };
        let w = c.cwnd.max(self.sb.packets_out()) as f64;
        c.pacing_rate = ratio * w * 1e9 / srtt as f64;
    }

    pub(crate) fn arm_timer(&mut self, kind: Timer, at: SimTime) {
        self.timer = kind;
        self.deadline = Some(at);
    }

    /// `tcp_rearm_rto`.
    pub(crate) fn rearm_rto(&mut self, now: SimTime) {
        if self.sb.packets_out() == 0 {
            self.timer = Timer::None;
            self.deadline = None;
            return;
        }
        let mut rto = self.rtt.rto_ns(self.backoff);
        if matches!(self.timer, Timer::Reo | Timer::Probe) {
            // tcp_rto_delta_us: what is left of the RTO of the oldest outstanding segment.
            let head = self.sb.segs().front().map_or(now, |s| s.xmit);
            let elapsed = now.saturating_sub(head);
            rto = rto.saturating_sub(elapsed).max(1000);
        }
        self.arm_timer(Timer::Rto, now + rto);
    }

    /// `tcp_set_xmit_timer`.
    pub(crate) fn set_xmit_timer(&mut self, now: SimTime) {
        if !self.schedule_loss_probe(now, true) {
            self.rearm_rto(now);
        }
    }

    /// `tcp_schedule_loss_probe`.
    pub(crate) fn schedule_loss_probe(&mut self, now: SimTime, advancing_rto: bool) -> bool {
        if self.sb.packets_out() == 0
            || !matches!(self.conn.ca_state, CaState::Open | CaState::Cwr)
            || self.tlp_disabled
        {
            return false;
        }
        let srtt = self.rtt.srtt_ns();
        let mut timeout = if srtt > 0 {
            let extra = if self.sb.packets_out() == 1 {
                self.rtt.rto_min_us * 1000
            } else {
                2_000_000
            };
            2 * srtt + extra
        } else {
            1_000_000_000
        };
        let rto_delta = if advancing_rto {
            self.rtt.rto_ns(self.backoff)
        } else {
            let head = self.sb.segs().front().map_or(now, |s| s.xmit);
            let dl = head + self.rtt.rto_ns(self.backoff);
            dl.saturating_sub(now)
        };
        if rto_delta > 0 {
            timeout = timeout.min(rto_delta);
        }
        self.arm_timer(Timer::Probe, now + timeout);
        true
    }

    /// The timer's deadline passed.
    pub fn on_timeout(&mut self, now: SimTime, io: &mut Io) {
        self.sync_conn(now, io.pacer);
        let kind = self.timer;
        self.timer = Timer::None;
        self.deadline = None;
        match kind {
            Timer::None => {}
            Timer::Rto => self.retransmit_timer(now, io),
            Timer::Probe => self.send_loss_probe(now, io),
            Timer::Reo => self.reo_timeout(now, io),
        }
    }

    /// `tcp_retransmit_timer`.
    fn retransmit_timer(&mut self, now: SimTime, io: &mut Io) {
        if self.sb.packets_out() == 0 {
            return;
        }
        io.stats.timeouts += 1;
        self.enter_loss(now);
        self.retransmits += 1;
        let una = self.sb.una;
        self.transmit(now, una, false, io);
        self.backoff += 1;
        let rto = self.rtt.rto_ns(self.backoff);
        self.arm_timer(Timer::Rto, now + rto);
    }

    /// `tcp_send_loss_probe`.
    fn send_loss_probe(&mut self, now: SimTime, io: &mut Io) {
        if self.tlp_high_seq.is_none() {
            self.tlp_retrans = false;
            let nxt = self.sb.nxt();
            let mut sent = false;
            if nxt < self.app_end && nxt < self.sb.una + self.rwnd as i64 {
                self.transmit(now, nxt, true, io);
                sent = true;
            } else if self.sb.packets_out() > 0 {
                let last = nxt - 1;
                self.transmit(now, last, true, io);
                self.tlp_retrans = true;
                sent = true;
            }
            if sent {
                self.tlp_high_seq = Some(self.sb.nxt());
                self.counts.add(&super::sender::TLP_PROBES);
                self.timer = Timer::None;
            }
        }
        self.rearm_rto(now);
    }

    /// `tcp_rack_reo_timeout`.
    fn reo_timeout(&mut self, now: SimTime, io: &mut Io) {
        let prior_in_flight = self.sb.in_flight();
        let lost = self.conn.lost;
        self.rack_detect(now);
        if prior_in_flight != self.sb.in_flight() {
            if self.conn.ca_state != CaState::Recovery {
                self.enter_recovery(false);
                self.sync_conn(now, io.pacer);
                if !matches!(self.cc, super::cc::LinuxCc::Bbr(_)) {
                    let newly_lost = (self.conn.lost - lost) as u32;
                    self.cwnd_reduction(1, newly_lost, 0);
                }
            }
            self.xmit_retransmit_queue(now, io);
        }
        if self.timer != Timer::Rto {
            self.rearm_rto(now);
        }
    }
}
