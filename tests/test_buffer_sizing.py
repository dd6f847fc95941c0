"""``buffer-sizing``: the mechanism the study rests on, its scale, and the pieces of its
analysis. A buffer of RTT × C / √n for many flows keeps a drop-tail link full because the
flows' windows are desynchronised; the same buffer under one flow does not (its sawtooth
empties the queue), and a full RTT × C buffer gives the one flow its link back."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import pytest

from qoslab.budget import estimate as budget_estimate
from qoslab.runs.simulate import run
from qoslab.studies.buffer_sizing import study
from qoslab.studies.buffer_sizing.claims import CLAIMS, LEVELS, RULE_HOLDS, SHORT_LOAD_CLAIM, TEN_MBIT
from qoslab.studies.buffer_sizing.topology import (
    bdp_pkts,
    buffer_scenario,
    rtt_of,
    rtts_ms,
    rule_pkts,
    short_flow_scenario,
)

RATE = 100e6


def utilisation(n: int, buffer_pkts: int, sender: str = "reno") -> float:
    sc = buffer_scenario(
        n, buffer_pkts, rate_bps=RATE, duration_s=40.0, measure_from_s=10.0, tcp=study.tcp_of(sender)
    )
    return float(run(sc, 1, tables=False).summary()["utilization"])


def test_the_small_buffer_keeps_many_flows_busy_but_not_one() -> None:
    small = round(rule_pkts(RATE, 100.0, 256))  # RTT × C / √256 at the mean RTT: 78 packets
    assert small == 78
    many, one = utilisation(256, small), utilisation(1, small)
    assert many >= 0.97, many
    assert one <= 0.50, one
    # the drop-tail limit raised to RTT × C: the one flow fills its link again
    assert utilisation(1, round(bdp_pkts(RATE, 100.0))) >= 0.97


def test_the_rtt_readings() -> None:
    r = rtts_ms(5, 60.0, 140.0)
    assert r == [60.0, 80.0, 100.0, 120.0, 140.0]
    assert rtt_of("mean", r) == 100.0 and rtt_of("max", r) == 140.0
    assert rtt_of("harmonic", r) < 100.0
    with pytest.raises(ValueError, match="unknown RTT reading 'median'"):
        rtt_of("median", r)


def test_the_headline_buffers_are_the_sentences() -> None:
    # 10 Mbit of 1000-byte packets; 1 % of 2.5 Gb/s × 250 ms
    assert study.headline_buffer("10mbit", "reduced", 10e9, 50_000, "as stated") == 1250
    assert study.headline_buffer("reduce", "reduced", 2.5e9, 10_000, "as stated") == 781
    assert study.headline_buffer("reduce", "bdp", 2.5e9, 10_000, "as stated") == 78125
    # scaled: the same per-flow rate (250 kb/s) with 400 flows, the rule's reduction there
    pts = {(p["sentence"], p["arm"]): p for p in study.headline_points(True)}
    assert pts[("reduce", "reduced")]["rate"] == 100e6 and pts[("reduce", "reduced")]["n"] == 400
    assert pts[("10mbit", "reduced")]["rate"] == 80e6
    assert {p["scale"] for p in study.headline_points(False)} == {"scaled", "as stated"}
    # the rule sweep keeps 250 kb/s per flow from 400 flows on
    assert study.rule_rate(100) == study.rule_rate(400) == 100e6 and study.rule_rate(2000) == 500e6


def test_the_minimum_buffer_is_interpolated_never_clipped() -> None:
    fr = [0.01, 0.1, 1.0]
    assert math.isclose(study.min_buffer(fr, [0.5, 0.9, 1.0], 0.95), math.sqrt(0.1))
    assert math.isnan(study.min_buffer(fr, [0.99, 1.0, 1.0], 0.98))  # below the grid
    assert math.isnan(study.min_buffer(fr, [0.5, 0.6, 0.7], 0.98))  # above it


def test_the_claims_are_declared_once_with_a_part_per_level() -> None:
    words = [c.words for c in CLAIMS.claims]
    assert len(words) == len(set(words)) == 6
    scales = CLAIMS.claims[1]
    assert [p.name for p in scales.parts] == [f"{lvl:.1%}" for lvl in LEVELS]


def test_the_generator_scales_to_50000_flows_and_its_budget_grows_no_faster_than_n() -> None:
    per_flow = {}
    for n, rate in ((10_000, 2.5e9), (50_000, 10e9)):
        t = time.monotonic()
        sc = buffer_scenario(n, 1250, rate_bps=rate, rtt_lo_ms=150.0, rtt_hi_ms=350.0, duration_s=100.0)
        assert time.monotonic() - t < 30.0
        assert len(sc.resolved["flows"]) == n
        assert sc.resolved["measurement"]["interval_ns"] == 10_000_000_000  # coarse series
        per_flow[n] = budget_estimate(sc.resolved, [], sc.core).memory_bytes / n
        # an access link (20 fair shares: 5 and 4 Mb/s) holds a round trip of the longest RTT
        # at its rate, at least 100 packets: 219 and 175 packets of 1000 bytes at 350 ms
        links = {lk["name"]: lk for lk in sc.resolved["links"]}
        assert links["access0"]["queue_ab"]["limit_pkts"] == {10_000: 219, 50_000: 175}[n], links["access0"]
    # the access links run at 20 fair shares (their propagation lines stay 20 × C × delay) and
    # the series are sampled every 10 s: the estimate per flow does not grow with n
    assert per_flow[50_000] <= per_flow[10_000], per_flow


def short_b99(rate: float, load: float, seed: int) -> float:
    sc = short_flow_scenario(
        rate,
        80.0,
        load,
        size_pkts=study.SHORT_PKTS,
        duration_s=40.0,
        measure_from_s=5.0,
        tcp=study.tcp_of("sack"),
        name="short",
        seed=seed,
    )
    m = study.short_metrics(run(sc, seed))
    assert m["refused"] == 0
    return m["b99_pkts"]


def test_short_flows_queue_by_the_load_not_by_the_line_rate() -> None:
    """Poisson arrivals of 20-packet transfers at the same load of a 25 and a 400 Mb/s link give
    the same queue tail (mean B99 over 3 seeds within a quarter), and raising the load from 0.5
    to 0.9 multiplies it: the arrival rate follows the load of the link it crosses. Were the
    arrivals not scaled with the capacity (the same flows per second at both rates) the faster
    link would be at 1/16 of the load and its queue near empty."""
    slow = [short_b99(25e6, 0.8, s) for s in (1, 2, 3)]
    fast = [short_b99(400e6, 0.8, s) for s in (1, 2, 3)]
    assert abs(sum(fast) / sum(slow) - 1.0) < 0.25, (slow, fast)
    light = [short_b99(100e6, 0.5, s) for s in (1, 2, 3)]
    heavy = [short_b99(100e6, 0.9, s) for s in (1, 2, 3)]
    assert sum(heavy) > 3 * sum(light), (light, heavy)
    assert 5 <= sum(light) / 3 <= 40, light


def test_the_short_flow_sweep_is_a_star_around_its_base() -> None:
    pts = study.short_points("sack")
    assert len(pts) == len({tuple(sorted(p.items())) for p in pts}) == 8
    base = study.SHORT_BASE
    for p in pts:
        assert sum(p[k] != base[k] for k in ("rate", "rtt", "load")) <= 1, p
    assert {p["rate"] for p in pts} == set(study.SHORT_RATES)
    assert {p["rtt"] for p in pts} == set(study.SHORT_RTTS)
    assert {p["load"] for p in pts} == set(study.SHORT_LOADS)


@pytest.mark.slow
def test_the_quick_reproduction_decides_what_the_page_says(tmp_path: Path) -> None:
    """The quick reproduction (3 seeds, 40 s runs, ~75 s on 2 cores) and the verdicts the page
    reports: RTT × C / √n holds with 400 flows under both senders and fails the declared 98 %
    with 100 Reno flows; the scaled 10 Mbit sentence holds."""
    from qoslab import reproduction

    reproduction.reproduce(
        "buffer-sizing", quick=True, out=tmp_path, store=tmp_path / "store", progress=False
    )
    doc = json.loads((tmp_path / "buffer-sizing" / "verdicts.json").read_text())
    got = {(v["claim"], v["reading"]): v["verdict"] for v in doc["verdicts"]}
    for sender in ("reno", "sack"):
        assert got[(RULE_HOLDS.words, f"RTT mean · {sender} · n=400")] == "reproduces"
    assert got[(RULE_HOLDS.words, "RTT mean · reno · n=100")] == "does not reproduce"
    assert got[(TEN_MBIT.words, "scaled · sack · n=400")] == "reproduces"
    assert got[(SHORT_LOAD_CLAIM.words, "B99 · sack · 20-packet flows")] == "reproduces"
