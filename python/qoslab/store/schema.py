"""The result store's SQL schema (:mod:`qoslab.store`) and the migrations that bring an older
store to it (:func:`qoslab.store.migrate`, each in one transaction, after a backup)."""

from __future__ import annotations

import contextlib
import fcntl
import math
import os
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

SCHEMA_VERSION = 3
FORMAT = "qoslab-results"
DB_NAME = "results.db"


class StoreError(Exception):
    """A result store that cannot be used: locked, corrupted, missing or of another format.
    The message is one line that names the store."""


class StoreBusy(StoreError):
    """The store's database stayed locked by another process for longer than the store's
    ``timeout``."""


def sql_type(series: pd.Series) -> str:
    """The SQL type of a column added for ``series`` (a table's new column)."""
    kind = series.dtype.kind
    if kind in "biu":
        return "INTEGER"
    if kind == "f":
        return "REAL"
    return "TEXT"


def py_value(v: Any) -> Any:
    """numpy scalars to Python values SQLite accepts; NaN to NULL."""
    if hasattr(v, "item"):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


@dataclass(frozen=True)
class Rows:
    """A run's table (flows, queues) as the SQL values the store inserts: its columns, each
    column's SQL type (for a column the store adds) and its rows. A worker makes it
    (:meth:`of`), so the coordinator that stores many runs per second does no DataFrame work."""

    columns: tuple[str, ...]
    types: tuple[str, ...]
    rows: list[tuple[Any, ...]]

    @classmethod
    def of(cls, df: pd.DataFrame) -> Rows:
        series = [s for _, s in df.items()]  # (one lookup per column: ~30 µs each, 90 a run)
        # an integer column's tolist() is Python ints already (py_value would return them as is)
        values = [s.tolist() if s.dtype.kind in "iu" else [py_value(v) for v in s.tolist()] for s in series]
        return cls(
            tuple(map(str, df.columns)),
            tuple(sql_type(s) for s in series),
            list(zip(*values, strict=True)),
        )

    def __len__(self) -> int:
        return len(self.rows)


@dataclass(frozen=True)
class RunRecord:
    """One run (or one failed attempt) as :meth:`qoslab.store.Store.record_many` stores it; the
    fields are :meth:`qoslab.store.Store.record`'s arguments. ``series`` maps ``queue`` and
    ``flow`` to the files' paths relative to the store, written by
    :meth:`~qoslab.store.Store.write_series` or checked by :meth:`~qoslab.store.Store.adopt_series`."""

    key: Any  # qoslab.store.RunKey (defined there; this module is imported by it)
    scenario_name: str
    scenario_source: str
    scenario_toml: str
    memberships: Sequence[tuple[str, dict[str, Any]]]
    status: str
    attempt: int
    error: str | None = None
    traceback: str | None = None
    wall_time_s: float | None = None
    worker: str | None = None
    started_at: float | None = None
    finished_at: float | None = None
    metrics: dict[str, float] | None = None
    summary: dict[str, Any] | None = None
    flows: pd.DataFrame | Rows | None = None
    queues: pd.DataFrame | Rows | None = None
    series: dict[str, str] | None = None
    metric_functions: Sequence[str] = ()


#: Schema 2 → 3 (run by qoslab.store.migrate in one transaction): sweep membership keyed by
#: (sweep, run, params), so that two grid points that give one run both keep it; the sweeps'
#: grids; and the columns for the Parquet files' checksums. Every row is copied.
MIGRATION_2_TO_3 = """
CREATE TABLE sweep_runs_v3 (
    sweep TEXT NOT NULL,
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    params TEXT NOT NULL,
    PRIMARY KEY (sweep, run_id, params)
);
INSERT INTO sweep_runs_v3 (sweep, run_id, params) SELECT sweep, run_id, params FROM sweep_runs;
DROP TABLE sweep_runs;
ALTER TABLE sweep_runs_v3 RENAME TO sweep_runs;
CREATE INDEX IF NOT EXISTS sweep_runs_run ON sweep_runs (run_id);
CREATE TABLE IF NOT EXISTS sweeps (name TEXT PRIMARY KEY, grid TEXT NOT NULL, created REAL);
ALTER TABLE runs ADD COLUMN series_queue_sha256 TEXT;
ALTER TABLE runs ADD COLUMN series_flow_sha256 TEXT;
"""


SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS scenarios (
    sha256 TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    toml TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    scenario_sha256 TEXT NOT NULL REFERENCES scenarios(sha256),
    seed INTEGER NOT NULL,
    version TEXT NOT NULL,
    scenario TEXT NOT NULL,
    scenario_source TEXT,
    sweep TEXT,
    params TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
    error TEXT,
    traceback TEXT,
    attempts INTEGER NOT NULL,
    wall_time_s REAL,
    worker TEXT,
    started_at REAL,
    finished_at REAL,
    series_queue TEXT,
    series_flow TEXT,
    series_queue_sha256 TEXT,
    series_flow_sha256 TEXT,
    metric_functions TEXT NOT NULL DEFAULT '[]',
    summary TEXT,
    UNIQUE (scenario_sha256, seed, version)
);
CREATE TABLE IF NOT EXISTS metrics (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    value REAL,
    PRIMARY KEY (run_id, name)
);
CREATE TABLE IF NOT EXISTS flows (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    flow INTEGER NOT NULL,
    PRIMARY KEY (run_id, flow)
);
CREATE TABLE IF NOT EXISTS queues (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    queue TEXT NOT NULL,
    PRIMARY KEY (run_id, queue)
);
CREATE TABLE IF NOT EXISTS attempts (
    id INTEGER PRIMARY KEY,
    scenario_sha256 TEXT NOT NULL,
    seed INTEGER NOT NULL,
    version TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    status TEXT NOT NULL,
    error TEXT,
    worker TEXT,
    wall_time_s REAL,
    finished_at REAL
);
CREATE INDEX IF NOT EXISTS attempts_key ON attempts (scenario_sha256, seed, version);
CREATE TABLE IF NOT EXISTS sweep_runs (
    sweep TEXT NOT NULL,
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    params TEXT NOT NULL,
    PRIMARY KEY (sweep, run_id, params)
);
CREATE INDEX IF NOT EXISTS sweep_runs_run ON sweep_runs (run_id);
CREATE TABLE IF NOT EXISTS sweeps (
    name TEXT PRIMARY KEY,
    grid TEXT NOT NULL,
    created REAL,
    scenario_sha256 TEXT,
    scenario_source TEXT,
    sets TEXT
);
"""

#: How to bring a store of schema N to N + 1 (SQL run in one transaction by :func:`qoslab.store.migrate`).
#: Schema 2 indexes sweep membership by run: replacing a run deletes its memberships, which
#: scanned the whole table in schema 1.
MIGRATIONS: dict[int, str] = {
    1: "CREATE INDEX IF NOT EXISTS sweep_runs_run ON sweep_runs (run_id);",
    2: MIGRATION_2_TO_3,
}


def schema_of(meta: dict[str, str]) -> int:
    try:
        return int(meta.get("schema_version", ""))
    except ValueError:
        return -1


def migrate(path: str | Path) -> tuple[int, int, Path | None]:
    """Brings the store at ``path`` to this qoslab's schema, after copying its database to
    ``results.db.schema<N>.bak`` (SQLite's online backup). Returns (old schema, new schema,
    backup path or None when there was nothing to do). Holds the writer lock throughout."""
    p = Path(path)
    db = p if p.suffix == ".db" or p.is_file() else p / DB_NAME
    if not db.exists():
        raise StoreError(f"no result store at {db}")
    lock = db.with_name(db.name + ".lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise StoreError(f"result store {db.parent} is in use by another qoslab process") from None
        try:
            conn = sqlite3.connect(db, isolation_level=None)
            try:
                meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
                if meta.get("format") != FORMAT:
                    raise StoreError(f"{db} is an SQLite database but not a qoslab result store")
                old = schema_of(meta)
                if old == SCHEMA_VERSION:
                    return old, old, None
                if old > SCHEMA_VERSION:
                    raise StoreError(
                        f"result store {db} has schema {old}, newer than this qoslab's {SCHEMA_VERSION}"
                    )
                if any(v not in MIGRATIONS for v in range(old, SCHEMA_VERSION)):
                    raise StoreError(f"result store {db} has schema {old}: no migration to {SCHEMA_VERSION}")
                backup = db.with_name(f"{db.name}.schema{old}.bak")
                dst = sqlite3.connect(backup)
                try:
                    conn.backup(dst)
                finally:
                    dst.close()
                script = "".join(MIGRATIONS[v] + "\n" for v in range(old, SCHEMA_VERSION))
                conn.executescript(
                    "BEGIN IMMEDIATE;\n"
                    + script
                    + f"UPDATE meta SET value = '{SCHEMA_VERSION}' WHERE key = 'schema_version';\n"
                    + "COMMIT;"
                )
                return old, SCHEMA_VERSION, backup
            finally:
                conn.close()
        except sqlite3.Error as e:
            raise StoreError(f"result store {db}: migration failed, nothing changed ({e})") from None
    finally:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
