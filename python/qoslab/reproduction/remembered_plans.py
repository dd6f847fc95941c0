"""Plans remembered within a sequential reproduction.

Each look of a sequential reproduction (:mod:`qoslab.reproduction.sequential_run`) plans its
experiment several times besides the plan its reproduction makes: the runs it keeps, the runs it
computes ahead for the next look (:class:`~qoslab.reproduction.sequential_run._Ahead`), and ``reproduce
all`` the next experiment's first runs (:mod:`qoslab.reproduction.handover`). Each plan builds every
point's scenario afresh (the core resolves it, and its hash is computed): for probe-marker about a
second a plan. Within :func:`remembered`, :func:`planned` makes each plan once. A plan is a pure
function of the experiment and its options, so a remembered plan is the plan; outside the scope
(a notebook whose experiment reads a file edited since) every call plans afresh.

Only the last few plans are kept (:data:`KEEP`): a look plans at its own seeds and at the next
look's, and a scenario takes about 75 kB in the core (350 kB more once its resolved table is read
for a report), so every look's plan of an experiment of 500 points would hold gigabytes.

The reproduction's own plan (:func:`qoslab.reproduction.runner.reproduce`) is made afresh at each
look: this module is outside the experiment code the verdict files' fingerprints cover
(:func:`qoslab.verdicts.currency.experiment_files`), so that remembering plans leaves every
committed verdict file as current as it was.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any

from qoslab.reproduction import planning
from qoslab.reproduction.base import Experiment, Options, Sweep
from qoslab.runs.sweep import RunSpec

#: How many plans :func:`planned` keeps, the newest: a look's and the next look's, with room.
KEEP = 4

_MEMO: dict[tuple[Any, ...], tuple[Experiment, tuple[Options, list[Sweep], list[RunSpec]]]] | None = None


@contextlib.contextmanager
def remembered() -> Iterator[None]:
    """A scope in which :func:`planned` remembers the plans it makes (see the module's text)."""
    global _MEMO
    outer = _MEMO
    if outer is None:
        _MEMO = {}
    try:
        yield
    finally:
        _MEMO = outer


def planned(
    exp: Experiment,
    *,
    seeds: int | None = None,
    sweep_seeds: Mapping[str, int] | None = None,
    point_seeds: Mapping[str, Mapping[int, int]] | None = None,
    **kw: Any,
) -> tuple[Options, list[Sweep], list[RunSpec]]:
    """:func:`qoslab.reproduction.planning.planned` (the same arguments), remembered within
    :func:`remembered`; the lists returned are the caller's own."""
    if _MEMO is None:
        return planning.planned(exp, seeds=seeds, sweep_seeds=sweep_seeds, point_seeds=point_seeds, **kw)
    points = tuple(sorted((s, tuple(sorted(p.items()))) for s, p in (point_seeds or {}).items()))
    key = (id(exp), seeds, tuple(sorted((sweep_seeds or {}).items())), points, tuple(sorted(kw.items())))
    hit = _MEMO.pop(key, None)
    if hit is None or hit[0] is not exp:
        hit = (
            exp,
            planning.planned(exp, seeds=seeds, sweep_seeds=sweep_seeds, point_seeds=point_seeds, **kw),
        )
    _MEMO[key] = hit  # the newest last
    for old in list(_MEMO)[: max(0, len(_MEMO) - KEEP)]:
        del _MEMO[old]
    opts, sweeps, specs = hit[1]
    return opts, list(sweeps), list(specs)
