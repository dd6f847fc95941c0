import contextlib
import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from emu_judge import Judge

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "scenarios"
QOSLAB = str(Path(sys.executable).parent / "qoslab")


def two_nodes(
    *,
    link: str = "ab",
    bandwidth: str = "10Mbps",
    delay: str = "1ms",
    queue: str = 'queue = { type = "droptail", limit = "100pkts" }',
) -> str:
    """The tests' smallest topology as scenario TOML: nodes ``a`` and ``b`` joined by one link.
    ``queue`` is the link's queue line (``queue = ...``, ``queue_ab = ...``; "" for the default)."""
    return (
        f'[[node]]\nname = "a"\n[[node]]\nname = "b"\n[[link]]\nname = "{link}"\na = "a"\nb = "b"\n'
        f'bandwidth = "{bandwidth}"\ndelay = "{delay}"\n{queue}\n'
    )


def run_window(duration: str, start: str) -> list[str]:
    """Command-line ``--set`` arguments that cut a scenario to `duration`, measured from
    `start` to its end (the tests' short runs)."""
    sets = (f"duration={duration}", f"measurement.start={start}", f"measurement.end={duration}")
    return [arg for s in sets for arg in ("--set", s)]


#: Columns of the store's tables that depend on where and when a run was computed.
MACHINE_COLUMNS = ["run_id", "wall_time_s", "worker", "finished_at", "series_queue", "series_flow", "error"]


def stores_agree(a, b, tables=("runs", "flows", "queues", "series_queue", "series_flow")) -> None:
    """Two result stores hold the same runs, bit for bit in every table, but for the columns
    that say where and when a run was computed (asserted)."""
    import pandas as pd

    import qoslab.report.results

    def comparable(df: pd.DataFrame) -> pd.DataFrame:
        df = df.drop(columns=[c for c in MACHINE_COLUMNS if c in df.columns])
        keys = [c for c in ("scenario_sha256", "seed", "flow", "queue", "time_ns") if c in df.columns]
        return df.sort_values(keys).reset_index(drop=True)

    for table in tables:
        x = comparable(qoslab.report.results.load(a, table))
        y = comparable(qoslab.report.results.load(b, table))
        assert len(x) > 0, table
        pd.testing.assert_frame_equal(x, y, check_like=True)


def one_line_error(p: subprocess.CompletedProcess) -> str:
    """The one ``error: …`` line a failed command printed (exit 1, no traceback), asserted."""
    assert p.returncode == 1, (p.returncode, p.stdout, p.stderr)
    assert "Traceback" not in p.stderr, p.stderr
    lines = [x for x in p.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), p.stderr
    return lines[0]


@pytest.fixture
def qoslab_cmd() -> str:
    return QOSLAB


def require(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        pytest.skip(f"{tool} is not installed (run `make ns2`, or apt-get install ns2 tshark)")
    return path


def drr_scenario_file(tmp_path: Path) -> Path:
    """fdd-red-s1 with a DRR multi queue at the bottleneck: a scenario ns-2 cannot express
    (dsRED has no deficit round robin)."""
    import qoslab

    table = qoslab.load_scenario(SCENARIOS / "fdd-red-s1.toml").table()
    table["link"][1]["queue_ab"] = {
        "type": "multi",
        "scheduler": "drr",
        "queues": [{"default": True, "queue": {"type": "droptail"}}],
    }
    path = tmp_path / "drr.toml"
    path.write_text(qoslab.Scenario.from_table(table).text)
    return path


def xdist_lock_files() -> tuple[Path, Path] | None:
    """The gate and the lock of this xdist run (None without xdist: nothing runs beside)."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if run is None:
        return None
    base = Path(tempfile.gettempdir()) / f"qoslab-pytest-{run}"
    return base.with_suffix(".gate"), base.with_suffix(".lock")


#: This process holds the lock already (a fixture set up from inside a test's body).
_holding = [False]

#: This worker's announcement that an ``alone`` test waits or runs here: the run's "want" file,
#: held shared from before the test waits at the gate until the worker's next work starts.
_announced: list[IO[str] | None] = [None]


def withdraw_announcement() -> None:
    """This worker's ``alone`` tests are over (other work starts here): its announcement goes."""
    f, _announced[0] = _announced[0], None
    if f is not None:
        f.close()  # closing the file drops its flock


def _take_the_gate_once_no_alone_test_is_announced(gate: IO[str], want_file: Path) -> None:
    """Takes the gate shared once no ``alone`` test is announced on any worker. An ``alone``
    test announces itself before it waits at the gate and keeps its announcement until its
    worker starts other work: else work that started between two ``alone`` tests (the first
    released the gate, the next had not yet taken it: flock hands a freed lock to any waiter,
    not to the first) could run for minutes while the next one waited for it, every other
    worker idle at the gate (a `make test` idled two of its three workers for 281 s so)."""
    with open(want_file, "a") as want:
        while True:
            fcntl.flock(gate, fcntl.LOCK_SH)
            try:
                fcntl.flock(want, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:  # an alone test is announced: wait until none is
                fcntl.flock(gate, fcntl.LOCK_UN)
                fcntl.flock(want, fcntl.LOCK_EX)
                fcntl.flock(want, fcntl.LOCK_UN)
                continue
            fcntl.flock(want, fcntl.LOCK_UN)
            return


@contextlib.contextmanager
def held_lock(alone: bool) -> Iterator[None]:
    """Holds the lock shared (a test, a fixture's setup) or exclusively (an ``alone`` test).
    Taken once per process: a fixture that a test sets up from its body (the lock already
    held) must not wait at the gate an ``alone`` test holds while waiting for that lock. An
    ``alone`` test announces itself first (:func:`_take_the_gate_once_no_alone_test_is_announced`)."""
    files = xdist_lock_files()
    if files is None or _holding[0]:
        yield
        return
    want = files[0].with_suffix(".want")
    if not alone:
        withdraw_announcement()
    elif _announced[0] is None:
        announce = open(want, "a")
        fcntl.flock(announce, fcntl.LOCK_SH)
        _announced[0] = announce
    with open(files[0], "a") as gate, open(files[1], "a") as lock:
        if alone:
            fcntl.flock(gate, fcntl.LOCK_EX)
            fcntl.flock(lock, fcntl.LOCK_EX)
        else:
            _take_the_gate_once_no_alone_test_is_announced(gate, want)
            fcntl.flock(lock, fcntl.LOCK_SH)
            fcntl.flock(gate, fcntl.LOCK_UN)
        _holding[0] = True
        try:
            yield
        finally:
            _holding[0] = False
            fcntl.flock(lock, fcntl.LOCK_UN)
            if alone:
                fcntl.flock(gate, fcntl.LOCK_UN)


def pytest_sessionfinish() -> None:
    withdraw_announcement()


@pytest.fixture(autouse=True)
def _alone(request: pytest.FixtureRequest) -> Iterator[None]:
    """Tests marked ``alone`` run while no other test runs on another xdist worker: they
    measure something the machine's load changes: the emulation calibration's kernel link
    (htb) carried 8.75 Mbit/s instead of 9.95-10.0 while two compilers ran (six CPU spinners
    did not change it; the cause, not traced, may be htb's dequeue waiting for softirq time
    while the daemon forwards in its own real-time context). Every other test holds a shared lock
    while it runs; an ``alone`` test takes a gate first (no new test starts) and then the lock
    exclusively (the running ones finish). Without xdist nothing runs concurrently: no lock.
    Fixtures of a module's or the session's scope are set up before this fixture runs, so
    their setup holds the shared lock too (``pytest_fixture_setup`` below)."""
    with held_lock(request.node.get_closest_marker("alone") is not None):
        yield


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef[object]) -> Iterator[None]:
    """A wider-scoped fixture's setup is work like a test's (test_wheel's builds the wheel
    with cargo, test_fdd_red's runs the paper's simulations): it holds the shared lock, so
    that it never runs beside an ``alone`` test. Before, it could: a fresh-clone ``make test``
    once saw the emulation calibration's daemon carry 9.70 Mbit/s against the kernel's 9.96
    (2.5 %, bound 2 %), where runs alone differ by 0.4 % at most; such a setup running beside
    it is the one load the lock did not keep out (not proven the cause)."""
    if fixturedef.scope == "function":
        return (yield)
    with held_lock(alone=False):
        return (yield)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Lists what every emulated run's daemons reported (tests/emu_judge.py): each try, its
    lateness, and whether it was judged or run again because the host stalled it."""
    lines = [
        (rep.nodeid, str(value))
        for reps in terminalreporter.stats.values()
        for rep in reps
        if getattr(rep, "when", None) == "call"
        for name, value in getattr(rep, "user_properties", ())
        if name == "emu_lateness"
    ]
    if lines:
        terminalreporter.section("emulated runs: release lateness and retries")
        for nodeid, line in lines:
            terminalreporter.write_line(f"{nodeid.split('::')[-1]}: {line}")


# -- the emulation tests' fixtures (tests/test_emulate*.py; their helpers: tests/emu_common.py) --


@pytest.fixture
def judge(record_property: Callable[[str, object], None]) -> "Judge":
    """Runs an emulation on a quiet enough host (tests/emu_judge.py)."""
    from emu_judge import Judge as _Judge

    return _Judge(record_property)


@pytest.fixture
def clean() -> Iterator[None]:
    """The test leaves no emulation namespace behind. Under xdist it holds the run's emulation
    lock while it runs: the emulation tests are spread over files (and so over workers), and
    one test's namespaces would look left behind by another running beside it, or be torn
    down by `qoslab emulate --cleanup --force` (test_cleanup_leaves_live_runs_alone_unless_forced)."""
    from emu_common import _ours

    files = xdist_lock_files()
    with contextlib.ExitStack() as stack:
        if files is not None:
            lock = stack.enter_context(open(files[0].with_suffix(".emu"), "a"))
            fcntl.flock(lock, fcntl.LOCK_EX)
            stack.callback(fcntl.flock, lock, fcntl.LOCK_UN)
        before = _ours()
        yield
        assert _ours() <= before, f"namespaces left behind: {_ours() - before}"


def shared_store(
    factory: pytest.TempPathFactory, key: str, dest: Path, build: Callable[[Path], object]
) -> Path:
    """``dest`` made a copy of a result store that ``build`` fills, built once in a run for
    every test (and every xdist worker) asking for ``key``: tests whose reproductions share
    their runs (the same experiment, options and seeds) compute them once. A run's results are
    a function of its scenario, seed and version, so a test finds in the copy the runs it would
    have computed, bit for bit; what it asserts of its reproductions is unchanged. Under xdist
    the store sits beside the workers' temporary directories, and a worker that asks while
    another builds it waits for it."""
    base = factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER") is not None:
        base = base.parent  # shared by this run's workers
    home = base / f"shared-{key}"
    home.mkdir(exist_ok=True)
    with open(home / "lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (home / "ready").exists():
            shutil.rmtree(home / "store", ignore_errors=True)  # a build that failed
            build(home / "store")
            (home / "ready").touch()
    shutil.copytree(home / "store", dest)
    return dest


def quick_runs(factory: pytest.TempPathFactory, name: str, seeds: int, dest: Path) -> Path:
    """``dest``: a store holding the runs of experiment ``name``'s quick reproduction at
    ``seeds`` seeds (:func:`shared_store`), keyed by the runs it plans (their scenarios' hashes
    and seeds): callers that change the plan first (fdd-red's Figs. 10-11 on two points) share
    the store only with callers planning the same runs, never a differently planned one."""
    import hashlib

    from qoslab.reproduction.base import get
    from qoslab.reproduction.planning import planned
    from qoslab.reproduction.runner import reproduce

    specs = planned(get(name), quick=True, seeds=seeds)[2]
    runs = hashlib.sha256("".join(sorted(f"{s.key.scenario_sha256}:{s.key.seed}" for s in specs)).encode())

    def build(store: Path) -> None:
        reproduce(get(name), seeds=seeds, quick=True, store=store, out=store.parent / "out", progress=False)

    return shared_store(factory, f"{name}-quick-{seeds}-{runs.hexdigest()[:12]}", dest, build)


#: Test files started first. The ones with ``alone`` tests come first of all: an ``alone`` test
#: that takes the gate while a long test runs elsewhere (the RIO emulation holds the shared
#: lock for 150 s) idles every other worker until that test ends, so they run at the start,
#: and the RIO emulation is handed out last of the long files, once they have begun. Then the
#: longest files (seconds of one worker, a quiet fresh-clone `make test`, 2026-11-26), so that
#: no worker is left with a long file at the end while the others idle (longest processing
#: time first); every other file keeps its place after them.
LONG_FILES = (
    "test_emulate_kernel.py",  # 150 s alone
    "test_validate_linux.py",  # 60 s, 35 of them alone
    "test_alone_lock.py",  # one (short) alone test
    # (the next ones: seconds of one worker in a loaded `make test`, 2026-11-28)
    "test_sequential_claims_points.py",  # 245 s: rio-plus-o's and probe-marker's points (the
    # latter's runs computed once for it and test_sequential_claims_probe.py: quick_runs)
    "test_prefetch.py",  # 195 s (its sequential reproductions also test the hand-over)
    "test_sequential_claims.py",  # 180 s: fdd-red's sweeps
    "test_sequential.py",  # 150 s
    "test_wheel.py",  # 150 s: maturin builds the core, pip installs the wheel
    "test_sequential_claims_probe.py",  # 120 s: probe-marker's 1000-byte sweep (its runs shared)
    "test_slurm.py",  # 125 s
    "test_ns2_exact.py",  # 70 s
    "test_emulate.py",  # 130 s of real time
    "test_emulate_rio.py",  # 150 s of real time (not alone)
    "test_store_integrity.py",  # 75 s
    "test_store.py",  # 60 s
    "test_example_study.py",  # 35 s: a plugin study reproduced, sequentially, and its page
    "test_doc_blocks.py",  # 55 s of CPU (user + sys, 2026-11-29): the docs' blocks, page by page
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Puts the tests of :data:`LONG_FILES` first, in that order, and a file's ``alone`` tests
    before its others (a stable sort: the same order on every xdist worker, which their
    scheduling requires): each worker then starts with its ``alone`` tests, which are all
    announced before any other work starts (:func:`_take_the_gate_once_no_alone_test_is_announced`),
    and none of them waits for a long test to end while the other workers idle. `make test`
    passes `--no-loadscope-reorder`, else xdist's loadfile would order the files by their
    number of tests instead."""
    rank = {name: i for i, name in enumerate(LONG_FILES)}
    items.sort(
        key=lambda it: (rank.get(it.path.name, len(LONG_FILES)), it.get_closest_marker("alone") is None)
    )
