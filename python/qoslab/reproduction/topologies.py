"""Scenario builders for the topologies the papers use, as scenario tables with ``count`` groups."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from qoslab.scenario import Scenario


def red_queue(limit: int, min_th: float, max_th: float, max_p: float, w_q: float = 0.002) -> dict[str, Any]:
    """A RED queue table (packet mode, ns-2 defaults otherwise)."""
    return {
        "type": "red",
        "limit": f"{limit}pkts",
        "min_th": min_th,
        "max_th": max_th,
        "max_p": max_p,
        "w_q": w_q,
    }


def dumbbell(
    n: int,
    *,
    name: str,
    description: str = "",
    duration: str = "20s",
    bottleneck_bandwidth: str = "1Mbps",
    bottleneck_delay: str = "5ms",
    bottleneck_queue: Mapping[str, Any] | None = None,
    reverse_queue: Mapping[str, Any] | None = None,
    access_bandwidth: str = "10Mbps",
    access_delay: str | Sequence[str] = "44ms",
    access_queue: Mapping[str, Any] | None = None,
    exit_delay: str = "1ms",
    tcp: Mapping[str, Any] | None = None,
    measurement: Mapping[str, Any] | None = None,
    start: str = "uniform(0s, 1s)",
    seed: int = 1,
) -> Scenario:
    """``n`` TCP senders ``s{i}`` → router ``r1`` → bottleneck → ``r2`` → receivers ``d{i}``,
    one bulk TCP flow ``ftp{i}`` per pair. ``access_delay`` may give one delay per flow (the
    round-trip propagation delay of flow i is 2·(access_delay_i + bottleneck_delay +
    exit_delay)). The defaults are the FDD-RED paper's scenario 1 as ``scenarios/fdd-red-s1.toml``
    writes it (with 20 s instead of 100 s)."""
    if n < 1:
        raise ValueError(f"a dumbbell needs at least one flow, got {n}")
    if not isinstance(access_delay, str) and len(access_delay) != n:
        raise ValueError(f"access_delay lists {len(access_delay)} delays for {n} flows")
    droptail = {"type": "droptail", "limit": "100pkts"}
    table: dict[str, Any] = {
        "name": name,
        "description": description,
        "duration": duration,
        "seed": seed,
        "tcp": dict(tcp or {"variant": "reno", "packet_size": "500B", "window": 1000}),
        "measurement": dict(
            measurement or {"start": "0s", "end": duration, "interval": "1s", "bottleneck": "bottleneck"}
        ),
        "node": [{"name": "s{i}", "count": n}, {"name": "r1"}, {"name": "r2"}, {"name": "d{i}", "count": n}],
        "link": [
            {
                "name": "access{i}",
                "count": n,
                "a": "s{i}",
                "b": "r1",
                "bandwidth": access_bandwidth,
                "delay": access_delay if isinstance(access_delay, str) else list(access_delay),
                "queue": dict(access_queue or droptail),
            },
            {
                "name": "bottleneck",
                "a": "r1",
                "b": "r2",
                "bandwidth": bottleneck_bandwidth,
                "delay": bottleneck_delay,
                "queue_ab": dict(bottleneck_queue or red_queue(100, 25, 75, 0.01)),
                "queue_ba": dict(reverse_queue or droptail),
            },
            {
                "name": "exit{i}",
                "count": n,
                "a": "r2",
                "b": "d{i}",
                "bandwidth": access_bandwidth,
                "delay": exit_delay,
                "queue": dict(access_queue or droptail),
            },
        ],
        "flow": [{"name": "ftp{i}", "count": n, "src": "s{i}", "dst": "d{i}", "start": start}],
    }
    return Scenario.from_table(table, f"dumbbell(n={n}, name={name!r})")
