"""The paper's values for ``red-baseline`` (:mod:`qoslab.studies.red_baseline.study`): its RED
parameters, Table 2's columns, the sweeps' buffer sizes and flow counts, and the published
numbers compared with."""

from __future__ import annotations

from qoslab.reproduction.base import Reference

PAPER = (
    'S. N. Seyyed Hashemi, S. Jamali, H. Motarez, "A High-Performance Router: Using Fair-Dropping '
    'Policy" (`../shared/papers/hashemi-fdd-red.md`)'
)

# The paper's RED parameters (Sec. III.A).
MIN_TH, MAX_TH, MAX_P, W_Q = 25, 75, 0.01, 0.002
#: Table 2 RTTs of the heterogeneous case, flow i.
HETERO_RTT_MS = (20, 40, 60, 80, 100)
#: Table 2, Original-RED columns (bps).
TABLE2_HOMO = (203056, 244312, 182320, 196576, 151216)
TABLE2_HETERO = (295936, 202840, 161800, 244528, 89224)

SETUPS = {
    "file": "100 s, measured 20-100 s (scenario file)",
    "20s": "20 s, measured 0-20 s",
    "newreno": "100 s, measured 20-100 s, TCP NewReno",
}
RULES = {
    "capped": "max_th = min(75, B), min_th = max_th/3 (primary)",
    "paper": "paper's 25/75 kept (max_th may exceed B)",
    "proportional": "min_th = B/4, max_th = 3B/4",
}
BUFFERS = (10, 20, 30, 40, 50, 60, 75, 100, 125, 150, 175, 200)
BUFFERS_QUICK = (10, 50, 100, 200)
FLOWS = (5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100)
FLOWS_QUICK = (5, 20, 50, 100)

SHORT = ["duration=20s", "measurement.start=0s", "measurement.end=20s"]


def _references() -> tuple[Reference, ...]:
    t1 = {"buffer": 100, "thresholds": "paper"}
    refs = [
        Reference(
            "t1-drops",
            "Table 1",
            "RED packets dropped in 20 s (scenario 1)",
            149.0,
            "fig10",
            "drops_bottleneck",
            t1,
            "packets",
        ),
        Reference(
            "t1-rate",
            "Table 1",
            "RED average dropping rate (scenario 1)",
            7.45,
            "fig10",
            "drop_rate_bottleneck_pps",
            t1,
            "packets/s",
        ),
    ]
    for setup, when in (("file", "80 s steady state"), ("20s", "20 s run")):
        for rtt, fi, agg in (("homogeneous", 0.967, 977480.0), ("heterogeneous", 0.888, 994328.0)):
            w = {"rtt": rtt, "setup": setup}
            refs.append(
                Reference(
                    f"t2-fi-{rtt}-{setup}",
                    "Table 2",
                    f"Jain index, {rtt} RTTs, {when}",
                    fi,
                    "table2",
                    "fairness_index",
                    w,
                )
            )
            refs.append(
                Reference(
                    f"t2-agg-{rtt}-{setup}",
                    "Table 2",
                    f"aggregated throughput, {rtt} RTTs, {when}",
                    agg,
                    "table2",
                    "aggregate_throughput_bps",
                    w,
                    "bps",
                )
            )
    for i in range(5):
        refs.append(
            Reference(
                f"t2-hetero-flow{i}",
                "Table 2",
                f"throughput of Flow{i}, RTT {HETERO_RTT_MS[i]} ms, 80 s steady state",
                float(TABLE2_HETERO[i]),
                "table2",
                "flow:throughput_bps",
                {"rtt": "heterogeneous", "setup": "file", "flow_name": f"ftp{i}"},
                "bps",
            )
        )
    return tuple(refs)


REFERENCES = _references()
