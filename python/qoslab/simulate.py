"""Running a scenario and shaping its results into pandas tables and output files."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from qoslab import _core
from qoslab.scenario import Scenario, load_scenario

#: summary.json keys whose values depend on the machine, not on the simulation.
WALL_TIME_KEYS = ("wall_time_s",)


def jain_index(x: np.ndarray | list[float]) -> float:
    """Jain's fairness index (Σx)² / (n·Σx²): 1 when all values are equal, 1/n at worst."""
    a = np.asarray(x, dtype=float)
    s2 = float((a * a).sum())
    return 1.0 if s2 == 0 else float(a.sum() ** 2 / (len(a) * s2))


@dataclass
class Result:
    """What one run produced. Tables are pandas DataFrames; ``summary`` is summary.json."""

    scenario: Scenario
    seed: int
    flows: pd.DataFrame
    links: pd.DataFrame
    flow_drops: pd.DataFrame
    series_queue: pd.DataFrame
    series_flow: pd.DataFrame
    series_meter: pd.DataFrame
    #: Marker state variables over time (long format: time_s, conditioner_name, flow_name, name,
    #: value), e.g. ARD's token level, TPR and measured aggregate IN/OUT rates.
    series_gauges: pd.DataFrame
    conditioners: pd.DataFrame
    events: int
    packet_hops: int
    wall_time_s: float
    violations: list[str] = field(default_factory=list)
    #: Interrupted (Ctrl-C/SIGTERM): simulated only up to ``simulated_until_s``; summary.json
    #: says so (``partial``), and nothing stores it as a complete run.
    partial: bool = False
    simulated_until_s: float | None = None

    @property
    def bottleneck(self) -> pd.Series:
        """The bottleneck link's busier direction."""
        name = self.scenario.resolved["measurement"]["bottleneck"]
        rows = self.links[self.links["link_name"] == name]
        return rows.loc[rows["departed_bytes"].idxmax()]

    @property
    def fairness_index(self) -> float:
        return jain_index(self.flows["throughput_bps"].to_numpy())

    def summary(self) -> dict[str, Any]:
        sc = self.scenario
        b = self.bottleneck
        thr = self.flows["throughput_bps"].to_numpy()
        window_cols = [c for c in self.flows.columns if c.startswith("window_")]
        return {
            "scenario": sc.name,
            "scenario_source": sc.source,
            "scenario_sha256": sc.sha256(),
            "seed": self.seed,
            "version": _core.__version__,
            "duration_s": sc.resolved["duration_ns"] / 1e9,
            "measurement_window_s": [
                sc.resolved["measurement"]["start_ns"] / 1e9,
                sc.resolved["measurement"]["end_ns"] / 1e9,
            ],
            "fairness_index": self.fairness_index,
            "throughput_std_bps": float(np.std(thr)),
            "aggregate_throughput_bps": float(thr.sum()),
            "bottleneck": str(b["link_name"]),
            "utilization": float(b["utilization"]),
            "utilization_by_link": {
                f"{r.link_name}:{r.direction}": float(r.utilization) for r in self.links.itertuples()
            },
            "drops": {
                "total": int(
                    self.links[["early_drops", "forced_drops", "overflow_drops", "policed_drops"]]
                    .to_numpy()
                    .sum()
                ),
                "bottleneck": int(b["early_drops"] + b["forced_drops"] + b["overflow_drops"]),
                "bottleneck_early": int(b["early_drops"]),
                "bottleneck_forced": int(b["forced_drops"]),
                "bottleneck_overflow": int(b["overflow_drops"]),
                "bottleneck_policed": int(b["policed_drops"]),
                "bottleneck_marks": int(b["marks"]),
            },
            # The same counts inside the measurement window (drops by reason per link
            # direction and per drop precedence of each flow are in the tables' window_*
            # columns).
            "window_drops": {
                "total": int(
                    self.links[[f"window_{r}_drops" for r in ("early", "forced", "overflow", "policed")]]
                    .to_numpy()
                    .sum()
                ),
                "bottleneck": int(
                    b["window_early_drops"] + b["window_forced_drops"] + b["window_overflow_drops"]
                ),
                "bottleneck_early": int(b["window_early_drops"]),
                "bottleneck_forced": int(b["window_forced_drops"]),
                "bottleneck_overflow": int(b["window_overflow_drops"]),
                "bottleneck_policed": int(b["window_policed_drops"]),
                "bottleneck_marks": int(b["window_marks"]),
            },
            "flows": [
                {
                    "id": int(i),
                    "name": r.name,
                    "throughput_bps": float(r.throughput_bps),
                    "goodput_bps": float(r.goodput_bps),
                    "delivered_bytes": int(r.delivered_bytes),
                    "sent_packets": int(r.sent_packets),
                    "retransmitted_packets": int(r.retransmitted_packets),
                    "dropped_packets": int(r.dropped_packets),
                    "timeouts": int(r.timeouts),
                    "ecn_marks": int(r.ecn_marks),
                    "ecn_responses": int(r.ecn_responses),
                    # every window_* column of the flows table, without the prefix
                    "window": {c[7:]: int(getattr(r, c)) for c in window_cols},
                }
                for i, r in enumerate(self.flows.itertuples())
            ],
            "events": self.events,
            "packet_hops": self.packet_hops,
            "conservation_violations": self.violations,
            "wall_time_s": self.wall_time_s,
            **({"partial": True, "simulated_until_s": self.simulated_until_s} if self.partial else {}),
        }

    def write(self, out: str | Path) -> Path:
        """Writes summary.json and the Parquet tables into directory ``out``."""
        d = Path(out)
        d.mkdir(parents=True, exist_ok=True)
        meta = {"scenario": self.scenario.name, "seed": self.seed, "version": _core.__version__}
        for name in (
            "flows",
            "links",
            "flow_drops",
            "series_queue",
            "series_flow",
            "series_meter",
            "series_gauges",
            "conditioners",
        ):
            df: pd.DataFrame = getattr(self, name).copy()
            df.attrs = {}
            table_meta = {f"qoslab.{k}": str(v) for k, v in meta.items()}
            import pyarrow as pa
            import pyarrow.parquet as pq

            t = pa.Table.from_pandas(df, preserve_index=False)
            t = t.replace_schema_metadata(
                {**(t.schema.metadata or {}), **{k.encode(): v.encode() for k, v in table_meta.items()}}
            )
            pq.write_table(t, d / f"{name}.parquet")
        (d / "summary.json").write_text(json.dumps(self.summary(), indent=2, allow_nan=True) + "\n")
        (d / "scenario.toml").write_text(self.scenario.text)
        return d


def _frame(cols: dict[str, Any]) -> pd.DataFrame:
    return pd.DataFrame({k: np.asarray(v) for k, v in cols.items()})


def run(
    scenario: Scenario | str | Path,
    seed: int | None = None,
    *,
    captures: list[tuple[str, str, str]] | None = None,
    progress: Callable[[float], None] | None = None,
    out: str | Path | None = None,
) -> Result:
    """Runs ``scenario`` (a :class:`Scenario` or a file path) with ``seed`` (default: the
    scenario's own). ``captures`` lists (link name, "ab"/"ba", pcap path) to record;
    ``progress(fraction)`` is called as simulated time advances. The GIL is released while
    the core simulates."""
    sc = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
    seed = sc.default_seed if seed is None else int(seed)
    if seed < 0:
        raise ValueError(f"seed must be >= 0, got {seed}")
    cap: list[tuple[int, str]] = []
    if out is not None:
        Path(out).mkdir(parents=True, exist_ok=True)
    for c in sc.resolved.get("captures", []):
        dirs = ["ab", "ba"] if c["direction"] == "both" else [c["direction"]]
        for d in dirs:
            fname = c["file"] if len(dirs) == 1 else c["file"].replace(".pcap", f".{d}.pcap")
            path = _inside(Path(out or "."), fname, sc)
            cap.append((sc.link_direction_index(c["link"], d), str(path)))
    for link, d, path in captures or []:
        cap.append((sc.link_direction_index(link, d), str(path)))
    t0 = time.perf_counter()
    raw = _core.simulate_resolved(sc.core, seed, cap, progress)
    wall = time.perf_counter() - t0

    names = [f["name"] for f in sc.resolved["flows"]]
    flows = _frame(raw["flows"])
    flows.insert(0, "name", names)
    flows.insert(1, "src", [f["src"] for f in sc.resolved["flows"]])
    flows.insert(2, "dst", [f["dst"] for f in sc.resolved["flows"]])
    flows.insert(3, "kind", [f["kind"] for f in sc.resolved["flows"]])
    link_names = [lk["name"] for lk in sc.resolved["links"]]
    links = _frame(raw["links"])
    links.insert(0, "link_name", [link_names[i] for i in links["link"]])
    links["direction"] = links["direction"].astype(str)
    dir_names = [f"{n}:{d}" for n in link_names for d in ("ab", "ba")]
    flow_drops = _frame(raw["flow_drops"])
    flow_drops["flow_name"] = [names[i] for i in flow_drops["flow"]]
    flow_drops["where"] = [dir_names[i] for i in flow_drops["direction_index"]]
    sq = _frame(raw["series_queue"])
    sq.insert(1, "queue", [dir_names[i] for i in sq["direction_index"]])
    sq.insert(0, "time_s", sq["time_ns"] / 1e9)
    cond_names = [c["name"] for c in sc.resolved.get("conditioners", [])]
    conds = _frame(raw["conditioners"])
    conds.insert(0, "name", cond_names)
    conds.insert(1, "link", [c["link"] for c in sc.resolved.get("conditioners", [])])
    conds.insert(2, "meter", [c["meter"]["type"] for c in sc.resolved.get("conditioners", [])])
    sm = _frame(raw["series_meter"])
    sm.insert(0, "time_s", sm["time_ns"] / 1e9)
    sm["conditioner_name"] = [cond_names[i] for i in sm["conditioner"]]
    sm["flow_name"] = [names[i] if i < len(names) else "(aggregate)" for i in sm["flow"]]
    sg = _frame(raw["series_gauges"])
    gauge_names = list(raw["gauge_names"])
    sg.insert(0, "time_s", sg["time_ns"] / 1e9)
    sg["conditioner_name"] = [cond_names[i] for i in sg["conditioner"]]
    sg["flow_name"] = [names[i] if i < len(names) else "(aggregate)" for i in sg["flow"]]
    sg["name"] = [gauge_names[i] for i in sg["gauge"]]
    sg = sg.drop(columns=["gauge"])
    sf = _frame(raw["series_flow"])
    sf.insert(0, "time_s", sf["time_ns"] / 1e9)
    sf.insert(2, "flow_name", [names[i] for i in sf["flow"]])
    res = Result(
        scenario=sc,
        seed=seed,
        flows=flows,
        links=links,
        flow_drops=flow_drops,
        series_queue=sq,
        series_flow=sf,
        series_meter=sm,
        series_gauges=sg,
        conditioners=conds,
        events=int(raw["events"]),
        packet_hops=int(raw["packet_hops"]),
        wall_time_s=wall,
        violations=list(raw["violations"]),
        partial=bool(raw.get("interrupted", False)),
        simulated_until_s=int(raw.get("simulated_until_ns", 0)) / 1e9,
    )
    if out is not None:
        res.write(out)
    if res.partial:
        raise RunInterrupted(res, out)
    return res


class RunInterrupted(KeyboardInterrupt):
    """A run stopped by Ctrl-C (or SIGTERM in the CLI): ``result`` holds what was measured up to
    ``result.simulated_until_s``, already written to ``out`` (if given), marked partial."""

    def __init__(self, result: Result, out: str | Path | None) -> None:
        super().__init__(f"interrupted at t = {result.simulated_until_s:g} s")
        self.result = result
        self.out = out


def _inside(out: Path, name: str, sc: Scenario) -> Path:
    """``out / name``, refused if it resolves outside ``out`` (through a symbolic link; the core
    already refuses absolute paths and ``..``)."""
    path = out / name
    base = out.resolve()
    if not path.resolve().is_relative_to(base):
        msg = (
            f"the capture file {name!r} resolves outside the output directory {str(out)!r} (a symbolic link)"
        )
        raise _core.ScenarioError(f"{sc.source}: {msg}", sc.source, None, "capture.file", msg)
    return path


def finite(x: float) -> float | None:
    return x if math.isfinite(x) else None
