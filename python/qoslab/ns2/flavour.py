"""The qoslab side of a comparison with ns-2: every mechanism that has an ``ns2`` flavour
(ns-2.35's dsRED RIO/WRED queues and policers, rule for rule; see
``crates/qoslab-core/src/aqm/dsred.rs``) switched to it.

Which kinds have the flavour is asked of the core (the kinds whose keys include ``flavour``
in the generated scenario schema), so a kind that gains one needs no edit here.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from functools import cache
from typing import Any

from qoslab import _core
from qoslab.scenario import Scenario

_QUEUE_KEYS = ("queue", "queue_ab", "queue_ba")


def _queues(links: list[Any]) -> Iterator[dict[str, Any]]:
    """Every queue table of ``links`` (a scenario table's ``link`` list or the resolved
    ``links``), the physical queues of multi queues included."""

    def walk(q: Any) -> Iterator[dict[str, Any]]:
        if isinstance(q, dict):
            yield q
            for sub in q.get("queues", []) or []:
                if isinstance(sub, dict):
                    yield from walk(sub.get("queue"))

    for link in links:
        for key in _QUEUE_KEYS:
            yield from walk(link.get(key))


@cache
def flavoured_kinds() -> tuple[frozenset[str], frozenset[str]]:
    """The queue kinds and the meter kinds that take a ``flavour`` key."""
    defs = _core.scenario_schema()["$defs"]

    def kinds(name: str) -> frozenset[str]:
        out = set()
        for v in defs[name]["oneOf"]:
            props = v.get("properties", {})
            if "flavour" in props:
                out.add(props["type"]["const"])
        return frozenset(out)

    return kinds("queue"), kinds("meter")


def ns2_flavoured(sc: Scenario) -> tuple[Scenario, list[str]]:
    """``sc`` with ``flavour = "ns2"`` on every queue and meter whose kind has it, and notes on
    what was left as it was (colour-aware meters: ns-2's policers are colour-blind)."""
    queues, meters = flavoured_kinds()
    table = copy.deepcopy(sc.table())
    notes: list[str] = []
    changed = 0
    for q in _queues(table.get("link", [])):
        if q.get("type") in queues:
            q["flavour"] = "ns2"
            changed += 1
    for c in table.get("conditioner", []):
        m = c.get("meter")
        if isinstance(m, dict) and m.get("type") in meters:
            if m.get("mode", "blind") == "aware":
                notes.append(
                    f"conditioner {c.get('name')!r}: a colour-aware meter keeps the reference "
                    "flavour (ns-2's policers are colour-blind)"
                )
                continue
            m["flavour"] = "ns2"
            changed += 1
    if not changed:
        return sc, notes
    return Scenario.from_table(table, f"{sc.source} (ns2 flavour)", allow_paths=sc.allow_paths), notes


#: :func:`flavours_used` of each scenario this process has read, by its hash (of the canonical
#: resolved form, which holds every flavour): each look of a sequential reproduction reports the
#: flavours of every scenario, and they are in the scenario's whole resolved table.
_USED: dict[str, dict[str, frozenset[str]]] = {}


def flavours_used(sc: Scenario) -> dict[str, set[str]]:
    """``{kind: {flavours}}`` of the queues and meters of ``sc`` whose kind has a flavour
    (what a report states: which reading of dsRED's mechanisms produced its numbers)."""
    h = sc.sha256()
    if h not in _USED:
        _USED[h] = {k: frozenset(v) for k, v in _flavours_in(sc).items()}
    return {k: set(v) for k, v in _USED[h].items()}


def _flavours_in(sc: Scenario) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    r = sc.resolved
    meters = [c.get("meter") for c in r.get("conditioners", [])]
    for d in [*_queues(r.get("links", [])), *meters]:
        if isinstance(d, dict) and "flavour" in d and "type" in d:
            out.setdefault(str(d["type"]), set()).add(str(d["flavour"]))
    return out
