"""``qoslab bench``'s linux-flavour measurement (issues 54 and 78): the arms are the validation
scenarios as the papers run ns-2's agents, as the validation runs the ns2 flavour (delayed ACKs)
and as it runs the linux flavour; the ratios divide the same round's calls, and the guards judge
both per-hop ratios against 1.3×. Speed is never asserted here."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conftest import QOSLAB, one_line_error
from qoslab.bench import guards as bench_guards
from qoslab.bench import linux as bench_linux


def test_each_arm_runs_the_validation_scenario_as_it_is_run() -> None:
    """The linux flavour with Linux's delayed ACKs; the ns2 flavour with ns-2's sink that ACKs
    every segment, and again with delayed ACKs every second segment or 40 ms; the same scenario
    otherwise, without the testbed's timing noise."""
    for point in bench_linux.POINTS:
        arm = {a: bench_linux.arm_scenario(point, a).resolved for a in bench_linux.ARMS}
        ns2, delack, linux = arm["ns2"], arm["ns2_delack"], arm["linux"]
        for r in (ns2, delack):
            assert [f["tcp"].get("flavour", "ns2") for f in r["flows"]] == ["ns2"] * len(r["flows"])
        assert [f["tcp"]["flavour"] for f in linux["flows"]] == ["linux"] * len(linux["flows"])
        assert not any(f["tcp"]["delayed_ack"] for f in ns2["flows"])
        for r in (delack, linux):
            tcp = [f["tcp"] for f in r["flows"]]
            assert all(t["delayed_ack"] and t["delack_interval_ns"] == 40_000_000 for t in tcp)
        for r in arm.values():
            assert r["duration_ns"] == 30_000_000_000
            assert [f["tcp"]["variant"] for f in r["flows"]] == [f["tcp"]["variant"] for f in ns2["flows"]]
            assert not any(lk.get("jitter_ns") for lk in r["links"])


class _Drifting:
    """A machine slowing down each round (1, 4, 9 … times), on which the linux flavour costs
    1.6× the ns2 flavour's per hop (0.8× per run: half the hops) and 1.2× the ns2 flavour's with
    delayed ACKs (1.2× per run: the same hops): each round's ratio is that, whatever the drift; a
    ratio of the medians of different rounds' calls would not be."""

    def __init__(self) -> None:
        self.round = 0

    def __call__(self, point: str, calls: int) -> dict[str, dict[str, float]]:
        self.round += 1
        k = self.round**2
        return {
            "ns2": {"cpu_s": 0.010 * k, "wall_s": 0.02 * k, "hops": 100_000, "events": 103_000},
            "ns2_delack": {"cpu_s": 0.008 * k / 1.2, "wall_s": 0.02 * k, "hops": 50_000, "events": 60_000},
            "linux": {"cpu_s": 0.008 * k, "wall_s": 0.02 * k, "hops": 50_000, "events": 66_000},
        }


def test_the_ratios_divide_the_calls_of_the_same_round() -> None:
    row = bench_linux.pair("bbr-cubic-1bdp", rounds=5, measure=_Drifting())
    assert row["hop_ratios"] == pytest.approx([1.6] * 5) and row["hop_ratio"] == pytest.approx(1.6)
    assert row["run_ratios"] == pytest.approx([0.8] * 5) and row["run_ratio"] == pytest.approx(0.8)
    assert row["hop_ratios_delack"] == pytest.approx([1.2] * 5)
    assert row["hop_ratio_delack"] == pytest.approx(1.2)
    assert row["run_ratio_delack"] == pytest.approx(1.2)
    assert row["ns2"]["cpu_s"] == pytest.approx(0.09) and row["ns2"]["ns_per_hop"] == pytest.approx(900.0)
    assert row["linux"]["events_per_hop"] == pytest.approx(1.32)


def test_the_guards_judge_both_per_hop_ratios_against_one_point_three() -> None:
    rows = [bench_linux.pair(p, rounds=3, measure=_Drifting()) for p in bench_linux.POINTS]
    g = bench_guards.evaluate_linux(bench_linux.POINTS, rows)
    n = len(bench_linux.POINTS)
    assert bench_linux.POINTS[:2] == ("bbr-cubic-1bdp", "cubic5-1bdp") and n == 3
    assert [(x["guard"], x["workload"], x["holds"]) for x in g] == [
        ("linux flavour", p, False) for p in bench_linux.POINTS
    ] + [("linux flavour, like for like", p, True) for p in bench_linux.POINTS]
    assert g[0]["value"] == pytest.approx(1.6) and g[n]["value"] == pytest.approx(1.2)
    rows[1]["hop_ratio"], rows[0]["hop_ratio_delack"] = 1.3, 1.31
    g = bench_guards.evaluate_linux(bench_linux.POINTS, rows)
    assert [x["holds"] for x in g] == [False, True, False, False, True, True]
    assert bench_guards.verdict(g) == (
        "3 of 6 judged guards fail: linux flavour on bbr-cubic-1bdp; linux flavour on bbr5-1bdp; "
        "linux flavour, like for like on bbr-cubic-1bdp"
    )
    # a call that did not measure the flavours says so, and judges nothing
    g = bench_guards.evaluate_linux(bench_linux.POINTS, [])
    assert len(g) == 2 * n and all(x["holds"] is None and x["note"] == "not measured in this call" for x in g)


def test_the_data_share_is_each_congestion_controls_part_of_the_segments_sent() -> None:
    """What a ratio per hop compares: beside CUBIC the two flavours' BBR take different parts
    of the link, so the hops are made by different senders."""
    resolved = bench_linux.arm_scenario("bbr-cubic-1bdp", "linux").resolved
    assert [f["tcp"]["variant"] for f in resolved["flows"]] == ["bbr", "cubic"]
    assert bench_linux.data_share(resolved, [300.0, 100.0]) == {"bbr": 0.75, "cubic": 0.25}
    assert bench_linux.data_share(resolved, [0.0, 0.0]) == {"bbr": 0.0, "cubic": 0.0}
    five = bench_linux.arm_scenario("bbr5-1bdp", "ns2").resolved
    assert bench_linux.data_share(five, [1.0, 2.0, 3.0, 4.0, 5.0]) == {"bbr": 1.0}


def test_the_bench_call_records_the_flavours_and_their_guard(tmp_path: Path) -> None:
    """One round: the figures are there and the guard is judged (its verdict
    is whatever the machine gives; it is not asserted)."""
    out = tmp_path / "bench.json"
    p = subprocess.run(
        [QOSLAB, "bench", "--workload", bench_linux.WORKLOAD, "--linux-rounds", "1"]
        + ["--no-ns2", "--no-ns3", "--json", str(out)],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stderr
    doc = json.loads(out.read_text())
    assert doc["workloads"] == [] and [r["point"] for r in doc["linux_flavour"]] == list(bench_linux.POINTS)
    for r in doc["linux_flavour"]:
        assert r["hop_ratio"] > 0 and r["run_ratio"] > 0 and r["hop_ratio_delack"] > 0
        for arm in bench_linux.ARMS:
            assert r[arm]["hops"] > 0 and sum(r[arm]["data_share"].values()) == pytest.approx(1.0)
    cubic5 = doc["linux_flavour"][1]
    # the same senders in every arm: delayed ACKs halve the ACK hops
    assert cubic5["linux"]["hops"] < cubic5["ns2"]["hops"]
    assert cubic5["ns2_delack"]["hops"] < cubic5["ns2"]["hops"]
    g = [x for x in doc["guards"] if x["guard"].startswith("linux flavour")]
    assert len(g) == 2 * len(bench_linux.POINTS) and all(x["holds"] is not None for x in g)
    assert "linux flavour against the ns2 flavour" in p.stdout and "delayed ACKs" in p.stdout


def test_a_bad_number_of_rounds_is_a_one_line_error() -> None:
    p = subprocess.run(
        [QOSLAB, "bench", "--workload", bench_linux.WORKLOAD, "--linux-rounds", "0"],
        capture_output=True,
        text=True,
    )
    assert "--linux-rounds must be at least 1, got 0" in one_line_error(p)


def test_the_clis_default_rounds_is_the_benchs() -> None:
    """The CLI does not import the bench module at start-up, so it repeats the default."""
    import inspect

    from qoslab.cli import bench as command

    assert inspect.signature(command.bench).parameters["linux_rounds"].default == bench_linux.ROUNDS
