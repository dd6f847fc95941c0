"""The Python face of :class:`qoslab.ScenarioError`.

The core raises it (a ``ValueError``) with its parts as arguments: the one-line text, then the
file, line, key, message and column. This module gives the class readable attributes and a
one-line ``str``, so a caller can write::

    try:
        qoslab.load_scenario("bad.toml")
    except qoslab.ScenarioError as e:
        print(e)                     # bad.toml:3:11: key `duration`: ...
        e.file, e.line, e.column, e.key, e.message

``import qoslab`` applies it; the class is the core's own, so ``except ScenarioError`` catches
errors raised by the core and by the Python side alike.
"""

from __future__ import annotations

import re
from typing import Any

from qoslab._core import ScenarioError

__all__ = ["ScenarioError", "printable", "scenario_error"]

#: What a terminal acts on instead of showing: C0 and C1 controls (newlines, escape sequences
#: such as OSC, which sets a window's title), DEL, and the bidirectional overrides and isolates.
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(m: re.Match[str]) -> str:
    c = m.group()
    if c in _NAMED:
        return _NAMED[c]
    return f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"


def printable(text: str) -> str:
    """``text`` with every control character escaped as Python writes it in a literal
    (``\\n``, ``\\x1b``, ``\\u202e``): one line, shown as it is on any terminal. Applied to
    every error line qoslab prints and to the values its messages quote; escaping twice changes
    nothing more."""
    return _CONTROLS.sub(_escape, text) if _CONTROLS.search(text) else text


def _part(index: int, doc: str, empty_is_none: bool = False) -> property:
    def get(self: BaseException) -> Any:
        v = self.args[index] if len(self.args) > index else None
        return None if empty_is_none and v == "" else v

    return property(get, doc=doc)


def _str(self: BaseException) -> str:
    return str(self.args[0]) if self.args else ""


def _repr(self: BaseException) -> str:
    return f"ScenarioError({_str(self)!r})"


# The class is created by the core (a heap type), so its attributes can be set here once.
for _name, _prop in {
    "file": _part(1, "The file (or ``<python>``, the override…) the error is about."),
    "line": _part(2, "1-based line in that file, or None (semantic errors, overrides)."),
    "key": _part(3, "The dotted key the error is about, or None.", empty_is_none=True),
    "message": _part(4, "What is wrong, without the location."),
    "column": _part(5, "1-based column, or None."),
    "__str__": _str,
    "__repr__": _repr,
}.items():
    setattr(ScenarioError, _name, _prop)


def scenario_error(
    file: str, message: str, *, key: str = "", line: int | None = None, column: int | None = None
) -> ScenarioError:
    """A ScenarioError whose text is ``file[:line[:column]][: key `k`]: message``, as the core
    writes it."""
    where = file + (f":{line}" if line is not None else "") + (f":{column}" if line and column else "")
    text = printable(where + (f": key `{key}`" if key else "") + f": {message}")
    return ScenarioError(text, file, line, key, message, column)


def undecodable(path: object) -> str | None:
    """``path`` as it may be shown when it is not UTF-8 text (bytes a shell passed through,
    which SQLite and the core cannot take), undecodable bytes as U+FFFD; None when it is."""
    import os

    text = os.fspath(path)  # type: ignore[call-overload]
    try:
        str(text).encode("utf-8")
    except UnicodeEncodeError:
        return os.fsencode(text).decode("utf-8", "replace")
    return None
