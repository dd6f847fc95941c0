"""A reproduction's folder ``OUT/NAME`` is marked as ``qoslab run`` marks its folders
(``.qoslab-run``): a reproduction killed at any phase (its runs, its analysis, its writing)
resumes with the same command; a folder qoslab did not mark is never emptied (one line instead),
and a symbolic link there is refused in one line before any run."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
from pathlib import Path

import qoslab
from conftest import QOSLAB, one_line_error

# A two-run experiment whose process kills itself (SIGKILL) in the phase KILL_AT names.
PLUGIN = """
import os
import signal

from qoslab import builder as b
import qoslab.reproduction.runner as runner
from qoslab.reproduction import Experiment, Options, Sweep, register

KILL_AT = os.environ.get("KILL_AT")


def die(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)


if KILL_AT == "runs":  # one run stored, then killed before the others
    whole = runner.run_sweep

    def run_sweep(specs, *args, **kwargs):
        whole(specs[:1], *args, **kwargs)
        die()

    runner.run_sweep = run_sweep
if KILL_AT == "writing":  # tables and runs.csv written, report.md not
    runner.git_revision = die


def plan(opts: Options) -> list[Sweep]:
    points = [({"rate": "1Mbps"}, b.dumbbell(2, bottleneck_rate="1Mbps", duration="2s").to_scenario())]
    return [Sweep("rate", points, opts.seeds, "bottleneck rate")]


def analyse(ctx) -> None:
    st = ctx.stats("rate", ["utilization"])
    ctx.table("utilization", st, title="Utilisation by rate", columns=["rate", "mean", "seeds"])
    if KILL_AT == "analysis":
        die()


register(Experiment(name="tiny", title="tiny", paper="none", summary="folder test",
                    plan=plan, analyse=analyse, seeds=2, quick_seeds=1))
"""


def reproduce(tmp_path: Path, seeds: int, kill_at: str | None = None) -> subprocess.CompletedProcess[str]:
    plugin = tmp_path / "tiny_study.py"
    plugin.write_text(PLUGIN)
    pkg = str(Path(qoslab.__file__).resolve().parents[1])
    env = {**os.environ, "QOSLAB_PLUGINS": str(plugin), "PYTHONPATH": pkg}
    env.pop("KILL_AT", None)
    if kill_at is not None:
        env["KILL_AT"] = kill_at
    cmd = [QOSLAB, "reproduce", "tiny", "--seeds", str(seeds), "--executor", "serial", "--quiet"]
    cmd += ["--out", str(tmp_path / "out"), "--store", str(tmp_path / "store")]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)


def stored_runs(tmp_path: Path) -> int:
    db = tmp_path / "store" / "results.db"
    if not db.exists():
        return 0
    with sqlite3.connect(db) as c:
        return int(c.execute("SELECT COUNT(*) FROM runs").fetchone()[0])


def test_a_reproduction_killed_at_any_phase_resumes_with_the_same_command(tmp_path):
    d = tmp_path / "out" / "tiny"
    p = reproduce(tmp_path, 1)
    assert p.returncode == 0, p.stderr
    marker = json.loads((d / ".qoslab-run").read_text())
    assert marker["format"] == "qoslab-run" and marker["reproduction"] == "tiny"
    # killed in its runs (one of two new runs stored), then in its analysis, then in its writing
    for phase, seeds in (("runs", 3), ("analysis", 3), ("writing", 3)):
        p = reproduce(tmp_path, seeds, phase)
        assert p.returncode == -signal.SIGKILL, (phase, p.returncode, p.stderr)
        assert (d / ".qoslab-run").is_file(), phase
        if phase != "runs":
            assert not (d / "report.md").exists() and (d / "utilization.csv").exists(), phase
    assert (d / "runs.csv").exists()  # the writing phase had begun
    p = reproduce(tmp_path, 3)
    assert p.returncode == 0, p.stderr
    assert "tiny: 3 runs (0 computed, 3 reused" in p.stdout, p.stdout
    assert "Utilisation by rate" in (d / "report.md").read_text()
    assert stored_runs(tmp_path) == 3


def test_a_folder_qoslab_did_not_mark_is_never_emptied(tmp_path):
    d = tmp_path / "out" / "tiny"
    d.mkdir(parents=True)
    (d / "report.md").write_text("my notes\n")
    (d / "thesis.tex").write_text("\\documentclass{article}\n")
    msg = one_line_error(reproduce(tmp_path, 1))
    assert str(d) in msg and "qoslab did not write" in msg and "--out" in msg, msg
    assert sorted(x.name for x in d.iterdir()) == ["report.md", "thesis.tex"]
    assert (d / "report.md").read_text() == "my notes\n"
    assert stored_runs(tmp_path) == 0  # refused before any run
    # a qoslab run's folder is not a reproduction's either
    (d / "report.md").unlink()
    (d / "thesis.tex").unlink()
    (d / ".qoslab-run").write_text(json.dumps({"format": "qoslab-run", "scenario": "s", "seed": 1}))
    (d / "summary.json").write_text("{}")
    msg = one_line_error(reproduce(tmp_path, 1))
    assert "holds a qoslab run" in msg and "not a reproduction of tiny" in msg, msg
    assert (d / "summary.json").exists()


def test_a_symbolic_link_as_the_reproductions_folder_is_refused_before_any_run(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "report.md").write_text("keep\n")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "tiny").symlink_to(elsewhere)
    msg = one_line_error(reproduce(tmp_path, 1))
    assert "symbolic link" in msg and str(tmp_path / "out" / "tiny") in msg, msg
    assert stored_runs(tmp_path) == 0
    assert [x.name for x in elsewhere.iterdir()] == ["report.md"]
