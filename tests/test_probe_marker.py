"""The adaptive probe marker (Neglia et al.): scenario keys, what the simulator does with it, the
ns-2 refusal, and a short version of the experiment asserting the paper's central claim (10 flows,
hard differentiation: the marker's delay/utilisation frontier lies below the all-IN one).
The state machine itself is unit-tested in crates/qoslab-core/src/conditioner/probe.rs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import qoslab
from qoslab import ns2
from qoslab.experiments import probe_marker as pm
from qoslab.scenario import Scenario, to_ns2_resolved
from qoslab.simulate import run


def _scenario(n: int = 2, **meter: object) -> Scenario:
    sc = pm.single_bottleneck(n, "probe", 10, "hard", duration_s=30, start_s=5)
    overrides = [
        f"conditioner[0].meter.{k}={v!r}" if isinstance(v, str) else f"conditioner[0].meter.{k}={v}"
        for k, v in meter.items()
    ]
    return sc.with_overrides(overrides) if overrides else sc


def test_w_q_reading_gives_the_papers_value():
    # 1500 B at 6 Mbps is 2 ms; ten mean RTTs 1.6 s: 1 − exp(−1/800).
    assert pm.w_q() == pytest.approx(1 - np.exp(-1 / 800), rel=1e-12)
    assert round(pm.w_q(), 4) in (0.0012, 0.0013) and abs(pm.w_q() - 0.0012) < 6e-5
    r = pm.rtts_ms(10)
    assert r[0] == 124 and r[-1] == 198 and np.mean(r) == pytest.approx(161)


@pytest.mark.parametrize(
    "change, key, words",
    [
        ({"alpha": 1.5}, "conditioner[0].meter.alpha", "(0, 1)"),
        ({"a0": 0.0}, "conditioner[0].meter.a0", "positive"),
        ({"increase": "triple"}, "conditioner[0].meter.increase", "triple"),
        ({"cir": "1Mbps"}, "conditioner[0].meter.cir", "not a parameter of a probe"),
        ({"mode": "aware"}, "conditioner[0].meter.mode", "remove `mode`"),
    ],
)
def test_bad_probe_keys_name_the_key(change, key, words):
    with pytest.raises(qoslab.ScenarioError) as e:
        _scenario(**change)
    assert e.value.args[3] == key, e.value.args[0]
    assert words in e.value.args[0]


def test_probe_marker_rejects_aggregate_scope_and_probe_keys_elsewhere():
    sc = _scenario()
    with pytest.raises(qoslab.ScenarioError) as e:
        sc.with_overrides(["conditioner[0].scope=aggregate"])
    assert e.value.args[3] == "conditioner[0].scope" and "per flow" in e.value.args[0]
    with pytest.raises(qoslab.ScenarioError) as e:
        sc.with_overrides(
            [
                "conditioner[0].meter.type=token_bucket",
                "conditioner[0].meter.cir=1Mbps",
                "conditioner[0].meter.cbs=10KB",
            ]
        )
    # A probe key left on a token bucket is named (the first of alpha, a0 in key order).
    assert e.value.args[3] in ("conditioner[0].meter.alpha", "conditioner[0].meter.a0")
    assert "not a parameter of a token_bucket meter" in e.value.args[0]


def test_ns2_exporter_refuses_the_probe_marker():
    reason = ns2.unsupported_reason(to_ns2_resolved(_scenario().resolved, 1))
    assert reason is not None and "probe" in reason and "sequence numbers" in reason


def test_marker_in_the_simulator_marks_bursts_and_exposes_a_in():
    res = run(_scenario(), 1)
    f = res.flows
    # Every data packet met the marker: mostly IN, some OUT probes, no red.
    assert (f["green_packets"] > 0).all() and (f["yellow_packets"] > 0).all()
    assert (f["red_packets"] == 0).all()
    assert (f["yellow_packets"] < 0.1 * f["green_packets"]).all()
    g = res.series_gauges
    assert set(g["name"]) == {"a_in", "l_in", "marked_in", "marked_out", "retransmissions"}
    last = g[g["time_s"] == g["time_s"].max()].pivot_table(index="flow_name", columns="name", values="value")
    # The marker's own counts agree with the simulator's per-flow colours (every data packet that
    # left the sender crossed its access link; the last sample is at the end of the run).
    assert (last["marked_in"] + last["marked_out"]).sum() == pytest.approx(
        float((f["green_packets"] + f["yellow_packets"]).sum()), abs=len(f)
    )
    # Retransmissions seen by sequence number vs the sender's count (first segments are never
    # retransmissions; a timeout can resend several segments that the marker all sees as old).
    assert last["retransmissions"].sum() == pytest.approx(float(f["retransmitted_packets"].sum()), abs=len(f))
    assert (last["a_in"] > 0).all()


def test_sequence_wrap_around_changes_nothing():
    # SN = (isn + segment) mod 2³²: an ISN just below 2³² wraps within the first segments; with
    # serial-number comparison the run is identical to ISN 0.
    a = run(_scenario(), 3)
    b = run(_scenario(isn=2**32 - 5), 3)
    cols = ["goodput_bps", "green_packets", "yellow_packets", "retransmitted_packets", "timeouts"]
    pd.testing.assert_frame_equal(a.flows[cols], b.flows[cols])


# The short experiment: 10 flows, hard differentiation, 400 s runs measured after 50 s, four seeds.
CLAIM_MIN_IN = (10, 20, 40)
CLAIM_SEEDS = (1, 2, 3, 4)


@pytest.fixture(scope="module")
def claim_runs() -> pd.DataFrame:
    return pm.quick_frontier(CLAIM_SEEDS, CLAIM_MIN_IN, duration_s=400, start_s=50)


def test_marker_frontier_lies_below_the_no_marker_frontier_10_flows_hard(claim_runs):
    m = pm.mean_frontier(claim_runs)
    probe = m[m["marker"] == "probe"].set_index("min_in")
    none = m[m["marker"] == "none"].set_index("min_in")
    # At every threshold the marker point dominates the all-IN point: more goodput, less delay.
    for mi in CLAIM_MIN_IN:
        assert probe.loc[mi, "goodput_util"] > none.loc[mi, "goodput_util"], mi
        assert probe.loc[mi, "delay_ms"] < none.loc[mi, "delay_ms"], mi
    # At equal utilisation (interpolating the all-IN frontier) the marker has less delay, and no
    # all-IN point dominates a marker point.
    gap = pm.frontier_gap(probe.reset_index()[["min_in", "goodput_util", "delay_ms"]], none.reset_index())
    comparable = gap[np.isfinite(gap["delay_diff_ms"])]
    assert len(comparable) >= 1
    assert (comparable["delay_diff_ms"] < 0).all(), gap
    assert not gap["dominated"].any(), gap
    # The same per seed: each seed's marker point dominates its all-IN point at min_in 20.
    per = claim_runs[claim_runs["min_in"] == 20].pivot_table(
        index="seed", columns="marker", values=["goodput_util", "delay_ms"]
    )
    assert (per["goodput_util"]["probe"] > per["goodput_util"]["none"]).all()
    assert (per["delay_ms"]["probe"] < per["delay_ms"]["none"]).all()


def test_short_experiment_in_share_losses_and_delay_measure(claim_runs):
    p = claim_runs[claim_runs["marker"] == "probe"]
    # Paper (10 flows): about 98 % to more than 99 % of the packets IN.
    assert p["in_share"].between(0.975, 0.997).all(), p["in_share"]
    # Hard differentiation: OUT losses far above IN losses (the probes are dropped).
    assert (p["loss_out_pct"] > 50).all() and (p["loss_in_pct"] < 2).all()
    # Only RIO drops; the per-packet delay agrees with Little's law on 1 s queue samples.
    assert (claim_runs["overflow_drops"] == 0).all()
    rel = (claim_runs["little_delay_ms"] - claim_runs["delay_ms"]).abs() / claim_runs["delay_ms"]
    assert (rel < 0.1).all(), rel
    n = claim_runs[claim_runs["marker"] == "none"]
    assert (n["in_share"] == 1.0).all() and n["loss_out_pct"].isna().all()


@pytest.mark.slow
def test_full_reproduction(tmp_path):
    from qoslab.experiments.runner import reproduce

    rep = reproduce("probe-marker", out=tmp_path, store=tmp_path / "store", progress=False)
    d = rep.out
    for name in ("fig3-6-frontiers", "fig7-loss", "fig8-onoff", "fig9-two-domains"):
        assert (d / f"{name}.png").stat().st_size > 10_000
    pts = pd.read_csv(d / "frontier-points.csv")
    assert (pts["overflow_drops"] == 0).all()
    gap = pd.read_csv(d / "frontier-gap.csv")
    g = gap[(gap["flows"] == 10) & (gap["diff"] == "hard") & (gap["marker"] == "probe")]
    # Hard differentiation proper (max_out = 6 < min_in): the marker's frontier lies below.
    hard = g[(g["min_in"] >= 10) & np.isfinite(g["delay_diff_ms"])]
    assert len(hard) >= 3 and (hard["relative_diff"] < -0.2).all(), g
    assert not g["dominated"].any(), g
    share = pts[(pts["flows"] == 10) & (pts["marker"] == "probe")]["in_share"]
    assert share.between(0.975, 0.997).all()
    # What we measure with 40 flows and 1500-byte packets (docs/experiments/probe-marker.md): the
    # claim does not reproduce, the marker's frontier lies above the all-IN one.
    g40 = gap[(gap["flows"] == 40) & (gap["diff"] == "hard") & (gap["marker"] == "probe")]
    c40 = g40[np.isfinite(g40["delay_diff_ms"])]
    assert len(c40) >= 3 and (c40["delay_diff_ms"] > 0).mean() >= 0.75, g40


def test_claim_holds_in_the_ns2_flavour_of_rio():
    """ns-2.35 dsRED's RIO rules (the ns2 flavour) lower the all-IN baseline's goodput at small
    thresholds (10 flows, min_in 4: 0.74 against 0.85) but leave the verdict as it is: at min_in 20
    (hard differentiation, the thresholds dsRED can express) the marker point still dominates the
    all-IN point in each seed, in both flavours (docs/experiments/probe-marker.md)."""
    from qoslab.ns2.flavour import flavours_used, ns2_flavoured

    for seed in (1, 2):
        for flavour in ("reference", "ns2"):
            m = {}
            for mk in ("none", "probe"):
                sc = pm.single_bottleneck(10, mk, 20, "hard", duration_s=300, start_s=50)
                if flavour == "ns2":
                    sc = ns2_flavoured(sc)[0]
                assert flavours_used(sc) == {"rio": {flavour}}
                m[mk] = pm.probe_metrics(run(sc, seed))
            assert m["probe"]["goodput_util"] > m["none"]["goodput_util"], (seed, flavour, m)
            assert m["probe"]["delay_ms"] < m["none"]["delay_ms"], (seed, flavour, m)


def test_ns2_flavour_lowers_the_all_in_baseline_at_small_thresholds():
    """The difference the flavour makes (and the reason the claim is checked in both): all IN,
    10 flows, min_in 4, ns-2's rules give less goodput, seed for seed."""
    from qoslab.ns2.flavour import ns2_flavoured

    sc = pm.single_bottleneck(10, "none", 4, "hard", duration_s=300, start_s=50)
    for seed in (1, 2):
        ref = pm.probe_metrics(run(sc, seed))["goodput_util"]
        ns2 = pm.probe_metrics(run(ns2_flavoured(sc)[0], seed))["goodput_util"]
        assert ns2 < ref - 0.04, (seed, ref, ns2)


def test_gain_disappears_when_the_probes_are_marked_in():
    """Mechanism disabled: the probe marker runs, but its OUT (probe) packets leave as IN
    (``yellow = AF11``). The frontier gain disappears: the point falls back onto the all-IN one
    (10 flows, hard, min_in 20), far from the marker's (less goodput, more delay)."""
    for seed in (1, 2):
        probe = pm.single_bottleneck(10, "probe", 20, "hard", duration_s=300, start_s=50)
        t = probe.table()
        t["conditioner"][0]["yellow"] = "AF11"
        off = pm.probe_metrics(run(Scenario.from_table(t, "probes marked IN"), seed))
        on = pm.probe_metrics(run(probe, seed))
        none = pm.probe_metrics(
            run(pm.single_bottleneck(10, "none", 20, "hard", duration_s=300, start_s=50), seed)
        )
        assert off["in_share"] == 1.0
        assert on["goodput_util"] > off["goodput_util"] + 0.03 and on["delay_ms"] < off["delay_ms"]
        assert abs(off["goodput_util"] - none["goodput_util"]) < 0.03, (off, none)
