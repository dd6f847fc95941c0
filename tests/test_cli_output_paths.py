"""An output file or folder a command cannot write is refused in one line before the command's
work (a sweep's runs, both simulators of a cross-check), and a write that fails on the way (a
full disk) is one line too: they were tracebacks, some after all the work was done."""

import subprocess
from pathlib import Path

import pytest

from conftest import QOSLAB, SCENARIOS, one_line_error

TINY = SCENARIOS / "fdd-red-s1.toml"
SHORT = ("--set", "duration=2s", "--set", "measurement.start=0s", "--set", "measurement.end=2s")


def qoslab(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([QOSLAB, *args], capture_output=True, text=True, timeout=120, cwd=cwd)


@pytest.mark.parametrize(
    "args, line",
    [
        (
            ("sweep", str(TINY), "--seeds", "1", "--store", "st", "--out", "afile"),
            "--out afile: is a file, not a folder",
        ),
        (
            ("sweep", str(TINY), "--seeds", "1", "--store", "st", "--out", "afile/sub"),
            "--out afile/sub: afile is a file, not a folder",
        ),
        (("export-ns2", str(TINY), "--out", "adir"), "--out adir: is a folder: give a file name"),
        (("export-ns2", str(TINY), "--out", "afile/x.tcl"), "--out afile/x.tcl: afile is not a folder"),
        (
            ("export-ns2", str(TINY), "--out", "/dev/full"),
            "--out /dev/full: cannot write it (No space left on device)",
        ),
        (
            ("results", "--store", "st", "--export", "missing/x.csv"),
            "--export missing/x.csv: no folder missing",
        ),
        (("results", "--store", "st", "--export", "adir"), "--export adir: is a folder: give a file name"),
        (
            ("crosscheck", str(TINY), "--seeds", "1", "--csv", "missing/x.csv"),
            "--csv missing/x.csv: no folder missing",
        ),
        (
            ("crosscheck", str(TINY), "--seeds", "1", "--json", "adir"),
            "--json adir: is a folder: give a file name",
        ),
    ],
)
def test_an_output_path_that_cannot_be_written_is_one_line(tmp_path, args, line):
    (tmp_path / "afile").write_text("not a folder\n")
    (tmp_path / "adir").mkdir()
    p = qoslab(*args, cwd=tmp_path)
    assert one_line_error(p) == f"error: {line}"
    assert not (tmp_path / "st").exists()  # refused before a store was opened or a run made


def test_a_full_disk_under_an_export_is_one_line(tmp_path):
    assert (
        qoslab(
            "sweep",
            str(TINY),
            "--seeds",
            "1",
            "--store",
            "st",
            *SHORT,
            cwd=tmp_path,
        ).returncode
        == 0
    )
    (tmp_path / "full.csv").symlink_to("/dev/full")
    p = qoslab("results", "--store", "st", "--export", "full.csv", cwd=tmp_path)
    assert one_line_error(p) == "error: --export full.csv: cannot write it (No space left on device)"


def test_plotting_a_run_folder_with_a_damaged_table_or_summary_is_one_line(tmp_path):
    run = tmp_path / "r"
    p = qoslab(
        "run",
        str(TINY),
        *SHORT,
        "--out",
        str(run),
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stderr
    (run / "series_queue.parquet").write_text("garbage")
    line = one_line_error(qoslab("plot", "run", str(run), "--out", "q.png", cwd=tmp_path))
    assert line.startswith(f"error: {run}/series_queue.parquet: not a Parquet table qoslab wrote")
    (run / "summary.json").write_text("[1, 2]")
    line = one_line_error(qoslab("plot", "run", str(run), "--out", "q.png", cwd=tmp_path))
    assert line == f"error: {run}/summary.json: not a run's summary (a JSON object)"


def test_a_name_or_store_path_that_is_not_utf8_is_one_line(tmp_path):
    """Bytes a shell passes through (not UTF-8) cannot be recorded: one line, not a traceback or
    every run failing."""
    import os

    bad = os.fsdecode(b"st\xff")
    p = qoslab(
        "sweep", str(TINY), "--seeds", "1", "--store", "st", "--name", os.fsdecode(b"n\xff"), cwd=tmp_path
    )
    assert one_line_error(p) == "error: --name 'n\ufffd': not UTF-8 text"
    for args in (("sweep", str(TINY), "--seeds", "1", "--store", bad), ("results", "--store", bad)):
        p = qoslab(*args, cwd=tmp_path)
        assert one_line_error(p) == "error: st\ufffd: the result store's path is not UTF-8 text: rename it"
    assert os.listdir(tmp_path) == []


def test_export_seeds_and_sweep_retries_out_of_range_are_one_line(tmp_path):
    """export-ns2 hashed any integer into an ns-2 seed; a billion retries retried a failing run
    without end."""
    p = qoslab("export-ns2", str(TINY), "--seed", "-1", cwd=tmp_path)
    assert one_line_error(p).startswith("error: --seed: a seed is 0 to 2^63 - 1")
    for n in ("-1", "101"):
        p = qoslab("sweep", str(TINY), "--seeds", "1", "--store", "st", "--retries", n, cwd=tmp_path)
        assert one_line_error(p) == f"error: --retries: from 0 to 100, got {n}"


def test_a_sweep_rewrites_its_own_tables_but_not_a_file_of_their_name(tmp_path):
    """A sweep's --out tables are rewritten when the sweep is run again (its runs are in the
    store); a runs.csv or stats.csv there that a sweep did not write was overwritten too."""
    base = ("sweep", str(TINY), "--seeds", "1", "--store", "st", "-q", *SHORT)
    sweep = (*base, "--out", "o")
    assert qoslab(*sweep, cwd=tmp_path).returncode == 0
    first = (tmp_path / "o" / "runs.csv").read_text()
    again = qoslab(*sweep, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "o" / "runs.csv").read_text() == first
    for name in ("runs.csv", "stats.csv"):
        mine = tmp_path / f"mine-{name}"
        mine.mkdir()
        (mine / name).write_text("a,b\n1,2\n")
        p = qoslab(*base, "--out", str(mine), cwd=tmp_path)
        line = f"error: --out {mine}: {name} there is not a table a sweep wrote; give another folder"
        assert one_line_error(p) == line
        assert (mine / name).read_text() == "a,b\n1,2\n"
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "runs.csv").write_text("")  # an empty file holds nothing to lose
    assert qoslab(*base, "--out", "empty", cwd=tmp_path).returncode == 0
    assert (tmp_path / "empty" / "runs.csv").read_text() == first
