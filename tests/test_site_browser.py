"""The documentation site in a real browser: `make docs`'s mkdocs build, every page opened by a
headless Chromium (`make browser-deps` installs Debian's ``chromium-headless-shell``) in a
1280 × 1000 px window, from a local HTTP server as a reader gets it. A small script put into each
built page before the browser opens it measures the page once it has loaded and writes its
findings as JSON into the DOM, which the browser dumps (``--dump-dom``). The rules, each shown to
fail on a synthetic page (of the real theme and CSS) that breaks it:

1. **Renders**: the page's main region is laid out (height > 0) with its title (the ``h1``
   the built page holds) visible, and no script error is raised (``window.onerror``, rejected
   promises).
2. **No missing image**: every ``img`` of the main region has loaded (``complete`` and
   ``naturalWidth > 0``).
3. **No table scrolls**: a table (or the theme's ``.wy-table-responsive`` wrapper around it) is
   no wider than the text column plus :data:`SLACK_PX`, so no column is off-screen or behind a
   sideways scroll bar.
4. **Figures readable at the column width**: a figure's smallest text that carries data (tick
   labels, legend) shown at ``clientWidth / naturalWidth`` of its natural size is at least
   :data:`READABLE` × the body text's size (CSS px, measured on the page: 16 px, so 12 px in a
   text column of 876 px at this window). The text's size in
   pixels at natural size is ``points × dpi / 72``, where dpi is the PNG's own (its ``pHYs``
   chunk, which matplotlib writes) or else its generator's, and points the generator's
   smallest tick or legend size (:data:`GENERATORS`):

   - ``docs/experiments/img/verdicts/``: :func:`qoslab.verdicts.forest.forest` (its ``DPI``
     and ``TEXT_PT``);
   - ``docs/validation/linux*/``: :mod:`qoslab.emulation.validation_report` (90 dpi; legend and title 10 pt);
   - ``docs/experiments/img/todays-tcp/verdicts-*``: the per-study verdicts-by-sender figures of
     :mod:`qoslab.verdicts.docfigures` (110 dpi; 8 pt labels; 8 in wide);
   - everything else: :func:`qoslab.report.figures.panels` (``qoslab plot``, the studies'
     figures; saved at 150 dpi; tick labels and legend 8 pt).

   ``page_images.compact_png`` keeps the dpi, scaled with the image, when it shrinks one. An
   image it shrank before it did so has no ``pHYs`` chunk: its shrink is taken as the largest
   of compact_png's steps (``0.85**k``) that makes its width before them a whole number of
   tenths of an inch (whole inches for docfigures' todays-tcp figures) at the generator's dpi
   (:func:`shrink_of`), which is never smaller than the true one (lenient if anything).

The site is built once per module into a temporary folder (about 4 s); the pages are opened by
three browsers at a time (about 20 s on an idle two-core machine). Failures the lead's pages or the study
figures still carry until they are regenerated are listed in :data:`KNOWN`, each with what
fixes it: a failure not listed fails the test, and so does a listed one that no longer occurs.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest
import yaml
from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
#: The window the pages are checked in (CSS px).
WINDOW = (1280, 1000)
#: How far (CSS px) a table may exceed its column before it counts as scrolling: rounding.
SLACK_PX = 2.0
#: A figure's data text shown at least this fraction of the body text's size.
READABLE = 0.75
#: Where the page script writes its findings.
MARK = "qoslab-site-check"


@dataclass(frozen=True)
class Generator:
    """Who draws the figures under ``prefix`` (a path under docs/), at what dpi, with what
    smallest tick or legend text (points), in figures a whole number of ``step_in`` wide."""

    prefix: str
    name: str
    dpi: float
    text_pt: float
    step_in: float = 0.1


def _generators() -> tuple[Generator, ...]:
    from qoslab.verdicts import forest

    return (
        Generator("experiments/img/verdicts/", "qoslab.verdicts.forest", forest.DPI, forest.TEXT_PT),
        Generator("validation/linux", "qoslab.emulation.validation_report", 90.0, 10.0),
        Generator(
            "experiments/img/todays-tcp/verdicts-",
            "qoslab.verdicts.docfigures (verdicts by sender)",
            110.0,
            8.0,
            1.0,
        ),
        Generator("", "qoslab.report.figures.panels", 150.0, 8.0),
    )


GENERATORS = _generators()

# The checking script, put first into each page's <head>: it records script errors from the
# start and measures the page after its load event.
SCRIPT = """
<script>
(function () {
  var errors = [];
  window.addEventListener("error", function (e) {
    if (e.target && e.target !== window && e.target.tagName) { return; }
    errors.push(String(e.message || "script error"));
  }, true);
  window.addEventListener("unhandledrejection", function (e) {
    errors.push("unhandled rejection: " + String(e.reason));
  });
  function px(v) { return parseFloat(v) || 0; }
  function measure() {
    var main = document.querySelector("[role=main]") || document.querySelector("main");
    var out = {errors: errors, main: null, images: [], tables: []};
    if (main) {
      var cs = getComputedStyle(main);
      var column = main.clientWidth - px(cs.paddingLeft) - px(cs.paddingRight);
      var h1 = main.querySelector("h1");
      var p = main.querySelector("p") || main;
      out.main = {
        height: main.getBoundingClientRect().height,
        column: column,
        body_px: px(getComputedStyle(p).fontSize),
        h1: h1 ? h1.textContent.replace(/\\u00b6/g, "").trim() : null,
        h1_height: h1 ? h1.getBoundingClientRect().height : 0
      };
      main.querySelectorAll("img").forEach(function (img) {
        out.images.push({src: img.getAttribute("src"), url: img.src, complete: img.complete,
                         natural: img.naturalWidth, shown: img.clientWidth});
      });
      main.querySelectorAll("table").forEach(function (t) {
        var wrap = t.closest(".wy-table-responsive");
        var cell = t.querySelector("th, td");
        out.tables.push({
          head: cell ? cell.textContent.trim().slice(0, 40) : "",
          width: Math.max(t.scrollWidth, t.getBoundingClientRect().width),
          wrap_scroll: wrap ? wrap.scrollWidth : 0,
          wrap_client: wrap ? wrap.clientWidth : 0
        });
      });
    }
    var pre = document.createElement("pre");
    pre.id = "MARK";
    pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
  }
  window.addEventListener("load", function () { setTimeout(measure, 0); });
})();
</script>
""".replace("MARK", MARK)


# -- the browser ------------------------------------------------------------------------------------


def browser() -> list[str] | None:
    """The command that dumps a page's DOM after it has loaded, or None without a browser."""
    w, h = WINDOW
    common = [f"--window-size={w},{h}", "--virtual-time-budget=3000", "--no-sandbox", "--hide-scrollbars"]
    shell = shutil.which("chromium-headless-shell")
    if shell:
        return [shell, "--headless", *common, "--dump-dom"]
    full = shutil.which("chromium")
    if full:
        return [full, "--headless=new", "--disable-gpu", *common, "--dump-dom"]
    return None


def build_site(docs_dir: Path, config: Path, out: Path, strict: bool = True) -> None:
    """``mkdocs build`` of ``config`` (its docs in ``docs_dir``) into ``out``."""
    cmd = [sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(config), "-d", str(out)]
    r = subprocess.run(
        [*cmd, *(["--strict"] if strict else [])], capture_output=True, text=True, cwd=docs_dir.parent
    )
    assert r.returncode == 0, f"mkdocs build failed:\n{r.stdout}{r.stderr}"


def pages_of(site: Path) -> list[Path]:
    skip = {"404.html", "search.html"}
    return sorted(p for p in site.rglob("*.html") if p.relative_to(site).as_posix() not in skip)


def static_h1(text: str) -> str | None:
    m = re.search(r"<h1[^>]*>(.*?)</h1>", text, re.S)
    if m is None:
        return None
    return html.unescape(re.sub(r"<[^>]+>", "", m.group(1))).replace("\u00b6", "").strip()


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        # a browser that has what it needs closes its other connections mid-reply
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


@contextmanager
def serving(site: Path) -> Iterator[str]:
    """``site`` served over HTTP on a free local port (as a reader's browser gets it: the
    theme's search worker does not start from file:// pages); yields the base URL."""
    server = _Server(("127.0.0.1", 0), partial(_Quiet, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def inspect(cmd: list[str], site: Path, base: str, page: Path) -> dict[str, Any]:
    """Opens ``page`` of ``site`` (served at ``base``, with the checking script put in) and
    returns the script's findings (``{"missing": ...}`` when the script wrote none) with the
    page's own title as ``h1_built``."""
    text = page.read_text()
    h1 = static_h1(text)
    if MARK not in text:
        page.write_text(text.replace("<head>", "<head>" + SCRIPT, 1))
    url = base + page.relative_to(site).as_posix()
    r = subprocess.run([*cmd, url], capture_output=True, text=True, timeout=60)
    m = re.search(rf'<pre id="{MARK}">(.*?)</pre>', r.stdout, re.S)
    if m is None:
        return {"missing": f"no findings in the dumped page (exit {r.returncode})", "h1_built": h1}
    found: dict[str, Any] = json.loads(html.unescape(m.group(1)))
    found["h1_built"] = h1
    return found


def inspect_all(cmd: list[str], site: Path) -> dict[Path, dict[str, Any]]:
    """The findings on every page of ``site`` (three browsers at a time)."""
    pages = pages_of(site)
    with serving(site) as base, ThreadPoolExecutor(max_workers=3) as pool:
        return dict(zip(pages, pool.map(lambda p: inspect(cmd, site, base, p), pages), strict=True))


# -- the rules --------------------------------------------------------------------------------------


def generator_of(docs_path: str) -> Generator:
    return next(g for g in GENERATORS if docs_path.startswith(g.prefix))


def shrink_of(width_px: int, g: Generator) -> float:
    """The factor ``compact_png`` shrank a figure without a ``pHYs`` chunk by: the largest
    ``0.85**k`` (its steps) that makes the figure's width before it a whole number of
    ``g.step_in`` at ``g.dpi``, within the shrink's rounding. The true factor is one of those,
    so this is never smaller than it: the rule is lenient if anything."""
    step = g.dpi * g.step_in
    for k in range(10):
        f = 0.85**k
        before = width_px / f
        if abs(before - step * round(before / step)) <= 0.5 / f + 0.01:
            return f
    return 1.0


def text_px(image: Path, docs_path: str) -> tuple[float, str]:
    """The figure's smallest data text in pixels at its natural size, and how that was read."""
    g = generator_of(docs_path)
    with Image.open(image) as im:
        dpi, width = im.info.get("dpi"), im.width
    if dpi:
        return g.text_pt * float(dpi[0]) / 72.0, f"{g.text_pt:g} pt at its {float(dpi[0]):.0f} dpi ({g.name})"
    f = shrink_of(width, g)
    shrunk = f" shrunk to {f:.2f}" if f < 1.0 else ""
    return g.text_pt * g.dpi * f / 72.0, f"{g.text_pt:g} pt at {g.dpi:g} dpi{shrunk} ({g.name})"


def problems(page: Path, site: Path, found: Mapping[str, Any]) -> list[str]:
    """What breaks a rule on ``page`` (see the module's text), one line each."""
    if "missing" in found:
        return [f"does not render: {found['missing']}"]
    out = [f"script error: {e}" for e in found["errors"]]
    main = found["main"]
    if main is None:
        return [*out, "does not render: no main region"]
    if main["height"] <= 0 or main["h1_height"] <= 0:
        out.append(
            f"does not render: main region {main['height']:.0f} px high, title {main['h1_height']:.0f} px"
        )
    if main["h1"] != found["h1_built"]:
        out.append(f"does not render: title {main['h1']!r}, the built page's is {found['h1_built']!r}")
    for img in found["images"]:
        if not img["complete"] or img["natural"] <= 0:
            out.append(f"image missing: {img['src']}")
            continue
        out += _figure(img, site, main)
    for t in found["tables"]:
        width = max(t["width"], t["wrap_scroll"])
        if width > main["column"] + SLACK_PX or t["wrap_scroll"] > t["wrap_client"] + SLACK_PX:
            out.append(
                f"table scrolls: the table headed {t['head']!r} is {width:.0f} px wide "
                f"in a {main['column']:.0f} px column"
            )
    return out


def _figure(img: Mapping[str, Any], site: Path, main: Mapping[str, Any]) -> list[str]:
    parts = urlsplit(str(img["url"]))
    if parts.hostname != "127.0.0.1":
        return [f"image not from the site: {img['src']}"]
    docs_path = unquote(parts.path).lstrip("/")
    path = site / docs_path
    size, how = text_px(path, docs_path)
    scale = min(1.0, img["shown"] / img["natural"])
    need = READABLE * main["body_px"]
    if scale * size < need:
        return [
            f"figure unreadable: {docs_path} ({img['natural']} px) shown at {img['shown']} px: text "
            f"{how} = {size:.1f} px, shown at {scale * size:.1f} px < {need:.1f} px "
            f"({READABLE:g} × body {main['body_px']:g} px)"
        ]
    return []


# -- the real site ----------------------------------------------------------------------------------

_STILL: tuple[tuple[str, str, tuple[str, ...], str], ...] = ()
#: Failures the site still has, each awaiting a figure redrawn by a long run or the lead's
#: page: (page, the failure line's start) and what fixes it.
KNOWN: dict[tuple[str, str], str] = {
    (page, f"figure unreadable: {folder}{name}.png "): why
    for page, folder, names, why in _STILL
    for name in names
}


@pytest.fixture(scope="module")
def cmd() -> list[str]:
    c = browser()
    if c is None:
        pytest.skip("no headless browser (chromium-headless-shell or chromium): run `make browser-deps`")
    return c


@pytest.fixture(scope="module")
def site_findings(
    cmd: list[str], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, dict[Path, dict[str, Any]]]:
    site = tmp_path_factory.mktemp("site")
    build_site(DOCS, ROOT / "mkdocs.yml", site)
    return site, inspect_all(cmd, site)


def test_every_page_of_the_site_passes_in_the_browser(
    site_findings: tuple[Path, dict[Path, dict[str, Any]]],
) -> None:
    site, findings = site_findings
    assert len(findings) >= 40, f"only {len(findings)} pages built"
    report: list[str] = []
    new: list[str] = []
    seen: set[tuple[str, str]] = set()
    for page, found in sorted(findings.items()):
        name = page.relative_to(site).as_posix()
        for line in problems(page, site, found):
            report.append(f"{name}: {line}")
            hit = [k for k in KNOWN if k[0] == name and line.startswith(k[1])]
            seen.update(hit)
            if not hit:
                new.append(f"{name}: {line}")
    print(
        f"\n{len(findings)} pages checked in the browser; {len(report)} failures "
        f"({len(report) - len(new)} known)"
    )
    print("\n".join(report))
    gone = [f"{p}: {frag}" for p, frag in KNOWN if (p, frag) not in seen]
    assert not new, "pages that fail in the browser:\n" + "\n".join(new)
    assert not gone, "known failures that no longer occur (remove them from KNOWN):\n" + "\n".join(gone)


def test_the_generators_of_the_figures_are_known() -> None:
    """Every figure on the site falls under a generator whose dpi and text size it states."""
    for png in DOCS.rglob("*.png"):
        g = generator_of(png.relative_to(DOCS).as_posix())
        assert g.dpi > 0 and g.text_pt > 0, png


def test_the_shrink_of_a_figure_without_its_dpi_is_read_from_its_width() -> None:
    panels_gen = generator_of("experiments/img/x/y.png")
    assert shrink_of(1380, panels_gen) == 1.0  # 9.2 in at 150 dpi, as saved
    for k in (1, 2, 5):
        assert shrink_of(round(1380 * 0.85**k), panels_gen) >= 0.85**k
    assert shrink_of(round(1380 * 0.85**5), panels_gen) < 1.0
    senders = generator_of("experiments/img/todays-tcp/verdicts-by-sender.png")
    assert shrink_of(683, senders) == pytest.approx(0.85**5)  # 14 in at 110 dpi


# -- each rule fails on a page made to break it ---------------------------------------------------


def _png(path: Path, width: int, dpi: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (width, max(1, width // 3)), "white").save(path, dpi=(dpi, dpi))


def _long_table(columns: int, *, code: bool) -> str:
    """A Markdown table of one row and ``columns`` columns of long names (its values as inline
    code with ``code``)."""
    tick = "`" if code else ""
    head = " | ".join(f"column_{i}_{'x' * 12}" for i in range(columns))
    row = " | ".join(f"{tick}value_{i}_{'y' * 14}{tick}" for i in range(columns))
    return f"| {head} |\n|" + "---|" * columns + f"\n| {row} |\n"


BROKEN = {
    "good.md": "# Good\n\nText.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n![small](img/small.png)\n",
    "script-error.md": "# Script error\n\nText.\n\n<script>null.boom();</script>\n",
    "hidden.md": "# Hidden\n\nText.\n\n<style>[role=main] { display: none; }</style>\n",
    "missing-image.md": '# Missing image\n\nText.\n\n<img src="img/not-there.png" alt="gone">\n',
    # 40 columns: wider than the column even with every cell wrapped to a character or two
    "wide-table.md": "# Wide table\n\nText.\n\n" + _long_table(40, code=False),
    "wide-figure.md": "# Wide figure\n\nText.\n\n![wide](img/wide.png)\n",
    # breaks no rule: 12 columns of long names and inline code fit once their cells wrap
    "long-names.md": "# Long names\n\nText.\n\n" + _long_table(12, code=True),
}


@pytest.fixture(scope="module")
def broken_findings(
    cmd: list[str], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, dict[str, list[str]]]:
    """A site of the real theme, its settings and CSS (from mkdocs.yml) with one page per broken
    rule, and one that breaks none."""
    root = tmp_path_factory.mktemp("broken")
    docs = root / "docs"
    shutil.copytree(DOCS / "css", docs / "css")
    for name, text in BROKEN.items():
        (docs / name).write_text(text)
    _png(docs / "img" / "small.png", 600, 150.0)
    _png(docs / "img" / "wide.png", 3000, 150.0)
    real = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    keep = {k: real[k] for k in ("theme", "extra_css", "markdown_extensions") if k in real}
    config = root / "mkdocs.yml"
    config.write_text(yaml.safe_dump({"site_name": "broken", "docs_dir": "docs", **keep}))
    site = root / "site"
    build_site(docs, config, site, strict=False)
    findings = inspect_all(cmd, site)
    return site, {p.relative_to(site).as_posix(): problems(p, site, f) for p, f in findings.items()}


@pytest.mark.parametrize(
    ("page", "expected"),
    [
        ("script-error/index.html", "script error:"),
        ("hidden/index.html", "does not render: main region 0 px high"),
        ("missing-image/index.html", "image missing: img/not-there.png"),
        ("wide-table/index.html", "table scrolls: the table headed 'column_0_xxxxxxxxxxxx'"),
        ("wide-figure/index.html", "figure unreadable: img/wide.png (3000 px)"),
    ],
)
def test_a_page_that_breaks_a_rule_fails_it(
    broken_findings: tuple[Path, dict[str, list[str]]], page: str, expected: str
) -> None:
    _, found = broken_findings
    assert [line for line in found[page] if line.startswith(expected)], found[page]
    # and only that rule
    assert len(found[page]) == 1, found[page]


def test_a_page_that_breaks_no_rule_passes(broken_findings: tuple[Path, dict[str, list[str]]]) -> None:
    _, found = broken_findings
    assert found["good/index.html"] == []
    assert found["long-names/index.html"] == []
