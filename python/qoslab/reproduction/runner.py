"""Running an experiment: plan its sweeps, compute what the store lacks, analyse, write
``results/NAME/`` (tables as Markdown and CSV, figures as PNG and SVG, ``report.md``)."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from qoslab import _core
from qoslab.report.csvsafe import write_csv
from qoslab.report.frames import typed_rows
from qoslab.report.page import Deferred, git_revision, markdown_table, save_figure
from qoslab.report.results import RunRow, load
from qoslab.reproduction.base import Experiment, Options, Sweep, get
from qoslab.reproduction.planning import as_run, flavoured, out_name, planned, timing_of  # noqa: F401 — re-exported
from qoslab.reproduction.selection import Selections
from qoslab.reproduction.selection import select as select  # re-exported: the experiments import it here
from qoslab.runs import rundir
from qoslab.runs.executors import Executor, LocalExecutor
from qoslab.runs.sweep import RunSpec, SweepReport, run_sweep
from qoslab.stats import Estimate, comparison_row, estimate, seed_ranges, summarize
from qoslab.store import Store
from qoslab.verdicts import Verdict, finalise
from qoslab.verdicts import markdown as verdict_markdown
from qoslab.verdicts import write as write_verdicts
from qoslab.verdicts.currency import experiment_fingerprint, rules_fingerprint
from qoslab.verdicts.docfigures import figure_record, write_manifest

if TYPE_CHECKING:
    from qoslab.report.figures import Figure
    from qoslab.runs.simulate import Result
    from qoslab.scenario import Scenario


@dataclass
class Section:
    kind: str  # "table" | "figure" | "text"
    title: str
    body: str


class Context:
    """What an experiment's ``analyse`` works with: its runs as DataFrames (parameters as
    columns), statistics over seeds, and writers for tables, figures and text that also collect
    the report's sections in order."""

    def __init__(
        self,
        experiment: Experiment,
        options: Options,
        sweeps: Sequence[Sweep],
        specs: Sequence[RunSpec],
        store: Store,
        out: Path,
    ) -> None:
        self.experiment = experiment
        self.options = options
        self.sweeps = {s.name: s for s in sweeps}
        self.specs = specs
        self.store = store
        self.out = out
        self.version = _core.__version__
        self.sections: list[Section] = []
        self.files: list[Path] = []
        self._runs: dict[str, pd.DataFrame] = {}
        self._flows: dict[str, pd.DataFrame] = {}
        #: (table, sweep) → its runs or flows indexed for values()' selections
        self._selections: dict[tuple[str, str], Selections] = {}
        self.verdicts: list[Verdict] = []
        #: What ``figures.json`` lists: each figure's title, caption, provenance and paper labels.
        self.figure_records: list[dict[str, Any]] = []
        #: The runs' warm-ups summarised (:func:`qoslab.reproduction.warmup_window.report`).
        self.warmup: dict[str, Any] | None = None
        #: Where the analysis reports each table and figure it writes (None: silent).
        self.say: Callable[[str], None] | None = None
        #: Figures drawn, not yet saved (None: saved as drawn; see ``reproduce``'s defer_figures)
        self.deferred: list[Deferred] | None = None
        self._t0 = time.perf_counter()

    def _progress(self, what: str) -> None:
        if self.say is not None:
            self.say(
                f"{self.experiment.name}: {what} ({time.perf_counter() - self._t0:.0f} s into the analysis)"
            )

    # -- data -------------------------------------------------------------------------------------

    def run(self, scenario: Scenario, seed: int) -> Result:
        """Runs one scenario outside the store (for series the store does not keep), in the
        reproduction's flavour and with its TCP senders."""
        from qoslab.runs.simulate import run

        return run(as_run(scenario, self.options), seed)

    def sweep_name(self, sweep: str) -> str:
        if sweep not in self.sweeps:
            raise KeyError(f"experiment {self.experiment.name} has no sweep {sweep!r}")
        return f"{self.experiment.name}/{sweep}"

    def _planned(self, sweep: str) -> pd.DataFrame:
        full = self.sweep_name(sweep)
        rows = []
        for s in self.specs:
            if s.sweep != full:
                continue
            k = s.key
            rows.append(
                {
                    **dict(s.params),
                    "scenario": s.scenario.name,
                    "scenario_sha256": k.scenario_sha256,
                    "seed": k.seed,
                    "version": k.version,
                }
            )
        return pd.DataFrame(rows)

    def runs(self, sweep: str, *, failed: bool = False) -> pd.DataFrame:
        """One row per planned run of ``sweep`` that succeeded (or every planned run, with a
        ``status`` column, if ``failed``): its parameters, scenario, hash, seed, version and
        metrics."""
        if sweep not in self._runs:
            planned = self._planned(sweep)
            keys = [s.key for s in self.specs if s.sweep == self.sweep_name(sweep)]
            stored = load(self.store, "runs", keys=keys, expand_params=False)
            stored = stored.drop(columns=[c for c in ("params", "sweep", "scenario") if c in stored.columns])
            df = planned.merge(stored, on=["scenario_sha256", "seed", "version"], how="left")
            df["status"] = df["status"].fillna("missing") if "status" in df.columns else "missing"
            self._runs[sweep] = df
        df = self._runs[sweep]
        return df.copy() if failed else df[df["status"] == "ok"].reset_index(drop=True)

    def flows(self, sweep: str) -> pd.DataFrame:
        """Per-flow rows of the successful runs of ``sweep``, with the run's parameters; the
        flow's name is in ``flow_name``."""
        return self._flow_table(sweep).copy()

    def _flow_table(self, sweep: str) -> pd.DataFrame:
        if sweep not in self._flows:
            runs = self.runs(sweep)
            keys = [s.key for s in self.specs if s.sweep == self.sweep_name(sweep)]
            fl = load(self.store, "flows", keys=keys, expand_params=False)
            fl = fl.rename(columns={"name": "flow_name"})
            keep = ["run_id", "flow", "flow_name", *[c for c in fl.columns if c not in runs.columns]]
            fl = fl[[c for c in dict.fromkeys(keep) if c in fl.columns]]
            self._flows[sweep] = runs[
                [*self.sweeps[sweep].params, "scenario", "scenario_sha256", "seed", "version", "run_id"]
            ].merge(fl, on="run_id")
        return self._flows[sweep]

    def series(self, sweep: str, kind: str = "flow", where: Mapping[str, Any] | None = None) -> pd.DataFrame:
        """The time series (``kind`` "flow" or "queue") of the successful runs of ``sweep``
        matching ``where``."""
        runs = select(self.runs(sweep), where or {})
        frames = []
        for r in typed_rows(runs, RunRow):
            path = self.store.series_path(getattr(r, f"series_{kind}"), getattr(r, f"series_{kind}_sha256"))
            df = pd.read_parquet(path)
            df["seed"] = r.seed
            df["run_id"] = r.run_id
            frames.append(df)
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

    def stats(self, sweep: str, metrics: Sequence[str], by: Sequence[str] | None = None) -> pd.DataFrame:
        """Mean, std and 95 % CI over seeds of ``metrics`` for each point of ``sweep`` (grouped by
        ``by``, default every parameter), with the scenario, its hash and the version."""
        df = self.runs(sweep)
        by = list(self.sweeps[sweep].params if by is None else by)
        st = summarize(df, metrics, by=[*by, "scenario", "scenario_sha256"])
        st["version"] = self.version
        return st

    def values(self, sweep: str, metric: str, where: Mapping[str, Any] | None = None) -> pd.DataFrame:
        """Per-seed values of ``metric`` (``flow:COLUMN`` for a per-flow column) where the
        parameters match ``where``."""
        table = "flows" if metric.startswith("flow:") else "runs"
        if (table, sweep) not in self._selections:
            df = self._flow_table(sweep) if table == "flows" else self.runs(sweep)
            self._selections[(table, sweep)] = Selections(df)
        df = self._selections[(table, sweep)].rows(where or {})
        if table == "flows":
            col = metric.split(":", 1)[1]
            return df[["seed", "scenario", "scenario_sha256", col]].rename(columns={col: "value"})
        if metric not in df.columns:
            raise KeyError(f"sweep {sweep!r} has no metric {metric!r}")
        return df[["seed", "scenario", "scenario_sha256", metric]].rename(columns={metric: "value"})

    def estimate(self, sweep: str, metric: str, where: Mapping[str, Any] | None = None) -> Estimate:
        return estimate(self.values(sweep, metric, where)["value"])

    def comparison(self) -> pd.DataFrame:
        """One row per published number: the value, our mean and CI, whether it lies in the CI
        and in the range of seeds, the scenario, seeds and version."""
        rows = []
        for ref in self.experiment.references:
            v = self.values(ref.sweep, ref.metric, ref.where)
            e = estimate(v["value"])
            rows.append(
                {
                    "id": ref.id,
                    "source": ref.source,
                    "quantity": ref.quantity,
                    "unit": ref.unit,
                    **comparison_row(ref.value, e),
                    "ours": e.fmt(4),
                    "scenario": ";".join(sorted(set(v["scenario"]))),
                    "scenario_sha256": ";".join(sorted(set(v["scenario_sha256"]))),
                    "seeds": seed_ranges(v["seed"]),
                    "version": self.version,
                }
            )
        return pd.DataFrame(rows)

    def provenance(self, sweeps: Sequence[str]) -> str:
        """``qoslab 0.1.0 · fdd-red-s1 · seeds 1-10`` for the runs of ``sweeps``."""
        names: list[str] = []
        seeds: set[int] = set()
        for s in sweeps:
            df = self.runs(s)
            names.extend(n for n in df["scenario"].unique() if n not in names)
            seeds.update(int(x) for x in df["seed"])
        shown = ", ".join(names) if len(names) <= 3 else f"{names[0]} … {names[-1]} ({len(names)} scenarios)"
        return f"qoslab {self.version} · {shown} · seeds {seed_ranges(seeds)}"

    # -- outputs ----------------------------------------------------------------------------------

    def table(
        self,
        name: str,
        df: pd.DataFrame,
        *,
        title: str,
        caption: str = "",
        columns: Mapping[str, str] | Sequence[str] | None = None,
        formats: Mapping[str, Any] | None = None,
    ) -> Path:
        """Writes ``name.csv`` (every column) and ``name.md`` (``columns``), adds a section. A
        quick run's caption says so."""
        self._progress(f"table {name}")
        csv = self.out / f"{name}.csv"
        write_csv(df, csv)
        md = markdown_table(df, columns, formats)
        caption = (caption + self.quick_note).strip()
        body = md + (f"\n{caption}\n" if caption else "")
        (self.out / f"{name}.md").write_text(f"# {title}\n\n{body}")
        self.files += [csv, self.out / f"{name}.md"]
        self.sections.append(Section("table", title, body + f"\n(`{name}.csv`, `{name}.md`)\n"))
        return csv

    def figure(
        self,
        name: str,
        fig: Figure,
        *,
        title: str,
        sweeps: Sequence[str],
        caption: str = "",
        mirrors: str = "",
    ) -> list[Path]:
        """Saves ``fig`` as ``name.png`` and ``name.svg`` (with provenance: a quick run's footer
        begins by saying so) and adds a section. ``mirrors``: the paper's figures and tables it
        mirrors, as a name would say them (``fig4-6``, ``fig10-table1``), when its name does
        not (:func:`qoslab.verdicts.docfigures.mirror_of`)."""
        self._progress(f"figure {name}")
        footer = self.provenance(sweeps)
        if self.options.quick:
            footer = f"QUICK RUN (shortened runs, {len(self.options.seeds)} seeds) · {footer}"
        caption = (caption + self.quick_note).strip()
        self.figure_records.append(
            figure_record(name, fig, title=title, caption=caption, provenance=footer, mirrors=mirrors)
        )
        if self.deferred is None:
            paths = save_figure(fig, self.out, name, title, footer)
        else:
            self.deferred.append(Deferred(fig, self.out, name, title, footer))
            paths = [self.out / f"{name}.png", self.out / f"{name}.svg"]
        self.files += paths
        body = f"![{title}]({name}.png)\n\n" + (f"{caption}\n" if caption else "")
        self.sections.append(Section("figure", title, body + f"\n(`{name}.png`, `{name}.svg`)\n"))
        return paths

    def text(self, title: str, markdown: str) -> None:
        self.sections.append(Section("text", title, markdown.strip() + "\n"))

    def verdict(self, v: Verdict) -> Verdict:
        """Adds a verdict (one claim under one reading) to ``verdicts.json`` and the report,
        marked with the run's mode (quick or full) and flavour."""
        v = replace(
            v,
            quick=self.options.quick,
            flavour=self.options.flavour or "reference",
            sender=self.options.sender or PAPER_SENDERS,
        )
        self.verdicts.append(v)
        return v

    @property
    def quick_note(self) -> str:
        """`` (quick run: N seeds, shortened)`` for captions of quick runs, else empty."""
        return f" Quick run ({len(self.options.seeds)} seeds, shortened)." if self.options.quick else ""


@dataclass
class Reproduction:
    experiment: Experiment
    options: Options
    out: Path
    report: Path
    sweep: SweepReport
    wall_time_s: float
    comparison: pd.DataFrame
    files: list[Path] = field(default_factory=list)
    #: figures drawn with ``defer_figures``, not yet saved
    deferred: list[Deferred] = field(default_factory=list)


def reproduce(
    name: str | Experiment,
    *,
    seeds: int | None = None,
    quick: bool = False,
    out: str | Path = "results",
    store: Store | str | Path | None = None,
    executor: Executor | None = None,
    progress: bool = True,
    flavour: str | None = None,
    sender: str | None = None,
    tcp_flavour: str | None = None,
    timing: str | None = None,
    warmup: str | None = None,
    sweep_seeds: Mapping[str, int] | None = None,
    point_seeds: Mapping[str, Mapping[int, int]] | None = None,
    defer_figures: bool = False,
    after_runs: Callable[[], None] | None = None,
) -> Reproduction:
    """Runs experiment ``name`` (computing only the runs the store lacks) and writes
    ``out/NAME/``: its tables, figures and ``report.md``.

    ``flavour="ns2"`` runs every scenario (and every run the analysis makes itself) with each
    mechanism that has ns-2.35 dsRED's flavour switched to it, and writes ``out/NAME-ns2/``:
    the same experiment as ns-2 would run it, to set beside the default one.

    ``sender="cubic"`` (or ``"bbr"``, ``"sack"``, any variant the core has) runs every TCP
    sender of every scenario with that congestion control, and writes ``out/NAME-cubic/``: its
    verdicts say whether each of the paper's conclusions survives under today's TCP.

    ``tcp_flavour="linux"`` runs every TCP sender in the linux transport flavour (as the kernel
    runs TCP: docs/models/tcp-linux.md, validated on docs/validation/linux.md) and writes
    ``out/NAME-tcp-linux/``.

    ``timing="testbed"`` gives every link direction the kernel testbed's timing noise
    (``timing.jitter``: docs/scenario-format.md; the linux flavour's validated configuration) and
    writes ``out/NAME-timing-testbed/``; ``"exact"`` or a bound (``"50us"``) likewise.

    ``warmup="mser5"`` measures each point's runs from the warm-up MSER-5 finds in a pilot run,
    for an experiment whose measurement window is ours (refused where the paper fixes it), and
    writes ``out/NAME-mser5/`` (:mod:`qoslab.reproduction.warmup_window`). Every reproduction
    reports each run's warm-up (``warmup.csv``, a section of ``report.md``).

    ``sweep_seeds`` plans the sweeps it names at another number of seeds than ``seeds``
    (:func:`qoslab.reproduction.planning.planned`): the sequential mode's sweeps whose claims are
    decided (:mod:`qoslab.reproduction.sequential_run`); ``point_seeds`` the same for single
    points (by sweep and the point's index). ``defer_figures`` leaves saving the
    figures to :func:`qoslab.report.page.save_all` on ``deferred`` (a sequential look's).
    ``after_runs`` is called once the runs are stored, before the analysis (where a sequential
    look starts computing the next look's runs: :mod:`qoslab.runs.prefetch`)."""
    from qoslab.reproduction import warmup_window

    t0 = time.perf_counter()
    exp = name if isinstance(name, Experiment) else get(name)
    warmup_window.check(exp, warmup)
    opts, sweeps, specs = planned(
        exp,
        seeds=seeds,
        quick=quick,
        flavour=flavour,
        sender=sender,
        tcp_flavour=tcp_flavour,
        timing=timing,
        sweep_seeds=sweep_seeds,
        point_seeds=point_seeds,
    )
    opts = replace(opts, warmup=warmup)
    out_dir = Path(out) / out_name(exp.name, opts)
    rundir.check_reproduction(out_dir, out_dir.name)  # OutputFolderError: one line, before any run
    st = store if isinstance(store, Store) else Store(store)
    executor = executor or LocalExecutor()
    try:
        windows = None
        if warmup is not None:
            sweeps, specs, windows = warmup_window.pilot_windows(exp, sweeps, specs, st, executor, progress)
        rep = run_sweep(specs, st, executor, progress=progress, label=exp.name)
        if after_runs is not None:
            after_runs()
        rundir.claim_reproduction(out_dir, out_dir.name)  # emptied and marked (never an unmarked one)
        ctx = Context(exp, opts, sweeps, specs, st, out_dir)
        ctx.deferred = [] if defer_figures else None
        if progress:
            ctx.say = _say
            reused = (
                "every run reused from the store" if rep.computed == 0 and rep.total else f"{rep.total} runs"
            )
            _say(f"{exp.name}: {reused}; analysing: statistics, tables and figures")
        comp = ctx.comparison()
        try:
            exp.analyse(ctx)
        except Exception as e:  # noqa: BLE001
            if not rep.failed:
                raise  # a bug in the analysis: show it
            # with runs missing the analysis may lack data; the report still lists the failures
            ctx.text(
                "Analysis incomplete", f"The analysis stopped ({type(e).__name__}: {e}) because runs failed."
            )
        if windows is not None:
            warmup_window.window_section(ctx, windows)
        ctx.warmup = warmup_window.report(ctx)
        runs_csv = _write_runs(ctx, out_dir)
        if ctx.figure_records:
            ctx.files.append(write_manifest(out_dir, ctx.figure_records, _command(ctx)))
        if ctx.verdicts:
            ctx.files.append(_write_verdicts(ctx))
        wall = time.perf_counter() - t0
        report = _write_report(ctx, comp, rep, executor, st, wall)
    finally:
        if not isinstance(store, Store):
            st.close()
    return Reproduction(
        exp, opts, out_dir, report, rep, wall, comp, [*ctx.files, runs_csv, report], ctx.deferred or []
    )


def _say(line: str) -> None:
    """A progress line on stderr, where the runs' progress went."""
    print(line, file=sys.stderr, flush=True)


#: How verdicts and reports name the senders of a reproduction without ``sender``.
PAPER_SENDERS = "as published"


def _final_verdicts(ctx: Context) -> list[dict[str, Any]]:
    """The run's records re-decided against the paper's declared magnitudes, the claims' parts
    and Holm's correction (:func:`qoslab.verdicts.finalise`); an experiment without declared
    magnitudes (a plugin) keeps the sign-only verdicts its claims gave; each record must be a
    declared claim's part (:meth:`qoslab.verdicts.claims.Registry.checked`)."""
    from qoslab.verdicts.magnitudes import DECLARED, REGISTRY

    recs = [v.as_json() for v in ctx.verdicts]
    decls = DECLARED.get(ctx.experiment.name)
    return REGISTRY.checked(ctx.experiment.name, finalise(decls, recs, "run") if decls else recs)


def _write_verdicts(ctx: Context) -> Path:
    from qoslab.verdicts.magnitudes import DECLARED

    exp, opts = ctx.experiment, ctx.options
    rules = rules_fingerprint(exp.name) if exp.name in DECLARED else None
    header = {
        "study": exp.study or exp.title,
        "title": exp.title,
        "version": ctx.version,
        "quick": opts.quick,
        "seeds": len(opts.seeds),
        "flavour": opts.flavour or "reference",
        "sender": opts.sender or PAPER_SENDERS,
        "tcp_flavour": opts.tcp_flavour or "ns2",
        "timing": timing_of(ctx.sweeps.values()),
        "command": _command(ctx),
        "fingerprint": {
            "core": str(ctx.version).rpartition("+")[2],
            "experiment": experiment_fingerprint(exp.name, exp.plan),
            "rules": rules,
        },
        "decided": "decided by the run",
        **({"warmup": ctx.warmup} if ctx.warmup else {}),
    }
    return write_verdicts(ctx.out / "verdicts.json", exp.name, header, _final_verdicts(ctx))


def _command(ctx: Context) -> str:
    exp, opts = ctx.experiment, ctx.options
    return (
        "qoslab reproduce "
        + exp.name
        + (" --quick" if opts.quick else "")
        + (
            f" --seeds {len(opts.seeds)}"
            if len(opts.seeds) != (exp.quick_seeds if opts.quick else exp.seeds)
            else ""
        )
        + (f" --flavour {opts.flavour}" if opts.flavour else "")
        + (f" --sender {opts.sender}" if opts.sender else "")
        + (f" --tcp-flavour {opts.tcp_flavour}" if opts.tcp_flavour else "")
        + (f" --timing {opts.timing}" if opts.timing else "")
        + (f" --warmup {opts.warmup}" if opts.warmup else "")
    )


#: the columns of ``runs.csv``
_RUNS_CSV = (
    "sweep scenario scenario_sha256 seed version params status error attempts wall_time_s worker".split()
)


def _write_runs(ctx: Context, out_dir: Path) -> Path:
    frames = []
    for name, sw in ctx.sweeps.items():
        df = ctx.runs(name, failed=True)
        df.insert(0, "sweep", name)
        df["params"] = [json.dumps({k: r[k] for k in sw.params}, default=str) for _, r in df.iterrows()]
        frames.append(df[[c for c in _RUNS_CSV if c in df.columns]])
    p = out_dir / "runs.csv"
    write_csv(pd.concat(frames, ignore_index=True), p)
    return p


def _flavours(ctx: Context) -> str:
    """Which flavour (reference: the RFC or paper; ns2: ns-2.35 dsRED's rules) the dsRED
    mechanisms of the experiment's scenarios ran in."""
    from qoslab.ns2.flavour import flavours_used

    seen: dict[str, set[str]] = {}
    for sw in ctx.sweeps.values():
        for _, sc in sw.points:
            for kind, fl in flavours_used(sc).items():
                seen.setdefault(kind, set()).update(fl)
    if not seen:
        return "none (no RIO/WRED queue or dsRED meter)"
    by: dict[str, list[str]] = {}
    for kind, fl in sorted(seen.items()):
        by.setdefault(" and ".join(sorted(fl)), []).append(kind)
    return "; ".join(f"{fl}: {', '.join(kinds)}" for fl, kinds in by.items()) + (
        " (reference: as the RFCs and papers define them; `ns2`: ns-2.35 dsRED's rules, "
        "docs/validation/ns2.md)"
    )


def _senders(ctx: Context) -> str:
    """Which TCP congestion control the experiment's senders ran, and in which transport flavour."""
    fl = ctx.options.tcp_flavour
    how = (
        f"; transport flavour **{fl}** for every TCP flow (`--tcp-flavour {fl}`: docs/models/tcp-{fl}.md)"
        if fl
        else ""
    )
    if ctx.options.sender:
        return (
            f"**{ctx.options.sender}** for every TCP sender (`--sender {ctx.options.sender}`), in place "
            "of the paper's: the verdicts say whether each conclusion survives under it" + how
        )
    seen = sorted(
        {f["tcp"]["variant"] for sw in ctx.sweeps.values() for _, sc in sw.points for f in _tcp_flows(sc)}
    )
    return (", ".join(seen) or "none") + " (as the scenarios give them)" + how


def _tcp_flows(sc: Scenario) -> list[dict[str, Any]]:
    r = sc.resolved
    return [f for f in [*r.get("flows", []), *r.get("arrivals", [])] if isinstance(f.get("tcp"), dict)]


def _write_report(
    ctx: Context, comp: pd.DataFrame, rep: SweepReport, executor: Executor, store: Store, wall: float
) -> Path:
    exp, opts = ctx.experiment, ctx.options
    all_seeds = sorted({int(s) for sw in ctx.sweeps.values() for s in sw.seeds})
    lines = [
        f"# {exp.name}: {exp.title}",
        "",
        exp.summary.strip(),
        "",
        f"Paper: {exp.paper}",
        "",
        *(
            [
                f"**Every TCP sender runs {opts.sender}** in place of the paper's TCP (`--sender "
                f"{opts.sender}`). The verdicts below are the paper's claims tested under it: whether "
                "each conclusion survives under today's TCP. The text of the analysis is the "
                "experiment's own and may describe the paper's setting.",
                "",
            ]
            if opts.sender
            else []
        ),
        "## Provenance",
        "",
        "| | |",
        "|---|---|",
        f"| qoslab version | {ctx.version} |",
        f"| git revision | {git_revision() or 'n/a'} |",
        f"| mode | {'quick (`--quick`)' if opts.quick else 'full'} |",
        f"| mechanism flavour | {_flavours(ctx)} |",
        f"| TCP senders | {_senders(ctx)} |",
        f"| host timing | {timing_of(ctx.sweeps.values())} (`[timing] jitter`: docs/scenario-format.md) |",
        f"| seeds | {seed_ranges(all_seeds)} ({len(opts.seeds)} per point) |",
        f"| runs | {rep.total} distinct: {rep.computed} computed now, {rep.reused} reused from the store, "
        f"{len(rep.failed)} failed |",
        f"| wall time | {wall:.1f} s for this invocation; {rep.compute_time_s:.1f} s of simulation "
        "summed over the runs computed now |",
        f"| executor | {executor.describe()} |",
        f"| store | `{store.db_path}` |",
        f"| date | {time.strftime('%Y-%m-%d %H:%M:%S %Z')} |",
        "",
        f"Reproduce with `{_command(ctx)}`; every run is listed in `runs.csv` (scenario, hash, seed, "
        "version, parameters, status).",
        "",
        "## Sweeps",
        "",
    ]
    for name, sw in ctx.sweeps.items():
        scen = sorted({(sc.name, sc.sha256()[:12]) for _, sc in sw.points})
        lines += [
            f"### {name}",
            "",
            sw.description.strip() or "(no description)",
            "",
            f"- points: {len(sw.points)}; seeds: {seed_ranges(sw.seeds)}",
            f"- parameters: {', '.join(f'`{p}`' for p in sw.params) or 'none'}",
            "- scenarios: "
            + ", ".join(f"{n} (`{h}`)" for n, h in scen[:8])
            + (" …" if len(scen) > 8 else ""),
            "",
        ]
    if ctx.verdicts:
        lines += [
            "## Verdicts",
            "",
            "One row per claim of the paper and per reading of it (`verdicts.json`); the verdict "
            "is decided from the test's 95 % interval against the paper's magnitude, with Holm's "
            "correction over the claim's readings, never by hand"
            + (" — **from a quick run: shortened runs and few seeds**" if opts.quick else "")
            + ".",
            "",
            verdict_markdown(_final_verdicts(ctx)),
        ]
    if not comp.empty:
        lines += [
            "## Comparison with the published numbers",
            "",
            "Our value is the mean over seeds ± the half-width of its 95 % Student-t confidence "
            "interval; the published value is a single simulation run, so the seed range (smallest "
            "to largest seed) is the fairer yardstick.",
            "",
            markdown_table(
                comp,
                {
                    "source": "source",
                    "quantity": "quantity",
                    "published": "published",
                    "ours": "ours (mean ± 95 % CI)",
                    "inside_ci": "published in CI",
                    "seed_min": "seed min",
                    "seed_max": "seed max",
                    "inside_seed_range": "in seed range",
                    "n": "n",
                },
            ),
        ]
        write_csv(comp, ctx.out / "comparison.csv")
        (ctx.out / "comparison.md").write_text(
            "# Comparison with the published numbers\n\n"
            + markdown_table(
                comp,
                [
                    "source",
                    "quantity",
                    "published",
                    "ours",
                    "inside_ci",
                    "seed_min",
                    "seed_max",
                    "inside_seed_range",
                    "seeds",
                    "version",
                ],
            )
            + (f"\n{ctx.quick_note.strip()}\n" if ctx.quick_note else "")
        )
    for sec in ctx.sections:
        lines += [f"## {sec.title}", "", sec.body]
    if exp.notes.strip():
        lines += ["## Notes", "", exp.notes.strip(), ""]
    if rep.failed:
        lines += ["## Failed runs", ""]
        for spec, err in rep.failed:
            lines.append(
                f"- {spec.sweep} {json.dumps(dict(spec.params), default=str)} seed {spec.seed}: {err}"
            )
        lines.append("")
    p = ctx.out / "report.md"
    p.write_text("\n".join(lines).rstrip() + "\n")
    return p
