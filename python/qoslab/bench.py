"""``qoslab bench``: qoslab against ns-2 on fixed workloads, in one invocation.

For each workload it measures, side by side:

- **core**: qoslab's simulation call (in a fresh worker process, so that peak resident memory
  is its own; also at half the duration, to show memory stays flat over simulated time), and
  ns-2's run time without its Tcl setup (the same script with a near-zero duration gives the
  setup; core = whole − setup, medians);
- **whole process**: ``qoslab run FILE --out DIR`` (tables written) against ``ns FILE.tcl``,
  each the median of ``repeat`` runs, alternating between the two;
- **start-up**: ``qoslab run`` of the same scenario with a near-zero duration;
- **memory**: the core's own accounting (allocated capacity, so high-water marks) of its
  state at half and at the full duration (flat: nothing grows with simulated time but the
  time series the scenario asks for, shown apart), bytes per flow (links, flow and endpoint
  state of the setup-only run, over the flows) and per packet in flight (an arena slot and
  a line entry); and the worker's peak resident memory, which includes Python and the
  scenario's parse;
- **per hop**: events per packet-hop, and, with ``--instructions``, instructions and cache
  misses per hop from cachegrind on a shortened run (hardware counters are not used: most
  virtual machines do not expose them).

``--json FILE`` writes every figure of the table, to be tracked across commits. Speed is
measured here, never asserted in tests.
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qoslab import _core
from qoslab.scenario import Scenario, load_scenario, to_ns2_resolved

#: Simulated duration of the "setup only" runs (start-up and ns-2's setup).
SETUP_DURATION = "1ms"


def dumbbell(n: int, bottleneck: str, duration: str) -> dict[str, Any]:
    """``n`` TCP Reno flows, RTTs spread evenly over 20-200 ms, a RED bottleneck of
    ``bottleneck`` (100 Mbps: limit 1500 packets, thresholds 250/750, w_q 0.0002; the queue and
    thresholds scale with the rate), access and exit links 10× faster."""
    scale = {"100Mbps": 1, "1Gbps": 10, "10Gbps": 100}[bottleneck]
    access = {"100Mbps": "1Gbps", "1Gbps": "10Gbps", "10Gbps": "100Gbps"}[bottleneck]
    rtts_ms = [20 + 180 * i / max(n - 1, 1) for i in range(n)]
    return {
        "name": f"bench-{n}flows-{bottleneck}",
        "duration": duration,
        "tcp": {"packet_size": "1000B", "window": 1000},
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
                "queue_ab": {
                    "type": "red",
                    "limit": f"{1500 * scale}pkts",
                    "min_th": 250 * scale,
                    "max_th": 750 * scale,
                    "max_p": 0.1,
                    "w_q": 0.0002 / scale,
                    "mean_pkt_size": "1000B",
                },
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
    return Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Workload:
    """A benchmark workload: how to build it, and whether ns-2 runs it by default (``ns2_note``
    says why not)."""

    name: str
    build: Callable[[], Scenario]
    ns2_note: str = ""


WORKLOADS: tuple[Workload, ...] = (
    Workload("red-5flows-1Mbps-100s", lambda: load_scenario(_root() / "scenarios" / "fdd-red-s1.toml")),
    Workload(
        "tb-rio-20flows-6Mbps-200s", lambda: load_scenario(_root() / "scenarios" / "ard-rio-20flows.toml")
    ),
    Workload("red-200flows-100Mbps-60s", lambda: Scenario.from_table(dumbbell(200, "100Mbps", "60s"))),
    Workload("red-2000flows-1Gbps-10s", lambda: Scenario.from_table(dumbbell(2000, "1Gbps", "10s"))),
    Workload(
        "red-10000flows-10Gbps-2s",
        lambda: Scenario.from_table(dumbbell(10000, "10Gbps", "2s")),
        ns2_note="not run by default: ns-2's static routing over 20,002 nodes is quadratic "
        "(--ns2-all runs it)",
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


def _setup_only(sc: Scenario) -> Scenario:
    """``sc`` with every flow starting at 0 and a run of :data:`SETUP_DURATION`: what a
    simulator spends before simulating (start-up, reading and building the scenario)."""
    t = sc.table()
    for f in t.get("flow", []):
        f["start"] = "0s"
    t["duration"] = SETUP_DURATION
    t.setdefault("measurement", {}).update(start="0s", end=SETUP_DURATION)
    return Scenario.from_table(t, f"{sc.source} (setup only)")


# -- measurements ----------------------------------------------------------------------------------


def _worker(name: str, duration_scale: float) -> None:
    """In a fresh process: one simulation call of workload ``name``; prints its figures as JSON."""
    sc = next(w for w in WORKLOADS if w.name == name).build()
    if duration_scale == 0.0:
        sc = _setup_only(sc)
    elif duration_scale != 1.0:
        sc = _rescaled(sc, sc.resolved["duration_ns"] * duration_scale / 1e9)
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


def _measure_core(name: str, scale: float = 1.0) -> dict[str, Any]:
    p = subprocess.run(
        [sys.executable, "-m", "qoslab.bench", "--worker", name, str(scale)],
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(json.loads(p.stdout))


def _timed(cmd: Sequence[str], cwd: Path, timeout: float) -> float | None:
    """Wall time of ``cmd`` as a whole process (None if it failed or timed out)."""
    t0 = time.perf_counter()
    try:
        p = subprocess.run(
            list(cmd), cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return None
    return time.perf_counter() - t0 if p.returncode == 0 else None


def _median(xs: list[float | None]) -> float | None:
    ok = [x for x in xs if x is not None]
    return statistics.median(ok) if ok and len(ok) == len(xs) else None


def _qoslab_cmd() -> list[str]:
    exe = Path(sys.executable).parent / "qoslab"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "qoslab.cli"]


def _write_ns2(sc: Scenario, path: Path) -> None:
    from qoslab.ns2.tcl import build_tcl

    script, _ = build_tcl(to_ns2_resolved(sc.resolved, 1), 1, str(path.with_suffix(".json")))
    path.write_text(script)


def _cachegrind(name: str, scale: float) -> dict[str, float] | None:
    """Instructions, first-level data misses and last-level misses per packet-hop, from
    cachegrind on the workload shortened to ``scale`` of its duration (None without valgrind).
    Interpreter start-up is excluded by subtracting a run of the same worker at duration ~0."""
    vg = shutil.which("valgrind")
    if vg is None:
        return None

    def one(s: float) -> tuple[dict[str, int], int]:
        with tempfile.TemporaryDirectory(prefix="qoslab-cg-") as tmp:
            out = Path(tmp) / "cg.out"
            p = subprocess.run(
                [vg, "--tool=cachegrind", "--cache-sim=yes", f"--cachegrind-out-file={out}", sys.executable]
                + ["-m", "qoslab.bench", "--worker", name, str(s)],
                capture_output=True,
                text=True,
                check=True,
            )
            hops = int(json.loads(p.stdout.strip().splitlines()[-1])["hops"])
            events, totals = [], []
            for line in out.read_text().splitlines():
                if line.startswith("events:"):
                    events = line.split()[1:]
                elif line.startswith("summary:"):
                    totals = [int(x) for x in line.split()[1:]]
            return dict(zip(events, totals, strict=False)), hops

    full, hops = one(scale)
    base, base_hops = one(0.0)
    if hops <= base_hops:
        return None
    n = hops - base_hops

    def per(k: str) -> float:
        return (full.get(k, 0) - base.get(k, 0)) / n

    return {
        "instructions_per_hop": per("Ir"),
        "d1_misses_per_hop": per("D1mr") + per("D1mw"),
        "ll_misses_per_hop": per("DLmr") + per("DLmw") + per("ILmr"),
        "scale": scale,
    }


def measure(
    w: Workload,
    *,
    repeat: int = 5,
    ns2: bool = True,
    ns2_all: bool = False,
    instructions: bool = False,
    timeout: float = 900.0,
    log: Callable[[str], None] = lambda s: None,
) -> dict[str, Any]:
    """Every figure of one workload (see the module's docstring)."""
    from qoslab.ns2 import ns2_available

    sc = w.build()
    row: dict[str, Any] = {"workload": w.name, "flows": len(sc.resolved["flows"])}
    log(f"{w.name}: qoslab core …")
    row["qoslab_core"] = _measure_core(w.name)
    row["qoslab_core_half_duration"] = _measure_core(w.name, 0.5)
    setup = _measure_core(w.name, 0.0)
    row["qoslab_core_setup"] = setup
    m = setup["memory_bytes"]
    row["bytes_per_flow"] = (m["links"] + m["flows"] + m["conditioners"]) / max(row["flows"], 1)
    row["bytes_per_packet_in_flight"] = m["packet_slot"] + m["line_entry"]
    run_ns2 = ns2 and ns2_available() is not None and (ns2_all or not w.ns2_note)
    row["ns2_note"] = "" if run_ns2 else (w.ns2_note if ns2 and ns2_available() else "ns-2 not run")
    with tempfile.TemporaryDirectory(prefix="qoslab-bench-") as tmp:
        d = Path(tmp)
        (d / "full.toml").write_text(sc.text)
        (d / "setup.toml").write_text(_setup_only(sc).text)
        q = _qoslab_cmd()
        if run_ns2:
            _write_ns2(sc, d / "full.tcl")
            _write_ns2(_setup_only(sc), d / "setup.tcl")
        # Alternating runs: qoslab whole, ns-2 whole, qoslab start-up, ns-2 setup.
        qw: list[float | None] = []
        nw: list[float | None] = []
        qs: list[float | None] = []
        ns: list[float | None] = []
        reps = repeat if row["qoslab_core"]["wall_s"] < 30 else 1
        for i in range(reps):
            log(f"{w.name}: whole processes, round {i + 1}/{reps} …")
            qw.append(_timed(q + ["run", "full.toml", "--out", f"out{i}"], d, timeout))
            if run_ns2:
                t = _timed([str(ns2_available()), "full.tcl"], d, timeout)
                nw.append(t)
                if t is None:
                    row["ns2_note"] = f"ns-2 failed or took over {timeout:g} s"
                    run_ns2 = False
                elif t > 60:
                    reps = min(reps, i + 1)
            qs.append(_timed(q + ["run", "setup.toml"], d, timeout))
            if run_ns2:
                ns.append(_timed([str(ns2_available()), "setup.tcl"], d, timeout))
            if len(qw) >= reps:
                break
        row["qoslab_whole_s"] = _median(qw)
        row["qoslab_startup_s"] = _median(qs)
        row["ns2_whole_s"] = _median(nw) if nw and run_ns2 else None
        row["ns2_setup_s"] = _median(ns) if ns and run_ns2 else None
        row["repeats"] = len(qw)
    if row["ns2_whole_s"] is not None and row["ns2_setup_s"] is not None:
        row["ns2_core_s"] = max(row["ns2_whole_s"] - row["ns2_setup_s"], 0.0)
    else:
        row["ns2_core_s"] = None
    if instructions:
        log(f"{w.name}: cachegrind …")
        hops = row["qoslab_core"]["hops"]
        # about 2 M hops under cachegrind (~50× slower than native)
        row["cachegrind"] = _cachegrind(w.name, min(1.0, 2e6 / max(hops, 1)))
    return row


def _ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.1f}×" if a and b else "-"


def _f(x: float | None, fmt: str = "{:.3f}") -> str:
    return fmt.format(x) if x is not None else "-"


def main(
    only: list[str] | None = None,
    use_ns2: bool = True,
    *,
    repeat: int = 5,
    ns2_all: bool = False,
    instructions: bool = False,
    json_path: Path | None = None,
) -> list[dict[str, Any]]:
    from rich.console import Console
    from rich.table import Table

    from qoslab.ns2 import ns2_available

    con = Console()
    if not con.is_terminal:  # a log or a pipe: the whole table, unwrapped
        con = Console(width=200)
    known = [w.name for w in WORKLOADS]
    for n in only or []:
        if n not in known:
            raise ValueError(f"unknown workload {n!r} (known: {', '.join(known)})")
    if use_ns2 and not ns2_available():
        con.print("ns-2 (`ns`) not found: printing qoslab figures only (install with `make ns2`).")
    rows = []
    for w in WORKLOADS:
        if only and w.name not in only:
            continue
        rows.append(
            measure(
                w,
                repeat=repeat,
                ns2=use_ns2,
                ns2_all=ns2_all,
                instructions=instructions,
                log=lambda s: con.print(f"[dim]{s}[/dim]"),
            )
        )
    doc = {
        "version": _core.__version__,
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "workloads": rows,
    }
    if json_path is not None:
        json_path.write_text(json.dumps(doc, indent=2) + "\n")
    t = Table(title=f"qoslab {_core.__version__} against ns-2 (one core each, seed 1)")
    for c in (
        "workload",
        "core s",
        "M hops/s",
        "events/hop",
        "state MB (T/2 → T)",
        "series MB",
        "B/flow",
        "B/packet",
        "peak RSS MB (T/2 → T)",
        "ns-2 core s",
        "core ratio",
        "whole s",
        "ns-2 whole s",
        "whole ratio",
        "start-up s",
    ):
        t.add_column(c, justify="right")
    for r in rows:
        q, h = r["qoslab_core"], r["qoslab_core_half_duration"]
        t.add_row(
            r["workload"],
            f"{q['wall_s']:.3f}",
            f"{q['hops'] / q['wall_s'] / 1e6:.1f}",
            f"{q['events'] / max(q['hops'], 1):.2f}",
            f"{h['memory_bytes']['state'] / 2**20:.1f} → {q['memory_bytes']['state'] / 2**20:.1f}",
            f"{q['memory_bytes']['series'] / 2**20:.1f}",
            f"{r['bytes_per_flow']:,.0f}",
            f"{r['bytes_per_packet_in_flight']:,.0f}",
            f"{h['peak_rss_mb']:.0f} → {q['peak_rss_mb']:.0f}",
            _f(r["ns2_core_s"]),
            _ratio(r["ns2_core_s"], q["wall_s"]),
            _f(r["qoslab_whole_s"]),
            _f(r["ns2_whole_s"]),
            _ratio(r["ns2_whole_s"], r["qoslab_whole_s"]),
            _f(r["qoslab_startup_s"]),
        )
    con.print(t)
    con.print(
        "core: qoslab's simulation call; ns-2's run without its Tcl setup (whole − a run of "
        f"{SETUP_DURATION}). whole: `qoslab run FILE --out DIR` and `ns FILE.tcl`, medians of alternating "
        f"runs. start-up: `qoslab run` of the scenario cut to {SETUP_DURATION}. state: the core's memory but "
        "the time series (allocated capacity), at half and at the full duration; B/flow: links, flow and "
        "endpoint state over the flows; B/packet: per packet in flight; peak RSS: the whole worker (Python, "
        "the scenario's parse)."
    )
    for r in rows:
        if r["ns2_note"]:
            con.print(f"{r['workload']}: {r['ns2_note']}")
        cg = r.get("cachegrind")
        if cg:
            con.print(
                f"{r['workload']}: {cg['instructions_per_hop']:.0f} instructions, "
                f"{cg['d1_misses_per_hop']:.1f} L1 data misses, {cg['ll_misses_per_hop']:.2f} last-level "
                f"misses per hop (cachegrind, {cg['scale']:.3g} of the duration)"
            )
    if json_path is not None:
        con.print(f"wrote {json_path}")
    return rows


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "--worker":
        _worker(sys.argv[2], float(sys.argv[3]) if len(sys.argv) > 3 else 1.0)
    else:
        main()
