"""Which sweeps each claim's verdict records rest on, for ``--sequential``'s per-claim stopping
(:mod:`qoslab.reproduction.sequential_run`): the sweeps each declared claim names
(:attr:`qoslab.verdicts.claims.PaperClaim.rests_on`), and within a claim the readings' sweeps
and the records' points. Which runs a claim reads decides how many seeds a sequential
reproduction takes, not how a record is decided."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from qoslab.reproduction.magnitudes import REGISTRY
from qoslab.studies.probe_marker import claims as pm
from qoslab.studies.probe_marker.paper import PACKET_BYTES, PACKET_READINGS
from qoslab.studies.rio_plus_o.claims import FIG7, FIG8
from qoslab.studies.rio_plus_o.paper import BASELINES

#: The sweeps each claim's verdict records rest on (the sweeps whose runs the experiment's
#: ``_verdicts`` reads for them), per experiment, by the claim's words, derived from the declared
#: claims (a claim declared at several places, all its places and parts, rests on the union). A
#: part tested on another claim's records (``borrow``) declares that claim's sweeps too.
#: Over-declaring a sweep costs runs, never a wrong verdict; under-declaring one would let
#: ``--sequential`` stop a sweep an undecided claim still reads, which
#: ``tests/test_sequential_claims.py`` checks cannot happen: it reproduces the experiment with
#: each sweep at fewer seeds and finds every record that does not declare it unchanged.
RESTS_ON: dict[str, dict[str, tuple[str, ...]]] = {name: REGISTRY.rests_on(name) for name in REGISTRY.studies}


#: Within a claim, the sweeps each reading reads, where a claim's readings read different sweeps
#: (by the reading's exact words): such a record rests on the claim's sweeps that its reading
#: reads, so a reading still undecided does not keep the other readings' sweeps growing.
#: probe-marker's ``_verdicts`` reads ``frontier``/``onoff`` for 1500-byte packets, their
#: ``_1000B`` twins for 1000-byte packets, and ``rio_ns2`` for the ns-2 RIO readings of both.
READING_SWEEPS: dict[str, dict[str, tuple[str, ...]]] = {
    "probe-marker": {
        **{
            reading: tuple(s if pb == PACKET_BYTES else f"{s}_{pb}B" for s in ("frontier", "onoff"))
            for pb, reading in PACKET_READINGS.items()
        },
        **{f"{reading}, ns2 RIO": ("rio_ns2",) for reading in PACKET_READINGS.values()},
    },
}


def reading_sweeps(exp: str, reading: str) -> tuple[str, ...] | None:
    """The sweeps ``reading`` reads by :data:`READING_SWEEPS`: its exact words, else the longest
    name it extends with ", …" (probe-marker's "1500 B packets, high load = 40 flows" reads what
    "1500 B packets" reads; where that names none of a claim's sweeps, as for Fig. 9's "1500 B
    packets, 10 Mbps domain 1", the claim's sweeps stand: ``sequential_run.rests_on``); None when
    the map names none."""
    table = READING_SWEEPS.get(exp, {})
    if reading in table:
        return table[reading]
    names = [n for n in table if reading.startswith(n + ", ")]
    return table[max(names, key=len)] if names else None


#: A set of points of a sweep: a point belongs when it matches one of the filters (every
#: parameter a filter names has the filter's value).
Filters = tuple[Mapping[str, Any], ...]


def _rio_plus_o_points(r: Mapping[str, Any]) -> dict[str, Filters]:
    """rio-plus-o's Figs. 7-9: a record compares RI+O with a RIO on one setting and w_q (its
    reading: "SETTING[, BASELINE], w_q W") at one subscription level (Fig. 7, by the claim),
    profile rate (Fig. 8, by the claim) or unit (Fig. 9, by the section), every grid point of
    the figure inside that (``_against_rio`` and the per-group crossings, limits and first
    failures, each computed per point group and seed)."""
    parts = str(r["reading"]).split(", ")
    if len(parts) not in (2, 3) or not parts[-1].startswith("w_q "):
        return {}
    where: dict[str, Any] = {"setting": parts[0], "w_q": float(parts[-1].removeprefix("w_q "))}
    claim, section = str(r["claim"]), str(r["section"])
    for sub, fig7 in FIG7.items():
        if claim == fig7.words:
            return {"fig7": ({**where, "subscription": sub},)}
    for prof, fig8 in FIG8.items():
        if claim == fig8.words:
            return {"fig8": ({**where, "profile_mbps": prof},)}
    unit = re.fullmatch(r"Sec\. 4, Fig\. 9, unit ([0-9.]+) Mbps", section)
    base = {name: kind for kind, name in BASELINES.items()}.get(parts[1]) if len(parts) == 3 else None
    if unit is not None and base is not None:
        w = {**where, "unit_mbps": float(unit.group(1))}
        return {"fig9": ({**w, "kind": base}, {**w, "kind": "rio_plus_o"})}
    return {}


def _probe_marker_points(r: Mapping[str, Any]) -> dict[str, Filters]:
    """probe-marker: a Fig. 3-6 frontier record reads its figure's marker points and the all-IN
    frontier of its flow count; the OUT-loss records of the A_IN + 1 comparison read the 10-flow
    soft-differentiation marker points (and, declared with them, the 10-flow all-IN frontier:
    the frontier ratios computed beside them then never see a marker seed without its all-IN
    one); an ON/OFF record (Fig. 8) reads its activity time's points."""
    reading, key = str(r["reading"]), (str(r["claim"]), str(r["section"]))
    pb = next((b for b, name in PACKET_READINGS.items() if name == reading), None)
    if pb is None:  # the ns-2 RIO readings read their own sweep whole
        return {}
    frontier = "frontier" if pb == PACKET_BYTES else f"frontier_{pb}B"
    for (n, diff), c in pm.FRONTIER.items():
        if key == (c.words, c.place):
            return {frontier: ({"flows": n, "diff": diff, "marker": "probe"}, {"flows": n, "marker": "none"})}
    out_loss = {
        (c.words, c.place): markers
        for c, markers in (
            (pm.OUT_DIFFERENCE, ("probe", "probe_plus_one")),
            *((c, (m,)) for m, c in pm.OUT_ALONE.items()),
        )
    }
    if key in out_loss:
        own = tuple({"flows": 10, "diff": "soft", "marker": m} for m in out_loss[key])
        return {frontier: (*own, {"flows": 10, "marker": "none"})}
    for t, c in pm.ONOFF.items():
        if key == (c.words, c.place):
            return {frontier.replace("frontier", "onoff"): ({"on_off_s": t},)}
    return {}


#: Within a sweep, the points each record reads, where a claim's records read only some of a
#: sweep's points (by experiment: a function of the record giving, for each sweep it narrows,
#: the filters of the points it reads; a sweep it does not name it reads whole). ``--sequential``
#: stops a point once every record resting on it is decided, while the sweep's other points
#: grow (:mod:`qoslab.reproduction.sequential_run`). The same rule as for sweeps: over-declaring
#: a point costs runs, under-declaring one would let an undecided record's point stop, which
#: ``tests/test_sequential_claims.py`` checks cannot happen (the experiment reproduced with one
#: record's points at fewer seeds moves no record that does not declare them).
POINTS: dict[str, Callable[[Mapping[str, Any]], dict[str, Filters]]] = {
    "rio-plus-o": _rio_plus_o_points,
    "probe-marker": _probe_marker_points,
}


def matches(params: Mapping[str, Any], filters: Filters) -> bool:
    """Whether a point (its parameters) is one of ``filters``', by the equality the analyses
    select points with (:func:`qoslab.reproduction.selection.select`: ``==``, so ``1`` finds
    ``1.0``)."""
    return any(all(params.get(k) == v for k, v in f.items()) for f in filters)
