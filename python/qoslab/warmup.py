"""The end of a run's warm-up, read from its own series: MSER-5.

MSER-5 (K. P. White Jr., "An effective truncation heuristic for bias reduction in simulation
output", Simulation 69(6), 1997; K. P. White Jr., M. J. Cobb, S. C. Spratt, "A comparison of
five steady-state truncation heuristics for simulation", Proc. Winter Simulation Conference
2000): average the series in batches of 5 observations, ``Z_1..Z_m``; for each truncation
point ``d`` (in batches) the marginal standard error of what is left is

    MSER(d) = Σ_{i>d} (Z_i − Z̄_d)² / (m − d)²,

and the warm-up ends at the ``d`` that minimises it (``5·d`` observations). The rule looks only
at the first half of the batches; a minimum there at the half's end means the run is too short
to have a steady state by this rule, and :func:`mser5` says so (None) instead of guessing.

Assumptions: the observations are equally spaced in time (the queue and flow series are
sampled at a fixed interval), the run reaches a steady state, and the transient is a drift of
the mean (MSER does not detect a change of variance alone). This module only detects and
reports; a claim's measurement window stays what the experiment (or the paper) fixes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

BATCH = 5


@dataclass(frozen=True)
class Warmup:
    """The warm-up MSER-5 found: ``observations`` to drop (a multiple of 5), and ``mser`` the
    statistic at that point."""

    observations: int
    mser: float

    def seconds(self, interval_s: float) -> float:
        """The warm-up in seconds for observations ``interval_s`` apart (from the run's start)."""
        return self.observations * interval_s


def mser_curve(values: Sequence[float] | np.ndarray, batch: int = BATCH) -> np.ndarray:
    """MSER(d) for d = 0 .. m−1 over the batch means of ``values`` (a trailing partial batch is
    left out); O(m) from running sums."""
    a = np.asarray(values, dtype=float)
    m = a.size // batch
    if m == 0:
        return np.empty(0)
    z = a[: m * batch].reshape(m, batch).mean(axis=1)
    # sums over the tail i >= d: reversed cumulative sums
    s1 = np.cumsum(z[::-1])[::-1]
    s2 = np.cumsum((z * z)[::-1])[::-1]
    k = np.arange(m, 0, -1, dtype=float)  # m − d
    ss = np.maximum(s2 - s1 * s1 / k, 0.0)
    return np.asarray(ss / (k * k))


def mser5(values: Sequence[float] | np.ndarray) -> Warmup | None:
    """The warm-up of ``values`` by MSER-5 (see the module's text); None when the series is
    too short (fewer than 4 batches) or its minimum lies at the end of the searched half."""
    curve = mser_curve(values)
    m = curve.size
    if m < 4:
        return None
    half = m // 2
    d = int(np.argmin(curve[: half + 1]))
    if d == half:
        return None
    return Warmup(d * BATCH, float(curve[d]))


def series_end(times: Sequence[float] | np.ndarray, values: Sequence[float] | np.ndarray) -> float | None:
    """The time (s) the warm-up of one series ends by MSER-5: the time of its last dropped
    sample (observations sorted by time), 0 when none is dropped; None when MSER-5 finds no
    steady state."""
    t = np.asarray(times, dtype=float)
    order = np.argsort(t, kind="stable")
    t, v = t[order], np.asarray(values, dtype=float)[order]
    w = mser5(v)
    if w is None:
        return None
    return round(float(t[w.observations - 1]), 9) if w.observations else 0.0


def run_warmup(queue: pd.DataFrame, flow: pd.DataFrame, bottleneck: str) -> dict[str, float]:
    """``warmup_queue_s`` (the queue ``bottleneck``'s length), ``warmup_throughput_s`` (the
    aggregate throughput) and ``warmup_s``, the later of the two (NaN: no steady state by
    MSER-5 in that series, and then in the run)."""
    q = queue[queue["queue"] == bottleneck]
    agg = flow.groupby("time_s", sort=True)["throughput_bps"].sum()
    wq = series_end(q["time_s"].to_numpy(), q["queue_packets"].to_numpy())
    wt = series_end(agg.index.to_numpy(), agg.to_numpy())
    nan = float("nan")
    both = max(wq, wt) if wq is not None and wt is not None else None
    return {
        "warmup_queue_s": nan if wq is None else wq,
        "warmup_throughput_s": nan if wt is None else wt,
        "warmup_s": nan if both is None else both,
    }


#: the series columns :func:`run_warmup` reads
WARMUP_COLUMNS = {"queue": {"time_s", "queue", "queue_packets"}, "flow": {"time_s", "throughput_bps"}}


def stored_form(queue: pd.DataFrame, flow: pd.DataFrame, bottleneck: str) -> dict[str, Any]:
    """What a worker stores of a run's warm-up (in the run's summary, ``warmup``): the
    bottleneck's label, its samples and :func:`run_warmup`'s times, None for NaN (the summary is
    JSON). :func:`qoslab.reproduction.warmup_window.stored_warmups` reads it back instead of the
    run's series: the same numbers from the same series, computed while they are in memory."""
    w = run_warmup(queue, flow, bottleneck)
    return {
        "bottleneck": bottleneck,
        "samples": int((queue["queue"] == bottleneck).sum()),
        **{k: None if math.isnan(v) else v for k, v in w.items()},
    }
