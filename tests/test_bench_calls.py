"""tools/bench_calls.py: several `qoslab bench --json` calls summarised per workload (median,
least, most, and the calls above an aim)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import bench_calls  # noqa: E402


def _call(date: str, base_ns: float, big_ns: float, net: float | None) -> dict[str, Any]:
    """One call as `qoslab bench --json` writes it (only the keys the tool reads)."""
    return {
        "version": "0.1.0+abc",
        "date": date,
        "workloads": [
            {
                "workload": "red-200flows",
                "ns_per_hop": base_ns,
                "hop_cost_ratio": 1.0,
                "ns_per_hop_net": base_ns,
                "hop_cost_ratio_net": 1.0,
            },
            {
                "workload": "red-10000flows",
                "ns_per_hop": big_ns,
                "hop_cost_ratio": big_ns / base_ns,
                "ns_per_hop_net": None if net is None else net * base_ns,
                "hop_cost_ratio_net": net,
            },
        ],
    }


def test_the_median_and_spread_over_the_calls_and_the_calls_above_the_aim(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Ratios 1.8, 2.1 and 2.4 (the median 2.1, two above 2); net 1.7, 1.9 and one not measured.
    files = []
    for k, (big, net) in enumerate([(180.0, 1.7), (210.0, 1.9), (240.0, None)]):
        f = tmp_path / f"call-{k}.json"
        f.write_text(json.dumps(_call(f"2026-11-2{k}T00:00:00Z", 100.0, big, net)))
        files.append(f)
    s = {
        r["workload"]: r
        for r in bench_calls.summarise(sum((bench_calls.calls_in(f) for f in files), []), 2.0)
    }
    big = s["red-10000flows"]
    assert big["calls"] == 3
    assert big["hop_cost_ratio"] == pytest.approx((2.1, 1.8, 2.4, 3))
    assert big["ns_per_hop"] == pytest.approx((210.0, 180.0, 240.0, 3))
    # The call that did not measure the net figure is left out of it, not counted as zero.
    assert big["hop_cost_ratio_net"] == pytest.approx((1.8, 1.7, 1.9, 2))
    assert (big["hop_cost_ratio_above_aim"], big["hop_cost_ratio_net_above_aim"]) == (2, 0)
    assert s["red-200flows"]["hop_cost_ratio_above_aim"] == 0

    assert bench_calls.main([*map(str, files), "--aim", "2.2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("3 calls (version 0.1.0+abc, 2026-11-20T00:00:00Z to 2026-11-22T00:00:00Z)")
    row = next(line for line in out if line.startswith("red-10000flows"))
    assert "2.10x (1.80x-2.40x)" in row and "1.80x (1.70x-1.90x)" in row
    assert row.split()[-4:] == ["1", "(0)", "n/a", "(n/a)"]  # no paired figures in these calls


def test_a_file_of_several_calls_counts_each(tmp_path: Path) -> None:
    f = tmp_path / "calls.json"
    f.write_text(json.dumps({"calls": [_call("d1", 100.0, 150.0, 1.4), _call("d2", 100.0, 250.0, 2.4)]}))
    (big,) = [
        r for r in bench_calls.summarise(bench_calls.calls_in(f), 2.0) if r["workload"] == "red-10000flows"
    ]
    assert big["calls"] == 2 and big["hop_cost_ratio_above_aim"] == 1


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"{not json", "call.json:1:2: not JSON"),
        (b"\xff\xfe", "call.json: not UTF-8 text"),
        (b'{"rows": []}', "call.json: not a `qoslab bench --json` file (no 'workloads' list)"),
        (b'{"calls": []}', "call.json: 'calls' is not a non-empty list"),
        (b'{"calls": [{"workloads": []}, 3]}', "call.json: call 2: not a `qoslab bench --json` file"),
        (b'{"workloads": [3]}', "call.json: workload 1 is not a row with a 'workload' name"),
    ],
)
def test_bad_files_get_one_line_naming_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, message: str
) -> None:
    f = tmp_path / "call.json"
    f.write_bytes(content)
    assert bench_calls.main([str(f)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


def test_a_missing_file_and_a_bad_aim(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert bench_calls.main([str(tmp_path / "none.json")]) == 1
    assert "none.json: No such file or directory" in capsys.readouterr().err
    f = tmp_path / "call.json"
    f.write_text(json.dumps(_call("d", 100.0, 200.0, 2.0)))
    assert bench_calls.main([str(f), "--aim", "0"]) == 2
    assert "--aim: must be a positive number, got 0.0" in capsys.readouterr().err


def test_booleans_and_nan_are_not_figures(tmp_path: Path) -> None:
    call = _call("d", 100.0, 200.0, 2.0)
    call["workloads"][1]["hop_cost_ratio_net"] = True
    call["workloads"][1]["ns_per_hop_net"] = float("nan")
    f = tmp_path / "call.json"
    f.write_text(json.dumps(call))  # NaN: Python's json writes and reads it
    (big,) = [
        r for r in bench_calls.summarise(bench_calls.calls_in(f), 2.0) if r["workload"] == "red-10000flows"
    ]
    assert big["hop_cost_ratio_net"] is None and big["ns_per_hop_net"] is None
    assert big["hop_cost_ratio_net_above_aim"] is None and big["hop_cost_ratio"] == pytest.approx(
        (2.0, 2.0, 2.0, 1)
    )
