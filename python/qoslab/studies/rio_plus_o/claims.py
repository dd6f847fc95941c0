"""The claims of ``rio-plus-o`` (Kim, RI+O against RIO), each declared once
(:class:`~qoslab.verdicts.claims.PaperClaim`: words, place, the sign test, the magnitude with its
source, the readings the text supports, the sweeps the records rest on), and the analysis of
Table I's claims that compare the AS flows among themselves or judge their
OUT drops (:mod:`qoslab.studies.rio_plus_o.study` calls :func:`table1_claims`; issue 77):

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

from qoslab.reproduction.selection import select
from qoslab.stats import estimate, paired
from qoslab.studies.rio_plus_o.paper import (
    BASELINE_NOTE,
    BASELINES,
    FIG7_CLAIMS,
    FIG7_PAPER,
    FIG8_CLAIMS,
    SETTINGS,
    T1_PROFILES,
    T1_SETTING_NOTE,
    TABLE1,
    W_Q_NOTE,
    W_QS,
    t1_where,
)
from qoslab.verdicts.claims import DECLARED_ONLY, HALF, PaperClaim, Part, Verdicts, declare
from qoslab.verdicts.core import Primary

ESPECIALLY = (
    "We can easily observe that the throughput in RI+O is significantly improved especially for the "
    "larger profile flows"
)
AS_OUT_DROPS = "And the OUT packet drop probabilities show that RI+O significantly reduces them"
#: the places of the ordering claim's parts
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


# -- the declared claims --------------------------------------------------------------------

#: the readings the text supports (the claims that declare none of their own)
RIO_PLUS_O_PRIMARY = Primary(
    (r"^stated",),
    "the buckets as printed ('stated', Table I's ratio for Figs. 7-9); both ends of w_q, RED's "
    "default and Sec. 2's 'large w_q', equally (the intermediate 0.02 is ours); RIO as its source "
    "defines it (the paper describes RIO-C)",
    exclude=(r"ns2 RIO", r"w_q 0\.02$"),
)

#: Table I: the 1080K and 1350K flows' throughput / profile, RIO and RI+O
_RIO_LARGE = [TABLE1["rio"][i][1] / TABLE1["rio"][i][0] for i in (3, 4)]
_RPO_LARGE = [TABLE1["rio_plus_o"][i][1] / TABLE1["rio_plus_o"][i][0] for i in (3, 4)]

#: "significantly improved especially for the larger profile flows": the larger flows' gain
#: (Table I), and the ordering's two parts at their own places (:func:`table1_claims`)
IMPROVED = PaperClaim(
    ESPECIALLY,
    "Sec. 4, Table I",
    "greater",
    f"1080K/1350K: {_RIO_LARGE[0]:.3f}/{_RIO_LARGE[1]:.3f} → {_RPO_LARGE[0]:.3f}/{_RPO_LARGE[1]:.3f} "
    f"of profile (+{np.mean(_RPO_LARGE) - np.mean(_RIO_LARGE):.3f}, one run)",
    (
        Part(
            "greater",
            "thr/profile of the 1080K and 1350K flows, RI+O − RIO ≥ +0.0975 (Table I: +0.195)",
            HALF + " ('significantly': Table I's gain lifts both flows from below to above their profile)",
            low=0.0975,
            name="the larger flows improved",
            primary=RIO_PLUS_O_PRIMARY,
        ),
        Part(
            "greater",
            "gain of the 1080K/1350K flows − mean gain of the 270K-810K flows ≥ +0.05 of profile "
            "(Table I itself: −0.47 in thr/profile, +0.09 in assured share)",
            DECLARED_ONLY + " for 'especially': the paper's own Table I orders the gains the other way "
            "in throughput/profile (270K +1.03 … 1350K +0.15), so its number cannot be the magnitude; "
            "5 % of the profile more for the two largest flows is the least we count",
            low=0.05,
            name="especially: two largest against three smaller",
            place=TOP_TWO,
            from_next_run=True,
            primary=Primary(
                (r"^stated", r"thr/profile$"),
                "the claim compares flows of different profiles on the scale AS promises them (Sec. 2: "
                "'cannot reach their contracted profile rates'): throughput over profile; the assured "
                "share caps a flow's gain at 0 once it meets its profile, so it favours the large flows "
                "by construction; buckets as stated, RIO as its source defines it, both ends of w_q",
                exclude=(r"ns2 RIO", r"w_q 0\.02,"),
            ),
        ),
        Part(
            "greater",
            "Spearman ρ of the gain with the profile over the five AS flows ≥ +0.5 (Table I itself: "
            "−1.0 in thr/profile, −0.7 in bit/s, +0.87 in assured share)",
            DECLARED_ONLY + " for 'especially' as an ordering over all five profiles; ρ ≥ 0.5 is a "
            "clearly increasing order (at most two of ten pairs out of order without ties); per seed "
            "over five flows ρ takes a few values only: the sign-test interval of the median",
            low=0.5,
            kind="discrete",
            name="especially: rank correlation",
            place=RANK,
            from_next_run=True,
            primary=Primary(
                (r"^stated", r"thr/profile$"),
                "as for the two-largest part: throughput over profile",
                exclude=(r"ns2 RIO", r"w_q 0\.02,"),
            ),
        ),
    ),
    ("table1",),
    unit=" thr/profile of the 1080K and 1350K flows, RI+O − RIO",
)
AS_OUT = PaperClaim(
    AS_OUT_DROPS + " (the AS flows' OUT drop probabilities)",
    "Sec. 4, Table I",
    "less",
    "Table I's AS OUT drop probabilities, RIO → RI+O (one run)",
    (
        Part(
            "less",
            "AS OUT drop probability RI+O − RIO ≤ −0.036 (Table I: 0.091 → 0.019 pooled, "
            "0.096 → 0.019 per-flow mean)",
            HALF + ", the smaller of the two (pooled: −0.073)",
            high=-0.073 / 2,
            from_next_run=True,
            primary=Primary(
                (r"^stated",),
                "'them' are the AS flows' OUT drop probabilities of Table I's column (per flow) and of "
                "Fig. 5: pooled and per-flow mean equally; buckets as stated, RIO as its source defines "
                "it, both ends of w_q",
                exclude=(r"ns2 RIO", r"w_q 0\.02,"),
            ),
        ),
    ),
    ("table1",),
    unit=" AS OUT drop probability, RI+O − RIO",
)
SHORTFALL = PaperClaim(
    "the flows with large profile rates cannot reach their contracted profile rates",
    "Sec. 2; Table I, RIO rows",
    "less",
    f"1350K flow at {_RIO_LARGE[1]:.3f} of its profile with RIO (one run)",
    (
        Part(
            "less",
            "thr/profile of the 1350K flow with RIO ≤ 0.9525 (Table I: 0.905)",
            HALF + ": the paper's shortfall 0.095 halved",
            threshold=1.0,
            high=1 - 0.095 / 2,
            primary=RIO_PLUS_O_PRIMARY,
        ),
    ),
    ("table1",),
    threshold=1.0,
    unit=" thr/profile of the 1350K flow, RIO",
)
BE_DROPS = PaperClaim(
    "the average OUT packet drop probability of BE flows is much larger in RI+O",
    "Sec. 4, Table I",
    "greater",
    "0.015 (RIO) → 0.047 (RI+O)",
    (
        Part(
            "greater",
            "BE OUT drop rate RI+O − RIO ≥ +0.016 (Table I: 0.015 → 0.047)",
            HALF,
            low=0.016,
            primary=RIO_PLUS_O_PRIMARY,
        ),
    ),
    ("table1",),
    unit=" BE OUT drop rate, RI+O − RIO",
)


def _fig7(sub: int) -> PaperClaim:
    rio, rpo = FIG7_PAPER[(sub, "rio")], FIG7_PAPER[(sub, "rio_plus_o")]
    return PaperClaim(
        FIG7_CLAIMS[sub],
        "Sec. 4, Fig. 7",
        "greater",
        f"{rio:g} → {rpo:g} BE flows (+{rpo - rio:g})",
        (
            Part(
                "greater",
                f"BE flows at the break-even RI+O − RIO ≥ +{(rpo - rio) / 2:g} (Fig. 7: {rio:g} → {rpo:g})",
                HALF + "; a seed that never fails counts as the largest count run (censored)",
                low=(rpo - rio) / 2,
                kind="censored",
                primary=RIO_PLUS_O_PRIMARY,
            ),
        ),
        ("fig7",),
        unit=" BE flows at the break-even, RI+O − RIO",
        digits=2,
    )


#: Fig. 7's claims per subscription level (%)
FIG7 = {sub: _fig7(sub) for sub in FIG7_CLAIMS}

#: Fig. 8's magnitudes per profile (Mbps): the least gain in points, its words, its source
_FIG8_MAGNITUDES = {
    1.0: (10.0, "(Fig. 8: 60 → 80 %)", HALF + "; read on the 10-point grid of levels run"),
    2.0: (
        30.0,
        "(Fig. 8: never → 60 %)",
        HALF + " ('never' counted as 0 %); read on the 10-point grid of levels run",
    ),
}
#: Fig. 8's claims per profile rate (Mbps)
FIG8 = {
    prof: PaperClaim(
        words,
        "Sec. 4, Fig. 8",
        "greater",
        stated,
        (
            Part(
                "greater",
                f"subscription met RI+O − RIO ≥ +{_FIG8_MAGNITUDES[prof][0]:g} points "
                + _FIG8_MAGNITUDES[prof][1],
                _FIG8_MAGNITUDES[prof][2],
                low=_FIG8_MAGNITUDES[prof][0],
                kind="grid",
                grid=10.0,
                primary=RIO_PLUS_O_PRIMARY,
            ),
        ),
        ("fig8",),
        unit=" % subscription met, RI+O − RIO",
        digits=2,
    )
    for prof, (words, stated) in FIG8_CLAIMS.items()
}


def fig9_place(unit_mbps: float) -> str:
    """Where Fig. 9's part for the unit granularity ``unit_mbps`` is."""
    return f"Sec. 4, Fig. 9, unit {unit_mbps:g} Mbps"


#: Fig. 9, a part per unit granularity (Mbps) with the paper's gain in first failing multiples
FIG9 = PaperClaim(
    "RIO fails to meet the assurance for the AS flows with 10 times the unit granularity or larger, "
    "but RI+O successfully provides in all profile sizes",
    "Sec. 4, Fig. 9",
    "greater",
    "RIO fails from 10× the unit, RI+O never",
    tuple(
        Part(
            "greater",
            f"first failing multiple RI+O − RIO ≥ +{g / 2:g} (Fig. 9: +{g:g})",
            HALF + "; read on the integer grid of profile multiples",
            low=g / 2,
            kind="grid",
            grid=1.0,
            place=fig9_place(u),
            primary=RIO_PLUS_O_PRIMARY,
        )
        for u, g in ((0.1, 4.0), (0.2, 5.0), (0.3, 5.0), (0.4, 5.0))
    ),
    ("fig9",),
    unit=" first failing multiple, RI+O − RIO",
    digits=2,
)

#: the study's claims, in the order its page lists them
CLAIMS = declare("rio-plus-o", IMPROVED, AS_OUT, SHORTFALL, BE_DROPS, *FIG7.values(), *FIG8.values(), FIG9)


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


def table1_claims(ctx: Verdicts, fl: pd.DataFrame) -> None:
    """The ordering ("especially for the larger profile flows") and the AS OUT drop claims, per
    Table I reading (setting, w_q, baseline), from ``fl`` (``rio_plus_o._per_flow`` of the
    ``table1`` sweep's flows)."""
    for setting in SETTINGS:
        for w_q in W_QS:
            w = t1_where(setting, w_q)
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
    ctx: Verdicts, fl: pd.DataFrame, w: dict[str, object], base: str, reading: str, sup: str
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
            claim = IMPROVED.at(section, stated=paper, unit=unit)
            ctx.verdict(
                claim.one_sample(
                    f"{reading}, {metric}",
                    estimate(per_seed),
                    supported=f"{sup}; the gain in {GAIN_METRICS[metric][1]}",
                )
            )


def _as_drops(
    ctx: Verdicts, fl: pd.DataFrame, w: dict[str, object], base: str, reading: str, sup: str
) -> None:
    for pooled, name, what in (
        (True, "pooled", "OUT drops over OUT packets of the five AS flows together"),
        (False, "per-flow mean", "the mean of the five AS flows' own OUT drop rates (Table I's column)"),
    ):
        rio, rpo = _paper_as_drop(pooled)
        claim = AS_OUT.at(stated=f"{rio:.3f} (RIO) → {rpo:.3f} (RI+O), {rpo - rio:+.3f} (one run)")
        ctx.verdict(
            claim.paired(
                f"{reading}, {name}",
                paired(as_out_drop(fl, w, "rio_plus_o", pooled), as_out_drop(fl, w, base, pooled)),
                supported=f"{sup}; {what}",
            )
        )
