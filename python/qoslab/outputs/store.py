"""What a sweep writes (runs.csv, stats.csv, the standard :data:`METRICS`) and the result
store's tables (results.db and its time series files)."""

from __future__ import annotations

from qoslab.outputs.columns import Column, OutputFile
from qoslab.outputs.series import FLOW_INDEX

#: Columns that several of these tables share word for word (one definition each).
_SEED = Column("seed", "integer", "The run's seed.")
_STATUS = Column("status", "text", '"ok" or "failed".')
_WORKER = Column("worker", "text", 'The worker, as "HOST:PID".')
_WALL_TIME = Column("wall_time_s", "s", "Wall-clock time of the worker's computation.")


def _error(failed: str, ok: str) -> Column:
    """The ``error`` column: the one-line error of a ``failed`` row, ``ok`` for a successful one."""
    return Column("error", "text", f"The one-line error of a failed {failed}; {ok} for ok.")


# -- qoslab sweep --out DIR -------------------------------------------------------------------------

#: The metrics every run records (:data:`qoslab.runs.tasks.STANDARD_METRICS`), with their definitions.
METRICS: tuple[Column, ...] = (
    Column(
        "fairness_index",
        "ratio",
        "summary.json's fairness_index (Jain's index of the flows' throughput_bps).",
    ),
    Column("aggregate_throughput_bps", "bit/s", "summary.json's aggregate_throughput_bps."),
    Column("throughput_std_bps", "bit/s", "summary.json's throughput_std_bps."),
    Column("utilization", "fraction 0–1", "summary.json's utilization (the bottleneck's busier direction)."),
    Column(
        "drops_total",
        "packets",
        "summary.json's drops.total: every drop on every link direction over the whole run, policing "
        "included.",
    ),
    Column(
        "drops_bottleneck",
        "packets",
        "summary.json's drops.bottleneck: early + forced + overflow drops at the bottleneck's busier "
        "direction over the whole run.",
    ),
    *(
        Column(
            f"drops_bottleneck_{r}",
            "packets",
            f"summary.json's drops.bottleneck_{r}: {r} drops at the bottleneck's busier direction over the "
            "whole run.",
        )
        for r in ("early", "forced", "overflow")
    ),
    Column(
        "drop_rate_bottleneck_pps",
        "packets/s",
        "drops_bottleneck (over the whole run) / the scenario's duration; NaN for a zero duration.",
    ),
    Column("timeouts", "count", "Sum over the flows of timeouts (over the whole run)."),
    Column(
        "retransmitted_packets",
        "packets",
        "Sum over the flows of retransmitted_packets (over the whole run).",
    ),
    Column(
        "queue_mean_pkts",
        "packets",
        "Mean of series_queue's queue_packets over the rows of the bottleneck's busier direction with "
        "start ≤ time_s ≤ end of the measurement window (one row per physical queue on a multi-queue "
        "link); NaN without such samples.",
    ),
    Column(
        "red_avg_mean_pkts",
        "packets",
        "Mean of series_queue's avg_queue over the same rows for a discipline with one average (RED, "
        "ARED, FDD-RED, WRED's shared average, DWRED: avg_prec1 is NaN); NaN for RIO, RI+O, dsRED, "
        "DropTail and the disciplines without an average.",
    ),
    Column(
        "rio_avg_in_mean_pkts",
        "packets",
        "Mean of series_queue's avg_prec0 over the same rows for a discipline with an average per drop "
        "precedence (RIO-C, RIO-D and RI+O: avg_in; dsRED: virtual queue 0's); NaN for every other "
        "discipline. Runs stored before this split have avg_queue_mean_pkts instead (the mean of "
        "avg_queue: RED's average under RED, RIO's avg_in under RIO), still read as stored.",
    ),
    Column("events", "count", "summary.json's events."),
    Column("packet_hops", "count", "summary.json's packet_hops."),
)

_TYPED = (
    "typed: numbers as numbers, true/false as booleans, quantities as numbers with the unit in the "
    "column's name (`--grid queue.limit=20pkts,50pkts` → column `queue.limit_pkts`, values 20 and 50; "
    "several units of one kind → the base unit: bps, s, B), other values as given "
    "(`qoslab.report.results.typed_column`)"
)

_GRID_KEY = Column(
    "<grid key>",
    "key's unit",
    f"One column per `--grid KEY=…`, named KEY or KEY_UNIT: the value this run got, {_TYPED}.",
)

RUNS_CSV = OutputFile(
    "runs.csv",
    "sweep",
    "One row per run of the sweep (grid point × seed), ok or failed, read back from the result "
    "store; `qoslab results --table runs` shows the same runs with series_queue and series_flow and "
    "with params expanded to one column per key.",
    (
        Column("run_id", "integer", "The run's id in the result store (results.db runs.id)."),
        Column("scenario", "text", "The scenario's name."),
        Column(
            "scenario_sha256",
            "text",
            "SHA-256 of the canonical resolved scenario of this grid point; with seed and version it "
            "identifies the run.",
        ),
        _SEED,
        Column("version", "text", "The qoslab version that computed the run (summary.json's version)."),
        Column("status", "text", '"ok" or "failed" (after every retry).'),
        _error("run", "empty"),
        Column(
            "attempts",
            "count",
            "Computations of this run the coordinator has received, in every sweep so far.",
        ),
        Column(
            "wall_time_s",
            "s",
            "Wall-clock time of the worker's computation (simulation, summary, metrics, tables); "
            "machine-dependent.",
        ),
        Column("worker", "text", 'The worker that computed it, as "HOST:PID".'),
        Column("finished_at", "Unix time, s", "When the worker finished the run (its clock)."),
        Column(
            "params",
            "JSON text",
            "This sweep's grid point of the run ({key: value as given}), also for a run reused from "
            "another sweep.",
        ),
        Column(
            "sweep",
            "text",
            "This sweep's name (`--name`, default the scenario's name), also for a run reused from "
            "another sweep.",
        ),
        *METRICS,
        Column(
            "<extra metric>",
            "metric's unit",
            "One column per metric returned by a `--metric MODULE:FUNCTION` function.",
        ),
        _GRID_KEY,
    ),
)

_GROUP_KEY = Column(
    "<grid key>",
    "key's unit",
    "One column per `--grid KEY=…`, named KEY or KEY_UNIT: the grid point's value, typed as in runs.csv.",
)

STATS_CSV = OutputFile(
    "stats.csv",
    "sweep",
    "Statistics over seeds: one row per grid point × metric of `--show` (default fairness_index, "
    "aggregate_throughput_bps, utilization, drops_bottleneck), over the successful runs.",
    (
        _GROUP_KEY,
        Column("metric", "text", "The metric's name (a column of runs.csv)."),
        Column("n", "count", "Runs (seeds) with a finite value of the metric."),
        Column("mean", "metric's unit", "Mean of the metric over those runs."),
        Column("std", "metric's unit", "Sample standard deviation (ddof 1); NaN when n < 2."),
        Column(
            "ci_low",
            "metric's unit",
            "Lower end of the 95 % Student-t confidence interval, mean − t(0.975, n−1)·std/√n; NaN when n "
            "< 2.",
        ),
        Column("ci_high", "metric's unit", "Upper end of that interval; NaN when n < 2."),
        Column("half_width", "metric's unit", "(ci_high − ci_low) / 2."),
        Column("min", "metric's unit", "The smallest value over those runs."),
        Column("max", "metric's unit", "The largest value over those runs."),
        Column("seeds", "text", 'The seeds that contributed, as ranges ("1-3,5").'),
        Column("version", "text", "The qoslab version of the coordinator that wrote the table."),
    ),
)

# -- the result store -------------------------------------------------------------------------------

_RUN_ID = Column("run_id", "integer", "The run (runs.id).")

STORE_RUNS = OutputFile(
    "results.db: runs",
    "store",
    "One row per (scenario_sha256, seed, version): the run, ok or failed.",
    (
        Column("id", "integer", "The run's id."),
        Column("scenario_sha256", "text", "SHA-256 of the canonical resolved scenario."),
        _SEED,
        Column("version", "text", "The qoslab version that computed it (summary.json's version)."),
        Column("scenario", "text", "The scenario's name."),
        Column("scenario_source", "text", "Where the scenario came from, with the overrides applied."),
        Column(
            "sweep", "text", "The first sweep that stored the run (every sweep it belongs to: sweep_runs)."
        ),
        Column("params", "JSON text", "That sweep's grid point ({key: value as given})."),
        _STATUS,
        _error("run", "NULL"),
        Column("traceback", "text", "The Python traceback of a failed run; NULL for ok."),
        Column("attempts", "count", "Computations of this run received so far (rows of attempts)."),
        _WALL_TIME,
        _WORKER,
        Column("started_at", "Unix time, s", "When the worker started the run."),
        Column("finished_at", "Unix time, s", "When the worker finished the run."),
        Column(
            "series_queue",
            "text",
            "Path, relative to the store, of the run's series_queue Parquet file; NULL if failed.",
        ),
        Column(
            "series_flow",
            "text",
            "Path, relative to the store, of the run's series_flow Parquet file; NULL if failed.",
        ),
        Column(
            "metric_functions",
            "JSON text",
            "The extra metric functions (MODULE:FUNCTION) the run was computed with, sorted.",
        ),
        Column(
            "summary",
            "JSON text",
            "The run's summary.json, and `warmup`: the MSER-5 warm-up its worker computed from its "
            "series (qoslab.warmup.stored_form); NULL if failed.",
        ),
        Column(
            "series_queue_sha256",
            "text",
            "SHA-256 of the series_queue file, recorded when the run was stored (NULL if failed, or "
            "stored before schema 3); results --check, reading and a resumed sweep verify it.",
        ),
        Column("series_flow_sha256", "text", "The same for the series_flow file."),
    ),
)

STORE_METRICS = OutputFile(
    "results.db: metrics",
    "store",
    "One row per (run, metric): the standard metrics (the metric columns of runs.csv) and extra ones. "
    "Runs stored before red_avg_mean_pkts and rio_avg_in_mean_pkts have avg_queue_mean_pkts "
    "(deprecated: RED's average or RIO's avg_in, by the queue) instead; it is read as stored.",
    (
        _RUN_ID,
        Column("name", "text", "The metric's name."),
        Column("value", "metric's unit", "Its value; NULL for NaN or infinite."),
    ),
)

STORE_FLOWS = OutputFile(
    "results.db: flows",
    "store",
    "One row per (run, flow) of the successful runs.",
    (_RUN_ID, FLOW_INDEX),
    includes="flows.parquet",
)

STORE_QUEUES = OutputFile(
    "results.db: queues",
    "store",
    "One row per (run, link direction) of the successful runs.",
    (_RUN_ID, Column("queue", "text", 'The link direction as "LINK:DIR".')),
    includes="links.parquet",
)

STORE_ATTEMPTS = OutputFile(
    "results.db: attempts",
    "store",
    "One row per computation the coordinator received (each try of each run, ok or failed).",
    (
        Column("id", "integer", "The attempt's id."),
        Column("scenario_sha256", "text", "The run's scenario hash."),
        _SEED,
        Column("version", "text", "The run's qoslab version."),
        Column(
            "attempt", "integer", "1 for a sweep's first try of the run, + 1 for each retry in that sweep."
        ),
        _STATUS,
        _error("attempt", "NULL"),
        _WORKER,
        _WALL_TIME,
        Column("finished_at", "Unix time, s", "When the worker finished."),
    ),
)

STORE_SWEEP_RUNS = OutputFile(
    "results.db: sweep_runs",
    "store",
    "Sweep membership: one row per (sweep, run, grid point); a run shared by several sweeps (or by "
    "two points of one grid) is computed once and listed under each.",
    (
        Column("sweep", "text", "The sweep's name."),
        _RUN_ID,
        Column("params", "JSON text", "The grid point this sweep gave the run ({key: value as given})."),
    ),
)

STORE_SWEEPS = OutputFile(
    "results.db: sweeps",
    "store",
    "One row per sweep name: the grid, scenario and --set it was run with (another of any of "
    "these under the name is refused, `--replace` starts it afresh).",
    (
        Column("name", "text", "The sweep's name."),
        Column("grid", "JSON text", "Its grid: {key: [values as given, sorted]}."),
        Column("created", "Unix time, s", "When the name was given this grid, scenario and --set."),
        Column(
            "scenario_sha256",
            "text",
            "SHA-256 of the canonical scenario before any --set (NULL: claimed before sweeps kept it).",
        ),
        Column("scenario_source", "text", "The scenario file it was last run from (named in messages)."),
        Column(
            "sets",
            "JSON text",
            "Its --set assignments: a list, stripped around the key and '=', sorted unless a key is "
            "given twice.",
        ),
    ),
)

STORE_SCENARIOS = OutputFile(
    "results.db: scenarios",
    "store",
    "One row per distinct scenario (by hash).",
    (
        Column("sha256", "text", "SHA-256 of the canonical resolved scenario."),
        Column("name", "text", "The scenario's name."),
        Column("toml", "text", "The scenario's TOML text as run."),
    ),
)

STORE_META = OutputFile(
    "results.db: meta",
    "store",
    'The store\'s identity: rows format ("qoslab-results"), schema_version and created (local time).',
    (
        Column("key", "text", 'The entry: "format", "schema_version" or "created".'),
        Column("value", "text", "The entry's value, as text."),
    ),
)

STORE_SERIES_QUEUE = OutputFile(
    "series/<xx>/<run>.queue.parquet",
    "store",
    "A successful run's queue samples (xx: the scenario hash's first two hex digits; run: hash "
    "prefix, seed and version); Parquet metadata qoslab.scenario, scenario_sha256, seed, version.",
    (),
    includes="series_queue.parquet",
)

STORE_SERIES_FLOW = OutputFile(
    "series/<xx>/<run>.flow.parquet",
    "store",
    "A successful run's flow samples, named and tagged as the queue samples.",
    (),
    includes="series_flow.parquet",
)
