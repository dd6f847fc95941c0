"""``reproduce`` reports its analysis as it goes (issue 59): a rerun whose runs are all in the
store says so at once, and each table and figure is announced as it is written, so a long
analysis is never a silent minute after the runs' bar is full."""

from __future__ import annotations

import qoslab
from conftest import SCENARIOS
from qoslab import reproduction
from qoslab.reproduction.base import Experiment, Sweep


def _experiment() -> Experiment:
    sc = qoslab.load_scenario(SCENARIOS / "fdd-red-s1.toml").with_overrides(
        ["duration=10s", "measurement.start=2s", "measurement.end=10s"]
    )

    def plan(opts: reproduction.Options) -> list[Sweep]:
        return [Sweep("one", [({"k": 1}, sc)], opts.seeds)]

    def analyse(ctx: reproduction.Context) -> None:
        ctx.table("flows", ctx.flows("one")[["seed", "flow_name", "throughput_bps"]], title="flows")

    return Experiment("progress-probe", "t", "", "", plan=plan, analyse=analyse, seeds=2, quick_seeds=2)


def test_the_analysis_phase_is_reported_and_a_reused_rerun_says_so_first(tmp_path, capsys):
    exp, store = _experiment(), tmp_path / "store"
    reproduction.reproduce(exp, quick=True, out=tmp_path, store=store, progress=True)
    first = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("progress-probe: ")]
    assert "progress-probe: 2 runs; analysing: statistics, tables and figures" in first, first
    assert any(ln.startswith("progress-probe: table flows (") for ln in first), first
    reproduction.reproduce(exp, quick=True, out=tmp_path, store=store, progress=True)
    again = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert (
        again[0]
        == "progress-probe: every run reused from the store; analysing: statistics, tables and figures"
    )
    reproduction.reproduce(exp, quick=True, out=tmp_path, store=store, progress=False)
    assert "progress-probe:" not in capsys.readouterr().err
