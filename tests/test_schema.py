"""The scenario JSON Schema and the generated reference page (docs/scenario-reference.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

import qoslab
from qoslab import schema

ROOT = Path(__file__).resolve().parents[1]


def test_reference_page_is_up_to_date():
    page = ROOT / "docs" / "scenario-reference.md"
    assert page.read_text() == schema.reference_markdown(), (
        "docs/scenario-reference.md is stale: regenerate it with "
        "`qoslab schema --markdown > docs/scenario-reference.md`"
    )


def test_scenario_format_lists_every_kind_the_core_registers():
    """docs/scenario-format.md's kind tables are generated from the schema; a kind added to a
    registry (or a description changed) without regenerating them fails here."""
    page = ROOT / "docs" / "scenario-format.md"
    text = page.read_text()
    assert text == schema.page_with_kinds(text), (
        "docs/scenario-format.md's kinds are stale: regenerate them with `python -c \"from pathlib "
        "import Path; from qoslab import schema; p = Path('docs/scenario-format.md'); "
        'p.write_text(schema.page_with_kinds(p.read_text()))"`'
    )
    for kind in ("codel", "fq_codel", "pie", "step", "srtcm", "cubic", "bbr", "trace", "pareto"):
        assert f"`{kind}`" in text.split(schema.KINDS_BEGIN)[1], kind


def test_schema_lists_every_queue_kind_and_its_keys():
    s = schema.json_schema()
    kinds = {q["properties"]["type"]["const"]: q for q in s["$defs"]["queue"]["oneOf"]}
    assert {"droptail", "red", "ared", "rio", "wred", "rio_plus_o", "dwred", "multi", "fdd_red"} <= set(kinds)
    red = kinds["red"]
    assert red["required"] == ["type", "min_th", "max_th"]
    assert red["properties"]["max_p"]["exclusiveMinimum"] == 0.0
    assert "Default: 0.1." in red["properties"]["max_p"]["description"]


def test_every_shipped_scenario_validates_against_the_schema():
    # A small validator for the subset of JSON Schema the generator uses (no dependency).
    s = schema.json_schema()

    def check(v, sch, path):
        if "$ref" in sch:
            sch = s["$defs"][sch["$ref"].rsplit("/", 1)[1]]
        if "oneOf" in sch and not all("type" in a.get("properties", {}) for a in sch["oneOf"]):
            # an untagged choice (a size: a string with a unit, or a distribution table)
            want = "string" if isinstance(v, str) else "object"
            alts = [a for a in sch["oneOf"] if a.get("type") == want]
            assert alts, f"{path}: {v!r} is neither alternative"
            return check(v, alts[0], path)
        if "oneOf" in sch:
            tag = v.get("type")
            alts = [a for a in sch["oneOf"] if a["properties"]["type"].get("const") == tag]
            assert alts, f"{path}: unknown type {tag!r}"
            return check(v, alts[0], path)
        if sch.get("type") == "object" or "properties" in sch:
            assert isinstance(v, dict), path
            for k in sch.get("required", []):
                assert k in v, f"{path}: missing {k}"
            for k, x in v.items():
                assert k in sch["properties"], f"{path}: unknown key {k}"
                check(x, sch["properties"][k], f"{path}.{k}")
        elif sch.get("type") == "array":
            assert isinstance(v, list), path
            for i, x in enumerate(v):
                check(x, sch["items"], f"{path}[{i}]")
        elif "enum" in sch:
            assert v in sch["enum"], f"{path}: {v!r}"
        elif isinstance(v, list) and sch.get("type") == "string":
            for i, x in enumerate(v):  # a group's per-item values (`count = N`)
                check(x, sch, f"{path}[{i}]")
        elif sch.get("type") == "string":
            assert isinstance(v, str), f"{path}: {v!r} is not a string"

    for p in sorted((ROOT / "scenarios").glob("*.toml")):
        check(qoslab.load_scenario(p).table(), s, p.name)
    # a multi-queue link: codepoints as names, numbers and lists; a queue table per physical queue
    multi = qoslab.load_scenario(ROOT / "scenarios" / "fdd-red-s1.toml").with_overrides(
        [
            'link.bottleneck.queue_ab={ type = "multi", scheduler = "wrr", queues = ['
            '{ dscp = ["AF11", "AF12"], weight = 2, queue = { type = "droptail" } }, '
            '{ dscp = ["EF"], queue = { type = "red", min_th = 5, max_th = 15 } }, '
            '{ default = true, queue = { type = "droptail", limit = "20pkts" } }] }'
        ]
    )
    check(multi.table(), s, "multi")
    bad = multi.table()
    (bottleneck,) = [lk for lk in bad["link"] if lk.get("name") == "bottleneck"]
    bottleneck["queue_ab"]["queues"][0]["queue"] = {"type": "droptail", "min_th": 5}
    with pytest.raises(AssertionError, match="unknown key min_th"):
        check(bad, s, "bad")


def test_the_reference_says_what_a_table_valued_key_holds():
    page = schema.reference_markdown()
    assert "| `meter` | meter table with a `type` ([Meters](#meters)) |" in page
    assert "| `queue_ab` | queue table with a `type` ([Queues](#queues)) |" in page
    multi = page.split('### `type = "multi"`')[1].split("### ")[0]
    assert "Each table of `queues`:" in multi
    assert "| `queue` | queue table with a `type`" in multi and "| `dscp` | list of codepoint names" in multi


def test_cli_prints_the_schema_and_the_reference():
    import json
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-m", "qoslab.cli", "schema"], capture_output=True, text=True, check=True
    ).stdout
    assert json.loads(out)["title"] == "qoslab scenario"
    cmd = [sys.executable, "-m", "qoslab.cli", "schema", "--markdown"]
    md = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    assert md == schema.reference_markdown()


@pytest.mark.parametrize("family", ["queue", "meter", "source"])
def test_the_builders_kind_classes_are_up_to_date(family):
    """python/qoslab/builder/queues.py, meters.py and sources.py are generated from the core's
    declarations; a parameter declared, changed or removed in the core without regenerating
    them fails here."""
    from qoslab.builder import base, source

    name = source.MODULES[family]
    module = ROOT / "python" / "qoslab" / name
    want = source.kinds_module(schema.json_schema(), base.UNIT_PATTERNS, family)
    assert module.read_text() == want, (
        f"python/qoslab/{name} is stale: regenerate it with "
        f"`qoslab schema --python {family} > python/qoslab/{name}`"
    )
    # the generation follows the schema: a bound moved in the core moves the builder's
    s = schema.json_schema()
    for obj in s["$defs"][family]["oneOf"]:
        for key, v in obj["properties"].items():
            if v.get("type") == "number":
                v.pop("exclusiveMaximum", None)
                v["maximum"] = 1234.5
                moved = source.kinds_module(s, base.UNIT_PATTERNS, family)
                assert f"    {key}: " in moved and "hi=1234.5" in moved and moved != want
                return
    raise AssertionError(f"no number among the {family} kinds")


def test_the_python_api_pages_kind_tables_are_up_to_date():
    from qoslab.builder import source

    page = ROOT / "docs" / "python-api.md"
    text = page.read_text()
    assert text == source.page_with_api_tables(text, schema.json_schema()), (
        "docs/python-api.md's kind tables are stale: regenerate them with `python -c \"from pathlib "
        "import Path; from qoslab import schema; from qoslab.builder import source; "
        "p = Path('docs/python-api.md'); "
        'p.write_text(source.page_with_api_tables(p.read_text(), schema.json_schema()))"`'
    )


def test_cli_prints_the_builders_kind_classes():
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "qoslab.cli", "schema", "--python", "meter"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    assert out == (ROOT / "python" / "qoslab" / "builder" / "meters.py").read_text()
