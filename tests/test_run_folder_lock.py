"""A run into ``--out DIR`` holds an exclusive lock (``.DIR.qoslab-lock`` beside it) for its
lifetime: a second run into DIR meanwhile, forced or not, is refused in one line. A run that
replaces an earlier one (``--force``) writes beside DIR and renames its folder into place, so a
reader of DIR sees the earlier run whole or the new one whole, never a mix or a half-written
file; a run killed meanwhile leaves DIR as it was, and the next run removes what it left."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pyarrow.parquet as pq

from conftest import QOSLAB, SCENARIOS, one_line_error

SCENARIO = str(SCENARIOS / "examples" / "droptail-reno.toml")


def run(out: Path, seed: int, duration: str = "3s", *extra: str) -> list[str]:
    sets = ["--set", f"duration={duration}", "--set", "measurement.start=1s"]
    return [QOSLAB, "run", SCENARIO, *sets, "--seed", str(seed), "--out", str(out), *extra]


def staged(out: Path) -> list[Path]:
    return sorted(out.parent.glob(f".{out.name}.qoslab-new-*"))


def wait_for(cond, timeout: float = 120.0) -> None:
    t0 = time.monotonic()
    while not cond():
        assert time.monotonic() - t0 < timeout, "timed out"
        time.sleep(0.01)


def snapshot(out: Path) -> tuple[object, ...] | None:
    """What a reader of ``out`` sees at one moment (the folder opened once, its files read
    through it): None if absent, else (marker's seed, summary.json's seed, the tables' seeds)."""
    try:
        dfd = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
    except FileNotFoundError:
        return None
    try:

        def read(name: str) -> str:
            with open(name, encoding="utf-8", opener=lambda p, f: os.open(p, f, dir_fd=dfd)) as fh:
                return fh.read()

        try:
            names = sorted(os.listdir(dfd))
            marker = json.loads(read(".qoslab-run"))["seed"] if ".qoslab-run" in names else None
            summary = json.loads(read("summary.json"))["seed"] if "summary.json" in names else None
            tables = []
            for n in names:
                if n.endswith(".parquet"):
                    with open(n, "rb", opener=lambda p, f: os.open(p, f, dir_fd=dfd)) as fh:
                        tables.append(int(pq.read_metadata(fh).metadata[b"qoslab.seed"]))
        except FileNotFoundError:
            return None  # the set-aside earlier run, being removed
        return (marker, summary, tuple(sorted(set(tables))))
    finally:
        os.close(dfd)


def marker_seed(out: Path) -> object:
    try:
        return json.loads((out / ".qoslab-run").read_text())["seed"]
    except (OSError, ValueError):
        return None


def test_a_second_run_into_a_folder_being_written_is_refused_in_one_line(tmp_path):
    out = tmp_path / "out"
    assert (
        subprocess.run(run(out, 1, "3s", "--summary-only"), capture_output=True, timeout=300).returncode == 0
    )
    a = subprocess.Popen(
        run(out, 2, "3000s", "--force", "--summary-only"), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        # started: writing beside the folder (or, where it writes in place, its marker rewritten)
        wait_for(lambda: bool(staged(out)) or marker_seed(out) == 2)
        for extra in (("--force",), ()):
            b = subprocess.run(
                run(out, 3, "3s", "--summary-only", *extra), capture_output=True, text=True, timeout=300
            )
            msg = one_line_error(b)
            want = f"--out {out}: another qoslab run (pid {a.pid}) is writing into it" if extra else "--force"
            assert want in msg, msg
        assert (tmp_path / ".out.qoslab-lock").exists()  # beside the folder, while the run lasts
        assert a.wait(timeout=300) == 0, a.stderr.read() if a.stderr else ""
    finally:
        a.kill()
        a.wait()
    assert snapshot(out) == (2, 2, ())  # the first run's, whole
    assert not staged(out) and not (tmp_path / ".out.qoslab-lock").exists()


def test_a_reader_sees_the_earlier_run_or_the_new_one_whole_and_a_killed_run_changes_nothing(tmp_path):
    out = tmp_path / "out"
    assert subprocess.run(run(out, 1, "3s"), capture_output=True, timeout=300).returncode == 0
    seen: list[object] = []
    stop = threading.Event()

    def reader() -> None:
        while not stop.is_set():
            try:
                seen.append(snapshot(out))
            except Exception as e:  # noqa: BLE001 - a half-written file: what the test looks for
                seen.append(("unreadable", type(e).__name__))

    t = threading.Thread(target=reader)
    t.start()
    try:
        for seed in (2, 3):
            p = subprocess.run(run(out, seed, "3s", "--force"), capture_output=True, timeout=300)
            assert p.returncode == 0, p.stderr
    finally:
        stop.set()
        t.join()
    whole = {(s, s, (s,)) for s in (1, 2, 3)}
    assert set(seen) <= whole | {None}, set(seen) - whole
    assert (1, 1, (1,)) in seen and (3, 3, (3,)) in seen
    # killed while it runs: DIR keeps seed 3's run whole; the next run removes what was left
    a = subprocess.Popen(
        run(out, 4, "100000s", "--force"), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_for(lambda: bool(staged(out)))
        time.sleep(0.5)
    finally:
        a.send_signal(signal.SIGKILL)
        a.wait()
    assert snapshot(out) == (3, 3, (3,)) and staged(out)
    p = subprocess.run(run(out, 5, "3s", "--force"), capture_output=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert snapshot(out) == (5, 5, (5,)) and not staged(out)


def test_a_run_whose_outputs_cannot_be_written_leaves_its_folder_as_it_was(tmp_path, monkeypatch):
    """A full disk while a run writes: into an empty folder (written in place) the folder is
    emptied again, not left with half the tables and the marker of a run (the next run took it
    for an earlier run); replacing an earlier run, that one stays; one line names --out."""
    import errno

    import pytest

    import qoslab
    from qoslab.runs import rundir
    from qoslab.runs.simulate import Result

    written = Result.write

    def write_half(self, out, tables=True):  # the disk fills after the first table
        written(self, out, tables=False)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    sc = qoslab.load_scenario(SCENARIO).with_overrides(["duration=3s", "measurement.start=1s"])
    empty = tmp_path / "empty"
    empty.mkdir()
    earlier = tmp_path / "earlier"
    qoslab.run(sc, seed=1, out=earlier, tables=False)
    monkeypatch.setattr(Result, "write", write_half)
    with pytest.raises(rundir.OutputFolderError) as e:
        qoslab.run(sc, seed=2, out=empty)
    assert (
        str(e.value)
        == f"--out {empty}: cannot write the run's outputs (No space left on device); none of them is kept"
    )
    assert list(empty.iterdir()) == []
    with pytest.raises(rundir.OutputFolderError):
        qoslab.run(sc, seed=2, out=earlier, force=True)
    assert marker_seed(earlier) == 1 and json.loads((earlier / "summary.json").read_text())["seed"] == 1
    assert staged(earlier) == []
    monkeypatch.setattr(Result, "write", written)
    assert qoslab.run(sc, seed=3, out=empty, tables=False).events > 0  # not taken for an earlier run


def test_a_capture_path_that_cannot_be_opened_is_named_not_the_run_folder(tmp_path):
    """A capture asked for through the API at a path outside --out that cannot be opened was
    reported as --out's outputs that could not be written; it is the capture's path, named by
    the error, and the folder is left as it was."""
    import pytest

    import qoslab

    sc = qoslab.load_scenario(SCENARIO).with_overrides(["duration=3s", "measurement.start=1s"])
    missing = tmp_path / "missing" / "x.pcap"
    out = tmp_path / "run"
    # a folder that is not there is refused before the run claims --out (the argument named)
    with pytest.raises(ValueError) as v:
        qoslab.run(sc, seed=1, out=out, captures=[("bottleneck", "ab", str(missing))])
    assert str(v.value) == f"captures[0]: {missing}: its folder {missing.parent} does not exist"
    assert not out.exists() and not staged(out)
    # one the core cannot open in a folder that is there is the core's error, naming the path
    unopenable = "/proc/qoslab-capture-test.pcap"
    with pytest.raises(OSError) as e:
        qoslab.run(sc, seed=1, out=out, captures=[("bottleneck", "ab", unopenable)])
    assert str(e.value).startswith(f"{unopenable}: "), str(e.value)
    assert not out.exists() and not staged(out)
