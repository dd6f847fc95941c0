"""How synchronised the congestion windows of flows sharing a bottleneck are, from a run's
``series_flow`` (its ``cwnd`` column, sampled at ``measurement.interval``).

Appenzeller, Keslassy and McKeown's RTT × C / √n rests on two assumptions about n long-lived
flows: their windows are *desynchronised* (the aggregate window Σ Wᵢ varies as a sum of
independent terms, its standard deviation √n times one flow's), and each window is a
sawtooth halving on a loss (uniform between W/2 and W: a coefficient of variation of
(1/2)/(√12 · 3/4) = 0.192). :func:`window_synchrony` measures both:

- ``ratio``: the aggregate window's standard deviation over the one independent windows would
  give, √(Σ var Wᵢ). 1 for independent windows, √n for windows moving in lockstep, below 1
  where the flows take up what the others leave (a link shared by window-limited flows);
- ``per_flow_cv``: the mean over flows of std(Wᵢ) / mean(Wᵢ), against the sawtooth's 0.192;
- ``aggregate_cv``: std(Σ Wᵢ) / mean(Σ Wᵢ), against ``model_aggregate_cv`` = 0.192 / √n, the
  two assumptions together.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

#: One window's coefficient of variation as a sawtooth uniform between W/2 and W.
SAWTOOTH_CV = 0.5 / (math.sqrt(12.0) * 0.75)


@dataclass(frozen=True)
class Synchrony:
    """The windows of ``flows`` flows over ``samples`` samples (see the module's docstring)."""

    flows: int
    samples: int
    ratio: float
    per_flow_cv: float
    aggregate_cv: float
    model_aggregate_cv: float


def window_synchrony(series_flow: pd.DataFrame, start_ns: int = 0) -> Synchrony:
    """The synchrony of the ``cwnd`` series of every flow of ``series_flow`` (columns
    ``time_ns``, ``flow``, ``cwnd``) from ``start_ns`` on. Flows without a window (NaN: UDP, or
    ``measurement.cwnd = false``) are left out; ValueError when fewer than two flows or two
    samples remain, or a window never moves (its variation is then undefined)."""
    s = series_flow[series_flow["time_ns"] >= start_ns]
    w = s.pivot_table(index="time_ns", columns="flow", values="cwnd").dropna(axis=1, how="all")
    if w.shape[1] < 2 or w.shape[0] < 2:
        raise ValueError(
            f"window synchrony needs two flows and two samples, got {w.shape[1]} and {w.shape[0]}"
        )
    means = w.mean(axis=0).to_numpy(float)
    sds = w.std(axis=0).to_numpy(float)
    if not np.all(means > 0):
        raise ValueError("window synchrony needs every flow's window above 0 on average")
    agg = w.sum(axis=1).to_numpy(float)
    agg_sd = float(np.std(agg, ddof=1))
    independent = math.sqrt(float(np.sum(sds**2)))
    if independent == 0.0:
        raise ValueError("window synchrony: no window moved over the samples")
    n = int(w.shape[1])
    return Synchrony(
        flows=n,
        samples=int(w.shape[0]),
        ratio=agg_sd / independent,
        per_flow_cv=float(np.mean(sds / means)),
        aggregate_cv=agg_sd / float(np.mean(agg)),
        model_aggregate_cv=SAWTOOTH_CV / math.sqrt(n),
    )
