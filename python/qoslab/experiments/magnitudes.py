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

from qoslab.experiments import ard_claims, fdd_red_claims, rio_plus_o_claims, twam_dwred_claims
from qoslab.verdicts.claims import DECLARED_ONLY, Registry
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

# The primary readings: the ones each paper's text supports (its page's "what the text
# supports" table says why, reading by reading).
PROBE_PRIMARY = Primary(
    (r"^1500 B packets",),
    "1500 B is the only packet size with which the paper's formula gives its stated w_q; the "
    "paper describes Clark and Fang's RIO (not ns-2's dsRED RIO); both domain-1 links of Fig. 9 "
    "fit 'not congested'",
    exclude=(r"ns2 RIO",),
)


def _with(primary: Primary, decls: tuple[Magnitude, ...]) -> tuple[Magnitude, ...]:
    return tuple(replace(m, primary=m.primary or primary) for m in decls)


#: the studies whose claims are declared as objects (:mod:`qoslab.verdicts.claims`), each in
#: its ``<study>_claims`` module; their declarations below are derived from those objects
REGISTRY = Registry.of_modules((twam_dwred_claims, ard_claims, fdd_red_claims, rio_plus_o_claims))

#: the declarations of each experiment with verdicts
DECLARED: dict[str, tuple[Magnitude, ...]] = {
    "ard": REGISTRY.declared("ard"),
    "fdd-red": REGISTRY.declared("fdd-red"),
    "probe-marker": _with(PROBE_PRIMARY, PROBE_MARKER),
    "rio-plus-o": REGISTRY.declared("rio-plus-o"),
    "twam-dwred": REGISTRY.declared("twam-dwred"),
}
