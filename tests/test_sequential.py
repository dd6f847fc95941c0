"""Sequential seeds (qoslab.sequential): the confidence sequence's closed form, its verdicts,
and its false-verdict rate by simulation against naive peeking at a t interval."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from qoslab import sequential as sq
from qoslab.stats import estimate
from qoslab.verdicts import DOES_NOT, INCONCLUSIVE, NOT_TESTABLE, REPRODUCES, WEAKER, Claim, finalise
from qoslab.verdicts.core import Magnitude

#: rounds of two seeds (one per core), looks at 2, 4, ..., 20 seeds
PLAN = sq.looks(2, 2, 20)
CLAIMS = 3000


def binomial_bound(p: float, n: int, z: float = 3.0) -> float:
    """The largest rate a procedure whose true rate is ``p`` shows in ``n`` claims, at z
    standard deviations of the binomial spread (one-sided 3 sd: 0.13 % false alarms)."""
    return p + z * math.sqrt(p * (1.0 - p) / n)


#: synthetic claims whose truth sits where a wrong verdict is most likely: on a boundary
CASES = [
    # a null effect against a zero threshold: 'reproduces' is wrong
    ("null, greater", 0.0, sq.Claimed("greater")),
    ("null, less", 0.0, sq.Claimed("less")),
    # the true effect exactly at threshold + margin: 'reproduces' is wrong
    ("at the margin", 0.5, sq.Claimed("greater", 0.0, 0.5)),
    # the true effect exactly at the paper's lower end: 'weaker than claimed' is wrong
    ("at the magnitude's end", 1.0, sq.Claimed("greater", 0.0, 0.0, (1.0, 3.0))),
    # the true effect just inside the claimed direction: 'does not reproduce' is wrong
    ("just beyond", 0.05, sq.Claimed("greater")),
]


def test_interval_is_where_the_mixture_martingale_reaches_one_over_alpha() -> None:
    xs = [0.3, -0.1, 0.8, 0.45, 0.2, 0.9, -0.3, 0.5, 0.1, 0.6]
    lo, hi = sq.interval(xs)
    mean = sum(xs) / len(xs)
    assert lo < mean < hi
    for edge in (lo, hi):
        assert sq.mixture_ratio(xs, edge) == pytest.approx(1.0 / sq.ALPHA, rel=1e-9)
    # inside: below 1/α; outside: above
    assert sq.mixture_ratio(xs, mean) < 1.0 / sq.ALPHA
    assert sq.mixture_ratio(xs, hi + 0.01) > 1.0 / sq.ALPHA
    assert sq.anytime_p(xs, hi + 0.01, [len(xs)]) < sq.ALPHA < sq.anytime_p(xs, mean, [len(xs)])


def test_interval_is_wider_than_the_t_interval_by_the_stated_factor() -> None:
    assert sq.interval([1.0, 2.0, 3.0]) == (-math.inf, math.inf)  # the whole line below 4 seeds
    assert math.isfinite(sq.half_width(4, 1.0))
    for n in (10, 20):
        assert sq.half_width_factor(n) == pytest.approx(1.7, abs=0.05)
        xs = [math.sin(3.0 * i) for i in range(n)]
        lo, hi = sq.interval(xs)
        tlo, thi = sq.t_interval(xs)
        assert (hi - lo) / (thi - tlo) == pytest.approx(sq.half_width_factor(n), rel=1e-9)


def test_decision_gives_the_five_verdicts_and_records_looks() -> None:
    def draws(mean: float, sd: float = 0.1):  # type: ignore[no-untyped-def]
        return lambda a, b: [mean + sd * math.sin(7.0 * i) for i in range(a, b)]

    plan = sq.looks(4, 2, 12)
    assert plan == [4, 6, 8, 10, 12]
    d = sq.decide_sequentially(draws(2.0), sq.Claimed("greater", magnitude=(1.0, 3.0)), plan)
    assert (d.verdict, d.seeds, d.looks, d.stopped_early) == (REPRODUCES, 4, (4,), True)
    assert d.p_direction < sq.ALPHA
    assert (
        sq.decide_sequentially(draws(5.0), sq.Claimed("greater", magnitude=(1.0, 3.0)), plan).verdict
        == WEAKER
    )
    assert sq.decide_sequentially(draws(-2.0), sq.Claimed("greater"), plan).verdict == DOES_NOT
    late = sq.decide_sequentially(draws(0.0, 1.0), sq.Claimed("greater"), plan)
    assert (late.verdict, late.seeds, late.looks, late.stopped_early) == (
        INCONCLUSIVE,
        12,
        tuple(plan),
        False,
    )
    assert (
        sq.decide_sequentially(draws(2.0), sq.Claimed("greater"), plan, testable=False).verdict
        == NOT_TESTABLE
    )
    rec = d.record()
    assert rec["looks"] == [4] and rec["seeds"] == 4 and "Lai" in rec["procedure"]


def test_sequential_record_carries_seeds_looks_and_procedure_through_finalise() -> None:
    d = sq.decide_sequentially(
        lambda a, b: [1.0 + 0.1 * math.sin(7.0 * i) for i in range(a, b)], sq.Claimed("greater"), PLAN
    )
    c = Claim("X beats Y", "§1", "greater", "X > Y")
    js = sq.verdict_record(c, "reading A", d)
    assert (
        js["looks"] == list(d.looks) and js["procedure"] == sq.CONFIDENCE_SEQUENCE and js["seeds"] == d.seeds
    )
    assert js["ci95"] == list(d.interval) and js["verdict"] == REPRODUCES
    out = finalise([Magnitude("greater", "X > Y", "test", match="X beats Y")], [js], "run")
    assert out[0]["verdict"] == REPRODUCES
    assert out[0]["looks"] == list(d.looks) and out[0]["procedure"] == sq.CONFIDENCE_SEQUENCE
    assert "looks" not in c.one_sample("reading A", estimate([1.0, 1.1])).as_json()  # fixed mode as before


@pytest.mark.parametrize(("name", "mean", "claim"), CASES, ids=[c[0] for c in CASES])
def test_false_verdict_rate_at_most_alpha(name: str, mean: float, claim: sq.Claimed) -> None:
    r = sq.simulate(mean, 1.0, claim, PLAN, claims=CLAIMS, seed=11)
    assert r.wrong_rate <= binomial_bound(sq.ALPHA, CLAIMS), (name, r)


def test_naive_peeking_exceeds_alpha_in_the_same_simulation() -> None:
    """The same claims, decided by a 95 % t interval at every look: the wrong-verdict rate
    exceeds what a valid procedure at α = 0.05 could show, so a replacement of the confidence
    sequence by peeking fails :func:`test_false_verdict_rate_at_most_alpha`."""
    worst = 0.0
    for _, mean, claim in CASES:
        r = sq.simulate(mean, 1.0, claim, PLAN, claims=CLAIMS, seed=11, rule=sq.t_interval)
        worst = max(worst, r.wrong_rate)
    assert worst > binomial_bound(sq.ALPHA, CLAIMS)


def test_a_real_effect_is_decided_before_the_cap() -> None:
    """An effect of 1.5 standard deviations: decided in about 9 seeds instead of 20 (measured
    0.9975 of 2000 claims reproduce, 8.8 seeds on average)."""
    r = sq.simulate(1.5, 1.0, sq.Claimed("greater"), PLAN, claims=500, seed=3)
    assert r.counts[REPRODUCES] / r.claims > 0.98
    assert r.mean_seeds < 10


def test_simulation_uses_the_same_intervals_as_the_decision() -> None:
    import numpy as np

    data = np.random.default_rng(5).normal(0.3, 1.0, (40, PLAN[-1]))
    for rule in (sq.interval, sq.t_interval, sq.GroupSequential(tuple(PLAN))):
        m = sq.intervals(data, PLAN, rule)
        for i in range(len(data)):
            for j, k in enumerate(PLAN):
                assert tuple(m[i, j]) == pytest.approx(rule(list(data[i, :k])), rel=1e-9, abs=1e-12)


def test_experiment_records_are_redecided_from_the_design_not_the_t_interval() -> None:
    from qoslab.reproduction.sequential_run import redecide

    decl = Magnitude("greater", "X > Y", "test", low=0.5, match="X beats Y")
    strong = [1.0 + 0.05 * math.sin(3.0 * i) for i in range(8)]  # clears 0.5 either way
    weak = [0.4 + 1.2 * math.sin(5.0 * i) for i in range(8)]
    weak = [x - sum(weak) / 8 + 0.9 for x in weak]  # mean 0.9: the t interval clears 0, the design's not
    recs = []
    for reading, xs in (("strong", strong), ("weak", weak)):
        e = estimate(xs)
        recs.append(
            {
                "claim": "X beats Y",
                "section": "§1",
                "reading": reading,
                "test": "paired t",
                "effect": e.mean,
                "ci95": [e.ci_low, e.ci_high],
                "seeds": 8,
                "verdict": "inconclusive",
                "reason": "-",
                "part": "",
            }
        )
    assert recs[1]["ci95"][0] > 0.0  # naive: the direction would be decided
    design = sq.GroupSequential((4, 6, 8, 10))
    best: dict = {}
    out = redecide(recs, [decl], [4, 6, 8], best, design)
    lo, hi = design(strong)
    assert out[0]["ci95"] == pytest.approx([lo, hi], rel=1e-9)
    assert out[0]["verdict"] == REPRODUCES and out[0]["looks"] == [4, 6, 8]
    mean = sum(strong) / 8
    assert out[0]["p_direction"] == pytest.approx(
        design.p(8, mean, sum((x - mean) ** 2 for x in strong), 0.0), rel=1e-6
    )
    assert out[1]["ci95"][0] < 0.0 < out[1]["ci95"][1] and out[1]["verdict"] == INCONCLUSIVE
    assert out[1]["procedure"] == design.procedure and "0.05/4" in design.procedure
    # what a reader sees beside the verdict is the interval the verdict rests on
    assert out[1]["ours"] == f"group-sequential interval [{out[1]['ci95'][0]:.4g}, {out[1]['ci95'][1]:.4g}]"
    # the same records under the confidence sequence's width would not differ in kind, only in
    # width: the design's is narrower at this look
    assert (hi - lo) < (sq.interval(strong)[1] - sq.interval(strong)[0])


def test_a_sequential_file_redecided_keeps_the_designs_level_and_p() -> None:
    """``python -m qoslab.verdicts redecide`` on a sequential file decides each record as the
    sequential run did at the record's look: the interval at 1 − 0.05/K and the direction p
    spent K times (Bonferroni) for a continuous claim (t), over the looks the exact test can
    reach for a discrete one (sign test: 8 and 10 seeds here, the looks every record of a
    sequential file names); a redecide at 0.05 (the fixed-seed level) would turn a
    Holm-inconclusive record decided."""
    from qoslab.reproduction.sequential_run import redecide
    from qoslab.verdicts import finalise
    from verdict_records import record

    design = sq.GroupSequential((4, 6, 8, 10))
    decls = [
        Magnitude("greater", "X > Y", "test", low=0.5, match="X beats Y"),
        Magnitude("less", "Z < 0", "test", kind="discrete", match="Z drops"),
    ]
    recs = [
        record("X beats Y", "§1", "a", [1.0 + 0.3 * math.sin(3.0 * i) for i in range(10)]),
        record("X beats Y", "§1", "b", [0.2 + 1.5 * math.sin(5.0 * i) for i in range(10)]),
        record("Z drops", "§2", "a", [-1.0 - (i % 3) for i in range(10)]),
        record("Z drops", "§2", "b", [-1.0, -2.0, 1.0, -1.0, -3.0, -1.0, -2.0, 2.0, -1.0, -1.0]),
    ]
    seq = redecide([dict(r) for r in recs], decls, [4, 6, 8, 10], {}, design)
    again = finalise(
        decls,
        [dict(r, looks=s["looks"]) for r, s in zip(recs, seq, strict=True)],
        "stored interval",
        design.spent,
    )
    assert "at level 0.975" in seq[2]["interval"]
    for a, b in zip(seq, again, strict=True):
        assert (a["verdict"], a["interval"]) == (b["verdict"], b["interval"]), (a["reading"], a["claim"])
        assert a["ci95"] == pytest.approx(b["ci95"], rel=1e-9)
        assert a["p_direction"] == pytest.approx(b["p_direction"], rel=1e-9)
        assert a["p_holm"] == pytest.approx(b["p_holm"], rel=1e-9)
    fixed = finalise(decls, [dict(r) for r in recs], "stored interval")
    assert [r["p_direction"] for r in fixed] != [r["p_direction"] for r in again]


#: the designs ``--sequential`` uses: looks at 4, 6, ... up to a cap of 10 (rio-plus-o,
#: twam-dwred) and 20 (ard, fdd-red, probe-marker)
DESIGNS = {cap: sq.GroupSequential(tuple(sq.looks(4, 2, cap))) for cap in (10, 20)}


def test_group_sequential_interval_is_the_bonferroni_t_interval() -> None:
    xs = [0.3, -0.1, 0.8, 0.45, 0.2, 0.9, -0.3, 0.5, 0.1, 0.6]
    g = DESIGNS[10]
    lo, hi = g(xs)
    e = estimate(xs)
    # the t interval at level 1 − α/K: its half-width over the 95 % one's is the quantiles' ratio
    assert (hi - lo) / (e.ci_high - e.ci_low) == pytest.approx(
        sq.t_ppf(1 - 0.05 / 8, 9) / sq.t_ppf(0.975, 9), rel=1e-9
    )
    assert (lo + hi) / 2 == pytest.approx(e.mean)
    # the p at an end of the interval is α, inside above, outside below
    mean = sum(xs) / len(xs)
    ss = sum((x - mean) ** 2 for x in xs)
    for edge in (lo, hi):
        assert g.p(10, mean, ss, edge) == pytest.approx(sq.ALPHA, rel=1e-6)
    assert g.p(10, mean, ss, hi + 0.01) < sq.ALPHA < g.p(10, mean, ss, mean + 0.01)
    with pytest.raises(ValueError, match="increasing looks"):
        sq.GroupSequential((6, 4))


def test_group_sequential_is_narrower_than_the_sequence_at_every_look() -> None:
    """The factors the module's text states, and the design narrower at every declared look."""
    assert [round(DESIGNS[10].factor(n), 2) for n in (4, 6, 8, 10)] == [1.69, 1.48, 1.41, 1.38]
    assert round(DESIGNS[20].factor(4), 2) == 2.26 and round(DESIGNS[20].factor(20), 2) == 1.49
    for g in DESIGNS.values():
        for n in g.plan:
            assert 1.0 < g.factor(n) < sq.half_width_factor(n)


@pytest.mark.parametrize("cap", [10, 20])
@pytest.mark.parametrize("futility", [False, True])
@pytest.mark.parametrize(("name", "mean", "claim"), CASES, ids=[c[0] for c in CASES])
def test_group_sequential_false_verdict_rate_at_most_alpha(
    name: str, mean: float, claim: sq.Claimed, cap: int, futility: bool
) -> None:
    """Claims whose truth sits on a boundary, decided at the design's looks (with the futility
    stopping ``--sequential`` uses, or without): wrong verdicts at most α. Measured with 3,000
    claims: 1.2–1.7 % at the direction's boundary, 0.2 % at the magnitude's end."""
    g = DESIGNS[cap]
    r = sq.simulate(mean, 1.0, claim, list(g.plan), claims=CLAIMS, seed=11, rule=g, futility=futility)
    assert r.wrong_rate <= binomial_bound(sq.ALPHA, CLAIMS), (name, r)


def test_group_sequential_spending_alpha_once_per_look_is_what_keeps_it_valid() -> None:
    """The same claims with every look at the full α (the design of one look, used at all of
    them: peeking): the wrong-verdict rate exceeds α, so dropping the split fails the test above."""
    worst = 0.0
    plan = list(sq.looks(2, 2, 20))
    peeking = sq.GroupSequential((20,))
    for _, mean, claim in CASES:
        r = sq.simulate(mean, 1.0, claim, plan, claims=CLAIMS, seed=11, rule=peeking)
        worst = max(worst, r.wrong_rate)
    assert worst > binomial_bound(sq.ALPHA, CLAIMS)


def test_group_sequential_decides_real_effects_sooner_than_the_sequence() -> None:
    """An effect of 1.5 standard deviations at a cap of 10: measured, the design reproduces 93 %
    of 5,000 claims in 6.8 seeds on average, the sequence 80 % in 8.1."""
    g = DESIGNS[10]
    r = sq.simulate(1.5, 1.0, sq.Claimed("greater"), list(g.plan), claims=2000, seed=3, rule=g)
    c = sq.simulate(1.5, 1.0, sq.Claimed("greater"), list(g.plan), claims=2000, seed=3)
    assert r.counts[REPRODUCES] > c.counts[REPRODUCES] and r.mean_seeds < c.mean_seeds
    d = sq.decide_sequentially(
        lambda a, b: [2.0 + 0.1 * math.sin(7.0 * i) for i in range(a, b)],
        sq.Claimed("greater"),
        list(g.plan),
        rule=g,
    )
    assert (d.verdict, d.seeds, d.test) == (REPRODUCES, 4, "group-sequential t")
    assert d.record()["procedure"] == g.procedure and d.p_direction < sq.ALPHA
    with pytest.raises(ValueError, match="not the plan's"):
        sq.decide_sequentially(lambda a, b: [0.0] * (b - a), sq.Claimed("greater"), [4, 6], rule=g)


def test_bad_sequential_input_is_one_line() -> None:
    import subprocess

    from conftest import QOSLAB

    for args, expected in (
        (["fdd-red", "--quick", "--max-seeds", "6"], "--max-seeds goes with sequential seeds"),
        (["fdd-red", "--seeds", "6", "--no-futility"], "--no-futility goes with sequential seeds"),
        (["fdd-red", "--sequential", "--seeds", "6"], "give --max-seeds, not --seeds"),
        (["red-baseline", "--sequential", "--quick"], "declares no claim magnitudes"),
        (["red-baseline", "--max-seeds", "6"], "declares no claim magnitudes"),
        (["fdd-red", "--sequential", "--max-seeds", "3"], "--max-seeds must be at least 4"),
    ):
        p = subprocess.run([QOSLAB, "reproduce", *args], capture_output=True, text=True, timeout=120)
        lines = p.stderr.strip().splitlines()
        assert p.returncode == 1 and len(lines) == 1 and expected in lines[0], p.stderr


def test_reproduce_all_sequential_runs_the_experiments_without_magnitudes_on_fixed_seeds(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`reproduce all --sequential` once stopped at the first experiment without declared
    magnitudes (mixed-traffic); each of those now runs its fixed seeds and says so."""
    from types import SimpleNamespace

    import pandas as pd
    from typer.testing import CliRunner

    from qoslab import reproduction
    from qoslab.cli import app
    from qoslab.reproduction import sequential_run
    from qoslab.verdicts.magnitudes import DECLARED

    calls: list[tuple[str, str]] = []

    def fake(name: str) -> SimpleNamespace:
        sweep = SimpleNamespace(total=1, computed=1, reused=0, failed=[])
        exp = SimpleNamespace(name=name)
        return SimpleNamespace(
            experiment=exp, comparison=pd.DataFrame(), sweep=sweep, wall_time_s=0.0, report="r"
        )

    def fixed(exp, **kw):  # type: ignore[no-untyped-def]
        calls.append(("fixed", exp.name))
        return fake(exp.name)

    def seq(name, **kw):  # type: ignore[no-untyped-def]
        calls.append(("sequential", name))
        return fake(name), {"looks": [4], "decided": 1, "records": 1, "runs": 1, "runs_all_or_nothing": 1}

    monkeypatch.setattr(reproduction, "reproduce", fixed)
    monkeypatch.setattr(sequential_run, "reproduce_sequential", seq)
    r = CliRunner().invoke(app, ["reproduce", "all", "--sequential", "-q", "--store", str(tmp_path / "s")])
    assert r.exit_code == 0, r.output
    names = [e.name for e in reproduction.available()]
    assert calls == [("sequential" if DECLARED.get(n) else "fixed", n) for n in names]
    assert any(mode == "fixed" for mode, _ in calls) and any(mode == "sequential" for mode, _ in calls)
    assert "mixed-traffic: declares no claim magnitudes, so no sequential verdicts" in r.output


def _fake_look(out: Path, decl: Any, values: list[float], verdict: str) -> Any:
    """What one look of a reproduction leaves (``verdicts.json`` with one twam-dwred record of
    declaration ``decl`` over ``values``, a report), as
    :func:`qoslab.reproduction.runner.reproduce` returns it."""
    import json
    from types import SimpleNamespace

    e = estimate(values)
    rec = {
        "claim": decl.match,
        "section": decl.section,
        "reading": "r",
        "test": "one-sample t",
        "effect": e.mean,
        "ci95": [e.ci_low, e.ci_high],
        "seeds": len(values),
        "verdict": verdict,
        "reason": "-",
        "part": "",
        "ours": "x",
    }
    out.mkdir(exist_ok=True)
    (out / "verdicts.json").write_text(json.dumps({"verdicts": [rec]}))
    (out / "report.md").write_text("")
    return SimpleNamespace(out=out, report=out / "report.md", sweep=SimpleNamespace(computed=0), deferred=[])


def test_not_testable_is_judged_again_at_every_look(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A precondition met "in some seed" may be absent at 4 seeds and met at 6: "not testable
    here" neither freezes nor ends the rounds when no declaration fixes the precondition by the
    configuration (it froze fdd-red records that 20 seeds decide). At 4 seeds the interval still
    reaches the claimed 0.95, so no effect of the other sign decides it early."""
    import json

    from qoslab.reproduction import sequential_run
    from qoslab.verdicts.magnitudes import DECLARED

    decl = DECLARED["twam-dwred"][0]
    below = [0.86, 0.94, 0.88, 0.92, 0.90, 0.90, 0.90, 0.90]  # under 0.95 r_i, clearly from 6 seeds

    def fake(exp, *, seeds: int, **kw):  # type: ignore[no-untyped-def]
        verdict = "does not reproduce" if seeds >= 6 else NOT_TESTABLE
        return _fake_look(tmp_path / str(seeds), decl, below[:seeds], verdict)

    monkeypatch.setattr(sequential_run, "reproduce", fake)
    rep, summary = sequential_run.reproduce_sequential("twam-dwred", max_seeds=8)
    final = json.loads((rep.out / "verdicts.json").read_text())["verdicts"][0]
    assert summary["looks"] == [4, 6]
    assert final["verdict"] == DOES_NOT and final["looks"] == [4, 6]


#: (claim, true means): effects from the boundary to clearly decided, where futility could cost
#: power (a record the cap would have decided, stopped early)
POWER = [
    (sq.Claimed("greater"), (0.0, 0.5, 0.75, 1.0, 1.5)),
    (sq.Claimed("greater", 0.0, 0.0, (1.0, 3.0)), (1.0, 1.5, 2.0, 3.0, 4.0)),
]
CAPPED = sq.looks(4, 2, 20)


@pytest.mark.parametrize(("name", "mean", "claim"), CASES, ids=[c[0] for c in CASES])
def test_futility_keeps_the_false_verdict_rate_at_most_alpha(
    name: str, mean: float, claim: sq.Claimed
) -> None:
    r = sq.simulate(mean, 1.0, claim, CAPPED, claims=CLAIMS, seed=11, futility=True)
    assert r.wrong_rate <= binomial_bound(sq.ALPHA, CLAIMS), (name, r)


FUTILITY_RULES = pytest.mark.parametrize(
    ("rule", "seeds_on_boundary"),
    [(sq.GroupSequential(tuple(CAPPED)), 11.5), (sq.interval, 11.0)],
    ids=["group-sequential", "confidence sequence"],
)


def _futility_halves_the_seeds_and_costs_little_power(
    rule: sq.Interval, seeds_on_boundary: float, power_claims: int
) -> None:
    for claim, means in POWER:
        for mean in means:
            kw: dict[str, Any] = {"claims": power_claims, "seed": 11, "rule": rule}
            a = sq.simulate(mean, 1.0, claim, CAPPED, **kw)
            b = sq.simulate(mean, 1.0, claim, CAPPED, **kw, futility=True)
            decided = [1.0 - r.counts[INCONCLUSIVE] / r.claims for r in (a, b)]
            assert decided[1] >= decided[0] - 0.02, (claim, mean, decided)
            assert b.mean_seeds <= a.mean_seeds
    on_boundary = sq.simulate(
        0.0, 1.0, sq.Claimed("greater"), CAPPED, claims=CLAIMS, seed=11, rule=rule, futility=True
    )
    assert on_boundary.mean_seeds < seeds_on_boundary


@FUTILITY_RULES
def test_futility_halves_the_seeds_on_a_boundary_and_costs_little_power(
    rule: sq.Interval, seeds_on_boundary: float
) -> None:
    """Measured (3,000 claims each, looks 4..20): on the boundary the seeds fall from 19.7 to 10.9
    on average under the group-sequential design (19.8 to 9.8 under the confidence sequence);
    the share of claims the cap decides falls by at most 1.5 points (0.831 → 0.821 for an effect
    in the middle of a magnitude [1, 3] at sd 1; 0.686 → 0.671 under the sequence). Without the
    rule (``futile`` never true) the seeds do not fall; with a rule that projects the cap's width
    from the current spread alone (no optimistic bound), the power falls by up to 27 points.
    Here the power on 1,000 claims a mean (the same seed, with and without the rule), the
    boundary on 3,000; the power on 3,000 too in the slow twin below."""
    _futility_halves_the_seeds_and_costs_little_power(rule, seeds_on_boundary, power_claims=CLAIMS // 3)


@pytest.mark.slow
@FUTILITY_RULES
def test_futility_costs_little_power_on_3000_claims_a_mean(
    rule: sq.Interval, seeds_on_boundary: float
) -> None:
    _futility_halves_the_seeds_and_costs_little_power(rule, seeds_on_boundary, power_claims=CLAIMS)


def test_predictive_power_against_its_closed_form() -> None:
    """One boundary at 0: the cap decides when its mean is outside ±h, so the power is
    P(|N(e, s²)| > h) with s² = σ² (N − n)/(N n)."""
    from statistics import NormalDist

    n, cap, effect, ss = 8, 20, 0.9, 7.0
    lower = ss * (n - 1) / sq.chi2_ppf(sq.FUTILITY_SPREAD_LEVEL, n - 1)
    h = sq.projected_half_width(n, lower, cap)
    s = math.sqrt(ss / (n - 1) * (cap - n) / (cap * n))
    law = NormalDist(effect, s)
    assert sq.predictive_power(n, effect, ss, cap, (0.0,)) == pytest.approx(1.0 - (law.cdf(h) - law.cdf(-h)))
    # Wilson-Hilferty against the exact chi-square quantiles (5, 9, 15 degrees of freedom)
    for k, exact in ((5, 9.236), (9, 14.684), (15, 22.307)):
        assert sq.chi2_ppf(0.9, k) == pytest.approx(exact, rel=0.005)
    assert not sq.futile(4, 0.0, 1.0, 20, (0.0,))  # too few seeds to judge the spread
    assert sq.futile(6, 0.0, 5.0, 20, (0.0,)) and not sq.futile(6, 3.0, 5.0, 20, (0.0,))


def test_a_record_on_its_boundary_stops_for_futility(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """An effect that sits on the claim's boundary (values alternating around 0.95 r_i): the
    design cannot decide it at the cap; with futility the rounds stop at the first look where
    the predictive probability that the cap decides it is below 10 % (8 seeds: at 6 it is 13 %
    under the design's width, 9 % under the wider confidence sequence's, which stopped at 6), the
    record inconclusive and marked; without, they run to the cap."""
    import json

    from qoslab.reproduction import sequential_run
    from qoslab.verdicts.magnitudes import DECLARED

    decl = DECLARED["twam-dwred"][0]
    from qoslab.verdicts.core import bar_of

    bar = bar_of(decl.direction, decl.threshold, decl.margin)
    values = [bar + (0.01 if i % 2 else -0.01) for i in range(20)]
    calls: list[int] = []

    def fake(exp, *, seeds: int, **kw):  # type: ignore[no-untyped-def]
        calls.append(seeds)
        return _fake_look(tmp_path / f"{len(calls)}", decl, values[:seeds], INCONCLUSIVE)

    monkeypatch.setattr(sequential_run, "reproduce", fake)
    rep, summary = sequential_run.reproduce_sequential("twam-dwred", max_seeds=20)
    final = json.loads((rep.out / "verdicts.json").read_text())["verdicts"][0]
    assert summary["looks"] == [4, 6, 8] and summary["stopped_for_futility"] == 1
    assert final["verdict"] == INCONCLUSIVE and final["futility"] == 8 and "futility" in final["reason"]
    g = sq.GroupSequential(tuple(sq.looks(4, 2, 20)))
    ss6 = sum((x - bar) ** 2 for x in values[:6])
    assert sq.predictive_power(6, bar, ss6, 20, (bar,), g.half_width) == pytest.approx(0.131, abs=0.002)
    assert sq.predictive_power(6, bar, ss6, 20, (bar,)) == pytest.approx(0.090, abs=0.002)
    rep, summary = sequential_run.reproduce_sequential("twam-dwred", max_seeds=20, futility=False)
    assert summary["looks"] == sq.looks(4, 2, 20) and summary["stopped_for_futility"] == 0


#: the design of a cap of 20 seeds
G20 = sq.GroupSequential(tuple(sq.looks(4, 2, 20)))


def test_not_testable_gives_up_only_where_the_configuration_decides_the_precondition() -> None:
    """A record whose claim's precondition is absent stops at once when the configuration decides
    it (ARD's marker acting in the window: no seed changes that), and is judged again at the next
    look when a further seed may meet it (a link with room "in some arm and seed")."""
    from qoslab.reproduction import sequential_run
    from qoslab.studies.ard.claims import ARD_ACTS, ARD_ROOM
    from qoslab.verdicts.magnitudes import DECLARED

    decls = DECLARED["ard"]
    room = {
        "claim": "the ARD marker can achieve TCP fairness without a decrease in the link utilization",
        "section": "Sec. IV; Fig. 8(d)",
        "part": "utilisation",
        "reading": "r",
        "test": "paired t",
        "effect": 0.0,
        "ci95": [0.0, 0.0],
        "seeds": 6,
        "verdict": NOT_TESTABLE,
    }
    assert next(d for d in decls if d.part == "utilisation").precondition == ARD_ROOM
    assert not sequential_run.gives_up(room, decls, G20)
    acts = next(d for d in decls if d.precondition == ARD_ACTS and not d.part)
    marker = {**room, "claim": acts.match, "section": acts.section or room["section"], "part": ""}
    assert sequential_run.gives_up(marker, decls, G20)
    # before the first look at which futility applies, and when the record is testable, the
    # precondition does not stop it
    assert not sequential_run.gives_up({**marker, "seeds": 4}, decls, G20)
    assert not sequential_run.gives_up({**marker, "verdict": INCONCLUSIVE, "ci95": [-1.0, 1.0]}, decls, G20)


def test_deferred_figures_are_the_figures_saved_as_drawn(tmp_path: Path) -> None:
    """A sequential look draws its figures and saves only the last look's
    (``defer_figures``): saved afterwards, they are byte for byte the files a reproduction that
    saves each as it is drawn writes, and a look that is dropped leaves none."""
    from qoslab.report.page import save_all
    from qoslab.reproduction.runner import reproduce

    store = tmp_path / "store"
    now = reproduce("red-baseline", quick=True, out=tmp_path / "now", store=store, progress=False)
    later = reproduce(
        "red-baseline", quick=True, out=tmp_path / "later", store=store, progress=False, defer_figures=True
    )
    images = sorted(p.name for p in now.out.iterdir() if p.suffix == ".png")
    assert images and len(later.deferred) == len(images)
    assert not any(p.suffix == ".png" for p in later.out.iterdir())
    save_all(later.deferred)
    assert later.deferred == []
    assert sorted(p.name for p in later.out.iterdir()) == sorted(p.name for p in now.out.iterdir())
    for name in images:
        assert (later.out / name).read_bytes() == (now.out / name).read_bytes(), name
    dropped = reproduce(
        "red-baseline", quick=True, out=tmp_path / "dropped", store=store, progress=False, defer_figures=True
    )
    save_all(dropped.deferred, keep=False)
    assert not any(p.suffix in (".png", ".svg") for p in dropped.out.iterdir())


def test_a_full_run_is_sequential_unless_seeds_are_fixed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A full run of a study whose claims declare magnitudes takes its seeds sequentially (with
    futility unless --no-futility); --seeds N, --quick and a study without magnitudes run fixed
    seeds."""
    from types import SimpleNamespace

    import pandas as pd
    from typer.testing import CliRunner

    from qoslab import reproduction
    from qoslab.cli import app
    from qoslab.reproduction import sequential_run

    calls: list[tuple[str, str, Any]] = []

    def fake(name: str) -> SimpleNamespace:
        sweep = SimpleNamespace(total=1, computed=1, reused=0, failed=[])
        return SimpleNamespace(
            experiment=SimpleNamespace(name=name),
            comparison=pd.DataFrame(),
            sweep=sweep,
            wall_time_s=0.0,
            report="r",
        )

    def fixed(exp, **kw):  # type: ignore[no-untyped-def]
        calls.append(("fixed", exp.name, kw.get("seeds")))
        return fake(exp.name)

    def seq(name, **kw):  # type: ignore[no-untyped-def]
        calls.append(("sequential", name, kw["futility"]))
        summary = {"looks": [4], "decided": 1, "records": 1, "runs": 1, "runs_all_or_nothing": 1}
        return fake(name), summary

    monkeypatch.setattr(reproduction, "reproduce", fixed)
    monkeypatch.setattr(sequential_run, "reproduce_sequential", seq)
    store = ["-q", "--store", str(tmp_path / "s")]
    for args, expected in (
        (["fdd-red"], ("sequential", "fdd-red", True)),
        (["fdd-red", "--no-futility"], ("sequential", "fdd-red", False)),
        (["fdd-red", "--seeds", "5"], ("fixed", "fdd-red", 5)),
        (["fdd-red", "--quick"], ("fixed", "fdd-red", None)),
        (["fdd-red", "--quick", "--sequential"], ("sequential", "fdd-red", True)),
        (["red-baseline"], ("fixed", "red-baseline", None)),
    ):
        calls.clear()
        r = CliRunner().invoke(app, ["reproduce", *args, *store])
        assert r.exit_code == 0, (args, r.output)
        assert calls == [expected], args


def test_a_redecided_sequential_record_keeps_its_design_interval_and_its_futility() -> None:
    """``redecide`` re-decides a sequential file at the design's level (α/K): the reason names
    the group-sequential interval, and a record given up for futility at a look still says so
    (it said "the 95 % t interval" and lost the futility note, which the page lists)."""
    from verdict_records import record

    m = Magnitude("greater", "X > Y by 0.5", "test", low=0.5, match="X beats Y")
    r = record("X beats Y", "§1", "reading A", [0.1, 0.9, -0.2, 0.7, 0.4, 0.3], futility=6)
    out = finalise([m], [r], "stored interval", sq.ALPHA / 4)
    assert out[0]["verdict"] == INCONCLUSIVE
    assert "group-sequential interval" in out[0]["reason"]
    assert out[0]["reason"].endswith("; stopped for futility at 6 seeds")
    fixed = finalise([m], [record("X beats Y", "§1", "reading A", [0.1, 0.9, -0.2, 0.7, 0.4, 0.3])], "run")
    assert "95 % t interval" in fixed[0]["reason"] and "futility" not in fixed[0]["reason"]
