"""The core's cost per packet-hop, against the 200-flow workload's (:data:`HOP_COST_BASE`):
over the call (:func:`hop_costs`) and paired in time (:func:`paired_hop_costs`,
:func:`pair_with_base`)."""

from __future__ import annotations

import statistics
import subprocess
from collections.abc import Callable
from typing import Any

from qoslab.bench.steady import ns_per_hop_after
from qoslab.bench.workloads import measure_core

#: The workload whose cost per hop the others' are compared with (:func:`hop_costs`).
HOP_COST_BASE = "red-200flows-100Mbps-60s"

#: A core run this long (seconds) or longer is measured once, not ``repeat`` times
#: (:func:`qoslab.bench.runner.measure`'s rounds), and not paired (:func:`pair_with_base`).
SLOW_CORE_S = 30

#: Rounds of a workload's core run alternating with the base's (:func:`paired_hop_costs`): at
#: 10,000 flows nine rounds take about 30 s.
PAIRS = 9

#: At most this many rounds for a backbone workload (:mod:`qoslab.bench.steady`), whose core
#: run takes a minute or more: each round is a full run, timed after its warm-up.
STEADY_PAIRS = 3


def _per_hop_ns(run: dict[str, Any], setup: dict[str, Any] | None = None) -> float | None:
    """A core run's nanoseconds per packet-hop; with ``setup`` (the workload's setup-only run),
    net of it (None when the setup is not shorter than the run)."""
    wall, hops = run["wall_s"], run["hops"]
    if setup is not None:
        wall, hops = wall - setup["wall_s"], hops - setup["hops"]
    return wall / hops * 1e9 if wall > 0 and hops > 0 else None


def hop_costs(rows: list[dict[str, Any]]) -> None:
    """Adds to each row the core's nanoseconds per packet-hop, over the whole call
    (``ns_per_hop``: the median core time over the hops) and net of the set-up
    (``ns_per_hop_net``: less the setup-only run's time and hops), and, when ``rows`` hold
    :data:`HOP_COST_BASE`, both against that workload's (``hop_cost_ratio``,
    ``hop_cost_ratio_net``; None otherwise)."""
    for r in rows:
        median_run = {"wall_s": r["qoslab_core_s"], "hops": r["qoslab_core"]["hops"]}
        r["ns_per_hop"] = _per_hop_ns(median_run)
        r["ns_per_hop_net"] = _per_hop_ns(median_run, r["qoslab_core_setup"])
    base = next((r for r in rows if r["workload"] == HOP_COST_BASE), None)
    base_ns, base_net = (base["ns_per_hop"], base["ns_per_hop_net"]) if base else (None, None)
    for r in rows:
        r["hop_cost_base"] = HOP_COST_BASE if base else None
        r["hop_cost_ratio"] = r["ns_per_hop"] / base_ns if r["ns_per_hop"] and base_ns else None
        net = r["ns_per_hop_net"]
        r["hop_cost_ratio_net"] = net / base_net if net and base_net else None
        after = r.get("after_warmup")
        if after is not None:  # a backbone workload: its hop from T/2 to T, against the base's net
            ns = after["ns_per_hop"]
            after["hop_cost_ratio"] = ns / base_net if ns and base_net else None


def paired_hop_costs(
    row: dict[str, Any],
    base: dict[str, Any],
    pairs: int,
    measure: Callable[[str], dict[str, Any]] = measure_core,
    log: Callable[[str], None] = lambda s: None,
) -> None:
    """The cost per hop of ``row``'s workload against ``base``'s, paired in time: ``pairs``
    rounds of one core run of each, the base first in every other round, each round's ratio
    of the two runs' ns/hop (and net of each workload's setup-only run, measured once
    earlier in the call). The call's own ratio (:func:`hop_costs`) divides medians taken tens
    of seconds apart (minutes when a reference runs between them), and on a shared machine
    the 10,000-flow hop's cost moves by a third within minutes ("Twelfth round" in
    docs/performance.md); a round's two runs are seconds apart. Adds ``hop_cost_pairs`` (the
    rounds' ratios), ``hop_cost_ratio_paired`` and ``hop_cost_ratio_paired_net`` (their
    medians; None without rounds) and ``hop_cost_pairs_note`` (why the rounds stopped early
    when a run failed: the rounds before it are kept, and so is the rest of the call)."""
    name, base_name = row["workload"], base["workload"]
    ratios: list[float] = []
    nets: list[float] = []
    row["hop_cost_pairs_note"] = ""
    for i in range(pairs):
        log(f"{name}: paired with {base_name}, round {i + 1}/{pairs} …")
        order = (base_name, name) if i % 2 == 0 else (name, base_name)
        try:
            got = {n: measure(n) for n in order}
        except (subprocess.CalledProcessError, OSError, ValueError) as e:
            row["hop_cost_pairs_note"] = f"round {i + 1} of {pairs} failed: {_why(e)}"
            break
        w, b = _per_hop_ns(got[name]), _per_hop_ns(got[base_name])
        wn = _per_hop_ns(got[name], row["qoslab_core_setup"])
        after = row.get("after_warmup")
        if after is not None:  # timed from T/2 to T inside the run: no set-up to take off
            w = wn = ns_per_hop_after(got[name], after["hops"])
            b = _per_hop_ns(got[base_name], base["qoslab_core_setup"])
        if w and b:
            ratios.append(w / b)
        bn = _per_hop_ns(got[base_name], base["qoslab_core_setup"])
        if wn and bn:
            nets.append(wn / bn)
    row["hop_cost_pairs"] = ratios
    row["hop_cost_ratio_paired"] = statistics.median(ratios) if ratios else None
    row["hop_cost_ratio_paired_net"] = statistics.median(nets) if nets else None


def _why(e: Exception) -> str:
    """One line on a failed core run: the worker's last line of error output, else the error."""
    err = getattr(e, "stderr", None)
    last = err.strip().splitlines()[-1] if isinstance(err, str) and err.strip() else str(e)
    return last[:200]


def pair_with_base(
    rows: list[dict[str, Any]],
    pairs: int,
    measure: Callable[[str], dict[str, Any]] = measure_core,
    log: Callable[[str], None] = lambda s: None,
) -> None:
    """:func:`paired_hop_costs` of every row against :data:`HOP_COST_BASE`'s when ``rows`` hold
    it and ``pairs`` > 0; the base is then 1× of itself. Rows without a base, and workloads
    whose core run takes :data:`SLOW_CORE_S` or more, get None and no rounds, but for a
    backbone workload (a row with ``after_warmup``): at most :data:`STEADY_PAIRS` rounds of
    its hop after the warm-up (from T/2 to T, timed inside the run) against the base's hop net
    of its set-up."""
    base = next((r for r in rows if r["workload"] == HOP_COST_BASE), None)
    for r in rows:
        steady = r.get("after_warmup") is not None
        slow = r["qoslab_core"]["wall_s"] >= SLOW_CORE_S and not steady
        if base is None or r is base or pairs == 0 or slow:
            r["hop_cost_pairs"] = []
            r["hop_cost_pairs_note"] = ""
            itself = r is base and pairs > 0
            r["hop_cost_ratio_paired"] = r["hop_cost_ratio_paired_net"] = 1.0 if itself else None
        else:
            paired_hop_costs(r, base, min(pairs, STEADY_PAIRS) if steady else pairs, measure, log)
