"""Several `qoslab bench --json` calls side by side: each workload's cost per packet-hop and its
ratio to the 200-flow cost, as the median, least and most over the calls, and how many calls
put the ratio above an aim.

One call's ratio moves with the machine: on the 2-core CI machine (a shared virtual machine)
the 10,000-flow hop waits on memory, and 21 calls in one sitting gave 1.45x to 2.55x; the
ratio paired in time (`--pairs`), which the last six of them measured, 2.06x to 2.16x
(docs/bench/round12-calls.json). This puts a figure and its spread side by side:

    for i in 1 2 3 4 5; do
        .venv/bin/qoslab bench --workload red-200flows-100Mbps-60s \\
            --workload red-10000flows-10Gbps-2s --no-ns2 --no-ns3 --json build/call-$i.json
    done
    python3 tools/bench_calls.py build/call-*.json

A file may hold one call (what `--json` writes) or several (``{"calls": [...]}``, as in
docs/bench/round12-calls.json). Standard library only: it runs without the project's
environment.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path
from typing import Any

import _script

#: The figures of a workload's row summarised over the calls, with their headings.
FIGURES = (
    ("ns_per_hop", "ns/hop"),
    ("hop_cost_ratio", "x 200 flows"),
    ("ns_per_hop_net", "net ns/hop"),
    ("hop_cost_ratio_net", "net x"),
    ("hop_cost_ratio_paired", "paired x"),
    ("hop_cost_ratio_paired_net", "net paired x"),
)

#: The ratios counted against the aim (a call before `--pairs` has no paired ones).
RATIOS = ("hop_cost_ratio", "hop_cost_ratio_net", "hop_cost_ratio_paired", "hop_cost_ratio_paired_net")


def calls_in(path: Path) -> list[dict[str, Any]]:
    """The bench calls a JSON file holds; ValueError naming the file when it holds none."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}:{e.lineno}:{e.colno}: not JSON ({e.msg})") from None
    calls = doc.get("calls") if isinstance(doc, dict) and "calls" in doc else [doc]
    if not isinstance(calls, list) or not calls:
        raise ValueError(f"{path}: 'calls' is not a non-empty list")
    for k, c in enumerate(calls):
        where = f"{path}" if len(calls) == 1 else f"{path}: call {k + 1}"
        if not isinstance(c, dict) or not isinstance(c.get("workloads"), list):
            raise ValueError(f"{where}: not a `qoslab bench --json` file (no 'workloads' list)")
        for j, r in enumerate(c["workloads"]):
            if not isinstance(r, dict) or not isinstance(r.get("workload"), str):
                raise ValueError(f"{where}: workload {j + 1} is not a row with a 'workload' name")
    return calls


def _numbers(rows: list[dict[str, Any]], key: str) -> list[float]:
    """The rows' finite numbers under ``key`` (None, booleans and NaN are not figures)."""
    xs = (r.get(key) for r in rows)
    return [
        float(x) for x in xs if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
    ]


def summarise(calls: list[dict[str, Any]], aim: float) -> list[dict[str, Any]]:
    """Per workload, in the order first seen: the number of calls that measured it, each
    figure's median, least and most over them (and how many calls gave it), and the calls
    whose ratios (:data:`RATIOS`) exceed `aim` (None when no call gave that ratio). A figure a
    call left out (None: not measured) is left out of that figure's summary."""
    rows: dict[str, list[dict[str, Any]]] = {}
    for c in calls:
        for r in c["workloads"]:
            rows.setdefault(r["workload"], []).append(r)
    out = []
    for name, rs in rows.items():
        s: dict[str, Any] = {"workload": name, "calls": len(rs)}
        for key, _ in FIGURES:
            xs = _numbers(rs, key)
            s[key] = (statistics.median(xs), min(xs), max(xs), len(xs)) if xs else None
        for key in RATIOS:
            xs = _numbers(rs, key)
            s[f"{key}_above_aim"] = sum(x > aim for x in xs) if xs else None
        out.append(s)
    return out


def _cell(v: tuple[float, float, float, int] | None, ratio: bool) -> str:
    if v is None:
        return "n/a"
    med, lo, hi, _ = v
    f = "{:.2f}x" if ratio else "{:.1f}"
    return f"{f.format(med)} ({f.format(lo)}-{f.format(hi)})"


def _counts(s: dict[str, Any], key: str) -> str:
    """The calls above the aim, gross (net): n/a where no call gave the ratio."""

    def one(k: str) -> str:
        n = s[f"{k}_above_aim"]
        return "n/a" if n is None else str(n)

    return f"{one(key)} ({one(key + '_net')})"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", type=Path, nargs="+", help="`qoslab bench --json` files")
    p.add_argument("--aim", type=float, default=2.0, help="the ratio counted against (default 2.0)")
    a = p.parse_args(argv)
    if not a.aim > 0:
        print(f"--aim: must be a positive number, got {a.aim}", file=sys.stderr)
        return 2
    calls = _script.read(lambda: [c for f in a.files for c in calls_in(f)])
    if calls is None:
        return 1
    versions = sorted({str(c.get("version")) for c in calls})
    dates = sorted(str(c.get("date")) for c in calls if c.get("date"))
    span = f", {dates[0]} to {dates[-1]}" if dates else ""
    print(f"{len(calls)} calls (version {', '.join(versions)}{span}); median (least-most) over them")
    head = ["workload", "calls", *(h for _, h in FIGURES), f"above {a.aim:g}x (net)", "paired (net)"]
    table = [head]
    for s in summarise(calls, a.aim):
        table.append(
            [
                s["workload"],
                str(s["calls"]),
                *(_cell(s[k], k.startswith("hop_cost")) for k, _ in FIGURES),
                _counts(s, "hop_cost_ratio"),
                _counts(s, "hop_cost_ratio_paired"),
            ]
        )
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    for row in table:
        print(
            "  ".join(
                c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))
            )
        )
    return 0


if __name__ == "__main__":
    _script.run(main)
