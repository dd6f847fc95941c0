//! Scenarios: parsing (TOML, serde), validation and resolution into the model the simulator
//! builds from. One schema, validated in one place: the Python front end hands TOML text (or
//! a table converted to TOML) to [`Scenario::from_toml`] and never re-implements any check.

mod arrivals;
mod conditioner;
mod flat;
mod flow;
mod inputs;
mod keys;
pub(crate) mod keys_conditioner;
pub mod locate;
mod read_limit;
pub mod schema;
pub mod spec;
mod tcp_table;
mod timing;
mod topology;

use std::collections::HashMap;
use std::fmt;

use serde::Serialize;

pub use crate::aqm::{Discipline, QueueConfig};
pub use crate::traffic::trace::TraceInfo;
pub use arrivals::ArrivalConfig;
pub use conditioner::{Action, Classifier, ConditionerConfig, Direction, MeterConfig, Scope};
pub use flow::{FlowConfig, TcpConfig};
pub use inputs::InputRoots;
use spec::*;
pub use spec::{Start, TcpVariant};
pub use timing::TimingConfig;
pub use topology::{adjacency, components, routes, shortest_path, Adjacency, LinkConfig};

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

// A semantic error before it is located in the source: the key path and the message.
use crate::params::{key_error as bad, KeyError as Bad};

/// Samples of a run's time series when `measurement.interval` is not given (duration / this)…
const DEFAULT_SAMPLES: u64 = 1000;
/// …but a sample at least every 100 ms.
const MAX_DEFAULT_INTERVAL_NS: u64 = 100_000_000;

#[derive(Debug, Clone, Serialize)]
pub struct MeasurementConfig {
    pub start_ns: u64,
    pub end_ns: u64,
    pub interval_ns: u64,
    pub point: MeasurementPoint,
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
    pub direction: CaptureDirection,
    pub file: String,
}

/// Where throughput is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MeasurementPoint {
    /// Packets reaching the receiver.
    Receiver,
    /// Packets leaving the sender.
    Sender,
}

/// Which directions of a link a capture records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CaptureDirection {
    Ab,
    Ba,
    Both,
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
    /// Flow-arrival processes: their connections follow the declared flows.
    pub arrivals: Vec<ArrivalConfig>,
    pub measurement: MeasurementConfig,
    /// `[timing]`, the default of every link direction's jitter: None for exact timing (each
    /// link's own `jitter_ns` is what runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timing: Option<TimingConfig>,
    pub captures: Vec<CaptureConfig>,
    pub conditioners: Vec<ConditionerConfig>,
}

impl Scenario {
    /// Every flow's (forward, reverse) route as link directions (link index × 2, plus 1 for
    /// b→a): minimum-hop, ties broken by link declaration order ([`shortest_path`], computed
    /// for all flows at once by [`routes`]).
    pub fn flow_routes(&self) -> Vec<(Vec<u32>, Vec<u32>)> {
        self.routes_of(self.flows.iter().map(|f| (f.src_idx, f.dst_idx)))
    }

    /// Every arrival process's (forward, reverse) route, as [`Scenario::flow_routes`].
    pub fn arrival_routes(&self) -> Vec<(Vec<u32>, Vec<u32>)> {
        self.routes_of(self.arrivals.iter().map(|a| (a.src_idx, a.dst_idx)))
    }

    fn routes_of(&self, ends: impl Iterator<Item = (usize, usize)>) -> Vec<(Vec<u32>, Vec<u32>)> {
        let adj = adjacency(self.nodes.len(), &self.links);
        let pairs: Vec<(usize, usize)> = ends.flat_map(|(s, d)| [(s, d), (d, s)]).collect();
        let n = pairs.len() / 2;
        let mut paths = routes(&adj, &pairs)
            .into_iter()
            .map(|p| p.expect("validated route"));
        (0..n)
            .map(|_| (paths.next().expect("fwd"), paths.next().expect("rev")))
            .collect()
    }

    /// Parses and validates TOML text; `file` names the source in error messages. The files
    /// the scenario names for reading must lie in its folder ([`InputRoots`]).
    pub fn from_toml(src: &str, file: &str) -> Result<Scenario, ScenarioError> {
        Scenario::from_toml_checked(src, file, &[], None)
    }

    /// [`Scenario::from_toml`], with the files the scenario reads allowed in the folders
    /// `allowed` too (`--allow-path`).
    pub fn from_toml_allowing(
        src: &str,
        file: &str,
        allowed: &[std::path::PathBuf],
    ) -> Result<Scenario, ScenarioError> {
        Scenario::from_toml_checked(src, file, allowed, None)
    }

    /// [`Scenario::from_toml`], refusing (before expanding its groups) a scenario whose
    /// resolved form would take more than `limit`: (bytes, what sets them), see
    /// the estimate in `read_limit.rs`.
    pub fn from_toml_within(
        src: &str,
        file: &str,
        limit: Option<(u64, &str)>,
    ) -> Result<Scenario, ScenarioError> {
        Scenario::from_toml_checked(src, file, &[], limit)
    }

    /// Both: the files it reads allowed in `allowed` too, and its resolved form within `limit`.
    pub fn from_toml_checked(
        src: &str,
        file: &str,
        allowed: &[std::path::PathBuf],
        limit: Option<(u64, &str)>,
    ) -> Result<Scenario, ScenarioError> {
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
                message: plain_types(e.message().trim()),
            }
        })?;
        let roots = InputRoots {
            base: base_dir(file),
            allowed: allowed.to_vec(),
        };
        let checked = match limit {
            Some((max, what)) => read_limit::within(&spec, max, what),
            None => Ok(()),
        };
        checked.and_then(|()| resolve(spec, &roots)).map_err(|b| {
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
    /// Every value is range-checked when parsed (see [`crate::units`]), so this fails only on a
    /// value TOML cannot hold (an integer of 2^63 or more) that a check has missed.
    pub fn to_toml_value(&self) -> Result<toml::Value, String> {
        toml::Value::try_from(self).map_err(|e| format!("a value is out of range: {e}"))
    }
}

fn expand(template: &str, count: Option<u32>, i: usize) -> String {
    if count.is_some() {
        template.replace("{i}", &i.to_string())
    } else {
        template.to_string()
    }
}

/// A name of the scenario's (a node's, a link's, a flow's, a conditioner's, the scenario's
/// own): not empty, and without control characters, which every output that names it (tables,
/// progress lines, ns-2 scripts) would carry to a terminal or a file.
fn check_name(key: String, what: &str, name: &str) -> Result<(), Bad> {
    if name.trim().is_empty() {
        return Err(bad(key, format!("{what} names must not be empty")));
    }
    if let Some(c) = name.chars().find(|c| c.is_control()) {
        let shown: String = name.chars().flat_map(char::escape_default).collect();
        return Err(bad(
            key,
            format!(
                "the {what} name \"{shown}\" holds a control character (U+{:04X}): names are \
                 printed as they are",
                c as u32
            ),
        ));
    }
    Ok(())
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

/// A key of a group's table that may be a list of one value per member (`[[link]]`'s
/// `bandwidth`): a list needs `count` (`group`) and `n` values.
fn check_list(
    t: &crate::params::Table,
    name: &str,
    n: usize,
    group: Option<u32>,
) -> Result<(), Bad> {
    let Some(l) = t.list_len(name) else {
        return Ok(());
    };
    if group.is_none() {
        return Err(bad(
            t.key(name),
            "a list of values needs `count` (one value per group member)",
        ));
    }
    if l != n {
        return Err(bad(
            t.key(name),
            format!("expected {n} values (one per group member, count = {n}), got {l}"),
        ));
    }
    Ok(())
}

/// The directory that files a scenario names (CDFs, traces) are relative to: the scenario
/// file's own (`file` may carry a note after the path, as "x.toml (with --set …)" or
/// "x.toml (every TCP sender cubic)"), else the working directory.
fn base_dir(file: &str) -> std::path::PathBuf {
    let candidates = std::iter::once(file).chain(file.match_indices(" (").map(|(i, _)| &file[..i]));
    for path in candidates {
        let p = std::path::Path::new(path);
        if p.is_file() {
            return match p.parent() {
                Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
                _ => std::path::PathBuf::from("."),
            };
        }
    }
    std::path::PathBuf::from(".")
}

fn resolve(spec: ScenarioSpec, base_dir: &InputRoots) -> Result<Scenario, Bad> {
    if spec.name.trim().is_empty() {
        return Err(bad("name", "the scenario name must not be empty"));
    }
    check_name("name".into(), "scenario", &spec.name)?;
    let duration = keys::DURATION.checked("duration".into(), spec.duration.0)?;
    if let Some(seed) = spec.seed.filter(|&s| s > i64::MAX as u64) {
        // serde reads 2^63..2^64 as a u64; TOML's integers (and the resolved form) stop below
        return Err(bad(
            "seed",
            format!("expected a whole number from 0 to 2^63 - 1, got {seed}"),
        ));
    }
    let nodes = topology::resolve_nodes(&spec.nodes)?;
    let timing = timing::resolve_timing(&spec.timing)?;
    let default_jitter = timing.as_ref().map_or(0, |t| t.jitter_ns);
    let (links, link_names) = topology::resolve_links(&spec.links, &nodes, default_jitter)?;
    let (flows, flow_idx) = flow::resolve_flows(&spec, duration, &nodes, &links, base_dir)?;
    let arrivals =
        arrivals::resolve_arrivals(&spec, duration, &nodes, &links, &flow_idx, base_dir)?;
    let measurement = resolve_measurement(&spec.measurement, duration, &links, &link_names)?;
    let captures = resolve_captures(&spec.captures, &link_names)?;
    let traffic = || {
        let flow_ends = flows
            .iter()
            .enumerate()
            .map(|(i, f)| (f.src_idx, f.dst_idx, Some(i), f.tcp.is_some()));
        // an arrival process's transfers are TCP
        let arrival_ends = arrivals.iter().map(|a| (a.src_idx, a.dst_idx, None, true));
        conditioner::Traffic::routed(nodes.names.len(), &links, flow_ends.chain(arrival_ends))
    };
    let conditioners = conditioner::resolve_conditioners(
        &spec.conditioners,
        (&links, &link_names),
        &nodes.idx,
        &flow_idx,
        &traffic,
    )?;
    conditioner::check_dwred_signals(&links, &conditioners)?;
    Ok(Scenario {
        name: spec.name,
        description: spec.description,
        duration_ns: duration,
        seed: spec.seed.unwrap_or_else(|| keys::SEED.default_value()),
        nodes: nodes.names,
        measurement,
        timing,
        links,
        flows,
        arrivals,
        captures,
        conditioners,
    })
}

/// serde's message with Rust's type names (`expected u32`) in the words of the scenario format
/// (`expected a whole number from 0 to 4294967295`), and the value it got named as TOML does.
fn plain_types(message: &str) -> String {
    const NAMES: [(&str, &str); 10] = [
        // the toml crate's own, for 2^63..2^64 read into a table
        (
            "u64 value was too large",
            "the number is too large: at most 2^63 - 1, the largest TOML integer",
        ),
        ("expected u8", "expected a whole number from 0 to 255"),
        ("expected u16", "expected a whole number from 0 to 65535"),
        (
            "expected u32",
            "expected a whole number from 0 to 4294967295",
        ),
        ("expected u64", "expected a whole number from 0 to 2^63 - 1"),
        (
            "expected usize",
            "expected a whole number from 0 to 2^63 - 1",
        ),
        ("expected i64", "expected a whole number"),
        ("expected f64", "expected a number"),
        ("floating point", "number"),
        ("invalid type: string", "invalid type: the string"),
    ];
    NAMES.iter().fold(message.to_string(), |m, (rust, plain)| {
        m.replace(rust, plain)
    })
}

/// The measurement window, sampling and headline bottleneck (default: the slowest link).
fn resolve_measurement(
    m: &toml::Table,
    duration: u64,
    links: &[LinkConfig],
    link_names: &HashMap<String, usize>,
) -> Result<MeasurementConfig, Bad> {
    use keys::measurement::*;
    let t = crate::params::Table::section(m, "measurement", keys::MEASUREMENT)?;
    let start_ns = t.get(&START)?;
    let end_ns = t.opt(&END)?.unwrap_or(duration);
    if end_ns > duration {
        let (end, run) = (crate::units::secs(end_ns), crate::units::secs(duration));
        return Err(bad(
            "measurement.end",
            format!(
                "the measurement window ends at {end}s, after the run does ({run}s): \
                 set measurement.end (and measurement.start) within the duration, \
                 e.g. measurement.end = \"{run}s\""
            ),
        ));
    }
    if start_ns >= end_ns {
        return Err(bad(
            "measurement.start",
            "the measurement window must start before it ends",
        ));
    }
    // The default gives a thousand samples of a short run (queue dynamics at the scale of a
    // round trip in a run of seconds) and a sample every 100 ms of a long one.
    let interval_ns = t
        .opt(&INTERVAL)?
        .unwrap_or_else(|| (duration / DEFAULT_SAMPLES).clamp(1, MAX_DEFAULT_INTERVAL_NS));
    let point = match t.get(&POINT)? {
        "sender" => MeasurementPoint::Sender,
        _ => MeasurementPoint::Receiver,
    };
    let bottleneck_idx = match t.opt(&BOTTLENECK)? {
        Some(b) => *link_names
            .get(&b)
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

    Ok(MeasurementConfig {
        start_ns,
        end_ns,
        interval_ns,
        point,
        bottleneck: links[bottleneck_idx].name.clone(),
        bottleneck_idx,
        cwnd: t.get(&CWND)?,
    })
}

/// A path a scenario names must stay inside the run's output directory: relative, without
/// `..` components, and a plain file name path (no empty name, no NUL, no backslashes).
pub fn confined(path: &str) -> Result<(), String> {
    let why = if path.is_empty() || path.ends_with('/') {
        Some("names no file")
    } else if path.starts_with('/') || path.starts_with('~') {
        Some("is absolute: give a path relative to the output directory")
    } else if path.split('/').any(|c| c == "..") {
        Some("leaves the output directory (`..`)")
    } else if path.contains('\0') || path.contains('\\') {
        Some("contains a NUL or a backslash")
    } else {
        None
    };
    match why {
        Some(w) => Err(format!("the path {path:?} {w}")),
        None => Ok(()),
    }
}

fn resolve_captures(
    specs: &[toml::Table],
    link_names: &HashMap<String, usize>,
) -> Result<Vec<CaptureConfig>, Bad> {
    use keys::capture::*;
    let mut captures = Vec::new();
    for (n, table) in specs.iter().enumerate() {
        let key = format!("capture[{n}]");
        let t = crate::params::Table::section(table, &key, keys::CAPTURE)?;
        let link = t.get(&LINK)?;
        let link_idx = *link_names
            .get(&link)
            .ok_or_else(|| bad(t.key(LINK.name()), format!("unknown link {link:?}")))?;
        let direction = match t.get(&DIRECTION)? {
            "ba" => CaptureDirection::Ba,
            "both" => CaptureDirection::Both,
            _ => CaptureDirection::Ab,
        };
        let file = t.opt(&FILE)?.unwrap_or_else(|| format!("{link}.pcap"));
        confined(&file).map_err(|m| bad(t.key(FILE.name()), m))?;
        check_capture_names(n, &file, direction, &captures)?;
        captures.push(CaptureConfig {
            link,
            link_idx,
            direction,
            file,
        });
    }

    Ok(captures)
}

/// The files a capture writes, relative to the output directory and normalised (no empty or
/// `.` components): one, or for `direction = "both"` one per direction, ".pcap" becoming
/// ".ab.pcap" and ".ba.pcap" (as qoslab.runs.simulate names them).
pub fn capture_files(file: &str, direction: CaptureDirection) -> Vec<String> {
    let norm = |f: &str| {
        f.split('/')
            .filter(|c| !c.is_empty() && *c != ".")
            .collect::<Vec<_>>()
            .join("/")
    };
    match direction {
        CaptureDirection::Both => ["ab", "ba"]
            .iter()
            .map(|d| norm(&file.replace(".pcap", &format!(".{d}.pcap"))))
            .collect(),
        _ => vec![norm(file)],
    }
}

/// The files qoslab writes at the top of a run's output directory besides the `.parquet`
/// tables (python/qoslab/runs/simulate.py, rundir.py's marker).
const OUTPUT_NAMES: [&str; 3] = ["summary.json", "scenario.toml", ".qoslab-run"];

/// A capture's file must end in ".pcap" and lie in no folder named as a file qoslab itself
/// writes beside it ([`OUTPUT_NAMES`], the .parquet tables: the folder would stop it writing
/// that file), and must not be, or hold, the file of an earlier capture: two captures into one
/// file would mix their packets.
fn check_capture_names(
    n: usize,
    file: &str,
    direction: CaptureDirection,
    earlier: &[CaptureConfig],
) -> Result<(), Bad> {
    let key = format!("capture[{n}].file");
    if !file.ends_with(".pcap") {
        return Err(bad(
            key,
            format!(
                "the capture file {file:?} must end in .pcap (qoslab writes summary.json, \
                 scenario.toml and .parquet tables beside it)"
            ),
        ));
    }
    let mine = capture_files(file, direction);
    for f in &mine {
        if let Some((top, _)) = f.split_once('/') {
            if OUTPUT_NAMES.contains(&top) || top.ends_with(".parquet") {
                return Err(bad(
                    key,
                    format!(
                        "the capture file {f:?} is inside {top:?}, a file qoslab writes into the \
                         output directory: choose another folder"
                    ),
                ));
            }
        }
    }
    for (m, c) in earlier.iter().enumerate() {
        for theirs in capture_files(&c.file, c.direction) {
            for f in &mine {
                let nested =
                    f.starts_with(&format!("{theirs}/")) || theirs.starts_with(&format!("{f}/"));
                if *f == theirs || nested {
                    return Err(bad(
                        key,
                        format!(
                            "the capture file {f:?} collides with capture[{m}]'s {theirs:?}: \
                             each capture needs a file of its own"
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod decl_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod unread_tests;
