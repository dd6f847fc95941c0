"""What probe-marker's records read within the sweeps their claims rest on, for
``--sequential``'s per-claim stopping (the machinery reads it by the names
:mod:`qoslab.reproduction.rests_on` declares): the sweeps each reading reads
(:data:`READING_SWEEPS`) and the points each record reads (:func:`points`).

``_verdicts`` reads ``frontier``/``onoff`` for 1500-byte packets, their ``_1000B`` twins for
1000-byte packets, and ``rio_ns2`` for the ns-2 RIO readings of both."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from qoslab.studies.probe_marker import claims as pm
from qoslab.studies.probe_marker.paper import PACKET_BYTES, PACKET_READINGS

#: The sweeps each reading reads, by the reading's exact words (a reading extending one with
#: ", …" reads what that one reads: "1500 B packets, high load = 40 flows" reads what
#: "1500 B packets" reads).
READING_SWEEPS: dict[str, tuple[str, ...]] = {
    **{
        reading: tuple(s if pb == PACKET_BYTES else f"{s}_{pb}B" for s in ("frontier", "onoff"))
        for pb, reading in PACKET_READINGS.items()
    },
    **{f"{reading}, ns2 RIO": ("rio_ns2",) for reading in PACKET_READINGS.values()},
}


def points(r: Mapping[str, Any]) -> dict[str, tuple[Mapping[str, Any], ...]]:
    """A Fig. 3-6 frontier record reads its figure's marker points and the all-IN frontier of
    its flow count; the OUT-loss records of the A_IN + 1 comparison read the 10-flow
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
