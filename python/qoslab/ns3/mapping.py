"""How each element of a resolved qoslab scenario is expressed in ns-3.37, or why it cannot be.

Every function here is pure: it takes one element of the SI-unit resolved form
(:func:`qoslab.ns3.export.to_ns3_resolved`) and returns what the C++ program applies: a queue
disc's TypeId with *every* attribute that matters set explicitly (never ns-3's defaults), a TCP
socket's congestion and recovery TypeIds with its attributes and the defaults to set before it
is created, or a UDP source's process. A refusal is an :class:`Ns3Refusal` whose message names
the element and the reason, in one line.
"""

from __future__ import annotations

import json
import math
import zlib
from collections.abc import Callable
from typing import Any

from qoslab import schema

#: The point-to-point device's own transmit queue, in front of which the queue disc sits.
#: ns-3 hands a packet from the queue disc to the device while the device queue has room, so
#: with one packet there the queue disc holds the backlog less the one packet waiting in the
#: device (the packet being serialised has left both). qoslab's limit counts every waiting
#: packet, so the queue disc gets ``limit - 1`` (see :func:`queue_limit`).
DEVICE_QUEUE = "1p"

#: IPv4 + TCP headers without options (timestamps off; SACK blocks appear only on ACKs).
TCP_HEADERS = 40

#: IPv4 + UDP headers.
UDP_HEADERS = 28

#: An effectively infinite retry count: qoslab's TCP never gives up on a segment.
NEVER_GIVE_UP = 1_000_000

#: ns-3.37's TCP without SACK is defective on the cross-check scenarios: it emulates SACK from
#: duplicate ACKs (TcpTxBuffer::AddRenoSack), so the duplicates that follow one spurious timeout
#: mark segments in flight as lost, which it retransmits, which makes more duplicates: 15 390
#: retransmissions against qoslab's 450 and 14 times its drops on dumbbell-5-droptail, and a
#: segmentation fault in TcpRateLinux::SkbSent on dumbbell-5-red. The export therefore enables
#: SACK on every ns-3 socket (``sack_workaround``); with one loss per window, as under RED or a
#: shared DropTail at these loads, SACK and NewReno recover alike (measured:
#: docs/validation/ns3.md). ``sack_workaround=False`` gives the literal mapping.
SACK_WORKAROUND = True

#: The sender restarts its retransmission timer at a fast retransmit, as qoslab's TCP and
#: ns-2's do (``reset_rtx_timer`` in ``dupack_action``); ns-3.37's TcpSocketBase keeps it running
#: from the last new ACK, so with the 200 ms minimum RTO and round trips of 150 ms nearly every
#: fast retransmit of a small window (50 flows over 10 Mbps) ends in a timeout. The program's
#: ``QoslabTcpSocket`` is TcpSocketBase with that one difference.
RESTART_RTO_ON_FAST_RETRANSMIT = True

#: The sender's RTT estimator: RFC 6298 with one sample per round trip and Karn's rule on the
#: handshake (the program's ``QoslabRttPerRound``), as qoslab's TCP times one segment per round
#: trip; ns-3's RttMeanDeviation samples every ACK (rttvar collapses, spurious timeouts:
#: fdd-red-s1 has 128 timeouts a run against 12.7, qoslab 5.3). BBR too: its RTprop and
#: delivery rate no longer come from the RTO estimator (:data:`RAW_RTT_SAMPLE`,
#: :data:`LINUX_RATE_ESTIMATOR`).
RTT_ESTIMATOR = "ns3::QoslabRttPerRound"

#: Karn's algorithm as RFC 6298 (5.5, 5.7) and Linux apply it: an RTO doubled by a timeout
#: stays doubled until an RTT sample is taken (a segment that was not retransmitted is
#: acknowledged), as qoslab's and ns-2's (``backoff`` reset only when the timed segment is
#: acknowledged). ns-3.37 recomputes the RTO from the estimator at every new ACK, so the ACK of
#: the retransmission itself collapses the backoff: on dumbbell-50-red (seeds 1-4) that gave
#: 33 % more drops than qoslab and a Jain index of 0.986 against 0.906; kept, 8312 drops
#: against 8284 and 0.901 (docs/validation/ns3.md).
KARN_BACKOFF = True

#: RFC 5681 (3.1): after a timeout, slow start grows the window for each ACK of new data.
#: ns-3.37 leaves CA_LOSS on an ACK reaching the recovery point passing the congestion control
#: only the segments above that point, none when the one lost segment's retransmission fills
#: the hole: the window stays at one segment for another round trip (on dumbbell-50-droptail,
#: seeds 1-4: 825 timeouts against qoslab's 123; with the increase 185).
LOSS_EXIT_INCREASE = True

#: RFC 6298 (5.2): when all outstanding data has been acknowledged the retransmission timer is
#: turned off (and the next segment sent starts it). ns-3.37 turns it off only when the send
#: buffer is empty, so a paced sender with data waiting and nothing in flight times out one RTO
#: after the last ACK however recently its next segment left (ns-3's BBR, once its pacing rate
#: had collapsed: a timeout every 280 ms, docs/validation/ns3.md).
STOP_IDLE_RTO_TIMER = True

#: The congestion control reads each ACK's RTT sample and the minimum of the samples, as Linux
#: passes them to BBR and CUBIC; ns-3.37 stores the smoothed RTT in both (TcpSocketState's
#: m_lastRtt and m_minRtt; fixed in later ns-3, issue 1043), so TcpBbr's RTprop is a minimum of
#: srtt and TcpCubic's delay_min and HyStart read srtt.
RAW_RTT_SAMPLE = True

#: Linux's delivery-rate estimator (tcp_rate.c) for BBR, the program's ``QoslabRateLinux``:
#: ns-3.37's TcpRateLinux measures the ACK phase from the previous sample's delivered time
#: (ns-3 issue 1026) and carries a sample's rate over to the next ACK when that one is invalid
#: (issue 735), which TcpBbr takes as a new sample.
LINUX_RATE_ESTIMATOR = True

#: ns-3.37 caps the backed-off RTO at 60 s in TcpSocketBase::ReTxTimeout (not an attribute).
NS3_MAX_RTO_S = 60.0

#: qoslab TCP variant -> ns-3 congestion-control TypeId, as each sender's algorithm file
#: declares it (the schema's ``$defs.sender``). reno and newreno map to the program's
#: ``ns3::QoslabNewReno``, TcpNewReno's growth: slow start adds one segment per ACK and
#: congestion avoidance segSize²/cwnd per ACK, whatever the ACK covers: RFC 5681's per-ACK rule
#: (eq. 3) and qoslab's/ns-2's (``cwnd += 1/cwnd`` per new ACK: about half a segment per RTT
#: with delayed ACKs). TcpLinuxReno counts the segments acknowledged (one segment per RTT with
#: delayed ACKs, Linux's byte counting), which qoslab does not. QoslabNewReno is TcpNewReno
#: whose loss response halves the congestion window, as qoslab and RFC 5681 (FlightSize) do:
#: TcpNewReno halves BytesInFlight, which with SACK (:data:`SACK_WORKAROUND`) is RFC 6675's
#: pipe, three or more segments below the window at a fast retransmit (measured: 16 % fewer
#: drops than qoslab on dumbbell-5-red, against 0.5 % with the window halved). ns-3 has no Reno
#: loss recovery: its recovery is NewReno's (RFC 6582) or SACK's, so ``reno`` runs as NewReno.
#: Read at each :func:`tcp_socket` call (a caller may replace an entry).
CONGESTION: dict[str, str] = {
    v: s["x-exports"]["ns3"]["type_id"] for v, s in schema.sender_kinds().items() if "ns3" in s["x-exports"]
}

#: Loss recovery for every variant: RFC 5681/6582 window halving (ns-3's default is PRR).
RECOVERY = "ns3::TcpClassicRecovery"

#: Drop reasons (substrings of ns-3's reason strings) counted as early (AQM) drops; every
#: other drop is forced (buffer overflow, average above max_th). A child queue's reason is
#: prefixed by its parent's "(Dropped by child queue disc) ".
EARLY_RED = ["Unforced drop"]
EARLY_CODEL = ["Target exceeded drop"]

#: Time::Max(), ns-3's "never" for a Time attribute (the program sets it as a TimeValue: no
#: string spells it exactly). CoDel's/FQ-CoDel's/PIE's CE thresholds and PIE's activation
#: threshold are off this way; any other value turns the feature on (PIE with an activation
#: threshold stays inactive until the queue delay reaches it).
NEVER = "@max"


class Ns3Refusal(ValueError):
    """An element of the scenario that the ns-3 export cannot express (one line: where and why)."""


def ns_time(seconds: float) -> str:
    """A duration as an ns-3 Time string, in whole nanoseconds (exact, no float formatting)."""
    return f"{round(seconds * 1e9)}ns"


def ns_duration(q: dict[str, Any], key: str) -> str:
    """A queue's duration ``key`` (whole ns in the resolved form: ``target_ns``) as an ns-3 Time."""
    return f"{int(q[key])}ns"


#: The mean packet size of a queue whose kind declares none (ns-2's default mean_pktsize_, which
#: the resolved form gave every kind before it held only the kind's own parameters).
DEFAULT_MEAN_PKT_SIZE = 500


def _bool(v: Any) -> str:
    return "true" if v else "false"


def _num(v: float) -> str:
    return repr(float(v))


def queue_limit(where: str, q: dict[str, Any]) -> tuple[str, str]:
    """The queue disc's ``MaxSize`` (one waiting packet less than qoslab's limit: that one
    waits in the device's queue) and its unit, ``"p"`` or ``"B"``."""
    lp, lb = q.get("limit_pkts"), q.get("limit_bytes")
    if lb is not None:
        mps = q.get("mean_pkt_size_bytes", DEFAULT_MEAN_PKT_SIZE)
        if not mps or int(lb) <= int(mps):
            raise Ns3Refusal(
                f"{where}: a byte limit needs a mean packet size below it (the device queue holds "
                "one packet of it)"
            )
        return f"{int(lb) - int(mps)}B", "B"
    if lp is None:
        return "10000000p", "p"  # unlimited, as the ns-2 export's UNLIMITED_QUEUE_PKTS
    if int(lp) < 2:
        raise Ns3Refusal(
            f"{where}: a limit below 2 packets cannot be expressed (ns-3's device queue already "
            "holds one waiting packet)"
        )
    return f"{int(lp) - 1}p", "p"


def _threshold(th_pkts: float, unit: str, mps: int) -> str:
    """A RED threshold in packets as the queue disc sees it: one packet less (the one in the
    device queue), in bytes when the queue counts bytes; never exactly 0 (ns-3 reads MinTh =
    MaxTh = 0 as "choose them yourself")."""
    v = max(float(th_pkts) - 1.0, 1e-9)
    return _num(v * mps if unit == "B" else v)


def codel_min_bytes(max_packet: int) -> int:
    """CoDel's ``MinBytes`` for a largest packet of ``max_packet`` bytes: one more. RFC 8289 (and
    Linux, and qoslab) keep the sojourn time from counting as above target while the queue holds
    at most one MTU (``bytes() <= MAXPACKET``); ns-3.37's test is ``GetNBytes() < MinBytes``, so
    with MinBytes = MTU a queue holding exactly one full packet can be dropped from. Under
    FQ-CoDel, where each flow queue holds a packet or two, that dropped 7 % more than qoslab,
    left the link idle 1.5 % of the time and queued 15 % less (docs/validation/ns3.md)."""
    return int(max_packet) + 1


def queue_disc(where: str, q: dict[str, Any], link: dict[str, Any], max_packet: int) -> dict[str, Any]:
    """The ns-3 queue disc for one link direction's queue ``q``: ``{"type_id", "attributes":
    [[name, value], ...], "early_drop_reasons": [...]}`` and, for fq_codel, ``quantum``. Which
    queue disc, or why there is none, the kind says itself (its ``NS3`` in the core, the
    schema's ``x-ns3``); this module only sets each queue disc's attributes."""
    kind = str(q.get("type"))
    ns3 = schema.queue_kinds()[kind]["x-ns3"] if kind in schema.queue_kinds() else {}
    if "refused" in ns3:
        raise Ns3Refusal(f"{where}: {ns3['refused']}")
    mapper = _QUEUE_DISCS.get(ns3.get("queue_disc", ""))
    if mapper is None:
        raise Ns3Refusal(f"{where}: queue type {kind!r} is not supported by the ns-3 export")
    return mapper(where, q, link, max_packet)


def _fifo(where: str, q: dict[str, Any], link: dict[str, Any], max_packet: int) -> dict[str, Any]:
    size, _ = queue_limit(where, q)
    return {"type_id": "ns3::FifoQueueDisc", "attributes": [["MaxSize", size]], "early_drop_reasons": []}


def _codel(where: str, q: dict[str, Any], link: dict[str, Any], max_packet: int) -> dict[str, Any]:
    size, _ = queue_limit(where, q)
    return {
        "type_id": "ns3::CoDelQueueDisc",
        "attributes": [
            ["MaxSize", size],
            ["Target", ns_duration(q, "target_ns")],
            ["Interval", ns_duration(q, "interval_ns")],
            ["MinBytes", str(codel_min_bytes(max_packet))],
            ["UseEcn", _bool(q.get("ecn"))],
            ["UseL4s", "false"],
            ["CeThreshold", NEVER],
        ],
        "early_drop_reasons": EARLY_CODEL,
    }


def _red_common(q: dict[str, Any], link: dict[str, Any], size: str, mps: int) -> list[list[str]]:
    return [
        ["MaxSize", size],
        ["MeanPktSize", str(mps)],
        ["IdlePktSize", str(mps)],
        ["ARED", "false"],
        ["AdaptMaxP", "false"],
        ["FengAdaptive", "false"],
        ["NLRED", "false"],
        ["Ns1Compat", "false"],
        ["LinkBandwidth", f"{int(link['bandwidth_bps'])}bps"],  # the idle-time decay
        ["LinkDelay", ns_time(link["delay_s"])],
    ]


def _red(where: str, q: dict[str, Any], link: dict[str, Any], max_packet: int) -> dict[str, Any]:
    size, unit = queue_limit(where, q)
    if bool(q.get("byte_mode")) != (unit == "B"):
        raise Ns3Refusal(
            f"{where}: ns-3's RED scales its drop probability by packet size exactly when its "
            "limit is in bytes; byte_mode must match the limit's unit"
        )
    mps = int(q["mean_pkt_size_bytes"])
    max_p = float(q["max_p"])
    return {
        "type_id": "ns3::RedQueueDisc",
        "attributes": [
            *_red_common(q, link, size, mps),
            ["MinTh", _threshold(q["min_th"], unit, mps)],
            ["MaxTh", _threshold(q["max_th"], unit, mps)],
            ["QW", _num(q["w_q"])],
            ["LInterm", _num(1.0 / max_p) if max_p > 0 else "1e12"],
            ["Gentle", _bool(q.get("gentle"))],
            ["Wait", _bool(q.get("wait", True))],
            ["UseEcn", _bool(q.get("ecn"))],
            ["UseHardDrop", "true"],  # above max_th (2 max_th gentle): drop, as Floyd and ns-2
        ],
        "early_drop_reasons": EARLY_RED,
    }


def _step(where: str, q: dict[str, Any], link: dict[str, Any], max_packet: int) -> dict[str, Any]:
    """DCTCP's marking threshold K as the program's ``QoslabStepQueueDisc``: a FIFO marking an
    ECN-capable arrival while more than K waits (one packet less in the queue disc: the device
    queue holds one), tail drop at the limit, no early drop of packets that are not ECN-capable
    (qoslab's `step`; ns-3's RED with MinTh = MaxTh = K would drop them at K)."""
    size, unit = queue_limit(where, q)
    mps = int(q.get("mean_pkt_size_bytes", DEFAULT_MEAN_PKT_SIZE))
    if q.get("threshold_bytes") is not None:
        if unit != "B":
            raise Ns3Refusal(f"{where}: a step threshold in bytes needs a byte limit in ns-3")
        k = f"{max(int(q['threshold_bytes']) - mps, 0)}B"
    else:
        if unit != "p":
            raise Ns3Refusal(f"{where}: a step threshold in packets needs a packet limit in ns-3")
        k = f"{max(int(q['threshold_pkts']) - 1, 0)}p"
    return {
        "type_id": "ns3::QoslabStepQueueDisc",
        "attributes": [["MaxSize", size], ["Threshold", k]],
        "early_drop_reasons": [],
    }


def _fq_codel(where: str, q: dict[str, Any], link: dict[str, Any], max_packet: int) -> dict[str, Any]:
    size, unit = queue_limit(where, q)
    if unit != "p":
        raise Ns3Refusal(f"{where}: ns-3's FqCoDelQueueDisc counts its limit in packets only")
    return {
        "type_id": "ns3::FqCoDelQueueDisc",
        "attributes": [
            ["MaxSize", size],
            ["Target", ns_duration(q, "target_ns")],
            ["Interval", ns_duration(q, "interval_ns")],
            ["Flows", str(int(q["flows"]))],
            ["DropBatchSize", str(int(q.get("drop_batch", q.get("drop_batch_size", 64))))],
            # the hash's salt: drawn per run by the export (fq_codel_perturbation), as Linux
            # draws it when the qdisc is created and qoslab from the link's random stream
            ["Perturbation", str(int(q.get("perturbation", 0)))],
            ["UseEcn", _bool(q.get("ecn"))],
            ["UseL4s", "false"],
            ["CeThreshold", NEVER],
            ["EnableSetAssociativeHash", "false"],
        ],
        # Quantum is not an attribute in ns-3.37: the program calls SetQuantum.
        "quantum": int(q["quantum_bytes"]),
        "early_drop_reasons": EARLY_CODEL,
    }


def fq_codel_perturbation(seed: int, where: str) -> int:
    """FQ-CoDel's hash salt for run ``seed`` at ``where`` (a link direction): a 32-bit value
    fixed by the two. With a salt of 0 in every run, ns-3 hashed the same flows to the same
    queues in every seed (on dumbbell-50-fq_codel no two of the 50 flows ever shared one of the
    1024 queues), where qoslab (and Linux, at qdisc creation) draw it: 50 flows in 1024 queues
    share one in 70 % of the runs, and the flows sharing it get half a share each."""
    return zlib.crc32(f"qoslab-fq_codel:{seed}:{where}".encode())


def _pie(where: str, q: dict[str, Any], link: dict[str, Any], max_packet: int) -> dict[str, Any]:
    size, _ = queue_limit(where, q)
    return {
        "type_id": "ns3::PieQueueDisc",
        "attributes": [
            ["MaxSize", size],
            ["MeanPktSize", str(int(q.get("mean_pkt_size_bytes") or 1000))],
            ["A", _num(q["alpha"])],
            ["B", _num(q["beta"])],
            ["Tupdate", ns_duration(q, "t_update_ns")],
            ["Supdate", "0ns"],
            ["QueueDelayReference", ns_duration(q, "target_ns")],
            ["MaxBurstAllowance", ns_duration(q, "max_burst_ns")],
            ["UseDequeueRateEstimator", "false"],  # timestamps, as RFC 8033's Linux default
            ["UseCapDropAdjustment", "true"],
            ["UseEcn", _bool(q.get("ecn"))],
            ["MarkEcnThreshold", _num(q.get("mark_ecn_th", 0.1))],
            ["UseDerandomization", _bool(q.get("derandomize"))],
            ["ActiveThreshold", NEVER],
            ["CeThreshold", NEVER],
            ["UseL4s", "false"],
        ],
        "early_drop_reasons": EARLY_RED,
    }


#: How each ns-3 queue disc a kind names (its ``x-ns3``) is configured from the kind's flat form.
_QUEUE_DISCS: dict[str, Callable[[str, dict[str, Any], dict[str, Any], int], dict[str, Any]]] = {
    "ns3::FifoQueueDisc": _fifo,
    "ns3::RedQueueDisc": _red,
    "ns3::QoslabStepQueueDisc": _step,
    "ns3::CoDelQueueDisc": _codel,
    "ns3::FqCoDelQueueDisc": _fq_codel,
    "ns3::PieQueueDisc": _pie,
}


def tcp_socket(where: str, f: dict[str, Any], *, sack_workaround: bool = SACK_WORKAROUND) -> dict[str, Any]:
    """The ns-3 TCP sender and receiver sockets of flow ``f``: ``{"congestion", "recovery",
    "socket": [[attr, value]], "defaults": [[path, value]], "pacing"}``. ``defaults`` are set
    with Config::SetDefault just before the flow's sockets are created (the RTT estimator, the
    congestion control's own parameters and pacing's are read from defaults at creation)."""
    t = f["tcp"]
    variant = t["variant"]
    flavour = t.get("flavour", "ns2")
    if flavour != "ns2":
        raise Ns3Refusal(
            f"{where}: its TCP sender is the {flavour} flavour's (tcp.flavour = {json.dumps(flavour)}), "
            'which the ns-3 export does not translate; export it with tcp.flavour = "ns2" (`qoslab '
            "crosscheck --against ns3 --tcp-flavour linux` runs qoslab's side in the linux flavour)"
        )
    if variant not in CONGESTION:
        raise Ns3Refusal(
            f"{where}: TCP variant {variant!r} is not supported by the ns-3 export "
            f"(only {', '.join(CONGESTION)})"
        )
    if t.get("linux_cc"):
        raise Ns3Refusal(
            f"{where}: tcp.cc.{variant} sets the linux flavour's kernel module parameters, which "
            "ns-3's senders do not have; remove it or run it with `qoslab run`"
        )
    if f.get("stop_s") is not None:
        raise Ns3Refusal(
            f"{where}: a TCP flow with `stop` is not supported by the ns-3 export (an ns-3 socket "
            "sends whatever the application has already written to its buffer)"
        )
    if not t.get("syn", True):
        raise Ns3Refusal(
            f"{where}: `syn = false` cannot be expressed (ns-3's TCP always opens with a handshake)"
        )
    if int(t["ack_size_bytes"]) != TCP_HEADERS:
        raise Ns3Refusal(
            f"{where}: ack_size {t['ack_size_bytes']} B cannot be expressed (an ns-3 ACK is {TCP_HEADERS} B)"
        )
    if t.get("max_burst"):
        raise Ns3Refusal(f"{where}: max_burst cannot be expressed (ns-3's TCP has no burst limit)")
    if not math.isclose(float(t["max_rto_s"]), NS3_MAX_RTO_S):
        raise Ns3Refusal(f"{where}: max_rto must be {NS3_MAX_RTO_S:g} s (ns-3.37's fixed RTO cap)")
    sender = schema.sender_kinds()[variant]
    cc = sender["x-exports"]["ns3"]
    pacing = bool(t.get("pacing", False))
    if cc.get("needs_pacing") and not pacing:
        raise Ns3Refusal(f"{where}: {cc['needs_pacing']}")
    seg = int(f["packet_size_bytes"]) - TCP_HEADERS
    window_bytes = int(t["window_pkts"]) * seg
    ecn = bool(t.get("ecn")) or sender["x-implies-ecn"]
    socket = [
        ["SegmentSize", str(seg)],
        ["InitialCwnd", str(int(t["initial_window_pkts"]))],
        ["InitialSlowStartThreshold", str(window_bytes)],
        # qoslab's `window` caps the packets outstanding: the receiver's advertised window
        ["RcvBufSize", str(window_bytes)],
        # the application keeps the send buffer full, so the sender is limited by the window
        # alone; a send buffer larger than the peer's window crashes ns-3.37 (a null TcpTxItem
        # in TcpRateLinux::SkbSent after a timeout with SACK, dumbbell-5-red seeds 1, 3, 5, 8)
        ["SndBufSize", str(window_bytes)],
        ["WindowScaling", _bool(window_bytes > 65535)],
        ["MaxWindowSize", "65535"],
        ["Sack", _bool(t.get("sack", False) or sender["x-sack"] or sack_workaround)],
        ["Timestamp", "false"],
        ["LimitedTransmit", "true"],
        ["ReTxThreshold", str(int(t.get("dupack_threshold", 3)))],
        ["MinRto", ns_time(t["min_rto_s"])],
        ["ClockGranularity", ns_time(t["tick_s"])],
        ["ConnTimeout", ns_time(t["initial_rto_s"])],
        ["ConnCount", str(NEVER_GIVE_UP)],
        ["DataRetries", str(NEVER_GIVE_UP)],
        ["DelAckCount", "2" if t["delayed_ack"] else "1"],
        ["DelAckTimeout", ns_time(t["delack_interval_s"])],
        ["TcpNoDelay", "true"],
        ["PersistTimeout", "6000000000ns"],
        ["UseEcn", "On" if ecn else "Off"],
    ]
    defaults = [
        ["ns3::RttEstimator::InitialEstimation", ns_time(t["initial_rto_s"])],
        ["ns3::RttMeanDeviation::Alpha", "0.125"],
        ["ns3::RttMeanDeviation::Beta", "0.25"],
        ["ns3::TcpSocketState::EnablePacing", _bool(pacing)],
        ["ns3::TcpSocketState::MaxPacingRate", "4000000000bps"],
        ["ns3::TcpSocketState::PacingSsRatio", "200"],
        ["ns3::TcpSocketState::PacingCaRatio", "120"],
        ["ns3::TcpSocketState::PaceInitialWindow", "false"],
        *_congestion_defaults(cc, t),
    ]
    return {
        "congestion": CONGESTION[variant],
        "recovery": RECOVERY,
        "socket": socket,
        "defaults": defaults,
        "pacing": pacing,
        "restart_rto_on_fast_retransmit": RESTART_RTO_ON_FAST_RETRANSMIT,
        "karn_backoff": KARN_BACKOFF,
        "loss_exit_increase": LOSS_EXIT_INCREASE,
        "stop_idle_rto_timer": STOP_IDLE_RTO_TIMER,
        "raw_rtt_sample": RAW_RTT_SAMPLE,
        "linux_rate_estimator": LINUX_RATE_ESTIMATOR,
        "rtt_estimator": RTT_ESTIMATOR,
    }


def _congestion_defaults(cc: dict[str, Any], t: dict[str, Any]) -> list[list[str]]:
    """The congestion control's own attributes, as its sender declares them (Linux's values
    unless the flow's ``tcp`` key says otherwise)."""
    out = []
    for name, value in cc["defaults"]:
        if isinstance(value, dict):
            v: Any = t.get(value["key"], value["default"])
            value = _bool(v) if isinstance(value["default"], bool) else _num(v)
        out.append([name, value])
    return out


def udp_source(where: str, f: dict[str, Any]) -> dict[str, Any]:
    """A UDP flow's process: ``{"process": "cbr" | "poisson" | "onoff", "interval_s", "on_s",
    "off_s"}``; the interval is one packet's time at the flow's rate (its size on the wire)."""
    kind = f["kind"]
    if not schema.source_exports(kind, "ns3"):
        raise Ns3Refusal(f"{where}: flow kind {kind!r} is not supported by the ns-3 export")
    return {
        "process": kind,
        "interval_s": 8.0 * int(f["packet_size_bytes"]) / float(f["rate_bps"]),
        "on_s": f.get("on_s"),
        "off_s": f.get("off_s"),
    }
