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

Claims stop separately. Each claim declares the sweeps its records rest on
(:data:`qoslab.experiments.rests_on.RESTS_ON`); after each look, a sweep on which every
record resting on it is decided gets no more seeds (a sweep no record rests on, which only
tables and figures read, grows until the experiment stops): the next looks plan it at the seeds it has
(:func:`qoslab.experiments.planning.planned`'s ``sweep_seeds``) and find its runs in the store,
while the sweeps of a claim still undecided keep growing. An undecided record thus sees every
sweep it reads at the look's seeds, as if every sweep had grown, and is decided at the same
look with the same verdict; a decided record recomputed from fewer seeds keeps the verdict
that decided it. Paired tests pair by seed (:func:`qoslab.stats.paired` uses the seeds both
sides have), so sweeps at different seeds never mis-pair. A record that no declaration
matches rests on every sweep. The declarations are checked twice: by
``tests/test_sequential_claims.py``, which reproduces an experiment with each sweep alone at
fewer seeds and finds only the records declaring it moved (:func:`sweep_dependence`,
:func:`undeclared`), and at every look, where a record whose sweeps have all stopped must not
move (a move is listed as a contradicted declaration in the summary and the report).

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

from qoslab.experiments.base import Experiment
from qoslab.experiments.magnitudes import DECLARED
from qoslab.experiments.remembered_plans import planned, remembered
from qoslab.experiments.rests_on import READING_SWEEPS, RESTS_ON
from qoslab.experiments.runner import Reproduction, reproduce
from qoslab.report.page import save_all
from qoslab.runs.local_pool import kept_workers
from qoslab.runs.prefetch import Guesses
from qoslab.sequential import (
    ALPHA,
    FUTILITY,
    FUTILITY_FROM,
    FUTILITY_SPREAD_LEVEL,
    GroupSequential,
    chi2_ppf,
    futile,
    looks,
    summary_of_t,
)
from qoslab.stats import t_ppf
from qoslab.store import RunKey
from qoslab.verdicts import DOES_NOT, INCONCLUSIVE, NOT_TESTABLE, REPRODUCES, WEAKER, decide, holm
from qoslab.verdicts.core import Magnitude, bar_of

#: the first look: four seeds, the fewest from which a t interval at 1 − 0.05/K (3 degrees of
#: freedom) can clear a boundary by a useful margin
FIRST = 4
#: seeds per round: one per core of the machine this was written on
STEP = 2
#: The verdicts the group-sequential interval decides, frozen at the look that decides them.
DECIDED = (REPRODUCES, WEAKER, DOES_NOT)

Key = tuple[str, str, str, str, str]


def _key(r: dict[str, Any]) -> Key:
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
        ss = summary_of_t(r["effect"], r["ci95"], n) if r.get("effect") is not None else None
        if m is None or ss is None or r["test"] not in ("paired t", "one-sample t"):
            r["verdict"] = INCONCLUSIVE if r["verdict"] != NOT_TESTABLE else NOT_TESTABLE
            r["reason"] = "no group-sequential interval for this record (no t interval or no declaration)"
            r["ci95"] = [None, None]
            r["p_direction"] = r["p_holm"] = None
        else:
            h = design.half_width(n, ss)
            ci = (r["effect"] - h, r["effect"] + h)
            bar = bar_of(m.direction, m.threshold, m.margin)
            k = _key(r)
            best_p[k] = min(best_p.get(k, 1.0), design.p(n, r["effect"], ss, bar))
            v = decide(ci, m.direction, m.threshold, m.margin, m.bounds, r["verdict"] != NOT_TESTABLE)
            r["ci95"] = [c if math.isfinite(c) else None for c in ci]
            # the experiment wrote its t interval into `ours`; the verdict rests on this one
            shown = ", ".join(f"{c:.4g}" if math.isfinite(c) else ("-inf" if c < 0 else "inf") for c in ci)
            r["ours"] = f"{r.get('ours', '')}; group-sequential interval [{shown}]".lstrip("; ")
            r["p_direction"] = best_p[k]
            r["p_holm"] = None
            r["verdict"] = v
            if v != NOT_TESTABLE:
                r["reason"] = _reason(v, bar, m)
        r["test"] = f"group-sequential t over the {r['test']}'s values"
        r["looks"] = list(plan)
        r["procedure"] = design.procedure
        out.append(r)
    _holm(out)
    return out


def _reason(v: str, bar: float, m: Magnitude) -> str:
    rng = f"[{m.low:g}, {m.high:g}]"
    if v == REPRODUCES:
        return f"the group-sequential interval lies inside the paper's magnitude {rng}"
    if v == WEAKER:
        return f"the direction holds but the group-sequential interval excludes the paper's magnitude {rng}"
    if v == DOES_NOT:
        return f"the group-sequential interval lies entirely on the other side of {bar:g}"
    return (
        f"the group-sequential interval straddles a boundary ({bar:g} for the direction, {rng} for the "
        "magnitude)"
    )


def gives_up(r: dict[str, Any], decls: Sequence[Magnitude], design: GroupSequential) -> bool:
    """Whether record ``r`` of a look (as the experiment wrote it: its 95 % t interval over
    ``r["seeds"]`` values), undecided by ``design``, is stopped for futility
    (:func:`qoslab.sequential.futile`), from the look at ``FUTILITY_FROM`` seeds on: a record
    with no interval (no t interval or no declaration) never gets one, so more seeds cannot
    decide it; "not testable here" with a
    measured movement (``moves``) stays so at the cap when that movement is within the
    resolution or the cap's t half-width (the spread at its optimistic lower bound, as for the
    width), and without one (arms identical in every seed, a zero-width interval) when the
    values have no spread; otherwise when the predictive probability that the cap's interval
    decides it is low."""
    cap = design.plan[-1]
    m = _decl(decls, r)
    n = int(r["seeds"])
    if n < FUTILITY_FROM or n >= cap:
        return False
    ss = summary_of_t(r["effect"], r["ci95"], n) if r.get("effect") is not None else None
    if m is None or ss is None or r["test"] not in ("paired t", "one-sample t"):
        return True
    if r["verdict"] == NOT_TESTABLE:
        moves = r.get("moves")
        if moves is None:
            # the compared arms gave the same value in every seed so far (a zero-width interval:
            # the rules' other "not testable" finding): with no spread, the cap's seeds are
            # predicted the same, so more cannot make the reading testable
            return ss == 0.0
        sd = math.sqrt(ss / chi2_ppf(FUTILITY_SPREAD_LEVEL, n - 1))
        half_cap = t_ppf(1.0 - ALPHA / 2.0, cap - 1) * sd / math.sqrt(cap)
        if moves <= max(m.resolution, half_cap):
            return True
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
    """The sweeps record ``r`` rests on (:data:`qoslab.experiments.rests_on.RESTS_ON`, by its
    declaration's text, narrowed to its reading's by ``READING_SWEEPS``); None for a record no
    declaration matches (it may read any sweep)."""
    m = _decl(decls, r)
    if m is None:
        return None
    table = RESTS_ON.get(exp, {})
    if m.match not in table:
        raise ValueError(
            f"experiment {exp}: claim {m.match!r} declares no sweeps it rests on (rests_on.RESTS_ON)"
        )
    reads = READING_SWEEPS.get(exp, {}).get(r["reading"])
    if reads is None:
        return table[m.match]
    deps = tuple(s for s in table[m.match] if s in reads)
    if not deps:
        raise ValueError(
            f"experiment {exp}: reading {r['reading']!r} of claim {m.match!r} reads none of the "
            "claim's sweeps (rests_on.READING_SWEEPS)"
        )
    return deps


def _plan_args(kw: dict[str, Any]) -> dict[str, Any]:
    return {k: kw[k] for k in ("quick", "flavour", "sender", "tcp_flavour") if k in kw}


def _plan_keys(exp: Experiment, seeds: int, sweep_seeds: dict[str, int], kw: dict[str, Any]) -> set[RunKey]:
    return {s.key for s in planned(exp, seeds=seeds, sweep_seeds=sweep_seeds, **_plan_args(kw))[2]}


def _distinct_runs(exp: Experiment, seeds: int, sweep_seeds: dict[str, int], kw: dict[str, Any]) -> int:
    return len(_plan_keys(exp, seeds, sweep_seeds, kw))


class _Ahead(Guesses):
    """The next look's runs computed while this look is analysed (:mod:`qoslab.runs.prefetch`),
    guessed as the sweeps growing now at the next look's seeds: a sweep the analysis stops
    wastes the runs of it computed ahead, on cores the analysis left idle. Only with the local
    pool, on as many workers, niced below the analysis (:data:`qoslab.runs.prefetch.NICE`)."""

    def __init__(self, exp: Experiment, kw: dict[str, Any], enabled: bool) -> None:
        # a warm-up pilot plans other runs than the plan's
        super().__init__(kw.get("executor"), kw.get("store"), enabled and kw.get("warmup") is None)
        self.exp, self.kw = exp, kw

    def starter(self, seeds: int | None, sweep_seeds: dict[str, int], now: int) -> Callable[[], None] | None:
        if seeds is None or self.jobs < 1:
            return None

        def start() -> None:
            specs = planned(self.exp, seeds=seeds, sweep_seeds=sweep_seeds, **_plan_args(self.kw))[2]
            have = _plan_keys(self.exp, now, sweep_seeds, self.kw)
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
    :func:`qoslab.experiments.runner.reproduce` (without ``seeds``). Returns the last round's
    reproduction and a summary: looks taken, seeds, records decided, the seeds each sweep
    stopped at and the runs it took against the all-or-nothing rule's. ``per_claim=False`` is
    that earlier rule (every sweep grows until every record is decided), kept to measure the
    saving; ``futility=False`` runs every undecided record to the cap (:func:`gives_up` never
    stops one). ``compute_ahead`` computes a guess of the next look's runs while a look is
    analysed (:class:`_Ahead`); the results are the same without. ``when_decided`` is called
    once, when no look can follow: the cap's look once its runs are stored (before its analysis),
    an earlier look once its analysis has decided every record, before its figures are saved
    (where ``reproduce all`` hands over to the next experiment: :mod:`qoslab.experiments.handover`)."""
    from qoslab.experiments.base import get

    exp = get(name)
    cap = max_seeds if max_seeds is not None else exp.seeds
    if cap < FIRST:
        raise ValueError(f"--max-seeds must be at least {FIRST} (the first look), got {cap}")
    design = GroupSequential(tuple(looks(FIRST, STEP, cap)))
    decls = DECLARED.get(exp.name, ())
    if not decls:
        raise ValueError(f"experiment {exp.name} declares no claim magnitudes: --sequential needs them")
    every = tuple(s.name for s in planned(exp, seeds=FIRST, **_plan_args(kw))[1])
    frozen: dict[Key, dict[str, Any]] = {}
    #: undecided records stopped for futility, and the seeds of the look that stopped each
    given_up: dict[Key, int] = {}
    best_p: dict[Key, float] = {}
    taken: list[int] = []
    #: sweeps no undecided record rests on, and the seeds they stopped at
    stopped: dict[str, int] = {}
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
                    sweep_seeds=dict(stopped),
                    defer_figures=True,
                    # the cap's look is the last: its runs stored, the hand-over starts (if any)
                    after_runs=ahead.starter(nxt, dict(stopped), k) if nxt is not None else handing,
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
                        given_up.setdefault(_key(r), k)
                for r in current:
                    deps = rests_on(exp.name, decls, r)
                    r["rests_on"] = list(every if deps is None else deps)
                    if r["verdict"] in DECIDED and _key(r) not in frozen:
                        frozen[_key(r)] = r
                    errors += _check_settled(r, stopped, settled)
                # "not testable here" is no decision of the design: whether the arms moved the quantity
                # more than its interval's half-width is judged again at every look (the half-width
                # shrinks with seeds: at 4 a quantity may not have moved yet that moves at 20), and the
                # last look's judgement stands
                if all(_key(r) in frozen or _key(r) in given_up for r in current):
                    break
                # a sweep no claim rests on (one only tables and figures read) grows with the experiment,
                # so that its figures get the seeds they had under the all-or-nothing rule
                claimed = {s for r in current for s in r["rests_on"]}
                growing = (
                    {
                        s
                        for r in current
                        if _key(r) not in frozen and _key(r) not in given_up
                        for s in r["rests_on"]
                    }
                    | (set(every) - claimed)
                    if per_claim
                    else set(every)
                )
                for s in every:
                    if s not in growing:
                        stopped.setdefault(s, k)
                    else:
                        # a record first met at this look may rest on a sweep stopped before: it grows again
                        stopped.pop(s, None)
                ahead.stop()
        finally:
            ahead.stop()
    assert rep is not None
    if when_decided is not None and not handed:
        when_decided()  # decided before the cap
    save_all(rep.deferred)
    final = [frozen.get(_key(r), r) for r in current]
    for r in final:
        if _key(r) in given_up and r["verdict"] not in DECIDED:
            r["futility"] = given_up[_key(r)]
            r["reason"] = f"{r['reason']}; stopped for futility at {given_up[_key(r)]} seeds"
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
        "sweeps_stopped_at": {s: stopped.get(s, taken[-1]) for s in every},
        "runs": _distinct_runs(exp, taken[-1], stopped, kw),
        "runs_all_or_nothing": _distinct_runs(exp, taken[-1], {}, kw),
        "runs_computed_now": computed,
        "runs_computed_ahead": len(ahead.computed),
        "runs_computed_ahead_unused": len(ahead.computed - _plan_keys(exp, taken[-1], stopped, kw)),
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
        path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
        with rep.report.open("a", encoding="utf-8") as f:
            f.write(_report_section(summary, final))


def _check_settled(r: dict[str, Any], stopped: dict[str, int], settled: dict[Key, str]) -> list[str]:
    """A record all of whose sweeps have stopped is computed from the same runs at every later
    look: if its effect, interval or seeds move, it reads a sweep it does not declare (which
    could then have stopped under an undecided claim). Returns that as an error line."""
    if not r["rests_on"] or not all(s in stopped for s in r["rests_on"]):
        return []
    # as text: a NaN effect equals itself
    seen = json.dumps([r.get("effect"), r.get("ci95"), r.get("seeds")])
    before = settled.setdefault(_key(r), seen)
    if before == seen:
        return []
    return [f"{r['claim'][:60]} / {r['reading']}: moved after its sweeps {r['rests_on']} stopped"]


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
            "Claims stop separately: after each look, a sweep on which every claim resting on it "
            "is decided gets no more seeds; the sweeps of a claim still undecided keep growing, "
            "and so do those no claim rests on (their figures get the experiment's last look). "
            if per_claim
            else "Every sweep grew until every claim was decided (the all-or-nothing rule). "
        )
        + "The tables and figures above are from the seeds of the look each sweep stopped at "
        + "(by the sweep's own rule: see its seeds under Sweeps): "
        + ", ".join(f"`{s}` {n}" for s, n in at.items())
        + f". Futility: {summary['futility']}; {summary['stopped_for_futility']} records stopped so "
        "(each marked with the seeds of the look that stopped it; a record whose sweeps grew on for "
        "another claim is judged again, and kept if the interval then decides it)"
        + f". Runs: {summary['runs']} distinct, against "
        f"{summary['runs_all_or_nothing']} had every sweep run to the last look "
        f"({summary['runs_computed_now']} computed by this invocation, the rest found in the store). "
        "The verdicts below replace the fixed-seed ones in `verdicts.json`; `seeds` is the seeds "
        "of the look that decided each (or of the last look), `rests on` the sweeps it reads.",
        *(
            ["", "**Declarations contradicted** (a record moved after its sweeps stopped):"]
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


def _readings(rep: Reproduction) -> dict[Key, str]:
    doc = json.loads((rep.out / "verdicts.json").read_text(encoding="utf-8"))
    # as text: a NaN effect equals itself
    return {_key(r): json.dumps([r.get("effect"), r.get("ci95"), r.get("seeds")]) for r in doc["verdicts"]}


def sweep_dependence(
    name: str, *, seeds: int, fewer: int, only: Sequence[str] | None = None, **kw: Any
) -> dict[str, dict[Key, bool]]:
    """Which records each sweep of experiment ``name`` moves: the experiment reproduced (fixed
    seeds, ``kw`` as for :func:`qoslab.experiments.runner.reproduce`) with every sweep at
    ``seeds``, then once per sweep with that sweep alone at ``fewer``; for each sweep, every
    record and whether its effect, interval or seeds differ from the first reproduction's. A
    record the sweep moves rests on it (:func:`undeclared` compares with the declarations).
    ``only``: those sweeps alone."""
    from qoslab.experiments.base import get

    exp = get(name)
    base = _readings(reproduce(exp, seeds=seeds, **kw))
    names = [s.name for s in planned(exp, seeds=seeds, **_plan_args(kw))[1] if only is None or s.name in only]
    out: dict[str, dict[Key, bool]] = {}
    for s in names:
        got = _readings(reproduce(exp, seeds=seeds, sweep_seeds={s: fewer}, **kw))
        out[s] = {k: got.get(k) != v for k, v in base.items()}
    return out


def undeclared(name: str, moved: dict[str, dict[Key, bool]]) -> list[str]:
    """The records of ``moved`` (:func:`sweep_dependence`) that a sweep moved although their
    claim does not declare it in :data:`qoslab.experiments.rests_on.RESTS_ON`: each an
    under-declaration that would let ``--sequential`` stop a sweep an undecided claim reads."""
    decls = DECLARED.get(name, ())
    out = []
    for s, recs in moved.items():
        for k, changed in recs.items():
            r = {"claim": k[0], "section": k[1], "part": k[2], "reading": k[3], "borrowed_from": k[4]}
            deps = rests_on(name, decls, r)
            if changed and deps is not None and s not in deps:
                out.append(f"{name}: sweep {s} moves {k[0][:50]!r} / {k[3]!r}, which does not declare it")
    return out
