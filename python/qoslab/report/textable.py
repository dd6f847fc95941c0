"""Plain-text output of ``qoslab run``, byte for byte what rich prints, without importing rich.

``qoslab run`` prints two tables and a few lines. rich (``Console().print``) takes ~65 ms to
import and lay them out, most of a short run's whole process; this module writes the same bytes
itself when it can be sure of them, and hands the rest to rich, so the output never depends on
which of the two wrote it:

- **Plain output only.** When rich would treat stdout as a terminal (``isatty()``, or
  ``FORCE_COLOR``/``TTY_COMPATIBLE`` set, or IPython) it styles the output (an italic title, a
  bold header, highlighted numbers): every print then goes to rich, exactly as before. The same
  when stdout's encoding is not UTF-8 (rich draws ASCII boxes then) and on Windows.
- **Plain text only.** Strings of printable ASCII (no control characters, whose handling and
  cell widths, East-Asian wide characters included, are rich's), without ``[`` (rich markup)
  and without ``:…:`` (emoji codes); anything else goes to rich.
- **Tables that fit.** rich shrinks and wraps the columns of a table wider than the console;
  such a table goes to rich. Titles, captions and lines wider than the console are word-wrapped
  here as rich wraps them (``rich._wrap.divide_line``, words longer than a line folded).

The width is rich's: ``COLUMNS`` when it is digits (a zero goes to rich), else the size of the
first of stdin, stdout and stderr that is a terminal, else 80. A write that meets a closed pipe
ends the process as rich's ``Console.on_broken_pipe`` does (stdout pointed at /dev/null, exit
status 1). tests/test_textable.py checks the equivalence against rich on random tables.
"""

from __future__ import annotations

import os
import re
import sys
from typing import Any

__all__ = ["Console", "Table", "render_line", "render_table"]

_PLAIN = re.compile(r"[\x20-\x7e]*\Z")  # printable ASCII: one cell per character
_EMOJI = re.compile(r":\S*?:")  # what rich's emoji replacement could match (a superset)
_WORD = re.compile(r"\s*\S+\s*")  # rich._wrap.re_word
_TRAILING_SPACE = re.compile(r"\s+$")  # rich.text._re_whitespace

# rich.box.HEAVY_HEAD, the box of rich's Table: top, header row, header rule, rows, bottom.
_TOP = "┏━┳┓"
_HEAD_ROW = "┃┃┃"
_HEAD_RULE = "┡━╇┩"
_ROW = "│││"
_BOTTOM = "└─┴┘"


class Table:
    """A table of right-justified text columns, with a title above and an optional caption
    below (rich's ``Table(title=…, caption=…)`` with ``add_column(h, justify="right")``)."""

    def __init__(self, title: str = "", caption: str = "") -> None:
        self.title = title
        self.caption = caption
        self.headers: list[str] = []
        self.rows: list[tuple[str, ...]] = []

    def add_column(self, header: str) -> None:
        self.headers.append(header)

    def add_row(self, *cells: str) -> None:
        if len(cells) != len(self.headers):
            raise ValueError(f"{len(cells)} cells for {len(self.headers)} columns")
        self.rows.append(cells)

    def to_rich(self) -> Any:
        """The same table as a rich ``Table``."""
        from rich.table import Table as RichTable

        t = RichTable(title=self.title or None, caption=self.caption or None)
        for h in self.headers:
            t.add_column(h, justify="right")
        for r in self.rows:
            t.add_row(*r)
        return t


def _plain(s: str) -> bool:
    return _PLAIN.match(s) is not None and "[" not in s and _EMOJI.search(s) is None


def _divide(text: str, width: int) -> list[int]:
    """Offsets to break ``text`` at so that its lines fit ``width`` (rich._wrap.divide_line,
    fold=True, for one-cell characters)."""
    breaks: list[int] = []
    offset = 0
    for m in _WORD.finditer(text):
        start, word = m.start(), m.group()
        length = len(word.rstrip())
        if width - offset >= length:
            offset += len(word)
        elif length > width:
            pieces = [word[i : i + width] for i in range(0, len(word), width)]
            for i, piece in enumerate(pieces):
                if start:
                    breaks.append(start)
                if i == len(pieces) - 1:
                    offset = len(piece)
                else:
                    start += len(piece)
        elif offset and start:
            breaks.append(start)
            offset = len(word)
    return breaks


def _wrap(text: str, width: int, justify: str) -> list[str]:
    """rich's ``Text.wrap`` (overflow "fold") of a one-line plain string: "default" keeps each
    line as cut, "center" and "right" pad it to ``width``."""
    cuts = [0, *_divide(text, width), len(text)]
    lines = []
    for a, b in zip(cuts, cuts[1:], strict=False):
        line = text[a:b]
        if len(line) > width:  # Text.rstrip_end
            m = _TRAILING_SPACE.search(line)
            if m is not None:
                line = line[: len(line) - min(len(m.group()), len(line) - width)]
        if justify in ("center", "right"):
            line = line.rstrip()[:width]
            left = (width - len(line)) // 2 if justify == "center" else width - len(line)
            line = " " * left + line
            line += " " * (width - len(line))
        lines.append(line[:width])
    return lines


def render_line(text: str, width: int) -> str | None:
    """``text`` as rich's ``Console(width=width).print(text)`` writes it when not on a terminal,
    or None when that is not certain (see the module's docstring)."""
    if not _plain(text) or width < 1:
        return None
    return "".join(f"{line}\n" for line in _wrap(text, width, "default"))


def render_table(table: Table, width: int) -> str | None:
    """``table`` as rich's ``Console(width=width).print(table.to_rich())`` writes it when not on
    a terminal, or None when that is not certain (see the module's docstring)."""
    strings = [table.title, table.caption, *table.headers, *(c for r in table.rows for c in r)]
    if not table.headers or not all(_plain(s) for s in strings):
        return None
    cols = list(zip(table.headers, *table.rows, strict=True))
    widths = [max(len(c) for c in col) + 2 for col in cols]  # cell padding 1 either side
    table_width = sum(widths) + len(widths) + 1
    if table_width > width:
        return None  # rich would shrink and wrap the columns
    out: list[str] = []
    if table.title:
        out += _wrap(table.title, table_width, "center")

    def rule(box: str) -> None:
        out.append(box[0] + box[2].join(box[1] * w for w in widths) + box[3])

    def row(cells: tuple[str, ...], box: str) -> None:
        parts = [" " + _wrap(c, w - 2, "right")[0] + " " for c, w in zip(cells, widths, strict=True)]
        out.append(box[0] + box[2].join(parts) + box[1])

    rule(_TOP)
    row(tuple(table.headers), _HEAD_ROW)
    rule(_HEAD_RULE)
    for r in table.rows:
        row(r, _ROW)
    rule(_BOTTOM)
    if table.caption:
        out += _wrap(table.caption, table_width, "center")
    return "".join(f"{line}\n" for line in out)


def _rich_would_style() -> bool:
    """Whether rich's Console would take stdout for a terminal (or draw ASCII boxes, or render
    through Windows' console API): then rich prints."""
    env = os.environ
    if "FORCE_COLOR" in env or "TTY_COMPATIBLE" in env or os.name == "nt":
        return True
    import builtins

    if hasattr(builtins, "get_ipython"):  # rich's Jupyter detection
        return True
    out = sys.stdout
    try:
        if out.isatty():
            return True
    except (AttributeError, ValueError):
        return True
    return not (getattr(out, "encoding", None) or "utf-8").lower().startswith("utf")


def _console_width() -> int:
    """rich's Console width when COLUMNS does not say it: the first terminal among stdin,
    stdout and stderr, else 80."""
    columns = os.environ.get("COLUMNS")
    if columns is not None and columns.isdigit():
        return int(columns)
    width = 0
    for fd in (0, 1, 2):
        try:
            width = os.get_terminal_size(fd).columns
        except (AttributeError, ValueError, OSError):
            continue
        break
    return width or 80


class Console:
    """``print`` of strings and Tables to stdout: the bytes rich's ``Console().print`` writes,
    written here when certain (see the module's docstring), else by rich itself."""

    def __init__(self) -> None:
        self._rich: Any = None
        self._plain = not _rich_would_style()

    def _rich_console(self) -> Any:
        if self._rich is None:
            from rich.console import Console as RichConsole

            self._rich = RichConsole()
        return self._rich

    def print(self, obj: str | Table) -> None:
        text = None
        if self._plain:
            width = _console_width()
            text = render_table(obj, width) if isinstance(obj, Table) else render_line(obj, width)
        if text is None:
            self._rich_console().print(obj.to_rich() if isinstance(obj, Table) else obj)
            return
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except BrokenPipeError:  # as rich.console.Console.on_broken_pipe
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            raise SystemExit(1) from None
