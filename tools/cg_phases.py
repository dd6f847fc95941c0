"""Cost per packet-hop of a run's later phase against its first, from two cachegrind runs.

Run the same scenario and seed for two durations under cachegrind, the shorter ending where
the phase of interest begins; the later phase's counts are the differences of the two. Both
phases are divided by their packet-hops (``examples/run`` prints them on its last line) and
shown by source file and by source line, sorted by the change:

    valgrind --tool=cachegrind --cache-sim=yes --D1=32768,8,64 --LL=33554432,16,64 \\
        --cachegrind-out-file=/tmp/a.out target/release/examples/run build/d2k-3s.toml 1
    (the same for build/d2k-6s.toml into /tmp/b.out)
    python3 tools/cg_phases.py /tmp/a.out HOPS_A /tmp/b.out HOPS_B --event D1mr

The cache sizes are the 2-core CI machine's, as Linux's sysfs describes them (``qoslab bench``'s
``cache_geometry`` reads them there).

Standard library only: it runs without the project's environment.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

import _script

EVENTS = ("Ir", "D1mr", "D1mw", "DLmr", "DLmw", "Bcm")


class Counts:
    """One cachegrind output file's counts by event, and by (place, event) where a place is
    a source file (``by["file"]``) or a line of one (``by["line"]``, ``FILE:LINE``)."""

    def __init__(self, path: Path) -> None:
        self.total: Counter[str] = Counter()
        self.by: dict[str, Counter[tuple[str, str]]] = {"file": Counter(), "line": Counter()}
        try:
            self._read(path)
        except UnicodeDecodeError as e:
            raise ValueError(f"{path}: not a cachegrind output file ({e.reason} at byte {e.start})") from e

    def _read(self, path: Path) -> None:
        names: list[str] = []
        fl = "?"
        with path.open(encoding="utf-8") as f:
            for k, raw in enumerate(f, 1):
                if raw.startswith("events:"):
                    names = raw.split()[1:]
                elif raw.startswith("fl="):
                    fl = raw[3:].strip()
                elif raw[:1].isdigit():
                    if not names:
                        raise ValueError(f"{path}: counts before the 'events:' line")
                    try:
                        line, *counts = map(int, raw.split())
                    except ValueError:
                        raise ValueError(f"{path}:{k}: not a line of counts: {raw.strip()[:60]!r}") from None
                    for name, n in zip(names, counts, strict=False):
                        self.total[name] += n
                        self.by["file"][(fl, name)] += n
                        self.by["line"][(f"{fl}:{line}", name)] += n
        if not names:
            raise ValueError(f"{path}: not a cachegrind output file (no 'events:' line)")


def _short(path: str) -> str:
    return path.split("/src/", 1)[-1] if "/src/" in path else path


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("first", type=Path, help="cachegrind output of the shorter run")
    p.add_argument("first_hops", type=int, help="its packet-hops")
    p.add_argument("whole", type=Path, help="cachegrind output of the longer run")
    p.add_argument("whole_hops", type=int, help="its packet-hops")
    p.add_argument("--event", default="D1mr", help="the event to break down (default D1mr)")
    p.add_argument("--rows", type=int, default=15, help="rows of each breakdown (default 15)")
    a = p.parse_args(argv)
    later_hops = a.whole_hops - a.first_hops
    if a.first_hops <= 0 or later_hops <= 0:
        print(
            f"hops: need 0 < FIRST_HOPS < WHOLE_HOPS, got {a.first_hops} and {a.whole_hops}", file=sys.stderr
        )
        return 2
    counts = _script.read(lambda: (Counts(a.first), Counts(a.whole)))
    if counts is None:
        return 1
    first, whole = counts
    if a.event not in whole.total:
        print(
            f"--event {a.event}: not recorded (recorded: {', '.join(sorted(whole.total))})", file=sys.stderr
        )
        return 2

    def phases(before: float, after: float) -> tuple[float, float]:
        return before / a.first_hops, (after - before) / later_hops

    print(f"per hop: first phase ({a.first_hops} hops), later phase ({later_hops} hops)")
    for ev in EVENTS:
        if ev in whole.total:
            x, y = phases(first.total[ev], whole.total[ev])
            print(f"  {ev:6} {x:9.2f} {y:9.2f}")
    for kind in ("file", "line"):
        rows = sorted(
            (
                (place, *phases(first.by[kind][(place, ev)], n))
                for (place, ev), n in whole.by[kind].items()
                if ev == a.event
            ),
            key=lambda r: r[2] - r[1],
            reverse=True,
        )
        print(f"{a.event} per hop by {kind}: first, later, change")
        for place, x, y in rows[: a.rows]:
            print(f"  {x:8.3f} {y:8.3f} {y - x:+8.3f}  {_short(place)}")
    return 0


if __name__ == "__main__":
    _script.run(main)
