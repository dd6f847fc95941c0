"""Re-deciding verdict records against the paper's magnitudes, with Holm's correction.

:func:`finalise` is the one path by which every record gets its verdict: the runner applies it
to a run's records before writing ``verdicts.json``, and ``python -m qoslab.verdicts redecide``
applies it to committed files (from their stored effect, intervals, values and seeds; no
rerun). It:

1. finds the claim's declared :class:`~qoslab.verdicts.core.Magnitude` (by its words);
2. fits the interval to the claim's metric kind (:func:`judged`, :mod:`qoslab.verdicts.intervals`):
   the run's 95 % Student-t interval for a continuous quantity, the sign-test interval of the
   median (widened by the grid step) for a discrete, grid-valued or censored one, and for any
   kind whose seeds all gave one value; the run's t interval is kept as ``t_ci95``, the one the
   verdict rests on is ``ci95``, and ``interval`` says how it was made;
3. computes ``p_direction``, the two-sided p of the test against the claim's direction boundary
   (threshold ± margin): the t test's, recomputed from the stored t interval and seeds, or the
   sign test's on the values (never 0 from a zero-width interval);
4. checks the claim's declared precondition on the record (``precondition_met``, evaluated by the
   experiment on its runs): absent, the record is ``not testable here``; an outcome that did
   not differ between the arms is never that, it is a result;
5. decides with :func:`~qoslab.verdicts.core.decide`;
6. corrects for many readings: within one claim part of one file (the family), Holm's step-down
   procedure over the testable readings' ``p_direction`` at α = 0.05; a reading whose decided
   verdict rests on the direction (reproduces, weaker than claimed, does not reproduce) but whose
   Holm-adjusted p is ≥ 0.05 becomes ``inconclusive``, except a precise null: a record whose
   interval excludes the claimed magnitude on the null side while reaching it is decided by that
   exclusion, which Holm's correction (a test of the direction) does not weaken.

Compound claims are split by declaring a part per component; a part tested on another claim's
records (``borrow``) gets copies of those records under the compound claim's words.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
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
from qoslab.verdicts.intervals import Fitted, fitted, sign_p, sign_test_looks, t_interval_of

ALPHA = 0.05

PROCEDURE = (
    "Each claim is a quantity: a reading **reproduces** when its interval lies inside the "
    "paper's declared range (or beyond the declared smallest effect), is **weaker than claimed** "
    "when the effect has the claimed sign but the interval lies short of the paper's magnitude, "
    "**does not reproduce** when the interval excludes the claimed magnitude on the null side "
    "(the effect the paper reports is absent, whether or not the interval touches zero) or lies "
    "wholly against the claimed direction, is **inconclusive** only when the interval reaches "
    "both the claimed magnitude and the null (or is unbounded), and is **not testable here** "
    "only when the claim's declared precondition is absent in the runs (never because the arms "
    "gave the same value: an observed null is a result). The interval fits the metric: "
    "Student-t for a continuous quantity; for a discrete, grid-valued or censored one (and "
    "whenever every seed gave one value) the distribution-free sign-test interval of the "
    "median, widened by the grid step, unbounded below six seeds (eight under the sequential "
    "design). Many readings: within each claim (each part of a compound claim), Holm's "
    "step-down procedure over the readings' p-values of the direction test (α = 0.05); a "
    "reading decided on its direction but not significant after it is inconclusive "
    "(`p_direction`, `p_holm` in the JSON)."
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


def p_from_interval(
    effect: float, ci95: Sequence[float | None], seeds: int, boundary: float, alpha: float = ALPHA
) -> float | None:
    """The two-sided p of a t test of the mean against ``boundary``, from a stored Student-t
    interval at level ``1 − alpha`` and the number of seeds (pairs); None when the interval is
    undefined (a zero-width interval gives no p: its kind's interval decides, see
    :func:`judged`)."""
    lo, hi = ci95
    if lo is None or hi is None or seeds < 2 or not (math.isfinite(lo) and math.isfinite(hi)):
        return None
    half = (hi - lo) / 2.0
    if half <= 0:
        return None
    se = half / t_ppf(1.0 - alpha / 2.0, seeds - 1)
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


def testable(rec: dict[str, Any], m: Magnitude) -> tuple[bool, str]:
    """Whether the claim's declared precondition holds in the record's runs (True when the
    claim declares none or the run did not evaluate it), and the reason when it does not."""
    if not m.precondition or rec.get("precondition_met") is not False:
        return True, ""
    seen = rec.get("precondition") or "not met in these runs"
    return False, f"the claim's precondition ({m.precondition}) is absent: {seen}"


def judged(
    rec: dict[str, Any], m: Magnitude, alpha: float, t_interval: tuple[float, float] | None = None
) -> tuple[Fitted, Callable[[float], float | None]]:
    """The interval the record's verdict rests on, fit to the claim's metric kind at level
    ``1 − alpha`` (from its per-seed values where it keeps them), and the two-sided p of its test
    against a value (None without an interval):
    the sign test's for a distribution-free interval, else the t test's. ``t_interval``: the
    Student-t interval at that level (default: the record's stored 95 % t interval, ``t_ci95``
    or, in records written before it, ``ci95``)."""
    n = int(rec["seeds"])
    raw = rec.get("values") or None
    values = [float(x) for x in raw] if raw else None
    if t_interval is None and values is not None:
        t_interval = t_interval_of(values, alpha)
    elif t_interval is None:
        t_ci = rec.get("t_ci95") or rec["ci95"]
        t_interval = (_f(t_ci[0]), _f(t_ci[1]))
    fit = fitted(m.kind, m.grid, values, t_interval, alpha, n)
    if fit.distribution_free:
        vals = values if values is not None else [t_interval[0]] * n
        return fit, lambda mu: sign_p(vals, mu)
    lo, hi = t_interval
    level = (lo, hi)

    def p_t(mu: float) -> float | None:
        return p_from_interval(rec["effect"], level, n, mu, alpha) if math.isfinite(lo) else None

    return fit, p_t


def _f(x: float | None) -> float:
    return math.nan if x is None else float(x)


def reason(v: str, m: Magnitude, ci: Sequence[float | None], what: str = "the interval") -> str:
    """Why a record got verdict ``v`` from interval ``ci`` (``what`` names the interval)."""
    bar = bar_of(m.direction, m.threshold, m.margin)
    side = ">" if m.direction == "greater" else "<"
    rng = f"[{m.low:g}, {m.high:g}]"
    lo, hi = (_f(x) for x in ci)
    if v == REPRODUCES:
        return f"{what} lies inside the paper's magnitude {rng}"
    if v == WEAKER:
        far = lo > m.high if m.direction == "greater" else hi < m.low
        where = "past the far end of" if far else "short of"
        return f"the direction holds ({side} {bar:g}) but {what} lies {where} the paper's magnitude {rng}"
    if v == DOES_NOT:
        if (m.direction == "greater" and hi > bar) or (m.direction == "less" and lo < bar):
            near = m.low if m.direction == "greater" else m.high
            return (
                f"{what} excludes the paper's magnitude on the null side (it stops short of {near:g}): "
                "the effect the paper reports is absent"
            )
        return f"{what} lies entirely on the other side of {bar:g} (the claim needs {side} {bar:g})"
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return f"{what} is unbounded (too few seeds for the metric's kind)"
    if (m.direction == "greater" and lo > bar) or (m.direction == "less" and hi < bar):
        return f"the direction holds ({side} {bar:g}) but {what} straddles the paper's magnitude {rng}"
    return f"{what} reaches both the paper's magnitude {rng} and the null side ({bar:g})"


def finalise(
    decls: Sequence[Magnitude],
    records: Sequence[dict[str, Any]],
    decided_from: str,
    alpha: float = ALPHA,
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
        out.append(_decide_one(r, m, decided_from, alpha))
        for b in decls:
            if b.borrow and b.borrow in r["claim"] and b.section in r["section"]:
                c = dict(r, claim=_claim_of(decls, b, records), borrowed_from=r["claim"])
                c["section"] = r["section"]
                out.append(_decide_one(c, b, decided_from, alpha))
    _holm_families(out)
    for r in out:
        # a sequential run's record given up at a look keeps saying so (its reason is rewritten
        # above and by Holm's step)
        if r.get("futility") and r["verdict"] not in (REPRODUCES, WEAKER, DOES_NOT):
            r["reason"] += f"; stopped for futility at {r['futility']} seeds"
    return out


def _claim_of(decls: Sequence[Magnitude], b: Magnitude, records: Sequence[dict[str, Any]]) -> str:
    for r in records:
        if b.match in r["claim"] and not r.get("borrowed_from"):
            return str(r["claim"])
    raise ValueError(f"the compound claim {b.match!r} has no records of its own")


def _decide_one(r: dict[str, Any], m: Magnitude, decided_from: str, alpha: float = ALPHA) -> dict[str, Any]:
    t_ci = r.get("t_ci95") or r["ci95"]
    r["t_ci95"] = list(t_ci)
    fit, p_at = judged(r, m, alpha)
    looks = [int(n) for n in r.get("looks") or ()]
    if fit.distribution_free and alpha < ALPHA and len(looks) > 1:
        # the design's α over the looks the exact test can reach (intervals.sign_test_looks)
        alpha = ALPHA / sign_test_looks(looks, ALPHA)
        fit, p_at = judged(r, m, alpha)
    ok, why = testable(r, m)
    ci = (fit.low, fit.high)
    v = decide(ci, m.direction, m.threshold, m.margin, m.bounds, ok)
    r["ci95"] = [c if math.isfinite(c) else None for c in ci]
    p = p_at(decisive_boundary(v, r, m))
    # under a sequential design of K looks (alpha = 0.05/K) the p of a look is K times the
    # look's, as the sequential run states it (Bonferroni alpha spending)
    spending = ALPHA / alpha
    r["p_direction"] = None if p is None else min(1.0, spending * p)
    r["interval"] = fit.method + (
        f" at level {1 - alpha:.4g}" if alpha < ALPHA and fit.distribution_free else ""
    )
    r["verdict"] = v
    # a sequential file's stored t interval is the design's (level 1 − 0.05/K), named as the
    # sequential run names it
    name = "group-sequential interval" if alpha < ALPHA and not fit.distribution_free else _short(fit.method)
    r["reason"] = why if v == NOT_TESTABLE else reason(v, m, r["ci95"], f"the {name}")
    if why and v != NOT_TESTABLE:
        r["reason"] += f" (although {why[0].lower()}{why[1:]})"
    r["part"] = m.part
    r["primary"] = m.is_primary(str(r["reading"]))
    r["magnitude"] = m.describe()
    r["decided_from"] = decided_from
    r["p_holm"] = None
    return r


def decisive_boundary(v: str, r: dict[str, Any], m: Magnitude) -> float:
    """The value whose test decides the record: for "does not reproduce" the near end of the
    claimed magnitude (the claimed effect is what the interval excludes: :func:`precise_null`),
    the direction boundary otherwise (and for a claim whose magnitude starts at that boundary)."""
    bar = bar_of(m.direction, m.threshold, m.margin)
    if v == DOES_NOT and precise_null(r, m):
        return m.low if m.direction == "greater" else m.high
    return bar


def _short(method: str) -> str:
    return "sign-test interval" if "sign-test" in method else "95 % t interval"


def precise_null(r: dict[str, Any], m: Magnitude) -> bool:
    """Whether the record's interval excludes the claimed magnitude on the null side: the
    magnitude's near end lies beyond the direction boundary and the interval stops short of it."""
    lo, hi = (_f(x) for x in r["ci95"])
    bar = bar_of(m.direction, m.threshold, m.margin)
    if m.direction == "greater":
        return math.isfinite(m.low) and m.low > bar and hi < m.low
    return math.isfinite(m.high) and m.high < bar and lo > m.high


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
