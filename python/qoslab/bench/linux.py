"""The linux transport flavour's cost against the ns2 flavour's, paired in ``qoslab bench``
(issue 54: "the linux flavour's cost per packet-hop against the ns-2 flavour's, aim ≤ 1.5×";
issue 78: "bring the linux flavour's cost with delayed ACKs to ≤ 1.3× the ns2 flavour per hop").

Three of the validation grid's scenarios (:func:`qoslab.emulation.validation.scenario`: 30 s, seed 1):

- ``bbr-cubic-1bdp``: BBR beside CUBIC over a 10 Mbit/s pfifo of one BDP (33 packets);
- ``cubic5-1bdp``: five CUBIC flows with RTTs 20, 40, …, 100 ms over 20 Mbit/s;
- ``bbr5-1bdp``: five BBR flows of the same RTTs over the same link, where BBR's losses (about a
  tenth of the segments in the linux flavour) keep the senders' loss recovery busy.

Each is run in three arms (:data:`ARMS`). The flavours' models share a link differently (beside
CUBIC, the linux flavour's BBR sends most of the segments and ns-2's agent the fewest), so each
arm's row also gives the share of the data segments each congestion control sent
(``data_share``): a ratio per hop compares the senders that make the hops.

- ``linux``: the linux flavour as the validation runs it (``tcp.flavour = "linux"``, with
  Linux's delayed ACKs: every second full segment or 40 ms);
- ``ns2``: the ns2 flavour as the papers run ns-2's agents (``TCPSink``, every segment ACKed;
  the grid's variants with SACK);
- ``ns2_delack``: the ns2 flavour as the validation runs it beside the kernel, with delayed
  ACKs every second segment or 40 ms (:func:`qoslab.emulation.validation.sim_overrides`).

Delayed ACKs halve the ACK hops, so against ``ns2`` the cost per hop and the cost per run
differ (a linux sender doing exactly the ns2 agent's work per data segment would cost about
1.16× per hop beside BBR from the ACK count alone); against ``ns2_delack`` both sides ACK
alike. Both ratios are reported and both are judged (:mod:`qoslab.bench.guards`).

A round is one fresh worker process that runs each arm :data:`CALLS` times, alternating
(the order reversed in every other call), and keeps each arm's fastest call by the
thread's CPU time: a run is a few hundredths of a second, and on a shared machine its wall
time counts the moments the thread waited for a core (in trial calls at a load of 6 on two
cores, not kept, the wall times' ratio moved between 1.37× and 2.24× over five rounds). The
round's ratios are the linux flavour's over each ns2 arm's; the figures are the medians
over :data:`ROUNDS` rounds. Wall times are kept beside (``wall_s``).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from qoslab.runs import huge_pages

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

#: The name ``qoslab bench --workload`` selects these measurements by.
WORKLOAD = "linux-flavour"
#: The validation grid's points measured, by name (:data:`qoslab.emulation.validation.GRID`).
POINTS = ("bbr-cubic-1bdp", "cubic5-1bdp", "bbr5-1bdp")
#: Calls of each flavour in one round, and rounds.
CALLS = 5
ROUNDS = 5
#: The arms each round runs: the ns2 flavour as the papers run it, the same with delayed ACKs
#: as the validation runs it, and the linux flavour.
ARMS = ("ns2", "ns2_delack", "linux")
#: The ns2 arms the linux flavour is divided by, and the suffix of their ratios' keys.
AGAINST = {"ns2": "", "ns2_delack": "_delack"}


def arm_scenario(point: str, arm: str) -> Any:
    """Validation-grid point ``point`` as arm ``arm`` of :data:`ARMS` runs it (a
    :class:`qoslab.Scenario`; also what ``tools/layout_ab.py --point`` runs)."""
    from qoslab.emulation import validation as vl

    p = next(p for p in vl.GRID if p.name == point)
    if arm == "ns2":
        return vl.scenario(p, "ns2")
    flavour = "ns2" if arm == "ns2_delack" else "linux"
    # without the testbed's jitter: the flavour's own cost per hop
    return vl.scenario(p, flavour).with_overrides(vl.sim_overrides(flavour, jitter_us=0))


def _worker(point: str, calls: int) -> None:
    """In a fresh process: ``calls`` runs of each arm of ``point``, alternating; prints each
    arm's fastest call by CPU time (with that call's wall time), hops and events as JSON."""
    from qoslab import _core

    scenarios = {f: arm_scenario(point, f) for f in ARMS}
    cores = {f: sc.core for f, sc in scenarios.items()}
    best: dict[str, dict[str, Any]] = {}
    for i in range(calls):
        for f in ARMS if i % 2 == 0 else ARMS[::-1]:
            t0, c0 = time.perf_counter(), time.thread_time()
            raw = _core.simulate_resolved(cores[f], 1, [], None, 1)
            cpu, wall = time.thread_time() - c0, time.perf_counter() - t0
            if f not in best or cpu < best[f]["cpu_s"]:
                best[f] = {
                    "cpu_s": cpu,
                    "wall_s": wall,
                    "hops": int(raw["packet_hops"]),
                    "events": int(raw["events"]),
                    "data_share": data_share(scenarios[f].resolved, raw["flows"]["sent_packets"]),
                }
    print(json.dumps(best))


def data_share(resolved: dict[str, Any], sent: Sequence[float]) -> dict[str, float]:
    """The share of the data segments each congestion control sent (by ``tcp.variant``), from
    a resolved scenario and its flows' ``sent_packets``."""
    by: dict[str, float] = {}
    for flow, n in zip(resolved["flows"], sent, strict=True):
        v = str(flow["tcp"]["variant"])
        by[v] = by.get(v, 0.0) + float(n)
    total = sum(by.values())
    return {v: n / total if total else 0.0 for v, n in sorted(by.items())}


def run_worker(module: str, *args: str) -> dict[str, Any]:
    """Run ``python -m MODULE --worker ARGS`` in a fresh interpreter and return the JSON object
    it prints on stdout (the worker's measurements; a failing worker raises CalledProcessError),
    with glibc's huge pages asked for (:mod:`qoslab.runs.huge_pages`)."""
    p = subprocess.run(
        [sys.executable, "-m", module, "--worker", *args],
        capture_output=True,
        text=True,
        check=True,
        env=huge_pages.child_environment(),
    )
    return dict(json.loads(p.stdout))


def _measure_round(point: str, calls: int) -> dict[str, dict[str, Any]]:
    return run_worker("qoslab.bench.linux", point, str(calls))


def pair(
    point: str,
    rounds: int = ROUNDS,
    calls: int = CALLS,
    measure: Callable[[str, int], dict[str, dict[str, Any]]] = _measure_round,
    log: Callable[[str], None] = lambda s: None,
) -> dict[str, Any]:
    """One point's row: each arm's median (over the rounds) of its fastest call's CPU time,
    ns per hop and events per hop, and the rounds' ratios per hop and per run with their
    medians: the linux flavour over the ns2 flavour as the papers run it (``hop_ratio``,
    ``run_ratio``) and over the ns2 flavour with delayed ACKs (``hop_ratio_delack``,
    ``run_ratio_delack``); None without rounds."""
    got: list[dict[str, dict[str, Any]]] = []
    for i in range(rounds):
        log(f"linux flavour {point}: round {i + 1}/{rounds} …")
        got.append(measure(point, calls))
    row: dict[str, Any] = {"point": point, "rounds": rounds, "calls": calls}
    for f in ARMS:
        cpus = [g[f]["cpu_s"] for g in got]
        hops, events = (got[0][f]["hops"], got[0][f]["events"]) if got else (0, 0)
        row[f] = {
            "cpu_s": statistics.median(cpus) if cpus else None,
            "wall_s": statistics.median(g[f]["wall_s"] for g in got) if got else None,
            "hops": hops,
            "events": events,
            "ns_per_hop": statistics.median(c / hops * 1e9 for c in cpus) if cpus and hops else None,
            "events_per_hop": events / hops if hops else None,
            "data_share": got[0][f].get("data_share") if got else None,
        }
    for arm, sfx in AGAINST.items():
        hop = [(g["linux"]["cpu_s"] / g["linux"]["hops"]) / (g[arm]["cpu_s"] / g[arm]["hops"]) for g in got]
        run = [g["linux"]["cpu_s"] / g[arm]["cpu_s"] for g in got]
        row[f"hop_ratios{sfx}"], row[f"run_ratios{sfx}"] = hop, run
        row[f"hop_ratio{sfx}"] = statistics.median(hop) if hop else None
        row[f"run_ratio{sfx}"] = statistics.median(run) if run else None
    return row


def measure_all(
    rounds: int = ROUNDS, calls: int = CALLS, log: Callable[[str], None] = lambda s: None
) -> list[dict[str, Any]]:
    """:func:`pair` of every point of :data:`POINTS`."""
    return [pair(p, rounds, calls, log=log) for p in POINTS]


def in_call(
    only: Sequence[str] | None, rounds: int = ROUNDS, log: Callable[[str], None] = lambda s: None
) -> list[dict[str, Any]]:
    """:func:`measure_all` in a ``qoslab bench`` call that runs every workload (``only`` None
    or empty) or names :data:`WORKLOAD` among ``only``; no rows otherwise."""
    return measure_all(rounds, log=log) if not only or WORKLOAD in only else []


def print_table(con: Console, rows: list[dict[str, Any]]) -> None:
    """The rows as a table (ns per hop and seconds per run of each arm, ratios) and what they
    are; nothing without rows."""
    if rows:
        con.print(table(rows))
        con.print(NOTE)


#: How the table names each ns2 arm.
ARM_LABEL = {"ns2": "ns2, every segment ACKed", "ns2_delack": "ns2, delayed ACKs"}


def table(rows: list[dict[str, Any]]) -> Table:
    """The rows as a rich table: per point, a line against each ns2 arm (ns per hop and seconds
    per run of both sides, ratios, events per hop)."""
    from rich.table import Table

    t = Table(title="linux flavour against the ns2 flavour (validation scenarios, 30 s, seed 1)")
    cols = ("scenario", "against", "ns2 ns/hop", "linux ns/hop", "× per hop", "ns2 s/run", "linux s/run")
    for c in cols + ("× per run", "events/hop ns2 → linux"):
        t.add_column(c, justify="right")

    def f(x: float | None, fmt: str) -> str:
        return fmt.format(x) if x is not None else "n/a"

    for r in rows:
        lx = r["linux"]
        for arm, sfx in AGAINST.items():
            n = r[arm]
            t.add_row(
                r["point"],
                ARM_LABEL[arm],
                f(n["ns_per_hop"], "{:.1f}"),
                f(lx["ns_per_hop"], "{:.1f}"),
                f(r[f"hop_ratio{sfx}"], "{:.2f}×"),
                f(n["cpu_s"], "{:.4f}"),
                f(lx["cpu_s"], "{:.4f}"),
                f(r[f"run_ratio{sfx}"], "{:.2f}×"),
                f"{f(n['events_per_hop'], '{:.2f}')} → {f(lx['events_per_hop'], '{:.2f}')}",
            )
    return t


NOTE = (
    "linux: tcp.flavour = \"linux\" with Linux's delayed ACKs; ns2: ns-2's agents, every segment ACKed "
    "(as the papers run them) or with delayed ACKs every second segment or 40 ms "
    "(as the validation runs them). "
    f"Each round a fresh worker runs each arm {CALLS} times, alternating, and keeps the fastest "
    "(the thread's CPU time); "
    "×: the linux flavour's over the ns2 arm's in the same round, median over the rounds."
)


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "--worker":
        _worker(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else CALLS)
