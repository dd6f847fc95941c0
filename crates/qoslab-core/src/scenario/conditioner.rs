//! Traffic conditioners (RFC 2475 §2.3.3): a `[[conditioner]]` table resolved into its
//! classifier, meter (a typed [`MeterSpec`], the registry of meter kinds) and the action per
//! colour. The Python side and the ns-2 exporter read the flat form [`ConditionerConfig`]'s
//! `Serialize` writes (`super::flat`).

use std::collections::HashMap;

use serde::{Serialize, Serializer};

use super::markers::{resolve_ard, resolve_probe, resolve_twam};
use super::spec::*;
use super::{bad, check_len, expand, Bad, FlowConfig, LinkConfig};
use crate::conditioner::{
    ColorMode, MeterSpec, SrTcmParams, TokenBucketParams, TrTcmParams, Tsw2cmParams, Tsw3cmParams,
};

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
    /// Packets sent by a node (data from it, ACKs to it).
    Src(usize),
    /// Packets sent to a node.
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

/// A resolved meter: its kind as written (`arm` and `ard` share parameters) and its typed
/// parameters.
#[derive(Debug, Clone)]
pub struct MeterConfig {
    pub kind: MeterType,
    pub spec: MeterSpec,
}

impl MeterConfig {
    pub fn type_name(&self) -> &'static str {
        match self.kind {
            MeterType::TokenBucket => "token_bucket",
            MeterType::Srtcm => "srtcm",
            MeterType::Trtcm => "trtcm",
            MeterType::Tsw2cm => "tsw2cm",
            MeterType::Tsw3cm => "tsw3cm",
            MeterType::Arm => "arm",
            MeterType::Ard => "ard",
            MeterType::Twam => "twam",
            MeterType::Probe => "probe",
        }
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

/// What a conditioner table gives every member of its group: the meter's kind-specific
/// parameters that do not vary per member, its scope and actions.
struct Template {
    ard: Option<crate::conditioner::ArdParams>,
    twam: Option<crate::conditioner::TwamParams>,
    probe: Option<crate::conditioner::ProbeParams>,
    mode: ColorMode,
    win_len: u64,
    scope: Scope,
    actions: [Action; 3],
}

/// Checks the keys of a `[conditioner.meter]` table against its kind and resolves what is
/// shared by the members of the group.
fn template(
    key: &str,
    cs: &ConditionerSpec,
    flows: &[FlowConfig],
    mk: &dyn Fn(&str) -> String,
) -> Result<Template, Bad> {
    let m = &cs.meter;
    let kind = MeterConfig {
        kind: m.kind,
        spec: MeterSpec::Probe(crate::conditioner::ProbeParams::paper()),
    }
    .type_name();
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
    let twam = m.kind == MeterType::Twam;
    let probe_kind = m.kind == MeterType::Probe;
    let ard_like = matches!(m.kind, MeterType::Arm | MeterType::Ard) || twam;
    let twam_params = resolve_twam(m, mk, flows, cs.scope)?;
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
        resolve_ard(m, mk)?
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
    if ard.is_some() {
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
        Some(resolve_probe(m, mk)?)
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
    if tsw && m.mode.is_some() {
        // RFC 2859's markers have no colour-aware mode: accepting the key would do nothing.
        return Err(bad(
            mk("mode"),
            format!(
                "a {kind} meter is colour-blind (RFC 2859 has no colour-aware mode): remove `mode`"
            ),
        ));
    }
    let scope = match cs.scope {
        Some(ScopeSpec::PerFlow) => Scope::PerFlow,
        Some(ScopeSpec::Aggregate) => Scope::Aggregate,
        None if ard_like => Scope::Aggregate,
        None => Scope::PerFlow,
    };
    let green = parse_action(format!("{key}.green"), &cs.green, 10)?;
    let yellow = parse_action(format!("{key}.yellow"), &cs.yellow, 12)?;
    let red = if ard_like && !twam && cs.red.is_none() {
        Action::Drop
    } else {
        parse_action(format!("{key}.red"), &cs.red, 14)?
    };
    Ok(Template {
        ard,
        twam: twam_params,
        probe,
        mode: match m.mode {
            Some(ColorModeSpec::Aware) => ColorMode::Aware,
            Some(ColorModeSpec::Blind) | None => ColorMode::Blind,
        },
        win_len: m.window.map_or(1_000_000_000, |w| w.0),
        scope,
        actions: [green, yellow, red],
    })
}

/// The meter of group member `i`.
fn member_meter(
    m: &MeterSpecToml,
    t: &Template,
    i: usize,
    mk: &dyn Fn(&str) -> String,
) -> Result<MeterSpec, Bad> {
    let cir = m.cir.as_ref().map_or(0, |c| c.get(i).0);
    let pir = m.pir.as_ref().map(|p| p.get(i).0);
    let cbs = m.cbs.as_ref().map(|c| c.get(i).0);
    let rate_meter = m.cir.is_some();
    if rate_meter && cir == 0 {
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
    if cbs == Some(0) {
        return Err(bad(mk("cbs"), "the committed burst size must be positive"));
    }
    let (cbs, mode) = (cbs.unwrap_or(0), t.mode);
    let spec = match m.kind {
        MeterType::TokenBucket => MeterSpec::TokenBucket(TokenBucketParams { cir, cbs, mode }),
        MeterType::Srtcm => MeterSpec::Srtcm(SrTcmParams {
            cir,
            cbs,
            ebs: m.ebs.map_or(0, |b| b.0),
            mode,
        }),
        MeterType::Trtcm => MeterSpec::Trtcm(TrTcmParams {
            cir,
            cbs,
            pir: pir.unwrap_or(cir),
            pbs: m.pbs.map_or(0, |b| b.0),
            mode,
        }),
        MeterType::Tsw2cm => MeterSpec::Tsw2cm(Tsw2cmParams {
            ctr: cir,
            win_len: t.win_len,
        }),
        MeterType::Tsw3cm => MeterSpec::Tsw3cm(Tsw3cmParams {
            ctr: cir,
            ptr: pir.unwrap_or(cir),
            win_len: t.win_len,
        }),
        MeterType::Arm | MeterType::Ard => MeterSpec::Ard(t.ard.expect("resolved for arm/ard")),
        MeterType::Twam => MeterSpec::Twam(t.twam.clone().expect("resolved for twam")),
        MeterType::Probe => MeterSpec::Probe(t.probe.expect("resolved for probe")),
    };
    spec.validate().map_err(|e| {
        let field = [
            ("cir", "cir"),
            ("ctr", "cir"),
            ("cbs", "cbs"),
            ("ebs", "ebs"),
            ("pir", "pir"),
            ("ptr", "pir"),
            ("pbs", "pbs"),
            ("win_len", "window"),
        ]
        .into_iter()
        .find(|(p, _)| e.starts_with(p))
        .map_or("type", |(_, f)| f);
        bad(mk(field), e)
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
    flows: &[FlowConfig],
) -> Result<(Classifier, String), Bad> {
    let k = format!("{key}.classify");
    let classify = cs
        .classify
        .as_deref()
        .map(|c| expand(c, cs.count, i))
        .unwrap_or_else(|| "any".into());
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
            flows
                .iter()
                .position(|f| f.name == value)
                .ok_or_else(|| bad(k.clone(), format!("unknown flow {value:?}")))?,
        ),
        "src" => Classifier::Src(node(&value)?),
        "dst" => Classifier::Dst(node(&value)?),
        _ => Classifier::Dscp(crate::ds::parse_dscp(&value).map_err(|e| bad(k.clone(), e))?),
    };
    Ok((c, value))
}

pub(super) fn resolve_conditioners(
    specs: &[ConditionerSpec],
    link_names: &HashMap<String, usize>,
    node_idx: &HashMap<String, usize>,
    flows: &[FlowConfig],
) -> Result<Vec<ConditionerConfig>, Bad> {
    let mut out: Vec<ConditionerConfig> = Vec::new();
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
        let direction = match cs.direction.as_deref() {
            None | Some("ab") => Direction::Ab,
            Some("ba") => Direction::Ba,
            Some(d) => {
                return Err(bad(
                    format!("{key}.direction"),
                    format!("expected \"ab\" or \"ba\", got {d:?}"),
                ))
            }
        };
        let t = template(&key, cs, flows, &mk)?;
        for i in 0..count {
            let link = expand(&cs.link, cs.count, i);
            let li = *link_names
                .get(&link)
                .ok_or_else(|| bad(format!("{key}.link"), format!("unknown link {link:?}")))?;
            let (classifier, classifier_value) = classifier(&key, cs, i, node_idx, flows)?;
            let spec = member_meter(m, &t, i, &mk)?;
            let name = match &cs.name {
                Some(tmpl) => expand(tmpl, cs.count, i),
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
                direction,
                dir_idx: li * 2 + usize::from(direction == Direction::Ba),
                classifier,
                classifier_value,
                scope: t.scope,
                meter: MeterConfig { kind: m.kind, spec },
                green: t.actions[0],
                yellow: t.actions[1],
                red: t.actions[2],
            });
        }
    }
    Ok(out)
}
