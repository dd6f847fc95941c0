"""The bench's workloads (:data:`WORKLOADS`), their setup-only and shortened forms, and the
worker that runs one core call of a workload in a fresh process (:func:`measure_core`)."""

from __future__ import annotations

import json
import re
import resource
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qoslab import _core
from qoslab.bench import linux as bench_linux
from qoslab.scenario import Scenario, load_scenario

#: Simulated duration of the "setup only" runs (start-up, and the reference simulators' setup).
SETUP_DURATION = "1ms"


def dumbbell(
    n: int, bottleneck: str, duration: str, *, variant: str = "reno", queue: str = "red"
) -> dict[str, Any]:
    """``n`` TCP flows (``variant``: Reno by default), RTTs spread evenly over 20-200 ms, a
    bottleneck of ``bottleneck`` whose forward queue is ``queue``: RED (100 Mbps: limit 1500
    packets, thresholds 250/750, w_q 0.0002; the queue and thresholds scale with the rate) or
    FQ-CoDel (the same limit, RFC 8290's defaults otherwise: 1024 flow queues, target 5 ms,
    interval 100 ms; ECN off, the senders are not ECN-capable); access and exit links 10×
    faster."""
    scale = {"100Mbps": 1, "1Gbps": 10, "10Gbps": 100}[bottleneck]
    access = {"100Mbps": "1Gbps", "1Gbps": "10Gbps", "10Gbps": "100Gbps"}[bottleneck]
    rtts_ms = [20 + 180 * i / max(n - 1, 1) for i in range(n)]
    forward: dict[str, Any] = {
        "red": {
            "type": "red",
            "limit": f"{1500 * scale}pkts",
            "min_th": 250 * scale,
            "max_th": 750 * scale,
            "max_p": 0.1,
            "w_q": 0.0002 / scale,
            "mean_pkt_size": "1000B",
        },
        "fq_codel": {"type": "fq_codel", "limit": f"{1500 * scale}pkts", "ecn": False},
    }[queue]
    tcp: dict[str, Any] = {"packet_size": "1000B", "window": 1000}
    name = f"bench-{n}flows-{bottleneck}"
    if (variant, queue) != ("reno", "red"):  # the original workloads' text stays as it was
        tcp["variant"] = variant
        name += f"-{variant}-{queue}"
    return {
        "name": name,
        "duration": duration,
        "tcp": tcp,
        "measurement": {"interval": "1s", "bottleneck": "bottleneck"},
        "node": [{"name": "s{i}", "count": n}, {"name": "r1"}, {"name": "r2"}, {"name": "d{i}", "count": n}],
        "link": [
            {
                "name": "access{i}",
                "count": n,
                "a": "s{i}",
                "b": "r1",
                "bandwidth": access,
                "delay": [f"{r / 2 - 6:.4f}ms" for r in rtts_ms],
                "queue": {"type": "droptail", "limit": "1000pkts"},
            },
            {
                "name": "bottleneck",
                "a": "r1",
                "b": "r2",
                "bandwidth": bottleneck,
                "delay": "5ms",
                "queue_ab": forward,
                "queue_ba": {"type": "droptail", "limit": f"{1500 * scale}pkts"},
            },
            {
                "name": "exit{i}",
                "count": n,
                "a": "r2",
                "b": "d{i}",
                "bandwidth": access,
                "delay": "1ms",
                "queue": {"type": "droptail", "limit": "1000pkts"},
            },
        ],
        "flow": [{"name": "ftp{i}", "count": n, "src": "s{i}", "dst": "d{i}", "start": "uniform(0s, 1s)"}],
    }


def dumbbell_200(duration: str = "60s") -> dict[str, Any]:
    """The 200-flow workload (100 Mbps)."""
    return dumbbell(200, "100Mbps", duration)


def _root() -> Path:
    return Path(__file__).resolve().parents[3]


@dataclass(frozen=True)
class Workload:
    """A benchmark workload: how to build it, and whether ns-2 and ns-3 run it by default
    (``ns2_note``, ``ns3_note``: why not). What a simulator cannot express is found from the
    scenario (the exporters' refusals), not noted here."""

    name: str
    build: Callable[[], Scenario]
    ns2_note: str = ""
    ns3_note: str = ""
    #: Said under the memory table: what the run's length leaves out (a run that ends inside
    #: its flows' warm-up measures the warm-up's memory and speed).
    warmup_note: str = ""


#: ns-3's note for the workloads too slow for it. On the 2-core CI machine ns-3 simulated
#: fdd-red-s1 (5 flows) at 30,000-80,000 packet-hops per second, the 200-flow dumbbell at about
#: 15,000-20,000 and the 2,000-flow one at about 3,600 (slower per hop as links are added),
#: against qoslab's millions.
_NS3_SLOW = "not run by default: {} (--ns3-all runs it)"

WORKLOADS: tuple[Workload, ...] = (
    Workload("red-5flows-1Mbps-100s", lambda: load_scenario(_root() / "scenarios" / "fdd-red-s1.toml")),
    Workload(
        "tb-rio-20flows-6Mbps-200s", lambda: load_scenario(_root() / "scenarios" / "ard-rio-20flows.toml")
    ),
    Workload(
        "red-200flows-100Mbps-60s",
        lambda: Scenario.from_table(dumbbell(200, "100Mbps", "60s")),
        ns3_note=_NS3_SLOW.format(
            "about 4 minutes a run (one run took 236 s, 19,000 packet-hops/s); the cubic and "
            "fqcodel workloads compare with ns-3 on this dumbbell over 5 s"
        ),
    ),
    Workload(
        "cubic-200flows-100Mbps-5s",
        lambda: Scenario.from_table(dumbbell(200, "100Mbps", "5s", variant="cubic")),
    ),
    Workload(
        "fqcodel-200flows-100Mbps-5s",
        lambda: Scenario.from_table(dumbbell(200, "100Mbps", "5s", queue="fq_codel")),
    ),
    Workload(
        "red-2000flows-1Gbps-10s",
        lambda: Scenario.from_table(dumbbell(2000, "1Gbps", "10s")),
        ns3_note=_NS3_SLOW.format(
            "its setup took 25 s and the first 0.2 s of the 10 s 24 s more (3,600 packet-hops/s; "
            "the run's 7 M hops would take over half an hour)"
        ),
    ),
    Workload(
        "red-10000flows-10Gbps-2s",
        lambda: Scenario.from_table(dumbbell(10000, "10Gbps", "2s")),
        ns2_note="not run by default: ns-2's static routing over 20,002 nodes is quadratic "
        "(--ns2-all runs it)",
        ns3_note=_NS3_SLOW.format("five times the flows of the 2,000-flow workload, already too slow for it"),
        warmup_note="ends inside its flows' warm-up (they start over the first second; at 2 s the "
        "bottleneck is 80 % used, Jain's index 0.14), so its state T/2 → T and its speed are the "
        "warm-up's; after it the state is flat (117.9-118.2 MB from 10 to 40 s) and a hop costs about "
        '2x the 200-flow one: docs/performance.md, "After the warm-up"',
    ),
)


def workloads() -> dict[str, Scenario]:
    """Every workload's scenario, by name."""
    return {w.name: w.build() for w in WORKLOADS}


def _rescaled(sc: Scenario, duration_s: float) -> Scenario:
    """``sc`` cut to ``duration_s``, measured throughout; flows drawn to start within
    ``uniform(0s, Xs)`` start within the run's first half if X is later."""
    t = sc.table()
    for f in t.get("flow", []):
        m = re.fullmatch(r"uniform\(0s,\s*([0-9.]+)s\)", str(f.get("start", "")))
        if m and float(m.group(1)) > duration_s / 2:
            f["start"] = f"uniform(0s, {duration_s / 2:g}s)"
    t["duration"] = f"{duration_s:g}s"
    t.setdefault("measurement", {}).update(start="0s", end=f"{duration_s:g}s")
    return Scenario.from_table(t, f"{sc.source} (cut to {duration_s:g} s)")


def setup_only(sc: Scenario) -> Scenario:
    """``sc`` with every flow starting at 0 and a run of :data:`SETUP_DURATION`: what a
    simulator spends before simulating (start-up, reading and building the scenario)."""
    t = sc.table()
    for f in t.get("flow", []):
        f["start"] = "0s"
    t["duration"] = SETUP_DURATION
    t.setdefault("measurement", {}).update(start="0s", end=SETUP_DURATION)
    return Scenario.from_table(t, f"{sc.source} (setup only)")


# -- measurements ----------------------------------------------------------------------------------


def worker(name: str, duration_scale: float) -> None:
    """In a fresh process: one simulation call of workload ``name``; prints its figures as JSON."""
    sc = next(w for w in WORKLOADS if w.name == name).build()
    if duration_scale == 0.0:
        sc = setup_only(sc)
    elif duration_scale != 1.0:
        sc = _rescaled(sc, sc.resolved["duration_ns"] * duration_scale / 1e9)
    # The results' columns are array.array buffers: the call imports nothing (numpy's import,
    # 0.1-0.2 s, came with it when they were numpy arrays and was taken out of the clock).
    t0 = time.perf_counter()
    raw = _core.simulate_resolved(sc.core, 1, [], None, 1)
    wall = time.perf_counter() - t0
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        json.dumps(
            {
                "wall_s": wall,
                "hops": int(raw["packet_hops"]),
                "events": int(raw["events"]),
                "sim_s": sc.resolved["duration_ns"] / 1e9,
                "peak_rss_mb": peak_kb / 1024,
                "peak_packets_in_flight": int(raw["peak_packets_in_flight"]),
                "memory_bytes": {k: int(v) for k, v in raw["memory_bytes"].items()},
            }
        )
    )


def measure_core(name: str, scale: float = 1.0) -> dict[str, Any]:
    """The figures of one core call of workload ``name`` at ``scale`` of its duration (0: the
    setup-only run), from :func:`worker` in a fresh ``python -m qoslab.bench`` process."""
    return bench_linux.run_worker("qoslab.bench", name, str(scale))
