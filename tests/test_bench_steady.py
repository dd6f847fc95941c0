"""The backbone workloads of ``qoslab bench`` (issue 80, :mod:`qoslab.bench.steady`): the warm-up
read from a run's own series, the hop cost and the state from T/2 to T, the paired rounds of
a hop after the warm-up, and which calls run them. Small scenarios; no time is asserted."""

from __future__ import annotations

import json
import time
from array import array
from pathlib import Path
from typing import Any

import pytest

from qoslab import _core
from qoslab.bench import guards as bench_guards
from qoslab.bench import hops, runner, steady, workloads


def test_the_backbone_workloads_are_what_the_guards_name_and_the_50000_flow_one_is_optional():
    by = {w.name: w for w in workloads.WORKLOADS}
    for name in bench_guards.BACKBONE:
        assert by[name].steady and by[name].ns2_note and by[name].ns3_note
    assert not by[bench_guards.BACKBONE_10K].optional_note and by[bench_guards.BACKBONE_50K].optional_note
    default = [w.name for w in runner.selected(None)]
    assert bench_guards.BACKBONE_10K in default and bench_guards.BACKBONE_50K not in default
    assert bench_guards.BACKBONE_50K in [w.name for w in runner.selected(None, backbone=True)]
    named = [w.name for w in runner.selected([bench_guards.BACKBONE_50K, hops.HOP_COST_BASE])]
    assert named == [hops.HOP_COST_BASE, bench_guards.BACKBONE_50K]
    assert [w.name for w in runner.selected([hops.HOP_COST_BASE], backbone=True)] == [
        hops.HOP_COST_BASE,
        *REFERENCE_SIZED,
        *bench_guards.BACKBONE,
    ]


#: the backbone's shape at the sizes ns-3 and ns-2 finish in 10 minutes
REFERENCE_SIZED = ("droptail-200flows-50Mbps-40s", "droptail-2000flows-500Mbps-40s")


def test_the_references_run_the_backbone_shape_at_their_sizes():
    """ns-3 runs the 200-flow backbone workload (its flows open with a handshake, as ns-3's
    must) and ns-2 the 2,000-flow one (no handshake, as ns-2's agents), both optional; each is the
    backbone workload's scenario at its size (250 kb/s a flow, the same RTT spread)."""
    by = {w.name: w for w in workloads.WORKLOADS}
    small, large = (by[n] for n in REFERENCE_SIZED)
    assert small.steady and large.steady and small.optional_note and large.optional_note
    assert small.ns2_note and not small.ns3_note and not large.ns2_note and large.ns3_note
    for w, n in ((small, 200), (large, 2000)):
        sc = w.build()
        assert len(sc.resolved["flows"]) == n
        bottleneck = next(lk for lk in sc.resolved["links"] if lk["name"] == "bottleneck")
        assert bottleneck["bandwidth_bps"] / n == 250e3


def test_a_backbone_scenario_is_the_papers_drop_tail_dumbbell():
    sc = steady.backbone(400, 40e6, 20.0)
    r = sc.resolved
    assert len(r["flows"]) == 400 and r["measurement"]["interval_ns"] == 1_000_000_000
    assert r["measurement"]["start_ns"] == 0 and r["measurement"]["cwnd"] is False
    (b,) = [link for link in r["links"] if link["name"] == "bottleneck"]
    # RTT × C / √n: 100 ms × 40 Mb/s = 500 packets of 1000 B, over √400
    assert b["bandwidth_bps"] == 40_000_000 and b["queue_ab"]["type"] == "droptail"
    assert b["queue_ab"]["limit_pkts"] == 25


def test_the_clock_reads_the_wall_time_at_a_fraction_between_slices():
    c = steady.Clock(100.0)
    c.fractions += [0.25, 0.75, 1.0]
    c.walls += [101.0, 103.0, 110.0]
    assert c.at(0.5) == pytest.approx(2.0) and c.at(0.75) == pytest.approx(3.0)
    assert c.at(1.0) == pytest.approx(10.0) and c.at(0.0) == 0.0
    short = steady.Clock(0.0)
    short.fractions.append(0.4)
    short.walls.append(1.0)
    assert short.at(0.5) is None


def test_the_warm_up_of_a_small_backbone_run_is_found_in_its_series_and_ends_by_half_its_duration():
    """50 flows starting over the first 5 s: the throughput settles after the starts, and the
    bottleneck is busy after that; the core calls the clock as it runs."""
    sc = steady.backbone(50, 5e6, 30.0)
    clock = steady.Clock(time.perf_counter())
    raw = _core.simulate_resolved(sc.core, 1, [], clock, 1)
    w = steady.warmup_of(raw, sc)
    assert w["throughput_s"] is not None and 3.0 <= w["end_s"] <= 15.0
    assert w["utilisation_after"] > 0.9
    assert clock.fractions[-1] == 1.0 and clock.at(0.5) < clock.at(1.0)


def _raw(throughput: list[float], queue: list[float]) -> dict[str, Any]:
    """A run's two series as the core returns them: one flow, the bottleneck (link 0) forward."""
    t = array("Q", [i * 1_000_000_000 for i in range(len(throughput))])
    return {
        "series_flow": {"time_ns": t, "throughput_bps": array("d", throughput)},
        "series_queue": {
            "time_ns": t,
            "direction_index": array("Q", [0] * len(queue)),
            "physical_queue": array("Q", [0] * len(queue)),
            "queue_packets": array("Q", [int(q) for q in queue]),
        },
    }


def test_a_run_whose_throughput_never_settles_has_no_warm_up_end():
    sc = steady.backbone(1, 1e6, 40.0)  # link 0 is the access link: the bottleneck is link 1
    sc_links = sc.resolved["links"]
    assert sc_links[1]["name"] == "bottleneck"
    ramp = [1e4 * i for i in range(40)]
    raw = _raw(ramp, [5.0] * 40)
    raw["series_queue"]["direction_index"] = array("Q", [2] * 40)
    w = steady.warmup_of(raw, sc)
    assert w["throughput_s"] is None and w["end_s"] is None
    settled = _raw([0.0] * 5 + [1e6 + (i % 3) for i in range(35)], [0.0] * 5 + [7.0] * 35)
    settled["series_queue"]["direction_index"] = array("Q", [2] * 40)
    w = steady.warmup_of(settled, sc)
    assert w["end_s"] == 4.0 and w["utilisation_after"] == pytest.approx(1.0, rel=1e-5)


def _full(end_s: float | None, queue_s: float | None = 1.0) -> dict[str, Any]:
    return {
        "sim_s": 30.0,
        "hops": 3_000_000,
        "wall_at_half_s": 2.0,
        "wall_run_s": 5.0,
        "warmup": {"end_s": end_s, "queue_s": queue_s, "throughput_s": end_s},
        "memory_bytes": {"state": 1_050_000},
    }


HALF = {"hops": 1_000_000, "memory_bytes": {"state": 1_000_000}}


def test_the_figures_after_the_warm_up_are_the_runs_second_half():
    a = steady.after_warmup(_full(6.0), HALF, 100)
    assert a["note"] == "" and a["queue_note"] == ""
    assert a["hops"] == 2_000_000 and a["wall_s"] == 3.0 and a["ns_per_hop"] == pytest.approx(1500.0)
    assert a["state_per_flow"] == 10_500 and a["state_bytes_half"] == 1_000_000
    assert steady.after_warmup(_full(16.0), HALF, 100)["note"].startswith("the warm-up ends at 16 s, past")
    assert steady.after_warmup(_full(None), HALF, 100)["note"].startswith("MSER-5 found no steady state")
    assert "queue" in steady.after_warmup(_full(6.0, None), HALF, 100)["queue_note"]


def test_a_backbone_rows_paired_rounds_divide_its_hop_after_the_warm_up_by_the_bases_net_hop():
    """Each round: the base's run (100 ns a hop net of its 10 ms set-up) and a full run of the
    backbone workload whose second half takes 3 s over the row's 2 M hops (1,500 ns): 15×,
    whatever the run's first half took. A slow backbone row is paired (at most STEADY_PAIRS
    rounds); a slow row of another workload is not."""
    calls: list[str] = []

    def measure(name: str) -> dict[str, Any]:
        calls.append(name)
        if name == hops.HOP_COST_BASE:
            return {"wall_s": 0.11, "hops": 1_000_000}
        return {"wall_s": 60.0 + len(calls), "hops": 3_000_000, "wall_at_half_s": 40.0, "wall_run_s": 43.0}

    base = {
        "workload": hops.HOP_COST_BASE,
        "qoslab_core": {"wall_s": 0.11, "hops": 1_000_000},
        "qoslab_core_setup": {"wall_s": 0.01, "hops": 0},
    }
    big = {
        "workload": bench_guards.BACKBONE_50K,
        "qoslab_core": {"wall_s": 61.0, "hops": 3_000_000},
        "qoslab_core_setup": {"wall_s": 5.0, "hops": 0},
        "after_warmup": steady.after_warmup(_full(6.0), HALF, 100),
    }
    slow = {**big, "workload": "slow", "after_warmup": None}
    hops.pair_with_base([base, big, slow], 9, measure=measure)
    assert calls.count(bench_guards.BACKBONE_50K) == hops.STEADY_PAIRS and "slow" not in calls
    assert big["hop_cost_pairs"] == pytest.approx([15.0] * hops.STEADY_PAIRS)
    assert big["hop_cost_ratio_paired"] == pytest.approx(15.0) == big["hop_cost_ratio_paired_net"]
    assert slow["hop_cost_ratio_paired"] is None


def test_a_call_with_a_backbone_workload_reports_its_figures_after_the_warm_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A whole call on a small backbone workload and the 200-flow base, the core runs faked
    (the same figures every run: 1,500 ns a hop after T/2 against the base's 100 ns net):
    the row, the guards and the printed table carry the figures after the warm-up."""
    small = workloads.Workload(
        bench_guards.BACKBONE_10K, lambda: steady.backbone(20, 2e6, 30.0), steady=True, default_note="why"
    )
    base = next(w for w in workloads.WORKLOADS if w.name == hops.HOP_COST_BASE)
    monkeypatch.setattr(runner, "WORKLOADS", (base, small))

    def fake_core(name: str, scale: float = 1.0) -> dict[str, Any]:
        mem = {"state": 1_000_000, "series": 10, "links": 1, "flows": 1, "conditioners": 0}
        mem |= {"packet_slot": 73, "line_entry": 24}
        run = {"wall_s": 0.11 * scale, "hops": int(1_000_000 * scale), "events": 1, "sim_s": 30.0 * scale}
        run |= {"peak_rss_mb": 1.0, "peak_packets_in_flight": 1, "memory_bytes": mem}
        if name == hops.HOP_COST_BASE:
            return run if scale else {**run, "wall_s": 0.01}
        if scale == 1.0:
            run |= {"hops": 3_000_000, "wall_at_half_s": 2.0, "wall_run_s": 5.0}
            run["warmup"] = {"end_s": 6.0, "queue_s": None, "throughput_s": 6.0, "utilisation_after": 0.99}
        return run | {"hops": 1_000_000} if scale == 0.5 else run

    monkeypatch.setattr(runner, "measure_core", fake_core)
    monkeypatch.setattr(runner, "_timed", lambda cmd, cwd, timeout: (0.2, ""))
    out = tmp_path / "call.json"
    rows = runner.main(
        [hops.HOP_COST_BASE, small.name], use_ns2=False, use_ns3=False, repeat=1, json_path=out, pairs=2
    )
    big = rows[1]
    assert big["after_warmup"]["ns_per_hop"] == pytest.approx(1500.0) and big["qoslab_core_runs"] == 1
    assert big["after_warmup"]["hop_cost_ratio"] == pytest.approx(15.0)
    assert big["hop_cost_pairs"] == pytest.approx([15.0, 15.0])
    doc = json.loads(out.read_text())
    g = next(x for x in doc["guards"] if x["guard"] == "backbone scaling" and x["workload"] == small.name)
    assert g["holds"] is False and g["value"] == pytest.approx(15.0)


def test_the_linux_flavour_cubic_workload_is_compared_with_ns3_on_the_same_senders():
    """The linux flavour's CUBIC dumbbell runs in qoslab as Linux's; ns-2 and ns-3 get the ns2
    flavour's export of the same dumbbell (neither exports the linux flavour's sender), which
    ns-3 accepts: the guard compares qoslab's linux CUBIC with ns-3's CUBIC."""
    from qoslab.ns3.export import to_ns3_resolved, unsupported_reason

    w = {w.name: w for w in workloads.WORKLOADS}["cubic-linux-200flows-100Mbps-5s"]
    own, ref = w.build(), w.reference()
    assert {f["tcp"]["flavour"] for f in own.resolved["flows"]} == {"linux"}
    assert {f["tcp"].get("flavour", "ns2") for f in ref.resolved["flows"]} == {"ns2"}
    assert "linux flavour" in (unsupported_reason(to_ns3_resolved(own.resolved, 1)) or "")
    assert unsupported_reason(to_ns3_resolved(ref.resolved, 1)) is None
    assert w.name in bench_guards.NS3_DUMBBELLS
