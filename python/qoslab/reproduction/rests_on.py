"""Which sweeps each claim's verdict records rest on, for ``--sequential``'s per-claim stopping
(:mod:`qoslab.reproduction.sequential_run`): the sweeps each declared claim names
(:attr:`qoslab.verdicts.claims.PaperClaim.rests_on`), and within a claim the readings' sweeps
and the records' points. Which runs a claim reads decides how many seeds a sequential
reproduction takes, not how a record is decided."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any, Protocol, cast

from qoslab import studies
from qoslab.verdicts.magnitudes import REGISTRY

#: The sweeps each claim's verdict records rest on (the sweeps whose runs the experiment's
#: ``_verdicts`` reads for them), per experiment, by the claim's words, derived from the declared
#: claims (a claim declared at several places, all its places and parts, rests on the union). A
#: part tested on another claim's records (``borrow``) declares that claim's sweeps too.
#: Over-declaring a sweep costs runs, never a wrong verdict; under-declaring one would let
#: ``--sequential`` stop a sweep an undecided claim still reads, which
#: ``tests/test_sequential_claims.py`` checks cannot happen: it reproduces the experiment with
#: each sweep at fewer seeds and finds every record that does not declare it unchanged.
RESTS_ON: dict[str, dict[str, tuple[str, ...]]] = {name: REGISTRY.rests_on(name) for name in REGISTRY.studies}


#: A set of points of a sweep: a point belongs when it matches one of the filters (every
#: parameter a filter names has the filter's value).
Filters = tuple[Mapping[str, Any], ...]


class Points(Protocol):
    """The points of the sweeps a record reads (see :data:`POINTS`): a function of the record
    (its ``reading``, ``claim`` and ``section``) giving, for each sweep it narrows, the filters
    of the points it reads."""

    def __call__(self, record: Mapping[str, Any], /) -> dict[str, Filters]: ...


#: The job of the module in which a study narrows what its records read
#: (``qoslab.studies.<study>.rests_on``, :func:`qoslab.studies.module`), found through the list
#: of studies (:func:`qoslab.studies.having`). It may declare ``READING_SWEEPS`` (the sweeps
#: each reading reads: :data:`READING_SWEEPS`) and ``points`` (a :class:`Points`:
#: :data:`POINTS`); a study without the module reads its claims' sweeps whole.
JOB = "rests_on"


def _declared(name: str) -> tuple[dict[str, tuple[str, ...]] | None, Points | None]:
    """Study ``name``'s ``READING_SWEEPS`` and ``points`` (None where it declares none); one
    line naming the module and the attribute for one of another shape."""
    mod = importlib.import_module(studies.module(name, JOB))
    sweeps = getattr(mod, "READING_SWEEPS", None)
    if sweeps is not None and not (
        isinstance(sweeps, Mapping)
        and all(
            isinstance(k, str) and isinstance(v, tuple) and all(isinstance(s, str) for s in v)
            for k, v in sweeps.items()
        )
    ):
        raise ValueError(
            f"module {mod.__name__}: READING_SWEEPS must map a reading's words to a tuple of sweep names"
        )
    points = getattr(mod, "points", None)
    if points is not None and not callable(points):
        raise ValueError(f"module {mod.__name__}: points must be a function of a record (rests_on.Points)")
    return (None if sweeps is None else dict(sweeps)), cast("Points | None", points)


_NARROWING = {name: _declared(name) for name in studies.having(JOB)}


#: Within a claim, the sweeps each reading reads, where a claim's readings read different sweeps
#: (per experiment, by the reading's exact words; each study's ``READING_SWEEPS``): such a record
#: rests on the claim's sweeps that its reading reads, so a reading still undecided does not keep
#: the other readings' sweeps growing.
READING_SWEEPS: dict[str, dict[str, tuple[str, ...]]] = {
    name: sweeps for name, (sweeps, _) in _NARROWING.items() if sweeps is not None
}


def reading_sweeps(exp: str, reading: str) -> tuple[str, ...] | None:
    """The sweeps ``reading`` reads by :data:`READING_SWEEPS`: its exact words, else the longest
    name it extends with ", …" ("1500 B packets, high load = 40 flows" reads what "1500 B
    packets" reads; where that names none of a claim's sweeps, the claim's sweeps stand:
    ``sequential_run.rests_on``); None when the map names none."""
    table = READING_SWEEPS.get(exp, {})
    if reading in table:
        return table[reading]
    names = [n for n in table if reading.startswith(n + ", ")]
    return table[max(names, key=len)] if names else None


#: Within a sweep, the points each record reads, where a claim's records read only some of a
#: sweep's points (by experiment: its study's ``points``, a :class:`Points`; a sweep it does not
#: name it reads whole). ``--sequential``
#: stops a point once every record resting on it is decided, while the sweep's other points
#: grow (:mod:`qoslab.reproduction.sequential_run`). The same rule as for sweeps: over-declaring
#: a point costs runs, under-declaring one would let an undecided record's point stop, which
#: ``tests/test_sequential_claims_points.py`` checks cannot happen (the experiment reproduced with one
#: record's points at fewer seeds moves no record that does not declare them).
POINTS: dict[str, Points] = {name: points for name, (_, points) in _NARROWING.items() if points is not None}


def matches(params: Mapping[str, Any], filters: Filters) -> bool:
    """Whether a point (its parameters) is one of ``filters``', by the equality the analyses
    select points with (:func:`qoslab.reproduction.selection.select`: ``==``, so ``1`` finds
    ``1.0``)."""
    return any(all(params.get(k) == v for k, v in f.items()) for f in filters)
