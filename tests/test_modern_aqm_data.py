"""docs/experiments/modern-aqm.md's tables quote the reproductions' summaries committed in
docs/experiments/modern-aqm-data/: every run behind them (each reproduction's runs.csv) was
simulated by the checkout's core, and the per-sender metrics are of those runs."""

from __future__ import annotations

import csv

from conftest import ROOT
from qoslab.verdicts.currency import core_fingerprint

DATA = ROOT / "docs" / "experiments" / "modern-aqm-data"


def _rows(name: str) -> list[dict[str, str]]:
    with (DATA / name).open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_the_committed_runs_are_the_checkouts() -> None:
    core = core_fingerprint(ROOT)
    for run in ("ns2", "linux-testbed", "linux-exact"):
        rows = _rows(f"{run}-runs.csv")
        assert len(rows) == 300 and all(r["status"] == "ok" for r in rows), run
        stale = {r["version"] for r in rows} - {f"0.1.0+{core}"}
        assert not stale, (
            f"{run}: runs of another core {stale}: run `qoslab reproduce modern-aqm` again (its "
            "page's three commands) and copy its summaries and runs here, then update the tables"
        )
        keys = {(r["scenario_sha256"], r["seed"]) for r in rows}
        for sender in ("reno", "cubic", "bbr"):
            per = DATA / f"{run}-{sender}-runs.csv"
            if per.exists():
                assert {(r["scenario_sha256"], r["seed"]) for r in _rows(per.name)} <= keys, per.name
