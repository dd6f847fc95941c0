"""docs/architecture.md is true to the tree: every file and directory it names exists, where it
says it is (the layers' names under their directory of crates/qoslab-core/src, the rooms' modules
in their package of python/qoslab), and every name elsewhere on the page is some file's path."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "architecture.md"
CORE = "crates/qoslab-core/src"
_FILE = re.compile(r"(?<![\w/.-])([\w./-]*\w\.(?:rs|py|md|toml))\b")
_DIR = re.compile(r"`([\w-]+(?:/[\w-]+)*/)`")


def tree() -> set[str]:
    """Every file of the repository and every directory above one, relative to its root."""
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True)
    files = set(out.stdout.split())
    files |= {str(p) for f in list(files) for p in Path(f).parents if str(p) != "."}
    return files


def named_anywhere(name: str, paths: set[str]) -> bool:
    name = name.strip("/")
    return name in paths or any(p.endswith("/" + name) for p in paths)


def layer_names(text: str) -> list[str]:
    """The files the layers' picture places in a directory of the core: ``scenario/ ... flat.rs``
    is ``crates/qoslab-core/src/scenario/flat.rs``; a name at the core's top (``engine.rs``) is
    under ``src/``."""
    block = text.split("```", 2)[1] if "```" in text else ""
    out: list[str] = []
    where: str | None = None
    for line in block.splitlines():
        if line.startswith("crates/qoslab-core"):
            where = ""
            continue
        if not line.startswith(" ") or where is None:
            where = None if not line.startswith(" ") else where
            continue
        if m := re.match(r"  (\w+)/ ", line):
            where = m.group(1) + "/"
        elif re.match(r"  \w+\.rs ", line):
            where = ""
        out += [
            f"{CORE}/{where}{n}" if "/" not in n or where == "" else f"{CORE}/{n}"
            for n in re.findall(r"\b(\w+(?:/\w+)?\.rs)\b", line)
        ]
    return out


def room_names(text: str) -> list[str]:
    """The modules the rooms' table places in a package: ``| `qoslab.runs` | `simulate.py` ...``."""
    out: list[str] = []
    for line in text.splitlines():
        if not (m := re.match(r"\| `(qoslab(?:\.\w+)?)`(?: \(top\))? \| (.*)\|$", line)):
            continue
        room = "python/" + m.group(1).replace(".", "/")
        for name in re.findall(r"`(\w+\.py)`", m.group(2)):
            out.append(f"{room}/{name}" if room != "python/qoslab/studies" else f"{room}/*/{name}")
    return out


def missing(text: str, paths: set[str]) -> list[str]:
    bad = [n for n in layer_names(text) if n not in paths]
    for n in room_names(text):
        if "*" in n:
            pre, post = n.split("*")
            ok = any(p.startswith(pre) and p.endswith(post) for p in paths)
        else:
            ok = n in paths
        if not ok:
            bad.append(n)
    # the data-flow picture's files are a user's (scenario.toml, report.md); NAME is a placeholder
    blocks = text.split("```")
    prose = "```".join(b for i, b in enumerate(blocks) if i % 2 == 0 or "scenario.toml ──" not in b)
    names = [n for n in _FILE.findall(prose) + _DIR.findall(prose) if "NAME" not in n]
    bad += [n for n in names if not named_anywhere(n, paths)]
    return sorted(set(bad))


def test_every_path_the_architecture_page_names_exists() -> None:
    gone = missing(PAGE.read_text(), tree())
    assert not gone, "docs/architecture.md names paths that do not exist: " + ", ".join(gone)


def test_the_checker_finds_a_missing_path() -> None:
    paths = tree()
    page = PAGE.read_text()
    assert f"{CORE}/engine.rs" in layer_names(page) and f"{CORE}/aqm/registry.rs" in layer_names(page)
    assert "python/qoslab/runs/simulate.py" in room_names(page)
    stale = page.replace("flat.rs", "markers.rs").replace("`stats.py`", "`statistics.py`")
    assert missing(stale, paths) == [
        f"{CORE}/scenario/markers.rs",
        "markers.rs",
        "python/qoslab/statistics.py",
        "statistics.py",
    ]
    assert missing("`params.rs` and `sim/nothing/`", paths) == ["params.rs", "sim/nothing/"]
