"""Each study page lists every claim of its paper: a "Claims of the paper" table whose rows say,
for each claim, whether a verdict record judges it, and when none does, why not.

A reviewer reads that table to see what was left out; a page without it, or a row that says
"not judged" and stops, hides the choice."""

from __future__ import annotations

import re

from conftest import ROOT
from qoslab import studies

#: studies with declared claims whose page has no such table, and why
NO_PAPER_TEXT = {
    "buffer-sizing": "the paper is not in the shared papers; its page lists the words it could read",
}

HEADING = "## Claims of the paper"


def claims_table(text: str) -> list[list[str]]:
    """The body rows of the first table under ``HEADING`` in ``text``, split into cells
    (empty when the page has no such section or table)."""
    if HEADING not in text:
        return []
    section = text.split(HEADING, 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    body = [r for r in rows[2:] if not re.fullmatch(r"\|[-| ]+\|", r)]
    return [[c.strip() for c in r.strip("|").split(" | ")] for r in body]


def unreasoned(rows: list[list[str]]) -> list[str]:
    """The rows whose third cell ("judged") says "not judged" without a reason after it."""
    return [r[0] for r in rows if re.match(r"not judged\s*(—|\||$)", r[2] if len(r) > 2 else "")]


def test_each_study_page_lists_its_papers_claims_with_a_reason_for_each_one_not_judged() -> None:
    checked = [s for s in studies.with_claims() if s not in NO_PAPER_TEXT]
    assert len(checked) >= 5
    for study in checked:
        rows = claims_table((ROOT / "docs" / "experiments" / f"{study}.md").read_text())
        assert rows, f"docs/experiments/{study}.md: no '{HEADING}' table"
        assert all(len(r) >= 3 for r in rows), f"{study}: a row without its 'judged' cell"
        assert not unreasoned(rows), f"{study}: 'not judged' without a reason: {unreasoned(rows)}"
        assert any(r[2].startswith("not judged") for r in rows), (
            f"{study}: every claim judged? a paper's explanations and descriptions are claims too"
        )


def test_the_check_sees_a_missing_table_and_a_bare_not_judged() -> None:
    assert claims_table("# page\n\n## Setup\n\ntext\n") == []
    page = (
        f"{HEADING}\n\n| the paper's words | where | judged |\n|---|---|---|\n"
        '| "a" | Sec. 1 | yes |\n| "b" | Sec. 2 | not judged |\n| "c" | Sec. 3 | not judged: a cause |\n'
        "\n## Next\n\n| x | y | z |\n|---|---|---|\n| d | e | not judged |\n"
    )
    rows = claims_table(page)
    assert [r[0] for r in rows] == ['"a"', '"b"', '"c"']
    assert unreasoned(rows) == ['"b"']
