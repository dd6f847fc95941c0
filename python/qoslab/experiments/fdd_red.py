"""``fdd-red``: FDD-RED against RED on the three scenarios of Hashemi, Jamali, Motarez.

Extends ``red-baseline`` (same scenarios, same RED parameters, same sweeps over the buffer and
the number of flows) with the ``fdd_red`` queue at the bottleneck:

- Table 1 (scenario 1, 20 s): drops with RED and FDD-RED (paper: 149 vs 67);
- Table 2 (scenario 3): per-flow throughput and Jain's index with homogeneous (100 ms) and
  heterogeneous (20-100 ms) RTTs (paper: 0.967 vs 0.996 and 0.888 vs 0.901);
- Figs. 4-5, 8, 9: congestion windows, bottleneck throughput and the queue over time;
- Figs. 6-7: per-flow bandwidth over time and average throughput;
- Fig. 10 / Fig. 11: drops against the buffer size (10-200) and the number of flows (5-100).

Four bottleneck disciplines are compared (``AQMS``): RED; FDD-RED as documented in
``docs/models/fdd-red.md`` (penalty rule "shares", RTTs from the router's estimator, the
primary variant); the same with the scenario's RTTs (oracle), to show how much the estimator
matters; and the paper's Fig. 2 bookkeeping as printed (rule "fig2").
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from qoslab.experiments.base import Experiment, Options, Reference, Sweep, register, scenario
from qoslab.experiments.red_baseline import (
    BUFFERS,
    BUFFERS_QUICK,
    FLOWS,
    FLOWS_QUICK,
    HETERO_RTT_MS,
    MAX_P,
    MAX_TH,
    MIN_TH,
    PAPER,
    SHORT,
    TABLE2_HETERO,
    TABLE2_HOMO,
    W_Q,
    red_thresholds,
)
from qoslab.experiments.runner import Context, select
from qoslab.experiments.topologies import dumbbell, red_queue
from qoslab.figures import Line, Panel, Ref, panels, sweep_line
from qoslab.stats import estimate

Q = "link.bottleneck.queue_ab"
#: The bottleneck disciplines compared: label → overrides of the RED scenario's queue.
AQMS: dict[str, list[str]] = {
    "red": [],
    "fdd-red": [f"{Q}.type=fdd_red"],
    "fdd-red-oracle": [f"{Q}.type=fdd_red", f"{Q}.rtt_source=oracle"],
    "fdd-red-fig2": [f"{Q}.type=fdd_red", f"{Q}.penalty=fig2"],
}
AQM_LABELS = {
    "red": "RED",
    "fdd-red": "FDD-RED (shares, RTT estimator)",
    "fdd-red-oracle": "FDD-RED (shares, configured RTTs)",
    "fdd-red-fig2": "FDD-RED (Fig. 2 as printed, RTT estimator)",
}
AQM_STYLE = {
    "red": dict(color="tab:blue", lw=2.0),
    "fdd-red": dict(color="tab:red", lw=2.0),
    "fdd-red-oracle": dict(color="tab:orange", ls="--", lw=1.3),
    "fdd-red-fig2": dict(color="tab:purple", ls=":", lw=1.5),
}
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


def fdd_queue(
    limit: int, min_th: float, max_th: float, max_p: float, w_q: float, **extra: Any
) -> dict[str, Any]:
    """An FDD-RED queue table (RED's keys plus ``rtt_source``/``penalty``)."""
    return {**red_queue(limit, min_th, max_th, max_p, w_q), "type": "fdd_red", **extra}


def _aqm_queue(aqm: str, limit: int = 100) -> dict[str, Any]:
    if aqm == "red":
        return red_queue(limit, MIN_TH, MAX_TH, MAX_P, W_Q)
    extra = {"fdd-red": {}, "fdd-red-oracle": {"rtt_source": "oracle"}, "fdd-red-fig2": {"penalty": "fig2"}}
    return fdd_queue(limit, MIN_TH, MAX_TH, MAX_P, W_Q, **extra[aqm])


def _table_point(p: dict[str, Any]) -> Any:
    name = "fdd-red-s1" if p["rtt"] == "homogeneous" else "fdd-red-s3"
    extra = SHORT if p["setup"] == "20s" else []
    return scenario(name, [*extra, *AQMS[p["aqm"]]])


def _fig10_point(p: dict[str, Any]) -> Any:
    lo, hi = red_thresholds(p["buffer"], "capped")
    return scenario(
        "fdd-red-s1",
        [*SHORT, f"{Q}.limit={p['buffer']}pkts", f"{Q}.min_th={lo!r}", f"{Q}.max_th={hi!r}", *AQMS[p["aqm"]]],
    )


def _fig11_point(p: dict[str, Any]) -> Any:
    n, aqm = p["flows"], p["aqm"]
    return dumbbell(
        n,
        name=f"fdd-red-s2-n{n}-{aqm}",
        description=(
            f"{n} TCP Reno flows, RTT 100 ms, 1 Mbps {AQM_LABELS[aqm]} bottleneck, 100-packet buffer, 20 s"
        ),
        duration="20s",
        bottleneck_queue=_aqm_queue(aqm),
    )


def plan(opts: Options) -> list[Sweep]:
    seeds = opts.seeds
    buffers = BUFFERS_QUICK if opts.quick else BUFFERS
    flows = FLOWS_QUICK if opts.quick else FLOWS
    t = [
        {"rtt": r, "setup": s, "aqm": a}
        for r in ("homogeneous", "heterogeneous")
        for s in SETUPS
        for a in AQMS
    ]
    f10 = [{"aqm": a, "buffer": b} for a in ("red", "fdd-red") for b in buffers]
    f11 = [{"aqm": a, "flows": n} for a in ("red", "fdd-red") for n in flows]
    ts = [{"aqm": a} for a in ("red", "fdd-red")]
    return [
        Sweep(
            "tables",
            [(p, _table_point(p)) for p in t],
            seeds,
            "Scenario 1 (`fdd-red-s1.toml`, five flows, RTT 100 ms) and scenario 3 (`fdd-red-s3.toml`, "
            "RTTs 20-100 ms) with the bottleneck queue RED or one of three FDD-RED variants, as a 20 s "
            "run measured over its whole length and as the scenario files define them (100 s, measured "
            "over 20-100 s).",
        ),
        Sweep(
            "fig10",
            [(p, _fig10_point(p)) for p in f10],
            seeds,
            "Scenario 1 for 20 s with bottleneck buffer B = "
            f"{', '.join(str(b) for b in buffers)} packets, thresholds max_th = min(75, B), "
            "min_th = max_th/3 (red-baseline's primary rule), RED and FDD-RED.",
        ),
        Sweep(
            "fig11",
            [(p, _fig11_point(p)) for p in f11],
            seeds,
            "An N-flow dumbbell (RTT 100 ms, 100-packet buffer, 20 s), RED and FDD-RED.",
        ),
        Sweep(
            "timeseries",
            [(p, scenario("fdd-red-s1", [*SHORT, "measurement.interval=50ms", *AQMS[p["aqm"]]])) for p in ts],
            seeds[:1],
            "Scenario 1 for 20 s sampled every 50 ms, first seed, RED and FDD-RED.",
        ),
    ]


def _fmt(x: float, digits: int = 4) -> str:
    return f"{x:.{digits}g}"


def analyse(ctx: Context) -> None:
    _table1(ctx)
    _table2(ctx)
    _fig7(ctx)
    _fig10(ctx)
    _fig11(ctx)
    _timeseries(ctx)


def _row(quantity: str, aqm: str, pub: float | None, e: Any, scale: float = 1.0) -> dict[str, Any]:
    return {
        "quantity": quantity,
        "aqm": AQM_LABELS[aqm],
        "paper": None if pub is None else pub / scale,
        "mean": e.mean / scale,
        "ci_low": e.ci_low / scale,
        "ci_high": e.ci_high / scale,
        "ours": e.fmt(4, scale),
        "inside_ci": None if pub is None else e.contains(pub),
        "range": f"{_fmt(e.minimum / scale)}-{_fmt(e.maximum / scale)}",
        "n": e.n,
    }


def _table1(ctx: Context) -> None:
    rows = []
    for aqm in AQMS:
        w = {"rtt": "homogeneous", "setup": "20s", "aqm": aqm}
        pub = TABLE1.get(aqm)
        rows.append(_row("total dropped (packets)", aqm, pub, ctx.estimate("tables", "drops_bottleneck", w)))
        for metric, label in (
            ("drops_bottleneck_early", "… early (RED curve)"),
            ("drops_bottleneck_forced", "… forced (avg > max_th)"),
            ("drops_bottleneck_overflow", "… buffer overflow"),
        ):
            rows.append(_row(label, aqm, None, ctx.estimate("tables", metric, w)))
        rows.append(
            _row(
                "avg. dropping rate (packets/s)",
                aqm,
                None if pub is None else pub / 20.0,
                ctx.estimate("tables", "drop_rate_bottleneck_pps", w),
            )
        )
    df = pd.DataFrame(rows)
    prov = ctx.provenance(["tables"])
    df["seeds"] = prov.split("seeds ")[-1]
    df["version"] = ctx.version
    ctx.table(
        "table1-drops",
        df,
        title="Table 1: packets dropped in 20 s (scenario 1), RED vs FDD-RED",
        columns={
            "aqm": "queue",
            "quantity": "quantity",
            "paper": "paper",
            "ours": "ours (mean ± 95 % CI)",
            "inside_ci": "paper in CI",
            "range": "seed range",
        },
        caption=f"Drops at the bottleneck over the whole 20 s run, slow start included. {prov}.",
    )


def _table2(ctx: Context) -> None:
    fl = ctx.flows("tables")
    rows = []
    for setup in SETUPS:
        for rtt, papers in (
            ("homogeneous", {"red": TABLE2_HOMO, "fdd-red": TABLE2_FDD_HOMO}),
            ("heterogeneous", {"red": TABLE2_HETERO, "fdd-red": TABLE2_FDD_HETERO}),
        ):
            for aqm in AQMS:
                paper = papers.get(aqm)
                w = {"rtt": rtt, "setup": setup, "aqm": aqm}
                for i in range(5):
                    v = select(fl, {**w, "flow_name": f"ftp{i}"})["throughput_bps"]
                    rtt_ms = 100 if rtt == "homogeneous" else HETERO_RTT_MS[i]
                    r = _row(
                        f"Flow{i} (RTT {rtt_ms} ms)",
                        aqm,
                        None if paper is None else float(paper[i]),
                        estimate(v),
                        1e3,
                    )
                    rows.append({"setup": SETUPS[setup], "rtt": rtt, **r})
                e = ctx.estimate("tables", "aggregate_throughput_bps", w)
                rows.append(
                    {
                        "setup": SETUPS[setup],
                        "rtt": rtt,
                        **_row("aggregated throughput", aqm, AGGREGATE.get((rtt, aqm)), e, 1e3),
                    }
                )
                e = ctx.estimate("tables", "fairness_index", w)
                rows.append(
                    {
                        "setup": SETUPS[setup],
                        "rtt": rtt,
                        **_row("Jain's fairness index", aqm, JAIN.get((rtt, aqm)), e),
                    }
                )
    df = pd.DataFrame(rows)
    prov = ctx.provenance(["tables"])
    df["seeds"] = prov.split("seeds ")[-1]
    df["version"] = ctx.version
    ctx.table(
        "table2-fairness",
        df,
        title="Table 2: per-flow throughput (kbps) and Jain's index, RED vs FDD-RED",
        columns={
            "setup": "run",
            "rtt": "RTTs",
            "quantity": "quantity",
            "aqm": "queue",
            "paper": "paper",
            "ours": "ours (mean ± 95 % CI)",
            "inside_ci": "paper in CI",
            "range": "seed range",
        },
        caption=f"The paper's values are one run each; the paper does not say over which window. {prov}.",
    )
    # compact summary: Jain index and drops per (setup, rtt, aqm)
    st = ctx.stats("tables", ["fairness_index", "drops_bottleneck", "aggregate_throughput_bps"])
    wide = []
    for (setup, rtt, aqm), g in st.groupby(["setup", "rtt", "aqm"], sort=False):
        row: dict[str, Any] = {
            "setup": SETUPS[setup],
            "rtt": rtt,
            "aqm": AQM_LABELS[aqm],
            "paper_jain": JAIN.get((rtt, aqm)),
        }
        for r in g.itertuples():
            scale = 1e3 if r.metric == "aggregate_throughput_bps" else 1.0
            row[r.metric] = f"{_fmt(r.mean / scale)} ± {_fmt(r.half_width / scale, 2)}"
        row["seeds"] = g["seeds"].iloc[0]
        row["version"] = ctx.version
        wide.append(row)
    ctx.table(
        "summary",
        pd.DataFrame(wide),
        title="Summary: Jain's index, drops and aggregate throughput per queue",
        columns={
            "setup": "run",
            "rtt": "RTTs",
            "aqm": "queue",
            "paper_jain": "paper Jain",
            "fairness_index": "Jain index",
            "drops_bottleneck": "drops",
            "aggregate_throughput_bps": "aggregate (kbps)",
        },
        caption="Mean ± 95 % CI half-width over seeds.",
    )


def _fig7(ctx: Context) -> None:
    """Figs. 6-7 / Table 2: average per-flow throughput per queue, both RTT settings."""
    fl = ctx.flows("tables")
    width = 0.8 / len(AQMS)
    grid = []
    for setup in SETUPS:
        row = []
        for rtt, papers in (
            ("homogeneous", {"red": TABLE2_HOMO, "fdd-red": TABLE2_FDD_HOMO}),
            ("heterogeneous", {"red": TABLE2_HETERO, "fdd-red": TABLE2_FDD_HETERO}),
        ):
            lines, jains = [], []
            for k, aqm in enumerate(AQMS):
                es = [
                    estimate(
                        select(fl, {"rtt": rtt, "setup": setup, "aqm": aqm, "flow_name": f"ftp{i}"})[
                            "throughput_bps"
                        ]
                    )
                    for i in range(5)
                ]
                x = [i + (k - 1.5) * width for i in range(5)]
                lines.append(
                    Line(
                        x,
                        [e.mean / 1e3 for e in es],
                        AQM_LABELS[aqm],
                        err=[0.0 if e.n < 2 else e.half_width / 1e3 for e in es],
                        style={"color": AQM_STYLE[aqm]["color"], "alpha": 0.8},
                        kind="bar",
                        width=width,
                    )
                )
                jain = ctx.estimate("tables", "fairness_index", {"rtt": rtt, "setup": setup, "aqm": aqm})
                jains.append(f"{jain.mean:.3f}")
            for aqm, marker in (("red", "D"), ("fdd-red", "*")):
                xs = [i + (list(AQMS).index(aqm) - 1.5) * width for i in range(5)]
                name = AQM_LABELS[aqm].split(" (")[0]
                style = {"ls": "none", "marker": marker, "color": "k", "markersize": 6}
                lines.append(Line(xs, [v / 1e3 for v in papers[aqm]], f"paper, {name}", style=style))
            note = (
                f"Jain, ours (bars, left to right): {' / '.join(jains)}\n"
                f"Jain, paper: RED {JAIN[(rtt, 'red')]}, FDD-RED {JAIN[(rtt, 'fdd-red')]}"
            )
            ticks = [f"ftp{i}\n{100 if rtt == 'homogeneous' else HETERO_RTT_MS[i]} ms" for i in range(5)]
            row.append(
                Panel(
                    lines,
                    title=f"{rtt} RTTs, {SETUPS[setup]}",
                    ylabel="throughput (kbps)",
                    refs=[Ref(200, "fair share 200 kbps")],
                    ylim=(0, 700),
                    categories=ticks,
                    note=note,
                )
            )
        grid.append(row)
    fig = panels(
        grid,
        title="Figs. 6-7 / Table 2: average throughput per flow, RED vs FDD-RED (mean ± 95 % CI)",
        panel_size=(5.5, 3.6),
    )
    ctx.figure(
        "fig7-table2-throughput",
        fig,
        title="Figs. 6-7 / Table 2: per-flow throughput",
        sweeps=["tables"],
        caption="Bars: our means over seeds; black markers: the paper's single runs (Table 2).",
    )


def _drops_figure(
    ctx: Context, sweep: str, x: str, xlabel: str, title: str, name: str, paper_pt: bool
) -> None:
    st = ctx.stats(sweep, ["drops_bottleneck", "fairness_index"])
    d = st[st["metric"] == "drops_bottleneck"]
    lines = [
        sweep_line(d[d["aqm"] == aqm], x, label=AQM_LABELS[aqm], **AQM_STYLE[aqm])
        for aqm in ("red", "fdd-red")
    ]
    if paper_pt:
        lines.append(
            Line(
                [100],
                [149],
                "paper, Table 1 RED (B = 100)",
                style={"ls": "none", "marker": "D", "markersize": 8},
            )
        )
        lines.append(
            Line(
                [100],
                [67],
                "paper, Table 1 FDD-RED (B = 100)",
                style={"ls": "none", "marker": "*", "markersize": 12, "color": "tab:red"},
            )
        )
    panel = Panel(lines, xlabel=xlabel, ylabel="packets dropped in 20 s", ylim=(0, None))
    fig = panels([panel], title=title.replace("\n", " "), panel_size=(7.5, 4.4))
    ctx.figure(
        name,
        fig,
        title=title.split("\n")[0],
        sweeps=[sweep],
        caption="Mean over seeds with 95 % CIs. The paper gives this figure only as a plot.",
    )
    wide = st.pivot_table(
        index=[x, "aqm", "seeds", "version"], columns="metric", values=["mean", "half_width"]
    ).reset_index()
    wide.columns = [a if not b else f"{b}_{a}" for a, b in wide.columns]
    wide = wide.sort_values(["aqm", x])
    fmt = {
        c: (lambda v: _fmt(v, 4)) for c in wide.columns if c.endswith("_mean") or c.endswith("_half_width")
    }
    ctx.table(
        name,
        wide,
        title=f"{title.split(chr(10))[0]} (data)",
        formats=fmt,
        columns={
            x: x,
            "aqm": "queue",
            "drops_bottleneck_mean": "drops",
            "drops_bottleneck_half_width": "± CI",
            "fairness_index_mean": "Jain index",
            "fairness_index_half_width": "± CI ",
        },
        caption="Mean over seeds at the bottleneck over 20 s.",
    )


def _fig10(ctx: Context) -> None:
    _drops_figure(
        ctx,
        "fig10",
        "buffer",
        "bottleneck buffer size B (packets)",
        "Fig. 10: dropped packets vs buffer size\n(5 flows, RTT 100 ms, 20 s; max_th = min(75, B))",
        "fig10-drops-vs-buffer",
        True,
    )


def _fig11(ctx: Context) -> None:
    _drops_figure(
        ctx,
        "fig11",
        "flows",
        "number of flows N",
        "Fig. 11: dropped packets vs number of flows\n(B = 100, RTT 100 ms, 20 s)",
        "fig11-drops-vs-flows",
        False,
    )


def _timeseries(ctx: Context) -> None:
    sf = ctx.series("timeseries", "flow")
    sq = ctx.series("timeseries", "queue")
    seed = int(sf["seed"].iloc[0])
    runs = ctx.runs("timeseries")[["run_id", "aqm"]]
    sf = sf.merge(runs, on="run_id")
    sq = sq.merge(runs, on="run_id")
    # Figs. 4-5: congestion windows
    cw = [
        Panel(
            [
                Line(list(g["time_s"]), list(g["cwnd"]), str(name), style={"marker": "", "lw": 1})
                for name, g in sf[sf["aqm"] == aqm].groupby("flow_name")
            ],
            title=f"{fign}: congestion windows, {AQM_LABELS[aqm]}",
            xlabel="time (s)",
            ylabel="cwnd (packets)",
        )
        for aqm, fign in (("red", "Fig. 4"), ("fdd-red", "Fig. 5"))
    ]
    fig = panels([[p] for p in cw], title=f"Scenario 1, seed {seed}, sampled every 50 ms", panel_size=(9, 3))
    ctx.figure(
        "fig4-5-cwnd",
        fig,
        title="Figs. 4-5: congestion windows, RED vs FDD-RED",
        sweeps=["timeseries"],
        caption="The first seconds are slow start (window cap 1000 packets: it ends by loss).",
    )
    # Fig. 6: per-flow bandwidth over time (1 s bins from the 50 ms samples)
    bw = []
    for aqm, sub in (("red", "(a)"), ("fdd-red", "(b)")):
        g = sf[sf["aqm"] == aqm].copy()
        g["sec"] = (g["time_s"] - 1e-9).clip(lower=0).astype(int)
        b = g.groupby(["flow_name", "sec"])["throughput_bps"].mean().reset_index()
        lines = [
            Line(list(h["sec"] + 1), list(h["throughput_bps"] / 1e3), str(name), style={"marker": "."})
            for name, h in b.groupby("flow_name")
        ]
        bw.append(
            Panel(
                lines,
                title=f"Fig. 6{sub}: per-flow bandwidth, {AQM_LABELS[aqm]}",
                xlabel="time (s)",
                ylabel="throughput (kbps, 1 s bins)",
                refs=[Ref(200, "fair share 200 kbps")],
            )
        )
    fig = panels([[p] for p in bw], title=f"Fig. 6: scenario 1, seed {seed}", panel_size=(9, 3))
    ctx.figure(
        "fig6-bandwidth",
        fig,
        title="Fig. 6: per-flow bandwidth over time",
        sweeps=["timeseries"],
        caption=f"Scenario 1, seed {seed}; received throughput per flow in 1 s bins.",
    )
    # Fig. 8: bottleneck throughput over time (0.5 s bins)
    lines = []
    for aqm, style in (("red", dict(lw=2.5, alpha=0.6)), ("fdd-red", dict(lw=1.2, ls="--"))):
        g = sf[sf["aqm"] == aqm].copy()
        g["bin"] = ((g["time_s"] - 1e-9).clip(lower=0) // 0.5).astype(int)
        tot = g.groupby(["bin", "time_s"])["throughput_bps"].sum().groupby("bin").mean()
        style = {"marker": ".", "color": AQM_STYLE[aqm]["color"], **style}
        lines.append(
            Line(list((tot.index + 1) * 0.5), list(tot.to_numpy() / 1e3), AQM_LABELS[aqm], style=style)
        )
    panel = Panel(lines, xlabel="time (s)", ylabel="bottleneck throughput (kbps, 0.5 s bins)")
    fig = panels(
        [panel], title=f"Fig. 8: bottleneck link throughput (scenario 1, seed {seed})", panel_size=(9, 3.6)
    )
    ctx.figure(
        "fig8-throughput",
        fig,
        title="Fig. 8: bottleneck throughput",
        sweeps=["timeseries"],
        caption="Sum of the five flows' received throughput.",
    )
    # Fig. 9: instantaneous queue
    qs = []
    for aqm, sub in (("red", "(a)"), ("fdd-red", "(b)")):
        q = sq[(sq["aqm"] == aqm) & (sq["queue"] == "bottleneck:ab")]
        t = list(q["time_s"])
        qs.append(
            Panel(
                [
                    Line(t, list(q["queue_packets"]), "instantaneous queue", style={"marker": "", "lw": 1}),
                    Line(t, list(q["avg_queue"]), "RED average", style={"marker": "", "lw": 1.5}),
                ],
                title=f"Fig. 9{sub}: bottleneck queue, {AQM_LABELS[aqm]}",
                xlabel="time (s)",
                ylabel="packets",
                refs=[Ref(MIN_TH, f"min_th = {MIN_TH}"), Ref(MAX_TH, f"max_th = {MAX_TH}", {"ls": "--"})],
                ylim=(0, 105),
            )
        )
    fig = panels([[p] for p in qs], title=f"Fig. 9: scenario 1, seed {seed}", panel_size=(9, 3))
    ctx.figure(
        "fig9-queue",
        fig,
        title="Fig. 9: bottleneck queue, RED vs FDD-RED",
        sweeps=["timeseries"],
        caption=f"Scenario 1, seed {seed}, sampled every 50 ms; buffer 100 packets, min_th 25, max_th 75.",
    )


def _references() -> tuple[Reference, ...]:
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
                {"rtt": "homogeneous", "setup": "20s", "aqm": aqm},
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
                    {"rtt": rtt, "setup": setup, "aqm": aqm},
                )
            )
    return tuple(refs)


EXPERIMENT = register(
    Experiment(
        name="fdd-red",
        title="FDD-RED against RED (Hashemi, Jamali, Motarez)",
        paper=PAPER,
        summary=(
            "FDD-RED (RED decides when to drop, a per-flow penalty built from the Fair Dropping Index "
            "decides whose packet) against RED on the paper's three scenarios: drops in 20 s (Table 1), "
            "per-flow throughput and Jain's index with homogeneous and heterogeneous RTTs (Table 2, "
            "Figs. 6-7), drops against the buffer size and the number of flows (Figs. 10-11), and the "
            "congestion windows, bottleneck throughput and queue over time (Figs. 4-5, 8, 9). Five TCP "
            "Reno flows, 500-byte packets, 1 Mbps bottleneck, RED 25/75/0.01/0.002."
        ),
        plan=plan,
        analyse=analyse,
        references=_references(),
        seeds=20,
        quick_seeds=3,
        notes=(
            "- FDD-RED variants: `fdd-red` = penalty rule 'shares' with the router's RTT estimator "
            "(primary); `fdd-red-oracle` = the same with the configured RTTs; `fdd-red-fig2` = the "
            "paper's Fig. 2 bookkeeping as printed. See `docs/models/fdd-red.md`.\n"
            "- The paper's values are single runs; ours are means over seeds with 95 % CIs.\n"
            "- Discussion: `docs/experiments/fdd-red.md`."
        ),
    )
)
