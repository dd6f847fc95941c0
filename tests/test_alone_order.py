"""The ``alone`` tests' announcement (tests/conftest.py): work that starts on another worker
between two ``alone`` tests of one worker could run for minutes while the second one waits for
it and every other worker idles at the gate; an ``alone`` test announces itself, and keeps the
announcement until its worker starts other work, so that other work waits instead. Checked
with two processes taking the run's locks as xdist workers do (a run id of their own)."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

TESTS = Path(__file__).resolve().parent

#: A worker's steps: ``alone`` work ("A", seconds; until a file exists if a path), other work
#: ("S", seconds), a pause ("pause", seconds), a file written ("touch", path). Each piece of
#: work prints its kind, start and end.
WORKER = """
import sys, time
from pathlib import Path
sys.path.insert(0, {tests!r})
from conftest import held_lock, withdraw_announcement
for kind, arg in {steps!r}:
    if kind == "pause":
        time.sleep(arg)
    elif kind == "touch":
        Path(arg).touch()
    else:
        with held_lock(kind == "A"):
            t0 = time.monotonic()
            if isinstance(arg, str):
                while not Path(arg).exists():
                    time.sleep(0.01)
            else:
                time.sleep(arg)
            print(kind, t0, time.monotonic(), flush=True)
withdraw_announcement()
"""


def _spawn(steps: list[tuple[str, object]], env: dict[str, str]) -> subprocess.Popen[str]:
    code = WORKER.format(tests=str(TESTS), steps=steps)
    return subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, text=True)


def _wait_for(path: Path) -> None:
    deadline = time.monotonic() + 60
    while not path.exists():
        assert time.monotonic() < deadline, path
        time.sleep(0.01)


def test_no_other_work_starts_between_one_workers_alone_tests(tmp_path: Path) -> None:
    """Worker 1 runs two ``alone`` tests with a pause between them (a test's teardown and the
    next one's setup); worker 2 waits at the gate with an ``alone`` test meanwhile, gets it in
    the pause, and then starts other work: that work starts only after worker 1's second
    ``alone`` test (without the announcement it took the gate in the pause, and worker 1's
    second ``alone`` test waited for it)."""
    env = {**os.environ, "PYTEST_XDIST_TESTRUNUID": f"alone-order-{uuid.uuid4().hex}"}
    inside, ready, go = tmp_path / "inside", tmp_path / "ready", tmp_path / "go"
    one = _spawn([("touch", str(inside)), ("A", str(go)), ("pause", 1.0), ("A", 0.2)], env)
    _wait_for(inside)
    two = _spawn([("touch", str(ready)), ("A", 0.1), ("S", 0.1)], env)
    _wait_for(ready)
    time.sleep(0.5)  # worker 2 waits at the gate worker 1 holds
    go.touch()
    out_one, _ = one.communicate(timeout=60)
    out_two, _ = two.communicate(timeout=60)
    assert one.returncode == 0 and two.returncode == 0
    spans = [(w, *line.split()) for w, out in ((1, out_one), (2, out_two)) for line in out.splitlines()]
    alone = sorted((float(s[2]), float(s[3])) for s in spans if s[1] == "A")
    (other,) = [(float(s[2]), float(s[3])) for s in spans if s[1] == "S"]
    assert len(alone) == 3, spans
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(alone)), spans  # never two at once
    assert other[0] >= alone[-1][1], spans  # the other work after every alone test
