"""Emulation mode, as ``qoslab.emulate`` (where the CLI, the docs and the tests import it):
the package :mod:`qoslab.emulation` re-exported, with the signal guard under its old names."""

from __future__ import annotations

from qoslab.emulation import (
    CONGESTION_CONTROLS,
    EPOCH_DELAY_S,
    HOST_SYSCTLS,
    KERNEL_CC,
    OFFLOADS,
    PORT_BASE,
    PREFIX,
    REPO,
    SINK_WAIT_S,
    STATE_DIR,
    TOOLS,
    EmulationError,
    EmuResult,
    RunState,
    availability,
    check_supported,
    cleanup_stale,
    compare_table,
    emulation_scenario,
    flow_ccs,
    linkd_path,
    list_namespaces,
    require,
    run,
    scenario_cc,
)
from qoslab.emulation.signals import Interrupted as _Interrupted
from qoslab.emulation.signals import Signals as _Signals

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
    "_Interrupted",
    "_Signals",
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
