"""The store's ingest path for many workers: batched commits and series written by the workers.

A batch of runs is committed in one transaction: a coordinator killed in the middle of one
leaves exactly the batches before it, and the resumed sweep computes exactly the runs that are
missing, each once. A sweep whose workers write their own series files stores the same rows and
the same files (bytes and SHA-256) as one whose coordinator writes every file and commits every
run on its own (the path before batching). A file that is not what the worker wrote is refused.
"""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

import qoslab
import qoslab.report.results
from conftest import SCENARIOS, stores_agree
from qoslab.runs.executors import LocalExecutor, SerialExecutor
from qoslab.runs.sweep import plan, run_sweep
from qoslab.runs.tasks import RunTask, execute
from qoslab.store import Store, StoreError

S1 = SCENARIOS / "fdd-red-s1.toml"
SHORT = ["duration=10s", "measurement.start=0s", "measurement.end=10s"]
RUNS, BATCH, KILL_AT = 40, 10, 25  # killed while recording the 5th run of the 3rd batch

#: A coordinator that stops, without committing, inside the transaction of its third batch and
#: waits there to be killed (the marker file says it got there).
KILLED_SWEEP = f"""
import sys, time
from pathlib import Path
import qoslab
from qoslab.runs.executors import SerialExecutor
from qoslab.store import Store
from qoslab.runs.sweep import plan, run_sweep

store, marker = Path(sys.argv[1]), Path(sys.argv[2])
calls = 0
record_one = Store._record_one

def stalling(self, rec):
    global calls
    calls += 1
    if calls == {KILL_AT}:
        marker.write_text("in the third batch")
        time.sleep(120)
    return record_one(self, rec)

Store._record_one = stalling
sc = qoslab.load_scenario({str(S1)!r}).with_overrides({SHORT!r})
specs = plan([({{}}, sc)], list(range(1, {RUNS} + 1)), "killed")
with Store(store) as st:
    run_sweep(specs, st, SerialExecutor(), progress=False, batch_runs={BATCH}, batch_seconds=1e9)
"""


def _specs(name: str = "killed", seeds: int = RUNS):
    sc = qoslab.load_scenario(S1).with_overrides(SHORT)
    return plan([({}, sc)], list(range(1, seeds + 1)), name)


class Recording(SerialExecutor):
    """The serial executor, remembering which runs it was asked to compute."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, int]] = []

    def run(self, tasks, on_done):  # type: ignore[no-untyped-def]
        tasks = list(tasks)
        self.asked += [(t.key.scenario_sha256, t.key.seed) for t in tasks]
        super().run(tasks, on_done)


def test_a_coordinator_killed_inside_a_batch_keeps_whole_batches_and_resumes_each_run_once(tmp_path):
    store, marker = tmp_path / "st", tmp_path / "marker"
    script = tmp_path / "sweep.py"
    script.write_text(KILLED_SWEEP)
    p = subprocess.Popen([sys.executable, str(script), str(store), str(marker)])
    try:
        deadline = time.monotonic() + 120
        while not marker.exists():
            assert p.poll() is None, "the sweep ended before its third batch"
            assert time.monotonic() < deadline, "the sweep did not reach its third batch"
            time.sleep(0.05)
        p.send_signal(signal.SIGKILL)  # inside the third batch's transaction, 4 runs written
        p.wait(timeout=10)
    finally:
        if p.poll() is None:
            p.kill()
    with sqlite3.connect(store / "results.db") as c:
        committed = {(h, s) for h, s in c.execute("SELECT scenario_sha256, seed FROM runs")}
        attempts = c.execute("SELECT COUNT(*) FROM attempts").fetchone()[0]
    # the two whole batches, none of the third: a run is never committed alone
    assert len(committed) == 2 * BATCH and attempts == 2 * BATCH
    with Store(store) as st:
        assert st.verify() == []
        ex = Recording()
        rep = run_sweep(_specs(), st, ex, progress=False, batch_runs=BATCH)
        assert (rep.reused, rep.computed, rep.failed) == (2 * BATCH, RUNS - 2 * BATCH, [])
        assert st.verify() == []
    # each missing run computed once, no committed run computed again
    assert len(ex.asked) == len(set(ex.asked)) == RUNS - 2 * BATCH
    assert committed.isdisjoint(ex.asked)
    runs = qoslab.report.results.load(store)
    assert len(runs) == RUNS and runs[["scenario_sha256", "seed"]].drop_duplicates().shape[0] == RUNS
    att = qoslab.report.results.load(store, "attempts")
    assert len(att) == RUNS and (att.groupby(["scenario_sha256", "seed"]).size() == 1).all()


def test_workers_writing_their_series_store_what_the_coordinator_alone_stores(tmp_path, monkeypatch):
    specs = _specs("same", seeds=6)
    with Store(tmp_path / "old") as st:
        rep = run_sweep(
            specs, st, LocalExecutor(2), progress=False, batch_runs=1, batch_seconds=0, worker_series=False
        )
        assert rep.ok and rep.computed == 6

    def refuse(*a: object, **k: object) -> str:
        raise AssertionError("the coordinator wrote a series file")

    monkeypatch.setattr(Store, "write_series", refuse)  # the workers (other processes) write them
    with Store(tmp_path / "new") as st:
        rep = run_sweep(specs, st, LocalExecutor(2), progress=False)
        assert rep.ok and rep.computed == 6
        assert st.verify() == []
    stores_agree(tmp_path / "new", tmp_path / "old")
    cols = ["scenario_sha256", "seed", "series_queue", "series_flow"]
    cols += ["series_queue_sha256", "series_flow_sha256"]
    old = qoslab.report.results.load(tmp_path / "old")[cols].sort_values("seed").reset_index(drop=True)
    new = qoslab.report.results.load(tmp_path / "new")[cols].sort_values("seed").reset_index(drop=True)
    assert old.equals(new) and old["series_flow_sha256"].notna().all()
    for rel in [*old["series_queue"], *old["series_flow"]]:
        assert (tmp_path / "new" / rel).read_bytes() == (tmp_path / "old" / rel).read_bytes()
    for table, cols in (("metrics", "t.name, t.value"), ("sweep_runs", "t.sweep, t.params")):
        a, b = (
            Store(tmp_path / d)
            .query(f"SELECT r.scenario_sha256, r.seed, {cols} FROM {table} t JOIN runs r ON r.id = t.run_id")
            .sort_values(["seed", cols.split(", ")[0][2:]])
            .reset_index(drop=True)
            for d in ("old", "new")
        )
        assert len(a) > 0 and a.equals(b), table


def test_a_series_file_that_is_not_what_the_worker_wrote_is_refused(tmp_path):
    spec = _specs("one", seeds=1)[0]
    with Store(tmp_path / "st") as st:
        out = execute(RunTask(spec.key, spec.scenario.text, spec.scenario.source, store_root=str(st.root)))
        assert out.ok and out.series_files is not None and out.series_queue is None
        assert st.adopt_series(spec.key, out.series_files, out.worker) == {
            k: rel for k, (rel, _) in out.series_files.items()
        }
        rel = out.series_files["flow"][0]
        data = bytearray((st.root / rel).read_bytes())
        data[len(data) // 2] ^= 1
        (st.root / rel).write_bytes(bytes(data))
        with pytest.raises(StoreError, match="differs from what worker"):
            st.adopt_series(spec.key, out.series_files, out.worker)
        (st.root / rel).unlink()
        with pytest.raises(StoreError, match="cannot be read here"):
            st.adopt_series(spec.key, out.series_files, out.worker)
    # a worker that does not see the store (no database there) sends the series back
    out = execute(RunTask(spec.key, spec.scenario.text, spec.scenario.source, store_root=str(tmp_path / "x")))
    assert out.ok and out.series_files is None and out.series_queue is not None
    assert not Path(tmp_path / "x").exists()
