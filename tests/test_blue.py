"""BLUE (Feng, Kandlur, Saha & Shin, IEEE/ACM ToN 2002; crates/qoslab-core/src/aqm/blue.rs,
docs/models/blue.md) on a whole scenario, read through its gauge p_m (a column of series_queue).

A 10 Mbit/s bottleneck fed by two CBR sources of 1000-byte packets: 20 Mbit/s until 10 s and 4
Mbit/s throughout. While the offered 24 Mbit/s overflows the buffer, p_m climbs by d1 at most
once per freeze_time; once the early drops leave less than the link rate, the queue empties,
the link goes idle and p_m comes down by d2: it settles where the accepted load matches the
link, p_m ≈ 1 − C/λ = 1 − 10/24. After 10 s only 4 Mbit/s remains; the link goes idle after
every packet and p_m falls by d2 per freeze_time to 0.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import qoslab
from conftest import ROOT

D1, D2, FREEZE = 0.02, 0.01, 0.1
C, HEAVY, LIGHT = 10e6, 20e6, 4e6
EXAMPLE = ROOT / "scenarios" / "examples" / "blue.toml"


def scenario(queue: str = "") -> qoslab.Scenario:
    return qoslab.Scenario.from_toml(
        f"""
name = "blue-cbr"
duration = "18s"
[measurement]
interval = "10ms"
start = "5s"
end = "10s"
bottleneck = "bn"
[[node]]
name = "src"
[[node]]
name = "r1"
[[node]]
name = "dst"
[[link]]
name = "access"
a = "src"
b = "r1"
bandwidth = "100Mbps"
delay = "1ms"
queue = {{ type = "droptail", limit = "1000pkts" }}
[[link]]
name = "bn"
a = "r1"
b = "dst"
bandwidth = "10Mbps"
delay = "5ms"
queue = {{ type = "blue", limit = "50pkts", d1 = {D1}, d2 = {D2}, freeze_time = "{FREEZE}s"{queue} }}
[[flow]]
name = "heavy"
type = "cbr"
src = "src"
dst = "dst"
rate = "20Mbps"
packet_size = "1000B"
stop = "10s"
[[flow]]
name = "light"
type = "cbr"
src = "src"
dst = "dst"
rate = "4Mbps"
packet_size = "1000B"
"""
    )


@pytest.fixture(scope="module")
def run() -> qoslab.Result:
    return qoslab.run(scenario(), 1)


def p_m(res: qoslab.Result) -> pd.DataFrame:
    s = res.series_queue
    return s[s["queue"] == "bn:ab"][["time_s", "p_m", "queue_packets"]].reset_index(drop=True)


def test_p_m_rises_by_d1_at_most_once_per_freeze_time_under_overload(run: qoslab.Result) -> None:
    s = p_m(run)
    rise = s[s["time_s"] <= 2.0]
    # while the buffer overflows, p_m only rises, in whole steps of d1
    steps = rise["p_m"] / D1
    assert np.allclose(steps, np.round(steps), atol=1e-9), rise["p_m"].tolist()
    assert (np.diff(rise["p_m"]) >= -1e-12).all()
    # The buffer fills in 50 · 8000 bit / (24 − 10) Mbit/s ≈ 29 ms and stays full (an arrival
    # takes each slot a departure frees, every 0.8 ms), so loss events come at most ~1 ms apart:
    # the k-th increase is the first loss event more than 100 ms after the (k−1)-th (the first
    # more than 100 ms after t = 0), between k·100 ms and k·101 ms.
    for t, v in zip(rise["time_s"], rise["p_m"], strict=True):
        k = round(v / D1)
        assert np.floor(t / (FREEZE + 0.001)) <= k <= t / FREEZE + 1e-9, (t, v)
    assert rise["p_m"].iloc[-1] == pytest.approx(19 * D1)


def test_p_m_settles_where_the_accepted_load_meets_the_link(run: qoslab.Result) -> None:
    s = p_m(run)
    settled = s[(s["time_s"] >= 5.0) & (s["time_s"] < 10.0)]["p_m"]
    target = 1 - C / (HEAVY + LIGHT)
    print(f"\nmean p_m over 5-10 s: {settled.mean():.4f} (1 − C/λ = {target:.4f})")
    assert settled.mean() == pytest.approx(target, abs=0.03)


def test_arrivals_are_dropped_with_probability_p_m(run: qoslab.Result) -> None:
    # The early drops inside the window (5-10 s) over the arrivals match the mean p_m: the drop
    # is what BLUE's probability says (without it there would be no early drop at all).
    s = p_m(run)
    mean_p = s[(s["time_s"] >= 5.0) & (s["time_s"] < 10.0)]["p_m"].mean()
    lk = run.links
    bn = lk[(lk["link_name"] == "bn") & (lk["direction"] == "ab")].iloc[0]
    rate = bn["window_early_drops"] / bn["window_arrivals"]
    print(f"\nearly-drop rate {rate:.4f}, mean p_m {mean_p:.4f}")
    assert bn["window_early_drops"] > 0
    assert rate == pytest.approx(mean_p, abs=0.02)
    # and the link stays busy while the overflows are few
    assert bn["window_overflow_drops"] < 0.1 * bn["window_early_drops"]
    assert run.summary()["utilization"] > 0.95


def test_p_m_falls_by_d2_per_freeze_time_once_the_link_goes_idle(run: qoslab.Result) -> None:
    s = p_m(run)
    after = s[s["time_s"] >= 10.1]
    start = float(after["p_m"].iloc[0])
    assert start > 0.4
    # the light source alone leaves the link idle after every packet (every 2 ms): p_m falls by
    # d2 once per 100-102 ms, in whole steps of d2, down to 0
    drops = (start - after["p_m"]) / D2
    assert np.allclose(drops, np.round(drops), atol=1e-9)
    assert (np.diff(after["p_m"]) <= 1e-12).all()
    at_zero = float(after[after["p_m"] == 0.0]["time_s"].iloc[0])
    steps = round(start / D2)
    assert 10.1 + (steps - 1) * FREEZE <= at_zero <= 10.1 + (steps + 1) * (FREEZE + 0.002) + 0.01
    assert (after["queue_packets"] <= 1).all()


def test_ecn_capable_packets_are_marked_instead() -> None:
    # The example's 16 Reno flows: with ECN on (senders and queue) BLUE marks their data
    # instead of dropping it early; CBR packets, not ECN-capable, are dropped even then.
    example = qoslab.load_scenario(EXAMPLE).with_overrides(["duration=15s", "measurement.start=5s"])

    def bottleneck(sc: qoslab.Scenario) -> pd.Series:
        lk = qoslab.run(sc, 1).links
        return lk[(lk["link_name"] == "bottleneck") & (lk["direction"] == "ab")].iloc[0]

    plain = bottleneck(example)
    ecn = bottleneck(example.with_overrides(["tcp.ecn=true", "link.bottleneck.queue.ecn=true"]))
    print(f"\nearly drops / marks: {plain['early_drops']} / {plain['marks']} without ECN, ", end="")
    print(f"{ecn['early_drops']} / {ecn['marks']} with")
    assert plain["early_drops"] > 100 and plain["marks"] == 0
    # (measured: 1 early drop beside 866 marks: an arrival that was not ECN-capable)
    assert ecn["marks"] > 100 and ecn["early_drops"] <= 0.01 * ecn["marks"]
    res = qoslab.run(scenario(", ecn = true"), 1)
    lk = res.links
    bn = lk[(lk["link_name"] == "bn") & (lk["direction"] == "ab")].iloc[0]
    assert bn["marks"] == 0 and bn["early_drops"] > 0


def test_blue_keys_are_checked() -> None:
    def load(old: str, new: str) -> None:
        qoslab.Scenario.from_toml(scenario().text.replace(old, new), "bad.toml")

    with pytest.raises(qoslab.ScenarioError, match=r"^bad\.toml.*queue\.d1.*\(0, 1\]"):
        load(f"d1 = {D1}", "d1 = 1.5")
    with pytest.raises(qoslab.ScenarioError, match=r"^bad\.toml.*queue\.freeze_time"):
        load(f'freeze_time = "{FREEZE}s"', 'freeze_time = "0s"')
    with pytest.raises(qoslab.ScenarioError, match=r"^bad\.toml.*queue\.threshold"):
        load(f"d2 = {D2}", f'd2 = {D2}, threshold = "0pkts"')
