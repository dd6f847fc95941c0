"""Where a run writes: one run per output folder, never a file outside it.

A scenario names its capture files, and a scenario may come from someone else: written
against the working directory, ``[[capture]] file = ".ssh/authorized_keys"`` run from a home
directory would replace that file. So a run writes only into its output folder:

- ``--out DIR`` (``out=`` in :func:`qoslab.run`): DIR must be empty, absent, or hold an earlier
  qoslab run; that one is replaced only with ``--force`` (``force=True``), which clears the
  folder first. A folder qoslab did not write is never cleared, forced or not.
- without it, a run that captures writes into a fresh folder
  ``qoslab-runs/SCENARIO-YYYYmmdd-HHMMSS[-N]`` of the working directory, created for it.

qoslab recognises its own folders by :data:`MARKER`, a small JSON file it writes first (with
``O_EXCL``: of two runs started into one empty folder, the second is refused). Capture files
stay inside the folder (the core refuses absolute paths and ``..``; :func:`inside` refuses a
path that leaves it through a symbolic link).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING

from qoslab import _core

if TYPE_CHECKING:
    from qoslab.scenario import Scenario

#: The file that marks a folder as one qoslab wrote a run into.
MARKER = ".qoslab-run"
#: Its "format" value.
MARKER_FORMAT = "qoslab-run"
#: Where runs without --out that capture write (relative to the working directory).
FRESH_ROOT = "qoslab-runs"
#: The marker's key naming the reproduction (``OUT/NAME``'s NAME) that wrote the folder.
REPRODUCTION = "reproduction"


class OutputFolderError(OSError):
    """An output folder a run may not write into: one line naming it."""


def _marker(d: Path) -> dict[str, object] | None:
    """The marker of folder ``d`` if it holds one qoslab wrote, else None."""
    p = d / MARKER
    try:
        if p.is_symlink() or not p.is_file() or p.stat().st_size > 65536:
            return None
        doc = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    return doc if isinstance(doc, dict) and doc.get("format") == MARKER_FORMAT else None


def _describe(doc: dict[str, object]) -> str:
    if REPRODUCTION in doc:
        return f"a reproduction of {doc.get(REPRODUCTION)!r}, qoslab {doc.get('version')}"
    return f"scenario {doc.get('scenario')!r}, seed {doc.get('seed')}, qoslab {doc.get('version')}"


def _clear(d: Path) -> None:
    """Removes everything inside ``d`` (a folder of qoslab's own, checked by the caller)."""
    for entry in d.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()


def claim(out: str | Path, scenario: str, seed: int, *, force: bool = False) -> Path:
    """Makes ``out`` this run's folder (see the module's docstring) and writes its marker;
    :class:`OutputFolderError` when it may not be."""
    d = Path(out)
    if d.exists() and not d.is_dir():
        raise OutputFolderError(f"--out {d}: exists and is not a folder")
    if d.is_dir() and any(d.iterdir()):
        doc = _marker(d)
        if doc is None:
            raise OutputFolderError(
                f"--out {d}: the folder is not empty and holds no qoslab run; qoslab writes only into an "
                "empty folder or one of its own runs (--force replaces those): choose another --out"
            )
        if not force:
            raise OutputFolderError(
                f"--out {d}: holds an earlier run ({_describe(doc)}); give --force to replace it, "
                "or choose another --out"
            )
        _clear(d)
    d.mkdir(parents=True, exist_ok=True)
    doc = {
        "format": MARKER_FORMAT,
        "scenario": scenario,
        "seed": seed,
        "version": _core.__version__,
        "pid": os.getpid(),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S"),
    }
    try:
        fd = os.open(d / MARKER, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    except FileExistsError:
        raise OutputFolderError(f"--out {d}: another run has just started writing into it") from None
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(doc, f)
        f.write("\n")
    return d


def fresh(scenario: str, seed: int, root: str | Path = FRESH_ROOT) -> Path:
    """A new folder ``root/SCENARIO-YYYYmmdd-HHMMSS[-N]`` for a run without ``--out`` (created
    here, never one that existed), claimed for it."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", scenario).strip(".-")[:60] or "run"
    base = Path(root)
    base.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for n in range(1, 10_000):
        d = base / (f"{safe}-{stamp}" if n == 1 else f"{safe}-{stamp}-{n}")
        try:
            d.mkdir()
        except FileExistsError:
            continue
        return claim(d, scenario, seed)
    raise OutputFolderError(f"{base}: cannot find a free folder name for {safe}-{stamp}")


def inside(out: Path, name: str, source: str) -> Path:
    """``out / name``, refused (a ScenarioError) if it resolves outside ``out`` through a
    symbolic link (the core already refuses absolute paths and ``..``)."""
    path = out / name
    base = out.resolve()
    if not path.resolve().is_relative_to(base):
        msg = f"the capture file {name!r} resolves outside the output directory {str(out)!r} (a symlink)"
        raise _core.ScenarioError(f"{source}: {msg}", source, None, "capture.file", msg)
    return path


def capture_paths(sc: Scenario, out: Path | None) -> list[tuple[int, str]]:
    """(link direction index, file) of every capture ``sc`` names, inside ``out``: one file per
    direction of a ``direction = "both"`` capture, ".pcap" becoming ".ab.pcap" and ".ba.pcap"
    (the core's ``capture_files`` checks these names for collisions)."""
    cap: list[tuple[int, str]] = []
    for c in sc.outline.get("captures", []):
        dirs = ["ab", "ba"] if c["direction"] == "both" else [c["direction"]]
        for d in dirs:
            fname = c["file"] if len(dirs) == 1 else c["file"].replace(".pcap", f".{d}.pcap")
            path = inside(Path(out or "."), fname, sc.source)
            path.parent.mkdir(parents=True, exist_ok=True)  # inside the run's folder, checked above
            cap.append((sc.link_direction_index(c["link"], d), str(path)))
    return cap


def abandon(d: Path, *, remove: bool) -> None:
    """Undoes :func:`claim` of a run refused before it wrote anything: removes the marker and,
    with ``remove`` (a folder :func:`fresh` made), the folder if nothing else is in it."""
    with contextlib.suppress(OSError):
        (d / MARKER).unlink()
        if remove:
            d.rmdir()


# -- a reproduction's folder --------------------------------------------------------------------


def check_reproduction(d: Path, name: str) -> None:
    """Refuses (:class:`OutputFolderError`) a folder ``d`` that reproduction ``name`` may not write
    into: a symbolic link, not a folder, or a folder that is not empty and holds no marker of
    this reproduction (someone else's files, or a ``qoslab run``'s). Called before any run."""
    if d.is_symlink():
        raise OutputFolderError(
            f"--out: {d} is a symbolic link; a reproduction writes only into a folder of its own: "
            "remove the link or choose another --out"
        )
    if d.parent.exists() and not d.parent.is_dir():
        raise OutputFolderError(f"--out {d.parent}: exists and is not a folder")
    if d.exists() and not d.is_dir():
        raise OutputFolderError(f"--out: {d} exists and is not a folder: choose another --out")
    if not d.is_dir() or not any(d.iterdir()):
        return
    doc = _marker(d)
    if doc is None:
        raise OutputFolderError(
            f"--out: {d} holds files qoslab did not write (no {MARKER} marker): a reproduction replaces "
            "only a folder of its own; move them away or choose another --out"
        )
    if doc.get(REPRODUCTION) != name:
        what = _describe(doc) if REPRODUCTION in doc else f"a qoslab run ({_describe(doc)})"
        raise OutputFolderError(
            f"--out: {d} holds {what}, not a reproduction of {name}: choose another --out"
        )


def claim_reproduction(d: Path, name: str) -> Path:
    """Makes ``d`` reproduction ``name``'s folder once its runs are stored: checked again
    (:func:`check_reproduction`), emptied of an earlier reproduction's outputs, and marked (the
    marker is kept throughout, so a reproduction killed at any point leaves a folder the next one
    recognises and replaces)."""
    check_reproduction(d, name)
    doc = {
        "format": MARKER_FORMAT,
        REPRODUCTION: name,
        "version": _core.__version__,
        "pid": os.getpid(),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S"),
    }
    try:
        d.mkdir(parents=True, exist_ok=True)
        for entry in d.iterdir():
            if entry.name == MARKER:
                continue
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
        tmp = d / f"{MARKER}.{os.getpid()}.tmp"
        tmp.write_text(json.dumps(doc) + "\n", encoding="utf-8")
        tmp.replace(d / MARKER)
    except OSError as e:
        raise OutputFolderError(f"--out: cannot prepare {d}: {e.strerror or e}") from None
    return d
