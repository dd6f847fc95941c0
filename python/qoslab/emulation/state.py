"""A run's state file and its teardown: everything a run creates is recorded in
``STATE_DIR/PREFIX….json`` *before* it is created, and torn down from that record (by the run
itself, or by a later run or ``qoslab emulate --cleanup`` when the run was killed outright).
Only namespaces named in such a file, with the run's ``qlab-`` prefix, are ever touched."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qoslab.emulation.machine import PREFIX, EmulationError

STATE_DIR = Path(os.environ.get("QOSLAB_EMU_STATE", "/run/qoslab-emu"))


def _proc_start(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


@dataclass
class RunState:
    """What one emulation run created, kept on disk as it grows."""

    prefix: str
    path: Path
    namespaces: list[str] = field(default_factory=list)
    pids: list[int] = field(default_factory=list)
    work: str | None = None

    @classmethod
    def new(cls) -> RunState:
        STATE_DIR.mkdir(parents=True, exist_ok=True)
        prefix = f"{PREFIX}{secrets.token_hex(3)}"
        st = cls(prefix, STATE_DIR / f"{prefix}.json")
        st.save()
        return st

    def save(self) -> None:
        data = {
            "prefix": self.prefix,
            "owner_pid": os.getpid(),
            "owner_start": _proc_start(os.getpid()),
            "namespaces": self.namespaces,
            "pids": [[p, _proc_start(p)] for p in self.pids],
            "work": self.work,
        }
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data))
        os.replace(tmp, self.path)

    def add_namespace(self, ns: str) -> None:
        self.namespaces.append(ns)
        self.save()

    def add_pid(self, pid: int) -> None:
        self.pids.append(pid)
        self.save()


def _opt(v: Any, kind: type) -> bool:
    return v is None or (isinstance(v, kind) and not isinstance(v, bool))


#: Each key of a state file (as :meth:`RunState.save` writes it) and whether a value is right.
_KEYS: dict[str, tuple[str, Any]] = {
    "prefix": (f"text starting with {PREFIX!r}", lambda v: isinstance(v, str) and v.startswith(PREFIX)),
    "owner_pid": ("a process id", lambda v: _opt(v, int)),
    "owner_start": ("a process start time (text)", lambda v: _opt(v, str)),
    "namespaces": ("a list of names", lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v)),
    "pids": (
        "a list of [process id, start time] pairs",
        lambda v: (
            isinstance(v, list)
            and all(
                isinstance(x, list)
                and len(x) == 2
                and _opt(x[0], int)
                and x[0] is not None
                and _opt(x[1], str)
                for x in v
            )
        ),
    ),
    "work": ("a folder (text)", lambda v: _opt(v, str)),
}


def checked(data: Any, path: Path | None) -> dict[str, Any]:
    """``data``, read from state file ``path``, if it has the form :meth:`RunState.save` writes;
    else :class:`EmulationError`, one line naming the file and the key (nothing is torn down
    from a record that is not one of ours)."""
    if not isinstance(data, dict):
        raise EmulationError(f"{path}: not a qoslab emulation state file (expected a JSON object)")
    for key, (expected, ok) in _KEYS.items():
        if (key == "prefix" or key in data) and not ok(data.get(key)):
            raise EmulationError(
                f"{path}: not a qoslab emulation state file (key `{key}`: expected {expected}, "
                f"got {str(data.get(key))[:60]!r}); remove it once no run of it is left"
            )
    return data


def teardown_record(data: dict[str, Any], path: Path | None) -> list[str]:
    """Kills a run's processes and deletes its namespaces; returns what it removed."""
    removed = []
    data = checked(data, path)
    prefix = str(data["prefix"])
    for pid, start in data.get("pids", []):
        # Only the very process we started (same start time), and its process group.
        if start is not None and _proc_start(pid) == start:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
            removed.append(f"process {pid}")
    existing = set(list_namespaces())
    for ns in data.get("namespaces", []):
        if not ns.startswith(prefix + "-"):
            continue  # never touch a namespace this run did not name
        if ns in existing:
            r = subprocess.run(["ip", "netns", "del", ns], capture_output=True, text=True)
            if r.returncode == 0:
                removed.append(f"namespace {ns}")
    work = data.get("work")
    if work:
        w = Path(work)
        # only the run's own temporary directory, by name and place
        if w.name.startswith(prefix + "-") and w.parent == Path(tempfile.gettempdir()) and w.is_dir():
            shutil.rmtree(w, ignore_errors=True)
            removed.append(f"work directory {w}")
    if path is not None:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
    return removed


def list_namespaces() -> list[str]:
    r = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
    return [ln.split()[0] for ln in r.stdout.splitlines() if ln.strip()]


def cleanup_stale(all_runs: bool = False) -> list[str]:
    """Tears down the leftovers of runs whose owner process is gone; with ``all_runs`` (the
    CLI's ``--cleanup --force``) also the runs still alive. Returns what was removed."""
    removed: list[str] = []
    if not STATE_DIR.exists():
        return removed
    for p in sorted(STATE_DIR.glob(f"{PREFIX}*.json")):
        try:
            data = json.loads(p.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        data = checked(data, p)
        owner, start = data.get("owner_pid"), data.get("owner_start")
        alive = (
            owner is not None and start is not None and _proc_start(owner) == start and owner != os.getpid()
        )
        if alive and not all_runs:
            continue
        removed += teardown_record(data, p)
    return removed
