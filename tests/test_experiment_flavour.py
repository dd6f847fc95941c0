"""``reproduce(..., flavour="ns2")``: every sweep's scenarios and every run the analysis makes
itself run with ns-2.35 dsRED's flavour, into ``NAME-ns2/``, and the report says so."""

from __future__ import annotations

import subprocess

import pandas as pd
import pytest

import qoslab
from conftest import QOSLAB, SCENARIOS
from qoslab import reproduction
from qoslab.ns2.flavour import flavours_used
from qoslab.reproduction.base import Experiment, Sweep


def _experiment(seen: list[dict[str, set[str]]]) -> Experiment:
    sc = qoslab.load_scenario(SCENARIOS / "ard-rio-4flows.toml").with_overrides(
        ["duration=30s", "measurement.start=10s", "measurement.end=30s"]
    )

    def plan(opts: reproduction.Options) -> list[Sweep]:
        return [Sweep("one", [({"k": 1}, sc)], opts.seeds)]

    def analyse(ctx: reproduction.Context) -> None:
        r = ctx.run(sc, ctx.options.seeds[0])
        seen.append(flavours_used(r.scenario))
        ctx.table("flows", ctx.flows("one")[["seed", "flow_name", "throughput_bps"]], title="flows")

    return Experiment("flavour-probe", "t", "", "", plan=plan, analyse=analyse, seeds=1, quick_seeds=1)


def test_reproduce_in_the_ns2_flavour(tmp_path):
    seen: list[dict[str, set[str]]] = []
    exp = _experiment(seen)
    store = tmp_path / "store"
    ref = reproduction.reproduce(exp, quick=True, out=tmp_path, store=store, progress=False)
    ns2 = reproduction.reproduce(exp, quick=True, out=tmp_path, store=store, progress=False, flavour="ns2")
    assert ref.out.name == "flavour-probe" and ns2.out.name == "flavour-probe-ns2"
    # the analysis's own run follows the reproduction's flavour
    assert seen[0] and all(f == {"reference"} for f in seen[0].values()), seen
    assert seen[1] and all(f == {"ns2"} for f in seen[1].values()), seen
    # the stored runs are other runs (another scenario), with other results
    assert ns2.sweep.computed == 1, "the ns2 flavour must not reuse the reference runs"
    a = pd.read_csv(ref.out / "flows.csv")["throughput_bps"]
    b = pd.read_csv(ns2.out / "flows.csv")["throughput_bps"]
    assert not a.equals(b)
    rep = (ns2.out / "report.md").read_text()
    assert "| mechanism flavour | ns2:" in rep, rep[:2000]
    with pytest.raises(ValueError, match="unknown flavour 'ns3'"):
        reproduction.reproduce(exp, quick=True, out=tmp_path, store=store, progress=False, flavour="ns3")


def test_cli_flavour_option_rejects_an_unknown_flavour(tmp_path):
    p = subprocess.run(
        [QOSLAB, "reproduce", "red-baseline", "--quick", "--flavour", "ns3", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 1 and "unknown flavour 'ns3'" in p.stderr, (p.returncode, p.stderr[-500:])
    assert "Traceback" not in p.stderr
