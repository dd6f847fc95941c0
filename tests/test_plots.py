"""`qoslab plot`: a run's time series and a sweep's metric against a swept key, drawn from the
real outputs and checked against them (the plotted means are the store's means)."""

from __future__ import annotations

import subprocess

import matplotlib.image
import pytest

import qoslab.report.results
from conftest import QOSLAB, SCENARIOS, one_line_error
from qoslab.plots import PlotError, run_figure, save, sweep_figure
from qoslab.stats import summarize
from test_figures import _bars, _span

S1 = str(SCENARIOS / "fdd-red-s1.toml")
LIMIT = "link.bottleneck.queue_ab.limit"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("run") / "out"
    p = subprocess.run([QOSLAB, "run", S1, "--seed", "2", "--out", str(d)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return d


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    st = tmp_path_factory.mktemp("sweep") / "store"
    cmd = [
        QOSLAB,
        "sweep",
        S1,
        "--grid",
        f"{LIMIT}=20pkts,50pkts,100pkts",
        "--grid",
        "tcp.variant=reno,newreno",
    ]
    p = subprocess.run([*cmd, "--seeds", "3", "--store", str(st), "--quiet"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return st


def test_run_figure_draws_the_runs_own_series(run_dir, tmp_path):
    import pandas as pd

    fig, prov = run_figure(run_dir)
    queue, cwnd, thr = fig.axes[:3]
    assert queue.get_title() == "queue at bottleneck:ab" and queue.get_ylabel() == "queue (packets)"
    sq = pd.read_parquet(run_dir / "series_queue.parquet")
    want = sq[sq["queue"] == "bottleneck:ab"]
    drawn = {ln.get_label(): ln for ln in queue.get_lines()}
    assert list(drawn["RED's average queue"].get_ydata()) == list(want["avg_queue"])
    assert list(drawn["instantaneous queue"].get_ydata()) == list(want["queue_packets"])
    assert (
        len(cwnd.get_lines()) == 5 and len(thr.get_lines()) == 5 and thr.get_ylabel() == "throughput (Mbit/s)"
    )
    # one legend for all panels: the queue's lines must not share a colour with any flow
    flow_colours = {ln.get_color() for ln in thr.get_lines() if ln.get_label().startswith("ftp")}
    assert not {ln.get_color() for ln in queue.get_lines()} & flow_colours
    assert "seed 2" in prov and qoslab.__version__ in prov
    for suffix in (".png", ".svg", ".pdf"):
        fig, prov = run_figure(run_dir)
        out = save(fig, tmp_path / f"run{suffix}", prov)
        assert out.stat().st_size > 10_000, suffix
    img = matplotlib.image.imread(tmp_path / "run.png")
    # one panel a row, within the site's text column (tests/test_site_browser.py)
    assert img.shape[0] > img.shape[1] > 900 and img[..., :3].std() > 0.05
    svg = (tmp_path / "run.svg").read_text()
    assert "fdd-red-s1, seed 2: queue, cwnd and throughput over time" in svg and qoslab.__version__ in svg


def test_sweep_figure_plots_the_stored_means_and_intervals(store):
    fig, prov = sweep_figure(store, "fdd-red-s1", "aggregate_throughput_bps", x=LIMIT, by="tcp.variant")
    ax = fig.axes[0]
    assert ax.get_xlabel() == f"{LIMIT} (pkts)\n95 % CI: Student t"
    assert ax.get_ylabel() == "aggregate_throughput_bps (Mbit/s)"
    runs = qoslab.report.results.load(store, sweep="fdd-red-s1")
    stats = summarize(runs, ["aggregate_throughput_bps"], by=[f"{LIMIT}_pkts", "tcp.variant"])
    lines = {c.get_label(): c.lines[0] for c in ax.containers}  # errorbar: (data line, caps, bars)
    assert set(lines) == {"tcp.variant = reno", "tcp.variant = newreno"}
    for variant in ("reno", "newreno"):
        ln = lines[f"tcp.variant = {variant}"]
        s = stats[stats["tcp.variant"] == variant].sort_values(f"{LIMIT}_pkts")
        assert list(ln.get_xdata()) == [20.0, 50.0, 100.0]
        assert list(ln.get_ydata()) == pytest.approx(list(s["mean"] / 1e6), rel=1e-12)
    assert "seeds 1-3" in prov


def test_plot_errors_are_one_line(store, run_dir, tmp_path):
    def plot(*args: str) -> str:
        p = subprocess.run([QOSLAB, "plot", *args], capture_output=True, text=True, cwd=tmp_path)
        return one_line_error(p)

    assert "no stored runs of sweep 'nope'" in plot(
        "sweep", "nope", "-m", "fairness_index", "--x", LIMIT, "--store", str(store)
    )
    assert "has no swept key 'queue.limit'" in plot(
        "sweep", "fdd-red-s1", "-m", "fairness_index", "--x", "queue.limit", "--store", str(store)
    )
    assert "no metric 'fairness'" in plot(
        "sweep", "fdd-red-s1", "-m", "fairness", "--x", LIMIT, "--store", str(store)
    )
    assert "unknown format .jpg" in plot("run", str(run_dir), "--out", str(tmp_path / "x.jpg"))
    assert "no such run directory" in plot("run", str(tmp_path / "missing"))
    with pytest.raises(PlotError, match="no summary.json"):
        run_figure(tmp_path)


def _run(tmp_path_factory, name: str, *sets: str):  # noqa: ANN001, ANN202
    d = tmp_path_factory.mktemp(name) / "out"
    args = [x for s in sets for x in ("--set", s)]
    p = subprocess.run(
        [QOSLAB, "run", S1, "--seed", "2", *args, "--out", str(d)], capture_output=True, text=True
    )
    assert p.returncode == 0, p.stderr
    return d


def test_flows_are_chosen_by_name_glob_or_rank(run_dir):
    import json

    from qoslab.plots import select_flows

    summary = json.loads((run_dir / "summary.json").read_text())
    thr = {f["name"]: f["throughput_bps"] for f in summary["flows"]}
    names = list(thr)
    ranked = sorted(names, key=thr.__getitem__)
    assert set(select_flows(names, thr, ["worst 2"])) == set(ranked[:2])
    assert set(select_flows(names, thr, ["best 1", "ftp0"])) == {ranked[-1], "ftp0"}
    assert select_flows(names, thr, ["ftp[34]"]) == ["ftp3", "ftp4"]
    assert select_flows(names, thr, []) == names
    with pytest.raises(PlotError, match="--flows 'tcp9': no such flow .*ftp0"):
        select_flows(names, thr, ["tcp9"])
    fig, _ = run_figure(run_dir, ["worst 2"])
    assert {ln.get_label() for ln in fig.axes[2].get_lines()} == set(ranked[:2])
    assert "(2 of 5 flows)" in fig.get_suptitle()


def test_run_figure_shades_the_window_and_says_when_sampling_aliases(run_dir):
    import json

    from qoslab.plots import sampling_warning

    w0, w1 = json.loads((run_dir / "summary.json").read_text())["measurement_window_s"]
    fig, _ = run_figure(run_dir)
    for ax in fig.axes[:3]:
        spans = [p for p in ax.patches if p.get_label() == "measurement window"]
        assert len(spans) == 1
        assert _span(spans[0]) == (w0, w1)
    # fdd-red-s1 samples every 1 s, its smoothed RTTs are ~0.3 s: the cwnd panel and the CLI say so
    said = "peaks and halvings between samples are not drawn"
    assert said in fig.get_label() and said in " ".join(fig.axes[1].get_xlabel().split())
    assert sampling_warning(0.01, [0.1]) == "" and "≤ 0.025 s" in sampling_warning(0.5, [0.1, 0.3])
    assert "= 5 × the smallest smoothed RTT (0.1 s)" in sampling_warning(0.5, [0.1, 0.3])
    assert sampling_warning(0.5, [float("nan")]) == ""


def test_cwnd_is_drawn_against_the_receiver_window_it_meets(tmp_path_factory):
    d = _run(tmp_path_factory, "win", "tcp.window=6")
    import pandas as pd

    sf = pd.read_parquet(d / "series_flow.parquet")
    assert sf["cwnd"].max() > 1.3 * 6  # ns-2's Reno keeps opening cwnd while window-limited
    fig, _ = run_figure(d)
    cwnd = fig.axes[1]
    refs = [ln for ln in cwnd.get_lines() if ln.get_label().startswith("receiver window")]
    assert [ln.get_label() for ln in refs] == ["receiver window 6 pkts"] and list(refs[0].get_ydata()) == [
        6,
        6,
    ]
    assert cwnd.get_ylim() == pytest.approx((0.0, 6.9)) and "cwnd itself reaches" in " ".join(
        cwnd.get_title().split()
    )
    # the flows' lines are the window the sender uses, min(cwnd, 6), sample by sample
    first = sf[sf["flow_name"] == "ftp0"]["cwnd"].clip(upper=6.0)
    drawn = {ln.get_label(): ln for ln in cwnd.get_lines()}
    assert list(drawn["ftp0"].get_ydata()) == list(first) and max(first) == 6.0


def test_averages_are_named_as_what_they_are():
    import numpy as np
    import pandas as pd

    from qoslab.plots import average_labels

    nan = float("nan")
    two = pd.DataFrame({"avg_queue": [1.0], "avg_prec0": [1.0], "avg_prec1": [3.0], "avg_prec2": [nan]})
    assert average_labels({"type": "rio", "mode": "coupled"}, two) == [
        ("avg_prec0", "avg_in (RIO-C)"),
        ("avg_prec1", "avg_total (RIO-C)"),
    ]
    assert [n for _, n in average_labels({"type": "rio", "mode": "decoupled"}, two)] == [
        "avg_in (RIO-D)",
        "avg_out (RIO-D)",
    ]
    three = two.assign(avg_prec2=[2.0])
    assert [n for _, n in average_labels({"type": "rio_plus_o"}, three)][2].startswith("avg_out")
    red = pd.DataFrame({"avg_queue": [1.0], "avg_prec0": [1.0], "avg_prec1": [nan], "avg_prec2": [nan]})
    assert average_labels({"type": "red"}, red) == [("avg_queue", "RED's average queue")]
    tail = red.assign(avg_queue=[np.nan], avg_prec0=[np.nan])
    assert average_labels({"type": "droptail"}, tail) == []


def test_the_sweep_metric_separates_reds_average_from_rios_avg_in():
    import pandas as pd

    from qoslab.runs.tasks import DEPRECATED_METRICS, STANDARD_METRICS, _avg_means

    nan = float("nan")
    red = pd.DataFrame({"avg_queue": [2.0, 4.0], "avg_prec0": [2.0, 4.0], "avg_prec1": [nan, nan]})
    rio = pd.DataFrame({"avg_queue": [1.0, 3.0], "avg_prec0": [1.0, 3.0], "avg_prec1": [5.0, 7.0]})
    assert _avg_means(red)["red_avg_mean_pkts"] == 3.0 and _avg_means(red)["rio_avg_in_mean_pkts"] != 0.0
    assert _avg_means(rio)["rio_avg_in_mean_pkts"] == 2.0
    assert pd.isna(_avg_means(rio)["red_avg_mean_pkts"]) and pd.isna(_avg_means(red)["rio_avg_in_mean_pkts"])
    assert (
        "avg_queue_mean_pkts" not in STANDARD_METRICS
        and "avg_in" in DEPRECATED_METRICS["avg_queue_mean_pkts"]
    )


def test_sweep_figure_labels_logx_and_n_per_point(store, tmp_path):
    fig, _ = sweep_figure(
        store,
        "fdd-red-s1",
        "fairness_index",
        x=LIMIT,
        labels={"fairness_index": "Jain's index", LIMIT: "buffer"},
    )
    ax = fig.axes[0]
    assert ax.get_ylabel() == "Jain's index" and ax.get_xlabel().startswith("buffer (pkts)")
    assert ax.get_xscale() == "linear"  # 20-100: 5x
    assert "n = 6 runs per point" in fig.get_suptitle()  # 3 seeds × 2 variants
    assert ax.get_xlabel().endswith("95 % CI: bootstrap percentile, inside [0, 1]")
    runs = qoslab.report.results.load(store, sweep="fdd-red-s1")
    for (lo, hi), (_, v) in zip(_bars(ax), runs.groupby(f"{LIMIT}_pkts")["fairness_index"], strict=True):
        assert v.min() <= lo <= hi <= v.max() <= 1.0
    forced, _ = sweep_figure(store, "fdd-red-s1", "fairness_index", x=LIMIT, logx=True)
    assert forced.axes[0].get_xscale() == "log"
    with pytest.raises(PlotError, match="--logx: tcp.variant has values that are not positive numbers"):
        sweep_figure(store, "fdd-red-s1", "fairness_index", x="tcp.variant", logx=True)
    # a sweep name keeps its grid (the store refuses another under it), so uneven n comes from
    # runs a sweep lost (failed, or from before a point's seeds were all run): four of the
    # 20-packet point's six memberships are taken out, as if those runs had failed
    import sqlite3

    with sqlite3.connect(store / "results.db") as db:
        rows = [
            r[0]
            for r in db.execute("SELECT rowid, params FROM sweep_runs WHERE sweep = 'fdd-red-s1'")
            if "20pkts" in db.execute("SELECT params FROM sweep_runs WHERE rowid = ?", (r[0],)).fetchone()[0]
        ]
        assert len(rows) == 6, rows
        db.executemany("DELETE FROM sweep_runs WHERE rowid = ?", [(r,) for r in rows[:4]])
    fig, _ = sweep_figure(store, "fdd-red-s1", "fairness_index", x=LIMIT)
    assert "n = 2-6 runs per point" in fig.get_suptitle()
    notes = sorted(t.get_text() for t in fig.axes[0].texts)
    assert notes == ["n=2", "n=6", "n=6"], notes
    # a parameter spanning 20x gets a log axis by itself
    cmd = [QOSLAB, "sweep", S1, "--name", "wide", "--grid", f"{LIMIT}=5pkts,100pkts", "--seeds", "1"]
    p = subprocess.run(
        [*cmd, "--grid", "tcp.variant=reno", "--store", str(store), "--quiet"], capture_output=True, text=True
    )
    assert p.returncode == 0, p.stderr
    wide, _ = sweep_figure(store, "wide", "fairness_index", x=LIMIT)
    assert wide.axes[0].get_xscale() == "log"  # 5-100: 20x
    err = subprocess.run(
        [
            QOSLAB,
            "plot",
            "sweep",
            "fdd-red-s1",
            "-m",
            "avg_queue_mean_pkts",
            "--x",
            LIMIT,
            "--store",
            str(store),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert "red_avg_mean_pkts" in one_line_error(err)
    # a store written before the split still plots its avg_queue_mean_pkts, under a label saying so
    import sqlite3

    with sqlite3.connect(store / "results.db") as db:
        ids = [r[0] for r in db.execute("SELECT DISTINCT run_id FROM metrics")]
        db.executemany(
            "INSERT INTO metrics (run_id, name, value) VALUES (?, 'avg_queue_mean_pkts', 40.0)",
            [(i,) for i in ids],
        )
    old, _ = sweep_figure(store, "fdd-red-s1", "avg_queue_mean_pkts", x=LIMIT)
    assert old.axes[0].get_ylabel() == "avg_queue_mean_pkts (deprecated name) (packets)"
    assert {y for ln in old.axes[0].get_lines() for y in ln.get_ydata()} == {40.0}
    bad = subprocess.run(
        [
            QOSLAB,
            "plot",
            "sweep",
            "fdd-red-s1",
            "-m",
            "utilization",
            "--x",
            LIMIT,
            "--label",
            "x",
            "--store",
            str(store),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert "--label 'x': expected KEY=TEXT" in one_line_error(bad)
