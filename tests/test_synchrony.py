"""The windows' synchrony (qoslab.report.synchrony): closed forms on made-up windows, and why
RTT × C / √n falls short at 100 flows in buffer-sizing's rule sweep (docs/experiments/
buffer-sizing.md, tools/buffer_sizing_synchrony.py): not synchronised windows, but windows
far wider than the sawtooth the rule assumes."""

from __future__ import annotations

import importlib.util
import math

import numpy as np
import pandas as pd
import pytest

from conftest import ROOT
from qoslab.report.synchrony import SAWTOOTH_CV, window_synchrony


def _series(windows: np.ndarray) -> pd.DataFrame:
    """``windows[t, i]``: flow i's window at sample t, as a series_flow table."""
    t, n = windows.shape
    return pd.DataFrame(
        {
            "time_ns": np.repeat(np.arange(t) * 10_000_000, n),
            "flow": np.tile([f"f{i}" for i in range(n)], t),
            "cwnd": windows.reshape(-1),
        }
    )


def _sawtooth(t: np.ndarray, phase: float) -> np.ndarray:
    """A window rising from W/2 to W = 20 and halving, period 1."""
    return 10.0 + 10.0 * ((t + phase) % 1.0)


def test_lockstep_windows_give_root_n_and_independent_ones_one() -> None:
    t = np.linspace(0, 50, 5001, endpoint=False)
    n = 16
    lockstep = window_synchrony(_series(np.stack([_sawtooth(t, 0.0)] * n, axis=1)))
    assert lockstep.ratio == pytest.approx(math.sqrt(n), rel=1e-9)
    assert lockstep.per_flow_cv == pytest.approx(SAWTOOTH_CV, rel=0.01)  # the sawtooth's 0.192
    assert lockstep.aggregate_cv == pytest.approx(SAWTOOTH_CV, rel=0.01)
    # phases spread evenly: the sum is one sawtooth with n teeth as deep as one window's, so it
    # varies as one window does, 1/√n of what independent windows would give
    spread = window_synchrony(_series(np.stack([_sawtooth(t, i / n) for i in range(n)], axis=1)))
    assert spread.ratio == pytest.approx(1 / math.sqrt(n), rel=0.01)
    assert spread.model_aggregate_cv == pytest.approx(SAWTOOTH_CV / 4)
    # independent random windows: the ratio is 1 within sampling noise
    rng = np.random.default_rng(1)
    independent = window_synchrony(_series(rng.uniform(10.0, 20.0, size=(20_000, n))))
    assert independent.ratio == pytest.approx(1.0, abs=0.05)
    # only the samples from start_ns on count
    late = window_synchrony(_series(np.stack([_sawtooth(t, 0.0)] * n, axis=1)), start_ns=10**9)
    assert late.samples == 5001 - 100


def test_too_few_flows_or_windows_that_never_move_are_one_line() -> None:
    with pytest.raises(ValueError, match="two flows"):
        window_synchrony(_series(np.ones((10, 1))))
    with pytest.raises(ValueError, match="no window moved"):
        window_synchrony(_series(np.ones((10, 3))))


def test_at_100_flows_the_rules_buffer_falls_short_by_wide_windows_not_synchrony() -> None:
    """The rule sweep's 100-flow point (mean RTT, 100 s from 20 s; windows every 10 ms), seed 1:
    the aggregate window varies as independent windows would (ratio 0.95 with Reno, 1.24 with
    SACK; 1.5-2.0 at 16 flows), but each window's coefficient of variation is 0.63 and 0.45,
    not the sawtooth's 0.19 (Reno loses a flow to a timeout 29 times in the 80 s, SACK 3), so
    the aggregate's is 0.061 and 0.057 against the 0.019 the rule's model gives. Utilisation
    0.938 and 0.977, short of the 98 % the rule's verdict asks."""
    spec = importlib.util.spec_from_file_location("bss", ROOT / "tools" / "buffer_sizing_synchrony.py")
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    for sender, ratio_hi in (("reno", 1.1), ("sack", 1.35)):
        m = tool.measure(100, sender, 1)
        assert m["utilization"] < 0.98, m  # the rule's buffer falls short here
        assert 0.8 < m["ratio"] < ratio_hi, m  # no more synchronised than independent windows
        assert m["per_flow_cv"] > 2 * SAWTOOTH_CV, m  # windows wider than the sawtooth
        assert m["aggregate_cv"] > 2.5 * m["model_aggregate_cv"], m
    assert tool.measure(16, "reno", 1)["ratio"] > 1.4  # at 16 flows the windows move together more
