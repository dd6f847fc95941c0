"""Plans remembered within qoslab.experiments.planning.remembered: inside the scope an experiment
is planned once per set of options (each later call gets the same sweeps, scenarios and runs),
a plan at other options is made afresh, and outside the scope every call plans afresh."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from qoslab.experiments import planning
from qoslab.experiments.base import Options, Sweep, get
from qoslab.experiments.planning import planned, remembered


@pytest.fixture
def counted() -> tuple[Any, list[int]]:
    """fdd-red, with its ``plan`` counting the calls (by number of seeds)."""
    exp = get("fdd-red")
    calls: list[int] = []

    def plan(opts: Options) -> list[Sweep]:
        calls.append(len(opts.seeds))
        return exp.plan(opts)

    return replace(exp, plan=plan), calls


def test_a_plan_is_made_once_per_options_inside_the_scope(counted: tuple[Any, list[int]]) -> None:
    exp, calls = counted
    with remembered():
        a = planned(exp, seeds=4, quick=True)
        b = planned(exp, seeds=4, quick=True)
        assert calls == [4]
        assert [s.key for s in a[2]] == [s.key for s in b[2]]
        assert all(x.scenario is y.scenario for x, y in zip(a[2], b[2], strict=True))
        # the lists are the caller's own
        b[2].clear()
        assert planned(exp, seeds=4, quick=True)[2] == a[2]
        # other seeds: a plan of its own; a sweep reseeded to 4 reuses the plan at 4
        c = planned(exp, seeds=6, quick=True, sweep_seeds={"tables": 4})
        assert calls == [4, 6]
        tables = [s for s in c[2] if s.sweep.endswith("/tables")]
        assert tables and {s.seed for s in tables} == set(range(1, 5))
    assert planning._MEMO is None


def test_outside_the_scope_every_call_plans_afresh(counted: tuple[Any, list[int]]) -> None:
    exp, calls = counted
    a = planned(exp, seeds=4, quick=True)
    b = planned(exp, seeds=4, quick=True)
    assert calls == [4, 4]
    assert [s.key for s in a[2]] == [s.key for s in b[2]]
    assert not any(x.scenario is y.scenario for x, y in zip(a[2], b[2], strict=True))


def test_the_scope_keeps_the_scenarios_of_the_last_few_plans_only(counted: tuple[Any, list[int]]) -> None:
    # each scenario's resolved table takes ~350 kB: nine looks' plans of 500 points each were 2.3 GB
    exp, calls = counted
    with remembered():
        for n in range(4, 22, 2):
            planned(exp, seeds=n, quick=True, sweep_seeds={"tables": 4} if n > 4 else None)
        memo = planning._MEMO
        assert memo is not None
        kinds = [k[0] for k in memo]
        assert kinds.count("plan") <= planning._KEEP["plan"]
        assert kinds.count("planned") <= planning._KEEP["planned"]
        # the reseeded sweep read the plan at 4 seeds once, though that plan was let go since
        assert calls == list(range(4, 22, 2))
