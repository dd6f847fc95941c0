"""The scenario builder's machinery: the value types, field declarations and checks, the
:class:`Component` base class with its TOML reading and writing, the families' base classes
(:class:`Queue`, :class:`Meter`), the RED :class:`Curve`, the multi queue (whose tables hold
other queues) and :class:`SizeDistribution`. The queue and meter kinds are generated from the
core's declarations (:mod:`qoslab.builder.queues`, :mod:`qoslab.builder.meters`,
:mod:`qoslab.builder.sources`); use everything through
:mod:`qoslab.builder`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import MISSING, Field, dataclass, field, fields
from typing import Any, ClassVar, Literal, Self, TypeAlias, TypeVar

from qoslab.errors import scenario_error

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

SizeLaw = Literal["fixed", "exponential", "pareto", "lognormal", "empirical"]
TcpFlavour = Literal["ns2", "linux"]
#: The named timings of ``[timing] jitter`` (the core's presets).
TimingPreset = Literal["exact", "testbed"]
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
EXPECTED = {
    "duration": 'a duration string such as "26ms" (units: ns, us, ms, s, min)',
    "start": 'a start time such as "0s" or "uniform(0s, 1s)"',
    "rate": 'a rate string such as "1.2Mbps" (bps, b/s, bit/s or bits/s; prefix k, M, G or T in either case)',
    "bytes": 'a size string such as "500B" or "64KB" (units: B, KB, MB, GB, KiB, MiB)',
    "limit": 'a queue limit such as "100pkts" or "64KB"',
}

# -- field declarations -------------------------------------------------------------------------


def field_meta(
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


def opt(kind: str, **kw: Any) -> Any:
    """An optional key: ``None`` (not written, the core's default applies)."""
    return field(default=None, metadata=field_meta(kind, **kw))


def req(kind: str, **kw: Any) -> dict[str, Any]:
    """The metadata of a required key (used as ``field(metadata=req(...))``)."""
    return field_meta(kind, **kw)


def toml_key(f: Field[Any]) -> str:
    """The scenario-file key of dataclass field ``f``."""
    k = f.metadata.get("key")
    return str(k) if k else f.name


def is_required(f: Field[Any]) -> bool:
    return f.default is MISSING and f.default_factory is MISSING


def describe_value(v: object) -> str:
    return f"{type(v).__name__} {v!r}"


def _number(v: object) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _one_problem(meta: Mapping[str, Any], v: object) -> str | None:
    """What is wrong with the single value ``v`` of a field described by ``meta``, or None."""
    kind = meta["kind"]
    if kind == "duration_or_preset":  # a duration, or one of the key's presets
        if isinstance(v, str) and v in meta["choices"]:
            return None
        p = _one_problem({**meta, "kind": "duration"}, v)
        presets = ", ".join(repr(c) for c in meta["choices"])
        return None if p is None else f"{p}; or a preset: {presets}"
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
            return f"{v!r}: expected {EXPECTED[kind]}"
        if _number(v):
            return f"{v} has no unit: expected {EXPECTED[kind]}"
        return f"expected {EXPECTED[kind]}, got {describe_value(v)}"
    if kind == "number":
        if not _number(v):
            return f"expected a number, got {describe_value(v)}"
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
            return f"expected a whole number, got {describe_value(v)}"
        if v < meta["lo"]:
            return f"{v} is out of range: expected a whole number >= {meta['lo']:g}"
        if meta["hi"] is not None and v > meta["hi"]:
            return f"{v} is out of range: expected a whole number <= {meta['hi']:g}"
        return None
    if kind == "bool":
        return None if isinstance(v, bool) else f"expected true or false, got {describe_value(v)}"
    if kind == "choice":
        if isinstance(v, str) and v in meta["choices"]:
            return None
        return f"unknown value {v!r}: expected one of {', '.join(repr(c) for c in meta['choices'])}"
    if kind == "name":
        return None if isinstance(v, str) else f"expected a string, got {describe_value(v)}"
    if kind == "dscp":
        if (isinstance(v, str) and v) or (isinstance(v, int) and not isinstance(v, bool)):
            return None
        return f'expected a codepoint such as "AF11", "EF", "BE" or a number 0..=63, got {describe_value(v)}'
    if kind == "codepoints":
        if isinstance(v, list | tuple) and all(isinstance(x, str) for x in v):
            return None
        return f'expected a list of codepoint names such as ["AF11", "AF12"], got {describe_value(v)}'
    if kind == "constants":
        ok = isinstance(v, Mapping) and all(
            isinstance(k, str) and isinstance(t, Mapping) and all(_number(x) for x in t.values())
            for k, t in v.items()
        )
        example = '{"cubic": {"beta": 0.8}}'
        return (
            None
            if ok
            else f"expected a table of constants per variant, e.g. {example}, got {describe_value(v)}"
        )
    if kind == "rates":
        if not isinstance(v, Mapping):
            return f'expected a table of rates by flow name, e.g. {{"f0": "1Mbps"}}, got {describe_value(v)}'
        for name, r in v.items():
            if not isinstance(name, str) or not isinstance(r, str) or not _UNITS["rate"].match(r):
                return f"flow {name!r}: expected {EXPECTED['rate']}, got {describe_value(r)}"
        return None
    cls = {"curve": Curve, "queue": Queue, "single_queue": Queue, "meter": Meter, "source": Source}.get(
        kind, meta["cls"]
    )
    if kind == "tables":
        if not isinstance(v, list | tuple):
            return f"expected a list of {cls.__name__}, got {describe_value(v)}"
        bad = [x for x in v if not isinstance(x, cls)]
        return f"expected a list of {cls.__name__}, got an item {describe_value(bad[0])}" if bad else None
    if not isinstance(v, cls):
        return f"expected a {cls.__name__}, got {describe_value(v)}"
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

    KIND: ClassVar[str | None] = None

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
        if self.KIND is not None:
            out["type"] = self.KIND
        for f in self._fields():
            if _is_set(f, self):
                out[toml_key(f)] = _write(getattr(self, f.name))
        return out

    @classmethod
    def from_table(cls, table: Mapping[str, Any], *, key: str = "", source: str = "<table>") -> Self:
        """Reads a scenario table (as ``tomllib`` gives it). Errors are
        :class:`qoslab.ScenarioError` naming ``source`` and the key path below ``key``."""
        if not isinstance(table, Mapping):
            raise scenario_error(source, f"expected a table, got {describe_value(table)}", key=key)
        by_key = {toml_key(f): f for f in cls._fields()}
        for k in table:
            if k == "type" and cls.KIND is not None:
                if table[k] != cls.KIND:
                    msg = f"a {cls.__name__} table has type {cls.KIND!r}, got {table[k]!r}"
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
            raise scenario_error(source, f"expected a list of tables, got {describe_value(v)}", key=key)
        return [meta["cls"].from_table(x, key=f"{key}[{i}]", source=source) for i, x in enumerate(v)]
    if isinstance(v, list):
        return list(v)
    if isinstance(v, Mapping):
        return dict(v)
    return v


class _Tagged(Component):
    """A table with a ``type`` that selects the class (queues and meters)."""

    #: The registry of the kinds of this family, ``type`` → class.
    KINDS: ClassVar[dict[str, type[_Tagged]]]
    _family: ClassVar[str]

    @classmethod
    def from_table(cls, table: Mapping[str, Any], *, key: str = "", source: str = "<table>") -> Self:
        """Reads a table; called on the family's base class (:class:`Queue`, :class:`Meter`),
        its ``type`` selects the class, and an unknown ``type`` is an error naming the kinds."""
        if cls.KIND is not None or not isinstance(table, Mapping):
            return super().from_table(table, key=key, source=source)
        kinds = ", ".join(repr(k) for k in cls.KINDS)
        if "type" not in table:
            msg = f"a {cls._family} table needs `type`, one of {kinds}"
            raise scenario_error(source, msg, key=_path(key, "type"))
        kind = table["type"]
        sub = cls.KINDS.get(kind) if isinstance(kind, str) else None
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

    min_th: float = field(metadata=req("number", lo=0.0))
    max_th: float = field(metadata=req("number", lo=0.0))
    max_p: float = field(metadata=req("number", lo=0.0, hi=1.0, lo_open=True))


class Queue(_Tagged):
    """A queue discipline (active queue management) of one link direction. ``Queue.from_table``
    reads any kind; :data:`QUEUES` lists them by ``type``."""

    _family = "queue"


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

    name: str | None = opt("name")
    dscp: list[str] | None = opt("codepoints")
    default: bool | None = opt("bool")
    weight: int | None = opt("integer", lo=1)
    quantum: Size | None = opt("bytes")
    queue: Queue = field(metadata=req("single_queue"))


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

    KIND = "multi"
    scheduler: Scheduler | None = opt("choice", choices=Scheduler)
    queues: list[PhysicalQueue] = field(metadata=req("tables", cls=PhysicalQueue))


# -- meters -------------------------------------------------------------------------------------


class Meter(_Tagged):
    """A meter/marker of a traffic conditioner (RFC 2475 §2.3.3). In a group of conditioners
    (``count``) every key may be a list of one value per member. ``Meter.from_table`` reads any
    kind; :data:`METERS` lists them by ``type``."""

    _family = "meter"


# -- traffic sources ----------------------------------------------------------------------------


class Source(_Tagged):
    """An open-loop traffic source of a flow (its ``type`` and the keys its kind owns, written
    in the ``[[flow]]`` table beside the flow's own). In a group of flows (``count``) every key
    may be a list of one value per member. ``Source.from_table`` reads any kind; :data:`SOURCES`
    lists them by ``type``; ``exports`` says where else a kind runs (``ns2``, ``ns3``,
    ``emulator``), as its Rust file declares: the exporters and the emulator ask it."""

    _family = "source"
    exports: ClassVar[dict[str, bool]] = {}


# -- size distributions ---------------------------------------------------------------------


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

    dist: SizeLaw = field(metadata=req("choice", choices=SizeLaw))
    mean: Size | None = opt("bytes")
    shape: float | None = opt("number", lo=1.0, hi=100.0, lo_open=True)
    sigma: float | None = opt("number", lo=0.0, hi=10.0, lo_open=True)
    cdf: str | None = opt("name")
