"""The ARD paper's topology (Hur, Fig. 3) as a scenario builder: ``n`` TCP hosts with per-flow
token-bucket host markers → ingress edge router ``er`` (where ARM/ARD sit) → core ``cr1`` →
RIO bottleneck → ``cr2`` (where the flows end).

``ard_scenario(4)`` and ``ard_scenario(20)`` with the defaults are the paper's Figs. 3(a) and
3(b) as ``scenarios/ard-rio-4flows.toml`` and ``ard-rio-20flows.toml`` write them (plus the
edge marker for ``scheme`` "arm"/"ard"); the keyword arguments are the conditions the paper
leaves open, which the ``ard`` experiment varies.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from qoslab.scenario import Scenario

#: The schemes of Table 1: no edge marker, the Adaptive Regulating Marker, the ARD marker.
SCHEMES = ("rio", "arm", "ard")
CONTRACT_BPS = 250_000
FAIR_SHARE_BPS = 300_000
#: One-way delays that are not the access link's: edge 1 ms + bottleneck 5 ms.
FIXED_ONE_WAY_MS = 6.0


def paper_rtts_ms(n: int) -> list[float]:
    """The paper's RTTs: 26, 28, 30, 32 ms for 4 flows; 26.4 + 0.4·i ms for 20 (and, for other
    ``n``, the 20-flow rule)."""
    if n == 4:
        return [26.0, 28.0, 30.0, 32.0]
    return [26.4 + 0.4 * i for i in range(n)]


def spread_rtts_ms(n: int, ratio: float, smallest_ms: float = 26.0) -> list[float]:
    """``n`` RTTs spread evenly from ``smallest_ms`` to ``ratio`` times that."""
    if n == 1:
        return [smallest_ms]
    return [smallest_ms * (1.0 + (ratio - 1.0) * i / (n - 1)) for i in range(n)]


def rio_queue(n: int) -> dict[str, Any]:
    """The paper's RIO-C bottleneck queue: the Fig. 3(a) set for 4 flows, Fig. 3(b) for 20, and
    for any other ``n`` the 20-flow set scaled by n/20 (so the 4-flow point stays close to
    Fig. 3(a): 80 packets, 36/48, 16/32 instead of 100, 45/60, 20/40)."""
    if n == 4:
        limit, i_lo, i_hi, o_lo, o_hi = 100, 45.0, 60.0, 20.0, 40.0
    elif n == 20:
        limit, i_lo, i_hi, o_lo, o_hi = 400, 180.0, 240.0, 80.0, 160.0
    else:
        k = n / 20.0
        limit = max(10, round(400 * k))
        i_lo, i_hi, o_lo, o_hi = 180 * k, 240 * k, 80 * k, 160 * k
    return {
        "type": "rio",
        "mode": "coupled",
        "limit": f"{limit}pkts",
        "w_q": 0.002,
        "in": {"min_th": i_lo, "max_th": i_hi, "max_p": 0.02},
        "out": {"min_th": o_lo, "max_th": o_hi, "max_p": 0.05},
    }


def _ms(x: float) -> str:
    return f"{x:.6g}ms"


def ard_scenario(
    n: int,
    scheme: str = "rio",
    *,
    rtts_ms: Sequence[float] | None = None,
    host_cbs_bytes: int = 10_000,
    start: str = "uniform(0s, 1s)",
    duration_s: float = 200.0,
    window: int = 20,
    ard: dict[str, Any] | None = None,
    rio: dict[str, Any] | None = None,
    interval: str = "1s",
    measure_s: tuple[float, float] | None = None,
    name: str | None = None,
) -> Scenario:
    """The ARD topology with ``n`` flows under ``scheme`` ("rio", "arm" or "ard").

    ``rtts_ms``: round-trip propagation delays (default the paper's); ``host_cbs_bytes``: the
    host markers' bucket depth (the paper does not give it; 10 packets by default);
    ``start``: the flows' start time ("0s" starts them in phase); ``window``: TCP's maximum
    window (ns-2's default 20); ``ard``: extra ARM/ARD parameters (``bucket``, ``t_rd``, ...);
    ``measure_s``: the measurement window (start, end) in seconds, by default the second half
    of the run (the paper's "second 100 sec time interval"). The bottleneck is 0.3·n Mbps (the
    paper's 1.2 and 6 Mbps), TPR_max its bandwidth."""
    if scheme not in SCHEMES:
        raise ValueError(f"unknown scheme {scheme!r} (expected one of {', '.join(SCHEMES)})")
    rtts = list(rtts_ms) if rtts_ms is not None else paper_rtts_ms(n)
    if len(rtts) != n:
        raise ValueError(f"{len(rtts)} RTTs for {n} flows")
    access = [r / 2.0 - FIXED_ONE_WAY_MS for r in rtts]
    if min(access) <= 0:
        raise ValueError(f"RTTs must exceed {2 * FIXED_ONE_WAY_MS} ms, got {min(rtts)} ms")
    bottleneck_bps = 300_000 * n
    queue = {**rio_queue(n), **(rio or {})}
    m_start, m_end = measure_s if measure_s is not None else (duration_s / 2.0, duration_s)
    if not 0.0 <= m_start < m_end <= duration_s:
        raise ValueError(f"measurement window {m_start:g}-{m_end:g} s outside the {duration_s:g} s run")
    table: dict[str, Any] = {
        "name": name or f"ard-{n}flows-{scheme}",
        "description": (
            f"{n} TCP Reno flows, 250 kbps host markers, {bottleneck_bps / 1e6:g} Mbps RIO-C bottleneck, "
            f"edge scheme {scheme.upper()} (Hur, Fig. 3)"
        ),
        "duration": f"{duration_s:g}s",
        "seed": 1,
        "tcp": {"packet_size": "1000B", "window": window},
        "measurement": {
            "start": f"{m_start:g}s",
            "end": f"{m_end:g}s",
            "interval": interval,
            "bottleneck": "bottleneck",
        },
        "node": [{"name": "h{i}", "count": n}, {"name": "er"}, {"name": "cr1"}, {"name": "cr2"}],
        "link": [
            {
                "name": "access{i}",
                "count": n,
                "a": "h{i}",
                "b": "er",
                "bandwidth": "10Mbps",
                "delay": [_ms(d) for d in access],
                "queue": {"type": "droptail", "limit": "100pkts"},
            },
            {
                "name": "edge",
                "a": "er",
                "b": "cr1",
                "bandwidth": "10Mbps" if n <= 4 else "100Mbps",
                "delay": "1ms",
                "queue": {"type": "droptail", "limit": "100pkts"},
            },
            {
                "name": "bottleneck",
                "a": "cr1",
                "b": "cr2",
                "bandwidth": f"{bottleneck_bps}bps",
                "delay": "5ms",
                "queue_ab": queue,
                "queue_ba": {"type": "droptail", "limit": queue["limit"]},
            },
        ],
        "flow": [{"name": "tcp{i}", "count": n, "src": "h{i}", "dst": "cr2", "start": start}],
        "conditioner": [
            {
                "name": "host{i}",
                "count": n,
                "link": "access{i}",
                "classify": "flow:tcp{i}",
                "meter": {"type": "token_bucket", "cir": "250kbps", "cbs": f"{host_cbs_bytes}B"},
                "green": "AF11",
                "yellow": "AF12",
            }
        ],
    }
    if scheme != "rio":
        meter: dict[str, Any] = {"type": scheme, "tpr_max": f"{bottleneck_bps}bps"}
        meter.update(ard or {})
        if scheme == "arm":
            meter.pop("p_drop", None)
        table["conditioner"].append({"name": scheme, "link": "edge", "meter": meter})
    return Scenario.from_table(table, f"ard_scenario(n={n}, scheme={scheme!r})")
