"""MSER-5 (qoslab.warmup): the statistic against its definition, and the warm-up it finds."""

from __future__ import annotations

import numpy as np
import pytest

from qoslab.warmup import mser5, mser_curve


def test_curve_is_the_definition() -> None:
    rng = np.random.default_rng(2)
    x = rng.normal(size=103)  # 20 batches, 3 values left out
    z = x[:100].reshape(20, 5).mean(axis=1)
    curve = mser_curve(x)
    for d in (0, 3, 10, 19):
        tail = z[d:]
        assert curve[d] == pytest.approx(((tail - tail.mean()) ** 2).sum() / len(tail) ** 2, rel=1e-9)


def test_finds_the_end_of_a_transient_and_none_in_a_stationary_series() -> None:
    rng = np.random.default_rng(7)
    t = np.arange(2000)
    # a queue filling from empty: mean rises to 50 with time constant 40 observations
    x = 50.0 * (1.0 - np.exp(-t / 40.0)) + rng.normal(0.0, 2.0, t.size)
    w = mser5(x)
    assert w is not None
    # the bias is below the noise's standard error of a batch (2/√5 ≈ 0.9) from t ≈ 160 on
    assert 100 <= w.observations <= 400
    assert w.seconds(0.1) == pytest.approx(w.observations * 0.1)
    flat = rng.normal(10.0, 1.0, 2000)
    wf = mser5(flat)
    assert wf is not None and wf.observations <= 100


def test_a_series_still_drifting_has_no_warmup() -> None:
    x = np.linspace(0.0, 100.0, 1000)  # never steady: the minimum runs to the end of the half
    assert mser5(x) is None
    assert mser5([1.0, 2.0, 3.0]) is None  # shorter than four batches
