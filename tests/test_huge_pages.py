"""Huge pages for the processes qoslab starts (qoslab.runs.huge_pages): glibc's tunable added
to their environment, the user's own setting of it kept, this process's environment unchanged;
the processes that get it (a local pool's workers, a cluster job, the bench's workers and timed
commands); and the effect itself: a process started as the local pool starts its workers gets
its memory in 2 MiB pages where the kernel leaves them to madvise (docs/performance.md, "Huge
pages")."""

from __future__ import annotations

import multiprocessing as mp
import os
import re
import subprocess
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import pytest

import qoslab
from conftest import SCENARIOS
from qoslab.bench import linux as bench_linux
from qoslab.bench import runner
from qoslab.runs import huge_pages
from qoslab.runs.executors import JobqueueOptions, jobqueue_kwargs
from qoslab.runs.local_pool import LocalExecutor, kept_workers
from qoslab.runs.sweep import plan
from qoslab.runs.tasks import RunOutput, RunTask


@pytest.mark.parametrize(
    ("text", "mode"),
    [
        ("always [madvise] never\n", "madvise"),
        ("[always] madvise never\n", "always"),
        ("always madvise [never]\n", "never"),
        ("always madvise never\n", None),  # no bracket: not a mode we can read
        ("", None),
    ],
)
def test_the_kernels_mode_is_the_bracketed_word(tmp_path: Path, text: str, mode: str | None) -> None:
    f = tmp_path / "enabled"
    f.write_text(text)
    assert huge_pages.thp_mode(f) == mode


def test_an_unreadable_mode_is_none(tmp_path: Path) -> None:
    assert huge_pages.thp_mode(tmp_path / "absent") is None


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (None, "glibc.malloc.hugetlb=1"),
        ("", "glibc.malloc.hugetlb=1"),
        ("glibc.malloc.arena_max=2", "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1"),
        # the user's own value of the tunable is kept, whatever it is: 0 turns huge pages off
        ("glibc.malloc.hugetlb=0", "glibc.malloc.hugetlb=0"),
        (
            "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=2",
            "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=2",
        ),
        # a tunable whose name merely begins like it is another one
        ("glibc.malloc.hugetlbx=1", "glibc.malloc.hugetlbx=1:glibc.malloc.hugetlb=1"),
    ],
)
def test_the_tunable_is_added_unless_the_user_named_it(before: str | None, after: str) -> None:
    assert huge_pages.with_huge_pages(before) == after
    env = {} if before is None else {"GLIBC_TUNABLES": before}
    assert huge_pages.child_environment(env | {"PATH": "/bin"}) == {"GLIBC_TUNABLES": after, "PATH": "/bin"}


@pytest.mark.parametrize("before", [None, "glibc.malloc.arena_max=2", "glibc.malloc.hugetlb=0"])
def test_for_children_leaves_this_process_as_it_was(
    monkeypatch: pytest.MonkeyPatch, before: str | None
) -> None:
    if before is None:
        monkeypatch.delenv("GLIBC_TUNABLES", raising=False)
    else:
        monkeypatch.setenv("GLIBC_TUNABLES", before)
    with huge_pages.for_children():
        assert os.environ["GLIBC_TUNABLES"] == huge_pages.with_huge_pages(before)
    assert os.environ.get("GLIBC_TUNABLES") == before


def _huge_kb_after_touching(conn: Connection) -> None:
    """In a spawned child: 64 MiB allocated (by malloc, a chunk it maps) and written, then the
    child's own tunables and its anonymous memory in huge pages, kB (smaps_rollup)."""
    block = bytearray(64 * 2**20)
    for i in range(0, len(block), 4096):
        block[i] = 1
    rollup = Path("/proc/self/smaps_rollup").read_text()
    m = re.search(r"^AnonHugePages:\s+(\d+) kB", rollup, re.M)
    conn.send((os.environ.get("GLIBC_TUNABLES"), int(m.group(1)) if m else None))
    conn.close()


def _child(monkeypatch: pytest.MonkeyPatch, tunables: str | None) -> tuple[str | None, int | None]:
    if tunables is None:
        monkeypatch.delenv("GLIBC_TUNABLES", raising=False)
    else:
        monkeypatch.setenv("GLIBC_TUNABLES", tunables)
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe(duplex=False)
    p = ctx.Process(target=_huge_kb_after_touching, args=(child,))
    with huge_pages.for_children():  # as LocalExecutor starts its workers
        p.start()
    child.close()
    assert parent.poll(60), "the child sent nothing in 60 s"
    got: tuple[str | None, int | None] = parent.recv()
    p.join(30)
    return got


def test_a_spawned_process_gets_the_tunable_and_the_users_own_value(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _child(monkeypatch, None)[0] == "glibc.malloc.hugetlb=1"
    assert _child(monkeypatch, "glibc.malloc.hugetlb=0")[0] == "glibc.malloc.hugetlb=0"


@pytest.mark.skipif(huge_pages.thp_mode() != "madvise", reason="THP always or never: nothing asked for")
@pytest.mark.skipif(not huge_pages.glibc_asks(), reason="a C library without glibc's tunable")
@pytest.mark.skipif(not Path("/proc/self/smaps_rollup").exists(), reason="no smaps_rollup")
def test_a_spawned_process_gets_huge_pages_only_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    """At least one 2 MiB page among the 64 MiB with the tunable (the kernel may find fewer free
    2 MiB blocks on a busy machine), none with it at 0: the pages come from the tunable."""
    _, huge_kb = _child(monkeypatch, None)
    assert huge_kb is not None and huge_kb >= 2048, huge_kb
    _, huge_kb = _child(monkeypatch, "glibc.malloc.hugetlb=0")
    assert huge_kb == 0


@pytest.mark.parametrize(
    ("version", "asks"),
    [
        ("glibc 2.36", True),
        ("glibc 2.35", True),
        ("glibc 3.0", True),
        ("glibc 2.34", False),
        ("glibc 2.31", False),
        ("musl 1.2.4", False),
        ("glibc", False),
        ("", False),
    ],
)
def test_the_tunable_means_something_from_glibc_2_35(version: str, asks: bool) -> None:
    assert huge_pages.glibc_asks(version) is asks


def test_a_local_pools_worker_starts_with_the_tunable(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pool's own worker, as the kernel started it (/proc/PID/environ), not a stand-in."""
    monkeypatch.delenv("GLIBC_TUNABLES", raising=False)
    sc = qoslab.load_scenario(str(SCENARIOS / "fdd-red-s1.toml")).with_overrides(
        ["duration=2s", "measurement.start=0s", "measurement.end=2s"]
    )
    tasks = [RunTask(s.key, s.scenario.text, s.scenario.source, ()) for s in plan([({}, sc)], [1], "env")]
    with kept_workers():
        seen: list[RunOutput] = []

        def done(t: RunTask, o: RunOutput) -> list[RunTask]:
            seen.append(o)
            return []

        LocalExecutor(1).run(tasks, done)
        (out,) = seen
        assert out.ok
        pid = int(out.worker.rsplit(":", 1)[1])
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    assert b"GLIBC_TUNABLES=glibc.malloc.hugetlb=1" in environ
    assert "GLIBC_TUNABLES" not in os.environ  # this process's own is as it was


def test_the_benchs_timed_commands_and_workers_get_the_tunable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A command the bench times (qoslab's whole process, ns-2, ns-3) runs with the tunable,
    and so does a bench worker: both sides of a ratio alike."""
    monkeypatch.delenv("GLIBC_TUNABLES", raising=False)
    check = 'case ":${GLIBC_TUNABLES-}:" in *:glibc.malloc.hugetlb=1:*) ;; *) exit 3 ;; esac'
    took, why = runner._timed(["sh", "-c", check], tmp_path, 30)
    assert took is not None and why == "", why
    given: list[dict[str, str] | None] = []

    def fake_run(cmd: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
        given.append(kw.get("env"))
        return subprocess.CompletedProcess(cmd, 0, stdout="{}", stderr="")

    monkeypatch.setattr(subprocess, "run", fake_run)  # the module bench.linux calls
    assert bench_linux.run_worker("qoslab.bench.linux", "bbr-cubic-1bdp", "1") == {}
    (env,) = given
    assert env is not None and env["GLIBC_TUNABLES"] == "glibc.malloc.hugetlb=1"


@pytest.mark.parametrize(
    "before",
    [None, "", "glibc.malloc.arena_max=2", "glibc.malloc.hugetlb=0", "a=1:glibc.malloc.hugetlb=2:b=3"],
)
def test_a_cluster_jobs_line_gives_what_a_local_worker_gets(before: str | None) -> None:
    """The job script's line, run by a shell, leaves GLIBC_TUNABLES as child_environment does."""
    env = {"PATH": os.environ["PATH"]} | ({} if before is None else {"GLIBC_TUNABLES": before})
    got = subprocess.run(
        ["sh", "-c", f'{huge_pages.job_line()}\nprintf %s "$GLIBC_TUNABLES"'],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    assert got.stdout == huge_pages.child_environment(env)["GLIBC_TUNABLES"]


def test_a_cluster_jobs_script_asks_for_huge_pages_before_the_users_prologue() -> None:
    kw = jobqueue_kwargs(JobqueueOptions(prologue=("source venv/bin/activate",), insecure=True))
    lines = kw["job_script_prologue"]
    assert lines[0] == huge_pages.job_line() and lines[1] == "source venv/bin/activate"
