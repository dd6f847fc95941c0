"""Verdicts: the decision rule, the paired t-test (against scipy), the verdicts.json document,
and the README's table generated from the committed verdict files."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import scipy.stats

from qoslab import verdicts
from qoslab.stats import estimate, paired
from qoslab.verdicts import DOES_NOT, INCONCLUSIVE, REPRODUCES, Claim, decide

ROOT = Path(__file__).resolve().parents[1]


def test_decide_by_the_interval():
    assert decide((0.1, 0.3), "greater") == REPRODUCES
    assert decide((-0.3, -0.1), "greater") == DOES_NOT
    assert decide((-0.1, 0.3), "greater") == INCONCLUSIVE
    assert decide((-0.3, -0.1), "less") == REPRODUCES
    assert decide((0.1, 0.3), "less") == DOES_NOT
    # a claim of "reaches 95 % of its contract"
    assert decide((0.96, 1.2), "greater", threshold=0.95) == REPRODUCES
    assert decide((0.6, 0.8), "greater", threshold=0.95) == DOES_NOT
    # an effect inside the margin the claim needs is not the claimed effect
    assert decide((0.001, 0.004), "greater", margin=0.005) == DOES_NOT
    assert decide((0.001, 0.009), "greater", margin=0.005) == INCONCLUSIVE
    # one seed: no interval, no verdict
    assert decide((math.nan, math.nan), "greater") == INCONCLUSIVE


def test_paired_t_matches_scipy():
    rng = np.random.default_rng(7)
    a = rng.normal(1.0, 0.2, 12)
    b = a - 0.05 + rng.normal(0, 0.03, 12)
    t = paired(dict(enumerate(a)), dict(enumerate(b)))
    ref = scipy.stats.ttest_rel(a, b)
    assert t.n == 12 and t.p == pytest.approx(ref.pvalue, rel=1e-9)
    d = a - b
    half = scipy.stats.t.ppf(0.975, 11) * d.std(ddof=1) / math.sqrt(12)
    assert t.ci95 == pytest.approx((d.mean() - half, d.mean() + half), rel=1e-9)
    # only the seeds both sides have are paired
    t2 = paired({1: 1.0, 2: 2.0, 3: 4.0}, {2: 1.0, 3: 2.0, 4: 9.0})
    assert t2.seeds == (2, 3) and t2.mean == pytest.approx(1.5)


def test_claims_give_verdicts_and_documents_round_trip(tmp_path):
    c = Claim("flows reach their contract", "Sec. 5", "greater", "every flow ≥ r_i", threshold=0.95)
    v_yes = c.one_sample("reading A", estimate([1.01, 1.03, 0.99, 1.02]))
    v_no = c.one_sample("reading B", estimate([0.70, 0.72, 0.69, 0.74]))
    assert (v_yes.verdict, v_no.verdict) == (REPRODUCES, DOES_NOT)
    assert v_no.test == "one-sample t" and v_no.p < 0.001 and v_no.seeds == 4
    with pytest.raises(ValueError, match="verdict must be one of"):
        verdicts.Verdict("c", "s", "r", "", "", 0.0, (0.0, 0.0), "t", 1.0, 1, "maybe", "why")
    p = verdicts.write(tmp_path / "v.json", "x", {"study": "X", "quick": False, "seeds": 4}, [v_yes, v_no])
    doc = verdicts.read(p)
    assert [v["verdict"] for v in doc["verdicts"]] == [REPRODUCES, DOES_NOT]
    assert doc["verdicts"][0]["ci95"][0] < doc["verdicts"][0]["ci95"][1]
    bad = json.loads(p.read_text())
    del bad["verdicts"][1]["reason"]
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    with pytest.raises(ValueError, match=r"verdicts\[1\] lacks reason"):
        verdicts.read(tmp_path / "bad.json")


def test_readme_table_is_generated_from_the_committed_verdicts():
    """The README's table of studies is what ``python -m qoslab.verdicts readme`` writes from
    docs/verdicts/*.json: edit the verdicts (by running the experiments), not the README."""
    files = sorted((ROOT / "docs" / "verdicts").glob("*.json"))
    assert files, "no committed verdicts"
    docs = [verdicts.read(f) for f in files]
    assert verdicts.block(ROOT / "README.md") == verdicts.readme_table(docs)
    for d in docs:
        assert d["verdicts"], d["experiment"]
        page = ROOT / "docs" / "experiments" / f"{d['experiment']}.md"
        assert verdicts.block(page) == verdicts.page_table(d), page


def test_readme_groups_readings_without_merging_different_ones():
    """Readings that differ only after their last comma share an entry; a reading "x" is never
    folded into "x, y" (it did: the probe marker's plain readings vanished behind their ns2
    counterparts); a claim the paper makes of several figures is listed once per figure."""
    assert verdicts._readings(["a, w 1", "a, w 2", "b"]) == "a, w 1/2; b"
    assert verdicts._readings(["1500 B", "1500 B, ns2 RIO"]) == "1500 B; 1500 B, ns2 RIO"

    def rec(section: str, reading: str, verdict: str) -> dict:
        return {"claim": "better", "section": section, "reading": reading, "verdict": verdict}

    doc = {
        "experiment": "x",
        "study": "X",
        "quick": True,
        "seeds": 10,
        "verdicts": [rec("Fig. 3", "r", "reproduces"), rec("Fig. 4", "r", "does not reproduce")],
    }
    row = verdicts.readme_table([doc]).splitlines()[-1]
    assert "“better” (Fig. 3) — **reproduces**: r" in row
    assert "“better” (Fig. 4) — **does not reproduce**: r" in row
