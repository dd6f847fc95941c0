"""The linux transport flavour in whole scenarios (its model: docs/models/tcp-linux.md; its
validation against the kernel: docs/validation/linux.md and tests/test_validate_linux.py)."""

from __future__ import annotations

import qoslab
from conftest import SCENARIOS


def test_counters_of_reused_arrival_slots_only_grow():
    """An [[arrivals]] slot runs one connection after another with a new sender each time and
    its counters running on: the measurement window's counts are differences of those, so a
    counter copied from the fresh sender (back to 0) underflowed to 2^64 - 4 and the store
    refused the run (modern-aqm, PIE, Reno, linux flavour). Every window count is at most its
    run's total."""
    sc = qoslab.load_scenario(SCENARIOS / "mixed-traffic.toml").with_overrides(
        [
            'tcp.flavour="linux"',
            'link.bottleneck.queue_ab={ type = "pie", limit = "200pkts" }',
            "duration=20s",
            "measurement.start=5s",
            "measurement.end=20s",
        ]
    )
    flows = qoslab.run(sc, 1).flows
    web = flows[flows["name"] == "web"]
    assert len(web) == 1 and int(web["fast_retransmits"].iloc[0]) > 0
    for col in ("fast_retransmits", "timeouts", "retransmitted_packets"):
        assert (flows[f"window_{col}"] <= flows[col]).all(), flows[["name", col, f"window_{col}"]]
