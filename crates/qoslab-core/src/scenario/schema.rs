//! The scenario format described from the code: every section's keys ([`Param`]s with kind,
//! unit, default, range and doc) and every queue kind from the registry. [`json_schema`] turns
//! it into a JSON Schema (draft 2020-12; `qoslab schema`), from which the scenario reference
//! page is generated. A test checks that the keys declared here are exactly the keys the
//! serde structs of [`super::spec`] accept, so the two cannot drift.

use toml::{Table, Value};

use crate::aqm::{Discipline, QUEUE_TYPES};
use crate::params::{at_least, Param, ParamKind};

const fn p(name: &'static str, kind: ParamKind, default: &'static str, doc: &'static str) -> Param {
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
    p(
        "name",
        NAME,
        "required",
        "Short name, recorded in every output.",
    ),
    p("description", NAME, "\"\"", "One line about the scenario."),
    p(
        "duration",
        ParamKind::Duration,
        "required",
        "Simulated time.",
    ),
    p("seed", INT0, "1", "Default seed (overridden by --seed)."),
    p(
        "tcp",
        TABLE,
        "ns-2's defaults",
        "Defaults for every TCP flow (see [tcp]).",
    ),
    p(
        "measurement",
        TABLE,
        "the whole run",
        "Measurement window and sampling (see [measurement]).",
    ),
    p("node", TABLE, "required", "[[node]] tables: the nodes."),
    p(
        "link",
        TABLE,
        "required",
        "[[link]] tables: full-duplex links with a queue per direction.",
    ),
    p("flow", TABLE, "required", "[[flow]] tables: the traffic."),
    p(
        "capture",
        TABLE,
        "none",
        "[[capture]] tables: pcap captures of link directions.",
    ),
    p(
        "conditioner",
        TABLE,
        "none",
        "[[conditioner]] tables: DiffServ traffic conditioners.",
    ),
];

/// `[tcp]` and a flow's `tcp` table.
pub const TCP: &[Param] = &[
    p(
        "variant",
        ParamKind::Choice {
            choices: &["reno", "newreno"],
        },
        "reno",
        "TCP congestion control (ns-2.35's one-way agents).",
    ),
    p(
        "packet_size",
        ParamKind::Bytes,
        "1000B",
        "Data packet size on the wire.",
    ),
    p("ack_size", ParamKind::Bytes, "40B", "ACK size on the wire."),
    p(
        "window",
        INT1,
        "20",
        "Advertised-window cap, packets (ns-2's window_).",
    ),
    p(
        "initial_window",
        INT1,
        "2",
        "Initial congestion window, packets.",
    ),
    p(
        "min_rto",
        ParamKind::Duration,
        "200ms",
        "Minimum retransmission timeout.",
    ),
    p(
        "max_rto",
        ParamKind::Duration,
        "60s",
        "Maximum retransmission timeout.",
    ),
    p(
        "initial_rto",
        ParamKind::Duration,
        "3s",
        "Retransmission timeout before the first RTT sample.",
    ),
    p(
        "tick",
        ParamKind::Duration,
        "10ms",
        "Timer granularity of the RTT estimator.",
    ),
    p(
        "delayed_ack",
        ParamKind::Bool,
        "false",
        "The sink delays ACKs (ns-2's TCPSink/DelAck).",
    ),
    p(
        "delack_interval",
        ParamKind::Duration,
        "100ms",
        "Delayed-ACK timeout.",
    ),
    p(
        "max_burst",
        INT0,
        "0",
        "Most packets sent in response to one ACK (0: no limit).",
    ),
    p(
        "dupack_threshold",
        INT1,
        "3",
        "Duplicate ACKs that trigger fast retransmit.",
    ),
    p(
        "ecn",
        ParamKind::Bool,
        "false",
        "The sender is ECN-capable (ECT on data packets).",
    ),
    p(
        "syn",
        ParamKind::Bool,
        "true",
        "Model ns-2's SYN (a 40-byte segment 0) before the initial window.",
    ),
];

/// `[measurement]`.
pub const MEASUREMENT: &[Param] = &[
    p(
        "start",
        ParamKind::Duration,
        "0s",
        "Start of the measurement window.",
    ),
    p(
        "end",
        ParamKind::Duration,
        "the duration",
        "End of the measurement window.",
    ),
    p(
        "interval",
        ParamKind::Duration,
        "1s, or duration/100 when shorter",
        "Time-series sampling interval.",
    ),
    p(
        "point",
        ParamKind::Choice {
            choices: &["receiver", "sender"],
        },
        "receiver",
        "Where throughput is counted.",
    ),
    p(
        "bottleneck",
        NAME,
        "the slowest link",
        "The link whose utilisation is the headline figure.",
    ),
    p(
        "cwnd",
        ParamKind::Bool,
        "true",
        "Record per-flow cwnd in the time series.",
    ),
];

/// `[[node]]`.
pub const NODE: &[Param] = &[
    p(
        "name",
        NAME,
        "required",
        "Node name; with `count`, `{i}` is replaced by the index.",
    ),
    p("count", INT1, "1", "A group of `count` nodes written once."),
];

/// `[[link]]`.
pub const LINK: &[Param] = &[
    p("name", NAME, "\"A-B\"", "Link name; `{i}` in groups."),
    p(
        "count",
        INT1,
        "1",
        "A group of `count` links written once (per-member values as lists).",
    ),
    p("a", NAME, "required", "One end (a node name)."),
    p("b", NAME, "required", "The other end."),
    p(
        "bandwidth",
        ParamKind::Rate,
        "required",
        "Capacity of each direction (or a list per member).",
    ),
    p(
        "delay",
        ParamKind::Duration,
        "required",
        "Propagation delay (or a list per member).",
    ),
    p(
        "queue",
        TABLE,
        "droptail, 50pkts",
        "The queue of both directions (a queue table).",
    ),
    p(
        "queue_ab",
        TABLE,
        "`queue`",
        "The queue of the a→b direction, overriding `queue`.",
    ),
    p(
        "queue_ba",
        TABLE,
        "`queue`",
        "The queue of the b→a direction, overriding `queue`.",
    ),
];

/// `[[flow]]`.
pub const FLOW: &[Param] = &[
    p("name", NAME, "\"flowN\"", "Flow name; `{i}` in groups."),
    p("count", INT1, "1", "A group of `count` flows written once."),
    p("src", NAME, "required", "Sending node."),
    p("dst", NAME, "required", "Receiving node."),
    p(
        "type",
        ParamKind::Choice {
            choices: &["tcp", "cbr", "onoff", "poisson"],
        },
        "tcp",
        "Bulk TCP (FTP-like), or a UDP source.",
    ),
    p(
        "start",
        ParamKind::Duration,
        "0s",
        "Start time, or \"uniform(LO, HI)\" (or a list per member).",
    ),
    p("stop", ParamKind::Duration, "never", "Stop time."),
    p(
        "packet_size",
        ParamKind::Bytes,
        "[tcp] packet_size, 1000B for UDP",
        "Data packet size.",
    ),
    p(
        "rate",
        ParamKind::Rate,
        "required for UDP",
        "CBR rate, ON/OFF peak rate, Poisson mean rate.",
    ),
    p(
        "on",
        ParamKind::Duration,
        "required for onoff",
        "ON/OFF mean burst time (exponential).",
    ),
    p(
        "off",
        ParamKind::Duration,
        "required for onoff",
        "ON/OFF mean idle time (exponential).",
    ),
    p(
        "dscp",
        NAME,
        "BE (0)",
        "Codepoint set by the host (\"AF11\", \"EF\", … or 0..=63).",
    ),
    p(
        "tcp",
        TABLE,
        "[tcp]",
        "Per-flow TCP settings, overriding [tcp].",
    ),
];

/// `[[capture]]`.
pub const CAPTURE: &[Param] = &[
    p("link", NAME, "required", "The captured link."),
    p(
        "direction",
        ParamKind::Choice {
            choices: &["ab", "ba", "both"],
        },
        "ab",
        "Which direction(s).",
    ),
    p(
        "file",
        NAME,
        "\"LINK.pcap\"",
        "File name, relative to the output directory.",
    ),
];

/// `[[conditioner]]`.
pub const CONDITIONER: &[Param] = &[
    p(
        "name",
        NAME,
        "\"condN\"",
        "Conditioner name; `{i}` in groups.",
    ),
    p(
        "count",
        INT1,
        "1",
        "A group of `count` conditioners written once.",
    ),
    p("link", NAME, "required", "The link whose queue it guards."),
    p(
        "direction",
        ParamKind::Choice {
            choices: &["ab", "ba"],
        },
        "ab",
        "The guarded direction.",
    ),
    p(
        "classify",
        NAME,
        "any",
        "\"any\", \"flow:NAME\", \"src:NODE\", \"dst:NODE\" or \"dscp:CODEPOINT\".",
    ),
    p(
        "meter",
        TABLE,
        "required",
        "The meter/marker (a meter table).",
    ),
    p(
        "scope",
        ParamKind::Choice {
            choices: &["per_flow", "aggregate"],
        },
        "per_flow (aggregate for arm, ard, twam)",
        "One meter per flow, or one for all selected traffic.",
    ),
    p(
        "green",
        NAME,
        "AF11",
        "Action for green: a codepoint to write, \"keep\" or \"drop\".",
    ),
    p("yellow", NAME, "AF12", "Action for yellow."),
    p("red", NAME, "AF13 (drop for arm, ard)", "Action for red."),
];

/// A meter table's keys, each with the meter kinds that take it.
pub const METER: &[(Param, &[&str])] = &[
    (
        p(
            "mode",
            ParamKind::Choice {
                choices: &["blind", "aware"],
            },
            "blind",
            "Colour-blind or colour-aware (RFC 2697/2698 §3).",
        ),
        &["token_bucket", "srtcm", "trtcm"],
    ),
    (
        p(
            "cir",
            ParamKind::Rate,
            "required",
            "Committed information rate (TSW: CTR); a list per member.",
        ),
        &["token_bucket", "srtcm", "trtcm", "tsw2cm", "tsw3cm"],
    ),
    (
        p(
            "cbs",
            ParamKind::Bytes,
            "required",
            "Committed burst size; a list per member.",
        ),
        &["token_bucket", "srtcm", "trtcm"],
    ),
    (
        p(
            "ebs",
            ParamKind::Bytes,
            "required",
            "Excess burst size (RFC 2697).",
        ),
        &["srtcm"],
    ),
    (
        p(
            "pir",
            ParamKind::Rate,
            "required",
            "Peak information rate (TSW3CM: PTR); a list per member.",
        ),
        &["trtcm", "tsw3cm"],
    ),
    (
        p(
            "pbs",
            ParamKind::Bytes,
            "required",
            "Peak burst size (RFC 2698).",
        ),
        &["trtcm"],
    ),
    (
        p(
            "window",
            ParamKind::Duration,
            "1s",
            "TSW averaging window (win_len).",
        ),
        &["tsw2cm", "tsw3cm"],
    ),
    (
        p(
            "tpr_max",
            ParamKind::Rate,
            "required",
            "The SLA rate, maximum TPR.",
        ),
        &["arm", "ard"],
    ),
    (
        p(
            "bucket",
            at_least(0.0),
            "60",
            "Leaky bucket size b, packets.",
        ),
        &["arm", "ard"],
    ),
    (
        p(
            "t_rd",
            at_least(0.0),
            "15",
            "Re-marking threshold T_rd, packets.",
        ),
        &["arm", "ard"],
    ),
    (
        p(
            "max_rem",
            at_least(0.0),
            "0.5",
            "Maximum re-marking probability MAX_rem.",
        ),
        &["arm", "ard"],
    ),
    (
        p(
            "tau",
            ParamKind::Duration,
            "0.1s",
            "Sampling period τ; the TPR interval is n·τ.",
        ),
        &["arm", "ard"],
    ),
    (p("n", INT1, "1000", "τ per TPR interval."), &["arm", "ard"]),
    (
        p(
            "p_drop",
            at_least(0.0),
            "0.02",
            "The dropper's probability P_drop.",
        ),
        &["ard"],
    ),
    (
        p(
            "packet_size",
            ParamKind::Bytes,
            "1000B",
            "The unit of token counts.",
        ),
        &["arm", "ard"],
    ),
    (
        p(
            "drop_order",
            ParamKind::Choice {
                choices: &["before_remark", "among_remarked"],
            },
            "before_remark",
            "Where ARD's dropper acts.",
        ),
        &["ard"],
    ),
    (
        p(
            "rates",
            TABLE,
            "required",
            "Contracted rate r_i per flow name.",
        ),
        &["twam"],
    ),
    (
        p(
            "rtt",
            ParamKind::Duration,
            "required",
            "The LSP round-trip time RTT_LSP.",
        ),
        &["twam"],
    ),
    (
        p(
            "window_source",
            ParamKind::Choice {
                choices: &["edge", "oracle"],
            },
            "edge",
            "Windows estimated at the ingress, or the senders' cwnd.",
        ),
        &["twam"],
    ),
    (
        p(
            "formula",
            ParamKind::Choice {
                choices: &["eq3", "window_share"],
            },
            "eq3",
            "How the IN probabilities are computed.",
        ),
        &["twam"],
    ),
    (
        p(
            "alpha",
            at_least(0.0),
            "0.5 (probe), 1 (twam)",
            "Probe: the filter gain α; TWAM: the operating interval in RTT_LSP.",
        ),
        &["probe", "twam"],
    ),
    (
        p("a0", at_least(0.0), "10", "The initial A_IN."),
        &["probe"],
    ),
    (
        p(
            "increase",
            ParamKind::Choice {
                choices: &["double_plus_one", "plus_one", "divide"],
            },
            "double_plus_one",
            "The increase(A_IN) rule.",
        ),
        &["probe"],
    ),
    (
        p(
            "isn",
            INT0,
            "0",
            "ISN added to the segment number to form the 32-bit SN.",
        ),
        &["probe"],
    ),
];

/// The meter kinds, as written in `type`.
pub const METER_TYPES: &[&str] = &[
    "token_bucket",
    "srtcm",
    "trtcm",
    "tsw2cm",
    "tsw3cm",
    "arm",
    "ard",
    "twam",
    "probe",
];

fn s(x: &str) -> Value {
    Value::String(x.to_string())
}

fn obj(pairs: Vec<(&str, Value)>) -> Value {
    Value::Table(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

/// The JSON Schema of one value of `kind`.
fn value_schema(kind: &ParamKind) -> Value {
    let unit = |pattern: &str, example: &str| {
        obj(vec![
            ("type", s("string")),
            ("pattern", s(pattern)),
            ("examples", Value::Array(vec![s(example)])),
        ])
    };
    match kind {
        ParamKind::Number {
            min,
            max,
            min_open,
            max_open,
        } => {
            let mut t = vec![("type", s("number"))];
            if let Some(m) = min {
                t.push((
                    if *min_open {
                        "exclusiveMinimum"
                    } else {
                        "minimum"
                    },
                    Value::Float(*m),
                ));
            }
            if let Some(m) = max {
                t.push((
                    if *max_open {
                        "exclusiveMaximum"
                    } else {
                        "maximum"
                    },
                    Value::Float(*m),
                ));
            }
            obj(t)
        }
        ParamKind::Integer { min } => obj(vec![
            ("type", s("integer")),
            ("minimum", Value::Integer(*min as i64)),
        ]),
        ParamKind::Bool => obj(vec![("type", s("boolean"))]),
        ParamKind::Duration => unit(r"^\s*[0-9.eE+-]+\s*(ns|us|µs|ms|s|min)\s*$", "26ms"),
        ParamKind::Rate => unit(r"^\s*[0-9.eE+-]+\s*([kKMG]?bps|[kMG]?b/s)\s*$", "1.2Mbps"),
        ParamKind::Bytes => unit(
            r"^\s*[0-9.eE+-]+\s*(B|bytes|[kK]B|MB|GB|KiB|MiB)\s*$",
            "500B",
        ),
        ParamKind::Limit => unit(
            r"^\s*[0-9.eE+-]+\s*(pkts|pkt|packets|B|bytes|[kK]B|MB|GB|KiB|MiB)\s*$",
            "100pkts",
        ),
        ParamKind::Curve => obj(vec![("$ref", s("#/$defs/curve"))]),
        ParamKind::Choice { choices } => obj(vec![(
            "enum",
            Value::Array(choices.iter().map(|c| s(c)).collect()),
        )]),
        ParamKind::Name => obj(vec![]),
        ParamKind::Tables { params } if !params.is_empty() => obj(vec![
            ("type", s("array")),
            ("items", object(params, &[], None)),
        ]),
        ParamKind::Tables { .. } => obj(vec![]),
    }
}

/// An object schema of `params` (with `description` and `default` per key); `required` keys;
/// a `type` constant for tagged tables.
fn object(params: &[Param], required: &[&str], tag: Option<&str>) -> Value {
    let mut props = Table::new();
    if let Some(t) = tag {
        props.insert("type".into(), obj(vec![("const", s(t))]));
    }
    for prm in params {
        let mut v = match value_schema(&prm.kind) {
            Value::Table(t) => t,
            _ => Table::new(),
        };
        v.insert(
            "description".into(),
            s(&format!("{} Default: {}.", prm.doc, prm.default)),
        );
        props.insert(prm.name.to_string(), Value::Table(v));
    }
    let mut req: Vec<Value> = required.iter().map(|r| s(r)).collect();
    if tag.is_some() {
        req.insert(0, s("type"));
    }
    obj(vec![
        ("type", s("object")),
        ("additionalProperties", Value::Boolean(false)),
        ("required", Value::Array(req)),
        ("properties", Value::Table(props)),
    ])
}

fn required(params: &[Param]) -> Vec<&'static str> {
    params
        .iter()
        .filter(|p| p.default == "required")
        .map(|p| p.name)
        .collect()
}

/// The JSON Schema of the scenario format (draft 2020-12), as a TOML value (the Python side
/// writes it as JSON).
pub fn json_schema() -> Value {
    let section = |params: &[Param]| object(params, &required(params), None);
    let array_of = |params: &[Param]| {
        obj(vec![
            ("type", s("array")),
            ("items", object(params, &required(params), None)),
        ])
    };
    let queue_ref = obj(vec![("$ref", s("#/$defs/queue"))]);
    let mut top = match object(
        SCENARIO,
        &["name", "duration", "node", "link", "flow"],
        None,
    ) {
        Value::Table(t) => t,
        _ => unreachable!("an object schema is a table"),
    };
    let props = top
        .get_mut("properties")
        .and_then(Value::as_table_mut)
        .expect("properties");
    let mut link = match array_of(LINK) {
        Value::Table(t) => t,
        _ => unreachable!(),
    };
    if let Some(lp) = link
        .get_mut("items")
        .and_then(|i| i.get_mut("properties"))
        .and_then(Value::as_table_mut)
    {
        for k in ["queue", "queue_ab", "queue_ba"] {
            lp.insert(k.into(), queue_ref.clone());
        }
    }
    let mut cond = match array_of(CONDITIONER) {
        Value::Table(t) => t,
        _ => unreachable!(),
    };
    if let Some(cp) = cond
        .get_mut("items")
        .and_then(|i| i.get_mut("properties"))
        .and_then(Value::as_table_mut)
    {
        cp.insert("meter".into(), obj(vec![("$ref", s("#/$defs/meter"))]));
    }
    let mut put = |k: &str, v: Value| {
        let doc = props
            .get(k)
            .and_then(|o| o.get("description"))
            .cloned()
            .expect("declared");
        let mut t = match v {
            Value::Table(t) => t,
            _ => unreachable!(),
        };
        t.insert("description".into(), doc);
        props.insert(k.into(), Value::Table(t));
    };
    put("tcp", section(TCP));
    put("measurement", section(MEASUREMENT));
    put("node", array_of(NODE));
    put("link", Value::Table(link));
    let mut flow = match array_of(FLOW) {
        Value::Table(t) => t,
        _ => unreachable!(),
    };
    if let Some(fp) = flow
        .get_mut("items")
        .and_then(|i| i.get_mut("properties"))
        .and_then(Value::as_table_mut)
    {
        fp.insert("tcp".into(), section(TCP));
    }
    put("flow", Value::Table(flow));
    put("capture", array_of(CAPTURE));
    put("conditioner", Value::Table(cond));
    let queues: Vec<Value> = QUEUE_TYPES
        .iter()
        .map(|k| {
            let (doc, params) = Discipline::describe(k).expect("registered");
            let mut o = match object(params, &required(params), Some(k)) {
                Value::Table(t) => t,
                _ => unreachable!(),
            };
            o.insert("description".into(), s(doc));
            Value::Table(o)
        })
        .collect();
    let meters: Vec<Value> = METER_TYPES
        .iter()
        .map(|k| {
            let params: Vec<Param> = METER
                .iter()
                .filter(|(_, kinds)| kinds.contains(k))
                .map(|(p, _)| *p)
                .collect();
            object(&params, &required(&params), Some(k))
        })
        .collect();
    let curve = object(
        &[
            p(
                "min_th",
                at_least(0.0),
                "required",
                "Minimum threshold, packets.",
            ),
            p(
                "max_th",
                at_least(0.0),
                "required",
                "Maximum threshold, packets.",
            ),
            p(
                "max_p",
                crate::params::open_closed(0.0, 1.0),
                "required",
                "Drop probability at max_th.",
            ),
        ],
        &["min_th", "max_th", "max_p"],
        None,
    );
    top.insert(
        "$schema".into(),
        s("https://json-schema.org/draft/2020-12/schema"),
    );
    top.insert("title".into(), s("qoslab scenario"));
    top.insert(
        "$defs".into(),
        obj(vec![
            ("queue", obj(vec![("oneOf", Value::Array(queues))])),
            ("meter", obj(vec![("oneOf", Value::Array(meters))])),
            ("curve", curve),
        ]),
    );
    Value::Table(top)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fields a serde struct accepts, read from its "unknown field" error.
    fn serde_fields<T: serde::de::DeserializeOwned + std::fmt::Debug>(extra: &str) -> Vec<String> {
        let src = format!("{extra}\nqoslab_no_such_key = 1\n");
        let e = toml::from_str::<T>(&src).expect_err("an unknown key is rejected");
        let msg = e.message().to_string();
        let list = msg
            .split("expected one of ")
            .nth(1)
            .or_else(|| msg.split("expected ").nth(1))
            .unwrap_or_else(|| panic!("no field list in {msg:?}"));
        list.replace(" or ", ",")
            .split(',')
            .map(|x| x.trim().trim_matches('`').to_string())
            .filter(|x| !x.is_empty())
            .collect()
    }

    fn names(params: &[Param]) -> Vec<String> {
        params.iter().map(|p| p.name.to_string()).collect()
    }

    fn same(mut a: Vec<String>, mut b: Vec<String>, what: &str) {
        a.sort();
        b.sort();
        assert_eq!(
            a, b,
            "{what}: declared keys differ from the keys the parser accepts"
        );
    }

    #[test]
    fn declared_keys_are_the_keys_the_parser_accepts() {
        use crate::scenario::spec::*;
        same(names(TCP), serde_fields::<TcpSpec>(""), "[tcp]");
        same(
            names(MEASUREMENT),
            serde_fields::<MeasurementSpec>(""),
            "[measurement]",
        );
        same(
            names(NODE),
            serde_fields::<NodeSpec>("name = \"n\""),
            "[[node]]",
        );
        same(
            names(CAPTURE),
            serde_fields::<CaptureSpec>("link = \"l\""),
            "[[capture]]",
        );
        same(
            names(LINK),
            serde_fields::<LinkSpec>(
                "a = \"a\"\nb = \"b\"\nbandwidth = \"1Mbps\"\ndelay = \"1ms\"",
            ),
            "[[link]]",
        );
        same(
            names(FLOW),
            serde_fields::<FlowSpec>("src = \"a\"\ndst = \"b\""),
            "[[flow]]",
        );
        let mut top = serde_fields::<ScenarioSpec>("name = \"x\"\nduration = \"1s\"");
        top.sort();
        same(names(SCENARIO), top, "top level");
        let mut cond = names(CONDITIONER);
        cond.sort();
        same(
            cond,
            serde_fields::<ConditionerSpec>("link = \"l\"\nmeter = { type = \"srtcm\" }"),
            "[[conditioner]]",
        );
        let mut meter: Vec<String> = METER.iter().map(|(p, _)| p.name.to_string()).collect();
        meter.push("type".into());
        same(
            meter,
            serde_fields::<MeterSpecToml>("type = \"srtcm\""),
            "meter",
        );
    }

    #[test]
    fn every_registered_queue_kind_is_in_the_schema() {
        let v = json_schema();
        let queues = v["$defs"]["queue"]["oneOf"].as_array().unwrap();
        assert_eq!(queues.len(), QUEUE_TYPES.len());
        let ared = queues
            .iter()
            .find(|q| q["properties"]["type"]["const"].as_str() == Some("ared"))
            .expect("ared");
        assert!(ared["properties"].get("beta").is_some());
        assert_eq!(
            ared["properties"]["w_q"]["exclusiveMaximum"].as_float(),
            Some(1.0)
        );
    }
}
