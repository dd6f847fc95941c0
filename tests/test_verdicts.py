"""Verdicts: the decision rule against the paper's magnitude, pinned quantities, Holm's
correction, p-values from stored intervals, the verdicts.json document, the fingerprints, and
the README's and pages' tables generated from the committed verdict files."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pytest
import scipy.stats

import qoslab
from qoslab import verdicts
from qoslab.stats import estimate, paired
from qoslab.verdicts import (
    DOES_NOT,
    INCONCLUSIVE,
    NOT_TESTABLE,
    REPRODUCES,
    WEAKER,
    Claim,
    Magnitude,
    currency,
    decide,
    docs,
    finalise,
    holm,
    p_from_interval,
)
from qoslab.verdicts.magnitudes import DECLARED

ROOT = Path(__file__).resolve().parents[1]


def test_decide_by_the_interval():
    assert decide((0.1, 0.3), "greater") == REPRODUCES
    assert decide((-0.3, -0.1), "greater") == DOES_NOT
    assert decide((-0.1, 0.3), "greater") == INCONCLUSIVE
    assert decide((-0.3, -0.1), "less") == REPRODUCES
    assert decide((0.1, 0.3), "less") == DOES_NOT
    assert decide((0.96, 1.2), "greater", threshold=0.95) == REPRODUCES
    assert decide((0.6, 0.8), "greater", threshold=0.95) == DOES_NOT
    # an effect inside the margin the claim needs is not the claimed effect
    assert decide((0.001, 0.004), "greater", margin=0.005) == DOES_NOT
    assert decide((0.001, 0.009), "greater", margin=0.005) == INCONCLUSIVE
    assert decide((math.nan, math.nan), "greater") == INCONCLUSIVE


def test_an_interval_outside_the_papers_range_on_the_claimed_side_is_weaker_than_claimed():
    """RI+O's Table I: the paper's +0.195, smallest effect +0.0975. An interval of +0.013 to
    +0.020 has the right sign and excludes the paper's magnitude: weaker, never reproduces."""
    big = (0.0975, math.inf)
    assert decide((0.0144, 0.0202), "greater", magnitude=big) == WEAKER
    assert decide((0.1072, 0.1099), "greater", magnitude=big) == REPRODUCES
    assert decide((0.09, 0.11), "greater", magnitude=big) == INCONCLUSIVE
    # "from two to three times" lower: marked/free in [1/3, 1/2]; 0.8 is lower, not 2-3×
    two_three = (1 / 3, 0.5)
    assert decide((0.78, 0.82), "less", threshold=0.9, magnitude=two_three) == WEAKER
    assert decide((0.40, 0.45), "less", threshold=0.9, magnitude=two_three) == REPRODUCES
    # past the far end of a two-sided range: the direction holds, the magnitude does not
    assert decide((0.2, 0.25), "less", threshold=0.9, magnitude=two_three) == WEAKER
    assert decide((0.95, 1.0), "less", threshold=0.9, magnitude=two_three) == DOES_NOT


def _rec(effect: float, ci: tuple[float, float], **kw: object) -> dict:
    r = {
        "claim": "no decrease in the link utilization",
        "section": "Fig. 8(d)",
        "reading": "r",
        "ours": "",
        "paper": "",
        "effect": effect,
        "ci95": list(ci),
        "test": "paired t",
        "p": 1.0,
        "seeds": 20,
        "verdict": REPRODUCES,
        "reason": "sign",
    }
    return {**r, **kw}


UTIL = Magnitude(
    "greater",
    "> −0.01",
    "test",
    threshold=-0.01,
    resolution=1e-3,
    match="no decrease in the link utilization",
)


def test_a_pinned_quantity_is_a_result_unless_its_declared_precondition_is_absent():
    """ARD's utilisation at 0.999+ in every arm and seed: ARD − RIO = 0 in all 20 seeds. The
    arms not differing is a finding, not "not testable": without a declared precondition the
    non-inferiority claim (> −0.01) reproduces on the sign-test interval [0, 0]. Declared
    ("the link is not saturated in every arm") and found absent in the runs, it is not testable
    here; found present, the interval decides. ``moves`` no longer decides anything."""
    rec = _rec(0.0, (0.0, 0.0), values=[0.0] * 20)
    plain = finalise([UTIL], [rec], "stored interval")[0]
    assert plain["verdict"] == REPRODUCES and "sign-test" in plain["interval"]
    pre = dataclasses.replace(UTIL, precondition="the link has headroom")
    absent = finalise([pre], [{**rec, "precondition_met": False, "precondition": "saturated"}], "run")[0]
    assert absent["verdict"] == NOT_TESTABLE and "saturated" in absent["reason"]
    present = finalise([pre], [{**rec, "precondition_met": True}], "run")[0]
    assert present["verdict"] == REPRODUCES
    moved = finalise([UTIL], [_rec(-3e-6, (-1.9e-5, 1.3e-5), moves=4e-5)], "run")[0]
    assert moved["verdict"] == REPRODUCES
    # a one-sample quantity with zero spread: the sign-test interval of its 20 seeds
    one = Magnitude("greater", "", "", threshold=90.0, low=95.0, high=100.0, match="near 100%")
    rec1 = _rec(100.0, (100.0, 100.0), claim="OUT loss near 100%", test="one-sample t")
    assert finalise([one], [rec1], "run")[0]["verdict"] == REPRODUCES


def test_movement_over_seeds_and_arms():
    """What the runs record as ``moves``: the largest spread within an arm and the largest
    difference between arms' means."""
    assert verdicts.rules.movement([[0.999, 0.999], [0.999, 0.999, 0.999]]) == 0.0
    assert verdicts.rules.movement([[0.90, 0.95], [0.99, 0.99]]) == pytest.approx(0.065)
    assert verdicts.rules.movement([[0.90, 1.00], [0.95, 0.95]]) == pytest.approx(0.10)
    assert math.isnan(verdicts.rules.movement([[], [math.nan]]))


def test_holm_on_known_p_values():
    # sorted 0.005, 0.01, 0.03, 0.04 → ×4, ×3, ×2, ×1 = 0.02, 0.03, 0.06, 0.04 → monotone 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5]) == [0.5] and holm([0.6, 0.6, 0.6]) == [1.0, 1.0, 1.0]
    # three readings each at p ≈ 0.03: each reproduces alone, none survives the correction
    m = Magnitude("greater", "", "", match="claim x")
    half = 0.028 * scipy.stats.t.ppf(0.975, 9)
    lo = 0.07 - half
    recs = [_rec(0.07, (lo, 0.07 + half), claim="claim x", seeds=10, reading=f"r{i}") for i in range(3)]
    assert decide((lo, 0.07 + half), "greater") == REPRODUCES
    out = finalise([m], recs, "run")
    p = out[0]["p_direction"]
    assert 0.02 < p < 0.05 and out[0]["p_holm"] == pytest.approx(min(1.0, 3 * p))
    assert {r["verdict"] for r in out} == {INCONCLUSIVE}


def test_p_from_a_stored_interval_is_the_t_tests():
    rng = np.random.default_rng(3)
    a = rng.normal(1.0, 0.2, 12)
    b = a - 0.05 + rng.normal(0, 0.03, 12)
    t = paired(dict(enumerate(a)), dict(enumerate(b)))
    assert p_from_interval(t.mean, t.ci95, t.n, 0.0) == pytest.approx(
        scipy.stats.ttest_rel(a, b).pvalue, rel=1e-6
    )
    ref = scipy.stats.ttest_1samp(a - b, 0.02).pvalue
    assert p_from_interval(t.mean, t.ci95, t.n, 0.02) == pytest.approx(ref, rel=1e-6)
    assert p_from_interval(0.0, (None, None), 1, 0.0) is None


def test_paired_t_matches_scipy():
    rng = np.random.default_rng(7)
    a = rng.normal(1.0, 0.2, 12)
    b = a - 0.05 + rng.normal(0, 0.03, 12)
    t = paired(dict(enumerate(a)), dict(enumerate(b)))
    assert t.n == 12 and t.p == pytest.approx(scipy.stats.ttest_rel(a, b).pvalue, rel=1e-9)
    t2 = paired({1: 1.0, 2: 2.0, 3: 4.0}, {2: 1.0, 3: 2.0, 4: 9.0})
    assert t2.seeds == (2, 3) and t2.mean == pytest.approx(1.5)


def test_claims_give_verdicts_and_documents_round_trip(tmp_path):
    c = Claim("flows reach their contract", "Sec. 5", "greater", "every flow ≥ r_i", threshold=0.95)
    v_yes = c.one_sample("reading A", estimate([1.01, 1.03, 0.99, 1.02]))
    v_no = c.one_sample("reading B", estimate([0.70, 0.72, 0.69, 0.74]))
    assert (v_yes.verdict, v_no.verdict) == (REPRODUCES, DOES_NOT)
    with pytest.raises(ValueError, match="verdict must be one of"):
        verdicts.Verdict("c", "s", "r", "", "", 0.0, (0.0, 0.0), "t", 1.0, 1, "maybe", "why")
    p = verdicts.write(tmp_path / "v.json", "x", {"study": "X", "quick": False, "seeds": 4}, [v_yes, v_no])
    doc = verdicts.read(p)
    assert [v["verdict"] for v in doc["verdicts"]] == [REPRODUCES, DOES_NOT]
    bad = json.loads(p.read_text())
    del bad["verdicts"][1]["reason"]
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    with pytest.raises(ValueError, match=r"verdicts\[1\] lacks reason"):
        verdicts.read(tmp_path / "bad.json")


def _committed() -> list[dict]:
    return [verdicts.read(f) for f in currency.verdict_files(ROOT)]


def test_every_committed_claim_has_one_declared_magnitude_and_none_is_dead():
    used: set[tuple[str, Magnitude]] = set()
    for d in _committed():
        decls = DECLARED[d["experiment"]]
        for v in d["verdicts"]:
            if not v.get("borrowed_from"):
                used.add((d["experiment"], verdicts.rules.find(decls, v["claim"], v["section"])))
    dead = [
        (e, m.match)
        for e, ms in DECLARED.items()
        for m in ms
        if not m.borrow and not m.from_next_run and (e, m) not in used
    ]
    assert not dead


def test_the_compound_ard_claim_is_split_into_its_parts():
    ard = verdicts.read(ROOT / "docs" / "verdicts" / "ard.json")
    parts = {v["part"] for v in ard["verdicts"] if "without a decrease" in v["claim"]}
    assert parts == {"utilisation", "fairness"}
    util = [v for v in ard["verdicts"] if v.get("part") == "utilisation"]
    # a link saturated in every arm and seed cannot show a decrease: the declared precondition
    # is absent there, and only there is the part not testable
    assert util and all((v["verdict"] == NOT_TESTABLE) == (v.get("precondition_met") is False) for v in util)


def test_readme_and_pages_are_generated_from_the_committed_verdicts():
    """The README's table and each page's are what ``python -m qoslab.verdicts readme`` writes
    from docs/verdicts/, against the core recorded in the README (so a change to the simulator
    elsewhere shows as staleness in ``check``, not as a failing test)."""
    against = docs.generated_against(ROOT / "README.md")
    assert against != "?"
    mine = [verdicts.read(f) for f in sorted((ROOT / "docs" / "verdicts").glob("*.json"))]
    assert verdicts.block(ROOT / "README.md") == verdicts.readme_table(mine, against)
    for d in mine:
        page = ROOT / "docs" / "experiments" / f"{d['experiment']}.md"
        assert verdicts.block(page) == verdicts.page_table(d, against), page


def test_a_study_comparing_senders_has_its_table_by_sender_generated():
    """buffer-sizing's page: its claims under ns-2's Reno and SACK (the full run) and the linux
    flavour's Reno, CUBIC and BBR (docs/verdicts/senders/), each sender's column the readings
    that name it, as ``python -m qoslab.verdicts readme`` writes them."""
    from qoslab.verdicts import tool

    against = docs.generated_against(ROOT / "README.md")
    paper = verdicts.read(ROOT / "docs" / "verdicts" / "buffer-sizing.json")
    linux = tool.own_sender_files()["buffer-sizing"]
    page = ROOT / "docs" / "experiments" / "buffer-sizing.md"
    want = tool.own_sender_block(paper, linux, against, tool.kernel_validations())
    assert verdicts.block(page, docs.SENDERS_BEGIN, docs.SENDERS_END) == want
    split = docs.by_reading_sender(paper)
    assert set(split) == {("reno", "ns2"), ("sack", "ns2")}
    assert sum(len(d["verdicts"]) for d in split.values()) == len(paper["verdicts"])
    assert all(" reno " in f" {v['reading']} " for v in split[("reno", "ns2")]["verdicts"])
    assert set(docs.by_reading_sender(linux)) == {
        ("sack", "linux"),
        ("cubic", "linux"),
        ("bbr", "linux"),
    }


def test_the_readme_table_says_whether_each_study_is_current():
    doc = {
        "experiment": "x",
        "study": "X",
        "quick": False,
        "seeds": 10,
        "fingerprint": {"core": "aaaaaaaaaaaa"},
        "verdicts": [
            {"claim": "c", "section": "s", "verdict": REPRODUCES, "primary": True, "p_direction": 0.001},
            {"claim": "c", "section": "s", "verdict": WEAKER, "primary": False, "p_direction": 0.01},
            {"claim": "c", "section": "s", "verdict": WEAKER, "primary": False, "p_direction": 0.5},
            {"claim": "d", "section": "s", "verdict": NOT_TESTABLE, "primary": True},
        ],
    }
    row = verdicts.readme_table([doc], "aaaaaaaaaaaa").splitlines()[-1]
    # claims by their primary reading (c: its one primary reproduces, though two others are
    # weaker); primary readings; all readings; Benjamini-Hochberg over the three p's: 0.001 and
    # 0.01 pass at 5 % (0.01 ≤ 0.05·2/3), 0.5 does not
    assert row.endswith(
        "| 2: 1 reproduces · 1 not testable | 1 reproduces · 1 not testable "
        "| 1 reproduces · 2 weaker · 1 not testable | 2 of 3 tests pass | yes |"
    ), row
    stale = verdicts.readme_table([doc], "bbbbbbbbbbbb").splitlines()[-1]
    assert stale.endswith("| no (core `aaaaaaaaaaaa`) |")


def test_check_finds_no_problem_in_the_checkout_and_reports_placeholders(tmp_path):
    problems, stale = currency.check(ROOT)
    assert problems == []
    assert all(": stale: " in s for s in stale)
    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text("fine\n")
    (tmp_path / "docs" / "page.md").write_text("took RUNTIME on 2 cores\nTODO: measure\nTODOS are words\n")
    assert currency.placeholders(tmp_path) == ["docs/page.md:1: RUNTIME", "docs/page.md:2: TODO"]
    # a malformed file and a file without fingerprints are problems (CI fails), named by path
    (tmp_path / "docs" / "verdicts" / "senders").mkdir(parents=True)
    (tmp_path / "docs" / "verdicts" / "a.json").write_text("{")
    (tmp_path / "docs" / "verdicts" / "b.json").write_text('{"experiment": "b", "verdicts": []}')
    # docs/verdicts/ holds qoslab's own studies (a plugin's pages are written outside docs/)
    plugin = {"experiment": "my-plugin", "fingerprint": {"core": "aaaaaaaaaaaa", "experiment": "x"}}
    (tmp_path / "docs" / "verdicts" / "c.json").write_text(json.dumps({**plugin, "verdicts": []}))
    problems, stale = currency.check(tmp_path)
    assert any("a.json: not JSON" in p for p in problems), problems
    assert any("b.json: no `fingerprint.core`" in p for p in problems), problems
    assert "docs/verdicts/c.json: experiment 'my-plugin' is no study of qoslab's own" in problems, problems
    assert not any("c.json" in s for s in stale), stale
    assert sum("placeholder" in p for p in problems) == 2


def test_a_files_staleness_names_each_fingerprint_that_differs():
    """``stale_reasons``, the rule ``check`` and ``make refresh`` share: nothing for a file of the
    checkout's core and experiment code, and one reason for each fingerprint that differs."""
    doc = currency.read(ROOT / "docs" / "verdicts" / "ard.json")
    exp = currency.experiment_fingerprint("ard")
    current = {**doc, "fingerprint": {**doc["fingerprint"], "core": "aaaaaaaaaaaa", "experiment": exp}}
    assert currency.stale_reasons(current, "aaaaaaaaaaaa") == []
    assert currency.stale_reasons(current, None) == []
    moved = currency.stale_reasons(current, "bbbbbbbbbbbb")
    assert moved == ["core `aaaaaaaaaaaa` ≠ checkout `bbbbbbbbbbbb`"]
    other = {**current, "fingerprint": {**current["fingerprint"], "experiment": "cccccccccccc"}}
    assert currency.stale_reasons(other, "bbbbbbbbbbbb") == [
        "core `aaaaaaaaaaaa` ≠ checkout `bbbbbbbbbbbb`",
        f"experiment code `cccccccccccc` ≠ checkout `{exp}`",
    ]
    unstamped = {**current, "fingerprint": {"core": "aaaaaaaaaaaa"}}
    assert currency.stale_reasons(unstamped, "aaaaaaaaaaaa") == [
        "experiment code not fingerprinted (run predates fingerprints)"
    ]


def test_the_core_fingerprint_is_the_builds():
    """``check`` reads the checkout's core fingerprint from the sources as build.rs hashes them;
    the built extension of this tree must carry the same."""
    built, source = qoslab.__version__.rpartition("+")[2], currency.core_fingerprint(ROOT)
    assert built == source, f"extension {built} is not this tree's core {source}: run `make build`"
