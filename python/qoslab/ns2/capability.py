"""What ns-2 can express, element by element: each link direction's queue (asked of the core:
every mechanism's file says how ns-2 expresses it, or why it cannot), each flow, each
conditioner. Scenario-wide questions (routing, dsRED planning) are in :mod:`.plan`."""

from __future__ import annotations

import json
from typing import Any

from qoslab import schema


def tcp_agent(variant: str) -> dict[str, Any] | None:
    """ns-2.35's agents that run TCP sender ``variant``, as its algorithm's file declares them
    (``{agent, sink, settings}``), or None: ns-2 has no such agent."""
    agent: dict[str, Any] | None = schema.sender_kinds()[variant]["x-exports"].get("ns2")
    return agent


def in_dsred(q: Any) -> bool:
    """ns-2 runs queue ``q`` as one of dsRED's queues (rio, wred, multi), planned with the
    scenario's conditioners: the core says so (its ``ns2`` is ``"dsred"``)."""
    return isinstance(q, dict) and q.get("ns2") == "dsred"


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


NS_MAX_QUEUES = 8  # MAX_QUEUES, physical queues per dsRED queue


NS_MAX_POLICIES = 20  # MAX_POLICIES, policy-table entries per edge queue


def meter_policy(kind: str) -> dict[str, Any] | None:
    """ns-2's dsRED policy that runs meter kind ``kind``, as the meter's own file declares it
    (the schema's ``x-exports``): ``{policy, colours, args, any_pre_colour, fixed_window_s?}``,
    or None when ns-2 has none."""
    ns2: dict[str, Any] = schema.meter_kinds()[kind]["x-exports"]["ns2"]
    return None if "refused" in ns2 else ns2


SCHEDULERS = {"priority": "PRI", "rr": "RR", "wrr": "WRR"}


PRE_NOT_GREEN = frozenset((12, 14, 20, 22, 28, 30, 36, 38))  # pre-coloured yellow/red (AFx2/AFx3)


class Refusal(Exception):
    """The scenario cannot be expressed with ns-2's dsRED queues."""


def core_export(q: dict[str, Any]) -> dict[str, Any] | None:
    """The core's description of a queue as a ``Queue/CLASS`` with its settings (the
    mechanism's own file says how ns-2 expresses it), or None for dsRED kinds and refusals."""
    ns2 = q.get("ns2")
    return ns2.get("queue") if isinstance(ns2, dict) else None


def queue_reason(where: str, q: Any) -> str | None:
    """Why ns-2 cannot express queue ``q``, as the core says (each mechanism's file implements
    its ``ns2`` capability, dsRED's limits included), or None."""
    ns2 = q.get("ns2") if isinstance(q, dict) else None
    if isinstance(ns2, dict) and "refused" in ns2:
        return f"{where}: {ns2['refused']}"
    if ns2 != "dsred" and core_export(q) is None:
        kind = q.get("type") if isinstance(q, dict) else q
        return f"{where}: queue type {kind!r} is not supported by the ns-2 export"
    return None


def flow_reason(where: str, f: dict[str, Any]) -> str | None:
    """Why ns-2 cannot run flow ``f`` (the core has validated it), or None."""
    if f["kind"] != "tcp" and not schema.source_exports(f["kind"], "ns2"):
        return f"{where}: flow kind {f['kind']!r} is not supported by the ns-2 export"
    if f.get("packet_size_dist"):
        return (
            f"{where}: packet sizes drawn from a distribution ({f['packet_size_dist']}) are not "
            "supported by the ns-2 export"
        )
    flavour = f["tcp"].get("flavour", "ns2") if f["kind"] == "tcp" else "ns2"
    if flavour != "ns2":
        return (
            f"{where}: its TCP sender is the {flavour} flavour's (tcp.flavour = {json.dumps(flavour)}), "
            'which ns-2\'s agents do not run; set tcp.flavour = "ns2" to export it'
        )
    if f["kind"] == "tcp" and tcp_agent(f["tcp"]["variant"]) is None:
        variant = f["tcp"]["variant"]
        supported = ", ".join(v for v in schema.sender_kinds() if tcp_agent(v) is not None)
        return f"{where}: TCP variant {variant!r} is not supported (only {supported})"
    if f["kind"] == "tcp" and f.get("size_bytes") is not None and f.get("stop_s") is not None:
        # ns-2's FTP stop (`advance 0`) sets curseq_ to maxseq_, so `done` fires once segment
        # maxseq_ - 1 is acknowledged; qoslab's stop keeps curseq at maxseq + 1: a stopped
        # transfer would "complete" one segment apart in the two simulators.
        return (
            f"{where}: a finite transfer (`size`) with `stop` is not supported by the ns-2 export "
            "(ns-2's FTP stop truncates the transfer one segment before qoslab's does)"
        )
    return None


def ds_active(resolved: dict[str, Any]) -> bool:
    """True if the scenario uses conditioners or rio/wred/multi queues."""
    if resolved.get("conditioners"):
        return True
    return any(
        in_dsred(link.get(qk)) for link in resolved.get("links", []) for qk in ("queue_ab", "queue_ba")
    )


def conditioner_reason(where: str, c: dict[str, Any], resolved: dict[str, Any]) -> str | None:
    """Why ns-2 cannot run conditioner ``c`` (validated by the core) in a dsRED edge queue, or
    None. Whether its classifier can be expressed is the planner's question."""
    m = c["meter"]
    ns2 = schema.meter_kinds()[m["type"]]["x-exports"]["ns2"]
    if ns2.get("refused"):
        return f"{where}: {ns2['refused']}"
    if "refused" in ns2:
        policers = ", ".join(k for k in schema.meter_kinds() if meter_policy(k) is not None)
        return f"{where}: meter {m['type']!r} is not one of ns-2's policers ({policers})"
    fixed = ns2.get("fixed_window_s")
    if fixed is not None and m.get("win_len_s") not in (None, fixed):
        return (
            f"{where}: ns-2's {ns2['policy']} has a fixed {fixed:g} s window (win_len_s must be None "
            f"or {fixed!r})"
        )
    link = next(lk for lk in resolved["links"] if lk["name"] == c["link"])
    q = link["queue_" + c["direction"]]
    if (core_export(q) or {}).get("early_drops"):
        return (
            f"{where}: the queue of link {c['link']!r} {c['direction']} is a {q['type']} queue; ns-2 marks "
            "packets only inside a dsRED edge queue, whose RED is not Queue/RED (use droptail, rio, "
            "wred or multi there)"
        )
    if core_export(q) is not None and q.get("limit_bytes") is not None:  # a DropTail (no early drops)
        return (
            f"{where} (queue of link {c['link']!r} {c['direction']}): a {q['type']} queue inside dsRED "
            "counts packets; a byte limit is not supported"
        )
    return None
