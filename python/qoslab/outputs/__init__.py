"""Every file qoslab writes, with every column (or JSON key), its unit and its definition: the one
place that says what an output means, rendered as ``docs/outputs.md``.

Each definition was read from the code that computes the value (the Rust core's ``sim/measure.rs``,
``sim/window.rs``, ``sim/forward.rs``, ``sim/transport.rs``, ``net/link.rs``, the bindings'
column declarations in ``crates/qoslab-py/src/columns.rs``, and ``runs/simulate.py``, ``runs/tasks.py``,
``runs/sweep.py``, ``store/``). ``tests/test_outputs_doc.py`` runs real scenarios and fails when a
written column is not listed here, when a listed column is no longer written, or when the page is
stale; it also checks every column the bindings declare (``qoslab._core.TABLE_COLUMNS``) is
listed here, in the declared order.

The catalogue is split by job: :mod:`qoslab.outputs.columns` (the vocabulary),
:mod:`~qoslab.outputs.tables` (flows, transfers, classes, links), :mod:`~qoslab.outputs.series`
(conditioners, flow_drops, the time series), :mod:`~qoslab.outputs.summary` (summary.json and the
run's other files), :mod:`~qoslab.outputs.store` (the sweep's tables and the result store); this
module gathers them into :data:`OUTPUTS` and renders the page::

    python -m qoslab.outputs > docs/outputs.md     # regenerate the page
    python -m qoslab.outputs --check               # exit 1 if docs/outputs.md differs
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from qoslab.outputs.columns import UNITS, Column, OutputFile, R, W
from qoslab.outputs.series import (
    CONDITIONERS,
    FLOW_DROPS,
    SERIES_FLOW,
    SERIES_GAUGES,
    SERIES_METER,
    SERIES_QUEUE,
)
from qoslab.outputs.store import (
    METRICS,
    RUNS_CSV,
    STATS_CSV,
    STORE_ATTEMPTS,
    STORE_FLOWS,
    STORE_META,
    STORE_METRICS,
    STORE_QUEUES,
    STORE_RUNS,
    STORE_SCENARIOS,
    STORE_SERIES_FLOW,
    STORE_SERIES_QUEUE,
    STORE_SWEEP_RUNS,
    STORE_SWEEPS,
)
from qoslab.outputs.summary import PCAP, RUN_MARKER, SCENARIO_TOML, SUMMARY
from qoslab.outputs.tables import CLASSES, FLOWS, LINKS, TRANSFERS

__all__ = [
    "CLASSES",
    "CONDITIONERS",
    "DOC_PATH",
    "FLOWS",
    "FLOW_DROPS",
    "LINKS",
    "METRICS",
    "OUTPUTS",
    "PCAP",
    "R",
    "REGENERATE",
    "RUNS_CSV",
    "RUN_MARKER",
    "SCENARIO_TOML",
    "SERIES_FLOW",
    "SERIES_GAUGES",
    "SERIES_METER",
    "SERIES_QUEUE",
    "STATS_CSV",
    "STORE_ATTEMPTS",
    "STORE_FLOWS",
    "STORE_META",
    "STORE_METRICS",
    "STORE_QUEUES",
    "STORE_RUNS",
    "STORE_SCENARIOS",
    "STORE_SERIES_FLOW",
    "STORE_SERIES_QUEUE",
    "STORE_SWEEPS",
    "STORE_SWEEP_RUNS",
    "SUMMARY",
    "TRANSFERS",
    "UNITS",
    "W",
    "Column",
    "OutputFile",
    "columns",
    "docstring",
    "find",
    "get",
    "json_keys",
    "main",
    "markdown",
    "output_for",
]

#: The page this module renders, in a source checkout.
DOC_PATH = Path(__file__).resolve().parents[3] / "docs" / "outputs.md"
REGENERATE = "python -m qoslab.outputs > docs/outputs.md"

#: Every output, in the order of the page.
OUTPUTS: tuple[OutputFile, ...] = (
    SUMMARY,
    SCENARIO_TOML,
    RUN_MARKER,
    FLOWS,
    LINKS,
    CONDITIONERS,
    FLOW_DROPS,
    TRANSFERS,
    CLASSES,
    SERIES_QUEUE,
    SERIES_FLOW,
    SERIES_METER,
    SERIES_GAUGES,
    PCAP,
    RUNS_CSV,
    STATS_CSV,
    STORE_RUNS,
    STORE_METRICS,
    STORE_FLOWS,
    STORE_QUEUES,
    STORE_ATTEMPTS,
    STORE_SWEEP_RUNS,
    STORE_SWEEPS,
    STORE_SCENARIOS,
    STORE_META,
    STORE_SERIES_QUEUE,
    STORE_SERIES_FLOW,
)

_GROUPS: dict[str, tuple[str, str]] = {
    "run": (
        "`qoslab run SCENARIO --out DIR`",
        "Written into DIR by `qoslab run --out` (and `qoslab.run(..., out=DIR)`): summary.json, "
        "scenario.toml and the eight Parquet tables (no CSV copies; `--summary-only` writes the first "
        "two alone), plus any pcap captures. Each table's Parquet metadata holds qoslab.scenario, "
        "qoslab.seed and qoslab.version. A partial run (stopped early) writes the same files. DIR "
        "must be absent, empty or an earlier run's (replaced with `--force`); without `--out` a "
        "scenario that captures writes them into a fresh folder under qoslab-runs/.",
    ),
    "sweep": (
        "`qoslab sweep SCENARIO … --out DIR`",
        "Written into DIR after the sweep, from the result store.",
    ),
    "store": (
        "The result store (`--store DIR`, default `results/store` or `$QOSLAB_STORE`)",
        "`results.db` (SQLite; beside it the writer's lock results.db.lock and SQLite's WAL files) "
        "and the time series of its successful runs. `qoslab results --table "
        "NAME` and `qoslab.report.results.load(store, NAME)` read runs (the columns of runs.csv, with "
        "series_queue and series_flow), flows, queues, metrics, attempts, series_queue and series_flow, "
        "each joined with the run's run_id, scenario, scenario_sha256, seed, version, params and "
        "sweep, params expanded to one column per key; `--export FILE.csv|FILE.parquet` writes them.",
    ),
}

_INTRO = """\
Every file qoslab writes, with every column (or JSON key), its unit and its definition, read
from the code that computes it. `tests/test_outputs_doc.py` runs real scenarios and a sweep and
fails when a written column is missing here or a column listed here is no longer written.

Conventions:

- **Inside the measurement window**: between `[measurement] start` and `end` (default: the
  whole run). Flow and link event counters (`window_*`, `window_drops`, `flows[].window`) are
  the difference of snapshots taken at those two instants (the one at `start` before that
  instant's events: an event at exactly `start` counts inside the window, and also in a run
  whose duration is `start`); byte rates (`throughput_bps`,
  `goodput_bps`, `in_throughput_bps`, `utilization`) count what happened inside the window and
  divide by its length; the `*_prec*` window counters and `utilization` count events at a time t
  with start ≤ t < end.
- **Over the whole run**: from t = 0 to the scenario's duration (to `simulated_until_s` in a
  partial run).
- **Data packets** are the segments or datagrams of a flow; **ACKs** are the TCP receiver's
  acknowledgements. Flow counters count data packets unless they say ACKs; link counters count
  both.
- **Drop precedence** of a packet, from its DSCP: 0 for AFx1 and EF, 1 for AFx2, 2 for AFx3,
  best effort and everything else.
- **Link directions**: `ab` from the link's node `a` to node `b`, `ba` back; written `LINK:DIR`;
  `direction_index` = 2 × the link's index + 0 (ab) or 1 (ba). Flows, links and conditioners are
  numbered from 0 in the scenario's order after `count` expansion.
- **Units**: bit/s, bytes, packets, packets/s, s, ns; fraction 0–1; ratio (dimensionless);
  count (events); index (a 0-based number); Unix time, s (seconds since 1970-01-01 UTC).
  NaN stands for "not defined here" (UDP flows have no cwnd, DropTail no average).
"""


def get(name: str) -> OutputFile:
    """The output named ``name`` (exactly as in :data:`OUTPUTS`)."""
    for o in OUTPUTS:
        if o.name == name:
            return o
    raise KeyError(f"no output {name!r}")


def docstring(output: str | OutputFile, lead: str) -> str:
    """``lead`` followed by ``output``'s description and every column with its unit and
    definition: the docstrings of :class:`qoslab.runs.simulate.Result`'s tables."""
    o = get(output) if isinstance(output, str) else output
    lines = [lead, "", o.description, "", f"Columns (as in docs/outputs.md, {o.name}):", ""]
    lines += [f"- ``{c.name}`` ({c.unit}): {c.definition}" for c in columns(o)]
    return "\n".join(lines)


def columns(output: str | OutputFile) -> tuple[Column, ...]:
    """Every column of ``output``: its own, then those of the output it includes."""
    o = get(output) if isinstance(output, str) else output
    return o.columns + (columns(o.includes) if o.includes else ())


def find(output: str | OutputFile, column: str) -> Column | None:
    """The documented column of ``output`` called ``column``: an exact name first, then a pattern."""
    cols = columns(output)
    for c in cols:
        if not c.is_pattern and c.name == column:
            return c
    for c in cols:
        if c.is_pattern and c.matches(column):
            return c
    return None


def output_for(file_name: str) -> OutputFile | None:
    """The output a file written by ``qoslab run --out`` (a name in DIR) is."""
    for o in OUTPUTS:
        if o.group == "run" and o.matches(file_name):
            return o
    return None


def json_keys(obj: Mapping[str, Any], prefix: str = "") -> list[str]:
    """Every key of a JSON object as a dotted path, nested objects included; a list of objects
    contributes ``NAME[].KEY`` for the keys of its elements (the notation of summary.json's rows)."""
    out: list[str] = []
    for k, v in obj.items():
        path = f"{prefix}{k}"
        out.append(path)
        if isinstance(v, Mapping):
            out += json_keys(v, path + ".")
        elif isinstance(v, list) and v and all(isinstance(x, Mapping) for x in v):
            for x in v:
                out += [p for p in json_keys(x, path + "[].") if p not in out]
    return out


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def markdown() -> str:
    """docs/outputs.md: an introduction, then one section per output with its columns."""
    lines = [
        "# Output files",
        "",
        f"<!-- Generated by `{REGENERATE}` from python/qoslab/outputs/; do not edit. -->",
        "",
        _INTRO.rstrip(),
    ]
    for group, (title, text) in _GROUPS.items():
        lines += ["", f"## {title}", "", text]
        for o in OUTPUTS:
            if o.group != group:
                continue
            lines += ["", f"### `{o.name}`", "", o.description]
            if o.columns:
                lines += ["", "| name | unit | definition |", "|---|---|---|"]
                lines += [f"| `{c.name}` | {c.unit} | {_cell(c.definition)} |" for c in o.columns]
            if o.includes:
                lines += ["", f"Then every column of `{o.includes}`, in the same order."]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    import argparse  # here: `qoslab run` imports this module for summary.json's keys

    p = argparse.ArgumentParser(
        prog="python -m qoslab.outputs",
        description="Print docs/outputs.md (every output file and column), or check it is up to date.",
    )
    p.add_argument("--check", action="store_true", help="Exit 1 if the page differs from what this prints.")
    p.add_argument(
        "--path", type=Path, default=DOC_PATH, help="The page to check (default: docs/outputs.md)."
    )
    args = p.parse_args(argv)
    text = markdown()
    if args.check:
        current = args.path.read_text() if args.path.is_file() else None
        if current != text:
            print(f"{args.path} is stale: regenerate it with `{REGENERATE}`", file=sys.stderr)
            return 1
        return 0
    sys.stdout.write(text)
    return 0
