"""The verdict record, the decision rule and the claim under test.

A verdict is decided from a test, never by hand. :func:`decide` places an interval of the
claim's quantity (fit to its metric kind: :mod:`qoslab.verdicts.intervals`) against the claim's
direction (``threshold`` and ``margin``: the null side) and against the paper's magnitude (a
range, or a smallest effect that would count, declared per claim in
``qoslab.verdicts.magnitudes``):

- ``reproduces``: the interval lies inside the paper's range (beyond the smallest effect);
- ``weaker than claimed``: a real effect of the claimed sign, smaller than claimed: the interval
  excludes the null side and lies short of the paper's magnitude (or past the range's far end,
  which the reason says);
- ``does not reproduce``: the effect the paper reports is absent: the interval excludes the
  claimed magnitude on the null side while reaching the null (a precise null, whether or not it
  touches zero), or lies wholly on the null side;
- ``inconclusive``: the interval reaches both the claimed magnitude and the null side (or is
  unbounded: too few seeds for its kind), or straddles the magnitude's bound with the direction
  settled (both "reproduces" and "weaker than claimed" remain possible);
- ``not testable here``: the claim's declared precondition is absent in the runs (a condition
  checked on them, e.g. the marker cannot act in the measured window) and the interval does not
  lie wholly against the claimed direction (an effect of the other sign is still measured: does
  not reproduce); never because the compared arms gave the same value: an observed null is a
  result.
"""

from __future__ import annotations

import math
import re
from dataclasses import KW_ONLY, MISSING, asdict, dataclass, replace
from typing import Any, Literal

from qoslab.stats import Estimate, Paired, one_sample_p
from qoslab.verdicts.intervals import KINDS, MetricKind

REPRODUCES = "reproduces"
WEAKER = "weaker than claimed"
DOES_NOT = "does not reproduce"
INCONCLUSIVE = "inconclusive"
NOT_TESTABLE = "not testable here"
VERDICTS = (REPRODUCES, WEAKER, DOES_NOT, INCONCLUSIVE, NOT_TESTABLE)

Direction = Literal["greater", "less"]


@dataclass(frozen=True)
class Verdict:
    """One claim (or one part of a compound claim) of the paper under one reading.

    - ``claim``: the paper's words (quoted), ``section``: where they are, ``part``: which part of
      a compound claim this record tests ("" for a claim with one part);
    - ``reading``: the name of the variant that implements the reading, ``supported``: what the
      paper's text says about this reading;
    - ``ours``/``paper``: the numbers set side by side, as text; ``magnitude``: the paper's
      magnitude as declared for the decision (with its justification);
    - ``effect`` and ``ci95``: the quantity the verdict is decided on and its 95 % interval;
      ``test`` and ``p`` (as the run computed it); ``p_direction``: the two-sided p of the test
      against the claim's direction boundary, ``p_holm``: that p after Holm's correction over the
      claim's readings;
    - ``moves``: how far the claim's quantity moved under the reading's mechanism-disabled or
      perturbed arms (None: not measured by the run that made the record);
    - ``seeds``: how many seeds (pairs); ``quick``: from a ``--quick`` run;
    - ``verdict``: one of :data:`VERDICTS`; ``sign_verdict``: the verdict on the sign alone (the
      rule before magnitudes, kept for comparison); ``reason``: why, in a sentence;
    - ``decided_from``: "run" (decided when the run wrote the record) or "stored interval"
      (re-decided later from the stored effect, interval and seeds, without a rerun).
    """

    claim: str
    section: str
    reading: str
    ours: str
    paper: str
    effect: float
    ci95: tuple[float, float]
    test: str
    p: float
    seeds: int
    verdict: str
    reason: str
    supported: str = ""
    quick: bool = False
    flavour: str = "reference"
    #: the TCP senders: "as published" (the paper's scenarios), or the variant every sender ran
    sender: str = "as published"
    part: str = ""
    magnitude: str = ""
    p_direction: float | None = None
    p_holm: float | None = None
    moves: float | None = None
    sign_verdict: str = ""
    decided_from: str = ""
    borrowed_from: str = ""
    #: the per-seed values the interval is computed from (paired differences, or the values of a
    #: one-sample test), in seed order; empty in records written before they were kept
    values: tuple[float, ...] = ()
    #: whether the claim's declared precondition holds in the runs (None: the claim declares
    #: none, or the run did not evaluate it), and what was measured
    precondition_met: bool | None = None
    precondition: str = ""

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {', '.join(VERDICTS)}, got {self.verdict!r}")
        for name in ("claim", "section", "reading", "reason"):
            if not str(getattr(self, name)).strip():
                raise ValueError(f"a verdict needs a {name}")

    def as_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["ci95"] = [_num(x) for x in self.ci95]
        d["values"] = [_num(x) for x in self.values]
        for k in ("effect", "p", "p_direction", "p_holm", "moves"):
            d[k] = _num(d[k])
        return d


def _pre(precondition: tuple[bool, str] | None) -> dict[str, Any]:
    if precondition is None:
        return {}
    return {"precondition_met": bool(precondition[0]), "precondition": precondition[1]}


def _num(x: float | None) -> float | None:
    return float(x) if x is not None and math.isfinite(x) else None


#: the fields every record has (those with a default may be absent from older files)
REQUIRED = [
    k
    for k, f in Verdict.__dataclass_fields__.items()
    if f.default is MISSING and f.default_factory is MISSING
]


def bar_of(direction: Direction, threshold: float, margin: float) -> float:
    """The boundary the interval must clear for the claimed direction."""
    return threshold + margin if direction == "greater" else threshold - margin


def decide(
    ci95: tuple[float, float],
    direction: Direction,
    threshold: float = 0.0,
    margin: float = 0.0,
    magnitude: tuple[float, float] | None = None,
    testable: bool = True,
) -> str:
    """The verdict on a claim that a quantity is ``direction`` than ``threshold`` (by more than
    ``margin``, the least effect that is not "no difference"), of the paper's ``magnitude``
    (``(low, high)`` in the effect's units, either end may be infinite; None: the claim gives a
    direction only). ``testable=False``: the claim's declared precondition is absent in the runs:
    ``not testable here``, unless the interval lies wholly against the claimed direction (a
    measured effect of the other sign is a result). See the module's text."""
    lo, hi = ci95
    bar = bar_of(direction, threshold, margin)
    if not testable:
        # without its precondition the claimed effect cannot show; an effect measured wholly
        # against the claimed direction still can, and is a result
        finite = math.isfinite(lo) and math.isfinite(hi)
        # an effect of the other sign, larger than the margin (not merely inside it)
        other = threshold - margin if direction == "greater" else threshold + margin
        against_only = finite and (hi < other if direction == "greater" else lo > other)
        return DOES_NOT if against_only else NOT_TESTABLE
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return INCONCLUSIVE
    a, b = magnitude if magnitude is not None else (-math.inf, math.inf)
    if direction == "greater":
        beyond, against = lo > bar, hi <= bar
        # the near end of the paper's magnitude (its smallest claimed effect)
        short_of = math.isfinite(a) and a > bar and hi < a
    else:
        beyond, against = hi < bar, lo >= bar
        short_of = math.isfinite(b) and b < bar and lo > b
    if against:
        return DOES_NOT
    if not beyond:
        # the interval reaches the null side: the claimed effect is absent when the interval
        # also excludes it, undecided when it reaches it too
        return DOES_NOT if short_of else INCONCLUSIVE
    if a <= lo and hi <= b:
        return REPRODUCES
    if hi < a or lo > b:
        return WEAKER
    return INCONCLUSIVE


@dataclass
class Claim:
    """A claim and how its sign is tested; :meth:`paired` and :meth:`one_sample` turn a
    measurement into a :class:`Verdict` for one reading. The verdict these give is the sign
    alone; the runner re-decides every record against the paper's magnitude, the claim's parts
    and Holm's correction (:func:`qoslab.verdicts.rules.finalise`) before it writes them."""

    claim: str
    section: str
    direction: Direction
    paper: str
    threshold: float = 0.0
    margin: float = 0.0
    unit: str = ""
    scale: float = 1.0
    digits: int = 3

    def paired(
        self,
        reading: str,
        test: Paired,
        *,
        supported: str = "",
        moves: float | None = None,
        precondition: tuple[bool, str] | None = None,
    ) -> Verdict:
        """The verdict under ``reading`` from a paired comparison (the claimed effect is the mean
        per-seed difference). ``moves``: how far the quantity moved under the reading's
        mechanism-disabled or perturbed arms (reported, not used by the rules).
        ``precondition``: whether the claim's declared precondition holds in these runs, and
        what was measured (see :class:`Magnitude`)."""
        ours = f"{test.fmt(self.digits, self.scale)}{self.unit} (paired, {test.n} seeds)"
        v = self._verdict(reading, ours, test.mean, test.ci95, "paired t", test.p, test.n, supported, moves)
        return replace(v, values=test.values, **_pre(precondition))

    def one_sample(
        self,
        reading: str,
        est: Estimate,
        *,
        supported: str = "",
        moves: float | None = None,
        precondition: tuple[bool, str] | None = None,
    ) -> Verdict:
        """The verdict under ``reading`` from a quantity over seeds, against the threshold."""
        ours = f"{est.fmt(self.digits, self.scale)}{self.unit} ({est.n} seeds)"
        p = one_sample_p(est, self.threshold)
        v = self._verdict(
            reading, ours, est.mean, (est.ci_low, est.ci_high), "one-sample t", p, est.n, supported, moves
        )
        return replace(v, values=est.values, **_pre(precondition))

    def _verdict(
        self,
        reading: str,
        ours: str,
        effect: float,
        ci95: tuple[float, float],
        test: str,
        p: float,
        n: int,
        supported: str,
        moves: float | None,
    ) -> Verdict:
        v = decide(ci95, self.direction, self.threshold, self.margin)
        return Verdict(
            claim=self.claim,
            section=self.section,
            reading=reading,
            ours=ours,
            paper=self.paper,
            effect=effect,
            ci95=ci95,
            test=test,
            p=p,
            seeds=n,
            verdict=v,
            reason=self._reason(v),
            supported=supported,
            moves=moves,
            sign_verdict=v,
            decided_from="run",
        )

    def _reason(self, v: str) -> str:
        side = ">" if self.direction == "greater" else "<"
        bar = bar_of(self.direction, self.threshold, self.margin)
        what = f"{side} {bar:g}"
        if v == REPRODUCES:
            return f"the 95 % CI lies entirely {what}"
        if v == DOES_NOT:
            return f"the 95 % CI lies entirely on the other side of {bar:g} (the claim needs {what})"
        return f"the 95 % CI includes {bar:g}"


@dataclass(frozen=True)
class Primary:
    """Which readings of a claim the paper's text supports (its primary readings), and why.

    A reading is primary when its name matches every pattern of ``require`` and none of
    ``exclude`` (regular expressions, searched). Several readings may be primary where the paper
    states several cases (4 and 20 flows) or where the text supports two readings equally; the
    claim's verdict is then the verdict most of them have (ties: see
    :func:`qoslab.verdicts.docs.claim_verdicts`)."""

    require: tuple[str, ...]
    why: str
    exclude: tuple[str, ...] = ()

    def matches(self, reading: str) -> bool:
        return all(re.search(p, reading) for p in self.require) and not any(
            re.search(p, reading) for p in self.exclude
        )


@dataclass(frozen=True)
class Quantity:
    """What the paper claims, as a quantity, for one claim (or one part of a compound claim):
    the fields a study declares for a claim's part (:class:`qoslab.verdicts.claims.Part`) and
    the rules read (:class:`Magnitude`), declared here once.

    ``direction``/``threshold``/``margin``: the direction of the claim and the margin inside
    which a difference counts as none. ``low``/``high``: the paper's magnitude in the record's
    effect units (an open end is infinite). ``paper``: the magnitude in words, and ``why``:
    where it comes from in the paper (its tables, figures or text) and how it was turned into
    the range. ``kind`` and ``grid``: the metric's kind and its grid step (see
    :mod:`qoslab.verdicts.intervals`), which choose the interval. ``precondition``: a condition
    without which the claim cannot be tested in a run, declared here in words and evaluated on
    the runs by the experiment (the record's ``precondition_met``); absent, the record is ``not
    testable here``. ``precondition_fixed``: the precondition is decided by the configuration
    (the same in every seed), so more seeds cannot bring it; otherwise (a condition met "in some
    seed") a record lacking it is judged again at every sequential look.
    ``primary``: the readings the text supports. ``resolution``: kept for the
    declarations' units (the smallest difference the metric resolves). ``from_next_run``: a
    part whose records only runs from this version on write."""

    direction: Direction
    paper: str
    why: str
    threshold: float = 0.0
    margin: float = 0.0
    low: float = -math.inf
    high: float = math.inf
    resolution: float = 1e-9
    #: a part whose records runs write from this version on (the committed files predate it)
    from_next_run: bool = False
    kind: MetricKind = "continuous"
    grid: float = 0.0
    precondition: str = ""
    precondition_fixed: bool = False
    primary: Primary | None = None


@dataclass(frozen=True)
class Magnitude(Quantity):
    """A :class:`Quantity` as the rules read it, with where its records are: ``match`` (and
    ``section``, when several claims share words) find the claim's records (the claim's whole
    words and the part's whole place, :meth:`qoslab.verdicts.claims.PaperClaim.magnitudes`).
    ``part``: the part of a compound claim; ``borrow``: for a part tested on another claim's
    records (the words of that claim)."""

    _: KW_ONLY
    match: str
    section: str = ""
    part: str = ""
    borrow: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"claim {self.match!r}: kind must be one of {KINDS}, got {self.kind!r}")
        if (self.kind == "grid") != (self.grid > 0):
            raise ValueError(f"claim {self.match!r}: a grid step goes with kind 'grid' and only with it")
        if self.precondition_fixed and not self.precondition:
            raise ValueError(f"claim {self.match!r}: precondition_fixed needs a precondition")

    @property
    def bounds(self) -> tuple[float, float]:
        return (self.low, self.high)

    def describe(self) -> str:
        return f"{self.paper} ({self.why})"

    def is_primary(self, reading: str) -> bool:
        """Whether ``reading`` is one the text supports (every reading, without a declaration)."""
        return self.primary is None or self.primary.matches(reading)
