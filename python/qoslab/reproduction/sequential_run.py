"""``qoslab reproduce NAME --sequential``: seeds in rounds, each claim decided once its
group-sequential interval (:class:`qoslab.sequential.GroupSequential`) clears a boundary, or at
the cap.

Round by round (looks at 4, 6, 8, ... seeds up to ``--max-seeds``: two seeds a round, one per
core; the looks are declared before the first seed runs, fixed by the cap alone), the experiment
is reproduced with that many seeds (the store keeps the earlier rounds' runs, so a round
computes only its new seeds), and every verdict record is decided again from the design's
interval instead of the 95 % t interval: at each of the K looks the t interval at level
1 − 0.05/K (Bonferroni alpha spending: coverage 95 % over every look at once), computed exactly
from the record's effect, 95 % t interval and seeds (which fix the values' mean and sum of
squared deviations), placed by :func:`qoslab.verdicts.core.decide` against the claim's declared
magnitude, and corrected by Holm's step-down procedure over the claim's readings using each
reading's p, ``min(1, K · p)`` at its best look so far (valid at any stopping time among the
declared looks). A record whose verdict the design decides (reproduces, weaker
than claimed, does not reproduce) keeps it, with the seeds and looks that decided it; "not
testable here" (the compared arms did not move the quantity) is judged again at every look and
the last look's stands; a record the cap is unlikely to decide stops for futility
(:func:`gives_up`); the rounds stop when every record is decided or stopped so, or at the cap.

Claims stop separately, and readings within a sweep. Each claim declares the sweeps its
records rest on (:data:`qoslab.reproduction.rests_on.RESTS_ON`), and where a record reads only
some of a sweep's points (one setting and w_q of rio-plus-o's Figs. 7-9, one figure's flow
count and differentiation of probe-marker's frontier, one ON/OFF time), which points
(:data:`qoslab.reproduction.rests_on.POINTS`, by the record's reading, claim and section). After
each look, a point on which every record resting on it is decided gets no more seeds: the next
looks plan it at the seeds it has (:func:`qoslab.reproduction.planning.planned`'s
``sweep_seeds`` for a whole sweep, ``point_seeds`` for single points) and find its runs in the
store, while the points of a record still undecided keep growing. A point no record names (one
only a figure reads) grows while its sweep has a point growing; a sweep no record rests on
grows until the experiment stops. An undecided record thus sees every point it reads at the
look's seeds, as if every sweep had grown, and is decided at the same look with the same
verdict; a decided record recomputed from fewer seeds keeps the verdict that decided it.
Paired tests pair by seed (:func:`qoslab.stats.paired` uses the seeds both sides have), and
the analyses compute their per-seed quantities per point group and seed, so points at
different seeds never mis-pair. A record that no declaration matches rests on every sweep.
The declarations are checked twice: by ``tests/test_sequential_claims*.py``, which reproduce
an experiment with each sweep alone, or one reading's points, at fewer seeds and finds only the
records declaring them moved (:mod:`qoslab.reproduction.dependence`), and at every look,
where a record whose points have all stopped must not move (a move is listed as a
contradicted declaration in the summary and the report).

While a look is analysed, the local pool computes a guess of the next look's runs (every sweep
growing now, at the next look's seeds: :class:`_Ahead`, :mod:`qoslab.runs.prefetch`); the next
look finds those it guessed right in the store. The results are the same without
(``compute_ahead=False``).

The fixed-seed mode (``--seeds N``) is unchanged; this one writes the same ``out/NAME/`` (its
tables and figures from each sweep's last seeds) with ``verdicts.json`` holding the sequential
records (``seeds`` and ``looks`` of the look that decided each, ``procedure``, ``rests_on``)
and a summary (``sequential``: the seeds each sweep stopped at, the distinct runs taken against
the all-or-nothing rule's), and a section on the procedure at the end of ``report.md``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from typing import Any

from qoslab.report.page import save_all
from qoslab.reproduction.base import Experiment, get
from qoslab.reproduction.remembered_plans import planned, remembered
from qoslab.reproduction.rests_on import POINTS, READING_SWEEPS, RESTS_ON, matches, reading_sweeps
from qoslab.reproduction.runner import Reproduction, reproduce
from qoslab.runs.local_pool import kept_workers
from qoslab.runs.prefetch import Guesses
from qoslab.sequential import (
    ALPHA,
    FUTILITY,
    FUTILITY_FROM,
    GroupSequential,
    futile,
    looks,
    summary_of_t,
)
from qoslab.store import RunKey
from qoslab.verdicts import DOES_NOT, INCONCLUSIVE, NOT_TESTABLE, REPRODUCES, WEAKER, decide, holm
from qoslab.verdicts.core import Magnitude, bar_of
from qoslab.verdicts.currency import seal
from qoslab.verdicts.intervals import sign_test_looks
from qoslab.verdicts.magnitudes import DECLARED, REGISTRY
from qoslab.verdicts.rules import decisive_boundary, judged, reason, testable

#: the first look: four seeds, the fewest from which a t interval at 1 − 0.05/K (3 degrees of
#: freedom) can clear a boundary by a useful margin
FIRST = 4
#: seeds per round: one per core of the machine this was written on
STEP = 2
#: The verdicts the group-sequential interval decides, frozen at the look that decides them.
DECIDED = (REPRODUCES, WEAKER, DOES_NOT)

Key = tuple[str, ...]


def record_key(r: dict[str, Any]) -> Key:
    return (r["claim"], r["section"], r.get("part", ""), r["reading"], r.get("borrowed_from", ""))


def _decl(decls: Sequence[Magnitude], r: dict[str, Any]) -> Magnitude | None:
    b = r.get("borrowed_from") or ""
    fits = [
        d
        for d in decls
        if d.section in r["section"]
        and ((d.borrow and b and d.borrow in b) or (not d.borrow and not b and d.match in r["claim"]))
    ]
    return fits[0] if len(fits) == 1 else None


def redecide(
    records: Sequence[dict[str, Any]],
    decls: Sequence[Magnitude],
    plan: Sequence[int],
    best_p: dict[Key, float],
    design: GroupSequential,
) -> list[dict[str, Any]]:
    """The records of one look (seeds ``plan[-1]``, looks taken ``plan``) decided from
    ``design``'s interval (see the module's text). ``best_p``: each record's smallest
    :meth:`GroupSequential.p` at its direction boundary over the looks so far (updated here)."""
    out: list[dict[str, Any]] = []
    for r0 in records:
        r = dict(r0)
        m = _decl(decls, r)
        n = int(r["seeds"])
        t_ci = r.get("t_ci95") or r["ci95"]
        ss = summary_of_t(r["effect"], t_ci, n) if r.get("effect") is not None else None
        if m is None or ss is None or r["test"] not in ("paired t", "one-sample t"):
            r["verdict"] = INCONCLUSIVE if r["verdict"] != NOT_TESTABLE else NOT_TESTABLE
            r["reason"] = "no group-sequential interval for this record (no t interval or no declaration)"
            r["ci95"] = [None, None]
            r["p_direction"] = r["p_holm"] = None
        else:
            h = design.half_width(n, ss)
            spent, shares = design.spent, len(design.plan)
            fit, p_at = judged(r, m, spent, (r["effect"] - h, r["effect"] + h))
            if fit.distribution_free and shares > 1:
                # the design's α over the looks the exact test can reach (sign_test_looks)
                shares = sign_test_looks(design.plan, ALPHA)
                spent = ALPHA / shares
                fit, p_at = judged(r, m, spent, (r["effect"] - h, r["effect"] + h))
            ci = (fit.low, fit.high)
            # testable from the claim's declared precondition on the record, as `finalise` and
            # the audit read it: never from the look's earlier verdict, which the 95 % t
            # interval gave (one interval may settle a sign against the claim that the design's
            # wider interval does not)
            ok, why = testable(r, m)
            v = decide(ci, m.direction, m.threshold, m.margin, m.bounds, ok)
            r["ci95"] = [c if math.isfinite(c) else None for c in ci]
            mu = decisive_boundary(v, r, m)
            k = (*record_key(r), f"{mu!r}")
            p_look = p_at(mu)
            look_p = 1.0 if p_look is None else min(1.0, shares * p_look)
            best_p[k] = min(best_p.get(k, 1.0), look_p)
            # the experiment wrote its t interval into `ours`; the verdict rests on this one
            shown = ", ".join(f"{c:.4g}" if math.isfinite(c) else ("-inf" if c < 0 else "inf") for c in ci)
            name = "group-sequential interval" if not fit.distribution_free else "sign-test interval"
            r["ours"] = f"{r.get('ours', '')}; {name} [{shown}]".lstrip("; ")
            at = f" at level {1 - spent:.4g}" if fit.distribution_free else ""
            r["interval"] = fit.method + at
            r["p_direction"] = best_p[k]
            r["p_holm"] = None
            r["verdict"] = v
            r["reason"] = why if v == NOT_TESTABLE else reason(v, m, r["ci95"], f"the {name}")
            if why and v != NOT_TESTABLE:
                r["reason"] += f" (although {why[0].lower()}{why[1:]})"
        sign = "sign-test interval" in str(r.get("interval", ""))
        r["test"] = f"group-sequential {'sign' if sign else 't'} test over the {r['test']}'s values"
        r["looks"] = list(plan)
        r["procedure"] = design.procedure
        out.append(r)
    _holm(out)
    return out


def gives_up(r: dict[str, Any], decls: Sequence[Magnitude], design: GroupSequential) -> bool:
    """Whether record ``r`` of a look (as the experiment wrote it: its 95 % t interval over
    ``r["seeds"]`` values), undecided by ``design``, is stopped for futility
    (:func:`qoslab.sequential.futile`), from the look at ``FUTILITY_FROM`` seeds on: a record
    with no interval (no t interval or no declaration) never gets one, so more seeds cannot
    decide it; a record whose claim's declared precondition is absent (``not testable here``)
    stops when the configuration decides the precondition (``precondition_fixed``) and is
    judged again at the next look when a further seed may meet it; a record whose interval is the sign
    test's (a discrete, grid or censored metric, or seeds that all gave one value) is never
    stopped early, since the t projection does not describe it; otherwise when the predictive
    probability that the cap's interval decides it is low."""
    cap = design.plan[-1]
    m = _decl(decls, r)
    n = int(r["seeds"])
    if n < FUTILITY_FROM or n >= cap:
        return False
    t_ci = r.get("t_ci95") or r["ci95"]
    ss = summary_of_t(r["effect"], t_ci, n) if r.get("effect") is not None else None
    if m is None or ss is None or r["test"] not in ("paired t", "one-sample t"):
        return True
    if r["verdict"] == NOT_TESTABLE:
        return m.precondition_fixed
    if m.kind != "continuous" or ss == 0.0:
        return False
    bar = bar_of(m.direction, m.threshold, m.margin)
    return futile(n, float(r["effect"]), ss, cap, (bar, m.low, m.high), design.half_width)


def _holm(out: list[dict[str, Any]]) -> None:
    fams: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for r in out:
        if r["verdict"] != NOT_TESTABLE and r["p_direction"] is not None:
            fams.setdefault((r["claim"], r["section"], r.get("part", "")), []).append(r)
    for fam in fams.values():
        for r, pa in zip(fam, holm([float(r["p_direction"]) for r in fam]), strict=True):
            r["p_holm"] = pa
            if r["verdict"] in (REPRODUCES, WEAKER, DOES_NOT) and pa >= ALPHA:
                r["reason"] = f"not significant after Holm's correction (adjusted p {pa:.2g})"
                r["verdict"] = INCONCLUSIVE


def rests_on(exp: str, decls: Sequence[Magnitude], r: dict[str, Any]) -> tuple[str, ...] | None:
    """The sweeps record ``r`` rests on (:data:`qoslab.reproduction.rests_on.RESTS_ON`, by its
    declaration's text, narrowed to its reading's by ``rests_on.reading_sweeps``); None for a record no
    declaration matches (it may read any sweep)."""
    m = _decl(decls, r)
    if m is None:
        return None
    # a plugin's claims (registered after RESTS_ON was derived) are read from the registry
    table = RESTS_ON.get(exp) or (REGISTRY.rests_on(exp) if exp in REGISTRY.studies else {})
    if m.match not in table:
        raise ValueError(
            f"experiment {exp}: claim {m.match!r} declares no sweeps it rests on (rests_on.RESTS_ON)"
        )
    reads = reading_sweeps(exp, r["reading"])
    if reads is None:
        return table[m.match]
    deps = tuple(s for s in table[m.match] if s in reads)
    if not deps and r["reading"] not in READING_SWEEPS.get(exp, {}):
        # a reading the map names only by the one it extends, reading other sweeps of its claim
        return table[m.match]
    if not deps:
        raise ValueError(
            f"experiment {exp}: reading {r['reading']!r} of claim {m.match!r} reads none of the "
            "claim's sweeps (rests_on.READING_SWEEPS)"
        )
    return deps


def plan_args(kw: dict[str, Any]) -> dict[str, Any]:
    return {k: kw[k] for k in ("quick", "flavour", "sender", "tcp_flavour", "timing") if k in kw}


#: ``planned``'s ``sweep_seeds`` and ``point_seeds``: where a look plans fewer seeds than its own
Reseeds = dict[str, Any]


def _plan_keys(exp: Experiment, seeds: int, reseeds: Reseeds, kw: dict[str, Any]) -> set[RunKey]:
    return {s.key for s in planned(exp, seeds=seeds, **reseeds, **plan_args(kw))[2]}


def _distinct_runs(exp: Experiment, seeds: int, reseeds: Reseeds, kw: dict[str, Any]) -> int:
    return len(_plan_keys(exp, seeds, reseeds, kw))


class Stopping:
    """Which points of which sweeps stop, look by look (see the module's text): a point stops
    once every record resting on it is decided (or stopped for futility), at the seeds of that
    look; a point no record's filters name (one only figures read) grows while any point of its
    sweep grows, and a sweep no record rests on grows with the experiment. A point stopped
    before grows again when a record first met later rests on it."""

    def __init__(self, exp: Experiment, kw: dict[str, Any]) -> None:
        self.exp = exp
        sweeps = planned(exp, seeds=FIRST, **plan_args(kw))[1]
        self.every = tuple(s.name for s in sweeps)
        self.params = {s.name: [dict(p) for p, _ in s.points] for s in sweeps}
        #: sweep → index of each stopped point → the seeds of the look it stopped at
        self.stopped: dict[str, dict[int, int]] = {s: {} for s in self.every}

    def deps(self, decls: Sequence[Magnitude], r: dict[str, Any]) -> dict[str, frozenset[int] | None]:
        """The points record ``r`` rests on, by sweep (None: the whole sweep): its sweeps
        (:func:`rests_on`), narrowed by :data:`qoslab.reproduction.rests_on.POINTS`."""
        sweeps = rests_on(self.exp.name, decls, r)
        if sweeps is None:
            return dict.fromkeys(self.every)
        points = POINTS.get(self.exp.name)
        narrow = points(r) if points is not None else {}
        outside = sorted(set(narrow) - set(sweeps))
        if outside:
            raise ValueError(
                f"experiment {self.exp.name}: rests_on.POINTS narrows sweep {outside[0]!r}, which "
                f"{r['claim'][:60]!r} does not rest on"
            )
        out: dict[str, frozenset[int] | None] = {}
        for s in sweeps:
            if s not in narrow:
                out[s] = None
                continue
            idx = frozenset(i for i, p in enumerate(self.params[s]) if matches(p, narrow[s]))
            if not idx:
                raise ValueError(
                    f"experiment {self.exp.name}: rests_on.POINTS gives {r['claim'][:60]!r} / "
                    f"{r['reading']!r} no point of sweep {s!r}"
                )
            out[s] = idx
        return out

    def update(
        self,
        k: int,
        growing: list[dict[str, frozenset[int] | None]],
        claimed: list[dict[str, frozenset[int] | None]],
    ) -> None:
        """After the look at ``k`` seeds: ``growing`` the points of the records still undecided,
        ``claimed`` those of every record."""
        for s in self.every:
            n = len(self.params[s])
            mine = [d[s] for d in claimed if s in d]
            grow_d = [d[s] for d in growing if s in d]
            # a sweep only tables and figures read grows with the experiment; one an undecided
            # record reads whole grows whole
            if not mine or any(g is None for g in grow_d):
                grows = set(range(n))
            else:
                grows = set().union(*(g for g in grow_d if g is not None))
                named = (
                    set().union(*(c for c in mine if c is not None))
                    if all(c is not None for c in mine)
                    else set(range(n))
                )
                if grows:  # a point no record names (only figures read it) grows with its sweep
                    grows |= set(range(n)) - named
            for i in range(n):
                if i in grows:
                    self.stopped[s].pop(i, None)
                else:
                    self.stopped[s].setdefault(i, k)

    def reseeds(self) -> Reseeds:
        """``planned``'s arguments for the points stopped so far: a sweep whose points all
        stopped at one look as ``sweep_seeds`` (the plan the per-sweep rule made), the others'
        stopped points as ``point_seeds``."""
        whole: dict[str, int] = {}
        points: dict[str, dict[int, int]] = {}
        for s, at in self.stopped.items():
            if len(at) == len(self.params[s]) and len(set(at.values())) == 1:
                whole[s] = next(iter(at.values()))
            elif at:
                points[s] = dict(at)
        return {"sweep_seeds": whole, **({"point_seeds": points} if points else {})}

    def settled(self, deps: dict[str, frozenset[int] | None]) -> bool:
        """Whether every point of ``deps`` has stopped."""
        return all(
            len(self.stopped[s]) == len(self.params[s]) if idx is None else idx <= set(self.stopped[s])
            for s, idx in deps.items()
        )

    def at_end(self, last: int) -> dict[str, dict[int, int]]:
        """The seeds each point ended at, by sweep (a point still growing: ``last``)."""
        return {s: {i: self.stopped[s].get(i, last) for i in range(len(self.params[s]))} for s in self.every}


class _Ahead(Guesses):
    """The next look's runs computed while this look is analysed (:mod:`qoslab.runs.prefetch`),
    guessed as the sweeps growing now at the next look's seeds: a sweep the analysis stops
    wastes the runs of it computed ahead, on cores the analysis left idle. Only with the local
    pool, on as many workers, niced below the analysis (:data:`qoslab.runs.prefetch.NICE`)."""

    def __init__(self, exp: Experiment, kw: dict[str, Any], enabled: bool) -> None:
        # a warm-up pilot plans other runs than the plan's
        super().__init__(kw.get("executor"), kw.get("store"), enabled and kw.get("warmup") is None)
        self.exp, self.kw = exp, kw

    def starter(self, seeds: int | None, reseeds: Reseeds, now: int) -> Callable[[], None] | None:
        if seeds is None or self.jobs < 1:
            return None

        def start() -> None:
            specs = planned(self.exp, seeds=seeds, **reseeds, **plan_args(self.kw))[2]
            have = _plan_keys(self.exp, now, reseeds, self.kw)
            self.launch([s for s in specs if s.key not in have])

        return start


def reproduce_sequential(
    name: str,
    *,
    max_seeds: int | None = None,
    per_claim: bool = True,
    futility: bool = True,
    compute_ahead: bool = True,
    when_decided: Callable[[], None] | None = None,
    **kw: Any,
) -> tuple[Reproduction, dict[str, Any]]:
    """Reproduces experiment ``name`` in rounds of seeds (see the module's text) up to
    ``max_seeds`` (default: the experiment's fixed number of seeds); ``kw`` as for
    :func:`qoslab.reproduction.runner.reproduce` (without ``seeds``). Returns the last round's
    reproduction and a summary: looks taken, seeds, records decided, the seeds each sweep
    stopped at and the runs it took against the all-or-nothing rule's. ``per_claim=False`` is
    that earlier rule (every sweep grows until every record is decided), kept to measure the
    saving; ``futility=False`` runs every undecided record to the cap (:func:`gives_up` never
    stops one). ``compute_ahead`` computes a guess of the next look's runs while a look is
    analysed (:class:`_Ahead`); the results are the same without. ``when_decided`` is called
    once, when no look can follow: the cap's look once its runs are stored (before its analysis),
    an earlier look once its analysis has decided every record, before its figures are saved
    (where ``reproduce all`` hands over to the next experiment: :mod:`qoslab.reproduction.handover`)."""

    exp = get(name)
    cap = max_seeds if max_seeds is not None else exp.seeds
    if cap < FIRST:
        raise ValueError(f"--max-seeds must be at least {FIRST} (the first look), got {cap}")
    design = GroupSequential(tuple(looks(FIRST, STEP, cap)))
    decls = DECLARED.get(exp.name, ())
    if not decls:
        raise ValueError(f"experiment {exp.name} declares no claim magnitudes: --sequential needs them")
    stop = Stopping(exp, kw)
    frozen: dict[Key, dict[str, Any]] = {}
    #: undecided records stopped for futility, and the seeds of the look that stopped each
    given_up: dict[Key, int] = {}
    best_p: dict[Key, float] = {}
    taken: list[int] = []
    settled: dict[Key, str] = {}
    errors: list[str] = []
    computed = 0
    rep: Reproduction | None = None
    current: list[dict[str, Any]] = []
    ahead = _Ahead(exp, kw, compute_ahead)
    handed: list[bool] = []  # the cap's look called when_decided (once its runs were stored)

    def handing() -> None:
        handed.append(True)
        if when_decided is not None:
            when_decided()

    # one pool of workers serves every look (and the runs computed ahead, niced, another); each
    # plan is made once
    with kept_workers(), remembered():
        try:
            for i, k in enumerate(design.plan):
                if rep is not None:
                    save_all(rep.deferred, keep=False)  # the next look rewrites the outputs
                # each look draws its figures but saves only the last look's: a later look overwrites
                # the earlier looks' outputs, so saving theirs (PNG and SVG) was wasted
                nxt = design.plan[i + 1] if i + 1 < len(design.plan) else None
                rep = reproduce(
                    exp,
                    seeds=k,
                    **stop.reseeds(),
                    defer_figures=True,
                    # the cap's look is the last: its runs stored, the hand-over starts (if any)
                    after_runs=ahead.starter(nxt, stop.reseeds(), k) if nxt is not None else handing,
                    **kw,
                )
                computed += rep.sweep.computed
                taken.append(k)
                path = rep.out / "verdicts.json"
                if not path.exists():
                    break
                doc = json.loads(path.read_text(encoding="utf-8"))
                current = redecide(doc["verdicts"], decls, taken, best_p, design)
                for r0, r in zip(doc["verdicts"], current, strict=True):
                    if futility and r["verdict"] not in DECIDED and gives_up(r0, decls, design):
                        given_up.setdefault(record_key(r), k)
                deps = [stop.deps(decls, r) for r in current]
                for r, d in zip(current, deps, strict=True):
                    r["rests_on"] = list(d)
                    narrowed = {s: len(idx) for s, idx in d.items() if idx is not None}
                    if narrowed:
                        r["rests_on_points"] = narrowed
                    if r["verdict"] in DECIDED and record_key(r) not in frozen:
                        frozen[record_key(r)] = r
                    errors += _check_settled(r, stop.settled(d), settled)
                # "not testable here" is no decision of the design: whether the arms moved the quantity
                # more than its interval's half-width is judged again at every look (the half-width
                # shrinks with seeds: at 4 a quantity may not have moved yet that moves at 20), and the
                # last look's judgement stands
                if all(record_key(r) in frozen or record_key(r) in given_up for r in current):
                    break
                done = frozen.keys() | given_up.keys()
                undecided = [d for r, d in zip(current, deps, strict=True) if record_key(r) not in done]
                stop.update(k, undecided if per_claim else [dict.fromkeys(stop.every)], deps)
                ahead.stop()
        finally:
            ahead.stop()
    assert rep is not None
    if when_decided is not None and not handed:
        when_decided()  # decided before the cap
    save_all(rep.deferred)
    final = [frozen.get(record_key(r), r) for r in current]
    for r in final:
        if record_key(r) in given_up and r["verdict"] not in DECIDED:
            r["futility"] = given_up[record_key(r)]
            r["reason"] = f"{r['reason']}; stopped for futility at {given_up[record_key(r)]} seeds"
    ends = stop.at_end(taken[-1])
    summary = {
        "procedure": design.procedure,
        "futility": FUTILITY if futility else "none: every undecided record runs to the cap",
        "stopped_for_futility": sum("futility" in r for r in final),
        "stopping": "per claim: a sweep stops once every claim resting on it is decided"
        if per_claim
        else "all or nothing: every sweep runs until every claim is decided",
        "looks": taken,
        "max_seeds": cap,
        "seeds": taken[-1],
        "decided": sum(r["verdict"] != INCONCLUSIVE for r in final),
        "records": len(final),
        "critical_t": {str(n): design.critical(n) for n in design.plan},
        "sweeps_stopped_at": {s: max(at.values(), default=taken[-1]) for s, at in ends.items()},
        "points_at_seeds": {
            s: {str(n): list(at.values()).count(n) for n in sorted(set(at.values()))}
            for s, at in ends.items()
            if len(set(at.values())) > 1
        },
        "runs": _distinct_runs(exp, taken[-1], stop.reseeds(), kw),
        "runs_all_or_nothing": _distinct_runs(exp, taken[-1], {}, kw),
        "runs_computed_now": computed,
        "runs_computed_ahead": len(ahead.computed),
        "runs_computed_ahead_unused": len(ahead.computed - _plan_keys(exp, taken[-1], stop.reseeds(), kw)),
        **({"computing_ahead_failed": ahead.errors} if ahead.errors else {}),
        "declaration_errors": errors,
    }
    _write_sequential(rep, summary, final, max_seeds)
    return rep, summary


def _write_sequential(
    rep: Reproduction, summary: dict[str, Any], final: list[dict[str, Any]], max_seeds: int | None
) -> None:
    """The sequential records and summary into the last look's ``verdicts.json``, and the
    procedure's section at the end of its report."""
    path = rep.out / "verdicts.json"
    if path.exists():
        doc = json.loads(path.read_text(encoding="utf-8"))
        # the command that reproduces this file: the sequential one (the inner looks' is not)
        command = str(doc.get("command", "")).split(" --seeds")[0] + " --sequential"
        command += f" --max-seeds {max_seeds}" if max_seeds is not None else ""
        doc.update(
            command=command, sequential=summary, decided=f"sequential: {summary['procedure']}", verdicts=final
        )
        path.write_text(json.dumps(seal(doc), indent=2, ensure_ascii=False) + "\n")
        with rep.report.open("a", encoding="utf-8") as f:
            f.write(_report_section(summary, final))


def _check_settled(r: dict[str, Any], stopped: bool, settled: dict[Key, str]) -> list[str]:
    """A record all of whose points have ``stopped`` is computed from the same runs at every
    later look: if its effect, interval or seeds move, it reads a sweep or point it does not
    declare (which could then have stopped under an undecided claim). Returns that as an error
    line."""
    if not r["rests_on"] or not stopped:
        return []
    # as text: a NaN effect equals itself
    seen = json.dumps([r.get("effect"), r.get("ci95"), r.get("seeds")])
    before = settled.setdefault(record_key(r), seen)
    if before == seen:
        return []
    return [f"{r['claim'][:60]} / {r['reading']}: moved after its points in {r['rests_on']} stopped"]


def _report_section(summary: dict[str, Any], final: Sequence[dict[str, Any]]) -> str:
    at = summary["sweeps_stopped_at"]
    per_claim = summary["stopping"].startswith("per claim")
    lines = [
        "",
        "## Sequential verdicts",
        "",
        f"Seeds in rounds, looks at {', '.join(map(str, summary['looks']))} seeds (cap "
        f"{summary['max_seeds']}); each verdict from a {summary['procedure']}, so a verdict "
        "reached at any look holds at 95 %. "
        + (
            "Claims stop separately, and readings within a sweep: after each look, a point on "
            "which every record resting on it is decided gets no more seeds; the points of a "
            "record still undecided keep growing, and so do a sweep's points no record names while "
            "the sweep has a point growing, and the sweeps no claim rests on (their figures get "
            "the experiment's last look). "
            if per_claim
            else "Every sweep grew until every claim was decided (the all-or-nothing rule). "
        )
        + "The tables and figures above are from the seeds of the look each sweep stopped at "
        + "(by the sweep's own rule: see its seeds under Sweeps): "
        + ", ".join(f"`{s}` {n}" for s, n in at.items())
        + "".join(
            f"; `{s}`'s points at " + ", ".join(f"{c} at {n}" for n, c in by.items())
            for s, by in summary.get("points_at_seeds", {}).items()
        )
        + f". Futility: {summary['futility']}; {summary['stopped_for_futility']} records stopped so "
        "(each marked with the seeds of the look that stopped it; a record whose sweeps grew on for "
        "another claim is judged again, and kept if the interval then decides it)"
        + f". Runs: {summary['runs']} distinct, against "
        f"{summary['runs_all_or_nothing']} had every sweep run to the last look "
        f"({summary['runs_computed_now']} computed by this invocation, the rest found in the store). "
        "The verdicts below replace the fixed-seed ones in `verdicts.json`; `seeds` is the seeds "
        "of the look that decided each (or of the last look), `rests on` the sweeps it reads.",
        *(
            ["", "**Declarations contradicted** (a record moved after its points stopped):"]
            + [f"- {e}" for e in summary["declaration_errors"]]
            if summary["declaration_errors"]
            else []
        ),
        "",
        "| claim | reading | verdict | seeds | interval | rests on |",
        "|---|---|---|---|---|---|",
    ]
    for r in final:
        lo, hi = r["ci95"]
        ci = "unbounded" if lo is None or hi is None else f"[{lo:.4g}, {hi:.4g}]"
        sw = ", ".join(r.get("rests_on", []))
        lines.append(f"| {r['claim'][:60]} | {r['reading']} | {r['verdict']} | {r['seeds']} | {ci} | {sw} |")
    return "\n".join(lines) + "\n"
