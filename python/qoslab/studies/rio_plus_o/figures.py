"""The figures of ``rio-plus-o`` (:mod:`qoslab.studies.rio_plus_o.study`): Figs. 7-9 (AS against BE
counts, subscription levels and granularity) beside the paper's, and Fig. 1."""

from __future__ import annotations

from typing import Any, cast

import numpy as np
import pandas as pd

from qoslab.report.figures import Line, Panel, Ref, estimates_line, panels, sweep_line
from qoslab.reproduction.runner import Context
from qoslab.stats import estimate
from qoslab.studies.rio_plus_o.paper import (
    ALL_KINDS,
    FIG7_PAPER,
    FIG8_PAPER,
    FIG9_PAPER_RIO,
    GRANULARITY,
    KINDS,
    SETTINGS,
    T1_PROFILES,
    TABLE1,
    W_QS,
)


def format_g(x: float, digits: int = 4) -> str:
    return f"{x:.{digits}g}"


def _crossing(be: np.ndarray, ratio: np.ndarray) -> float:
    """The BE count where the AS throughput/profile first falls below 1 (linear
    interpolation between measured counts); NaN if it never does, 0 if it never meets."""
    o = np.argsort(be)
    be, ratio = be[o], ratio[o]
    if ratio[0] < 1.0:
        return 0.0
    for k in range(1, len(be)):
        if ratio[k] < 1.0:
            f = (ratio[k - 1] - 1.0) / (ratio[k - 1] - ratio[k])
            return float(be[k - 1] + f * (be[k] - be[k - 1]))
    return float("nan")


def fig7_crossings(runs: pd.DataFrame) -> pd.DataFrame:
    """Per setting, subscription, kind, w_q and seed: the BE count where the AS flows stop
    meeting their profile (:func:`_crossing`), and ``censored`` where they never do (the
    crossing is then set to the largest count run, a lower bound)."""
    rows = []
    keys = ["setting", "subscription", "kind", "w_q", "seed"]
    for key, g in runs.groupby(keys, sort=True):
        c = _crossing(g["be_flows"].to_numpy(float), g["as_mean_ratio"].to_numpy(float))
        fin = bool(np.isfinite(c))
        rows.append(
            {
                **dict(zip(keys, key, strict=True)),
                "crossing": c if fin else float(g["be_flows"].max()),
                "censored": not fin,
            }
        )
    return pd.DataFrame(rows)


def draw_fig7(ctx: Context) -> None:
    runs = ctx.runs("fig7")
    st = ctx.stats("fig7", ["as_mean_throughput_bps", "as_mean_ratio"])
    cr = fig7_crossings(runs)
    settings = list(dict.fromkeys(runs["setting"]))
    w_qs = sorted(set(runs["w_q"]))
    rows = []
    grid_rows: list[list[Panel]] = []
    for setting in settings:
        row: list[Panel] = []
        for w_q in w_qs:
            lines, refs = [], []
            for sub, color in ((40, "tab:blue"), (50, "tab:orange")):
                for kind, label in KINDS.items():
                    d = st[
                        (st["setting"] == setting)
                        & (st["subscription"] == sub)
                        & (st["kind"] == kind)
                        & (st["w_q"] == w_q)
                        & (st["metric"] == "as_mean_throughput_bps")
                    ]
                    lines.append(
                        sweep_line(
                            d,
                            "be_flows",
                            label=f"{label}, {sub} %" if not row and not grid_rows else None,
                            scale=1e6,
                            color=color,
                            ls="-" if kind == "rio_plus_o" else "--",
                            marker="o" if kind == "rio_plus_o" else "s",
                        )
                    )
                    c = cr[
                        (cr["setting"] == setting)
                        & (cr["subscription"] == sub)
                        & (cr["kind"] == kind)
                        & (cr["w_q"] == w_q)
                    ]
                    fin = c[~c["censored"]]["crossing"]
                    e = estimate(fin) if len(fin) else None
                    rows.append(
                        {
                            "setting": setting,
                            "w_q": w_q,
                            "subscription": sub,
                            "scheme": label,
                            "paper_be_count": FIG7_PAPER[(sub, kind)],
                            "ours": e.fmt(3) if e else f"> {max(runs['be_flows'])}",
                            "mean": e.mean if e else float("nan"),
                            "seeds_never_failing": int(c["censored"].sum()),
                            "n": len(c),
                        }
                    )
                first = not row and not grid_rows
                refs.append(
                    Ref(
                        20 * sub / 100 / 4,
                        f"profile, {sub} %" if first else "_nolegend_",
                        {"color": color, "lw": 0.8, "ls": "-", "alpha": 0.6},
                    )
                )
                # the paper's text: the BE count up to which the AS flows keep their profile
                for kind, label in KINDS.items():
                    be = FIG7_PAPER[(sub, kind)]
                    refs.append(
                        Ref(
                            be,
                            f"paper, {label} {sub} %: {be:g} BE flows" if first else "_nolegend_",
                            {"color": color, "ls": "-." if kind == "rio" else ":", "lw": 1.0},
                            axis="x",
                        )
                    )
            row.append(
                Panel(
                    lines,
                    title=f"{SETTINGS[setting]['figs']}, w_q {w_q:g}",
                    xlabel="number of BE flows",
                    ylabel="mean AS throughput (Mbps)" if not row else "",
                    refs=refs,
                )
            )
        grid_rows.append(row)
    fig = panels(
        grid_rows,
        title="Fig. 7: AS throughput vs number of BE flows (4 AS flows, 20 Mbps)",
        panel_size=(4.6, 3.2),
    )
    ctx.figure(
        "fig7-be-flows",
        fig,
        title="Fig. 7: AS throughput vs number of BE flows",
        sweeps=["fig7"],
        caption="Mean of the four AS flows' throughput, mean over seeds with 95 % CIs; solid: RI+O, "
        "dashed: RIO; thin horizontal lines: the profiles. Vertical lines: the BE count up to which the "
        "paper's text says the AS flows keep their profile (dash-dotted RIO, dotted RI+O). "
        "Rows: bucket settings; columns: w_q.",
    )
    df = pd.DataFrame(rows)
    df["version"] = ctx.version
    ctx.table(
        "fig7-crossing",
        df,
        title="Fig. 7: BE count at which the AS flows stop meeting their profile",
        columns={
            "setting": "setting",
            "w_q": "w_q",
            "subscription": "subscription (%)",
            "scheme": "scheme",
            "paper_be_count": "paper",
            "ours": "ours (mean ± 95 % CI)",
            "seeds_never_failing": "seeds never failing",
            "n": "seeds",
        },
        caption="Per seed, the BE count where the mean AS throughput / profile first drops below 1, "
        "interpolated linearly between the simulated counts (0 = fails even without BE flows); seeds in "
        "which the AS flows meet the profile up to the largest count are listed apart. "
        f"{ctx.provenance(['fig7'])}.",
    )


def fig8_limits(runs: pd.DataFrame) -> pd.DataFrame:
    """Per setting, profile, kind, w_q and seed: the highest subscription level (%) up to which
    the AS flows' mean throughput meets the profile at every level run (0: not even at the
    lowest level)."""
    rows = []
    keys = ["setting", "profile_mbps", "kind", "w_q", "seed"]
    for key, g in runs.groupby(keys, sort=True):
        g = g.sort_values("subscription")
        ok = 0.0
        for lvl, ratio in zip(g["subscription"], g["as_mean_ratio"], strict=True):
            if ratio < 1.0:
                break
            ok = float(lvl)
        rows.append({**dict(zip(keys, key, strict=True)), "limit": ok})
    return pd.DataFrame(rows)


def _fig8_paper(prof: float) -> list[Ref]:
    """The paper's Fig. 8 limits for profile ``prof`` (Mbps) as vertical lines (FIG8_PAPER)."""
    out = []
    for kind, label in KINDS.items():
        level = FIG8_PAPER.get((prof, kind))
        if level is not None:
            style = {"color": "tab:green" if kind == "rio_plus_o" else "tab:blue", "ls": ":", "lw": 1.2}
            out.append(Ref(level, f"paper, {label}: met up to {level:g} %", style, axis="x"))
    return out


def draw_fig8(ctx: Context) -> None:
    st = ctx.stats("fig8", ["as_mean_throughput_bps"])
    settings = list(dict.fromkeys(st["setting"]))
    w_qs = sorted(set(st["w_q"]))
    profs = sorted(set(st["profile_mbps"]))
    grid = [
        [
            Panel(
                [
                    sweep_line(
                        st[
                            (st["setting"] == setting)
                            & (st["profile_mbps"] == prof)
                            & (st["kind"] == kind)
                            & (st["w_q"] == w_q)
                        ],
                        "subscription",
                        label=label,
                        scale=1e6,
                        color="tab:green" if kind == "rio_plus_o" else "tab:blue",
                    )
                    for kind, label in KINDS.items()
                ],
                title=f"{prof:g} Mbps profiles, {setting}, w_q {w_q:g}",
                xlabel="subscription (%)",
                ylabel="mean AS throughput (Mbps)",
                refs=[Ref(prof, "profile", {"color": "red"}), *_fig8_paper(prof)],
            )
            for prof in profs
        ]
        for setting in settings
        for w_q in w_qs
    ]
    fig = panels(
        grid,
        title="Fig. 8: AS throughput vs total subscription (20 BE flows, 20 Mbps)",
        panel_size=(3.8, 3.0),
    )
    ctx.figure(
        "fig8-subscription",
        fig,
        title="Fig. 8: throughput vs subscription level",
        sweeps=["fig8"],
        caption="Mean over seeds with 95 % CIs; vertical lines: the paper's text, the subscription "
        "level up to which each scheme keeps the profile. Paper: 1 Mbps met up to 60 % (RIO) / 80 % (RI+O); "
        "2 Mbps never met by RIO, up to 60 % by RI+O; 0.5 Mbps always met by both. Settings: stated = "
        "buckets of 9.5 s of profile (Table I's ratio), bucket4k = 1/80 of that; window not limiting.",
    )
    wide = st.pivot_table(
        index=["setting", "w_q", "profile_mbps", "subscription"], columns="kind", values="mean"
    )
    wide = (wide / 1e6).reset_index().rename(columns={k: f"{v} (Mbps)" for k, v in KINDS.items()})
    ctx.table(
        "fig8-subscription",
        wide,
        title="Fig. 8 data: mean AS throughput (Mbps)",
        formats={c: (lambda v: format_g(v, 4)) for c in wide.columns if c.endswith("(Mbps)")},
    )


def fig9_failing(fl: pd.DataFrame) -> pd.DataFrame:
    """Per setting, unit, kind, w_q and seed: the smallest profile multiple k whose flow misses
    its profile (n + 1 where none does, n the number of AS flows)."""
    fl = fl[fl["flow_name"].str.startswith("as")].copy()
    fl["k"] = fl["flow_name"].str[2:].astype(int) + 1
    rows = []
    keys = ["setting", "unit_mbps", "kind", "w_q", "seed"]
    for key, g in fl.groupby(keys, sort=True):
        unit = float(cast(float, key[1])) * 1e6
        miss = g[g["throughput_bps"] < g["k"] * unit]["k"]
        first = int(miss.min()) if len(miss) else int(g["k"].max()) + 1
        rows.append({**dict(zip(keys, key, strict=True)), "first_failing": float(first)})
    return pd.DataFrame(rows)


def _fig9_figure(ctx: Context, first: pd.DataFrame) -> None:
    """Fig. 9 as the verdict reads it: per unit of profile, the first multiple of the unit whose
    flow misses its profile (mean ± 95 % CI over seeds; n + 1 where none does), beside the
    paper's (RIO: 10, 5, 3, 2; RI+O: none), one panel per setting and w_q."""
    colors = {"rio": "tab:blue", "rio_ns2": "black", "rio_plus_o": "tab:green"}
    marks = {"rio": "o", "rio_ns2": "s", "rio_plus_o": "^"}
    kinds = [k for k in ALL_KINDS if (first["kind"] == k).any()]
    units = sorted(GRANULARITY)
    none_fails = [GRANULARITY[u] + 1 for u in units]
    cells: list[Panel] = []
    combos = first[["setting", "w_q"]].drop_duplicates().sort_values(["setting", "w_q"])
    for setting, w_q in combos.itertuples(index=False):
        lines: list[Line] = []
        for j, kind in enumerate(kinds):
            xs, es = [], []
            for u in units:
                f = first[
                    (first["setting"] == setting)
                    & (first["w_q"] == w_q)
                    & (first["kind"] == kind)
                    & np.isclose(first["unit_mbps"], u / 1e6)
                ]["first_failing"]
                if len(f):
                    # the schemes side by side, so that RIO and RIO (ns2) do not hide each other
                    xs.append(u / 1e6 + (j - (len(kinds) - 1) / 2) * 0.012)
                    es.append(estimate(f))
            if es:
                lab = ALL_KINDS[kind] if not cells else None
                style: dict[str, Any] = {"color": colors[kind], "marker": marks[kind], "markersize": 4}
                lines.append(estimates_line(xs, es, label=lab, **style))
        first_panel = not cells
        lines.append(
            Line(
                [u / 1e6 for u in units],
                none_fails,
                "no flow fails (n + 1)" if first_panel else None,
                style={"color": "0.5", "ls": ":", "marker": "_", "markersize": 10},
            )
        )
        lines.append(
            Line(
                [u / 1e6 for u in units],
                [float(FIG9_PAPER_RIO[round(u / 1e6, 1)]) for u in units],
                f"paper, {KINDS['rio']}" if first_panel else None,
                style={"ls": "none", "marker": "D", "color": "black", "markersize": 5},
            )
        )
        lines.append(
            Line(
                [u / 1e6 for u in units],
                none_fails,
                f"paper, {KINDS['rio_plus_o']} (none fails)" if first_panel else None,
                style={"ls": "none", "marker": "o", "mfc": "none", "color": "black", "markersize": 8},
            )
        )
        cells.append(
            Panel(
                lines,
                title=f"{setting}, w_q {w_q:g}",
                xlabel="unit of profile (Mbps)",
                ylabel="first failing multiple" if len(cells) % 2 == 0 else "",
                xticks=[u / 1e6 for u in units],
                ylim=(0, max(none_fails) + 1.5),
            )
        )
    grid = [cells[i : i + 2] for i in range(0, len(cells), 2)]
    fig = panels(
        grid,
        title="Fig. 9: the first profile multiple that misses its profile (20 BE flows, 20 Mbps)",
        panel_size=(4.2, 3.0),
    )
    ctx.figure(
        "fig9-granularity",
        fig,
        title="Fig. 9: first failing profile multiple vs granularity",
        sweeps=["fig9"],
        caption="Per unit of profile (AS flow k has k units): the smallest k whose flow misses its "
        "profile, mean ± 95 % CI over seeds (n + 1, dotted, where no flow fails), the schemes side by "
        "side. Black: the paper's, RIO from 10, 5, 3, 2 units; RI+O never fails. Settings: stated = "
        "buckets of 9.5 s of profile, bucket4k = 1/80 of that; window not limiting.",
    )


def fig9(ctx: Context) -> None:
    fl = ctx.flows("fig9")
    fl = fl[fl["flow_name"].str.startswith("as")].copy()
    fl["k"] = fl["flow_name"].str[2:].astype(int) + 1
    first = fig9_failing(fl)
    combos = (
        fl[["setting", "w_q", "unit_mbps"]].drop_duplicates().sort_values(["setting", "w_q", "unit_mbps"])
    )
    rows = []
    for setting, w_q, unit in combos.itertuples(index=False):
        for kind, label in ALL_KINDS.items():
            d = fl[
                (fl["setting"] == setting)
                & (fl["unit_mbps"] == unit)
                & (fl["kind"] == kind)
                & (fl["w_q"] == w_q)
            ]
            if d.empty:
                continue
            m = d.groupby("k")["throughput_bps"].mean() / 1e6
            failing = [int(k) for k in m.index if m[k] < k * unit]
            f = first[
                (first["setting"] == setting)
                & (first["unit_mbps"] == unit)
                & (first["kind"] == kind)
                & (first["w_q"] == w_q)
            ]["first_failing"]
            rows.append(
                {
                    "setting": setting,
                    "w_q": w_q,
                    "unit_mbps": unit,
                    "scheme": label,
                    "smallest_failing_multiple": min(failing) if failing else None,
                    "failing_multiples": ",".join(map(str, failing)),
                    "per_seed_first_failing": estimate(f).fmt(3),
                }
            )
    _fig9_figure(ctx, first)
    df = pd.DataFrame(rows)
    df["version"] = ctx.version
    ctx.table(
        "fig9-granularity",
        df,
        title="Fig. 9: the smallest profile multiple that misses its profile",
        caption="Paper: RIO 10, 5, 3, 2 (units 0.1, 0.2, 0.3, 0.4 Mbps); RI+O none. smallest failing "
        "multiple: of the mean over seeds; per seed first failing: mean ± 95 % CI of the per-seed smallest "
        "failing multiple (n + 1 where none fails). "
        f"{ctx.provenance(['fig9'])}.",
    )


def fig1(ctx: Context) -> None:
    sf = ctx.series("fig1", "flow")
    if sf.empty:
        return
    seed = int(sf["seed"].iloc[0])
    lines, refs = [], []
    for (name, prof), color in zip((("as0", 3e6), ("as1", 0.5e6)), ("tab:blue", "tab:orange"), strict=True):
        g = sf[sf["flow_name"] == name]
        style = {"marker": "", "lw": 1, "color": color}
        lines.append(
            Line(list(g["time_s"]), list(g["cwnd"]), f"cwnd, {prof / 1e6:g} Mbps profile", style=style)
        )
        env = prof * 0.1 / 8000
        refs.append(Ref(env, f"profile envelope ({env:.1f} pkts at 100 ms)", {"color": color, "ls": "--"}))
    panel = Panel(lines, xlabel="time (s)", ylabel="congestion window (packets)", refs=refs, ylim=(0, 130))
    fig = panels(
        [panel],
        title=f"Fig. 1: windows of a 3 Mbps and a 0.5 Mbps profile flow sharing 5 Mbps, RIO (seed {seed})",
        panel_size=(9, 3.6),
    )
    ctx.figure(
        "fig1-cwnd",
        fig,
        title="Fig. 1: congestion windows vs profile envelopes",
        sweeps=["fig1"],
        caption="Envelope = profile × 100 ms propagation RTT / 1000-byte packets; queueing delay "
        "raises the window a flow needs for its profile.",
    )


def table1_figure(ctx: Context, df: pd.DataFrame) -> None:
    """Table I as a figure: throughput / profile per AS flow beside the paper's, one row per w_q,
    one column per setting."""
    x = np.arange(5)
    kinds = [k for k in ALL_KINDS if (df["scheme"] == ALL_KINDS[k]).any()]
    width = 0.8 / len(kinds)
    colors = {"rio": "tab:blue", "rio_ns2": "black", "rio_plus_o": "tab:green"}
    grid_rows: list[list[Panel]] = []
    for w_q in W_QS:
        row: list[Panel] = []
        for setting in SETTINGS:
            lines = []
            for j, kind in enumerate(kinds):
                label = ALL_KINDS[kind]
                d = df[
                    (df["setting"] == setting)
                    & (df["w_q"] == w_q)
                    & (df["scheme"] == label)
                    & (df["profile"] != "BE (avg)")
                ]
                if d.empty:
                    continue
                xs = list(x + (j - (len(kinds) - 1) / 2) * width)
                bar = {"color": colors[kind], "alpha": 0.8}
                lines.append(
                    Line(
                        xs,
                        list(d["throughput_kbps"] / (np.array(T1_PROFILES) / 1e3)),
                        f"ours, {label}" if not row and not grid_rows else None,
                        err=list(d["throughput_ci_kbps"] / (np.array(T1_PROFILES) / 1e3)),
                        style=bar,
                        kind="bar",
                        width=width,
                    )
                )
            for kind, mk in (("rio", "D"), ("rio_plus_o", "o")):
                pub = {"ls": "none", "marker": mk, "color": "black", "markersize": 4}
                vals = [r[1] / r[0] for r in TABLE1[kind][:5]]
                lab = f"paper, {KINDS[kind]}" if not row and not grid_rows else None
                # on the bar of the scheme the paper's value belongs to
                at = float(kinds.index(kind)) if kind in kinds else (len(kinds) - 1) / 2
                lines.append(Line(list(x + (at - (len(kinds) - 1) / 2) * width), vals, lab, style=pub))
            if not lines:
                continue
            row.append(
                Panel(
                    lines,
                    title=f"{setting}, w_q {w_q:g}",
                    xlabel="AS flow profile",
                    ylabel="throughput / profile" if not row else "",
                    categories=[f"{p / 1e3:.0f}K" for p in T1_PROFILES],
                    refs=[
                        Ref(
                            1.0,
                            "profile" if not row and not grid_rows else "_nolegend_",
                            {"color": "red", "ls": "--", "lw": 0.8},
                        )
                    ],
                    ylim=(0.0, 2.2),
                )
            )
        if row:
            grid_rows.append(row)
    fig = panels(
        grid_rows,
        title="Table I: AS throughput / profile with RIO and RI+O (10 Mbps, 20 BE flows)",
        panel_size=(3.6, 2.6),
    )
    ctx.figure(
        "table1-throughput",
        fig,
        title="Table I: AS throughput, RIO vs RI+O",
        sweeps=["table1"],
        caption="Bars (from 0): our mean throughput / profile over seeds (95 % CI); black markers: the "
        "paper's single run, on the bar of the scheme it belongs to; dashed: the profile. "
        "Columns: the settings (window, buckets); rows: w_q.",
    )
