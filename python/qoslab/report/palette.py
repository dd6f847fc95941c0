"""Colours a reader can tell apart, for :mod:`qoslab.report.figures`: the series palette, the
looks (colour, line style, marker) given to many series, and how far apart two colours are as
seen with normal vision and with the two common colour-vision deficiencies.

- :data:`SERIES_COLOURS` is Okabe and Ito's colour-blind-safe qualitative palette (Okabe & Ito,
  "Color Universal Design", 2002/2008) without its yellow, which is barely visible as a thin
  line on white: seven colours. Series beyond seven repeat the colours with another line style
  and marker (:func:`series_look`), so no two series of a figure share colour *and* style.
- :func:`delta_e` is the CIEDE2000 colour difference (Sharma, Wu & Dalal 2005) of two sRGB
  colours in CIE L*a*b* (D65), optionally after simulating deuteranopia or protanopia with
  Machado, Oliveira & Fernandes' severity-1.0 matrices (IEEE TVCG 15(6), 2009) in linear RGB.
- Two series whose colours differ by less than :data:`MIN_DELTA_E` under any of the three
  visions need another line style or marker (:mod:`qoslab.report.figure_rules` checks it).

numpy only: no colour-science dependency.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

#: The seven Okabe-Ito colours drawn as series, in the order they are given out.
SERIES_COLOURS: tuple[str, ...] = (
    "#0072B2",  # blue
    "#D55E00",  # vermillion
    "#009E73",  # bluish green
    "#CC79A7",  # reddish purple
    "#E69F00",  # orange
    "#56B4E9",  # sky blue
    "#000000",  # black
)
#: Line styles and markers of the successive rounds through :data:`SERIES_COLOURS` (the first
#: round keeps the figure's defaults: solid lines, round markers).
ROUND_STYLES: tuple[tuple[Any, str], ...] = (
    ("-", "o"),
    ((0, (5, 2)), "s"),
    ((0, (1, 1.5)), "^"),
    ((0, (6, 2, 1, 2)), "D"),
    ((0, (2, 2)), "v"),
)
#: Bar hatches of the successive rounds (a bar has no line style).
ROUND_HATCHES: tuple[str, ...] = ("", "//", "..", "xx", "\\\\")

#: Vision models: ``None`` (normal), ``"deuteranopia"``, ``"protanopia"``.
VISIONS: tuple[str | None, ...] = (None, "deuteranopia", "protanopia")

#: Colours of two series closer than this (CIEDE2000, under any of :data:`VISIONS`) are not
#: told apart as thin lines or small markers: the pair needs another line style or marker.
#: (About 2 is "just noticeable" between large patches; a 1 pt line needs several times that.
#: The seven colours above are at least 12.2 apart under all three visions (blue and reddish
#: purple, with protanopia); ten viridis shades, the former fallback, 8.2 with normal vision
#: and 5.5 with deuteranopia; matplotlib's default cycle has orange and green 1.3 apart with
#: protanopia, tab:red and tab:green 4.6 with deuteranopia.)
MIN_DELTA_E = 10.0

#: Machado et al. (2009), severity 1.0, applied to linear RGB.
MACHADO: dict[str, np.ndarray] = {
    "deuteranopia": np.array(
        [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]]
    ),
    "protanopia": np.array(
        [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]]
    ),
}

# sRGB (linear) to CIE XYZ, D65 white (IEC 61966-2-1)
_RGB_TO_XYZ = np.array(
    [[0.4124564, 0.3575761, 0.1804375], [0.2126729, 0.7151522, 0.0721750], [0.0193339, 0.1191920, 0.9503041]]
)
_WHITE = _RGB_TO_XYZ @ np.ones(3)


def series_look(i: int, kind: str = "line", colours: Sequence[str] = SERIES_COLOURS) -> dict[str, Any]:
    """The matplotlib style of the ``i``-th series (from 0) drawn from ``colours``: its colour,
    and past the colours a line style and marker (a hatch for a bar) that set it apart from
    the series of the same colour."""
    n = len(colours)
    colour, rnd = colours[i % n], (i // n) % len(ROUND_STYLES)
    if kind == "bar":
        return {"color": colour, **({"hatch": ROUND_HATCHES[rnd], "edgecolor": "white"} if rnd else {})}
    if rnd == 0:
        return {"color": colour}
    ls, marker = ROUND_STYLES[rnd]
    return {"color": colour, "ls": ls, "marker": marker}


def _linear(rgb: np.ndarray) -> np.ndarray:
    """Linear-light values of sRGB components in [0, 1]."""
    out: np.ndarray = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    return out


def simulate(rgb: Any, vision: str | None) -> np.ndarray:
    """The sRGB colour (components in [0, 1]) that ``rgb`` looks like with ``vision`` (Machado
    et al. 2009, severity 1.0; ``None``: unchanged)."""
    c = np.asarray(rgb, dtype=float)[:3]
    if vision is None:
        return c
    lin = np.clip(MACHADO[vision] @ _linear(c), 0.0, 1.0)
    out: np.ndarray = np.where(lin <= 0.0031308, 12.92 * lin, 1.055 * lin ** (1 / 2.4) - 0.055)
    return out


def lab(rgb: Any) -> np.ndarray:
    """CIE L*a*b* (D65) of an sRGB colour (components in [0, 1])."""
    xyz = _RGB_TO_XYZ @ _linear(np.asarray(rgb, dtype=float)[:3]) / _WHITE
    eps, kappa = 216 / 24389, 24389 / 27
    f = np.where(xyz > eps, np.cbrt(xyz), (kappa * xyz + 16) / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def ciede2000(lab1: Any, lab2: Any) -> float:
    """The CIEDE2000 difference of two L*a*b* colours (kL = kC = kH = 1)."""
    l1, a1, b1 = (float(v) for v in lab1)
    l2, a2, b2 = (float(v) for v in lab2)
    c_bar = (np.hypot(a1, b1) + np.hypot(a2, b2)) / 2
    g = 0.5 * (1 - np.sqrt(c_bar**7 / (c_bar**7 + 25.0**7)))
    a1p, a2p = (1 + g) * a1, (1 + g) * a2
    c1p, c2p = np.hypot(a1p, b1), np.hypot(a2p, b2)
    h1p = np.degrees(np.arctan2(b1, a1p)) % 360 if c1p else 0.0
    h2p = np.degrees(np.arctan2(b2, a2p)) % 360 if c2p else 0.0
    dl, dc = l2 - l1, c2p - c1p
    dh = 0.0
    if c1p * c2p:
        dh = h2p - h1p
        dh = dh - 360 if dh > 180 else dh + 360 if dh < -180 else dh
    big_dh = 2 * np.sqrt(c1p * c2p) * np.sin(np.radians(dh / 2))
    l_bar, cp_bar = (l1 + l2) / 2, (c1p + c2p) / 2
    h_bar = h1p + h2p
    if c1p * c2p:
        if abs(h1p - h2p) <= 180:
            h_bar = (h1p + h2p) / 2
        else:
            h_bar = (h1p + h2p + 360) / 2 if h1p + h2p < 360 else (h1p + h2p - 360) / 2
    t = (
        1
        - 0.17 * np.cos(np.radians(h_bar - 30))
        + 0.24 * np.cos(np.radians(2 * h_bar))
        + 0.32 * np.cos(np.radians(3 * h_bar + 6))
        - 0.20 * np.cos(np.radians(4 * h_bar - 63))
    )
    sl = 1 + 0.015 * (l_bar - 50) ** 2 / np.sqrt(20 + (l_bar - 50) ** 2)
    sc, sh = 1 + 0.045 * cp_bar, 1 + 0.015 * cp_bar * t
    rt = (
        -2
        * np.sqrt(cp_bar**7 / (cp_bar**7 + 25.0**7))
        * np.sin(np.radians(60 * np.exp(-(((h_bar - 275) / 25) ** 2))))
    )
    return float(
        np.sqrt((dl / sl) ** 2 + (dc / sc) ** 2 + (big_dh / sh) ** 2 + rt * (dc / sc) * (big_dh / sh))
    )


def delta_e(c1: Any, c2: Any, vision: str | None = None) -> float:
    """How far apart two sRGB colours (components in [0, 1], or anything matplotlib reads) look
    with ``vision`` (CIEDE2000)."""
    from matplotlib.colors import to_rgb

    rgb1 = to_rgb(c1) if not isinstance(c1, np.ndarray) else c1
    rgb2 = to_rgb(c2) if not isinstance(c2, np.ndarray) else c2
    return ciede2000(lab(simulate(rgb1, vision)), lab(simulate(rgb2, vision)))


def least_delta_e(c1: Any, c2: Any) -> tuple[float, str | None]:
    """The smallest :func:`delta_e` of two colours over :data:`VISIONS`, and that vision."""
    return min(((delta_e(c1, c2, v), v) for v in VISIONS), key=lambda t: t[0])
