"""Sweeps: many runs over parameter grids and seeds, computed by an executor and stored once.

The coordinator (:func:`run_sweep`) asks the store which runs exist, hands the missing ones to an
executor (:mod:`qoslab.runs.executors`: a local process pool, a Dask cluster) as :class:`RunTask`
values, and commits the :class:`RunOutput` values it receives into the store in batches — it
alone writes the database (workers that see the store write their runs' series files).
Workers run :func:`~qoslab.runs.tasks.execute` (in :mod:`qoslab.runs.tasks`, shared with the executors),
which never raises: an exception becomes a failed output.
"""

from __future__ import annotations

import itertools
import json
import math
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd

from qoslab import _core
from qoslab.errors import printable
from qoslab.outputs.columns import Column
from qoslab.outputs.store import RUNS_CSV, STATS_CSV
from qoslab.report.csvsafe import write_csv
from qoslab.report.results import axis_column, load, typed_params
from qoslab.runs.executors import Executor, LocalExecutor
from qoslab.runs.schedule import schedule
from qoslab.runs.simulate import MAX_SEED, seed_error

# RunTask, RunOutput, execute and the metrics live in qoslab.runs.tasks (the executors import them from
# there); they stay importable from here, where callers have always found them.
from qoslab.runs.tasks import (  # noqa: F401 — re-exported
    COMPUTE_LOG_ENV,
    STANDARD_METRICS,
    RunOutput,
    RunTask,
    execute,
    failure,
    resolve_metric_function,
    standard_metrics,
    worker_name,
)
from qoslab.scenario import Scenario
from qoslab.stats import summarize
from qoslab.store import RunKey, RunRecord, Store, StoreError, SweepIdentity


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


def parse_axes(args: Iterable[str]) -> dict[str, list[str]]:
    """Several ``--grid`` arguments (:func:`parse_grid`) → ``{key: values}`` in the order given;
    a key given twice raises :class:`GridError`."""
    axes: dict[str, list[str]] = {}
    for a in args:
        k, vals = parse_grid(a)
        if k in axes:
            raise GridError(f"--grid {k}: the key is given twice")
        axes[k] = vals
    return axes


def parse_metric_names(text: str, extra: Sequence[str] = ()) -> list[str]:
    """``"fairness_index,utilization"`` → the metric names. Without ``extra`` metric functions
    (``"module:function"``, whose metric names are known only after a run) every name must be
    one of :data:`STANDARD_METRICS`, or ValueError."""
    names = [m.strip() for m in text.split(",") if m.strip()]
    if not names:
        raise ValueError(f"--show: name at least one metric (known: {', '.join(STANDARD_METRICS)})")
    unknown = [m for m in names if m not in STANDARD_METRICS]
    if unknown and not extra:
        raise ValueError(
            f"--show: unknown metric {', '.join(unknown)} (known: {', '.join(STANDARD_METRICS)})"
        )
    return names


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
    an unknown key or a bad value raises :class:`qoslab.ScenarioError`; more than
    :data:`MAX_RUNS` points, ValueError (before any is built)."""
    check_size(math.prod(len(v) for v in axes.values()), 1)
    return [(p, base.with_overrides([f"{k}={_literal(v)}" for k, v in p.items()])) for p in grid(axes)]


#: The most seeds a grid point and the most runs (points times seeds) one sweep plans: each
#: planned run holds its scenario and a row until the sweep ends (``--seeds 30000000`` took
#: 1.5 GB in 25 s before a run started).
MAX_SEEDS = 100_000
MAX_RUNS = 1_000_000


def seed_list(n: int, first: int = 1) -> list[int]:
    """``n`` consecutive seeds from ``first``: at most :data:`MAX_SEEDS`, within 0 to
    ``MAX_SEED`` (2^63 - 1), else ValueError (one line naming the option)."""
    if not 1 <= n <= MAX_SEEDS:
        raise ValueError(
            f"--seeds: the number of seeds a grid point must be at least 1 and at most "
            f"{MAX_SEEDS:,}, got {_shown(n)}"
        )
    if not 0 <= first <= MAX_SEED:
        raise ValueError(seed_error("--first-seed", first))
    if first + n - 1 > MAX_SEED:
        raise ValueError(
            f"--first-seed {first} with --seeds {n}: the last seed would pass 2^63 - 1 ({MAX_SEED})"
        )
    return list(range(first, first + n))


def _shown(n: int) -> str:
    return str(n) if len(str(n)) <= 30 else f"a number of {len(str(n))} digits"


def check_size(points: int, seeds: int) -> None:
    """Refuses (ValueError, one line) a sweep of more than :data:`MAX_RUNS` runs."""
    if points * seeds > MAX_RUNS:
        raise ValueError(
            f"--grid and --seeds: {points:,} grid points times {seeds:,} seeds is {points * seeds:,} "
            f"runs, above the {MAX_RUNS:,} one sweep may plan; split it into several sweeps"
        )


def plan(
    points: Iterable[tuple[Mapping[str, Any], Scenario]],
    seeds: Sequence[int],
    sweep: str,
    metrics: Sequence[str] = (),
) -> list[RunSpec]:
    """Every point crossed with every seed; ``metrics`` are extra metric functions
    (``"module:function"``) the runs compute besides :func:`standard_metrics`; more than
    :data:`MAX_RUNS` runs in all, ValueError."""
    points = list(points)
    check_size(len(points), len(seeds))
    return [RunSpec(sc, s, dict(p), sweep, tuple(metrics)) for p, sc in points for s in seeds]


# -- after the sweep: its runs and statistics over seeds --------------------------------------------


def sweep_runs(store: Store, specs: Sequence[RunSpec], axes: Iterable[str] = ()) -> pd.DataFrame:
    """The stored runs of ``specs`` (the ``runs`` table of :func:`qoslab.report.results.load`), with one
    column per grid key of ``axes`` holding the value the sweep gave it, typed by
    :func:`qoslab.report.results.typed_column` (``"50pkts"`` → 50 in column ``KEY_pkts``; find a key's
    column with :func:`axis_columns`). The ``params`` column keeps the values as given. Rows are in
    the order of ``specs`` (the plan's), not the order the runs were stored in, which depends on
    which worker finished first."""
    runs = load(store, "runs", keys=[s.key for s in specs], expand_params=False)
    rank: dict[tuple[str, int], int] = {}
    for i, s in enumerate(specs):
        rank.setdefault((s.key.scenario_sha256, s.key.seed), i)
    at = [rank[(h, sd)] for h, sd in zip(runs["scenario_sha256"], runs["seed"], strict=True)]
    runs = runs.iloc[sorted(range(len(at)), key=at.__getitem__)].reset_index(drop=True)
    by_run = {(s.key.scenario_sha256, s.key.seed): s for s in specs}
    mine = [by_run[(h, sd)] for h, sd in zip(runs["scenario_sha256"], runs["seed"], strict=True)]
    # a run first stored by another sweep is listed with this sweep's name and grid point
    runs["sweep"] = [s.sweep for s in mine]
    runs["params"] = [json.dumps(dict(s.params), sort_keys=True, default=str) for s in mine]
    axes = list(axes)
    for k in axes:
        runs[k] = [s.params[k] for s in mine]
    return typed_params(runs, axes)


def axis_columns(runs: pd.DataFrame, axes: Iterable[str]) -> list[str]:
    """The columns of :func:`sweep_runs`' table that hold the grid keys ``axes``, in order."""
    cols = []
    for k in axes:
        c = axis_column(runs, k)
        if c is None:
            raise KeyError(f"no column for swept key {k!r}")
        cols.append(c)
    return cols


def sweep_statistics(
    runs: pd.DataFrame, metrics: Sequence[str], by: Sequence[str] = ()
) -> pd.DataFrame | None:
    """Statistics over seeds (:func:`qoslab.stats.summarize`) of the successful ``runs`` for each
    group of ``by``; None when no run succeeded. A metric the runs lack raises ValueError."""
    ok = runs[runs["status"] == "ok"]
    if ok.empty:
        return None
    missing = [m for m in metrics if m not in ok.columns]
    if missing:
        raise ValueError(f"--show: the runs have no metric {', '.join(missing)}")
    return summarize(ok, metrics, by=list(by))


def _names(columns: Sequence[Column]) -> str:
    return ",".join(c.name for c in columns)


#: How the first line of each table a sweep writes starts and ends, from their declarations:
#: runs.csv's first columns; stats.csv's columns after its grid-point keys.
SWEEP_TABLES = {
    RUNS_CSV.name: (_names(RUNS_CSV.columns[:3]) + ",", ""),
    STATS_CSV.name: ("", _names(STATS_CSV.columns[1:])),
}


def foreign_table(out: Path) -> Path | None:
    """The first of ``out/runs.csv`` and ``out/stats.csv`` that exists and is not a table a sweep
    wrote (a sweep rewrites its own tables, whose runs stay in the store, but not a file of the
    same name that holds something else); None when both may be written."""
    for name, (start, end) in SWEEP_TABLES.items():
        path = out / name
        if not path.exists():
            continue
        try:
            with path.open("rb") as f:
                header = f.readline(65536).decode("utf-8").rstrip("\r\n")
        except (OSError, UnicodeDecodeError):
            return path
        if header and not (header.startswith(start) and header.endswith(end)):  # empty: nothing to lose
            return path
    return None


def write_sweep_tables(out: Path, runs: pd.DataFrame, stats: pd.DataFrame) -> tuple[Path, Path]:
    """Writes ``out/runs.csv`` (the runs without their time-series paths and checksums) and ``out/stats.csv``
    (with the qoslab version); returns both paths."""
    out.mkdir(parents=True, exist_ok=True)
    runs_csv, stats_csv = out / RUNS_CSV.name, out / STATS_CSV.name
    series = ["series_queue", "series_flow", "series_queue_sha256", "series_flow_sha256"]
    write_csv(runs.drop(columns=[c for c in series if c in runs.columns]), runs_csv)
    write_csv(stats.assign(version=_core.__version__), stats_csv)
    return runs_csv, stats_csv


# -- progress --------------------------------------------------------------------------------------


class SweepProgress:
    """Runs done/total, failures and ETA: a rich bar on a terminal, plain lines otherwise."""

    def __init__(self, total: int, done: int = 0, label: str = "sweep", *, enabled: bool = True) -> None:
        self.total = total
        self.done = done
        self.skipped = done
        self.failed = 0
        self.label = printable(label)  # a sweep's or scenario's name: never raw controls
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

#: The coordinator commits the runs it receives in batches, one transaction each: when this many
#: wait, or at the first run received when the last commit is :data:`BATCH_SECONDS` old (so a run
#: received after a pause is committed at once). ``run_sweep(batch_runs=1, batch_seconds=0)``
#: commits every run on its own.
BATCH_RUNS = 1000
BATCH_SECONDS = 0.5


class _Batch:
    """The runs received and not yet committed; :meth:`flush` commits them in one transaction
    (all or none: a coordinator killed before leaves them to be computed again on resume)."""

    def __init__(self, store: Store, runs: int, seconds: float) -> None:
        self.store = store
        self.runs = max(1, runs)
        self.seconds = seconds
        self.pending: list[RunRecord] = []
        self.last = time.monotonic()

    def add(self, rec: RunRecord) -> None:
        self.pending.append(rec)
        if len(self.pending) >= self.runs or time.monotonic() - self.last >= self.seconds:
            self.flush()

    def flush(self) -> None:
        recs, self.pending = self.pending, []  # a batch that fails is not tried again
        self.store.record_many(recs)
        self.last = time.monotonic()


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
    #: Memberships of the sweep name dropped by ``replace_grid`` (the runs stay in the store).
    memberships_dropped: int = 0

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
    grid: Mapping[str, Sequence[Any]] | None = None,
    identity: SweepIdentity | None = None,
    replace_grid: bool = False,
    batch_runs: int = BATCH_RUNS,
    batch_seconds: float = BATCH_SECONDS,
    worker_series: bool = True,
) -> SweepReport:
    """Computes the runs of ``specs`` that the store lacks (or holds as failed) and stores them.

    Each failing run is recorded with its error and retried ``retries`` times; the sweep carries
    on and the failures are listed in the returned report. ``metrics`` names extra metric
    functions (``"module:function"``) every run computes, on top of each spec's own. A stored
    run counts as done when it succeeded and was computed with every metric function asked for,
    and its time-series files pass their checksums (a damaged run is computed again).

    With ``grid`` (the sweep's axes, {key: values}), the specs' sweep name is claimed for that
    grid and ``identity`` (the scenario's hash and the ``--set`` assignments;
    :meth:`Store.claim_sweep`): a name stored with another grid, scenario or ``--set`` is refused
    with a StoreError naming what differs, unless ``replace_grid`` starts the name afresh (its
    memberships dropped, counted in the report's ``memberships_dropped``). Stored runs never
    change: a run already stored is only added to this sweep's memberships.

    Runs are committed in batches (``batch_runs``, ``batch_seconds``: :data:`BATCH_RUNS`). With
    ``worker_series``, workers that see the store write each run's series files into it
    themselves and send back their checksums (``RunTask.store_root``), which the coordinator
    verifies; without, the coordinator writes every file (the series travel back to it).
    """
    t0 = time.perf_counter()
    by_key: dict[RunKey, list[RunSpec]] = {}
    for s in specs:
        by_key.setdefault(s.key, []).append(s)
    fns = _metric_functions(by_key, metrics)
    dropped = 0
    store.acquire()
    try:
        if grid is not None:
            for name in dict.fromkeys(s.sweep for s in specs):
                dropped += store.claim_sweep(name, grid, identity=identity, replace=replace_grid)
        ok_keys = _reuse_stored(store, by_key, fns)
        done = set(ok_keys)
        todo = [k for k in by_key if k not in done]
        tasks = _run_tasks(store, by_key, fns, todo, worker_series)
        prog = SweepProgress(len(by_key), len(ok_keys), label, enabled=progress)
        coord = _Coordinator(store, by_key, retries, prog, _Batch(store, batch_runs, batch_seconds))
        try:
            if tasks:
                try:
                    (executor or LocalExecutor()).run(tasks, coord.on_done)
                finally:
                    coord.batch.flush()  # what was received is kept, however the executor ended
        finally:
            prog.close()
    finally:
        store.release()
    return SweepReport(
        total=len(by_key),
        reused=len(ok_keys),
        computed=len(todo),
        attempts=coord.attempts,
        failed=[(by_key[k][0], e) for k, e in coord.failed.items()],
        wall_time_s=time.perf_counter() - t0,
        compute_time_s=coord.compute_s,
        memberships_dropped=dropped,
    )


def _metric_functions(
    by_key: Mapping[RunKey, Sequence[RunSpec]], metrics: Sequence[str]
) -> dict[RunKey, tuple[str, ...]]:
    """The metric functions each run computes (the sweep's and its specs'), sorted; a name that
    does not resolve fails here, in the coordinator, before any run starts."""
    fns = {k: tuple(sorted({*metrics, *(m for s in ss for m in s.metrics)})) for k, ss in by_key.items()}
    for m in sorted({m for f in fns.values() for m in f}):
        resolve_metric_function(m)  # fail early, in the coordinator, on a typo
    return fns


def _reuse_stored(
    store: Store, by_key: Mapping[RunKey, Sequence[RunSpec]], fns: Mapping[RunKey, tuple[str, ...]]
) -> list[RunKey]:
    """The runs the store already holds done (ok, with every metric function asked for, series
    intact); each is added to the memberships of the specs that ask for it."""
    stored = store.stored(by_key)
    ok_keys = [k for k, (st, have) in stored.items() if st == "ok" and set(fns[k]) <= have]
    damaged = store.damaged(ok_keys)
    ok_keys = [k for k in ok_keys if k not in damaged]
    store.add_memberships([(k, s.sweep, dict(s.params)) for k in ok_keys for s in by_key[k]])
    return ok_keys


def _run_tasks(
    store: Store,
    by_key: Mapping[RunKey, Sequence[RunSpec]],
    fns: Mapping[RunKey, tuple[str, ...]],
    todo: Sequence[RunKey],
    worker_series: bool,
) -> list[RunTask]:
    """One task per run to compute, in the order :func:`~qoslab.runs.schedule.schedule` gives them."""
    tasks = [
        RunTask(
            k,
            by_key[k][0].scenario.text,
            by_key[k][0].scenario.source,
            fns[k],
            allow_paths=by_key[k][0].scenario.allow_paths,
            store_root=str(store.root.resolve()) if worker_series else None,
        )
        for k in todo
    ]
    return schedule(tasks, {k.scenario_sha256: by_key[k][0].scenario for k in todo}, store)


class _Coordinator:
    """The executor's ``on_done``: checks each output, stores its series, commits its record in a
    batch, and answers with the retry of a failed run while it has attempts left."""

    def __init__(
        self,
        store: Store,
        by_key: Mapping[RunKey, Sequence[RunSpec]],
        retries: int,
        prog: SweepProgress,
        batch: _Batch,
    ) -> None:
        self.store = store
        self.by_key = by_key
        self.retries = retries
        self.prog = prog
        self.batch = batch
        self.failed: dict[RunKey, str] = {}
        self.attempts = 0
        self.compute_s = 0.0

    def on_done(self, task: RunTask, out: RunOutput) -> list[RunTask]:
        self.attempts += 1
        self.compute_s += out.wall_time_s
        if out.ok and out.version != task.key.version:
            out = replace(
                out,
                ok=False,
                error=f"worker {out.worker} runs qoslab {out.version}, the coordinator {task.key.version}",
            )
        out, series = self._series(task, out)
        self.batch.add(self._record(task, out, series))
        if out.ok:
            self.failed.pop(task.key, None)
            self.prog.advance(True)
            return []
        self.failed[task.key] = out.error or "unknown error"
        if task.attempt <= self.retries:
            return [replace(task, attempt=task.attempt + 1)]
        self.prog.advance(False)
        return []

    def _series(self, task: RunTask, out: RunOutput) -> tuple[RunOutput, dict[str, str]]:
        """The run's series files in the store: adopted (checked) if the worker wrote them, else
        written here; an output whose files fail their checks becomes a failed one."""
        series: dict[str, str] = {}
        if out.ok and out.series_files is not None:
            try:
                series = self.store.adopt_series(task.key, out.series_files, out.worker)
            except StoreError as e:
                out = replace(out, ok=False, error=str(e), summary=None, flows=None, queues=None)
        elif out.ok:
            # a successful output carries its series unless the worker stored them (tasks.execute)
            assert out.series_queue is not None and out.series_flow is not None
            meta = {
                "scenario": self.by_key[task.key][0].scenario.name,
                "scenario_sha256": task.key.scenario_sha256,
                "seed": str(task.key.seed),
                "version": task.key.version,
            }
            series["queue"] = self.store.write_series(task.key, "queue", out.series_queue, meta)
            series["flow"] = self.store.write_series(task.key, "flow", out.series_flow, meta)
        return out, series

    def _record(self, task: RunTask, out: RunOutput, series: dict[str, str]) -> RunRecord:
        spec0 = self.by_key[task.key][0]
        return RunRecord(
            key=task.key,
            scenario_name=spec0.scenario.name,
            scenario_source=spec0.scenario.source,
            scenario_toml=spec0.scenario.text,
            memberships=[(s.sweep, dict(s.params)) for s in self.by_key[task.key]],
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
