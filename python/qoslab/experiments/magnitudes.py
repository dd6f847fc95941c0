"""What each paper claims, as a quantity: one :class:`~qoslab.verdicts.Magnitude` per claim
(or part of a compound claim) of the five studies, in the units of the effect its verdict
records carry.

How the magnitudes were set (the papers are in ``../shared/papers/``):

- where the paper gives a range ("98 % to more than 99 %", "from two to three times",
  "[15 %, 30 %] versus [50 %, 60 %]"), that range;
- where it gives one number per scheme from **one simulation run** (Hur's Table 1, Hashemi's
  Tables 1-2, Kim's Table I and Figs. 7-9), the smallest effect that counts is **half the effect
  the paper reports**: a single run has no interval, and half its effect is the least that can
  still be called the effect the paper shows; larger effects reproduce (open far end);
- where it gives only a word or a plot ("remarkable", "consistently better", a frontier below
  another), a declared smallest effect, stated with its reason in ``why``; these are our
  declarations, not numbers read from the paper, and are marked so.

``threshold``/``margin`` keep the claim's direction as the experiments test it (a difference
inside the margin is no difference). ``kind``/``grid``: the metric's kind, which chooses the
interval (:mod:`qoslab.verdicts.intervals`). ``precondition``: a condition the experiment
evaluates on its runs, without which the claim cannot be tested (``not testable here``).
``primary``: the readings the paper's text supports, declared per study below with the reason
(the study pages' "what the text supports" tables); the README's and the pages' counts use them.
"""

from __future__ import annotations

import math
from dataclasses import replace

from qoslab.experiments import ard_claims, fdd_red_claims, twam_dwred_claims
from qoslab.verdicts.claims import DECLARED_ONLY, HALF, Registry
from qoslab.verdicts.core import Magnitude, Primary

INF = math.inf

_FRONTIER = "our scheme consistently achieves better performance than that of an all-IN"
_SMALL_GAIN = DECLARED_ONLY + "; 5 % lower delay at equal goodput is the least we count as a gain"

PROBE_MARKER = (
    *(
        Magnitude(
            f"{_FRONTIER} packet marking scenario (Fig. {f}:",
            "less",
            "delay ratio − 1 ≤ −0.05",
            _SMALL_GAIN,
            high=-0.05,
        )
        for f in (3, 4, 5, 6)
    ),
    Magnitude(
        "Performance improvement provided by the marker employment is remarkable",
        "less",
        "relative delay change ≤ −0.05 (40 − 10 flows, or marker / all IN − 1 where high load is)",
        _SMALL_GAIN + " ('remarkable'); each reading of 'high load' in the same units (a delay "
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
    Magnitude(
        "The improvement is more significant when IN and OUT packets receive more different",
        "less",
        "relative delay change hard − soft ≤ −0.05",
        _SMALL_GAIN,
        high=-0.05,
    ),
    Magnitude(
        "IN packet percentage varies from about 98% to more than 99%",
        "greater",
        "lowest IN share in [0.97, 0.99]",
        "Sec. 4: 'from about 98 %'; 'about' read as within one percentage point",
        threshold=0.97,
        low=0.97,
        high=0.99,
    ),
    Magnitude(
        "IN packet percentage varies from about 94% to 97% with 40 sources",
        "greater",
        "lowest IN share in [0.93, 0.95]",
        "Sec. 4: 'from about 94 %'; 'about' read as within one percentage point",
        threshold=0.93,
        low=0.93,
        high=0.95,
    ),
    Magnitude(
        "IN loss percentage is very small (OUT)",
        "greater",
        "OUT loss in [95, 100] %",
        "Sec. 4 / Fig. 7 'near 100 %'; direction boundary 90 % as the experiment tests it, 'near' "
        "read as within 5 points",
        threshold=90.0,
        low=95.0,
        high=100.0,
    ),
    Magnitude(
        "IN loss percentage is very small (IN)",
        "less",
        "IN loss in [0, 1] %",
        "Sec. 4 / Fig. 7 'very small', read as below 1 %",
        threshold=1.0,
        low=0.0,
        high=1.0,
    ),
    Magnitude(
        "delay decrease achievable by marker employment is almost doubled",
        "less",
        "relative delay change A_IN + 1 − 2·A_IN + 1 ≤ −0.05",
        _SMALL_GAIN + " ('performs better'; the doubling is the ratio part)",
        high=-0.05,
        section="(A_IN + 1 against 2·A_IN + 1, 10 flows, soft)",
        part="performs better",
    ),
    Magnitude(
        "delay decrease achievable by marker employment is almost doubled",
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
        section="gain ratio",
        part="almost doubled (ratio of the gains)",
        from_next_run=True,
    ),
    Magnitude(
        "dropping probability for OUT packets is lower: in the range [15%,30%]",
        "less",
        "OUT loss A_IN + 1 − 2·A_IN + 1 in [−45, −20] percentage points",
        "Sec. 4: [15 %, 30 %] against [50 %, 60 %], whose differences span −45 to −20 points",
        low=-45.0,
        high=-20.0,
        section="against 2·A_IN + 1",
        part="difference",
    ),
    *(
        Magnitude(
            "dropping probability for OUT packets is lower: in the range [15%,30%]",
            "greater",
            f"{who}'s OUT loss in [{lo:g}, {hi:g}] %",
            f"Sec. 4's range for {who}; the direction boundary is the range's low end",
            threshold=lo,
            low=lo,
            high=hi,
            section=f"the {who} marker's OUT loss alone",
            part=f"{who}: {lo:g}–{hi:g} %",
            from_next_run=True,
        )
        for who, lo, hi in (("A_IN + 1", 15.0, 30.0), ("2·A_IN + 1", 50.0, 60.0))
    ),
    Magnitude(
        "On the contrary performance are poorer in hard differentiation",
        "greater",
        "relative delay change A_IN + 1 − 2·A_IN + 1 ≥ +0.05",
        _SMALL_GAIN,
        low=0.05,
    ),
    Magnitude(
        "For 10 flows and in hard differentiation better performance results are achieved",
        "less",
        "TCP delay ratio − 1 ≤ −0.05",
        _SMALL_GAIN,
        high=-0.05,
    ),
    Magnitude(
        "points on the marker frontier become denser",
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
    Magnitude(
        "the performance of marked flows and free flows are almost the same",
        "greater",
        "min(marked/free, free/marked) in [0.9, 1]",
        "Sec. 4.2 'almost the same', read as within 10 %",
        threshold=0.9,
        low=0.9,
        high=1.0,
    ),
    Magnitude(
        "the marked flows experiment lower throughput (from two to three times)",
        "less",
        "marked/free in [1/3, 1/2]",
        "Sec. 4.2 'from two to three times' lower; the direction boundary is 'almost the same' "
        "(within 10 %, marked/free < 0.9)",
        threshold=0.9,
        low=1 / 3,
        high=0.5,
    ),
)

RIO_PLUS_O = (
    Magnitude(
        "the throughput in RI+O is significantly improved",
        "greater",
        "thr/profile of the 1080K and 1350K flows, RI+O − RIO ≥ +0.0975 (Table I: +0.195)",
        HALF + " ('significantly': Table I's gain lifts both flows from below to above their profile)",
        low=0.0975,
        section="Sec. 4, Table I",
        part="the larger flows improved",
    ),
    Magnitude(
        "the throughput in RI+O is significantly improved especially for the larger profile flows",
        "greater",
        "gain of the 1080K/1350K flows − mean gain of the 270K-810K flows ≥ +0.05 of profile "
        "(Table I itself: −0.47 in thr/profile, +0.09 in assured share)",
        DECLARED_ONLY + " for 'especially': the paper's own Table I orders the gains the other way "
        "in throughput/profile (270K +1.03 … 1350K +0.15), so its number cannot be the magnitude; "
        "5 % of the profile more for the two largest flows is the least we count",
        low=0.05,
        section="the two largest profiles' gain",
        part="especially: two largest against three smaller",
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
    Magnitude(
        "the throughput in RI+O is significantly improved especially for the larger profile flows",
        "greater",
        "Spearman ρ of the gain with the profile over the five AS flows ≥ +0.5 (Table I itself: "
        "−1.0 in thr/profile, −0.7 in bit/s, +0.87 in assured share)",
        DECLARED_ONLY + " for 'especially' as an ordering over all five profiles; ρ ≥ 0.5 is a "
        "clearly increasing order (at most two of ten pairs out of order without ties); per seed "
        "over five flows ρ takes a few values only: the sign-test interval of the median",
        low=0.5,
        kind="discrete",
        section="rank correlation of the gain",
        part="especially: rank correlation",
        from_next_run=True,
        primary=Primary(
            (r"^stated", r"thr/profile$"),
            "as for the two-largest part: throughput over profile",
            exclude=(r"ns2 RIO", r"w_q 0\.02,"),
        ),
    ),
    Magnitude(
        "the OUT packet drop probabilities show that RI+O significantly reduces them",
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
    Magnitude(
        "the flows with large profile rates cannot reach their contracted profile rates",
        "less",
        "thr/profile of the 1350K flow with RIO ≤ 0.9525 (Table I: 0.905)",
        HALF + ": the paper's shortfall 0.095 halved",
        threshold=1.0,
        high=1 - 0.095 / 2,
    ),
    Magnitude(
        "the average OUT packet drop probability of BE flows is much larger in RI+O",
        "greater",
        "BE OUT drop rate RI+O − RIO ≥ +0.016 (Table I: 0.015 → 0.047)",
        HALF,
        low=0.016,
    ),
    Magnitude(
        "In 40% subscription level, AS flows can maintain",
        "greater",
        "BE flows at the break-even RI+O − RIO ≥ +8.5 (Fig. 7: 13 → 30)",
        HALF + "; a seed that never fails counts as the largest count run (censored)",
        low=8.5,
        kind="censored",
    ),
    Magnitude(
        "In 50% subscription level, 9 with RIO and 17 with RI+O",
        "greater",
        "BE flows at the break-even RI+O − RIO ≥ +4 (Fig. 7: 9 → 17)",
        HALF + "; a seed that never fails counts as the largest count run (censored)",
        low=4.0,
        kind="censored",
    ),
    Magnitude(
        "With 1Mbps profile rate, RIO can assure",
        "greater",
        "subscription met RI+O − RIO ≥ +10 points (Fig. 8: 60 → 80 %)",
        HALF + "; read on the 10-point grid of levels run",
        low=10.0,
        kind="grid",
        grid=10.0,
    ),
    Magnitude(
        "Even with 2Mbps profile rate, RI+O can assure",
        "greater",
        "subscription met RI+O − RIO ≥ +30 points (Fig. 8: never → 60 %)",
        HALF + " ('never' counted as 0 %); read on the 10-point grid of levels run",
        low=30.0,
        kind="grid",
        grid=10.0,
    ),
    *(
        Magnitude(
            "RIO fails to meet the assurance for the AS flows with 10 times",
            "greater",
            f"first failing multiple RI+O − RIO ≥ +{g / 2:g} (Fig. 9: +{g:g})",
            HALF + "; read on the integer grid of profile multiples",
            low=g / 2,
            kind="grid",
            grid=1.0,
            section=f"unit {u} Mbps",
        )
        for u, g in (("0.1", 4.0), ("0.2", 5.0), ("0.3", 5.0), ("0.4", 5.0))
    ),
)

# The primary readings: the ones each paper's text supports (its page's "what the text
# supports" table says why, reading by reading).
PROBE_PRIMARY = Primary(
    (r"^1500 B packets",),
    "1500 B is the only packet size with which the paper's formula gives its stated w_q; the "
    "paper describes Clark and Fang's RIO (not ns-2's dsRED RIO); both domain-1 links of Fig. 9 "
    "fit 'not congested'",
    exclude=(r"ns2 RIO",),
)
RIO_PLUS_O_PRIMARY = Primary(
    (r"^stated",),
    "the buckets as printed ('stated', Table I's ratio for Figs. 7-9); both ends of w_q, RED's "
    "default and Sec. 2's 'large w_q', equally (the intermediate 0.02 is ours); RIO as its source "
    "defines it (the paper describes RIO-C)",
    exclude=(r"ns2 RIO", r"w_q 0\.02$"),
)


def _with(primary: Primary, decls: tuple[Magnitude, ...]) -> tuple[Magnitude, ...]:
    return tuple(replace(m, primary=m.primary or primary) for m in decls)


#: the studies whose claims are declared as objects (:mod:`qoslab.verdicts.claims`), each in
#: its ``<study>_claims`` module; their declarations below are derived from those objects
REGISTRY = Registry.of_modules((twam_dwred_claims, ard_claims, fdd_red_claims))

#: the declarations of each experiment with verdicts
DECLARED: dict[str, tuple[Magnitude, ...]] = {
    "ard": REGISTRY.declared("ard"),
    "fdd-red": REGISTRY.declared("fdd-red"),
    "probe-marker": _with(PROBE_PRIMARY, PROBE_MARKER),
    "rio-plus-o": _with(RIO_PLUS_O_PRIMARY, RIO_PLUS_O),
    "twam-dwred": REGISTRY.declared("twam-dwred"),
}
