"""What rio-plus-o's records read within the sweeps their claims rest on, for
``--sequential``'s per-claim stopping (the machinery reads it by the names
:mod:`qoslab.reproduction.rests_on` declares): the points each record reads (:func:`points`);
every reading of a claim reads the claim's sweeps."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from qoslab.studies.rio_plus_o.claims import FIG7, FIG8
from qoslab.studies.rio_plus_o.paper import BASELINES


def points(r: Mapping[str, Any]) -> dict[str, tuple[Mapping[str, Any], ...]]:
    """Figs. 7-9: a record compares RI+O with a RIO on one setting and w_q (its reading:
    "SETTING[, BASELINE], w_q W") at one subscription level (Fig. 7, by the claim), profile rate
    (Fig. 8, by the claim) or unit (Fig. 9, by the section), every grid point of the figure
    inside that (``_against_rio`` and the per-group crossings, limits and first failures, each
    computed per point group and seed)."""
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
