"""Figure kinds shared by the experiments: a figure is a grid of :class:`Panel` s, each a set
of :class:`Line` s (means, with 95 % CI bars when given), labelled :class:`Ref` lines (a
paper's value, a contract, a threshold) and annotations; :func:`panels` lays them out the same
way everywhere. Helpers build the usual lines: a sweep's means against a parameter
(:func:`sweep_line`) or at given points (:func:`estimates_line`), points offset per group at
categories (:func:`grouped`), side-by-side bars (:func:`bar_group`) and a CDF (:func:`cdf`).

Layout rules, so that every figure is legible at the size it is saved: titles are wrapped, the
figure title sits above the panels, a legend shared by all panels goes under the panels instead
of over the data, an empty panel shows its reason as text instead of empty axes, and the
bottom strip is left free for the provenance footer :func:`qoslab.report.page.save_figure` writes.

Honesty rules, so that a figure does not say more than its data:

- an interval of a bounded quantity stays in its bounds: a :class:`Panel` or :class:`Line`
  declares the range (``bounds``; guessed from the y label for Jain's index, utilisation and a
  standard deviation), and the bars are the bootstrap percentile interval of the per-seed
  values (``Line.values``), else the t interval clipped to them (:mod:`qoslab.report.intervals`); the
  x label says which, and :func:`interval_methods` gives the sentence for a caption;
- panels of one quantity (same ``quantity`` or y label) share their y scale (``sharey`` of
  :func:`panels`), and no y span is narrower than :data:`MIN_REL_SPAN` of its magnitude;
- series a reader can tell apart: colours of a colour-blind-safe palette, one per label across
  the figure, and past its seven colours another line style and marker
  (:mod:`qoslab.report.palette`); references kept in view (:mod:`qoslab.report.figure_rules`,
  whose :func:`figure_problems` lists what a panel's own fixed limits or colours break);
- a time series shades its measurement window (``Panel.window``);
- a quick run is stamped across the figure (:func:`qoslab.report.page.draw_footer`);
- titles are the caller's: no helper here writes a claim (:func:`contradicted_title` flags a
  comparative title the plotted means contradict).
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias, cast

import numpy as np
import pandas as pd

from qoslab.report import figure_rules
from qoslab.report.figure_rules import figure_problems as figure_problems
from qoslab.report.intervals import (
    BOOTSTRAP,
    CLIPPED,
    STUDENT,
    Bounds,
    bootstrap_interval,
    clipped_interval,
    describe,
)
from qoslab.report.page import new_figure
from qoslab.report.palette import MIN_DELTA_E as MIN_DELTA_E
from qoslab.report.palette import SERIES_COLOURS, least_delta_e, series_look

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure as Figure  # what panels() returns, for the experiments

#: Height (inches) kept free at the bottom for the provenance footer: three lines of its 6.5 pt
#: text (a figure at most MAX_FIGURE_IN wide wraps about 450 characters of provenance in three).
FOOTER_IN = 0.42

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
    #: The quantity's range (e.g. ``(0, 1)`` for a Jain index, ``(0, None)`` for a standard
    #: deviation); ``None`` takes the panel's. With bounds, the interval is drawn inside them
    #: (:mod:`qoslab.report.intervals`) instead of as mean ± ``err``.
    bounds: Bounds | None = None
    #: The per-seed values at each point: the interval is then their bootstrap percentile
    #: interval (otherwise the t interval ``err``, clipped to the bounds).
    values: Sequence[Sequence[float]] | None = None


@dataclass
class Ref:
    """A labelled horizontal reference line (shown in the legend), or a band from ``y`` to
    ``to``; :func:`panels` keeps it in view (:func:`qoslab.report.figure_rules.fit_references`)."""

    y: float
    label: str
    style: dict[str, Any] = field(default_factory=dict)
    #: ``"y"``: a horizontal line at ``y``; ``"x"``: a vertical line at x = ``y``.
    axis: str = "y"
    #: The other end of a band (e.g. a tested range), shaded between ``y`` and ``to``.
    to: float | None = None


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
    #: The range of the quantity on y, for every line without its own; ``None`` guesses it from
    #: the y label (:func:`guess_bounds`: Jain's index and utilisation in [0, 1], a standard
    #: deviation ≥ 0), ``(None, None)`` says unbounded.
    bounds: Bounds | None = None
    #: The range of the quantity on x, for horizontal intervals (``Line.xerr``); ``None``
    #: guesses it from the x label (a utilisation in [0, 1], or [0, 100] in %).
    xbounds: Bounds | None = None
    #: The measurement window ``(start, end)`` on a time axis, shaded.
    window: tuple[float, float] | None = None
    #: What the y axis measures, for sharing scales (:func:`panels`); ``None``: the y label.
    quantity: str | None = None


def _wrap(text: str, width: int) -> str:
    """``text`` on lines of about ``width`` characters, a short bracketed part ("(paper 0.967)")
    kept whole on one line rather than broken after its opening bracket; a line break the text
    has is kept."""
    if not text:
        return ""
    if "\n" in text:
        return "\n".join(_wrap(part, width) for part in text.split("\n"))
    glue = "\u2060"  # stands for a space inside a short bracketed part while wrapping
    short = re.compile(rf"\([^()]{{1,{max(width // 2, 1)}}}\)")
    kept = short.sub(lambda m: m.group(0).replace(" ", glue), text)
    lines = textwrap.wrap(kept, width, break_long_words=False, break_on_hyphens=False)
    return "\n".join(line.replace(glue, " ") for line in lines)


#: The series colours given out before a line style and marker tell series apart as well.
MAX_CYCLE_SERIES = len(SERIES_COLOURS)
#: The smallest y span shown, relative to the largest |y| limit (a near-constant series at 1.0
#: is drawn as flat on 0.98-1.0, not magnified into noise on 0.9985-1.0005).
MIN_REL_SPAN = 0.02

_BOUNDED_WORDS = (
    (("jain", "fairness index"), (0.0, 1.0)),
    (("utilisation", "utilization"), (0.0, 1.0)),
    (("std", "standard deviation", "spread (σ)"), (0.0, None)),
)


def guess_bounds(ylabel: str) -> Bounds | None:
    """The range of the quantity a y label names: Jain's index and utilisation in [0, 1] (in
    [0, 100] with "%"), a standard deviation ≥ 0; ``None`` for anything else (and for a
    difference, a change or a gain, which may be negative)."""
    low = ylabel.lower()
    if any(w in low for w in ("difference", "change", "δ", "gain", "−", "minus")):
        return None
    for words, (lo, hi) in _BOUNDED_WORDS:
        if any(w in low for w in words):
            if hi is not None and "%" in low:
                return (lo, 100.0)
            return (lo, hi)
    return None


def _panel_bounds(p: Panel) -> Bounds | None:
    """The panel's declared bounds, else those its y label names, else its title's (a panel
    titled "STD of the flows' throughput" over a y label of "kb/s")."""
    if p.bounds is not None:
        return p.bounds
    from_title = guess_bounds(p.title)
    # a title may name another quantity than the axis ("... Jain index 0.986" over kb/s bars):
    # from it, only a lower bound (a standard deviation's 0) is taken, never a [0, 1] range
    return guess_bounds(p.ylabel) or (from_title if from_title and from_title[1] is None else None)


def _inside(y: np.ndarray, b: Bounds) -> bool:
    """Whether every finite mean of ``y`` lies in ``b``."""
    f = y[np.isfinite(y)]
    lo, hi = b
    return bool((lo is None or (f >= lo - 1e-12).all()) and (hi is None or (f <= hi + 1e-12).all()))


def _interval(ln: Line, bounds: Bounds | None) -> tuple[np.ndarray | None, str | None]:
    """The (2, n) error bars of ``ln`` (below, above its y) and how they were computed."""
    y = np.asarray(ln.y, dtype=float)
    b = ln.bounds if ln.bounds is not None else bounds
    if b == (None, None):
        b = None
    if ln.values is not None:
        ends = np.array(
            [bootstrap_interval(list(v), b or (None, None)) for v in ln.values], dtype=float
        ).reshape(-1, 2)
        return np.nan_to_num(np.clip(np.stack([y - ends[:, 0], ends[:, 1] - y]), 0.0, None)), BOOTSTRAP
    if ln.err is None:
        return None, None
    half = np.nan_to_num(np.asarray(ln.err, dtype=float))
    if b is not None and not _inside(y, b):
        b = None  # means outside the range: the range is not this quantity's
    if b is None:
        return np.stack([half, half]), STUDENT
    ends3 = [clipped_interval(float(m), float(h), b) for m, h in zip(y, half, strict=True)]
    lows = np.array([e[0] for e in ends3], dtype=float)
    highs = np.array([e[1] for e in ends3], dtype=float)
    method = next((e[2] for e in ends3 if e[2] != STUDENT), ends3[0][2] if ends3 else STUDENT)
    return np.nan_to_num(np.clip(np.stack([y - lows, highs - y]), 0.0, None)), method


def _xerr(ln: Line, bounds: Bounds | None) -> np.ndarray | None:
    """The (2, n) horizontal error bars of ``ln``, clipped to ``bounds``."""
    if ln.xerr is None:
        return None
    x = np.asarray(ln.x, dtype=float)
    half = np.nan_to_num(np.asarray(ln.xerr, dtype=float))
    lo, hi = x - half, x + half
    if bounds is not None and bounds[0] is not None:
        lo = np.maximum(lo, bounds[0])
    if bounds is not None and bounds[1] is not None:
        hi = np.minimum(hi, bounds[1])
    out: np.ndarray = np.clip(np.stack([x - lo, hi - x]), 0.0, None)
    return out


#: Where an annotation goes beside its point (offset points), tried in turn until its text keeps
#: clear of the ones already placed.
_ANNOTATION_OFFSETS = ((4, 4), (4, -11), (-12, 4), (-12, -11), (4, 14), (4, -21))


def _annotate(ax: Axes, notes: Sequence[tuple[float, float, str]]) -> None:
    """Writes each note beside its point, at the first offset whose label box (estimated from
    the text's length at 7 pt) overlaps no label already written: two curves' points at one
    place no longer print their numbers on top of one another ("4 4")."""
    placed: list[tuple[float, float, float, float]] = []
    scale = ax.figure.dpi / 72.0
    for x, y, text in notes:
        px, py = ax.transData.transform((x, y))
        w, h = (4.3 * len(text) + 2) * scale, 9 * scale
        offset = _ANNOTATION_OFFSETS[0]
        for dx, dy in _ANNOTATION_OFFSETS:
            box = (px + dx * scale, py + dy * scale, w, h)
            if not any(
                abs(box[0] - b[0]) < max(box[2], b[2]) and abs(box[1] - b[1]) < max(box[3], b[3])
                for b in placed
            ):
                offset = (dx, dy)
                break
        placed.append((px + offset[0] * scale, py + offset[1] * scale, w, h))
        ax.annotate(text, (x, y), textcoords="offset points", xytext=offset, fontsize=7)


def _draw(ax: Axes, p: Panel, title_width: int, looks: dict[int, Style]) -> None:
    if p.empty:
        ax.set_axis_off()
        ax.text(0.5, 0.5, _wrap(p.empty, 40), ha="center", va="center", fontsize=9, color="0.4")
        return
    bounds = _panel_bounds(p)
    methods: dict[str, None] = {}
    if p.window is not None:
        ax.axvspan(*p.window, color="0.93", zorder=0, lw=0, label="measurement window")
    for ln in p.lines:
        colour = looks.get(id(ln), {})
        err, method = _interval(ln, bounds) if ln.kind != "area" else (None, None)
        if method is not None:
            methods[method] = None
        if ln.kind == "bar":
            ax.bar(ln.x, ln.y, ln.width, yerr=err, capsize=2, label=ln.label, **{**colour, **ln.style})
            continue
        if ln.kind == "area":
            ax.fill_between(ln.x, 0, ln.y, label=ln.label, **{"color": "0.85", "zorder": 0, **ln.style})
            continue
        style = {"marker": "o", "markersize": 4, "lw": 1.2, **colour, **ln.style}
        if err is not None or ln.xerr is not None:
            xerr = _xerr(ln, p.xbounds if p.xbounds is not None else guess_bounds(p.xlabel))
            ax.errorbar(ln.x, ln.y, yerr=err, xerr=xerr, capsize=3, label=ln.label, **style)
        else:
            ax.plot(ln.x, ln.y, label=ln.label, **style)
    for r in p.refs:
        if r.to is not None:
            span = ax.axvspan if r.axis == "x" else ax.axhspan
            band = {"color": "0.45", "alpha": 0.15, "lw": 0, "zorder": 0.5, **r.style}
            span(min(r.y, r.to), max(r.y, r.to), label=r.label, gid=figure_rules.REF_GID, **band)
            continue
        line = ax.axvline if r.axis == "x" else ax.axhline
        style = {"ls": ":", "color": "0.45", "lw": 1.0, **r.style}
        line(r.y, label=r.label, gid=figure_rules.REF_GID, **style)
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
        cats = list(p.categories)
        # many or long category names would run into one another level: slant them
        slant = len(cats) > 4 and max(len(c) for c in cats) * len(cats) > 45
        ax.set_xticks(np.arange(len(cats)), cats, fontsize=8)
        if slant:
            ax.tick_params(axis="x", labelrotation=30)
            for t in ax.get_xticklabels():
                t.set_horizontalalignment("right")
                t.set_rotation_mode("anchor")
    if p.ycategories is not None:
        ax.set_yticks(np.arange(len(p.ycategories)), list(p.ycategories), fontsize=7)
        ax.invert_yaxis()
    if p.logx:
        from matplotlib.ticker import FuncFormatter, NullFormatter

        ax.set_xscale("log")
        # plain numbers at the major ticks and no minor labels: matplotlib's default for a
        # short log range labels minor ticks "3×10¹4×10¹", run together
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
    if p.xticks is not None:
        ax.set_xticks(list(p.xticks), [f"{t:g}" for t in p.xticks])
        ax.minorticks_off()
    if p.yscale == "symlog":
        ax.set_yscale("symlog", linthresh=1)
    elif p.yscale is not None:
        ax.set_yscale(p.yscale)
    if p.ylim is not None:
        ax.set_ylim(*p.ylim)
    if p.annotations:
        ax.autoscale_view()  # the limits the points will be drawn at, before placing the notes
        _annotate(ax, p.annotations)
    ax.set_title(_wrap(p.title, title_width), fontsize=9)
    # how the bars were made, under the x label: "95 % CI: Student t, clipped to [0, 1]"
    if CLIPPED in methods:  # the clip is a no-op for the others
        methods.pop(STUDENT, None)
    said = "; ".join(describe(m, None if m == STUDENT else bounds) for m in methods)
    ax.set_xlabel(p.xlabel + (f"\n{said}" if said else ""), fontsize=9 if not said else 8)
    ax.set_ylabel(p.ylabel, fontsize=9)
    ax.tick_params(labelsize=8)
    ax.grid(alpha=0.3)


def interval_methods(grid: Sequence[Sequence[Panel]] | Sequence[Panel]) -> str:
    """What the error bars of ``grid`` are, as a caption sentence ("Bars: 95 % CI: bootstrap
    percentile, inside [0, 1]."); empty without bars."""
    said: dict[str, None] = {}
    for p in [q for row in _rows(grid) for q in row]:
        bounds = _panel_bounds(p)
        for ln in p.lines:
            _, m = _interval(ln, bounds)
            if m is not None:
                said[describe(m, None if m == STUDENT else (ln.bounds or bounds))] = None
    return ("Bars: " + "; ".join(said) + ".") if said else ""


#: The widest figure a page shows at its natural size (inches): the site's column is 876 px,
#: and a figure drawn wider shows its 8 pt text below 12 px there (tests/test_site_browser.py).
MAX_FIGURE_IN = 8.0


def fit_width(rows: list[list[Panel]], panel_w: float) -> tuple[list[list[Panel]], float]:
    """Rows and a panel width that keep the figure within :data:`MAX_FIGURE_IN`: a row wider
    than that is split into rows of as many panels as fit (two of panels 3.5 in or wider, each
    then narrowed to half the width), in their order; a single panel wider than the limit is
    narrowed to it."""
    ncols = max(len(r) for r in rows)
    if panel_w * ncols <= MAX_FIGURE_IN:
        return rows, panel_w
    per_row = 2 if panel_w >= 3.5 else max(1, int(MAX_FIGURE_IN // panel_w))
    per_row = min(per_row, ncols)
    out = [r[i : i + per_row] for r in rows for i in range(0, len(r), per_row)]
    return out, min(panel_w, MAX_FIGURE_IN / per_row)


def _rows(grid: Sequence[Sequence[Panel]] | Sequence[Panel]) -> list[list[Panel]]:
    # the first element says which of the two ``grid`` is
    if grid and isinstance(grid[0], Sequence):
        return [list(r) for r in cast("Sequence[Sequence[Panel]]", grid)]
    return [list(cast("Sequence[Panel]", grid))]


def _colours(rows: list[list[Panel]]) -> dict[int, Style]:
    """The look of every series without a colour of its own: one per label across the figure
    (its legend is shared), an unlabelled series one of its own in its panel; given out in turn
    from :data:`~qoslab.report.palette.SERIES_COLOURS`, less those a reader would confuse with a
    colour another series was given, and past them with another line style and marker
    (:func:`~qoslab.report.palette.series_look`), so no two series share colour and style."""
    lines = [ln for row in rows for p in row for ln in p.lines if ln.kind != "area"]
    given = {str(c): c for ln in lines if (c := ln.style.get("color", ln.style.get("c"))) is not None}
    usable = [c for c in SERIES_COLOURS if all(least_delta_e(c, g)[0] >= MIN_DELTA_E for g in given.values())]
    free = [
        [ln for ln in p.lines if ln.kind != "area" and "color" not in ln.style and "c" not in ln.style]
        for row in rows
        for p in row
    ]
    labels = list(
        dict.fromkeys(ln.label for series in free for ln in series if ln.label and ln.label[0] != "_")
    )
    at = {lab: i for i, lab in enumerate(labels)}
    out: dict[int, Style] = {}
    for panel_lines in free:
        others = len(labels)
        for ln in panel_lines:
            if ln.label in at:
                i = at[ln.label]
            else:
                i, others = others, others + 1
            out[id(ln)] = series_look(i, ln.kind, tuple(usable) or SERIES_COLOURS)
    return out


def _fit_suptitle(fig: Figure, title: str, chars: int) -> None:
    """The figure's title wrapped at ``chars`` characters a line, then at fewer until its widest
    line, as drawn, fits the figure with a margin: a character count alone let an 8 in figure's
    title run off both edges (its 11 pt letters are wider than the count assumed)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(fig).get_renderer()  # type: ignore[no-untyped-call]
    room = 0.96 * fig.get_figwidth() * fig.dpi
    while True:
        text = fig.suptitle(_wrap(title, chars), fontsize=11)
        if chars <= 20 or text.get_window_extent(renderer).width <= room:
            return
        chars = int(chars * 0.9)


def _shareable(p: Panel) -> bool:
    return not p.empty and p.ylim is None and p.yscale is None and p.ycategories is None and bool(p.lines)


def _scale_axes(pairs: list[tuple[Axes, Panel]], sharey: bool | None) -> None:
    """Shares y limits among panels of one quantity (all panels with ``sharey=True``, none with
    ``False``), then widens any y span narrower than :data:`MIN_REL_SPAN` of its magnitude."""
    groups: dict[str, list[Axes]] = {}
    if sharey is not False:
        for ax, p in pairs:
            if _shareable(p):
                key = "" if sharey else (p.quantity if p.quantity is not None else p.ylabel)
                if sharey or key:
                    groups.setdefault(key, []).append(ax)
    for axes in groups.values():
        if len(axes) > 1:
            lims = [ax.get_ylim() for ax in axes]
            lo, hi = min(a for a, _ in lims), max(b for _, b in lims)
            for ax in axes:
                ax.set_ylim(lo, hi)
    for ax, p in pairs:
        if not _shareable(p):
            continue
        lo, hi = ax.get_ylim()
        need = MIN_REL_SPAN * max(abs(lo), abs(hi))
        if hi - lo >= need or need == 0:
            continue
        mid = (lo + hi) / 2
        lo, hi = mid - need / 2, mid + need / 2
        b = _panel_bounds(p)
        pad = 0.05 * need
        if b is not None and b[1] is not None and hi > b[1] + pad:
            lo, hi = lo - (hi - b[1] - pad), b[1] + pad
        if b is not None and b[0] is not None and lo < b[0] - pad:
            lo, hi = b[0] - pad, hi + (b[0] - pad - lo)
        ax.set_ylim(lo, hi)


def panels(
    grid: Sequence[Sequence[Panel]] | Sequence[Panel],
    *,
    title: str,
    panel_size: tuple[float, float] = (4.6, 3.2),
    sharex: bool = False,
    sharey: bool | None = None,
) -> Figure:
    """A figure of ``grid`` (rows of panels, or one row), at most :data:`MAX_FIGURE_IN` wide
    (:func:`fit_width`); the distinct labels of all panels form one legend under the panels.
    ``sharey``: ``None`` (default) gives panels of the same quantity (their ``quantity``, else
    their y label) one y scale, ``True`` all panels, ``False`` none; panels with their own
    ``ylim``, a log y or y categories keep theirs. What the figure rules found that could not
    be fixed (a reference a fixed ``ylim`` cuts off, series that look alike):
    :func:`figure_problems`."""
    rows, w = fit_width(_rows(grid), panel_size[0])
    h = panel_size[1]
    nrows, ncols = len(rows), max(len(r) for r in rows)
    fig, axes = new_figure(
        nrows,
        ncols,
        figsize=(w * ncols, h * nrows + 0.9 + FOOTER_IN),
        squeeze=False,
        sharex=sharex,
        layout="constrained",
    )
    width = max(30, int(w * 11))
    colours = _colours(rows)
    drawn: list[tuple[Axes, Panel]] = []
    for i, row in enumerate(rows):
        for j in range(ncols):
            ax = axes[i][j]
            if j < len(row):
                _draw(ax, row[j], width, colours)
                drawn.append((ax, row[j]))
            else:
                ax.set_axis_off()
    figure_rules.fit_references(drawn)  # before sharing scales: a widened panel widens its group
    _scale_axes(drawn, sharey)
    problems = figure_rules.fit_references(drawn)
    _fit_suptitle(fig, title, int(w * ncols * 13))
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
    names = {ax: figure_rules.panel_name(p, k) for k, (ax, p) in enumerate(drawn)}
    figure_rules.record(fig, [*problems, *figure_rules.colour_problems(fig, names)])
    return fig


def sweep_line(
    stats: pd.DataFrame,
    x: str,
    *,
    label: str | None,
    scale: float = 1.0,
    bounds: Bounds | None = None,
    **style: Any,
) -> Line:
    """Means against ``x`` with 95 % CIs, from rows of a :func:`qoslab.stats.summarize` table
    (columns ``mean``, ``half_width``) for one metric and one variant; ``bounds``: the
    quantity's range (in the scaled unit), see :class:`Line`."""
    s = stats.sort_values(x)
    return Line(
        list(s[x]),
        list(s["mean"] / scale),
        label,
        err=list(s["half_width"].fillna(0.0) / scale),
        style=style,
        bounds=bounds,
    )


def estimates_line(
    xs: Sequence[Any] | np.ndarray,
    estimates: Sequence[Any],
    *,
    label: str | None,
    scale: float = 1.0,
    bounds: Bounds | None = None,
    values: Sequence[Sequence[float]] | None = None,
    **style: Any,
) -> Line:
    """A line of :class:`qoslab.stats.Estimate` s (mean ± 95 % CI) at ``xs``; ``bounds``: the
    quantity's range, ``values``: the per-seed values behind each estimate (unscaled; their
    bootstrap interval is drawn instead), see :class:`Line`."""
    m = [e.mean / scale for e in estimates]
    h = [(e.ci_high - e.mean) / scale if np.isfinite(e.ci_high) else 0.0 for e in estimates]
    per_seed = None if values is None else [[v / scale for v in vs] for vs in values]
    return Line(list(xs), m, label, err=h, style=style, bounds=bounds, values=per_seed)


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


#: Words by which a title claims that a series does better than another.
#: (word beginnings: "helps", "improves", "gains")
CLAIM_WORDS = ("help", "improv", "better", "fairer", "outperform", "gain", "beat")


def contradicted_title(
    title: str, lines: Sequence[Line], baseline: str, *, higher_is_better: bool = True
) -> str:
    """Why ``title`` claims more than ``lines`` show, or ``""``: a title with a claim word
    (:data:`CLAIM_WORDS`) over series that are worse than the ``baseline`` series (by its
    label) at some x they share. A check for the experiments' tests; no helper here writes a
    claim into a title."""
    if not re.search(r"\b(" + "|".join(CLAIM_WORDS) + ")", title.lower()):
        return ""
    base = next((ln for ln in lines if ln.label == baseline), None)
    if base is None:
        return ""
    ref = {x: float(y) for x, y in zip(base.x, base.y, strict=True)}
    worse: list[str] = []
    for ln in lines:
        if ln is base:
            continue
        for x, y in zip(ln.x, ln.y, strict=True):
            if x in ref and np.isfinite(y) and np.isfinite(ref[x]):
                if (float(y) < ref[x]) if higher_is_better else (float(y) > ref[x]):
                    worse.append(f"{ln.label} at {x}")
    if not worse:
        return ""
    return (
        f"title {title!r} claims what {len(worse)} point(s) contradict "
        f"({', '.join(worse[:4])} worse than {baseline})"
    )
