"""The scenario builder's tables other than queues and meters: TCP settings, measurement,
timing, nodes, links, flows, arrival processes, captures and conditioners. Use them through
:mod:`qoslab.builder`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Self, TypeAlias

from qoslab.builder.base import (
    CaptureDirection,
    Codepoint,
    Component,
    Direction,
    Duration,
    MeasurementPoint,
    Meter,
    PerMember,
    Queue,
    Rate,
    Scope,
    Size,
    SizeDistribution,
    Source,
    Start,
    TcpFlavour,
    TimingPreset,
    opt,
    req,
    toml_key,
)
from qoslab.builder.sources import TcpVariant

# -- the scenario's other tables ----------------------------------------------------------------

#: The most members a group (`count`) may have, as the core declares it (`scenario::keys::COUNT`).
MAX_COUNT = 1_000_000


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
        cc: The variants' tunable constants, a table per variant, e.g. ``{"cubic": {"beta":
            0.8}}``; the keys are the flavour's (ns2: the published constants; linux: the
            kernel modules' parameters, ``{"cubic": {"beta": 512}}``; keys and ranges: the
            scenario reference). Default: each variant's published constants.
    """

    flavour: TcpFlavour | None = opt("choice", choices=TcpFlavour)
    variant: TcpVariant | None = opt("choice", choices=TcpVariant)
    packet_size: Size | None = opt("bytes")
    ack_size: Size | None = opt("bytes")
    window: int | None = opt("integer", lo=1, hi=1 << 30)
    initial_window: int | None = opt("integer", lo=1, hi=1 << 30)
    min_rto: Duration | None = opt("duration")
    max_rto: Duration | None = opt("duration")
    initial_rto: Duration | None = opt("duration")
    tick: Duration | None = opt("duration")
    delayed_ack: bool | None = opt("bool")
    delack_interval: Duration | None = opt("duration")
    max_burst: int | None = opt("integer", lo=0)
    dupack_threshold: int | None = opt("integer", lo=1)
    ecn: bool | None = opt("bool")
    syn: bool | None = opt("bool")
    pacing: bool | None = opt("bool")
    sack: bool | None = opt("bool")
    cc: dict[str, dict[str, float]] | None = opt("constants")


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

    start: Duration | None = opt("duration")
    end: Duration | None = opt("duration")
    interval: Duration | None = opt("duration")
    point: MeasurementPoint | None = opt("choice", choices=MeasurementPoint)
    bottleneck: str | None = opt("name")
    cwnd: bool | None = opt("bool")


@dataclass(kw_only=True, repr=False)
class Timing(Component):
    """The hosts' timing noise (``[timing]``): the default of every link direction's ``jitter``
    (a :class:`Link`'s own ``jitter`` overrides it).

    Attributes:
        jitter: Timing noise of every link direction whose link sets no ``jitter``: every
            packet's propagation takes a further delay drawn uniformly in [0, jitter], never
            ending before the packet ahead's. A duration, or a preset: ``"exact"`` (0s) or
            ``"testbed"`` (130us, the noise measured on the Linux-kernel testbed:
            docs/validation/linux.md). Default: exact.
    """

    jitter: Duration | TimingPreset | None = opt("duration_or_preset", choices=TimingPreset)


@dataclass(kw_only=True, repr=False)
class Node(Component):
    """A node (``[[node]]``): a host or a router.

    Attributes:
        name: Node name; with ``count``, ``{i}`` is replaced by the index. Required.
        count: A group of ``count`` nodes written once. Default: 1.
    """

    name: str = field(metadata=req("name"))
    count: int | None = opt("integer", lo=1, hi=MAX_COUNT)


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
        jitter: Timing noise of each direction, overriding the scenario's :class:`Timing`: every
            packet's propagation takes a further delay drawn uniformly in [0, jitter] from the
            direction's own stream, and never ends before the packet ahead's (no reordering); 0
            keeps exact timing (or a list per member). Default: the scenario's ``timing.jitter``.
        queue: The queue of both directions. Default: DropTail, 50pkts.
        queue_ab: The queue of the a→b direction, overriding ``queue``.
        queue_ba: The queue of the b→a direction, overriding ``queue``.
    """

    name: str | None = opt("name")
    count: int | None = opt("integer", lo=1, hi=MAX_COUNT)
    a: str = field(metadata=req("name"))
    b: str = field(metadata=req("name"))
    bandwidth: PerMember[Rate] = field(metadata=req("rate", per_member=True))
    delay: PerMember[Duration] = field(metadata=req("duration", per_member=True))
    jitter: PerMember[Duration] | None = opt("duration", per_member=True)
    queue: Queue | None = opt("queue")
    queue_ab: Queue | None = opt("queue")
    queue_ba: Queue | None = opt("queue")


@dataclass(kw_only=True, repr=False)
class Flow(Component):
    """A traffic source (``[[flow]]``): TCP (bulk, or a finite transfer of ``size``) when it has
    no ``source``, or an open-loop source (a :class:`Source` of :data:`SOURCES`, e.g.
    :class:`CbrSource`), whose ``type`` and keys are written in the flow's table.

    Attributes:
        name: Flow name; ``{i}`` in groups. Default: "flowN".
        count: A group of ``count`` flows written once. Default: 1.
        src: Sending node. Required.
        dst: Receiving node. Required.
        source: The open-loop source (its kind's class). Default: none (a TCP flow).
        start: Start time, or ``"uniform(LO, HI)"`` (or a list per member). Default: 0s.
        stop: Stop time. Default: never.
        packet_size: Data packet size; UDP sources may give a :class:`SizeDistribution`.
            Default: [tcp] packet_size, 1000B for UDP.
        size: TCP: a finite transfer of this many bytes. Default: unlimited.
        dscp: Codepoint set by the host ("AF11", "EF", … or 0..=63). Default: BE (0).
        tcp: Per-flow TCP settings, overriding the scenario's ``tcp``.
    """

    name: str | None = opt("name")
    count: int | None = opt("integer", lo=1, hi=MAX_COUNT)
    src: str = field(metadata=req("name"))
    dst: str = field(metadata=req("name"))
    source: Source | None = opt("source")
    start: PerMember[Start] | None = opt("start", per_member=True)
    stop: Duration | None = opt("duration")
    packet_size: Size | SizeDistribution | None = opt("size")
    size: Size | None = opt("bytes")
    dscp: Codepoint | None = opt("dscp")
    tcp: TcpSettings | None = opt("table", cls=TcpSettings)

    @classmethod
    def _cross_problem(cls, values: Mapping[str, Any]) -> tuple[str, str] | None:
        src = values.get("source")
        if src is not None and values.get("tcp") is not None:
            return "tcp", f"a {src.KIND} flow is not TCP: `tcp` settings do not apply"
        return None

    def to_table(self) -> dict[str, Any]:
        """The flow's table, its source's ``type`` and keys written among its own."""
        out = super().to_table()
        src = out.pop("source", None)
        if isinstance(src, dict):
            out.update(src)
        return out

    @classmethod
    def from_table(cls, table: Mapping[str, Any], *, key: str = "", source: str = "<table>") -> Self:
        """Reads a ``[[flow]]`` table: a ``type`` other than ``tcp`` makes the keys that are not
        the flow's own its :class:`Source`'s."""
        if not isinstance(table, Mapping) or table.get("type", "tcp") == "tcp":
            own = {k: v for k, v in table.items() if k != "type"} if isinstance(table, Mapping) else table
            return super().from_table(own, key=key, source=source)
        keys = {toml_key(f) for f in cls._fields() if f.name != "source"}
        flow = super().from_table({k: v for k, v in table.items() if k in keys}, key=key, source=source)
        rest = {k: v for k, v in table.items() if k not in keys}
        flow.source = Source.from_table(rest, key=key, source=source)
        flow._check(source=source, prefix=key)
        return flow


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

    name: str = field(metadata=req("name"))
    src: str = field(metadata=req("name"))
    dst: str = field(metadata=req("name"))
    arrival_rate: float | None = opt("number", lo=0.0, hi=1e7, lo_open=True)
    load: float | None = opt("number", lo=0.0, hi=10.0, lo_open=True)
    size: Size | SizeDistribution = field(metadata=req("size"))
    start: Duration | None = opt("duration")
    stop: Duration | None = opt("duration")
    packet_size: Size | None = opt("bytes")
    dscp: Codepoint | None = opt("dscp")
    tcp: TcpSettings | None = opt("table", cls=TcpSettings)
    max_active: int | None = opt("integer", lo=1, hi=1_000_000)


@dataclass(kw_only=True, repr=False)
class Capture(Component):
    """A pcap capture of a link direction (``[[capture]]``).

    Attributes:
        link: The captured link. Required.
        direction: ``"ab"``, ``"ba"`` or ``"both"``. Default: ab.
        file: File name, relative to the output directory. Default: "LINK.pcap".
    """

    link: str = field(metadata=req("name"))
    direction: CaptureDirection | None = opt("choice", choices=CaptureDirection)
    file: str | None = opt("name")


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

    name: str | None = opt("name")
    count: int | None = opt("integer", lo=1, hi=MAX_COUNT)
    link: str = field(metadata=req("name"))
    direction: Direction | None = opt("choice", choices=Direction)
    classify: str | None = opt("name")
    meter: Meter = field(metadata=req("meter"))
    scope: Scope | None = opt("choice", choices=Scope)
    green: str | None = opt("name")
    yellow: str | None = opt("name")
    red: str | None = opt("name")


Item: TypeAlias = Node | Link | Flow | Arrivals | Capture | Conditioner
