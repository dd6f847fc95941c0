"""``qoslab reproduce NAME --sequential``: seeds in rounds, each claim decided once its
confidence sequence (:mod:`qoslab.sequential`) clears a boundary, or at the cap.

Round by round (looks at 4, 6, 8, ... seeds up to ``--max-seeds``: two seeds a round, one per
core; the sequence is the whole line below four seeds), the experiment is reproduced with that
many seeds (the store keeps the earlier rounds' runs, so a round computes only its new seeds),
and every verdict record is decided again from the sequence's interval instead of the t
interval: the sequence is computed exactly from the record's effect, 95 % t interval and seeds
(which fix the values' mean and sum of squared deviations), placed by
:func:`qoslab.verdicts.core.decide` against the claim's declared magnitude, and corrected by
Holm's step-down procedure over the claim's readings using each reading's anytime-valid p
(valid at any stopping time). A record whose verdict the sequence decides (reproduces, weaker
than claimed, does not reproduce) keeps it, with the seeds and looks that decided it; "not
testable here" (the compared arms did not move the quantity) is judged again at every look and
the last look's stands; the rounds stop when the sequence has decided every record, or at
the cap. The runs are shared by the claims of an experiment, so
they stop only when every claim is decided.

The fixed-seed mode (``--seeds N``) is unchanged; this one writes the same ``out/NAME/`` (its
tables and figures from the last round's seeds) with ``verdicts.json`` holding the sequential
records (``looks``, ``procedure``) and a section on the procedure at the end of
``report.md``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from qoslab.experiments.magnitudes import DECLARED
from qoslab.experiments.runner import Reproduction, reproduce
from qoslab.sequential import (
    ALPHA,
    PROCEDURE,
    boundary_ratio,
    half_width,
    looks,
    mixture_ratio_of,
    summary_of_t,
)
from qoslab.verdicts import DOES_NOT, INCONCLUSIVE, NOT_TESTABLE, REPRODUCES, WEAKER, decide, holm
from qoslab.verdicts.core import Magnitude, bar_of

#: the first look: the sequence (c = 0.5, α = 0.05) is finite from four seeds on
FIRST = 4
#: seeds per round: one per core of the machine this was written on
STEP = 2
#: The verdicts the confidence sequence decides, frozen at the look that decides them.
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
    best_m: dict[Key, float],
) -> list[dict[str, Any]]:
    """The records of one look (seeds ``plan[-1]``, looks ``plan``) decided from the confidence
    sequence (see the module's text). ``best_m``: each record's largest mixture ratio at its
    direction boundary over the looks so far (updated here), for its anytime-valid p."""
    out: list[dict[str, Any]] = []
    for r0 in records:
        r = dict(r0)
        m = _decl(decls, r)
        n = int(r["seeds"])
        ss = summary_of_t(r["effect"], r["ci95"], n) if r.get("effect") is not None else None
        if m is None or ss is None or r["test"] not in ("paired t", "one-sample t"):
            r["verdict"] = INCONCLUSIVE if r["verdict"] != NOT_TESTABLE else NOT_TESTABLE
            r["reason"] = "no confidence sequence for this record (no t interval or no declaration)"
            r["ci95"] = [None, None]
            r["p_direction"] = r["p_holm"] = None
        else:
            h = half_width(n, ss)
            ci = (r["effect"] - h, r["effect"] + h)
            bar = bar_of(m.direction, m.threshold, m.margin)
            k = _key(r)
            best_m[k] = max(best_m.get(k, 1.0), mixture_ratio_of(n, r["effect"], ss, bar))
            v = decide(ci, m.direction, m.threshold, m.margin, m.bounds, r["verdict"] != NOT_TESTABLE)
            r["ci95"] = [c if math.isfinite(c) else None for c in ci]
            # the experiment wrote its t interval into `ours`; the verdict rests on this one
            shown = ", ".join(f"{c:.4g}" if math.isfinite(c) else ("-inf" if c < 0 else "inf") for c in ci)
            r["ours"] = f"{r.get('ours', '')}; confidence sequence [{shown}]".lstrip("; ")
            r["p_direction"] = min(1.0, 1.0 / best_m[k])
            r["p_holm"] = None
            r["verdict"] = v
            if v != NOT_TESTABLE:
                r["reason"] = _reason(v, bar, m)
        r["test"] = f"confidence sequence over the {r['test']}'s values"
        r["looks"] = list(plan)
        r["procedure"] = PROCEDURE
        out.append(r)
    _holm(out)
    return out


def _reason(v: str, bar: float, m: Magnitude) -> str:
    rng = f"[{m.low:g}, {m.high:g}]"
    if v == REPRODUCES:
        return f"the confidence sequence lies inside the paper's magnitude {rng}"
    if v == WEAKER:
        return f"the direction holds but the confidence sequence excludes the paper's magnitude {rng}"
    if v == DOES_NOT:
        return f"the confidence sequence lies entirely on the other side of {bar:g}"
    return (
        f"the confidence sequence straddles a boundary ({bar:g} for the direction, {rng} for the magnitude)"
    )


def _holm(out: list[dict[str, Any]]) -> None:
    fams: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for r in out:
        if r["verdict"] != NOT_TESTABLE and r["p_direction"] is not None:
            fams.setdefault((r["claim"], r["section"], r.get("part", "")), []).append(r)
    for fam in fams.values():
        for r, pa in zip(fam, holm([float(r["p_direction"]) for r in fam]), strict=True):
            r["p_holm"] = pa
            if r["verdict"] in (REPRODUCES, WEAKER, DOES_NOT) and pa >= ALPHA:
                r["reason"] = f"not significant after Holm's correction (adjusted anytime p {pa:.2g})"
                r["verdict"] = INCONCLUSIVE


def reproduce_sequential(
    name: str, *, max_seeds: int | None = None, **kw: Any
) -> tuple[Reproduction, dict[str, Any]]:
    """Reproduces experiment ``name`` in rounds of seeds (see the module's text) up to
    ``max_seeds`` (default: the experiment's fixed number of seeds); ``kw`` as for
    :func:`qoslab.experiments.runner.reproduce` (without ``seeds``). Returns the last round's
    reproduction and a summary: looks taken, seeds, records decided per look."""
    from qoslab.experiments.base import get

    exp = get(name)
    cap = max_seeds if max_seeds is not None else exp.seeds
    if cap < FIRST:
        raise ValueError(f"--max-seeds must be at least {FIRST} (the sequence is unbounded below), got {cap}")
    plan = looks(FIRST, STEP, cap)
    decls = DECLARED.get(exp.name, ())
    if not decls:
        raise ValueError(f"experiment {exp.name} declares no claim magnitudes: --sequential needs them")
    frozen: dict[Key, dict[str, Any]] = {}
    best_m: dict[Key, float] = {}
    taken: list[int] = []
    rep: Reproduction | None = None
    current: list[dict[str, Any]] = []
    for k in plan:
        rep = reproduce(exp, seeds=k, **kw)
        taken.append(k)
        path = rep.out / "verdicts.json"
        if not path.exists():
            break
        doc = json.loads(path.read_text(encoding="utf-8"))
        current = redecide(doc["verdicts"], decls, taken, best_m)
        for r in current:
            if r["verdict"] in DECIDED and _key(r) not in frozen:
                frozen[_key(r)] = r
        # "not testable here" is no decision of the sequence: whether the arms moved the quantity
        # more than its interval's half-width is judged again at every look (the half-width
        # shrinks with seeds: at 4 a quantity may not have moved yet that moves at 20), and the
        # last look's judgement stands
        if all(_key(r) in frozen for r in current):
            break
    assert rep is not None
    final = [frozen.get(_key(r), r) for r in current]
    summary = {
        "procedure": PROCEDURE,
        "looks": taken,
        "max_seeds": cap,
        "seeds": taken[-1],
        "decided": sum(r["verdict"] != INCONCLUSIVE for r in final),
        "records": len(final),
        "boundary_ratio_at_cap": boundary_ratio(cap),
    }
    path = rep.out / "verdicts.json"
    if path.exists():
        doc = json.loads(path.read_text(encoding="utf-8"))
        # the command that reproduces this file: the sequential one (the inner looks' is not)
        command = str(doc.get("command", "")).split(" --seeds")[0] + " --sequential"
        command += f" --max-seeds {max_seeds}" if max_seeds is not None else ""
        doc.update(command=command, sequential=summary, decided=f"sequential: {PROCEDURE}", verdicts=final)
        path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
        with rep.report.open("a", encoding="utf-8") as f:
            f.write(_report_section(summary, final))
    return rep, summary


def _report_section(summary: dict[str, Any], final: Sequence[dict[str, Any]]) -> str:
    lines = [
        "",
        "## Sequential verdicts",
        "",
        f"Seeds in rounds, looks at {', '.join(map(str, summary['looks']))} seeds (cap "
        f"{summary['max_seeds']}); each verdict from a {summary['procedure']}, so a verdict "
        "reached at any look holds at 95 %. The tables and figures above are from the last "
        "round's seeds; the verdicts below replace the fixed-seed ones in `verdicts.json`.",
        "",
        "| claim | reading | verdict | seeds | interval |",
        "|---|---|---|---|---|",
    ]
    for r in final:
        lo, hi = r["ci95"]
        ci = "unbounded" if lo is None or hi is None else f"[{lo:.4g}, {hi:.4g}]"
        lines.append(f"| {r['claim'][:60]} | {r['reading']} | {r['verdict']} | {r['seeds']} | {ci} |")
    return "\n".join(lines) + "\n"
