"""Each transport flavour's defaults of the `[tcp]` keys, as the schema and the reference page
declare them, are the values a flow of that flavour that sets none of them resolves to."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from qoslab import _core
from qoslab.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[1]
SINGLE = ROOT / "scenarios" / "linux" / "single.toml"
UNITS = {"ms": 1_000_000, "s": 1_000_000_000}
#: The resolved field of each key (durations in ns, windows in packets).
FIELDS = {
    "window": "window_pkts",
    "initial_window": "initial_window_pkts",
    "min_rto": "min_rto_ns",
    "max_rto": "max_rto_ns",
    "initial_rto": "initial_rto_ns",
    "delayed_ack": "delayed_ack",
    "delack_interval": "delack_interval_ns",
    "syn": "syn",
    "sack": "sack",
}


def _value(text: str) -> Any:
    if text in ("true", "false"):
        return text == "true"
    for unit in ("ms", "s"):
        if text.endswith(unit) and text[: -len(unit)].isdigit():
            return int(text[: -len(unit)]) * UNITS[unit]
    return int(text)


def _resolved(flavour: str) -> dict[str, Any]:
    sc = load_scenario(SINGLE).with_overrides([f'tcp.flavour="{flavour}"', 'flow.single.tcp.variant="cubic"'])
    tcp: dict[str, Any] = _core.resolve_scenario(sc.text, sc.source)["flows"][0]["tcp"]
    return tcp


def test_each_flavours_declared_defaults_are_what_its_flows_resolve_to() -> None:
    keys = _core.scenario_schema()["properties"]["tcp"]["properties"]
    declared = {k: v["x-flavour-defaults"] for k, v in keys.items() if "x-flavour-defaults" in v}
    assert {"initial_window", "window", "initial_rto", "delayed_ack"} <= set(declared)
    for flavour in ("ns2", "linux"):
        tcp = _resolved(flavour)
        for key, defaults in declared.items():
            assert tcp[FIELDS[key]] == _value(defaults[flavour]), (flavour, key)


def test_the_reference_page_shows_the_linux_flavours_initial_window() -> None:
    page = (ROOT / "docs" / "scenario-reference.md").read_text()
    row = next(line for line in page.splitlines() if line.startswith("| `initial_window` |"))
    assert "Default: 2 in the ns2 flavour, 10 in the linux flavour" in row
