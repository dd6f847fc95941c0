//! Flows and their TCP settings: the `[tcp]` defaults, each `[[flow]]` (groups expanded) with
//! its endpoints, route check, start and stop.

use std::collections::HashMap;
use std::sync::Arc;

use serde::Serialize;

use super::arrivals::{read_trace, resolve_size};
use super::keys::{tcp, TCP};
use super::spec::*;
use super::topology::{adjacency, components, routes, Nodes};
use super::{bad, check_len, check_name, expand, Bad, LinkConfig};
use crate::packet::{MAX_PACKET_BYTES, TCP_IP_HEADER_BYTES};
use crate::params::Table;
use crate::traffic::cc::{CcParams, Recovery};
use crate::traffic::linux::cc::LinuxCcParams;
use crate::traffic::linux::config::FlavourDefaults;
use crate::traffic::sizes::SizeDist;
use crate::traffic::sources::{self, SourceContext, SourceSpec};
pub use crate::traffic::tcp::TcpConfig;
use crate::traffic::tcp::{explicit as ex, Flavour};
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

/// ns-2.35's defaults for Agent/TCP and TCPSink (except where noted in docs/models/tcp.md),
/// as [`tcp`]'s declarations give them: the ns2 flavour's.
fn tcp_defaults() -> TcpConfig {
    let wire = |d: &crate::params::typed::Decl<crate::params::typed::Bytes>| {
        u32::try_from(d.default_value()).expect("a declared size on the wire fits")
    };
    let mut t = TcpConfig {
        variant: variant_of(tcp::VARIANT.default_value()),
        ack_size_bytes: wire(&tcp::ACK_SIZE),
        window_pkts: 0,
        initial_window_pkts: 0,
        min_rto_ns: 0,
        max_rto_ns: 0,
        initial_rto_ns: 0,
        tick_ns: tcp::TICK.default_value(),
        delayed_ack: false,
        delack_interval_ns: 0,
        max_burst: tcp::MAX_BURST.default_value(),
        dupack_threshold: tcp::DUPACK_THRESHOLD.default_value(),
        ecn: tcp::ECN.default_value(),
        syn: false,
        pacing: tcp::PACING.default_value(),
        sack: false,
        flavour: flavour_of(tcp::FLAVOUR.default_value()),
        explicit: 0,
        cc: None,
        linux_cc: None,
        cc_tables: Default::default(),
    };
    t.apply_defaults(&flavour_defaults(t.flavour));
    t
}

/// The defaults `flavour` gives the keys whose defaults differ between flavours: the ns2
/// flavour's are [`tcp`]'s declared defaults (ns-2.35's), the linux flavour's Linux's.
fn flavour_defaults(flavour: Flavour) -> FlavourDefaults {
    match flavour {
        Flavour::Ns2 => FlavourDefaults {
            window_pkts: tcp::WINDOW.default_value(),
            initial_window_pkts: tcp::INITIAL_WINDOW.default_value(),
            min_rto_ns: tcp::MIN_RTO.default_value(),
            max_rto_ns: tcp::MAX_RTO.default_value(),
            initial_rto_ns: tcp::INITIAL_RTO.default_value(),
            delayed_ack: tcp::DELAYED_ACK.default_value(),
            delack_interval_ns: tcp::DELACK_INTERVAL.default_value(),
            syn: tcp::SYN.default_value(),
            sack: tcp::SACK.default_value(),
        },
        Flavour::Linux => FlavourDefaults::linux(),
    }
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

fn variant_of(name: &str) -> TcpVariant {
    TcpVariant::from_name(name).expect("a declared variant name")
}

fn flavour_of(name: &str) -> Flavour {
    match name {
        "linux" => Flavour::Linux,
        _ => Flavour::Ns2,
    }
}

/// The table `s` (`[tcp]`, or a flow's `tcp` at `key`) over `base`; `packet_size` is checked
/// by the caller, which knows the flow's kind.
fn apply_tcp(
    key: &str,
    base: &mut TcpConfig,
    s: &toml::Table,
    packet_size: &mut Option<u64>,
) -> Result<(), Bad> {
    use tcp::*;
    let t = Table::section(s, key, TCP)?;
    if let Some(v) = t.opt(&FLAVOUR)? {
        base.flavour = flavour_of(v);
    }
    if let Some(v) = t.opt(&VARIANT)? {
        base.variant = variant_of(v);
    }
    for (name, bit) in [
        (WINDOW.name(), ex::WINDOW),
        (INITIAL_WINDOW.name(), ex::INITIAL_WINDOW),
        (MIN_RTO.name(), ex::MIN_RTO),
        (MAX_RTO.name(), ex::MAX_RTO),
        (INITIAL_RTO.name(), ex::INITIAL_RTO),
        (DELAYED_ACK.name(), ex::DELAYED_ACK),
        (DELACK_INTERVAL.name(), ex::DELACK_INTERVAL),
        (SYN.name(), ex::SYN),
        (SACK.name(), ex::SACK),
        (TICK.name(), ex::TICK),
        (MAX_BURST.name(), ex::MAX_BURST),
    ] {
        if t.has(name) {
            base.explicit |= bit;
        }
    }
    if let Some(v) = t.opt(&PACKET_SIZE)? {
        *packet_size = Some(v);
    }
    if let Some(v) = t.opt(&ACK_SIZE)? {
        // An ACK is a packet on the wire like any other, checked before it is narrowed (a 5 GB
        // ACK wrapped to 705 MB and stalled the flow without a word).
        base.ack_size_bytes = check_wire_size(&t.key(ACK_SIZE.name()), "ACK", v)?;
    }
    let set = |field: &mut u32, v: Option<u32>| *field = v.unwrap_or(*field);
    set(&mut base.window_pkts, t.opt(&WINDOW)?);
    set(&mut base.initial_window_pkts, t.opt(&INITIAL_WINDOW)?);
    set(&mut base.max_burst, t.opt(&MAX_BURST)?);
    set(&mut base.dupack_threshold, t.opt(&DUPACK_THRESHOLD)?);
    let set = |field: &mut u64, v: Option<u64>| *field = v.unwrap_or(*field);
    set(&mut base.min_rto_ns, t.opt(&MIN_RTO)?);
    set(&mut base.max_rto_ns, t.opt(&MAX_RTO)?);
    set(&mut base.initial_rto_ns, t.opt(&INITIAL_RTO)?);
    set(&mut base.tick_ns, t.opt(&TICK)?);
    set(&mut base.delack_interval_ns, t.opt(&DELACK_INTERVAL)?);
    let (ecn, syn, pacing, sack) = (t.opt(&ECN)?, t.opt(&SYN)?, t.opt(&PACING)?, t.opt(&SACK)?);
    let set = |field: &mut bool, v: Option<bool>| *field = v.unwrap_or(*field);
    set(&mut base.delayed_ack, t.opt(&DELAYED_ACK)?);
    set(&mut base.ecn, ecn);
    set(&mut base.syn, syn);
    set(&mut base.pacing, pacing);
    set(&mut base.sack, sack);
    // Every key no table has set takes the defaults of the flavour resolved so far (the flow's,
    // once its own table is read), never those of a flavour a table below named.
    base.apply_defaults(&flavour_defaults(base.flavour));
    // DCTCP implies ECN and BBR pacing unless this table says otherwise (then `validate_tcp`
    // refuses it); variant sack implies `sack`, which a flow of another variant then inherits
    // as if the table had set it.
    if base.variant.requires_ecn() && ecn != Some(false) {
        base.ecn = true;
    }
    if base.variant.always_paces() && pacing != Some(false) {
        base.pacing = true;
    }
    if base.variant.recovery() == Recovery::Sack && sack != Some(false) {
        base.sack = true;
        base.explicit |= ex::SACK;
    }
    if let Some(cc) = t.table(CC.name)? {
        read_constants(key, base, cc)?;
    }
    let merged = base.cc_tables.get(base.variant.name()).cloned();
    let ckey = format!("{key}.cc.{}", base.variant.name());
    let table = merged.unwrap_or_default();
    // Inherited keys too must be the flow's flavour's (an ns2 `[tcp]` under a linux flow).
    check_cc_keys(&ckey, base.flavour, base.variant, &table)?;
    let (cc, linux_cc) = read_cc(base.flavour, base.variant, &Table::host(&table, &ckey))?;
    (base.cc, base.linux_cc) = (cc, linux_cc);
    if base.flavour == Flavour::Linux {
        check_linux(key, base, (syn, sack))?;
    }
    Ok(())
}

type FlavourCc = (Option<CcParams>, Option<LinuxCcParams>);

/// `variant`'s constants under `flavour` from a checked `tcp.cc.VARIANT` table (`None`: the
/// declared defaults).
fn read_cc(flavour: Flavour, variant: TcpVariant, t: &Table) -> Result<FlavourCc, Bad> {
    Ok(match flavour {
        Flavour::Ns2 => {
            let p = CcParams::read(variant, t)?;
            ((!p.is_default()).then_some(p), None)
        }
        Flavour::Linux => (None, LinuxCcParams::read(variant, t)?),
    })
}

/// Every key of `t` (at `vkey`) is one `flavour`'s sender takes for `variant`.
fn check_cc_keys(
    vkey: &str,
    flavour: Flavour,
    variant: TcpVariant,
    t: &toml::Table,
) -> Result<(), Bad> {
    let keys = flavour.cc_keys(variant);
    match t
        .keys()
        .find(|k| !keys.iter().any(|p| p.name == k.as_str()))
    {
        Some(k) => Err(bad(
            format!("{vkey}.{k}"),
            format!(
                "`{k}` is not a key of {} under the {} flavour (it takes {})",
                variant.name(),
                flavour.name(),
                keys.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")
            ),
        )),
        None => Ok(()),
    }
}

/// The `cc` table at `key.cc`: a table of constants per variant, each checked against the
/// keys the flow's flavour takes for that variant and their ranges, merged over `base`'s (key
/// by key).
fn read_constants(key: &str, base: &mut TcpConfig, cc: &toml::Table) -> Result<(), Bad> {
    let flavour = base.flavour;
    for (name, v) in cc {
        let vkey = format!("{key}.cc.{name}");
        let tunable: Vec<&str> = crate::traffic::cc::VARIANT_NAMES
            .iter()
            .copied()
            .filter(|n| TcpVariant::from_name(n).is_some_and(|v| !flavour.cc_keys(v).is_empty()))
            .collect();
        let Some(variant) = TcpVariant::from_name(name).filter(|v| !flavour.cc_keys(*v).is_empty())
        else {
            return Err(bad(
                vkey,
                format!(
                    "`{name}` is not a TCP variant with constants under the {} flavour (those \
                     are {})",
                    flavour.name(),
                    tunable.join(", ")
                ),
            ));
        };
        let toml::Value::Table(t) = v else {
            return Err(bad(vkey, format!("expected a table of {name}'s constants")));
        };
        check_cc_keys(&vkey, flavour, variant, t)?;
        read_cc(flavour, variant, &Table::host(t, &vkey))?;
        let merged = base.cc_tables.entry(name.clone()).or_default();
        for (k, x) in t {
            merged.insert(k.clone(), x.clone());
        }
    }
    Ok(())
}

/// What the linux flavour cannot honour, under `key` (checked on the table that sets it, so
/// an inherited ns-2 default never trips it).
/// `given`: the table's own `syn` and `sack`.
fn check_linux(key: &str, t: &TcpConfig, given: (Option<bool>, Option<bool>)) -> Result<(), Bad> {
    let refuse = |k: &str, why: &str| Err(bad(format!("{key}.{k}"), why.to_string()));
    if t.variant == crate::traffic::cc::TcpVariant::Newreno {
        return refuse(
            "variant",
            "the linux flavour has no newreno module: use reno, sack (both Linux's reno), \
             cubic, dctcp or bbr",
        );
    }
    if given.0 == Some(true) || (t.explicit & ex::SYN != 0 && t.syn) {
        return refuse(
            "syn",
            "the linux flavour models no handshake: `syn` cannot be true",
        );
    }
    if given.1 == Some(false) || (t.explicit & ex::SACK != 0 && !t.sack) {
        return refuse(
            "sack",
            "the linux flavour always uses SACK: `sack` cannot be false",
        );
    }
    if t.explicit & ex::TICK != 0 {
        return refuse(
            "tick",
            "the linux flavour's RTT estimator works in microseconds as Linux's: `tick` \
             applies to the ns2 flavour only",
        );
    }
    if t.max_burst != 0 {
        return refuse(
            "max_burst",
            "Linux has no max_burst: it must be 0 with the linux flavour",
        );
    }
    Ok(())
}

fn validate_tcp(key: &str, t: &TcpConfig) -> Result<(), Bad> {
    // window, initial_window, tick and dupack_threshold are checked against their declared
    // limits when read ([`tcp`]); what is left are the rules between keys.
    if t.min_rto_ns > t.max_rto_ns {
        return Err(bad(
            format!("{key}.min_rto"),
            "min_rto must not exceed max_rto",
        ));
    }
    if t.variant.requires_ecn() && !t.ecn {
        return Err(bad(
            format!("{key}.ecn"),
            format!(
                "variant {} requires ECN: `ecn` cannot be false",
                t.variant.name()
            ),
        ));
    }
    if t.sack != t.uses_sack() {
        return Err(bad(
            format!("{key}.sack"),
            "variant sack is SACK recovery: `sack` cannot be false",
        ));
    }
    if t.sack && t.variant.is_ns2_agent() && t.flavour.is_ns2() {
        return Err(bad(
            format!("{key}.sack"),
            format!(
                "variant {} is ns-2's non-SACK agent; for Reno with SACK recovery use variant \
                 = \"sack\"",
                t.variant.name()
            ),
        ));
    }
    if t.variant.always_paces() && !t.pacing {
        return Err(bad(
            format!("{key}.pacing"),
            format!(
                "variant {} always paces: `pacing` cannot be false",
                t.variant.name()
            ),
        ));
    }
    Ok(())
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

/// The `[tcp]` defaults (ns-2's, overridden by the section) and its packet size.
pub(super) fn tcp_base(spec: &ScenarioSpec) -> Result<(TcpConfig, Option<u64>), Bad> {
    let mut tcp_base = tcp_defaults();
    let mut base_pkt: Option<u64> = None;
    apply_tcp("tcp", &mut tcp_base, &spec.tcp, &mut base_pkt)?;
    validate_tcp("tcp", &tcp_base)?;
    Ok((tcp_base, base_pkt))
}

/// A flow's own TCP settings over the defaults, validated under `key`.
pub(super) fn tcp_for(
    key: &str,
    base: &TcpConfig,
    own: Option<&toml::Table>,
    pkt: &mut Option<u64>,
) -> Result<TcpConfig, Bad> {
    let mut tcp = base.clone();
    if let Some(t) = own {
        let key = format!("{key}.tcp");
        apply_tcp(&key, &mut tcp, t, pkt)?;
        validate_tcp(&key, &tcp)?;
    }
    Ok(tcp)
}

/// A data packet size in bytes, checked to be 1..=[`MAX_PACKET_BYTES`].
pub(super) fn check_packet_size(key: &str, bytes: u64) -> Result<u32, Bad> {
    check_wire_size(&format!("{key}.packet_size"), "packet", bytes)
}

/// A TCP segment's size on the wire: above its 40-byte TCP/IP header (a smaller one carried no
/// payload and was counted as one byte).
pub(super) fn check_segment_size(key: &str, bytes: u32) -> Result<(), Bad> {
    if bytes <= TCP_IP_HEADER_BYTES {
        return Err(bad(
            format!("{key}.packet_size"),
            format!(
                "a TCP segment's packet size (the flow's own, or [tcp]'s) includes its \
                 {TCP_IP_HEADER_BYTES}-byte TCP/IP header: at least {} bytes, got {bytes}",
                TCP_IP_HEADER_BYTES + 1
            ),
        ));
    }
    Ok(())
}

/// The size of a packet on the wire at `key` (`what`: "packet", "ACK"), checked to be
/// 1..=[`MAX_PACKET_BYTES`] (a link's line keeps sizes in 16 bits).
fn check_wire_size(key: &str, what: &str, bytes: u64) -> Result<u32, Bad> {
    if bytes == 0 || bytes > u64::from(MAX_PACKET_BYTES) {
        return Err(bad(
            key,
            format!("{what} size must be 1..{MAX_PACKET_BYTES} bytes, got {bytes}"),
        ));
    }
    Ok(bytes as u32)
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

/// The `[[flow]]` tables with the `[tcp]` defaults applied.
pub(super) fn resolve_flows(
    spec: &ScenarioSpec,
    duration: u64,
    nodes: &Nodes,
    links: &[LinkConfig],
    base_dir: &super::inputs::InputRoots,
) -> Result<Vec<FlowConfig>, Bad> {
    let (tcp_base, base_pkt) = tcp_base(spec)?;
    let component = components(&adjacency(nodes.names.len(), links));
    let mut flows = Vec::new();
    let mut flow_keys = Vec::new();
    let mut flow_names: HashMap<String, usize> = HashMap::new();
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

    Ok(flows)
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
