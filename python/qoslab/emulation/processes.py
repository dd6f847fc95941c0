"""The run's processes: the traffic (traffic.py, one sink and one source per flow, in their
hosts' namespaces) and the link daemons (``qoslab-linkd``, one per node that packets enter).

The sinks listen first (one Python process per flow: slow on a loaded machine, so waited for,
not timed); then the traffic's time zero is fixed, the link daemons (which bin deliveries from
it) start, and the sources start once every daemon is ready. Every child is recorded in the
run's state file before a signal may interrupt the run, and dies with it."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qoslab.emulation.machine import EmulationError, die_with_parent, linkd_path
from qoslab.emulation.network import PORT_BASE, Net, addr_node
from qoslab.emulation.signals import Signals
from qoslab.emulation.state import RunState

#: Time from starting the link daemons to the traffic's time zero (sinks must be up by then).
EPOCH_DELAY_S = 4.0
#: How long the sinks (one Python process per flow) may take to listen on a loaded machine.
SINK_WAIT_S = 60.0


@dataclass
class Children:
    """The run's child processes, and where they write (``work``)."""

    net: Net
    st: RunState
    sig: Signals
    work: Path
    #: (role, flow, process, its report file) of each sink and source.
    traffic: list[tuple[str, int, subprocess.Popen[bytes], Path]] = field(default_factory=list)
    #: (process, its report file) of each link daemon.
    daemons: list[tuple[subprocess.Popen[bytes], Path]] = field(default_factory=list)

    @property
    def epoch_file(self) -> Path:
        return self.work / "epoch.json"

    def spawn(self, role: str, fi: int, n: int, args: list[str]) -> None:
        """Starts traffic.py's ``role`` of flow ``fi`` in node ``n``'s namespace."""
        py = sys.executable
        tool = str(Path(__file__).with_name("traffic.py"))
        outp = self.work / f"{role}-{fi}.json"
        with self.sig.held():  # a Ctrl-C during the fork is not lost, and the child is recorded
            p = subprocess.Popen(
                [
                    "ip",
                    "netns",
                    "exec",
                    self.net.ns[n],
                    "nice",
                    "-n",
                    "-10",
                    py,
                    tool,
                    *args,
                    "--out",
                    str(outp),
                ],
                stdout=subprocess.DEVNULL,
                stderr=open(self.work / f"{role}-{fi}.log", "wb"),
                preexec_fn=die_with_parent,
            )
            self.st.add_pid(p.pid)
            self.traffic.append((role, fi, p, outp))


def start_sinks(ch: Children, window_clamp: bool) -> None:
    """One sink per flow at its receiver; ``window_clamp``: TCP sinks clamp their advertised
    window at the flow's ``window``."""
    for fi, f in enumerate(ch.net.flows):
        d = ch.net.node_idx[f["dst"]]
        sink = ["--bind", addr_node(d), "--port", str(PORT_BASE + fi), "--epoch-file", str(ch.epoch_file)]
        if f["kind"] == "tcp":
            clamp = f["tcp"]["window_pkts"] * (f["packet_size_bytes"] - 40) if window_clamp else 0
            sink += ["--mss", str(f["packet_size_bytes"] - 40), "--window-bytes", str(clamp)]
        ch.spawn("sink", fi, d, ["tcp-sink" if f["kind"] == "tcp" else "udp-sink", *sink])


def wait_for_sinks(ch: Children) -> None:
    deadline = time.monotonic() + SINK_WAIT_S
    while not all(Path(str(o) + ".ready").exists() for _, _, _, o in ch.traffic):
        if time.monotonic() > deadline or any(p.poll() is not None for _, _, p, _ in ch.traffic):
            logs = "".join(x.read_text() for x in ch.work.glob("sink-*.log"))
            raise EmulationError(
                f"the traffic sinks were not listening after {SINK_WAIT_S:g} s (or one died): {logs.strip()}"
            )
        ch.sig.check()
        time.sleep(0.01)


def set_epoch(ch: Children, dur: float) -> tuple[float, float]:
    """Fixes the traffic's time zero :data:`EPOCH_DELAY_S` from now and tells the sinks (its
    epoch file); returns it on CLOCK_MONOTONIC and on the Unix clock."""
    epoch = time.monotonic() + EPOCH_DELAY_S
    epoch_unix = time.time() + (epoch - time.monotonic())
    tmp = ch.epoch_file.with_suffix(".tmp")
    tmp.write_text(json.dumps({"epoch": epoch, "until": epoch + dur + 0.3}))
    os.replace(tmp, ch.epoch_file)
    return epoch, epoch_unix


def start_link_daemons(ch: Children, scen_file: Path, seed: int, dur: float, epoch_unix: float) -> None:
    """A link daemon in each namespace that packets enter, for the directions they enter by."""
    net, work = ch.net, ch.work
    ports = [
        {
            "protocol": 6 if f["kind"] == "tcp" else 17,
            "port": PORT_BASE + i,
            "mss": f["packet_size_bytes"] - 40 if f["kind"] == "tcp" else 0,
        }
        for i, f in enumerate(net.flows)
    ]
    chrt = ["chrt", "-f", "50"] if shutil.which("chrt") else []
    for i, name in enumerate(net.ns):
        if not net.incoming[i]:
            continue
        cfg = {
            "node": net.nodes[i],
            "scenario": str(scen_file),
            "seed": seed,
            "dirs": net.incoming[i],
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
        with ch.sig.held():
            p = subprocess.Popen(
                ["ip", "netns", "exec", name, *chrt, str(linkd_path()), "run", str(cfg_file)],
                stdout=log_f,
                stderr=subprocess.STDOUT,
                preexec_fn=die_with_parent,
            )
            ch.st.add_pid(p.pid)
            ch.daemons.append((p, work / f"linkd-{i}.json"))


def wait_for_link_daemons(ch: Children, epoch: float) -> None:
    """Until every link daemon is ready; an error if one is not by just before ``epoch``."""
    net, work = ch.net, ch.work
    for i in range(len(net.ns)):
        if not net.incoming[i]:
            continue
        while not (work / f"linkd-{i}.ready").exists():
            if time.monotonic() > epoch - 0.2 or any(p.poll() is not None for p, _ in ch.daemons):
                logs = "".join(
                    (work / f"linkd-{j}.log").read_text() for j in range(len(net.ns)) if net.incoming[j]
                )
                raise EmulationError(
                    f"the link daemons were not ready {EPOCH_DELAY_S:g} s after they started "
                    f"(machine overloaded?): {logs.strip()}"
                )
            ch.sig.check()
            time.sleep(0.01)


def start_sources(
    ch: Children, plan: dict[str, Any], flow_cc: list[str], seed: int, epoch: float, duration_ns: int
) -> None:
    """One source per flow at its sender, from its start (the link daemon's ``plan``) to its
    stop or the run's end; a TCP source runs its flow's congestion control (``flow_cc``)."""
    net = ch.net
    for fi, (f, fp) in enumerate(zip(net.flows, plan["flows"], strict=True)):
        s, d = net.node_idx[f["src"]], net.node_idx[f["dst"]]
        start = epoch + fp["start_ns"] / 1e9
        stop = epoch + min(f.get("stop_ns") or duration_ns, duration_ns) / 1e9
        common = ["--bind", addr_node(s), "--dst", addr_node(d), "--port", str(PORT_BASE + fi)]
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
            ch.spawn(
                "source",
                fi,
                s,
                ["tcp-source", *common, "--mss", str(f["packet_size_bytes"] - 40), "--cc", flow_cc[fi]],
            )
        else:
            ch.spawn(
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


def wait_for_traffic(ch: Children, epoch: float, dur: float) -> None:
    """Until every sink and source has finished (each is given 15 s past the run's end)."""
    for role, fi, p, _ in ch.traffic:
        deadline = max(epoch + dur + 15, time.monotonic() + 1)
        while p.poll() is None:
            if time.monotonic() > deadline:
                p.kill()
                raise EmulationError(f"{role} of flow {ch.net.flows[fi]['name']} did not finish in time")
            ch.sig.check()
            with contextlib.suppress(subprocess.TimeoutExpired):
                p.wait(timeout=0.2)


def stop_link_daemons(ch: Children) -> list[dict[str, Any]]:
    """Stops the link daemons (SIGTERM) and returns their reports."""
    for p, _ in ch.daemons:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGTERM)
    reports = []
    for p, path in ch.daemons:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
        if not path.exists():
            raise EmulationError(f"link daemon wrote no counters ({path.name})")
        reports.append(json.loads(path.read_text()))
    return reports


def traffic_reports(ch: Children) -> dict[tuple[str, int], dict[str, Any]]:
    """The report of each sink and source that wrote one, by (role, flow)."""
    return {(role, fi): json.loads(o.read_text()) for role, fi, _, o in ch.traffic if o.exists()}
