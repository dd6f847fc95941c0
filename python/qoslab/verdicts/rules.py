"""Re-deciding verdict records against the paper's magnitudes, with Holm's correction.

:func:`finalise` is the one path by which every record gets its verdict: the runner applies it
to a run's records before writing ``verdicts.json``, and ``python -m qoslab.verdicts redecide``
applies it to committed files (from their stored effect, interval and seeds; no rerun). It:

1. finds the claim's declared :class:`~qoslab.verdicts.core.Magnitude` (by its words);
2. computes ``p_direction``, the two-sided p of the test against the claim's direction boundary
   (threshold ± margin), from the stored interval: a t interval ``effect ± t(0.975, n−1)·se``
   gives ``se``, then ``t = (effect − boundary) / se`` and ``p = 2·(1 − T_{n−1}(|t|))``; a zero
   width interval gives p = 0 (1 when the effect sits on the boundary); an undefined interval
   (fewer than two seeds) gives none;
3. detects a quantity that cannot move (``not testable here``): when the run measured how far
   the quantity moved under the reading's mechanism-disabled or perturbed arms (``moves``), the
   test can fail only if that movement exceeds both the claim's resolution and the interval's
   half-width; without that measurement (records of older runs), a paired difference whose
   interval has zero width and whose effect is within the declared resolution of zero shows the
   two arms identical in every seed, which is the same finding read from the record itself;
4. decides with :func:`~qoslab.verdicts.core.decide`;
5. corrects for many readings: within one claim part of one file (the family), Holm's step-down
   procedure over the testable readings' ``p_direction`` at α = 0.05; a reading whose decided
   verdict rests on the direction (reproduces, weaker than claimed, does not reproduce) but whose
   Holm-adjusted p is ≥ 0.05 becomes ``inconclusive``. The magnitude comparison itself uses each
   reading's 95 % interval.

Compound claims are split by declaring a part per component; a part tested on another claim's
records (``borrow``) gets copies of those records under the compound claim's words.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from qoslab.stats import t_cdf, t_ppf
from qoslab.verdicts.core import (
    DOES_NOT,
    INCONCLUSIVE,
    NOT_TESTABLE,
    REPRODUCES,
    WEAKER,
    Magnitude,
    bar_of,
    decide,
)

ALPHA = 0.05

PROCEDURE = (
    "Each claim is a quantity: a reading **reproduces** when its 95 % interval lies inside the "
    "paper's declared range (or beyond the declared smallest effect), is **weaker than claimed** "
    "when the direction holds but the interval excludes the paper's magnitude, **does not "
    "reproduce** when the interval excludes the claimed direction (or lies inside the margin), is "
    "**inconclusive** when it straddles a boundary, and is **not testable here** when the quantity "
    "did not move (the compared arms gave identical values in every seed, or the run's "
    "mechanism-disabled arms moved it by no more than the interval). Many readings: within each "
    "claim (each part of a compound claim), Holm's step-down procedure over the readings' "
    "p-values of the direction test (α = 0.05); a reading not significant after it is "
    "inconclusive. p-values are recomputed from the stored effect, 95 % t interval and seeds "
    "against the claim's direction boundary (`p_direction`, `p_holm` in the JSON); a record of "
    "fewer than two seeds has no interval and no p, is inconclusive and stays out of the family."
)


def movement(per_arm: Sequence[Sequence[float]]) -> float:
    """How far a quantity moves over one reading's seeds and arms (each arm's per-seed values;
    the arms include the mechanism-disabled ones): the largest spread over seeds within an arm
    and the largest difference between two arms' means. Zero (or no more than the claim's
    interval) means the quantity is pinned in this setup, e.g. a saturated link's utilisation,
    and a test on it cannot fail (``moves`` of a record)."""
    arms = [[float(x) for x in a if math.isfinite(float(x))] for a in per_arm]
    arms = [a for a in arms if a]
    if not arms:
        return math.nan
    means = [sum(a) / len(a) for a in arms]
    return max([max(a) - min(a) for a in arms] + [max(means) - min(means)])


def holm(ps: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given: the k-th smallest p (k from 0)
    times ``m − k``, made non-decreasing and capped at 1."""
    m = len(ps)
    order = sorted(range(m), key=lambda i: ps[i])
    out = [1.0] * m
    running = 0.0
    for k, i in enumerate(order):
        running = max(running, min(1.0, (m - k) * ps[i]))
        out[i] = running
    return out


def p_from_interval(effect: float, ci95: Sequence[float | None], seeds: int, boundary: float) -> float | None:
    """The two-sided p of a t test of the mean against ``boundary``, from a stored 95 % t
    interval and the number of seeds (pairs); None when the interval is undefined."""
    lo, hi = ci95
    if lo is None or hi is None or seeds < 2 or not (math.isfinite(lo) and math.isfinite(hi)):
        return None
    half = (hi - lo) / 2.0
    if half <= 0:
        return 1.0 if effect == boundary else 0.0
    se = half / t_ppf(0.975, seeds - 1)
    t = (effect - boundary) / se
    return 2.0 * (1.0 - t_cdf(abs(t), seeds - 1))


def find(decls: Sequence[Magnitude], claim: str, section: str) -> Magnitude:
    """The declaration of a record's claim (its words contain ``match``, its section
    ``section``); one and only one must fit."""
    fits = [d for d in decls if not d.borrow and d.match in claim and d.section in section]
    if len(fits) != 1:
        what = "no" if not fits else f"{len(fits)}"
        raise ValueError(f"{what} magnitude declaration fits the claim {claim!r} ({section})")
    return fits[0]


def _testable(rec: dict[str, Any], m: Magnitude) -> tuple[bool, str]:
    lo, hi = rec["ci95"]
    effect = rec["effect"]
    moves = rec.get("moves")
    if moves is not None and lo is not None and hi is not None:
        half = (hi - lo) / 2.0
        if moves <= max(m.resolution, half):
            return False, (
                f"the quantity moved by {moves:.3g} under the reading's mechanism-disabled arms, "
                f"not more than its interval's half-width {half:.3g} (resolution {m.resolution:g}): "
                "the test cannot fail"
            )
        return True, ""
    if (
        rec["test"] == "paired t"
        and lo is not None
        and lo == hi
        and effect is not None
        and abs(effect) <= m.resolution
    ):
        return False, (
            "the paired difference is the same in every seed and within the resolution "
            f"{m.resolution:g} of zero: the compared arms gave identical values, so the quantity "
            "did not move and the reading cannot test the claim"
        )
    return True, ""


def _reason(v: str, m: Magnitude, ci: Sequence[float | None]) -> str:
    bar = bar_of(m.direction, m.threshold, m.margin)
    side = ">" if m.direction == "greater" else "<"
    rng = f"[{m.low:g}, {m.high:g}]"
    if v == REPRODUCES:
        return f"the 95 % CI lies inside the paper's magnitude {rng}"
    if v == WEAKER:
        lo, hi = ci
        far = (
            (lo is not None and lo > m.high) if m.direction == "greater" else (hi is not None and hi < m.low)
        )
        where = "past the far end of" if far else "short of"
        return (
            f"the direction holds ({side} {bar:g}) but the 95 % CI lies {where} the paper's magnitude {rng}"
        )
    if v == DOES_NOT:
        return f"the 95 % CI lies entirely on the other side of {bar:g} (the claim needs {side} {bar:g})"
    return f"the 95 % CI straddles a boundary ({bar:g} for the direction, {rng} for the magnitude)"


def finalise(
    decls: Sequence[Magnitude], records: Sequence[dict[str, Any]], decided_from: str
) -> list[dict[str, Any]]:
    """The records re-decided (see the module's text); borrowed copies are regenerated, so
    finalising twice gives the same records. ``decided_from``: "run" or "stored interval"."""
    base = [dict(r) for r in records if not r.get("borrowed_from")]
    out: list[dict[str, Any]] = []
    for r in base:
        r.setdefault("sign_verdict", r["verdict"])
        if not r.get("sign_verdict"):
            r["sign_verdict"] = r["verdict"]
        m = find(decls, r["claim"], r["section"])
        out.append(_decide_one(r, m, decided_from))
        for b in decls:
            if b.borrow and b.borrow in r["claim"] and b.section in r["section"]:
                c = dict(r, claim=_claim_of(decls, b, records), borrowed_from=r["claim"])
                c["section"] = r["section"]
                out.append(_decide_one(c, b, decided_from))
    _holm_families(out)
    return out


def _claim_of(decls: Sequence[Magnitude], b: Magnitude, records: Sequence[dict[str, Any]]) -> str:
    for r in records:
        if b.match in r["claim"] and not r.get("borrowed_from"):
            return str(r["claim"])
    raise ValueError(f"the compound claim {b.match!r} has no records of its own")


def _decide_one(r: dict[str, Any], m: Magnitude, decided_from: str) -> dict[str, Any]:
    bar = bar_of(m.direction, m.threshold, m.margin)
    r["p_direction"] = p_from_interval(r["effect"], r["ci95"], int(r["seeds"]), bar)
    ok, why = _testable(r, m)
    ci = tuple(math.nan if x is None else float(x) for x in r["ci95"])
    v = decide((ci[0], ci[1]), m.direction, m.threshold, m.margin, m.bounds, ok)
    r["verdict"] = v
    r["reason"] = why if v == NOT_TESTABLE else _reason(v, m, r["ci95"])
    r["part"] = m.part
    r["magnitude"] = m.describe()
    r["decided_from"] = decided_from
    r["p_holm"] = None
    return r


def _holm_families(out: list[dict[str, Any]]) -> None:
    fams: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for r in out:
        if r["verdict"] != NOT_TESTABLE and r["p_direction"] is not None:
            fams.setdefault((r["claim"], r["section"], r["part"]), []).append(r)
    for fam in fams.values():
        adj = holm([float(r["p_direction"]) for r in fam])
        for r, pa in zip(fam, adj, strict=True):
            r["p_holm"] = pa
            if r["verdict"] in (REPRODUCES, WEAKER, DOES_NOT) and pa >= ALPHA:
                r["verdict"] = INCONCLUSIVE
                r["reason"] = (
                    f"not significant after Holm's correction over {len(fam)} readings "
                    f"(p = {r['p_direction']:.2g}, adjusted {pa:.2g}); before it: {r['reason']}"
                )
