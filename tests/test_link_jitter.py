"""A link's timing noise (``[[link]] jitter``): parsed per link or per group member, drawn from
each direction's own stream, reproducible by seed, and refused with one line where it cannot
be honoured (the ns-2 and ns-3 exports, emulation). Its arithmetic (uniform, never overtaking)
is tested in crates/qoslab-core/src/net/link_tests.rs; its use in the kernel validation in
tests/test_validate_linux.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from qoslab import ScenarioError
from qoslab.builder import ScenarioSpec
from qoslab.emulation import validation as vl
from qoslab.emulation.capability import check_supported
from qoslab.emulation.machine import EmulationError
from qoslab.ns2 import unsupported_reason
from qoslab.ns3 import to_ns3_resolved
from qoslab.ns3.export import program_input
from qoslab.ns3.mapping import Ns3Refusal
from qoslab.runs.simulate import run as simulate
from qoslab.scenario import Scenario, load_scenario, to_ns2_resolved

EXAMPLE = Path(__file__).resolve().parents[1] / "scenarios" / "examples" / "droptail-reno.toml"


def test_jitter_is_parsed_per_link_and_per_member() -> None:
    p = {q.name: q for q in vl.GRID}["cubic5-1bdp"]
    sc = vl.scenario(p, "linux").with_overrides(
        ['link.access{i}.jitter=["0us", "10us", "20us", "30us", "40us"]', 'link.bottleneck.jitter="1ms"']
    )
    links = {lk["name"]: lk["jitter_ns"] for lk in sc.resolved["links"]}
    assert links == {
        "access0": 0,
        "access1": 10_000,
        "access2": 20_000,
        "access3": 30_000,
        "access4": 40_000,
        "bottleneck": 1_000_000,
    }
    assert all(lk["jitter_ns"] == 0 for lk in load_scenario(EXAMPLE).resolved["links"])


@pytest.mark.parametrize(
    ("value", "says"),
    [('"-1ms"', "jitter"), ('"5"', "jitter"), ('"5 furlongs"', "jitter"), ('["1ms", "2ms"]', "count")],
)
def test_a_bad_jitter_is_one_line_naming_the_key(value: str, says: str) -> None:
    with pytest.raises(ScenarioError) as e:
        load_scenario(EXAMPLE).with_overrides([f"link.bottleneck.jitter={value}"]).resolved  # noqa: B018
    msg = str(e.value)
    assert "\n" not in msg and "link" in msg and says in msg, msg


def test_jitter_moves_the_run_reproducibly() -> None:
    """Same seed, same run; jitter 0 is exact timing, and a jitter changes the packets' timing
    (so the flows' throughput), the more so the larger it is."""
    sc = load_scenario(EXAMPLE).with_overrides(['duration="8s"', 'measurement.start="2s"'])
    noisy = sc.with_overrides(['link.bottleneck.jitter="2ms"'])
    exact = simulate(sc, 3).flows["throughput_bps"].tolist()
    assert (
        simulate(sc.with_overrides(['link.bottleneck.jitter="0s"']), 3).flows["throughput_bps"].tolist()
        == exact
    )
    a, b = (simulate(noisy, 3).flows["throughput_bps"].tolist() for _ in range(2))
    assert a == b and a != exact
    r = simulate(noisy, 3)
    assert r.flows["srtt_s"].mean() > simulate(sc, 3).flows["srtt_s"].mean() + 0.0005


def test_jitter_is_refused_where_it_cannot_be_honoured() -> None:
    sc = load_scenario(EXAMPLE).with_overrides(['link.bottleneck.jitter="100us"'])
    reason = unsupported_reason(to_ns2_resolved(sc.resolved, 1))
    assert reason and "bottleneck" in reason and "jitter" in reason and "\n" not in reason
    with pytest.raises(Ns3Refusal, match=r"link 'bottleneck'.*jitter"):
        program_input(to_ns3_resolved(sc.resolved, 1), 1)
    with pytest.raises(EmulationError, match=r"link 'bottleneck'.*jitter"):
        check_supported(sc)
    exact = load_scenario(EXAMPLE)
    assert unsupported_reason(to_ns2_resolved(exact.resolved, 1)) is None
    check_supported(exact)


def test_the_builder_writes_a_links_jitter() -> None:
    spec = ScenarioSpec.from_toml(EXAMPLE.read_text())
    spec.link("bottleneck").jitter = "150us"
    text = spec.to_toml()
    assert 'jitter = "150us"' in text
    assert {lk["name"]: lk["jitter_ns"] for lk in Scenario(text, "<built>").resolved["links"]}[
        "bottleneck"
    ] == 150_000


def test_the_link_daemon_refuses_jitter_too(tmp_path: Path) -> None:
    """`qoslab-linkd`, given a scenario directly, refuses a link with jitter in one line rather
    than running it without (the host's own timing is the noise there)."""
    import subprocess

    from qoslab.emulation.machine import linkd_path

    linkd = linkd_path()  # never raises: the path it would use when nothing is built
    if not linkd.exists():
        pytest.skip(f"no qoslab-linkd at {linkd}")
    # the first link group, access{i}: its first member is named
    text = EXAMPLE.read_text().replace('delay = "10ms"', 'delay = "10ms"\njitter = "50us"', 1)
    assert "jitter" in text
    sc = tmp_path / "jitter.toml"
    sc.write_text(text)
    out = subprocess.run([str(linkd), "plan", str(sc), "1"], capture_output=True, text=True)
    assert out.returncode == 1 and out.stdout == ""
    assert 'link "access0": `jitter` is not emulated' in out.stderr and out.stderr.count("\n") == 1
    ok = subprocess.run([str(linkd), "plan", str(EXAMPLE), "1"], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
