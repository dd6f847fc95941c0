"""Transparent huge pages for the processes qoslab starts.

A backbone-scale run touches its state at random, a few cache lines a packet-hop among hundreds
of megabytes (352 × 10⁶ bytes at 50,000 flows), so with 4 KiB pages most of those loads also
miss the TLB and walk the page tables. Where the kernel's transparent huge page (THP) mode is
``madvise`` (Debian's and Ubuntu's default), anonymous memory gets 2 MiB pages only where a
process asks for them, and glibc (2.35 and later) asks for malloc's memory when its tunable
``glibc.malloc.hugetlb`` is 1: ``madvise(MADV_HUGEPAGE)`` on the heap it grows and on the chunks
it maps (glibc's manual, "Memory Allocation Tunables"; the kernel's admin guide,
``transhuge.rst``). Where the mode is ``always`` (RHEL's default) the kernel gives every process
huge pages and the tunable adds nothing; where it is ``never``, or the C library is another or
older, nothing gives them.

A tunable is read once, as a process starts, so it cannot be set for the process already
running: qoslab sets it in the environment of the processes it starts to run simulations, its
local workers (:mod:`qoslab.runs.local_pool`), its Slurm and PBS jobs' workers (a line of their
job script, :func:`job_line`), the bench's workers and the reference simulators the bench times
beside them (:mod:`qoslab.bench`, so that both sides of a ratio run alike; not its callgrind
counts, which simulate caches, not pages). Dask workers started
by someone else, and a run in the caller's own process (``qoslab run``, the serial executor,
``qoslab.run()``), have them only if they started with them
(``GLIBC_TUNABLES=glibc.malloc.hugetlb=1``). A ``GLIBC_TUNABLES`` that already names the
tunable is left as it is: ``glibc.malloc.hugetlb=0`` turns this off where THP is ``madvise``
(a PBS job does not inherit the submitting shell's environment: there, ``--prologue 'export
GLIBC_TUNABLES=glibc.malloc.hugetlb=0'``). A simulation's outputs do not depend on where its
memory lies, only the time it takes and, by up to 2 % at 50,000 flows, the memory it holds
(docs/performance.md, "Huge pages").
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path

#: glibc's tunable (and its value) that backs malloc's memory with transparent huge pages.
TUNABLE = "glibc.malloc.hugetlb"
#: Where Linux says which transparent huge page mode it runs (``always [madvise] never``).
THP_ENABLED = Path("/sys/kernel/mm/transparent_hugepage/enabled")

_ENVIRON_LOCK = threading.Lock()


def thp_mode(path: Path = THP_ENABLED) -> str | None:
    """The kernel's transparent huge page mode (``always``, ``madvise`` or ``never``: the
    bracketed word of ``path``), None where it cannot be read (not Linux, no THP)."""
    try:
        words = path.read_text(encoding="ascii", errors="replace").split()
    except OSError:
        return None
    chosen = [w[1:-1] for w in words if w.startswith("[") and w.endswith("]")]
    return chosen[0] if len(chosen) == 1 else None


def with_huge_pages(tunables: str | None) -> str:
    """``tunables`` (a ``GLIBC_TUNABLES`` value: ``name=value`` pairs joined by ``:``, or None)
    with ``glibc.malloc.hugetlb=1`` added, unless it already names that tunable."""
    pairs = [p for p in (tunables or "").split(":") if p]
    if any(p.partition("=")[0] == TUNABLE for p in pairs):
        return tunables or ""
    return ":".join([*pairs, f"{TUNABLE}=1"])


def child_environment(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """``env`` (this process's environment by default) for a process qoslab starts to run
    simulations: its ``GLIBC_TUNABLES`` with huge pages asked for (:func:`with_huge_pages`)."""
    out = dict(os.environ if env is None else env)
    out["GLIBC_TUNABLES"] = with_huge_pages(out.get("GLIBC_TUNABLES"))
    return out


@contextlib.contextmanager
def for_children() -> Iterator[None]:
    """Inside the block, processes started without an environment of their own (those of
    ``multiprocessing``, which passes none) get :func:`child_environment`'s ``GLIBC_TUNABLES``;
    this process's environment is as it was after it, and untouched where it already names the
    tunable. One block at a time, so that two pools starting workers at once (the coordinator's
    and a prefetching one's thread, :mod:`qoslab.runs.prefetch`) cannot leave the variable
    changed; a process any other thread starts during the block inherits the variable too,
    which changes only where its memory lies."""
    with _ENVIRON_LOCK:
        before = os.environ.get("GLIBC_TUNABLES")
        wanted = with_huge_pages(before)
        if wanted == before:
            yield
            return
        os.environ["GLIBC_TUNABLES"] = wanted
        try:
            yield
        finally:
            if before is None:
                os.environ.pop("GLIBC_TUNABLES", None)
            else:
                os.environ["GLIBC_TUNABLES"] = before


def job_line() -> str:
    """The line of a cluster job's script (POSIX sh, before its worker starts) that gives the job
    the ``GLIBC_TUNABLES`` :func:`with_huge_pages` gives, unless the job's environment already
    names the tunable."""
    return (
        f'case ":${{GLIBC_TUNABLES-}}:" in *:{TUNABLE}=*) ;; '
        f'*) export GLIBC_TUNABLES="${{GLIBC_TUNABLES:+$GLIBC_TUNABLES:}}{TUNABLE}=1" ;; esac'
    )


def libc() -> str | None:
    """This process's C library and version (``glibc 2.36``), None where it does not say."""
    try:
        return os.confstr("CS_GNU_LIBC_VERSION")
    except (ValueError, OSError):
        return None


def glibc_asks(version: str | None = None) -> bool:
    """Whether a C library of ``version`` (:func:`libc`'s form; this one's by default) honours
    the tunable: glibc 2.35 or later."""
    name, _, number = ((libc() if version is None else version) or "").partition(" ")
    parts = number.split(".")
    if name != "glibc" or len(parts) < 2 or not all(p.isdigit() for p in parts[:2]):
        return False
    return (int(parts[0]), int(parts[1])) >= (2, 35)


def described() -> dict[str, str | None]:
    """What a process qoslab starts gets: the kernel's THP mode, the C library (whether the
    tunable means anything) and the ``GLIBC_TUNABLES`` it is given (for a bench's record)."""
    return {
        "thp": thp_mode(),
        "libc": libc(),
        "glibc_tunables": with_huge_pages(os.environ.get("GLIBC_TUNABLES")),
    }
