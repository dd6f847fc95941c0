"""Sweeps: many runs over parameter grids and seeds, computed by an executor and stored once.

The coordinator (:func:`run_sweep`) asks the store which runs exist, hands the missing ones to an
executor (:mod:`qoslab.executors`: a local process pool, a Dask cluster) as :class:`RunTask`
values, and writes each :class:`RunOutput` it receives back into the store — it alone writes.
Workers run :func:`execute`, which never raises: an exception becomes a failed output.
"""

from __future__ import annotations

import importlib
import itertools
import json
import os
import socket
import sys
import time
import traceback as tb
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from qoslab import _core
from qoslab.scenario import Scenario
from qoslab.store import RunKey, Store

if TYPE_CHECKING:
    from qoslab.executors import Executor
    from qoslab.simulate import Result

#: Environment variable naming a file to which every worker appends one JSON line per
#: computation (an audit log of what was computed, independent of the store).
COMPUTE_LOG_ENV = "QOSLAB_COMPUTE_LOG"


class GridError(ValueError):
    """A malformed ``--grid`` argument."""


# -- what a run is ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunSpec:
    """One planned run: a scenario, a seed, the parameters that produced the scenario (for
    tables) and the name of the sweep it belongs to."""

    scenario: Scenario
    seed: int
    params: Mapping[str, Any]
    sweep: str
    metrics: tuple[str, ...] = ()

    @property
    def key(self) -> RunKey:
        return RunKey(self.scenario.sha256(), int(self.seed), _core.__version__)


@dataclass(frozen=True)
class RunTask:
    """What a worker needs to compute one run (plain data, cheap to pickle)."""

    key: RunKey
    scenario_text: str
    scenario_source: str
    metrics: tuple[str, ...] = ()
    attempt: int = 1


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
    flows: pd.DataFrame | None = None
    queues: pd.DataFrame | None = None
    series_queue: pd.DataFrame | None = None
    series_flow: pd.DataFrame | None = None


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
    "avg_queue_mean_pkts",
    "events",
    "packet_hops",
)


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
    inq = q[(q["queue"] == qname) & (q["time_s"] >= w0) & (q["time_s"] <= w1)]
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
        "avg_queue_mean_pkts": float(inq["avg_queue"].mean()) if len(inq) else float("nan"),
        "events": float(res.events),
        "packet_hops": float(res.packet_hops),
    }


def resolve_metric_function(spec: str) -> Callable[[Result], Mapping[str, float]]:
    """``"package.module:function"`` → the function (which takes a :class:`Result` and returns a
    mapping of metric names to numbers)."""
    if ":" not in spec:
        raise ValueError(f"metric function {spec!r}: expected MODULE:FUNCTION")
    mod, _, name = spec.partition(":")
    try:
        fn = getattr(importlib.import_module(mod), name)
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


def execute(task: RunTask) -> RunOutput:
    """Computes one run (in a worker). Never raises for a failing run: the error and traceback
    are returned in a failed :class:`RunOutput`."""
    from qoslab.simulate import run as run_sim

    started = time.time()
    t0 = time.perf_counter()
    who = worker_name()
    try:
        sc = Scenario(task.scenario_text, task.scenario_source)
        if sc.sha256() != task.key.scenario_sha256:
            raise RuntimeError("the scenario's hash differs on this worker (another qoslab build?)")
        res = run_sim(sc, task.key.seed)
        if res.violations:
            raise RuntimeError("conservation check failed: " + "; ".join(res.violations))
        summary = res.summary()
        metrics = standard_metrics(res, summary)
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
        return RunOutput(
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


# -- planning --------------------------------------------------------------------------------------


def _split_values(text: str) -> list[str]:
    """Splits ``V1,V2,...`` on commas outside brackets and quotes (so TOML arrays survive)."""
    out: list[str] = []
    depth = 0
    quote: str | None = None
    cur: list[str] = []
    for ch in text:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = None
            continue
        if ch in "\"'":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if quote or depth != 0:
        raise GridError("unbalanced quotes or brackets")
    out.append("".join(cur).strip())
    return out


def parse_grid(arg: str) -> tuple[str, list[str]]:
    """``"link.bottleneck.delay=5ms,10ms"`` → ``("link.bottleneck.delay", ["5ms", "10ms"])``."""
    if "=" not in arg:
        raise GridError(f"--grid {arg!r}: expected KEY=V1,V2,...")
    key, _, rest = arg.partition("=")
    key = key.strip()
    if not key or any(c.isspace() for c in key):
        raise GridError(f"--grid {arg!r}: expected KEY=V1,V2,... with a key before '='")
    try:
        values = _split_values(rest)
    except GridError as e:
        raise GridError(f"--grid {arg!r}: {e}") from None
    if not values or any(v == "" for v in values):
        raise GridError(f"--grid {arg!r}: empty value (expected KEY=V1,V2,...)")
    if len(set(values)) != len(values):
        raise GridError(f"--grid {arg!r}: a value is repeated")
    return key, values


def grid(axes: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    """The Cartesian product of ``axes`` as a list of parameter dicts (first axis slowest)."""
    keys = list(axes)
    for k in keys:
        if len(axes[k]) == 0:
            raise GridError(f"grid axis {k!r} has no values")
    return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*(axes[k] for k in keys))]


def _literal(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def override_points(
    base: Scenario, axes: Mapping[str, Sequence[Any]]
) -> list[tuple[dict[str, Any], Scenario]]:
    """Each point of the grid of scenario keys ``axes`` with its scenario (``--set`` semantics);
    an unknown key or a bad value raises :class:`qoslab.ScenarioError`."""
    return [(p, base.with_overrides([f"{k}={_literal(v)}" for k, v in p.items()])) for p in grid(axes)]


def seed_list(n: int, first: int = 1) -> list[int]:
    """``n`` consecutive seeds from ``first``."""
    if n < 1:
        raise ValueError(f"the number of seeds must be at least 1, got {n}")
    if first < 0:
        raise ValueError(f"seeds must be >= 0, got {first}")
    return list(range(first, first + n))


def plan(
    points: Iterable[tuple[Mapping[str, Any], Scenario]],
    seeds: Sequence[int],
    sweep: str,
    metrics: Sequence[str] = (),
) -> list[RunSpec]:
    """Every point crossed with every seed; ``metrics`` are extra metric functions
    (``"module:function"``) the runs compute besides :func:`standard_metrics`."""
    return [RunSpec(sc, s, dict(p), sweep, tuple(metrics)) for p, sc in points for s in seeds]


# -- progress --------------------------------------------------------------------------------------


class SweepProgress:
    """Runs done/total, failures and ETA: a rich bar on a terminal, plain lines otherwise."""

    def __init__(self, total: int, done: int = 0, label: str = "sweep", *, enabled: bool = True) -> None:
        self.total = total
        self.done = done
        self.skipped = done
        self.failed = 0
        self.label = label
        self.enabled = enabled and total > done
        self.t0 = time.perf_counter()
        self.tty = sys.stderr.isatty()
        self.bar: Any = None
        self.task: Any = None
        self.last_plain = 0.0
        if self.enabled and self.tty:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self.bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("runs"),
                TextColumn("{task.fields[failed]}"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                transient=False,
            )
            self.bar.start()
            self.task = self.bar.add_task(label, total=total, completed=done, failed="")

    def eta(self) -> float | None:
        computed = self.done - self.skipped
        if computed <= 0:
            return None
        rate = (time.perf_counter() - self.t0) / computed
        return rate * (self.total - self.done)

    def advance(self, ok: bool = True) -> None:
        self.done += 1
        self.failed += 0 if ok else 1
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.update(
                self.task, completed=self.done, failed=f"[red]{self.failed} failed" if self.failed else ""
            )
            return
        now = time.perf_counter() - self.t0
        step = max(1, self.total // 10)
        if self.done == self.total or (self.done - self.skipped) % step == 0 or now - self.last_plain > 10:
            self.last_plain = now
            eta = self.eta()
            eta_s = f", ETA {eta:.0f} s" if eta is not None and self.done < self.total else ""
            fail_s = f", {self.failed} failed" if self.failed else ""
            print(
                f"{self.label}: {self.done}/{self.total} runs done{fail_s}, {now:.1f} s elapsed{eta_s}",
                file=sys.stderr,
                flush=True,
            )

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None


# -- the coordinator -------------------------------------------------------------------------------


@dataclass
class SweepReport:
    """What a sweep did. ``failed`` lists (spec, error) of runs that failed every attempt."""

    total: int
    reused: int
    computed: int
    attempts: int
    failed: list[tuple[RunSpec, str]]
    wall_time_s: float
    compute_time_s: float

    @property
    def ok(self) -> bool:
        return not self.failed


def run_sweep(
    specs: Sequence[RunSpec],
    store: Store,
    executor: Executor | None = None,
    *,
    metrics: Sequence[str] = (),
    retries: int = 1,
    progress: bool = True,
    label: str = "sweep",
) -> SweepReport:
    """Computes the runs of ``specs`` that the store lacks (or holds as failed) and stores them.

    Each failing run is recorded with its error and retried ``retries`` times; the sweep carries
    on and the failures are listed in the returned report. ``metrics`` names extra metric
    functions (``"module:function"``) every run computes, on top of each spec's own. A stored
    run counts as done when it succeeded and was computed with every metric function asked for.
    """
    from qoslab.executors import LocalExecutor

    t0 = time.perf_counter()
    by_key: dict[RunKey, list[RunSpec]] = {}
    fns: dict[RunKey, tuple[str, ...]] = {}
    for s in specs:
        by_key.setdefault(s.key, []).append(s)
    for k, ss in by_key.items():
        fns[k] = tuple(sorted({*metrics, *(m for s in ss for m in s.metrics)}))
    for m in sorted({m for f in fns.values() for m in f}):
        resolve_metric_function(m)  # fail early, in the coordinator, on a typo
    store.acquire()
    try:
        stored = store.stored(by_key)
        ok_keys = [k for k, (st, have) in stored.items() if st == "ok" and set(fns[k]) <= have]
        store.add_memberships([(k, s.sweep, dict(s.params)) for k in ok_keys for s in by_key[k]])
        done = set(ok_keys)
        todo = [k for k in by_key if k not in done]
        tasks = [RunTask(k, by_key[k][0].scenario.text, by_key[k][0].scenario.source, fns[k]) for k in todo]
        prog = SweepProgress(len(by_key), len(ok_keys), label, enabled=progress)
        failed: dict[RunKey, str] = {}
        counters = {"attempts": 0, "compute": 0.0}

        def on_done(task: RunTask, out: RunOutput) -> list[RunTask]:
            counters["attempts"] += 1
            counters["compute"] += out.wall_time_s
            if out.ok and out.version != task.key.version:
                out = replace(
                    out,
                    ok=False,
                    error=f"worker {out.worker} runs qoslab {out.version}, "
                    f"the coordinator {task.key.version}",
                )
            spec0 = by_key[task.key][0]
            series: dict[str, str] = {}
            if out.ok:
                meta = {
                    "scenario": spec0.scenario.name,
                    "scenario_sha256": task.key.scenario_sha256,
                    "seed": str(task.key.seed),
                    "version": task.key.version,
                }
                series["queue"] = store.write_series(task.key, "queue", out.series_queue, meta)
                series["flow"] = store.write_series(task.key, "flow", out.series_flow, meta)
            store.record(
                key=task.key,
                scenario_name=spec0.scenario.name,
                scenario_source=spec0.scenario.source,
                scenario_toml=spec0.scenario.text,
                memberships=[(s.sweep, dict(s.params)) for s in by_key[task.key]],
                status="ok" if out.ok else "failed",
                attempt=task.attempt,
                error=out.error,
                traceback=out.traceback,
                wall_time_s=out.wall_time_s,
                worker=out.worker,
                started_at=out.started_at,
                finished_at=out.finished_at,
                metrics=out.metrics if out.ok else None,
                summary=out.summary,
                flows=out.flows,
                queues=out.queues,
                series=series or None,
                metric_functions=task.metrics,
            )
            if out.ok:
                failed.pop(task.key, None)
                prog.advance(True)
                return []
            failed[task.key] = out.error or "unknown error"
            if task.attempt <= retries:
                return [replace(task, attempt=task.attempt + 1)]
            prog.advance(False)
            return []

        try:
            if tasks:
                (executor or LocalExecutor()).run(tasks, on_done)
        finally:
            prog.close()
    finally:
        store.release()
    return SweepReport(
        total=len(by_key),
        reused=len(ok_keys),
        computed=len(todo),
        attempts=counters["attempts"],
        failed=[(by_key[k][0], e) for k, e in failed.items()],
        wall_time_s=time.perf_counter() - t0,
        compute_time_s=counters["compute"],
    )
