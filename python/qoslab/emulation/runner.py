"""One emulation run, start to teardown: :func:`run` checks what it is asked, records the run's
state, and tears everything down whatever happens; :func:`_run` builds the network, runs the
traffic through the link daemons and collects the results, one named step at a time."""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from qoslab.emulation import network, processes
from qoslab.emulation.capability import (
    CONGESTION_CONTROLS,
    check_supported,
    emulation_scenario,
    flow_ccs,
    scenario_cc,
)
from qoslab.emulation.host import allow_cc
from qoslab.emulation.machine import EmulationError, linkd_path, require, sh
from qoslab.emulation.network import Net
from qoslab.emulation.processes import Children
from qoslab.emulation.results import EmuResult, assemble
from qoslab.emulation.signals import Signals
from qoslab.emulation.state import RunState, cleanup_stale, teardown_record
from qoslab.scenario import Scenario


def run(
    scenario: Scenario,
    seed: int | None = None,
    *,
    duration_s: float | None = None,
    out: str | Path | None = None,
    cc: str | None = None,
    kernel_links: tuple[str, ...] = (),
    dscp_count: bool = True,
    window_clamp: bool = False,
    log: Any = None,
) -> EmuResult:
    """Emulates ``scenario`` for ``duration_s`` real seconds (default: its own duration).

    ``cc``: congestion control of every TCP sender (reno, cubic or bbr); by default the one
    the scenario's ``tcp.variant`` names (:func:`scenario_cc`), and it must agree with it.
    Without ``cc`` the flows may name different variants: each source then runs its own
    (:func:`flow_ccs`).
    ``kernel_links``:
    links whose directions the kernel serialises instead of the daemon (htb at the link
    rate + pfifo of the queue's packet limit on the sender's veth; the daemon then adds the
    propagation delay only) — the calibration reference. ``window_clamp``: the receivers clamp
    their advertised window at the scenario's TCP ``window`` (ns-2's ``window_``) with
    ``TCP_WINDOW_CLAMP`` (off by default: see docs/emulation.md).
    """
    if cc is not None and cc not in CONGESTION_CONTROLS:
        raise EmulationError(f"cc: expected one of {', '.join(CONGESTION_CONTROLS)}, got {cc!r}")
    want = scenario_cc(scenario, mixed=cc is None)
    if cc is not None and cc != want:
        raise EmulationError(
            f"cc: {cc!r} differs from the scenario's tcp.variant (emulated as {want!r}); set "
            "tcp.variant instead, so that the simulation it is compared with runs the same sender"
        )
    cc = want
    if duration_s is not None and not (isinstance(duration_s, int | float) and 0 < duration_s <= 86400):
        raise EmulationError(f"duration: expected seconds in (0, 86400], got {duration_s!r}")
    # Ctrl-C and SIGTERM raise, so that the teardown runs, but never while something is being
    # created and recorded, nor during the teardown (see Signals).
    sig = Signals()
    st: RunState | None = None
    try:
        with sig.held():
            require()  # its probe namespace is deleted whenever Ctrl-C comes
        sc = emulation_scenario(scenario, duration_s)
        check_supported(sc)
        seed = sc.default_seed if seed is None else int(seed)
        for k in kernel_links:
            sc.link_direction_index(k)  # raises on an unknown link
        say = log or (lambda s: None)
        removed = cleanup_stale()
        if removed:
            say(f"removed leftovers of earlier runs: {', '.join(removed)}")
        with sig.held():
            st = RunState.new()
            work = Path(tempfile.mkdtemp(prefix=f"{st.prefix}-"))
            st.work = str(work)
            st.save()
        t_wall = time.perf_counter()
        res = _run(sc, seed, st, work, cc, kernel_links, dscp_count, window_clamp, say, t_wall, out, sig)
        sig.check()  # a Ctrl-C swallowed after the last wait: the run is still interrupted
        return res
    finally:
        sig.hold += 1  # first, before any call (where a signal could be raised)
        try:
            if st is not None:
                try:
                    teardown_record(json.loads(st.path.read_text()), st.path)
                finally:
                    if st.work:
                        shutil.rmtree(st.work, ignore_errors=True)
        finally:
            sig.hold -= 1
            sig.restore()


def _run(
    sc: Scenario,
    seed: int,
    st: RunState,
    work: Path,
    cc: str,
    kernel_links: tuple[str, ...],
    dscp_count: bool,
    window_clamp: bool,
    say: Any,
    t_wall: float,
    out: str | Path | None,
    sig: Signals,
) -> EmuResult:
    """The run inside :func:`run`'s teardown: the hosts' congestion controls, the network,
    the processes (sinks, time zero, link daemons, sources), the counters, the tables."""
    r = sc.resolved
    flow_cc = [c or cc for c in flow_ccs(sc)]
    for c in sorted(set(flow_cc)):
        allow_cc(c, say)
    scen_file = work / "scenario.toml"
    scen_file.write_text(sc.text)
    plan = json.loads(sh([str(linkd_path()), "plan", str(scen_file), str(seed)]))
    # the network: namespaces, veths, routes, NFQUEUE rules and counters
    net = Net.named(sc, st.prefix)
    network.add_namespaces(net, st, sig)
    network.set_up_nodes(net, cc)
    network.add_veths(net)
    network.add_routes(net, plan)
    settings = network.sending_host_settings(net)
    network.add_nfqueue_rules(net, sc, kernel_links)
    if dscp_count:
        network.add_dscp_counters(net, r.get("conditioners", []))
    # the processes: sinks, then the time zero, link daemons and sources
    dur = r["duration_ns"] / 1e9
    ch = Children(net, st, sig, work)
    processes.start_sinks(ch, window_clamp)
    processes.wait_for_sinks(ch)
    epoch, epoch_unix = processes.set_epoch(ch, dur)
    processes.start_link_daemons(ch, scen_file, seed, dur, epoch_unix)
    processes.wait_for_link_daemons(ch, epoch)
    say(f"{len(net.ns)} namespaces, {len(net.links)} links, {len(ch.daemons)} link daemons ({st.prefix})")
    processes.start_sources(ch, plan, flow_cc, seed, epoch, r["duration_ns"])
    say(f"traffic for {dur:g} s")
    processes.wait_for_traffic(ch, epoch, dur)
    # the counters: the receivers' iptables first (the daemons hold nothing by now)
    dscp_rows = network.read_dscp_counters(net)
    kernel_stats = network.read_kernel_stats(net)
    reports = processes.stop_link_daemons(ch)
    traffic = processes.traffic_reports(ch)
    res = assemble(sc, seed, reports, traffic, dscp_rows, time.perf_counter() - t_wall, st.prefix)
    for di, ks in kernel_stats.items():
        # the kernel's pfifo dropped and sent these (the daemon only delayed them)
        at = res.links["direction_index"] == di
        res.links.loc[at, "overflow_drops"] = ks["overflow_drops"]
        res.links.loc[at, "kernel_sent_packets"] = ks["departures"]
    res.host_settings = settings
    if out is not None:
        res.write(out)
    return res
