"""The scenarios of ``rio-plus-o`` (:mod:`qoslab.studies.rio_plus_o.study`): the bottleneck queue of
each kind and the AS/BE dumbbell of Kim's Sec. 4."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from qoslab.scenario import Scenario
from qoslab.studies.rio_plus_o.paper import BUCKET_SECONDS, IN_CURVE, OUT_CURVE, TOTAL_CURVE


def aqm_queue(
    kind: str, *, limit: int = 250, w_q: float = 0.002, avg_out: dict[str, float] | None = None
) -> dict[str, Any]:
    """The bottleneck queue table: ``kind`` "rio" (RIO-C), "rio_ns2" (RIO-C in ns-2.35 dsRED's
    flavour) or "rio_plus_o" (RI+O; ``avg_out`` replaces its OUT curve, e.g. an inert one)."""
    q: dict[str, Any] = {
        "type": "rio" if kind == "rio_ns2" else kind,
        "limit": f"{limit}pkts",
        "w_q": w_q,
        "mean_pkt_size": "1000B",
        "in": dict(IN_CURVE),
        "out": dict(TOTAL_CURVE),
    }
    if kind in ("rio", "rio_ns2"):
        q["mode"] = "coupled"
        if kind == "rio_ns2":
            q["flavour"] = "ns2"
    elif kind == "rio_plus_o":
        q["avg_out"] = dict(OUT_CURVE if avg_out is None else avg_out)
    else:
        raise ValueError(f"unknown queue kind {kind!r} (expected rio, rio_ns2 or rio_plus_o)")
    return q


def as_be_dumbbell(
    profiles_bps: Sequence[float],
    n_be: int,
    *,
    name: str,
    queue: dict[str, Any],
    bandwidth: str = "10Mbps",
    buckets_bytes: Sequence[float] | None = None,
    window: int = 20,
    duration_s: float = 200.0,
    measure_from_s: float = 100.0,
    interval: str = "1s",
    access_bandwidth: str = "100Mbps",
    cwnd: bool = False,
    seed: int = 1,
) -> Scenario:
    """Assured Service flows ``as{i}`` (one token bucket marker each: IN = AF11, OUT = AF12)
    and best-effort flows ``be{i}`` (unmarked, judged as OUT) over one RIO/RI+O bottleneck,
    every RTT 100 ms (2·(44 + 5 + 1) ms), 1000-byte packets, random starts in the first
    second. ``buckets_bytes`` defaults to ``BUCKET_SECONDS`` of each profile."""
    n_as = len(profiles_bps)
    if n_as + n_be < 1:
        raise ValueError("the scenario needs at least one flow")
    buckets = (
        list(buckets_bytes) if buckets_bytes is not None else [p * BUCKET_SECONDS / 8 for p in profiles_bps]
    )
    droptail = {"type": "droptail", "limit": "1000pkts"}
    nodes: list[dict[str, Any]] = [{"name": "r1"}, {"name": "r2"}]
    links: list[dict[str, Any]] = []
    flows: list[dict[str, Any]] = []
    for grp, n in (("as", n_as), ("be", n_be)):
        if n == 0:
            continue
        nodes += [{"name": f"{grp}{{i}}", "count": n}, {"name": f"{grp}d{{i}}", "count": n}]
        links += [
            {
                "name": f"{grp}_access{{i}}",
                "count": n,
                "a": f"{grp}{{i}}",
                "b": "r1",
                "bandwidth": access_bandwidth,
                "delay": "44ms",
                "queue": droptail,
            },
            {
                "name": f"{grp}_exit{{i}}",
                "count": n,
                "a": "r2",
                "b": f"{grp}d{{i}}",
                "bandwidth": access_bandwidth,
                "delay": "1ms",
                "queue": droptail,
            },
        ]
        flows.append(
            {
                "name": f"{grp}{{i}}",
                "count": n,
                "src": f"{grp}{{i}}",
                "dst": f"{grp}d{{i}}",
                "start": "uniform(0s, 1s)",
            }
        )
    links.append(
        {
            "name": "bottleneck",
            "a": "r1",
            "b": "r2",
            "bandwidth": bandwidth,
            "delay": "5ms",
            "queue_ab": queue,
            "queue_ba": droptail,
        }
    )
    table: dict[str, Any] = {
        "name": name,
        "description": f"{n_as} AS flows + {n_be} BE flows over a {bandwidth} {queue['type']} bottleneck",
        "duration": f"{duration_s:g}s",
        "seed": seed,
        "tcp": {"variant": "reno", "packet_size": "1000B", "window": window},
        "measurement": {
            "start": f"{measure_from_s:g}s",
            "end": f"{duration_s:g}s",
            "interval": interval,
            "bottleneck": "bottleneck",
            "cwnd": cwnd,
        },
        "node": nodes,
        "link": links,
        "flow": flows,
    }
    if n_as:
        table["conditioner"] = [
            {
                "name": "marker{i}",
                "count": n_as,
                "link": "as_access{i}",
                "classify": "flow:as{i}",
                "meter": {
                    "type": "token_bucket",
                    "cir": [f"{p:.0f}bps" for p in profiles_bps],
                    "cbs": [f"{b:.0f}B" for b in buckets],
                },
                "green": "AF11",
                "yellow": "AF12",
            }
        ]
    return Scenario.from_table(table, f"as_be_dumbbell(name={name!r})")
