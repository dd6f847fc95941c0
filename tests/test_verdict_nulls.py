"""Verdicts that state nulls as results: an observed null is decided, an interval wholly below
the paper's effect does not reproduce, intervals fit discrete, grid and censored metrics, counts
use the primary readings and ties never go to "not testable", and a committed file edited by
hand fails ``check``."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import pytest
import scipy.stats

from qoslab.reproduction.sequential_run import redecide
from qoslab.sequential import GroupSequential
from qoslab.verdicts import DOES_NOT, INCONCLUSIVE, NOT_TESTABLE, REPRODUCES, WEAKER, decide, docs, finalise
from qoslab.verdicts.audit import audit
from qoslab.verdicts.currency import experiment_fingerprint, seal
from qoslab.verdicts.intervals import min_seeds, sign_depth, sign_interval, sign_p, sign_test_looks
from qoslab.verdicts.magnitudes import DECLARED
from verdict_records import record  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _decl(exp: str, words: str, section: str = ""):
    fits = [m for m in DECLARED[exp] if words in m.match and section in m.section and not m.borrow]
    assert len(fits) == 1, fits
    return fits[0]


def _rec(m, values: list[float], reading: str = "stated, w_q 0.002", **kw: object) -> dict:
    return record(m.match + " (the paper's words)", m.section or "Sec. 4", reading, values, **kw)


def test_a_zero_difference_on_a_grid_metric_is_a_result_not_untestable():
    """RI+O Fig. 8 at 2 Mbps: RIO and RI+O meet the same subscription level in every seed
    (difference 0 on the 10-point grid). The paper claims RI+O gains 60 points (≥ +30 tested):
    the sign-test interval widened by the grid step, [−10, +10], excludes it: does not
    reproduce, never "not testable here"."""
    m = _decl("rio-plus-o", "Even with 2Mbps")
    assert m.kind == "grid" and m.grid == 10.0
    out = finalise([m], [_rec(m, [0.0] * 10)], "run")[0]
    assert out["verdict"] == DOES_NOT, out["reason"]
    assert out["ci95"] == [-10.0, 10.0] and "grid step 10" in out["interval"]
    assert "excludes the paper's magnitude on the null side" in out["reason"]
    # the 1 Mbps claim (≥ +10 points) is not excluded by [−10, +10]: the grid is too coarse to
    # tell an effect of one step from none, and the verdict says so
    m1 = _decl("rio-plus-o", "With 1Mbps profile rate")
    assert finalise([m1], [_rec(m1, [0.0] * 10)], "run")[0]["verdict"] == INCONCLUSIVE


def test_an_interval_wholly_below_the_claimed_effect_does_not_reproduce():
    """ARD: ARM − RIO = −0.0002 [−0.0022, +0.0017] Jain against a claimed ≥ +0.049. The interval
    touches 0 but excludes the paper's effect: the effect is absent, whatever more seeds give."""
    big = (0.049, math.inf)
    assert decide((-0.0022, 0.0017), "greater", magnitude=big) == DOES_NOT
    # reaching the claimed effect and the null at once is what inconclusive means
    assert decide((-0.01, 0.06), "greater", magnitude=big) == INCONCLUSIVE
    # a real effect of the claimed sign below the claimed size stays weaker
    assert decide((0.01, 0.02), "greater", magnitude=big) == WEAKER
    # the same for a claim of a decrease (FDD-RED's drops ≤ −27.5 %, margin 5 %)
    drops = (-math.inf, -0.275)
    assert decide((-0.10, 0.04), "less", margin=0.05, magnitude=drops) == DOES_NOT
    assert decide((-0.40, 0.01), "less", margin=0.05, magnitude=drops) == INCONCLUSIVE
    # and through the rules, with Holm's correction over readings: the decisive test is the one
    # against the claimed effect, which a precise null passes
    m = _decl("ard", "the ARM scheme improves TCP fairness")
    recs = [
        _rec(m, [0.001 * ((i * 7 + j * 3) % 5 - 2) for i in range(20)], reading=f"r{j}") for j in range(4)
    ]
    out = finalise([m], recs, "run")
    assert {r["verdict"] for r in out} == {DOES_NOT}
    assert all(r["p_holm"] < 0.05 for r in out)


def test_four_equal_seeds_of_a_discrete_metric_never_decide():
    """RI+O Fig. 9's first failing multiple, −2 in each of 4 seeds: a t interval of width 0
    and p = 0 would decide; the sign-test interval needs 6 seeds (8 under the sequential design,
    whose share at 8 seeds is α/2), so it is unbounded and the record inconclusive, with no p
    of 0."""
    m = _decl("rio-plus-o", "RIO fails to meet the assurance", "unit 0.1 Mbps")
    out = finalise([m], [_rec(m, [-2.0] * 4, reading="stated, reference RIO, w_q 0.002")], "run")[0]
    assert out["verdict"] == INCONCLUSIVE and out["ci95"] == [None, None]
    assert out["p_direction"] is not None and out["p_direction"] > 0
    # with six seeds at 95 % the interval is [−2, −2] widened by the grid step: decided
    six = finalise([m], [_rec(m, [-2.0] * 6, reading="stated, reference RIO, w_q 0.002")], "run")[0]
    assert six["ci95"] == [-3.0, -1.0] and six["verdict"] == DOES_NOT
    # the sequential design's look at 4 seeds (α/4) is as undecided, at 8 it decides
    design = GroupSequential((4, 6, 8, 10))
    for n, want in ((4, INCONCLUSIVE), (6, INCONCLUSIVE), (8, DOES_NOT)):
        rec = finalise([m], [_rec(m, [-2.0] * n, reading="stated, reference RIO, w_q 0.002")], "run")[0]
        got = redecide([rec], [m], list(design.plan[: design.plan.index(n) + 1]), {}, design)[0]
        assert got["verdict"] == want, (n, got["reason"])


def test_ten_seeds_of_one_sign_decide_a_claim_of_twelve_readings_under_the_sequential_design():
    """TWAM's "no TCP flow experiences a Slow Start phase": about ten flows with a timeout in
    every one of ten seeds, in each of twelve readings, against a claimed 0. An equal share of α
    at each of the four looks left the sign test's p of 0.002 at 4 × 0.002 = 0.0078, 0.094 after
    Holm over twelve readings: "inconclusive" whatever the runs said. The exact test cannot
    reject at 4 or 6 seeds, so the design spends α at 8 and 10 seeds only (α/2 each): 0.0039,
    0.047 after Holm: does not reproduce, in the run's path and in redecide's."""
    m = _decl("twam-dwred", "no TCP flow experiences a Slow Start phase")
    assert m.kind == "discrete"
    recs = [
        _rec(m, [10.0] * 9 + [9.0 - (j % 3)], reading=f"reading {j}", looks=[4, 6, 8, 10]) for j in range(12)
    ]
    design = GroupSequential((4, 6, 8, 10))
    run = redecide(recs, [m], [4, 6, 8, 10], {}, design)
    stored = finalise([m], recs, "stored interval", 0.05 / 4)
    for out in (run, stored):
        assert {r["verdict"] for r in out} == {DOES_NOT}, out[0]["reason"]
        assert all(r["p_holm"] == pytest.approx(12 * 2 * 2 / 1024) for r in out)
        assert "at level 0.975" in out[0]["interval"]
    # a record of a continuous metric keeps the equal share (its t test can reject at any look)
    assert sign_test_looks([4, 6, 8, 10], 0.05) == 2
    assert sign_test_looks([4, 6, 8, 10, 12, 14, 16, 18, 20], 0.05) == 6
    # the error over every look stays at most α: the exact probability, under the null, that
    # the sign test rejects at 8 seeds (at α/2) or at 10 (at α/2), over all 2^10 sign sequences
    rejected = 0
    for bits in range(1 << 10):
        signs = [1.0 if bits >> i & 1 else -1.0 for i in range(10)]
        if any(2 * sign_p(signs[:n], 0.0) <= 0.05 for n in (4, 6, 8, 10)):
            rejected += 1
    assert rejected / 1024 <= 0.05


def test_the_sign_test_interval_is_exact():
    """``sign_depth`` is the largest k with 2·P(Bin(n, ½) ≤ k − 1) ≤ α, checked against scipy's
    binomial; the interval holds the median with at least 1 − α for any distribution."""
    for alpha in (0.05, 0.0125):
        for n in range(1, 30):
            k = sign_depth(n, alpha)
            if k:
                assert 2 * scipy.stats.binom.cdf(k - 1, n, 0.5) <= alpha + 1e-12
            assert 2 * scipy.stats.binom.cdf(k, n, 0.5) > alpha
    assert min_seeds(0.05) == 6 and min_seeds(0.0125) == 8
    assert sign_interval([5, 1, 4, 2, 3, 6], 0.05) == (1, 6)
    assert sign_p([0.0] * 6, 8.5) == pytest.approx(2 / 64) and sign_p([0.0] * 6, 0.0) == 1.0


def test_not_testable_only_where_the_declared_precondition_is_absent():
    """ARD's marker claims declare that the marker acts in the measured window: over 0-20 s it
    cannot (its first TPR update is at nτ = 100 s), whatever the values say."""
    m = _decl("ard", "the ARM scheme improves TCP fairness")
    assert m.precondition
    from qoslab.studies.ard.study import marker_acts

    startup = marker_acts({"n": 4, "setting": "stated", "period": "startup"})
    steady = marker_acts({"n": 4, "setting": "stated", "period": "steady"})
    assert startup[0] is False and "100 s" in startup[1] and steady[0] is True
    rec = _rec(m, [0.0] * 20, precondition_met=startup[0], precondition=startup[1])
    assert finalise([m], [rec], "run")[0]["verdict"] == NOT_TESTABLE
    rec = _rec(m, [0.0] * 20, precondition_met=steady[0], precondition=steady[1])
    assert finalise([m], [rec], "run")[0]["verdict"] == DOES_NOT
    # without the precondition an effect measured wholly against the claim is still a result
    # (FDD-RED lowering the aggregate throughput of a link RED already fills)
    worse = _rec(m, [-0.01 - 0.001 * (i % 3) for i in range(20)], precondition_met=False, precondition="x")
    assert finalise([m], [worse], "run")[0]["verdict"] == DOES_NOT


def test_the_sequential_look_reads_the_precondition_as_the_audit_does():
    """FDD-RED, heterogeneous RTTs, oracle RTTs, window 64: RED fills the link in every seed
    (the claim's precondition is absent) and FDD-RED − RED over 8 seeds is −6.3 kbps, its 95 %
    t interval [−10.2, −2.4] wholly below −1 kbps (the margin), the design's 0.9944 interval
    [−12.8, +0.2] not. The look took "testable" from the experiment's own verdict (the t
    interval's "does not reproduce") and wrote "does not reproduce"; the audit, reading the
    precondition, re-derived "not testable here" from the same numbers. Both read the
    precondition now, and agree."""
    from qoslab.verdicts.audit import _verdict

    m = _decl("fdd-red", "flows throughput and bottleneck utilization [heterogeneous RTTs]")
    assert m.precondition
    values = [0.0, 0.0, -7450.0, -6800.0, -9700.0, -3600.0, -11950.0, -10750.0]
    rec = _rec(
        m,
        values,
        reading="shares, oracle RTTs, 80 s steady state, window 64",
        precondition_met=False,
        precondition="RED's utilisation 1.0000-1.0000 of the link over 8 seeds",
    )
    looked = finalise([m], [rec], "run")[0]
    assert looked["verdict"] == DOES_NOT  # the 95 % t interval: wholly below −margin
    design = GroupSequential((4, 6, 8, 10, 12, 14, 16, 18, 20))
    got = redecide([looked], [m], [4, 6, 8], {}, design)[0]
    assert got["verdict"] == NOT_TESTABLE, got["reason"]
    assert "precondition" in got["reason"]
    assert got["verdict"] == _verdict(got, m)
    # an effect the design's interval too puts wholly past −margin is a result at a look
    worse = redecide(
        [
            finalise(
                [m],
                [_rec(m, [-9000.0 - 100 * i for i in range(8)], precondition_met=False, precondition="x")],
                "run",
            )[0]
        ],
        [m],
        [4, 6, 8],
        {},
        design,
    )[0]
    assert worse["verdict"] == DOES_NOT and "although the claim's precondition" in worse["reason"]
    assert worse["verdict"] == _verdict(worse, m)


def test_counts_use_primary_readings_and_ties_never_go_to_not_testable():
    base = {"claim": "c", "section": "s", "part": ""}
    doc = {
        "experiment": "x",
        "verdicts": [
            {**base, "reading": "a", "verdict": NOT_TESTABLE, "primary": True},
            {**base, "reading": "b", "verdict": DOES_NOT, "primary": True},
            {**base, "reading": "c", "verdict": NOT_TESTABLE, "primary": False},
            {**base, "reading": "d", "verdict": NOT_TESTABLE, "primary": False},
        ],
    }
    assert list(docs.claim_verdicts(doc).values()) == [DOES_NOT]
    doc["verdicts"][0]["verdict"] = REPRODUCES
    assert list(docs.claim_verdicts(doc).values()) == [DOES_NOT]
    doc["verdicts"][1]["verdict"] = INCONCLUSIVE
    assert list(docs.claim_verdicts(doc).values()) == [REPRODUCES]
    # a page shows how primary readings that disagree split, beside the verdict counted
    assert docs.primary_splits(doc) == {"“c”": "1 reproduces · 1 inconclusive"}
    assert "“c” — reproduces (1 reproduces · 1 inconclusive)" in docs.page_table(doc, "core")
    doc["verdicts"][1]["verdict"] = REPRODUCES
    assert docs.primary_splits(doc) == {} and "“c” — reproduces." in docs.page_table(doc, "core")
    # the readings' support in the text is listed under its heading, which is left out when no
    # reading has any (it stood empty on buffer-sizing's page)
    assert "**Readings**" not in docs.page_table(doc, "core")
    doc["verdicts"][0]["supported"] = "the text's words"
    said = "**Readings** (what the text says of each).\n\n- a: the text's words"
    assert said in docs.page_table(doc, "core")


def test_every_declared_claim_names_its_primary_readings():
    for exp, decls in DECLARED.items():
        for m in decls:
            assert m.primary is not None and m.primary.why, (exp, m.match)
        if all(m.from_next_run for m in decls):
            continue  # no full-length run committed yet (buffer-sizing): no file to read
        committed = json.loads((ROOT / "docs" / "verdicts" / f"{exp}.json").read_text())
        if committed["fingerprint"].get("experiment") != experiment_fingerprint(exp):
            continue  # a file of older experiment code: its readings may predate the declarations
        for m in decls:
            if m.borrow or m.from_next_run:
                continue
            recs = [r for r in committed["verdicts"] if m.match in r["claim"] and m.section in r["section"]]
            assert any(r.get("primary") for r in recs), (exp, m.match)


TAMPERINGS = {
    "every verdict flipped to reproduces": lambda d: [r.update(verdict=REPRODUCES) for r in d["verdicts"]],
    "one verdict flipped": lambda d: d["verdicts"][0].update(
        verdict=DOES_NOT if d["verdicts"][0]["verdict"] != DOES_NOT else REPRODUCES
    ),
    "an interval moved": lambda d: d["verdicts"][0].update(
        ci95=[(d["verdicts"][0]["ci95"][0] or 0) + 1.0, (d["verdicts"][0]["ci95"][1] or 0) + 1.0]
    ),
    "an effect changed": lambda d: d["verdicts"][1].update(effect=(d["verdicts"][1]["effect"] or 0) + 1),
    "a record deleted": lambda d: d["verdicts"].pop(3),
    "a record duplicated": lambda d: d["verdicts"].append(copy.deepcopy(d["verdicts"][2])),
    "quick set": lambda d: d.update(quick=True),
    "a Holm p lowered": lambda d: d["verdicts"][0].update(p_holm=0.0),
    "a precondition flipped": lambda d: [
        r.update(precondition_met=not r["precondition_met"])
        for r in d["verdicts"]
        if r.get("precondition_met") is not None
    ][:1],
    "values edited": lambda d: d["verdicts"][0].update(values=[0.5] * len(d["verdicts"][0]["values"])),
}


@pytest.mark.parametrize("name", sorted(TAMPERINGS))
@pytest.mark.parametrize("exp", ["ard", "fdd-red"])
def test_check_catches_a_committed_file_edited_by_hand(exp: str, name: str):
    doc = json.loads((ROOT / "docs" / "verdicts" / f"{exp}.json").read_text())
    assert audit(doc, DECLARED[exp]) == [], "the committed file must re-derive before tampering"
    forged = copy.deepcopy(doc)
    TAMPERINGS[name](forged)
    assert forged != doc
    assert audit(forged, DECLARED[exp]), name
    # a forger who also recomputes the records' digest is still caught by the re-derivation,
    # except for a deleted record (which only the digest and the claims' coverage can see)
    resealed = seal(forged)
    if name not in ("a record deleted",):
        assert audit(resealed, DECLARED[exp]), f"{name} (digest recomputed)"


def test_each_study_page_shows_its_forest_plot_of_every_claim_and_reading(tmp_path: Path):
    """The page block embeds the study's forest plot, which exists and is drawn from its file:
    one row per record (borrowed copies once), a primary record drawn thicker."""
    from qoslab.verdicts.forest import _rows, forest

    for exp, decls in DECLARED.items():
        if all(m.from_next_run for m in decls):
            continue  # no committed verdict file yet, so no forest plot
        page = (ROOT / "docs" / "experiments" / f"{exp}.md").read_text(encoding="utf-8")
        assert f"](img/verdicts/{exp}.png)" in page, exp
        assert (ROOT / "docs" / "experiments" / "img" / "verdicts" / f"{exp}.png").stat().st_size > 10_000
        doc = json.loads((ROOT / "docs" / "verdicts" / f"{exp}.json").read_text())
        rows = _rows(doc, DECLARED[exp])
        assert len(rows) == sum(not r.get("borrowed_from") for r in doc["verdicts"])
        assert any(r["primary"] for r in rows)
    assert forest(doc, DECLARED[exp], tmp_path / "f.png").stat().st_size > 10_000
