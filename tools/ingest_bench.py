"""How many runs per minute the sweep coordinator stores, fed by simulated workers.

A real run (``fdd-red-s1``, 100 s: 5 flows, 22 queue rows, 2,222 + 505 series rows) is computed
once; its output, pickled as it travels from a worker, is the template of every synthetic run.
``W`` simulated workers (threads) hand the coordinator their share of ``N`` runs through one
queue, as fast as it takes them; the coordinator is the real one (``qoslab.runs.sweep.run_sweep``
with an executor that unpickles each output, re-keys it to its run and calls the sweep's own
``on_done``), so the figure is the coordinator's: its wall time from the sweep's start to its
last commit. What a real worker does besides (simulating, and in the new path writing the
Parquet files) happens before the clock starts, as it would on other machines.

- ``before``: the coordinator receives the series as DataFrames and writes both Parquet files
  and one transaction per run itself: main's path when ``PYTHONPATH`` points at main's
  ``python/`` (with a built ``_core``), else this package with ``batch_runs=1``,
  ``batch_seconds=0``, ``worker_series=False``.
- ``after``: the workers wrote the series files into the store (each synthetic run's two files
  are hard links to the template run's files: the same bytes to read and hash) and send back
  paths, checksums and their tables as SQL rows; the coordinator verifies both files' SHA-256
  and commits batches of runs.
- ``batched``: batches, but the coordinator writes the series files (workers that do not see the
  store).

    .venv/bin/python tools/ingest_bench.py --path after --runs 10000
    PYTHONPATH=/tmp/main-python .venv/bin/python tools/ingest_bench.py --path before --runs 1000

The numbers go to docs/experiments.md ("How far a sweep scales").
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import pickle
import queue
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "scenarios" / "fdd-red-s1.toml"


class SimulatedWorkers:
    """``workers`` threads that each put their share of the tasks' outputs on one queue; the
    coordinator's thread takes them one by one (unpickling, as from a pipe) and calls
    ``on_done``. ``make(task)`` gives the pickled output of a task."""

    def __init__(self, workers: int, make: Callable[[Any], tuple[bytes, dict[str, Any]]]) -> None:
        self.workers = workers
        self.make = make

    def describe(self) -> str:
        return f"{self.workers} simulated workers"

    def run(self, tasks: Iterable[Any], on_done: Callable[[Any, Any], Iterable[Any]]) -> None:
        todo = list(tasks)
        q: queue.Queue[tuple[Any, bytes, dict[str, Any]]] = queue.Queue(maxsize=4 * self.workers)
        shares = [todo[i :: self.workers] for i in range(self.workers)]

        def worker(share: list[Any]) -> None:
            for t in share:
                q.put((t, *self.make(t)))

        threads = [threading.Thread(target=worker, args=(s,), daemon=True) for s in shares if s]
        for th in threads:
            th.start()
        for _ in range(len(todo)):
            t, payload, fields = q.get()
            out = dataclasses.replace(pickle.loads(payload), key=t.key, **fields)
            retries = list(on_done(t, out))
            assert not retries, "a synthetic run failed"
        for th in threads:
            th.join()


def measure(
    path: str, runs: int, workers: int, template_dir: Path, batch_runs: int | None = None
) -> tuple[float, float]:
    """(runs per minute the coordinator stores, its CPU milliseconds per run): ``runs`` runs
    from ``workers`` simulated workers."""
    import qoslab
    from qoslab.runs.sweep import plan, run_sweep
    from qoslab.runs.tasks import RunTask, execute
    from qoslab.store import Store

    new = hasattr(RunTask, "store_root")
    sc = qoslab.load_scenario(SCENARIO)
    seeds = list(range(1, runs + 1))
    specs = plan([({}, sc)], seeds, f"ingest-{workers}")
    with tempfile.TemporaryDirectory(dir=template_dir) as d:
        store = Store(Path(d) / "st")
        first = RunTask(specs[0].key, sc.text, sc.source)
        if path == "after":
            first = dataclasses.replace(first, store_root=str(store.root.resolve()))
        out = execute(first)
        assert out.ok, out.error
        payload = pickle.dumps(out)
        make: Callable[[Any], tuple[bytes, dict[str, Any]]]
        if path == "after":
            from qoslab.store import series_rel

            assert out.series_files is not None, "the worker did not write the series into the store"
            # the workers' part, done before the clock: each run's two files in the store
            files = {}
            for s in specs:
                files[s.key] = {}
                for kind, (rel, sha) in out.series_files.items():
                    dest = store.root / series_rel(s.key, kind)
                    if dest != store.root / rel:
                        dest.parent.mkdir(parents=True, exist_ok=True)
                        os.link(store.root / rel, dest)
                    files[s.key][kind] = (series_rel(s.key, kind), sha)

            def make(t: Any) -> tuple[bytes, dict[str, Any]]:
                return payload, {"series_files": files[t.key]}

            opts: dict[str, Any] = {}
        else:

            def make(t: Any) -> tuple[bytes, dict[str, Any]]:
                return payload, {}

            opts = {"batch_runs": 1, "batch_seconds": 0.0, "worker_series": False} if new else {}
            if path == "batched":
                opts = {"worker_series": False}
        if batch_runs is not None:
            opts.update(batch_runs=batch_runs, batch_seconds=0.0 if batch_runs == 1 else 0.5)
        t0, c0 = time.perf_counter(), time.process_time()
        rep = run_sweep(specs, store, SimulatedWorkers(workers, make), progress=False, **opts)
        dt, cpu = time.perf_counter() - t0, time.process_time() - c0
        assert rep.computed == runs and not rep.failed, rep
        assert store.count_runs() == runs
        store.close()
    return runs / dt * 60, cpu / runs * 1e3


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--path", choices=("before", "batched", "after"), default="after")
    ap.add_argument("--runs", type=int, default=10000, help="runs stored per measurement")
    ap.add_argument("--workers", default="1,10,100,1000", help="simulated worker counts")
    ap.add_argument("--batch-runs", type=int, help="runs per commit (default: the sweep's own)")
    ap.add_argument("--tmp", default=tempfile.gettempdir(), help="where the stores are made")
    a = ap.parse_args()
    import qoslab

    where = Path(qoslab.__file__).resolve().parent
    print(f"qoslab {qoslab.__version__} from {where}, path {a.path}", flush=True)
    for w in (int(x) for x in a.workers.split(",")):
        rate, cpu = measure(a.path, a.runs, w, Path(a.tmp), a.batch_runs)
        print(
            f"{a.path}: {w} simulated workers: {rate:,.0f} runs/min ({a.runs} runs; "
            f"{cpu:.2f} ms of CPU per run, {60e3 / cpu:,.0f} runs/min per busy core; "
            f"load average {os.getloadavg()[0]:.1f})",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
