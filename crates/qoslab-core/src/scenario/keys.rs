//! The keys of every scenario section but the queues' and meters' (each queue discipline and
//! meter declares its own, in its own file), for the JSON Schema and the reference page
//! ([`super::schema`]).

use crate::params::{Param, ParamKind};

pub(super) const fn param(
    name: &'static str,
    kind: ParamKind,
    default: &'static str,
    doc: &'static str,
) -> Param {
    Param {
        name,
        kind,
        default,
        doc,
    }
}

const INT0: ParamKind = ParamKind::Integer { min: 0 };
const INT1: ParamKind = ParamKind::Integer { min: 1 };
const NAME: ParamKind = ParamKind::Name;
const TABLE: ParamKind = ParamKind::Tables { params: &[] };

/// The top level of a scenario file.
pub const SCENARIO: &[Param] = &[
    param(
        "name",
        NAME,
        "required",
        "Short name, recorded in every output.",
    ),
    param("description", NAME, "\"\"", "One line about the scenario."),
    param(
        "duration",
        ParamKind::Duration,
        "required",
        "Simulated time.",
    ),
    param("seed", INT0, "1", "Default seed (overridden by --seed)."),
    param(
        "tcp",
        TABLE,
        "ns-2's defaults",
        "Defaults for every TCP flow (see [tcp]).",
    ),
    param(
        "measurement",
        TABLE,
        "the whole run",
        "Measurement window and sampling (see [measurement]).",
    ),
    param("node", TABLE, "required", "[[node]] tables: the nodes."),
    param(
        "link",
        TABLE,
        "required",
        "[[link]] tables: full-duplex links with a queue per direction.",
    ),
    param("flow", TABLE, "required", "[[flow]] tables: the traffic."),
    param(
        "capture",
        TABLE,
        "none",
        "[[capture]] tables: pcap captures of link directions.",
    ),
    param(
        "conditioner",
        TABLE,
        "none",
        "[[conditioner]] tables: DiffServ traffic conditioners.",
    ),
];

/// `[tcp]` and a flow's `tcp` table.
pub const TCP: &[Param] = &[
    param(
        "variant",
        ParamKind::Choice {
            choices: &["reno", "newreno"],
        },
        "reno",
        "TCP congestion control (ns-2.35's one-way agents).",
    ),
    param(
        "packet_size",
        ParamKind::Bytes,
        "1000B",
        "Data packet size on the wire.",
    ),
    param("ack_size", ParamKind::Bytes, "40B", "ACK size on the wire."),
    param(
        "window",
        INT1,
        "20",
        "Advertised-window cap, packets (ns-2's window_).",
    ),
    param(
        "initial_window",
        INT1,
        "2",
        "Initial congestion window, packets.",
    ),
    param(
        "min_rto",
        ParamKind::Duration,
        "200ms",
        "Minimum retransmission timeout.",
    ),
    param(
        "max_rto",
        ParamKind::Duration,
        "60s",
        "Maximum retransmission timeout.",
    ),
    param(
        "initial_rto",
        ParamKind::Duration,
        "3s",
        "Retransmission timeout before the first RTT sample.",
    ),
    param(
        "tick",
        ParamKind::Duration,
        "10ms",
        "Timer granularity of the RTT estimator.",
    ),
    param(
        "delayed_ack",
        ParamKind::Bool,
        "false",
        "The sink delays ACKs (ns-2's TCPSink/DelAck).",
    ),
    param(
        "delack_interval",
        ParamKind::Duration,
        "100ms",
        "Delayed-ACK timeout.",
    ),
    param(
        "max_burst",
        INT0,
        "0",
        "Most packets sent in response to one ACK (0: no limit).",
    ),
    param(
        "dupack_threshold",
        INT1,
        "3",
        "Duplicate ACKs that trigger fast retransmit.",
    ),
    param(
        "ecn",
        ParamKind::Bool,
        "false",
        "The sender is ECN-capable (ECT on data packets).",
    ),
    param(
        "syn",
        ParamKind::Bool,
        "true",
        "Model ns-2's SYN (a 40-byte segment 0) before the initial window.",
    ),
];

/// `[measurement]`.
pub const MEASUREMENT: &[Param] = &[
    param(
        "start",
        ParamKind::Duration,
        "0s",
        "Start of the measurement window.",
    ),
    param(
        "end",
        ParamKind::Duration,
        "the duration",
        "End of the measurement window.",
    ),
    param(
        "interval",
        ParamKind::Duration,
        "1s, or duration/100 when shorter",
        "Time-series sampling interval.",
    ),
    param(
        "point",
        ParamKind::Choice {
            choices: &["receiver", "sender"],
        },
        "receiver",
        "Where throughput is counted.",
    ),
    param(
        "bottleneck",
        NAME,
        "the slowest link",
        "The link whose utilisation is the headline figure.",
    ),
    param(
        "cwnd",
        ParamKind::Bool,
        "true",
        "Record per-flow cwnd in the time series.",
    ),
];

/// `[[node]]`.
pub const NODE: &[Param] = &[
    param(
        "name",
        NAME,
        "required",
        "Node name; with `count`, `{i}` is replaced by the index.",
    ),
    param("count", INT1, "1", "A group of `count` nodes written once."),
];

/// `[[link]]`.
pub const LINK: &[Param] = &[
    param("name", NAME, "\"A-B\"", "Link name; `{i}` in groups."),
    param(
        "count",
        INT1,
        "1",
        "A group of `count` links written once (per-member values as lists).",
    ),
    param("a", NAME, "required", "One end (a node name)."),
    param("b", NAME, "required", "The other end."),
    param(
        "bandwidth",
        ParamKind::Rate,
        "required",
        "Capacity of each direction (or a list per member).",
    ),
    param(
        "delay",
        ParamKind::Duration,
        "required",
        "Propagation delay (or a list per member).",
    ),
    param(
        "queue",
        TABLE,
        "droptail, 50pkts",
        "The queue of both directions (a queue table).",
    ),
    param(
        "queue_ab",
        TABLE,
        "`queue`",
        "The queue of the a→b direction, overriding `queue`.",
    ),
    param(
        "queue_ba",
        TABLE,
        "`queue`",
        "The queue of the b→a direction, overriding `queue`.",
    ),
];

/// `[[flow]]`.
pub const FLOW: &[Param] = &[
    param("name", NAME, "\"flowN\"", "Flow name; `{i}` in groups."),
    param("count", INT1, "1", "A group of `count` flows written once."),
    param("src", NAME, "required", "Sending node."),
    param("dst", NAME, "required", "Receiving node."),
    param(
        "type",
        ParamKind::Choice {
            choices: &["tcp", "cbr", "onoff", "poisson"],
        },
        "tcp",
        "Bulk TCP (FTP-like), or a UDP source.",
    ),
    param(
        "start",
        ParamKind::Duration,
        "0s",
        "Start time, or \"uniform(LO, HI)\" (or a list per member).",
    ),
    param("stop", ParamKind::Duration, "never", "Stop time."),
    param(
        "packet_size",
        ParamKind::Bytes,
        "[tcp] packet_size, 1000B for UDP",
        "Data packet size.",
    ),
    param(
        "rate",
        ParamKind::Rate,
        "required for UDP",
        "CBR rate, ON/OFF peak rate, Poisson mean rate.",
    ),
    param(
        "on",
        ParamKind::Duration,
        "required for onoff",
        "ON/OFF mean burst time (exponential).",
    ),
    param(
        "off",
        ParamKind::Duration,
        "required for onoff",
        "ON/OFF mean idle time (exponential).",
    ),
    param(
        "dscp",
        NAME,
        "BE (0)",
        "Codepoint set by the host (\"AF11\", \"EF\", … or 0..=63).",
    ),
    param(
        "tcp",
        TABLE,
        "[tcp]",
        "Per-flow TCP settings, overriding [tcp].",
    ),
];

/// `[[capture]]`.
pub const CAPTURE: &[Param] = &[
    param("link", NAME, "required", "The captured link."),
    param(
        "direction",
        ParamKind::Choice {
            choices: &["ab", "ba", "both"],
        },
        "ab",
        "Which direction(s).",
    ),
    param(
        "file",
        NAME,
        "\"LINK.pcap\"",
        "File name, relative to the output directory.",
    ),
];

/// `[[conditioner]]`.
pub const CONDITIONER: &[Param] = &[
    param(
        "name",
        NAME,
        "\"condN\"",
        "Conditioner name; `{i}` in groups.",
    ),
    param(
        "count",
        INT1,
        "1",
        "A group of `count` conditioners written once.",
    ),
    param("link", NAME, "required", "The link whose queue it guards."),
    param(
        "direction",
        ParamKind::Choice {
            choices: &["ab", "ba"],
        },
        "ab",
        "The guarded direction.",
    ),
    param(
        "classify",
        NAME,
        "any",
        "\"any\", \"flow:NAME\", \"src:NODE\", \"dst:NODE\" or \"dscp:CODEPOINT\".",
    ),
    param(
        "meter",
        TABLE,
        "required",
        "The meter/marker (a meter table).",
    ),
    param(
        "scope",
        ParamKind::Choice {
            choices: &["per_flow", "aggregate"],
        },
        "per_flow (aggregate for arm, ard, twam)",
        "One meter per flow, or one for all selected traffic.",
    ),
    param(
        "green",
        NAME,
        "AF11",
        "Action for green: a codepoint to write, \"keep\" or \"drop\".",
    ),
    param("yellow", NAME, "AF12", "Action for yellow."),
    param("red", NAME, "AF13 (drop for arm, ard)", "Action for red."),
];
