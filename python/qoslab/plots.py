"""Plots of a user's own runs and sweeps (``qoslab plot``), built from the figure kinds of
:mod:`qoslab.report.figures` so that they look like the experiments' figures.

- :func:`run_figure`: the time series of one run directory (``qoslab run --out DIR``): the
  bottleneck's queue and the averages its discipline keeps (RED's average; RIO's avg_in and
  avg_total), each chosen flow's congestion window (against its receiver window) and
  throughput, the measurement window shaded.
- :func:`sweep_figure`: any stored metric against any swept key, mean and 95 % interval over
  seeds (inside the metric's range), one line per value of another swept key (``by``), n per
  point when it differs, a log x axis for a parameter spanning 20× or more.
- :func:`save`: writes a figure as PNG, SVG or PDF (by the file's suffix) with a provenance
  footer (scenario, seeds, qoslab version).

>>> fig, prov = run_figure("results/demo")                                   # doctest: +SKIP
>>> save(fig, "queue.png", prov)                                             # doctest: +SKIP
>>> fig, prov = sweep_figure("results/store", "fdd-red-s1", "fairness_index",
...                          x="link.bottleneck.queue_ab.limit")             # doctest: +SKIP
"""

from __future__ import annotations

import fnmatch
import json
import os
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from qoslab import schema
from qoslab.report.figures import Line, Panel, Ref, panels
from qoslab.report.page import draw_footer, figure_metadata, release_figure
from qoslab.stats import seed_ranges, summarize

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: Formats :func:`save` writes, by suffix.
FORMATS = (".png", ".svg", ".pdf")
#: Flows drawn by default in a run's figure; beyond, the first ones (the title says so; choose
#: others with ``flows``).
MAX_FLOWS = 12

#: A metric's unit from its name's suffix: (suffix, unit shown, divisor for the axis).
_UNITS = (
    ("_bps", "Mbit/s", 1e6),
    ("_pps", "packets/s", 1.0),
    ("_pkts", "packets", 1.0),
    ("_bytes", "bytes", 1.0),
    ("_s", "s", 1.0),
)


class PlotError(ValueError):
    """A plot that cannot be drawn from what was given (no such run directory, metric or key)."""


# -- one run --------------------------------------------------------------------------------------


def _read(run_dir: Path, name: str) -> pd.DataFrame:
    path = run_dir / f"{name}.parquet"
    if not path.is_file():
        raise PlotError(f"{run_dir}: no {name}.parquet (a directory written by `qoslab run --out DIR`?)")
    import pyarrow as pa

    try:
        df = pd.read_parquet(path)
    except (OSError, pa.ArrowException) as e:
        raise PlotError(f"{path}: not a Parquet table qoslab wrote ({str(e).splitlines()[0]})") from None
    want = {"series_queue": {"queue", "physical_queue"}, "series_flow": set()}.get(name, set())
    if not want <= set(df.columns):
        raise PlotError(f"{path}: no column {sorted(want - set(df.columns))[0]} (not a table qoslab wrote)")
    return df


def _bottleneck_queue(summary: dict[str, Any], queues: pd.DataFrame) -> str:
    """The measured bottleneck's busier direction (``link:ab`` or ``link:ba``)."""
    name = str(summary.get("bottleneck", ""))
    util = summary.get("utilization_by_link", {})
    both = [q for q in (f"{name}:ab", f"{name}:ba") if q in set(queues["queue"])]
    if not both:
        return str(queues["queue"].iloc[0])
    return max(both, key=lambda q: util.get(q, 0.0))


def _scenario(d: Path) -> dict[str, Any]:
    """The run's scenario.toml as a table (empty when missing or unreadable)."""
    import tomllib

    try:
        return tomllib.loads((d / "scenario.toml").read_text())
    except (OSError, ValueError):
        return {}


def _template(name: str) -> str:
    """A name with ``{i}`` as an fnmatch pattern (a group's members' names)."""
    return name.replace("{i}", "*")


def _receiver_windows(sc: dict[str, Any], names: Sequence[str]) -> dict[str, float]:
    """Each TCP flow's advertised-window cap (packets): its ``tcp.window``, else ``[tcp].window``,
    else 20 (the default)."""
    default = float(sc.get("tcp", {}).get("window", 20))
    out = {n: default for n in names}
    for f in sc.get("flow", []):
        w = f.get("tcp", {}).get("window") if isinstance(f.get("tcp"), dict) else None
        if w is None:
            continue
        pat = _template(str(f.get("name", "")))
        for n in names:
            if fnmatch.fnmatchcase(n, pat):
                out[n] = float(w)
    return out


def _queue_table(sc: dict[str, Any], queue: str) -> dict[str, Any]:
    """The queue table of the link direction ``LINK:DIR`` in the scenario (empty if unknown)."""
    link, _, direction = queue.partition(":")
    for ln in sc.get("link", []):
        if fnmatch.fnmatchcase(link, _template(str(ln.get("name", "")))):
            q = ln.get(f"queue_{direction}", ln.get("queue", {}))
            return q if isinstance(q, dict) else {}
    return {}


def average_labels(qtable: dict[str, Any], one: pd.DataFrame) -> list[tuple[str, str]]:
    """The averages series_queue holds for this queue, as ``(column, name)``: what each is for
    the queue's discipline (RIO's avg_in and avg_total, not "the AQM average"). Columns that
    are NaN throughout are left out."""
    averages = schema.queue_kinds().get(str(qtable.get("type", "")), {}).get("x-averages", {})
    has = [
        c for c in ("avg_queue", "avg_prec0", "avg_prec1", "avg_prec2") if c in one and one[c].notna().any()
    ]
    if "avg_queue" not in has:
        return []
    if "avg_prec1" not in has:  # one average
        return [("avg_queue", averages.get("one", "average queue (avg_queue)"))]
    three = "avg_prec2" in has
    # the kind says what its averages are, by its mode (the kind's own default when unset)
    by_mode = averages.get("by_mode", {})
    named = by_mode.get(str(qtable.get("mode", averages.get("default_mode", ""))), by_mode.get(""))
    if named:
        names = named["three" if three else "two"]
    else:
        names = [f"average precedence {k} is judged on" for k in range(3)]
    cols = ["avg_prec0", "avg_prec1", "avg_prec2"][: 3 if three else 2]
    return list(zip(cols, names, strict=False))


def select_flows(names: Sequence[str], throughput: dict[str, float], specs: Sequence[str]) -> list[str]:
    """The flows ``specs`` name, in the run's order: flow names, fnmatch globs (``tcp*``) or
    ``worst N`` / ``best N`` (the N flows with the least / most throughput in the measurement
    window); several specs add up. No specs: every flow."""
    if not specs:
        return list(names)
    chosen: set[str] = set()
    for spec in specs:
        for part in (p.strip() for p in spec.split(",")):
            words = part.split()
            if len(words) == 2 and words[0].lower() in ("worst", "best") and words[1].isdigit():
                ranked = sorted(
                    names, key=lambda n: throughput.get(n, 0.0), reverse=words[0].lower() == "best"
                )
                chosen.update(ranked[: int(words[1])])
                continue
            hit = [n for n in names if fnmatch.fnmatchcase(n, part)]
            if not hit:
                some = ", ".join(list(names)[:6]) + (", …" if len(names) > 6 else "")
                raise PlotError(
                    f"--flows {part!r}: no such flow (names, globs such as 'tcp*', or 'worst N' / "
                    f"'best N'; the run's flows: {some})"
                )
            chosen.update(hit)
    return [n for n in names if n in chosen]


#: The sampling interval above which a run's cwnd is drawn from too few samples, as a fraction of
#: the flows' smallest smoothed RTT (fewer than 4 samples per RTT).
ALIAS_FRACTION = 0.25


def sampling_warning(interval: float, rtts: Sequence[float]) -> str:
    """A sentence when samples every ``interval`` s are too sparse for the flows' round-trip
    times (cwnd changes every RTT: its peaks and halvings between two samples are not drawn),
    else ``""``."""
    known = [r for r in rtts if np.isfinite(r) and r > 0]
    if not known or not np.isfinite(interval) or interval <= ALIAS_FRACTION * min(known):
        return ""
    rtt = min(known)
    return (
        f"sampled every {interval:g} s = {interval / rtt:.2g} × the smallest smoothed RTT ({rtt:.3g} s): "
        f"cwnd's peaks and halvings between samples are not drawn; measurement.interval ≤ "
        f"{ALIAS_FRACTION * rtt:.2g} s shows every RTT"
    )


def run_figure(run_dir: str | Path, flows: Sequence[str] = ()) -> tuple[Figure, str]:
    """The figure of one run directory and its provenance line: queue (instantaneous and each
    average the discipline keeps, named as what it is) at the bottleneck, cwnd per flow (with
    each receiver window it meets), throughput per flow; the measurement window shaded.
    ``flows``: which flows (see :func:`select_flows`); by default all up to :data:`MAX_FLOWS`."""
    d = Path(run_dir)
    if not d.is_dir():
        raise PlotError(f"{d}: no such run directory")
    if not (d / "summary.json").is_file():
        raise PlotError(f"{d}: no summary.json (a directory written by `qoslab run --out DIR`?)")
    try:
        summary = json.loads((d / "summary.json").read_text())
    except (OSError, ValueError) as e:
        raise PlotError(f"{d}/summary.json: {e}") from None
    if not isinstance(summary, dict):
        raise PlotError(f"{d}/summary.json: not a run's summary (a JSON object)")
    sq, sf = _read(d, "series_queue"), _read(d, "series_flow")
    if sq.empty or sf.empty:
        raise PlotError(f"{d}: the run recorded no time series (measurement.interval longer than the run?)")
    sc = _scenario(d)
    window = summary.get("measurement_window_s")
    win = (float(window[0]), float(window[1])) if isinstance(window, list) and len(window) == 2 else None
    q = _bottleneck_queue(summary, sq)
    one = sq[(sq["queue"] == q) & (sq["physical_queue"] == sq[sq["queue"] == q]["physical_queue"].min())]
    qlines = [
        Line(
            list(one["time_s"]),
            list(one["queue_packets"]),
            "instantaneous queue",
            style={"lw": 0.8, "marker": "none", "color": "0.6"},
        )
    ]
    # the averages in black, told apart by dash (a flow's colour never repeats one of them)
    for (col, name), dash in zip(average_labels(_queue_table(sc, q), one), ("-", "--", ":"), strict=False):
        qlines.append(
            Line(
                list(one["time_s"]),
                list(one[col]),
                name,
                style={"lw": 1.6, "marker": "none", "color": "black", "ls": dash},
            )
        )
    queue = Panel(qlines, title=f"queue at {q}", xlabel="time (s)", ylabel="queue (packets)", window=win)
    names = list(dict.fromkeys(sf["flow_name"]))
    thr_of = {str(f.get("name")): float(f.get("throughput_bps", 0.0)) for f in summary.get("flows", [])}
    shown = select_flows(names, thr_of, flows)[: None if flows else MAX_FLOWS]
    cwnd = Panel(title="congestion window per flow", window=win, bounds=(0.0, None))
    thr = Panel(title="throughput per flow", window=win, bounds=(0.0, None))
    top = 0.0
    for n in shown:
        f = sf[sf["flow_name"] == n]
        if f["cwnd"].notna().any():
            cwnd.lines.append(
                Line(list(f["time_s"]), list(f["cwnd"]), n, style={"lw": 0.9, "marker": "none"})
            )
            top = max(top, float(f["cwnd"].max()))
        thr.lines.append(
            Line(list(f["time_s"]), list(f["throughput_bps"] / 1e6), n, style={"lw": 0.9, "marker": "none"})
        )
    cwnd.xlabel = thr.xlabel = "time (s)"
    cwnd.ylabel, thr.ylabel = "cwnd (packets)", "throughput (Mbit/s)"
    if not cwnd.lines:
        cwnd.empty = "no cwnd recorded (measurement.cwnd = false, or no TCP flow)"
    else:
        _receiver_window(cwnd, _receiver_windows(sc, [ln.label or "" for ln in cwnd.lines]), top)
    rtts = _rtts(d, shown)
    alias = sampling_warning(float(summary.get("sampling_interval_s", float("nan"))), rtts)
    if alias and cwnd.lines:
        cwnd.xlabel += "\n" + textwrap.fill(alias.split("; measurement")[0], 64)
    more = f" ({len(shown)} of {len(names)} flows)" if len(names) > len(shown) else ""
    title = (
        f"{summary.get('scenario', d.name)}, seed {summary.get('seed', '?')}: queue, cwnd and "
        f"throughput over time{more}"
    )
    # one panel a row: 6.4 in wide, the figure shows its 8 pt text at 15 px in the site's text
    # column (876 px; tests/test_site_browser.py), where three side by side showed it at 7 px
    fig = panels([[queue], [cwnd], [thr]], title=title, panel_size=(6.4, 2.6), sharey=False)
    fig.set_label(alias)  # for the command line to print
    prov = (
        f"{d} · scenario {summary.get('scenario', '?')} ({str(summary.get('scenario_sha256', ''))[:12]}) · "
        f"seed {summary.get('seed', '?')} · qoslab {summary.get('version', '?')}"
    )
    return fig, prov


def _rtts(d: Path, names: Sequence[str]) -> list[float]:
    path = d / "flows.parquet"
    if not path.is_file():
        return []
    fl = pd.read_parquet(path, columns=None)
    if "srtt_s" not in fl or "name" not in fl:
        return []
    return [float(v) for v in fl[fl["name"].isin(list(names))]["srtt_s"]]


def _receiver_window(cwnd: Panel, windows: dict[str, float], top: float) -> None:
    """Draws each receiver window the flows' cwnd reaches; where cwnd passes it (ns-2's Reno
    keeps opening cwnd while window-limited), the line is the window the sender uses,
    min(cwnd, receiver window), and the title says so."""
    reached = sorted({w for w in windows.values() if top >= w})
    for w in reached:
        who = [n for n, v in windows.items() if v == w]
        label = f"receiver window {w:g} pkts" + ("" if len(reached) == 1 else f" ({len(who)} flows)")
        cwnd.refs.append(Ref(w, label, {"color": "0.25", "ls": "-.", "lw": 1.0}))
    if not reached or top <= max(reached):
        return
    for ln in cwnd.lines:
        w = windows.get(ln.label or "", float("inf"))
        ln.y = [min(float(v), w) for v in ln.y]
    cwnd.title = f"min(cwnd, receiver window) per flow (cwnd itself reaches {top:.0f})"
    cwnd.ylabel = "window (packets)"
    cwnd.ylim = (0.0, 1.15 * max(reached))


# -- a sweep --------------------------------------------------------------------------------------


def _metric_unit(metric: str) -> tuple[str, float]:
    if metric.startswith(("drops", "retransmitted", "timeouts")) and not metric.endswith("_pps"):
        return "packets", 1.0
    for suffix, unit, div in _UNITS:
        if metric.endswith(suffix):
            return unit, div
    return "", 1.0


#: Ranges of the stored metrics, for their intervals (:class:`qoslab.report.figures.Line`).
METRIC_BOUNDS: dict[str, tuple[float | None, float | None]] = {
    "fairness_index": (0.0, 1.0),
    "utilization": (0.0, 1.0),
}

#: A positive swept parameter spanning at least this ratio gets a log x axis by default.
LOGX_RATIO = 20.0


def _bounds(metric: str) -> tuple[float | None, float | None] | None:
    if metric in METRIC_BOUNDS:
        return METRIC_BOUNDS[metric]
    if metric.endswith(("_bps", "_pps", "_pkts", "_bytes", "_s")) or metric.startswith(
        ("drops", "retransmitted", "timeouts", "events", "packet_hops")
    ):
        return (0.0, None)  # rates, sizes, durations and counts (a std too) are ≥ 0
    return None


def parse_labels(specs: Sequence[str]) -> dict[str, str]:
    """``KEY=TEXT`` pairs (``--label``) as a mapping; PlotError names a malformed one."""
    out: dict[str, str] = {}
    for spec in specs:
        key, eq, text = spec.partition("=")
        if not eq or not key.strip() or not text.strip():
            raise PlotError(
                f'--label {spec!r}: expected KEY=TEXT (e.g. --label fairness_index="Jain\'s index")'
            )
        out[key.strip()] = text.strip()
    return out


def sweep_figure(
    store: str | Path | None,
    sweep: str,
    metric: str,
    *,
    x: str,
    by: str | None = None,
    labels: dict[str, str] | None = None,
    logx: bool | None = None,
) -> tuple[Figure, str]:
    """``metric`` of the stored runs of ``sweep`` against the swept key ``x``: mean and 95 %
    interval over seeds (inside the metric's range: :data:`METRIC_BOUNDS`, ≥ 0 for rates,
    sizes and counts), one line per value of the swept key ``by`` (if given), each point's
    number of seeds written beside it when they differ. ``labels`` names the metric and keys on
    the axes (``{"fairness_index": "Jain's index"}``); ``logx``: a log x axis (``None``: when
    the swept values are positive and span ≥ :data:`LOGX_RATIO` ×)."""
    from qoslab.report import results
    from qoslab.runs.tasks import DEPRECATED_METRICS

    labels = labels or {}
    runs = results.load(store, sweep=sweep, status="ok")
    if runs.empty:
        known = ", ".join(results.sweeps(store)["sweep"].astype(str)) or "none"
        raise PlotError(f"no stored runs of sweep {sweep!r} (sweeps in the store: {known})")
    cols: list[str] = []
    for key in (x, by):
        if key is None:
            continue
        col = results.axis_column(runs, key)
        if col is None:
            keys = sorted(json.loads(runs["params"].iloc[0]) if runs["params"].iloc[0] else {})
            raise PlotError(
                f"sweep {sweep!r} has no swept key {key!r} (its keys: {', '.join(keys) or 'none'})"
            )
        cols.append(col)
    x_key, by_key = x, by
    x, by = cols[0], (cols[1] if by is not None else None)
    by_unit = f" {by[len(by_key) + 1 :]}" if by and by_key and by != by_key else ""
    if metric not in runs.columns:
        have = [c for c in runs.columns if c not in ("params", "summary") and runs[c].dtype.kind in "fi"]
        old = f"; {metric} is {DEPRECATED_METRICS[metric]}" if metric in DEPRECATED_METRICS else ""
        raise PlotError(f"no metric {metric!r} in sweep {sweep!r} (have: {', '.join(sorted(have))}){old}")
    keys = [x] + ([by] if by else [])
    stats = summarize(runs, [metric], by=keys)
    # swept values come typed (results.typed_column): numbers are placed by value, the unit is in
    # the column's name; anything else is a category, in the order of the grid
    numeric = runs[x].dtype.kind in "iuf"
    order = list(dict.fromkeys(runs[x].astype(str)))
    x_unit = x[len(x_key) + 1 :]
    unit, div = _metric_unit(metric)
    x_name, m_name = labels.get(x_key, x_key), labels.get(metric, metric)
    if metric in DEPRECATED_METRICS:
        m_name += " (deprecated name)"
    panel = Panel(
        title=f"{m_name} against {x_name}",
        xlabel=f"{x_name} ({x_unit})" if x_unit else x_name,
        ylabel=f"{m_name} ({unit})" if unit else m_name,
        bounds=_bounds(metric) or (None, None),
    )
    if not numeric:
        panel.categories = order
    pos = {v: (float(v) if numeric else float(i)) for i, v in enumerate(order)}
    xs = [v for v in pos.values()]
    if logx is None:
        logx = numeric and min(xs) > 0 and max(xs) / min(xs) >= LOGX_RATIO
    elif logx and not (numeric and min(xs) > 0):
        raise PlotError(f"--logx: {x_key} has values that are not positive numbers ({', '.join(order)})")
    if logx:
        panel.logx, panel.xticks = True, sorted(xs)
    # (value of ``by``, its rows): the value is only shown
    groups: list[tuple[object, pd.DataFrame]] = (
        [(None, stats)] if by is None else list(stats.groupby(by, sort=False))
    )
    uneven = stats["n"].nunique() > 1
    # a quantity with two bounds (Jain's index, utilisation) gets the bootstrap interval of its
    # per-run values, which stays inside them; the others the Student-t one of stats.csv
    two_sided = panel.bounds is not None and None not in panel.bounds
    for label, g in groups:
        g = g.assign(_pos=[pos[v] for v in g[x].astype(str)]).sort_values("_pos")
        values = None
        if two_sided:
            mine = runs if by is None else runs[runs[by].astype(str) == str(label)]
            values = [list(mine[mine[x].astype(str) == str(v)][metric] / div) for v in g[x]]
        panel.lines.append(
            Line(
                list(g["_pos"]),
                list(g["mean"] / div),
                None if by is None else f"{labels.get(by_key or '', by_key)} = {label}{by_unit}",
                err=list(g["half_width"].fillna(0.0) / div),
                style={"marker": "o", "markersize": 4},
                values=values,
            )
        )
        if uneven:
            panel.annotations += [
                (p, m / div, f"n={n}") for p, m, n in zip(g["_pos"], g["mean"], g["n"], strict=True)
            ]
    seeds = seed_ranges(runs["seed"])
    lo, hi = int(stats["n"].min()), int(stats["n"].max())
    over = f"n = {lo} runs per point" if lo == hi else f"n = {lo}-{hi} runs per point"
    title = f"sweep {sweep}: {m_name}, mean and 95% CI, {over}"
    fig = panels([panel], title=title, panel_size=(6.4, 4.2))
    versions = ", ".join(sorted(set(runs["version"])))
    where = store or os.environ.get("QOSLAB_STORE") or "results/store"
    prov = f"store {where} · sweep {sweep} · seeds {seeds} · qoslab {versions}"
    return fig, prov


# -- saving ---------------------------------------------------------------------------------------


def save(fig: Figure, path: str | Path, provenance: str) -> Path:
    """Writes ``fig`` to ``path`` (PNG, SVG or PDF by its suffix) with ``provenance`` as a footer
    and in the file's metadata; closes the figure."""
    p = Path(path)
    if p.suffix.lower() not in FORMATS:
        raise PlotError(f"{p}: unknown format {p.suffix or '(none)'} (expected {', '.join(FORMATS)})")
    p.parent.mkdir(parents=True, exist_ok=True)
    draw_footer(fig, provenance)
    title = fig.get_suptitle() if hasattr(fig, "get_suptitle") else ""
    fig.savefig(p, dpi=150, metadata=figure_metadata(p.suffix.lower(), title, provenance))
    release_figure(fig)
    return p


__all__ = [
    "FORMATS",
    "PlotError",
    "average_labels",
    "parse_labels",
    "run_figure",
    "sampling_warning",
    "save",
    "select_flows",
    "sweep_figure",
]
