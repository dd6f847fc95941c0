"""The list of studies (``qoslab.studies.STUDIES``) is the only one: the packages under
python/qoslab/studies/, the experiments the registry imports, the claims the verdicts judge,
the Makefile's ``VERDICT_STUDIES``/``OWN_STUDIES``, the experiment pages and mkdocs.yml's nav
all agree with it, so a study added or removed there and nowhere else fails here."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from qoslab import reproduction, studies
from qoslab.reproduction import base
from qoslab.verdicts.magnitudes import REGISTRY

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import regenerate  # noqa: E402


def make_list(var: str, makefile: str) -> list[str]:
    """The words of ``VAR := ...`` in ``makefile``'s text (one line)."""
    m = re.search(rf"^{var} :=(.*)$", makefile, re.M)
    if m is None:
        raise AssertionError(f"Makefile: no `{var} :=` line")
    return m.group(1).split()


def test_each_study_is_a_package_that_registers_its_experiment() -> None:
    pkgs = {p.parent.name for p in studies.HERE.glob("*/__init__.py")}
    assert pkgs == {s.replace("-", "_") for s in studies.STUDIES}
    assert base.BUILTIN == tuple(f"qoslab.studies.{s.replace('-', '_')}.study" for s in studies.STUDIES)
    assert set(studies.STUDIES) <= {e.name for e in reproduction.available()}


def test_the_verdicts_judge_the_claims_of_the_studies_that_declare_them() -> None:
    assert tuple(REGISTRY.studies) == studies.with_claims()
    assert set(studies.with_claims()) | set(studies.own()) == set(studies.STUDIES)
    claimed = {"ard", "buffer-sizing", "fdd-red", "probe-marker", "rio-plus-o", "twam-dwred"}
    assert claimed == set(studies.with_claims())


def test_the_makefiles_lists_are_the_registrys() -> None:
    text = (ROOT / "Makefile").read_text()
    assert make_list("VERDICT_STUDIES", text) == list(studies.with_claims())
    assert make_list("OWN_STUDIES", text) == list(studies.own())
    # the check reads what make reads: a study dropped from the line is seen
    dropped = text.replace("VERDICT_STUDIES := ard ", "VERDICT_STUDIES := ")
    assert make_list("VERDICT_STUDIES", dropped) != list(studies.with_claims())


def test_the_nav_and_the_pages_are_the_registrys(monkeypatch: pytest.MonkeyPatch) -> None:
    text = (ROOT / "mkdocs.yml").read_text()
    block = text.split(regenerate.STUDIES_BEGIN)[1].split(regenerate.STUDIES_END)[0]
    assert re.findall(r"- ([\w-]+): experiments/\1\.md", block) == list(studies.STUDIES)
    pages = {p.stem for p in (ROOT / "docs" / "experiments").glob("*.md")} - {"todays-tcp"}
    assert pages == set(studies.STUDIES)
    # a study added to the registry gets its nav entry without a hand edit
    monkeypatch.setattr(studies, "STUDIES", (*studies.STUDIES, "my-paper"))
    assert "      - my-paper: experiments/my-paper.md\n      # studies:end" in regenerate.nav(text)


def test_the_sequential_design_finds_each_studys_narrowing_through_the_list() -> None:
    """What a study's records read within their claims' sweeps lives in the study's own
    ``rests_on`` module; the machinery collects it by the list, for the studies that have one."""
    from qoslab.reproduction import rests_on

    assert studies.having("rests_on") == ("probe-marker", "rio-plus-o")
    assert set(rests_on.POINTS) == set(studies.having("rests_on"))
    assert set(rests_on.READING_SWEEPS) == {"probe-marker"}
    assert studies.having("claims") == studies.with_claims()
