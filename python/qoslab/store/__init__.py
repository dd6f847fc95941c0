"""The result store: one SQLite database (WAL mode) plus per-run Parquet files of time series.

Layout of a store directory::

    results.db         runs, metrics, flows, queues, attempts, sweep membership, scenarios
    results.db.lock    advisory lock held by the one process that writes (a sweep coordinator)
    series/ab/<run>.queue.parquet, series/ab/<run>.flow.parquet

Stored runs do not change: a run belongs to every sweep that used it, with the parameters each
gave it (``sweep_runs``), and a sweep name keeps the grid, scenario and ``--set`` it was first run
with (``sweeps``; :meth:`Store.claim_sweep`). Each Parquet file's SHA-256 is recorded with its run
(:mod:`qoslab.store.checks`).

A run is keyed by (canonical scenario hash, seed, qoslab version) and written in one transaction
(row, metrics, flows, queues, attempt, sweep membership; with its batch: :meth:`Store.record_many`)
after its Parquet files are renamed into place (:meth:`Store.adopt_series`), so a crash leaves the
whole run or nothing. An OS error while writing is one :class:`StoreError` line after a rollback;
every run committed before stays and the same command resumes. Temporary files of a killed writer
go the next time the store opens with no writer (``qoslab results --check`` lists them). An older
schema is refused with the command that migrates it (:func:`migrate`, which keeps a backup).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from qoslab.store import checks
from qoslab.store.checks import SweepIdentity as SweepIdentity
from qoslab.store.schema import DB_NAME as DB_NAME
from qoslab.store.schema import FORMAT as FORMAT
from qoslab.store.schema import MIGRATIONS as _MIGRATIONS
from qoslab.store.schema import SCHEMA as _SCHEMA
from qoslab.store.schema import SCHEMA_VERSION, schema_of
from qoslab.store.schema import Rows as Rows
from qoslab.store.schema import RunRecord as RunRecord
from qoslab.store.schema import StoreBusy as StoreBusy
from qoslab.store.schema import StoreError as StoreError
from qoslab.store.schema import migrate as migrate
from qoslab.store.schema import py_value as _py

#: Default store directory (relative to the working directory); ``QOSLAB_STORE`` overrides it.
DEFAULT_STORE = "results/store"


def default_store() -> Path:
    return Path(os.environ.get("QOSLAB_STORE", DEFAULT_STORE))


@dataclass(frozen=True, order=True)
class RunKey:
    """What identifies a run: the canonical scenario hash, the seed and the qoslab version."""

    scenario_sha256: str
    seed: int
    version: str

    def slug(self) -> str:
        return f"{self.scenario_sha256[:16]}-s{self.seed}-v{self.version}"


_TEMPORARY = ".*.tmp"


def series_rel(key: RunKey, kind: str) -> str:
    """Where run ``key``'s ``kind`` series (``queue``, ``flow``) goes, relative to the store."""
    return str(Path("series") / key.scenario_sha256[:2] / f"{key.slug()}.{kind}.parquet")


def write_series_file(
    root: Path, key: RunKey, kind: str, df: pd.DataFrame, meta: Mapping[str, str]
) -> tuple[str, str]:
    """Writes one time-series table of run ``key`` as Parquet into the store at ``root``
    (a temporary file renamed into place, so the file is whole or absent) and returns its path
    relative to the store and its SHA-256. The coordinator calls it through
    :meth:`Store.write_series`, a worker (``RunTask.store_root``) directly; an OSError leaves no
    temporary file."""
    import uuid

    import pyarrow as pa
    import pyarrow.parquet as pq

    rel = series_rel(key, kind)
    dest = root / rel
    t = pa.Table.from_pandas(df, preserve_index=False)
    t = t.replace_schema_metadata(
        {
            **(t.schema.metadata or {}),
            **{f"qoslab.{k}".encode(): str(v).encode() for k, v in meta.items()},
        }
    )
    # unique among the writers of one file: workers on several hosts may share the store
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(t, tmp)
        digest = checks.sha256_of(tmp)
        os.replace(tmp, dest)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    return rel, digest


_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class Store:
    """A result store directory (created on first use unless ``create`` is False).

    ``path`` is the directory, or the ``.db`` file inside it. ``timeout`` is how long SQLite
    waits for another process's write lock before giving up (``QOSLAB_STORE_TIMEOUT``, default
    30 s).
    """

    def __init__(self, path: str | Path | None = None, *, create: bool = True, timeout: float | None = None):
        p = checks.text_path(Path(path) if path is not None else default_store())
        if p.suffix == ".db" or p.is_file():
            self.db_path = p
            self.root = p.parent
        else:
            self.root = p
            self.db_path = p / DB_NAME
        if timeout is None:
            timeout = float(os.environ.get("QOSLAB_STORE_TIMEOUT", "30"))
        self.timeout = timeout
        self._lock_fd: int | None = None
        self._columns: dict[str, set[str]] = {}
        #: SHA-256 of the series files this process wrote, by path, until their run is recorded.
        self._digests: dict[str, str] = {}
        if not self.db_path.exists():
            if not create:
                raise StoreError(f"no result store at {self.db_path}")
            try:
                self.root.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise StoreError(f"cannot create the result store {self.root}: {e.strerror}") from None
        #: Temporary files of killed writers removed when this store was opened.
        self.removed_temporaries: list[Path] = []
        checks.retry_busy(lambda: self._open(create), self.timeout, StoreBusy)
        self._remove_temporaries()

    def _open(self, create: bool) -> None:
        """Connects and checks (or creates) the schema; again while another process holds the
        database, for up to ``timeout`` s (:func:`checks.retry_busy`; a failed try's connection
        is closed as it is dropped)."""
        with self._guard():
            self.conn = sqlite3.connect(self.db_path, timeout=self.timeout, isolation_level=None)
            self._init(create)

    # -- errors ---------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _guard(self) -> Iterator[None]:
        """Turns SQLite errors into one-line :class:`StoreError` messages naming the store."""
        try:
            yield
        except sqlite3.OperationalError as e:
            msg = str(e)
            if "locked" in msg or "busy" in msg:
                raise StoreBusy(
                    f"result store {self.db_path} is locked by another process: waited {self.timeout:g} s "
                    "(QOSLAB_STORE_TIMEOUT); wait for it to finish, raise QOSLAB_STORE_TIMEOUT, or use "
                    "another --store"
                ) from None
            if "disk is full" in msg or "disk I/O error" in msg:
                raise StoreError(
                    f"result store {self.db_path}: {msg}; the runs stored before are kept: "
                    "free some space (or use another --store) and run the same command to resume"
                ) from None
            if "readonly" in msg:
                raise StoreError(f"result store {self.db_path} is read-only ({msg})") from None
            if "no such table" in msg or "no such column" in msg:
                raise StoreError(
                    f"{self.db_path} is not a qoslab result store of schema {SCHEMA_VERSION} ({msg})"
                ) from None
            raise StoreError(f"result store {self.db_path}: {msg}") from None
        except sqlite3.DatabaseError as e:
            raise StoreError(
                f"{self.db_path} is not a readable qoslab result store ({e}); "
                "move it away or use another --store"
            ) from None

    def _init(self, create: bool) -> None:
        c = self.conn
        c.execute("PRAGMA foreign_keys = ON")
        mode = c.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise StoreError(f"result store {self.db_path}: cannot switch to WAL mode (got {mode})")
        c.execute("PRAGMA synchronous = NORMAL")
        tables = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not tables:
            if not create:
                raise StoreError(
                    f"{self.db_path} is an empty database, not a qoslab result store "
                    "(its creation failed, e.g. on a full disk: remove it, or use it as --store of a sweep)"
                )
            created = time.strftime("%Y-%m-%dT%H:%M:%S")
            # One script, one transaction: a concurrent creator waits, then finds it all done.
            c.executescript(
                "BEGIN IMMEDIATE;\n"
                + _SCHEMA
                + f"INSERT OR IGNORE INTO meta VALUES ('format', '{FORMAT}');\n"
                + f"INSERT OR IGNORE INTO meta VALUES ('schema_version', '{SCHEMA_VERSION}');\n"
                + f"INSERT OR IGNORE INTO meta VALUES ('created', '{created}');\n"
                + "COMMIT;"
            )
            return
        if "meta" not in tables:
            raise StoreError(f"{self.db_path} is an SQLite database but not a qoslab result store")
        meta = dict(c.execute("SELECT key, value FROM meta").fetchall())
        if meta.get("format") != FORMAT:
            raise StoreError(f"{self.db_path} is an SQLite database but not a qoslab result store")
        version = schema_of(meta)
        if version < SCHEMA_VERSION and version in _MIGRATIONS:
            raise StoreError(
                f"result store {self.db_path} has schema {version}, this qoslab uses schema "
                f"{SCHEMA_VERSION}: migrate it with `qoslab results --store {self.root} --migrate` "
                "(a backup of the database is kept)"
            )
        if version != SCHEMA_VERSION:
            raise StoreError(
                f"result store {self.db_path} has schema {meta.get('schema_version')}, "
                f"this qoslab reads schema {SCHEMA_VERSION}"
                + (" (written by a newer qoslab: upgrade qoslab)" if version > SCHEMA_VERSION else "")
            )

    def close(self) -> None:
        self.release()
        with contextlib.suppress(sqlite3.Error):
            self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the writer lock --------------------------------------------------------------------------

    @property
    def lock_path(self) -> Path:
        return self.db_path.with_name(self.db_path.name + ".lock")

    def acquire(self) -> None:
        """Takes the store's writer lock, or raises :class:`StoreError` if another process
        (another sweep) holds it. The lock goes away with the process, however it ends."""
        if self._lock_fd is not None:
            return
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise StoreError(
                f"result store {self.root} is in use by another qoslab process (pid {holder}); "
                "wait for it to finish or use another --store"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        self._lock_fd = fd

    def release(self) -> None:
        if self._lock_fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self._lock_fd, 0)
                fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
                os.close(self._lock_fd)
            self._lock_fd = None

    # -- temporary files --------------------------------------------------------------------------

    def temporaries(self) -> list[Path]:
        """Temporary Parquet files in the store (a writer's work in progress, or left by a
        writer that was killed)."""
        series = self.root / "series"
        return sorted(series.glob(f"*/{_TEMPORARY}")) if series.is_dir() else []

    def _remove_temporaries(self) -> None:
        """Removes the temporary files of killed writers, if no writer holds the store now."""
        stray = self.temporaries()
        if not stray:
            return
        try:
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError:
            return  # a read-only store: leave them, --check reports them
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return  # a live writer: they may be its work in progress
        try:
            for f in self.temporaries():
                with contextlib.suppress(FileNotFoundError):
                    f.unlink()
                    self.removed_temporaries.append(f)
        except OSError:
            pass  # left for --check to report
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    # -- queries ----------------------------------------------------------------------------------

    def stored(self, keys: Iterable[RunKey]) -> dict[RunKey, tuple[str, frozenset[str]]]:
        """For each of ``keys`` in the store: its status and the extra metric functions it was
        computed with."""
        out: dict[RunKey, tuple[str, frozenset[str]]] = {}
        with self._guard():
            for k in keys:
                r = self.conn.execute(
                    "SELECT status, metric_functions FROM runs "
                    "WHERE scenario_sha256 = ? AND seed = ? AND version = ?",
                    (k.scenario_sha256, k.seed, k.version),
                ).fetchone()
                if r is not None:
                    out[k] = (r[0], frozenset(json.loads(r[1] or "[]")))
        return out

    def run_ids(self, keys: Iterable[RunKey]) -> dict[RunKey, int]:
        out: dict[RunKey, int] = {}
        with self._guard():
            for k in keys:
                r = self.conn.execute(
                    "SELECT id FROM runs WHERE scenario_sha256 = ? AND seed = ? AND version = ?",
                    (k.scenario_sha256, k.seed, k.version),
                ).fetchone()
                if r is not None:
                    out[k] = int(r[0])
        return out

    def query(self, sql: str, params: Sequence[Any] = ()) -> pd.DataFrame:
        with self._guard():
            return pd.read_sql_query(sql, self.conn, params=list(params))

    def count_runs(self) -> int:
        """The number of runs in the store (successful or failed, every version)."""
        with self._guard():
            return int(self.conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0])

    # -- writing ----------------------------------------------------------------------------------

    def _ensure_columns(self, table: str, rows: Rows) -> None:
        known = self._columns.get(table)
        if known is None:
            known = {r[1] for r in self.conn.execute(f"PRAGMA table_info({table})")}
            self._columns[table] = known
        for col, sql_type in zip(rows.columns, rows.types, strict=True):
            if col in known:
                continue
            if not _IDENT.match(col):
                raise StoreError(f"result store: cannot store column {col!r} of table {table}")
            self.conn.execute(f'ALTER TABLE {table} ADD COLUMN "{col}" {sql_type}')
            known.add(col)

    def _insert_frame(self, table: str, run_id: int, df: pd.DataFrame | Rows) -> None:
        rows = df if isinstance(df, Rows) else Rows.of(df)
        if len(rows) == 0:
            return
        self._ensure_columns(table, rows)
        names = ", ".join(f'"{c}"' for c in ("run_id", *rows.columns))
        marks = ", ".join("?" for _ in range(len(rows.columns) + 1))
        self.conn.executemany(
            f"INSERT INTO {table} ({names}) VALUES ({marks})", [(run_id, *row) for row in rows.rows]
        )

    def write_series(self, key: RunKey, kind: str, df: pd.DataFrame, meta: dict[str, str]) -> str:
        """Writes one time-series table as Parquet (atomically, by rename) and returns its path
        relative to the store."""
        try:
            rel, digest = write_series_file(self.root, key, kind, df, meta)
        except OSError as e:
            reason = os.strerror(e.errno) if e.errno else str(e).splitlines()[0]
            raise StoreError(
                f"result store {self.root}: cannot write {series_rel(key, kind)} ({reason}); the runs stored "
                "before are kept: free some space (or use another --store) and run the same command to resume"
            ) from None
        self._digests[rel] = digest
        return rel

    def adopt_series(self, key: RunKey, files: Mapping[str, tuple[str, str]], worker: str) -> dict[str, str]:
        """Takes series files a worker wrote into this store (``{kind: (path relative to the
        store, SHA-256)}``): each must be where its run's files go and read back here with the
        worker's checksum, which the run's row then records. Returns ``{kind: path}``; a missing
        or different file is a :class:`StoreError` (the worker wrote into a store this process
        does not see)."""
        out: dict[str, str] = {}
        for kind, (rel, sha) in files.items():
            if rel != series_rel(key, kind):
                raise StoreError(f"result store {self.root}: worker {worker} sent {rel} for run {key.slug()}")
            try:
                got = checks.sha256_of(self.root / rel)
            except OSError as e:
                raise StoreError(
                    f"result store {self.root}: series file {rel} written by worker {worker} cannot be read "
                    f"here ({e.strerror or e}): the workers must see the store where the coordinator does"
                ) from None
            if got != sha:
                raise StoreError(
                    f"result store {self.root}: series file {rel} differs from what worker {worker} wrote "
                    f"(SHA-256 {got[:12]}…, not {sha[:12]}…)"
                )
            self._digests[rel] = sha
            out[kind] = rel
        return out

    def _digest(self, rel: str | None) -> str | None:
        """The SHA-256 of series file ``rel``: as written by :meth:`write_series`, else read
        from the file now (a run recorded with files written some other way)."""
        if rel is None:
            return None
        if rel in self._digests:
            return self._digests.pop(rel)
        try:
            return checks.sha256_of(self.root / rel)
        except OSError:
            return None

    def record(self, **fields: Any) -> int:
        """Stores one run (or one failed attempt) in a single transaction and returns its id;
        ``fields`` are :class:`RunRecord`'s.

        A successful run that is already stored is overwritten only by a successful run computed
        with more extra metric functions (the attempt is logged either way); a failed run is
        replaced by a later attempt's result.
        """
        return self.record_many([RunRecord(**fields)])[0]

    def record_many(self, records: Sequence[RunRecord]) -> list[int]:
        """Stores many runs in one transaction (each as :meth:`record` would, in order) and
        returns their ids: all of them are committed, or none (one fsync for the batch)."""
        for rec in records:
            if rec.status not in ("ok", "failed"):
                raise ValueError(f"status must be 'ok' or 'failed', got {rec.status!r}")
        if not records:
            return []
        c = self.conn
        with self._guard():
            c.execute("BEGIN IMMEDIATE")
            try:
                ids = [self._record_one(rec) for rec in records]
                c.execute("COMMIT")
            except BaseException:
                if c.in_transaction:
                    c.execute("ROLLBACK")
                raise
        return ids

    def _record_one(self, rec: RunRecord) -> int:
        """:meth:`record_many`'s work for one run, inside its transaction."""
        key, series = rec.key, rec.series
        first_sweep, first_params = rec.memberships[0] if rec.memberships else (None, {})
        c = self.conn
        c.execute(
            "INSERT INTO attempts (scenario_sha256, seed, version, attempt, status, error, worker, "
            "wall_time_s, finished_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                key.scenario_sha256,
                key.seed,
                key.version,
                rec.attempt,
                rec.status,
                rec.error,
                rec.worker,
                rec.wall_time_s,
                rec.finished_at,
            ),
        )
        n_attempts = c.execute(
            "SELECT COUNT(*) FROM attempts WHERE scenario_sha256 = ? AND seed = ? AND version = ?",
            (key.scenario_sha256, key.seed, key.version),
        ).fetchone()[0]
        prev = c.execute(
            "SELECT id, status, metric_functions FROM runs "
            "WHERE scenario_sha256 = ? AND seed = ? AND version = ?",
            (key.scenario_sha256, key.seed, key.version),
        ).fetchone()
        fns = sorted(set(rec.metric_functions))
        keep = prev is not None and prev[1] == "ok"
        if keep and rec.status == "ok" and not set(fns) <= set(json.loads(prev[2] or "[]")):
            keep = False  # the new result carries metrics the stored one lacks
        if keep and rec.status == "ok" and self._damaged_ids([int(prev[0])]):
            keep = False  # its files fail their checksums: the new result replaces them
        if prev is not None:
            # the first sweep that stored the run keeps its label (memberships list all)
            first_sweep, first_params = c.execute(
                "SELECT sweep, params FROM runs WHERE id = ?", (prev[0],)
            ).fetchone()
            first_params = json.loads(first_params or "{}")
        if keep:
            run_id = int(prev[0])
            c.execute("UPDATE runs SET attempts = ? WHERE id = ?", (n_attempts, run_id))
        else:
            kept_memberships: list[tuple[str, str]] = []
            if prev is not None:
                # The replaced run's sweeps keep it: its memberships move to the new row.
                kept_memberships = c.execute(
                    "SELECT sweep, params FROM sweep_runs WHERE run_id = ?", (prev[0],)
                ).fetchall()
                c.execute("DELETE FROM runs WHERE id = ?", (prev[0],))
            c.execute(
                "INSERT OR IGNORE INTO scenarios (sha256, name, toml) VALUES (?, ?, ?)",
                (key.scenario_sha256, rec.scenario_name, rec.scenario_toml),
            )
            cur = c.execute(
                "INSERT INTO runs (scenario_sha256, seed, version, scenario, scenario_source, sweep, "
                "params, status, error, traceback, attempts, wall_time_s, worker, started_at, "
                "finished_at, series_queue, series_flow, metric_functions, summary, "
                "series_queue_sha256, series_flow_sha256) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    key.scenario_sha256,
                    key.seed,
                    key.version,
                    rec.scenario_name,
                    rec.scenario_source,
                    first_sweep,
                    json.dumps(first_params, sort_keys=True, default=str),
                    rec.status,
                    rec.error,
                    rec.traceback,
                    n_attempts,
                    rec.wall_time_s,
                    rec.worker,
                    rec.started_at,
                    rec.finished_at,
                    (series or {}).get("queue"),
                    (series or {}).get("flow"),
                    json.dumps(fns),
                    json.dumps(rec.summary, default=_json_default) if rec.summary is not None else None,
                    self._digest((series or {}).get("queue")),
                    self._digest((series or {}).get("flow")),
                ),
            )
            run_id = int(cur.lastrowid or 0)
            if rec.metrics:
                c.executemany(
                    "INSERT INTO metrics (run_id, name, value) VALUES (?, ?, ?)",
                    [(run_id, k, _py(v)) for k, v in rec.metrics.items()],
                )
            if rec.flows is not None:
                self._insert_frame("flows", run_id, rec.flows)
            if rec.queues is not None:
                self._insert_frame("queues", run_id, rec.queues)
            c.executemany(
                "INSERT OR IGNORE INTO sweep_runs (sweep, run_id, params) VALUES (?, ?, ?)",
                [(sw, run_id, pj) for sw, pj in kept_memberships],
            )
        for sweep, params in rec.memberships:
            c.execute(
                "INSERT OR IGNORE INTO sweep_runs (sweep, run_id, params) VALUES (?, ?, ?)",
                (sweep, run_id, json.dumps(params, sort_keys=True, default=str)),
            )
        return run_id

    def add_memberships(self, rows: Sequence[tuple[RunKey, str, dict[str, Any]]]) -> None:
        """Records that stored runs belong to sweeps (with the sweep's parameters), in one
        transaction."""
        if not rows:
            return
        c = self.conn
        with self._guard():
            ids = self.run_ids({k for k, _, _ in rows})
            c.execute("BEGIN IMMEDIATE")
            try:
                c.executemany(
                    "INSERT OR IGNORE INTO sweep_runs (sweep, run_id, params) VALUES (?, ?, ?)",
                    [(s, ids[k], json.dumps(p, sort_keys=True, default=str)) for k, s, p in rows if k in ids],
                )
                c.execute("COMMIT")
            except BaseException:
                if c.in_transaction:
                    c.execute("ROLLBACK")
                raise

    # -- sweeps ------------------------------------------------------------------------------------

    def claim_sweep(
        self,
        name: str,
        grid: Mapping[str, Sequence[Any]],
        *,
        identity: SweepIdentity | None = None,
        replace: bool = False,
    ) -> int:
        """Claims sweep ``name`` for ``grid`` ({key: values}) and ``identity``: a :class:`StoreError`
        naming what differs, or with ``replace`` the name's memberships dropped (its runs stay);
        returns how many (:func:`qoslab.store.checks.claim_sweep`)."""
        c = self.conn
        with self._guard():
            c.execute("BEGIN IMMEDIATE")
            try:
                refused, dropped = checks.claim_sweep(c, name, grid, identity, replace=replace)
                if refused is not None:
                    raise StoreError(f"result store {self.root}: {refused}")
                c.execute("COMMIT")
            except BaseException:
                if c.in_transaction:
                    c.execute("ROLLBACK")
                raise
        return dropped

    # -- integrity --------------------------------------------------------------------------------

    def _damaged_ids(self, ids: Iterable[int]) -> set[int]:
        """Of the successful runs ``ids``, those whose series files are missing or fail their
        checksums."""
        bad: set[int] = set()
        for rid in ids:
            row = self.conn.execute(
                "SELECT series_queue, series_queue_sha256, series_flow, series_flow_sha256 "
                "FROM runs WHERE id = ? AND status = 'ok'",
                (rid,),
            ).fetchone()
            if row is not None and any(
                checks.file_problem(self.root, rel, sha) for rel, sha in ((row[0], row[1]), (row[2], row[3]))
            ):
                bad.add(rid)
        return bad

    def damaged(self, keys: Iterable[RunKey]) -> set[RunKey]:
        """Of ``keys``, the stored successful runs whose time-series files are missing or fail
        their checksums (a sweep computes them again)."""
        ids = self.run_ids(keys)
        with self._guard():
            bad = self._damaged_ids(ids.values())
        return {k for k, i in ids.items() if i in bad}

    def series_path(self, rel: str, sha256: str | None) -> Path:
        """The path of series file ``rel``, verified against its checksum first: a missing,
        unreadable or damaged file is one :class:`StoreError` line."""
        problem = checks.file_problem(self.root, rel, sha256)
        if problem is not None:
            raise StoreError(
                f"result store {self.root}: {problem}; `qoslab results --check` lists every damaged file, "
                "and running the sweep again recomputes its runs"
            )
        return self.root / rel

    def verify(self) -> list[str]:
        """Consistency problems: successful runs without metrics or flows, or whose Parquet
        files are missing, unreadable or fail their checksums. Empty when the store is whole."""
        problems: list[str] = []
        with self._guard():
            rows = self.conn.execute(
                "SELECT r.id, r.scenario, r.seed, r.series_queue, r.series_flow, "
                "(SELECT COUNT(*) FROM metrics m WHERE m.run_id = r.id), "
                "(SELECT COUNT(*) FROM flows f WHERE f.run_id = r.id), "
                "(SELECT COUNT(*) FROM queues q WHERE q.run_id = r.id), "
                "r.series_queue_sha256, r.series_flow_sha256 "
                "FROM runs r WHERE r.status = 'ok'"
            ).fetchall()
            ic = self.conn.execute("PRAGMA integrity_check").fetchone()[0]
        if ic != "ok":
            problems.append(f"SQLite integrity check: {ic}")
        for f in self.temporaries():
            rel = f.relative_to(self.root)
            problems.append(f"temporary file {rel} (a writer is active, or it was killed)")
        for rid, name, seed, sq, sf, nm, nf, nq, hq, hf in rows:
            what = f"run {rid} ({name}, seed {seed})"
            if nm == 0 or nf == 0 or nq == 0:
                problems.append(f"{what}: {nm} metrics, {nf} flow rows, {nq} queue rows")
            for rel, sha in ((sq, hq), (sf, hf)):
                problem = checks.file_problem(self.root, rel, sha)
                if problem is not None:
                    problems.append(f"{what}: {problem}")
        return problems

    def unchecksummed(self) -> int:
        """Successful runs stored without checksums (before schema 3): their files are checked
        by reading them as Parquet only."""
        with self._guard():
            return int(
                self.conn.execute(
                    "SELECT COUNT(*) FROM runs WHERE status = 'ok' AND "
                    "(series_queue_sha256 IS NULL OR series_flow_sha256 IS NULL)"
                ).fetchone()[0]
            )


def _json_default(o: Any) -> Any:
    if hasattr(o, "item"):
        return o.item()
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")
