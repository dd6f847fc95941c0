"""The claims of ``ard`` (Kim et al., the ARM marker and the ARD dropper), each declared once
(:class:`~qoslab.verdicts.claims.PaperClaim`): words, place, the sign test the analysis runs,
the magnitude with its source (Table 1's single run, halved), the precondition, and the sweeps
the records rest on. The analysis (:mod:`qoslab.studies.ard.study`) makes its verdicts from these
objects."""

from __future__ import annotations

from qoslab.studies.ard.paper import TABLE1
from qoslab.verdicts.claims import DECLARED_ONLY, HALF, PaperClaim, Part, declare
from qoslab.verdicts.core import Primary

#: ARM and ARD fill their bucket at TPR_max until the first nτ ends: before it they are RIO alone
ARD_ACTS = (
    "the marker acts in the measured window: the window ends after the first TPR update at "
    "nτ = 100 s (before it the bucket fills at TPR_max, above the whole IN rate)"
)

#: a decrease in utilisation needs a link that is not full in every arm
ARD_ROOM = (
    "the link is not saturated in every arm: some arm (RIO alone, ARM, ARD) and seed leaves at "
    "least 0.1 % of the bottleneck unused (on a link full in every arm the utilisation cannot "
    "decrease, and the claim cannot fail)"
)

#: the readings the text supports
ARD_PRIMARY = Primary(
    (r"^paper's RTTs", r"host bucket 2 pkts", r"100-200 s"),
    "the text states the RTTs and fixes Table 1's window ('the second 100 sec time interval'); "
    "2 packets is the host bucket depth that gives the text's λ_IN; both drop orders are sentences "
    "of Sec. 2.1; 4 and 20 flows are the paper's two cases",
)


def table1_diff(a: str, b: str) -> str:
    """Table 1's difference of schemes ``a`` − ``b`` for 4 and 20 flows, as the records set it
    beside ours."""
    return " / ".join(f"{TABLE1[(n, a)] - TABLE1[(n, b)]:+.3f}" for n in (4, 20)) + " (Table 1, 4 / 20 flows)"


BIASED = PaperClaim(
    "the throughputs of TCP flows can be highly biased",
    "Sec. III, Fig. 4 and Table 1 (RIO-based scheme)",
    "less",
    f"Jain {TABLE1[(4, 'rio')]} / {TABLE1[(20, 'rio')]} (4 / 20 flows); 'highly biased' tested as Jain < 0.9",
    (
        Part(
            "less",
            "Jain ≤ 0.90 under RIO alone (Table 1: 0.786 / 0.852, 4 / 20 flows)",
            "both of Table 1's RIO values lie below 0.90; Jain ≥ 0.99 is what the paper calls fair "
            "(its ARD rows, 0.999 / 0.991), so the direction boundary is 0.99",
            threshold=0.99,
            high=0.90,
            primary=ARD_PRIMARY,
        ),
    ),
    ("table1", "startup"),
    threshold=0.9,
    unit=" Jain, RIO alone",
    digits=4,
)
ARM = PaperClaim(
    "the ARM scheme improves TCP fairness compared to the RIO-based scheme",
    "Sec. IV; Table 1",
    "greater",
    table1_diff("arm", "rio"),
    (
        Part(
            "greater",
            "ARM − RIO ≥ +0.049 Jain (Table 1: +0.204 / +0.098)",
            HALF + ", the smaller of the two (20 flows)",
            low=0.049,
            precondition=ARD_ACTS,
            precondition_fixed=True,
            primary=ARD_PRIMARY,
        ),
    ),
    ("table1", "startup"),
    unit=" Jain, ARM − RIO",
)
DROPPER = PaperClaim(
    "the ARD marker increases TCP fairness more than the ARM scheme",
    "Sec. IV; Table 1 (the dropper: ARD is ARM with P_drop > 0)",
    "greater",
    table1_diff("ard", "arm"),
    (
        Part(
            "greater",
            "ARD − ARM ≥ +0.0045 Jain (Table 1: +0.009 / +0.041)",
            HALF + ", the smaller of the two (4 flows)",
            low=0.0045,
            precondition=ARD_ACTS,
            precondition_fixed=True,
            primary=ARD_PRIMARY,
        ),
    ),
    ("table1", "startup", "droporder"),
    unit=" Jain, ARD − ARM",
)
LARGEST = PaperClaim(
    "the FI values at the ARD marker are the largest among the schemes",
    "Sec. III, Table 1 (ARD against RIO alone; against ARM: the claim above)",
    "greater",
    table1_diff("ard", "rio"),
    (
        Part(
            "greater",
            "ARD − RIO ≥ +0.0695 Jain (Table 1: +0.213 / +0.139)",
            HALF + ", the smaller of the two (20 flows)",
            low=0.0695,
            precondition=ARD_ACTS,
            precondition_fixed=True,
            primary=ARD_PRIMARY,
        ),
    ),
    ("table1", "startup"),
    unit=" Jain, ARD − RIO",
)
NO_DECREASE = PaperClaim(
    "the ARD marker can achieve TCP fairness without a decrease in the link utilization",
    "Sec. IV; Fig. 8(d)",
    "greater",
    "no large decrease (Fig. 8(d)); tested as ARD − RIO > −0.01",
    (
        Part(
            "greater",
            "utilisation ARD − RIO > −0.01 (Fig. 8(d): 'no large decrease')",
            "a non-inferiority margin of 1 % of the link: the paper's text (Sec. III) says only 'no "
            "large decrease'; the utilisation part alone; resolution 0.001 of the link",
            threshold=-0.01,
            resolution=1e-3,
            name="utilisation",
            precondition=ARD_ROOM,
            primary=ARD_PRIMARY,
        ),
        Part(
            "greater",
            "ARD − RIO ≥ +0.0695 Jain (Table 1: +0.213 / +0.139)",
            "the fairness part, tested on the records of 'the FI values at the ARD marker are the "
            "largest' (ARD against RIO alone); " + HALF,
            low=0.0695,
            name="fairness",
            borrow=LARGEST,
            precondition=ARD_ACTS,
            precondition_fixed=True,
            primary=ARD_PRIMARY,
        ),
    ),
    # the utilisation part (steady state) and the borrowed fairness part (both windows)
    ("table1", "startup"),
    threshold=-0.01,
    unit=" utilisation, ARD − RIO",
    digits=4,
)
STD = PaperClaim(
    "the STDs also become lower when using the ARD scheme than when using the ARM scheme",
    "Sec. III, Fig. 8(a) (STD of the IN throughputs)",
    "less",
    "lower STD with ARD than with ARM, 'irrespective of the number of TCP flows'",
    (
        Part(
            "less",
            "STD of IN throughput ARD − ARM ≤ −5 kb/s",
            DECLARED_ONLY + " (Fig. 8(a)); 5 kb/s is 1 % of the 494 kb/s λ_IN the paper reports",
            high=-5e3,
            primary=ARD_PRIMARY,
        ),
    ),
    ("table1",),
    unit=" kb/s, STD of IN throughput, ARD − ARM",
    scale=1e3,
)

#: the study's claims, in the order its page lists them
CLAIMS = declare("ard", BIASED, ARM, DROPPER, LARGEST, NO_DECREASE, STD)
