"""Running a scenario in qoslab and in ns-2 side by side (``qoslab crosscheck``).

Both simulators get the same resolved scenario (``qoslab.ns2`` writes the ns-2 script) and
the same seeds; random start times are drawn from the same distribution, not the same values,
so the comparison is statistical: each metric is shown as mean ± 95 % CI over the seeds in
both, with the relative difference of the means.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from qoslab import _core, ns2
from qoslab.scenario import Scenario, to_ns2_resolved
from qoslab.simulate import jain_index
from qoslab.simulate import run as run_qoslab
from qoslab.stats import Estimate, estimate

COLOURS = ("green", "yellow", "red")


@dataclass
class Side:
    """Per-seed values of every compared metric, for one simulator."""

    values: dict[str, list[float]] = field(default_factory=dict)

    def add(self, key: str, v: float) -> None:
        self.values.setdefault(key, []).append(float(v))


def _qoslab_metrics(sc: Scenario, seed: int, side: Side) -> None:
    r = run_qoslab(sc, seed)
    for f in r.flows.itertuples():
        side.add(f"throughput_kbps {f.name}", f.throughput_bps / 1e3)
        for c in COLOURS:
            side.add(f"{c} packets {f.name}", getattr(f, f"{c}_packets"))
    side.add("jain index", r.fairness_index)
    bn = sc.resolved["measurement"]["bottleneck"]
    for lk in r.links.itertuples():
        if lk.link_name != bn or lk.arrivals == 0:
            continue
        where = f"{lk.link_name}:{lk.direction}"
        side.add(f"utilisation {where}", lk.utilization)
        side.add(f"drops {where}", lk.early_drops + lk.forced_drops + lk.overflow_drops)
        for p in range(3):
            side.add(f"drops prec{p} {where}", getattr(lk, f"drops_prec{p}"))


def _ns2_metrics(sc: Scenario, seed: int, side: Side) -> None:
    o = ns2.run_ns2(to_ns2_resolved(sc.resolved, seed), seed)
    thr = []
    for f in o["flows"]:
        side.add(f"throughput_kbps {f['name']}", f["throughput_bps"] / 1e3)
        thr.append(f["throughput_bps"])
        colored = f.get("colored") or {}
        for c in COLOURS:
            if c in colored and colored[c] is not None:
                side.add(f"{c} packets {f['name']}", colored[c])
    side.add("jain index", jain_index(thr))
    bn = sc.resolved["measurement"]["bottleneck"]
    bw = next(lk["bandwidth_bps"] for lk in sc.resolved["links"] if lk["name"] == bn)
    m = sc.resolved["measurement"]
    window = (m["end_ns"] - m["start_ns"]) / 1e9
    for lk in o["links"]:
        if lk["name"] != bn or lk["arrivals"] == 0:
            continue
        where = f"{lk['name']}:{lk['direction']}"
        side.add(f"drops {where}", lk["drops"])
        if where.endswith(":ab"):
            side.add(f"utilisation {where}", sum(thr) / bw if window > 0 else np.nan)
        by = lk.get("by_dscp")
        if by:
            prec = [0.0, 0.0, 0.0]
            for dscp, v in by.items():
                p = _core.drop_precedence(int(dscp))
                prec[p] += (v.get("early_drops") or 0) + (v.get("forced_drops") or 0)
            for p in range(3):
                side.add(f"drops prec{p} {where}", prec[p])


@dataclass
class Row:
    metric: str
    qoslab: Estimate
    ns2: Estimate

    @property
    def rel_diff(self) -> float:
        if self.ns2.n == 0 or self.qoslab.n == 0 or self.ns2.mean == 0:
            return float("nan")
        return self.qoslab.mean / self.ns2.mean - 1.0


def crosscheck(sc: Scenario, seeds: list[int], progress: Callable[[str], None] | None = None) -> list[Row]:
    """Runs every seed in both simulators and returns one row per metric."""
    reason = ns2.unsupported_reason(to_ns2_resolved(sc.resolved, seeds[0]))
    if reason:
        raise ns2.Ns2Error(f"ns-2 cannot express this scenario: {reason}")
    q, n = Side(), Side()
    for s in seeds:
        if progress:
            progress(f"seed {s}: qoslab")
        _qoslab_metrics(sc, s, q)
        if progress:
            progress(f"seed {s}: ns-2")
        _ns2_metrics(sc, s, n)
    keys = list(q.values)
    keys += [k for k in n.values if k not in q.values]
    return [Row(k, estimate(q.values.get(k, [])), estimate(n.values.get(k, []))) for k in keys]


def as_records(rows: list[Row]) -> list[dict[str, Any]]:
    return [
        {
            "metric": r.metric,
            "qoslab_mean": r.qoslab.mean,
            "qoslab_ci": r.qoslab.half_width,
            "ns2_mean": r.ns2.mean,
            "ns2_ci": r.ns2.half_width,
            "difference": r.rel_diff,
        }
        for r in rows
    ]
