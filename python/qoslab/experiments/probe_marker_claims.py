"""Three claims of ``probe-marker`` read under several readings or as a ratio (issue 77;
:mod:`qoslab.experiments.probe_marker` calls these from its ``_verdicts``):

- Sec. 4 "Performance improvement provided by the marker employment is remarkable under high
  load condition": every plausible reading of "high load" (:func:`high_load`);
- Sec. 4 "delay decrease achievable by marker employment is almost doubled in comparison to 3":
  the A_IN + 1 marker's delay gain over the 2·A_IN + 1 marker's, 10 flows in soft
  differentiation (Fig. 3's setting), as a ratio of gains (:func:`gain_ratio`);
- Sec. 4.1 "As activity time increases, points on the marker frontier become denser in
  comparison to points on the nomarker frontier": the frontiers' density along the goodput axis
  (:func:`frontier_density`, :func:`density_claims`).

A marker's delay **gain** at a seed is 1 − its frontier ratio (``probe_marker.frontier_ratio``:
the marker points' delay over the all-IN frontier's at equal goodput, averaged over the points):
0.25 means a quarter less delay at equal goodput.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

import numpy as np
import pandas as pd

from qoslab.experiments.probe_marker_paper import HIGH_GOODPUT_MIN_IN
from qoslab.experiments.runner import Context
from qoslab.experiments.selection import select
from qoslab.stats import estimate, paired
from qoslab.verdicts import Claim

Ratio = Callable[[pd.DataFrame, pd.DataFrame], pd.Series]

HIGH_LOAD = (
    "Performance improvement provided by the marker employment is remarkable under high load condition"
)
DOUBLED = (
    "This modified marker performs better in soft differentiation: delay decrease achievable by marker "
    "employment is almost doubled"
)
#: the ratio record's section (the difference keeps "Sec. 4 (A_IN + 1 against 2·A_IN + 1, ...)")
DOUBLED_RATIO_SECTION = "Sec. 4 (gain ratio: A_IN + 1 over 2·A_IN + 1 in Fig. 3's setting, 10 flows, soft)"
DENSER = (
    "As activity time increases, points on the marker frontier become denser in comparison to points on "
    "the nomarker frontier"
)
#: the frontier density's definitions (readings): name -> per-frontier spacing of the points
#: along the goodput axis (a smaller spacing is a denser frontier)
SPACINGS: dict[str, Callable[[np.ndarray], float]] = {
    "span": lambda x: float(np.ptp(x)) / (len(x) - 1),
    "median gap": lambda x: float(np.median(np.diff(np.sort(x)))),
}


def gain_ratio(plus_one: pd.Series, original: pd.Series) -> pd.Series:
    """Per seed (both indexed by seed: frontier ratios, marker / all IN): the A_IN + 1 marker's
    delay gain over the 2·A_IN + 1 marker's, (1 − plus_one) / (1 − original); NaN where the
    original marker has no gain to compare with (gain ≤ 0)."""
    common = sorted(set(plus_one.dropna().index) & set(original.dropna().index))
    g1 = 1.0 - plus_one.reindex(common)
    g0 = 1.0 - original.reindex(common)
    return (g1 / g0.where(g0 > 0)).astype(float)


def doubled(ctx: Context, ratio: dict[tuple[int, str, str], pd.Series], reading: str, sup: str) -> None:
    """The "almost doubled" part: the per-seed ratio of the gains, one-sample against 1."""
    r = gain_ratio(ratio[(10, "soft", "probe_plus_one")], ratio[(10, "soft", "probe")])
    ctx.verdict(
        Claim(
            DOUBLED,
            DOUBLED_RATIO_SECTION,
            "greater",
            "A_IN + 1's delay gain ≈ 2 × 2·A_IN + 1's",
            threshold=1.0,
            unit=" delay gain of A_IN + 1 / delay gain of 2·A_IN + 1 (per-seed ratio)",
        ).one_sample(reading, estimate(r), supported=sup + "; the mean of the per-seed ratios")
    )


def high_load(
    ctx: Context,
    runs: pd.DataFrame,
    ratio: dict[tuple[int, str, str], pd.Series],
    frontier_ratio: Ratio,
    reading: str,
    sup: str,
    quick: bool,
) -> None:
    """ "remarkable under high load condition", soft differentiation (the sentence follows Figs. 3
    and 4), one record per reading of "high load":

    - ``40 flows, against 10 flows``: Sec. 3's "two different load conditions with 10 and 40 TCP
      long-lived flows", the gain larger with 40 flows than with 10 (40 − 10 of marker / all IN);
    - ``40 flows``: the same load condition, the gain itself (marker / all IN − 1 at 40 flows);
    - ``high utilisation, N flows``: the frontier's high-goodput end (RIO min_in ≥ 30, Sec. 4's
      "high goodput values" of Fig. 7; the largest min_in in a quick run), for 10 and for 40 flows.
    """
    base = Claim(HIGH_LOAD, "Sec. 4, Figs. 3-4 (soft differentiation)", "less", "remarkable gain")
    r40, r10 = ratio[(40, "soft", "probe")], ratio[(10, "soft", "probe")]
    pairs = {
        "high load = 40 flows, against 10 flows": (r40, r10, " relative delay change, 40 flows − 10 flows"),
        "high load = 40 flows": (r40, _ones(r40), " delay at equal goodput, marker / all IN − 1 (40 flows)"),
    }
    cut = runs["min_in"].max() if quick else HIGH_GOODPUT_MIN_IN
    for n in (10, 40):
        probe = select(runs, {"flows": n, "diff": "soft", "marker": "probe"})
        r = frontier_ratio(probe[probe["min_in"] >= cut], select(runs, {"flows": n, "marker": "none"}))
        pairs[f"high load = high utilisation (min_in ≥ {cut:g}), {n} flows"] = (
            r,
            _ones(r),
            f" delay at equal goodput, marker / all IN − 1 ({n} flows, min_in ≥ {cut:g})",
        )
    for name, (a, b, unit) in pairs.items():
        claim = Claim(base.claim, base.section, "less", base.paper, unit=unit)
        ctx.verdict(claim.paired(f"{reading}, {name}", paired(a, b), supported=sup))


def _ones(s: pd.Series) -> pd.Series:
    return pd.Series(1.0, index=s.index)


def frontier_density(points: pd.DataFrame, spacing: str) -> pd.Series:
    """Per seed (rows with ``seed``, ``marker`` ("none"/"probe"), ``goodput_util``, one per RIO
    setting): the marker frontier's density relative to the all-IN frontier's along the goodput
    axis, spacing(all IN) / spacing(marker): above 1, the marker's points lie closer together
    (the same RIO settings cover a shorter stretch of goodput)."""
    fn = SPACINGS[spacing]
    out = {}
    for key, g in points.groupby("seed"):
        sp = {}
        for mk in ("none", "probe"):
            x = g.loc[g["marker"] == mk, "goodput_util"].to_numpy(float)
            x = x[np.isfinite(x)]
            sp[mk] = fn(x) if x.size >= 2 else float("nan")
        out[cast(int, key)] = sp["none"] / sp["probe"] if sp["probe"] > 0 else float("nan")
    return pd.Series(out, dtype=float).sort_index()


def density_claims(ctx: Context, onoff: pd.DataFrame, reading: str, sup: str) -> None:
    """Sec. 4.1: the relative density at a longer activity time minus at a shorter one, paired
    over seeds, for each pair of the activity times run and each spacing."""
    times = sorted(float(t) for t in onoff["on_off_s"].unique())
    for spacing in SPACINGS:
        dens = {t: frontier_density(select(onoff, {"on_off_s": t}), spacing) for t in times}
        for i, lo in enumerate(times):
            for hi in times[i + 1 :]:
                ctx.verdict(
                    Claim(
                        DENSER,
                        "Sec. 4.1 (Fig. 8: 10 flows, hard differentiation, ON/OFF UDP)",
                        "greater",
                        "denser as activity time increases (a plot)",
                        unit=f" relative density (all-IN {spacing} / marker {spacing}), {hi:g} s − {lo:g} s",
                    ).paired(
                        f"{reading}, {spacing}, {hi:g} s against {lo:g} s",
                        paired(dens[hi], dens[lo]),
                        supported=sup + f"; density as the points' {spacing} along the goodput axis",
                    )
                )
