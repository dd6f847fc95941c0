"""Which sweeps each claim's verdict records rest on, for ``--sequential``'s per-claim stopping
(:mod:`qoslab.experiments.sequential_run`). Kept apart from the claims' magnitudes
(:mod:`qoslab.experiments.magnitudes`), whose file is part of the verdict rules' fingerprint:
which runs a claim reads decides how many seeds a sequential reproduction takes, not how a
record is decided."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from qoslab.experiments.magnitudes import _FRONTIER, REGISTRY
from qoslab.experiments.probe_marker_paper import FIGS, PACKET_BYTES, PACKET_READINGS
from qoslab.experiments.rio_plus_o_claims import FIG7, FIG8
from qoslab.experiments.rio_plus_o_paper import BASELINES

#: The sweeps each claim's verdict records rest on (the sweeps whose runs the experiment's
#: ``_verdicts`` reads for them), per experiment, by the text of the claim's declaration above
#: (``Magnitude.match``: every declaration with that text, all its sections and parts, rests on
#: the union). A record of a part tested on another claim's records (``borrow``) rests on that
#: claim's sweeps too, so they are listed here. Over-declaring a sweep costs runs, never a wrong
#: verdict; under-declaring one would let ``--sequential`` stop a sweep an undecided claim still
#: reads (:mod:`qoslab.experiments.sequential_run`), which
#: ``tests/test_sequential_claims.py`` checks cannot happen: it reproduces the experiment with
#: each sweep at fewer seeds and finds every record that does not declare it unchanged.
RESTS_ON: dict[str, dict[str, tuple[str, ...]]] = {
    "ard": REGISTRY.rests_on("ard"),
    "fdd-red": REGISTRY.rests_on("fdd-red"),
    "probe-marker": {
        **{
            f"{_FRONTIER} packet marking scenario (Fig. {f}:": ("frontier", "frontier_1000B", "rio_ns2")
            for f in (3, 4, 5, 6)
        },
        "Performance improvement provided by the marker employment is remarkable": (
            "frontier",
            "frontier_1000B",
        ),
        "The improvement is more significant when IN and OUT packets receive more different": (
            "frontier",
            "frontier_1000B",
        ),
        "IN packet percentage varies from about 98% to more than 99%": ("frontier", "frontier_1000B"),
        "IN packet percentage varies from about 94% to 97% with 40 sources": ("frontier", "frontier_1000B"),
        "IN loss percentage is very small (OUT)": ("frontier", "frontier_1000B", "rio_ns2"),
        "IN loss percentage is very small (IN)": ("frontier", "frontier_1000B", "rio_ns2"),
        "delay decrease achievable by marker employment is almost doubled": ("frontier", "frontier_1000B"),
        "dropping probability for OUT packets is lower: in the range [15%,30%]": (
            "frontier",
            "frontier_1000B",
        ),
        "On the contrary performance are poorer in hard differentiation": ("frontier", "frontier_1000B"),
        "For 10 flows and in hard differentiation better performance results are achieved": (
            "onoff",
            "onoff_1000B",
        ),
        "points on the marker frontier become denser": ("onoff", "onoff_1000B"),
        "the performance of marked flows and free flows are almost the same": (
            "two_domains",
            "two_domains_readings",
        ),
        "the marked flows experiment lower throughput (from two to three times)": (
            "two_domains",
            "two_domains_readings",
        ),
    },
    "rio-plus-o": REGISTRY.rests_on("rio-plus-o"),
    "twam-dwred": REGISTRY.rests_on("twam-dwred"),
}


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
    reading, claim, section = str(r["reading"]), str(r["claim"]), str(r["section"])
    pb = next((b for b, name in PACKET_READINGS.items() if name == reading), None)
    if pb is None:  # the ns-2 RIO readings read their own sweep whole
        return {}
    frontier = "frontier" if pb == PACKET_BYTES else f"frontier_{pb}B"
    fig = re.fullmatch(r"Sec\. 1 and Sec\. 4, Fig\. (\d)", section)
    if fig is not None:
        (n, diff), *_ = [k for k, f in FIGS.items() if f == int(fig.group(1))]
        return {frontier: ({"flows": n, "diff": diff, "marker": "probe"}, {"flows": n, "marker": "none"})}
    if (
        section.startswith("Sec. 4 (")
        and "10 flows, soft)" in section
        and claim.startswith("dropping probability")
    ):
        markers = (
            ("probe_plus_one",)
            if "A_IN + 1 marker" in section and "2·A_IN" not in section
            else ("probe",)
            if "2·A_IN + 1 marker" in section
            else ("probe", "probe_plus_one")
        )
        own = tuple({"flows": 10, "diff": "soft", "marker": m} for m in markers)
        return {frontier: (*own, {"flows": 10, "marker": "none"})}
    onoff = re.search(r"\(ON/OFF UDP, ([0-9.]+) s activity time\)$", claim)
    if onoff is not None:
        return {frontier.replace("frontier", "onoff"): ({"on_off_s": float(onoff.group(1))},)}
    return {}


#: Within a sweep, the points each record reads, where a claim's records read only some of a
#: sweep's points (by experiment: a function of the record giving, for each sweep it narrows,
#: the filters of the points it reads; a sweep it does not name it reads whole). ``--sequential``
#: stops a point once every record resting on it is decided, while the sweep's other points
#: grow (:mod:`qoslab.experiments.sequential_run`). The same rule as for sweeps: over-declaring
#: a point costs runs, under-declaring one would let an undecided record's point stop, which
#: ``tests/test_sequential_claims.py`` checks cannot happen (the experiment reproduced with one
#: record's points at fewer seeds moves no record that does not declare them).
POINTS: dict[str, Callable[[Mapping[str, Any]], dict[str, Filters]]] = {
    "rio-plus-o": _rio_plus_o_points,
    "probe-marker": _probe_marker_points,
}


def matches(params: Mapping[str, Any], filters: Filters) -> bool:
    """Whether a point (its parameters) is one of ``filters``', by the equality the analyses
    select points with (:func:`qoslab.experiments.selection.select`: ``==``, so ``1`` finds
    ``1.0``)."""
    return any(all(params.get(k) == v for k, v in f.items()) for f in filters)
