"""Plans remembered within qoslab.reproduction.remembered_plans.remembered: inside the scope each
plan is made once (later calls get the same scenarios and runs, in lists of their own), only the
last few plans are kept, and outside the scope every call plans afresh. The module is outside
the experiment code the verdict files' fingerprints cover."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from qoslab.reproduction import remembered_plans
from qoslab.reproduction.base import Options, Sweep, get
from qoslab.reproduction.remembered_plans import planned, remembered
from qoslab.verdicts.currency import experiment_files


@pytest.fixture
def counted() -> tuple[Any, list[int]]:
    """fdd-red, with its ``plan`` counting the calls (by number of seeds)."""
    exp = get("fdd-red")
    calls: list[int] = []

    def plan(opts: Options) -> list[Sweep]:
        calls.append(len(opts.seeds))
        return exp.plan(opts)

    return replace(exp, plan=plan), calls


def test_a_plan_is_made_once_inside_the_scope(counted: tuple[Any, list[int]]) -> None:
    exp, calls = counted
    with remembered():
        a = planned(exp, seeds=4, quick=True)
        b = planned(exp, seeds=4, quick=True)
        assert calls == [4]
        assert all(x.scenario is y.scenario for x, y in zip(a[2], b[2], strict=True))
        b[2].clear()  # the lists are the caller's own
        assert planned(exp, seeds=4, quick=True)[2] == a[2]
        c = planned(exp, seeds=6, quick=True, sweep_seeds={"tables": 4})
        assert calls == [4, 6, 4]  # another plan: planning.planned reads the plan at 4 for the reseeded sweep
        tables = [s for s in c[2] if s.sweep.endswith("/tables")]
        assert tables and {s.seed for s in tables} == set(range(1, 5))
    assert remembered_plans._MEMO is None


def test_outside_the_scope_every_call_plans_afresh(counted: tuple[Any, list[int]]) -> None:
    exp, calls = counted
    a = planned(exp, seeds=4, quick=True)
    b = planned(exp, seeds=4, quick=True)
    assert calls == [4, 4]
    assert [s.key for s in a[2]] == [s.key for s in b[2]]
    assert not any(x.scenario is y.scenario for x, y in zip(a[2], b[2], strict=True))


def test_only_the_last_plans_are_kept(counted: tuple[Any, list[int]]) -> None:
    # a scenario is ~75 kB in the core: nine looks' plans of 500 points each held gigabytes
    exp, calls = counted
    with remembered():
        for n in range(4, 22, 2):
            planned(exp, seeds=n, quick=True)
        assert remembered_plans._MEMO is not None and len(remembered_plans._MEMO) == remembered_plans.KEEP
        planned(exp, seeds=20, quick=True)
        planned(exp, seeds=4, quick=True)  # let go: planned again
    assert calls == [*range(4, 22, 2), 4]


def test_the_module_is_outside_every_experiments_fingerprinted_code() -> None:
    for name in ("ard", "fdd-red", "probe-marker", "rio-plus-o", "twam-dwred", "modern-aqm"):
        files = {p.name for p in experiment_files(name)}
        assert "remembered_plans.py" not in files and "handover.py" not in files
