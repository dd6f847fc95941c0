"""The dynamics claims of ``fdd-red`` (:mod:`qoslab.studies.fdd_red.study`): Fig. 8's "converges
more rapidly", Fig. 9's "queue length fluctuation … obviously lower" and the conclusion's
"queue size and even stability", measured per seed and paired FDD-RED − RED.

The ``dynamics`` sweep reruns scenario 1 (five flows, RTT 100 ms, 20 s) sampled every 50 ms
(the ``tables`` sweep samples its 20 s runs every second), for RED and every FDD-RED reading
and TCP window; the queue claims also read the ``tables`` sweep's 100 s runs over 20-100 s (the
steady state of Table 2's primary reading).

- convergence time (Fig. 8, kind grid of 0.5 s): the end of the last 0.5 s bin in which the
  bottleneck carries less than 95 % of the link (the sum of the flows' received throughput),
  i.e. the time from which the link stays full; the run's end (20 s) when the last bin is short
  (censored at the end). The other reading ("Jain of shares", Fig. 5's "converge to a fair
  point"): the end of the last 2 s window (sliding by 0.5 s) whose Jain index of the flows'
  throughput is below 0.9.
- queue fluctuation (Fig. 9): the standard deviation of the instantaneous bottleneck queue
  (packets) over the window, or its coefficient of variation (std / mean); FDD-RED against RED
  as the per-seed relative change.
- queue size (conclusion): the mean instantaneous queue over the window, relative change.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from qoslab.reproduction.base import Options, Sweep, scenario
from qoslab.reproduction.runner import Context
from qoslab.stats import paired
from qoslab.studies.fdd_red.claims import CONCLUSION, CONVERGES, FLUCTUATION
from qoslab.studies.fdd_red.paper import AQMS, READING_SUPPORT, READINGS, WINDOW_SUPPORT, WINDOWS
from qoslab.studies.red_baseline.paper import SHORT

if TYPE_CHECKING:
    from qoslab.scenario import Scenario

#: the link rate (bps) and the share of it a bin must carry to count as "fully utilized"
LINK_BPS = 1e6
FULL = 0.95
#: Fig. 8's bin (s) and the run's length (s), at which a run that never stays full is censored
BIN_S = 0.5
RUN_S = 20.0
#: the fairness reading: Jain's index over 2 s windows (4 bins) at least this
FAIR_JAIN = 0.9
FAIR_BINS = 4
#: the queue claims' windows: (sweep, setup filter, first and last time, the reading's words)
QUEUE_WINDOWS = {
    "whole 20 s run": ("dynamics", {}, 0.0, RUN_S),
    "80 s steady state": ("tables", {"rtt": "homogeneous", "setup": "file"}, 20.0, 100.0),
}
QUEUE_WINDOW_SUPPORT = {
    "whole 20 s run": "Fig. 9 plots scenario 1's 20 s run",
    "80 s steady state": "'run long enough … consistent behavior' (Table 2's primary window)",
}
BOTTLENECK = "bottleneck:ab"


def dynamics_sweep(opts: Options) -> Sweep:
    pts: list[tuple[dict[str, Any], Scenario]] = [
        (
            {"aqm": a, "window": w},
            scenario("fdd-red-s1", [*SHORT, "measurement.interval=50ms", f"tcp.window={w}", *AQMS[a]]),
        )
        for a in ("red", *READINGS)
        for w in WINDOWS
    ]
    return Sweep(
        "dynamics",
        pts,
        opts.seeds,
        "Scenario 1 for 20 s sampled every 50 ms, RED and the three FDD-RED readings, TCP window cap "
        "20, 64 or unlimited: the convergence time (Fig. 8) and the queue's fluctuation and size "
        "(Fig. 9, conclusion).",
    )


def converged_full(flow: pd.DataFrame) -> float:
    """The time (s) from which every 0.5 s bin of the bottleneck's throughput (the flows'
    received throughput summed) carries at least 95 % of the link; 20 s if the last bin does not."""
    tot = flow[flow["time_s"] > 0].groupby("time_s")["throughput_bps"].sum()
    bins = tot.groupby(np.ceil(tot.index.to_numpy() / BIN_S - 1e-9).astype(int)).mean()
    short = bins.index[bins.to_numpy() < FULL * LINK_BPS]
    return float(short.max()) * BIN_S if len(short) else 0.0


def converged_fair(flow: pd.DataFrame) -> float:
    """The time (s) from which Jain's index of the flows' throughput over every 2 s window
    (sliding by 0.5 s) is at least 0.9; 20 s if the last window's is not."""
    f = flow[flow["time_s"] > 0].copy()
    f["bin"] = np.ceil(f["time_s"].to_numpy() / BIN_S - 1e-9).astype(int)
    per = f.groupby(["bin", "flow_name"])["throughput_bps"].mean().unstack().sort_index()
    win = per.rolling(FAIR_BINS).mean().dropna()
    x = win.to_numpy()
    jain = (x.sum(axis=1) ** 2) / (x.shape[1] * (x**2).sum(axis=1)).clip(min=1e-12)
    low = win.index[jain < FAIR_JAIN]
    return float(low.max()) * BIN_S if len(low) else float(win.index.min() - FAIR_BINS) * BIN_S


def _queue(q: pd.DataFrame, t0: float, t1: float) -> pd.Series:
    qq = q[(q["queue"] == BOTTLENECK) & (q["time_s"] > t0) & (q["time_s"] <= t1)]
    return qq["queue_packets"].astype(float)


QUEUE_STATS: dict[str, Callable[[pd.Series], float]] = {
    "std": lambda s: float(s.std(ddof=0)),
    "CV": lambda s: float(s.std(ddof=0) / s.mean()) if s.mean() > 0 else float("nan"),
    "mean": lambda s: float(s.mean()),
}


def per_seed(
    ctx: Context, sweep: str, where: dict[str, Any], kind: str, f: Callable[[pd.DataFrame], float]
) -> pd.Series:
    """``f`` of each seed's ``kind`` series where the parameters match."""
    s = ctx.series(sweep, kind, where)
    if s.empty:
        return pd.Series(dtype=float)
    return s.groupby("seed").apply(f).astype(float)


def _rel(a: pd.Series, b: pd.Series) -> Any:
    rel = (a / b.reindex(a.index) - 1.0).replace([np.inf, -np.inf], np.nan).dropna()
    return paired(rel, pd.Series(0.0, index=rel.index))


def _support(*parts: str) -> str:
    return "; ".join(p for p in parts if p)


def dynamics_verdicts(ctx: Context) -> None:
    """Fig. 8, Fig. 9 and the conclusion's queue size: paired FDD-RED − RED per reading."""
    for w in WINDOWS:
        red = {"aqm": "red", "window": w}
        base = {
            name: per_seed(ctx, "dynamics", red, "flow", f)
            for name, f in (("link full", converged_full), ("Jain of shares", converged_fair))
        }
        for arm, reading in READINGS.items():
            sup = _support(READING_SUPPORT[arm], WINDOW_SUPPORT[w])
            here = {"aqm": arm, "window": w}
            for name, f in (("link full", converged_full), ("Jain of shares", converged_fair)):
                test = paired(per_seed(ctx, "dynamics", here, "flow", f), base[name])
                ctx.verdict(CONVERGES.paired(f"{reading}, {name}, {WINDOWS[w]}", test, supported=sup))
    for measure, (sweep, where, t0, t1) in QUEUE_WINDOWS.items():
        for w in WINDOWS:
            stats = {
                aqm: {
                    k: per_seed(ctx, sweep, {**where, "aqm": aqm, "window": w}, "queue", _stat(k, t0, t1))
                    for k in QUEUE_STATS
                }
                for aqm in ("red", *READINGS)
            }
            for arm, reading in READINGS.items():
                sup = _support(READING_SUPPORT[arm], QUEUE_WINDOW_SUPPORT[measure], WINDOW_SUPPORT[w])
                for k in ("std", "CV"):
                    test = _rel(stats[arm][k], stats["red"][k])
                    name = f"{reading}, {k}, {measure}, {WINDOWS[w]}"
                    ctx.verdict(FLUCTUATION.paired(name, test, supported=sup))
                test = _rel(stats[arm]["mean"], stats["red"]["mean"])
                ctx.verdict(CONCLUSION.paired(f"{reading}, {measure}, {WINDOWS[w]}", test, supported=sup))


def _stat(k: str, t0: float, t1: float) -> Callable[[pd.DataFrame], float]:
    return lambda q: QUEUE_STATS[k](_queue(q, t0, t1))
