"""qoslab.outputs (and docs/outputs.md, generated from it) documents exactly what qoslab writes:
real runs (a plain RED scenario, a DiffServ one with host markers and a pcap capture, a run stopped
by its time budget) and a small sweep with its result store are read back, and every file, column
and JSON key they hold must be documented, and every documented one must have been written."""

from __future__ import annotations

import csv
import json
import os
import sqlite3
import subprocess
from collections.abc import Mapping
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from conftest import QOSLAB, ROOT, SCENARIOS
from qoslab import outputs, schema

EXAMPLES = ROOT / "scenarios" / "examples"
SHORT = ["--set", "duration=5s", "--set", "measurement.start=1s", "--set", "measurement.end=5s"]
GRID_KEY = "tcp.window"
EXTRA_METRIC = "queue_peak_pkts"  # what sweep_helpers:queue_peak returns
#: The only columns of the sweep tables a placeholder may stand for (the grid key and the extra
#: metric this test asks for): any other undocumented column fails.
PATTERN_HITS = {
    "runs.csv": {GRID_KEY: "<grid key>", EXTRA_METRIC: "<extra metric>"},
    "stats.csv": {GRID_KEY: "<grid key>"},
}


def _qoslab(*args: str, expect: int = 0, env: Mapping[str, str] | None = None) -> None:
    p = subprocess.run([QOSLAB, *args], capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == expect, (args, p.stdout, p.stderr)


def _file_columns(path: Path) -> set[str]:
    """The columns (or JSON keys, as dotted paths) of one output file; none for TOML and pcap."""
    if path.suffix == ".parquet":
        return set(pq.read_schema(path).names)
    if path.suffix == ".json":
        return set(outputs.json_keys(json.loads(path.read_text())))
    if path.suffix == ".csv":
        with path.open(newline="") as f:
            return set(next(csv.reader(f)))
    return set()


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[set[str]]]:
    """Output name → the columns of each file of that output the runs and the sweep wrote."""
    tmp = tmp_path_factory.mktemp("outputs")
    s1, ard = str(SCENARIOS / "fdd-red-s1.toml"), str(SCENARIOS / "ard-rio-4flows.toml")
    run_dirs = [tmp / "red", tmp / "diffserv", tmp / "partial", tmp / "mixed"]
    _qoslab("run", s1, *SHORT, "--out", str(run_dirs[0]))
    # finite transfers, an arrival process and several classes (transfers, classes, summary keys)
    _qoslab("run", str(SCENARIOS / "mixed-traffic.toml"), *SHORT, "--out", str(run_dirs[3]))
    capture = 'capture=[{link = "bottleneck", direction = "both"}]'
    _qoslab("run", ard, *SHORT, "--set", capture, "--out", str(run_dirs[1]))
    # A 5000 s run (about a second of wall-clock time) allowed 10 ms stops early and writes
    # partial outputs (the 100 s run once used here can finish inside 10 ms).
    _qoslab("run", s1, "--set", "duration=5000s", "--max-time", "0.01s", "--out", str(run_dirs[2]), expect=1)
    assert json.loads((run_dirs[2] / "summary.json").read_text())["partial"] is True
    # Every queue kind that publishes gauges (columns of series_queue): its example, so that
    # each gauge column the catalogue derives from the kinds' declarations is seen written.
    for kind, obj in schema.queue_kinds().items():
        if obj.get("x-gauges"):
            example = next(p for p in sorted(EXAMPLES.glob("*.toml")) if f'type = "{kind}"' in p.read_text())
            run_dirs.append(tmp / f"gauges-{kind}")
            _qoslab("run", str(example), *SHORT, "--out", str(run_dirs[-1]))

    store, sweep_out = tmp / "store", tmp / "sweep"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "tests"), os.environ.get("PYTHONPATH", "")]),
    }
    _qoslab(
        "sweep", s1, *SHORT, "--grid", f"{GRID_KEY}=20,1000", "--seeds", "1", "--jobs", "1",
        "--metric", "sweep_helpers:queue_peak", "--store", str(store), "--out", str(sweep_out), "--quiet",
        env=env,
    )  # fmt: skip

    found: dict[str, list[set[str]]] = {}

    def add(name: str, cols: set[str]) -> None:
        found.setdefault(name, []).append(cols)

    for d in run_dirs:
        for f in sorted(d.iterdir()):
            o = outputs.output_for(f.name)
            assert o is not None, f"qoslab run wrote {f.name}, which qoslab.outputs does not document"
            add(o.name, _file_columns(f))
    for f in sorted(sweep_out.iterdir()):
        add(f.name, _file_columns(f))
    con = sqlite3.connect(store / "results.db")
    try:
        for (table,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
            add(f"results.db: {table}", {r[1] for r in con.execute(f"PRAGMA table_info({table})")})
    finally:
        con.close()
    for f in sorted((store / "series").rglob("*.parquet")):
        rel = f.relative_to(store).as_posix()
        matching = [o for o in outputs.OUTPUTS if o.group == "store" and o.matches(rel)]
        assert len(matching) == 1, f"the store holds {rel}: documented as {[o.name for o in matching]}"
        add(matching[0].name, _file_columns(f))
    return found


def test_every_written_file_and_column_is_documented(written: dict[str, list[set[str]]]) -> None:
    names = {o.name for o in outputs.OUTPUTS}
    undocumented = []
    for name, files in written.items():
        assert name in names, f"{name} is written but not documented in qoslab.outputs"
        for cols in files:
            for c in sorted(cols):
                col = outputs.find(name, c)
                if col is not None and col.is_pattern and name in PATTERN_HITS:
                    # A placeholder of the sweep tables stands for anything: only the grid key and
                    # the extra metric asked for may hide behind one.
                    placeholders = {p.name for p in outputs.columns(name) if p.is_pattern}
                    col = col if PATTERN_HITS[name].get(c) in placeholders else None
                if col is None:
                    undocumented.append(f"{name}: {c}")
    assert not undocumented, (
        "columns written but not documented in python/qoslab/outputs.py (add them, then run "
        f"`{outputs.REGENERATE}`):\n" + "\n".join(undocumented)
    )


def test_every_documented_file_and_column_is_written(written: dict[str, list[set[str]]]) -> None:
    # A queue kind's gauge columns are seen in series_queue.parquet (the runs of the kinds'
    # examples); the store's series, written by the sweep of a RED scenario, need not show them.
    gauges = {g["name"] for o in schema.queue_kinds().values() for g in o.get("x-gauges", [])}
    missing = []
    for o in outputs.OUTPUTS:
        assert o.name in written, f"{o.name} is documented but none of the runs wrote it"
        seen = set().union(*written[o.name])
        for col in outputs.columns(o):
            if col.name in gauges and o.name != outputs.SERIES_QUEUE.name:
                continue
            if not any(col.matches(c) for c in seen):
                missing.append(f"{o.name}: {col.name}")
    assert not missing, "documented in qoslab.outputs but never written (renamed?):\n" + "\n".join(missing)


def test_summary_json_nests_per_flow_keys(written: dict[str, list[set[str]]]) -> None:
    # The per-flow entries and their window counters are checked key by key, not as one blob.
    keys = set().union(*written["summary.json"])
    assert {"flows[].throughput_bps", "flows[].window.drops_prec1", "drops.bottleneck_policed"} <= keys
    assert any(k.startswith("utilization_by_link.bottleneck:") for k in keys)


def test_the_page_is_generated_from_the_module() -> None:
    page = ROOT / "docs" / "outputs.md"
    assert page.read_text() == outputs.markdown(), (
        f"docs/outputs.md is stale: regenerate it with `{outputs.REGENERATE}`"
    )
    assert outputs.main(["--check"]) == 0


def test_check_fails_on_a_stale_page(tmp_path: Path) -> None:
    stale = tmp_path / "outputs.md"
    stale.write_text(outputs.markdown().replace("bit/s", "bps", 1))
    assert outputs.main(["--check", "--path", str(stale)]) == 1


def test_units_and_definitions_are_consistent() -> None:
    for o in outputs.OUTPUTS:
        names = [c.name for c in outputs.columns(o)]
        assert len(names) == len(set(names)), f"{o.name}: a column is listed twice"
        for c in o.columns:
            assert c.unit in outputs.UNITS, f"{o.name}: {c.name}: unit {c.unit!r} is not in outputs.UNITS"
            assert c.definition.endswith(".") and len(c.definition) > 10, f"{o.name}: {c.name}"


def test_the_documented_tables_and_metrics_are_the_code_s() -> None:
    from qoslab.runs.simulate import TABLES
    from qoslab.runs.tasks import STANDARD_METRICS

    parquet = {o.name for o in outputs.OUTPUTS if o.group == "run" and o.name.endswith(".parquet")}
    assert parquet == {f"{t}.parquet" for t in TABLES}
    assert [m.name for m in outputs.METRICS] == list(STANDARD_METRICS)


def test_every_result_table_documents_its_columns() -> None:
    # help(qoslab.runs.simulate.Result.flows) lists the table's columns, read from qoslab.outputs
    import pydoc

    from qoslab.runs.simulate import TABLES, Result

    for table in TABLES:
        doc = getattr(Result, table).__doc__
        want = outputs.columns(f"{table}.parquet")
        assert want and all(f"- ``{c.name}`` ({c.unit}): " in doc for c in want), table
    assert "- ``in_throughput_bps`` (bit/s): " in pydoc.render_doc(Result, renderer=pydoc.plaintext)


def test_every_column_the_bindings_declare_is_documented_in_their_order() -> None:
    # The core's tables come to Python with the columns declared once in
    # crates/qoslab-py/src/columns.rs (qoslab._core.TABLE_COLUMNS); each must be documented in
    # its output, and the documented order must be the declared one.
    from qoslab import _core

    declared = dict(_core.TABLE_COLUMNS)
    # series_gauges' gauge index becomes the gauge's name in Python (qoslab.runs.simulate)
    declared["series_gauges"] = [n for n in declared["series_gauges"] if n != "gauge"]
    assert {"flows", "links", "series_queue", "transfers"} <= declared.keys(), declared.keys()
    for table, names in declared.items():
        if table == "processes":  # summary.json's arrivals.<process>.*
            found = [outputs.find(outputs.SUMMARY, f"arrivals.P.{n}") for n in names]
            assert all(found), (table, names)
            continue
        found = [outputs.find(f"{table}.parquet", n) for n in names]
        missing = [n for n, c in zip(names, found, strict=True) if c is None]
        assert not missing, f"{table}: declared by the bindings, not in qoslab.outputs: {missing}"
        documented = [c.name for c in outputs.columns(f"{table}.parquet") if c.name in names]
        assert documented == names, f"{table}: documented in another order than declared"
