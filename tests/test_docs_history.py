"""The pages state what holds now; history goes to CHANGELOG.md.

A page of docs/ or the README that names an internal round, issue or timing run ("stop 74",
"issue 54", "run 15") tells the story of how something came to be instead of what is true; such
a passage belongs in CHANGELOG.md (keep-a-changelog) and git log. Generated sections are
checked too: a generator that writes such a name fails here once its output is regenerated.
"""

from __future__ import annotations

import re
from pathlib import Path

from conftest import ROOT

#: An internal round, issue or timing-run number, as the reference pages must not name them.
#: (An upstream tracker is named with its project and a '#', e.g. "ns-3 issue #735".)
HISTORY = re.compile(r"\b([Ss]top|[Ii]ssue) [0-9]{2,3}\b|\b[Rr]un 1[0-9]\b")


def pages() -> list[Path]:
    """Every Markdown page of the docs site, the README, and the shipped scenarios (their header
    comments are what a user reads first)."""
    return [
        *sorted((ROOT / "docs").rglob("*.md")),
        ROOT / "README.md",
        *sorted((ROOT / "scenarios").rglob("*.toml")),
    ]


def history_lines(text: str) -> list[tuple[int, str]]:
    """The (line number, line) pairs of ``text`` that name an internal round or issue number."""
    return [(n, line.strip()) for n, line in enumerate(text.splitlines(), 1) if HISTORY.search(line)]


def test_no_page_names_an_internal_round_or_issue() -> None:
    found = [
        f"{page.relative_to(ROOT)}:{n}: {line[:120]}"
        for page in pages()
        for n, line in history_lines(page.read_text())
    ]
    assert not found, "pages state what holds now; move the story to CHANGELOG.md:\n" + "\n".join(found)


def test_the_check_finds_each_kind_of_name_and_spares_current_facts() -> None:
    text = "\n".join(
        [
            "The aim of 30 minutes holds.",  # 1
            "Until stop 74 the verdicts came from a confidence sequence.",  # 2
            "Tolerances (issue 54): each flow's share within 10 %.",  # 3
            "Run 15 took 25 min 35 s on a host slower than before.",  # 4
            "Issue 17 asked for 20 M packet-hops/s.",  # 5
            "an ns-3 bug (ns-3 issue #735); 16 seeds; runs 6-10; stop 7 seconds",  # 6
        ]
    )
    assert [n for n, _ in history_lines(text)] == [2, 3, 4, 5]


def test_the_changelog_is_keep_a_changelog() -> None:
    text = (ROOT / "CHANGELOG.md").read_text()
    assert text.startswith("# Changelog\n")
    assert "keepachangelog.com" in text
    dates = re.findall(r"^### (\d{4}-\d{2}-\d{2})$", text, flags=re.M)
    assert dates and dates == sorted(dates, reverse=True), "newest first, one heading per date"
