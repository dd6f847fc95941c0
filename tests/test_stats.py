"""Statistics over seeds against scipy."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from qoslab.stats import betainc, comparison_row, estimate, paired, seed_ranges, summarize, t_cdf, t_ppf


@pytest.mark.parametrize("df", [1, 2, 3, 4, 5, 9, 19, 29, 99, 1000])
@pytest.mark.parametrize("p", [0.8, 0.9, 0.95, 0.975, 0.995, 0.9995, 0.025])
def test_t_quantile_matches_scipy(df, p):
    assert t_ppf(p, df) == pytest.approx(sps.t.ppf(p, df), rel=1e-9)


@pytest.mark.parametrize("df", [1, 3, 10, 57])
def test_t_cdf_and_incomplete_beta_match_scipy(df):
    for t in (-8.0, -2.0, -0.3, 0.0, 0.7, 2.5, 30.0):
        assert t_cdf(t, df) == pytest.approx(sps.t.cdf(t, df), abs=1e-12)
    for a, b, x in ((0.5, 0.5, 0.3), (df / 2, 0.5, 0.9), (2.0, 7.0, 0.05), (30.0, 2.0, 0.99)):
        assert betainc(a, b, x) == pytest.approx(sps.beta.cdf(x, a, b), rel=1e-10)


@pytest.mark.parametrize("n", [2, 3, 5, 10, 30])
@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
def test_confidence_interval_matches_scipy(n, level):
    rng = np.random.default_rng(n * 100 + int(level * 100))
    x = rng.normal(0.9, 0.05, size=n)
    e = estimate(x, level)
    lo, hi = sps.t.interval(level, n - 1, loc=x.mean(), scale=sps.sem(x))
    assert e.n == n
    assert e.mean == pytest.approx(x.mean(), rel=1e-12)
    assert e.std == pytest.approx(x.std(ddof=1), rel=1e-12)
    assert e.ci_low == pytest.approx(lo, rel=1e-9)
    assert e.ci_high == pytest.approx(hi, rel=1e-9)
    assert e.contains(x.mean()) and not e.contains(hi + 1e-6)


def test_degenerate_samples():
    one = estimate([3.0])
    assert one.n == 1 and one.mean == 3.0 and math.isnan(one.std) and not one.contains(3.0)
    empty = estimate([])
    assert empty.n == 0 and math.isnan(empty.mean) and empty.fmt() == "n/a"
    withnan = estimate([1.0, float("nan"), 3.0])
    assert withnan.n == 2 and withnan.mean == 2.0
    const = estimate([5.0, 5.0, 5.0])
    assert const.ci_low == const.ci_high == 5.0 and const.contains(5.0)


def test_summarize_groups_and_records_seeds():
    rng = np.random.default_rng(1)
    rows = [{"buffer": b, "seed": s, "drops": b + rng.normal()} for b in (10, 50) for s in (1, 2, 3, 5)]
    df = pd.DataFrame(rows)
    out = summarize(df, ["drops"], by=["buffer"])
    assert list(out["buffer"]) == [10, 50]
    for b, r in zip((10, 50), out.itertuples(), strict=True):
        x = df[df["buffer"] == b]["drops"].to_numpy()
        lo, hi = sps.t.interval(0.95, len(x) - 1, loc=x.mean(), scale=sps.sem(x))
        assert (
            r.mean == pytest.approx(x.mean())
            and r.ci_low == pytest.approx(lo)
            and r.ci_high == pytest.approx(hi)
        )
        assert r.seeds == "1-3,5" and r.n == 4
    with pytest.raises(KeyError, match="no metric"):
        summarize(df, ["nope"], by=["buffer"])


def test_comparison_row_and_seed_ranges():
    e = estimate([0.95, 0.97, 0.96, 0.98])
    r = comparison_row(0.967, e)
    assert r["inside_ci"] is True and r["inside_seed_range"] is True
    assert r["relative_difference"] == pytest.approx((e.mean - 0.967) / 0.967)
    r = comparison_row(0.888, e)
    assert r["inside_ci"] is False and r["inside_seed_range"] is False
    assert seed_ranges([5, 1, 2, 3, 9, 10]) == "1-3,5,9-10"


def test_effects_near_zero_are_shown_to_the_precision_of_their_interval():
    """A mean of −6.6e-7 with a CI of ±0.0013 is shown as ±0.0000 at the CI's two significant
    digits, not with nine decimals."""
    p = paired(pd.Series([0.0012, -0.0013, 0.0001, -0.0000026]), pd.Series([0.0, 0.0, 0.0, 0.0]))
    text = p.fmt()
    assert len(text.split()[0]) <= 8, text
    assert estimate([0.9971, 0.998, 0.996]).fmt() == "0.9970 ± 0.0025"
    assert estimate([1.44, 1.5, 1.6]).fmt() == "1.51 ± 0.20"
