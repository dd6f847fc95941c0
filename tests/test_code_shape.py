"""The shape of the code (docs/architecture.md): no Rust file of the core or of the emulator's
link daemon over 700 lines and no Rust function over 150 lines, so that each file holds one job
and each function reads in one sitting. Counted on the rustfmt-formatted sources, tests
included."""

from __future__ import annotations

import ast
import re
from pathlib import Path

CORE = Path(__file__).resolve().parents[1] / "crates" / "qoslab-core" / "src"
EMU = Path(__file__).resolve().parents[1] / "crates" / "qoslab-emu" / "src"
#: The Rust crates the limits below hold for (the bindings have theirs further down).
RUST = (CORE, EMU)
MAX_FILE_LINES = 700
MAX_FN_LINES = 150
_FN = re.compile(r"^(\s*)(pub(\([\w:]+\))?\s+)?(const\s+)?fn\s+(\w+)")


def rust_functions(path: Path) -> list[tuple[str, int, int]]:
    """(name, first line, length in lines) of every `fn` in a rustfmt-formatted file: a
    function ends at the first later line that is `}` at the indentation of its `fn`."""
    lines = path.read_text().splitlines()
    out = []
    for i, line in enumerate(lines):
        m = _FN.match(line)
        if not m or line.rstrip().endswith(";"):
            continue
        indent = m.group(1)
        for j in range(i + 1, len(lines)):
            if lines[j] == f"{indent}}}":
                out.append((m.group(5), i + 1, j - i + 1))
                break
    return out


def test_no_core_or_emulator_file_over_700_lines() -> None:
    big = {
        str(p.relative_to(root.parents[1])): n
        for root in RUST
        for p in sorted(root.rglob("*.rs"))
        if (n := len(p.read_text().splitlines())) > MAX_FILE_LINES
    }
    assert not big, f"files over {MAX_FILE_LINES} lines: {big}"


def test_no_core_or_emulator_function_over_150_lines() -> None:
    long = [
        f"{p.relative_to(root.parents[1])}:{line} {name} ({n} lines)"
        for root in RUST
        for p in sorted(root.rglob("*.rs"))
        for name, line, n in rust_functions(p)
        if n > MAX_FN_LINES
    ]
    assert not long, "functions over 150 lines:\n" + "\n".join(long)


def test_the_function_finder_sees_functions() -> None:
    # The checks above pass vacuously if the finder finds nothing.
    fns = {name for name, _, _ in rust_functions(CORE / "engine.rs")}
    assert {"at", "pop"} <= fns, fns
    assert "run" in {name for name, _, _ in rust_functions(EMU / "main.rs")}


def test_experiments_draw_with_the_shared_figure_kinds() -> None:
    # Studies build figures from qoslab.report.figures (one layout for every figure), never with
    # their own matplotlib calls; nor does the reproduction machinery.
    pkg = Path(__file__).resolve().parents[1] / "python" / "qoslab"
    files = sorted([*(pkg / "studies").rglob("*.py"), *(pkg / "reproduction").glob("*.py")])
    own = re.compile(r"matplotlib|new_figure|\bax\.\w+\(|\.subplots\(")
    users = {
        p.relative_to(pkg).as_posix(): [
            i + 1 for i, line in enumerate(p.read_text().splitlines()) if own.search(line)
        ]
        for p in files
    }
    offenders = {name: lines for name, lines in users.items() if lines}
    assert not offenders, f"experiments drawing with matplotlib directly (file: lines): {offenders}"
    uses = [p.name for p in files if "from qoslab.report.figures import" in p.read_text()]
    assert len(uses) >= 6, uses


def test_the_version_fingerprints_the_python_that_shapes_stored_runs():
    """The result store keys runs by version: the modules that build a run's tables, summary and
    metrics and read its scenario are hashed into it with the Rust sources (crates/qoslab-py/
    build.rs), so that a change to them never reuses stored results."""
    build = (Path(__file__).resolve().parents[1] / "crates" / "qoslab-py" / "build.rs").read_text()
    listed = set(re.findall(r'"([\w/]+\.py)"', build))
    assert {
        "runs/simulate.py",
        "runs/tasks.py",
        "scenario.py",
        "summary_keys.py",
        "budget.py",
    } <= listed, listed
    # Every module the run path imports (statically, function-level imports included, typing-only
    # ones not) is fingerprinted, but for those that cannot change a stored result.
    shaping = run_path_modules() - NOT_SHAPING.keys()
    assert {"summary_keys.py", "budget.py", "runs/simulate.py", "store/__init__.py"} <= shaping, shaping
    missing = sorted(shaping - listed)
    assert not missing, f"modules on the run path that build.rs does not fingerprint: {missing}"
    gone = sorted(f for f in listed if not (PY / f).is_file())
    assert not gone, f"build.rs fingerprints modules that do not exist: {gone}"


PY = Path(__file__).resolve().parents[1] / "python" / "qoslab"
#: Where a stored run is computed and recorded: a worker's tasks.execute, the coordinator's store.
RUN_PATH = ("runs/tasks.py", "store/__init__.py")
#: Modules the run path imports whose code cannot change a stored result, and why.
NOT_SHAPING = {
    "runs/__init__.py": "the room's docstring (it imports and defines nothing)",
    "runs/deferral.py": "holds Ctrl-C and SIGTERM back while a run's outputs are written: when a "
    "signal is acted on, never what is computed or stored",
    "outputs/__init__.py": "the tables' column documentation, imported for help() docstrings only",
    "outputs/columns.py": "the column documentation's vocabulary (as outputs/__init__.py)",
    "outputs/tables.py": "the run tables' column documentation (as outputs/__init__.py)",
    "outputs/series.py": "the time series' column documentation (as outputs/__init__.py)",
    "outputs/summary.py": "summary.json's key documentation (as outputs/__init__.py)",
    "outputs/store.py": "the sweep's and the store's column documentation (as outputs/__init__.py)",
    "schema.py": "the scenario format as JSON Schema, read by outputs/series.py for the gauge columns' "
    "documentation (the core's declarations, themselves fingerprinted with the Rust sources)",
    "builder/__init__.py": "builds scenarios in Python (qoslab.builder, loaded on first use): what it "
    "builds is the scenario text, whose canonical hash is part of every run's key",
    "toml_writer.py": "writes the builder's scenarios as TOML (as builder/__init__.py)",
    "builder/base.py": "the builder's machinery (as builder/__init__.py)",
    "builder/tables.py": "the builder's other tables (as builder/__init__.py)",
    "builder/queues.py": "the builder's queue classes, generated (as builder/__init__.py)",
    "builder/meters.py": "the builder's meter classes, generated (as builder/__init__.py)",
    "builder/sources.py": "the builder's source classes, generated (as builder/__init__.py)",
}


def _imports(path: Path) -> set[str]:
    """The qoslab modules ``path`` imports (files relative to python/qoslab), skipping the
    ``if TYPE_CHECKING:`` blocks (typing only)."""
    import ast

    tree = ast.parse(path.read_text())
    out: set[str] = set()

    def module_file(dotted: str) -> str | None:
        parts = dotted.split(".")[1:]
        if not parts:
            return "__init__.py"
        f = PY.joinpath(*parts)
        if f.with_suffix(".py").is_file():
            return str(f.with_suffix(".py").relative_to(PY))
        if (f / "__init__.py").is_file():
            return str((f / "__init__.py").relative_to(PY))
        return None

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for n in node.orelse:
                visit(n)
            return
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "qoslab":
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            out.update(f for f in map(module_file, names) if f)
        elif isinstance(node, ast.Import):
            mods = [a.name for a in node.names if a.name.split(".")[0] == "qoslab"]
            out.update(f for f in map(module_file, mods) if f)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return out


def run_path_modules() -> set[str]:
    """Every qoslab module reachable by imports from :data:`RUN_PATH`."""
    seen: set[str] = set()
    todo = list(RUN_PATH)
    while todo:
        f = todo.pop()
        if f not in seen:
            seen.add(f)
            todo += _imports(PY / f) - seen
    return seen


def test_the_import_finder_follows_function_level_imports_and_skips_typing_ones() -> None:
    mods = run_path_modules()
    # simulate is imported inside tasks.execute; qoslab.runs.sweep only under TYPE_CHECKING nowhere
    assert "runs/simulate.py" in mods and "summary_keys.py" in mods, mods
    assert not any(m.startswith("cli") for m in mods) and "runs/sweep.py" not in mods, mods


# -- the same rules for the Python library and the bindings (issue 57 item 5) -----------------------

BINDINGS = Path(__file__).resolve().parents[1] / "crates" / "qoslab-py" / "src"

#: Files over 700 lines when the rule was extended to the Python library and the bindings, at
#: their size then. Each may only shrink; one that comes within the limit must leave the list,
#: and no other file may pass the limit.
FILE_DEBT: dict[str, int] = {}
#: Functions over 150 lines then, likewise.
FUNCTION_DEBT: dict[str, int] = {}


def _repo_files() -> list[Path]:
    return [*sorted(PY.rglob("*.py")), *sorted(BINDINGS.rglob("*.rs"))]


def _rel(p: Path) -> str:
    return str(p.relative_to(PY.parents[1]))


def _functions(p: Path) -> list[tuple[str, int]]:
    if p.suffix == ".rs":
        return [(name, n) for name, _, n in rust_functions(p)]
    tree = ast.parse(p.read_text())
    fns = (f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef))
    return [(f.name, (f.end_lineno or f.lineno) - f.lineno + 1) for f in fns]


def _judge(sizes: dict[str, int], debt: dict[str, int], limit: int) -> list[str]:
    out = [f"{k}: {n} lines (limit {limit})" for k, n in sizes.items() if n > limit and k not in debt]
    out += [f"{k}: grew from {debt[k]} to {sizes[k]} lines" for k in debt if sizes.get(k, 0) > debt[k]]
    out += [
        f"{k}: now {sizes.get(k, 0)} lines, within the limit: remove it from the debt"
        for k in debt
        if sizes.get(k, 0) <= limit
    ]
    return out


def test_python_and_bindings_files_keep_to_700_lines_beyond_the_listed_debt() -> None:
    sizes = {_rel(p): len(p.read_text().splitlines()) for p in _repo_files()}
    assert not (bad := _judge(sizes, FILE_DEBT, MAX_FILE_LINES)), "\n".join(bad)


def test_python_and_bindings_functions_keep_to_150_lines_beyond_the_listed_debt() -> None:
    sizes: dict[str, int] = {}
    for p in _repo_files():
        for name, n in _functions(p):
            key = f"{_rel(p)}:{name}"
            sizes[key] = max(sizes.get(key, 0), n)
    assert not (bad := _judge(sizes, FUNCTION_DEBT, MAX_FN_LINES)), "\n".join(bad)


def test_the_debt_judge_fails_on_growth_new_offenders_and_paid_debt() -> None:
    assert _judge({"a": 800, "b": 701, "c": 10}, {"a": 750, "c": 900}, 700) == [
        "b: 701 lines (limit 700)",
        "a: grew from 750 to 800 lines",
        "c: now 10 lines, within the limit: remove it from the debt",
    ]
    assert _functions(PY / "cli" / "reproduce.py")  # the finder sees Python functions


def test_the_algorithm_layer_never_reaches_up_into_the_host() -> None:
    """docs/architecture.md's layers: a mechanism (aqm/, conditioner/, traffic/) and what it is
    built from (params/, stats/) know nothing of the link host (net/), the event loop (sim/) or
    the scenario reader (scenario/); those read the mechanisms, not the other way round (the
    multi queue's configuration once lived in net/ and the queue registry reached up to it).
    Unit-test files may drive a whole scenario."""
    up = re.compile(r"\bcrate::(net|sim|scenario)\b|\bsuper::super::(net|sim|scenario)\b")
    offenders = [
        f"{p.relative_to(CORE)}:{i + 1}"
        for layer in ("aqm", "conditioner", "traffic", "params", "stats")
        for p in sorted((CORE / layer).rglob("*.rs"))
        if not (p.stem.endswith("tests") or "tests" in p.relative_to(CORE).parts)
        for i, line in enumerate(p.read_text().splitlines())
        if up.search(line)
    ]
    assert not offenders, f"the algorithm layer imports the host: {offenders}"


def _is_test_only(p: Path) -> bool:
    """build.rs's rule for the files it leaves out of the version fingerprint."""
    return p.name in ("tests", "tests.rs") or p.name.endswith("_tests.rs")


def _module_declarations(path: Path) -> list[tuple[Path, list[str]]]:
    """Each out-of-line `mod x;` in a Rust file: the file it names and its attribute lines."""
    found = []
    lines = path.read_text().splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"\s*(?:pub(?:\([\w:]+\))?\s+)?mod (\w+);", line)
        if not m:
            continue
        attrs = []
        j = i - 1
        while j >= 0 and lines[j].strip().startswith("#["):
            attrs.append(lines[j].strip())
            j -= 1
        given = next((re.search(r'path\s*=\s*"([^"]+)"', a) for a in attrs if "path" in a), None)
        if given:
            target = path.parent / given.group(1)
        else:
            base = path.parent if path.name in ("mod.rs", "lib.rs", "main.rs") else path.with_suffix("")
            target = base / f"{m.group(1)}.rs"
            if not target.exists():
                target = base / m.group(1) / "mod.rs"
        found.append((target.resolve(), attrs))
    return found


def test_the_unit_test_files_left_out_of_the_fingerprint_compile_only_under_cfg_test() -> None:
    """build.rs does not hash the core's unit-test files, so that a change to a test never
    re-stamps stored results: each must be declared under #[cfg(test)] (else it would be part of
    the library a run uses), and every file the rule leaves out is so declared."""
    roots = [CORE.resolve(), (CORE.parents[1] / "qoslab-py" / "src").resolve()]
    every = [p for r in roots for p in r.rglob("*.rs")]

    def in_tests(p: Path) -> bool:
        rel = p.relative_to(next(r for r in roots if p.is_relative_to(r)))
        return any(_is_test_only(a) for a in [rel, *rel.parents])

    left_out = {p.resolve() for p in every if in_tests(p)}
    assert len(left_out) >= 15, sorted(left_out)
    declared = set()
    for f in every:
        if in_tests(f):
            continue
        for target, attrs in _module_declarations(f):
            if target in left_out:
                assert "#[cfg(test)]" in attrs, f"{_rel(f)} declares {target.name} without #[cfg(test)]"
                declared.add(target)
    # The files a declaration reaches directly: x_tests.rs or tests.rs outside a tests folder,
    # and a tests folder's mod.rs (the rest of that folder is declared from there, itself left out).
    entries = {p for p in left_out if _is_test_only(p) and not in_tests(p.parent)}
    entries |= {
        p
        for p in left_out
        if p.name == "mod.rs" and _is_test_only(p.parent) and not in_tests(p.parent.parent)
    }
    assert entries - declared == set(), sorted(_rel(p) for p in entries - declared)


def test_every_file_the_core_compiles_in_is_fingerprinted():
    """A data file the core compiles in (`include_str!`, `include_bytes!`: the flow-size CDFs)
    shapes results as its code does: build.rs hashes every file of the kinds it compiles in."""
    build = (CORE.parents[1] / "qoslab-py" / "build.rs").read_text()
    hashed = set(re.findall(r'x == "(\w+)"', build))
    included = [
        (p, m.group(1))
        for p in CORE.rglob("*.rs")
        for m in re.finditer(r'include_(?:str|bytes)!\("([^"]+)"\)', p.read_text())
    ]
    assert included, "the finder sees include_str!"
    for p, target in included:
        assert (p.parent / target).is_file(), (p, target)
        assert Path(target).suffix.lstrip(".") in hashed, f"{_rel(p)} compiles in {target}: not hashed"
