"""No import loops between the modules of python/qoslab.

Every ``import`` and ``from … import`` of a qoslab module counts, at module level or inside a
function, except those inside an ``if TYPE_CHECKING:`` block (never executed). A loop means two
modules that cannot be understood, tested or changed apart; a lazy import inside a function only
hides it.
"""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "python" / "qoslab"


def _module_name(path: Path) -> str:
    parts = ["qoslab", *path.relative_to(PKG).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imported(tree: ast.Module, name: str, is_pkg: bool, modules: set[str], typing: bool = False) -> set[str]:
    """The qoslab modules that module ``name`` imports (``from qoslab import ns2`` counts as
    ``qoslab.ns2``; ``from qoslab.runs.sweep import grid`` as ``qoslab.runs.sweep``)."""
    package = name if is_pkg else name.rpartition(".")[0]
    found: set[str] = set()

    def resolve(mod: str) -> str | None:
        # the module itself, or the nearest enclosing qoslab package that exists
        while mod and mod not in modules:
            mod = mod.rpartition(".")[0]
        return mod or None

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test) and not typing:
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "qoslab" or a.name.startswith("qoslab."):
                    if (m := resolve(a.name)) is not None:
                        found.add(m)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if mod == "qoslab" or mod.startswith("qoslab."):
                for a in node.names:
                    sub = f"{mod}.{a.name}"
                    if sub in modules:
                        found.add(sub)
                    elif (m := resolve(mod)) is not None:
                        found.add(m)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    found.discard(name)
    return found


def import_graph(typing: bool = False) -> dict[str, set[str]]:
    """Module name → the qoslab modules it imports. Only explicit imports are edges (as in
    import-linter): importing ``qoslab.store`` also runs ``qoslab/__init__.py`` first, but that
    holds for every submodule and is no dependency of the importer. Compiled modules
    (``qoslab._core``) are leaves."""
    files = {_module_name(p): p for p in sorted(PKG.rglob("*.py"))}
    compiled = {
        _module_name(p.with_name(p.name.split(".")[0] + ".py"))
        for p in PKG.rglob("*")
        if p.suffix in (".so", ".pyd") or p.name.endswith(".pyi")
    }
    modules = set(files) | compiled
    graph: dict[str, set[str]] = {m: set() for m in compiled}
    for name, path in files.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        graph[name] = _imported(tree, name, path.name == "__init__.py", modules, typing)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import loop as ``[a, b, …, a]``, or None."""
    state: dict[str, int] = {}  # 1: on the stack, 2: done
    stack: list[str] = []

    def dfs(n: str) -> list[str] | None:
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m) :] + [m]
            if m not in state and (c := dfs(m)) is not None:
                return c
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state and (c := dfs(n)) is not None:
            return c
    return None


def test_the_graph_sees_lazy_imports_and_skips_type_checking_ones():
    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "import qoslab.store\n"
        "from qoslab import scenario\n"
        "from . import tasks\n"
        "if TYPE_CHECKING:\n"
        "    from qoslab.runs.simulate import Result\n"
        "def f():\n"
        "    from qoslab.runs.executors import LocalExecutor\n"
    )
    modules = {"qoslab", "qoslab.store", "qoslab.scenario", "qoslab.runs.tasks", "qoslab.runs.simulate"}
    modules |= {"qoslab.runs.executors"}
    assert _imported(tree, "qoslab.runs.sweep", False, modules) == {
        "qoslab.store",
        "qoslab.scenario",
        "qoslab.runs.tasks",
        "qoslab.runs.executors",
    }
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_the_graph_covers_the_package():
    g = import_graph()
    assert {
        "qoslab",
        "qoslab.cli",
        "qoslab.runs.sweep",
        "qoslab.runs.executors",
        "qoslab.reproduction.runner",
    } <= set(g)
    assert "qoslab.runs.tasks" in g["qoslab.runs.executors"]
    assert "qoslab._core" in g["qoslab.runs.sweep"] and g["qoslab._core"] == set()
    assert "qoslab.runs.executors" in g["qoslab.runs.sweep"]


def test_no_import_cycles_even_through_type_checking_imports():
    """A type-checking import back is still a dependency a reader must follow (issue 57)."""
    cycle = find_cycle(import_graph(typing=True))
    assert cycle is None, "import loop through a type-checking import: " + " -> ".join(cycle or [])
    # the finder sees type-checking imports: runner names Context for the experiments' types
    assert "qoslab.reproduction.runner" in import_graph(typing=True)["qoslab.studies.ard.figures"]
    assert "qoslab.reproduction.runner" not in import_graph()["qoslab.studies.ard.figures"]


def test_no_import_cycles_in_qoslab():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import loop: " + " -> ".join(cycle or [])


def test_the_reproduction_machinery_imports_no_study():
    """The machinery (``qoslab.reproduction``) names no study: it finds each study's pieces
    through the list of studies (``qoslab.studies``, which imports nothing of qoslab), never by
    importing a study's module, at module level, inside a function or for type checking."""
    g = import_graph(typing=True)
    machinery = {m for m in g if m == "qoslab.reproduction" or m.startswith("qoslab.reproduction.")}
    assert "qoslab.reproduction.rests_on" in machinery
    edges = sorted(f"{m} -> {s}" for m in machinery for s in g[m] if s.startswith("qoslab.studies."))
    assert edges == [], "the machinery imports a study: " + "; ".join(edges)
    # the one edge it keeps: the list of studies itself
    assert "qoslab.studies" in g["qoslab.reproduction.magnitudes"]
