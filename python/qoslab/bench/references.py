"""The reference simulators' side of a bench call: ns-2's script and ns-3's JSON input for a
workload and its setup-only form, and the commands that run them (or why they are not run)."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from pathlib import Path

from qoslab.bench.workloads import Workload, setup_only
from qoslab.ns3 import (
    Ns3Error,
    build_program,
    ns3_missing,
    program_input,
    to_ns3_resolved,
    unsupported_reason,
)
from qoslab.scenario import Scenario, to_ns2_resolved


def _write_ns2(sc: Scenario, path: Path) -> None:
    from qoslab.ns2.tcl import build_tcl

    script, _ = build_tcl(to_ns2_resolved(sc.resolved, 1), 1, str(path.with_suffix(".json")))
    path.write_text(script)


def _write_ns3(sc: Scenario, path: Path) -> None:
    """The ns-3 program's input for ``sc`` and seed 1, as :func:`qoslab.ns3.run_ns3` writes it."""
    path.write_text(json.dumps(program_input(to_ns3_resolved(sc.resolved, 1), 1), indent=1))


@functools.cache
def ns3_program() -> tuple[Path | None, str]:
    """The compiled ns-3 program (compiled on first use, about 15 s), or None and why not."""
    missing = ns3_missing()
    if missing:
        return None, f"ns-3 not available: {missing}"
    try:
        return build_program(), ""
    except Ns3Error as e:
        return None, str(e).strip().splitlines()[0][:300]


@dataclass
class Reference:
    """A reference simulator (``key``: ns2, ns3) on one workload: its commands on the full and
    the setup-only input, its times of each, and why it is not run (``note``, "" if it is)."""

    key: str
    full: list[str] = field(default_factory=list)
    setup: list[str] = field(default_factory=list)
    note: str = ""
    whole_s: list[float | None] = field(default_factory=list)
    setup_s: list[float | None] = field(default_factory=list)


def prepare_ns2(w: Workload, sc: Scenario, d: Path, use: bool, run_all: bool) -> Reference:
    """ns-2's runs of ``w`` (its scripts written to ``d``), or why there are none."""
    from qoslab.ns2 import ns2_available, unsupported_reason

    if not use:
        return Reference("ns2", note="not run (--no-ns2)")
    ns = ns2_available()
    if ns is None:
        return Reference("ns2", note="`ns` not found (install with `make ns2`)")
    why = unsupported_reason(to_ns2_resolved(sc.resolved, 1))
    if why:
        return Reference("ns2", note=f"the ns-2 export refuses it: {why}")
    if w.ns2_note and not run_all:
        return Reference("ns2", note=w.ns2_note)
    _write_ns2(sc, d / "full.tcl")
    _write_ns2(setup_only(sc), d / "setup.tcl")
    return Reference("ns2", [str(ns), "full.tcl"], [str(ns), "setup.tcl"])


def prepare_ns3(w: Workload, sc: Scenario, d: Path, use: bool, run_all: bool) -> Reference:
    """ns-3's runs of ``w`` (the compiled program on its JSON input, written to ``d``, as
    :func:`qoslab.ns3.run_ns3` runs it), or why there are none."""
    if not use:
        return Reference("ns3", note="not run (--no-ns3)")
    why = unsupported_reason(to_ns3_resolved(sc.resolved, 1))
    if why:
        return Reference("ns3", note=f"the ns-3 export refuses it: {why}")
    if w.ns3_note and not run_all:
        return Reference("ns3", note=w.ns3_note)
    exe, missing = ns3_program()
    if exe is None:
        return Reference("ns3", note=missing)
    # not full.json: ns-2's script writes its results there
    _write_ns3(sc, d / "ns3-full.json")
    _write_ns3(setup_only(sc), d / "ns3-setup.json")
    return Reference(
        "ns3",
        [str(exe), "ns3-full.json", "ns3-full-results.json"],
        [str(exe), "ns3-setup.json", "ns3-setup-results.json"],
    )
