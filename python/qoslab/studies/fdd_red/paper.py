"""The paper's values and the arms of ``fdd-red`` (:mod:`qoslab.studies.fdd_red.study`): the
bottleneck disciplines compared and their readings, the TCP windows, Tables 1 and 2's FDD-RED
columns, and the published numbers compared with."""

from __future__ import annotations

from qoslab.report.figures import Style
from qoslab.reproduction.base import Reference

Q = "link.bottleneck.queue_ab"
#: The bottleneck disciplines compared: label → overrides of the RED scenario's queue.
AQMS: dict[str, list[str]] = {
    "red": [],
    "fdd-red": [f"{Q}.type=fdd_red"],
    "fdd-red-oracle": [f"{Q}.type=fdd_red", f"{Q}.rtt_source=oracle"],
    "fdd-red-fig2": [f"{Q}.type=fdd_red", f"{Q}.penalty=fig2"],
    "fdd-red-random": [f"{Q}.type=fdd_red", f"{Q}.victim=random"],
}
AQM_LABELS = {
    "red": "RED",
    "fdd-red": "FDD-RED (shares, RTT estimator)",
    "fdd-red-oracle": "FDD-RED (shares, configured RTTs)",
    "fdd-red-fig2": "FDD-RED (Fig. 2 as printed, RTT estimator)",
    "fdd-red-random": "control: FDD-RED, victim random",
}
AQM_STYLE: dict[str, Style] = {
    "red": dict(color="tab:blue", lw=2.0),
    "fdd-red": dict(color="tab:red", lw=2.0),
    "fdd-red-oracle": dict(color="tab:orange", ls="--", lw=1.3),
    "fdd-red-fig2": dict(color="black", ls=":", lw=1.5),
    "fdd-red-random": dict(color="tab:gray", ls="-.", lw=1.5),
}
#: The readings of FDD-RED (penalty rule and RTT source), by arm: the reading's name in verdicts.
READINGS = {
    "fdd-red": "shares, estimator",
    "fdd-red-oracle": "shares, oracle RTTs",
    "fdd-red-fig2": "Fig. 2 as printed, estimator",
}
#: What the paper's text says about each reading.
READING_SUPPORT = {
    "fdd-red": "the prose's rule",
    "fdd-red-oracle": "RTT source left open",
    "fdd-red-fig2": "Fig. 2 as printed, against the prose",
}
#: The control with FDD-RED's choice of victim disabled (not a reading of the paper).
CONTROL = "fdd-red-random"
#: TCP advertised-window caps (packets): ns-2's default window_, 64, and none (1000 packets,
#: never reached). The paper gives no TCP settings.
WINDOWS = {20: "window 20", 64: "window 64", 1000: "window unlimited"}
WINDOW_SUPPORT = {20: "ns-2's default", 64: "", 1000: "the scenario files' setting"}
#: The window of the tables and figures that show one window (the scenario files' setting).
PRIMARY_WINDOW = 1000
#: The drops sweeps (Figs. 10-11) run these queues.
DROP_AQMS = ("red", "fdd-red", "fdd-red-fig2", "fdd-red-random")
#: Table 1 (packets dropped in 20 s, scenario 1).
TABLE1 = {"red": 149.0, "fdd-red": 67.0}
#: Table 2, FDD-RED columns (bps), and the index / aggregate rows of both columns.
TABLE2_FDD_HOMO = (186856, 195928, 185704, 219600, 199976)
TABLE2_FDD_HETERO = (306304, 212128, 189232, 168496, 124496)
JAIN = {
    ("homogeneous", "red"): 0.967,
    ("homogeneous", "fdd-red"): 0.996,
    ("heterogeneous", "red"): 0.888,
    ("heterogeneous", "fdd-red"): 0.901,
}
AGGREGATE = {
    ("homogeneous", "red"): 977480.0,
    ("homogeneous", "fdd-red"): 988064.0,
    ("heterogeneous", "red"): 994328.0,
    ("heterogeneous", "fdd-red"): 1000656.0,
}
SETUPS = {"20s": "20 s run, measured 0-20 s", "file": "100 s run, measured 20-100 s"}
#: The measurement window as a reading of Table 2 (the paper does not say which).
MEASURES = {"file": "80 s steady state", "20s": "whole 20 s run"}
MEASURE_SUPPORT = {"file": "'run long enough … consistent behavior'", "20s": "'as long as 20 seconds'"}


def paper_references() -> tuple[Reference, ...]:
    refs = []
    for aqm, pub in TABLE1.items():
        refs.append(
            Reference(
                f"t1-drops-{aqm}",
                "Table 1",
                f"{AQM_LABELS[aqm]}: packets dropped in 20 s",
                pub,
                "tables",
                "drops_bottleneck",
                {"rtt": "homogeneous", "setup": "20s", "window": PRIMARY_WINDOW, "aqm": aqm},
                "packets",
            )
        )
    for setup in SETUPS:
        for (rtt, aqm), fi in JAIN.items():
            refs.append(
                Reference(
                    f"t2-fi-{rtt}-{aqm}-{setup}",
                    "Table 2",
                    f"Jain index, {rtt} RTTs, {AQM_LABELS[aqm]}, {SETUPS[setup]}",
                    fi,
                    "tables",
                    "fairness_index",
                    {"rtt": rtt, "setup": setup, "window": PRIMARY_WINDOW, "aqm": aqm},
                )
            )
    return tuple(refs)
