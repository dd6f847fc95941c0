"""``red-baseline``: plain RED on the FDD-RED paper's scenarios (Hashemi, Jamali, Motarez).

What it reproduces (RED columns only; FDD-RED itself is a later issue):

- Table 1: packets dropped by RED in 20 s of scenario 1 (149, i.e. 7.45 packets/s);
- Table 2: per-flow throughput and Jain's index with homogeneous (100 ms) and heterogeneous
  (20-100 ms) RTTs (FI 0.967 and 0.888);
- Fig. 10: drops against the buffer size, 10-200 packets;
- Fig. 11: drops against the number of flows, 5-100;
- Fig. 4 and Fig. 9(a): congestion windows and the bottleneck queue over time (one seed).

Buffers smaller than the paper's max_th = 75 packets: the paper keeps "the same values" of the
RED parameters, which leaves max_th above the buffer. Our primary rule caps the thresholds at
the buffer and keeps their ratio — max_th = min(75, B), min_th = max_th / 3 — so the RED curve
stays reachable and the rule is continuous at B = 75. The figure also shows the two
alternatives (the paper's 25/75 kept as they are; thresholds proportional to the buffer,
B/4 and 3B/4) to show how much the choice matters.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import pandas as pd

from qoslab.report.figures import Line, Panel, Ref, Style, panels, sweep_line
from qoslab.report.frames import typed_rows
from qoslab.reproduction.base import Experiment, Options, Sweep, Window, register, scenario
from qoslab.reproduction.runner import Context, select
from qoslab.reproduction.topologies import dumbbell, red_queue
from qoslab.runs.simulate import jain_index
from qoslab.runs.sweep import grid
from qoslab.scenario import to_ns2_resolved
from qoslab.stats import SummaryRow, estimate, seed_ranges
from qoslab.studies.red_baseline.paper import (
    BUFFERS,
    BUFFERS_QUICK,
    FLOWS,
    FLOWS_QUICK,
    HETERO_RTT_MS,
    MAX_P,
    MAX_TH,
    MIN_TH,
    PAPER,
    REFERENCES,
    RULES,
    SETUPS,
    SHORT,
    TABLE2_HETERO,
    TABLE2_HOMO,
    W_Q,
)

if TYPE_CHECKING:
    from qoslab.scenario import Scenario


def red_thresholds(buffer: int, rule: str) -> tuple[float, float]:
    """(min_th, max_th) for a bottleneck buffer of ``buffer`` packets under ``rule``."""
    if rule == "paper":
        return float(MIN_TH), float(MAX_TH)
    if rule == "capped":
        mx = float(min(MAX_TH, buffer))
        return mx * MIN_TH / MAX_TH, mx
    if rule == "proportional":
        return buffer / 4.0, 3.0 * buffer / 4.0
    raise ValueError(f"unknown threshold rule {rule!r} (expected one of {', '.join(RULES)})")


def _table2_point(p: dict[str, Any]) -> Scenario:
    name = "fdd-red-s1" if p["rtt"] == "homogeneous" else "fdd-red-s3"
    extra = {"file": [], "20s": SHORT, "newreno": ["tcp.variant=newreno"]}[p["setup"]]
    return scenario(name, extra)


def _fig10_point(p: dict[str, Any]) -> Scenario:
    lo, hi = red_thresholds(p["buffer"], p["thresholds"])
    return scenario(
        "fdd-red-s1",
        [
            *SHORT,
            f"link.bottleneck.queue_ab.limit={p['buffer']}pkts",
            f"link.bottleneck.queue_ab.min_th={lo!r}",
            f"link.bottleneck.queue_ab.max_th={hi!r}",
        ],
    )


def _fig11_point(p: dict[str, Any]) -> Scenario:
    n = p["flows"]
    return dumbbell(
        n,
        name=f"fdd-red-s2-n{n}",
        description=f"{n} TCP Reno flows, RTT 100 ms, 1 Mbps RED bottleneck, 100-packet buffer, 20 s",
        duration="20s",
        bottleneck_queue=red_queue(100, MIN_TH, MAX_TH, MAX_P, W_Q),
    )


def plan(opts: Options) -> list[Sweep]:
    seeds = opts.seeds
    t2 = grid({"rtt": ["homogeneous", "heterogeneous"], "setup": list(SETUPS)})
    f10 = grid({"thresholds": list(RULES), "buffer": list(BUFFERS_QUICK if opts.quick else BUFFERS)})
    f11 = grid({"flows": list(FLOWS_QUICK if opts.quick else FLOWS)})
    ts = {"timeseries": "scenario 1, 20 s"}
    return [
        Sweep(
            "table2",
            [(p, _table2_point(p)) for p in t2],
            seeds,
            "Scenario 1 (five flows, RTT 100 ms) and scenario 3 (RTTs 20-100 ms) with plain RED, as "
            "the scenario files define them (100 s, throughput measured over 20-100 s), and two "
            "sensitivity variants: a 20 s run measured over its whole length, and TCP NewReno.",
        ),
        Sweep(
            "fig10",
            [(p, _fig10_point(p)) for p in f10],
            seeds,
            "Scenario 1 for 20 s with the bottleneck RED buffer B = "
            f"{', '.join(str(b) for b in (BUFFERS_QUICK if opts.quick else BUFFERS))} packets "
            "(`link.bottleneck.queue_ab.limit`) under three rules for the thresholds when B < 75.",
        ),
        Sweep(
            "fig11",
            [(p, _fig11_point(p)) for p in f11],
            seeds,
            "An N-flow dumbbell (built with `count` groups; N = 5 is scenario 1) for 20 s, RTT "
            "100 ms, 1 Mbps RED bottleneck with a 100-packet buffer and 25/75/0.01/0.002.",
        ),
        Sweep(
            "timeseries",
            [(ts, scenario("fdd-red-s1", [*SHORT, "measurement.interval=50ms"]))],
            seeds[:1],
            "Scenario 1 for 20 s sampled every 50 ms, first seed only, for the time-series figures.",
        ),
    ]


def _fmt(x: float, digits: int = 4) -> str:
    return f"{x:.{digits}g}"


def analyse(ctx: Context) -> None:
    _table1(ctx)
    _table2(ctx)
    _sensitivity(ctx)
    _ns2_crosscheck(ctx)
    _fig10(ctx)
    _fig11(ctx)
    _timeseries(ctx)


def _table1(ctx: Context) -> None:
    where = {"buffer": 100, "thresholds": "paper"}
    rows = []
    for metric, label, pub in (
        ("drops_bottleneck", "total dropped (packets)", 149.0),
        ("drop_rate_bottleneck_pps", "avg. dropping rate (packets/s)", 7.45),
        ("drops_bottleneck_early", "… of which early (RED curve)", None),
        ("drops_bottleneck_forced", "… of which forced (avg > max_th)", None),
        ("drops_bottleneck_overflow", "… of which buffer overflow", None),
    ):
        e = ctx.estimate("fig10", metric, where)
        rows.append(
            {
                "quantity": label,
                "metric": metric,
                "published": pub,
                "mean": e.mean,
                "ci_low": e.ci_low,
                "ci_high": e.ci_high,
                "ours": e.fmt(4),
                "inside_ci": e.contains(pub) if pub is not None else None,
                "seed_min": e.minimum,
                "seed_max": e.maximum,
                "n": e.n,
            }
        )
    df = pd.DataFrame(rows)
    prov = ctx.provenance(["fig10"])
    df["scenario"] = "fdd-red-s1 (20 s, B = 100)"
    df["seeds"] = prov.split("seeds ")[-1]
    df["version"] = ctx.version
    ctx.table(
        "table1-drops",
        df,
        title="Table 1: packets dropped by RED in 20 s (scenario 1)",
        columns={
            "quantity": "quantity",
            "published": "paper (RED)",
            "ours": "ours (mean ± 95 % CI)",
            "inside_ci": "paper in CI",
            "seed_min": "seed min",
            "seed_max": "seed max",
        },
        caption=f"Drops at the bottleneck over the whole 20 s run, slow start included. {prov}.",
    )


def _table2(ctx: Context) -> None:
    rows = []
    fl = ctx.flows("table2")
    fl = fl[fl["setup"] == "file"]
    for rtt, paper in (("homogeneous", TABLE2_HOMO), ("heterogeneous", TABLE2_HETERO)):
        for i, pub in enumerate(paper):
            v = select(fl, {"rtt": rtt, "flow_name": f"ftp{i}"})["throughput_bps"]
            rtt_ms = 100 if rtt == "homogeneous" else HETERO_RTT_MS[i]
            rows.append(_t2row(rtt, f"Flow{i} (RTT {rtt_ms} ms)", float(pub), estimate(v), 1e3, "kbps"))
        agg = 977480.0 if rtt == "homogeneous" else 994328.0
        fi = 0.967 if rtt == "homogeneous" else 0.888
        for setup, when in (("file", ""), ("20s", ", 20 s run")):
            w = {"rtt": rtt, "setup": setup}
            e = ctx.estimate("table2", "aggregate_throughput_bps", w)
            rows.append(_t2row(rtt, f"aggregated throughput{when}", agg, e, 1e3, "kbps"))
            e = ctx.estimate("table2", "fairness_index", w)
            rows.append(_t2row(rtt, f"Jain's fairness index{when}", fi, e, 1.0, ""))
    df = pd.DataFrame(rows)
    prov = ctx.provenance(["table2"])
    df["seeds"] = prov.split("seeds ")[-1]
    df["version"] = ctx.version
    ctx.table(
        "table2-fairness",
        df,
        title="Table 2: per-flow throughput and Jain's index with RED",
        columns={
            "rtt": "RTTs",
            "quantity": "quantity",
            "paper": "paper (RED)",
            "ours": "ours (mean ± 95 % CI)",
            "inside_ci": "paper in CI",
            "range": "seed range",
        },
        caption=(
            "Throughput in kbps over 20-100 s of a 100 s run (scenario files `fdd-red-s1.toml`, "
            "`fdd-red-s3.toml`); the rows marked '20 s run' measure a 20 s run over its whole length "
            "(slow start included). With homogeneous RTTs the five flows are statistically identical, "
            f"so the paper's per-flow numbers are one draw of which flow got more. {prov}."
        ),
    )
    # the figure: per-flow throughput, ours (mean ± CI) against the paper's single run, in the
    # scenario files' 100 s run (measured over 20-100 s) and in a 20 s run measured whole, the
    # length the paper's runs had
    rows_of: dict[str, list[dict[str, Any]]] = {"file": [], "20s": []}
    for setup in rows_of:
        fs = ctx.flows("table2")
        fs = fs[fs["setup"] == setup]
        for rtt, paper in (("homogeneous", TABLE2_HOMO), ("heterogeneous", TABLE2_HETERO)):
            for i, pub in enumerate(paper):
                v = select(fs, {"rtt": rtt, "flow_name": f"ftp{i}"})["throughput_bps"]
                rtt_ms = 100 if rtt == "homogeneous" else HETERO_RTT_MS[i]
                rows_of[setup].append(
                    _t2row(rtt, f"Flow{i} (RTT {rtt_ms} ms)", float(pub), estimate(v), 1e3, "kbps")
                )
    grid = []
    for setup, when, jain_of in (
        ("file", "20-100 s of a 100 s run", "Jain's fairness index"),
        ("20s", "a 20 s run, as the paper's", "Jain's fairness index, 20 s run"),
    ):
        grid.append(_table2_panels(df, pd.DataFrame(rows_of[setup]), when, jain_of))
    fig = panels(
        grid,
        title="Table 2: per-flow throughput with plain RED, 1 Mbps bottleneck",
        panel_size=(5.2, 3.3),
    )
    ctx.figure(
        "table2-throughput",
        fig,
        title="Table 2: per-flow throughput with plain RED",
        sweeps=["table2"],
        caption=(
            "Bars: our mean over seeds with 95 % CIs; diamonds: the paper's single run. Top: the "
            "scenario files' 100 s runs measured over 20-100 s; bottom: 20 s runs measured over "
            "their whole length, as long as the paper's runs."
        ),
    )


def _table2_panels(df: pd.DataFrame, flows: pd.DataFrame, when: str, jain_of: str) -> list[Panel]:
    """One row of the Table 2 figure: a panel per RTT set, ours against the paper's flows."""
    row = []
    for rtt, paper in (("homogeneous", TABLE2_HOMO), ("heterogeneous", TABLE2_HETERO)):
        sub = flows[flows["rtt"] == rtt]
        x = list(range(len(sub)))
        yerr = list(((sub["ci_high"] - sub["ci_low"]) / 2).fillna(0).to_numpy())
        ours = Line(
            x,
            list(sub["mean"]),
            "qoslab RED (mean ± 95 % CI)",
            err=yerr,
            style={"color": "tab:blue", "alpha": 0.75},
            kind="bar",
        )
        paper_line = Line(
            x,
            [p / 1e3 for p in paper],
            "paper, Table 2 (RED)",
            style={"ls": "none", "marker": "D", "color": "tab:red"},
        )
        labels = [q.split(" (")[0] + "\n" + q.split("(")[1].rstrip(")") for q in sub["quantity"]]
        jain = df[(df["rtt"] == rtt) & (df["quantity"] == jain_of)].iloc[0]
        row.append(
            Panel(
                [ours, paper_line],
                title=f"{rtt} RTTs, {when}\nJain {jain['mean']:.3f} (paper {jain['paper']:g})",
                xlabel="flow",
                ylabel="throughput (kbps)",
                refs=[Ref(200, "fair share (200 kbps)")],
                categories=labels,
            )
        )
    return row


def _t2row(rtt: str, quantity: str, pub: float, e: Any, scale: float, unit: str) -> dict[str, Any]:
    return {
        "rtt": rtt,
        "quantity": quantity,
        "unit": unit,
        "paper": pub / scale,
        "mean": e.mean / scale,
        "ci_low": e.ci_low / scale,
        "ci_high": e.ci_high / scale,
        "ours": e.fmt(4, scale),
        "inside_ci": e.contains(pub),
        "range": f"{_fmt(e.minimum / scale)}-{_fmt(e.maximum / scale)}",
        "in_range": e.in_range(pub),
        "n": e.n,
    }


def mean_ci_cells(ctx: Context, g: pd.DataFrame) -> dict[str, Any]:
    """The cells of one point's row of a summary table: "mean ± 95 % CI half-width" of each
    metric in ``g`` (summary rows; the aggregate throughput in kbps), its seeds and the version."""
    row: dict[str, Any] = {}
    for r in typed_rows(g, SummaryRow):
        scale = 1e3 if r.metric == "aggregate_throughput_bps" else 1.0
        row[r.metric] = f"{_fmt(r.mean / scale)} ± {_fmt(r.half_width / scale, 2)}"
    row["seeds"] = g["seeds"].iloc[0]
    row["version"] = ctx.version
    return row


def _sensitivity(ctx: Context) -> None:
    st = ctx.stats("table2", ["fairness_index", "aggregate_throughput_bps", "drop_rate_bottleneck_pps"])
    wide = []
    for key, g in st.groupby(["rtt", "setup"], sort=False):
        rtt, setup = cast("tuple[str, str]", key)
        row: dict[str, Any] = {
            "rtt": rtt,
            "setup": SETUPS[setup],
            "scenario": g["scenario"].iloc[0],
            "scenario_sha256": g["scenario_sha256"].iloc[0],
        }
        wide.append(row | mean_ci_cells(ctx, g))
    ctx.table(
        "table2-sensitivity",
        pd.DataFrame(wide),
        title="Sensitivity of Table 2 to the run length and the TCP variant",
        columns={
            "rtt": "RTTs",
            "setup": "setup",
            "fairness_index": "Jain index",
            "aggregate_throughput_bps": "aggregate (kbps)",
            "drop_rate_bottleneck_pps": "drops/s",
        },
        caption="Mean ± 95 % CI half-width over seeds. The paper does not give its run length or "
        "measurement window, nor its TCP variant; these rows show how much they move the index.",
    )


def _ns2_run(sc: Any, seed: int) -> dict[str, float]:
    from qoslab import ns2

    o = ns2.run_ns2(to_ns2_resolved(sc.resolved, seed), seed, timeout=600)
    b = next(lk for lk in o["links"] if lk["name"] == "bottleneck" and lk["direction"] == "ab")
    thr = [f["throughput_bps"] for f in o["flows"]]
    return {"drops_bottleneck": float(b["drops"]), "fairness_index": jain_index(thr),
            "aggregate_throughput_bps": float(sum(thr))}  # fmt: skip


def _ns2_crosscheck(ctx: Context) -> None:
    """The Table 1 and Table 2 cases in ns-2.35 with the same scenarios and seeds (when ``ns`` is
    installed): whether a difference from the paper is qoslab's or the scenario's."""
    import os
    from concurrent.futures import ThreadPoolExecutor

    from qoslab import ns2

    title = "Cross-check: the same scenarios in ns-2.35"
    if ns2.ns2_available() is None:
        ctx.text(title, "ns-2 (`ns`) is not installed: skipped (`make ns2` installs it).")
        return
    cases = [("Table 1: scenario 1, 20 s, drops", "fig10", {"buffer": 100, "thresholds": "paper"},
              "drops_bottleneck", 149.0)]  # fmt: skip
    for setup, when in (("file", "80 s steady state"), ("20s", "20 s run")):
        for rtt, fi in (("homogeneous", 0.967), ("heterogeneous", 0.888)):
            cases.append((f"Table 2: {rtt}, {when}, Jain", "table2", {"rtt": rtt, "setup": setup},
                          "fairness_index", fi))  # fmt: skip
    jobs = []
    for label, sweep, where, metric, pub in cases:
        sc = next(sc for p, sc in ctx.sweeps[sweep].points if all(p.get(k) == v for k, v in where.items()))
        seeds = sorted(int(x) for x in ctx.values(sweep, metric, where)["seed"])
        jobs.append((label, sweep, where, metric, pub, sc, seeds))
    try:
        with ThreadPoolExecutor(os.cpu_count() or 1) as pool:
            futures = {
                (label, seed): pool.submit(_ns2_run, sc, seed)
                for label, _, _, _, _, sc, seeds in jobs
                for seed in seeds
            }
            ns_out = {k: f.result() for k, f in futures.items()}
    except (ValueError, OSError, ns2.Ns2Error) as e:
        ctx.text(title, f"ns-2 could not run these scenarios: {e}")
        return
    rows = []
    for label, sweep, where, metric, pub, sc, seeds in jobs:
        ours = ctx.estimate(sweep, metric, where)
        theirs = estimate([ns_out[(label, s)][metric] for s in seeds])
        rows.append(
            {
                "case": label,
                "paper": pub,
                "qoslab": ours.fmt(4),
                "qoslab_range": f"{_fmt(ours.minimum)}-{_fmt(ours.maximum)}",
                "ns2": theirs.fmt(4),
                "ns2_range": f"{_fmt(theirs.minimum)}-{_fmt(theirs.maximum)}",
                "qoslab_mean": ours.mean,
                "ns2_mean": theirs.mean,
                "ns2_ci_low": theirs.ci_low,
                "ns2_ci_high": theirs.ci_high,
                "paper_in_ns2_range": theirs.in_range(pub),
                "scenario": sc.name,
                "scenario_sha256": sc.sha256(),
                "seeds": seed_ranges(seeds),
                "version": ctx.version,
                "simulator": "ns-2.35 (" + str(ns2.ns2_available()) + ")",
            }
        )
    ctx.table(
        "ns2-crosscheck",
        pd.DataFrame(rows),
        title=title,
        columns={
            "case": "case",
            "paper": "paper (RED)",
            "qoslab": "qoslab (mean ± 95 % CI)",
            "qoslab_range": "qoslab seeds",
            "ns2": "ns-2 (mean ± 95 % CI)",
            "ns2_range": "ns-2 seeds",
            "paper_in_ns2_range": "paper in ns-2 range",
        },  # fmt: skip
        caption="ns-2 runs the same scenario exported by `qoslab.ns2` with the same seeds (its random start "
        "times are drawn from the same distribution, not equal to ours). Where ns-2 and qoslab agree and "
        "both miss the paper, the difference lies in the paper's unstated setup, not in qoslab.",
    )


def _fig10(ctx: Context) -> None:
    metrics = [
        "drops_bottleneck",
        "drops_bottleneck_early",
        "drops_bottleneck_forced",
        "drops_bottleneck_overflow",
    ]
    st = ctx.stats("fig10", metrics)
    d = st[st["metric"] == "drops_bottleneck"]
    styles: dict[str, Style] = {
        "paper": dict(color="tab:orange", ls="--", lw=1.2, marker="s", markersize=6, zorder=2),
        "proportional": dict(color="tab:green", ls=":", lw=1.5, zorder=2),
        "capped": dict(color="tab:blue", lw=2.2, zorder=3),
    }
    lines = [
        sweep_line(d[d["thresholds"] == rule], "buffer", label=f"RED, {RULES[rule]}", **styles[rule])
        for rule in RULES
    ]
    star = {"ls": "none", "marker": "*", "color": "tab:red", "markersize": 14, "zorder": 4}
    lines.append(Line([100], [149], "paper, Table 1 (B = 100): 149", style=star))
    panel = Panel(
        lines, xlabel="bottleneck buffer size B (packets)", ylabel="packets dropped in 20 s", ylim=(0, None)
    )
    fig = panels(
        [panel],
        title="Fig. 10: dropped packets vs buffer size, plain RED (5 flows, RTT 100 ms, 20 s)",
        panel_size=(7.5, 4.4),
    )
    ctx.figure(
        "fig10-drops-vs-buffer",
        fig,
        title="Fig. 10: dropped packets vs buffer size (RED)",
        sweeps=["fig10"],
        caption="Mean over seeds with 95 % CIs. The paper gives Fig. 10 only as a plot (no numbers); "
        "its Table 1 point (B = 100) is marked.",
    )
    wide = st.pivot_table(
        index=["thresholds", "buffer", "seeds", "version", "scenario", "scenario_sha256"],
        columns="metric",
        values=["mean", "half_width"],
    ).reset_index()
    # pandas-stubs types columns as Index[str]; after pivot_table(values=[…]) it is a MultiIndex of pairs
    wide.columns = [a if not b else f"{b}_{a}" for a, b in wide.columns]  # type: ignore[str-unpack]
    wide["min_th"] = [
        red_thresholds(b, r)[0] for b, r in zip(wide["buffer"], wide["thresholds"], strict=True)
    ]
    wide["max_th"] = [
        red_thresholds(b, r)[1] for b, r in zip(wide["buffer"], wide["thresholds"], strict=True)
    ]
    wide = wide.sort_values(
        ["thresholds", "buffer"], key=lambda c: c.map(list(RULES).index) if c.name == "thresholds" else c
    )
    fmt = {
        c: (lambda v: _fmt(v, 4)) for c in wide.columns if c.endswith("_mean") or c.endswith("_half_width")
    }
    ctx.table(
        "fig10-drops-vs-buffer",
        wide,
        title="Fig. 10 data: drops vs buffer size",
        columns={
            "thresholds": "threshold rule",
            "buffer": "B (pkts)",
            "min_th": "min_th",
            "max_th": "max_th",
            "drops_bottleneck_mean": "drops",
            "drops_bottleneck_half_width": "± CI",
            "drops_bottleneck_early_mean": "early",
            "drops_bottleneck_forced_mean": "forced",
            "drops_bottleneck_overflow_mean": "overflow",
        },
        formats=fmt,
        caption="Mean drops at the bottleneck over 20 s: early = on the RED curve, forced = average above "
        "max_th (every arrival is dropped), overflow = buffer full.",
    )


def _fig11(ctx: Context) -> None:
    st = ctx.stats(
        "fig11",
        [
            "drops_bottleneck",
            "drops_bottleneck_early",
            "drops_bottleneck_forced",
            "drops_bottleneck_overflow",
            "fairness_index",
            "utilization",
        ],
    )
    d = st[st["metric"] == "drops_bottleneck"]
    lines = [sweep_line(d, "flows", label="RED, all drops", color="tab:blue", lw=2.2)]
    kinds: list[tuple[str, str, Style]] = [
        ("drops_bottleneck_forced", "… forced (average > max_th)", dict(color="tab:purple", ls="-.")),
        ("drops_bottleneck_overflow", "… buffer overflow", dict(color="tab:orange", ls=":")),
        ("drops_bottleneck_early", "… early (on the RED curve)", dict(color="tab:green", ls="--")),
    ]
    for metric, label, style in kinds:
        lines.append(sweep_line(st[st["metric"] == metric], "flows", label=label, **style))
    panel = Panel(lines, xlabel="number of flows N", ylabel="packets dropped in 20 s", ylim=(0, None))
    fig = panels(
        [panel],
        title="Fig. 11: dropped packets vs number of flows, plain RED (B = 100, RTT 100 ms, 20 s)",
        panel_size=(7.5, 4.4),
    )
    ctx.figure(
        "fig11-drops-vs-flows",
        fig,
        title="Fig. 11: dropped packets vs number of flows (RED)",
        sweeps=["fig11"],
        caption="Mean over seeds with 95 % CIs. The paper gives Fig. 11 only as a plot (no numbers).",
    )
    wide = (
        st.pivot_table(
            index=["flows", "seeds", "version", "scenario", "scenario_sha256"],
            columns="metric",
            values=["mean", "half_width"],
        )
        .reset_index()
        .sort_values("flows")
    )
    # pandas-stubs types columns as Index[str]; after pivot_table(values=[…]) it is a MultiIndex of pairs
    wide.columns = [a if not b else f"{b}_{a}" for a, b in wide.columns]  # type: ignore[str-unpack]
    fmt = {
        c: (lambda v: _fmt(v, 4)) for c in wide.columns if c.endswith("_mean") or c.endswith("_half_width")
    }
    ctx.table(
        "fig11-drops-vs-flows",
        wide,
        title="Fig. 11 data: drops vs number of flows",
        columns={
            "flows": "N",
            "drops_bottleneck_mean": "drops",
            "drops_bottleneck_half_width": "± CI",
            "drops_bottleneck_early_mean": "early",
            "drops_bottleneck_forced_mean": "forced",
            "drops_bottleneck_overflow_mean": "overflow",
            "fairness_index_mean": "Jain index",
            "utilization_mean": "utilisation",
        },
        formats=fmt,
        caption="Mean over seeds at the bottleneck over 20 s.",
    )


def _timeseries(ctx: Context) -> None:
    sf = ctx.series("timeseries", "flow")
    sq = ctx.series("timeseries", "queue")
    seed = int(sf["seed"].iloc[0])
    cw = Panel(
        [
            Line(list(g["time_s"]), list(g["cwnd"]), str(name), style={"marker": "", "lw": 1})
            for name, g in sf.groupby("flow_name")
        ],
        xlabel="time (s)",
        ylabel="congestion window (packets)",
    )
    fig = panels(
        [cw],
        title=f"Fig. 4: congestion windows with plain RED (scenario 1, seed {seed})",
        panel_size=(8, 3.6),
    )
    ctx.figure(
        "fig4-cwnd-red",
        fig,
        title="Fig. 4: congestion windows with RED",
        sweeps=["timeseries"],
        caption="Sampled every 50 ms; the first seconds are slow start.",
    )
    q = sq[sq["queue"] == "bottleneck:ab"]
    t = list(q["time_s"])
    panel = Panel(
        [
            Line(t, list(q["queue_packets"]), "instantaneous queue", style={"marker": "", "lw": 1}),
            Line(t, list(q["avg_queue"]), "RED average (w_q = 0.002)", style={"marker": "", "lw": 1.5}),
        ],
        xlabel="time (s)",
        ylabel="queue length (packets)",
        refs=[Ref(MIN_TH, f"min_th = {MIN_TH}"), Ref(MAX_TH, f"max_th = {MAX_TH}", {"ls": "--"})],
        ylim=(0, 105),
    )
    fig = panels(
        [panel],
        title=f"Fig. 9(a): bottleneck queue with plain RED (scenario 1, seed {seed})",
        panel_size=(8, 3.6),
    )
    ctx.figure(
        "fig9a-queue-red",
        fig,
        title="Fig. 9(a): bottleneck queue with RED",
        sweeps=["timeseries"],
        caption="Sampled every 50 ms; buffer 100 packets.",
    )


EXPERIMENT = register(
    Experiment(
        name="red-baseline",
        title="plain RED on the FDD-RED paper's scenarios",
        paper=PAPER,
        summary=(
            "The RED baseline of the FDD-RED paper: drops in 20 s of scenario 1 (Table 1), fairness "
            "with homogeneous and heterogeneous RTTs (Table 2), drops against the buffer size "
            "(Fig. 10) and the number of flows (Fig. 11), and the time evolution of the congestion "
            "windows and the queue (Fig. 4, Fig. 9(a)). Five TCP Reno flows, 500-byte packets, a "
            "1 Mbps bottleneck, RED min_th 25, max_th 75, max_p 0.01, w_q 0.002."
        ),
        plan=plan,
        analyse=analyse,
        references=REFERENCES,
        seeds=20,
        quick_seeds=3,
        window=Window(
            True,
            "the FDD-RED paper's RED baseline; Hashemi et al., Sec. III: 'Simulation duration varies "
            "depending on the propagation delay but is always as long as 20 seconds'",
        ),
        notes=(
            "- Buffers below max_th = 75 (Fig. 10): the primary rule caps the thresholds at the buffer "
            "and keeps their 1:3 ratio (max_th = min(75, B), min_th = max_th/3); the paper's 25/75 kept "
            "unchanged and thresholds proportional to B are shown alongside. At B >= 75 the capped rule "
            "and the paper's thresholds are the same scenario (one run serves both).\n"
            "- Drops are counted at the bottleneck over the whole run, slow start included; throughput "
            "over the measurement window of the scenario.\n"
            "- The paper reports one simulation run per number; compare its values with our seed range as "
            "well as with our confidence interval.\n"
            "- Discussion of the differences: `docs/experiments/red-baseline.md`."
        ),
    )
)
