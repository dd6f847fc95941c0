//! DCTCP as Linux's net/ipv4/tcp_dctcp.c (RFC 8257): α (scaled to 1024, starting at 1024)
//! is updated once per window of data with g = 1/16 from the segments delivered and those
//! delivered with ECN-Echo (`tp->delivered`, `tp->delivered_ce`, which count SACKed and
//! cumulatively acknowledged segments alike); an ECN reduction (the sender's CWR state, at
//! most once per window) sets ssthresh = cwnd − cwnd·α/2048; growth is Reno's, per
//! acknowledged segment (`tcp_reno_cong_avoid`); a loss halves as Reno and remembers the
//! window for undo (`loss_cwnd`).
//!
//! Its module parameters (/sys/module/tcp_dctcp/parameters) are `tcp.cc.dctcp` under the
//! linux flavour: `dctcp_shift_g` and `dctcp_alpha_on_init`. Linux 6.x's tcp_dctcp.c has no
//! `dctcp_clamp_alpha_on_loss` any more (a loss halves the window as Reno since 5.1's
//! `dctcp_react_to_loss`), so it is not a key.

use super::{CaEvent, CaState, Conn, LinuxCongestion};
use crate::params::typed::Decl;
use crate::params::{KeyError, Param, ParamKind, Table};

const MAX_ALPHA: u32 = 1024;

const DCTCP_SHIFT_G: Decl<u32> = Decl::new(
    "dctcp_shift_g",
    ParamKind::IntegerIn { min: 0, max: 10 },
    "4",
    "tcp_dctcp.c `dctcp_shift_g`: α's EWMA gain g = 1/2^dctcp_shift_g (4: g = 1/16, RFC 8257 \
     §3.3); the kernel accepts 0 to 10 (`param_set_uint_minmax`).",
);
const DCTCP_ALPHA_ON_INIT: Decl<u32> = Decl::new(
    "dctcp_alpha_on_init",
    ParamKind::IntegerIn { min: 0, max: 1024 },
    "1024",
    "tcp_dctcp.c `dctcp_alpha_on_init`, of 1024: α at the start (1024: α = 1, the first ECN \
     reduction halves the window).",
);

/// tcp_dctcp.c's module parameters, `tcp.cc.dctcp` under the linux flavour.
pub const PARAMS: &[Param] = &[DCTCP_SHIFT_G.param, DCTCP_ALPHA_ON_INIT.param];

/// The values of tcp_dctcp.c's module parameters (`Default`: the kernel's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct DctcpParams {
    pub dctcp_shift_g: u32,
    pub dctcp_alpha_on_init: u32,
}

impl Default for DctcpParams {
    fn default() -> Self {
        DctcpParams {
            dctcp_shift_g: 4,
            dctcp_alpha_on_init: MAX_ALPHA,
        }
    }
}

impl DctcpParams {
    /// Reads a `tcp.cc.dctcp` table, each key checked against its declared range.
    pub fn read(t: &Table) -> Result<DctcpParams, KeyError> {
        Ok(DctcpParams {
            dctcp_shift_g: t.get(&DCTCP_SHIFT_G)?,
            dctcp_alpha_on_init: t.get(&DCTCP_ALPHA_ON_INIT)?,
        })
    }
}

#[derive(Debug, Clone)]
pub struct Dctcp {
    pub alpha: u32,
    next_seq: i64,
    old_delivered: u64,
    old_delivered_ce: u64,
    loss_cwnd: u32,
    shift_g: u32,
}

impl Dctcp {
    /// `dctcp_init` with the kernel's module parameters.
    pub fn new(c: &Conn) -> Self {
        Dctcp::with_params(c, &DctcpParams::default())
    }

    /// `dctcp_init` with module parameters `p`.
    pub fn with_params(c: &Conn, p: &DctcpParams) -> Self {
        Dctcp {
            alpha: p.dctcp_alpha_on_init.min(MAX_ALPHA),
            shift_g: p.dctcp_shift_g,
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
        let dec = alpha >> self.shift_g;
        alpha -= if dec == 0 { alpha } else { dec };
        if delivered_ce > 0 {
            delivered_ce <<= 10 - self.shift_g;
            delivered_ce /= delivered.max(1);
            alpha = (alpha + delivered_ce as u32).min(MAX_ALPHA);
        }
        self.alpha = alpha;
        self.reset(c);
    }
}
