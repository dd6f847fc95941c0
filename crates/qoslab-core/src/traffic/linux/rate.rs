//! Delivery-rate sampling as Linux's net/ipv4/tcp_rate.c (draft-cheng-iccrg-delivery-rate-
//! estimation), in segments and nanoseconds.
//!
//! Each transmission records the connection's `delivered`, `delivered_mstamp` and
//! `first_tx_mstamp` and whether the sender was application-limited ([`RateState::on_send`],
//! `tcp_rate_skb_sent`); a send into an empty pipe restarts both stamps. A segment counts as
//! delivered when it is SACKed or cumulatively ACKed, whichever comes first
//! ([`RateState::skb_delivered`], `tcp_rate_skb_delivered`): a SACKed segment's stamp is
//! cleared so that the cumulative ACK that later covers it does not count it again. Of the
//! segments an ACK delivers, the most recently sent one sets the sample; at the end of the ACK
//! ([`RateState::gen`], `tcp_rate_gen`) the interval is the larger of its send phase
//! (its send time − the first send time of its window) and its ACK phase (now − the delivery
//! stamp recorded when it was sent). A sample whose interval is below min_rtt is invalid.
//! Application-limited marking follows `tcp_rate_check_app_limited`.

use crate::units::SimTime;

/// The delivery state a segment carries from its transmission (`tcp_skb_cb->tx`).
#[derive(Debug, Clone, Copy, Default)]
pub struct TxState {
    pub delivered: u64,
    pub delivered_ce: u64,
    /// `delivered_mstamp` when sent; None once the segment was counted (SACKed).
    pub delivered_time: Option<SimTime>,
    pub first_tx_time: SimTime,
    pub app_limited: bool,
}

/// One ACK's rate sample (`struct rate_sample`).
#[derive(Debug, Clone, Copy, Default)]
pub struct RateSample {
    /// Segments delivered over the interval (None: no valid sample).
    pub delivered: Option<u64>,
    pub delivered_ce: u64,
    /// Interval, ns (None: invalid, e.g. shorter than min_rtt).
    pub interval: Option<u64>,
    pub prior_delivered: u64,
    prior_time: Option<SimTime>,
    /// Send time of the sampled segment's window start → its own send time.
    snd_interval: u64,
    pub is_app_limited: bool,
    pub is_retrans: bool,
    last_seq: i64,
    last_sent: SimTime,
    /// Segments newly SACKed or cumulatively ACKed by this ACK.
    pub acked_sacked: u32,
    /// Segments newly marked lost while processing this ACK.
    pub losses: u32,
    /// RTT of the most recently sent segment this ACK delivered (never a retransmission), ns.
    pub rtt: Option<u64>,
    /// `tcp_packets_in_flight` before the ACK was processed.
    pub prior_in_flight: u32,
}

impl RateSample {
    /// The delivery rate, segments per second, when the sample is valid.
    pub fn rate_pps(&self) -> Option<f64> {
        match (self.delivered, self.interval) {
            (Some(d), Some(i)) if i > 0 => Some(d as f64 * 1e9 / i as f64),
            _ => None,
        }
    }
}

/// The connection's side of the estimator (`tp->delivered`, `delivered_mstamp`, …).
#[derive(Debug, Clone, Default)]
pub struct RateState {
    pub delivered: u64,
    pub delivered_ce: u64,
    pub delivered_time: SimTime,
    pub first_tx_time: SimTime,
    /// `tp->app_limited`: 0, or the `delivered` count that ends the application-limited
    /// period.
    pub app_limited: u64,
}

impl RateState {
    /// `tcp_rate_skb_sent`: the state segment leaving at `now` carries (`packets_out`
    /// segments outstanding before it).
    pub fn on_send(&mut self, now: SimTime, packets_out: u32) -> TxState {
        if packets_out == 0 {
            self.first_tx_time = now;
            self.delivered_time = now;
        }
        TxState {
            delivered: self.delivered,
            delivered_ce: self.delivered_ce,
            delivered_time: Some(self.delivered_time),
            first_tx_time: self.first_tx_time,
            app_limited: self.app_limited != 0,
        }
    }

    /// `tcp_rate_skb_delivered`: segment `seq`, sent at `sent` (flag `retrans`), is delivered
    /// (SACKed if `sacked`, so its state is cleared).
    pub fn skb_delivered(
        &mut self,
        tx: &mut TxState,
        seq: i64,
        sent: SimTime,
        retrans: bool,
        sacked: bool,
        rs: &mut RateSample,
    ) {
        let Some(dt) = tx.delivered_time else {
            return;
        };
        let later = sent > rs.last_sent || (sent == rs.last_sent && seq > rs.last_seq);
        if rs.prior_time.is_none() || later {
            rs.prior_delivered = tx.delivered;
            rs.delivered_ce = tx.delivered_ce;
            rs.prior_time = Some(dt);
            rs.is_app_limited = tx.app_limited;
            rs.is_retrans = retrans;
            rs.last_seq = seq;
            rs.last_sent = sent;
            self.first_tx_time = sent;
            rs.snd_interval = sent.saturating_sub(tx.first_tx_time);
        }
        if sacked {
            tx.delivered_time = None;
        }
    }

    /// `tcp_rate_gen`: closes the sample of one ACK that delivered `delivered` segments
    /// (`min_rtt` the connection's, ns).
    pub fn gen(
        &mut self,
        now: SimTime,
        delivered: u32,
        lost: u32,
        min_rtt: u64,
        rs: &mut RateSample,
    ) {
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        if delivered > 0 {
            self.delivered_time = now;
        }
        rs.acked_sacked = delivered;
        rs.losses = lost;
        let Some(prior) = rs.prior_time else {
            rs.delivered = None;
            rs.interval = None;
            return;
        };
        rs.delivered = Some(self.delivered - rs.prior_delivered);
        rs.delivered_ce = self.delivered_ce - rs.delivered_ce;
        let ack_phase = now.saturating_sub(prior);
        let interval = rs.snd_interval.max(ack_phase);
        rs.interval = (interval >= min_rtt).then_some(interval);
    }

    /// `tcp_rate_check_app_limited`: nothing left to send while the window has room and all
    /// lost segments have been retransmitted.
    pub fn check_app_limited(
        &mut self,
        in_flight: u32,
        cwnd: u32,
        lost_out: u32,
        retrans_out: u32,
    ) {
        if in_flight < cwnd && lost_out <= retrans_out {
            self.app_limited = (self.delivered + in_flight as u64).max(1);
        }
    }
}
