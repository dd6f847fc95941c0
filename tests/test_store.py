"""The result store: round trip, one transaction per run, locked and corrupted stores."""

import os
import sqlite3
import subprocess

import pandas as pd
import pytest

import qoslab
import qoslab.report.results
from conftest import QOSLAB, SCENARIOS, one_line_error, run_window
from qoslab.runs.executors import SerialExecutor
from qoslab.runs.sweep import RunSpec, execute, plan, run_sweep
from qoslab.store import Store, StoreError

S1 = str(SCENARIOS / "fdd-red-s1.toml")
SHORT = ["duration=10s", "measurement.start=0s", "measurement.end=10s"]


def short_s1():
    return qoslab.load_scenario(S1).with_overrides(SHORT)


def test_round_trip_matches_a_direct_run(tmp_path):
    sc = short_s1()
    specs = [RunSpec(sc, s, {"case": "a"}, "t") for s in (1, 2)]
    with Store(tmp_path / "st") as st:
        rep = run_sweep(specs, st, SerialExecutor(), progress=False)
        assert rep.computed == 2 and not rep.failed
        assert st.verify() == []
    runs = qoslab.report.results.load(tmp_path / "st", sweep="t")
    assert sorted(runs["seed"]) == [1, 2] and set(runs["case"]) == {"a"}
    direct = qoslab.run(sc, seed=2)
    r2 = runs[runs["seed"] == 2].iloc[0]
    assert r2["scenario_sha256"] == sc.sha256() and r2["version"] == qoslab.__version__
    assert r2["fairness_index"] == pytest.approx(direct.fairness_index, rel=1e-12)
    assert r2["drops_bottleneck"] == direct.summary()["drops"]["bottleneck"]
    flows = qoslab.report.results.load(tmp_path / "st", "flows", sweep="t")
    f2 = flows[flows["seed"] == 2].sort_values("flow")
    assert list(f2["name"]) == list(direct.flows["name"])
    assert list(f2["throughput_bps"]) == list(direct.flows["throughput_bps"])
    q = qoslab.report.results.load(tmp_path / "st", "queues")
    assert set(q["queue"]) >= {"bottleneck:ab", "bottleneck:ba"}
    sq = qoslab.report.results.load(tmp_path / "st", "series_queue", sweep="t")
    d = direct.series_queue
    mine = sq[sq["seed"] == 2][d.columns].reset_index(drop=True)
    pd.testing.assert_frame_equal(mine, d.reset_index(drop=True), check_dtype=False)
    # every output records scenario, seed and version, the Parquet files too
    import pyarrow.parquet as pq

    meta = pq.read_schema(tmp_path / "st" / runs.iloc[0]["series_flow"]).metadata
    assert meta[b"qoslab.version"] == qoslab.__version__.encode() and b"qoslab.seed" in meta


def test_a_run_is_stored_in_one_transaction(tmp_path):
    sc = short_s1()
    out = execute(_task(sc, 1))
    assert out.ok
    bad_flows = out.flows.copy()
    bad_flows["not a column name"] = 1  # the store refuses it after the run row was inserted
    with Store(tmp_path / "st") as st:
        with pytest.raises(StoreError, match="cannot store column"):
            st.record(
                key=out.key,
                scenario_name=sc.name,
                scenario_source=sc.source,
                scenario_toml=sc.text,
                memberships=[("t", {})],
                status="ok",
                attempt=1,
                metrics=out.metrics,
                summary=out.summary,
                flows=bad_flows,
                queues=out.queues,
            )
        for table in ("runs", "metrics", "flows", "queues", "attempts", "sweep_runs", "scenarios"):
            assert st.query(f"SELECT COUNT(*) AS n FROM {table}")["n"].iloc[0] == 0, table


def _task(sc, seed):
    from qoslab.runs.sweep import RunTask

    return RunTask(RunSpec(sc, seed, {}, "t").key, sc.text, sc.source)


def test_same_run_in_two_sweeps_is_computed_once(tmp_path):
    sc = short_s1()
    a = plan([({"x": 1}, sc)], [1, 2], "first")
    b = plan([({"y": "z"}, sc)], [2, 3], "second")
    with Store(tmp_path / "st") as st:
        assert run_sweep(a, st, SerialExecutor(), progress=False).computed == 2
        rep = run_sweep(b, st, SerialExecutor(), progress=False)
        assert (rep.computed, rep.reused) == (1, 1)
    second = qoslab.report.results.load(tmp_path / "st", sweep="second")
    assert sorted(second["seed"]) == [2, 3] and set(second["y"]) == {"z"}
    att = qoslab.report.results.load(tmp_path / "st", "attempts")
    assert len(att) == 3


def test_extra_metric_function_recomputes_only_runs_without_it(tmp_path):
    sc = short_s1()
    with Store(tmp_path / "st") as st:
        run_sweep(plan([({}, sc)], [1], "t"), st, SerialExecutor(), progress=False)
        rep = run_sweep(
            plan([({}, sc)], [1, 2], "t", ["sweep_helpers:queue_peak"]), st, SerialExecutor(), progress=False
        )
        assert rep.computed == 2  # seed 1 lacked the metric
        rep = run_sweep(
            plan([({}, sc)], [1, 2], "t", ["sweep_helpers:queue_peak"]), st, SerialExecutor(), progress=False
        )
        assert rep.computed == 0
        rep = run_sweep(plan([({}, sc)], [1, 2], "t"), st, SerialExecutor(), progress=False)
        assert rep.computed == 0  # a superset of metrics serves a plain request
    runs = qoslab.report.results.load(tmp_path / "st")
    assert len(runs) == 2 and (runs["queue_peak_pkts"] > 0).all()


# -- locked and corrupted stores -------------------------------------------------------------------


def test_store_in_use_by_another_sweep_is_a_one_line_error(tmp_path):
    st = Store(tmp_path / "st")
    st.acquire()
    try:
        p = subprocess.run(
            [
                QOSLAB,
                "sweep",
                S1,
                "--store",
                str(tmp_path / "st"),
                *run_window("5s", "0s"),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        line = one_line_error(p)
        assert "in use by another qoslab process" in line and f"pid {os.getpid()}" in line
    finally:
        st.close()


def test_sqlite_lock_held_elsewhere_is_a_one_line_error(tmp_path):
    Store(tmp_path / "st").close()
    other = sqlite3.connect(tmp_path / "st" / "results.db", isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    try:
        env = {**os.environ, "QOSLAB_STORE_TIMEOUT": "0.3"}
        p = subprocess.run(
            [
                QOSLAB,
                "sweep",
                S1,
                "--store",
                str(tmp_path / "st"),
                "--jobs",
                "1",
                *run_window("5s", "0s"),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
        )
        line = one_line_error(p)
        assert "is locked" in line and "results.db" in line
    finally:
        other.execute("ROLLBACK")
        other.close()


@pytest.mark.parametrize("content", [b"this is not a database\n" * 200, b""])
def test_corrupted_store_is_a_one_line_error(tmp_path, content):
    d = tmp_path / "st"
    d.mkdir()
    (d / "results.db").write_bytes(content)
    if not content:
        # an empty file is a valid, empty SQLite database: that is not a store either for reading
        p = subprocess.run([QOSLAB, "results", "--store", str(d)], capture_output=True, text=True, timeout=60)
        assert "not a qoslab result store" in one_line_error(p)
        return
    for args in (["results", "--store", str(d)], ["sweep", S1, "--store", str(d)]):
        p = subprocess.run([QOSLAB, *args], capture_output=True, text=True, timeout=60)
        assert "not a readable qoslab result store" in one_line_error(p)


def test_foreign_sqlite_database_and_missing_store(tmp_path):
    db = tmp_path / "other.db"
    c = sqlite3.connect(db)
    c.execute("CREATE TABLE t (x)")
    c.commit()
    c.close()
    with pytest.raises(StoreError, match="not a qoslab result store"):
        Store(db)
    p = subprocess.run(
        [QOSLAB, "results", "--store", str(tmp_path / "nowhere")], capture_output=True, text=True, timeout=60
    )
    assert "no result store" in one_line_error(p)


def test_damaged_pages_are_reported_by_check(tmp_path):
    sc = short_s1()
    with Store(tmp_path / "st") as st:
        run_sweep(plan([({}, sc)], [1, 2, 3], "t"), st, SerialExecutor(), progress=False)
        st.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db = tmp_path / "st" / "results.db"
    data = bytearray(db.read_bytes())
    page = 4096
    assert len(data) > 4 * page
    data[2 * page : 4 * page] = os.urandom(2 * page)
    db.write_bytes(bytes(data))
    p = subprocess.run(
        [QOSLAB, "results", "--store", str(tmp_path / "st"), "--check"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr
    assert p.stderr.strip().splitlines()[-1].startswith("error: ")


def test_results_export_csv_and_parquet(tmp_path):
    sc = short_s1()
    with Store(tmp_path / "st") as st:
        run_sweep(plan([({"b": 1}, sc)], [1, 2], "t"), st, SerialExecutor(), progress=False)
    for suffix in ("csv", "parquet"):
        out = tmp_path / f"flows.{suffix}"
        p = subprocess.run(
            [QOSLAB, "results", "--store", str(tmp_path / "st"), "--table", "flows", "--export", str(out)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert p.returncode == 0, p.stderr
        df = pd.read_csv(out) if suffix == "csv" else pd.read_parquet(out)
        assert len(df) == 10 and {"scenario", "seed", "version", "throughput_bps", "b"} <= set(df.columns)
    p = subprocess.run(
        [QOSLAB, "results", "--store", str(tmp_path / "st"), "--export", str(tmp_path / "x.xlsx")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "expected a .csv or .parquet" in one_line_error(p)


# -- faults: a full disk, stray temporary files, older schemas ---------------------------------------


def test_full_disk_writing_a_time_series_is_one_line_and_loses_nothing(tmp_path, monkeypatch):
    """ENOSPC in the middle of a Parquet file (pyarrow raises OSError): one StoreError line, the
    temporary file removed, the runs committed before intact, and the same sweep resumes."""
    import errno

    import pyarrow.parquet as pq

    real = pq.write_table
    calls = {"n": 0}

    def full_after_three_runs(table, where, *a, **kw):
        calls["n"] += 1
        if calls["n"] > 6:  # two files per run
            with open(where, "wb") as f:
                f.write(b"PAR1 half a file")
            raise OSError(
                errno.ENOSPC, "Error writing bytes to file. Detail: [errno 28] No space left on device"
            )
        return real(table, where, *a, **kw)

    monkeypatch.setattr(pq, "write_table", full_after_three_runs)
    specs = plan([({}, short_s1())], [1, 2, 3, 4, 5], "t")
    with Store(tmp_path / "st") as st:
        with pytest.raises(StoreError) as e:
            run_sweep(specs, st, SerialExecutor(), progress=False)
        assert "\n" not in str(e.value) and "No space left on device" in str(e.value)
        assert "run the same command to resume" in str(e.value)
        assert st.temporaries() == [] and st.verify() == []
        assert st.count_runs() == 3
    monkeypatch.setattr(pq, "write_table", real)
    with Store(tmp_path / "st") as st:
        rep = run_sweep(specs, st, SerialExecutor(), progress=False)
        assert (rep.reused, rep.computed) == (3, 2) and st.verify() == []


def test_full_database_is_one_line_and_rolls_the_run_back(tmp_path):
    """SQLite's SQLITE_FULL (here a page limit, as a full disk gives): the run's transaction is
    rolled back, the message is one line, and the store stays consistent."""
    specs = plan([({}, short_s1())], [1, 2, 3, 4, 5, 6], "t")
    with Store(tmp_path / "st") as st:
        run_sweep(specs[:1], st, SerialExecutor(), progress=False)
        pages = st.conn.execute("PRAGMA page_count").fetchone()[0]
        st.conn.execute(f"PRAGMA max_page_count = {pages + 2}")
        with pytest.raises(StoreError, match="database or disk is full; the runs stored before are kept"):
            run_sweep(specs, st, SerialExecutor(), progress=False)
        assert not st.conn.in_transaction
        n = st.count_runs()
        assert 1 <= n < 6 and st.verify() == []
    with Store(tmp_path / "st") as st:
        assert run_sweep(specs, st, SerialExecutor(), progress=False).computed == 6 - n


def test_stray_temporary_files_are_removed_on_open_unless_a_writer_is_active(tmp_path):
    with Store(tmp_path / "st") as st:
        run_sweep(plan([({}, short_s1())], [1], "t"), st, SerialExecutor(), progress=False)
    stray = tmp_path / "st" / "series" / "ab" / ".x.flow.parquet.4242.tmp"
    stray.parent.mkdir(parents=True, exist_ok=True)
    writer = Store(tmp_path / "st")
    writer.acquire()  # another process's sweep, as far as the lock is concerned
    stray.write_bytes(b"PAR1 killed mid-write")
    try:
        with Store(tmp_path / "st", create=False) as st:
            assert st.removed_temporaries == [] and stray.exists()
            assert any("temporary file series/ab/.x.flow.parquet.4242.tmp" in p for p in st.verify())
    finally:
        writer.close()
    p = subprocess.run(
        [QOSLAB, "results", "--store", str(tmp_path / "st"), "--check"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 0, p.stderr
    assert (
        "removed 1 temporary file(s) left by a killed writer" in p.stderr and "1 runs, consistent" in p.stdout
    )
    assert not stray.exists()


def _schema1_store(path):
    """A store as schema 1 wrote it (no index of sweep membership by run), with one run."""
    with Store(path) as st:
        run_sweep(plan([({}, short_s1())], [1], "t"), st, SerialExecutor(), progress=False)
    c = sqlite3.connect(path / "results.db", isolation_level=None)
    downgrade_to_schema2(c)
    c.execute("DROP INDEX sweep_runs_run")
    c.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    c.close()


def downgrade_to_schema2(c):
    """Turns a store of this qoslab's schema (3) into what schema 2 wrote: sweep membership keyed
    by (sweep, run), no sweeps table, no checksum columns."""
    c.executescript(
        """
        CREATE TABLE sr2 (sweep TEXT NOT NULL, run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
                          params TEXT NOT NULL, PRIMARY KEY (sweep, run_id));
        INSERT OR REPLACE INTO sr2 SELECT sweep, run_id, params FROM sweep_runs;
        DROP TABLE sweep_runs;
        ALTER TABLE sr2 RENAME TO sweep_runs;
        CREATE INDEX sweep_runs_run ON sweep_runs (run_id);
        DROP TABLE sweeps;
        ALTER TABLE runs DROP COLUMN series_queue_sha256;
        ALTER TABLE runs DROP COLUMN series_flow_sha256;
        UPDATE meta SET value = '2' WHERE key = 'schema_version';
        """
    )


def test_older_schema_is_refused_with_the_command_then_migrated_with_a_backup(tmp_path):
    d = tmp_path / "st"
    _schema1_store(d)
    for args in (
        ["results", "--store", str(d)],
        ["sweep", S1, "--store", str(d), *sum((["--set", s] for s in SHORT), [])],
    ):
        p = subprocess.run([QOSLAB, *args], capture_output=True, text=True, timeout=60)
        assert f"migrate it with `qoslab results --store {d} --migrate`" in one_line_error(p)
    p = subprocess.run(
        [QOSLAB, "results", "--store", str(d), "--migrate"], capture_output=True, text=True, timeout=60
    )
    assert p.returncode == 0 and "from schema 1 to 3" in p.stdout, p
    backup = d / "results.db.schema1.bak"
    old = sqlite3.connect(backup)
    assert old.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("1",)
    assert old.execute("SELECT COUNT(*) FROM runs").fetchone() == (1,)
    old.close()
    with Store(d, create=False) as st:
        assert st.count_runs() == 1 and st.verify() == []
        idx = {r[1] for r in st.conn.execute("PRAGMA index_list(sweep_runs)")}
        assert "sweep_runs_run" in idx
    p = subprocess.run(
        [QOSLAB, "results", "--store", str(d), "--migrate"], capture_output=True, text=True, timeout=60
    )
    assert "already has schema 3" in p.stdout


def test_newer_schema_is_refused(tmp_path):
    with Store(tmp_path / "st"):
        pass
    c = sqlite3.connect(tmp_path / "st" / "results.db", isolation_level=None)
    c.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    c.close()
    with pytest.raises(StoreError, match="has schema 99.*newer qoslab: upgrade qoslab"):
        Store(tmp_path / "st")
