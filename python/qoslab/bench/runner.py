"""``qoslab bench``: qoslab against ns-2 and ns-3 on fixed workloads, in one invocation.

For each workload it measures, side by side:

- **core**: qoslab's simulation call (in a fresh worker process, so that peak resident memory
  is its own; also at half the duration, to show memory stays flat over simulated time), and
  each reference simulator's run time without its setup (the same input with a near-zero
  duration gives the setup; core = whole − setup, medians);
- **whole process**: ``qoslab run FILE --out DIR`` (tables written) against ``ns FILE.tcl``
  and the compiled ns-3 program (:mod:`qoslab.ns3`) on its JSON input, each the median of
  ``repeat`` runs, alternating between them;
- **start-up**: ``qoslab run`` of the same scenario with a near-zero duration;
- **memory**: the core's own accounting (allocated capacity, so high-water marks; the links'
  lines give back what they no longer hold once a simulated second) of its
  state at half and at the full duration (flat: nothing grows with simulated time but the
  time series the scenario asks for, shown apart), bytes per flow (links, flow and endpoint
  state of the setup-only run, over the flows) and per packet in flight (an arena slot and
  a line entry); and the worker's peak resident memory, which includes Python and the
  scenario's parse;
- **per hop**: events per packet-hop; the core's time per hop, over the whole call and net
  of the set-up (the setup-only run's time and hops taken off), and each against the
  200-flow workload's (:data:`HOP_COST_BASE`) when the call measures it: the issue's scaling
  aim, "cost per hop within 2× of the 200-flow cost", read off one call, and the same
  paired in time (``pairs`` rounds of one core run of each workload, alternating; the
  medians above are taken tens of seconds apart, minutes when a reference runs between
  them, and on a shared machine the 10,000-flow
  hop's cost moves by a third within minutes: :func:`paired_hop_costs`); and, with
  ``--instructions``, instructions and cache misses per hop in the event loop alone, from
  callgrind on a shortened run (:func:`callgrind_command`; hardware counters are not used:
  most virtual machines do not expose them), simulating the caches Linux's sysfs describes
  (:func:`cache_geometry`; valgrind's own detection reads CPUID, which a virtual machine may
  fill with a cache that does not exist).

A reference simulator that is missing, whose export refuses the workload (ns-2 has no CUBIC
or FQ-CoDel), that a workload notes as too slow for it, or that fails, is "n/a" there with the
reason (one line); everything else still runs. The linux flavour against the ns2 flavour is
:mod:`qoslab.bench_linux`'s. ``--json FILE`` writes every figure of the tables, to be tracked
across commits. Speed is measured here, never asserted in tests.
"""

from __future__ import annotations

import functools
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qoslab import _core, bench_guards, bench_linux
from qoslab.scenario import Scenario, load_scenario, to_ns2_resolved

if TYPE_CHECKING:
    from rich.console import Console

#: Simulated duration of the "setup only" runs (start-up, and the reference simulators' setup).
SETUP_DURATION = "1ms"

#: The workload whose cost per hop the others' are compared with (:func:`hop_costs`).
HOP_COST_BASE = "red-200flows-100Mbps-60s"

#: A core run this long (seconds) or longer is measured once, not ``repeat`` times
#: (:func:`_alternate`), and not paired (:func:`pair_with_base`).
SLOW_CORE_S = 30

#: Rounds of a workload's core run alternating with the base's (:func:`paired_hop_costs`): at
#: 10,000 flows nine rounds take about 30 s.
PAIRS = 9


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
    return Path(__file__).resolve().parents[2]


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


def _measure_core(name: str, scale: float = 1.0) -> dict[str, Any]:
    return bench_linux.run_worker("qoslab.bench", name, str(scale))


def _timed(cmd: Sequence[str], cwd: Path, timeout: float) -> tuple[float | None, str]:
    """Wall time of ``cmd`` as a whole process, or None and why (one line) if it failed or
    timed out."""
    t0 = time.perf_counter()
    try:
        p = subprocess.run(
            list(cmd), cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return None, f"took over {timeout:g} s"
    if p.returncode != 0:
        last = (p.stderr or p.stdout).decode(errors="replace").strip().splitlines()
        return None, f"exit code {p.returncode}" + (f": {last[-1][:200]}" if last else "")
    return time.perf_counter() - t0, ""


def _median(xs: list[float | None]) -> float | None:
    ok = [x for x in xs if x is not None]
    return statistics.median(ok) if ok and len(ok) == len(xs) else None


def _qoslab_cmd() -> list[str]:
    exe = Path(sys.executable).parent / "qoslab"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "qoslab.entry"]


def _write_ns2(sc: Scenario, path: Path) -> None:
    from qoslab.ns2.tcl import build_tcl

    script, _ = build_tcl(to_ns2_resolved(sc.resolved, 1), 1, str(path.with_suffix(".json")))
    path.write_text(script)


def _write_ns3(sc: Scenario, path: Path) -> None:
    """The ns-3 program's input for ``sc`` and seed 1, as :func:`qoslab.ns3.run_ns3` writes it."""
    from qoslab.ns3 import program_input, to_ns3_resolved

    path.write_text(json.dumps(program_input(to_ns3_resolved(sc.resolved, 1), 1), indent=1))


@functools.cache
def _ns3_program() -> tuple[Path | None, str]:
    """The compiled ns-3 program (compiled on first use, about 15 s), or None and why not."""
    from qoslab.ns3 import Ns3Error, build_program, ns3_missing

    missing = ns3_missing()
    if missing:
        return None, f"ns-3 not available: {missing}"
    try:
        return build_program(), ""
    except Ns3Error as e:
        return None, str(e).strip().splitlines()[0][:300]


@dataclass
class _Reference:
    """A reference simulator (``key``: ns2, ns3) on one workload: its commands on the full and
    the setup-only input, its times of each, and why it is not run (``note``, "" if it is)."""

    key: str
    full: list[str] = field(default_factory=list)
    setup: list[str] = field(default_factory=list)
    note: str = ""
    whole_s: list[float | None] = field(default_factory=list)
    setup_s: list[float | None] = field(default_factory=list)


def _prepare_ns2(w: Workload, sc: Scenario, d: Path, use: bool, run_all: bool) -> _Reference:
    """ns-2's runs of ``w`` (its scripts written to ``d``), or why there are none."""
    from qoslab.ns2 import ns2_available, unsupported_reason

    if not use:
        return _Reference("ns2", note="not run (--no-ns2)")
    ns = ns2_available()
    if ns is None:
        return _Reference("ns2", note="`ns` not found (install with `make ns2`)")
    why = unsupported_reason(to_ns2_resolved(sc.resolved, 1))
    if why:
        return _Reference("ns2", note=f"the ns-2 export refuses it: {why}")
    if w.ns2_note and not run_all:
        return _Reference("ns2", note=w.ns2_note)
    _write_ns2(sc, d / "full.tcl")
    _write_ns2(_setup_only(sc), d / "setup.tcl")
    return _Reference("ns2", [str(ns), "full.tcl"], [str(ns), "setup.tcl"])


def _prepare_ns3(w: Workload, sc: Scenario, d: Path, use: bool, run_all: bool) -> _Reference:
    """ns-3's runs of ``w`` (the compiled program on its JSON input, written to ``d``, as
    :func:`qoslab.ns3.run_ns3` runs it), or why there are none."""
    from qoslab.ns3 import to_ns3_resolved, unsupported_reason

    if not use:
        return _Reference("ns3", note="not run (--no-ns3)")
    why = unsupported_reason(to_ns3_resolved(sc.resolved, 1))
    if why:
        return _Reference("ns3", note=f"the ns-3 export refuses it: {why}")
    if w.ns3_note and not run_all:
        return _Reference("ns3", note=w.ns3_note)
    exe, missing = _ns3_program()
    if exe is None:
        return _Reference("ns3", note=missing)
    # not full.json: ns-2's script writes its results there
    _write_ns3(sc, d / "ns3-full.json")
    _write_ns3(_setup_only(sc), d / "ns3-setup.json")
    return _Reference(
        "ns3",
        [str(exe), "ns3-full.json", "ns3-full-results.json"],
        [str(exe), "ns3-setup.json", "ns3-setup-results.json"],
    )


#: Where Linux describes the first CPU's caches (:func:`cache_geometry`).
SYSFS_CACHES = Path("/sys/devices/system/cpu/cpu0/cache")


@dataclass(frozen=True)
class Cache:
    """A cache as valgrind simulates it (callgrind, cachegrind): ``size`` bytes, ``assoc`` ways,
    ``line`` bytes a line (its set count, ``size / (assoc · line)``, a power of two)."""

    size: int
    assoc: int
    line: int

    def arg(self) -> str:
        """valgrind's spelling, as in ``--LL=33554432,16,64``."""
        return f"{self.size},{self.assoc},{self.line}"

    def describe(self) -> str:
        return f"{self.size // 1024:,} KiB {self.assoc}-way {self.line} B lines"


def simulable(size: int, assoc: int, line: int) -> Cache:
    """The cache valgrind can simulate for one of ``size`` bytes, ``assoc`` ways (0: fully
    associative) and ``line``-byte lines. valgrind wants a power-of-two set count; where
    the real one is not (a 12 MiB 16-way cache has 12,288 sets), the sets are cut to a power
    of two that divides the number of lines and the ways raised to keep the size exactly
    (8,192 sets of 24 ways; a 192 KiB direct-mapped cache, 3,072 sets, becomes 1,024 sets of
    3 ways)."""
    lines = max(size // line, 1)
    if assoc <= 0:
        assoc = lines
    sets = max(lines // assoc, 1)
    below = 1 << (sets.bit_length() - 1)  # the power of two at or below the real set count
    divides = lines & -lines  # the largest power of two dividing the number of lines
    sets = min(below, divides)
    return Cache(lines * line, lines // sets, line)


def _sysfs_size(text: str) -> int:
    """``32K``, ``1024K``, ``32M`` or a plain byte count."""
    t = text.strip().upper()
    mult = {"K": 1024, "M": 1024**2, "G": 1024**3}.get(t[-1:], 1)
    return int(t[:-1] if mult > 1 else t) * mult


def cache_geometry(root: Path = SYSFS_CACHES) -> dict[str, Cache] | None:
    """This machine's first-level instruction (``I1``) and data (``D1``) caches and its last
    level (``LL``: the highest level holding data, the L3 on most servers), from Linux's
    sysfs, as valgrind can simulate them (:func:`simulable`); None where sysfs does not
    describe them. valgrind's own detection reads CPUID, which a virtual machine may fill
    with a cache that does not exist: on the 2-core CI machine it finds a 320 MB
    direct-mapped L3, where sysfs has 32 MiB of 16 ways."""
    found: dict[str, tuple[int, Cache]] = {}
    try:
        for d in sorted(root.glob("index*")):
            level = int((d / "level").read_text())
            kind = (d / "type").read_text().strip()
            cache = simulable(
                _sysfs_size((d / "size").read_text()),
                int((d / "ways_of_associativity").read_text()),
                int((d / "coherency_line_size").read_text()),
            )
            if level == 1 and kind in ("Instruction", "Data"):
                found["I1" if kind == "Instruction" else "D1"] = (level, cache)
            if kind in ("Unified", "Data") and level > found.get("LL", (1, cache))[0]:
                found["LL"] = (level, cache)
    except (OSError, ValueError):
        return None
    if set(found) != {"I1", "D1", "LL"}:
        return None
    return {k: c for k, (_, c) in found.items()}


#: The core's event loop: the instruction and cache-miss counts are taken inside it alone
#: (callgrind's ``--toggle-collect``), so neither the interpreter's start-up, nor the
#: scenario's parse, nor the network's building enter them.
EVENT_LOOP = "qoslab_core::sim::Simulation::run_events_until"


def callgrind_command(out: Path, name: str, scale: float, caches: dict[str, Cache] | None) -> list[str]:
    """The command that runs the worker on ``name`` at ``scale`` of its duration under
    callgrind, counting inside :data:`EVENT_LOOP` only and simulating ``caches`` (valgrind's
    own detection when None). The caches are simulated throughout, so the loop starts on the
    caches the set-up left."""
    vg = shutil.which("valgrind") or "valgrind"
    cmd = [vg, "--tool=callgrind", "--cache-sim=yes", f"--toggle-collect={EVENT_LOOP}"]
    cmd += [f"--callgrind-out-file={out}"]
    cmd += [f"--{k}={c.arg()}" for k, c in sorted((caches or {}).items())]
    return cmd + [sys.executable, "-m", "qoslab.bench", "--worker", name, str(scale)]


def _event_loop_counts(name: str, scale: float) -> dict[str, Any] | None:
    """Instructions, first-level data misses and last-level misses per packet-hop in the
    event loop (:data:`EVENT_LOOP`), from callgrind on the workload shortened to ``scale`` of
    its duration (None without valgrind), with this machine's caches
    (:func:`cache_geometry`), which the row records. Where nothing was counted (an extension
    without its symbols, as a stripped wheel) the row has a ``note`` saying so instead.

    Until November 2026 the bench ran cachegrind on the whole worker and took off a run of
    the scenario's set-up alone; that run parsed the scenario a second time, so the
    interpreter's extra work came off the workload's counts (at 5 flows 458 instructions a
    hop for the loop's 583, and negative cache misses)."""
    if shutil.which("valgrind") is None:
        return None
    caches = cache_geometry()
    with tempfile.TemporaryDirectory(prefix="qoslab-cg-") as tmp:
        out = Path(tmp) / "callgrind.out"
        p = subprocess.run(
            callgrind_command(out, name, scale, caches),
            capture_output=True,
            text=True,
            check=True,
        )
        hops = int(json.loads(p.stdout.strip().splitlines()[-1])["hops"])
        events: list[str] = []
        totals: list[int] = []
        for line in out.read_text().splitlines():
            if line.startswith("events:"):
                events = line.split()[1:]
            elif line.startswith(("summary:", "totals:")):
                totals = [int(x) for x in line.split()[1:]]
    counts = dict(zip(events, totals, strict=False))
    scope = {
        "scope": EVENT_LOOP,
        "scale": scale,
        "caches": {k: c.arg() for k, c in caches.items()} if caches else None,
        "last_level": caches["LL"].describe() if caches else "valgrind's detection",
    }
    if not counts.get("Ir") or hops <= 0:
        return scope | {
            "note": f"callgrind counted nothing in {EVENT_LOOP}: the extension has no symbols "
            "(a stripped wheel); `make build` builds it with them"
        }

    def per(*keys: str) -> float:
        return sum(counts.get(k, 0) for k in keys) / hops

    return scope | {
        "instructions_per_hop": per("Ir"),
        "d1_misses_per_hop": per("D1mr", "D1mw"),
        "ll_misses_per_hop": per("DLmr", "DLmw", "ILmr"),
        "ll_read_misses_per_hop": per("DLmr"),
    }


def measure(
    w: Workload,
    *,
    repeat: int = 5,
    ns2: bool = True,
    ns2_all: bool = False,
    ns3: bool = True,
    ns3_all: bool = False,
    instructions: bool = False,
    timeout: float = 900.0,
    log: Callable[[str], None] = lambda s: None,
) -> dict[str, Any]:
    """Every figure of one workload (see the module's docstring)."""
    sc = w.build()
    row: dict[str, Any] = {
        "workload": w.name,
        "flows": len(sc.resolved["flows"]),
        "warmup_note": w.warmup_note,
    }
    log(f"{w.name}: qoslab core …")
    row["qoslab_core"] = _measure_core(w.name)
    row["qoslab_core_half_duration"] = _measure_core(w.name, 0.5)
    setup = _measure_core(w.name, 0.0)
    row["qoslab_core_setup"] = setup
    m = setup["memory_bytes"]
    row["bytes_per_flow"] = (m["links"] + m["flows"] + m["conditioners"]) / max(row["flows"], 1)
    row["bytes_per_packet_in_flight"] = m["packet_slot"] + m["line_entry"]
    with tempfile.TemporaryDirectory(prefix="qoslab-bench-") as tmp:
        d = Path(tmp)
        (d / "full.toml").write_text(sc.text)
        (d / "setup.toml").write_text(_setup_only(sc).text)
        refs = [_prepare_ns2(w, sc, d, ns2, ns2_all), _prepare_ns3(w, sc, d, ns3, ns3_all)]
        _alternate(w.name, row, refs, d, repeat, timeout, log)
    q = row["qoslab_core_s"]
    for r in refs:
        ok = not r.note
        whole = _median(r.whole_s) if ok else None
        rsetup = _median(r.setup_s) if ok else None
        core = max(whole - rsetup, 0.0) if whole is not None and rsetup is not None else None
        row[f"{r.key}_note"] = r.note
        row[f"{r.key}_whole_s"] = whole
        row[f"{r.key}_setup_s"] = rsetup
        row[f"{r.key}_core_s"] = core
        row[f"{r.key}_core_ratio"] = core / q if core and q else None
        row[f"{r.key}_whole_ratio"] = (
            whole / row["qoslab_whole_s"] if whole and row["qoslab_whole_s"] else None
        )
    if instructions:
        log(f"{w.name}: callgrind …")
        hops = row["qoslab_core"]["hops"]
        # about 2 M hops under callgrind (~50× slower than native)
        row["callgrind"] = _event_loop_counts(w.name, min(1.0, 2e6 / max(hops, 1)))
    return row


def _alternate(
    name: str,
    row: dict[str, Any],
    refs: list[_Reference],
    d: Path,
    repeat: int,
    timeout: float,
    log: Callable[[str], None],
) -> None:
    """The alternating rounds in ``d``: qoslab's core (a fresh worker), qoslab's whole process,
    each reference's, qoslab's start-up, each reference's setup. ``repeat`` rounds, one when
    qoslab's core or a reference's whole process takes over 30 s or a minute (qoslab's core is
    then still run ``repeat`` times unless it is the slow one); a reference that fails is
    dropped with a note. Fills ``row``'s qoslab figures and ``refs``' times."""
    q = _qoslab_cmd()
    cores: list[float] = []
    qw: list[float | None] = []
    qs: list[float | None] = []
    reps = repeat if row["qoslab_core"]["wall_s"] < SLOW_CORE_S else 1
    for i in range(repeat):
        if i >= reps:
            break
        log(f"{name}: whole processes, round {i + 1}/{reps} …")
        cores.append(row["qoslab_core"]["wall_s"] if i == 0 else _measure_core(name)["wall_s"])
        qw.append(_timed(q + ["run", "full.toml", "--out", f"out{i}"], d, timeout)[0])
        for r in refs:
            if r.note:
                continue
            t, why = _timed(r.full, d, timeout)
            r.whole_s.append(t)
            if t is None:
                r.note = f"failed: {why}"
            elif t > 60:
                reps = min(reps, i + 1)
        qs.append(_timed(q + ["run", "setup.toml"], d, timeout)[0])
        for r in refs:
            if r.note:
                continue
            t, why = _timed(r.setup, d, timeout)
            r.setup_s.append(t)
            if t is None:
                r.note = f"failed on the setup-only input: {why}"
    # A reference that takes over a minute cuts the rounds to one; qoslab's core, seconds a
    # run, still gets its `repeat` runs (one alone, the 2,000-flow workload's once took 2.04 s
    # against 1.64 s for qoslab's whole process in the same round: a slow moment of the machine).
    if row["qoslab_core"]["wall_s"] < SLOW_CORE_S:
        while len(cores) < repeat:
            log(f"{name}: qoslab core, run {len(cores) + 1}/{repeat} …")
            cores.append(_measure_core(name)["wall_s"])
    row["qoslab_core_s"] = statistics.median(cores)
    row["qoslab_core_runs"] = len(cores)
    row["qoslab_whole_s"] = _median(qw)
    row["qoslab_startup_s"] = _median(qs)
    row["repeats"] = len(qw)


_REFS = (("ns2", "ns-2"), ("ns3", "ns-3"))


def _ratio(x: float | None) -> str:
    return f"{x:.1f}×" if x else "n/a"


def _f(x: float | None, fmt: str = "{:.3f}") -> str:
    return fmt.format(x) if x is not None else "n/a"


def main(
    only: list[str] | None = None,
    use_ns2: bool = True,
    *,
    repeat: int = 5,
    ns2_all: bool = False,
    use_ns3: bool = True,
    ns3_all: bool = False,
    instructions: bool = False,
    json_path: Path | None = None,
    pairs: int = PAIRS,
    linux_rounds: int = bench_linux.ROUNDS,
) -> list[dict[str, Any]]:
    """Measures the workloads (``only``: these, by name; ValueError for an unknown one), pairs
    each with :data:`HOP_COST_BASE` in ``pairs`` alternating rounds when the call measures it
    (:func:`paired_hop_costs`), measures the linux flavour (:func:`bench_linux.in_call`),
    prints the tables and writes every figure to ``json_path``; returns the rows."""
    from rich.console import Console

    from qoslab.ns2 import ns2_available

    con = Console()
    if not con.is_terminal:  # a log or a pipe: the whole table, unwrapped
        con = Console(width=200)
    known = [w.name for w in WORKLOADS] + [bench_linux.WORKLOAD]
    for n in only or []:
        if n not in known:
            raise ValueError(f"unknown workload {n!r} (known: {', '.join(known)})")
    refs = {"ns2": str(ns2_available()) if use_ns2 and ns2_available() else None, "ns3": None}
    if use_ns3:
        con.print("[dim]ns-3 program …[/dim]")
        exe, _ = _ns3_program()
        refs["ns3"] = str(exe) if exe else None
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
                ns3=use_ns3,
                ns3_all=ns3_all,
                instructions=instructions,
                log=lambda s: con.print(f"[dim]{s}[/dim]"),
            )
        )
    hop_costs(rows)
    pair_with_base(rows, pairs, log=lambda s: con.print(f"[dim]{s}[/dim]"))
    linux = bench_linux.in_call(only, linux_rounds, log=lambda s: con.print(f"[dim]{s}[/dim]"))
    guards = bench_guards.evaluate(rows) + bench_guards.evaluate_linux(bench_linux.POINTS, linux)
    doc = {
        "version": _core.__version__,
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "references": refs,
        "workloads": rows,
        "linux_flavour": linux,
        "guards": guards,
        "guards_verdict": bench_guards.verdict(guards),
    }
    if json_path is not None:
        json_path.write_text(json.dumps(doc, indent=2) + "\n")
    if rows:
        _print_tables(con, rows)
    bench_linux.print_table(con, linux)
    bench_guards.print_table(con, guards)
    if json_path is not None:
        con.print(f"wrote {json_path}")
    return rows


def _per_hop_ns(run: dict[str, Any], setup: dict[str, Any] | None = None) -> float | None:
    """A core run's nanoseconds per packet-hop; with ``setup`` (the workload's setup-only run),
    net of it (None when the setup is not shorter than the run)."""
    wall, hops = run["wall_s"], run["hops"]
    if setup is not None:
        wall, hops = wall - setup["wall_s"], hops - setup["hops"]
    return wall / hops * 1e9 if wall > 0 and hops > 0 else None


def hop_costs(rows: list[dict[str, Any]]) -> None:
    """Adds to each row the core's nanoseconds per packet-hop, over the whole call
    (``ns_per_hop``: the median core time over the hops) and net of the set-up
    (``ns_per_hop_net``: less the setup-only run's time and hops), and, when ``rows`` hold
    :data:`HOP_COST_BASE`, both against that workload's (``hop_cost_ratio``,
    ``hop_cost_ratio_net``; None otherwise)."""
    for r in rows:
        median_run = {"wall_s": r["qoslab_core_s"], "hops": r["qoslab_core"]["hops"]}
        r["ns_per_hop"] = _per_hop_ns(median_run)
        r["ns_per_hop_net"] = _per_hop_ns(median_run, r["qoslab_core_setup"])
    base = next((r for r in rows if r["workload"] == HOP_COST_BASE), None)
    base_ns, base_net = (base["ns_per_hop"], base["ns_per_hop_net"]) if base else (None, None)
    for r in rows:
        r["hop_cost_base"] = HOP_COST_BASE if base else None
        r["hop_cost_ratio"] = r["ns_per_hop"] / base_ns if r["ns_per_hop"] and base_ns else None
        net = r["ns_per_hop_net"]
        r["hop_cost_ratio_net"] = net / base_net if net and base_net else None


def paired_hop_costs(
    row: dict[str, Any],
    base: dict[str, Any],
    pairs: int,
    measure: Callable[[str], dict[str, Any]] = _measure_core,
    log: Callable[[str], None] = lambda s: None,
) -> None:
    """The cost per hop of ``row``'s workload against ``base``'s, paired in time: ``pairs``
    rounds of one core run of each, the base first in every other round, each round's ratio
    of the two runs' ns/hop (and net of each workload's setup-only run, measured once
    earlier in the call). The call's own ratio (:func:`hop_costs`) divides medians taken tens
    of seconds apart (minutes when a reference runs between them), and on a shared machine
    the 10,000-flow hop's cost moves by a third within minutes ("Twelfth round" in
    docs/performance.md); a round's two runs are seconds apart. Adds ``hop_cost_pairs`` (the
    rounds' ratios), ``hop_cost_ratio_paired`` and ``hop_cost_ratio_paired_net`` (their
    medians; None without rounds) and ``hop_cost_pairs_note`` (why the rounds stopped early
    when a run failed: the rounds before it are kept, and so is the rest of the call)."""
    name, base_name = row["workload"], base["workload"]
    ratios: list[float] = []
    nets: list[float] = []
    row["hop_cost_pairs_note"] = ""
    for i in range(pairs):
        log(f"{name}: paired with {base_name}, round {i + 1}/{pairs} …")
        order = (base_name, name) if i % 2 == 0 else (name, base_name)
        try:
            got = {n: measure(n) for n in order}
        except (subprocess.CalledProcessError, OSError, ValueError) as e:
            row["hop_cost_pairs_note"] = f"round {i + 1} of {pairs} failed: {_why(e)}"
            break
        w, b = _per_hop_ns(got[name]), _per_hop_ns(got[base_name])
        if w and b:
            ratios.append(w / b)
        wn = _per_hop_ns(got[name], row["qoslab_core_setup"])
        bn = _per_hop_ns(got[base_name], base["qoslab_core_setup"])
        if wn and bn:
            nets.append(wn / bn)
    row["hop_cost_pairs"] = ratios
    row["hop_cost_ratio_paired"] = statistics.median(ratios) if ratios else None
    row["hop_cost_ratio_paired_net"] = statistics.median(nets) if nets else None


def _why(e: Exception) -> str:
    """One line on a failed core run: the worker's last line of error output, else the error."""
    err = getattr(e, "stderr", None)
    last = err.strip().splitlines()[-1] if isinstance(err, str) and err.strip() else str(e)
    return last[:200]


def pair_with_base(
    rows: list[dict[str, Any]],
    pairs: int,
    measure: Callable[[str], dict[str, Any]] = _measure_core,
    log: Callable[[str], None] = lambda s: None,
) -> None:
    """:func:`paired_hop_costs` of every row against :data:`HOP_COST_BASE`'s when ``rows`` hold
    it and ``pairs`` > 0; the base is then 1× of itself. Rows without a base, and workloads
    whose core run takes :data:`SLOW_CORE_S` or more (none of today's), get None and no rounds."""
    base = next((r for r in rows if r["workload"] == HOP_COST_BASE), None)
    for r in rows:
        if base is None or r is base or pairs == 0 or r["qoslab_core"]["wall_s"] >= SLOW_CORE_S:
            r["hop_cost_pairs"] = []
            r["hop_cost_pairs_note"] = ""
            itself = r is base and pairs > 0
            r["hop_cost_ratio_paired"] = r["hop_cost_ratio_paired_net"] = 1.0 if itself else None
        else:
            paired_hop_costs(r, base, pairs, measure, log)


def _paired(r: dict[str, Any]) -> str:
    """The paired ratio's median and range, as the table shows it."""
    med, xs = r["hop_cost_ratio_paired"], r["hop_cost_pairs"]
    if med is None:
        return "n/a"
    return f"{med:.2f}×" + (f" ({min(xs):.2f}–{max(xs):.2f})" if xs else "")


def _print_tables(con: Console, rows: list[dict[str, Any]]) -> None:
    """The speed table, the memory and per-hop table, and the notes under them."""
    from rich.table import Table

    t = Table(title=f"qoslab {_core.__version__} against ns-2 and ns-3 (one core each, seed 1)")
    cols = ["workload", "core s", "M hops/s"]
    cols += [c for _, label in _REFS for c in (f"{label} core s", "×")]
    cols += ["whole s"] + [c for _, label in _REFS for c in (f"{label} whole s", "×")] + ["start-up s"]
    for c in cols:
        t.add_column(c, justify="right")
    for r in rows:
        q = r["qoslab_core"]
        cells = [r["workload"], f"{r['qoslab_core_s']:.3f}", f"{q['hops'] / r['qoslab_core_s'] / 1e6:.1f}"]
        cells += [c for k, _ in _REFS for c in (_f(r[f"{k}_core_s"]), _ratio(r[f"{k}_core_ratio"]))]
        cells.append(_f(r["qoslab_whole_s"]))
        cells += [c for k, _ in _REFS for c in (_f(r[f"{k}_whole_s"]), _ratio(r[f"{k}_whole_ratio"]))]
        cells.append(_f(r["qoslab_startup_s"]))
        t.add_row(*cells)
    con.print(t)
    con.print(
        "core: qoslab's simulation call (a fresh worker); the reference's run less its setup (whole − a "
        f"run of the input cut to {SETUP_DURATION}). whole: `qoslab run FILE --out DIR`, `ns FILE.tcl` and "
        "the ns-3 program on its JSON input. Medians of alternating runs. ×: the reference's time over "
        f"qoslab's (qoslab faster by ×N). start-up: `qoslab run` of the scenario cut to {SETUP_DURATION}."
    )
    hop = Table(title="cost per hop (qoslab)")
    base_flows = [r["flows"] for r in rows if r["workload"] == r["hop_cost_base"]]
    base = f"× {base_flows[0]:,} flows" if base_flows else "× base"
    for col in ("workload", "ns/hop", base, "net ns/hop", base, "paired ×", "net paired ×", "events/hop"):
        hop.add_column(col, justify="right")
    for r in rows:
        q = r["qoslab_core"]
        hop.add_row(
            r["workload"],
            _f(r["ns_per_hop"], "{:.1f}"),
            _f(r["hop_cost_ratio"], "{:.2f}×"),
            _f(r["ns_per_hop_net"], "{:.1f}"),
            _f(r["hop_cost_ratio_net"], "{:.2f}×"),
            _paired(r),
            _f(r["hop_cost_ratio_paired_net"], "{:.2f}×"),
            f"{q['events'] / max(q['hops'], 1):.2f}",
        )
    con.print(hop)
    con.print(
        "ns/hop: the core's median time over its packet-hops; net: less the setup-only run's time and "
        f"hops; ×: against {HOP_COST_BASE} in this call (n/a when it was not measured); paired: the median "
        "(and range) over rounds of one run of each, alternating, of the two runs' ratio (seconds apart, "
        "where the medians are tens of seconds or minutes)."
    )
    m = Table(title="memory (qoslab)")
    for col in ("workload", "state MB (T/2 → T)", "series MB", "B/flow", "B/packet", "peak RSS MB (T/2 → T)"):
        m.add_column(col, justify="right")
    for r in rows:
        q, h = r["qoslab_core"], r["qoslab_core_half_duration"]
        m.add_row(
            r["workload"],
            f"{h['memory_bytes']['state'] / 2**20:.1f} → {q['memory_bytes']['state'] / 2**20:.1f}",
            f"{q['memory_bytes']['series'] / 2**20:.1f}",
            f"{r['bytes_per_flow']:,.0f}",
            f"{r['bytes_per_packet_in_flight']:,.0f}",
            f"{h['peak_rss_mb']:.0f} → {q['peak_rss_mb']:.0f}",
        )
    con.print(m)
    con.print(
        "state: the core's memory but the time series (allocated capacity), at half and at the full "
        "duration; B/flow: links, flow and endpoint state over the flows; B/packet: per packet in flight; "
        "peak RSS: the whole worker (Python, the scenario's parse)."
    )
    for r in rows:
        if r.get("warmup_note"):
            con.print(f"{r['workload']}: {r['warmup_note']}")
        if r["hop_cost_pairs_note"]:
            con.print(f"{r['workload']}: paired rounds: {r['hop_cost_pairs_note']}")
    for k, label in _REFS:  # one line per reason, naming the workloads it applies to
        by_note: dict[str, list[str]] = {}
        for r in rows:
            if r[f"{k}_note"]:
                by_note.setdefault(r[f"{k}_note"], []).append(r["workload"])
        for note, names in by_note.items():
            con.print(f"{label} n/a on {', '.join(names)}: {note}")
    for r in rows:
        cg = r.get("callgrind")
        if cg and cg.get("note"):
            con.print(f"{r['workload']}: instructions n/a: {cg['note']}")
        elif cg:
            con.print(
                f"{r['workload']}: {cg['instructions_per_hop']:.0f} instructions, "
                f"{cg['d1_misses_per_hop']:.1f} L1 data misses, {cg['ll_misses_per_hop']:.2f} last-level "
                f"misses ({cg['ll_read_misses_per_hop']:.2f} reads) per hop in the event loop (callgrind, "
                f"{cg['scale']:.3g} of the duration; last level {cg['last_level']})"
            )


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "--worker":
        _worker(sys.argv[2], float(sys.argv[3]) if len(sys.argv) > 3 else 1.0)
    else:
        main()
