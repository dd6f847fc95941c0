"""qoslab.report.textable writes what rich's Console().print writes off a terminal, byte for byte, for
the tables and lines `qoslab run` prints, and declines (None: rich prints) what it cannot
reproduce."""

from __future__ import annotations

import io
import string

from hypothesis import example, given, settings
from hypothesis import strategies as st
from rich.console import Console

from qoslab.report.textable import Table, render_line, render_table

ASCII = st.text(alphabet=string.printable[:95], max_size=30)  # printable ASCII, space included
WORDY = st.text(alphabet="ab :-.[]é\t", max_size=60)  # spaces to wrap at, markup, emoji, non-ASCII
ANY = st.one_of(ASCII, WORDY, st.text(max_size=20))


def _rich(obj: object, width: int) -> str:
    buf = io.StringIO()
    Console(file=buf, width=width, force_terminal=False).print(obj)
    return buf.getvalue()


@st.composite
def tables(draw: st.DrawFn) -> Table:
    ncol = draw(st.integers(1, 7))
    t = Table(title=draw(st.one_of(st.just(""), ANY)), caption=draw(st.one_of(st.just(""), ANY)))
    for _ in range(ncol):
        t.add_column(draw(st.one_of(ASCII, ANY)))
    for _ in range(draw(st.integers(0, 5))):
        t.add_row(*draw(st.lists(st.one_of(ASCII, ASCII, ANY), min_size=ncol, max_size=ncol)))
    return t


@settings(max_examples=400, deadline=None)
@given(tables(), st.integers(1, 160))
def test_a_table_is_rich_s_or_declined(t: Table, width: int) -> None:
    mine = render_table(t, width)
    if mine is not None:
        assert mine == _rich(t.to_rich(), width)
        assert mine == _rich(t.to_rich(), width)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet=string.ascii_letters + string.digits + "-_ ", max_size=12), max_size=6))
def test_plain_tables_that_fit_are_all_rendered(words: list[str]) -> None:
    """Not declining too much: plain ASCII names in a wide console are always rendered here."""
    t = Table(title=" ".join(words), caption="  ".join(words) * 3)
    for h in ("flow", "throughput (kbps)", "drops"):
        t.add_column(h)
    for w in words:
        t.add_row(w, "12.5", "3")
    mine = render_table(t, 200)
    assert mine is not None and mine == _rich(t.to_rich(), 200)


@settings(max_examples=400, deadline=None)
@given(st.one_of(WORDY, ASCII, st.text(alphabet="ab ", max_size=200)), st.integers(1, 90))
@example("wrote /tmp/pytest-of-someone/pytest-123/test_run0/out/summary.json and Parquet tables", 80)
@example("drops at r1-r2: 5 (early 1, forced 2, overflow 2); all links 5", 80)
@example("drops at a:b: 5", 80)
def test_a_line_is_rich_s_or_declined(text: str, width: int) -> None:
    mine = render_line(text, width)
    if mine is not None:
        assert mine == _rich(text, width)


def test_declines_what_rich_would_change() -> None:
    assert render_line("[bold]x[/bold]", 80) is None  # markup
    assert render_line("a :smile: b", 80) is None  # emoji code
    assert render_line("tab\there", 80) is None and render_line("é", 80) is None
    t = Table(title="t")
    t.add_column("x" * 100)
    assert render_table(t, 80) is None  # rich would shrink the column
    assert render_table(t, 120) == _rich(t.to_rich(), 120)
