"""The per-flow and per-link tables of ``qoslab run --out DIR``: flows.parquet,
transfers.parquet, classes.parquet and links.parquet."""

from __future__ import annotations

from collections.abc import Iterator

from qoslab import schema
from qoslab.outputs.columns import Column, OutputFile, R, W

# -- qoslab run --out DIR: flows.parquet ------------------------------------------------------------

_PRECS = (
    (0, "0 (AFx1 or EF)"),
    (1, "1 (AFx2)"),
    (2, "2 (AFx3, best effort and every other codepoint)"),
)

#: The flow event counters that exist over the whole run and again inside the window
#: (``window_*`` columns, ``flows[].window`` in summary.json): name → (unit, definition with
#: ``{span}``), in the order of the ``window_*`` columns.
FLOW_COUNTERS: dict[str, tuple[str, str]] = {
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
    FLOW_COUNTERS[f"{_colour}_packets"] = (
        "packets",
        f"Data packets of the flow that a conditioner coloured {_colour} {{span}} (one count per "
        "conditioner that metered the packet; retransmissions included); 0 without conditioners.",
    )
    FLOW_COUNTERS[f"drops_prec{_k}"] = (
        "packets",
        "Data packets of the flow dropped {span} for any reason (policing included) while carrying "
        f"drop precedence {_PRECS[_k][1]}.",
    )


#: What a declared counter's fold (``$defs.flow_counters``' ``fold``) means for its columns.
_FOLDS = {
    "sum": "counted again inside the window as its count at the window's end less its count at the "
    "window's start; an arrival process's row sums its connections'",
}


def _declared_counters() -> tuple[str, ...]:
    """The per-flow counters the TCP senders declare in their own files (the core's
    ``$defs.flow_counters``), added to :data:`FLOW_COUNTERS`; their names in column order."""
    names = []
    for c in schema.flow_counters():
        FLOW_COUNTERS[c["name"]] = (
            c["unit"],
            f"{c['description']} Counted by the `{c['flavour']}` flavour's TCP sender, 0 for other "
            f"flows; {_FOLDS[c['fold']]}.",
        )
        names.append(c["name"])
    return tuple(names)


#: The counters the senders declare, in the order the core writes them (after ecn_responses, and
#: as window_* after the window's drop and colour counters).
_DECLARED_COUNTERS = _declared_counters()


def counter(name: str, span: str) -> str:
    return FLOW_COUNTERS[name][1].replace("{span}", span)


#: The drop and colour counters, in the order flows.parquet has them (whole-run and window).
_FLOW_DROP_COUNTERS = (
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

#: The ``window_*`` columns of flows.parquet, in the order the core writes them.
FLOW_WINDOW_ORDER = (
    "retransmitted_packets",
    "timeouts",
    "fast_retransmits",
    "ecn_marks",
    "ecn_responses",
    *_FLOW_DROP_COUNTERS,
    *_DECLARED_COUNTERS,
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


DELAY_COLUMNS = (
    "delay_packets",
    "delay_mean_s",
    "delay_p50_s",
    "delay_p90_s",
    "delay_p99_s",
    "delay_p999_s",
    "delay_max_s",
)


def flow(name: str) -> Column:
    """A column of flows.parquet by name (a whole-run counter, or one of :data:`_FLOW_DEFS`)."""
    if name.startswith("window_"):
        base = name[len("window_") :]
        return Column(name, FLOW_COUNTERS[base][0], counter(base, W))
    if name in FLOW_COUNTERS:
        return Column(name, FLOW_COUNTERS[name][0], counter(name, R))
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
            flow(n)
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
                *_FLOW_DROP_COUNTERS,
                "in_flight_packets",
                "acks_sent",
                "acks_dropped",
                "timeouts",
                "fast_retransmits",
                "ecn_marks",
                "ecn_responses",
                *_DECLARED_COUNTERS,
                *(f"window_{n}" for n in FLOW_WINDOW_ORDER),
                "final_cwnd",
                "final_ssthresh",
                "srtt_s",
                *DELAY_COLUMNS,
                "jitter_s",
            )
        ),
    ),
)

SIZE_BINS_DOC = "< 100 KB, 100 KB – 10 MB, ≥ 10 MB"

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
        *(flow(n) for n in DELAY_COLUMNS),
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
