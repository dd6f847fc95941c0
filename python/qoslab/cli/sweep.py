"""``qoslab sweep``: a scenario over a grid and seeds, into the store (resumable)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from qoslab import _core
from qoslab.cli.app import app
from qoslab.cli.common import (
    AccountOpt,
    AllowPathOpt,
    CoresOpt,
    Errors,
    ExecutorOpt,
    ExecutorOptions,
    InsecureOpt,
    InterfaceOpt,
    JobExtraOpt,
    JobLogsOpt,
    JobsOpt,
    MemoryOpt,
    PrintScriptOpt,
    ProcessesOpt,
    PrologueOpt,
    PythonOpt,
    QueueOpt,
    QuietOpt,
    SchedulerHostOpt,
    SchedulerOpt,
    SchedulerPortOpt,
    StoreOpt,
    TlsDirOpt,
    WalltimeOpt,
    executor_from_options,
    output_folder,
    print_table,
    report_failures,
    say_removed,
    utf8_text,
    writing,
)
from qoslab.runs.run_command import fail as _fail
from qoslab.runs.run_command import load as _load

#: The most retries of a failing run (each is recorded in the store's attempts).
MAX_RETRIES = 100


@app.command()
def sweep(
    scenario: Annotated[Path, typer.Argument(help="Scenario file (TOML).")],
    grid: Annotated[
        list[str] | None, typer.Option("--grid", help="KEY=V1,V2,... over any scenario key (repeatable).")
    ] = None,
    seeds: Annotated[
        int,
        typer.Option(
            "--seeds",
            help="Number of seeds per grid point (at most 100,000; at most 1,000,000 runs, grid "
            "points times seeds, in one sweep).",
        ),
    ] = 1,
    first_seed: Annotated[
        int, typer.Option("--first-seed", help="First seed (seeds are consecutive, 0 to 2^63 - 1).")
    ] = 1,
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
            help="Start the sweep name afresh when the store has it with another grid, scenario or "
            "--set: the runs listed under the name are dropped from it (they stay in the store, "
            "and are reused where this sweep asks for them).",
        ),
    ] = False,
) -> None:
    """Run a scenario over a parameter grid and seeds; stored runs are skipped (resumable)."""
    from rich.console import Console

    from qoslab.runs import sweep as sw
    from qoslab.stats import mean_ci_table, seed_ranges
    from qoslab.store import Store, SweepIdentity

    output_folder(out, "--out")
    if out is not None and (other := sw.foreign_table(out)) is not None:
        _fail(f"--out {out}: {other.name} there is not a table a sweep wrote; give another folder")
    utf8_text(name, "--name")
    if not 0 <= retries <= MAX_RETRIES:
        _fail(f"--retries: from 0 to {MAX_RETRIES}, got {retries}")
    with Errors(resumable=True):
        axes = sw.parse_axes(grid or [])
        from_file = _load(scenario, None, allow_path)
        base = from_file.with_overrides(set_ or [], via="--set")
        identity = SweepIdentity(from_file.sha256(), str(scenario), tuple(set_ or ()))
        points = sw.override_points(base, axes)
        seed_values = sw.seed_list(seeds, first_seed)
        label = name or base.name
        specs = sw.plan(points, seed_values, label, tuple(metric or ()))
        ex = executor_from_options(ExecutorOptions.of_command(locals()))
        show_metrics = sw.parse_metric_names(show, metric or ())
        with Store(store) as st:
            say_removed(st)
            rep = sw.run_sweep(
                specs,
                st,
                ex,
                retries=retries,
                label=label,
                progress=not quiet,
                grid=axes,
                identity=identity,
                replace_grid=replace,
            )
            if rep.memberships_dropped:
                typer.echo(
                    f"sweep {label}: --replace dropped {rep.memberships_dropped} run membership(s) of the "
                    "name (the runs stay in the store)",
                    err=True,
                )
            runs = sw.sweep_runs(st, specs, axes)
        by = sw.axis_columns(runs, axes)
        stats = sw.sweep_statistics(runs, show_metrics, by=by)
        if stats is not None and not quiet:
            print_table(
                Console(),
                mean_ci_table(stats, show_metrics, by=by),
                f"sweep {label}: {base.name}, seeds {seed_ranges(seed_values)}, qoslab {_core.__version__} "
                "(mean ± 95% CI half-width over seeds)",
            )
        if stats is not None and out is not None:
            with writing(out, "--out", f"; the runs are in the store {st.db_path}"):
                sw.write_sweep_tables(out, runs, stats)
            typer.echo(f"wrote {out}/runs.csv and {out}/stats.csv")
        typer.echo(
            f"{rep.total} runs: {rep.computed} computed, {rep.reused} reused from the store, "
            f"{len(rep.failed)} failed; {rep.wall_time_s:.1f} s; store {st.db_path}"
        )
    report_failures(rep.failed, rep.total)
    if rep.failed:
        raise typer.Exit(2)
