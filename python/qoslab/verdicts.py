"""Machine-readable verdicts: one record per claim of a paper and per reading of it.

An experiment's ``analyse`` adds :class:`Verdict` records through ``Context.verdict``; the
runner writes them to ``results/NAME/verdicts.json`` and puts their table at the head of the
report. The README's table of the studies is generated from the committed copies in
``docs/verdicts/`` (``python -m qoslab.verdicts readme``), so the one-line summaries cannot
drift from what the runs measured.

A verdict is decided from a test, never by hand: :func:`decide` turns an effect and its 95 %
confidence interval into ``reproduces`` (the interval lies on the claimed side of the
threshold), ``does not reproduce`` (it lies on the other side, or inside the margin the claim
would need to exceed) or ``inconclusive`` (it straddles the threshold).
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import MISSING, asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from qoslab.stats import Estimate, Paired, one_sample_p

REPRODUCES = "reproduces"
DOES_NOT = "does not reproduce"
INCONCLUSIVE = "inconclusive"
VERDICTS = (REPRODUCES, DOES_NOT, INCONCLUSIVE)

Direction = Literal["greater", "less"]


@dataclass(frozen=True)
class Verdict:
    """One claim of the paper under one reading.

    - ``claim``: the paper's words (quoted), ``section``: where they are;
    - ``reading``: the name of the variant that implements the reading (``"as stated"`` where
      the paper leaves nothing open), ``supported``: what the paper's text says about this
      reading (e.g. "the prose of Sec. 3 supports it");
    - ``ours``/``paper``: the numbers set side by side, as text;
    - ``effect`` and ``ci95``: the quantity the verdict is decided on (e.g. a paired mean
      difference) and its 95 % interval; ``test`` (``paired t``, ``one-sample t``, …) and ``p``;
    - ``seeds``: how many seeds (pairs) the test used; ``quick``: from a ``--quick`` run;
    - ``verdict``: one of :data:`VERDICTS`; ``reason``: why, in a sentence (caveats included).
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

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {', '.join(VERDICTS)}, got {self.verdict!r}")
        for name in ("claim", "section", "reading", "reason"):
            if not str(getattr(self, name)).strip():
                raise ValueError(f"a verdict needs a {name}")

    def as_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["ci95"] = [_num(x) for x in self.ci95]
        d["effect"], d["p"] = _num(self.effect), _num(self.p)
        return d


def _num(x: float) -> float | None:
    return float(x) if x is not None and math.isfinite(x) else None


def decide(
    ci95: tuple[float, float],
    direction: Direction,
    threshold: float = 0.0,
    margin: float = 0.0,
) -> str:
    """The verdict on a claim that a quantity is ``direction`` than ``threshold``.

    ``reproduces`` when the whole interval lies beyond ``threshold + margin`` on the claimed
    side (``margin``: the least effect the claim needs, e.g. "clearly fairer"); ``does not
    reproduce`` when the whole interval lies on the other side of ``threshold + margin``
    (within the margin counts as not the claimed effect); ``inconclusive`` otherwise, or when
    the interval is undefined (one seed)."""
    lo, hi = ci95
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return INCONCLUSIVE
    if direction == "greater":
        bar = threshold + margin
        if lo > bar:
            return REPRODUCES
        if hi <= bar:
            return DOES_NOT
        return INCONCLUSIVE
    bar = threshold - margin
    if hi < bar:
        return REPRODUCES
    if lo >= bar:
        return DOES_NOT
    return INCONCLUSIVE


@dataclass
class Claim:
    """A claim and how it is tested; :meth:`paired` and :meth:`one_sample` turn a measurement
    into a :class:`Verdict` for one reading."""

    claim: str
    section: str
    direction: Direction
    paper: str
    threshold: float = 0.0
    margin: float = 0.0
    unit: str = ""
    scale: float = 1.0
    digits: int = 3

    def paired(self, reading: str, test: Paired, *, supported: str = "") -> Verdict:
        """The verdict under ``reading`` from a paired comparison (the claimed effect is the mean
        per-seed difference)."""
        ours = f"{test.fmt(self.digits, self.scale)}{self.unit} (paired, {test.n} seeds)"
        return self._verdict(reading, ours, test.mean, test.ci95, "paired t", test.p, test.n, supported)

    def one_sample(self, reading: str, est: Estimate, *, supported: str = "") -> Verdict:
        """The verdict under ``reading`` from a quantity over seeds, against the threshold."""
        ours = f"{est.fmt(self.digits, self.scale)}{self.unit} ({est.n} seeds)"
        p = one_sample_p(est, self.threshold)
        return self._verdict(
            reading, ours, est.mean, (est.ci_low, est.ci_high), "one-sample t", p, est.n, supported
        )

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
        )

    def _reason(self, v: str) -> str:
        side = ">" if self.direction == "greater" else "<"
        bar = self.threshold + (self.margin if self.direction == "greater" else -self.margin)
        what = f"{side} {bar:g}"
        if v == REPRODUCES:
            return f"the 95 % CI lies entirely {what}"
        if v == DOES_NOT:
            return f"the 95 % CI lies entirely on the other side of {bar:g} (the claim needs {what})"
        return f"the 95 % CI includes {bar:g}"


# -- files ---------------------------------------------------------------------------------------


def write(path: Path, experiment: str, header: dict[str, Any], verdicts: Sequence[Verdict]) -> Path:
    doc = {"experiment": experiment, **header, "verdicts": [v.as_json() for v in verdicts]}
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    return path


#: the fields every record has (those with a default may be absent from older files)
_REQUIRED = [
    k
    for k, f in Verdict.__dataclass_fields__.items()
    if f.default is MISSING and f.default_factory is MISSING
]


def read(path: Path) -> dict[str, Any]:
    """A ``verdicts.json`` document (checked: every record has the fields and a known verdict)."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(doc, dict) or not isinstance(doc.get("verdicts"), list):
        raise ValueError(f"{path}: not a verdicts file (no `verdicts` list)")
    for i, v in enumerate(doc["verdicts"]):
        missing = [k for k in _REQUIRED if k not in v]
        if missing:
            raise ValueError(f"{path}: verdicts[{i}] lacks {', '.join(missing)}")
        if v["verdict"] not in VERDICTS:
            raise ValueError(f"{path}: verdicts[{i}].verdict {v['verdict']!r} is not one of {VERDICTS}")
    return doc


def markdown(verdicts: Iterable[dict[str, Any]]) -> str:
    """The per-reading verdict table of a report or an experiment page."""
    rows = [
        "| claim | section | reading | paper | ours | test, p | verdict | why |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for v in verdicts:
        p = v.get("p")
        ptxt = f"{v['test']}, p = {p:.2g}" if isinstance(p, int | float) else v["test"]
        reading = v["reading"] + (f" ({v['supported']})" if v.get("supported") else "")
        rows.append(
            f"| “{_cell(v['claim'])}” | {_cell(v['section'])} | {_cell(reading)} | {_cell(v['paper'])} | "
            f"{_cell(v['ours'])} | {ptxt} | **{v['verdict']}** | {_cell(v['reason'])} |"
        )
    return "\n".join(rows) + "\n"


def _cell(s: Any) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


# -- the README table ----------------------------------------------------------------------------

BEGIN = "<!-- verdicts:begin (generated by `python -m qoslab.verdicts readme`) -->"
END = "<!-- verdicts:end -->"


def readme_table(docs: Sequence[dict[str, Any]]) -> str:
    """One row per experiment: its claims' verdicts counted per reading, and each claim in a
    line with its verdict under every reading, from the committed ``docs/verdicts/*.json``."""
    out = [
        "| study | experiment | run | claims, verdict per reading (details on the page) |",
        "|---|---|---|---|",
    ]
    for doc in sorted(docs, key=lambda d: str(d.get("study", d["experiment"]))):
        sections: dict[str, set[str]] = {}
        for v in doc["verdicts"]:
            sections.setdefault(v["claim"], set()).add(v["section"])
        by_claim: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for v in doc["verdicts"]:
            # a claim the paper makes of several figures is shown once per figure
            where = v["section"] if len(sections[v["claim"]]) > 1 else ""
            by_claim.setdefault((v["claim"], where), []).append(v)
        parts = []
        for (claim, where), vs in by_claim.items():
            per = "; ".join(
                f"**{verdict}**: {_readings([v['reading'] for v in vs if v['verdict'] == verdict])}"
                for verdict in VERDICTS
                if any(v["verdict"] == verdict for v in vs)
            )
            at = f" ({_cell(where)})" if where else ""
            parts.append(f"“{_cell(claim)}”{at} — {per}")
        run = f"{'quick' if doc.get('quick') else 'full'}, {doc.get('seeds', '?')} seeds"
        name = doc["experiment"]
        out.append(
            f"| {_cell(doc.get('study', name))} | [`{name}`](docs/experiments/{name}.md) | {run} | "
            + "<br>".join(parts)
            + " |"
        )
    return "\n".join(out) + "\n"


def _readings(names: Sequence[str]) -> str:
    """``["x, flow set A", "x, flow set B", "y"]`` → ``"x, flow set A/B; y"``: readings that
    differ only after their last comma share one entry."""
    groups: dict[tuple[str, bool], list[str]] = {}
    for n in names:
        head, sep, tail = n.rpartition(", ")
        # a reading named "x" and one named "x, y" are different readings: never merged
        groups.setdefault((head, True) if sep else (n, False), [])
        if sep:
            groups[(head, True)].append(tail)
    out = []
    for (head, tailed), tails in groups.items():
        if not tailed:
            out.append(head)
            continue
        words = tails[0].rsplit(" ", 1)
        prefix = (
            words[0] + " " if len(words) == 2 and all(t.startswith(words[0] + " ") for t in tails) else ""
        )
        out.append(f"{head}, {prefix}{'/'.join(t[len(prefix) :] for t in tails)}")
    return _cell(", ".join(out)) if len(out) == 1 else _cell("; ".join(out))


def page_table(doc: dict[str, Any]) -> str:
    """The per-reading verdict table of an experiment's page, with where it comes from."""
    cmd = doc.get("command", "qoslab reproduce " + doc["experiment"])
    head = (
        f"From `{cmd}` (qoslab {doc.get('version', '?')}, "
        f"{'quick run: shortened runs, ' if doc.get('quick') else ''}{doc.get('seeds', '?')} seeds; "
        f"`docs/verdicts/{doc['experiment']}.json`).\n\n"
    )
    return head + markdown(doc["verdicts"])


_BLOCK = re.compile(re.escape(BEGIN) + r".*?" + re.escape(END), re.S)


def _replace_block(path: Path, body: str) -> bool:
    text = path.read_text(encoding="utf-8")
    if not _BLOCK.search(text):
        raise ValueError(f"{path}: no generated verdicts block ({BEGIN} … {END})")
    new = _BLOCK.sub(lambda _: f"{BEGIN}\n{body}{END}", text)
    if new != text:
        path.write_text(new, encoding="utf-8")
    return new != text


def block(path: Path) -> str:
    """The text inside ``path``'s generated verdicts block."""
    text = path.read_text(encoding="utf-8")
    m = _BLOCK.search(text)
    if not m:
        raise ValueError(f"{path}: no generated verdicts block")
    return m.group(0)[len(BEGIN) + 1 : -len(END)]


# -- today's TCP: one claim's verdicts under each sender ----------------------------------------

#: The senders of the survival table, in its column order ("as published": the paper's TCP).
SENDER_ORDER = ("as published", "sack", "cubic", "bbr")
_SHORT = {REPRODUCES: "reproduces", DOES_NOT: "does not", INCONCLUSIVE: "inconclusive"}


def sender_of(doc: dict[str, Any]) -> str:
    return str(doc.get("sender", "as published"))


def survival_table(docs: Sequence[dict[str, Any]]) -> str:
    """Per experiment, one row per claim of the paper and one column per TCP sender: how many
    of the claim's readings reproduce, do not, or are inconclusive when every sender runs that
    congestion control (``qoslab reproduce NAME --sender S``). A claim "survives" a sender when
    its readings reproduce under it as they do under the paper's TCP."""
    by_exp: dict[str, dict[str, dict[str, Any]]] = {}
    for d in docs:
        by_exp.setdefault(d["experiment"], {})[sender_of(d)] = d
    out: list[str] = []
    for name in sorted(by_exp):
        runs = by_exp[name]
        cols = [s for s in SENDER_ORDER if s in runs] + sorted(set(runs) - set(SENDER_ORDER))
        first = runs[cols[0]]
        out += [f"### {_cell(first.get('study', name))} (`{name}`)", ""]
        out.append("| claim | " + " | ".join(f"{c} ({_mode(runs[c])})" for c in cols) + " |")
        out.append("|---" * (len(cols) + 1) + "|")
        claims: dict[tuple[str, str], dict[str, list[str]]] = {}
        for c in cols:
            for v in runs[c]["verdicts"]:
                claims.setdefault((v["claim"], v["section"]), {}).setdefault(c, []).append(v["verdict"])
        for (claim, section), per in claims.items():
            cells = [_counts(per.get(c, [])) for c in cols]
            out.append(f"| “{_cell(claim)}” ({_cell(section)}) | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


def _mode(doc: dict[str, Any]) -> str:
    return f"{'quick' if doc.get('quick') else 'full'}, {doc.get('seeds', '?')} seeds"


def _counts(verdicts: Sequence[str]) -> str:
    """``["reproduces", "reproduces", "inconclusive"]`` → ``"2 reproduces · 1 inconclusive"``."""
    if not verdicts:
        return "—"
    parts = [f"{verdicts.count(v)} {_SHORT[v]}" for v in VERDICTS if v in verdicts]
    return " · ".join(parts)


def update_docs(root: Path) -> list[Path]:
    """Rewrites the generated blocks of README.md (the table of studies) and of each
    experiment's page (its per-reading verdicts) from ``docs/verdicts/*.json``, and of
    docs/experiments/todays-tcp.md (each claim under each TCP sender, runs of one mode) from
    ``docs/verdicts/senders/*.json``; returns the files that changed."""
    docs = [read(p) for p in sorted((root / "docs" / "verdicts").glob("*.json"))]
    changed = []
    if _replace_block(root / "README.md", readme_table(docs)):
        changed.append(root / "README.md")
    for doc in docs:
        page = root / "docs" / "experiments" / f"{doc['experiment']}.md"
        if _replace_block(page, page_table(doc)):
            changed.append(page)
    tcp_page = root / "docs" / "experiments" / "todays-tcp.md"
    senders = [read(p) for p in sorted((root / "docs" / "verdicts" / "senders").glob("*.json"))]
    if senders and _replace_block(tcp_page, survival_table(senders)):
        changed.append(tcp_page)
    return changed


def main(argv: Sequence[str]) -> int:
    """``python -m qoslab.verdicts readme``: run from a source checkout after copying a run's
    ``results/NAME/verdicts.json`` to ``docs/verdicts/NAME.json``."""
    root = Path(__file__).resolve().parents[2]
    if list(argv) != ["readme"] or not (root / "docs" / "verdicts").is_dir():
        print("usage (from a source checkout): python -m qoslab.verdicts readme", file=sys.stderr)
        return 2
    try:
        changed = update_docs(root)
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print("\n".join(f"updated {p.relative_to(root)}" for p in changed) or "already up to date")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
