"""Instructions and cache misses per packet-hop in the core's event loop, from callgrind
(:func:`event_loop_counts`), with the caches Linux's sysfs describes (:func:`cache_geometry`)
as valgrind can simulate them (:func:`simulable`)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
    sysfs (:func:`described_caches`), as valgrind can simulate them (:func:`simulable`); None
    where sysfs does not describe them, or describes one of its caches unreadably. valgrind's
    own detection reads CPUID, which a virtual machine may fill with a cache that does not
    exist: on the 2-core CI machine it finds a 320 MB direct-mapped L3, where sysfs has
    32 MiB of 16 ways."""
    described = described_caches(root)
    if len(described) != len(list(root.glob("index*"))):
        return None
    found: dict[str, tuple[int, Cache]] = {}
    for c in described:
        level, kind = c["level"], c["type"]
        cache = simulable(c["bytes"], c["ways"], c["line"])
        if level == 1 and kind in ("Instruction", "Data"):
            found["I1" if kind == "Instruction" else "D1"] = (level, cache)
        if kind in ("Unified", "Data") and level > found.get("LL", (1, cache))[0]:
            found["LL"] = (level, cache)
    if set(found) != {"I1", "D1", "LL"}:
        return None
    return {k: c for k, (_, c) in found.items()}


def described_caches(root: Path = SYSFS_CACHES) -> list[dict[str, Any]]:
    """Every cache Linux's sysfs describes for the first CPU, as described (not as valgrind
    could simulate it): level, type, bytes, ways, line bytes and the CPUs sharing it; empty where sysfs
    says nothing (a cache it describes unreadably is left out). The backbone guard's hop
    costs depend on whether a workload's state fits the last level (docs/performance.md,
    "Backbone scale"), so a call records them."""
    out: list[dict[str, Any]] = []
    for d in sorted(root.glob("index*")):
        try:
            out.append(
                {
                    "level": int((d / "level").read_text()),
                    "type": (d / "type").read_text().strip(),
                    "bytes": _sysfs_size((d / "size").read_text()),
                    "ways": int((d / "ways_of_associativity").read_text()),
                    "line": int((d / "coherency_line_size").read_text()),
                    "shared_cpus": (d / "shared_cpu_list").read_text().strip()
                    if (d / "shared_cpu_list").exists()
                    else None,
                }
            )
        except (OSError, ValueError):
            continue
    return out


#: The core's event loop: the instruction and cache-miss counts are taken inside it alone
#: (callgrind's ``--toggle-collect``), so neither the interpreter's start-up, nor the
#: scenario's parse, nor the network's building enter them.
EVENT_LOOP = "qoslab_core::sim::Simulation::run_events_until"


def callgrind_command(out: Path, name: str, scale: float, caches: dict[str, Cache] | None) -> list[str]:
    """The command that runs the worker on ``name`` at ``scale`` of its duration under
    callgrind, counting inside :data:`EVENT_LOOP` only and simulating ``caches`` (valgrind's
    own detection when None). The caches are simulated throughout, so the loop starts on the
    caches the set-up left. The worker is the bench's (``--loop``) without pandas, whose
    import under callgrind took about 20 s of a 28 s count and enters no count."""
    vg = shutil.which("valgrind") or "valgrind"
    cmd = [vg, "--tool=callgrind", "--cache-sim=yes", f"--toggle-collect={EVENT_LOOP}"]
    cmd += [f"--callgrind-out-file={out}"]
    cmd += [f"--{k}={c.arg()}" for k, c in sorted((caches or {}).items())]
    return cmd + [sys.executable, "-m", "qoslab.bench", "--loop", name, str(scale)]


def event_loop_counts(name: str, scale: float) -> dict[str, Any] | None:
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
