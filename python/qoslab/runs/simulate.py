"""Running a scenario and shaping its results into tables and output files.

The tables of a :class:`Result` are pandas DataFrames built on first use: a run whose caller
only reads :meth:`Result.summary` or writes its outputs (``qoslab run``, with or without
``--out``) never imports pandas, pyarrow or numpy, which were most of a short run's start-up
cost. The core returns its columns as ``array.array`` buffers; numpy wraps them (without
copying) only when a table or :meth:`Result.columns` is asked for. The Parquet tables are
written from the same buffers by the core's own writer (``qoslab_core::parquet``), and a
summary's sums and standard deviation are computed in numpy's own order of additions
(:mod:`qoslab.report.pairwise`), so that they are the same numbers to the last bit.
"""

from __future__ import annotations

import array
import json
import math
import shutil
import sys
import time
from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qoslab import _core
from qoslab import budget as _budget
from qoslab.budget import Budget, BudgetError, Pace, capture_note
from qoslab.budget import check as check_budget
from qoslab.gc_pause import paused
from qoslab.report.pairwise import jain_index as jain_index  # re-exported: callers find it here
from qoslab.report.pairwise import np_std, np_sum
from qoslab.runs import rundir
from qoslab.runs.columnar import FRAME, PLAIN, Columnar
from qoslab.runs.deferral import signals_deferred
from qoslab.scenario import Scenario, load_scenario
from qoslab.summary_keys import SUMMARY_FLOW_KEYS

if TYPE_CHECKING:
    import threading
    from collections.abc import Iterable, Sequence

    import pandas as pd

    from qoslab.runs.transfers import Spill

#: summary.json keys whose values depend on the machine, not on the simulation.
WALL_TIME_KEYS = ("wall_time_s",)

#: The tables a run writes (``NAME.parquet``), in order.
TABLES = (
    "flows",
    "links",
    "flow_drops",
    "transfers",
    "classes",
    "series_queue",
    "series_flow",
    "series_meter",
    "series_gauges",
    "conditioners",
)


#: The process index of a transfer of a declared flow (not of an arrival process).
_DECLARED = 0xFFFF_FFFF


def codepoint_name(dscp: int) -> str:
    """A codepoint's name: "AF11", "EF", "CS1", "BE", or its number (the core's names)."""
    return _core.dscp_name(dscp)


def _num(x: Any) -> float | int | None:
    """A number for JSON: integers stay integers, NaN becomes null."""
    v = float(x)
    if v != v:
        return None
    return int(x) if isinstance(x, int) or _is_numpy_integer(x) else v


def _is_numpy_integer(x: Any) -> bool:
    np = sys.modules.get("numpy")  # a numpy integer exists only if numpy was imported
    return np is not None and isinstance(x, np.integer)


def as_numpy(v: Any) -> Any:
    """One of the core's numeric columns (``array.array`` of type "d" or "Q") as the numpy
    float64 or uint64 array sharing its buffer; anything else (lists of names, numpy arrays) as
    is."""
    if not isinstance(v, array.array):
        return v
    import numpy as np

    return np.frombuffer(v, dtype={"d": np.float64, "Q": np.uint64}[v.typecode])


class _Table(cached_property["pd.DataFrame"]):
    """A table of :class:`Result`: a cached DataFrame whose docstring lists the table's columns
    with units and definitions (``help(Result.flows)``), read from :mod:`qoslab.outputs`, the one
    place that defines them, when it is asked for (so that ``import qoslab`` stays light)."""

    @property
    def __doc__(self) -> str:
        from qoslab import outputs

        name = self.attrname or "?"
        return outputs.docstring(
            f"{name}.parquet", f"The {name} table as a pandas DataFrame (built on first access)."
        )

    @__doc__.setter
    def __doc__(self, value: str | None) -> None:
        pass  # cached_property copies the function's docstring; the columns' list replaces it


class Result:
    """What one run produced. Tables are pandas DataFrames (built on first access from the
    core's columns); ``summary()`` is summary.json and needs no pandas."""

    def __init__(self, scenario: Scenario, seed: int, raw: dict[str, Any], wall_time_s: float) -> None:
        self.scenario = scenario
        self.seed = seed
        self.raw = raw
        self.events = int(raw["events"])
        self.packet_hops = int(raw["packet_hops"])
        self.wall_time_s = wall_time_s
        self.violations: list[str] = list(raw["violations"])
        #: Interrupted (Ctrl-C/SIGTERM): simulated only up to ``simulated_until_s``; summary.json
        #: says so (``partial``), and nothing stores it as a complete run.
        self.partial = bool(raw.get("interrupted", False))
        #: Why a partial run stopped, if not Ctrl-C/SIGTERM (its time budget).
        self.stopped: str | None = None
        #: The folder the run wrote into (``out``, or a fresh one for its captures), if any.
        self.out: Path | None = None
        #: When the packet captures reached their byte limit: one line saying so (the run went on).
        self.capture_stopped: str | None = None
        self.simulated_until_s: float | None = int(raw.get("simulated_until_ns", 0)) / 1e9
        #: The finished transfers' records once there were more than the core holds in memory
        #: (:mod:`qoslab.runs.transfers`): the table and summary are read from this file.
        self.spill: Spill | None = None

    def __repr__(self) -> str:
        state = f" (partial: stopped at {self.simulated_until_s or 0:g} s)" if self.partial else ""
        return (
            f"<Result {self.scenario.name!r} seed {self.seed}{state}: {len(self._flow_names())} flows, "
            f"{self.events:,} events, {self.packet_hops:,} packet-hops in {self.wall_time_s:.3g} s>"
        )

    # -- the tables, as columns (array.array or numpy arrays, and lists), pandas-free --------------

    def _flow_names(self) -> list[str]:
        """The flows table's rows: the declared flows, then the arrival processes."""
        res = self.scenario.outline
        return [f["name"] for f in res["flows"]] + [a["name"] for a in res.get("arrivals", [])]

    def _dir_names(self) -> list[str]:
        return [f"{lk['name']}:{d}" for lk in self.scenario.outline["links"] for d in ("ab", "ba")]

    def columns(self, table: str) -> dict[str, Any]:
        """Table ``table`` (one of :data:`TABLES`) as ordered columns, exactly as the DataFrame
        of the same name holds them: numeric ones as numpy arrays (float64 or uint64), names as
        lists of str."""
        return {k: as_numpy(v) for k, v in self._raw_columns(table).items()}

    def _raw_columns(self, table: str, how: Columnar = PLAIN) -> dict[str, Any]:
        """:meth:`columns` without numpy: numeric columns as ``array.array`` of type "d"
        (float64) or "Q" (uint64), names as lists of str. The one definition of every table,
        which :meth:`columns`, the DataFrames and the Parquet files share (``how``: a series'
        seconds and names as plain columns, or as :mod:`qoslab.runs.columnar`'s ``FRAME`` builds
        them for a DataFrame)."""
        raw = self.raw
        res = self.scenario.outline
        names = self._flow_names()
        cond = res.get("conditioners", [])
        cond_names = [c["name"] for c in cond]
        if table == "flows":
            rows = [*res["flows"], *({**a, "kind": "arrivals"} for a in res.get("arrivals", []))]
            return {
                "name": names,
                "src": [f["src"] for f in rows],
                "dst": [f["dst"] for f in rows],
                "kind": [f["kind"] for f in rows],
                "dscp": array.array("Q", [f["dscp"] for f in rows]),
                **raw["flows"],
            }
        if table == "transfers":
            t = raw["transfers"] if self.spill is None else self.spill.columns()
            return {"flow_name": self._transfer_flow_names(t["process"], t["id"]), **t}
        if table == "classes":
            c = raw["classes"]
            return {
                "dscp": c["dscp"],
                "codepoint": [codepoint_name(int(d)) for d in c["dscp"]],
                **{k: v for k, v in c.items() if k != "dscp"},
            }
        if table == "links":
            link_names = [lk["name"] for lk in res["links"]]
            cols = dict(raw["links"])
            cols["direction"] = [str(d) for d in cols["direction"]]
            return {"link_name": [link_names[i] for i in cols["link"]], **cols}
        if table == "flow_drops":
            dirs = self._dir_names()
            cols = dict(raw["flow_drops"])
            cols["flow_name"] = [names[i] for i in cols["flow"]]
            cols["where"] = [dirs[i] for i in cols["direction_index"]]
            return cols
        if table == "series_queue":
            dirs = self._dir_names()
            sq = raw["series_queue"]
            cols = {"time_s": how.seconds(sq["time_ns"])}
            for k, v in sq.items():
                cols[k] = v
                if k == "time_ns":
                    cols["queue"] = how.named(dirs, sq["direction_index"])
            return cols
        if table == "series_flow":
            sf = raw["series_flow"]
            cols = {"time_s": how.seconds(sf["time_ns"])}
            for i, (k, v) in enumerate(sf.items()):
                cols[k] = v
                if i == 0:
                    cols["flow_name"] = how.named(names, sf["flow"])
            return cols
        if table == "series_meter":
            sm = raw["series_meter"]
            return {
                "time_s": how.seconds(sm["time_ns"]),
                **sm,
                "conditioner_name": how.named(cond_names, sm["conditioner"]),
                "flow_name": how.named(names, sm["flow"], "(aggregate)"),
            }
        if table == "series_gauges":
            sg = raw["series_gauges"]
            gauge_names = list(raw["gauge_names"])
            cols = {"time_s": how.seconds(sg["time_ns"]), **{k: v for k, v in sg.items() if k != "gauge"}}
            cols["conditioner_name"] = how.named(cond_names, sg["conditioner"])
            cols["flow_name"] = how.named(names, sg["flow"], "(aggregate)")
            cols["name"] = how.named(gauge_names, sg["gauge"])
            return cols
        if table == "conditioners":
            return {
                "name": cond_names,
                "link": [c["link"] for c in cond],
                "meter": [c["meter"]["type"] for c in cond],
                **raw["conditioners"],
            }
        raise KeyError(f"no table {table!r} (tables: {', '.join(TABLES)})")

    def _frame(self, table: str) -> pd.DataFrame:
        import numpy as np
        import pandas as pd

        cols = self._raw_columns(table, FRAME).items()
        return pd.DataFrame({k: np.asarray(v) if isinstance(v, list) else as_numpy(v) for k, v in cols})

    @_Table
    def flows(self) -> pd.DataFrame:
        return self._frame("flows")

    @_Table
    def links(self) -> pd.DataFrame:
        return self._frame("links")

    @_Table
    def flow_drops(self) -> pd.DataFrame:
        return self._frame("flow_drops")

    @_Table
    def transfers(self) -> pd.DataFrame:
        return self._frame("transfers")

    @_Table
    def classes(self) -> pd.DataFrame:
        return self._frame("classes")

    @_Table
    def series_queue(self) -> pd.DataFrame:
        return self._frame("series_queue")

    @_Table
    def series_flow(self) -> pd.DataFrame:
        return self._frame("series_flow")

    @_Table
    def series_meter(self) -> pd.DataFrame:
        return self._frame("series_meter")

    @_Table
    def series_gauges(self) -> pd.DataFrame:
        return self._frame("series_gauges")

    @_Table
    def conditioners(self) -> pd.DataFrame:
        return self._frame("conditioners")

    def _bottleneck_row(self) -> int:
        """The row of the links table that is the bottleneck link's busier direction (the first
        such row on a tie)."""
        name = self.scenario.outline["measurement"]["bottleneck"]
        link_names = [lk["name"] for lk in self.scenario.outline["links"]]
        rows = [r for r, i in enumerate(self.raw["links"]["link"]) if link_names[i] == name]
        dep = self.raw["links"]["departed_bytes"]
        return max(rows, key=lambda r: (int(dep[r]), -r))

    @property
    def bottleneck(self) -> pd.Series:
        """The bottleneck link's busier direction."""
        return self.links.iloc[self._bottleneck_row()]

    @property
    def fairness_index(self) -> float:
        """Jain's index of the declared flows' throughput (arrival processes' rows left out, when
        there are declared flows)."""
        thr = self.raw["flows"]["throughput_bps"].tolist()
        n = len(self.scenario.outline["flows"])
        return jain_index(thr[:n] if n else thr)

    def transfer_summary(self) -> dict[str, Any]:
        """Flow completion times and slowdowns of the finished transfers, by size bin and by class
        (summary.json's ``transfers``); empty when the scenario has no finite transfers."""
        if self.spill is None and len(self.raw["transfers"]["size_bytes"]) == 0:
            return {}  # (numpy is imported only where there are transfers)
        from qoslab.runs import transfers

        if self.spill is not None:
            return transfers.summarize_spill(self.spill, codepoint_name)
        return transfers.summarize(self.raw["transfers"], codepoint_name)

    def summary(self, *, flow_rows: Sequence[int] | None = None) -> dict[str, Any]:
        """summary.json's contents; with ``flow_rows``, its ``flows`` holds only the entries of
        those rows of the flows table, in that order (a printout of a few of 10,000 flows)."""
        return paused(lambda: self._summary(flow_rows))

    def _summary(self, flow_rows: Sequence[int] | None) -> dict[str, Any]:
        sc = self.scenario
        lk = self.raw["links"]
        fl = self.raw["flows"]
        b = self._bottleneck_row()
        link_names = [x["name"] for x in sc.outline["links"]]
        thr = fl["throughput_bps"].tolist()

        def total(cols: list[str]) -> int:
            return sum(sum(_summary_column(lk, c)) for c in cols)

        def at_b(col: str) -> int:
            return int(lk[col][b])

        def drops(prefix: str) -> dict[str, int]:
            return {
                "total": total([f"{prefix}{r}_drops" for r in ("early", "forced", "overflow", "policed")]),
                "bottleneck": int(
                    lk[f"{prefix}early_drops"][b]
                    + lk[f"{prefix}forced_drops"][b]
                    + lk[f"{prefix}overflow_drops"][b]
                ),
                "bottleneck_early": at_b(f"{prefix}early_drops"),
                "bottleneck_forced": at_b(f"{prefix}forced_drops"),
                "bottleneck_overflow": at_b(f"{prefix}overflow_drops"),
                "bottleneck_policed": at_b(f"{prefix}policed_drops"),
                "bottleneck_marks": at_b(f"{prefix}marks"),
            }

        return {
            "scenario": sc.name,
            "scenario_source": sc.source,
            "scenario_sha256": sc.sha256(),
            "seed": self.seed,
            "version": _core.__version__,
            "duration_s": sc.outline["duration_ns"] / 1e9,
            "measurement_window_s": [
                sc.outline["measurement"]["start_ns"] / 1e9,
                sc.outline["measurement"]["end_ns"] / 1e9,
            ],
            "sampling_interval_s": sc.outline["measurement"]["interval_ns"] / 1e9,
            "fairness_index": self.fairness_index,
            "throughput_std_bps": np_std(thr),
            "aggregate_throughput_bps": np_sum(thr),
            "bottleneck": link_names[int(lk["link"][b])],
            "utilization": float(lk["utilization"][b]),
            "utilization_by_link": dict(
                zip(
                    [
                        f"{link_names[i]}:{d}"
                        for i, d in zip(_summary_column(lk, "link", int), lk["direction"], strict=True)
                    ],
                    _summary_column(lk, "utilization", float),
                    strict=True,
                )
            ),
            "drops": drops(""),
            # The same counts inside the measurement window (drops by reason per link
            # direction and per drop precedence of each flow are in the tables' window_*
            # columns).
            "window_drops": drops("window_"),
            "flows": self._flow_rows(flow_rows),
            **self._traffic_summary(),
            "events": self.events,
            "packet_hops": self.packet_hops,
            "conservation_violations": self.violations,
            "wall_time_s": self.wall_time_s,
            **({"partial": True, "simulated_until_s": self.simulated_until_s} if self.partial else {}),
            **({"stopped": self.stopped} if self.stopped else {}),
        }

    def _traffic_summary(self) -> dict[str, Any]:
        """summary.json's keys for finite transfers, arrival processes and classes (only when the
        scenario has them, so other summaries are unchanged)."""
        out: dict[str, Any] = {}
        transfers = self.transfer_summary()
        if transfers:
            out["transfers"] = transfers
        arrivals = self.scenario.outline.get("arrivals", [])
        if arrivals:
            pc = self.raw["processes"]
            out["arrivals"] = {
                a["name"]: {k: int(pc[k][i]) for k in ("arrivals", "refused", "completed", "peak_active")}
                for i, a in enumerate(arrivals)
            }
        c = self.raw["classes"]
        out["classes"] = {
            codepoint_name(int(d)): {
                "flows": int(c["flows"][i]),
                **{k[len("delay_") :]: _num(c[k][i]) for k in c if k.startswith("delay_")},
            }
            for i, d in enumerate(c["dscp"])
        }
        return out

    def _flow_rows(self, rows: Sequence[int] | None = None) -> list[dict[str, Any]]:
        """summary.json's per-flow entries, of ``rows`` only if given (columns converted once,
        not element by element: 10,000 flows took 2 s; rows zipped from the columns, not looked
        up key by key)."""
        fl = self.raw["flows"]
        # every window_* column of the flows table, without the prefix
        window_cols = [c for c in fl if c.startswith("window_")]
        keys = ("id", "name", *SUMMARY_FLOW_KEYS, "window")
        window_keys = [c[7:] for c in window_cols]
        names = self._flow_names()
        ids = range(len(names)) if rows is None else list(rows)

        def column(c: str) -> list[Any]:
            values = _summary_column(fl, c)
            return values if rows is None else [values[i] for i in ids]

        heads = zip(
            ids,
            names if rows is None else [names[i] for i in ids],
            *map(column, SUMMARY_FLOW_KEYS),
            strict=True,
        )
        windows = zip(*map(column, window_cols), strict=True) if window_cols else [()] * len(ids)
        return [
            dict(zip(keys, (*head, dict(zip(window_keys, w, strict=True))), strict=True))
            for head, w in zip(heads, windows, strict=True)
        ]

    def write(self, out: str | Path, *, tables: bool = True) -> Path:
        """Writes summary.json, scenario.toml and (``tables``) the Parquet tables into directory
        ``out``. The tables are written from the core's columns by the core's Parquet writer
        (read back by pyarrow as the same table pyarrow would have written), without numpy,
        pandas or pyarrow; a file that cannot be written raises OSError naming it."""
        d = Path(out)
        d.mkdir(parents=True, exist_ok=True)
        if tables:
            meta = {"scenario": self.scenario.name, "seed": self.seed, "version": _core.__version__}
            file_meta = [(f"qoslab.{k}", str(v)) for k, v in meta.items()]
            for name in TABLES:
                if name == "transfers" and self.spill is not None:
                    self._write_spilled(d / f"{name}.parquet", file_meta)
                    continue
                cols = list(self._raw_columns(name).items())
                _core.write_parquet(str(d / f"{name}.parquet"), cols, file_meta)
        (d / "summary.json").write_text(paused(lambda: summary_json(self.summary())))
        (d / "scenario.toml").write_text(self.scenario.text)
        return d

    def _transfer_flow_names(self, process: Iterable[int], ids: Iterable[int]) -> list[str]:
        """The transfers table's flow_name column: the arrival process's name, or the declared
        flow's."""
        res = self.scenario.outline
        procs = [a["name"] for a in res.get("arrivals", [])]
        declared = [f["name"] for f in res["flows"]]
        return [
            declared[int(i)] if int(p) == _DECLARED else procs[int(p)]
            for p, i in zip(process, ids, strict=True)
        ]

    def _write_spilled(self, path: Path, meta: list[tuple[str, str]]) -> None:
        """transfers.parquet from the spill file, a chunk at a time."""
        from qoslab.runs import transfers

        assert self.spill is not None
        transfers.write_spill_parquet(self.spill, path, self._transfer_flow_names, meta)


def _summary_column(cols: dict[str, Any], name: str, kind: type | None = None) -> list[Any]:
    """Column ``name`` as summary.json's values: ``kind`` (by default a bit rate, ``*_bps``, as
    floats and a count as integers; an ``array.array`` of type "d" or "Q" is that already: its
    ``tolist()``)."""
    col = cols[name]
    if kind is None:
        kind = float if name.endswith("_bps") else int
    values: list[Any] = col.tolist()
    if getattr(col, "typecode", None) == ("d" if kind is float else "Q"):
        return values
    return [kind(x) for x in values]


def summary_json(summary: dict[str, Any]) -> str:
    """summary.json's text: one top-level key per line and one flow per line, each value
    compact. (``json.dumps(indent=...)`` runs Python's pure-Python encoder: 1.2 s for 10,000
    flows; this uses the C encoder for every value, one encoder for all: what
    ``json.dumps(v, allow_nan=True, separators=(", ", ": "))`` builds on every call.)"""
    dump = json.JSONEncoder(allow_nan=True, separators=(", ", ": ")).encode

    lines = []
    for k, v in summary.items():
        if k == "flows" and v:
            body = ",\n".join(f"    {dump(f)}" for f in v)
            lines.append(f"  {dump(k)}: [\n{body}\n  ]")
        else:
            lines.append(f"  {dump(k)}: {dump(v)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


#: The largest seed: the core takes 64 bits, the result store (SQLite) 63.
MAX_SEED = 2**63 - 1


def seed_error(what: str, seed: int) -> str:
    """The one line refusing ``seed`` given as ``what``."""
    shown = str(seed) if len(str(seed)) <= 30 else f"a number of {len(str(seed))} digits"
    return f"{what}: a seed is 0 to 2^63 - 1 ({MAX_SEED}), got {shown}"


def run(
    scenario: Scenario | str | Path,
    seed: int | None = None,
    *,
    captures: list[tuple[str, str, str]] | None = None,
    progress: Callable[[float], None] | None = None,
    out: str | Path | None = None,
    tables: bool = True,
    budget: Budget | None = None,
    force: bool = False,
) -> Result:
    """Runs ``scenario`` (a :class:`Scenario` or a file path) with ``seed`` (default: the
    scenario's own). ``captures`` lists (link name, "ab"/"ba", pcap path) to record;
    ``progress(fraction)`` is called as simulated time advances. The GIL is released while
    the core simulates. With ``out``, the outputs are written there (summary.json and
    scenario.toml, and the Parquet tables unless ``tables`` is false).

    ``budget`` (default: :meth:`Budget.from_env`) bounds memory and capture bytes, estimated
    before running (a run above is refused with a ScenarioError), and wall-clock time, measured
    from the run's pace: a run that would take longer stops early and raises
    :class:`RunOverBudget` carrying what it measured so far (written to ``out``, partial).

    ``out`` must be empty, absent, or an earlier run's (replaced only with ``force``); without
    it a scenario that captures writes into a fresh folder under ``qoslab-runs/``
    (:mod:`qoslab.runs.rundir`), named by ``Result.out``."""
    sc = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
    if seed is not None and (isinstance(seed, bool) or not hasattr(seed, "__index__")):  # 1.5, "3", True
        raise ValueError(f"seed: a whole number, got {seed!r:.40}")
    seed = sc.default_seed if seed is None else seed.__index__()
    if not 0 <= seed <= MAX_SEED:
        raise ValueError(seed_error("seed", seed))
    budget = Budget.of_argument(budget)  # before anything is claimed
    rundir.check_captures(captures)
    fresh = out is None and bool(sc.outline.get("captures"))
    out = rundir.claim(out, sc.name, seed, force=force) if out is not None else None
    out = rundir.fresh(sc.name, seed) if fresh else out
    try:
        cap = rundir.capture_paths(sc, out)
        cap += [(sc.link_direction_index(link, d), str(path)) for link, d, path in captures or []]
        check_budget(sc.source, sc.outline, [d for d, _ in cap], budget, Path(out or "."), sc.core)
    except BaseException:
        if out is not None:
            rundir.abandon(out, remove=fresh)  # refused before it ran: nothing of it is kept
        raise
    # The captures' bytes are also counted as they are written: they stop at the limit.
    cap_limit, cap_what = budget.capture_limit(Path(out or ".")) if cap else (0.0, "")
    pace = Pace(budget.time_limit(), progress)
    hashing = _hash_beside(sc)
    signalled: list[int] = []  # SIGINT/SIGTERM while the outputs were written
    writing = False  # an OSError before the outputs are written is the core's (a capture's path)
    res: Result | None = None
    try:
        t0 = time.perf_counter()
        spill_to = spilled = None  # finished transfers past SPILL_AFTER go to a file (transfers.py)
        if sc.outline.get("arrivals"):
            from qoslab.runs import transfers

            spill_to, spilled = transfers.spill_dir()
        try:
            raw = _core.simulate_resolved(
                sc.core,
                seed,
                cap,
                pace,
                capture_limit=int(min(cap_limit, 2**63)),
                spill=spilled,
                spill_after=_budget.SPILL_AFTER,
            )
        except BaseException:
            if spill_to is not None:
                shutil.rmtree(spill_to, ignore_errors=True)
            raise
        wall = time.perf_counter() - t0

        # The outputs are written whole: a signal meanwhile is acted on once they are (below).
        with signals_deferred() as signalled:
            res = Result(sc, seed, raw, wall)
            res.spill = None if spill_to is None else transfers.adopt(raw, spill_to)
            res.out = None if out is None else rundir.target(out)
            res.stopped = pace.verdict if res.partial else None
            res.capture_stopped = capture_note(raw.get("capture_stopped_ns"), cap_limit, cap_what)
            if out is not None:
                writing = True
                res.write(out, tables=tables)  # its summary waits for the hash (Scenario.sha256)
                # a staged folder takes --out's place whole (a partial one goes beside an earlier
                # run instead); the lock goes
                out = rundir.publish(out, complete=not res.partial)
                res.out = out
    except BaseException as e:
        if out is not None:
            shown = rundir.target(out)
            rundir.release(out)  # a staged folder goes (--out keeps the earlier run); in place: emptied
            if writing and isinstance(e, OSError) and not isinstance(e, rundir.OutputFolderError):
                why = e.strerror or e
                msg = f"--out {shown}: cannot write the run's outputs ({why}); none of them is kept"
                raise rundir.OutputFolderError.unwritten(msg, res) from None  # what it measured
        raise
    finally:
        if hashing is not None:
            hashing.join()
    if res.stopped:
        raise RunOverBudget(res, out)
    if res.partial or signalled:
        raise RunInterrupted(res, out)
    return res


#: Flows plus links from which a run hashes its scenario on a second thread (below, the hash
#: takes a few milliseconds at most and a thread is not worth starting).
HASH_BESIDE_FROM = 1_000


def _hash_beside(sc: Scenario) -> threading.Thread | None:
    """A started thread computing ``sc.sha256()`` (summary.json's scenario_sha256) while the
    core simulates and the tables are written, for a large scenario not hashed yet; else None.
    ``sc.sha256()`` waits for it. The core writes the canonical TOML with the GIL released and
    hashlib hashes it so (at 10,000 flows 0.1-0.2 s, 0.7-1.3 s before crates/qoslab-py's
    canon). A failure in the thread leaves the hash to be computed (and its error raised) where
    the summary asks for it."""
    r = sc.outline
    if sc._sha256 is not None or len(r["flows"]) + len(r["links"]) < HASH_BESIDE_FROM:
        return None
    import threading

    def work() -> None:
        try:
            sc._sha256 = sc._compute_sha256()
        except Exception:  # noqa: BLE001 - raised again where the summary asks for the hash
            pass

    t = threading.Thread(target=work, name="qoslab-scenario-hash", daemon=True)
    sc._hashing = t
    t.start()
    return t


class RunOverBudget(BudgetError):
    """A run stopped because its pace said it would exceed its time budget: ``result`` holds
    what was measured up to ``result.simulated_until_s``, already written to ``out`` (if
    given), marked partial."""

    def __init__(self, result: Result, out: str | Path | None) -> None:
        super().__init__(
            f"{result.scenario.source}: stopped at t = {result.simulated_until_s:g} s of "
            f"{result.scenario.outline['duration_ns'] / 1e9:g} s: {result.stopped}"
        )
        self.result = result
        self.out = out


class RunInterrupted(KeyboardInterrupt):
    """A run stopped by Ctrl-C (or SIGTERM in the CLI): ``result`` holds what was measured up to
    ``result.simulated_until_s``, already written to ``out`` (if given), marked partial; or, when
    the signal came while the outputs were written, the whole run (``result.partial`` false),
    its outputs complete."""

    def __init__(self, result: Result, out: str | Path | None) -> None:
        super().__init__(f"interrupted at t = {result.simulated_until_s:g} s")
        self.result = result
        self.out = out


def finite(x: float) -> float | None:
    return x if math.isfinite(x) else None
