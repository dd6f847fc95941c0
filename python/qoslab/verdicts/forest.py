"""The forest plot of a study's verdicts: every claim part × reading, its effect and interval
against the paper's magnitude, coloured by verdict, the primary readings marked.

Claims have different units (Jain's index, kb/s, percentage points), so each record is drawn in
units of its own claim: ``0`` is the claim's null boundary (its threshold ± margin, where "no
effect" ends) and ``1`` the near end of the paper's magnitude (the smallest effect the paper's
numbers support, as declared). A record reproduces when its interval lies right of 1 (inside the
band, for a claim with a far end), is weaker than claimed when it lies between 0 and 1, does not
reproduce when it stops short of 1 while reaching 0 or lies left of 0. A claim whose magnitude
starts at its boundary (a range beginning at the threshold) is drawn against the range's width
instead. Intervals running off the axis end in an arrow.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.text import Text  # noqa: E402
from PIL import Image  # noqa: E402
from PIL.PngImagePlugin import PngInfo  # noqa: E402

from qoslab.verdicts.core import DOES_NOT, INCONCLUSIVE, NOT_TESTABLE, REPRODUCES, WEAKER, Magnitude, bar_of  # noqa: E402
from qoslab.verdicts.rules import find  # noqa: E402

#: Okabe and Ito's colour-blind-safe palette, one colour per verdict
COLOURS = {
    REPRODUCES: "#0072B2",
    WEAKER: "#56B4E9",
    DOES_NOT: "#D55E00",
    INCONCLUSIVE: "#7f7f7f",
    NOT_TESTABLE: "#000000",
}
#: resolution of the saved plot (dots per inch)
DPI = 90
#: width of the plot (inches): 855 px at :data:`DPI`, within the site's text column (876 CSS px
#: at a 1280 px window), so a page shows it at its own size and :data:`TEXT_PT` as 12.5 px,
#: 0.78 × the body text (tests/test_site_browser.py)
WIDTH_IN = 9.5
#: size of the smallest text that carries data: the readings' labels and the legend (points)
TEXT_PT = 10.0
#: height of one line of the plot (inches)
LINE_IN = 0.22
#: the axis, in units of the claimed effect
XMIN, XMAX = -2.0, 3.0


def scale(m: Magnitude) -> tuple[float, float, float | None]:
    """(origin, unit, far end) of claim ``m``: a value ``x`` is drawn at ``(x − origin)/unit``;
    ``far end`` is where the paper's range ends (None: open)."""
    bar = bar_of(m.direction, m.threshold, m.margin)
    near, far = (m.low, m.high) if m.direction == "greater" else (m.high, m.low)
    sign = 1.0 if m.direction == "greater" else -1.0
    if math.isfinite(near) and (near - bar) * sign > 0:
        unit = near - bar
    elif math.isfinite(near) and math.isfinite(far) and far != near:
        unit = far - near
    else:
        unit = sign * max(abs(bar) * 0.05, 1e-9)
    end = (far - bar) / unit if math.isfinite(far) else None
    return bar, unit, end


def _rows(doc: dict[str, Any], decls: Sequence[Magnitude]) -> list[dict[str, Any]]:
    rows = []
    for r in doc["verdicts"]:
        try:
            m = find(decls, r["claim"], r["section"]) if not r.get("borrowed_from") else None
        except ValueError:
            m = None
        if m is None:
            continue  # a borrowed copy: drawn once, under the claim it was measured for
        origin, unit, end = scale(m)
        lo, hi = (math.nan if x is None else float(x) for x in r["ci95"])

        def at(x: float, o: float = origin, u: float = unit) -> float:
            return (x - o) / u

        a, b = sorted((at(lo), at(hi))) if math.isfinite(lo) and math.isfinite(hi) else (-math.inf, math.inf)
        label = r["claim"][:58] + ("…" if len(r["claim"]) > 58 else "")
        part = f" [{r['part']}]" if r.get("part") else ""
        rows.append(
            {
                "group": f"{label}{part} ({r['section'][:28]})",
                "reading": ("★ " if r.get("primary") else "") + str(r["reading"])[:60],
                "x": at(float(r["effect"])) if r.get("effect") is not None else math.nan,
                "lo": a,
                "hi": b,
                "end": end,
                "verdict": r["verdict"],
                "primary": bool(r.get("primary")),
            }
        )
    return rows


def forest(doc: dict[str, Any], decls: Sequence[Magnitude], path: Path) -> Path:
    """Draws ``doc``'s forest plot (see the module's text) to ``path``."""
    rows = _rows(doc, decls)
    groups: list[str] = []
    for row in rows:
        if row["group"] not in groups:
            groups.append(row["group"])
    lines: list[tuple[str, dict[str, Any] | None]] = []
    for g in groups:
        lines.append((g, None))
        lines += [(g, row) for row in rows if row["group"] == g]
    height = 1.5 + LINE_IN * len(lines)
    fig, ax = plt.subplots(figsize=(WIDTH_IN, height))
    ys = list(range(len(lines)))[::-1]
    labels = []
    for y, (g, r) in zip(ys, lines, strict=True):
        if r is None:
            # the claim heads its readings in a line of its own, from the figure's left edge
            labels.append("")
            ax.axhline(y, color="#dddddd", lw=0.6, zorder=0)
            head = ax.annotate(
                g,
                (0.01, y),
                xycoords=("figure fraction", "data"),
                va="center",
                fontsize=TEXT_PT,
                fontweight="bold",
                bbox={"facecolor": "white", "edgecolor": "none", "pad": 1.0},
            )
            head.set_in_layout(False)
            continue
        labels.append(r["reading"])
        c = COLOURS[r["verdict"]]
        lo, hi = max(r["lo"], XMIN), min(r["hi"], XMAX)
        ax.plot([lo, hi], [y, y], color=c, lw=2.2 if r["primary"] else 1.2, solid_capstyle="butt")
        for end, edge in ((r["lo"], XMIN), (r["hi"], XMAX)):
            if not math.isfinite(end) or (end < XMIN if edge == XMIN else end > XMAX):
                ax.annotate(
                    "",
                    (edge, y),
                    (edge + (0.25 if edge == XMIN else -0.25), y),
                    arrowprops={"arrowstyle": "->", "color": c, "lw": 1.0},
                )
        if math.isfinite(r["x"]) and XMIN <= r["x"] <= XMAX:
            marker = "D" if r["primary"] else "o"
            face = "white" if r["verdict"] == NOT_TESTABLE else c
            ax.plot(r["x"], y, marker, color=c, mfc=face, ms=5 if r["primary"] else 3.5)
        if r["end"] is not None and XMIN < r["end"] < XMAX:
            ax.plot([r["end"]], [y], "|", color="#444444", ms=7)
    ax.axvspan(1.0, XMAX, color="#0072B2", alpha=0.07, lw=0)
    ax.axvline(0.0, color="#333333", lw=0.8)
    ax.axvline(1.0, color="#0072B2", lw=0.8, ls="--")
    ax.set_yticks(ys, labels, fontsize=TEXT_PT)
    ax.set_xlim(XMIN, XMAX)
    ax.set_ylim(-0.7, len(lines) - 0.3)
    ax.set_xlabel(
        "effect in units of its claim: 0 = no effect (its boundary),\n"
        "1 = the paper's magnitude (near end; | far end);\n"
        "◆ thick = primary; arrows: off the axis",
        fontsize=TEXT_PT,
    )
    ax.set_title(
        f"{doc.get('study', doc['experiment'])}: every claim × reading (★ primary)", fontsize=TEXT_PT + 1
    )
    handles = [Line2D([], [], color=c, lw=2, label=v) for v, c in COLOURS.items()]
    fig.legend(handles=handles, loc="lower center", ncol=5, fontsize=TEXT_PT, frameon=False)
    fig.tight_layout(rect=(0.0, 0.55 / height, 1.0, 1.0))
    # no anti-aliasing: a study's few hundred lines stay within the docs' image budget, and the
    # plot's dozen colours fit the 16-colour palette below exactly (with anti-aliased text, its
    # shades of grey took the palette and the verdicts' colours came out grey or merged)
    for artist in fig.findobj():
        if isinstance(artist, (Text, Line2D, Patch)):
            artist.set_antialiased(False)
        arrow = getattr(artist, "arrow_patch", None)
        if isinstance(arrow, Patch):
            arrow.set_antialiased(False)
    path.parent.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    fig.savefig(buf, dpi=DPI, metadata={"Software": None})
    plt.close(fig)
    # a palette of 16 colours keeps a page's tallest plot within the docs' image budget
    img = Image.open(buf).convert("RGB").quantize(colors=16, method=Image.Quantize.MEDIANCUT)
    # the provenance the docs' figure check reads (as every page figure carries)
    info = PngInfo()
    quick = "QUICK RUN · " if doc.get("quick") else ""
    info.add_text(
        "Description",
        f"{quick}qoslab {doc.get('version', '?')} · the records of docs/verdicts/{doc['experiment']}.json "
        f"· {doc.get('seeds', '?')} seeds",
    )
    img.save(path, optimize=True, pnginfo=info, dpi=(DPI, DPI))
    return path
