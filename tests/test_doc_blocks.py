"""Docs are tested like code: every fenced block a reader copies from docs/ and the README
(``python``, ``sh``, ``console`` and unlabelled command blocks: tests/doc_blocks.py) is covered by
exactly one of

- a run: the page's blocks run in order in a scratch checkout (:func:`test_a_pages_blocks_run_as_shown`;
  the pages of :data:`ELSEWHERE`, by the test named there), what a command prints compared with
  what the page shows (tests/doc_blocks.py states the conventions and what varies);
- a check without running, for the blocks of :data:`NOT_RUN` (a full reproduction, root, a
  cluster, a build): each command's program, options and values parse as the command parses
  them, each path it reads exists, each experiment it names is planned with its options and
  each scenario loads with its ``--set`` and ``--grid`` values; a Python block parses and
  imports what exists.

A block not listed is run, so a new one cannot slip through: it runs as shown, or fails until
it is listed here with its reason."""

from __future__ import annotations

import ast
import importlib
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import ROOT, quick_runs, require
from doc_blocks import (
    Block,
    PageRun,
    command_problems,
    commands,
    copied,
    fenced_blocks,
    matches,
    places,
    reader_blocks,
    scratch,
)
from test_tutorial import tutorial_steps

#: Blocks checked without running (page, the start of the block's first line) → why.
NOT_RUN: dict[tuple[str, str], str] = {
    ("README.md", "make demo"): "builds the venv and the core (minutes); `make test` is the suite",
    ("docs/tutorial.md", "make demo"): "builds the venv and the release core (minutes)",
    ("docs/tutorial.md", "python3 -m venv"): "a wheel in a new venv: tests/test_wheel.py installs it",
    (
        "docs/capabilities.md",
        "make wheel",
    ): "builds a wheel (minutes): tests/test_wheel.py builds, installs it",
    ("docs/capabilities.md", ".venv/bin/qoslab run"): "bench, reproduce all --quick: minutes; emulate: root",
    ("docs/emulation.md", "sudo .venv/bin/qoslab emulate"): "root (namespaces): tests/test_emulate*.py",
    ("docs/emulation.md", "from qoslab.studies.ard"): "root (namespaces): tests/test_emulate*.py",
    ("docs/experiments/ard.md", "qoslab reproduce ard"): "full reproductions: 1,881 runs",
    (
        "docs/experiments/buffer-sizing.md",
        ".venv/bin/qoslab reproduce",
    ): "full reproduction: 10 seeds of 100 s runs",
    (
        "docs/experiments/buffer-sizing.md",
        ".venv/bin/python tools/buffer_sizing_synchrony.py",
    ): "24 runs, about 2 minutes: tests/test_synchrony.py runs its 100- and 16-flow points",
    ("docs/experiments/fdd-red.md", ".venv/bin"): "full reproductions: 6,456 runs",
    (
        "docs/experiments/modern-aqm.md",
        "qoslab",
    ): "full reproductions, ns2 and linux flavours (a minute each)",
    ("docs/experiments/probe-marker.md", ".venv/bin"): "full reproductions: 3,060 runs",
    ("docs/experiments/red-baseline.md", ".venv/bin"): "full reproduction: 20 seeds, ~35 s on 2 cores",
    ("docs/experiments/rio-plus-o.md", ".venv/bin"): "full reproductions: 5,281 runs",
    ("docs/experiments/todays-tcp.md", ".venv/bin"): "three reproductions of ard (minutes)",
    ("docs/experiments/twam-dwred.md", ".venv/bin"): "reproductions of minutes each",
    ("docs/experiments.md", ".venv/bin/qoslab reproduce --list"): "full reproductions (`all`: hours)",
    ("docs/experiments.md", ".venv/bin/qoslab reproduce twam-dwred"): "~2 min",
    ("docs/experiments.md", ".venv/bin/qoslab reproduce fdd-red"): "`all --quick --sender sack`: minutes",
    ("docs/experiments.md", "mkdir -m 700 tls"): "a cluster: tests/test_dask.py makes these certificates",
    ("docs/experiments.md", "from distributed import Client"): "a cluster (SCHEDULER is the reader's)",
    ("docs/experiments.md", "make slurm-up"): "a Slurm cluster (root): tests/test_slurm.py",
    ("docs/experiments.md", "$ PYTHONPATH=/tmp/ingest_main"): "a benchmark of 10,000 runs, two checkouts",
    ("docs/experiments.md", "$ .venv/bin/python tools/sweep_scaling.py"): "a benchmark on Slurm (minutes)",
    ("docs/python-api.md", "QOSLAB_PLUGINS"): "the reader's module of the experiment above (test_builder.py)",
    ("docs/performance.md", "make build"): "a build, benchmarks of minutes: tests/test_bench.py",
    ("docs/validation/linux.md", "sudo make"): "root and ~45 min; the simulated side alone: minutes",
    ("docs/validation/linux-aqm.md", "sudo make"): "root and ~50 min; the simulated side alone: minutes",
    ("docs/validation/linux-heldout.md", "sudo make"): "root and ~75 min; the simulated side: minutes",
    ("docs/validation/ns2.md", "make ns2 build"): "installs Debian packages (root); runs a test file",
    ("docs/validation/ns2-finite-flows.md", ".venv/bin/pytest"): "a test file; 10 seeds against ns-2",
    ("docs/validation/ns3.md", "make ns3"): "installs Debian packages (root), compiles ns-3; a test file",
}

#: Blocks run by another test, which compares what they print: (page, language) → that test.
ELSEWHERE = {
    ("docs/tutorial.md", "console"): "tests/test_tutorial.py",
    ("docs/tutorial.md", "python"): "tests/test_tutorial.py",
    ("docs/write-your-own-study.md", "console"): "tests/test_example_study.py",
    # the example's files, byte for byte (their commands are the page's console blocks)
    ("docs/write-your-own-study.md", "python"): "tests/test_example_study.py",
    # in one namespace (the page shows no output)
    ("docs/python-api.md", "python"): "tests/test_builder.py",
    ("docs/scenario-format.md", "python"): "tests/test_timing.py",
}

#: Python blocks a page has the reader save as a file that the commands after it use.
FILES = {
    ("docs/experiments.md", "# mymetrics.py"): "mymetrics.py",
    # QOSLAB_PLUGINS=./my_study.py
    ("docs/experiments.md", "from qoslab.reproduction import Experiment"): "my_study.py",
}

#: Unlabelled blocks that show what the block before them prints.
SHOWN_OUTPUT = {("docs/experiments.md", "#!/usr/bin/env bash")}


def _red_baseline_store(factory: pytest.TempPathFactory, work: Path) -> None:
    """experiments.md's results/store holding what its first block's `reproduce red-baseline
    --quick` writes (the store its ``results`` and ``qr.load`` examples read)."""
    quick_runs(factory, "red-baseline", 3, work / "results" / "store")


#: What a page's blocks need before they run.
SETUP: dict[str, Callable[[pytest.TempPathFactory, Path], None]] = {
    "docs/experiments.md": _red_baseline_store,
}
#: Programs a page's blocks run (the page is skipped without them, as the tests of that tool are).
REQUIRES = {"docs/validation/ns2.md": "ns"}


def _key(table: dict[tuple[str, str], str] | set[tuple[str, str]], b: Block) -> tuple[str, str] | None:
    return next((k for k in table if k[0] == b.page and b.first.startswith(k[1])), None)


def listed(b: Block) -> bool:
    return _key(NOT_RUN, b) is not None


def elsewhere(b: Block) -> bool:
    return (b.page, "console" if b.first.startswith("$ ") else b.lang) in ELSEWHERE


def to_run(blocks: list[Block]) -> list[Block]:
    """The blocks this file runs: every one neither listed nor run elsewhere."""
    return [b for b in blocks if not listed(b) and not elsewhere(b)]


def test_every_block_a_reader_copies_is_run_or_listed() -> None:
    blocks = reader_blocks()
    assert len(blocks) >= 70 and {b.lang for b in blocks} >= {"python", "sh", "console"}
    for table in (NOT_RUN, FILES, SHOWN_OUTPUT):
        for page, first in table:
            hits = [b for b in fenced_blocks(ROOT / page) if b.first.startswith(first)]
            assert len(hits) == 1, f"{page}: {len(hits)} blocks start with {first!r} (one expected)"
    for b in blocks:
        assert not (listed(b) and elsewhere(b)), f"{b.page}:{b.line} is both listed and run elsewhere"
    for (page, lang), test in ELSEWHERE.items():
        assert any(b.page == page and b.lang == lang for b in blocks), (page, lang)
        assert Path(page).name in (ROOT / test).read_text(), f"{test} does not name {page}"
    # test_tutorial.py's steps start in each tutorial block it runs
    steps = tutorial_steps((ROOT / "docs" / "tutorial.md").read_text())
    for b in blocks:
        if b.page == "docs/tutorial.md" and elsewhere(b):
            assert any(b.line <= s.line <= b.line + b.text.count("\n") for s in steps), b.line
    # a block neither listed nor run elsewhere (a new one) is run here, its page with it
    assert to_run([Block("docs/new.md", 3, "sh", "qoslab reproduce ard")]) != []
    assert {b.page for b in to_run(blocks)} == set(_PAGES)


def test_a_docs_python_block_parses_and_imports_what_exists() -> None:
    """Every Python block (the listed ones too: a renamed or removed name breaks them)."""
    for b in reader_blocks():
        if b.lang != "python":
            continue
        try:
            ast.parse(b.text)
        except SyntaxError as e:
            pytest.fail(f"{b.page}:{b.line + (e.lineno or 1) - 1}: {e.msg}")
        assert not missing_imports(b.text), (
            f"{b.page}:{b.line}: imports what qoslab lacks: {missing_imports(b.text)}"
        )


def missing_imports(code: str) -> list[str]:
    """The qoslab modules and names ``code`` imports that do not exist."""
    missing = []
    mods: list[tuple[str, list[str]]]
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            mods = [(a.name, []) for a in node.names if a.name.split(".")[0] == "qoslab"]
        elif (
            isinstance(node, ast.ImportFrom)
            and node.level == 0
            and (node.module or "").split(".")[0] == "qoslab"
        ):
            mods = [(node.module or "", [a.name for a in node.names])]
        else:
            continue
        for mod, names in mods:
            try:
                m = importlib.import_module(mod)
            except ImportError:
                missing.append(mod)
                continue
            for name in names:
                if name != "*" and not hasattr(m, name):
                    try:
                        importlib.import_module(f"{mod}.{name}")
                    except ImportError:
                        missing.append(f"{mod}.{name}")
    return missing


_LISTED_SHELL = [b for b in reader_blocks() if listed(b) and b.shell]


@pytest.mark.parametrize("block", _LISTED_SHELL, ids=[f"{b.page}:{b.line}" for b in _LISTED_SHELL])
def test_a_listed_block_checks_without_running(block: Block) -> None:
    env: dict[str, str] = {}
    problems = [f"{block.page}:{c.line}: {p}" for c in commands(block) for p in command_problems(c.code, env)]
    assert not problems, "\n".join(problems)


_PAGES = sorted({b.page for b in to_run(reader_blocks())})


@pytest.mark.parametrize("page", _PAGES)
def test_a_pages_blocks_run_as_shown(
    page: str, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The page's blocks that are neither listed nor run elsewhere, in order, in one scratch
    checkout (a reader following the page): each command exits 0 (1 where the page shows its
    error) and prints what the page shows."""
    if page in REQUIRES:
        require(REQUIRES[page])
    work = tmp_path / "checkout"
    work.mkdir()
    run = PageRun(work, scratch(work))
    if page in SETUP:
        SETUP[page](tmp_path_factory, work)
    monkeypatch.chdir(work)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.delenv("QOSLAB_STORE", raising=False)
    try:
        for b in fenced_blocks(ROOT / page):
            if _key(SHOWN_OUTPUT, b):
                run.output(b)
            elif not copied(b) or listed(b) or elsewhere(b):
                continue
            elif key := _key(FILES, b):
                (work / FILES[key]).write_text(b.text + "\n")
            elif b.lang == "python":
                run.python(b)
            else:
                run.shell(b)
    finally:
        run.stop()
        import matplotlib.pyplot as plt

        plt.close("all")


def test_the_checks_find_what_is_wrong() -> None:
    """The check without running finds a removed option, a missing file, an unknown experiment,
    sender or program, a scenario key or value that does not exist, a Makefile target or
    variable that does not; and passes what is right."""
    env: dict[str, str] = {}
    good = [
        "qoslab reproduce ard --quick --seeds 5 --sender cubic --tcp-flavour linux --timing testbed",
        "sudo .venv/bin/qoslab run scenarios/fdd-red-s1.toml --set link.bottleneck.queue_ab.max_p=0.1",
        "QOSLAB_PLUGINS=x qoslab sweep scenarios/fdd-red-s1.toml --grid tcp.variant=reno,newreno --seeds 2",
        "make validate-linux SIM_ONLY=1 FLAVOUR=linux; echo $?",
        "cargo bench -p qoslab-core --bench components",
    ]
    for code in good:
        assert command_problems(code, env) == [], code
    bad = {
        ".venv/bin/qoslab run scenarios/fdd-red-s1.toml --no-such-option": "No such option",
        ".venv/bin/qoslab run scenarios/nosuch.toml": "no file scenarios/nosuch.toml",
        ".venv/bin/qoslab reproduce nosuch --quick": "nosuch",
        ".venv/bin/qoslab reproduce ard --quick --sender nosuch": "nosuch",
        ".venv/bin/qoslab run scenarios/fdd-red-s1.toml --set link.bottleneck.queue_ab.max_p=7": "max_p",
        "qoslab sweep scenarios/fdd-red-s1.toml --grid link.bottleneck.nosuch=1,2": "nosuch",
        "qoslab bench --workload nosuch": "no bench workload nosuch",
        "make nosuch": "no target nosuch",
        "make validate-linux NOSUCH=1": "no variable NOSUCH",
        "frobnicate --all": "no check knows the program",
        ".venv/bin/python tools/ingest_bench.py --nosuch 1": "no option --nosuch",
        ".venv/bin/dask worker tcp://x:1 --nosuch": "no option --nosuch",
    }
    for code, problem in bad.items():
        found = command_problems(code, env)
        assert any(problem in p for p in found), (code, found)
    # an assignment carries to the lines after it
    assert command_problems('TLS="--nosuch x"', env) == []
    assert any("--nosuch" in p for p in command_problems(".venv/bin/dask worker tcp://x:1 $TLS", env))


def test_the_comparison_bites(tmp_path: Path) -> None:
    """What a page shows matches what was printed up to what varies (:data:`doc_blocks.VARIABLE`)
    and its elided parts; a changed number does not."""
    at = places(tmp_path)
    printed = "error: x: stopped at t = 16123.2 s of 5e+06 s: about 13 min of wall-clock time; "
    printed += f"wrote {tmp_path}/tmp/long"
    assert matches(
        printed,
        "error: ...: stopped at t = 23838.7 s of 5e+06 s: about 9 min of wall-clock time; wrote /tmp/long",
        at,
    )
    assert not matches(
        printed,
        "error: ...: stopped at t = 1 s of 6e+06 s: about 9 min of wall-clock time; wrote /tmp/long",
        at,
    )
    assert matches(
        "about 702 TB, above 18.7 GB (80 % of the available memory)",
        "about 702 TB, above 19.7 GB (80 % of the available memory)",
        at,
    )
    assert not matches(
        "about 702 TB, above 18.7 GB (80 % of the available memory)",
        "about 675 TB, above 19.7 GB (80 % of the available memory)",
        at,
    )
    # the commands of an sh block, with the error a page shows after one
    b = Block(
        "x.md", 10, "sh", "a --x \\\n  --y   # note\n# error: boom\n#   and more\n\nb &\n# a comment\nc"
    )
    cs = commands(b)
    assert [(c.code, c.line, c.error, c.background) for c in cs] == [
        ("a --x \\\n  --y   # note", 10, "error: boom and more", False),
        ("b", 15, None, True),
        ("c", 17, None, False),
    ]
    # a shown error is compared: the command below prints another one
    run = PageRun(tmp_path, scratch(tmp_path))
    with pytest.raises(AssertionError, match="the page shows another error"):
        run.shell(Block("x.md", 1, "sh", "echo 'error: two' >&2; exit 1\n# error: one"))
