"""Emulation mode: a scenario on real Linux hosts and real kernel TCP, with qoslab's own
conditioners and queue disciplines deciding every packet's fate (docs/emulation.md).

One network namespace per scenario node (hosts and routers alike), one veth pair per link,
a /30 per link and a /32 identity address per node on its loopback, static routes that follow
the simulator's own minimum-hop routes, forwarding on, TSO/GSO/GRO off. Every link direction
a → b is emulated where its packets enter b: an iptables rule in b's namespace hands them to
NFQUEUE (queue number = direction index) and b's link daemon (`qoslab-linkd`, Rust) runs the
scenario's conditioners, queue discipline, transmitter and propagation delay on them.

Everything a run creates is recorded in a state file (``/run/qoslab-emu/PREFIX.json``)
*before* it is created; teardown (always: on success, error, Ctrl-C or SIGTERM) kills the
run's processes and deletes its namespaces (which takes their veths and iptables rules with
them). A run that was killed outright is cleaned up by the next run or by
``qoslab emulate --cleanup``. Only namespaces named in such a state file, with the run's
``qlab-`` prefix, are ever touched.

The package, by job: :mod:`~qoslab.emulation.machine` (can it run here, the commands),
:mod:`~qoslab.emulation.capability` (what of a scenario is emulated), :mod:`~qoslab.emulation.state`
(state files, teardown), :mod:`~qoslab.emulation.signals` (Ctrl-C and SIGTERM during a run),
:mod:`~qoslab.emulation.host` (the hosts' kernel settings), :mod:`~qoslab.emulation.network`
(namespaces, veths, routes, rules, counters), :mod:`~qoslab.emulation.processes` (traffic and
link daemons), :mod:`~qoslab.emulation.results` (the tables), :mod:`~qoslab.emulation.runner`
(one run, step by step) and ``traffic.py`` (the traffic itself, a standalone script).
"""

from __future__ import annotations

from qoslab.emulation.capability import (
    CONGESTION_CONTROLS,
    KERNEL_CC,
    check_supported,
    emulation_scenario,
    flow_ccs,
    scenario_cc,
)
from qoslab.emulation.host import HOST_SYSCTLS, OFFLOADS
from qoslab.emulation.machine import PREFIX, REPO, TOOLS, EmulationError, availability, linkd_path, require
from qoslab.emulation.network import PORT_BASE
from qoslab.emulation.processes import EPOCH_DELAY_S, SINK_WAIT_S
from qoslab.emulation.results import EmuResult, compare_table
from qoslab.emulation.runner import run
from qoslab.emulation.state import STATE_DIR, RunState, cleanup_stale, list_namespaces

__all__ = [
    "CONGESTION_CONTROLS",
    "EPOCH_DELAY_S",
    "HOST_SYSCTLS",
    "KERNEL_CC",
    "OFFLOADS",
    "PORT_BASE",
    "PREFIX",
    "REPO",
    "SINK_WAIT_S",
    "STATE_DIR",
    "TOOLS",
    "EmuResult",
    "EmulationError",
    "RunState",
    "availability",
    "check_supported",
    "cleanup_stale",
    "compare_table",
    "emulation_scenario",
    "flow_ccs",
    "linkd_path",
    "list_namespaces",
    "require",
    "run",
    "scenario_cc",
]
