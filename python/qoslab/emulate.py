"""Emulation mode: a scenario on real Linux hosts and real kernel TCP, with qoslab's own
conditioners and queue disciplines deciding every packet's fate (docs/emulation.md).

One network namespace per scenario node (hosts and routers alike), one veth pair per link,
a /30 per link and a /32 identity address per node on its loopback, static routes that follow
the simulator's own minimum-hop routes, forwarding on, TSO/GSO/GRO off. Every link direction
a → b is emulated where its packets enter b: an iptables rule in b's namespace hands them to
NFQUEUE (queue number = direction index) and b's link daemon (`qoslab-linkd`, Rust) runs the
scenario's conditioners, queue discipline, transmitter and propagation delay on them.

Everything a run creates is recorded in a state file (``/run/qoslab-emu/PREFIX.json``)
*before* it is created; teardown (always: on success, error, Ctrl-C or SIGTERM) kills the
run's processes and deletes its namespaces (which takes their veths and iptables rules with
them). A run that was killed outright is cleaned up by the next run or by
``qoslab emulate --cleanup``. Only namespaces named in such a state file, with the run's
``qlab-`` prefix, are ever touched.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from qoslab.builder_sources import SOURCES
from qoslab.scenario import Scenario
from qoslab.simulate import jain_index

STATE_DIR = Path(os.environ.get("QOSLAB_EMU_STATE", "/run/qoslab-emu"))
PREFIX = "qlab-"
#: First server port; flow f listens on PORT_BASE + f.
PORT_BASE = 5001
#: Time from starting the link daemons to the traffic's time zero (sinks must be up by then).
EPOCH_DELAY_S = 4.0
#: Congestion controls the senders may use (``net.ipv4.tcp_congestion_control``).
CONGESTION_CONTROLS = ("reno", "cubic", "bbr")
#: The kernel congestion control that runs each ``tcp.variant`` of the simulator. Linux's
#: ``reno`` is NewReno with SACK; ns-2-style Reno, NewReno and SACK all map to it.
KERNEL_CC = {"reno": "reno", "newreno": "reno", "sack": "reno", "cubic": "cubic", "bbr": "bbr"}


def _allow_cc(cc: str, say: Any) -> None:
    """A namespace may select only the congestion controls the host allows
    (``net.ipv4.tcp_allowed_congestion_control``); ``cc`` is added to that list when the
    kernel has it, and is an error when it does not."""
    base = Path("/proc/sys/net/ipv4")
    available = (base / "tcp_available_congestion_control").read_text().split()
    allowed = (base / "tcp_allowed_congestion_control").read_text().split()
    if cc in allowed:
        return
    if cc not in available:
        raise EmulationError(
            f"cc: the kernel has no {cc!r} congestion control (available: {' '.join(available)}; "
            f"try `modprobe tcp_{cc}`)"
        )
    _sh(["sysctl", "-q", "-w", f"net.ipv4.tcp_allowed_congestion_control={' '.join([*allowed, cc])}"])
    say(f"allowed the {cc} congestion control in namespaces (net.ipv4.tcp_allowed_congestion_control)")


def flow_ccs(sc: Scenario) -> list[str]:
    """The kernel congestion control of each flow's sender (its ``tcp.variant``; ``""`` for a
    UDP flow). Flows may differ (each source sets ``TCP_CONGESTION`` on its socket); SACK is a
    host sysctl, so it must be the same for all."""
    out: list[str] = []
    tcps = [f["tcp"] for f in sc.resolved["flows"] if f.get("tcp")]
    for f in sc.resolved["flows"]:
        t = f.get("tcp")
        if not t:
            out.append("")
            continue
        v = t["variant"]
        if v not in KERNEL_CC:
            raise EmulationError(
                f"tcp.variant: {v!r} is not emulated (the kernel side runs {', '.join(sorted(KERNEL_CC))})"
            )
        # Linux paces a TCP socket itself only when its congestion control asks (BBR); other
        # senders would run unpaced.
        if t["pacing"] and KERNEL_CC[v] != "bbr":
            raise EmulationError(
                f"tcp.pacing: the kernel does not pace {v} senders without the fq qdisc; "
                "pacing is emulated with bbr only"
            )
        out.append(KERNEL_CC[v])
    if len({t["sack"] for t in tcps}) > 1:
        raise EmulationError("tcp.sack: the emulated hosts run SACK for all flows or for none")
    return out


def scenario_cc(sc: Scenario, *, mixed: bool = False) -> str:
    """The kernel congestion control for the scenario's TCP senders: their ``tcp.variant``
    (one for all of them unless ``mixed``; then the first flow's, the hosts' default, while
    each source still sets its own: :func:`flow_ccs`)."""
    variants = {f["tcp"]["variant"] for f in sc.resolved["flows"] if f.get("tcp")}
    if len(variants) > 1 and not mixed:
        raise EmulationError(
            f"tcp.variant: the emulated hosts run one congestion control; the flows use {sorted(variants)}"
        )
    ccs = [c for c in flow_ccs(sc) if c]
    return ccs[0] if ccs else "reno"


#: How long the sinks (one Python process per flow) may take to listen on a loaded machine.
SINK_WAIT_S = 60.0
REPO = Path(__file__).resolve().parents[2]
TOOLS = ("ip", "iptables", "iptables-restore", "ethtool", "tc")


class EmulationError(RuntimeError):
    """Emulation cannot run (not root, a tool missing, a scenario feature not emulated)."""


def linkd_path() -> Path:
    """The link daemon binary: ``$QOSLAB_LINKD``, else the workspace's release build (a
    checkout), else the one a wheel installed beside this Python's ``qoslab`` command."""
    p = os.environ.get("QOSLAB_LINKD")
    if p:
        return Path(p)
    built = REPO / "target" / "release" / "qoslab-linkd"
    if built.exists():
        return built
    installed = Path(sys.executable).parent / "qoslab-linkd"
    if installed.exists():
        return installed
    found = shutil.which("qoslab-linkd")
    return Path(found) if found else built


def availability() -> tuple[bool, str]:
    """Whether emulation can run here, and if not, why (for skips and error messages)."""
    if not sys.platform.startswith("linux"):
        return False, "emulation needs Linux"
    if os.geteuid() != 0:
        return False, "emulation needs root (network namespaces, iptables, NFQUEUE); run as root"
    missing = [t for t in TOOLS if shutil.which(t) is None]
    if missing:
        return False, f"missing tools: {', '.join(missing)} (apt-get install iproute2 iptables ethtool)"
    if not linkd_path().exists():
        return False, f"link daemon not built: {linkd_path()} (run `make build`)"
    probe = f"{PREFIX}probe-{os.getpid()}"
    try:
        r = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
        if r.returncode != 0:
            return False, f"cannot create a network namespace: {r.stderr.strip()}"
        r = subprocess.run(
            [
                "ip",
                "netns",
                "exec",
                probe,
                "iptables",
                "-t",
                "mangle",
                "-A",
                "PREROUTING",
                "-j",
                "NFQUEUE",
                "--queue-num",
                "1",
            ],
            capture_output=True,
            text=True,
        )
        if r.returncode != 0:
            return False, f"iptables NFQUEUE unavailable in a namespace: {r.stderr.strip()}"
    finally:
        subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return True, ""


def require() -> None:
    ok, why = availability()
    if not ok:
        raise EmulationError(why)


# --- state files and teardown ------------------------------------------------------------


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


def _teardown_record(data: dict[str, Any], path: Path | None) -> list[str]:
    """Kills a run's processes and deletes its namespaces; returns what it removed."""
    removed = []
    prefix = str(data.get("prefix", ""))
    if not prefix.startswith(PREFIX):
        raise EmulationError(f"{path}: not a qoslab emulation state file (prefix {prefix!r})")
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
        owner, start = data.get("owner_pid"), data.get("owner_start")
        alive = owner is not None and _proc_start(int(owner)) == start and int(owner) != os.getpid()
        if alive and not all_runs:
            continue
        removed += _teardown_record(data, p)
    return removed


# --- commands ----------------------------------------------------------------------------


def _sh(args: list[str], input: str | None = None) -> str:
    r = subprocess.run(args, capture_output=True, text=True, input=input)
    if r.returncode != 0:
        raise EmulationError(f"`{' '.join(args)}` failed: {r.stderr.strip() or r.stdout.strip()}")
    return r.stdout


def _die_with_parent() -> None:
    """In the child before exec: get SIGKILL when the run's process dies (a killed run leaves
    no traffic or daemon behind), and lead a new process group."""
    os.setsid()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _addr_link(i: int, side: int) -> str:
    """Address of link i's a (side 0) or b (side 1) end: one /30 per link."""
    base = i * 4
    return f"10.{100 + base // 65536}.{(base // 256) % 256}.{base % 256 + 1 + side}"


def _addr_node(n: int) -> str:
    """A node's identity address (/32 on its loopback): what its flows use."""
    return f"10.99.{n // 250}.{n % 250 + 1}"


def emulation_scenario(sc: Scenario, duration_s: float | None) -> Scenario:
    """The scenario shortened to ``duration_s`` (measurement window clipped into it: the second
    half of the run when the scenario's window does not fit)."""
    if duration_s is None:
        return sc
    dur_ns = int(duration_s * 1e9)
    m = sc.resolved["measurement"]
    sets = [f"duration={duration_s}s"]
    if m["start_ns"] >= dur_ns or m["end_ns"] > dur_ns:
        start = m["start_ns"] if m["start_ns"] < dur_ns else dur_ns // 2
        sets += [f"measurement.start={start / 1e9}s", f"measurement.end={duration_s}s"]
    return sc.with_overrides(sets)


def check_supported(sc: Scenario) -> None:
    """What the emulator cannot reproduce is refused with one clear line."""
    for i, f in enumerate(sc.resolved["flows"]):
        if f["kind"] != "tcp" and not (f["kind"] in SOURCES and SOURCES[f["kind"]].exports["emulator"]):
            raise EmulationError(f"flow[{i}] ({f['name']}): type {f['kind']!r} is not emulated")
        # the emulator's traffic generators run bulk TCP and fixed-size datagrams only
        if f.get("size_bytes") is not None:
            raise EmulationError(f"flow[{i}] ({f['name']}): a finite transfer (`size`) is not emulated")
        if f.get("packet_size_dist"):
            raise EmulationError(
                f"flow[{i}] ({f['name']}): packet sizes drawn from a distribution are not emulated"
            )
    for i, a in enumerate(sc.resolved.get("arrivals", [])):
        raise EmulationError(f"arrivals[{i}] ({a['name']}): flow-arrival processes are not emulated")
    if len(sc.resolved["flows"]) > 60000:
        raise EmulationError("too many flows for one port each")
    # Mechanisms that need the simulator's own hooks, which the link daemon does not drive:
    # TWAM's periodic ticks and cwnd feed, DWRED's window signal, FDD-RED's reverse-path RTT
    # estimator and oracle RTTs.
    for i, c in enumerate(sc.resolved.get("conditioners", [])):
        if c["meter"]["type"] == "twam":
            raise EmulationError(
                f"conditioner[{i}] ({c['name']}): a twam marker is not emulated (it needs the "
                "simulator's periodic window updates); run it with `qoslab run`"
            )
    # Each queue discipline says itself whether the link daemon can run it (its `emulable`).
    for lk in sc.resolved["links"]:
        for d in ("queue_ab", "queue_ba"):
            q = lk[d]
            for x in (q, *(sub["queue"] for sub in q.get("queues", []))):
                if not x.get("emulable", True):
                    raise EmulationError(
                        f"link {lk['name']!r} {d}: a {x['type']} queue is not emulated (it needs the "
                        "simulator's signalling, reverse-path or dequeue-time hooks); run it with "
                        "`qoslab run`"
                    )


@dataclass
class EmuResult:
    """An emulation run's tables, shaped like the simulator's :class:`qoslab.simulate.Result`."""

    scenario: Scenario
    seed: int
    flows: pd.DataFrame
    links: pd.DataFrame
    conditioners: pd.DataFrame
    dscp_counts: pd.DataFrame
    daemons: list[dict[str, Any]]
    wall_time_s: float
    prefix: str
    #: Per-flow throughput at the receiver per second of the run (bytes on the wire).
    series_flow: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: Per flow (by name), its source's report (emu_traffic.py). UDP: the worst slip behind
    #: its schedule and the sends over 1 ms late as ``[scheduled time after the flow's start,
    #: slip]`` (s). TCP: the kernel's ``tcp_info`` at the end and its host's TcpExt counters'
    #: change over the run.
    sources: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: What a sending host's kernel was set to, read back from it before the traffic started
    #: (:func:`_read_host_settings`): kernel release, TCP sysctls, the veth's offloads, qdiscs
    #: and routes.
    host_settings: dict[str, Any] = field(default_factory=dict)

    def late_sources(self) -> pd.DataFrame:
        """UDP flows whose source sent a packet more than 1 ms after its scheduled time."""
        f = self.flows
        if "late_sends" not in f:
            return f.iloc[0:0]
        return f.loc[f["late_sends"] > 0, ["name", "send_slip_max_s", "late_sends"]]

    @property
    def fairness_index(self) -> float:
        return jain_index(self.flows["throughput_bps"].to_numpy())

    def lateness(self) -> pd.DataFrame:
        return pd.DataFrame([{"node": d["node"], **d["lateness"]} for d in self.daemons])

    def summary(self) -> dict[str, Any]:
        return {
            "mode": "emulation",
            "scenario": self.scenario.name,
            "scenario_source": self.scenario.source,
            "seed": self.seed,
            "duration_s": self.scenario.resolved["duration_ns"] / 1e9,
            "measurement_window_s": [
                self.scenario.resolved["measurement"]["start_ns"] / 1e9,
                self.scenario.resolved["measurement"]["end_ns"] / 1e9,
            ],
            "fairness_index": self.fairness_index,
            "aggregate_throughput_bps": float(self.flows["throughput_bps"].sum()),
            "flows": self.flows.to_dict(orient="records"),
            "lateness": self.lateness().to_dict(orient="records"),
            "wall_time_s": self.wall_time_s,
            "run_prefix": self.prefix,
            "host_settings": self.host_settings,
        }

    def write(self, out: str | Path) -> Path:
        d = Path(out)
        d.mkdir(parents=True, exist_ok=True)
        for name in ("flows", "links", "conditioners", "dscp_counts", "series_flow"):
            getattr(self, name).to_csv(d / f"{name}.csv", index=False)
        (d / "summary.json").write_text(json.dumps(self.summary(), indent=2, default=float) + "\n")
        (d / "daemons.json").write_text(json.dumps(self.daemons, indent=2) + "\n")
        (d / "sources.json").write_text(json.dumps(self.sources) + "\n")
        (d / "scenario.toml").write_text(self.scenario.text)
        return d


class _Interrupted(Exception):
    pass


class _Signals:
    """Ctrl-C (SIGINT: KeyboardInterrupt, or the caller's own handler) and SIGTERM (raises
    :class:`_Interrupted`) during a run, so that its teardown runs. While ``hold`` > 0 the
    first signal only waits, and is raised when the hold ends (``held``, ``restore``).

    Held: starting a child until its pid is recorded, adding a namespace, creating the state
    file and work directory, the teardown. Starting a child with a ``preexec_fn`` makes
    CPython run the at-fork hooks (logging's lock release) around the fork, and a
    KeyboardInterrupt raised in a hook is only printed ("Exception ignored in ...") — a
    Ctrl-C arriving then was lost and the run went on to its end.

    A signal can also land, unheld, in a finalizer: after each command, ``Popen.__del__``
    runs Python code, and an exception raised there is likewise only printed (a run sent
    SIGINT just after its state file appeared went on to its end, exit 0). So every signal
    raised is remembered, and :meth:`check`, called where the run waits and before anything
    is held, raises it again if the run is still going: one that propagated never comes back
    to a check (the teardown holds signals). Only the main thread gets signals; elsewhere
    this does nothing."""

    def __init__(self) -> None:
        self.hold = 0
        self.pending: int | None = None
        #: The signal last raised by the handler, until :meth:`check` raises it again.
        self.raised: int | None = None
        self.old: dict[int, Any] = {}
        if threading.current_thread() is not threading.main_thread():
            return
        for s in (signal.SIGINT, signal.SIGTERM):
            if s == signal.SIGINT and signal.getsignal(s) == signal.SIG_IGN:
                continue  # started with Ctrl-C ignored (a script's `&` job): it stays ignored
            self.old[s] = signal.signal(s, self._handle)

    def _handle(self, signum: int, frame: Any) -> None:
        if self.hold:
            if self.pending is None:
                self.pending = signum
            return
        self.raised = signum
        self._raise(signum, frame)

    def check(self) -> None:
        """Raises again a signal whose exception was swallowed (see the class): the run is
        still going after the handler raised. Nothing while signals are held."""
        if self.raised is not None and not self.hold:
            signum, self.raised = self.raised, None
            self._raise(signum, None)

    def _raise(self, signum: int, frame: Any) -> None:
        if signum == signal.SIGTERM:
            raise _Interrupted(f"signal {signum}")
        old = self.old.get(signum)
        if not callable(old):
            raise KeyboardInterrupt
        old(signum, frame)  # Python's default handler raises KeyboardInterrupt

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        self.check()
        self.hold += 1
        try:
            yield
        finally:
            self.hold -= 1
            if not self.hold and self.pending is not None:
                signum, self.pending = self.pending, None
                self._raise(signum, None)

    def restore(self) -> None:
        """Puts back the handlers found, then raises a signal that waited."""
        for s, h in self.old.items():
            signal.signal(s, signal.SIG_DFL if h is None else h)
        if self.pending is not None:
            signum, self.pending = self.pending, None
            self._raise(signum, None)


def run(
    scenario: Scenario,
    seed: int | None = None,
    *,
    duration_s: float | None = None,
    out: str | Path | None = None,
    cc: str | None = None,
    kernel_links: tuple[str, ...] = (),
    dscp_count: bool = True,
    window_clamp: bool = False,
    log: Any = None,
) -> EmuResult:
    """Emulates ``scenario`` for ``duration_s`` real seconds (default: its own duration).

    ``cc``: congestion control of every TCP sender (reno, cubic or bbr); by default the one
    the scenario's ``tcp.variant`` names (:func:`scenario_cc`), and it must agree with it.
    Without ``cc`` the flows may name different variants: each source then runs its own
    (:func:`flow_ccs`).
    ``kernel_links``:
    links whose directions the kernel serialises instead of the daemon (htb at the link
    rate + pfifo of the queue's packet limit on the sender's veth; the daemon then adds the
    propagation delay only) — the calibration reference. ``window_clamp``: the receivers clamp
    their advertised window at the scenario's TCP ``window`` (ns-2's ``window_``) with
    ``TCP_WINDOW_CLAMP`` (off by default: see docs/emulation.md).
    """
    if cc is not None and cc not in CONGESTION_CONTROLS:
        raise EmulationError(f"cc: expected one of {', '.join(CONGESTION_CONTROLS)}, got {cc!r}")
    want = scenario_cc(scenario, mixed=cc is None)
    if cc is not None and cc != want:
        raise EmulationError(
            f"cc: {cc!r} differs from the scenario's tcp.variant (emulated as {want!r}); set "
            "tcp.variant instead, so that the simulation it is compared with runs the same sender"
        )
    cc = want
    if duration_s is not None and not (isinstance(duration_s, int | float) and 0 < duration_s <= 86400):
        raise EmulationError(f"duration: expected seconds in (0, 86400], got {duration_s!r}")
    # Ctrl-C and SIGTERM raise, so that the teardown runs, but never while something is being
    # created and recorded, nor during the teardown (see _Signals).
    sig = _Signals()
    st: RunState | None = None
    try:
        with sig.held():
            require()  # its probe namespace is deleted whenever Ctrl-C comes
        sc = emulation_scenario(scenario, duration_s)
        check_supported(sc)
        seed = sc.default_seed if seed is None else int(seed)
        for k in kernel_links:
            sc.link_direction_index(k)  # raises on an unknown link
        say = log or (lambda s: None)
        removed = cleanup_stale()
        if removed:
            say(f"removed leftovers of earlier runs: {', '.join(removed)}")
        with sig.held():
            st = RunState.new()
            work = Path(tempfile.mkdtemp(prefix=f"{st.prefix}-"))
            st.work = str(work)
            st.save()
        t_wall = time.perf_counter()
        res = _run(sc, seed, st, work, cc, kernel_links, dscp_count, window_clamp, say, t_wall, out, sig)
        sig.check()  # a Ctrl-C swallowed after the last wait: the run is still interrupted
        return res
    finally:
        sig.hold += 1  # first, before any call (where a signal could be raised)
        try:
            if st is not None:
                try:
                    _teardown_record(json.loads(st.path.read_text()), st.path)
                finally:
                    if st.work:
                        shutil.rmtree(st.work, ignore_errors=True)
        finally:
            sig.hold -= 1
            sig.restore()


def _run(
    sc: Scenario,
    seed: int,
    st: RunState,
    work: Path,
    cc: str,
    kernel_links: tuple[str, ...],
    dscp_count: bool,
    window_clamp: bool,
    say: Any,
    t_wall: float,
    out: str | Path | None,
    sig: _Signals,
) -> EmuResult:
    r = sc.resolved
    nodes: list[str] = r["nodes"]
    links: list[dict[str, Any]] = r["links"]
    flows: list[dict[str, Any]] = r["flows"]
    flow_cc = [c or cc for c in flow_ccs(sc)]
    for c in sorted(set(flow_cc)):
        _allow_cc(c, say)
    scen_file = work / "scenario.toml"
    scen_file.write_text(sc.text)
    plan = json.loads(_sh([str(linkd_path()), "plan", str(scen_file), str(seed)]))

    def safe(name: str) -> str:
        return re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:40]

    ns = [f"{st.prefix}-{i}-{safe(n)}" for i, n in enumerate(nodes)]
    node_idx = {n: i for i, n in enumerate(nodes)}
    for name in ns:
        st.add_namespace(name)  # recorded before it exists
        # and never interrupted: on Ctrl-C subprocess.run SIGKILLs the command and does not
        # wait, and an `ip netns add` still in the kernel then mounts it after the teardown
        # (what else the run creates lives inside its namespaces and goes with them)
        with sig.held():
            _sh(["ip", "netns", "add", name])
    hosts = {node_idx[f["src"]] for f in flows} | {node_idx[f["dst"]] for f in flows}
    tcp_any = next((f["tcp"] for f in flows if f.get("tcp")), None) or {}
    for i, name in enumerate(ns):
        sysctl = {
            "net.ipv4.ip_forward": 1,
            "net.ipv4.conf.all.rp_filter": 0,
            "net.ipv4.conf.default.rp_filter": 0,
            "net.ipv6.conf.all.disable_ipv6": 1,
            "net.ipv6.conf.default.disable_ipv6": 1,
            # ns-2's one-way TCP: no SACK, no timestamps (the segment size is exactly the
            # scenario's packet size), ECN only where the scenario asks for it.
            # SACK as the scenario's senders (`variant = "sack"` or `sack = true`).
            "net.ipv4.tcp_sack": 1 if tcp_any.get("sack") else 0,
            "net.ipv4.tcp_timestamps": 0,
            "net.ipv4.tcp_ecn": 1 if tcp_any.get("ecn") else 0,
            "net.ipv4.tcp_no_metrics_save": 1,
            "net.ipv4.tcp_congestion_control": cc,
        }
        _sh(["ip", "netns", "exec", name, "sysctl", "-q", "-w", *(f"{k}={val}" for k, val in sysctl.items())])
        _sh(["ip", "-n", name, "link", "set", "lo", "up"])
        _sh(["ip", "-n", name, "addr", "add", f"{_addr_node(i)}/32", "dev", "lo"])
    # veth pairs, created directly inside the two namespaces
    for li, lk in enumerate(links):
        a, b = node_idx[lk["a"]], node_idx[lk["b"]]
        va, vb = f"l{li}a", f"l{li}b"
        _sh(["ip", "link", "add", va, "netns", ns[a], "type", "veth", "peer", "name", vb, "netns", ns[b]])
        for side, (n, v) in enumerate(((a, va), (b, vb))):
            _sh(["ip", "-n", ns[n], "addr", "add", f"{_addr_link(li, side)}/30", "dev", v])
            _sh(["ip", "-n", ns[n], "link", "set", v, "up"])
            _sh(["ip", "netns", "exec", ns[n], "ethtool", "-K", v, "tso", "off", "gso", "off", "gro", "off"])
    # routes: the simulator's paths, hop by hop, to each flow's destination and back
    routes: dict[tuple[int, int], tuple[str, str]] = {}

    def walk(path: list[int], dest: int) -> None:
        for d in path:
            li, ab = d // 2, d % 2 == 0
            lk = links[li]
            here = node_idx[lk["a"] if ab else lk["b"]]
            via = _addr_link(li, 1 if ab else 0)
            dev = f"l{li}{'a' if ab else 'b'}"
            prev = routes.setdefault((here, dest), (via, dev))
            if prev != (via, dev):
                raise EmulationError(
                    f"node {nodes[here]} needs two routes to {nodes[dest]} (flows take different "
                    "equal-length paths): emulation needs destination-based routing"
                )

    for f, fp in zip(flows, plan["flows"], strict=True):
        walk(fp["fwd"], node_idx[f["dst"]])
        walk(fp["rev"], node_idx[f["src"]])
    for (here, dest), (via, dev) in routes.items():
        iw = []
        if here in hosts and tcp_any:
            iw = ["initcwnd", str(tcp_any.get("initial_window_pkts", 2))]
        _sh(["ip", "-n", ns[here], "route", "replace", f"{_addr_node(dest)}/32", "via", via, "dev", dev, *iw])
    first_src = node_idx[flows[0]["src"]] if flows else 0
    host_dev = next(
        (
            f"l{li}{'a' if node_idx[lk['a']] == first_src else 'b'}"
            for li, lk in enumerate(links)
            if first_src in (node_idx[lk["a"]], node_idx[lk["b"]])
        ),
        "lo",
    )
    settings = _read_host_settings(ns[first_src], host_dev, nodes[first_src])
    # NFQUEUE rules (and kernel serialisation for the calibration's reference links)
    kernel_dirs = {sc.link_direction_index(k, d) for k in kernel_links for d in ("ab", "ba")}
    incoming: dict[int, list[dict[str, Any]]] = {i: [] for i in range(len(nodes))}
    for li, lk in enumerate(links):
        for d, (frm, to, q) in enumerate(
            ((lk["a"], lk["b"], lk["queue_ab"]), (lk["b"], lk["a"], lk["queue_ba"]))
        ):
            di = li * 2 + d
            to_i, frm_i = node_idx[to], node_idx[frm]
            incoming[to_i].append({"dir_idx": di, "queue_num": di, "delay_only": di in kernel_dirs})
            if di in kernel_dirs:
                if q["type"] != "droptail" or q.get("limit_pkts") is None:
                    raise EmulationError(f"kernel link {lk['name']}: only DropTail with a packet limit")
                dev = f"l{li}{'a' if d == 0 else 'b'}"
                rate = f"{lk['bandwidth_bps']}bit"
                tc = ["ip", "netns", "exec", ns[frm_i], "tc"]
                # htb meters skb->len, which on a veth includes the 14-byte Ethernet header; the
                # size table takes it off, so that both serialise IP bytes at the link's rate
                _sh(
                    [*tc, "qdisc", "add", "dev", dev, "root", "handle", "1:"]
                    + ["stab", "overhead", "-14", "linklayer", "ethernet", "htb", "default", "1"]
                )
                _sh(
                    [*tc, "class", "add", "dev", dev, "parent", "1:", "classid", "1:1", "htb"]
                    + ["rate", rate, "ceil", rate]
                )
                _sh(
                    [*tc, "qdisc", "add", "dev", dev, "parent", "1:1", "handle", "10:", "pfifo"]
                    + ["limit", str(q["limit_pkts"])]
                )
    for i, name in enumerate(ns):
        if not incoming[i]:
            continue
        rules = ["*mangle"]
        for e in incoming[i]:
            li, d = e["dir_idx"] // 2, e["dir_idx"] % 2
            dev = f"l{li}{'b' if d == 0 else 'a'}"
            rules.append(f"-A PREROUTING -i {dev} -j NFQUEUE --queue-num {e['queue_num']}")
        rules.append("COMMIT")
        _sh(["ip", "netns", "exec", name, "iptables-restore"], input="\n".join(rules) + "\n")
    # per-DSCP counters at each flow's receiver (data packets only)
    count_rules: dict[int, list[tuple[int, int, int]]] = {}
    if dscp_count:
        marks = {
            c[k]
            for c in r.get("conditioners", [])
            for k in ("green", "yellow", "red")
            if isinstance(c[k], int)
        }
        for fi, f in enumerate(flows):
            proto = 6 if f["kind"] == "tcp" else 17
            for v in sorted(marks | {f["dscp"]}):
                count_rules.setdefault(node_idx[f["dst"]], []).append((fi, proto, v))
        for n, rl in count_rules.items():
            lines = ["*filter", ":QLAB_DSCP - [0:0]", "-A INPUT -j QLAB_DSCP"]
            for fi, proto, dscp in rl:
                l4 = "tcp" if proto == 6 else "udp"
                lines.append(f"-A QLAB_DSCP -p {l4} --dport {PORT_BASE + fi} -m dscp --dscp {dscp} -j RETURN")
            lines.append("COMMIT")
            _sh(["ip", "netns", "exec", ns[n], "iptables-restore"], input="\n".join(lines) + "\n")
    # The sinks listen first (one Python process per flow: slow on a loaded machine, so waited
    # for, not timed); then the traffic's time zero is fixed, the link daemons (which bin
    # deliveries from it) start, and the sources start once every daemon is ready.
    dur = r["duration_ns"] / 1e9
    py = sys.executable
    tool = str(Path(__file__).with_name("emu_traffic.py"))
    epoch_file = work / "epoch.json"
    procs: list[tuple[str, int, subprocess.Popen[bytes], Path]] = []

    def spawn(role: str, fi: int, n: int, args: list[str]) -> None:
        outp = work / f"{role}-{fi}.json"
        with sig.held():  # a Ctrl-C during the fork is not lost, and the child is recorded
            p = subprocess.Popen(
                ["ip", "netns", "exec", ns[n], "nice", "-n", "-10", py, tool, *args, "--out", str(outp)],
                stdout=subprocess.DEVNULL,
                stderr=open(work / f"{role}-{fi}.log", "wb"),
                preexec_fn=_die_with_parent,
            )
            st.add_pid(p.pid)
            procs.append((role, fi, p, outp))

    for fi, f in enumerate(flows):
        d = node_idx[f["dst"]]
        sink = ["--bind", _addr_node(d), "--port", str(PORT_BASE + fi), "--epoch-file", str(epoch_file)]
        if f["kind"] == "tcp":
            clamp = f["tcp"]["window_pkts"] * (f["packet_size_bytes"] - 40) if window_clamp else 0
            sink += ["--mss", str(f["packet_size_bytes"] - 40), "--window-bytes", str(clamp)]
        spawn("sink", fi, d, ["tcp-sink" if f["kind"] == "tcp" else "udp-sink", *sink])
    deadline = time.monotonic() + SINK_WAIT_S
    while not all(Path(str(o) + ".ready").exists() for _, _, _, o in procs):
        if time.monotonic() > deadline or any(p.poll() is not None for _, _, p, _ in procs):
            logs = "".join(x.read_text() for x in work.glob("sink-*.log"))
            raise EmulationError(
                f"the traffic sinks were not listening after {SINK_WAIT_S:g} s (or one died): {logs.strip()}"
            )
        sig.check()
        time.sleep(0.01)
    epoch = time.monotonic() + EPOCH_DELAY_S
    epoch_unix = time.time() + (epoch - time.monotonic())
    tmp = epoch_file.with_suffix(".tmp")
    tmp.write_text(json.dumps({"epoch": epoch, "until": epoch + dur + 0.3}))
    os.replace(tmp, epoch_file)
    ports = [
        {
            "protocol": 6 if f["kind"] == "tcp" else 17,
            "port": PORT_BASE + i,
            "mss": f["packet_size_bytes"] - 40 if f["kind"] == "tcp" else 0,
        }
        for i, f in enumerate(flows)
    ]
    daemons: list[tuple[subprocess.Popen[bytes], Path]] = []
    chrt = ["chrt", "-f", "50"] if shutil.which("chrt") else []
    for i, name in enumerate(ns):
        if not incoming[i]:
            continue
        cfg = {
            "node": nodes[i],
            "scenario": str(scen_file),
            "seed": seed,
            "dirs": incoming[i],
            "ports": ports,
            "out": str(work / f"linkd-{i}.json"),
            "ready": str(work / f"linkd-{i}.ready"),
            "max_seconds": dur + 60.0,
            "epoch_unix_s": epoch_unix,
            "bin_s": 0.1,
            "bins": int(dur / 0.1) + 10,
        }
        cfg_file = work / f"linkd-{i}.cfg.json"
        cfg_file.write_text(json.dumps(cfg))
        log_f = open(work / f"linkd-{i}.log", "wb")
        with sig.held():
            p = subprocess.Popen(
                ["ip", "netns", "exec", name, *chrt, str(linkd_path()), "run", str(cfg_file)],
                stdout=log_f,
                stderr=subprocess.STDOUT,
                preexec_fn=_die_with_parent,
            )
            st.add_pid(p.pid)
            daemons.append((p, work / f"linkd-{i}.json"))
    for i in range(len(ns)):
        if not incoming[i]:
            continue
        while not (work / f"linkd-{i}.ready").exists():
            if time.monotonic() > epoch - 0.2 or any(p.poll() is not None for p, _ in daemons):
                logs = "".join((work / f"linkd-{j}.log").read_text() for j in range(len(ns)) if incoming[j])
                raise EmulationError(
                    f"the link daemons were not ready {EPOCH_DELAY_S:g} s after they started "
                    f"(machine overloaded?): {logs.strip()}"
                )
            sig.check()
            time.sleep(0.01)
    say(f"{len(ns)} namespaces, {len(links)} links, {len(daemons)} link daemons ({st.prefix})")
    for fi, (f, fp) in enumerate(zip(flows, plan["flows"], strict=True)):
        s, d = node_idx[f["src"]], node_idx[f["dst"]]
        start = epoch + fp["start_ns"] / 1e9
        stop = epoch + min(f.get("stop_ns") or r["duration_ns"], r["duration_ns"]) / 1e9
        common = ["--bind", _addr_node(s), "--dst", _addr_node(d), "--port", str(PORT_BASE + fi)]
        common += [
            "--epoch",
            str(epoch),
            "--start",
            str(start),
            "--stop",
            str(stop),
            "--tos",
            str(f["dscp"] << 2),
        ]
        if f["kind"] == "tcp":
            spawn(
                "source",
                fi,
                s,
                ["tcp-source", *common, "--mss", str(f["packet_size_bytes"] - 40), "--cc", flow_cc[fi]],
            )
        else:
            spawn(
                "source",
                fi,
                s,
                [
                    "udp-source",
                    *common,
                    "--kind",
                    f["kind"],
                    "--rate",
                    str(f["rate_bps"]),
                    "--size",
                    str(f["packet_size_bytes"]),
                    "--on",
                    str((f.get("on_ns") or 1e9) / 1e9),
                    "--off",
                    str((f.get("off_ns") or 1e9) / 1e9),
                    "--seed",
                    str(seed * 1000 + fi),
                ],
            )
    say(f"traffic for {dur:g} s")
    for role, fi, p, _ in procs:
        deadline = max(epoch + dur + 15, time.monotonic() + 1)
        while p.poll() is None:
            if time.monotonic() > deadline:
                p.kill()
                raise EmulationError(f"{role} of flow {flows[fi]['name']} did not finish in time")
            sig.check()
            with contextlib.suppress(subprocess.TimeoutExpired):
                p.wait(timeout=0.2)
    # counters: the receivers' iptables first (the daemons hold nothing by now)
    dscp_rows = []
    for n, rl in count_rules.items():
        txt = _sh(
            ["ip", "netns", "exec", ns[n], "iptables", "-t", "filter", "-L", "QLAB_DSCP", "-v", "-x", "-n"]
        )
        rows = [ln.split() for ln in txt.splitlines()[2:] if ln.strip()]
        for (fi, _, dscp), row in zip(rl, rows, strict=True):
            dscp_rows.append(
                {
                    "flow": fi,
                    "flow_name": flows[fi]["name"],
                    "dscp": dscp,
                    "packets": int(row[0]),
                    "bytes": int(row[1]),
                }
            )
    kernel_stats = {}
    for di in sorted(kernel_dirs):
        li, d = di // 2, di % 2
        frm = node_idx[links[li]["a"] if d == 0 else links[li]["b"]]
        txt = _sh(
            [
                "ip",
                "netns",
                "exec",
                ns[frm],
                "tc",
                "-s",
                "qdisc",
                "show",
                "dev",
                f"l{li}{'a' if d == 0 else 'b'}",
            ]
        )
        m = re.search(r"qdisc pfifo 10:.*?Sent (\d+) bytes (\d+) pkt \(dropped (\d+)", txt, re.S)
        if m:
            kernel_stats[di] = {"departures": int(m.group(2)), "overflow_drops": int(m.group(3))}
    for p, _ in daemons:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGTERM)
    reports = []
    for p, path in daemons:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
        if not path.exists():
            raise EmulationError(f"link daemon wrote no counters ({path.name})")
        reports.append(json.loads(path.read_text()))
    results = {(role, fi): json.loads(o.read_text()) for role, fi, _, o in procs if o.exists()}
    res = _assemble(sc, seed, reports, results, dscp_rows, time.perf_counter() - t_wall, st.prefix)
    for di, ks in kernel_stats.items():
        # the kernel's pfifo dropped and sent these (the daemon only delayed them)
        at = res.links["direction_index"] == di
        res.links.loc[at, "overflow_drops"] = ks["overflow_drops"]
        res.links.loc[at, "kernel_sent_packets"] = ks["departures"]
    res.host_settings = settings
    if out is not None:
        res.write(out)
    return res


#: The sysctls :func:`_read_host_settings` reads back (the run sets the first six).
HOST_SYSCTLS = (
    "net.ipv4.tcp_congestion_control",
    "net.ipv4.tcp_sack",
    "net.ipv4.tcp_timestamps",
    "net.ipv4.tcp_ecn",
    "net.ipv4.tcp_no_metrics_save",
    "net.ipv4.conf.all.rp_filter",
    "net.ipv4.tcp_dsack",
    "net.ipv4.tcp_recovery",
    "net.ipv4.tcp_early_retrans",
    "net.ipv4.tcp_frto",
    "net.ipv4.tcp_window_scaling",
    "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_wmem",
    "net.ipv4.tcp_autocorking",
    "net.ipv4.tcp_slow_start_after_idle",
    "net.ipv4.tcp_pacing_ss_ratio",
    "net.ipv4.tcp_pacing_ca_ratio",
    "net.ipv4.tcp_min_tso_segs",
    "net.ipv4.tcp_limit_output_bytes",
    "net.ipv4.tcp_reordering",
    "net.ipv4.tcp_retries2",
    "net.core.default_qdisc",
)
#: The offloads read back from a host's veth (``ethtool -k``).
OFFLOADS = ("tcp-segmentation-offload", "generic-segmentation-offload", "generic-receive-offload")


def _read_host_settings(ns_name: str, dev: str, node: str) -> dict[str, Any]:
    """A sending host's kernel settings as the kernel reports them (not as the run asked):
    ``uname -r``, :data:`HOST_SYSCTLS`, the :data:`OFFLOADS` of its veth, its qdiscs and
    routes (``initcwnd``). A sysctl this kernel lacks is recorded as ``None``."""
    sysctls: dict[str, str | None] = {}
    for k in HOST_SYSCTLS:
        r = subprocess.run(
            ["ip", "netns", "exec", ns_name, "sysctl", "-n", k], capture_output=True, text=True
        )
        if r.returncode != 0:  # a host-wide one (net.core.default_qdisc): the root namespace's
            r = subprocess.run(["sysctl", "-n", k], capture_output=True, text=True)
        sysctls[k] = " ".join(r.stdout.split()) if r.returncode == 0 else None
    eth = _sh(["ip", "netns", "exec", ns_name, "ethtool", "-k", dev])
    offloads = {}
    for line in eth.splitlines():
        key, _, val = line.strip().partition(":")
        if key in OFFLOADS:
            offloads[key] = val.strip()
    return {
        "kernel": os.uname().release,
        "host": node,
        "device": dev,
        "sysctl": sysctls,
        "offloads": offloads,
        "qdiscs": _sh(["ip", "netns", "exec", ns_name, "tc", "qdisc", "show"]).strip().splitlines(),
        "routes": _sh(["ip", "-n", ns_name, "route", "show"]).strip().splitlines(),
    }


def _int_or_nan(x: Any) -> float:
    return float("nan") if x is None else float(int(x))


def _assemble(
    sc: Scenario,
    seed: int,
    reports: list[dict[str, Any]],
    traffic: dict[tuple[str, int], dict[str, Any]],
    dscp_rows: list[dict[str, Any]],
    wall: float,
    prefix: str,
) -> EmuResult:
    r = sc.resolved
    m = r["measurement"]
    w0, w1 = m["start_ns"] / 1e9, m["end_ns"] / 1e9
    frows = []
    sources: dict[str, dict[str, Any]] = {}
    series: list[dict[str, Any]] = []
    for fi, f in enumerate(r["flows"]):
        sink = traffic.get(("sink", fi), {})
        src = traffic.get(("source", fi), {})
        bins = np.asarray(sink.get("bin_bytes", []), dtype=float)
        bs = sink.get("bin_s", 0.1)
        i0, i1 = int(round(w0 / bs)), int(round(w1 / bs))
        win = float(bins[i0:i1].sum()) if len(bins) else 0.0
        if f["kind"] == "tcp":
            # payload → bytes on the wire (40-byte TCP/IP header per segment), as ns-2 counts
            mss = f["packet_size_bytes"] - 40
            wire = win * f["packet_size_bytes"] / mss
        else:
            wire = win
        scale = f["packet_size_bytes"] / (f["packet_size_bytes"] - 40) if f["kind"] == "tcp" else 1.0
        per_s = int(round(1.0 / bs))
        for k in range(0, len(bins) - per_s + 1, per_s):
            series.append(
                {
                    "time_s": (k + per_s) * bs,
                    "flow": fi,
                    "flow_name": f["name"],
                    "throughput_bps": float(bins[k : k + per_s].sum()) * scale * 8,
                }
            )
        per_flow = [d["flows"][fi] for d in reports]
        dl = np.zeros(max((len(x["delivered_bin_bytes"]) for x in per_flow), default=0))
        for x in per_flow:
            dl[: len(x["delivered_bin_bytes"])] += x["delivered_bin_bytes"]
        j0, j1 = int(round(w0 / 0.1)), int(round(w1 / 0.1))
        frows.append(
            {
                "name": f["name"],
                "src": f["src"],
                "dst": f["dst"],
                "kind": f["kind"],
                # as the simulator: bytes on the wire of data packets reaching the receiver's node
                "throughput_bps": float(dl[j0:j1].sum()) * 8 / (w1 - w0),
                # what the receiving application read (TCP: in order; payload scaled to the wire)
                "app_throughput_bps": wire * 8 / (w1 - w0),
                "goodput_bps": win * 8 / (w1 - w0),
                "received_bytes": int(sink.get("bytes", 0)),
                "sent_bytes": int(src.get("bytes", 0)),
                "green_packets": max((x["colored_green"] for x in per_flow), default=0),
                "yellow_packets": max((x["colored_yellow"] for x in per_flow), default=0),
                "red_packets": max((x["colored_red"] for x in per_flow), default=0),
                "early_drops": sum(x["drops_early"] for x in per_flow),
                "forced_drops": sum(x["drops_forced"] for x in per_flow),
                "overflow_drops": sum(x["drops_overflow"] for x in per_flow),
                "policed_drops": sum(x["drops_policed"] for x in per_flow),
                "dropped_packets": sum(
                    x["drops_early"] + x["drops_forced"] + x["drops_overflow"] + x["drops_policed"]
                    for x in per_flow
                ),
                "source_error": src.get("error", ""),
                "start_late_s": float(src.get("start_late_s", float("nan"))),
                # UDP sources: how late the worst send was, and how many were over 1 ms late
                "send_slip_max_s": float(src.get("slip_max_s", float("nan"))),
                "late_sends": int(src.get("late_sends", 0)),
                # TCP sources: the kernel's view of the connection when it closed (tcp_info), and
                # the retransmission timeouts of its host over the run (shared by the host's flows)
                "kernel_total_retrans": _int_or_nan(src.get("tcp_info", {}).get("total_retrans")),
                "kernel_reordering": _int_or_nan(src.get("tcp_info", {}).get("reordering")),
                "kernel_host_timeouts": _int_or_nan(src.get("host_tcpext", {}).get("TCPTimeouts")),
            }
        )
        sources[f["name"]] = src
    lrows = [row for d in reports for row in d["links"]]
    links = (
        pd.DataFrame(lrows).sort_values("direction_index").reset_index(drop=True) if lrows else pd.DataFrame()
    )
    dur = r["duration_ns"] / 1e9
    if len(links):
        bw = [r["links"][i]["bandwidth_bps"] for i in links["link"]]
        links["utilization"] = links["departed_bytes"] * 8 / (np.asarray(bw) * dur)
    crow = [c for d in reports for c in d["conditioners"]]
    conds = (
        pd.DataFrame(crow).sort_values("conditioner").reset_index(drop=True)
        if crow
        else pd.DataFrame(columns=["conditioner", "name", "green_packets", "yellow_packets", "red_packets"])
    )
    if len(conds):
        conds.insert(2, "link", [r["conditioners"][i]["link"] for i in conds["conditioner"]])
        conds.insert(3, "meter", [r["conditioners"][i]["meter"]["type"] for i in conds["conditioner"]])
    return EmuResult(
        scenario=sc,
        seed=seed,
        flows=pd.DataFrame(frows),
        links=links,
        conditioners=conds,
        dscp_counts=pd.DataFrame(dscp_rows, columns=["flow", "flow_name", "dscp", "packets", "bytes"]),
        daemons=reports,
        wall_time_s=wall,
        prefix=prefix,
        series_flow=pd.DataFrame(series),
        sources=sources,
    )


def compare_table(sim: Any, emu: EmuResult) -> list[list[str]]:
    """Rows (quantity, simulated, emulated) for ``--compare``."""
    rows: list[list[str]] = []
    for (_, s), (_, e) in zip(sim.flows.iterrows(), emu.flows.iterrows(), strict=True):
        rows.append(
            [
                f"{s['name']} throughput (kbit/s)",
                f"{s['throughput_bps'] / 1e3:.1f}",
                f"{e['throughput_bps'] / 1e3:.1f}",
            ]
        )
    rows.append(["Jain index", f"{sim.fairness_index:.3f}", f"{emu.fairness_index:.3f}"])
    rows.append(
        [
            "aggregate (kbit/s)",
            f"{sim.flows['throughput_bps'].sum() / 1e3:.1f}",
            f"{emu.flows['throughput_bps'].sum() / 1e3:.1f}",
        ]
    )
    for c in ("green", "yellow", "red"):
        rows.append(
            [
                f"marked {c} (packets)",
                str(int(sim.flows[f"{c}_packets"].sum())),
                str(int(emu.flows[f"{c}_packets"].sum())),
            ]
        )
    bn = sim.scenario.resolved["measurement"]["bottleneck"]
    sl = sim.links[sim.links["link_name"] == bn]
    el = emu.links[emu.links["link_name"] == bn] if len(emu.links) else emu.links
    for k, name in enumerate(("green/AFx1", "yellow/AFx2", "red/AFx3+BE")):
        rows.append(
            [
                f"{bn} drops {name}",
                str(int(sl[f"drops_prec{k}"].sum())),
                str(int(el[f"drops_prec{k}"].sum()) if len(el) else "-"),
            ]
        )
    for kind in ("early", "forced", "overflow"):
        rows.append(
            [
                f"{bn} {kind} drops",
                str(int(sl[f"{kind}_drops"].sum())),
                str(int(el[f"{kind}_drops"].sum()) if len(el) else "-"),
            ]
        )
    return rows
