"""Running a reference simulator (ns-2, ns-3) as a child process that writes one JSON results
file: the timeout, the exit status, a missing or unreadable file and the wall time, handled
once for both back ends."""

from __future__ import annotations

import json
import math
import os
import subprocess
import time
from collections.abc import Sequence
from typing import Any


def tail(text: str, limit: int = 4000) -> str:
    """The last ``limit`` characters of a process's output, stripped."""
    text = text.strip()
    return text if len(text) <= limit else "..." + text[-limit:]


def run_json(
    cmd: Sequence[str],
    workdir: str,
    out_path: str,
    timeout: float | None,
    name: str,
    error: type[Exception],
    what: str,
) -> dict[str, Any]:
    """Runs ``cmd`` in ``workdir`` and reads the JSON object it writes to ``out_path`` (removed
    first, so a stale file is never read); its ``wall_time_s`` is the child's wall time.
    Failures raise ``error`` naming ``name`` (the simulator) and ``what`` (its input file)."""
    if os.path.exists(out_path):
        os.remove(out_path)
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(
            list(cmd),
            cwd=workdir,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise error(f"{name} timed out after {timeout} s ({what})") from exc
    wall = time.perf_counter() - t0
    if proc.returncode != 0 or not os.path.exists(out_path):
        msg = tail(proc.stderr) or tail(proc.stdout) or "(no output)"
        raise error(f"{name} failed with exit code {proc.returncode} on {what}: {msg}")
    try:
        with open(out_path, encoding="utf-8") as fh:
            results: dict[str, Any] = json.load(fh)
    except (OSError, ValueError) as exc:
        raise error(f"{name} wrote unreadable results {out_path}: {exc}") from exc
    results["wall_time_s"] = wall
    return results


def transfer_times(results: dict[str, Any]) -> None:
    """A finite transfer's ``end_s`` and ``fct_s`` as floats, NaN when it had not finished by
    ``duration_s`` (the simulator writes null). Bulk and UDP flows have no transfer fields."""
    for f in results["flows"]:
        if "size_bytes" not in f:
            continue
        for k in ("start_s", "end_s", "fct_s"):
            f[k] = math.nan if f[k] is None else float(f[k])
