"""Intervals that fit the metric: the rule per metric kind, and the distribution-free interval.

A claim declares the kind of the quantity its records carry (:data:`MetricKind`):

- ``continuous`` (a throughput, a Jain index, a delay ratio): the Student-t interval of the mean
  of the per-seed values (paired differences, or values against a threshold). When every seed
  gave the same value the t interval has width zero and says nothing about the spread; it is then
  replaced by the distribution-free interval below.
- ``discrete`` (a count measured exactly), ``grid`` (a value read on a grid of step ``r``: the
  highest subscription level met on a 10 % grid, the first failing profile multiple),
  ``censored`` (a value capped by what was run: "never failing" counted as the largest count):
  the **sign-test interval** of the median of the per-seed values, the order statistics
  ``[x_(k), x_(n+1−k)]`` with the largest ``k`` such that ``2·P(Bin(n, ½) ≤ k − 1) ≤ α``
  (exact for any distribution, ties and all). With too few seeds no ``k`` exists and the
  interval is unbounded: four equal seeds never decide (at α = 0.05 six are needed, at the
  group-sequential design's α/4 eight). A ``grid`` interval is widened by the step ``r`` on each
  side: a value on the grid stands for any value within one step, and a difference of two such
  values for any within ``r`` of it. Its p against a boundary is the two-sided sign test's
  (values on the boundary dropped), never 0.

Under the group-sequential design the Student-t interval spends ``α/K`` at each of the ``K``
declared looks. The sign test cannot reject at a look of ``n`` seeds below ``2^(1−n)``, so a
share of α given to a look where that floor lies above it is wasted, and with it the power of
the looks that can decide (ten seeds of one sign, ``p`` 0.002, would need a Holm factor of at
most 6 at ``α/4``). :func:`sign_test_looks` gives the distribution-free records the same α
over only the looks the exact test can reach (at 4, 6, 8, 10 seeds: 8 and 10, ``α/2`` each):
a look it cannot reach can reject nothing, so the error over all looks stays at most α.

The rule by kind is stated on docs/experiments.md ("How a verdict is decided").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from qoslab.stats import t_ppf

MetricKind = Literal["continuous", "discrete", "grid", "censored"]
KINDS: tuple[MetricKind, ...] = ("continuous", "discrete", "grid", "censored")


def _binom_cdf_half(k: int, n: int) -> float:
    """P(Bin(n, ½) ≤ k)."""
    if k < 0:
        return 0.0
    return sum(math.comb(n, i) for i in range(min(k, n) + 1)) / 2.0**n


def sign_depth(n: int, alpha: float) -> int:
    """The order statistic ``k`` of the two-sided sign-test interval at level ``1 − alpha`` over
    ``n`` values (0: no interval exists at that level with ``n`` values)."""
    k = 0
    while k + 1 <= n // 2 + 1 and 2.0 * _binom_cdf_half(k, n) <= alpha:
        k += 1
    return k


def sign_test_looks(looks: Sequence[int], alpha: float) -> int:
    """Over how many of the declared ``looks`` (seeds at each) a distribution-free record's α is
    spent: the largest ``K`` such that at least ``K`` looks can reject at ``alpha / K`` (the sign
    test's floor ``2^(1−n)`` at most that); the share of each other look is 0, where the exact
    test rejects nothing anyway. ``len(looks)`` when no look can reject at all."""
    for k in range(len(looks), 0, -1):
        if sum(1 for n in looks if 2.0 ** (1 - n) <= alpha / k) >= k:
            return k
    return len(looks)


def min_seeds(alpha: float) -> int:
    """The fewest values whose sign-test interval at level ``1 − alpha`` is bounded."""
    n = 1
    while sign_depth(n, alpha) == 0:
        n += 1
    return n


def sign_interval(values: Sequence[float], alpha: float) -> tuple[float, float]:
    """The distribution-free interval of the median (see the module's text); ``(−inf, inf)``
    when ``values`` are too few for the level."""
    xs = sorted(float(x) for x in values if math.isfinite(float(x)))
    k = sign_depth(len(xs), alpha)
    if k == 0:
        return (-math.inf, math.inf)
    return (xs[k - 1], xs[len(xs) - k])


def sign_p(values: Sequence[float], mu: float) -> float:
    """The two-sided sign test's p of "the median is ``mu``" (values equal to ``mu`` dropped;
    1 when none is left)."""
    xs = [float(x) for x in values if math.isfinite(float(x))]
    above = sum(x > mu for x in xs)
    below = sum(x < mu for x in xs)
    n = above + below
    if n == 0:
        return 1.0
    return min(1.0, 2.0 * _binom_cdf_half(min(above, below), n))


def median(values: Sequence[float]) -> float:
    xs = sorted(float(x) for x in values if math.isfinite(float(x)))
    if not xs:
        return math.nan
    m = len(xs) // 2
    return xs[m] if len(xs) % 2 else (xs[m - 1] + xs[m]) / 2.0


def t_interval_of(values: Sequence[float], alpha: float) -> tuple[float, float]:
    """The Student-t interval of the mean at level ``1 − alpha``."""
    xs = [float(x) for x in values if math.isfinite(float(x))]
    n = len(xs)
    if n < 2:
        return (-math.inf, math.inf)
    mean = sum(xs) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1))
    h = t_ppf(1.0 - alpha / 2.0, n - 1) * sd / math.sqrt(n)
    return (mean - h, mean + h)


@dataclass(frozen=True)
class Fitted:
    """The interval a verdict rests on, and how it was made (``method``, said in the record)."""

    low: float
    high: float
    method: str
    #: the sign test's p against a boundary, for the kinds that use it (None: the t test's)
    distribution_free: bool


def fitted(
    kind: MetricKind,
    grid: float,
    values: Sequence[float] | None,
    t_interval: tuple[float, float],
    alpha: float,
    n: int,
) -> Fitted:
    """The interval of a record's quantity at level ``1 − alpha`` by its declared ``kind``.
    ``values``: the per-seed values (None when the record predates them: a zero-width
    ``t_interval`` then gives them back, every seed equal to its end; otherwise the t interval
    is kept, widened by the grid step, and the method says the values were not stored)."""
    lo, hi = t_interval
    degenerate = math.isfinite(lo) and math.isfinite(hi) and lo == hi
    if kind == "continuous" and not degenerate:
        return Fitted(lo, hi, "Student-t interval of the mean", False)
    if values is None and degenerate:
        return equal_values_interval(n, lo, kind, grid, alpha)
    if values is None:
        w = grid if kind == "grid" else 0.0
        return Fitted(
            lo - w,
            hi + w,
            "Student-t interval"
            + (f" widened by the grid step {grid:g}" if w else "")
            + " (per-seed values not stored in this record: rerun for the sign-test interval)",
            False,
        )
    return _fit_sign(kind, grid, list(values), alpha)


def _fit_sign(kind: MetricKind, grid: float, values: list[float], alpha: float) -> Fitted:
    if sign_depth(len(values), alpha) == 0:
        return Fitted(-math.inf, math.inf, _few(len(values), alpha), True)
    lo, hi = sign_interval(values, alpha)
    why = "every seed gave the same value; " if kind == "continuous" else ""
    method = f"{why}sign-test interval of the median (distribution-free)"
    if kind == "grid" and grid > 0:
        lo, hi = lo - grid, hi + grid
        method += f", widened by the grid step {grid:g}"
    return Fitted(lo, hi, method, True)


def equal_values_interval(n: int, value: float, kind: MetricKind, grid: float, alpha: float) -> Fitted:
    """The interval of ``n`` seeds that all gave ``value`` (a zero-width t interval)."""
    return _fit_sign(kind, grid, [value] * n, alpha)


def _few(n: int, alpha: float) -> str:
    return (
        f"sign-test interval of the median: unbounded with {n} seeds at level {1 - alpha:.4g} "
        f"(it needs {min_seeds(alpha)})"
    )
