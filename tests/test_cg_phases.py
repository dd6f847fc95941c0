"""tools/cg_phases.py: a later phase's counts are the longer run's less the shorter run's,
each phase divided by its own packet-hops."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import cg_phases  # noqa: E402


def _write(path: Path, lines: dict[tuple[str, int], tuple[int, int]]) -> Path:
    """A cachegrind output file with events Ir and D1mr, counts by (file, line)."""
    out = ["desc: I1 cache: 32768 B, 64 B, 8-way associative", "cmd: run", "events: Ir D1mr"]
    for fl in sorted({f for f, _ in lines}):
        out += [f"fl={fl}", "fn=main"]
        out += [f"{ln} {ir} {m}" for (f, ln), (ir, m) in sorted(lines.items()) if f == fl]
    path.write_text("\n".join(out) + "\n")
    return path


def test_the_later_phase_is_the_difference_per_its_own_hops(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 100 hops: 700 instructions and 4 misses a hop in link.rs:10, 100 instructions in a.rs:5
    first = _write(
        tmp_path / "a.out", {("/x/src/net/link.rs", 10): (70_000, 400), ("/x/src/a.rs", 5): (10_000, 0)}
    )
    # 300 hops in all: the 200 later ones miss 9 times a hop at link.rs:10 and once at a.rs:5
    whole = _write(
        tmp_path / "b.out", {("/x/src/net/link.rs", 10): (210_000, 2_200), ("/x/src/a.rs", 5): (30_000, 200)}
    )
    assert cg_phases.main([str(first), "100", str(whole), "300", "--rows", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].split() == ["Ir", "800.00", "800.00"]
    assert out[2].split() == ["D1mr", "4.00", "10.00"]
    by_file = out[out.index("D1mr per hop by file: first, later, change") + 1 :][:2]
    assert by_file[0].split() == ["4.000", "9.000", "+5.000", "net/link.rs"]
    assert by_file[1].split() == ["0.000", "1.000", "+1.000", "a.rs"]
    assert out[-2].split() == ["4.000", "9.000", "+5.000", "net/link.rs:10"]


def test_bad_input_gets_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = _write(tmp_path / "a.out", {("a.rs", 1): (10, 1)})
    (tmp_path / "bin.out").write_bytes(b"\x96\x00\xff")
    (tmp_path / "bad.out").write_text("events: Ir D1mr\nfl=a.rs\n1 x 2\n")
    cases = [
        ([str(tmp_path / "none.out"), "1", str(good), "2"], 1, "none.out: No such file or directory"),
        ([str(tmp_path / "bin.out"), "1", str(good), "2"], 1, "bin.out: not a cachegrind output file"),
        ([str(tmp_path / "bad.out"), "1", str(good), "2"], 1, "bad.out:3: not a line of counts"),
        ([str(good), "5", str(good), "5"], 2, "need 0 < FIRST_HOPS < WHOLE_HOPS"),
        ([str(good), "1", str(good), "2", "--event", "Bx"], 2, "--event Bx: not recorded"),
    ]
    for argv, code, says in cases:
        assert cg_phases.main(argv) == code, argv
        err = capsys.readouterr().err
        assert says in err and err.count("\n") == 1, err
