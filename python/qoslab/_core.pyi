"""Type stub of the native module ``qoslab._core`` (crates/qoslab-py/src/lib.rs), checked
against the built module by ``python -m mypy.stubtest qoslab._core`` (``make test``)."""

from collections.abc import Callable
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
    def canonical_toml(self) -> str: ...

def resolve(text: str, file: str) -> Resolved: ...
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
) -> dict[str, Any]: ...
def scenario_schema() -> dict[str, Any]: ...
def drop_precedence(dscp: int) -> int: ...
def dscp_name(dscp: int) -> str: ...
