"""conftest.shared_store: tests whose reproductions share their runs compute them once a run."""

from __future__ import annotations

from pathlib import Path

import pytest

import qoslab
from conftest import SCENARIOS, shared_store, stores_agree
from qoslab.runs.executors import LocalExecutor
from qoslab.runs.sweep import plan, run_sweep
from qoslab.store import Store


def test_a_shared_store_is_built_once_and_its_copies_hold_every_run(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The store is built once for every test asking for its key (a second asks for a copy and
    builds nothing), and a copy serves the same runs without computing one, with the same
    results as the runs computed afresh."""
    sc = qoslab.load_scenario(SCENARIOS / "fdd-red-s1.toml").with_overrides(
        ["duration=2s", "measurement.start=0s", "measurement.end=2s"]
    )
    specs = plan([({"d": 2}, sc)], [1, 2, 3], "shared")
    builds: list[Path] = []

    def build(store: Path) -> None:
        builds.append(store)
        with Store(store) as st:
            run_sweep(specs, st, LocalExecutor(1), progress=False)

    key = f"test-{tmp_path.name}"
    one = shared_store(tmp_path_factory, key, tmp_path / "one", build)
    two = shared_store(tmp_path_factory, key, tmp_path / "two", build)
    assert len(builds) == 1
    with Store(two) as st:
        rep = run_sweep(specs, st, LocalExecutor(1), progress=False)
    assert rep.computed == 0 and rep.reused == len(specs)
    with Store(tmp_path / "fresh") as st:
        assert run_sweep(specs, st, LocalExecutor(1), progress=False).computed == len(specs)
    stores_agree(one, tmp_path / "fresh", tables=("runs", "flows", "queues"))
