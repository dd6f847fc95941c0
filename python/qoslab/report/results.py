"""Reading the result store into pandas.

>>> import qoslab.report.results
>>> runs = qoslab.report.results.load("results/store")                       # doctest: +SKIP
>>> flows = qoslab.report.results.load("results/store", "flows", sweep="fdd-red-s1")  # doctest: +SKIP

Tables: ``runs`` (one row per run, with its parameters and metrics as columns), ``flows``
(per flow), ``queues`` (per link direction), ``metrics`` (long form), ``attempts`` (every
computation the coordinator received), ``series_queue`` and ``series_flow`` (the time series,
read from the runs' Parquet files). Every row carries the run's scenario, hash, seed and version.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

import pandas as pd

from qoslab.report.csvsafe import write_csv
from qoslab.report.frames import typed_rows
from qoslab.scenario import parse_value
from qoslab.store import RunKey, Store, StoreError

TABLES = ("runs", "flows", "queues", "metrics", "attempts", "series_queue", "series_flow")

_RUN_COLS = (
    "r.id AS run_id, r.scenario, r.scenario_sha256, r.seed, r.version, r.status, r.error, "
    "r.attempts, r.wall_time_s, r.worker, r.finished_at, r.series_queue, r.series_flow, "
    "r.series_queue_sha256, r.series_flow_sha256"
)


class RunRow:
    """Columns of a row of the ``runs`` table, for :func:`qoslab.report.frames.typed_rows`."""

    run_id: int
    scenario: str
    scenario_sha256: str
    seed: int
    version: str
    status: str
    series_queue: str | None
    series_flow: str | None
    series_queue_sha256: str | None
    series_flow_sha256: str | None


def _where(
    sweep: str | None,
    scenario: str | None,
    status: str | None,
    version: str | None,
    ids: Sequence[int] | None,
) -> tuple[str, str, list[Any]]:
    """(params expression, FROM … WHERE … clause, parameters)."""
    clauses: list[str] = []
    args: list[Any] = []
    if sweep is not None:
        frm = "FROM runs r JOIN sweep_runs sr ON sr.run_id = r.id"
        params = "sr.params AS params, sr.sweep AS sweep"
        clauses.append("sr.sweep = ?")
        args.append(sweep)
    else:
        frm = "FROM runs r"
        params = "r.params AS params, r.sweep AS sweep"
    for col, val in (("r.scenario", scenario), ("r.status", status), ("r.version", version)):
        if val is not None:
            clauses.append(f"{col} = ?")
            args.append(val)
    if ids is not None:
        clauses.append(f"r.id IN ({', '.join(str(int(i)) for i in ids) or 'NULL'})")
    where = (" WHERE " + " AND ".join(clauses)) if clauses else ""
    return params, frm + where, args


# -- swept values as typed columns ----------------------------------------------------------------

_QUANTITY = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([A-Za-zµ/]+)\s*$")
#: The scenario format's units (docs/scenario-format.md, crates/qoslab-core/src/units.rs), by
#: their canonical name: unit → (its kind's base unit, factor).
UNIT_SCALE: dict[str, tuple[str, float]] = {
    **{u: ("s", f) for u, f in (("ns", 1e-9), ("us", 1e-6), ("ms", 1e-3), ("s", 1.0), ("min", 60.0))},
    **{u: ("bps", f) for u, f in (("bps", 1.0), ("kbps", 1e3), ("Mbps", 1e6), ("Gbps", 1e9), ("Tbps", 1e12))},
    **{u: ("B", f) for u, f in (("B", 1.0), ("KB", 1e3), ("MB", 1e6), ("GB", 1e9))},
    **{u: ("B", f) for u, f in (("KiB", 1024.0), ("MiB", 1024.0**2))},
    "pkts": ("pkts", 1.0),
}
#: The other spellings the scenario format accepts, by their canonical name.
UNIT_ALIASES = {
    "µs": "us",
    "bytes": "B",
    "kB": "KB",
    "pkt": "pkts",
    "packets": "pkts",
}


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _literal(v: Any) -> Any:
    """A swept value given as text (``--grid``) as the TOML literal it stands for, else as is."""
    if not isinstance(v, str):
        return v

    return parse_value(v)


def typed_column(key: str, values: Iterable[Any]) -> tuple[str, list[Any]]:
    """A swept key's values as typed values, with the column name to hold them.

    Values given as text on the command line come back as what they stand for: numbers as
    numbers (``"0.01"`` → 0.01, ``"3"`` → 3), ``true``/``false`` as booleans. Quantities with
    one unit become numbers with the unit in the column name (``limit = "50pkts", "100pkts"``
    → ``("limit_pkts", [50, 100])``); quantities with several units of one kind are converted
    to that kind's base unit (``"500kbps", "2Mbps"`` → ``("rate_bps", [500000.0, 2000000.0])``;
    bps, s, B or pkts). Anything else (names, mixed kinds) is returned unchanged. Missing
    values (a key another sweep did not set) stay missing."""
    vals = list(values)
    lit = [v if _missing(v) else _literal(v) for v in vals]
    present = [v for v in lit if not _missing(v)]
    if not present:
        return key, vals
    if all(isinstance(v, bool) for v in present):
        return key, lit
    if all(isinstance(v, int | float) and not isinstance(v, bool) for v in present):
        return key, lit
    if not all(isinstance(v, str) for v in present):
        return key, vals
    by_text = {v: q for v in present if (q := _quantity(v)) is not None}
    units = {u for _, u in by_text.values()}
    if len(by_text) != len(set(present)) or len({UNIT_SCALE[u][0] for u in units}) != 1:
        return key, vals

    if len(units) == 1:
        (unit,) = units
        return f"{key}_{unit}", [None if _missing(v) else _number(by_text[v][0]) for v in lit]
    base = UNIT_SCALE[units.pop()][0]
    out = [None if _missing(v) else _scaled(*by_text[v]) for v in lit]
    return f"{key}_{base}", out


#: A rate's unit as the core reads it (units.rs, ``rate_mult``): a prefix in either case, then
#: bps, b/s, bit/s or bits/s.
_RATE_UNIT = re.compile(r"^([kKmMgGtT]?)(?:bps|b/s|bit/s|bits/s)$")


def _canonical(unit: str) -> str:
    """A unit's canonical name (``"mbit/s"`` → ``"Mbps"``); an unknown unit unchanged."""
    rate = _RATE_UNIT.match(unit)
    if rate:
        return {"": "bps", "k": "kbps"}.get(rate.group(1).lower(), f"{rate.group(1).upper()}bps")
    return UNIT_ALIASES.get(unit, unit)


def _quantity(text: str) -> tuple[str, str] | None:
    """``"1.5Mb/s"`` → ``("1.5", "Mbps")`` (the number as written, the unit's canonical name);
    None for anything that is not a number with a unit of the scenario format."""
    m = _QUANTITY.match(text)
    unit = _canonical(m.group(2)) if m else ""
    return (m.group(1), unit) if m and unit in UNIT_SCALE else None


def _number(text: str) -> float | int:
    """A number as written: an integer when written as one, else a float."""
    return int(text) if re.fullmatch(r"[-+]?\d+", text) else float(text)


def _scaled(number: str, unit: str) -> float:
    """``number`` in ``unit`` expressed in its kind's base unit, rounded once (200 us is 0.0002 s,
    not 0.00019999999999999998)."""
    return float(Decimal(number) * Decimal(repr(UNIT_SCALE[unit][1])))


def axis_column(df: pd.DataFrame, key: str) -> str | None:
    """The column of ``df`` holding swept ``key`` (``key`` itself or ``key_UNIT``), or None."""
    if key in df.columns:
        return key
    for unit in UNIT_SCALE:
        if f"{key}_{unit}" in df.columns:
            return f"{key}_{unit}"
    return None


def typed_params(df: pd.DataFrame, keys: Iterable[str]) -> pd.DataFrame:
    """``df`` with each column of ``keys`` replaced by :func:`typed_column`'s typed column
    (in place of the original, under its new name)."""
    out = df
    for k in keys:
        if k not in out.columns:
            continue
        name, vals = typed_column(k, out[k])
        if name == k and vals == list(out[k]):
            continue
        pos = list(out.columns).index(k)
        out = out.drop(columns=[k])
        out.insert(pos, name, pd.Series(vals, index=out.index, dtype=_dtype(vals)))
    return out


def _dtype(vals: list[Any]) -> str | None:
    present = [v for v in vals if not _missing(v)]
    if present and all(isinstance(v, bool) for v in present):
        return "boolean" if len(present) < len(vals) else "bool"
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return "Int64" if len(present) < len(vals) else "int64"
    if present and all(isinstance(v, int | float) and not isinstance(v, bool) for v in present):
        return "float64"
    return None


def _expand_params(df: pd.DataFrame) -> pd.DataFrame:
    if "params" not in df.columns or df.empty:
        return df
    p = pd.DataFrame([json.loads(x) if x else {} for x in df["params"]], index=df.index)
    p = typed_params(p, list(p.columns))
    clash = [c for c in p.columns if c in df.columns]
    p = p.rename(columns={c: f"param:{c}" for c in clash})
    return pd.concat([df, p], axis=1)


def load(
    store: str | Path | Store | None = None,
    table: str = "runs",
    *,
    sweep: str | None = None,
    scenario: str | None = None,
    status: str | None = None,
    version: str | None = None,
    keys: Sequence[RunKey] | None = None,
    expand_params: bool = True,
) -> pd.DataFrame:
    """One table of the store as a DataFrame, filtered by sweep name, scenario name, status
    ('ok'/'failed'), qoslab version or an explicit list of run keys.

    With ``sweep``, each run's parameters are the ones that sweep gave it (a run shared by two
    sweeps is computed once and listed in both)."""
    if table not in TABLES:
        raise ValueError(f"unknown table {table!r} (expected one of: {', '.join(TABLES)})")
    st = store if isinstance(store, Store) else Store(store, create=False)
    expand = _expand_params if expand_params else (lambda df: df)
    try:
        ids = None if keys is None else list(st.run_ids(keys).values())
        pexpr, frm, args = _where(sweep, scenario, status, version, ids)
        runs = st.query(f"SELECT {_RUN_COLS}, {pexpr} {frm} ORDER BY r.id", args)
        if table == "runs":
            if runs.empty:
                return expand(runs)
            ids_sql = ", ".join(map(str, runs["run_id"]))
            m = st.query(f"SELECT run_id, name, value FROM metrics WHERE run_id IN ({ids_sql})")
            if not m.empty:
                wide = m.pivot(index="run_id", columns="name", values="value").reset_index()
                wide.columns.name = None
                runs = runs.merge(wide, on="run_id", how="left")
            return expand(runs)
        if table == "attempts":
            a = st.query("SELECT * FROM attempts ORDER BY id")
            if keys is not None:
                want = {(k.scenario_sha256, k.seed, k.version) for k in keys}
                a = a[
                    [
                        (h, s, v) in want
                        for h, s, v in zip(a["scenario_sha256"], a["seed"], a["version"], strict=True)
                    ]
                ]
            return a.reset_index(drop=True)
        base = runs[["run_id", "scenario", "scenario_sha256", "seed", "version", "params", "sweep"]]
        if table in ("flows", "queues", "metrics"):
            if runs.empty:
                return expand(base)
            sub = st.query(
                f"SELECT * FROM {table} WHERE run_id IN ({', '.join(map(str, runs['run_id']))}) "
                "ORDER BY run_id"
            )
            return expand(base.merge(sub, on="run_id", how="inner"))
        # time series from the Parquet files
        col = "series_queue" if table == "series_queue" else "series_flow"
        frames = []
        for r in typed_rows(runs, RunRow):
            rel = getattr(r, col)
            if r.status != "ok" or rel is None:
                continue
            sha = getattr(r, f"{col}_sha256")
            df = _read_series(st, rel, sha if isinstance(sha, str) else None)
            df.insert(0, "run_id", r.run_id)
            for c in ("scenario", "scenario_sha256", "seed", "version", "params"):
                df[c] = getattr(r, c)
            frames.append(df)
        out = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
        return expand(out)
    finally:
        if not isinstance(store, Store):
            st.close()


def _read_series(st: Store, rel: str, sha256: str | None) -> pd.DataFrame:
    """A run's time-series file, verified against its checksum; a file that is missing,
    damaged or unreadable is one StoreError line, never a traceback."""
    path = st.series_path(rel, sha256)
    try:
        return pd.read_parquet(path)
    except Exception as e:  # noqa: BLE001 - pyarrow's errors on a damaged file are many
        first = (str(e).splitlines() or [type(e).__name__])[0][:200]
        raise StoreError(
            f"result store {st.root}: time series file {rel} is not a readable Parquet file ({first}); "
            "running the sweep again recomputes its run"
        ) from None


def sweeps(store: str | Path | Store | None = None) -> pd.DataFrame:
    """One row per sweep in the store, by name: its runs, how many succeeded and failed, the
    number of distinct scenarios, the lowest and highest seed and the qoslab versions
    (comma-separated)."""
    st = store if isinstance(store, Store) else Store(store, create=False)
    try:
        return st.query(
            "SELECT sr.sweep AS sweep, COUNT(*) AS runs, SUM(r.status = 'ok') AS ok, "
            "SUM(r.status = 'failed') AS failed, COUNT(DISTINCT r.scenario_sha256) AS scenarios, "
            "MIN(r.seed) AS min_seed, MAX(r.seed) AS max_seed, "
            "GROUP_CONCAT(DISTINCT r.version) AS versions "
            "FROM sweep_runs sr JOIN runs r ON r.id = sr.run_id GROUP BY sr.sweep ORDER BY sr.sweep"
        )
    finally:
        if not isinstance(store, Store):
            st.close()


#: The columns of the ``runs`` table worth a glance (:func:`runs_overview`).
OVERVIEW_COLUMNS = (
    "run_id",
    "scenario",
    "scenario_sha256",
    "seed",
    "version",
    "status",
    "attempts",
    "wall_time_s",
    "sweep",
    "fairness_index",
    "drops_bottleneck",
    "error",
)


def runs_overview(runs: pd.DataFrame) -> pd.DataFrame:
    """The :data:`OVERVIEW_COLUMNS` that ``runs`` (the ``runs`` table of :func:`load`) has, with
    the scenario hash cut to 12 hex digits: a table that fits a terminal."""
    df = runs[[c for c in OVERVIEW_COLUMNS if c in runs.columns]].copy()
    df["scenario_sha256"] = df["scenario_sha256"].str[:12]
    return df


def scenario_text(store: str | Path | Store | None, sha256: str) -> str:
    """The TOML text of a stored scenario, by its hash."""
    st = store if isinstance(store, Store) else Store(store, create=False)
    try:
        df = st.query("SELECT toml FROM scenarios WHERE sha256 = ?", [sha256])
        if df.empty:
            raise KeyError(f"no scenario {sha256} in the store")
        return str(df["toml"].iloc[0])
    finally:
        if not isinstance(store, Store):
            st.close()


def export(df: pd.DataFrame, path: str | Path) -> Path:
    """Writes ``df`` as CSV or Parquet, by the file's suffix."""
    p = Path(path)
    if p.suffix == ".csv":
        write_csv(df, p)
    elif p.suffix == ".parquet":
        df.to_parquet(p, index=False)
    else:
        raise ValueError(f"{p}: expected a .csv or .parquet file name")
    return p
