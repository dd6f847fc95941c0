"""The runs a sequential verdict file's reproduction would take with claims stopping separately,
against the all-or-nothing rule (every sweep to the last look), computed from the file: each
record's deciding look (the last of its ``looks``; an undecided record holds its sweeps to the
last look) and the sweeps its claim rests on (``rests_on.RESTS_ON``); a sweep no record rests
on grows to the last look. Nothing is rerun.

    .venv/bin/python tools/sequential_saving.py docs/verdicts/ard.json [...]

Prints per file the seeds each sweep would stop at and the distinct runs under both rules.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main() -> int:
    from qoslab.reproduction.base import get
    from qoslab.reproduction.planning import planned
    from qoslab.reproduction.sequential_run import DECIDED, FIRST, rests_on
    from qoslab.verdicts.magnitudes import DECLARED

    total = [0, 0]
    for arg in sys.argv[1:]:
        doc = json.loads(Path(arg).read_text(encoding="utf-8"))
        seq = doc.get("sequential")
        if not isinstance(seq, dict):
            print(f"{arg}: not a sequential verdict file (no 'sequential' header)", file=sys.stderr)
            return 1
        name, last, quick = doc["experiment"], seq["looks"][-1], bool(doc.get("quick"))
        exp = get(name)
        every = [s.name for s in planned(exp, seeds=FIRST, quick=quick)[1]]
        # a sweep no record rests on grows with the experiment, to the last look
        stop = dict.fromkeys(every, last)
        claimed: set[str] = set()
        for r in doc["verdicts"]:
            deps = rests_on(name, DECLARED[name], r)
            at = r["looks"][-1] if r["verdict"] in DECIDED else last
            for s in every if deps is None else deps:
                stop[s] = max(stop[s], at) if s in claimed else at
                claimed.add(s)
        runs = [
            len({s.key for s in planned(exp, seeds=last, quick=quick, sweep_seeds=sw)[2]})
            for sw in ({s: n for s, n in stop.items() if n < last}, {})
        ]
        total = [total[0] + runs[0], total[1] + runs[1]]
        print(f"{name}: looks {seq['looks'][0]}-{last}; sweeps stop at {stop}")
        fewer = 100 * (1 - runs[0] / runs[1])
        print(f"  runs: {runs[0]} per claim, {runs[1]} all or nothing ({fewer:.0f} % fewer)")
    if len(sys.argv) > 2:
        print(f"total: {total[0]} per claim, {total[1]} all or nothing")
    return 0


if __name__ == "__main__":
    sys.exit(main())
