"""The exporters and the emulator take a meter's and a TCP sender's outside faces from the
kind's own declaration in the core (the schema's ``x-exports`` and ``$defs.sender``): what they
write and what they refuse, with the kind's own reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from qoslab import emulation, ns2, schema
from qoslab.ns3.export import program_input, to_ns3_resolved
from qoslab.scenario import Scenario, load_scenario, to_ns2_resolved

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
EXAMPLES = SCENARIOS / "examples"


def _tsw3cm(*sets: str) -> Scenario:
    return load_scenario(EXAMPLES / "tsw3cm.toml").with_overrides(list(sets))


def _ns2_reason(sc: Scenario) -> str | None:
    return ns2.unsupported_reason(to_ns2_resolved(sc.resolved, 1))


def test_a_meter_ns2_cannot_express_is_refused_with_its_own_reason() -> None:
    assert _ns2_reason(_tsw3cm()) is None
    # TSW3CM's declared fixed window
    why = _ns2_reason(_tsw3cm("conditioner.tsw3.meter.window=0.5s"))
    assert why == "conditioner 'tsw3': ns-2's TSW3CM has a fixed 1 s window (win_len_s must be None or 1.0)"
    # a kind with a reason of its own, and one without
    probe = schema.meter_kinds()["probe"]["x-exports"]["ns2"]["refused"]
    assert "TCP sequence numbers" in probe
    arm = schema.meter_kinds()["arm"]["x-exports"]["ns2"]
    assert arm == {"refused": ""}
    policers = [k for k, o in schema.meter_kinds().items() if "policy" in o["x-exports"]["ns2"]]
    assert policers == ["token_bucket", "srtcm", "trtcm", "tsw2cm", "tsw3cm"]


def test_the_policy_entry_is_written_from_the_meters_declared_arguments() -> None:
    tcl = ns2.to_tcl(to_ns2_resolved(_tsw3cm().resolved, 1), 1, "out.json")
    entries = [ln for ln in tcl.splitlines() if " TSW3CM " in ln and "addPolicyEntry" in ln]
    # CTR and PTR in bit/s after the in-profile codepoint (dsPolicy.cc's TSW3CM: cir, pir)
    assert entries and all(ln.endswith(" 1000000.0 2000000.0") for ln in entries), entries
    assert any(ln.startswith("$q addPolicerEntry TSW3CM ") for ln in tcl.splitlines())


def _dumbbell(variant: str, *sets: str) -> Scenario:
    return load_scenario(EXAMPLES / "tsw3cm.toml").with_overrides([f"tcp.variant={variant}", *sets])


@pytest.mark.parametrize(
    ("variant", "agent", "sink"),
    [
        ("reno", "Agent/TCP/Reno", "Agent/TCPSink"),
        ("newreno", "Agent/TCP/Newreno", "Agent/TCPSink"),
        ("sack", "Agent/TCP/Sack1", "Agent/TCPSink/Sack1"),
    ],
)
def test_the_ns2_agents_are_the_senders_declared_ones(variant: str, agent: str, sink: str) -> None:
    tcl = ns2.to_tcl(to_ns2_resolved(_dumbbell(variant).resolved, 1), 1, "out.json")
    assert f"set src [new {agent}]" in tcl
    assert f"set dst [new {sink}/DelAck]" in tcl or f"set dst [new {sink}]" in tcl
    # NewReno's own settings (ns-2.35's defaults made explicit) only on the NewReno agent
    assert ("$src set newreno_changes1_ 1" in tcl) == (variant == "newreno")


def test_a_sender_without_an_ns2_agent_is_refused_listing_those_with_one() -> None:
    why = _ns2_reason(_dumbbell("cubic"))
    assert why is not None and why.endswith("TCP variant 'cubic' is not supported (only reno, newreno, sack)")


def test_the_ns3_congestion_control_is_the_senders_declared_one() -> None:
    sc = load_scenario(SCENARIOS / "ns3" / "dumbbell-5-cubic.toml")
    flows = program_input(to_ns3_resolved(sc.resolved, 1), 1)["flows"]
    tcp = flows[0]["tcp"]
    assert tcp["congestion"] == "ns3::QoslabCubic"
    assert ["ns3::TcpCubic::Beta", "0.7"] in tcp["defaults"] and ["ns3::TcpCubic::C", "0.4"] in tcp[
        "defaults"
    ]


@pytest.mark.parametrize(
    ("scenario", "sets", "attribute"),
    [
        ("cubic", ["tcp.cc.cubic.beta=0.8", "tcp.cc.cubic.c=0.5"], ["ns3::TcpCubic::Beta", "0.8"]),
        ("cubic", ["tcp.cc.cubic.beta=0.8", "tcp.cc.cubic.c=0.5"], ["ns3::TcpCubic::C", "0.5"]),
        ("step-dctcp", ["tcp.cc.dctcp.g=0.125"], ["ns3::TcpDctcp::DctcpShiftG", "0.125"]),
    ],
)
def test_the_ns3_export_carries_a_flows_tuned_constants(
    scenario: str, sets: list[str], attribute: list[str]
) -> None:
    # A tcp.cc.VARIANT key the export left at Linux's value would make the cross-check compare
    # against another algorithm than the one run (it did, before: beta 0.8 exported as 0.7).
    sc = load_scenario(SCENARIOS / "ns3" / f"dumbbell-5-{scenario}.toml").with_overrides(sets)
    tcp = program_input(to_ns3_resolved(sc.resolved, 1), 1)["flows"][0]["tcp"]
    assert attribute in tcp["defaults"]


def test_the_emulator_runs_the_declared_kernel_module_and_refuses_what_it_cannot() -> None:
    assert emulation.flow_ccs(_dumbbell("cubic"))[-1] == "cubic"
    assert emulation.KERNEL_CC == {
        "reno": "reno",
        "newreno": "reno",
        "sack": "reno",
        "cubic": "cubic",
        "bbr": "bbr",
    }
    with pytest.raises(emulation.EmulationError, match="pacing is emulated with bbr only"):
        emulation.flow_ccs(_dumbbell("cubic", "tcp.pacing=true"))
    dctcp = load_scenario(SCENARIOS / "ns3" / "dumbbell-5-step-dctcp.toml")
    with pytest.raises(
        emulation.EmulationError, match=r"'dctcp' is not emulated \(the kernel side runs bbr, cubic, newreno"
    ):
        emulation.flow_ccs(dctcp)
