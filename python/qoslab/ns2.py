"""ns-2 (2.35) back end: export a resolved qoslab scenario to Tcl, run it, parse it.

The resolved scenario is the plain ``dict`` produced by qoslab's Rust core (SI
units: seconds, bits per second, bytes).  :func:`to_tcl` turns it into an ns-2
script that, when run with ``ns script.tcl``, writes one JSON results file;
:func:`run_ns2` does both and returns the parsed results::

    {"seed": int, "wall_time_s": float,
     "flows": [{"name", "throughput_bps", "delivered_packets", "sent_packets",
                "retransmitted_packets"}],
     "links": [{"name", "direction": "ab" | "ba", "arrivals", "departures",
                "drops", "early_drops", "forced_drops"}],
     "total_drops": int, "packet_hops": int}

DiffServ scenarios (see "DiffServ" below) add ``by_dscp`` and
``policed_drops`` to every link direction, ``marked``, ``colored`` and
``policed_drops`` to every flow, and a top-level ``conditioners`` list.

No per-packet tracing is used.  Every link direction gets a queue monitor
(``QueueMonitor``, or ``QueueMonitor/ED`` with an early-drop snoop for RED),
and per-flow counters (TCP sink ``bytes_``, ``Agent/LossMonitor``, TCP
``ndatapack_``/``nrexmitpack_``) are read by Tcl procedures at the edges of the
measurement window, so a run costs no more memory than the bare simulation.

Semantics pinned down by this module (ns-2 itself is ambiguous or odd here):

* Queue limits count packets (or bytes) *waiting* in the queue, not the packet
  being serialised onto the link.  ns-2's DropTail holds at most ``limit_ - 1``
  packets, while its RED holds ``limit_``, so DropTail is given
  ``limit_pkts + 1``.  A byte-limited DropTail accepts a packet iff the queued
  bytes plus the packet fit in ``limit_bytes``.  ns-2's RED can only measure a
  byte limit in whole ``mean_pkt_size_bytes`` units and checks it *before*
  adding the arriving packet (it may overshoot by one packet); a byte limit
  that is not a multiple of the mean packet size is reported as unsupported.
  A queue with neither limit gets ``UNLIMITED_QUEUE_PKTS`` packets.
* RED thresholds are in packets.  With a byte limit (``queue_in_bytes_``)
  ns-2 compares the byte average against ``min_th * mean_pkt_size_bytes``.
  A ``min_th`` of 0 is sent as a tiny positive number, because 0 makes ns-2
  choose a threshold itself.  ``use_mark_p_`` is off, so the drop
  classification is Floyd's: random drops between the thresholds are *early*;
  drops at overflow or with the average above ``max_th`` (above
  ``2 * max_th`` when gentle) are *forced*.  With ECN, early drops of
  ECN-capable (TCP) packets become marks and are not counted as drops.  RED
  averages the queue length *before* the arrival, does not drop early when
  fewer than two packets are queued, and after an idle period decays the
  average as if ``bandwidth / (8 * mean_pkt_size)`` packets per second had
  left.
* ``packet_size_bytes`` is the size of a data packet on the wire: ns-2 gets
  ``packetSize_ = packet_size_bytes - 40`` and adds its 40 header bytes
  (``useHeaders_``); ``ack_size_bytes`` is the size of an ACK on the wire.  As in
  ns-2 (and qoslab), segment 0 is a 40-byte SYN unless ``syn`` is false, and cwnd
  opens to ``initial_window_pkts`` when it is acknowledged.  ``TCP_FIXED_PARAMS``
  lists the other pinned TCP knobs (ns-2 defaults, limited transmit included).
  ns-2 measures RTT in whole ``tick_s`` units from a random per-agent tick
  phase.  If any RED queue has ``ecn``, all TCP senders are ECN-capable.
* Poisson sources use ``Application/Traffic/Exponential`` with
  ``burst_time_ 0``: every gap between packets is ``interval + Exp(idle)``,
  where ``interval = 8 * size / rate_``.  Here ``rate_`` is set to
  ``POISSON_RATE_FACTOR`` times the mean rate, so the minimum gap is 1e-6 of the
  mean gap, and ``idle`` is the mean gap less that.  The mean rate is exact;
  the process is a Poisson process shifted by that tiny constant.  The first
  packet leaves one gap after ``start_s``.
* On/off sources use the same ns-2 class: each burst is
  ``max(1, round(Exp(on_s / interval)))`` packets at the peak rate, each idle
  period is ``Exp(off_s)`` added to one packet interval, and the source starts
  with an idle period.  CBR sends its first packet at ``start_s``.
* ``stop_s``: applications stop generating at ``stop_s``.  A TCP sender stops
  sending new data but still retransmits what is outstanding.
* Throughput is the number of bytes delivered in order to the receiver within
  the measurement window, times 8, divided by the window length.  For TCP this is
  the sink's in-order byte count, which excludes duplicates.
  ``delivered_packets``, ``sent_packets``, ``retransmitted_packets`` and all
  link counters cover the whole run.  ``sent_packets`` counts TCP data packets
  including retransmissions.  For UDP, a snoop behind the agent counts the
  packets sent.
* Routing is ns-2's default static shortest path by hop count; ties between
  equal-cost paths are broken by ns-2 and may differ from qoslab's choice.
  Agents get TTL 255.
* DiffServ (``resolved["conditioners"]``, and queues of type rio, wred or
  multi) goes into ns-2's dsRED module (docs/ns2-behaviour.md section 9).  A
  link direction with a conditioner gets a ``Queue/dsRED/edge``, one with a
  rio/wred/multi queue and no conditioner a ``Queue/dsRED/core``; all other
  directions keep DropTail/RED.  What ns-2 cannot express is refused by
  :func:`unsupported_reason`:

  - ns-2 marks only inside an edge queue, by a policy table keyed on
    (source node, destination node) -- never on the flow or the incoming
    codepoint -- with one policy per packet, first match wins.  A conditioner
    is exported when the packets it must meter are exactly those of some node
    pairs: per-flow scope needs distinct node pairs per flow, a ``dscp``
    classifier needs a codepoint known statically (set by the host or by a
    marker writing a single codepoint), and a packet may meet only one
    matching conditioner per link direction.  Every other packet through an
    edge queue gets a Null policy that rewrites it to its own (statically
    known) codepoint, so a packet marked per packet upstream cannot cross a
    later edge queue unless a colour-blind conditioner there re-marks it.
  - Meters: token_bucket, srtcm, trtcm, tsw2cm, tsw3cm (ns-2 TokenBucket,
    srTCM, trTCM, TSW2CM, TSW3CM; rates in bit/s, buckets in bytes, buckets
    start full).  ns-2's policers are colour-blind: a colour-aware meter is
    exported only when all its packets arrive pre-coloured green.  TSW3CM's
    window is fixed at 1 s.  A two-colour meter's non-conforming packets take
    the ``TWO_COLOUR_OUT`` ("yellow") action.  ns-2 policers never drop: a
    ``drop`` action writes a private codepoint that the edge queue maps to an
    extra physical queue in DROP mode with threshold 0, so the packet is
    dropped on arrival; these drops are reported as ``policed_drops`` and
    excluded from the link's ``drops``/``forced_drops`` (``total_drops``
    includes them).  Such an extra queue would shift ns-2's round-robin
    pointer, so ``drop`` is refused with rr/wrr multi queues.
  - Queues: rio (RIO-C/RIO-D), wred, droptail (DROP mode) and multi
    (priority -> PRI, rr -> RR, wrr -> WRR with whole-packet weights; no
    drr).  dsRED's RED is not Queue/RED: packet mode only, no gentle, no wait
    (drops are spread with p_b/(1 - count*p_b)), integer thresholds, the
    physical limit checked before the average is updated, one ``limit_`` and
    one mean packet size for all physical queues of a multi queue, at most 8
    physical queues, 3 precedences, 20 policies.  A ``red`` queue inside a
    multi queue, byte limits and limits shared by a multi queue are refused.
  - Codepoints: ns-2 keeps only 40 (0..39).  The exporter numbers its own
    codepoints: one per DSCP a host sets, and one per (policy entry, colour)
    so that per-flow and per-colour counts can be read back; if that needs
    more than 40 it falls back to one per DSCP (then ``marked``/``colored``
    of conditioned flows and the conditioners' ``colored`` are None).  Hosts
    set the codepoint of the flow's ``dscp`` (``prio_``); TCP ACKs carry
    ``ACK_DSCP`` (0), as ns-2's TCP sink writes its own ``prio_``.
  - ``by_dscp`` (dsRED directions only, else None) maps each DSCP that can
    reach the queue to ``arrivals`` (after marking, at an edge queue),
    ``early_drops``, ``forced_drops`` (limit overflow and average above
    ``max_th``) and ``departures`` (accepted minus still queued at the end;
    None when packets of several DSCPs share a virtual queue that is not
    empty at the end).  A flow's ``marked`` ({DSCP: packets}) and ``colored``
    ({colour: packets}) count its data packets at the conditioner that met
    them, when that conditioner's policy entry meters this flow alone; a flow
    no conditioner meets has ``marked = {dscp: sent_packets}`` and
    ``colored = None``; otherwise both are None.  ``conditioners`` lists
    ``{"name", "colored"}`` per conditioner.  All these cover the whole run.
* Seeds: ``$defaultRNG seed S`` where S is the qoslab seed hashed (splitmix64)
  into 1..2**31-2.  ns-2 rejects seeds outside that range, reads 0 as "seed from
  the clock", and gives correlated streams for small raw seeds such as 1, 2, 3.
  The default RNG drives RED's drops, the exponential sources and TCP's tick
  phase, so one seed makes a run reproducible.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import tempfile
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from qoslab import _core

__all__ = [
    "TCP_FIXED_PARAMS",
    "Ns2Error",
    "ns2_available",
    "run_ns2",
    "to_tcl",
    "unsupported_reason",
]

#: Environment variable that may name the ns-2 binary (default: ``ns`` on PATH).
NS_ENV_VAR = "QOSLAB_NS2"

#: Queue limit used when a queue has neither ``limit_pkts`` nor ``limit_bytes``.
UNLIMITED_QUEUE_PKTS = 10_000_000

#: ``rate_`` of a Poisson source, as a multiple of its mean rate (see module doc).
POISSON_RATE_FACTOR = 1.0e6

#: TTL given to every agent (ns-2's default of 32 would cap path length).
AGENT_TTL = 255

#: ns-2 agent counters are 32-bit; poll them often enough to see every wrap.
_COUNTER_SPAN_BYTES = 2**31

#: TCP agent settings pinned regardless of the scenario (ns-2.35 defaults
#: noted where they differ).  Scenario-driven settings are added per flow.
#: Read at each :func:`to_tcl` call, so a caller may change an entry, e.g.
#: ``singledup_`` to "1" to compare against ns-2's limited transmit.
TCP_FIXED_PARAMS: dict[str, str] = {
    "delay_growth_": "true",  # ns default: cwnd 1 until the SYN is acked
    "useHeaders_": "true",  # ns default: 40 header bytes on every data packet
    "windowInitOption_": "1",  # initial cwnd = windowInit_
    "windowOption_": "1",  # standard AIMD
    "singledup_": "1",  # ns default: limited transmit (RFC 3042), as qoslab
    "numdupacks_": "3",
    "numdupacksFrac_": "-1",
    "bugFix_": "true",
    "timestamps_": "false",
    "ts_resetRTO_": "false",
    "overhead_": "0",
    "maxcwnd_": "0",
    "max_ssthresh_": "0",
    "decrease_num_": "0.5",
    "increase_num_": "1.0",
    "aggressive_maxburst_": "1",
    "slow_start_restart_": "true",
    "rfc2988_": "true",
    "timerfix_": "true",
    "srtt_init_": "0",
    "rttvar_init_": "12",
    "rttvar_exp_": "2",
    "T_SRTT_BITS": "3",
    "T_RTTVAR_BITS": "2",
    "frto_enabled_": "0",
    "sfrto_enabled_": "0",
    "QOption_": "0",
    "EnblRTTCtr_": "0",
    "noFastRetrans_": "false",
    "qs_enabled_": "false",
    "old_ecn_": "0",
}

#: Extra settings for ``Agent/TCP/Newreno`` (the ns-2.35 defaults, made explicit).
NEWRENO_FIXED_PARAMS: dict[str, str] = {
    "newreno_changes_": "0",
    "newreno_changes1_": "1",
    "partial_window_deflation_": "1",
    "exit_recovery_fix_": "0",
}

_TCP_CLASSES = {"reno": "Agent/TCP/Reno", "newreno": "Agent/TCP/Newreno"}
_FLOW_KINDS = ("tcp", "cbr", "onoff", "poisson")
_DS_QUEUE_TYPES = ("rio", "wred", "multi")

#: Why RI+O cannot be exported: dsRED judges each precedence on one average (RIO-C, RIO-D,
#: WRED) and has no second test of OUT packets on avg_out = avg_total - avg_in.
_RIO_PLUS_O_REASON = (
    "queue type 'rio_plus_o' (RI+O) has no ns-2 equivalent: dsRED's RIO-C/RIO-D/WRED judge "
    "each precedence on one average and cannot test OUT packets a second time on "
    "avg_out = avg_total - avg_in"
)


class Ns2Error(RuntimeError):
    """ns-2 is missing, failed, timed out or wrote no usable results."""


# --------------------------------------------------------------------------
# availability and validation
# --------------------------------------------------------------------------


def ns2_available() -> str | None:
    """Return the path of the ns-2 binary, or None if it cannot be found.

    The binary is ``$QOSLAB_NS2`` if that variable is set, else ``ns`` on PATH.
    """
    return shutil.which(os.environ.get(NS_ENV_VAR) or "ns")


def _is_num(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


#: Mechanisms ns-2 has no counterpart for, with the reason the export gives.
_DWRED_REFUSAL = (
    "DWRED (Bouras & Sevasti's dynamic WRED, whose thresholds follow the window a TWAM "
    "ingress signals every alpha*RTT) has no ns-2 counterpart: dsRED's thresholds are static"
)
_TWAM_REFUSAL = (
    "TWAM (Bouras & Sevasti's TCP-window-aware marker, per-flow IN probabilities from the "
    "flows' congestion windows) is not one of ns-2's dsRED policers"
)


def _core_export(q: dict) -> dict | None:
    """The core's description of a queue as a ``Queue/CLASS`` with its settings (the
    mechanism's own file says how ns-2 expresses it), or None for dsRED kinds and refusals."""
    ns2 = q.get("ns2")
    return ns2.get("queue") if isinstance(ns2, dict) else None


def _queue_reason(where: str, q: Any) -> str | None:
    """Why ns-2 cannot express queue ``q``, asked of the core (each mechanism's ``ns2``
    capability), or None. dsRED kinds (rio, wred, multi) are checked by the dsRED planner."""
    if not isinstance(q, dict):
        return f"{where}: queue must be a dict"
    ns2 = q.get("ns2")
    if isinstance(ns2, dict) and "refused" in ns2:
        return f"{where}: {ns2['refused']}"
    if ns2 == "dsred":
        return _ds_queue_reason(where, q)
    if _core_export(q) is None:
        return f"{where}: queue type {q.get('type')!r} is not supported by the ns-2 export"
    return None


def _tcp_reason(where: str, tcp: Any) -> str | None:
    if not isinstance(tcp, dict):
        return f"{where}: tcp flows need a 'tcp' parameter dict"
    if tcp.get("variant") not in _TCP_CLASSES:
        variant = tcp.get("variant")
        return f"{where}: TCP variant {variant!r} is not supported (only reno, newreno)"
    for key in ("ack_size_bytes", "window_pkts", "initial_window_pkts"):
        if not _is_int(tcp.get(key)) or tcp[key] < 1:
            return f"{where}: tcp.{key} must be a positive integer"
    if not _is_int(tcp.get("max_burst")) or tcp["max_burst"] < 0:
        return f"{where}: tcp.max_burst must be a non-negative integer (0 = unlimited)"
    for key in ("min_rto_s", "max_rto_s", "initial_rto_s", "tick_s"):
        if not _is_num(tcp.get(key)) or tcp[key] <= 0:
            return f"{where}: tcp.{key} must be a positive number"
    if tcp["max_rto_s"] < tcp["min_rto_s"]:
        return f"{where}: tcp.max_rto_s is below tcp.min_rto_s"
    if not isinstance(tcp.get("delayed_ack"), bool):
        return f"{where}: tcp.delayed_ack must be a bool"
    if tcp["delayed_ack"] and (not _is_num(tcp.get("delack_interval_s")) or tcp["delack_interval_s"] <= 0):
        return f"{where}: tcp.delack_interval_s must be positive with delayed ACKs"
    return None


def _flow_reason(where: str, f: Any, nodes: set[str]) -> str | None:
    if not isinstance(f, dict):
        return f"{where}: flow must be a dict"
    if not isinstance(f.get("name"), str):
        return f"{where}: flow name must be a string"
    kind = f.get("kind")
    if kind not in _FLOW_KINDS:
        return f"{where}: flow kind {kind!r} is not supported by the ns-2 export"
    src, dst = f.get("src"), f.get("dst")
    if src not in nodes or dst not in nodes:
        return f"{where}: src/dst must be known nodes"
    if src == dst:
        return f"{where}: src and dst are the same node"
    if not _is_int(f.get("packet_size_bytes")) or f["packet_size_bytes"] < 1:
        return f"{where}: packet_size_bytes must be a positive integer"
    start, stop = f.get("start_s"), f.get("stop_s")
    if not _is_num(start) or start < 0:
        return f"{where}: start_s must be a non-negative number"
    if stop is not None and (not _is_num(stop) or stop <= start):
        return f"{where}: stop_s must be None or after start_s"
    if kind == "tcp":
        return _tcp_reason(where, f.get("tcp"))
    rate = f.get("rate_bps")
    if not _is_num(rate) or rate <= 0:
        return f"{where}: {kind} flows need a positive rate_bps"
    if kind == "onoff":
        for key in ("on_s", "off_s"):
            if not _is_num(f.get(key)) or f[key] <= 0:
                return f"{where}: onoff flows need a positive {key}"
    return None


def _reachable(adj: dict[str, set[str]], src: str, dst: str) -> bool:
    seen = {src}
    todo = deque([src])
    while todo:
        n = todo.popleft()
        if n == dst:
            return True
        for m in adj[n]:
            if m not in seen:
                seen.add(m)
                todo.append(m)
    return False


def unsupported_reason(resolved: dict) -> str | None:
    """Return None if ns-2 can express ``resolved``, else a human-readable reason.

    Checks the structure of the resolved scenario as well as the limits of the
    ns-2 export: droptail/red queues (and rio/wred/multi queues and traffic
    conditioners, which go into ns-2's dsRED queues, see "DiffServ" in the
    module documentation), reno/newreno TCP, tcp/cbr/onoff/poisson flows, at
    most one link per node pair, one kind of limit per queue, and every flow
    routable.
    """
    if not isinstance(resolved, dict):
        return "resolved scenario must be a dict"
    duration = resolved.get("duration_s")
    if not _is_num(duration) or duration <= 0:
        return "duration_s must be a positive number"
    node_list = resolved.get("nodes")
    if not isinstance(node_list, list) or not node_list:
        return "nodes must be a non-empty list"
    if not all(isinstance(n, str) for n in node_list):
        return "node names must be strings"
    nodes = set(node_list)
    if len(nodes) != len(node_list):
        return "duplicate node names"
    adj: dict[str, set[str]] = {n: set() for n in nodes}
    pairs: set[frozenset[str]] = set()
    links = resolved.get("links")
    if not isinstance(links, list):
        return "links must be a list"
    for i, link in enumerate(links):
        where = f"link {i}"
        if not isinstance(link, dict) or not isinstance(link.get("name"), str):
            return f"{where}: link must be a dict with a string name"
        where = f"link {link['name']!r}"
        a, b = link.get("a"), link.get("b")
        if a not in nodes or b not in nodes:
            return f"{where}: endpoints must be known nodes"
        if a == b:
            return f"{where}: self-loops are not supported"
        pair = frozenset((a, b))
        if pair in pairs:
            return f"{where}: ns-2 supports only one link between a pair of nodes"
        pairs.add(pair)
        bw, delay = link.get("bandwidth_bps"), link.get("delay_s")
        if not _is_num(bw) or bw <= 0:
            return f"{where}: bandwidth_bps must be a positive number"
        if not _is_num(delay) or delay < 0:
            return f"{where}: delay_s must be a non-negative number"
        for qkey in ("queue_ab", "queue_ba"):
            reason = _queue_reason(f"{where} {qkey}", link.get(qkey))
            if reason:
                return reason
        adj[a].add(b)
        adj[b].add(a)
    flows = resolved.get("flows")
    if not isinstance(flows, list):
        return "flows must be a list"
    for i, f in enumerate(flows):
        name = f.get("name") if isinstance(f, dict) else None
        reason = _flow_reason(f"flow {name!r}" if name else f"flow {i}", f, nodes)
        if reason:
            return reason
        if not _reachable(adj, f["src"], f["dst"]):
            return f"flow {f['name']!r}: no path from {f['src']!r} to {f['dst']!r}"
    m = resolved.get("measurement")
    if not isinstance(m, dict) or not _is_num(m.get("start_s")) or not _is_num(m.get("end_s")):
        return "measurement must have numeric start_s and end_s"
    if not 0 <= m["start_s"] < m["end_s"] <= duration:
        return "measurement window must satisfy 0 <= start_s < end_s <= duration_s"
    if _ds_active(resolved):
        try:
            _ds_plan(resolved)
        except _Refusal as exc:
            return str(exc)
    return None


# --------------------------------------------------------------------------
# DiffServ: conditioners and multi-precedence queues in ns-2's dsRED queues
# --------------------------------------------------------------------------

#: The codepoint TCP ACKs carry.  ns-2's TCP sink writes its own ``prio_``
#: (default 0) into every ACK; it does not copy the data packet's codepoint.
ACK_DSCP = 0

#: The colour a two-colour meter (token_bucket, tsw2cm) gives non-conforming
#: packets; its action is taken from ``actions[TWO_COLOUR_OUT]``.  The papers'
#: OUT is AFx2, i.e. yellow (see ``crates/qoslab-core/src/ds.rs``).
TWO_COLOUR_OUT = "yellow"

#: ns-2 keeps codepoints in ``hdr_ip::prio_`` and sizes its PHB table and its
#: per-codepoint statistics by MAX_CP = 40 (diffserv/dsred.h): codepoints
#: must be 0..39.  The exporter renumbers DSCPs into this range.
NS_MAX_CP = 40
_NS_MAX_QUEUES = 8  # MAX_QUEUES, physical queues per dsRED queue
_NS_MAX_PREC = 3  # MAX_PREC, virtual queues (precedences) per physical queue
_NS_MAX_POLICIES = 20  # MAX_POLICIES, policy-table entries per edge queue

_METERS = {  # qoslab meter -> (ns-2 policy name, colours it produces)
    "token_bucket": ("TokenBucket", ("green", TWO_COLOUR_OUT)),
    "srtcm": ("srTCM", ("green", "yellow", "red")),
    "trtcm": ("trTCM", ("green", "yellow", "red")),
    "tsw2cm": ("TSW2CM", ("green", TWO_COLOUR_OUT)),
    "tsw3cm": ("TSW3CM", ("green", "yellow", "red")),
}
#: Markers qoslab has and ns-2's dsRED lacks, with why (the exporter refuses them).
_NOT_NS2_MARKERS = {
    "probe": "the adaptive probe marker (meter type 'probe') reads each flow's TCP sequence "
    "numbers; ns-2's dsRED policers only meter rates, so it cannot be exported",
}
_SCHEDULERS = {"priority": "PRI", "rr": "RR", "wrr": "WRR"}
_PRE_NOT_GREEN = frozenset((12, 14, 20, 22, 28, 30, 36, 38))  # pre-coloured yellow/red (AFx2/AFx3)


class _Refusal(Exception):
    """The scenario cannot be expressed with ns-2's dsRED queues."""


def _is_dscp(x: Any) -> bool:
    return _is_int(x) and 0 <= x <= 63


def _is_whole(x: Any) -> bool:
    return _is_num(x) and float(x) == int(x) and 0 <= x < 2**31


def _ds_active(resolved: dict) -> bool:
    """True if the scenario uses conditioners or rio/wred/multi queues."""
    if resolved.get("conditioners"):
        return True
    return any(
        isinstance(link.get(qk), dict) and link[qk].get("type") in _DS_QUEUE_TYPES
        for link in resolved.get("links", [])
        for qk in ("queue_ab", "queue_ba")
    )


def _ds_queue_reason(where: str, q: dict) -> str | None:
    """Check a rio, wred or multi queue against what ns-2's dsRED can do."""
    qtype = q["type"]
    if qtype == "multi":
        for key in ("limit_pkts", "limit_bytes"):
            if q.get(key) is not None:
                return f"{where}: ns-2's dsRED has no limit shared by all queues of a multi queue ({key})"
        sched = q.get("scheduler")
        if sched == "drr":
            return f"{where}: ns-2's dsRED has no deficit round robin (only priority, rr, wrr)"
        if sched not in _SCHEDULERS:
            return f"{where}: scheduler {sched!r} is not supported (only priority, rr, wrr)"
        subs = q.get("queues")
        if not isinstance(subs, list) or not 1 <= len(subs) <= _NS_MAX_QUEUES:
            return f"{where}: a multi queue needs 1 to {_NS_MAX_QUEUES} queues (ns-2 MAX_QUEUES)"
        seen: set[int] = set()
        defaults = 0
        for k, sub in enumerate(subs):
            w = f"{where} queues[{k}]"
            if not isinstance(sub, dict):
                return f"{w}: must be a dict"
            dscps = sub.get("dscp")
            if dscps is None:
                defaults += 1
            elif not isinstance(dscps, list) or not all(_is_dscp(d) for d in dscps):
                return f"{w}: dscp must be None or a list of codepoints 0..63"
            elif seen & set(dscps):
                return f"{w}: codepoint(s) {sorted(seen & set(dscps))} already belong to another queue"
            else:
                seen |= set(dscps)
            if sched == "wrr":
                wt = sub.get("weight")
                if not _is_num(wt) or wt < 1 or float(wt) != int(wt):
                    return f"{w}: ns-2's WRR counts whole packets; weight must be a positive integer"
            inner = sub.get("queue")
            if isinstance(inner, dict) and inner.get("type") == "rio_plus_o":
                return f"{w}: {_RIO_PLUS_O_REASON}"
            if isinstance(inner, dict) and inner.get("type") == "dwred":
                return f"{w}: {_DWRED_REFUSAL}"
            if not isinstance(inner, dict) or inner.get("type") not in ("droptail", "rio", "wred"):
                kind = inner.get("type") if isinstance(inner, dict) else inner
                return (
                    f"{w}: queue type {kind!r} cannot be a dsRED physical queue (only droptail, rio, "
                    "wred; ns-2's dsRED RED differs from Queue/RED, use a one-precedence rio)"
                )
            if inner["type"] == "droptail":
                reason = _ds_droptail_reason(w, inner)
            else:
                reason = _ds_queue_reason(w, inner)
            if reason:
                return reason
        if defaults > 1:
            return f"{where}: at most one queue may be the default (dscp None)"
        limits = {sub["queue"].get("limit_pkts") for sub in subs if sub["queue"]["type"] != "droptail"}
        if len(limits) > 1:
            return (
                f"{where}: ns-2's dsRED gives every physical queue the same limit_; the rio/wred queues "
                f"have different limit_pkts {sorted(limits, key=str)}"
            )
        shared = next(iter(limits)) if limits else None
        for k, sub in enumerate(subs):
            lp = sub["queue"].get("limit_pkts")
            if sub["queue"]["type"] == "droptail" and shared is not None and (lp is None or lp > shared):
                return (
                    f"{where} queues[{k}]: a droptail queue's limit must not exceed the rio/wred "
                    f"queues' limit {shared} (ns-2's dsRED limit_ applies to every physical queue)"
                )
        sizes = {sub["queue"]["mean_pkt_size_bytes"] for sub in subs if sub["queue"]["type"] != "droptail"}
        if len(sizes) > 1:
            return f"{where}: ns-2's dsRED has one mean packet size for all its queues, not {sorted(sizes)}"
        return None
    if qtype == "rio" and q.get("mode") not in ("coupled", "decoupled"):
        return f"{where}: rio mode must be 'coupled' or 'decoupled'"
    if q.get("limit_bytes") is not None:
        return f"{where}: ns-2's dsRED queues count packets; limit_bytes is not supported"
    lp = q.get("limit_pkts")
    if lp is not None and (not _is_int(lp) or lp < 1):
        return f"{where}: limit_pkts must be a positive integer"
    w_q = q.get("w_q")
    if not _is_num(w_q) or not 0 < w_q <= 1:
        return f"{where}: w_q must be in (0, 1]"
    if q.get("gentle") is not False:
        return f"{where}: ns-2's dsRED has no gentle mode (set gentle = false)"
    if q.get("wait") is not False:
        return (
            f"{where}: ns-2's dsRED has no wait option; it spreads drops with p_b/(1 - count*p_b) "
            "(set wait = false)"
        )
    mps = q.get("mean_pkt_size_bytes")
    if not _is_int(mps) or mps < 1:
        return f"{where}: mean_pkt_size_bytes must be a positive integer"
    precs = q.get("precedences")
    if not isinstance(precs, list) or not 1 <= len(precs) <= _NS_MAX_PREC:
        return f"{where}: 1 to {_NS_MAX_PREC} precedences are needed (ns-2 MAX_PREC)"
    for k, pr in enumerate(precs):
        if not isinstance(pr, dict):
            return f"{where} precedence {k}: must be a dict"
        mn, mx, mp = pr.get("min_th"), pr.get("max_th"), pr.get("max_p")
        if not _is_whole(mn) or not _is_whole(mx):
            return (
                f"{where} precedence {k}: ns-2's dsRED reads thresholds with atoi(); "
                f"min_th {mn!r} and max_th {mx!r} must be whole numbers of packets"
            )
        if mn > mx:
            return f"{where} precedence {k}: min_th must not exceed max_th"
        if not _is_num(mp) or not 0 < mp <= 1:
            return f"{where} precedence {k}: max_p must be in (0, 1]"
    return None


def _ds_droptail_reason(where: str, q: dict) -> str | None:
    if q.get("limit_bytes") is not None:
        return f"{where}: a droptail queue inside dsRED counts packets; limit_bytes is not supported"
    lp = q.get("limit_pkts")
    if lp is not None and (not _is_int(lp) or lp < 1):
        return f"{where}: limit_pkts must be a positive integer"
    return None


def _conditioner_reason(where: str, c: Any, resolved: dict) -> str | None:
    if not isinstance(c, dict):
        return f"{where}: must be a dict"
    if not isinstance(c.get("name"), str):
        return f"{where}: name must be a string"
    meter = c.get("meter")
    if isinstance(meter, dict) and meter.get("type") == "twam":
        return f"{where}: {_TWAM_REFUSAL}"
    links = {lk["name"]: lk for lk in resolved["links"]}
    if c.get("link") not in links:
        return f"{where}: unknown link {c.get('link')!r}"
    if c.get("direction") not in ("ab", "ba"):
        return f"{where}: direction must be 'ab' or 'ba'"
    q = links[c["link"]]["queue_" + c["direction"]]
    if (_core_export(q) or {}).get("early_drops"):
        return (
            f"{where}: the queue of link {c['link']!r} {c['direction']} is a {q['type']} queue; ns-2 marks "
            "packets only inside a dsRED edge queue, whose RED is not Queue/RED (use droptail, rio, "
            "wred or multi there)"
        )
    if q["type"] == "droptail":
        reason = _ds_droptail_reason(f"{where} (queue of link {c['link']!r} {c['direction']})", q)
        if reason:
            return reason
    cl = c.get("classifier")
    if not isinstance(cl, dict):
        return f"{where}: classifier must be a dict"
    kind, value = cl.get("kind"), cl.get("value")
    if kind == "flow":
        if value not in {f["name"] for f in resolved["flows"]}:
            return f"{where}: classifier names unknown flow {value!r}"
    elif kind in ("src", "dst"):
        if value not in resolved["nodes"]:
            return f"{where}: classifier names unknown node {value!r}"
    elif kind == "dscp":
        if not _is_dscp(value):
            return f"{where}: dscp classifier needs a codepoint 0..63"
    elif kind != "any":
        return f"{where}: classifier kind {kind!r} is not supported (any, flow, src, dst, dscp)"
    if c.get("scope") not in ("per_flow", "aggregate"):
        return f"{where}: scope must be 'per_flow' or 'aggregate'"
    m = c.get("meter")
    if isinstance(m, dict) and m.get("type") in _NOT_NS2_MARKERS:
        return f"{where}: {_NOT_NS2_MARKERS[m['type']]}"
    if not isinstance(m, dict) or m.get("type") not in _METERS:
        kind = m.get("type") if isinstance(m, dict) else m
        return f"{where}: meter {kind!r} is not one of ns-2's policers ({', '.join(_METERS)})"
    if m.get("mode") not in ("blind", "aware"):
        return f"{where}: meter mode must be 'blind' or 'aware'"
    mtype = m["type"]
    need_rate = ["cir_bps"] + (["pir_bps"] if mtype in ("trtcm", "tsw3cm") else [])
    for key in need_rate:
        if not _is_num(m.get(key)) or m[key] <= 0:
            return f"{where}: {mtype} needs a positive {key}"
    need_bytes = {
        "token_bucket": ["cbs_bytes"],
        "srtcm": ["cbs_bytes", "ebs_bytes"],
        "trtcm": ["cbs_bytes", "pbs_bytes"],
    }.get(mtype, [])
    for key in need_bytes:
        if not _is_int(m.get(key)) or m[key] < 0:
            return f"{where}: {mtype} needs a non-negative integer {key}"
    win = m.get("win_len_s")
    if mtype == "tsw2cm" and win is not None and (not _is_num(win) or win <= 0):
        return f"{where}: tsw2cm win_len_s must be positive"
    if mtype == "tsw3cm" and win is not None and win != 1.0:
        return f"{where}: ns-2's TSW3CM has a fixed 1 s window (win_len_s must be None or 1.0)"
    acts = c.get("actions")
    if not isinstance(acts, dict):
        return f"{where}: actions must be a dict"
    for colour in _METERS[mtype][1]:
        a = acts.get(colour)
        if not (_is_dscp(a) or a in ("keep", "drop")):
            return f"{where}: action for {colour} must be a codepoint 0..63, 'keep' or 'drop'"
    return None


@dataclass
class _Stream:
    """Packets of one flow in one direction: its data, or (TCP) its ACKs."""

    index: int
    flow: int
    kind: str  # "data" or "ack"
    src: str
    dst: str
    dscp: int
    label: str


@dataclass
class _Entry:
    """One ns-2 policy-table entry of an edge queue (one meter)."""

    eid: tuple
    cond: int | None  # conditioner index; None = Null policy (keep the codepoint)
    outputs: dict[str, Any]  # colour -> DSCP or "drop"
    pairs: set[tuple[str, str]] = field(default_factory=set)
    streams: list[int] = field(default_factory=list)
    keep_in: set[int] = field(default_factory=set)


@dataclass
class _DsQueue:
    """The configuration of one dsRED queue (one link direction)."""

    edge: bool
    conf: dict  # the qoslab queue config of this direction
    entries: dict[tuple, _Entry] = field(default_factory=dict)
    arriving: set[tuple] = field(default_factory=set)  # cp keys its PHB table sees
    tcl: list[str] = field(default_factory=list)
    cp_value: dict[int, Any] = field(default_factory=dict)  # cp -> DSCP or "drop"
    cp_vq: dict[int, tuple[int, int]] = field(default_factory=dict)  # arriving cp -> (queue, prec)


@dataclass
class _DsPlan:
    cp: dict[tuple, int]  # cp key -> ns-2 codepoint
    tagged: bool  # every policy entry has codepoints of its own
    flow_cp: list[int]
    ack_cp: int
    queues: dict[int, _DsQueue]  # by link-direction index (2 * link + 0 for ab, 1 for ba)
    marked: list[Any]  # per flow: ("host", dscp), ("edge", j, {cp: (colour, value)}) or None
    cond_cps: dict[int, list[tuple[int, int, str]]]  # conditioner -> [(direction, cp, colour)]


def _bfs_counts(adj: dict[str, list[str]], s: str) -> tuple[dict[str, int], dict[str, int]]:
    """Hop distances from ``s`` and the number of shortest paths to each node."""
    dist, count = {s: 0}, {s: 1}
    todo = deque([s])
    while todo:
        u = todo.popleft()
        for v in adj[u]:
            if v not in dist:
                dist[v] = dist[u] + 1
                count[v] = count[u]
                todo.append(v)
            elif dist[v] == dist[u] + 1:
                count[v] += count[u]
    return dist, count


def _classifies(cl: dict, s: _Stream, flows: list[dict], dscps: set[int], where: str) -> bool:
    kind, value = cl["kind"], cl.get("value")
    if kind == "any":
        return True
    if kind == "flow":  # a flow's data and its ACKs (qoslab classifies packets by flow)
        return flows[s.flow]["name"] == value
    if kind == "src":
        return s.src == value
    if kind == "dst":
        return s.dst == value
    if len(dscps) != 1:
        raise _Refusal(
            f"{where}: {s.label} arrives with a codepoint an upstream conditioner chose per packet; "
            "ns-2 policies cannot classify on it (they match source/destination nodes only)"
        )
    return value in dscps


def _ds_plan(resolved: dict) -> _DsPlan:
    """Work out the dsRED configuration of every link direction, or raise _Refusal."""
    flows = resolved["flows"]
    links = resolved["links"]
    conds = resolved.get("conditioners") or []
    for f in flows:
        d = f.get("dscp", 0)
        if not _is_dscp(d):
            raise _Refusal(f"flow {f['name']!r}: dscp must be a codepoint 0..63")
    for k, c in enumerate(conds):
        name = c.get("name") if isinstance(c, dict) else None
        reason = _conditioner_reason(f"conditioner {name or k!r}", c, resolved)
        if reason:
            raise _Refusal(reason)

    # link directions and routing (ns-2: static shortest paths by hop count)
    dir_of: dict[tuple[str, str], int] = {}
    for k, lk in enumerate(links):
        dir_of[(lk["a"], lk["b"])] = 2 * k
        dir_of[(lk["b"], lk["a"])] = 2 * k + 1
    adj: dict[str, list[str]] = {n: [] for n in resolved["nodes"]}
    for a, b in dir_of:
        adj[a].append(b)
    for n in adj:
        adj[n].sort()
    bfs: dict[str, tuple[dict[str, int], dict[str, int]]] = {}

    def tree(n: str) -> tuple[dict[str, int], dict[str, int]]:
        if n not in bfs:
            bfs[n] = _bfs_counts(adj, n)
        return bfs[n]

    queues: dict[int, _DsQueue] = {}
    for k, lk in enumerate(links):
        for off, qk in ((0, "queue_ab"), (1, "queue_ba")):
            if lk[qk]["type"] in _DS_QUEUE_TYPES:
                queues[2 * k + off] = _DsQueue(edge=False, conf=lk[qk])
    link_index = {lk["name"]: k for k, lk in enumerate(links)}
    cond_at: dict[int, list[int]] = {}
    for ci, c in enumerate(conds):
        j = 2 * link_index[c["link"]] + (0 if c["direction"] == "ab" else 1)
        cond_at.setdefault(j, []).append(ci)
        q = links[j // 2]["queue_ab" if j % 2 == 0 else "queue_ba"]
        queues.setdefault(j, _DsQueue(edge=True, conf=q)).edge = True

    def dname(j: int) -> str:
        return f"link {links[j // 2]['name']!r} {'ab' if j % 2 == 0 else 'ba'}"

    streams: list[_Stream] = []
    for i, f in enumerate(flows):
        streams.append(
            _Stream(len(streams), i, "data", f["src"], f["dst"], f.get("dscp", 0), f"flow {f['name']!r}")
        )
        if f["kind"] == "tcp":
            label = f"the ACKs of flow {f['name']!r}"
            streams.append(_Stream(len(streams), i, "ack", f["dst"], f["src"], ACK_DSCP, label))

    conditioned: dict[int, list[tuple[int, tuple]]] = {}  # stream -> [(j, eid)] of non-Null entries
    for s in streams:
        ds, ns_ = tree(s.src)
        dt, nt = tree(s.dst)
        total = ns_[s.dst]
        steps = []
        for (u, v), j in dir_of.items():
            if u in ds and v in dt and ds[u] + 1 + dt[v] == ds[s.dst]:
                on_all = ns_[u] * nt[v] == total
                if j in cond_at and not on_all:
                    raise _Refusal(
                        f"{s.label} has several shortest paths and only some pass the conditioner "
                        f"on {dname(j)}; ns-2 breaks such ties its own way"
                    )
                steps.append((ds[u], j))
        steps.sort()
        keys: set[tuple] = {("base", s.dscp)}
        dscps = {s.dscp}
        for _, j in steps:
            if j not in queues:
                continue
            dq = queues[j]
            if not dq.edge:
                dq.arriving |= keys
                continue
            where = f"conditioner on {dname(j)}"
            match = None
            seen_dscps = dscps
            for ci in cond_at[j]:  # qoslab applies every matching conditioner, in order
                if not _classifies(conds[ci]["classifier"], s, flows, seen_dscps, where):
                    continue
                if match is not None:
                    raise _Refusal(
                        f"{s.label} matches both conditioner {conds[match]['name']!r} and "
                        f"{conds[ci]['name']!r} on {dname(j)}; an ns-2 edge queue applies one policy "
                        "per packet"
                    )
                match = ci
                acts = conds[ci]["actions"]
                after = {acts[c] for c in _METERS[conds[ci]["meter"]["type"]][1]}
                seen_dscps = {d for d in after if _is_int(d)} | (dscps if "keep" in after else set())
            pair = (s.src, s.dst)
            if match is None:
                if len(dscps) != 1:
                    raise _Refusal(
                        f"{s.label} reaches the edge queue of {dname(j)} with a codepoint an upstream "
                        "conditioner chose per packet; ns-2's edge queue would overwrite it with a fixed one"
                    )
                d = next(iter(dscps))
                eid: tuple = ("null", pair, d)
                entry = dq.entries.setdefault(eid, _Entry(eid, None, {"green": d}))
                outs = {("base", d)}
            else:
                c = conds[match]
                mtype = c["meter"]["type"]
                if (
                    c["meter"]["mode"] == "aware"
                    and mtype not in ("tsw2cm", "tsw3cm")
                    and dscps & _PRE_NOT_GREEN
                ):
                    raise _Refusal(
                        f"conditioner {c['name']!r}: ns-2's policers are colour-blind; a colour-aware "
                        f"meter is exported only if all its packets arrive pre-coloured green (not AFx2 "
                        f"or AFx3), but {s.label} arrives with {sorted(dscps)}"
                    )
                eid = ("pf", match, s.flow) if c["scope"] == "per_flow" else ("agg", match)
                entry = dq.entries.setdefault(eid, _Entry(eid, match, {}))
                outs = set()
                for colour in _METERS[mtype][1]:
                    a = c["actions"][colour]
                    if a == "keep":
                        if len(dscps) != 1:
                            raise _Refusal(
                                f"conditioner {c['name']!r}: 'keep' needs a known incoming codepoint, "
                                f"but {s.label} arrives with one chosen per packet upstream"
                            )
                        a = next(iter(dscps))
                        entry.keep_in.add(a)
                    entry.outputs[colour] = a
                    outs.add(("e", j, eid, colour, a))
                conditioned.setdefault(s.index, []).append((j, eid))
            entry.pairs.add(pair)
            entry.streams.append(s.index)
            dq.arriving |= outs
            keys = {k for k in outs if k[-1] != "drop"}
            dscps = {k[-1] for k in keys}
            if not keys:
                break  # every packet is dropped here

    for j, dq in queues.items():
        for e in dq.entries.values():
            if len(e.keep_in) > 1:
                raise _Refusal(
                    f"conditioner {conds[e.cond]['name']!r} on {dname(j)}: 'keep' with one aggregate "
                    f"meter over packets arriving with different codepoints {sorted(e.keep_in)}; an ns-2 "
                    "policy writes one codepoint per colour"
                )

    # ns-2 codepoints: try one set of codepoints per policy entry (per-flow marking counts);
    # fall back to one codepoint per DSCP if that needs more than NS_MAX_CP.
    all_keys: list[tuple] = [("base", ACK_DSCP)]
    for s in streams:
        all_keys.append(("base", s.dscp))
    for dq in queues.values():
        for key in sorted(dq.arriving, key=repr):
            all_keys.append(key)
    uniq = list(dict.fromkeys(all_keys))
    tagged = len(uniq) <= NS_MAX_CP

    def canon(key: tuple) -> tuple:
        if tagged or key[0] == "base":
            return key
        return ("drop",) if key[-1] == "drop" else ("base", key[-1])

    canon_keys = list(dict.fromkeys(canon(k) for k in uniq))
    if len(canon_keys) > NS_MAX_CP:
        raise _Refusal(f"the scenario needs {len(canon_keys)} codepoints; ns-2's dsRED has {NS_MAX_CP}")
    cp_of: dict[tuple, int] = {}
    used: set[int] = set()
    for key in canon_keys:  # a DSCP below 40 keeps its own number where it can
        if key[0] == "base" and key[1] < NS_MAX_CP and key[1] not in used:
            cp_of[key] = key[1]
            used.add(key[1])
    for key in canon_keys:  # then marker outputs, where their DSCP's number is still free
        v = key[-1]
        if key not in cp_of and _is_int(v) and v < NS_MAX_CP and v not in used:
            cp_of[key] = v
            used.add(v)
    free = (n for n in range(NS_MAX_CP) if n not in used)
    for key in canon_keys:
        if key not in cp_of:
            cp_of[key] = next(free)
    cp = {k: cp_of[canon(k)] for k in uniq}

    for j, dq in sorted(queues.items()):
        dq.tcl = _dsred_tcl(j, dq, cp, resolved, dname(j))

    marked: list[Any] = []
    for s in streams:
        if s.kind != "data":
            continue
        hits = conditioned.get(s.index, [])
        if not hits:
            marked.append(("host", s.dscp))
            continue
        j, eid = hits[0]
        e = queues[j].entries[eid]
        if tagged and len(hits) == 1 and e.streams == [s.index]:
            marked.append(("edge", j, {cp[("e", j, eid, c, v)]: (c, v) for c, v in e.outputs.items()}))
        else:
            marked.append(None)
    cond_cps: dict[int, list[tuple[int, int, str]]] = {ci: [] for ci in range(len(conds))}
    if tagged:
        for j, dq in queues.items():
            for e in dq.entries.values():
                if e.cond is not None:
                    cond_cps[e.cond] += [(j, cp[("e", j, e.eid, c, v)], c) for c, v in e.outputs.items()]
    flow_cp = [cp[("base", s.dscp)] for s in streams if s.kind == "data"]
    return _DsPlan(cp, tagged, flow_cp, cp[("base", ACK_DSCP)], queues, marked, cond_cps)


def _dsred_tcl(j: int, dq: _DsQueue, cp: dict[tuple, int], resolved: dict, where: str) -> list[str]:
    """The Tcl lines configuring dsRED queue ``$q`` of direction ``j``; fills cp_value/cp_vq.

    A cp key's last element is what the codepoint stands for: a DSCP or "drop".
    """
    conf = dq.conf
    if conf["type"] == "multi":
        subs = [(sub["dscp"], sub["queue"], sub.get("weight", 1)) for sub in conf["queues"]]
        sched = _SCHEDULERS[conf["scheduler"]]
    else:
        subs = [(None, conf, 1)]
        sched = "PRI"
    rq = [q for _, q, _ in subs if q["type"] != "droptail"]
    limits = {q.get("limit_pkts") for q in rq}
    if rq:
        shared = next(iter(limits))
    else:
        lps = {q.get("limit_pkts") for _, q, _ in subs}
        shared = None if None in lps else max(lps)  # type: ignore[type-var]
    qlim = UNLIMITED_QUEUE_PKTS if shared is None else int(shared)
    mps = rq[0]["mean_pkt_size_bytes"] if rq else 1000
    nprec = max([len(q["precedences"]) for q in rq], default=1)

    # codepoints that reach this queue's PHB table
    arriving = {cp[k]: k[-1] for k in dq.arriving}
    value_all = {cp[k]: k[-1] for k in cp}
    drop_cps = sorted(c for c, v in arriving.items() if v == "drop")
    nq = len(subs) + (1 if drop_cps else 0)
    if nq > _NS_MAX_QUEUES:
        raise _Refusal(f"{where}: needs {nq} physical queues; ns-2's dsRED has {_NS_MAX_QUEUES}")
    if drop_cps and sched in ("RR", "WRR"):
        raise _Refusal(
            f"{where}: a conditioner 'drop' action is exported as an extra always-empty dsRED queue, "
            "which would shift ns-2's round-robin pointer; use a priority scheduler here"
        )

    def classify(dscp: int) -> tuple[int, int] | None:
        listed = [qi for qi, (dl, _, _) in enumerate(subs) if dl is not None and dscp in dl]
        fallback = [qi for qi, (dl, _, _) in enumerate(subs) if dl is None]
        if not listed and not fallback:
            return None
        default = (listed or fallback)[0]
        q = subs[default][1]
        if q["type"] == "droptail":
            return default, 0
        return default, min(_core.drop_precedence(dscp), len(q["precedences"]) - 1)

    lines = [
        f"$q set numQueues_ {nq}",
        f"$q set limit_ {qlim}",
        f"$q setNumPrec {nprec}",
        f"$q meanPktSize {mps}",
    ]
    for qi, (_, q, _) in enumerate(subs):
        if q["type"] == "droptail":
            th = UNLIMITED_QUEUE_PKTS if q.get("limit_pkts") is None else int(q["limit_pkts"])
            lines += [f"$q configQ {qi} {p} {th} {th} 1.0" for p in range(nprec)]
            lines.append(f"$q setMREDMode DROP {qi}")
            continue
        precs = q["precedences"]
        for p in range(nprec):
            pr = precs[min(p, len(precs) - 1)]  # unused precedences copy the last one
            lines.append(
                f"$q configQ {qi} {p} {int(pr['min_th'])} {int(pr['max_th'])} "
                f"{_num(pr['max_p'])} {_num(q['w_q'])}"
            )
        mode = "WRED" if q["type"] == "wred" else ("RIO-C" if q["mode"] == "coupled" else "RIO-D")
        lines.append(f"$q setMREDMode {mode} {qi}")
    if drop_cps:
        dqi = len(subs)
        lines += [f"$q configQ {dqi} {p} 0 0 1.0" for p in range(nprec)]
        lines.append(f"$q setMREDMode DROP {dqi}")
    for c in sorted(value_all):
        value = value_all[c]
        vq = (len(subs), 0) if value == "drop" else classify(value)
        if c in arriving:
            if vq is None:
                raise _Refusal(
                    f"{where}: codepoint {value} reaches this multi queue, which has no queue for it "
                    "and no default queue"
                )
            dq.cp_value[c] = value
            dq.cp_vq[c] = vq
        elif vq is None or vq[0] >= nq:
            vq = (0, 0)  # never looked up: no such packet reaches this queue
        lines.append(f"$q addPHBEntry {c} {vq[0]} {vq[1]}")
    lines.append(f"$q setSchedularMode {sched}")
    if sched == "WRR":
        lines += [f"$q addQueueWeights {qi} {int(w)}" for qi, (_, _, w) in enumerate(subs)]
    if dq.edge:
        lines += _policy_tcl(j, dq, cp, resolved, where)
    return lines


def _policy_tcl(j: int, dq: _DsQueue, cp: dict[tuple, int], resolved: dict, where: str) -> list[str]:
    """addPolicyEntry/addPolicerEntry lines for an edge queue (first match wins in ns-2)."""
    conds = resolved.get("conditioners") or []
    node_id = {n: i for i, n in enumerate(resolved["nodes"])}
    by_pair: dict[tuple[str, str], list[_Entry]] = {}
    for e in dq.entries.values():
        for pair in sorted(e.pairs):
            by_pair.setdefault(pair, []).append(e)
    for pair, es in by_pair.items():
        if len(es) > 1:
            what = []
            for e in es:
                if e.cond is None:
                    what.append(f"unconditioned codepoint {e.outputs['green']}")
                elif e.eid[0] == "pf":
                    what.append(f"a per-flow meter of conditioner {conds[e.cond]['name']!r}")
                else:
                    what.append(f"conditioner {conds[e.cond]['name']!r}")
            raise _Refusal(
                f"{where}: ns-2 classifies by (source node, destination node) only, and packets from "
                f"{pair[0]!r} to {pair[1]!r} need different treatment here: {'; '.join(what)} "
                "(per-flow scope needs flows with distinct node pairs)"
            )
    exact: list[tuple[tuple[int, int], _Entry]] = []
    aggs: list[tuple[tuple[int, int], _Entry]] = []
    for e in dq.entries.values():
        if e.eid[0] == "agg":
            srcs = {node_id[p[0]] for p in e.pairs}
            dsts = {node_id[p[1]] for p in e.pairs}
            pat = (next(iter(srcs)) if len(srcs) == 1 else -1, next(iter(dsts)) if len(dsts) == 1 else -1)
            aggs.append((pat, e))
        else:
            if len(e.pairs) != 1:
                raise _Refusal(
                    f"{where}: one per-flow meter of conditioner {conds[e.cond]['name']!r} sees packets "
                    f"of several node pairs {sorted(e.pairs)}; ns-2 has one meter per (source, destination)"
                )
            (pair,) = e.pairs
            exact.append(((node_id[pair[0]], node_id[pair[1]]), e))
    aggs.sort(key=lambda pe: (pe[0][0] == -1) + (pe[0][1] == -1))

    def hits(pat: tuple[int, int], s: int, d: int) -> bool:
        return pat[0] in (s, -1) and pat[1] in (d, -1)

    for _, e in aggs:
        for pair in e.pairs:
            s, d = node_id[pair[0]], node_id[pair[1]]
            first = next(x for p, x in aggs if hits(p, s, d))
            if first is not e:
                raise _Refusal(
                    f"{where}: the aggregate meters of conditioners {conds[e.cond]['name']!r} and "
                    f"{conds[first.cond]['name']!r} cannot be told apart by ns-2's (source, destination) "
                    "policy table"
                )
    table = exact + aggs
    if not any(p == (-1, -1) for p, _ in table):
        table.append(((-1, -1), _Entry(("null", None, ACK_DSCP), None, {"green": ACK_DSCP})))
    if len(table) > _NS_MAX_POLICIES:
        raise _Refusal(f"{where}: needs {len(table)} policy entries; ns-2 allows {_NS_MAX_POLICIES}")
    lines: list[str] = []
    policers: dict[tuple[str, int], tuple[int, ...]] = {}
    for (s, d), e in table:
        if e.cond is None:
            c0 = cp[("base", e.outputs["green"])]
            lines.append(f"$q addPolicyEntry {s} {d} Null {c0}")
            key, down = ("Null", c0), ()
        else:
            m = conds[e.cond]["meter"]
            ptype, colours = _METERS[m["type"]]
            outs = [cp[("e", j, e.eid, c, e.outputs[c])] for c in colours]
            args = [_num(m["cir_bps"])]
            if m["type"] == "token_bucket":
                args += [str(m["cbs_bytes"])]
            elif m["type"] == "srtcm":
                args += [str(m["cbs_bytes"]), str(m["ebs_bytes"])]
            elif m["type"] == "trtcm":
                args += [str(m["cbs_bytes"]), _num(m["pir_bps"]), str(m["pbs_bytes"])]
            elif m["type"] == "tsw2cm":
                args += [_num(m.get("win_len_s") or 1.0)]
            else:  # tsw3cm
                args += [_num(m["pir_bps"])]
            lines.append(f"$q addPolicyEntry {s} {d} {ptype} {outs[0]} {' '.join(args)}")
            key, down = (ptype, outs[0]), tuple(outs[1:])
        if key in policers and policers[key] != down:
            raise _Refusal(
                f"{where}: two {key[0]} meters write the same in-profile codepoint but different "
                "out-of-profile ones; ns-2 keys its policer table on (policer, in-profile codepoint)"
            )
        if key not in policers:
            policers[key] = down
            lines.append(f"$q addPolicerEntry {key[0]} {' '.join(str(x) for x in (key[1], *down))}")
    return lines


# --------------------------------------------------------------------------
# Tcl generation
# --------------------------------------------------------------------------


def _tcl_quote(s: str) -> str:
    """Quote ``s`` as a Tcl double-quoted word that is substituted to ``s`` exactly."""
    out = []
    for ch in s:
        o = ord(ch)
        if ch in '\\$[]"{};':
            out.append("\\" + ch)
        elif 32 <= o < 127:
            out.append(ch)
        elif o <= 0xFFFF:
            out.append(f"\\u{o:04x}")
        else:
            out.append(f"\\U{o:08x}")
    return '"' + "".join(out) + '"'


def _num(x: float) -> str:
    """Format a finite number for Tcl/ns-2 (Python's shortest round-trip repr)."""
    return repr(float(x))


def _bool(x: bool) -> str:
    return "true" if x else "false"


def _ns_seed(seed: int) -> int:
    """Map any integer seed to a well-mixed ns-2 seed in 1..2**31-2 (splitmix64).

    ns-2's MRG32k3a sets all six state words to the raw seed, so raw seeds s
    and k*s give streams related by multiplication by k (mod m): seeds 1, 2, 3
    would draw visibly correlated numbers.  Mixing the seed first avoids that.
    """
    mask = (1 << 64) - 1
    z = ((seed & mask) + 0x9E3779B97F4A7C15) & mask
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
    z ^= z >> 31
    return z % (2**31 - 2) + 1


def _queue_settings(q: dict) -> list[tuple[str, str]]:
    """Return the ``$q set`` pairs configuring one queue direction, as the core describes them."""
    exp = _core_export(q)
    assert exp is not None, "checked by unsupported_reason"
    return [(str(k), _tcl_value(v)) for k, v in exp["settings"]]


def _tcl_value(v: Any) -> str:
    if isinstance(v, bool):
        return _bool(v)
    if isinstance(v, float):
        return _num(v)
    return str(v)


_TCL_PROCS = r"""
# ---- measurement procedures (no per-packet tracing) ----
proc qoslab_poll {} {
    global qoslab_nflows qoslab_rx qoslab_rx_last qoslab_rx_total
    for {set i 0} {$i < $qoslab_nflows} {incr i} {
        set v [$qoslab_rx($i) set bytes_]
        set d [expr {($v - $qoslab_rx_last($i)) & 0xFFFFFFFF}]
        set qoslab_rx_total($i) [expr {$qoslab_rx_total($i) + $d}]
        set qoslab_rx_last($i) $v
    }
}

proc qoslab_mark_start {} {
    global qoslab_nflows qoslab_rx_total qoslab_win_start
    qoslab_poll
    for {set i 0} {$i < $qoslab_nflows} {incr i} {
        set qoslab_win_start($i) $qoslab_rx_total($i)
    }
}

proc qoslab_mark_end {} {
    global qoslab_nflows qoslab_rx_total qoslab_win_end qoslab_end_done
    if {$qoslab_end_done} { return }
    qoslab_poll
    for {set i 0} {$i < $qoslab_nflows} {incr i} {
        set qoslab_win_end($i) $qoslab_rx_total($i)
    }
    set qoslab_end_done 1
}

proc qoslab_monitor {lnk red} {
    global ns
    if {$red} {
        set qm [new QueueMonitor/ED]
    } else {
        set qm [new QueueMonitor]
    }
    set in [new SnoopQueue/In]
    set out [new SnoopQueue/Out]
    $lnk attach-monitors $in $out [new SnoopQueue/Drop] $qm
    if {$red} {
        set ed [new SnoopQueue/EDrop]
        $ed set-monitor $qm
        $ed target [$ns set nullAgent_]
        [$lnk queue] early-drop-target $ed
    }
    return $qm
}

proc qoslab_tx_counter {agent} {
    set qm [new QueueMonitor]
    set sn [new SnoopQueue/In]
    $sn set-monitor $qm
    $sn target [$agent target]
    $agent target $sn
    return $qm
}

# Per-codepoint counters of a dsRED queue (diffserv/dsred.cc getStat) and the
# lengths of its virtual queues: raw material for by_dscp, decoded in Python.
proc qoslab_dsred_raw {j} {
    global qoslab_dsq qoslab_dscps qoslab_dsvq
    set q $qoslab_dsq($j)
    set cps {}
    foreach cp $qoslab_dscps($j) {
        set pk [expr {int([$q getStat pkts $cp])}]
        set dr [expr {int([$q getStat drops $cp])}]
        set ed [expr {int([$q getStat edrops $cp])}]
        lappend cps "\[$cp, $pk, $dr, $ed\]"
    }
    set vqs {}
    foreach v $qoslab_dsvq($j) {
        set n [expr {int([$q getCurrentV [lindex $v 0] [lindex $v 1]])}]
        lappend vqs "\[[lindex $v 0], [lindex $v 1], $n\]"
    }
    return "\{\"cp\": \[[join $cps {, }]\], \"vq\": \[[join $vqs {, }]\]\}"
}

# Minimal JSON emitter: values are already JSON-encoded text.
proc qoslab_obj {pairs} {
    set items {}
    foreach {k v} $pairs {
        lappend items "\"$k\": $v"
    }
    return "\{[join $items {, }]\}"
}

proc qoslab_arr {items} {
    return "\[[join $items {, }]\]"
}

proc qoslab_finish {} {
    global qoslab_nflows qoslab_fname qoslab_kind qoslab_tx qoslab_rx qoslab_psize
    global qoslab_win_start qoslab_win_end qoslab_rx_total qoslab_win_len
    global qoslab_nlinks qoslab_lname qoslab_ldir qoslab_qm qoslab_red
    global qoslab_out qoslab_seed qoslab_t0 qoslab_dsq
    qoslab_mark_end
    qoslab_poll
    set flows {}
    for {set i 0} {$i < $qoslab_nflows} {incr i} {
        set win [expr {$qoslab_win_end($i) - $qoslab_win_start($i)}]
        set thr [expr {double($win) * 8.0 / $qoslab_win_len}]
        if {$qoslab_kind($i) eq "tcp"} {
            set deliv [expr {$qoslab_rx_total($i) / $qoslab_psize($i)}]
            set sent [$qoslab_tx($i) set ndatapack_]
            set rexmit [$qoslab_tx($i) set nrexmitpack_]
        } else {
            set deliv [$qoslab_rx($i) set npkts_]
            set sent [$qoslab_tx($i) set parrivals_]
            set rexmit 0
        }
        lappend flows [qoslab_obj [list \
            name $qoslab_fname($i) throughput_bps $thr \
            delivered_packets $deliv sent_packets $sent \
            retransmitted_packets $rexmit]]
    }
    set links {}
    set total_drops 0
    set hops 0
    for {set j 0} {$j < $qoslab_nlinks} {incr j} {
        set qm $qoslab_qm($j)
        set arr [$qm set parrivals_]
        set dep [$qm set pdepartures_]
        set drops [$qm set pdrops_]
        if {$qoslab_red($j)} {
            set early [$qm set epdrops_]
        } else {
            set early 0
        }
        set forced [expr {$drops - $early}]
        incr total_drops $drops
        incr hops $dep
        set pairs [list \
            name $qoslab_lname($j) direction "\"$qoslab_ldir($j)\"" \
            arrivals $arr departures $dep drops $drops \
            early_drops $early forced_drops $forced]
        if {[info exists qoslab_dsq($j)]} {
            lappend pairs dsred [qoslab_dsred_raw $j]
        }
        lappend links [qoslab_obj $pairs]
    }
    set wall [expr {([clock milliseconds] - $qoslab_t0) / 1000.0}]
    set json [qoslab_obj [list \
        seed $qoslab_seed wall_time_s $wall \
        flows [qoslab_arr $flows] links [qoslab_arr $links] \
        total_drops $total_drops packet_hops $hops]]
    set f [open $qoslab_out w]
    puts $f $json
    close $f
    exit 0
}
"""


def _poll_interval(resolved: dict) -> float | None:
    """Return the period at which 32-bit byte counters must be polled, if any."""
    max_bw = max((float(link["bandwidth_bps"]) for link in resolved["links"]), default=0.0)
    if max_bw <= 0:
        return None
    period = 0.5 * _COUNTER_SPAN_BYTES * 8.0 / max_bw
    return period if period < resolved["duration_s"] else None


def to_tcl(resolved: dict, seed: int, out_path: str) -> str:
    """Return an ns-2 Tcl script for ``resolved`` run with ``seed``.

    The script writes its JSON results to ``out_path`` at ``duration_s`` and
    exits.  Raises ValueError if :func:`unsupported_reason` finds a problem.
    """
    return _build_tcl(resolved, seed, out_path)[0]


def _build_tcl(resolved: dict, seed: int, out_path: str) -> tuple[str, _DsPlan | None]:
    """The script of :func:`to_tcl` and the DiffServ plan (None without DiffServ)."""
    reason = unsupported_reason(resolved)
    if reason is not None:
        raise ValueError(f"scenario cannot be exported to ns-2: {reason}")
    if not _is_int(seed):
        raise ValueError("seed must be an integer")
    plan = _ds_plan(resolved) if _ds_active(resolved) else None

    duration = float(resolved["duration_s"])
    mstart = float(resolved["measurement"]["start_s"])
    mend = float(resolved["measurement"]["end_s"])
    node_idx = {name: i for i, name in enumerate(resolved["nodes"])}
    ecn = any(
        bool((_core_export(link[qk]) or {}).get("ecn"))
        for link in resolved["links"]
        for qk in ("queue_ab", "queue_ba")
    )

    name_line = " ".join(str(resolved.get("name", "")).split())
    out: list[str] = [
        f"# ns-2 script generated by qoslab.ns2 for scenario: {name_line}",
        f"# seed {seed}; per-packet tracing is off",
        f"$defaultRNG seed {_ns_seed(seed)}",
        "set ns [new Simulator]",
        f"set qoslab_out {_tcl_quote(os.path.abspath(out_path))}",
        f"set qoslab_seed {int(seed)}",
        "set qoslab_t0 [clock milliseconds]",
        f"set qoslab_win_len {_num(mend - mstart)}",
        "set qoslab_end_done 0",
        _TCL_PROCS,
        "# ---- nodes ----",
    ]
    for name, i in node_idx.items():
        out.append(f"set n({i}) [$ns node] ;# {' '.join(name.split())}")

    out.append("# ---- links (one queue per direction) ----")
    dsq = plan.queues if plan is not None else {}
    j = 0
    for link in resolved["links"]:
        a, b = node_idx[link["a"]], node_idx[link["b"]]
        bw, delay = _num(link["bandwidth_bps"]), _num(link["delay_s"])
        qab, qba = link["queue_ab"], link["queue_ba"]
        cls_ab, cls_ba = (_queue_class(q, dsq.get(j + k)) for k, q in enumerate((qab, qba)))
        if cls_ab == cls_ba:
            out.append(f"$ns duplex-link $n({a}) $n({b}) {bw} {delay} {cls_ab}")
        else:
            out.append(f"$ns simplex-link $n({a}) $n({b}) {bw} {delay} {cls_ab}")
            out.append(f"$ns simplex-link $n({b}) $n({a}) {bw} {delay} {cls_ba}")
        lname = _tcl_quote(json.dumps(link["name"]))
        for direction, x, y, q in (("ab", a, b, qab), ("ba", b, a, qba)):
            out.append(f"set q [[$ns link $n({x}) $n({y})] queue]")
            red = 1 if (_core_export(q) or {}).get("early_drops") else 0
            if j in dsq:
                red = 1  # dsRED queues have an early-drop target too
                out.extend(dsq[j].tcl)
                cps = " ".join(str(c) for c in sorted(dsq[j].cp_vq))
                vqs = " ".join(sorted({f"{{{qi} {p}}}" for qi, p in dsq[j].cp_vq.values()}))
                out += [
                    f"set qoslab_dsq({j}) $q",
                    f"set qoslab_dscps({j}) {{{cps}}}",
                    f"set qoslab_dsvq({j}) {{{vqs}}}",
                ]
            else:
                out.extend(f"$q set {k} {v}" for k, v in _queue_settings(q))
            out.append(f"set qoslab_qm({j}) [qoslab_monitor [$ns link $n({x}) $n({y})] {red}]")
            out.append(f"set qoslab_red({j}) {red}")
            out.append(f"set qoslab_lname({j}) {lname}")
            out.append(f"set qoslab_ldir({j}) {direction}")
            j += 1
    out.append(f"set qoslab_nlinks {j}")

    out.append("# ---- flows ----")
    for i, f in enumerate(resolved["flows"]):
        out.extend(_flow_tcl(i, f, node_idx, ecn, duration))
        if plan is not None:  # codepoints set by the hosts (ns-2 hdr_ip prio_)
            out.append(f"$src set prio_ {plan.flow_cp[i]}")
            if f["kind"] == "tcp":
                out.append(f"$dst set prio_ {plan.ack_cp}")
    out.append(f"set qoslab_nflows {len(resolved['flows'])}")

    out.append("# ---- measurement schedule ----")
    period = _poll_interval(resolved)
    if period is not None:
        k = 1
        while k * period < duration:
            out.append(f'$ns at {_num(k * period)} "qoslab_poll"')
            k += 1
    out.append(f'$ns at {_num(mstart)} "qoslab_mark_start"')
    if mend < duration:
        out.append(f'$ns at {_num(mend)} "qoslab_mark_end"')
    out.append(f'$ns at {_num(duration)} "qoslab_finish"')
    out.append("$ns run")
    return "\n".join(out) + "\n", plan


def _queue_class(q: dict, dq: _DsQueue | None) -> str:
    """The ns-2 queue class of one link direction."""
    if dq is not None:
        return "dsRED/edge" if dq.edge else "dsRED/core"
    exp = _core_export(q)
    assert exp is not None, "checked by unsupported_reason"
    return str(exp["class"])


def _flow_tcl(i: int, f: dict, node_idx: dict[str, int], ecn: bool, duration: float) -> list[str]:
    """Return the Tcl lines creating flow ``i`` and scheduling its start/stop."""
    src, dst = node_idx[f["src"]], node_idx[f["dst"]]
    size = int(f["packet_size_bytes"])
    lines = [f"# flow {i}: {' '.join(f['name'].split())} ({f['kind']})"]
    if f["kind"] == "tcp":
        t = f["tcp"]
        lines.append(f"set src [new {_TCP_CLASSES[t['variant']]}]")
        params = dict(TCP_FIXED_PARAMS)
        if t["variant"] == "newreno":
            params.update(NEWRENO_FIXED_PARAMS)
        params.update(
            {
                "fid_": str(i),
                "ttl_": str(AGENT_TTL),
                # qoslab sizes are on the wire; ns-2 adds 40 header bytes.
                "packetSize_": str(size - 40),
                "syn_": "true" if t.get("syn", True) else "false",
                "window_": str(t["window_pkts"]),
                "windowInit_": str(t["initial_window_pkts"]),
                "minrto_": _num(t["min_rto_s"]),
                "maxrto_": _num(t["max_rto_s"]),
                "rtxcur_init_": _num(t["initial_rto_s"]),
                "tcpTick_": _num(t["tick_s"]),
                "maxburst_": str(t["max_burst"]),
                "ecn_": "1" if ecn else "0",
            }
        )
        lines.extend(f"$src set {k} {v}" for k, v in params.items())
        if t["delayed_ack"]:
            lines.append("set dst [new Agent/TCPSink/DelAck]")
            lines.append(f"$dst set interval_ {_num(t['delack_interval_s'])}")
        else:
            lines.append("set dst [new Agent/TCPSink]")
        for k, v in (
            ("packetSize_", str(t["ack_size_bytes"])),
            ("ttl_", str(AGENT_TTL)),
            ("fid_", str(i)),
            ("ts_echo_bugfix_", "true"),
            ("ts_echo_rfc1323_", "false"),
            ("generateDSacks_", "false"),
            ("RFC2581_immediate_ack_", "true"),
            ("SYN_immediate_ack_", "true"),
            ("qs_enabled_", "false"),
            ("ecn_syn_", "false"),
        ):
            lines.append(f"$dst set {k} {v}")
        lines += [
            f"$ns attach-agent $n({src}) $src",
            f"$ns attach-agent $n({dst}) $dst",
            "$ns connect $src $dst",
            "set app [new Application/FTP]",
            "$app attach-agent $src",
            f"set qoslab_tx({i}) $src",
        ]
    else:
        rate = float(f["rate_bps"])
        lines += [
            "set src [new Agent/UDP]",
            f"$src set packetSize_ {size}",
            f"$src set fid_ {i}",
            f"$src set ttl_ {AGENT_TTL}",
            "set dst [new Agent/LossMonitor]",
            f"$dst set ttl_ {AGENT_TTL}",
            f"$ns attach-agent $n({src}) $src",
            f"$ns attach-agent $n({dst}) $dst",
            "$ns connect $src $dst",
            f"set qoslab_tx({i}) [qoslab_tx_counter $src]",
        ]
        if f["kind"] == "cbr":
            lines += [
                "set app [new Application/Traffic/CBR]",
                f"$app set rate_ {_num(rate)}",
                "$app set random_ 0",
                "$app set maxpkts_ 2147483647",
            ]
        elif f["kind"] == "onoff":
            lines += [
                "set app [new Application/Traffic/Exponential]",
                f"$app set rate_ {_num(rate)}",
                f"$app set burst_time_ {_num(f['on_s'])}",
                f"$app set idle_time_ {_num(f['off_s'])}",
            ]
        else:  # poisson
            peak = rate * POISSON_RATE_FACTOR
            mean_gap = 8.0 * size / rate
            min_gap = 8.0 * size / peak
            lines += [
                "set app [new Application/Traffic/Exponential]",
                f"$app set rate_ {_num(peak)}",
                "$app set burst_time_ 0",
                f"$app set idle_time_ {_num(mean_gap - min_gap)}",
            ]
        lines += [f"$app set packetSize_ {size}", "$app attach-agent $src"]
    lines += [
        f"set qoslab_kind({i}) {'tcp' if f['kind'] == 'tcp' else 'udp'}",
        f"set qoslab_rx({i}) $dst",
        f"set qoslab_psize({i}) {size}",
        f"set qoslab_fname({i}) {_tcl_quote(json.dumps(f['name']))}",
        f"set qoslab_rx_last({i}) 0",
        f"set qoslab_rx_total({i}) 0",
        f"set qoslab_win_start({i}) 0",
        f"set qoslab_win_end({i}) 0",
    ]
    start = float(f["start_s"])
    if start < duration:
        lines.append(f'$ns at {_num(start)} "$app start"')
    stop = f.get("stop_s")
    if stop is not None and float(stop) < duration:
        lines.append(f'$ns at {_num(float(stop))} "$app stop"')
    return lines


# --------------------------------------------------------------------------
# running
# --------------------------------------------------------------------------


def _tail(text: str, limit: int = 4000) -> str:
    text = text.strip()
    return text if len(text) <= limit else "..." + text[-limit:]


def run_ns2(
    resolved: dict,
    seed: int,
    *,
    workdir: str | None = None,
    timeout: float | None = None,
) -> dict:
    """Run ``resolved`` in ns-2 with ``seed`` and return the parsed results.

    The script (``scenario.tcl``) and results (``results.json``) are written to
    ``workdir``, which is kept, or to a temporary directory that is removed.
    ``wall_time_s`` in the result is the wall-clock time of the whole ``ns``
    process.  Raises ValueError for scenarios ns-2 cannot express and
    :class:`Ns2Error` if ns-2 is missing, fails, times out or writes no results.
    """
    ns = ns2_available()
    if ns is None:
        raise Ns2Error("ns-2 binary not found (install Debian package ns2 or set QOSLAB_NS2)")
    if workdir is None:
        with tempfile.TemporaryDirectory(prefix="qoslab-ns2-") as tmp:
            return _run_in(ns, resolved, seed, tmp, timeout)
    os.makedirs(workdir, exist_ok=True)
    return _run_in(ns, resolved, seed, workdir, timeout)


def _run_in(ns: str, resolved: dict, seed: int, workdir: str, timeout: float | None) -> dict:
    script_path = os.path.join(workdir, "scenario.tcl")
    out_path = os.path.join(workdir, "results.json")
    if os.path.exists(out_path):
        os.remove(out_path)
    script, plan = _build_tcl(resolved, seed, out_path)
    with open(script_path, "w", encoding="utf-8") as fh:
        fh.write(script)
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(
            [ns, script_path],
            cwd=workdir,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise Ns2Error(f"ns-2 timed out after {timeout} s ({script_path})") from exc
    wall = time.perf_counter() - t0
    if proc.returncode != 0 or not os.path.exists(out_path):
        msg = _tail(proc.stderr) or _tail(proc.stdout) or "(no output)"
        raise Ns2Error(f"ns-2 failed with exit code {proc.returncode} on {script_path}: {msg}")
    try:
        with open(out_path, encoding="utf-8") as fh:
            results = json.load(fh)
    except (OSError, ValueError) as exc:
        raise Ns2Error(f"ns-2 wrote unreadable results {out_path}: {exc}") from exc
    results["wall_time_s"] = wall
    if plan is not None:
        _ds_results(results, plan, resolved)
    return results


def _ds_results(results: dict, plan: _DsPlan, resolved: dict) -> None:
    """Turn the raw dsRED counters into by_dscp, policed drops and marking counts."""
    raw_stats: dict[int, dict[int, tuple[int, int, int]]] = {}
    for j, lk in enumerate(results["links"]):
        raw = lk.pop("dsred", None)
        dq = plan.queues.get(j)
        if dq is None or raw is None:
            lk["by_dscp"] = None
            lk["policed_drops"] = 0
            continue
        stats = {int(c): (int(pk), int(dr), int(ed)) for c, pk, dr, ed in raw["cp"]}
        raw_stats[j] = stats
        vq_len = {(int(q), int(p)): int(n) for q, p, n in raw["vq"]}
        policed = sum(stats[c][0] for c, v in dq.cp_value.items() if v == "drop")
        by: dict[int, dict[str, Any]] = {}
        for c, v in sorted(dq.cp_value.items()):
            if v == "drop":
                continue
            pk, dr, ed = stats.get(c, (0, 0, 0))
            b = by.setdefault(v, {"arrivals": 0, "departures": 0, "early_drops": 0, "forced_drops": 0})
            b["arrivals"] += pk
            b["early_drops"] += ed
            b["forced_drops"] += dr
            b["departures"] += pk - dr - ed  # accepted; packets still queued are taken off below
        for vq, n in vq_len.items():
            if n == 0:
                continue
            there = {v for c, v in dq.cp_value.items() if dq.cp_vq[c] == vq and stats.get(c, (0,))[0] > 0}
            if len(there) == 1:
                by[next(iter(there))]["departures"] -= n
            else:  # several codepoints share the virtual queue: ns-2 cannot say which are queued
                for v in there:
                    by[v]["departures"] = None
        lk["by_dscp"] = dict(sorted(by.items()))
        lk["policed_drops"] = policed
        lk["drops"] -= policed
        lk["forced_drops"] -= policed
    for f, m in zip(results["flows"], plan.marked, strict=True):
        if m is None:
            f["marked"] = f["colored"] = f["policed_drops"] = None
        elif m[0] == "host":
            f["marked"] = {m[1]: f["sent_packets"]}
            f["colored"] = None
            f["policed_drops"] = 0
        else:
            _, j, cps = m
            stats = raw_stats.get(j, {})
            marked: dict[int, int] = {}
            colored = {"green": 0, "yellow": 0, "red": 0}
            dropped = 0
            for c, (colour, v) in cps.items():
                n = stats.get(c, (0, 0, 0))[0]
                colored[colour] += n
                if v == "drop":
                    dropped += n
                else:
                    marked[v] = marked.get(v, 0) + n
            f["marked"] = dict(sorted(marked.items()))
            f["colored"] = colored
            f["policed_drops"] = dropped
    conds = []
    for ci, c in enumerate(resolved.get("conditioners") or []):
        colored: dict[str, int] | None = None
        if plan.tagged:
            colored = {"green": 0, "yellow": 0, "red": 0}
            for j, cp, colour in plan.cond_cps[ci]:
                colored[colour] += raw_stats.get(j, {}).get(cp, (0, 0, 0))[0]
        conds.append({"name": c["name"], "colored": colored})
    results["conditioners"] = conds
