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
from typing import Any

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

#: Stand-in for a RED ``min_th`` of 0 (ns-2 treats 0 as "choose automatically").
RED_ZERO_THRESHOLD = 1.0e-9

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
_QUEUE_TYPES = ("droptail", "red")


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


def _queue_reason(where: str, q: Any) -> str | None:
    if not isinstance(q, dict):
        return f"{where}: queue must be a dict"
    qtype = q.get("type")
    if qtype not in _QUEUE_TYPES:
        return f"{where}: queue type {qtype!r} is not supported by the ns-2 export (only droptail, red)"
    lp, lb = q.get("limit_pkts"), q.get("limit_bytes")
    if lp is not None and lb is not None:
        return f"{where}: ns-2 queues take either a packet or a byte limit, not both"
    if lp is not None and (not _is_int(lp) or lp < 1):
        return f"{where}: limit_pkts must be a positive integer"
    if lb is not None and (not _is_int(lb) or lb < 1):
        return f"{where}: limit_bytes must be a positive integer"
    if qtype == "droptail":
        return None
    for key in ("min_th", "max_th", "max_p", "w_q"):
        if not _is_num(q.get(key)):
            return f"{where}: RED parameter {key} missing or not a finite number"
    for key in ("gentle", "byte_mode", "ecn", "wait"):
        if not isinstance(q.get(key), bool):
            return f"{where}: RED parameter {key} must be a bool"
    mps = q.get("mean_pkt_size_bytes")
    if not _is_int(mps) or mps < 1:
        return f"{where}: RED mean_pkt_size_bytes must be a positive integer"
    if q["min_th"] < 0 or q["max_th"] <= q["min_th"]:
        return f"{where}: RED needs 0 <= min_th < max_th"
    if not 0 < q["max_p"] <= 1:
        return f"{where}: RED max_p must be in (0, 1] (ns-2 stores 1/max_p)"
    if not 0 < q["w_q"] <= 1:
        return f"{where}: RED w_q must be in (0, 1] (ns-2 treats w_q <= 0 as 'automatic')"
    if lb is not None and lb % mps != 0:
        return (
            f"{where}: ns-2 RED measures a byte limit in units of mean_pkt_size_bytes; "
            f"limit_bytes {lb} is not a multiple of {mps}"
        )
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
    ns-2 export: only droptail/red queues, reno/newreno TCP, tcp/cbr/onoff/poisson
    flows, at most one link per node pair, one kind of limit per queue, and
    every flow routable.
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
    return None


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
    """Return the ``$q set`` pairs configuring one queue direction."""
    lp, lb = q.get("limit_pkts"), q.get("limit_bytes")
    if q["type"] == "droptail":
        if lb is not None:
            return [
                ("queue_in_bytes_", "true"),
                ("mean_pktsize_", "1"),
                ("limit_", str(lb + 1)),
                ("drop_front_", "false"),
                ("summarystats_", "false"),
            ]
        limit = UNLIMITED_QUEUE_PKTS if lp is None else lp + 1
        return [
            ("queue_in_bytes_", "false"),
            ("mean_pktsize_", "1"),
            ("limit_", str(limit)),
            ("drop_front_", "false"),
            ("summarystats_", "false"),
        ]
    mps = q["mean_pkt_size_bytes"]
    if lb is not None:
        qib, limit = True, lb // mps
    else:
        qib, limit = False, UNLIMITED_QUEUE_PKTS if lp is None else lp
    min_th = q["min_th"] if q["min_th"] > 0 else RED_ZERO_THRESHOLD
    return [
        ("bytes_", _bool(q["byte_mode"])),
        ("queue_in_bytes_", _bool(qib)),
        ("thresh_", _num(min_th)),
        ("maxthresh_", _num(q["max_th"])),
        ("q_weight_", _num(q["w_q"])),
        ("linterm_", _num(1.0 / q["max_p"])),
        ("mark_p_", "1.0"),
        ("use_mark_p_", "false"),
        ("gentle_", _bool(q["gentle"])),
        ("wait_", _bool(q["wait"])),
        ("setbit_", _bool(q["ecn"])),
        ("mean_pktsize_", str(mps)),
        ("idle_pktsize_", str(mps)),
        ("limit_", str(limit)),
        ("drop_tail_", "true"),
        ("drop_front_", "false"),
        ("drop_rand_", "false"),
        ("ns1_compat_", "false"),
        ("doubleq_", "false"),
        ("adaptive_", "0"),
        ("feng_adaptive_", "0"),
        ("cautious_", "0"),
        ("summarystats_", "false"),
    ]


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
    global qoslab_out qoslab_seed qoslab_t0
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
        lappend links [qoslab_obj [list \
            name $qoslab_lname($j) direction "\"$qoslab_ldir($j)\"" \
            arrivals $arr departures $dep drops $drops \
            early_drops $early forced_drops $forced]]
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
    reason = unsupported_reason(resolved)
    if reason is not None:
        raise ValueError(f"scenario cannot be exported to ns-2: {reason}")
    if not _is_int(seed):
        raise ValueError("seed must be an integer")

    duration = float(resolved["duration_s"])
    mstart = float(resolved["measurement"]["start_s"])
    mend = float(resolved["measurement"]["end_s"])
    node_idx = {name: i for i, name in enumerate(resolved["nodes"])}
    ecn = any(
        link[qk]["type"] == "red" and link[qk]["ecn"]
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
    j = 0
    for link in resolved["links"]:
        a, b = node_idx[link["a"]], node_idx[link["b"]]
        bw, delay = _num(link["bandwidth_bps"]), _num(link["delay_s"])
        qab, qba = link["queue_ab"], link["queue_ba"]
        cls_ab = "RED" if qab["type"] == "red" else "DropTail"
        cls_ba = "RED" if qba["type"] == "red" else "DropTail"
        if cls_ab == cls_ba:
            out.append(f"$ns duplex-link $n({a}) $n({b}) {bw} {delay} {cls_ab}")
        else:
            out.append(f"$ns simplex-link $n({a}) $n({b}) {bw} {delay} {cls_ab}")
            out.append(f"$ns simplex-link $n({b}) $n({a}) {bw} {delay} {cls_ba}")
        lname = _tcl_quote(json.dumps(link["name"]))
        for direction, x, y, q in (("ab", a, b, qab), ("ba", b, a, qba)):
            out.append(f"set q [[$ns link $n({x}) $n({y})] queue]")
            out.extend(f"$q set {k} {v}" for k, v in _queue_settings(q))
            red = 1 if q["type"] == "red" else 0
            out.append(f"set qoslab_qm({j}) [qoslab_monitor [$ns link $n({x}) $n({y})] {red}]")
            out.append(f"set qoslab_red({j}) {red}")
            out.append(f"set qoslab_lname({j}) {lname}")
            out.append(f"set qoslab_ldir({j}) {direction}")
            j += 1
    out.append(f"set qoslab_nlinks {j}")

    out.append("# ---- flows ----")
    for i, f in enumerate(resolved["flows"]):
        out.extend(_flow_tcl(i, f, node_idx, ecn, duration))
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
    return "\n".join(out) + "\n"


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
    script = to_tcl(resolved, seed, out_path)
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
    return results
