"""The Python library names no registered kind where the kind can answer for itself.

Queue disciplines, meters, traffic sources and TCP senders declare their outside faces (ns-2,
ns-3, the emulator, the kernel) in their own files in the core, read through the scenario
schema; an ``if kind == "red"`` chain or a ``{"cubic": ...}`` table in the exporters is a
second list of kinds that goes stale when a kind is added. This test counts such string
matches of the registered kind names (read from the core's schema, not a hand list) in
python/qoslab, outside the generated builder classes and outside ``studies/`` and
``reproduction/`` (which build scenarios by naming kinds, their job), and fails when the count
rises above :data:`ALLOWED`.

What counts: a kind name as an operand of a comparison (``==``, ``!=``, ``in``), as a
``case`` pattern, as a key of a dict literal whose keys are all kind names (a table keyed by
kind; a record such as ``{"sack": t["sack"], "ecn": ...}`` is not one), or as an element of a
tuple, list or set literal whose elements are all kind names (a table of kinds, compared
against, iterated or named in a ``Literal``). A flow's
``kind == "tcp"`` is the flow family (closed-loop TCP against open-loop sources), not a
registered kind, and is not counted; nor are the colour names (``"red"`` among ``"green"``
and ``"yellow"``), which are no table of kinds.
"""

from __future__ import annotations

import ast
from pathlib import Path

from qoslab import schema

ROOT = Path(__file__).resolve().parents[1] / "python" / "qoslab"

#: Generated from the core's registries (``qoslab schema --python``): naming kinds is their job.
GENERATED = ("builder/queues.py", "builder/meters.py", "builder/sources.py")

#: The count this checkout has; lower it as matches go, never raise it. Before the exporters
#: asked the kinds (issue 57 item 3) it was 94, then 25; the builder's TcpVariant is now
#: generated (19), and the validation grid names each congestion control once (13). What is left
#: builds scenarios or runs outside the library: emulation/validation.py (3) and
#: bench/workloads.py (4) build their scenarios by naming kinds, as studies/ do;
#: emulation/traffic.py (5) is the standalone traffic script, whose ``--kind`` is part of the
#: emulator's command plan; builder/source.py (1) names the one kind whose class is
#: hand-written (``multi``). ``library_matches()`` lists them.
ALLOWED = 13


def kind_names() -> frozenset[str]:
    """Every registered queue, meter, source and TCP sender name of this build of the core."""
    defs = schema.json_schema()["$defs"]
    sources = {o["properties"]["type"]["const"] for o in defs["source"]["oneOf"]}
    return frozenset({*schema.queue_kinds(), *schema.meter_kinds(), *sources, *schema.sender_kinds()})


def _kind(node: ast.AST, kinds: frozenset[str]) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in kinds


def _table(node: ast.AST, kinds: frozenset[str]) -> list[ast.AST]:
    """The elements of a tuple/list/set literal made only of kind names, else none."""
    if (
        isinstance(node, (ast.Tuple, ast.List, ast.Set))
        and node.elts
        and all(_kind(e, kinds) for e in node.elts)
    ):
        return list(node.elts)
    return []


def matches(source: str, kinds: frozenset[str]) -> list[tuple[int, str]]:
    """The kind-name matches of one module's source: (line, name)."""
    found: dict[int, ast.AST] = {}
    for node in ast.walk(ast.parse(source)):
        hits: list[ast.AST] = []
        if isinstance(node, ast.Compare):
            for operand in (node.left, *node.comparators):
                hits += [operand] if _kind(operand, kinds) else _table(operand, kinds)
        elif (
            isinstance(node, ast.Dict)
            and node.keys
            and all(k is not None and _kind(k, kinds) for k in node.keys)
        ):
            hits += [k for k in node.keys if k is not None]
        elif isinstance(node, ast.MatchValue) and _kind(node.value, kinds):
            hits.append(node.value)
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            hits += _table(node, kinds)
        for h in hits:
            found[id(h)] = h
    out = []
    for h in found.values():
        assert isinstance(h, ast.Constant)
        out.append((h.lineno, str(h.value)))
    return sorted(out)


def library_matches(root: Path = ROOT) -> list[str]:
    kinds = kind_names()
    out = []
    for p in sorted(root.rglob("*.py")):
        rel = p.relative_to(root)
        if rel.as_posix() in GENERATED or rel.parts[0] in ("studies", "reproduction"):
            continue
        out += [f"{rel}:{line}: {name!r}" for line, name in matches(p.read_text(), kinds)]
    return out


def test_the_library_names_no_more_kinds_than_allowed() -> None:
    found = library_matches()
    assert len(found) <= ALLOWED, "kind names matched as strings (ask the kind instead):\n" + "\n".join(found)


def test_a_chain_of_kind_names_is_counted() -> None:
    """The counter sees the forms the exporters used to have; the colours and the flow family
    are not kind tables."""
    kinds = kind_names()
    assert {"red", "token_bucket", "cubic", "cbr"} <= kinds and "tcp" not in kinds
    chain = (
        'if m["type"] == "token_bucket":\n    pass\nelif m["type"] in ("srtcm", "trtcm"):\n    pass\n'
        'CLASSES = {"reno": "Agent/TCP/Reno"}\n'
        'for v in ("cubic", "bbr"):\n    pass\n'
        'match kind:\n    case "cbr":\n        pass\n'
    )
    assert matches(chain, kinds) == [
        (1, "token_bucket"),
        (3, "srtcm"),
        (3, "trtcm"),
        (5, "reno"),
        (6, "bbr"),
        (6, "cubic"),
        (9, "cbr"),
    ]
    benign = (
        'for c in ("green", "yellow", "red"):\n    pass\n'
        'colored = {"green": 0, "yellow": 0, "red": 0}\n'
        'tcp = {"variant": v, "sack": t["sack"]}\n'
        'if f["kind"] == "tcp":\n    pass\n'
        'x = q["red"]\n'
    )
    assert matches(benign, kinds) == []
