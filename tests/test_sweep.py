"""Sweeps: grid syntax, failing runs, dying workers, retries and resuming after a kill."""

import json
import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

import qoslab
import qoslab.report.results
from conftest import QOSLAB, ROOT, SCENARIOS
from qoslab.runs.executors import LocalExecutor
from qoslab.runs.sweep import COMPUTE_LOG_ENV, GridError, override_points, parse_grid, plan, run_sweep
from qoslab.store import Store

S1 = str(SCENARIOS / "fdd-red-s1.toml")
SHORT = ["duration=10s", "measurement.start=0s", "measurement.end=10s"]
SHORT_SET = [x for kv in SHORT for x in ("--set", kv)]


def env_with_helpers(**extra: str) -> dict[str, str]:
    path = os.pathsep.join(p for p in (str(ROOT / "tests"), os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, "PYTHONPATH": path, **extra}


def read_log(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


# -- grid syntax and bad input ---------------------------------------------------------------------


def test_parse_grid():
    assert parse_grid("link.bottleneck.delay=5ms,10ms") == ("link.bottleneck.delay", ["5ms", "10ms"])
    assert parse_grid("flow[0].count=5") == ("flow[0].count", ["5"])
    assert parse_grid('x=[1, 2],[3],"a,b"') == ("x", ["[1, 2]", "[3]", '"a,b"'])
    for bad, msg in (
        ("nokey", "expected KEY=V1,V2"),
        ("=1,2", "key before"),
        ("k=1,,2", "empty value"),
        ("k=", "empty value"),
        ("k=[1,2", "unbalanced"),
        ("k=1,1", "repeated"),
    ):
        with pytest.raises(GridError, match=msg):
            parse_grid(bad)


def test_override_points_cover_the_grid_and_reject_unknown_keys():
    base = qoslab.load_scenario(S1)
    pts = override_points(
        base, {"link.bottleneck.queue_ab.limit": ["50pkts", "80pkts"], "tcp.variant": ["reno", "newreno"]}
    )
    assert len(pts) == 4
    limits = {
        p["link.bottleneck.queue_ab.limit"]: sc.resolved["links"][5]["queue_ab"]["limit_pkts"]
        for p, sc in pts
    }
    assert limits == {"50pkts": 50, "80pkts": 80}
    assert len({sc.sha256() for _, sc in pts}) == 4
    with pytest.raises(qoslab.ScenarioError, match="unknown field `nope`"):
        override_points(base, {"link.bottleneck.nope": [1]})


@pytest.mark.parametrize(
    "args, expected",
    [
        (["--grid", "link.bottleneck.delay"], "expected KEY=V1,V2"),
        (["--grid", "link.bottleneck.delay=1ms,,2ms"], "empty value"),
        (["--grid", "link.bottleneck.dealy=1ms,2ms"], "unknown field `dealy`"),
        (["--grid", "link.nolink.delay=1ms"], "no link named 'nolink'"),
        (["--grid", "duration=5s", "--grid", "duration=6s"], "given twice"),
        (["--seeds", "0"], "at least 1"),
        (["--show", "nonsense"], "unknown metric nonsense"),
        (["--executor", "nope"], "unknown executor 'nope'"),
        (["--metric", "nomodule_xyz:f"], "metric function 'nomodule_xyz:f'"),
    ],
)
def test_bad_sweep_input_is_one_line(tmp_path, args, expected):
    p = subprocess.run(
        [QOSLAB, "sweep", S1, "--store", str(tmp_path / "st"), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 1, (p.stdout, p.stderr)
    lines = [x for x in p.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and expected in lines[0], p.stderr


def test_bad_reproduce_input_is_one_line():
    for args, expected in (
        (["nope"], "unknown experiment 'nope' (known: "),
        ([], "name an experiment"),
    ):
        p = subprocess.run([QOSLAB, "reproduce", *args], capture_output=True, text=True, timeout=60)
        assert p.returncode == 1
        lines = p.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and expected in lines[0], p.stderr
        if args:
            assert "red-baseline" in lines[0]


# -- failures --------------------------------------------------------------------------------------


def test_failing_and_dying_runs_are_recorded_retried_and_do_not_stop_the_sweep(tmp_path, monkeypatch):
    log = tmp_path / "compute.log"
    monkeypatch.setenv(COMPUTE_LOG_ENV, str(log))
    base = qoslab.load_scenario(S1).with_overrides(SHORT)
    specs = plan([({"case": "raise"}, base)], [1, 2, 3], "raise", ["sweep_helpers:fail_on_seed_2"])
    specs += plan(
        [({"case": "die"}, base.with_overrides(["link.bottleneck.delay=6ms"]))],
        [1, 2, 3],
        "die",
        ["sweep_helpers:die_on_seed_3"],
    )
    with Store(tmp_path / "st") as st:
        rep = run_sweep(specs, st, LocalExecutor(2), progress=False)
    assert rep.total == 6 and rep.computed == 6
    failed = {(s.sweep, s.seed): e for s, e in rep.failed}
    assert set(failed) == {("raise", 2), ("die", 3)}
    assert failed[("raise", 2)] == "ValueError: boom on seed 2"
    assert "died (exit code 7)" in failed[("die", 3)]
    runs = qoslab.report.results.load(tmp_path / "st")
    by = {(r.sweep, r.seed): r for r in runs.itertuples()}
    assert by[("raise", 2)].status == "failed" and by[("raise", 2)].attempts == 2
    assert by[("die", 3)].status == "failed" and by[("die", 3)].attempts == 2
    assert "boom on seed 2" in by[("raise", 2)].error
    ok = [k for k in by if k not in failed]
    assert all(by[k].status == "ok" and by[k].attempts == 1 for k in ok) and len(ok) == 4
    tb = Store(tmp_path / "st", create=False).query("SELECT traceback FROM runs WHERE status = 'failed'")
    assert any("fail_on_seed_2" in t for t in tb["traceback"] if isinstance(t, str))
    # the raising run was computed twice (attempt 1 and the retry); the dying worker never logged
    comp = read_log(log)
    assert sum(1 for c in comp if c["seed"] == 2 and not c["ok"]) == 2
    assert {c["attempt"] for c in comp if c["seed"] == 2 and not c["ok"]} == {1, 2}


def test_a_transient_failure_succeeds_on_retry(tmp_path, monkeypatch):
    monkeypatch.setenv("QOSLAB_TEST_FLAKY_DIR", str(tmp_path))
    base = qoslab.load_scenario(S1).with_overrides(SHORT)
    with Store(tmp_path / "st") as st:
        rep = run_sweep(
            plan([({}, base)], [1, 2], "f", ["sweep_helpers:flaky_once"]),
            st,
            LocalExecutor(2),
            progress=False,
        )
    assert rep.failed == [] and rep.attempts == 4
    runs = qoslab.report.results.load(tmp_path / "st")
    assert list(runs["status"]) == ["ok", "ok"] and list(runs["attempts"]) == [2, 2]
    att = qoslab.report.results.load(tmp_path / "st", "attempts")
    assert sorted(att["status"]) == ["failed", "failed", "ok", "ok"]
    assert all("transient failure" in e for e in att[att["status"] == "failed"]["error"])


def test_cli_reports_failures_and_exits_2(tmp_path):
    p = subprocess.run(
        [
            QOSLAB,
            "sweep",
            S1,
            "--store",
            str(tmp_path / "st"),
            "--seeds",
            "3",
            "--jobs",
            "2",
            "--metric",
            "sweep_helpers:fail_on_seed_2",
            *SHORT_SET,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env_with_helpers(),
    )
    assert p.returncode == 2, p.stderr
    assert "1 of 3 runs failed" in p.stderr and "seed 2: ValueError: boom on seed 2" in p.stderr
    assert "Traceback" not in p.stderr
    assert "3 runs: 3 computed" in p.stdout and "| 2 |" in p.stdout  # n = 2 successful seeds


# -- resuming --------------------------------------------------------------------------------------


def _ok_keys(db: Path) -> set[tuple[str, int, str]]:
    if not db.exists():
        return set()
    try:
        c = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    except sqlite3.OperationalError:
        return set()
    try:
        return set(
            c.execute("SELECT scenario_sha256, seed, version FROM runs WHERE status = 'ok'").fetchall()
        )
    except sqlite3.OperationalError:
        return set()
    finally:
        c.close()


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False


def test_killed_sweep_resumes_without_recomputing_stored_runs(tmp_path):
    store = tmp_path / "st"
    db = store / "results.db"
    grid = ["--grid", "link.bottleneck.delay=5ms,6ms,7ms,8ms", "--seeds", "5"]
    cmd = [
        QOSLAB,
        "sweep",
        S1,
        "--store",
        str(store),
        "--jobs",
        "2",
        "--metric",
        "sweep_helpers:slow",
        *grid,
        *SHORT_SET,
    ]
    log1, log2 = tmp_path / "first.log", tmp_path / "second.log"
    env = env_with_helpers(QOSLAB_TEST_SLEEP="0.25")
    p = subprocess.Popen(
        cmd,
        env={**env, COMPUTE_LOG_ENV: str(log1)},
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 90
        while len(_ok_keys(db)) < 4:
            assert p.poll() is None, "the sweep ended before it could be interrupted"
            assert time.monotonic() < deadline, "no runs stored in time"
            time.sleep(0.02)
        p.send_signal(signal.SIGKILL)  # the coordinator dies mid-sweep, without any cleanup
        p.wait(timeout=10)
        # its workers notice and leave (they never touch the store)
        t0 = time.monotonic()
        while _group_alive(p.pid) and time.monotonic() - t0 < 10:
            time.sleep(0.1)
        assert not _group_alive(p.pid), "worker processes outlived their coordinator"
    finally:
        if _group_alive(p.pid):
            os.killpg(p.pid, signal.SIGKILL)
    stored_at_kill = _ok_keys(db)
    assert 4 <= len(stored_at_kill) < 20
    with Store(store, create=False) as st:
        assert st.verify() == []  # no half-written run
        assert st.query("SELECT COUNT(*) AS n FROM runs")["n"].iloc[0] == len(stored_at_kill)

    q = subprocess.run(
        cmd, env={**env, COMPUTE_LOG_ENV: str(log2)}, capture_output=True, text=True, timeout=180
    )
    assert q.returncode == 0, q.stderr
    assert f"20 runs: {20 - len(stored_at_kill)} computed, {len(stored_at_kill)} reused" in q.stdout

    runs = qoslab.report.results.load(store)
    keys = list(zip(runs["scenario_sha256"], runs["seed"], runs["version"], strict=True))
    assert len(keys) == 20 and len(set(keys)) == 20 and (runs["status"] == "ok").all()
    second = {(c["scenario_sha256"], c["seed"], c["version"]) for c in read_log(log2)}
    assert second.isdisjoint(stored_at_kill), "a stored run was computed again"
    assert second | stored_at_kill == set(keys)
    assert len(read_log(log2)) == len(second)  # each missing run computed once
    first = {(c["scenario_sha256"], c["seed"], c["version"]) for c in read_log(log1)}
    assert stored_at_kill <= first
    att = qoslab.report.results.load(store, "attempts")
    assert (att.groupby(["scenario_sha256", "seed"]).size() == 1).all() and len(att) == 20
    with Store(store, create=False) as st:
        assert st.verify() == []
    # the resumed results are those of an uninterrupted run
    r = runs.iloc[-1]
    sc = qoslab.load_scenario(S1).with_overrides(
        [*SHORT, f"link.bottleneck.delay={r['link.bottleneck.delay_ms']}ms"]  # swept values come back typed
    )
    assert sc.sha256() == r["scenario_sha256"]
    assert qoslab.run(sc, seed=int(r["seed"])).fairness_index == pytest.approx(r["fairness_index"], rel=1e-12)


def test_building_a_batch_cluster_keeps_the_ctrl_c_handler():
    # dask_jobqueue's import replaces SIGINT's handler with sys.exit(); a sweep's Ctrl-C must
    # stay a KeyboardInterrupt (one "interrupted" line, the sweep resumable)
    import subprocess
    import sys

    code = (
        "import signal\n"
        "from qoslab.runs.executors import JobqueueOptions, build_jobqueue_cluster\n"
        "h = signal.getsignal(signal.SIGINT)\n"
        "try:\n"
        "    build_jobqueue_cluster('slurm', JobqueueOptions())\n"
        "except Exception:\n"
        "    pass\n"
        "assert signal.getsignal(signal.SIGINT) is h, signal.getsignal(signal.SIGINT)\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
