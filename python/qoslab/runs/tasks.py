"""What a worker computes: a :class:`RunTask` in, a :class:`RunOutput` out.

Workers run :func:`execute`, which never raises: an exception becomes a failed output. The
executors (:mod:`qoslab.runs.executors`) ship tasks to workers and outputs back; the sweep coordinator
(:mod:`qoslab.runs.sweep`) makes the tasks and stores the outputs. Both import this module, neither
imports the other at module level.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
import socket
import time
import traceback as tb
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from qoslab import _core
from qoslab.scenario import Scenario
from qoslab.store import Rows, RunKey, write_series_file
from qoslab.store.schema import DB_NAME
from qoslab.warmup import WARMUP_COLUMNS, stored_form

if TYPE_CHECKING:
    from qoslab.runs.simulate import Result

#: Environment variable naming a file to which every worker appends one JSON line per
#: computation (an audit log of what was computed, independent of the store).
COMPUTE_LOG_ENV = "QOSLAB_COMPUTE_LOG"


# -- tasks and outputs -----------------------------------------------------------------------------


@dataclass(frozen=True)
class RunTask:
    """What a worker needs to compute one run (plain data, cheap to pickle)."""

    key: RunKey
    scenario_text: str
    scenario_source: str
    metrics: tuple[str, ...] = ()
    attempt: int = 1
    #: Folders besides the scenario's own it may read files from (``--allow-path``).
    allow_paths: tuple[str, ...] = ()
    #: The result store's directory (absolute). Where the worker sees that store, it writes the
    #: run's series files into it and sends back their paths and checksums instead of the
    #: series, and its flows and queues as SQL rows (:class:`Rows`): the coordinator only checks
    #: and commits. Where it does not, the output carries the series (the coordinator writes them).
    store_root: str | None = None


@dataclass
class RunOutput:
    """What a worker sends back: tables and metrics, or the error that stopped the run."""

    key: RunKey
    ok: bool
    worker: str
    version: str
    started_at: float
    finished_at: float
    wall_time_s: float = 0.0
    error: str | None = None
    traceback: str | None = None
    metrics: dict[str, float] = field(default_factory=dict)
    summary: dict[str, Any] | None = None
    flows: pd.DataFrame | Rows | None = None
    queues: pd.DataFrame | Rows | None = None
    series_queue: pd.DataFrame | None = None
    series_flow: pd.DataFrame | None = None
    #: ``{"queue": (path, sha256), "flow": …}``: the series files the worker wrote into the store
    #: (``RunTask.store_root``), paths relative to it; the series fields are then None.
    series_files: dict[str, tuple[str, str]] | None = None


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def failure(task: RunTask, error: str, *, worker: str = "?", trace: str | None = None) -> RunOutput:
    """A failed output for ``task`` produced outside the worker (the worker died, the cluster
    lost the task)."""
    now = time.time()
    return RunOutput(
        key=task.key,
        ok=False,
        worker=worker,
        version=task.key.version,
        started_at=now,
        finished_at=now,
        error=error,
        traceback=trace,
    )


# -- metrics ---------------------------------------------------------------------------------------


#: The metrics every run records (see :func:`standard_metrics`).
STANDARD_METRICS = (
    "fairness_index",
    "aggregate_throughput_bps",
    "throughput_std_bps",
    "utilization",
    "drops_total",
    "drops_bottleneck",
    "drops_bottleneck_early",
    "drops_bottleneck_forced",
    "drops_bottleneck_overflow",
    "drop_rate_bottleneck_pps",
    "timeouts",
    "retransmitted_packets",
    "queue_mean_pkts",
    "red_avg_mean_pkts",
    "rio_avg_in_mean_pkts",
    "events",
    "packet_hops",
)


#: Metrics runs no longer write, with what replaces them: stores written before keep them (a
#: stored run's metrics are read as stored), so old sweeps still load and plot.
DEPRECATED_METRICS = {
    "avg_queue_mean_pkts": "the mean of series_queue's avg_queue, which is RED's average for RED but "
    "RIO's avg_in for RIO: now red_avg_mean_pkts (single-average disciplines) and "
    "rio_avg_in_mean_pkts (RIO, RI+O, dsRED)",
}


#: The bottleneck's series columns :func:`standard_metrics` averages over the window.
_WINDOW_COLUMNS = ["queue_packets", "avg_queue", "avg_prec0", "avg_prec1"]


def standard_metrics(res: Result, summary: Mapping[str, Any] | None = None) -> dict[str, float]:
    """The metrics every run records (bottleneck = the scenario's measurement bottleneck, its
    busier direction; drops over the whole run, throughputs over the measurement window).
    ``summary`` is ``res.summary()`` if the caller has it already."""
    s = summary if summary is not None else res.summary()
    d = s["drops"]
    dur = s["duration_s"]
    f = res.flows
    q = res.series_queue
    b = res.bottleneck
    qname = f"{b['link_name']}:{b['direction']}"
    w0, w1 = s["measurement_window_s"]
    # (only the columns read below: the series has a row per queue and sample)
    inq = q.loc[(q["queue"] == qname) & (q["time_s"] >= w0) & (q["time_s"] <= w1), _WINDOW_COLUMNS]
    return {
        "fairness_index": float(s["fairness_index"]),
        "aggregate_throughput_bps": float(s["aggregate_throughput_bps"]),
        "throughput_std_bps": float(s["throughput_std_bps"]),
        "utilization": float(s["utilization"]),
        "drops_total": float(d["total"]),
        "drops_bottleneck": float(d["bottleneck"]),
        "drops_bottleneck_early": float(d["bottleneck_early"]),
        "drops_bottleneck_forced": float(d["bottleneck_forced"]),
        "drops_bottleneck_overflow": float(d["bottleneck_overflow"]),
        "drop_rate_bottleneck_pps": float(d["bottleneck"]) / dur if dur > 0 else float("nan"),
        "timeouts": float(f["timeouts"].sum()),
        "retransmitted_packets": float(f["retransmitted_packets"].sum()),
        "queue_mean_pkts": float(inq["queue_packets"].mean()) if len(inq) else float("nan"),
        **_avg_means(inq),
        "events": float(res.events),
        "packet_hops": float(res.packet_hops),
    }


def _avg_means(inq: pd.DataFrame) -> dict[str, float]:
    """RED's and RIO's averages as two metrics, never one: a discipline with one average
    (avg_prec1 NaN: RED, ARED, FDD-RED, WRED, DWRED) gives red_avg_mean_pkts, one with an
    average per precedence (RIO-C/RIO-D, RI+O, dsRED) gives rio_avg_in_mean_pkts (its
    avg_prec0: avg_in); the other is NaN."""
    nan = float("nan")
    if not len(inq) or inq["avg_queue"].isna().all():
        return {"red_avg_mean_pkts": nan, "rio_avg_in_mean_pkts": nan}
    if inq["avg_prec1"].notna().any():
        return {"red_avg_mean_pkts": nan, "rio_avg_in_mean_pkts": float(inq["avg_prec0"].mean())}
    return {"red_avg_mean_pkts": float(inq["avg_queue"].mean()), "rio_avg_in_mean_pkts": nan}


def resolve_metric_function(spec: str) -> Callable[[Result], Mapping[str, float]]:
    """``"package.module:function"`` → the function (which takes a :class:`Result` and returns a
    mapping of metric names to numbers)."""
    if ":" not in spec:
        raise ValueError(f"metric function {spec!r}: expected MODULE:FUNCTION")
    mod, _, name = spec.partition(":")
    try:
        # what the user names is taken to have the documented signature (checked: callable)
        fn: Callable[[Result], Mapping[str, float]] = getattr(importlib.import_module(mod), name)
    except (ImportError, AttributeError) as e:
        raise ValueError(f"metric function {spec!r}: {e}") from None
    if not callable(fn):
        raise ValueError(f"metric function {spec!r} is not callable")
    return fn


def _log_computation(task: RunTask, ok: bool, wall: float) -> None:
    path = os.environ.get(COMPUTE_LOG_ENV)
    if not path:
        return
    line = json.dumps(
        {
            "scenario_sha256": task.key.scenario_sha256,
            "seed": task.key.seed,
            "version": task.key.version,
            "attempt": task.attempt,
            "ok": ok,
            "pid": os.getpid(),
            "wall_time_s": wall,
        }
    )
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)


def _for_store(task: RunTask, scenario_name: str, out: RunOutput) -> RunOutput:
    """A successful output made ready for the store at ``task.store_root``: its tables as SQL
    rows and, where this worker sees that store (its database is there) and runs the version of
    the run's key, its series written into it (the same bytes and paths the coordinator would
    write). A series file that cannot be written is left to the coordinator (it reports why)."""
    assert task.store_root is not None and out.series_queue is not None and out.series_flow is not None
    assert isinstance(out.flows, pd.DataFrame) and isinstance(out.queues, pd.DataFrame)
    packed = dataclasses.replace(out, flows=Rows.of(out.flows), queues=Rows.of(out.queues))
    root = Path(task.store_root)
    if out.version != task.key.version or not (root / DB_NAME).is_file():
        return packed
    meta = {
        "scenario": scenario_name,
        "scenario_sha256": task.key.scenario_sha256,
        "seed": str(task.key.seed),
        "version": task.key.version,
    }
    try:
        files = {
            "queue": write_series_file(root, task.key, "queue", out.series_queue, meta),
            "flow": write_series_file(root, task.key, "flow", out.series_flow, meta),
        }
    except OSError:
        return packed
    return dataclasses.replace(packed, series_queue=None, series_flow=None, series_files=files)


def execute(task: RunTask) -> RunOutput:
    """Computes one run (in a worker). Never raises for a failing run: the error and traceback
    are returned in a failed :class:`RunOutput`."""
    from qoslab.runs.simulate import run as run_sim

    started = time.time()
    t0 = time.perf_counter()
    who = worker_name()
    try:
        sc = Scenario(task.scenario_text, task.scenario_source, allow_paths=task.allow_paths)
        if sc.sha256() != task.key.scenario_sha256:
            raise RuntimeError("the scenario's hash differs on this worker (another qoslab build?)")
        res = run_sim(sc, task.key.seed)
        if res.violations:
            raise RuntimeError("conservation check failed: " + "; ".join(res.violations))
        summary = res.summary()
        metrics = standard_metrics(res, summary)
        sq, sf = res.series_queue, res.series_flow
        if WARMUP_COLUMNS["queue"] <= set(sq.columns) and WARMUP_COLUMNS["flow"] <= set(sf.columns):
            # the warm-up report reads this instead of the series files (qoslab.warmup.stored_form)
            b = res.bottleneck
            summary["warmup"] = stored_form(sq, sf, f"{b['link_name']}:{b['direction']}")
        for spec in task.metrics:
            extra = resolve_metric_function(spec)(res)
            metrics.update({str(k): float(v) for k, v in extra.items()})
        flows = res.flows.copy()
        flows.insert(0, "flow", np.arange(len(flows)))
        queues = res.links.copy()
        queues.insert(
            0, "queue", [f"{n}:{d}" for n, d in zip(queues["link_name"], queues["direction"], strict=True)]
        )
        wall = time.perf_counter() - t0
        _log_computation(task, True, wall)
        out = RunOutput(
            key=task.key,
            ok=True,
            worker=who,
            version=_core.__version__,
            started_at=started,
            finished_at=time.time(),
            wall_time_s=wall,
            metrics=metrics,
            summary=summary,
            flows=flows,
            queues=queues,
            series_queue=res.series_queue,
            series_flow=res.series_flow,
        )
        return _for_store(task, sc.name, out) if task.store_root is not None else out
    except Exception as e:  # noqa: BLE001 — every failure of a run is data for the store
        wall = time.perf_counter() - t0
        _log_computation(task, False, wall)
        msg = str(e.args[0]) if isinstance(e, _core.ScenarioError) and e.args else str(e)
        return RunOutput(
            key=task.key,
            ok=False,
            worker=who,
            version=_core.__version__,
            started_at=started,
            finished_at=time.time(),
            wall_time_s=wall,
            error=f"{type(e).__name__}: {msg}".splitlines()[0] if msg else type(e).__name__,
            traceback=tb.format_exc(),
        )
