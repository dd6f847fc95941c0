"""Scenarios built in Python: typed, keyword-only dataclasses for every table a scenario file
has (nodes, links, queues, conditioners and their meters, flows, TCP settings, measurement,
captures), checked as they are constructed, written to TOML and read back.

>>> from qoslab import builder as b
>>> sc = b.dumbbell(4, bottleneck_rate="2Mbps", bottleneck_queue=b.RED(min_th=5, max_th=15))
>>> sc.links[1].queue_ab
RED(min_th=5, max_th=15)
>>> sc.links[1].queue_ab = b.RIO(in_=b.Curve(min_th=40, max_th=70, max_p=0.02),
...                              out=b.Curve(min_th=10, max_th=30, max_p=0.1))
>>> res = sc.run(seed=1)                                                  # doctest: +SKIP

A class per table and per ``type`` of queue and meter, with the scenario file's key names
(``in`` is ``in_``; the lists ``[[node]]``, ``[[link]]``... are ``nodes``, ``links``...).
Values are written as in the file: durations, rates and sizes are strings with a unit
(``"26ms"``, ``"1.2Mbps"``, ``"500B"``, ``"100pkts"``), thresholds and probabilities are
numbers. ``None`` means "not written": the core's default applies (each class's docstring says
which). A group of ``count`` items takes ``{i}`` in its names, and a list of ``count`` values
for the keys that allow one (:data:`PerMember`).

Checks here are the cheap ones (a key's type, unit, range and choices, named in a
:class:`qoslab.ScenarioError` with the key); the Rust core stays the authority:
:meth:`ScenarioSpec.to_scenario` hands the TOML to it and reports its errors with the key.
``tests/test_builder.py`` walks the core's JSON Schema (:func:`qoslab.schema.json_schema`) and
fails when a kind or key exists on one side only, or differs in required-ness, type, unit,
range or choices.
"""

from __future__ import annotations

import copy
import math
import re
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import MISSING, Field, dataclass, field, fields
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Self, TypeAlias, TypeVar

from qoslab.errors import ScenarioError, scenario_error
from qoslab.scenario import Scenario
from qoslab.toml_writer import dumps

if TYPE_CHECKING:
    from qoslab.simulate import Result

__all__ = [
    "ARD",
    "ARM",
    "Arrivals",
    "CoDel",
    "FQCoDel",
    "PIE",
    "StepMarking",
    "DWRED",
    "FDDRED",
    "METERS",
    "QUEUES",
    "RED",
    "RIO",
    "TSW2CM",
    "TSW3CM",
    "TWAM",
    "WRED",
    "AdaptiveRED",
    "Capture",
    "Component",
    "Conditioner",
    "Curve",
    "DropTail",
    "Flow",
    "Link",
    "Measurement",
    "Meter",
    "MultiQueue",
    "Node",
    "PhysicalQueue",
    "ProbeMarker",
    "Queue",
    "RIOPlusO",
    "ScenarioSpec",
    "SizeDistribution",
    "SrTCM",
    "TcpSettings",
    "TokenBucket",
    "TrTCM",
    "chain",
    "dumbbell",
    "parking_lot",
]

# -- value types --------------------------------------------------------------------------------

#: A duration with its unit: ``"26ms"``, ``"1.5s"``, ``"200us"``, ``"10ns"``, ``"2min"``.
Duration: TypeAlias = str
#: A bit rate with its unit: ``"1.2Mbps"``, ``"250kbps"``, ``"10Gbps"``.
Rate: TypeAlias = str
#: A size with its unit: ``"500B"``, ``"64KB"`` (64 000 B), ``"1KiB"``.
Size: TypeAlias = str
#: A queue limit: ``"100pkts"`` or a size (``"64KB"``).
Limit: TypeAlias = str
#: A start time: a duration or ``"uniform(LO, HI)"`` (drawn from the run seed).
Start: TypeAlias = str
#: A DiffServ codepoint: a name (``"AF11"``, ``"EF"``, ``"BE"``) or a number 0..=63.
Codepoint: TypeAlias = str | int

_T = TypeVar("_T")
#: One value for a whole group (``count``), or a list of one value per member.
PerMember: TypeAlias = _T | list[_T]

FlowType = Literal["tcp", "cbr", "onoff", "poisson", "pareto", "trace"]
SizeLaw = Literal["fixed", "exponential", "pareto", "lognormal", "empirical"]
TcpVariant = Literal["reno", "newreno", "sack", "cubic", "dctcp", "bbr"]
TcpFlavour = Literal["ns2", "linux"]
Direction = Literal["ab", "ba"]
CaptureDirection = Literal["ab", "ba", "both"]
MeasurementPoint = Literal["receiver", "sender"]
Scope = Literal["per_flow", "aggregate"]
Flavour = Literal["reference", "ns2"]
MeterMode = Literal["blind", "aware"]
RioMode = Literal["coupled", "decoupled"]
Scheduler = Literal["priority", "rr", "wrr", "drr"]
RttSource = Literal["estimator", "oracle"]
Penalty = Literal["shares", "fig2"]
Victim = Literal["penalty", "random"]
DropOrder = Literal["before_remark", "among_remarked"]
WindowSource = Literal["edge", "oracle"]
TwamFormula = Literal["eq3", "eq3_neighbour"]
ProbeIncrease = Literal["double_plus_one", "plus_one", "divide"]

# The unit patterns of the JSON Schema (the test compares them with the core's).
UNIT_PATTERNS: dict[str, str] = {
    "duration": r"^\s*[0-9.eE+-]+\s*(ns|us|µs|ms|s|min)\s*$",
    "rate": r"^\s*[0-9.eE+-]+\s*[kKmMgGtT]?(bps|b/s|bit/s|bits/s)\s*$",
    "bytes": r"^\s*[0-9.eE+-]+\s*(B|bytes|[kK]B|MB|GB|KiB|MiB)\s*$",
    "limit": r"^\s*[0-9.eE+-]+\s*(pkts|pkt|packets|B|bytes|[kK]B|MB|GB|KiB|MiB)\s*$",
}
_UNITS = {k: re.compile(v) for k, v in UNIT_PATTERNS.items()}
_UNIFORM = re.compile(r"^\s*uniform\((.*),(.*)\)\s*$")
_EXPECTED = {
    "duration": 'a duration string such as "26ms" (units: ns, us, ms, s, min)',
    "start": 'a start time such as "0s" or "uniform(0s, 1s)"',
    "rate": 'a rate string such as "1.2Mbps" (bps, b/s, bit/s or bits/s; prefix k, M, G or T in either case)',
    "bytes": 'a size string such as "500B" or "64KB" (units: B, KB, MB, GB, KiB, MiB)',
    "limit": 'a queue limit such as "100pkts" or "64KB"',
}

# -- field declarations -------------------------------------------------------------------------


def _m(
    kind: str,
    *,
    key: str | None = None,
    choices: Any = None,
    lo: float | None = None,
    hi: float | None = None,
    lo_open: bool = False,
    hi_open: bool = False,
    per_member: bool = False,
    cls: type[Component] | None = None,
) -> dict[str, Any]:
    """A field's metadata: its kind of value, TOML key (if not the field's name), choices (a
    ``Literal`` type), range, whether a group may give a list, and the class of a table."""
    return {
        "kind": kind,
        "key": key,
        "choices": tuple(choices.__args__) if choices is not None else (),
        "lo": lo,
        "hi": hi,
        "lo_open": lo_open,
        "hi_open": hi_open,
        "per_member": per_member,
        "cls": cls,
    }


def _opt(kind: str, **kw: Any) -> Any:
    """An optional key: ``None`` (not written, the core's default applies)."""
    return field(default=None, metadata=_m(kind, **kw))


def _req(kind: str, **kw: Any) -> dict[str, Any]:
    """The metadata of a required key (used as ``field(metadata=_req(...))``)."""
    return _m(kind, **kw)


def toml_key(f: Field[Any]) -> str:
    """The scenario-file key of dataclass field ``f``."""
    k = f.metadata.get("key")
    return str(k) if k else f.name


def is_required(f: Field[Any]) -> bool:
    return f.default is MISSING and f.default_factory is MISSING


def _what(v: object) -> str:
    return f"{type(v).__name__} {v!r}"


def _number(v: object) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _one_problem(meta: Mapping[str, Any], v: object) -> str | None:
    """What is wrong with the single value ``v`` of a field described by ``meta``, or None."""
    kind = meta["kind"]
    if kind == "size":  # a size with a unit, or a distribution
        if isinstance(v, SizeDistribution):
            return None
        return _one_problem({**meta, "kind": "bytes"}, v)
    if kind in _UNITS or kind == "start":
        if isinstance(v, str):
            if kind == "start" and (m := _UNIFORM.match(v)):
                if all(_UNITS["duration"].match(x) for x in m.groups()):
                    return None
            elif _UNITS["duration" if kind == "start" else kind].match(v):
                return None
            return f"{v!r}: expected {_EXPECTED[kind]}"
        if _number(v):
            return f"{v} has no unit: expected {_EXPECTED[kind]}"
        return f"expected {_EXPECTED[kind]}, got {_what(v)}"
    if kind == "number":
        if not _number(v):
            return f"expected a number, got {_what(v)}"
        x = float(v)  # type: ignore[arg-type]
        lo, hi = meta["lo"], meta["hi"]
        bad_lo = lo is not None and (x <= lo if meta["lo_open"] else x < lo)
        bad_hi = hi is not None and (x >= hi if meta["hi_open"] else x > hi)
        if not math.isfinite(x) or bad_lo or bad_hi:
            left = "(" if meta["lo_open"] else "["
            right = ")" if meta["hi_open"] else "]"
            span = f"{left}{'-inf' if lo is None else f'{lo:g}'}, {'inf' if hi is None else f'{hi:g}'}{right}"
            return f"{v} is out of range: expected a number in {span}"
        return None
    if kind == "integer":
        if not isinstance(v, int) or isinstance(v, bool):
            return f"expected a whole number, got {_what(v)}"
        if v < meta["lo"]:
            return f"{v} is out of range: expected a whole number >= {meta['lo']:g}"
        return None
    if kind == "bool":
        return None if isinstance(v, bool) else f"expected true or false, got {_what(v)}"
    if kind == "choice":
        if isinstance(v, str) and v in meta["choices"]:
            return None
        return f"unknown value {v!r}: expected one of {', '.join(repr(c) for c in meta['choices'])}"
    if kind == "name":
        return None if isinstance(v, str) else f"expected a string, got {_what(v)}"
    if kind == "dscp":
        if (isinstance(v, str) and v) or (isinstance(v, int) and not isinstance(v, bool)):
            return None
        return f'expected a codepoint such as "AF11", "EF", "BE" or a number 0..=63, got {_what(v)}'
    if kind == "codepoints":
        if isinstance(v, list | tuple) and all(isinstance(x, str) for x in v):
            return None
        return f'expected a list of codepoint names such as ["AF11", "AF12"], got {_what(v)}'
    if kind == "rates":
        if not isinstance(v, Mapping):
            return f'expected a table of rates by flow name, e.g. {{"f0": "1Mbps"}}, got {_what(v)}'
        for name, r in v.items():
            if not isinstance(name, str) or not isinstance(r, str) or not _UNITS["rate"].match(r):
                return f"flow {name!r}: expected {_EXPECTED['rate']}, got {_what(r)}"
        return None
    cls = {"curve": Curve, "queue": Queue, "single_queue": Queue, "meter": Meter}.get(kind, meta["cls"])
    if kind == "tables":
        if not isinstance(v, list | tuple):
            return f"expected a list of {cls.__name__}, got {_what(v)}"
        bad = [x for x in v if not isinstance(x, cls)]
        return f"expected a list of {cls.__name__}, got an item {_what(bad[0])}" if bad else None
    if not isinstance(v, cls):
        return f"expected a {cls.__name__}, got {_what(v)}"
    if kind == "single_queue" and isinstance(v, MultiQueue):
        return "a physical queue cannot itself be a multi queue"
    return None


def _problem(meta: Mapping[str, Any], v: object) -> str | None:
    if meta["per_member"] and isinstance(v, list | tuple):
        if not v:
            return "an empty list: give one value, or one per group member"
        for i, x in enumerate(v):
            p = _one_problem(meta, x)
            if p is not None:
                return f"member {i}: {p}"
        return None
    return _one_problem(meta, v)


def _write(v: object) -> object:
    """A field's value as the scenario table holds it."""
    if isinstance(v, Component):
        return v.to_table()
    if isinstance(v, list | tuple):
        return [_write(x) for x in v]
    if isinstance(v, Mapping):
        return {str(k): _write(x) for k, x in v.items()}
    return v


def _is_set(f: Field[Any], obj: object) -> bool:
    """Whether field ``f`` of ``obj`` is written to the scenario table."""
    v = getattr(obj, f.name)
    # an empty list that is the field's default (no captures, no conditioners) is not written
    return v is not None and not (f.default_factory is list and isinstance(v, list) and not v)


def _path(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


# -- the base class -----------------------------------------------------------------------------


class Component:
    """A table of a scenario: a dataclass whose fields are the table's keys.

    ``to_table()`` gives the nested dict a scenario file holds (keys that are ``None`` left
    out) and ``from_table(table)`` reads one, with errors that name the key path."""

    _tag: ClassVar[str | None] = None

    def __post_init__(self) -> None:
        self._check(source="<builder>", prefix=type(self).__name__)

    @classmethod
    def _fields(cls) -> tuple[Field[Any], ...]:
        return fields(cls)  # type: ignore[arg-type]

    @classmethod
    def _values_problem(cls, values: Mapping[str, Any]) -> tuple[str, str] | None:
        """(key, what is wrong) for the first bad value among ``values`` (by field name)."""
        for f in cls._fields():
            v = values.get(f.name)
            if v is None:
                if is_required(f):
                    return toml_key(f), "missing: the key is required"
                continue
            p = _problem(f.metadata, v)
            if p is not None:
                return toml_key(f), p
        return cls._cross_problem(values)

    @classmethod
    def _cross_problem(cls, values: Mapping[str, Any]) -> tuple[str, str] | None:
        """Checks between keys that are cheap to make here (the core makes them all)."""
        return None

    def __repr__(self) -> str:
        # Only the keys that are set: what the scenario file would hold.
        args = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in self._fields() if _is_set(f, self))
        return f"{type(self).__name__}({args})"

    def _values(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in self._fields()}

    def _check(self, *, source: str, prefix: str) -> None:
        p = self._values_problem(self._values())
        if p is not None:
            raise scenario_error(source, p[1], key=_path(prefix, p[0]))

    def to_table(self) -> dict[str, Any]:
        """The table as a scenario file writes it (checked again: fields may have been changed
        since construction)."""
        self._check(source="<builder>", prefix=type(self).__name__)
        out: dict[str, Any] = {}
        if self._tag is not None:
            out["type"] = self._tag
        for f in self._fields():
            if _is_set(f, self):
                out[toml_key(f)] = _write(getattr(self, f.name))
        return out

    @classmethod
    def from_table(cls, table: Mapping[str, Any], *, key: str = "", source: str = "<table>") -> Self:
        """Reads a scenario table (as ``tomllib`` gives it). Errors are
        :class:`qoslab.ScenarioError` naming ``source`` and the key path below ``key``."""
        if not isinstance(table, Mapping):
            raise scenario_error(source, f"expected a table, got {_what(table)}", key=key)
        by_key = {toml_key(f): f for f in cls._fields()}
        for k in table:
            if k == "type" and cls._tag is not None:
                if table[k] != cls._tag:
                    msg = f"a {cls.__name__} table has type {cls._tag!r}, got {table[k]!r}"
                    raise scenario_error(source, msg, key=_path(key, k))
                continue
            if k not in by_key:
                msg = f"unknown key {k!r}: {cls.__name__} takes {', '.join(by_key)}"
                raise scenario_error(source, msg, key=_path(key, k))
        values: dict[str, Any] = {}
        for k, f in by_key.items():
            if k in table:
                values[f.name] = _read(f.metadata, table[k], _path(key, k), source)
        p = cls._values_problem(values)
        if p is not None:
            raise scenario_error(source, p[1], key=_path(key, p[0]))
        return cls(**values)


def _read(meta: Mapping[str, Any], v: object, key: str, source: str) -> object:
    """A value of a scenario table as the builder holds it (nested tables become objects)."""
    kind = meta["kind"]
    if kind == "curve":
        return Curve.from_table(v, key=key, source=source)  # type: ignore[arg-type]
    if kind in ("queue", "single_queue"):
        return Queue.from_table(v, key=key, source=source)  # type: ignore[arg-type]
    if kind == "meter":
        return Meter.from_table(v, key=key, source=source)  # type: ignore[arg-type]
    if kind == "table" or (kind == "size" and isinstance(v, Mapping)):
        cls = SizeDistribution if kind == "size" else meta["cls"]
        return cls.from_table(v, key=key, source=source)  # type: ignore[arg-type]
    if kind == "tables":
        if not isinstance(v, list):
            raise scenario_error(source, f"expected a list of tables, got {_what(v)}", key=key)
        return [meta["cls"].from_table(x, key=f"{key}[{i}]", source=source) for i, x in enumerate(v)]
    if isinstance(v, list):
        return list(v)
    if isinstance(v, Mapping):
        return dict(v)
    return v


class _Tagged(Component):
    """A table with a ``type`` that selects the class (queues and meters)."""

    #: The registry of the kinds of this family, ``type`` → class.
    _registry: ClassVar[dict[str, type[_Tagged]]]
    _family: ClassVar[str]

    @classmethod
    def from_table(cls, table: Mapping[str, Any], *, key: str = "", source: str = "<table>") -> Self:
        """Reads a table; called on the family's base class (:class:`Queue`, :class:`Meter`),
        its ``type`` selects the class, and an unknown ``type`` is an error naming the kinds."""
        if cls._tag is not None or not isinstance(table, Mapping):
            return super().from_table(table, key=key, source=source)
        kinds = ", ".join(repr(k) for k in cls._registry)
        if "type" not in table:
            msg = f"a {cls._family} table needs `type`, one of {kinds}"
            raise scenario_error(source, msg, key=_path(key, "type"))
        kind = table["type"]
        sub = cls._registry.get(kind) if isinstance(kind, str) else None
        if sub is None:
            msg = f"unknown {cls._family} type {kind!r}: expected one of {kinds}"
            raise scenario_error(source, msg, key=_path(key, "type"))
        obj = sub.from_table(table, key=key, source=source)
        assert isinstance(obj, cls)
        return obj


# -- queues -------------------------------------------------------------------------------------


@dataclass(kw_only=True, repr=False)
class Curve(Component):
    """A RED drop curve (Floyd & Jacobson): no early drop below ``min_th``, a drop probability
    rising linearly to ``max_p`` at ``max_th`` (thresholds of the average queue, in packets).

    Attributes:
        min_th: Minimum threshold, packets. Required.
        max_th: Maximum threshold, packets. Required.
        max_p: Drop probability at max_th, in (0, 1]. Required.
    """

    min_th: float = field(metadata=_req("number", lo=0.0))
    max_th: float = field(metadata=_req("number", lo=0.0))
    max_p: float = field(metadata=_req("number", lo=0.0, hi=1.0, lo_open=True))


class Queue(_Tagged):
    """A queue discipline (active queue management) of one link direction. ``Queue.from_table``
    reads any kind; :data:`QUEUES` lists them by ``type``."""

    _family = "queue"


@dataclass(kw_only=True, repr=False)
class DropTail(Queue):
    """Tail drop: a packet that does not fit in the buffer is dropped (a link's queue when none
    is given, with ns-2's 50 packets).

    Attributes:
        limit: Buffer size, in packets or bytes (``"100pkts"``, ``"64KB"``). Default: 50pkts.
    """

    _tag = "droptail"
    limit: Limit | None = _opt("limit")


@dataclass(kw_only=True, repr=False)
class RED(Queue):
    """Random Early Detection (Floyd & Jacobson 1993) with ns-2.35's Queue/RED behaviour:
    idle-time correction, count spreading with ``wait``, gentle RED, byte mode, ECN marking.

    Attributes:
        limit: Buffer size, in packets or bytes. Default: 50pkts.
        min_th: Minimum threshold of the average, packets (below it nothing is dropped early).
            Required.
        max_th: Maximum threshold of the average, packets (greater than min_th). Required.
        max_p: Early-drop probability at max_th. Default: 0.1.
        w_q: Weight of the average (EWMA of the queue length on each arrival). Default: 0.002.
        gentle: Gentle RED: the drop probability rises from max_p at max_th to 1 at 2·max_th.
            Default: false.
        wait: ns-2's wait_: no early drop until count·p_b ≥ 1, then p_b/(2 − count·p_b).
            Default: true.
        byte_mode: Average and thresholds in bytes (thresholds scaled by mean_pkt_size).
            Default: false.
        mean_pkt_size: Mean packet size: idle-time correction, and the byte-mode unit.
            Default: 500B.
        ecn: Mark ECN-capable packets instead of dropping them early (ns-2's setbit_).
            Default: false.
    """

    _tag = "red"
    limit: Limit | None = _opt("limit")
    min_th: float = field(metadata=_req("number", lo=0.0))
    max_th: float = field(metadata=_req("number", lo=0.0, lo_open=True))
    max_p: float | None = _opt("number", lo=0.0, hi=1.0, lo_open=True)
    w_q: float | None = _opt("number", lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    gentle: bool | None = _opt("bool")
    wait: bool | None = _opt("bool")
    byte_mode: bool | None = _opt("bool")
    mean_pkt_size: Size | None = _opt("bytes")
    ecn: bool | None = _opt("bool")


@dataclass(kw_only=True, repr=False)
class AdaptiveRED(Queue):
    """Adaptive RED (Floyd, Gummadi & Shenker 2001; ns-2.35's Queue/RED with adaptive_ 1): RED
    whose max_p adapts (AIMD every ``interval``) to keep the average between min_th + 0.4Δ and
    max_th − 0.4Δ. ``type = "ared"``.

    Attributes:
        limit, min_th, max_th, max_p, w_q, gentle, wait, byte_mode, mean_pkt_size, ecn: as
            :class:`RED`.
        alpha: α, additive increase of max_p (at most max_p/4 per step). Default: 0.01.
        beta: β, multiplicative decrease of max_p. Default: 0.9.
        bottom: Lower bound of max_p. Default: min(0.01, 80000 / bandwidth in bit/s), as ns-2.
        top: Upper bound of max_p. Default: 0.5.
        interval: Least time between two changes of max_p. Default: 0.5s.
    """

    _tag = "ared"
    limit: Limit | None = _opt("limit")
    min_th: float = field(metadata=_req("number", lo=0.0))
    max_th: float = field(metadata=_req("number", lo=0.0, lo_open=True))
    max_p: float | None = _opt("number", lo=0.0, hi=1.0, lo_open=True)
    w_q: float | None = _opt("number", lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    gentle: bool | None = _opt("bool")
    wait: bool | None = _opt("bool")
    byte_mode: bool | None = _opt("bool")
    mean_pkt_size: Size | None = _opt("bytes")
    ecn: bool | None = _opt("bool")
    alpha: float | None = _opt("number", lo=0.0, hi=1.0, lo_open=True)
    beta: float | None = _opt("number", lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    bottom: float | None = _opt("number", lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    top: float | None = _opt("number", lo=0.0, hi=1.0, lo_open=True)
    interval: Duration | None = _opt("duration")


@dataclass(kw_only=True, repr=False)
class RIO(Queue):
    """RIO, RED with In and Out (Clark & Fang 1998), the AF PHB's dropper (RFC 2597): a RED
    curve and count per drop precedence; coupled (RIO-C: avg_in for IN, avg_total for OUT) or
    decoupled (RIO-D: one average per precedence).

    Attributes:
        limit: Buffer size, in packets or bytes. Default: 50pkts.
        mode: ``"coupled"`` (RIO-C: each average counts its precedence and all better ones) or
            ``"decoupled"`` (RIO-D). Default: coupled.
        in_: Curve of precedence 0 (AFx1, IN, green); the key ``in``. Required.
        mid: Curve of precedence 1 (AFx2) when three precedences are used. Default: none.
        out: Curve of the lowest precedence (OUT; AFx3, or AFx2 with two; and best effort).
            Required.
        w_q: Weight of the average. Default: 0.002.
        gentle: Gentle RED on each curve. Default: false.
        wait: ns-2 Queue/RED's wait_ (dsRED has none: drops spread as p_b/(1 − count·p_b)).
            Default: false.
        mean_pkt_size: Mean packet size (idle-time correction). Default: 500B.
        ecn: Mark ECN-capable packets instead of dropping them early (RFC 3168); in the ns2
            flavour also above max_th, as dsRED does. Default: false.
        flavour: ``"reference"`` (the paper) or ``"ns2"`` (ns-2.35 dsRED, rule for rule).
            Default: reference.
    """

    _tag = "rio"
    mode: RioMode | None = _opt("choice", choices=RioMode)
    limit: Limit | None = _opt("limit")
    w_q: float | None = _opt("number", lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    in_: Curve = field(metadata=_req("curve", key="in"))
    mid: Curve | None = _opt("curve")
    out: Curve = field(metadata=_req("curve"))
    gentle: bool | None = _opt("bool")
    wait: bool | None = _opt("bool")
    mean_pkt_size: Size | None = _opt("bytes")
    ecn: bool | None = _opt("bool")
    flavour: Flavour | None = _opt("choice", choices=Flavour)


@dataclass(kw_only=True, repr=False)
class WRED(Queue):
    """Weighted RED: one average of the whole queue, a RED curve and count per drop
    precedence (RFC 2597's AF dropper as routers implement it).

    Attributes:
        limit, w_q, in_, mid, out, gentle, wait, mean_pkt_size, ecn, flavour: as :class:`RIO`
            (``in_`` is the key ``in``; ``in_`` and ``out`` are required).
    """

    _tag = "wred"
    limit: Limit | None = _opt("limit")
    w_q: float | None = _opt("number", lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    in_: Curve = field(metadata=_req("curve", key="in"))
    mid: Curve | None = _opt("curve")
    out: Curve = field(metadata=_req("curve"))
    gentle: bool | None = _opt("bool")
    wait: bool | None = _opt("bool")
    mean_pkt_size: Size | None = _opt("bytes")
    ecn: bool | None = _opt("bool")
    flavour: Flavour | None = _opt("choice", choices=Flavour)


@dataclass(kw_only=True, repr=False)
class RIOPlusO(Queue):
    """RI+O (Kim 1999): RIO-C plus OUT parameters judged on avg_out = avg_total − avg_in.
    Two precedences: AFx1 is IN, everything else OUT. ``type = "rio_plus_o"``.

    Attributes:
        limit: Buffer size. Default: 50pkts.
        w_q: Weight of the averages. Default: 0.002.
        in_: The IN curve, judged on avg_in (the key ``in``). Required.
        out: The IN+OUT curve, judged on avg_total. Required.
        avg_out: The OUT curve, judged on avg_out = avg_total − avg_in. Required.
        gentle: Gentle RED. Default: false.
        wait: ns-2 Queue/RED's wait_. Default: false.
        mean_pkt_size: Mean packet size. Default: 500B.
    """

    _tag = "rio_plus_o"
    limit: Limit | None = _opt("limit")
    w_q: float | None = _opt("number", lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    in_: Curve = field(metadata=_req("curve", key="in"))
    out: Curve = field(metadata=_req("curve"))
    avg_out: Curve = field(metadata=_req("curve"))
    gentle: bool | None = _opt("bool")
    wait: bool | None = _opt("bool")
    mean_pkt_size: Size | None = _opt("bytes")


@dataclass(kw_only=True, repr=False)
class DWRED(Queue):
    """Dynamic WRED (Bouras & Sevasti): OUT thresholds follow the aggregate window Σ W_k that
    a :class:`TWAM` ingress conditioner signals: max_th = the window, min_th = b·max_th.

    Attributes:
        limit: Buffer size. Default: 50pkts.
        signal: The name of the twam conditioner whose window signal sets the thresholds.
            Required.
        signal_delay: How long the signal takes from the ingress to this queue. Default: 0s.
        b: b of Eq. 5: min_th = b·max_th. Default: 0.15.
        max_p: Early-drop probability at max_th of the OUT curve. Default: 0.1.
        max_th: The OUT maximum threshold until the first signal arrives, packets. Default: the
            limit in packets.
        in_: A static IN curve (without it IN packets are only tail-dropped); the key ``in``.
            Default: none.
        in_factor: IN packets follow the signal too, on the OUT curve scaled by this factor
            (≥ 1; excludes ``in_``). Default: none.
        w_q: Weight of the average. Default: 0.002.
        wait: ns-2 Queue/RED's wait_. Default: false.
        mean_pkt_size: Mean packet size. Default: 500B.
    """

    _tag = "dwred"
    limit: Limit | None = _opt("limit")
    signal: str = field(metadata=_req("name"))
    signal_delay: Duration | None = _opt("duration")
    b: float | None = _opt("number", lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    max_p: float | None = _opt("number", lo=0.0, hi=1.0, lo_open=True)
    max_th: float | None = _opt("number", lo=0.0)
    in_: Curve | None = _opt("curve", key="in")
    in_factor: float | None = _opt("number", lo=1.0)
    w_q: float | None = _opt("number", lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    wait: bool | None = _opt("bool")
    mean_pkt_size: Size | None = _opt("bytes")


@dataclass(kw_only=True, repr=False)
class FDDRED(Queue):
    """FDD-RED (Hashemi et al.): RED decides when to drop, a per-flow penalty from the Fair
    Dropping Index decides whose packet (deferred victim drops). Packet mode only.
    ``type = "fdd_red"``.

    Attributes:
        limit, min_th, max_th, max_p, w_q, gentle, wait, mean_pkt_size: as :class:`RED`.
        rtt_source: Per-flow RTTs from the router's TCP-timestamp estimator (``"estimator"``)
            or the configured path RTTs (``"oracle"``). Default: estimator.
        penalty: How drop decisions accrue to the flows' penalties: by ``"shares"``, or
            ``"fig2"`` as the paper's Fig. 2 prints it. Default: shares.
        victim: Whose drop it is: the flow with the greatest ``"penalty"`` (FDD-RED), or a
            ``"random"`` flow seen during the last RTT_avg (a control). Default: penalty.
    """

    _tag = "fdd_red"
    limit: Limit | None = _opt("limit")
    min_th: float = field(metadata=_req("number", lo=0.0))
    max_th: float = field(metadata=_req("number", lo=0.0, lo_open=True))
    max_p: float | None = _opt("number", lo=0.0, hi=1.0, lo_open=True)
    w_q: float | None = _opt("number", lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    gentle: bool | None = _opt("bool")
    wait: bool | None = _opt("bool")
    mean_pkt_size: Size | None = _opt("bytes")
    rtt_source: RttSource | None = _opt("choice", choices=RttSource)
    penalty: Penalty | None = _opt("choice", choices=Penalty)
    victim: Victim | None = _opt("choice", choices=Victim)


@dataclass(kw_only=True, repr=False)
class PhysicalQueue(Component):
    """One physical queue of a :class:`MultiQueue`: the codepoints (behaviour aggregates,
    RFC 2475) classified into it and its own discipline.

    Attributes:
        name: The queue's name in outputs. Default: qI (its index).
        dscp: Codepoints classified into this queue, e.g. ``["AF11", "AF12", "AF13"]``.
            Default: none.
        default: The queue of every codepoint no other queue lists (exactly one queue).
            Default: false.
        weight: WRR weight, packets per round. Default: 1.
        quantum: DRR quantum, bytes per round. Default: 1500B.
        queue: The discipline (any queue but a multi queue). Required.
    """

    name: str | None = _opt("name")
    dscp: list[str] | None = _opt("codepoints")
    default: bool | None = _opt("bool")
    weight: int | None = _opt("integer", lo=1)
    quantum: Size | None = _opt("bytes")
    queue: Queue = field(metadata=_req("single_queue"))


@dataclass(kw_only=True, repr=False)
class MultiQueue(Queue):
    """Several physical queues, each with its own discipline, classified by codepoint and
    served by a scheduler: strict ``"priority"``, ``"rr"``, ``"wrr"`` or ``"drr"`` (e.g. an
    EF queue before an AF queue). ``type = "multi"``.

    Attributes:
        scheduler: How the physical queues share the link. Default: priority.
        queues: The physical queues (1 to 8), in priority order for the priority scheduler.
            Required.
    """

    _tag = "multi"
    scheduler: Scheduler | None = _opt("choice", choices=Scheduler)
    queues: list[PhysicalQueue] = field(metadata=_req("tables", cls=PhysicalQueue))


@dataclass(kw_only=True, repr=False)
class CoDel(Queue):
    """CoDel, Controlled Delay (RFC 8289): drops (or, with ``ecn``, marks) at dequeue once the
    sojourn time has stayed above ``target`` for an ``interval``, at a rate growing as √count.
    ``type = "codel"``.

    Attributes:
        limit: Buffer size, in packets or bytes. Default: 50pkts.
        target: Acceptable standing queue delay (RFC 8289 TARGET). Default: 5ms.
        interval: Sliding window of the minimum sojourn time, on the order of a worst-case RTT
            (RFC 8289 INTERVAL); also the control law's base. Default: 100ms.
        ecn: Mark ECN-capable packets Congestion Experienced instead of dropping them (RFC 8289
            §5.7); packets that are not ECN-capable are still dropped. Default: false.
    """

    _tag = "codel"
    limit: Limit | None = _opt("limit")
    target: Duration | None = _opt("duration")
    interval: Duration | None = _opt("duration")
    ecn: bool | None = _opt("bool")


@dataclass(kw_only=True, repr=False)
class FQCoDel(Queue):
    """FQ-CoDel (RFC 8290; Linux's default qdisc): flows hashed into queues served by deficit
    round robin, new flows first, CoDel in each queue; on overflow the fattest queue loses
    packets from its head. ``type = "fq_codel"``.

    Attributes:
        limit: Buffer size, in packets or bytes, over all flow queues. Default: 50pkts.
        target, interval: CoDel's, per flow queue (as :class:`CoDel`). Default: 5ms, 100ms.
        ecn: Mark ECN-capable packets instead of dropping them, as Linux's default. Default:
            true.
        quantum: Bytes each flow queue may send per DRR round (RFC 8290 §4.2; Linux: the MTU
            plus the Ethernet header). Default: 1514B.
        flows: Number of flow queues the hash maps flows into (RFC 8290 §5.2.1). Default: 1024.
        drop_batch: On overflow, most packets dropped from the fattest flow queue's head at once
            (Linux's drop_batch; dropping stops earlier once half its bytes are gone).
            Default: 64.
    """

    _tag = "fq_codel"
    limit: Limit | None = _opt("limit")
    target: Duration | None = _opt("duration")
    interval: Duration | None = _opt("duration")
    ecn: bool | None = _opt("bool")
    quantum: Size | None = _opt("bytes")
    flows: int | None = _opt("integer", lo=1)
    drop_batch: int | None = _opt("integer", lo=1)


@dataclass(kw_only=True, repr=False)
class PIE(Queue):
    """PIE, Proportional Integral controller Enhanced (RFC 8033; DOCSIS 3.1's AQM): random
    early drop with a probability a PI controller sets from the queueing delay every
    ``t_update``, with a burst allowance and de-randomised drops. ``type = "pie"``.

    Attributes:
        limit: Buffer size, in packets or bytes. Default: 50pkts.
        target: QDELAY_REF: the target queueing delay. Default: 15ms.
        t_update: T_UPDATE: how often drop_prob is updated. Default: 15ms.
        alpha: α, per second: the weight of the delay's distance from target. Default: 0.125.
        beta: β, per second: the weight of the delay's change since the last update.
            Default: 1.25.
        max_burst: MAX_BURST: the burst allowance after an idle period. Default: 150ms.
        ecn: Mark ECN-capable packets instead of dropping them while drop_prob ≤ mark_ecn_th.
            Default: false.
        mark_ecn_th: Above this drop probability ECN-capable packets are dropped too (RFC 8033
            §5.1). Default: 0.1.
        derandomize: De-randomise drops with accu_prob (RFC 8033 §5.1); false: independent
            drops with probability drop_prob. Default: true.
        mean_pkt_size: MEAN_PKTSIZE: no early drop while at most two such packets' bytes wait.
            Default: 1500B.
    """

    _tag = "pie"
    limit: Limit | None = _opt("limit")
    target: Duration | None = _opt("duration")
    t_update: Duration | None = _opt("duration")
    alpha: float | None = _opt("number", lo=0.0)
    beta: float | None = _opt("number", lo=0.0)
    max_burst: Duration | None = _opt("duration")
    ecn: bool | None = _opt("bool")
    mark_ecn_th: float | None = _opt("number", lo=0.0, hi=1.0, lo_open=True)
    derandomize: bool | None = _opt("bool")
    mean_pkt_size: Size | None = _opt("bytes")


@dataclass(kw_only=True, repr=False)
class StepMarking(Queue):
    """Step marking at an instantaneous threshold, the switch side of DCTCP (RFC 8257 §3.1):
    ECN-capable arrivals are marked while more than ``threshold`` waits; tail drop at the
    limit. ``type = "step"``.

    Attributes:
        limit: Buffer size, in packets or bytes. Default: 50pkts.
        threshold: K: mark ECN-capable arrivals while more than this waits, in packets
            (``"65pkts"``) or bytes (``"90KB"``); DCTCP's guideline is K > C·RTT/7. Required.
    """

    _tag = "step"
    limit: Limit | None = _opt("limit")
    threshold: Limit = field(metadata=_req("limit"))


#: Every queue kind, by its ``type``.
QUEUES: dict[str, type[Queue]] = {
    q._tag: q
    for q in (
        DropTail,
        RED,
        AdaptiveRED,
        RIO,
        WRED,
        RIOPlusO,
        DWRED,
        MultiQueue,
        FDDRED,
        CoDel,
        FQCoDel,
        PIE,
        StepMarking,
    )
    if q._tag
}
Queue._registry = dict(QUEUES)

# -- meters -------------------------------------------------------------------------------------


class Meter(_Tagged):
    """A meter/marker of a traffic conditioner (RFC 2475 §2.3.3). In a group of conditioners
    (``count``) every key may be a list of one value per member. ``Meter.from_table`` reads any
    kind; :data:`METERS` lists them by ``type``."""

    _family = "meter"


@dataclass(kw_only=True, repr=False)
class TokenBucket(Meter):
    """Single-rate two-colour token bucket (CIR, CBS): green (IN) within the profile, yellow
    (OUT) beyond it. ``type = "token_bucket"``.

    Attributes:
        cir: Committed information rate. Required.
        cbs: Committed burst size. Required.
        mode: Colour-``"blind"`` or colour-``"aware"`` (RFC 2697/2698 §3). Default: blind.
        flavour: ``"reference"`` (the RFC) or ``"ns2"`` (ns-2.35 dsRED). Default: reference.
    """

    _tag = "token_bucket"
    cir: PerMember[Rate] = field(metadata=_req("rate", per_member=True))
    cbs: PerMember[Size] = field(metadata=_req("bytes", per_member=True))
    mode: PerMember[MeterMode] | None = _opt("choice", choices=MeterMode, per_member=True)
    flavour: PerMember[Flavour] | None = _opt("choice", choices=Flavour, per_member=True)


@dataclass(kw_only=True, repr=False)
class SrTCM(Meter):
    """RFC 2697 single-rate three-colour marker (CIR, CBS, EBS). ``type = "srtcm"``.

    Attributes:
        cir: Committed information rate. Required.
        cbs: Committed burst size. Required.
        ebs: Excess burst size. Required.
        mode: Colour-blind or colour-aware. Default: blind.
        flavour: ``"reference"`` or ``"ns2"``. Default: reference.
    """

    _tag = "srtcm"
    cir: PerMember[Rate] = field(metadata=_req("rate", per_member=True))
    cbs: PerMember[Size] = field(metadata=_req("bytes", per_member=True))
    ebs: PerMember[Size] = field(metadata=_req("bytes", per_member=True))
    mode: PerMember[MeterMode] | None = _opt("choice", choices=MeterMode, per_member=True)
    flavour: PerMember[Flavour] | None = _opt("choice", choices=Flavour, per_member=True)


@dataclass(kw_only=True, repr=False)
class TrTCM(Meter):
    """RFC 2698 two-rate three-colour marker (PIR, PBS, CIR, CBS). ``type = "trtcm"``.

    Attributes:
        cir: Committed information rate. Required.
        cbs: Committed burst size. Required.
        pir: Peak information rate. Required.
        pbs: Peak burst size. Required.
        mode: Colour-blind or colour-aware. Default: blind.
        flavour: ``"reference"`` or ``"ns2"``. Default: reference.
    """

    _tag = "trtcm"
    cir: PerMember[Rate] = field(metadata=_req("rate", per_member=True))
    cbs: PerMember[Size] = field(metadata=_req("bytes", per_member=True))
    pir: PerMember[Rate] = field(metadata=_req("rate", per_member=True))
    pbs: PerMember[Size] = field(metadata=_req("bytes", per_member=True))
    mode: PerMember[MeterMode] | None = _opt("choice", choices=MeterMode, per_member=True)
    flavour: PerMember[Flavour] | None = _opt("choice", choices=Flavour, per_member=True)


@dataclass(kw_only=True, repr=False)
class TSW2CM(Meter):
    """Clark & Fang's time-sliding-window two-colour tagger (CTR, win_len). ``type = "tsw2cm"``.

    Attributes:
        cir: The committed target rate CTR. Required.
        window: The TSW averaging window win_len. Default: 1s.
        flavour: ``"reference"`` or ``"ns2"``. Default: reference.
    """

    _tag = "tsw2cm"
    cir: PerMember[Rate] = field(metadata=_req("rate", per_member=True))
    window: PerMember[Duration] | None = _opt("duration", per_member=True)
    flavour: PerMember[Flavour] | None = _opt("choice", choices=Flavour, per_member=True)


@dataclass(kw_only=True, repr=False)
class TSW3CM(Meter):
    """RFC 2859 time-sliding-window three-colour marker (CTR, PTR, win_len).
    ``type = "tsw3cm"``.

    Attributes:
        cir: The committed target rate CTR. Required.
        pir: The peak target rate PTR. Required.
        window: The TSW averaging window win_len. Default: 1s.
        flavour: ``"reference"`` or ``"ns2"``. Default: reference.
    """

    _tag = "tsw3cm"
    cir: PerMember[Rate] = field(metadata=_req("rate", per_member=True))
    pir: PerMember[Rate] = field(metadata=_req("rate", per_member=True))
    window: PerMember[Duration] | None = _opt("duration", per_member=True)
    flavour: PerMember[Flavour] | None = _opt("choice", choices=Flavour, per_member=True)


@dataclass(kw_only=True, repr=False)
class ARM(Meter):
    """Hur's Adaptive Regulating Marker: a leaky bucket filled at an adaptive Temporary
    Permitted Rate (TPR) re-marks the aggregate's IN packets. ``type = "arm"``; aggregate scope.

    Attributes:
        tpr_max: The SLA rate, the maximum TPR. Required.
        bucket: Leaky bucket size b, packets. Default: 60.
        t_rd: Re-marking threshold T_rd, packets. Default: 15.
        max_rem: Maximum re-marking probability MAX_rem. Default: 0.5.
        tau: Sampling period τ; the TPR interval is n·τ. Default: 0.1s.
        n: τ per TPR interval. Default: 1000.
        packet_size: The unit of token counts. Default: 1000B.
        drop_order: Where ARD's dropper acts: ``"before_remark"`` or ``"among_remarked"``.
            Default: before_remark.
    """

    _tag = "arm"
    tpr_max: PerMember[Rate] = field(metadata=_req("rate", per_member=True))
    bucket: PerMember[float] | None = _opt("number", lo=0.0, per_member=True)
    t_rd: PerMember[float] | None = _opt("number", lo=0.0, per_member=True)
    max_rem: PerMember[float] | None = _opt("number", lo=0.0, per_member=True)
    tau: PerMember[Duration] | None = _opt("duration", per_member=True)
    n: PerMember[int] | None = _opt("integer", lo=1, per_member=True)
    packet_size: PerMember[Size] | None = _opt("bytes", per_member=True)
    drop_order: PerMember[DropOrder] | None = _opt("choice", choices=DropOrder, per_member=True)


@dataclass(kw_only=True, repr=False)
class ARD(Meter):
    """Hur's Adaptive Regulating Drop marker: :class:`ARM` plus an aggregate dropper of IN
    packets with probability P_drop. ``type = "ard"``; aggregate scope.

    Attributes:
        tpr_max, bucket, t_rd, max_rem, tau, n, packet_size, drop_order: as :class:`ARM`.
        p_drop: The dropper's probability P_drop. Default: 0.02.
    """

    _tag = "ard"
    tpr_max: PerMember[Rate] = field(metadata=_req("rate", per_member=True))
    bucket: PerMember[float] | None = _opt("number", lo=0.0, per_member=True)
    t_rd: PerMember[float] | None = _opt("number", lo=0.0, per_member=True)
    max_rem: PerMember[float] | None = _opt("number", lo=0.0, per_member=True)
    tau: PerMember[Duration] | None = _opt("duration", per_member=True)
    n: PerMember[int] | None = _opt("integer", lo=1, per_member=True)
    packet_size: PerMember[Size] | None = _opt("bytes", per_member=True)
    drop_order: PerMember[DropOrder] | None = _opt("choice", choices=DropOrder, per_member=True)
    p_drop: PerMember[float] | None = _opt("number", lo=0.0, per_member=True)


@dataclass(kw_only=True, repr=False)
class TWAM(Meter):
    """Bouras & Sevasti's TCP-Window-Aware Marker: per-flow IN probabilities from the flows'
    windows and contracted rates (Eq. 3), every α·RTT_LSP; signals Σ W to :class:`DWRED`
    queues. IN packets take the ``green`` action, OUT ``yellow``. ``type = "twam"``.

    Attributes:
        rates: Contracted rate r_i per flow name, e.g. ``{"f0": "1Mbps"}``; unlisted flows are
            all OUT. Required.
        rtt: The LSP round-trip time RTT_LSP. Required.
        alpha: α, the operating interval in RTT_LSP (a whole number). Default: 1.
        window_source: Windows estimated at the ingress (``"edge"``) or the senders' cwnd
            (``"oracle"``). Default: edge.
        formula: How Eq. 3 is read: ``"eq3"`` or ``"eq3_neighbour"``. Default: eq3.
    """

    _tag = "twam"
    rates: dict[str, Rate] = field(metadata=_req("rates"))
    rtt: PerMember[Duration] = field(metadata=_req("duration", per_member=True))
    alpha: PerMember[int] | None = _opt("integer", lo=1, per_member=True)
    window_source: PerMember[WindowSource] | None = _opt("choice", choices=WindowSource, per_member=True)
    formula: PerMember[TwamFormula] | None = _opt("choice", choices=TwamFormula, per_member=True)


@dataclass(kw_only=True, repr=False)
class ProbeMarker(Meter):
    """Neglia et al.'s per-flow adaptive probe marker: IN bursts of adaptive length A_IN closed
    by one OUT probe, read from TCP sequence numbers. ``type = "probe"``.

    Attributes:
        a0: A_0, the initial A_IN (positive). Default: 10.
        alpha: α, the weight of the last burst in A_IN (the filter gain), in (0, 1).
            Default: 0.5.
        increase: The increase(A_IN) rule: ``"double_plus_one"`` (2·A+1), ``"plus_one"`` (A+1)
            or ``"divide"`` (A/(1−α)). Default: double_plus_one.
        isn: ISN added to the segment number to form the 32-bit SN. Default: 0.
    """

    _tag = "probe"
    a0: PerMember[float] | None = _opt("number", lo=0.0, per_member=True)
    alpha: PerMember[float] | None = _opt(
        "number", lo=0.0, hi=1.0, lo_open=True, hi_open=True, per_member=True
    )
    increase: PerMember[ProbeIncrease] | None = _opt("choice", choices=ProbeIncrease, per_member=True)
    isn: PerMember[int] | None = _opt("integer", lo=0, per_member=True)


#: Every meter kind, by its ``type``.
METERS: dict[str, type[Meter]] = {
    m._tag: m for m in (TokenBucket, SrTCM, TrTCM, TSW2CM, TSW3CM, ARM, ARD, TWAM, ProbeMarker) if m._tag
}
Meter._registry = dict(METERS)

# -- the scenario's other tables ----------------------------------------------------------------


@dataclass(kw_only=True, repr=False)
class TcpSettings(Component):
    """TCP settings: the scenario's ``[tcp]`` defaults for every TCP flow, or a flow's own
    ``tcp`` table overriding them (ns-2.35's one-way agents and TCPSink).

    Attributes:
        flavour: Sender model: ``"ns2"`` (ns-2.35's one-way agents) or ``"linux"`` (Linux 6.x's
            TCP: SACK scoreboard, RACK-TLP, PRR, delivery-rate sampling, the kernel's reno,
            cubic, dctcp and bbr; initial window 10, delayed ACK 40 ms, no SYN, initial RTO 1 s
            unless set). Default: ns2.
        variant: Congestion control and loss recovery: ``"reno"`` or ``"newreno"`` (ns-2.35's
            agents), ``"sack"`` (Reno with SACK recovery), ``"cubic"`` (RFC 9438), ``"dctcp"``
            (RFC 8257, implies ``ecn``; needs a marking queue on the route) or ``"bbr"`` (BBR
            v1, implies ``pacing``). Default: reno.
        packet_size: Data packet size on the wire, 1..65535 bytes. Default: 1000B.
        ack_size: ACK size on the wire, 1..65535 bytes. Default: 40B.
        window: Advertised-window cap, packets (ns-2's window_). Default: 20.
        initial_window: Initial congestion window, packets. Default: 2.
        min_rto: Minimum retransmission timeout. Default: 200ms.
        max_rto: Maximum retransmission timeout. Default: 60s.
        initial_rto: Retransmission timeout before the first RTT sample. Default: 3s.
        tick: Timer granularity of the RTT estimator. Default: 10ms.
        delayed_ack: The sink delays ACKs (ns-2's TCPSink/DelAck). Default: false.
        delack_interval: Delayed-ACK timeout. Default: 100ms.
        max_burst: Most packets sent in response to one ACK (0: no limit). Default: 0.
        dupack_threshold: Duplicate ACKs that trigger fast retransmit. Default: 3.
        ecn: The sender is ECN-capable (RFC 3168; ECT on data packets). Default: false.
        syn: Model ns-2's SYN (a 40-byte segment 0) before the initial window. Default: true.
        pacing: Pace new segments at Linux's rate, gain·cwnd/srtt (gain 2 in slow start, 1.2
            after); bbr always paces at its own rate. Default: false.
        sack: SACK blocks (RFC 2018) and SACK loss recovery (RFC 6675) for cubic, dctcp or bbr;
            implied by variant sack; not for reno/newreno. Default: false.
    """

    flavour: TcpFlavour | None = _opt("choice", choices=TcpFlavour)
    variant: TcpVariant | None = _opt("choice", choices=TcpVariant)
    packet_size: Size | None = _opt("bytes")
    ack_size: Size | None = _opt("bytes")
    window: int | None = _opt("integer", lo=1)
    initial_window: int | None = _opt("integer", lo=1)
    min_rto: Duration | None = _opt("duration")
    max_rto: Duration | None = _opt("duration")
    initial_rto: Duration | None = _opt("duration")
    tick: Duration | None = _opt("duration")
    delayed_ack: bool | None = _opt("bool")
    delack_interval: Duration | None = _opt("duration")
    max_burst: int | None = _opt("integer", lo=0)
    dupack_threshold: int | None = _opt("integer", lo=1)
    ecn: bool | None = _opt("bool")
    syn: bool | None = _opt("bool")
    pacing: bool | None = _opt("bool")
    sack: bool | None = _opt("bool")


@dataclass(kw_only=True, repr=False)
class Measurement(Component):
    """The measurement window and sampling (``[measurement]``): throughput, utilisation and the
    ``window_`` counters are measured from ``start`` to ``end``.

    Attributes:
        start: Start of the measurement window. Default: 0s.
        end: End of the measurement window. Default: the duration.
        interval: Time-series sampling interval. Default: 1s, or duration/100 when shorter.
        point: Where throughput is counted: ``"receiver"`` or ``"sender"``. Default: receiver.
        bottleneck: The link whose utilisation is the headline figure. Default: the slowest
            link.
        cwnd: Record per-flow cwnd in the time series. Default: true.
    """

    start: Duration | None = _opt("duration")
    end: Duration | None = _opt("duration")
    interval: Duration | None = _opt("duration")
    point: MeasurementPoint | None = _opt("choice", choices=MeasurementPoint)
    bottleneck: str | None = _opt("name")
    cwnd: bool | None = _opt("bool")


@dataclass(kw_only=True, repr=False)
class Node(Component):
    """A node (``[[node]]``): a host or a router.

    Attributes:
        name: Node name; with ``count``, ``{i}`` is replaced by the index. Required.
        count: A group of ``count`` nodes written once. Default: 1.
    """

    name: str = field(metadata=_req("name"))
    count: int | None = _opt("integer", lo=1)


@dataclass(kw_only=True, repr=False)
class Link(Component):
    """A full-duplex link (``[[link]]``) between nodes ``a`` and ``b`` with a queue per
    direction. Without a queue a direction gets DropTail of 50 packets (ns-2's default).

    Attributes:
        name: Link name; ``{i}`` in groups. Default: "A-B".
        count: A group of ``count`` links written once (per-member values as lists). Default: 1.
        a: One end (a node name). Required.
        b: The other end. Required.
        bandwidth: Capacity of each direction (or a list per member). Required.
        delay: Propagation delay (or a list per member). Required.
        queue: The queue of both directions. Default: DropTail, 50pkts.
        queue_ab: The queue of the a→b direction, overriding ``queue``.
        queue_ba: The queue of the b→a direction, overriding ``queue``.
    """

    name: str | None = _opt("name")
    count: int | None = _opt("integer", lo=1)
    a: str = field(metadata=_req("name"))
    b: str = field(metadata=_req("name"))
    bandwidth: PerMember[Rate] = field(metadata=_req("rate", per_member=True))
    delay: PerMember[Duration] = field(metadata=_req("duration", per_member=True))
    queue: Queue | None = _opt("queue")
    queue_ab: Queue | None = _opt("queue")
    queue_ba: Queue | None = _opt("queue")


@dataclass(kw_only=True, repr=False)
class Flow(Component):
    """A traffic source (``[[flow]]``): TCP (bulk, or a finite transfer of ``size``), or a UDP
    source: constant bit rate (``"cbr"``), exponential ON/OFF (``"onoff"``), Poisson
    (``"poisson"``), Pareto ON/OFF (``"pareto"``) or a trace replayed open loop (``"trace"``).

    Attributes:
        name: Flow name; ``{i}`` in groups. Default: "flowN".
        count: A group of ``count`` flows written once. Default: 1.
        src: Sending node. Required.
        dst: Receiving node. Required.
        type: ``"tcp"``, ``"cbr"``, ``"onoff"``, ``"poisson"``, ``"pareto"`` or ``"trace"``.
            Default: tcp.
        start: Start time, or ``"uniform(LO, HI)"`` (or a list per member). Default: 0s.
        stop: Stop time. Default: never.
        packet_size: Data packet size; UDP sources may give a :class:`SizeDistribution`.
            Default: [tcp] packet_size, 1000B for UDP.
        size: TCP: a finite transfer of this many bytes. Default: unlimited.
        rate: CBR rate, ON/OFF peak rate, Poisson mean rate (or a list per member). Required
            for UDP.
        on: ON/OFF mean burst time (exponential). Required for onoff.
        off: ON/OFF mean idle time (exponential). Required for onoff.
        shape: pareto: the shape of the ON and OFF periods. Default: 1.5.
        trace: trace: a CSV file of ``time, size[, flow]`` rows. Required for trace.
        trace_flow: trace: replay only the rows of this flow id. Default: every row.
        dscp: Codepoint set by the host ("AF11", "EF", … or 0..=63). Default: BE (0).
        tcp: Per-flow TCP settings, overriding the scenario's ``tcp``.
    """

    name: str | None = _opt("name")
    count: int | None = _opt("integer", lo=1)
    src: str = field(metadata=_req("name"))
    dst: str = field(metadata=_req("name"))
    type: FlowType | None = _opt("choice", choices=FlowType)
    start: PerMember[Start] | None = _opt("start", per_member=True)
    stop: Duration | None = _opt("duration")
    packet_size: Size | SizeDistribution | None = _opt("size")
    size: Size | None = _opt("bytes")
    rate: PerMember[Rate] | None = _opt("rate", per_member=True)
    on: Duration | None = _opt("duration")
    off: Duration | None = _opt("duration")
    shape: float | None = _opt("number", lo=1.0, hi=100.0, lo_open=True)
    trace: str | None = _opt("name")
    trace_flow: str | None = _opt("name")
    dscp: Codepoint | None = _opt("dscp")
    tcp: TcpSettings | None = _opt("table", cls=TcpSettings)

    @classmethod
    def _cross_problem(cls, values: Mapping[str, Any]) -> tuple[str, str] | None:
        kind = values.get("type") or "tcp"
        if kind == "trace" and values.get("trace") is None:
            return "trace", "a trace flow needs `trace`"
        if kind not in ("tcp", "trace") and values.get("rate") is None:
            return "rate", f"a {kind} flow needs `rate`"
        if kind in ("onoff", "pareto"):
            for k in ("on", "off"):
                if values.get(k) is None:
                    return k, f"an {kind} flow needs `{k}`"
        if kind != "tcp" and values.get("tcp") is not None:
            return "tcp", f"a {kind} flow is not TCP: `tcp` settings do not apply"
        return None


@dataclass(kw_only=True, repr=False)
class SizeDistribution(Component):
    """A size drawn from a distribution: a finite transfer's (``Arrivals.size``) or a UDP
    packet's (``Flow.packet_size``). See docs/workloads.md.

    Attributes:
        dist: ``"fixed"``, ``"exponential"``, ``"pareto"``, ``"lognormal"`` or ``"empirical"``.
            Required.
        mean: The mean size. Required but for empirical.
        shape: Pareto shape (tail index). Required for pareto.
        sigma: Standard deviation of the underlying normal. Required for lognormal.
        cdf: ``"websearch"``, ``"datamining"`` or a CDF file. Required for empirical.
    """

    dist: SizeLaw = field(metadata=_req("choice", choices=SizeLaw))
    mean: Size | None = _opt("bytes")
    shape: float | None = _opt("number", lo=1.0, hi=100.0, lo_open=True)
    sigma: float | None = _opt("number", lo=0.0, hi=10.0, lo_open=True)
    cdf: str | None = _opt("name")


@dataclass(kw_only=True, repr=False)
class Arrivals(Component):
    """A flow-arrival process (``[[arrivals]]``): finite TCP transfers opened at Poisson times,
    each a new connection, sizes from ``size``. Its connections are one row of the flows table
    and one row each of the transfers table.

    Attributes:
        name: The process's name. Required.
        src: Sending node. Required.
        dst: Receiving node. Required.
        arrival_rate: Mean flow arrivals per second (or ``load``).
        load: Offered load as a fraction of the slowest link on the route (or ``arrival_rate``).
        size: Transfer size: fixed (``"100KB"``) or a :class:`SizeDistribution`. Required.
        start: First possible arrival. Default: 0s.
        stop: No arrival from then on. Default: the end.
        packet_size: Segment size. Default: [tcp] packet_size.
        dscp: Codepoint set by the host. Default: BE (0).
        tcp: TCP settings, overriding the scenario's ``tcp``.
        max_active: Most connections open at once (an arrival finding them busy is refused).
            Default: 1000.
    """

    name: str = field(metadata=_req("name"))
    src: str = field(metadata=_req("name"))
    dst: str = field(metadata=_req("name"))
    arrival_rate: float | None = _opt("number", lo=0.0, hi=1e7, lo_open=True)
    load: float | None = _opt("number", lo=0.0, hi=10.0, lo_open=True)
    size: Size | SizeDistribution = field(metadata=_req("size"))
    start: Duration | None = _opt("duration")
    stop: Duration | None = _opt("duration")
    packet_size: Size | None = _opt("bytes")
    dscp: Codepoint | None = _opt("dscp")
    tcp: TcpSettings | None = _opt("table", cls=TcpSettings)
    max_active: int | None = _opt("integer", lo=1)


@dataclass(kw_only=True, repr=False)
class Capture(Component):
    """A pcap capture of a link direction (``[[capture]]``).

    Attributes:
        link: The captured link. Required.
        direction: ``"ab"``, ``"ba"`` or ``"both"``. Default: ab.
        file: File name, relative to the output directory. Default: "LINK.pcap".
    """

    link: str = field(metadata=_req("name"))
    direction: CaptureDirection | None = _opt("choice", choices=CaptureDirection)
    file: str | None = _opt("name")


@dataclass(kw_only=True, repr=False)
class Conditioner(Component):
    """A DiffServ traffic conditioner (RFC 2475 §2.3.3): a classifier, a meter/marker and an
    action per colour, guarding the queue of one link direction (a host's egress or an edge
    router's interface).

    Attributes:
        name: Conditioner name; ``{i}`` in groups. Default: "condN".
        count: A group of ``count`` conditioners written once. Default: 1.
        link: The link whose queue it guards. Required.
        direction: The guarded direction, ``"ab"`` or ``"ba"``. Default: ab.
        classify: ``"any"``, ``"flow:NAME"``, ``"src:NODE"``, ``"dst:NODE"`` or
            ``"dscp:CODEPOINT"``. Default: any.
        meter: The meter/marker (a :class:`Meter`). Required.
        scope: One meter ``"per_flow"``, or one for all selected traffic (``"aggregate"``).
            Default: per_flow (aggregate for arm, ard, twam).
        green: Action for green: a codepoint to write, "keep" or "drop". Default: AF11.
        yellow: Action for yellow. Default: AF12.
        red: Action for red. Default: AF13 (drop for arm, ard).
    """

    name: str | None = _opt("name")
    count: int | None = _opt("integer", lo=1)
    link: str = field(metadata=_req("name"))
    direction: Direction | None = _opt("choice", choices=Direction)
    classify: str | None = _opt("name")
    meter: Meter = field(metadata=_req("meter"))
    scope: Scope | None = _opt("choice", choices=Scope)
    green: str | None = _opt("name")
    yellow: str | None = _opt("name")
    red: str | None = _opt("name")


Item: TypeAlias = Node | Link | Flow | Arrivals | Capture | Conditioner


@dataclass(kw_only=True, repr=False)
class ScenarioSpec(Component):
    """A scenario as written (the Rust core's ``ScenarioSpec``): what a scenario file holds,
    as objects. :meth:`to_scenario` resolves it in the core (:class:`qoslab.Scenario`),
    :meth:`run` runs it, :meth:`to_toml` writes the file.

    Attributes:
        name: Short name, recorded in every output. Required.
        description: One line about the scenario. Default: "".
        duration: Simulated time. Required.
        seed: Default seed (overridden by ``--seed`` and ``run(seed=...)``). Default: 1.
        tcp: Defaults for every TCP flow. Default: ns-2's defaults.
        measurement: Measurement window and sampling. Default: the whole run.
        nodes: The nodes (``[[node]]``). Required.
        links: The links (``[[link]]``). Required.
        flows: The traffic (``[[flow]]``). Required unless there are arrivals.
        arrivals: Flow-arrival processes (``[[arrivals]]``). Default: none.
        captures: pcap captures of link directions (``[[capture]]``). Default: none.
        conditioners: DiffServ traffic conditioners (``[[conditioner]]``). Default: none.
    """

    name: str = field(metadata=_req("name"))
    description: str | None = _opt("name")
    duration: Duration = field(metadata=_req("duration"))
    seed: int | None = _opt("integer", lo=0)
    tcp: TcpSettings | None = _opt("table", cls=TcpSettings)
    measurement: Measurement | None = _opt("table", cls=Measurement)
    nodes: list[Node] = field(metadata=_req("tables", key="node", cls=Node))
    links: list[Link] = field(metadata=_req("tables", key="link", cls=Link))
    flows: list[Flow] = field(default_factory=list, metadata=_m("tables", key="flow", cls=Flow))
    arrivals: list[Arrivals] = field(
        default_factory=list, metadata=_m("tables", key="arrivals", cls=Arrivals)
    )
    captures: list[Capture] = field(default_factory=list, metadata=_m("tables", key="capture", cls=Capture))
    conditioners: list[Conditioner] = field(
        default_factory=list, metadata=_m("tables", key="conditioner", cls=Conditioner)
    )

    def add(self, *items: Item) -> Self:
        """Appends nodes, links, flows, captures and conditioners to their lists; returns self."""
        lists: dict[type[Component], list[Any]] = {
            Node: self.nodes,
            Link: self.links,
            Flow: self.flows,
            Arrivals: self.arrivals,
            Capture: self.captures,
            Conditioner: self.conditioners,
        }
        for it in items:
            target = lists.get(type(it))
            if target is None:
                raise scenario_error("<builder>", f"cannot add {_what(it)} to a scenario", key="ScenarioSpec")
            target.append(it)
        return self

    def items(self) -> Iterator[Component]:
        """Every node, link, flow, capture and conditioner, in file order."""
        yield from self.nodes
        yield from self.links
        yield from self.flows
        yield from self.captures
        yield from self.conditioners

    def link(self, name: str) -> Link:
        """The link (or link group) called ``name`` (a ScenarioError lists the names)."""
        for lk in self.links:
            if lk.name == name:
                return lk
        names = ", ".join(repr(lk.name) for lk in self.links if lk.name is not None)
        raise scenario_error("<builder>", f"no link named {name!r} (links: {names})", key="link")

    def to_toml(self) -> str:
        """The scenario file. ``ScenarioSpec.from_toml(s.to_toml()).to_toml()`` is the same
        text, byte for byte."""
        return dumps(self.to_table())

    @classmethod
    def from_toml(cls, text: str, source: str = "<string>") -> ScenarioSpec:
        """Reads a scenario file's text (comments are not kept)."""
        try:
            table = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise scenario_error(source, f"not valid TOML: {e}") from None
        return cls.from_table(table, source=source)

    @classmethod
    def load(cls, path: str | Path) -> ScenarioSpec:
        """Reads a scenario file."""
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise scenario_error(str(p), f"cannot read the scenario file ({e})") from None
        return cls.from_toml(text, str(p))

    def save(self, path: str | Path) -> Path:
        """Writes the scenario file; returns its path."""
        p = Path(path)
        p.write_text(self.to_toml(), encoding="utf-8")
        return p

    def to_scenario(self, source: str | None = None) -> Scenario:
        """The scenario resolved and validated by the core. Its errors name the key (the line
        would point into generated text, so it is left out)."""
        label = source or f"<builder {self.name!r}>"
        text = self.to_toml()
        try:
            return Scenario(text, label)
        except ScenarioError as e:
            raise scenario_error(label, e.message or str(e), key=e.key or "") from None

    def run(self, seed: int | None = None, **kwargs: Any) -> Result:
        """Runs the scenario (:func:`qoslab.run`; keyword arguments are passed on)."""
        from qoslab.simulate import run

        return run(self.to_scenario(), seed, **kwargs)


# -- topologies ---------------------------------------------------------------------------------

_NS = {"ns": 1, "us": 1_000, "µs": 1_000, "ms": 1_000_000, "s": 1_000_000_000, "min": 60_000_000_000}
_DURATION = re.compile(r"^\s*([0-9.eE+-]+)\s*(ns|us|µs|ms|s|min)\s*$")


def _ns(d: Duration, what: str) -> int:
    """A duration in integer nanoseconds (the topology helpers' arithmetic on delays)."""
    m = _DURATION.match(d) if isinstance(d, str) else None
    try:
        if m is None:
            raise ValueError
        return round(Decimal(m.group(1)) * _NS[m.group(2)])
    except (ArithmeticError, ValueError):
        raise scenario_error("<builder>", f"{d!r}: expected {_EXPECTED['duration']}", key=what) from None


def _ms(ns: int) -> Duration:
    """``ns`` nanoseconds written exactly in milliseconds (``"7.2ms"``)."""
    text = format((Decimal(ns) / 1_000_000).normalize(), "f")
    return f"{text}ms"


def _positive(n: int, what: str) -> None:
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise scenario_error("<builder>", f"expected a whole number >= 1, got {n!r}", key=what)


def _measurement(warmup: Duration | None, bottleneck: str | None) -> Measurement | None:
    if warmup is None and bottleneck is None:
        return None
    return Measurement(start=warmup, bottleneck=bottleneck)


def _droptail(q: Queue | None) -> Queue:
    """A copy of ``q`` (each link its own object: changing one link's queue changes no other),
    or DropTail of 100 packets."""
    return copy.deepcopy(q) if q is not None else DropTail(limit="100pkts")


def _flow(
    name: str, count: int, src: str, dst: str, flow_type: FlowType, rate: Rate | None, start: Start
) -> Flow:
    return Flow(
        name=name,
        count=count,
        src=src,
        dst=dst,
        type=None if flow_type == "tcp" else flow_type,
        rate=rate,
        start=start,
    )


def dumbbell(
    n_flows: int = 2,
    *,
    name: str = "dumbbell",
    description: str | None = None,
    duration: Duration = "20s",
    seed: int | None = None,
    bottleneck_rate: Rate = "10Mbps",
    bottleneck_delay: Duration = "10ms",
    bottleneck_queue: Queue | None = None,
    reverse_queue: Queue | None = None,
    access_rate: Rate = "100Mbps",
    access_delay: Duration | Sequence[Duration] = "1ms",
    rtt_spread: float = 1.0,
    exit_delay: Duration = "1ms",
    access_queue: Queue | None = None,
    flow_type: FlowType = "tcp",
    flow_rate: Rate | None = None,
    flow_name: str = "flow{i}",
    start: Start = "uniform(0s, 1s)",
    tcp: TcpSettings | None = None,
    warmup: Duration | None = None,
) -> ScenarioSpec:
    """``n_flows`` senders ``s{i}`` → access links ``access{i}`` → router ``r1`` → link
    ``bottleneck`` → ``r2`` → exit links ``exit{i}`` → receivers ``d{i}``; one flow per
    sender (bulk TCP, or ``flow_type`` at ``flow_rate``), measured at the bottleneck.

    The round-trip propagation delay of flow i is 2·(access_i + bottleneck_delay +
    exit_delay). ``access_delay`` is one delay for all flows or one per flow; with
    ``rtt_spread`` > 1 the RTTs rise evenly from flow 0's (``access_delay`` the first access
    delay) to ``rtt_spread`` times it. Queues default to DropTail of 100 packets.
    ``warmup`` starts the measurement window (default: the whole run)."""
    _positive(n_flows, "n_flows")
    if isinstance(access_delay, str):
        if rtt_spread < 1.0:
            raise scenario_error("<builder>", f"expected a ratio >= 1, got {rtt_spread!r}", key="rtt_spread")
        delays: PerMember[Duration] = access_delay
        if rtt_spread != 1.0 and n_flows > 1:
            fixed = _ns(bottleneck_delay, "bottleneck_delay") + _ns(exit_delay, "exit_delay")
            rtt0 = 2 * (_ns(access_delay, "access_delay") + fixed)
            rtts = [rtt0 * (1.0 + (rtt_spread - 1.0) * i / (n_flows - 1)) for i in range(n_flows)]
            delays = [_ms(round(r / 2) - fixed) for r in rtts]
    else:
        delays = list(access_delay)
        if len(delays) != n_flows:
            msg = f"{len(delays)} delays for {n_flows} flows: give one, or one per flow"
            raise scenario_error("<builder>", msg, key="access_delay")
        if rtt_spread != 1.0:
            msg = "give rtt_spread or a list of access delays, not both"
            raise scenario_error("<builder>", msg, key="rtt_spread")
    n = n_flows
    return ScenarioSpec(
        name=name,
        description=description,
        duration=duration,
        seed=seed,
        tcp=tcp,
        measurement=_measurement(warmup, "bottleneck"),
        nodes=[Node(name="s{i}", count=n), Node(name="r1"), Node(name="r2"), Node(name="d{i}", count=n)],
        links=[
            Link(
                name="access{i}",
                count=n,
                a="s{i}",
                b="r1",
                bandwidth=access_rate,
                delay=delays,
                queue=_droptail(access_queue),
            ),
            Link(
                name="bottleneck",
                a="r1",
                b="r2",
                bandwidth=bottleneck_rate,
                delay=bottleneck_delay,
                queue_ab=_droptail(bottleneck_queue),
                queue_ba=_droptail(reverse_queue),
            ),
            Link(
                name="exit{i}",
                count=n,
                a="r2",
                b="d{i}",
                bandwidth=access_rate,
                delay=exit_delay,
                queue=_droptail(access_queue),
            ),
        ],
        flows=[_flow(flow_name, n, "s{i}", "d{i}", flow_type, flow_rate, start)],
    )


def parking_lot(
    hops: int = 3,
    *,
    name: str = "parking-lot",
    description: str | None = None,
    duration: Duration = "20s",
    seed: int | None = None,
    hop_rate: Rate = "10Mbps",
    hop_delay: Duration = "5ms",
    hop_queue: Queue | None = None,
    access_rate: Rate = "100Mbps",
    access_delay: Duration = "1ms",
    access_queue: Queue | None = None,
    long_flows: int = 1,
    cross_flows: int = 1,
    flow_type: FlowType = "tcp",
    flow_rate: Rate | None = None,
    start: Start = "uniform(0s, 1s)",
    tcp: TcpSettings | None = None,
    warmup: Duration | None = None,
) -> ScenarioSpec:
    """A parking lot: routers ``r0`` … ``r{hops}`` in a row joined by links ``hop0`` …
    ``hop{hops-1}``; ``long_flows`` flows ``long{i}`` cross every hop (``long_src{i}`` at
    ``r0`` to ``long_dst{i}`` at the last router), and at each hop h ``cross_flows`` flows
    ``cross{h}_{i}`` cross that hop only (``cross{h}_src{i}`` at r_h to ``cross{h}_dst{i}``
    at r_h+1). ``hop_queue`` is every hop's a→b queue (default DropTail of 100 packets)."""
    _positive(hops, "hops")
    _positive(long_flows, "long_flows")
    _positive(cross_flows, "cross_flows")
    nodes = [
        Node(name="r{i}", count=hops + 1),
        Node(name="long_src{i}", count=long_flows),
        Node(name="long_dst{i}", count=long_flows),
    ]
    links = [
        Link(
            name=f"hop{h}",
            a=f"r{h}",
            b=f"r{h + 1}",
            bandwidth=hop_rate,
            delay=hop_delay,
            queue_ab=_droptail(hop_queue),
            queue_ba=DropTail(limit="100pkts"),
        )
        for h in range(hops)
    ]
    links += [
        Link(
            name="long_access{i}",
            count=long_flows,
            a="long_src{i}",
            b="r0",
            bandwidth=access_rate,
            delay=access_delay,
            queue=_droptail(access_queue),
        ),
        Link(
            name="long_exit{i}",
            count=long_flows,
            a=f"r{hops}",
            b="long_dst{i}",
            bandwidth=access_rate,
            delay=access_delay,
            queue=_droptail(access_queue),
        ),
    ]
    flows = [_flow("long{i}", long_flows, "long_src{i}", "long_dst{i}", flow_type, flow_rate, start)]
    for h in range(hops):
        src, dst = f"cross{h}_src{{i}}", f"cross{h}_dst{{i}}"
        nodes += [Node(name=src, count=cross_flows), Node(name=dst, count=cross_flows)]
        links += [
            Link(
                name=f"cross{h}_access{{i}}",
                count=cross_flows,
                a=src,
                b=f"r{h}",
                bandwidth=access_rate,
                delay=access_delay,
                queue=_droptail(access_queue),
            ),
            Link(
                name=f"cross{h}_exit{{i}}",
                count=cross_flows,
                a=f"r{h + 1}",
                b=dst,
                bandwidth=access_rate,
                delay=access_delay,
                queue=_droptail(access_queue),
            ),
        ]
        flows.append(_flow(f"cross{h}_{{i}}", cross_flows, src, dst, flow_type, flow_rate, start))
    return ScenarioSpec(
        name=name,
        description=description,
        duration=duration,
        seed=seed,
        tcp=tcp,
        measurement=_measurement(warmup, "hop0"),
        nodes=nodes,
        links=links,
        flows=flows,
    )


def chain(
    hops: int = 3,
    *,
    name: str = "chain",
    description: str | None = None,
    duration: Duration = "20s",
    seed: int | None = None,
    rate: Rate | Sequence[Rate] = "10Mbps",
    delay: Duration | Sequence[Duration] = "10ms",
    queue: Queue | None = None,
    flows: int = 1,
    flow_type: FlowType = "tcp",
    flow_rate: Rate | None = None,
    start: Start = "uniform(0s, 1s)",
    tcp: TcpSettings | None = None,
    warmup: Duration | None = None,
) -> ScenarioSpec:
    """A chain of ``hops`` links ``link0`` … between nodes ``n0`` … ``n{hops}``, with
    ``flows`` flows ``flow{i}`` from ``n0`` to the last node. ``rate`` and ``delay`` are one
    value for every link or one per link (the slowest link is the measured bottleneck);
    ``queue`` is every link's queue in both directions (default DropTail of 100 packets)."""
    _positive(hops, "hops")
    _positive(flows, "flows")
    rates = [rate] * hops if isinstance(rate, str) else list(rate)
    delays = [delay] * hops if isinstance(delay, str) else list(delay)
    for what, vals in (("rate", rates), ("delay", delays)):
        if len(vals) != hops:
            msg = f"{len(vals)} values for {hops} links: give one, or one per link"
            raise scenario_error("<builder>", msg, key=what)
    links = [
        Link(
            name=f"link{h}",
            a=f"n{h}",
            b=f"n{h + 1}",
            bandwidth=rates[h],
            delay=delays[h],
            queue=_droptail(queue),
        )
        for h in range(hops)
    ]
    return ScenarioSpec(
        name=name,
        description=description,
        duration=duration,
        seed=seed,
        tcp=tcp,
        measurement=_measurement(warmup, None),
        nodes=[Node(name="n{i}", count=hops + 1)],
        links=links,
        flows=[_flow("flow{i}", flows, "n0", f"n{hops}", flow_type, flow_rate, start)],
    )
