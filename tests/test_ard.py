"""ARM/ARD (Hur): scenario keys and their errors, the marker in the engine, and the `ard`
experiment's short version, which pins what we measure against the paper's claims."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from qoslab import reproduction, verdicts
from qoslab.runs.simulate import run
from qoslab.scenario import Scenario, load_scenario
from qoslab.stats import paired
from qoslab.studies.ard.topology import ard_scenario

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
      far from the paper's 0.786 / 0.852: the baseline problem does not reproduce, and its
      verdict says so under both host bucket depths;
    - where RIO alone is measurably unfair (RTTs 8:1), ARD does not improve Jain's index over
      RIO alone: the claim ARD >= ARM > RIO does not hold in our runs;
    - ARD costs no aggregate throughput (within 5 % of RIO alone): this claim holds;
    - every claim has a verdict under every reading the experiment runs.
    """
    rep = reproduction.reproduce(
        "ard", quick=True, out=tmp_path / "out", store=tmp_path / "store", progress=False
    )
    d = rep.out
    for f in (
        "table1-jain.csv",
        "startup-jain.csv",
        "lambdas-tpr.csv",
        "sensitivity.png",
        "sweep-rtt-flows.png",
        "timeseries-4flows-stated.png",
        "fig7-token-level.png",
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

    from qoslab.studies.ard.study import DROP_ORDERS, PERIODS, SETTING_READING, SETTINGS, STARTUP_SETTINGS

    vs = verdicts.read(d / "verdicts.json")["verdicts"]
    by = {(v["claim"], v["reading"]): v for v in vs if v["part"] != "fairness"}
    # one record per claim (part) and reading; the compound claim's fairness part is tested on
    # copies of the ARD − RIO fairness records
    assert len(by) + sum(v["part"] == "fairness" for v in vs) == len(vs)
    claims = {v["claim"] for v in vs}
    assert len(claims) == 6
    steady = [f"{SETTING_READING[s]}, {PERIODS['steady']}" for s in SETTINGS]
    startup = [f"{SETTING_READING[s]}, {PERIODS['startup']}" for s in STARTUP_SETTINGS]
    for n in (4, 20):
        for r in steady + startup:
            assert (next(c for c in claims if c.startswith("the ARM scheme")), f"{r}, {n} flows") in by
        for r in steady:
            for order in DROP_ORDERS.values():
                dropper = next(c for c in claims if c.startswith("the ARD marker increases"))
                assert (dropper, f"{r.rsplit(', ', 1)[0]}, {PERIODS['steady']}, {order}, {n} flows") in by
        for bucket in ("stated", "cbs10"):
            biased = by[
                (
                    "the throughputs of TCP flows can be highly biased",
                    f"{steady[list(SETTINGS).index(bucket)]}, {n} flows",
                )
            ]
            assert biased["sign_verdict"] == verdicts.DOES_NOT and biased["seeds"] == 3, biased
            assert biased["verdict"] in (verdicts.DOES_NOT, verdicts.INCONCLUSIVE), biased
    # the utilisation part: the run measures how far utilisation moves over seeds and arms
    util = [v for v in vs if v["part"] == "utilisation"]
    assert util and all(v["moves"] is not None and v["moves"] >= 0 for v in util)


@pytest.mark.slow
def test_ard_full(tmp_path: Path) -> None:
    rep = reproduction.reproduce("ard", out=tmp_path / "out", store=tmp_path / "store", progress=False)
    t = pd.read_csv(rep.out / "table1-jain.csv")
    assert (t["n_seeds"] >= 20).all()
    stated = t[t["setting"] == "stated"]
    assert (stated["jain_mean"] > 0.99).all()


def _jain(res) -> float:  # noqa: ANN001
    x = res.flows["throughput_bps"].to_numpy(float)
    return float(x.sum() ** 2 / (len(x) * (x**2).sum()))


def _scenario(
    n: int, setting: str, scheme: str, p_drop: float | None = None, interval: str = "1s"
) -> Scenario:
    """A point of the `ard` experiment; ``p_drop`` set on ARD's dropper (0: the dropper off)."""
    from qoslab.studies.ard.study import point_scenario

    sc = point_scenario({"n": n, "setting": setting, "scheme": scheme, "interval": interval})
    if p_drop is None:
        return sc
    t = sc.table()
    for c in t["conditioner"]:
        if c["meter"]["type"] == "ard":
            c["meter"]["p_drop"] = p_drop
    return Scenario.from_table(t, f"ard, p_drop = {p_drop}")


def _edge_drops(res) -> int:  # noqa: ANN001
    g = res.series_gauges
    return int(g[g["name"] == "dropped"].groupby("conditioner")["value"].max().sum())


def _below_t_rd(res) -> float:  # noqa: ANN001
    """The share of 100-200 s the edge bucket's token level (sampled every τ) spends below T_rd."""
    from qoslab.studies.ard.paper import T_RD

    g = res.series_gauges
    tk = g[(g["name"] == "tokens_pkts") & (g["time_s"] > 100)]["value"]
    return float((tk < T_RD).mean())


def test_mechanism_disabled_the_dropper_effect_disappears() -> None:
    """Mechanism disabled: what the paper attributes to ARD's dropper, measured where it shows
    (4 flows, RTTs 8:1, 10 paired seeds), disappears with the dropper off (P_drop = 0).

    The paper attributes to the dropper a fairer share than ARM's (Table 1) and a token level
    kept in the re-marking and drop region [0, T_rd] (Fig. 7(c)). Against ARM on the same seeds,
    the dropper does move both, significantly, in the opposite direction: Jain's index
    −0.016 [−0.029, −0.003] and the time below T_rd −0.12 [−0.18, −0.06] (10 seeds). With the
    dropper off, ARD drops nothing and is ARM, run for run: both effects are exactly 0."""
    seeds = range(1, 11)
    jain: dict[str, dict[int, float]] = {k: {} for k in ("arm", "ard", "off")}
    below: dict[str, dict[int, float]] = {k: {} for k in ("arm", "ard", "off")}
    drops = {"ard": 0, "off": 0}
    for seed in seeds:
        for key, sc in (
            ("arm", _scenario(4, "rtt8", "arm", interval="100ms")),
            ("ard", _scenario(4, "rtt8", "ard", interval="100ms")),
            ("off", _scenario(4, "rtt8", "ard", 0.0, interval="100ms")),
        ):
            r = run(sc, seed)
            jain[key][seed], below[key][seed] = _jain(r), _below_t_rd(r)
            if key in drops:
                drops[key] += _edge_drops(r)
    # The dropper on: it drops, and it changes fairness and the token level against ARM.
    assert drops["ard"] > 0, drops
    on_jain, on_below = paired(jain["ard"], jain["arm"]), paired(below["ard"], below["arm"])
    assert on_jain.ci_high < 0, on_jain
    assert on_below.ci_high < 0, on_below
    # The dropper off: no drop, and neither effect is left.
    assert drops["off"] == 0, drops
    off_jain, off_below = paired(jain["off"], jain["arm"]), paired(below["off"], below["arm"])
    assert off_jain.mean == 0 and off_below.mean == 0, (off_jain, off_below)


def test_what_the_dropper_does_on_paired_seeds() -> None:
    """The finding, pinned on 20 paired seeds (20 flows, RTTs 8:1, where RIO alone is measurably
    unfair; seeds 1-20 as in the full run's verdicts). ARD lowers Jain's index against RIO alone
    (−0.0071, 95 % CI [−0.0114, −0.0029], paired t, p = 0.002); most of that is ARM's re-marking
    (ARD with its dropper off, which is ARM run for run: −0.0039, p = 0.016), and the dropper's
    own part (ARD − ARM: −0.0032, CI [−0.0079, +0.0015], p = 0.17) is not significant."""
    jain: dict[str, dict[int, float]] = {k: {} for k in ("rio", "arm", "ard", "off")}
    drops: dict[str, int] = {"ard": 0, "off": 0}
    for seed in range(1, 21):
        for key, sc in (
            ("rio", _scenario(20, "rtt8", "rio")),
            ("arm", _scenario(20, "rtt8", "arm")),
            ("ard", _scenario(20, "rtt8", "ard")),
            ("off", _scenario(20, "rtt8", "ard", 0.0)),
        ):
            r = run(sc, seed)
            jain[key][seed] = _jain(r)
            if key in drops:
                drops[key] += _edge_drops(r)
    assert drops["ard"] > 0 and drops["off"] == 0, drops
    assert jain["off"] == jain["arm"]  # dropper off: ARM exactly
    ard_rio = paired(jain["ard"], jain["rio"])
    assert ard_rio.ci_high < 0 and ard_rio.p < 0.01, ard_rio
    assert ard_rio.mean == pytest.approx(-0.0071, abs=5e-4), ard_rio
    off_rio = paired(jain["off"], jain["rio"])
    assert off_rio.ci_high < 0 and off_rio.p < 0.05, off_rio
    dropper = paired(jain["ard"], jain["arm"])
    assert dropper.ci_low < 0 < dropper.ci_high and dropper.p > 0.05, dropper
