"""Every Python block a reader copies from the docs parses, and everything it imports from
qoslab exists (a block that imported a removed helper, ``plot_mean_ci``, went unnoticed).

The blocks whose output a page shows are run and compared elsewhere (tests/test_tutorial.py,
tests/test_example_study.py, tests/test_timing.py and others); this test covers the rest at the
level a renamed or removed name breaks them: syntax and qoslab imports, without running them
(several need a store, a cluster or root)."""

from __future__ import annotations

import ast
import importlib
import re

import pytest

from conftest import ROOT

_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def python_blocks() -> list[tuple[str, int, str]]:
    """(page, line, code) of every ```python block of docs/ and the README."""
    out = []
    for page in [*sorted((ROOT / "docs").rglob("*.md")), ROOT / "README.md"]:
        text = page.read_text(encoding="utf-8")
        for m in _BLOCK.finditer(text):
            out.append((str(page.relative_to(ROOT)), text.count("\n", 0, m.start()) + 1, m.group(1)))
    return out


def missing_imports(code: str) -> list[str]:
    """The qoslab modules and names ``code`` imports that do not exist."""
    missing = []
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


@pytest.mark.parametrize(("page", "line", "code"), python_blocks(), ids=lambda v: str(v)[:40])
def test_a_docs_python_block_parses_and_imports_what_exists(page: str, line: int, code: str) -> None:
    try:
        ast.parse(code)
    except SyntaxError as e:
        pytest.fail(f"{page}:{line + (e.lineno or 0)}: {e.msg}")
    assert not missing_imports(code), (
        f"{page}:{line}: imports what qoslab does not have: {missing_imports(code)}"
    )


def test_the_check_finds_a_removed_name_and_a_missing_module() -> None:
    code = "from qoslab.report.page import new_figure, plot_mean_ci\nimport qoslab.nosuch\nimport os\n"
    assert missing_imports(code) == ["qoslab.report.page.plot_mean_ci", "qoslab.nosuch"]
    assert len(python_blocks()) >= 20
