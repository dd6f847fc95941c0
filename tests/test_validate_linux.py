"""The kernel-validation grid (docs/validation/linux.md, qoslab.emulation.validation): its points as
issue 54 asks, the verdict rule, the committed kernel results, the simulated side regenerated
from them without root, and (as root, with the emulation tools) one point run against the
kernel here."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from qoslab import emulation as emu
from qoslab.emulation import validation as vl
from qoslab.emulation import validation_report as vr
from qoslab.scenario import Scenario

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = ROOT / "docs" / "validation" / "linux" / "kernel.json"
#: The linux flavour's committed simulated side of that grid, with the testbed's timing.
RESULTS_LINUX = ROOT / "docs" / "validation" / "linux" / "results-linux.json"
#: Five BBR flows of mixed RTTs, BBR's long-term mode read from `ss -tin` (tools/bbr_lt_mode.py).
LT_FILES = {
    side: ROOT / "docs" / "validation" / "linux" / f"bbr5-lt-{side}.json" for side in ("kernel", "model")
}


def test_the_grid_is_the_issues() -> None:
    by = {p.name: p for p in vl.GRID}
    bc = [p for p in vl.GRID if p.family == "bbr-cubic"]
    assert [p.buffer_bdp for p in bc] == [0.5, 1.0, 2.0, 4.0]
    assert all(p.rtts_ms == (40.0, 40.0) and p.variants == ("bbr", "cubic") for p in bc)
    assert [p.buffer_bdp for p in vl.GRID if p.family == "cubic-reno"] == [1.0, 2.4]
    five = by["cubic5-1bdp"]
    assert five.rtts_ms == (20.0, 40.0, 60.0, 80.0, 100.0) and five.rate_mbps == 20.0
    # 20 Mbit/s x 60 ms (mean RTT) / 1500 B = 100 packets
    assert five.limit_pkts == 100
    for v in ("cubic", "bbr"):
        assert [p.buffer_bdp for p in vl.GRID if p.family == f"{v}-alone"] == [1.0, 2.4, 4.0]
    # 10 Mbit/s x 40 ms / 1500 B = 33.3 packets
    assert by["bbr-cubic-0.5bdp"].limit_pkts == 17 and by["bbr-cubic-4bdp"].limit_pkts == 133
    # and beyond the issue's: BBR among mixed RTTs as the five CUBIC flows, and five BBR flows
    # through ns-3's dumbbell-5-bbr bottleneck (10 Mbit/s, 30 ms, 100 packets)
    bbr5 = by["bbr5-1bdp"]
    assert (bbr5.rtts_ms, bbr5.rate_mbps, bbr5.limit_pkts) == (five.rtts_ms, 20.0, 100)
    assert bbr5.variants == ("bbr",) * 5
    one_rtt = by["bbr5-30ms-4bdp"]
    assert one_rtt.rtts_ms == (30.0,) * 5 and one_rtt.rate_mbps == 10.0 and one_rtt.limit_pkts == 100
    mixed = by["bbr3-reno3-30ms-4bdp"]
    assert mixed.variants == ("bbr",) * 3 + ("reno",) * 3 and mixed.rtts_ms == (30.0,) * 6
    assert mixed.rate_mbps == 10.0 and mixed.limit_pkts == 100
    for name in ("dumbbell-5-bbr", "dumbbell-6-bbr-reno"):
        ns3 = (ROOT / "scenarios" / "ns3" / f"{name}.toml").read_text()
        assert 'bandwidth = "10Mbps"' in ns3 and 'limit = "100pkts"' in ns3
    # at least three kernel runs a point (the issue's), ten runs and ten seeds where flows split
    # the link
    assert all(p.reps >= 3 for p in vl.GRID)
    assert all((p.reps >= 10 and p.seeds >= 10) == (len(p.variants) > 1) for p in vl.GRID)


def test_the_held_out_grid_shares_no_point_with_the_tuned_one() -> None:
    # issue 78's held-out grid: at least ten points of ten kernel runs and ten seeds, none of
    # them a point of the committed grid (same flows, RTTs, rate, buffer and starts; BBR then
    # CUBIC differs from bbr-cubic-1bdp by CUBIC's start 6 s later), covering what the
    # committed grid does not: different RTTs beside BBR, three or more controls, a large BDP, a
    # quarter-BDP buffer, staggered starts and Reno alone
    def key(p: vl.Point) -> tuple[object, ...]:
        return (p.variants, p.rtts_ms, p.rate_mbps, p.buffer_bdp, p.starts_s)

    held = vl.HELD_OUT
    assert len(held) >= 10 and all(p.reps >= 10 and p.seeds >= 10 for p in held)
    assert not {key(p) for p in held} & {key(p) for p in vl.GRID}
    assert not {p.name for p in held} & {p.name for p in vl.GRID}
    assert any("bbr" in p.variants and len(set(p.rtts_ms)) > 1 for p in held)
    assert any(len(set(p.variants)) == 3 for p in held)
    assert any(p.rate_mbps >= 20 and min(p.rtts_ms) >= 100 for p in held)
    assert any(p.buffer_bdp == 0.25 for p in held)
    assert any(p.variants == ("reno",) for p in held)
    staggered = {p.name: p for p in held}["cubic3-staggered-1bdp"]
    flows = vl.scenario(staggered).resolved["flows"]
    assert [(f["start_ns"], f["start_max_ns"]) for f in flows] == [
        (t * 10**9, t * 10**9 + 5 * 10**8) for t in (0, 4, 8)
    ]
    assert vl.GRIDS["heldout"] == (held, "docs/validation/linux-heldout")


def test_the_aqm_grid_runs_each_aqm_with_and_without_ecn_through_the_link_daemon() -> None:
    # five CUBIC flows of RTTs 20-100 ms (the committed grid's cubic5 point) through RED, CoDel,
    # PIE and FQ-CoDel, each with ECN off and on, ten kernel runs and ten seeds a point; the
    # emulation accepts every one (the daemon runs the packet-holding AQMs too)
    assert [(vl.queue_kind(p.queue), p.ecn) for p in vl.AQM_GRID] == [
        (q, e) for q in ("red", "codel", "pie", "fq_codel") for e in (False, True)
    ]
    for p in vl.AQM_GRID:
        assert p.variants == ("cubic",) * 5 and p.rtts_ms == vl.MIXED_RTTS_MS and p.rate_mbps == 20.0
        assert p.reps >= 10 and p.seeds >= 10
        r = vl.scenario(p).resolved
        q = {lk["name"]: lk for lk in r["links"]}["bottleneck"]["queue_ab"]
        assert q["type"] == vl.queue_kind(p.queue) and bool(q["ecn"]) is p.ecn
        assert q["limit_pkts"] == (100 if q["type"] == "red" else 1000)
        assert all(bool(f["tcp"]["ecn"]) is p.ecn for f in r["flows"])
        emu.check_supported(vl.scenario(p))


def test_a_points_scenario_has_the_rtts_and_buffer_it_names() -> None:
    p = {q.name: q for q in vl.GRID}["cubic5-1bdp"]
    r = vl.scenario(p).resolved
    links = {lk["name"]: lk for lk in r["links"]}
    b = links["bottleneck"]
    assert b["queue_ab"]["limit_pkts"] == 100 and b["bandwidth_bps"] == 20e6
    for i, rtt in enumerate(p.rtts_ms):
        one_way = links[f"access{i}"]["delay_ns"] + b["delay_ns"]
        assert 2 * one_way == pytest.approx(rtt * 1e6)
    assert [f["tcp"]["variant"] for f in r["flows"]] == ["cubic"] * 5
    assert all(f["tcp"]["sack"] for f in r["flows"])
    mixed = vl.scenario({q.name: q for q in vl.GRID}["bbr-cubic-1bdp"])
    assert emu.flow_ccs(mixed) == ["bbr", "cubic"]
    with pytest.raises(emu.EmulationError, match="one congestion control"):
        emu.scenario_cc(mixed)  # one cc for all is still the default's demand
    assert emu.scenario_cc(mixed, mixed=True) == "bbr"
    with pytest.raises(ValueError, match="flavour"):
        vl.sim_overrides("ns3")


def test_the_verdict_rule() -> None:
    # within the tolerance, or within two kernel standard deviations when those are wider
    assert vr.holds(0.55, 0.5, 0.0, 0.05) and not vr.holds(0.56, 0.5, 0.0, 0.05)
    assert vr.holds(0.59, 0.5, 0.05, 0.05) and not vr.holds(0.61, 0.5, 0.05, 0.05)


def test_the_rule_on_the_means() -> None:
    # |difference of the means| within the tolerance or two standard errors of the difference:
    # 0.70 +- 0.05 over ten runs against 0.75 +- 0.05 over ten seeds: se of the difference
    # 0.05 * sqrt(2/10) = 0.0224, so 0.05 lies beyond two of them (0.0447) and the 0.03 tolerance
    assert not vr.holds_sem((0.75, 0.05), 10, (0.70, 0.05), 10, 0.03)
    # ... and the same runs' spread lets the single-run rule hold (within 2 sd = 0.10)
    assert vr.holds(0.75, 0.70, 0.05, 0.03)
    # three runs and three seeds: se 0.0408, two of them 0.0816 > 0.05
    assert vr.holds_sem((0.75, 0.05), 3, (0.70, 0.05), 3, 0.03)
    assert vr.holds_sem((0.72, 0.0), 10, (0.70, 0.0), 10, 0.03)


def _fake_kernel(p: vl.Point, shares: list[float]) -> dict[str, object]:
    runs = []
    for i, s in enumerate(shares):
        flows = [
            {"name": "a", "share": s, "retransmits": 100.0 + i, "timeouts": 0.0},
            {"name": "b", "share": 1 - s, "retransmits": 100.0, "timeouts": 0.0},
        ]
        runs.append(
            {
                "kept": True,
                "stalled": False,
                "lateness": {"max_us": 1000.0, "p99_us": 200.0, "mean_us": 60.0},
                "flows": flows,
                "jain": 0.9,
                "utilization": 1.0,
                "qdelay_ms": 20.0,
                "bottleneck_drops": 50.0,
            }
        )
    return {"point": vars(p), "runs": runs}


def test_compare_judges_each_target() -> None:
    p = {q.name: q for q in vl.GRID}["bbr-cubic-1bdp"]
    k = _fake_kernel(p, [0.70, 0.72, 0.74])
    sim = _fake_kernel(p, [0.60, 0.60, 0.60])
    c = vr.compare(k, sim)  # type: ignore[arg-type]
    # kernel 0.72 +- 0.02: 0.60 is beyond 10 % (0.072) and beyond 2 sd (0.04)
    assert c["verdict"]["share"] is False
    assert c["verdict"]["jain"] is True and c["verdict"]["qdelay"] is True
    assert c["verdict"]["retransmits"] is True
    c2 = vr.compare(k, _fake_kernel(p, [0.70, 0.70, 0.70]))  # type: ignore[arg-type]
    assert c2["verdict"]["share"] is True
    few = {"point": k["point"], "runs": k["runs"][:2]}  # type: ignore[index]
    assert vr.compare(few, sim)["verdict"]["share"] is None  # type: ignore[arg-type]


def test_committed_kernel_results_cover_the_grid_with_their_settings() -> None:
    """The committed kernel side: every grid point with its kept runs (three, or ten), and the
    host's settings as the kernel reported them (offloads off, SACK on, no timestamps)."""
    data = json.loads(COMMITTED.read_text())
    assert "tcp_dctcp" in data["dctcp"]
    for p in vl.GRID:
        kp = data["points"][p.name]
        kept = [r for r in kp["runs"] if r["kept"]]
        assert len(kept) >= p.reps, p.name
        for r in kept:
            assert math.isclose(sum(f["share"] for f in r["flows"]), 1.0, rel_tol=1e-9)
            assert [f["variant"] for f in r["flows"]] == list(p.variants)
        hs = kp["host_settings"]
        assert hs["kernel"] and set(hs["offloads"].values()) == {"off"}, hs["offloads"]
        assert hs["sysctl"]["net.ipv4.tcp_sack"] == "1" and hs["sysctl"]["net.ipv4.tcp_timestamps"] == "0"
        assert hs["sysctl"]["net.ipv4.tcp_congestion_control"] == p.variants[0]


def test_cubic_alone_leaves_slow_start_where_the_kernel_does() -> None:
    """A lone CUBIC flow leaves slow start where the kernel's does (docs/validation/linux.md,
    'One flow alone'): in every committed kernel run of the three CUBIC-alone points HyStart
    left by its ACK-train test at a window of 98-99 (the namespace's TcpExt counters), never by
    its delay test; the linux flavour leaves at 96 and at 1 BDP retransmits 43 segments against
    the kernel's 45-47. It leaves by the ACK train as the kernel's does (with HyStart's delay
    test off it leaves at the same window), because its receiver ACKs every segment while its
    window grows (traffic/linux/rcv_space.rs); when the receiver ACKed every second segment after
    its first 16 the train broke on gaps just over hystart_ack_delta's 2 ms and the delay test
    ended slow start at 96 (docs/validation/linux-heldout.md, "Why two points split before the
    receiver's window growth"); with the train alone it then left at a loss, not at 96. Before
    HyStart's rounds were tracked from the first ACK (as the kernel has since "tcp_cubic: fix
    incorrect HyStart round start detection"), the model left at 80 by its delay test and
    retransmitted 28."""
    data = json.loads(COMMITTED.read_text())
    for name in ("cubic-alone-1bdp", "cubic-alone-2.4bdp", "cubic-alone-4bdp"):
        for r in data["points"][name]["runs"]:
            h = r["flows"][0]["hystart"]
            assert (h["train"], h["delay"]) == (1, 0) and 98 <= h["train_cwnd"] <= 99, (name, h)
    p = {q.name: q for q in vl.GRID}["cubic-alone-1bdp"]
    sc = vl.scenario(p, "linux").with_overrides([*vl.sim_overrides("linux"), 'measurement.interval="10ms"'])
    r = vl.simulate(sc, 1)
    series = r.series_flow
    exit_ = series[series["ssthresh"] < 10000].iloc[0]
    assert exit_["ssthresh"] == exit_["cwnd"] and 94 <= exit_["cwnd"] <= 99, exit_  # HyStart
    train = vl.simulate(sc.with_overrides(["tcp.cc.cubic.hystart_detect=1"]), 1).series_flow
    exit_train = train[train["ssthresh"] < 10000].iloc[0]
    assert exit_train["ssthresh"] == exit_train["cwnd"] == exit_["cwnd"], exit_train  # the train
    c = vr.compare(data["points"][p.name], vl.run_sim_point(p, p.seeds, "linux"))
    assert c["verdict"]["retransmits"] and c["verdict"]["qdelay"], c["verdict"]


def _departures(pcap: Path) -> np.ndarray[Any, Any]:
    """The times (s) of a pcap's records (the core writes nanosecond-resolution pcap)."""
    import struct

    data = pcap.read_bytes()
    assert struct.unpack_from("<I", data)[0] == 0xA1B23C4D
    times, off = [], 24
    while off + 16 <= len(data):
        sec, nsec, incl, _ = struct.unpack_from("<IIII", data, off)
        times.append(sec + nsec * 1e-9)
        off += 16 + incl
    return np.array(times)


def test_the_linux_flavours_bbr_sends_two_segment_skbs(tmp_path: Path) -> None:
    """BBR paces GSO skbs, as the kernel does with TSO and GSO off on the device (since 4.13 TCP
    always builds GSO skbs; `tcp_tso_autosize` with `bbr_min_tso_segs`: about 1 ms of data at the
    pacing rate, at least two segments): at 10 Mbit/s a lone BBR flow's segments leave its host in
    pairs, back to back on the 100 Mbit/s access link (120 µs apart), each pair one pacing gap for
    two segments after the last. The model paced segment by segment until 2026-11-27 (evening);
    a lone BBR queue was 11-22 % short of the kernel's, and with the testbed's timing noise CUBIC
    kept 30 % less than the kernel's beside BBR in shallow buffers."""
    p = {q.name: q for q in vl.GRID}["bbr-alone-1bdp"]
    sc = vl.scenario(p, "linux").with_overrides(vl.sim_overrides("linux", jitter_us=0))
    pcap = tmp_path / "access.pcap"
    vl.simulate(sc, 1, captures=[("access0", "ab", str(pcap))])
    t = _departures(pcap)
    gaps = np.diff(t[t > 10.0]) * 1e6
    back_to_back = np.abs(gaps - 120.0) < 1.0
    # pairs: half the gaps at most, give or take a rare three (one gap in 16,287 for seed 1)
    assert 0.45 < back_to_back.mean() <= 0.501, back_to_back.mean()
    # between pairs: the pacing gap of two segments at about the link's rate (2.4 ms less the
    # pair's 0.12, give or take BBR's gain cycle)
    assert 1.5e3 < float(np.median(gaps[~back_to_back])) < 3e3, np.median(gaps[~back_to_back])


CAPTURE = ROOT / "docs" / "validation" / "linux" / "capture-cubic-alone-1bdp.json"


def _hystart_exit(acks: list[dict[str, Any]], *, rounds_from_first_ack: bool) -> tuple[str, int]:
    """tcp_cubic.c's HyStart (ACK train and delay tests, an unpaced sender's halved train
    threshold with `hystart_ack_delay`'s 1 ms cap) replayed over a capture's ACKs: the test that
    ends slow start and the window then. ``rounds_from_first_ack``: rounds are tracked from the
    first ACK and only the tests wait for a window of 16 (the kernel since "tcp_cubic: fix
    incorrect HyStart round start detection"), or the whole update waits (before it)."""
    prev, end, dmin, start, last, curr, cnt = 0, None, float("inf"), 0.0, 0.0, float("inf"), 0
    for a in acks:
        cwnd, prev, t, rtt = 10 + prev, a["acked"], a["t_ms"], a["rtt_ms"]
        if rtt is None:
            continue
        dmin = min(dmin, rtt)
        if cwnd < 16 and not rounds_from_first_ack:
            continue
        if end is None or a["acked"] > end:
            end, start, last, curr, cnt = a["snd_nxt"], t, t, float("inf"), 0
        if cwnd < 16:
            continue
        if t - last <= 2.0:
            last = t
            if t - start > (dmin + 1.0) / 2:
                return "train", cwnd
        curr = min(curr, rtt)
        if cnt < 8:
            cnt += 1
        elif curr > dmin + min(max(dmin / 8, 4.0), 16.0):
            return "delay", cwnd
    raise AssertionError("slow start never ended")


def test_hystart_replayed_over_the_kernels_acks_leaves_where_the_kernel_did() -> None:
    """The committed capture of a kernel run's start (tools/kernel_capture.py): HyStart with
    rounds tracked from the first ACK, as the model now has it, leaves slow start by the ACK
    train at the window the kernel's own counter recorded (98); with rounds begun at the window
    of 16, as the model had it before, the delay test fires at 72 (docs/validation/linux.md,
    'One flow alone')."""
    cap = json.loads(CAPTURE.read_text())
    assert cap["point"] == "cubic-alone-1bdp" and cap["mss"] == 1460
    kernel = int(cap["flow"]["kernel_hystart_train_cwnd"])
    assert _hystart_exit(cap["acks"], rounds_from_first_ack=True) == ("train", kernel)
    test, cwnd = _hystart_exit(cap["acks"], rounds_from_first_ack=False)
    assert test == "delay" and cwnd < kernel - 20, (test, cwnd)


def test_sim_only_regenerates_the_simulated_side_from_kernel_results(tmp_path: Path) -> None:
    """`--sim-only --kernel-results FILE`: no root, no emulation; writes the JSON, table and
    figure of the chosen flavour. A single CUBIC flow fills a 10 Mbit/s link."""
    data = json.loads(COMMITTED.read_text())
    one = {"points": {"cubic-alone-1bdp": data["points"]["cubic-alone-1bdp"]}, "dctcp": data["dctcp"]}
    kfile = tmp_path / "k.json"
    kfile.write_text(json.dumps(one))
    rc = vl.main(
        [
            "--sim-only",
            "--kernel-results",
            str(kfile),
            "--out",
            str(tmp_path),
            "--points",
            "cubic-alone-1bdp",
            "--seeds",
            "1",
        ]
    )
    assert rc == 0
    res = json.loads((tmp_path / "results-ns2.json").read_text())
    assert res["fingerprint"] == {"core": vl.running_core()}
    (pt,) = res["points"]
    assert pt["sim"]["utilization"][0] > 0.9
    assert (tmp_path / "cubic-alone-ns2.png").stat().st_size > 10_000
    assert "cubic-alone-1bdp" in (tmp_path / "table-ns2.txt").read_text()
    assert (
        vl.main(["--sim-only", "--kernel-results", str(tmp_path / "none.json"), "--out", str(tmp_path)]) == 2
    )


@pytest.mark.parametrize("point", ["bbr-cubic-0.5bdp", "bbr-cubic-1bdp", "bbr-cubic-2bdp", "bbr-cubic-4bdp"])
def test_the_linux_flavours_bbr_beside_cubic_against_the_committed_kernel_runs(point: str) -> None:
    """Issue 54's first target, no root: the linux flavour's BBR beside CUBIC (seeds 1-10)
    against the committed kernel runs holds share, Jain, queueing delay and retransmissions at
    every buffer, with the testbed's timing noise (the page's main table) and with exact
    timing. Before BBR sent two-segment skbs (2026-11-27, evening) the noise had left its CUBIC
    30 % short of the kernel's at 0.5 and 1 BDP (3.5 timeouts a run at 0.5 BDP against 0.9); it
    now times out no more than the kernel's. The ns2 flavour's BBR fails the share at each (it
    collapses to 0.12-0.18). The simulated side is computed here, so a change to the linux
    flavour that moves it fails."""
    data = json.loads(COMMITTED.read_text())
    p = {q.name: q for q in vl.GRID}[point]
    kernel = data["points"][point]
    for jitter in (vl.TESTBED_JITTER_US, 0):
        c = vr.compare(kernel, vl.run_sim_point(p, p.seeds, "linux", jitter_us=jitter))
        assert all(c["verdict"].values()), (jitter, c["verdict"])
        assert c["sim"]["timeouts"][0] <= max(1.0, 1.5 * c["kernel"]["timeouts"][0]), (
            jitter,
            c["sim"]["timeouts"],
        )
    ns2 = vr.compare(kernel, vl.run_sim_point(p, 2, "ns2"))
    assert ns2["verdict"]["share"] is False


def test_five_cubic_flows_split_by_their_phases_under_exact_timing_and_by_rtt_under_the_testbeds() -> None:
    """cubic5-1bdp (docs/validation/linux.md, 'Phase effects'). With exact timing the linux
    flavour's five CUBIC flows (seeds 1-10) hold Jain, the queueing delay and the retransmissions
    against ten kernel runs, not the split: the flows' RTTs (20-100 ms) lie 200 µs apart modulo
    the bottleneck's 600 µs packet time, and the split follows that phase (the 40 ms flow ahead of
    the 20 ms one, the 100 ms flow level with it); moving the 40 ms flow's access delay by 100 µs
    moves its share by 0.04 (a fifth of a fair share). With the testbed's timing noise Jain, the
    queueing delay and the retransmissions hold and the 20 ms flow gets the most, as in nine
    kernel runs of ten; the split misses on the grid's ten seeds at the edge of its rule (the 80
    ms flow 0.181 against 0.149 ± 0.016: 0.0318 off where 0.0316 holds) and holds on 30 seeds."""
    data = json.loads(COMMITTED.read_text())
    p = {q.name: q for q in vl.GRID}["cubic5-1bdp"]
    kernel = data["points"][p.name]
    runs = [[f["share"] for f in r["flows"]] for r in kernel["runs"] if r["kept"]]
    assert sum(s[0] >= max(s) - 0.01 for s in runs) >= 9, runs  # ahead, or level within 0.01
    exact = vr.compare(kernel, vl.run_sim_point(p, p.seeds, "linux", jitter_us=0))
    assert exact["verdict"] == {"share": False, "jain": True, "qdelay": True, "retransmits": True}
    sim = [m for m, _ in exact["sim"]["share"]]
    assert sim[1] > sim[0] and sim[4] > sim[2], sim

    def share_40ms(access_40ms: str) -> np.ndarray[Any, Any]:
        text = vl.scenario(p, "linux").text.replace('"11ms"', f'"{access_40ms}"')
        sc = Scenario(text, "<phase>").with_overrides(vl.sim_overrides("linux", jitter_us=0))
        th = np.array([vl.simulate(sc, seed).flows["throughput_bps"].to_numpy() for seed in range(1, 11)])
        return np.asarray(th[:, 1] / th.sum(axis=1))

    assert float(np.mean(share_40ms("11ms") - share_40ms("11100us"))) > 0.03
    noisy = vr.compare(kernel, vl.run_sim_point(p, p.seeds, "linux"))
    assert noisy["verdict"] == {"share": False, "jain": True, "qdelay": True, "retransmits": True}
    sim = [m for m, _ in noisy["sim"]["share"]]
    assert sim[0] == max(sim) and sim[0] > 0.25, sim
    # the miss is at the rule's edge: no flow further off than 1.02 times what the rule allows
    off = [
        abs(sm - km) / max(vr.SHARE_TOL * km, 2 * ksd)
        for (km, ksd), (sm, _) in zip(noisy["kernel"]["share"], noisy["sim"]["share"], strict=True)
    ]
    assert 1 < max(off) < 1.02, off
    thirty = vr.compare(kernel, vl.run_sim_point(p, 30, "linux"))
    assert all(thirty["verdict"].values()), thirty["verdict"]


@pytest.mark.parametrize("point", ["cubic-alone-1bdp", "cubic5-1bdp", "bbr-cubic-0.5bdp"])
def test_the_testbeds_jitter_is_measured_on_the_kernels_ack_clock(point: str) -> None:
    """``TESTBED_JITTER_US`` is measured, not fitted to a target: in each committed capture of a
    kernel run (7 s of the first sender's ACKs) successive ACKs are whole bottleneck packet
    times apart give or take a noise independent from ACK to ACK (lag-1 autocorrelation near
    -0.5) whose size a uniform jitter of ``TESTBED_JITTER_US`` on the three hops back from the
    bottleneck gives, within 5 %."""
    p = {q.name: q for q in vl.GRID}[point]
    cap = json.loads((ROOT / "docs" / "validation" / "linux" / f"ack-clock-{point}.json").read_text())
    assert cap["point"] == point and cap["seconds"] >= 5
    acks = [a for a in cap["acks"] if a["t_ms"] > 60]  # after the first flights (the link busy)
    sd, lag1, n = vl.ack_clock_noise(acks, vl.PACKET_BYTES * 8 / (p.rate_mbps * 1e3))
    assert n > 500 and -0.6 < lag1 < -0.4, (n, lag1)
    assert abs(vl.jitter_from_ack_noise(sd) / vl.TESTBED_JITTER_US - 1) < 0.05, sd
    assert vl.sim_overrides("linux") == ['tcp.flavour="linux"', 'timing.jitter="testbed"']


def test_five_bbr_flows_of_one_rtt_hold_every_target_against_the_kernel() -> None:
    """bbr5-30ms-4bdp (ns-3's dumbbell-5-bbr bottleneck: 10 Mbit/s, 30 ms, 100 packets): the
    linux flavour's five BBR flows (seeds 1-10) hold share, Jain, queueing delay and
    retransmissions against the committed kernel runs, whose standing queue is over 100 ms
    (ns-3's is 20 % shorter: tests/test_ns3.py); the ns2 flavour's BBR fails the queue."""
    data = json.loads(COMMITTED.read_text())
    p = {q.name: q for q in vl.GRID}["bbr5-30ms-4bdp"]
    kernel = data["points"][p.name]
    assert all(r["qdelay_ms"] > 100 for r in kernel["runs"] if r["kept"])
    linux = vr.compare(kernel, vl.run_sim_point(p, p.seeds, "linux"))
    assert all(linux["verdict"].values()), linux["verdict"]
    ns2 = vr.compare(kernel, vl.run_sim_point(p, 2, "ns2"))
    assert ns2["verdict"]["qdelay"] is False


def _reno_total(runs: list[dict[str, Any]]) -> float:
    """The three Reno flows' share of the link together (flows 3-5), mean over runs."""
    return float(np.mean([sum(f["share"] for f in r["flows"][3:]) for r in runs]))


def test_three_bbr_beside_three_reno_flows_hold_every_target_against_the_kernel() -> None:
    """bbr3-reno3-30ms-4bdp (ns-3's dumbbell-6-bbr-reno bottleneck: 10 Mbit/s, 30 ms, 100
    packets), added when the linux flavour's BBR began to send two-segment skbs and ns-3's
    split moved away from it (ns3.md): the kernel's three Reno flows keep 0.246 ± 0.041 of the
    link over ten runs and time out about once a run each; the linux flavour holds share, Jain,
    queueing delay and retransmissions with the testbed's timing noise and without it; the Reno
    flows' total is within one kernel sd of the kernel's with the noise (0.258) and within two
    with exact timing (0.303, a fifth more), the ns2 flavour's BBR fails the share (its Reno
    flows keep 0.65)."""
    data = json.loads(COMMITTED.read_text())
    p = {q.name: q for q in vl.GRID}["bbr3-reno3-30ms-4bdp"]
    kernel = data["points"][p.name]
    kept = [r for r in kernel["runs"] if r["kept"]]
    assert len(kept) == 10 and 0.2 < _reno_total(kept) < 0.3, _reno_total(kept)
    ksd = float(np.std([sum(f["share"] for f in r["flows"][3:]) for r in kept], ddof=1))
    for jitter, near in ((vl.TESTBED_JITTER_US, ksd), (0, 2 * ksd)):
        sim = vl.run_sim_point(p, p.seeds, "linux", jitter_us=jitter)
        c = vr.compare(kernel, sim)
        assert all(c["verdict"].values()), (jitter, c["verdict"])
        assert abs(_reno_total(sim["runs"]) - _reno_total(kept)) < near, _reno_total(sim["runs"])
    ns2 = vl.run_sim_point(p, 3, "ns2")
    assert vr.compare(kernel, ns2)["verdict"]["share"] is False and _reno_total(ns2["runs"]) > 0.5


def _bbr5_mixed_rtts(jitter_us: float = 0) -> tuple[dict[str, Any], dict[str, Any]]:
    """bbr5-1bdp's committed kernel runs and its simulated runs (seeds 1-10, linux flavour;
    exact timing unless ``jitter_us``)."""
    data = json.loads(COMMITTED.read_text())
    p = {q.name: q for q in vl.GRID}["bbr5-1bdp"]
    return data["points"][p.name], vl.run_sim_point(p, p.seeds, "linux", jitter_us)


def test_five_bbr_flows_of_mixed_rtts_hold_every_target_against_ten_kernel_runs() -> None:
    """bbr5-1bdp (RTTs 20-100 ms, 20 Mbit/s, 1 BDP): the kernel's own split is uneven and varies
    from run to run (Jain 0.51-0.91 over ten runs; its first three, 0.78-0.91, had understated
    that), and against it the linux flavour's BBR holds share, Jain, queueing delay and
    retransmissions (about one packet in nine or ten lost in the model, one in eight in the
    kernel), with the testbed's timing noise (Jain 0.813 against 0.735, Welch's p 0.13) and with
    exact timing (0.789, p 0.25; on the means the 100 ms flow's share misses, 0.239 against
    0.129); in both, Welch's test finds no difference in Jain at 10 %."""
    kernel, noisy = _bbr5_mixed_rtts(vl.TESTBED_JITTER_US)
    c = vr.compare(kernel, noisy)
    assert all(c["verdict"].values()) and c["jain_welch_p"] > 0.1, (c["verdict"], c["jain_welch_p"])
    exact = vr.compare(*_bbr5_mixed_rtts())
    assert all(exact["verdict"].values()) and exact["jain_welch_p"] > 0.1, exact["verdict"]
    assert exact["verdict_sem"]["share"] is False
    kj = [r["jain"] for r in kernel["runs"] if r["kept"]]
    assert len(kj) == 10 and sum(j < 0.7 for j in kj) >= 3 and max(kj) > 0.9, kj
    assert c["kernel"]["retransmits"][0] > 4000 and c["sim"]["retransmits"][0] > 4000


def test_over_200_seeds_five_bbr_flows_of_mixed_rtts_split_as_evenly_as_the_kernels() -> None:
    """What ten seeds cannot show (docs/validation/linux.md, 'Five BBR flows'): over seeds 1-200
    the linux flavour's split among the five BBR flows, with the testbed's timing noise, is as
    even as the kernel's (Jain 0.786 +- 0.094 against 0.735 +- 0.132 over the grid's ten runs,
    Welch's p 0.26; 0.734 over those and ten more, p 0.08); of the twenty ten-seed blocks
    (0.74-0.84) one fails Welch's test at 5 %. It starves as many flows (19 % of its flow-runs
    under a tenth of the link, the grid's ten kernel runs 22 %), but not the same ones: its 20
    ms flow starves in 14 % of the seeds, the kernel's in none of 20 runs. The receiver's
    advertised window as the sender's limit does this (CHANGELOG)."""
    from qoslab.stats import estimate, welch_p

    p = {q.name: q for q in vl.GRID}["bbr5-1bdp"]
    kept = [r for r in json.loads(COMMITTED.read_text())["points"][p.name]["runs"] if r["kept"]]
    kj = [r["jain"] for r in kept]
    many = vl.run_sim_point(p, 200, "linux", vl.TESTBED_JITTER_US, whole_run_queue=False)
    starving = [np.mean([f["share"] < 0.1 for r in rs for f in r["flows"]]) for rs in (kept, many["runs"])]
    assert abs(starving[0] - starving[1]) < 0.06, starving
    jain = np.array([r["jain"] for r in many["runs"]])
    assert 0.74 < jain.mean() < 0.83 and float(np.mean(kj)) < 0.75, (jain.mean(), np.mean(kj))
    assert welch_p(estimate(jain.tolist()), estimate(kj)) > 0.1
    # ten more kernel runs (tools/bbr_lt_mode.py's, its `ss` sampler beside them): Jain 0.732
    lt_kernel = json.loads(LT_FILES["kernel"].read_text())["summary"]
    more = [r["jain"] for r in lt_kernel["runs"]]
    # the shortest-RTT flow: never starving in the kernel's 20 runs, in a tenth to a fifth of the
    # model's 200
    k20 = [r["flows"][0]["share"] for r in kept] + [f["share"] for f in lt_kernel["flows"] if f["flow"] == 0]
    m20 = np.mean(np.array([r["flows"][0]["share"] for r in many["runs"]]) < 0.1)
    assert len(k20) == 20 and min(k20) > 0.1 and 0.1 < m20 < 0.2, (min(k20), m20)
    assert (
        len(more) == 10
        and 0.70 < float(np.mean(more))
        and welch_p(estimate(jain.tolist()), estimate(kj + more)) > 0.05
    )
    blocks = jain.reshape(20, 10).mean(axis=1)
    assert blocks.min() > 0.7 and blocks.max() < 0.87, blocks
    failing = sum(welch_p(estimate(b.tolist()), estimate(kj)) < 0.05 for b in jain.reshape(20, 10))
    assert failing <= 3, failing


def _loss(flow: dict[str, Any]) -> float:
    """A flow's share of its segments dropped at the bottleneck, reckoned alike on both sides:
    its drops over the run over those drops plus the segments its window throughput carries in
    the run's length."""
    carried = flow["throughput_bps"] * vl.DURATION_S / (8 * vl.PACKET_BYTES)
    return float(flow["dropped"] / (carried + flow["dropped"]))


#: `bbr_lt_loss_thresh`: above this loss over a sampling interval BBR takes the path for policed.
LT_LOSS_THRESH = 50 / 256


def _losses(runs: list[dict[str, Any]]) -> np.ndarray[Any, Any]:
    return np.array([[_loss(f) for f in r["flows"]] for r in runs])


def test_five_bbr_flows_of_mixed_rtts_lose_as_evenly_as_the_kernels() -> None:
    """What the targets do not judge (docs/validation/linux.md, 'Five BBR flows'): how the losses
    fall among the flows. The kernel's flows lose alike even where the split is uneven (3 of 50
    flow-runs above BBR's policer threshold, the most-losing flow of a run 1.54 times the least,
    the median; 0.7 timeouts a run). The linux flavour's as evenly, with the testbed's timing
    noise and without it (none of 50 above, 1.50 and 1.58 times; 0.2 and 0.1 timeouts a run),
    and a little less (10.5-11.4 % a flow with the noise, the kernel's 11.8-13.8 %)."""
    kernel, noisy = _bbr5_mixed_rtts(vl.TESTBED_JITTER_US)
    _, exact = _bbr5_mixed_rtts()
    kept = [r for r in kernel["runs"] if r["kept"]]
    kl, nl, el = _losses(kept), _losses(noisy["runs"]), _losses(exact["runs"])
    above = [int((x > LT_LOSS_THRESH).sum()) for x in (kl, nl, el)]
    assert above[1] <= above[0] and above[2] <= above[0] <= 5, above
    ratio = [float(np.median(x.max(axis=1) / x.min(axis=1))) for x in (kl, nl, el)]
    assert all(abs(r / ratio[0] - 1) < 0.1 for r in ratio[1:]), ratio
    timeouts = [
        np.mean([sum(f["timeouts"] for f in r["flows"]) for r in rs])
        for rs in (kept, noisy["runs"], exact["runs"])
    ]
    assert max(timeouts[1:]) < timeouts[0] < 1, timeouts
    assert kl.mean() - 0.03 < nl.mean() < kl.mean(), (kl.mean(), nl.mean())


#: The line `ss -tinH` (iproute2 6.x, Linux 6.18) printed under a BBR socket on loopback.
SS_BBR_LINE = (
    "\t bbr wscale:10,10 rto:204 rtt:0.319/0.271 mss:65483 pmtu:65535 rcvmss:536 advmss:65483"
    " cwnd:72 ssthresh:28 bytes_sent:762904417 bytes_retrans:196449 bytes_acked:762707969"
    " segs_out:15684 segs_in:4626 data_segs_out:15682"
    " bbr:(bw:46328097160bps,mrtt:0.003,pacing_gain:1,cwnd_gain:2) send 118238896552bps"
    " lastsnd:8 lastrcv:508 lastack:8 pacing_rate 45864816184bps delivery_rate 1007430768bps"
    " delivered:15683 busy:304ms retrans:0/3 dsack_dups:3 reordering:4 reord_seen:4"
    " rcv_space:65495 rcv_ssthresh:65495 minrtt:0.003 snd_wnd:33030144"
)


def test_bbr_long_term_mode_is_read_from_a_frozen_bw_at_pacing_gain_one() -> None:
    """tools/bbr_lt_mode.py's reading of `ss -tin`: PROBE_BW's gain cycle is no episode however
    long, whether `bw` moves or holds; nor is pacing gain 1 with a moving `bw`; a `bw` held at
    pacing gain 1 for 48 round trips is one, ended by the first sample that moves, and a
    ProbeRTT splits it. Loss windows have one length whatever the sampling and are lossy when
    their losses reach 50/256 of what they deliver (`bbr_lt_bw_interval_done`)."""
    sys.path.insert(0, str(ROOT / "tools"))
    import bbr_lt_mode as lt

    assert lt.parse_ss(SS_BBR_LINE) == (46328097160.0, 1.0, 2.0, 3.0, 15683.0)
    assert lt.parse_ss("ESTAB 0      0      127.0.0.1:35146 127.0.0.1:36297") is None
    gains = (1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0)
    cycling = [(i / 10, 4e6 + 1e3 * (i // 3), gains[i % 8], 2.0) for i in range(200)]
    held_cycling = [(i / 10, 4e6, gains[i % 8], 2.0) for i in range(200)]
    moving_at_one = [(i / 10, 4e6 + 1e3 * (i // 3), 1.0, 2.0) for i in range(200)]
    for rows in (cycling, held_cycling, moving_at_one):
        assert lt.episodes(rows, 2.5) == []
    frozen = [(2.0 + i / 10, 2.5e6, 1.0, 2.0) for i in range(48)]
    after = [(t + 6.8, bw, pg, cg) for t, bw, pg, cg in cycling[:40]]
    assert lt.episodes(cycling[:20] + frozen + after, 2.5) == [[2.0, 4.7, 2.5e6]]
    split = frozen[:24] + [(frozen[24][0], 2.5e6, 1.0, 1.0)] + frozen[25:]
    assert lt.episodes(split, 2.5) == []

    # loss windows of 0.5 s from 5 s after the first sample (at 1 s) to the last (12.1 s), the
    # counters interpolated between samples 0.3 s apart; losses at 40/s over 6.7-7.6 s and 38/s
    # over 8.8-9.7 s, 200 segments/s delivered: 7.0-7.5 s loses 20 of 100 (>= 50/256), 9.0-9.5
    # s 19 of 100 (< 50/256), the windows around them less
    def lost_by(t: float) -> float:
        return 40 * min(max(t - 6.7, 0.0), 0.9) + 38 * min(max(t - 8.8, 0.0), 0.9)

    rows6 = [(t, 1e6, 1.0, 2.0, lost_by(t), 200.0 * t) for t in (1.0 + 0.3 * i for i in range(38))]
    assert lt.lossy_windows(rows6, 0.5, 5.0) == (12, 1)
    assert lt.lossy_windows(rows6[:20], 0.5, 5.0) == (1, 0)  # to 6.7 s: the one window 6.0-6.5


def test_bbr_long_term_mode_holds_starving_flows_on_both_sides() -> None:
    """docs/validation/linux.md, 'Five BBR flows': BBR's long-term mode, read the same way on
    both sides (tools/bbr_lt_mode.py, ten runs each: the kernel's sampled with `ss -tin`, the
    model's from the trace patch's 100 ms samples, whose exact flag the reading tracks within
    15 %). On both sides a flow starving under a tenth of the link spends longer in it than the
    others (more than 1.5 times), and starving and other flows cross the mode's loss threshold
    in about as many half-seconds as their like on the other side. The model's flows spend less
    time in it (6.4 s of 30 against 9.5 s, 1.1 episodes a flow against 1.7). The model's file is
    of the model as it is: its runs' Jain indices are the committed results' seeds 1-10."""
    k, m = (json.loads(f.read_text())["summary"] for f in (LT_FILES["kernel"], LT_FILES["model"]))
    sim = {q["point"]["name"]: q["sim"] for q in json.loads(RESULTS_LINUX.read_text())["points"]}
    mj = [r["jain"] for r in m["runs"]]
    assert np.allclose([np.mean(mj), np.std(mj, ddof=1)], sim["bbr5-1bdp"]["jain"], atol=1e-3), mj
    for s in (k, m):  # the summaries are those of their flows
        fl = s["flows"]
        assert len(fl) == s["flow_runs"] == 50
        assert s["lt_s_per_flow"] == round(sum(f["lt_s"] for f in fl) / 50, 2)
        assert s["lossy_window_share"] == round(
            sum(f["lossy_windows"] for f in fl) / sum(f["windows"] for f in fl), 3
        )
        assert all(40 <= f["windows"] <= 50 for f in fl)
        assert s["lt_s_starving"] > 1.5 * s["lt_s_rest"], s
    assert abs(m["lt_s_per_flow"] - m["exact_lt_s_per_flow"]) < 0.15 * m["exact_lt_s_per_flow"], m
    assert 1.3 < k["lt_s_per_flow"] / m["lt_s_per_flow"] < 1.7, (k["lt_s_per_flow"], m["lt_s_per_flow"])
    assert k["flow_runs_with_an_episode"] > 0.6 and m["flow_runs_with_an_episode"] > 0.6
    for part in ("starving", "rest"):
        key = f"lossy_window_share_{part}"
        assert abs(k[key] - m[key]) < 0.04, (part, k[key], m[key])
    assert k["lossy_window_share_starving"] > 2 * k["lossy_window_share_rest"]

    # where the two differ: by RTT. The kernel's half-seconds over the threshold grow with a
    # flow's RTT (20 ms: 6.7 %, 100 ms: 17.7 %) and its 20 ms flow never starves; the model's
    # do not (10.1 % at 20 ms, 11.5 % at 100 ms) and its 20 ms flow starves in 1 of 10 runs
    def by_flow(s: dict[str, Any], i: int) -> tuple[float, float]:
        fl = [f for f in s["flows"] if f["flow"] == i]
        lossy = sum(f["lossy_windows"] for f in fl) / sum(f["windows"] for f in fl)
        return lossy, float(np.mean([f["share"] < 0.1 for f in fl]))

    (k20, k20_starve), (k100, _) = by_flow(k, 0), by_flow(k, 4)
    (m20, m20_starve), (m100, _) = by_flow(m, 0), by_flow(m, 4)
    assert k100 > 2 * k20 and m100 < 1.5 * m20 and m20 > 1.3 * k20, (k20, k100, m20, m100)
    assert k20_starve == 0 < m20_starve


def test_five_bbr_flows_of_mixed_rtts_split_alike_when_each_flows_delay_moves() -> None:
    """The linux flavour's split among BBR flows of mixed RTTs does not hang on packet phases:
    with each access link's delay moved by a random 0-0.6 ms (one bottleneck packet time; 12
    sets of offsets, seeds 1-2) the mean Jain index stays within 0.1 of the unshifted seeds'
    (0.83 against 0.80), below a fair split."""
    import re

    p = {q.name: q for q in vl.GRID}["bbr5-1bdp"]
    base = vl.scenario(p, "linux").text
    bottleneck_ms = min(p.rtts_ms) / 2 - 1
    access_ms = [r / 2 - bottleneck_ms for r in p.rtts_ms]
    rng = np.random.default_rng(7)
    jain = []
    for _ in range(12):
        delays = ", ".join(
            f'"{(a + o) * 1000:.0f}us"' for a, o in zip(access_ms, rng.uniform(0, 0.6, 5), strict=True)
        )
        text, n = re.subn(r"delay = \[[^\]]*\]", f"delay = [{delays}]", base, count=1)
        assert n == 1
        sc = Scenario(text, "<offsets>").with_overrides(vl.sim_overrides("linux", jitter_us=0))
        jain += [vl.jain_index(vl.simulate(sc, seed).flows["throughput_bps"].to_numpy()) for seed in (1, 2)]
    unshifted = [r["jain"] for r in _bbr5_mixed_rtts()[1]["runs"]]
    assert abs(np.mean(jain) - np.mean(unshifted)) < 0.1 and np.mean(jain) < 0.9, (np.mean(jain), unshifted)


_OK, _WHY = emu.availability()
needs_emulation = pytest.mark.skipif(not _OK, reason=f"emulation unavailable: {_WHY}")
if not _OK:
    print(f"test_validate_linux: kernel runs skipped: {_WHY}", file=sys.stderr)


def _stalled(runs: list[dict[str, Any]]) -> str:
    """Why kernel runs kept only because every attempt stalled are not judged (as
    tests/emu_judge.py says it of the emulation tests' runs)."""
    worst = ", ".join(
        f"max {r['lateness']['max_us'] / 1e3:.1f} ms, p99 {r['lateness']['p99_us'] / 1e3:.1f} ms"
        for r in runs
    )
    return (
        f"the host stalled the daemons in all {vl.MAX_ATTEMPTS} tries ({worst} late; bound: max "
        f"{vl.STALL_MAX_US / 1e3:g} ms, p99 {vl.STALL_P99_US / 1e3:g} ms), so the run was not judged"
    )


@pytest.mark.alone
@needs_emulation
def test_cubic_alone_at_one_bdp_kernel_vs_simulated() -> None:
    """One grid point here (CUBIC alone, 10 Mbit/s, 40 ms, 33 packets): one kernel run
    against simulated seeds 1-3. Both fill the link (a single CUBIC flow with a 1-BDP buffer
    keeps it busy) and the bottleneck's mean queueing delay agrees within a factor of 1.5 (the
    committed runs: docs/validation/linux.md). The run is repeated when its daemons show a
    stalled host, and not judged (skipped, saying so) when every attempt stalled; its lateness is
    printed either way."""
    p = {q.name: q for q in vl.GRID}["cubic-alone-1bdp"]
    k = vl.run_kernel_point(p, 1, print)
    (run,) = [r for r in k["runs"] if r["kept"]]
    if run["stalled"]:  # kept after the last attempt: the host's doing, not the model's
        pytest.skip(_stalled([run]))
    s = vl.run_sim_point(p, 3, "ns2")
    qs = float(np.mean([r["qdelay_ms"] for r in s["runs"]]))
    seen = (
        f"kernel utilisation {run['utilization']:.3f}, queue delay {run['qdelay_ms']:.1f} ms, "
        f"lateness {run['lateness']}; simulated queue delay {qs:.1f} ms"
    )
    print(seen)
    assert run["utilization"] > 0.9, seen
    assert all(r["utilization"] > 0.9 for r in s["runs"]), seen
    assert 2 / 3 <= run["qdelay_ms"] / qs <= 1.5, seen
    assert k["host_settings"]["offloads"] and set(k["host_settings"]["offloads"].values()) == {"off"}


@pytest.mark.alone
@pytest.mark.slow
@needs_emulation
def test_bbr_against_cubic_at_one_bdp_three_kernel_runs() -> None:
    """BBR against CUBIC, 1 BDP: three kernel runs. The kernel's BBR takes the larger share at
    a shallow buffer (Hock et al. 2017; the committed runs give it 0.89-0.91 at 1 BDP), with
    the link full. The simulated side is not asserted here (today's BBR is the issue)."""
    p = {q.name: q for q in vl.GRID}["bbr-cubic-1bdp"]
    k = vl.run_kernel_point(p, 3, print)
    kept = [r for r in k["runs"] if r["kept"] and not r["stalled"]]
    if not kept:
        pytest.skip(_stalled([r for r in k["runs"] if r["kept"]]))
    bbr = [r["flows"][0]["share"] for r in kept]
    print(f"kernel BBR shares {bbr}")
    assert float(np.mean(bbr)) > 0.7, bbr
    assert all(r["utilization"] > 0.9 for r in kept), kept


def test_every_committed_validation_result_was_simulated_at_the_checkouts_core() -> None:
    """The pages quote the committed results files (the linux flavour holds so many of the
    kernel's targets): each records the core that simulated it (``fingerprint.core``), and
    after a change to the core ``python -m qoslab.emulation.validation --refresh`` simulates
    every one again (a few minutes), so that what the pages quote is the model's."""
    from qoslab.verdicts.currency import core_fingerprint

    files = vl.results_files(ROOT)
    assert len(files) >= 9 and {g for g, _ in files} == set(vl.GRIDS)
    assert vl.stale_results(ROOT, core_fingerprint(ROOT)) == []


def test_a_results_file_of_another_core_or_none_is_named_with_its_cure(tmp_path: Path) -> None:
    d = tmp_path / vl.GRIDS["heldout"][1]
    d.mkdir(parents=True)
    (d / "results-linux-exact.json").write_text(json.dumps({"fingerprint": {"core": "aaaa"}}))
    (d / "results-ns2.json").write_text(json.dumps({"points": []}))
    (d / "results-linux.json").write_text(json.dumps({"fingerprint": {"core": "bbbb"}}))
    (d / "results-linux-slow.json").write_text(json.dumps({"fingerprint": {"core": "bbbb"}}))
    (d / "results-ns3.json").write_text("[1, 2]")
    lines = vl.stale_results(tmp_path, "bbbb")
    assert len(lines) == 3, lines
    assert "simulated at core `aaaa`" in lines[0] and lines[0].endswith(
        "--grid heldout --flavour linux --timing exact --sim-only --out docs/validation/linux-heldout"
    )
    assert "no `fingerprint.core`" in lines[1] and "--flavour ns2 --timing testbed" in lines[1]
    assert "results-ns3.json: not a name the validation writes" in lines[2]
    assert vl.stale_results(tmp_path, None) == []
    # --check and --refresh cover every file: an option picking among them is refused, not ignored
    for argv in (
        ["--refresh", "--grid", "heldout"],
        ["--check", "--flavour", "linux"],
        ["--check", "--refresh"],
    ):
        with pytest.raises(SystemExit) as e:
            vl.main(argv)
        assert e.value.code == 2, argv
    assert vl.label_of(Path("results-ns2-exact.json")) == ("ns2", "exact")
    assert vl.label_of(Path("results-linux-slow.json")) is None


def test_the_bbr_trace_patch_the_page_reads_applies_to_the_checkout() -> None:
    """docs/validation/linux.md reads the model's long-term mode and min-RTT estimates from a
    trace build (`tools/bbr-lt-trace.patch` applied to bbr.rs): the patch must apply to the
    code as it is, or the page's model-side figures could not be had again."""
    import shutil
    import subprocess

    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    p = subprocess.run(
        ["git", "apply", "--check", "tools/bbr-lt-trace.patch"], cwd=ROOT, capture_output=True, text=True
    )
    assert p.returncode == 0, p.stderr
