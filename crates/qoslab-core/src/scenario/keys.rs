//! The keys of every scenario section but the queues' and meters' (each queue discipline and
//! meter declares its own, in its own file), for the JSON Schema and the reference page
//! ([`super::schema`]). The sections read with [`crate::params::Table`] (`[tcp]`,
//! `[measurement]`, `[timing]`, `[[node]]`, `[[link]]`, `[[capture]]`) declare each key once as a [`Decl`]: the reader
//! takes its checked, defaulted value from it and the section's `Param` list is made of the
//! same declarations.

use super::spec::MAX_COUNT;
use crate::params::typed::{Bytes, Decl, Duration, Rate, Text, Word};
use crate::params::{Param, ParamKind};
use crate::traffic::tcp::WINDOW_PKTS;

const INT0: ParamKind = ParamKind::Integer { min: 0 };
const INT1: ParamKind = ParamKind::Integer { min: 1 };
const NAME: ParamKind = ParamKind::Name;
const TABLE: ParamKind = ParamKind::Tables { params: &[] };

/// The top level's `duration`: read by serde ([`super::spec::ScenarioSpec`], which holds the
/// sections), checked against this declaration.
pub const DURATION: Decl<Duration> = Decl::new(
    "duration",
    ParamKind::Duration,
    "required",
    "Simulated time.",
)
.positive();
/// The top level's `seed` (as [`DURATION`]): its default is the reader's.
pub const SEED: Decl<u64> = Decl::new("seed", INT0, "1", "Default seed (overridden by --seed).");

/// The top level of a scenario file.
pub const SCENARIO: &[Param] = &[
    Param::new(
        "name",
        NAME,
        "required",
        "Short name, recorded in every output.",
    ),
    Param::new("description", NAME, "\"\"", "One line about the scenario."),
    DURATION.param,
    SEED.param,
    Param::new(
        "tcp",
        TABLE,
        "ns-2's defaults",
        "Defaults for every TCP flow (see [tcp]).",
    ),
    Param::new(
        "measurement",
        TABLE,
        "the whole run",
        "Measurement window and sampling (see [measurement]).",
    ),
    Param::new(
        "timing",
        TABLE,
        "exact timing",
        "The hosts' timing noise on every link direction (see [timing]).",
    ),
    Param::new("node", TABLE, "required", "[[node]] tables: the nodes."),
    Param::new(
        "link",
        TABLE,
        "required",
        "[[link]] tables: full-duplex links with a queue per direction.",
    ),
    Param::new(
        "flow",
        TABLE,
        "none (then [[arrivals]])",
        "[[flow]] tables: the traffic (at least one flow or arrival process).",
    ),
    Param::new(
        "arrivals",
        TABLE,
        "none",
        "[[arrivals]] tables: finite TCP transfers arriving as a Poisson process.",
    ),
    Param::new(
        "capture",
        TABLE,
        "none",
        "[[capture]] tables: pcap captures of link directions.",
    ),
    Param::new(
        "conditioner",
        TABLE,
        "none",
        "[[conditioner]] tables: DiffServ traffic conditioners.",
    ),
];

/// The keys of `[tcp]` and of a flow's or arrival process's `tcp` table: each default is
/// ns-2.35's (Agent/TCP, TCPSink), the value of every TCP sender no table sets.
pub mod tcp {
    use super::*;

    pub const FLAVOUR: Decl<Word> = Decl::new(
        "flavour",
        ParamKind::Choice {
            choices: crate::traffic::tcp::FLAVOUR_NAMES,
        },
        "ns2",
        "Sender model: ns2 (ns-2.35's one-way agents) or linux (Linux 6.x's TCP: SACK \
         scoreboard, RACK-TLP, PRR, delivery-rate sampling, tcp_rtt_estimator, Linux's \
         receiver, the kernel's reno/cubic/dctcp/bbr; initial window 10, delayed ACK 40 ms, \
         no SYN, initial RTO 1 s unless set; see docs/models/tcp-linux.md).",
    );
    pub const VARIANT: Decl<Word> = Decl::new(
        "variant",
        ParamKind::Choice {
            choices: crate::traffic::cc::VARIANT_NAMES,
        },
        "reno",
        "TCP congestion control and loss recovery: reno and newreno are ns-2.35's one-way \
         agents; sack is Reno with SACK recovery (RFC 6675); cubic (RFC 9438), dctcp (RFC 8257, \
         implies ecn) and bbr (BBR v1, implies pacing) use NewReno recovery, or SACK's with \
         sack = true.",
    );
    pub const PACKET_SIZE: Decl<Bytes> = Decl::new(
        "packet_size",
        ParamKind::Bytes,
        "1000B",
        "Data packet size on the wire, 1..65535 bytes.",
    );
    pub const ACK_SIZE: Decl<Bytes> = Decl::new(
        "ack_size",
        ParamKind::Bytes,
        "40B",
        "ACK size on the wire, 1..65535 bytes.",
    );
    pub const WINDOW: Decl<u32> = Decl::new(
        "window",
        WINDOW_PKTS,
        "20",
        "Advertised-window cap, packets (ns-2's window_).",
    );
    pub const INITIAL_WINDOW: Decl<u32> = Decl::new(
        "initial_window",
        WINDOW_PKTS,
        "2",
        "Initial congestion window, packets.",
    );
    pub const MIN_RTO: Decl<Duration> = Decl::new(
        "min_rto",
        ParamKind::Duration,
        "200ms",
        "Minimum retransmission timeout.",
    )
    .at_least(1_000, "1us");
    pub const MAX_RTO: Decl<Duration> = Decl::new(
        "max_rto",
        ParamKind::Duration,
        "60s",
        "Maximum retransmission timeout.",
    )
    .at_least(1_000, "1us");
    pub const INITIAL_RTO: Decl<Duration> = Decl::new(
        "initial_rto",
        ParamKind::Duration,
        "3s",
        "Retransmission timeout before the first RTT sample.",
    )
    .at_least(1_000, "1us");
    pub const TICK: Decl<Duration> = Decl::new(
        "tick",
        ParamKind::Duration,
        "10ms",
        "Timer granularity of the RTT estimator.",
    )
    .positive();
    pub const DELAYED_ACK: Decl<bool> = Decl::new(
        "delayed_ack",
        ParamKind::Bool,
        "false",
        "The sink delays ACKs (ns-2's TCPSink/DelAck).",
    );
    pub const DELACK_INTERVAL: Decl<Duration> = Decl::new(
        "delack_interval",
        ParamKind::Duration,
        "100ms",
        "Delayed-ACK timeout.",
    );
    pub const MAX_BURST: Decl<u32> = Decl::new(
        "max_burst",
        INT0,
        "0",
        "Most packets sent in response to one ACK (0: no limit).",
    );
    pub const DUPACK_THRESHOLD: Decl<u32> = Decl::new(
        "dupack_threshold",
        INT1,
        "3",
        "Duplicate ACKs that trigger fast retransmit.",
    );
    pub const ECN: Decl<bool> = Decl::new(
        "ecn",
        ParamKind::Bool,
        "false",
        "The sender is ECN-capable (ECT on data packets).",
    );
    pub const SYN: Decl<bool> = Decl::new(
        "syn",
        ParamKind::Bool,
        "true",
        "Model ns-2's SYN (a 40-byte segment 0) before the initial window.",
    );
    pub const PACING: Decl<bool> = Decl::new(
        "pacing",
        ParamKind::Bool,
        "false",
        "Pace new segments at Linux's rate, gain·cwnd/srtt (gain 2 in slow start, 1.2 after); \
         bbr always paces at its own rate.",
    );
    pub const SACK: Decl<bool> = Decl::new(
        "sack",
        ParamKind::Bool,
        "false",
        "SACK blocks (RFC 2018) and SACK loss recovery (RFC 6675) for cubic, dctcp or bbr; \
         implied by variant sack; not for reno/newreno (ns-2's non-SACK agents).",
    );
    /// Read by the flow's flavour's congestion controls ([`crate::traffic::cc::CcParams`],
    /// [`crate::traffic::linux::cc::LinuxCcParams`]), each against its own keys.
    pub const CC: Param = Param::new(
        "cc",
        ParamKind::Constants,
        "each variant's published constants",
        "The variants' tunable constants, a table per variant, used when that variant runs; \
         their keys are the flow's flavour's: the ns2 flavour's published constants \
         (cc.cubic = { beta = 0.8 }), the linux flavour's kernel module parameters \
         (cc.cubic = { beta = 512 }, of 1024); a flow's table overrides [tcp]'s key by key.",
    );
}

/// `[tcp]` and a flow's `tcp` table.
pub const TCP: &[Param] = {
    use tcp::*;
    &[
        FLAVOUR.param,
        VARIANT.param,
        PACKET_SIZE.param,
        ACK_SIZE.param,
        WINDOW.param,
        INITIAL_WINDOW.param,
        MIN_RTO.param,
        MAX_RTO.param,
        INITIAL_RTO.param,
        TICK.param,
        DELAYED_ACK.param,
        DELACK_INTERVAL.param,
        MAX_BURST.param,
        DUPACK_THRESHOLD.param,
        ECN.param,
        SYN.param,
        PACING.param,
        SACK.param,
        CC,
    ]
};

/// The keys of `[measurement]`.
pub mod measurement {
    use super::*;

    pub const START: Decl<Duration> = Decl::new(
        "start",
        ParamKind::Duration,
        "0s",
        "Start of the measurement window.",
    );
    pub const END: Decl<Duration> = Decl::new(
        "end",
        ParamKind::Duration,
        "the duration",
        "End of the measurement window.",
    );
    pub const INTERVAL: Decl<Duration> = Decl::new(
        "interval",
        ParamKind::Duration,
        "duration/1000, at most 100ms",
        "Time-series sampling interval.",
    )
    .positive();
    pub const POINT: Decl<Word> = Decl::new(
        "point",
        ParamKind::Choice {
            choices: &["receiver", "sender"],
        },
        "receiver",
        "Where throughput is counted.",
    );
    pub const BOTTLENECK: Decl<Text> = Decl::new(
        "bottleneck",
        NAME,
        "the slowest link",
        "The link whose utilisation is the headline figure.",
    );
    pub const CWND: Decl<bool> = Decl::new(
        "cwnd",
        ParamKind::Bool,
        "true",
        "Record per-flow cwnd in the time series.",
    );
}

/// `[measurement]`.
pub const MEASUREMENT: &[Param] = {
    use measurement::*;
    &[
        START.param,
        END.param,
        INTERVAL.param,
        POINT.param,
        BOTTLENECK.param,
        CWND.param,
    ]
};

/// A group's `count`: a whole number from 1 to [`MAX_COUNT`] (`[[node]]`, `[[link]]`,
/// `[[flow]]`, `[[conditioner]]`).
pub const COUNT: Decl<u32> = Decl::new(
    "count",
    ParamKind::IntegerIn {
        min: 1,
        max: MAX_COUNT as u64,
    },
    "1",
    "A group of `count` items written once.",
);

/// The keys of `[[node]]`.
pub mod node {
    use super::*;

    pub const NAME: Decl<Text> = Decl::new(
        "name",
        super::NAME,
        "required",
        "Node name; with `count`, `{i}` is replaced by the index.",
    );
    pub const COUNT: Decl<u32> = super::COUNT.with_doc("A group of `count` nodes written once.");
}

/// `[[node]]`.
pub const NODE: &[Param] = &[node::NAME.param, node::COUNT.param];

/// The keys of `[[link]]`.
pub mod link {
    use super::*;

    pub const NAME: Decl<Text> = Decl::new(
        "name",
        super::NAME,
        "\"A-B\"",
        "Link name; `{i}` in groups.",
    );
    pub const COUNT: Decl<u32> = super::COUNT
        .with_doc("A group of `count` links written once (per-member values as lists).");
    pub const A: Decl<Text> = Decl::new("a", super::NAME, "required", "One end (a node name).");
    pub const B: Decl<Text> = Decl::new("b", super::NAME, "required", "The other end.");
    pub const BANDWIDTH: Decl<Rate> = Decl::new(
        "bandwidth",
        ParamKind::Rate,
        "required",
        "Capacity of each direction (or a list per member).",
    )
    .positive();
    pub const DELAY: Decl<Duration> = Decl::new(
        "delay",
        ParamKind::Duration,
        "required",
        "Propagation delay (or a list per member).",
    );
    pub const JITTER: Decl<Duration> = Decl::new(
        "jitter",
        ParamKind::Duration,
        "[timing] jitter",
        "Timing noise of each direction, overriding [timing] jitter for this link: every \
         packet's propagation takes a further delay drawn uniformly in [0, jitter] from the \
         direction's own stream, and never ends before the packet ahead's (no reordering). 0 \
         keeps exact timing, whose phase effects at a tail-drop queue (Floyd and Jacobson 1992) \
         a real host's timing noise removes (or a list per member).",
    );
    pub const QUEUE: Param = Param::new(
        "queue",
        TABLE,
        "droptail, 50pkts",
        "The queue of both directions (a queue table).",
    );
    pub const QUEUE_AB: Param = Param::new(
        "queue_ab",
        TABLE,
        "`queue`",
        "The queue of the a→b direction, overriding `queue`.",
    );
    pub const QUEUE_BA: Param = Param::new(
        "queue_ba",
        TABLE,
        "`queue`",
        "The queue of the b→a direction, overriding `queue`.",
    );
}

/// `[[link]]`.
pub const LINK: &[Param] = {
    use link::*;
    &[
        NAME.param,
        COUNT.param,
        A.param,
        B.param,
        BANDWIDTH.param,
        DELAY.param,
        JITTER.param,
        QUEUE,
        QUEUE_AB,
        QUEUE_BA,
    ]
};

/// The keys of `[[flow]]`; its other keys are its source kind's (the source registry reads
/// them). `start`, `packet_size` and `dscp` keep serde as their reader (a uniform start, a
/// size table, a codepoint's name).
pub mod flow {
    use super::*;

    pub const NAME: Decl<Text> = Decl::new(
        "name",
        super::NAME,
        "\"flowN\"",
        "Flow name; `{i}` in groups.",
    );
    pub const COUNT: Decl<u32> = super::COUNT.with_doc("A group of `count` flows written once.");
    pub const SRC: Decl<Text> = Decl::new("src", super::NAME, "required", "Sending node.");
    pub const DST: Decl<Text> = Decl::new("dst", super::NAME, "required", "Receiving node.");
    /// Its choices are checked by the source registry ([`crate::traffic::sources::kind_of`]).
    pub const TYPE: Decl<Text> = Decl::new(
        "type",
        ParamKind::Choice {
            choices: crate::traffic::sources::FLOW_TYPES,
        },
        "tcp",
        "TCP (bulk, or finite with `size`), or an open-loop source kind, whose keys are written \
         beside these (see the traffic sources below).",
    );
    pub const START: Param = Param::new(
        "start",
        ParamKind::Duration,
        "0s",
        "Start time, or \"uniform(LO, HI)\" (or a list per member).",
    );
    pub const STOP: Decl<Duration> = Decl::new("stop", ParamKind::Duration, "never", "Stop time.");
    pub const PACKET_SIZE: Param = Param::new(
        "packet_size",
        ParamKind::Size,
        "[tcp] packet_size, 1000B for UDP",
        "Data packet size; UDP sources may give a distribution table (sizes drawn per packet).",
    );
    pub const SIZE: Decl<Bytes> = Decl::new(
        "size",
        ParamKind::Bytes,
        "unlimited",
        "TCP: a finite transfer of this many bytes (⌈size / packet_size⌉ segments); its \
         completion time goes to the transfers table.",
    )
    .positive();
    pub const DSCP: Param = Param::new(
        "dscp",
        super::NAME,
        "BE (0)",
        "Codepoint set by the host (\"AF11\", \"EF\", … or 0..=63).",
    );
    pub const TCP: Param = Param::new(
        "tcp",
        TABLE,
        "[tcp]",
        "Per-flow TCP settings, overriding [tcp].",
    );
}

/// `[[flow]]`.
pub const FLOW: &[Param] = {
    use flow::*;
    &[
        NAME.param,
        COUNT.param,
        SRC.param,
        DST.param,
        TYPE.param,
        START,
        STOP.param,
        PACKET_SIZE,
        SIZE.param,
        DSCP,
        TCP,
    ]
};

/// The keys of `[[arrivals]]`.
pub mod arrivals {
    use super::*;

    pub const NAME: Decl<Text> = Decl::new(
        "name",
        super::NAME,
        "required",
        "The process's name (its row in the flows table).",
    );
    pub const SRC: Decl<Text> = Decl::new("src", super::NAME, "required", "Sending node.");
    pub const DST: Decl<Text> = Decl::new("dst", super::NAME, "required", "Receiving node.");
    pub const ARRIVAL_RATE: Decl<f64> = Decl::new(
        "arrival_rate",
        crate::params::open_closed(0.0, 1e7),
        "or load",
        "Mean flow arrivals per second (Poisson).",
    );
    pub const LOAD: Decl<f64> = Decl::new(
        "load",
        crate::params::open_closed(0.0, 10.0),
        "or arrival_rate",
        "Offered load as a fraction of the slowest link on the route: arrival_rate = load · \
         capacity / (8 · mean size).",
    );
    /// A size or a distribution table, parsed by serde ([`super::super::spec::SizeSpec`]).
    pub const SIZE: Param = Param::new(
        "size",
        ParamKind::Size,
        "required",
        "Transfer size: fixed (\"100KB\") or a distribution table.",
    );
    pub const START: Decl<Duration> = Decl::new(
        "start",
        ParamKind::Duration,
        "0s",
        "First possible arrival.",
    );
    pub const STOP: Decl<Duration> = Decl::new(
        "stop",
        ParamKind::Duration,
        "the end",
        "No arrival from then on.",
    );
    pub const PACKET_SIZE: Decl<Bytes> = Decl::new(
        "packet_size",
        ParamKind::Bytes,
        "[tcp] packet_size",
        "Segment size.",
    );
    /// A codepoint's name or number, parsed by serde ([`super::super::spec::Dscp`]).
    pub const DSCP: Param = Param::new("dscp", super::NAME, "BE (0)", "Codepoint set by the host.");
    pub const TCP: Param = Param::new("tcp", TABLE, "[tcp]", "TCP settings, overriding [tcp].");
    pub const MAX_ACTIVE: Decl<u32> = Decl::new(
        "max_active",
        ParamKind::IntegerIn {
            min: 1,
            max: 1_000_000,
        },
        "1000",
        "Most connections open at once; an arrival finding them all busy is refused (counted \
         in the summary).",
    );
}

/// `[[arrivals]]`.
pub const ARRIVALS: &[Param] = {
    use arrivals::*;
    &[
        NAME.param,
        SRC.param,
        DST.param,
        ARRIVAL_RATE.param,
        LOAD.param,
        SIZE,
        START.param,
        STOP.param,
        PACKET_SIZE.param,
        DSCP,
        TCP,
        MAX_ACTIVE.param,
    ]
};

/// The keys of a size-distribution table (a flow's `packet_size`, an arrival process's `size`).
pub mod size {
    use super::*;

    pub const DIST: Decl<Word> = Decl::new(
        "dist",
        ParamKind::Choice {
            choices: &["fixed", "exponential", "pareto", "lognormal", "empirical"],
        },
        "required",
        "The distribution.",
    );
    pub const MEAN: Decl<Bytes> = Decl::new(
        "mean",
        ParamKind::Bytes,
        "required but for empirical",
        "The mean size.",
    );
    pub const SHAPE: Decl<f64> = Decl::new(
        "shape",
        crate::params::open_closed(1.0, 100.0),
        "required for pareto",
        "Pareto shape (tail index).",
    );
    pub const SIGMA: Decl<f64> = Decl::new(
        "sigma",
        crate::params::open_closed(0.0, 10.0),
        "required for lognormal",
        "Standard deviation of the underlying normal.",
    );
    pub const CDF: Decl<Text> = Decl::new(
        "cdf",
        NAME,
        "required for empirical",
        "\"websearch\" (Alizadeh et al. 2010), \"datamining\" (Greenberg et al. 2009) or a CDF \
         file of `size_bytes probability` lines, relative to the scenario file.",
    );
}

/// A size-distribution table.
pub const SIZE_DIST: &[Param] = &[
    size::DIST.param,
    size::MEAN.param,
    size::SHAPE.param,
    size::SIGMA.param,
    size::CDF.param,
];

/// The keys of `[[capture]]`.
pub mod capture {
    use super::*;

    pub const LINK: Decl<Text> = Decl::new("link", NAME, "required", "The captured link.");
    pub const DIRECTION: Decl<Word> = Decl::new(
        "direction",
        ParamKind::Choice {
            choices: &["ab", "ba", "both"],
        },
        "ab",
        "Which direction(s).",
    );
    pub const FILE: Decl<Text> = Decl::new(
        "file",
        NAME,
        "\"LINK.pcap\"",
        "File name, relative to the output directory.",
    );
}

/// `[[capture]]`.
pub const CAPTURE: &[Param] = &[
    capture::LINK.param,
    capture::DIRECTION.param,
    capture::FILE.param,
];

/// The keys of `[timing]`.
pub use super::timing::keys as timing;
pub use super::timing::TIMING;

/// The keys of `[[conditioner]]`.
pub(crate) use super::keys_conditioner as conditioner;
pub use super::keys_conditioner::CONDITIONER;
