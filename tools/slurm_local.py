"""A real single-node Slurm cluster on this machine, for the tests of ``--executor slurm``.

Everything lives in one directory (default ``/tmp/qoslab-slurm``): its own ``slurm.conf``, a
``munged`` on a private socket, a ``slurmctld`` and a ``slurmd`` on loopback ports, their logs,
state and spool. Nothing under ``/etc`` is changed; client commands (``sbatch``, ``sinfo``,
``scancel``) find the cluster through ``SLURM_CONF``.

    python tools/slurm_local.py up      # prints: export SLURM_CONF=/tmp/qoslab-slurm/slurm.conf
    python tools/slurm_local.py down    # stops all three daemons, leaves nothing running
    python tools/slurm_local.py status

``make slurm-up`` and ``make slurm-down`` call it; ``tests/test_slurm.py`` uses :class:`LocalSlurm`
as a fixture. Needs root and Debian's ``slurm-wlm`` and ``munge`` (``make slurm-deps``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

DEFAULT_DIR = Path(os.environ.get("QOSLAB_SLURM_DIR", "/tmp/qoslab-slurm"))
TOOLS = ("munged", "slurmctld", "slurmd", "sbatch", "sinfo", "squeue", "scancel", "scontrol")
#: The node's size: two CPUs as on the CI machine, memory enough for the default 2 GB jobs.
CPUS = 2
REAL_MEMORY_MB = 8000


class SlurmUnavailable(RuntimeError):
    """Why a local cluster cannot be started here (not root, packages missing)."""


def missing_requirements() -> str | None:
    """None when a local cluster can start here, else the reason it cannot."""
    if os.geteuid() != 0:
        return "the local Slurm cluster needs root (slurmd runs jobs as any user)"
    absent = [t for t in TOOLS if shutil.which(t) is None and not Path("/usr/sbin", t).exists()]
    if absent:
        return f"missing {', '.join(absent)} (Debian packages slurm-wlm and munge: make slurm-deps)"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _exe(name: str) -> str:
    found = shutil.which(name)
    return found if found else str(Path("/usr/sbin", name))


class LocalSlurm:
    """One controller and one node (``CPUS`` CPUs) in ``root``; :meth:`up` starts it and waits
    until the node is idle, :meth:`down` stops it."""

    def __init__(self, root: Path = DEFAULT_DIR) -> None:
        self.root = Path(root)
        self.conf = self.root / "slurm.conf"
        self.node = socket.gethostname().split(".")[0]
        self.partition = "qoslab"

    # -- environment for clients ------------------------------------------------------------------

    @property
    def env(self) -> dict[str, str]:
        """The environment variables that point Slurm's client commands at this cluster."""
        return {"SLURM_CONF": str(self.conf)}

    def run(self, *args: str, check: bool = True) -> str:
        """A Slurm client command against this cluster; its standard output."""
        p = subprocess.run(
            list(args), env={**os.environ, **self.env}, capture_output=True, text=True, timeout=60
        )
        if check and p.returncode != 0:
            raise RuntimeError(f"{' '.join(args)}: {p.stderr.strip() or p.stdout.strip()}")
        return p.stdout

    # -- lifecycle --------------------------------------------------------------------------------

    def _write_config(self) -> None:
        for d in ("state", "spool", "munge", "log", "jobs"):
            (self.root / d).mkdir(parents=True, exist_ok=True)
        os.chmod(self.root / "munge", 0o700)
        key = self.root / "munge" / "munge.key"
        if not key.exists():
            key.write_bytes(os.urandom(1024))
            os.chmod(key, 0o400)
        ctld_port, d_port = _free_port(), _free_port()
        r = self.root
        self.conf.write_text(
            "\n".join(
                [
                    "# written by tools/slurm_local.py: a one-node cluster for qoslab's tests",
                    "ClusterName=qoslab",
                    f"SlurmctldHost={self.node}(127.0.0.1)",
                    f"SlurmctldPort={ctld_port}",
                    f"SlurmdPort={d_port}",
                    "SlurmUser=root",
                    "SlurmdUser=root",
                    "AuthType=auth/munge",
                    "CredType=cred/munge",
                    f"AuthInfo=socket={r / 'munge' / 'munge.sock'}",
                    f"StateSaveLocation={r / 'state'}",
                    f"SlurmdSpoolDir={r / 'spool'}",
                    f"SlurmctldPidFile={r / 'slurmctld.pid'}",
                    f"SlurmdPidFile={r / 'slurmd.pid'}",
                    f"SlurmctldLogFile={r / 'log' / 'slurmctld.log'}",
                    f"SlurmdLogFile={r / 'log' / 'slurmd.log'}",
                    "ProctrackType=proctrack/linuxproc",
                    "TaskPlugin=task/none",
                    "JobAcctGatherType=jobacct_gather/none",
                    "AccountingStorageType=accounting_storage/none",
                    "JobCompType=jobcomp/none",
                    "MpiDefault=none",
                    "SchedulerType=sched/backfill",
                    "SelectType=select/cons_tres",
                    "SelectTypeParameters=CR_Core_Memory",
                    "ReturnToService=2",
                    "SchedulerParameters=sched_interval=2",
                    "MessageTimeout=20",
                    "KillWait=5",
                    "InactiveLimit=0",
                    "MinJobAge=300",
                    f"NodeName={self.node} NodeAddr=127.0.0.1 CPUs={CPUS} "
                    f"RealMemory={REAL_MEMORY_MB} State=UNKNOWN",
                    f"PartitionName={self.partition} Nodes={self.node} Default=YES MaxTime=INFINITE State=UP",
                    "",
                ]
            )
        )

    def up(self, timeout: float = 60.0) -> None:
        """Starts munged, slurmctld and slurmd and waits until the node is idle."""
        why = missing_requirements()
        if why:
            raise SlurmUnavailable(why)
        self.down()
        self._write_config()
        m = self.root / "munge"
        subprocess.run(
            [
                _exe("munged"),
                "--force",
                f"--socket={m / 'munge.sock'}",
                f"--key-file={m / 'munge.key'}",
                f"--pid-file={m / 'munged.pid'}",
                f"--log-file={self.root / 'log' / 'munged.log'}",
                f"--seed-file={m / 'munged.seed'}",
            ],
            check=True,
            capture_output=True,
            timeout=30,
        )
        env = {**os.environ, **self.env}
        subprocess.run(
            [_exe("slurmctld"), "-f", str(self.conf), "-i"],
            check=True,
            env=env,
            capture_output=True,
            timeout=30,
        )
        subprocess.run(
            [_exe("slurmd"), "-f", str(self.conf), "-N", self.node],
            check=True,
            env=env,
            capture_output=True,
            timeout=30,
        )
        deadline = time.monotonic() + timeout
        state = ""
        while time.monotonic() < deadline:
            p = subprocess.run(
                ["sinfo", "-h", "-N", "-o", "%T"], env=env, capture_output=True, text=True, timeout=30
            )
            state = p.stdout.strip()
            if p.returncode == 0 and state == "idle":
                return
            time.sleep(0.5)
        log = self.root / "log"
        raise RuntimeError(f"the Slurm node is not idle after {timeout:.0f} s (state {state!r}); see {log}")

    def _pids(self) -> list[int]:
        out = []
        for f in (self.root / "slurmd.pid", self.root / "slurmctld.pid", self.root / "munge" / "munged.pid"):
            try:
                out.append(int(f.read_text().split()[0]))
            except (OSError, ValueError, IndexError):
                pass
        return out

    def down(self, timeout: float = 20.0) -> None:
        """Cancels every job and stops slurmd, slurmctld and munged (SIGTERM, then SIGKILL)."""
        if self.conf.exists():
            try:
                self.run("scancel", "--full", "--partition", self.partition, check=False)
            except (OSError, subprocess.TimeoutExpired):
                pass
        pids = self._pids()
        deadline = time.monotonic() + timeout
        # job steps (slurmstepd) outlive slurmd if left alone, and one may be starting just now
        while True:
            pids += [int(p) for p in _pgrep("slurmstepd") if int(p) not in pids]
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
            time.sleep(0.2)
            if time.monotonic() > deadline or not (any(_alive(p) for p in pids) or _pgrep("slurmstepd")):
                break
        for pid in pids + [int(p) for p in _pgrep("slurmstepd")]:
            if _alive(pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        while time.monotonic() < deadline + 5 and (any(_alive(p) for p in pids) or _pgrep("slurmstepd")):
            time.sleep(0.1)

    def running(self) -> list[str]:
        """The daemons of this cluster still running (empty when it is down)."""
        return [f"pid {p}" for p in self._pids() if _alive(p)] + [
            f"slurmstepd {p}" for p in _pgrep("slurmstepd")
        ]

    # -- jobs -------------------------------------------------------------------------------------

    def jobs(self) -> list[dict[str, str]]:
        """The jobs Slurm knows of: id, name, state."""
        out = self.run("squeue", "-h", "-o", "%i|%j|%T")
        rows = []
        for line in out.splitlines():
            if line.strip():
                jid, name, state = line.split("|")
                rows.append({"id": jid, "name": name, "state": state})
        return rows


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except OSError:
        return False


def _pgrep(name: str) -> list[str]:
    p = subprocess.run(["pgrep", "-x", name], capture_output=True, text=True)
    return p.stdout.split()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("action", choices=("up", "down", "status"))
    ap.add_argument("--dir", type=Path, default=DEFAULT_DIR, help=f"state directory (default {DEFAULT_DIR})")
    a = ap.parse_args(argv)
    c = LocalSlurm(a.dir)
    try:
        if a.action == "up":
            c.up()
            print(
                f"slurm: node {c.node} idle ({CPUS} CPUs, partition {c.partition}); logs in {c.root / 'log'}"
            )
            print(f"export SLURM_CONF={c.conf}")
        elif a.action == "down":
            c.down()
            left = c.running()
            print("slurm: stopped" if not left else f"slurm: still running: {', '.join(left)}")
            return 1 if left else 0
        else:
            left = c.running()
            print("slurm: down" if not left else f"slurm: up ({', '.join(left)}); export SLURM_CONF={c.conf}")
    except (SlurmUnavailable, RuntimeError, subprocess.SubprocessError, OSError) as e:
        print(f"slurm: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
