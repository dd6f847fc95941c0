"""Emulation mode (docs/emulation.md): real namespaces, real kernel TCP, qoslab's conditioners
and queues in the NFQUEUE link daemon. Needs root, iproute2, iptables and ethtool (`make
emu-deps`); skipped with the reason otherwise. About 125 s in all.

Tests judge only runs on a quiet host (emu_judge.py): a run whose daemons' lateness shows a
stalled host is run again, up to three times, else the test is skipped, saying so."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from emu_judge import MARKER_BOUND, RIO_BOUND, Bound, Judge
from emu_judge import daemon_lateness as _late
from qoslab import emulate as emu
from qoslab.scenario import Scenario, load_scenario
from qoslab.simulate import run as simulate

HERE = Path(__file__).resolve().parent
SCEN = HERE / "emu_scenarios"
QOSLAB = str(Path(sys.executable).parent / "qoslab")


def test_not_root_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    ok, why = emu.availability()
    assert not ok and "root" in why
    with pytest.raises(emu.EmulationError, match="needs root"):
        emu.run(load_scenario(SCEN / "cbr-marker.toml"))


def test_library_validates_what_reaches_a_command_line() -> None:
    """The API checks what the CLI checks (before needing root), and no shell ever runs."""
    sc = load_scenario(SCEN / "cbr-marker.toml")
    with pytest.raises(emu.EmulationError, match="cc: expected one of reno, cubic, bbr"):
        emu.run(sc, cc="reno; touch /tmp/qlab-pwned; true")
    with pytest.raises(emu.EmulationError, match="duration"):
        emu.run(sc, duration_s=float("nan"))
    src = Path(emu.__file__).read_text()
    assert '"sh"' not in src and "shell=True" not in src


def test_a_ctrl_c_swallowed_by_a_finalizer_is_raised_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Ctrl-C whose KeyboardInterrupt the handler raises inside a finalizer (``Popen.__del__``
    runs after every command) is only printed by Python, and the run went on to its end, exit
    0 (seen once in test_ctrl_c_at_any_moment_of_the_setup). The run's next check, and the next
    hold, raise it again, once; a held check does nothing (the teardown's). Fails with
    ``_Signals.check`` doing nothing."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach the main thread only")

    class Finalized:
        def __del__(self) -> None:
            signal.raise_signal(signal.SIGINT)

    swallowed: list[type[BaseException]] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: swallowed.append(u.exc_type))
    # Python's own Ctrl-C handler for the run to find: a test earlier in this process may have
    # left another (importing dask_jobqueue installs one that calls sys.exit).
    found = signal.signal(signal.SIGINT, signal.default_int_handler)
    sig = emu._Signals()
    try:
        Finalized()  # collected at once: the handler raises inside __del__
        assert swallowed == [KeyboardInterrupt], "only reported, as Python does in a finalizer"
        sig.hold += 1
        sig.check()  # held: nothing
        sig.hold -= 1
        with pytest.raises(KeyboardInterrupt):
            sig.check()
        sig.check()  # raised again once only
        Finalized()
        assert swallowed == [KeyboardInterrupt] * 2
        with pytest.raises(KeyboardInterrupt):
            with sig.held():
                raise AssertionError("a hold must not start after a swallowed Ctrl-C")
        assert sig.hold == 0
    finally:
        sig.restore()
        restored = signal.getsignal(signal.SIGINT)
        signal.signal(signal.SIGINT, found)
    assert restored is signal.default_int_handler, "the run puts back the handler it found"


def test_workloads_the_emulator_cannot_generate_are_refused() -> None:
    """Finite transfers, arrival processes and drawn packet sizes would run as bulk TCP and
    fixed-size datagrams on the emulator's generators: refused, not silently changed."""
    base = load_scenario(HERE.parent / "scenarios" / "fdd-red-s1.toml")
    emu.check_supported(base)  # the scenario itself is emulable
    for sets, what in (
        (["flow[0].size=100KB"], "finite transfer"),
        (
            [
                'flow[0].type="cbr"',
                'flow[0].rate="1Mbps"',
                'flow[0].packet_size={ dist = "exponential", mean = "500B" }',
            ],
            "distribution",
        ),
        (['arrivals=[{ name = "w", src = "s0", dst = "d0", load = 0.1, size = "10KB" }]'], "flow-arrival"),
    ):
        with pytest.raises(emu.EmulationError, match=what):
            emu.check_supported(base.with_overrides(sets))


def test_the_kernel_sender_follows_the_scenario_or_is_refused() -> None:
    """The emulated hosts run the scenario's tcp.variant; what the kernel cannot run as the
    simulator does is refused with one line, never run as another sender."""
    base = load_scenario(HERE.parent / "scenarios" / "fdd-red-s1.toml")
    assert emu.scenario_cc(base) == "reno"
    assert emu.scenario_cc(base.with_overrides(["tcp.variant=cubic"])) == "cubic"
    assert emu.scenario_cc(base.with_overrides(["tcp.variant=sack"])) == "reno"
    for sets, what in (
        (
            ["tcp.variant=dctcp", 'link.bottleneck.queue_ab={ type = "step", threshold = "20pkts" }'],
            "'dctcp' is not emulated",
        ),
        (["tcp.variant=cubic", "tcp.pacing=true"], "tcp.pacing"),
    ):
        with pytest.raises(emu.EmulationError, match=what):
            emu.scenario_cc(base.with_overrides(sets))
    # one more flow with a sender of its own
    extra = '\n[[flow]]\nname = "x"\nsrc = "s0"\ndst = "d0"\ntcp = { variant = "cubic", sack = true }\n'
    two = Scenario(base.text + extra, base.source)
    with pytest.raises(emu.EmulationError, match="one congestion control"):
        emu.scenario_cc(two)
    with pytest.raises(emu.EmulationError, match="tcp.sack"):
        emu.scenario_cc(two.with_overrides(["tcp.variant=cubic"]))


def test_a_signal_while_held_is_raised_when_the_hold_ends() -> None:
    """Ctrl-C or SIGTERM while a run starts a child (or creates its state, or tears down)
    is raised once that is done, not inside it (where the fork's at-fork hooks lost it);
    the caller's handlers come back afterwards."""
    # Python's own Ctrl-C handler: importing dask_jobqueue (another test, same process) replaces
    # it with one that calls sys.exit(), which _Signals would rightly call instead
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    before = (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM))
    sig = emu._Signals()
    try:
        done = []
        with pytest.raises(KeyboardInterrupt), sig.held():
            signal.raise_signal(signal.SIGINT)
            done.append(1)
        with pytest.raises(emu._Interrupted), sig.held():
            signal.raise_signal(signal.SIGTERM)
            signal.raise_signal(signal.SIGINT)  # only the first one is kept
            done.append(2)
        assert done == [1, 2]
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGINT)  # not held: at once
    finally:
        sig.restore()
        after = (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM))
        signal.signal(signal.SIGINT, previous)
    assert after == before


_OK, _WHY = emu.availability()
needs_emulation = pytest.mark.skipif(not _OK, reason=f"emulation unavailable: {_WHY}")
if not _OK:
    print(f"test_emulate: emulation tests skipped: {_WHY}", file=sys.stderr)


def _ours() -> set[str]:
    return {n for n in emu.list_namespaces() if n.startswith(emu.PREFIX)}


def _assert_nothing_left(prefix: str) -> None:
    assert not [n for n in emu.list_namespaces() if n.startswith(prefix)], "namespaces left"
    assert not list(Path(tempfile.gettempdir()).glob(f"{prefix}-*")), "work directory left"
    assert not (emu.STATE_DIR / f"{prefix}.json").exists(), "state file left"
    # veths live only inside the run's namespaces; none may surface in the root namespace
    links = subprocess.run(
        ["ip", "-o", "link", "show", "type", "veth"], capture_output=True, text=True
    ).stdout
    assert not re.search(r": l\d+[ab]@", links), links
    rules = subprocess.run(["iptables-save"], capture_output=True, text=True).stdout
    assert "NFQUEUE" not in rules and "QLAB_DSCP" not in rules, rules


@pytest.fixture
def judge(record_property: Callable[[str, object], None]) -> Judge:
    return Judge(record_property)


@pytest.fixture
def clean() -> None:
    before = _ours()
    yield
    assert _ours() <= before, f"namespaces left behind: {_ours() - before}"


@pytest.mark.alone
@needs_emulation
def test_calibration_daemon_droptail_vs_kernel_htb_pfifo(clean: None, judge: Judge) -> None:
    """One 10 Mbit/s DropTail bottleneck of 50 packets: the daemon's serialisation against the
    kernel's htb + pfifo at the same rate and limit (same propagation delay, added by the
    daemon in both runs). htb meters the 14-byte Ethernet header too; its size table takes it
    off (emulate.py), so both carry IP bytes at 10 Mbit/s: 8 runs differed by at most 0.4 %
    (docs/emulation.md). Without the size table the kernel carried 1.4 % less, and up to 5.1 %
    less when losses synchronised: this test failed then at its former 5 % bound."""
    sc = load_scenario(SCEN / "calibration.toml")
    bound = Bound.for_rate(10e6, 1000)  # 20 ms at most, 800 us at p99
    d = judge.quiet("daemon", lambda: emu.run(sc, 1, duration_s=8), _late, bound)
    kernel = ("bottleneck",)
    k = judge.quiet("kernel", lambda: emu.run(sc, 1, duration_s=8, kernel_links=kernel), _late, bound)
    agg_d, agg_k = d.flows["throughput_bps"].sum(), k.flows["throughput_bps"].sum()
    print(f"calibration: daemon {agg_d / 1e6:.3f} Mbit/s, kernel htb+pfifo {agg_k / 1e6:.3f} Mbit/s")
    # The daemons' release lateness of both runs goes with a failure: a machine that stalled
    # them shows there (a fresh-clone run once carried 9.70 against 9.96 Mbit/s).
    late = {run: r.lateness().to_dict(orient="records") for run, r in (("daemon", d), ("kernel", k))}
    assert abs(agg_d / agg_k - 1) <= 0.02, late
    # The daemon never serialises faster than the link. A packet is counted when it is released
    # (its transmission's end plus the 5 ms propagation delay), so the packets counted in the
    # window ended their transmissions in the window moved 5 ms earlier, and the first of them
    # began up to one packet time before it: at most the rate over the window plus one packet
    # (the largest, 1000 B here). The edge packet is real: a CI run carried 10.0008 Mbit/s over
    # the 6 s window, 616 bytes above the rate. The window is whole 0.1 s bins, as counted.
    m = d.scenario.resolved["measurement"]
    assert m["start_ns"] % 100_000_000 == 0 and m["end_ns"] % 100_000_000 == 0, m
    window_s = (m["end_ns"] - m["start_ns"]) / 1e9
    edge = max(f["packet_size_bytes"] for f in d.scenario.resolved["flows"]) * 8 / window_s
    assert 0.93 * 10e6 <= agg_d <= 10e6 + edge, "the daemon never exceeds the link rate"
    bd = d.links[(d.links["link_name"] == "bottleneck") & (d.links["direction"] == "ab")].iloc[0]
    bk = k.links[(k.links["link_name"] == "bottleneck") & (k.links["direction"] == "ab")].iloc[0]
    drops_d, drops_k = int(bd["overflow_drops"]), int(bk["overflow_drops"])
    print(f"calibration: overflow drops daemon {drops_d}, kernel {drops_k}")
    assert drops_d > 0 and drops_k > 0
    assert 0.5 <= drops_d / drops_k <= 2.0
    # conservation at the daemon's queue: every arrival departed, dropped or is still held
    assert bd["arrivals"] == bd["departures"] + bd["overflow_drops"] + bd["queued_at_end"]
    # release timing: the daemon's verdicts are late by well under a packet time (800 us)
    lat = d.lateness()
    assert (lat["p50_us"] < 400).all(), lat


@needs_emulation
def test_token_bucket_marker_counts_match_receiver(clean: None, tmp_path: Path, judge: Judge) -> None:
    """2 Mbit/s CBR through a token bucket (CIR 1 Mbit/s, CBS 5000 B) marking AF11/AF12: the
    receiver's iptables per-DSCP counters equal the daemon's colour counters exactly, and
    the green count is the token bucket's on the arrivals the daemon got (the source's late
    sends replayed through the core's meter, see below) within 2 packets: 629 when on time."""
    sc = load_scenario(SCEN / "cbr-marker.toml")
    r = judge.quiet("marker", lambda: emu.run(sc, 1), _late, MARKER_BOUND)
    c = r.conditioners.iloc[0]
    got = {int(x.dscp): int(x.packets) for x in r.dscp_counts.itertuples()}
    print(f"marker: daemon green {c.green_packets} yellow {c.yellow_packets}; receiver {got}")
    assert got[10] == c.green_packets and got[12] == c.yellow_packets
    assert got[0] == 0 and got[14] == 0 and c.red_packets == 0
    total = c.green_packets + c.yellow_packets
    assert abs(total - 1250) <= 3, total  # 2 Mbit/s of 1000-byte packets for 5 s
    sent = int(round(r.flows.loc[0, "sent_bytes"] / 1000))
    # 0 to 4.996 s, as the simulator sends them: the send due at the 5 s stop is not made
    # (a float schedule once made it a few ulps early, sending 1,251)
    assert sent == 1250, sent
    on_time, replayed, late = _replayed_greens(r.sources["u"], sent, tmp_path)
    print(f"marker: green {c.green_packets}, token bucket on the arrivals {replayed} ({late})")
    assert on_time == 629  # floor(5 + 0.5 * 1249): the last packet leaves at 4.996 s
    assert abs(c.green_packets - replayed) <= 2, late


def _runs_seen(shares: list[np.ndarray], emus: list[emu.EmuResult]) -> str:
    """Each emulated run's shares, its senders' kernel counters and its daemons' worst release
    lateness, for a comparison's print and failure messages: a share out of bounds can then be
    told from a disturbed run or from a kernel whose recovery broke down (docs/emulation.md)."""
    kernel = [
        e.flows[["kernel_total_retrans", "kernel_reordering", "kernel_host_timeouts"]].to_numpy().tolist()
        for e in emus
    ]
    late = [float(e.lateness()["max_us"].max()) for e in emus]
    return (
        f"runs {[x.round(3).tolist() for x in shares]}; per run and flow the kernel's "
        f"[retransmitted segments, reordering estimate, host timeouts] {kernel}; "
        f"max release lateness {late} us"
    )


@needs_emulation
def test_rio_two_contracts_simulated_vs_emulated(clean: None, judge: Judge) -> None:
    """Two TCP flows with 6 and 1 Mbit/s contracts over an 8 Mbit/s RIO bottleneck: the
    emulation (Linux Reno) and the simulation (ns-2 Reno) give the same ordering and per-flow
    shares within 15 %. Both sides are means over seeds (simulated 1-5, emulated 1-3), over
    35 s of steady state: a single emulated run's shares vary much more than a simulated
    one's (15 s windows gave 0.57-0.75 for the first flow), so the emulated side averages
    three 40 s runs."""
    sc = load_scenario(SCEN / "rio-2contracts.toml")
    sims = [simulate(sc, s).flows["throughput_bps"].to_numpy() for s in range(1, 6)]
    share_sim = np.mean([t / t.sum() for t in sims], axis=0)
    emus = [judge.quiet(f"seed {s}", lambda s=s: emu.run(sc, s), _late, RIO_BOUND) for s in (1, 2, 3)]
    shares = [e.flows["throughput_bps"].to_numpy() / e.flows["throughput_bps"].sum() for e in emus]
    share_emu = np.mean(shares, axis=0)
    seen = (
        f"RIO shares: simulated {share_sim.round(3)}, emulated {share_emu.round(3)} "
        f"({_runs_seen(shares, emus)})"
    )
    print(seen)
    assert (np.argsort(share_sim) == np.argsort(share_emu)).all(), seen
    assert (np.abs(share_emu / share_sim - 1) <= 0.15).all(), seen
    # the kernel retransmitted what the daemons dropped (but for the last few, which the
    # source's stop can leave unrepaired; 2 in 24 flow-runs measured) and its reordering
    # estimate starts at Linux's 3 (tcp_reordering)
    for e in emus:
        f = e.flows
        assert (f["kernel_total_retrans"] >= f["dropped_packets"] - 3).all(), seen
        assert (f["kernel_reordering"] >= 3).all(), seen
    # the AF11 packets are protected: RIO drops far fewer of them than of AF12
    for e in emus:
        b = e.links[(e.links["link_name"] == "bottleneck") & (e.links["direction"] == "ab")].iloc[0]
        assert b["drops_prec1"] > 3 * b["drops_prec0"]


def _wait_for_run(proc: subprocess.Popen[bytes], before: set[str], timeout: float = 20) -> str:
    """Waits until a new run's daemons are up; returns its prefix."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        for p in emu.STATE_DIR.glob(f"{emu.PREFIX}*.json"):
            data = json.loads(p.read_text() or "{}")
            if data.get("owner_pid") == proc.pid and len(data.get("pids", [])) >= 4:
                return str(data["prefix"])
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        time.sleep(0.1)
    raise AssertionError("the run never came up")


@needs_emulation
def test_teardown_after_killed_and_interrupted_runs(clean: None) -> None:
    """SIGKILL half-way leaves the namespaces (nothing can run then); the next cleanup removes
    them, and the run's daemons and traffic died with it. Ctrl-C tears down at once. A
    namespace the runs did not create is never touched."""
    foreign = "qlab-foreign-test"
    subprocess.run(["ip", "netns", "add", foreign], check=True)
    try:
        # a state file that claims a namespace outside its own prefix: refused silently
        fake = emu.STATE_DIR / "qlab-000000.json"
        fake.write_text(
            json.dumps(
                {
                    "prefix": "qlab-000000",
                    "owner_pid": 1,
                    "owner_start": "x",
                    "namespaces": [foreign],
                    "pids": [],
                }
            )
        )
        before = _ours()
        cmd = [QOSLAB, "emulate", str(SCEN / "cbr-marker.toml"), "--duration", "20"]
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        prefix = _wait_for_run(p, before)
        pids = [x[0] for x in json.loads((emu.STATE_DIR / f"{prefix}.json").read_text())["pids"]]
        p.send_signal(signal.SIGKILL)
        p.wait()
        assert [n for n in emu.list_namespaces() if n.startswith(prefix)], "killed run left nothing?"
        time.sleep(0.5)
        assert not [
            q
            for q in pids
            if Path(f"/proc/{q}").exists() and "zombie" not in Path(f"/proc/{q}/status").read_text().lower()
        ], "children outlived the run"
        work = [Path(x) for x in __import__("glob").glob(f"/tmp/{prefix}-*")]
        assert work and all(w.is_dir() for w in work), "no work directory to clean?"
        removed = emu.cleanup_stale()
        assert any(prefix in x for x in removed)
        assert any(x.startswith("work directory") for x in removed), removed
        _assert_nothing_left(prefix)
        assert foreign in emu.list_namespaces(), "a namespace it did not create was removed"
        assert not fake.exists()

        # Ctrl-C: the run removes everything itself
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        prefix = _wait_for_run(p, _ours())
        p.send_signal(signal.SIGINT)
        assert p.wait(timeout=20) != 0
        _assert_nothing_left(prefix)
    finally:
        subprocess.run(["ip", "netns", "del", foreign], capture_output=True)


# `qoslab emulate ...` that sends itself SIGINT as it starts its K-th child (sink, link daemons,
# source), from an at-fork hook: where a Ctrl-C under load landed and was lost (CPython runs
# the hooks around a fork with a preexec_fn and only prints what they raise). It prints the
# run's prefix first.
_SIGINT_AT_FORK = """
import json, os, signal, sys
from qoslab import emulate as emu
k, n = int(sys.argv[1]), [0]
def hook():
    n[0] += 1
    if n[0] == k:
        for f in emu.STATE_DIR.glob(emu.PREFIX + "*.json"):
            d = json.loads(f.read_text() or "{}")
            if d.get("owner_pid") == os.getpid():
                print("prefix", d["prefix"], file=sys.stderr, flush=True)
        os.kill(os.getpid(), signal.SIGINT)
os.register_at_fork(before=hook)
sys.argv = ["qoslab", *sys.argv[2:]]
from qoslab.cli import main
main()
"""


def _interrupted_and_gone(
    p: subprocess.Popen[bytes], what: str, prefix: str | None = None, settle: float = 0.0
) -> None:
    """A run sent SIGINT exits non-zero (hang guard: 60 s; it takes about a second) and
    leaves nothing (looked at ``settle`` s after it exited): no namespace, work directory,
    state file, veth, rule or process. Without ``prefix``, the run printed it
    (_SIGINT_AT_FORK)."""
    try:
        rc = p.wait(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        raise AssertionError(f"{what}: still running 60 s after Ctrl-C") from None
    time.sleep(settle)
    err = p.stderr.read().decode() if p.stderr else ""
    assert rc != 0 and "interrupted" in err, f"{what}: exit {rc}: {err}"
    assert "Exception ignored" not in err, f"{what}: {err}"
    m = re.search(r"^prefix (\S+)$", err, re.M)
    prefix = prefix or (m.group(1) if m else None)
    assert prefix, f"{what}: no run prefix: {err}"
    _assert_nothing_left(prefix)
    deadline = time.monotonic() + 10  # SIGKILLed children may take a moment to go
    while True:
        alive = []
        for d in Path("/proc").iterdir():
            try:
                if prefix in (d / "cmdline").read_text() and "zombie" not in (d / "status").read_text():
                    alive.append(d.name)
            except OSError:
                continue
        if not alive or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert not alive, f"{what}: processes of {prefix} left: {alive}"


@needs_emulation
def test_ctrl_c_at_any_moment_of_the_setup(clean: None, tmp_path: Path) -> None:
    """Ctrl-C while each child is being started (a signal that arrived during the fork was
    lost: the run went on to its end, exit 0), while a namespace is being added (the command
    was killed and not waited for: its namespace could appear after the teardown) and at each
    stage of the setup the state file shows: the run stops and removes everything itself."""
    args = ["emulate", str(SCEN / "cbr-marker.toml"), "--duration", "20"]
    # an `ip netns add` that takes effect 2 s late even if killed, as one SIGKILLed inside the
    # kernel may (subprocess.run kills a command on Ctrl-C)
    real_ip = shutil.which("ip")
    (tmp_path / "ip").write_text(
        "#!/bin/sh\n"
        'if [ "$1 $2" = "netns add" ]; then\n'
        f'  setsid -w /bin/sh -c \'sleep 2; exec {real_ip} "$@"\' ip "$@" &\n'
        "  wait $!; exit $?\n"
        "fi\n"
        f'exec {real_ip} "$@"\n'
    )
    (tmp_path / "ip").chmod(0o755)
    env = {**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}"}
    p = subprocess.Popen([QOSLAB, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    prefix = None
    while prefix is None and p.poll() is None:
        for f in emu.STATE_DIR.glob(f"{emu.PREFIX}*.json"):
            with contextlib.suppress(OSError, json.JSONDecodeError):
                d = json.loads(f.read_text())
                if d.get("owner_pid") == p.pid and d.get("namespaces"):
                    prefix = str(d["prefix"])
        time.sleep(0.01)
    time.sleep(0.5)  # within the first `ip netns add`
    p.send_signal(signal.SIGINT)
    # looked at once a late namespace would have appeared
    _interrupted_and_gone(p, "SIGINT while a namespace is added", prefix, settle=2.5)
    # cbr-marker: 1 sink, 3 link daemons, 1 source
    for k in range(1, 6):
        cmd = [sys.executable, "-c", _SIGINT_AT_FORK, str(k), *args]
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _interrupted_and_gone(p, f"SIGINT as child {k} starts")
    for key, at_least in (("namespaces", 0), ("namespaces", 1), ("pids", 1), ("pids", 3), ("pids", 5)):
        p = subprocess.Popen([QOSLAB, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        prefix, t0 = None, time.monotonic()
        while prefix is None and p.poll() is None and time.monotonic() - t0 < 60:
            for f in emu.STATE_DIR.glob(f"{emu.PREFIX}*.json"):
                with contextlib.suppress(OSError, json.JSONDecodeError):
                    d = json.loads(f.read_text())
                    if d.get("owner_pid") == p.pid and len(d.get(key, [])) >= at_least:
                        prefix = str(d["prefix"])
            time.sleep(0.002)
        assert p.poll() is None, f"the run ended before {key} >= {at_least}"
        p.send_signal(signal.SIGINT)
        _interrupted_and_gone(p, f"SIGINT at {key} >= {at_least}", prefix)


def _core_greens(times: list[float], trace: Path) -> int:
    """Green packets of cbr-marker.toml's token bucket, the core's meter that the daemon runs,
    on its flow's 1000-byte packets sent at ``times`` (s after the flow's start): the flow
    replayed from a trace written to ``trace``."""
    table = load_scenario(SCEN / "cbr-marker.toml").table()
    flow = table["flow"][0]
    del flow["rate"], flow["packet_size"]
    flow.update(type="trace", trace=str(trace))
    trace.write_text("".join(f"{t:.9f},1000\n" for t in times))
    # the trace is written beside the test, outside any scenario folder: allowed, as
    # --allow-path would (a scenario reads only its own folder's files otherwise)
    sc = Scenario.from_table(table, allow_paths=[trace.parent])
    return int(simulate(sc, 1).conditioners.loc[0, "green_packets"])


def _replayed_greens(src: dict[str, Any], n: int, tmp: Path) -> tuple[int, int, str]:
    """The green packets of cbr-marker.toml's token bucket on its source's n packets (1000
    bytes at 2 Mbit/s) sent on schedule, and sent when the source's report says (its sends
    over 1 ms late moved), and a line saying how late the source was."""
    gap = 1000 * 8 / 2e6
    scheduled = [i * gap for i in range(n)]
    actual = list(scheduled)
    assert len(src["late_send_slips"]) == src["late_sends"]
    for at, slip in src["late_send_slips"]:
        actual[int(round(at / gap))] = at + slip
    # A send under 1 ms late is not recorded, but it still followed the one before it, which
    # may have been late by more than the gap: sends are sequential.
    actual = list(itertools.accumulate(actual, max))
    on_time = _core_greens(scheduled, tmp / "on-time.csv")
    replayed = _core_greens(actual, tmp / "actual.csv")
    late = (
        f"{src['late_sends']} late sends, worst {src['slip_max_s'] * 1e3:.1f} ms, "
        f"{on_time - replayed} green lost to them"
    )
    return on_time, replayed, late


def test_token_bucket_replay_counts_the_tokens_a_stall_loses(tmp_path: Path) -> None:
    """The replay above: 750 packets of 1000 bytes at 2 Mbit/s (the last at 2.996 s) into a
    1 Mbit/s bucket of 5 packets mark floor(5 + 374.5) = 379 green; a 100 ms stall with a
    catch-up burst overflows the bucket for 100 - 40 ms, 7.5 packets' worth of tokens."""
    gap = 0.004
    sched = [i * gap for i in range(750)]
    assert _core_greens(sched, tmp_path / "a.csv") == 379
    stalled = [max(t, 1.0) if 0.9 <= t < 1.0 else t for t in sched]
    assert _core_greens(sched, tmp_path / "a.csv") - _core_greens(stalled, tmp_path / "b.csv") in (7, 8)


@needs_emulation
def test_compare_prints_simulated_and_emulated_side_by_side(
    clean: None, tmp_path: Path, judge: Judge
) -> None:
    """`qoslab emulate --compare` on the CBR marker scenario: a CBR flow is deterministic, so
    the simulated and emulated marks per colour agree to a packet or two, once the tokens the
    emulated source's late sends cost are counted.

    A source descheduled by a busy host (a CI run beside other tests) sends late and catches
    up in a burst; the bucket overflows meanwhile. Once (CI, 2026-11-25) that cost 9 green
    packets (380 simulated, 371 emulated) with the daemon on time (max release lateness
    1.4 ms). The source records its late sends; replaying them through the token bucket gives
    the green count the daemon should have made from the arrivals it actually got."""

    def compare() -> tuple[str, Path]:
        out = Path(tempfile.mkdtemp(dir=tmp_path))
        cmd = [QOSLAB, "emulate", str(SCEN / "cbr-marker.toml"), "--duration", "3", "--compare"]
        r = subprocess.run([*cmd, "--out", str(out)], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        return r.stdout, out

    def late(ro: tuple[str, Path]) -> list[dict[str, Any]]:
        return [d["lateness"] for d in json.loads((ro[1] / "daemons.json").read_text())]

    stdout, tmp_path = judge.quiet("compare", compare, late, MARKER_BOUND)
    rows = {}
    for ln in stdout.splitlines():
        cells = [c.strip() for c in ln.strip("│┃ ").split("│")]
        if len(cells) == 3:
            rows[cells[0]] = cells[1:]
    print(stdout)
    sim_g, emu_g = (int(x) for x in rows["marked green (packets)"])
    sim_y, emu_y = (int(x) for x in rows["marked yellow (packets)"])
    assert abs(sim_g - (5 + 375)) <= 1  # CBS 5 packets + 1 Mbit/s for 3 s
    src = json.loads((tmp_path / "sources.json").read_text())["u"]
    n = int(round(pd.read_csv(tmp_path / "flows.csv").loc[0, "sent_bytes"] / 1000))
    on_time, replayed, late = _replayed_greens(src, n, tmp_path)
    lost = on_time - replayed
    # the simulation is the replay of the on-time sends (it sends one more, at 3.000 s) and the
    # daemon marked as the core's meter does on the arrivals it actually got
    assert abs(sim_g - on_time) <= 1, late
    assert abs(emu_g - replayed) <= 2, late
    assert abs(sim_y + lost - emu_y) <= 3, late
    assert rows["Jain index"] == ["1.000", "1.000"]
    assert json.loads((tmp_path / "summary.json").read_text())["mode"] == "emulation"


@needs_emulation
def test_cleanup_leaves_live_runs_alone_unless_forced(clean: None) -> None:
    """`emulate --cleanup` (another user's, another terminal's) never tears down a run whose
    process is alive; `--cleanup --force` does."""
    cmd = [QOSLAB, "emulate", str(SCEN / "cbr-marker.toml"), "--duration", "20"]
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        prefix = _wait_for_run(p, _ours())
        c = subprocess.run([QOSLAB, "emulate", "--cleanup"], capture_output=True, text=True, timeout=60)
        assert c.returncode == 0 and prefix not in c.stdout, c.stdout
        assert [n for n in emu.list_namespaces() if n.startswith(prefix)] and p.poll() is None
        c = subprocess.run(
            [QOSLAB, "emulate", "--cleanup", "--force"], capture_output=True, text=True, timeout=60
        )
        assert c.returncode == 0 and prefix in c.stdout, c.stdout
        assert p.wait(timeout=30) != 0
        _assert_nothing_left(prefix)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def _mean_wait_s(links: pd.DataFrame) -> float:
    b = links[(links["link_name"] == "bottleneck") & (links["direction"] == "ab")].iloc[0]
    return float(b["window_wait_ns"]) / float(b["window_admitted"]) / 1e9


_BBR_GAP = (
    "finding (2026-11-23, traced with ss -tin and nstat in the sender namespaces): with SACK "
    "(which this case turns on: without it Linux degenerates here, its reordering estimate going "
    "to 300 after the first timeout so that every loss waits for one, and its emulated shares "
    "swing 0.66-0.81 between runs) Linux's tcp_bbr gives 0.794/0.206, 27.3 ms, utilisation "
    "0.99, no timeouts, flow 1 held by its long-term (policer) bandwidth estimate about half "
    "the time. The simulated BBR v1 gives 0.595/0.405 and 28.5 ms (the delay agrees), with "
    "about 17 timeouts per flow and utilisation 0.49: its senders cannot recover a lost "
    "retransmission without a timeout (Linux: RACK, RFC 8985), it holds its window through "
    "recovery, and it has no policer detection"
)


@pytest.mark.alone
@needs_emulation
@pytest.mark.parametrize(
    "variant, flavour",
    [
        ("cubic", "ns2"),
        # the linux flavour's BBR (docs/models/tcp-linux.md) against tcp_bbr: 0.787/0.213 over
        # simulated seeds 1-5, utilisation 0.985 (2026-11-26)
        ("bbr", "linux"),
        # the ns2 flavour's BBR gap is a pinned finding: run by `make reproduce` (slow)
        pytest.param("bbr", "ns2", marks=[pytest.mark.slow, pytest.mark.xfail(strict=True, reason=_BBR_GAP)]),
    ],
)
def test_modern_tcp_simulated_vs_kernel(clean: None, variant: str, flavour: str, judge: Judge) -> None:
    """Issue 22: the simulator's CUBIC and BBR against Linux's own (``tcp_cubic``, ``tcp_bbr``)
    over the link daemon's RIO: the same two contracted flows as above. The shares must order
    alike and differ by at most 0.06 of the bottleneck; the bottleneck's mean queueing delay
    (its occupancy) within a factor of 2: the kernel's HyStart, pacing and segmentation
    offload differ in the details, and the daemon counts waiting times over the whole run
    (start-up included), the simulation over its measurement window.

    Both sides run SACK, as Linux runs TCP by default. Without it Linux's recovery degenerates
    on this path: duplicate ACKs for segments a timeout resent are read as reordering, the
    reordering estimate climbs (24-62 in four of seven runs, 2026-11-26), a fast retransmit
    then needs that many duplicates, and losses wait for timeouts. Two fresh-clone
    `make test` runs left the 1 Mbit/s flow almost silent for a whole run (0.983 / 0.017 and
    0.976 / 0.024, against 0.70-0.75 otherwise); their counters were not recorded, and this
    spiral is the one way we found for a flow to starve here. With SACK the same flows kept
    the estimate at 3 with no timeout in twelve runs. The simulator's senders have no such
    heuristic, so without SACK the test compared Linux's non-SACK failure mode, not CUBIC.

    The share bound is not Reno's 15 % of each share (0.044 here, on the 1 Mbit/s flow's
    0.297): Linux's CUBIC gives the 6 Mbit/s contract a little more than the simulated one, a
    gap that is systematic (with SACK, twelve quiet runs: 0.740 +- 0.016 against 0.703 over
    simulated seeds 1-5 and 0.708 +- 0.009 over 20; without SACK 0.733 +- 0.013 over 8 runs
    against 0.704 +- 0.011; docs/emulation.md). The machine's load moves it further (0.775
    without SACK in a fresh-clone `make test`, 0.59-0.76 beside compilers): the test runs
    alone."""
    # SACK on both sides, as Linux runs TCP: without it the kernel's own recovery breaks down on
    # this path (above, and _BBR_GAP), which would test Linux's non-SACK failure mode.
    sc = load_scenario(SCEN / "rio-2contracts.toml")
    sc = sc.with_overrides([f"tcp.variant={variant}", "tcp.sack=true"])
    sims = [simulate(sc.with_overrides([f'tcp.flavour="{flavour}"']), s) for s in range(1, 6)]
    thr = [r.flows["throughput_bps"].to_numpy() for r in sims]
    share_sim = np.mean([t / t.sum() for t in thr], axis=0)
    wait_sim = float(np.mean([_mean_wait_s(r.links) for r in sims]))
    emus = [judge.quiet(f"seed {s}", lambda s=s: emu.run(sc, s), _late, RIO_BOUND) for s in (1, 2, 3)]
    shares = [e.flows["throughput_bps"].to_numpy() / e.flows["throughput_bps"].sum() for e in emus]
    share_emu = np.mean(shares, axis=0)
    wait_emu = float(np.mean([_mean_wait_s(e.links) for e in emus]))
    seen = (
        f"{variant} ({flavour} flavour): shares simulated {share_sim.round(3)}, "
        f"emulated {share_emu.round(3)}; "
        f"mean queueing delay simulated {wait_sim * 1e3:.1f} ms, emulated {wait_emu * 1e3:.1f} ms "
        f"({_runs_seen(shares, emus)})"
    )
    print(seen)
    assert (np.argsort(share_sim) == np.argsort(share_emu)).all(), seen
    assert (np.abs(share_emu - share_sim) <= 0.06).all(), seen
    assert 0.5 <= wait_emu / wait_sim <= 2.0, seen
