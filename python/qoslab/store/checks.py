"""The result store's integrity: checksums of its Parquet files and the grids of its sweeps.

Every time-series Parquet file's SHA-256 (hashlib's, over the whole file) is recorded in the
run's row when the run is committed (``runs.series_queue_sha256``, ``runs.series_flow_sha256``).
``qoslab results --check`` verifies every file against it, reading a series verifies its file
first, and a resumed sweep recomputes a run whose files are missing or fail their checksum.
Runs stored before schema 3 have no checksum: --check says how many, and reads those files as
Parquet instead (which catches what breaks the file's structure, not every changed byte).

A sweep name belongs to one experiment (``sweeps``: name, grid, and the scenario's hash and the
``--set`` assignments it was run with, :class:`SweepIdentity`): reusing the name with another grid,
scenario or ``--set`` would mix two experiments under one label, so it is refused (``--replace``
starts the name afresh: its memberships go, its runs stay).
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qoslab.errors import undecodable
from qoslab.store.schema import StoreError


def retry_busy(attempt: Callable[[], None], timeout: float, busy: type[Exception]) -> None:
    """Calls ``attempt`` until it raises no ``busy`` (another process holding the database),
    pausing between tries (10 ms, doubling to 0.5 s); the last ``busy`` once ``timeout`` s have
    passed. SQLite's own wait does not cover every lock a concurrent start meets (switching a
    new database to WAL, a deferred read turning into a write), which answer "locked" at once."""
    deadline, pause = time.monotonic() + timeout, 0.01
    while True:
        try:
            return attempt()
        except busy:
            if time.monotonic() + pause > deadline:
                raise
            time.sleep(pause)
            pause = min(2 * pause, 0.5)


#: Bytes hashed per read.
_CHUNK = 1 << 20


def sha256_of(path: Path) -> str:
    """The SHA-256 of the file at ``path`` (hex); OSError if it cannot be read."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


#: Series files this process has found to match their checksum, by path: the file's identity
#: and times then (inode, size, modification and change times in ns) and the checksum. A file
#: whose identity and times are unchanged is not hashed again (the looks of a sequential
#: reproduction check every earlier look's runs); any write, or a utime, changes its change time.
_VERIFIED: dict[Path, tuple[int, int, int, int, str]] = {}


def _identity(path: Path) -> tuple[int, int, int, int]:
    st = path.stat()
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


#: Where a store keeps a series file (``qoslab.store.series_rel``): ``series/``, two hex
#: digits, one file name.
_SERIES_REL = re.compile(r"series/[0-9a-f]{2}/[A-Za-z0-9][A-Za-z0-9_.+\-]*\.parquet")


def outside(root: Path, rel: str) -> str | None:
    """Why ``rel``, a series path read from a store's database, is not a file of the store at
    ``root`` (not of the form the store writes: absolute, through ``..``, elsewhere; or leaving
    ``root/series`` through a symbolic link), or None. Decided before the file is looked at, so
    nothing about a path outside the store is told."""
    if not _SERIES_REL.fullmatch(rel) or ".." in rel:
        return f"time series path {rel!r} recorded in the database is not a series file of the store: refused"
    series = (root / "series").resolve()
    if not (root / rel).resolve().is_relative_to(series):
        return f"time series path {rel!r} leaves the store through a symbolic link: refused"
    return None


def file_problem(root: Path, rel: str | None, sha256: str | None) -> str | None:
    """Why the series file ``rel`` of a store at ``root`` cannot be trusted (outside the store
    (:func:`outside`), missing, unreadable, failing its checksum, or, without one, not readable
    as Parquet), or None."""
    if rel is None:
        return "time series file is not recorded"
    if (why := outside(root, rel)) is not None:
        return why
    path = root / rel
    if not path.is_file():
        return f"time series file {rel} is missing"
    try:
        if sha256 is not None:
            seen = _identity(path)
            if _VERIFIED.get(path) == (*seen, sha256):
                return None
            got = sha256_of(path)
            if got != sha256:
                return f"time series file {rel} fails its checksum (SHA-256 {got[:12]}…, not {sha256[:12]}…)"
            _VERIFIED[path] = (*seen, sha256)
            return None
        import pyarrow.parquet as pq

        pq.read_table(path)
    except OSError as e:
        return f"time series file {rel} cannot be read ({e.strerror or e})"
    except Exception as e:  # noqa: BLE001 - pyarrow's errors on a damaged file are many
        first = (str(e).splitlines() or [type(e).__name__])[0][:200]
        return f"time series file {rel} is not a readable Parquet file ({first})"
    return None


def grid_key(grid: Mapping[str, Sequence[Any]]) -> dict[str, list[str]]:
    """A grid as stored and compared: each key's values as strings, in a fixed order (a grid
    given in another order is the same grid)."""
    return {k: sorted(str(v) for v in vals) for k, vals in sorted(grid.items())}


def grid_text(grid: Mapping[str, Sequence[Any]]) -> str:
    """A grid as the user would write it: ``--grid KEY=V1,V2 --grid …`` (or ``no --grid``)."""
    if not grid:
        return "no --grid"
    return " ".join(f"--grid {k}={','.join(str(v) for v in vals)}" for k, vals in grid.items())


def grid_of_memberships(params: Sequence[str]) -> dict[str, list[str]]:
    """The grid that stored memberships' parameters (JSON objects) imply: every key with the
    values it took."""
    out: dict[str, set[str]] = {}
    for text in params:
        try:
            p = json.loads(text) if text else {}
        except ValueError:
            continue
        for k, v in p.items() if isinstance(p, dict) else ():
            out.setdefault(str(k), set()).add(str(v))
    return {k: sorted(v) for k, v in sorted(out.items())}


@dataclass(frozen=True)
class SweepIdentity:
    """What a sweep runs besides its grid: the scenario (the SHA-256 of the canonical scenario
    before any ``--set``, and its file, named in messages) and the ``--set`` assignments."""

    scenario_sha256: str
    scenario_source: str
    sets: tuple[str, ...] = ()

    def canonical_sets(self) -> list[str]:
        """The assignments as compared: stripped around the key and ``=``; sorted, unless a key is
        given twice (then the order decides which value holds)."""
        out = []
        for a in self.sets:
            k, eq, v = a.partition("=")
            out.append(f"{k.strip()}{eq}{v.strip()}")
        keys = [a.partition("=")[0] for a in out]
        return sorted(out) if len(set(keys)) == len(keys) else out


#: The identity columns of ``sweeps`` (added to a store whose table predates them).
IDENTITY_COLUMNS = ("scenario_sha256", "scenario_source", "sets")


def _sets_text(sets: Sequence[str]) -> str:
    return "no --set" if not sets else " ".join(f"--set {a!r}" for a in sets)


def _identity_differences(have: tuple[str | None, str | None, str | None], want: SweepIdentity) -> list[str]:
    """What differs between the stored identity ``have`` (its columns; NULL: stored before
    sweeps kept it) and ``want``, one phrase each."""
    sha, source, sets_json = have
    diffs = []
    if sha is not None and sha != want.scenario_sha256:
        diffs.append(
            f"with scenario {source!r} (sha256 {sha[:12]}), this sweep's is {want.scenario_source!r} "
            f"(sha256 {want.scenario_sha256[:12]})"
        )
    if sets_json is not None:
        stored: list[str] = json.loads(sets_json)
        mine = want.canonical_sets()
        if stored != mine:
            there = [a for a in stored if a not in mine]
            here = [a for a in mine if a not in stored]
            if there and here:
                diffs.append(f"with {_sets_text(there)}, this sweep has {_sets_text(here)}")
            elif there:
                diffs.append(f"with {_sets_text(there)}, which this sweep lacks")
            elif here:
                diffs.append(f"without {_sets_text(here)}, which this sweep adds")
            else:  # one key given twice, in another order
                diffs.append(f"with {_sets_text(stored)}, this sweep has {_sets_text(mine)}")
    return diffs


def _ensure_identity_columns(c: sqlite3.Connection) -> None:
    have = {r[1] for r in c.execute("PRAGMA table_info(sweeps)")}
    for col in IDENTITY_COLUMNS:
        if col not in have:
            c.execute(f"ALTER TABLE sweeps ADD COLUMN {col} TEXT")


def claim_sweep(
    c: sqlite3.Connection,
    name: str,
    grid: Mapping[str, Sequence[Any]],
    identity: SweepIdentity | None = None,
    *,
    replace: bool,
) -> tuple[str | None, int]:
    """qoslab.store.Store.claim_sweep's work, inside the caller's transaction: records the grid
    and ``identity`` of sweep ``name``. Returns (why it may not, or None; how many memberships
    ``replace`` dropped). A name stored with another grid, scenario or ``--set`` is refused
    unless ``replace``. A name stored before sweeps kept their grids (schema 2) is compared with
    the grid its memberships imply: the same keys, values among the new grid's (a resumed sweep);
    one stored before they kept their identity takes ``identity``."""
    _ensure_identity_columns(c)
    want = grid_key(grid)
    row = c.execute(
        "SELECT grid, scenario_sha256, scenario_source, sets FROM sweeps WHERE name = ?", (name,)
    ).fetchone()
    diffs: list[str] = []
    if row is not None:
        have: dict[str, list[str]] = json.loads(row[0])
        if have != want:
            diffs.append(f"with {grid_text(have)}, this sweep has {grid_text(grid)}")
        if identity is not None:
            diffs += _identity_differences((row[1], row[2], row[3]), identity)
    else:
        params = [r[0] for r in c.execute("SELECT params FROM sweep_runs WHERE sweep = ?", (name,))]
        have = grid_of_memberships(params)
        # stored before sweeps kept their grids: a resumed sweep has the keys and the values
        if params and not (set(have) == set(want) and all(set(v) <= set(want[k]) for k, v in have.items())):
            diffs.append(f"with {grid_text(have)}, this sweep has {grid_text(grid)}")
    if diffs and not replace:
        return (
            f"sweep name {name!r} is stored {'; '.join(diffs)}: choose another --name, or give "
            "--replace to start the name afresh (its stored runs are kept)",
            0,
        )
    dropped = 0
    if diffs:
        dropped = c.execute("DELETE FROM sweep_runs WHERE sweep = ?", (name,)).rowcount
    keep = row is not None and not diffs
    kept_identity = (row[1], row[2], row[3]) if keep and row is not None else (None, None, None)
    ident = (
        (identity.scenario_sha256, identity.scenario_source, json.dumps(identity.canonical_sets()))
        if identity is not None
        else kept_identity
    )
    c.execute(
        "INSERT OR REPLACE INTO sweeps (name, grid, created, scenario_sha256, scenario_source, sets) "
        "VALUES (?, ?, COALESCE((SELECT created FROM sweeps WHERE name = ? AND ?), ?), ?, ?, ?)",
        (name, json.dumps(want), name, keep, time.time(), *ident),
    )
    return None, dropped


def text_path(p: Path) -> Path:
    """``p``, refused (:class:`StoreError`, one line) when it is not UTF-8 text: SQLite and the
    runs' records take text (bytes a shell passed through failed every run)."""
    if (shown := undecodable(p)) is not None:
        raise StoreError(f"{shown}: the result store's path is not UTF-8 text: rename it")
    return p
