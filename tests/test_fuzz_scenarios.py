"""Fuzzing the scenario boundary: shipped scenarios with values replaced by extreme ones (huge,
negative, non-finite, wrong types, path tricks), given as tables and as ``--set`` overrides.
Every outcome is a valid scenario or a ``ScenarioError``: never a panic (``PanicException`` is a
``BaseException``), never another exception, never an allocation that exhausts memory."""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import qoslab
from conftest import SCENARIOS

FILES = sorted(SCENARIOS.glob("*.toml"))
TABLES = [tomllib.loads(p.read_text()) for p in FILES]

EXTREME: list[Any] = [
    *(2**k for k in (31, 32, 53, 62)),
    2**63 - 1,
    -(2**63),
    2**64,
    -1,
    0,
    1e308,
    -1e308,
    float("nan"),
    float("inf"),
    1.5,
    True,
    [],
    {},
    "",
    "x" * 300,
    "r\\",
    "é",
    *(f"{v}{u}" for v in ("1e12", "1e300", "-5", "0", "nan", "inf", "1e-30") for u in ("s", "ms", "ns")),
    *(f"{v}{u}" for v in ("1e19", "0", "-1", "inf") for u in ("bps", "Gbps")),
    *(f"{v}{u}" for v in ("9223372036854775807", "1e15", "0", "0.5") for u in ("pkts", "B", "MiB")),
    "uniform(0s, 1e12s)",
    "uniform(5s, 1s)",
    "../escaped.pcap",
    "/etc/passwd",
]


def _leaves(t: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(t, dict):
        for k, v in t.items():
            yield from _leaves(v, (*path, k))
    elif isinstance(t, list):
        for i, v in enumerate(t):
            yield from _leaves(v, (*path, i))
    if path:
        yield path


@st.composite
def mutants(draw: st.DrawFn) -> dict[str, Any]:
    i = draw(st.integers(0, len(TABLES) - 1))
    t = tomllib.loads(FILES[i].read_text())
    paths = list(_leaves(t))
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(paths))
        cur: Any = t
        try:
            for p in path[:-1]:
                cur = cur[p]
            cur[path[-1]] = draw(st.sampled_from(EXTREME))
        except (KeyError, IndexError, TypeError):
            pass  # an earlier mutation replaced a parent
    return t


def _resolves_or_scenario_error(make: Any) -> None:
    try:
        make().resolved  # noqa: B018 (the resolved form is part of what must not fail)
    except qoslab.ScenarioError:
        pass


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutants())
def test_mutated_tables_resolve_or_raise_scenario_error(t):
    _resolves_or_scenario_error(lambda: qoslab.Scenario.from_table(t, "<fuzz>"))


KEYS = [
    "duration",
    "name",
    "name.x",
    "tcp.window",
    "tcp.x.y",
    "link[0]",
    "link[0].delay",
    "link[99].delay",
    "link.bottleneck.bandwidth",
    "link.nope.delay",
    "flow[0].count",
    "flow[0][1]",
    "measurement.start.x",
    "link[0].queue.limit",
    "capture[0].file",
    "a..b",
    "",
]
VALUES = [
    "1e12s",
    "[1,2]",
    "{a=1}",
    "true",
    "1e400",
    "-1",
    "nan",
    "'x'",
    "",
    "=",
    "[[1]]",
    "9223372036854775808",
]


@settings(max_examples=600, deadline=None)
@given(
    st.sampled_from(FILES),
    st.lists(st.tuples(st.sampled_from(KEYS), st.sampled_from(VALUES)), min_size=1, max_size=3),
)
def test_set_overrides_resolve_or_raise_scenario_error(path, sets):
    sc = qoslab.load_scenario(path)
    _resolves_or_scenario_error(lambda: sc.with_overrides([f"{k}={v}" for k, v in sets]))
