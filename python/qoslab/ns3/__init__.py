"""ns-3 (3.37) back end: export a resolved qoslab scenario to one C++ program's JSON input,
run it, read its results.

The package is split by job: :mod:`.mapping` (each element in ns-3: queue discs, TCP sockets,
UDP sources; or why it cannot be), :mod:`.export` (the program's input for a whole scenario)
and :mod:`.run` (compiling ``tools/ns3/qoslab_ns3.cc`` once into a cache directory keyed by the
hash of its source, running it, parsing its results). docs/validation/ns3.md gives the
agreement measured and every setting with its reason.

:func:`run_ns3` returns the ns-2 back end's results dict (see :mod:`qoslab.ns2`)::

    {"seed": int, "wall_time_s": float, "events": int,
     "flows": [{"name", "throughput_bps", "delivered_packets", "sent_packets",
                "retransmitted_packets", "timeouts", "fast_retransmits" (TCP)}],
     "links": [{"name", "direction": "ab" | "ba", "arrivals", "departures",
                "drops", "early_drops", "forced_drops", "marks", "reasons",
                "window_drops", "window_marks", "window_admitted", "window_wait_s",
                "mean_queue_delay_s"}],
     "total_drops": int, "packet_hops": int}

with finite transfers' ``size_bytes``, ``segments``, ``start_s``, ``end_s`` and ``fct_s``
(NaN when unfinished) as in ns-2's.

Semantics:

* Topology: one ns-3 node per qoslab node, one point-to-point link (DataRate, Delay, no
  interframe gap) per link, a /30 per link, global (shortest-path) routing. Every link
  direction has a queue disc (the scenario's queue) in front of a device transmit queue of
  one packet (``DEVICE_QUEUE``): ns-3 moves a packet from the queue disc to the device while
  the device queue has room, so the queue disc holds the backlog less one waiting packet.
  qoslab's limits count every waiting packet: the queue disc gets ``limit - 1`` packets (or
  ``limit_bytes`` less one mean packet), and RED's thresholds one packet less.
* Sizes: qoslab's ``packet_size`` is the IP packet: TCP segments carry ``packet_size - 40``
  bytes (no TCP options on data: timestamps and SACK off unless asked), UDP datagrams
  ``packet_size - 28``. ns-3's point-to-point device adds a 2-byte PPP header on the wire, so a
  link carries ``packet_size + 2`` bytes per packet (0.4 % fewer packets per second at 500 B).
* Throughput: the bytes (IP packets) of a flow's data delivered to its receiver's transport
  layer inside the measurement window, retransmitted and duplicate copies included (qoslab's
  definition), × 8 / the window. ``sent_packets`` counts data packets the sender's IP layer
  emits (retransmissions included); a retransmission is a segment that ends at or below the
  highest sequence number sent before.
* Queueing delay: from a packet's admission to the queue disc to the start of its
  transmission, averaged over the packets admitted inside the measurement window that started
  transmission (qoslab's ``window_wait_ns / window_admitted``). Drop reasons (``reasons``:
  ns-3's own strings, with counts) are classified by the mapping (early: RED/PIE "Unforced
  drop", CoDel "Target exceeded drop"; every other drop is forced). ``window_drops`` and
  ``window_marks`` count inside the measurement window; the other counters the whole run.
  ``timeouts`` and ``fast_retransmits`` count a TCP sender's entries into CA_LOSS and
  CA_RECOVERY.
* TCP: see :func:`qoslab.ns3.mapping.tcp_socket`; every socket attribute is set, ns-3's
  defaults are never relied on. The program adds three classes of its own to match qoslab's
  TCP where ns-3.37 differs (docs/validation/ns3.md): ``QoslabNewReno`` (TcpNewReno halving
  the window, not the SACK pipe), ``QoslabRttPerRound`` (one RTT sample per round trip, Karn's
  rule on the handshake) and ``QoslabTcpSocket`` (the retransmission timer restarted at a fast
  retransmit). SACK is on for every socket (:data:`SACK_WORKAROUND`). FCT: from the
  application's start (the SYN) to the first ACK at the sender that covers the last data byte.
* UDP: ``cbr`` sends its first packet at ``start_s`` and one per packet time; ``poisson``
  waits an exponential gap first; ``onoff`` starts ON, with exponential ON and OFF durations,
  packets at the peak rate while ON (as qoslab).
* RNG: ``RngSeedManager::SetSeed(RNG_SEED)`` and ``SetRun(seed)``; RED's, PIE's and the UDP
  sources' random variables get fixed stream numbers from ``FIRST_STREAM`` in declaration
  order. Start times are drawn by the exporter (:func:`qoslab.scenario.to_ns2_resolved`).
"""

from __future__ import annotations

from qoslab.ns3.export import (
    BASE_PORT,
    FIRST_STREAM,
    RNG_SEED,
    program_input,
    to_ns3_resolved,
    unsupported_reason,
)
from qoslab.ns3.mapping import CONGESTION, DEVICE_QUEUE, RECOVERY, SACK_WORKAROUND, Ns3Refusal
from qoslab.ns3.run import Ns3Error, build_program, ns3_available, ns3_missing, run_ns3

__all__ = [
    "BASE_PORT",
    "CONGESTION",
    "DEVICE_QUEUE",
    "FIRST_STREAM",
    "RECOVERY",
    "RNG_SEED",
    "SACK_WORKAROUND",
    "Ns3Error",
    "Ns3Refusal",
    "build_program",
    "ns3_available",
    "ns3_missing",
    "program_input",
    "run_ns3",
    "to_ns3_resolved",
    "unsupported_reason",
]
