//! What the AF queues (RIO, WRED, RI+O, DWRED) share: the averaging parameters and the RED
//! curve of each drop precedence, read from the scenario with their keys.

use super::red::{RedCurve, GENTLE, MEAN_PKT_SIZE, W_Q};
use crate::params::resolved::Resolved;
use crate::params::typed::Decl;
use crate::params::{at_least, key_error, open_closed, KeyError, Param, ParamKind, Table};
use crate::units::Limit;

/// The averaging shared by the AF queues.
#[derive(Debug, Clone, Copy)]
pub struct AfAverage {
    pub w_q: f64,
    pub gentle: bool,
    pub wait: bool,
    pub mean_pkt_size: u32,
}

/// `wait` of the AF queues: off, as in Clark & Fang's RIO and ns-2's dsRED, which spread
/// drops as p_b / (1 − count·p_b).
pub const AF_WAIT: Decl<bool> = Decl::new(
    "wait",
    ParamKind::Bool,
    "false",
    "ns-2 Queue/RED's wait_ (dsRED has none: drops spread as p_b/(1 − count·p_b)).",
);

/// The averaging keys of an AF queue.
pub const AF_AVERAGE: [Param; 4] = [W_Q.param, GENTLE.param, AF_WAIT.param, MEAN_PKT_SIZE.param];

/// A drop precedence's curve table.
pub const fn curve_param(name: &'static str, doc: &'static str) -> Param {
    Param {
        name,
        kind: ParamKind::Curve,
        default: "required",
        doc,
    }
}

/// An optional drop precedence's curve table.
pub const fn optional_curve_param(name: &'static str, doc: &'static str) -> Param {
    Param {
        name,
        kind: ParamKind::Curve,
        default: "none",
        doc,
    }
}

impl AfAverage {
    /// w_q 0.002, not gentle, no `wait`, 500-byte mean packets.
    pub fn read(t: &Table) -> Result<AfAverage, KeyError> {
        Ok(AfAverage {
            w_q: t.get(&W_Q)?,
            gentle: t.get(&GENTLE)?,
            wait: t.get(&AF_WAIT)?,
            mean_pkt_size: t.get(&MEAN_PKT_SIZE)?,
        })
    }

    /// Link capacity in mean-size packets per second (RED's idle correction).
    pub fn ptc(&self, link_bps: u64) -> f64 {
        link_bps as f64 / (8.0 * self.mean_pkt_size as f64)
    }

    /// Why ns-2's dsRED cannot run a queue of these averages and `curves` with buffer `limit`
    /// as one of its physical queues, as (the key at fault, the reason), or `None`. dsRED
    /// counts packets, has neither a gentle region nor `wait` (it spreads drops as
    /// p_b / (1 − count·p_b)), and reads thresholds with `atoi()` (diffserv/dsred.cc), so they
    /// must be whole numbers of packets.
    pub fn dsred_refusal(&self, curves: &[RedCurve], limit: Limit) -> Option<(String, String)> {
        let refuse = |key: &str, why: &str| Some((key.to_string(), why.to_string()));
        if let Limit::Bytes(_) = limit {
            return refuse(
                "limit",
                "ns-2's dsRED queues count packets; a byte limit is not supported",
            );
        }
        if self.gentle {
            return refuse(
                "gentle",
                "ns-2's dsRED has no gentle mode (set gentle = false)",
            );
        }
        if self.wait {
            return refuse(
                "wait",
                "ns-2's dsRED has no wait option; it spreads drops with p_b/(1 - count*p_b) \
                 (set wait = false)",
            );
        }
        let names: &[&str] = if curves.len() == 3 {
            &["in", "mid", "out"]
        } else {
            &["in", "out"]
        };
        let whole = |x: f64| x.fract() == 0.0 && (0.0..2_147_483_648.0).contains(&x);
        curves
            .iter()
            .zip(names)
            .enumerate()
            .find_map(|(k, (c, name))| {
                let th = if !whole(c.min_th) {
                    "min_th"
                } else if !whole(c.max_th) {
                    "max_th"
                } else {
                    return None;
                };
                Some((
                    format!("{name}.{th}"),
                    format!(
                        "precedence {k}: ns-2's dsRED reads thresholds with atoi(); min_th {} and \
                     max_th {} must be whole numbers of packets",
                        c.min_th, c.max_th
                    ),
                ))
            })
    }
}

/// A curve table's minimum threshold.
pub const CURVE_MIN_TH: Decl<f64> = Decl::new(
    "min_th",
    at_least(0.0),
    "required",
    "Minimum threshold, packets.",
);
/// A curve table's maximum threshold (greater than min_th: checked with it).
pub const CURVE_MAX_TH: Decl<f64> = Decl::new(
    "max_th",
    at_least(0.0),
    "required",
    "Maximum threshold, packets.",
);
/// A curve table's drop probability at max_th.
pub const CURVE_MAX_P: Decl<f64> = Decl::new(
    "max_p",
    open_closed(0.0, 1.0),
    "required",
    "Drop probability at max_th.",
);
/// The keys of a curve table `{ min_th, max_th, max_p }`.
pub const CURVE: [Param; 3] = [CURVE_MIN_TH.param, CURVE_MAX_TH.param, CURVE_MAX_P.param];

/// The curve table `name` `{ min_th, max_th, max_p }`, if given, validated with `gentle`;
/// errors name `KEY.NAME.min_th` (or the missing or unknown key).
/// The curve is recorded as `name`'s resolved value ([`Table::record`]).
pub fn read_curve(
    t: &Table,
    name: &'static str,
    gentle: bool,
) -> Result<Option<RedCurve>, KeyError> {
    let Some(ct) = t.table(name)? else {
        t.record(name, Resolved::Absent);
        return Ok(None);
    };
    let key = t.key(name);
    if let Some(k) = ct
        .keys()
        .find(|k| !matches!(k.as_str(), "min_th" | "max_th" | "max_p"))
    {
        return Err(key_error(
            format!("{key}.{k}"),
            format!("unknown field `{k}`, expected `min_th`, `max_th` or `max_p`"),
        ));
    }
    if let Some(f) = CURVE.iter().find(|p| !ct.contains_key(p.name)) {
        return Err(key_error(
            key.clone(),
            format!("missing field `{}`", f.name),
        ));
    }
    let ct = Table::host(ct, &key);
    let c = RedCurve {
        min_th: ct.get(&CURVE_MIN_TH)?,
        max_th: ct.get(&CURVE_MAX_TH)?,
        max_p: ct.get(&CURVE_MAX_P)?,
        gentle,
    };
    c.check()
        .map_err(|(field, e)| key_error(format!("{key}.{field}"), e))?;
    t.record(
        name,
        Resolved::Curve {
            min_th: c.min_th,
            max_th: c.max_th,
            max_p: c.max_p,
        },
    );
    Ok(Some(c))
}

/// The curve `name`, which the kind needs (`what` says what it is).
pub fn need_curve(
    t: &Table,
    name: &'static str,
    gentle: bool,
    what: &str,
) -> Result<RedCurve, KeyError> {
    read_curve(t, name, gentle)?.ok_or_else(|| key_error(t.key(name), what.to_string()))
}
