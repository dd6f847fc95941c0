"""Every file qoslab writes, with every column (or JSON key), its unit and its definition: the one
place that says what an output means, rendered as ``docs/outputs.md``.

Each definition was read from the code that computes the value (the Rust core's ``sim/measure.rs``,
``sim/window.rs``, ``sim/forward.rs``, ``sim/transport.rs``, ``net/link.rs``, the bindings in
``crates/qoslab-py/src/lib.rs``, and ``simulate.py``, ``tasks.py``, ``sweep.py``, ``store.py``).
``tests/test_outputs_doc.py`` runs real scenarios and fails when a written column is not listed
here, when a listed column is no longer written, or when the page is stale::

    python -m qoslab.outputs > docs/outputs.md     # regenerate the page
    python -m qoslab.outputs --check               # exit 1 if docs/outputs.md differs
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qoslab.summary_keys import SUMMARY_FLOW_KEYS

#: The units a column may have (a consistent vocabulary for the whole page).
UNITS = (
    "bit/s",
    "bytes",
    "packets",
    "packets/s",
    "s",
    "ns",
    "fraction 0–1",
    "ratio",
    "count",
    "index",
    "integer",
    "text",
    "JSON text",
    "boolean",
    "object",
    "list",
    "Unix time, s",
    "metric's unit",
    "gauge's unit",
    "key's unit",
    "codepoint",
)

#: The page this module renders, in a source checkout.
DOC_PATH = Path(__file__).resolve().parents[2] / "docs" / "outputs.md"
REGENERATE = "python -m qoslab.outputs > docs/outputs.md"

_PLACEHOLDER = re.compile(r"<[^>]+>")


def _pattern(name: str) -> re.Pattern[str]:
    """``name`` as a regular expression: each ``<placeholder>`` stands for any non-empty text."""
    parts = _PLACEHOLDER.split(name)
    return re.compile(".+".join(re.escape(p) for p in parts) + r"\Z")


@dataclass(frozen=True)
class Column:
    """One column of a table (or one key of a JSON file, as a dotted path: ``drops.total``,
    ``flows[].window.timeouts``). A ``<placeholder>`` in the name stands for names that depend on
    the scenario or the command (a link direction, a grid key)."""

    name: str
    unit: str
    definition: str

    @property
    def is_pattern(self) -> bool:
        return bool(_PLACEHOLDER.search(self.name))

    def matches(self, name: str) -> bool:
        if not self.is_pattern:
            return name == self.name
        return _pattern(self.name).match(name) is not None


@dataclass(frozen=True)
class OutputFile:
    """One output file (or one table of the result store's database). ``includes`` names another
    output whose columns this one also has, after its own."""

    name: str
    group: str
    description: str
    columns: tuple[Column, ...] = ()
    includes: str | None = None

    @property
    def is_pattern(self) -> bool:
        return bool(_PLACEHOLDER.search(self.name))

    def matches(self, name: str) -> bool:
        return name == self.name or (self.is_pattern and _pattern(self.name).match(name) is not None)


W = "inside the measurement window"
R = "over the whole run"

# -- qoslab run --out DIR: flows.parquet ------------------------------------------------------------

_PRECS = (
    (0, "0 (AFx1 or EF)"),
    (1, "1 (AFx2)"),
    (2, "2 (AFx3, best effort and every other codepoint)"),
)

#: The flow event counters that exist over the whole run and again inside the window
#: (``window_*`` columns, ``flows[].window`` in summary.json): name → (unit, definition with
#: ``{span}``), in the order of the ``window_*`` columns.
_FLOW_COUNTERS: dict[str, tuple[str, str]] = {
    "retransmitted_packets": (
        "packets",
        "Data packets the TCP sender sent again {span} (a sequence number it had sent before: fast "
        "retransmit, timeout, or the go-back-N resends after a timeout); 0 for UDP flows.",
    ),
    "timeouts": (
        "count",
        "Expiries of the TCP sender's retransmission timer {span} while data was outstanding (an "
        "expiry with nothing outstanding is not counted); 0 for UDP flows.",
    ),
    "fast_retransmits": (
        "count",
        "Fast retransmissions by the TCP sender {span} on reaching the duplicate-ACK threshold (Reno "
        "counts each repeated one during recovery); 0 for UDP flows.",
    ),
    "ecn_marks": (
        "packets",
        "Data packets of the flow that reached the receiver {span} marked ECN Congestion Experienced.",
    ),
    "ecn_responses": (
        "count",
        "Congestion-window reductions of the TCP sender {span} in response to an ECN-Echo (at most one "
        "per window of data); 0 for UDP flows.",
    ),
    "early_drops": (
        "packets",
        "Data packets of the flow dropped {span} early (probabilistically: RED's unforced drop) by a "
        "queue discipline.",
    ),
    "forced_drops": (
        "packets",
        "Data packets of the flow dropped {span} by a queue discipline because its average queue was "
        "above the maximum threshold (RED's forced drop).",
    ),
    "overflow_drops": (
        "packets",
        "Data packets of the flow dropped {span} because a queue's physical buffer was full.",
    ),
    "policed_drops": (
        "packets",
        "Data packets of the flow dropped {span} by a traffic conditioner (a colour whose action is "
        "`drop`) before entering a queue.",
    ),
}
for _k, _colour in enumerate(("green", "yellow", "red")):
    _FLOW_COUNTERS[f"{_colour}_packets"] = (
        "packets",
        f"Data packets of the flow that a conditioner coloured {_colour} {{span}} (one count per "
        "conditioner that metered the packet; retransmissions included); 0 without conditioners.",
    )
    _FLOW_COUNTERS[f"drops_prec{_k}"] = (
        "packets",
        "Data packets of the flow dropped {span} for any reason (policing included) while carrying "
        f"drop precedence {_PRECS[_k][1]}.",
    )


def _counter(name: str, span: str) -> str:
    return _FLOW_COUNTERS[name][1].format(span=span)


#: The ``window_*`` columns of flows.parquet, in the order the core writes them.
_FLOW_WINDOW_ORDER = (
    "retransmitted_packets",
    "timeouts",
    "fast_retransmits",
    "ecn_marks",
    "ecn_responses",
    "early_drops",
    "forced_drops",
    "overflow_drops",
    "policed_drops",
    "green_packets",
    "drops_prec0",
    "yellow_packets",
    "drops_prec1",
    "red_packets",
    "drops_prec2",
)

_FLOW_DEFS: dict[str, tuple[str, str]] = {
    "throughput_bps": (
        "bit/s",
        "Bytes of the flow's data packets delivered to the receiver inside the measurement window "
        '(with `measurement.point = "sender"`: emitted by the source inside it) × 8 / the window\'s '
        "length; retransmitted and duplicate copies and the 40-byte SYN count.",
    ),
    "goodput_bps": (
        "bit/s",
        "New in-order segments released to the TCP receiver inside the measurement window (each "
        "segment once, including one that arrived earlier out of order and was released by a "
        "retransmission inside the window) × the flow's configured packet size (on the wire, "
        "headers included) × 8 / the window's length; always 0 for UDP flows.",
    ),
    "in_throughput_bps": (
        "bit/s",
        "Bytes of the flow's data packets delivered to the receiver inside the measurement window "
        "carrying drop precedence 0 on arrival (AFx1 or EF; best effort is precedence 2) × 8 / the "
        "window's length; counted at the receiver whatever `measurement.point` says.",
    ),
    "start_ns": (
        "ns",
        "Time the flow's source starts (drawn from the flow's own random stream when `start` is a range).",
    ),
    "sent_packets": (
        "packets",
        "Data packets the source emitted over the whole run, retransmissions and the SYN included.",
    ),
    "sent_bytes": (
        "bytes",
        "Bytes of the data packets the source emitted over the whole run, retransmissions included "
        "(the SYN counts 40 bytes).",
    ),
    "delivered_packets": (
        "packets",
        "Data packets of the flow that reached the receiver over the whole run, duplicates included.",
    ),
    "delivered_bytes": (
        "bytes",
        "Bytes of the data packets of the flow that reached the receiver over the whole run, "
        "duplicates included.",
    ),
    "dropped_packets": (
        "packets",
        "Data packets of the flow dropped anywhere over the whole run, for any reason (early, "
        "forced, overflow, policed); ACK drops are in `acks_dropped`.",
    ),
    "in_flight_packets": (
        "packets",
        "Data packets of the flow still in the network at the end of the run (waiting, being "
        "transmitted or propagating): sent_packets = delivered_packets + dropped_packets + this.",
    ),
    "acks_sent": ("packets", "ACKs the TCP receiver sent over the whole run; 0 for UDP flows."),
    "acks_dropped": ("packets", "ACKs of the flow dropped on the way back over the whole run, any reason."),
    "final_cwnd": (
        "packets",
        "The TCP sender's congestion window at the end of the run (fractional, without Reno's "
        "fast-recovery inflation); NaN for UDP flows.",
    ),
    "final_ssthresh": (
        "packets",
        "The TCP sender's slow-start threshold at the end of the run; NaN for UDP flows.",
    ),
    "delay_packets": (
        "packets",
        "Data packets delivered inside the measurement window whose one-way delay is summarised by "
        "the delay_* columns.",
    ),
    "delay_mean_s": (
        "s",
        "Mean one-way delay of those packets: delivery time − the time the source created the packet "
        "(queueing, transmission and propagation on every hop), exact; NaN when none.",
    ),
    "delay_p50_s": ("s", "Median one-way delay, from a quantile sketch within 1 % relative error."),
    "delay_p90_s": ("s", "90th percentile of the one-way delay (sketch, within 1 %)."),
    "delay_p99_s": ("s", "99th percentile of the one-way delay (sketch, within 1 %)."),
    "delay_p999_s": ("s", "99.9th percentile of the one-way delay (sketch, within 1 %)."),
    "delay_max_s": ("s", "Largest one-way delay (exact)."),
    "jitter_s": (
        "s",
        "RFC 3550 §6.4.1 interarrival jitter at the end of the run: J += (|D| − J)/16 over every "
        "delivered data packet, D the change in one-way transit time; NaN for an arrival process "
        "(its connections come and go) and before two packets.",
    ),
    "srtt_s": (
        "s",
        "The TCP sender's smoothed round-trip time at the end of the run (ns-2's tick-granular "
        "Jacobson/Karels estimate); 0 before the first RTT sample, NaN for UDP flows.",
    ),
}


_DELAY_COLUMNS = (
    "delay_packets",
    "delay_mean_s",
    "delay_p50_s",
    "delay_p90_s",
    "delay_p99_s",
    "delay_p999_s",
    "delay_max_s",
)


def _flow(name: str) -> Column:
    """A column of flows.parquet by name (a whole-run counter, or one of :data:`_FLOW_DEFS`)."""
    if name.startswith("window_"):
        base = name[len("window_") :]
        return Column(name, _FLOW_COUNTERS[base][0], _counter(base, W))
    if name in _FLOW_COUNTERS:
        return Column(name, _FLOW_COUNTERS[name][0], _counter(name, R))
    return Column(name, *_FLOW_DEFS[name])


FLOWS = OutputFile(
    "flows.parquet",
    "run",
    "One row per flow, in the scenario's order (after `count` expansion), then one row per "
    "`[[arrivals]]` process (all its connections together): what each sent, got through and lost, "
    "over the whole run and inside the measurement window, and its one-way delays.",
    (
        Column(
            "name",
            "text",
            "The flow's name (its `[[flow]]` name with `{i}` expanded), or the arrival process's.",
        ),
        Column("src", "text", "Name of the flow's source node."),
        Column("dst", "text", "Name of the flow's destination node."),
        Column(
            "kind",
            "text",
            'Traffic type: "tcp", a source kind\'s `type` (`qoslab.builder.SOURCES`), or "arrivals" for '
            "an arrival process's row.",
        ),
        Column("dscp", "codepoint", "The codepoint the source sets (0..63)."),
        *(
            _flow(n)
            for n in (
                "throughput_bps",
                "goodput_bps",
                "in_throughput_bps",
                "start_ns",
                "sent_packets",
                "sent_bytes",
                "retransmitted_packets",
                "delivered_packets",
                "delivered_bytes",
                "dropped_packets",
                "early_drops",
                "forced_drops",
                "overflow_drops",
                "policed_drops",
                "green_packets",
                "drops_prec0",
                "yellow_packets",
                "drops_prec1",
                "red_packets",
                "drops_prec2",
                "in_flight_packets",
                "acks_sent",
                "acks_dropped",
                "timeouts",
                "fast_retransmits",
                "ecn_marks",
                "ecn_responses",
                *(f"window_{n}" for n in _FLOW_WINDOW_ORDER),
                "final_cwnd",
                "final_ssthresh",
                "srtt_s",
                *_DELAY_COLUMNS,
                "jitter_s",
            )
        ),
    ),
)

_SIZE_BINS_DOC = "< 100 KB, 100 KB – 10 MB, ≥ 10 MB"

TRANSFERS = OutputFile(
    "transfers.parquet",
    "run",
    "One row per finite TCP transfer (a `[[flow]]` with `size`, or a connection of an `[[arrivals]]` "
    "process): finished ones in the order they finished, then those unfinished at the end of the run. "
    "Streamed out of the simulation as they finish, so its memory stays flat.",
    (
        Column("flow_name", "text", "The declared flow, or the arrival process, it belongs to."),
        Column("process", "index", "The arrival process's number, or 4294967295 for a declared flow."),
        Column("id", "index", "The connection's arrival number within its process (declared flow: its row)."),
        Column("slot", "index", "The simulator's flow slot that carried it (slots are reused)."),
        Column("dscp", "codepoint", "The codepoint its source set."),
        Column("size_bytes", "bytes", "The transfer's size as drawn (or given)."),
        Column("segments", "packets", "⌈size / packet_size⌉ data segments (the SYN not counted)."),
        Column("start_s", "s", "When the connection opened (its SYN was sent)."),
        Column("end_s", "s", "When the last segment's ACK reached the sender; NaN if unfinished."),
        Column(
            "fct_s", "s", "Flow completion time, end_s − start_s (SYN exchange included); NaN if unfinished."
        ),
        Column(
            "ideal_fct_s",
            "s",
            "Completion time on the empty path with an unlimited window: the SYN's round trip, the "
            "first segment's store-and-forward trip, the rest at the slowest link's rate, the last "
            "ACK's trip back.",
        ),
        Column("slowdown", "ratio", "fct_s / ideal_fct_s (≥ 1); NaN if unfinished."),
        Column("retransmits", "packets", "Segments retransmitted by this connection."),
        Column("timeouts", "count", "Retransmission timeouts of this connection."),
    ),
)

CLASSES = OutputFile(
    "classes.parquet",
    "run",
    "One row per DiffServ class (the codepoint the sources set), with the one-way delays of all its "
    "flows' data packets together (merged sketches).",
    (
        Column("dscp", "codepoint", "The codepoint (0..63)."),
        Column("codepoint", "text", 'Its name ("AF11", "EF", "BE", …).'),
        Column("flows", "count", "Rows of flows.parquet in the class (an arrival process counts once)."),
        *(_flow(n) for n in _DELAY_COLUMNS),
    ),
)

# -- links.parquet ----------------------------------------------------------------------------------

_LINK_REASON = {
    "early": "dropped {span} early (probabilistically) by the queue discipline",
    "forced": "dropped {span} by the queue discipline because its average was above the maximum threshold",
    "overflow": "dropped {span} because the physical buffer was full",
}


def _link_columns() -> Iterator[Column]:
    yield Column("link_name", "text", "The link's name.")
    yield Column(
        "link", "index", "The link's 0-based position among the scenario's links (after `count` expansion)."
    )
    yield Column("direction", "text", '"ab" (from the link\'s node `a` to node `b`) or "ba".')
    yield Column(
        "arrivals",
        "packets",
        "Packets (data and ACKs) arriving at this direction over the whole run, those a conditioner "
        "dropped at its entrance included: arrivals = departures + all drops + queued_at_end.",
    )
    yield Column(
        "departures",
        "packets",
        "Packets (data and ACKs) whose transmission on this direction ended over the whole run.",
    )
    yield Column(
        "departed_bytes",
        "bytes",
        "Bytes of the packets whose transmission on this direction ended over the whole run.",
    )
    for reason, what in _LINK_REASON.items():
        yield Column(f"{reason}_drops", "packets", f"Packets (data and ACKs) {what.format(span=R)}.")
    yield Column(
        "marks",
        "packets",
        "Packets the queue discipline marked ECN Congestion Experienced instead of dropping them, over the "
        "whole run.",
    )
    yield Column(
        "window_arrivals",
        "packets",
        "Packets (data and ACKs) arriving at this direction inside the measurement window, those a "
        "conditioner dropped at its entrance included.",
    )
    yield Column(
        "window_marks", "packets", f"Packets the queue discipline marked ECN Congestion Experienced {W}."
    )
    for reason, what in _LINK_REASON.items():
        yield Column(f"window_{reason}_drops", "packets", f"Packets (data and ACKs) {what.format(span=W)}.")
    yield Column(
        "window_policed_drops",
        "packets",
        f"Packets a conditioner guarding this direction dropped before its queue {W}.",
    )
    yield Column(
        "policed_drops",
        "packets",
        "Packets a conditioner guarding this direction dropped before its queue (a colour whose "
        "action is `drop`) over the whole run.",
    )
    for k, prec in _PRECS:
        yield Column(
            f"arrivals_prec{k}",
            "packets",
            f"Packets (data and ACKs) of drop precedence {prec} that reached the queue discipline over "
            "the whole run (packets policed at the entrance are not counted).",
        )
        yield Column(
            f"drops_prec{k}",
            "packets",
            f"Packets of drop precedence {prec} the queue dropped (early, forced or overflow; policed "
            "packets are not counted) over the whole run.",
        )
        yield Column(
            f"window_arrivals_prec{k}",
            "packets",
            f"Packets of drop precedence {prec} that reached the queue discipline at a time t with "
            "start ≤ t < end of the measurement window (policed packets not counted).",
        )
        yield Column(
            f"window_drops_prec{k}",
            "packets",
            f"Packets of drop precedence {prec} the queue dropped (early, forced or overflow) on arriving "
            "at a time t with start ≤ t < end of the measurement window.",
        )
    yield Column(
        "window_admitted",
        "packets",
        "Packets admitted to the queue inside the measurement window. On links whose queue decides "
        "at dequeue (multi, codel, fq_codel, pie), counted when their transmission starts: packets "
        "dropped at dequeue are not counted.",
    )
    yield Column(
        "window_wait_ns",
        "ns",
        "Sum, over the packets admitted inside the measurement window, of the time from admission to "
        "the start of their transmission; divided by window_admitted it is the mean queueing delay.",
    )
    yield Column(
        "queued_at_end",
        "packets",
        "Packets admitted and not yet completely transmitted at the end of the run (waiting or being "
        "serialised).",
    )
    yield Column(
        "utilization",
        "fraction 0–1",
        "Bytes (data and ACKs) whose transmission on this direction ended at a time t with start ≤ t "
        "< end of the measurement window × 8 / (the link's bandwidth × the window's length).",
    )


LINKS = OutputFile(
    "links.parquet",
    "run",
    "One row per link direction: link 0 a→b, link 0 b→a, link 1 a→b, … Counts include data packets and ACKs.",
    tuple(_link_columns()),
)

# -- the other tables of a run --------------------------------------------------------------------

_TIME = (
    Column("time_s", "s", "Sample time."),
    Column("time_ns", "ns", "Sample time."),
)
_FLOW_INDEX = Column("flow", "index", "The flow's 0-based number (its row in flows.parquet).")
_DIRECTION_INDEX = Column(
    "direction_index", "index", "The link direction: 2 × the link's index + 0 for ab, + 1 for ba."
)
_COND_INDEX = Column(
    "conditioner", "index", "The conditioner's 0-based number (its row in conditioners.parquet)."
)
_METER_FLOW = Column(
    "flow", "index", "The flow of a per-flow meter instance (0-based); 4294967295 for an aggregate meter."
)
_METER_FLOW_NAME = Column(
    "flow_name", "text", 'The flow of a per-flow meter instance; "(aggregate)" for an aggregate meter.'
)

CONDITIONERS = OutputFile(
    "conditioners.parquet",
    "run",
    "One row per conditioner (`[[conditioner]]`, after `count` expansion); no rows without conditioners.",
    (
        Column("name", "text", "The conditioner's name."),
        Column(
            "link",
            "text",
            "The link whose direction it guards (which direction, its `direction` key, is not listed).",
        ),
        Column("meter", "text", 'The meter type ("token_bucket", "srtcm", "trtcm", "tsw2cm", "ard", …).'),
        *(
            Column(
                f"{c}_packets",
                "packets",
                f"Packets (data, and ACKs if its classifier selects them) this conditioner coloured {c} "
                "over the whole run.",
            )
            for c in ("green", "yellow", "red")
        ),
    ),
)

FLOW_DROPS = OutputFile(
    "flow_drops.parquet",
    "run",
    "Where each flow lost data packets: one row per (flow, link direction) with at least one drop, "
    "over the whole run.",
    (
        _FLOW_INDEX,
        _DIRECTION_INDEX,
        Column(
            "drops",
            "packets",
            "Data packets of this flow dropped at this direction over the whole run, for any reason "
            "(policing included; ACK drops are not listed).",
        ),
        Column("flow_name", "text", "The flow's name."),
        Column("where", "text", 'The link direction as "LINK:DIR".'),
    ),
)


def _queue_gauge_columns() -> Iterator[Column]:
    """One column per gauge a queue kind declares (its ``GAUGES`` in the core, the schema's
    ``x-gauges``), in registry order: written only by runs with a queue of that kind."""
    from qoslab import schema

    seen: dict[str, tuple[str, str, list[str]]] = {}
    for kind, obj in schema.queue_kinds().items():
        for g in obj.get("x-gauges", []):
            unit, doc, kinds = seen.setdefault(g["name"], (g["unit"], g["description"], []))
            kinds.append(kind)
    for name, (unit, doc, kinds) in seen.items():
        by = ", ".join(f"`{k}`" for k in kinds)
        yield Column(
            name,
            unit,
            f"{doc} A gauge of queue type {by}: a column only in runs with such a queue, NaN in "
            "the rows of the other queues.",
        )


SERIES_QUEUE = OutputFile(
    "series_queue.parquet",
    "run",
    "Queue samples: one row per sample time (t = 0, then every `measurement.interval` up to the "
    "duration) × link direction × physical queue, for every direction, over the whole run.",
    (
        _TIME[0],
        _TIME[1],
        Column("queue", "text", 'The link direction as "LINK:DIR".'),
        _DIRECTION_INDEX,
        Column(
            "physical_queue",
            "index",
            "The physical queue within a multi-queue direction (0-based); 0 for a single-queue direction.",
        ),
        Column(
            "queue_packets",
            "packets",
            "Packets waiting in the queue at the sample time (the one being transmitted not included).",
        ),
        Column("queue_bytes", "bytes", "Bytes of the packets waiting in the queue at the sample time."),
        Column(
            "avg_queue",
            "packets",
            "The queue discipline's average queue estimate at the sample time as it last updated it (bytes "
            "in RED's byte mode): RED/ARED/FDD-RED's average, RIO's avg_in, WRED's shared average, "
            "dsRED's first virtual queue's; NaN for DropTail.",
        ),
        *(
            Column(
                f"avg_prec{k}",
                "packets",
                f"The average that drop precedence {k} is judged on (RIO-C: that of the backlog of "
                f"precedences ≤ {k}; RIO-D: precedence {k}'s own; RI+O: {rio_plus_o}; dsRED: virtual "
                f"queue {k}'s); single-average disciplines give avg_prec0 = avg_queue and NaN for 1 and 2.",
            )
            for k, rio_plus_o in enumerate(("avg_in", "avg_total", "avg_out = avg_total − avg_in"))
        ),
        *_queue_gauge_columns(),
    ),
)

SERIES_FLOW = OutputFile(
    "series_flow.parquet",
    "run",
    "Flow samples: one row per sample time (t = 0, then every `measurement.interval`) × flow, over the "
    "whole run.",
    (
        _TIME[0],
        _TIME[1],
        Column("flow_name", "text", "The flow's name."),
        _FLOW_INDEX,
        Column(
            "throughput_bps",
            "bit/s",
            "Bytes of the flow's data packets delivered to the receiver (with `measurement.point = "
            '"sender"`: emitted by the source) since the previous sample × 8 / the time since it; 0 at '
            "t = 0; every sample, inside the window or not.",
        ),
        Column(
            "cwnd",
            "packets",
            "The TCP sender's congestion window at the sample time (fractional, without fast-recovery "
            "inflation); NaN for UDP flows or with `measurement.cwnd = false`.",
        ),
        Column(
            "ssthresh",
            "packets",
            "The TCP sender's slow-start threshold at the sample time; NaN for UDP flows or with "
            "`measurement.cwnd = false`.",
        ),
    ),
)

SERIES_METER = OutputFile(
    "series_meter.parquet",
    "run",
    "Token levels: one row per sample time × conditioner × meter instance that has a token bucket "
    "(token bucket, srTCM, trTCM, ARM/ARD; not TSW, TWAM or the probe marker), from the sample after "
    "the instance metered its first packet.",
    (
        _TIME[0],
        _TIME[1],
        _COND_INDEX,
        _METER_FLOW,
        Column(
            "token_bytes",
            "bytes",
            "Tokens in the committed bucket (Tc; ARD's leaky bucket) at the sample time; ARD and the "
            'meters of `flavour = "ns2"` report the level after the last packet they metered.',
        ),
        Column("conditioner_name", "text", "The conditioner's name."),
        _METER_FLOW_NAME,
    ),
)

SERIES_GAUGES = OutputFile(
    "series_gauges.parquet",
    "run",
    "Marker state variables in long form: one row per sample time × conditioner × meter instance × "
    "gauge, for the meters that report gauges (ARM/ARD, TWAM, the probe marker; reference flavour), "
    "from the sample after the instance metered its first packet (TWAM's single instance: from t = 0).",
    (
        _TIME[0],
        _TIME[1],
        _COND_INDEX,
        _METER_FLOW,
        Column(
            "value",
            "gauge's unit",
            "The gauge's value at the sample time (unit in the gauge's name: _bps bit/s, _pkts packets; "
            "the others are counts or, for a_in and l_in, segments).",
        ),
        Column("conditioner_name", "text", "The conditioner's name."),
        _METER_FLOW_NAME,
        Column(
            "name",
            "text",
            "The gauge. ARM/ARD: tokens_pkts (bucket level in packets of the configured size), tpr_bps "
            "(Temporary Permitted Rate), lambda_in_bps and lambda_out_bps (IN and OUT arrival rates of "
            "the last completed interval, NaN before), remarked, dropped and passed_in (IN packets "
            "re-marked OUT, dropped and passed, since the start). TWAM: aggregate_window_pkts (Σ W_k of "
            "the last interval, NaN before) and intervals (completed intervals). Probe marker: a_in "
            "(A_IN), l_in (L_IN), marked_in, marked_out and retransmissions (segments since the start).",
        ),
    ),
)

# -- summary.json -----------------------------------------------------------------------------------


_DROP_KEYS: tuple[tuple[str, str], ...] = (
    ("total", "all drops on every link direction (early, forced, overflow and policed; data and ACKs)"),
    (
        "bottleneck",
        "early + forced + overflow drops at the bottleneck's busier direction (policed drops excluded)",
    ),
    ("bottleneck_early", "early drops at the bottleneck's busier direction"),
    ("bottleneck_forced", "forced drops at the bottleneck's busier direction"),
    ("bottleneck_overflow", "overflow drops at the bottleneck's busier direction"),
    (
        "bottleneck_policed",
        "packets dropped by conditioners at the entrance of the bottleneck's busier direction",
    ),
    ("bottleneck_marks", "packets ECN-marked by the queue of the bottleneck's busier direction"),
)


def _summary_columns() -> Iterator[Column]:
    yield Column("scenario", "text", "The scenario's name.")
    yield Column(
        "scenario_source",
        "text",
        "Where the scenario came from: its file path as given, followed by the overrides applied "
        '("(with --set KEY=VALUE, …)").',
    )
    yield Column(
        "scenario_sha256", "text", "SHA-256 of the canonical resolved scenario (equal for equivalent files)."
    )
    yield Column("seed", "integer", "The run's seed.")
    yield Column(
        "version",
        "text",
        "The qoslab release, '+', and a 12-hex-digit fingerprint of the simulator's sources (the "
        "Rust core and simulate.py, tasks.py, scenario.py).",
    )
    yield Column("duration_s", "s", "The scenario's duration (simulated time).")
    yield Column(
        "measurement_window_s",
        "list",
        "[start, end] of the measurement window, in seconds of simulated time.",
    )
    yield Column(
        "sampling_interval_s",
        "s",
        "The time series' sampling interval: `measurement.interval`, by default the duration / 1000, "
        "at most 0.1 s.",
    )
    yield Column(
        "fairness_index",
        "ratio",
        "Jain's index (Σx)² / (n·Σx²) of every declared flow's throughput_bps (inside the measurement "
        "window; arrival processes' rows left out): 1 when all are equal (or all 0), 1/n at worst.",
    )
    yield Column(
        "throughput_std_bps", "bit/s", "Population standard deviation (ddof 0) of the flows' throughput_bps."
    )
    yield Column("aggregate_throughput_bps", "bit/s", "Sum of the flows' throughput_bps.")
    yield Column(
        "bottleneck", "text", "Name of the `measurement.bottleneck` link (default: the slowest link)."
    )
    yield Column(
        "utilization",
        "fraction 0–1",
        "utilization (inside the measurement window) of the bottleneck's busier direction: the one "
        "with more departed_bytes over the whole run (a→b on a tie).",
    )
    yield Column("utilization_by_link", "object", 'Every link direction\'s utilization, by "LINK:DIR".')
    yield Column(
        "utilization_by_link.<link>:<dir>",
        "fraction 0–1",
        "That direction's utilization column of links.parquet (inside the measurement window).",
    )
    yield Column("drops", "object", "Drop counts over the whole run, from links.parquet.")
    for key, what in _DROP_KEYS:
        yield Column(f"drops.{key}", "packets", f"{what[0].upper()}{what[1:]}, {R}.")
    yield Column("window_drops", "object", "The same drop counts inside the measurement window.")
    for key, what in _DROP_KEYS:
        yield Column(f"window_drops.{key}", "packets", f"{what[0].upper()}{what[1:]}, {W}.")
    yield Column("flows", "list", "One entry per flow, in the order of flows.parquet.")
    yield Column("flows[].id", "index", "The flow's 0-based number.")
    yield Column("flows[].name", "text", "The flow's name.")
    for key in SUMMARY_FLOW_KEYS:
        c = _flow(key)
        yield Column(f"flows[].{key}", c.unit, c.definition)
    yield Column(
        "flows[].window",
        "object",
        "Every window_* column of flows.parquet, without the prefix: the flow's counters inside the "
        "measurement window.",
    )
    for key in _FLOW_WINDOW_ORDER:
        yield Column(f"flows[].window.{key}", _FLOW_COUNTERS[key][0], _counter(key, W))
    yield Column(
        "transfers",
        "object",
        "Present when the scenario has finite transfers: completion times (fct_s) and slowdowns of the "
        "finished ones (transfers.parquet), over all, by size bin and by class.",
    )
    yield Column("transfers.by_size", "object", f"Per size bin ({_SIZE_BINS_DOC}), by its label.")
    yield Column("transfers.by_class", "object", "Per class, by codepoint name.")
    for grp, what in (
        ("all", "every transfer"),
        ("by_size.<bin>", f"the transfers of one size bin ({_SIZE_BINS_DOC})"),
        ("by_class.<codepoint>", "the transfers of one class"),
    ):
        yield Column(f"transfers.{grp}", "object", f"The statistics of {what}.")
        yield Column(f"transfers.{grp}.finished", "count", f"Finished transfers of {what}.")
        yield Column(f"transfers.{grp}.unfinished", "count", f"Transfers of {what} still running at the end.")
        for m, unit in (("fct_s", "s"), ("slowdown", "ratio")):
            yield Column(f"transfers.{grp}.{m}", "object", f"{m} of the finished transfers of {what}.")
            for stat in ("mean", "median", "p99"):
                yield Column(
                    f"transfers.{grp}.{m}.{stat}", unit, f"The {stat} of {m} (exact, over the finished ones)."
                )
    yield Column("arrivals", "object", "Present when the scenario has [[arrivals]]: per process, by name.")
    yield Column("arrivals.<process>", "object", "One arrival process's counts.")
    yield Column("arrivals.<process>.arrivals", "count", "Flows that arrived.")
    yield Column(
        "arrivals.<process>.refused",
        "count",
        "Arrivals refused because `max_active` connections were open (0 unless the cap was too low).",
    )
    yield Column("arrivals.<process>.completed", "count", "Transfers completed.")
    yield Column("arrivals.<process>.peak_active", "count", "Most connections open at once.")
    yield Column("classes", "object", "Per class (codepoint name): classes.parquet's row.")
    yield Column("classes.<codepoint>", "object", "One class's flows and delays.")
    yield Column("classes.<codepoint>.flows", "count", "Rows of flows.parquet in the class.")
    for n in _DELAY_COLUMNS:
        c = _flow(n)
        yield Column(f"classes.<codepoint>.{n[len('delay_') :]}", c.unit, c.definition + " Null when none.")
    yield Column(
        "events",
        "count",
        "Events the simulation engine processed (packet arrivals, timers, samples, …) over the whole run.",
    )
    yield Column(
        "packet_hops",
        "count",
        "Transmissions completed on link directions over the whole run (data and ACKs; the sum of "
        "departures).",
    )
    yield Column(
        "conservation_violations",
        "list",
        "The conservation checks that failed (per flow sent = delivered + dropped + in flight, the "
        "same for ACKs, per direction arrivals = departures + drops + queued); empty when every "
        "packet is accounted for.",
    )
    yield Column(
        "wall_time_s",
        "s",
        "Wall-clock time the core took to simulate (machine-dependent; left out of comparisons).",
    )
    yield Column(
        "partial",
        "boolean",
        "Present (true) only when the run stopped early (Ctrl-C, SIGTERM or its --max-time budget): "
        "counts cover up to simulated_until_s, yet rates still divide by the whole window's length.",
    )
    yield Column("simulated_until_s", "s", "Present only in a partial run: the simulated time it reached.")
    yield Column("stopped", "text", "Present only when the time budget stopped the run: why.")


SUMMARY = OutputFile(
    "summary.json",
    "run",
    "The run's headline figures (also printed by `qoslab run`; written alone by `--summary-only`). "
    "Nested keys are written as dotted paths; `flows[]` stands for each element of the list.",
    tuple(_summary_columns()),
)

SCENARIO_TOML = OutputFile(
    "scenario.toml",
    "run",
    "The scenario as run, with the `--set` overrides applied (the text whose canonical form "
    "scenario_sha256 hashes).",
)

RUN_MARKER = OutputFile(
    ".qoslab-run",
    "run",
    "Written first (a small JSON object: format, scenario, seed, version, pid, started): marks the folder "
    "as a qoslab run, the only kind `--force` clears before a new run replaces it (qoslab.rundir).",
)

PCAP = OutputFile(
    "<capture file>.pcap",
    "run",
    'One pcap file per `[[capture]]` (named by its `file`, default LINK.pcap; `direction = "both"` '
    "writes LINK.ab.pcap and LINK.ba.pcap): every packet leaving the link direction, stamped at the end "
    "of its transmission, with synthesised IPv4 + TCP/UDP headers (DSCP and ECN included) and its "
    "size on the wire as the original length.",
)

# -- qoslab sweep --out DIR -------------------------------------------------------------------------

#: The metrics every run records (:data:`qoslab.tasks.STANDARD_METRICS`), with their definitions.
METRICS: tuple[Column, ...] = (
    Column(
        "fairness_index",
        "ratio",
        "summary.json's fairness_index (Jain's index of the flows' throughput_bps).",
    ),
    Column("aggregate_throughput_bps", "bit/s", "summary.json's aggregate_throughput_bps."),
    Column("throughput_std_bps", "bit/s", "summary.json's throughput_std_bps."),
    Column("utilization", "fraction 0–1", "summary.json's utilization (the bottleneck's busier direction)."),
    Column(
        "drops_total",
        "packets",
        "summary.json's drops.total: every drop on every link direction over the whole run, policing "
        "included.",
    ),
    Column(
        "drops_bottleneck",
        "packets",
        "summary.json's drops.bottleneck: early + forced + overflow drops at the bottleneck's busier "
        "direction over the whole run.",
    ),
    *(
        Column(
            f"drops_bottleneck_{r}",
            "packets",
            f"summary.json's drops.bottleneck_{r}: {r} drops at the bottleneck's busier direction over the "
            "whole run.",
        )
        for r in ("early", "forced", "overflow")
    ),
    Column(
        "drop_rate_bottleneck_pps",
        "packets/s",
        "drops_bottleneck (over the whole run) / the scenario's duration; NaN for a zero duration.",
    ),
    Column("timeouts", "count", "Sum over the flows of timeouts (over the whole run)."),
    Column(
        "retransmitted_packets",
        "packets",
        "Sum over the flows of retransmitted_packets (over the whole run).",
    ),
    Column(
        "queue_mean_pkts",
        "packets",
        "Mean of series_queue's queue_packets over the rows of the bottleneck's busier direction with "
        "start ≤ time_s ≤ end of the measurement window (one row per physical queue on a multi-queue "
        "link); NaN without such samples.",
    ),
    Column(
        "red_avg_mean_pkts",
        "packets",
        "Mean of series_queue's avg_queue over the same rows for a discipline with one average (RED, "
        "ARED, FDD-RED, WRED's shared average, DWRED: avg_prec1 is NaN); NaN for RIO, RI+O, dsRED, "
        "DropTail and the disciplines without an average.",
    ),
    Column(
        "rio_avg_in_mean_pkts",
        "packets",
        "Mean of series_queue's avg_prec0 over the same rows for a discipline with an average per drop "
        "precedence (RIO-C, RIO-D and RI+O: avg_in; dsRED: virtual queue 0's); NaN for every other "
        "discipline. Runs stored before this split have avg_queue_mean_pkts instead (the mean of "
        "avg_queue: RED's average under RED, RIO's avg_in under RIO), still read as stored.",
    ),
    Column("events", "count", "summary.json's events."),
    Column("packet_hops", "count", "summary.json's packet_hops."),
)

_TYPED = (
    "typed: numbers as numbers, true/false as booleans, quantities as numbers with the unit in the "
    "column's name (`--grid queue.limit=20pkts,50pkts` → column `queue.limit_pkts`, values 20 and 50; "
    "several units of one kind → the base unit: bps, s, B), other values as given "
    "(`qoslab.results.typed_column`)"
)

_GRID_KEY = Column(
    "<grid key>",
    "key's unit",
    f"One column per `--grid KEY=…`, named KEY or KEY_UNIT: the value this run got, {_TYPED}.",
)

RUNS_CSV = OutputFile(
    "runs.csv",
    "sweep",
    "One row per run of the sweep (grid point × seed), ok or failed, read back from the result "
    "store; `qoslab results --table runs` shows the same runs with series_queue and series_flow and "
    "with params expanded to one column per key.",
    (
        Column("run_id", "integer", "The run's id in the result store (results.db runs.id)."),
        Column("scenario", "text", "The scenario's name."),
        Column(
            "scenario_sha256",
            "text",
            "SHA-256 of the canonical resolved scenario of this grid point; with seed and version it "
            "identifies the run.",
        ),
        Column("seed", "integer", "The run's seed."),
        Column("version", "text", "The qoslab version that computed the run (summary.json's version)."),
        Column("status", "text", '"ok" or "failed" (after every retry).'),
        Column("error", "text", "The one-line error of a failed run; empty for ok."),
        Column(
            "attempts",
            "count",
            "Computations of this run the coordinator has received, in every sweep so far.",
        ),
        Column(
            "wall_time_s",
            "s",
            "Wall-clock time of the worker's computation (simulation, summary, metrics, tables); "
            "machine-dependent.",
        ),
        Column("worker", "text", 'The worker that computed it, as "HOST:PID".'),
        Column("finished_at", "Unix time, s", "When the worker finished the run (its clock)."),
        Column(
            "params",
            "JSON text",
            "This sweep's grid point of the run ({key: value as given}), also for a run reused from "
            "another sweep.",
        ),
        Column(
            "sweep",
            "text",
            "This sweep's name (`--name`, default the scenario's name), also for a run reused from "
            "another sweep.",
        ),
        *METRICS,
        Column(
            "<extra metric>",
            "metric's unit",
            "One column per metric returned by a `--metric MODULE:FUNCTION` function.",
        ),
        _GRID_KEY,
    ),
)

_GROUP_KEY = Column(
    "<grid key>",
    "key's unit",
    "One column per `--grid KEY=…`, named KEY or KEY_UNIT: the grid point's value, typed as in runs.csv.",
)

STATS_CSV = OutputFile(
    "stats.csv",
    "sweep",
    "Statistics over seeds: one row per grid point × metric of `--show` (default fairness_index, "
    "aggregate_throughput_bps, utilization, drops_bottleneck), over the successful runs.",
    (
        _GROUP_KEY,
        Column("metric", "text", "The metric's name (a column of runs.csv)."),
        Column("n", "count", "Runs (seeds) with a finite value of the metric."),
        Column("mean", "metric's unit", "Mean of the metric over those runs."),
        Column("std", "metric's unit", "Sample standard deviation (ddof 1); NaN when n < 2."),
        Column(
            "ci_low",
            "metric's unit",
            "Lower end of the 95 % Student-t confidence interval, mean − t(0.975, n−1)·std/√n; NaN when n "
            "< 2.",
        ),
        Column("ci_high", "metric's unit", "Upper end of that interval; NaN when n < 2."),
        Column("half_width", "metric's unit", "(ci_high − ci_low) / 2."),
        Column("min", "metric's unit", "The smallest value over those runs."),
        Column("max", "metric's unit", "The largest value over those runs."),
        Column("seeds", "text", 'The seeds that contributed, as ranges ("1-3,5").'),
        Column("version", "text", "The qoslab version of the coordinator that wrote the table."),
    ),
)

# -- the result store -------------------------------------------------------------------------------

_RUN_ID = Column("run_id", "integer", "The run (runs.id).")

STORE_RUNS = OutputFile(
    "results.db: runs",
    "store",
    "One row per (scenario_sha256, seed, version): the run, ok or failed.",
    (
        Column("id", "integer", "The run's id."),
        Column("scenario_sha256", "text", "SHA-256 of the canonical resolved scenario."),
        Column("seed", "integer", "The run's seed."),
        Column("version", "text", "The qoslab version that computed it (summary.json's version)."),
        Column("scenario", "text", "The scenario's name."),
        Column("scenario_source", "text", "Where the scenario came from, with the overrides applied."),
        Column(
            "sweep", "text", "The first sweep that stored the run (every sweep it belongs to: sweep_runs)."
        ),
        Column("params", "JSON text", "That sweep's grid point ({key: value as given})."),
        Column("status", "text", '"ok" or "failed".'),
        Column("error", "text", "The one-line error of a failed run; NULL for ok."),
        Column("traceback", "text", "The Python traceback of a failed run; NULL for ok."),
        Column("attempts", "count", "Computations of this run received so far (rows of attempts)."),
        Column("wall_time_s", "s", "Wall-clock time of the worker's computation."),
        Column("worker", "text", 'The worker, as "HOST:PID".'),
        Column("started_at", "Unix time, s", "When the worker started the run."),
        Column("finished_at", "Unix time, s", "When the worker finished the run."),
        Column(
            "series_queue",
            "text",
            "Path, relative to the store, of the run's series_queue Parquet file; NULL if failed.",
        ),
        Column(
            "series_flow",
            "text",
            "Path, relative to the store, of the run's series_flow Parquet file; NULL if failed.",
        ),
        Column(
            "metric_functions",
            "JSON text",
            "The extra metric functions (MODULE:FUNCTION) the run was computed with, sorted.",
        ),
        Column("summary", "JSON text", "The run's summary.json; NULL if failed."),
        Column(
            "series_queue_sha256",
            "text",
            "SHA-256 of the series_queue file, recorded when the run was stored (NULL if failed, or "
            "stored before schema 3); results --check, reading and a resumed sweep verify it.",
        ),
        Column("series_flow_sha256", "text", "The same for the series_flow file."),
    ),
)

STORE_METRICS = OutputFile(
    "results.db: metrics",
    "store",
    "One row per (run, metric): the standard metrics (the metric columns of runs.csv) and extra ones. "
    "Runs stored before red_avg_mean_pkts and rio_avg_in_mean_pkts have avg_queue_mean_pkts "
    "(deprecated: RED's average or RIO's avg_in, by the queue) instead; it is read as stored.",
    (
        _RUN_ID,
        Column("name", "text", "The metric's name."),
        Column("value", "metric's unit", "Its value; NULL for NaN or infinite."),
    ),
)

STORE_FLOWS = OutputFile(
    "results.db: flows",
    "store",
    "One row per (run, flow) of the successful runs.",
    (_RUN_ID, _FLOW_INDEX),
    includes="flows.parquet",
)

STORE_QUEUES = OutputFile(
    "results.db: queues",
    "store",
    "One row per (run, link direction) of the successful runs.",
    (_RUN_ID, Column("queue", "text", 'The link direction as "LINK:DIR".')),
    includes="links.parquet",
)

STORE_ATTEMPTS = OutputFile(
    "results.db: attempts",
    "store",
    "One row per computation the coordinator received (each try of each run, ok or failed).",
    (
        Column("id", "integer", "The attempt's id."),
        Column("scenario_sha256", "text", "The run's scenario hash."),
        Column("seed", "integer", "The run's seed."),
        Column("version", "text", "The run's qoslab version."),
        Column(
            "attempt", "integer", "1 for a sweep's first try of the run, + 1 for each retry in that sweep."
        ),
        Column("status", "text", '"ok" or "failed".'),
        Column("error", "text", "The one-line error of a failed attempt; NULL for ok."),
        Column("worker", "text", 'The worker, as "HOST:PID".'),
        Column("wall_time_s", "s", "Wall-clock time of the worker's computation."),
        Column("finished_at", "Unix time, s", "When the worker finished."),
    ),
)

STORE_SWEEP_RUNS = OutputFile(
    "results.db: sweep_runs",
    "store",
    "Sweep membership: one row per (sweep, run, grid point); a run shared by several sweeps (or by "
    "two points of one grid) is computed once and listed under each.",
    (
        Column("sweep", "text", "The sweep's name."),
        _RUN_ID,
        Column("params", "JSON text", "The grid point this sweep gave the run ({key: value as given})."),
    ),
)

STORE_SWEEPS = OutputFile(
    "results.db: sweeps",
    "store",
    "One row per sweep name: the grid it was run with (another grid under the name is refused, "
    "`--replace` starts it afresh).",
    (
        Column("name", "text", "The sweep's name."),
        Column("grid", "JSON text", "Its grid: {key: [values as given, sorted]}."),
        Column("created", "Unix time, s", "When the name was given this grid."),
    ),
)

STORE_SCENARIOS = OutputFile(
    "results.db: scenarios",
    "store",
    "One row per distinct scenario (by hash).",
    (
        Column("sha256", "text", "SHA-256 of the canonical resolved scenario."),
        Column("name", "text", "The scenario's name."),
        Column("toml", "text", "The scenario's TOML text as run."),
    ),
)

STORE_META = OutputFile(
    "results.db: meta",
    "store",
    'The store\'s identity: rows format ("qoslab-results"), schema_version and created (local time).',
    (
        Column("key", "text", 'The entry: "format", "schema_version" or "created".'),
        Column("value", "text", "The entry's value, as text."),
    ),
)

STORE_SERIES_QUEUE = OutputFile(
    "series/<xx>/<run>.queue.parquet",
    "store",
    "A successful run's queue samples (xx: the scenario hash's first two hex digits; run: hash "
    "prefix, seed and version); Parquet metadata qoslab.scenario, scenario_sha256, seed, version.",
    (),
    includes="series_queue.parquet",
)

STORE_SERIES_FLOW = OutputFile(
    "series/<xx>/<run>.flow.parquet",
    "store",
    "A successful run's flow samples, named and tagged as the queue samples.",
    (),
    includes="series_flow.parquet",
)

#: Every output, in the order of the page.
OUTPUTS: tuple[OutputFile, ...] = (
    SUMMARY,
    SCENARIO_TOML,
    RUN_MARKER,
    FLOWS,
    LINKS,
    CONDITIONERS,
    FLOW_DROPS,
    TRANSFERS,
    CLASSES,
    SERIES_QUEUE,
    SERIES_FLOW,
    SERIES_METER,
    SERIES_GAUGES,
    PCAP,
    RUNS_CSV,
    STATS_CSV,
    STORE_RUNS,
    STORE_METRICS,
    STORE_FLOWS,
    STORE_QUEUES,
    STORE_ATTEMPTS,
    STORE_SWEEP_RUNS,
    STORE_SWEEPS,
    STORE_SCENARIOS,
    STORE_META,
    STORE_SERIES_QUEUE,
    STORE_SERIES_FLOW,
)

_GROUPS: dict[str, tuple[str, str]] = {
    "run": (
        "`qoslab run SCENARIO --out DIR`",
        "Written into DIR by `qoslab run --out` (and `qoslab.run(..., out=DIR)`): summary.json, "
        "scenario.toml and the eight Parquet tables (no CSV copies; `--summary-only` writes the first "
        "two alone), plus any pcap captures. Each table's Parquet metadata holds qoslab.scenario, "
        "qoslab.seed and qoslab.version. A partial run (stopped early) writes the same files. DIR "
        "must be absent, empty or an earlier run's (replaced with `--force`); without `--out` a "
        "scenario that captures writes them into a fresh folder under qoslab-runs/.",
    ),
    "sweep": (
        "`qoslab sweep SCENARIO … --out DIR`",
        "Written into DIR after the sweep, from the result store.",
    ),
    "store": (
        "The result store (`--store DIR`, default `results/store` or `$QOSLAB_STORE`)",
        "`results.db` (SQLite; beside it the writer's lock results.db.lock and SQLite's WAL files) "
        "and the time series of its successful runs. `qoslab results --table "
        "NAME` and `qoslab.results.load(store, NAME)` read runs (the columns of runs.csv, with "
        "series_queue and series_flow), flows, queues, metrics, attempts, series_queue and series_flow, "
        "each joined with the run's run_id, scenario, scenario_sha256, seed, version, params and "
        "sweep, params expanded to one column per key; `--export FILE.csv|FILE.parquet` writes them.",
    ),
}

_INTRO = """\
Every file qoslab writes, with every column (or JSON key), its unit and its definition, read
from the code that computes it. `tests/test_outputs_doc.py` runs real scenarios and a sweep and
fails when a written column is missing here or a column listed here is no longer written.

Conventions:

- **Inside the measurement window**: between `[measurement] start` and `end` (default: the
  whole run). Flow and link event counters (`window_*`, `window_drops`, `flows[].window`) are
  the difference of snapshots taken at those two instants; byte rates (`throughput_bps`,
  `goodput_bps`, `in_throughput_bps`, `utilization`) count what happened inside the window and
  divide by its length; the `*_prec*` window counters and `utilization` count events at a time t
  with start ≤ t < end.
- **Over the whole run**: from t = 0 to the scenario's duration (to `simulated_until_s` in a
  partial run).
- **Data packets** are the segments or datagrams of a flow; **ACKs** are the TCP receiver's
  acknowledgements. Flow counters count data packets unless they say ACKs; link counters count
  both.
- **Drop precedence** of a packet, from its DSCP: 0 for AFx1 and EF, 1 for AFx2, 2 for AFx3,
  best effort and everything else.
- **Link directions**: `ab` from the link's node `a` to node `b`, `ba` back; written `LINK:DIR`;
  `direction_index` = 2 × the link's index + 0 (ab) or 1 (ba). Flows, links and conditioners are
  numbered from 0 in the scenario's order after `count` expansion.
- **Units**: bit/s, bytes, packets, packets/s, s, ns; fraction 0–1; ratio (dimensionless);
  count (events); index (a 0-based number); Unix time, s (seconds since 1970-01-01 UTC).
  NaN stands for "not defined here" (UDP flows have no cwnd, DropTail no average).
"""


def get(name: str) -> OutputFile:
    """The output named ``name`` (exactly as in :data:`OUTPUTS`)."""
    for o in OUTPUTS:
        if o.name == name:
            return o
    raise KeyError(f"no output {name!r}")


def docstring(output: str | OutputFile, lead: str) -> str:
    """``lead`` followed by ``output``'s description and every column with its unit and
    definition: the docstrings of :class:`qoslab.simulate.Result`'s tables."""
    o = get(output) if isinstance(output, str) else output
    lines = [lead, "", o.description, "", f"Columns (as in docs/outputs.md, {o.name}):", ""]
    lines += [f"- ``{c.name}`` ({c.unit}): {c.definition}" for c in columns(o)]
    return "\n".join(lines)


def columns(output: str | OutputFile) -> tuple[Column, ...]:
    """Every column of ``output``: its own, then those of the output it includes."""
    o = get(output) if isinstance(output, str) else output
    return o.columns + (columns(o.includes) if o.includes else ())


def find(output: str | OutputFile, column: str) -> Column | None:
    """The documented column of ``output`` called ``column``: an exact name first, then a pattern."""
    cols = columns(output)
    for c in cols:
        if not c.is_pattern and c.name == column:
            return c
    for c in cols:
        if c.is_pattern and c.matches(column):
            return c
    return None


def output_for(file_name: str) -> OutputFile | None:
    """The output a file written by ``qoslab run --out`` (a name in DIR) is."""
    for o in OUTPUTS:
        if o.group == "run" and o.matches(file_name):
            return o
    return None


def json_keys(obj: Mapping[str, Any], prefix: str = "") -> list[str]:
    """Every key of a JSON object as a dotted path, nested objects included; a list of objects
    contributes ``NAME[].KEY`` for the keys of its elements (the notation of summary.json's rows)."""
    out: list[str] = []
    for k, v in obj.items():
        path = f"{prefix}{k}"
        out.append(path)
        if isinstance(v, Mapping):
            out += json_keys(v, path + ".")
        elif isinstance(v, list) and v and all(isinstance(x, Mapping) for x in v):
            for x in v:
                out += [p for p in json_keys(x, path + "[].") if p not in out]
    return out


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def markdown() -> str:
    """docs/outputs.md: an introduction, then one section per output with its columns."""
    lines = [
        "# Output files",
        "",
        f"<!-- Generated by `{REGENERATE}` from python/qoslab/outputs.py; do not edit. -->",
        "",
        _INTRO.rstrip(),
    ]
    for group, (title, text) in _GROUPS.items():
        lines += ["", f"## {title}", "", text]
        for o in OUTPUTS:
            if o.group != group:
                continue
            lines += ["", f"### `{o.name}`", "", o.description]
            if o.columns:
                lines += ["", "| name | unit | definition |", "|---|---|---|"]
                lines += [f"| `{c.name}` | {c.unit} | {_cell(c.definition)} |" for c in o.columns]
            if o.includes:
                lines += ["", f"Then every column of `{o.includes}`, in the same order."]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    import argparse  # here: `qoslab run` imports this module for summary.json's keys

    p = argparse.ArgumentParser(
        prog="python -m qoslab.outputs",
        description="Print docs/outputs.md (every output file and column), or check it is up to date.",
    )
    p.add_argument("--check", action="store_true", help="Exit 1 if the page differs from what this prints.")
    p.add_argument(
        "--path", type=Path, default=DOC_PATH, help="The page to check (default: docs/outputs.md)."
    )
    args = p.parse_args(argv)
    text = markdown()
    if args.check:
        current = args.path.read_text() if args.path.is_file() else None
        if current != text:
            print(f"{args.path} is stale: regenerate it with `{REGENERATE}`", file=sys.stderr)
            return 1
        return 0
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
