"""tools/regenerate.py: the model pages' entries in mkdocs.yml's nav and on docs/index.md, and
the queue kinds table of docs/capabilities.md, are generated (from docs/models/ and from the
core's registry), so a new mechanism's page or kind needs no hand edit there; each fails here
when stale."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import regenerate  # noqa: E402

from qoslab import schema  # noqa: E402

SITE = {
    "mkdocs.yml": regenerate.nav,
    "docs/index.md": regenerate.index,
    "docs/capabilities.md": regenerate.capabilities,
    "docs/models/tcp-linux.md": regenerate.linux_cc,
}


@pytest.mark.parametrize("rel", sorted(SITE))
def test_the_generated_blocks_are_up_to_date(rel: str) -> None:
    text = (ROOT / rel).read_text()
    assert SITE[rel](text) == text, f"{rel} is stale: run `.venv/bin/python tools/regenerate.py`"


def test_every_model_page_is_in_the_nav_and_on_the_front_page() -> None:
    pages = {p.name for p in (ROOT / "docs" / "models").glob("*.md")}
    nav = (ROOT / "mkdocs.yml").read_text().split(regenerate.NAV_BEGIN)[1].split(regenerate.NAV_END)[0]
    index = (ROOT / "docs" / "index.md").read_text()
    assert {ln.rsplit("models/", 1)[1] for ln in nav.splitlines() if "models/" in ln} == pages
    assert all(f"](models/{p})" in index for p in pages)
    # a page's label is its title up to the first dash or colon
    labels = dict((path, label) for label, path in regenerate.model_pages())
    assert labels["models/red.md"] == "RED" and labels["models/tcp-linux.md"] == "TCP as Linux runs it"


def test_a_missing_page_or_kind_is_noticed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = (ROOT / "mkdocs.yml").read_text()
    head, rest = text.split(regenerate.NAV_BEGIN)
    emptied = f"{head}{regenerate.NAV_BEGIN}\n{regenerate.NAV_END}{rest.split(regenerate.NAV_END)[1]}"
    assert regenerate.nav(emptied) == text != emptied
    # a new page appears in the nav without a hand edit
    models = tmp_path / "models"
    models.mkdir()
    for p in (ROOT / "docs" / "models").glob("*.md"):
        (models / p.name).write_text(p.read_text())
    (models / "zz-new.md").write_text("# New queue — something\n")
    monkeypatch.setattr(regenerate, "MODELS", models)
    assert "      - New queue: models/zz-new.md\n" in regenerate.nav(text)
    # every registered queue kind has a row in the capabilities table
    caps = (ROOT / "docs" / "capabilities.md").read_text()
    for kind in schema.queue_kinds():
        assert f"| `{kind}` |" in caps, kind


def test_the_markers_must_be_there() -> None:
    with pytest.raises(SystemExit, match="mkdocs.yml: the generated block's markers"):
        regenerate.nav("nav:\n  - Home: index.md\n")
