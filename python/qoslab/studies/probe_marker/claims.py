"""The claims of ``probe-marker`` (Neglia et al., the probe marker), each declared once
(:class:`~qoslab.verdicts.claims.PaperClaim`: words, place, the sign test, the magnitude with its
source, the readings the text supports, the sweeps the records rest on), and three of them read
under several readings or as a ratio (:mod:`qoslab.studies.probe_marker.study` calls these from
its ``_verdicts``):

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

from qoslab.reproduction.selection import select
from qoslab.stats import estimate, paired
from qoslab.studies.probe_marker.paper import (
    DOMAIN1_OUT,
    FIGS,
    FLOWS,
    HIGH_GOODPUT_MIN_IN,
    IN_LOSS_SMALL_PCT,
    IN_SHARE_LOW,
    ONOFF_TIMES_S,
    OUT_LOSS_NEAR_ALL_PCT,
    PATHOLOGICAL_RATIO,
    SAME_RATIO,
)
from qoslab.verdicts.claims import DECLARED_ONLY, PaperClaim, Part, Verdicts, declare
from qoslab.verdicts.core import Direction, Primary

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


# -- the declared claims --------------------------------------------------------------------

#: the readings the text supports (the claims that declare none of their own)
PROBE_PRIMARY = Primary(
    (r"^1500 B packets",),
    "1500 B is the only packet size with which the paper's formula gives its stated w_q; the "
    "paper describes Clark and Fang's RIO (not ns-2's dsRED RIO); both domain-1 links of Fig. 9 "
    "fit 'not congested'",
    exclude=(r"ns2 RIO",),
)
SMALL_GAIN = DECLARED_ONLY + "; 5 % lower delay at equal goodput is the least we count as a gain"
#: the frontier sweeps of both packet-size readings (and, where a claim reads them, ns-2's RIO)
FRONTIERS = ("frontier", "frontier_1000B")
ONOFFS = ("onoff", "onoff_1000B")
TWO_DOMAINS = ("two_domains", "two_domains_readings")


def _gain(direction: Direction, paper: str, why: str = SMALL_GAIN, name: str = "") -> Part:
    """A delay gain of at least 5 % (the declared smallest effect)."""
    if direction == "greater":
        return Part(direction, paper, why, low=0.05, name=name, primary=PROBE_PRIMARY)
    return Part(direction, paper, why, high=-0.05, name=name, primary=PROBE_PRIMARY)


#: Figs. 3-6: the marker's frontier below the all-IN one, per (flows, differentiation)
FRONTIER = {
    (n, diff): PaperClaim(
        "our scheme consistently achieves better performance than that of an all-IN packet marking "
        f"scenario (Fig. {f}: {n} flows, {diff} differentiation)",
        f"Sec. 1 and Sec. 4, Fig. {f}",
        "less",
        "marker frontier below the all-IN one",
        (_gain("less", "delay ratio − 1 ≤ −0.05"),),
        (*FRONTIERS, "rio_ns2"),
        unit=" delay at equal goodput, marker / all IN − 1",
    )
    for (n, diff), f in FIGS.items()
}
REMARKABLE = PaperClaim(
    HIGH_LOAD,
    "Sec. 4, Figs. 3-4 (soft differentiation)",
    "less",
    "remarkable gain",
    (
        Part(
            "less",
            "relative delay change ≤ −0.05 (40 − 10 flows, or marker / all IN − 1 where high load is)",
            SMALL_GAIN + " ('remarkable'); each reading of 'high load' in the same units (a delay "
            "ratio minus 1, or a difference of two)",
            high=-0.05,
            primary=Primary(
                (r"^1500 B packets, high load = 40 flows",),
                "Sec. 3 names its flow counts the paper's 'two different load conditions with 10 and 40 "
                "TCP long-lived flows', and the sentence follows Figs. 3 (10 flows) and 4 (40 flows): high "
                "load is 40 flows; the sentence says the gain there is remarkable and, by naming the "
                "condition, larger than at 10 flows: both readings; the frontier's high-utilisation end "
                "is what Sec. 4 calls 'high goodput values', not a load; 1500 B packets as for every claim",
                exclude=(r"ns2 RIO",),
            ),
        ),
    ),
    FRONTIERS,
)
#: hard against soft differentiation, per number of flows
MORE_SIGNIFICANT = {
    n: PaperClaim(
        "The improvement is more significant when IN and OUT packets receive more different "
        f"services from the network ({n} flows)",
        f"Sec. 4, Fig. {FIGS[(n, 'hard')]} against Fig. {FIGS[(n, 'soft')]}",
        "less",
        "larger delay gain in hard than in soft differentiation",
        (_gain("less", "relative delay change hard − soft ≤ −0.05"),),
        FRONTIERS,
        unit=" relative delay change, hard − soft",
    )
    for n in FLOWS
}
#: the lowest IN share, per number of flows: the paper's words, its range and where it is
_IN_SHARES = {
    10: ("about 98% to more than 99% for the tested configuration with 10 sources", "98 – >99 %", 0.99),
    40: ("about 94% to 97% with 40 sources", "94 – 97 %", 0.95),
}
IN_SHARE = {
    n: PaperClaim(
        "IN packet percentage varies from " + words,
        "Sec. 4",
        "greater",
        stated,
        (
            Part(
                "greater",
                f"lowest IN share in [{IN_SHARE_LOW[n]:g}, {high:g}]",
                f"Sec. 4: 'from {words[:8]} %'; 'about' read as within one percentage point",
                threshold=IN_SHARE_LOW[n],
                low=IN_SHARE_LOW[n],
                high=high,
                primary=PROBE_PRIMARY,
            ),
        ),
        FRONTIERS,
        threshold=IN_SHARE_LOW[n],
        unit=" lowest IN share over the RIO settings",
    )
    for n, (words, stated, high) in _IN_SHARES.items()
}
_LOSS = (
    "for high goodput values in hard differentiation OUT loss percentage is near 100% while IN loss "
    "percentage is very small"
)
#: Fig. 7's two parts, each its own claim (OUT loss near 100 %, IN loss very small)
LOSS_OUT = PaperClaim(
    _LOSS + " (OUT)",
    "Sec. 4, Fig. 7 (10 flows, hard)",
    "greater",
    "near 100 %",
    (
        Part(
            "greater",
            "OUT loss in [95, 100] %",
            "Sec. 4 / Fig. 7 'near 100 %'; direction boundary 90 % as the experiment tests it, 'near' "
            "read as within 5 points",
            threshold=90.0,
            low=95.0,
            high=100.0,
            primary=PROBE_PRIMARY,
        ),
    ),
    (*FRONTIERS, "rio_ns2"),
    threshold=OUT_LOSS_NEAR_ALL_PCT,
    unit=" % OUT loss",
)
LOSS_IN = PaperClaim(
    _LOSS + " (IN)",
    "Sec. 4, Fig. 7 (10 flows, hard)",
    "less",
    "very small",
    (
        Part(
            "less",
            "IN loss in [0, 1] %",
            "Sec. 4 / Fig. 7 'very small', read as below 1 %",
            threshold=1.0,
            low=0.0,
            high=1.0,
            primary=PROBE_PRIMARY,
        ),
    ),
    (*FRONTIERS, "rio_ns2"),
    threshold=IN_LOSS_SMALL_PCT,
    unit=" % IN loss",
)
#: "performs better … almost doubled": the difference of the frontiers (this place) and the
#: ratio of the gains (:data:`DOUBLED_RATIO`, its own place and sign test)
DOUBLED_BETTER = PaperClaim(
    DOUBLED,
    "Sec. 4 (A_IN + 1 against 2·A_IN + 1, 10 flows, soft)",
    "less",
    "A_IN + 1's frontier lower",
    (
        _gain(
            "less",
            "relative delay change A_IN + 1 − 2·A_IN + 1 ≤ −0.05",
            why=SMALL_GAIN + " ('performs better'; the doubling is the ratio part)",
            name="performs better",
        ),
    ),
    FRONTIERS,
    unit=" relative delay change, A_IN + 1 − 2·A_IN + 1",
)
DOUBLED_RATIO = PaperClaim(
    DOUBLED,
    DOUBLED_RATIO_SECTION,
    "greater",
    "A_IN + 1's delay gain ≈ 2 × 2·A_IN + 1's",
    (
        Part(
            "greater",
            "delay gain of A_IN + 1 / delay gain of 2·A_IN + 1 in [1.6, 2.4] (10 flows, soft)",
            DECLARED_ONLY + " (Sec. 4: 'almost doubled in comparison to 3', the gains of the two "
            "increase rules in Fig. 3's setting, 10 flows and soft differentiation); 'almost doubled' "
            "read as within 20 % of 2 (a tripled gain is not 'almost doubled' either); the direction "
            "boundary is 1 (no larger gain); interval: Student-t of the mean of the per-seed ratios "
            "(paired: both markers and the all-IN frontier on the same seed)",
            threshold=1.0,
            low=1.6,
            high=2.4,
            name="almost doubled (ratio of the gains)",
            from_next_run=True,
            primary=PROBE_PRIMARY,
        ),
    ),
    FRONTIERS,
    threshold=1.0,
    unit=" delay gain of A_IN + 1 / delay gain of 2·A_IN + 1 (per-seed ratio)",
)
_OUT_RANGES = (
    "dropping probability for OUT packets is lower: in the range [15%,30%] for the different "
    "configurations tested, versus the range [50%,60%]"
)
#: the OUT-loss claim's difference (A_IN + 1 − 2·A_IN + 1) and each marker's range alone
OUT_DIFFERENCE = PaperClaim(
    _OUT_RANGES,
    "Sec. 4 (A_IN + 1 against 2·A_IN + 1, 10 flows, soft)",
    "less",
    "OUT loss 15–30 % vs 50–60 %",
    (
        Part(
            "less",
            "OUT loss A_IN + 1 − 2·A_IN + 1 in [−45, −20] percentage points",
            "Sec. 4: [15 %, 30 %] against [50 %, 60 %], whose differences span −45 to −20 points",
            low=-45.0,
            high=-20.0,
            name="difference",
            primary=PROBE_PRIMARY,
        ),
    ),
    FRONTIERS,
    unit=" OUT loss (percentage points), A_IN + 1 − 2·A_IN + 1",
)
#: each marker's OUT loss alone: marker -> its claim (the paper's range for it)
OUT_ALONE = {
    marker: PaperClaim(
        _OUT_RANGES,
        f"Sec. 4 (the {who} marker's OUT loss alone, 10 flows, soft)",
        "greater",
        "OUT loss 15–30 % (A_IN + 1), 50–60 % (2·A_IN + 1)",
        (
            Part(
                "greater",
                f"{who}'s OUT loss in [{lo:g}, {hi:g}] %",
                f"Sec. 4's range for {who}; the direction boundary is the range's low end",
                threshold=lo,
                low=lo,
                high=hi,
                name=f"{who}: {lo:g}–{hi:g} %",
                from_next_run=True,
                primary=PROBE_PRIMARY,
            ),
        ),
        FRONTIERS,
        threshold=lo,
        unit=" % OUT loss",
    )
    for marker, who, lo, hi in (
        ("probe_plus_one", "A_IN + 1", 15.0, 30.0),
        ("probe", "2·A_IN + 1", 50.0, 60.0),
    )
}
POORER_HARD = PaperClaim(
    "On the contrary performance are poorer in hard differentiation",
    "Sec. 4 (A_IN + 1 against 2·A_IN + 1, 10 flows, hard)",
    "greater",
    "A_IN + 1's frontier higher",
    (_gain("greater", "relative delay change A_IN + 1 − 2·A_IN + 1 ≥ +0.05"),),
    FRONTIERS,
    unit=" relative delay change, A_IN + 1 − 2·A_IN + 1",
)
#: Fig. 8, per ON/OFF activity time (s)
ONOFF = {
    t: PaperClaim(
        "For 10 flows and in hard differentiation better performance results are achieved "
        f"through the marker employment (ON/OFF UDP, {t:g} s activity time)",
        "Sec. 4.1 (Fig. 8)",
        "less",
        "marker frontier below the all-IN one",
        (_gain("less", "TCP delay ratio − 1 ≤ −0.05"),),
        ONOFFS,
        unit=" TCP delay at equal TCP goodput, marker / all IN − 1",
    )
    for t in ONOFF_TIMES_S
}
DENSER_CLAIM = PaperClaim(
    DENSER,
    "Sec. 4.1 (Fig. 8: 10 flows, hard differentiation, ON/OFF UDP)",
    "greater",
    "denser as activity time increases (a plot)",
    (
        Part(
            "greater",
            "relative density (all-IN spacing / marker spacing) longer − shorter activity time ≥ +0.10",
            DECLARED_ONLY + " (Sec. 4.1, Fig. 8); a frontier's points are its RIO settings, 'denser' "
            "read along the goodput axis, which the text's explanation names ('sources react slower "
            "... so goodput is lower'): the same settings over a shorter stretch of goodput; 10 % "
            "denser relative to the all-IN frontier is the least we count",
            low=0.10,
            from_next_run=True,
            primary=Primary(
                (r"^1500 B packets, span, 5 s against 0\.05 s",),
                "'as activity time increases' spans the paper's activity times, shortest to longest; "
                "density as points per unit of the goodput range they cover (the span), the plain "
                "meaning of points lying denser on a line; 1500 B packets as for every claim",
            ),
        ),
    ),
    ONOFFS,
)


def out_key(o: tuple[float, float, float]) -> str:
    """A domain-1 OUT setting as the records and the sweep's points name it."""
    return f"({o[0]:g}, {o[1]:g}, {o[2]:g})"


#: Fig. 9: marked and free flows almost the same under the first two OUT settings, per (OUT
#: setting, flows)
ALMOST_SAME = {
    (out_key(o), n): PaperClaim(
        "with the first two settings for OUT traffic the performance of marked flows and "
        f"free flows are almost the same (OUT {out_key(o)}, {n} + {n} flows)",
        "Sec. 4.2 (Fig. 9)",
        "greater",
        "almost the same",
        (
            Part(
                "greater",
                "min(marked/free, free/marked) in [0.9, 1]",
                "Sec. 4.2 'almost the same', read as within 10 %",
                threshold=0.9,
                low=0.9,
                high=1.0,
                primary=PROBE_PRIMARY,
            ),
        ),
        TWO_DOMAINS,
        threshold=SAME_RATIO,
        unit=" min(marked/free, free/marked) goodput",
    )
    for o in DOMAIN1_OUT[:2]
    for n in FLOWS
}
#: Fig. 9: under the third, pathological OUT setting the marked flows get 2-3 times less, per flows
PATHOLOGICAL = {
    (out_key(DOMAIN1_OUT[2]), n): PaperClaim(
        "only with the third pathological setting, the marked flows experiment lower throughput "
        f"(from two to three times) (OUT {out_key(DOMAIN1_OUT[2])}, {n} + {n} flows)",
        "Sec. 4.2 (Fig. 9)",
        "less",
        "marked 2–3× less than free",
        (
            Part(
                "less",
                "marked/free in [1/3, 1/2]",
                "Sec. 4.2 'from two to three times' lower; the direction boundary is 'almost the same' "
                "(within 10 %, marked/free < 0.9)",
                threshold=0.9,
                low=1 / 3,
                high=0.5,
                primary=PROBE_PRIMARY,
            ),
        ),
        TWO_DOMAINS,
        threshold=PATHOLOGICAL_RATIO,
        unit=" marked/free goodput",
    )
    for n in FLOWS
}

#: the study's claims, in the order its page lists them
CLAIMS = declare(
    "probe-marker",
    *FRONTIER.values(),
    REMARKABLE,
    *MORE_SIGNIFICANT.values(),
    *IN_SHARE.values(),
    LOSS_OUT,
    LOSS_IN,
    DOUBLED_BETTER,
    DOUBLED_RATIO,
    OUT_DIFFERENCE,
    *OUT_ALONE.values(),
    POORER_HARD,
    *ONOFF.values(),
    DENSER_CLAIM,
    *ALMOST_SAME.values(),
    *PATHOLOGICAL.values(),
)


def gain_ratio(plus_one: pd.Series, original: pd.Series) -> pd.Series:
    """Per seed (both indexed by seed: frontier ratios, marker / all IN): the A_IN + 1 marker's
    delay gain over the 2·A_IN + 1 marker's, (1 − plus_one) / (1 − original); NaN where the
    original marker has no gain to compare with (gain ≤ 0)."""
    common = sorted(set(plus_one.dropna().index) & set(original.dropna().index))
    g1 = 1.0 - plus_one.reindex(common)
    g0 = 1.0 - original.reindex(common)
    return (g1 / g0.where(g0 > 0)).astype(float)


def doubled(ctx: Verdicts, ratio: dict[tuple[int, str, str], pd.Series], reading: str, sup: str) -> None:
    """The "almost doubled" part: the per-seed ratio of the gains, one-sample against 1."""
    r = gain_ratio(ratio[(10, "soft", "probe_plus_one")], ratio[(10, "soft", "probe")])
    ctx.verdict(
        DOUBLED_RATIO.one_sample(reading, estimate(r), supported=sup + "; the mean of the per-seed ratios")
    )


def high_load(
    ctx: Verdicts,
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
        ctx.verdict(REMARKABLE.at(unit=unit).paired(f"{reading}, {name}", paired(a, b), supported=sup))


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


def density_claims(ctx: Verdicts, onoff: pd.DataFrame, reading: str, sup: str) -> None:
    """Sec. 4.1: the relative density at a longer activity time minus at a shorter one, paired
    over seeds, for each pair of the activity times run and each spacing."""
    times = sorted(float(t) for t in onoff["on_off_s"].unique())
    for spacing in SPACINGS:
        dens = {t: frontier_density(select(onoff, {"on_off_s": t}), spacing) for t in times}
        for i, lo in enumerate(times):
            for hi in times[i + 1 :]:
                ctx.verdict(
                    DENSER_CLAIM.at(
                        unit=f" relative density (all-IN {spacing} / marker {spacing}), {hi:g} s − {lo:g} s"
                    ).paired(
                        f"{reading}, {spacing}, {hi:g} s against {lo:g} s",
                        paired(dens[hi], dens[lo]),
                        supported=sup + f"; density as the points' {spacing} along the goodput axis",
                    )
                )
