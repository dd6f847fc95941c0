"""Packets a run may hold at once, for its memory estimate (:mod:`qoslab.budget`): those in the
links' propagation lines, and those waiting in their queues that sources at a set rate can pile
up faster than a link drains them."""

from __future__ import annotations

import math
from typing import Any

from qoslab import _core

#: A packet in a link's propagation line: its slot in the packet arena and its entry in the
#: line (73 + 24 bytes: a run's ``memory_bytes``, ``packet_slot`` and ``line_entry``), counted
#: as 100, at :data:`LINE_FACTOR` times that: the arena and the line grow by doubling.
LINE_PACKET_BYTES = 100
LINE_FACTOR = 2.0
#: Packets alive at once in TCP flows that all cross one link (:func:`line_packets`), at most
#: this many times what that link carries in their longest round trip (data and ACKs, slow
#: start's overshoot, the queues). Measured in the buffer-sizing dumbbell: 1.2 times it in the
#: study's 10,000-flow headline run (150-350 ms, starts over 5 s); 2.2, 3.9 and 1.5 times at
#: 2,000, 10,000 and 50,000 flows of 60-140 ms starting within 2.5, 2 and 2 s.
CUT_FACTOR = 4.0
#: A packet waiting in a queue: its slot in the packet arena and its entry in the queue (73 + 16
#: bytes), counted as a line's packet is, at :data:`LINE_FACTOR` times that.
QUEUE_PACKET_BYTES = LINE_PACKET_BYTES


def _sources(resolved: dict[str, Any], core: _core.Resolved) -> tuple[float, float, float, bool, float]:
    """What the sources can put into the links' lines: (packets a second of the UDP sources,
    at their rates; packets the others can have out at once: a TCP connection its ``window`` of
    data and as many ACKs, a trace its rows; their smallest data packet; whether ACKs travel;
    the UDP sources' bits a second together, a two-state source at its faster rate)."""
    detail = core.outline(
        [
            ("flows", ("kind", "packet_size_bytes", "rate_bps", "lambda1", "lambda2", "tcp", "trace")),
            ("links", ()),
            ("nodes", ()),
            ("conditioners", ()),
            ("captures", ()),
        ]
    )["flows"]
    rate = alive = bps = 0.0
    smallest = math.inf
    acks = False
    # each source answers by the fields its kind has (the outline carries only those): a rate
    # (bit/s), a pair of arrival rates (packets/s), or a trace's rows
    for f in detail:
        if "rate_bps" in f:
            rate += float(f["rate_bps"]) / (8 * float(f["packet_size_bytes"]))
            bps += float(f["rate_bps"])
        elif "lambda1" in f:
            rate += max(float(f["lambda1"]), float(f["lambda2"]))
            bps += max(float(f["lambda1"]), float(f["lambda2"])) * 8 * float(f["packet_size_bytes"])
        elif (replayed := f.get("trace")) is not None:
            alive += float(replayed["rows"])
            smallest = 1.0  # its rows' sizes, not the nominal one
        if "tcp" in f:
            acks = True
            alive += 2.0 * int(f["tcp"]["window_pkts"])
        smallest = min(smallest, float(f["packet_size_bytes"]))
    for a in resolved.get("arrivals", []):
        acks = True
        alive += 2.0 * int(a["max_active"]) * int(a["tcp"]["window_pkts"])
        smallest = min(smallest, float(a["packet_size_bytes"]))
    return rate, alive, (smallest if math.isfinite(smallest) else 1.0), acks, bps


def _components(nodes: list[str], edges: list[tuple[str, str, float]]) -> dict[str, tuple[str, float]] | None:
    """Each node's component (its root) and its distance (delay) from that root, if every
    component of the graph ``edges`` is a tree (one path between two nodes); ``None`` if not."""
    adj: dict[str, list[tuple[str, float]]] = {x: [] for x in nodes}
    for a, b, d in edges:
        adj[a].append((b, d))
        adj[b].append((a, d))
    seen: dict[str, tuple[str, float]] = {}
    for root in nodes:
        if root in seen:
            continue
        seen[root] = (root, 0.0)
        stack, size, degree = [root], 1, 0
        while stack:
            x = stack.pop()
            here = seen[x][1]
            degree += len(adj[x])
            for y, d in adj[x]:
                if y not in seen:
                    seen[y] = (root, here + d)
                    stack.append(y)
                    size += 1
        if degree // 2 != size - 1:  # a cycle (or parallel links): more than one path
            return None
    return seen


def _through_bottleneck(resolved: dict[str, Any], core: _core.Resolved) -> tuple[float, str] | None:
    """At most how many packets (data and ACKs, in lines and queues) a scenario whose sources
    are all TCP connections crossing its measurement bottleneck has alive at once: the
    bottleneck's rate in the smallest data packets over the longest round trip through it, at
    :data:`CUT_FACTOR` times that. It applies when the bottleneck is the only link between the
    flows' ends (removing it leaves each flow's ends in the two trees on either side, so each
    round trip is the trees' paths and the bottleneck's delay, twice); ``None`` otherwise."""
    name = resolved["measurement"].get("bottleneck")
    if not name or resolved.get("arrivals"):
        return None
    detail = core.outline(
        [
            ("flows", ("src", "dst", "kind", "packet_size_bytes")),
            ("links", ("a", "b")),
            ("nodes", ()),
            ("conditioners", ()),
            ("captures", ()),
        ]
    )
    flows = detail["flows"]
    if not flows or any(f["kind"] != "tcp" for f in flows):
        return None
    at = [i for i, lk in enumerate(resolved["links"]) if lk["name"] == name]
    if len(at) != 1:
        return None
    ends = detail["links"][at[0]]
    edges = [
        (lk["a"], lk["b"], (int(r.get("delay_ns", 0)) + int(r.get("jitter_ns", 0))) / 1e9)
        for i, (lk, r) in enumerate(zip(detail["links"], resolved["links"], strict=True))
        if i != at[0]
    ]
    # the two ends first: each side's tree is rooted at the bottleneck
    comp = _components([ends["a"], ends["b"], *detail["nodes"]], edges)
    if comp is None:
        return None
    sides = {comp[ends["a"]][0], comp[ends["b"]][0]}
    if len(sides) != 2 or any({comp[f["src"]][0], comp[f["dst"]][0]} != sides for f in flows):
        return None
    far = {side: max(d for r, d in comp.values() if r == side) for side in sides}
    lk = resolved["links"][at[0]]
    one_way = sum(far.values()) + (int(lk.get("delay_ns", 0)) + int(lk.get("jitter_ns", 0))) / 1e9
    size = max(min(int(f["packet_size_bytes"]) for f in flows), 1)
    return CUT_FACTOR * float(lk["bandwidth_bps"]) / (8 * size) * 2 * one_way, str(name)


def line_packets(resolved: dict[str, Any], core: _core.Resolved | None = None) -> tuple[float, str, str]:
    """At most how many packets the links' propagation lines hold at once, and the link whose
    lines hold most with the key that makes them long (``link.delay`` or ``link.jitter``).

    A packet stays in its link direction's line from the end of its transmission until it
    arrives, ``delay`` plus at most ``jitter`` later: a line holds what entered it in that time
    (or the whole run, if shorter). What enters is at most the link's rate in the smallest
    data packets the scenario sends (twice that with TCP: the ACKs of the other direction's
    data), and at most what the sources offer (:func:`_sources`): UDP sources at their rates,
    TCP connections (their window of data and its ACKs) and traces (their rows) up to what they
    can have out at once; in all lines together at most what the UDP sources send over the
    whole run plus that. Without ``core`` (no rates, no windows) the links alone bound it, at
    1-byte packets. TCP connections that all cross the measurement bottleneck are bounded by
    what it carries in their longest round trip (:func:`_through_bottleneck`) where that is less."""
    dur_s = int(resolved["duration_ns"]) / 1e9
    props = [
        (lk, min((int(lk.get("delay_ns", 0)) + int(lk.get("jitter_ns", 0))) / 1e9, dur_s))
        for lk in resolved["links"]
    ]
    # Below 16 MB at 1-byte packets (and their ACKs), not worth looking the sources up.
    quick = sum(2 * float(lk["bandwidth_bps"]) / 8 * p for lk, p in props)
    if core is None or 2 * quick * LINE_FACTOR * LINE_PACKET_BYTES < 16e6:
        rate, alive, smallest, acks = 0.0, math.inf, 1.0, True
    elif (through := _through_bottleneck(resolved, core)) is not None and through[0] < 2 * quick:
        return through[0], through[1], "link.delay"
    else:
        rate, alive, smallest, acks, _ = _sources(resolved, core)
    total = 0.0
    most = (0.0, "", "")
    for lk, p in props:
        per_dir = min(float(lk["bandwidth_bps"]) / (8 * smallest) * (2 if acks else 1) * p, rate * p + alive)
        total += 2 * per_dir
        if 2 * per_dir > most[0]:
            key = "link.jitter" if int(lk.get("jitter_ns", 0)) > int(lk.get("delay_ns", 0)) else "link.delay"
            most = (2 * per_dir, str(lk["name"]), key)
    # A packet is in one line at a time.
    return min(total, rate * dur_s + alive), most[1], most[2]


def _limit_packets(q: dict[str, Any] | None, smallest: float) -> float:
    """The packets a link direction's queue ``q`` (its resolved form) holds at most: its limit
    in packets, or in bytes over the smallest packet, with its physical queues' own (``multi``)."""
    if not q:
        return 0.0
    if q.get("limit_pkts") is not None:
        n = float(q["limit_pkts"])
    elif q.get("limit_bytes") is not None:
        n = float(q["limit_bytes"]) / smallest
    else:
        n = 0.0
    return n + sum(_limit_packets(sub.get("queue"), smallest) for sub in q.get("queues", []))


def queued_packets(resolved: dict[str, Any], core: _core.Resolved | None) -> float:
    """At most how many packets of sources at a set rate wait in the links' queues at once. A
    queue grows only where what arrives outpaces its link: only a link direction slower than
    all such sources together counts, each up to its limit (which may be 2^32 packets) and to
    what that excess brings over the run; all together at most what those sources send in it.
    TCP's packets are bounded by their windows, counted in the lines (:func:`line_packets`).
    Without ``core`` (no rates) none."""
    if core is None:
        return 0.0
    rate, _, smallest, _, offered = _sources(resolved, core)
    if rate <= 0:
        return 0.0
    dur_s = int(resolved["duration_ns"]) / 1e9
    rest: tuple[str, ...] = ()
    others = ("flows", "nodes", "conditioners", "captures")
    queues = core.outline([("links", ("queue_ab", "queue_ba")), *((k, rest) for k in others)])["links"]
    room = 0.0
    for lk, q in zip(resolved["links"], queues, strict=True):
        excess = offered - float(lk["bandwidth_bps"])
        if excess > 0:
            piled = excess * dur_s / (8 * smallest)
            room += sum(min(_limit_packets(q.get(d), smallest), piled) for d in ("queue_ab", "queue_ba"))
    return min(room, rate * dur_s)
