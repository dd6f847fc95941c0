"""``qoslab reproduce``: a paper's experiment, or all of them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from qoslab.cli.app import app
from qoslab.cli.common import (
    AccountOpt,
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
    print_table,
    report_failures,
)

if TYPE_CHECKING:  # the commands import what they use when they run (start-up time)
    import pandas as pd

    from qoslab.reproduction.base import Experiment
    from qoslab.reproduction.handover import HandOver
    from qoslab.reproduction.runner import Reproduction
    from qoslab.runs.executors import Executor
    from qoslab.runs.sweep import SweepReport


SeedsOpt = Annotated[
    int | None,
    typer.Option(
        "--seeds",
        help="Fixed seeds: N seeds per point, every verdict from its 95 % t interval (default: "
        "sequential seeds where the claims declare magnitudes, else the experiment's seeds).",
    ),
]

TimingOpt = Annotated[
    str | None,
    typer.Option(
        "--timing",
        help="The host timing noise of every run (timing.jitter): testbed (the kernel testbed's, "
        "the linux flavour's validated configuration), exact, or a bound such as 50us; outputs go "
        "to OUT/NAME-timing-TIMING/. Default: each scenario's own (exact).",
    ),
]
SequentialOpt = Annotated[
    bool,
    typer.Option(
        "--sequential",
        help="Seeds in rounds of two from 4 (looks declared in advance), each verdict from a "
        "group-sequential t interval (alpha split equally over the looks: valid at every look), "
        "stopping once every verdict is decided or stopped for futility, or at "
        "--max-seeds. The default of a full run (no --seeds, no --quick) where the claims "
        "declare magnitudes; give it to run --quick so.",
    ),
]

NoFutilityOpt = Annotated[
    bool,
    typer.Option(
        "--no-futility",
        help="Sequential: run every undecided verdict to the cap instead of stopping it once "
        "the cap is unlikely to decide it.",
    ),
]


@app.command()
def reproduce(
    name: Annotated[
        str | None, typer.Argument(help="Experiment name (see --list), or `all` for every one in turn.")
    ] = None,
    list_: Annotated[bool, typer.Option("--list", help="List the experiments and exit.")] = False,
    seeds: SeedsOpt = None,
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
    timing: TimingOpt = None,
    sequential: SequentialOpt = False,
    no_futility: NoFutilityOpt = False,
    max_seeds: Annotated[
        int | None,
        typer.Option("--max-seeds", help="--sequential: the cap on seeds (default: the experiment's)."),
    ] = None,
    warmup: Annotated[
        str | None,
        typer.Option(
            "--warmup",
            help="mser5: measure each point from the warm-up MSER-5 finds in a pilot run (outputs go to "
            "OUT/NAME-mser5/); only where the measurement window is ours: refused where the paper fixes it.",
        ),
    ] = None,
) -> None:
    """Reproduce a paper's experiment: runs, statistics over seeds, tables, figures, report.md."""
    from rich.console import Console

    from qoslab import reproduction

    with Errors(resumable=True):
        if list_:
            for e in reproduction.available():
                typer.echo(f"{e.name:<16} {e.title} ({e.seeds} seeds; --quick: {e.quick_seeds})")
            return
        exps, sequential = _mode(name, sender, seeds, quick, sequential, max_seeds, warmup, no_futility)
        _check_folders(exps, out, quick, flavour, sender, tcp_flavour, warmup, timing)
        ex = executor_from_options(ExecutorOptions.of_command(locals()))
    from qoslab.reproduction.handover import HandOver
    from qoslab.reproduction.remembered_plans import remembered
    from qoslab.runs import schedule
    from qoslab.runs.local_pool import kept_workers

    # one pool of workers serves every look and experiment of this call; each plan is made once
    with kept_workers(), remembered():
        with Errors():
            one_sweep = len(exps) > 1 and not sequential and schedule.mode() == "longest"
        if one_sweep:
            _compute_all(
                exps,
                store,
                ex,
                quiet,
                seeds=seeds,
                quick=quick,
                flavour=flavour,
                sender=sender,
                tcp_flavour=tcp_flavour,
                timing=timing,
            )
        common: dict[str, Any] = dict(
            quick=quick,
            out=out,
            store=store,
            executor=ex,
            flavour=flavour,
            sender=sender,
            tcp_flavour=tcp_flavour,
            timing=timing,
            progress=not quiet,
            **({"warmup": warmup} if warmup is not None else {}),
        )
        plan_kw = dict(quick=quick, flavour=flavour, sender=sender, tcp_flavour=tcp_flavour, timing=timing)
        handover = HandOver(ex, store, plan_kw, enabled=len(exps) > 1 and warmup is None and not one_sweep)
        done, any_failed = _reproduce_each(
            exps, handover, common, sequential, max_seeds, seeds, not no_futility, quiet
        )
        if len(done) > 1 and not quiet:
            print_table(Console(), reproduction_summary(done), "summary: every experiment of this call")
        if any_failed:
            raise typer.Exit(2)


def _reproduce_each(
    exps: list[Experiment],
    handover: HandOver,
    common: dict[str, Any],
    sequential: bool,
    max_seeds: int | None,
    seeds: int | None,
    futility: bool,
    quiet: bool,
) -> tuple[list[Reproduction], bool]:
    """Each experiment of ``exps`` in turn, each handing over to the next
    (:mod:`qoslab.reproduction.handover`); the reproductions, and whether a run failed."""
    any_failed = False
    done: list[Reproduction] = []
    try:
        for i, exp in enumerate(exps):
            handover.stop()  # the previous experiment's hand-over: its runs are stored now
            nxt = exps[i + 1] if i + 1 < len(exps) else None
            start_next = handover.starter(nxt, _first_seeds(nxt, sequential) if nxt is not None else None)
            with Errors(resumable=True):
                rep = _reproduce_one(
                    exp,
                    sequential and len(exps) > 1,
                    sequential,
                    max_seeds,
                    seeds,
                    common,
                    futility,
                    start_next,
                )
            s = _say_reproduction(rep, quiet)
            any_failed = any_failed or bool(s.failed)
            done.append(rep)
    finally:
        handover.stop()
        for e in handover.errors:  # the next experiment computed those runs itself
            typer.echo(f"computing the next experiment's first runs ahead failed ({e}); it computed them")
    return done, any_failed


def _check_folders(
    exps: list[Experiment],
    out: Path,
    quick: bool,
    flavour: str | None,
    sender: str | None,
    tcp_flavour: str | None,
    warmup: str | None,
    timing: str | None = None,
) -> None:
    """Each experiment's ``OUT/NAME``, checked before any run (a symbolic link, or a folder of
    files qoslab did not write, is refused in one line: :func:`qoslab.runs.rundir.check_reproduction`)."""
    from qoslab.reproduction.base import Options
    from qoslab.reproduction.planning import out_name
    from qoslab.runs.rundir import check_reproduction

    tcp = None if tcp_flavour == "ns2" else tcp_flavour
    for exp in exps:
        opts = Options(
            quick=quick,
            seeds=[],
            flavour=flavour,
            sender=sender,
            tcp_flavour=tcp,
            warmup=warmup,
            timing=timing,
        )
        d = out / out_name(exp.name, opts)
        check_reproduction(d, d.name)


def _first_seeds(exp: Experiment, sequential: bool) -> int | None:
    """The seeds of ``exp``'s first runs in a ``reproduce all`` (None: its fixed seeds), which
    the previous experiment hands over (:mod:`qoslab.reproduction.handover`)."""
    from qoslab.reproduction.sequential_run import FIRST

    return FIRST if sequential and _has_magnitudes(exp.name) else None


def _reproduce_one(
    exp: Experiment,
    in_all: bool,
    sequential: bool,
    max_seeds: int | None,
    seeds: int | None,
    common: dict[str, Any],
    futility: bool = True,
    start_next: Callable[[], None] | None = None,
) -> Reproduction:
    """One experiment: sequential (within ``all``, an experiment without declared magnitudes
    runs its fixed seeds instead, and says so) or with fixed seeds. ``start_next`` is called
    once its runs are all stored (the hand-over to the next experiment)."""
    from qoslab import reproduction

    if in_all and not _has_magnitudes(exp.name):
        typer.echo(
            f"{exp.name}: declares no claim magnitudes, so no sequential verdicts: "
            f"its fixed {exp.seeds} seeds"
        )
        return reproduction.reproduce(exp, after_runs=start_next, **common)
    elif sequential:
        from qoslab.reproduction.sequential_run import reproduce_sequential

        rep, seq = reproduce_sequential(
            exp.name, max_seeds=max_seeds, futility=futility, when_decided=start_next, **common
        )
        futile = seq.get("stopped_for_futility", 0)
        typer.echo(
            f"{exp.name}: sequential, looks at {seq['looks']} seeds, "
            f"{seq['decided']} of {seq['records']} verdicts decided"
            + (f", {futile} stopped for futility" if futile else "")
            + f"; {seq['runs']} distinct runs (every sweep to the last look: {seq['runs_all_or_nothing']})"
        )
        return rep
    return reproduction.reproduce(exp, seeds=seeds, after_runs=start_next, **common)


def _mode(
    name: str | None,
    sender: str | None,
    seeds: int | None,
    quick: bool,
    sequential: bool,
    max_seeds: int | None,
    warmup: str | None,
    no_futility: bool,
) -> tuple[list[Experiment], bool]:
    """The experiments to run and whether sequentially: a full run decides its verdicts
    sequentially unless --seeds fixes them (or --warmup is asked); --quick only with
    --sequential; a single study without declared magnitudes runs its fixed seeds."""
    explicit = sequential
    sequential = sequential or (not quick and seeds is None and warmup is None)
    exps = _chosen(name, sender, seeds, sequential, max_seeds, warmup)
    if no_futility and not sequential:
        raise ValueError(
            "--no-futility goes with sequential seeds (a full run without --seeds, or --sequential)"
        )
    if len(exps) == 1 and sequential and not _has_magnitudes(exps[0].name):
        if explicit or max_seeds is not None or no_futility:
            raise ValueError(
                f"experiment {exps[0].name} declares no claim magnitudes: --sequential needs them"
            )
        sequential = False
    return exps, sequential


def _has_magnitudes(name: str) -> bool:
    from qoslab.verdicts.magnitudes import DECLARED

    return bool(DECLARED.get(name))


def _chosen(
    name: str | None,
    sender: str | None,
    seeds: int | None,
    sequential: bool,
    max_seeds: int | None,
    warmup: str | None = None,
) -> list[Experiment]:
    """The experiments ``name`` names (``all``: every one; with ``--sender``, those that do
    not choose their own senders), once the seed options are consistent."""
    from qoslab import reproduction

    if name is None:
        raise ValueError("name an experiment (qoslab reproduce --list shows them)")
    exps = reproduction.available() if name == "all" else [reproduction.get(name)]
    if sender is not None and name == "all":
        exps = [e for e in exps if not e.own_senders]
    if seeds is not None and seeds < 1:
        raise ValueError(f"--seeds must be at least 1, got {seeds}")
    if sequential and seeds is not None:
        raise ValueError("--sequential chooses the seeds itself: give --max-seeds, not --seeds")
    if max_seeds is not None and not sequential:
        raise ValueError(
            "--max-seeds goes with sequential seeds (a full run without --seeds, or --sequential)"
        )
    if warmup is not None:
        from qoslab.reproduction.warmup_window import check as check_warmup

        if name == "all":
            raise ValueError("--warmup applies to one experiment whose measurement window is ours: name it")
        check_warmup(exps[0], warmup)
    return exps


def _compute_all(exps: list[Experiment], store: Path | None, ex: Executor, quiet: bool, **kw: Any) -> None:
    """Every experiment's runs in one sweep, longest first (:mod:`qoslab.runs.schedule`): no core
    idles at the end of one experiment while the next waits; each reproduction then reuses them."""
    from qoslab.reproduction.planning import compute_all
    from qoslab.store import Store

    with Errors(resumable=True):
        st = Store(store)
        try:
            pre = compute_all(
                exps,
                store=st,
                executor=ex,
                progress=not quiet,
                **kw,
            )
        finally:
            st.close()
    typer.echo(
        f"all experiments' runs, longest first: {pre.total} runs ({pre.computed} computed, "
        f"{pre.reused} reused, {len(pre.failed)} failed) in {pre.wall_time_s:.1f} s; "
        "each experiment below reuses them (a failed run is tried again there)"
    )


def _say_reproduction(rep: Reproduction, quiet: bool) -> SweepReport:
    """Prints a reproduction's comparison with the published numbers and its closing line."""
    from rich.console import Console

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
        print_table(Console(), view, f"{rep.experiment.name}: comparison with the published numbers")
    s = rep.sweep
    typer.echo(
        f"{rep.experiment.name}: {s.total} runs ({s.computed} computed, {s.reused} reused, "
        f"{len(s.failed)} failed) in {rep.wall_time_s:.1f} s; report: {rep.report}"
    )
    report_failures(s.failed, s.total)
    return s


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
