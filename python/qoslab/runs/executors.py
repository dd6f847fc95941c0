"""Where the runs of a sweep are computed.

Every executor takes :class:`~qoslab.runs.tasks.RunTask` values and calls ``on_done(task, output)``
in the coordinator's thread for each result; ``on_done`` returns the tasks to submit next (a
retry). Workers never touch the store's database (one that sees the store writes its series files).

- :class:`LocalExecutor`: a pool of worker processes on this machine (default: all cores). A
  worker that dies (a crash, the OOM killer) fails only the run it was computing and is replaced.
- :class:`SerialExecutor`: in this process, one run at a time (debugging).
  These two live in :mod:`qoslab.runs.local_pool` and are re-exported here.
- :class:`DaskExecutor`: an existing Dask cluster (``tcp://HOST:PORT``) or a given client.
- :class:`JobqueueExecutor`: a Slurm or PBS cluster started through dask-jobqueue
  (:func:`build_jobqueue_cluster` builds it; ``job_script()`` shows what would be submitted).
"""

from __future__ import annotations

import contextlib
import dataclasses
import getpass
import logging
import re
import shutil
import signal
import subprocess
import sys
import time
import uuid
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qoslab.runs import huge_pages
from qoslab.runs.local_pool import (
    EXECUTORS,
    Executor,
    ExecutorError,
    LocalExecutor,
    OnDone,
    SerialExecutor,
)
from qoslab.runs.tasks import RunTask, execute, failure
from qoslab.runs.worker_tls import WORKER_HOST_VAR, TlsSetupError, sweep_certificates, worker_host_line

__all__ = [
    "EXECUTORS",
    "DaskExecutor",
    "Executor",
    "ExecutorError",
    "JobqueueExecutor",
    "JobqueueOptions",
    "LocalExecutor",
    "OnDone",
    "SerialExecutor",
    "build_jobqueue_cluster",
    "check_executor_options",
    "check_worker_versions",
    "dask_security",
    "job_script",
    "jobqueue_kwargs",
    "make_executor",
]

# -- Dask ------------------------------------------------------------------------------------------


def _require_dask() -> None:
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise ExecutorError(
            "the Dask executors need the optional dependencies: pip install 'qoslab[dask]'"
        ) from None


#: The files of a TLS directory (``--tls-dir``): the certificate authority, and one certificate
#: with its key that the scheduler, the workers and the client all present.
TLS_FILES = ("ca.pem", "cert.pem", "key.pem")


def dask_security(tls_dir: str | Path) -> Any:
    """Dask's ``Security`` for mutual TLS from ``tls_dir`` (``ca.pem``, ``cert.pem``,
    ``key.pem``; e.g. made by ``openssl``): every connection is encrypted and only holders of a
    certificate signed by the CA can connect, so the scheduler cannot be handed pickled code by
    anyone else on the network."""
    _require_dask()
    from distributed.security import Security

    d = Path(tls_dir)
    missing = [f for f in TLS_FILES if not (d / f).is_file()]
    if missing:
        raise ExecutorError(f"--tls-dir {d}: missing {', '.join(missing)} (expected {', '.join(TLS_FILES)})")
    ca, cert, key = (str((d / f).resolve()) for f in TLS_FILES)
    return Security(
        tls_ca_file=ca,
        tls_client_cert=cert,
        tls_client_key=key,
        tls_scheduler_cert=cert,
        tls_scheduler_key=key,
        tls_worker_cert=cert,
        tls_worker_key=key,
        require_encryption=True,
    )


class DaskExecutor:
    """Submits every run as a Dask task to a running cluster: ``scheduler`` is its address
    (``tcp://HOST:PORT``, or ``tls://HOST:PORT`` with ``tls_dir``), or pass a ``client``.
    Exceptions and lost workers become failed outputs; the coordinator decides on retries."""

    def __init__(
        self,
        scheduler: str | None = None,
        *,
        client: Any = None,
        connect_timeout: float = 15.0,
        tls_dir: str | Path | None = None,
    ):
        if scheduler is None and client is None:
            raise ExecutorError("the dask executor needs --scheduler tcp://HOST:PORT")
        _require_dask()
        self.scheduler = scheduler
        self.client = client
        self.connect_timeout = connect_timeout
        self.security = dask_security(tls_dir) if tls_dir is not None else None
        if self.security is not None and scheduler is not None and not scheduler.startswith("tls://"):
            raise ExecutorError(f"--tls-dir needs a tls:// scheduler address, got {scheduler}")
        if self.security is None and scheduler is not None and scheduler.startswith("tls://"):
            import dask

            if not dask.config.get("distributed.comm.tls.ca-file", None):
                raise ExecutorError(
                    f"the scheduler {scheduler} speaks TLS: give --tls-dir DIR (ca.pem, cert.pem, key.pem)"
                )

    def describe(self) -> str:
        if self.client is not None:
            return f"dask ({self.client.scheduler.address})"
        return f"dask ({self.scheduler})"

    def _connect(self) -> Any:
        from distributed import Client

        try:
            return Client(
                self.scheduler, timeout=self.connect_timeout, set_as_default=False, security=self.security
            )
        except (OSError, TimeoutError, ValueError, TypeError) as e:
            msg = str(e).splitlines()[0] if str(e) else type(e).__name__
            raise ExecutorError(f"cannot connect to the Dask scheduler at {self.scheduler}: {msg}") from None

    def run(
        self,
        tasks: Iterable[RunTask],
        on_done: OnDone,
        *,
        supervise: Callable[[int], None] | None = None,
    ) -> None:
        """Submits ``tasks`` and hands each output to ``on_done``. ``supervise(finished)`` is
        called about once a second with the number of runs finished so far; an exception it
        raises ends the sweep (runs already handed to ``on_done`` are kept)."""
        from distributed import as_completed

        client = self.client if self.client is not None else self._connect()
        futures: dict[Any, RunTask] = {}
        finished = 0

        def submit(t: RunTask) -> Any:
            f = client.submit(
                execute, t, pure=False, key=f"qoslab-run-{t.key.slug()}-a{t.attempt}-{uuid.uuid4().hex[:8]}"
            )
            futures[f] = t
            return f

        try:
            todo = list(tasks)
            if todo:
                check_worker_versions(client, todo[0].key.version, supervise=supervise)
            ac = as_completed([submit(t) for t in todo], loop=client.loop)
            last_check = time.monotonic()
            while not ac.is_empty():
                batch = ac.next_batch(block=False) if ac.has_ready() else []
                if not batch:
                    if supervise is not None and time.monotonic() - last_check >= 1.0:
                        supervise(finished)
                        last_check = time.monotonic()
                    time.sleep(0.05)
                    continue
                for f in batch:
                    t = futures.pop(f)
                    try:
                        out = f.result()
                    except Exception as e:  # noqa: BLE001 — KilledWorker, lost data, cancelled …
                        name = type(e).__name__
                        what = "worker died" if name == "KilledWorker" else "task failed"
                        msg = str(e).splitlines()[0] if str(e) else ""
                        out = failure(t, f"{what} ({name}: {msg})", worker="dask")
                    f.release()
                    finished += 1
                    for r in on_done(t, out):
                        ac.add(submit(r))
        finally:
            for f in list(futures):
                with contextlib.suppress(Exception):
                    f.cancel()
            if self.client is None:
                with contextlib.suppress(Exception):
                    client.close()


def _worker_identity() -> tuple[str, str]:
    """Run on a worker: the qoslab version it imports and the Python running it."""
    from qoslab import _core

    return str(_core.__version__), sys.executable


def check_worker_versions(
    client: Any, version: str, *, supervise: Callable[[int], None] | None = None, poll: float = 1.0
) -> None:
    """Waits for the first worker (calling ``supervise(0)`` while it waits, so that a batch
    executor can give up on jobs that die), then asks every connected worker which qoslab it
    imports: a worker that cannot import qoslab, or imports another version than ``version``,
    stops the sweep with one line before any run is submitted. Workers that join later are
    checked run by run (a run computed by another version is refused by the sweep)."""
    while not client.scheduler_info(n_workers=-1)["workers"]:
        if supervise is not None:
            supervise(0)
        time.sleep(poll)
    try:
        seen = client.run(_worker_identity)
    except Exception as e:  # noqa: BLE001 — ImportError on the worker, a worker that left …
        msg = str(e).splitlines()[0] if str(e) else ""
        raise ExecutorError(
            f"a Dask worker cannot run qoslab ({type(e).__name__}: {msg}): install this qoslab "
            f"({version}) where the workers run, or point them at it (--python, --prologue)"
        ) from None
    wrong = {addr: v for addr, v in seen.items() if v[0] != version}
    if wrong:
        addr, (v, py) = next(iter(sorted(wrong.items())))
        raise ExecutorError(
            f"worker {addr} runs qoslab {v} ({py}), this process {version}: "
            f"{len(wrong)} of {len(seen)} workers differ; install the same qoslab on the workers "
            "(or point them at it with --python/--prologue)"
        )


# -- Slurm / PBS through dask-jobqueue -------------------------------------------------------------


@dataclass
class JobqueueOptions:
    """One batch job per ``jobs``; each job runs ``processes`` single-threaded Dask workers on
    ``cores`` cores. ``prologue`` lines run before the worker (e.g. ``source .venv/bin/activate``
    or ``module load python``); ``job_extra`` are extra ``#SBATCH``/``#PBS`` directives.
    ``scheduler_host``/``scheduler_port`` are where this process's Dask scheduler listens (port
    0 or None: a free port chosen at start, so the job script's address is known only then);
    ``log_directory`` receives each job's output, and the sweep's own TLS certificates unless
    ``tls_dir`` gives them or ``insecure=True`` goes without (workers bind one address)."""

    queue: str | None = None
    account: str | None = None
    cores: int = 1
    processes: int | None = None
    memory: str = "2GB"
    walltime: str = "01:00:00"
    jobs: int = 1
    job_extra: Sequence[str] = field(default_factory=tuple)
    prologue: Sequence[str] = field(default_factory=tuple)
    python: str | None = None
    interface: str | None = None
    scheduler_host: str | None = None
    scheduler_port: int | None = None
    local_directory: str | None = None
    log_directory: str | None = None
    tls_dir: str | None = None
    insecure: bool = False


#: Where the dashboard of a scheduler qoslab starts listens: this machine only (reach it through
#: an SSH tunnel).
DASHBOARD_ADDRESS = "127.0.0.1:8787"


#: The most memory a job may ask for, bytes (1 PiB).
MAX_JOB_MEMORY = 2**50
_WALLTIME = re.compile(r"^(\d{1,4}):([0-5]\d):([0-5]\d)$")


def check_job_memory(memory: str) -> None:
    """Refuses (:class:`ExecutorError`, one line) a ``--memory`` the job script cannot carry: a
    size as dask-jobqueue reads it (``2GB``, ``512MiB``, ``16G``), above zero, at most 1 PiB."""
    from dask.utils import parse_bytes  # dask-jobqueue's own reader of it

    try:
        size = parse_bytes(memory)
    except (ValueError, TypeError):
        raise ExecutorError(f"--memory: expected a size such as 2GB, 16G or 512MiB, got {memory!r}") from None
    if not 1 <= size <= MAX_JOB_MEMORY:
        raise ExecutorError(f"--memory: expected from 1 B to 1 PiB a job, got {memory!r}")


def check_walltime(walltime: str) -> None:
    """Refuses (:class:`ExecutorError`, one line) a ``--walltime`` that is not ``HH:MM:SS`` (the
    form Slurm and PBS both take; hours past 24 for days) of at least a second."""
    m = _WALLTIME.match(walltime)
    if m is None or not any(int(g) for g in m.groups()):
        raise ExecutorError(
            f"--walltime: expected a time limit such as 01:00:00 or 48:00:00 (HH:MM:SS), got {walltime!r}"
        )


def jobqueue_kwargs(opts: JobqueueOptions) -> dict[str, Any]:
    """The keyword arguments of dask-jobqueue's ``SLURMCluster``/``PBSCluster`` for ``opts``."""
    if opts.cores < 1:
        raise ExecutorError(f"--cores must be at least 1, got {opts.cores}")
    processes = opts.processes or opts.cores
    if processes < 1 or processes > opts.cores:
        raise ExecutorError(f"--processes must be between 1 and --cores ({opts.cores}), got {processes}")
    if opts.jobs < 1:
        raise ExecutorError(f"--jobs must be at least 1, got {opts.jobs}")
    check_job_memory(opts.memory)
    check_walltime(opts.walltime)
    python = opts.python or sys.executable
    # dask-worker and its HTTP server bind every interface unless told: here --interface's address
    # or that of the node's route to the scheduler (found as the job starts)
    host, route = f"${WORKER_HOST_VAR}", opts.scheduler_host or "127.0.0.1"
    # huge pages first (the user's prologue may set the tunable otherwise), the address last
    prologue = [
        huge_pages.job_line(),
        *opts.prologue,
        worker_host_line(python, scheduler_host=route, interface=opts.interface),
    ]
    worker_args = ["--no-dashboard", "--dashboard-address", f"{host}:0"]
    if opts.interface is None:
        worker_args += ["--host", host]
    kw: dict[str, Any] = {
        "cores": opts.cores,
        "processes": processes,
        "memory": opts.memory,
        "walltime": opts.walltime,
        "python": python,
        "job_name": "qoslab-worker",
        "job_extra_directives": list(opts.job_extra),
        "job_script_prologue": prologue,
        "worker_extra_args": worker_args,
    }
    for name in ("queue", "account", "interface", "local_directory", "log_directory"):
        v = getattr(opts, name)
        if v is not None:
            kw[name] = v
    # The scheduler qoslab starts listens where the user said (--scheduler-host, --interface)
    # and nowhere else: on 127.0.0.1 when neither is given, never on every interface.
    sched: dict[str, Any] = {"dashboard_address": DASHBOARD_ADDRESS}
    if opts.scheduler_port is not None:
        if not 0 <= opts.scheduler_port <= 65535:
            raise ExecutorError(f"--scheduler-port must be between 0 and 65535, got {opts.scheduler_port}")
        sched["port"] = opts.scheduler_port
    if opts.scheduler_host is not None:
        sched["host"] = opts.scheduler_host
    elif opts.interface is None:
        sched["host"] = "127.0.0.1"
    kw["scheduler_options"] = sched
    if opts.tls_dir is not None:
        if opts.insecure:
            raise ExecutorError("--insecure and --tls-dir contradict each other: give one of them")
        kw["security"] = dask_security(opts.tls_dir)
        kw["protocol"] = "tls://"
    return kw


@contextlib.contextmanager
def _sweep_tls(opts: JobqueueOptions) -> Iterator[JobqueueOptions]:
    """``opts``, given certificates made in its log directory for the sweep if it has none."""
    if opts.tls_dir is not None or opts.insecure:
        yield opts
        return
    if opts.log_directory is None:
        raise ExecutorError(
            "the workers need TLS certificates on a file system they read: give a log directory "
            "(the sweep's certificates are made there), --tls-dir DIR, or --insecure"
        )
    try:
        with sweep_certificates(opts.log_directory) as certs:
            yield dataclasses.replace(opts, tls_dir=str(certs))
    except TlsSetupError as e:
        raise ExecutorError(str(e)) from None


def build_jobqueue_cluster(kind: str, opts: JobqueueOptions) -> Any:
    """A dask-jobqueue ``SLURMCluster`` (``kind="slurm"``) or ``PBSCluster`` (``"pbs"``) with no
    job submitted yet; its ``job_script()`` is what ``scale`` would submit."""
    _require_dask()
    # importing dask_jobqueue (its runner module) replaces the process's Ctrl-C handler with one
    # that calls sys.exit(): a sweep's Ctrl-C would skip its "interrupted, resumable" handling
    ctrl_c = signal.getsignal(signal.SIGINT)
    try:
        from dask_jobqueue.pbs import PBSCluster
        from dask_jobqueue.slurm import SLURMCluster
    except ImportError:
        raise ExecutorError(
            "the slurm/pbs executors need dask-jobqueue: pip install 'qoslab[dask]'"
        ) from None
    finally:
        signal.signal(signal.SIGINT, ctrl_c)
    classes = {"slurm": SLURMCluster, "pbs": PBSCluster}
    if kind not in classes:
        raise ExecutorError(f"unknown batch system {kind!r} (expected slurm or pbs)")
    if opts.tls_dir is None and not opts.insecure:
        raise ExecutorError(
            f"{kind} cluster without TLS: give tls_dir (e.g. made by "
            "qoslab.runs.worker_tls.make_certificates) or insecure=True"
        )
    try:
        with warnings.catch_warnings():
            # A second sweep on the machine finds the dashboard's port taken; distributed then
            # serves it on another port (the cluster's dashboard_link) and says so with a
            # warning that would break the sweep's one-line messages.
            warnings.filterwarnings("ignore", message=r"Port \d+ is already in use")
            return classes[kind](**jobqueue_kwargs(opts))
    except (ValueError, TypeError) as e:
        raise ExecutorError(f"{kind} cluster: {e}") from None


class _QuietLostKeys(logging.Filter):
    """Drops the scheduler's ERROR "Couldn't gather keys" logged when a worker job ends with a
    run in flight: that run is recomputed elsewhere, so the message is not an error of the
    sweep."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "Couldn't gather keys" not in record.getMessage()


class JobqueueExecutor:
    """Keeps ``opts.jobs`` batch jobs of Dask workers running on Slurm or PBS while the sweep
    runs there, and cancels them when it ends.

    A job that ends early (pre-empted, ``scancel``, its node lost) is replaced by a new one and
    its unfinished runs go to the other workers. Jobs that keep ending while no run finishes
    (a worker that cannot start, a wrong ``--python``) stop the sweep after ``max_lost_jobs``
    with one line naming the last job and its log; finished runs are stored either way."""

    SUBMIT = {"slurm": "sbatch", "pbs": "qsub"}

    def __init__(self, kind: str, opts: JobqueueOptions, *, max_lost_jobs: int = 3) -> None:
        if kind not in self.SUBMIT:
            raise ExecutorError(f"unknown batch system {kind!r} (expected slurm or pbs)")
        jobqueue_kwargs(opts)  # validate now
        if opts.interface is None and opts.scheduler_host is None:
            raise ExecutorError(
                f"--executor {kind}: the batch jobs must reach this process's Dask scheduler: give "
                "--interface NAME (e.g. ib0) or --scheduler-host HOST (it is never bound to every "
                "interface, nor are the workers)"
            )
        self.kind = kind
        self.opts = opts
        self.max_lost_jobs = max_lost_jobs
        #: Every batch job id this executor submitted, in order: the supervisor counts the
        #: replacements from it.
        self.job_ids: list[str] = []

    def describe(self) -> str:
        per_job = self.opts.processes or self.opts.cores
        return f"{self.kind} via dask-jobqueue ({self.opts.jobs} job(s) × {per_job} workers)"

    def run(self, tasks: Iterable[RunTask], on_done: OnDone) -> None:
        tool = self.SUBMIT[self.kind]
        if shutil.which(tool) is None:
            raise ExecutorError(
                f"{tool} is not on the PATH: run the {self.kind} executor on a login node of the cluster "
                "(--print-job-script shows the job script without submitting)"
            )
        if self.opts.log_directory is not None:
            Path(self.opts.log_directory).mkdir(parents=True, exist_ok=True)
        with _sweep_tls(self.opts) as opts:
            self._run(opts, tasks, on_done)

    def _run(self, opts: JobqueueOptions, tasks: Iterable[RunTask], on_done: OnDone) -> None:
        from distributed import Client

        cluster = build_jobqueue_cluster(self.kind, opts)
        quiet = _QuietLostKeys()
        logging.getLogger("distributed.scheduler").addFilter(quiet)
        try:
            # adapt, not scale: with the minimum equal to the maximum it submits a new job
            # whenever one of the running jobs ends before the sweep does.
            cluster.adapt(minimum_jobs=self.opts.jobs, maximum_jobs=self.opts.jobs)
            client = Client(cluster, set_as_default=False)
            try:
                DaskExecutor(client=client).run(tasks, on_done, supervise=self._supervisor(cluster))
            finally:
                client.close()
        finally:
            cluster.close()
            logging.getLogger("distributed.scheduler").removeFilter(quiet)

    def _supervisor(self, cluster: Any) -> Callable[[int], None]:
        """A ``supervise`` hook: records the submitted job ids, has jobs that ended before their
        worker connected replaced (Slurm: seen through ``squeue`` every ``queue_poll_s``; a job
        whose worker connected and left is replaced by ``adapt`` itself), and stops the sweep
        when more than ``max_lost_jobs`` replacement jobs were needed since a run last finished."""
        state = {"finished": -1, "lost": 0, "polled": time.monotonic()}

        def supervise(finished: int) -> None:
            if self.kind == "slurm" and time.monotonic() - state["polled"] >= self.queue_poll_s:
                state["polled"] = time.monotonic()
                self._forget_jobs_that_never_connected(cluster)
            new = [
                str(j.job_id)
                for j in list(cluster.workers.values())
                if getattr(j, "job_id", None) and str(j.job_id) not in self.job_ids
            ]
            if finished != state["finished"]:
                state["finished"], state["lost"] = finished, 0
            for jid in new:
                if len(self.job_ids) >= self.opts.jobs:
                    state["lost"] += 1  # a replacement: one of the earlier jobs ended
                self.job_ids.append(jid)
            if state["lost"] > self.max_lost_jobs:
                where = f"; its log is in {self.opts.log_directory}" if self.opts.log_directory else ""
                raise ExecutorError(
                    f"{self.kind}: {state['lost']} worker jobs ended while no run finished (last: "
                    f"job {self.job_ids[-1]}{where}): check --python, --prologue and the job's limits"
                )

        return supervise

    #: How often (seconds) the Slurm queue is asked which of the sweep's jobs still exist.
    queue_poll_s = 10.0

    def _forget_jobs_that_never_connected(self, cluster: Any) -> None:
        """Jobs that left the Slurm queue before their worker connected (failed at start,
        cancelled while pending) are forgotten and started again: ``adapt`` alone would wait
        for their workers forever."""
        ids = {name: str(j.job_id) for name, j in list(cluster.workers.items()) if getattr(j, "job_id", None)}
        if not ids:
            return
        try:
            p = subprocess.run(
                ["squeue", "-h", "-o", "%i", "-u", getpass.getuser()],
                capture_output=True,
                text=True,
                timeout=60,
            )
        except (OSError, subprocess.TimeoutExpired):
            return  # the queue cannot be read now: try again at the next poll
        if p.returncode != 0:
            return
        queued = set(p.stdout.split())
        info = getattr(cluster, "scheduler_info", None) or {}
        connected = {str(w.get("name")) for w in info.get("workers", {}).values()}
        gone = [name for name, jid in ids.items() if jid not in queued and name not in connected]
        for name in gone:
            cluster.workers.pop(name, None)
        if gone:
            # the plan still holds their names: scaling to it starts a new job for each
            cluster.scale(jobs=self.opts.jobs)


def check_executor_options(name: str, *, scheduler: str | None = None, job_script: bool = False) -> None:
    """Raises :class:`ExecutorError` for an unknown executor ``name``, a ``scheduler`` address
    for anything but dask, or a request for a ``job_script`` from anything but slurm/pbs."""
    if name not in EXECUTORS:
        raise ExecutorError(f"unknown executor {name!r} (expected one of: {', '.join(EXECUTORS)})")
    if scheduler is not None and name != "dask":
        raise ExecutorError("--scheduler needs --executor dask")
    if job_script and name not in ("slurm", "pbs"):
        raise ExecutorError("--print-job-script needs --executor slurm or pbs")


def job_script(kind: str, opts: JobqueueOptions) -> str:
    """The batch script one job of a ``kind`` ("slurm" or "pbs") cluster would submit; nothing
    is submitted. Certificates made for it are removed afterwards: each sweep makes its own."""
    with _sweep_tls(opts) as o:
        cluster = build_jobqueue_cluster(kind, o)
        try:
            return str(cluster.job_script())
        finally:
            cluster.close()


def make_executor(
    name: str,
    *,
    jobs: int | None = None,
    scheduler: str | None = None,
    jobqueue: JobqueueOptions | None = None,
    tls_dir: str | Path | None = None,
) -> Executor:
    """The executor called ``name`` (one of :data:`EXECUTORS`)."""
    if name == "local":
        return LocalExecutor(jobs)
    if name == "serial":
        return SerialExecutor()
    if name == "dask":
        return DaskExecutor(scheduler, tls_dir=tls_dir)
    if name in ("slurm", "pbs"):
        return JobqueueExecutor(name, jobqueue or JobqueueOptions())
    raise ExecutorError(f"unknown executor {name!r} (expected one of: {', '.join(EXECUTORS)})")
