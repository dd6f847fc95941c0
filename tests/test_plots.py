"""`qoslab plot`: a run's time series and a sweep's metric against a swept key, drawn from the
real outputs and checked against them (the plotted means are the store's means)."""

from __future__ import annotations

import subprocess

import matplotlib.image
import pytest

import qoslab.results
from conftest import QOSLAB, SCENARIOS, one_line_error
from qoslab.plots import PlotError, run_figure, save, sweep_figure
from qoslab.stats import summarize

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
    assert list(drawn["AQM average"].get_ydata()) == list(want["avg_queue"])
    assert list(drawn["instantaneous queue"].get_ydata()) == list(want["queue_packets"])
    assert (
        len(cwnd.get_lines()) == 5 and len(thr.get_lines()) == 5 and thr.get_ylabel() == "throughput (Mbit/s)"
    )
    # one legend for all panels: the queue's lines must not share a colour with any flow
    flow_colours = {ln.get_color() for ln in thr.get_lines()}
    assert not {ln.get_color() for ln in queue.get_lines()} & flow_colours
    assert "seed 2" in prov and qoslab.__version__ in prov
    for suffix in (".png", ".svg", ".pdf"):
        fig, prov = run_figure(run_dir)
        out = save(fig, tmp_path / f"run{suffix}", prov)
        assert out.stat().st_size > 10_000, suffix
    img = matplotlib.image.imread(tmp_path / "run.png")
    assert img.shape[1] > 1500 and img[..., :3].std() > 0.05
    svg = (tmp_path / "run.svg").read_text()
    assert "fdd-red-s1, seed 2: queue, cwnd and throughput over time" in svg and qoslab.__version__ in svg


def test_sweep_figure_plots_the_stored_means_and_intervals(store):
    fig, prov = sweep_figure(store, "fdd-red-s1", "aggregate_throughput_bps", x=LIMIT, by="tcp.variant")
    ax = fig.axes[0]
    assert ax.get_xlabel() == f"{LIMIT} (pkts)" and ax.get_ylabel() == "aggregate_throughput_bps (Mbit/s)"
    runs = qoslab.results.load(store, sweep="fdd-red-s1")
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
