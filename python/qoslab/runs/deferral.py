"""Ctrl-C and SIGTERM held back while a run writes its outputs.

A signal that arrives while summary.json and the tables are being written would leave a folder
with some tables and no summary. :func:`signals_deferred` notes SIGINT and SIGTERM during the
block instead of acting on them; the caller acts once the outputs are whole
(:func:`qoslab.runs.simulate.run` raises ``RunInterrupted`` with the complete result).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any

#: The signals held back.
DEFERRED = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def signals_deferred() -> Iterator[list[int]]:
    """While the block runs, SIGINT and SIGTERM are noted (the list yielded, in order of
    arrival) instead of handled; their handlers are restored after it. Outside the main thread,
    where Python cannot set handlers, nothing changes (the list stays empty)."""
    got: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield got
        return

    def note(signum: int, frame: Any) -> None:
        got.append(signum)

    old = {s: signal.signal(s, note) for s in DEFERRED}
    try:
        yield got
    finally:
        for s, h in old.items():
            signal.signal(s, h if h is not None else signal.SIG_DFL)
