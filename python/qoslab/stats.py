"""Statistics over seeds: mean, standard deviation and Student-t confidence intervals.

The t quantile is computed here (regularised incomplete beta function by continued fraction,
inverted by bisection) so that the package does not need scipy at run time; the tests check it
against ``scipy.stats.t``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

#: Confidence level used everywhere unless told otherwise.
LEVEL = 0.95


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the regularised incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    c = 1.0
    d = 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    f = d
    for m in range(1, 10_000):
        # even step: d_{2m} = m (b - m) x / ((a + 2m - 1)(a + 2m))
        num = m * (b - m) * x / ((a + 2 * m - 1.0) * (a + 2 * m))
        d = 1.0 + num * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + num / c
        c = c if abs(c) > tiny else tiny
        f *= c * d
        # odd step: d_{2m+1} = -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1))
        num = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1.0))
        d = 1.0 + num * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + num / c
        c = c if abs(c) > tiny else tiny
        step = c * d
        f *= step
        if abs(step - 1.0) < 1e-15:
            break
    return f


def betainc(a: float, b: float, x: float) -> float:
    """Regularised incomplete beta function I_x(a, b) for a, b > 0 and 0 <= x <= 1."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    front = math.exp(log_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """Cumulative distribution function of Student's t with ``df`` degrees of freedom."""
    if df <= 0:
        raise ValueError(f"degrees of freedom must be positive, got {df}")
    tail = 0.5 * betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t >= 0 else tail


def t_ppf(p: float, df: float) -> float:
    """Quantile of Student's t: the ``t`` with ``t_cdf(t, df) == p``, for 0 < p < 1."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"probability must be in (0, 1), got {p}")
    if p < 0.5:
        return -t_ppf(1.0 - p, df)
    if p == 0.5:
        return 0.0
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        lo, hi = hi, hi * 2.0
        if hi > 1e300:
            return math.inf
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-14 * max(1.0, hi):
            break
    return 0.5 * (lo + hi)


def welch_p(a: Estimate, b: Estimate) -> float:
    """Two-sided p-value of Welch's t-test that two means over independent seeds are equal
    (NaN with fewer than two values on a side). Two constant samples: 0 if their values
    differ, 1 if not."""
    if a.n < 2 or b.n < 2:
        return math.nan
    va, vb = a.std**2 / a.n, b.std**2 / b.n
    if va + vb == 0:
        return 0.0 if a.mean != b.mean else 1.0
    t = (a.mean - b.mean) / math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / (a.n - 1) + vb**2 / (b.n - 1))
    return 2.0 * (1.0 - t_cdf(abs(t), df))


@dataclass(frozen=True)
class Paired:
    """A paired comparison over seeds: the mean of the per-seed differences ``a - b``, its
    Student-t confidence interval and the two-sided p-value of the paired t-test (H0: the mean
    difference is 0)."""

    n: int
    mean: float
    ci_low: float
    ci_high: float
    p: float
    seeds: tuple[int, ...]
    #: the per-seed differences, in the order of ``seeds``
    values: tuple[float, ...] = ()

    @property
    def ci95(self) -> tuple[float, float]:
        return (self.ci_low, self.ci_high)

    def fmt(self, digits: int = 3, scale: float = 1.0) -> str:
        """``+0.012 [0.004, 0.020]`` (the mean difference and its CI, after dividing by ``scale``)."""
        if self.n == 0:
            return "n/a"
        m = self.mean / scale
        if not math.isfinite(self.ci_low):
            return f"{m:+.{digits}g}"
        h = (self.ci_high - self.ci_low) / 2.0 / scale
        d = _decimals_for(m, h, digits)
        return f"{m:+.{d}f} [{self.ci_low / scale:+.{d}f}, {self.ci_high / scale:+.{d}f}]"


def paired(a: dict[int, float] | pd.Series, b: dict[int, float] | pd.Series, level: float = LEVEL) -> Paired:
    """Paired t-test of ``a`` against ``b``, each a value per seed (a dict or a Series indexed by
    seed): the one-sample t-test of the per-seed differences against 0. Only the seeds both have
    (and finite on both sides) are used. With one pair the interval and p are NaN; with identical
    differences the interval is that difference and p is 0 (or 1 when it is 0)."""
    sa, sb = pd.Series(a, dtype=float), pd.Series(b, dtype=float)
    common = sorted(set(sa.index) & set(sb.index))
    d = (sa.reindex(common) - sb.reindex(common)).dropna()
    e = estimate(d, level)
    return Paired(
        e.n,
        e.mean,
        e.ci_low,
        e.ci_high,
        one_sample_p(e, 0.0),
        tuple(int(s) for s in d.index),
        tuple(float(x) for x in d.to_numpy()),
    )


def one_sample_p(est: Estimate, mu: float) -> float:
    """Two-sided p-value of the one-sample t-test that the mean behind ``est`` is ``mu`` (NaN
    with fewer than two values; a constant sample: 0 if it differs from ``mu``, 1 if not)."""
    if est.n < 2 or not math.isfinite(est.std):
        return math.nan
    if est.std == 0:
        return 0.0 if est.mean != mu else 1.0
    t = (est.mean - mu) / (est.std / math.sqrt(est.n))
    return 2.0 * (1.0 - t_cdf(abs(t), est.n - 1))


@dataclass(frozen=True)
class Estimate:
    """A metric over seeds: mean, sample standard deviation and a Student-t interval.

    With one value the spread and the interval are undefined (NaN); NaN inputs are ignored.
    """

    n: int
    mean: float
    std: float
    ci_low: float
    ci_high: float
    minimum: float
    maximum: float
    level: float = LEVEL
    #: the finite values the estimate is made of, in their order
    values: tuple[float, ...] = ()

    @property
    def half_width(self) -> float:
        return (self.ci_high - self.ci_low) / 2.0

    def contains(self, value: float) -> bool:
        """Whether ``value`` lies inside the confidence interval (False when it is undefined)."""
        return bool(self.ci_low <= value <= self.ci_high)

    def in_range(self, value: float) -> bool:
        """Whether ``value`` lies between the smallest and the largest seed's value."""
        return bool(self.minimum <= value <= self.maximum)

    def fmt(self, digits: int = 3, scale: float = 1.0) -> str:
        """``mean ± half-width`` with ``digits`` significant digits (after dividing by ``scale``)."""
        if self.n == 0:
            return "n/a"
        m = self.mean / scale
        if self.n < 2 or not math.isfinite(self.half_width):
            return f"{m:.{digits}g}"
        h = self.half_width / scale
        decimals = _decimals_for(m, h, digits)
        return f"{m:.{decimals}f} ± {h:.{decimals}f}"


def _decimals_for(mean: float, half: float, digits: int) -> int:
    """Decimals to show: two significant digits of the CI's half-width (a mean is known no
    better than that, however close to 0 it is); ``digits`` significant digits of the mean when
    there is no interval (or one of rounding noise, below 1e-9 of the mean: identical seeds)."""
    if half > 1e-9 * abs(mean):
        return min(max(0, 1 - math.floor(math.log10(half))), 12)
    mag = math.floor(math.log10(abs(mean))) if mean != 0 else 0
    return min(max(0, digits - 1 - mag), 12)


def estimate(values: Iterable[float], level: float = LEVEL) -> Estimate:
    """Mean, sample standard deviation (ddof 1) and the two-sided Student-t confidence interval
    ``mean ± t_{(1+level)/2, n-1} · s / √n`` of ``values`` (NaN values are left out)."""
    a = np.asarray(list(values), dtype=float)
    a = a[np.isfinite(a)]
    n = int(a.size)
    nan = math.nan
    if n == 0:
        return Estimate(0, nan, nan, nan, nan, nan, nan, level)
    mean = float(a.mean())
    lo_v, hi_v = float(a.min()), float(a.max())
    vals = tuple(float(x) for x in a)
    if n == 1:
        return Estimate(1, mean, nan, nan, nan, lo_v, hi_v, level, vals)
    std = float(a.std(ddof=1))
    half = t_ppf((1.0 + level) / 2.0, n - 1) * std / math.sqrt(n)
    return Estimate(n, mean, std, mean - half, mean + half, lo_v, hi_v, level, vals)


def seed_ranges(seeds: Iterable[int]) -> str:
    """``[1, 2, 3, 5]`` → ``"1-3,5"``: a compact list of seeds for tables and reports."""
    s = sorted(set(int(x) for x in seeds))
    parts: list[str] = []
    i = 0
    while i < len(s):
        j = i
        while j + 1 < len(s) and s[j + 1] == s[j] + 1:
            j += 1
        parts.append(str(s[i]) if i == j else f"{s[i]}-{s[j]}")
        i = j + 1
    return ",".join(parts)


class SummaryRow:
    """A row of :func:`summarize`'s table, for :func:`qoslab.report.frames.typed_rows` (the columns of
    ``by`` come first, untyped)."""

    metric: str
    n: int
    mean: float
    std: float
    ci_low: float
    ci_high: float
    half_width: float
    min: float
    max: float
    seeds: str


def summarize(
    df: pd.DataFrame,
    metrics: Sequence[str],
    by: Sequence[str] = (),
    level: float = LEVEL,
) -> pd.DataFrame:
    """One row per group of ``by`` and metric: n, mean, std, ci_low, ci_high, min, max and the
    seeds that contributed. ``df`` has one row per run with a ``seed`` column."""
    rows: list[dict[str, Any]] = []
    groups = df.groupby(list(by), sort=False, dropna=False) if by else [((), df)]
    for key, g in groups:
        key = key if isinstance(key, tuple) else (key,)
        for m in metrics:
            if m not in g.columns:
                raise KeyError(f"no metric {m!r} (have: {', '.join(sorted(map(str, g.columns)))})")
            vals = pd.to_numeric(g[m], errors="coerce").to_numpy(dtype=float)
            e = estimate(vals, level)
            ok = np.isfinite(vals)
            seeds = seed_ranges(g["seed"].to_numpy()[ok]) if "seed" in g.columns else ""
            rows.append(
                {
                    **dict(zip(by, key, strict=True)),
                    "metric": m,
                    "n": e.n,
                    "mean": e.mean,
                    "std": e.std,
                    "ci_low": e.ci_low,
                    "ci_high": e.ci_high,
                    "half_width": e.half_width,
                    "min": e.minimum,
                    "max": e.maximum,
                    "seeds": seeds,
                }
            )
    return pd.DataFrame(rows)


def fmt_pm(mean: float, half: float) -> str:
    """``mean ± half`` for a table: no decimals from 10^4 up, 4 significant digits below (the
    half-width to 2); ``n/a`` for a NaN mean, the mean alone for a NaN half-width."""
    if math.isnan(mean):
        return "n/a"
    big = abs(mean) >= 1e4
    m = f"{mean:.0f}" if big else f"{mean:.4g}"
    if math.isnan(half):
        return m
    return f"{m} ± {half:.0f}" if big else f"{m} ± {half:.2g}"


def mean_ci_table(stats: pd.DataFrame, metrics: Sequence[str], by: Sequence[str] = ()) -> pd.DataFrame:
    """A wide table of :func:`summarize`'s output: one row per group of ``by`` with the group's
    values, the number of seeds ``n`` and one ``mean ± 95% CI half-width`` column per metric
    (strings, :func:`fmt_pm`), groups in the order they appear."""
    rows: list[dict[str, str]] = []
    groups = stats.groupby(list(by), sort=False) if by else [((), stats)]
    for key, g in groups:
        key = key if isinstance(key, tuple) else (key,)
        row = {**dict(zip(by, map(str, key), strict=True)), "n": str(int(g["n"].iloc[0]))}
        for m in metrics:
            r = g[g["metric"] == m].iloc[0]
            row[m] = fmt_pm(r["mean"], r["half_width"])
        rows.append(row)
    return pd.DataFrame(rows)


def comparison_row(published: float, est: Estimate) -> dict[str, float | int | bool]:
    """The columns of a comparison table: published value, our mean ± CI, whether the published
    value lies inside the CI and inside the range of seeds, and the relative difference."""
    rel = (est.mean - published) / published if published else math.nan
    return {
        "published": published,
        "mean": est.mean,
        "ci_low": est.ci_low,
        "ci_high": est.ci_high,
        "n": est.n,
        "inside_ci": est.contains(published),
        "seed_min": est.minimum,
        "seed_max": est.maximum,
        "inside_seed_range": est.in_range(published),
        "relative_difference": rel,
    }
