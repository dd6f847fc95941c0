//! The `tcp.flavour` key and each flavour's defaults for the keys a scenario leaves unset.

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

/// What a flavour gives the keys whose defaults differ between the two flavours, for every
/// key no table sets: the ns2 flavour's are ns-2.35's, as the `tcp` table's declarations give
/// them (`scenario::keys::tcp`), the linux flavour's are [`LINUX_DEFAULTS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlavourDefaults {
    pub window_pkts: u32,
    pub initial_window_pkts: u32,
    pub min_rto_ns: u64,
    pub max_rto_ns: u64,
    pub initial_rto_ns: u64,
    pub delayed_ack: bool,
    pub delack_interval_ns: u64,
    pub syn: bool,
    pub sack: bool,
}

/// Linux 6.x's: initial window 10 (`TCP_INIT_CWND`), a receive window of 10000 segments,
/// initial RTO 1 s (`TCP_TIMEOUT_INIT`), RTO in [200 ms, 120 s], delayed ACKs after 40 ms
/// (`TCP_DELACK_MIN`), no SYN segment, SACK.
pub const LINUX_DEFAULTS: FlavourDefaults = FlavourDefaults {
    window_pkts: 10_000,
    initial_window_pkts: 10,
    min_rto_ns: 200_000_000,
    max_rto_ns: 120_000_000_000,
    initial_rto_ns: 1_000_000_000,
    delayed_ack: true,
    delack_interval_ns: 40_000_000,
    syn: false,
    sack: true,
};

impl TcpConfig {
    /// `d`'s value for every key of [`FlavourDefaults`] no table set (no [`explicit`] bit):
    /// called with the defaults of the flavour the tables resolved, so a key left unset is
    /// always that flavour's, whatever flavour the tables below it named.
    pub fn apply_defaults(&mut self, d: &FlavourDefaults) {
        use explicit::*;
        let unset = |bit: u16| self.explicit & bit == 0;
        let (w, iw, minr, maxr, ir, da, dai, syn, sack) = (
            unset(WINDOW),
            unset(INITIAL_WINDOW),
            unset(MIN_RTO),
            unset(MAX_RTO),
            unset(INITIAL_RTO),
            unset(DELAYED_ACK),
            unset(DELACK_INTERVAL),
            unset(SYN),
            unset(SACK),
        );
        if w {
            self.window_pkts = d.window_pkts;
        }
        if iw {
            self.initial_window_pkts = d.initial_window_pkts;
        }
        if minr {
            self.min_rto_ns = d.min_rto_ns;
        }
        if maxr {
            self.max_rto_ns = d.max_rto_ns;
        }
        if ir {
            self.initial_rto_ns = d.initial_rto_ns;
        }
        if da {
            self.delayed_ack = d.delayed_ack;
        }
        if dai {
            self.delack_interval_ns = d.delack_interval_ns;
        }
        if syn {
            self.syn = d.syn;
        }
        if sack {
            self.sack = d.sack;
        }
    }
}
