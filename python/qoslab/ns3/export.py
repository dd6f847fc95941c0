"""The resolved scenario as the ns-3 program's input (a JSON document), and what cannot be."""

from __future__ import annotations

from typing import Any

from qoslab import schema
from qoslab.ns3.mapping import (
    DEVICE_QUEUE,
    SACK_WORKAROUND,
    Ns3Refusal,
    codel_min_bytes,
    fq_codel_perturbation,
    ns_time,
    queue_disc,
    tcp_socket,
    udp_source,
)
from qoslab.scenario import to_ns2_resolved

#: ns-3's RNG: one fixed seed and the qoslab seed as the *run* number (ns-3's recommended
#: practice: runs are independent substreams of MRG32k3a, seeds are not guaranteed to be).
RNG_SEED = 1

#: The first RNG stream number given to the scenario's random variables (RED, PIE, UDP
#: sources), assigned in declaration order.
FIRST_STREAM = 100

#: A BBR flow's random stream (ProbeBW's phase draws) is ``BBR_FIRST_STREAM + its index``,
#: clear of the streams numbered from FIRST_STREAM.
BBR_FIRST_STREAM = 100_000

#: A flow's server port is ``BASE_PORT + its index`` (below ns-3's ephemeral ports, 49152+).
BASE_PORT = 10000

#: Set before anything is built. Every IPv4 packet leaves with TTL 255 (as the ns-2 export's
#: agents); the RTT estimator is the program's own (see ``QoslabRttPerRound`` there).
GLOBAL_DEFAULTS: list[list[str]] = [
    ["ns3::Ipv4L3Protocol::DefaultTtl", "255"],
    ["ns3::Ipv4GlobalRouting::RandomEcmpRouting", "false"],
    ["ns3::Ipv4GlobalRouting::RespondToInterfaceEvents", "false"],
    ["ns3::TcpL4Protocol::RecoveryType", "ns3::TcpClassicRecovery"],
    # the receivers' (the senders' is per flow: qoslab.ns3.mapping.RTT_ESTIMATOR)
    ["ns3::TcpL4Protocol::RttEstimatorType", "ns3::QoslabRttPerRound"],
]

#: Keys of the core's per-flow ``tcp`` table that the ns-2 form leaves out and ns-3 reads; the
#: congestion control's constants (``cc``: CUBIC's beta and c, DCTCP's g, as the flow's
#: ``tcp.cc.VARIANT`` gives them) are added as keys of their own, where its sender's ns-3
#: attributes look them up.
_TCP_EXTRA = ("sack", "pacing", "linux_cc")


def to_ns3_resolved(resolved: dict[str, Any], seed: int) -> dict[str, Any]:
    """The resolved scenario in SI units (:func:`qoslab.scenario.to_ns2_resolved`: the same
    form, random start times drawn for ``seed`` from qoslab's distribution) with the TCP keys
    only ns-3 reads (``sack``, ``pacing``, the congestion controls' parameters)."""
    r = to_ns2_resolved(resolved, seed)
    for f, core in zip(r["flows"], resolved["flows"], strict=True):
        if f.get("tcp") and core.get("tcp"):
            for k in _TCP_EXTRA:
                if k in core["tcp"]:
                    f["tcp"][k] = core["tcp"][k]
            f["tcp"].update(core["tcp"].get("cc") or {})
    return r


def _max_packet(r: dict[str, Any]) -> int:
    return max([int(f["packet_size_bytes"]) for f in r["flows"]] + [1500])


def _check_scenario(r: dict[str, Any]) -> None:
    for lk in r["links"]:
        if lk.get("jitter_s"):
            raise Ns3Refusal(
                f"link {lk['name']!r}: the ns-3 export has no link timing noise (`jitter`); set it to 0 "
                "to compare"
            )
    for c in r.get("conditioners") or []:
        raise Ns3Refusal(
            f"conditioner {c['name']!r}: DiffServ traffic conditioners (meters and markers) have no "
            "counterpart in the ns-3 export"
        )
    for a in r.get("arrivals") or []:
        raise Ns3Refusal(
            f"arrivals {a['name']!r}: flow-arrival processes are not supported by the ns-3 export "
            "(declare the transfers as [[flow]] tables with `size`)"
        )
    for f in r["flows"]:
        if f.get("packet_size_dist"):
            raise Ns3Refusal(
                f"flow {f['name']!r}: packet sizes drawn from a distribution are not supported by the "
                "ns-3 export"
            )


def program_input(r: dict[str, Any], seed: int, *, sack_workaround: bool = SACK_WORKAROUND) -> dict[str, Any]:
    """The ns-3 program's input for the SI-unit resolved scenario ``r`` (:func:`to_ns3_resolved`)
    and ``seed``. Raises :class:`Ns3Refusal` (one line: the element and why) for what ns-3
    cannot express. ``sack_workaround``: see :data:`qoslab.ns3.mapping.SACK_WORKAROUND`."""
    _check_scenario(r)
    max_packet = _max_packet(r)
    links = []
    for lk in r["links"]:
        out: dict[str, Any] = {
            "name": lk["name"],
            "a": lk["a"],
            "b": lk["b"],
            "data_rate": f"{round(float(lk['bandwidth_bps']))}bps",
            "delay": ns_time(lk["delay_s"]),
            "mtu": max_packet,
            "device_queue": DEVICE_QUEUE,
        }
        for qk in ("queue_ab", "queue_ba"):
            where = f"link {lk['name']!r} {qk}"
            q = lk[qk]
            disc = schema.queue_kinds().get(str(q.get("type")), {}).get("x-ns3", {}).get("queue_disc")
            if disc == "ns3::FqCoDelQueueDisc" and q.get("perturbation") is None:  # its hash's salt
                q = dict(q, perturbation=fq_codel_perturbation(seed, where))
            out[qk] = queue_disc(where, q, lk, max_packet)
        links.append(out)
    flows = []
    for i, f in enumerate(r["flows"]):
        where = f"flow {f['name']!r}"
        size = int(f["packet_size_bytes"])
        entry: dict[str, Any] = {
            "name": f["name"],
            "kind": "tcp" if f["kind"] == "tcp" else "udp",
            "src": f["src"],
            "dst": f["dst"],
            "port": BASE_PORT + i,
            "start_s": float(f["start_s"]),
            "stop_s": f.get("stop_s"),
            "packet_size_bytes": size,
        }
        if f["kind"] == "tcp":
            entry["tcp"] = tcp_socket(where, f, sack_workaround=sack_workaround)
            stream = schema.sender_kinds()[f["tcp"]["variant"]]["x-exports"]["ns3"].get("stream")
            if stream is not None:
                # BBR's ProbeBW's first phase is a random draw per flow (qoslab: the sender's
                # clock phase); TcpBbr's stream is 4 for every flow unless set, so every flow of
                # a run drew the same phases
                entry["tcp"]["defaults"].append([stream, str(BBR_FIRST_STREAM + i)])
            entry["payload_bytes"] = size - 40
            sb = f.get("size_bytes")
            # qoslab's finite transfer: ceil(size / packet_size) full segments after the SYN
            entry["segments"] = None if sb is None else -(-int(sb) // size)
            entry["size_bytes"] = sb
        else:
            entry["udp"] = udp_source(where, f)
            entry["payload_bytes"] = size - 28
            entry["segments"] = None
        if entry["payload_bytes"] <= 0:
            raise Ns3Refusal(f"{where}: packet_size {size} B leaves no payload after the headers")
        flows.append(entry)
    return {
        "seed": seed,
        "rng_seed": RNG_SEED,
        "rng_run": seed,
        "first_stream": FIRST_STREAM,
        # FQ-CoDel's per-flow CoDel queue discs are created with the defaults
        "defaults": [*GLOBAL_DEFAULTS, ["ns3::CoDelQueueDisc::MinBytes", str(codel_min_bytes(max_packet))]],
        "duration_s": float(r["duration_s"]),
        "window": {"start_s": float(r["measurement"]["start_s"]), "end_s": float(r["measurement"]["end_s"])},
        "nodes": list(r["nodes"]),
        "links": links,
        "flows": flows,
    }


def unsupported_reason(r: dict[str, Any]) -> str | None:
    """None if ns-3 can express the SI-unit resolved scenario ``r``, else one line naming the
    element and the reason."""
    try:
        program_input(r, 0)
    except Ns3Refusal as e:
        return str(e)
    return None
