"""The CLI's outputs, determinism across runs, and the conservation invariant."""

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

import qoslab
from conftest import QOSLAB, SCENARIOS
from qoslab.runs.simulate import TABLES, WALL_TIME_KEYS

S1 = str(SCENARIOS / "fdd-red-s1.toml")


def run_cli(tmp_path, name, *args):
    out = tmp_path / name
    p = subprocess.run(
        [QOSLAB, "run", S1, "--out", str(out), *args], capture_output=True, text=True, timeout=120
    )
    assert p.returncode == 0, p.stderr
    return out, p.stdout


def strip_wall(d):
    return {k: v for k, v in d.items() if k not in WALL_TIME_KEYS}


def test_run_prints_table_and_writes_outputs(tmp_path):
    out, stdout = run_cli(tmp_path, "a", "--seed", "4")
    assert "Jain index" in stdout and "ftp4" in stdout and "utilisation" in stdout
    s = json.loads((out / "summary.json").read_text())
    for k in ("scenario", "seed", "version", "duration_s", "fairness_index", "utilization", "flows"):
        assert k in s
    assert s["scenario"] == "fdd-red-s1" and s["seed"] == 4 and s["version"] == qoslab.__version__
    assert len(s["flows"]) == 5
    for f in s["flows"]:
        assert {"id", "throughput_bps", "delivered_bytes", "sent_packets", "dropped_packets"} <= set(f)
    for t in ("flows", "links", "series_queue", "series_flow", "flow_drops"):
        df = pd.read_parquet(out / f"{t}.parquet")
        assert len(df) > 0
    sf = pd.read_parquet(out / "series_flow.parquet")
    assert {"time_s", "flow_name", "throughput_bps", "cwnd"} <= set(sf.columns)


def test_sources_at_a_set_rate_get_no_tcp_columns_and_no_fairness_index():
    """Two CBR flows through a priority queue: a retransmission or timeout column and a Jain
    index over rates the scenario sets would be noise; a TCP scenario keeps them (above)."""
    p = subprocess.run(
        [QOSLAB, "run", str(SCENARIOS / "examples" / "multi-priority.toml")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    assert "voice" in p.stdout and "drops" in p.stdout and "utilisation of bottleneck" in p.stdout
    assert "retransmits" not in p.stdout and "timeouts" not in p.stdout and "Jain" not in p.stdout


def test_same_seed_same_summary_different_seed_differs(tmp_path):
    a, _ = run_cli(tmp_path, "a", "--seed", "7")
    b, _ = run_cli(tmp_path, "b", "--seed", "7")
    c, _ = run_cli(tmp_path, "c", "--seed", "8")
    sa, sb, sc = (json.loads((d / "summary.json").read_text()) for d in (a, b, c))
    assert strip_wall(sa) == strip_wall(sb)
    ta = (a / "summary.json").read_text().splitlines()
    tb = (b / "summary.json").read_text().splitlines()
    assert [x for x in ta if "wall_time_s" not in x] == [x for x in tb if "wall_time_s" not in x]
    assert pd.read_parquet(a / "series_flow.parquet").equals(pd.read_parquet(b / "series_flow.parquet"))
    assert sa["flows"] != sc["flows"]


def test_set_override_changes_the_run():
    sc = qoslab.load_scenario(S1).with_overrides(
        ["link.bottleneck.bandwidth=2Mbps", "duration=30s", "measurement.end=30s"]
    )
    assert sc.resolved["duration_ns"] == 30_000_000_000
    res = qoslab.run(sc, seed=1)
    assert res.summary()["aggregate_throughput_bps"] > 1.5e6


@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("*.toml")), ids=lambda p: p.name)
@pytest.mark.parametrize("seed", [1, 2])
def test_every_packet_is_accounted_for(path, seed):
    res = qoslab.run(path, seed=seed)
    assert res.violations == []
    f = res.flows
    assert (f["sent_packets"] == f["delivered_packets"] + f["dropped_packets"] + f["in_flight_packets"]).all()
    lk = res.links
    drops = lk["early_drops"] + lk["forced_drops"] + lk["overflow_drops"]
    assert (lk["arrivals"] == lk["departures"] + drops + lk["queued_at_end"]).all()


def test_udp_sources_and_adding_a_flow_leaves_other_streams_alone():
    table = qoslab.load_scenario(S1).table()
    table["duration"] = "30s"
    table["measurement"] = {"start": "5s", "end": "30s"}
    base = qoslab.run(qoslab.Scenario.from_table(table), seed=3)
    # A component's random stream depends only on (seed, component id): the start times drawn
    # for the existing flows do not change when a flow is appended.
    table["flow"].append({"name": "cbr", "src": "s0", "dst": "d0", "type": "cbr", "rate": "100kbps"})
    more = qoslab.run(qoslab.Scenario.from_table(table), seed=3)
    assert (base.flows["start_ns"].to_numpy() == more.flows["start_ns"].to_numpy()[:5]).all()
    cbr = more.flows.set_index("name").loc["cbr"]
    assert abs(cbr["sent_packets"] - 30 * 100e3 / 8000) <= 1


def test_progress_callback_is_called():
    seen = []
    qoslab.run(S1, seed=1, progress=seen.append)
    assert seen[-1] == 1.0 and len(seen) >= 10 and seen == sorted(seen)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_run_stops_promptly_and_keeps_what_it_measured(tmp_path, sig):
    """Ctrl-C or SIGTERM stops a run of a million simulated seconds between two short slices:
    exit 130, one line, and summary.json with what was measured so far, marked partial."""
    long = tmp_path / "long.toml"
    long.write_text(Path(S1).read_text().replace('duration = "100s"', 'duration = "1000000s"'))
    out = tmp_path / "out"
    p = subprocess.Popen(
        [QOSLAB, "run", str(long), "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(2.0)
    p.send_signal(sig)
    try:
        _, err = p.communicate(timeout=30)
    finally:
        p.kill()
    assert p.returncode == 130, err
    lines = [ln for ln in err.splitlines() if ln.strip() and "% of simulated time" not in ln]
    assert len(lines) == 1 and lines[0].startswith("interrupted at t = ") and "partial" in lines[0], err
    s = json.loads((out / "summary.json").read_text())
    assert s["partial"] is True and 0 < s["simulated_until_s"] < 1e6
    assert sum(f["sent_packets"] for f in s["flows"]) > 0
    assert pd.read_parquet(out / "flows.parquet")["sent_packets"].sum() > 0


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_while_the_outputs_are_written_leaves_them_whole(tmp_path, sig):
    """Ctrl-C or SIGTERM while the tables are being written (sent from inside the writer of the
    first table): the outputs are finished, whole, then the run exits 130 with one line (it exited
    130 with no line and no summary.json)."""
    out = tmp_path / "out"
    code = (
        "import os, sys\nfrom qoslab import _core\nwrite = _core.write_parquet\n"
        "def signalled(*a, **k):\n"
        f"    os.kill(os.getpid(), {int(sig)})\n"
        "    return write(*a, **k)\n"
        "_core.write_parquet = signalled\n"
        f"sys.argv = ['qoslab', 'run', {S1!r}, '--out', {str(out)!r}]\n"
        "from qoslab.entry import main\nmain()"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 130, p.stderr
    lines = [ln for ln in p.stderr.splitlines() if ln.strip() and "% of simulated time" not in ln]
    assert len(lines) == 1 and lines[0].startswith("interrupted after the run"), p.stderr
    assert str(out) in lines[0] and "Traceback" not in p.stderr
    s = json.loads((out / "summary.json").read_text())
    assert "partial" not in s or s["partial"] is False
    assert {f.name for f in out.glob("*.parquet")} == {f"{t}.parquet" for t in TABLES}
    assert (out / "scenario.toml").is_file()


def test_tables_written_equal_the_result_frames_and_summary_only_writes_no_tables(tmp_path):
    """The Parquet tables are written from the core's columns (no pandas): read back, each equals
    the Result's DataFrame; --summary-only writes the same summary.json and no table."""
    out, _ = run_cli(tmp_path, "a", "--seed", "3")
    res = qoslab.run(S1, seed=3)
    for t in qoslab.runs.simulate.TABLES:
        back = pd.read_parquet(out / f"{t}.parquet")
        pd.testing.assert_frame_equal(back, getattr(res, t), check_exact=True, check_dtype=len(back) > 0)
        meta = pq.read_schema(out / f"{t}.parquet").metadata
        assert meta[b"qoslab.seed"] == b"3" and meta[b"qoslab.version"] == qoslab.__version__.encode()
    only, stdout = run_cli(tmp_path, "b", "--seed", "3", "--summary-only")
    assert "wrote" in stdout and "Parquet" not in stdout
    assert sorted(p.name for p in only.iterdir()) == [".qoslab-run", "scenario.toml", "summary.json"]
    a, b = (json.loads((d / "summary.json").read_text()) for d in (out, only))
    assert strip_wall(a) == strip_wall(b)
    p = subprocess.run([QOSLAB, "run", S1, "--summary-only"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 1 and "--out" in p.stderr and "Traceback" not in p.stderr


def test_running_and_summarising_load_neither_pandas_nor_pyarrow():
    """`import qoslab`, a run and its summary stay clear of pandas and pyarrow (most of a short
    run's start-up), and of numpy (the core's columns are array.array buffers); the first table
    read brings pandas."""
    code = (
        "import sys, qoslab\n"
        "assert 'numpy' not in sys.modules, 'import qoslab loaded numpy'\n"
        f"r = qoslab.run({S1!r}, seed=1)\n"
        "s = r.summary()\n"
        "heavy = sorted(m for m in ('pandas', 'pyarrow', 'matplotlib', 'numpy') if m in sys.modules)\n"
        "assert not heavy, heavy\n"
        "r.flows\n"
        "assert 'pandas' in sys.modules\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr


def test_writing_the_tables_does_not_load_pandas(tmp_path):
    """`qoslab run --out` writes its Parquet tables with the core's own writer: neither pandas,
    pyarrow nor numpy is imported (their imports took longer than a small run's whole process)."""
    code = (
        "import sys, qoslab\n"
        f"qoslab.run({S1!r}, seed=1, out={str(tmp_path / 'o')!r})\n"
        "loaded = [m for m in ('pandas', 'pyarrow', 'numpy') if m in sys.modules]\n"
        "assert not loaded, loaded\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert sorted(x.name for x in (tmp_path / "o").glob("*.parquet"))


@pytest.mark.parametrize(
    ("duration", "interval_s"), [("100s", 0.1), ("1000s", 0.1), ("50s", 0.05), ("5s", 0.005)]
)
def test_the_default_sampling_interval_scales_with_the_run_and_is_stated(duration, interval_s):
    # A thousand samples of a short run, one every 100 ms of a long one (the old default, 1 s,
    # gave a 5 s run five queue samples); an explicit interval is kept.
    text = (SCENARIOS / "fdd-red-s1.toml").read_text().replace('interval = "1s"\n', "")
    assert "interval" not in text.split("[measurement]")[1].split("[[")[0]
    sc = qoslab.Scenario.from_toml(text).with_overrides(
        [f"duration={duration}", "measurement.start=0s", f"measurement.end={duration}"]
    )
    assert sc.resolved["measurement"]["interval_ns"] == round(interval_s * 1e9)
    explicit = sc.with_overrides(["measurement.interval=1s"])
    assert explicit.resolved["measurement"]["interval_ns"] == 1_000_000_000
    if duration == "5s":
        r = qoslab.run(sc, seed=1)
        assert r.summary()["sampling_interval_s"] == interval_s
        per_queue = r.series_queue.groupby("queue").size()
        assert set(per_queue) == {1001}  # t = 0 and every 5 ms up to 5 s


def test_run_shows_colours_and_drops_by_precedence_when_the_scenario_has_conditioners():
    def table(path: Path) -> str:
        p = subprocess.run(
            [QOSLAB, "run", str(path), "--set", "duration=10s", "--set", "measurement.start=2s"]
            + ["--set", "measurement.end=10s"],
            capture_output=True,
            text=True,
            timeout=120,
            env={**__import__("os").environ, "COLUMNS": "80"},
        )
        assert p.returncode == 0, p.stderr
        assert max(len(line) for line in p.stdout.splitlines()) <= 80
        return p.stdout

    plain = table(SCENARIOS / "fdd-red-s1.toml")
    assert "DiffServ" not in plain and "time series sampled every 1 s" in plain
    ds = table(SCENARIOS / "ard-rio-4flows.toml")
    assert "DiffServ: colours and drops by drop precedence" in ds
    sc = qoslab.load_scenario(SCENARIOS / "ard-rio-4flows.toml").with_overrides(
        ["duration=10s", "measurement.start=2s", "measurement.end=10s"]
    )
    f = qoslab.run(sc).flows
    assert f["green_packets"].sum() > 0 and f["yellow_packets"].sum() > 0
    rows = [line for line in ds.split("DiffServ")[1].splitlines() if line.startswith("│ tcp")]
    assert len(rows) == len(f)
    for row, r in zip(rows, f.itertuples(), strict=True):
        cells = [c.strip() for c in row.strip("│").split("│")]
        want = [r.name, f"{r.in_throughput_bps / 1e3:.1f}", r.green_packets, r.yellow_packets]
        want += [r.red_packets, r.drops_prec0, r.drops_prec1, r.drops_prec2]
        assert cells == [str(x) for x in want]
