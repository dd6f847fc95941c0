"""Issue 56's store findings as tests: stored runs are never relabelled (a sweep name keeps its
grid; membership, not a rewritten ``params``), a schema-2 store migrates forward keeping every
row, and every Parquet file's SHA-256 is recorded at commit: ``results --check`` reports a
changed byte, reading gives one line, and a resumed sweep recomputes the damaged run."""

from __future__ import annotations

import sqlite3
import subprocess

import pandas as pd
import pytest

import qoslab.report.results
from conftest import QOSLAB, SCENARIOS, one_line_error
from qoslab.runs.executors import SerialExecutor
from qoslab.runs.sweep import override_points, plan, run_sweep
from qoslab.store import Store, StoreError
from test_store import downgrade_to_schema2

S1 = str(SCENARIOS / "fdd-red-s1.toml")
SHORT = ["duration=3s", "measurement.start=1s", "measurement.end=3s"]
MAX_P = "link.bottleneck.queue_ab.max_p=0.01,0.05"
BANDWIDTH = "link.bottleneck.bandwidth=1Mbps,2Mbps"


def sweep(store, name, grid, seeds, *extra):
    args = [QOSLAB, "sweep", S1, "--store", str(store), "--name", name, "--executor", "serial", "--quiet"]
    args += ["--grid", grid, "--seeds", str(seeds), *sum((["--set", s] for s in SHORT), []), *extra]
    return subprocess.run(args, capture_output=True, text=True, timeout=600)


def by_point(store, name):
    runs = qoslab.report.results.load(store, sweep=name)
    return runs.sort_values(["params", "seed"]).reset_index(drop=True)


def test_a_sweep_name_reused_with_another_grid_is_refused_and_nothing_stored_changes(tmp_path):
    st = tmp_path / "st"
    assert sweep(st, "max_p", MAX_P, 3).returncode == 0
    before = by_point(st, "max_p")
    assert len(before) == 6 and before["link.bottleneck.queue_ab.max_p"].notna().all()
    runs_before = qoslab.report.results.load(st)
    # the reproduction: the same name, another grid (its 1Mbps point is the 0.01 runs)
    p = sweep(st, "max_p", BANDWIDTH, 2)
    msg = one_line_error(p)
    assert p.returncode == 1 and "sweep name 'max_p'" in msg, p
    assert "--grid link.bottleneck.queue_ab.max_p=0.01,0.05" in msg and f"--grid {BANDWIDTH}" in msg, msg
    assert "--replace" in msg
    pd.testing.assert_frame_equal(by_point(st, "max_p"), before)
    pd.testing.assert_frame_equal(qoslab.report.results.load(st), runs_before)
    # under another name the shared runs belong to both sweeps, each with its own parameters
    assert sweep(st, "bw", BANDWIDTH, 2).returncode == 0
    pd.testing.assert_frame_equal(by_point(st, "max_p"), before)
    bw = by_point(st, "bw")
    assert set(bw["params"]) == {
        '{"link.bottleneck.bandwidth": "1Mbps"}',
        '{"link.bottleneck.bandwidth": "2Mbps"}',
    }
    shared = set(bw["run_id"]) & set(before["run_id"])
    assert len(shared) == 2  # seeds 1 and 2 of max_p = 0.01 at 1 Mbps
    runs_now = qoslab.report.results.load(st).set_index("run_id")
    old = runs_before.set_index("run_id")
    # their params, sweep and metrics as they were
    pd.testing.assert_frame_equal(runs_now.loc[old.index, old.columns], old)
    # --replace starts the name afresh: the runs stay, only the membership of the name goes
    assert sweep(st, "max_p", BANDWIDTH, 2, "--replace").returncode == 0
    assert set(by_point(st, "max_p")["params"]) == set(bw["params"])
    assert set(old.index) <= set(qoslab.report.results.load(st)["run_id"])


def test_a_resumed_sweep_with_its_own_grid_is_not_refused(tmp_path):
    st = tmp_path / "st"
    assert sweep(st, "s", MAX_P, 1).returncode == 0
    p = sweep(st, "s", "link.bottleneck.queue_ab.max_p=0.05,0.01", 2)  # same grid, more seeds
    assert p.returncode == 0 and "2 computed, 2 reused" in p.stdout, p


def test_two_grid_points_that_make_one_run_both_keep_it(tmp_path):
    base = qoslab.load_scenario(S1).with_overrides(SHORT)
    axes = {"link.bottleneck.bandwidth": ["1Mbps", "1000kbps"]}
    specs = plan(override_points(base, axes), [1], "same")
    assert specs[0].key == specs[1].key
    with Store(tmp_path / "st") as st:
        rep = run_sweep(specs, st, SerialExecutor(), progress=False, grid=axes)
        assert rep.computed == 1
    runs = qoslab.report.results.load(tmp_path / "st", sweep="same")
    assert sorted(runs["link.bottleneck.bandwidth_bps"]) == [1e6, 1e6] and len(set(runs["run_id"])) == 1
    assert sorted(runs["params"]) == sorted(
        ['{"link.bottleneck.bandwidth": "1Mbps"}', '{"link.bottleneck.bandwidth": "1000kbps"}']
    )


def test_a_schema2_store_migrates_keeping_every_row_and_its_sweeps_grids(tmp_path):
    st = tmp_path / "st"
    assert sweep(st, "max_p", MAX_P, 2).returncode == 0
    c = sqlite3.connect(st / "results.db", isolation_level=None)
    downgrade_to_schema2(c)
    tables = ("runs", "metrics", "flows", "queues", "attempts", "sweep_runs", "scenarios")
    counts = {t: c.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in tables}
    c.close()
    p = subprocess.run([QOSLAB, "results", "--store", str(st), "--migrate"], capture_output=True, text=True)
    assert "from schema 2 to 3" in p.stdout, p
    with Store(st, create=False) as s:
        assert {t: s.conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in tables} == counts
        assert s.unchecksummed() == 4 and s.verify() == []
    p = subprocess.run([QOSLAB, "results", "--store", str(st), "--check"], capture_output=True, text=True)
    assert p.returncode == 0 and "4 run(s) stored before checksums" in p.stderr, p
    # the grid its memberships imply: the same grid resumes, another is refused
    assert sweep(st, "max_p", MAX_P, 2).returncode == 0
    p = sweep(st, "max_p", BANDWIDTH, 2)
    assert p.returncode == 1 and "max_p=0.01,0.05" in one_line_error(p), p


# -- checksums -----------------------------------------------------------------------------------


def _one_run(tmp_path):
    """A store holding one short run of S1: (its path, the sweep's specs, its runs table)."""
    st = tmp_path / "st"
    specs = plan([({}, qoslab.load_scenario(S1).with_overrides(SHORT))], [1], "one")
    with Store(st) as s:
        run_sweep(specs, s, SerialExecutor(), progress=False)
    return st, specs, qoslab.report.results.load(st)


def _every_changed_byte_is_found(tmp_path, cli_positions) -> None:
    """A byte changed at each of 12 positions (header, body, footer) is found when the table is
    read; ``cli_positions`` picks (from the sorted 12) those where ``results --check`` and
    ``results --table`` are also run (a process each: 2-3 s on a loaded machine)."""
    st, specs, runs = _one_run(tmp_path)
    path = st / runs["series_flow"].iloc[0]
    good = path.read_bytes()
    n = len(good)
    positions = sorted({0, 1, 3, 4, 8, n // 8, n // 4, n // 2, 3 * n // 4, n - 9, n - 5, n - 1})
    assert len(positions) == 12
    for i, pos in enumerate(positions):
        bad = bytearray(good)
        bad[pos] ^= 0xFF
        path.write_bytes(bytes(bad))
        with pytest.raises(StoreError, match="fails its checksum") as e:
            qoslab.report.results.load(st, "series_flow")
        assert "\n" not in str(e.value)
        if i in cli_positions:
            p = subprocess.run(
                [QOSLAB, "results", "--store", str(st), "--check"], capture_output=True, text=True
            )
            assert p.returncode == 1 and "fails its checksum" in p.stderr and path.name in p.stderr, (pos, p)
            p = subprocess.run(
                [QOSLAB, "results", "--store", str(st), "--table", "series_flow"],
                capture_output=True,
                text=True,
            )
            assert p.returncode == 1 and "fails its checksum" in one_line_error(p), (pos, p)
        path.write_bytes(good)
    # a resumed sweep recomputes the damaged run, after which the store is whole
    path.write_bytes(good[: n // 2])
    with Store(st) as s:
        assert s.damaged([specs[0].key]) == {specs[0].key}
        rep = run_sweep(specs, s, SerialExecutor(), progress=False)
        assert rep.computed == 1 and rep.reused == 0
        assert s.verify() == [] and s.damaged([specs[0].key]) == set()
    assert len(qoslab.report.results.load(st, "series_flow")) > 0
    with Store(st) as s:
        assert run_sweep(specs, s, SerialExecutor(), progress=False).reused == 1


def test_every_changed_byte_of_a_series_file_is_found_read_as_one_line_and_recomputed(tmp_path):
    """Every position through the reader; the two commands at the first, middle and last byte
    (header, body, footer): the full set of positions through the commands is the slow twin."""
    _every_changed_byte_is_found(tmp_path, cli_positions={0, 6, 11})


@pytest.mark.slow
def test_every_changed_byte_of_a_series_file_is_found_by_the_commands(tmp_path):
    _every_changed_byte_is_found(tmp_path, cli_positions=set(range(12)))


def test_a_file_without_a_checksum_is_still_read_as_parquet(tmp_path):
    st = tmp_path / "st"
    with Store(st) as s:
        run_sweep(
            plan([({}, qoslab.load_scenario(S1).with_overrides(SHORT))], [1], "one"),
            s,
            SerialExecutor(),
            progress=False,
        )
        s.conn.execute("UPDATE runs SET series_flow_sha256 = NULL")
        rel = s.conn.execute("SELECT series_flow FROM runs").fetchone()[0]
    (st / rel).write_bytes(b"PAR1 not parquet PAR1")
    with Store(st, create=False) as s:
        (problem,) = s.verify()
        assert "is not a readable Parquet file" in problem
    with pytest.raises(StoreError, match="not a readable Parquet file"):
        qoslab.report.results.load(st, "series_flow")


def test_a_file_verified_once_is_checked_again_after_any_change(tmp_path):
    """A series file found whole is not hashed again while it is unchanged (the looks of a
    sequential reproduction re-check every earlier look's runs), but a changed byte is found
    even when the size and the modification time are put back (the change time moves)."""
    import os

    from qoslab.store import checks

    st, _, runs = _one_run(tmp_path)
    rel, sha = runs["series_flow"].iloc[0], runs["series_flow_sha256"].iloc[0]
    path = st / rel
    assert checks.file_problem(st, rel, sha) is None
    hashed = []
    real = checks.sha256_of
    checks.sha256_of = lambda p: hashed.append(p) or real(p)  # type: ignore[assignment]
    try:
        assert checks.file_problem(st, rel, sha) is None and hashed == []  # unchanged: not hashed
        before = path.stat()
        bad = bytearray(path.read_bytes())
        bad[len(bad) // 2] ^= 0xFF
        path.write_bytes(bytes(bad))
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        assert path.stat().st_size == before.st_size and path.stat().st_mtime_ns == before.st_mtime_ns
        assert "fails its checksum" in (checks.file_problem(st, rel, sha) or "") and hashed == [path]
    finally:
        checks.sha256_of = real  # type: ignore[assignment]
