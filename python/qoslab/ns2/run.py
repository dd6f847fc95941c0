"""Running ns-2 on an exported script and reading its results back (DiffServ counters
included)."""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any

from qoslab.ns2.plan import DsPlan
from qoslab.ns2.tcl import build_tcl
from qoslab.runs.refrun import run_json, transfer_times

#: Environment variable that may name the ns-2 binary (default: ``ns`` on PATH).
NS_ENV_VAR = "QOSLAB_NS2"


class Ns2Error(RuntimeError):
    """ns-2 is missing, failed, timed out or wrote no usable results."""


def ns2_available() -> str | None:
    """Return the path of the ns-2 binary, or None if it cannot be found.

    The binary is ``$QOSLAB_NS2`` if that variable is set, else ``ns`` on PATH.
    """
    return shutil.which(os.environ.get(NS_ENV_VAR) or "ns")


def run_ns2(
    resolved: dict[str, Any],
    seed: int,
    *,
    workdir: str | None = None,
    timeout: float | None = None,
) -> dict[str, Any]:
    """Run ``resolved`` in ns-2 with ``seed`` and return the parsed results.

    The script (``scenario.tcl``) and results (``results.json``) are written to
    ``workdir``, which is kept, or to a temporary directory that is removed.
    ``wall_time_s`` in the result is the wall-clock time of the whole ``ns``
    process.  Raises ValueError for scenarios ns-2 cannot express and
    :class:`Ns2Error` if ns-2 is missing, fails, times out or writes no results.
    """
    ns = ns2_available()
    if ns is None:
        raise Ns2Error("ns-2 binary not found (install Debian package ns2 or set QOSLAB_NS2)")
    if workdir is None:
        with tempfile.TemporaryDirectory(prefix="qoslab-ns2-") as tmp:
            return _run_in(ns, resolved, seed, tmp, timeout)
    os.makedirs(workdir, exist_ok=True)
    return _run_in(ns, resolved, seed, workdir, timeout)


def _run_in(
    ns: str, resolved: dict[str, Any], seed: int, workdir: str, timeout: float | None
) -> dict[str, Any]:
    script_path = os.path.join(workdir, "scenario.tcl")
    out_path = os.path.join(workdir, "results.json")
    script, plan = build_tcl(resolved, seed, out_path)
    with open(script_path, "w", encoding="utf-8") as fh:
        fh.write(script)
    results = run_json([ns, script_path], workdir, out_path, timeout, "ns-2", Ns2Error, script_path)
    transfer_times(results)
    if plan is not None:
        _ds_results(results, plan, resolved)
    return results


def _ds_results(results: dict[str, Any], plan: DsPlan, resolved: dict[str, Any]) -> None:
    """Turn the raw dsRED counters into by_dscp, policed drops and marking counts."""
    raw_stats: dict[int, dict[int, tuple[int, int, int]]] = {}
    for j, lk in enumerate(results["links"]):
        raw = lk.pop("dsred", None)
        dq = plan.queues.get(j)
        if dq is None or raw is None:
            lk["by_dscp"] = None
            lk["policed_drops"] = 0
            continue
        stats = {int(c): (int(pk), int(dr), int(ed)) for c, pk, dr, ed in raw["cp"]}
        raw_stats[j] = stats
        vq_len = {(int(q), int(p)): int(n) for q, p, n in raw["vq"]}
        policed = sum(stats[c][0] for c, v in dq.cp_value.items() if v == "drop")
        by: dict[int, dict[str, Any]] = {}
        for c, v in sorted(dq.cp_value.items()):
            if v == "drop":
                continue
            pk, dr, ed = stats.get(c, (0, 0, 0))
            b = by.setdefault(v, {"arrivals": 0, "departures": 0, "early_drops": 0, "forced_drops": 0})
            b["arrivals"] += pk
            b["early_drops"] += ed
            b["forced_drops"] += dr
            b["departures"] += pk - dr - ed  # accepted; packets still queued are taken off below
        for vq, n in vq_len.items():
            if n == 0:
                continue
            there = {
                v  # dropped packets (the "drop" queue's) are never queued: n is 0 there
                for c, v in dq.cp_value.items()
                if v != "drop" and dq.cp_vq[c] == vq and stats.get(c, (0,))[0] > 0
            }
            if len(there) == 1:
                by[next(iter(there))]["departures"] -= n
            else:  # several codepoints share the virtual queue: ns-2 cannot say which are queued
                for v in there:
                    by[v]["departures"] = None
        lk["by_dscp"] = dict(sorted(by.items()))
        lk["policed_drops"] = policed
        lk["drops"] -= policed
        lk["forced_drops"] -= policed
    for f, m in zip(results["flows"], plan.marked, strict=True):
        if m is None:
            f["marked"] = f["colored"] = f["policed_drops"] = None
        elif m[0] == "host":
            f["marked"] = {m[1]: f["sent_packets"]}
            f["colored"] = None
            f["policed_drops"] = 0
        else:
            _, j, cps = m
            stats = raw_stats.get(j, {})
            marked: dict[int, int] = {}
            colored = {"green": 0, "yellow": 0, "red": 0}
            dropped = 0
            for c, (colour, v) in cps.items():
                n = stats.get(c, (0, 0, 0))[0]
                colored[colour] += n
                if v == "drop":
                    dropped += n
                else:
                    marked[v] = marked.get(v, 0) + n
            f["marked"] = dict(sorted(marked.items()))
            f["colored"] = colored
            f["policed_drops"] = dropped
    conds = []
    for ci, c in enumerate(resolved.get("conditioners") or []):
        cond_colored: dict[str, int] | None = None
        if plan.tagged:
            cond_colored = {"green": 0, "yellow": 0, "red": 0}
            for j, cp, colour in plan.cond_cps[ci]:
                cond_colored[colour] += raw_stats.get(j, {}).get(cp, (0, 0, 0))[0]
        conds.append({"name": c["name"], "colored": cond_colored})
    results["conditioners"] = conds
