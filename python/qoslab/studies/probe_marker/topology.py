"""The scenarios of ``probe-marker`` (:mod:`qoslab.studies.probe_marker.study`): the RIO queue and the
probe marker's conditioner, the single bottleneck of Figs. 3-8 and the two domains of Fig. 9."""

from __future__ import annotations

import math
from typing import Any

from qoslab.scenario import Scenario
from qoslab.studies.probe_marker.paper import (
    BOTTLENECK_BPS,
    BOTTLENECK_DELAY_MS,
    DOMAIN1_IN,
    EXIT_DELAY_MS,
    HARD_OUT,
    LIMIT_PKTS,
    MARKERS,
    MEAN_RTT_S,
    P_MAX_IN,
    P_MAX_OUT_SOFT,
    PACKET_BYTES,
    RTT_MAX_MS,
    RTT_MIN_MS,
    STATED_W_Q,
)


def wq_for(packet_bytes: int) -> float:
    """RIO's w_q under a packet-size reading: the formula's value for 1500 B, the stated 0.0012
    otherwise."""
    return w_q() if packet_bytes == PACKET_BYTES else STATED_W_Q


def w_q(packet_bytes: int = PACKET_BYTES, bps: int = BOTTLENECK_BPS, rtt_s: float = MEAN_RTT_S) -> float:
    """The paper's ``w_q = 1 − exp(−M / (C·10·RTT))`` with M the packet size and C the link rate in
    the same unit (M/C is one packet's transmission time): a time constant of ten mean RTTs. With
    1500-byte packets, 6 Mbps and 160 ms it is 0.00125 (the paper: 0.0012)."""
    return 1.0 - math.exp(-(packet_bytes * 8.0 / bps) / (10.0 * rtt_s))


def rtts_ms(n: int) -> list[float]:
    """Round-trip propagation delays evenly spread over 124-198 ms (mean 161 ms)."""
    if n == 1:
        return [(RTT_MIN_MS + RTT_MAX_MS) / 2]
    return [RTT_MIN_MS + (RTT_MAX_MS - RTT_MIN_MS) * i / (n - 1) for i in range(n)]


def rio_queue(
    min_in: float, out: tuple[float, float, float] | None, limit: int = LIMIT_PKTS, wq: float | None = None
) -> dict[str, Any]:
    """A coupled RIO queue (Clark & Fang): IN (min_in, 3·min_in, 0.1) judged on the IN average,
    OUT ``out`` = (min, max, P_max) on the total average; ``out`` None: soft differentiation.
    ``wq`` defaults to :func:`w_q`."""
    o = out if out is not None else (min_in / 3.0, float(min_in), P_MAX_OUT_SOFT)
    return {
        "type": "rio",
        "mode": "coupled",
        "limit": f"{limit}pkts",
        "w_q": w_q() if wq is None else wq,
        "in": {"min_th": float(min_in), "max_th": 3.0 * min_in, "max_p": P_MAX_IN},
        "out": {"min_th": o[0], "max_th": o[1], "max_p": o[2]},
    }


def _probe_conditioner(n: int, increase: str, link: str = "access{i}") -> dict[str, Any]:
    return {
        "name": "probe{i}",
        "count": n,
        "link": link,
        "classify": "flow:ftp{i}",
        "scope": "per_flow",
        "meter": {"type": "probe", "alpha": 0.5, "a0": 10.0, "increase": increase},
        "green": "AF11",
        "yellow": "AF12",
    }


def _increase(marker: str) -> str | None:
    return {"none": None, "probe": "double_plus_one", "probe_plus_one": "plus_one"}[marker]


def _base_table(
    name: str, description: str, duration_s: float, start_s: float, packet_bytes: int = PACKET_BYTES
) -> dict[str, Any]:
    return {
        "name": name,
        "description": description,
        "duration": f"{duration_s:g}s",
        "seed": 1,
        "tcp": {"variant": "reno", "packet_size": f"{packet_bytes}B", "window": 10000},
        "measurement": {
            "start": f"{start_s:g}s",
            "end": f"{duration_s:g}s",
            "interval": "1s",
            "bottleneck": "bottleneck",
        },
    }


def _big_droptail() -> dict[str, Any]:
    return {"type": "droptail", "limit": f"{LIMIT_PKTS}pkts"}


def _bottleneck_and_exit(n: int, queue: dict[str, Any]) -> list[dict[str, Any]]:
    """The 6 Mbps bottleneck r1→r2 with ``queue`` and the exit links r2→d{i}."""
    return [
        {
            "name": "bottleneck",
            "a": "r1",
            "b": "r2",
            "bandwidth": "6Mbps",
            "delay": f"{BOTTLENECK_DELAY_MS:g}ms",
            "queue_ab": queue,
            "queue_ba": _big_droptail(),
        },
        {
            "name": "exit{i}",
            "count": n,
            "a": "r2",
            "b": "d{i}",
            "bandwidth": "100Mbps",
            "delay": f"{EXIT_DELAY_MS:g}ms",
            "queue": _big_droptail(),
        },
    ]


def single_bottleneck(
    n: int,
    marker: str,
    min_in: float,
    diff: str,
    *,
    duration_s: float = 1000.0,
    start_s: float = 50.0,
    onoff_s: float | None = None,
    packet_bytes: int = PACKET_BYTES,
    wq: float | None = None,
    yellow: str = "AF12",
) -> Scenario:
    """Fig. 2: ``n`` TCP Reno senders, each behind its own ingress (access) link where the marker
    runs per flow, share a 6 Mbps RIO bottleneck r1 → r2. ``marker`` "none" sends every packet
    as AF11 (IN). ``onoff_s``: add an exponential ON/OFF UDP source (3 Mbps peak, equal mean on
    and off times), its packets IN. ``packet_bytes``: the packet-size reading (RIO's w_q defaults
    to :func:`wq_for` it); ``yellow``: the probes' codepoint (``"AF11"``: the mechanism disabled,
    the probes leave IN)."""
    out = HARD_OUT if diff == "hard" else None
    name = f"probe-{marker}-n{n}-{diff}-min{min_in:g}" + (f"-onoff{onoff_s:g}" if onoff_s else "")
    if packet_bytes != PACKET_BYTES:
        name += f"-{packet_bytes}B"
    t = _base_table(
        name,
        f"{n} TCP Reno flows, RTT 124-198 ms, 6 Mbps RIO bottleneck ({diff}, min_in {min_in:g}), "
        f"{MARKERS[marker]}" + (f", ON/OFF UDP {onoff_s:g} s" if onoff_s else ""),
        duration_s,
        start_s,
        packet_bytes,
    )
    access = [f"{r / 2 - BOTTLENECK_DELAY_MS - EXIT_DELAY_MS:.4f}ms" for r in rtts_ms(n)]
    nodes: list[dict[str, Any]] = [
        {"name": "s{i}", "count": n},
        {"name": "r1"},
        {"name": "r2"},
        {"name": "d{i}", "count": n},
    ]
    links: list[dict[str, Any]] = [
        {
            "name": "access{i}",
            "count": n,
            "a": "s{i}",
            "b": "r1",
            "bandwidth": "100Mbps",
            "delay": access,
            "queue": _big_droptail(),
        },
        *_bottleneck_and_exit(n, rio_queue(min_in, out, wq=wq_for(packet_bytes) if wq is None else wq)),
    ]
    flows: list[dict[str, Any]] = [
        {"name": "ftp{i}", "count": n, "src": "s{i}", "dst": "d{i}", "start": "uniform(0s, 1s)"}
    ]
    inc = _increase(marker)
    if inc is None:
        flows[0]["dscp"] = 10
    if onoff_s:
        nodes += [{"name": "u"}, {"name": "ud"}]
        links += [
            {
                "name": "uaccess",
                "a": "u",
                "b": "r1",
                "bandwidth": "100Mbps",
                "delay": "5ms",
                "queue": _big_droptail(),
            },
            {
                "name": "uexit",
                "a": "r2",
                "b": "ud",
                "bandwidth": "100Mbps",
                "delay": "1ms",
                "queue": _big_droptail(),
            },
        ]
        flows.append(
            {
                "name": "udp",
                "type": "onoff",
                "src": "u",
                "dst": "ud",
                "rate": "3Mbps",
                "on": f"{onoff_s:g}s",
                "off": f"{onoff_s:g}s",
                "packet_size": f"{packet_bytes}B",
                "dscp": 10,
                "start": "uniform(0s, 1s)",
            }
        )
    t["node"], t["link"], t["flow"] = nodes, links, flows
    if inc is not None:
        t["conditioner"] = [{**_probe_conditioner(n, inc), "yellow": yellow}]
        if yellow != "AF12":
            name += f"-probes-{yellow}"
            t["name"] = name
    return Scenario.from_table(t, f"probe_marker.single_bottleneck({name})")


def two_domains(
    n: int,
    out: tuple[float, float, float],
    min_th: float,
    *,
    duration_s: float = 1000.0,
    start_s: float = 50.0,
    packet_bytes: int = PACKET_BYTES,
    domain1_mbps: float = 10.0,
) -> Scenario:
    """Fig. 9: ``n`` marked flows ``ftp{i}`` cross domain 1 (ingress markers, then a
    ``domain1_mbps`` link r0 → r1 with RIO IN 100/300/0.1 and OUT ``out``) and meet ``n`` unmarked
    best-effort flows ``free{i}`` at domain 2's 6 Mbps RED bottleneck r1 → r2 (min_th, 3·min_th,
    0.1), which does not tell IN from OUT. w_q: :func:`wq_for` the packet size."""
    name = f"probe-2dom-n{n}-out{out[0]:g}-{out[1]:g}-{out[2]:g}-min{min_th:g}"
    if packet_bytes != PACKET_BYTES:
        name += f"-{packet_bytes}B"
    if domain1_mbps != 10:
        name += f"-d1-{domain1_mbps:g}Mbps"
    t = _base_table(
        name,
        f"{n} marked + {n} free TCP flows, domain-1 RIO OUT {out} on {domain1_mbps:g} Mbps, domain-2 RED "
        f"min_th {min_th:g}",
        duration_s,
        start_s,
        packet_bytes,
    )
    wq = wq_for(packet_bytes)
    r = rtts_ms(n)
    # Marked flows cross one more link (r0 → r1, 1 ms): their access delay is 1 ms shorter.
    acc_m = [f"{x / 2 - BOTTLENECK_DELAY_MS - EXIT_DELAY_MS - 1.0:.4f}ms" for x in r]
    acc_f = [f"{x / 2 - BOTTLENECK_DELAY_MS - EXIT_DELAY_MS:.4f}ms" for x in r]
    q1 = {
        "type": "rio",
        "mode": "coupled",
        "limit": f"{LIMIT_PKTS}pkts",
        "w_q": wq,
        "in": {"min_th": DOMAIN1_IN[0], "max_th": DOMAIN1_IN[1], "max_p": DOMAIN1_IN[2]},
        "out": {"min_th": out[0], "max_th": out[1], "max_p": out[2]},
    }
    q2 = {
        "type": "red",
        "limit": f"{LIMIT_PKTS}pkts",
        "min_th": float(min_th),
        "max_th": 3.0 * min_th,
        "max_p": P_MAX_IN,
        "w_q": wq,
    }
    t["node"] = [
        {"name": "s{i}", "count": n},
        {"name": "f{i}", "count": n},
        {"name": "r0"},
        {"name": "r1"},
        {"name": "r2"},
        {"name": "d{i}", "count": n},
        {"name": "g{i}", "count": n},
    ]
    t["link"] = [
        {
            "name": "access{i}",
            "count": n,
            "a": "s{i}",
            "b": "r0",
            "bandwidth": "100Mbps",
            "delay": acc_m,
            "queue": _big_droptail(),
        },
        {
            "name": "domain1",
            "a": "r0",
            "b": "r1",
            "bandwidth": f"{domain1_mbps:g}Mbps",
            "delay": "1ms",
            "queue_ab": q1,
            "queue_ba": _big_droptail(),
        },
        {
            "name": "faccess{i}",
            "count": n,
            "a": "f{i}",
            "b": "r1",
            "bandwidth": "100Mbps",
            "delay": acc_f,
            "queue": _big_droptail(),
        },
        *_bottleneck_and_exit(n, q2),
        {
            "name": "fexit{i}",
            "count": n,
            "a": "r2",
            "b": "g{i}",
            "bandwidth": "100Mbps",
            "delay": f"{EXIT_DELAY_MS:g}ms",
            "queue": _big_droptail(),
        },
    ]
    t["flow"] = [
        {"name": "ftp{i}", "count": n, "src": "s{i}", "dst": "d{i}", "start": "uniform(0s, 1s)"},
        {"name": "free{i}", "count": n, "src": "f{i}", "dst": "g{i}", "start": "uniform(0s, 1s)", "dscp": 10},
    ]
    t["conditioner"] = [_probe_conditioner(n, "double_plus_one")]
    return Scenario.from_table(t, f"probe_marker.two_domains({name})")
