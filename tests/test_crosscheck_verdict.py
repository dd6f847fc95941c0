"""The cross-check's verdict (qoslab.crosscheck.judge / verdicts): tolerances per metric
family, Welch's test with Holm's correction, zero rows left out, and the CLI's exit status."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

from conftest import QOSLAB, SCENARIOS, drr_scenario_file, require
from qoslab.crosscheck import Row, judge, verdicts
from qoslab.stats import estimate, welch_p


def _row(metric: str, ours: list[float], theirs: list[float]) -> Row:
    return Row(metric, estimate(ours), estimate(theirs))


def test_welch_p_against_a_textbook_value() -> None:
    # Two samples with means 20 and 22, both sd sqrt(2.5), n = 5: t = -2, df = 8,
    # two-sided p = 0.0805 (t tables).
    a = estimate([18, 19, 20, 21, 22])
    b = estimate([20, 21, 22, 23, 24])
    assert welch_p(a, b) == pytest.approx(0.0805, abs=5e-4)
    assert welch_p(estimate([1, 1]), estimate([1, 1])) == 1.0
    assert welch_p(estimate([1, 1]), estimate([2, 2])) == 0.0
    assert np.isnan(welch_p(estimate([1]), estimate([1, 2])))


def test_the_issue_s_trtcm_wred_gap_is_a_disagreement() -> None:
    # Bottleneck drops 1014 ± 104 against ns-2's 1340 ± 116 over 10 seeds (the case that
    # went unflagged): -24 %, far outside the 15 % tolerance, and significant.
    rng = np.random.default_rng(1)
    ours = list(1014 + 145 * rng.standard_normal(10))
    theirs = list(1340 + 162 * rng.standard_normal(10))
    rows = judge([_row("drops bottleneck:ab", ours, theirs), _row("jain index", [0.99] * 3, [0.99] * 3)])
    assert rows[0].verdict == "disagree"
    v = {x.family: x for x in verdicts(rows)}
    assert v["drops"].verdict == "disagree" and v["drops"].disagree == ["drops bottleneck:ab"]
    assert v["Jain index"].verdict == "agree"


def test_tolerances_floors_and_noise() -> None:
    rows = judge(
        [
            # 4 % apart: inside the 5 % throughput tolerance whatever the test says
            _row("throughput_kbps a", [104.0, 104.0, 104.0], [100.0, 100.0, 100.0]),
            # 3 drops against 7: 133 % apart but under the 5-packet floor
            _row("drops prec2 x:ab", [3.0, 3.0, 3.0], [7.0, 7.0, 7.0]),
            # 30 % apart with a spread that makes it indistinguishable: noise, not disagreement
            _row("throughput_kbps b", [130.0, 30.0, 230.0], [100.0, 0.0, 200.0]),
            # Jain is judged in absolute terms: 0.03 apart is outside 0.02
            _row("jain index", [0.95, 0.951, 0.949], [0.98, 0.981, 0.979]),
        ]
    )
    assert [r.verdict for r in rows] == ["agree", "agree", "noise", "disagree"]
    assert {v.family: v.verdict for v in verdicts(rows)}["per-flow throughput"] == "agree"


def test_holm_keeps_ten_identical_flows_from_disagreeing() -> None:
    # Ten flows whose throughputs come from the same distribution in both simulators: with
    # Holm's correction the family agrees in (nearly) every trial; uncorrected tests at 5 %
    # would flag one flow in a large share of trials.
    rng = np.random.default_rng(7)
    flagged = 0
    for _ in range(200):
        rows = [
            _row(
                f"throughput_kbps f{i}",
                list(300 + 40 * rng.standard_normal(10)),
                list(300 + 40 * rng.standard_normal(10)),
            )
            for i in range(10)
        ]
        flagged += any(r.verdict == "disagree" for r in judge(rows))
    assert flagged <= 200 * 0.08, flagged


def test_rows_zero_on_both_sides_are_left_out() -> None:
    z = _row("drops prec2 bottleneck:ab", [0.0, 0.0], [0.0, 0.0])
    nz = _row("drops prec1 bottleneck:ab", [0.0, 1.0], [0.0, 0.0])
    assert z.zero and not nz.zero


def test_cli_exit_status_and_json(tmp_path) -> None:
    require("ns")
    out = tmp_path / "cc.json"
    p = subprocess.run(
        [
            QOSLAB, "crosscheck", str(SCENARIOS / "ard-rio-4flows.toml"), "--seeds", "3",
            "--set", "duration=30s", "--set", "measurement.start=10s", "--set", "measurement.end=30s",
            "--json", str(out),
        ],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    doc = json.loads(out.read_text())
    assert p.returncode == (0 if doc["agree"] else 1), p.stdout + p.stderr
    assert doc["flavour"] == "ns2" and {v["family"] for v in doc["verdicts"]} >= {
        "per-flow throughput",
        "drops",
    }
    assert all(r["verdict"] in ("agree", "noise", "disagree", "n/a") for r in doc["rows"])
    assert not any(r["qoslab_mean"] == 0 and r["ns2_mean"] == 0 for r in doc["rows"])
    for fam in ("per-flow throughput", "Jain index", "drops", "marks", "utilisation"):
        assert f"{fam}: " in p.stdout
    # ns-2 cannot express a DRR scheduler: exit status 2, one line naming the file
    drr = drr_scenario_file(tmp_path)
    p = subprocess.run([QOSLAB, "crosscheck", str(drr), "--seeds", "1"], capture_output=True, text=True)
    assert p.returncode == 2, p.stderr
    assert "drr.toml" in p.stderr and "ns-2 cannot express" in p.stderr and "Traceback" not in p.stderr
