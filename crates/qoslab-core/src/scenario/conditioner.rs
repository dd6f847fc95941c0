//! Traffic conditioners (RFC 2475 §2.3.3): a `[[conditioner]]` table resolved into its
//! classifier, meter (a typed [`MeterSpec`], the registry of meter kinds) and the action per
//! colour. The Python side and the ns-2 exporter read the flat form [`ConditionerConfig`]'s
//! `Serialize` writes (`super::flat`).

use std::collections::{HashMap, HashSet};

use serde::{Serialize, Serializer};

use super::flow::FlowIndex;
use super::spec::*;
use super::{adjacency, bad, check_len, check_name, expand, routes, Bad, LinkConfig};
use crate::conditioner::registry::{MeterContext, MeterInfo, ScopeRule};
use crate::conditioner::{MeterSpec, METER_TYPES};
use crate::params::Table;

/// What a conditioner does with a colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Mark(u8),
    Keep,
    Drop,
}

impl Serialize for Action {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Action::Mark(d) => s.serialize_u8(*d),
            Action::Keep => s.serialize_str("keep"),
            Action::Drop => s.serialize_str("drop"),
        }
    }
}

/// Which packets a conditioner selects (an RFC 2475 behaviour-aggregate or multi-field
/// classifier), with its operand resolved to an index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Classifier {
    Any,
    /// One flow (by index).
    Flow(usize),
    /// Packets sent by a node (its flows' data, and the ACKs of flows to it).
    Src(usize),
    /// Packets sent to a node (its flows' data, and the ACKs of flows from it).
    Dst(usize),
    /// Packets carrying a codepoint.
    Dscp(u8),
}

impl Classifier {
    /// Whether packet `flow`, travelling from node `src` to node `dst` with codepoint `dscp`,
    /// is selected.
    #[inline]
    pub fn selects(&self, flow: u32, dscp: u8, src: usize, dst: usize) -> bool {
        match *self {
            Classifier::Any => true,
            Classifier::Flow(f) => flow as usize == f,
            Classifier::Src(n) => src == n,
            Classifier::Dst(n) => dst == n,
            Classifier::Dscp(d) => dscp == d,
        }
    }
    pub fn name(&self) -> &'static str {
        match self {
            Classifier::Any => "any",
            Classifier::Flow(_) => "flow",
            Classifier::Src(_) => "src",
            Classifier::Dst(_) => "dst",
            Classifier::Dscp(_) => "dscp",
        }
    }
}

/// A link direction: a→b or b→a.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Ab,
    Ba,
}

/// One meter per flow, or one for all the traffic the classifier selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    PerFlow,
    Aggregate,
}

/// A resolved meter: its typed parameters ([`MeterSpec`], the registry of meter kinds).
#[derive(Debug, Clone)]
pub struct MeterConfig {
    pub spec: MeterSpec,
}

impl MeterConfig {
    pub fn type_name(&self) -> &'static str {
        self.spec.kind()
    }
}

#[derive(Debug, Clone)]
pub struct ConditionerConfig {
    pub name: String,
    pub link: String,
    pub direction: Direction,
    /// Link direction index: link * 2 + (0 for ab, 1 for ba).
    pub dir_idx: usize,
    pub classifier: Classifier,
    /// The classifier's operand as written: a flow or node name, or the codepoint.
    pub classifier_value: String,
    pub scope: Scope,
    pub meter: MeterConfig,
    pub green: Action,
    pub yellow: Action,
    pub red: Action,
}

fn parse_action(key: String, v: &str) -> Result<Action, Bad> {
    match v {
        "keep" => Ok(Action::Keep),
        "drop" => Ok(Action::Drop),
        s => crate::ds::parse_dscp(s)
            .map(Action::Mark)
            .map_err(|e| bad(key, format!("{e}, or \"keep\" or \"drop\""))),
    }
}

/// Every DWRED queue names an existing TWAM conditioner in `signal`.
pub(super) fn check_dwred_signals(
    links: &[LinkConfig],
    conds: &[ConditionerConfig],
) -> Result<(), Bad> {
    let queues = links
        .iter()
        .flat_map(|l| [&l.queue_ab, &l.queue_ba])
        .flat_map(|q| q.with_subqueues().map(|(_, qc)| qc));
    for qc in queues {
        let Some((signal, _)) = qc.discipline.signal_source() else {
            continue;
        };
        match conds.iter().find(|c| c.name == signal) {
            None => {
                return Err(bad(
                    format!("{}.signal", qc.key),
                    format!(
                        "no conditioner named {signal:?} (a {} queue follows the window signal of a twam conditioner)",
                        qc.type_name()
                    ),
                ))
            }
            Some(c) if !matches!(c.meter.spec, MeterSpec::Twam(_)) => {
                return Err(bad(
                    format!("{}.signal", qc.key),
                    format!(
                        "conditioner {signal:?} is a {} meter: only a twam conditioner signals a window",
                        c.meter.type_name()
                    ),
                ))
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// What a conditioner table gives every member of its group: the meter's kind and its
/// description, the scope and the actions.
struct Template {
    kind: &'static str,
    info: MeterInfo,
    scope: Scope,
    actions: [Action; 3],
}

/// Reads the meter's `type`, checks list lengths (a list gives each group member its own
/// value), the scope the kind accepts and the actions.
fn template(key: &str, cs: &ConditionerSpec, count: usize) -> Result<Template, Bad> {
    let m = &cs.meter;
    let mk = |f: &str| format!("{key}.meter.{f}");
    let name = match m.get("type") {
        Some(toml::Value::String(s)) => s.as_str(),
        Some(v) => {
            return Err(bad(
                mk("type"),
                format!("expected a meter type (a string), got {} {v}", v.type_str()),
            ))
        }
        None => return Err(bad(format!("{key}.meter"), "missing field `type`")),
    };
    let Some(kind) = METER_TYPES.iter().copied().find(|k| *k == name) else {
        let list: Vec<String> = METER_TYPES.iter().map(|c| format!("`{c}`")).collect();
        return Err(bad(
            mk("type"),
            format!(
                "unknown variant `{name}`, expected one of {}",
                list.join(", ")
            ),
        ));
    };
    let info = MeterSpec::describe(kind).expect("registered");
    for (k, v) in m {
        if let toml::Value::Array(a) = v {
            let values: Option<PerIndex<u8>> = Some(PerIndex::Many(vec![0; a.len()]));
            check_len(mk(k), &values, count, cs.count)?;
        }
    }
    let scope = match (info.scope, cs.scope) {
        (ScopeRule::Aggregate(msg), Some(ScopeSpec::PerFlow))
        | (ScopeRule::PerFlow(msg), Some(ScopeSpec::Aggregate)) => {
            return Err(bad(format!("{key}.scope"), msg))
        }
        (_, Some(ScopeSpec::PerFlow)) | (ScopeRule::PerFlow(_), None) => Scope::PerFlow,
        (_, Some(ScopeSpec::Aggregate)) | (ScopeRule::Aggregate(_), None) => Scope::Aggregate,
        (ScopeRule::Either { aggregate_default }, None) => {
            if aggregate_default {
                Scope::Aggregate
            } else {
                Scope::PerFlow
            }
        }
    };
    let green = parse_action(format!("{key}.green"), &cs.green)?;
    let yellow = parse_action(format!("{key}.yellow"), &cs.yellow)?;
    // The declared default (AF13) but for the meter kinds whose red drops.
    let red = match &cs.red {
        None if info.red_drops => Action::Drop,
        None => parse_action(format!("{key}.red"), "AF13")?,
        Some(r) => parse_action(format!("{key}.red"), r)?,
    };
    Ok(Template {
        kind,
        info,
        scope,
        actions: [green, yellow, red],
    })
}

/// The meter of group member `i`, read by its kind and validated; errors name the key.
fn member_meter(
    cs: &ConditionerSpec,
    t: &Template,
    i: usize,
    key: &str,
    flows: &FlowIndex,
) -> Result<MeterSpec, Bad> {
    let mkey = format!("{key}.meter");
    let table = Table::meter(&cs.meter, &mkey, t.kind, i, t.info.params, t.info.hint)?;
    let spec =
        MeterSpec::from_table(t.kind, &table, &MeterContext { flows }).expect("registered")?;
    spec.validate().map_err(|e| {
        let field = t
            .info
            .params
            .iter()
            .map(|p| p.name)
            .chain(["ctr", "ptr", "win_len"])
            .filter(|f| e.starts_with(f))
            .max_by_key(|f| f.len())
            .map_or("type", |f| match f {
                "ctr" => "cir",
                "ptr" => "pir",
                "win_len" => "window",
                f => f,
            });
        bad(format!("{mkey}.{field}"), e)
    })?;
    Ok(spec)
}

/// Resolves `classify` ("any", "flow:NAME", "src:NODE", "dst:NODE", "dscp:CODEPOINT") for
/// group member `i`: the classifier and its operand as written.
fn classifier(
    key: &str,
    cs: &ConditionerSpec,
    i: usize,
    node_idx: &HashMap<String, usize>,
    flow_idx: &FlowIndex,
) -> Result<(Classifier, String), Bad> {
    let k = format!("{key}.classify");
    let classify = expand(&cs.classify, cs.count, i);
    if classify == "any" {
        return Ok((Classifier::Any, String::new()));
    }
    let Some((kind, value)) = classify
        .split_once(':')
        .filter(|(k, _)| matches!(*k, "flow" | "src" | "dst" | "dscp"))
    else {
        return Err(bad(
            k,
            format!("expected \"any\", \"flow:NAME\", \"src:NODE\", \"dst:NODE\" or \"dscp:CODEPOINT\", got {classify:?}"),
        ));
    };
    let value = value.trim().to_string();
    let node = |v: &str| {
        node_idx
            .get(v)
            .copied()
            .ok_or_else(|| bad(k.clone(), format!("unknown node {v:?}")))
    };
    let c = match kind {
        "flow" => Classifier::Flow(
            flow_idx
                .get(value.as_str())
                .copied()
                .ok_or_else(|| bad(k.clone(), format!("unknown flow {value:?}")))?,
        ),
        "src" => Classifier::Src(node(&value)?),
        "dst" => Classifier::Dst(node(&value)?),
        _ => Classifier::Dscp(crate::ds::parse_dscp(&value).map_err(|e| bad(k.clone(), e))?),
    };
    Ok((c, value))
}

/// The traffic a scenario carries, as a conditioner's classifier sees it: the link directions
/// each flow's and arrival process's packets cross (data from `src` to `dst`, ACKs back).
pub(super) struct Traffic {
    /// Link directions some packet crosses.
    crossed: HashSet<u32>,
    /// The link directions each configured flow's packets cross, by flow index.
    by_flow: HashMap<usize, Vec<u32>>,
    /// (link direction, node) for every packet from the node that crosses it (a data packet
    /// from its flow's source, an ACK from its flow's destination, as the classifier reads them).
    from_node: HashSet<(u32, usize)>,
    /// (link direction, node) for every packet to the node that crosses it.
    to_node: HashSet<(u32, usize)>,
}

impl Traffic {
    /// `ends`: (src, dst, configured flow index, whether its receiver sends ACKs: a TCP
    /// sender's does, a UDP source's has none) of every flow and arrival process.
    pub(super) fn routed(
        n_nodes: usize,
        links: &[LinkConfig],
        ends: impl Iterator<Item = (usize, usize, Option<usize>, bool)>,
    ) -> Self {
        let ends: Vec<_> = ends.collect();
        let pairs: Vec<(usize, usize)> = ends
            .iter()
            .flat_map(|&(s, d, _, _)| [(s, d), (d, s)])
            .collect();
        let found = routes(&adjacency(n_nodes, links), &pairs);
        let mut t = Traffic {
            crossed: HashSet::new(),
            by_flow: HashMap::new(),
            from_node: HashSet::new(),
            to_node: HashSet::new(),
        };
        for (&(src, dst, flow, acks), both) in ends.iter().zip(found.chunks(2)) {
            // the data's route, then the ACKs' (their ends swapped), if it has any
            let back = if acks { &both[1] } else { &None };
            let mut dirs = Vec::new();
            for (route, from, to) in [(&both[0], src, dst), (back, dst, src)] {
                for &d in route.iter().flatten() {
                    t.crossed.insert(d);
                    t.from_node.insert((d, from));
                    t.to_node.insert((d, to));
                    dirs.push(d);
                }
            }
            if let Some(f) = flow {
                t.by_flow.insert(f, dirs);
            }
        }
        t
    }

    /// Whether any packet `c` could select crosses link direction `dir`.
    fn reaches(&self, c: Classifier, dir: u32) -> bool {
        match c {
            Classifier::Any | Classifier::Dscp(_) => self.crossed.contains(&dir),
            Classifier::Flow(i) => self.by_flow.get(&i).is_some_and(|d| d.contains(&dir)),
            Classifier::Src(n) => self.from_node.contains(&(dir, n)),
            Classifier::Dst(n) => self.to_node.contains(&(dir, n)),
        }
    }
}

pub(super) fn resolve_conditioners(
    specs: &[toml::Table],
    (links, link_names): (&[LinkConfig], &HashMap<String, usize>),
    node_idx: &HashMap<String, usize>,
    flow_idx: &FlowIndex,
    traffic: &dyn Fn() -> Traffic,
) -> Result<Vec<ConditionerConfig>, Bad> {
    let mut out: Vec<ConditionerConfig> = Vec::new();
    let mut routed: Option<Traffic> = None;
    let mut names: HashMap<String, usize> = HashMap::new();
    for (n, table) in specs.iter().enumerate() {
        let key = format!("conditioner[{n}]");
        let cs = &ConditionerSpec::read(table, &key)?;
        let count = cs.count.unwrap_or(1) as usize;
        let direction = match cs.direction {
            "ba" => Direction::Ba,
            _ => Direction::Ab,
        };
        let t = template(&key, cs, count)?;
        for i in 0..count {
            let link = expand(&cs.link, cs.count, i);
            let li = *link_names
                .get(&link)
                .ok_or_else(|| bad(format!("{key}.link"), format!("unknown link {link:?}")))?;
            let (classifier, classifier_value) = classifier(&key, cs, i, node_idx, flow_idx)?;
            let name = match &cs.name {
                Some(tmpl) => expand(tmpl, cs.count, i),
                None => format!("cond{}", out.len()),
            };
            let dir_idx = li * 2 + usize::from(direction == Direction::Ba);
            let routed = routed.get_or_insert_with(traffic);
            if !routed.reaches(classifier, dir_idx as u32) {
                let l = &links[li];
                let (from, to) = match direction {
                    Direction::Ab => (&l.a, &l.b),
                    Direction::Ba => (&l.b, &l.a),
                };
                let what = match classifier {
                    Classifier::Any => "no packet".to_string(),
                    _ => format!("no packet of {}", expand(&cs.classify, cs.count, i)),
                };
                let other = if routed.reaches(classifier, (dir_idx ^ 1) as u32) {
                    let other = if direction == Direction::Ab {
                        "ba"
                    } else {
                        "ab"
                    };
                    format!("set direction = \"{other}\" (its traffic crosses the link that way), ")
                } else {
                    String::new()
                };
                return Err(bad(
                    format!("{key}.link"),
                    format!(
                        "conditioner {name:?}: {what} crosses link {link:?} from {from} to {to}, \
                         so it would meter nothing: {other}name a link its traffic's route \
                         crosses, or remove it"
                    ),
                ));
            }
            let spec = member_meter(cs, &t, i, &key, flow_idx)?;
            if let Some(why) = spec.never_red().filter(|_| cs.red.is_some()) {
                return Err(bad(
                    format!("{key}.red"),
                    format!(
                        "conditioner {name:?}: no packet leaves its `{}` meter red ({why}), so \
                         `red` would do nothing: remove it",
                        t.kind
                    ),
                ));
            }
            check_name(format!("{key}.name"), "conditioner", &name)?;
            if names.insert(name.clone(), out.len()).is_some() {
                return Err(bad(
                    format!("{key}.name"),
                    format!("duplicate conditioner name {name:?}"),
                ));
            }
            out.push(ConditionerConfig {
                name,
                link,
                direction,
                dir_idx,
                classifier,
                classifier_value,
                scope: t.scope,
                meter: MeterConfig { spec },
                green: t.actions[0],
                yellow: t.actions[1],
                red: t.actions[2],
            });
        }
    }
    Ok(out)
}
