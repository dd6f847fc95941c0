"""How far a sweep scales: the store's commit rate and the runs per minute through Slurm.

1. **Commit rate**: the coordinator stores every run itself (SQLite rows, two Parquet series
   files), one after the other. A replaying executor hands the sweep one real output again and
   again (under each run's key), so the sweep's wall time is the coordinator's cost alone.
2. **Throughput through Slurm** (with ``--slurm``; needs root and ``make slurm-deps``): a sweep
   of short runs with 1 and with 2 worker jobs on the local one-node cluster, as runs per minute
   in the steady state (from the stored finish times) and overall (with the jobs' start).

    .venv/bin/python tools/sweep_scaling.py --commits 400 --slurm --runs 120

The numbers go to docs/experiments.md ("How far a sweep scales").
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "scenarios" / "fdd-red-s1.toml"


class ReplayExecutor:
    """Returns ``template`` (a real output) for every task, re-keyed: no computation at all."""

    def __init__(self, template) -> None:
        self.template = template

    def describe(self) -> str:
        return "replay"

    def run(self, tasks: Iterable, on_done) -> None:
        for t in tasks:
            now = time.time()
            on_done(t, replace(self.template, key=t.key, started_at=now, finished_at=now))


def commit_rate(n: int, series: bool) -> float:
    import qoslab
    from qoslab.runs.sweep import plan, run_sweep
    from qoslab.runs.tasks import RunTask, execute
    from qoslab.store import Store

    sc = qoslab.load_scenario(SCENARIO)
    specs = plan([({}, sc)], list(range(1, n + 1)), "commit-rate")
    first = specs[0]
    out = execute(RunTask(first.key, sc.text, sc.source))
    assert out.ok, out.error
    if not series:
        out = replace(out, series_queue=out.series_queue.iloc[0:0], series_flow=out.series_flow.iloc[0:0])
    with tempfile.TemporaryDirectory() as d, Store(Path(d) / "st") as st:
        t0 = time.perf_counter()
        rep = run_sweep(specs, st, ReplayExecutor(out), progress=False)
        dt = time.perf_counter() - t0
    assert rep.computed == n and not rep.failed, rep
    return n / dt


def throughput(runs: int, jobs: int, duration: str, executor: str) -> tuple[float, float]:
    """(steady runs/min, overall runs/min) of a sweep of ``runs`` runs on ``jobs`` Slurm jobs
    (``executor="slurm"``) or local worker processes (``"local"``)."""
    import sqlite3

    sys.path.insert(0, str(ROOT / "tools"))
    from slurm_local import LocalSlurm

    cluster = LocalSlurm()
    with tempfile.TemporaryDirectory() as d:
        store = Path(d) / "st"
        cmd = [
            str(Path(sys.executable).parent / "qoslab"),
            "sweep",
            str(SCENARIO),
            "--set",
            f"duration={duration}",
            "--set",
            f"measurement.end={duration}",
            "--seeds",
            str(runs),
            "--store",
            str(store),
            "--executor",
            executor,
            "--jobs",
            str(jobs),
        ]
        if executor == "slurm":
            cmd += ["--scheduler-host", "127.0.0.1", "--memory", "1GB"]
        t0 = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **cluster.env})
        wall = time.perf_counter() - t0
        if p.returncode != 0:
            raise RuntimeError(p.stderr)
        with sqlite3.connect(store / "results.db") as c:
            ends = sorted(r[0] for r in c.execute("SELECT finished_at FROM runs"))
    steady = (len(ends) - 1) / (ends[-1] - ends[0]) * 60
    return steady, runs / wall * 60


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--commits", type=int, default=400, help="runs stored for the commit rate")
    ap.add_argument("--slurm", action="store_true", help="also measure sweeps through a local Slurm")
    ap.add_argument("--runs", type=int, default=120, help="runs per Slurm sweep")
    ap.add_argument("--duration", default="1000s", help="simulated time per run of the Slurm sweeps")
    a = ap.parse_args()
    for series in (True, False):
        r = commit_rate(a.commits, series)
        what = "with its two time series" if series else "without time series"
        print(f"store: {r:.0f} runs committed per second ({what}; {a.commits} runs)", flush=True)
    if a.slurm:
        sys.path.insert(0, str(ROOT / "tools"))
        from slurm_local import LocalSlurm

        cluster = LocalSlurm()
        cluster.up()
        try:
            for executor in ("local", "slurm"):
                for jobs in (1, 2):
                    steady, overall = throughput(a.runs, jobs, a.duration, executor)
                    what = "job(s) of 1 worker" if executor == "slurm" else "worker process(es)"
                    print(
                        f"{executor}: {jobs} {what}: {steady:.0f} runs/min steady, {overall:.0f} "
                        f"runs/min from start to end ({a.runs} runs of {a.duration})",
                        flush=True,
                    )
        finally:
            cluster.down()
    return 0


if __name__ == "__main__":
    sys.exit(main())
