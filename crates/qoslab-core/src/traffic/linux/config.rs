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

    /// The `[tcp]` keys whose defaults this flavour declares for itself (the ns2 flavour's
    /// are the table's own declarations).
    pub fn own_defaults(self) -> &'static [Param] {
        match self {
            Flavour::Ns2 => &[],
            Flavour::Linux => keys::ALL,
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
/// them (`scenario::keys::tcp`), the linux flavour's are Linux's, as [`keys`] declares them.
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

/// The linux flavour's declarations of the `[tcp]` keys whose defaults are Linux 6.x's, not
/// ns-2.35's: the same keys (name, kind, range) as `scenario::keys::tcp` declares, with the
/// kernel's defaults. The reference page shows both.
pub mod keys {
    use crate::params::typed::{Decl, Duration};
    use crate::params::{Param, ParamKind};
    use crate::traffic::tcp::WINDOW_PKTS;

    pub const WINDOW: Decl<u32> = Decl::new(
        "window",
        WINDOW_PKTS,
        "10000",
        "a cap on the window the receiver offers, which grows as the kernel's (rcv_space.rs).",
    );
    pub const INITIAL_WINDOW: Decl<u32> = Decl::new(
        "initial_window",
        WINDOW_PKTS,
        "10",
        "TCP_INIT_CWND, at most the window as tcp_init_cwnd takes it.",
    );
    pub const MIN_RTO: Decl<Duration> =
        Decl::new("min_rto", ParamKind::Duration, "200ms", "TCP_RTO_MIN.").at_least(1_000, "1us");
    pub const MAX_RTO: Decl<Duration> =
        Decl::new("max_rto", ParamKind::Duration, "120s", "TCP_RTO_MAX.").at_least(1_000, "1us");
    pub const INITIAL_RTO: Decl<Duration> = Decl::new(
        "initial_rto",
        ParamKind::Duration,
        "1s",
        "TCP_TIMEOUT_INIT.",
    )
    .at_least(1_000, "1us");
    pub const DELAYED_ACK: Decl<bool> = Decl::new(
        "delayed_ack",
        ParamKind::Bool,
        "true",
        "Linux's receiver delays ACKs after its quick ACKs.",
    );
    pub const DELACK_INTERVAL: Decl<Duration> = Decl::new(
        "delack_interval",
        ParamKind::Duration,
        "40ms",
        "TCP_DELACK_MIN.",
    );
    pub const SYN: Decl<bool> =
        Decl::new("syn", ParamKind::Bool, "false", "no handshake is modelled.");
    pub const SACK: Decl<bool> = Decl::new(
        "sack",
        ParamKind::Bool,
        "true",
        "Linux's sender always uses SACK.",
    );

    /// Every key above, in the `[tcp]` table's order.
    pub const ALL: &[Param] = &[
        WINDOW.param,
        INITIAL_WINDOW.param,
        MIN_RTO.param,
        MAX_RTO.param,
        INITIAL_RTO.param,
        DELAYED_ACK.param,
        DELACK_INTERVAL.param,
        SYN.param,
        SACK.param,
    ];
}

impl FlavourDefaults {
    /// The linux flavour's, from [`keys`].
    pub fn linux() -> FlavourDefaults {
        FlavourDefaults {
            window_pkts: keys::WINDOW.default_value(),
            initial_window_pkts: keys::INITIAL_WINDOW.default_value(),
            min_rto_ns: keys::MIN_RTO.default_value(),
            max_rto_ns: keys::MAX_RTO.default_value(),
            initial_rto_ns: keys::INITIAL_RTO.default_value(),
            delayed_ack: keys::DELAYED_ACK.default_value(),
            delack_interval_ns: keys::DELACK_INTERVAL.default_value(),
            syn: keys::SYN.default_value(),
            sack: keys::SACK.default_value(),
        }
    }
}

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
