"""FDD-RED (Hashemi, Jamali, Motarez): the queue type end to end, the paper's claims that hold in
our runs, and the ones that do not, pinned down (docs/experiments/fdd-red.md).

Paired runs: the same seed gives RED and FDD-RED the same start times, so the two runs are
identical until RED's first early-drop decision; comparisons are paired t-tests over seeds."""

import json
import math
import subprocess

import numpy as np
import pandas as pd
import pytest

from conftest import QOSLAB, SCENARIOS, quick_runs
from qoslab import ns2, reproduction
from qoslab.reproduction.base import scenario
from qoslab.reproduction.topologies import dumbbell, red_queue
from qoslab.runs.simulate import jain_index, run
from qoslab.scenario import to_ns2_resolved
from qoslab.stats import paired
from qoslab.studies.fdd_red import claims as fdd_red_claims
from qoslab.studies.fdd_red import study as fdd_red
from qoslab.studies.fdd_red.study import AQMS, Q
from qoslab.studies.red_baseline.study import SHORT, red_thresholds
from qoslab.verdicts import decide

SEEDS = range(1, 7)


def _runs(rtt: str, aqm: str, short: bool, window: int = 1000) -> list[dict]:
    name = "fdd-red-s1" if rtt == "homogeneous" else "fdd-red-s3"
    sc = scenario(name, [*(SHORT if short else []), f"tcp.window={window}", *AQMS[aqm]])
    out = []
    for seed in SEEDS:
        r = run(sc, seed)
        assert not r.violations, r.violations
        s = r.summary()
        late = r.series_flow[r.series_flow["time_s"] > 10]
        s["jain_10_20s"] = jain_index(late.groupby("flow")["throughput_bps"].mean().to_numpy())
        out.append(s)
    return out


def _mean(runs: list[dict], key: str) -> float:
    return float(np.mean([r[key] for r in runs]))


def _paired(a: list[dict], b: list[dict], key: str = "fairness_index"):
    """Paired test of ``a - b`` over SEEDS."""
    return paired(
        dict(zip(SEEDS, (r[key] for r in a), strict=True)), dict(zip(SEEDS, (r[key] for r in b), strict=True))
    )


@pytest.fixture(scope="module")
def steady() -> dict[tuple[str, str], list[dict]]:
    """100 s runs measured over 20-100 s (the scenario files, TCP window unlimited)."""
    return {
        (rtt, aqm): _runs(rtt, aqm, False)
        for rtt in ("homogeneous", "heterogeneous")
        for aqm in ("red", "fdd-red", "fdd-red-oracle", "fdd-red-random")
    }


@pytest.fixture(scope="module")
def short() -> dict[tuple[str, str, int], list[dict]]:
    """20 s runs measured over their whole length (Table 1's setting), TCP window unlimited and
    ns-2's default 20."""
    return {
        (rtt, aqm, w): _runs(rtt, aqm, True, w)
        for rtt in ("homogeneous", "heterogeneous")
        for aqm in ("red", "fdd-red")
        for w in (1000, 20)
    }


def test_fdd_red_is_fairer_than_red_in_steady_state_in_both_rtt_settings(steady):
    """Table 2's claim (FI: 0.967 → 0.996 homogeneous, 0.888 → 0.901 heterogeneous) holds in
    direction over 80 s of steady state (shares rule, estimator, window unlimited), seed by seed."""
    for rtt in ("homogeneous", "heterogeneous"):
        red = [r["fairness_index"] for r in steady[(rtt, "red")]]
        fdd = [r["fairness_index"] for r in steady[(rtt, "fdd-red")]]
        assert all(f >= r for f, r in zip(fdd, red, strict=True)), (rtt, red, fdd)
        assert _paired(steady[(rtt, "fdd-red")], steady[(rtt, "red")]).ci_low > 0, rtt
    assert min(r["fairness_index"] for r in steady[("homogeneous", "fdd-red")]) > 0.999
    assert min(r["fairness_index"] for r in steady[("heterogeneous", "fdd-red")]) > 0.985


def test_mechanism_disabled_a_random_victim_loses_the_fairness_gain(steady):
    """Mechanism disabled: the same runs with FDD-RED's choice of victim replaced by a uniform
    draw over the flows seen during the last RTT_avg (``victim = "random"``; RED's decisions, the
    deferred payment and the bookkeeping unchanged). The claimed effect disappears and turns
    round: the random victim is *less* fair than RED in both RTT settings (RED's victims follow
    the packets, a uniform draw charges a flow regardless of its rate), so the fairness gain is
    FDD-RED's choice of whose drop, not the deferral. Over 20 paired seeds random − RED is
    −0.027 [−0.042, −0.012] (homogeneous) and −0.043 [−0.057, −0.029] (heterogeneous); over
    these six the homogeneous interval just touches 0, so only its sign is asserted here."""
    for rtt in ("homogeneous", "heterogeneous"):
        red, fdd, rnd = (steady[(rtt, a)] for a in ("red", "fdd-red", "fdd-red-random"))
        off = _paired(rnd, red)
        assert off.mean < 0, (rtt, off)
        whose = _paired(fdd, rnd)
        assert whose.ci_low > 0, (rtt, whose)


def test_the_configured_rtts_are_the_wrong_weights(steady):
    """The oracle (propagation RTTs) is worse than the router's estimator: with equal RTTs its
    100 ms window forgets the bursty flows between RED's sparse decisions and FDD-RED is RED
    exactly; with 20-100 ms it weights 5:1 flows whose real RTTs (with ~250 ms of queueing)
    differ by ~1.3:1, and starves the short-RTT flow."""
    homo_red, homo_oracle = steady[("homogeneous", "red")], steady[("homogeneous", "fdd-red-oracle")]
    assert [r["fairness_index"] for r in homo_oracle] == [r["fairness_index"] for r in homo_red]
    het_red, het_oracle = steady[("heterogeneous", "red")], steady[("heterogeneous", "fdd-red-oracle")]
    assert _mean(het_oracle, "fairness_index") < _mean(het_red, "fairness_index") - 0.01
    short_flow = [r["flows"][0]["throughput_bps"] for r in het_oracle]
    long_flow = [r["flows"][4]["throughput_bps"] for r in het_oracle]
    assert np.mean(short_flow) < np.mean(long_flow)


def test_fdd_red_does_not_halve_the_drops_of_scenario_1(short):
    """Table 1 (149 → 67 in 20 s) does not reproduce: FDD-RED chooses whose packet, not how
    many, and 87 % of the drops are buffer overflows in the initial slow start, identical
    under both queues."""
    red, fdd = short[("homogeneous", "red", 1000)], short[("homogeneous", "fdd-red", 1000)]
    for r, f in zip(red, fdd, strict=True):
        assert r["drops"]["bottleneck_overflow"] == f["drops"]["bottleneck_overflow"]
        assert abs(f["drops"]["bottleneck"] - r["drops"]["bottleneck"]) <= 3
    assert np.mean([f["drops"]["bottleneck"] for f in fdd]) > 1.5 * 67


def test_over_20_s_fdd_red_is_less_fair_than_red_unless_the_window_is_capped_at_20(short):
    """Measured over a whole 20 s run, slow start included, FDD-RED (window unlimited) is less
    fair than RED in both RTT settings; the loss is in the first 10 s, after the start-up
    overflow — over 10-20 s it is already fairer. With ns-2's default window of 20 there is no
    start-up overflow and the 20 s result flips: FDD-RED is fairer than RED (homogeneous RTTs)."""
    for rtt in ("homogeneous", "heterogeneous"):
        red = _mean(short[(rtt, "red", 1000)], "fairness_index")
        fdd = _mean(short[(rtt, "fdd-red", 1000)], "fairness_index")
        assert fdd < red, (rtt, red, fdd)
    red = _mean(short[("homogeneous", "red", 1000)], "jain_10_20s")
    fdd = _mean(short[("homogeneous", "fdd-red", 1000)], "jain_10_20s")
    assert fdd > red, (red, fdd)
    # the capped effect is small (+0.0098 [+0.0052, +0.0144] over 20 seeds in the experiment):
    # six seeds do not resolve it, so this comparison takes twenty (20 s runs are cheap)
    seeds20 = range(1, 21)
    capped_runs = {}
    for aqm in ("fdd-red", "red"):
        sc = scenario("fdd-red-s1", [*SHORT, "tcp.window=20", *AQMS[aqm]])
        capped_runs[aqm] = {s: run(sc, s).summary()["fairness_index"] for s in seeds20}
    capped = paired(capped_runs["fdd-red"], capped_runs["red"])
    assert capped.ci_low > 0, capped
    overflow = [r["drops"]["bottleneck_overflow"] for r in short[("homogeneous", "red", 20)]]
    assert max(overflow) == 0, overflow


def _drops(sc, seeds=SEEDS) -> dict[int, float]:
    return {s: float(run(sc, s).summary()["drops"]["bottleneck"]) for s in seeds}


def test_the_deferral_not_the_choice_of_victim_makes_the_fewer_drops_of_figs_10_11():
    """Figs. 10-11 "fewer drops" (B = 200 and N = 50, window unlimited, 20 s): FDD-RED drops far
    fewer than RED, and so does the random-victim control, which keeps only the deferred
    payment: owed drops of flows that fall silent are cancelled. FDD-RED's own choice of victim
    removes no drops (it even adds a few) — the deferral does it all."""
    lo, hi = red_thresholds(200, "capped")
    buf = [*SHORT, f"{Q}.limit=200pkts", f"{Q}.min_th={lo!r}", f"{Q}.max_th={hi!r}"]
    q = red_queue(100, 25, 75, 0.01, 0.002)
    cases = {
        "B = 200": {
            a: scenario("fdd-red-s1", [*buf, *AQMS[a]]) for a in ("red", "fdd-red", "fdd-red-random")
        },
        "N = 50": {
            a: dumbbell(50, name=f"n50-{a}", bottleneck_queue={**q, **extra})
            for a, extra in (
                ("red", {}),
                ("fdd-red", {"type": "fdd_red"}),
                ("fdd-red-random", {"type": "fdd_red", "victim": "random"}),
            )
        },
    }
    for case, scs in cases.items():
        d = {a: _drops(sc) for a, sc in scs.items()}
        total = paired(d["fdd-red"], d["red"])
        deferral = paired(d["fdd-red-random"], d["red"])
        whose = paired(d["fdd-red"], d["fdd-red-random"])
        red = np.mean(list(d["red"].values()))
        assert total.ci_high < -0.1 * red, (case, total)
        assert deferral.ci_high < -0.1 * red, (case, deferral)
        assert whose.mean > -0.25 * abs(total.mean), (case, whose, total)


def test_ns2_export_refuses_fdd_red():
    sc = scenario("fdd-red-s1", AQMS["fdd-red"])
    reason = ns2.unsupported_reason(to_ns2_resolved(sc.resolved, 1))
    assert reason is not None and "fdd_red" in reason and "FDD-RED" in reason
    p = subprocess.run(
        [
            QOSLAB,
            "export-ns2",
            str(SCENARIOS / "fdd-red-s1.toml"),
            "--set",
            "link.bottleneck.queue_ab.type=fdd_red",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 1 and "fdd_red" in p.stderr and "Traceback" not in p.stderr


def test_fdd_red_quick_writes_verdicts_tables_and_figures(tmp_path, tmp_path_factory, monkeypatch):
    """The experiment end to end (quick, 2 seeds, Figs. 10-11 on two points each to keep it
    short): every claim has a verdict under every reading, each decided from its own CI, and
    the random-victim split adds up seed by seed."""
    monkeypatch.setattr(fdd_red, "BUFFERS_QUICK", (50, 200))
    monkeypatch.setattr(fdd_red, "FLOWS_QUICK", (5, 20))
    # its runs are test_prefetch.py's warm-up test's, computed once for both (conftest.quick_runs)
    store = quick_runs(tmp_path_factory, "fdd-red", 2, tmp_path / "st")
    rep = reproduction.reproduce("fdd-red", quick=True, seeds=2, out=tmp_path, store=store, progress=False)
    assert not rep.sweep.failed
    d = rep.out
    for name in (
        "fig4-5-cwnd",
        "fig6-bandwidth",
        "fig7-table2-throughput",
        "fig8-throughput",
        "fig9-queue",
        "fig10-drops-vs-buffer",
        "fig11-drops-vs-flows",
        "readings-jain",
    ):
        assert (d / f"{name}.png").stat().st_size > 10_000, name
    t1 = pd.read_csv(d / "table1-drops.csv")
    assert set(t1["aqm"]) == set(fdd_red.AQM_LABELS.values())
    doc = json.loads((d / "verdicts.json").read_text())
    vs = doc["verdicts"]
    assert doc["quick"] is True and all(v["seeds"] == 2 and v["test"] == "paired t" for v in vs)
    by_claim: dict[str, set[str]] = {}
    for v in vs:
        by_claim.setdefault(v["claim"], set()).add(v["reading"])
        if "drop" in v["claim"] or "fluctuation" in v["claim"]:
            direction, margin = "less", fdd_red_claims.DROPS_MARGIN
        elif "converges more rapidly" in v["claim"]:
            direction, margin = "less", 0.0
        elif "throughput" in v["claim"]:
            direction, margin = "greater", fdd_red_claims.THROUGHPUT_MARGIN_BPS
        else:
            direction, margin = "greater", 0.0
        # the sign verdict is the run's, on its t interval (the verdict's interval fits the kind)
        ci = tuple(math.inf if x is None else x for x in v["t_ci95"])
        assert v["sign_verdict"] == decide(ci, direction, 0.0, margin), v
        assert v["decided_from"] == "run" and v["magnitude"], v
    n_rw = len(fdd_red.READINGS) * len(fdd_red.WINDOWS)
    sizes = sorted(len(r) for r in by_claim.values())
    # Table 2 (Jain, throughput) × 2 RTT settings: readings × windows × 2 measurement windows;
    # Table 1: readings × windows; Figs. 10-11: two penalty rules × windows (Fig. 11 once per N,
    # under the same readings); Fig. 8: readings × windows × two convergence measures; Fig. 9:
    # readings × windows × (std, CV) × two windows; the conclusion (one claim of two parts): its
    # queue size, readings × windows × two windows, and its stability, Fig. 9's readings.
    fig = [2 * len(fdd_red.WINDOWS)] * 2
    assert sizes == sorted([2 * n_rw] * 4 + [n_rw] + fig + [2 * n_rw, 4 * n_rw, 2 * n_rw + 4 * n_rw]), sizes
    per_n = [v for v in vs if "for different flow numbers" in v["claim"]]
    # one record per number of flows (the quick run's N) and reading: Fig. 11 judged per N
    assert sorted({v["section"].rsplit("N = ", 1)[1] for v in per_n}) == sorted(
        f"{n} flows" for n in fdd_red.FLOWS_QUICK
    )
    assert len(per_n) == len(fdd_red.FLOWS_QUICK) * 2 * len(fdd_red.WINDOWS)
    vc = pd.read_csv(d / "victim-control.csv")
    assert np.allclose(vc["total_mean"], vc["whose_mean"] + vc["deferral_mean"], atol=1e-9)


@pytest.mark.slow
def test_fdd_red_full(tmp_path):
    """The full reproduction (20 seeds) and what it pins down (docs/experiments/fdd-red.md)."""
    rep = reproduction.reproduce("fdd-red", out=tmp_path, store=tmp_path / "store", progress=False)
    assert not rep.sweep.failed
    c = rep.comparison.set_index("id")
    # Table 1: FDD-RED drops as many packets as RED in 20 s, about twice the paper's 67
    red, fdd = c.loc["t1-drops-red"], c.loc["t1-drops-fdd-red"]
    assert abs(fdd["mean"] - red["mean"]) < 0.03 * red["mean"] and fdd["ci_low"] > 1.5 * 67
    # Table 2 over 80 s of steady state: FDD-RED fairer than RED, CIs apart, in both settings
    for rtt in ("homogeneous", "heterogeneous"):
        r, f = c.loc[f"t2-fi-{rtt}-red-file"], c.loc[f"t2-fi-{rtt}-fdd-red-file"]
        assert f["ci_low"] > r["ci_high"], rtt
    assert c.loc["t2-fi-homogeneous-fdd-red-file", "ci_low"] > 0.996
    # ... but over a whole 20 s run FDD-RED is less fair than RED in both settings
    for rtt in ("homogeneous", "heterogeneous"):
        r, f = c.loc[f"t2-fi-{rtt}-red-20s"], c.loc[f"t2-fi-{rtt}-fdd-red-20s"]
        assert f["mean"] < r["mean"], rtt
    # Fig. 10 (window unlimited): the same drops up to B = 125 (overflow-dominated), fewer
    # beyond, where deferred drops of flows that fell silent are cancelled
    f10 = pd.read_csv(rep.out / "fig10-drops-vs-buffer.csv")
    w = f10[f10["window"] == 1000].pivot_table(index="buffer", columns="aqm", values="drops_bottleneck_mean")
    assert (abs(w["fdd-red"] - w["red"]) <= 0.05 * w["red"]).loc[:125].all(), w
    assert w.loc[200, "fdd-red"] < 0.8 * w.loc[200, "red"], w
    # ... and the random-victim control drops as few: the deferral, not the choice of victim
    assert w.loc[200, "fdd-red-random"] < 0.8 * w.loc[200, "red"], w
    # Fig. 11: more drops than RED with 10 flows, fewer from 30 flows on
    f11 = pd.read_csv(rep.out / "fig11-drops-vs-flows.csv")
    w = f11[f11["window"] == 1000].pivot_table(index="flows", columns="aqm", values="drops_bottleneck_mean")
    assert w.loc[10, "fdd-red"] > 1.1 * w.loc[10, "red"], w
    assert (w["fdd-red"] < 0.9 * w["red"]).loc[30:].all(), w
    # the verdicts: under the prose's reading FDD-RED is fairer in steady state (the CIs above
    # are apart), but by less than the paper's magnitude shows (+0.029 homogeneous, +0.013
    # heterogeneous, tested at half of each): inconclusive or weaker than claimed, never
    # reproduces (the fixed-seed file of 3757fc4^ and the sequential docs/verdicts/fdd-red.json:
    # inconclusive in both settings; docs/experiments/fdd-red.md, item 1)
    vs = json.loads((rep.out / "verdicts.json").read_text())["verdicts"]
    v = {(x["claim"], x["reading"]): x["verdict"] for x in vs}
    for rtt in ("homogeneous", "heterogeneous"):
        claim = f"In both experiment, FDD-RED is fairer than RED algorithm [{rtt} RTTs]"
        got = v[(claim, "shares, estimator, 80 s steady state, window unlimited")]
        assert got in ("inconclusive", "weaker than claimed"), got
    assert all(x["seeds"] == 20 for x in vs)
