"""Fingerprints, files and the checks CI runs on the committed verdicts.

A verdicts file records, under ``fingerprint``, what computed it:

- ``core``: the simulator's fingerprint, the ``<hash>`` of ``qoslab.__version__``
  (``0.1.0+<hash>``). ``crates/qoslab-py/build.rs`` computes it (FNV-1a, 64 bits, top 48 bits)
  over the core's and the bindings' Rust sources, the core's ``Cargo.toml`` and the Python
  modules that shape a stored run (``runs/simulate.py``, ``runs/tasks.py``, ``scenario.py``).
  :func:`core_fingerprint` computes the same hash from the source tree, without a build, so
  ``check`` can tell whether a committed file was computed by the code in the checkout;
- ``experiment``: the same hash over the study's package (``studies/NAME/``), the modules of
  other studies and of the reproduction machinery it imports, and ``stats.py``
  (:func:`experiment_files`); for a plugin study, combined with the hash of its own package
  (:func:`plugin_files`); None for files computed before this was recorded;
- ``rules``: the same hash over the decision rules (:data:`RULE_MODULES`) and the study's own
  declared claims (its ``claims`` module and the modules of its package that one imports;
  :func:`rules_files`): a changed magnitude re-decides its own study's files, no other's.

``check`` sorts what it finds into *problems* (a malformed or missing file, a file without
fingerprints or decided under other rules, a literal placeholder left in ``docs/``): exit 1,
and CI fails; and *stale* files (computed by another core or experiment code than the
checkout's): listed, exit 3, unless ``--allow-stale`` (what CI runs: the core changes often
and a full rerun takes hours, so staleness is reported, not fatal).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from qoslab.verdicts.audit import audit, records_digest
from qoslab.verdicts.core import REQUIRED, VERDICTS, Magnitude, Verdict

ROOT = Path(__file__).resolve().parents[3]
PKG = Path(__file__).resolve().parents[1]

#: literal placeholders that must not survive in docs/ or README.md
PLACEHOLDERS = ("RUNTIME", "FULLCOST", "TESTTIME", "TODO", "TBD", "FIXME", "XXX")
_PLACEHOLDER = re.compile(r"\b(" + "|".join(PLACEHOLDERS) + r")\b")


def _fnv(files: Sequence[Path], rel_to: Path) -> str:
    h = 0xCBF29CE484222325
    for f in files:
        rel = _relpath(f, rel_to)
        data = rel.encode() + (f.read_bytes() if f.exists() else b"")
        for b in data:
            h ^= b
            h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h >> 16:012x}"


def _relpath(f: Path, base: Path) -> str:
    """``f`` relative to ``base`` with ``..`` where needed, as Rust's ``strip_prefix`` of the
    joined (unnormalised) path gives it in build.rs."""
    fp, bp = f.parts, base.parts
    k = 0
    while k < min(len(fp), len(bp)) and fp[k] == bp[k]:
        k += 1
    return "/".join([".."] * (len(bp) - k) + list(fp[k:]))


def own_senders(doc: Mapping[str, Any]) -> bool:
    """A verdict file under docs/verdicts/senders/ of a study that compares senders itself: its
    own senders (the runner writes "as published" when no ``--sender`` replaced them) in the
    linux flavour (buffer-sizing's linux column). A study's paper-TCP column there is its own
    senders in the ns2 flavour; every other file names the one sender that replaced them."""
    return doc.get("sender") == "as published" and doc.get("tcp_flavour") == "linux"


def sender_files(paths: Iterable[Path]) -> list[dict[str, Any]]:
    """The verdict files at ``paths`` (read and checked by :func:`read`, in path order) that put
    one sender in place of a study's own: every one but a study's own-senders column
    (:func:`own_senders`)."""
    return [d for d in (read(p) for p in sorted(paths)) if not own_senders(d)]


def core_fingerprint(root: Path = ROOT) -> str | None:
    """The checkout's core fingerprint, as build.rs computes it (None outside a source tree)."""
    py = root / "crates" / "qoslab-py"
    core = root / "crates" / "qoslab-core"
    if not (py / "build.rs").exists():
        return None
    files: list[Path] = []
    for d in (core / "src", py / "src"):
        files += [
            p
            for p in d.rglob("*")
            if p.is_file() and p.suffix in (".rs", ".toml", ".cdf") and not _test_only(p.relative_to(d))
        ]
    files.append(core / "Cargo.toml")
    files += [p for p in (root / "python" / "qoslab" / f for f in _fingerprinted_modules(py)) if p.exists()]
    # build.rs sorts the joined paths (crates/qoslab-py/../qoslab-core/...) component-wise
    keyed = sorted(files, key=lambda p: tuple(_relpath(p, py).split("/")))
    return _fnv(keyed, py)


def _test_only(rel: Path) -> bool:
    """build.rs's rule for the core's unit-test files it leaves out (compiled only under
    ``cfg(test)``): ``tests.rs``, ``*_tests.rs``, anything under a ``tests`` folder."""
    return rel.name == "tests.rs" or rel.name.endswith("_tests.rs") or "tests" in rel.parts[:-1]


def _fingerprinted_modules(py: Path) -> list[str]:
    """The Python modules build.rs hashes into the core fingerprint, read from build.rs itself
    (its quoted ``*.py`` paths, relative to python/qoslab), so that the two cannot drift apart."""
    return re.findall(r'"((?:\w+/)*\w+\.py)"', (py / "build.rs").read_text())


#: The module no study's fingerprint follows into: the list of studies (adding a study changes no
#: other study's code). The claims registry (``verdicts/magnitudes.py``, which imports every
#: study's claims) is the rules' fingerprint's (:func:`rules_fingerprint`): a study's follows
#: only ``qoslab.studies`` and ``qoslab.reproduction`` modules.
_NOT_FOLLOWED = ("studies/__init__.py",)


def _module_file(module: str) -> Path | None:
    """The file of a ``qoslab.studies``/``qoslab.reproduction`` module or package, else None."""
    parts = module.split(".")
    if parts[0] != "qoslab" or len(parts) < 2 or parts[1] not in ("studies", "reproduction"):
        return None
    base = PKG.joinpath(*parts[1:])
    for p in (base.with_suffix(".py"), base / "__init__.py"):
        if p.exists():
            return p
    return None


def _study_imports(path: Path) -> set[Path]:
    """The files of the ``qoslab.studies`` and ``qoslab.reproduction`` modules ``path`` imports
    (at module level or inside a function): ``from qoslab.reproduction import runner`` is
    ``reproduction/runner.py``, ``from qoslab.reproduction import Context`` the package's
    ``__init__.py``."""
    found: set[Path] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                f = _module_file(f"{node.module}.{a.name}") or _module_file(node.module)
                if f is not None:
                    found.add(f)
        elif isinstance(node, ast.Import):
            found |= {f for a in node.names if (f := _module_file(a.name)) is not None}
    return found


def experiment_files(name: str) -> list[Path]:
    """A study's files: its own package's (``studies/NAME/``), then what they import of other
    studies (fdd-red builds on red-baseline's paper values) and of the reproduction machinery,
    followed through their imports, and the statistics. An experiment without a package here (a
    plugin) gets the machinery the runner imports."""
    own = sorted((PKG / "studies" / name.replace("-", "_")).glob("*.py"))
    seen = set(own) or {PKG / "reproduction" / "runner.py"}
    todo = list(seen)
    while todo:
        for f in _study_imports(todo.pop()):
            if f not in seen and _relpath(f, PKG) not in _NOT_FOLLOWED:
                seen.add(f)
                todo.append(f)
    return own + sorted(seen - set(own)) + [PKG / "stats.py"]


def is_own_study(name: str) -> bool:
    """Whether ``name`` is a study of qoslab's own (a package ``studies/NAME/``)."""
    return (PKG / "studies" / name.replace("-", "_")).is_dir()


def plugin_files(plan: Callable[..., Any]) -> tuple[Path, list[Path]] | None:
    """A plugin study's own code: the ``.py`` files of the top-level package (or the lone
    module) that defines its plan (the registered experiment's: ``qoslab.reproduction.get(name)
    .plan``), with the directory their names are taken relative to (so the hash does not depend
    on where the package lies); None for a plan of qoslab's own."""
    import sys

    module_name = getattr(plan, "__module__", "") or ""
    top = sys.modules.get(module_name.split(".")[0])
    init = Path(getattr(top, "__file__", "") or "")
    if not init.is_file() or init.resolve().is_relative_to(PKG):
        return None
    init = init.resolve()
    if hasattr(top, "__path__"):  # a package: every module in it
        return init.parent.parent, sorted(init.parent.rglob("*.py"))
    return init.parent, [init]


def experiment_fingerprint(name: str, plan: Callable[..., Any] | None = None) -> str:
    """The hash of an experiment's files (:func:`experiment_files`), and for a plugin study its
    own package's too (:func:`plugin_files` of ``plan``, the experiment's plan, which a plugin
    study must give: ValueError without it; a study of qoslab's own needs none)."""
    qoslab_part = _fnv(experiment_files(name), PKG)
    if is_own_study(name):
        return qoslab_part
    if plan is None:
        raise ValueError(
            f"experiment {name!r} is no study of qoslab's own (python/qoslab/studies/): "
            "its fingerprint needs its plan (qoslab.reproduction.get(name).plan)"
        )
    own = plugin_files(plan)
    return qoslab_part if own is None else _combine(qoslab_part, _fnv(own[1], own[0]))


def _combine(a: str, b: str) -> str:
    """One hash of two (FNV-1a over their text)."""
    h = 0xCBF29CE484222325
    for byte in f"{a}+{b}".encode():
        h ^= byte
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h >> 16:012x}"


#: The verdict rules' own modules, which decide every study's records.
RULE_MODULES = ("core.py", "rules.py", "intervals.py", "claims.py", "magnitudes.py")


def rules_files(study: str | None = None) -> list[Path]:
    """The files the rules' fingerprint of ``study`` covers: the rules' modules, then the module
    that declares the study's claims (:class:`qoslab.verdicts.claims.Registry`) and the modules
    of its own package that one imports (the paper's numbers a magnitude is read from). With no
    study, or a study declared outside the package (a plugin, whose declarations its experiment
    fingerprint covers), the rules' modules alone."""
    from qoslab.verdicts.magnitudes import REGISTRY

    files = [PKG / "verdicts" / m for m in RULE_MODULES]
    declares = REGISTRY.file_of.get(study) if study is not None else None
    if declares is None:
        return files
    own = sorted(f for f in _study_imports(declares) if f.parent == declares.parent and f != declares)
    return [*files, declares, *own]


def rules_fingerprint(study: str | None = None) -> str:
    """The hash of :func:`rules_files` of ``study``: the verdict rules and that study's declared
    claims. Each verdict file is sealed with its own study's (:func:`write`), so a changed
    magnitude of one study re-decides that study's files and leaves the others current."""
    return _fnv(rules_files(study), PKG)


def write(
    path: Path, experiment: str, header: dict[str, Any], verdicts: Sequence[Verdict | dict[str, Any]]
) -> Path:
    recs = [v.as_json() if isinstance(v, Verdict) else v for v in verdicts]
    fp = header.get("fingerprint")
    if isinstance(fp, dict) and fp.get("rules") is not None:
        # decided under the rules: sealed with this study's rules fingerprint whoever wrote the
        # header (the runner passes it; a re-decision of an old file may carry another's)
        header = {**header, "fingerprint": {**fp, "rules": rules_fingerprint(experiment)}}
    doc = seal({"experiment": experiment, **header, "verdicts": recs})
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    return path


def seal(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` with ``fingerprint.records``, the hash of its records as written
    (:func:`qoslab.verdicts.audit.records_digest`), which ``check`` recomputes."""
    fp = doc.get("fingerprint")
    fp = dict(fp) if isinstance(fp, dict) else {}
    fp["records"] = records_digest(doc["verdicts"])
    return {**doc, "fingerprint": fp}


def read(path: Path) -> dict[str, Any]:
    """A ``verdicts.json`` document (checked: every record has the fields and a known verdict)."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not JSON ({e})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("verdicts"), list):
        raise ValueError(f"{path}: not a verdicts file (no `verdicts` list)")
    for i, v in enumerate(doc["verdicts"]):
        missing = [k for k in REQUIRED if k not in v]
        if missing:
            raise ValueError(f"{path}: verdicts[{i}] lacks {', '.join(missing)}")
        if v["verdict"] not in VERDICTS:
            raise ValueError(f"{path}: verdicts[{i}].verdict {v['verdict']!r} is not one of {VERDICTS}")
    return doc


def placeholders(root: Path = ROOT) -> list[str]:
    """``path:line: TOKEN`` for every literal placeholder in docs/**/*.md and README.md."""
    out = []
    for p in [root / "README.md", *sorted((root / "docs").rglob("*.md"))]:
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
            for m in _PLACEHOLDER.finditer(line):
                out.append(f"{p.relative_to(root)}:{n}: {m.group(1)}")
    return out


#: Under docs/verdicts/: the studies' own files (full runs of the paper's TCP), then the quick
#: runs of each sender in both transport flavours (the linux flavour's with the testbed's timing,
#: as validated), then the linux flavour's full-length runs, then its quick runs with exact
#: timing (set beside the testbed's on the todays-tcp page).
FULL_SENDERS = "senders-full"
EXACT_SENDERS = "senders-exact"
VERDICT_DIRS = ("", "senders", FULL_SENDERS, EXACT_SENDERS)


def verdict_files(root: Path = ROOT) -> list[Path]:
    d = root / "docs" / "verdicts"
    return [p for sub in VERDICT_DIRS for p in sorted((d / sub).glob("*.json"))]


def stale_reasons(doc: Mapping[str, Any], core: str | None) -> list[str]:
    """Why verdict file ``doc`` (as :func:`read` gives it, with its ``fingerprint``) is stale
    against a checkout whose core is ``core`` (None: not compared), one reason a fingerprint;
    empty when it is current. The rule :func:`check` applies and ``tools/refresh_results.py``
    plans by. A study not of qoslab's own has no experiment fingerprint to compare here
    (:func:`check` calls it a problem)."""
    fp = doc["fingerprint"]
    why = []
    if core is not None and fp["core"] != core:
        why.append(f"core `{fp['core']}` ≠ checkout `{core}`")
    exp = fp.get("experiment")
    if not is_own_study(doc["experiment"]):
        return why
    if exp is None:
        why.append("experiment code not fingerprinted (run predates fingerprints)")
    elif exp != (now := experiment_fingerprint(doc["experiment"])):
        why.append(f"experiment code `{exp}` ≠ checkout `{now}`")
    return why


def check(
    root: Path = ROOT, declared: Callable[[str], Sequence[Magnitude]] | None = None
) -> tuple[list[str], list[str]]:
    """(problems, stale): see the module's text. Reads fingerprints and, with ``declared``
    (an experiment's claim declarations), re-derives every record
    (:func:`qoslab.verdicts.audit.audit`); reruns nothing."""
    problems: list[str] = []
    stale: list[str] = []
    core = core_fingerprint(root)
    files = verdict_files(root)
    if not files:
        problems.append(f"{root / 'docs' / 'verdicts'}: no verdicts files")
    for p in files:
        rel = p.relative_to(root)
        try:
            doc = read(p)
        except (OSError, ValueError) as e:
            problems.append(f"{e}")
            continue
        fp = doc.get("fingerprint")
        if not isinstance(fp, dict) or not fp.get("core"):
            problems.append(f"{rel}: no `fingerprint.core` (run `python -m qoslab.verdicts redecide`)")
            continue
        if fp.get("rules") != (rules := rules_fingerprint(doc["experiment"])):
            problems.append(
                f"{rel}: decided under rules `{fp.get('rules')}`, the checkout's are `{rules}` "
                "(run `python -m qoslab.verdicts redecide`)"
            )
        undecided = [i for i, v in enumerate(doc["verdicts"]) if not v.get("decided_from")]
        if undecided:
            problems.append(f"{rel}: verdicts{undecided[:3]} were not decided by the rules")
        if declared is not None:
            try:
                problems += [f"{rel}: {p}" for p in audit(doc, declared(doc["experiment"]))]
            except ValueError as e:
                problems.append(f"{rel}: {e}")
        if not is_own_study(doc["experiment"]):
            problems.append(f"{rel}: experiment {doc['experiment']!r} is no study of qoslab's own")
        if why := stale_reasons(doc, core):
            stale.append(f"{rel}: stale: " + "; ".join(why))
    problems += [f"placeholder {p}" for p in placeholders(root)]
    return problems, stale
