"""The hosts' timing noise as a declared part of a scenario (``[timing] jitter``): a duration or a
preset (``exact``, the default, and ``testbed``, the kernel testbed's measured noise) that every
link direction takes unless its link sets its own ``jitter``; refused in one line when it names
no preset, and by emulation (the kernel's hosts have their own noise); recorded by a
reproduction. Its resolution is tested in crates/qoslab-core/src/scenario/timing.rs, the
arithmetic of the noise in crates/qoslab-core/src/net/link_tests.rs."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pandas as pd
import pytest

import qoslab
from conftest import ROOT, SCENARIOS
from qoslab import builder as b
from qoslab import reproduction
from qoslab.emulation import validation as vl
from qoslab.emulation.capability import check_supported
from qoslab.emulation.machine import EmulationError
from qoslab.reproduction.base import Experiment, Sweep
from qoslab.reproduction.planning import timing_of
from qoslab.runs.simulate import run as simulate
from qoslab.scenario import Scenario, load_scenario
from qoslab.schema import json_schema
from test_tutorial import normalise, tutorial_steps

FIVE_CUBIC = SCENARIOS / "linux" / "five-cubic.toml"
EXAMPLE = SCENARIOS / "examples" / "droptail-reno.toml"


def _short(sc: Scenario) -> Scenario:
    return sc.with_overrides(['duration="20s"', 'measurement.start="5s"', 'measurement.end="20s"'])


def _jitters(sc: Scenario) -> dict[str, int]:
    return {lk["name"]: lk["jitter_ns"] for lk in sc.resolved["links"]}


def test_the_testbed_preset_is_the_measured_130us_on_every_link() -> None:
    sc = load_scenario(FIVE_CUBIC).with_overrides(['timing.jitter="testbed"'])
    assert set(_jitters(sc).values()) == {130_000} and len(_jitters(sc)) == 11
    assert sc.resolved["timing"] == {"jitter_ns": 130_000, "preset": "testbed"}
    assert sc.timing == "testbed"
    # the value the kernel validation measured on the testbed's ACK clock
    assert vl.TESTBED_JITTER_US * 1000 == sc.resolved["timing"]["jitter_ns"]
    presets = json_schema()["properties"]["timing"]["properties"]["jitter"]["x-presets"]
    assert presets["testbed"]["value"] == "130us"
    assert "docs/validation/linux.md" in presets["testbed"]["description"]
    assert list(presets) == ["exact", "testbed"] and presets["exact"]["value"] == "0s"


def test_a_links_own_jitter_wins_and_a_duration_is_taken_as_written() -> None:
    sc = load_scenario(FIVE_CUBIC).with_overrides(
        ["timing.jitter=testbed", 'link.bottleneck.jitter="10us"', 'link.exit0.jitter="0s"']
    )
    j = _jitters(sc)
    assert (j.pop("bottleneck"), j.pop("exit0")) == (10_000, 0)
    assert set(j.values()) == {130_000}
    assert sc.timing == "per link"
    d = load_scenario(FIVE_CUBIC).with_overrides(['timing.jitter="50us"'])
    assert set(_jitters(d).values()) == {50_000} and d.resolved["timing"] == {"jitter_ns": 50_000}
    assert d.timing == "50us"


def test_exact_is_the_default_scenario_itself() -> None:
    sc = load_scenario(FIVE_CUBIC)
    assert "timing" not in sc.resolved and sc.timing == "exact"
    for exact in ('"exact"', '"0s"'):
        e = sc.with_overrides([f"timing.jitter={exact}"])
        assert set(_jitters(e).values()) == {0}
        assert e.resolved == sc.resolved and e.sha256() == sc.sha256(), exact
        assert e.timing == "exact"


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ('"tesbed"', 'unknown preset "tesbed" for timing.jitter: expected a duration such as "130us" or a '
         'preset: "exact" (0s) or "testbed" (130us)'),
        ('"a\\u001bb"', 'unknown preset "a\\u{1b}b"'),
        ('"5 furlongs"', "unknown time unit"),
        ("5", "has no unit"),
        ("true", "expected a duration"),
    ],
)  # fmt: skip
def test_a_bad_timing_is_one_line_naming_the_key(value: str, says: str) -> None:
    with pytest.raises(qoslab.ScenarioError) as e:
        load_scenario(EXAMPLE).with_overrides([f"timing.jitter={value}"]).resolved  # noqa: B018
    msg = str(e.value)
    assert e.value.key == "timing.jitter" and "\n" not in msg and "\x1b" not in msg, msg
    assert says in msg, msg


def test_the_preset_value_is_applied_and_moves_the_phases() -> None:
    """Five CUBIC flows at a tail-drop bottleneck: the testbed preset runs exactly as 130 µs of
    jitter written on every link (so its value is what runs), and its noise changes every
    flow's share; exact timing runs exactly as the scenario without [timing]."""
    sc = _short(load_scenario(FIVE_CUBIC))

    def shares(s: Scenario) -> list[float]:
        return [float(x) for x in simulate(s, 3).flows["throughput_bps"]]

    links = [f'link.{k}{i}.jitter="130us"' for k in ("access", "exit") for i in range(5)]
    by_hand = sc.with_overrides(['link.bottleneck.jitter="130us"', *links])
    testbed = sc.with_overrides(["timing.jitter=testbed"])
    exact = shares(sc)
    assert shares(sc.with_overrides(["timing.jitter=exact"])) == exact
    noisy = shares(testbed)
    assert noisy == shares(by_hand)
    assert noisy != shares(sc.with_overrides(['timing.jitter="129us"']))
    assert all(a != b for a, b in zip(noisy, exact, strict=True)), (noisy, exact)


def test_the_validation_grids_links_are_all_its_own_so_the_preset_is_its_timing() -> None:
    """The kernel validation's simulated side sets ``timing.jitter = "testbed"``: every point's
    links get the bounds the testbed's jitter written on each link by name gives."""
    by_hand = [f'link.{k}.jitter="{vl.TESTBED_JITTER_US}us"' for k in ("access{i}", "bottleneck")]
    for p in (*vl.GRID, *vl.HELD_OUT, *vl.AQM_GRID):
        sc = vl.scenario(p, "linux")
        by_name = _jitters(sc.with_overrides(by_hand))
        assert _jitters(sc.with_overrides(vl.sim_overrides("linux"))) == by_name, p.name
        assert set(by_name.values()) == {vl.TESTBED_JITTER_US * 1000}, p.name


def test_emulation_refuses_a_modelled_timing_noise() -> None:
    sc = load_scenario(EXAMPLE)
    check_supported(sc)
    check_supported(sc.with_overrides(["timing.jitter=exact"]))
    with pytest.raises(EmulationError) as e:
        check_supported(sc.with_overrides(["timing.jitter=testbed"]))
    assert str(e.value) == (
        'timing.jitter ("testbed"): timing noise is not emulated (the host\'s own timing is the noise '
        'there); set it to "exact"'
    )
    with pytest.raises(EmulationError, match=r"^timing\.jitter: timing noise is not emulated"):
        check_supported(sc.with_overrides(['timing.jitter="1us"']))


def test_the_builder_writes_and_checks_timing() -> None:
    spec = b.ScenarioSpec.from_toml(EXAMPLE.read_text())
    spec.timing = b.Timing(jitter="testbed")
    text = spec.to_toml()
    assert '[timing]\njitter = "testbed"' in text
    assert b.ScenarioSpec.from_toml(text) == spec
    assert set(_jitters(Scenario(text, "<built>")).values()) == {130_000}
    assert b.Timing(jitter="20us").to_table() == {"jitter": "20us"}
    with pytest.raises(qoslab.ScenarioError) as e:
        b.Timing(jitter="tesbed")
    assert e.value.key == "Timing.jitter" and "'exact', 'testbed'" in e.value.message, str(e.value)


def test_a_reproduction_records_the_timing_of_its_runs(tmp_path: Path) -> None:
    sc = _short(load_scenario(FIVE_CUBIC)).with_overrides(['duration="8s"', 'measurement.end="8s"'])
    points = {"exact": sc, "testbed": sc.with_overrides(["timing.jitter=testbed"])}

    def plan(opts: reproduction.Options) -> list[Sweep]:
        return [Sweep("timing", [({"timing": t}, s) for t, s in points.items()], opts.seeds)]

    def analyse(ctx: reproduction.Context) -> None:
        ctx.table("flows", ctx.flows("timing")[["timing", "flow_name", "throughput_bps"]], title="flows")

    exp = Experiment("timing-probe", "t", "", "", plan=plan, analyse=analyse, seeds=1, quick_seeds=1)
    rep = reproduction.reproduce(exp, quick=True, out=tmp_path, store=tmp_path / "store", progress=False)
    report = (rep.out / "report.md").read_text()
    assert "| host timing | exact, testbed (`[timing] jitter`" in report, report[:2500]
    flows = pd.read_csv(rep.out / "flows.csv")
    by = {t: list(g["throughput_bps"]) for t, g in flows.groupby("timing")}
    assert by["exact"] != by["testbed"]
    assert timing_of([Sweep("one", [({}, points["testbed"])], [1])]) == "testbed"
    assert timing_of([Sweep("one", [({}, sc)], [1])]) == "exact"


def test_the_timing_example_prints_what_the_page_shows(monkeypatch: pytest.MonkeyPatch) -> None:
    page = (ROOT / "docs" / "scenario-format.md").read_text()
    section = page.split("\n## `[timing]`\n", 1)[1].split("\n## ", 1)[0]
    steps = tutorial_steps(section)
    assert [s.kind for s in steps] == ["python"] and steps[0].shown, steps
    monkeypatch.chdir(ROOT)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(steps[0].code, "docs/scenario-format.md [timing]", "exec"), {})
    assert normalise(out.getvalue()) == normalise(steps[0].shown), out.getvalue()


def test_reproduce_timing_gives_every_run_that_timing_and_its_own_folder(tmp_path: Path) -> None:
    """``qoslab reproduce --timing testbed``: every planned scenario runs with the preset (the
    linux flavour's validated configuration), the outputs go to NAME-...-timing-testbed/ and the
    command and verdict file record it; a value that is not a timing is refused in one line
    naming the option, before any run."""
    import subprocess
    import sys

    from qoslab.reproduction import get
    from qoslab.reproduction.planning import out_name, planned

    exp = get("rio-plus-o")
    opts, sweeps, specs = planned(exp, quick=True, seeds=1, tcp_flavour="linux", timing="testbed")
    assert opts.timing == "testbed" and specs
    assert {sc.timing for sw in sweeps for _, sc in sw.points} == {"testbed"}
    _, _, plain = planned(exp, quick=True, seeds=1, tcp_flavour="linux")
    assert {sp.key for sp in specs}.isdisjoint(sp.key for sp in plain)
    assert out_name("rio-plus-o", opts) == "rio-plus-o-tcp-linux-timing-testbed"
    bad = subprocess.run(
        [
            str(Path(sys.executable).parent / "qoslab"),
            "reproduce",
            "rio-plus-o",
            "--quick",
            "--timing",
            "fast",
            "--out",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode != 0 and "Traceback" not in bad.stderr, bad.stderr
    lines = [ln for ln in bad.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "timing.jitter" in lines[0] and "--timing" in lines[0], bad.stderr
    assert not any(tmp_path.iterdir())
