"""What the commands share: the options declared once (store, executor, cluster, paths), the one-
line error context, the executor factory and the tables they print.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

from qoslab import _core
from qoslab.errors import printable, undecodable
from qoslab.runs.run_command import echo_err
from qoslab.runs.run_command import fail as _fail

if TYPE_CHECKING:  # the commands import what they use when they run (start-up time)
    from collections.abc import Callable, Mapping

    import pandas as pd
    from matplotlib.figure import Figure
    from rich.console import Console

    from qoslab.runs.executors import Executor
    from qoslab.runs.sweep import RunSpec
    from qoslab.store import Store

AllowPathOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--allow-path",
        help="Also let the scenario read files (traces, CDFs) from this folder; by default only "
        "its own folder (repeatable).",
    ),
]


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


class Errors:
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
        from qoslab.reproduction.base import UnknownExperiment
        from qoslab.runs.executors import ExecutorError
        from qoslab.runs.rundir import OutputFolderError
        from qoslab.runs.sweep import GridError
        from qoslab.store import StoreError

        if isinstance(e, _core.ScenarioError):
            _fail(str(e.args[0]))
        if isinstance(e, StoreError | GridError | ExecutorError | UnknownExperiment | OutputFolderError):
            _fail(str(e))
        if isinstance(e, ValueError) and not isinstance(e, UnicodeError):
            _fail(str(e))
        return False


@dataclass(frozen=True, kw_only=True)
class ExecutorOptions:
    """The executor options of ``qoslab sweep`` and ``qoslab reproduce``, as given (``None``: not
    given): which executor runs the runs (``name``) and, for the batch schedulers, the jobs that
    hold its workers."""

    name: str
    jobs: int | None
    scheduler: str | None
    queue: str | None
    account: str | None
    cores: int
    processes: int | None
    memory: str
    walltime: str
    job_extra: list[str] | None
    prologue: list[str] | None
    python: str | None
    interface: str | None
    print_job_script: bool
    scheduler_host: str | None = None
    tls_dir: Path | None = None
    job_logs: Path | None = None
    scheduler_port: int | None = None
    store: Path | None = None
    insecure: bool = False

    @classmethod
    def of_command(cls, params: Mapping[str, Any]) -> ExecutorOptions:
        """The options among a command's parameters (its ``locals()``), each under its field's
        name but ``name``, which the commands take as ``--executor`` (``executor``)."""
        given = {f.name: params[f.name] for f in fields(cls) if f.name != "name"}
        return cls(name=params["executor"], **given)


def executor_from_options(o: ExecutorOptions) -> Executor:
    """The executor ``o`` asks for, or a ValueError naming the option that does not apply; with
    ``--print-job-script``, the job script printed and the command done."""
    from qoslab.runs.executors import JobqueueOptions, check_executor_options, job_script, make_executor

    check_executor_options(o.name, scheduler=o.scheduler, job_script=o.print_job_script)
    if o.tls_dir is not None and o.name not in ("dask", "slurm", "pbs"):
        raise ValueError("--tls-dir needs --executor dask, slurm or pbs")
    for flag, given in (
        ("--scheduler-host", o.scheduler_host),
        ("--scheduler-port", o.scheduler_port),
        ("--job-logs", o.job_logs),
        ("--insecure", True if o.insecure else None),
    ):
        if given is not None and o.name not in ("slurm", "pbs"):
            raise ValueError(f"{flag} needs --executor slurm or pbs")
    opts = None
    if o.name in ("slurm", "pbs"):
        from qoslab.store import default_store

        logs = o.job_logs if o.job_logs is not None else (o.store or default_store()) / "jobs"
        opts = JobqueueOptions(
            queue=o.queue,
            account=o.account,
            cores=o.cores,
            processes=o.processes,
            memory=o.memory,
            walltime=o.walltime,
            jobs=o.jobs or 1,
            job_extra=tuple(o.job_extra or ()),
            prologue=tuple(o.prologue or ()),
            python=o.python,
            interface=o.interface,
            scheduler_host=o.scheduler_host,
            scheduler_port=o.scheduler_port,
            log_directory=str(logs.resolve()),
            tls_dir=str(o.tls_dir) if o.tls_dir is not None else None,
            insecure=o.insecure,
        )
        if o.print_job_script:
            typer.echo(job_script(o.name, opts))
            raise typer.Exit(0)
    return make_executor(o.name, jobs=o.jobs, scheduler=o.scheduler, jobqueue=opts, tls_dir=o.tls_dir)


def report_failures(failed: list[tuple[RunSpec, str]], total: int) -> None:
    if not failed:
        return
    echo_err(f"{len(failed)} of {total} runs failed (after a retry):")
    for spec, err in failed[:20]:
        params = ", ".join(f"{k}={v}" for k, v in spec.params.items())
        echo_err(f"  {spec.scenario.name} [{params}] seed {spec.seed}: {err}")
    if len(failed) > 20:
        echo_err(f"  … and {len(failed) - 20} more (qoslab results --status failed)")


def print_table(con: Console, df: pd.DataFrame, title: str) -> None:
    """A rich table on a terminal; a Markdown table otherwise (logs, pipes)."""
    from qoslab.report.page import fmt_value, markdown_table

    title = printable(title)
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


def say_removed(st: Store) -> None:
    if st.removed_temporaries:
        n = len(st.removed_temporaries)
        echo_err(f"{st.root}: removed {n} temporary file(s) left by a killed writer")


def plot_save(make: Callable[[], tuple[Figure, str]], out: Path) -> None:
    from qoslab.plots import PlotError, save

    try:
        fig, prov = make()
        typer.echo(f"wrote {save(fig, out, prov)}")
    except PlotError as e:
        _fail(str(e))
    except OSError as e:
        _fail(f"cannot write {out}: {e.strerror or e}")


# -- output files -------------------------------------------------------------------------------


def output_file(path: Path | None, option: str) -> None:
    """Refuses in one line, before the command's work, an output file it could not write: a
    folder, or a file whose folder is missing or not writable."""
    if path is None:
        return
    if path.is_dir():
        _fail(f"{option} {path}: is a folder: give a file name")
    parent = path.parent
    if not parent.is_dir():
        why = f"{parent} is not a folder" if parent.exists() else f"no folder {parent}"
        _fail(f"{option} {path}: {why}")
    if not os.access(parent, os.W_OK | os.X_OK):
        _fail(f"{option} {path}: cannot write into {parent}")


def output_folder(path: Path | None, option: str) -> None:
    """Refuses in one line, before the command's work, an output folder it could not create or
    write into: a file, or a folder under a file or an unwritable folder."""
    if path is None:
        return
    if path.exists() and not path.is_dir():
        _fail(f"{option} {path}: is a file, not a folder")
    first = path
    while not first.exists() and first != first.parent:
        first = first.parent
    if not first.is_dir():
        _fail(f"{option} {path}: {first} is a file, not a folder")
    if not os.access(first, os.W_OK | os.X_OK):
        _fail(f"{option} {path}: cannot write into {first}")


@contextmanager
def writing(path: Path, option: str, meanwhile: str = "") -> Iterator[None]:
    """Turns a failure to write ``path`` (a full disk, a folder that went away) into one line;
    ``meanwhile`` says where the command's work is kept."""
    try:
        yield
    except OSError as e:
        _fail(f"{option} {path}: cannot write it ({e.strerror or e}){meanwhile}")


def utf8_text(value: str | None, option: str) -> None:
    """Refuses in one line an option's text that is not UTF-8 (bytes a shell passed through,
    which the store and the core cannot record)."""
    if value is not None and (shown := undecodable(value)) is not None:
        _fail(f"{option} {shown!r}: not UTF-8 text")
