"""The core's reader enforces every declared range: for each numeric key of every queue,
meter and traffic source kind, and of the scenario's own sections ([tcp], [[node]], [[link]],
[[flow]], [[arrivals]], [[conditioner]], a size distribution), as the JSON Schema, generated
from the one declaration, states its range, a value just outside the range is a one-line error
at that key naming the range, and a value just inside is not refused for its range."""

from __future__ import annotations

import copy
import math
import tomllib
from collections.abc import Iterator
from decimal import Decimal
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
    """A bound as the core prints it (Rust's Display of an f64: the shortest digits that read
    back, never an exponent: 1e7 is 10000000)."""
    text = format(Decimal(repr(float(x))), "f")
    return text[:-2] if text.endswith(".0") else text


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


def _numeric(obj: dict[str, Any]) -> Iterator[tuple[str, str, float, float]]:
    """(key, message start, just outside, just inside) of every numeric key of a schema object."""
    for name, v in obj["properties"].items():
        if v.get("type") not in ("number", "integer") or v.get("x-source"):
            continue
        words, bounds = _bounds(v)
        yield from ((name, f"{name} {words}", out, inside) for _, out, inside in bounds)


def _error_of(table: dict[str, Any]) -> qoslab.ScenarioError | None:
    """The error loading ``table`` gives, if any."""
    try:
        qoslab.Scenario.from_toml(dumps(table), "ranges.toml")
    except qoslab.ScenarioError as e:
        return e
    return None


def _cases() -> list[tuple[str, str, str, float, float]]:
    schema = json_schema()
    base = kitchen_sink().to_table()
    objs = {
        o["properties"]["type"]["const"]: o
        for fam in ("queue", "meter", "source")
        for o in schema["$defs"][fam]["oneOf"]
    }
    return [(kind, *case) for kind, _ in _kind_tables(base) for case in _numeric(objs[kind])]


CASES = _cases()


def _load(kind: str, name: str, value: float) -> qoslab.ScenarioError | None:
    table = kitchen_sink().to_table()
    path = dict(_kind_tables(table))[kind]
    t = copy.deepcopy(table)
    node = t[path[0]][path[1]]
    for p in path[2:]:
        node = node[p]
    node[name] = value
    return _error_of(t)


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


# -- the scenario's own sections ----------------------------------------------------------------

#: A scenario with every section that has a numeric key. Groups name other groups' members
#: with `{i}`, so that a count just inside its range (1,000,000) fails fast on a name instead.
SECTIONS_BASE = """
name = "ranges"
duration = "2s"

[tcp]
window = 20

[[node]]
name = "h{i}"
count = 2
[[node]]
name = "r"

[[link]]
name = "access{i}"
count = 2
a = "h{i}"
b = "r"
bandwidth = "10Mbps"
delay = "1ms"

[[flow]]
name = "f{i}"
count = 2
src = "h{i}"
dst = "r"

[[conditioner]]
name = "c{i}"
count = 2
link = "access{i}"
meter = { type = "tsw2cm", cir = "1Mbps", window = "1s" }

[[arrivals]]
name = "web"
src = "h0"
dst = "r"
arrival_rate = 5
size = { dist = "pareto", mean = "10KB", shape = 1.5 }

[[arrivals]]
name = "mice"
src = "h1"
dst = "r"
load = 0.1
size = { dist = "lognormal", mean = "10KB", sigma = 1 }
"""

#: Where each section's keys are set in SECTIONS_BASE, and its object in the JSON Schema.
_SECTION_TABLES: dict[str, list[Any]] = {
    "tcp": ["tcp"],
    "node": ["node", 0],
    "link": ["link", 0],
    "flow": ["flow", 0],
    "conditioner": ["conditioner", 0],
    "arrivals": ["arrivals", 0],
    "size (pareto)": ["arrivals", 0, "size"],
    "size (lognormal)": ["arrivals", 1, "size"],
}


def _section_objects() -> dict[str, dict[str, Any]]:
    schema = json_schema()
    props = schema["properties"]
    out = {"tcp": props["tcp"]}
    out.update({s: props[s]["items"] for s in ("node", "link", "flow", "conditioner", "arrivals")})
    size = schema["$defs"]["size"]["oneOf"][1]
    out["size (pareto)"] = {"properties": {"shape": size["properties"]["shape"]}}
    out["size (lognormal)"] = {"properties": {"sigma": size["properties"]["sigma"]}}
    return out


def _section_key(path: list[Any]) -> str:
    return str(path[0]) + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path[1:])


def _section_cases() -> list[tuple[str, str, str, float, float]]:
    return [(section, *case) for section, obj in _section_objects().items() for case in _numeric(obj)]


SECTION_CASES = _section_cases()


def _load_section(section: str, name: str, value: float) -> qoslab.ScenarioError | None:
    t = tomllib.loads(SECTIONS_BASE)
    node: Any = t
    for p in _SECTION_TABLES[section]:
        node = node[p]
    node[name] = value
    return _error_of(t)


def test_the_sections_base_loads_and_every_section_key_is_covered():
    assert _load_section("tcp", "window", 20) is None
    keys = {f"{c[0]}.{c[1]}" for c in SECTION_CASES}
    assert keys == {
        "tcp.window",
        "tcp.initial_window",
        "tcp.dupack_threshold",
        "node.count",
        "link.count",
        "flow.count",
        "conditioner.count",
        "arrivals.arrival_rate",
        "arrivals.load",
        "arrivals.max_active",
        "size (pareto).shape",
        "size (lognormal).sigma",
    }, keys


@pytest.mark.parametrize(
    ("section", "name", "words", "outside", "inside"), SECTION_CASES, ids=lambda x: str(x)
)
def test_a_declared_range_of_a_section_is_enforced_by_its_reader(section, name, words, outside, inside):
    key = f"{_section_key(_SECTION_TABLES[section])}.{name}"
    e = _load_section(section, name, outside)
    assert e is not None, f"{key} = {outside!r} (outside its declared range) was accepted"
    assert e.key == key and e.line is not None, str(e)
    assert e.message.startswith(words), (words, str(e))
    assert "\n" not in str(e)
    e = _load_section(section, name, inside)
    assert e is None or not (e.key == key and e.message.startswith(words)), str(e)


# -- the TCP variants' constants, per flavour ------------------------------------------------


def _cc_cases() -> list[tuple[str, str, str, str, float, float]]:
    """(flavour, variant, key, message start, just outside, just inside) of every numeric key of
    `tcp.cc.VARIANT`, for each flavour whose senders take keys for that variant."""
    cc = json_schema()["properties"]["tcp"]["properties"]["cc"]["properties"]
    return [
        (alt["x-flavour"], variant, *case)
        for variant, obj in cc.items()
        for alt in obj["anyOf"]
        for case in _numeric(alt)
    ]


CC_CASES = _cc_cases()


def _load_cc(flavour: str, variant: str, name: str, value: float) -> qoslab.ScenarioError | None:
    t = tomllib.loads(SECTIONS_BASE)
    t["tcp"]["flavour"] = flavour
    t["tcp"]["cc"] = {variant: {name: value}}
    return _error_of(t)


def test_every_flavours_cc_keys_are_covered():
    keys = {f"{c[0]}:{c[1]}.{c[2]}" for c in CC_CASES}
    linux = {
        "linux:cubic.beta",
        "linux:cubic.bic_scale",
        "linux:cubic.fast_convergence",
        "linux:cubic.tcp_friendliness",
        "linux:cubic.hystart",
        "linux:cubic.hystart_detect",
        "linux:cubic.hystart_low_window",
        "linux:cubic.hystart_ack_delta_us",
        "linux:cubic.initial_ssthresh",
        "linux:dctcp.dctcp_shift_g",
        "linux:dctcp.dctcp_alpha_on_init",
    }
    assert linux <= keys and {"ns2:cubic.beta", "ns2:cubic.c", "ns2:dctcp.g"} <= keys, keys
    assert not any(k.startswith("linux:bbr") for k in keys), "tcp_bbr.c has no module parameters"


@pytest.mark.parametrize(
    ("flavour", "variant", "name", "words", "outside", "inside"), CC_CASES, ids=lambda x: str(x)
)
def test_a_declared_range_of_a_cc_key_is_enforced_by_its_reader(
    flavour, variant, name, words, outside, inside
):
    key = f"tcp.cc.{variant}.{name}"
    e = _load_cc(flavour, variant, name, outside)
    assert e is not None, f"{flavour}: {key} = {outside!r} (outside its declared range) was accepted"
    assert e.key == key and e.line is not None, str(e)
    assert e.message.startswith(words), (words, str(e))
    assert "\n" not in str(e)
    assert _load_cc(flavour, variant, name, inside) is None
