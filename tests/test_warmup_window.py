"""The warm-up of every run (qoslab.reproduction.warmup_window): MSER-5 on a constructed series
against its closed form, the run's warm-up as the later of its two series', the report of a
real reproduction against the run recomputed outside the store, ``--warmup mser5`` moving the
window (and shortening the run) where the window is ours, and refused where the paper fixes it."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pandas as pd
import pytest

from conftest import QOSLAB
from qoslab import reproduction
from qoslab.reproduction.base import Experiment, Options, Sweep, Window, scenario
from qoslab.reproduction.warmup_window import check, window_of
from qoslab.runs.simulate import run
from qoslab.warmup import mser5, mser_curve, run_warmup, series_end

#: a level of 50 for 100 observations (20 batches), then 400 of a period-5 pattern whose batch
#: means are all 2: MSER(d) = n1·n2/(n1+n2)·48² / (m−d)² with n1 = 20 − d, n2 = 80, zero from d = 20
STEP = np.concatenate([np.full(100, 50.0), np.tile([0.0, 1.0, 2.0, 3.0, 4.0], 80)])


def test_mser5_finds_a_constructed_transient_exactly() -> None:
    curve = mser_curve(STEP)
    m = 100
    for d in range(20):
        n1, n2 = 20 - d, 80
        assert curve[d] == pytest.approx(n1 * n2 / (n1 + n2) * 48.0**2 / (m - d) ** 2, rel=1e-12)
    assert np.all(curve[20:50] < 1e-20)
    w = mser5(STEP)
    assert w is not None and w.observations == 100
    # sampled every 100 ms from 0: the last dropped sample is at 9.9 s
    t = np.arange(STEP.size) * 0.1
    assert series_end(t, STEP) == pytest.approx(9.9)
    # the order of the rows does not matter (a store's series need not be sorted)
    perm = np.random.default_rng(1).permutation(STEP.size)
    assert series_end(t[perm], STEP[perm]) == pytest.approx(9.9)


def test_the_run_warmup_is_the_later_of_queue_and_throughput() -> None:
    t = np.arange(STEP.size) * 0.1
    late = np.concatenate([np.full(200, 7.0), np.tile([0.0, 1.0, 2.0, 3.0, 4.0], 60)])  # ends at 19.9 s
    queue = pd.DataFrame(
        {
            "time_s": np.concatenate([t, t]),
            "queue": ["bottleneck:ab"] * t.size + ["bottleneck:ba"] * t.size,
            "queue_packets": np.concatenate([STEP, late]),  # the other direction: not the bottleneck
        }
    )
    # two flows whose sum is the late series
    flow = pd.DataFrame(
        {"time_s": np.concatenate([t, t]), "throughput_bps": np.concatenate([late / 2, late / 2])}
    )
    w = run_warmup(queue, flow, "bottleneck:ab")
    assert w["warmup_queue_s"] == pytest.approx(9.9)
    assert w["warmup_throughput_s"] == pytest.approx(19.9)
    assert w["warmup_s"] == pytest.approx(19.9)
    drifting = flow.assign(throughput_bps=np.concatenate([t, t]))  # never steady: no warm-up end
    assert np.isnan(run_warmup(queue, drifting, "bottleneck:ab")["warmup_s"])


def _tiny(window: Window) -> Experiment:
    """One point of the FDD-RED scenario 1, 20 s measured from 8 s (sampled every 100 ms)."""
    sc = scenario(
        "fdd-red-s1",
        ["duration=20s", "measurement.start=8s", "measurement.end=20s", "measurement.interval=100ms"],
    )

    def plan(opts: Options) -> list[Sweep]:
        return [Sweep("one", [({"case": "s1"}, sc)], opts.seeds)]

    return Experiment("warmup-test", "t", "p", "s", plan=plan, analyse=lambda ctx: None, window=window)


def test_a_reproduction_reports_every_run_warmup(tmp_path) -> None:
    exp = _tiny(Window(False, "ours"))
    rep = reproduction.reproduce(exp, seeds=2, out=tmp_path / "out", store=tmp_path / "store", progress=False)
    df = pd.read_csv(rep.out / "warmup.csv")
    assert sorted(df["seed"]) == [1, 2]
    sc = exp.plan(rep.options)[0].points[0][1]
    for seed in (1, 2):
        res = run(sc, seed)  # outside the store: the series as the core gives them
        b = res.bottleneck
        direct = run_warmup(res.series_queue, res.series_flow, f"{b['link_name']}:{b['direction']}")
        row = df[df["seed"] == seed].iloc[0]
        assert not np.isnan(direct["warmup_s"])
        for k, v in direct.items():
            assert row[k] == pytest.approx(v), k
        assert row["window_start_s"] == 8.0 and bool(row["ends_after_start"]) == (direct["warmup_s"] > 8.0)
    text = rep.report.read_text()
    assert "## Warm-up (MSER-5)" in text and "**ours to choose**" in text


def test_warmup_mser5_measures_from_the_pilot_warmup(tmp_path) -> None:
    exp = _tiny(Window(False, "ours"))
    kw = {"seeds": 2, "out": tmp_path / "out", "store": tmp_path / "store", "progress": False}
    rep = reproduction.reproduce(exp, warmup="mser5", **kw)
    assert rep.out.name == "warmup-test-mser5"
    win = pd.read_csv(rep.out / "warmup-windows.csv").iloc[0]
    declared = exp.plan(rep.options)[0].points[0][1]
    pilot = run(declared, 1)
    b = pilot.bottleneck
    w = run_warmup(pilot.series_queue, pilot.series_flow, f"{b['link_name']}:{b['direction']}")["warmup_s"]
    assert win["pilot_warmup_s"] == pytest.approx(w)
    start = np.ceil(round(w * 10, 6)) / 10  # rounded up to the 100 ms sampling interval
    assert (win["start_s"], win["end_s"], win["duration_s"]) == pytest.approx((start, start + 12, start + 12))
    assert start < 8.0  # this scenario settles before the declared start: the runs are shorter
    # the runs of the reproduction were measured over that window, and ran no longer
    df = pd.read_csv(rep.out / "warmup.csv")
    assert len(df) == 2 and df["window_start_s"].tolist() == pytest.approx([start, start])
    assert df["window_end_s"].tolist() == pytest.approx([start + 12, start + 12])
    runs = pd.read_csv(rep.out / "runs.csv")
    assert runs["scenario_sha256"].nunique() == 1
    assert runs["scenario_sha256"].iloc[0] != declared.sha256()
    assert window_of(declared) == (8.0, 20.0, 20.0, pytest.approx(window_of(declared)[3]))
    assert "--warmup mser5" in rep.report.read_text()


@pytest.mark.parametrize("name", ["ard", "fdd-red", "red-baseline", "probe-marker", "twam-dwred"])
def test_paper_fixed_windows_refuse_warmup(name, tmp_path) -> None:
    exp = reproduction.get(name)
    assert exp.window is not None and exp.window.fixed_by_paper and "'" in exp.window.cited
    with pytest.raises(ValueError, match=f"experiment {name}: the paper fixes its measurement window"):
        reproduction.reproduce(name, quick=True, warmup="mser5", store=tmp_path / "s", out=tmp_path / "o")
    assert not (tmp_path / "s").exists()  # refused before anything ran


def test_our_windows_accept_warmup_and_the_cli_refuses_in_one_line(tmp_path) -> None:
    for name in ("mixed-traffic", "modern-aqm", "rio-plus-o"):
        exp = reproduction.get(name)
        assert exp.window is not None and not exp.window.fixed_by_paper
        check(exp, "mser5")
    assert all(e.window is not None for e in reproduction.available() if e.name != "warmup-test")
    with pytest.raises(ValueError, match="does not declare"):
        check(_tiny(None), "mser5")  # type: ignore[arg-type]
    p = subprocess.run(
        [QOSLAB, "reproduce", "probe-marker", "--quick", "--warmup", "mser5", "--store", str(tmp_path / "s")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 1 and len(p.stderr.strip().splitlines()) == 1
    assert "the paper fixes its measurement window (Neglia et al." in p.stderr
    assert "refused" in p.stderr and "Traceback" not in p.stderr


def test_verdicts_record_the_warmup_summary(tmp_path) -> None:
    """An experiment with verdicts records the summary in verdicts.json's header."""
    from qoslab.verdicts import NOT_TESTABLE, Verdict

    base = _tiny(Window(False, "ours"))

    def analyse(ctx) -> None:  # noqa: ANN001
        ctx.verdict(
            Verdict(
                claim="c",
                section="s",
                reading="r",
                ours="o",
                paper="p",
                effect=float("nan"),
                ci95=(float("nan"), float("nan")),
                test="t",
                p=float("nan"),
                seeds=1,
                verdict=NOT_TESTABLE,
                reason="r",
            )
        )

    exp = Experiment(base.name, "t", "p", "s", plan=base.plan, analyse=analyse, window=base.window)
    rep = reproduction.reproduce(exp, seeds=1, out=tmp_path / "out", store=tmp_path / "store", progress=False)
    doc = json.loads((rep.out / "verdicts.json").read_text())
    wu = doc["warmup"]
    assert wu["runs"] == 1 and wu["window"] == "ours to choose" and wu["applied"] == "no (reported only)"
    df = pd.read_csv(rep.out / "warmup.csv")
    assert wu["max_s"] == pytest.approx(df["warmup_s"].max())
