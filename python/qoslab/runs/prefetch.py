"""Runs computed ahead, while the coordinator's thread does something else.

A sequential reproduction (:mod:`qoslab.reproduction.sequential_run`) analyses each look in
the coordinator, on one core, while the pool would wait for the next look, whose sweeps the
analysis decides. :class:`Prefetch` computes a guess of those runs meanwhile: a sweep of
``specs`` (:func:`~qoslab.runs.sweep.run_sweep`) in a background thread, on its own
connection to the store and with its own pool of ``jobs`` workers, niced (:data:`NICE`) so
that the analysis keeps its core and they take what it leaves. :meth:`Prefetch.stop` sends
no run to a worker after it is called; the runs the workers hold (the one each computes and
the one queued behind it, :data:`~qoslab.runs.local_pool.DEPTH`) finish and are committed, so a guess
that turned out right is found in the store by the next sweep (reused) and a wrong one costs
CPU time the analysis left idle, and a few runs kept in the store that no planned run reads.

Nothing of this changes a result: a run is the same whoever computes it (its key is the
scenario's hash, the seed and the version), and an analysis reads the runs its own plan names,
never every run of a sweep.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from qoslab.runs.local_pool import LocalExecutor
from qoslab.runs.sweep import RunSpec, SweepReport, run_sweep
from qoslab.store import RunKey, Store

#: the niceness of the workers computing ahead: the coordinator's thread (the analysis) keeps
#: its core, and they take what it leaves
NICE = 10


@dataclass
class Prefetch:
    """A background sweep of ``specs`` into the store at ``store_root`` on ``jobs`` workers."""

    specs: Sequence[RunSpec]
    store_root: str | Path
    jobs: int
    #: the sweep's report once it has stopped (None while it runs, or if it failed)
    report: SweepReport | None = None
    #: why the background sweep failed (a store error, an executor that could not start)
    error: str | None = None
    #: the runs this sweep stored (done, that the store lacked before it started)
    computed: set[RunKey] = field(default_factory=set)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> Prefetch:
        self._thread = threading.Thread(target=self._run, name="qoslab-prefetch", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        try:
            with Store(self.store_root) as st:
                keys = {s.key for s in self.specs}
                had = {k for k, (status, _) in st.stored(keys).items() if status == "ok"}
                ex = LocalExecutor(self.jobs, stop=self._stop, nice=NICE)
                self.report = run_sweep(self.specs, st, ex, progress=False, label="prefetch")
                done = {k for k, (status, _) in st.stored(keys).items() if status == "ok"}
                self.computed = done - had
        except Exception as e:  # noqa: BLE001 — a guess that failed: the next sweep computes its runs
            self.error = f"{type(e).__name__}: {e}"

    def stop(self) -> SweepReport | None:
        """Sends no more runs to the workers, waits for those they hold (committed), and returns
        the report."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        return self.report


class Guesses:
    """Prefetches started one after another on the local pool's niced workers, with the runs
    they stored and why any failed (a failed guess costs nothing: the next sweep computes its
    runs). The base of a sequential reproduction's guesses of its next look and of ``reproduce
    all``'s hand-over to its next experiment. ``jobs`` is 0 (nothing is guessed) unless
    ``enabled`` and ``executor`` is the local pool (or None, which is one)."""

    def __init__(self, executor: object, store: Store | str | Path | None, enabled: bool) -> None:
        from qoslab.store import default_store

        local = enabled and type(executor) in (type(None), LocalExecutor)
        jobs = executor.jobs if isinstance(executor, LocalExecutor) else os.cpu_count() or 1
        self.jobs = jobs if local else 0
        self.store = (
            store.root if isinstance(store, Store) else Path(store) if store is not None else default_store()
        )
        self.running: Prefetch | None = None
        self.computed: set[RunKey] = set()
        self.errors: list[str] = []

    def launch(self, specs: Sequence[RunSpec]) -> None:
        """Starts computing ``specs`` in the background."""
        self.running = Prefetch(specs, self.store, self.jobs).start()

    def stop(self) -> None:
        """Sends no more runs; returns once the runs the workers hold are stored."""
        if self.running is not None:
            self.running.stop()
            self.computed |= self.running.computed
            if self.running.error:
                self.errors.append(self.running.error)
            self.running = None
