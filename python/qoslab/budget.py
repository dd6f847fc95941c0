"""A run's resource budget: what it may cost in memory, capture bytes and wall-clock time.

Memory and capture bytes are estimated from the scenario before anything runs; a run above its
budget is refused with one line giving the estimate, what drives it and how to raise the limit.
Time cannot be known before running (it depends on how much traffic the flows make), so it is
measured: after a few seconds the pace of simulated time gives the run's expected length, and a
run that would exceed ``max_time_s`` stops there with what it measured so far (a partial
result, as after Ctrl-C).

The estimates are upper bounds of the same order as what was measured (docs/performance.md):
60 MiB for the interpreter's and its libraries' own memory and 96 MiB for the pages of the
libraries' files mapped into it (58 MB where those pages came into the page cache from disk, 95
MB in an environment just installed, whose files sit in the page cache in larger folios: the
same run's anonymous memory is equal to the kilobyte in both), 11 kB per flow (its TCP, route
and results, and the scenario's own form of it in Python) and 1.5 kB per link direction (its
state, queue and line in the core: 1.1 kB measured at 50,000 flows, a 768-byte direction and
its line of at least 8 entries), 90 bytes per time-series row while the results are the core's
columns (``qoslab bench``'s worker, and any run while it simulates: 85 fitted over the bench's
backbone run at 5,000 flows for 4 s and at 50,000 for 10 and 40 s), and 56 bytes per captured
packet (a 16-byte record header and the 40 bytes of IP and TCP headers). A run that builds
pandas tables peaks either while it simulates (those costs) or while it builds its tables after
(200 bytes a row on top of three quarters of the run's state, which the process still holds):
the estimate is the larger.

Limits come from the arguments, else from ``QOSLAB_MAX_MEMORY``, ``QOSLAB_MAX_CAPTURE`` and
``QOSLAB_MAX_TIME``, else the defaults: 80 % of the memory available when the run starts, 90 %
of the free space where captures go (at most 20 GiB), and 24 hours. ``0`` means no limit.
"""

from __future__ import annotations

import math
import os
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from qoslab import _core
from qoslab.budget_packets import (
    LINE_FACTOR,
    LINE_PACKET_BYTES,
    QUEUE_PACKET_BYTES,
    line_packets,
    queued_packets,
)

#: Measured costs (see the module docstring).
INTERPRETER_BYTES = 60 * 2**20
LIBRARY_FILE_BYTES = 96 * 2**20
BASE_BYTES = INTERPRETER_BYTES + LIBRARY_FILE_BYTES
FLOW_BYTES = 11 * 2**10
DIRECTION_BYTES = 1536
#: A time-series row in pandas tables, and the share of the run's state (flows, link directions,
#: lines, queues, traces, slots) the process still holds while it builds them after the run.
#: Measured (2026-11-29, the peak while the tables are built less RssFile): 205 bytes a row from
#: 125,000 to 1 M rows of the 5,000-flow dumbbell, 199 from 250,000 to 2.75 M rows of the
#: 50,000-flow one, 160 on 2.7 M rows of a 5-flow run; besides its rows, 0.72 (5,000 flows) and
#: 0.53 (50,000) of the state as estimated. The simulation's peak is the larger at 50,000 flows
#: (buffer-sizing's headline run, 2.75 M rows: 1,390 MB against 1,373 MB while its tables are
#: built): one sum of state and rows at 260 bytes a row put it 1.54 times above that run's own
#: part, and no one cost a row fits both it and a 5-flow run of 2.7 M rows (at most 99 bytes a
#: row within 20 % of the former, at least 144 at the latter's peak).
ROW_BYTES = 200
HELD_FACTOR = 0.75
#: A time-series row while the results are the core's columns (``qoslab bench``'s worker, and
#: any run while it simulates): its columns in the core, grown by doubling, and as handed to
#: Python. Fitted: 85 bytes over the backbone worker at 50,000 flows (1,282 MB of its own at
#: 10 s, 2.75 M rows; 2,087 MB at 40 s, 10.25 M rows), 79 over the buffer-sizing dumbbell at
#: 50,000 flows from 250,000 to 7.75 M rows (the simulation's peak, 3 s runs; 101 and 67 a row
#: over the two steps, the columns' doublings).
CORE_ROW_BYTES = 90
PCAP_RECORD_BYTES = 56
#: Memory of one finished transfer's record up to the written tables: ~100 bytes in the core,
#: its columns and the transfers table (``qoslab run --out`` of 20,000 and 220,000 transfers: 276
#: bytes a transfer more at the peak), for at most :data:`SPILL_AFTER` records.
RECORD_BYTES = 400
#: Finished transfers' records held in memory; past this many a run writes them to a spill file
#: (:mod:`qoslab.runs.transfers`) and reads it back a chunk at a time: its memory stays flat (at
#: 125,000, 1.25 and 5 million transfers: 224, 236 and 255 MB peak for ``qoslab run --out``).
SPILL_AFTER = 100_000
#: Disk a spilled transfer takes: its row in the spill file (under ``$TMPDIR``, removed with the
#: run's result) and its row of transfers.parquet (47 bytes measured; 64 counted).
SPILL_ROW_BYTES = 8 * len(_core.TRANSFER_SPILL_FIELDS)
TABLE_ROW_BYTES = 64
#: An open connection's slot takes up to this many times what the core allocates when it
#: builds one (``Resolved.slot_bytes``: its flow, TCP sender and receiver): the flow table
#: grows by doubling (and holds its old copy while it moves), and an open connection has
#: events and packets besides, and each flavour's sender is an allocation of its own (what the
#: allocator rounds up). Measured: 2.26 times at 20,000 busy slots (tests/test_budget_counts.py).
SLOT_FACTOR = 3.0
DEFAULT_MAX_TIME_S = 24 * 3600.0
MAX_CAPTURE_DEFAULT = 20 * 2**30

_SIZE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([kKMGT]i?)?B?\s*$")
_TIME = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*(s|min|h|d)?\s*$")


class BudgetError(ValueError):
    """A run refused (or stopped) for exceeding its budget; the message is one line."""


def parse_bytes(text: str | float | int, what: str) -> float:
    """``"8GB"``, ``"512MiB"``, ``"1e9"`` (bytes), ``0`` (no limit)."""
    if isinstance(text, int | float):
        v = float(text)
    else:
        m = _SIZE.match(text)
        if not m:
            raise BudgetError(f"{what}: expected a size such as 8GB or 512MiB, got {text!r}")
        unit = m.group(2) or ""
        base = 1024 if unit.endswith("i") else 1000
        v = float(m.group(1)) * base ** " kMGT".index(unit[:1].replace("K", "k") or " ")
    if not math.isfinite(v) or v < 0:
        raise BudgetError(f"{what}: expected a size >= 0, got {text!r}")
    return v


def parse_seconds(text: str | float | int, what: str) -> float:
    """``"2h"``, ``"30min"``, ``"90"`` (s), ``0`` (no limit)."""
    if isinstance(text, int | float):
        v = float(text)
    else:
        m = _TIME.match(text)
        if not m:
            raise BudgetError(f"{what}: expected a duration such as 90s, 30min, 2h or 1d, got {text!r}")
        v = float(m.group(1)) * {"s": 1, "min": 60, "h": 3600, "d": 86400}[m.group(2) or "s"]
    if not math.isfinite(v) or v < 0:
        raise BudgetError(f"{what}: expected a duration >= 0, got {text!r}")
    return v


def human_bytes(n: float) -> str:
    for unit in ("B", "kB", "MB", "GB", "TB", "PB", "EB"):
        if abs(n) < 1000 or unit == "EB":
            return f"{n:.3g} {unit}"
        n /= 1000
    return f"{n:.3g} EB"


def human_seconds(s: float) -> str:
    if s < 10:
        return f"{s:.2g} s"  # never "0 s" for a short limit or estimate
    if s < 120:
        return f"{s:.0f} s"
    if s < 7200:
        return f"{s / 60:.0f} min"
    if s < 2 * 86400:
        return f"{s / 3600:.1f} h"
    if s < 2 * 365 * 86400:
        return f"{s / 86400:.0f} days"
    return f"{s / (365 * 86400):.3g} years"


def _available_memory() -> float:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return float(line.split()[1]) * 1024
    except OSError:
        pass
    return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))


#: A limit at or above this is no limit (cgroup v1 writes 2^63 rounded down to a page).
_UNLIMITED = 2**62


def _cgroup_limit(
    root: Path = Path("/sys/fs/cgroup"), proc: Path = Path("/proc/self/cgroup")
) -> float | None:
    """The tightest memory limit of this process's cgroup and its ancestors, less what the
    cgroup already uses (v2 ``memory.max``/``memory.current``, v1 ``memory.limit_in_bytes``/
    ``memory.usage_in_bytes``); ``None`` when there is none."""
    try:
        lines = proc.read_text().splitlines()
    except OSError:
        return None
    best: float | None = None
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        if parts[0] == "0" and parts[1] == "":
            base, limit_name, used_name = root, "memory.max", "memory.current"
        elif "memory" in parts[1].split(","):
            base, limit_name, used_name = root / "memory", "memory.limit_in_bytes", "memory.usage_in_bytes"
        else:
            continue
        rel = Path(parts[2].lstrip("/"))
        # The cgroup itself, then each ancestor (inside a container only the root may be mounted).
        for d in [base / rel, *(base / a for a in rel.parents)]:
            try:
                text = (d / limit_name).read_text().strip()
            except OSError:
                continue
            if text == "max" or not text.isdigit() or int(text) >= _UNLIMITED:
                continue
            try:
                used = float((d / used_name).read_text().strip())
            except (OSError, ValueError):
                used = 0.0
            room = max(float(text) - used, 0.0)
            best = room if best is None else min(best, room)
    return best


def _address_space_limit() -> float | None:
    """Room left under ``ulimit -v`` (RLIMIT_AS): the soft limit less the address space this
    process maps already; ``None`` when unlimited."""
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY or soft >= _UNLIMITED:
        return None
    mapped = 0.0
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmSize:"):
                mapped = float(line.split()[1]) * 1024
    except OSError:
        pass
    return max(float(soft) - mapped, 0.0)


def process_ceiling() -> tuple[float, str] | None:
    """The memory this process may still take whatever the budget says: the tighter of
    ``ulimit -v`` (RLIMIT_AS) and its cgroup's ``memory.max``, each less what is used already;
    ``None`` when neither is set."""
    found = [
        (v, what)
        for v, what in (
            (_address_space_limit(), "the room left under ulimit -v (RLIMIT_AS)"),
            (_cgroup_limit(), "the room left under the cgroup's memory limit"),
        )
        if v is not None
    ]
    return min(found) if found else None


class Budget(NamedTuple):
    """Limits of one run (bytes, bytes, seconds); ``None`` is "the default", 0 "no limit".
    (Named tuples, not dataclasses, here: importing dataclasses brings inspect, ~10 ms of the
    ~80 ms a short ``qoslab run`` takes as a whole process.)"""

    max_memory: float | None = None
    max_capture: float | None = None
    max_time_s: float | None = None

    def validate(self) -> None:
        """Refuses (:class:`BudgetError`, one line) a limit that is not a number >= 0 (a negative
        or NaN one meant no limit)."""
        for name, v in zip(self._fields, self, strict=True):
            if v is not None and (isinstance(v, bool) or not isinstance(v, int | float) or not v >= 0):
                raise BudgetError(f"Budget {name}: expected a number >= 0 (0: no limit), got {v!r}")

    @classmethod
    def of_argument(cls, budget: object) -> Budget:
        """A run's ``budget`` argument, validated: a Budget, or :meth:`from_env`'s for None;
        anything else a TypeError naming the argument (a string's limits were read as fields)."""
        if budget is None:
            budget = cls.from_env()
        if not isinstance(budget, Budget):
            got = f"{type(budget).__name__} {budget!r:.40}"
            raise TypeError(f"budget: expected a qoslab.Budget such as Budget(max_memory=8e9), got {got}")
        budget.validate()
        return budget

    @classmethod
    def from_env(
        cls, max_memory: str | None = None, max_capture: str | None = None, max_time: str | None = None
    ) -> Budget:
        """The budget from these values (CLI options), else the environment, else defaults."""
        mem = max_memory if max_memory is not None else os.environ.get("QOSLAB_MAX_MEMORY")
        cap = max_capture if max_capture is not None else os.environ.get("QOSLAB_MAX_CAPTURE")
        tim = max_time if max_time is not None else os.environ.get("QOSLAB_MAX_TIME")
        return cls(
            parse_bytes(mem, "--max-memory (QOSLAB_MAX_MEMORY)") if mem is not None else None,
            parse_bytes(cap, "--max-capture (QOSLAB_MAX_CAPTURE)") if cap is not None else None,
            parse_seconds(tim, "--max-time (QOSLAB_MAX_TIME)") if tim is not None else None,
        )

    def memory_limit(self) -> tuple[float, str]:
        """The limit and what sets it: ``--max-memory`` (0: none), else 80 % of the available
        memory, in either case at most the process's own ceiling (:func:`process_ceiling`)."""
        if self.max_memory is not None:
            limit, what = self.max_memory, "--max-memory"
        else:
            limit, what = 0.8 * _available_memory(), "80 % of the available memory"
        ceiling = process_ceiling()
        if ceiling is not None and (limit <= 0 or ceiling[0] < limit):
            return max(ceiling[0], 1.0), ceiling[1]
        return limit, what

    def capture_limit(self, where: Path) -> tuple[float, str]:
        if self.max_capture is not None:
            return self.max_capture, "--max-capture"
        import shutil  # here: ~3 ms of imports (bz2, lzma, fnmatch) that most runs never need

        try:
            free = shutil.disk_usage(where).free
        except OSError:
            free = MAX_CAPTURE_DEFAULT
        return min(0.9 * free, MAX_CAPTURE_DEFAULT), "90 % of the free disk space, at most 20 GiB"

    def time_limit(self) -> float:
        return DEFAULT_MAX_TIME_S if self.max_time_s is None else self.max_time_s


class Estimate(NamedTuple):
    """What a run will need, at most (bytes), and what drives it."""

    series_rows: int
    memory_bytes: float
    capture_bytes: float
    flows: int
    intervals: int
    #: FQ-CoDel flow queues, trace rows and arrival processes' connection slots (with ``core``).
    queue_bytes: float = 0.0
    trace_bytes: float = 0.0
    slot_bytes: float = 0.0
    #: Transfers the arrival processes may start (each keeps a record until the run ends).
    transfers: float = 0.0
    #: Packets the links' propagation lines may hold at once (:func:`line_packets`), and the
    #: link direction holding most, with the key that makes its line long.
    line_packets: float = 0.0
    line_link: str = ""
    line_key: str = ""
    #: Packets of sources at a set rate that may wait in the queues at once (:func:`queued_packets`).
    queued_packets: float = 0.0


def estimate(
    resolved: dict[str, Any],
    captured_directions: list[int],
    core: _core.Resolved | None = None,
    *,
    tables: bool = True,
) -> Estimate:
    """Memory and capture bytes of a run of ``resolved`` capturing ``captured_directions``.
    With ``core`` (the scenario's resolved form in the core) also what its queues, traces and
    arrival processes can allocate: every FQ-CoDel flow queue (held from the start), each
    trace's rows once per file, and every connection slot an arrival process may build
    (``max_active`` of them). Without ``tables`` the run's results stay the core's columns
    (``qoslab bench``'s worker): its peak is the simulation's, a time-series row at
    :data:`CORE_ROW_BYTES`; with them it is that or the tables' after it (:data:`ROW_BYTES` a
    row, :data:`HELD_FACTOR` of the state), the larger."""
    flows = resolved["flows"]
    links = resolved["links"]
    dur = int(resolved["duration_ns"])
    interval = max(int(resolved["measurement"]["interval_ns"]), 1)
    intervals = dur // interval + 1
    conditioners = len(resolved.get("conditioners", []))
    rows = intervals * (len(flows) + 2 * len(links) + 2 * conditioners)
    state = float(FLOW_BYTES * len(flows) + DIRECTION_BYTES * 2 * len(links))
    fq = trace = 0
    slots = 0.0
    if core is not None:
        fq, trace = core.state_bytes()
        arrivals = resolved.get("arrivals", [])
        # Every slot it may build, open.
        slots = SLOT_FACTOR * float(
            sum(int(a["max_active"]) * b for a, b in zip(arrivals, core.slot_bytes(), strict=True))
        )
        state += fq + trace + slots
    in_line, line_link, line_key = line_packets(resolved, core)
    state += LINE_FACTOR * LINE_PACKET_BYTES * in_line
    queued = queued_packets(resolved, core)
    state += LINE_FACTOR * QUEUE_PACKET_BYTES * queued
    # while simulating: the state and the rows as the core's columns; with tables, after it too:
    # what the process still holds of the state and the rows as tables
    memory = BASE_BYTES + state + CORE_ROW_BYTES * rows
    if tables:
        memory = max(memory, BASE_BYTES + HELD_FACTOR * state + ROW_BYTES * rows)
    transfers = expected_transfers(resolved)
    memory += RECORD_BYTES * min(transfers, SPILL_AFTER)
    sizes = [int(f["packet_size_bytes"]) for f in flows] or [1000]
    data = max(min(sizes), 40)
    capture = 0.0
    for d in captured_directions:
        lk = links[d // 2]
        # data packets one way and their ACKs (one per data packet) the other: at most the
        # link's two directions' capacity in data packets
        pkts = 2 * float(lk["bandwidth_bps"]) * dur / 1e9 / (8 * data)
        capture += 24 + PCAP_RECORD_BYTES * pkts
    return Estimate(
        rows,
        float(memory),
        capture,
        len(flows),
        intervals,
        float(fq),
        float(trace),
        slots,
        transfers,
        in_line,
        line_link,
        line_key,
        queued,
    )


def expected_transfers(resolved: dict[str, Any]) -> float:
    """At most how many transfers the arrival processes start (Poisson: the mean over their
    active time plus five standard deviations), each leaving a record."""
    dur = int(resolved["duration_ns"])
    n = 0.0
    for a in resolved.get("arrivals", []):
        active = max(min(int(a["stop_ns"]), dur) - int(a["start_ns"]), 0) / 1e9
        n += float(a["arrival_rate"]) * active
    return n + 5 * math.sqrt(n) if n > 0 else 0.0


def _raise_hint(what: str) -> str:
    if "ulimit" in what or "cgroup" in what:
        return "the process cannot have more: raise that limit or make the scenario smaller"
    return "raise it with --max-memory or QOSLAB_MAX_MEMORY"


def check(
    source: str,
    resolved: dict[str, Any],
    captured: list[int],
    budget: Budget,
    out: Path,
    core: _core.Resolved | None = None,
    *,
    tables: bool = True,
) -> Estimate:
    """Refuses (:class:`_core.ScenarioError`, one line naming the file and the key) a run whose
    memory or capture estimate (:func:`estimate`, with ``tables``) is above ``budget``."""
    est = estimate(resolved, captured, core, tables=tables)
    limit, what = budget.memory_limit()
    if limit > 0 and est.memory_bytes > limit:
        series = (ROW_BYTES if tables else CORE_ROW_BYTES) * est.series_rows
        line = LINE_FACTOR * LINE_PACKET_BYTES * est.line_packets
        key, why = max(
            [
                (
                    est.queue_bytes,
                    "link.queue.flows",
                    f"FQ-CoDel flow queues: {human_bytes(est.queue_bytes)}",
                ),
                (est.trace_bytes, "flow.trace", f"trace rows: {human_bytes(est.trace_bytes)}"),
                (
                    est.slot_bytes,
                    "arrivals.max_active",
                    f"arrival processes' connection slots: {human_bytes(est.slot_bytes)}",
                ),
                (
                    RECORD_BYTES * min(est.transfers, SPILL_AFTER),
                    "arrivals",
                    f"up to {min(est.transfers, SPILL_AFTER):.3g} transfers' records held at "
                    f"{RECORD_BYTES} bytes each",
                ),
                (
                    line,
                    est.line_key,
                    f"up to {est.line_packets:.3g} packets in the links' propagation lines, most on "
                    f"link {est.line_link!r}: {human_bytes(line)}",
                ),
                (
                    LINE_FACTOR * QUEUE_PACKET_BYTES * est.queued_packets,
                    "link.queue.limit",
                    f"up to {est.queued_packets:.3g} packets waiting in the links' queues (sources at a "
                    f"set rate can outpace them): "
                    f"{human_bytes(LINE_FACTOR * QUEUE_PACKET_BYTES * est.queued_packets)}",
                ),
                (FLOW_BYTES * est.flows, "flow", f"{est.flows} flows at about {FLOW_BYTES // 1024} kB each"),
                (
                    series,
                    "measurement.interval",
                    f"{est.series_rows:.3g} time-series rows: {est.intervals:.3g} intervals of "
                    f"{resolved['measurement']['interval_ns'] / 1e9:g} s",
                ),
            ],
            key=lambda x: x[0],
        )[1:]
        msg = (
            f"the run would need about {human_bytes(est.memory_bytes)} of memory ({why}), above "
            f"{human_bytes(limit)} ({what}); {_raise_hint(what)}"
        )
        raise _core.ScenarioError(f"{source}: key `{key}`: {msg}", source, None, key, msg)
    _check_spill(source, est, out)
    if not captured:  # no capture, no limit to look up (the free disk space: shutil, statvfs)
        return est
    limit, what = budget.capture_limit(out)
    if limit > 0 and est.capture_bytes > limit:
        msg = (
            f"the packet captures could reach {human_bytes(est.capture_bytes)} (the captured links "
            f"at full rate for {resolved['duration_ns'] / 1e9:g} s), above {human_bytes(limit)} "
            f"({what}); shorten the run, or raise it with --max-capture or QOSLAB_MAX_CAPTURE"
        )
        raise _core.ScenarioError(f"{source}: key `capture`: {msg}", source, None, "capture", msg)
    return est


def _check_spill(source: str, est: Estimate, out: Path) -> None:
    """Refuses a run whose finished transfers, spilled past :data:`SPILL_AFTER`, would fill the
    disk under ``$TMPDIR`` (their spill file) or where the tables go (transfers.parquet)."""
    if est.transfers <= SPILL_AFTER:
        return
    import shutil
    import tempfile

    for where, per, what in (
        (Path(tempfile.gettempdir()), SPILL_ROW_BYTES, "their spill file under $TMPDIR"),
        (out, TABLE_ROW_BYTES, "transfers.parquet"),
    ):
        try:
            free = shutil.disk_usage(where if where.exists() else where.parent).free
        except OSError:
            continue
        need = per * est.transfers
        if need > 0.9 * free:
            msg = (
                f"about {est.transfers:.3g} transfers' records would take {human_bytes(need)} of disk "
                f"({what}), above 90 % of the {human_bytes(free)} free at {where}; shorten the run "
                "or lower the arrival rate"
            )
            raise _core.ScenarioError(f"{source}: key `arrivals`: {msg}", source, None, "arrivals", msg)


def capture_note(stopped_ns: int | None, limit: float, what: str) -> str | None:
    """The line saying that the captures stopped at their limit (at ``stopped_ns``), if they did."""
    if stopped_ns is None:
        return None
    return (
        f"the packet captures stopped at t = {stopped_ns / 1e9:g} s, at {human_bytes(limit)} ({what}); "
        "the files hold the packets before then"
    )


class Pace:
    """Wraps a progress callback: after ``warmup_s`` of wall time, a run whose pace says it
    would take longer than ``max_time_s`` in all is stopped (the callback returns False; the
    core then returns what it measured so far). ``verdict`` says why it stopped."""

    def __init__(
        self, max_time_s: float, inner: Callable[[float], Any] | None = None, warmup_s: float = 3.0
    ) -> None:
        self.max_time_s = max_time_s
        self.inner = inner
        self.warmup_s = min(warmup_s, max_time_s / 4) if max_time_s > 0 else warmup_s
        self.t0 = time.perf_counter()
        self.verdict: str | None = None

    def __call__(self, frac: float) -> bool:
        if self.inner is not None:
            self.inner(frac)
        if self.max_time_s <= 0 or frac <= 0:
            return True
        elapsed = time.perf_counter() - self.t0
        if elapsed < self.warmup_s or frac >= 1.0:
            return True
        expected = elapsed / frac
        if expected > self.max_time_s:
            self.verdict = (
                f"at this pace the run would take about {human_seconds(expected)} of wall-clock time, "
                f"above --max-time {human_seconds(self.max_time_s)}"
            )
            return False
        return True
