"""The figures of ``probe-marker`` (:mod:`qoslab.studies.probe_marker.study`) and the frontier
readings they share with its verdicts: the goodput-delay frontiers of Figs. 3-6, the claims beside
the paper's, the IN share, Fig. 7's losses, the ns-2 RIO reading, the on/off sources and the two
domains of Fig. 9."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

import numpy as np
import pandas as pd

from qoslab.report.figures import Line, Panel, Ref, panels
from qoslab.report.frames import typed_rows
from qoslab.reproduction.runner import Context, select
from qoslab.scenario import Scenario
from qoslab.studies.probe_marker.claims import ALMOST_SAME, LOSS_IN, LOSS_OUT, PATHOLOGICAL
from qoslab.studies.probe_marker.paper import (
    DOMAIN1_OUT,
    FLOWS,
    MARKERS,
    METRICS,
    PACKET_BYTES,
    PACKET_READINGS,
    PACKETS,
)
from qoslab.studies.probe_marker.topology import single_bottleneck, wq_for


class _Point:  # a frontier point's columns read by frontier_gap
    goodput_util: float
    delay_ms: float


def frontier_gap(marker: pd.DataFrame, none: pd.DataFrame) -> pd.DataFrame:
    """For each marker point (columns ``goodput_util``, ``delay_ms``): the no-marker frontier's
    delay at the same utilisation (linear interpolation between the no-marker points sorted by
    utilisation; NaN outside their range), the difference (negative: the marker's frontier lies
    below), and whether some no-marker point dominates it (as much utilisation or more with no more
    delay)."""
    nm = none.sort_values("goodput_util")
    xs, ys = nm["goodput_util"].to_numpy(float), nm["delay_ms"].to_numpy(float)
    # the frontier: keep it monotone (a point with more delay and less utilisation is off it)
    rows = []
    for r in typed_rows(marker, _Point):
        u, d = float(r.goodput_util), float(r.delay_ms)
        interp = float(np.interp(u, xs, ys)) if xs.size and xs[0] <= u <= xs[-1] else float("nan")
        dominated = bool(((xs >= u) & (ys <= d)).any())
        rows.append(
            {
                "goodput_util": u,
                "delay_ms": d,
                "none_delay_ms": interp,
                "delay_diff_ms": d - interp,
                "dominated": dominated,
            }
        )
    out = pd.DataFrame(rows, index=marker.index)
    return pd.concat([marker.drop(columns=["goodput_util", "delay_ms"]), out], axis=1)


def frontier_points(
    flows: Sequence[int], diffs: Sequence[str], markers: Sequence[str], min_in: Sequence[float], **kw: Any
) -> list[tuple[dict[str, Any], Scenario]]:
    pts = []
    for n in flows:
        for mk in markers:
            for diff in diffs if mk != "none" else ("all_in",):
                for mi in min_in:
                    sc = single_bottleneck(n, mk, mi, diff if mk != "none" else "hard", **kw)
                    pb = int(kw.get("packet_bytes", PACKET_BYTES))
                    pts.append(
                        ({"packet_bytes": pb, "flows": n, "diff": diff, "marker": mk, "min_in": mi}, sc)
                    )
    return pts


#: The sweeps per packet-size reading (1500 B: the name alone; 1000 B: ``NAME_1000B``).
def sweep_name(name: str, packet_bytes: int) -> str:
    return name if packet_bytes == PACKET_BYTES else f"{name}_{packet_bytes}B"


def _fmt(x: float, digits: int = 3) -> str:
    return "nan" if not np.isfinite(x) else f"{x:.{digits}g}"


def wide(ctx: Context, sweep: str, by: Sequence[str]) -> pd.DataFrame:
    """Mean and CI half-width of every metric per point, one row per point."""
    st = ctx.stats(sweep, [m for m in METRICS], by=list(by))
    w = st.pivot_table(index=list(by), columns="metric", values=["mean", "half_width"]).reset_index()
    # pandas-stubs types columns as Index[str]; after pivot_table(values=[…]) it is a MultiIndex of pairs
    w.columns = [a if not b else (b if a == "mean" else f"{b}_hw") for a, b in w.columns]  # type: ignore[str-unpack]
    return w


def _curve(fr: pd.DataFrame, n: int, diff: str, marker: str) -> pd.DataFrame:
    d = "all_in" if marker == "none" else diff
    return select(fr, {"flows": n, "diff": d, "marker": marker}).sort_values("min_in")


_STYLE = {
    "none": dict(color="tab:red", marker="s", ls="-"),
    "probe": dict(color="tab:blue", marker="o", ls="-"),
    "probe_plus_one": dict(color="tab:green", marker="^", ls="--"),
}


def _frontier_line(
    c: pd.DataFrame, label: str, annotate: bool = False, **style: Any
) -> tuple[Line, list[tuple[float, float, str]]]:
    """A frontier (delay against goodput utilisation, CIs both ways) and, with ``annotate``, the
    min_in of each point as annotations."""
    x = list(c["goodput_util"] * 100)
    line = Line(
        x,
        list(c["delay_ms"]),
        label,
        err=list(c["delay_ms_hw"].fillna(0)),
        xerr=list(c["goodput_util_hw"].fillna(0) * 100),
        style=style,
    )
    notes = (
        [(xi, yi, f"{m:g}") for xi, yi, m in zip(x, c["delay_ms"], c["min_in"], strict=True)]
        if annotate
        else []
    )
    return line, notes


def _frontier_panel(
    curves: Sequence[tuple[pd.DataFrame, str, bool, dict[str, Any]]], title: str, xlabel: str
) -> Panel:
    lines, notes = [], []
    for c, label, annotate, style in curves:
        if c.empty:
            continue
        line, ns = _frontier_line(c, label, annotate, **style)
        lines.append(line)
        notes += ns
    return Panel(lines, title=title, xlabel=xlabel, ylabel="mean queueing delay (ms)", annotations=notes)


def frontier_figure(ctx: Context, fr: pd.DataFrame, packet_bytes: int = PACKET_BYTES) -> None:
    figs = {(10, "soft"): 3, (40, "soft"): 4, (10, "hard"): 5, (40, "hard"): 6}
    sens = packet_bytes != PACKET_BYTES
    sweep = sweep_name("frontier", packet_bytes)
    grid: list[list[Panel]] = [[], []]
    for i, ((n, diff), k) in enumerate(figs.items()):
        curves = [(_curve(fr, n, diff, mk), MARKERS[mk], mk != "probe_plus_one", _STYLE[mk]) for mk in _STYLE]
        grid[i // 2].append(
            _frontier_panel(curves, f"Fig. {k}: {n} flows, {diff} differentiation", "goodput utilisation (%)")
        )
    size = f"{packet_bytes} B packets, w_q {wq_for(packet_bytes):.3g}"
    fig = panels(
        grid,
        title=f"Performance frontiers: delay vs goodput utilisation ({size}), RIO min_in annotated (packets)",
        panel_size=(5.5, 3.8),
    )
    ctx.figure(
        f"fig3-6-frontiers-{packet_bytes}B" if sens else "fig3-6-frontiers",
        fig,
        title=f"Figs. 3-6 with {packet_bytes}-byte packets (the {PACKET_READINGS[packet_bytes]} reading)"
        if sens
        else "Figs. 3-6: delay/utilisation frontiers, marker vs no marker (1500 B packets)",
        sweeps=[sweep],
        caption="Mean over seeds with 95 % CIs in both directions; numbers next to the points are "
        "min_in (packets). Delay: mean waiting time of the packets admitted at the bottleneck in the "
        "measurement window (queueing only: no transmission or propagation).",
    )
    cols = [
        "flows",
        "diff",
        "marker",
        "min_in",
        "goodput_util",
        "goodput_util_hw",
        "delay_ms",
        "delay_ms_hw",
        "little_delay_ms",
        "in_share",
        "loss_pct",
        "loss_in_pct",
        "loss_out_pct",
        "timeouts_per_flow",
        "overflow_drops",
    ]
    ctx.table(
        f"frontier-points-{packet_bytes}B" if sens else "frontier-points",
        fr[cols].sort_values(["flows", "diff", "marker", "min_in"]),
        title=f"Frontier data{f' ({packet_bytes} B packets)' if sens else ''} (means over seeds, "
        "± = 95 % CI half-width)",
        columns=cols,
        formats={c: (lambda v: _fmt(v, 4)) for c in cols[4:]},
        caption="goodput_util: fraction of 6 Mbps; delay in ms (little_delay_ms: the same from Little's "
        "law and 1 s queue samples, a cross-check); in_share: IN share of the packets arriving at the "
        "bottleneck; losses in %; overflow_drops must be 0 (only RIO drops).",
    )


def claim_table(ctx: Context, fr: pd.DataFrame, packet_bytes: int = PACKET_BYTES) -> None:
    sens = packet_bytes != PACKET_BYTES
    rows = []
    for n in FLOWS:
        for diff in ("soft", "hard"):
            none = _curve(fr, n, diff, "none")
            for mk in ("probe", "probe_plus_one"):
                c = _curve(fr, n, diff, mk)
                if c.empty:
                    continue
                g = frontier_gap(c[["min_in", "goodput_util", "delay_ms"]], none)
                g.insert(0, "marker", mk)
                g.insert(0, "diff", diff)
                g.insert(0, "flows", n)
                rows.append(g)
    df = pd.concat(rows, ignore_index=True)
    df["relative_diff"] = df["delay_diff_ms"] / df["none_delay_ms"]
    ctx.table(
        f"frontier-gap-{packet_bytes}B" if sens else "frontier-gap",
        df,
        title="Does the marker's frontier lie below the no-marker one?"
        + (f" ({packet_bytes} B packets)" if sens else ""),
        columns=[
            "flows",
            "diff",
            "marker",
            "min_in",
            "goodput_util",
            "delay_ms",
            "none_delay_ms",
            "delay_diff_ms",
            "relative_diff",
            "dominated",
        ],
        formats={
            c: (lambda v: _fmt(v, 3))
            for c in ("goodput_util", "delay_ms", "none_delay_ms", "delay_diff_ms", "relative_diff")
        },
        caption="none_delay_ms: the no-marker frontier's delay at the marker point's utilisation (linear "
        "interpolation; nan outside the no-marker utilisation range); delay_diff_ms < 0: the marker has "
        "less delay at equal utilisation. dominated: a no-marker point has at least as much utilisation "
        "and no more delay.",
    )
    summ = []
    for key, g in df.groupby(["flows", "diff", "marker"], sort=False):
        n, diff, mk = cast("tuple[int, str, str]", key)
        ok = g[np.isfinite(g["delay_diff_ms"])]
        summ.append(
            f"- {n} flows, {diff}, {MARKERS[mk]}: {int((ok['delay_diff_ms'] < 0).sum())} of {len(ok)} "
            f"comparable points below the no-marker frontier (median relative delay change "
            f"{_fmt(float(ok['relative_diff'].median()) * 100, 3)} %), {int(g['dominated'].sum())} of "
            f"{len(g)} points dominated by a no-marker point."
        )
    ctx.text(
        "The central claim, point by point" + (f" ({packet_bytes} B packets)" if sens else ""),
        "\n".join(summ),
    )


def in_share(ctx: Context, frs: Mapping[int, pd.DataFrame]) -> None:
    rows = []
    for pb, fr in frs.items():
        for n, paper in ((10, "about 98 % to more than 99 %"), (40, "about 94 % to 97 %")):
            for diff in ("soft", "hard"):
                for mk in ("probe", "probe_plus_one"):
                    c = _curve(fr, n, diff, mk)
                    rows.append(
                        {
                            "packet_bytes": pb,
                            "flows": n,
                            "diff": diff,
                            "marker": MARKERS[mk],
                            "paper": paper,
                            "in_share_min_pct": 100 * float(c["in_share"].min()),
                            "in_share_max_pct": 100 * float(c["in_share"].max()),
                            "at_min_in_2_pct": 100 * float(c["in_share"].iloc[0]),
                            "at_min_in_80_pct": 100 * float(c["in_share"].iloc[-1]),
                        }
                    )
    df = pd.DataFrame(rows)
    ctx.table(
        "in-share",
        df,
        title="Share of packets marked IN",
        columns={
            "packet_bytes": "packet (B)",
            "flows": "flows",
            "diff": "differentiation",
            "marker": "marker",
            "paper": "paper",
            "in_share_min_pct": "ours min (%)",
            "in_share_max_pct": "ours max (%)",
            "at_min_in_2_pct": "smallest min_in (%)",
            "at_min_in_80_pct": "largest min_in (%)",
        },
        formats={c: (lambda v: _fmt(v, 4)) for c in df.columns if c.endswith("_pct")},
        caption="Range over the RIO settings of the mean (over seeds) IN share of the packets arriving at "
        "the bottleneck in the measurement window (the paper gives only the ranges quoted).",
    )


def fig7(ctx: Context, fr: pd.DataFrame) -> None:
    # the bands the verdicts test (OUT loss near 100 %, IN loss very small)
    out_near = float(LOSS_OUT.parts[0].low)
    in_small = float(LOSS_IN.parts[0].high)
    row = []
    for diff in ("soft", "hard"):
        c = _curve(fr, 10, diff, "probe")
        x = list(c["goodput_util"] * 100)
        lines = [
            Line(x, list(c[col]), f"marker, {lab}", err=list(c[f"{col}_hw"].fillna(0)), style=st)
            for col, lab, st in (
                ("loss_pct", "overall", {"color": "k", "marker": "o"}),
                ("loss_in_pct", "IN", {"color": "b", "marker": "^"}),
                ("loss_out_pct", "OUT", {"color": "r", "marker": "s"}),
            )
        ]
        nm = _curve(fr, 10, diff, "none")
        lines.append(
            Line(
                list(nm["goodput_util"] * 100),
                list(nm["loss_pct"]),
                "no marker (all IN)",
                err=list(nm["loss_pct_hw"].fillna(0)),
                style={"ls": "--", "color": "0.5", "marker": ""},
            )
        )
        row.append(
            Panel(
                lines,
                title=f"10 flows, {diff} differentiation",
                xlabel="goodput utilisation (%)",
                ylabel="loss (%)",
                yscale="symlog",
                ylim=(0.0, 130.0),
                refs=[
                    Ref(
                        out_near,
                        f"tested: OUT ≥ {out_near:g} %",
                        {"color": "r", "ls": ":", "lw": 1.0},
                    ),
                    Ref(in_small, f"tested: IN ≤ {in_small:g} %", {"color": "b", "ls": ":", "lw": 1.0}),
                ],
            )
        )
    fig = panels(
        row,
        title="Fig. 7: loss percentage overall, IN and OUT at the bottleneck, 10 flows",
        sharey=True,
    )
    ctx.figure(
        "fig7-loss",
        fig,
        title="Fig. 7: loss percentage, 10 flows",
        sweeps=["frontier"],
        caption="Drops over arrivals at the bottleneck in the measurement window, per class (mean over "
        "seeds, 95 % CIs); both panels on one symmetric-log scale (linear below 1 %, logarithmic above), "
        "0-130 %. Dotted: the bands the verdicts test (OUT loss at least 95 %, IN loss at most 1 %).",
    )


def rio_ns2(ctx: Context, frs: Mapping[int, pd.DataFrame]) -> None:
    """Hard differentiation in both RIO flavours: how many marker points lie below the all-IN
    frontier (means over seeds), per packet-size reading."""
    ns2 = wide(ctx, "rio_ns2", ["packet_bytes", "flows", "marker", "min_in"])
    rows = []
    for pb in PACKETS:
        for n in FLOWS:
            for flavour in ("reference", "ns2"):
                if flavour == "ns2":
                    d = select(ns2, {"packet_bytes": pb, "flows": n})
                    probe, none = select(d, {"marker": "probe"}), select(d, {"marker": "none"})
                else:
                    probe, none = _curve(frs[pb], n, "hard", "probe"), _curve(frs[pb], n, "hard", "none")
                g = frontier_gap(probe[["min_in", "goodput_util", "delay_ms"]], none)
                ok = g[np.isfinite(g["delay_diff_ms"])]
                rel = ok["delay_diff_ms"] / ok["none_delay_ms"]
                rows.append(
                    {
                        "packet_bytes": pb,
                        "flows": n,
                        "flavour": flavour,
                        "below": f"{int((ok['delay_diff_ms'] < 0).sum())} of {len(ok)}",
                        "median_rel_delay_change_pct": 100 * float(rel.median())
                        if len(rel)
                        else float("nan"),
                        "all_in_goodput_min_in_lowest": float(
                            none.sort_values("min_in")["goodput_util"].iloc[0]
                        ),
                    }
                )
    ctx.table(
        "rio-flavours",
        pd.DataFrame(rows),
        title="Hard differentiation with ns-2.35 dsRED's RIO (ns2 flavour) beside the reference RIO",
        columns={
            "packet_bytes": "packet (B)",
            "flows": "flows",
            "flavour": "RIO flavour",
            "below": "marker points below the all-IN frontier (comparable)",
            "median_rel_delay_change_pct": "median delay change at equal goodput (%)",
            "all_in_goodput_min_in_lowest": "all-IN goodput at the lowest min_in",
        },
        formats={
            "median_rel_delay_change_pct": lambda v: _fmt(v, 3),
            "all_in_goodput_min_in_lowest": lambda v: _fmt(v, 3),
        },
        caption="Means over seeds; the reference rows are the hard-differentiation points of the frontier "
        "sweeps at the same min_in values. The verdicts in both flavours are in the table of verdicts.",
    )


def onoff(ctx: Context) -> None:
    w = wide(ctx, "onoff", ["on_off_s", "marker", "min_in"])
    times = sorted(w["on_off_s"].unique())
    row = [
        _frontier_panel(
            [
                (
                    select(w, {"on_off_s": t, "marker": mk}).sort_values("min_in"),
                    MARKERS[mk],
                    True,
                    _STYLE[mk],
                )
                for mk in ("none", "probe")
            ],
            f"on = off = {t:g} s (mean)",
            "TCP goodput utilisation (%)",
        )
        for t in times
    ]
    fig = panels(
        row, title="Fig. 8: 10 flows, hard differentiation, ON/OFF UDP source (3 Mbps peak), 1500 B packets"
    )
    ctx.figure(
        "fig8-onoff",
        fig,
        title="Fig. 8: frontiers with an ON/OFF UDP source",
        sweeps=["onoff"],
        caption="Utilisation counts the TCP goodput only (the UDP source takes about a quarter "
        "of the link on average). Mean over seeds with 95 % CIs.",
    )
    rows = []
    for pb in PACKETS:
        wp = w if pb == PACKET_BYTES else wide(ctx, sweep_name("onoff", pb), ["on_off_s", "marker", "min_in"])
        for t in times:
            none = select(wp, {"on_off_s": t, "marker": "none"})
            g = frontier_gap(
                select(wp, {"on_off_s": t, "marker": "probe"})[["min_in", "goodput_util", "delay_ms"]], none
            )
            g.insert(0, "on_off_s", t)
            g.insert(0, "packet_bytes", pb)
            rows.append(g)
    df = pd.concat(rows, ignore_index=True)
    ctx.table(
        "fig8-gap",
        df,
        title="Fig. 8: marker vs no-marker frontier with ON/OFF UDP (both packet-size readings)",
        formats={
            c: (lambda v: _fmt(v, 3)) for c in ("goodput_util", "delay_ms", "none_delay_ms", "delay_diff_ms")
        },
    )


def two_domains_figure(ctx: Context) -> None:
    w = wide(ctx, "two_domains", ["flows", "out", "min_th"])
    flows = sorted(w["flows"].unique())
    colours = ("tab:blue", "tab:orange", "black")
    ticks = [float(t) for t in sorted(w["min_th"].unique())]
    same = float(next(iter(ALMOST_SAME.values())).parts[0].low)
    patho = next(iter(PATHOLOGICAL.values())).parts[0]
    lo, hi = float(patho.low), float(patho.high)
    top: list[Panel] = []
    bottom: list[Panel] = []
    for n in flows:
        lines, ratios = [], []
        for j, (o, col) in enumerate(zip(DOMAIN1_OUT, colours, strict=True)):
            key = f"({o[0]:g}, {o[1]:g}, {o[2]:g})"
            c = select(w, {"flows": n, "out": key}).sort_values("min_th")
            # the three OUT settings side by side (equal ones would hide one another)
            xs = list(c["min_th"] * 1.06 ** (j - 1))
            for who, marker, ls in (("marked", "o", "-"), ("free", "s", "--")):
                lines.append(
                    Line(
                        xs,
                        list(c[f"goodput_util_{who}"] * 100),
                        f"{who}, OUT {key}" if n == flows[0] else None,
                        err=list(c[f"goodput_util_{who}_hw"] * 100),
                        style={"color": col, "lw": 1.4, "marker": marker, "ls": ls, "markersize": 4},
                    )
                )
            ratios.append(
                Line(
                    xs,
                    list(c["goodput_util_marked"] / c["goodput_util_free"]),
                    None,
                    style={"color": col, "lw": 1.4, "marker": "o", "markersize": 4},
                )
            )
        top.append(
            Panel(
                lines,
                title=f"{n} marked + {n} free flows",
                xlabel="domain-2 RED min_th (packets)",
                ylabel="goodput (% of 6 Mbps)",
                logx=True,
                xticks=ticks,
                ylim=(0.0, 60.0),
            )
        )
        bottom.append(
            Panel(
                ratios,
                title=f"{n} + {n} flows: marked / free goodput",
                xlabel="domain-2 RED min_th (packets)",
                ylabel="marked / free",
                logx=True,
                xticks=ticks,
                ylim=(0.0, 1.3),
                refs=[
                    Ref(
                        same, f"almost the same: ≥ {same:g} (OUT settings 1, 2)", {"color": "0.3", "ls": "--"}
                    ),
                    Ref(
                        hi,
                        f"2-3× less: {lo:.2f}-{hi:g} (OUT setting 3)",
                        {"color": "black", "ls": ":"},
                    ),
                    Ref(lo, "_nolegend_", {"color": "black", "ls": ":"}),
                ],
            )
        )
    fig = panels(
        [top, bottom],
        title="Fig. 9: marked flows (domain 1) against unmarked flows at a best-effort bottleneck "
        "(1500 B packets, 10 Mbps domain 1)",
        panel_size=(6.0, 3.2),
    )
    ctx.figure(
        "fig9-two-domains",
        fig,
        title="Fig. 9: two domains",
        sweeps=["two_domains"],
        caption="Top: aggregate goodput of the marked flows (solid) and of the free flows (dashed) for "
        "domain 1's three OUT settings, drawn side by side at each min_th ((30, 90, 0.2) and "
        "(2, 6, 0.2) coincide where neither drops an OUT packet in domain 1); mean over seeds with 95 % "
        "CIs, from 0. Bottom: the ratio of the means, with the bands the verdicts test.",
    )
    w = pd.concat(
        [
            wide(ctx, sw, ["packet_bytes", "domain1_mbps", "flows", "out", "min_th"])
            for sw in ("two_domains", "two_domains_readings")
        ],
        ignore_index=True,
    )
    w["marked_over_free"] = w["goodput_util_marked"] / w["goodput_util_free"]
    ctx.table(
        "fig9-two-domains",
        w[
            [
                "packet_bytes",
                "domain1_mbps",
                "flows",
                "out",
                "min_th",
                "goodput_util_marked",
                "goodput_util_free",
                "marked_over_free",
                "delay_ms",
                "in_share",
            ]
        ],
        title="Fig. 9 data: marked vs free goodput, every reading",
        formats={
            c: (lambda v: _fmt(v, 3))
            for c in ("goodput_util_marked", "goodput_util_free", "marked_over_free", "delay_ms", "in_share")
        },
        caption="Paper: with (30, 90, 0.2) and (2, 6, 0.2) marked and free flows get almost the same; "
        "with (0.1, 0.3, 1) the marked flows get two to three times less.",
    )
