"""Type stub of the native module ``qoslab._core`` (crates/qoslab-py/src/), checked
against the built module by ``python -m mypy.stubtest qoslab._core`` (``make test``)."""

from collections.abc import Callable, Iterable, Sequence
from os import PathLike
from typing import Any, final

__all__ = [
    "ScenarioError",
    "__version__",
    "resolve_scenario",
    "Resolved",
    "resolve",
    "simulate_resolved",
    "simulate",
    "drop_precedence",
    "dscp_name",
    "scenario_schema",
    "table_to_toml",
    "write_parquet",
    "write_parquet_groups",
    "FQ_CODEL_QUEUE_BYTES",
    "TRANSFER_SPILL_FIELDS",
    "TABLE_COLUMNS",
]

__version__: str

class ScenarioError(ValueError):
    """A scenario file or table is invalid. The core raises it with its parts as arguments;
    :mod:`qoslab.errors` (applied by ``import qoslab``) reads them back as these properties."""

    @property
    def file(self) -> str | None: ...
    @property
    def line(self) -> int | None: ...
    @property
    def key(self) -> str | None: ...
    @property
    def message(self) -> str | None: ...
    @property
    def column(self) -> int | None: ...

@final
class Resolved:
    """A parsed, validated and resolved scenario, kept typed on the Rust side."""

    def table(self) -> dict[str, Any]: ...
    def outline(self, fields: Sequence[tuple[str, Sequence[str]]]) -> dict[str, Any]: ...
    def canonical_toml(self) -> str: ...
    def counts(self) -> tuple[int, int, int, int, int]: ...
    def slot_bytes(self) -> list[int]: ...
    def state_bytes(self) -> tuple[int, int]: ...

FQ_CODEL_QUEUE_BYTES: int
#: The fields of a transfers spill file's row, each a little-endian u64 (records.rs).
TRANSFER_SPILL_FIELDS: list[str]
#: The columns of each table a run returns (its key in the result: "flows", "links", …), in
#: order, from their one declaration (crates/qoslab-py/src/columns.rs).
TABLE_COLUMNS: dict[str, list[str]]

def resolve(
    text: str, file: str, allow: list[str] = ..., max_bytes: int = 0, limit_what: str = ""
) -> Resolved: ...
def resolve_scenario(text: str, file: str) -> dict[str, Any]: ...
def table_to_toml(table: dict[str, Any]) -> str: ...
def simulate(
    text: str,
    file: str,
    seed: int,
    captures: list[tuple[int, str]] = ...,
    progress: Callable[[float], object] | None = None,
    chunks: int = 100,
) -> dict[str, Any]: ...
def simulate_resolved(
    scenario: Resolved,
    seed: int,
    captures: list[tuple[int, str]] = ...,
    progress: Callable[[float], object] | None = None,
    chunks: int = 100,
    capture_limit: int = 0,
    spill: str | None = None,
    spill_after: int = 100000,
) -> dict[str, Any]: ...
def scenario_schema() -> dict[str, Any]: ...
def drop_precedence(dscp: int) -> int: ...
def dscp_name(dscp: int) -> str: ...
def write_parquet(
    path: str | PathLike[str],
    columns: Sequence[tuple[str, Any]],
    metadata: Sequence[tuple[str, str]],
) -> None:
    """Writes a table as a Parquet file (one row group, PLAIN, uncompressed, OPTIONAL fields).
    Each column is a list of str or a one-dimensional buffer of numbers whose format gives its
    type (array.array's b B h H i I l L q Q f d, "?" for booleans); all of one length. OSError
    (naming the path) if the file cannot be written, ValueError for a bad column."""

def write_parquet_groups(
    path: str | PathLike[str],
    groups: Iterable[Sequence[tuple[str, Any]]],
    metadata: Sequence[tuple[str, str]],
) -> None:
    """:func:`write_parquet` a row group at a time: each item of ``groups`` is one group's
    columns (the same names and types every time; else ValueError); only one group is held."""
