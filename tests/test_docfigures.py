"""The experiment pages' figures (docs/experiments/img/, `make figures`): every image a page
names exists, is a full run's, is within the size budget and is of the same version as the
experiment's committed verdict file; the generated sections are not stale. Each check is
shown to fail on a copy of the docs with one thing broken."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from PIL import Image, PngImagePlugin

from qoslab.report.figures import Line, Panel, Ref, panels
from qoslab.verdicts import docfigures as df
from qoslab.verdicts import page_images as pi
from qoslab.verdicts import sender_figures as sf

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = (
    "ard",
    "fdd-red",
    "probe-marker",
    "rio-plus-o",
    "twam-dwred",
    "red-baseline",
    "modern-aqm",
    "todays-tcp",
)


@pytest.fixture
def docs_copy(tmp_path: Path) -> Path:
    dst = tmp_path / "docs"
    shutil.copytree(DOCS / "experiments", dst / "experiments")
    shutil.copytree(DOCS / "verdicts", dst / "verdicts")
    return dst


def _first_image(docs: Path, exp: str = "ard") -> Path:
    man = json.loads((docs / pi.IMG / exp / "figures.json").read_text())
    return docs / pi.IMG / exp / f"{man['figures'][0]['name']}.png"


def test_the_committed_pages_pass() -> None:
    assert df.check(DOCS) == []


@pytest.mark.parametrize("exp", PAGES)
def test_every_experiment_page_shows_figures(exp: str) -> None:
    text = (DOCS / "experiments" / f"{exp}.md").read_text()
    assert pi.BEGIN in text and pi.END in text
    assert f"](img/{exp}/" in text


def test_a_missing_image_fails(docs_copy: Path) -> None:
    img = _first_image(docs_copy)
    img.unlink()
    assert any(f"{img.name}, which is missing" in p for p in df.check(docs_copy))


def _retag(img: Path, description: str) -> None:
    with Image.open(img) as im:
        im.load()
        meta = PngImagePlugin.PngInfo()
        for k, v in im.text.items():
            meta.add_text(k, description if k == "Description" else v)
        im.save(img, pnginfo=meta)


def test_an_image_of_another_version_than_its_verdict_file_fails(docs_copy: Path) -> None:
    img = _first_image(docs_copy)
    prov = pi.image_provenance(img)
    _retag(img, prov.replace(f"qoslab {pi.version_of(prov)}", "qoslab 0.0.1+000000000000"))
    problems = df.check(docs_copy)
    assert any("made by qoslab 0.0.1+000000000000" in p and "verdicts/ard.json" in p for p in problems)


def test_a_quick_run_image_fails(docs_copy: Path) -> None:
    img = _first_image(docs_copy)
    _retag(img, "QUICK RUN (shortened runs, 3 seeds) · " + pi.image_provenance(img))
    assert any("made by a quick run" in p for p in df.check(docs_copy))


def test_a_stale_section_fails(docs_copy: Path) -> None:
    page = docs_copy / "experiments" / "fdd-red.md"
    text = page.read_text()
    a = text.index(pi.BEGIN)
    line = text.index("*Mirrors", a)
    page.write_text(text[:line] + "*Mirrors nothing at all.* " + text[line + len("*Mirrors") :])
    assert any("fdd-red.md: its figures section is stale" in p for p in df.check(docs_copy))


def test_a_section_whose_first_line_names_another_generator_is_stale_and_replaced(docs_copy: Path) -> None:
    # a page generated when the generator lived under another module name: check says stale,
    # `sections` replaces the whole section (one section left, with today's first line)
    page = docs_copy / "experiments" / "fdd-red.md"
    fresh = page.read_text()
    old = pi.BEGIN.replace("qoslab.verdicts.docfigures", "qoslab.elsewhere.docfigures")
    page.write_text(fresh.replace(pi.BEGIN, old))
    assert any("fdd-red.md: its figures section is stale" in p for p in df.check(docs_copy))
    df.sections(["fdd-red"], docs_copy)
    text = page.read_text()
    assert text.count("<!-- figures:begin") == 1 and text.count(pi.END) == 1
    assert text == fresh and df.check(docs_copy) == []


def test_verdict_lines_follow_the_verdict_file(docs_copy: Path) -> None:
    vf = docs_copy / "verdicts" / "ard.json"
    doc = json.loads(vf.read_text())
    for r in doc["verdicts"]:
        r["verdict"] = "does not reproduce"
    vf.write_text(json.dumps(doc))
    assert any("verdict lines differ" in p for p in df.check(docs_copy))


def test_images_are_within_the_budget() -> None:
    imgs = sorted((DOCS / pi.IMG).rglob("*.png"))
    assert imgs
    assert max(p.stat().st_size for p in imgs) <= pi.MAX_BYTES


@pytest.mark.parametrize(
    ("name", "label"),
    [
        ("fig8-std-aggregate", "Fig. 8"),
        ("fig3-6-frontiers", "Figs. 3–6"),
        ("fig7-table2-throughput", "Fig. 7 and Table 2"),
        ("fig9a-queue-red", "Fig. 9(a)"),
        ("table1-throughput", "Table 1"),
        ("fig3-throughput-A", "Fig. 3"),
    ],
)
def test_a_figure_name_says_what_it_mirrors(name: str, label: str) -> None:
    m = df.mirror_of(name)
    assert m is not None and m.label == label


def test_ours_only_figures_mirror_nothing() -> None:
    for name in ("sensitivity", "sweep-rtt-flows", "timeseries-4flows-stated", "window-estimates"):
        assert df.mirror_of(name) is None


def test_a_verdict_section_is_matched_by_figure_and_table_numbers() -> None:
    m = df.mirror_of("fig7-table2-throughput")
    assert m is not None
    assert m.matches("Sec. 4, Fig. 7") and m.matches("Table 2 (heterogeneous RTTs)")
    assert not m.matches("Sec. 4, Fig. 17") and not m.matches("Table 1")
    t1 = df.mirror_of("table1-throughput")
    assert t1 is not None and t1.matches("Sec. 4, Table I") and not t1.matches("Table II")


def test_paper_labels_and_compaction_keep_what_the_figure_says(tmp_path: Path) -> None:
    fig = panels(
        [Panel(lines=[Line([1, 2], [0.5, 0.6], "ours")], refs=[Ref(0.7, "paper, Table 1 (0.7)")])], title="t"
    )
    assert df.paper_labels(fig) == ["paper, Table 1 (0.7)"]
    src = tmp_path / "f.png"
    fig.savefig(src, dpi=300, metadata={"Description": "qoslab 9.9.9+abc · s · seeds 1-3"})
    size = pi.compact_png(src, tmp_path / "g.png", max_bytes=20_000)
    assert size <= 20_000 < src.stat().st_size
    assert pi.version_of(pi.image_provenance(tmp_path / "g.png")) == "9.9.9+abc"
    # scaled down, it keeps its dpi scaled with it: its text's size per pixel
    with Image.open(src) as big, Image.open(tmp_path / "g.png") as small:
        assert small.width < big.width
        assert small.info["dpi"][0] == pytest.approx(300 * small.width / big.width, rel=0.01)


def test_the_todays_tcp_figure_follows_the_sender_verdict_files(docs_copy: Path) -> None:
    vf = docs_copy / "verdicts" / "senders" / "ard-bbr.json"
    doc = json.loads(vf.read_text())
    doc["version"] = "0.0.1+000000000000"
    vf.write_text(json.dumps(doc))
    assert any("todays-tcp.md" in p and "the sender files are" in p for p in df.check(docs_copy))


def test_a_stale_todays_tcp_section_is_reported_once_not_once_per_figure(docs_copy: Path) -> None:
    """The todays-tcp page shows ten figures; its section was checked once per figure, so a
    stale section gave ten identical lines. A figure the page names that no study draws is named."""
    page = docs_copy / "experiments" / "todays-tcp.md"
    text = page.read_text()
    shown = text.count("](img/todays-tcp/")
    assert shown >= 10
    page.write_text(text.replace("## The verdicts under each sender, at a glance", "## Edited by hand"))
    stale = [p for p in df.check(docs_copy) if "todays-tcp.md" in p and "section is stale" in p]
    assert len(stale) == 1, stale
    page.write_text(text + "\n![old](img/todays-tcp/verdicts-by-sender.png)\n")
    named = [p for p in df.check(docs_copy) if "no study's figure" in p]
    assert len(named) == 1 and "verdicts-by-sender.png" in named[0], named


def test_the_full_length_figure_follows_the_studies_and_the_linux_flavours_full_runs(docs_copy: Path) -> None:
    """With linux-flavour files in docs/verdicts/senders-full/, the todays-tcp section gains the
    full-length figure, drawn from them and the studies' own files; the check names it when
    one of those files is of another version, and not when only a quick sender file is."""
    full = docs_copy / "verdicts" / "senders-full"
    full.mkdir(exist_ok=True)
    for p in full.glob("ard-bbr-tcp-linux*.json"):  # the committed one: this test writes its own
        p.unlink()
    src = json.loads(next((docs_copy / "verdicts" / "senders").glob("ard-bbr-tcp-linux*.json")).read_text())
    (full / "ard-bbr-tcp-linux.json").write_text(json.dumps(dict(src, quick=False)))
    out = sf.todays_tcp(docs_copy)
    assert f"{sf.FULL_FIGURE} ard, " in out
    page = (docs_copy / "experiments" / "todays-tcp.md").read_text()
    ard_full = sf.figure_name(sf.FULL_FIGURE, "ard")
    assert f"img/todays-tcp/{ard_full}.png" in page and "FULL-LENGTH RUNS" in page
    assert not [p for p in df.check(docs_copy) if "todays-tcp" in p]
    (full / "ard-bbr-tcp-linux.json").write_text(json.dumps(dict(src, quick=False, version="0.0.1+0")))
    probs = [p for p in df.check(docs_copy) if "todays-tcp" in p]
    # ard's full-length figure names the old version; no other study's figure is touched
    assert probs and all(ard_full in p for p in probs), probs


@pytest.mark.parametrize(
    ("exp", "figure"),
    [
        ("ard", "../../outside/secret"),
        ("ard", "/tmp/x"),
        ("../run/ard", "ok"),
        ("ard", "a/../../b"),
        ("ard=../outside", "ok"),
        ("../x=ard", "ok"),
    ],
)
def test_collect_reads_and_writes_only_inside_its_folders(
    tmp_path: Path, docs_copy: Path, exp, figure
) -> None:
    """An experiment or figure name with `..` or `/` (from the command line or a run's
    figures.json) is refused in one line before anything is read or written (`collect` copied
    `RUN/ard/../../outside/secret.png` to `docs/experiments/outside/secret.png`)."""
    (tmp_path / "outside").mkdir()
    Image.new("RGB", (10, 10)).save(tmp_path / "outside" / "secret.png")
    run = tmp_path / "run" / "ard"
    run.mkdir(parents=True)
    Image.new("RGB", (10, 10)).save(run / "ok.png")
    fig = {"name": figure, "provenance": "qoslab 0.1.0, seeds 1-2", "title": "t", "caption": "c"}
    (run / "figures.json").write_text(json.dumps({"figures": [fig]}))
    before = sorted(p for p in tmp_path.rglob("*") if p.is_file())
    with pytest.raises(SystemExit) as e:
        df.collect(tmp_path / "run", [exp], docs=docs_copy)
    assert "is not a plain file name" in str(e.value) and "\n" not in str(e.value)
    assert sorted(p for p in tmp_path.rglob("*") if p.is_file()) == before


def test_collect_takes_a_page_from_a_run_folder_of_another_name(tmp_path: Path, docs_copy: Path) -> None:
    """``NAME=FOLDER``: modern-aqm's page shows its linux-flavour run, whose outputs go to
    ``modern-aqm-tcp-linux-timing-testbed/``; the images and the section land on the page of NAME."""
    run = tmp_path / "run" / "ard-tcp-linux-timing-testbed"
    run.mkdir(parents=True)
    Image.new("RGB", (10, 10)).save(run / "only-here.png")
    fig = {"name": "only-here", "provenance": "qoslab 0.1.0+abc, seeds 1-2", "title": "t", "caption": "c"}
    (run / "figures.json").write_text(json.dumps({"figures": [fig]}))
    said = df.collect(tmp_path / "run", ["ard=ard-tcp-linux-timing-testbed"], docs=docs_copy)
    assert said and said[0].startswith("ard: 1 figures")
    assert (docs_copy / pi.IMG / "ard" / "only-here.png").exists()
    assert "img/ard/only-here.png" in (docs_copy / "experiments" / "ard.md").read_text()


def test_compact_png_keeps_a_figure_at_the_columns_width_before_it_shrinks_its_text(tmp_path: Path) -> None:
    """An image over the budget is shrunk to the text column's width (shown there at the same
    size, so its text stays as readable), then drawn with fewer colours, and only then made
    narrower. Before, it was shrunk by 15 % steps in full colour: ard's time series went to
    626 px, its 8 pt text shown at 8.7 px (the site's rule asks 12)."""
    src = DOCS / "experiments" / "img" / "ard" / "fig8-std-aggregate.png"
    with Image.open(src) as im:
        assert im.width > pi.COLUMN_PX / 0.85  # wider than one step above the column
        rgb = im.convert("RGB")
        dpi = im.info["dpi"]
    at_column, w = pi.png_bytes(rgb, pi.COLUMN_PX / rgb.width, 64, None, dpi)
    assert w == pi.COLUMN_PX
    budget = len(at_column) + 4096  # room for the provenance text chunks compact_png keeps
    size = pi.compact_png(src, tmp_path / "c.png", max_bytes=budget)
    with Image.open(tmp_path / "c.png") as out:
        assert out.width == pi.COLUMN_PX, out.width
        # the dpi scaled with the image: the text's size per pixel, which the site test reads
        assert out.info["dpi"][0] == pytest.approx(dpi[0] * pi.COLUMN_PX / rgb.width, rel=1e-3)
    assert size <= budget


def test_compact_png_leaves_its_loop_at_the_columns_width_whatever_the_width(tmp_path: Path) -> None:
    """At 1,097 px, ``1097 * (880 / 1097)`` is a hair above 880: a loop on that product never
    ended while the image stayed over the budget (the old loop, run here, spun). The loop reads the
    written width, a whole number."""
    import threading

    with Image.open(DOCS / "experiments" / "img" / "ard" / "fig8-std-aggregate.png") as im:
        rgb = im.convert("RGB")
    src = tmp_path / "w1097.png"
    rgb.resize((1097, round(rgb.height * 1097 / rgb.width))).save(src, dpi=(150, 150))
    assert 1097 * (pi.COLUMN_PX / 1097) > pi.COLUMN_PX
    at_column, _ = pi.png_bytes(Image.open(src).convert("RGB"), pi.COLUMN_PX / 1097, 64, None, (150, 150))
    done: list[int] = []
    worker = threading.Thread(
        target=lambda: done.append(pi.compact_png(src, tmp_path / "c.png", max_bytes=len(at_column) + 4096)),
        daemon=True,
    )
    worker.start()
    worker.join(60)
    assert done, "compact_png did not return within 60 s"
    with Image.open(tmp_path / "c.png") as out:
        assert out.width == pi.COLUMN_PX


def test_a_figure_the_rules_could_not_fix_is_reported_by_the_check(docs_copy: Path) -> None:
    """A figure whose fixed limits keep a reference out of view carries the rules' sentence in
    its figures.json record, and the check names the page and the image with it; a clean
    figure's record has no ``problems`` key (the committed manifests stay as they are)."""
    bad = panels(
        [Panel([Line([0, 1], [0, 1], "ours")], title="p", ylim=(0, 1), refs=[Ref(5.0, "paper")])], title="t"
    )
    rec = df.figure_record("x", bad, title="x", caption="", provenance="")
    assert rec["problems"] and "'paper'" in rec["problems"][0], rec
    clean = panels([Panel([Line([0, 1], [0, 1], "ours")], title="p")], title="t")
    assert "problems" not in df.figure_record("y", clean, title="y", caption="", provenance="")
    man_path = docs_copy / pi.IMG / "ard" / "figures.json"
    man = json.loads(man_path.read_text())
    man["figures"][0]["problems"] = rec["problems"]
    man_path.write_text(json.dumps(man))
    said = [p for p in df.check(docs_copy) if rec["problems"][0] in p]
    assert said == [
        f"{docs_copy}/experiments/ard.md: img/ard/{man['figures'][0]['name']}.png: {rec['problems'][0]}"
    ]
