"""Adaptive RED (Floyd, Gummadi & Shenker 2001; ns-2.35's Queue/RED with adaptive_ 1), the
first queue discipline added as one file and one registry line (crates/qoslab-core/src/aqm/
ared.rs; docs/models/ared.md).

On FDD-RED's scenario 1 (five Reno flows, 1 Mbit/s, RED 25/75, max_p 0.01) plain RED's average
settles above the target band [min_th + 0.4Δ, max_th − 0.4Δ] = [45, 55]; Adaptive RED raises
max_p until the average is inside it. Both facts hold in ns-2 too, with the same drops.
"""

from __future__ import annotations

import numpy as np
import pytest

import qoslab
from conftest import SCENARIOS, require
from qoslab import ns2
from qoslab.scenario import to_ns2_resolved

SEEDS = range(1, 6)
#: As tests/test_ns2_agreement.py: per-flow throughput varies ~12 % between seeds, so 10 seeds
#: put the standard error of the ratio of means near 5 % and the 10 % tolerance at ~2 SE.
NS2_SEEDS = range(1, 11)


def scenario(kind: str, extra: list[str] | None = None) -> qoslab.Scenario:
    return qoslab.load_scenario(SCENARIOS / "fdd-red-s1.toml").with_overrides(
        [f"link.bottleneck.queue_ab.type={kind}", *(extra or [])]
    )


def mean_average(r: qoslab.Result) -> float:
    s = r.series_queue
    s = s[(s["queue"] == "bottleneck:ab") & (s["time_s"] >= 20)]
    return float(s["avg_queue"].mean())


def test_adaptive_red_brings_the_average_into_the_target_band():
    red = [mean_average(qoslab.run(scenario("red"), s)) for s in SEEDS]
    ared = [mean_average(qoslab.run(scenario("ared"), s)) for s in SEEDS]
    print(f"\nmean average queue, RED {np.round(red, 1)}, Adaptive RED {np.round(ared, 1)}")
    # Paired seeds: RED above the band (measured ~59), ARED inside [45, 55] (measured ~49).
    assert all(r > 55 for r in red), red
    assert all(45 <= a <= 55 for a in ared), ared
    assert all(a < r for a, r in zip(ared, red, strict=True))


def test_without_adaptation_adaptive_red_is_red():
    # An interval longer than the run never adapts max_p: every result equals RED's.
    a = qoslab.run(scenario("ared", ["link.bottleneck.queue_ab.interval=1000s"]), 3)
    r = qoslab.run(scenario("red"), 3)
    assert a.flows["throughput_bps"].tolist() == r.flows["throughput_bps"].tolist()
    assert a.summary()["drops"] == r.summary()["drops"]


def test_adaptive_red_keys_are_checked():
    with pytest.raises(qoslab.ScenarioError, match=r"queue_ab.beta.*beta must be in \(0, 1\)"):
        scenario("ared", ["link.bottleneck.queue_ab.beta=1.5"])
    with pytest.raises(qoslab.ScenarioError, match=r"queue_ab.bottom.*bottom must be in \(0, top"):
        scenario("ared", ["link.bottleneck.queue_ab.bottom=0.6"])
    with pytest.raises(qoslab.ScenarioError, match=r"`alpha` is not a parameter of a red queue"):
        scenario("red", ["link.bottleneck.queue_ab.alpha=0.01"])


def test_adaptive_red_exports_to_ns2_as_adaptive_queue_red():
    sc = scenario("ared")
    assert ns2.unsupported_reason(to_ns2_resolved(sc.resolved, 1)) is None
    q = next(lk for lk in sc.resolved["links"] if lk["name"] == "bottleneck")["queue_ab"]
    export = q["ns2"]["queue"]
    settings = dict((k, v) for k, v in export["settings"])
    assert export["class"] == "RED"
    assert settings["adaptive_"] == "1"
    assert (settings["alpha_"], settings["beta_"], settings["interval_"], settings["top_"]) == (
        0.01,
        0.9,
        0.5,
        0.5,
    )


@pytest.mark.ns2
def test_adaptive_red_agrees_with_ns2():
    require("ns")
    rows = {}
    for kind in ("red", "ared"):
        sc = scenario(kind)
        q_thr, q_drops, q_early, n_thr, n_drops, n_early = [], [], [], [], [], []
        for seed in NS2_SEEDS:
            r = qoslab.run(sc, seed)
            assert not r.violations
            b = r.bottleneck
            q_thr.append(r.flows["throughput_bps"].to_numpy())
            q_drops.append(b["early_drops"] + b["forced_drops"] + b["overflow_drops"])
            q_early.append(b["early_drops"])
            o = ns2.run_ns2(to_ns2_resolved(sc.resolved, seed), seed)
            lk = next(x for x in o["links"] if x["name"] == "bottleneck" and x["direction"] == "ab")
            n_thr.append([f["throughput_bps"] for f in o["flows"]])
            n_drops.append(lk["drops"])
            n_early.append(lk["early_drops"])
        per_flow = np.mean(q_thr, 0) / np.mean(n_thr, 0)
        rows[kind] = (np.mean(q_drops), np.mean(n_drops), np.mean(q_early), np.mean(n_early))
        print(
            f"\n{kind}: qoslab/ns-2 per-flow throughput {np.round(per_flow, 3)}; drops "
            f"{rows[kind][0]:.1f} vs {rows[kind][1]:.1f}; early {rows[kind][2]:.1f} vs {rows[kind][3]:.1f}"
        )
        assert np.all(np.abs(per_flow - 1) <= 0.10), per_flow
        assert abs(rows[kind][0] / rows[kind][1] - 1) <= 0.15
        assert abs(rows[kind][2] / rows[kind][3] - 1) <= 0.15
    # The adaptation's effect is the same in both: more early drops than RED (max_p rises).
    assert rows["ared"][2] > 1.15 * rows["red"][2]
    assert rows["ared"][3] > 1.15 * rows["red"][3]
