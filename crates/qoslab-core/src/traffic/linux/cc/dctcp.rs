//! DCTCP as Linux's net/ipv4/tcp_dctcp.c (RFC 8257): α (scaled to 1024, starting at 1024)
//! is updated once per window of data with g = 1/16 from the segments delivered and those
//! delivered with ECN-Echo (`tp->delivered`, `tp->delivered_ce`, which count SACKed and
//! cumulatively acknowledged segments alike); an ECN reduction (the sender's CWR state, at
//! most once per window) sets ssthresh = cwnd − cwnd·α/2048; growth is Reno's, per
//! acknowledged segment (`tcp_reno_cong_avoid`); a loss halves as Reno and remembers the
//! window for undo (`loss_cwnd`).

use super::{CaEvent, CaState, Conn, LinuxCongestion};

const MAX_ALPHA: u32 = 1024;
/// g = 1/2^4.
const SHIFT_G: u32 = 4;

#[derive(Debug, Clone)]
pub struct Dctcp {
    pub alpha: u32,
    next_seq: i64,
    old_delivered: u64,
    old_delivered_ce: u64,
    loss_cwnd: u32,
}

impl Dctcp {
    pub fn new(c: &Conn) -> Self {
        Dctcp {
            alpha: MAX_ALPHA,
            next_seq: c.nxt,
            old_delivered: c.delivered,
            old_delivered_ce: c.delivered_ce,
            loss_cwnd: 0,
        }
    }

    fn reset(&mut self, c: &Conn) {
        self.next_seq = c.nxt;
        self.old_delivered = c.delivered;
        self.old_delivered_ce = c.delivered_ce;
    }

    fn react_to_loss(&mut self, c: &mut Conn) {
        self.loss_cwnd = c.cwnd;
        c.ssthresh = (c.cwnd >> 1).max(2);
    }
}

impl LinuxCongestion for Dctcp {
    fn ssthresh(&mut self, c: &Conn) -> u32 {
        self.loss_cwnd = c.cwnd;
        (c.cwnd - ((c.cwnd * self.alpha) >> 11)).max(2)
    }

    fn cong_avoid(&mut self, c: &mut Conn, acked: u32) {
        c.reno_cong_avoid(acked);
    }

    fn undo_cwnd(&mut self, c: &Conn) -> u32 {
        c.cwnd.max(self.loss_cwnd)
    }

    fn set_state(&mut self, c: &mut Conn, new: CaState) {
        if new == CaState::Recovery && c.ca_state != CaState::Recovery {
            self.react_to_loss(c);
        }
    }

    fn cwnd_event(&mut self, c: &mut Conn, ev: CaEvent) {
        if ev == CaEvent::Loss {
            self.react_to_loss(c);
        }
    }

    /// `dctcp_update_alpha`: once SND.UNA passes the window's end.
    fn in_ack_event(&mut self, c: &mut Conn) {
        if c.una < self.next_seq {
            return;
        }
        let delivered = c.delivered - self.old_delivered;
        let mut delivered_ce = c.delivered_ce - self.old_delivered_ce;
        let mut alpha = self.alpha;
        // α ← (1 − g)·α + g·F
        let dec = alpha >> SHIFT_G;
        alpha -= if dec == 0 { alpha } else { dec };
        if delivered_ce > 0 {
            delivered_ce <<= 10 - SHIFT_G;
            delivered_ce /= delivered.max(1);
            alpha = (alpha + delivered_ce as u32).min(MAX_ALPHA);
        }
        self.alpha = alpha;
        self.reset(c);
    }
}
