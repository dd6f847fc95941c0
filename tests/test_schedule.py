"""Longest runs first (qoslab.runs.schedule): the cost model, the order the executor is handed, and
results bit-identical to the plan's order."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

import qoslab
from conftest import SCENARIOS
from qoslab.runs import schedule
from qoslab.runs.executors import LocalExecutor, OnDone
from qoslab.runs.sweep import plan, run_sweep
from qoslab.runs.tasks import RunTask
from qoslab.store import Store

S1 = str(SCENARIOS / "fdd-red-s1.toml")


def short(seconds: int, *extra: str) -> qoslab.Scenario:
    return qoslab.load_scenario(S1).with_overrides(
        [f"duration={seconds}s", "measurement.start=0s", f"measurement.end={seconds}s", *extra]
    )


def test_cost_grows_with_simulated_time_and_link_rate() -> None:
    a, b = short(4), short(8)
    assert schedule.scenario_cost(b) == pytest.approx(2.0 * schedule.scenario_cost(a))
    assert schedule.scenario_cost(a) > 0


def test_longest_first_is_stable_and_lpt_beats_plan_order() -> None:
    items = ["a", "b", "c", "d", "e"]
    cost = {0: 1.0, 1: 1.0, 2: 1.0, 3: 1.0, 4: 4.0}
    assert schedule.longest_first(items, cost) == ["e", "a", "b", "c", "d"]
    plan_order = [cost[i] for i in range(5)]
    lpt = sorted(plan_order, reverse=True)
    # one long run last leaves a worker idle for its whole length: 6 against 4
    assert schedule.lpt_makespan(plan_order, 2) == 6.0
    assert schedule.lpt_makespan(lpt, 2) == 4.0


class Recording(LocalExecutor):
    """The local pool, remembering the order in which it was handed the tasks."""

    def __init__(self) -> None:
        super().__init__(1)
        self.order: list[RunTask] = []

    def run(self, tasks: Iterable[RunTask], on_done: OnDone) -> None:
        ts = list(tasks)
        self.order = ts
        super().run(ts, on_done)


def test_sweep_submits_longest_first_and_stores_the_same_results(
    tmp_path: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pathlib import Path

    root = Path(str(tmp_path))
    specs = plan([({"d": 2}, short(2)), ({"d": 6}, short(6)), ({"d": 4}, short(4))], [1, 2], "sched")
    results = {}
    for mode in ("plan", "longest"):
        monkeypatch.setenv(schedule.SCHEDULE_ENV, mode)
        ex = Recording()
        with Store(root / mode) as st:
            rep = run_sweep(specs, st, ex, progress=False)
            assert rep.ok and rep.computed == 6
            durations = [
                round(qoslab.Scenario(t.scenario_text).outline["duration_ns"] / 1e9) for t in ex.order
            ]
            df = st.query(
                "SELECT r.scenario_sha256, r.seed, m.name, m.value FROM runs r JOIN metrics m "
                "ON m.run_id = r.id ORDER BY r.scenario_sha256, r.seed, m.name"
            )
        results[mode] = (durations, df)
    assert results["plan"][0] == [2, 2, 6, 6, 4, 4]
    assert results["longest"][0] == [6, 6, 4, 4, 2, 2]
    assert len(results["plan"][1]) > 0
    assert results["plan"][1].equals(results["longest"][1])  # bit-identical metrics


def test_bad_schedule_setting_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(schedule.SCHEDULE_ENV, "random")
    with pytest.raises(ValueError, match="QOSLAB_SCHEDULE must be"):
        schedule.schedule([], {}, None)
