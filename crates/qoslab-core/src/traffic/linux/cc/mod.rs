//! Congestion controls of the linux flavour, each as its kernel module implements
//! `struct tcp_congestion_ops` (include/net/tcp.h): `ssthresh` (the window after a loss or
//! ECN reduction), `cong_avoid` (growth per ACK, given the segments acknowledged),
//! `undo_cwnd`, `set_state`, `cwnd_event`, `in_ack_event`, `pkts_acked` (RTT samples) and,
//! for BBR, `cong_control` (which replaces PRR and `cong_avoid`). The socket fields a module
//! reads or writes are in [`Conn`]; [`tcp_slow_start`](Conn::slow_start) and
//! [`tcp_cong_avoid_ai`](Conn::cong_avoid_ai) are net/ipv4/tcp_cong.c's.

pub mod bbr;
pub mod cubic;
pub mod dctcp;
#[cfg(test)]
mod params_tests;
#[cfg(test)]
mod tests;

use super::rate::RateSample;
use crate::params::{KeyError, Param, Table};
use crate::traffic::cc::TcpVariant;
use crate::units::SimTime;

/// `enum tcp_ca_state`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    Open,
    Disorder,
    Cwr,
    Recovery,
    Loss,
}

/// `enum tcp_ca_event` (the events the modelled modules use).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaEvent {
    /// First transmission when no packet is in flight.
    TxStart,
    /// `tcp_enter_loss` reduced ssthresh.
    Loss,
}

/// `ssthresh` before any reduction (`TCP_INFINITE_SSTHRESH`).
pub const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

/// The socket state a congestion control sees (fields of `struct tcp_sock`).
#[derive(Debug, Clone)]
pub struct Conn {
    pub now: SimTime,
    pub cwnd: u32,
    pub cwnd_cnt: u32,
    pub ssthresh: u32,
    pub cwnd_clamp: u32,
    pub prior_cwnd: u32,
    pub ca_state: CaState,
    pub una: i64,
    pub nxt: i64,
    pub packets_out: u32,
    pub in_flight: u32,
    pub srtt_ns: u64,
    /// u64::MAX before a sample.
    pub min_rtt_ns: u64,
    pub delivered: u64,
    pub delivered_ce: u64,
    /// Segments ever marked lost (`tp->lost`).
    pub lost: u64,
    pub app_limited: bool,
    pub cwnd_limited: bool,
    /// The pacing rate, segments per second (0: no RTT sample yet). Linux computes
    /// `sk_pacing_rate` whether or not anything paces the flow.
    pub pacing_rate: f64,
    /// `sk_pacing_status != SK_PACING_NONE`: something paces the flow (the module, as BBR,
    /// or `sch_fq`: `tcp.pacing`).
    pub paced: bool,
    pub mss: u32,
    /// Time of the last transmission (`lsndtime`).
    pub lsndtime: SimTime,
    /// `tp->delivered_mstamp`: when the last delivery was acknowledged.
    pub delivered_time: SimTime,
    /// The next segment's earliest departure time (pacing).
    pub edt: SimTime,
    /// Set by a module to mark the sender application-limited until `delivered` passes
    /// it (BBR's ProbeRTT writes `tp->app_limited`).
    pub app_limited_until: Option<u64>,
}

impl Conn {
    /// `tcp_in_slow_start`.
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// `tcp_is_cwnd_limited`.
    pub fn is_cwnd_limited(&self) -> bool {
        self.cwnd_limited
    }

    /// `tcp_slow_start`: returns the acknowledged segments left over past ssthresh.
    pub fn slow_start(&mut self, acked: u32) -> u32 {
        let cwnd = (self.cwnd + acked).min(self.ssthresh);
        let left = acked - (cwnd - self.cwnd.min(cwnd));
        self.cwnd = cwnd.min(self.cwnd_clamp);
        left
    }

    /// `tcp_cong_avoid_ai`: one segment per `w` acknowledged.
    pub fn cong_avoid_ai(&mut self, w: u32, acked: u32) {
        let w = w.max(1);
        if self.cwnd_cnt >= w {
            self.cwnd_cnt = 0;
            self.cwnd += 1;
        }
        self.cwnd_cnt += acked;
        if self.cwnd_cnt >= w {
            let delta = self.cwnd_cnt / w;
            self.cwnd_cnt -= delta * w;
            self.cwnd += delta;
        }
        self.cwnd = self.cwnd.min(self.cwnd_clamp);
    }

    /// `tcp_reno_cong_avoid`.
    pub fn reno_cong_avoid(&mut self, acked: u32) {
        if !self.is_cwnd_limited() {
            return;
        }
        let mut acked = acked;
        if self.in_slow_start() {
            acked = self.slow_start(acked);
            if acked == 0 {
                return;
            }
        }
        let w = self.cwnd;
        self.cong_avoid_ai(w, acked);
    }
}

/// A congestion control module (`struct tcp_congestion_ops`).
pub trait LinuxCongestion {
    fn ssthresh(&mut self, c: &Conn) -> u32;
    fn cong_avoid(&mut self, c: &mut Conn, acked: u32);
    /// `undo_cwnd` (default `tcp_reno_undo_cwnd`).
    fn undo_cwnd(&mut self, c: &Conn) -> u32 {
        c.cwnd.max(c.prior_cwnd)
    }
    fn set_state(&mut self, _c: &mut Conn, _new: CaState) {}
    fn cwnd_event(&mut self, _c: &mut Conn, _ev: CaEvent) {}
    /// Every ACK (`in_ack_event`).
    fn in_ack_event(&mut self, _c: &mut Conn) {}
    /// `pkts_acked` with the ACK's RTT sample.
    fn pkts_acked(&mut self, _c: &mut Conn, _acked: u32, _rtt_ns: Option<u64>) {}
    /// `cong_control`: true if the module sets cwnd and pacing itself (BBR).
    fn cong_control(&mut self, _c: &mut Conn, _rs: &RateSample) -> bool {
        false
    }
    /// Sets `sk_pacing_status` (BBR): the sender paces whatever `tcp.pacing` says.
    fn wants_pacing(&self) -> bool {
        false
    }
    /// Segments of one paced skb (`tcp_tso_segs` with the module's `min_tso_segs`): 1 for a
    /// module without it, whose segments the model releases one by one.
    fn tso_segs(&self, _c: &Conn) -> u32 {
        1
    }
}

/// net/ipv4/tcp_cong.c's Reno (`tcp_reno_ssthresh`, `tcp_reno_cong_avoid`).
#[derive(Debug, Clone, Default)]
pub struct Reno;

impl LinuxCongestion for Reno {
    fn ssthresh(&mut self, c: &Conn) -> u32 {
        (c.cwnd >> 1).max(2)
    }
    fn cong_avoid(&mut self, c: &mut Conn, acked: u32) {
        c.reno_cong_avoid(acked);
    }
}

/// A module's parameters as a scenario sets them (`tcp.cc.cubic`, `tcp.cc.dctcp` under the
/// linux flavour), serialised as its own keys. tcp_bbr.c and tcp_cong.c's reno have none
/// (BBR's gains are static consts in the kernel).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
#[serde(untagged)]
pub enum LinuxCcParams {
    Cubic(cubic::CubicParams),
    Dctcp(dctcp::DctcpParams),
}

/// What the registry needs of a module beyond its `tcp_congestion_ops`: its parameters'
/// keys, reading them, and building it.
pub trait LinuxModule: Sized {
    /// Its module parameters' keys (none: `&[]`).
    const PARAMS: &'static [Param] = &[];
    /// Its parameters read from a `tcp.cc.VARIANT` table (`None`: none, or all the kernel's
    /// defaults).
    fn read(_t: &Table) -> Result<Option<LinuxCcParams>, KeyError> {
        Ok(None)
    }
    /// The module for a connection, with `params` when they are its own (else its defaults);
    /// `phase` is the flow's draw in [0, 1).
    fn build(c: &mut Conn, phase: f64, params: Option<&LinuxCcParams>) -> Self;
    /// Heap bytes it holds.
    fn heap_bytes(&self) -> usize {
        0
    }
}

impl LinuxModule for Reno {
    fn build(_c: &mut Conn, _phase: f64, _params: Option<&LinuxCcParams>) -> Self {
        Reno
    }
}

impl LinuxModule for cubic::Cubic {
    const PARAMS: &'static [Param] = cubic::PARAMS;
    fn read(t: &Table) -> Result<Option<LinuxCcParams>, KeyError> {
        Ok(Some(cubic::CubicParams::read(t)?)
            .filter(|p| *p != cubic::CubicParams::default())
            .map(LinuxCcParams::Cubic))
    }
    fn build(c: &mut Conn, _phase: f64, params: Option<&LinuxCcParams>) -> Self {
        match params {
            Some(LinuxCcParams::Cubic(p)) => cubic::Cubic::with_params(c, p),
            _ => cubic::Cubic::new(c),
        }
    }
}

impl LinuxModule for dctcp::Dctcp {
    const PARAMS: &'static [Param] = dctcp::PARAMS;
    fn read(t: &Table) -> Result<Option<LinuxCcParams>, KeyError> {
        Ok(Some(dctcp::DctcpParams::read(t)?)
            .filter(|p| *p != dctcp::DctcpParams::default())
            .map(LinuxCcParams::Dctcp))
    }
    fn build(c: &mut Conn, _phase: f64, params: Option<&LinuxCcParams>) -> Self {
        match params {
            Some(LinuxCcParams::Dctcp(p)) => dctcp::Dctcp::with_params(c, p),
            _ => dctcp::Dctcp::new(c),
        }
    }
}

impl LinuxModule for Box<bbr::Bbr> {
    fn build(c: &mut Conn, phase: f64, _params: Option<&LinuxCcParams>) -> Self {
        Box::new(bbr::Bbr::new(c, phase))
    }
    fn heap_bytes(&self) -> usize {
        std::mem::size_of::<bbr::Bbr>()
    }
}

/// The linux flavour's modules, listed once (as `cc_registry!` lists the ns2 flavour's
/// algorithms): each `LinuxCc` variant, its type (a [`LinuxModule`] and
/// [`LinuxCongestion`]) and the `tcp.variant`s that run it. Generates [`LinuxCc`] (dispatched
/// by `match`), its construction, and each variant's parameter keys and reader.
macro_rules! linux_cc_registry {
    ($($module:ident($ty:ty) for $($tv:ident)|+,)+) => {
        /// The module of a flow, dispatched by `match`.
        #[derive(Debug, Clone)]
        pub enum LinuxCc {
            $($module($ty),)+
        }

        impl LinuxCcParams {
            /// The module parameters of `v`'s module, declared in its file (none: `&[]`).
            pub fn keys(v: TcpVariant) -> &'static [Param] {
                match v { $($(TcpVariant::$tv)|+ => <$ty as LinuxModule>::PARAMS,)+ }
            }

            /// `v`'s module parameters read from a `tcp.cc.VARIANT` table (`None` for a module
            /// without any, or when all are the kernel's defaults).
            pub fn read(v: TcpVariant, t: &Table) -> Result<Option<LinuxCcParams>, KeyError> {
                match v { $($(TcpVariant::$tv)|+ => <$ty as LinuxModule>::read(t),)+ }
            }
        }

        impl LinuxCc {
            /// The module for `tcp.variant` (`newreno` has no module of its own and is refused
            /// by the scenario check), with the module parameters `params` (the kernel's
            /// defaults when `None` or another module's); its `init` may set `c.ssthresh`
            /// (CUBIC's `initial_ssthresh`).
            pub fn new(
                v: TcpVariant,
                c: &mut Conn,
                phase: f64,
                params: Option<&LinuxCcParams>,
            ) -> Self {
                match v {
                    $($(TcpVariant::$tv)|+ => {
                        LinuxCc::$module(<$ty as LinuxModule>::build(c, phase, params))
                    })+
                }
            }

            pub fn heap_bytes(&self) -> usize {
                match self { $(LinuxCc::$module(m) => m.heap_bytes(),)+ }
            }
        }

        macro_rules! dispatch {
            ($self:ident, $c:ident => $e:expr) => {
                match $self { $(LinuxCc::$module($c) => $e,)+ }
            };
        }
    };
}

linux_cc_registry! {
    Reno(Reno) for Reno | Sack | Newreno,
    Cubic(cubic::Cubic) for Cubic,
    Dctcp(dctcp::Dctcp) for Dctcp,
    Bbr(Box<bbr::Bbr>) for Bbr,
}

impl LinuxCongestion for LinuxCc {
    fn ssthresh(&mut self, c: &Conn) -> u32 {
        dispatch!(self, m => m.ssthresh(c))
    }
    fn cong_avoid(&mut self, c: &mut Conn, acked: u32) {
        dispatch!(self, m => m.cong_avoid(c, acked))
    }
    fn undo_cwnd(&mut self, c: &Conn) -> u32 {
        dispatch!(self, m => m.undo_cwnd(c))
    }
    fn set_state(&mut self, c: &mut Conn, new: CaState) {
        dispatch!(self, m => m.set_state(c, new))
    }
    fn cwnd_event(&mut self, c: &mut Conn, ev: CaEvent) {
        dispatch!(self, m => m.cwnd_event(c, ev))
    }
    fn in_ack_event(&mut self, c: &mut Conn) {
        dispatch!(self, m => m.in_ack_event(c))
    }
    fn pkts_acked(&mut self, c: &mut Conn, acked: u32, rtt_ns: Option<u64>) {
        dispatch!(self, m => m.pkts_acked(c, acked, rtt_ns))
    }
    fn cong_control(&mut self, c: &mut Conn, rs: &RateSample) -> bool {
        dispatch!(self, m => m.cong_control(c, rs))
    }
    fn wants_pacing(&self) -> bool {
        dispatch!(self, m => m.wants_pacing())
    }
    fn tso_segs(&self, c: &Conn) -> u32 {
        dispatch!(self, m => m.tso_segs(c))
    }
}
