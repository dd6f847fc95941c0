"""numpy's float64 reductions to the last bit, without importing numpy.

A run's summary (``summary.json``: aggregate throughput, its standard deviation, Jain's index)
is computed here in numpy's own order of additions, its pairwise summation (``pairwise_sum`` in
numpy's ``loops_utils``), so that a run that never imports numpy reports the same numbers as
the tables built with it. Tested against numpy (tests/test_startup.py).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy as np


def pairwise_sum(a: list[float], lo: int, n: int) -> float:
    """numpy's pairwise summation of ``a[lo:lo + n]`` (``pairwise_sum`` in its ``loops_utils``):
    below 8 values in order, up to 128 in eight interleaved partial sums, above that the two
    halves (split at a multiple of 8) summed apart."""
    if n < 8:
        res = -0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    if n <= 128:
        r = a[lo : lo + 8]
        i, whole = 8, n - n % 8
        while i < whole:
            for j in range(8):
                r[j] += a[lo + i + j]
            i += 8
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        for k in range(lo + i, lo + n):
            res += a[k]
        return res
    half = n // 2
    half -= half % 8
    return pairwise_sum(a, lo, half) + pairwise_sum(a, lo + half, n - half)


def np_sum(x: Sequence[float]) -> float:
    """``float(numpy.sum(x))`` of a float64 vector, to the last bit, without numpy: the same
    additions in the same order (numpy starts from its identity, 0.0). Tested against numpy."""
    a = [float(v) for v in x]
    return 0.0 + pairwise_sum(a, 0, len(a))


def np_std(x: Sequence[float]) -> float:
    """``float(numpy.std(x))`` of a float64 vector, to the last bit, without numpy (numpy's
    ``_var``: the mean, the squared deviations summed, over n; its square root)."""
    a = [float(v) for v in x]
    if not a:
        return math.nan
    mean = np_sum(a) / len(a)
    return math.sqrt(np_sum([(v - mean) * (v - mean) for v in a]) / len(a))


def jain_index(x: Sequence[float] | np.ndarray) -> float:
    """Jain's fairness index (Σx)² / (n·Σx²): 1 when all values are equal, 1/n at worst."""
    a = [float(v) for v in x]
    s2 = np_sum([v * v for v in a])
    return 1.0 if s2 == 0 else np_sum(a) ** 2 / (len(a) * s2)
