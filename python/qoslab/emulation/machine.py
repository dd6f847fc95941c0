"""The machine an emulation runs on: whether it can (Linux, root, the tools, the link daemon,
NFQUEUE in a namespace), the commands it runs and the error it raises."""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

#: The prefix of every name a run creates (state files, namespaces, work directories).
PREFIX = "qlab-"
REPO = Path(__file__).resolve().parents[3]
TOOLS = ("ip", "iptables", "iptables-restore", "ethtool", "tc")


class EmulationError(RuntimeError):
    """Emulation cannot run (not root, a tool missing, a scenario feature not emulated)."""


def linkd_path() -> Path:
    """The link daemon binary: ``$QOSLAB_LINKD``, else the workspace's release build (a
    checkout), else the one a wheel installed beside this Python's ``qoslab`` command."""
    p = os.environ.get("QOSLAB_LINKD")
    if p:
        return Path(p)
    built = REPO / "target" / "release" / "qoslab-linkd"
    if built.exists():
        return built
    installed = Path(sys.executable).parent / "qoslab-linkd"
    if installed.exists():
        return installed
    found = shutil.which("qoslab-linkd")
    return Path(found) if found else built


def availability() -> tuple[bool, str]:
    """Whether emulation can run here, and if not, why (for skips and error messages)."""
    if not sys.platform.startswith("linux"):
        return False, "emulation needs Linux"
    if os.geteuid() != 0:
        return False, "emulation needs root (network namespaces, iptables, NFQUEUE); run as root"
    missing = [t for t in TOOLS if shutil.which(t) is None]
    if missing:
        return False, f"missing tools: {', '.join(missing)} (apt-get install iproute2 iptables ethtool)"
    if not linkd_path().exists():
        return False, f"link daemon not built: {linkd_path()} (run `make build`)"
    probe = f"{PREFIX}probe-{os.getpid()}"
    try:
        r = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
        if r.returncode != 0:
            return False, f"cannot create a network namespace: {r.stderr.strip()}"
        r = subprocess.run(
            [
                "ip",
                "netns",
                "exec",
                probe,
                "iptables",
                "-t",
                "mangle",
                "-A",
                "PREROUTING",
                "-j",
                "NFQUEUE",
                "--queue-num",
                "1",
            ],
            capture_output=True,
            text=True,
        )
        if r.returncode != 0:
            return False, f"iptables NFQUEUE unavailable in a namespace: {r.stderr.strip()}"
    finally:
        subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return True, ""


def require() -> None:
    ok, why = availability()
    if not ok:
        raise EmulationError(why)


def sh(args: list[str], input: str | None = None) -> str:
    """Runs a command (never through a shell); its stdout, or :class:`EmulationError` with its
    error output."""
    r = subprocess.run(args, capture_output=True, text=True, input=input)
    if r.returncode != 0:
        raise EmulationError(f"`{' '.join(args)}` failed: {r.stderr.strip() or r.stdout.strip()}")
    return r.stdout


def die_with_parent() -> None:
    """In the child before exec: get SIGKILL when the run's process dies (a killed run leaves
    no traffic or daemon behind), and lead a new process group."""
    os.setsid()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
