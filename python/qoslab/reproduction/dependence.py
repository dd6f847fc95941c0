"""The rests-on declarations checked against real reproductions: an experiment reproduced with
one sweep (:func:`sweep_dependence`) or one reading's points (:func:`point_dependence`) at
fewer seeds moves only the records that declare them (:func:`undeclared`,
:func:`undeclared_points`): else ``--sequential`` (:mod:`qoslab.reproduction.sequential_run`)
could stop a sweep or point an undecided record still reads. ``tests/test_sequential_claims.py``
and its ``_points`` and ``_probe`` twins run them."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from qoslab.reproduction.base import get
from qoslab.reproduction.remembered_plans import planned
from qoslab.reproduction.rests_on import Filters, matches
from qoslab.reproduction.runner import Reproduction, reproduce
from qoslab.reproduction.sequential_run import Key, Stopping, plan_args, record_key, rests_on
from qoslab.verdicts.magnitudes import DECLARED


def _readings(rep: Reproduction) -> dict[Key, str]:
    doc = json.loads((rep.out / "verdicts.json").read_text(encoding="utf-8"))
    # as text: a NaN effect equals itself
    return {
        record_key(r): json.dumps([r.get("effect"), r.get("ci95"), r.get("seeds")]) for r in doc["verdicts"]
    }


def sweep_dependence(
    name: str, *, seeds: int, fewer: int, only: Sequence[str] | None = None, **kw: Any
) -> dict[str, dict[Key, bool]]:
    """Which records each sweep of experiment ``name`` moves: the experiment reproduced (fixed
    seeds, ``kw`` as for :func:`qoslab.reproduction.runner.reproduce`) with every sweep at
    ``seeds``, then once per sweep with that sweep alone at ``fewer``; for each sweep, every
    record and whether its effect, interval or seeds differ from the first reproduction's. A
    record the sweep moves rests on it (:func:`undeclared` compares with the declarations).
    ``only``: those sweeps alone."""

    exp = get(name)
    base = _readings(reproduce(exp, seeds=seeds, **kw))
    names = [s.name for s in planned(exp, seeds=seeds, **plan_args(kw))[1] if only is None or s.name in only]
    out: dict[str, dict[Key, bool]] = {}
    for s in names:
        got = _readings(reproduce(exp, seeds=seeds, sweep_seeds={s: fewer}, **kw))
        out[s] = {k: got.get(k) != v for k, v in base.items()}
    return out


def undeclared(name: str, moved: dict[str, dict[Key, bool]]) -> list[str]:
    """The records of ``moved`` (:func:`sweep_dependence`) that a sweep moved although their
    claim does not declare it in :data:`qoslab.reproduction.rests_on.RESTS_ON`: each an
    under-declaration that would let ``--sequential`` stop a sweep an undecided claim reads."""
    decls = DECLARED.get(name, ())
    out = []
    for s, recs in moved.items():
        for k, changed in recs.items():
            r = {"claim": k[0], "section": k[1], "part": k[2], "reading": k[3], "borrowed_from": k[4]}
            deps = rests_on(name, decls, r)
            if changed and deps is not None and s not in deps:
                out.append(f"{name}: sweep {s} moves {k[0][:50]!r} / {k[3]!r}, which does not declare it")
    return out


def point_dependence(
    name: str, *, seeds: int, fewer: int, points: Mapping[str, Filters], **kw: Any
) -> tuple[dict[Key, bool], dict[Key, str]]:
    """Which records the points named by ``points`` (by sweep, the filters of its points) move:
    the experiment reproduced (fixed seeds, ``kw`` as for
    :func:`qoslab.reproduction.runner.reproduce`) at ``seeds``, then with those points alone at
    ``fewer``. Returns every record and whether its effect, interval or seeds differ, and the
    second reproduction's records (each as its effect, interval and seeds, in JSON).
    :func:`undeclared_points` compares with the declarations."""

    exp = get(name)
    base = _readings(reproduce(exp, seeds=seeds, **kw))
    sweeps = {s.name: s for s in planned(exp, seeds=seeds, **plan_args(kw))[1]}
    reseed: dict[str, dict[int, int]] = {}
    for sweep, filters in points.items():
        reseed[sweep] = {i: fewer for i, (p, _) in enumerate(sweeps[sweep].points) if matches(p, filters)}
        if not reseed[sweep]:
            raise ValueError(f"experiment {name}: no point of sweep {sweep!r} matches {filters}")
    got = _readings(reproduce(exp, seeds=seeds, point_seeds=reseed, **kw))
    return {k: got.get(k) != v for k, v in base.items()}, got


def reading_points(name: str, r: Mapping[str, Any], **kw: Any) -> dict[str, frozenset[int] | None]:
    """The points record ``r`` (its claim, section, part, reading and borrowed_from) rests on,
    by sweep (None: the whole sweep), as ``--sequential`` stops them (``kw``: ``quick``,
    ``flavour``, ... as for the reproduction)."""

    return Stopping(get(name), kw).deps(DECLARED.get(name, ()), dict(r))


def undeclared_points(
    name: str, points: Mapping[str, Filters], moved: dict[Key, bool], **kw: Any
) -> list[str]:
    """The records of ``moved`` (:func:`point_dependence`) that the points moved although the
    points each declares (:func:`reading_points`) include none of them: each an
    under-declaration that would let ``--sequential`` stop a point an undecided record reads."""

    stop = Stopping(get(name), kw)
    mine = {s: {i for i, p in enumerate(stop.params[s]) if matches(p, f)} for s, f in points.items()}
    decls = DECLARED.get(name, ())
    out = []
    for k, changed in moved.items():
        if not changed:
            continue
        d = stop.deps(
            decls, {"claim": k[0], "section": k[1], "part": k[2], "reading": k[3], "borrowed_from": k[4]}
        )
        if not any(s in d and (d[s] is None or bool(idx & (d[s] or set()))) for s, idx in mine.items()):
            out.append(
                f"{name}: points {dict(points)} move {k[0][:50]!r} / {k[3]!r}, which declares none of them"
            )
    return out
