"""A small TOML writer for the subset scenario files use: tables, arrays of tables, strings,
integers, floats, booleans, arrays and inline tables (TOML 1.0; no dates, no multi-line
strings). ``tomllib`` reads it back to the same value, and :func:`dumps` of what it read is the
same text, byte for byte (``tests/test_builder.py`` checks both with hypothesis).

The layout is the one of ``scenarios/*.toml``: the top-level keys first, then each table as a
``[section]`` and each list of tables as ``[[section]]`` blocks, separated by blank lines;
anything nested deeper is written inline (``queue = { type = "red", min_th = 25 }``).

>>> print(dumps({"name": "x", "tcp": {"window": 20}, "node": [{"name": "a"}, {"name": "b"}]}))
name = "x"
<BLANKLINE>
[tcp]
window = 20
<BLANKLINE>
[[node]]
name = "a"
<BLANKLINE>
[[node]]
name = "b"
<BLANKLINE>
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

__all__ = ["TomlWriteError", "dumps", "key", "string", "value"]

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}
_MIN_INT, _MAX_INT = -(2**63), 2**63 - 1


class TomlWriteError(ValueError):
    """A value TOML cannot hold (a lone surrogate, an integer beyond 64 bits, a date, None...)."""


def string(s: str) -> str:
    """``s`` as a TOML basic string: quotes, backslashes and control characters escaped."""
    out = ['"']
    for ch in s:
        esc = _ESCAPES.get(ch)
        if esc is not None:
            out.append(esc)
            continue
        c = ord(ch)
        if c < 0x20 or c == 0x7F:
            out.append(f"\\u{c:04X}")
        elif 0xD800 <= c <= 0xDFFF:
            raise TomlWriteError(f"a lone surrogate (U+{c:04X}) cannot be written in TOML: {s!r}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def key(k: str) -> str:
    """A key: bare when it is letters, digits, ``_`` and ``-`` only, else quoted."""
    if not isinstance(k, str):
        raise TomlWriteError(f"TOML keys are strings, got {type(k).__name__} {k!r}")
    return k if _BARE_KEY.fullmatch(k) else string(k)


def _float(x: float) -> str:
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    # repr is the shortest text that reads back to the same float; it always has a '.' or an
    # exponent ('1e+16', '5e-324'), which is what TOML needs to read a float, not an integer.
    return repr(x)


def value(v: object) -> str:
    """``v`` as an inline TOML value (a string, number, boolean, array or inline table)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        if not _MIN_INT <= v <= _MAX_INT:
            raise TomlWriteError(f"integer {v} does not fit TOML's 64 bits")
        return str(v)
    if isinstance(v, float):
        return _float(v)
    if isinstance(v, str):
        return string(v)
    if isinstance(v, Mapping):
        if not v:
            return "{}"
        return "{ " + ", ".join(f"{key(k)} = {value(x)}" for k, x in v.items()) + " }"
    if isinstance(v, Sequence) and not isinstance(v, bytes | bytearray):
        return "[" + ", ".join(value(x) for x in v) + "]"
    raise TomlWriteError(f"cannot write {type(v).__name__} {v!r} as TOML")


def _is_table_list(v: object) -> bool:
    return (
        isinstance(v, Sequence)
        and not isinstance(v, str)
        and bool(v)
        and all(isinstance(x, Mapping) for x in v)
    )


def _body(t: Mapping[str, object]) -> list[str]:
    return [f"{key(k)} = {value(v)}" for k, v in t.items()]


def dumps(table: Mapping[str, object]) -> str:
    """The TOML document of ``table``: top-level values, then ``[k]`` for each table value and
    ``[[k]]`` for each non-empty list of tables; deeper levels inline."""
    head: dict[str, object] = {}
    sections: list[tuple[str, object]] = []
    for k, v in table.items():
        if isinstance(v, Mapping) or _is_table_list(v):
            sections.append((k, v))
        else:
            head[k] = v
    blocks: list[list[str]] = []
    if head:
        blocks.append(_body(head))
    for k, v in sections:
        if isinstance(v, Mapping):
            blocks.append([f"[{key(k)}]", *_body(v)])
        else:
            assert isinstance(v, Sequence)
            for element in v:
                assert isinstance(element, Mapping)
                blocks.append([f"[[{key(k)}]]", *_body(element)])
    return "\n\n".join("\n".join(b) for b in blocks) + "\n" if blocks else ""
