"""The examples of scenarios/examples/: one small, commented scenario for every queue, meter,
scheduler, TCP variant and traffic source kind, each run here.

Each example's header says what it shows (``# shows:``) and how to check it (``# expect:``
lines: an arithmetic comparison over summary.json's values, read by :func:`_evaluate`). The
kinds are taken from the scenario schema, so a kind added to a registry without an example
fails :func:`test_every_kind_has_an_example`; docs/examples.md must list every example.
"""

from __future__ import annotations

import ast
import json
import operator
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import qoslab
from qoslab import schema

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "scenarios" / "examples"
FILES = sorted(EXAMPLES.glob("*.toml"))

#: A value of summary.json: dotted keys, ``flow:NAME`` for the flow of that name.
_PATH = re.compile(
    r"(?:flow:[A-Za-z0-9_\-]+|[A-Za-z_][A-Za-z0-9_]*)(?:\.[A-Za-z0-9_]+)+|[A-Za-z_][A-Za-z0-9_]*"
)

_OPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
}


def header(path: Path) -> dict[str, list[str]]:
    """The example's header comments: ``example``, ``shows``, ``note`` and ``expect`` entries
    (continuation lines, indented, are joined to the entry above)."""
    out: dict[str, list[str]] = {}
    last = ""
    for line in path.read_text().splitlines():
        if not line.startswith("#"):
            break
        body = line[1:].strip()
        m = re.match(r"(example|shows|note|expect):\s*(.*)", body)
        if m:
            last = m.group(1)
            out.setdefault(last, []).append(m.group(2))
        elif last and line.startswith("#   "):
            out[last][-1] += " " + body
    return out


def _lookup(summary: dict[str, Any], path: str) -> float:
    head, *rest = path.split(".")
    if head.startswith("flow:"):
        name = head[len("flow:") :]
        node: Any = next((f for f in summary["flows"] if f["name"] == name), None)
        if node is None:
            raise KeyError(f"no flow {name!r}")
    else:
        node = summary[head]
    for key in rest:
        node = node[key]
    return float(node)


def _evaluate(expr: str, summary: dict[str, Any]) -> tuple[bool, str]:
    """Evaluates ``expr`` (numbers, summary paths, + - * /, one comparison) and returns the
    outcome with the expression's values filled in, for the failure message."""
    names: dict[str, float] = {}

    def name_of(m: re.Match[str]) -> str:
        token = m.group(0)
        if re.fullmatch(r"[0-9.eE+-]+", token):
            return token
        key = f"v{len(names)}"
        names[key] = _lookup(summary, token)
        return key

    py = _PATH.sub(name_of, expr)
    tree = ast.parse(py, mode="eval").body

    def ev(node: ast.expr) -> Any:
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            return node.value
        if isinstance(node, ast.Name):
            return names[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _OPS:
            left, right = ev(node.left), ev(node.comparators[0])
            return (_OPS[type(node.ops[0])](left, right), f"{left:.6g} vs {right:.6g}")
        raise ValueError(f"unsupported expression {expr!r}")

    result = ev(tree)
    if not isinstance(result, tuple):
        raise ValueError(f"an expect line must compare: {expr!r}")
    return result


def _kinds() -> dict[str, set[str]]:
    """Every kind the schema accepts, by family."""
    sch = schema.json_schema()
    defs = sch["$defs"]
    queues = {o["properties"]["type"]["const"] for o in defs["queue"]["oneOf"]}
    meters = {o["properties"]["type"]["const"] for o in defs["meter"]["oneOf"]}
    multi = next(o for o in defs["queue"]["oneOf"] if o["properties"]["type"]["const"] == "multi")
    flow = sch["properties"]["flow"]["items"]["properties"]
    return {
        "queue": queues,
        "meter": meters,
        "scheduler": set(multi["properties"]["scheduler"]["enum"]),
        "variant": set(sch["properties"]["tcp"]["properties"]["variant"]["enum"]),
        "source": set(flow["type"]["enum"]) | {"arrivals"},
    }


def _used(text: str) -> dict[str, set[str]]:
    """The kinds an example file uses, read from its TOML text."""
    import tomllib

    doc = tomllib.loads(text)
    found: dict[str, set[str]] = {k: set() for k in ("queue", "meter", "scheduler", "variant", "source")}

    def walk(node: Any, key: str = "") -> None:
        if isinstance(node, dict):
            if key.startswith("queue") and "type" in node:
                found["queue"].add(node["type"])
                if node["type"] == "multi":
                    found["scheduler"].add(node.get("scheduler", "priority"))
            if key == "meter":
                found["meter"].add(node["type"])
            for k, v in node.items():
                walk(v, k)
        elif isinstance(node, list):
            for v in node:
                walk(v, key)

    walk(doc)
    flows = doc.get("flow", [])
    found["source"] |= {f.get("type", "tcp") for f in flows}
    if doc.get("arrivals"):
        found["source"].add("arrivals")
    tcp_flows = [f for f in flows if f.get("type", "tcp") == "tcp"] or doc.get("arrivals", [])
    if tcp_flows:
        found["variant"].add(doc.get("tcp", {}).get("variant", "reno"))
    return found


def test_every_kind_has_an_example() -> None:
    covered: dict[str, set[str]] = {}
    for path in FILES:
        for family, kinds in _used(path.read_text()).items():
            covered.setdefault(family, set()).update(kinds)
    missing = {f: sorted(k - covered.get(f, set())) for f, k in _kinds().items() if k - covered.get(f, set())}
    assert not missing, f"kinds with no example in scenarios/examples/: {missing}"


INDEX = ROOT / "docs" / "examples.md"
BEGIN, END = "<!-- examples:begin (generated: python tests/test_examples.py) -->", "<!-- examples:end -->"


def index_table() -> str:
    """docs/examples.md's table: each example, the kinds it uses and what it shows."""
    rows = ["| example | kinds | what it shows |", "|---|---|---|"]
    for path in FILES:
        used = _used(path.read_text())
        kinds = ", ".join(
            f"`{k}`"
            for fam in ("queue", "scheduler", "meter", "variant", "source")
            for k in sorted(used[fam])
        )
        rows.append(f"| `scenarios/examples/{path.name}` | {kinds} | {header(path)['shows'][0]} |")
    return "\n".join(rows)


def test_every_example_is_described_and_listed() -> None:
    for path in FILES:
        h = header(path)
        assert h.get("example") and h.get("shows") and h.get("expect"), f"{path.name}: header incomplete"
    page = INDEX.read_text()
    assert page.split(BEGIN)[1].split(END)[0].strip() == index_table(), (
        "docs/examples.md is stale: run `python tests/test_examples.py`"
    )


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_example_shows_what_it_says(path: Path, tmp_path: Path) -> None:
    res = qoslab.run(qoslab.load_scenario(path), tables=False)
    summary = json.loads(json.dumps(res.summary()))
    assert summary["conservation_violations"] == []
    failed = []
    for expr in header(path)["expect"]:
        ok, values = _evaluate(expr, summary)
        if not ok:
            failed.append(f"{expr}  ({values})")
    assert not failed, f"{path.name}: " + "; ".join(failed)


def test_expect_lines_can_fail() -> None:
    """The checker itself: a false comparison is reported as false, with its values."""
    summary = {"utilization": 0.5, "flows": [{"name": "a", "throughput_bps": 2.0}]}
    assert _evaluate("utilization > 0.9", summary) == (False, "0.5 vs 0.9")
    assert _evaluate("flow:a.throughput_bps * 2 == 4", summary)[0]
    with pytest.raises(KeyError):
        _evaluate("flow:b.throughput_bps > 1", summary)


if __name__ == "__main__":
    text = INDEX.read_text()
    head, rest = text.split(BEGIN)
    INDEX.write_text(f"{head}{BEGIN}\n{index_table()}\n{END}{rest.split(END)[1]}")


def test_every_page_of_the_site_is_linked_from_its_index() -> None:
    """docs/index.md names every page of mkdocs.yml's nav (mkdocs --strict already fails on a
    page missing from the nav), so the site's front page goes stale with no new page."""
    import yaml

    pages: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, list):
            for x in node:
                walk(x)
        elif isinstance(node, dict):
            for x in node.values():
                walk(x)
        else:
            pages.append(str(node))

    walk(yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"])
    index = (ROOT / "docs" / "index.md").read_text()
    missing = [p for p in pages if p != "index.md" and f"]({p}" not in index]
    assert not missing, f"docs/index.md does not link {missing}"
