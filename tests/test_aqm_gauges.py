"""The state variables Adaptive RED, PIE and CoDel publish as gauges (columns of series_queue,
declared in each discipline's own file), checked against what each algorithm says the variable
does on a whole scenario:

- Adaptive RED's ``max_p`` (Floyd, Gummadi & Shenker 2001, ns-2's ``adaptive_ 1``): every change
  is one AIMD step, ``max_p + min(α, max_p/4)`` or ``max_p · β``, at least ``interval`` apart,
  inside [bottom, top], and it does move under the example's load;
- PIE's ``drop_prob`` (RFC 8033): the sample is the controller's value at the sample time.
  The controller runs its updates lazily, at the next arrival or departure; once a CBR source
  stops and the link is idle there is no event at all, yet RFC 8033 §4.2 lowers drop_prob every
  t_update (by α·(0 − target) and the ×0.98 decay), so the series must fall to 0 sample by sample;
- CoDel's ``count`` and ``dropping`` (RFC 8289): under a constant overload that no drop relieves
  CoDel enters the dropping state once and stays there, dropping at ``interval/√count``; its
  k-th drop after entering comes ``Σ_{j<k} interval/√j`` after the first, so count at time t is
  the largest n with that sum ≤ t (≈ (t / 2·interval)²).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import qoslab
from qoslab.scenario import Scenario

UDP_OVERLOAD = """
name = "gauge-{kind}"
duration = "{duration}"

[measurement]
bottleneck = "bottleneck"
interval = "{interval}"

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
queue = {{ type = "droptail", limit = "10000pkts" }}

[[link]]
name = "bottleneck"
a = "r1"
b = "dst"
bandwidth = "10Mbps"
delay = "10ms"
queue = {queue}

[[flow]]
name = "cbr"
type = "cbr"
src = "src"
dst = "dst"
rate = "20Mbps"
packet_size = "1000B"
stop = "{stop}"
"""


def bottleneck(res: qoslab.Result, column: str) -> pd.DataFrame:
    s = res.series_queue
    return s[s["queue"] == "bottleneck:ab"][["time_s", column]].reset_index(drop=True)


def overload(kind: str, queue: str, duration: str, stop: str, interval: str) -> qoslab.Result:
    text = UDP_OVERLOAD.format(kind=kind, queue=queue, duration=duration, stop=stop, interval=interval)
    return qoslab.run(Scenario.from_toml(text, f"gauge-{kind}.toml"), seed=1)


def test_ared_max_p_moves_by_one_aimd_step_at_a_time() -> None:
    res = qoslab.run(qoslab.load_scenario("scenarios/examples/ared.toml"), seed=1)
    s = bottleneck(res, "max_p")
    # the example: max_p = 0.1, interval 0.5 s, alpha 0.01, beta 0.9, top 0.5 (the defaults)
    alpha, beta, top, interval = 0.01, 0.9, 0.5, 0.5
    assert s["max_p"].iloc[0] == pytest.approx(0.1)
    p = s["max_p"].to_numpy()
    changed = np.flatnonzero(np.diff(p) != 0) + 1
    assert len(changed) >= 10, "max_p never adapts under the example's load"
    for i in changed:
        before, after = p[i - 1], p[i]
        step_up = before + min(alpha, before / 4)
        up, down = pytest.approx(step_up, rel=1e-12), pytest.approx(before * beta, rel=1e-12)
        one_step = after == up or after == down
        assert one_step, f"t={s['time_s'][i]}: {before} → {after} is not one AIMD step"
    # two changes are at least `interval` apart; each is seen at the first sample after it
    dt = float(s["time_s"].diff().max())
    t = s["time_s"].to_numpy()[changed]
    assert np.all(np.diff(t) >= interval - dt - 1e-9)
    assert p.max() <= top
    assert p.min() > 0


def test_pie_drop_prob_falls_while_the_link_is_idle() -> None:
    pie = '{ type = "pie", limit = "1000pkts", target = "15ms", t_update = "15ms" }'
    res = overload("pie", pie, duration="8s", stop="4s", interval="15ms")
    s = bottleneck(res, "drop_prob")
    busy = s[(s["time_s"] > 2) & (s["time_s"] <= 4)]["drop_prob"]
    assert busy.mean() > 0.2, "PIE does not raise drop_prob under a 2× overload"
    # after the source stops the queue drains within 1000 packets at 10 Mbit/s (0.8 s); from
    # then on nothing happens on the link, and only the controller moves drop_prob
    idle = s[s["time_s"] > 5.0]["drop_prob"].to_numpy()
    assert idle[0] > 0, "drop_prob already 0 when the link goes idle: the test shows nothing"
    positive = idle[idle > 0]
    assert len(positive) >= 3
    assert np.all(np.diff(positive) < 0), "drop_prob stands still while the link is idle"
    assert idle[-1] == 0.0


def _codel_count(t: float, interval: float) -> int:
    """count after `t` seconds in the dropping state: drop k (k = 1, 2, …) comes
    Σ_{j<k} interval/√j after the first."""
    n, at = 1, 0.0
    while at + interval / math.sqrt(n) <= t:
        at += interval / math.sqrt(n)
        n += 1
    return n


def test_codel_count_follows_the_control_law_under_constant_overload() -> None:
    codel = '{ type = "codel", limit = "100000pkts", target = "5ms", interval = "100ms" }'
    res = overload("codel", codel, duration="6s", stop="6s", interval="10ms")
    s = bottleneck(res, "count").merge(bottleneck(res, "dropping"), on="time_s")
    on = s[s["dropping"] == 1]
    assert len(on) > 0, "CoDel never enters the dropping state"
    entered = on["time_s"].iloc[0]
    # it never leaves: the sojourn time only grows
    assert (s[s["time_s"] >= entered]["dropping"] == 1).all()
    for t in (1.0, 3.0, 5.0):
        row = s[s["time_s"] >= entered + t].iloc[0]
        since = row["time_s"] - entered
        # the first drop comes within one sample after `entered`
        expect_lo, expect_hi = _codel_count(since - 0.01, 0.1), _codel_count(since + 0.01, 0.1)
        assert expect_lo - 1 <= row["count"] <= expect_hi + 1, (t, row["count"], expect_lo, expect_hi)
    assert on["count"].iloc[-1] > 400  # ≈ (5.x s / 0.2 s)²
