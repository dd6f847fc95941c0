//! Scenarios: parsing (TOML, serde), validation and resolution into the model the simulator
//! builds from. One schema, validated in one place: the Python front end hands TOML text (or
//! a table converted to TOML) to [`Scenario::from_toml`] and never re-implements any check.

pub mod locate;
pub mod spec;

use std::collections::{HashMap, VecDeque};
use std::fmt;

use serde::Serialize;

use spec::*;
pub use spec::{FlowType, QueueType, Start, TcpVariant};

use crate::aqm::red::{RedCurve, RedParams};
use crate::units::Limit;

/// A scenario error: the file, where in it, which key, and what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ScenarioError {
    pub file: String,
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub key: String,
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
            if let Some(c) = self.column {
                write!(f, ":{c}")?;
            }
        }
        if !self.key.is_empty() {
            write!(f, ": key `{}`", self.key)?;
        }
        write!(f, ": {}", self.message)
    }
}

/// A semantic error before it is located in the source.
struct Bad {
    key: String,
    message: String,
}

fn bad(key: impl Into<String>, message: impl Into<String>) -> Bad {
    Bad {
        key: key.into(),
        message: message.into(),
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct TcpConfig {
    pub variant: String,
    pub ack_size_bytes: u32,
    pub window_pkts: u32,
    pub initial_window_pkts: u32,
    pub min_rto_ns: u64,
    pub max_rto_ns: u64,
    pub initial_rto_ns: u64,
    pub tick_ns: u64,
    pub delayed_ack: bool,
    pub delack_interval_ns: u64,
    pub max_burst: u32,
    pub dupack_threshold: u32,
    pub ecn: bool,
    /// ns-2 `syn_`: segment 0 is a 40-byte SYN; cwnd is 1 until it is acknowledged.
    pub syn: bool,
}

impl TcpConfig {
    pub fn is_newreno(&self) -> bool {
        self.variant == "newreno"
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct QueueConfig {
    /// "droptail" or "red".
    #[serde(rename = "type")]
    pub kind: String,
    pub limit_pkts: Option<u64>,
    pub limit_bytes: Option<u64>,
    pub min_th: f64,
    pub max_th: f64,
    pub max_p: f64,
    pub w_q: f64,
    pub gentle: bool,
    pub wait: bool,
    pub byte_mode: bool,
    pub mean_pkt_size_bytes: u32,
    pub ecn: bool,
    /// RIO: "coupled" or "decoupled" (empty otherwise).
    pub mode: String,
    /// RIO/WRED: one curve per drop precedence, 0 = IN (AFx1) first.
    pub precedences: Vec<CurveConfig>,
    /// Multi: "priority", "rr", "wrr" or "drr" (empty otherwise).
    pub scheduler: String,
    /// Multi: the physical queues.
    pub queues: Vec<SubQueueConfig>,
    /// FDD-RED: "estimator" or "oracle" (empty otherwise).
    pub rtt_source: String,
    /// FDD-RED: "shares" or "fig2" (empty otherwise).
    pub penalty: String,
    /// DWRED: `b` of `min_th = b · max_th` (`max_th` holds the initial maximum threshold).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dwred_b: Option<f64>,
    /// DWRED: the TWAM conditioner whose window signal it follows (empty otherwise).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub signal: String,
    /// DWRED: the signalling delay from the ingress, ns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal_delay_ns: Option<u64>,
    /// DWRED: IN thresholds as a multiple of the OUT thresholds (None: static `in` or none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub in_factor: Option<f64>,
    /// The key path of this queue table (for errors found after the conditioners resolve).
    #[serde(skip)]
    pub key: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct SubQueueConfig {
    pub name: String,
    /// Codepoints served by this queue; empty for the default queue.
    pub dscp: Vec<u8>,
    pub default: bool,
    pub weight: u32,
    pub quantum_bytes: u64,
    pub queue: QueueConfig,
}

#[derive(Debug, Clone, Copy, Serialize)]
pub struct CurveConfig {
    pub min_th: f64,
    pub max_th: f64,
    pub max_p: f64,
}

impl CurveConfig {
    pub fn curve(&self, gentle: bool) -> RedCurve {
        RedCurve {
            min_th: self.min_th,
            max_th: self.max_th,
            max_p: self.max_p,
            gentle,
        }
    }
}

impl QueueConfig {
    /// Link capacity in mean-size packets per second (RED's idle correction).
    pub fn ptc(&self, link_bps: u64) -> f64 {
        link_bps as f64 / (8.0 * self.mean_pkt_size_bytes as f64)
    }
    /// DWRED's parameters (None for other queue types).
    pub fn dwred_params(&self) -> Option<crate::aqm::DwredParams> {
        Some(crate::aqm::DwredParams {
            b: self.dwred_b?,
            max_p: self.max_p,
            initial_max_th: self.max_th,
            in_curve: self.precedences.first().map(|c| c.curve(false)),
            in_factor: self.in_factor,
            w_q: self.w_q,
            wait: self.wait,
        })
    }

    pub fn limit(&self) -> Limit {
        match (self.limit_pkts, self.limit_bytes) {
            (Some(p), _) => Limit::Packets(p),
            (None, Some(b)) => Limit::Bytes(b),
            (None, None) => Limit::Packets(50),
        }
    }
    pub fn red_params(&self, link_bps: u64) -> RedParams {
        RedParams {
            curve: RedCurve {
                min_th: self.min_th,
                max_th: self.max_th,
                max_p: self.max_p,
                gentle: self.gentle,
            },
            w_q: self.w_q,
            wait: self.wait,
            byte_mode: self.byte_mode,
            mean_pkt_size: self.mean_pkt_size_bytes,
            ecn: self.ecn,
            ptc: link_bps as f64 / (8.0 * self.mean_pkt_size_bytes as f64),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct LinkConfig {
    pub name: String,
    pub a: String,
    pub b: String,
    #[serde(skip)]
    pub a_idx: usize,
    #[serde(skip)]
    pub b_idx: usize,
    pub bandwidth_bps: u64,
    pub delay_ns: u64,
    pub queue_ab: QueueConfig,
    pub queue_ba: QueueConfig,
}

#[derive(Debug, Clone, Serialize)]
pub struct FlowConfig {
    pub name: String,
    pub src: String,
    pub dst: String,
    #[serde(skip)]
    pub src_idx: usize,
    #[serde(skip)]
    pub dst_idx: usize,
    /// "tcp", "cbr", "onoff" or "poisson".
    pub kind: String,
    pub start_ns: u64,
    /// Upper end of a uniform random start (equal to `start_ns` for a fixed start).
    pub start_max_ns: u64,
    pub stop_ns: Option<u64>,
    pub packet_size_bytes: u32,
    pub dscp: u8,
    pub rate_bps: Option<u64>,
    pub on_ns: Option<u64>,
    pub off_ns: Option<u64>,
    pub tcp: Option<TcpConfig>,
}

#[derive(Debug, Clone, Serialize)]
pub struct MeasurementConfig {
    pub start_ns: u64,
    pub end_ns: u64,
    pub interval_ns: u64,
    pub point: String,
    pub bottleneck: String,
    #[serde(skip)]
    pub bottleneck_idx: usize,
    pub cwnd: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct CaptureConfig {
    pub link: String,
    #[serde(skip)]
    pub link_idx: usize,
    /// "ab", "ba" or "both".
    pub direction: String,
    pub file: String,
}

/// A meter's resolved parameters (bits per second, bytes, nanoseconds).
#[derive(Debug, Clone, Serialize)]
pub struct MeterConfig {
    /// "token_bucket", "srtcm", "trtcm", "tsw2cm" or "tsw3cm".
    #[serde(rename = "type")]
    pub kind: String,
    /// "blind" or "aware".
    pub mode: String,
    pub cir_bps: u64,
    pub cbs_bytes: Option<u64>,
    pub ebs_bytes: Option<u64>,
    pub pir_bps: Option<u64>,
    pub pbs_bytes: Option<u64>,
    pub win_len_ns: Option<u64>,
    /// ARM/ARD parameters (absent for the rate meters).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ard: Option<crate::conditioner::ArdParams>,
    /// TWAM parameters (rates per flow index).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub twam: Option<crate::conditioner::TwamParams>,
    /// Probe marker parameters (absent for the other meters).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub probe: Option<crate::conditioner::ProbeParams>,
}

/// What a conditioner does with a colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Mark(u8),
    Keep,
    Drop,
}

impl Serialize for Action {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Action::Mark(d) => s.serialize_u8(*d),
            Action::Keep => s.serialize_str("keep"),
            Action::Drop => s.serialize_str("drop"),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct ConditionerConfig {
    pub name: String,
    pub link: String,
    /// "ab" or "ba".
    pub direction: String,
    /// Link direction index: link * 2 + (0 for ab, 1 for ba).
    #[serde(skip)]
    pub dir_idx: usize,
    /// "any", "flow", "src", "dst" or "dscp".
    pub classifier: String,
    /// Flow or node name, or the codepoint, for the classifier.
    pub classifier_value: String,
    /// Resolved classifier operand: flow index, node index or DSCP.
    #[serde(skip)]
    pub classifier_arg: usize,
    /// "per_flow" or "aggregate".
    pub scope: String,
    pub meter: MeterConfig,
    pub green: Action,
    pub yellow: Action,
    pub red: Action,
}

/// A validated, fully resolved scenario: groups expanded, defaults applied, names checked.
#[derive(Debug, Clone, Serialize)]
pub struct Scenario {
    pub name: String,
    pub description: String,
    pub duration_ns: u64,
    pub seed: u64,
    pub nodes: Vec<String>,
    pub links: Vec<LinkConfig>,
    pub flows: Vec<FlowConfig>,
    pub measurement: MeasurementConfig,
    pub captures: Vec<CaptureConfig>,
    pub conditioners: Vec<ConditionerConfig>,
}

impl Scenario {
    /// Parses and validates TOML text; `file` names the source in error messages.
    pub fn from_toml(src: &str, file: &str) -> Result<Scenario, ScenarioError> {
        let spec: ScenarioSpec = toml::from_str(src).map_err(|e| {
            let (line, column, key) = match e.span() {
                Some(s) => {
                    let (l, c) = locate::line_col(src, s.start);
                    (
                        Some(l),
                        Some(c),
                        locate::path_at(src, s.start).unwrap_or_default(),
                    )
                }
                None => (None, None, String::new()),
            };
            ScenarioError {
                file: file.to_string(),
                line,
                column,
                key,
                message: e.message().trim().to_string(),
            }
        })?;
        resolve(spec).map_err(|b| {
            let pos = locate::span_of(src, &b.key).map(|s| locate::line_col(src, s.start));
            ScenarioError {
                file: file.to_string(),
                line: pos.map(|p| p.0),
                column: pos.map(|p| p.1),
                key: b.key,
                message: b.message,
            }
        })
    }

    pub fn node_index(&self, name: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n == name)
    }

    /// The resolved scenario as a TOML table (the form the Python side and exporters read).
    pub fn to_toml_value(&self) -> toml::Value {
        toml::Value::try_from(self).expect("a resolved scenario always serialises")
    }
}

fn expand(template: &str, count: Option<u32>, i: usize) -> String {
    if count.is_some() {
        template.replace("{i}", &i.to_string())
    } else {
        template.to_string()
    }
}

fn check_len<T: Clone>(
    key: String,
    v: &Option<PerIndex<T>>,
    n: usize,
    count: Option<u32>,
) -> Result<(), Bad> {
    if let Some(l) = v.as_ref().and_then(|p| p.values()) {
        if count.is_none() {
            return Err(bad(
                key,
                "a list of values needs `count` (one value per group member)",
            ));
        }
        if l != n {
            return Err(bad(
                key,
                format!("expected {n} values (one per group member, count = {n}), got {l}"),
            ));
        }
    }
    Ok(())
}

fn tcp_defaults() -> TcpConfig {
    // ns-2.35's defaults for Agent/TCP and TCPSink, except where noted in docs/models/tcp.md.
    TcpConfig {
        variant: "reno".into(),
        ack_size_bytes: 40,
        window_pkts: 20,
        initial_window_pkts: 2,
        min_rto_ns: 200_000_000,
        max_rto_ns: 60_000_000_000,
        initial_rto_ns: 3_000_000_000,
        tick_ns: 10_000_000,
        delayed_ack: false,
        delack_interval_ns: 100_000_000,
        max_burst: 0,
        dupack_threshold: 3,
        ecn: false,
        syn: true,
    }
}

fn apply_tcp(base: &mut TcpConfig, s: &TcpSpec, packet_size: &mut Option<u64>) {
    if let Some(v) = s.variant {
        base.variant = match v {
            TcpVariant::Reno => "reno".into(),
            TcpVariant::Newreno => "newreno".into(),
        };
    }
    if let Some(v) = s.packet_size {
        *packet_size = Some(v.0);
    }
    if let Some(v) = s.ack_size {
        base.ack_size_bytes = v.0 as u32;
    }
    if let Some(v) = s.window {
        base.window_pkts = v;
    }
    if let Some(v) = s.initial_window {
        base.initial_window_pkts = v;
    }
    if let Some(v) = s.min_rto {
        base.min_rto_ns = v.0;
    }
    if let Some(v) = s.max_rto {
        base.max_rto_ns = v.0;
    }
    if let Some(v) = s.initial_rto {
        base.initial_rto_ns = v.0;
    }
    if let Some(v) = s.tick {
        base.tick_ns = v.0;
    }
    if let Some(v) = s.delayed_ack {
        base.delayed_ack = v;
    }
    if let Some(v) = s.delack_interval {
        base.delack_interval_ns = v.0;
    }
    if let Some(v) = s.max_burst {
        base.max_burst = v;
    }
    if let Some(v) = s.dupack_threshold {
        base.dupack_threshold = v;
    }
    if let Some(v) = s.ecn {
        base.ecn = v;
    }
    if let Some(v) = s.syn {
        base.syn = v;
    }
}

fn validate_tcp(key: &str, t: &TcpConfig) -> Result<(), Bad> {
    if t.window_pkts == 0 {
        return Err(bad(
            format!("{key}.window"),
            "the window must be at least 1 packet",
        ));
    }
    if t.initial_window_pkts == 0 {
        return Err(bad(
            format!("{key}.initial_window"),
            "the initial window must be at least 1 packet",
        ));
    }
    if t.tick_ns == 0 {
        return Err(bad(
            format!("{key}.tick"),
            "the timer granularity must be positive",
        ));
    }
    if t.min_rto_ns > t.max_rto_ns {
        return Err(bad(
            format!("{key}.min_rto"),
            "min_rto must not exceed max_rto",
        ));
    }
    if t.dupack_threshold == 0 {
        return Err(bad(format!("{key}.dupack_threshold"), "must be at least 1"));
    }
    Ok(())
}

/// Validates one drop-precedence curve of a RIO/RI+O queue (`gentle` as the queue's) and
/// appends it to the queue's precedences; errors name `KEY.NAME.min_th`.
fn push_curve(
    c: &mut QueueConfig,
    k: &dyn Fn(&str) -> String,
    name: &str,
    cv: CurveSpec,
) -> Result<(), Bad> {
    RedCurve {
        min_th: cv.min_th,
        max_th: cv.max_th,
        max_p: cv.max_p,
        gentle: c.gentle,
    }
    .validate()
    .map_err(|e| bad(k(&format!("{name}.min_th")), e))?;
    c.precedences.push(CurveConfig {
        min_th: cv.min_th,
        max_th: cv.max_th,
        max_p: cv.max_p,
    });
    Ok(())
}

fn resolve_queue(key: &str, q: &QueueSpec) -> Result<QueueConfig, Bad> {
    let k = |f: &str| format!("{key}.{f}");
    let limit = q.limit.map(|l| l.0).unwrap_or(Limit::Packets(50));
    let (limit_pkts, limit_bytes) = match limit {
        Limit::Packets(0) | Limit::Bytes(0) => {
            return Err(bad(k("limit"), "the queue limit must be positive"))
        }
        Limit::Packets(p) => (Some(p), None),
        Limit::Bytes(b) => (None, Some(b)),
    };
    let mut c = QueueConfig {
        kind: "droptail".into(),
        limit_pkts,
        limit_bytes,
        min_th: 0.0,
        max_th: 0.0,
        max_p: 0.0,
        w_q: 0.0,
        gentle: false,
        wait: true,
        byte_mode: false,
        mean_pkt_size_bytes: 500,
        ecn: false,
        mode: String::new(),
        precedences: Vec::new(),
        scheduler: String::new(),
        queues: Vec::new(),
        rtt_source: String::new(),
        penalty: String::new(),
        dwred_b: None,
        signal: String::new(),
        signal_delay_ns: None,
        in_factor: None,
        key: key.to_string(),
    };
    let (type_name, allowed): (&str, &[&str]) = match q.kind {
        QueueType::Droptail => ("droptail", &["limit"]),
        QueueType::Red => (
            "red",
            &[
                "limit",
                "min_th",
                "max_th",
                "max_p",
                "w_q",
                "gentle",
                "wait",
                "byte_mode",
                "mean_pkt_size",
                "ecn",
            ],
        ),
        QueueType::Rio => (
            "rio",
            &[
                "limit",
                "w_q",
                "gentle",
                "wait",
                "mean_pkt_size",
                "mode",
                "in",
                "mid",
                "out",
            ],
        ),
        QueueType::Wred => (
            "wred",
            &[
                "limit",
                "w_q",
                "gentle",
                "wait",
                "mean_pkt_size",
                "in",
                "mid",
                "out",
            ],
        ),
        QueueType::RioPlusO => (
            "rio_plus_o",
            &[
                "limit",
                "w_q",
                "gentle",
                "wait",
                "mean_pkt_size",
                "in",
                "out",
                "avg_out",
            ],
        ),
        QueueType::Dwred => (
            "dwred",
            &[
                "limit",
                "max_th",
                "max_p",
                "w_q",
                "wait",
                "mean_pkt_size",
                "in",
                "b",
                "signal",
                "signal_delay",
                "in_factor",
            ],
        ),
        QueueType::Multi => ("multi", &["scheduler", "queues"]),
        QueueType::FddRed => (
            "fdd_red",
            &[
                "limit",
                "min_th",
                "max_th",
                "max_p",
                "w_q",
                "gentle",
                "wait",
                "mean_pkt_size",
                "rtt_source",
                "penalty",
            ],
        ),
    };
    if let Some(name) = q.set_keys().find(|n| !allowed.contains(n)) {
        let hint = match q.kind {
            QueueType::Rio | QueueType::Wred if matches!(name, "min_th" | "max_th" | "max_p") => {
                ": give each precedence's curve as `in`, `mid` and `out` tables"
            }
            QueueType::Rio if name == "avg_out" => {
                ": an `avg_out` curve makes it RI+O, use type = \"rio_plus_o\""
            }
            QueueType::RioPlusO if matches!(name, "min_th" | "max_th" | "max_p") => {
                ": give the curves as `in` (on avg_in), `out` (IN+OUT, on avg_total) and \
                 `avg_out` (OUT, on avg_out) tables"
            }
            QueueType::RioPlusO if name == "mid" => ": RI+O has two drop precedences, IN and OUT",
            QueueType::Multi => ": it belongs to each physical queue (queues[i].queue)",
            QueueType::Dwred if matches!(name, "min_th" | "out" | "mid") => {
                ": DWRED sets the OUT curve itself (min_th = b·max_th, max_th = the signalled window)"
            }
            _ => "",
        };
        return Err(bad(
            k(name),
            format!(
                "`{name}` is not a parameter of a {type_name} queue (it takes {}){hint}",
                allowed.join(", ")
            ),
        ));
    }
    match q.kind {
        QueueType::Multi => {
            c.kind = "multi".into();
            c.scheduler = match q.scheduler.unwrap_or(SchedulerSpec::Priority) {
                SchedulerSpec::Priority => "priority",
                SchedulerSpec::Rr => "rr",
                SchedulerSpec::Wrr => "wrr",
                SchedulerSpec::Drr => "drr",
            }
            .into();
            let subs = q.queues.as_ref().ok_or_else(|| {
                bad(
                    k("queues"),
                    "a multi queue needs `queues`, a list of physical queues",
                )
            })?;
            if subs.is_empty() || subs.len() > 8 {
                return Err(bad(
                    k("queues"),
                    format!(
                        "a multi queue has 1 to 8 physical queues, got {}",
                        subs.len()
                    ),
                ));
            }
            let mut seen = [false; 64];
            let mut defaults = 0;
            for (i, sq) in subs.iter().enumerate() {
                let sk = format!("{key}.queues[{i}]");
                if sq.queue.kind == QueueType::FddRed {
                    return Err(bad(
                        format!("{sk}.queue.type"),
                        "a physical queue of a multi queue cannot be fdd_red (use it as a link's queue)",
                    ));
                }
                if sq.queue.kind == QueueType::Multi {
                    return Err(bad(
                        format!("{sk}.queue.type"),
                        "a physical queue cannot itself be a multi queue",
                    ));
                }
                let inner = resolve_queue(&format!("{sk}.queue"), &sq.queue)?;
                let mut dscp = Vec::new();
                for (j, name) in sq.dscp.iter().flatten().enumerate() {
                    let v = crate::ds::parse_dscp(name)
                        .map_err(|e| bad(format!("{sk}.dscp[{j}]"), e))?;
                    if std::mem::replace(&mut seen[v as usize], true) {
                        return Err(bad(
                            format!("{sk}.dscp[{j}]"),
                            format!("codepoint {name} is listed by two queues"),
                        ));
                    }
                    dscp.push(v);
                }
                let is_default = sq.default.unwrap_or(false);
                defaults += usize::from(is_default);
                if dscp.is_empty() && !is_default {
                    return Err(bad(
                        format!("{sk}.dscp"),
                        "a physical queue needs `dscp` codepoints or `default = true`",
                    ));
                }
                let weight = sq.weight.unwrap_or(1);
                if weight == 0 {
                    return Err(bad(format!("{sk}.weight"), "weights must be at least 1"));
                }
                let quantum_bytes = sq.quantum.map(|b| b.0).unwrap_or(1500);
                if quantum_bytes == 0 {
                    return Err(bad(format!("{sk}.quantum"), "the quantum must be positive"));
                }
                c.queues.push(SubQueueConfig {
                    name: sq.name.clone().unwrap_or_else(|| format!("q{i}")),
                    dscp,
                    default: is_default,
                    weight,
                    quantum_bytes,
                    queue: inner,
                });
            }
            if defaults != 1 {
                return Err(bad(
                    k("queues"),
                    format!(
                        "exactly one physical queue must have `default = true` (found {defaults})"
                    ),
                ));
            }
        }
        QueueType::Rio | QueueType::Wred => {
            let is_rio = q.kind == QueueType::Rio;
            c.kind = if is_rio { "rio" } else { "wred" }.into();
            c.mode = if is_rio {
                match q.mode.unwrap_or(RioModeSpec::Coupled) {
                    RioModeSpec::Coupled => "coupled".into(),
                    RioModeSpec::Decoupled => "decoupled".into(),
                }
            } else {
                String::new()
            };
            c.w_q = q.w_q.unwrap_or(0.002);
            c.gentle = q.gentle.unwrap_or(false);
            // Clark & Fang's RIO and ns-2's dsRED spread drops as p_b / (1 - count p_b): no `wait`.
            c.wait = q.wait.unwrap_or(false);
            c.mean_pkt_size_bytes = q.mean_pkt_size.map(|b| b.0 as u32).unwrap_or(500);
            if !(c.w_q > 0.0 && c.w_q < 1.0) {
                return Err(bad(
                    k("w_q"),
                    format!("w_q must be in (0, 1), got {}", c.w_q),
                ));
            }
            let in_ = q.in_.ok_or_else(|| {
                bad(
                    k("in"),
                    format!(
                        "a {} queue needs an `in` curve {{ min_th, max_th, max_p }}",
                        c.kind
                    ),
                )
            })?;
            let out = q.out.ok_or_else(|| {
                bad(
                    k("out"),
                    format!(
                        "a {} queue needs an `out` curve {{ min_th, max_th, max_p }}",
                        c.kind
                    ),
                )
            })?;
            let mut curves = vec![("in", in_)];
            if let Some(m) = q.mid {
                curves.push(("mid", m));
            }
            curves.push(("out", out));
            for (name, cv) in curves {
                push_curve(&mut c, &k, name, cv)?;
            }
        }
        QueueType::RioPlusO => {
            c.kind = "rio_plus_o".into();
            c.mode = "coupled".into();
            c.w_q = q.w_q.unwrap_or(0.002);
            c.gentle = q.gentle.unwrap_or(false);
            c.wait = q.wait.unwrap_or(false);
            c.mean_pkt_size_bytes = q.mean_pkt_size.map(|b| b.0 as u32).unwrap_or(500);
            if !(c.w_q > 0.0 && c.w_q < 1.0) {
                return Err(bad(
                    k("w_q"),
                    format!("w_q must be in (0, 1), got {}", c.w_q),
                ));
            }
            let what = [
                ("in", q.in_, "the IN curve, judged on avg_in"),
                ("out", q.out, "the IN+OUT curve, judged on avg_total"),
                (
                    "avg_out",
                    q.avg_out,
                    "the OUT curve, judged on avg_out = avg_total - avg_in",
                ),
            ];
            for (name, cv, role) in what {
                let cv = cv.ok_or_else(|| {
                    bad(
                        k(name),
                        format!(
                            "a rio_plus_o queue needs `{name}` = {{ min_th, max_th, max_p }} ({role})"
                        ),
                    )
                })?;
                push_curve(&mut c, &k, name, cv)?;
            }
        }
        QueueType::Dwred => {
            c.kind = "dwred".into();
            c.w_q = q.w_q.unwrap_or(0.002);
            c.wait = q.wait.unwrap_or(false);
            c.mean_pkt_size_bytes = q.mean_pkt_size.map(|b| b.0 as u32).unwrap_or(500);
            c.max_p = q.max_p.unwrap_or(0.1);
            c.max_th = match (q.max_th, limit) {
                (Some(m), _) => m,
                (None, Limit::Packets(p)) => p as f64,
                (None, Limit::Bytes(_)) => return Err(bad(
                    k("max_th"),
                    "a dwred queue with a byte limit needs max_th (the initial threshold, packets)",
                )),
            };
            c.dwred_b = Some(q.b.unwrap_or(0.15));
            c.signal = q.signal.clone().ok_or_else(|| {
                bad(
                    k("signal"),
                    "a dwred queue needs `signal`, the name of the twam conditioner at its LSP's ingress",
                )
            })?;
            c.signal_delay_ns = Some(q.signal_delay.map_or(0, |d| d.0));
            c.in_factor = q.in_factor;
            if let Some(cv) = q.in_ {
                c.precedences.push(CurveConfig {
                    min_th: cv.min_th,
                    max_th: cv.max_th,
                    max_p: cv.max_p,
                });
            }
            let p = c.dwred_params().expect("dwred");
            p.validate().map_err(|e| {
                let field = if e.starts_with("in:") {
                    "in.min_th"
                } else {
                    ["b", "max_p", "max_th", "w_q", "in_factor"]
                        .into_iter()
                        .find(|f| e.starts_with(f))
                        .unwrap_or("b")
                };
                bad(k(field), e)
            })?;
        }
        QueueType::Droptail => {}
        QueueType::Red | QueueType::FddRed => {
            let fdd = q.kind == QueueType::FddRed;
            c.kind = if fdd { "fdd_red" } else { "red" }.into();
            if fdd {
                c.rtt_source = match q.rtt_source {
                    Some(RttSourceSpec::Oracle) => "oracle",
                    _ => "estimator",
                }
                .into();
                c.penalty = match q.penalty {
                    Some(PenaltySpec::Fig2) => "fig2",
                    _ => "shares",
                }
                .into();
                if let Limit::Bytes(_) = limit {
                    return Err(bad(
                        k("limit"),
                        "an fdd_red queue counts packets: give the limit in packets (e.g. \"100pkts\")",
                    ));
                }
            }
            c.min_th = q.min_th.ok_or_else(|| {
                bad(
                    k("min_th"),
                    format!("a {type_name} queue needs min_th (packets)"),
                )
            })?;
            c.max_th = q.max_th.ok_or_else(|| {
                bad(
                    k("max_th"),
                    format!("a {type_name} queue needs max_th (packets)"),
                )
            })?;
            c.max_p = q.max_p.unwrap_or(0.1);
            c.w_q = q.w_q.unwrap_or(0.002);
            c.gentle = q.gentle.unwrap_or(false);
            c.wait = q.wait.unwrap_or(true);
            c.byte_mode = q.byte_mode.unwrap_or(false);
            c.mean_pkt_size_bytes = q.mean_pkt_size.map(|b| b.0 as u32).unwrap_or(500);
            c.ecn = q.ecn.unwrap_or(false);
            if c.min_th < 0.0 {
                return Err(bad(
                    k("min_th"),
                    format!("min_th must be >= 0, got {}", c.min_th),
                ));
            }
            if c.min_th >= c.max_th {
                return Err(bad(
                    k("min_th"),
                    format!(
                        "min_th ({}) must be smaller than max_th ({})",
                        c.min_th, c.max_th
                    ),
                ));
            }
            if !(c.max_p > 0.0 && c.max_p <= 1.0) {
                return Err(bad(
                    k("max_p"),
                    format!("max_p must be in (0, 1], got {}", c.max_p),
                ));
            }
            if !(c.w_q > 0.0 && c.w_q < 1.0) {
                return Err(bad(
                    k("w_q"),
                    format!("w_q must be in (0, 1), got {}", c.w_q),
                ));
            }
            if c.mean_pkt_size_bytes == 0 {
                return Err(bad(k("mean_pkt_size"), "mean_pkt_size must be positive"));
            }
        }
    }
    Ok(c)
}

fn resolve(spec: ScenarioSpec) -> Result<Scenario, Bad> {
    if spec.name.trim().is_empty() {
        return Err(bad("name", "the scenario name must not be empty"));
    }
    let duration = spec.duration.0;
    if duration == 0 {
        return Err(bad("duration", "the duration must be positive"));
    }

    // Nodes.
    let mut nodes = Vec::new();
    let mut node_idx: HashMap<String, usize> = HashMap::new();
    for (n, ns) in spec.nodes.iter().enumerate() {
        let count = ns.count.unwrap_or(1) as usize;
        if ns.count == Some(0) {
            return Err(bad(format!("node[{n}].count"), "count must be at least 1"));
        }
        for i in 0..count {
            let name = expand(&ns.name, ns.count, i);
            if name.is_empty() {
                return Err(bad(
                    format!("node[{n}].name"),
                    "node names must not be empty",
                ));
            }
            if node_idx.insert(name.clone(), nodes.len()).is_some() {
                return Err(bad(
                    format!("node[{n}].name"),
                    format!("duplicate node name {name:?} (use \"{{i}}\" in the name of a group)"),
                ));
            }
            nodes.push(name);
        }
    }
    if nodes.is_empty() {
        return Err(bad(
            "node",
            "the scenario declares no nodes ([[node]] tables)",
        ));
    }
    let lookup = |key: String, name: &str| -> Result<usize, Bad> {
        node_idx.get(name).copied().ok_or_else(|| {
            let mut known: Vec<&str> = node_idx.keys().map(|s| s.as_str()).collect();
            known.sort();
            let shown = if known.len() > 12 {
                format!("{} …", known[..12].join(", "))
            } else {
                known.join(", ")
            };
            bad(
                key,
                format!("unknown node {name:?} (declared nodes: {shown})"),
            )
        })
    };

    // Links.
    let mut links = Vec::new();
    let mut link_names: HashMap<String, usize> = HashMap::new();
    for (n, ls) in spec.links.iter().enumerate() {
        let key = format!("link[{n}]");
        if ls.count == Some(0) {
            return Err(bad(format!("{key}.count"), "count must be at least 1"));
        }
        let count = ls.count.unwrap_or(1) as usize;
        check_len(
            format!("{key}.bandwidth"),
            &Some(ls.bandwidth.clone()),
            count,
            ls.count,
        )?;
        check_len(
            format!("{key}.delay"),
            &Some(ls.delay.clone()),
            count,
            ls.count,
        )?;
        let qa = ls.queue_ab.as_ref().or(ls.queue.as_ref());
        let qb = ls.queue_ba.as_ref().or(ls.queue.as_ref());
        let default_q = QueueSpec {
            kind: QueueType::Droptail,
            limit: None,
            min_th: None,
            max_th: None,
            max_p: None,
            w_q: None,
            gentle: None,
            wait: None,
            byte_mode: None,
            mean_pkt_size: None,
            ecn: None,
            mode: None,
            in_: None,
            mid: None,
            out: None,
            avg_out: None,
            scheduler: None,
            queues: None,
            rtt_source: None,
            penalty: None,
            b: None,
            signal: None,
            signal_delay: None,
            in_factor: None,
        };
        let qa_key = if ls.queue_ab.is_some() {
            format!("{key}.queue_ab")
        } else {
            format!("{key}.queue")
        };
        let qb_key = if ls.queue_ba.is_some() {
            format!("{key}.queue_ba")
        } else {
            format!("{key}.queue")
        };
        let queue_ab = resolve_queue(&qa_key, qa.unwrap_or(&default_q))?;
        let queue_ba = resolve_queue(&qb_key, qb.unwrap_or(&default_q))?;
        for i in 0..count {
            let a = expand(&ls.a, ls.count, i);
            let b = expand(&ls.b, ls.count, i);
            let a_idx = lookup(format!("{key}.a"), &a)?;
            let b_idx = lookup(format!("{key}.b"), &b)?;
            if a_idx == b_idx {
                return Err(bad(
                    format!("{key}.b"),
                    format!("a link must join two different nodes, both ends are {a:?}"),
                ));
            }
            let name = match &ls.name {
                Some(t) => expand(t, ls.count, i),
                None => format!("{a}-{b}"),
            };
            let bandwidth = ls.bandwidth.get(i).0;
            if bandwidth == 0 {
                return Err(bad(
                    format!("{key}.bandwidth"),
                    "the bandwidth must be positive",
                ));
            }
            if link_names.insert(name.clone(), links.len()).is_some() {
                return Err(bad(
                    format!("{key}.name"),
                    format!("duplicate link name {name:?}"),
                ));
            }
            links.push(LinkConfig {
                name,
                a,
                b,
                a_idx,
                b_idx,
                bandwidth_bps: bandwidth,
                delay_ns: ls.delay.get(i).0,
                queue_ab: queue_ab.clone(),
                queue_ba: queue_ba.clone(),
            });
        }
    }
    if links.is_empty() {
        return Err(bad(
            "link",
            "the scenario declares no links ([[link]] tables)",
        ));
    }

    // Flows.
    let mut tcp_base = tcp_defaults();
    let mut base_pkt: Option<u64> = None;
    apply_tcp(&mut tcp_base, &spec.tcp, &mut base_pkt);
    validate_tcp("tcp", &tcp_base)?;
    let adjacency = adjacency(nodes.len(), &links);
    let mut flows = Vec::new();
    let mut flow_names: HashMap<String, usize> = HashMap::new();
    for (n, fs) in spec.flows.iter().enumerate() {
        let key = format!("flow[{n}]");
        if fs.count == Some(0) {
            return Err(bad(format!("{key}.count"), "count must be at least 1"));
        }
        let count = fs.count.unwrap_or(1) as usize;
        check_len(format!("{key}.start"), &fs.start, count, fs.count)?;
        check_len(format!("{key}.rate"), &fs.rate, count, fs.count)?;
        let mut tcp = tcp_base.clone();
        // `[tcp] packet_size` is a TCP default; UDP sources default to 1000 bytes.
        let mut pkt = if fs.kind == FlowType::Tcp {
            base_pkt
        } else {
            None
        };
        if let Some(t) = &fs.tcp {
            if fs.kind != FlowType::Tcp {
                return Err(bad(
                    format!("{key}.tcp"),
                    "TCP settings given for a flow that is not of type \"tcp\"",
                ));
            }
            apply_tcp(&mut tcp, t, &mut pkt);
            validate_tcp(&format!("{key}.tcp"), &tcp)?;
        }
        if let Some(p) = fs.packet_size {
            pkt = Some(p.0);
        }
        let packet_size = pkt.unwrap_or(1000);
        if packet_size == 0 || packet_size > 65_535 {
            return Err(bad(
                format!("{key}.packet_size"),
                format!("packet size must be 1..65535 bytes, got {packet_size}"),
            ));
        }
        let needs_rate = matches!(fs.kind, FlowType::Cbr | FlowType::Onoff | FlowType::Poisson);
        if needs_rate && fs.rate.is_none() {
            return Err(bad(
                format!("{key}.rate"),
                "a cbr, onoff or poisson flow needs a rate (e.g. \"1Mbps\")",
            ));
        }
        if !needs_rate && fs.rate.is_some() {
            return Err(bad(
                format!("{key}.rate"),
                "`rate` applies to cbr, onoff and poisson flows, not to tcp",
            ));
        }
        if fs.kind == FlowType::Onoff && (fs.on.is_none() || fs.off.is_none()) {
            return Err(bad(
                format!("{key}.on"),
                "an onoff flow needs mean `on` and `off` times",
            ));
        }
        if fs.kind != FlowType::Onoff && (fs.on.is_some() || fs.off.is_some()) {
            return Err(bad(
                format!("{key}.on"),
                "`on`/`off` apply to onoff flows only",
            ));
        }
        for i in 0..count {
            let src = expand(&fs.src, fs.count, i);
            let dst = expand(&fs.dst, fs.count, i);
            let src_idx = lookup(format!("{key}.src"), &src)?;
            let dst_idx = lookup(format!("{key}.dst"), &dst)?;
            if src_idx == dst_idx {
                return Err(bad(
                    format!("{key}.dst"),
                    format!("source and destination are the same node {src:?}"),
                ));
            }
            if shortest_path(&adjacency, src_idx, dst_idx).is_none() {
                return Err(bad(
                    format!("{key}.dst"),
                    format!("no route from {src:?} to {dst:?}: the links do not connect them"),
                ));
            }
            let name = match &fs.name {
                Some(t) => expand(t, fs.count, i),
                None => format!("flow{}", flows.len()),
            };
            if flow_names.insert(name.clone(), flows.len()).is_some() {
                return Err(bad(
                    format!("{key}.name"),
                    format!("duplicate flow name {name:?}"),
                ));
            }
            let (start_ns, start_max_ns) = match fs.start.as_ref().map(|s| s.get(i).0) {
                None => (0, 0),
                Some(Start::At(t)) => (t, t),
                Some(Start::Uniform(a, b)) => (a, b),
            };
            if start_max_ns >= duration {
                return Err(bad(
                    format!("{key}.start"),
                    "the flow would start after the end of the run",
                ));
            }
            let stop_ns = fs.stop.map(|s| s.0);
            if let Some(s) = stop_ns {
                if s <= start_ns {
                    return Err(bad(
                        format!("{key}.stop"),
                        "the flow stops before it starts",
                    ));
                }
            }
            let rate = fs.rate.as_ref().map(|r| r.get(i).0);
            if rate == Some(0) {
                return Err(bad(format!("{key}.rate"), "the rate must be positive"));
            }
            flows.push(FlowConfig {
                name,
                src,
                dst,
                src_idx,
                dst_idx,
                kind: match fs.kind {
                    FlowType::Tcp => "tcp",
                    FlowType::Cbr => "cbr",
                    FlowType::Onoff => "onoff",
                    FlowType::Poisson => "poisson",
                }
                .into(),
                start_ns,
                start_max_ns,
                stop_ns,
                packet_size_bytes: packet_size as u32,
                dscp: fs.dscp.map(|d| d.0).unwrap_or(0),
                rate_bps: rate,
                on_ns: fs.on.map(|d| d.0),
                off_ns: fs.off.map(|d| d.0),
                tcp: (fs.kind == FlowType::Tcp).then(|| tcp.clone()),
            });
        }
    }
    if flows.is_empty() {
        return Err(bad(
            "flow",
            "the scenario declares no flows ([[flow]] tables)",
        ));
    }

    // Measurement.
    let m = &spec.measurement;
    let start_ns = m.start.map(|d| d.0).unwrap_or(0);
    let end_ns = m.end.map(|d| d.0).unwrap_or(duration);
    if end_ns > duration {
        return Err(bad(
            "measurement.end",
            "the measurement window ends after the run does",
        ));
    }
    if start_ns >= end_ns {
        return Err(bad(
            "measurement.start",
            "the measurement window must start before it ends",
        ));
    }
    let interval_ns = m
        .interval
        .map(|d| d.0)
        .unwrap_or_else(|| (duration / 100).clamp(1, 1_000_000_000));
    if interval_ns == 0 {
        return Err(bad(
            "measurement.interval",
            "the sampling interval must be positive",
        ));
    }
    let point = m.point.clone().unwrap_or_else(|| "receiver".into());
    if point != "receiver" && point != "sender" {
        return Err(bad(
            "measurement.point",
            format!("expected \"receiver\" or \"sender\", got {point:?}"),
        ));
    }
    let bottleneck_idx = match &m.bottleneck {
        Some(b) => *link_names
            .get(b)
            .ok_or_else(|| bad("measurement.bottleneck", format!("unknown link {b:?}")))?,
        None => {
            let mut best = 0;
            for (i, l) in links.iter().enumerate() {
                if l.bandwidth_bps < links[best].bandwidth_bps {
                    best = i;
                }
            }
            best
        }
    };

    // Captures.
    let mut captures = Vec::new();
    for (n, c) in spec.captures.iter().enumerate() {
        let link_idx = *link_names.get(&c.link).ok_or_else(|| {
            bad(
                format!("capture[{n}].link"),
                format!("unknown link {:?}", c.link),
            )
        })?;
        let direction = c.direction.clone().unwrap_or_else(|| "ab".into());
        if !matches!(direction.as_str(), "ab" | "ba" | "both") {
            return Err(bad(
                format!("capture[{n}].direction"),
                format!("expected \"ab\", \"ba\" or \"both\", got {direction:?}"),
            ));
        }
        let file = c.file.clone().unwrap_or_else(|| format!("{}.pcap", c.link));
        captures.push(CaptureConfig {
            link: c.link.clone(),
            link_idx,
            direction,
            file,
        });
    }

    let conditioners = resolve_conditioners(&spec.conditioners, &link_names, &node_idx, &flows)?;
    check_dwred_signals(&links, &conditioners)?;

    Ok(Scenario {
        name: spec.name,
        description: spec.description,
        duration_ns: duration,
        seed: spec.seed.unwrap_or(1),
        nodes,
        measurement: MeasurementConfig {
            start_ns,
            end_ns,
            interval_ns,
            point,
            bottleneck: links[bottleneck_idx].name.clone(),
            bottleneck_idx,
            cwnd: m.cwnd.unwrap_or(true),
        },
        links,
        flows,
        captures,
        conditioners,
    })
}

fn parse_action(key: String, v: &Option<String>, default: u8) -> Result<Action, Bad> {
    match v.as_deref() {
        None => Ok(Action::Mark(default)),
        Some("keep") => Ok(Action::Keep),
        Some("drop") => Ok(Action::Drop),
        Some(s) => crate::ds::parse_dscp(s)
            .map(Action::Mark)
            .map_err(|e| bad(key, format!("{e}, or \"keep\" or \"drop\""))),
    }
}

/// ARM/ARD parameters with the paper's defaults (b = 60, T_rd = 15, MAX_rem = 0.5,
/// τ = 0.1 s, n = 1000, P_drop = 0.02 for ARD and 0 for ARM, 1000-byte packets).
fn resolve_ard(
    m: &MeterSpecToml,
    mk: &dyn Fn(&str) -> String,
) -> Result<Option<crate::conditioner::ArdParams>, Bad> {
    use crate::conditioner::{ArdParams, DropOrder};
    let tpr_max = m
        .tpr_max
        .ok_or_else(|| {
            bad(
                mk("tpr_max"),
                "an arm/ard marker needs `tpr_max` (the SLA rate, e.g. \"1.2Mbps\")",
            )
        })?
        .0;
    if tpr_max == 0 {
        return Err(bad(mk("tpr_max"), "tpr_max must be positive"));
    }
    let tau = m.tau.map_or(100_000_000, |t| t.0);
    let n = m.n.unwrap_or(1000);
    if tau == 0 || n == 0 {
        return Err(bad(
            mk(if tau == 0 { "tau" } else { "n" }),
            "tau and n must be positive (the TPR interval is n·tau)",
        ));
    }
    let p = ArdParams {
        tpr_max,
        bucket_pkts: m.bucket.unwrap_or(60.0),
        t_rd_pkts: m.t_rd.unwrap_or(15.0),
        max_rem: m.max_rem.unwrap_or(0.5),
        interval: tau.saturating_mul(n),
        p_drop: if m.kind == MeterType::Arm {
            0.0
        } else {
            m.p_drop.unwrap_or(0.02)
        },
        packet_size: u32::try_from(m.packet_size.map_or(1000, |b| b.0))
            .map_err(|_| bad(mk("packet_size"), "packet_size is too large"))?,
        drop_order: match m.drop_order {
            Some(DropOrderSpec::AmongRemarked) => DropOrder::AmongRemarked,
            _ => DropOrder::BeforeRemark,
        },
    };
    p.validate().map_err(|e| {
        let field = [
            "bucket",
            "t_rd",
            "max_rem",
            "p_drop",
            "packet_size",
            "tpr_max",
        ]
        .into_iter()
        .find(|f| e.starts_with(f))
        .unwrap_or("tau");
        bad(mk(field), e)
    })?;
    Ok(Some(p))
}

/// TWAM parameters (`rates` by flow name, `rtt`, `alpha` default 1, `window_source` default
/// "edge"); `None` for other meters, which must not set these keys.
fn resolve_twam(
    m: &MeterSpecToml,
    mk: &dyn Fn(&str) -> String,
    flows: &[FlowConfig],
    scope: Option<ScopeSpec>,
) -> Result<Option<crate::conditioner::TwamParams>, Bad> {
    use crate::conditioner::{TwamFormula, TwamParams, WindowSource};
    if m.kind != MeterType::Twam {
        for (f, present) in [
            ("rates", m.rates.is_some()),
            ("rtt", m.rtt.is_some()),
            // The probe marker has an `alpha` of its own (checked in resolve_probe).
            ("alpha", m.alpha.is_some() && m.kind != MeterType::Probe),
            ("window_source", m.window_source.is_some()),
            ("formula", m.formula.is_some()),
        ] {
            if present {
                return Err(bad(
                    mk(f),
                    format!("`{f}` is a parameter of a twam marker only"),
                ));
            }
        }
        return Ok(None);
    }
    if scope == Some(ScopeSpec::PerFlow) {
        return Err(bad(
            mk("type").replace(".meter.type", ".scope"),
            "a twam marker holds all the LSP's flows: scope must be \"aggregate\"",
        ));
    }
    if m.mode.is_some() {
        return Err(bad(
            mk("mode"),
            "a twam marker is colour-blind: remove `mode`",
        ));
    }
    let table = m.rates.as_ref().ok_or_else(|| {
        bad(
            mk("rates"),
            "a twam marker needs `rates`, a table of contracted rates by flow name (e.g. { f0 = \"1Mbps\" })",
        )
    })?;
    let mut rates = vec![0u64; flows.len()];
    for (name, r) in table {
        let i = flows.iter().position(|f| &f.name == name).ok_or_else(|| {
            bad(
                format!("{}.{name}", mk("rates")),
                format!("unknown flow {name:?} (rates are keyed by flow name)"),
            )
        })?;
        rates[i] = r.0;
    }
    let rtt = m
        .rtt
        .ok_or_else(|| {
            bad(
                mk("rtt"),
                "a twam marker needs `rtt`, the LSP round-trip time (e.g. \"80ms\")",
            )
        })?
        .0;
    let p = TwamParams {
        rtt_lsp: rtt,
        alpha: match m.alpha {
            None => 1,
            Some(a) if a >= 1.0 && a.fract() == 0.0 && a <= u32::MAX as f64 => a as u32,
            Some(a) => {
                return Err(bad(
                    mk("alpha"),
                    format!("a twam marker's alpha is a whole number of RTT_LSP (>= 1), got {a}"),
                ))
            }
        },
        window: match m.window_source {
            Some(WindowSourceSpec::Oracle) => WindowSource::Oracle,
            _ => WindowSource::Edge,
        },
        rates,
        formula: match m.formula {
            Some(TwamFormulaSpec::WindowShare) => TwamFormula::WindowShare,
            _ => TwamFormula::Eq3,
        },
    };
    p.validate().map_err(|e| {
        let field = ["rtt", "alpha", "rates"]
            .into_iter()
            .find(|f| e.starts_with(f))
            .unwrap_or("rates");
        bad(mk(field), e)
    })?;
    Ok(Some(p))
}

/// Every DWRED queue names an existing TWAM conditioner in `signal`.
fn check_dwred_signals(links: &[LinkConfig], conds: &[ConditionerConfig]) -> Result<(), Bad> {
    for l in links {
        for q in [&l.queue_ab, &l.queue_ba] {
            for qc in std::iter::once(q).chain(q.queues.iter().map(|s| &s.queue)) {
                if qc.kind != "dwred" {
                    continue;
                }
                match conds.iter().find(|c| c.name == qc.signal) {
                    None => {
                        return Err(bad(
                            format!("{}.signal", qc.key),
                            format!(
                                "no conditioner named {:?} (a dwred queue follows the window signal of a twam conditioner)",
                                qc.signal
                            ),
                        ))
                    }
                    Some(c) if c.meter.twam.is_none() => {
                        return Err(bad(
                            format!("{}.signal", qc.key),
                            format!(
                                "conditioner {:?} is a {} meter: only a twam conditioner signals a window",
                                qc.signal, c.meter.kind
                            ),
                        ))
                    }
                    Some(_) => {}
                }
            }
        }
    }
    Ok(())
}

/// Probe marker parameters with the paper's defaults (α = 0.5, A_0 = 10, A_IN ← 2·A_IN + 1).
fn resolve_probe(
    m: &MeterSpecToml,
    mk: &dyn Fn(&str) -> String,
) -> Result<crate::conditioner::ProbeParams, Bad> {
    use crate::conditioner::{IncreaseRule, ProbeParams};
    let d = ProbeParams::paper();
    let p = ProbeParams {
        alpha: m.alpha.unwrap_or(d.alpha),
        a0: m.a0.unwrap_or(d.a0),
        increase: match m.increase {
            None | Some(IncreaseSpec::DoublePlusOne) => IncreaseRule::DoublePlusOne,
            Some(IncreaseSpec::PlusOne) => IncreaseRule::PlusOne,
            Some(IncreaseSpec::Divide) => IncreaseRule::Divide,
        },
        isn: m.isn.unwrap_or(0),
    };
    p.validate().map_err(|e| {
        let field = if e.starts_with("alpha") {
            "alpha"
        } else {
            "a0"
        };
        bad(mk(field), e)
    })?;
    Ok(p)
}

fn resolve_conditioners(
    specs: &[ConditionerSpec],
    link_names: &HashMap<String, usize>,
    node_idx: &HashMap<String, usize>,
    flows: &[FlowConfig],
) -> Result<Vec<ConditionerConfig>, Bad> {
    let mut out = Vec::new();
    let mut names: HashMap<String, usize> = HashMap::new();
    for (n, cs) in specs.iter().enumerate() {
        let key = format!("conditioner[{n}]");
        if cs.count == Some(0) {
            return Err(bad(format!("{key}.count"), "count must be at least 1"));
        }
        let count = cs.count.unwrap_or(1) as usize;
        let m = &cs.meter;
        let mk = |f: &str| format!("{key}.meter.{f}");
        check_len(mk("cir"), &m.cir, count, cs.count)?;
        check_len(mk("cbs"), &m.cbs, count, cs.count)?;
        check_len(mk("pir"), &m.pir, count, cs.count)?;
        let direction = cs.direction.clone().unwrap_or_else(|| "ab".into());
        if direction != "ab" && direction != "ba" {
            return Err(bad(
                format!("{key}.direction"),
                format!("expected \"ab\" or \"ba\", got {direction:?}"),
            ));
        }
        let kind = match m.kind {
            MeterType::TokenBucket => "token_bucket",
            MeterType::Srtcm => "srtcm",
            MeterType::Trtcm => "trtcm",
            MeterType::Tsw2cm => "tsw2cm",
            MeterType::Tsw3cm => "tsw3cm",
            MeterType::Arm => "arm",
            MeterType::Ard => "ard",
            MeterType::Twam => "twam",
            MeterType::Probe => "probe",
        };
        let needs = |f: &str, present: bool, wanted: bool| -> Result<(), Bad> {
            if wanted && !present {
                return Err(bad(mk(f), format!("a {kind} meter needs `{f}`")));
            }
            if !wanted && present {
                return Err(bad(
                    mk(f),
                    format!("`{f}` is not a parameter of a {kind} meter"),
                ));
            }
            Ok(())
        };
        let tsw = matches!(m.kind, MeterType::Tsw2cm | MeterType::Tsw3cm);
        let ard_like = matches!(m.kind, MeterType::Arm | MeterType::Ard);
        let twam = m.kind == MeterType::Twam;
        let twam_params = resolve_twam(m, &mk, flows, cs.scope)?;
        let probe_kind = m.kind == MeterType::Probe;
        let ard_like = ard_like || twam;
        needs("cir", m.cir.is_some(), !ard_like && !probe_kind)?;
        needs("cbs", m.cbs.is_some(), !tsw && !ard_like && !probe_kind)?;
        needs("ebs", m.ebs.is_some(), m.kind == MeterType::Srtcm)?;
        needs(
            "pir",
            m.pir.is_some(),
            matches!(m.kind, MeterType::Trtcm | MeterType::Tsw3cm),
        )?;
        needs("pbs", m.pbs.is_some(), m.kind == MeterType::Trtcm)?;
        if !tsw && m.window.is_some() {
            return Err(bad(
                mk("window"),
                format!("`window` is not a parameter of a {kind} meter"),
            ));
        }
        let ard = if ard_like && !twam {
            resolve_ard(m, &mk)?
        } else {
            for (f, present) in [
                ("tpr_max", m.tpr_max.is_some()),
                ("bucket", m.bucket.is_some()),
                ("t_rd", m.t_rd.is_some()),
                ("max_rem", m.max_rem.is_some()),
                ("tau", m.tau.is_some()),
                ("n", m.n.is_some()),
                ("p_drop", m.p_drop.is_some()),
                ("packet_size", m.packet_size.is_some()),
                ("drop_order", m.drop_order.is_some()),
            ] {
                needs(f, present, false)?;
            }
            None
        };
        if let Some(a) = &ard {
            if m.mode.is_some() {
                return Err(bad(
                    mk("mode"),
                    format!("a {kind} marker always reads the hosts' IN/OUT marks: remove `mode`"),
                ));
            }
            if m.kind == MeterType::Arm && m.p_drop.is_some() {
                return Err(bad(
                    mk("p_drop"),
                    "an arm marker never drops: use type = \"ard\" for a dropper",
                ));
            }
            debug_assert!(a.validate().is_ok());
            if cs.scope == Some(ScopeSpec::PerFlow) {
                return Err(bad(
                    format!("{key}.scope"),
                    format!("a {kind} marker acts on the aggregate: scope must be \"aggregate\""),
                ));
            }
        }
        let probe = if probe_kind {
            if m.mode.is_some() {
                return Err(bad(
                    mk("mode"),
                    "a probe marker marks every segment itself (colour-blind): remove `mode`",
                ));
            }
            if cs.scope == Some(ScopeSpec::Aggregate) {
                return Err(bad(
                    format!("{key}.scope"),
                    "a probe marker keeps state per flow: scope must be \"per_flow\"",
                ));
            }
            Some(resolve_probe(m, &mk)?)
        } else {
            for (f, present) in [
                // TWAM has an `alpha` of its own (checked in resolve_twam).
                ("alpha", m.alpha.is_some() && m.kind != MeterType::Twam),
                ("a0", m.a0.is_some()),
                ("increase", m.increase.is_some()),
                ("isn", m.isn.is_some()),
            ] {
                needs(f, present, false)?;
            }
            None
        };
        let scope_default = if ard_like {
            ScopeSpec::Aggregate
        } else {
            ScopeSpec::PerFlow
        };
        let scope = match cs.scope.unwrap_or(scope_default) {
            ScopeSpec::PerFlow => "per_flow",
            ScopeSpec::Aggregate => "aggregate",
        };
        let green = parse_action(format!("{key}.green"), &cs.green, 10)?;
        let yellow = parse_action(format!("{key}.yellow"), &cs.yellow, 12)?;
        let red = if ard_like && !twam && cs.red.is_none() {
            Action::Drop
        } else {
            parse_action(format!("{key}.red"), &cs.red, 14)?
        };
        for i in 0..count {
            let link = expand(&cs.link, cs.count, i);
            let li = *link_names
                .get(&link)
                .ok_or_else(|| bad(format!("{key}.link"), format!("unknown link {link:?}")))?;
            let classify = cs
                .classify
                .as_deref()
                .map(|c| expand(c, cs.count, i))
                .unwrap_or_else(|| "any".into());
            let (ckind, cval) = match classify.split_once(':') {
                None if classify == "any" => ("any".to_string(), String::new()),
                Some((k, v)) if matches!(k, "flow" | "src" | "dst" | "dscp") => (k.to_string(), v.trim().to_string()),
                _ => {
                    return Err(bad(
                        format!("{key}.classify"),
                        format!("expected \"any\", \"flow:NAME\", \"src:NODE\", \"dst:NODE\" or \"dscp:CODEPOINT\", got {classify:?}"),
                    ))
                }
            };
            let carg = match ckind.as_str() {
                "any" => 0,
                "flow" => flows.iter().position(|f| f.name == cval).ok_or_else(|| {
                    bad(format!("{key}.classify"), format!("unknown flow {cval:?}"))
                })?,
                "src" | "dst" => *node_idx.get(&cval).ok_or_else(|| {
                    bad(format!("{key}.classify"), format!("unknown node {cval:?}"))
                })?,
                _ => crate::ds::parse_dscp(&cval).map_err(|e| bad(format!("{key}.classify"), e))?
                    as usize,
            };
            let cir = m.cir.as_ref().map_or(0, |c| c.get(i).0);
            let pir = m.pir.as_ref().map(|p| p.get(i).0);
            if cir == 0 && !ard_like && !probe_kind {
                return Err(bad(mk("cir"), "the committed rate must be positive"));
            }
            if let Some(p) = pir {
                if p < cir {
                    return Err(bad(
                        mk("pir"),
                        format!("pir ({p} bit/s) must be at least cir ({cir} bit/s)"),
                    ));
                }
            }
            let cbs = m.cbs.as_ref().map(|c| c.get(i).0);
            if cbs == Some(0) {
                return Err(bad(mk("cbs"), "the committed burst size must be positive"));
            }
            let name = match &cs.name {
                Some(t) => expand(t, cs.count, i),
                None => format!("cond{}", out.len()),
            };
            if names.insert(name.clone(), out.len()).is_some() {
                return Err(bad(
                    format!("{key}.name"),
                    format!("duplicate conditioner name {name:?}"),
                ));
            }
            out.push(ConditionerConfig {
                name,
                link,
                direction: direction.clone(),
                dir_idx: li * 2 + usize::from(direction == "ba"),
                classifier: ckind,
                classifier_value: cval,
                classifier_arg: carg,
                scope: scope.into(),
                meter: MeterConfig {
                    kind: kind.into(),
                    mode: match m.mode.unwrap_or(ColorModeSpec::Blind) {
                        ColorModeSpec::Blind => "blind".into(),
                        ColorModeSpec::Aware => "aware".into(),
                    },
                    cir_bps: cir,
                    cbs_bytes: cbs,
                    ebs_bytes: m.ebs.map(|b| b.0),
                    pir_bps: pir,
                    pbs_bytes: m.pbs.map(|b| b.0),
                    win_len_ns: if tsw {
                        Some(m.window.map(|w| w.0).unwrap_or(1_000_000_000))
                    } else {
                        None
                    },
                    ard,
                    twam: twam_params.clone(),
                    probe,
                },
                green,
                yellow,
                red,
            });
        }
    }
    Ok(out)
}

/// Adjacency lists: for each node, (neighbour, link index, direction a→b?) in link order.
pub fn adjacency(n_nodes: usize, links: &[LinkConfig]) -> Vec<Vec<(usize, usize, bool)>> {
    let mut adj = vec![Vec::new(); n_nodes];
    for (i, l) in links.iter().enumerate() {
        adj[l.a_idx].push((l.b_idx, i, true));
        adj[l.b_idx].push((l.a_idx, i, false));
    }
    adj
}

/// Minimum-hop path as a list of link directions (link index * 2 + 0 for a→b, + 1 for b→a).
/// Breadth-first in link declaration order, so ties are broken deterministically.
pub fn shortest_path(
    adj: &[Vec<(usize, usize, bool)>],
    src: usize,
    dst: usize,
) -> Option<Vec<u32>> {
    let mut prev: Vec<Option<(usize, u32)>> = vec![None; adj.len()];
    let mut seen = vec![false; adj.len()];
    let mut q = VecDeque::new();
    seen[src] = true;
    q.push_back(src);
    while let Some(u) = q.pop_front() {
        if u == dst {
            break;
        }
        for &(v, li, ab) in &adj[u] {
            if !seen[v] {
                seen[v] = true;
                prev[v] = Some((u, (li * 2 + usize::from(!ab)) as u32));
                q.push_back(v);
            }
        }
    }
    if !seen[dst] {
        return None;
    }
    let mut path = Vec::new();
    let mut v = dst;
    while v != src {
        let (u, d) = prev[v].expect("BFS predecessor");
        path.push(d);
        v = u;
    }
    path.reverse();
    Some(path)
}

#[cfg(test)]
mod tests;
