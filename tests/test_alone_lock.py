"""The ``alone`` mechanism of tests/conftest.py: work that runs beside an ``alone`` test
disturbs what it measures (the emulation's calibration), so every test and every wider-scoped
fixture's setup holds the run's lock shared while it works. Checked from inside, through the
kernel's own table of file locks (/proc/locks), only under xdist (without it nothing runs
beside anything and no lock is taken)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import xdist_lock_files

pytestmark = pytest.mark.skipif(
    xdist_lock_files() is None or not Path("/proc/locks").exists(),
    reason="the lock is taken only under pytest-xdist (make test runs with -n 3), and read from /proc/locks",
)


def _locks_held_here() -> list[str]:
    """This process's flock locks on the run's lock file: 'READ' (shared) or 'WRITE'."""
    files = xdist_lock_files()
    assert files is not None
    lock = files[1]
    if not lock.exists():
        return []  # nothing has taken it yet
    st = os.stat(lock)
    want = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    held = []
    for line in Path("/proc/locks").read_text().splitlines():
        f = line.split()
        # "1: FLOCK  ADVISORY  READ  1234 08:01:5678 0 EOF" (a waiter's line has "->" after the number)
        if "->" in f or len(f) < 6 or f[1] != "FLOCK":
            continue
        if int(f[4]) == os.getpid() and f[5] == want:
            held.append(f[3])
    return held


@pytest.fixture(scope="module")
def seen_in_module_setup() -> list[str]:
    return _locks_held_here()


def test_a_module_fixtures_setup_holds_the_lock_shared(seen_in_module_setup: list[str]) -> None:
    assert seen_in_module_setup == ["READ"]


def test_a_test_holds_the_lock_shared() -> None:
    assert _locks_held_here() == ["READ"]


@pytest.mark.alone
def test_an_alone_test_holds_it_exclusively() -> None:
    assert _locks_held_here() == ["WRITE"]
