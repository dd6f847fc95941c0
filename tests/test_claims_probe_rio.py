"""Issue 77 item 3 for probe-marker and rio-plus-o: the quantities behind "almost doubled" (a
ratio of gains), "points ... become denser" (frontier density), "especially for the larger
profile flows" (an ordering, which the paper's own Table I contradicts) and the AS OUT drop
probability, and how their declarations decide (no simulation: synthetic per-seed tables)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from qoslab.reproduction.rests_on import RESTS_ON
from qoslab.studies.probe_marker import claims as pc
from qoslab.studies.rio_plus_o import claims as rc
from qoslab.verdicts.core import DOES_NOT, REPRODUCES, WEAKER, decide
from qoslab.verdicts.magnitudes import DECLARED
from qoslab.verdicts.rules import find

PM = DECLARED["probe-marker"]
RO = DECLARED["rio-plus-o"]


def test_gain_ratio_is_the_ratio_of_the_gains_per_seed():
    # frontier ratios (marker / all IN): A_IN + 1 at 0.5 (gain 0.5), 2·A_IN + 1 at 0.75 (0.25)
    plus = pd.Series({1: 0.5, 2: 0.6, 3: 0.7})
    orig = pd.Series({1: 0.75, 2: 0.8, 4: 0.9})
    r = pc.gain_ratio(plus, orig)
    assert list(r.index) == [1, 2]  # paired: only the seeds both have
    assert r[1] == pytest.approx(2.0) and r[2] == pytest.approx(2.0)
    # no gain of the original marker to compare with: no ratio
    assert math.isnan(pc.gain_ratio(pd.Series({1: 0.5}), pd.Series({1: 1.1}))[1])


def test_almost_doubled_is_a_ratio_band_not_a_difference():
    m = find(PM, pc.DOUBLED, pc.DOUBLED_RATIO_SECTION)
    assert (m.low, m.high, m.threshold, m.direction) == (1.6, 2.4, 1.0, "greater")
    # the difference record is its own part, with the frontier claims' smallest gain
    d = find(PM, pc.DOUBLED, "Sec. 4 (A_IN + 1 against 2·A_IN + 1, 10 flows, soft)")
    assert d is not m and d.high == -0.05
    assert decide((1.8, 2.1), m.direction, m.threshold, m.margin, m.bounds) == REPRODUCES
    assert decide((2.6, 3.1), m.direction, m.threshold, m.margin, m.bounds) == WEAKER  # past the far end
    assert decide((1.1, 1.4), m.direction, m.threshold, m.margin, m.bounds) == WEAKER
    assert decide((0.9, 1.4), m.direction, m.threshold, m.margin, m.bounds) == DOES_NOT


def test_frontier_density_along_goodput():
    # all IN spreads its four settings over 0.4 of goodput, the marker over 0.2: twice as dense
    rows = [
        {"seed": 1, "marker": mk, "goodput_util": x}
        for mk, xs in (("none", (0.5, 0.6, 0.8, 0.9)), ("probe", (0.6, 0.65, 0.75, 0.8)))
        for x in xs
    ]
    d = pc.frontier_density(pd.DataFrame(rows), "span")
    assert d[1] == pytest.approx(2.0)
    # median gap: all IN's gaps 0.1, 0.2, 0.1 (median 0.1); the marker's 0.05, 0.1, 0.05 (0.05)
    assert pc.frontier_density(pd.DataFrame(rows), "median gap")[1] == pytest.approx(2.0)


def test_high_load_and_density_primary_readings():
    hl = find(PM, pc.HIGH_LOAD, "Sec. 4, Figs. 3-4 (soft differentiation)")
    assert hl.is_primary("1500 B packets, high load = 40 flows, against 10 flows")
    assert hl.is_primary("1500 B packets, high load = 40 flows")
    assert not hl.is_primary("1500 B packets, high load = high utilisation (min_in ≥ 30), 40 flows")
    assert not hl.is_primary("1000 B packets, high load = 40 flows")
    de = find(PM, pc.DENSER, "Sec. 4.1 (Fig. 8: 10 flows, hard differentiation, ON/OFF UDP)")
    assert de.is_primary("1500 B packets, span, 5 s against 0.05 s")
    assert not de.is_primary("1500 B packets, median gap, 5 s against 0.05 s")
    assert not de.is_primary("1500 B packets, span, 1 s against 0.05 s")


def test_spearman_and_the_papers_own_ordering():
    assert rc.spearman(np.array([1.0, 2.0, 3.0, 4.0, 5.0])) == pytest.approx(1.0)
    assert rc.spearman(np.array([5.0, 4.0, 3.0, 2.0, 1.0])) == pytest.approx(-1.0)
    assert math.isnan(rc.spearman(np.zeros(5)))
    # Table I contradicts "especially for the larger profile flows" in throughput/profile and in
    # bit/s (the smaller flows gain more); only the assured share orders the other way
    top, rho = rc.paper_ordering("thr/profile")
    assert top == pytest.approx(-0.467, abs=1e-3) and rho == pytest.approx(-1.0)
    top, rho = rc.paper_ordering("bit/s")
    assert top < 0 and rho == pytest.approx(-0.7)
    top, rho = rc.paper_ordering("assured share")
    assert top > 0.05 and rho > 0.5


def _table1_flows(gains_bps: list[float], seeds: int = 3) -> pd.DataFrame:
    rows = []
    for seed in range(1, seeds + 1):
        for kind, add in (("rio", 0.0), ("rio_plus_o", 1.0)):
            for i, prof in enumerate(rc.T1_PROFILES):
                thr = prof * 0.9 + add * gains_bps[i] + seed
                drops, out = (10.0, 100.0) if kind == "rio" else (2.0, 100.0 * (i + 1))
                rows.append(
                    {
                        "kind": kind,
                        "seed": seed,
                        "flow_name": f"as{i}",
                        "throughput_bps": thr,
                        "out_drops": drops,
                        "out_packets": out,
                        "out_drop_rate": drops / out,
                    }
                )
    return pd.DataFrame(rows)


def test_flow_gains_and_as_out_drop_are_paired_per_seed():
    fl = _table1_flows([10e3, 20e3, 30e3, 200e3, 300e3])
    g = rc.flow_gains(fl, {}, "rio", "bit/s")
    assert list(g.index) == [1, 2, 3]
    assert g.loc[1].to_numpy() == pytest.approx([0.01, 0.02, 0.03, 0.2, 0.3])
    assert rc.spearman(g.loc[1].to_numpy(float)) == pytest.approx(1.0)
    share = rc.flow_gains(fl, {}, "rio", "assured share")
    assert (share.to_numpy() <= 0.1 + 1e-9).all()  # min(thr/profile, 1): no gain past the profile
    pooled = rc.as_out_drop(fl, {}, "rio_plus_o", pooled=True)
    mean = rc.as_out_drop(fl, {}, "rio_plus_o", pooled=False)
    assert pooled[1] == pytest.approx(10 / 1500) and mean[1] == pytest.approx(
        np.mean([2 / (100 * k) for k in range(1, 6)])
    )


def test_new_claims_declared_once_with_their_sweeps():
    parts = {
        find(RO, rc.ESPECIALLY, rc.TOP_TWO).part,
        find(RO, rc.ESPECIALLY, rc.RANK).part,
        find(RO, rc.ESPECIALLY, "Sec. 4, Table I").part,
    }
    assert len(parts) == 3
    assert find(RO, rc.ESPECIALLY, rc.RANK).kind == "discrete"
    drop = find(RO, rc.AS_OUT_DROPS + " (the AS flows' OUT drop probabilities)", "Sec. 4, Table I")
    assert drop.direction == "less" and drop.high == pytest.approx(-0.0365, abs=1e-4)
    for m in (drop, find(RO, rc.ESPECIALLY, rc.TOP_TWO)):
        assert RESTS_ON["rio-plus-o"][m.match] == ("table1",)
    assert RESTS_ON["probe-marker"][find(PM, pc.DENSER, pc.DENSER_CLAIM.place).match] == (
        "onoff",
        "onoff_1000B",
    )


class _Ctx:
    """Collects the verdict records an analysis gives."""

    def __init__(self) -> None:
        self.records: list = []

    def verdict(self, v):  # noqa: ANN001, ANN201
        self.records.append(v)
        return v


def _frontier_runs(factor: dict[tuple[int, str], float], seeds=(1, 2, 3)) -> pd.DataFrame:
    rows = []
    for seed in seeds:
        for n in (10, 40):
            for mk, diff in (("none", "soft"), ("probe", "soft"), ("probe_plus_one", "soft")):
                for mi in (2, 15, 30, 40, 80):
                    x = 0.5 + 0.004 * mi + 0.001 * seed
                    f = factor.get((n, mk), 1.0) + 0.01 * seed
                    # the marker's points inside the all-IN goodput range: same goodputs
                    rows.append(
                        {
                            "seed": seed,
                            "flows": n,
                            "diff": diff,
                            "marker": mk,
                            "min_in": mi,
                            "goodput_util": x,
                            "delay_ms": 10.0 * mi * (1.0 if mk == "none" else f),
                        }
                    )
    return pd.DataFrame(rows)


def test_high_load_and_doubled_records_from_frontiers():
    from qoslab.studies.probe_marker.study import frontier_ratio

    runs = _frontier_runs({(10, "probe"): 0.8, (40, "probe"): 0.6, (10, "probe_plus_one"): 0.6})
    ratio = {
        (n, "soft", mk): frontier_ratio(
            select_(runs, flows=n, marker=mk), select_(runs, flows=n, marker="none")
        )
        for n in (10, 40)
        for mk in ("probe", "probe_plus_one")
    }
    ctx = _Ctx()
    pc.high_load(ctx, runs, ratio, frontier_ratio, "1500 B packets", "sup", quick=False)
    got = {r.reading.removeprefix("1500 B packets, "): r for r in ctx.records}
    assert set(got) == {
        "high load = 40 flows, against 10 flows",
        "high load = 40 flows",
        "high load = high utilisation (min_in ≥ 30), 10 flows",
        "high load = high utilisation (min_in ≥ 30), 40 flows",
    }
    assert got["high load = 40 flows, against 10 flows"].effect == pytest.approx(-0.2)
    assert got["high load = 40 flows"].effect == pytest.approx(-0.38)
    assert got["high load = high utilisation (min_in ≥ 30), 10 flows"].effect == pytest.approx(-0.18)
    assert all(r.claim == pc.HIGH_LOAD for r in ctx.records)
    ctx = _Ctx()
    pc.doubled(ctx, ratio, "1500 B packets", "sup")
    (rec,) = ctx.records
    # gains 1 − 0.62 = 0.38 and 1 − 0.82 = 0.18 at seed 2
    assert rec.section == pc.DOUBLED_RATIO_SECTION and rec.values[1] == pytest.approx(0.38 / 0.18)


def select_(df: pd.DataFrame, **where: object) -> pd.DataFrame:
    m = pd.Series(True, index=df.index)
    for k, v in where.items():
        m &= df[k] == v
    return df[m]


def test_density_records_pair_activity_times():
    rows = []
    for seed in (1, 2, 3):
        for t, shrink in ((0.05, 1.0), (1.0, 0.8), (5.0, 0.5)):
            for mk in ("none", "probe"):
                for k, mi in enumerate((2, 15, 80)):
                    step = 0.1 * (shrink if mk == "probe" else 1.0)
                    rows.append(
                        {
                            "seed": seed,
                            "on_off_s": t,
                            "marker": mk,
                            "min_in": mi,
                            "goodput_util": 0.5 + k * step,
                        }
                    )
    ctx = _Ctx()
    pc.density_claims(ctx, pd.DataFrame(rows), "1500 B packets", "sup")
    got = {r.reading: r.effect for r in ctx.records}
    assert got["1500 B packets, span, 5 s against 0.05 s"] == pytest.approx(1.0)  # 2 − 1
    assert got["1500 B packets, median gap, 1 s against 0.05 s"] == pytest.approx(0.25)
    assert len(got) == 6


def test_table1_claims_give_both_parts_and_the_drops_per_reading():
    from qoslab.studies.rio_plus_o.paper import t1_where

    fl = _table1_flows([10e3, 20e3, 30e3, 200e3, 300e3], seeds=4)
    for k, v in t1_where("stated", 0.002).items():
        fl[k] = v
    ctx = _Ctx()
    rc.table1_claims(ctx, fl)
    by = {(r.section, r.reading): r for r in ctx.records}
    top = by[(rc.TOP_TWO, "stated, reference RIO, w_q 0.002, thr/profile")]
    # the two largest gain 0.185/0.222 of profile, the three smaller 0.037 each
    assert top.effect > 0.15
    assert by[(rc.RANK, "stated, reference RIO, w_q 0.002, bit/s")].effect == pytest.approx(1.0)
    drops = [r for r in ctx.records if r.claim.startswith(rc.AS_OUT_DROPS)]
    assert {r.reading for r in drops} == {
        "stated, reference RIO, w_q 0.002, pooled",
        "stated, reference RIO, w_q 0.002, per-flow mean",
    }
    assert all(r.effect < 0 for r in drops)


def test_a_reading_with_a_suffix_rests_on_its_packet_sizes_sweeps():
    from qoslab.reproduction import sequential_run
    from qoslab.reproduction.rests_on import reading_sweeps

    assert reading_sweeps("probe-marker", "1000 B packets, high load = 40 flows") == (
        "frontier_1000B",
        "onoff_1000B",
    )
    assert reading_sweeps("probe-marker", "1500 B packets, ns2 RIO") == ("rio_ns2",)
    assert reading_sweeps("probe-marker", "1500 B packetsX") is None
    r = {"claim": pc.HIGH_LOAD, "section": "Sec. 4, Figs. 3-4 (soft differentiation)", "part": ""}
    assert sequential_run.rests_on(
        "probe-marker", PM, {**r, "reading": "1500 B packets, high load = 40 flows"}
    ) == ("frontier",)
    d = {
        "claim": pc.DENSER,
        "section": "Sec. 4.1 (Fig. 8: 10 flows, hard differentiation, ON/OFF UDP)",
        "part": "",
    }
    assert sequential_run.rests_on(
        "probe-marker", PM, {**d, "reading": "1000 B packets, span, 5 s against 1 s"}
    ) == ("onoff_1000B",)
