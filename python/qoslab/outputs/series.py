"""The other tables of ``qoslab run --out DIR``: conditioners.parquet, flow_drops.parquet and
the time series (series_queue, series_flow, series_meter, series_gauges)."""

from __future__ import annotations

from collections.abc import Iterator

from qoslab.outputs.columns import Column, OutputFile

# -- the other tables of a run --------------------------------------------------------------------

_TIME = (
    Column("time_s", "s", "Sample time."),
    Column("time_ns", "ns", "Sample time."),
)
FLOW_INDEX = Column("flow", "index", "The flow's 0-based number (its row in flows.parquet).")
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
        FLOW_INDEX,
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
        FLOW_INDEX,
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
