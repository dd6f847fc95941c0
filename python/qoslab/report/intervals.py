"""Intervals that respect a quantity's range, for the figures' error bars.

A Student-t interval ``mean ± t·s/√n`` of a bounded quantity can leave its range (a Jain index
of 0.99 ± 0.02 reaches 1.01; a standard deviation of 3 ± 5 reaches −2). Two intervals that stay
inside by construction:

- :func:`bootstrap_interval`: the percentile bootstrap of the mean, from the per-seed values
  (every resampled mean lies between the smallest and the largest value, so inside any range
  that holds the values). Deterministic: a fixed generator seed.
- :func:`clipped_interval`: from the mean and the t half-width alone (when the per-seed values
  are not at hand), the t interval cut at the bounds, and said to be cut. (A logit- or
  log-scale t interval would stay inside too, but with 3-10 seeds near a bound its delta-method
  end points run far from the data: Jain 0.987 ± 0.057 becomes [0.49, 0.9995].)

>>> clipped_interval(0.99, 0.02, (0.0, 1.0))
(0.97, 1.0, 'Student t, clipped')
>>> bootstrap_interval([0.97, 0.99, 1.0], (0.0, 1.0))[1] <= 1.0
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

#: A quantity's range: ``(lower, upper)``, ``None`` for unbounded on that side.
Bounds = tuple[float | None, float | None]

#: How :func:`bootstrap_interval` and :func:`clipped_interval` name their method.
BOOTSTRAP = "bootstrap percentile"
STUDENT = "Student t"
CLIPPED = "Student t, clipped"

_RESAMPLES = 4000
_SEED = 20_240_601


def bootstrap_interval(values: Sequence[float], bounds: Bounds, level: float = 0.95) -> tuple[float, float]:
    """The percentile-bootstrap interval of the mean of ``values`` (NaNs skipped), clipped to
    ``bounds`` (a no-op when the values are inside them); ``(nan, nan)`` without values and
    ``(v, v)`` for a single value."""
    v = np.asarray([x for x in values if math.isfinite(x)], dtype=float)
    if v.size == 0:
        return math.nan, math.nan
    if v.size == 1 or float(v.max()) == float(v.min()):
        return float(v[0]), float(v[0])
    rng = np.random.default_rng(_SEED)
    means = v[rng.integers(0, v.size, size=(_RESAMPLES, v.size))].mean(axis=1)
    a = (1.0 - level) / 2.0
    low, high = (float(x) for x in np.quantile(means, [a, 1.0 - a]))
    return _clip(low, bounds), _clip(high, bounds)


def _clip(x: float, bounds: Bounds) -> float:
    lo, hi = bounds
    if lo is not None:
        x = max(x, lo)
    if hi is not None:
        x = min(x, hi)
    return x


def clipped_interval(mean: float, half: float, bounds: Bounds) -> tuple[float, float, str]:
    """``(low, high, method)``: the Student-t interval ``mean ± half`` cut at ``bounds``; the
    method says ``"Student t, clipped"`` when it was cut, ``"Student t"`` otherwise."""
    if not (math.isfinite(mean) and math.isfinite(half)):
        return mean, mean, STUDENT
    low, high = mean - half, mean + half
    cut_low, cut_high = _clip(low, bounds), _clip(high, bounds)
    return cut_low, cut_high, CLIPPED if (cut_low, cut_high) != (low, high) else STUDENT


def describe(method: str, bounds: Bounds | None) -> str:
    """``"95 % CI: Student t, clipped to [0, 1]"`` for an axis label or a caption."""
    if bounds is None or bounds == (None, None):
        return f"95 % CI: {method}"
    lo, hi = bounds
    rng = (
        f"[{_num(lo)}, {_num(hi)}]"
        if lo is not None and hi is not None
        else (f"≥ {_num(lo)}" if lo is not None else f"≤ {_num(hi)}")
    )
    return f"95 % CI: {method} to {rng}" if method == CLIPPED else f"95 % CI: {method}, inside {rng}"


def _num(x: float | None) -> str:
    return "" if x is None else f"{x:g}"


__all__ = [
    "BOOTSTRAP",
    "CLIPPED",
    "STUDENT",
    "Bounds",
    "bootstrap_interval",
    "clipped_interval",
    "describe",
]
