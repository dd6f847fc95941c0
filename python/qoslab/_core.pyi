"""Type stub of the native module ``qoslab._core`` (crates/qoslab-py/src/lib.rs)."""

from collections.abc import Callable
from typing import Any

__version__: str

class ScenarioError(ValueError):
    """A scenario file or table is invalid (attributes set by :mod:`qoslab.errors`)."""

    file: str | None
    line: int | None
    key: str | None
    message: str | None
    column: int | None

class Resolved:
    """A parsed, validated and resolved scenario, kept typed on the Rust side."""

    def table(self) -> dict[str, Any]: ...

def resolve(text: str, file: str) -> Resolved: ...
def resolve_scenario(text: str, file: str) -> dict[str, Any]: ...
def table_to_toml(table: dict[str, Any]) -> str: ...
def simulate(
    text: str,
    file: str,
    seed: int,
    captures: list[tuple[int, str]] = ...,
    progress: Callable[[float], object] | None = ...,
    chunks: int = ...,
) -> dict[str, Any]: ...
def simulate_resolved(
    scenario: Resolved,
    seed: int,
    captures: list[tuple[int, str]] = ...,
    progress: Callable[[float], object] | None = ...,
    chunks: int = ...,
) -> dict[str, Any]: ...
def scenario_schema() -> dict[str, Any]: ...
def drop_precedence(dscp: int) -> int: ...
