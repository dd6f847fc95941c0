"""Compares two verdict files record by record (a claim under a reading): which verdicts
differ, and whether any decided verdict flipped to another decided one.

    .venv/bin/python tools/verdict_diff.py OLD.json NEW.json [...pairs]
    .venv/bin/python tools/verdict_diff.py --git REV docs/verdicts/ard.json ...   (OLD from git)
    .venv/bin/python tools/verdict_diff.py --effects --git REV ...   (and every moved effect)

Prints a table per pair: counts of (old → new) verdict pairs, then every record whose verdict
changed with its effect, interval and seeds on both sides (with ``--effects``, also every
record whose verdict stayed and whose effect moved: what a page quoting the effect must check).
A *flip* is a decided verdict (reproduces, weaker than claimed, does not reproduce, not
testable here) that became another decided one; ``inconclusive`` on either side is a change of
power, not a flip. Exit 1 if any record flipped between ``reproduces`` and ``does not
reproduce``; 2, with one line saying why, if the arguments or a file cannot be read.
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


def diff(
    old: dict[Key, dict[str, Any]], new: dict[Key, dict[str, Any]], label: str, effects: bool = False
) -> int:
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
            if effects and a["ours"] != b["ours"]:
                print(f"  (same verdict) {k[0][:70]} | {k[3][:60]}: {a['ours']} → {b['ours']}")
            continue
        flip = frozenset({a["verdict"], b["verdict"]}) in OPPOSED
        opposed += flip
        print(
            f"  {'FLIP ' if flip else ''}{k[0][:70]} | {k[3][:60]}: {a['verdict']} ({a['ours']}) → "
            f"{b['verdict']} ({b['ours']}, seeds {b.get('seeds')})"
        )
    return opposed


USAGE = "usage: verdict_diff.py [--effects] OLD.json NEW.json [OLD NEW ...] | [--effects] --git REV FILE ..."


def _read(p: str, rev: str | None = None) -> dict[Key, dict[str, Any]]:
    """The records of verdict file ``p`` (as committed at ``rev``, if given); a file that cannot
    be read or is no verdict file raises ValueError with one line saying which and why."""
    try:
        if rev:
            g = subprocess.run(["git", "show", f"{rev}:{p}"], capture_output=True, text=True)
            if g.returncode != 0:
                raise ValueError(f"{p}: not in git at {rev} ({(g.stderr.strip().splitlines() or [''])[-1]})")
            text = g.stdout
        else:
            text = Path(p).read_text()
        return load(text)
    except OSError as e:
        raise ValueError(f"{p}: {e.strerror}") from None
    except (json.JSONDecodeError, KeyError, TypeError) as e:
        raise ValueError(f"{p}: not a verdict file ({type(e).__name__}: {e})") from None


def main(argv: list[str]) -> int:
    rev = None
    effects = argv[:1] == ["--effects"]
    argv = argv[1:] if effects else argv
    if argv[:1] == ["--git"]:
        if len(argv) < 3:
            print(USAGE, file=sys.stderr)
            return 2
        rev, argv = argv[1], argv[2:]
    elif not argv or len(argv) % 2 or argv[0].startswith("-"):
        print(USAGE, file=sys.stderr)
        return 2
    flips = 0
    try:
        if rev:
            for p in argv:
                flips += diff(_read(p, rev), _read(p), f"{p} ({rev} → working tree)", effects)
        else:
            for a, b in zip(argv[::2], argv[1::2], strict=True):
                flips += diff(_read(a), _read(b), f"{a} → {b}", effects)
    except ValueError as e:
        print(f"verdict_diff.py: {e}", file=sys.stderr)
        return 2
    print(f"{flips} records flipped between reproduces and does not reproduce")
    return 1 if flips else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
