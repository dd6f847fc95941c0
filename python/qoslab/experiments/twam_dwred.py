"""``twam-dwred``: the TCP-Window-Aware Marker and Dynamic WRED against TSW2CM and static WRED
(Bouras & Sevasti, Sections 3-5).

A three-hop AF FEC LSP R1-R2-R3-R4 (Section 5): TCP senders ``s{i}`` reach the ingress R1 over
100 Mbps access links, cross the LSP (10 ms per hop) and leave R4 for their receivers ``d{i}``.
The marker sits at R1 on the R1→R2 interface; the AF queue of every LSP hop (R1→R2, R2→R3,
R3→R4) is the AQM under test. Two arms (plus a variant):

- ``tsw-wred``: per-flow TSW2CM (CTR = r_i, 1 s window) and static WRED, OUT {40, 160, 0.1};
- ``twam-dwred``: TWAM (Eq. 3, edge window estimate, α = 1, RTT_LSP = 64 ms) and DWRED
  (max_th = ΣW, min_th = 0.15·max_th, max_p = 0.1), signalled with the propagation delay from
  R1 to each router;
- ``twam-oracle-dwred``: the same with TWAM reading the senders' true cwnd.

In both arms IN (AF11) packets are not early-dropped (the paper gives one threshold set; here it
governs OUT packets, and IN packets meet only the 300-packet buffer). Scenarios: 1 — 30 Mbps;
2 — 50 Mbps (over-provisioned); 3 — 50 Mbps, one flow of each rate group starts at 200 s,
measured over 400-1000 s; 4 — 50 Mbps with a strict-priority EF queue at R2 and 11 Mbps of EF
UDP (capped at 10 Mbps by its 10 Mbps access link) entering at R2 and leaving at R3 in periodic
bursts. Flow sets (the paper omits its own): A — 10 flows, 3×1, 3×2, 2×3, 2×4 Mbps (Σ 23 Mbps);
B — 12 flows, 3 each of 0.5, 1, 2, 3.5 Mbps (Σ 21 Mbps). See docs/experiments/twam-dwred.md.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from qoslab.experiments.base import Experiment, Options, Sweep, Window, register
from qoslab.experiments.runner import Context
from qoslab.report.figures import Line, Panel, bar_group, panels
from qoslab.runs.sweep import grid
from qoslab.scenario import Scenario
from qoslab.stats import estimate, paired
from qoslab.verdicts import Claim

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
    nodes = [
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
        while t0 < t["duration"]:
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
                    "stop": f"{min(t0 + on, t['duration']):g}s",
                }
            )
            k, t0 = k + 1, t0 + on + off
    if arm in BASELINE_ARMS:
        cond = {
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
        cond = {
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


def plan(opts: Options) -> list[Sweep]:
    q = opts.quick
    s12 = grid({"scen": [1, 2], "arm": list(ARMS), "flowset": list(FLOW_SETS)})
    s3 = grid({"scen": [3], "arm": list(ARMS), "flowset": ["A", "C"]})
    s4 = grid({"scen": [4], "arm": list(ARMS), "flowset": ["A", "C"]})
    inp = grid(
        {
            "scen": [2],
            "arm": [*BASELINE_ARMS, "twam-dwred"],
            "flowset": list(FLOW_SETS),
            "in_policy": ["x1", "tail"],
        }
    )
    return [
        Sweep(
            "inpolicy",
            [(p, lsp_scenario(2, p["arm"], p["flowset"], quick=q, in_policy=p["in_policy"])) for p in inp],
            opts.seeds,
            "Scenario 2 with the two other IN-drop policies (x1: colour-blind; tail: IN only at overflow).",
        ),
        Sweep(
            "s12",
            [(p, lsp_scenario(p["scen"], p["arm"], p["flowset"], quick=q)) for p in s12],
            opts.seeds,
            "Scenarios 1 (30 Mbps) and 2 (50 Mbps), every flow set, every arm.",
        ),
        Sweep(
            "s3",
            [(p, lsp_scenario(3, p["arm"], p["flowset"], quick=q)) for p in s3],
            opts.seeds,
            "Scenario 3: 50 Mbps, the first flow of each rate group starts late; measured after.",
        ),
        Sweep(
            "s4",
            [(p, lsp_scenario(4, p["arm"], p["flowset"], quick=q, interval="1s")) for p in s4],
            opts.seeds,
            "Scenario 4: 50 Mbps with 11 Mbps EF bursts (capped at 10 Mbps) through a priority queue at R2.",
        ),
    ]


def _per_flow(ctx: Context, sweep: str) -> pd.DataFrame:
    fl = ctx.flows(sweep)
    out = []
    for fs, g in fl.groupby("flowset"):
        ct = contracts(str(fs))
        g = g[g["flow_name"].isin(list(ct))].copy()
        g["contract_bps"] = g["flow_name"].map(ct)
        g["ratio"] = g["throughput_bps"] / g["contract_bps"]
        out.append(g)
    return pd.concat(out, ignore_index=True)


def _avg_cwnd(ctx: Context, sweep: str, where: dict[str, Any]) -> pd.DataFrame:
    """Average cwnd per (seed, flow) over the measurement window."""
    sf = ctx.series(sweep, "flow", where)
    t = timing(int(where["scen"]), ctx.options.quick)
    w = sf[(sf["time_s"] >= t["start"]) & (sf["time_s"] <= t["end"])]
    return w.groupby(["seed", "flow_name"], as_index=False)[["cwnd"]].mean()


def analyse(ctx: Context) -> None:
    pf = _per_flow(ctx, "s12")
    _verdicts(ctx, pf, _per_flow(ctx, "s3"), _per_flow(ctx, "s4"))
    _summary_table(ctx, pf, "s12")
    _fig3_throughput(ctx, pf)
    _fig2_cwnd(ctx)
    _fraction_figure(ctx, pf)
    _scenario3(ctx)
    _scenario4(ctx)
    _in_policy(ctx)
    _window_estimates(ctx)


def _per_seed(pf: pd.DataFrame, what: str) -> pd.Series:
    """Per seed: the worst flow's throughput/r_i (``worst``) or the largest-contract group's
    mean throughput/r_i (``largest``)."""
    if what == "worst":
        return pf.groupby("seed")["ratio"].min()
    largest: pd.Series[bool] = pf["contract_bps"] == pf["contract_bps"].max()
    return pf[largest].groupby("seed")["ratio"].mean()


def _verdicts(ctx: Context, s12: pd.DataFrame, s3: pd.DataFrame, s4: pd.DataFrame) -> None:
    """One verdict per claim, reading of Eq. 3 (or flavour of the baseline) and flow set."""
    reach = Claim(
        "Over-provisioning has ensured that all Relative flows achieve the contracted capacity "
        "under TWAM and DWRED",
        "Sec. 5.2, scenario 2 (Fig. 3.II)",
        "greater",
        "every flow ≥ r_i",
        threshold=REACHED,
        unit=" worst flow / r_i",
    )
    fail = Claim(
        "despite of the over-provisioning, the larger r_i flows fail to reach their contracted r_i",
        "Sec. 5.2, scenario 2, TSW2CM + static WRED",
        "less",
        "largest-r_i flows < r_i",
        threshold=1.0,
        unit=" largest group / r_i",
    )
    better = Claim(
        "The limitations of TSW2CM and static WRED are once again apparent here",
        "Sec. 5.2, scenario 2: TWAM + DWRED against TSW2CM + static WRED (same seeds)",
        "greater",
        "TWAM + DWRED bring the least-served flow closer to its contract",
        unit=" worst flow / r_i, TWAM − TSW2CM",
    )
    fail3 = Claim(
        "When TSW2CM and static WRED are used Flows No 8, 9 and 10 fail to obtain their contracted rate",
        "Sec. 5.3, scenario 3 (Fig. 4)",
        "less",
        "largest-r_i flows < r_i",
        threshold=1.0,
        unit=" largest group / r_i",
    )
    fair3 = Claim(
        "Use of TWAM and DWRED ensures that the differentiation between TCP flows is preserved in a fair way",
        "Sec. 5.3, scenario 3 (Fig. 4)",
        "greater",
        "every flow ≥ r_i",
        threshold=REACHED,
        unit=" worst flow / r_i",
    )
    ef4 = Claim(
        "TCP flows succeed in obtaining and preserving a throughput proportional to their reserved capacity",
        "Sec. 5.3, scenario 4 (Fig. 5.I)",
        "greater",
        "every flow ≥ r_i",
        threshold=REACHED,
        unit=" worst flow / r_i",
    )

    def sel(pf: pd.DataFrame, scen: int, arm: str, fs: str) -> pd.DataFrame:
        return pf[(pf["scen"] == scen) & (pf["arm"] == arm) & (pf["flowset"] == fs)]

    for claim, pf, scen, arms, what in (
        (reach, s12, 2, EQ3_READINGS, "worst"),
        (fail, s12, 2, BASELINE_READINGS, "largest"),
        (fail3, s3, 3, BASELINE_READINGS, "largest"),
        (fair3, s3, 3, EQ3_READINGS, "worst"),
        (ef4, s4, 4, EQ3_READINGS, "worst"),
    ):
        support = EQ3_SUPPORT if arms is EQ3_READINGS else BASELINE_SUPPORT
        for fs in sorted(pf[pf["scen"] == scen]["flowset"].unique()):
            for arm, reading in arms.items():
                est = estimate(_per_seed(sel(pf, scen, arm, fs), what))
                ctx.verdict(
                    claim.one_sample(f"{reading}, flow set {fs}", est, supported=support[arm] + _set_note(fs))
                )
    for fs in sorted(s12["flowset"].unique()):
        base = _per_seed(sel(s12, 2, "tsw-wred", fs), "worst")
        for arm, reading in EQ3_READINGS.items():
            test = paired(_per_seed(sel(s12, 2, arm, fs), "worst"), base)
            ctx.verdict(
                better.paired(f"{reading}, flow set {fs}", test, supported=EQ3_SUPPORT[arm] + _set_note(fs))
            )


def _set_note(fs: str) -> str:
    return "; flow set C is the one the text implies" if fs == "C" else "; flow sets A and B are ours"


def _window_estimates(ctx: Context) -> None:
    """Edge estimate against true cwnd: one run of scenario 2 (flow set A, first seed) per window
    source, re-simulated here because the stored series do not keep the marker's gauges."""
    seed = int(ctx.runs("s12")["seed"].min())
    rows = []
    row = []
    for arm in ("twam-dwred", "twam-oracle-dwred"):
        r = ctx.run(lsp_scenario(2, arm, "A", quick=ctx.options.quick, interval="500ms"), seed)
        g = r.series_gauges
        g = g[g["name"] == "aggregate_window_pkts"]
        sf = r.series_flow
        true = sf.groupby("time_s")["cwnd"].sum()
        lines = [
            Line(
                list(true.index),
                list(true.to_numpy()),
                "Σ true cwnd (senders)",
                style={"marker": "", "lw": 1.2},
            ),
            Line(
                list(g["time_s"]),
                list(g["value"]),
                "Σ W_k signalled to DWRED (sampled)",
                style={"marker": "", "lw": 1.0},
            ),
        ]
        row.append(Panel(lines, title=ARMS[arm], xlabel="time (s)", ylabel="packets"))
        t = timing(2, ctx.options.quick)
        w = g[(g["time_s"] >= t["start"])]["value"].mean()
        c = true[true.index >= t["start"]].mean()
        rows.append(
            {
                "arm": arm,
                "signalled_sum_w": w,
                "true_sum_cwnd": c,
                "ratio": w / c,
                "seed": seed,
                "version": ctx.version,
            }
        )
    fig = panels(row, title=f"Edge window estimate vs true cwnd (scenario 2, flow set A, seed {seed})")
    ctx.figure(
        "window-estimates",
        fig,
        title="TWAM window sources: edge estimate vs true cwnd",
        sweeps=["s12"],
        caption="The edge estimate counts data packets per RTT_LSP (64 ms propagation); "
        "the true RTT includes queueing, so it sees cwnd·RTT_LSP/RTT.",
    )
    ctx.table(
        "window-estimates",
        pd.DataFrame(rows),
        title="Signalled Σ W_k against Σ true cwnd",
        caption="Means over the measurement window (one seed).",
    )


def _in_policy(ctx: Context) -> None:
    pf = pd.concat(
        [_per_flow(ctx, "inpolicy"), _per_flow(ctx, "s12").assign(in_policy="x2")], ignore_index=True
    )
    pf = pf[(pf["scen"] == 2) & pf["arm"].isin([*BASELINE_ARMS, "twam-dwred"])]
    df = _summary_rows(pf, ["in_policy", "flowset", "arm"])
    df["version"] = ctx.version
    ctx.table(
        "in-policy-s2",
        df,
        title="Scenario 2 under the three IN-drop policies",
        columns={
            "in_policy": "IN policy",
            "flowset": "flow set",
            "arm_label": "marker + AQM",
            "fraction_ci": f"fraction ≥ {REACHED:.0%} of r_i",
            "worst_ci": "worst / r_i",
            "smallest_ci": "smallest group / r_i",
            "largest_ci": "largest group / r_i",
        },
        caption="x2 (primary): IN thresholds twice the OUT ones; x1: one curve for IN and OUT (colour-blind "
        f"core); tail: IN dropped only at buffer overflow. {ctx.provenance(['inpolicy', 's12'])}.",
    )


def _summary_rows(pf: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    rows = []
    for k, g in pf.groupby(keys, sort=False):
        per_seed = g.groupby("seed").agg(
            frac=("ratio", lambda r: float(np.mean(r >= REACHED))), worst=("ratio", "min")
        )
        big = g[g["contract_bps"] == g["contract_bps"].max()].groupby("seed")["ratio"].mean()
        small = g[g["contract_bps"] == g["contract_bps"].min()].groupby("seed")["ratio"].mean()
        e_f, e_w, e_b, e_s = (
            estimate(per_seed["frac"]),
            estimate(per_seed["worst"]),
            estimate(big),
            estimate(small),
        )
        row = dict(zip(keys, k if isinstance(k, tuple) else (k,), strict=True))
        row.update(
            {
                "arm_label": ARMS[str(row["arm"])],
                "fraction_reached": e_f.mean,
                "fraction_ci": e_f.fmt(3),
                "worst_ratio": e_w.mean,
                "worst_ci": e_w.fmt(3),
                "largest_ratio": e_b.mean,
                "largest_ci": e_b.fmt(3),
                "smallest_ratio": e_s.mean,
                "smallest_ci": e_s.fmt(3),
                "n": e_f.n,
            }
        )
        rows.append(row)
    return pd.DataFrame(rows)


def _summary_table(ctx: Context, pf: pd.DataFrame, sweep: str) -> None:
    df = _summary_rows(pf, ["scen", "flowset", "arm"])
    df["version"] = ctx.version
    ctx.table(
        "contracts-s12",
        df,
        title="Scenarios 1-2: flows reaching their contract",
        columns={
            "scen": "scenario",
            "flowset": "flow set",
            "arm_label": "marker + AQM",
            "fraction_ci": f"fraction of flows ≥ {REACHED:.0%} of r_i",
            "worst_ci": "worst throughput / r_i",
            "smallest_ci": "smallest-r_i group: throughput / r_i",
            "largest_ci": "largest-r_i group: throughput / r_i",
        },
        caption=f"Mean ± 95 % CI over seeds (per-seed values: the fraction of flows, the worst flow, the "
        f"group mean). {ctx.provenance([sweep])}. Paper, scenario 2: every TWAM+DWRED flow reaches r_i; "
        "the larger-r_i flows miss it under TSW2CM + static WRED.",
    )


#: The contracted rate (or theoretical window) as a black tick over each flow's bars.
_TICK = {"ls": "none", "marker": "_", "color": "k", "markersize": 18, "mew": 2}


def _throughput_bars(pf: pd.DataFrame, names: list[str]) -> list[Line]:
    """One bar per arm and flow of ``names``: mean throughput (Mbps) over seeds with its CI."""
    series = []
    for arm, label in ARMS.items():
        g = pf[pf["arm"] == arm]
        es = [estimate(g[g["flow_name"] == nm]["throughput_bps"] / 1e6) for nm in names]
        series.append((label, [e.mean for e in es], [e.half_width for e in es]))
    return bar_group(series, len(names))


def _fig3_throughput(ctx: Context, pf: pd.DataFrame) -> None:
    for fs in FLOW_SETS:
        row = []
        names = list(contracts(fs))
        for scen in (1, 2):
            lines = _throughput_bars(pf[(pf["flowset"] == fs) & (pf["scen"] == scen)], names)
            lines.append(
                Line(
                    list(range(len(names))),
                    [contracts(fs)[nm] / 1e6 for nm in names],
                    "contracted rate r_i",
                    style=_TICK,
                )
            )
            row.append(
                Panel(
                    lines,
                    title=f"scenario {scen} ({capacity_mbps(scen)} Mbps)",
                    xlabel="flow",
                    ylabel="throughput (Mbps)",
                    categories=names,
                )
            )
        fig = panels(
            row,
            title=f"Fig. 3: per-flow throughput against the contract, flow set {fs}",
            panel_size=(5.5, 3.6),
        )
        ctx.figure(
            f"fig3-throughput-{fs}",
            fig,
            title=f"Fig. 3: throughput vs contracted rate (flow set {fs})",
            sweeps=["s12"],
            caption="Mean over seeds with 95 % CIs; black bars: the contracted rate r_i.",
        )


def _fig2_cwnd(ctx: Context) -> None:
    rows = []
    for scen in (1, 2):
        for arm in ARMS:
            w = {"scen": scen, "arm": arm, "flowset": "A"}
            ac = _avg_cwnd(ctx, "s12", w)
            for nm, g in ac.groupby("flow_name"):
                e = estimate(g["cwnd"])
                rows.append(
                    {"scen": scen, "arm": arm, "flow": nm, "mean": e.mean, "half_width": e.half_width}
                )
    df = pd.DataFrame(rows)
    names = list(contracts("A"))
    row = []
    for scen in (1, 2):
        series = []
        for arm in ARMS:
            g = df[(df["scen"] == scen) & (df["arm"] == arm)].set_index("flow").reindex(names)
            series.append((ARMS[arm], list(g["mean"]), list(g["half_width"])))
        lines = bar_group(series, len(names))
        th = theoretical_window("A", scen)
        lines.append(
            Line(
                list(range(len(names))), [th[nm] for nm in names], "theoretical: C·r_i/Σr · RTT", style=_TICK
            )
        )
        row.append(
            Panel(
                lines,
                title=f"scenario {scen} ({capacity_mbps(scen)} Mbps)",
                xlabel="flow",
                ylabel="average cwnd (packets)",
                categories=names,
            )
        )
    fig = panels(
        row,
        title="Figs. 2-3.I: average congestion window against the theoretical window (flow set A)",
        panel_size=(5.5, 3.6),
    )
    ctx.figure(
        "fig2-cwnd-A",
        fig,
        title="Figs. 2/3.I: average cwnd vs theoretical window",
        sweeps=["s12"],
        caption=f"cwnd sampled every second over the measurement window; mean over seeds with 95 % CIs. "
        f"Theoretical window: the flow's proportional share of the AF capacity times the propagation RTT "
        f"({RTT_MS} ms) in {PACKET}-byte packets (queueing delay not included).",
    )
    df["version"] = ctx.version
    ctx.table(
        "cwnd-A", df, title="Average cwnd per flow (flow set A)", caption="Packets; mean and CI half-width."
    )


def _fraction_figure(ctx: Context, pf: pd.DataFrame) -> None:
    df = _summary_rows(pf, ["scen", "flowset", "arm"])
    labels = [f"s{r.scen} / set {r.flowset}" for r in df.drop_duplicates(["scen", "flowset"]).itertuples()]
    series = [(ARMS[arm], list(df[df["arm"] == arm]["fraction_reached"]), None) for arm in ARMS]
    panel = Panel(
        bar_group(series, len(labels)),
        ylabel=f"fraction of flows ≥ {REACHED:.0%} of r_i",
        ylim=(0, 1.05),
        categories=labels,
    )
    fig = panels([panel], title="Flows reaching their contracted rate", panel_size=(8, 3.6))
    ctx.figure(
        "fraction-reached",
        fig,
        title="Fraction of flows reaching their contract",
        sweeps=["s12"],
        caption="Mean over seeds of the per-run fraction of flows with throughput ≥ 95 % of r_i.",
    )


def _scenario3(ctx: Context) -> None:
    pf = _per_flow(ctx, "s3")
    df = _summary_rows(pf, ["scen", "flowset", "arm"])
    df["version"] = ctx.version
    t = timing(3, ctx.options.quick)
    ctx.table(
        "contracts-s3",
        df,
        title="Scenario 3: flows reaching their contract after late starts",
        columns={
            "arm_label": "marker + AQM",
            "fraction_ci": f"fraction ≥ {REACHED:.0%} of r_i",
            "worst_ci": "worst / r_i",
            "smallest_ci": "smallest group / r_i",
            "largest_ci": "largest group / r_i",
        },
        caption=f"Measured over {t['start']:g}-{t['end']:g} s; the first flow of each contract group "
        f"starts at {t['late']:g} s. {ctx.provenance(['s3'])}.",
    )
    grid = []
    for fs in sorted(pf["flowset"].unique()):
        names = list(contracts(fs))
        rates = FLOW_SETS[fs]
        late = {f"f{rates.index(r)}" for r in set(rates)}
        lines = _throughput_bars(pf[pf["flowset"] == fs], names)
        lines.append(
            Line(list(range(len(names))), [contracts(fs)[nm] / 1e6 for nm in names], "r_i", style=_TICK)
        )
        grid.append(
            [
                Panel(
                    lines,
                    title=f"flow set {fs}",
                    xlabel="flow (* = starts late)",
                    ylabel="throughput (Mbps)",
                    categories=[f"{nm}{'*' if nm in late else ''}" for nm in names],
                )
            ]
        )
    fig = panels(
        grid,
        title=f"Fig. 4: scenario 3, average throughput over {t['start']:g}-{t['end']:g} s",
        panel_size=(9, 3.4),
    )
    ctx.figure(
        "fig4-scenario3",
        fig,
        title="Fig. 4: scenario 3 throughput",
        sweeps=["s3"],
        caption="Mean over seeds with 95 % CIs.",
    )


def _scenario4(ctx: Context) -> None:
    pf = _per_flow(ctx, "s4")
    df = _summary_rows(pf, ["scen", "flowset", "arm"])
    df["version"] = ctx.version
    ctx.table(
        "contracts-s4",
        df,
        title="Scenario 4: flows reaching their contract under EF bursts",
        columns={
            "arm_label": "marker + AQM",
            "fraction_ci": f"fraction ≥ {REACHED:.0%} of r_i",
            "worst_ci": "worst / r_i",
            "smallest_ci": "smallest group / r_i",
            "largest_ci": "largest group / r_i",
        },
        caption=f"Throughput over the whole measurement window (EF on half of the time). "
        f"{ctx.provenance(['s4'])}.",
    )
    seed = int(ctx.runs("s4")["seed"].min())
    grid = []
    for arm in ARMS:
        sf = ctx.series("s4", "flow", {"arm": arm, "flowset": "A"})
        sf = sf[sf["seed"] == seed]
        ef = sf[sf["flow_name"].str.startswith("ef")].groupby("time_s")["throughput_bps"].sum() / 1e6
        lines = [Line(list(ef.index), list(ef.to_numpy()), "EF (delivered)", kind="area")]
        for nm, g in sf[sf["flow_name"].isin(list(contracts("A")))].groupby("flow_name", sort=False):
            label = f"{nm} ({contracts('A')[str(nm)] / 1e6:g})"
            lines.append(
                Line(
                    list(g["time_s"]), list(g["throughput_bps"] / 1e6), label, style={"marker": "", "lw": 0.9}
                )
            )
        grid.append([Panel(lines, title=ARMS[arm], xlabel="time (s)", ylabel="Mbps")])
    fig = panels(
        grid,
        title=f"Fig. 5: instantaneous throughput under EF interference (scenario 4, flow set A, seed {seed})",
        panel_size=(9, 2.4),
        sharex=True,
    )
    ctx.figure(
        "fig5-scenario4",
        fig,
        title="Fig. 5: instantaneous throughput under EF bursts",
        sweeps=["s4"],
        caption="1 s bins at the receivers; grey: EF traffic delivered (bursts of 30 s every 60 s).",
    )


EXPERIMENT = register(
    Experiment(
        name="twam-dwred",
        study="Bouras, TWAM + DWRED",
        title="TWAM + DWRED against TSW2CM + static WRED on a three-hop AF LSP",
        paper=PAPER,
        summary=(
            "Bouras & Sevasti's Relative service: the TCP-Window-Aware Marker at the LSP ingress and "
            "Dynamic WRED in the LSP's AF queues, against per-flow TSW2CM and static WRED (40/160/0.1), "
            "on the three-hop LSP of Section 5: scenario 1 (30 Mbps), 2 (50 Mbps, over-provisioned), 3 "
            "(late starters, measured 400-1000 s) and 4 (EF bursts at R2); two flow sets."
        ),
        plan=plan,
        analyse=analyse,
        seeds=10,
        quick_seeds=2,
        window=Window(
            True,
            "Bouras et al., Fig. 4 (scenario #3): 'the average throughput of all TCP flows measured in "
            "the interval from t1 = 400 to t2 = 1000 seconds for scenario #3', where 'one flow from each "
            "group ... starts "
            "transmitting 200 seconds after the simulation starts'",
        ),
        notes=(
            "- The paper omits its flow set, link delays, buffer, TCP variant, packet size and IN "
            "thresholds; our choices are in `docs/experiments/twam-dwred.md`.\n"
            "- IN packets are not early-dropped in either arm; the paper's single threshold set "
            "applies to OUT packets.\n"
            "- EF is capped at 10 Mbps by its 10 Mbps access link (no rate-limited priority queue)."
        ),
    )
)
