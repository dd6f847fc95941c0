"""The docs site (issue 18): docs/tutorial.md runs as written, and `mkdocs build --strict` builds
docs/ with no broken link.

The tutorial's code is extracted by the convention stated in the HTML comment at its top:
lines starting with ``$ `` in ```console blocks are shell commands (a line ending in ``\\``
continues on the next), ```python blocks are Python run in one shared namespace, and
``<!-- produces: PATH ... -->`` lists files the steps above it must have written. Everything
runs in order in a scratch directory holding a link to the checkout's scenarios/, with this
venv's ``qoslab`` first on the PATH.

What a step prints is compared with the page: a command's output lines (the lines after it in
its ```console block) and a Python block's (the ```text block right after it), both after
:func:`normalise` (version strings, wall times, table borders and line breaks; an ``ls`` as a
set of names), so a page whose printed numbers or columns went stale fails.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest

from conftest import ROOT

TUTORIAL = ROOT / "docs" / "tutorial.md"
FENCE = re.compile(r"^```(\w*)\s*$")
PRODUCES = re.compile(r"^<!--\s*produces:(.*?)-->\s*$")


@dataclass(frozen=True)
class Step:
    kind: Literal["shell", "python", "produces"]
    code: str
    line: int  # 1-based line of the tutorial where the step starts
    shown: str | None = None  # what the page shows it printing (None: nothing shown)


#: A qoslab version with its core fingerprint, e.g. 0.1.0+73ed3c37352e.
_VERSION = re.compile(r"\b\d+\.\d+\.\d+\+[0-9a-f]{12}(?:-dirty)?\b")
#: Wall-clock figures, which no two runs share.
_WALL = [
    (re.compile(r"in [0-9.]+ s wall \([0-9.]+ M hops/s\)"), "in T s wall"),
    (re.compile(r"failed; [0-9.]+ s;"), "failed; T s;"),
    (re.compile(r"failed\) in [0-9.]+ s;"), "failed) in T s;"),
]
#: Table borders: rich's box drawing on a terminal, a Markdown table's bars and rule elsewhere.
_BORDERS = re.compile(r"\|(?::?-+:?\|)+|[|─━│┃┏┓┗┛┡┩┣┫╇╋┳┻└┘├┤┬┴┼]+")


def normalise(text: str, *, as_set: bool = False) -> list[str]:
    """The words of ``text`` that do not depend on the machine, the time or the terminal: the
    version becomes VERSION, wall times T, table borders and line breaks go. ``as_set``: the
    words sorted (``ls`` lays names out in columns by the terminal's width)."""
    text = _VERSION.sub("VERSION", text)
    for pattern, repl in _WALL:
        text = pattern.sub(repl, text)
    words = _BORDERS.sub(" ", text).split()
    return sorted(words) if as_set else words


def tutorial_steps(text: str) -> list[Step]:
    """The executable steps of a Markdown page, in order (the convention above)."""
    steps: list[Step] = []
    lang: str | None = None  # the open fence's language, None outside a fence
    block: list[str] = []
    start = start_cmd = 0
    command: list[str] = []
    output: list[str] | None = None  # the output lines of the last command of the open block
    after_python = False  # only blank lines since a Python block closed

    def close_output() -> None:
        if output and steps and steps[-1].kind == "shell":
            last = steps.pop()
            steps.append(Step(last.kind, last.code, last.line, "\n".join(output)))

    for n, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if lang is None:
            if m:
                lang, block, start = m.group(1), [], n + 1
            elif p := PRODUCES.match(line):
                steps.append(Step("produces", p.group(1).strip(), n))
            if line.strip() and not (m and m.group(1) == "text"):
                after_python = False
            continue
        if m and not m.group(1):  # the closing fence
            if lang == "python":
                steps.append(Step("python", "\n".join(block) + "\n", start))
            elif lang == "text" and after_python:
                last = steps.pop()
                steps.append(Step(last.kind, last.code, last.line, "\n".join(block)))
            close_output()
            assert not command, f"tutorial line {n}: a command continued with \\ runs into the fence"
            after_python, output = lang == "python", None
            lang = None
            continue
        block.append(line)
        if lang != "console":
            continue
        if command:
            command.append(line)
        elif line.startswith("$ "):
            close_output()
            command, output = [line[2:]], None
            start_cmd = n
        elif output is not None:
            output.append(line)
        if command and not line.endswith("\\"):
            steps.append(Step("shell", "\n".join(command), start_cmd))
            command, output = [], []
    assert lang is None, "the tutorial ends inside a code block"
    return steps


def test_steps_are_extracted_by_the_stated_convention() -> None:
    page = "\n".join(
        [
            "```sh",
            "$ make demo",  # a sh block is shown, not run
            "```",
            "```console",
            "$ qoslab run a.toml \\",
            "    --out results/a",
            "output line, not run",
            "$ ls results/a",
            "```",
            "<!-- produces: results/a/summary.json results/a/x.png -->",
            "```python",
            "x = 1",
            "",
            "print(x)",
            "```",
            "```text",
            "$ not a command: output of the Python above",
            "```",
        ]
    )
    assert tutorial_steps(page) == [
        Step("shell", "qoslab run a.toml \\\n    --out results/a", 5, "output line, not run"),
        Step("shell", "ls results/a", 8),
        Step("produces", "results/a/summary.json results/a/x.png", 10),
        Step("python", "x = 1\n\nprint(x)\n", 12, "$ not a command: output of the Python above"),
    ]
    shown = "qoslab 0.1.0+73ed3c37352e\n┃ a ┃ 1.0 ┃\n1 runs; 0 failed; 1.2 s; store"
    assert normalise(shown) == [
        "qoslab",
        "VERSION",
        "a",
        "1.0",
        "1",
        "runs;",
        "0",
        "failed;",
        "T",
        "s;",
        "store",
    ]
    assert normalise("b  a\nc", as_set=True) == ["a", "b", "c"]
    # and the tutorial states that convention where an editor sees it
    assert "<!-- tutorial-test:" in TUTORIAL.read_text().split("\n## ", 1)[0]


def _compare(step: Step, printed: str) -> None:
    """What ``step`` printed against what the page shows (nothing shown: not compared)."""
    if step.shown is None:
        return
    as_set = step.kind == "shell" and step.code.startswith("ls ")
    assert normalise(printed, as_set=as_set) == normalise(step.shown, as_set=as_set), (
        f"tutorial line {step.line}: the page shows other output than `{step.code.splitlines()[0]}` "
        f"prints now\n--- printed\n{printed}\n--- on the page\n{step.shown}"
    )


def _check_produced(work: Path, step: Step) -> list[Path]:
    paths = [work / p for p in step.code.split()]
    assert paths, f"tutorial line {step.line}: an empty produces comment"
    for p in paths:
        assert p.is_file() and p.stat().st_size > 0, (
            f"tutorial line {step.line}: {p.relative_to(work)} missing"
        )
        if p.suffix == ".png":
            assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", f"{p} is not a PNG"
    return paths


def test_tutorial_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    steps = tutorial_steps(TUTORIAL.read_text())
    kinds = {s.kind for s in steps}
    assert kinds == {"shell", "python", "produces"}, kinds
    work = tmp_path / "checkout"
    work.mkdir()
    (work / "scenarios").symlink_to(ROOT / "scenarios")
    env = dict(os.environ)
    env.pop("QOSLAB_STORE", None)  # the tutorial's store is results/store
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["MPLBACKEND"] = "Agg"
    env["COLUMNS"] = "200"  # no table wraps its cells; normalise() ignores the widths
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.delenv("QOSLAB_STORE", raising=False)
    monkeypatch.chdir(work)
    namespace: dict[str, Any] = {"__name__": "__tutorial__"}
    produced: list[Path] = []
    try:
        for step in steps:
            if step.kind == "shell":
                p = subprocess.run(
                    ["bash", "-e", "-o", "pipefail", "-c", step.code],
                    cwd=work,
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=120,
                )
                assert p.returncode == 0, (
                    f"tutorial line {step.line}: `{step.code}` exited {p.returncode}\n"
                    f"--- stdout\n{p.stdout}\n--- stderr\n{p.stderr}"
                )
                _compare(step, p.stdout)  # stderr has the progress lines, shown on a terminal only
            elif step.kind == "python":
                # blank lines in front, so that a traceback gives the tutorial's own line numbers
                code = compile("\n" * (step.line - 1) + step.code, str(TUTORIAL), "exec")
                printed = io.StringIO()
                with contextlib.redirect_stdout(printed):
                    exec(code, namespace)
                _compare(step, printed.getvalue())
            else:
                produced += _check_produced(work, step)
    finally:
        if "matplotlib.pyplot" in sys.modules:
            sys.modules["matplotlib.pyplot"].close("all")
    assert any(p.suffix == ".png" for p in produced), "the tutorial checks none of its plots"


def test_docs_site_builds_strict(tmp_path: Path) -> None:
    """`make docs`: every page of docs/ in the nav, no link to a missing page or anchor."""
    if importlib.util.find_spec("mkdocs") is None:
        pytest.skip("mkdocs is not installed (`make docs` installs it; it is in the dev extra)")
    site = tmp_path / "site"
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "-f",
            str(ROOT / "mkdocs.yml"),
            "-d",
            str(site),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr
    for page in (
        "index.html",
        "tutorial/index.html",
        "models/red/index.html",
        "scenario-reference/index.html",
    ):
        assert (site / page).is_file(), page


def test_a_changed_printed_line_on_the_page_fails(tmp_path: Path) -> None:
    """The comparison bites: the page's first command as shown passes, and the same page with
    one printed number changed (ftp0's throughput, 208.1 → 208.2 kbps) fails."""
    text = TUTORIAL.read_text()
    first = next(s for s in tutorial_steps(text) if s.kind == "shell" and s.shown)
    assert "│             208.1 │" in first.shown
    (tmp_path / "scenarios").symlink_to(ROOT / "scenarios")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    p = subprocess.run(["bash", "-c", first.code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    _compare(first, p.stdout)
    changed = next(
        s
        for s in tutorial_steps(text.replace("│             208.1 │", "│             208.2 │", 1))
        if s.shown
    )
    with pytest.raises(AssertionError, match="the page shows other output"):
        _compare(changed, p.stdout)
