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

from collections.abc import Callable
from pathlib import Path
from typing import Any

from qoslab.reproduction.base import Experiment
from qoslab.reproduction.remembered_plans import planned
from qoslab.runs.prefetch import Guesses


class HandOver(Guesses):
    """Hands each experiment of a ``reproduce all`` over to the next (see the module's text).
    ``plan_kw``: ``quick``, ``flavour``, ``sender``, ``tcp_flavour``, ``timing`` as for
    :func:`~qoslab.reproduction.planning.planned`."""

    def __init__(
        self, executor: Any, store: str | Path | None, plan_kw: dict[str, Any], enabled: bool
    ) -> None:
        super().__init__(executor, store, enabled)
        self.plan_kw = plan_kw

    def starter(self, nxt: Experiment | None, seeds: int | None) -> Callable[[], None] | None:
        """What starts computing ``nxt``'s first runs (``seeds`` of them; None: its fixed
        seeds), or None when there is nothing to hand over to."""
        if nxt is None or self.jobs < 1:
            return None
        return lambda: self.launch(planned(nxt, seeds=seeds, **self.plan_kw)[2])
