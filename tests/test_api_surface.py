"""The package's surface for a researcher's code: the version, the typing marker and the stub
of the native module (issue 18)."""

from __future__ import annotations

import ast
import inspect
import subprocess
from pathlib import Path

import pytest

import qoslab
from conftest import QOSLAB
from qoslab import _core

PKG = Path(qoslab.__file__).resolve().parent


def test_version_flag_labels_release_digest_and_revision():
    p = subprocess.run([QOSLAB, "--version"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.strip().splitlines()
    release, digest = qoslab.__version__.split("+")
    assert lines[0] == f"qoslab {release}"
    assert lines[1].startswith(f"source digest: {digest} ") and qoslab.__version__ in lines[1]
    assert lines[2].startswith("git revision: ")
    # run from this checkout: the revision is a short hash (+dirty with local changes)
    rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=PKG)
    if rev.returncode == 0:
        assert lines[2].removeprefix("git revision: ").split("+")[0] == rev.stdout.strip()


def test_package_is_typed_and_the_native_stub_matches_the_module():
    """py.typed ships with the package; `_core.pyi` declares exactly the native module's public
    names, and each function with the runtime's parameter names in order (a renamed or added
    parameter in lib.rs fails here)."""
    assert (PKG / "py.typed").exists()
    stub = ast.parse((PKG / "_core.pyi").read_text())
    declared: dict[str, list[str] | None] = {}
    for node in stub.body:
        if isinstance(node, ast.FunctionDef):
            declared[node.name] = [a.arg for a in node.args.args]
        elif isinstance(node, ast.ClassDef):
            declared[node.name] = None
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            declared[node.target.id] = None
    runtime = {n for n in dir(_core) if not n.startswith("_") or n == "__version__"}
    assert set(declared) == runtime
    for name, params in declared.items():
        if params is None:
            continue
        sig = inspect.signature(getattr(_core, name))
        assert list(sig.parameters) == params, (name, sig)
    # and the stubbed attributes of ScenarioError exist on a raised one
    with pytest.raises(qoslab.ScenarioError) as e:
        qoslab.Scenario.from_toml("name = 1\n", "x.toml")
    assert {"file", "line", "column", "key", "message"} <= set(dir(e.value))


def test_help_names_what_to_type_not_python_types_and_keeps_defaults_whole():
    import os
    import subprocess

    from conftest import QOSLAB

    env = {**os.environ, "COLUMNS": "80"}
    for cmd in (["run"], ["sweep"], ["reproduce"], ["results"], ["plot", "sweep"], ["bench"], []):
        out = subprocess.run([QOSLAB, *cmd, "--help"], capture_output=True, text=True, env=env).stdout
        options = [line for line in out.splitlines() if line.lstrip("│ ").startswith("-")]
        assert options, cmd
        for line in options:
            assert "<bool>" not in line and "<list[" not in line and "<int>" not in line, (cmd, line)
    sweep = subprocess.run([QOSLAB, "sweep", "--help"], capture_output=True, text=True, env=env).stdout
    assert "KEY=V1,V2,…" in sweep and "drops_bottleneck)." in sweep


def test_help_text_is_wrapped_by_the_terminal_not_the_source():
    """A command's docstring is wrapped at 100 columns in the source; help joins each paragraph
    so that the terminal wraps it: at 100 columns no help line ends after a word or two with the
    sentence going on at the next line (the source's breaks showed as lines of one word)."""
    import os
    import subprocess

    from conftest import QOSLAB
    from qoslab.cli import unwrap_help

    assert unwrap_help("One line\ngoes on.\n\n- item\n- item two\n    code\n") == (
        "One line goes on.\n\n- item\n- item two\n    code"
    )
    env = {**os.environ, "COLUMNS": "100"}
    out = subprocess.run([QOSLAB, "--help"], capture_output=True, text=True, env=env).stdout
    rows = [line.strip("│ ").rstrip() for line in out.splitlines() if line.startswith("│")]
    run = next(i for i, r in enumerate(rows) if r.startswith("run "))
    text = " ".join(rows[run : run + 6])
    assert "drops. Memory and capture size are estimated first" in text, text
    # the source's breaks showed as rows of a word or two ("Memory and", "budget", "that")
    assert not [r for r in rows if r in ("Memory and", "budget", "that", "start-up,", "generated")], rows
