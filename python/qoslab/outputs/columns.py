"""The vocabulary of the outputs catalogue: a :class:`Column` (name, unit, definition), an
:class:`OutputFile` (a file or table and its columns), the :data:`UNITS` a column may have, and
the two spans every counter is taken over (:data:`W`, :data:`R`)."""

from __future__ import annotations

import re
from dataclasses import dataclass

#: The units a column may have (a consistent vocabulary for the whole page).
UNITS = (
    "bit/s",
    "bytes",
    "packets",
    "packets/s",
    "s",
    "ns",
    "fraction 0–1",
    "ratio",
    "count",
    "index",
    "integer",
    "text",
    "JSON text",
    "boolean",
    "object",
    "list",
    "Unix time, s",
    "metric's unit",
    "gauge's unit",
    "key's unit",
    "codepoint",
)

_PLACEHOLDER = re.compile(r"<[^>]+>")


def _pattern(name: str) -> re.Pattern[str]:
    """``name`` as a regular expression: each ``<placeholder>`` stands for any non-empty text."""
    parts = _PLACEHOLDER.split(name)
    return re.compile(".+".join(re.escape(p) for p in parts) + r"\Z")


@dataclass(frozen=True)
class Column:
    """One column of a table (or one key of a JSON file, as a dotted path: ``drops.total``,
    ``flows[].window.timeouts``). A ``<placeholder>`` in the name stands for names that depend on
    the scenario or the command (a link direction, a grid key)."""

    name: str
    unit: str
    definition: str

    @property
    def is_pattern(self) -> bool:
        return bool(_PLACEHOLDER.search(self.name))

    def matches(self, name: str) -> bool:
        if not self.is_pattern:
            return name == self.name
        return _pattern(self.name).match(name) is not None


@dataclass(frozen=True)
class OutputFile:
    """One output file (or one table of the result store's database). ``includes`` names another
    output whose columns this one also has, after its own."""

    name: str
    group: str
    description: str
    columns: tuple[Column, ...] = ()
    includes: str | None = None

    @property
    def is_pattern(self) -> bool:
        return bool(_PLACEHOLDER.search(self.name))

    def matches(self, name: str) -> bool:
        return name == self.name or (self.is_pattern and _pattern(self.name).match(name) is not None)


W = "inside the measurement window"
R = "over the whole run"
