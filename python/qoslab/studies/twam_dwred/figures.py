"""The figures of ``twam-dwred`` (:mod:`qoslab.studies.twam_dwred.study`) and the per-flow readings
they share with its tables: per-flow throughput against the contracts (Fig. 3), congestion
windows (Fig. 2), and scenarios 3 and 4."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from qoslab.report.figures import Line, Panel, Ref, bar_group, panels
from qoslab.reproduction.runner import Context
from qoslab.stats import estimate
from qoslab.studies.twam_dwred.topology import (
    ARMS,
    FLOW_SETS,
    PACKET,
    REACHED,
    RTT_MS,
    capacity_mbps,
    contracts,
    theoretical_window,
    timing,
)


def per_flow(ctx: Context, sweep: str) -> pd.DataFrame:
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


def summary_rows(pf: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
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
                "fraction_hw": e_f.half_width if np.isfinite(e_f.half_width) else 0.0,
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


#: The columns of the tables of flows reaching their contract (:func:`contracts_table`).
CONTRACT_COLUMNS = {
    "arm_label": "marker + AQM",
    "fraction_ci": f"fraction ≥ {REACHED:.0%} of r_i",
    "worst_ci": "worst / r_i",
    "smallest_ci": "smallest group / r_i",
    "largest_ci": "largest group / r_i",
}


def contracts_table(
    ctx: Context, name: str, df: pd.DataFrame, title: str, columns: dict[str, str], caption: str
) -> None:
    """A table of flows reaching their contract (:func:`summary_rows`), stamped with the version."""
    df["version"] = ctx.version
    ctx.table(name, df, title=title, columns=columns, caption=caption)


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


def fig3_throughput(ctx: Context, pf: pd.DataFrame) -> None:
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


def fig2_cwnd(ctx: Context) -> None:
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


def fraction_figure(ctx: Context, pf: pd.DataFrame) -> None:
    df = summary_rows(pf, ["scen", "flowset", "arm"])
    labels = [
        f"scenario {r.scen}, flow set {r.flowset}"
        for r in df.drop_duplicates(["scen", "flowset"]).itertuples()
    ]
    series = [
        (ARMS[arm], list(df[df["arm"] == arm]["fraction_reached"]), list(df[df["arm"] == arm]["fraction_hw"]))
        for arm in ARMS
    ]
    panel = Panel(
        bar_group(series, len(labels)),
        ylabel=f"fraction of flows ≥ {REACHED:.0%} of r_i",
        ylim=(0, 1.1),
        categories=labels,
        refs=[Ref(1.0, "expected: every flow reaches its contract", {"color": "red", "ls": "--", "lw": 1.0})],
        bounds=(0.0, 1.0),
    )
    fig = panels([panel], title="Flows reaching their contracted rate", panel_size=(8, 3.6))
    n = int(df["n"].min())
    ctx.figure(
        "fraction-reached",
        fig,
        title="Fraction of flows reaching their contract",
        sweeps=["s12"],
        caption=f"Mean over seeds ({n} or more) of the per-run fraction of flows with throughput ≥ 95 % "
        "of r_i, with its 95 % interval (clipped to [0, 1]); dashed: the expectation, every flow.",
    )


def _scenario_contracts(ctx: Context, sweep: str, title: str, caption: str) -> pd.DataFrame:
    """The per-flow readings of scenario sweep ``sweep`` (returned), tabled as ``contracts-SWEEP``
    with ``caption`` and the sweep's provenance."""
    pf = per_flow(ctx, sweep)
    contracts_table(
        ctx,
        f"contracts-{sweep}",
        summary_rows(pf, ["scen", "flowset", "arm"]),
        title,
        CONTRACT_COLUMNS,
        f"{caption} {ctx.provenance([sweep])}.",
    )
    return pf


def scenario3(ctx: Context) -> None:
    t = timing(3, ctx.options.quick)
    pf = _scenario_contracts(
        ctx,
        "s3",
        "Scenario 3: flows reaching their contract after late starts",
        f"Measured over {t['start']:g}-{t['end']:g} s; the first flow of each contract group "
        f"starts at {t['late']:g} s.",
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


#: Okabe-Ito colours (distinguishable with the common colour-vision deficiencies).
_RATE_COLOURS = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9")


def scenario4(ctx: Context) -> None:
    _scenario_contracts(
        ctx,
        "s4",
        "Scenario 4: flows reaching their contract under EF bursts",
        "Throughput over the whole measurement window (EF on half of the time).",
    )
    seed = int(ctx.runs("s4")["seed"].min())
    grid = []
    for arm in ARMS:
        sf = ctx.series("s4", "flow", {"arm": arm, "flowset": "A"})
        sf = sf[sf["seed"] == seed]
        ef = sf[sf["flow_name"].str.startswith("ef")].groupby("time_s")["throughput_bps"].sum() / 1e6
        lines = [Line(list(ef.index), list(ef.to_numpy()), "EF (delivered)", kind="area")]
        # one colour per contracted rate (colour-blind safe), a line style per flow within it
        rates = sorted(set(contracts("A").values()))
        seen: dict[float, int] = {}
        for nm, g in sf[sf["flow_name"].isin(list(contracts("A")))].groupby("flow_name", sort=False):
            rate = contracts("A")[str(nm)]
            k = seen[rate] = seen.get(rate, -1) + 1
            style = {
                "marker": "",
                "lw": 0.9,
                "color": _RATE_COLOURS[rates.index(rate) % len(_RATE_COLOURS)],
                "ls": ("-", "--", ":", "-.")[k % 4],
            }
            label = f"{nm} (r_i {rate / 1e6:g} Mbps)"
            lines.append(Line(list(g["time_s"]), list(g["throughput_bps"] / 1e6), label, style=style))
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
        caption="1 s bins at the receivers; grey: EF traffic delivered (bursts of 30 s every 60 s). "
        "Flows of one contracted rate share a colour.",
    )
