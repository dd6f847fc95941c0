"""Figure kinds shared by the experiments: a figure is a grid of :class:`Panel` s, each a set
of :class:`Line` s (means, with 95 % CI bars when given), labelled :class:`Ref` lines (a
paper's value, a contract, a threshold) and annotations; :func:`panels` lays them out the same
way everywhere. Helpers build the usual lines: a sweep's means against a parameter
(:func:`sweep_line`) or at given points (:func:`estimates_line`), points offset per group at
categories (:func:`grouped`), side-by-side bars (:func:`bar_group`) and a CDF (:func:`cdf`).

Layout rules, so that every figure is legible at the size it is saved: titles are wrapped, the
figure title sits above the panels, a legend shared by all panels goes under the panels instead
of over the data, an empty panel shows its reason as text instead of empty axes, and the
bottom strip is left free for the provenance footer :func:`qoslab.report.save_figure` writes.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias, cast

import numpy as np
import pandas as pd

from qoslab.report import new_figure

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure as Figure  # what panels() returns, for the experiments

#: Height (inches) kept free at the bottom for the provenance footer.
FOOTER_IN = 0.3

#: A line's matplotlib keyword arguments (``color``, ``ls``, ``lw``, ``marker``, …).
Style: TypeAlias = dict[str, Any]


@dataclass
class Line:
    """One series: ``y`` against ``x`` with optional 95 % CI half-widths ``err``."""

    x: Sequence[Any]
    y: Sequence[float]
    label: str | None = None
    err: Sequence[float] | None = None
    style: Style = field(default_factory=dict)
    #: ``"line"`` (points joined unless ``style`` says ``ls="none"``), ``"bar"`` of ``width``, or
    #: ``"area"`` (filled between 0 and ``y``, behind the lines).
    kind: str = "line"
    width: float = 0.8
    #: Horizontal 95 % CI half-widths (e.g. a frontier's utilisation).
    xerr: Sequence[float] | None = None


@dataclass
class Ref:
    """A labelled horizontal reference line (shown in the legend)."""

    y: float
    label: str
    style: dict[str, Any] = field(default_factory=dict)
    #: ``"y"``: a horizontal line at ``y``; ``"x"``: a vertical line at x = ``y``.
    axis: str = "y"


@dataclass
class Panel:
    """One set of axes. ``categories`` puts string labels at x = 0, 1, …; ``empty`` shows a
    sentence instead of axes (e.g. "RIO only: no edge bucket")."""

    lines: list[Line] = field(default_factory=list)
    title: str = ""
    xlabel: str = ""
    ylabel: str = ""
    refs: list[Ref] = field(default_factory=list)
    logx: bool = False
    ylim: tuple[float | None, float | None] | None = None
    categories: Sequence[str] | None = None
    annotations: list[tuple[float, float, str]] = field(default_factory=list)
    empty: str = ""
    #: A short text box in the panel's upper left (e.g. the Jain indices of the series).
    note: str = ""
    #: ``"symlog"`` (linear below 1) or ``"log"``; ``None`` keeps a linear y axis.
    yscale: str | None = None
    #: Tick positions on x, labelled with their values (useful on a log axis).
    xticks: Sequence[float] | None = None
    #: String labels at y = 0, 1, … (long category names read horizontally).
    ycategories: Sequence[str] | None = None


def _wrap(text: str, width: int) -> str:
    return "\n".join(textwrap.wrap(text, width)) if text else ""


def _draw(ax: Axes, p: Panel, title_width: int) -> None:
    if p.empty:
        ax.set_axis_off()
        ax.text(0.5, 0.5, _wrap(p.empty, 40), ha="center", va="center", fontsize=9, color="0.4")
        return
    for ln in p.lines:
        if ln.kind == "bar":
            err = None if ln.err is None else np.nan_to_num(np.asarray(ln.err, dtype=float))
            ax.bar(ln.x, ln.y, ln.width, yerr=err, capsize=2, label=ln.label, **ln.style)
            continue
        if ln.kind == "area":
            ax.fill_between(ln.x, 0, ln.y, label=ln.label, **{"color": "0.85", "zorder": 0, **ln.style})
            continue
        style = {"marker": "o", "markersize": 4, "lw": 1.2, **ln.style}
        if ln.err is not None or ln.xerr is not None:
            err = None if ln.err is None else np.nan_to_num(np.asarray(ln.err, dtype=float))
            xerr = None if ln.xerr is None else np.nan_to_num(np.asarray(ln.xerr, dtype=float))
            ax.errorbar(ln.x, ln.y, yerr=err, xerr=xerr, capsize=3, label=ln.label, **style)
        else:
            ax.plot(ln.x, ln.y, label=ln.label, **style)
    for r in p.refs:
        line = ax.axvline if r.axis == "x" else ax.axhline
        line(r.y, label=r.label, **{"ls": ":", "color": "0.45", "lw": 1.0, **r.style})
    for x, y, text in p.annotations:
        ax.annotate(text, (x, y), textcoords="offset points", xytext=(4, 4), fontsize=7)
    if p.note:
        ax.text(
            0.02,
            0.97,
            p.note,
            transform=ax.transAxes,
            va="top",
            ha="left",
            fontsize=7,
            bbox={"boxstyle": "round", "fc": "white", "ec": "0.7", "alpha": 0.9},
        )
    if p.categories is not None:
        ax.set_xticks(np.arange(len(p.categories)), list(p.categories), fontsize=8)
    if p.ycategories is not None:
        ax.set_yticks(np.arange(len(p.ycategories)), list(p.ycategories), fontsize=7)
        ax.invert_yaxis()
    if p.logx:
        ax.set_xscale("log")
    if p.xticks is not None:
        ax.set_xticks(list(p.xticks), [f"{t:g}" for t in p.xticks])
        ax.minorticks_off()
    if p.yscale == "symlog":
        ax.set_yscale("symlog", linthresh=1)
    elif p.yscale is not None:
        ax.set_yscale(p.yscale)
    if p.ylim is not None:
        ax.set_ylim(*p.ylim)
    ax.set_title(_wrap(p.title, title_width), fontsize=9)
    ax.set_xlabel(p.xlabel, fontsize=9)
    ax.set_ylabel(p.ylabel, fontsize=9)
    ax.tick_params(labelsize=8)
    ax.grid(alpha=0.3)


def panels(
    grid: Sequence[Sequence[Panel]] | Sequence[Panel],
    *,
    title: str,
    panel_size: tuple[float, float] = (4.6, 3.2),
    sharex: bool = False,
) -> Figure:
    """A figure of ``grid`` (rows of panels, or one row); the distinct labels of all panels
    form one legend under the panels."""
    # the first element says which of the two ``grid`` is
    if grid and isinstance(grid[0], Sequence):
        rows = [list(r) for r in cast("Sequence[Sequence[Panel]]", grid)]
    else:
        rows = [list(cast("Sequence[Panel]", grid))]
    nrows, ncols = len(rows), max(len(r) for r in rows)
    w, h = panel_size
    fig, axes = new_figure(
        nrows,
        ncols,
        figsize=(w * ncols, h * nrows + 0.9 + FOOTER_IN),
        squeeze=False,
        sharex=sharex,
        layout="constrained",
    )
    width = max(30, int(w * 11))
    for i, row in enumerate(rows):
        for j in range(ncols):
            ax = axes[i][j]
            if j < len(row):
                _draw(ax, row[j], width)
            else:
                ax.set_axis_off()
    fig.suptitle(_wrap(title, int(w * ncols * 13)), fontsize=11)
    bottom_in = FOOTER_IN
    seen: dict[str, Any] = {}
    for ax in axes.flat:
        for hnd, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            seen.setdefault(lab, hnd)
    if seen:
        # Columns that fit the figure's width at ~7 pt per character of the longest label.
        longest = max(len(lab) for lab in seen)
        fit = max(1, int(w * ncols * 72 / (7 * longest + 40)))
        cols = max(1, min(len(seen), fit))
        legend_rows = -(-len(seen) // cols)
        legend_in = 0.22 * legend_rows + 0.08
        fig.set_figheight(fig.get_figheight() + legend_in - 0.3)
        fig.legend(
            list(seen.values()),
            list(seen.keys()),
            loc="lower center",
            bbox_to_anchor=(0.5, FOOTER_IN / fig.get_figheight()),
            bbox_transform=fig.transFigure,
            ncols=cols,
            fontsize=8,
            frameon=False,
        )
        bottom_in += legend_in
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    height = fig.get_figheight()
    engine = fig.get_layout_engine()
    assert isinstance(engine, ConstrainedLayoutEngine)  # layout="constrained" above
    engine.set(rect=(0, bottom_in / height, 1, 1 - bottom_in / height))
    return fig


def sweep_line(stats: pd.DataFrame, x: str, *, label: str | None, scale: float = 1.0, **style: Any) -> Line:
    """Means against ``x`` with 95 % CIs, from rows of a :func:`qoslab.stats.summarize` table
    (columns ``mean``, ``half_width``) for one metric and one variant."""
    s = stats.sort_values(x)
    return Line(
        list(s[x]),
        list(s["mean"] / scale),
        label,
        err=list(s["half_width"].fillna(0.0) / scale),
        style=style,
    )


def estimates_line(
    xs: Sequence[Any] | np.ndarray,
    estimates: Sequence[Any],
    *,
    label: str | None,
    scale: float = 1.0,
    **style: Any,
) -> Line:
    """A line of :class:`qoslab.stats.Estimate` s (mean ± 95 % CI) at ``xs``."""
    m = [e.mean / scale for e in estimates]
    h = [(e.ci_high - e.mean) / scale if np.isfinite(e.ci_high) else 0.0 for e in estimates]
    return Line(list(xs), m, label, err=h, style=style)


def grouped(
    categories: Sequence[str], groups: Sequence[tuple[str, Sequence[Any]]], *, scale: float = 1.0
) -> list[Line]:
    """Points at categorical positions, one offset series per group: ``groups`` are
    ``(label, estimates per category)``."""
    k = len(groups)
    width = 0.6 / max(k, 1)
    out = []
    for i, (label, es) in enumerate(groups):
        xs = np.arange(len(categories)) + (i - (k - 1) / 2) * width
        line = estimates_line(xs, es, label=label, scale=scale, ls="none")
        out.append(line)
    return out


def bar_group(series: Sequence[tuple[str, Sequence[float], Sequence[float] | None]], n: int) -> list[Line]:
    """Side-by-side bars at categories 0 … ``n``-1, one bar per series: ``series`` are
    ``(label, heights, 95 % CI half-widths or None)``."""
    k = len(series)
    width = 0.8 / max(k, 1)
    return [
        Line(
            list(np.arange(n) + (j - (k - 1) / 2) * width),
            list(heights),
            label,
            err=None if err is None else list(np.nan_to_num(np.asarray(err, dtype=float))),
            kind="bar",
            width=width,
        )
        for j, (label, heights, err) in enumerate(series)
    ]


def cdf(values: Sequence[float], *, label: str | None, **style: Any) -> Line:
    """The empirical CDF of ``values`` as a step line."""
    v = np.sort(np.asarray(values, dtype=float))
    y = np.arange(1, len(v) + 1) / max(len(v), 1)
    return Line(list(v), list(y), label, style={"marker": "", "drawstyle": "steps-post", **style})
