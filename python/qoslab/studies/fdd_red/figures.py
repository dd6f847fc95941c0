"""The figures of ``fdd-red`` (:mod:`qoslab.studies.fdd_red.study`), and the per-seed pairings
against RED they share with its verdicts and tables: the readings beside RED, Fig. 7's per-flow
throughput, drops against the buffer size and the number of flows (Figs. 10-11), and the time
series."""

from __future__ import annotations

from typing import Any

import pandas as pd

from qoslab.report.figures import Line, Panel, Ref, panels, sweep_line
from qoslab.reproduction.runner import Context, select
from qoslab.stats import Paired, estimate, paired
from qoslab.studies.fdd_red.paper import (
    AQM_LABELS,
    AQM_STYLE,
    AQMS,
    CONTROL,
    DROP_AQMS,
    JAIN,
    PRIMARY_WINDOW,
    READINGS,
    SETUPS,
    TABLE2_FDD_HETERO,
    TABLE2_FDD_HOMO,
    WINDOWS,
)
from qoslab.studies.red_baseline.paper import HETERO_RTT_MS, MAX_TH, MIN_TH, TABLE2_HETERO, TABLE2_HOMO


def format_g(x: float, digits: int = 4) -> str:
    return f"{x:.{digits}g}"


def seed_means(ctx: Context, sweep: str, metric: str, where: dict[str, Any]) -> pd.Series:
    """Per seed: ``metric`` where the parameters match, averaged over the remaining points (e.g.
    the buffer sizes of Fig. 10)."""
    return ctx.values(sweep, metric, where).groupby("seed")["value"].mean()


def pair(ctx: Context, sweep: str, metric: str, where: dict[str, Any], a: str, b: str = "red") -> Paired:
    """Paired test of queue ``a`` against queue ``b`` on the same seeds."""
    return paired(
        seed_means(ctx, sweep, metric, {**where, "aqm": a}),
        seed_means(ctx, sweep, metric, {**where, "aqm": b}),
    )


def pair_rel(ctx: Context, sweep: str, metric: str, where: dict[str, Any], a: str) -> Paired:
    """Paired test of the per-seed relative change of queue ``a`` against RED (``a/RED - 1``; over a
    sweep, the ratio of the per-seed totals)."""
    sa = seed_means(ctx, sweep, metric, {**where, "aqm": a})
    sb = seed_means(ctx, sweep, metric, {**where, "aqm": "red"})
    rel = (sa / sb.reindex(sa.index) - 1.0).dropna()
    return paired(rel, pd.Series(0.0, index=rel.index))


def readings_figure(ctx: Context) -> None:
    """Paired Δ Jain (queue − RED) per TCP window, reading and control: the verdicts at a glance."""
    arms = [*READINGS, CONTROL]
    width = 0.8 / len(arms)
    mid = (len(arms) - 1) / 2
    grid = []
    for setup in ("file", "20s"):
        row = []
        for rtt in ("homogeneous", "heterogeneous"):
            lines = []
            for k, arm in enumerate(arms):
                tests = [
                    pair(ctx, "tables", "fairness_index", {"rtt": rtt, "setup": setup, "window": w}, arm)
                    for w in WINDOWS
                ]
                lines.append(
                    Line(
                        [i + (k - mid) * width for i in range(len(WINDOWS))],
                        [t.mean for t in tests],
                        AQM_LABELS[arm] + " − RED",
                        err=[(t.ci_high - t.ci_low) / 2 if t.n > 1 else 0.0 for t in tests],
                        style={"color": AQM_STYLE[arm]["color"], "alpha": 0.85},
                        kind="bar",
                        width=width,
                    )
                )
            paper = JAIN[(rtt, "fdd-red")] - JAIN[(rtt, "red")]
            row.append(
                Panel(
                    lines,
                    title=f"{rtt} RTTs, {SETUPS[setup]}",
                    ylabel="Δ Jain index vs RED (paired)",
                    categories=[WINDOWS[w].replace("window ", "TCP window ") for w in WINDOWS],
                    refs=[
                        Ref(0.0, "no difference from RED", {"color": "k", "lw": 0.8}),
                        Ref(paper, "paper's FDD-RED − RED (Table 2, one run)", {"color": "k", "ls": "--"}),
                    ],
                )
            )
        grid.append(row)
    fig = panels(
        grid,
        title="Jain's index, FDD-RED readings and the random-victim control minus RED (mean, 95 % CI)",
        panel_size=(6.0, 3.4),
    )
    ctx.figure(
        "readings-jain",
        fig,
        title="Readings: paired difference in Jain's index against RED",
        sweeps=["tables"],
        caption=(
            "Per seed the queue's Jain index minus RED's on the same seed, scenarios 1 and 3 with each "
            "TCP window cap; bars: mean, whiskers: 95 % CI (paired t). Above 0: fairer than RED."
        ),
    )


def fig7(ctx: Context) -> None:
    """Figs. 6-7 / Table 2: average per-flow throughput per queue, both RTT settings."""
    fl = ctx.flows("tables")
    aqms = [a for a in AQMS if a != CONTROL]
    width = 0.8 / len(aqms)
    mid = (len(aqms) - 1) / 2
    grid = []
    for setup in SETUPS:
        row = []
        for rtt, papers in (
            ("homogeneous", {"red": TABLE2_HOMO, "fdd-red": TABLE2_FDD_HOMO}),
            ("heterogeneous", {"red": TABLE2_HETERO, "fdd-red": TABLE2_FDD_HETERO}),
        ):
            lines, jains = [], []
            for k, aqm in enumerate(aqms):
                w = {"rtt": rtt, "setup": setup, "window": PRIMARY_WINDOW, "aqm": aqm}
                es = [estimate(select(fl, {**w, "flow_name": f"ftp{i}"})["throughput_bps"]) for i in range(5)]
                x = [i + (k - mid) * width for i in range(5)]
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
                jain = ctx.estimate("tables", "fairness_index", w)
                jains.append(f"{jain.mean:.3f}")
            for aqm, marker in (("red", "D"), ("fdd-red", "*")):
                xs = [i + (aqms.index(aqm) - mid) * width for i in range(5)]
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
                    ylim=(0, 450),
                    categories=ticks,
                    note=note,
                )
            )
        grid.append(row)
    fig = panels(
        grid,
        title=(
            "Figs. 6-7 / Table 2: average throughput per flow, RED vs FDD-RED readings, TCP window "
            "unlimited (mean ± 95 % CI)"
        ),
        panel_size=(5.5, 3.6),
    )
    ctx.figure(
        "fig7-table2-throughput",
        fig,
        title="Figs. 6-7 / Table 2: per-flow throughput",
        sweeps=["tables"],
        caption=(
            "Bars: our means over seeds (TCP window unlimited; RED and the three FDD-RED readings); "
            "black markers: the paper's single runs (Table 2)."
        ),
    )


def _drops_figure(
    ctx: Context, sweep: str, x: str, xlabel: str, title: str, name: str, paper_pt: bool
) -> None:
    st = ctx.stats(sweep, ["drops_bottleneck", "fairness_index"])
    d = st[(st["metric"] == "drops_bottleneck") & (st["window"] == PRIMARY_WINDOW)]
    lines = [sweep_line(d[d["aqm"] == aqm], x, label=AQM_LABELS[aqm], **AQM_STYLE[aqm]) for aqm in DROP_AQMS]
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
        caption=(
            "Mean over seeds with 95 % CIs, TCP window unlimited (every window: the table below). The "
            "paper gives this figure only as a plot."
        ),
    )
    wide = st.pivot_table(
        index=[x, "window", "aqm", "seeds", "version"], columns="metric", values=["mean", "half_width"]
    ).reset_index()
    # pandas-stubs types columns as Index[str]; after pivot_table(values=[…]) it is a MultiIndex of pairs
    wide.columns = [a if not b else f"{b}_{a}" for a, b in wide.columns]  # type: ignore[str-unpack]
    wide = wide.sort_values(["window", "aqm", x])
    fmt = {
        c: (lambda v: format_g(v, 4))
        for c in wide.columns
        if c.endswith("_mean") or c.endswith("_half_width")
    }
    ctx.table(
        name,
        wide,
        title=f"{title.split(chr(10))[0]} (data)",
        formats=fmt,
        columns={
            x: x,
            "window": "TCP window",
            "aqm": "queue",
            "drops_bottleneck_mean": "drops",
            "drops_bottleneck_half_width": "± CI",
            "fairness_index_mean": "Jain index",
            "fairness_index_half_width": "± CI ",
        },
        caption="Mean over seeds at the bottleneck over 20 s.",
    )


def fig10(ctx: Context) -> None:
    _drops_figure(
        ctx,
        "fig10",
        "buffer",
        "bottleneck buffer size B (packets)",
        "Fig. 10: dropped packets vs buffer size\n(5 flows, RTT 100 ms, 20 s; max_th = min(75, B))",
        "fig10-drops-vs-buffer",
        True,
    )


def fig11(ctx: Context) -> None:
    _drops_figure(
        ctx,
        "fig11",
        "flows",
        "number of flows N",
        "Fig. 11: dropped packets vs number of flows\n(B = 100, RTT 100 ms, 20 s)",
        "fig11-drops-vs-flows",
        False,
    )


def timeseries(ctx: Context) -> None:
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
