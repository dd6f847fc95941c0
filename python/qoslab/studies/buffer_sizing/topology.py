"""The buffer-sizing dumbbell as a scenario builder: ``n`` long-lived TCP senders ``s{i}`` →
router ``r1`` → drop-tail bottleneck of rate C → ``r2`` → receivers ``d{i}``, one bulk flow per
pair, their round-trip propagation delays spread evenly over ``[rtt_lo, rtt_hi]`` and their
starts spread uniformly over the first seconds (desynchronised starts).

Every per-flow item is one ``count`` group with a per-member list (the access delays), so the
scenario's size grows with ``n`` by one list, not by ``n`` tables: the generator is the same at
10 and at 50,000 flows.
"""

from __future__ import annotations

import math
from typing import Any

from qoslab.scenario import Scenario

#: one-way delays that are not the access link's: bottleneck 5 ms + exit 1 ms
FIXED_ONE_WAY_MS = 6.0
PACKET_BYTES = 1000
#: each access link runs at this many fair shares (C / n): fast enough never to be a flow's
#: bottleneck, and the propagation lines the memory budget counts stay 20 × C × delay at any n
ACCESS_SHARES = 20
#: the smallest queue an access or exit link is given, in packets
ACCESS_QUEUE_FLOOR_PKTS = 100
#: from this many flows on, the per-flow series are sampled every 10 s, not every second: the
#: series' rows (flows × intervals) are what the memory budget counts most at 50,000 flows
COARSE_FROM_N = 5000


def rtts_ms(n: int, lo: float, hi: float) -> list[float]:
    """``n`` round-trip propagation delays spread evenly from ``lo`` to ``hi`` ms."""
    if n == 1:
        return [(lo + hi) / 2.0]
    return [lo + (hi - lo) * i / (n - 1) for i in range(n)]


def rtt_of(reading: str, rtts: list[float]) -> float:
    """The RTT the rule RTT × C / √n is sized with, in ms, under ``reading``: "mean" (the paper's
    words: "the average round-trip time of a flow passing across the link"), "harmonic" (the
    harmonic mean, which weights the flows by their share of a Reno link) or "max"."""
    if reading == "mean":
        return sum(rtts) / len(rtts)
    if reading == "harmonic":
        return len(rtts) / sum(1.0 / r for r in rtts)
    if reading == "max":
        return max(rtts)
    raise ValueError(f"unknown RTT reading {reading!r} (known: mean, harmonic, max)")


def bdp_pkts(rate_bps: float, rtt_ms: float) -> float:
    """RTT × C in packets of :data:`PACKET_BYTES`."""
    return rate_bps * rtt_ms / 1000.0 / 8.0 / PACKET_BYTES


def rule_pkts(rate_bps: float, rtt_ms: float, n: int) -> float:
    """The paper's buffer RTT × C / √n, in packets."""
    return bdp_pkts(rate_bps, rtt_ms) / math.sqrt(n)


def access_queue_pkts(access_bps: float, rtt_hi_ms: float) -> int:
    """The queue of an access or exit link: a round trip of the longest RTT at the link's rate
    (RTT × C for that link), at least :data:`ACCESS_QUEUE_FLOOR_PKTS` packets."""
    return max(ACCESS_QUEUE_FLOOR_PKTS, math.ceil(bdp_pkts(access_bps, rtt_hi_ms)))


def _ms(x: float) -> str:
    return f"{x:.6g}ms"


def buffer_scenario(
    n: int,
    buffer_pkts: int,
    *,
    rate_bps: float,
    rtt_lo_ms: float = 60.0,
    rtt_hi_ms: float = 140.0,
    duration_s: float = 40.0,
    measure_from_s: float = 10.0,
    start_spread_s: float = 5.0,
    tcp: dict[str, Any] | None = None,
    name: str = "buffer-sizing",
    seed: int = 1,
    interval_s: float | None = None,
) -> Scenario:
    """The dumbbell of ``n`` flows through a ``buffer_pkts``-packet drop-tail bottleneck of
    ``rate_bps``; the access links run at :data:`ACCESS_SHARES` fair shares (never a flow's
    bottleneck once its share is fair) and their queues (and the exit links') hold a round trip
    of the longest RTT at that rate (:func:`access_queue_pkts`): a flow whose slow start
    overshoots its access link loses the overshoot there, as it would behind a real access
    link, instead of parking it. The bottleneck's reverse queue (the ACKs') holds 10,000
    packets. ``interval_s``: the
    series' sampling interval (default 1 s, 10 s from :data:`COARSE_FROM_N` flows on)."""
    if n < 1 or buffer_pkts < 1:
        raise ValueError(f"buffer-sizing needs n ≥ 1 and a buffer ≥ 1 packet, got n={n}, {buffer_pkts}")
    access_ms = [r / 2.0 - FIXED_ONE_WAY_MS for r in rtts_ms(n, rtt_lo_ms, rtt_hi_ms)]
    if min(access_ms) <= 0:
        raise ValueError(f"an RTT of {rtt_lo_ms} ms is below the fixed path's {2 * FIXED_ONE_WAY_MS} ms")
    access_bps = ACCESS_SHARES * rate_bps / n
    access_bw = f"{access_bps:.6g}bps"
    access_q = {"type": "droptail", "limit": f"{access_queue_pkts(access_bps, rtt_hi_ms)}pkts"}
    ack_q = {"type": "droptail", "limit": "10000pkts"}
    table: dict[str, Any] = {
        "name": name,
        "description": f"{n} long-lived TCP flows, {rate_bps / 1e6:g} Mb/s drop-tail, {buffer_pkts} pkts",
        "duration": f"{duration_s:g}s",
        "seed": seed,
        "tcp": dict(
            tcp or {"variant": "reno", "packet_size": f"{PACKET_BYTES}B", "window": 100000, "syn": False}
        ),
        "measurement": {
            "start": f"{measure_from_s:g}s",
            "end": f"{duration_s:g}s",
            "interval": f"{interval_s or (10.0 if n >= COARSE_FROM_N else 1.0):g}s",
            "bottleneck": "bottleneck",
        },
        "node": [{"name": "s{i}", "count": n}, {"name": "r1"}, {"name": "r2"}, {"name": "d{i}", "count": n}],
        "link": [
            {
                "name": "access{i}",
                "count": n,
                "a": "s{i}",
                "b": "r1",
                "bandwidth": access_bw,
                "delay": [_ms(x) for x in access_ms] if n > 1 else _ms(access_ms[0]),
                "queue": dict(access_q),
            },
            {
                "name": "bottleneck",
                "a": "r1",
                "b": "r2",
                "bandwidth": f"{rate_bps:.6g}bps",
                "delay": "5ms",
                "queue_ab": {"type": "droptail", "limit": f"{buffer_pkts}pkts"},
                "queue_ba": dict(ack_q),
            },
            {
                "name": "exit{i}",
                "count": n,
                "a": "r2",
                "b": "d{i}",
                "bandwidth": access_bw,
                "delay": "1ms",
                "queue": dict(access_q),
            },
        ],
        "flow": [
            {
                "name": "ftp{i}",
                "count": n,
                "src": "s{i}",
                "dst": "d{i}",
                "start": f"uniform(0s, {start_spread_s:g}s)",
            }
        ],
    }
    return Scenario.from_table(table, f"buffer_scenario(n={n}, B={buffer_pkts})")


#: the short-flow line's access link runs at this many times its bottleneck (bursts reach the
#: bottleneck at a rate that scales with it)
SHORT_ACCESS_TIMES = 10
#: the short-flow line's bottleneck holds this many packets: more than any queue the runs reach
#: (the queue's own distribution is measured, not a buffer's losses)
SHORT_LIMIT_PKTS = 100_000


def short_flow_scenario(
    rate_bps: float,
    rtt_ms: float,
    load: float,
    *,
    size_pkts: int,
    duration_s: float,
    measure_from_s: float,
    tcp: dict[str, Any],
    name: str,
    seed: int = 1,
) -> Scenario:
    """Short TCP transfers of ``size_pkts`` packets arriving as a Poisson process at ``load`` of a
    drop-tail bottleneck of ``rate_bps``, over a path of round-trip propagation delay ``rtt_ms``
    (the bottleneck 5 ms each way, the access link the rest), with a buffer no run fills; the
    queue is sampled every millisecond."""
    access_ms = rtt_ms / 2.0 - 5.0
    if access_ms <= 0:
        raise ValueError(f"a short-flow RTT of {rtt_ms} ms is below the bottleneck's own 10 ms")
    big = {"type": "droptail", "limit": f"{SHORT_LIMIT_PKTS}pkts"}
    table: dict[str, Any] = {
        "name": name,
        "description": f"short flows of {size_pkts} packets at load {load:g}, {rate_bps / 1e6:g} Mb/s, "
        f"RTT {rtt_ms:g} ms",
        "duration": f"{duration_s:g}s",
        "seed": seed,
        "tcp": dict(tcp),
        "measurement": {
            "start": f"{measure_from_s:g}s",
            "end": f"{duration_s:g}s",
            "interval": "1ms",
            "bottleneck": "bottleneck",
        },
        "node": [{"name": "src"}, {"name": "r1"}, {"name": "dst"}],
        "link": [
            {
                "name": "access",
                "a": "src",
                "b": "r1",
                "bandwidth": f"{SHORT_ACCESS_TIMES * rate_bps:.6g}bps",
                "delay": _ms(access_ms),
                "queue": dict(big),
            },
            {
                "name": "bottleneck",
                "a": "r1",
                "b": "dst",
                "bandwidth": f"{rate_bps:.6g}bps",
                "delay": "5ms",
                "queue": dict(big),
            },
        ],
        "arrivals": [
            {
                "name": "short",
                "src": "src",
                "dst": "dst",
                "load": load,
                "size": f"{size_pkts * PACKET_BYTES}B",
                "max_active": 100_000,
            }
        ],
    }
    return Scenario.from_table(table, f"short_flow_scenario(C={rate_bps:g}, RTT={rtt_ms:g}, load={load:g})")
