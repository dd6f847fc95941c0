"""The bench's workloads (:data:`WORKLOADS`), their setup-only and shortened forms, and the
worker that runs one core call of a workload in a fresh process (:func:`measure_core`)."""

from __future__ import annotations

import json
import re
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qoslab import _core
from qoslab import budget as _budget
from qoslab.bench import linux as bench_linux
from qoslab.bench import steady
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
    #: A backbone workload (:mod:`qoslab.bench.steady`): its warm-up found from its series and
    #: its hop cost and state measured after it.
    steady: bool = False
    #: Said under the tables and in ``--json``: why the workload is not run by default
    #: (``qoslab bench --backbone`` or ``--workload NAME`` runs it); "" for a default one.
    optional_note: str = ""
    #: Said under the tables: why a default workload that takes long is run by default.
    default_note: str = ""
    #: The scenario ns-2 and ns-3 run when not the workload's own: a linux-flavour workload's
    #: references run the ns2 flavour's export of the same senders (neither exports the linux
    #: flavour's sender; ns-3 runs its own CUBIC either way).
    reference: Callable[[], Scenario] | None = None


#: ns-3's note for the workloads too slow for it. On the 2-core CI machine ns-3 simulated
#: fdd-red-s1 (5 flows) at 30,000-80,000 packet-hops per second, the 200-flow dumbbell at about
#: 15,000-20,000 and the 2,000-flow one at about 3,600 (slower per hop as links are added),
#: against qoslab's millions.
_NS3_SLOW = "not run by default: {} (--ns3-all runs it)"

#: The references on the backbone workloads: the rule is that each runs the largest size it
#: finishes within 10 minutes (:data:`REFERENCE_LIMIT_S`).
_NS2_BACKBONE = (
    "not run: it would not finish in 10 minutes (ns-2's static routing over 2n + 2 nodes is "
    "quadratic: its setup alone took 326 s at 2,000 flows, red-2000flows-1Gbps-10s, the largest "
    "size it has run here; 25 times that at 10,000 flows by the square, not measured; --ns2-all "
    "runs it)"
)
_NS3_BACKBONE = _NS3_SLOW.format(
    "it would not finish in 10 minutes (3,600 packet-hops/s at 2,000 flows, slower per hop as "
    "links are added: the 10,000-flow run's 75 M hops would take over 5 hours at that rate; the "
    "largest size it finishes in 10 minutes here is the 200-flow dumbbell over 5 s, cubic- and "
    "fqcodel-200flows-100Mbps-5s, about 14 s a run)"
)
_BACKBONE_OPTIONAL = (
    "not run by default (`qoslab bench --backbone`, or --workload with its name, runs it): 301 M "
    "packet-hops and a worker of 1.8 GB a run (the series of its 200,002 link directions, sampled "
    "every second for the warm-up), 114 s a run on the idle 2-core machine, "
    "and a call runs it three times (full, half, set-up) and once more per paired round (at most 3)"
)

#: The backbone's shape at the sizes the references finish in 10 minutes, side by side with
#: qoslab on the same scenario (not run by default: each reference run takes minutes).
_REFERENCE_BACKBONE = (
    "not run by default (`qoslab bench --backbone`, or --workload with its name, runs it): the "
    "backbone workload's shape (drop-tail at RTT × C / √n, round trips 60-140 ms, starts over "
    "5 s, 250 kb/s a flow) at {}, side by side with qoslab on the same scenario"
)

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
        # the same dumbbell with Linux's CUBIC (the linux transport flavour) against ns-3's TcpCubic
        "cubic-linux-200flows-100Mbps-5s",
        lambda: Scenario.from_table(dumbbell(200, "100Mbps", "5s", variant="cubic")).with_overrides(
            ['tcp.flavour="linux"'], via="workload"
        ),
        reference=lambda: Scenario.from_table(dumbbell(200, "100Mbps", "5s", variant="cubic")),
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
    Workload(
        "droptail-200flows-50Mbps-40s",
        # ns-3's TCP always opens with a handshake: the flows do too here (ns-2's one-way
        # agents have none, so ns-2 runs the 2,000-flow one)
        lambda: steady.backbone(200, 50e6, 40.0).with_overrides(["tcp.syn=true"], via="workload"),
        ns2_note="not run: its flows open with a handshake, which ns-2's one-way agents lack "
        "(ns-2 runs the 2,000-flow backbone workload)",
        steady=True,
        optional_note=_REFERENCE_BACKBONE.format(
            "a size ns-3 finishes within 10 minutes (43 s on the idle machine; ten times the flows would not)"
        ),
    ),
    Workload(
        "droptail-2000flows-500Mbps-40s",
        lambda: steady.backbone(2_000, 0.5e9, 40.0),
        ns3_note=_NS3_SLOW.format("10 times the 200-flow backbone workload, which is ns-3's"),
        steady=True,
        optional_note=_REFERENCE_BACKBONE.format(
            "the size of ns-2's largest run here (276 s on the idle machine, most of it the setup "
            "of its static routes)"
        ),
    ),
    Workload(
        "droptail-10000flows-2.5Gbps-40s",
        lambda: steady.backbone(10_000, 2.5e9, 40.0),
        ns2_note=_NS2_BACKBONE,
        ns3_note=_NS3_BACKBONE,
        steady=True,
        default_note="run by default: 75 M packet-hops a run, 17 s on the idle 2-core machine, "
        "measured once (no whole-process rounds: no reference runs it) and in at "
        "most three paired rounds, so it adds about what ns-2's 2,000-flow run does; the "
        "50,000-flow one, four times the hops and the memory, needs --backbone",
    ),
    Workload(
        "droptail-50000flows-10Gbps-40s",
        lambda: steady.backbone(50_000, 10e9, 40.0),
        ns2_note=_NS2_BACKBONE,
        ns3_note=_NS3_BACKBONE,
        steady=True,
        optional_note=_BACKBONE_OPTIONAL,
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


#: Exit status of a worker whose core call the memory budget refuses (its one line on stderr).
REFUSED = 3


def refusal(sc: Scenario) -> str | None:
    """The memory budget's one-line refusal of a core call of ``sc``, or ``None`` if it may
    run: :func:`qoslab.budget.check`, as ``qoslab run`` checks a run, with the limits of
    :meth:`~qoslab.budget.Budget.from_env` and no tables (the worker builds none)."""
    try:
        _budget.check(sc.source, sc.outline, [], _budget.Budget.from_env(), Path("."), sc.core, tables=False)
    except _core.ScenarioError as e:
        return str(e.args[0])
    return None


def worker(name: str, duration_scale: float) -> None:
    """In a fresh process: one simulation call of workload ``name``; prints its figures as JSON.
    A call the memory budget refuses (:func:`refusal`) is not made: the worker prints the
    budget's line on stderr and exits with :data:`REFUSED`."""
    w = next((w for w in WORKLOADS if w.name == name), None)
    if w is None:
        sys.exit(f"qoslab.bench worker: no workload {name!r} (known: {', '.join(x.name for x in WORKLOADS)})")
    sc = w.build()
    if duration_scale == 0.0:
        sc = setup_only(sc)
    elif duration_scale != 1.0:
        sc = _rescaled(sc, sc.resolved["duration_ns"] * duration_scale / 1e9)
    why = refusal(sc)
    if why is not None:
        print(why, file=sys.stderr)
        sys.exit(REFUSED)
    # The results' columns are array.array buffers: the call imports nothing (numpy's import,
    # 0.1-0.2 s, came with it when they were numpy arrays and was taken out of the clock).
    # A backbone workload's full run is timed through its progress callback too (the wall
    # time at T/2 and at T, before the results' tables are built): qoslab.bench.steady.
    t0 = time.perf_counter()
    clock = steady.Clock(t0) if w.steady and duration_scale == 1.0 else None
    raw = _core.simulate_resolved(sc.core, 1, [], clock, 1)
    wall = time.perf_counter() - t0
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    extra: dict[str, Any] = {}
    if clock is not None:
        extra = {
            "wall_at_half_s": clock.at(0.5),
            "wall_run_s": clock.at(1.0),
            "warmup": steady.warmup_of(raw, sc),
        }
    print(
        json.dumps(
            extra
            | {
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
    setup-only run), from :func:`worker` in a fresh ``python -m qoslab.bench`` process; a call
    the memory budget refuses raises :class:`qoslab.budget.BudgetError` with its one line."""
    try:
        return bench_linux.run_worker("qoslab.bench", name, str(scale))
    except subprocess.CalledProcessError as e:
        if e.returncode != REFUSED:
            raise
        lines = str(e.stderr or "").strip().splitlines() or ["refused by the memory budget"]
        raise _budget.BudgetError(f"workload {name}: {lines[-1]}") from None
