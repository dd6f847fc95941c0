"""The emulated hosts' kernel settings: the congestion controls a namespace may select, the
sysctls each namespace is given, and what a sending host's kernel reports back."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

from qoslab.emulation.machine import EmulationError, sh


def allow_cc(cc: str, say: Any) -> None:
    """A namespace may select only the congestion controls the host allows
    (``net.ipv4.tcp_allowed_congestion_control``); ``cc`` is added to that list when the
    kernel has it, and is an error when it does not."""
    base = Path("/proc/sys/net/ipv4")
    available = (base / "tcp_available_congestion_control").read_text().split()
    allowed = (base / "tcp_allowed_congestion_control").read_text().split()
    if cc in allowed:
        return
    if cc not in available:
        raise EmulationError(
            f"cc: the kernel has no {cc!r} congestion control (available: {' '.join(available)}; "
            f"try `modprobe tcp_{cc}`)"
        )
    sh(["sysctl", "-q", "-w", f"net.ipv4.tcp_allowed_congestion_control={' '.join([*allowed, cc])}"])
    say(f"allowed the {cc} congestion control in namespaces (net.ipv4.tcp_allowed_congestion_control)")


def namespace_sysctls(cc: str, tcp: dict[str, Any]) -> dict[str, Any]:
    """The sysctls of every namespace: forwarding on, no reverse-path filter or IPv6, and the
    TCP of the scenario's senders (``tcp``: a flow's ``tcp`` table, empty without TCP)."""
    return {
        "net.ipv4.ip_forward": 1,
        "net.ipv4.conf.all.rp_filter": 0,
        "net.ipv4.conf.default.rp_filter": 0,
        "net.ipv6.conf.all.disable_ipv6": 1,
        "net.ipv6.conf.default.disable_ipv6": 1,
        # ns-2's one-way TCP: no SACK, no timestamps (the segment size is exactly the
        # scenario's packet size), ECN only where the scenario asks for it.
        # SACK as the scenario's senders (`variant = "sack"` or `sack = true`).
        "net.ipv4.tcp_sack": 1 if tcp.get("sack") else 0,
        "net.ipv4.tcp_timestamps": 0,
        "net.ipv4.tcp_ecn": 1 if tcp.get("ecn") else 0,
        "net.ipv4.tcp_no_metrics_save": 1,
        "net.ipv4.tcp_congestion_control": cc,
    }


#: The sysctls :func:`read_host_settings` reads back (the run sets the first six).
HOST_SYSCTLS = (
    "net.ipv4.tcp_congestion_control",
    "net.ipv4.tcp_sack",
    "net.ipv4.tcp_timestamps",
    "net.ipv4.tcp_ecn",
    "net.ipv4.tcp_no_metrics_save",
    "net.ipv4.conf.all.rp_filter",
    "net.ipv4.tcp_dsack",
    "net.ipv4.tcp_recovery",
    "net.ipv4.tcp_early_retrans",
    "net.ipv4.tcp_frto",
    "net.ipv4.tcp_window_scaling",
    "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_wmem",
    "net.ipv4.tcp_autocorking",
    "net.ipv4.tcp_slow_start_after_idle",
    "net.ipv4.tcp_pacing_ss_ratio",
    "net.ipv4.tcp_pacing_ca_ratio",
    "net.ipv4.tcp_min_tso_segs",
    "net.ipv4.tcp_limit_output_bytes",
    "net.ipv4.tcp_reordering",
    "net.ipv4.tcp_retries2",
    "net.core.default_qdisc",
)
#: The offloads read back from a host's veth (``ethtool -k``).
OFFLOADS = ("tcp-segmentation-offload", "generic-segmentation-offload", "generic-receive-offload")


def read_host_settings(ns_name: str, dev: str, node: str) -> dict[str, Any]:
    """A sending host's kernel settings as the kernel reports them (not as the run asked):
    ``uname -r``, :data:`HOST_SYSCTLS`, the :data:`OFFLOADS` of its veth, its qdiscs and
    routes (``initcwnd``). A sysctl this kernel lacks is recorded as ``None``."""
    sysctls: dict[str, str | None] = {}
    for k in HOST_SYSCTLS:
        r = subprocess.run(
            ["ip", "netns", "exec", ns_name, "sysctl", "-n", k], capture_output=True, text=True
        )
        if r.returncode != 0:  # a host-wide one (net.core.default_qdisc): the root namespace's
            r = subprocess.run(["sysctl", "-n", k], capture_output=True, text=True)
        sysctls[k] = " ".join(r.stdout.split()) if r.returncode == 0 else None
    eth = sh(["ip", "netns", "exec", ns_name, "ethtool", "-k", dev])
    offloads = {}
    for line in eth.splitlines():
        key, _, val = line.strip().partition(":")
        if key in OFFLOADS:
            offloads[key] = val.strip()
    return {
        "kernel": os.uname().release,
        "host": node,
        "device": dev,
        "sysctl": sysctls,
        "offloads": offloads,
        "qdiscs": sh(["ip", "netns", "exec", ns_name, "tc", "qdisc", "show"]).strip().splitlines(),
        "routes": sh(["ip", "-n", ns_name, "route", "show"]).strip().splitlines(),
    }
