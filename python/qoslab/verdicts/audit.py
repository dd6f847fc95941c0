"""Re-deriving a committed verdict file: every record's verdict from its numbers and its claim's
declaration, so that a file edited by hand (a verdict flipped, an interval moved, a record
deleted or duplicated, ``quick`` changed) fails ``python -m qoslab.verdicts check``.

For each record of a file, :func:`audit` checks:

1. **The claim.** Its declaration exists (:func:`qoslab.verdicts.rules.find`, or the part it is
   borrowed into) and no other record has the same claim, part and reading.
2. **The numbers.** Where the record keeps its per-seed values (``values``, runs from this
   version on): as many as its seeds, their mean its effect, and the interval its verdict rests
   on (``ci95``) recomputed from them by the claim's metric kind at the file's level (0.05, or
   0.05/K for a sequential file of K looks; a sign-test interval's share is 0.05 over the looks
   the exact test can reach, :func:`qoslab.verdicts.intervals.sign_test_looks`).
3. **The verdict.** :func:`qoslab.verdicts.core.decide` on that interval, the claim's
   magnitude and its precondition (``precondition_met``); a decided verdict whose Holm-adjusted
   p (``p_holm``) is at least 0.05 is inconclusive; ``p_holm`` is never below ``p_direction``.
4. **The file.** Its header's ``quick`` agrees with every record's and with its command; in a
   full run every declared claim (but parts first written by later runs) has a record; and the
   records hash to
   the ``fingerprint.records`` the file was written with (:func:`records_digest`).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

from qoslab.verdicts.core import DOES_NOT, INCONCLUSIVE, REPRODUCES, WEAKER, Magnitude, decide
from qoslab.verdicts.intervals import fitted, sign_test_looks, t_interval_of
from qoslab.verdicts.rules import ALPHA, find, testable

#: the relative tolerance between a stored number and the one recomputed from the values
TOLERANCE = 1e-9


def records_digest(records: Sequence[dict[str, Any]]) -> str:
    """The SHA-256 of the records as canonical JSON (keys sorted, no spaces)."""
    text = json.dumps(list(records), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def level_alpha(doc: dict[str, Any]) -> float:
    """The α of a file's intervals: 0.05, or 0.05/K for a sequential file of K looks."""
    looks = _looks(doc)
    return ALPHA / len(looks) if looks else ALPHA


def _looks(doc: dict[str, Any]) -> list[int]:
    seq = doc.get("sequential")
    looks = seq.get("looks") if isinstance(seq, dict) else None
    return [int(n) for n in looks or ()]


def _close(x: float, y: float) -> bool:
    if math.isinf(x) or math.isinf(y):
        return x == y
    return abs(x - y) <= TOLERANCE * max(1.0, abs(x), abs(y))


def _decl(decls: Sequence[Magnitude], r: dict[str, Any]) -> Magnitude:
    b = r.get("borrowed_from") or ""
    if not b:
        return find(decls, r["claim"], r["section"])
    fits = [d for d in decls if d.borrow and d.borrow in b and d.section in r["section"]]
    if len(fits) != 1:
        raise ValueError(f"no declaration of a part borrowed from {b!r}")
    return fits[0]


def _numbers(r: dict[str, Any], m: Magnitude, alpha: float, looks: Sequence[int] = ()) -> list[str]:
    """Problems with a record's values, effect and interval (none without values)."""
    values = r.get("values") or []
    if not values:
        return []
    xs = [float(x) for x in values]
    out = []
    if len(xs) != int(r["seeds"]):
        out.append(f"{len(xs)} values for {r['seeds']} seeds")
    mean = sum(xs) / len(xs)
    if r.get("effect") is not None and not _close(mean, float(r["effect"])):
        out.append(f"effect {r['effect']} is not the mean of its values ({mean})")
    t_ci = t_interval_of(xs, alpha)
    fit = fitted(m.kind, m.grid, xs, t_ci, alpha, len(xs))
    if fit.distribution_free and alpha < ALPHA and len(looks) > 1:
        share = ALPHA / sign_test_looks(looks, ALPHA)
        fit = fitted(m.kind, m.grid, xs, t_interval_of(xs, share), share, len(xs))
    want = [fit.low, fit.high]
    lo, hi = r["ci95"]
    got = [-math.inf if lo is None else float(lo), math.inf if hi is None else float(hi)]
    if not all(_close(a, b) for a, b in zip(want, got, strict=True)):
        out.append(f"interval {r['ci95']} is not the one its values give ({want[0]:.6g}, {want[1]:.6g})")
    return out


def _verdict(r: dict[str, Any], m: Magnitude) -> str:
    """The verdict the record's interval, declaration and Holm-adjusted p give."""
    lo, hi = (math.nan if x is None else float(x) for x in r["ci95"])
    ok, _ = testable(r, m)
    v = decide((lo, hi), m.direction, m.threshold, m.margin, m.bounds, ok)
    ph = r.get("p_holm")
    if v in (REPRODUCES, WEAKER, DOES_NOT) and isinstance(ph, int | float) and ph >= ALPHA:
        return INCONCLUSIVE
    return v


def audit(doc: dict[str, Any], decls: Sequence[Magnitude]) -> list[str]:
    """Every problem found re-deriving the file ``doc`` (see the module's text)."""
    out: list[str] = []
    alpha = level_alpha(doc)
    keys = Counter(
        (r["claim"], r["section"], r.get("part", ""), r["reading"], r.get("borrowed_from", ""))
        for r in doc["verdicts"]
    )
    for k, n in keys.items():
        if n > 1:
            out.append(f"{n} records of one claim and reading: {k[0][:60]!r} | {k[3]!r}")
    quick = bool(doc.get("quick"))
    if quick != ("--quick" in str(doc.get("command", ""))):
        out.append(f"`quick: {str(quick).lower()}` disagrees with the command {doc.get('command')!r}")
    for i, r in enumerate(doc["verdicts"]):
        where = f"verdicts[{i}] ({r['reading']})"
        try:
            m = _decl(decls, r)
        except ValueError as e:
            out.append(f"{where}: {e}")
            continue
        if bool(r.get("quick")) != quick:
            out.append(f"{where}: quick {r.get('quick')} in a file of quick {quick}")
        out += [f"{where}: {p}" for p in _numbers(r, m, alpha, _looks(doc))]
        want = _verdict(r, m)
        if r.get("verdict") != want:
            out.append(f"{where}: verdict {r.get('verdict')!r}, its numbers and declaration give {want!r}")
        pd_, ph = r.get("p_direction"), r.get("p_holm")
        if isinstance(pd_, int | float) and isinstance(ph, int | float) and ph < pd_ - TOLERANCE:
            out.append(f"{where}: Holm-adjusted p {ph} below its p {pd_}")
    seen = {(r["claim"], r.get("part", "")) for r in doc["verdicts"]}
    for m in decls:
        # a quick run leaves out what its shortened grids cannot measure
        if quick or m.from_next_run or m.borrow:
            continue
        if not any(m.match in c and p == m.part for c, p in seen):
            out.append(f"no record of the declared claim {m.match!r}" + (f" [{m.part}]" if m.part else ""))
    fp = doc.get("fingerprint")
    sealed = fp.get("records") if isinstance(fp, dict) else None
    if sealed is None:
        out.append("no `fingerprint.records` (run `python -m qoslab.verdicts redecide` to seal it)")
    elif sealed != records_digest(doc["verdicts"]):
        out.append("the records do not hash to `fingerprint.records`: edited after they were written")
    return out
