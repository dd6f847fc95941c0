//! Flows: each `[[flow]]` (groups expanded) with its endpoints, route check, start and stop,
//! and its TCP settings read over the `[tcp]` defaults (`tcp_table.rs`).

use std::collections::HashMap;
use std::sync::Arc;

use serde::Serialize;

use super::arrivals::{read_trace, resolve_size};
use super::keys::tcp;
use super::spec::*;
use super::tcp_table::{check_packet_size, check_segment_size, tcp_base, tcp_for};
use super::topology::{adjacency, components, routes, Nodes};
use super::{bad, check_len, check_name, expand, Bad, LinkConfig};
use crate::traffic::sizes::SizeDist;
use crate::traffic::sources::{self, SourceContext, SourceSpec};
pub use crate::traffic::tcp::TcpConfig;
use crate::traffic::trace::{TraceInfo, TraceRow};

#[derive(Debug, Clone, Serialize)]
pub struct FlowConfig {
    pub name: String,
    pub src: String,
    pub dst: String,
    #[serde(skip)]
    pub src_idx: usize,
    #[serde(skip)]
    pub dst_idx: usize,
    /// `tcp`, or the `type` of its source kind.
    pub kind: &'static str,
    pub start_ns: u64,
    /// Upper end of a uniform random start (equal to `start_ns` for a fixed start).
    pub start_max_ns: u64,
    pub stop_ns: Option<u64>,
    pub packet_size_bytes: u32,
    /// UDP sources: packet sizes drawn per packet from this distribution (its description;
    /// `packet_size_bytes` is then its mean, rounded).
    pub packet_size_dist: Option<String>,
    #[serde(skip)]
    pub packet_sizes: Option<SizeDist>,
    /// A finite TCP transfer: this many bytes, in ⌈size / packet_size⌉ segments.
    pub size_bytes: Option<u64>,
    pub dscp: u8,
    /// An open-loop source's kind and parameters (written as the kind's own keys).
    #[serde(flatten)]
    pub source: Option<SourceSpec>,
    pub tcp: Option<TcpConfig>,
}

/// The data packet size of a sender no table gives one ([`tcp::PACKET_SIZE`]'s default; UDP
/// sources take it too).
pub(super) fn default_packet_size() -> u64 {
    tcp::PACKET_SIZE.default_value()
}

/// The start of a flow that gives none ([`super::keys::flow::START`]'s default).
fn default_start() -> Start {
    parse_start(super::keys::flow::START.default).expect("a declared start")
}

/// `size`, a finite transfer, is a TCP flow's key (the source kinds' keys are checked by the
/// source registry).
fn check_size(key: &str, fs: &FlowSpec, tcp: bool) -> Result<(), Bad> {
    if !tcp && fs.size.is_some() {
        return Err(bad(
            format!("{key}.size"),
            "`size` (a finite transfer) applies to tcp flows only",
        ));
    }
    Ok(())
}

/// Traces read so far, by (file, `trace_flow`): every `[[flow]]` naming the same file (however
/// spelled) shares one copy of its rows.
type TraceCache = HashMap<(std::path::PathBuf, Option<String>), (TraceInfo, Arc<[TraceRow]>)>;

/// [`read_trace`], once per file and `trace_flow`: a flow naming a file read already shares its
/// rows.
fn shared_trace(
    cache: &mut TraceCache,
    key: &str,
    file: &str,
    flow: Option<&str>,
    base_dir: &super::inputs::InputRoots,
) -> Result<(TraceInfo, Arc<[TraceRow]>), Bad> {
    // The cache's key only: read_trace still confines the file (and refuses it before a
    // second flow could share a copy of what it may not read).
    let joined = base_dir.base.join(file);
    let id = (
        std::fs::canonicalize(&joined).unwrap_or(joined),
        flow.map(str::to_string),
    );
    if let Some((info, rows)) = cache.get(&id) {
        let info = TraceInfo {
            file: file.to_string(),
            ..info.clone()
        };
        return Ok((info, rows.clone()));
    }
    let read = read_trace(key, file, flow, base_dir)?;
    cache.insert(id, read.clone());
    Ok(read)
}

/// Flow names to their index in the flows, built as the names are checked for duplicates and
/// asked by everything that names a flow (arrivals, classifiers, meters).
pub type FlowIndex = HashMap<String, usize>;

/// The `[[flow]]` tables with the `[tcp]` defaults applied, and their names' index.
pub(super) fn resolve_flows(
    spec: &ScenarioSpec,
    duration: u64,
    nodes: &Nodes,
    links: &[LinkConfig],
    base_dir: &super::inputs::InputRoots,
) -> Result<(Vec<FlowConfig>, FlowIndex), Bad> {
    let (tcp_base, base_pkt) = tcp_base(spec)?;
    let component = components(&adjacency(nodes.names.len(), links));
    let mut flows = Vec::new();
    let mut flow_keys = Vec::new();
    let mut flow_names = FlowIndex::new();
    let mut traces = TraceCache::new();
    for (n, table) in spec.flows.iter().enumerate() {
        let key = format!("flow[{n}]");
        let fs = FlowSpec::read(table, &key)?;
        let count = fs.count.unwrap_or(1) as usize;
        check_len(format!("{key}.start"), &fs.start, count, fs.count)?;
        // The source kind (`None`: a TCP flow), its keys checked.
        let source = sources::kind_of(&key, &fs.kind, &fs.source, fs.count)?;
        let is_tcp = source.is_none();
        // `[tcp] packet_size` is a TCP default; UDP sources default to 1000 bytes.
        let mut pkt = if is_tcp { base_pkt } else { None };
        if fs.tcp.is_some() && !is_tcp {
            return Err(bad(
                format!("{key}.tcp"),
                "TCP settings given for a flow that is not of type \"tcp\"",
            ));
        }
        let tcp = tcp_for(&key, &tcp_base, fs.tcp.as_ref(), &mut pkt)?;
        let mut packet_sizes = None;
        match &fs.packet_size {
            None => {}
            Some(SizeSpec::Fixed(p)) => pkt = Some(p.0),
            Some(SizeSpec::Dist(d)) => {
                if !source.is_some_and(|s| s.size_dist) {
                    return Err(bad(
                        format!("{key}.packet_size"),
                        "a size distribution applies to UDP sources (cbr, poisson, onoff, \
                         pareto); a TCP flow's segment size is fixed and a trace gives its own",
                    ));
                }
                let dist = resolve_size(&format!("{key}.packet_size"), d, base_dir)?;
                pkt = Some(dist.mean().round().max(1.0) as u64);
                packet_sizes = Some(dist);
            }
        }
        let packet_size = check_packet_size(&key, pkt.unwrap_or_else(default_packet_size))?;
        if is_tcp {
            check_segment_size(&key, packet_size)?;
        }
        check_size(&key, &fs, is_tcp)?;
        for i in 0..count {
            let src = expand(&fs.src, fs.count, i);
            let dst = expand(&fs.dst, fs.count, i);
            let src_idx = nodes.lookup(format!("{key}.src"), &src)?;
            let dst_idx = nodes.lookup(format!("{key}.dst"), &dst)?;
            if src_idx == dst_idx {
                return Err(bad(
                    format!("{key}.dst"),
                    format!("source and destination are the same node {src:?}"),
                ));
            }
            if component[src_idx] != component[dst_idx] {
                return Err(bad(
                    format!("{key}.dst"),
                    format!("no route from {src:?} to {dst:?}: the links do not connect them"),
                ));
            }
            let name = match &fs.name {
                Some(t) => expand(t, fs.count, i),
                None => format!("flow{}", flows.len()),
            };
            check_name(format!("{key}.name"), "flow", &name)?;
            if flow_names.insert(name.clone(), flows.len()).is_some() {
                return Err(bad(
                    format!("{key}.name"),
                    format!("duplicate flow name {name:?}"),
                ));
            }
            let start = fs.start.as_ref().map_or_else(default_start, |s| s.get(i).0);
            let (start_ns, start_max_ns) = match start {
                Start::At(t) => (t, t),
                Start::Uniform(a, b) => (a, b),
            };
            if start_max_ns >= duration {
                return Err(bad(
                    format!("{key}.start"),
                    "the flow would start after the end of the run",
                ));
            }
            let stop_ns = fs.stop;
            if let Some(s) = stop_ns {
                if s <= start_ns {
                    return Err(bad(
                        format!("{key}.stop"),
                        "the flow stops before it starts",
                    ));
                }
            }
            let source = match source {
                None => None,
                Some(_) => {
                    let mut read = |k: &str, file: &str, flow: Option<&str>| {
                        shared_trace(&mut traces, k, file, flow, base_dir)
                    };
                    let mut ctx = SourceContext {
                        read_trace: &mut read,
                    };
                    Some(sources::read(&key, &fs.kind, &fs.source, i, &mut ctx)?)
                }
            };
            flow_keys.push(key.clone());
            flows.push(FlowConfig {
                name,
                src,
                dst,
                src_idx,
                dst_idx,
                kind: source.as_ref().map_or("tcp", SourceSpec::type_name),
                start_ns,
                start_max_ns,
                stop_ns,
                packet_size_bytes: packet_size,
                packet_size_dist: packet_sizes.as_ref().map(SizeDist::describe),
                packet_sizes: packet_sizes.clone(),
                size_bytes: fs.size,
                dscp: fs.dscp.map(|d| d.0).unwrap_or(0),
                tcp: is_tcp.then(|| tcp.clone()),
                source,
            });
        }
    }
    if flows.is_empty() && spec.arrivals.is_empty() {
        return Err(bad(
            "flow",
            "the scenario declares no flows ([[flow]] or [[arrivals]] tables)",
        ));
    }
    check_ecn_marking(&tcp_senders(&flows, &flow_keys), nodes, links)?;

    Ok((flows, flow_names))
}

/// A TCP sender, for the checks that look at its route: a bulk or finite flow, or an
/// arrival process (each of whose connections takes the same route).
pub(super) struct RoutedSender<'a> {
    pub key: String,
    pub name: &'a str,
    pub variant: crate::traffic::cc::TcpVariant,
    pub src: (&'a str, usize),
    pub dst: (&'a str, usize),
}

/// The TCP flows as routed senders, each named by its key.
fn tcp_senders<'a>(flows: &'a [FlowConfig], keys: &[String]) -> Vec<RoutedSender<'a>> {
    flows
        .iter()
        .zip(keys)
        .filter_map(|(f, key)| {
            Some(RoutedSender {
                key: key.clone(),
                name: &f.name,
                variant: f.tcp.as_ref()?.variant,
                src: (&f.src, f.src_idx),
                dst: (&f.dst, f.dst_idx),
            })
        })
        .collect()
}

/// A sender whose variant reacts to ECN marks only (DCTCP) needs a queue on its forward route
/// that can set Congestion Experienced; without one it would silently run as Reno.
pub(super) fn check_ecn_marking(
    senders: &[RoutedSender<'_>],
    nodes: &Nodes,
    links: &[LinkConfig],
) -> Result<(), Bad> {
    let needy: Vec<&RoutedSender<'_>> = senders
        .iter()
        .filter(|s| s.variant.requires_ecn())
        .collect();
    if needy.is_empty() {
        return Ok(());
    }
    let pairs: Vec<(usize, usize)> = needy.iter().map(|s| (s.src.1, s.dst.1)).collect();
    let adj = adjacency(nodes.names.len(), links);
    for (s, route) in needy.iter().zip(routes(&adj, &pairs)) {
        let marks = route.unwrap_or_default().iter().any(|&d| {
            let l = &links[d as usize / 2];
            let q = if d % 2 == 0 { &l.queue_ab } else { &l.queue_ba };
            q.marks_ecn()
        });
        if !marks {
            return Err(bad(
                format!("{}.tcp.variant", s.key),
                format!(
                    "`{}` uses {}, but no queue on its route {} → {} marks ECN \
                     (give one a marking queue, e.g. type = \"step\" or ecn = true)",
                    s.name,
                    s.variant.name(),
                    s.src.0,
                    s.dst.0
                ),
            ));
        }
    }
    Ok(())
}
