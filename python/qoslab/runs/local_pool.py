"""The executors that need nothing but this machine: :class:`SerialExecutor` (in this
process) and :class:`LocalExecutor` (a pool of worker processes), with what every executor
shares (:data:`OnDone`, :class:`Executor`, :class:`ExecutorError`). :mod:`qoslab.runs.executors`
adds the cluster executors and re-exports these.

Inside :func:`kept_workers` a pool's workers outlive its ``run``: the next pool of the same
niceness takes them instead of starting processes of its own. A sequential reproduction starts
a pool at every look, and one more for the runs it computes ahead (:mod:`qoslab.runs.prefetch`):
each worker started costs about half a CPU-second of imports before its first run, and the look
waits for it.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from multiprocessing.reduction import ForkingPickler
from typing import Any, Protocol

from qoslab.runs import huge_pages
from qoslab.runs.tasks import RunOutput, RunTask, execute, failure

OnDone = Callable[[RunTask, RunOutput], Iterable[RunTask]]

EXECUTORS = ("local", "serial", "dask", "slurm", "pbs")


class ExecutorError(Exception):
    """An executor that cannot start (no scheduler at the address, no sbatch, bad options)."""


class Executor(Protocol):
    def run(self, tasks: Iterable[RunTask], on_done: OnDone) -> None: ...

    def describe(self) -> str: ...


# -- serial ----------------------------------------------------------------------------------------


class SerialExecutor:
    """Runs every task in this process, one after the other."""

    def describe(self) -> str:
        return "serial (in-process)"

    def run(self, tasks: Iterable[RunTask], on_done: OnDone) -> None:
        pending = deque(tasks)
        while pending:
            t = pending.popleft()
            pending.extend(on_done(t, execute(t)))


# -- local process pool ----------------------------------------------------------------------------


def _watch_parent(parent_pid: int) -> None:
    while True:
        time.sleep(1.0)
        if os.getppid() != parent_pid:
            os._exit(3)  # the coordinator is gone: nobody will read our result


def _worker_main(conn: Any, parent_pid: int, nice: int = 0) -> None:
    """A pool worker: receive a task, compute it, send the output back; stop on None or EOF."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the coordinator handles Ctrl-C
    if nice:
        os.nice(nice)
    threading.Thread(target=_watch_parent, args=(parent_pid,), daemon=True).start()
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return
        if task is None:
            return
        out = execute(task)
        try:
            conn.send(out)
        except (BrokenPipeError, OSError):
            return


def _exit_reason(code: int | None) -> str:
    if code is None:
        return "no exit status"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


@dataclass
class _Slot:
    proc: Any
    conn: Any
    #: the tasks sent to the worker, in order: the first is the one it computes
    tasks: deque[RunTask] = field(default_factory=deque)


#: Tasks a worker holds: the one it computes and one queued in its pipe, so that it starts the
#: next as soon as it has sent a result, not once the coordinator has stored it (a short run took
#: ~60 ms and the coordinator's turn ~15 ms, a worker idle that long after every run).
DEPTH = 2
#: A task queued behind a running one is sent only if it fits the pipe's buffer whole (a Unix
#: socket's default is 208 KiB): a larger one would block the coordinator in its write until the
#: worker finished its run, out of reach of Ctrl-C and SIGTERM (a 10,000-flow scenario's text is
#: about 1 MB). It waits for the worker to be free instead.
QUEUED_MAX_BYTES = 64 * 1024


class _Kept:
    """Idle workers, by niceness, while a :func:`kept_workers` scope is open (``depth`` > 0)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.depth = 0
        self.idle: dict[int, list[_Slot]] = {}

    def take(self, nice: int) -> _Slot | None:
        """An idle worker of niceness ``nice`` that is still alive, or None."""
        with self.lock:
            slots = self.idle.get(nice, [])
            while slots:
                s = slots.pop()
                if s.proc.is_alive():
                    return s
                _shut([s])
        return None

    def give(self, nice: int, slots: list[_Slot]) -> list[_Slot]:
        """Keeps the living workers of ``slots`` that hold no task, if a scope is open; returns
        the others (for the caller to shut down)."""
        with self.lock:
            if self.depth == 0:
                return slots
            keep = [s for s in slots if not s.tasks and s.proc.is_alive()]
            self.idle.setdefault(nice, []).extend(keep)
        return [s for s in slots if all(s is not k for k in keep)]


_KEPT = _Kept()


def _shut(slots: list[_Slot]) -> None:
    """Stops the workers of ``slots``: an idle one is asked to (it waits for a task) and killed if
    still alive after 5 s; one still holding tasks (a pool stopped by Ctrl-C, SIGTERM or an
    error) is killed at once: its run is lost either way, and a request queued behind its tasks
    would wait for them to finish, or block the coordinator on a full pipe."""
    for s in slots:
        if s.tasks:
            s.proc.kill()
            continue
        with contextlib.suppress(OSError, ValueError):
            s.conn.send(None)
    deadline = time.monotonic() + 5
    for s in slots:
        s.proc.join(timeout=max(0.0, deadline - time.monotonic()))
        if s.proc.is_alive():
            s.proc.kill()
            s.proc.join(timeout=5)
        with contextlib.suppress(OSError):
            s.conn.close()


@contextlib.contextmanager
def kept_workers() -> Iterator[None]:
    """A scope in which :class:`LocalExecutor`'s workers are kept between runs (see the
    module's text); they stop when the outermost scope closes. Results are the same: a worker
    computes each task alone, from the task's own scenario and seed."""
    with _KEPT.lock:
        _KEPT.depth += 1
    try:
        yield
    finally:
        with _KEPT.lock:
            _KEPT.depth -= 1
            idle = [s for slots in _KEPT.idle.values() for s in slots] if _KEPT.depth == 0 else []
            if _KEPT.depth == 0:
                _KEPT.idle.clear()
        _shut(idle)


class LocalExecutor:
    """A pool of ``jobs`` worker processes (default: all cores), started with ``spawn`` so that
    they inherit neither the store's connection nor its lock, and with glibc's huge pages asked
    for (:mod:`qoslab.runs.huge_pages`)."""

    def __init__(
        self, jobs: int | None = None, *, stop: threading.Event | None = None, nice: int = 0
    ) -> None:
        if jobs is not None and jobs < 1:
            raise ExecutorError(f"--jobs must be at least 1, got {jobs}")
        self.jobs = jobs or os.cpu_count() or 1
        #: once set, no task is sent any more: the runs in flight (and the one queued at each
        #: worker, :data:`DEPTH`) finish and ``run`` returns
        self.stop = stop
        #: the workers' niceness added to this process's (``os.nice``): work that must yield
        self.nice = nice

    def describe(self) -> str:
        return f"local ({self.jobs} worker process{'es' if self.jobs != 1 else ''})"

    def run(self, tasks: Iterable[RunTask], on_done: OnDone) -> None:
        ctx = mp.get_context("spawn")
        pending = deque(tasks)

        def start() -> _Slot:
            kept = _KEPT.take(self.nice)
            if kept is not None:
                return kept
            parent, child = ctx.Pipe(duplex=True)
            p = ctx.Process(
                target=_worker_main, args=(child, os.getpid(), self.nice), daemon=True, name="qoslab-worker"
            )
            with huge_pages.for_children():
                p.start()
            child.close()
            return _Slot(p, parent)

        slots: list[_Slot] = [start() for _ in range(min(self.jobs, len(pending)))]
        finished = False
        # the next task pickled once, though a large one may wait several turns for a free worker
        pickled: tuple[RunTask, bytes] | None = None
        try:
            while True:
                if self.stop is not None and self.stop.is_set():
                    pending.clear()
                for i, s in enumerate(slots):
                    if not s.tasks and pending and not s.proc.is_alive():
                        s = slots[i] = start()
                    while len(s.tasks) < DEPTH and pending:
                        if pickled is None or pickled[0] is not pending[0]:
                            pickled = (pending[0], bytes(ForkingPickler.dumps(pending[0])))
                        payload = pickled[1]
                        if s.tasks and len(payload) > QUEUED_MAX_BYTES:
                            break  # sent once the worker is free
                        s.tasks.append(pending.popleft())
                        try:
                            s.conn.send_bytes(payload)
                        except (BrokenPipeError, OSError):
                            break  # noticed below through the sentinel
                busy = [s for s in slots if s.tasks]
                if not busy:
                    break
                ready = set(wait([s.conn for s in busy] + [s.proc.sentinel for s in busy]))
                for s in busy:
                    if s.conn not in ready and s.proc.sentinel not in ready:
                        continue
                    out: RunOutput | None = None
                    torn = False
                    try:
                        if s.conn.poll():
                            out = s.conn.recv()
                    except Exception:  # noqa: BLE001 — EOF or a torn message: the worker died
                        torn = True
                    if out is None and not torn and s.proc.sentinel not in ready:
                        continue
                    task = s.tasks.popleft()
                    if out is None:
                        # the worker died computing ``task``; those queued behind it never started
                        pending.extendleft(reversed(s.tasks))
                        s.tasks.clear()
                        s.proc.join(timeout=5)
                        out = failure(
                            task,
                            f"worker process {s.proc.pid} died ({_exit_reason(s.proc.exitcode)})",
                            worker=f"local:{s.proc.pid}",
                        )
                        with contextlib.suppress(OSError):
                            s.conn.close()
                        if s.proc.is_alive():
                            s.proc.kill()
                            s.proc.join(timeout=5)
                    # a dead slot is restarted when it is next given a task
                    pending.extend(on_done(task, out))
            finished = True
        finally:
            # workers are kept only after a run that ended normally (an exception may leave a
            # task in a pipe)
            _shut(_KEPT.give(self.nice, slots) if finished else slots)
