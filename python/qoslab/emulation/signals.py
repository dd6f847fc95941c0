"""Ctrl-C and SIGTERM during an emulation run: raised, so that the run's teardown runs, but
never while something is being created and recorded, nor during the teardown."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any


class Interrupted(Exception):
    """SIGTERM during a run (raised by :class:`Signals`, so that the teardown runs)."""


class Signals:
    """Ctrl-C (SIGINT: KeyboardInterrupt, or the caller's own handler) and SIGTERM (raises
    :class:`Interrupted`) during a run, so that its teardown runs. While ``hold`` > 0 the
    first signal only waits, and is raised when the hold ends (``held``, ``restore``).

    Held: starting a child until its pid is recorded, adding a namespace, creating the state
    file and work directory, the teardown. Starting a child with a ``preexec_fn`` makes
    CPython run the at-fork hooks (logging's lock release) around the fork, and a
    KeyboardInterrupt raised in a hook is only printed ("Exception ignored in ...") — a
    Ctrl-C arriving then was lost and the run went on to its end.

    A signal can also land, unheld, in a finalizer: after each command, ``Popen.__del__``
    runs Python code, and an exception raised there is likewise only printed (a run sent
    SIGINT just after its state file appeared went on to its end, exit 0). So every signal
    raised is remembered, and :meth:`check`, called where the run waits and before anything
    is held, raises it again if the run is still going: one that propagated never comes back
    to a check (the teardown holds signals). Only the main thread gets signals; elsewhere
    this does nothing."""

    def __init__(self) -> None:
        self.hold = 0
        self.pending: int | None = None
        #: The signal last raised by the handler, until :meth:`check` raises it again.
        self.raised: int | None = None
        self.old: dict[int, Any] = {}
        if threading.current_thread() is not threading.main_thread():
            return
        for s in (signal.SIGINT, signal.SIGTERM):
            if s == signal.SIGINT and signal.getsignal(s) == signal.SIG_IGN:
                continue  # started with Ctrl-C ignored (a script's `&` job): it stays ignored
            self.old[s] = signal.signal(s, self._handle)

    def _handle(self, signum: int, frame: Any) -> None:
        if self.hold:
            if self.pending is None:
                self.pending = signum
            return
        self.raised = signum
        self._raise(signum, frame)

    def check(self) -> None:
        """Raises again a signal whose exception was swallowed (see the class): the run is
        still going after the handler raised. Nothing while signals are held."""
        if self.raised is not None and not self.hold:
            signum, self.raised = self.raised, None
            self._raise(signum, None)

    def _raise(self, signum: int, frame: Any) -> None:
        if signum == signal.SIGTERM:
            raise Interrupted(f"signal {signum}")
        old = self.old.get(signum)
        if not callable(old):
            raise KeyboardInterrupt
        old(signum, frame)  # Python's default handler raises KeyboardInterrupt

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        self.check()
        self.hold += 1
        try:
            yield
        finally:
            self.hold -= 1
            if not self.hold and self.pending is not None:
                signum, self.pending = self.pending, None
                self._raise(signum, None)

    def restore(self) -> None:
        """Puts back the handlers found, then raises a signal that waited."""
        for s, h in self.old.items():
            signal.signal(s, signal.SIG_DFL if h is None else h)
        if self.pending is not None:
            signum, self.pending = self.pending, None
            self._raise(signum, None)
