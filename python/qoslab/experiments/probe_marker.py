"""``probe-marker``: the adaptive low-priority (probe) marker of Neglia, Bianchi, Saitta and
Lombardo against an all-IN baseline on a RIO bottleneck
(``../shared/papers/neglia-adaptive-probe-marker.md``).

What it reproduces:

- Figs. 3-6: performance frontiers (mean queueing delay against goodput utilisation) of the
  marker and of no marker (every packet IN), 10 and 40 TCP Reno flows, soft and hard
  differentiation, RIO min_in from 2 to 80 packets;
- the share of packets marked IN (paper: about 98-99 % with 10 flows, 94-97 % with 40);
- Fig. 7: loss percentage overall, IN and OUT, 10 flows;
- the A_IN + 1 increase rule beside the default 2·A_IN + 1;
- Fig. 8: an ON/OFF UDP source (3 Mbps peak, equal mean on and off times 0.05, 1, 5 s), 10 flows,
  hard differentiation;
- Fig. 9: two domains: 10 or 40 marked flows (domain 1: RIO with IN 100/300 and three OUT
  settings) and as many unmarked flows share a best-effort RED bottleneck in domain 2.

Scenario (Sec. 3): one 6 Mbps bottleneck, RTTs evenly spread over 124-198 ms, starts uniform in
[0, 1] s, 1000 s runs measured after 50 s. What the paper leaves open is run as named readings
side by side (packet size 1500 B and 1000 B; Clark & Fang's RIO and ns-2.35 dsRED's; Fig. 9's
domain-1 link), with one verdict per claim and reading (``_verdicts``); see ``NOTES`` and
``docs/experiments/probe-marker.md``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, cast

import numpy as np
import pandas as pd

from qoslab.experiments.base import Experiment, Options, Reference, Sweep, Window, register
from qoslab.experiments.runner import Context, select
from qoslab.ns2.flavour import ns2_flavoured
from qoslab.report.figures import Line, Panel, panels
from qoslab.report.frames import typed_rows
from qoslab.runs.simulate import Result
from qoslab.scenario import Scenario
from qoslab.stats import estimate, paired
from qoslab.verdicts import Claim

PAPER = (
    'G. Neglia, G. Bianchi, F. Saitta, D. Lombardo, "Adaptive low priority packet marking for '
    'better TCP performance" (`../shared/papers/neglia-adaptive-probe-marker.md`)'
)

BOTTLENECK_BPS = 6_000_000
#: Packet size on the wire (bytes). The paper does not give it; 1500 B makes its w_q formula give
#: its stated 0.0012 (see :func:`w_q`).
PACKET_BYTES = 1500
RTT_MIN_MS, RTT_MAX_MS = 124.0, 198.0
MEAN_RTT_S = 0.160
BOTTLENECK_DELAY_MS, EXIT_DELAY_MS = 10.0, 1.0
P_MAX_IN = 0.1
#: Hard differentiation: fixed OUT thresholds (min_out, max_out, P_max_out).
HARD_OUT = (2.0, 6.0, 0.2)
P_MAX_OUT_SOFT = 0.2
#: A physical buffer no RIO setting reaches (max_in ≤ 240 packets).
LIMIT_PKTS = 2000
MIN_IN = (2, 4, 6, 10, 15, 20, 30, 40, 60, 80)
MIN_IN_QUICK = (2, 15, 80)
FLOWS = (10, 40)
MARKERS = {
    "none": "no marker (all IN)",
    "probe": "probe marker, A_IN ← 2·A_IN + 1",
    "probe_plus_one": "probe marker, A_IN ← A_IN + 1",
}
ONOFF_TIMES_S = (0.05, 1.0, 5.0)
#: The packet size is the one thing the paper leaves open that flips a verdict (40 flows). Two
#: readings, run side by side in every sweep but the ns-2 flavour's: 1500 B, with which the
#: paper's w_q formula gives its stated 0.0012, and 1000 B (ns-2's default TCP packet, the
#: paper's simulator) with the stated w_q = 0.0012 (the formula would give 0.00083).
PACKETS = (1500, 1000)
STATED_W_Q = 0.0012
PACKET_READINGS = {1500: "1500 B packets", 1000: "1000 B packets"}
PACKET_SUPPORT = {
    1500: "the only packet size with which the paper's formula w_q = 1 − exp(−M/(C·10·RTT)) gives its "
    "stated 0.0012 (0.00125)",
    1000: "ns-2 v2.1b8's default TCP packet (the paper's simulator, Sec. 3); w_q taken as stated (0.0012), "
    "not from the formula (0.00083)",
}
#: Fig. 9: the domain-1 link's capacity (not given): 10 Mbps, or as fast as the bottleneck.
DOMAIN1_MBPS = (10, 6)
#: Fig. 9: domain 1's OUT settings (min_out, max_out, P_max_out); IN is 100/300.
DOMAIN1_OUT = ((30.0, 90.0, 0.2), (2.0, 6.0, 0.2), (0.1, 0.3, 1.0))
DOMAIN1_IN = (100.0, 300.0, P_MAX_IN)
MIN_TH_DOMAIN2 = (4, 10, 20, 40, 80)
MIN_TH_DOMAIN2_QUICK = (10, 40)

METRIC_FN = "qoslab.experiments.probe_marker:probe_metrics"
METRICS = (
    "goodput_util",
    "goodput_util_marked",
    "goodput_util_free",
    "delay_ms",
    "little_delay_ms",
    "in_share",
    "loss_pct",
    "loss_in_pct",
    "loss_out_pct",
    "overflow_drops",
    "timeouts_per_flow",
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
        {
            "name": "bottleneck",
            "a": "r1",
            "b": "r2",
            "bandwidth": "6Mbps",
            "delay": f"{BOTTLENECK_DELAY_MS:g}ms",
            "queue_ab": rio_queue(min_in, out, wq=wq_for(packet_bytes) if wq is None else wq),
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
        {
            "name": "bottleneck",
            "a": "r1",
            "b": "r2",
            "bandwidth": "6Mbps",
            "delay": f"{BOTTLENECK_DELAY_MS:g}ms",
            "queue_ab": q2,
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


# -- metrics ---------------------------------------------------------------------------------------


def probe_metrics(res: Result) -> dict[str, float]:
    """The frontier metrics of one run, over the measurement window at the bottleneck (r1 → r2):

    - ``goodput_util``: the TCP flows' goodput over the bottleneck rate (``_marked``: the flows
      named ``ftp*``; ``_free``: ``free*``, Fig. 9);
    - ``delay_ms``: mean waiting time before transmission of the packets admitted at the
      bottleneck in the window (exact, per packet; transmission and propagation excluded);
    - ``little_delay_ms``: the same from Little's law, time-averaged sampled queue (1 s samples)
      over the admission rate (a cross-check);
    - ``in_share``: IN (AF11) share of the packets arriving at the bottleneck;
    - ``loss_pct``, ``loss_in_pct``, ``loss_out_pct``: bottleneck drops over arrivals (%);
    - ``overflow_drops`` (buffer overflows over the whole run, expected 0), ``timeouts_per_flow``.
    """
    links = res.links
    b = links[(links["link_name"] == "bottleneck") & (links["direction"] == "ab")].iloc[0]
    m = res.scenario.resolved["measurement"]
    window_s = (m["end_ns"] - m["start_ns"]) / 1e9
    f = res.flows
    tcp = f[f["name"].str.startswith(("ftp", "free"))]
    marked = f[f["name"].str.startswith("ftp")]
    free = f[f["name"].str.startswith("free")]
    arr_in, arr_out = float(b["window_arrivals_prec0"]), float(b["window_arrivals_prec1"])
    arr_be = float(b["window_arrivals_prec2"])
    drop_in, drop_out = float(b["window_drops_prec0"]), float(b["window_drops_prec1"])
    drop_be = float(b["window_drops_prec2"])
    arr = arr_in + arr_out + arr_be
    nan = float("nan")
    q = res.series_queue
    w0, w1 = m["start_ns"] / 1e9, m["end_ns"] / 1e9
    inq = q[(q["queue"] == "bottleneck:ab") & (q["time_s"] > w0) & (q["time_s"] <= w1)]
    adm_pps = float(b["window_admitted"]) / window_s
    return {
        "goodput_util": float(tcp["goodput_bps"].sum()) / BOTTLENECK_BPS,
        "goodput_util_marked": float(marked["goodput_bps"].sum()) / BOTTLENECK_BPS,
        "goodput_util_free": float(free["goodput_bps"].sum()) / BOTTLENECK_BPS if len(free) else nan,
        "delay_ms": float(b["window_wait_ns"]) / float(b["window_admitted"]) / 1e6
        if b["window_admitted"]
        else nan,
        "little_delay_ms": float(inq["queue_packets"].mean()) / adm_pps * 1e3
        if len(inq) and adm_pps
        else nan,
        "in_share": arr_in / (arr_in + arr_out) if arr_out > 0 or arr_in > 0 else nan,
        "loss_pct": 100.0 * (drop_in + drop_out + drop_be) / arr if arr else nan,
        "loss_in_pct": 100.0 * drop_in / arr_in if arr_in else nan,
        "loss_out_pct": 100.0 * drop_out / arr_out if arr_out else nan,
        "overflow_drops": float(b["overflow_drops"]),
        "timeouts_per_flow": float(tcp["timeouts"].mean()),
        "window_s": window_s,
    }


class _Point:  # a frontier point's columns read by frontier_gap
    goodput_util: float
    delay_ms: float


def frontier_gap(marker: pd.DataFrame, none: pd.DataFrame) -> pd.DataFrame:
    """For each marker point (columns ``goodput_util``, ``delay_ms``): the no-marker frontier's
    delay at the same utilisation (linear interpolation between the no-marker points sorted by
    utilisation; NaN outside their range), the difference (negative: the marker's frontier lies
    below), and whether some no-marker point dominates it (as much utilisation or more with no more
    delay)."""
    nm = none.sort_values("goodput_util")
    xs, ys = nm["goodput_util"].to_numpy(float), nm["delay_ms"].to_numpy(float)
    # the frontier: keep it monotone (a point with more delay and less utilisation is off it)
    rows = []
    for r in typed_rows(marker, _Point):
        u, d = float(r.goodput_util), float(r.delay_ms)
        interp = float(np.interp(u, xs, ys)) if xs.size and xs[0] <= u <= xs[-1] else float("nan")
        dominated = bool(((xs >= u) & (ys <= d)).any())
        rows.append(
            {
                "goodput_util": u,
                "delay_ms": d,
                "none_delay_ms": interp,
                "delay_diff_ms": d - interp,
                "dominated": dominated,
            }
        )
    out = pd.DataFrame(rows, index=marker.index)
    return pd.concat([marker.drop(columns=["goodput_util", "delay_ms"]), out], axis=1)


# -- plan ------------------------------------------------------------------------------------------


def _frontier_points(
    flows: Sequence[int], diffs: Sequence[str], markers: Sequence[str], min_in: Sequence[float], **kw: Any
) -> list[tuple[dict[str, Any], Scenario]]:
    pts = []
    for n in flows:
        for mk in markers:
            for diff in diffs if mk != "none" else ("all_in",):
                for mi in min_in:
                    sc = single_bottleneck(n, mk, mi, diff if mk != "none" else "hard", **kw)
                    pb = int(kw.get("packet_bytes", PACKET_BYTES))
                    pts.append(
                        ({"packet_bytes": pb, "flows": n, "diff": diff, "marker": mk, "min_in": mi}, sc)
                    )
    return pts


#: The sweeps per packet-size reading (1500 B: the name alone; 1000 B: ``NAME_1000B``).
def _sw(name: str, packet_bytes: int) -> str:
    return name if packet_bytes == PACKET_BYTES else f"{name}_{packet_bytes}B"


def plan(opts: Options) -> list[Sweep]:
    seeds = opts.seeds
    mi = MIN_IN_QUICK if opts.quick else MIN_IN
    kw: dict[str, Any] = {"duration_s": 300.0, "start_s": 50.0} if opts.quick else {}
    length = "300 s runs measured after 50 s (quick)." if opts.quick else "1000 s runs measured after 50 s."
    sweeps = []
    for pb in PACKETS:
        reading = f"{pb}-byte packets, RIO w_q {wq_for(pb):.3g} ({PACKET_READINGS[pb]} reading). "
        sweeps += [
            Sweep(
                _sw("frontier", pb),
                _frontier_points(FLOWS, ("soft", "hard"), list(MARKERS), mi, packet_bytes=pb, **kw),
                seeds,
                "Figs. 3-7: 10 and 40 TCP Reno flows over the 6 Mbps RIO bottleneck, min_in = "
                f"{', '.join(map(str, mi))} packets (max_in = 3·min_in, P_max_in = 0.1); soft (OUT "
                "min_in/3, min_in, 0.2) and hard (OUT 2, 6, 0.2) differentiation; the probe marker with "
                "the paper's increase rule and with A_IN + 1, and no marker (every packet IN: the OUT "
                "thresholds never act, one run per min_in serves both). " + reading + length,
                metrics=(METRIC_FN,),
            ),
            Sweep(
                _sw("onoff", pb),
                [
                    (
                        {"on_off_s": t, "marker": mk, "min_in": m},
                        single_bottleneck(10, mk, m, "hard", onoff_s=t, packet_bytes=pb, **kw),
                    )
                    for t in (ONOFF_TIMES_S[::2] if opts.quick else ONOFF_TIMES_S)
                    for mk in ("none", "probe")
                    for m in mi
                ],
                seeds,
                "Fig. 8: 10 flows, hard differentiation, plus an exponential ON/OFF UDP source (3 Mbps "
                "peak, mean on = mean off time), its packets IN. " + reading + length,
                metrics=(METRIC_FN,),
            ),
        ]
    sweeps.append(
        Sweep(
            "rio_ns2",
            [
                (
                    {"packet_bytes": pb, "flows": n, "marker": mk, "min_in": m},
                    ns2_flavoured(single_bottleneck(n, mk, m, "hard", packet_bytes=pb, **kw))[0],
                )
                for pb in PACKETS
                for n in FLOWS
                for mk in ("none", "probe")
                for m in mi
            ],
            seeds,
            "Figs. 5-7 with ns-2.35 dsRED's RIO (the ns2 flavour; the paper ran ns-2): hard "
            "differentiation (soft puts OUT thresholds at min_in/3, which dsRED cannot express), probe "
            "marker and all IN, both packet-size readings. " + length,
            metrics=(METRIC_FN,),
        )
    )
    flows_2d = (10,) if opts.quick else FLOWS
    min_th = MIN_TH_DOMAIN2_QUICK if opts.quick else MIN_TH_DOMAIN2
    for name, readings in (
        ("two_domains", [(PACKET_BYTES, 10.0)]),
        ("two_domains_readings", [(1000, 10.0), (PACKET_BYTES, 6.0)]),
    ):
        sweeps.append(
            Sweep(
                name,
                [
                    (
                        {
                            "packet_bytes": pb,
                            "domain1_mbps": d1,
                            "flows": n,
                            "out": f"({o[0]:g}, {o[1]:g}, {o[2]:g})",
                            "min_th": m,
                        },
                        two_domains(n, o, m, packet_bytes=pb, domain1_mbps=d1, **kw),
                    )
                    for pb, d1 in readings
                    for n in flows_2d
                    for o in DOMAIN1_OUT
                    for m in min_th
                ],
                seeds,
                "Fig. 9: n marked flows (domain 1: probe markers, RIO IN 100/300/0.1 with three OUT "
                "settings) and n unmarked flows share domain 2's 6 Mbps RED bottleneck (min_th, "
                "3·min_th, 0.1); "
                + (
                    "1500-byte packets, a 10 Mbps domain-1 link. "
                    if name == "two_domains"
                    else "the other readings: 1000-byte packets (10 Mbps domain 1), and a 6 Mbps domain-1 "
                    "link (1500 B). "
                )
                + length,
                metrics=(METRIC_FN,),
            )
        )
    return sweeps


# -- analysis --------------------------------------------------------------------------------------


def _fmt(x: float, digits: int = 3) -> str:
    return "nan" if not np.isfinite(x) else f"{x:.{digits}g}"


def _wide(ctx: Context, sweep: str, by: Sequence[str]) -> pd.DataFrame:
    """Mean and CI half-width of every metric per point, one row per point."""
    st = ctx.stats(sweep, [m for m in METRICS], by=list(by))
    w = st.pivot_table(index=list(by), columns="metric", values=["mean", "half_width"]).reset_index()
    # pandas-stubs types columns as Index[str]; after pivot_table(values=[…]) it is a MultiIndex of pairs
    w.columns = [a if not b else (b if a == "mean" else f"{b}_hw") for a, b in w.columns]  # type: ignore[str-unpack]
    return w


def analyse(ctx: Context) -> None:
    frs = {pb: _wide(ctx, _sw("frontier", pb), ["flows", "diff", "marker", "min_in"]) for pb in PACKETS}
    _verdicts(ctx)
    for pb, fr in frs.items():
        _frontier_figure(ctx, fr, pb)
        _claim_table(ctx, fr, pb)
    _in_share(ctx, frs)
    _fig7(ctx, frs[PACKET_BYTES])
    _rio_ns2(ctx, frs)
    _onoff(ctx)
    _two_domains(ctx)


# -- verdicts --------------------------------------------------------------------------------------

#: The readings of the RIO flavour: the verdicts on hard differentiation are also given with
#: ns-2.35 dsRED's RIO (both arms: the all-IN baseline and the marker).
NS2_SUPPORT = "ns-2.35 dsRED's RIO rules (the paper ran ns-2; `docs/ns2-behaviour.md`)"
#: Fig. 7's "near 100 %" and "very small", as thresholds (ours: the paper gives none).
OUT_LOSS_NEAR_ALL_PCT, IN_LOSS_SMALL_PCT = 90.0, 1.0
#: Fig. 7's "high goodput values": the RIO settings with min_in ≥ 30 (the largest one in a quick run).
HIGH_GOODPUT_MIN_IN = 30
#: "about X %" read as within one percentage point: the IN share's lower ends (Sec. 4).
IN_SHARE_LOW = {10: 0.97, 40: 0.93}
#: Fig. 9: "almost the same" read as within 10 % (marked/free or free/marked above 0.9);
#: "from two to three times" lower read as marked/free below 0.5.
SAME_RATIO, PATHOLOGICAL_RATIO = 0.9, 0.5


def frontier_ratio(marker: pd.DataFrame, none: pd.DataFrame) -> pd.Series:
    """Per seed (rows with ``seed``, ``goodput_util``, ``delay_ms``): the marker points' delay
    over the same seed's all-IN frontier delay at the marker point's goodput (linear
    interpolation, :func:`frontier_gap`), averaged over the marker points inside that frontier's
    goodput range; NaN for a seed with none. Below 1: the marker's frontier lies below."""
    out = {}
    for key, m in marker.groupby("seed"):
        seed = cast(int, key)
        g = frontier_gap(m[["goodput_util", "delay_ms"]], none[none["seed"] == seed])
        r = (g["delay_ms"] / g["none_delay_ms"]).to_numpy(float)
        r = r[np.isfinite(r)]
        out[int(seed)] = float(r.mean()) if r.size else float("nan")
    return pd.Series(out, dtype=float)


def _ones(s: pd.Series) -> pd.Series:
    return pd.Series(1.0, index=s.index)


def _per_seed_mean(df: pd.DataFrame, col: str) -> pd.Series:
    return df.groupby("seed")[col].mean()


FIGS = {(10, "soft"): 3, (40, "soft"): 4, (10, "hard"): 5, (40, "hard"): 6}


def _frontier_claim(n: int, diff: str) -> Claim:
    return Claim(
        "our scheme consistently achieves better performance than that of an all-IN packet marking "
        f"scenario (Fig. {FIGS[(n, diff)]}: {n} flows, {diff} differentiation)",
        f"Sec. 1 and Sec. 4, Fig. {FIGS[(n, diff)]}",
        "less",
        "marker frontier below the all-IN one",
        unit=" delay at equal goodput, marker / all IN − 1",
    )


def _verdicts(ctx: Context) -> None:
    """One verdict per claim and reading, decided from paired (same-seed) or one-sample t-tests
    over seeds (``qoslab.verdicts``)."""
    quick = ctx.options.quick
    for pb in PACKETS:
        reading, sup = PACKET_READINGS[pb], PACKET_SUPPORT[pb]
        runs = ctx.runs(_sw("frontier", pb))
        ratio: dict[tuple[int, str, str], pd.Series] = {}
        for n in FLOWS:
            none = select(runs, {"flows": n, "marker": "none"})
            for diff in ("soft", "hard"):
                for mk in ("probe", "probe_plus_one"):
                    ratio[(n, diff, mk)] = frontier_ratio(
                        select(runs, {"flows": n, "diff": diff, "marker": mk}), none
                    )
        for n, diff in FIGS:
            r = ratio[(n, diff, "probe")]
            ctx.verdict(_frontier_claim(n, diff).paired(reading, paired(r, _ones(r)), supported=sup))
        ctx.verdict(
            Claim(
                "Performance improvement provided by the marker employment is remarkable under high load "
                "condition",
                "Sec. 4, Figs. 3-4 (soft differentiation)",
                "less",
                "larger delay gain with 40 flows than with 10",
                unit=" relative delay change, 40 flows − 10 flows",
            ).paired(
                reading, paired(ratio[(40, "soft", "probe")], ratio[(10, "soft", "probe")]), supported=sup
            )
        )
        for n in FLOWS:
            ctx.verdict(
                Claim(
                    "The improvement is more significant when IN and OUT packets receive more different "
                    f"services from the network ({n} flows)",
                    f"Sec. 4, Fig. {FIGS[(n, 'hard')]} against Fig. {FIGS[(n, 'soft')]}",
                    "less",
                    "larger delay gain in hard than in soft differentiation",
                    unit=" relative delay change, hard − soft",
                ).paired(
                    reading, paired(ratio[(n, "hard", "probe")], ratio[(n, "soft", "probe")]), supported=sup
                )
            )
        for n in FLOWS:
            lo = IN_SHARE_LOW[n]
            share = select(runs, {"flows": n, "marker": "probe"}).groupby("seed")["in_share"].min()
            ctx.verdict(
                Claim(
                    "IN packet percentage varies from "
                    + (
                        "about 98% to more than 99% for the tested configuration with 10 sources"
                        if n == 10
                        else "about 94% to 97% with 40 sources"
                    ),
                    "Sec. 4",
                    "greater",
                    "98 – >99 %" if n == 10 else "94 – 97 %",
                    threshold=lo,
                    unit=" lowest IN share over the RIO settings",
                ).one_sample(reading, estimate(share), supported=sup)
            )
        _loss_verdicts(
            ctx, select(runs, {"flows": 10, "diff": "hard", "marker": "probe"}), reading, sup, quick
        )
        # The A_IN + 1 rule against the paper's 2·A_IN + 1 (10 flows, as in the text's "Fig. 3").
        ctx.verdict(
            Claim(
                "This modified marker performs better in soft differentiation: delay decrease achievable by "
                "marker employment is almost doubled",
                "Sec. 4 (A_IN + 1 against 2·A_IN + 1, 10 flows, soft)",
                "less",
                "A_IN + 1's frontier lower (delay gain ≈ doubled)",
                unit=" relative delay change, A_IN + 1 − 2·A_IN + 1",
            ).paired(
                reading,
                paired(ratio[(10, "soft", "probe_plus_one")], ratio[(10, "soft", "probe")]),
                supported=sup,
            )
        )
        soft = select(runs, {"flows": 10, "diff": "soft"})
        ctx.verdict(
            Claim(
                "dropping probability for OUT packets is lower: in the range [15%,30%] for the different "
                "configurations tested, versus the range [50%,60%]",
                "Sec. 4 (A_IN + 1 against 2·A_IN + 1, 10 flows, soft)",
                "less",
                "OUT loss 15–30 % vs 50–60 %",
                unit=" OUT loss (percentage points), A_IN + 1 − 2·A_IN + 1",
            ).paired(
                reading,
                paired(
                    _per_seed_mean(select(soft, {"marker": "probe_plus_one"}), "loss_out_pct"),
                    _per_seed_mean(select(soft, {"marker": "probe"}), "loss_out_pct"),
                ),
                supported=sup,
            )
        )
        # the compound claim's two ranges, each marker's OUT loss on its own
        for marker, who, low in (("probe_plus_one", "the A_IN + 1", 15.0), ("probe", "the 2·A_IN + 1", 50.0)):
            ctx.verdict(
                Claim(
                    "dropping probability for OUT packets is lower: in the range [15%,30%] for the "
                    "different configurations tested, versus the range [50%,60%]",
                    f"Sec. 4 ({who} marker's OUT loss alone, 10 flows, soft)",
                    "greater",
                    "OUT loss 15–30 % (A_IN + 1), 50–60 % (2·A_IN + 1)",
                    threshold=low,
                    unit=" % OUT loss",
                ).one_sample(
                    reading,
                    estimate(_per_seed_mean(select(soft, {"marker": marker}), "loss_out_pct")),
                    supported=sup,
                )
            )
        ctx.verdict(
            Claim(
                "On the contrary performance are poorer in hard differentiation",
                "Sec. 4 (A_IN + 1 against 2·A_IN + 1, 10 flows, hard)",
                "greater",
                "A_IN + 1's frontier higher",
                unit=" relative delay change, A_IN + 1 − 2·A_IN + 1",
            ).paired(
                reading,
                paired(ratio[(10, "hard", "probe_plus_one")], ratio[(10, "hard", "probe")]),
                supported=sup,
            )
        )
        on = ctx.runs(_sw("onoff", pb))
        for t in sorted(on["on_off_s"].unique()):
            o = select(on, {"on_off_s": t})
            r = frontier_ratio(select(o, {"marker": "probe"}), select(o, {"marker": "none"}))
            ctx.verdict(
                Claim(
                    "For 10 flows and in hard differentiation better performance results are achieved "
                    f"through the marker employment (ON/OFF UDP, {t:g} s activity time)",
                    "Sec. 4.1 (Fig. 8)",
                    "less",
                    "marker frontier below the all-IN one",
                    unit=" TCP delay at equal TCP goodput, marker / all IN − 1",
                ).paired(reading, paired(r, _ones(r)), supported=sup + "; ON/OFF times exponential")
            )
    ns2 = ctx.runs("rio_ns2")
    for pb in PACKETS:
        reading = f"{PACKET_READINGS[pb]}, ns2 RIO"
        sup = f"{PACKET_SUPPORT[pb]}; {NS2_SUPPORT}"
        r_pb = select(ns2, {"packet_bytes": pb})
        for n in FLOWS:
            r = frontier_ratio(
                select(r_pb, {"flows": n, "marker": "probe"}), select(r_pb, {"flows": n, "marker": "none"})
            )
            ctx.verdict(_frontier_claim(n, "hard").paired(reading, paired(r, _ones(r)), supported=sup))
        _loss_verdicts(ctx, select(r_pb, {"flows": 10, "marker": "probe"}), reading, sup, quick)
    _fig9_verdicts(ctx)


def _loss_verdicts(ctx: Context, probe: pd.DataFrame, reading: str, sup: str, quick: bool) -> None:
    """Fig. 7: at high goodput (min_in ≥ 30; the largest min_in in a quick run), OUT loss near
    100 % and IN loss very small (10 flows, hard differentiation)."""
    high = probe[probe["min_in"] >= (probe["min_in"].max() if quick else HIGH_GOODPUT_MIN_IN)]
    claim = (
        "for high goodput values in hard differentiation OUT loss percentage is near 100% while IN loss "
        "percentage is very small"
    )
    ctx.verdict(
        Claim(
            claim + " (OUT)",
            "Sec. 4, Fig. 7 (10 flows, hard)",
            "greater",
            "near 100 %",
            threshold=OUT_LOSS_NEAR_ALL_PCT,
            unit=" % OUT loss",
        ).one_sample(reading, estimate(_per_seed_mean(high, "loss_out_pct")), supported=sup)
    )
    ctx.verdict(
        Claim(
            claim + " (IN)",
            "Sec. 4, Fig. 7 (10 flows, hard)",
            "less",
            "very small",
            threshold=IN_LOSS_SMALL_PCT,
            unit=" % IN loss",
        ).one_sample(reading, estimate(_per_seed_mean(high, "loss_in_pct")), supported=sup)
    )


FIG9_READINGS = {
    (PACKET_BYTES, 10.0): ("1500 B packets, 10 Mbps domain 1", PACKET_SUPPORT[1500] + "; domain-1 link ours"),
    (1000, 10.0): ("1000 B packets, 10 Mbps domain 1", PACKET_SUPPORT[1000] + "; domain-1 link ours"),
    (PACKET_BYTES, 6.0): (
        "1500 B packets, 6 Mbps domain 1",
        "domain 1 as fast as the bottleneck ('essentially the same topology of figure 2'); the text says "
        "only that domain 1 is not congested",
    ),
}


def _fig9_verdicts(ctx: Context) -> None:
    runs = pd.concat([ctx.runs("two_domains"), ctx.runs("two_domains_readings")], ignore_index=True)
    runs["ratio"] = runs["goodput_util_marked"] / runs["goodput_util_free"]
    runs["closeness"] = np.minimum(runs["ratio"], 1.0 / runs["ratio"])
    for (pb, d1), (reading, sup) in FIG9_READINGS.items():
        r = runs[(runs["packet_bytes"] == pb) & (runs["domain1_mbps"] == d1)]
        for n in sorted(r["flows"].unique()):
            rn = r[r["flows"] == n]
            for o in DOMAIN1_OUT[:2]:
                key = f"({o[0]:g}, {o[1]:g}, {o[2]:g})"
                ctx.verdict(
                    Claim(
                        "with the first two settings for OUT traffic the performance of marked flows and "
                        f"free flows are almost the same (OUT {key}, {n} + {n} flows)",
                        "Sec. 4.2 (Fig. 9)",
                        "greater",
                        "almost the same",
                        threshold=SAME_RATIO,
                        unit=" min(marked/free, free/marked) goodput",
                    ).one_sample(
                        reading,
                        estimate(_per_seed_mean(select(rn, {"out": key}), "closeness")),
                        supported=sup,
                    )
                )
            o = DOMAIN1_OUT[2]
            key = f"({o[0]:g}, {o[1]:g}, {o[2]:g})"
            ctx.verdict(
                Claim(
                    "only with the third pathological setting, the marked flows experiment lower throughput "
                    f"(from two to three times) (OUT {key}, {n} + {n} flows)",
                    "Sec. 4.2 (Fig. 9)",
                    "less",
                    "marked 2–3× less than free",
                    threshold=PATHOLOGICAL_RATIO,
                    unit=" marked/free goodput",
                ).one_sample(
                    reading, estimate(_per_seed_mean(select(rn, {"out": key}), "ratio")), supported=sup
                )
            )


def _curve(fr: pd.DataFrame, n: int, diff: str, marker: str) -> pd.DataFrame:
    d = "all_in" if marker == "none" else diff
    return select(fr, {"flows": n, "diff": d, "marker": marker}).sort_values("min_in")


_STYLE = {
    "none": dict(color="tab:red", marker="s", ls="-"),
    "probe": dict(color="tab:blue", marker="o", ls="-"),
    "probe_plus_one": dict(color="tab:green", marker="^", ls="--"),
}


def _frontier_line(
    c: pd.DataFrame, label: str, annotate: bool = False, **style: Any
) -> tuple[Line, list[tuple[float, float, str]]]:
    """A frontier (delay against goodput utilisation, CIs both ways) and, with ``annotate``, the
    min_in of each point as annotations."""
    x = list(c["goodput_util"] * 100)
    line = Line(
        x,
        list(c["delay_ms"]),
        label,
        err=list(c["delay_ms_hw"].fillna(0)),
        xerr=list(c["goodput_util_hw"].fillna(0) * 100),
        style=style,
    )
    notes = (
        [(xi, yi, f"{m:g}") for xi, yi, m in zip(x, c["delay_ms"], c["min_in"], strict=True)]
        if annotate
        else []
    )
    return line, notes


def _frontier_panel(
    curves: Sequence[tuple[pd.DataFrame, str, bool, dict[str, Any]]], title: str, xlabel: str
) -> Panel:
    lines, notes = [], []
    for c, label, annotate, style in curves:
        if c.empty:
            continue
        line, ns = _frontier_line(c, label, annotate, **style)
        lines.append(line)
        notes += ns
    return Panel(lines, title=title, xlabel=xlabel, ylabel="mean queueing delay (ms)", annotations=notes)


def _frontier_figure(ctx: Context, fr: pd.DataFrame, packet_bytes: int = PACKET_BYTES) -> None:
    figs = {(10, "soft"): 3, (40, "soft"): 4, (10, "hard"): 5, (40, "hard"): 6}
    sens = packet_bytes != PACKET_BYTES
    sweep = _sw("frontier", packet_bytes)
    grid: list[list[Panel]] = [[], []]
    for i, ((n, diff), k) in enumerate(figs.items()):
        curves = [(_curve(fr, n, diff, mk), MARKERS[mk], mk != "probe_plus_one", _STYLE[mk]) for mk in _STYLE]
        grid[i // 2].append(
            _frontier_panel(curves, f"Fig. {k}: {n} flows, {diff} differentiation", "goodput utilisation (%)")
        )
    size = f"{packet_bytes} B packets, w_q {wq_for(packet_bytes):.3g}"
    fig = panels(
        grid,
        title=f"Performance frontiers: delay vs goodput utilisation ({size}), RIO min_in annotated (packets)",
        panel_size=(5.5, 3.8),
    )
    ctx.figure(
        f"fig3-6-frontiers-{packet_bytes}B" if sens else "fig3-6-frontiers",
        fig,
        title=f"Figs. 3-6 with {packet_bytes}-byte packets (the {PACKET_READINGS[packet_bytes]} reading)"
        if sens
        else "Figs. 3-6: delay/utilisation frontiers, marker vs no marker (1500 B packets)",
        sweeps=[sweep],
        caption="Mean over seeds with 95 % CIs in both directions; numbers next to the points are "
        "min_in (packets). Delay: mean waiting time of the packets admitted at the bottleneck in the "
        "measurement window (queueing only: no transmission or propagation).",
    )
    cols = [
        "flows",
        "diff",
        "marker",
        "min_in",
        "goodput_util",
        "goodput_util_hw",
        "delay_ms",
        "delay_ms_hw",
        "little_delay_ms",
        "in_share",
        "loss_pct",
        "loss_in_pct",
        "loss_out_pct",
        "timeouts_per_flow",
        "overflow_drops",
    ]
    ctx.table(
        f"frontier-points-{packet_bytes}B" if sens else "frontier-points",
        fr[cols].sort_values(["flows", "diff", "marker", "min_in"]),
        title=f"Frontier data{f' ({packet_bytes} B packets)' if sens else ''} (means over seeds, "
        "± = 95 % CI half-width)",
        columns=cols,
        formats={c: (lambda v: _fmt(v, 4)) for c in cols[4:]},
        caption="goodput_util: fraction of 6 Mbps; delay in ms (little_delay_ms: the same from Little's "
        "law and 1 s queue samples, a cross-check); in_share: IN share of the packets arriving at the "
        "bottleneck; losses in %; overflow_drops must be 0 (only RIO drops).",
    )


def _claim_table(ctx: Context, fr: pd.DataFrame, packet_bytes: int = PACKET_BYTES) -> None:
    sens = packet_bytes != PACKET_BYTES
    rows = []
    for n in FLOWS:
        for diff in ("soft", "hard"):
            none = _curve(fr, n, diff, "none")
            for mk in ("probe", "probe_plus_one"):
                c = _curve(fr, n, diff, mk)
                if c.empty:
                    continue
                g = frontier_gap(c[["min_in", "goodput_util", "delay_ms"]], none)
                g.insert(0, "marker", mk)
                g.insert(0, "diff", diff)
                g.insert(0, "flows", n)
                rows.append(g)
    df = pd.concat(rows, ignore_index=True)
    df["relative_diff"] = df["delay_diff_ms"] / df["none_delay_ms"]
    ctx.table(
        f"frontier-gap-{packet_bytes}B" if sens else "frontier-gap",
        df,
        title="Does the marker's frontier lie below the no-marker one?"
        + (f" ({packet_bytes} B packets)" if sens else ""),
        columns=[
            "flows",
            "diff",
            "marker",
            "min_in",
            "goodput_util",
            "delay_ms",
            "none_delay_ms",
            "delay_diff_ms",
            "relative_diff",
            "dominated",
        ],
        formats={
            c: (lambda v: _fmt(v, 3))
            for c in ("goodput_util", "delay_ms", "none_delay_ms", "delay_diff_ms", "relative_diff")
        },
        caption="none_delay_ms: the no-marker frontier's delay at the marker point's utilisation (linear "
        "interpolation; nan outside the no-marker utilisation range); delay_diff_ms < 0: the marker has "
        "less delay at equal utilisation. dominated: a no-marker point has at least as much utilisation "
        "and no more delay.",
    )
    summ = []
    for key, g in df.groupby(["flows", "diff", "marker"], sort=False):
        n, diff, mk = cast("tuple[int, str, str]", key)
        ok = g[np.isfinite(g["delay_diff_ms"])]
        summ.append(
            f"- {n} flows, {diff}, {MARKERS[mk]}: {int((ok['delay_diff_ms'] < 0).sum())} of {len(ok)} "
            f"comparable points below the no-marker frontier (median relative delay change "
            f"{_fmt(float(ok['relative_diff'].median()) * 100, 3)} %), {int(g['dominated'].sum())} of "
            f"{len(g)} points dominated by a no-marker point."
        )
    ctx.text(
        "The central claim, point by point" + (f" ({packet_bytes} B packets)" if sens else ""),
        "\n".join(summ),
    )


def _in_share(ctx: Context, frs: Mapping[int, pd.DataFrame]) -> None:
    rows = []
    for pb, fr in frs.items():
        for n, paper in ((10, "about 98 % to more than 99 %"), (40, "about 94 % to 97 %")):
            for diff in ("soft", "hard"):
                for mk in ("probe", "probe_plus_one"):
                    c = _curve(fr, n, diff, mk)
                    rows.append(
                        {
                            "packet_bytes": pb,
                            "flows": n,
                            "diff": diff,
                            "marker": MARKERS[mk],
                            "paper": paper,
                            "in_share_min_pct": 100 * float(c["in_share"].min()),
                            "in_share_max_pct": 100 * float(c["in_share"].max()),
                            "at_min_in_2_pct": 100 * float(c["in_share"].iloc[0]),
                            "at_min_in_80_pct": 100 * float(c["in_share"].iloc[-1]),
                        }
                    )
    df = pd.DataFrame(rows)
    ctx.table(
        "in-share",
        df,
        title="Share of packets marked IN",
        columns={
            "packet_bytes": "packet (B)",
            "flows": "flows",
            "diff": "differentiation",
            "marker": "marker",
            "paper": "paper",
            "in_share_min_pct": "ours min (%)",
            "in_share_max_pct": "ours max (%)",
            "at_min_in_2_pct": "smallest min_in (%)",
            "at_min_in_80_pct": "largest min_in (%)",
        },
        formats={c: (lambda v: _fmt(v, 4)) for c in df.columns if c.endswith("_pct")},
        caption="Range over the RIO settings of the mean (over seeds) IN share of the packets arriving at "
        "the bottleneck in the measurement window (the paper gives only the ranges quoted).",
    )


def _fig7(ctx: Context, fr: pd.DataFrame) -> None:
    row = []
    for diff in ("soft", "hard"):
        c = _curve(fr, 10, diff, "probe")
        x = list(c["goodput_util"] * 100)
        lines = [
            Line(x, list(c[col]), f"marker, {lab}", err=list(c[f"{col}_hw"].fillna(0)), style=st)
            for col, lab, st in (
                ("loss_pct", "overall", {"color": "k", "marker": "o"}),
                ("loss_in_pct", "IN", {"color": "b", "marker": "^"}),
                ("loss_out_pct", "OUT", {"color": "r", "marker": "s"}),
            )
        ]
        nm = _curve(fr, 10, diff, "none")
        lines.append(
            Line(
                list(nm["goodput_util"] * 100),
                list(nm["loss_pct"]),
                "no marker (all IN)",
                err=list(nm["loss_pct_hw"].fillna(0)),
                style={"ls": "--", "color": "0.5", "marker": ""},
            )
        )
        row.append(
            Panel(
                lines,
                title=f"10 flows, {diff} differentiation",
                xlabel="goodput utilisation (%)",
                ylabel="loss (%)",
                yscale="symlog",
            )
        )
    fig = panels(row, title="Fig. 7: loss percentage overall, IN and OUT at the bottleneck, 10 flows")
    ctx.figure(
        "fig7-loss",
        fig,
        title="Fig. 7: loss percentage, 10 flows",
        sweeps=["frontier"],
        caption="Drops over arrivals at the bottleneck in the measurement window, per class (mean over "
        "seeds, 95 % CIs); symmetric-log scale (linear below 1 %).",
    )


def _rio_ns2(ctx: Context, frs: Mapping[int, pd.DataFrame]) -> None:
    """Hard differentiation in both RIO flavours: how many marker points lie below the all-IN
    frontier (means over seeds), per packet-size reading."""
    ns2 = _wide(ctx, "rio_ns2", ["packet_bytes", "flows", "marker", "min_in"])
    rows = []
    for pb in PACKETS:
        for n in FLOWS:
            for flavour in ("reference", "ns2"):
                if flavour == "ns2":
                    d = select(ns2, {"packet_bytes": pb, "flows": n})
                    probe, none = select(d, {"marker": "probe"}), select(d, {"marker": "none"})
                else:
                    probe, none = _curve(frs[pb], n, "hard", "probe"), _curve(frs[pb], n, "hard", "none")
                g = frontier_gap(probe[["min_in", "goodput_util", "delay_ms"]], none)
                ok = g[np.isfinite(g["delay_diff_ms"])]
                rel = ok["delay_diff_ms"] / ok["none_delay_ms"]
                rows.append(
                    {
                        "packet_bytes": pb,
                        "flows": n,
                        "flavour": flavour,
                        "below": f"{int((ok['delay_diff_ms'] < 0).sum())} of {len(ok)}",
                        "median_rel_delay_change_pct": 100 * float(rel.median())
                        if len(rel)
                        else float("nan"),
                        "all_in_goodput_min_in_lowest": float(
                            none.sort_values("min_in")["goodput_util"].iloc[0]
                        ),
                    }
                )
    ctx.table(
        "rio-flavours",
        pd.DataFrame(rows),
        title="Hard differentiation with ns-2.35 dsRED's RIO (ns2 flavour) beside the reference RIO",
        columns={
            "packet_bytes": "packet (B)",
            "flows": "flows",
            "flavour": "RIO flavour",
            "below": "marker points below the all-IN frontier (comparable)",
            "median_rel_delay_change_pct": "median delay change at equal goodput (%)",
            "all_in_goodput_min_in_lowest": "all-IN goodput at the lowest min_in",
        },
        formats={
            "median_rel_delay_change_pct": lambda v: _fmt(v, 3),
            "all_in_goodput_min_in_lowest": lambda v: _fmt(v, 3),
        },
        caption="Means over seeds; the reference rows are the hard-differentiation points of the frontier "
        "sweeps at the same min_in values. The verdicts in both flavours are in the table of verdicts.",
    )


def _onoff(ctx: Context) -> None:
    w = _wide(ctx, "onoff", ["on_off_s", "marker", "min_in"])
    times = sorted(w["on_off_s"].unique())
    row = [
        _frontier_panel(
            [
                (
                    select(w, {"on_off_s": t, "marker": mk}).sort_values("min_in"),
                    MARKERS[mk],
                    True,
                    _STYLE[mk],
                )
                for mk in ("none", "probe")
            ],
            f"on = off = {t:g} s (mean)",
            "TCP goodput utilisation (%)",
        )
        for t in times
    ]
    fig = panels(
        row, title="Fig. 8: 10 flows, hard differentiation, ON/OFF UDP source (3 Mbps peak), 1500 B packets"
    )
    ctx.figure(
        "fig8-onoff",
        fig,
        title="Fig. 8: frontiers with an ON/OFF UDP source",
        sweeps=["onoff"],
        caption="Utilisation counts the TCP goodput only (the UDP source takes about a quarter "
        "of the link on average). Mean over seeds with 95 % CIs.",
    )
    rows = []
    for pb in PACKETS:
        wp = w if pb == PACKET_BYTES else _wide(ctx, _sw("onoff", pb), ["on_off_s", "marker", "min_in"])
        for t in times:
            none = select(wp, {"on_off_s": t, "marker": "none"})
            g = frontier_gap(
                select(wp, {"on_off_s": t, "marker": "probe"})[["min_in", "goodput_util", "delay_ms"]], none
            )
            g.insert(0, "on_off_s", t)
            g.insert(0, "packet_bytes", pb)
            rows.append(g)
    df = pd.concat(rows, ignore_index=True)
    ctx.table(
        "fig8-gap",
        df,
        title="Fig. 8: marker vs no-marker frontier with ON/OFF UDP (both packet-size readings)",
        formats={
            c: (lambda v: _fmt(v, 3)) for c in ("goodput_util", "delay_ms", "none_delay_ms", "delay_diff_ms")
        },
    )


def _two_domains(ctx: Context) -> None:
    w = _wide(ctx, "two_domains", ["flows", "out", "min_th"])
    flows = sorted(w["flows"].unique())
    colours = ("tab:blue", "tab:orange", "tab:purple")
    ticks = sorted(w["min_th"].unique())
    row = []
    for n in flows:
        lines = []
        for o, col, lw in zip(DOMAIN1_OUT, colours, (5.0, 2.0, 1.5), strict=True):
            key = f"({o[0]:g}, {o[1]:g}, {o[2]:g})"
            c = select(w, {"flows": n, "out": key}).sort_values("min_th")
            base = {"color": col, "lw": lw, "alpha": 0.45 if lw > 3 else 1.0}
            for who, marker, ls in (("marked", "o", "-"), ("free", "s", "--")):
                lines.append(
                    Line(
                        list(c["min_th"]),
                        list(c[f"goodput_util_{who}"] * 100),
                        f"{who}, OUT {key}",
                        err=list(c[f"goodput_util_{who}_hw"] * 100),
                        style={**base, "marker": marker, "ls": ls},
                    )
                )
        row.append(
            Panel(
                lines,
                title=f"{n} marked + {n} free flows",
                xlabel="domain-2 RED min_th (packets)",
                ylabel="goodput (% of 6 Mbps)",
                logx=True,
                xticks=ticks,
            )
        )
    fig = panels(
        row,
        title="Fig. 9: marked flows (domain 1) against unmarked flows at a best-effort bottleneck "
        "(1500 B packets, 10 Mbps domain 1)",
        panel_size=(6.5, 4.0),
    )
    ctx.figure(
        "fig9-two-domains",
        fig,
        title="Fig. 9: two domains",
        sweeps=["two_domains"],
        caption="Aggregate goodput of the marked flows (solid) and of the free flows (dashed) for "
        "domain 1's three OUT settings (the wide pale line, (30, 90, 0.2), lies under (2, 6, 0.2) "
        "where neither drops an OUT packet in domain 1). Mean over seeds with 95 % CIs.",
    )
    w = pd.concat(
        [
            _wide(ctx, sw, ["packet_bytes", "domain1_mbps", "flows", "out", "min_th"])
            for sw in ("two_domains", "two_domains_readings")
        ],
        ignore_index=True,
    )
    w["marked_over_free"] = w["goodput_util_marked"] / w["goodput_util_free"]
    ctx.table(
        "fig9-two-domains",
        w[
            [
                "packet_bytes",
                "domain1_mbps",
                "flows",
                "out",
                "min_th",
                "goodput_util_marked",
                "goodput_util_free",
                "marked_over_free",
                "delay_ms",
                "in_share",
            ]
        ],
        title="Fig. 9 data: marked vs free goodput, every reading",
        formats={
            c: (lambda v: _fmt(v, 3))
            for c in ("goodput_util_marked", "goodput_util_free", "marked_over_free", "delay_ms", "in_share")
        },
        caption="Paper: with (30, 90, 0.2) and (2, 6, 0.2) marked and free flows get almost the same; "
        "with (0.1, 0.3, 1) the marked flows get two to three times less.",
    )


def _references() -> tuple[Reference, ...]:
    # The paper gives the IN share only as ranges; its endpoints at the lowest and the highest
    # RIO settings are compared with the corresponding points (hard differentiation).
    refs = []
    for n, lo, hi in ((10, 98.0, 99.0), (40, 94.0, 97.0)):
        for mi, v in ((MIN_IN[0], lo), (MIN_IN[-1], hi)):
            refs.append(
                Reference(
                    f"in-share-n{n}-min{mi}",
                    "Sec. 4",
                    f"IN share, {n} flows, hard, min_in {mi} (paper: range {lo:g}-{hi:g} %)",
                    v / 100.0,
                    "frontier",
                    "in_share",
                    {"flows": n, "diff": "hard", "marker": "probe", "min_in": mi},
                )
            )
    return tuple(refs)


NOTES = """\
- Packet size: not given, and it flips the 40-flow verdicts, so both readings run side by side
  (sweeps `NAME` and `NAME_1000B`): 1500 B, with which w_q = 1 − exp(−M/(C·10·RTT)) =
  1 − exp(−1/800) = 0.00125 is the paper's 0.0012 (M/C one packet's transmission time: a time
  constant of ten mean RTTs), and 1000 B (ns-2's default TCP packet) with the stated w_q = 0.0012.
- RIO's rules: Clark & Fang's coupled RIO, and ns-2.35 dsRED's (sweep `rio_ns2`, hard
  differentiation only: dsRED cannot express soft differentiation's fractional OUT thresholds).
- Verdicts: per claim and reading, from t-tests over seeds; a frontier claim is tested on the
  per-seed ratio of the marker's delay to the same seed's all-IN frontier delay at equal goodput.
- RTTs: round-trip propagation delays evenly spread over 124-198 ms (mean 161 ms; the paper: mean
  160 ms, distribution not given). Access links 100 Mbps, bottleneck 6 Mbps with 10 ms, 1 ms exits.
- The marker runs per flow on each sender's access link (the ingress router); RIO is coupled
  (Clark & Fang: IN judged on the IN average, OUT on the total average), ns-2 defaults otherwise;
  physical buffers of 2000 packets (only RIO drops: `overflow_drops` stays 0).
- No marker: every packet is sent as AF11 (IN): RIO reduces to RED (min_in, 3·min_in, 0.1), so one
  run per min_in serves soft and hard differentiation.
- Delay: the mean waiting time before transmission of the packets admitted at the bottleneck in the
  measurement window, recorded per packet by the simulator (`window_wait_ns`/`window_admitted`).
  Little's law on 1 s queue samples gives the same within sampling noise (`little_delay_ms`).
- TCP Reno (ns-2.35 one-way semantics), SYN, advertised window 10000 packets.
- Fig. 8: ON/OFF times are exponential with equal means (our reading of "equal and strictly
  alternating"; ns-2's usual Exponential ON/OFF source); the UDP packets are IN (AF11), unmarked.
- Fig. 9: domain 1 is a 10 Mbps (or, the second reading, 6 Mbps) link r0 → r1 with RIO (IN
  100/300/0.1, OUT as listed) that the marked flows cross before the 6 Mbps bottleneck; domain
  2's bottleneck is RED (min_th, 3·min_th, 0.1) treating every packet alike; as many free
  (unmarked) flows as marked ones.
- Discussion: `docs/experiments/probe-marker.md`.
"""

EXPERIMENT = register(
    Experiment(
        name="probe-marker",
        title="adaptive low-priority (probe) marking against all-IN on a RIO bottleneck",
        paper=PAPER,
        summary=(
            "The probe marker (per flow: IN bursts of adaptive length A_IN closed by one OUT probe, "
            "A_IN filtered at each retransmission) against no marker, 10 and 40 TCP Reno flows over a "
            "6 Mbps RIO bottleneck: delay/utilisation frontiers (Figs. 3-6), IN share, losses per "
            "class (Fig. 7), the A_IN + 1 rule, an ON/OFF UDP stress (Fig. 8) and two domains with "
            "unmarked competitors (Fig. 9)."
        ),
        plan=plan,
        analyse=analyse,
        references=_references(),
        # 20: the A_IN + 1 comparison in hard differentiation is an effect under 0.02 (quick run).
        seeds=20,
        quick_seeds=2,
        window=Window(
            True,
            "Neglia et al., Sec. 3: 'Each simulation lasted 1000 simulated seconds, statistics were "
            "collected after 50 seconds'",
        ),
        study="Neglia, probe marker",
        notes=NOTES,
    )
)


def quick_frontier(
    seeds: Sequence[int],
    min_in: Sequence[float],
    *,
    flows: int = 10,
    diff: str = "hard",
    duration_s: float = 300.0,
    start_s: float = 50.0,
    markers: Sequence[str] = ("none", "probe"),
) -> pd.DataFrame:
    """Runs the frontier points directly (no store): one row per (marker, min_in, seed) with the
    :func:`probe_metrics` columns. For tests and notebooks."""
    from qoslab.runs.simulate import run

    rows = []
    for mk in markers:
        for mi in min_in:
            sc = single_bottleneck(flows, mk, mi, diff, duration_s=duration_s, start_s=start_s)
            for s in seeds:
                rows.append({"marker": mk, "min_in": mi, "seed": s, **probe_metrics(run(sc, s))})
    return pd.DataFrame(rows)


def mean_frontier(df: pd.DataFrame, by: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """Means over seeds of :func:`quick_frontier` rows, per marker and min_in."""
    d = select(df, by or {})
    return d.groupby(["marker", "min_in"], as_index=False)[["goodput_util", "delay_ms", "in_share"]].mean()
