"""``qoslab bench`` runs its workloads' core calls through the memory budget's check, as ``qoslab
run`` does (qoslab.budget.check, without tables: the worker builds none): a workload the budget
refuses is refused in one line, and its core call is not made."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import QOSLAB, one_line_error
from qoslab import budget
from qoslab.bench import workloads

ROOT = Path(__file__).resolve().parent.parent
SMALL = "red-5flows-1Mbps-100s"


def _small() -> workloads.Workload:
    return next(w for w in workloads.WORKLOADS if w.name == SMALL)


def test_the_worker_refuses_a_call_above_the_budget_and_does_not_make_it() -> None:
    """Under QOSLAB_MAX_MEMORY=1MB the worker exits with REFUSED, the budget's one line on
    stderr, and prints no figures (the core call would print its JSON on stdout)."""
    env = {**os.environ, "QOSLAB_MAX_MEMORY": "1MB"}
    p = subprocess.run(
        [sys.executable, "-m", "qoslab.bench", "--worker", SMALL, "1.0"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=ROOT,
    )
    assert p.returncode == workloads.REFUSED, (p.returncode, p.stderr)
    assert p.stdout == ""
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "the run would need about" in lines[0] and "above 1 MB" in lines[0], p.stderr


def test_the_bench_refuses_the_workload_in_one_line() -> None:
    """``qoslab bench --workload`` under a limit the workload's estimate exceeds: one line, the
    workload's name, the key and the limit; nothing measured."""
    env = {**os.environ, "QOSLAB_MAX_MEMORY": "1MB"}
    p = subprocess.run(
        [QOSLAB, "bench", "--workload", SMALL, "--no-ns2", "--no-ns3", "--repeat", "1", "--pairs", "0"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        cwd=ROOT,
    )
    line = one_line_error(p)
    assert f"workload {SMALL}:" in line and "key `" in line and "above 1 MB" in line, line


def test_the_worker_checks_the_estimate_without_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check the worker makes is the budget's estimate of the core call without tables: a
    limit just above that estimate lets the call through, just below refuses it."""
    sc = _small().build()
    est = budget.estimate(sc.outline, [], sc.core, tables=False).memory_bytes
    assert est < budget.estimate(sc.outline, [], sc.core).memory_bytes
    monkeypatch.setenv("QOSLAB_MAX_MEMORY", str(est * 1.001))
    assert workloads.refusal(sc) is None
    monkeypatch.setenv("QOSLAB_MAX_MEMORY", str(est * 0.999))
    why = workloads.refusal(sc)
    assert why is not None and "the run would need about" in why
