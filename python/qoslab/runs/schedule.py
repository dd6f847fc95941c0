"""Longest runs first: the order in which a sweep hands its runs to the executor.

With the runs of an experiment submitted in plan order, a long run that happens to come last
starts when every other run is done and leaves all but one worker idle until it ends. Handing
out the longest runs first (the LPT rule: R. L. Graham, "Bounds on multiprocessing timing
anomalies", SIAM J. Appl. Math. 17(2), 1969, whose makespan is within 4/3 of the optimum)
leaves the short ones to fill the gaps at the end.

A run's cost is estimated, in order of preference, from

1. the wall times the store holds for the same scenario (its hash; any seed, any version):
   their mean;
2. the scenario itself: simulated seconds × (packets per second through the slowest link ×
   the number of links + :data:`FLOW_EVENTS_PER_S` × the number of flows), a count of the
   packet-hops and per-flow events the core would process were the slowest link saturated
   and every packet crossing every link. Where some scenarios of the sweep have stored times,
   the estimates of the others are converted to seconds by the median ratio of stored time to
   estimate over those that have both.

The order changes nothing but the order: every run is the same scenario and seed, computed
by the same worker code, so the stored results are bit-identical (``tests/test_schedule.py``).
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from qoslab.runs.tasks import RunTask
    from qoslab.scenario import Scenario
    from qoslab.store import Store

#: ``QOSLAB_SCHEDULE=plan`` hands the runs out in plan order (as before), for comparisons
SCHEDULE_ENV = "QOSLAB_SCHEDULE"

#: per-flow events per simulated second counted on top of the packet-hops (timers, sources)
FLOW_EVENTS_PER_S = 50.0
#: a flow's packet size when the scenario gives none (bytes)
DEFAULT_PACKET_BYTES = 1000.0

T = TypeVar("T")


def scenario_cost(sc: Scenario) -> float:
    """The estimated work of one run of ``sc`` (arbitrary units, proportional to packet-hops)."""
    o = sc.outline
    duration = float(o.get("duration_ns") or 0) / 1e9
    links = o.get("links") or []
    flows = o.get("flows") or []
    rates = [float(x["bandwidth_bps"]) for x in links if x.get("bandwidth_bps")]
    sizes = [float(f["packet_size_bytes"]) for f in flows if f.get("packet_size_bytes")]
    size = statistics.fmean(sizes) if sizes else DEFAULT_PACKET_BYTES
    pps = min(rates) / (8.0 * size) if rates else 0.0
    return duration * (pps * max(1, len(rates)) + FLOW_EVENTS_PER_S * len(flows))


def stored_wall_times(store: Store, hashes: Sequence[str]) -> dict[str, float]:
    """The mean wall time of the successful runs the store holds for each scenario hash."""
    out: dict[str, float] = {}
    uniq = sorted(set(hashes))
    for i in range(0, len(uniq), 500):  # SQLite's limit on bound parameters
        part = uniq[i : i + 500]
        marks = ",".join("?" * len(part))
        df = store.query(
            "SELECT scenario_sha256 AS h, AVG(wall_time_s) AS t FROM runs "
            f"WHERE status = 'ok' AND wall_time_s > 0 AND scenario_sha256 IN ({marks}) "
            "GROUP BY scenario_sha256",
            part,
        )
        out.update({str(h): float(t) for h, t in zip(df["h"], df["t"], strict=True)})
    return out


def costs(scenarios: Mapping[str, Scenario], store: Store | None = None) -> dict[str, float]:
    """The cost of one run of each scenario (keyed by its hash): stored wall times where the
    store has them, else the model's estimate, in seconds when it can be calibrated against
    stored times (see the module's text)."""
    model = {h: scenario_cost(sc) for h, sc in scenarios.items()}
    stored = stored_wall_times(store, list(scenarios)) if store is not None else {}
    ratios = [stored[h] / model[h] for h in stored if model.get(h, 0.0) > 0]
    scale = statistics.median(ratios) if ratios else 1.0
    return {h: stored.get(h, model[h] * scale) for h in scenarios}


def longest_first(items: Sequence[T], cost_of: Mapping[int, float]) -> list[T]:
    """``items`` sorted by decreasing cost (``cost_of[i]`` for the item at index ``i``); equal
    costs keep their order, so the order is deterministic."""
    order = sorted(range(len(items)), key=lambda i: (-cost_of[i], i))
    return [items[i] for i in order]


def mode() -> str:
    """``longest`` (the default) or ``plan`` (``QOSLAB_SCHEDULE=plan``: the order and the
    per-experiment sweeps of ``reproduce all`` as before)."""
    m = os.environ.get(SCHEDULE_ENV, "longest")
    if m not in ("longest", "plan"):
        raise ValueError(f"{SCHEDULE_ENV} must be 'longest' or 'plan', got {m!r}")
    return m


def schedule(
    tasks: Sequence[RunTask], scenarios: Mapping[str, Scenario], store: Store | None
) -> list[RunTask]:
    """The order in which :func:`qoslab.runs.sweep.run_sweep` submits ``tasks``: longest first by
    :func:`costs` (``scenarios``: each task's scenario by its hash), or the plan's order when
    the environment sets ``QOSLAB_SCHEDULE=plan``."""
    if mode() == "plan":
        return list(tasks)
    cost = costs(scenarios, store)
    return longest_first(tasks, {i: cost[t.key.scenario_sha256] for i, t in enumerate(tasks)})


def lpt_makespan(durations: Sequence[float], workers: int) -> float:
    """The time ``workers`` take to finish ``durations`` handed out in the given order, each to
    the first free worker (a model of the local pool, for comparing orders)."""
    free = [0.0] * max(1, workers)
    for d in durations:
        i = free.index(min(free))
        free[i] += d
    return max(free)
