"""Where a run writes: one run per output folder, never a file outside it.

A scenario names its capture files, and a scenario may come from someone else: written
against the working directory, ``[[capture]] file = ".ssh/authorized_keys"`` run from a home
directory would replace that file. So a run writes only into its output folder:

- ``--out DIR`` (``out=`` in :func:`qoslab.run`): DIR must be empty, absent, or hold an earlier
  qoslab run; that one is replaced (whole, see below) only with ``--force`` (``force=True``).
  A folder qoslab did not write is never cleared, forced or not.
- without it, a run that captures writes into a fresh folder
  ``qoslab-runs/SCENARIO-YYYYmmdd-HHMMSS[-N]`` of the working directory, created for it.

qoslab recognises its own folders by :data:`MARKER`, a small JSON file it writes first. A run
into ``--out DIR`` holds an exclusive lock for its lifetime (``flock`` on ``.DIR.qoslab-lock``
beside DIR, removed at the end): a second run into DIR meanwhile is refused in one line. Into
an empty DIR it writes in place; otherwise (DIR absent, or an earlier run replaced with
``--force``) it writes a folder beside DIR and renames it into place when written
(:func:`publish`: the earlier run set aside, then removed), so a reader sees the earlier run
whole or the new one whole, and a run killed meanwhile leaves DIR as it was (the next run into
DIR removes what it left). Where DIR's parent cannot be written, the lock is inside DIR and the
run replaces DIR's contents in place. Capture files stay inside the folder (the core refuses
absolute paths and ``..``; :func:`inside` refuses a path that leaves it through a symbolic link).

A reproduction's ``OUT/NAME`` is marked the same way (:func:`check_reproduction`,
:func:`claim_reproduction`).
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import json
import os
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qoslab import _core

if TYPE_CHECKING:
    from qoslab.scenario import Scenario

#: The file that marks a folder as one qoslab wrote a run into.
MARKER = ".qoslab-run"
#: Its "format" value.
MARKER_FORMAT = "qoslab-run"
#: Where runs without --out that capture write (relative to the working directory).
FRESH_ROOT = "qoslab-runs"
#: The lock of a run's folder DIR, held for the run's lifetime (:func:`claim`): the file ``.DIR``
#: + this beside it, or this inside DIR where DIR's parent cannot be written (the run then
#: replaces DIR in place).
LOCK = ".qoslab-lock"
#: A run into an occupied (or absent) DIR writes ``.DIR`` + this + its pid beside it, renamed to
#: DIR when written (:func:`publish`); the earlier run is set aside as ``.DIR`` + :data:`ASIDE`.
STAGED = ".qoslab-new-"
ASIDE = ".qoslab-old-"
#: The marker's key naming the reproduction (``OUT/NAME``'s NAME) that wrote the folder.
REPRODUCTION = "reproduction"


class OutputFolderError(OSError):
    """An output folder a run may not write into: one line naming it. Where a finished run's
    outputs could not be written, ``result`` is what it measured (else ``None``)."""

    result: Any = None

    @classmethod
    def unwritten(cls, message: str, result: Any) -> OutputFolderError:
        """A finished run's outputs that could not be written, with what it measured."""
        e = cls(message)
        e.result = result
        return e


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


def _clear(d: Path, keep: str | None = None) -> None:
    """Removes everything inside ``d`` but ``keep`` (a folder of qoslab's own, checked by the caller)."""
    for entry in d.iterdir():
        if entry.name == keep:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()


def _refusal(d: Path, force: bool) -> str | None:
    """Why a run may not write into ``d`` (with ``force`` or not), or None."""
    if d.exists() and not d.is_dir():
        return f"--out {d}: exists and is not a folder"
    if d.is_dir() and any(e.name != LOCK for e in d.iterdir()):
        doc = _marker(d)
        if doc is None:
            return (
                f"--out {d}: the folder is not empty and holds no qoslab run; qoslab writes only into an "
                "empty folder or one of its own runs (--force replaces those): choose another --out"
            )
        if not force:
            return (
                f"--out {d}: holds an earlier run ({_describe(doc)}); give --force to replace it, "
                "or choose another --out"
            )
    return None


@dataclass
class _Claim:
    """A folder claimed by :func:`claim`: the ``--out`` as given, where it is (symbolic links
    resolved), whether the run writes beside it (staged) and the lock it holds."""

    out: Path
    real: Path
    staged: bool
    lock_fd: int
    lock_path: Path


#: The folders claimed by this process and not yet published or abandoned, by where they write.
_CLAIMS: dict[Path, _Claim] = {}


def _lock(real: Path, shown: Path) -> tuple[int, Path]:
    """Takes the exclusive lock of folder ``real``: the file ``.NAME.qoslab-lock`` beside it, or
    :data:`LOCK` inside it where its parent cannot be written. Refuses (one line) while another
    process holds it."""
    path = real.parent / f".{real.name}{LOCK}"
    for _ in range(100):
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as e:
            if path.parent == real or not real.is_dir():
                raise OutputFolderError(
                    f"--out {shown}: cannot create its lock file {path}: {e.strerror}"
                ) from None
            path = real / LOCK  # the parent is not writable: the lock goes inside the folder
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise OutputFolderError(
                f"--out {shown}: another qoslab run (pid {holder}) is writing into it; wait for it to "
                "finish or choose another --out"
            ) from None
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(path))
        except FileNotFoundError:
            same = False
        if same:
            os.ftruncate(fd, 0)
            os.pwrite(fd, str(os.getpid()).encode(), 0)
            return fd, path
        os.close(fd)  # its holder removed it on release: lock the file there now
    raise OutputFolderError(f"--out {shown}: cannot take its lock {path}")


def _unlock(fd: int, path: Path) -> None:
    """Releases a lock of :func:`_lock`, removing its file (while held: a process that opened it
    meanwhile finds it gone and takes the new one)."""
    with contextlib.suppress(OSError):
        if os.path.samestat(os.fstat(fd), os.stat(path)):
            path.unlink()
    with contextlib.suppress(OSError):
        os.close(fd)


def _remove_leftovers(real: Path) -> None:
    """Removes the staged and set-aside folders of runs into ``real`` that were killed (called
    with the lock held: no live run writes them); only marked ones."""
    for prefix in (STAGED, ASIDE):
        for p in real.parent.glob(f".{glob.escape(real.name)}{prefix}*"):
            if p.is_dir() and not p.is_symlink() and _marker(p) is not None:
                shutil.rmtree(p, ignore_errors=True)


def _mark(d: Path, scenario: str, seed: int) -> None:
    """Writes the marker of a run into ``d`` (``O_EXCL``)."""
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


def claim(out: str | Path, scenario: str, seed: int, *, force: bool = False) -> Path:
    """Claims ``out`` for this run (see the module's docstring): takes its lock, writes the marker
    into the folder the run writes, and returns that folder: ``out`` itself when it is empty,
    else a staged folder beside it that :func:`publish` puts in its place.
    :class:`OutputFolderError` (one line) when the run may not write there."""
    d = Path(out)
    why = _refusal(d, force)
    if why is not None:
        raise OutputFolderError(why)
    real = d.resolve()
    try:
        real.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        why = "Not a directory" if isinstance(e, FileExistsError) else e.strerror  # a file on the way
        raise OutputFolderError(f"--out {d}: cannot create {real.parent}: {why}") from None
    fd, lock = _lock(real, d)
    try:
        why = _refusal(d, force)  # again, under the lock
        if why is not None:
            raise OutputFolderError(why)
        if lock.parent == real:  # no room beside it: replaced in place
            _clear(real, keep=LOCK)
            where = real
        else:
            _remove_leftovers(real)
            occupied = not real.is_dir() or any(real.iterdir())
            where = real.parent / f".{real.name}{STAGED}{os.getpid()}" if occupied else real
        try:
            where.mkdir(parents=True, exist_ok=where == real)
        except OSError as e:
            raise OutputFolderError(f"--out {d}: cannot create {where}: {e.strerror}") from None
        _mark(where, scenario, seed)
    except BaseException:
        _unlock(fd, lock)
        raise
    _CLAIMS[where] = _Claim(d, real, where != real, fd, lock)
    return where


def target(where: Path) -> Path:
    """The ``--out`` folder a run claimed (:func:`claim`) and writes into ``where`` for."""
    c = _CLAIMS.get(Path(where))
    return c.out if c is not None else Path(where)


def publish(where: Path, *, complete: bool = True) -> Path:
    """Ends the run that wrote ``where``: a staged folder takes the place of ``--out`` (the
    earlier run set aside, then removed), and the lock is released. Returns the folder that
    holds the run: ``--out``, or for a run that stopped early (``complete`` false) while
    ``--out`` holds an earlier run, the new folder ``OUT.partial[-N]`` beside it: a partial
    result never takes the place of an earlier run, forced or not (a run whose ``--out``'s
    parent cannot be written cleared the earlier run when it was claimed)."""
    c = _CLAIMS.pop(Path(where), None)
    if c is None:
        return Path(where)
    try:
        if c.staged and not complete and c.real.is_dir() and any(c.real.iterdir()):
            return _beside(Path(where), c)
        if c.staged:
            aside = c.real.parent / f".{c.real.name}{ASIDE}{os.getpid()}"
            try:
                if c.real.is_dir() and any(c.real.iterdir()):
                    if _marker(c.real) is None:
                        raise OSError(0, "it holds files qoslab did not write now")
                    os.rename(c.real, aside)
                os.replace(where, c.real)
            except OSError as e:
                why = e.strerror or e
                msg = f"--out {c.out}: cannot put the run's outputs in its place ({why}); they are in {where}"
                raise OutputFolderError(msg) from None
            shutil.rmtree(aside, ignore_errors=True)
    finally:
        _unlock(c.lock_fd, c.lock_path)
    return c.out


def _beside(where: Path, c: _Claim) -> Path:
    """Renames the staged folder ``where`` of a partial run to a new ``OUT.partial[-N]`` beside
    ``--out`` (under ``--out``'s lock, held by the caller); returns it as the user named it."""
    for n in range(1, 10_000):
        name = f"{c.real.name}.partial" if n == 1 else f"{c.real.name}.partial-{n}"
        if (c.real.parent / name).exists():
            continue
        try:
            os.rename(where, c.real.parent / name)
        except OSError as e:
            why = f"cannot keep the stopped run beside it as {name} ({e.strerror})"
            raise OutputFolderError(f"--out {c.out}: {why}; it is in {where}") from None
        return c.out.parent / name
    why = f"9,999 folders {c.real.name}.partial-N beside it"
    raise OutputFolderError(f"--out {c.out}: {why}; it is in {where}")


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
        _mark(d, scenario, seed)
        return d
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


def check_captures(captures: list[tuple[str, str, str]] | None) -> None:
    """Refuses (ValueError, one line naming the entry) a ``captures`` entry that is not (link,
    "ab" or "ba", pcap path) or whose path is a folder or lies in no folder; the link is checked
    against the scenario when the run starts."""
    for i, c in enumerate(captures or []):
        if not isinstance(c, tuple | list) or len(c) != 3 or not all(isinstance(x, str | Path) for x in c):
            raise ValueError(f'captures[{i}]: expected (link, "ab" or "ba", pcap path), got {c!r:.60}')
        path = Path(c[2])
        if path.is_dir():
            raise ValueError(f"captures[{i}]: {path} is a folder, not a pcap file")
        if not path.parent.is_dir():
            raise ValueError(f"captures[{i}]: {path}: its folder {path.parent} does not exist")


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
    """Undoes :func:`claim` or :func:`fresh` of a run refused before it wrote anything: a staged
    folder is removed; else the marker, and with ``remove`` (a folder :func:`fresh` made) the
    folder if nothing else is in it. The lock is released."""
    c = _CLAIMS.pop(Path(d), None)
    if c is not None and c.staged:
        shutil.rmtree(d, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            (d / MARKER).unlink()
            if remove:
                d.rmdir()
    if c is not None:
        _unlock(c.lock_fd, c.lock_path)


def release(d: Path) -> None:
    """Ends the claim of a run that failed while running or writing (a full disk): a staged
    folder is removed (``--out`` keeps the earlier run); a folder written in place, empty when
    the run began, is emptied again (half a run's tables, marked as a run, would be taken for
    an earlier run). The lock is released."""
    c = _CLAIMS.pop(Path(d), None)
    if c is None:
        return
    if c.staged:
        shutil.rmtree(d, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            _clear(Path(d), keep=LOCK if c.lock_path.parent == c.real else None)
    _unlock(c.lock_fd, c.lock_path)


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
