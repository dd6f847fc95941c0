"""The backbone-scale workloads (issue 80) and what the bench measures of them after their
warm-up: long-lived Reno flows through a drop-tail bottleneck (:func:`backbone`, built by the
buffer-sizing study's generator), run long enough to pass their warm-up.

**The warm-up** is found from the run's own series, by MSER-5 (:mod:`qoslab.warmup`, the
rule the reproductions report): the bottleneck's queue length and the flows' aggregate
throughput, sampled every :data:`INTERVAL_S`; the warm-up ends at the later of the two
(:func:`warmup_of`). Where MSER-5 finds no steady state in either series, the run has none by
this rule, and nothing is judged after it.

**After the warm-up** is the run's second half, from T/2 to T, used only when the warm-up
ends by T/2 (:func:`after_warmup`; otherwise the row says why and the guards do not judge
it). The cost of a hop there is the run's own: the worker times the core call through its
progress callback (:class:`Clock`: the wall time at each slice of simulated time, read at
T/2 by interpolation), and the hops from T/2 to T are the full run's less the half-duration
run's (the same simulation cut at T/2: same seed, same starts, same sampling). This is the
method of docs/performance.md's "After the warm-up" (the rate over a window past the
warm-up, examples/memory_over_time), taken inside the bench's own worker. The state at T/2
and at T, both past the warm-up, is the flat-state guard's; the state at T over the flows is
the memory per flow after the warm-up.
"""

from __future__ import annotations

import bisect
import time
from typing import Any

import numpy as np

from qoslab.scenario import Scenario
from qoslab.studies.buffer_sizing.topology import buffer_scenario, rule_pkts

#: The series' sampling interval (s) of the backbone workloads: MSER-5 batches 5 samples and
#: searches the first half of the batches, so a run of T seconds can find a warm-up of up to
#: about T/2 at this resolution.
INTERVAL_S = 1.0
#: The flows start uniformly over the first seconds (desynchronised starts).
START_SPREAD_S = 5.0
#: The round-trip propagation delays, spread evenly (ms): the buffer-sizing study's.
RTT_MS = (60.0, 140.0)


def backbone(n: int, rate_bps: float, duration_s: float) -> Scenario:
    """``n`` long-lived Reno flows through a drop-tail bottleneck of ``rate_bps`` whose buffer
    is the paper's RTT × C / √n (the mean RTT, 100 ms), RTTs spread over :data:`RTT_MS`, starts
    over :data:`START_SPREAD_S`; series every :data:`INTERVAL_S` from time 0 (the warm-up is
    read from them), no cwnd column (50,000 flows × samples: memory the warm-up does not use).
    The buffer-sizing study's generator (one ``count`` group per per-flow item)."""
    lo, hi = RTT_MS
    buffer = max(1, round(rule_pkts(rate_bps, (lo + hi) / 2, n)))
    sc = buffer_scenario(
        n,
        buffer,
        rate_bps=rate_bps,
        rtt_lo_ms=lo,
        rtt_hi_ms=hi,
        duration_s=duration_s,
        measure_from_s=0.0,
        start_spread_s=START_SPREAD_S,
        interval_s=INTERVAL_S,
        name=f"bench-{n}flows-droptail",
    )
    t = sc.table()
    t["measurement"]["cwnd"] = False
    return Scenario.from_table(t, f"backbone(n={n}, C={rate_bps:g} b/s, B={buffer} pkts)")


class Clock:
    """The core call's progress callback: the wall time (``time.perf_counter``) at each
    fraction of the simulated duration reached (the core calls it after every slice, a few
    tens of milliseconds of wall time apart); :meth:`at` reads it at any fraction."""

    def __init__(self, start: float | None = None) -> None:
        self.fractions: list[float] = [0.0]
        self.walls: list[float] = [time.perf_counter() if start is None else start]

    def __call__(self, fraction: float) -> bool:
        self.fractions.append(float(fraction))
        self.walls.append(time.perf_counter())
        return True

    def at(self, fraction: float) -> float | None:
        """Wall seconds from the start to ``fraction`` of the run, linear between the two
        slices around it (None beyond the last one)."""
        i = bisect.bisect_left(self.fractions, fraction)
        if i >= len(self.fractions):
            return None
        if self.fractions[i] == fraction or i == 0:
            return self.walls[i] - self.walls[0]
        f0, f1 = self.fractions[i - 1], self.fractions[i]
        w0, w1 = self.walls[i - 1], self.walls[i]
        return w0 + (w1 - w0) * (fraction - f0) / (f1 - f0) - self.walls[0]


def warmup_of(raw: dict[str, Any], sc: Scenario) -> dict[str, Any]:
    """The run's warm-up by MSER-5 from its own series (:mod:`qoslab.warmup`): the
    bottleneck's forward queue (``queue_s``), the aggregate throughput (``throughput_s``) and
    the later of the two (``end_s``); and the bottleneck's mean utilisation after ``end_s``
    (the steady state's evidence).

    The throughput must have a steady state by MSER-5 (``end_s`` None otherwise). The queue
    may not: a drop-tail buffer of RTT × C / √n is full from the first seconds on, and over a
    flat, noisy series MSER's statistic, about σ² / (m − d), is smallest at any d by chance,
    the end of the searched half among them, where MSER-5 reports no steady state
    (``queue_s`` None: so at 10,000 flows, 2.5 Gb/s, 40 one-second samples; its statistic fell
    from 53 to under 1 after the first batch). ``end_s`` is then the throughput's, and the
    row says the queue had none."""
    # MSER-5 brings pandas (0.24 s here, about 20 s under callgrind), which the bench's
    # worker loads itself (`python -m qoslab.bench --worker`) and its instruction counts
    # (``--loop``) leave out.
    from qoslab.warmup import series_end

    m = sc.resolved["measurement"]
    name = m.get("bottleneck") or "bottleneck"
    links = sc.resolved["links"]
    li = next(i for i, link in enumerate(links) if link["name"] == name)
    sq, sf = raw["series_queue"], raw["series_flow"]
    d = np.asarray(sq["direction_index"])
    sel = (d == 2 * li) & (np.asarray(sq["physical_queue"]) == 0)
    tq = np.asarray(sq["time_ns"], dtype=float)[sel] / 1e9
    wq = series_end(tq, np.asarray(sq["queue_packets"], dtype=float)[sel])
    tf = np.asarray(sf["time_ns"], dtype=float) / 1e9
    times, idx = np.unique(tf, return_inverse=True)
    agg = np.bincount(idx, weights=np.asarray(sf["throughput_bps"], dtype=float), minlength=times.size)
    wt = series_end(times, agg)
    found = [w for w in (wq, wt) if w is not None]
    end = max(found) if wt is not None else None
    rate = float(links[li]["bandwidth_bps"]) if "bandwidth_bps" in links[li] else None
    after = agg[times > end] if end is not None else agg[:0]
    util = float(after.mean() / rate) if rate and after.size else None
    return {"queue_s": wq, "throughput_s": wt, "end_s": end, "utilisation_after": util}


def after_warmup(full: dict[str, Any], half: dict[str, Any], flows: int) -> dict[str, Any]:
    """The figures from T/2 to T of a backbone workload's full-duration run ``full`` (with its
    :func:`warmup_of` and its :class:`Clock` readings ``wall_at_half_s``, ``wall_run_s``) and
    its half-duration run ``half``: the hops, the core's time and nanoseconds per hop, the
    state at T/2 and T and per flow at T, and ``note``: why they are not after the warm-up
    ("" when they are: the warm-up ends by T/2)."""
    t = full["sim_s"]
    end = (full.get("warmup") or {}).get("end_s")
    if end is None:
        note = "MSER-5 found no steady state in the bottleneck's queue or throughput"
    elif end > t / 2:
        note = f"the warm-up ends at {end:g} s, past T/2 = {t / 2:g} s: the run is too short"
    else:
        note = ""
    queue_note = (
        "MSER-5 found no steady state in the bottleneck's queue: the warm-up is the throughput's"
        if end is not None and (full.get("warmup") or {}).get("queue_s") is None
        else ""
    )
    hops = full["hops"] - half["hops"]
    at_half, run = full.get("wall_at_half_s"), full.get("wall_run_s")
    wall = run - at_half if at_half is not None and run is not None else None
    state = full["memory_bytes"]["state"]
    return {
        "from_s": t / 2,
        "to_s": t,
        "hops": hops,
        "wall_s": wall,
        "ns_per_hop": ns_per_hop_after(full, hops),
        "state_bytes_half": half["memory_bytes"]["state"],
        "state_bytes": state,
        "state_per_flow": state / flows if flows else None,
        "note": note,
        "queue_note": queue_note,
    }


def ns_per_hop_after(run: dict[str, Any], hops: int) -> float | None:
    """A paired round's nanoseconds per hop after T/2 of a full-duration run of a backbone
    workload, over ``hops`` (the row's hops from T/2 to T: the run is deterministic)."""
    at_half, end = run.get("wall_at_half_s"), run.get("wall_run_s")
    if at_half is None or end is None or hops <= 0 or end <= at_half:
        return None
    return float(end - at_half) / hops * 1e9
