"""tools/refresh_results.py: the resumable refresh of every committed result the core simulated.
Its plan is what the checks call stale, no more and no less; a modern-aqm run that moved only
in how it ran (its version, its wall time, its worker) counts as unchanged."""

from __future__ import annotations

import functools
import importlib.util
import shlex
import subprocess
import sys
from types import ModuleType
from typing import Any

from conftest import ROOT

TOOL = ROOT / "tools" / "refresh_results.py"


@functools.cache
def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("refresh_results", TOOL)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("refresh_results", mod)  # its dataclass looks its module up there
    spec.loader.exec_module(mod)
    return mod


@functools.cache
def _plan() -> list[Any]:
    return list(_tool().plan(set()))


def test_the_plan_refreshes_exactly_the_verdict_files_the_check_calls_stale() -> None:
    from qoslab.verdicts.currency import check, read

    problems, stale = check(ROOT)
    assert problems == []
    planned = [s for s in _plan() if s.name.startswith("docs/verdicts/")]
    assert sorted(s.name for s in planned) == sorted(line.split(":")[0] for line in stale)
    for s in planned:
        doc = read(ROOT / s.name)
        # the command the file records, run into the tool's folder
        assert s.argv[1:] == [*shlex.split(doc["command"])[1:], "--out", str(_tool().OUT)]


def test_a_run_that_moved_only_in_how_it_ran_is_unchanged_and_a_metric_is_not() -> None:
    t = _tool()
    row = {"scenario": "s", "seed": "1", "version": "0.1.0+aaaaaaaaaaaa", "wall_time_s": "0.5"}
    row |= {"worker": "vm:1", "summary": "x", "note": "qoslab 0.1.0+aaaaaaaaaaaa"}
    again = row | {"version": "0.1.0+bbbbbbbbbbbb", "wall_time_s": "0.7", "worker": "vm:9"}
    again["note"] = "qoslab 0.1.0+bbbbbbbbbbbb"
    assert t.comparable([row]) == t.comparable([again])
    assert t.comparable([row]) != t.comparable([again | {"summary": "y"}])


def test_the_dry_run_lists_every_step_with_its_command() -> None:
    out = subprocess.run(
        [sys.executable, str(TOOL), "--dry-run", "--only", "studies"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    ).stdout
    steps = [s for s in _plan() if s.group == "studies"]
    if not steps:
        assert out.startswith("every committed result is at core")
    for i, s in enumerate(steps, 1):
        assert f"[{i}/{len(steps)}] studies: {s.name}" in out
        assert shlex.join(s.argv) in out
