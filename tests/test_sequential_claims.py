"""Claims stop separately in the sequential mode (qoslab.reproduction.sequential_run): each claim
declares the sweeps its records rest on (rests_on.RESTS_ON), a sweep stops once every claim
resting on it is decided, and the declarations are checked against a real reproduction."""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from qoslab.reproduction import dependence, sequential_run
from qoslab.reproduction.base import get
from qoslab.reproduction.planning import planned
from qoslab.reproduction.rests_on import RESTS_ON
from qoslab.stats import estimate
from qoslab.studies.fdd_red import claims as fdd_claims
from qoslab.studies.fdd_red import study as fdd_red
from qoslab.studies.twam_dwred import claims as twam_claims
from qoslab.verdicts import DOES_NOT, INCONCLUSIVE
from qoslab.verdicts.magnitudes import DECLARED


def test_every_claim_declares_the_sweeps_it_rests_on_and_they_exist() -> None:
    assert set(RESTS_ON) == set(DECLARED)
    for name, decls in DECLARED.items():
        assert {d.match for d in decls} == set(RESTS_ON[name]), name
        for quick in (True, False):
            sweeps = {s.name for s in planned(get(name), seeds=4, quick=quick)[1]}
            for match, deps in RESTS_ON[name].items():
                assert deps and set(deps) <= sweeps, (name, quick, match, set(deps) - sweeps)


def test_a_sweep_is_planned_at_its_own_seeds_by_the_experiments_rule() -> None:
    seeds = {
        s.name: list(s.seeds)
        for s in planned(get("fdd-red"), seeds=8, quick=True, sweep_seeds={"fig10": 4})[1]
    }
    assert (
        seeds["fig10"] == [1, 2, 3, 4] and seeds["tables"] == list(range(1, 9)) and seeds["timeseries"] == [1]
    )
    # rio-plus-o's Table I takes twice the experiment's seeds in a full run: at 4, eight
    full = {s.name: len(s.seeds) for s in planned(get("rio-plus-o"), seeds=10, sweep_seeds={"table1": 4})[1]}
    assert full["table1"] == 8 and full["fig7"] == 10
    # without sweep_seeds, the plan is the fixed mode's, run for run
    a = planned(get("fdd-red"), seeds=6, quick=True)[2]
    b = planned(get("fdd-red"), seeds=6, quick=True, sweep_seeds={})[2]
    assert [s.key for s in a] == [s.key for s in b]
    with pytest.raises(ValueError, match="no sweep 'nope'"):
        planned(get("fdd-red"), seeds=6, quick=True, sweep_seeds={"nope": 4})


#: twam-dwred's claims: one on scenario 2's sweep (s12), one on scenario 3's (s3)
#: a claim resting on s12 and one resting on s3, as declared (their words and places)
ON_S12, ON_S3 = twam_claims.REACH.words, twam_claims.FAIL3.words
PLACES = {ON_S12: twam_claims.REACH.place, ON_S3: twam_claims.FAIL3.place}


def _record(claim: str, section: str, reading: str, test: str, values: list[float], n: int) -> dict[str, Any]:
    """A verdict record as an experiment writes it, undecided, from the first ``n`` values."""
    e = estimate(values[:n])
    return {
        "claim": claim,
        "section": section,
        "reading": reading,
        "test": test,
        "effect": e.mean,
        "ci95": [e.ci_low, e.ci_high],
        "seeds": n,
        "verdict": INCONCLUSIVE,
        "reason": "-",
        "part": "",
        "ours": "x",
        "values": list(values[:n]),
    }


def _look(out: Path, recs: list[dict[str, Any]]) -> SimpleNamespace:
    """A stand-in reproduction's result: ``recs`` written to ``out/verdicts.json``."""
    out.mkdir()
    (out / "verdicts.json").write_text(json.dumps({"verdicts": recs}))
    (out / "report.md").write_text("")
    return SimpleNamespace(out=out, report=out / "report.md", sweep=SimpleNamespace(computed=0), deferred=[])


def _fake_reproduce(tmp_path: Path, calls: list[dict[str, int]]) -> Any:
    """A stand-in for ``reproduce``: the s12 claim is decided from four seeds on (every flow far
    under its contract), the s3 claim never (its values straddle the line); each record's values
    are its sweep's seeds' values, so a sweep stopped under it would show in its seeds."""

    def fake(exp: Any, *, seeds: int, sweep_seeds: dict[str, int], **kw: Any) -> SimpleNamespace:
        calls.append(dict(sweep_seeds))
        recs = [
            _record(claim, PLACES[claim], "r", "one-sample t", values, sweep_seeds.get(sweep, seeds))
            for claim, sweep, values in (
                (ON_S12, "s12", [0.90 + 0.001 * math.sin(i) for i in range(20)]),
                (ON_S3, "s3", [0.95 + 0.2 * math.sin(2.0 * i) for i in range(20)]),
            )
        ]
        return _look(tmp_path / f"{len(calls)}", recs)

    return fake


def test_a_decided_claims_sweeps_stop_while_an_undecided_ones_grow(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    calls: list[dict[str, int]] = []
    monkeypatch.setattr(sequential_run, "reproduce", _fake_reproduce(tmp_path / "per", calls))
    (tmp_path / "per").mkdir()
    rep, summary = sequential_run.reproduce_sequential("twam-dwred", max_seeds=10, quick=True, futility=False)
    # after the first look the s12 claim is decided: s12 stops at 4; s3 grows to the cap, and so
    # do s4 and inpolicy, on which no record rests here (a sweep only figures read grows with the
    # experiment, so its figures keep the seeds the all-or-nothing rule gave them)
    assert calls[0] == {} and all(c == {"s12": 4} for c in calls[1:]), calls
    assert summary["looks"] == [4, 6, 8, 10]
    assert summary["sweeps_stopped_at"] == {"inpolicy": 10, "s12": 4, "s3": 10, "s4": 10}
    final = {r["claim"]: r for r in json.loads((rep.out / "verdicts.json").read_text())["verdicts"]}
    assert (
        final[ON_S12]["verdict"] == DOES_NOT and final[ON_S12]["seeds"] == 4 and final[ON_S12]["looks"] == [4]
    )
    assert final[ON_S3]["verdict"] == INCONCLUSIVE and final[ON_S3]["seeds"] == 10
    assert final[ON_S12]["rests_on"] == ["s12"] and final[ON_S3]["rests_on"] == ["s3"]
    assert summary["declaration_errors"] == []
    # the runs: s12 at 4 seeds, the other sweeps at 10, against every sweep at 10
    pts = {s.name: len(s.points) for s in planned(get("twam-dwred"), seeds=4, quick=True)[1]}
    assert summary["runs"] <= 4 * pts["s12"] + 10 * (sum(pts.values()) - pts["s12"])
    assert summary["runs"] < summary["runs_all_or_nothing"] <= 10 * sum(pts.values())
    assert "Claims stop separately" in rep.report.read_text()

    # the all-or-nothing rule (kept to measure the saving): every sweep grows, same verdicts
    calls_all: list[dict[str, int]] = []
    (tmp_path / "all").mkdir()
    monkeypatch.setattr(sequential_run, "reproduce", _fake_reproduce(tmp_path / "all", calls_all))
    rep2, summary2 = sequential_run.reproduce_sequential(
        "twam-dwred", max_seeds=10, quick=True, per_claim=False, futility=False
    )
    assert (
        calls_all == [{}] * 4
        and summary2["runs"] == summary2["runs_all_or_nothing"] == summary["runs_all_or_nothing"]
    )
    final2 = {r["claim"]: r for r in json.loads((rep2.out / "verdicts.json").read_text())["verdicts"]}
    for c in final:
        assert {k: final[c][k] for k in ("verdict", "seeds", "looks", "ci95")} == {
            k: final2[c][k] for k in ("verdict", "seeds", "looks", "ci95")
        }


def test_a_record_that_moves_after_its_sweeps_stopped_is_reported(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The check at every look: the s12 claim's record, stopped with its sweep, reads s3 (which
    it does not declare) and moves as s3 grows: a contradicted declaration."""
    calls: list[dict[str, int]] = []
    inner = _fake_reproduce(tmp_path, calls)

    def leaky(exp: Any, *, seeds: int, sweep_seeds: dict[str, int], **kw: Any) -> SimpleNamespace:
        rep = inner(exp, seeds=seeds, sweep_seeds=sweep_seeds, **kw)
        doc = json.loads((rep.out / "verdicts.json").read_text())
        doc["verdicts"][0]["effect"] += 1e-4 * seeds  # it moves with the growing sweep
        (rep.out / "verdicts.json").write_text(json.dumps(doc))
        return rep

    monkeypatch.setattr(sequential_run, "reproduce", leaky)
    rep, summary = sequential_run.reproduce_sequential("twam-dwred", max_seeds=10, quick=True, futility=False)
    assert (
        summary["declaration_errors"]
        and "moved after its points in ['s12'] stopped" in summary["declaration_errors"][0]
    )
    assert "Declarations contradicted" in rep.report.read_text()


@pytest.fixture(scope="module")
def fdd_moved(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[Any, bool]]:
    """fdd-red quick (Figs. 10-11 on two points each), 3 seeds, each sweep alone at 2."""
    tmp = tmp_path_factory.mktemp("fdd")
    mp = pytest.MonkeyPatch()
    mp.setattr(fdd_red, "BUFFERS_QUICK", (50, 200))
    mp.setattr(fdd_red, "FLOWS_QUICK", (5, 20))
    try:
        return dependence.sweep_dependence(
            "fdd-red",
            seeds=3,
            fewer=2,
            quick=True,
            out=tmp / "out",
            store=tmp / "st",
            progress=False,
            defer_figures=True,  # drawn, never saved: the records are under test
        )
    finally:
        mp.undo()


def test_fdd_red_records_move_only_with_the_sweeps_they_declare(
    fdd_moved: dict[str, dict[Any, bool]],
) -> None:
    """A sweep at fewer seeds leaves every record that does not declare it bit-identical
    (effect, interval, seeds): the declarations are complete. And each declared sweep moves its
    claims' records (the check has power: it is not blind to the sweeps)."""
    assert dependence.undeclared("fdd-red", fdd_moved) == []
    decls = DECLARED["fdd-red"]
    for sweep, recs in fdd_moved.items():
        moved_claims = {k[0] for k, changed in recs.items() if changed}
        for m in decls:
            if sweep in RESTS_ON["fdd-red"][m.match]:
                assert any(m.match in c for c in moved_claims), (sweep, m.match)
    # the time-series sweep carries no claim: it moves no record
    assert not any(fdd_moved["timeseries"].values())


def test_under_declaring_a_sweep_is_caught(
    fdd_moved: dict[str, dict[Any, bool]], monkeypatch: pytest.MonkeyPatch
) -> None:
    f10 = fdd_claims.FIG10.words
    monkeypatch.setitem(RESTS_ON, "fdd-red", {**RESTS_ON["fdd-red"], f10: ("tables",)})
    found = dependence.undeclared("fdd-red", fdd_moved)
    assert found and all("sweep fig10 moves 'According to this figure" in x for x in found), found


def test_a_stopped_sweep_grows_again_when_a_record_met_later_rests_on_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A record that first appears at a later look (an analysis may give a record only once
    enough seeds exist) and rests on a sweep that had stopped takes that sweep back into the
    growing ones: from the next look it is planned at the look's seeds again."""
    calls: list[dict[str, int]] = []
    inner = _fake_reproduce(tmp_path, calls)

    def late(exp: Any, *, seeds: int, sweep_seeds: dict[str, int], **kw: Any) -> SimpleNamespace:
        rep = inner(exp, seeds=seeds, sweep_seeds=sweep_seeds, **kw)
        doc = json.loads((rep.out / "verdicts.json").read_text())
        if seeds >= 6:  # from the second look on, an undecided record on s12 appears
            late = dict(doc["verdicts"][1], claim=ON_S12, section=PLACES[ON_S12], reading="late", effect=1.0)
            doc["verdicts"].append(late)
            doc["verdicts"][-1]["ci95"] = [0.0, 2.0]
        (rep.out / "verdicts.json").write_text(json.dumps(doc))
        return rep

    monkeypatch.setattr(sequential_run, "reproduce", late)
    _, summary = sequential_run.reproduce_sequential("twam-dwred", max_seeds=10, quick=True, futility=False)
    # s12 stopped after the first look (its claim decided), then grew again with the late record
    assert calls[1] == {"s12": 4} and calls[2] == {} and calls[3] == {}, calls
    assert summary["sweeps_stopped_at"]["s12"] == 10


def test_a_point_is_planned_at_its_own_seeds_and_the_rest_of_its_sweep_at_the_sweeps() -> None:
    """``point_seeds`` plans single points at fewer seeds, each by its sweep's rule at that many
    (rio-plus-o's Table I takes twice the experiment's seeds), and leaves every other run, and
    the plan's order, as the fixed mode's."""
    exp = get("rio-plus-o")
    fixed = planned(exp, seeds=10)[2]
    specs = planned(exp, seeds=10, point_seeds={"fig7": {0: 4, 5: 6}, "table1": {1: 4}})[2]
    fig7 = [s for s in specs if s.sweep == "rio-plus-o/fig7"]
    points = [p for p, _ in next(s for s in planned(exp, seeds=10)[1] if s.name == "fig7").points]
    seeds_of = {i: [s.key.seed for s in fig7 if s.params == dict(p)] for i, p in enumerate(points)}
    assert (
        seeds_of[0] == [1, 2, 3, 4] and seeds_of[5] == list(range(1, 7)) and seeds_of[1] == list(range(1, 11))
    )
    t1 = [s for s in specs if s.sweep == "rio-plus-o/table1"]
    t1_points = [p for p, _ in next(s for s in planned(exp, seeds=10)[1] if s.name == "table1").points]
    assert [s.key.seed for s in t1 if s.params == dict(t1_points[1])] == list(range(1, 9))
    assert [s.key.seed for s in t1 if s.params == dict(t1_points[0])] == list(range(1, 21))
    # every run of the reseeded plan is one of the fixed plan's, in the fixed plan's order
    keys = [s.key for s in fixed]
    at = [keys.index(s.key) for s in specs]
    assert at == sorted(at) and len(specs) == len(fixed) - 6 - 4 - 12
    with pytest.raises(ValueError, match="no point 128 to reseed"):
        planned(exp, seeds=10, point_seeds={"fig7": {128: 4}})
    with pytest.raises(ValueError, match="no sweep 'nope'"):
        planned(exp, seeds=10, point_seeds={"nope": {0: 4}})


def test_a_decided_readings_points_stop_while_an_undecided_readings_points_grow(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """rio-plus-o's Fig. 7 records each read one setting, w_q and subscription level
    (rests_on.POINTS): the decided reading's points stop at the first look, the undecided one's
    grow to the cap with the points no record names (their figure grows with its sweep), and the
    decided record keeps its look."""
    from qoslab.reproduction.rests_on import matches
    from qoslab.studies.rio_plus_o.paper import FIG7_CLAIMS

    fig7 = next(s for s in planned(get("rio-plus-o"), seeds=4, quick=True)[1] if s.name == "fig7")
    decided = {"setting": "stated", "w_q": 0.2, "subscription": 40}
    mine = {i for i, (p, _) in enumerate(fig7.points) if matches(p, (decided,))}
    calls: list[dict[str, Any]] = []

    def fake(exp: Any, *, seeds: int, sweep_seeds: dict[str, int], **kw: Any) -> SimpleNamespace:
        pts = kw.get("point_seeds", {}).get("fig7", {})
        calls.append(dict(pts))
        # the decided reading's records see its points' seeds, the other reading the look's
        (stopped_at,) = {pts.get(i, seeds) for i in mine}
        recs = [
            _record(FIG7_CLAIMS[40], "Sec. 4, Fig. 7", reading, "paired t", values, n)
            for reading, values, n in (
                ("stated, w_q 0.2", [9.0 + 0.01 * math.sin(i) for i in range(20)], stopped_at),
                ("bucket4k, w_q 0.2", [8.5 + 3.0 * math.sin(2.0 * i) for i in range(20)], seeds),
            )
        ]
        return _look(tmp_path / f"{len(calls)}", recs)

    monkeypatch.setattr(sequential_run, "reproduce", fake)
    # Fig. 7's break-even is a censored metric: the sign test spends the design's α over the
    # looks it can reach (8, 10 and 12 seeds: α/3 each), so eight equal-signed seeds give p
    # 3 · 2/256 and 0.047 after Holm over the two readings: the decided reading stops at the
    # look of 8 while the other (straddling the paper's magnitude) grows to 12
    rep, summary = sequential_run.reproduce_sequential("rio-plus-o", max_seeds=12, quick=True, futility=False)
    assert calls[:3] == [{}] * 3 and calls[3:] == [dict.fromkeys(mine, 8)] * 2, calls
    assert summary["looks"] == [4, 6, 8, 10, 12] and summary["declaration_errors"] == []
    assert summary["points_at_seeds"] == {"fig7": {"8": len(mine), "12": len(fig7.points) - len(mine)}}
    final = {r["reading"]: r for r in json.loads((rep.out / "verdicts.json").read_text())["verdicts"]}
    assert final["stated, w_q 0.2"]["seeds"] == 8 and final["stated, w_q 0.2"]["verdict"] != INCONCLUSIVE
    assert final["bucket4k, w_q 0.2"]["seeds"] == 12
    assert final["stated, w_q 0.2"]["rests_on_points"] == {"fig7": len(mine)}
    assert summary["runs"] < summary["runs_all_or_nothing"]
