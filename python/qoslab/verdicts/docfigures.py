"""The experiment pages' figures: the images a full ``qoslab reproduce`` wrote, copied into
``docs/experiments/img/NAME/`` beside a manifest, and a generated section of each page that
shows them with the paper's figure or table each one mirrors and the verdicts that rest on it.

``python -m qoslab.verdicts.docfigures collect RUN_DIR [NAME ...]`` copies ``RUN_DIR/NAME/*.png`` (as
listed in ``RUN_DIR/NAME/figures.json``, which :meth:`Context.figure` writes) and regenerates
the page sections; ``python -m qoslab.verdicts.docfigures check`` fails when a page names an image that
is missing, was made by a quick run, or was made by another version than the experiment's
committed verdict file (``docs/verdicts/NAME.json``), or when a page's section is stale
against its manifest. ``make figures`` runs both after the reproductions.

Images are PNG under :data:`MAX_BYTES` (the site's budget per image): matplotlib's 150 dpi
output re-encoded with a 256-colour palette, and scaled down only if that is not enough. Each
image keeps the provenance footer drawn on it and in its metadata (``Description``: version,
scenarios, seeds), which is what :func:`check` compares.

Our copies of the papers (``../shared/papers/*.md``) are text conversions without their
plots, so a figure that the paper only draws cannot be digitised here: the section says what
of the paper is on our figure (the legend entries naming the paper: its tables' and text's
numbers) and, where nothing is, says so.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qoslab.report.figure_rules import figure_problems
from qoslab.verdicts.page_images import (
    BEGIN,
    END,
    IMG,
    MAX_BYTES,
    compact_png,
    image_provenance,
    plain_name,
    splice,
    version_of,
)
from qoslab.verdicts.sender_figures import check_todays_tcp, todays_tcp

if TYPE_CHECKING:
    from matplotlib.figure import Figure

HEADING = "## The paper's figures beside ours"

_NUM = re.compile(r"(fig|table)(\d+)([a-z]?)((?:-\d+)*)(?=-|$)")
#: A label that draws something of the paper (not one that names a setting of ours after it).
_PAPER_VALUE = re.compile(
    r"\bpaper\b(?!'s (?:(?:parameters|rtts|settings?|text|window|scenarios?)\b|\d))", re.I
)


@dataclass(frozen=True)
class Mirror:
    """Which of the paper's figures and tables one of ours mirrors (from its name:
    ``fig7-table2-throughput`` is Fig. 7 and Table 2; ``fig3-6-frontiers`` Figs. 3-6)."""

    figures: tuple[int, ...]
    tables: tuple[int, ...]
    panel: str

    @property
    def label(self) -> str:
        parts = []
        if self.figures:
            f = self.figures
            rng = f"{f[0]}–{f[-1]}" if len(f) > 1 else f"{f[0]}{f'({self.panel})' if self.panel else ''}"
            parts.append(("Figs. " if len(f) > 1 else "Fig. ") + rng)
        if self.tables:
            parts.append(", ".join(f"Table {t}" for t in self.tables))
        return " and ".join(parts)

    def matches(self, section: str) -> bool:
        """Whether a verdict record's ``section`` cites one of these figures or tables."""
        cited_f = {int(m) for m in re.findall(r"Figs?\.\s*(\d+)", section)}
        for a, b in re.findall(r"Figs?\.\s*(\d+)\s*[-–]\s*(\d+)", section):
            cited_f.update(range(int(a), int(b) + 1))
        cited_t = {int(m) for m in re.findall(r"Table\s*(\d+)", section)}
        roman = {"I": 1, "II": 2, "III": 3, "IV": 4}
        cited_t.update(roman[m] for m in re.findall(r"Table\s+(IV|III|II|I)\b", section))
        return bool(cited_f & set(self.figures) or cited_t & set(self.tables))


def mirror_of(name: str) -> Mirror | None:
    """The paper's figures and tables a figure named ``name`` mirrors, or None (ours only)."""
    figs: list[int] = []
    tabs: list[int] = []
    panel = ""
    for kind, num, sub, more in _NUM.findall(name):
        ns = [int(num), *(int(x) for x in more.split("-") if x)]
        if len(ns) == 2:
            ns = list(range(ns[0], ns[1] + 1))
        (figs if kind == "fig" else tabs).extend(ns)
        panel = panel or sub
    if not figs and not tabs:
        return None
    return Mirror(tuple(figs), tuple(tabs), panel)


def _mirror(rec: Mapping[str, Any]) -> Mirror | None:
    """What a figure mirrors: its ``mirrors`` (else its name), and the tables of the paper whose
    values it draws (its paper labels naming them)."""
    m = mirror_of(str(rec.get("mirrors") or rec["name"]))
    roman = {"I": 1, "II": 2, "III": 3, "IV": 4}
    drawn = {
        int(t) if t.isdigit() else roman[t]
        for label in rec.get("paper", [])
        for t in re.findall(r"Table\s+(\d+|IV|III|II|I)\b", str(label))
    }
    if not drawn - set(m.tables if m else ()):
        return m
    if m is None:
        return Mirror((), tuple(sorted(drawn)), "")
    return Mirror(m.figures, tuple(sorted(set(m.tables) | drawn)), m.panel)


def paper_labels(fig: Figure) -> list[str]:
    """The legend entries and reference-line labels of ``fig`` that name the paper (what of
    the paper's numbers the figure draws)."""
    seen: list[str] = []
    for ax in fig.axes:
        labels = list(ax.get_legend_handles_labels()[1])
        leg = ax.get_legend()
        if leg is not None:
            labels += [t.get_text() for t in leg.get_texts()]
        labels += [t.get_text() for t in ax.texts]
        for fl in fig.legends:
            labels += [t.get_text() for t in fl.get_texts()]
        seen += [s for s in labels if _PAPER_VALUE.search(s) and s not in seen]
    return list(dict.fromkeys(" ".join(s.split()) for s in seen))


def figure_record(
    name: str, fig: Figure, *, title: str, caption: str, provenance: str, mirrors: str = ""
) -> dict[str, Any]:
    """What ``figures.json`` holds of one figure (read before the figure is saved and closed);
    ``problems``, only when the figure rules found some their drawing could not fix
    (:func:`qoslab.report.figure_rules.figure_problems`), which :func:`check` reports."""
    rec: dict[str, Any] = {
        "name": name,
        "mirrors": mirrors,
        "title": title,
        "caption": caption,
        "provenance": provenance,
        "paper": paper_labels(fig),
    }
    if problems := figure_problems(fig):
        rec["problems"] = problems
    return rec


def write_manifest(out: Path, records: Sequence[Mapping[str, Any]], command: str = "") -> Path:
    """``out/figures.json``: the figures' records and the command that made them."""
    p = out / "figures.json"
    doc = {"command": command, "figures": list(records)} if command else {"figures": list(records)}
    p.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    return p


# -- images -----------------------------------------------------------------------------------------


def _verdict_lines(mirror: Mirror | None, verdicts: Sequence[Mapping[str, Any]]) -> list[str]:
    if mirror is None:
        return []
    by_claim: dict[str, dict[str, int]] = {}
    for r in verdicts:
        if mirror.matches(str(r.get("section", ""))):
            counts = by_claim.setdefault(str(r["claim"]), {})
            counts[str(r["verdict"])] = counts.get(str(r["verdict"]), 0) + 1
    out = []
    for claim, counts in by_claim.items():
        n = sum(counts.values())
        said = ", ".join(f"{v} in {k}" for v, k in sorted(counts.items(), key=lambda kv: -kv[1]))
        out.append(f"- “{claim}”: {said} of {n} reading{'s' if n > 1 else ''}")
    return out


def _figure_block(exp: str, rec: Mapping[str, Any]) -> str:
    name = str(rec["name"])
    mirror = _mirror(rec)
    where = f"Mirrors the paper's {mirror.label}." if mirror else "Not in the paper: ours."
    paper = list(rec.get("paper", []))
    if paper:
        overlay = "Drawn from the paper: " + "; ".join(f"“{p}”" for p in paper) + "."
    elif mirror:
        overlay = (
            "No value read from the paper's plot is drawn on it: our copy of the paper is its "
            "text, without the plots, so the plot could not be digitised (the legend says what is "
            "drawn); compare with the paper's words in the verdicts."
        )
    else:
        overlay = ""
    lines = [
        f"### {rec['title']}",
        "",
        f"![{rec['title']}](img/{exp}/{name}.png)",
        "",
        f"*{where}* {rec.get('caption', '')}".strip() + (f" {overlay}" if overlay else ""),
        "",
    ]
    vl = list(rec.get("verdicts", []))
    if vl:
        lines += ["Verdicts on the claims that cite it:", "", *vl, ""]
    lines += [f"<small>{rec['provenance']}</small>", ""]
    return "\n".join(lines)


def with_verdicts(manifest: Mapping[str, Any], verdicts: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``manifest`` with each figure's summary of the verdicts whose section cites what it
    mirrors."""
    figs = [{**r, "verdicts": _verdict_lines(_mirror(r), verdicts)} for r in manifest["figures"]]
    return {**manifest, "figures": figs}


def render_section(exp: str, manifest: Mapping[str, Any]) -> str:
    """The generated section of ``exp``'s page, from its manifest."""
    figs = list(manifest["figures"])
    mirrored = [r for r in figs if _mirror(r)]
    rest = [r for r in figs if not _mirror(r)]
    head = [
        BEGIN,
        HEADING if mirrored else "## Figures of the full run",
        "",
        f"From `{manifest['command']}` (seeds {manifest['seeds']}; version {manifest['version']}). "
        "Means with 95 % intervals over seeds; each caption says how its intervals are drawn. "
        f"{len(mirrored)} of the {len(figs)} figures mirror one of the paper's figures or tables.",
        "",
    ]
    body = [_figure_block(exp, r) for r in [*mirrored, *rest]]
    return "\n".join(head) + "\n" + "\n".join(body) + END + "\n"


# -- collect and check --------------------------------------------------------------------------------


def _verdict_records(docs: Path, exp: str) -> tuple[list[dict[str, Any]], str | None]:
    p = docs / "verdicts" / f"{exp}.json"
    if not p.exists():
        return [], None
    d = json.loads(p.read_text())
    return list(d.get("verdicts", [])), str(d.get("version"))


def _seeds_of(figures: Sequence[Mapping[str, Any]]) -> str:
    """The seeds the figures' provenance names (``1-20``), all of them."""
    found = {m.group(1) for r in figures if (m := re.search(r"seeds ([\d,\-– ]+)$", str(r["provenance"])))}
    return " / ".join(sorted(found)) or "?"


def collect(run_dir: Path, names: Iterable[str], docs: Path = Path("docs")) -> list[str]:
    """Copies each experiment's figures from ``run_dir/NAME`` (or ``run_dir/FOLDER`` for a name
    given as ``NAME=FOLDER``) into the docs and regenerates its page's section; returns one line
    per experiment. Names (of the experiments, their folders, and of the
    figures in their ``figures.json``) must be plain file names: nothing is read or written
    outside ``run_dir/NAME`` and the experiment's image folder and page."""
    said = []
    for spec in names:
        # NAME, or NAME=FOLDER for a run whose outputs went to another folder under run_dir
        # (``modern-aqm=modern-aqm-tcp-linux-timing-testbed``: its page shows the linux flavour)
        exp, _, folder = spec.partition("=")
        plain_name(exp, "experiment name")
        src = run_dir / plain_name(folder or exp, "run folder")
        man = json.loads((src / "figures.json").read_text())
        for r in man["figures"]:
            plain_name(r["name"], f"{src / 'figures.json'}: figure name")
        verdict_file = src / "verdicts.json"
        header = json.loads(verdict_file.read_text()) if verdict_file.exists() else {}
        if header.get("quick"):
            raise SystemExit(f"{verdict_file}: a quick run; the pages show full runs only")
        manifest: dict[str, Any] = {
            "experiment": exp,
            "command": header.get("command") or man.get("command") or f"qoslab reproduce {exp}",
            "seeds": _seeds_of(man["figures"]),
            "version": header.get("version") or version_of(man["figures"][0]["provenance"]),
            # the labels filtered again: a run's analysis may predate the filter's last rule
            "figures": [
                {**r, "paper": [p for p in r.get("paper", []) if _PAPER_VALUE.search(p)]}
                for r in man["figures"]
            ],
        }
        dst = docs / IMG / exp
        if dst.exists():
            for old in dst.glob("*.png"):
                old.unlink()
        sizes = [compact_png(src / f"{r['name']}.png", dst / f"{r['name']}.png") for r in manifest["figures"]]
        committed, _ = _verdict_records(docs, exp)
        manifest = with_verdicts(manifest, committed or list(header.get("verdicts", [])))
        (dst / "figures.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n")
        page = docs / "experiments" / f"{exp}.md"
        page.write_text(splice(page.read_text(), render_section(exp, manifest)))
        said.append(f"{exp}: {len(sizes)} figures, largest {max(sizes, default=0) / 1e3:.0f} kB -> {dst}")
    return said


def check(docs: Path = Path("docs")) -> list[str]:
    """Every problem with the experiment pages' images: a named image missing, over the size
    budget, from a quick run, or of another version than the experiment's verdict file; a
    section stale against its manifest."""
    problems: list[str] = []
    for page in sorted((docs / "experiments").glob("*.md")):
        exp, text = page.stem, page.read_text()
        verdicts, version = _verdict_records(docs, exp)
        man_path = docs / IMG / exp / "figures.json"
        for ref in re.findall(r"\]\((img/[^)\s]+)\)", text):
            img = page.parent / ref
            if not img.exists():
                problems.append(f"{page}: names {ref}, which is missing")
                continue
            prov = image_provenance(img)
            made = version_of(prov)
            if img.stat().st_size > MAX_BYTES:
                problems.append(f"{page}: {ref} is {img.stat().st_size} bytes (limit {MAX_BYTES})")
            if exp == "todays-tcp":
                continue  # drawn from sender files, not from a run: check_todays_tcp below
            if prov.startswith("QUICK RUN"):
                problems.append(f"{page}: {ref} was made by a quick run")
            if version is not None and made != version:
                problems.append(
                    f"{page}: {ref} was made by qoslab {made}, "
                    f"its verdict file docs/verdicts/{exp}.json by {version}"
                )
        if exp == "todays-tcp":
            problems += check_todays_tcp(docs, page)
        if man_path.exists():
            manifest = json.loads(man_path.read_text())
            problems += _check_manifest(page, manifest, verdicts)
            if BEGIN not in text or render_section(exp, manifest).rstrip("\n") not in text:
                problems.append(f"{page}: its figures section is stale (make figures)")
    return problems


def _check_manifest(
    page: Path, manifest: Mapping[str, Any], verdicts: Sequence[Mapping[str, Any]]
) -> list[str]:
    """The manifest's images are all of its version, and its verdict lines are those of the
    committed verdict file (when there is one)."""
    out = []
    img_dir = page.parent / "img" / page.stem
    for r in manifest["figures"]:
        img = img_dir / f"{r['name']}.png"
        out += [f"{page}: img/{page.stem}/{img.name}: {said}" for said in r.get("problems", [])]
        if img.exists() and version_of(image_provenance(img)) != manifest["version"]:
            out.append(
                f"{page}: img/{page.stem}/{img.name} is not of the manifest's version {manifest['version']}"
            )
    if verdicts and with_verdicts(manifest, verdicts)["figures"] != manifest["figures"]:
        out.append(
            f"{page}: its figures' verdict lines differ from docs/verdicts/{page.stem}.json (make figures)"
        )
    return out


def sections(names: Sequence[str], docs: Path = Path("docs")) -> list[str]:
    """Re-renders the figure sections of ``names``' pages from their committed manifests and
    verdict files (after ``python -m qoslab.verdicts redecide`` changed the verdicts they quote;
    no image is touched)."""
    said = []
    for exp in names:
        man_path = docs / IMG / plain_name(exp, "experiment name") / "figures.json"
        committed, _ = _verdict_records(docs, exp)
        manifest = with_verdicts(json.loads(man_path.read_text()), committed)
        man_path.write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n")
        page = docs / "experiments" / f"{exp}.md"
        page.write_text(splice(page.read_text(), render_section(exp, manifest)))
        said.append(f"{exp}: section re-rendered from {man_path}")
    return said


def main(argv: Sequence[str]) -> int:
    if argv[:1] == ["sections"] and len(argv) >= 2:
        for line in sections(argv[1:]):
            print(line)
        return 0
    if argv[:1] == ["collect"] and len(argv) >= 2:
        run_dir = Path(argv[1])
        names = argv[2:] or sorted(p.parent.name for p in run_dir.glob("*/figures.json"))
        for line in collect(run_dir, names):
            print(line)
        return 0
    if argv[:1] == ["todays-tcp"]:
        print(todays_tcp())
        return 0
    if argv[:1] == ["check"]:
        problems = check()
        for p in problems:
            print(p, file=sys.stderr)
        print(f"{len(problems)} problems with the experiment pages' figures")
        return 1 if problems else 0
    print(
        "usage: python -m qoslab.verdicts.docfigures collect RUN_DIR [NAME[=FOLDER] ...] | check",
        file=sys.stderr,
    )
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
