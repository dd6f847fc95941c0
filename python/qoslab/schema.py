"""The scenario format as a JSON Schema, generated from the Rust core's declarations (every
key with its type, unit, default, range and doc; every registered queue kind), and the
scenario reference page generated from it (``docs/scenario-reference.md``).

Editors that read JSON Schema for TOML (e.g. Taplo/Even Better TOML with a ``#:schema``
directive) complete and check scenario files with it::

    qoslab schema > qoslab-scenario.schema.json
"""

from __future__ import annotations

import functools
import json
from typing import Any

from qoslab import _core


def json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a scenario file."""
    schema: dict[str, Any] = _core.scenario_schema()
    return schema


@functools.cache
def queue_kinds() -> dict[str, dict[str, Any]]:
    """Every queue kind's schema object by its ``type``, in registry order: its keys, and what
    the kind owns outside the scenario (``x-gauges``: the gauges it publishes in the queue
    series; ``x-ns3``: ``{"queue_disc": TypeId}`` or ``{"refused": why}``)."""
    return {o["properties"]["type"]["const"]: o for o in json_schema()["$defs"]["queue"]["oneOf"]}


@functools.cache
def meter_kinds() -> dict[str, dict[str, Any]]:
    """Every meter kind's schema object by its ``type``, in registry order: its keys, and where
    else it runs (``x-exports``: ``ns2``, ns-2's dsRED policy ``{policy, colours, args,
    any_pre_colour, fixed_window_s?}`` or ``{refused: why}``; ``emulator``, a bool)."""
    return {o["properties"]["type"]["const"]: o for o in json_schema()["$defs"]["meter"]["oneOf"]}


@functools.cache
def source_kinds() -> dict[str, dict[str, Any]]:
    """Every traffic source kind's schema object by its ``type``, in registry order: its keys,
    where else it runs (``x-exports``) and how ns-2 generates it (``x-ns2-app``: ``{class,
    settings}``, when it exports there)."""
    return {o["properties"]["type"]["const"]: o for o in json_schema()["$defs"]["source"]["oneOf"]}


def source_exports(kind: str, target: str) -> bool:
    """Whether the source kind ``kind`` runs in ``target`` (``ns2``, ``ns3`` or ``emulator``), as
    the kind declares it (its ``x-exports``); False for a kind the core does not have."""
    face = source_kinds().get(kind, {}).get("x-exports", {})
    return bool(face.get(target, False))


@functools.cache
def flow_counters() -> list[dict[str, str]]:
    """Every per-flow counter a TCP sender declares in its own file, in the order of the flows
    table's columns: ``name``, ``unit``, ``description`` (with ``{span}`` where the span it is
    counted over goes), ``fold`` (how an arrival process's connections and the measurement window
    combine it: ``sum``) and the ``flavour`` (``tcp.flavour``) whose sender counts it."""
    counters: list[dict[str, str]] = json_schema()["$defs"]["flow_counters"]
    return counters


@functools.cache
def sender_kinds() -> dict[str, dict[str, Any]]:
    """Every TCP sender (``tcp.variant``) by name, in registry order, as its algorithm's file
    declares it: ``x-sack`` (SACK loss recovery), ``x-implies-ecn``, ``x-always-paces``, and
    where else it runs (``x-exports``: ``ns2`` ``{agent, sink, settings}``, ``ns3`` ``{type_id,
    defaults, needs_pacing?, stream?}``, ``kernel``, the Linux module; each absent when it has
    none)."""
    senders = json_schema()["$defs"]["sender"]
    return {name: senders["properties"][name] for name in senders["x-order"]}


def tcp_variants() -> list[str]:
    """The names ``tcp.variant`` accepts in this build of the core, in registry order."""
    return list(json_schema()["properties"]["tcp"]["properties"]["variant"]["enum"])


def json_text() -> str:
    return json.dumps(json_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


#: What a reference to one of the schema's definitions is, in the reference's words.
_REF_KINDS = {
    "curve": "curve table `{ min_th, max_th, max_p }` ([below](#curve-tables))",
    "meter": "meter table with a `type` ([Meters](#meters))",
    "queue": "queue table with a `type` ([Queues](#queues))",
    "size": 'size with unit (`"100KB"`) or a distribution table ([below](#size-distribution-tables))',
}


def _kind(v: dict[str, Any]) -> str:
    if "x-presets" in v:
        presets = " \\| ".join(f'`"{c}"`' for c in v["anyOf"][1]["enum"])
        return f"{_kind(v['anyOf'][0])}, or a preset: {presets} ([below](#timing-presets))"
    if "$ref" in v:
        return _REF_KINDS[v["$ref"].rsplit("/", 1)[-1]]
    if "enum" in v:
        return " \\| ".join(f'`"{c}"`' for c in v["enum"])
    t = v.get("type")
    if t == "string" and "examples" in v:
        return f'string with unit, e.g. `"{v["examples"][0]}"`'
    if t == "number":
        lo = v.get("minimum", v.get("exclusiveMinimum"))
        hi = v.get("maximum", v.get("exclusiveMaximum"))
        left = "[" if "minimum" in v else "("
        right = "]" if "maximum" in v else ")"
        if lo is None and hi is None:
            return "number"
        return f"number in {left}{_n(lo, '-∞')}, {_n(hi, '∞')}{right}"
    if t == "integer":
        if "maximum" in v:
            return f"integer in [{v.get('minimum', 0)}, {v['maximum']}]"
        return f"integer ≥ {v.get('minimum', 0)}"
    if t == "boolean":
        return "true \\| false"
    if t == "array":
        if v.get("items", {}).get("type") == "string":
            return 'list of codepoint names (`["AF11", "EF"]`)'
        return "list of tables"
    return "see below" if t == "object" else "string"


def _n(x: Any, default: str) -> str:
    if x is None:
        return default
    return f"{x:g}" if isinstance(x, float) else str(x)


def _rows(props: dict[str, Any], skip: tuple[str, ...] = ("type",)) -> list[str]:
    out = ["| key | value | meaning |", "|---|---|---|"]
    for k, v in props.items():
        if k in skip:
            continue
        desc = str(v.get("description", "")).replace("|", "\\|")
        out.append(f"| `{k}` | {_kind(v)} | {desc} |")
    return out


def flavour_cc_markdown(flavour: str) -> str:
    """The `tcp.cc` keys ``flavour``'s senders take, a table per variant, from :func:`json_schema`
    (for docs/models/tcp-linux.md)."""
    cc = json_schema()["properties"]["tcp"]["properties"]["cc"]["properties"]
    lines: list[str] = []
    for variant, obj in cc.items():
        for alt in obj["anyOf"]:
            if alt["x-flavour"] == flavour:
                lines += [f"`tcp.cc.{variant}`:", "", *_rows(alt["properties"], skip=()), ""]
    return "\n".join(lines)


def reference_markdown() -> str:
    """The scenario reference page, generated from :func:`json_schema`."""
    s = json_schema()
    p = s["properties"]
    lines = [
        "# Scenario reference",
        "",
        "<!-- Generated by `qoslab schema --markdown` from the Rust core's declarations; do not edit. -->",
        "",
        "Every key of a scenario file, with its type, unit, default and meaning. The same",
        "information as a JSON Schema: `qoslab schema`. A guide with examples:",
        "[scenario-format.md](scenario-format.md).",
        "",
        "## Top level",
        "",
        *_rows(p, skip=()),
    ]
    sections = [
        ("[tcp] (and a flow's `tcp` table)", p["tcp"]["properties"]),
        ("[measurement]", p["measurement"]["properties"]),
        ("[timing]", p["timing"]["properties"]),
        ("[[node]]", p["node"]["items"]["properties"]),
        ("[[link]]", p["link"]["items"]["properties"]),
        ("[[flow]]", p["flow"]["items"]["properties"]),
        ("[[arrivals]]", p["arrivals"]["items"]["properties"]),
        ("[[capture]]", p["capture"]["items"]["properties"]),
        ("[[conditioner]]", p["conditioner"]["items"]["properties"]),
    ]
    for title, props in sections:
        lines += ["", f"## {title}", "", *_rows(props, skip=())]
        if title == "[timing]":
            lines += ["", "### Timing presets", "", "The named values of `[timing] jitter`:", ""]
            lines += ["| preset | jitter | meaning |", "|---|---|---|"]
            for name, preset in props["jitter"]["x-presets"].items():
                lines.append(f'| `"{name}"` | `{preset["value"]}` | {preset["description"]} |')
    lines += ["", "## Queues", "", "A queue table has a `type`, one of:", ""]
    for q in s["$defs"]["queue"]["oneOf"]:
        kind = q["properties"]["type"]["const"]
        lines += [f'### `type = "{kind}"`', "", q.get("description", ""), "", *_rows(q["properties"]), ""]
        for key, v in q["properties"].items():
            item = v.get("items", {}).get("properties") if v.get("type") == "array" else None
            if item:
                lines += [f"Each table of `{key}`:", "", *_rows(item, skip=()), ""]
    lines += ["## Meters", "", "A conditioner's `meter` table has a `type`, one of:", ""]
    for m in s["$defs"]["meter"]["oneOf"]:
        kind = m["properties"]["type"]["const"]
        lines += [f'### `type = "{kind}"`', "", *_rows(m["properties"]), ""]
    lines += [
        "## Traffic sources",
        "",
        'A `[[flow]]` whose `type` is not `"tcp"` is an open-loop source; its kind\'s keys are',
        "written in the flow's table, beside the flow's own. A group (`count`) may give any of",
        "them as a list of one value per member. `type`, one of:",
        "",
    ]
    for src in s["$defs"]["source"]["oneOf"]:
        kind = src["properties"]["type"]["const"]
        runs = [w for w, yes in src.get("x-exports", {}).items() if yes]
        where = f"Also runs in: {', '.join(runs)}." if runs else "Runs in the simulator only."
        lines += [f'### `type = "{kind}"`', "", f"{src.get('description', '')} {where}", ""]
        lines += [*_rows(src["properties"]), ""]
    lines += [
        "## TCP variants' constants",
        "",
        "`cc` in `[tcp]` or a flow's `tcp` table: a table per variant, used when the flow runs that",
        "variant; a flow's table overrides `[tcp]`'s key by key. Its keys are the flow's flavour's:",
        "in the ns2 flavour the published constants (`cc.cubic = { beta = 0.8 }`), in the linux",
        "flavour the kernel module's parameters, in the kernel's units (`cc.cubic = { beta = 512 }`,",
        "of 1024). A key of the other flavour is refused. Defaults are the published constants and",
        "the kernel's defaults.",
        "",
    ]
    for variant, obj in p["tcp"]["properties"]["cc"]["properties"].items():
        for alt in obj["anyOf"]:
            head = f"### `cc.{variant}` ({alt['x-flavour']} flavour)"
            lines += [head, "", *_rows(alt["properties"], skip=()), ""]
    lines += ["## Curve tables", "", *_rows(s["$defs"]["curve"]["properties"]), ""]
    lines += [
        "## Size distribution tables",
        "",
        "A `size` (or a UDP flow's `packet_size`) may be a table instead of a fixed size:",
        "",
        *_rows(s["$defs"]["size"]["oneOf"][1]["properties"]),
        "",
    ]
    return "\n".join(lines).rstrip() + "\n"


#: The generated part of docs/scenario-format.md: every kind the core registers, by family.
KINDS_BEGIN = "<!-- kinds:begin (generated from the core's registries: qoslab.schema.kinds_markdown) -->"
KINDS_END = "<!-- kinds:end -->"


def kinds_markdown() -> str:
    """A table per family of every kind this build accepts (queues, meters, TCP variants,
    traffic sources), each with its one-line description, for docs/scenario-format.md."""
    sch = json_schema()
    defs, props = sch["$defs"], sch["properties"]

    def table(title: str, rows: list[tuple[str, str]], more: str) -> list[str]:
        out = [f"**{title}** ({more}):", "", "| kind | what it is |", "|---|---|"]
        out += [f"| `{name}` | {doc} |" for name, doc in rows]
        return [*out, ""]

    def one_of(family: str) -> list[tuple[str, str]]:
        return [(o["properties"]["type"]["const"], o.get("description", "")) for o in defs[family]["oneOf"]]

    variant = props["tcp"]["properties"]["variant"]

    def names(enum: list[str]) -> str:
        return ", ".join(f"`{v}`" for v in enum)

    lines = [
        *table(
            "Queues",
            one_of("queue"),
            "`type` of a `queue`, `queue_ab` or `queue_ba` table; "
            "keys in [the reference](scenario-reference.md#queues)",
        ),
        *table(
            "Meters",
            one_of("meter"),
            "`type` of a conditioner's `meter`; keys in [the reference](scenario-reference.md#meters)",
        ),
        f"**TCP variants** (`[tcp] variant`): {names(variant['enum'])}. {variant['description']}",
        "",
        *table(
            "Traffic sources",
            one_of("source"),
            '`type` of a `[[flow]]` other than `"tcp"`; keys in '
            "[the reference](scenario-reference.md#traffic-sources)",
        ),
        f"And `[[arrivals]]`: {props['arrivals']['description']}",
    ]
    return "\n".join(lines).rstrip() + "\n"


def page_with_kinds(page: str) -> str:
    """``page`` with its generated kinds block replaced by :func:`kinds_markdown`'s."""
    head, rest = page.split(KINDS_BEGIN, 1)
    return f"{head}{KINDS_BEGIN}\n{kinds_markdown()}{KINDS_END}{rest.split(KINDS_END, 1)[1]}"
