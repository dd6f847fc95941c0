"""Digests of what the exporters make of every scenario, to show that a refactoring of the
exporters changed none of their outputs or refusals.

For every scenario file under ``scenarios/`` (recursively, examples, linux and ns3 included)
and every point of every experiment's quick plan, seed 1: the ns-2 Tcl script (or the
refusal's message), the ns-3 program's input (or the refusal's message) and the emulator's
plan (the kernel congestion control of each flow and of the hosts, or the refusal's message)
are hashed. The file written is JSON, one digest per scenario and exporter; compare two files
with ``--compare OLD NEW``.

    .venv/bin/python tools/export_digests.py --out /tmp/before.json
    .venv/bin/python tools/export_digests.py --out /tmp/after.json --compare /tmp/before.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Iterable
from pathlib import Path

from qoslab import emulation, ns2, ns3
from qoslab.ns3.export import program_input, to_ns3_resolved
from qoslab.reproduction import base
from qoslab.scenario import Scenario, load_scenario, to_ns2_resolved

ROOT = Path(__file__).resolve().parents[1]


def _ns2(sc: Scenario) -> str:
    r = to_ns2_resolved(sc.resolved, 1)
    why = ns2.unsupported_reason(r)
    if why is not None:
        return f"refused: {why}"
    try:
        return ns2.to_tcl(r, 1, "out.json")
    except ValueError as e:
        return f"refused: {e}"


def _ns3(sc: Scenario) -> str:
    try:
        return json.dumps(program_input(to_ns3_resolved(sc.resolved, 1), 1), sort_keys=True)
    except ns3.Ns3Refusal as e:
        return f"refused: {e}"


def _emulator(sc: Scenario) -> str:
    try:
        emulation.check_supported(sc)
        return json.dumps({"flows": emulation.flow_ccs(sc), "hosts": emulation.scenario_cc(sc, mixed=True)})
    except emulation.EmulationError as e:
        return f"refused: {e}"


def scenarios() -> Iterable[tuple[str, Scenario]]:
    for p in sorted((ROOT / "scenarios").rglob("*.toml")):
        yield f"scenario:{p.relative_to(ROOT / 'scenarios')}", load_scenario(p)
    for exp in base.available():
        opts = base.Options(quick=True, seeds=list(range(1, exp.quick_seeds + 1)))
        for sw in exp.plan(opts):
            for i, (params, sc) in enumerate(sw.points):
                yield f"{exp.name}:{sw.name}:{i}:{json.dumps(params, sort_keys=True, default=str)}", sc


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--compare", type=Path, help="an earlier file to compare against")
    a = ap.parse_args()
    out: dict[str, str] = {}
    counts = {"ns2": [0, 0], "ns3": [0, 0], "emulator": [0, 0]}
    for label, sc in scenarios():
        for name, f in (("ns2", _ns2), ("ns3", _ns3), ("emulator", _emulator)):
            text = f(sc)
            counts[name][text.startswith("refused: ")] += 1
            out[f"{label}#{name}"] = hashlib.sha256(text.encode()).hexdigest()
    a.out.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    for name, (ok, refused) in counts.items():
        print(f"{name}: {ok} exported, {refused} refused")
    if a.compare:
        old = json.loads(a.compare.read_text())
        diff = [k for k in sorted(set(old) | set(out)) if old.get(k) != out.get(k)]
        for k in diff[:20]:
            print(f"DIFFERS: {k}")
        print(f"{len(diff)} of {len(out)} digests differ from {a.compare}")
        return 1 if diff else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
