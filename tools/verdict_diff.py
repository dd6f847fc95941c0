"""Compares two verdict files record by record (a claim under a reading): which verdicts
differ, and whether any decided verdict flipped to another decided one.

    .venv/bin/python tools/verdict_diff.py OLD.json NEW.json [...pairs]
    .venv/bin/python tools/verdict_diff.py --git REV docs/verdicts/ard.json ...   (OLD from git)

Prints a table per pair: counts of (old → new) verdict pairs, then every record whose verdict
changed with its effect, interval and seeds on both sides. A *flip* is a decided verdict
(reproduces, weaker than claimed, does not reproduce, not testable here) that became another
decided one; ``inconclusive`` on either side is a change of power, not a flip. Exit 1 if any
record flipped between ``reproduces`` and ``does not reproduce``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

Key = tuple[str, str, str, str, str]
OPPOSED = {frozenset({"reproduces", "does not reproduce"})}


def key(r: dict[str, Any]) -> Key:
    return (r["claim"], r["section"], r.get("part", ""), r["reading"], r.get("borrowed_from", ""))


def load(text: str) -> dict[Key, dict[str, Any]]:
    return {key(r): r for r in json.loads(text)["verdicts"]}


def diff(old: dict[Key, dict[str, Any]], new: dict[Key, dict[str, Any]], label: str) -> int:
    pairs = Counter((old[k]["verdict"], new[k]["verdict"]) for k in old.keys() & new.keys())
    same = sum(n for (a, b), n in pairs.items() if a == b)
    print(f"## {label}: {len(old)} / {len(new)} records, {same} same verdict")
    for (a, b), n in sorted(pairs.items(), key=lambda kv: -kv[1]):
        if a != b:
            print(f"- {a} → {b}: {n}")
    only = old.keys() ^ new.keys()
    if only:
        print(f"- records in one file only: {len(only)}")
    opposed = 0
    for k in sorted(old.keys() & new.keys()):
        a, b = old[k], new[k]
        if a["verdict"] == b["verdict"]:
            continue
        flip = frozenset({a["verdict"], b["verdict"]}) in OPPOSED
        opposed += flip
        print(
            f"  {'FLIP ' if flip else ''}{k[0][:70]} | {k[3][:60]}: {a['verdict']} ({a['ours']}) → "
            f"{b['verdict']} ({b['ours']}, seeds {b.get('seeds')})"
        )
    return opposed


def main(argv: list[str]) -> int:
    rev = None
    if argv[:1] == ["--git"]:
        rev, argv = argv[1], argv[2:]
    flips = 0
    if rev:
        for p in argv:
            old = subprocess.run(
                ["git", "show", f"{rev}:{p}"], capture_output=True, text=True, check=True
            ).stdout
            flips += diff(load(old), load(Path(p).read_text()), f"{p} ({rev} → working tree)")
    else:
        for a, b in zip(argv[::2], argv[1::2], strict=True):
            flips += diff(load(Path(a).read_text()), load(Path(b).read_text()), f"{a} → {b}")
    print(f"{flips} records flipped between reproduces and does not reproduce")
    return 1 if flips else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
