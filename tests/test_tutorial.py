"""The docs site (issue 18): docs/tutorial.md runs as written, and `mkdocs build --strict` builds
docs/ with no broken link.

The tutorial's code is extracted by the convention stated in the HTML comment at its top:
lines starting with ``$ `` in ```console blocks are shell commands (a line ending in ``\\``
continues on the next), ```python blocks are Python run in one shared namespace, and
``<!-- produces: PATH ... -->`` lists files the steps above it must have written. Everything
runs in order in a scratch directory holding a link to the checkout's scenarios/, with this
venv's ``qoslab`` first on the PATH.
"""

from __future__ import annotations

import importlib.util
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


def tutorial_steps(text: str) -> list[Step]:
    """The executable steps of a Markdown page, in order (the convention above)."""
    steps: list[Step] = []
    lang: str | None = None  # the open fence's language, None outside a fence
    block: list[str] = []
    start = start_cmd = 0
    command: list[str] = []
    for n, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if lang is None:
            if m:
                lang, block, start = m.group(1), [], n + 1
            elif p := PRODUCES.match(line):
                steps.append(Step("produces", p.group(1).strip(), n))
            continue
        if m and not m.group(1):  # the closing fence
            if lang == "python":
                steps.append(Step("python", "\n".join(block) + "\n", start))
            assert not command, f"tutorial line {n}: a command continued with \\ runs into the fence"
            lang = None
            continue
        block.append(line)
        if lang != "console":
            continue
        if command:
            command.append(line)
        elif line.startswith("$ "):
            command = [line[2:]]
            start_cmd = n
        if command and not line.endswith("\\"):
            steps.append(Step("shell", "\n".join(command), start_cmd))
            command = []
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
        Step("shell", "qoslab run a.toml \\\n    --out results/a", 5),
        Step("shell", "ls results/a", 8),
        Step("produces", "results/a/summary.json results/a/x.png", 10),
        Step("python", "x = 1\n\nprint(x)\n", 12),
    ]
    # and the tutorial states that convention where an editor sees it
    assert "<!-- tutorial-test:" in TUTORIAL.read_text().split("\n## ", 1)[0]


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
            elif step.kind == "python":
                # blank lines in front, so that a traceback gives the tutorial's own line numbers
                code = compile("\n" * (step.line - 1) + step.code, str(TUTORIAL), "exec")
                exec(code, namespace)
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
