"""The core's reader enforces every declared range: for each numeric key of every queue,
meter and traffic source kind (as the JSON Schema, generated from the one declaration, states
its range), a value just outside the range is a one-line error at that key naming the range, and a value just
inside is not refused for its range."""

from __future__ import annotations

import copy
import math
from collections.abc import Iterator
from typing import Any

import pytest

import qoslab
from qoslab.schema import json_schema
from qoslab.toml_writer import dumps
from test_builder import kitchen_sink


def _kind_tables(table: dict[str, Any]) -> Iterator[tuple[str, list[Any]]]:
    """(type, path) of the first table of each queue, meter and source kind in a scenario table
    (a source's keys are its flow's)."""
    seen: set[str] = set()
    for i, flow in enumerate(table.get("flow", [])):
        kind = flow.get("type", "tcp")
        if kind != "tcp" and kind not in seen:
            seen.add(kind)
            yield kind, ["flow", i]
    for i, link in enumerate(table.get("link", [])):
        for q in ("queue", "queue_ab", "queue_ba"):
            t = link.get(q)
            if isinstance(t, dict) and t["type"] not in seen:
                seen.add(t["type"])
                yield t["type"], ["link", i, q]
    for i, cond in enumerate(table.get("conditioner", [])):
        t = cond["meter"]
        if t["type"] not in seen:
            seen.add(t["type"])
            yield t["type"], ["conditioner", i, "meter"]


def _key(path: list[Any]) -> str:
    return f"{path[0]}[{path[1]}]" + "".join(f".{p}" for p in path[2:])


def _g(x: float) -> str:
    """A bound as the core prints it (Rust's shortest form of these round numbers)."""
    return f"{x:g}"


def _bounds(v: dict[str, Any]) -> tuple[str, list[tuple[str, float, float]]]:
    """The range message's start and, per bound, (which, just outside, just inside)."""
    out = []
    if v["type"] == "integer":
        lo, hi = v.get("minimum", 0), v.get("maximum")
        if lo > 0:
            out.append(("min", lo - 1, lo))
        if hi is not None:
            out.append(("max", hi + 1, hi))
        return ("must be between" if hi is not None else f"must be at least {lo}"), out
    lo = v.get("minimum", v.get("exclusiveMinimum"))
    hi = v.get("maximum", v.get("exclusiveMaximum"))
    lo_open, hi_open = "exclusiveMinimum" in v, "exclusiveMaximum" in v
    if lo is not None:
        out.append(
            (
                "min",
                lo if lo_open else math.nextafter(lo, -math.inf),
                math.nextafter(lo, math.inf) if lo_open else lo,
            )
        )
    if hi is not None:
        out.append(
            (
                "max",
                hi if hi_open else math.nextafter(hi, math.inf),
                math.nextafter(hi, -math.inf) if hi_open else hi,
            )
        )
    if lo is not None and hi is not None:
        words = f"must be in {'(' if lo_open else '['}{_g(lo)}, {_g(hi)}{')' if hi_open else ']'}"
    elif lo is not None:
        words = "must be positive" if lo_open and lo == 0 else f"must be {'>' if lo_open else '>='} {_g(lo)}"
    else:
        words = f"must be {'<' if hi_open else '<='} {_g(hi)}"
    return words, out


def _cases() -> list[tuple[str, str, str, float, float]]:
    schema = json_schema()
    base = kitchen_sink().to_table()
    objs = {
        o["properties"]["type"]["const"]: o
        for fam in ("queue", "meter", "source")
        for o in schema["$defs"][fam]["oneOf"]
    }
    cases = []
    for kind, _ in _kind_tables(base):
        for name, v in objs[kind]["properties"].items():
            if v.get("type") not in ("number", "integer"):
                continue
            words, bounds = _bounds(v)
            cases += [(kind, name, f"{name} {words}", out, inside) for _, out, inside in bounds]
    return cases


CASES = _cases()


def _load(kind: str, name: str, value: float) -> qoslab.ScenarioError | None:
    table = kitchen_sink().to_table()
    path = dict(_kind_tables(table))[kind]
    t = copy.deepcopy(table)
    node = t[path[0]][path[1]]
    for p in path[2:]:
        node = node[p]
    node[name] = value
    try:
        qoslab.Scenario.from_toml(dumps(t), "ranges.toml")
    except qoslab.ScenarioError as e:
        return e
    return None


def test_every_kind_with_a_numeric_key_is_covered():
    kinds = {c[0] for c in CASES}
    assert {
        "red",
        "ared",
        "dwred",
        "fdd_red",
        "pie",
        "fq_codel",
        "arm",
        "ard",
        "twam",
        "probe",
        "pareto",
    } <= kinds, kinds
    assert len(CASES) >= 40, len(CASES)


@pytest.mark.parametrize(("kind", "name", "words", "outside", "inside"), CASES, ids=lambda x: str(x))
def test_a_declared_range_is_enforced_by_the_reader(kind, name, words, outside, inside):
    table = kitchen_sink().to_table()
    key = f"{_key(dict(_kind_tables(table))[kind])}.{name}"
    e = _load(kind, name, outside)
    assert e is not None, f"{kind}.{name} = {outside!r} (outside its declared range) was accepted"
    assert e.key == key and e.line is not None, str(e)
    if not (isinstance(outside, int) and outside < 0):  # below 0 the whole-number type refuses it
        assert e.message.startswith(words), (words, str(e))
    assert "\n" not in str(e)
    e = _load(kind, name, inside)
    assert e is None or not (e.key == key and e.message.startswith(words)), str(e)
