"""Digests of simulation results, to show that a refactoring changed no result.

For every scenario file in ``scenarios/`` (seed 1) and every run of every experiment's quick
plan (each point with each quick seed), the raw output of the core (every table and time
series, every column, bit for bit) is hashed. The file written is JSON: one digest per run
and one per experiment; compare two files with ``--compare OLD NEW``.

    .venv/bin/python tools/result_digests.py --out /tmp/before.json
    .venv/bin/python tools/result_digests.py --out /tmp/after.json --compare /tmp/before.json

``--tcp-flavour linux`` digests the linux transport flavour instead: every TCP sender of those
runs in it (as ``--tcp-flavour linux`` runs a reproduction), and ``scenarios/linux/`` is added.
"""

from __future__ import annotations

import argparse
import array
import hashlib
import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from qoslab import Scenario, ScenarioError, _core
from qoslab.reproduction import base
from qoslab.reproduction.planning import as_run
from qoslab.runs.simulate import as_numpy
from qoslab.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[1]
#: Outputs left out of the digests (``--ignore TABLE/COLUMN``): columns added since the file
#: compared against was written, so that the comparison covers everything both produce.
IGNORE: set[str] = set()
#: Left out unless ``--with-memory``: the core's memory accounting (``memory_bytes``: allocated
#: capacities, what the bench reports), which an allocation policy or a larger sender state
#: changes without changing any result.
MEMORY = {"memory_bytes"}
#: Runs the flavour asked for refuses (``--tcp-flavour``), by scenario name.
SKIPPED: list[str] = []


def _feed(h: Any, v: Any, path: str = "") -> None:
    if isinstance(v, dict):
        for k in sorted(v):
            if f"{path}{k}" in IGNORE:
                continue
            h.update(f"<{k}>".encode())
            _feed(h, v[k], f"{path}{k}/")
    elif isinstance(v, array.array):
        # The core's columns come as array.array buffers (since 878b68f); hashed as the numpy
        # arrays they were before, so that digests stay comparable across that change.
        _feed(h, as_numpy(v), path)
    elif isinstance(v, np.ndarray):
        h.update(str(v.dtype).encode())
        h.update(np.ascontiguousarray(v).tobytes())
    elif isinstance(v, (list, tuple)):
        h.update(b"[")
        for x in v:
            _feed(h, x, path)
        h.update(b"]")
    else:
        h.update(repr(v).encode())


def digest(text: str, source: str, seed: int) -> str:
    raw = _core.simulate(text, source, seed, [], None)
    h = hashlib.sha256()
    _feed(h, raw)
    return h.hexdigest()


def scenario_runs(tcp_flavour: str | None) -> Iterable[tuple[str, str, str, int]]:
    paths = sorted((ROOT / "scenarios").glob("*.toml"))
    if tcp_flavour is not None:
        paths += sorted((ROOT / "scenarios" / "linux").glob("*.toml"))
    for p in paths:
        sc = _as_run(load_scenario(p), _options(1, tcp_flavour))
        if sc is None:
            continue
        label = p.stem if p.parent.name == "scenarios" else f"{p.parent.name}/{p.stem}"
        yield f"scenario:{label}", sc.text, sc.source, 1


def _as_run(sc: Scenario, opts: base.Options) -> Scenario | None:
    """``sc`` in the flavour asked for, or None (counted) where that flavour refuses it, as the
    linux flavour refuses ns-2's TCP variants it does not model."""
    try:
        return as_run(sc, opts)
    except ScenarioError:
        SKIPPED.append(sc.name)
        return None


def _options(seeds: int, tcp_flavour: str | None) -> base.Options:
    return base.Options(quick=True, seeds=list(range(1, seeds + 1)), tcp_flavour=tcp_flavour)


def experiment_runs(names: list[str] | None, tcp_flavour: str | None) -> Iterable[tuple[str, str, str, int]]:
    for exp in base.available():
        if names and exp.name not in names:
            continue
        opts = _options(exp.quick_seeds, tcp_flavour)
        for sw in exp.plan(opts):
            for i, (params, unflavoured) in enumerate(sw.points):
                sc = _as_run(unflavoured, opts)
                if sc is None:
                    continue
                for seed in sw.seeds:
                    label = f"{exp.name}:{sw.name}:{i}:{json.dumps(params, sort_keys=True, default=str)}"
                    yield label, sc.text, sc.source, int(seed)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--compare", type=Path, help="an earlier file to compare against")
    ap.add_argument("--experiments", nargs="*", help="only these experiments (default: all)")
    ap.add_argument("--no-experiments", action="store_true")
    ap.add_argument(
        "--ignore", nargs="*", default=[], help="outputs to leave out, as TABLE/COLUMN (flows/ecn_marks)"
    )
    ap.add_argument("--tcp-flavour", choices=["linux"], help="run every TCP sender in this transport flavour")
    ap.add_argument(
        "--with-memory",
        action="store_true",
        help="also hash the core's memory accounting (memory_bytes: allocated capacities)",
    )
    a = ap.parse_args()
    IGNORE.update(a.ignore)
    if not a.with_memory:
        IGNORE.update(MEMORY)
    runs: dict[str, str] = {}
    sources = list(scenario_runs(a.tcp_flavour))
    if not a.no_experiments:
        sources += list(experiment_runs(a.experiments, a.tcp_flavour))
    for n, (label, text, source, seed) in enumerate(sources, 1):
        runs[f"{label}#seed{seed}"] = digest(text, source, seed)
        if n % 50 == 0:
            print(f"{n}/{len(sources)} runs", file=sys.stderr)
    groups: dict[str, hashlib._Hash] = {}
    for k in sorted(runs):
        g = k.split(":", 1)[0] if not k.startswith("scenario:") else k.split("#")[0]
        groups.setdefault(g, hashlib.sha256()).update(runs[k].encode())
    summary = {g: h.hexdigest()[:16] for g, h in sorted(groups.items())}
    a.out.write_text(json.dumps({"groups": summary, "runs": runs}, indent=1) + "\n")
    for g, d in summary.items():
        print(f"{g:40} {d}")
    print(f"{len(runs)} runs" + (f", {len(SKIPPED)} refused by the flavour" if SKIPPED else ""))
    if a.compare:
        old = json.loads(a.compare.read_text())["runs"]
        both = sorted(set(old) & set(runs))
        diff = [k for k in both if old[k] != runs[k]]
        for k in diff[:20]:
            print(f"DIFFERS: {k}")
        print(f"{len(diff)} of the {len(both)} runs in both files differ from {a.compare}")
        for what, keys in (("only here", set(runs) - set(old)), ("only there", set(old) - set(runs))):
            if keys:
                print(f"{len(keys)} runs {what}, not compared (e.g. {min(keys)})")
        return 1 if diff else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
