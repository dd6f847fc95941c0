"""The source of ``qoslab/builder/queues.py``, ``qoslab/builder/meters.py`` and
``qoslab/builder/sources.py``, generated from the core's JSON Schema: a builder class per queue
discipline, meter kind and traffic source kind, whose fields, value kinds, ranges, choices,
required-ness and docstrings all come from the core's one declaration of each parameter
(``Decl``/``Param`` in the Rust kind's file; the class name is its registry line's ``as``; a
source class also carries where else its kind runs, ``exports``).

    qoslab schema --python queue > python/qoslab/builder/queues.py
    qoslab schema --python meter > python/qoslab/builder/meters.py
    qoslab schema --python source > python/qoslab/builder/sources.py

``tests/test_schema.py`` fails when a module is stale. The multi queue and its physical
queues are written by hand in :mod:`qoslab.builder.base` (their tables hold other queues).
"""

from __future__ import annotations

import re
import textwrap
from typing import Any

#: Kinds whose classes are written by hand (:mod:`qoslab.builder.base`), in the family's registry.
HAND_WRITTEN = {"multi": "MultiQueue"}
#: A key the schema cannot type by itself: (kind, key) → the builder's value kind.
_OVERRIDES = {("twam", "rates"): "rates"}
_REFS = {"curve": "curve", "queue": "queue", "meter": "meter", "size": "size"}
_UNITS = {
    "duration": "Duration",
    "rate": "Rate",
    "bytes": "Size",
    "limit": "Limit",
}


def _q(s: str) -> str:
    """A string literal in double quotes (the style of the hand-written modules)."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _value_kind(kind: str, key: str, v: dict[str, Any], patterns: dict[str, str]) -> str:
    if (kind, key) in _OVERRIDES:
        return _OVERRIDES[(kind, key)]
    if "$ref" in v:
        return _REFS[v["$ref"].rsplit("/", 1)[-1]]
    if "enum" in v:
        return "choice"
    if "pattern" in v:
        return next(k for k, p in patterns.items() if p == v["pattern"])
    t = v.get("type")
    return {"number": "number", "integer": "integer", "boolean": "bool"}.get(str(t), "name")


def _annotation(vk: str, v: dict[str, Any]) -> str:
    if vk == "choice":
        return "Literal[" + ", ".join(_q(c) for c in v["enum"]) + "]"
    if vk in _UNITS:
        return _UNITS[vk]
    return {
        "number": "float",
        "integer": "int",
        "bool": "bool",
        "curve": "Curve",
        "rates": "dict[str, Rate]",
        "name": "str",
    }[vk]


def _meta_args(vk: str, v: dict[str, Any], key: str, field_name: str, per_member: bool) -> str:
    args = [_q(vk)]
    if key != field_name:
        args.append(f"key={_q(key)}")
    if vk == "choice":
        args.append(f"choices={_annotation(vk, v)}")
    if vk == "number":
        lo = v.get("minimum", v.get("exclusiveMinimum"))
        hi = v.get("maximum", v.get("exclusiveMaximum"))
        if lo is not None:
            args.append(f"lo={float(lo)!r}")
        if hi is not None:
            args.append(f"hi={float(hi)!r}")
        if "exclusiveMinimum" in v:
            args.append("lo_open=True")
        if "exclusiveMaximum" in v:
            args.append("hi_open=True")
    if vk == "integer":
        args.append(f"lo={v.get('minimum', 0)}")
        if "maximum" in v:
            args.append(f"hi={v['maximum']}")
    if per_member:
        args.append("per_member=True")
    return ", ".join(args)


def _field(
    kind: str, key: str, v: dict[str, Any], required: bool, per_member: bool, patterns: dict[str, str]
) -> str:
    name = f"{key}_" if key in ("in", "type") else key
    vk = _value_kind(kind, key, v, patterns)
    ann = _annotation(vk, v)
    per = per_member and vk != "rates"
    if per:
        ann = f"PerMember[{ann}]"
    meta = _meta_args(vk, v, key, name, per)
    if required:
        line = f"    {name}: {ann} = field(metadata=req({meta}))"
    else:
        line = f"    {name}: {ann} | None = opt({meta})"
    if len(line) > 110:
        call = "req" if required else "opt"
        head = f"    {name}: {ann}" + ("" if required else " | None")
        inner = (
            f"field(metadata={call}(\n        {meta}\n    ))"
            if required
            else f"{call}(\n        {meta}\n    )"
        )
        line = f"{head} = {inner}"
    return line


def _wrap(text: str, indent: str, first: str = "") -> list[str]:
    return textwrap.wrap(
        text,
        width=96,
        initial_indent=indent + first,
        subsequent_indent=indent + "    ",
        break_on_hyphens=False,
    )


def _docstring(obj: dict[str, Any], kind: str) -> list[str]:
    desc = obj.get("description", "").replace("\\", "\\\\")
    out = textwrap.wrap(
        f'{desc} ``type = "{kind}"``.', width=96, initial_indent='    """', subsequent_indent="    "
    )
    out += ["", "    Attributes:"]
    for key in obj["x-order"]:
        v = obj["properties"][key]
        name = f"{key}_" if key == "in" else key
        doc = str(v.get("description", "")).replace("\\", "\\\\")
        if name != key:
            doc = f"(the key ``{key}``) {doc}"
        out += _wrap(doc, "        ", f"{name}: ")
    return [*out, '    """']


def _class(obj: dict[str, Any], family: str, patterns: dict[str, str]) -> list[str]:
    kind = obj["properties"]["type"]["const"]
    cls = obj["title"]
    base = _BASES[family][0]
    lines = [
        "",
        "",
        "@dataclass(kw_only=True, repr=False)",
        f"class {cls}({base}):",
        *_docstring(obj, kind),
        "",
    ]
    lines.append(f"    KIND = {_q(kind)}")
    if "x-exports" in obj and family == "source":  # a meter's are the exporters' (schema.meter_kinds)
        exports = ", ".join(f"{_q(k)}: {v!r}" for k, v in obj["x-exports"].items())
        lines.append(f"    exports = {{{exports}}}")
    required = set(obj.get("required", []))
    for key in obj["x-order"]:
        v = obj["properties"][key]
        lines.append(_field(kind, key, v, key in required, family != "queue", patterns))
    return lines


#: The generated module of each family, under python/qoslab/.
MODULES = {"queue": "builder/queues.py", "meter": "builder/meters.py", "source": "builder/sources.py"}
#: Each family's base class and registry constant.
_BASES = {"queue": ("Queue", "QUEUES"), "meter": ("Meter", "METERS"), "source": ("Source", "SOURCES")}


def kinds_module(schema: dict[str, Any], patterns: dict[str, str], family: str) -> str:
    """The generated module of ``family`` (``"queue"``, ``"meter"`` or ``"source"``,
    :data:`MODULES`), from the core's ``schema`` (:func:`qoslab.schema.json_schema`);
    ``patterns`` are the builder's unit patterns, by value kind."""
    base, const = _BASES[family]
    hand = sorted({c for k, c in HAND_WRITTEN.items() if family == "queue"})
    names = ["Curve", "Duration", "Limit", *hand, "PerMember", base, "Rate", "Size", "opt", "req"]
    body: list[str] = []
    registry = []
    for obj in schema["$defs"][family]["oneOf"]:
        kind = obj["properties"]["type"]["const"]
        if kind in HAND_WRITTEN:
            registry.append(HAND_WRITTEN[kind])
            continue
        body += _class(obj, family, patterns)
        registry.append(obj["title"])
    code = "\n".join(ln for ln in body if ln.startswith("class ") or "opt(" in ln or "req(" in ln)
    code += " ".join([*registry, base])
    used = [n for n in names if re.search(rf"\b{n}\b", code)]
    lines = [
        f'"""The scenario builder\'s {family} classes, one per {family} kind the core registers.',
        "",
        f"Generated by ``qoslab schema --python {family}`` (qoslab.builder.source) from the Rust",
        "core's declarations; do not edit. Use them through :mod:`qoslab.builder`.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from dataclasses import dataclass, field",
        "from typing import Literal",
        "",
        "from qoslab.builder.base import (",
        *(f"    {n}," for n in sorted(used, key=lambda n: (n.startswith("_"), n))),
        ")",
        *body,
    ]
    lines += [
        "",
        "",
        f"#: Every {family} kind, by its ``type``, in the core's registry order.",
        f"{const}: dict[str, type[{base}]] = {{",
        *(f"    {c}.KIND: {c}," for c in registry),
        "}",
        f"{base}.KINDS = dict({const})",
    ]
    if family == "source":
        flow_types = ", ".join(_q(k) for k in ["tcp", *(c for c in registry_tags(schema, family))])
        variants = ", ".join(_q(v) for v in schema["$defs"]["sender"]["x-order"])
        lines += [
            "",
            "#: A ``[[flow]]``'s ``type``: ``tcp`` or a source kind.",
            f"FlowType = Literal[{flow_types}]",
            "#: A TCP flow's ``variant``: every sender the core registers, in its registry order.",
            f"TcpVariant = Literal[{variants}]",
        ]
    return "\n".join(lines) + "\n"


def registry_tags(schema: dict[str, Any], family: str) -> list[str]:
    """The ``type`` of every kind of ``family`` in the schema, in the core's registry order."""
    return [obj["properties"]["type"]["const"] for obj in schema["$defs"][family]["oneOf"]]


def api_tables(schema: dict[str, Any]) -> str:
    """The kind tables of docs/python-api.md: each queue and meter ``type`` with its class."""

    def table(family: str) -> list[str]:
        rows = ["| `type` | class | what it is |", "|---|---|---|"]
        for obj in schema["$defs"][family]["oneOf"]:
            kind = obj["properties"]["type"]["const"]
            desc = str(obj.get("description", "")).replace("|", "\\|")
            rows.append(f'| `"{kind}"` | `{obj["title"]}` | {desc} |')
        return rows

    lines = [
        "Queues (a link's `queue`, `queue_ab`, `queue_ba`; `builder.QUEUES` maps each type to its",
        "class):",
        "",
        *table("queue"),
        "",
        "Meters and markers (a conditioner's `meter`; `builder.METERS`):",
        "",
        *table("meter"),
        "",
        "Traffic sources (a flow's `source`, whose keys are written in its `[[flow]]` table;",
        "`builder.SOURCES`):",
        "",
        *table("source"),
    ]
    return "\n".join(lines) + "\n"


API_BEGIN = "<!-- builder-kinds:begin (generated: qoslab.builder.source.api_tables) -->"
API_END = "<!-- builder-kinds:end -->"


def page_with_api_tables(page: str, schema: dict[str, Any]) -> str:
    """``page`` (docs/python-api.md) with its generated kind tables replaced."""
    head, rest = page.split(API_BEGIN, 1)
    return f"{head}{API_BEGIN}\n{api_tables(schema)}{API_END}{rest.split(API_END, 1)[1]}"
