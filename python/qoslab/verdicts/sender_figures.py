"""The todays-tcp page's figures: per study, each claim's readings under each sender by
verdict, from the committed sender verdict files (``python -m qoslab.verdicts.docfigures
todays-tcp``), and the page's generated section that shows them."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from qoslab.verdicts.currency import FULL_SENDERS, sender_files
from qoslab.verdicts.docs import COLUMNS, by_column, column_name, column_of
from qoslab.verdicts.page_images import (
    BEGIN,
    END,
    IMG,
    VERSION,
    compact_png,
    image_provenance,
    plain_name,
    splice,
)

#: The verdicts in the order and colours of the todays-tcp figure.
#: Each verdict's colour (Okabe-Ito blue / sky blue / vermillion: told apart with the common
#: colour-vision deficiencies, not red against green); "not testable here" is hatched, so that it
#: does not vanish into the white page.
SHADES = {
    "reproduces": "#0072B2",
    "weaker than claimed": "#56B4E9",
    "inconclusive": "#b0b0b0",
    "does not reproduce": "#D55E00",
    "not testable here": "#ffffff",
}
#: The hatch of a verdict's block (none for the others).
HATCHES = {"not testable here": "////"}


def _sender_files(docs: Path, full_length: bool = False) -> dict[str, list[dict[str, Any]]]:
    """Per study, its sender verdict files in the order of the page's columns (those that
    exist): the quick runs of docs/verdicts/senders/, or (``full_length``) the studies' own
    full runs beside the linux flavour's of docs/verdicts/senders-full/."""
    d = docs / "verdicts"
    paths = (
        [*d.glob("*.json"), *(d / FULL_SENDERS).glob("*.json")] if full_length else d.glob("senders/*.json")
    )
    # a study that compares senders itself keeps its linux column beside them (buffer-sizing):
    # its file runs the paper's senders, not one sender in place of them
    files = sender_files(paths)
    if full_length and not any(f.get("tcp_flavour") == "linux" for f in files):
        return {}
    if full_length:  # a study's own file only beside its runs under other senders
        under = {f["experiment"] for f in files if f.get("tcp_flavour") == "linux"}
        files = [f for f in files if f["experiment"] in under]
    return {exp: [cols[c] for c in COLUMNS if c in cols] for exp, cols in by_column(files).items()}


def _height(rows: int) -> float:
    return 1.5 + 0.5 * rows


#: The todays-tcp figures' width (in): the column shows 8 pt text at 12 px or more up to 8.1 in.
GRID_WIDTH_IN = 8.0
#: The claim labels' width (characters of 8 pt text) in the left part of a figure.
LABEL_CHARS = 52


def _claim_label(claim: str, width: int = LABEL_CHARS) -> str:
    """A claim's words on at most three lines of ``width`` characters (the claims' words whole
    but for the rare longer one)."""
    lines = textwrap.wrap(claim, width)
    return "\n".join(lines[:3]) + ("…" if len(lines) > 3 else "")


#: The todays-tcp page's two kinds of figure, one of each per study (under
#: docs/experiments/img/todays-tcp/, named ``KIND-STUDY.png``).
QUICK_FIGURE = "verdicts-by-sender"
FULL_FIGURE = "verdicts-full-length"


def figure_name(kind: str, study: str) -> str:
    """The file name (no suffix) of ``study``'s todays-tcp figure of ``kind``."""
    return f"{kind}-{plain_name(study, 'study name')}"


def _column_label(col: tuple[str, str]) -> str:
    s, fl = col
    if s == "as published":
        return "paper's\nTCP"
    name = column_name(col).replace(", ns2 flavour", "").replace(" flavour", "").replace(", ", "\n")
    return name.replace(" (SACK)", "\n(SACK)")


def _verdict_grid(study: str, files: list[dict[str, Any]], dst: Path, prov: str, xlabel: str) -> int:
    """Draws ``study``'s claims (rows) under each sender (columns): one bar per claim and
    column, the share of the claim's readings with each verdict. The columns are those of
    :data:`qoslab.verdicts.docs.COLUMNS` the study's files have; a line separates the ns2
    flavour's from the linux flavour's. :data:`GRID_WIDTH_IN` wide, 8 pt claim labels. Returns
    the PNG's size."""
    from matplotlib.patches import Patch

    from qoslab.report.page import draw_footer, new_figure

    cols = [c for c in COLUMNS if any(column_of(f) == c for f in files)]
    # every claim any sender's file of the study has, in the order the files give them
    rows = list(dict.fromkeys(v["claim"] for f in files for v in f["verdicts"]))
    h = _height(len(rows))
    fig, ax = new_figure(1, 1, figsize=(GRID_WIDTH_IN, h))
    for j, col in enumerate(cols):
        doc = next((f for f in files if column_of(f) == col), None)
        for i, claim in enumerate(rows):
            recs = [v["verdict"] for v in (doc or {}).get("verdicts", []) if v["claim"] == claim]
            if not recs:
                ax.text(j + 0.45, i, "not run", ha="center", va="center", fontsize=8, color="#636363")
                continue
            left = float(j)
            for verdict, colour in SHADES.items():
                w = 0.9 * recs.count(verdict) / len(recs)
                ax.barh(
                    i,
                    w,
                    left=left,
                    color=colour,
                    edgecolor="#636363",
                    linewidth=0.3,
                    height=0.8,
                    hatch=HATCHES.get(verdict),
                )
                left += w
    ns2 = sum(fl == "ns2" for _, fl in cols)
    if 0 < ns2 < len(cols):
        ax.axvline(ns2 - 0.05, color="#252525", linewidth=1.0)
    ax.set_yticks(range(len(rows)), [_claim_label(c) for c in rows], fontsize=8)
    ax.set_xticks([j + 0.45 for j in range(len(cols))], [_column_label(c) for c in cols], fontsize=8)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xlim(0, len(cols))
    ax.set_xlabel(xlabel, fontsize=8)
    ax.set_title(study, fontsize=10, loc="left")
    handles = [
        Patch(facecolor=c, edgecolor="#636363", hatch=HATCHES.get(v), label=v) for v, c in SHADES.items()
    ]
    fig.legend(handles=handles, loc="upper center", ncol=3, fontsize=8, frameon=False)
    # room above for the legend's two rows and the title; below for the column labels (three
    # lines), the x label's lines and the footer
    bottom = (1.25 + 0.14 * xlabel.count("\n")) / h
    fig.subplots_adjust(left=0.46, right=0.99, top=1 - 0.62 / h, bottom=bottom)
    draw_footer(fig, prov)
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_suffix(".full.png")
    fig.savefig(
        tmp,
        dpi=110,
        metadata={"Title": f"{study}: verdicts by sender", "Description": prov, "Software": "qoslab"},
    )
    size = compact_png(tmp, dst)
    tmp.unlink()
    return size


def _grid_provenance(files: Sequence[dict[str, Any]], where: str) -> str:
    versions = sorted({f["version"] for f in files})
    runs = sorted({f"{'quick' if f.get('quick') else 'full'}, {f['seeds']}" for f in files})
    how = "QUICK RUN" if all(f.get("quick") for f in files) else "FULL-LENGTH RUNS"
    return (
        f"{how} ({'; '.join(runs)} seeds) · "
        + ", ".join(f"qoslab {v}" for v in versions)
        + f" · {where} ({len(files)} files)"
    )


_QUICK_WHERE = "docs/verdicts/senders"
_FULL_WHERE = "docs/verdicts and docs/verdicts/senders-full"
_QUICK_XLABEL = (
    "share of the claim's readings with each verdict, per sender\nleft of the line: ns2 flavour "
    "(its BBR fails the kernel validation);\nright: linux flavour (validated in part)"
)
_FULL_XLABEL = (
    "share of the claim's readings with each verdict, per sender (full-length\nruns, sequential "
    "seeds); left of the line: the paper's TCP;\nright: the linux flavour's senders"
)


def todays_tcp(docs: Path = Path("docs")) -> str:
    """Draws the todays-tcp page's figures from the committed sender verdict files (each claim's
    readings under each sender, by verdict), one per study: the quick runs of every sender in
    both flavours and, where they exist, the full-length runs of the paper's TCP beside the
    linux flavour's; then regenerates the page's section."""
    img = docs / IMG / "todays-tcp"
    lines = []
    provs: dict[str, dict[str, str]] = {QUICK_FIGURE: {}, FULL_FIGURE: {}}
    for kind, full, where, xlabel in (
        (FULL_FIGURE, True, _FULL_WHERE, _FULL_XLABEL),
        (QUICK_FIGURE, False, _QUICK_WHERE, _QUICK_XLABEL),
    ):
        for study, files in _sender_files(docs, full_length=full).items():
            prov = _grid_provenance(files, where)
            size = _verdict_grid(study, files, img / f"{figure_name(kind, study)}.png", prov, xlabel)
            provs[kind][study] = prov
            lines.append(f"todays-tcp: {kind} {study}, {len(files)} files, {size / 1e3:.0f} kB")
    for old in img.glob("verdicts-*.png"):  # a figure no study draws any more (a study removed)
        if not any(old.stem == figure_name(k, st) for k, ps in provs.items() for st in ps):
            old.unlink()
    page = docs / "experiments" / "todays-tcp.md"
    page.write_text(splice(page.read_text(), todays_tcp_section(provs[QUICK_FIGURE], provs[FULL_FIGURE])))
    return "\n".join(lines)


def _images(kind: str, provenances: Mapping[str, str], alt: str) -> list[str]:
    out = []
    for study, prov in provenances.items():
        out += [
            f"![{study}: {alt}](img/todays-tcp/{figure_name(kind, study)}.png)",
            "",
            f"<small>{prov}</small>",
            "",
        ]
    return out


def todays_tcp_section(quick: Mapping[str, str], full: Mapping[str, str] | None = None) -> str:
    """The page's generated section: per study, its full-length figure (where the linux
    flavour's full runs exist) and its quick one; ``quick`` and ``full`` give each study's
    figure provenance."""
    full_part = [
        "## The verdicts at full length, at a glance",
        "",
        "*Each row is one claim of a study; each block the share of its readings with each verdict "
        "under the paper's TCP and under Linux's reno, CUBIC and BBR in the linux flavour, every run "
        "full-length and every verdict decided sequentially, by the procedure its file's records name "
        "(the studies' own reproductions for the paper's TCP).* The tables are in the next section.",
        "",
        *_images(FULL_FIGURE, full or {}, "verdicts at full length"),
    ]
    return (
        "\n".join(
            [
                BEGIN,
                *(full_part if full else []),
                "## The verdicts under each sender, at a glance",
                "",
                "*Each row is one claim of a study; each block the share of its readings with each verdict "
                "under the paper's TCP and under SACK, CUBIC and BBR in the two transport flavours (the "
                "committed quick runs; seeds as each footer says).* Left of the line, the ns2 flavour's "
                "sack, cubic and bbr models, which are not validated against Linux: what they computed, not "
                "whether the claims hold under today's TCP. Right of it, the linux flavour's, judged against "
                "the kernel on the grid of [validation/linux.md](../validation/linux.md) (the targets each "
                "holds are listed above the tables below). The paper's own figures are on each study's page.",
                "",
                *_images(QUICK_FIGURE, quick, "verdicts by sender"),
                END,
            ]
        )
        + "\n"
    )


def check_todays_tcp(docs: Path, page: Path) -> list[str]:
    """The todays-tcp page's figures, once for the page: each is drawn from one study's sender
    verdict files (the quick grid from docs/verdicts/senders/, the full-length one from the
    study's own file and docs/verdicts/senders-full/) and must name exactly their versions; the
    page shows no other figure of that folder, and its section is the generated one. (A figure
    the page names but that is missing, or over the budget, is reported with the other pages'.)"""
    out = []
    drawn: dict[str, dict[str, str]] = {}
    img = page.parent / "img" / "todays-tcp"
    for kind, full in ((QUICK_FIGURE, False), (FULL_FIGURE, True)):
        drawn[kind] = {}
        for study, files in _sender_files(docs, full_length=full).items():
            name = figure_name(kind, study)
            png = img / f"{name}.png"
            prov = drawn[kind][study] = image_provenance(png) if png.exists() else ""
            want = {f["version"] for f in files}
            got = set(VERSION.findall(prov))
            if png.exists() and got != want:
                out.append(
                    f"{page}: img/todays-tcp/{name}.png was drawn from versions {sorted(got)}, "
                    f"the sender files are {sorted(want)}"
                )
    expected = {figure_name(k, st) for k, ps in drawn.items() for st in ps}
    text = page.read_text()
    for ref in re.findall(r"\]\((img/todays-tcp/[^)\s]+)\.png\)", text):
        if Path(ref).name not in expected:
            out.append(
                f"{page}: {ref}.png is no study's figure of its sender files "
                "(python -m qoslab.verdicts.docfigures todays-tcp)"
            )
    if todays_tcp_section(drawn[QUICK_FIGURE], drawn[FULL_FIGURE] or None).rstrip("\n") not in text:
        out.append(f"{page}: its figures section is stale (python -m qoslab.verdicts.docfigures todays-tcp)")
    return out
