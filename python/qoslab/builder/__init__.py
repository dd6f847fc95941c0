"""Scenarios built in Python: typed, keyword-only dataclasses for every table a scenario file
has (nodes, links, queues, conditioners and their meters, flows, TCP settings, measurement, timing,
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
The queue, meter and source classes are generated from the core's declarations (``qoslab schema
--python queue|meter|source`` writes :mod:`qoslab.builder.queues`, :mod:`qoslab.builder.meters`
and :mod:`qoslab.builder.sources`);
the machinery is :mod:`qoslab.builder.base`, the other tables :mod:`qoslab.builder.tables`.
``tests/test_builder.py`` walks the core's JSON Schema (:func:`qoslab.schema.json_schema`) and
fails when a kind or key exists on one side only, or differs in required-ness, type, unit,
range or choices.
"""

from __future__ import annotations

import copy
import re
import tomllib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from qoslab.builder.base import (
    EXPECTED,
    describe_value,
    field_meta,
    opt,
    req,
)
from qoslab.builder.base import (
    UNIT_PATTERNS as UNIT_PATTERNS,
)
from qoslab.builder.base import (
    CaptureDirection as CaptureDirection,
)
from qoslab.builder.base import (
    Codepoint as Codepoint,
)
from qoslab.builder.base import (
    Component as Component,
)
from qoslab.builder.base import (
    Curve as Curve,
)
from qoslab.builder.base import (
    Direction as Direction,
)
from qoslab.builder.base import (
    DropOrder as DropOrder,
)
from qoslab.builder.base import (
    Duration as Duration,
)
from qoslab.builder.base import (
    Flavour as Flavour,
)
from qoslab.builder.base import (
    Limit as Limit,
)
from qoslab.builder.base import (
    MeasurementPoint as MeasurementPoint,
)
from qoslab.builder.base import (
    Meter as Meter,
)
from qoslab.builder.base import (
    MeterMode as MeterMode,
)
from qoslab.builder.base import (
    MultiQueue as MultiQueue,
)
from qoslab.builder.base import (
    Penalty as Penalty,
)
from qoslab.builder.base import (
    PerMember as PerMember,
)
from qoslab.builder.base import (
    PhysicalQueue as PhysicalQueue,
)
from qoslab.builder.base import (
    ProbeIncrease as ProbeIncrease,
)
from qoslab.builder.base import (
    Queue as Queue,
)
from qoslab.builder.base import (
    Rate as Rate,
)
from qoslab.builder.base import (
    RioMode as RioMode,
)
from qoslab.builder.base import (
    RttSource as RttSource,
)
from qoslab.builder.base import (
    Scheduler as Scheduler,
)
from qoslab.builder.base import (
    Scope as Scope,
)
from qoslab.builder.base import (
    Size as Size,
)
from qoslab.builder.base import (
    SizeDistribution as SizeDistribution,
)
from qoslab.builder.base import (
    SizeLaw as SizeLaw,
)
from qoslab.builder.base import (
    Source as Source,
)
from qoslab.builder.base import (
    Start as Start,
)
from qoslab.builder.base import (
    TcpFlavour as TcpFlavour,
)
from qoslab.builder.base import (
    TimingPreset as TimingPreset,
)
from qoslab.builder.base import (
    TwamFormula as TwamFormula,
)
from qoslab.builder.base import (
    Victim as Victim,
)
from qoslab.builder.base import (
    WindowSource as WindowSource,
)
from qoslab.builder.base import (
    is_required as is_required,
)
from qoslab.builder.base import (
    toml_key as toml_key,
)
from qoslab.builder.meters import (
    ARD,
    ARM,
    METERS,
    TSW2CM,
    TSW3CM,
    TWAM,
    ProbeMarker,
    SrTCM,
    TokenBucket,
    TrTCM,
)
from qoslab.builder.queues import (
    DWRED,
    FDDRED,
    PIE,
    QUEUES,
    RED,
    RIO,
    WRED,
    AdaptiveRED,
    CoDel,
    DropTail,
    FQCoDel,
    RIOPlusO,
    StepMarking,
)
from qoslab.builder.sources import (
    SOURCES,
    CbrSource,
    OnOffSource,
    ParetoSource,
    PoissonSource,
    TraceSource,
)
from qoslab.builder.sources import (
    FlowType as FlowType,
)
from qoslab.builder.sources import (
    TcpVariant as TcpVariant,
)
from qoslab.builder.tables import (
    Arrivals,
    Capture,
    Conditioner,
    Flow,
    Item,
    Link,
    Measurement,
    Node,
    TcpSettings,
    Timing,
)
from qoslab.errors import ScenarioError, scenario_error
from qoslab.scenario import Scenario
from qoslab.toml_writer import dumps

if TYPE_CHECKING:
    from qoslab.runs.simulate import Result

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
    "SOURCES",
    "CbrSource",
    "OnOffSource",
    "ParetoSource",
    "PoissonSource",
    "Source",
    "TraceSource",
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
    "Timing",
    "TokenBucket",
    "TrTCM",
    "chain",
    "dumbbell",
    "parking_lot",
]


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
        timing: The hosts' timing noise on every link direction (:class:`Timing`). Default:
            exact timing.
        nodes: The nodes (``[[node]]``). Required.
        links: The links (``[[link]]``). Required.
        flows: The traffic (``[[flow]]``). Required unless there are arrivals.
        arrivals: Flow-arrival processes (``[[arrivals]]``). Default: none.
        captures: pcap captures of link directions (``[[capture]]``). Default: none.
        conditioners: DiffServ traffic conditioners (``[[conditioner]]``). Default: none.
    """

    name: str = field(metadata=req("name"))
    description: str | None = opt("name")
    duration: Duration = field(metadata=req("duration"))
    seed: int | None = opt("integer", lo=0)
    tcp: TcpSettings | None = opt("table", cls=TcpSettings)
    measurement: Measurement | None = opt("table", cls=Measurement)
    timing: Timing | None = opt("table", cls=Timing)
    nodes: list[Node] = field(metadata=req("tables", key="node", cls=Node))
    links: list[Link] = field(metadata=req("tables", key="link", cls=Link))
    flows: list[Flow] = field(default_factory=list, metadata=field_meta("tables", key="flow", cls=Flow))
    arrivals: list[Arrivals] = field(
        default_factory=list, metadata=field_meta("tables", key="arrivals", cls=Arrivals)
    )
    captures: list[Capture] = field(
        default_factory=list, metadata=field_meta("tables", key="capture", cls=Capture)
    )
    conditioners: list[Conditioner] = field(
        default_factory=list, metadata=field_meta("tables", key="conditioner", cls=Conditioner)
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
                raise scenario_error(
                    "<builder>", f"cannot add {describe_value(it)} to a scenario", key="ScenarioSpec"
                )
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
        from qoslab.runs.simulate import run

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
        raise scenario_error("<builder>", f"{d!r}: expected {EXPECTED['duration']}", key=what) from None


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
    source = None
    if flow_type != "tcp":
        keys: dict[str, Any] = {"type": flow_type} | ({} if rate is None else {"rate": rate})
        source = Source.from_table(keys, key=name, source="<builder>")
    return Flow(name=name, count=count, src=src, dst=dst, source=source, start=start)


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
