"""Sequential seeds: verdicts decided round by round from an interval that stays valid.

The fixed-seed mode (``--seeds N``) decides each claim from a 95 % Student-t interval over N
seeds. Running seeds in rounds and stopping as soon as that interval clears a boundary is *not*
valid: every look is another chance for a 95 % interval to miss, and the chance that one of
ten looks misses is far above 5 % (:func:`simulate` measures it, see
``tests/test_sequential.py``). This module decides instead from a **confidence sequence**, a
sequence of intervals that covers the true mean at every look simultaneously with probability
at least ``1 − α``, so the verdict of any look (the first decided one, or the one at the cap) is
as trustworthy as a fixed-N verdict at level α.

The procedure: Lai's (1976) confidence sequence for the mean of i.i.d. Gaussian values with
unknown variance, the t-test's sequential counterpart (T. L. Lai, "On confidence sequences",
Ann. Statist. 4(2), 1976; analysed by H. Wang and A. Ramdas, "Anytime-valid t-tests and
confidence sequences for Gaussian means with unknown variance", Sequential Analysis 2025,
arXiv:2310.03722; in the framework of S. R. Howard, A. Ramdas, J. McAuliffe, J. Sekhon,
"Time-uniform, nonparametric, nonasymptotic confidence sequences", Ann. Statist. 49(2), 2021).
Derivation, for values ``x_1..x_n`` and a candidate mean ``μ`` (``y_i = x_i − μ``): the
scale-invariant mixture likelihood ratio, a N(0, 1/c) prior on the standardised effect
``(mean − μ)/σ`` against 0, with σ integrated out under its invariant prior ``dσ/σ``, is

    M_n(μ) = sqrt(c / (n + c)) · (1 − r_n / (n + c))^(−n/2),  r_n = (Σ y_i)² / Σ y_i²,

a non-negative martingale with mean 1 under ``mean = μ`` (whatever σ) in the filtration of
the scale-invariant statistics, so by Ville's inequality ``P(∃ n: M_n(μ) ≥ 1/α) ≤ α``. The set
``{μ : M_n(μ) < 1/α}`` is the interval ``x̄_n ± sqrt(R_n · SS_n / (n (n − R_n)))`` with
``SS_n = Σ (x_i − x̄_n)²`` and ``R_n = (n + c)(1 − (α² c / (n + c))^(1/n))`` (the whole line
while ``R_n ≥ n``: with α = 0.05 and c = 0.5, for fewer than four seeds).

Assumptions (the same as the fixed-seed t interval's): the per-seed values (a quantity, or a
paired difference between two arms run with the same seed) are independent and identically
Gaussian; seeds are drawn in a fixed order (1, 2, 3, ...), never chosen after seeing results.
Any number of looks, at any seeds, may be taken: the looks need not be declared in advance.
The price is width: at α = 0.05 and c = 0.5 the interval is 1.7× the fixed-N t interval's at 10
and 20 seeds (``half_width_factor`` gives the factor).

**The procedure ``--sequential`` uses: a group-sequential t test** (:class:`GroupSequential`).
When the looks are declared before the first seed runs (``--sequential`` looks at 4, 6, ...,
the cap: :func:`looks`, fixed by the cap alone), a narrower interval is valid: at each of the
``K`` looks, the Student-t interval at level ``1 − α/K``. Bonferroni's inequality bounds the
chance that any of the ``K`` intervals misses by ``K · α/K = α`` whatever the dependence between
looks (they share seeds), so the coverage holds at every look simultaneously, and therefore at
the look a stopping rule picks; stopping earlier only takes fewer of the ``K`` chances. This is
a group-sequential design with Bonferroni alpha spending, an equal share ``α/K`` per look
(C. Jennison and B. W. Turnbull, *Group Sequential Methods with Applications to Clinical
Trials*, 2000, Sec. 2; the exact boundaries of S. J. Pocock, Biometrika 64(2), 1977, are
narrower, z = 2.361 at four looks for Gaussian values of known variance against Bonferroni's
2.498 (5.5 %), and need the looks' joint law, which an unknown variance complicates).
Its decision p-value for a boundary ``μ`` is ``min(1, K · p_k)`` at the best look ``k`` so
far, ``p_k`` the two-sided t-test p of ``mean = μ``: the interval excludes ``μ`` exactly when
that is at most α, and it is valid at any stopping time among the declared looks, so Holm's
correction over a claim's readings may use it. Against the confidence sequence at the same
looks (:func:`half_width_factor` against :meth:`GroupSequential.factor`): at a cap of 10 (four
looks) 1.69, 1.48, 1.41, 1.38 times the fixed-N t interval at 4, 6, 8, 10 seeds where the
sequence is 3.79, 1.88, 1.75, 1.71; at a cap of 20 (nine looks) 2.26 at 4 seeds and 1.49 at 20,
where the sequence is 3.79 and 1.68. Narrower at every look, it decides every record at or
before the look the sequence would (a narrower interval about the same mean straddles no
boundary the wider one clears). What it gives up: looks not declared in advance (more seeds
than the cap, or a look between two declared ones, are not covered), which the confidence
sequence allows.

A sequential verdict is :func:`qoslab.verdicts.core.decide` applied to the look's interval, so
it takes the same five values; it records the seeds used, the looks taken and the procedure
(:meth:`SequentialDecision.record`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np

from qoslab.stats import t_cdf, t_ppf
from qoslab.verdicts.core import (
    DOES_NOT,
    INCONCLUSIVE,
    NOT_TESTABLE,
    REPRODUCES,
    WEAKER,
    Claim,
    Direction,
    Verdict,
    bar_of,
    decide,
)

ALPHA = 0.05
#: the mixture's precision: 0.5 makes the interval finite from four seeds on and near its
#: narrowest between 10 and 30 seeds (any c > 0 is valid)
MIXTURE_C = 0.5

#: the confidence sequence's words, as a verdict record names it
CONFIDENCE_SEQUENCE = (
    f"confidence sequence (Lai 1976, Gaussian mean with unknown variance, mixture c = {MIXTURE_C:g}; "
    f"time-uniform coverage {1 - ALPHA:.0%}, Howard et al. 2021): valid at every look"
)


def boundary_ratio(n: int, alpha: float = ALPHA, c: float = MIXTURE_C) -> float:
    """``R_n``: the interval at ``n`` values holds the μ with ``(Σy)²/Σy² < R_n``."""
    if n < 1:
        return math.inf
    return (n + c) * (1.0 - math.pow(alpha * alpha * c / (n + c), 1.0 / n))


def half_width(n: int, ss: float, alpha: float = ALPHA, c: float = MIXTURE_C) -> float:
    """The half-width of the confidence sequence at ``n`` values whose sum of squared deviations
    from their mean is ``ss`` (infinite while the sequence is still the whole line)."""
    r = boundary_ratio(n, alpha, c)
    if n < 2 or r >= n:
        return math.inf
    return math.sqrt(r * max(ss, 0.0) / (n * (n - r)))


def _mean_ss(values: Sequence[float]) -> tuple[int, float, float]:
    """The count, mean and sum of squared deviations of ``values`` (every interval's summary;
    the mean is NaN with no values)."""
    a = np.asarray(values, dtype=float)
    if a.size == 0:
        return 0, math.nan, 0.0
    mean = float(a.mean())
    return int(a.size), mean, float(((a - mean) ** 2).sum())


@dataclass(frozen=True)
class GroupSequential:
    """The group-sequential t test over the declared looks ``plan`` (seed counts; see the
    module's text): at look ``n`` of ``K = len(plan)``, the Student-t interval at level
    ``1 − alpha/K``. Called on values, it gives their interval (a rule for
    :func:`decide_sequentially` and :func:`simulate`, like :func:`interval`)."""

    plan: tuple[int, ...]
    alpha: float = ALPHA

    def __post_init__(self) -> None:
        if not self.plan or list(self.plan) != sorted(set(self.plan)) or self.plan[0] < 2:
            raise ValueError(
                f"a group-sequential design needs increasing looks from 2 seeds on, got {self.plan}"
            )

    @property
    def spent(self) -> float:
        """The α each look spends: an equal share, ``alpha / K``."""
        return self.alpha / len(self.plan)

    @property
    def procedure(self) -> str:
        k = len(self.plan)
        return (
            f"group-sequential t test, looks declared in advance at {', '.join(map(str, self.plan))} "
            f"seeds; Bonferroni alpha spending, {self.alpha:g}/{k} at each of the {k} looks "
            f"(the {1 - self.spent:.4g} t interval): coverage {1 - self.alpha:.0%} over every look"
        )

    def critical(self, n: int) -> float:
        """The t quantile the interval at ``n`` values uses: ``1 − alpha/(2K)``, ``n − 1`` df."""
        return t_ppf(1.0 - self.spent / 2.0, n - 1) if n >= 2 else math.inf

    def half_width(self, n: int, ss: float) -> float:
        """The half-width at ``n`` values whose sum of squared deviations is ``ss``."""
        if n < 2:
            return math.inf
        return self.critical(n) * math.sqrt(max(ss, 0.0) / ((n - 1) * n))

    def factor(self, n: int) -> float:
        """The half-width over the fixed-N 95 % t interval's at the same ``n`` values."""
        return self.critical(n) / t_ppf(1.0 - self.alpha / 2.0, n - 1) if n >= 2 else math.inf

    def p(self, n: int, mean: float, ss: float, mu: float) -> float:
        """``min(1, K · p)``, ``p`` the two-sided t-test p of ``mean = mu`` at ``n`` values: the
        interval at this look excludes ``mu`` exactly when it is at most ``alpha``."""
        if n < 2:
            return 1.0
        d = mean - mu
        if ss <= 0.0:
            return 1.0 if d == 0.0 else 0.0
        t = abs(d) / math.sqrt(ss / ((n - 1) * n))
        return min(1.0, len(self.plan) * 2.0 * (1.0 - t_cdf(t, n - 1)))

    def __call__(self, values: Sequence[float]) -> tuple[float, float]:
        n, mean, ss = _mean_ss(values)
        if n < 2:
            return (-math.inf, math.inf)
        h = self.half_width(n, ss)
        return (mean - h, mean + h)


#: the first look at which a record may be stopped for futility: its values' spread is then
#: estimated from six seeds (three looks), not four
FUTILITY_FROM = 6
#: a record is stopped for futility when the predictive probability that the cap decides it is
#: below this
FUTILITY_POWER = 0.10
#: the spread the cap's width is projected with: the lower end of its one-sided 90 % interval
#: (optimistic about the width, so that a noisy early spread does not stop a record the cap
#: would decide)
FUTILITY_SPREAD_LEVEL = 0.90

FUTILITY = (
    f"futility (non-binding), from {FUTILITY_FROM} seeds: a record stops, inconclusive, when the "
    f"predictive probability that the cap's interval decides it is below "
    f"{FUTILITY_POWER:.0%} (its mean as the current one's posterior predicts, its width from the "
    f"spread's one-sided {FUTILITY_SPREAD_LEVEL:.0%} lower bound)"
)


def chi2_ppf(p: float, k: int) -> float:
    """The ``p`` quantile of a chi-square with ``k`` degrees of freedom (Wilson and Hilferty's
    cube-root normal approximation, 1931: within 1 % of the exact quantile for k ≥ 5 at the
    quantiles used here)."""
    z = NormalDist().inv_cdf(p)
    a = 2.0 / (9.0 * k)
    return k * max(1.0 - a + z * math.sqrt(a), 0.0) ** 3


#: a procedure's half-width at ``n`` values with sum of squared deviations ``ss``
Width = Callable[[int, float], float]


def projected_half_width(n: int, ss: float, cap: int, width: Width = half_width) -> float:
    """The half-width (``width``: the confidence sequence's unless given) at ``cap`` values if
    their spread stays what ``n`` values with sum of squared deviations ``ss`` show
    (``SS_cap = ss · (cap − 1)/(n − 1)``)."""
    if n < 2:
        return math.inf
    return width(cap, ss * (cap - 1) / (n - 1))


def predictive_power(
    n: int, effect: float, ss: float, cap: int, boundaries: Sequence[float], width: Width = half_width
) -> float:
    """The probability that the interval (``width``) at ``cap`` values decides a record now at
    ``n`` values (mean ``effect``, sum of squared deviations ``ss``): that its interval, the cap's
    mean ± the cap's half-width, holds none of ``boundaries`` (the claim's direction boundary and
    the ends of its magnitude: :func:`decide` is undecided exactly when its interval straddles
    one). The cap's mean is drawn from its predictive distribution under a flat prior on the true
    mean, ``N(effect, σ² (cap − n) / (cap n))`` with σ² = ``ss / (n − 1)``; the half-width is
    :func:`projected_half_width` with the spread at the lower end of its one-sided
    :data:`FUTILITY_SPREAD_LEVEL` interval, ``ss / χ²_{level}(n − 1)`` per value."""
    if n < 2 or n >= cap:
        return 1.0
    optimistic = ss * (n - 1) / chi2_ppf(FUTILITY_SPREAD_LEVEL, n - 1)
    h = projected_half_width(n, optimistic, cap, width)
    if not math.isfinite(h):
        return 0.0
    spread = math.sqrt(ss / (n - 1) * (cap - n) / (cap * n))
    undecided: list[list[float]] = []
    for p in sorted(b for b in boundaries if math.isfinite(b)):
        if undecided and p - h <= undecided[-1][1]:
            undecided[-1][1] = p + h
        else:
            undecided.append([p - h, p + h])
    if spread == 0.0:
        return 0.0 if any(a < effect < b for a, b in undecided) else 1.0
    law = NormalDist(effect, spread)
    return 1.0 - sum(law.cdf(b) - law.cdf(a) for a, b in undecided)


def futile(
    n: int, effect: float, ss: float, cap: int, boundaries: Sequence[float], width: Width = half_width
) -> bool:
    """Whether a record still undecided after ``n`` values is stopped for futility: from
    :data:`FUTILITY_FROM` values on, when :func:`predictive_power` is below
    :data:`FUTILITY_POWER`. Stopping for futility is non-binding and costs no validity: the
    sequence (and the group-sequential design, among its declared looks) covers at every stopping
    time, whatever rule chose it, and the record stays
    ``inconclusive`` (it asserts nothing). What it may cost is power, a record the cap would
    have decided: :func:`simulate` with ``futility=True`` measures how often
    (``tests/test_sequential.py``)."""
    if n < FUTILITY_FROM or n >= cap or not (math.isfinite(effect) and math.isfinite(ss)):
        return False
    return predictive_power(n, effect, ss, cap, boundaries, width) < FUTILITY_POWER


def half_width_factor(n: int, alpha: float = ALPHA, c: float = MIXTURE_C) -> float:
    """The sequence's half-width over the fixed-N Student-t interval's at the same ``n`` values
    (the same level): the price of being allowed to look after every round."""
    r = boundary_ratio(n, alpha, c)
    if n < 2 or r >= n:
        return math.inf
    return math.sqrt(r * (n - 1) / (n - r)) / t_ppf(1.0 - alpha / 2.0, n - 1)


def interval(values: Sequence[float], alpha: float = ALPHA, c: float = MIXTURE_C) -> tuple[float, float]:
    """The confidence sequence's interval after ``values`` (the mean ± :func:`half_width`)."""
    n, mean, ss = _mean_ss(values)
    if n == 0:
        return (-math.inf, math.inf)
    h = half_width(n, ss, alpha, c)
    return (mean - h, mean + h)


def mixture_ratio(values: Sequence[float], mu: float, c: float = MIXTURE_C) -> float:
    """``M_n(μ)``, the mixture likelihood ratio of the module's text after ``values`` (1 with
    fewer than two values, infinite when every value equals the same number other than ``μ``)."""
    n, mean, ss = _mean_ss(values)
    return 1.0 if n == 0 else mixture_ratio_of(n, mean, ss, mu, c)


def summary_of_t(effect: float, ci95: Sequence[float | None], n: int, alpha: float = ALPHA) -> float | None:
    """``SS_n``, the sum of squared deviations, from a fixed-N Student-t interval at level
    ``1 − alpha`` over ``n`` values with mean ``effect`` (None when the interval is undefined)."""
    lo, hi = ci95
    if n < 2 or lo is None or hi is None or not (math.isfinite(lo) and math.isfinite(hi)):
        return None
    s = (hi - lo) / 2.0 * math.sqrt(n) / t_ppf(1.0 - alpha / 2.0, n - 1)
    return (n - 1) * s * s


def mixture_ratio_of(n: int, mean: float, ss: float, mu: float, c: float = MIXTURE_C) -> float:
    """:func:`mixture_ratio` from the summary ``n``, ``mean`` and ``SS_n`` of the values."""
    if n < 2:
        return 1.0
    d = mean - mu
    s2 = ss + n * d * d
    if s2 == 0.0:
        return 1.0
    r = (n * d) ** 2 / s2
    rest = 1.0 - r / (n + c)
    if rest <= 0.0:
        return math.inf
    log_m = 0.5 * math.log(c / (n + c)) - 0.5 * n * math.log(rest)
    return math.exp(log_m) if log_m < 700.0 else math.inf


def anytime_p(values: Sequence[float], mu: float, plan: Sequence[int], c: float = MIXTURE_C) -> float:
    """The anytime-valid p-value of ``mean = mu`` over the looks ``plan`` (seed counts):
    ``min(1, 1 / max_k M_k(mu))``. The sequence's interval at level α excludes ``mu`` at a look
    exactly when that look's ``1 / M`` is at most α."""
    best = max((mixture_ratio(values[:k], mu, c) for k in plan if k <= len(values)), default=1.0)
    return min(1.0, 1.0 / best) if best > 0 else 1.0


def t_interval(values: Sequence[float], alpha: float = ALPHA) -> tuple[float, float]:
    """The fixed-N Student-t interval (what naive peeking would use at every look)."""
    a = np.asarray(values, dtype=float)
    n = int(a.size)
    if n < 2:
        return (-math.inf, math.inf)
    mean = float(a.mean())
    h = t_ppf(1.0 - alpha / 2.0, n - 1) * float(a.std(ddof=1)) / math.sqrt(n)
    return (mean - h, mean + h)


def looks(first: int, step: int, cap: int) -> list[int]:
    """The seed counts at which a sequential run looks: ``first``, ``first + step``, ... up to
    ``cap`` (always included)."""
    if first < 1 or step < 1 or cap < first:
        raise ValueError(f"looks need 1 <= first <= cap and step >= 1, got {first}, {step}, {cap}")
    out = list(range(first, cap + 1, step))
    if out[-1] != cap:
        out.append(cap)
    return out


@dataclass(frozen=True)
class Claimed:
    """What a verdict is decided against (the arguments of :func:`decide`)."""

    direction: Direction
    threshold: float = 0.0
    margin: float = 0.0
    magnitude: tuple[float, float] | None = None

    @property
    def bar(self) -> float:
        """The boundary the interval must clear for the claimed direction."""
        return bar_of(self.direction, self.threshold, self.margin)

    @property
    def boundaries(self) -> tuple[float, ...]:
        """Every point an undecided interval straddles: the bar and the magnitude's ends."""
        return (self.bar, *(self.magnitude or ()))

    def verdict(self, ci: tuple[float, float], testable: bool = True) -> str:
        return decide(ci, self.direction, self.threshold, self.margin, self.magnitude, testable)


@dataclass(frozen=True)
class SequentialDecision:
    """A verdict reached by looking after rounds of seeds: the verdict, the effect (the mean)
    and the interval at the look that decided it (or at the cap), the seeds used, the looks
    taken (seed counts), and the procedure."""

    verdict: str
    effect: float
    interval: tuple[float, float]
    seeds: int
    looks: tuple[int, ...]
    procedure: str
    stopped_early: bool
    #: the anytime-valid p of the claim's direction boundary (:func:`anytime_p`, or
    #: :meth:`GroupSequential.p` at its best look)
    p_direction: float = math.nan
    #: what the interval is, in a record's words
    test: str = "confidence sequence"

    def record(self) -> dict[str, Any]:
        """The fields a verdict record carries for a sequential decision (the rest, the claim's
        words and reading, come from :class:`qoslab.verdicts.Claim`)."""
        return {
            "verdict": self.verdict,
            "effect": self.effect,
            "ci95": [self.interval[0], self.interval[1]],
            "seeds": self.seeds,
            "looks": list(self.looks),
            "procedure": self.procedure,
            "test": self.test,
            "p": self.p_direction,
        }


def verdict_record(
    claim: Claim,
    reading: str,
    d: SequentialDecision,
    *,
    supported: str = "",
    moves: float | None = None,
) -> dict[str, Any]:
    """The verdict record (as ``verdicts.json`` holds it) of a sequential decision on ``claim``
    under ``reading``: the fields of :class:`qoslab.verdicts.Verdict` with the sequence's
    interval as ``ci95``, its anytime-valid p as ``p``, the seeds used as ``seeds``, plus
    ``looks`` (the seed counts looked at) and ``procedure`` (the decision's).

    Not yet done: :func:`qoslab.verdicts.finalise` recomputes ``p_direction`` from ``ci95`` as if
    it were a t interval. The sequence is wider than the t interval at the same seeds, so that p
    is larger than the t test's, but it is not the anytime-valid p; Holm's correction over a
    family with sequential records should read ``p`` instead (a change to
    ``qoslab.verdicts.rules._decide_one``, which changes the rules' fingerprint and so flags
    every committed verdict file for ``redecide``)."""
    lo, hi = d.interval
    half = (hi - lo) / 2.0
    shown = f"{d.effect / claim.scale:+.{claim.digits}g} ± {half / claim.scale:.2g}{claim.unit}"
    sign = decide(d.interval, claim.direction, claim.threshold, claim.margin)
    bar = bar_of(claim.direction, claim.threshold, claim.margin)
    side = ">" if claim.direction == "greater" else "<"
    what = "confidence sequence" if d.test == "confidence sequence" else "group-sequential interval"
    reason = {
        REPRODUCES: f"the {what} lies entirely {side} {bar:g}",
        DOES_NOT: f"the {what} lies entirely on the other side of {bar:g}",
    }.get(sign, f"the {what} includes {bar:g}")
    v = Verdict(
        claim=claim.claim,
        section=claim.section,
        reading=reading,
        ours=f"{shown} ({d.test}, {d.seeds} seeds, looks at {', '.join(map(str, d.looks))})",
        paper=claim.paper,
        effect=d.effect,
        ci95=d.interval,
        test=d.test,
        p=d.p_direction,
        seeds=d.seeds,
        verdict=sign,
        reason=reason,
        supported=supported,
        moves=moves,
        sign_verdict=sign,
        decided_from="run",
    )
    return {**v.as_json(), "looks": list(d.looks), "procedure": d.procedure}


Interval = Callable[[Sequence[float]], tuple[float, float]]


def decide_sequentially(
    draw: Callable[[int, int], Sequence[float]],
    claim: Claimed,
    plan: Sequence[int],
    *,
    testable: bool = True,
    rule: Interval = interval,
) -> SequentialDecision:
    """Runs rounds of seeds until the claim is decided or the plan's last look.

    ``draw(start, stop)`` returns the per-seed values of seeds ``start+1 .. stop`` (the next
    round; seeds in their fixed order); ``plan`` the seed counts at which to look (see
    :func:`looks`). At each look the verdict is :func:`decide` on ``rule``'s interval over all
    values so far; any verdict but ``inconclusive`` stops. ``rule``: the confidence sequence
    (:func:`interval`, the default), a :class:`GroupSequential` design (whose looks must be
    ``plan``), or ``t_interval``, naive peeking, kept for the comparison in :func:`simulate`; it
    is not valid."""
    gs = rule if isinstance(rule, GroupSequential) else None
    if gs is not None and tuple(plan) != gs.plan:
        raise ValueError(f"the design's looks {gs.plan} are not the plan's {tuple(plan)}")
    if not plan:
        raise ValueError("a sequential decision needs at least one look")
    values: list[float] = []
    taken: list[int] = []
    v = INCONCLUSIVE
    ci = (-math.inf, math.inf)
    for k in plan:
        if k > len(values):
            values.extend(float(x) for x in draw(len(values), k))
        taken.append(k)
        ci = rule(values[:k])
        v = claim.verdict(ci, testable)
        if v != INCONCLUSIVE:
            break
    used = values[: taken[-1]]
    effect = float(np.mean(used)) if used else math.nan
    early = taken[-1] < plan[-1]
    if gs is not None:
        p = min(gs.p(*_mean_ss(used[:k]), claim.bar) for k in taken)
        return SequentialDecision(
            v, effect, ci, taken[-1], tuple(taken), gs.procedure, early, p, "group-sequential t"
        )
    p = anytime_p(used, claim.bar, taken) if rule is interval else math.nan
    return SequentialDecision(v, effect, ci, taken[-1], tuple(taken), CONFIDENCE_SEQUENCE, early, p)


def wrong(verdict: str, mean: float, claim: Claimed) -> bool:
    """Whether ``verdict`` contradicts the true ``mean``: ``reproduces`` when the mean is not
    beyond the direction's boundary or outside the paper's magnitude; ``weaker than claimed``
    when it is not beyond the boundary or inside the magnitude; ``does not reproduce`` when it
    is strictly beyond the boundary. ``inconclusive`` and ``not testable here`` are never wrong
    in this sense (they assert nothing)."""
    bar = claim.bar
    beyond = mean > bar if claim.direction == "greater" else mean < bar
    lo, hi = claim.magnitude if claim.magnitude is not None else (-math.inf, math.inf)
    inside = lo <= mean <= hi
    if verdict == REPRODUCES:
        return not (beyond and inside)
    if verdict == WEAKER:
        return not beyond or inside
    if verdict == DOES_NOT:
        return beyond
    return verdict not in (INCONCLUSIVE, NOT_TESTABLE)


@dataclass(frozen=True)
class SimulationResult:
    """Rates over ``claims`` synthetic claims with one true mean: the share of verdicts that
    contradict the truth (:func:`wrong`), the share of each verdict, and the mean seeds used."""

    claims: int
    wrong: int
    counts: dict[str, int]
    mean_seeds: float

    @property
    def wrong_rate(self) -> float:
        return self.wrong / self.claims


def intervals(data: np.ndarray[Any, Any], plan: Sequence[int], rule: Interval) -> np.ndarray[Any, Any]:
    """The intervals of ``rule`` for every row of ``data`` at every look of ``plan``, shape
    (rows, looks, 2): in closed form for :func:`interval` and :func:`t_interval` (from running
    sums; equal to calling them), and for a :class:`GroupSequential` design; by calling ``rule``
    otherwise."""
    rows = data.shape[0]
    out = np.empty((rows, len(plan), 2))
    s1 = np.cumsum(data, axis=1)
    s2 = np.cumsum(data * data, axis=1)
    for j, k in enumerate(plan):
        if rule is interval or rule is t_interval or isinstance(rule, GroupSequential):
            mean = s1[:, k - 1] / k
            ss = np.maximum(s2[:, k - 1] - k * mean * mean, 0.0)
            if isinstance(rule, GroupSequential):
                h = rule.critical(k) * np.sqrt(ss / (k - 1) / k) if k >= 2 else np.full(rows, math.inf)
            elif rule is interval:
                r = boundary_ratio(k)
                h = np.sqrt(r * ss / (k * (k - r))) if k >= 2 and r < k else np.full(rows, math.inf)
            else:
                h = (
                    t_ppf(1.0 - ALPHA / 2.0, k - 1) * np.sqrt(ss / (k - 1) / k)
                    if k >= 2
                    else np.full(rows, math.inf)
                )
            out[:, j, 0], out[:, j, 1] = mean - h, mean + h
        else:
            for i in range(rows):
                out[i, j] = rule([float(x) for x in data[i, :k]])
    return out


def simulate(
    mean: float,
    sd: float,
    claim: Claimed,
    plan: Sequence[int],
    *,
    claims: int = 2000,
    seed: int = 1,
    rule: Interval = interval,
    futility: bool = False,
) -> SimulationResult:
    """Runs ``claims`` synthetic claims whose per-seed values are N(``mean``, ``sd``²), each
    decided as :func:`decide_sequentially` decides (``rule``'s interval at each look of ``plan``,
    :func:`decide` on it, the first verdict but ``inconclusive`` stops), and counts the verdicts
    that contradict ``mean``. ``futility``: a claim :func:`futile` at a look also stops there,
    ``inconclusive``, as ``--sequential`` stops a record. Seeded: the same arguments give the
    same counts."""
    width: Width = rule.half_width if isinstance(rule, GroupSequential) else half_width
    rng = np.random.default_rng(seed)
    data = rng.normal(mean, sd, size=(claims, plan[-1]))
    cis = intervals(data, plan, rule)
    idx = np.asarray(plan) - 1
    sums = np.cumsum(data, axis=1)[:, idx]
    means = sums / np.asarray(plan)
    sss = np.maximum(np.cumsum(data * data, axis=1)[:, idx] - sums * means, 0.0)
    counts = dict.fromkeys((REPRODUCES, WEAKER, DOES_NOT, INCONCLUSIVE, NOT_TESTABLE), 0)
    bad = 0
    used = 0
    for i in range(claims):
        v, stop = INCONCLUSIVE, plan[-1]
        for j, k in enumerate(plan):
            v = claim.verdict((float(cis[i, j, 0]), float(cis[i, j, 1])))
            if v != INCONCLUSIVE or (
                futility
                and futile(k, float(means[i, j]), float(sss[i, j]), plan[-1], claim.boundaries, width)
            ):
                stop = k
                break
        counts[v] += 1
        bad += wrong(v, mean, claim)
        used += stop
    return SimulationResult(claims, bad, counts, used / claims)
