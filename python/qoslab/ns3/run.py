"""Compiling the ns-3 program once (cached by the hash of its source) and running it."""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from qoslab.ns3.export import program_input
from qoslab.ns3.mapping import SACK_WORKAROUND
from qoslab.runs.refrun import run_json, transfer_times

#: The program's source, in the repository (tools/ns3/qoslab_ns3.cc).
SOURCE = Path(__file__).resolve().parents[3] / "tools" / "ns3" / "qoslab_ns3.cc"

#: Environment variable naming a directory to cache the compiled program in (default
#: ``~/.cache/qoslab/ns3``); the binary goes in ``<cache>/<hash>/qoslab_ns3``.
CACHE_ENV_VAR = "QOSLAB_NS3_CACHE"

#: The ns-3 libraries the program links (Debian's libns3-dev, ns-3.37).
NS3_LIBS = ("core", "network", "internet", "point-to-point", "applications", "traffic-control")

#: Headers the program needs: ns-3's (libns3-dev) and nlohmann's JSON (nlohmann-json3-dev).
_HEADERS = ("/usr/include/ns3/core-module.h", "/usr/include/nlohmann/json.hpp")

_CXXFLAGS = ("-O2", "-std=c++17", "-I/usr/include")


class Ns3Error(RuntimeError):
    """ns-3 is missing, the program failed to build or to run, or it wrote no usable results."""


def _compiler() -> str | None:
    return shutil.which(os.environ.get("CXX") or "g++")


def ns3_missing() -> str | None:
    """Why the ns-3 back end cannot run here (no compiler, no ns-3 or JSON headers, no ns-3
    libraries), or None when it can."""
    if _compiler() is None:
        return "no C++ compiler (g++)"
    for h in _HEADERS:
        if not os.path.exists(h):
            return f"{h} not found (apt-get install libns3-dev nlohmann-json3-dev, or `make ns3`)"
    libdirs = ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib", "/usr/local/lib")
    for lib in NS3_LIBS:
        if not any(os.path.exists(os.path.join(d, f"libns3-{lib}.so")) for d in libdirs):
            return f"libns3-{lib}.so not found (apt-get install libns3-dev, or `make ns3`)"
    if not SOURCE.exists():
        return f"{SOURCE} not found"
    return None


def ns3_available() -> bool:
    return ns3_missing() is None


def _cache_dir() -> Path:
    base = os.environ.get(CACHE_ENV_VAR)
    return Path(base) if base else Path.home() / ".cache" / "qoslab" / "ns3"


def program_path() -> Path:
    """Where the compiled program for the current source (and flags) lives."""
    h = hashlib.sha256(SOURCE.read_bytes())
    h.update(" ".join((*_CXXFLAGS, *NS3_LIBS)).encode())
    return _cache_dir() / h.hexdigest()[:16] / "qoslab_ns3"


def build_program() -> Path:
    """The compiled program, compiling it first if this source has not been compiled yet
    (about 15 s). Concurrent builders each compile to a temporary name and rename."""
    missing = ns3_missing()
    if missing:
        raise Ns3Error(f"ns-3 is not available: {missing}")
    exe = program_path()
    if exe.exists():
        return exe
    exe.parent.mkdir(parents=True, exist_ok=True)
    tmp = exe.with_name(f"qoslab_ns3.{os.getpid()}.tmp")
    libs = [f"-lns3-{lib}" for lib in NS3_LIBS]
    cmd = [_compiler() or "g++", *_CXXFLAGS, str(SOURCE), "-o", str(tmp), "-Wl,--no-as-needed", *libs]
    p = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if p.returncode != 0:
        raise Ns3Error(f"compiling {SOURCE} failed: {p.stderr.strip()[-3000:]}")
    os.replace(tmp, exe)
    return exe


def run_ns3(
    resolved: dict[str, Any],
    seed: int,
    *,
    workdir: str | None = None,
    timeout: float | None = None,
    sack_workaround: bool = SACK_WORKAROUND,
) -> dict[str, Any]:
    """Run the SI-unit resolved scenario (:func:`qoslab.ns3.to_ns3_resolved`) in ns-3 with
    ``seed``; the parsed results (see the package documentation). ``scenario.json`` and
    ``results.json`` go to ``workdir`` (kept) or to a temporary directory (removed). Raises
    :class:`qoslab.ns3.Ns3Refusal` for what ns-3 cannot express and :class:`Ns3Error` when ns-3
    is missing or fails."""
    doc = program_input(resolved, seed, sack_workaround=sack_workaround)
    exe = build_program()
    if workdir is None:
        with tempfile.TemporaryDirectory(prefix="qoslab-ns3-") as tmp:
            return _run_in(exe, doc, tmp, timeout)
    os.makedirs(workdir, exist_ok=True)
    return _run_in(exe, doc, workdir, timeout)


def _run_in(exe: Path, doc: dict[str, Any], workdir: str, timeout: float | None) -> dict[str, Any]:
    inp = os.path.join(workdir, "scenario.json")
    out = os.path.join(workdir, "results.json")
    with open(inp, "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=1)
    results = run_json([str(exe), inp, out], workdir, out, timeout, "ns-3", Ns3Error, inp)
    transfer_times(results)
    for lk in results["links"]:
        if lk["mean_queue_delay_s"] is None:
            lk["mean_queue_delay_s"] = math.nan
    return results
