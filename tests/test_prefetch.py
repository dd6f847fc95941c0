"""Runs computed ahead (qoslab.runs.prefetch): a stopped pool starts no more runs and keeps what
it computed; a sequential reproduction that computes each next look's runs while it analyses the
last one gives the same verdicts as one that does not, and does compute ahead; the workers'
warm-ups equal those read back from the series files."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pandas as pd
import pytest

import qoslab
from conftest import SCENARIOS, quick_runs
from qoslab.runs.executors import LocalExecutor
from qoslab.runs.local_pool import DEPTH
from qoslab.runs.prefetch import Prefetch
from qoslab.runs.sweep import plan, run_sweep
from qoslab.runs.tasks import RunOutput, RunTask
from qoslab.store import Store

S1 = str(SCENARIOS / "fdd-red-s1.toml")


def short(seconds: int) -> qoslab.Scenario:
    return qoslab.load_scenario(S1).with_overrides(
        [f"duration={seconds}s", "measurement.start=0s", f"measurement.end={seconds}s"]
    )


def test_a_stopped_pool_starts_no_run_and_finishes_those_in_flight() -> None:
    specs = plan([({"d": 2}, short(2))], list(range(1, 13)), "stop")
    stop = threading.Event()
    seen: list[RunOutput] = []

    def on_done(task: RunTask, out: RunOutput) -> list[RunTask]:
        seen.append(out)
        stop.set()  # after the first result no task is sent: those the workers hold finish
        return []

    tasks = [RunTask(s.key, s.scenario.text, s.scenario.source, ()) for s in specs]
    LocalExecutor(2, stop=stop).run(tasks, on_done)
    assert 1 <= len(seen) <= 2 * DEPTH and all(o.ok for o in seen)
    # without the event the same pool computes all twelve
    seen.clear()
    LocalExecutor(2).run(tasks, lambda t, o: seen.append(o) or [])
    assert len(seen) == 12


def test_a_prefetch_keeps_what_it_computed_and_reports_it(tmp_path: Path) -> None:
    specs = plan([({"d": 2}, short(2))], [1, 2, 3, 4], "ahead")
    with Store(tmp_path / "s") as st:
        run_sweep(specs[:1], st, LocalExecutor(1), progress=False)  # seed 1 is stored already
    ahead = Prefetch(specs, tmp_path / "s", 2).start()
    ahead._thread.join()  # type: ignore[union-attr]  # let it run to the end, then stop
    report = ahead.stop()
    assert ahead.error is None and report is not None and report.reused == 1
    assert ahead.computed == {s.key for s in specs[1:]}
    with Store(tmp_path / "s") as st:
        assert {k for k, (status, _) in st.stored([s.key for s in specs]).items() if status == "ok"} == {
            s.key for s in specs
        }


def test_a_prefetch_stopped_at_once_leaves_a_consistent_store(tmp_path: Path) -> None:
    specs = plan([({"d": 4}, short(4))], list(range(1, 21)), "ahead")
    ahead = Prefetch(specs, tmp_path / "s", 2).start()
    ahead.stop()
    assert ahead.error is None and len(ahead.computed) <= 2 * DEPTH
    with Store(tmp_path / "s") as st:
        ok = {k for k, (status, _) in st.stored([s.key for s in specs]).items() if status == "ok"}
        assert ok == ahead.computed and st.verify() == []


def _records(out: Path) -> list[dict[str, object]]:
    return json.loads((out / "fdd-red" / "verdicts.json").read_text())["verdicts"]  # type: ignore[no-any-return]


def test_computing_ahead_changes_no_verdict_and_saves_the_next_looks_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from qoslab.reproduction import sequential_run
    from qoslab.studies.fdd_red import study as fdd_red

    # Figs. 10-11 on two points each: computing ahead, not the figures, is under test
    monkeypatch.setattr(fdd_red, "BUFFERS_QUICK", (50, 200))
    monkeypatch.setattr(fdd_red, "FLOWS_QUICK", (5, 20))

    got = {}
    handed_over: dict[bool, list[int]] = {True: [], False: []}
    for ahead in (True, False):
        kw = {"store": tmp_path / f"s{ahead}", "out": tmp_path / f"o{ahead}", "progress": False}
        _, summary = sequential_run.reproduce_sequential(
            "fdd-red",
            max_seeds=6,
            quick=True,
            compute_ahead=ahead,
            when_decided=lambda a=ahead: handed_over[a].append(1),
            **kw,
        )
        got[ahead] = (summary, _records(tmp_path / f"o{ahead}"))
    (on, with_), (off, without) = got[True], got[False]
    assert with_ == without
    # `reproduce all` hands over to the next experiment once, when the verdicts are decided
    # (qoslab.reproduction.handover; the hand-over's own tests: tests/test_handover.py)
    assert handed_over == {True: [1], False: [1]}
    assert off["runs_computed_ahead"] == 0 and off["runs_computed_now"] == off["runs"]
    # the look at 4 seeds was analysed while the look at 6's runs were computed
    assert on["looks"] == off["looks"] == [4, 6] and on["runs_computed_ahead"] > 0
    used = on["runs_computed_ahead"] - on["runs_computed_ahead_unused"]
    assert on["runs_computed_now"] + used == on["runs"] == off["runs"]


def test_the_workers_warmups_are_those_of_the_series_files(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The warm-up report reads what each worker computed from its run's series in memory; the
    same computed here from the series files the store keeps, with the bottleneck found from the
    run's queue table (its measurement link's busier direction), gives the same table bit for bit.
    Every run of every sweep of fdd-red (quick, two seeds; Figs. 10-11 on two points each, their
    runs those of tests/test_fdd_red.py's quick test, computed once for both: conftest.quick_runs)."""
    from qoslab.report.results import load
    from qoslab.reproduction import warmup_window as ww
    from qoslab.reproduction.planning import planned
    from qoslab.studies.fdd_red import study as fdd_red
    from qoslab.warmup import stored_form

    monkeypatch.setattr(fdd_red, "BUFFERS_QUICK", (50, 200))
    monkeypatch.setattr(fdd_red, "FLOWS_QUICK", (5, 20))
    exp = qoslab.reproduction.get("fdd-red")
    qoslab.reproduction.reproduce(
        exp,
        quick=True,
        seeds=2,
        store=quick_runs(tmp_path_factory, "fdd-red", 2, tmp_path / "s"),
        out=tmp_path / "o",
        progress=False,
        defer_figures=True,  # drawn, never saved: the warm-ups are under test
    )
    specs = planned(exp, quick=True, seeds=2)[2]
    link = {s.key.scenario_sha256: s.scenario.outline["measurement"]["bottleneck"] for s in specs}
    with Store(tmp_path / "s") as st:
        ww._SEEN.clear()
        stored = ww.stored_warmups(st, specs)
        ww._SEEN.clear()
        runs = load(st, "runs", keys=[s.key for s in specs], expand_params=False).set_index("run_id")
        queues = load(st, "queues", keys=[s.key for s in specs], expand_params=False)
        rows = []
        for rid, g in queues.groupby("run_id", sort=False):
            r = runs.loc[rid]
            mine = g[g["link_name"] == link[r["scenario_sha256"]]]
            bottleneck = str(
                mine.sort_values("departed_bytes", ascending=False, kind="stable")["queue"].iloc[0]
            )
            q = pd.read_parquet(st.root / r["series_queue"], columns=["time_s", "queue", "queue_packets"])
            f = pd.read_parquet(st.root / r["series_flow"], columns=["time_s", "throughput_bps"])
            w = stored_form(q, f, bottleneck)
            rows.append(
                {
                    "run_id": int(rid),
                    "samples": w["samples"],
                    **{k: w[k] for k in w if k.startswith("warmup")},
                }
            )
    read = (
        pd.DataFrame(rows)
        .fillna(float("nan"))
        .astype({"warmup_queue_s": float, "warmup_throughput_s": float, "warmup_s": float})
    )
    got = stored.set_index("run_id").loc[
        read["run_id"], ["samples", "warmup_queue_s", "warmup_throughput_s", "warmup_s"]
    ]
    assert len(read) == len(stored) > 100
    pd.testing.assert_frame_equal(got.reset_index(drop=True), read.drop(columns="run_id"), check_exact=True)
