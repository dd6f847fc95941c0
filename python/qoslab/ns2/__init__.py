"""ns-2 (2.35) back end: export a resolved qoslab scenario to Tcl, run it, parse it.

The package is split by job: :mod:`.capability` (what ns-2 can express, element by element,
asked of the core where the mechanism's own file knows), :mod:`.plan` (whether a whole
scenario can be exported, and the dsRED plan of a DiffServ scenario), :mod:`.tcl` (the
script) and :mod:`.run` (running ns-2 and reading its results).

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

A finite transfer (a TCP flow with ``size_bytes``) adds ``size_bytes``, ``segments``,
``start_s``, ``end_s`` and ``fct_s`` (``end_s - start_s``; both NaN when it had not completed
by ``duration_s``) to its flow's entry; bulk and UDP flows have none of them.

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
  phase.  A TCP sender is ECN-capable (``ecn_``) when its flow's ``tcp.ecn`` is set.
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
* Finite transfers (``size_bytes``, docs/validation/ns2-finite-flows.md): the FTP gets
  ``produce n`` at ``start_s`` instead of ``start``, with ``n = ceil(size_bytes /
  packet_size_bytes)`` as in qoslab (not ``send size_bytes``, which ns-2 divides by the
  payload ``packetSize_``).  ``produce n`` sets the application limit ``curseq_`` to n and
  sending the SYN adds one, so the SYN and n data segments go out.  ns-2 calls ``$agent
  done`` on the first ACK with ``highest_ack_ >= curseq_ - 1`` (the last data segment
  acknowledged); an ``Agent/TCP instproc done`` handler records that time, ``end_s``.  A
  finite transfer with ``stop_s`` is refused (ns-2's FTP stop sets ``curseq_`` to
  ``maxseq_``: the transfer would "complete" one segment before qoslab's).  A script without
  finite transfers is exactly what it was before they existed.
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

from qoslab.ns2.capability import ACK_DSCP, NS_MAX_CP, TWO_COLOUR_OUT
from qoslab.ns2.literals import UNLIMITED_QUEUE_PKTS
from qoslab.ns2.plan import unsupported_reason
from qoslab.ns2.run import NS_ENV_VAR, Ns2Error, ns2_available, run_ns2
from qoslab.ns2.tcl import (
    AGENT_TTL,
    POISSON_RATE_FACTOR,
    TCP_FIXED_PARAMS,
    to_tcl,
)

__all__ = [
    "ACK_DSCP",
    "AGENT_TTL",
    "NS_ENV_VAR",
    "NS_MAX_CP",
    "POISSON_RATE_FACTOR",
    "TCP_FIXED_PARAMS",
    "TWO_COLOUR_OUT",
    "UNLIMITED_QUEUE_PKTS",
    "Ns2Error",
    "ns2_available",
    "run_ns2",
    "to_tcl",
    "unsupported_reason",
]
