"""Each claim is declared once, as an object (issue 77, item 1): the registry refuses a claim
declared twice, derives the rules' declarations and the sweeps a claim rests on from the
objects, and every record a reproduction writes is made from exactly one declared object, found
by its exact words, place and part (not by a substring of them)."""

import json
from dataclasses import replace
from pathlib import Path

import pytest

from qoslab.reproduction.rests_on import RESTS_ON
from qoslab.studies.twam_dwred.claims import CLAIMS as TWAM
from qoslab.studies.twam_dwred.claims import REACH, SLOW_START
from qoslab.verdicts.claims import PaperClaim, Part, Registry, declare
from qoslab.verdicts.magnitudes import DECLARED, REGISTRY
from qoslab.verdicts.rules import find

#: the studies whose claims are declared as objects
MIGRATED = tuple(REGISTRY.studies)


def test_a_claim_declared_twice_in_one_study_is_refused() -> None:
    again = replace(REACH, stated="retyped elsewhere")
    with pytest.raises(ValueError, match=r"declared twice \(in twam-dwred and in twam-dwred\)"):
        declare("twam-dwred", *TWAM.claims, again)


def test_a_claim_declared_twice_in_two_studies_is_refused() -> None:
    other = declare("my-study", replace(SLOW_START, rests_on=("mine",)))
    with pytest.raises(ValueError, match=r"at 'Sec\. 5\.2, scenario 1 \(Fig\. 2\)' is declared twice"):
        Registry((TWAM, other))
    with pytest.raises(ValueError, match="study 'twam-dwred' is declared twice"):
        Registry((TWAM, TWAM))


def test_a_part_declared_twice_is_refused_and_the_same_words_elsewhere_are_not() -> None:
    part = REACH.parts[0]
    with pytest.raises(ValueError, match="part '' at .* declared twice"):
        replace(REACH, parts=(part, part))
    # the same words at another place are another claim (a part per flow count or unit)
    elsewhere = replace(REACH, place="Sec. 5.2, scenario 1 (Fig. 3.I)")
    assert len(declare("twam-dwred", *TWAM.claims, elsewhere).claims) == len(TWAM.claims) + 1


def test_the_rules_declarations_and_sweeps_are_derived_from_the_objects() -> None:
    for name in MIGRATED:
        claims = REGISTRY.studies[name].claims
        assert DECLARED[name] == tuple(m for c in claims for m in c.magnitudes())
        assert RESTS_ON[name] == {c.words: c.rests_on for c in claims}
        for c in claims:
            for m, p in zip(c.magnitudes(), c.parts, strict=True):
                assert (m.match, m.section, m.part) == c.key(p)


def test_a_record_with_retyped_words_maps_to_no_declared_object() -> None:
    """The substring rule found a declaration for words retyped with a change; the registry,
    which looks a record up by its exact words and place, does not."""
    rec = {"claim": REACH.words.replace("under TWAM and DWRED", "under TWAM+DWRED"), "section": REACH.place}
    substring = [replace(m, match="all Relative flows achieve") for m in REACH.magnitudes()]
    assert find(substring, rec["claim"], rec["section"])
    with pytest.raises(ValueError, match="no declared claim has the words"):
        REGISTRY.part_of("twam-dwred", rec)
    # the runner checks every record it writes so (a study not declared here passes)
    with pytest.raises(ValueError, match="study twam-dwred: no declared claim has the words"):
        REGISTRY.checked("twam-dwred", [{**rec, "part": ""}])
    assert REGISTRY.checked("my-study", [rec]) == [rec]
    assert REGISTRY.part_of("twam-dwred", {"claim": REACH.words, "section": REACH.place, "part": ""}) == (
        REACH,
        REACH.parts[0],
    )


def test_a_sign_test_is_made_only_at_a_declared_place() -> None:
    assert REACH.at().section == REACH.place and REACH.at().claim == REACH.words
    with pytest.raises(ValueError, match="no part declared at 'Sec. 9'"):
        REACH.at("Sec. 9")
    assert isinstance(REACH.parts[0], Part) and isinstance(REACH, PaperClaim)


#: the committed verdict files: the studies' own and their sender variants
COMMITTED = sorted((Path(__file__).resolve().parents[1] / "docs" / "verdicts").rglob("*.json"))


@pytest.mark.parametrize("path", COMMITTED, ids=[p.stem for p in COMMITTED])
def test_every_committed_record_comes_from_one_declared_object(path: Path) -> None:
    """Every record of the committed files (borrowed copies included) is one declared claim's
    part, found by exact words, place and part; the object is one of the study's by identity,
    and the rules' substring lookup finds that same part's declaration. (What a reproduction
    writes now is checked as it is written: the runner passes every record through
    ``REGISTRY.checked``, so each study's quick test runs this check on fresh records.)"""
    doc = json.loads(path.read_text())
    name = doc["experiment"]
    records = doc["verdicts"]
    assert records
    study = REGISTRY.studies[name]
    for r in records:
        claim, part = REGISTRY.part_of(name, r)
        assert sum(c is claim for c in study.claims) == 1, r["claim"]
        assert sum(p is part for p in claim.parts) == 1, r["claim"]
        assert r["claim"] == claim.words and r["section"] == claim.place_of(part) and r["part"] == part.name
        (m,) = [m for m, p in zip(claim.magnitudes(), claim.parts, strict=True) if p is part]
        if not r.get("borrowed_from"):
            assert find(DECLARED[name], r["claim"], r["section"]) == m
