//! Flow-arrival processes (`[[arrivals]]`): finite TCP transfers opened at the times of a
//! Poisson process, sizes drawn from a distribution; and the files a scenario may name for
//! them (empirical CDFs, traces), read relative to the scenario file.

use std::sync::Arc;

use serde::Serialize;

use super::flow::{check_ecn_marking, default_packet_size, RoutedSender};
use super::inputs::{read_file, InputRoots};
use super::spec::*;
use super::tcp_table::{check_packet_size, check_segment_size, tcp_base, tcp_for};
use super::topology::{adjacency, components, Nodes};
use super::{bad, check_name, Bad, LinkConfig};
use crate::params::Table;
use crate::traffic::sizes::{EmpiricalCdf, SizeDist};
use crate::traffic::tcp::TcpConfig;
use crate::traffic::trace::{self, TraceInfo, TraceRow};

/// The largest CDF file read (bytes).
const MAX_CDF_BYTES: u64 = 16 << 20;

/// A resolved flow-arrival process.
#[derive(Debug, Clone, Serialize)]
pub struct ArrivalConfig {
    pub name: String,
    pub src: String,
    pub dst: String,
    #[serde(skip)]
    pub src_idx: usize,
    #[serde(skip)]
    pub dst_idx: usize,
    /// Mean arrivals per second.
    pub arrival_rate: f64,
    /// The size distribution, described ("pareto(mean=100000B, shape=1.2)").
    pub size_dist: String,
    /// Its mean, bytes.
    pub mean_size_bytes: f64,
    #[serde(skip)]
    pub sizes: SizeDist,
    pub start_ns: u64,
    pub stop_ns: u64,
    pub packet_size_bytes: u32,
    pub dscp: u8,
    pub max_active: u32,
    pub tcp: TcpConfig,
}

/// Resolves a size distribution table under `key`; a CDF file is read relative to
/// `base_dir`.
pub(super) fn resolve_size(
    key: &str,
    table: &toml::Table,
    base_dir: &InputRoots,
) -> Result<SizeDist, Bad> {
    let d = &SizeDistSpec::read(table, key)?;
    let needs = |what: &str, present: bool, name: &str| -> Result<(), Bad> {
        if present {
            Ok(())
        } else {
            Err(bad(
                format!("{key}.{name}"),
                format!("a {} size distribution needs `{name}`{what}", d.dist),
            ))
        }
    };
    let refuse = |present: bool, name: &str| -> Result<(), Bad> {
        if present {
            Err(bad(
                format!("{key}.{name}"),
                format!("`{name}` does not apply to a {} distribution", d.dist),
            ))
        } else {
            Ok(())
        }
    };
    let mean = d.mean.map(|m| m as f64);
    let positive_mean = || -> Result<f64, Bad> {
        match mean {
            Some(m) if m >= 1.0 => Ok(m),
            Some(_) => Err(bad(
                format!("{key}.mean"),
                "the mean must be at least 1 byte",
            )),
            None => Err(bad(
                format!("{key}.mean"),
                format!("a {} size distribution needs `mean`", d.dist),
            )),
        }
    };
    match d.dist {
        "fixed" | "exponential" => {
            refuse(d.shape.is_some(), "shape")?;
            refuse(d.sigma.is_some(), "sigma")?;
            refuse(d.cdf.is_some(), "cdf")?;
            let m = positive_mean()?;
            Ok(if d.dist == "fixed" {
                SizeDist::Fixed(m as u64)
            } else {
                SizeDist::Exponential { mean: m }
            })
        }
        "pareto" => {
            refuse(d.sigma.is_some(), "sigma")?;
            refuse(d.cdf.is_some(), "cdf")?;
            needs(" (the tail index, > 1)", d.shape.is_some(), "shape")?;
            let a = d.shape.unwrap_or(0.0);
            SizeDist::pareto_from_mean(positive_mean()?, a)
                .map_err(|e| bad(format!("{key}.shape"), e.to_string()))
        }
        "lognormal" => {
            refuse(d.shape.is_some(), "shape")?;
            refuse(d.cdf.is_some(), "cdf")?;
            needs(" (of the underlying normal)", d.sigma.is_some(), "sigma")?;
            let s = d.sigma.unwrap_or(0.0);
            SizeDist::lognormal_from_mean(positive_mean()?, s)
                .map_err(|e| bad(format!("{key}.sigma"), e.to_string()))
        }
        "empirical" => {
            refuse(d.shape.is_some(), "shape")?;
            refuse(d.sigma.is_some(), "sigma")?;
            refuse(d.mean.is_some(), "mean")?;
            needs(
                &format!(
                    " (one of {} or a CDF file)",
                    crate::traffic::sizes::builtin_names().join(", ")
                ),
                d.cdf.is_some(),
                "cdf",
            )?;
            let name = d.cdf.as_deref().unwrap_or_default();
            let cdf = match EmpiricalCdf::builtin(name) {
                Some(c) => c,
                None => {
                    let k = format!("{key}.cdf");
                    let (path, text) = read_file(&k, name, base_dir, MAX_CDF_BYTES)?;
                    EmpiricalCdf::parse(&text)
                        .map_err(|e| bad(k, format!("{}: {e}", path.display())))?
                }
            };
            Ok(SizeDist::Empirical(cdf))
        }
        other => unreachable!("{other}: not one of keys::size::DIST's choices"),
    }
}

/// Reads and parses a trace file for a flow (`key` names its `trace` key).
pub(super) fn read_trace(
    key: &str,
    file: &str,
    flow: Option<&str>,
    base_dir: &InputRoots,
) -> Result<(TraceInfo, Arc<[TraceRow]>), Bad> {
    let (path, text) = read_file(key, file, base_dir, trace::MAX_FILE_BYTES)?;
    let rows =
        trace::parse(&text, flow).map_err(|e| bad(key, format!("{}: {e}", path.display())))?;
    // Rows after the end of the run are simply not sent.
    let info = TraceInfo {
        file: file.to_string(),
        flow: flow.map(str::to_string),
        rows: rows.len() as u64,
        bytes: rows.iter().map(|r| r.size as u64).sum(),
        digest: format!("{:016x}", trace::fnv1a(text.as_bytes())),
    };
    Ok((info, rows.into()))
}

/// The `[[arrivals]]` tables.
pub(super) fn resolve_arrivals(
    spec: &ScenarioSpec,
    duration: u64,
    nodes: &Nodes,
    links: &[LinkConfig],
    flow_idx: &super::flow::FlowIndex,
    base_dir: &InputRoots,
) -> Result<Vec<ArrivalConfig>, Bad> {
    let (base, base_pkt) = tcp_base(spec)?;
    let adj = adjacency(nodes.names.len(), links);
    let component = components(&adj);
    let mut out: Vec<ArrivalConfig> = Vec::new();
    for (n, table) in spec.arrivals.iter().enumerate() {
        use super::keys::arrivals::*;
        let key = format!("arrivals[{n}]");
        let t = Table::section(table, &key, super::keys::ARRIVALS)?;
        let (name, src, dst) = (t.get(&NAME)?, t.get(&SRC)?, t.get(&DST)?);
        let size: SizeSpec = serde_value(&t, SIZE.name)?.ok_or_else(|| t.missing(SIZE.name))?;
        let dscp: Option<Dscp> = serde_value(&t, DSCP.name)?;
        check_name(format!("{key}.name"), "flow", &name)?;
        if flow_idx.contains_key(&name) || out.iter().any(|o| o.name == name) {
            return Err(bad(
                format!("{key}.name"),
                format!("duplicate flow name {name:?}"),
            ));
        }
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
        let mut pkt = base_pkt;
        let tcp = tcp_for(&key, &base, t.table(TCP.name)?, &mut pkt)?;
        if let Some(p) = t.opt(&PACKET_SIZE)? {
            pkt = Some(p);
        }
        let packet_size = check_packet_size(&key, pkt.unwrap_or_else(default_packet_size))?;
        check_segment_size(&key, packet_size)?;
        let sizes = match &size {
            SizeSpec::Fixed(b) if b.0 == 0 => {
                return Err(bad(
                    format!("{key}.size"),
                    "the transfer size must be positive",
                ))
            }
            SizeSpec::Fixed(b) => SizeDist::Fixed(b.0),
            SizeSpec::Dist(d) => resolve_size(&format!("{key}.size"), d, base_dir)?,
        };
        let mean = sizes.mean();
        let arrival_rate = match (t.opt(&ARRIVAL_RATE)?, t.opt(&LOAD)?) {
            (Some(_), Some(_)) => {
                return Err(bad(
                    format!("{key}.load"),
                    "give `arrival_rate` or `load`, not both",
                ))
            }
            (None, None) => {
                return Err(bad(
                    format!("{key}.arrival_rate"),
                    "an arrival process needs `arrival_rate` (flows per second) or `load`",
                ))
            }
            (Some(r), None) => r,
            (None, Some(l)) => {
                let path = super::topology::shortest_path(&adj, src_idx, dst_idx)
                    .expect("connected: checked above");
                let capacity = path
                    .iter()
                    .map(|&d| links[d as usize / 2].bandwidth_bps)
                    .min()
                    .unwrap_or(1) as f64;
                l * capacity / (8.0 * mean)
            }
        };
        let start_ns = t.get(&START)?;
        let stop_ns = t.opt(&STOP)?.unwrap_or(duration).min(duration);
        if start_ns >= stop_ns {
            return Err(bad(
                format!("{key}.stop"),
                "the arrivals stop before they start (or start after the end of the run)",
            ));
        }
        let max_active = t.get(&MAX_ACTIVE)?;
        out.push(ArrivalConfig {
            name,
            src,
            dst,
            src_idx,
            dst_idx,
            arrival_rate,
            size_dist: sizes.describe(),
            mean_size_bytes: mean,
            sizes,
            start_ns,
            stop_ns,
            packet_size_bytes: packet_size,
            dscp: dscp.map_or(0, |d| d.0),
            max_active,
            tcp,
        });
    }
    let senders: Vec<RoutedSender<'_>> = out
        .iter()
        .enumerate()
        .map(|(n, a)| RoutedSender {
            key: format!("arrivals[{n}]"),
            name: &a.name,
            variant: a.tcp.variant,
            src: (&a.src, a.src_idx),
            dst: (&a.dst, a.dst_idx),
        })
        .collect();
    check_ecn_marking(&senders, nodes, links)?;
    Ok(out)
}
