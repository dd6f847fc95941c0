"""Regenerates every file (or generated block of a file) that comes from the core's declarations
or from the pages of docs/models/, so that a new mechanism needs no hand edit outside its own
files: the builder's kind classes, the scenario reference, the kind tables of
docs/scenario-format.md, docs/python-api.md and docs/capabilities.md, docs/outputs.md, the
examples index, the model pages' entries in mkdocs.yml's nav and on docs/index.md, and the
experiment pages' entries in the nav (from the list of studies, ``qoslab.studies.STUDIES``).

    .venv/bin/python tools/regenerate.py           # rewrite what is stale, list it
    .venv/bin/python tools/regenerate.py --check   # exit 1 and list what is stale

Each file also has its own staleness test (tests/test_schema.py, tests/test_outputs_doc.py,
tests/test_examples.py, tests/test_regenerate.py).
"""

from __future__ import annotations

import argparse
import re
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "docs" / "models"

NAV_BEGIN = "      # models:begin (generated from docs/models/*.md: python tools/regenerate.py)"
NAV_END = "      # models:end"
STUDIES_BEGIN = "      # studies:begin (generated from qoslab.studies.STUDIES: python tools/regenerate.py)"
STUDIES_END = "      # studies:end"
INDEX_BEGIN = "<!-- models:begin (generated from docs/models/*.md: python tools/regenerate.py) -->"
INDEX_END = "<!-- models:end -->"
CAPS_BEGIN = "<!-- queue-kinds:begin (generated from the core's registry: python tools/regenerate.py) -->"
CAPS_END = "<!-- queue-kinds:end -->"
LINUX_CC_BEGIN = "<!-- linux-cc:begin (generated from the declarations: python tools/regenerate.py) -->"
LINUX_CC_END = "<!-- linux-cc:end -->"


def model_pages() -> list[tuple[str, str]]:
    """Every page of docs/models/ as ``(label, path relative to docs/)``, by label: the label is
    the page's title up to its first " — " or ": " (``RED — Random Early Detection`` → RED)."""
    pages = []
    for p in MODELS.glob("*.md"):
        title = next((ln[2:].strip() for ln in p.read_text().splitlines() if ln.startswith("# ")), p.stem)
        label = re.split(r" — |: ", title, maxsplit=1)[0].strip()
        pages.append((label, f"models/{p.name}"))
    return sorted(pages, key=lambda x: (x[0].lower(), x[1]))


def _replace(text: str, begin: str, end: str, body: str, where: str) -> str:
    if begin not in text or end not in text:
        raise SystemExit(f"{where}: the generated block's markers ({begin!r}, {end!r}) are missing")
    head, rest = text.split(begin, 1)
    return f"{head}{begin}\n{body}{end}{rest.split(end, 1)[1]}"


def study_pages() -> list[tuple[str, str]]:
    """Every study's page as ``(label, path relative to docs/)``, in the registry's order."""
    from qoslab.studies import STUDIES

    return [(name, f"experiments/{name}.md") for name in STUDIES]


def nav(text: str) -> str:
    """mkdocs.yml with its Models entries and its studies' entries generated."""
    body = "".join(f"      - {label}: {path}\n" for label, path in model_pages())
    text = _replace(text, NAV_BEGIN, NAV_END, body, "mkdocs.yml")
    body = "".join(f"      - {label}: {path}\n" for label, path in study_pages())
    return _replace(text, STUDIES_BEGIN, STUDIES_END, body, "mkdocs.yml")


def index(text: str) -> str:
    """docs/index.md with its list of model pages generated."""
    links = ", ".join(f"[{label}]({path})" for label, path in model_pages())
    item = (
        "- One page per model, each saying what the paper or RFC specifies, what qoslab chose "
        f"where it is silent, and which tests pin it down: {links}."
    )
    body = textwrap.fill(
        item, width=96, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False
    )
    body += "\n"
    return _replace(text, INDEX_BEGIN, INDEX_END, body, "docs/index.md")


def capabilities(text: str) -> str:
    """docs/capabilities.md with its table of queue kinds generated from the core's registry:
    what each is, the gauges it publishes and whether the ns-3 export maps it."""
    from qoslab import schema

    rows = [
        "| queue `type` | what it is | gauges (series_queue columns) | ns-3 export |",
        "|---|---|---|---|",
    ]
    for kind, obj in schema.queue_kinds().items():
        gauges = ", ".join(f"`{g['name']}`" for g in obj.get("x-gauges", [])) or "—"
        ns3 = obj["x-ns3"]
        export = f"`{ns3['queue_disc']}`" if "queue_disc" in ns3 else f"no: {ns3['refused']}"
        rows.append(f"| `{kind}` | {obj.get('description', '')} | {gauges} | {export} |")
    return _replace(text, CAPS_BEGIN, CAPS_END, "\n".join(rows) + "\n", "docs/capabilities.md")


def linux_cc(text: str) -> str:
    """docs/models/tcp-linux.md with the linux flavour's `tcp.cc` keys (the kernel modules'
    parameters) generated from their declarations."""
    from qoslab import schema

    body = schema.flavour_cc_markdown("linux")
    return _replace(text, LINUX_CC_BEGIN, LINUX_CC_END, body, "docs/models/tcp-linux.md")


def _builder(family: str) -> Callable[[str], str]:
    def gen(_: str) -> str:
        from qoslab import schema
        from qoslab.builder import base, source

        return source.kinds_module(schema.json_schema(), base.UNIT_PATTERNS, family)

    return gen


def _reference(_: str) -> str:
    from qoslab import schema

    return schema.reference_markdown()


def _scenario_format(text: str) -> str:
    from qoslab import schema

    return schema.page_with_kinds(text)


def _python_api(text: str) -> str:
    from qoslab import schema
    from qoslab.builder import source

    return source.page_with_api_tables(text, schema.json_schema())


def _outputs(_: str) -> str:
    from qoslab import outputs

    return outputs.markdown()


def _examples(text: str) -> str:
    sys.path.insert(0, str(ROOT / "tests"))
    import test_examples

    return _replace(
        text, test_examples.BEGIN, test_examples.END, test_examples.index_table() + "\n", "docs/examples.md"
    )


#: Every generated file: path relative to the checkout → its text from its current text.
GENERATED: dict[str, Callable[[str], str]] = {
    "python/qoslab/builder/queues.py": _builder("queue"),
    "python/qoslab/builder/meters.py": _builder("meter"),
    "python/qoslab/builder/sources.py": _builder("source"),
    "docs/scenario-reference.md": _reference,
    "docs/scenario-format.md": _scenario_format,
    "docs/python-api.md": _python_api,
    "docs/outputs.md": _outputs,
    "docs/examples.md": _examples,
    "docs/capabilities.md": capabilities,
    "docs/index.md": index,
    "mkdocs.yml": nav,
    "docs/models/tcp-linux.md": linux_cc,
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only list the stale files (exit 1 if any)")
    a = ap.parse_args()
    stale = []
    for rel, gen in GENERATED.items():
        path = ROOT / rel
        old = path.read_text()
        new = gen(old)
        if new != old:
            stale.append(rel)
            if not a.check:
                path.write_text(new)
    for rel in stale:
        print(f"{'stale' if a.check else 'regenerated'}: {rel}")
    return 1 if a.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
