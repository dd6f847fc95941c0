"""Table I's claims of ``rio-plus-o`` that compare the AS flows among themselves or judge their
OUT drops (:mod:`qoslab.experiments.rio_plus_o` calls :func:`table1_claims`; issue 77):

- "the throughput in RI+O is significantly improved **especially for the larger profile flows**"
  as an ordering: the RI+O − RIO gain grows with the profile rate. Two parts: the gain of the two
  largest profiles (1080K, 1350K) against the mean gain of the three smaller ones, and the rank
  correlation (Spearman) of the gain with the profile over the five flows, each per seed, paired
  over seeds (the same seed runs RIO and RI+O). The paper's own Table I contradicts the
  ordering in throughput over profile (the 270K flow gains +1.03, the 1350K flow +0.15) and in
  bits per second (+279K against +203K); only the gain in the assured share, min(thr/profile, 1),
  favours the larger flows (the small ones meet their profile with RIO already);
- "the OUT packet drop probabilities show that RI+O significantly reduces them" (the AS flows'
  OUT drop probabilities, Table I's last column): RI+O − RIO of the AS flows' OUT drops over
  their OUT packets, pooled (the class's drop probability) and as the mean of the five flows'.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from qoslab.experiments.rio_plus_o_paper import (
    BASELINE_NOTE,
    BASELINES,
    SETTINGS,
    T1_PROFILES,
    T1_SETTING_NOTE,
    TABLE1,
    W_Q_NOTE,
    W_QS,
    _t1_where,
)
from qoslab.experiments.runner import Context
from qoslab.experiments.selection import select
from qoslab.stats import estimate, paired
from qoslab.verdicts import Claim

ESPECIALLY = (
    "We can easily observe that the throughput in RI+O is significantly improved especially for the "
    "larger profile flows"
)
AS_OUT_DROPS = "And the OUT packet drop probabilities show that RI+O significantly reduces them"
#: the part sections of the ordering claim (the declarations in ``magnitudes.py`` find them)
TOP_TWO = "Sec. 4 (Table I): the two largest profiles' gain against the three smaller ones'"
RANK = "Sec. 4 (Table I): rank correlation of the gain with the profile"

#: the gain's metric, per flow and seed: name -> (per-flow value from throughput/profile, what it is)
GAIN_METRICS: dict[str, tuple[Callable[[pd.Series, float], pd.Series], str]] = {
    "thr/profile": (lambda thr, prof: thr / prof, "throughput over profile, Table I's comparison"),
    "assured share": (
        lambda thr, prof: (thr / prof).clip(upper=1.0),
        "min(throughput/profile, 1): the share of the profile assured, what AS promises",
    ),
    "bit/s": (lambda thr, prof: thr / 1e6, "throughput in Mbit/s (the gain in absolute terms)"),
}
#: the metrics each part is read on (the difference needs one unit: profile shares only)
PART_METRICS = {TOP_TWO: ("thr/profile", "assured share"), RANK: ("thr/profile", "assured share", "bit/s")}


def _paper_gains(metric: str) -> list[float]:
    fn = GAIN_METRICS[metric][0]
    rpo, rio = TABLE1["rio_plus_o"][:5], TABLE1["rio"][:5]
    return [
        float(fn(pd.Series([a[1]]), a[0]).iloc[0] - fn(pd.Series([b[1]]), b[0]).iloc[0])
        for a, b in zip(rpo, rio, strict=True)
    ]


def paper_ordering(metric: str) -> tuple[float, float]:
    """Table I's (one run) gain of the two largest profiles minus the three smaller ones' mean,
    and its Spearman correlation of the gain with the profile, in ``metric``."""
    g = np.array(_paper_gains(metric))
    return float(g[3:].mean() - g[:3].mean()), spearman(g)


def spearman(gains: np.ndarray) -> float:
    """Spearman's ρ of ``gains`` (in profile order) with the profile rank (average ranks for
    ties); NaN when every gain is equal."""
    r = pd.Series(gains).rank().to_numpy(float)
    x = np.arange(1, len(r) + 1, dtype=float)
    if np.ptp(r) == 0:
        return float("nan")
    return float(np.corrcoef(x, r)[0, 1])


def flow_gains(fl: pd.DataFrame, where: dict[str, object], base: str, metric: str) -> pd.DataFrame:
    """Per seed (rows) and AS flow (columns as0..as4): RI+O's value of ``metric`` minus the
    baseline's, the seeds both ran."""
    fn = GAIN_METRICS[metric][0]

    def per_flow(kind: str) -> pd.DataFrame:
        sub = select(fl, {**where, "kind": kind})
        cols = {
            f"as{i}": fn(sub[sub["flow_name"] == f"as{i}"].set_index("seed")["throughput_bps"], prof)
            for i, prof in enumerate(T1_PROFILES)
        }
        return pd.DataFrame(cols)

    d = per_flow("rio_plus_o") - per_flow(base)
    return d.dropna().sort_index()


def as_out_drop(fl: pd.DataFrame, where: dict[str, object], kind: str, pooled: bool) -> pd.Series:
    """Per seed: the AS flows' OUT drop probability (OUT drops over OUT-marked packets), pooled
    over the five flows or the mean of the five flows' own."""
    sub = select(fl, {**where, "kind": kind})
    a = sub[sub["flow_name"].str.startswith("as")]
    g = a.groupby("seed")
    if pooled:
        return g["out_drops"].sum() / g["out_packets"].sum().clip(lower=1)
    return g["out_drop_rate"].mean()


def _paper_as_drop(pooled: bool) -> tuple[float, float]:
    out = []
    for kind in ("rio", "rio_plus_o"):
        rows = TABLE1[kind][:5]
        out.append(
            sum(r[4] for r in rows) / sum(r[3] for r in rows)
            if pooled
            else float(np.mean([r[5] for r in rows]))
        )
    return out[0], out[1]


def table1_claims(ctx: Context, fl: pd.DataFrame) -> None:
    """The ordering ("especially for the larger profile flows") and the AS OUT drop claims, per
    Table I reading (setting, w_q, baseline), from ``fl`` (``rio_plus_o._per_flow`` of the
    ``table1`` sweep's flows)."""
    for setting in SETTINGS:
        for w_q in W_QS:
            w = _t1_where(setting, w_q)
            if select(fl, {**w, "kind": "rio_plus_o"}).empty:
                continue
            note = f"{T1_SETTING_NOTE[setting]}; {W_Q_NOTE[w_q]}"
            for base, bname in BASELINES.items():
                if select(fl, {**w, "kind": base}).empty:
                    continue
                reading = f"{setting}, {bname}, w_q {w_q:g}"
                sup = f"{note}; {BASELINE_NOTE[base]}"
                _ordering(ctx, fl, w, base, reading, sup)
                _as_drops(ctx, fl, w, base, reading, sup)


def _ordering(
    ctx: Context, fl: pd.DataFrame, w: dict[str, object], base: str, reading: str, sup: str
) -> None:
    for section, metrics in PART_METRICS.items():
        for metric in metrics:
            g = flow_gains(fl, w, base, metric)
            if g.empty:
                continue
            top, rank = paper_ordering(metric)
            if section == TOP_TWO:
                per_seed = g[["as3", "as4"]].mean(axis=1) - g[["as0", "as1", "as2"]].mean(axis=1)
                paper = f"Table I ({metric}): {top:+.3f} (one run: the smaller flows gain more)"
                unit = f" {metric} gain, 1080K/1350K − 270K..810K"
            else:
                per_seed = pd.Series({s: spearman(row.to_numpy(float)) for s, row in g.iterrows()}).dropna()
                paper = f"Table I ({metric}): ρ = {rank:+.1f} (one run)"
                unit = f" Spearman ρ of the {metric} gain with the profile"
            claim = Claim(ESPECIALLY, section, "greater", paper, unit=unit)
            ctx.verdict(
                claim.one_sample(
                    f"{reading}, {metric}",
                    estimate(per_seed),
                    supported=f"{sup}; the gain in {GAIN_METRICS[metric][1]}",
                )
            )


def _as_drops(
    ctx: Context, fl: pd.DataFrame, w: dict[str, object], base: str, reading: str, sup: str
) -> None:
    for pooled, name, what in (
        (True, "pooled", "OUT drops over OUT packets of the five AS flows together"),
        (False, "per-flow mean", "the mean of the five AS flows' own OUT drop rates (Table I's column)"),
    ):
        rio, rpo = _paper_as_drop(pooled)
        claim = Claim(
            AS_OUT_DROPS + " (the AS flows' OUT drop probabilities)",
            "Sec. 4, Table I",
            "less",
            f"{rio:.3f} (RIO) → {rpo:.3f} (RI+O), {rpo - rio:+.3f} (one run)",
            unit=" AS OUT drop probability, RI+O − RIO",
        )
        ctx.verdict(
            claim.paired(
                f"{reading}, {name}",
                paired(as_out_drop(fl, w, "rio_plus_o", pooled), as_out_drop(fl, w, base, pooled)),
                supported=f"{sup}; {what}",
            )
        )
