"""TWAM and DWRED (Bouras & Sevasti): scenario validation, the ns-2 export's refusal, and a short
version of the over-provisioned scenario 2 pinning down what we measure against the paper's
central claim (see docs/experiments/twam-dwred.md)."""

from __future__ import annotations

import copy
import json

import pytest

import qoslab
from qoslab import ns2
from qoslab.scenario import Scenario, to_ns2_resolved
from qoslab.stats import estimate
from qoslab.studies.twam_dwred.topology import FLOW_SETS, contracts, flow_table, lsp_scenario


def _table(arm: str = "twam-dwred") -> dict:
    sc = lsp_scenario(2, arm, "A", quick=True)
    import tomllib

    return tomllib.loads(sc.text)


def _error(table: dict) -> str:
    with pytest.raises(Exception) as e:  # noqa: PT011 - the scenario error type is the core's
        Scenario.from_table(table, "t.toml")
    return str(e.value)


def test_scenario_errors_name_the_key():
    t = _table()
    bad = copy.deepcopy(t)
    bad["link"][1]["queue_ab"]["signal"] = "nope"
    msg = _error(bad)
    assert "queue_ab.signal" in msg and "no conditioner named" in msg, msg
    bad = copy.deepcopy(t)
    bad["link"][1]["queue_ab"]["out"] = {"min_th": 1, "max_th": 2, "max_p": 0.1}
    msg = _error(bad)
    assert "queue_ab.out" in msg and "DWRED sets the OUT curve" in msg, msg
    bad = copy.deepcopy(t)
    bad["link"][1]["queue_ab"]["b"] = 1.5
    assert "b must be in (0, 1)" in _error(bad)
    bad = copy.deepcopy(t)
    bad["conditioner"][0]["meter"]["rates"]["nosuchflow"] = "1Mbps"
    msg = _error(bad)
    assert "rates.nosuchflow" in msg and "unknown flow" in msg, msg
    bad = copy.deepcopy(t)
    bad["conditioner"][0]["scope"] = "per_flow"
    assert 'scope must be "aggregate"' in _error(bad)
    bad = copy.deepcopy(t)
    del bad["conditioner"][0]["meter"]["rtt"]
    assert "needs `rtt`" in _error(bad)
    # a DWRED queue cannot follow a TSW2CM conditioner
    w = _table("tsw-wred")
    w["link"][1]["queue_ab"] = copy.deepcopy(t["link"][1]["queue_ab"])
    w["link"][1]["queue_ab"]["signal"] = "ingress0"
    msg = _error(w)
    assert "only a twam conditioner signals a window" in msg, msg


def test_ns2_export_refuses_twam_and_dwred():
    sc = lsp_scenario(2, "twam-dwred", "A", quick=True)
    reason = ns2.unsupported_reason(to_ns2_resolved(sc.resolved, 1))
    assert reason is not None and "DWRED" in reason and "no ns-2 counterpart" in reason, reason
    t = _table()
    for k in (1, 2, 3):
        t["link"][k]["queue_ab"] = {
            "type": "wred",
            "limit": "300pkts",
            "in": {"min_th": 80, "max_th": 320, "max_p": 0.1},
            "out": {"min_th": 40, "max_th": 160, "max_p": 0.1},
        }
    reason = ns2.unsupported_reason(to_ns2_resolved(Scenario.from_table(t, "t").resolved, 1))
    assert reason is not None and "TWAM" in reason, reason


def _runs(arm: str, flowset: str, seeds: tuple[int, ...], scen: int = 2) -> list:
    out = []
    for s in seeds:
        r = qoslab.run(lsp_scenario(scen, arm, flowset, quick=True), seed=s)
        assert not r.violations, r.violations
        out.append(r)
    return out


def test_over_provisioned_scenario_2_what_reproduces():
    """Scenario 2 (50 Mbps LSP, contracts Σ r_i = 23 Mbps), 60 s measured after 20 s, two seeds.

    The paper: every TWAM+DWRED flow reaches its contracted rate, while the large-contract flows
    miss it under TSW2CM + static WRED. Neither reproduces here. Eq. 3 always gives the
    largest-contract flows p_i = 1 (r_max·ΣW ≥ Σ r_k W_k for any windows), so TWAM never marks
    them OUT however much they send; with IN packets dropped later than OUT packets they take the
    excess capacity, and flows of intermediate contracts, whose OUT packets DWRED drops, fall
    below their contracts. TSW2CM + static WRED shares the spare 27 Mbps and every flow exceeds
    its contract."""
    rates = FLOW_SETS["A"]
    big = [f"f{i}" for i, r in enumerate(rates) if r == max(rates)]
    for arm in ("twam-dwred", "twam-oracle-dwred"):
        worst, big_ratio = [], []
        for r in _runs(arm, "A", (1, 2)):
            ft = flow_table(r.flows, "A").set_index("name")
            # the largest-contract flows are never marked OUT
            assert (ft.loc[big, "yellow_packets"] == 0).all() and (ft.loc[big, "green_packets"] > 0).all()
            # ... while every smaller-contract flow is (p_i < 1)
            assert (ft.drop(index=big)["yellow_packets"] > 0).all()
            worst.append(ft.drop(index=big)["ratio"].min())
            big_ratio.append(ft.loc[big, "ratio"].mean())
            assert r.links.set_index(["link_name", "direction"]).loc[("r1-r2", "ab"), "utilization"] > 0.95
        # the central claim fails: some flow below 95 % of its contract in every run ...
        assert max(worst) < 0.95, (arm, worst)
        # ... and the largest-contract flows take several times their contract
        assert min(big_ratio) > 2.0, (arm, big_ratio)
    # the baseline: every flow above its contract (the paper's shortfall does not reproduce)
    for r in _runs("tsw-wred", "A", (1, 2)):
        ft = flow_table(r.flows, "A")
        assert ft["ratio"].min() > 1.0, ft[["name", "ratio"]]
        # ... and the spare capacity goes mostly to the small contracts (ratio falls with r_i)
        assert ft.groupby("contract_bps")["ratio"].mean().is_monotonic_decreasing
    assert contracts("A")["f9"] == 4e6


def test_neighbour_reading_of_eq3_delivers_the_claim():
    """The other reading of Eq. 3 (each Σ binding its neighbour, p_i = min(1, (r_i/Σr)·ΣW/W_i):
    each flow's IN packets are its contract's share of the LSP window, as the prose says) on the
    same scenario does bring every flow to its contract — the behaviour the paper reports."""
    ratios = []
    for r in _runs("twam-neighbour-dwred", "A", (1, 2)):
        ft = flow_table(r.flows, "A")
        ratios.append(ft["ratio"].min())
        # the large contracts are marked OUT too, once their window exceeds their share
        assert (ft["yellow_packets"] > 0).all()
    assert estimate(ratios).mean >= 0.95 and min(ratios) >= 0.95, ratios


def test_baseline_verdict_per_flavour():
    """The baseline (TSW2CM + static WRED) under both flavours, on paired seeds. ns-2's dsRED
    rules (the paper's simulator) lose more IN packets (docs/ns2-behaviour.md), which deepens the
    large contracts' shortfall where there is one (scenario 1, flow set B: Σr = 90 % of the
    link) but creates none in the over-provisioned scenario 2: the verdict "the baseline's
    shortfall reproduces only in part" holds in both flavours."""
    seeds = (1, 2)
    for flowset in ("A", "B"):
        for arm in ("tsw-wred", "tsw-wred-ns2"):
            for r in _runs(arm, flowset, seeds):
                assert flow_table(r.flows, flowset)["ratio"].min() > 1.0, (arm, flowset)
    big = [f"f{i}" for i, r in enumerate(FLOW_SETS["B"]) if r == max(FLOW_SETS["B"])]
    paired = []
    for ref, ns2r in zip(
        _runs("tsw-wred", "B", seeds, scen=1), _runs("tsw-wred-ns2", "B", seeds, scen=1), strict=True
    ):
        a = flow_table(ref.flows, "B").set_index("name").loc[big, "ratio"].mean()
        b = flow_table(ns2r.flows, "B").set_index("name").loc[big, "ratio"].mean()
        # the shortfall in both flavours ...
        assert a < 0.95 and b < 0.95, (a, b)
        paired.append(a - b)
    # ... deeper under ns-2's rules, seed for seed (reference 0.94, ns2 0.80-0.87 of r_i)
    assert min(paired) > 0.03, paired


@pytest.mark.slow
def test_twam_dwred_full(tmp_path):
    """The full reproduction (10 seeds, 300 s runs, scenario 3 for 1000 s) and what it pins down
    (docs/experiments/twam-dwred.md)."""
    import pandas as pd

    from qoslab import reproduction

    reproduction.reproduce("twam-dwred", out=tmp_path, store=tmp_path / "store", progress=False)
    d = tmp_path / "twam-dwred"
    s12 = pd.read_csv(d / "contracts-s12.csv").set_index(["scen", "flowset", "arm"])
    for fs in ("A", "B"):
        for arm in ("twam-dwred", "twam-oracle-dwred"):
            row = s12.loc[(2, fs, arm)]
            # Eq. 3: some flows below their contract in the over-provisioned scenario ...
            assert row["fraction_reached"] < 0.9 and row["worst_ratio"] < 0.9, (fs, arm)
            # ... while the largest contracts take more than twice theirs
            assert row["largest_ratio"] > 2.0, (fs, arm)
        # the neighbour reading of Eq. 3 brings every flow to its contract
        assert s12.loc[(2, fs, "twam-neighbour-dwred"), "fraction_reached"] == 1.0
        # TSW2CM + static WRED: every flow reaches its contract in scenario 2 (no shortfall)
        assert s12.loc[(2, fs, "tsw-wred"), "worst_ratio"] > 1.0
    s3 = pd.read_csv(d / "contracts-s3.csv").set_index(["flowset", "arm"])
    assert s3.loc[("A", "twam-dwred"), "fraction_reached"] < 0.9
    assert s3.loc[("A", "twam-neighbour-dwred"), "fraction_reached"] == 1.0
    # the verdicts: the claim of scenario 2 fails under the product reading and holds under the
    # neighbour reading, for every flow set
    doc = json.loads((d / "verdicts.json").read_text())
    reach = [v for v in doc["verdicts"] if v["section"].startswith("Sec. 5.2, scenario 2 (")]
    assert len(reach) == 6, [v["section"] for v in doc["verdicts"]]  # three flow sets, two readings
    for v in reach:
        want = "reproduces" if v["reading"].startswith("Σ binds") else "does not reproduce"
        assert v["verdict"] == want, v
    for stem in (
        "fig2-cwnd-A",
        "fig3-throughput-A",
        "fig3-throughput-B",
        "fig4-scenario3",
        "fig5-scenario4",
        "fraction-reached",
        "window-estimates",
    ):
        assert (d / f"{stem}.png").stat().st_size > 10_000, stem


def test_claim_disappears_when_twam_marks_everything_in():
    """Mechanism disabled: the same TWAM + DWRED scenario with every p_i = 1 (Eq. 3 with equal
    contracts in the marker, so nothing is marked OUT; DWRED keeps its window signal). The
    effect the neighbour reading delivers (set B, scenario 2: every flow at its contract, the
    8 Mbps flows included) disappears: the 8 Mbps flows fall below their contract (about 0.8 of
    it) while the 1 Mbps flows take six times theirs."""
    for seed in (1, 2):
        on = qoslab.run(lsp_scenario(2, "twam-neighbour-dwred", "B", quick=True), seed=seed)
        sc = lsp_scenario(2, "twam-dwred", "B", quick=True)
        t = sc.table()
        (meter,) = [c["meter"] for c in t["conditioner"]]
        meter["rates"] = dict.fromkeys(meter["rates"], "1Mbps")
        off = qoslab.run(Scenario.from_table(t, "twam p=1"), seed=seed)
        ft_on, ft_off = flow_table(on.flows, "B"), flow_table(off.flows, "B")
        assert (ft_off["yellow_packets"] == 0).all() and (ft_on["yellow_packets"] > 0).all()
        assert ft_on["ratio"].min() >= 0.95, ft_on[["name", "ratio"]]
        big = ft_off["contract_bps"] == ft_off["contract_bps"].max()
        assert ft_off["ratio"].min() < 0.85 and ft_off[big]["ratio"].mean() < 0.9, ft_off[["name", "ratio"]]
