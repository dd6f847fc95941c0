//! The `tcp.flavour` key and the linux flavour's defaults for the keys a scenario leaves
//! unset.

use crate::params::Param;
use crate::traffic::cc::TcpVariant;
use crate::traffic::tcp::TcpConfig;

/// `tcp.flavour`: which sender model a TCP flow uses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Flavour {
    /// ns-2.35's one-way agents (this module).
    #[default]
    Ns2,
    /// Linux 6.x's TCP ([`super::linux`]).
    Linux,
}

impl Flavour {
    pub fn is_ns2(&self) -> bool {
        *self == Flavour::Ns2
    }

    /// Its name in `tcp.flavour`.
    pub fn name(self) -> &'static str {
        match self {
            Flavour::Ns2 => "ns2",
            Flavour::Linux => "linux",
        }
    }

    /// The keys of `tcp.cc.VARIANT` this flavour's sender takes, declared by its congestion
    /// control: the ns2 flavour's algorithms' constants ([`crate::traffic::cc::Tunable`]),
    /// the linux flavour's kernel modules' parameters ([`super::cc::LinuxCcParams`]).
    pub fn cc_keys(self, v: TcpVariant) -> &'static [Param] {
        match self {
            Flavour::Ns2 => v.constants(),
            Flavour::Linux => super::cc::LinuxCcParams::keys(v),
        }
    }
}

/// The names `tcp.flavour` accepts.
pub const FLAVOUR_NAMES: &[&str] = &["ns2", "linux"];

/// Bits of [`TcpConfig::explicit`].
pub mod explicit {
    pub const WINDOW: u16 = 1;
    pub const INITIAL_WINDOW: u16 = 2;
    pub const MIN_RTO: u16 = 4;
    pub const MAX_RTO: u16 = 8;
    pub const INITIAL_RTO: u16 = 16;
    pub const DELAYED_ACK: u16 = 32;
    pub const DELACK_INTERVAL: u16 = 64;
    pub const SYN: u16 = 128;
    pub const SACK: u16 = 256;
    pub const TICK: u16 = 512;
    pub const MAX_BURST: u16 = 1024;
}

impl TcpConfig {
    /// Linux 6.x's values for the keys no table set (the linux flavour): initial window 10
    /// (`TCP_INIT_CWND`), a receive window of 10000 segments, initial RTO 1 s
    /// (`TCP_TIMEOUT_INIT`), RTO in [200 ms, 120 s], delayed ACKs after 40 ms
    /// (`TCP_DELACK_MIN`), no SYN segment, SACK.
    pub fn apply_linux_defaults(&mut self) {
        use explicit::*;
        let unset = |bit: u16| self.explicit & bit == 0;
        let (w, iw, minr, maxr, ir, da, dai, syn) = (
            unset(WINDOW),
            unset(INITIAL_WINDOW),
            unset(MIN_RTO),
            unset(MAX_RTO),
            unset(INITIAL_RTO),
            unset(DELAYED_ACK),
            unset(DELACK_INTERVAL),
            unset(SYN),
        );
        if w {
            self.window_pkts = 10_000;
        }
        if iw {
            self.initial_window_pkts = 10;
        }
        if minr {
            self.min_rto_ns = 200_000_000;
        }
        if maxr {
            self.max_rto_ns = 120_000_000_000;
        }
        if ir {
            self.initial_rto_ns = 1_000_000_000;
        }
        if da {
            self.delayed_ack = true;
        }
        if dai {
            self.delack_interval_ns = 40_000_000;
        }
        if syn {
            self.syn = false;
        }
        self.sack = true;
    }
}
