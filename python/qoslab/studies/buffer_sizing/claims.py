"""The claims of ``buffer-sizing`` (Appenzeller, Keslassy, McKeown, SIGCOMM 2004), each declared
once. The paper's words and numbers are those of its abstract (:mod:`.paper` says where they
were read); the figures' values could not be read, so every magnitude here is declared by us,
with its reason.

Readings (the record's reading names them): the RTT the rule is sized with ("RTT mean", the
paper's "average round-trip time", primary; "RTT max", the longest of the spread); the sender
(ns-2's Reno and Reno with SACK: the paper's TCP could not be confirmed, so both are primary);
and for the headline sentences "scaled" (their per-flow rate and round trip, with n and C scaled
down together so the quick form runs in seconds) against "as stated" (their own rate and flow
count: full runs only).
"""

from __future__ import annotations

from qoslab.studies.buffer_sizing.paper import (
    ABSTRACT,
    HEADLINE_10MBIT,
    HEADLINE_REDUCE,
    RULE,
    SHORT_FLOW_PLACE,
    SHORT_FLOW_RESULT,
    SHORT_LOAD_WORDS,
    SHORT_NOT_RATE_RTT_WORDS,
)
from qoslab.verdicts.claims import DECLARED_ONLY, PaperClaim, Part, declare
from qoslab.verdicts.core import Primary

NAME = "buffer-sizing"
#: the sweeps: utilisation against buffer (n × buffer grid), the rule at its own buffer, the
#: headline sentences
CURVE, RULE_SWEEP, HEADLINE = "curve", "rule", "headline"
#: short flows: Poisson arrivals of short transfers, the line rate, the RTT and the load varied
SHORT = "short"

RULE_PRIMARY = Primary(
    (r"RTT mean",),
    "the abstract defines RTT as 'the average round-trip time of a flow passing across the link'; "
    "the paper's TCP could not be confirmed, so Reno and SACK are both primary",
)
AS_STATED_PRIMARY = Primary(
    (r"^as stated",),
    "the sentence names its own rate and flow count, which the full reproduction runs; 'scaled' "
    "(its per-flow rate and round trip with 400 flows) is the quick form's stand-in",
)

#: what "high utilisation" is: ours, the paper's figure values being unread
HIGH = (
    DECLARED_ONLY + " (its figures' values could not be read); 98 % is the lowest level of its "
    "minimum-buffer figure (98 / 99.5 / 99.9 %)"
)

RULE_HOLDS = PaperClaim(
    RULE,
    ABSTRACT + "; long-lived flows, utilisation at B = RTT × C / √n for large n",
    "greater",
    "no more than RTT × C / √n is required (no utilisation printed in the abstract)",
    (
        Part(
            "greater",
            "utilisation ≥ 0.98 at B = RTT × C / √n",
            HIGH,
            threshold=0.98,
            low=0.98,
            resolution=1e-4,
            primary=RULE_PRIMARY,
        ),
    ),
    (RULE_SWEEP,),
    threshold=0.98,
    unit=" utilisation",
    digits=4,
)

#: the minimum buffer for each utilisation level, as its slope against n on log-log axes
LEVELS = (0.98, 0.995, 0.999)
SCALES_PLACE = (
    ABSTRACT + "; the minimum-buffer figure for 98 / 99.5 / 99.9 % utilisation (its number and "
    "values not read)"
)


def level_place(level: float) -> str:
    """Where the records of utilisation ``level`` are (a part per level)."""
    return f"{SCALES_PLACE}: {level:.1%}"


SCALES = PaperClaim(
    "the minimum buffer for 98, 99.5 and 99.9 % utilisation falls as 1/√n",
    SCALES_PLACE,
    "less",
    "B_min ∝ 1/√n: slope −0.5 of log B_min against log n",
    tuple(
        Part(
            "less",
            f"slope of log B_min({lvl:.1%}) against log n in [−0.75, −0.25]",
            "−0.5 is 1/√n; ±0.25 is declared by us (half the exponent either way: steeper is "
            "still the rule's direction, flatter than −0.25 is not 1/√n)",
            low=-0.75,
            high=-0.25,
            resolution=1e-3,
            name=f"{lvl:.1%}",
            place=level_place(lvl),
            primary=RULE_PRIMARY,
        )
        for lvl in LEVELS
    ),
    (CURVE,),
    unit=" (log-log slope)",
)

REDUCE = PaperClaim(
    HEADLINE_REDUCE,
    ABSTRACT,
    "greater",
    "buffers reduced by 99 % (RTT × C / 100 for 10,000 flows) with negligible difference in throughput",
    (
        Part(
            "greater",
            "utilisation(reduced buffer) − utilisation(RTT × C) ≥ −0.01",
            "declared by us: the abstract says 'negligible'; one point of the link is the most we "
            "call negligible",
            threshold=-0.01,
            low=-0.01,
            resolution=1e-4,
            primary=AS_STATED_PRIMARY,
        ),
    ),
    (HEADLINE,),
    threshold=-0.01,
    unit=" utilisation, reduced − RTT × C",
    digits=4,
)

TEN_MBIT = PaperClaim(
    HEADLINE_10MBIT,
    ABSTRACT,
    "greater",
    "10 Mbit suffices at 10 Gb/s and 50,000 flows (RTT × C / √n = 11.2 Mbit at the abstract's 250 ms)",
    (
        Part(
            "greater",
            "utilisation ≥ 0.98 with 10 Mbit (scaled: 10 / 11.2 of RTT × C / √n)",
            HIGH,
            threshold=0.98,
            low=0.98,
            resolution=1e-4,
            primary=AS_STATED_PRIMARY,
        ),
    ),
    (HEADLINE,),
    threshold=0.98,
    unit=" utilisation",
    digits=4,
)

SHORT_PRIMARY = Primary(
    (r"^B99",),
    "the queue's 99th percentile is the buffer that overflows 1 % of the time, the one short-flow "
    "buffer size measured here",
)
#: the short-flow runs measure the queue of every arrival: none may be refused a connection
NO_REFUSAL = "no arrival of the runs compared was refused a connection slot"
#: how far apart two buffers may be and still be "the same" (declared by us)
SAME = 0.25
SAME_WHY = (
    "declared by us: the paper's short-flow figures could not be read; within a quarter of each "
    "other over a 16-fold range of the varied quantity is 'not depending on it'"
)


def short_place(part: str) -> str:
    """Where the short-flow records of ``part`` (line rate, RTT) are."""
    return f"{SHORT_FLOW_PLACE}: {part}"


SHORT_NOT_RATE_RTT = PaperClaim(
    SHORT_NOT_RATE_RTT_WORDS,
    SHORT_FLOW_PLACE,
    "less",
    SHORT_FLOW_RESULT,
    tuple(
        Part(
            "less",
            f"|B99({x} × 16) / B99({x}) − 1| < {SAME:g}, the rest the same",
            SAME_WHY,
            threshold=SAME,
            high=SAME,
            resolution=1e-3,
            precondition=NO_REFUSAL,
            name=x,
            place=short_place(x),
            primary=SHORT_PRIMARY,
        )
        for x in ("line rate", "RTT")
    ),
    (SHORT,),
    threshold=SAME,
    unit=" (|relative difference|)",
)

SHORT_LOAD_CLAIM = PaperClaim(
    SHORT_LOAD_WORDS,
    SHORT_FLOW_PLACE,
    "greater",
    SHORT_FLOW_RESULT,
    (
        Part(
            "greater",
            "B99(load 0.9) / B99(load 0.5) − 1 ≥ 1, the line rate and the RTT the same",
            "declared by us: 'depends on the load' as at least doubling between half and nine tenths "
            "load (a queue fed by bursts grows as ρ / (1 − ρ), ninefold over that range)",
            threshold=1.0,
            low=1.0,
            resolution=1e-3,
            precondition=NO_REFUSAL,
            primary=SHORT_PRIMARY,
        ),
    ),
    (SHORT,),
    threshold=1.0,
    unit=" (relative)",
)

CLAIMS = declare(NAME, RULE_HOLDS, SCALES, REDUCE, TEN_MBIT, SHORT_NOT_RATE_RTT, SHORT_LOAD_CLAIM)
