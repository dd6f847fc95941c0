"""The claims of ``twam-dwred`` (Bouras & Sevasti, Sec. 5), each declared once
(:class:`~qoslab.verdicts.claims.PaperClaim`): words, place, the sign test the analysis runs,
the magnitude with its source, and the sweeps the records rest on. The analysis
(:mod:`qoslab.studies.twam_dwred.study`) makes its verdicts from these objects."""

from __future__ import annotations

from qoslab.studies.twam_dwred.topology import REACHED
from qoslab.verdicts.claims import DECLARED_ONLY, PaperClaim, Part, declare
from qoslab.verdicts.core import Primary

_REACH = "every flow ≥ 0.95 r_i, the experiments' 'reaches its contract'"
_FAIL = (
    "largest-r_i flows ≤ 0.95 r_i: 'fail to reach' read as below the same 0.95 line "
    "(the figures give no numbers)"
)

#: the readings the text supports: Eq. 3 with Σ binding its neighbour, flow set C
TWAM_PRIMARY = Primary(
    (r"Σ binds its neighbour", r"flow set C"),
    "the prose supports Eq. 3 with Σ binding its neighbour; flow set C is the one the text implies",
)
#: the baseline's claims (TSW2CM + static WRED): flow set C, both flavours of the baseline
TSW_PRIMARY = Primary(
    (r"flow set C",),
    "flow set C is the one the text implies; the baseline's rules as its sources define them and "
    "as ns-2.35 (the paper's simulator) runs them, equally",
)

#: "reaches its contract": the worst flow's throughput / r_i at least 0.95
REACH_PART = Part(
    "greater", "worst flow / r_i ≥ 0.95", _REACH, threshold=0.95, low=0.95, primary=TWAM_PRIMARY
)

REACH = PaperClaim(
    "Over-provisioning has ensured that all Relative flows achieve the contracted capacity "
    "under TWAM and DWRED",
    "Sec. 5.2, scenario 2 (Fig. 3.II)",
    "greater",
    "every flow ≥ r_i",
    (REACH_PART,),
    ("s12",),
    threshold=REACHED,
    unit=" worst flow / r_i",
)
FAIL = PaperClaim(
    "despite of the over-provisioning, the larger r_i flows fail to reach their contracted r_i",
    "Sec. 5.2, scenario 2, TSW2CM + static WRED",
    "less",
    "largest-r_i flows < r_i",
    (Part("less", "largest group / r_i ≤ 0.95", _FAIL, threshold=1.0, high=0.95, primary=TSW_PRIMARY),),
    ("s12",),
    threshold=1.0,
    unit=" largest group / r_i",
)
FAIL3 = PaperClaim(
    "When TSW2CM and static WRED are used Flows No 8, 9 and 10 fail to obtain their contracted rate",
    "Sec. 5.3, scenario 3 (Fig. 4)",
    "less",
    "largest-r_i flows < r_i",
    (Part("less", "largest group / r_i ≤ 0.95", _FAIL, threshold=1.0, high=0.95, primary=TSW_PRIMARY),),
    ("s3",),
    threshold=1.0,
    unit=" largest group / r_i",
)
FAIR3 = PaperClaim(
    "Use of TWAM and DWRED ensures that the differentiation between TCP flows is preserved in a fair way",
    "Sec. 5.3, scenario 3 (Fig. 4)",
    "greater",
    "every flow ≥ r_i",
    (REACH_PART,),
    ("s3",),
    threshold=REACHED,
    unit=" worst flow / r_i",
)
EF4 = PaperClaim(
    "TCP flows succeed in obtaining and preserving a throughput proportional to their reserved capacity",
    "Sec. 5.3, scenario 4 (Fig. 5.I)",
    "greater",
    "every flow ≥ r_i",
    (REACH_PART,),
    ("s4",),
    threshold=REACHED,
    unit=" worst flow / r_i",
)
BETTER = PaperClaim(
    "The limitations of TSW2CM and static WRED are once again apparent here",
    "Sec. 5.2, scenario 2: TWAM + DWRED against TSW2CM + static WRED (same seeds)",
    "greater",
    "TWAM + DWRED bring the least-served flow closer to its contract",
    (
        Part(
            "greater",
            "worst flow / r_i, TWAM − TSW2CM ≥ +0.05",
            DECLARED_ONLY + " (Fig. 3); 5 % of the contract is the least we count",
            low=0.05,
            primary=TWAM_PRIMARY,
        ),
    ),
    ("s12",),
    unit=" worst flow / r_i, TWAM − TSW2CM",
)
SLOW_START = PaperClaim(
    "no TCP flow experiences a Slow Start phase when TWAM+DWRED is used",
    "Sec. 5.2, scenario 1 (Fig. 2)",
    "less",
    "no flow (0) after its initial Slow Start",
    (
        Part(
            "less",
            "TCP flows with a retransmission timeout = 0 (the text: 'no TCP flow')",
            "Sec. 5.2's words: no flow, i.e. 0 flows with a timeout (each RTO resets cwnd to one "
            "segment and restarts Slow Start; the initial Slow Start is every flow's and not counted); "
            "a count of flows per seed, discrete (sign-test interval); the direction boundary 0.5 "
            "separates 0 from 1",
            threshold=0.5,
            high=0.0,
            kind="discrete",
            from_next_run=True,
            primary=Primary(
                (r"Σ binds its neighbour", r"flow set C", r"any RTO in the run"),
                "Eq. 3 and the flow set as for the other claims; every RTO in the run starts a Slow "
                "Start phase beyond the flow's first (one ending the initial Slow Start included), and "
                "the sentence excludes none; RTOs after the warm-up alone is the laxer variant",
            ),
        ),
    ),
    ("s12",),
    threshold=0.5,
    unit=" flows with a timeout",
    digits=2,
)

#: the study's claims, in the order its page lists them
CLAIMS = declare("twam-dwred", REACH, FAIL, FAIL3, FAIR3, EF4, BETTER, SLOW_START)
