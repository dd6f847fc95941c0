"""Rules a drawn figure of :mod:`qoslab.report.figures` is checked against, beyond the layout
it gets by construction. :func:`qoslab.report.figures.panels` applies them and records what it
could not fix; :func:`figure_problems` gives that list (empty for a clean figure), in sentences,
as :func:`qoslab.report.figures.contradicted_title` does for a title.

- **References stay in view** (:func:`fit_references`): every :class:`~qoslab.report.figures.Ref`
  line, and the whole of a band (``Ref.to``), lies inside its axis, off the frame. An axis side
  the panel did not fix is widened to show it; a side fixed by ``Panel.ylim`` is kept (the
  author chose it) and the reference it cuts off is a problem, as is a reference at or below 0
  on a log axis.
- **Series are told apart** (:func:`colour_problems`): two series of the legend, or of one panel,
  differ in colour by at least :data:`~qoslab.report.palette.MIN_DELTA_E` (CIEDE2000) with
  normal vision, deuteranopia and protanopia, or else in line style, marker or hatch; and no
  series is drawn in a colour that barely differs from the axes' background (a near-white line).
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from qoslab.report.palette import MIN_DELTA_E, delta_e, least_delta_e

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


class RefLike(Protocol):
    """What the rules read of a :class:`qoslab.report.figures.Ref` (not imported: figures
    imports this module)."""

    @property
    def y(self) -> float: ...
    @property
    def to(self) -> float | None: ...
    @property
    def label(self) -> str: ...
    @property
    def axis(self) -> str: ...


class PanelLike(Protocol):
    """What the rules read of a :class:`qoslab.report.figures.Panel`."""

    @property
    def title(self) -> str: ...
    @property
    def empty(self) -> str: ...
    @property
    def ylim(self) -> tuple[float | None, float | None] | None: ...
    @property
    def refs(self) -> Sequence[RefLike]: ...


#: The gid of the artists that draw a panel's references (not series: the colour rule skips them).
REF_GID = "qoslab-ref"
#: The least room between a reference and the axis frame, as a fraction of the axis span: a
#: line on the frame is hidden by the spine.
EDGE = 0.005
#: The room given to a reference when an axis is widened for it (matplotlib's own margin).
MARGIN = 0.05

_PROBLEMS: weakref.WeakKeyDictionary[Figure, list[str]] = weakref.WeakKeyDictionary()


def figure_problems(fig: Figure) -> list[str]:
    """What the rules found wrong with ``fig`` that :func:`~qoslab.report.figures.panels` could
    not fix (empty for a clean figure, or one it did not draw)."""
    return list(_PROBLEMS.get(fig, []))


def record(fig: Figure, problems: Sequence[str]) -> None:
    _PROBLEMS[fig] = list(problems)


def panel_name(p: PanelLike, k: int) -> str:
    """How a problem names the ``k``-th panel (from 0): its title's first line, else its number."""
    return repr(p.title.split("\n")[0]) if p.title else f"#{k + 1}"


def fit_references(pairs: Sequence[tuple[Axes, PanelLike]]) -> list[str]:
    """Widens each axis side the panel did not fix until its references (lines, and bands
    whole) are in view; returns the references a fixed side (``Panel.ylim``) or a log axis
    keeps out of view."""
    problems: list[str] = []
    for k, (ax, p) in enumerate(pairs):
        for r in p.refs if not p.empty else []:
            ends = (r.y, r.y if r.to is None else r.to)
            lo, hi = min(ends), max(ends)
            what = f"{'band' if r.to is not None else 'reference'} {r.label!r} at {r.axis} = " + (
                f"{lo:g}-{hi:g}" if hi > lo else f"{lo:g}"
            )
            axis = ax.xaxis if r.axis == "x" else ax.yaxis
            get, put = (ax.get_xlim, ax.set_xlim) if r.axis == "x" else (ax.get_ylim, ax.set_ylim)
            if axis.get_scale() in ("log", "logit") and lo <= 0:
                problems.append(f"panel {panel_name(p, k)}: {what} cannot be shown on a log axis")
                continue
            fixed = (
                (False, False)
                if r.axis == "x" or p.ylim is None
                else (p.ylim[0] is not None, p.ylim[1] is not None)
            )
            scaled = axis.get_transform().transform
            lims = get()
            inverted = lims[0] > lims[1]
            a, b = (lims[1], lims[0]) if inverted else lims
            sa, sb = (float(v) for v in scaled(np.array([a, b], dtype=float)))
            slo, shi = (float(v) for v in scaled(np.array([lo, hi], dtype=float)))
            room = EDGE * (sb - sa)
            below, above = slo < sa + room, shi > sb - room
            if not below and not above:
                continue
            if (below and fixed[0]) or (above and fixed[1]):
                part = " (only part of it shows)" if slo < sb and shi > sa and hi > lo else ""
                inside = sa <= slo and shi <= sb
                where = (
                    f"{'on the frame of' if inside else 'outside'} the fixed {r.axis} range [{a:g}, {b:g}]"
                )
                problems.append(f"panel {panel_name(p, k)}: {what} is {where}{part}")
                continue
            span = max(shi, sb) - min(slo, sa)
            new_a = min(sa, slo - MARGIN * span) if below else sa
            new_b = max(sb, shi + MARGIN * span) if above else sb
            inv = axis.get_transform().inverted().transform
            da, db = (float(v) for v in inv(np.array([new_a, new_b], dtype=float)))
            put((db, da) if inverted else (da, db))
    return problems


def _is_drawn(value: Any) -> bool:
    return value not in (None, "None", "none", "", " ")


def _looks(ax: Axes) -> list[tuple[str, Any, tuple[Any, ...]]]:
    """The legend entries of ``ax``'s series, in drawing order: (label, colour, how it is drawn
    apart from its colour: the dash pattern when a line is drawn, the marker, or a bar's hatch).
    References, areas and unlabelled artists (matplotlib's "_…" labels) are not series."""
    from matplotlib.container import BarContainer, ErrorbarContainer
    from matplotlib.lines import Line2D

    out: list[tuple[str, Any, tuple[Any, ...]]] = []
    inside: set[int] = set()

    def line(label: str, ln: Line2D) -> None:
        dash = getattr(ln, "_unscaled_dash_pattern", None) if _is_drawn(ln.get_linestyle()) else None
        marker = ln.get_marker() if _is_drawn(ln.get_marker()) else None
        if dash is not None or marker is not None:
            out.append((label, ln.get_color(), ("line", str(dash), str(marker))))

    for c in ax.containers:
        label = str(c.get_label() or "")
        if isinstance(c, ErrorbarContainer):
            inside.update(id(a) for a in c.get_children())
            data = c.lines[0]
            if isinstance(data, Line2D) and not label.startswith("_") and data.get_gid() != REF_GID:
                line(label, data)
        elif isinstance(c, BarContainer) and c.patches and not label.startswith("_"):
            inside.update(id(a) for a in c.patches)
            bar = c.patches[0]
            out.append((label, bar.get_facecolor(), ("bar", bar.get_hatch() or "")))
    for ln in ax.get_lines():
        label = str(ln.get_label())
        if id(ln) not in inside and ln.get_gid() != REF_GID and not label.startswith("_"):
            line(label, ln)
    return out


def _confused(a: tuple[str, Any, tuple[Any, ...]], b: tuple[str, Any, tuple[Any, ...]]) -> str:
    """Why series ``a`` and ``b`` cannot be told apart, or ``""``."""
    if a[0] == b[0] or a[2] != b[2]:
        return ""
    d, vision = least_delta_e(a[1], b[1])
    if d >= MIN_DELTA_E:
        return ""
    normal = delta_e(a[1], b[1])
    seen = f"{normal:.1f} with normal vision" + (f", {d:.1f} with {vision}" if vision else "")
    return (
        f"{a[0]!r} and {b[0]!r} differ neither in line style, marker nor hatch, and in colour by "
        f"ΔE {seen} (< {MIN_DELTA_E:g})"
    )


def colour_problems(fig: Figure, names: Mapping[Axes, str] | None = None) -> list[str]:
    """Pairs of series of ``fig`` a reader cannot tell apart (in one panel, or in the legend
    the panels share: a label's look where it is first drawn) and series barely visible on their
    background; ``names``: what to call the panels (by their axes; else their numbers)."""
    problems: list[str] = []
    said: set[frozenset[str]] = set()
    first: dict[str, tuple[str, Any, tuple[Any, ...]]] = {}
    for k, ax in enumerate(a for a in fig.axes if a.axison):
        where = f"panel {names[ax]}" if names is not None and ax in names else f"panel #{k + 1}"
        looks = _looks(ax)
        for i, a in enumerate(looks):
            first.setdefault(a[0], a)
            for b in looks[i + 1 :]:
                why = _confused(a, b)
                if why and frozenset((a[0], b[0])) not in said:
                    said.add(frozenset((a[0], b[0])))
                    problems.append(f"{where}: {why}")
            back = delta_e(a[1], ax.get_facecolor())
            if back < MIN_DELTA_E and frozenset((a[0],)) not in said:
                said.add(frozenset((a[0],)))
                problems.append(f"{where}: {a[0]!r} is barely visible on the background (ΔE {back:.1f})")
    legend = list(first.values())
    for i, a in enumerate(legend):
        for b in legend[i + 1 :]:
            why = _confused(a, b)
            if why and frozenset((a[0], b[0])) not in said:
                said.add(frozenset((a[0], b[0])))
                problems.append(f"legend: {why}")
    return problems
