"""The run's other files: summary.json (every key as a dotted path), scenario.toml, the
``.qoslab-run`` marker and the pcap captures."""

from __future__ import annotations

from collections.abc import Iterator

from qoslab.outputs.columns import Column, OutputFile, R, W
from qoslab.outputs.tables import (
    DELAY_COLUMNS,
    FLOW_COUNTERS,
    FLOW_WINDOW_ORDER,
    SIZE_BINS_DOC,
    counter,
    flow,
)
from qoslab.summary_keys import SUMMARY_FLOW_KEYS

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
        "Rust core and runs/simulate.py, runs/tasks.py, scenario.py).",
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
        c = flow(key)
        yield Column(f"flows[].{key}", c.unit, c.definition)
    yield Column(
        "flows[].window",
        "object",
        "Every window_* column of flows.parquet, without the prefix: the flow's counters inside the "
        "measurement window.",
    )
    for key in FLOW_WINDOW_ORDER:
        yield Column(f"flows[].window.{key}", FLOW_COUNTERS[key][0], counter(key, W))
    yield Column(
        "transfers",
        "object",
        "Present when the scenario has finite transfers: completion times (fct_s) and slowdowns of the "
        "finished ones (transfers.parquet), over all, by size bin and by class.",
    )
    yield Column("transfers.by_size", "object", f"Per size bin ({SIZE_BINS_DOC}), by its label.")
    yield Column("transfers.by_class", "object", "Per class, by codepoint name.")
    for grp, what in (
        ("all", "every transfer"),
        ("by_size.<bin>", f"the transfers of one size bin ({SIZE_BINS_DOC})"),
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
    for n in DELAY_COLUMNS:
        c = flow(n)
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
    "as a qoslab run, the only kind `--force` replaces (qoslab.runs.rundir). A reproduction's OUT/NAME "
    "holds one too, naming it (format, reproduction, version, pid, started).",
)

PCAP = OutputFile(
    "<capture file>.pcap",
    "run",
    'One pcap file per `[[capture]]` (named by its `file`, default LINK.pcap; `direction = "both"` '
    "writes LINK.ab.pcap and LINK.ba.pcap): every packet leaving the link direction, stamped at the end "
    "of its transmission, with synthesised IPv4 + TCP/UDP headers (DSCP and ECN included) and its "
    "size on the wire as the original length.",
)
