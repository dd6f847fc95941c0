"""The shared figure kinds (python/qoslab/figures.py): the layout rules hold on a crowded figure
(legend under the panels and clear of both the axes and the provenance footer, title above the
panels, an empty panel shows its reason)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from qoslab.figures import Line, Panel, Ref, bar_group, cdf, panels
from qoslab.report import save_figure


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
