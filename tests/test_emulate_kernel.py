"""Emulation tests that run alone (``alone``: no other test runs meanwhile): the daemon's
calibration against the kernel's htb, and today's TCP senders against Linux's own."""

from __future__ import annotations

import numpy as np
import pytest

from emu_common import SCEN, _mean_wait_s, _runs_seen, needs_emulation
from emu_judge import RIO_BOUND, Bound, Judge
from emu_judge import daemon_lateness as _late
from qoslab import emulation as emu
from qoslab.runs.simulate import run as simulate
from qoslab.scenario import load_scenario


@pytest.mark.alone
@needs_emulation
def test_calibration_daemon_droptail_vs_kernel_htb_pfifo(clean: None, judge: Judge) -> None:
    """One 10 Mbit/s DropTail bottleneck of 50 packets: the daemon's serialisation against the
    kernel's htb + pfifo at the same rate and limit (same propagation delay, added by the
    daemon in both runs). htb meters the 14-byte Ethernet header too; its size table takes it
    off (emulation/network.py), so both carry IP bytes at 10 Mbit/s: 8 runs differed by at most 0.4 %
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
        # the ns2 flavour's CUBIC against tcp_cubic (0.703 against the kernel's 0.740 +- 0.016 on
        # the 6 Mbit/s contract): 135 s of real time that the suite spent alone, while no other
        # test could run; run by `make reproduce` (slow). Its short version in the suite is
        # test_validate_linux's CUBIC alone against the kernel, and the committed grid
        # (docs/validation/linux.md) that test_validate_linux pins.
        pytest.param("cubic", "ns2", marks=pytest.mark.slow),
        # the linux flavour's BBR (docs/models/tcp-linux.md) against tcp_bbr: 0.795/0.205 over
        # simulated seeds 1-5 since it sends two-segment skbs (0.787/0.213 before, 2026-11-26)
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
    # Kernel runs: three for CUBIC (its runs spread, 0.740 +- 0.016, against a 0.037 gap), one
    # for BBR (0.801, 0.795, 0.783 in three runs, 2026-11-26: each within 0.012 of the
    # simulated 0.795, against the 0.06 bound), which spends 45 s less of the suite's time
    # alone for each run left out.
    kernel_seeds = (1, 2, 3) if variant == "cubic" else (1,)
    emus = [judge.quiet(f"seed {s}", lambda s=s: emu.run(sc, s), _late, RIO_BOUND) for s in kernel_seeds]
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
