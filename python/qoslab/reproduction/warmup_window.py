"""Where each run's warm-up ends, found from its own series by MSER-5 (:mod:`qoslab.warmup`):
reported for every experiment, and used as the start of measurement (``--warmup mser5``) only
where the measurement window is ours to choose.

**Reported, every reproduction.** For every successful run, MSER-5 is applied to two of its
stored series, each over the whole run: the queue length of the scenario's measurement
bottleneck (its busier direction, ``series_queue``'s ``queue_packets``) and the aggregate
throughput (``series_flow``'s ``throughput_bps`` summed over the flows at each sample). The run's
warm-up ends at the later of the two; where MSER-5 finds no steady state in a series (its
minimum at the end of the searched first half) the run has none by the rule. ``warmup.csv``
lists every run; ``report.md`` gets a section, and ``verdicts.json`` a ``warmup`` summary: the
median and largest warm-up against the window start the runs used, and the runs whose warm-up
ends after their measurement starts (a finding: part of the transient is measured).

**Applied, ``--warmup mser5``.** Only for an experiment that declares its window ours
(:class:`~qoslab.reproduction.base.Window`); one whose paper fixes the window refuses. A pilot
run per point (the point's first seed, its scenario as declared: the same run the default
reproduction makes, so a store that holds it computes nothing) gives the warm-up; that point's
runs are then measured from it, rounded up to the sampling interval, over a window as long as
the declared one, and the simulated duration ends with that window (shorter when the warm-up
ends before the declared start). A point whose pilot has no steady state by the rule keeps its
declared window, and says so.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import pandas as pd

from qoslab.report.csvsafe import write_csv
from qoslab.report.frames import typed_rows
from qoslab.report.results import RunRow, load
from qoslab.reproduction.base import Experiment, Options, Sweep
from qoslab.runs.sweep import RunSpec, plan, run_sweep
from qoslab.store import Store

if TYPE_CHECKING:
    from qoslab.runs.executors import Executor
    from qoslab.scenario import Scenario

#: fewer samples than this (20 batches) are reported as too few for the rule to find a steady state
SHORT = 100
#: the ``--warmup`` rules there are
RULES = ("mser5",)
RULE_TEXT = (
    "MSER-5 (White 1997; White, Cobb and Spratt 2000) over the run's whole series, the later of "
    "the bottleneck queue length's and the aggregate throughput's truncation points"
)


def check(exp: Experiment, rule: str | None) -> None:
    """Refuses ``--warmup RULE`` for an unknown rule, or for an experiment whose window the paper
    fixes or that does not say who fixes it (one line, the paper's words cited)."""
    if rule is None:
        return
    if rule not in RULES:
        raise ValueError(f"unknown --warmup {rule!r}: expected {', '.join(RULES)}")
    w = exp.window
    if w is None:
        raise ValueError(
            f"experiment {exp.name} does not declare who fixes its measurement window: --warmup is refused"
        )
    if w.fixed_by_paper:
        raise ValueError(
            f"experiment {exp.name}: the paper fixes its measurement window ({w.cited}): "
            f"--warmup {rule} is refused"
        )


# -- one run -------------------------------------------------------------------------------------


#: :func:`window_of` of each scenario this process has read, by its hash (of the canonical
#: resolved form): each look of a sequential reproduction reads the window of its new runs'
#: scenarios, and the window is in the scenario's whole resolved table.
_WINDOWS: dict[str, tuple[float, float, float, float]] = {}


def window_of(sc: Scenario) -> tuple[float, float, float, float]:
    """(start, end, duration, sampling interval) of ``sc``'s measurement, in seconds."""
    h = sc.sha256()
    if h not in _WINDOWS:
        r = sc.resolved
        m = r["measurement"]
        _WINDOWS[h] = (m["start_ns"] / 1e9, m["end_ns"] / 1e9, r["duration_ns"] / 1e9, m["interval_ns"] / 1e9)
    return _WINDOWS[h]


class Context(Protocol):
    """What the warm-up report reads of the runner's Context (structurally: naming the runner
    here would make an import loop, runner -> warmup_window -> runner)."""

    store: Store
    specs: Sequence[RunSpec]
    sweeps: dict[str, Sweep]
    out: Path
    files: list[Path]
    experiment: Experiment
    options: Options

    def sweep_name(self, sweep: str) -> str: ...

    def text(self, title: str, markdown: str) -> None: ...


#: Rows already computed in this process, by (store, run id): the looks of a sequential
#: reproduction re-read every earlier look's runs.
_SEEN: dict[tuple[str, int], dict[str, Any]] = {}


def stored_warmups(store: Store, specs: Sequence[RunSpec]) -> pd.DataFrame:
    """One row per successful stored run of ``specs``: its key, window and warm-ups."""
    scen = {s.key.scenario_sha256: s.scenario for s in specs}
    keys = list(dict.fromkeys(s.key for s in specs))
    runs = load(store, "runs", keys=keys, expand_params=False)
    if runs.empty:
        return pd.DataFrame()
    runs = runs[runs["status"] == "ok"]
    typed = list(typed_rows(runs, RunRow, index=False))
    root = str(store.root)
    # each run's worker computed its warm-up from its series in memory (qoslab.warmup.stored_form)
    worked = _worker_warmups(store, [r.run_id for r in typed if (root, r.run_id) not in _SEEN])
    rows = []
    for r in typed:
        done = _SEEN.get((root, r.run_id))
        if done is not None:  # a stored run never changes: a later look reuses its row
            rows.append(done)
            continue
        start, end, _, _ = window_of(scen[r.scenario_sha256])
        w = worked[r.run_id]
        times = {k: float("nan") if v is None else float(v) for k, v in w.items() if k.startswith("warmup")}
        rows.append(
            {
                "run_id": r.run_id,
                "scenario_sha256": r.scenario_sha256,
                "seed": r.seed,
                "window_start_s": start,
                "window_end_s": end,
                "samples": int(w["samples"]),
                **times,
                "ends_after_start": bool(times["warmup_s"] > start),
            }
        )
        _SEEN[(root, r.run_id)] = rows[-1]
    return pd.DataFrame(rows)


def _worker_warmups(store: Store, ids: Sequence[int]) -> dict[int, dict[str, Any]]:
    """run_id → the warm-up its worker stored in its summary (every run of this version has
    one: its key's version is the core fingerprint, which covers :mod:`qoslab.runs.tasks`)."""
    if not ids:
        return {}
    df = store.query(f"SELECT id, summary FROM runs WHERE id IN ({', '.join(map(str, ids))})")
    return {int(rid): json.loads(text)["warmup"] for rid, text in zip(df["id"], df["summary"], strict=True)}


# -- the report --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Summary:
    """The warm-ups of a set of runs: how many, the median and largest (over the runs where
    MSER-5 found one), the window starts they used, how many ended after their start and how
    many had no steady state by the rule."""

    runs: int
    median_s: float
    max_s: float
    start_min_s: float
    start_max_s: float
    after_start: int
    no_steady_state: int

    @staticmethod
    def of(df: pd.DataFrame) -> Summary:
        found = df["warmup_s"].dropna()
        return Summary(
            runs=len(df),
            median_s=float(found.median()) if len(found) else float("nan"),
            max_s=float(found.max()) if len(found) else float("nan"),
            start_min_s=float(df["window_start_s"].min()),
            start_max_s=float(df["window_start_s"].max()),
            after_start=int(df["ends_after_start"].sum()),
            no_steady_state=int(df["warmup_s"].isna().sum()),
        )

    def as_json(self) -> dict[str, Any]:
        return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in vars(self).items()}


def report(ctx: Context) -> dict[str, Any] | None:
    """Writes ``warmup.csv`` and the report's warm-up section for ``ctx``'s runs; returns the
    summary recorded in ``verdicts.json`` (None when no run succeeded)."""
    per_run = stored_warmups(ctx.store, ctx.specs)
    if per_run.empty:
        return None
    rows = []
    for name, sw in ctx.sweeps.items():
        full = ctx.sweep_name(name)
        keys = {(s.key.scenario_sha256, s.key.seed): s for s in ctx.specs if s.sweep == full}
        mine = per_run[
            [(h, sd) in keys for h, sd in zip(per_run["scenario_sha256"], per_run["seed"], strict=True)]
        ]
        for r in mine.to_dict("records"):
            spec = keys[(r["scenario_sha256"], r["seed"])]
            rows.append(
                {
                    "sweep": name,
                    "params": json.dumps({k: spec.params.get(k) for k in sw.params}, default=str),
                    "scenario": spec.scenario.name,
                    **r,
                }
            )
    df = pd.DataFrame(rows)
    write_csv(df, ctx.out / "warmup.csv")
    ctx.files.append(ctx.out / "warmup.csv")
    total = Summary.of(df.drop_duplicates("run_id"))
    w = ctx.experiment.window
    who = "undeclared" if w is None else ("fixed by the paper" if w.fixed_by_paper else "ours to choose")
    lines = [
        f"Each run's warm-up by {RULE_TEXT} (`warmup.csv`: every run). Measurement window: "
        f"**{who}**"
        + (f" ({w.cited})." if w is not None else ".")
        + (
            " The runs were measured from the warm-up a pilot run found (`--warmup mser5`)."
            if ctx.options.warmup
            else ""
        ),
        "",
        "| sweep | runs | warm-up median (s) | warm-up max (s) | window start (s) "
        "| warm-up ends after the start | no steady state |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in ctx.sweeps:
        part = df[df["sweep"] == name]
        if len(part):
            lines.append(_row(name, Summary.of(part)))
    lines.append(_row("**all runs**", total))
    once = df.drop_duplicates("run_id")
    if total.after_start:
        whole = int((once["ends_after_start"] & (once["window_start_s"] == 0)).sum())
        lines += [
            "",
            f"**Finding:** in {total.after_start} of {total.runs} runs the warm-up MSER-5 finds ends "
            "after the measurement window begins: part of their transient is measured"
            + (f" ({whole} of them measured from 0 s, the start-up included by design)." if whole else "."),
        ]
    if total.no_steady_state:
        short = int((once["warmup_s"].isna() & (once["samples"] < SHORT)).sum())
        lines += [
            "",
            f"In {total.no_steady_state} of {total.runs} runs MSER-5 finds no steady state in one of "
            "the two series (its minimum lies at the end of the searched first half): the run is "
            "too short for the rule"
            + (f" ({short} of them have fewer than {SHORT} samples of the bottleneck queue)" if short else "")
            + ", or still drifting.",
        ]
    ctx.text("Warm-up (MSER-5)", "\n".join(lines))
    return {
        "rule": RULE_TEXT,
        "applied": ctx.options.warmup or "no (reported only)",
        "window": who,
        **({"cited": w.cited} if w is not None else {}),
        **total.as_json(),
    }


def _row(name: str, s: Summary) -> str:
    def f(x: float) -> str:
        return "–" if math.isnan(x) else f"{x:.3g}"

    start = f(s.start_min_s) if s.start_min_s == s.start_max_s else f"{f(s.start_min_s)}–{f(s.start_max_s)}"
    return (
        f"| {name} | {s.runs} | {f(s.median_s)} | {f(s.max_s)} | {start} | {s.after_start} "
        f"| {s.no_steady_state} |"
    )


# -- --warmup mser5 ------------------------------------------------------------------------------------


def rewindowed(sc: Scenario, warmup_s: float) -> Scenario:
    """``sc`` measured from ``warmup_s`` (rounded up to its sampling interval, whole ms) over a
    window as long as its own, its duration ending as far after the window as it did."""
    start, end, duration, dt = window_of(sc)
    step = max(1, round(dt * 1000))
    s_ms = math.ceil(round(warmup_s * 1000, 6) / step) * step
    e_ms = s_ms + round((end - start) * 1000)
    d_ms = e_ms + round((duration - end) * 1000)
    return sc.with_overrides(
        [f"measurement.start={s_ms}ms", f"measurement.end={e_ms}ms", f"duration={d_ms}ms"],
        via="--warmup mser5",
    )


def pilot_windows(
    exp: Experiment,
    sweeps: Sequence[Sweep],
    specs: Sequence[RunSpec],
    store: Store,
    executor: Executor | None,
    progress: bool,
) -> tuple[list[Sweep], list[RunSpec], pd.DataFrame]:
    """The sweeps and runs of ``--warmup mser5`` (see the module's text) and one row per point:
    its pilot's warm-ups and the window it is measured over now."""
    pilots = [s for s in specs if s.seed == min(int(x) for x in _sweep_of(sweeps, exp, s).seeds)]
    run_sweep(pilots, store, executor, progress=progress, label=f"{exp.name} warm-up pilots")
    found = stored_warmups(store, pilots)
    by_sha = {str(r["scenario_sha256"]): r for r in found.to_dict("records")} if len(found) else {}
    new_sweeps: list[Sweep] = []
    rows: list[dict[str, Any]] = []
    for sw in sweeps:
        points = []
        for params, sc in sw.points:
            r = by_sha.get(sc.sha256())
            w = float("nan") if r is None else float(r["warmup_s"])
            new = sc if math.isnan(w) else rewindowed(sc, w)
            s0, e0, d0, _ = window_of(sc)
            s1, e1, d1, _ = window_of(new)
            rows.append(
                {
                    "sweep": sw.name,
                    "params": json.dumps(params, default=str),
                    "pilot_seed": min(sw.seeds),
                    "pilot_warmup_s": w,
                    "declared_start_s": s0,
                    "declared_end_s": e0,
                    "declared_duration_s": d0,
                    "start_s": s1,
                    "end_s": e1,
                    "duration_s": d1,
                }
            )
            points.append((params, new))
        new_sweeps.append(
            replace(
                sw,
                points=points,
                description=sw.description
                + " Measured from the warm-up MSER-5 found in the point's pilot run (`--warmup mser5`; "
                "`warmup-windows.csv`).",
            )
        )
    new_specs: list[RunSpec] = []
    for sw in new_sweeps:
        new_specs += plan(sw.points, sw.seeds, f"{exp.name}/{sw.name}", sw.metrics)
    return new_sweeps, new_specs, pd.DataFrame(rows)


def _sweep_of(sweeps: Sequence[Sweep], exp: Experiment, spec: RunSpec) -> Sweep:
    return next(sw for sw in sweeps if f"{exp.name}/{sw.name}" == spec.sweep)


def window_section(ctx: Context, windows: pd.DataFrame) -> None:
    """Writes ``warmup-windows.csv`` (one row per point: its pilot's warm-up, the declared and
    the applied window) and the report's section on it, with the simulated time saved."""
    write_csv(windows, ctx.out / "warmup-windows.csv")
    ctx.files.append(ctx.out / "warmup-windows.csv")
    seeds = {name: len(sw.seeds) for name, sw in ctx.sweeps.items()}
    n = windows["sweep"].map(seeds)
    declared = float((windows["declared_duration_s"] * n).sum())
    used = float((windows["duration_s"] * n).sum())
    kept = int(windows["pilot_warmup_s"].isna().sum())
    lines = [
        f"Each point measured from the warm-up its pilot run (its first seed, the declared window) "
        f"showed by {RULE_TEXT}, rounded up to the sampling interval, over a window as long as the "
        "declared one (`warmup-windows.csv`: every point).",
        "",
        "| sweep | points | pilot warm-up, median (s) | max (s) | declared start (s) "
        "| start now, median (s) | simulated s per seed, declared | now |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, g in windows.groupby("sweep", sort=False):
        lines.append(
            f"| {name} | {len(g)} | {g['pilot_warmup_s'].median():.3g} | {g['pilot_warmup_s'].max():.3g} | "
            f"{g['declared_start_s'].median():.3g} | {g['start_s'].median():.3g} | "
            f"{g['declared_duration_s'].sum():.4g} | {g['duration_s'].sum():.4g} |"
        )
    lines += [
        "",
        f"Simulated time over every run of this reproduction: {used:.6g} s against {declared:.6g} s "
        f"with the declared windows ({100 * (used - declared) / declared:+.1f} %), besides the "
        f"{len(windows)} pilot runs (declared windows; reused where the store holds them).",
    ]
    if kept:
        lines += ["", f"{kept} point(s) kept the declared window: MSER-5 found no steady state in the pilot."]
    ctx.text("Measurement from the detected warm-up (--warmup mser5)", "\n".join(lines))
