"""The library behind `qoslab sweep` and `qoslab results`: grid and metric parsing, statistics
tables over seeds, the sweeps listing and the run count of the store."""

import math

import pandas as pd
import pytest

import qoslab
import qoslab.report.results
from conftest import SCENARIOS
from qoslab.runs.executors import (
    ExecutorError,
    SerialExecutor,
    check_executor_options,
)
from qoslab.runs.sweep import (
    STANDARD_METRICS,
    GridError,
    axis_columns,
    override_points,
    parse_axes,
    parse_metric_names,
    plan,
    run_sweep,
    sweep_runs,
    sweep_statistics,
    write_sweep_tables,
)
from qoslab.stats import fmt_pm, mean_ci_table, summarize, t_ppf
from qoslab.store import Store

S1 = str(SCENARIOS / "fdd-red-s1.toml")
SHORT = ["duration=5s", "measurement.start=0s", "measurement.end=5s"]


def test_parse_axes_keeps_the_order_and_refuses_a_repeated_key():
    assert parse_axes(["b=1,2", "a=[1, 2],3"]) == {"b": ["1", "2"], "a": ["[1, 2]", "3"]}
    assert list(parse_axes(["b=1", "a=2"])) == ["b", "a"]
    assert parse_axes([]) == {}
    with pytest.raises(GridError, match="--grid b: the key is given twice"):
        parse_axes(["b=1", "a=2", "b=3"])


def test_parse_metric_names_refuses_an_empty_list():
    # `qoslab sweep --show ""` used to end in a traceback.
    with pytest.raises(ValueError, match="name at least one metric"):
        parse_metric_names(" , ")


def test_parse_metric_names_checks_standard_names_unless_metric_functions_add_some():
    assert parse_metric_names(" fairness_index, utilization ,") == ["fairness_index", "utilization"]
    with pytest.raises(ValueError, match=r"--show: unknown metric foo \(known: fairness_index,"):
        parse_metric_names("fairness_index,foo")
    assert parse_metric_names("foo", ["m:f"]) == ["foo"]
    assert set(parse_metric_names(",".join(STANDARD_METRICS))) == set(STANDARD_METRICS)


def test_fmt_pm():
    assert fmt_pm(0.758491, 1.2345) == "0.7585 ± 1.2"
    assert fmt_pm(865920.4, 315114.3) == "865920 ± 315114"
    assert fmt_pm(-12345.6, 7.0) == "-12346 ± 7"
    assert fmt_pm(5.0, math.nan) == "5"
    assert fmt_pm(math.nan, 1.0) == "n/a"


def test_mean_ci_table_is_the_closed_form_t_interval_per_group():
    runs = pd.DataFrame(
        {
            "delay": ["10ms"] * 3 + ["5ms"] * 3,
            "seed": [1, 2, 3] * 2,
            "x": [1.0, 2.0, 3.0, 10.0, 10.0, 10.0],
            "y": [0.0, 0.0, 6.0, 1.0, 2.0, 3.0],
        }
    )
    stats = summarize(runs, ["x", "y"], by=["delay"])
    t = mean_ci_table(stats, ["x", "y"], by=["delay"])
    assert list(t.columns) == ["delay", "n", "x", "y"]
    assert list(t["delay"]) == ["10ms", "5ms"]  # the order of appearance, not sorted
    assert list(t["n"]) == ["3", "3"]
    half = t_ppf(0.975, 2) * 1.0 / math.sqrt(3)  # std 1 over 3 seeds
    assert half == pytest.approx(2.484, abs=1e-3)
    assert t["x"].iloc[0] == f"2 ± {half:.2g}" == "2 ± 2.5"
    assert t["x"].iloc[1] == "10 ± 0"
    assert t["y"].iloc[1] == "2 ± 2.5"
    whole = mean_ci_table(summarize(runs, ["x"]), ["x"])
    assert list(whole.columns) == ["n", "x"] and list(whole["n"]) == ["6"]


def test_sweep_statistics_uses_only_successful_runs():
    runs = pd.DataFrame(
        {"status": ["ok", "ok", "failed"], "seed": [1, 2, 3], "x": [1.0, 3.0, float("nan")], "k": ["a"] * 3}
    )
    s = sweep_statistics(runs, ["x"], by=["k"])
    assert s is not None and list(s["n"]) == [2] and list(s["mean"]) == [2.0] and list(s["seeds"]) == ["1-2"]
    assert sweep_statistics(runs[runs["status"] == "failed"], ["x"]) is None
    with pytest.raises(ValueError, match="--show: the runs have no metric z"):
        sweep_statistics(runs, ["x", "z"])


def test_check_executor_options():
    check_executor_options("local")
    check_executor_options("dask", scheduler="tcp://h:1")
    check_executor_options("slurm", job_script=True)
    with pytest.raises(ExecutorError, match="unknown executor 'nope'"):
        check_executor_options("nope")
    with pytest.raises(ExecutorError, match="--scheduler needs --executor dask"):
        check_executor_options("local", scheduler="tcp://h:1")
    with pytest.raises(ExecutorError, match="--print-job-script needs --executor slurm or pbs"):
        check_executor_options("dask", scheduler="tcp://h:1", job_script=True)


def test_sweeps_listing_run_count_and_sweep_tables(tmp_path):
    base = qoslab.load_scenario(S1).with_overrides(SHORT)
    axes = parse_axes(["link.bottleneck.delay=10ms,20ms"])
    points = override_points(base, axes)
    a = plan(points, [1], "a")
    b = plan(points[:1], [2, 3], "b", ["sweep_helpers:fail_on_seed_2"])
    with Store(tmp_path / "st") as st:
        assert st.count_runs() == 0
        run_sweep(a, st, SerialExecutor(), progress=False, retries=0)
        run_sweep(b, st, SerialExecutor(), progress=False, retries=0)
        # a: 10ms and 20ms, seed 1; b: 10ms seed 2 (fails) and seed 3
        assert st.count_runs() == 4
        listing = qoslab.report.results.sweeps(st)
        runs_a = sweep_runs(st, a, axes)
        runs_b = sweep_runs(st, b, axes)
    assert list(listing["sweep"]) == ["a", "b"]
    cols = ["runs", "ok", "failed", "scenarios", "min_seed", "max_seed"]
    assert listing[cols].values.tolist() == [[2, 2, 0, 2, 1, 1], [2, 1, 1, 1, 2, 3]]
    assert list(listing["versions"]) == [qoslab.__version__] * 2
    pd.testing.assert_frame_equal(qoslab.report.results.sweeps(tmp_path / "st"), listing)

    # swept values come back typed: numbers, the unit in the column name
    assert list(runs_a["link.bottleneck.delay_ms"]) == [10, 20] and list(runs_a["seed"]) == [1, 1]
    assert runs_a["link.bottleneck.delay_ms"].dtype == "int64" and "link.bottleneck.delay" not in runs_a
    assert list(runs_b["link.bottleneck.delay_ms"]) == [10, 10]
    assert list(runs_b["seed"]) == [2, 3] and list(runs_b["status"]) == ["failed", "ok"]
    view = qoslab.report.results.runs_overview(runs_b)
    assert list(view.columns) == [c for c in qoslab.report.results.OVERVIEW_COLUMNS if c in runs_b.columns]
    assert "fairness_index" in view.columns and "series_queue" not in view.columns
    full = runs_b["scenario_sha256"]
    assert all(len(h) == 12 and f.startswith(h) for h, f in zip(view["scenario_sha256"], full, strict=True))

    stats = sweep_statistics(runs_b, ["fairness_index"], by=axis_columns(runs_b, axes))
    assert stats is not None and list(stats["n"]) == [1] and list(stats["seeds"]) == ["3"]
    runs_csv, stats_csv = write_sweep_tables(tmp_path / "out", runs_b, stats)
    back = pd.read_csv(runs_csv)
    assert len(back) == 2 and not {"series_queue", "series_flow"} & set(back.columns)
    st_back = pd.read_csv(stats_csv)
    assert list(st_back["link.bottleneck.delay_ms"]) == [10]
    assert set(st_back["version"]) == {qoslab.__version__} and list(st_back["n"]) == [1]


def test_a_run_recomputed_for_another_sweep_stays_in_the_first(tmp_path):
    # Sweep b recomputes a run sweep a had stored (b asks for an extra metric function): the
    # stored run is replaced, and it must still belong to sweep a.
    base = qoslab.load_scenario(S1).with_overrides(SHORT)
    axes = parse_axes(["link.bottleneck.delay=10ms,20ms"])
    points = override_points(base, axes)
    a = plan(points, [1], "a")
    b = plan(points[:1], [1, 2], "b", ["sweep_helpers:fail_on_seed_2"])
    with Store(tmp_path / "st") as st:
        run_sweep(a, st, SerialExecutor(), progress=False, retries=0)
        run_sweep(b, st, SerialExecutor(), progress=False, retries=0)
        listing = qoslab.report.results.sweeps(st).set_index("sweep")
        runs_a = sweep_runs(st, a, axes)
    assert listing.loc["a", "runs"] == 2, listing
    assert sorted(runs_a["link.bottleneck.delay_ms"]) == [10, 20]
    assert listing.loc["b", "runs"] == 2


def test_quiet_sweep_prints_only_its_closing_lines_and_still_writes_the_tables(tmp_path):
    import subprocess

    from conftest import QOSLAB

    cmd = [QOSLAB, "sweep", S1, "--grid", "tcp.variant=reno,newreno", "--seeds", "2"]
    cmd += ["--store", str(tmp_path / "st"), "--out", str(tmp_path / "out")]
    loud = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert "runs done" in loud.stderr and "| tcp.variant |" in loud.stdout
    quiet = subprocess.run(
        [*cmd[:-4], "--store", str(tmp_path / "st2"), "--out", str(tmp_path / "out2"), "--quiet"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr
    assert quiet.stdout.splitlines() == [
        f"wrote {tmp_path / 'out2'}/runs.csv and {tmp_path / 'out2'}/stats.csv",
        quiet.stdout.splitlines()[-1],
    ]
    assert quiet.stdout.splitlines()[-1].startswith("4 runs: 4 computed, 0 reused from the store, 0 failed")
    assert (tmp_path / "out2" / "stats.csv").read_text() == (tmp_path / "out" / "stats.csv").read_text()


def test_a_run_reused_by_another_sweep_is_listed_with_that_sweeps_name_and_point(tmp_path):
    base = qoslab.load_scenario(S1).with_overrides(SHORT)
    a = plan(override_points(base, parse_axes(["link.bottleneck.delay=10ms,20ms"])), [1], "a")
    b = plan(override_points(base, parse_axes(["link.bottleneck.delay=20ms"])), [1], "b")
    with Store(tmp_path / "st") as st:
        run_sweep(a, st, SerialExecutor(), progress=False)
        rep = run_sweep(b, st, SerialExecutor(), progress=False)
        runs_b = sweep_runs(st, b, ["link.bottleneck.delay"])
    assert rep.reused == 1 and rep.computed == 0
    assert list(runs_b["sweep"]) == ["b"]
    assert list(runs_b["params"]) == ['{"link.bottleneck.delay": "20ms"}']


@pytest.mark.parametrize(
    ("values", "column", "typed"),
    [
        (["0.01", "0.02"], "k", [0.01, 0.02]),
        (["3", "10"], "k", [3, 10]),
        (["1", "2.5"], "k", [1, 2.5]),
        (["true", "false"], "k", [True, False]),
        (["50pkts", "100pkts"], "k_pkts", [50, 100]),
        (["1.5Mbps", "2Mbps"], "k_Mbps", [1.5, 2]),
        (["500kbps", "2Mbps"], "k_bps", [500e3, 2e6]),
        (["1Mb/s", "2Mbps"], "k_Mbps", [1, 2]),  # two spellings of one unit
        (["100packets", "20pkt"], "k_pkts", [100, 20]),
        (["200us", "1ms"], "k_s", [2e-4, 1e-3]),
        (["64KB", "1KiB"], "k_B", [64e3, 1024.0]),
        (["reno", "newreno"], "k", ["reno", "newreno"]),
        (["10ms", "50pkts"], "k", ["10ms", "50pkts"]),  # two kinds: left as given
        (["10ms", "reno"], "k", ["10ms", "reno"]),
        (["5 furlongs", "10ms"], "k", ["5 furlongs", "10ms"]),
        ([0.5, 1.0], "k", [0.5, 1.0]),  # a Python sweep's numbers are already numbers
        (["20ms", None], "k_ms", [20, None]),  # a key another sweep did not set stays missing
    ],
)
def test_typed_column_gives_numbers_with_the_unit_in_the_name(values, column, typed):
    name, got = qoslab.report.results.typed_column("k", values)
    assert name == column and got == typed
    assert [type(v) for v in got] == [type(v) for v in typed]


def test_results_load_and_sweep_statistics_order_swept_quantities_by_value(tmp_path):
    # As text, "100pkts" sorts before "20pkts"; typed, the grid keeps its numeric order.
    base = qoslab.load_scenario(S1).with_overrides(SHORT)
    axes = parse_axes(["link.bottleneck.queue_ab.limit=100pkts,20pkts,50pkts"])
    specs = plan(override_points(base, axes), [1], "q")
    with Store(tmp_path / "st") as st:
        run_sweep(specs, st, SerialExecutor(), progress=False)
        runs = sweep_runs(st, specs, axes)
    col = "link.bottleneck.queue_ab.limit_pkts"
    assert axis_columns(runs, axes) == [col]
    assert sorted(runs[col]) == [20, 50, 100]
    loaded = qoslab.report.results.load(tmp_path / "st", sweep="q")
    assert loaded[col].dtype == "int64" and sorted(loaded[col]) == [20, 50, 100]
    assert qoslab.report.results.axis_column(loaded, "link.bottleneck.queue_ab.limit") == col
    assert list(loaded["params"])[0] == '{"link.bottleneck.queue_ab.limit": "100pkts"}'  # as given


def test_a_sweeps_runs_are_listed_in_the_plans_order_whatever_order_they_were_stored_in(tmp_path):
    """The store's order is the order the workers finished in (a queued task per worker, two
    workers: it varies); the sweep's tables follow the plan."""
    base = qoslab.load_scenario(S1).with_overrides(SHORT)
    axes = parse_axes(["tcp.variant=reno,newreno"])
    specs = plan(override_points(base, axes), [1, 2], "order")
    with Store(tmp_path / "st") as st:
        run_sweep(list(reversed(specs)), st, SerialExecutor(), progress=False)  # stored last first
        stored = st.query("SELECT scenario_sha256, seed FROM runs ORDER BY id")
        runs = sweep_runs(st, specs, axes)
    planned = [(s.key.scenario_sha256, s.key.seed) for s in specs]
    assert list(zip(stored["scenario_sha256"], stored["seed"], strict=True)) == planned[::-1]
    assert list(zip(runs["scenario_sha256"], runs["seed"], strict=True)) == planned
    stats = sweep_statistics(runs, ["utilization"], axis_columns(runs, axes))
    assert stats is not None and list(stats["tcp.variant"]) == ["reno", "newreno"]
