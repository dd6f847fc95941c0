"""The speed guards of ``qoslab bench`` (issue 58) read a call's rows: on the committed
seventeenth-round calls they hold; a row below an aim fails, a workload the call did not
measure and one that ends inside its warm-up are not judged. No time is measured here."""

from __future__ import annotations

import copy
import json

from conftest import ROOT
from qoslab.bench import guards as bench_guards

ROUND17 = json.loads((ROOT / "docs" / "bench" / "round17.json").read_text())["workloads"]
ROUND17_NS3 = json.loads((ROOT / "docs" / "bench" / "round17-ns3.json").read_text())["workloads"]


def _by(guards, name, workload):
    return next(g for g in guards if g["guard"] == name and g["workload"] == workload)


def test_the_committed_calls_hold_every_guard_they_can_judge():
    g = bench_guards.evaluate(ROUND17)
    assert _by(g, "core vs ns-2", bench_guards.BASE_200)["value"] > 4
    assert _by(g, "scaling", "red-2000flows-1Gbps-10s")["holds"] is True
    # not judged: the 3 backbone ones and the linux CUBIC one (not run in that call)
    assert bench_guards.verdict(g) == "all 11 judged guards hold (7 not judged)"
    g3 = bench_guards.evaluate(ROUND17_NS3)
    assert _by(g3, "core vs ns-3", "cubic-200flows-100Mbps-5s")["value"] > 100
    assert bench_guards.verdict(g3) == "all 14 judged guards hold (6 not judged)"


def test_a_row_below_its_aim_fails_and_is_named():
    rows = copy.deepcopy(ROUND17)
    base = next(r for r in rows if r["workload"] == bench_guards.BASE_200)
    base["ns2_core_ratio"] = 3.9
    big = next(r for r in rows if r["workload"] == "red-2000flows-1Gbps-10s")
    big["hop_cost_ratio_paired"] = 2.6
    big["qoslab_core"]["memory_bytes"]["state"] = int(
        big["qoslab_core_half_duration"]["memory_bytes"]["state"] * 1.06
    )
    g = bench_guards.evaluate(rows)
    assert _by(g, "core vs ns-2", bench_guards.BASE_200)["holds"] is False
    assert _by(g, "scaling", "red-2000flows-1Gbps-10s")["holds"] is False
    assert _by(g, "flat state", "red-2000flows-1Gbps-10s")["holds"] is False
    assert bench_guards.verdict(g).startswith("3 of 11 judged guards fail: core vs ns-2 on red-200flows")


def test_what_a_call_cannot_show_is_not_judged():
    g = bench_guards.evaluate(ROUND17)
    assert _by(g, "core vs ns-3", "cubic-200flows-100Mbps-5s")["note"] == "not measured in this call"
    warm = _by(g, "flat state", "red-10000flows-10Gbps-2s")
    assert warm["holds"] is None and warm["note"].startswith("ends inside its warm-up")


def _backbone(name: str, flows: int, *, paired: float | None, per_flow: float, note: str = "") -> dict:
    """A backbone workload's row as a call writes it (:mod:`qoslab.bench.steady`): its state
    flat from T/2 to T, its hop after the warm-up ``paired`` times the 200-flow hop."""
    state = int(per_flow * flows)
    return {
        "workload": name,
        "flows": flows,
        "warmup_note": "",
        "qoslab_core": {"memory_bytes": {"state": state}},
        "qoslab_core_half_duration": {"memory_bytes": {"state": state}},
        "hop_cost_ratio_paired": paired,
        "hop_cost_pairs": [] if paired is None else [paired] * 3,
        "after_warmup": {
            "note": note,
            "hop_cost_ratio": 1.9,
            "state_per_flow": per_flow,
            "state_bytes": state,
            "state_bytes_half": state,
        },
    }


def _with_backbone(**over: dict) -> list[dict]:
    rows = copy.deepcopy(ROUND17)
    small = dict(paired=2.0, per_flow=10_000.0) | over.get("small", {})
    big = dict(paired=2.2, per_flow=9_000.0) | over.get("big", {})
    return rows + [
        _backbone(bench_guards.BACKBONE_10K, 10_000, **small),
        _backbone(bench_guards.BACKBONE_50K, 50_000, **big),
    ]


def test_the_backbone_guards_hold_on_rows_within_their_aims():
    g = bench_guards.evaluate(_with_backbone())
    for name in bench_guards.BACKBONE:
        s = _by(g, "backbone scaling", name)
        assert s["holds"] is True and s["note"].startswith("paired rounds' median (3 rounds)")
        assert _by(g, "flat state", name)["holds"] is True
    m = _by(g, "memory per flow", bench_guards.BACKBONE_50K)
    assert m["holds"] is True and m["value"] == 0.9
    assert bench_guards.verdict(g) == "all 16 judged guards hold (4 not judged)"


def test_a_backbone_hop_at_three_times_the_200_flow_hop_fails():
    g = bench_guards.evaluate(_with_backbone(big={"paired": 3.0}))
    assert _by(g, "backbone scaling", bench_guards.BACKBONE_50K)["holds"] is False
    assert _by(g, "backbone scaling", bench_guards.BACKBONE_10K)["holds"] is True
    assert bench_guards.verdict(g) == (
        "1 of 16 judged guards fail: backbone scaling on " + bench_guards.BACKBONE_50K
    )
    # without paired rounds the call's one run (after the warm-up) is shown, not judged
    for one in (0.19, 2.6):
        rows = _with_backbone(big={"paired": None})
        rows[-1]["after_warmup"]["hop_cost_ratio"] = one
        s = _by(bench_guards.evaluate(rows), "backbone scaling", bench_guards.BACKBONE_50K)
        assert s["holds"] is None and s["value"] == one and s["note"].startswith("no paired rounds")


def test_more_state_per_flow_at_50000_flows_fails_and_growth_after_the_warm_up_fails():
    g = bench_guards.evaluate(_with_backbone(big={"per_flow": 10_001.0}))
    m = _by(g, "memory per flow", bench_guards.BACKBONE_50K)
    assert m["holds"] is False and m["value"] > 1.0
    rows = _with_backbone()
    rows[-1]["qoslab_core"]["memory_bytes"]["state"] = int(
        rows[-1]["qoslab_core_half_duration"]["memory_bytes"]["state"] * 1.06
    )
    assert _by(bench_guards.evaluate(rows), "flat state", bench_guards.BACKBONE_50K)["holds"] is False


def test_a_backbone_run_still_warming_up_at_half_its_duration_is_not_judged():
    late = "the warm-up ends at 24 s, past T/2 = 20 s: the run is too short"
    g = bench_guards.evaluate(_with_backbone(big={"paired": 3.0, "per_flow": 20_000.0, "note": late}))
    for guard in ("backbone scaling", "flat state"):
        x = _by(g, guard, bench_guards.BACKBONE_50K)
        assert x["holds"] is None and x["note"] == late
    m = _by(g, "memory per flow", bench_guards.BACKBONE_50K)
    assert m["holds"] is None and m["note"] == f"{bench_guards.BACKBONE_50K}: {late}"
    assert bench_guards.verdict(g) == "all 13 judged guards hold (7 not judged)"


def test_backbone_workloads_the_call_did_not_run_are_not_judged_and_say_how_to_run_them():
    g = bench_guards.evaluate(ROUND17)
    for name in bench_guards.BACKBONE:
        s = _by(g, "backbone scaling", name)
        assert s["holds"] is None and "--backbone" in s["note"]
    m = _by(g, "memory per flow", bench_guards.BACKBONE_50K)
    assert m["holds"] is None and m["note"].startswith(bench_guards.BACKBONE_50K + ": not measured")
