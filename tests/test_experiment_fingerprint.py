"""A study's fingerprint (``verdicts.currency.experiment_fingerprint``, stamped in every
verdict file) covers every module its results depend on: its own package (``studies/NAME/``),
the modules of other studies it imports and the reproduction machinery it imports. fdd-red
builds on red-baseline's topology and paper values; before this was followed, a change there
left fdd-red's committed verdicts reading as current."""

from __future__ import annotations

from pathlib import Path

import pytest

from qoslab.verdicts import currency


def _rel(name: str) -> set[str]:
    return {p.relative_to(currency.PKG).as_posix() for p in currency.experiment_files(name)}


def test_a_study_covers_its_package_and_the_modules_it_imports() -> None:
    files = _rel("fdd-red")
    pkg = currency.PKG / "studies" / "fdd_red"
    own = {p.relative_to(currency.PKG).as_posix() for p in pkg.glob("*.py")}
    assert own <= files
    assert {"studies/red_baseline/study.py", "studies/red_baseline/paper.py"} <= files
    # the machinery it imports, followed through its imports (the runner's planning and selection)
    assert {"reproduction/base.py", "reproduction/runner.py", "reproduction/planning.py"} <= files
    assert {"reproduction/selection.py", "stats.py"} <= files
    assert "studies/mixed_traffic/study.py" in _rel("modern-aqm")
    # the verdict rules' own module has its own fingerprint; the list of studies is no study's code
    assert "verdicts/magnitudes.py" not in files
    assert "studies/__init__.py" not in files
    # another study's package is not part of it, nor the sequential design it does not import
    assert not any(f.startswith("studies/ard/") for f in files)
    assert "reproduction/sequential_run.py" not in files


def test_a_change_in_an_imported_module_changes_the_fingerprint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pkg = tmp_path / "qoslab"
    for p in currency.experiment_files("fdd-red"):
        dest = pkg / p.relative_to(currency.PKG)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(p.read_bytes())
    monkeypatch.setattr(currency, "PKG", pkg)
    before = currency.experiment_fingerprint("fdd-red")
    for rel in ("studies/red_baseline/paper.py", "reproduction/selection.py"):
        changed = pkg / rel
        changed.write_text(changed.read_text() + "\n# a changed value\n")
        assert currency.experiment_fingerprint("fdd-red") != before
        before = currency.experiment_fingerprint("fdd-red")


def test_a_changed_claim_re_decides_its_own_study_and_no_other(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 77: one study's magnitude change re-decided all five (the rules' fingerprint
    covered every study's claims module). A study's rules fingerprint covers the rules' modules
    and its own declarations only."""
    from qoslab.verdicts.magnitudes import REGISTRY

    rel = {s: [p.relative_to(currency.PKG) for p in currency.rules_files(s)] for s in ("ard", "fdd-red")}
    assert Path("studies/ard/claims.py") in rel["ard"] and Path("studies/fdd_red/claims.py") in rel["fdd-red"]
    assert not set(rel["ard"]) & {Path("studies/fdd_red/claims.py"), Path("studies/fdd_red/paper.py")}
    pkg = tmp_path / "qoslab"
    for p in {*rel["ard"], *rel["fdd-red"]}:
        (pkg / p).parent.mkdir(parents=True, exist_ok=True)
        (pkg / p).write_bytes((currency.PKG / p).read_bytes())
    monkeypatch.setattr(currency, "PKG", pkg)
    for s, name in (("ard", "ard"), ("fdd-red", "fdd_red")):
        monkeypatch.setitem(REGISTRY.file_of, s, pkg / "studies" / name / "claims.py")
    ard, fdd = currency.rules_fingerprint("ard"), currency.rules_fingerprint("fdd-red")
    claims = pkg / "studies" / "ard" / "claims.py"
    claims.write_text(claims.read_text() + "\n# a changed magnitude\n")
    assert currency.rules_fingerprint("ard") != ard
    assert currency.rules_fingerprint("fdd-red") == fdd
    rules = pkg / "verdicts" / "rules.py"
    rules.write_text(rules.read_text() + "\n# a changed rule\n")
    assert currency.rules_fingerprint("fdd-red") != fdd


def test_a_verdict_file_is_sealed_with_its_own_studys_rules(tmp_path: Path) -> None:
    header = {"fingerprint": {"core": "x", "experiment": "y", "rules": currency.rules_fingerprint()}}
    doc = currency.read(currency.write(tmp_path / "v.json", "ard", header, []))
    assert doc["fingerprint"]["rules"] == currency.rules_fingerprint("ard") != currency.rules_fingerprint()
    # a file not decided under the rules stays so
    header["fingerprint"]["rules"] = None
    undecided = currency.read(currency.write(tmp_path / "w.json", "ard", header, []))
    assert undecided["fingerprint"]["rules"] is None
