"""The lean `qoslab run` (qoslab.entry, no typer, click or rich) against the typer path
(qoslab.cli.main): the same stdout, stderr and exit status, byte for byte, for runs, errors and
the invocations it leaves to typer; and the arguments it accepts parse as typer (its copy of
click) parses them."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import SCENARIOS
from qoslab import cli
from qoslab.entry import parse_run

S1 = str(SCENARIOS / "fdd-red-s1.toml")
SHORT = ["--set", "duration=20s", "--set", "measurement.start=5s", "--set", "measurement.end=20s"]
NOT_LEAN = ("typer", "click", "rich", "numpy", "pandas", "pyarrow", "matplotlib")

#: `qoslab ARGS` through MODULE's main (qoslab.entry or qoslab.cli) as the console script calls
#: it; writes the modules of NOT_LEAN it had loaded to $PROBE_OUT, exits with main's status.
_PROBE = """
import importlib, json, os, sys
module = sys.argv[1]
sys.argv = ["qoslab", *sys.argv[2:]]
try:
    code = importlib.import_module(module).main()
except SystemExit as e:
    code = e.code
with open(os.environ["PROBE_OUT"], "w") as f:
    json.dump(sorted(m for m in NOT_LEAN if m in sys.modules), f)
sys.exit(code)
""".replace("NOT_LEAN", repr(NOT_LEAN))

_WALL = re.compile(r"in [0-9.]+ s wall \([0-9.]+ M hops/s\)")


def _qoslab(module: str, args: list[str], tmp: Path, env: dict[str, str] | None = None):
    """(status, stdout, stderr with the wall time masked, modules of NOT_LEAN loaded)."""
    probe = tmp / "probe.json"
    e = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE", "COLUMNS")}
    p = subprocess.run(
        [sys.executable, "-c", _PROBE, module, *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**e, "PROBE_OUT": str(probe), **(env or {})},
    )
    loaded = json.loads(probe.read_text()) if probe.exists() else None
    return p.returncode, _WALL.sub("in X s wall (X M hops/s)", p.stdout), p.stderr, loaded


def _same(args: list[str], tmp: Path, out: Path | None = None, lean: bool = True) -> tuple[int, str, str]:
    """Runs ARGS through the lean entry point, the typer path and the typer path with rich
    printing everything (FORCE_COLOR empty: rich's plain output); asserts the three agree and
    that the entry point took the lean path (or left ARGS to typer when ``lean`` is false)."""
    runs = []
    for module, env in (("qoslab.entry", None), ("qoslab.cli", None), ("qoslab.cli", {"FORCE_COLOR": ""})):
        if out is not None:
            shutil.rmtree(out, ignore_errors=True)
        *r, loaded = _qoslab(module, args, tmp, env)
        runs.append(tuple(r))
        if module == "qoslab.entry":
            if lean:
                assert loaded == [] or set(loaded) <= {"numpy", "pyarrow"}, loaded  # the tables' writer
            else:
                assert "typer" in loaded, loaded
    assert runs[0] == runs[1] == runs[2], runs
    return runs[0]


def test_a_run_with_tables_prints_and_writes_the_same(tmp_path):
    out = tmp_path / "o"
    code, stdout, stderr = _same(["run", S1, "--out", str(out), *SHORT], tmp_path, out)
    assert code == 0 and stderr == "", stderr
    assert "┃ flow ┃ throughput (kbps) ┃" in stdout
    # a line longer than the console is wrapped (by rich, and the same by qoslab.report.textable)
    assert f"wrote{out}/summary.jsonandParquettables" in "".join(stdout.split())
    assert (out / "summary.json").exists()


def test_summary_only_and_the_option_spellings(tmp_path):
    out = tmp_path / "o"
    args = ["run", "--seed=3", S1, "--summary-only", "--out=" + str(out), "--set=duration=10s"]
    args += ["--set", "measurement.start=2s", "--set", "measurement.end=10s", "--max-memory", "8GB"]
    code, stdout, stderr = _same(args, tmp_path, out)
    assert code == 0 and "seed 3" in stdout and "".join(stdout.split()).endswith(f"wrote{out}/summary.json")
    assert sorted(p.name for p in out.iterdir()) == [".qoslab-run", "scenario.toml", "summary.json"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", S1, "--summary-only"], "error: --summary-only writes summary.json"),
        (["run", S1, "--set", "no.such.key=1"], "error: "),
        (["run", "no/such/file.toml"], "error: "),
        (["run", S1, "--max-memory", "lots"], "error: --max-memory"),
    ],
)
def test_errors_are_the_same(tmp_path, args, message):
    code, stdout, stderr = _same(args, tmp_path)
    assert code == 1 and stdout == "" and stderr.startswith(message), stderr


def test_a_diffserv_run_prints_the_second_table_the_same(tmp_path):
    code, stdout, _ = _same(["run", str(SCENARIOS / "ard-rio-4flows.toml"), *SHORT], tmp_path)
    assert code == 0 and "DiffServ: colours and drops by drop precedence" in stdout
    assert "│ drops AFx1 │" not in stdout and "┃ drops AFx1 ┃" in stdout


def test_more_than_forty_flows_print_the_same_caption(tmp_path):
    """45 flows (the 20-flow ARD scenario, widened): both tables leave 5 rows out, captioned."""
    text = (SCENARIOS / "ard-rio-20flows.toml").read_text()
    assert text.count("count = 20") == 4
    text = re.sub(r"delay = \[.*\]", 'delay = "9ms"', text.replace("count = 20", "count = 45"))
    sc = tmp_path / "ard-rio-45flows.toml"
    sc.write_text(text)
    window = ["--set", "measurement.start=1s", "--set", "measurement.end=5s"]
    code, stdout, _ = _same(["run", str(sc), "--set", "duration=5s", *window], tmp_path)
    assert code == 0
    assert " ".join(stdout.split()).count("5 of 45 flows not shown") == 2, stdout  # the second wraps


@pytest.mark.parametrize(
    "args",
    [
        ["run", S1, "--seed", "x"],
        ["run", S1, "--seed"],
        ["run", S1, "--bogus"],
        ["run"],
        ["run", "--help"],
        ["run", S1, "extra.toml"],
        ["check", S1],
    ],
)
def test_what_the_lean_path_does_not_parse_goes_to_typer(tmp_path, args):
    assert parse_run(args) is None
    _same(args, tmp_path, lean=False)


def test_parse_run_reads_the_usual_invocations():
    assert parse_run(["run", S1]) == {"scenario": Path(S1), "set_": None}
    assert parse_run(["run", S1, "--seed", "-2"]) is None  # a value like an option: click's call
    assert parse_run(["run", S1, "--seed", "+7", "--set", "a=1", "--set=b=2", "--summary-only"]) == {
        "scenario": Path(S1),
        "seed": 7,
        "set_": ["a=1", "b=2"],
        "summary_only": True,
    }
    assert parse_run(["run", S1, "--seed", "1", "--seed", "2"]) is None
    assert parse_run(["run", S1, "--allow-path", "a", "--allow-path=b", "--force"]) == {
        "scenario": Path(S1),
        "set_": None,
        "allow_path": [Path("a"), Path("b")],
        "force": True,
    }


TOKENS = [S1, "--seed", "3", "+4", "٣", "x", "--seed=5", "--out", "d", "--out=", "--set", "a=1"]
TOKENS += ["--set=b=2", "--summary-only", "--summary-only=1", "--max-time", "1h", "--max-capture=2GB"]
TOKENS += ["--", "-", "-5", "s", "--force", "--allow-path", "--allow-path=e"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(TOKENS), max_size=8))
def test_what_the_lean_path_accepts_click_parses_to_the_same_values(args):
    mine = parse_run(["run", *args])
    if mine is None:
        return
    cmd = cli.command_for(["run", "x"]).commands["run"]
    ctx = cmd.make_context("run", list(args))  # raises if click refuses them
    typer_values = {k: v for k, v in ctx.params.items() if v not in (None, False, ())}
    for k in ("scenario", "out"):
        if k in typer_values:
            typer_values[k] = Path(typer_values[k])
    if "set_" in typer_values:
        typer_values["set_"] = list(typer_values["set_"])
    if "allow_path" in typer_values:
        typer_values["allow_path"] = [Path(p) for p in typer_values["allow_path"]]
    assert {k: v for k, v in mine.items() if v is not None} == typer_values


def test_the_lean_run_loads_neither_typer_click_rich_nor_the_heavy_modules(tmp_path):
    """As tests/test_startup.py for the typer path: `qoslab run FILE --out DIR --summary-only`
    through the console script's entry point, with none of typer, click, rich, numpy, pandas,
    pyarrow or matplotlib imported by the end."""
    out = tmp_path / "o"
    args = ["run", S1, "--out", str(out), "--summary-only"]
    code, stdout, stderr, loaded = _qoslab("qoslab.entry", args, tmp_path)
    assert code == 0 and stderr == "" and "Jain index" in stdout
    assert loaded == []
    assert sorted(p.name for p in out.iterdir()) == [".qoslab-run", "scenario.toml", "summary.json"]
