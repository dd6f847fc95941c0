"""The claims of ``fdd-red`` (Hashemi et al., FDD-RED against RED), each declared once
(:class:`~qoslab.verdicts.claims.PaperClaim`): words, place, the sign test the analysis runs,
the magnitude with its source (Tables 1-2's single runs, halved; a declared smallest effect for
the figures that give only plots), the precondition, the readings the text supports, and the
sweeps the records rest on. The analysis (:mod:`qoslab.studies.fdd_red.study`,
:mod:`qoslab.studies.fdd_red.dynamics`) makes its verdicts from these objects."""

from __future__ import annotations

from qoslab.studies.fdd_red.paper import AGGREGATE, JAIN
from qoslab.studies.red_baseline.paper import FLOWS
from qoslab.verdicts.claims import DECLARED_ONLY, HALF, PaperClaim, Part, declare
from qoslab.verdicts.core import Primary

#: The least effects the claims need (the sign test's margin): "fewer drops" is at least 5 %
#: fewer (Table 1 has 55 % fewer); "better throughput" at least 1 kbps (0.1 % of the bottleneck;
#: Table 2 has +10.6 and +6.3 kbps). "Fairer" needs any positive difference in Jain's index.
DROPS_MARGIN = 0.05
THROUGHPUT_MARGIN_BPS = 1e3

#: the smallest "fewer drops" of Figs. 10-11, which give only plots
FDD_FEWER = (
    DECLARED_ONLY + " (Figs. 10-11); 10 % fewer drops is the least we count as 'fewer' "
    "(a gap a reader sees between two curves of drop counts); Table 1's −55 % is another setup's "
    "single run, not these figures' magnitude"
)

#: Fig. 9 and the conclusion's queue claims: the text's readings, both windows equally
FDD_PRIMARY_QUEUE = Primary(
    (r"^shares", r"estimator", r"window 20"),
    "fluctuation is the queue's amplitude, its standard deviation (the CV, std / mean, mixes in "
    "the queue's size); Fig. 9 plots the 20 s run, and 'consistent behavior' supports the 80 s "
    "steady state equally; shares, estimator and window 20 as for the drops",
    exclude=(r", CV,",),
)

#: a gain in aggregate throughput needs a link RED leaves unused
FDD_HEADROOM = (
    "the bottleneck has headroom: RED leaves at least 1 % of the link unused in some seed (a link "
    "saturated by both queues in every seed cannot carry more)"
)

#: Table 2's claims: the readings the text supports
FDD_PRIMARY_TABLE2 = Primary(
    (r"^shares", r"estimator", r"80 s steady state", r"window 20"),
    "the prose's penalty rule (shares); a router can only estimate RTTs (estimator); Table 2's "
    "'run long enough … consistent behavior' (80 s steady state); ns-2's default window, the "
    "likeliest for an ns-2 study that names none",
)
#: the drop claims (Table 1, Figs. 10-11): the readings the text supports
FDD_PRIMARY_DROPS = Primary(
    (r"^shares", r"estimator", r"window 20"),
    "the prose's penalty rule (shares); a router can only estimate RTTs (estimator); ns-2's default window",
)

RTTS = ("homogeneous", "heterogeneous")


def _fair(rtt: str, d_jain: float) -> PaperClaim:
    return PaperClaim(
        f"In both experiment, FDD-RED is fairer than RED algorithm [{rtt} RTTs]",
        "Sec. III-D, Table 2 (Jain's index)",
        "greater",
        f"Jain {JAIN[(rtt, 'red')]} → {JAIN[(rtt, 'fdd-red')]} (one run each)",
        (
            Part(
                "greater",
                f"FDD-RED − RED ≥ +{d_jain / 2:g} Jain (Table 2: +{d_jain:g})",
                HALF,
                low=d_jain / 2,
                primary=FDD_PRIMARY_TABLE2,
            ),
        ),
        ("tables",),
        unit=" Jain, FDD-RED − RED",
    )


def _perf(rtt: str, d_agg: float) -> PaperClaim:
    return PaperClaim(
        "FDD-RED … exhibits better performance in terms of flows throughput and bottleneck "
        f"utilization [{rtt} RTTs]",
        "Sec. III-D, Table 2 (aggregated throughput)",
        "greater",
        f"{AGGREGATE[(rtt, 'red')] / 1e3:.1f} → {AGGREGATE[(rtt, 'fdd-red')] / 1e3:.1f} kbps (one run each)",
        (
            Part(
                "greater",
                f"FDD-RED − RED ≥ +{d_agg / 2e3:.1f} kbps aggregate (Table 2: +{d_agg / 1e3:.1f} kbps)",
                HALF + "; both parts of the claim (flows' throughput, bottleneck utilisation) are the "
                "aggregate throughput here, so one record tests both; margin and resolution 1 kbps",
                margin=1e3,
                resolution=1e3,
                low=d_agg / 2,
                name="aggregate throughput = utilisation",
                precondition=FDD_HEADROOM,
                primary=FDD_PRIMARY_TABLE2,
            ),
        ),
        ("tables",),
        margin=THROUGHPUT_MARGIN_BPS,
        unit=" kbps, FDD-RED − RED",
        scale=1e3,
    )


#: Table 2's claims per RTT regime, Table 2's differences (Jain, aggregate in bit/s)
FAIR = {"homogeneous": _fair("homogeneous", 0.029), "heterogeneous": _fair("heterogeneous", 0.013)}
PERF = {"homogeneous": _perf("homogeneous", 10584.0), "heterogeneous": _perf("heterogeneous", 6328.0)}

DROPS = PaperClaim(
    "RED drops more packets than FDD-RED algorithm",
    "Sec. III-B, Table 1 (scenario 1, 20 s)",
    "less",
    "149 → 67 packets (−55 %, one run each)",
    (
        Part(
            "less",
            "drops FDD-RED vs RED ≤ −27.5 % (Table 1: 149 → 67, −55 %)",
            HALF + "; margin 5 %",
            margin=0.05,
            high=-0.275,
            primary=FDD_PRIMARY_DROPS,
        ),
    ),
    ("tables",),
    margin=DROPS_MARGIN,
    unit=" % change in drops, FDD-RED vs RED",
    scale=0.01,
)
FIG10 = PaperClaim(
    "According to this figure, FDD-RED drops fewer packets compared with RED",
    "Sec. III-C, Fig. 10 (buffer 10-200 packets, 20 s)",
    "less",
    "fewer at every buffer size (plot only)",
    (
        Part(
            "less",
            "drops FDD-RED vs RED ≤ −10 % (Fig. 10: a plot, no numbers)",
            FDD_FEWER + "; drops summed over the buffer sizes 10-200; margin 5 %",
            margin=0.05,
            high=-0.10,
            primary=FDD_PRIMARY_DROPS,
        ),
    ),
    ("fig10",),
    margin=DROPS_MARGIN,
    unit=" % change in drops summed over the buffer sizes, FDD-RED vs RED",
    scale=0.01,
)


def fig11_place(n: int) -> str:
    """Where Fig. 11's part at ``n`` flows is."""
    return f"Sec. III-C, Fig. 11 (20 s), N = {n} flows"


FIG11 = PaperClaim(
    "FDD-RED has lower drop count than RED algorithm for different flow numbers",
    "Sec. III-C, Fig. 11 (20 s)",
    "less",
    "fewer at every number of flows (plot only)",
    tuple(
        Part(
            "less",
            f"drops FDD-RED vs RED at N = {n} ≤ −10 % (Fig. 11: a plot, no numbers)",
            FDD_FEWER + "; 'for different flow numbers' judged at each N (a part per N, so an N "
            "where FDD-RED drops more shows); margin 5 %",
            margin=0.05,
            high=-0.10,
            name=f"N = {n}",
            place=fig11_place(n),
            from_next_run=True,
            primary=FDD_PRIMARY_DROPS,
        )
        for n in FLOWS
    ),
    ("fig11",),
    margin=DROPS_MARGIN,
    unit=" % change in drops, FDD-RED vs RED",
    scale=0.01,
)
CONVERGES = PaperClaim(
    "FDD-RED converges more rapidly to a steady-state in which the bottleneck is fully utilized",
    "Sec. III-B, Fig. 8 (scenario 1, 20 s)",
    "less",
    "FDD-RED's link full sooner (plot only)",
    (
        Part(
            "less",
            "convergence time FDD-RED − RED ≤ −1 s (Fig. 8: a plot, no numbers)",
            DECLARED_ONLY + " (Fig. 8); 1 s, two of Fig. 8's 0.5 s bins and 5 % of the 20 s run, is the "
            "least we count as 'more rapidly'; the time from which every 0.5 s bin carries ≥ 95 % of the "
            "link, on the grid of 0.5 s bins (a run whose last bin is short counts as 20 s, the run's "
            "end: censored there)",
            high=-1.0,
            kind="grid",
            grid=0.5,
            from_next_run=True,
            primary=Primary(
                (r"^shares", r"estimator", r"link full", r"window 20"),
                "the text's own words, a steady state 'in which the bottleneck is fully utilized' "
                "(Fig. 8 plots the link's throughput; Jain of shares is Fig. 5's 'converge to a fair "
                "point', another figure); shares, estimator and window 20 as for the drops",
            ),
        ),
    ),
    ("dynamics",),
    unit=" s, convergence time FDD-RED − RED",
)
FLUCTUATION = PaperClaim(
    "The queue length fluctuation in FDD-RED is obviously lower than original RED",
    "Sec. III-B, Fig. 9 (scenario 1)",
    "less",
    "lower fluctuation (plot only)",
    (
        Part(
            "less",
            "queue std (or CV) FDD-RED vs RED ≤ −20 % (Fig. 9: a plot, no numbers)",
            DECLARED_ONLY + " (Fig. 9); 'obviously lower' read as at least a fifth less, the least we "
            "count as visible between two plots of the queue on the same axis; margin 5 %",
            margin=0.05,
            high=-0.20,
            from_next_run=True,
            primary=FDD_PRIMARY_QUEUE,
        ),
    ),
    ("dynamics", "tables"),
    margin=0.05,
    unit=" % change, FDD-RED vs RED",
    scale=0.01,
)
CONCLUSION = PaperClaim(
    "outperforms RED in terms of throughput, utilization, number of dropped packets, queue size "
    "and even stability",
    "Sec. IV (conclusion): queue size",
    "less",
    "a smaller queue (no number)",
    (
        Part(
            "less",
            "mean queue FDD-RED vs RED ≤ −10 % (conclusion: words only)",
            DECLARED_ONLY + " (Sec. IV); 10 % is the least we count as a smaller queue; margin 5 %; "
            "the conclusion's throughput, utilisation and drops are Table 1-2's claims",
            margin=0.05,
            high=-0.10,
            name="queue size",
            from_next_run=True,
            primary=FDD_PRIMARY_QUEUE,
        ),
        Part(
            "less",
            "queue std FDD-RED vs RED ≤ −20 % (as Fig. 9)",
            "the stability part, tested on the records of Fig. 9's 'queue length fluctuation … "
            "obviously lower' (the queue's oscillation, the paper's sense of stability: 'dampens "
            "oscillations'); " + DECLARED_ONLY,
            margin=0.05,
            high=-0.20,
            name="stability",
            borrow=FLUCTUATION,
            from_next_run=True,
            primary=FDD_PRIMARY_QUEUE,
        ),
    ),
    # the queue-size part and the stability part borrowed from Fig. 9's records
    ("dynamics", "tables"),
    margin=0.05,
    unit=" % change in the mean queue, FDD-RED vs RED",
    scale=0.01,
)

#: the study's claims, in the order its page lists them
CLAIMS = declare(
    "fdd-red",
    *(c for rtt in RTTS for c in (FAIR[rtt], PERF[rtt])),
    DROPS,
    FIG10,
    FIG11,
    CONVERGES,
    FLUCTUATION,
    CONCLUSION,
)
