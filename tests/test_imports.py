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
    # the one edge it keeps: the list of studies itself (as the claims registry does)
    assert "qoslab.studies" in g["qoslab.reproduction.base"]
    assert "qoslab.studies" in g["qoslab.verdicts.magnitudes"]


# -- the seams between modules and packages (issue 81) ----------------------------------------------
#
# ``python tests/test_imports.py`` prints the four counts below; the tests hold each at its bound.


def _files() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PKG.rglob("*.py"))}


def _absolute(node: ast.ImportFrom, name: str, is_pkg: bool) -> str:
    if not node.level:
        return node.module or ""
    base = (name if is_pkg else name.rpartition(".")[0]).split(".")
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _is_private(part: str) -> bool:
    # ``_core`` is the compiled bindings, the library's one door to Rust; dunders are Python's
    return part.startswith("_") and part != "_core" and not (part.startswith("__") and part.endswith("__"))


def private_imports_in(tree: ast.Module, name: str, is_pkg: bool) -> list[str]:
    """``module: name`` for every private name (a leading underscore, in the imported name or in
    the path of its module) that module ``name`` imports from another qoslab module, wherever the
    import sits (type-checking blocks included: a private name is no API for a type either), or
    reads as an attribute of what it imported (``figures._fig7`` after ``from . import figures``)."""
    out: list[str] = []
    imported: dict[str, str] = {}  # local name -> the qoslab name it is bound to
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            mod = _absolute(node, name, is_pkg)
            if mod != "qoslab" and not mod.startswith("qoslab."):
                continue
            for a in node.names:
                imported[a.asname or a.name] = f"{mod}.{a.name}"
                if any(map(_is_private, [*mod.split("."), a.name])):
                    out.append(f"{name}: {mod}.{a.name}")
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "qoslab":
                    imported[a.asname or a.name.split(".")[0]] = a.asname and a.name or "qoslab"
                    if any(map(_is_private, a.name.split("."))):
                        out.append(f"{name}: {a.name}")
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in imported
            and _is_private(node.attr)
            and imported[node.value.id] != "qoslab._core"
        ):
            out.append(f"{name}: {imported[node.value.id]}.{node.attr}")
    return out


def private_imports() -> list[str]:
    return [
        hit
        for name, path in _files().items()
        for hit in private_imports_in(ast.parse(path.read_text()), name, path.name == "__init__.py")
    ]


def function_imports_in(tree: ast.Module, name: str, is_pkg: bool) -> list[str]:
    """``module.function: imported`` for every import of a qoslab module inside a function."""
    out: list[str] = []

    def visit(node: ast.AST, fn: str | None) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            fn = node.name
        if fn is not None and isinstance(node, ast.ImportFrom):
            mod = _absolute(node, name, is_pkg)
            if mod == "qoslab" or mod.startswith("qoslab."):
                out.append(f"{name}.{fn}: {mod}")
        elif fn is not None and isinstance(node, ast.Import):
            out.extend(f"{name}.{fn}: {a.name}" for a in node.names if a.name.split(".")[0] == "qoslab")
        for child in ast.iter_child_nodes(node):
            visit(child, fn)

    visit(tree, None)
    return out


def function_imports() -> list[str]:
    return [
        hit
        for name, path in _files().items()
        for hit in function_imports_in(ast.parse(path.read_text()), name, path.name == "__init__.py")
    ]


def unit(module: str, packages: set[str]) -> str:
    """The package a module belongs to: its own directory's package; a module of the top room
    (``qoslab.scenario``) is a unit of its own, since that room holds modules of every level."""
    if module in packages:
        return module
    parent = module.rpartition(".")[0]
    return module if parent in ("qoslab", "") else parent


def package_graph(typing: bool = False) -> dict[str, set[str]]:
    """Package → the packages its modules import (function-level imports included)."""
    files = _files()
    packages = {m for m, p in files.items() if p.name == "__init__.py"}
    out: dict[str, set[str]] = {}
    for m, deps in import_graph(typing).items():
        a = unit(m, packages)
        out.setdefault(a, set())
        out[a] |= {b for d in deps if (b := unit(d, packages)) != a}
    return out


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(set(graph) | {w for ws in graph.values() for w in ws}):
        if v not in index:
            visit(v)
    return sorted(found)


#: The levels of the library, lowest first: a package may import its own level and those below,
#: never one above (function-level imports included). ``qoslab.studies`` itself is the list of
#: studies (it imports nothing of qoslab), below the machinery that looks studies up in it (the
#: reproduction registry their ``study`` modules, the claims registry ``qoslab.verdicts.magnitudes``
#: their ``claims`` modules, each through ``importlib`` by the names in that list).
LEVELS: list[set[str]] = [
    {
        "qoslab._core",
        "qoslab.errors",
        "qoslab.toml_writer",
        "qoslab.stats",
        "qoslab.warmup",
        "qoslab.schema",
        "qoslab.gc_pause",
        "qoslab.budget",
        "qoslab.budget_packets",
        "qoslab.summary_keys",
        "qoslab.studies",
    },
    {"qoslab.scenario", "qoslab.store", "qoslab.outputs"},
    {"qoslab.runs", "qoslab.builder", "qoslab.report", "qoslab.ns2", "qoslab.ns3"},
    {
        "qoslab.verdicts",
        "qoslab.sequential",
        "qoslab.crosscheck",
        "qoslab.plots",
        "qoslab.emulation",
    },
    {"qoslab.reproduction"},
    {"qoslab.studies.*"},
    # the bench measures workloads, some of them a study's own generator (buffer-sizing's
    # backbone dumbbells): above the studies, beside the command line that runs it
    {"qoslab.cli", "qoslab.entry", "qoslab", "qoslab.bench"},
]


def level(u: str) -> int:
    for i, members in enumerate(LEVELS):
        if u in members or any(m.endswith(".*") and u.startswith(m[:-1]) for m in members):
            return i
    raise KeyError(f"{u} has no level in tests/test_imports.py's LEVELS")


def upward_imports() -> list[str]:
    """``importer -> imported`` for every module that imports a module of a higher level."""
    files = _files()
    packages = {m for m, p in files.items() if p.name == "__init__.py"}
    return sorted(
        f"{m} -> {d}"
        for m, deps in import_graph().items()
        for d in deps
        if level(unit(d, packages)) > level(unit(m, packages))
    )


def seams() -> dict[str, int]:
    cycles = strongly_connected(package_graph())
    return {
        "private cross-module imports": len(private_imports()),
        "qoslab imports inside functions": len(function_imports()),
        "packages in an import cycle": sum(map(len, cycles)),
        "upward dependencies": len(upward_imports()),
    }


#: Private names a module may import from another, and why.
PRIVATE_ALLOWED = {
    # written by `make wheel` into the wheel only (Makefile, tests/test_wheel.py) and read by
    # `qoslab version` alone, under `except ImportError`; absent from a source tree, so it is no
    # module's API (a public name would offer a module that exists only in wheels as one)
    "qoslab.cli.app: qoslab._build_info.GIT_REVISION",
}


def test_the_private_import_finder_sees_names_and_modules() -> None:
    tree = ast.parse(
        "from qoslab.cli.common import _Errors, print_table\n"
        "from ._gc import paused\n"
        "from qoslab import _core, __version__\n"
        "import qoslab.runs._gc\n"
        "def f():\n"
        "    from .figures import _fig7\n"
        "from qoslab.studies.ard import sweeps as sw\n"
        "sw._f0(ctx)\n"
        "_core._private\n"
    )
    assert private_imports_in(tree, "qoslab.runs.sweep", False) == [
        "qoslab.runs.sweep: qoslab.cli.common._Errors",
        "qoslab.runs.sweep: qoslab.runs._gc.paused",
        "qoslab.runs.sweep: qoslab.runs._gc",
        "qoslab.runs.sweep: qoslab.runs.figures._fig7",
        "qoslab.runs.sweep: qoslab.studies.ard.sweeps._f0",
    ]


def test_no_private_name_is_imported_across_modules() -> None:
    """A name another module imports is its module's API: no leading underscore (or the code
    belongs in the importer's module)."""
    found = sorted(set(private_imports()) - PRIVATE_ALLOWED)
    assert not found, "private names imported across modules:\n" + "\n".join(found)


#: qoslab imports inside functions: at most this many. Most keep start-up short (the commands of
#: ``qoslab.cli`` import what they use when they run; ``qoslab.__getattr__`` and ``qoslab.entry``
#: load the run path on first use; a worker's ``tasks.execute`` loads numpy with the simulator;
#: the bench's ``warmup_of`` loads MSER-5, and pandas with it, which callgrind's count of the
#: event loop would otherwise spend 20 s importing); the rest wait for a module that is not
#: loaded otherwise. None breaks an import loop: the graph above counts them and has none.
FUNCTION_IMPORTS = 102

#: Upward dependencies left, and why (``importer -> imported``): none. The verdicts' tools read
#: the declared claims from ``qoslab.verdicts.magnitudes`` (the registry, built on
#: ``qoslab.verdicts.claims``) and a plugin study's code from the plan its caller passes
#: (``qoslab.verdicts.currency.experiment_fingerprint``), not from the reproduction machinery.
UPWARD: dict[str, str] = {}

#: The packages still in an import cycle (function-level imports counted): none.
CYCLE: list[str] = []


def test_the_seam_finders_see_cycles_levels_and_function_imports() -> None:
    assert strongly_connected({"a": {"b"}, "b": {"a", "c"}, "c": set(), "d": {"d"}}) == [["a", "b"]]
    tree = ast.parse("import qoslab.stats\ndef f():\n    from . import tasks\n    import os\n")
    assert function_imports_in(tree, "qoslab.runs.sweep", False) == ["qoslab.runs.sweep.f: qoslab.runs"]
    assert level("qoslab.studies.ard") > level("qoslab.reproduction") > level("qoslab.verdicts")
    assert level("qoslab.scenario") < level("qoslab.runs") and level("qoslab.gc_pause") == 0


def test_function_level_imports_do_not_grow() -> None:
    found = function_imports()
    assert len(found) <= FUNCTION_IMPORTS, (
        f"{len(found)} qoslab imports inside functions (bound {FUNCTION_IMPORTS})"
    )


def test_no_new_upward_dependency() -> None:
    new = sorted(set(upward_imports()) - UPWARD.keys())
    assert not new, "a package imports one of a higher level (tests/test_imports.py LEVELS): " + "; ".join(
        new
    )
    assert not (gone := sorted(UPWARD.keys() - set(upward_imports()))), f"no longer upward, remove: {gone}"


def test_no_package_joins_the_import_cycle() -> None:
    cycles = strongly_connected(package_graph())
    assert all(set(c) <= set(CYCLE) for c in cycles), f"packages in an import cycle: {cycles}"
    assert not (gone := sorted(set(CYCLE) - {u for c in cycles for u in c})), (
        f"no longer in a cycle, remove: {gone}"
    )


if __name__ == "__main__":
    import sys

    verbose = "-v" in sys.argv
    for k, v in seams().items():
        print(f"{k}: {v}")
    if verbose:
        print(*private_imports(), sep="\n")
        print(*strongly_connected(package_graph()), sep="\n")
        print(*upward_imports(), sep="\n")
