"""The setup of ``twam-dwred`` (:mod:`qoslab.studies.twam_dwred.study`): the arms, the flow sets and
the constants of Bouras & Sevasti's Section 5, and the scenarios of the three-hop AF LSP built
from them."""

from __future__ import annotations

from typing import Any

import pandas as pd

from qoslab.scenario import Scenario

PAPER = (
    'C. Bouras, A. Sevasti, "Performance enhancement of an AF service using TCP-aware marking and '
    'dynamic WRED" (`../shared/papers/bouras-twam-dwred.md`)'
)

#: Contracted rates (Mbps) of the flow sets, one entry per flow.
#: The paper gives no flow set. A and B are ours; C is what the text implies: ten flows in groups
#: with a common r_i, the largest group three flows ("Flows No 8, 9 and 10 fail", Sec. 5.3), Σr
#: just under scenario 1's 30 Mbps (scenario 2's 50 Mbps is "higher than Σ r_i").
FLOW_SETS: dict[str, tuple[float, ...]] = {
    "A": (1, 1, 1, 2, 2, 2, 3, 3, 4, 4),
    "B": (1, 1, 1, 2, 2, 4, 8, 8),
    "C": (1, 1, 1, 2, 2, 3, 3, 5, 5, 5),
}
#: Every arm. The baseline runs in both flavours: ns-2.35's dsRED rules (``flavour = "ns2"`` on
#: the WRED queues and TSW2CM meters; the paper's simulator) lose more IN packets than the
#: reference ones (docs/ns2-behaviour.md). TWAM runs under both readings of Eq. 3, whose printed
#: form uses ``i`` for the flow and for both summations (docs/experiments/twam-dwred.md).
ARMS = {
    "tsw-wred": "TSW2CM + static WRED (40/160/0.1)",
    "tsw-wred-ns2": "TSW2CM + static WRED, ns-2 dsRED rules",
    "twam-dwred": "TWAM, Eq. 3 Σ over products (edge windows) + DWRED",
    "twam-oracle-dwred": "TWAM, Eq. 3 Σ over products (true cwnd) + DWRED",
    "twam-neighbour-dwred": "TWAM, Eq. 3 Σ binds its neighbour (edge windows) + DWRED",
}
#: The baseline arms: per-flow TSW2CM and static WRED, in either flavour.
BASELINE_ARMS = ("tsw-wred", "tsw-wred-ns2")
#: The two readings of Eq. 3 (edge windows), by arm: the reading's name in verdicts.
EQ3_READINGS = {"twam-dwred": "Σ over products", "twam-neighbour-dwred": "Σ binds its neighbour"}
#: What the paper's text says about each reading of Eq. 3.
EQ3_SUPPORT = {
    "twam-dwred": "the printed formula, if its second Σ_i spans the product r_i·W_i",
    "twam-neighbour-dwred": "supported by the prose: 'mark the W_i packets of each flow i ... in proportion "
    "to r_i' and the window 'coloured' to reflect 'the individual TCP flows' reservations, rather than "
    "the current achieved congestion windows'",
}
BASELINE_READINGS = {"tsw-wred": "reference flavour", "tsw-wred-ns2": "ns2 flavour"}
BASELINE_SUPPORT = {
    "tsw-wred": "TSW2CM (RFC 2859) and WRED as their sources define them",
    "tsw-wred-ns2": "as ns-2.35's dsRED runs them (the paper's simulator)",
}
PACKET = 1000  # bytes
HOP_DELAY_MS = 10
ACCESS_DELAY_MS = 1
#: Propagation round-trip time of the LSP, sender to receiver and back (ms).
RTT_MS = 2 * (2 * ACCESS_DELAY_MS + 3 * HOP_DELAY_MS)
BUFFER = 300  # packets, every AF queue
STATIC_WRED = (40.0, 160.0, 0.1)
DWRED_B, DWRED_MAX_P = 0.15, 0.1
#: Scenario 4: EF bursts (on, off) in seconds, starting at the first on-period.
EF_BURST = (30.0, 30.0)
EF_RATE = "11Mbps"
EF_CAP = "10Mbps"
REACHED = 0.95  # a flow "reaches" its contract at >= 95 % of r_i


def capacity_mbps(scen: int) -> int:
    return 30 if scen == 1 else 50


def timing(scen: int, quick: bool) -> dict[str, float]:
    """Run length, measurement window and late start (s) of scenario ``scen``."""
    if scen == 3:
        return (
            {"duration": 400.0, "start": 200.0, "end": 400.0, "late": 100.0}
            if quick
            else {"duration": 1000.0, "start": 400.0, "end": 1000.0, "late": 200.0}
        )
    if scen == 4:
        return (
            {"duration": 150.0, "start": 30.0, "end": 150.0, "late": 0.0}
            if quick
            else {"duration": 300.0, "start": 60.0, "end": 300.0, "late": 0.0}
        )
    return (
        {"duration": 80.0, "start": 20.0, "end": 80.0, "late": 0.0}
        if quick
        else {"duration": 300.0, "start": 60.0, "end": 300.0, "late": 0.0}
    )


#: How IN (AF11) packets are dropped (the paper gives one threshold set, applied here to OUT):
#: "x2" (primary) IN thresholds twice the OUT thresholds; "x1" the same curve for IN and OUT
#: (colour-blind); "tail" IN packets only dropped when the buffer is full.
IN_POLICIES = {"x2": 2.0, "x1": 1.0, "tail": None}


def _af_queue(arm: str, signal_delay_ms: float, in_factor: float | None) -> dict[str, Any]:
    """The AF queue of one LSP hop. ``in_factor`` None: IN packets are only dropped when the
    buffer is full; k: IN thresholds are k times the OUT thresholds (static or dynamic)."""
    if arm in BASELINE_ARMS:
        lo, hi, p = STATIC_WRED
        k = in_factor
        in_curve = (
            {"min_th": float(BUFFER), "max_th": 2.0 * BUFFER, "max_p": p}
            if k is None
            else {"min_th": k * lo, "max_th": k * hi, "max_p": p}
        )
        return {
            "type": "wred",
            "limit": f"{BUFFER}pkts",
            "in": in_curve,
            "out": {"min_th": lo, "max_th": hi, "max_p": p},
            **_flavour(arm),
        }
    extra = {} if in_factor is None else {"in_factor": in_factor}
    return {
        **extra,
        "type": "dwred",
        "limit": f"{BUFFER}pkts",
        "b": DWRED_B,
        "max_p": DWRED_MAX_P,
        "max_th": STATIC_WRED[1],
        "signal": "ingress",
        "signal_delay": f"{signal_delay_ms:g}ms",
    }


def _flavour(arm: str) -> dict[str, str]:
    """The ``flavour`` key of the baseline's queues and meters (absent: the default, reference)."""
    return {"flavour": "ns2"} if arm.endswith("-ns2") else {}


def _hops(
    scen: int, arm: str, cap: str, in_factor: float | None, droptail: dict[str, str]
) -> list[dict[str, Any]]:
    """The three LSP hops r1-r2-r3-r4; in scenario 4, r2's AF queue sits behind a strict-priority
    EF queue."""
    hops = []
    for k, (a, b) in enumerate((("r1", "r2"), ("r2", "r3"), ("r3", "r4"))):
        q = _af_queue(arm, k * HOP_DELAY_MS, in_factor)
        if scen == 4 and a == "r2":
            q = {
                "type": "multi",
                "scheduler": "priority",
                "queues": [
                    {"name": "ef", "dscp": ["EF"], "queue": {"type": "droptail", "limit": "100pkts"}},
                    {"name": "af", "default": True, "queue": q},
                ],
            }
        hops.append(
            {
                "name": f"{a}-{b}",
                "a": a,
                "b": b,
                "bandwidth": cap,
                "delay": f"{HOP_DELAY_MS}ms",
                "queue_ab": q,
                "queue_ba": droptail,
            }
        )
    return hops


def _add_ef(
    nodes: list[dict[str, Any]],
    links: list[dict[str, Any]],
    flows: list[dict[str, Any]],
    duration: float,
    droptail: dict[str, str],
) -> None:
    """Scenario 4's EF traffic: on/off CBR bursts from u to v across r2-r3."""
    nodes += [{"name": "u"}, {"name": "v"}]
    links += [
        {
            "name": "ef-in",
            "a": "u",
            "b": "r2",
            "bandwidth": EF_CAP,
            "delay": "1ms",
            "queue": {"type": "droptail", "limit": "50pkts"},
        },
        {
            "name": "ef-out",
            "a": "r3",
            "b": "v",
            "bandwidth": "100Mbps",
            "delay": "1ms",
            "queue": droptail,
        },
    ]
    on, off = EF_BURST
    k, t0 = 0, on + off
    while t0 < duration:
        flows.append(
            {
                "name": f"ef{k}",
                "src": "u",
                "dst": "v",
                "type": "cbr",
                "rate": EF_RATE,
                "dscp": "EF",
                "packet_size": f"{PACKET}B",
                "start": f"{t0:g}s",
                "stop": f"{min(t0 + on, duration):g}s",
            }
        )
        k, t0 = k + 1, t0 + on + off


def _conditioner(arm: str, n: int, rates: tuple[float, ...]) -> dict[str, Any]:
    """The ingress conditioner at r1-r2: per-flow TSW2CM for the baseline arms, one aggregate
    TWAM meter otherwise."""
    if arm in BASELINE_ARMS:
        return {
            "name": "ingress{i}",
            "count": n,
            "link": "r1-r2",
            "classify": "flow:f{i}",
            "meter": {
                "type": "tsw2cm",
                "cir": [f"{r:g}Mbps" for r in rates],
                "window": "1s",
                **_flavour(arm),
            },
            "green": "AF11",
            "yellow": "AF12",
        }
    else:
        return {
            "name": "ingress",
            "link": "r1-r2",
            "classify": "dscp:AF11",
            "scope": "aggregate",
            "meter": {
                "type": "twam",
                "rates": {f"f{i}": f"{r:g}Mbps" for i, r in enumerate(rates)},
                "rtt": f"{RTT_MS}ms",
                "alpha": 1,
                "window_source": "oracle" if "oracle" in arm else "edge",
                "formula": "eq3_neighbour" if "neighbour" in arm else "eq3",
            },
            "green": "AF11",
            "yellow": "AF12",
        }


def lsp_scenario(
    scen: int,
    arm: str,
    flowset: str = "A",
    *,
    quick: bool = False,
    seed: int = 1,
    interval: str = "1s",
    in_policy: str = "x2",
) -> Scenario:
    """Scenario ``scen`` (1-4) of Section 5 with marker/AQM ``arm`` and flow set ``flowset``."""
    if scen not in (1, 2, 3, 4):
        raise ValueError(f"scenario must be 1-4, got {scen}")
    if arm not in ARMS:
        raise ValueError(f"unknown arm {arm!r} (expected one of {', '.join(ARMS)})")
    if in_policy not in IN_POLICIES:
        raise ValueError(f"unknown IN policy {in_policy!r} (expected one of {', '.join(IN_POLICIES)})")
    in_factor = IN_POLICIES[in_policy]
    rates = FLOW_SETS[flowset]
    n = len(rates)
    t = timing(scen, quick)
    cap = f"{capacity_mbps(scen)}Mbps"
    # Scenario 3: the first flow of each rate group starts late.
    late = {rates.index(r) for r in sorted(set(rates))} if scen == 3 else set()
    starts = [f"{t['late']:g}s" if i in late else "uniform(0s, 1s)" for i in range(n)]
    droptail = {"type": "droptail", "limit": "1000pkts"}
    hops = _hops(scen, arm, cap, in_factor, droptail)
    nodes: list[dict[str, Any]] = [
        {"name": "s{i}", "count": n},
        {"name": "r1"},
        {"name": "r2"},
        {"name": "r3"},
        {"name": "r4"},
        {"name": "d{i}", "count": n},
    ]
    links: list[dict[str, Any]] = [
        {
            "name": "access{i}",
            "count": n,
            "a": "s{i}",
            "b": "r1",
            "bandwidth": "100Mbps",
            "delay": f"{ACCESS_DELAY_MS}ms",
            "queue": droptail,
        },
        *hops,
        {
            "name": "exit{i}",
            "count": n,
            "a": "r4",
            "b": "d{i}",
            "bandwidth": "100Mbps",
            "delay": f"{ACCESS_DELAY_MS}ms",
            "queue": droptail,
        },
    ]
    flows: list[dict[str, Any]] = [
        {"name": f"f{i}", "src": f"s{i}", "dst": f"d{i}", "start": starts[i], "dscp": "AF11"}
        for i in range(n)
    ]
    if scen == 4:
        _add_ef(nodes, links, flows, t["duration"], droptail)
    cond = _conditioner(arm, n, rates)
    table: dict[str, Any] = {
        "name": f"twam-dwred-s{scen}-{arm}-{flowset}-in{in_policy}",
        "description": f"Bouras & Sevasti scenario {scen}: {ARMS[arm]}, flow set {flowset} "
        f"({n} flows, contracts {', '.join(f'{r:g}' for r in rates)} Mbps), {cap} LSP",
        "duration": f"{t['duration']:g}s",
        "seed": seed,
        "tcp": {"variant": "newreno", "packet_size": f"{PACKET}B", "window": 10000},
        "measurement": {
            "start": f"{t['start']:g}s",
            "end": f"{t['end']:g}s",
            "interval": interval,
            "bottleneck": "r2-r3" if scen == 4 else "r1-r2",
        },
        "node": nodes,
        "link": links,
        "flow": flows,
        "conditioner": [cond],
    }
    return Scenario.from_table(table, f"lsp_scenario({scen}, {arm!r}, {flowset!r})")


def contracts(flowset: str) -> dict[str, float]:
    """Contracted rate (bit/s) by flow name."""
    return {f"f{i}": r * 1e6 for i, r in enumerate(FLOW_SETS[flowset])}


def theoretical_window(flowset: str, scen: int) -> dict[str, float]:
    """The window (packets) of a flow receiving its share of the AF capacity in proportion to its
    contract, ``C·r_i/Σr · RTT / (8·packet)``, at the propagation RTT (Relative service)."""
    rates = FLOW_SETS[flowset]
    c = capacity_mbps(scen) * 1e6
    return {f"f{i}": c * r / sum(rates) * RTT_MS / 1e3 / (8 * PACKET) for i, r in enumerate(rates)}


def flow_table(res_flows: pd.DataFrame, flowset: str) -> pd.DataFrame:
    """Per-flow throughput against the contract (TCP flows only) of one run's flow table."""
    ct = contracts(flowset)
    df = res_flows[res_flows["name"].isin(list(ct))].copy()
    df["contract_bps"] = df["name"].map(ct)
    df["ratio"] = df["throughput_bps"] / df["contract_bps"]
    return df
