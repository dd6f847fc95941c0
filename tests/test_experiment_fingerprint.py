"""An experiment's fingerprint (``verdicts.currency.experiment_fingerprint``, stamped in every
verdict file) covers every module its results depend on: its own ``NAME*.py`` files and the
modules of other experiments they import. fdd-red builds on red-baseline's topology and paper
values; before this was followed, a change there left fdd-red's committed verdicts reading as
current."""

from __future__ import annotations

from pathlib import Path

import pytest

from qoslab.verdicts import currency


def test_an_experiment_covers_the_experiment_modules_it_imports() -> None:
    names = {p.name for p in currency.experiment_files("fdd-red")}
    assert {"fdd_red.py", "fdd_red_paper.py", "red_baseline.py", "red_baseline_paper.py"} <= names
    assert "mixed_traffic.py" in {p.name for p in currency.experiment_files("modern-aqm")}
    # the verdict rules' own module has its own fingerprint
    assert "magnitudes.py" not in names


def test_a_change_in_an_imported_experiment_module_changes_the_fingerprint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pkg = tmp_path / "qoslab"
    (pkg / "experiments").mkdir(parents=True)
    for p in currency.experiment_files("fdd-red"):
        dest = pkg / p.relative_to(currency.PKG)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(p.read_bytes())
    monkeypatch.setattr(currency, "PKG", pkg)
    before = currency.experiment_fingerprint("fdd-red")
    paper = pkg / "experiments" / "red_baseline_paper.py"
    paper.write_text(paper.read_text() + "\n# a changed value\n")
    assert currency.experiment_fingerprint("fdd-red") != before
