"""tools/verdict_diff.py: record-by-record comparison of two verdict files (what a recompute
moved), its flips, the effects that moved under an unchanged verdict, and one line on bad
input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

TOOL = ROOT / "tools" / "verdict_diff.py"


def _file(path: Path, records: list[tuple[str, str, str]]) -> Path:
    """A verdict file of records (claim, verdict, effect), one reading each."""
    path.write_text(
        json.dumps(
            {
                "verdicts": [
                    {"claim": c, "section": "s", "reading": "r", "verdict": v, "ours": o}
                    for c, v, o in records
                ]
            }
        )
    )
    return path


def _run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(TOOL), *map(str, args)], capture_output=True, text=True)


def test_flips_changes_of_power_and_moved_effects_are_told_apart(tmp_path: Path) -> None:
    old = _file(
        tmp_path / "old.json",
        [("a", "reproduces", "+1.0"), ("b", "inconclusive", "+0.1"), ("c", "reproduces", "+2.0")],
    )
    new = _file(
        tmp_path / "new.json",
        [("a", "does not reproduce", "-1.0"), ("b", "reproduces", "+0.5"), ("c", "reproduces", "+2.1")],
    )
    p = _run(old, new)
    assert p.returncode == 1, p.stderr
    assert "3 / 3 records, 1 same verdict" in p.stdout
    assert "FLIP a" in p.stdout and "FLIP b" not in p.stdout
    assert "1 records flipped" in p.stdout
    assert "(same verdict) c" not in p.stdout
    e = _run("--effects", old, new)
    assert "(same verdict) c | r: +2.0 → +2.1" in e.stdout
    same = _run(old, old)
    assert same.returncode == 0 and "0 records flipped" in same.stdout


def test_bad_input_gets_one_line_and_exit_2(tmp_path: Path) -> None:
    good = _file(tmp_path / "v.json", [("a", "reproduces", "+1")])
    (tmp_path / "bad.json").write_text("{not json")
    for args in (
        [],
        ["--help"],
        [good],
        ["--git", "HEAD"],
        [good, tmp_path / "missing.json"],
        [good, tmp_path / "bad.json"],
    ):
        p = _run(*args)
        assert p.returncode == 2, (args, p.stdout, p.stderr)
        assert len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr, (args, p.stderr)
