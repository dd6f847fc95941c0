"""Value checks and Tcl literals shared by the ns-2 exporter's modules."""

from __future__ import annotations

from typing import Any, TypeGuard

from qoslab.errors import printable

#: Queue limit used when a queue has neither ``limit_pkts`` nor ``limit_bytes``.
UNLIMITED_QUEUE_PKTS = 10_000_000


def is_int(x: Any) -> TypeGuard[int]:
    return isinstance(x, int) and not isinstance(x, bool)


def tcl_comment(text: str) -> str:
    """A name as the text of a Tcl comment: on one line, and no backslash (a comment ending in
    one would swallow the next line of the script), control characters escaped."""
    return printable(" ".join(text.replace("\\", "/").split())).replace("\\", "/")


def tcl_quote(s: str) -> str:
    """Quote ``s`` as a Tcl double-quoted word that is substituted to ``s`` exactly."""
    out = []
    for ch in s:
        o = ord(ch)
        if ch in '\\$[]"{};':
            out.append("\\" + ch)
        elif 32 <= o < 127:
            out.append(ch)
        elif o <= 0xFFFF:
            out.append(f"\\u{o:04x}")
        else:
            out.append(f"\\U{o:08x}")
    return '"' + "".join(out) + '"'


def tcl_number(x: float) -> str:
    """Format a finite number for Tcl/ns-2 (Python's shortest round-trip repr)."""
    return repr(float(x))


def _bool(x: bool) -> str:
    return "true" if x else "false"


def tcl_value(v: Any) -> str:
    if isinstance(v, bool):
        return _bool(v)
    if isinstance(v, float):
        return tcl_number(v)
    return str(v)
