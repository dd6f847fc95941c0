"""Sweeps through a real Slurm: a one-node cluster (slurmctld, slurmd, munged from Debian's
slurm-wlm and munge) started on this machine by ``tools/slurm_local.py`` for this module and
stopped after it. ``qoslab sweep --executor slurm`` submits real ``sbatch`` jobs of Dask workers
(dask-jobqueue's ``SLURMCluster``).

What is checked: results equal the local pool's run for run, and, with the workers writing
every series file (the coordinator may not), a local sweep's on the path before batching, file
for file; a worker job cancelled with
``scancel`` mid-sweep is replaced and the sweep completes; a coordinator killed with SIGKILL
resumes with every run stored once and nothing committed recomputed; the job script that
``--print-job-script`` prints is the one submitted, with account, walltime and memory passed
through; the scheduler and dashboard listen on loopback only, and so do the running workers
(over TLS with the certificates made for the sweep, the default); worker jobs that cannot start
stop the sweep with one line. Skipped where not root or the packages are missing (``make slurm-deps``).
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import qoslab.report.results
from conftest import QOSLAB, ROOT, SCENARIOS, one_line_error, run_window, stores_agree

sys.path.insert(0, str(ROOT / "tools"))
from slurm_local import LocalSlurm, missing_requirements  # noqa: E402

pytest.importorskip("dask_jobqueue", reason="the dask extra is not installed (pip install 'qoslab[dask]')")

S1 = str(SCENARIOS / "fdd-red-s1.toml")
#: 2 keys x 5 seeds, short runs.
GRID = [
    S1,
    "--grid",
    "link.bottleneck.queue_ab.limit=40pkts,100pkts",
    "--grid",
    "tcp.variant=reno,newreno",
    "--seeds",
    "5",
    *run_window("20s", "5s"),
]
#: Long enough runs (about 0.4 s each) that a sweep can be interrupted in its middle.
LONG = [S1, "--set", "duration=2000s", "--set", "measurement.end=2000s"]
SLURM = ["--executor", "slurm", "--scheduler-host", "127.0.0.1", "--walltime", "00:20:00", "--memory", "1GB"]


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    why = missing_requirements()
    if why:
        pytest.skip(why)
    cluster = LocalSlurm(tmp_path_factory.mktemp("slurm"))
    cluster.up()
    try:
        yield cluster
    finally:
        cluster.down()
        assert cluster.running() == [], "the local Slurm cluster left processes running"


def _env(slurm: LocalSlurm, **extra: str) -> dict[str, str]:
    return {**os.environ, **slurm.env, **extra}


def _runs(store: Path) -> pd.DataFrame:
    return qoslab.report.results.load(store)


def _wait_idle(slurm: LocalSlurm, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while slurm.jobs() and time.monotonic() < deadline:
        time.sleep(1)
    assert slurm.jobs() == [], f"jobs still queued or running: {slurm.jobs()}"


def _committed(store: Path) -> int:
    if not (store / "results.db").exists():
        return 0
    try:
        with sqlite3.connect(store / "results.db", timeout=1) as c:
            return int(c.execute("SELECT count(*) FROM runs WHERE status = 'ok'").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


def _computed(log: Path) -> list[tuple[str, int]]:
    if not log.exists():
        return []
    return [
        (d["scenario_sha256"], d["seed"]) for d in map(json.loads, log.read_text().splitlines()) if d["ok"]
    ]


def _listening(pid: int) -> list[str]:
    """The TCP addresses process ``pid`` listens on (from /proc)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            m = re.fullmatch(r"socket:\[(\d+)\]", os.readlink(fd))
        except OSError:
            continue
        if m:
            inodes.add(m.group(1))
    out = []
    for table, width in (("/proc/net/tcp", 8), ("/proc/net/tcp6", 32)):
        for line in Path(table).read_text().splitlines()[1:]:
            f = line.split()
            if f[3] == "0A" and f[9] in inodes:  # 0A: LISTEN
                host, port = f[1].split(":")
                if width == 8:
                    addr = ".".join(str(int(host[i : i + 2], 16)) for i in (6, 4, 2, 0))
                else:
                    addr = "::" if set(host) == {"0"} else host
                out.append(f"{addr}:{int(port, 16)}")
    return out


def _worker_processes() -> list[int]:
    """The Dask worker jobs' processes on this machine: each ``dask_worker`` (the nanny) and
    its descendants (the worker processes)."""
    parent: dict[int, int] = {}
    top = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            parent[int(d.name)] = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            if b"distributed.cli.dask_worker" in (d / "cmdline").read_bytes():
                top.append(int(d.name))
        except (OSError, IndexError, ValueError):
            continue
    found = set(top)
    grew = True
    while grew:
        new = {p for p, pp in parent.items() if pp in found and p not in found}
        found |= new
        grew = bool(new)
    return sorted(found)


def test_sweep_through_slurm_equals_the_local_pool(slurm, tmp_path):
    local = subprocess.run(
        [QOSLAB, "sweep", *GRID, "--store", str(tmp_path / "local"), "--jobs", "2"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert local.returncode == 0, local.stderr
    p = subprocess.run(
        [QOSLAB, "sweep", *GRID, "--store", str(tmp_path / "slurm"), *SLURM, "--jobs", "2"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env=_env(slurm),
    )
    assert p.returncode == 0, p.stderr
    assert "20 runs: 20 computed, 0 reused from the store, 0 failed" in p.stdout
    runs = _runs(tmp_path / "slurm")
    assert len(runs) == 20 and runs["status"].eq("ok").all()
    # computed by Dask workers inside Slurm jobs, not by this process's pool
    assert runs["worker"].nunique() >= 1 and (runs["worker"] != "").all()
    stores_agree(tmp_path / "slurm", tmp_path / "local")
    # the jobs' output went to STORE/jobs, not to the working directory
    logs = sorted(p.name for p in (tmp_path / "slurm" / "jobs").iterdir())
    assert any(n.endswith(".err") for n in logs), logs
    assert not list(tmp_path.glob("slurm-*.out"))
    _wait_idle(slurm)


def _sweep_in_background(slurm, store: Path, log: Path, *extra: str, seeds: int = 24) -> subprocess.Popen:
    return subprocess.Popen(
        [QOSLAB, "sweep", *LONG, "--seeds", str(seeds), "--store", str(store), *SLURM, *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(slurm, QOSLAB_COMPUTE_LOG=str(log)),
    )


def _wait_for(cond, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


def test_a_worker_job_cancelled_mid_sweep_is_replaced(slurm, tmp_path):
    store, log = tmp_path / "store", tmp_path / "computed.jsonl"
    proc = _sweep_in_background(slurm, store, log, "--jobs", "1")
    try:
        _wait_for(lambda: _committed(store) >= 4, 120, "4 runs committed")
        jobs = slurm.jobs()
        assert len(jobs) == 1 and jobs[0]["name"] == "qoslab-worker", jobs
        first = jobs[0]["id"]
        slurm.run("scancel", first)
        out, err = proc.communicate(timeout=240)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "24 runs: 24 computed, 0 reused from the store, 0 failed" in out
    runs = _runs(store)
    assert len(runs) == 24 and runs[["scenario_sha256", "seed"]].drop_duplicates().shape[0] == 24
    # a second job was submitted after the first was cancelled
    ids = {p.name.split("-")[-1].split(".")[0] for p in (store / "jobs").glob("*.err")}
    assert first in ids and len(ids) >= 2, ids
    # each run was committed once; only the runs in flight on the cancelled job ran twice
    done = _computed(log)
    assert len(set(done)) == 24 and len(done) - 24 <= 1, len(done)
    _wait_idle(slurm)


def test_a_killed_coordinator_resumes_without_recomputing(slurm, tmp_path):
    store, log = tmp_path / "store", tmp_path / "computed.jsonl"
    proc = _sweep_in_background(slurm, store, log, "--jobs", "2")
    _wait_for(lambda: _committed(store) >= 8, 120, "8 runs committed")
    pid = proc.pid
    assert all(a.startswith("127.0.0.1:") for a in _listening(pid)), _listening(pid)
    assert _listening(pid), "the coordinator listens nowhere?"
    os.kill(pid, signal.SIGKILL)
    proc.communicate(timeout=30)
    killed_at = time.monotonic()
    before = {(r.scenario_sha256, r.seed) for r in _runs(store).itertuples()}
    assert 8 <= len(before) < 24
    n_log = len(log.read_text().splitlines())

    p = subprocess.run(
        [QOSLAB, "sweep", *LONG, "--seeds", "24", "--store", str(store), *SLURM, "--jobs", "2"],
        capture_output=True,
        text=True,
        timeout=300,
        env=_env(slurm, QOSLAB_COMPUTE_LOG=str(log)),
    )
    assert p.returncode == 0, p.stderr
    assert f"24 runs: {24 - len(before)} computed, {len(before)} reused from the store, 0 failed" in p.stdout
    runs = _runs(store)
    assert len(runs) == 24 and runs[["scenario_sha256", "seed"]].drop_duplicates().shape[0] == 24
    after = [(d["scenario_sha256"], d["seed"]) for d in map(json.loads, log.read_text().splitlines()[n_log:])]
    assert not set(after) & before, "a committed run was computed again after the restart"
    # the orphaned worker jobs of the killed coordinator end by themselves (Dask's death timeout)
    _wait_idle(slurm, timeout=max(10.0, 150 - (time.monotonic() - killed_at)))


def test_the_printed_job_script_is_the_one_submitted(slurm, tmp_path):
    opts = [
        *SLURM,
        "--jobs",
        "1",
        "--account",
        "netlab",
        "--walltime",
        "00:30:00",
        "--job-extra",
        "--comment=qoslab-test",
        "--scheduler-port",
        "0",
    ]
    store = tmp_path / "store"
    shown = subprocess.run(
        [QOSLAB, "sweep", *LONG, "--store", str(store), *opts, "--print-job-script"],
        capture_output=True,
        text=True,
        timeout=60,
        env=_env(slurm),
    )
    assert shown.returncode == 0, shown.stderr
    assert not (store / "results.db").exists(), "--print-job-script ran something"
    proc = _sweep_in_background(slurm, store, tmp_path / "log", *opts, seeds=12)
    try:
        _wait_for(lambda: any(j["state"] == "RUNNING" for j in slurm.jobs()), 60, "a running job")
        jid = slurm.jobs()[0]["id"]
        submitted = slurm.run("scontrol", "write", "batch_script", jid, "-")
        info = slurm.run("scontrol", "show", "job", jid)
        _wait_for(lambda: _committed(store) >= 1, 120, "a run computed by the job's worker")
        workers = _worker_processes()
        bound = sorted({a for pid in workers for a in _listening(pid)})
        out, err = proc.communicate(timeout=240)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err

    # the worker's name, the scheduler's port and the sweep's certificate folder are given at
    # submission; all else is identical
    def norm(s: str) -> str:
        s = re.sub(r"--name \S+", "--name NAME", s)
        s = re.sub(r"/tls-[0-9a-f]{12}/", "/tls-SWEEP/", s)
        return re.sub(r"tls://127\.0\.0\.1:\d+", "tls://127.0.0.1:PORT", s).strip()

    assert norm(submitted) == norm(shown.stdout)
    # the workers (nanny and worker processes) listened on the scheduler's route only, over TLS
    assert workers and bound and all(a.startswith("127.0.0.1:") for a in bound), (workers, bound)
    assert "--protocol tls://" in submitted and "--host $QOSLAB_WORKER_HOST" in submitted
    assert not list((store / "jobs").glob("tls-*")), "the sweep's certificates outlived it"
    for directive in ("-A netlab", "-t 00:30:00", "--mem=954M", "--comment=qoslab-test"):
        assert f"#SBATCH {directive}" in shown.stdout, shown.stdout
    assert "Account=netlab" in info and "TimeLimit=00:30:00" in info and "MinMemoryNode=954M" in info, info
    assert "Comment=qoslab-test" in info
    _wait_idle(slurm)


def test_worker_jobs_that_cannot_start_stop_the_sweep_with_one_line(slurm, tmp_path):
    p = subprocess.run(
        [
            QOSLAB,
            "sweep",
            *GRID,
            "--store",
            str(tmp_path / "store"),
            *SLURM,
            "--jobs",
            "1",
            "--python",
            "/bin/false",
        ],
        capture_output=True,
        text=True,
        timeout=400,
        env=_env(slurm),
    )
    line = one_line_error(p)
    assert "worker jobs ended while no run finished" in line and "check --python" in line, line
    assert str(tmp_path / "store" / "jobs") in line
    _wait_idle(slurm)


def test_the_documented_slurm_example_runs_as_written(slurm, tmp_path):
    doc = (ROOT / "docs" / "experiments.md").read_text()
    block = doc.split("<!-- slurm-example")[1].split("<!-- /slurm-example -->")[0]
    joined = block.replace("\\\n", " ")
    cmd = next(line for line in joined.splitlines() if line.startswith(".venv/bin/qoslab "))
    argv = [QOSLAB, *cmd.split()[1:], "--store", str(tmp_path / "store")]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=ROOT, env=_env(slurm))
    assert p.returncode == 0, p.stderr
    assert "10 runs: 10 computed, 0 reused from the store, 0 failed" in p.stdout
    assert "export SLURM_CONF=/tmp/qoslab-slurm/slurm.conf" in block  # what `make slurm-up` prints
    _wait_idle(slurm)


#: ``qoslab ARGS`` with the sweep's settings changed by ``PATCH`` (a Python statement).
PATCHED_CLI = """import functools, sys
import qoslab.store, qoslab.runs.sweep
{patch}
from qoslab.entry import main
if __name__ == "__main__":
    sys.argv = ["qoslab", *sys.argv[1:]]
    sys.exit(main())
"""


def test_slurm_workers_write_the_series_and_store_what_the_coordinator_alone_stores(slurm, tmp_path):
    """The Slurm sweep's coordinator is refused any series file (its workers write them all) and
    stores, bit for bit, what a local sweep on the path before batching stores: the coordinator
    writing every file and committing every run on its own."""
    refuse = (tmp_path / "refuse.py", "qoslab.store.Store.write_series = None  # calling it fails the sweep")
    alone = (
        tmp_path / "alone.py",
        "qoslab.runs.sweep.run_sweep = functools.partial(qoslab.runs.sweep.run_sweep, batch_runs=1, "
        "batch_seconds=0, worker_series=False)",
    )
    for path, patch in (refuse, alone):
        path.write_text(PATCHED_CLI.format(patch=patch))
    p = subprocess.run(
        [
            sys.executable,
            str(refuse[0]),
            "sweep",
            *GRID,
            "--store",
            str(tmp_path / "slurm"),
            *SLURM,
            "--jobs",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env=_env(slurm),
    )
    assert p.returncode == 0, p.stderr
    assert "20 runs: 20 computed, 0 reused from the store, 0 failed" in p.stdout
    local = subprocess.run(
        [sys.executable, str(alone[0]), "sweep", *GRID, "--store", str(tmp_path / "local"), "--jobs", "2"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert local.returncode == 0, local.stderr
    stores_agree(tmp_path / "slurm", tmp_path / "local")
    cols = [
        "scenario_sha256",
        "seed",
        "series_queue",
        "series_flow",
        "series_queue_sha256",
        "series_flow_sha256",
    ]
    a, b = (
        _runs(tmp_path / d)[cols].sort_values(cols[:2]).reset_index(drop=True) for d in ("slurm", "local")
    )
    assert a.equals(b) and len(a) == 20 and a["series_flow_sha256"].notna().all()
    for rel in [*a["series_queue"], *a["series_flow"]]:
        assert (tmp_path / "slurm" / rel).read_bytes() == (tmp_path / "local" / rel).read_bytes()
    _wait_idle(slurm)
