"""Start-up of a short run: what `import qoslab` and `qoslab run` load, and that what replaces
the heavy imports computes the same numbers. Behaviour only: time is measured by `qoslab bench`
(its start-up column), never asserted."""

from __future__ import annotations

import contextlib
import io
import json
import random
import struct
import subprocess
import sys

import numpy as np
import pytest
import typer

from conftest import SCENARIOS
from qoslab import cli
from qoslab.report.pairwise import jain_index, np_std, np_sum

S1 = str(SCENARIOS / "fdd-red-s1.toml")
HEAVY = ("pandas", "pyarrow", "matplotlib", "numpy")

#: Runs `qoslab ARGS` through the CLI's own entry point in a fresh interpreter and prints, as
#: JSON, which of HEAVY it had imported by the end (the exit code of the command first).
_PROBE = """
import json, sys
sys.argv = ["qoslab", *sys.argv[1:]]
from qoslab.cli import main
try:
    main()
    code = 0
except SystemExit as e:
    code = e.code or 0
print(json.dumps([code, sorted(m for m in HEAVY if m in sys.modules)]))
""".replace("HEAVY", repr(HEAVY))


def _loaded_by(*args: str) -> list[str]:
    p = subprocess.run([sys.executable, "-c", _PROBE, *args], capture_output=True, text=True, timeout=120)
    code, loaded = json.loads(p.stdout.strip().splitlines()[-1])
    assert code == 0, p.stderr
    return list(loaded)


def test_import_qoslab_loads_none_of_the_heavy_modules():
    code = f"import sys, qoslab; print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert p.stdout.strip() == "[]"


def test_qoslab_run_summary_only_loads_none_of_the_heavy_modules(tmp_path):
    """`qoslab run FILE --out DIR --summary-only` writes summary.json with neither pandas, pyarrow,
    matplotlib nor numpy; `qoslab run FILE` (the printed table only) as well."""
    out = tmp_path / "o"
    assert _loaded_by("run", S1, "--out", str(out), "--summary-only") == []
    assert sorted(p.name for p in out.iterdir()) == [".qoslab-run", "scenario.toml", "summary.json"]
    assert (
        _loaded_by(
            "run", S1, "--set", "duration=5s", "--set", "measurement.start=1s", "--set", "measurement.end=5s"
        )
        == []
    )


def test_qoslab_run_with_tables_loads_none_of_the_heavy_modules(tmp_path):
    """The Parquet tables are written by the core's own writer from the core's array.array
    columns: `qoslab run FILE --out DIR` and `run(FILE, out=DIR)` import neither numpy, pandas,
    pyarrow nor matplotlib, and write every table."""
    from qoslab.runs.simulate import TABLES

    out = tmp_path / "o"
    assert _loaded_by("run", S1, "--out", str(out)) == []
    tables = sorted(f"{t}.parquet" for t in TABLES)
    written = sorted([*tables, ".qoslab-run", "scenario.toml", "summary.json"])
    assert sorted(p.name for p in out.iterdir()) == written
    lib = tmp_path / "lib"
    code = (
        "import sys\n"
        "from qoslab.runs.simulate import run\n"
        f"run({S1!r}, out={str(lib)!r})\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert p.stdout.strip() == "[]"
    assert sorted(p.name for p in lib.glob("*.parquet")) == tables


def _bits(x: float) -> bytes:
    return struct.pack("<d", x)


@pytest.mark.parametrize("seed", range(4))
def test_summary_sums_and_std_are_numpys_to_the_last_bit(seed):
    """summary.json's sums, standard deviation and Jain index, computed without numpy, equal
    numpy's bit for bit: the same additions in the same (pairwise) order, for lengths on both
    sides of numpy's 8-value and 128-value blocks and magnitudes far apart."""
    rng = random.Random(seed)
    lengths = [*range(0, 20), 127, 128, 129, 255, 256, 257, 1000, 1031, 5000, rng.randint(2, 20000)]
    for n in lengths:
        for kind in range(3):
            if kind == 0:
                xs = [rng.uniform(0, 1e7) for _ in range(n)]
            elif kind == 1:
                xs = [rng.lognormvariate(0, 6) * rng.choice((1, -1)) for _ in range(n)]
            else:
                xs = [rng.uniform(-1, 1) * 10.0 ** rng.randint(-12, 12) for _ in range(n)]
            a = np.asarray(xs)
            assert _bits(np_sum(xs)) == _bits(float(a.sum())), n
            if n:
                assert _bits(np_std(xs)) == _bits(float(np.std(a))), n
                s2 = float((a * a).sum())
                want = 1.0 if s2 == 0 else float(a.sum() ** 2 / (n * s2))
                assert _bits(jain_index(xs)) == _bits(want) and _bits(jain_index(a)) == _bits(want), n


def _help(cmd: typer.core.TyperGroup, args: list[str]) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.suppress(SystemExit):
        cmd.main(args=args, prog_name="qoslab")
    return buf.getvalue()


def test_the_cli_builds_only_the_command_it_runs_and_the_same_one(monkeypatch):
    """`qoslab NAME …` builds the group with only NAME (typer builds every command otherwise);
    the command is the one the whole group has: the same help, parameter for parameter. Bare
    `qoslab`, options and unknown names get the whole group."""
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setenv("TERM", "dumb")
    full = cli.command_for([])
    cli._plain_metavars(full)
    names = sorted(full.commands)
    assert {"run", "check", "sweep", "reproduce", "plot", "export-ns2", "bench"} <= set(names)
    for args in ([], ["--help"], ["--version"], ["runn"], ["-x", "run"]):
        assert sorted(cli.command_for(args).commands) == names
    for name in names:
        one = cli.command_for([name, "x"])
        cli._plain_metavars(one)
        assert list(one.commands) == [name]
        assert _help(one, [name, "--help"]) == _help(full, [name, "--help"]) != ""
        assert [p.opts for p in one.commands[name].params] == [p.opts for p in full.commands[name].params]
