"""The TCP variants' constants as scenario keys (`tcp.cc.cubic.{c, beta}`, `tcp.cc.dctcp.g`,
`tcp.cc.bbr.{high_gain, cwnd_gain}`): each reaches the sender. Stating a constant's default
changes nothing, bit for bit; another value changes what the run measures. (The closed forms
of β, C and g are pinned in the core's cubic.rs and dctcp.rs tests; the parsing and the errors
in scenario/tests.rs.)"""

from __future__ import annotations

import pytest

import qoslab
from conftest import ROOT

EXAMPLES = ROOT / "scenarios" / "examples"


def _measured(sc: qoslab.Scenario) -> list[float]:
    """Per flow: throughput, retransmissions; per link direction: early drops and ECN marks;
    the queue length summed over the run's samples (BBR's gains move the queue, not the rate)."""
    r = qoslab.run(sc.with_overrides(["duration=10s", "measurement.start=2s"]), 1)
    cols = [
        r.flows["throughput_bps"],
        r.flows["retransmitted_packets"],
        r.links["early_drops"],
        r.links["marks"],
    ]
    return [float(v) for c in cols for v in c] + [float(r.series_queue["queue_packets"].sum())]


@pytest.mark.parametrize(
    ("example", "key", "default", "other"),
    [
        ("codel-cubic.toml", "tcp.cc.cubic.beta", 0.7, 0.5),
        ("codel-cubic.toml", "tcp.cc.cubic.c", 0.4, 0.1),
        ("step-dctcp.toml", "tcp.cc.dctcp.g", 0.0625, 0.5),
        ("bbr.toml", "tcp.cc.bbr.high_gain", 2.885390081777927, 2.0),
        ("bbr.toml", "tcp.cc.bbr.cwnd_gain", 2.0, 1.2),
    ],
)
def test_a_constant_reaches_the_sender(example: str, key: str, default: float, other: float) -> None:
    sc = qoslab.load_scenario(EXAMPLES / example)
    base = _measured(sc)
    assert _measured(sc.with_overrides([f"{key}={default}"])) == base
    assert _measured(sc.with_overrides([f"{key}={other}"])) != base
