"""``qoslab reproduce all``: the next experiment's first runs computed while one finishes.

Between two experiments no run was in progress for 6 to 11 s each: the last look's figures
(PNG and SVG), report and summary, then the next experiment's plan, its store lookups and its
first pool. :class:`HandOver` starts the next experiment's first look (its first ``FIRST`` seeds
for a sequential one, its fixed seeds otherwise) as a :class:`~qoslab.runs.prefetch.Prefetch` on
the niced workers once the finishing experiment's runs are all stored, and stops it (the runs
its workers hold finish and are committed) before the next experiment plans its own; that
experiment then finds those runs in the store. Its workers are the niced pool the looks'
guesses use (:func:`~qoslab.runs.local_pool.kept_workers`), so a hand-over starts no process.

Nothing of this changes a result: a run is the same whoever computes it (its key is the
scenario's hash, the seed and the version), and an analysis reads the runs its plan names.
Only the local pool hands over.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from qoslab.experiments.base import Experiment
from qoslab.experiments.remembered_plans import planned
from qoslab.runs.local_pool import LocalExecutor
from qoslab.runs.prefetch import Prefetch
from qoslab.store import RunKey, default_store


class HandOver:
    """Hands each experiment of a ``reproduce all`` over to the next (see the module's text).
    ``plan_kw``: ``quick``, ``flavour``, ``sender``, ``tcp_flavour`` as for
    :func:`~qoslab.experiments.planning.planned`."""

    def __init__(
        self, executor: Any, store: str | Path | None, plan_kw: dict[str, Any], enabled: bool
    ) -> None:
        local = enabled and type(executor) in (type(None), LocalExecutor)
        jobs = executor.jobs if isinstance(executor, LocalExecutor) else os.cpu_count() or 1
        self.jobs = jobs if local else 0
        self.store = Path(store) if store is not None else default_store()
        self.plan_kw = plan_kw
        self.running: Prefetch | None = None
        #: the runs the hand-overs stored, and why any failed (the next experiment computes
        #: the runs of a failed hand-over itself)
        self.computed: set[RunKey] = set()
        self.errors: list[str] = []

    def starter(self, nxt: Experiment | None, seeds: int | None) -> Callable[[], None] | None:
        """What starts computing ``nxt``'s first runs (``seeds`` of them; None: its fixed
        seeds), or None when there is nothing to hand over to."""
        if nxt is None or self.jobs < 1:
            return None

        def start() -> None:
            specs = planned(nxt, seeds=seeds, **self.plan_kw)[2]
            self.running = Prefetch(specs, self.store, self.jobs).start()

        return start

    def stop(self) -> None:
        """Sends no more runs; returns once the runs the workers hold are stored."""
        if self.running is not None:
            self.running.stop()
            self.computed |= self.running.computed
            if self.running.error:
                self.errors.append(self.running.error)
            self.running = None
