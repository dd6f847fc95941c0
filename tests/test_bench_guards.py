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
    assert bench_guards.verdict(g) == "all 11 judged guards hold (3 not judged)"
    g3 = bench_guards.evaluate(ROUND17_NS3)
    assert _by(g3, "core vs ns-3", "cubic-200flows-100Mbps-5s")["value"] > 100
    assert bench_guards.verdict(g3) == "all 14 judged guards hold (2 not judged)"


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
