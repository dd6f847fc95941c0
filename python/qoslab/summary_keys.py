"""summary.json's per-flow keys, on their own: ``Result.summary`` writes them and
:mod:`qoslab.outputs` documents them, and a run does not import the documentation (its
dataclasses bring inspect, ~10 ms of a short run's ~80 ms whole process)."""

#: summary.json's per-flow keys besides id, name and window.
SUMMARY_FLOW_KEYS = (
    "throughput_bps",
    "goodput_bps",
    "delivered_bytes",
    "sent_packets",
    "retransmitted_packets",
    "dropped_packets",
    "timeouts",
    "ecn_marks",
    "ecn_responses",
)

#: Transfer-size bins of summary.json's ``transfers.by_size``: (label, from, below) in bytes.
SIZE_BINS: tuple[tuple[str, int, float], ...] = (
    ("<100KB", 0, 100_000),
    ("100KB-10MB", 100_000, 10_000_000),
    (">=10MB", 10_000_000, float("inf")),
)
