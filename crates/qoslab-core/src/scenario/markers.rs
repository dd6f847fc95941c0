//! The paper markers' parameters (ARM/ARD, TWAM, the probe marker), resolved from a
//! `[conditioner.meter]` table with the papers' defaults.

use super::spec::*;
use super::{bad, Bad, FlowConfig};

/// ARM/ARD parameters with the paper's defaults (b = 60, T_rd = 15, MAX_rem = 0.5,
/// τ = 0.1 s, n = 1000, P_drop = 0.02 for ARD and 0 for ARM, 1000-byte packets).
pub(super) fn resolve_ard(
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
pub(super) fn resolve_twam(
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

/// Probe marker parameters with the paper's defaults (α = 0.5, A_0 = 10, A_IN ← 2·A_IN + 1).
pub(super) fn resolve_probe(
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
