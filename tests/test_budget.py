"""A run's budget (qoslab.budget): memory and capture bytes estimated before running and
refused above the limit with one line; wall-clock time measured from the pace, a run that would
exceed it stopped with its partial results."""

import json
import subprocess
import sys

import pytest

import qoslab
from conftest import QOSLAB, SCENARIOS, one_line_error
from qoslab.budget import Budget, estimate
from qoslab.runs.simulate import RunOverBudget

S1 = SCENARIOS / "fdd-red-s1.toml"


def test_a_one_nanosecond_interval_is_refused_before_allocating_anything(tmp_path):
    p = subprocess.run(
        [QOSLAB, "run", str(S1), "--set", "measurement.interval=1ns", "--out", str(tmp_path / "o")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    line = one_line_error(p)
    assert "fdd-red-s1.toml" in line and "key `measurement.interval`" in line
    assert "TB of memory" in line and "raise it with --max-memory" in line
    sc = qoslab.load_scenario(S1).with_overrides(["measurement.interval=1ns"])
    with pytest.raises(qoslab.ScenarioError, match="measurement.interval"):
        qoslab.run(sc)
    ok = sc.with_overrides(["measurement.interval=1s"])
    assert qoslab.run(ok, budget=Budget(max_memory=1e9)).events > 0


def test_capture_that_could_fill_the_disk_is_refused(tmp_path):
    sc = qoslab.load_scenario(S1)
    cap = [("bottleneck", "ab", str(tmp_path / "b.pcap"))]
    with pytest.raises(qoslab.ScenarioError, match="key `capture`.*--max-capture"):
        qoslab.run(sc, captures=cap, budget=Budget(max_capture=100e3))
    res = qoslab.run(sc, captures=cap, budget=Budget(max_capture=50e6))
    written = (tmp_path / "b.pcap").stat().st_size
    est = estimate(sc.resolved, [sc.link_direction_index("bottleneck", "ab")]).capture_bytes
    assert res.events > 0 and written <= est <= 10 * written  # an upper bound, of the right order


def test_memory_estimate_bounds_what_a_run_takes():
    """The estimate is an upper bound of the right order for a run dominated by time series
    (100 s at 1 ms: 2.7 M rows, tables built)."""
    code = (
        "import resource, qoslab; from qoslab.budget import estimate\n"
        f"sc = qoslab.load_scenario({str(S1)!r}).with_overrides(['measurement.interval=1ms'])\n"
        "r = qoslab.run(sc); r.series_queue; r.series_flow\n"
        "rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024\n"
        "print(rss, estimate(sc.resolved, []).memory_bytes)"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    rss, est = map(float, p.stdout.split())
    assert rss <= est <= 3 * rss, (rss, est)


def test_a_run_whose_pace_exceeds_its_time_budget_stops_with_partial_results(tmp_path):
    sc = qoslab.load_scenario(S1).with_overrides(
        ["duration=5e6s", "measurement.end=5e6s", "measurement.interval=1000s"]
    )
    with pytest.raises(RunOverBudget) as e:
        qoslab.run(sc, out=tmp_path / "o", budget=Budget(max_time_s=2.0), tables=False)
    r = e.value.result
    assert r.partial and 0 < r.simulated_until_s < 5e6
    assert "at this pace the run would take about" in str(e.value) and "\n" not in str(e.value)
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert s["partial"] is True and s["stopped"].startswith("at this pace")
    long = ["--set", "duration=5e6s", "--set", "measurement.end=5e6s", "--set", "measurement.interval=1000s"]
    p = subprocess.run(
        [QOSLAB, "run", str(S1), *long, "--max-time", "2s"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "raise the limit with --max-time" in one_line_error(p)
    # without --out what it measured was lost: its table is printed, as a whole run's is
    assert "measurement window" in p.stdout and "packet-hops in" in p.stdout, p.stdout


def test_a_run_whose_outputs_cannot_be_written_shows_what_it_measured(tmp_path, monkeypatch, capsys):
    """A full disk lost the whole run: nothing was kept and nothing printed. Its table is
    printed, then the one error line."""
    import errno

    from qoslab.runs import run_command, simulate

    def full(self, *args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(simulate.Result, "write", full)
    with pytest.raises(SystemExit) as e:
        short = ["duration=2s", "measurement.start=0s", "measurement.end=2s"]
        run_command.run(S1, out=tmp_path / "o", set_=short)
    assert e.value.code == 1
    got = capsys.readouterr()
    assert "measurement window" in got.out and "Jain index" in got.out, got.out
    lines = [x for x in got.err.splitlines() if x.strip()]
    assert lines[-1] == (
        f"error: --out {tmp_path / 'o'}: cannot write the run's outputs (No space left on device); "
        "none of them is kept: the results above are what it measured"
    ), got.err
    assert not (tmp_path / "o").exists()


def test_a_forced_run_that_stops_early_never_replaces_the_earlier_run(tmp_path):
    """``--force`` replaces an earlier run with a whole new one; a run stopped by its budget (or
    by Ctrl-C) keeps its partial results beside it, in ``OUT.partial``, and ``--out`` keeps the
    earlier run (they replaced it before)."""
    out = tmp_path / "o"
    done = qoslab.run(S1, out=out, tables=False)
    long = ["duration=5e6s", "measurement.end=5e6s", "measurement.interval=1000s"]
    sc = qoslab.load_scenario(S1).with_overrides(long)
    with pytest.raises(RunOverBudget) as e:
        qoslab.run(sc, out=out, force=True, budget=Budget(max_time_s=1.0), tables=False)
    assert e.value.out == tmp_path / "o.partial" and e.value.result.out == e.value.out
    kept = json.loads((out / "summary.json").read_text())
    assert not kept.get("partial") and kept["duration_s"] == done.summary()["duration_s"]
    assert json.loads((tmp_path / "o.partial" / "summary.json").read_text())["partial"] is True
    p = subprocess.run(
        [QOSLAB, "run", str(S1), *(a for k in long for a in ("--set", k))]
        + ["--max-time", "1s", "--out", str(out), "--force"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    line = one_line_error(p)
    assert f"wrote the partial results to {tmp_path / 'o.partial-2'}" in line
    assert f"--out {out} keeps its earlier run" in line
    assert not json.loads((out / "summary.json").read_text()).get("partial")


def test_memory_stays_flat_over_simulated_time():
    """Without time series (one interval spanning the run), a run's memory does not grow with
    simulated time: 20,000 s of the 5-flow RED scenario (1.5 M packets) end where 2,000 s did.
    Measured in a process of its own: a test worker's resident size also moves with whatever
    its other threads and earlier tests left behind (it rose 2.1 MB of 430 once in the suite)."""
    code = f"""
import json, qoslab
from qoslab import _core
sc = qoslab.load_scenario({str(S1)!r}).with_overrides(
    ["duration=20000s", "measurement.end=20000s", "measurement.interval=20000s"])
samples = []
def rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20
raw = _core.simulate_resolved(sc.core, 1, [], lambda frac: samples.append((frac, rss_mb())))
print(json.dumps({{"hops": raw["packet_hops"], "samples": samples}}))
"""
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    samples = out["samples"]
    assert out["hops"] > 4e6
    at_10 = next(m for f, m in samples if f >= 0.1)
    assert samples[-1][1] - at_10 < 2.0, samples[:: max(len(samples) // 10, 1)]


def test_short_durations_are_never_shown_as_zero_seconds():
    from qoslab.budget import human_seconds

    assert [human_seconds(x) for x in (0.01, 0.5, 3.25, 12, 300, 9000)] == [
        "0.01 s",
        "0.5 s",
        "3.2 s",
        "12 s",
        "5 min",
        "2.5 h",
    ]


@pytest.mark.parametrize("field", ["max_memory", "max_capture", "max_time_s"])
@pytest.mark.parametrize("value", [-1, float("nan"), "8GB", True])
def test_a_budget_limit_that_is_not_a_number_of_at_least_zero_is_refused(field, value):
    """-1 and NaN meant "no limit", silently."""
    with pytest.raises(qoslab.budget.BudgetError, match=f"Budget {field}: expected a number >= 0"):
        qoslab.run(S1, budget=Budget(**{field: value}))


@pytest.mark.parametrize("seed", [1.5, "3", True])
def test_a_seed_that_is_not_a_whole_number_is_refused(seed):
    """1.5, "3" and True ran as seeds 1, 3 and 1."""
    with pytest.raises(ValueError, match="seed: a whole number"):
        qoslab.run(S1, seed=seed)
    import numpy as np

    assert qoslab.run(S1, seed=np.int64(3), tables=False).seed == 3
