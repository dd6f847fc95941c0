"""Every stop is prompt whatever a slice of simulated time holds: Ctrl-C, SIGTERM and the time
budget are looked at inside a slice (every 20 ms of wall-clock time), so a run whose slices hold
hundreds of millions of events (5,000 trace flows of a packet every 0.1 us) stops within a
fraction of a second, as a run of 9e6 simulated seconds does. The bounds are liveness bounds
(the dense run took 24 s and more to stop when only slices' ends were looked at), not speed.
The durations that made a timer re-arm at the same instant (and simulated time stop, out of
reach of every signal) are refused by ``qoslab check`` in one line."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import SCENARIOS

QOSLAB = str(Path(__file__).resolve().parents[1] / ".venv" / "bin" / "qoslab")

#: Seconds a stopped run may take to exit (the dense run stops in about 0.1 s).
STOP_BOUND_S = 3.0

DENSE = """
name = "dense"
duration = "1s"

[[node]]
name = "src"

[[node]]
name = "dst"

[[link]]
name = "l"
a = "src"
b = "dst"
bandwidth = "10Gbps"
delay = "1ms"
queue = { type = "droptail", limit = "1000pkts" }

[[flow]]
name = "t{i}"
count = 5000
type = "trace"
trace = "trace.csv"
src = "src"
dst = "dst"
packet_size = "100B"
"""


def _dense(tmp_path: Path) -> Path:
    """5,000 trace flows of a 100-byte packet every 0.1 us for 10 ms."""
    (tmp_path / "trace.csv").write_text("".join(f"{i * 1e-7:.7f},100\n" for i in range(100_000)))
    p = tmp_path / "dense.toml"
    p.write_text(DENSE)
    return p


def _long(tmp_path: Path) -> Path:
    """The UDP sources' example for 9e6 s (the format's longest duration is 2^53 ns)."""
    text = (SCENARIOS / "examples" / "udp-sources.toml").read_text()
    text = text.replace('duration = "100s"', 'duration = "9e6s"')
    text = text.replace('bottleneck = "bottleneck"', 'bottleneck = "bottleneck"\ninterval = "1e5s"')
    p = tmp_path / "long.toml"
    p.write_text(text)
    return p


def _stop_after(args: list[str], sig: signal.Signals, wait_s: float = 1.5) -> tuple[int, str, float]:
    """Runs ``qoslab args``, sends ``sig`` after ``wait_s``: (status, stderr, seconds to exit)."""
    p = subprocess.Popen([QOSLAB, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(wait_s)
        t0 = time.perf_counter()
        p.send_signal(sig)
        _, err = p.communicate(timeout=60)
        return p.returncode, err, time.perf_counter() - t0
    finally:
        p.kill()
        p.wait()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("which", ["dense", "long"])
def test_a_signal_stops_a_run_within_a_fraction_of_a_second(tmp_path, sig, which):
    path = _dense(tmp_path) if which == "dense" else _long(tmp_path)
    for wait_s in (1.5, 5.0, 15.0):  # a loaded machine may still be reading the scenario
        code, err, took = _stop_after(["run", str(path)], sig, wait_s)
        if "before the simulation started" not in err:
            break
    assert code == 130, err
    assert "interrupted at t = " in err, err
    assert took < STOP_BOUND_S, f"{which}: exited {took:.2f} s after {sig.name}"


#: A sweep's coordinator (the local pool) with a worker busy on a long run and a task of 2 MB
#: behind it, stopped as the CLI stops: SIGTERM raises KeyboardInterrupt.
POOL_CHILD = """
import signal, sys
from qoslab.runs.local_pool import LocalExecutor
from qoslab.runs.tasks import RunTask
from qoslab.scenario import Scenario
from qoslab.store import RunKey

def stop(signum, frame):
    raise KeyboardInterrupt

signal.signal(signal.SIGTERM, stop)
path = sys.argv[1]
text = open(path).read()
long = RunTask(RunKey(Scenario(text, path).sha256(), 1, "test"), text, path)
big = RunTask(RunKey("0" * 64, 2, "test"), text + "#" + "x" * 2_000_000 + chr(10), path)
print("started", flush=True)
try:
    LocalExecutor(1).run([long, big], lambda task, out: [])
except KeyboardInterrupt:
    print("stopped", flush=True)
    sys.exit(130)
"""


def test_a_signal_stops_a_pool_whose_worker_is_busy_with_a_large_task_queued(tmp_path):
    """A task queued behind a running one used to be written into the worker's pipe whatever its
    size: a 10,000-flow scenario's text (about 1 MB) filled the pipe and the coordinator sat in
    that write, and then in the request to stop written behind it, until the worker finished its
    run; SIGTERM to `qoslab reproduce buffer-sizing` was not acted on for minutes. Now a large
    task waits for the worker to be free, and a busy worker is killed at once when the pool
    stops."""
    import sys

    p = subprocess.Popen(
        [sys.executable, "-c", POOL_CHILD, str(_long(tmp_path))],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert p.stdout is not None and p.stdout.readline().strip() == "started"
        time.sleep(4.0)  # the worker has started and is simulating
        t0 = time.perf_counter()
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=60)
        took = time.perf_counter() - t0
    finally:
        p.kill()
        p.wait()
    assert p.returncode == 130 and "stopped" in out, err
    assert took < STOP_BOUND_S, f"the pool exited {took:.2f} s after SIGTERM"


def test_a_signal_before_the_simulation_starts_says_so_in_one_line(tmp_path, monkeypatch, capsys):
    from qoslab.runs import run_command

    def interrupted(*args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(run_command, "load", interrupted)
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as e:
        run_command.run(_long(tmp_path), out=out)
    assert e.value.code == 130
    assert capsys.readouterr().err == "interrupted before the simulation started: nothing was written\n"
    assert not out.exists()


def test_the_time_budget_stops_a_dense_run_inside_its_first_slice(tmp_path):
    path = _dense(tmp_path)
    t0 = time.perf_counter()
    p = subprocess.run(
        [QOSLAB, "run", str(path), "--max-time", "2s"], capture_output=True, text=True, timeout=120
    )
    took = time.perf_counter() - t0
    assert p.returncode == 1, p.stderr
    assert "above --max-time 2 s" in p.stderr, p.stderr
    assert took < 2.0 + STOP_BOUND_S, f"exited after {took:.2f} s under --max-time 2s"


@pytest.mark.parametrize(
    ("where", "key"),
    [("[tcp]", "tcp.max_rto"), ("flow", "flow[0].tcp.max_rto"), ("--set", "tcp.max_rto")],
)
def test_check_refuses_a_retransmission_timeout_under_a_microsecond(tmp_path, where, key):
    """A linux sender's RTO under 1 us was 0 us, re-armed at the same instant for ever."""
    text = (SCENARIOS / "linux" / "single.toml").read_text()
    sets: list[str] = []
    if where == "[tcp]":
        text = text.replace("[tcp]\n", '[tcp]\nmax_rto = "0.5us"\n')
    elif where == "flow":
        text = text.replace('tcp = { variant = "bbr" }', 'tcp = { variant = "bbr", max_rto = "0.5us" }')
    else:
        sets = ["--set", "tcp.max_rto=0.5us"]
    path = tmp_path / "single.toml"
    path.write_text(text)
    cmd = ["check", str(path)] if not sets else ["run", str(path), *sets]
    p = subprocess.run([QOSLAB, *cmd], capture_output=True, text=True, timeout=60)
    assert p.returncode == 1, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert str(path) in lines[0] and f"`{key}`" in lines[0] and "at least 1us" in lines[0], lines[0]
