"""Workers kept between a local pool's runs (qoslab.runs.local_pool.kept_workers): inside the scope
the next pool of the same niceness takes the last one's processes instead of starting its own;
they stop when the scope closes; a worker that died while idle is replaced; a pool whose run
raised keeps nothing; the runs computed are the same with and without."""

from __future__ import annotations

import os
import signal
import time

import pandas as pd
import pytest

import qoslab
from conftest import SCENARIOS
from qoslab.runs.local_pool import LocalExecutor, kept_workers
from qoslab.runs.sweep import plan
from qoslab.runs.tasks import RunOutput, RunTask

S1 = str(SCENARIOS / "fdd-red-s1.toml")


def _tasks(seeds: list[int]) -> list[RunTask]:
    sc = qoslab.load_scenario(S1).with_overrides(
        ["duration=2s", "measurement.start=0s", "measurement.end=2s"]
    )
    return [RunTask(s.key, s.scenario.text, s.scenario.source, ()) for s in plan([({}, sc)], seeds, "kept")]


def _run(ex: LocalExecutor, tasks: list[RunTask]) -> list[RunOutput]:
    seen: list[RunOutput] = []
    ex.run(tasks, lambda t, o: seen.append(o) or [])
    assert len(seen) == len(tasks) and all(o.ok for o in seen)
    return seen


def _pids(outs: list[RunOutput]) -> set[int]:
    return {int(o.worker.rsplit(":", 1)[1]) for o in outs}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie has exited too
    with open(f"/proc/{pid}/stat") as f:
        return f.read().split(") ", 1)[1][0] != "Z"


def _reaped_or_reapable(pid: int) -> bool:
    """Gone, or a zombie whose every thread has exited (a killed process with threads shows
    "Z" for its main thread while the others still exit, and cannot be reaped yet)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().split(") ", 1)[1][0]
        return state == "Z" and len(os.listdir(f"/proc/{pid}/task")) <= 1
    except (FileNotFoundError, ProcessLookupError):
        return True


def _gone(pids: set[int]) -> bool:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if not any(_alive(p) or not _reaped_or_reapable(p) for p in pids):
            return True
        time.sleep(0.05)
    return False


def test_a_pool_in_the_scope_reuses_the_last_pools_workers_and_they_stop_with_it() -> None:
    with kept_workers():
        first = _pids(_run(LocalExecutor(2), _tasks([1, 2, 3, 4])))
        second = _pids(_run(LocalExecutor(2), _tasks([5, 6, 7, 8])))
        assert second <= first
        assert all(_alive(p) for p in first)  # idle, kept
        # another niceness has pools of its own
        niced = _pids(_run(LocalExecutor(1, nice=5), _tasks([9])))
        assert not niced & first
    assert _gone(first | niced)


def test_without_the_scope_each_pool_starts_its_own_workers_and_stops_them() -> None:
    first = _pids(_run(LocalExecutor(2), _tasks([1, 2])))
    second = _pids(_run(LocalExecutor(2), _tasks([3, 4])))
    assert not first & second
    assert _gone(first | second)


def test_a_worker_that_died_idle_is_replaced() -> None:
    with kept_workers():
        first = _pids(_run(LocalExecutor(1), _tasks([1])))
        (pid,) = first
        os.kill(pid, signal.SIGKILL)
        assert _gone({pid})
        second = _pids(_run(LocalExecutor(1), _tasks([2])))
        assert second and not second & first


def test_a_pool_whose_run_raised_keeps_no_worker() -> None:
    with kept_workers():
        seen: list[int] = []

        def on_done(t: RunTask, o: RunOutput) -> list[RunTask]:
            seen.append(int(o.worker.rsplit(":", 1)[1]))
            raise RuntimeError("the coordinator failed")

        with pytest.raises(RuntimeError):
            LocalExecutor(1).run(_tasks([1, 2]), on_done)
        assert _gone(set(seen))
        second = _pids(_run(LocalExecutor(1), _tasks([3])))
        assert not second & set(seen)


def _result(o: RunOutput) -> tuple[object, ...]:
    summary = {k: v for k, v in (o.summary or {}).items() if k != "wall_time_s"}
    assert isinstance(o.flows, pd.DataFrame)
    # as text: a NaN equals itself
    return (repr(sorted(o.metrics.items())), repr(sorted(summary.items())), o.flows.to_csv())


def test_kept_workers_compute_what_fresh_ones_compute() -> None:
    fresh = {o.key: _result(o) for o in _run(LocalExecutor(2), _tasks([1, 2, 3]))}
    with kept_workers():
        _run(LocalExecutor(2), _tasks([7]))
        kept = {o.key: _result(o) for o in _run(LocalExecutor(2), _tasks([1, 2, 3]))}
    assert kept == fresh
