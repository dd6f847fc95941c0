"""Event counters inside the measurement window (drops by reason per link direction and per
flow, colours, drop precedences, retransmissions, timeouts, ECN marks and responses): a run
is deterministic up to any time, so the window's count must equal the count of the run
stopped at the window's end minus the count of the run stopped at its start."""

from __future__ import annotations

import json

import numpy as np

import qoslab
from conftest import SCENARIOS

FLOW_COUNTERS = [
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
    "yellow_packets",
    "red_packets",
    "drops_prec0",
    "drops_prec1",
    "drops_prec2",
]
LINK_COUNTERS = ["arrivals", "marks", "early_drops", "forced_drops", "overflow_drops", "policed_drops"]


def _run(name: str, stop: str, extra: list[str], seed: int) -> qoslab.Result:
    sc = qoslab.load_scenario(SCENARIOS / name).with_overrides(
        [f"duration={stop}", "measurement.start=0s", f"measurement.end={stop}", *extra]
    )
    return qoslab.run(sc, seed=seed)


def _check(name: str, extra: list[str], seed: int) -> None:
    sc = qoslab.load_scenario(SCENARIOS / name).with_overrides(
        ["duration=45s", "measurement.start=10s", "measurement.end=35s", *extra]
    )
    w = qoslab.run(sc, seed=seed)
    before = _run(name, "10s", extra, seed)
    upto = _run(name, "35s", extra, seed)
    for c in FLOW_COUNTERS:
        expected = (upto.flows[c] - before.flows[c]).to_numpy()
        assert np.array_equal(w.flows[f"window_{c}"].to_numpy(), expected), c
        assert (w.flows[f"window_{c}"] <= w.flows[c]).all(), c
    for c in LINK_COUNTERS:
        expected = (upto.links[c] - before.links[c]).to_numpy()
        assert np.array_equal(w.links[f"window_{c}"].to_numpy(), expected), c
    # The window closes at 35 s of a 45 s run: it is not the whole run's count.
    assert (w.flows["window_retransmitted_packets"] < w.flows["retransmitted_packets"]).any()
    summary = w.summary()
    assert summary["window_drops"]["bottleneck_early"] == int(
        w.links[w.links.link_name == "bottleneck"]["window_early_drops"].iloc[0]
    )
    json.dumps(summary)


def test_window_counts_on_a_dsred_scenario() -> None:
    # Colours and drop precedences: token-bucket markers, a RIO bottleneck.
    _check("ard-rio-4flows.toml", [], seed=3)


def test_window_counts_with_ecn() -> None:
    _check("fdd-red-s1.toml", ["tcp.ecn=true", "link.bottleneck.queue_ab.ecn=true"], seed=2)
