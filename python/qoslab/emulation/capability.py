"""What the emulator can reproduce of a scenario: its senders' kernel congestion controls, the
run shortened to a duration, and one clear line for each feature it cannot run."""

from __future__ import annotations

from qoslab import schema
from qoslab.emulation.machine import EmulationError
from qoslab.scenario import Scenario

#: The kernel congestion control that runs each ``tcp.variant`` of the simulator, as each
#: sender's algorithm file declares it (the schema's ``$defs.sender``). Linux's ``reno`` is
#: NewReno with SACK; ns-2-style Reno, NewReno and SACK all map to it.
KERNEL_CC: dict[str, str] = {
    v: s["x-exports"]["kernel"] for v, s in schema.sender_kinds().items() if "kernel" in s["x-exports"]
}
#: Congestion controls the senders may use (``net.ipv4.tcp_congestion_control``).
CONGESTION_CONTROLS = tuple(dict.fromkeys(KERNEL_CC.values()))
#: The kernel modules that pace their senders themselves (their variants always pace).
_SELF_PACING = tuple(
    dict.fromkeys(
        KERNEL_CC[v] for v, s in schema.sender_kinds().items() if s["x-always-paces"] and v in KERNEL_CC
    )
)


def flow_ccs(sc: Scenario) -> list[str]:
    """The kernel congestion control of each flow's sender (its ``tcp.variant``; ``""`` for a
    UDP flow). Flows may differ (each source sets ``TCP_CONGESTION`` on its socket); SACK is a
    host sysctl, so it must be the same for all."""
    out: list[str] = []
    tcps = [f["tcp"] for f in sc.resolved["flows"] if f.get("tcp")]
    for f in sc.resolved["flows"]:
        t = f.get("tcp")
        if not t:
            out.append("")
            continue
        v = t["variant"]
        if v not in KERNEL_CC:
            raise EmulationError(
                f"tcp.variant: {v!r} is not emulated (the kernel side runs {', '.join(sorted(KERNEL_CC))})"
            )
        # Linux paces a TCP socket itself only when its congestion control asks (BBR); other
        # senders would run unpaced.
        if t["pacing"] and KERNEL_CC[v] not in _SELF_PACING:
            raise EmulationError(
                f"tcp.pacing: the kernel does not pace {v} senders without the fq qdisc; "
                f"pacing is emulated with {', '.join(_SELF_PACING)} only"
            )
        if t.get("linux_cc"):
            raise EmulationError(
                f"tcp.cc.{v}: the emulator runs the host's {KERNEL_CC[v]} module with its own "
                f"parameters and does not rewrite /sys/module/tcp_{KERNEL_CC[v]}/parameters (host-wide, "
                "and beta/bic_scale act only at module load); remove tcp.cc or run it with `qoslab run`"
            )
        if t.get("cc"):
            raise EmulationError(
                f"tcp.cc.{v}: the ns2 flavour's tuned constants have no counterpart on the emulated "
                f"hosts, which run the kernel's {KERNEL_CC[v]} module with its own; remove tcp.cc or "
                "run it with `qoslab run`"
            )
        out.append(KERNEL_CC[v])
    if len({t["sack"] for t in tcps}) > 1:
        raise EmulationError("tcp.sack: the emulated hosts run SACK for all flows or for none")
    return out


def scenario_cc(sc: Scenario, *, mixed: bool = False) -> str:
    """The kernel congestion control for the scenario's TCP senders: their ``tcp.variant``
    (one for all of them unless ``mixed``; then the first flow's, the hosts' default, while
    each source still sets its own: :func:`flow_ccs`)."""
    variants = {f["tcp"]["variant"] for f in sc.resolved["flows"] if f.get("tcp")}
    if len(variants) > 1 and not mixed:
        raise EmulationError(
            f"tcp.variant: the emulated hosts run one congestion control; the flows use {sorted(variants)}"
        )
    ccs = [c for c in flow_ccs(sc) if c]
    return ccs[0] if ccs else CONGESTION_CONTROLS[0]


def emulation_scenario(sc: Scenario, duration_s: float | None) -> Scenario:
    """The scenario shortened to ``duration_s`` (measurement window clipped into it: the second
    half of the run when the scenario's window does not fit)."""
    if duration_s is None:
        return sc
    dur_ns = int(duration_s * 1e9)
    m = sc.resolved["measurement"]
    sets = [f"duration={duration_s}s"]
    if m["start_ns"] >= dur_ns or m["end_ns"] > dur_ns:
        start = m["start_ns"] if m["start_ns"] < dur_ns else dur_ns // 2
        sets += [f"measurement.start={start / 1e9}s", f"measurement.end={duration_s}s"]
    return sc.with_overrides(sets)


def check_supported(sc: Scenario) -> None:
    """What the emulator cannot reproduce is refused with one clear line."""
    for i, f in enumerate(sc.resolved["flows"]):
        if f["kind"] != "tcp" and not schema.source_exports(f["kind"], "emulator"):
            raise EmulationError(f"flow[{i}] ({f['name']}): type {f['kind']!r} is not emulated")
        # the emulator's traffic generators run bulk TCP and fixed-size datagrams only
        if f.get("size_bytes") is not None:
            raise EmulationError(f"flow[{i}] ({f['name']}): a finite transfer (`size`) is not emulated")
        if f.get("packet_size_dist"):
            raise EmulationError(
                f"flow[{i}] ({f['name']}): packet sizes drawn from a distribution are not emulated"
            )
    for i, a in enumerate(sc.resolved.get("arrivals", [])):
        raise EmulationError(f"arrivals[{i}] ({a['name']}): flow-arrival processes are not emulated")
    if len(sc.resolved["flows"]) > 60000:
        raise EmulationError("too many flows for one port each")
    # Mechanisms that need the simulator's own hooks, which the link daemon does not drive
    # (TWAM's periodic ticks and cwnd feed, DWRED's window signal, FDD-RED's reverse-path RTT
    # estimator and oracle RTTs): each meter kind says itself (its schema's `x-exports`).
    for i, c in enumerate(sc.resolved.get("conditioners", [])):
        kind = c["meter"]["type"]
        exports = schema.meter_kinds()[kind]["x-exports"]
        if not exports["emulator"]:
            raise EmulationError(
                f"conditioner[{i}] ({c['name']}): a {kind} marker is not emulated "
                f"({exports['not_emulated']}); run it with `qoslab run`"
            )
    # A kernel run's timing noise is the host's own: a modelled one on top would count it twice.
    timing = sc.resolved.get("timing")
    if timing:
        named = f' ("{timing["preset"]}")' if timing.get("preset") else ""
        raise EmulationError(
            f"timing.jitter{named}: timing noise is not emulated (the host's own timing is the noise "
            'there); set it to "exact"'
        )
    # Each queue discipline says itself whether the link daemon can run it (its `emulable`).
    for lk in sc.resolved["links"]:
        if lk.get("jitter_ns"):
            raise EmulationError(
                f"link {lk['name']!r}: `jitter` is not emulated (the host's own timing is the noise "
                "there); set it to 0"
            )
        for d in ("queue_ab", "queue_ba"):
            q = lk[d]
            for x in (q, *(sub["queue"] for sub in q.get("queues", []))):
                if not x.get("emulable", True):
                    raise EmulationError(
                        f"link {lk['name']!r} {d}: a {x['type']} queue is not emulated (it needs the "
                        "simulator's signalling or reverse-path hooks); run it with "
                        "`qoslab run`"
                    )
