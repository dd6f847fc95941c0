"""The figures and the table of ``buffer-sizing``: utilisation against buffer for n flows with
the RTT × C / √n buffer marked; the minimum buffer for 98 / 99.5 / 99.9 % against n beside the
1/√n line; the utilisation at RTT × C / √n under each reading; the headline sentences' runs."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from qoslab.report.figures import Line, Panel, Ref, panels
from qoslab.reproduction.runner import Context
from qoslab.stats import estimate
from qoslab.studies.buffer_sizing.claims import CURVE, RULE_SWEEP, SHORT

COLOURS = ("tab:gray", "tab:purple", "tab:blue", "tab:green", "tab:orange", "tab:red", "tab:brown", "black")
#: a marker per series as well as a colour, so that series stay apart for a reader who cannot
#: tell the colours apart (`docfigures check`)
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def curve_figure(ctx: Context, senders: Sequence[str], rate: float, rtt: tuple[float, float]) -> None:
    """Utilisation against the buffer (× RTT × C) for each n, one panel per sender; a dotted
    vertical line at 1/√n for each n."""
    runs = ctx.runs(CURVE)
    row = []
    for s in senders:
        sub = runs[runs["sender"] == s]
        lines, refs = [], []
        for i, n in enumerate(sorted({int(x) for x in sub["n"]})):
            g = sub[sub["n"] == n]
            fr = sorted({float(x) for x in g["frac"]})
            est = [estimate(g[g["frac"] == f]["utilization"].astype(float)) for f in fr]
            colour = COLOURS[i % len(COLOURS)]
            lines.append(
                Line(
                    fr,
                    [e.mean for e in est],
                    f"n = {n}",
                    err=[e.half_width for e in est],
                    style={"color": colour, "marker": MARKERS[i % len(MARKERS)]},
                )
            )
            refs.append(Ref(1 / math.sqrt(n), f"1/√{n}", {"color": colour, "ls": ":"}, axis="x"))
        row.append(
            Panel(
                lines,
                title=f"{s}: utilisation against buffer",
                xlabel="buffer (× RTT × C, mean RTT)",
                ylabel="utilisation",
                refs=refs,
                logx=True,
            )
        )
    fig = panels(
        row,
        title=f"Utilisation against buffer, n long-lived flows, {rate / 1e6:g} Mb/s drop-tail, "
        f"RTT {rtt[0]:g}-{rtt[1]:g} ms",
    )
    ctx.figure(
        "utilisation-vs-buffer",
        fig,
        title="Utilisation against buffer for n flows, with RTT × C / √n marked",
        sweeps=[CURVE],
        caption="Dotted: the buffer RTT × C / √n of each n (its colour).",
    )


def min_buffer_figure(ctx: Context, bmins: Mapping[tuple[str, float], pd.DataFrame], from_n: int) -> None:
    """B_min (packets) against n on log-log axes for each level and sender, with a 1/√n line
    through each series' value at ``from_n``."""
    row = []
    senders = sorted({s for s, _ in bmins})
    for s in senders:
        lines = []
        levels = sorted({lvl for _, lvl in bmins})
        for (s2, lvl), df in sorted(bmins.items()):
            if s2 != s:
                continue
            i = levels.index(lvl)
            cols = [int(c) for c in df.columns]
            mean = [float(np.nanmean(df[c])) if df[c].notna().any() else math.nan for c in df.columns]
            colour = COLOURS[(2 + i) % len(COLOURS)]
            lines.append(
                Line(cols, mean, f"{lvl:.1%}", style={"color": colour, "marker": MARKERS[i % len(MARKERS)]})
            )
            if from_n in cols and math.isfinite(mean[cols.index(from_n)]):
                b0 = mean[cols.index(from_n)]
                xs = [n for n in cols if n >= from_n]
                lines.append(
                    Line(
                        xs, [b0 * math.sqrt(from_n / n) for n in xs], None, style={"color": colour, "ls": ":"}
                    )
                )
        row.append(
            Panel(
                lines,
                title=f"{s}: minimum buffer",
                xlabel="flows n",
                ylabel="B_min (packets)",
                logx=True,
                yscale="log",
            )
        )
    fig = panels(row, title="Minimum buffer for 98 / 99.5 / 99.9 % utilisation against n (dotted: 1/√n)")
    ctx.figure(
        "min-buffer-vs-n",
        fig,
        title="Minimum buffer for 98, 99.5 and 99.9 % utilisation against n",
        sweeps=[CURVE],
        caption=f"Mean over seeds of the interpolated minimum buffer; dotted: 1/√n through n = {from_n}.",
    )


def rule_figure(ctx: Context, senders: Sequence[str]) -> None:
    """Utilisation at B = RTT × C / √n against n, per sender and RTT reading."""
    runs = ctx.runs(RULE_SWEEP)
    lines = []
    ticks = sorted({int(x) for x in runs["n"]})
    for i, (s, rtt) in enumerate((s, r) for s in senders for r in ("mean", "max")):
        sub = runs[(runs["sender"] == s) & (runs["rtt"] == rtt)]
        ns = sorted({int(x) for x in sub["n"]})
        est = [estimate(sub[sub["n"] == n]["utilization"].astype(float)) for n in ns]
        lines.append(
            Line(
                ns,
                [e.mean for e in est],
                f"{s}, RTT {rtt}",
                err=[e.half_width for e in est],
                style={"color": COLOURS[2 + i], "marker": MARKERS[i], "ls": "-" if rtt == "mean" else "--"},
            )
        )
    panel = Panel(
        lines,
        title="utilisation at B = RTT × C / √n",
        xlabel="flows n",
        ylabel="utilisation",
        refs=[Ref(0.98, "0.98 (declared)", {"color": "black", "ls": "--"})],
        logx=True,
        xticks=ticks,
    )
    ctx.figure(
        "rule",
        panels([panel], title="The buffer RTT × C / √n (100 Mb/s; from 400 flows on, 250 kb/s per flow)"),
        title="Utilisation at RTT × C / √n under each reading",
        sweeps=[RULE_SWEEP],
    )


def headline_table(ctx: Context, head: pd.DataFrame) -> None:
    """One row per headline run kind: its scale, rate, flows, buffer and mean utilisation."""
    rows: list[dict[str, Any]] = []
    for key, g in head.groupby(["sentence", "scale", "arm"]):
        sentence, scale, arm = (str(k) for k in key)
        rows.append(
            {
                "sentence": sentence,
                "scale": scale,
                "arm": arm,
                "rate (Mb/s)": float(g["rate"].iloc[0]) / 1e6,
                "flows": int(g["n"].iloc[0]),
                "utilisation": float(g["utilization"].astype(float).mean()),
                "seeds": len(g),
            }
        )
    ctx.table(
        "headlines",
        pd.DataFrame(rows),
        title="The headline sentences' runs",
        caption="reduce: 'a 2.5Gb/s link carrying 10,000 flows could reduce its buffers by 99%'; "
        "10mbit: 'a 10Gb/s link carrying 50,000 flows requires only 10Mbits of buffering'. Scaled: "
        "the sentence's per-flow rate and round trip (150-350 ms, mean 250 ms) with 400 flows.",
    )


def short_figure(ctx: Context, base: Mapping[str, float], sender: str) -> None:
    """The short flows' B99 and mean queue (packets) against the line rate, the RTT and the load,
    each varied alone from ``base``."""
    runs = ctx.runs(SHORT)
    row = []
    for key, label, logx, scale in (
        ("rate", "line rate (Mb/s)", True, 1e-6),
        ("rtt", "RTT (ms)", True, 1.0),
        ("load", "load", False, 1.0),
    ):
        sub = runs
        for other in ("rate", "rtt", "load"):
            if other != key:
                sub = sub[sub[other].astype(float) == float(base[other])]
        xs = sorted({float(x) for x in sub[key]})
        lines = []
        for i, (metric, name) in enumerate((("b99_pkts", "B99"), ("queue_mean_pkts", "mean"))):
            est = [estimate(sub[sub[key].astype(float) == x][metric].astype(float)) for x in xs]
            lines.append(
                Line(
                    [x * scale for x in xs],
                    [e.mean for e in est],
                    name,
                    err=[e.half_width for e in est],
                    style={"color": COLOURS[2 + 2 * i], "marker": MARKERS[i]},
                )
            )
        row.append(
            Panel(
                lines,
                title=f"against the {label.split(' (')[0]}",
                xlabel=label,
                ylabel="queue (packets)",
                logx=logx,
                xticks=[x * scale for x in xs] if logx else None,
            )
        )
    fig = panels(
        row,
        title=f"Short flows: the queue's 99th percentile and mean (base {base['rate'] / 1e6:g} Mb/s, "
        f"{base['rtt']:g} ms, load {base['load']:g})",
    )
    ctx.figure(
        "short-flows",
        fig,
        title="Short flows: the buffer against the line rate, the RTT and the load",
        sweeps=[SHORT],
        caption=f"Poisson arrivals of 20-packet transfers ({sender}) through a buffer no run fills; each "
        "panel varies one quantity from the base point. B99: the queue's 99th percentile over 1 ms "
        "samples, the buffer it exceeds 1 % of the time.",
    )
