"""Plots of a user's own runs and sweeps (``qoslab plot``), built from the figure kinds of
:mod:`qoslab.figures` so that they look like the experiments' figures.

- :func:`run_figure`: the time series of one run directory (``qoslab run --out DIR``): the
  bottleneck's queue and its AQM average, each flow's congestion window and throughput.
- :func:`sweep_figure`: any stored metric against any swept key, mean ± 95 % CI over seeds,
  one line per value of another swept key (``by``).
- :func:`save`: writes a figure as PNG, SVG or PDF (by the file's suffix) with a provenance
  footer (scenario, seeds, qoslab version).

>>> fig, prov = run_figure("results/demo")                                   # doctest: +SKIP
>>> save(fig, "queue.png", prov)                                             # doctest: +SKIP
>>> fig, prov = sweep_figure("results/store", "fdd-red-s1", "fairness_index",
...                          x="link.bottleneck.queue_ab.limit")             # doctest: +SKIP
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from qoslab.figures import Line, Panel, panels
from qoslab.report import draw_footer, figure_metadata, release_figure
from qoslab.stats import seed_ranges, summarize

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: Formats :func:`save` writes, by suffix.
FORMATS = (".png", ".svg", ".pdf")
#: Flows drawn one by one in a run's figure; beyond, the first ones (the title says so).
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
    return pd.read_parquet(path)


def _bottleneck_queue(summary: dict[str, Any], queues: pd.DataFrame) -> str:
    """The measured bottleneck's busier direction (``link:ab`` or ``link:ba``)."""
    name = str(summary.get("bottleneck", ""))
    util = summary.get("utilization_by_link", {})
    both = [q for q in (f"{name}:ab", f"{name}:ba") if q in set(queues["queue"])]
    if not both:
        return str(queues["queue"].iloc[0])
    return max(both, key=lambda q: util.get(q, 0.0))


def run_figure(run_dir: str | Path) -> tuple[Figure, str]:
    """The figure of one run directory and its provenance line: queue (instantaneous and the
    AQM's average) at the bottleneck, cwnd per flow, throughput per flow."""
    d = Path(run_dir)
    if not d.is_dir():
        raise PlotError(f"{d}: no such run directory")
    if not (d / "summary.json").is_file():
        raise PlotError(f"{d}: no summary.json (a directory written by `qoslab run --out DIR`?)")
    try:
        summary = json.loads((d / "summary.json").read_text())
    except (OSError, ValueError) as e:
        raise PlotError(f"{d}/summary.json: {e}") from None
    sq, sf = _read(d, "series_queue"), _read(d, "series_flow")
    if sq.empty or sf.empty:
        raise PlotError(f"{d}: the run recorded no time series (measurement.interval longer than the run?)")
    q = _bottleneck_queue(summary, sq)
    one = sq[(sq["queue"] == q) & (sq["physical_queue"] == sq[sq["queue"] == q]["physical_queue"].min())]
    queue = Panel(
        [
            Line(
                list(one["time_s"]),
                list(one["queue_packets"]),
                "instantaneous queue",
                style={"lw": 0.8, "marker": "none", "color": "0.6"},
            ),
            Line(
                list(one["time_s"]),
                list(one["avg_queue"]),
                "AQM average",
                style={"lw": 1.6, "marker": "none", "color": "black"},
            ),
        ],
        title=f"queue at {q}",
        xlabel="time (s)",
        ylabel="queue (packets)",
    )
    names = list(dict.fromkeys(sf["flow_name"]))
    shown = names[:MAX_FLOWS]
    cwnd, thr = Panel(title="congestion window per flow"), Panel(title="throughput per flow")
    for n in shown:
        f = sf[sf["flow_name"] == n]
        if f["cwnd"].notna().any():
            cwnd.lines.append(
                Line(list(f["time_s"]), list(f["cwnd"]), n, style={"lw": 0.9, "marker": "none"})
            )
        thr.lines.append(
            Line(list(f["time_s"]), list(f["throughput_bps"] / 1e6), n, style={"lw": 0.9, "marker": "none"})
        )
    cwnd.xlabel = thr.xlabel = "time (s)"
    cwnd.ylabel, thr.ylabel = "cwnd (packets)", "throughput (Mbit/s)"
    if not cwnd.lines:
        cwnd.empty = "no cwnd recorded (measurement.cwnd = false, or no TCP flow)"
    more = f" (the first {len(shown)} of {len(names)} flows)" if len(names) > len(shown) else ""
    title = (
        f"{summary.get('scenario', d.name)}, seed {summary.get('seed', '?')}: queue, cwnd and "
        f"throughput over time{more}"
    )
    fig = panels([[queue, cwnd, thr]], title=title, panel_size=(4.6, 3.2))
    prov = (
        f"{d} · scenario {summary.get('scenario', '?')} ({str(summary.get('scenario_sha256', ''))[:12]}) · "
        f"seed {summary.get('seed', '?')} · qoslab {summary.get('version', '?')}"
    )
    return fig, prov


# -- a sweep --------------------------------------------------------------------------------------


def _metric_unit(metric: str) -> tuple[str, float]:
    if metric.startswith(("drops", "retransmitted", "timeouts")) and not metric.endswith("_pps"):
        return "packets", 1.0
    for suffix, unit, div in _UNITS:
        if metric.endswith(suffix):
            return unit, div
    return "", 1.0


def sweep_figure(
    store: str | Path | None,
    sweep: str,
    metric: str,
    *,
    x: str,
    by: str | None = None,
) -> tuple[Figure, str]:
    """``metric`` of the stored runs of ``sweep`` against the swept key ``x``: mean ± 95 %
    Student-t CI over seeds, one line per value of the swept key ``by`` (if given)."""
    from qoslab import results

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
        raise PlotError(f"no metric {metric!r} in sweep {sweep!r} (have: {', '.join(sorted(have))})")
    keys = [x] + ([by] if by else [])
    stats = summarize(runs, [metric], by=keys)
    # swept values come typed (results.typed_column): numbers are placed by value, the unit is in
    # the column's name; anything else is a category, in the order of the grid
    numeric = runs[x].dtype.kind in "iuf"
    order = list(dict.fromkeys(runs[x].astype(str)))
    x_unit = x[len(x_key) + 1 :]
    unit, div = _metric_unit(metric)
    panel = Panel(
        title=f"{metric} against {x_key}",
        xlabel=f"{x_key} ({x_unit})" if x_unit else x_key,
        ylabel=f"{metric} ({unit})" if unit else metric,
    )
    if not numeric:
        panel.categories = order
    pos = {v: (float(v) if numeric else float(i)) for i, v in enumerate(order)}
    # (value of ``by``, its rows): the value is only shown
    groups: list[tuple[object, pd.DataFrame]] = (
        [(None, stats)] if by is None else list(stats.groupby(by, sort=False))
    )
    for label, g in groups:
        g = g.assign(_pos=[pos[v] for v in g[x].astype(str)]).sort_values("_pos")
        panel.lines.append(
            Line(
                list(g["_pos"]),
                list(g["mean"] / div),
                None if by is None else f"{by_key} = {label}{by_unit}",
                err=list(g["half_width"].fillna(0.0) / div),
                style={"marker": "o", "markersize": 4},
            )
        )
    seeds = seed_ranges(runs["seed"])
    n = stats["n"].min()
    title = f"sweep {sweep}: {metric} (mean ± 95% CI over {n}{'+' if stats['n'].max() > n else ''} seeds)"
    fig = panels([panel], title=title, panel_size=(6.4, 4.2))
    versions = ", ".join(sorted(set(runs["version"])))
    prov = f"store {store or 'results/store'} · sweep {sweep} · seeds {seeds} · qoslab {versions}"
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


__all__ = ["FORMATS", "PlotError", "run_figure", "save", "sweep_figure"]
