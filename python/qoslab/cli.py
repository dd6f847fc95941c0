"""The ``qoslab`` command line."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

from qoslab import _core, run_command
from qoslab.run_command import fail as _fail
from qoslab.run_command import load as _load

if TYPE_CHECKING:  # the commands import what they use when they run (start-up time)
    from collections.abc import Callable

    import pandas as pd
    from matplotlib.figure import Figure
    from rich.console import Console

    from qoslab.executors import Executor
    from qoslab.experiments.runner import Reproduction
    from qoslab.store import Store
    from qoslab.sweep import RunSpec

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="qoslab: packet-level simulation of DiffServ conditioners and AQM.",
)


def version_text() -> str:
    """``qoslab --version``: the package version, the source digest of the build (the part after
    ``+`` of ``qoslab.__version__``, which the result store keys runs by) and the git revision
    of the checkout it runs from, if any; each labelled."""
    from qoslab.report import git_revision

    release, _, digest = _core.__version__.partition("+")
    here = Path(__file__).resolve().parent
    rev = git_revision(here) if (here.parents[1] / ".git").exists() else None
    if rev is None:
        try:  # written by `make wheel`: the revision the wheel was built from
            from qoslab._build_info import GIT_REVISION  # type: ignore[import-not-found]

            rev = f"{GIT_REVISION} (built into this wheel)"
        except ImportError:
            pass
    return "\n".join(
        [
            f"qoslab {release}",
            f"source digest: {digest or 'n/a'} (version key of stored runs: {_core.__version__})",
            f"git revision: {rev or 'n/a (not run from a git checkout)'}",
        ]
    )


def _version(value: bool) -> None:
    if value:
        typer.echo(version_text())
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    """qoslab: packet-level simulation of DiffServ conditioners and AQM."""


AllowPathOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--allow-path",
        help="Also let the scenario read files (traces, CDFs) from this folder; by default only "
        "its own folder (repeatable).",
    ),
]


@app.command()
def run(
    scenario: Annotated[Path, typer.Argument(help="Scenario file (TOML).")],
    seed: Annotated[int | None, typer.Option(help="Run seed (default: the scenario's).")] = None,
    set_: Annotated[
        list[str] | None, typer.Option("--set", help="Override a scenario key: KEY=VALUE (repeatable).")
    ] = None,
    out: Annotated[Path | None, typer.Option(help="Write summary.json and Parquet tables here.")] = None,
    summary_only: Annotated[
        bool,
        typer.Option(
            "--summary-only", help="With --out: write summary.json and scenario.toml, not the tables."
        ),
    ] = False,
    max_memory: Annotated[
        str | None,
        typer.Option("--max-memory", help="Refuse runs estimated above this (e.g. 8GB; 0: no limit)."),
    ] = None,
    max_capture: Annotated[
        str | None,
        typer.Option("--max-capture", help="Refuse captures that could exceed this (e.g. 2GB; 0: no limit)."),
    ] = None,
    max_time: Annotated[
        str | None,
        typer.Option("--max-time", help="Stop a run whose pace says it exceeds this (default 24h; 0: none)."),
    ] = None,
    allow_path: AllowPathOpt = None,
    force: Annotated[
        bool, typer.Option("--force", help="Replace the earlier qoslab run in --out (its folder is cleared).")
    ] = False,
) -> None:
    """Run a scenario and print per-flow throughput, fairness, utilisation and drops. Memory and
    capture size are estimated first and wall time is measured as it runs, against a budget
    (--max-memory, --max-capture, --max-time, or QOSLAB_MAX_MEMORY, ...: docs/robustness.md).
    Outputs go to --out (empty, or an earlier run with --force); without it, a scenario that
    captures writes into a fresh folder under qoslab-runs/."""
    run_command.run(
        scenario, seed, set_, out, summary_only, max_memory, max_capture, max_time, allow_path, force
    )


@app.command()
def check(
    scenario: Annotated[list[Path], typer.Argument(help="Scenario file(s) to validate.")],
    allow_path: AllowPathOpt = None,
) -> None:
    """Validate scenario files: exit 0 when all are valid, 1 with one error line per bad file."""
    from qoslab.scenario import load_scenario

    bad = 0
    for p in scenario:
        try:
            sc = load_scenario(p, allow_paths=allow_path or ())
            nodes, links, flows, _, _ = sc.core.counts()  # not sc.resolved: 335 objects a flow
            typer.echo(f"{p}: ok ({nodes} nodes, {links} links, {flows} flows)")
        except _core.ScenarioError as e:
            typer.echo(f"error: {e.args[0]}", err=True)
            bad += 1
        except MemoryError:
            typer.echo(
                f"error: {p}: out of memory while reading the scenario (make its groups smaller)", err=True
            )
            bad += 1
    if bad:
        raise typer.Exit(1)


@app.command()
def bench(
    workload: Annotated[list[str] | None, typer.Option(help="Run only these workloads.")] = None,
    no_ns2: Annotated[bool, typer.Option("--no-ns2", help="Do not run ns-2 even if present.")] = False,
    ns2_all: Annotated[
        bool, typer.Option("--ns2-all", help="Run ns-2 also on the workloads it is too slow for.")
    ] = False,
    no_ns3: Annotated[bool, typer.Option("--no-ns3", help="Do not run ns-3 even if present.")] = False,
    ns3_all: Annotated[
        bool, typer.Option("--ns3-all", help="Run ns-3 also on the workloads it is too slow for.")
    ] = False,
    repeat: Annotated[int, typer.Option(help="Whole-process runs per simulator (the median is shown).")] = 5,
    instructions: Annotated[
        bool,
        typer.Option(
            "--instructions", help="Also instructions and cache misses per hop in the event loop (callgrind)."
        ),
    ] = False,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Write every figure to this JSON file.")
    ] = None,
    pairs: Annotated[
        int,
        typer.Option(
            help="Rounds of each workload's core alternating with the 200-flow one's, for the cost "
            "per hop paired in time (0: none; only when the 200-flow workload is measured)."
        ),
    ] = 9,
) -> None:
    """Measure qoslab against ns-2 and ns-3 on fixed workloads: core and whole process, start-up,
    memory."""
    from qoslab.bench import main as bench_main

    if repeat < 1:
        _fail(f"--repeat must be at least 1, got {repeat}")
    if pairs < 0:
        _fail(f"--pairs must be at least 0, got {pairs}")
    try:
        bench_main(
            workload or None,
            use_ns2=not no_ns2,
            repeat=repeat,
            ns2_all=ns2_all,
            use_ns3=not no_ns3,
            ns3_all=ns3_all,
            instructions=instructions,
            json_path=json_out,
            pairs=pairs,
        )
    except ValueError as e:
        _fail(str(e))
    except OSError as e:
        _fail(f"cannot write {json_out}: {e}")


# -- sweeps, experiments and the result store --------------------------------------------------------

StoreOpt = Annotated[
    Path | None,
    typer.Option("--store", help="Result store directory (default: $QOSLAB_STORE or results/store)."),
]
ExecutorOpt = Annotated[
    str, typer.Option("--executor", help="local (process pool), serial, dask, slurm or pbs.")
]
JobsOpt = Annotated[
    int | None,
    typer.Option(
        "--jobs", "-j", help="Worker processes (local; default: all cores) or batch jobs (slurm/pbs)."
    ),
]
SchedulerOpt = Annotated[
    str | None, typer.Option("--scheduler", help="Dask scheduler address, e.g. tcp://10.0.0.5:8786.")
]
QueueOpt = Annotated[
    str | None, typer.Option("--queue", help="slurm/pbs: partition or queue.", rich_help_panel="Slurm/PBS")
]
AccountOpt = Annotated[
    str | None, typer.Option("--account", help="slurm/pbs: account/project.", rich_help_panel="Slurm/PBS")
]
CoresOpt = Annotated[
    int, typer.Option("--cores", help="slurm/pbs: cores per job.", rich_help_panel="Slurm/PBS")
]
ProcessesOpt = Annotated[
    int | None,
    typer.Option(
        "--processes",
        help="slurm/pbs: worker processes per job (default: --cores).",
        rich_help_panel="Slurm/PBS",
    ),
]
MemoryOpt = Annotated[
    str, typer.Option("--memory", help="slurm/pbs: memory per job.", rich_help_panel="Slurm/PBS")
]
WalltimeOpt = Annotated[
    str, typer.Option("--walltime", help="slurm/pbs: job time limit.", rich_help_panel="Slurm/PBS")
]
JobExtraOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--job-extra",
        help="slurm/pbs: extra #SBATCH/#PBS directive (repeatable).",
        rich_help_panel="Slurm/PBS",
    ),
]
PrologueOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--prologue",
        help="slurm/pbs: shell line run before the worker (repeatable).",
        rich_help_panel="Slurm/PBS",
    ),
]
PythonOpt = Annotated[
    str | None,
    typer.Option(
        "--python",
        help="slurm/pbs: Python on the compute nodes (default: this one).",
        rich_help_panel="Slurm/PBS",
    ),
]
InterfaceOpt = Annotated[
    str | None,
    typer.Option("--interface", help="slurm/pbs: network interface (e.g. ib0).", rich_help_panel="Slurm/PBS"),
]
SchedulerHostOpt = Annotated[
    str | None,
    typer.Option(
        "--scheduler-host",
        help="slurm/pbs: address the scheduler listens on, reachable from the compute nodes.",
        rich_help_panel="Slurm/PBS",
    ),
]
TlsDirOpt = Annotated[
    Path | None,
    typer.Option(
        "--tls-dir",
        help="dask/slurm/pbs: mutual TLS with DIR/ca.pem, cert.pem, key.pem (docs/experiments.md).",
    ),
]
InsecureOpt = Annotated[
    bool,
    typer.Option(
        "--insecure",
        help="slurm/pbs: scheduler and workers without TLS (by default each sweep makes its own "
        "certificates): anyone who reaches their ports can run code as you.",
        rich_help_panel="Slurm/PBS",
    ),
]
QuietOpt = Annotated[
    bool,
    typer.Option(
        "--quiet",
        "-q",
        help="For batch use: no progress and no tables; only the closing line(s) and errors.",
    ),
]
JobLogsOpt = Annotated[
    Path | None,
    typer.Option(
        "--job-logs",
        help="slurm/pbs: directory for the jobs' output and error files (default: STORE/jobs).",
        rich_help_panel="Slurm/PBS",
    ),
]
SchedulerPortOpt = Annotated[
    int | None,
    typer.Option(
        "--scheduler-port",
        help="slurm/pbs: port the scheduler listens on (default: a free one, chosen at start).",
        rich_help_panel="Slurm/PBS",
    ),
]
PrintScriptOpt = Annotated[
    bool,
    typer.Option(
        "--print-job-script",
        help="slurm/pbs: print the job script and exit (nothing is submitted).",
        rich_help_panel="Slurm/PBS",
    ),
]


class _Errors:
    """Turns the errors of bad input, stores and executors into one line and exit code 1; with
    ``resumable``, Ctrl-C says how to resume."""

    def __init__(self, resumable: bool = False) -> None:
        self.resumable = resumable

    def __enter__(self) -> None:
        return None

    def __exit__(self, et: type | None, e: BaseException | None, tb: object) -> Literal[False]:
        if e is None:
            return False
        if isinstance(e, KeyboardInterrupt) and self.resumable:
            typer.echo(
                "interrupted: every finished run is stored; the same command resumes the sweep", err=True
            )
            raise typer.Exit(130)
        from qoslab.executors import ExecutorError
        from qoslab.experiments.base import UnknownExperiment
        from qoslab.store import StoreError
        from qoslab.sweep import GridError

        if isinstance(e, _core.ScenarioError):
            _fail(str(e.args[0]))
        if isinstance(e, StoreError | GridError | ExecutorError | UnknownExperiment):
            _fail(str(e))
        if isinstance(e, ValueError) and not isinstance(e, UnicodeError):
            _fail(str(e))
        return False


def _executor(
    name: str,
    jobs: int | None,
    scheduler: str | None,
    queue: str | None,
    account: str | None,
    cores: int,
    processes: int | None,
    memory: str,
    walltime: str,
    job_extra: list[str] | None,
    prologue: list[str] | None,
    python: str | None,
    interface: str | None,
    print_job_script: bool,
    scheduler_host: str | None = None,
    tls_dir: Path | None = None,
    *,
    job_logs: Path | None = None,
    scheduler_port: int | None = None,
    store: Path | None = None,
    insecure: bool = False,
) -> Executor:
    from qoslab.executors import JobqueueOptions, check_executor_options, job_script, make_executor

    check_executor_options(name, scheduler=scheduler, job_script=print_job_script)
    if tls_dir is not None and name not in ("dask", "slurm", "pbs"):
        raise ValueError("--tls-dir needs --executor dask, slurm or pbs")
    for flag, given in (
        ("--scheduler-host", scheduler_host),
        ("--scheduler-port", scheduler_port),
        ("--job-logs", job_logs),
        ("--insecure", True if insecure else None),
    ):
        if given is not None and name not in ("slurm", "pbs"):
            raise ValueError(f"{flag} needs --executor slurm or pbs")
    opts = None
    if name in ("slurm", "pbs"):
        from qoslab.store import default_store

        logs = job_logs if job_logs is not None else (store or default_store()) / "jobs"
        opts = JobqueueOptions(
            queue=queue,
            account=account,
            cores=cores,
            processes=processes,
            memory=memory,
            walltime=walltime,
            jobs=jobs or 1,
            job_extra=tuple(job_extra or ()),
            prologue=tuple(prologue or ()),
            python=python,
            interface=interface,
            scheduler_host=scheduler_host,
            scheduler_port=scheduler_port,
            log_directory=str(logs.resolve()),
            tls_dir=str(tls_dir) if tls_dir is not None else None,
            insecure=insecure,
        )
        if print_job_script:
            typer.echo(job_script(name, opts))
            raise typer.Exit(0)
    return make_executor(name, jobs=jobs, scheduler=scheduler, jobqueue=opts, tls_dir=tls_dir)


def _report_failures(failed: list[tuple[RunSpec, str]], total: int) -> None:
    if not failed:
        return
    typer.echo(f"{len(failed)} of {total} runs failed (after a retry):", err=True)
    for spec, err in failed[:20]:
        params = ", ".join(f"{k}={v}" for k, v in spec.params.items())
        typer.echo(f"  {spec.scenario.name} [{params}] seed {spec.seed}: {err}", err=True)
    if len(failed) > 20:
        typer.echo(f"  … and {len(failed) - 20} more (qoslab results --status failed)", err=True)


@app.command()
def sweep(
    scenario: Annotated[Path, typer.Argument(help="Scenario file (TOML).")],
    grid: Annotated[
        list[str] | None, typer.Option("--grid", help="KEY=V1,V2,... over any scenario key (repeatable).")
    ] = None,
    seeds: Annotated[int, typer.Option("--seeds", help="Number of seeds per grid point.")] = 1,
    first_seed: Annotated[int, typer.Option("--first-seed", help="First seed (seeds are consecutive).")] = 1,
    set_: Annotated[
        list[str] | None, typer.Option("--set", help="Fixed override KEY=VALUE for every run (repeatable).")
    ] = None,
    name: Annotated[
        str | None, typer.Option("--name", help="Sweep name in the store (default: scenario name).")
    ] = None,
    metric: Annotated[
        list[str] | None, typer.Option("--metric", help="Extra metric function MODULE:FUNCTION (repeatable).")
    ] = None,
    show: Annotated[
        str,
        typer.Option(
            "--show",
            help="Comma-separated metrics for the summary table (default: fairness_index, "
            "aggregate_throughput_bps, utilization, drops_bottleneck).",
            show_default=False,
        ),
    ] = "fairness_index,aggregate_throughput_bps,utilization,drops_bottleneck",
    retries: Annotated[int, typer.Option("--retries", help="Retries of a failing run.")] = 1,
    out: Annotated[Path | None, typer.Option("--out", help="Also write runs.csv and stats.csv here.")] = None,
    store: StoreOpt = None,
    executor: ExecutorOpt = "local",
    jobs: JobsOpt = None,
    scheduler: SchedulerOpt = None,
    queue: QueueOpt = None,
    account: AccountOpt = None,
    cores: CoresOpt = 1,
    processes: ProcessesOpt = None,
    memory: MemoryOpt = "2GB",
    walltime: WalltimeOpt = "01:00:00",
    job_extra: JobExtraOpt = None,
    prologue: PrologueOpt = None,
    python: PythonOpt = None,
    interface: InterfaceOpt = None,
    scheduler_host: SchedulerHostOpt = None,
    tls_dir: TlsDirOpt = None,
    job_logs: JobLogsOpt = None,
    scheduler_port: SchedulerPortOpt = None,
    print_job_script: PrintScriptOpt = False,
    insecure: InsecureOpt = False,
    quiet: QuietOpt = False,
    allow_path: AllowPathOpt = None,
    replace: Annotated[
        bool,
        typer.Option(
            "--replace",
            help="Start the sweep name afresh when the store has it with another grid (its stored "
            "runs stay; only their membership of this name is dropped).",
        ),
    ] = False,
) -> None:
    """Run a scenario over a parameter grid and seeds; stored runs are skipped (resumable)."""
    from rich.console import Console

    from qoslab import sweep as sw
    from qoslab.stats import mean_ci_table, seed_ranges
    from qoslab.store import Store

    with _Errors(resumable=True):
        axes = sw.parse_axes(grid or [])
        base = _load(scenario, set_, allow_path)
        points = sw.override_points(base, axes)
        seed_values = sw.seed_list(seeds, first_seed)
        label = name or base.name
        specs = sw.plan(points, seed_values, label, tuple(metric or ()))
        ex = _executor(
            executor,
            jobs,
            scheduler,
            queue,
            account,
            cores,
            processes,
            memory,
            walltime,
            job_extra,
            prologue,
            python,
            interface,
            print_job_script,
            scheduler_host,
            tls_dir,
            job_logs=job_logs,
            scheduler_port=scheduler_port,
            store=store,
            insecure=insecure,
        )
        show_metrics = sw.parse_metric_names(show, metric or ())
        with Store(store) as st:
            _say_removed(st)
            rep = sw.run_sweep(
                specs,
                st,
                ex,
                retries=retries,
                label=label,
                progress=not quiet,
                grid=axes,
                replace_grid=replace,
            )
            runs = sw.sweep_runs(st, specs, axes)
        by = sw.axis_columns(runs, axes)
        stats = sw.sweep_statistics(runs, show_metrics, by=by)
        if stats is not None and not quiet:
            _print_table(
                Console(),
                mean_ci_table(stats, show_metrics, by=by),
                f"sweep {label}: {base.name}, seeds {seed_ranges(seed_values)}, qoslab {_core.__version__} "
                "(mean ± 95% CI half-width over seeds)",
            )
        if stats is not None and out is not None:
            sw.write_sweep_tables(out, runs, stats)
            typer.echo(f"wrote {out}/runs.csv and {out}/stats.csv")
        typer.echo(
            f"{rep.total} runs: {rep.computed} computed, {rep.reused} reused from the store, "
            f"{len(rep.failed)} failed; {rep.wall_time_s:.1f} s; store {st.db_path}"
        )
    _report_failures(rep.failed, rep.total)
    if rep.failed:
        raise typer.Exit(2)


def _print_table(con: Console, df: pd.DataFrame, title: str) -> None:
    """A rich table on a terminal; a Markdown table otherwise (logs, pipes)."""
    from qoslab.report import fmt_value, markdown_table

    if not sys.stdout.isatty():
        typer.echo(f"{title}\n\n{markdown_table(df)}")
        return
    from rich.table import Table

    t = Table(title=title)
    for c in df.columns:
        t.add_column(str(c), overflow="fold")
    for row in df.itertuples(index=False):
        t.add_row(*[fmt_value(v) for v in row])
    con.print(t)


@app.command()
def reproduce(
    name: Annotated[
        str | None, typer.Argument(help="Experiment name (see --list), or `all` for every one in turn.")
    ] = None,
    list_: Annotated[bool, typer.Option("--list", help="List the experiments and exit.")] = False,
    seeds: Annotated[
        int | None, typer.Option("--seeds", help="Seeds per point (default: the experiment's).")
    ] = None,
    quick: Annotated[bool, typer.Option("--quick", help="A shortened version (about a minute).")] = False,
    out: Annotated[Path, typer.Option("--out", help="Outputs go to OUT/NAME/.")] = Path("results"),
    store: StoreOpt = None,
    executor: ExecutorOpt = "local",
    jobs: JobsOpt = None,
    scheduler: SchedulerOpt = None,
    queue: QueueOpt = None,
    account: AccountOpt = None,
    cores: CoresOpt = 1,
    processes: ProcessesOpt = None,
    memory: MemoryOpt = "2GB",
    walltime: WalltimeOpt = "01:00:00",
    job_extra: JobExtraOpt = None,
    prologue: PrologueOpt = None,
    python: PythonOpt = None,
    interface: InterfaceOpt = None,
    scheduler_host: SchedulerHostOpt = None,
    tls_dir: TlsDirOpt = None,
    job_logs: JobLogsOpt = None,
    scheduler_port: SchedulerPortOpt = None,
    print_job_script: PrintScriptOpt = False,
    insecure: InsecureOpt = False,
    quiet: QuietOpt = False,
    flavour: Annotated[
        str | None,
        typer.Option(
            "--flavour",
            help="ns2: run every mechanism that has ns-2.35 dsRED's flavour in it (outputs go to "
            "OUT/NAME-ns2/), to set beside the experiment's own results.",
        ),
    ] = None,
    sender: Annotated[
        str | None,
        typer.Option(
            "--sender",
            help="Run every TCP sender with this congestion control (cubic, bbr, sack, ...; outputs "
            "go to OUT/NAME-SENDER/): whether each of the paper's conclusions survives under it.",
        ),
    ] = None,
    tcp_flavour: Annotated[
        str | None,
        typer.Option(
            "--tcp-flavour",
            help="linux: every TCP sender as the Linux kernel runs it (tcp.flavour; outputs go to "
            "OUT/NAME-tcp-linux/); ns2 (the default): ns-2.35's one-way agents.",
        ),
    ] = None,
    sequential: Annotated[
        bool,
        typer.Option(
            "--sequential",
            help="Seeds in rounds of two from 4, each verdict from a confidence sequence (valid at "
            "every look), stopping once every verdict is decided or at --max-seeds.",
        ),
    ] = False,
    max_seeds: Annotated[
        int | None,
        typer.Option("--max-seeds", help="--sequential: the cap on seeds (default: the experiment's)."),
    ] = None,
) -> None:
    """Reproduce a paper's experiment: runs, statistics over seeds, tables, figures, report.md."""
    from rich.console import Console

    from qoslab import experiments

    with _Errors(resumable=True):
        if list_:
            for e in experiments.available():
                typer.echo(f"{e.name:<16} {e.title} ({e.seeds} seeds; --quick: {e.quick_seeds})")
            return
        if name is None:
            raise ValueError("name an experiment (qoslab reproduce --list shows them)")
        exps = experiments.available() if name == "all" else [experiments.get(name)]
        if sender is not None and name == "all":
            exps = [e for e in exps if not e.own_senders]
        if seeds is not None and seeds < 1:
            raise ValueError(f"--seeds must be at least 1, got {seeds}")
        if sequential and seeds is not None:
            raise ValueError("--sequential chooses the seeds itself: give --max-seeds, not --seeds")
        if max_seeds is not None and not sequential:
            raise ValueError("--max-seeds goes with --sequential")
        ex = _executor(
            executor,
            jobs,
            scheduler,
            queue,
            account,
            cores,
            processes,
            memory,
            walltime,
            job_extra,
            prologue,
            python,
            interface,
            print_job_script,
            scheduler_host,
            tls_dir,
            job_logs=job_logs,
            scheduler_port=scheduler_port,
            store=store,
            insecure=insecure,
        )
    from qoslab import schedule

    with _Errors():
        one_sweep = len(exps) > 1 and not sequential and schedule.mode() == "longest"
    if one_sweep:
        # every experiment's runs in one sweep, longest first (qoslab.schedule): no core idles
        # at the end of one experiment while the next waits; each reproduction then reuses them
        from qoslab.experiments.planning import compute_all
        from qoslab.store import Store

        with _Errors(resumable=True):
            st = Store(store)
            try:
                pre = compute_all(
                    exps,
                    store=st,
                    executor=ex,
                    progress=not quiet,
                    seeds=seeds,
                    quick=quick,
                    flavour=flavour,
                    sender=sender,
                    tcp_flavour=tcp_flavour,
                )
            finally:
                st.close()
        typer.echo(
            f"all experiments' runs, longest first: {pre.total} runs ({pre.computed} computed, "
            f"{pre.reused} reused, {len(pre.failed)} failed) in {pre.wall_time_s:.1f} s; "
            "each experiment below reuses them (a failed run is tried again there)"
        )
    any_failed = False
    done: list[Reproduction] = []
    for exp in exps:
        with _Errors(resumable=True):
            common: dict[str, Any] = dict(
                quick=quick,
                out=out,
                store=store,
                executor=ex,
                flavour=flavour,
                sender=sender,
                tcp_flavour=tcp_flavour,
                progress=not quiet,
            )
            if sequential:
                from qoslab.experiments.sequential_run import reproduce_sequential

                rep, seq = reproduce_sequential(exp.name, max_seeds=max_seeds, **common)
                typer.echo(
                    f"{exp.name}: sequential, looks at {seq['looks']} seeds, "
                    f"{seq['decided']} of {seq['records']} verdicts decided"
                )
            else:
                rep = experiments.reproduce(exp, seeds=seeds, **common)
        c = rep.comparison
        if not c.empty and not quiet:
            cols = ["source", "quantity", "published", "ours", "inside_ci", "inside_seed_range"]
            view = c[cols].rename(
                columns={
                    "published": "paper",
                    "ours": "ours (mean ± 95% CI)",
                    "inside_ci": "in CI",
                    "inside_seed_range": "in seed range",
                }
            )
            _print_table(Console(), view, f"{exp.name}: comparison with the published numbers")
        s = rep.sweep
        typer.echo(
            f"{exp.name}: {s.total} runs ({s.computed} computed, {s.reused} reused, {len(s.failed)} failed) "
            f"in {rep.wall_time_s:.1f} s; report: {rep.report}"
        )
        _report_failures(s.failed, s.total)
        any_failed = any_failed or bool(s.failed)
        done.append(rep)
    if len(done) > 1 and not quiet:
        _print_table(Console(), reproduction_summary(done), "summary: every experiment of this call")
    if any_failed:
        raise typer.Exit(2)


def reproduction_summary(reps: list[Reproduction]) -> pd.DataFrame:
    """One row per reproduction of a ``reproduce all``: runs (computed, failed), time, how many
    published numbers fall inside our 95 % CI, the verdicts counted (from its ``verdicts.json``)
    and where the report is."""
    import pandas as pd

    from qoslab import verdicts as vd

    rows = []
    for rep in reps:
        c, sw = rep.comparison, rep.sweep
        counts = dict.fromkeys(vd.VERDICTS, 0)
        path = rep.out / "verdicts.json"
        if path.exists():
            for v in vd.read(path)["verdicts"]:
                counts[v["verdict"]] += 1
        tally = "/".join(str(counts[k]) for k in vd.VERDICTS) if path.exists() else "-"
        in_ci = f"{int(c['inside_ci'].fillna(False).astype(bool).sum())}/{len(c)}" if not c.empty else "-"
        rows.append(
            {
                "experiment": rep.experiment.name,
                "runs (computed, failed)": f"{sw.total} ({sw.computed}, {len(sw.failed)})",
                "time": f"{rep.wall_time_s:.0f} s",
                "paper's numbers in our CI": in_ci,
                "verdicts: reproduces/weaker/not/inconclusive/not testable": tally,
                "report": str(rep.report),
            }
        )
    return pd.DataFrame(rows)


def _say_removed(st: Store) -> None:
    if st.removed_temporaries:
        n = len(st.removed_temporaries)
        typer.echo(f"{st.root}: removed {n} temporary file(s) left by a killed writer", err=True)


@app.command()
def results(
    store: StoreOpt = None,
    table: Annotated[
        str,
        typer.Option("--table", help="runs, flows, queues, metrics, attempts, series_queue, series_flow."),
    ] = "runs",
    sweep: Annotated[str | None, typer.Option("--sweep", help="Only runs of this sweep.")] = None,
    scenario: Annotated[
        str | None, typer.Option("--scenario", help="Only runs of this scenario name.")
    ] = None,
    status: Annotated[str | None, typer.Option("--status", help="ok or failed.")] = None,
    version: Annotated[
        str | None, typer.Option("--version", help="Only runs of this qoslab version.")
    ] = None,
    export: Annotated[
        Path | None, typer.Option("--export", help="Write the table to FILE.csv or FILE.parquet.")
    ] = None,
    sweeps: Annotated[bool, typer.Option("--sweeps", help="List the sweeps in the store.")] = False,
    check: Annotated[bool, typer.Option("--check", help="Verify the store's consistency.")] = False,
    migrate: Annotated[
        bool,
        typer.Option("--migrate", help="Bring a store of an older schema to this qoslab's (keeps a backup)."),
    ] = False,
    limit: Annotated[int, typer.Option("--limit", help="Rows to print (0: all).")] = 30,
) -> None:
    """List, check and export the result store (CSV or Parquet)."""
    from rich.console import Console

    from qoslab import results as res_mod
    from qoslab.store import Store

    con = Console()
    with _Errors():
        if status is not None and status not in ("ok", "failed"):
            raise ValueError(f"--status must be ok or failed, got {status!r}")
        if migrate:
            from qoslab.store import default_store
            from qoslab.store import migrate as migrate_store

            old, new, backup = migrate_store(store if store is not None else default_store())
            if backup is None:
                typer.echo(f"result store {store or default_store()} already has schema {new}")
            else:
                where = store or default_store()
                typer.echo(f"migrated result store {where} from schema {old} to {new} (backup: {backup})")
            return
        with Store(store, create=False) as st:
            _say_removed(st)
            if check:
                problems = st.verify()
                n = st.count_runs()
                for p in problems:
                    typer.echo(f"problem: {p}", err=True)
                old = st.unchecksummed()
                if old:
                    typer.echo(
                        f"{st.db_path}: {old} run(s) stored before checksums (schema 2): their time "
                        "series were read as Parquet, not compared with a SHA-256",
                        err=True,
                    )
                if problems:
                    _fail(f"{st.db_path}: {len(problems)} problem(s) in {n} runs")
                typer.echo(f"{st.db_path}: {n} runs, consistent (time series files match their SHA-256)")
                return
            if sweeps:
                df = res_mod.sweeps(st)
            else:
                df = res_mod.load(st, table, sweep=sweep, scenario=scenario, status=status, version=version)
        if export is not None:
            res_mod.export(df, export)
            typer.echo(f"wrote {len(df)} rows to {export}")
            return
    if df.empty:
        typer.echo("no runs match" if not sweeps else "no sweeps in the store")
        return
    if table == "runs" and not sweeps:
        df = res_mod.runs_overview(df)
    shown = df if limit <= 0 else df.tail(limit)
    title = f"{'sweeps' if sweeps else table}: {len(df)} rows" + (
        f" (last {len(shown)}; --limit 0 for all)" if len(shown) < len(df) else ""
    )
    _print_table(con, shown, title)


@app.command()
def schema(
    markdown: Annotated[
        bool, typer.Option("--markdown", help="The scenario reference page instead of the JSON Schema.")
    ] = False,
    python: Annotated[
        str | None,
        typer.Option("--python", help="The builder's classes of one family: queue, meter or source."),
    ] = None,
) -> None:
    """Print the JSON Schema of scenario files (every key, type, unit, default, range), generated
    from the core; --markdown prints docs/scenario-reference.md, --python queue|meter|source the
    builder's classes of that family (python/qoslab/builder_queues.py, builder_meters.py,
    builder_sources.py)."""
    from qoslab import schema as sch

    if python is not None:
        from qoslab import builder_base, builder_source

        if python not in builder_source.MODULES:
            _fail(f"--python takes {', '.join(builder_source.MODULES)}, got {python!r}")
        text = builder_source.kinds_module(sch.json_schema(), builder_base.UNIT_PATTERNS, python)
        typer.echo(text, nl=False)
        return
    typer.echo(sch.reference_markdown() if markdown else sch.json_text(), nl=False)


plot_app = typer.Typer(
    no_args_is_help=True,
    help="Plot one run's time series, or a stored sweep's metric against a swept key (PNG, SVG, PDF).",
)
app.add_typer(plot_app, name="plot")


def _plot_save(make: Callable[[], tuple[Figure, str]], out: Path) -> None:
    from qoslab.plots import PlotError, save

    try:
        fig, prov = make()
        typer.echo(f"wrote {save(fig, out, prov)}")
    except PlotError as e:
        _fail(str(e))
    except OSError as e:
        _fail(f"cannot write {out}: {e.strerror or e}")


@plot_app.command("run")
def plot_run(
    run_dir: Annotated[Path, typer.Argument(help="A directory written by `qoslab run --out DIR`.")],
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Figure file: .png, .svg or .pdf (default DIR/series.png)."),
    ] = None,
    flows: Annotated[
        list[str] | None,
        typer.Option(
            "--flows",
            help="Flows to draw: names, globs ('tcp*') or 'worst N' / 'best N' by throughput "
            "(repeatable or comma-separated; default the first 12).",
        ),
    ] = None,
) -> None:
    """The bottleneck's queue and the averages its discipline keeps (RED's average; RIO's avg_in
    and avg_total), each flow's cwnd (against its receiver window) and throughput over time."""
    from qoslab.plots import run_figure

    warnings: list[str] = []

    def make() -> tuple[Figure, str]:
        fig, prov = run_figure(run_dir, flows or [])
        warnings.append(str(fig.get_label() or ""))  # the sampling warning the cwnd panel shows, or ""
        return fig, prov

    _plot_save(make, out or run_dir / "series.png")
    for w in filter(None, warnings):
        typer.echo(f"warning: {w}", err=True)


@plot_app.command("sweep")
def plot_sweep(
    sweep: Annotated[str, typer.Argument(help="Sweep name in the store (`qoslab results --sweeps`).")],
    metric: Annotated[str, typer.Option("--metric", "-m", help="A stored metric, e.g. fairness_index.")],
    x: Annotated[str, typer.Option("--x", help="The swept key on the horizontal axis.")],
    by: Annotated[str | None, typer.Option("--by", help="Another swept key: one line per value.")] = None,
    store: StoreOpt = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Figure file: .png, .svg or .pdf (default SWEEP-METRIC.png)."),
    ] = None,
    label: Annotated[
        list[str] | None,
        typer.Option("--label", help="KEY=TEXT: name a metric or swept key on the axes (repeatable)."),
    ] = None,
    logx: Annotated[
        bool | None,
        typer.Option(
            "--logx/--linx",
            help="Log or linear x axis (default: log when the swept values are positive and span "
            "20x or more).",
        ),
    ] = None,
) -> None:
    """A stored metric against a swept key: mean and 95% interval over seeds (n per point when
    it differs), a line per --by value."""
    from qoslab.plots import PlotError, parse_labels, sweep_figure
    from qoslab.store import StoreError

    try:
        names = parse_labels(label or [])
    except PlotError as e:
        _fail(str(e))
    try:
        _plot_save(
            lambda: sweep_figure(store, sweep, metric, x=x, by=by, labels=names, logx=logx),
            out or Path(f"{sweep}-{metric}.png"),
        )
    except StoreError as e:
        _fail(str(e))


@app.command("export-ns2")
def export_ns2(
    scenario: Annotated[Path, typer.Argument(help="Scenario file (TOML).")],
    seed: Annotated[int | None, typer.Option(help="Seed (random start times, ns-2's RNG).")] = None,
    set_: Annotated[
        list[str] | None, typer.Option("--set", help="Override a scenario key: KEY=VALUE (repeatable).")
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write the Tcl script here (default: stdout).")
    ] = None,
    trace: Annotated[
        str | None,
        typer.Option(help="Also write ns-2's per-packet trace (trace-all) to this file, beside the script."),
    ] = None,
) -> None:
    """Write an ns-2 Tcl script for a scenario that uses only mechanisms ns-2 has. The script
    writes its results (JSON) and any trace beside itself, wherever it is run from."""
    from qoslab import ns2
    from qoslab.scenario import to_ns2_resolved

    sc = _load(scenario, set_)
    seed = sc.default_seed if seed is None else seed
    resolved = to_ns2_resolved(sc.resolved, seed)
    reason = ns2.unsupported_reason(resolved)
    if reason:
        _fail(f"{scenario}: ns-2 cannot express this scenario: {reason}")
    results = out.with_suffix(".json").name if out else f"{sc.name}-seed{seed}.json"
    tcl = ns2.to_tcl(resolved, seed, results, trace=trace)
    if out is None:
        sys.stdout.write(tcl)
    else:
        out.write_text(tcl)
        extra = f" and the trace {trace}" if trace else ""
        typer.echo(f"wrote {out} (run: ns {out}; it writes {results}{extra} beside it)", err=True)


@app.command()
def crosscheck(
    scenario: Annotated[Path, typer.Argument(help="Scenario file (TOML).")],
    seeds: Annotated[int, typer.Option(help="Number of seeds (1..N) run in both simulators.")] = 10,
    set_: Annotated[
        list[str] | None, typer.Option("--set", help="Override a scenario key: KEY=VALUE (repeatable).")
    ] = None,
    csv: Annotated[Path | None, typer.Option(help="Also write the comparison as CSV.")] = None,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Also write the rows and verdicts as JSON.")
    ] = None,
    flavour: Annotated[
        str,
        typer.Option(
            help="qoslab side against ns-2: 'ns2' (every dsRED mechanism in its ns-2 flavour) or "
            "'reference' (the scenario as written; always so against ns-3)."
        ),
    ] = "ns2",
    against: Annotated[
        str, typer.Option(help="The reference simulator: 'ns2' (ns-2.35) or 'ns3' (ns-3.37).")
    ] = "ns2",
) -> None:
    """Run a scenario in qoslab and in ns-2 (or ns-3 with --against ns3), print the metrics side
    by side and a verdict per metric family. Exit status: 0 all agree, 1 something disagrees, 2
    the reference simulator cannot express the scenario."""
    import pandas as pd
    from rich.console import Console
    from rich.table import Table

    from qoslab import ns2, ns3
    from qoslab.crosscheck import CrosscheckRefused, as_records, verdicts
    from qoslab.crosscheck import crosscheck as run_crosscheck

    if against not in ("ns2", "ns3"):
        _fail(f"--against must be 'ns2' or 'ns3', not {against!r}")
    if against == "ns2" and ns2.ns2_available() is None:
        _fail("ns-2 (`ns`) is not installed: `apt-get install ns2` (or `make ns2`)")
    if against == "ns3" and ns3.ns3_missing():
        _fail(f"ns-3 is not available: {ns3.ns3_missing()}")
    if seeds < 1:
        _fail("--seeds must be at least 1")
    sc = _load(scenario, set_)
    if against == "ns3":
        flavour = "reference"
    con = Console(stderr=True)
    try:
        rows, notes = run_crosscheck(
            sc,
            list(range(1, seeds + 1)),
            progress=lambda m: con.log(m) if con.is_terminal else None,
            flavour=flavour,
            against=against,
        )
    except (ns2.Ns2Error, CrosscheckRefused) as e:
        typer.echo(f"error: {scenario}: {str(e).splitlines()[0]}", err=True)
        raise typer.Exit(2) from None
    except ns3.Ns3Error as e:
        _fail(f"{scenario}: {e}")
    except ValueError as e:
        _fail(str(e))
    ref = "ns-2" if against == "ns2" else "ns-3"
    t = Table(title=f"{sc.name}: qoslab ({flavour} flavour) vs {ref}, {seeds} seeds (mean ± 95 % CI)")
    for c in ("metric", "qoslab", ref, "difference", "verdict"):
        t.add_column(c, justify="right" if c != "metric" else "left")
    for r in rows:
        diff = "" if r.rel_diff != r.rel_diff else f"{r.rel_diff * 100:+.1f} %"
        t.add_row(r.metric, r.qoslab.fmt(4), r.ns2.fmt(4) if r.ns2.n else "n/a", diff, r.verdict)
    out = Console()
    out.print(t)
    for note in notes:
        out.print(f"note: {note}")
    vs = verdicts(rows)
    for v in vs:
        extra = f"; disagree: {', '.join(v.disagree)}" if v.disagree else ""
        if v.noise:
            extra += f"; within noise (more seeds would decide): {', '.join(v.noise)}"
        out.print(f"{v.family}: {v.verdict.upper()} (rows: {v.rows}; {v.worst}{extra})")
    if csv is not None:
        pd.DataFrame(as_records(rows, against)).to_csv(csv, index=False)
    if json_out is not None:
        import json

        from qoslab.crosscheck import as_document

        doc = as_document(rows, notes, scenario=str(scenario), seeds=seeds, flavour=flavour, against=against)
        json_out.write_text(json.dumps(doc, indent=2) + "\n")
    raise typer.Exit(0 if all(v.verdict == "agree" for v in vs) else 1)


class _EmuFlowRow:  # the columns of an emulated run's flows table that `emulate` prints
    name: str
    throughput_bps: float
    green_packets: int
    yellow_packets: int
    red_packets: int
    dropped_packets: int


class _LateSourceRow:  # EmuResult.late_sources()
    name: str
    send_slip_max_s: float
    late_sends: int


@app.command()
def emulate(
    scenario: Annotated[Path | None, typer.Argument(help="Scenario file (TOML).")] = None,
    duration: Annotated[
        float | None, typer.Option(help="Real seconds to run (default: the scenario's duration).")
    ] = None,
    seed: Annotated[
        int | None, typer.Option(help="Seed (start times, RED/TSW draws; default: the scenario's).")
    ] = None,
    set_: Annotated[
        list[str] | None, typer.Option("--set", help="Override a scenario key: KEY=VALUE (repeatable).")
    ] = None,
    out: Annotated[Path | None, typer.Option(help="Write summary.json and CSV tables here.")] = None,
    compare: Annotated[
        bool, typer.Option("--compare", help="Also simulate it and print both side by side.")
    ] = False,
    cc: Annotated[
        str | None,
        typer.Option(
            "--cc",
            help="Congestion control of the TCP senders: reno, cubic or bbr (default: the scenario's "
            "tcp.variant, which it must match).",
        ),
    ] = None,
    window_clamp: Annotated[
        bool,
        typer.Option("--window-clamp", help="Receivers clamp their window at the scenario's TCP window."),
    ] = False,
    cleanup: Annotated[
        bool,
        typer.Option("--cleanup", help="Only remove what emulation runs whose process is gone left behind."),
    ] = False,
    force: Annotated[
        bool, typer.Option("--force", help="With --cleanup: also tear down runs that are still alive.")
    ] = False,
) -> None:
    """Run a scenario on real Linux hosts (network namespaces, kernel TCP) with qoslab's own
    conditioners and queues deciding each packet's fate (root; see docs/emulation.md)."""
    from rich.console import Console
    from rich.table import Table

    from qoslab import emulate as emu
    from qoslab.frames import typed_rows

    con = Console()
    if cleanup:
        if os.geteuid() != 0:
            _fail("emulation cleanup needs root")
        removed = emu.cleanup_stale(all_runs=force)
        con.print("removed: " + (", ".join(removed) if removed else "nothing (no leftovers)"))
        return
    if force:
        _fail("--force goes with --cleanup")
    if scenario is None:
        _fail("a scenario file is required (or --cleanup)")
    if cc is not None and cc not in emu.CONGESTION_CONTROLS:
        _fail(f"--cc: expected one of {', '.join(emu.CONGESTION_CONTROLS)}, got {cc!r}")
    sc = _load(scenario, set_)
    try:
        cc = cc or emu.scenario_cc(sc)
    except emu.EmulationError as e:
        _fail(str(e))
    try:
        res = emu.run(
            sc, seed, duration_s=duration, out=out, cc=cc, window_clamp=window_clamp, log=lambda m: con.log(m)
        )
    except emu.EmulationError as e:
        _fail(str(e))
    except KeyboardInterrupt:
        _fail("interrupted (everything the run created was removed)", 130)
    if compare:
        from qoslab.simulate import run as run_sim

        sim = run_sim(res.scenario, res.seed)
        t = Table(title=f"{sc.name}: simulated vs emulated ({cc}), seed {res.seed}")
        for c in ("quantity", "simulated", "emulated"):
            t.add_column(c, justify="right" if c != "quantity" else "left")
        for row in emu.compare_table(sim, res):
            t.add_row(*row)
        con.print(t)
    else:
        t = Table(title=f"{sc.name} emulated ({cc}), seed {res.seed}")
        for c in ("flow", "throughput (kbps)", "green", "yellow", "red", "drops"):
            t.add_column(c, justify="right")
        for f in typed_rows(res.flows, _EmuFlowRow):
            t.add_row(
                f.name,
                f"{f.throughput_bps / 1e3:.1f}",
                str(f.green_packets),
                str(f.yellow_packets),
                str(f.red_packets),
                str(f.dropped_packets),
            )
        con.print(t)
        con.print(f"Jain index {res.fairness_index:.4f}")
    lat = res.lateness()
    if len(lat):
        con.print(
            f"release lateness over {int(lat['count'].sum())} packets: mean "
            f"{(lat['mean_us'] * lat['count']).sum() / max(lat['count'].sum(), 1):.0f} us, worst p99 "
            f"{lat['p99_us'].max():.0f} us, max {lat['max_us'].max():.0f} us"
        )
    for ls in typed_rows(res.late_sources(), _LateSourceRow):
        # a busy host delayed the source; its catch-up burst is not the scenario's arrivals
        con.print(
            f"[yellow]source of {ls.name} sent {ls.late_sends} packets more than 1 ms late (worst "
            f"{ls.send_slip_max_s * 1e3:.1f} ms): its arrivals differ from the simulated ones[/]"
        )
    if out is not None:
        con.print(f"wrote {out}/summary.json and CSV tables")


#: Metavars of options whose value has a shape of its own (the rest are named after their type).
_METAVARS = {
    "--grid": "KEY=V1,V2,…",
    "--set": "KEY=VALUE",
    "--metric": "MODULE:FUNC",
    "--scheduler": "ADDRESS",
    "--executor": "NAME",
    "--show": "M1,M2,…",
    "--memory": "SIZE",
    "--walltime": "HH:MM:SS",
}


def _plain_metavars(cmd: Any) -> None:
    """Help shows what to type after an option (``N``, ``PATH``, ``KEY=VALUE``) and nothing after
    a flag, instead of Python types (``<bool>``, ``<list[str]>``)."""
    for sub in getattr(cmd, "commands", {}).values():
        _plain_metavars(sub)
    make_help = getattr(cmd, "get_help_option", None)
    if make_help is not None:  # --help is made on demand: a flag, nothing after it

        def help_option(ctx: Any, _make: Any = make_help) -> Any:
            opt = _make(ctx)
            if opt is not None:
                opt.metavar = ""
            return opt

        cmd.get_help_option = help_option
    for prm in getattr(cmd, "params", []):
        # typer's options (its own copy of click's): duck-typed
        if getattr(prm, "param_type_name", "") != "option" or prm.metavar is not None:
            continue
        long = next((o for o in prm.opts if o.startswith("--")), "")
        if getattr(prm, "is_flag", False) or getattr(prm, "count", False):
            prm.metavar = ""
        elif long in _METAVARS:
            prm.metavar = _METAVARS[long]
        else:
            if hasattr(prm, "display_type"):  # typer >= 0.29
                label = str(prm.display_type(None)).strip("<>")  # "int", "path", "list[str]"
            else:  # typer 0.26-0.28: click's parameter types ("integer", "float", "path", "text")
                name = str(getattr(prm.type, "name", ""))
                label = {"integer": "int"}.get(name, name)
            inner = label[5:-1] if label.startswith("list[") else label
            prm.metavar = {"int": "N", "float": "X"}.get(inner, "PATH" if "path" in inner.lower() else "TEXT")


def command_for(args: list[str]) -> Any:
    """The click command of ``qoslab ARGS``: the whole group, built with only the subcommand
    that ``args`` name when their first word is one (``qoslab run …``). typer builds a click
    command from every function's signature when asked for the group (type hints evaluated,
    parameters converted: 30-40 ms for the twelve commands, a tenth of a short run's whole
    process); the subcommand alone is built the same way, from the same definitions. Anything
    else (``qoslab``, ``--help``, ``--version``, a mistyped name that gets suggestions) builds
    them all."""
    first = args[0] if args else ""
    if first and not first.startswith("-"):
        cmds = [
            c
            for c in app.registered_commands
            if (c.name or typer.main.get_command_name(c.callback.__name__ if c.callback else "")) == first
        ]
        groups = [g for g in app.registered_groups if g.name == first]
        if cmds or groups:
            import copy

            one = copy.copy(app)
            one.registered_commands, one.registered_groups = cmds, groups
            return typer.main.get_command(one)
    return typer.main.get_command(app)


def main() -> None:
    import signal

    signal.signal(signal.SIGTERM, run_command.sigterm_as_interrupt)
    cli = command_for(sys.argv[1:])
    _plain_metavars(cli)
    try:
        cli(prog_name="qoslab")
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        sys.exit(130)


if __name__ == "__main__":
    main()
