//! Queues: a link direction's queue table resolved into a typed [`Discipline`], one variant
//! per queue discipline. Nothing downstream matches on a kind's name: the simulator and the
//! emulator's link daemon build from the variant (see `sim::build`), and an unknown kind is
//! already a parse error. The Python side and the ns-2 exporter read the flat table that
//! [`QueueConfig`]'s `Serialize` writes (`super::flat`).

use serde::Serialize;

use super::spec::{CurveSpec, QueueSpec, QueueType, RioModeSpec, SchedulerSpec};
use super::{bad, Bad};
use crate::aqm::red::{RedCurve, RedParams};
use crate::aqm::{DwredParams, PenaltyRule, RioMode, RttSource};
use crate::units::Limit;

/// One drop precedence's RED curve (RIO, WRED, RI+O), gentle as its queue.
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

/// RED's parameters (RED and FDD-RED); the link's capacity is added when it is built.
#[derive(Debug, Clone, Copy)]
pub struct RedConfig {
    pub curve: RedCurve,
    pub w_q: f64,
    pub wait: bool,
    pub byte_mode: bool,
    pub mean_pkt_size: u32,
    pub ecn: bool,
}

impl RedConfig {
    pub fn params(&self, link_bps: u64) -> RedParams {
        RedParams {
            curve: self.curve,
            w_q: self.w_q,
            wait: self.wait,
            byte_mode: self.byte_mode,
            mean_pkt_size: self.mean_pkt_size,
            ecn: self.ecn,
            ptc: ptc(link_bps, self.mean_pkt_size),
        }
    }
}

/// The averaging shared by the AF queues (RIO, WRED, RI+O, DWRED).
#[derive(Debug, Clone, Copy)]
pub struct AfAverage {
    pub w_q: f64,
    pub gentle: bool,
    pub wait: bool,
    pub mean_pkt_size: u32,
}

impl AfAverage {
    /// Link capacity in mean-size packets per second (RED's idle correction).
    pub fn ptc(&self, link_bps: u64) -> f64 {
        ptc(link_bps, self.mean_pkt_size)
    }
}

fn ptc(link_bps: u64, mean_pkt_size: u32) -> f64 {
    link_bps as f64 / (8.0 * mean_pkt_size as f64)
}

/// One physical queue of a `multi` queue.
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

/// A queue discipline with its resolved parameters: the registry of queue kinds.
#[derive(Debug, Clone)]
pub enum Discipline {
    DropTail,
    Red(RedConfig),
    /// RIO (Clark & Fang), coupled (RIO-C) or decoupled (RIO-D); curves IN first.
    Rio {
        mode: RioMode,
        avg: AfAverage,
        curves: Vec<CurveConfig>,
    },
    /// WRED: one average, a curve per drop precedence, IN first.
    Wred {
        avg: AfAverage,
        curves: Vec<CurveConfig>,
    },
    /// RI+O (Kim 1999): `in` on avg_in, `out` (IN+OUT) on avg_total, `avg_out` on
    /// avg_total − avg_in.
    RioPlusO {
        avg: AfAverage,
        curves: [CurveConfig; 3],
    },
    /// FDD-RED: RED deciding when, a fair-dropping index deciding whose packet.
    FddRed {
        red: RedConfig,
        penalty: PenaltyRule,
        rtt_source: RttSource,
    },
    /// Dynamic WRED: OUT thresholds from the window a TWAM conditioner signals.
    Dwred {
        params: DwredParams,
        mean_pkt_size: u32,
        /// The TWAM conditioner whose window signal it follows.
        signal: String,
        signal_delay_ns: u64,
    },
    /// Several physical queues served by a scheduler.
    Multi {
        scheduler: SchedulerSpec,
        queues: Vec<SubQueueConfig>,
    },
}

/// One queue: its limit and discipline, and the key path of its table (for errors found
/// after the conditioners resolve).
#[derive(Debug, Clone)]
pub struct QueueConfig {
    pub limit: Limit,
    pub discipline: Discipline,
    pub key: String,
}

impl QueueConfig {
    pub fn limit(&self) -> Limit {
        self.limit
    }
    pub fn type_name(&self) -> &'static str {
        match &self.discipline {
            Discipline::DropTail => "droptail",
            Discipline::Red(_) => "red",
            Discipline::Rio { .. } => "rio",
            Discipline::Wred { .. } => "wred",
            Discipline::RioPlusO { .. } => "rio_plus_o",
            Discipline::FddRed { .. } => "fdd_red",
            Discipline::Dwred { .. } => "dwred",
            Discipline::Multi { .. } => "multi",
        }
    }
    /// This queue and, for a multi queue, each physical queue (with its index).
    pub fn with_subqueues(&self) -> impl Iterator<Item = (Option<usize>, &QueueConfig)> {
        let subs: &[SubQueueConfig] = match &self.discipline {
            Discipline::Multi { queues, .. } => queues,
            _ => &[],
        };
        std::iter::once((None, self))
            .chain(subs.iter().enumerate().map(|(i, s)| (Some(i), &s.queue)))
    }
}

/// The keys each queue type takes (besides `type`).
fn allowed_keys(kind: QueueType) -> &'static [&'static str] {
    const AF: [&str; 5] = ["limit", "w_q", "gentle", "wait", "mean_pkt_size"];
    match kind {
        QueueType::Droptail => &["limit"],
        QueueType::Red => &[
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
        QueueType::Rio => &[
            AF[0], AF[1], AF[2], AF[3], AF[4], "mode", "in", "mid", "out",
        ],
        QueueType::Wred => &[AF[0], AF[1], AF[2], AF[3], AF[4], "in", "mid", "out"],
        QueueType::RioPlusO => &[AF[0], AF[1], AF[2], AF[3], AF[4], "in", "out", "avg_out"],
        QueueType::Dwred => &[
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
        QueueType::Multi => &["scheduler", "queues"],
        QueueType::FddRed => &[
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
    }
}

fn type_name(kind: QueueType) -> &'static str {
    match kind {
        QueueType::Droptail => "droptail",
        QueueType::Red => "red",
        QueueType::Rio => "rio",
        QueueType::Wred => "wred",
        QueueType::RioPlusO => "rio_plus_o",
        QueueType::Dwred => "dwred",
        QueueType::Multi => "multi",
        QueueType::FddRed => "fdd_red",
    }
}

/// Why a key does not belong to a queue type, when there is more to say than "it does not".
fn wrong_key_hint(kind: QueueType, name: &str) -> &'static str {
    match kind {
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
    }
}

/// Resolves the queue table at `key`.
pub(super) fn resolve_queue(key: &str, q: &QueueSpec) -> Result<QueueConfig, Bad> {
    let k = |f: &str| format!("{key}.{f}");
    let limit = q.limit.map(|l| l.0).unwrap_or(Limit::Packets(50));
    if matches!(limit, Limit::Packets(0) | Limit::Bytes(0)) {
        return Err(bad(k("limit"), "the queue limit must be positive"));
    }
    let allowed = allowed_keys(q.kind);
    if let Some(name) = q.set_keys().find(|n| !allowed.contains(n)) {
        return Err(bad(
            k(name),
            format!(
                "`{name}` is not a parameter of a {} queue (it takes {}){}",
                type_name(q.kind),
                allowed.join(", "),
                wrong_key_hint(q.kind, name)
            ),
        ));
    }
    let discipline = match q.kind {
        QueueType::Droptail => Discipline::DropTail,
        QueueType::Red => Discipline::Red(red_config(key, q, "red")?),
        QueueType::FddRed => {
            if let Limit::Bytes(_) = limit {
                return Err(bad(
                    k("limit"),
                    "an fdd_red queue counts packets: give the limit in packets (e.g. \"100pkts\")",
                ));
            }
            Discipline::FddRed {
                red: red_config(key, q, "fdd_red")?,
                penalty: match q.penalty {
                    Some(super::spec::PenaltySpec::Fig2) => PenaltyRule::Fig2,
                    Some(super::spec::PenaltySpec::Shares) | None => PenaltyRule::Shares,
                },
                rtt_source: match q.rtt_source {
                    Some(super::spec::RttSourceSpec::Oracle) => RttSource::Oracle,
                    Some(super::spec::RttSourceSpec::Estimator) | None => RttSource::Estimator,
                },
            }
        }
        QueueType::Rio | QueueType::Wred => af_queue(key, q)?,
        QueueType::RioPlusO => rio_plus_o(key, q)?,
        QueueType::Dwred => dwred(key, q, limit)?,
        QueueType::Multi => multi(key, q)?,
    };
    Ok(QueueConfig {
        limit,
        discipline,
        key: key.to_string(),
    })
}

/// The AF queues' averaging: w_q 0.002, not gentle, no `wait` (Clark & Fang's RIO and ns-2's
/// dsRED spread drops as p_b / (1 − count·p_b)), 500-byte mean packets.
fn af_average(key: &str, q: &QueueSpec) -> Result<AfAverage, Bad> {
    let a = AfAverage {
        w_q: q.w_q.unwrap_or(0.002),
        gentle: q.gentle.unwrap_or(false),
        wait: q.wait.unwrap_or(false),
        mean_pkt_size: q.mean_pkt_size.map(|b| b.0 as u32).unwrap_or(500),
    };
    if !(a.w_q > 0.0 && a.w_q < 1.0) {
        return Err(bad(
            format!("{key}.w_q"),
            format!("w_q must be in (0, 1), got {}", a.w_q),
        ));
    }
    Ok(a)
}

/// Validates one drop-precedence curve (`gentle` as its queue's); errors name `KEY.NAME.min_th`.
fn curve(key: &str, name: &str, cv: CurveSpec, gentle: bool) -> Result<CurveConfig, Bad> {
    let c = CurveConfig {
        min_th: cv.min_th,
        max_th: cv.max_th,
        max_p: cv.max_p,
    };
    c.curve(gentle)
        .validate()
        .map_err(|e| bad(format!("{key}.{name}.min_th"), e))?;
    Ok(c)
}

fn af_queue(key: &str, q: &QueueSpec) -> Result<Discipline, Bad> {
    let avg = af_average(key, q)?;
    let kind = type_name(q.kind);
    let need = |name: &str, c: Option<CurveSpec>| {
        c.ok_or_else(|| {
            bad(
                format!("{key}.{name}"),
                format!("a {kind} queue needs an `{name}` curve {{ min_th, max_th, max_p }}"),
            )
        })
    };
    let in_ = need("in", q.in_)?;
    let out = need("out", q.out)?;
    let mut curves = vec![curve(key, "in", in_, avg.gentle)?];
    if let Some(m) = q.mid {
        curves.push(curve(key, "mid", m, avg.gentle)?);
    }
    curves.push(curve(key, "out", out, avg.gentle)?);
    Ok(match q.kind {
        QueueType::Rio => Discipline::Rio {
            mode: match q.mode {
                Some(RioModeSpec::Decoupled) => RioMode::Decoupled,
                Some(RioModeSpec::Coupled) | None => RioMode::Coupled,
            },
            avg,
            curves,
        },
        _ => Discipline::Wred { avg, curves },
    })
}

fn rio_plus_o(key: &str, q: &QueueSpec) -> Result<Discipline, Bad> {
    let avg = af_average(key, q)?;
    let what = [
        ("in", q.in_, "the IN curve, judged on avg_in"),
        ("out", q.out, "the IN+OUT curve, judged on avg_total"),
        (
            "avg_out",
            q.avg_out,
            "the OUT curve, judged on avg_out = avg_total - avg_in",
        ),
    ];
    let mut curves = Vec::with_capacity(3);
    for (name, cv, role) in what {
        let cv = cv.ok_or_else(|| {
            bad(
                format!("{key}.{name}"),
                format!("a rio_plus_o queue needs `{name}` = {{ min_th, max_th, max_p }} ({role})"),
            )
        })?;
        curves.push(curve(key, name, cv, avg.gentle)?);
    }
    Ok(Discipline::RioPlusO {
        avg,
        curves: [curves[0], curves[1], curves[2]],
    })
}

fn dwred(key: &str, q: &QueueSpec, limit: Limit) -> Result<Discipline, Bad> {
    let k = |f: &str| format!("{key}.{f}");
    let max_th = match (q.max_th, limit) {
        (Some(m), _) => m,
        (None, Limit::Packets(p)) => p as f64,
        (None, Limit::Bytes(_)) => {
            return Err(bad(
                k("max_th"),
                "a dwred queue with a byte limit needs max_th (the initial threshold, packets)",
            ))
        }
    };
    let signal = q.signal.clone().ok_or_else(|| {
        bad(
            k("signal"),
            "a dwred queue needs `signal`, the name of the twam conditioner at its LSP's ingress",
        )
    })?;
    let params = DwredParams {
        b: q.b.unwrap_or(0.15),
        max_p: q.max_p.unwrap_or(0.1),
        initial_max_th: max_th,
        in_curve: q.in_.map(|cv| RedCurve {
            min_th: cv.min_th,
            max_th: cv.max_th,
            max_p: cv.max_p,
            gentle: false,
        }),
        in_factor: q.in_factor,
        w_q: q.w_q.unwrap_or(0.002),
        wait: q.wait.unwrap_or(false),
    };
    params.validate().map_err(|e| {
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
    Ok(Discipline::Dwred {
        params,
        mean_pkt_size: q.mean_pkt_size.map(|b| b.0 as u32).unwrap_or(500),
        signal,
        signal_delay_ns: q.signal_delay.map_or(0, |d| d.0),
    })
}

/// RED's parameters with ns-2's defaults (max_p 0.1, w_q 0.002, `wait`, 500-byte packets).
fn red_config(key: &str, q: &QueueSpec, type_name: &str) -> Result<RedConfig, Bad> {
    let k = |f: &str| format!("{key}.{f}");
    let need = |f: &str, v: Option<f64>| {
        v.ok_or_else(|| bad(k(f), format!("a {type_name} queue needs {f} (packets)")))
    };
    let c = RedConfig {
        curve: RedCurve {
            min_th: need("min_th", q.min_th)?,
            max_th: need("max_th", q.max_th)?,
            max_p: q.max_p.unwrap_or(0.1),
            gentle: q.gentle.unwrap_or(false),
        },
        w_q: q.w_q.unwrap_or(0.002),
        wait: q.wait.unwrap_or(true),
        byte_mode: q.byte_mode.unwrap_or(false),
        mean_pkt_size: q.mean_pkt_size.map(|b| b.0 as u32).unwrap_or(500),
        ecn: q.ecn.unwrap_or(false),
    };
    let (min_th, max_th, max_p) = (c.curve.min_th, c.curve.max_th, c.curve.max_p);
    if min_th < 0.0 {
        return Err(bad(
            k("min_th"),
            format!("min_th must be >= 0, got {min_th}"),
        ));
    }
    if min_th >= max_th {
        return Err(bad(
            k("min_th"),
            format!("min_th ({min_th}) must be smaller than max_th ({max_th})"),
        ));
    }
    if !(max_p > 0.0 && max_p <= 1.0) {
        return Err(bad(
            k("max_p"),
            format!("max_p must be in (0, 1], got {max_p}"),
        ));
    }
    if !(c.w_q > 0.0 && c.w_q < 1.0) {
        return Err(bad(
            k("w_q"),
            format!("w_q must be in (0, 1), got {}", c.w_q),
        ));
    }
    if c.mean_pkt_size == 0 {
        return Err(bad(k("mean_pkt_size"), "mean_pkt_size must be positive"));
    }
    Ok(c)
}

fn multi(key: &str, q: &QueueSpec) -> Result<Discipline, Bad> {
    let subs = q.queues.as_ref().ok_or_else(|| {
        bad(
            format!("{key}.queues"),
            "a multi queue needs `queues`, a list of physical queues",
        )
    })?;
    if subs.is_empty() || subs.len() > 8 {
        return Err(bad(
            format!("{key}.queues"),
            format!(
                "a multi queue has 1 to 8 physical queues, got {}",
                subs.len()
            ),
        ));
    }
    let mut seen = [false; 64];
    let mut defaults = 0;
    let mut queues = Vec::with_capacity(subs.len());
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
            let v = crate::ds::parse_dscp(name).map_err(|e| bad(format!("{sk}.dscp[{j}]"), e))?;
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
        queues.push(SubQueueConfig {
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
            format!("{key}.queues"),
            format!("exactly one physical queue must have `default = true` (found {defaults})"),
        ));
    }
    Ok(Discipline::Multi {
        scheduler: q.scheduler.unwrap_or(SchedulerSpec::Priority),
        queues,
    })
}
