"""The per-flow counters a TCP sender declares in its own file (crates/qoslab-core/src/traffic/
counters.rs; the linux flavour's four in traffic/linux/sender.rs), end to end: each is a column
of the flows table over the whole run and again inside the measurement window, counted by its
own flavour's sender and 0 in every other flow. Each counting site is also tested alone, with
scripted ACKs, in traffic/linux/tests.rs."""

from __future__ import annotations

import numpy as np
import pandas as pd

import qoslab
from conftest import SCENARIOS
from qoslab import _core, schema

LINUX = ("tlp_probes", "rack_marks", "spurious_undos", "pacing_stalls")


def _flows(sc: qoslab.Scenario, extra: list[str] | None = None) -> pd.DataFrame:
    flows: pd.DataFrame = qoslab.run(sc.with_overrides(extra or []), seed=1).flows
    return flows.set_index("name")


def _load(name: str, extra: list[str]) -> qoslab.Scenario:
    """Scenario `name` for 20 s, its window from 5 s to the end."""
    window = ["duration=20s", "measurement.start=5s", "measurement.end=20s"]
    return qoslab.load_scenario(SCENARIOS / name).with_overrides([*window, *extra])


def _check_window(sc: qoslab.Scenario, start: str, end: str) -> None:
    """The window's counts are the run stopped at the window's end less the run stopped at
    its start (a run is deterministic up to any time)."""
    w = _flows(sc, [f"measurement.start={start}", f"measurement.end={end}"])
    stop = ["measurement.start=0s"]
    before = _flows(sc, [f"duration={start}", *stop, f"measurement.end={start}"])
    upto = _flows(sc, [f"duration={end}", *stop, f"measurement.end={end}"])
    for c in LINUX:
        expected = (upto[c] - before[c]).to_numpy()
        assert np.array_equal(w[f"window_{c}"].to_numpy(), expected), c


def test_the_linux_sender_declares_four_counters_with_columns() -> None:
    declared = schema.flow_counters()
    assert [c["name"] for c in declared] == list(LINUX)
    assert {c["flavour"] for c in declared} == {"linux"}
    columns = list(_core.TABLE_COLUMNS["flows"])
    for c in LINUX:
        assert c in columns and f"window_{c}" in columns, c


def test_rack_marks_every_segment_a_linux_sender_retransmits_without_timeouts() -> None:
    # Five CUBIC flows through one tail-drop queue: losses, no timeout, no probe; each
    # retransmission is of a segment RACK marked lost (a mark may be SACKed before its
    # retransmission, so marks can exceed retransmissions).
    sc = _load("linux/five-cubic.toml", [])
    f = _flows(sc)
    assert (f["timeouts"] == 0).all() and (f["tlp_probes"] == 0).all()
    assert (f["retransmitted_packets"] > 0).all()
    assert (f["retransmitted_packets"] <= f["rack_marks"]).all(), f[["retransmitted_packets", "rack_marks"]]
    assert (f["window_rack_marks"] > 0).all()
    _check_window(sc, "5s", "20s")


def test_a_paced_sender_stalls_and_an_unpaced_one_never() -> None:
    # BBR paces (always); CUBIC does not unless tcp.pacing is set.
    sc = _load("linux/bbr-vs-cubic.toml", [])
    f = _flows(sc)
    stalls = f["pacing_stalls"]
    assert stalls["bbr"] > 0 and stalls["cubic"] == 0
    assert _flows(sc, ["tcp.pacing=true"])["pacing_stalls"]["cubic"] > 0
    _check_window(sc, "5s", "20s")


def test_tail_loss_probes_where_windows_are_small() -> None:
    # Twenty-five flows whose window is 20 segments through a RIO bottleneck: a loss near the
    # end of a flight leaves too few later segments to reveal it, and the probe does.
    sc = _load("rio-plus-o-baseline.toml", ['tcp.flavour="linux"'])
    f = _flows(sc)
    assert f["tlp_probes"].sum() > 0
    _check_window(sc, "5s", "20s")


def test_a_path_longer_than_the_initial_rto_undoes_the_spurious_timeout() -> None:
    # One CUBIC flow, window 20, over a path of RTT 2.04 s: before the first ACK the probe
    # (at 1 s, no srtt yet) and then the RTO (RFC 6298's initial 1 s) fire with nothing lost;
    # the ACKs of the original segments then come back and F-RTO (RFC 5682) finds the
    # timeout spurious: the reduction is undone (tcp_try_undo_loss).
    sc = qoslab.load_scenario(SCENARIOS / "linux/single.toml").with_overrides(
        [
            "duration=10s",
            "measurement.start=1.5s",
            "measurement.end=10s",
            "link.bottleneck.delay=1s",
            'flow.single.tcp.variant="cubic"',
            "tcp.window=20",
        ]
    )
    tcp = _flows(sc).loc["single"]
    assert tcp["timeouts"] == 1 and tcp["retransmitted_packets"] == 1
    assert tcp["overflow_drops"] == 0 and tcp["rack_marks"] == 0
    assert tcp["spurious_undos"] == 1 and tcp["final_cwnd"] == 20
    # (The window opens after the probe, which fires at 1 s exactly.)
    _check_window(sc, "1.5s", "10s")


def test_the_ns2_flavour_and_udp_flows_count_none() -> None:
    # The same five flows in the ns2 flavour lose and retransmit, but its sender declares no
    # counter: the linux sender's columns are there, 0.
    sc = _load("linux/five-cubic.toml", ['tcp.flavour="ns2"', "tcp.sack=true", "tcp.window=1000"])
    f = _flows(sc)
    assert (f["retransmitted_packets"] > 0).all()
    for c in LINUX:
        assert (f[c] == 0).all() and (f[f"window_{c}"] == 0).all(), c
    udp = _flows(_load("examples/udp-sources.toml", ['tcp.flavour="linux"']))
    assert (udp[list(LINUX)] == 0).all().all()
