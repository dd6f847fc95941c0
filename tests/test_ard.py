"""ARM/ARD (Hur): scenario keys and their errors, the marker in the engine, and the `ard`
experiment's short version, which pins what we measure against the paper's claims."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from qoslab import experiments
from qoslab.experiments.ard_topology import ard_scenario
from qoslab.scenario import load_scenario
from qoslab.simulate import run

ROOT = Path(__file__).resolve().parents[1]


def _with_edge(tmp_path: Path, meter: str) -> Path:
    text = (ROOT / "scenarios" / "ard-rio-4flows.toml").read_text()
    p = tmp_path / "ard.toml"
    p.write_text(text + f'\n[[conditioner]]\nname = "edge_marker"\nlink = "edge"\nmeter = {meter}\n')
    return p


@pytest.mark.parametrize(
    ("meter", "key", "words"),
    [
        ('{ type = "ard" }', "conditioner[1].meter.tpr_max", "tpr_max"),
        ('{ type = "ard", tpr_max = "1.2Mbps", t_rd = 70 }', "conditioner[1].meter.t_rd", "bucket"),
        ('{ type = "arm", tpr_max = "1.2Mbps", p_drop = 0.1 }', "conditioner[1].meter.p_drop", "never drops"),
        (
            '{ type = "ard", tpr_max = "1.2Mbps", cir = "1Mbps" }',
            "conditioner[1].meter.cir",
            "not a parameter",
        ),
        (
            '{ type = "token_bucket", cir = "1Mbps", cbs = "10KB", t_rd = 3 }',
            "conditioner[1].meter.t_rd",
            "not a parameter",
        ),
        (
            '{ type = "ard", tpr_max = "1.2Mbps", drop_order = "sometimes" }',
            "conditioner[1].meter.drop_order",
            "",
        ),
    ],
)
def test_bad_ard_parameters_name_the_key(tmp_path: Path, meter: str, key: str, words: str) -> None:
    with pytest.raises(Exception) as e:  # noqa: PT011 — the message is what matters
        load_scenario(_with_edge(tmp_path, meter))
    msg = str(e.value)
    assert "ard.toml" in msg and f"`{key}`" in msg and words in msg, msg


def test_ard_in_the_engine_counts_and_conserves(tmp_path: Path) -> None:
    """ARD at the edge with a TPR far below the offered IN rate: it re-marks and drops IN
    packets; its drops are policed drops of the flows; λ and TPR follow Eq. 2."""
    sc = ard_scenario(4, "ard", duration_s=40.0, ard={"tau": "0.1s", "n": 100, "p_drop": 0.1})
    r = run(sc, 3)
    assert not r.violations
    g = r.series_gauges
    last = g[g["time_s"] == g["time_s"].max()].set_index("name")["value"]
    lam_in, lam_out, tpr = last["lambda_in_bps"], last["lambda_out_bps"], last["tpr_bps"]
    assert tpr == pytest.approx(1.2e6 * lam_in / (lam_in + lam_out), abs=1.0)
    assert last["dropped"] > 0 and last["remarked"] > 0
    cond = r.conditioners.set_index("name").loc["ard"]
    assert cond["red_packets"] == last["dropped"]
    assert r.flows["policed_drops"].sum() == last["dropped"]
    # Every IN packet the edge saw was passed, re-marked or dropped (OUT packets are yellow too).
    assert cond["green_packets"] == last["passed_in"]
    # Token level sampled every 0.1 s stays within [0, b].
    tk = g[g["name"] == "tokens_pkts"]["value"]
    assert tk.between(0, 60).all()


def test_ard_quick_pins_what_we_measure(tmp_path: Path) -> None:
    """The short `ard` reproduction (3 seeds). The paper's claims, checked where they can be:

    - with the stated parameters RIO alone is already fair (Jain > 0.99 with 4 and 20 flows),
      far from the paper's 0.786 / 0.852: the baseline problem does not reproduce;
    - where RIO alone is measurably unfair (RTTs 8:1), ARD does not improve Jain's index over
      RIO alone: the claim ARD >= ARM > RIO does not hold in our runs;
    - ARD costs no aggregate throughput (within 5 % of RIO alone): this claim holds.
    """
    rep = experiments.reproduce(
        "ard", quick=True, out=tmp_path / "out", store=tmp_path / "store", progress=False
    )
    d = rep.out
    for f in (
        "report.md",
        "table1-jain.csv",
        "lambdas-tpr.md",
        "sensitivity.png",
        "sweep-rtt-flows.png",
        "timeseries-4flows-stated.png",
        "fig8-std-aggregate.png",
    ):
        assert (d / f).exists(), f
    t = pd.read_csv(d / "table1-jain.csv")

    def jain(n: int, setting: str, scheme: str) -> float:
        row = t[(t["flows"] == n) & (t["setting"] == setting) & (t["scheme"] == scheme)]
        return float(row["jain_mean"].iloc[0])

    for n in (4, 20):
        assert jain(n, "stated", "RIO only") > 0.99
        assert jain(n, "rtt8", "RIO only") < 0.985  # measurably unfair
        assert jain(n, "rtt8", "ARD") <= jain(n, "rtt8", "RIO only") + 0.005
        agg = t[(t["flows"] == n) & (t["setting"] == "rtt8")].set_index("scheme")["aggregate_kbps"]
        assert agg["ARD"] >= 0.95 * agg["RIO only"]
    # λ_IN with a 2-packet host bucket is near the paper's 494 kbps (4 flows).
    lam = pd.read_csv(d / "lambdas-tpr.csv")
    li = float(lam[(lam["flows"] == 4) & (lam["setting"] == "stated")]["lambda_in_kbps"].iloc[0])
    assert 420 < li < 560
    assert "ard" in rep.report.read_text()


@pytest.mark.slow
def test_ard_full(tmp_path: Path) -> None:
    rep = experiments.reproduce("ard", out=tmp_path / "out", store=tmp_path / "store", progress=False)
    t = pd.read_csv(rep.out / "table1-jain.csv")
    assert (t["n_seeds"] >= 10).all()
    stated = t[t["setting"] == "stated"]
    assert (stated["jain_mean"] > 0.99).all()


def _jain(res) -> float:  # noqa: ANN001
    x = res.flows["throughput_bps"].to_numpy(float)
    return float(x.sum() ** 2 / (len(x) * (x**2).sum()))


def test_what_the_dropper_does_on_paired_seeds() -> None:
    """Mechanism disabled, on 20 paired seeds (20 flows, RTTs 8:1, where RIO alone is measurably
    unfair). ARD with its dropper off (P_drop = 0) is ARM, run for run: the dropper is all that
    separates them. ARD lowers Jain's index against RIO alone (−0.007, 95 % CI [−0.011, −0.003],
    paired t, p = 0.002); most of that is ARM's re-marking (dropper off: −0.004, p = 0.016), and the
    dropper's own part (ARD − ARM: −0.003, CI [−0.008, +0.002], p = 0.17) is not significant."""
    from qoslab.experiments.ard import point_scenario
    from qoslab.scenario import Scenario
    from qoslab.stats import paired

    def scenario(scheme: str, p_drop: float | None = None) -> Scenario:
        sc = point_scenario({"n": 20, "setting": "rtt8", "scheme": scheme})
        if p_drop is None:
            return sc
        t = sc.table()
        for c in t["conditioner"]:
            if c["meter"]["type"] == "ard":
                c["meter"]["p_drop"] = p_drop
        return Scenario.from_table(t, "ard, dropper off")

    jain: dict[str, dict[int, float]] = {k: {} for k in ("rio", "arm", "ard", "off")}
    drops: dict[str, int] = {"ard": 0, "off": 0}
    for seed in range(1, 21):
        for key, sc in (
            ("rio", scenario("rio")),
            ("arm", scenario("arm")),
            ("ard", scenario("ard")),
            ("off", scenario("ard", 0.0)),
        ):
            r = run(sc, seed)
            jain[key][seed] = _jain(r)
            if key in drops:
                g = r.series_gauges
                drops[key] += int(g[g["name"] == "dropped"].groupby("conditioner")["value"].max().sum())
    assert drops["ard"] > 0 and drops["off"] == 0, drops
    assert jain["off"] == jain["arm"]  # dropper off: ARM exactly
    ard_rio = paired(jain["ard"], jain["rio"])
    assert ard_rio.ci_high < 0 and ard_rio.p < 0.01, ard_rio
    assert paired(jain["off"], jain["rio"]).ci_high < 0
    dropper = paired(jain["ard"], jain["arm"])
    assert dropper.ci_low < 0 < dropper.ci_high and jain["ard"] != jain["arm"], dropper
