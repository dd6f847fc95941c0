"""The figure rules (python/qoslab/report/figure_rules.py, palette.py): references stay in view,
series are told apart by colour (with normal vision and the two red-green deficiencies) or by
line style and marker; each rule has a figure made to break it."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest

from qoslab.report.figures import Line, Panel, Ref, bar_group, figure_problems, panels
from qoslab.report.palette import (
    MACHADO,
    MIN_DELTA_E,
    SERIES_COLOURS,
    VISIONS,
    ciede2000,
    delta_e,
    least_delta_e,
    simulate,
)

# -- the colour science ------------------------------------------------------------------------


def test_ciede2000_matches_sharma_wu_dalal_test_data() -> None:
    # pairs 1, 2, 3, 7, 17 and 25 of Sharma, Wu & Dalal (2005), Table 1
    pairs = [
        ((50, 2.6772, -79.7751), (50, 0, -82.7485), 2.0425),
        ((50, 3.1571, -77.2803), (50, 0, -82.7485), 2.8615),
        ((50, 2.8361, -74.0200), (50, 0, -82.7485), 3.4412),
        ((50, 0, 0), (50, -1, 2), 2.3669),
        ((50, 2.5, 0), (73, 25, -18), 27.1492),
        ((60.2574, -34.0099, 36.2677), (60.4626, -34.1751, 39.4387), 1.2644),
    ]
    for a, b, want in pairs:
        assert ciede2000(a, b) == pytest.approx(want, abs=1e-4)
        assert ciede2000(b, a) == pytest.approx(want, abs=1e-4)


def test_colour_vision_simulation_keeps_greys_and_merges_red_with_green() -> None:
    # Machado's matrices map white to white (rows sum to 1): greys are seen as greys
    for m in MACHADO.values():
        assert np.allclose(m.sum(axis=1), 1.0, atol=1e-5)
    assert np.allclose(simulate((0.5, 0.5, 0.5), "deuteranopia"), 0.5, atol=1e-4)
    # matplotlib's red and green: far apart with normal vision, close with deuteranopia
    assert delta_e("tab:red", "tab:green") > 3 * MIN_DELTA_E
    assert delta_e("tab:red", "tab:green", "deuteranopia") < MIN_DELTA_E / 2
    assert delta_e("tab:orange", "tab:green", "protanopia") < MIN_DELTA_E / 2


def test_the_series_palette_is_told_apart_by_every_vision_and_viridis_is_not() -> None:
    for vision in VISIONS:
        closest = min(delta_e(a, b, vision) for a, b in combinations(SERIES_COLOURS, 2))
        assert closest >= MIN_DELTA_E, (vision, closest)
    assert min(delta_e(c, "white") for c in SERIES_COLOURS) >= 2 * MIN_DELTA_E
    from matplotlib import colormaps

    viridis = [colormaps["viridis"](0.9 * i / 9) for i in range(10)]  # the former fallback
    assert min(least_delta_e(a, b)[0] for a, b in combinations(viridis, 2)) < MIN_DELTA_E


# -- series a reader can tell apart ------------------------------------------------------------


def _look(ln):  # noqa: ANN001, ANN202
    from matplotlib.colors import to_hex

    return (to_hex(ln.get_color()), ln.get_linestyle(), str(ln._unscaled_dash_pattern), ln.get_marker())


def test_ten_series_get_ten_looks_a_reader_tells_apart() -> None:
    lines = [Line([0, 1, 2], [k, k + 1, k + 0.5], f"flow {k}") for k in range(10)]
    fig = panels([Panel(lines, title="ten flows")], title="t")
    drawn = fig.axes[0].get_lines()
    looks = [_look(ln) for ln in drawn]
    assert len(set(looks)) == 10, looks
    # two series of one colour differ in line style and in marker (for lines drawn without
    # markers, or without lines)
    for a, b in combinations(drawn, 2):
        if least_delta_e(a.get_color(), b.get_color())[0] < MIN_DELTA_E:
            assert a._unscaled_dash_pattern != b._unscaled_dash_pattern and a.get_marker() != b.get_marker()
    assert figure_problems(fig) == []


def test_more_than_seven_series_never_repeat_a_look() -> None:
    lines = [Line([0, 1], [k, k + 1], f"flow{k}", style={"marker": "none"}) for k in range(12)]
    fig = panels([Panel(lines), Panel([Line([0, 1], [1, 2], "flow3")])], title="t")
    looks = [_look(ln)[::2] for ln in fig.axes[0].get_lines()]  # colour and dashes
    assert len(set(looks)) == 12, looks
    # one look per label across panels (the shared legend)
    assert _look(fig.axes[1].get_lines()[0])[:3] == _look(fig.axes[0].get_lines()[3])[:3]
    assert figure_problems(fig) == []
    # bars beyond the colours are hatched
    bars = panels([Panel(bar_group([(f"b{k}", [1.0, 2.0], None) for k in range(9)], 2))], title="t")
    faces = [(c.patches[0].get_facecolor(), c.patches[0].get_hatch()) for c in bars.axes[0].containers]
    assert len({(tuple(f), h) for f, h in faces}) == 9 and figure_problems(bars) == []


def test_series_that_look_alike_are_flagged() -> None:
    def fig(a: dict, b: dict):  # noqa: ANN202, D103
        return panels(
            [
                Panel(
                    [Line([0, 1], [0, 1], "ours", style=a), Line([0, 1], [1, 0], "paper", style=b)], title="p"
                )
            ],
            title="t",
        )

    # two near-identical blues, both solid with round markers
    said = figure_problems(fig({"color": "#1f77b4"}, {"color": "#2a7fba"}))
    assert (
        len(said) == 1
        and "'ours' and 'paper'" in said[0]
        and "3.0 with normal vision, 2.9 with protanopia" in said[0]
    ), said
    # red against green: far apart with normal vision, one colour with deuteranopia
    said = figure_problems(fig({"color": "tab:red"}, {"color": "tab:green"}))
    assert len(said) == 1 and "with normal vision, 4.6 with deuteranopia" in said[0], said
    # ... told apart by the line style, or by the marker, they pass
    assert figure_problems(fig({"color": "tab:red"}, {"color": "tab:green", "ls": "--"})) == []
    assert (
        figure_problems(
            fig({"color": "tab:red", "ls": "none"}, {"color": "tab:green", "ls": "none", "marker": "s"})
        )
        == []
    )
    # a near-white series on the white background ("not testable" in todays-tcp's figure)
    pale = figure_problems(fig({"color": "0.95"}, {}))
    assert len(pale) == 1 and "barely visible" in pale[0], pale
    # the legend is shared: one look for two labels in two panels is flagged too
    two = panels(
        [
            Panel([Line([0, 1], [0, 1], "depth 5", style={"color": "tab:red"})]),
            Panel([Line([0, 1], [0, 1], "2 flows", style={"color": "tab:red"})]),
        ],
        title="t",
    )
    said = figure_problems(two)
    assert len(said) == 1 and said[0].startswith("legend:"), said


def test_free_series_avoid_the_colours_other_series_were_given() -> None:
    # a study colours its baseline vermillion: the free series take the other colours
    lines = [Line([0, 1], [0, 1], "RIO", style={"color": "#D55E00"})]
    lines += [Line([0, 1], [k, 1], f"s{k}") for k in range(4)]
    fig = panels([Panel(lines)], title="t")
    colours = [ln.get_color() for ln in fig.axes[0].get_lines()]
    assert all(least_delta_e(c, "#D55E00")[0] >= MIN_DELTA_E for c in colours[1:]), colours
    assert figure_problems(fig) == []


# -- references in view ------------------------------------------------------------------------


def _shown(fig, value: float, axis: str = "y") -> bool:  # noqa: ANN001
    ax = fig.axes[0]
    lo, hi = sorted(ax.get_ylim() if axis == "y" else ax.get_xlim())
    room = 0.005 * (hi - lo)
    return bool(lo + room < value < hi - room)


def test_a_reference_outside_the_data_is_brought_into_view() -> None:
    # fig8 (d): utilisation 0.98-1.0 and the verdict's bound at 0.9
    data = Line([0, 1, 2], [0.98, 0.99, 1.0], "ARD")
    fig = panels([Panel([data], refs=[Ref(0.9, "bound")], ylabel="utilisation")], title="t")
    assert _shown(fig, 0.9) and figure_problems(fig) == []
    # a tested band: shown whole, not only the part near the data
    band = panels([Panel([data], refs=[Ref(0.9, "tested", to=0.95)], ylabel="utilisation")], title="t")
    assert _shown(band, 0.9) and _shown(band, 0.95) and figure_problems(band) == []
    # the least span rule recentres a flat utilisation under its bound 1: it kept a paper value
    # just above 1 out of view
    flat = Line([0, 1, 2], [0.999, 0.9995, 1.0], "u")
    above = panels([Panel([flat], refs=[Ref(1.002, "paper 1.002")], ylabel="utilisation")], title="t")
    assert _shown(above, 1.002) and figure_problems(above) == []
    # a reference on x, on a log axis
    logx = panels(
        [Panel([Line([10, 20, 40], [1, 2, 3], "a")], logx=True, refs=[Ref(80, "x", axis="x")])], title="t"
    )
    assert _shown(logx, 80, "x")


def test_a_fixed_range_that_cuts_off_a_reference_is_flagged() -> None:
    data = Line([0, 1, 2], [0.98, 0.99, 1.0], "ARD")

    def fig(ref: Ref, ylim: tuple[float | None, float | None], **kw: object):  # noqa: ANN202
        return panels([Panel([data], refs=[ref], ylim=ylim, title="(d) utilisation", **kw)], title="t")  # type: ignore[arg-type]

    cut = fig(Ref(0.9, "the verdict's bound"), (0.97, 1.005))
    assert cut.axes[0].get_ylim() == (0.97, 1.005)  # the author's range is kept ...
    said = figure_problems(cut)  # ... and what it hides is said
    assert said == [
        "panel '(d) utilisation': reference \"the verdict's bound\" at y = 0.9 is outside "
        "the fixed y range [0.97, 1.005]"
    ]
    part = figure_problems(fig(Ref(0.95, "tested", to=0.985), (0.97, 1.005)))
    assert len(part) == 1 and "only part of it shows" in part[0], part
    # a reference on the frame is hidden by the spine
    edge = figure_problems(fig(Ref(0.97, "floor"), (0.97, 1.005)))
    assert len(edge) == 1 and "on the frame" in edge[0], edge
    # a side left free is widened: ylim=(0.97, None) with a reference above the data
    free = fig(Ref(1.02, "paper"), (0.97, None))
    assert _shown(free, 1.02) and figure_problems(free) == []
    # nothing at or below 0 is shown on a log axis
    log = figure_problems(
        panels([Panel([Line([1, 2], [1.0, 100.0], "a")], refs=[Ref(0.0, "zero")], yscale="log")], title="t")
    )
    assert len(log) == 1 and "log axis" in log[0], log
