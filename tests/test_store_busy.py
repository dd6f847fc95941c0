"""A store whose database another process holds: opened once the other lets go (within
QOSLAB_STORE_TIMEOUT), else one line of qoslab's own that says what to do, never SQLite's
"database is locked"."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from conftest import QOSLAB
from qoslab.store import Store, StoreBusy


def _hold(db, seconds: float) -> subprocess.Popen[str]:
    """Another process holding an exclusive lock on ``db`` for ``seconds``."""
    code = (
        f"import sqlite3, time\nc = sqlite3.connect({str(db)!r}, isolation_level=None)\n"
        f"c.execute('BEGIN EXCLUSIVE')\nprint('held', flush=True)\ntime.sleep({seconds})\nc.execute('COMMIT')"
    )
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert p.stdout is not None and p.stdout.readline().strip() == "held"
    return p


@pytest.mark.parametrize("existing", [False, True])
def test_a_store_held_by_another_process_opens_once_it_is_let_go(tmp_path, existing):
    if existing:
        Store(tmp_path).close()
    holder = _hold(tmp_path / "results.db", 0.5)
    try:
        t = time.monotonic()
        with Store(tmp_path, timeout=20) as st:
            st.conn.execute("BEGIN IMMEDIATE")
            st.conn.execute("COMMIT")
        assert time.monotonic() - t >= 0.3
    finally:
        holder.wait()


def test_a_store_held_past_the_timeout_is_one_line_of_our_own(tmp_path):
    """Held for longer than QOSLAB_STORE_TIMEOUT: `qoslab results` says the store is locked, for
    how long it waited and what to do (it printed SQLite's "database is locked")."""
    holder = _hold(tmp_path / "results.db", 30)
    try:
        with pytest.raises(StoreBusy) as e:
            Store(tmp_path, timeout=0.5)
        env = {**os.environ, "QOSLAB_STORE_TIMEOUT": "1"}
        args = [QOSLAB, "results", "--store", str(tmp_path)]
        p = subprocess.run(args, capture_output=True, text=True, env=env)
    finally:
        holder.kill()
        holder.wait()
    for text in (str(e.value), p.stderr.strip()):
        assert "is locked by another process: waited" in text and "QOSLAB_STORE_TIMEOUT" in text, text
        assert "\n" not in text, text
        assert "database is locked" not in text, text
    assert p.returncode == 1 and p.stderr.startswith("error: ") and "waited 1 s" in p.stderr, p.stderr
