"""Output helpers for experiments: Markdown tables, figures with provenance, the git revision."""

from __future__ import annotations

import math
import subprocess
import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from qoslab.errors import printable

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def fmt_value(v: Any, digits: int = 4) -> str:
    """A table cell: floats to ``digits`` significant digits, booleans as yes/no."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        if math.isnan(v):
            return "n/a"
        if v == int(v) and abs(v) < 1e15:
            return f"{int(v)}"
        return f"{v:.{digits}g}"
    if hasattr(v, "item"):
        return fmt_value(v.item(), digits)
    return printable(str(v))  # a name from a scenario: never a raw control character


def markdown_table(
    df: pd.DataFrame,
    columns: Mapping[str, str] | Sequence[str] | None = None,
    formats: Mapping[str, Callable[[Any], str]] | None = None,
    digits: int = 4,
) -> str:
    """``df`` as a GitHub Markdown table. ``columns`` selects (and, as a mapping, renames)
    columns; ``formats`` maps a column to a function that formats its cells."""
    if columns is None:
        cols = {c: str(c) for c in df.columns}
    elif isinstance(columns, Mapping):
        cols = dict(columns)
    else:
        cols = {c: str(c) for c in columns}
    formats = formats or {}
    right = [pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c]) for c in cols]
    lines = [
        "| " + " | ".join(h.replace("|", "\\|") for h in cols.values()) + " |",
        "|" + "|".join("---:" if r else "---" for r in right) + "|",
    ]
    for _, row in df.iterrows():
        cells = []
        for c in cols:
            f = formats.get(c)
            cells.append((f(row[c]) if f else fmt_value(row[c], digits)).replace("|", "\\|"))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def new_figure(nrows: int = 1, ncols: int = 1, **kw: Any) -> tuple[Figure, Any]:
    """A matplotlib figure and its axes, outside pyplot (no global state, no GUI backend):
    ``new_figure(1, 2, figsize=(10, 4), sharey=True)``."""
    from matplotlib.figure import Figure

    figsize = kw.pop("figsize", None)
    fig = Figure(figsize=figsize, layout=kw.pop("layout", None))
    return fig, fig.subplots(nrows, ncols, **kw)


#: A provenance line that begins with this is a quick run's: :func:`draw_footer` stamps the
#: figure itself (the experiments' runner writes ``QUICK RUN (…) · …``).
QUICK_PREFIX = "QUICK RUN"


def draw_footer(fig: Figure, provenance: str) -> None:
    """The provenance footer (scenario, seeds, version) in the figure's bottom right, wrapped
    to its width (about 19 characters of 6.5 pt text per inch). A quick run's (provenance
    beginning with :data:`QUICK_PREFIX`) is also stamped across the figure (:func:`stamp`), so
    that a copied image still says it is not the full reproduction."""
    if provenance.startswith(QUICK_PREFIX):
        stamp(fig, provenance.split(" · ", 1)[0])
    footer = "\n".join(textwrap.wrap(provenance, max(40, int(fig.get_figwidth() * 19))))
    fig.text(0.99, 0.005, footer, ha="right", va="bottom", fontsize=6.5, color="0.35")


def stamp(fig: Figure, text: str) -> None:
    """``text`` (e.g. "QUICK RUN (shortened runs, 3 seeds)") drawn across the figure's middle,
    faint enough to read the data through it."""
    head, _, rest = text.partition(" (")
    fig.text(
        0.5,
        0.5,
        head + (f"\n({rest}" if rest else ""),
        ha="center",
        va="center",
        rotation=20,
        fontsize=40,
        color="tab:red",
        alpha=0.13,
        fontweight="bold",
        zorder=10,
        gid="quick-stamp",
    )


def figure_metadata(suffix: str, title: str, provenance: str) -> dict[str, str]:
    """The file metadata each backend accepts for a figure's title and provenance."""
    if suffix == ".png":
        return {"Title": title, "Description": provenance, "Software": "qoslab"}
    if suffix == ".pdf":
        return {"Title": title, "Subject": provenance, "Creator": "qoslab"}
    return {"Title": title, "Description": provenance}


def release_figure(fig: Figure) -> None:
    """Closes ``fig`` if pyplot holds it (figures from :func:`new_figure` need nothing)."""
    if getattr(fig.canvas, "manager", None) is not None:
        import matplotlib.pyplot as plt

        plt.close(fig)


def save_figure(fig: Figure, out_dir: Path, name: str, title: str, provenance: str) -> list[Path]:
    """Saves ``fig`` as ``name.png`` and ``name.svg`` with a provenance footer (scenario, seeds,
    version) drawn on the figure and written into the files' metadata; closes the figure."""
    out_dir.mkdir(parents=True, exist_ok=True)
    draw_footer(fig, provenance)
    png = out_dir / f"{name}.png"
    fig.savefig(png, dpi=150, metadata=figure_metadata(".png", title, provenance))
    svg = out_dir / f"{name}.svg"
    fig.savefig(svg, metadata=figure_metadata(".svg", title, provenance))
    release_figure(fig)
    return [png, svg]


@dataclass(frozen=True)
class Deferred:
    """A figure drawn by an analysis whose saving waits (a sequential look's: only the last
    look's are kept)."""

    fig: Figure
    out: Path
    name: str
    title: str
    provenance: str


def save_all(deferred: list[Deferred], keep: bool = True) -> None:
    """Saves each deferred figure exactly as :func:`save_figure` would have when it was drawn
    (``keep=False``: releases them unsaved), and empties the list."""
    for d in deferred:
        if keep:
            save_figure(d.fig, d.out, d.name, d.title, d.provenance)
        else:
            release_figure(d.fig)
    deferred.clear()


def git_revision(path: Path | None = None) -> str | None:
    """``<short hash>`` (``+dirty`` with uncommitted changes) of the git tree holding ``path``."""
    cwd = path or Path(__file__).resolve().parent
    try:
        rev = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=5
        )
        if rev.returncode != 0:
            return None
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=5,
        )
        return rev.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return None
