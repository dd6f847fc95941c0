"""The figure rules (python/qoslab/report/figure_rules.py, palette.py): references stay in view,
series are told apart by colour (with normal vision and the two red-green deficiencies) or by
line style and marker; each rule has a figure made to break it."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest

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
