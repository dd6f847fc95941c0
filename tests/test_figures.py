"""The shared figure kinds (python/qoslab/report/figures.py): the layout rules hold on a crowded figure
(legend under the panels and clear of both the axes and the provenance footer, title above the
panels, an empty panel shows its reason)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from qoslab.report.figures import (
    MAX_FIGURE_IN,
    Line,
    Panel,
    Ref,
    bar_group,
    cdf,
    contradicted_title,
    guess_bounds,
    interval_methods,
    panels,
)
from qoslab.report.page import save_figure


def _boxes(fig):  # noqa: ANN001, ANN202
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    r = canvas.get_renderer()
    axes = [ax.get_window_extent(r) for ax in fig.axes if ax.axison]
    legend = fig.legends[0].get_window_extent(r)
    title = fig._suptitle.get_window_extent(r)
    footer = fig.texts[-1].get_window_extent(r)
    return axes, legend, title, footer


def test_legend_title_and_footer_do_not_overlap(tmp_path: Path) -> None:
    x = np.arange(5)
    long = "a label long enough to need its own column in the shared legend"
    grid = [
        [
            Panel([Line(x, x * k, f"{long} {k}", err=x * 0.1)], title="t " * 40, refs=[Ref(2, "reference")])
            for k in range(3)
        ],
        [Panel(bar_group([("bars", [1, 2, 3], [0.1, 0.2, 0.3])], 3), categories=["a", "b", "c"])],
    ]
    fig = panels(grid, title="A figure title " * 8)
    save_figure(fig, tmp_path, "crowded", "crowded", "provenance " * 30)
    axes, legend, title, footer = _boxes(fig)
    assert (tmp_path / "crowded.png").stat().st_size > 0
    assert legend.y0 > footer.y1, (legend, footer)
    assert all(legend.y1 <= ax.y0 for ax in axes), (legend, axes)
    assert all(title.y0 >= ax.y1 for ax in axes), (title, axes)
    assert footer.x0 >= 0 and footer.x1 <= fig.bbox.width + 1  # wrapped to the figure's width
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels.count("reference") == 1 and len(labels) == 5  # distinct labels once


def test_empty_panel_shows_its_reason_and_cdf_is_a_distribution() -> None:
    c = cdf([3.0, 1.0, 2.0], label="cdf")
    assert list(c.x) == [1.0, 2.0, 3.0] and list(c.y) == [1 / 3, 2 / 3, 1.0]
    fig = panels([Panel([c]), Panel(empty="no edge bucket in this arm")], title="t")
    texts = [t.get_text() for ax in fig.axes for t in ax.texts]
    assert "no edge bucket in this arm" in texts
    assert not fig.axes[1].axison


def test_a_figure_is_never_wider_than_the_page_shows_at_its_size() -> None:
    """Three panels of 4.6 in side by side would be 13.8 in, shown in the site's 876 px column
    with 8 pt text below 12 px: the row becomes rows of two panels of 4 in, in their order; a
    single 9 in panel is narrowed to 8 in; a figure that fits keeps its layout."""
    x = np.arange(3)
    row = [Panel([Line(x, x * k, f"line {k}")], title=f"p{k}") for k in range(3)]
    fig = panels(row, title="t")
    assert fig.get_figwidth() <= MAX_FIGURE_IN + 1e-9, fig.get_figwidth()
    shown = [ax for ax in fig.axes if ax.axison]
    assert [ax.get_title() for ax in shown] == ["p0", "p1", "p2"]
    rows = sorted({round(ax.get_position().y0, 3) for ax in shown})
    assert len(rows) == 2, rows
    assert panels([row[0]], title="t", panel_size=(9, 3)).get_figwidth() == MAX_FIGURE_IN
    assert panels(row[:2], title="t", panel_size=(3.5, 3)).get_figwidth() == 7.0


# -- the honesty rules -------------------------------------------------------------------------


def _bars(ax):  # noqa: ANN001, ANN202
    """(low, high) of every vertical error bar drawn on ``ax``."""
    out = []
    for c in ax.containers:
        if getattr(c, "has_yerr", False):
            for seg in c.lines[2][-1].get_segments():
                out.append((min(seg[:, 1]), max(seg[:, 1])))
    return out


def _span(patch):  # noqa: ANN001, ANN202
    """(x0, x1) of an axvspan (a Rectangle, or a Polygon in older matplotlib)."""
    if hasattr(patch, "get_width"):
        return (patch.get_x(), patch.get_x() + patch.get_width())
    xs = patch.get_xy()[:, 0]
    return (min(xs), max(xs))


def test_intervals_of_bounded_quantities_stay_in_bounds() -> None:
    from qoslab.report.intervals import bootstrap_interval, clipped_interval

    # Student t gives 0.99 ± 0.03 = [0.96, 1.02] and 3 ± 5 = [-2, 8]
    assert clipped_interval(0.99, 0.03, (0.0, 1.0)) == (pytest.approx(0.96), 1.0, "Student t, clipped")
    assert clipped_interval(3.0, 5.0, (0.0, None)) == (0.0, 8.0, "Student t, clipped")
    assert clipped_interval(0.5, 0.1, (0.0, 1.0)) == (0.4, 0.6, "Student t")
    b = bootstrap_interval([0.97, 0.999, 1.0, 1.0], (0.0, 1.0))
    assert 0.97 <= b[0] < b[1] <= 1.0 and bootstrap_interval([0.97, 0.999, 1.0, 1.0], (0.0, 1.0)) == b
    # the bootstrap interval of the mean is inside the values' range, and narrower than it
    v = [0.2, 0.4, 0.5, 0.9, 0.6]
    lo, hi = bootstrap_interval(v, (None, None))
    assert 0.2 < lo < sum(v) / 5 < hi < 0.9
    # drawn: a Jain panel (bounds guessed from its label) and a std panel (declared)
    jain = Panel([Line([1, 2], [0.99, 0.6], "a", err=[0.03, 0.5])], ylabel="Jain's index")
    std = Panel([Line([1, 2], [3.0, 1.0], "b", err=[5.0, 0.2])], ylabel="σ (kb/s)", bounds=(0.0, None))
    boot = Panel([Line([1], [0.99], "c", values=[[0.97, 1.0, 1.0]], err=[0.05])], ylabel="utilisation")
    fig = panels([jain, std, boot], title="t")
    assert _bars(fig.axes[0]) == [(pytest.approx(0.96), 1.0), (pytest.approx(0.1), 1.0)]
    assert _bars(fig.axes[1]) == [(0.0, 8.0), (pytest.approx(0.8), pytest.approx(1.2))]
    assert all(0.97 <= lo and hi <= 1.0 for lo, hi in _bars(fig.axes[2])), _bars(fig.axes[2])
    # the method is said on the figure and for a caption
    assert "Student t, clipped to [0, 1]" in fig.axes[0].get_xlabel()
    assert "Student t, clipped to ≥ 0" in fig.axes[1].get_xlabel()
    assert "bootstrap percentile, inside [0, 1]" in fig.axes[2].get_xlabel()
    assert "bootstrap percentile" in interval_methods([boot])
    # estimates_line carries the per-seed values (scaled with the means) to the bootstrap
    from qoslab.report.figures import estimates_line
    from qoslab.stats import estimate

    seeds = [[970.0, 1000.0, 1000.0]]
    ln = estimates_line([0], [estimate(seeds[0])], label="e", scale=1000.0, values=seeds)
    assert ln.values == [[0.97, 1.0, 1.0]]
    eb = panels([Panel([ln], ylabel="Jain's index")], title="t")
    assert (
        all(0.97 <= lo <= hi <= 1.0 for lo, hi in _bars(eb.axes[0]))
        and "bootstrap" in eb.axes[0].get_xlabel()
    )
    # a horizontal interval of a utilisation in % stays at or under 100
    frontier = Line([99.5], [150.0], "f", xerr=[2.0])
    fx = panels([Panel([frontier], xlabel="goodput utilisation (%)", ylabel="delay (ms)")], title="t")
    seg = [c for c in fx.axes[0].containers if c.has_xerr][0].lines[2][0].get_segments()[0]
    assert max(seg[:, 0]) == 100.0 and min(seg[:, 0]) == 97.5
    # the title names the quantity when the y label gives only its unit
    sd = panels(
        [Panel([Line([1], [3.0], "e", err=[5.0])], title="(b) STD of the flows' throughput", ylabel="kb/s")],
        title="t",
    )
    assert _bars(sd.axes[0]) == [(0.0, 8.0)]
    assert guess_bounds("Jain's index, RIO only vs ARM") == (0.0, 1.0) and guess_bounds(
        "utilisation (%)"
    ) == (0, 100)
    assert guess_bounds("Jain's index: differences to RIO alone") is None
    # an unbounded quantity keeps its t interval
    free = panels([Panel([Line([1], [0.0], "d", err=[2.0])], ylabel="change (kb/s)")], title="t")
    assert _bars(free.axes[0]) == [(-2.0, 2.0)] and "Student t" in free.axes[0].get_xlabel()


def test_panels_of_one_quantity_share_their_y_scale_and_no_span_is_degenerate() -> None:
    def fig4to6(**kw):  # noqa: ANN003, ANN202
        ps = [Panel([Line([0, 1], [0, top], "x")], ylabel="throughput (kb/s)") for top in (600, 700, 500)]
        return panels([*ps, Panel([Line([0, 1], [5, 6], "q")], ylabel="queue (packets)")], title="t", **kw)

    fig = fig4to6()
    lims = [ax.get_ylim() for ax in fig.axes[:3]]
    assert lims[0] == lims[1] == lims[2] and lims[0][1] >= 700
    assert fig.axes[3].get_ylim()[1] < 10  # another quantity keeps its own
    alone = fig4to6(sharey=False)
    assert alone.axes[0].get_ylim() != alone.axes[1].get_ylim()
    # fig8 (d): utilisation 0.9985-1.0005 is shown over a span of at least 2 %, kept near [0, 1]
    flat = panels([Panel([Line([0, 1, 2], [0.9990, 1.0, 0.9995], "u")], ylabel="utilisation")], title="t")
    lo, hi = flat.axes[0].get_ylim()
    assert hi - lo >= 0.02 * 0.999 and hi <= 1.002 and lo <= 0.9990


def test_time_series_shade_the_measurement_window() -> None:
    fig = panels([Panel([Line([0, 10, 20], [1, 2, 3], "q")], window=(5.0, 15.0))], title="t")
    ax = fig.axes[0]
    spans = [p for p in ax.patches if p.get_label() == "measurement window"]
    assert len(spans) == 1
    assert _span(spans[0]) == (5.0, 15.0)
    assert "measurement window" in [t.get_text() for t in fig.legends[0].get_texts()]


def test_quick_runs_are_stamped_on_the_figure(tmp_path: Path) -> None:
    fig = panels([Panel([Line([0, 1], [0, 1], "a")])], title="t")
    save_figure(fig, tmp_path, "q", "q", "QUICK RUN (shortened runs, 3 seeds) · scenario x · seeds 1-3")
    stamps = [t for t in fig.texts if t.get_gid() == "quick-stamp"]
    assert (
        len(stamps) == 1 and stamps[0].get_text().startswith("QUICK RUN") and stamps[0].get_fontsize() >= 20
    )
    assert 'id="quick-stamp"' in (tmp_path / "q.svg").read_text()
    full = panels([Panel([Line([0, 1], [0, 1], "a")])], title="t")
    save_figure(full, tmp_path, "f", "f", "scenario x · seeds 1-10")
    assert not [t for t in full.texts if t.get_gid() == "quick-stamp"]


def test_a_title_the_data_contradict_is_flagged() -> None:
    base = Line([1, 2, 3], [0.9, 0.8, 0.7], "RIO only")
    arm = Line([1, 2, 3], [0.95, 0.75, 0.72], "ARM")
    why = contradicted_title("Where ARM and ARD help: Jain's index", [base, arm], "RIO only")
    assert "ARM at 2" in why and "1 point" in why
    assert contradicted_title("Jain's index against the RTT spread", [base, arm], "RIO only") == ""
    assert contradicted_title("ARM helps", [base, Line([1], [0.99], "ARM")], "RIO only") == ""


def test_a_title_naming_another_quantity_does_not_bound_the_axis() -> None:
    """red-baseline's Table 2 figure: kb/s bars under a title quoting a Jain index got [0, 1]
    bounds, and every interval was cut to [0, mean] ("clipped to [0, 1]")."""
    bars = Panel(
        [Line([0, 1], [193.0, 206.0], "ours", err=[5.0, 4.0])],
        title="homogeneous RTTs — Jain index 0.9859 ± 0.0040 (paper 0.967)",
        ylabel="throughput (kbps)",
    )
    fig = panels([bars], title="t")
    assert _bars(fig.axes[0]) == [(188.0, 198.0), (202.0, 210.0)]
    assert "clipped" not in fig.axes[0].get_xlabel()
    # declared bounds that the means lie outside are not this quantity's: no clipping either
    wrong = panels([Panel([Line([0], [193.0], "x", err=[5.0])], ylabel="kb/s", bounds=(0.0, 1.0))], title="t")
    assert _bars(wrong.axes[0]) == [(188.0, 198.0)]


def _drawn(fig):  # noqa: ANN001, ANN202
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return canvas.get_renderer()


def test_a_short_log_axis_prints_plain_tick_labels_not_run_together() -> None:
    # 20-80 on a log axis: matplotlib's default labels the minor ticks "3×10¹", "4×10¹", ...
    fig = panels([Panel([Line([20, 40, 80], [0.9, 0.95, 0.97], "a")], logx=True)], title="t")
    _drawn(fig)
    ax = fig.axes[0]
    shown = [t.get_text() for t in ax.get_xticklabels(which="both") if t.get_visible() and t.get_text()]
    assert not any("10^" in s or "×" in s or "times" in s for s in shown), shown
    assert not [t.get_text() for t in ax.get_xticklabels(minor=True) if t.get_text()]


def test_annotations_at_one_point_do_not_overlap() -> None:
    # two curves with a point at the same place, each annotated with its threshold ("4 4")
    notes = [(50.0, 10.0, "4"), (50.0, 10.0, "4"), (57.0, 11.0, "2"), (57.3, 11.0, "2")]
    fig = panels([Panel([Line([45, 57, 75], [0, 11, 200], "a")], annotations=notes)], title="t")
    r = _drawn(fig)
    boxes = [t.get_window_extent(r) for t in fig.axes[0].texts]
    assert len(boxes) == 4
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            assert not a.overlaps(b), (a, b)


def test_many_long_category_labels_are_slanted_apart() -> None:
    cats = ["droptail", "red", "rio", "rio-plus-o", "fdd-red", "ard", "ef-priority", "codel", "fq_codel"]
    line = bar_group([("m", [1.0] * len(cats), None)], len(cats))
    fig = panels([Panel(line, categories=cats)], title="t", panel_size=(5.0, 3.6))
    r = _drawn(fig)
    labels = fig.axes[0].get_xticklabels()
    widths = [t.get_window_extent(r).width for t in labels]
    centres = fig.axes[0].transData.transform([(i, 0) for i in range(len(cats))])[:, 0]
    spacing = float(np.min(np.diff(centres)))
    # level, the longest names would be wider than the room between two ticks ...
    assert max(widths) > spacing
    # ... slanted, parallel lines of text keep apart: the gap across them exceeds a line's height
    angle = np.deg2rad(labels[0].get_rotation())
    height = max(t.get_fontsize() for t in labels) * fig.dpi / 72
    assert angle > 0 and spacing * np.sin(angle) > height, (spacing, angle, height)


def test_a_panel_title_keeps_a_short_bracketed_part_whole() -> None:
    # many bracketed parts: at any width one of them would straddle a plain wrap's line break
    title = "homogeneous RTTs " + " ".join(f"Jain {i} (paper 0.9{i})" for i in range(10))
    fig = panels([Panel([Line([0, 1], [0, 1], "a")], title=title), Panel([], title=title)], title="t")
    wrapped = fig.axes[0].get_title()
    assert "\n" in wrapped  # two panels in a row: the title does not fit on one line
    assert all(line.count("(") == line.count(")") for line in wrapped.split("\n")), wrapped
    assert wrapped.replace("\n", " ") == title


def test_a_title_keeps_the_line_break_it_was_given() -> None:
    # red-baseline's Table 2 panels: "what is drawn" on one line, "Jain 0.986 (paper 0.967)" on
    # the next; wrapping the whole title as one paragraph put "Jain" at the end of the first
    fig = panels(
        [Panel([Line([0], [1.0], "a")], title="homogeneous RTTs, a 20 s run\nJain 0.914 (paper 0.967)")],
        title="t",
    )
    assert fig.axes[0].get_title() == "homogeneous RTTs, a 20 s run\nJain 0.914 (paper 0.967)"


def test_a_long_figure_title_is_wrapped_inside_the_figure() -> None:
    # probe-marker's frontier figures: a 112-character title on an 8 in figure, wrapped at 104
    # characters, ran off both edges of the figure (its first line 1,250 px of 1,200)
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    title = (
        "Performance frontiers: delay vs goodput utilisation (1500 B packets, w_q 0.00125), "
        "RIO min_in annotated (packets)"
    )
    grid = [[Panel([Line([0, 1], [0, 1], "a")], title=f"p{i}{j}") for j in range(2)] for i in range(2)]
    fig = panels(grid, title=title)
    renderer = FigureCanvasAgg(fig).get_renderer()
    box = fig._suptitle.get_window_extent(renderer)  # noqa: SLF001
    assert 0 <= box.x0 and box.x1 <= fig.get_figwidth() * fig.dpi, (box.x0, box.x1)
    assert fig._suptitle.get_text().replace("\n", " ") == title  # noqa: SLF001
