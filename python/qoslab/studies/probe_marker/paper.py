"""The paper's values for ``probe-marker`` (:mod:`qoslab.studies.probe_marker.study`): the topology's
rates, delays and RIO settings of Sec. 4, the markers compared, the swept settings, the readings
of the paper's words as thresholds, and the published numbers compared with."""

from __future__ import annotations

from qoslab.reproduction.base import Reference

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

METRIC_FN = "qoslab.studies.probe_marker.study:probe_metrics"
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


FIGS = {(10, "soft"): 3, (40, "soft"): 4, (10, "hard"): 5, (40, "hard"): 6}


FIG9_READINGS = {
    (PACKET_BYTES, 10.0): ("1500 B packets, 10 Mbps domain 1", PACKET_SUPPORT[1500] + "; domain-1 link ours"),
    (1000, 10.0): ("1000 B packets, 10 Mbps domain 1", PACKET_SUPPORT[1000] + "; domain-1 link ours"),
    (PACKET_BYTES, 6.0): (
        "1500 B packets, 6 Mbps domain 1",
        "domain 1 as fast as the bottleneck ('essentially the same topology of figure 2'); the text says "
        "only that domain 1 is not congested",
    ),
}


def paper_references() -> tuple[Reference, ...]:
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
