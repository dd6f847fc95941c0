"""Finished transfers: their table and their summary, in memory or from a spill file.

A run of ``[[arrivals]]`` finishes transfers without bound. The core holds their records in
memory up to :data:`qoslab.budget.SPILL_AFTER` and past that writes them to a spill file of fixed rows
(``crates/qoslab-py/src/records.rs``: the :data:`FIELDS` as little-endian ``u64``, an
unfinished transfer's ``end_ns`` all ones). :class:`Spill` reads that file a chunk at a time:
summary.json's ``transfers`` (:func:`summarize_spill`) and transfers.parquet
(:func:`write_spill_parquet`) are built in memory bounded by the chunk, whatever the number of
transfers. The medians and 99th percentiles are exact: :func:`order_statistics` finds the
ranks they need by radix selection over the file (16 bits of the value's sortable key a pass),
the means are correctly rounded sums (``math.fsum``) divided by the count.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import tempfile
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from qoslab import _core
from qoslab.summary_keys import SIZE_BINS

#: A spill file's row: these fields, each a little-endian u64 (records.rs's ``COLUMNS``).
FIELDS = tuple(_core.TRANSFER_SPILL_FIELDS)
ROW = np.dtype([(f, "<u8") for f in FIELDS])
UNFINISHED = np.uint64(2**64 - 1)

#: Rows read at a time (11.5 MB of rows, and a few columns of the same length).
CHUNK_ROWS = 1 << 17

#: Values gathered in memory to finish a selection (below, a pass narrows it by 16 bits).
COLLECT = 1 << 16


class Spill:
    """A run's spill file of finished transfers (``rows`` rows); the file and its folder are
    removed when this object is."""

    def __init__(self, path: str | Path, rows: int, *, owned_dir: str | Path | None = None) -> None:
        self.path = Path(path)
        self.rows = int(rows)
        if owned_dir is not None:
            weakref.finalize(self, shutil.rmtree, str(owned_dir), True)

    def chunks(self, rows: int | None = None) -> Iterator[np.ndarray]:
        """The rows, ``rows`` (default :data:`CHUNK_ROWS`) at a time, as structured arrays of
        :data:`ROW`."""
        with open(self.path, "rb") as f:
            while True:
                a = np.fromfile(f, dtype=ROW, count=rows or CHUNK_ROWS)
                if len(a) == 0:
                    return
                yield a

    def columns(self) -> dict[str, np.ndarray]:
        """Every column of the transfers table (as the core gives them), all rows in memory:
        what ``Result.transfers`` shows (the run's outputs never call it)."""
        parts = [derived(c) for c in self.chunks()]
        if not parts:
            return derived(np.zeros(0, dtype=ROW))
        return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


#: A spill folder's name: this prefix, the pid of the process that made it, ``-`` and
#: ``mkdtemp``'s random part.
SPILL_PREFIX = "qoslab-transfers-"
_SPILL_NAME = re.compile(re.escape(SPILL_PREFIX) + r"([0-9]+)-[A-Za-z0-9_]+")


def spill_dir() -> tuple[str, str]:
    """A fresh private folder (under ``$TMPDIR``, named with this process's pid) and the spill
    file's path in it; first the folders of processes that are gone (a killed run's, which
    nothing else would remove) are removed (:func:`remove_orphans`)."""
    remove_orphans()
    d = tempfile.mkdtemp(prefix=f"{SPILL_PREFIX}{os.getpid()}-")
    return d, os.path.join(d, "records.bin")


def _alive(pid: int) -> bool:
    """Process ``pid`` exists and has not exited (a zombie, killed and not yet reaped, has)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: another user's process
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rpartition(b")")[2].split()[:1] != [b"Z"]
    except OSError:
        return True  # no /proc: exists


def remove_orphans(root: str | None = None) -> list[str]:
    """Removes the spill folders under ``root`` (default ``$TMPDIR``) that this user owns and
    whose process has exited; the folders removed. A folder whose pid is alive is kept, even if
    another process took that pid since (it goes once that one exits)."""
    root = root if root is not None else tempfile.gettempdir()
    removed: list[str] = []
    try:
        entries = list(os.scandir(root))
    except OSError:
        return removed
    uid = os.getuid()
    for e in entries:
        m = _SPILL_NAME.fullmatch(e.name)
        if m is None or int(m.group(1)) == os.getpid():
            continue
        try:
            st = e.stat(follow_symlinks=False)
        except OSError:
            continue
        if not e.is_dir(follow_symlinks=False) or st.st_uid != uid or _alive(int(m.group(1))):
            continue
        shutil.rmtree(e.path, ignore_errors=True)
        removed.append(e.path)
    return removed


def adopt(raw: Mapping[str, Any], folder: str) -> Spill | None:
    """The run's spill file if the core wrote one (removed with the ``Spill``), else None and
    ``folder`` removed now."""
    info = raw.get("transfers_spill")
    if info is None:
        shutil.rmtree(folder, ignore_errors=True)
        return None
    return Spill(info["spill"], int(info["rows"]), owned_dir=folder)


def derived(a: np.ndarray) -> dict[str, np.ndarray]:
    """The transfers table's columns of rows ``a``: those of records.rs's ``transfer_columns``
    computed the same way (u64 to f64 rounded to nearest, then one division)."""
    end = a["end_ns"]
    done = end != UNFINISHED
    start = a["start_ns"]
    took = np.where(done, end - np.where(done, start, 0), 0).astype(np.float64)
    nan = np.full(len(a), np.nan)
    return {
        "process": a["process"].copy(),
        "id": a["id"].copy(),
        "slot": a["slot"].copy(),
        "dscp": a["dscp"].copy(),
        "size_bytes": a["size_bytes"].copy(),
        "segments": a["segments"].copy(),
        "start_s": start.astype(np.float64) / 1e9,
        "end_s": np.where(done, end.astype(np.float64) / 1e9, nan),
        "fct_s": np.where(done, took / 1e9, nan),
        "ideal_fct_s": a["ideal_ns"].astype(np.float64) / 1e9,
        "slowdown": np.where(done, took / np.maximum(a["ideal_ns"], 1).astype(np.float64), nan),
        "retransmits": a["retransmits"].copy(),
        "timeouts": a["timeouts"].copy(),
    }


# -- the summary ------------------------------------------------------------------------------


def median_ranks(n: int) -> list[int]:
    """The 0-based ranks ``np.median`` of ``n`` values reads."""
    return [(n - 1) // 2] if n % 2 else [n // 2 - 1, n // 2]


def median_of(n: int, at: Mapping[int, float]) -> float:
    """``np.median`` of ``n`` values from their order statistics ``at`` (rank: value)."""
    r = median_ranks(n)
    return float(at[r[0]]) if len(r) == 1 else float(np.mean([at[r[0]], at[r[1]]]))


def quantile_ranks(n: int, q: float) -> list[int]:
    """The 0-based ranks ``np.quantile(x, q)`` (method "linear") of ``n`` values reads."""
    virtual = (n - 1) * q
    lo = math.floor(virtual)
    return [n - 1] if virtual >= n - 1 else [lo, lo + 1]


def quantile_of(n: int, q: float, at: Mapping[int, float]) -> float:
    """``np.quantile(x, q)`` of ``n`` values from their order statistics: numpy's linear
    interpolation between the two ranks around ``(n - 1) q``, computed as numpy does."""
    r = quantile_ranks(n, q)
    if len(r) == 1:
        return float(at[r[0]])
    virtual = np.float64(n - 1) * np.float64(q)
    gamma = virtual - np.floor(virtual)
    a, b = np.float64(at[r[0]]), np.float64(at[r[1]])
    diff = b - a
    return float(b - diff * (1 - gamma) if gamma >= 0.5 else a + diff * gamma)


def sortable(x: np.ndarray) -> np.ndarray:
    """Keys (u64) ordered as the float64 values ``x`` (no NaN) are."""
    b = x.astype(np.float64).view(np.uint64)
    neg = (b >> np.uint64(63)).astype(bool)
    return np.where(neg, ~b, b | np.uint64(1 << 63))


def unsortable(k: int) -> float:
    """The float64 of a :func:`sortable` key."""
    b = k & ~(1 << 63) if k >> 63 else ~k & (2**64 - 1)
    return float(np.array([b], dtype=np.uint64).view(np.float64)[0])


def order_statistics(
    streams: Callable[[], Iterator[dict[Any, np.ndarray]]], ranks: Mapping[Any, Sequence[int]]
) -> dict[Any, dict[int, float]]:
    """Exact order statistics, in memory bounded by a chunk and :data:`COLLECT` values.

    ``streams()`` yields, chunk after chunk (and again at every call), the values of each
    stream (a dict: stream key to float64 array); ``ranks`` lists the 0-based ranks wanted per
    stream. Each rank is kept as a range of sortable keys known to contain it and the count of
    values below the range. A pass over the data either counts a range's values in 65,536
    buckets (narrowing it by 16 bits) or, once it holds at most :data:`COLLECT` values, gathers
    them and reads the rank: at most five passes."""
    full = (0, 2**64 - 1, 0, -1)  # lo, hi (inclusive), values below lo, values in range (unknown)
    pending: dict[Any, dict[int, tuple[int, int, int, int]]] = {
        s: {k: full for k in ks} for s, ks in ranks.items() if ks
    }
    done: dict[Any, dict[int, float]] = {s: {} for s in ranks}
    while any(pending.values()):
        want = {s: sorted({v for v in p.values()}) for s, p in pending.items() if p}
        hist: dict[tuple[Any, tuple[int, int, int, int]], np.ndarray] = {}
        got: dict[tuple[Any, tuple[int, int, int, int]], list[np.ndarray]] = {}
        for chunk in streams():
            for s, ranges in want.items():
                keys = sortable(chunk[s])
                for r in ranges:
                    lo, hi, _below, count = r
                    inside = keys[(keys >= np.uint64(lo)) & (keys <= np.uint64(hi))]
                    if 0 <= count <= COLLECT:
                        got.setdefault((s, r), []).append(inside)
                    else:
                        shift = max((hi - lo).bit_length() - 16, 0)
                        b = ((inside - np.uint64(lo)) >> np.uint64(shift)).astype(np.int64)
                        h = np.bincount(b, minlength=1 << 16)
                        hist[(s, r)] = hist[(s, r)] + h if (s, r) in hist else h
        for s, ranges in want.items():
            for r in ranges:
                lo, hi, below, count = r
                mine = [k for k, v in pending[s].items() if v == r]
                if lo == hi:  # one key left: every value in the range is this one
                    for k in mine:
                        done[s][k] = unsortable(lo)
                        del pending[s][k]
                    continue
                if (s, r) in got:
                    keys = np.sort(np.concatenate(got[(s, r)]))
                    for k in mine:
                        done[s][k] = unsortable(int(keys[k - below]))
                        del pending[s][k]
                    continue
                h = hist.get((s, r), np.zeros(1 << 16, dtype=np.int64))
                cum = np.cumsum(h)
                shift = max((hi - lo).bit_length() - 16, 0)
                for k in mine:
                    i = int(np.searchsorted(cum, k - below, side="right"))
                    before = int(cum[i - 1]) if i else 0
                    nlo = lo + (i << shift)
                    nhi = min(lo + ((i + 1) << shift) - 1, hi)
                    if nlo == nhi:  # narrowed to one key: the value is known
                        done[s][k] = unsortable(nlo)
                        del pending[s][k]
                    else:
                        pending[s][k] = (nlo, nhi, below + before, int(h[i]))
    return done


def summarize_spill(spill: Spill, name: Callable[[int], str]) -> dict[str, Any]:
    """summary.json's ``transfers`` from a spill file (``name``: a codepoint's name), as the
    in-memory :func:`summarize` gives it: exact medians and 99th percentiles, means to within
    the last bit."""
    groups, totals = _group_totals(spill)

    def streams() -> Iterator[dict[Any, np.ndarray]]:
        for a in spill.chunks():
            d = derived(a)
            masks = _masks(d, groups)
            yield {
                (g, m): d[m][masks[g] & ~np.isnan(d["fct_s"])] for g in groups for m in ("fct_s", "slowdown")
            }

    ranks = {
        (g, m): [*median_ranks(n), *quantile_ranks(n, 0.99)] if (n := totals[g]["finished"]) else []
        for g in groups
        for m in ("fct_s", "slowdown")
    }
    at = order_statistics(streams, ranks)

    def stats(g: Any) -> dict[str, Any]:
        t = totals[g]
        out: dict[str, Any] = {"finished": t["finished"], "unfinished": t["unfinished"]}
        n = t["finished"]
        if n:
            for m in ("fct_s", "slowdown"):
                out[m] = {
                    "mean": math.fsum(t[m]) / n,
                    "median": median_of(n, at[(g, m)]),
                    "p99": quantile_of(n, 0.99, at[(g, m)]),
                }
        return out

    classes = sorted(g[1] for g in groups if g[0] == "class")
    return {
        "all": stats(("all", 0)),
        "by_size": {label: stats(("size", label)) for label, _, _ in SIZE_BINS},
        "by_class": {name(d): stats(("class", d)) for d in classes},
    }


def _masks(d: Mapping[str, np.ndarray], groups: Sequence[Any]) -> dict[Any, np.ndarray]:
    size, dscp = d["size_bytes"], d["dscp"]
    bins = {label: (lo, hi) for label, lo, hi in SIZE_BINS}
    out: dict[Any, np.ndarray] = {}
    for g in groups:
        if g[0] == "all":
            out[g] = np.ones(len(size), dtype=bool)
        elif g[0] == "size":
            lo, hi = bins[g[1]]
            out[g] = (size >= lo) & (size < hi)
        else:
            out[g] = dscp == g[1]
    return out


def _group_totals(spill: Spill) -> tuple[list[Any], dict[Any, dict[str, Any]]]:
    """The groups (all, each size bin, each class seen) and each one's finished and
    unfinished counts and the exact partial sums of its finished transfers' metrics."""
    classes: set[int] = set()
    for a in spill.chunks():
        classes.update(int(x) for x in np.unique(a["dscp"]))
    groups: list[Any] = [
        ("all", 0),
        *(("size", b[0]) for b in SIZE_BINS),
        *(("class", c) for c in sorted(classes)),
    ]
    totals: dict[Any, dict[str, Any]] = {
        g: {"finished": 0, "unfinished": 0, "fct_s": [], "slowdown": []} for g in groups
    }
    for a in spill.chunks():
        d = derived(a)
        finished = ~np.isnan(d["fct_s"])
        for g, m in _masks(d, groups).items():
            t = totals[g]
            t["finished"] += int((m & finished).sum())
            t["unfinished"] += int((m & ~finished).sum())
            for k in ("fct_s", "slowdown"):
                t[k].append(math.fsum(d[k][m & finished].tolist()))
    return groups, totals


def summarize(t: Mapping[str, Any], name: Callable[[int], str]) -> dict[str, Any]:
    """summary.json's ``transfers`` from the table's columns in memory (``t``); empty when
    there are none."""
    if len(t["size_bytes"]) == 0:
        return {}
    fct = np.asarray(t["fct_s"], dtype=float)
    slow = np.asarray(t["slowdown"], dtype=float)
    size = np.asarray(t["size_bytes"], dtype=np.int64)
    dscp = np.asarray(t["dscp"], dtype=np.int64)
    done = ~np.isnan(fct)

    def stats(mask: np.ndarray) -> dict[str, Any]:
        m = mask & done
        out: dict[str, Any] = {"finished": int(m.sum()), "unfinished": int((mask & ~done).sum())}
        if m.any():
            for metric, x in (("fct_s", fct[m]), ("slowdown", slow[m])):
                out[metric] = {
                    "mean": float(x.mean()),
                    "median": float(np.median(x)),
                    "p99": float(np.quantile(x, 0.99)),
                }
        return out

    everything = np.ones(len(size), dtype=bool)
    return {
        "all": stats(everything),
        "by_size": {label: stats((size >= lo) & (size < hi)) for label, lo, hi in SIZE_BINS},
        "by_class": {name(int(d)): stats(dscp == d) for d in np.unique(dscp)},
    }


def write_spill_parquet(
    spill: Spill,
    path: str | Path,
    flow_name: Callable[[np.ndarray, np.ndarray], list[str]],
    meta: Sequence[tuple[str, str]],
) -> None:
    """transfers.parquet from a spill file, a row group per chunk (the core's writer: the
    columns, their order and types as for a table written from memory)."""

    def groups() -> Iterator[list[tuple[str, Any]]]:
        for a in spill.chunks():
            d = derived(a)
            yield [("flow_name", flow_name(d["process"], d["id"])), *d.items()]

    _core.write_parquet_groups(str(path), groups(), list(meta))
