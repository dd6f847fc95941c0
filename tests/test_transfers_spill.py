"""Finished transfers spilled to disk past SPILL_AFTER (qoslab.runs.transfers, records.rs): the same
summary and table as held in memory, exact order statistics, bounded records in memory, and
a disk check before the run."""

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import qoslab
from qoslab import budget
from qoslab.budget import Estimate, _check_spill
from qoslab.runs import simulate, transfers

ROOT = Path(__file__).resolve().parent.parent
ARRIVALS = ROOT / "scenarios" / "examples" / "arrivals.toml"


def _flat(d, prefix=""):
    for k, v in d.items():
        if isinstance(v, dict):
            yield from _flat(v, f"{prefix}{k}.")
        else:
            yield f"{prefix}{k}", v


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    """The example's ~600 transfers held in memory, and spilled past 50."""
    sc = qoslab.load_scenario(ARRIVALS)
    held = simulate.run(sc, 3)
    saved = budget.SPILL_AFTER
    budget.SPILL_AFTER = 50
    try:
        spilled = simulate.run(sc, 3)
    finally:
        budget.SPILL_AFTER = saved
    d = tmp_path_factory.mktemp("spill")
    held.write(d / "held")
    spilled.write(d / "spilled")
    return held, spilled, d


def test_spilled_run_holds_few_records(both):
    held, spilled, _ = both
    assert held.spill is None and spilled.spill is not None
    n = len(held.raw["transfers"]["fct_s"])
    assert spilled.spill.rows == n > 500
    assert held.raw["transfers_peak_held"] == n
    # past 50 records every slice's records go to the file: a slice (at most 0.6 s of
    # simulated time here, at 10 arrivals a second) finishes a handful
    assert spilled.raw["transfers_peak_held"] < 100


def test_spilled_summary_is_the_in_memory_one(both):
    """Counts, medians and 99th percentiles exactly; the means (a correctly rounded sum against
    numpy's pairwise one) to within a few units in the last place."""
    held, spilled, _ = both
    a, b = dict(_flat(held.transfer_summary())), dict(_flat(spilled.transfer_summary()))
    assert a.keys() == b.keys() and any(k.endswith(".p99") for k in a)
    for k, v in a.items():
        if k.endswith(".mean"):
            assert math.isclose(v, b[k], rel_tol=1e-14), k
        else:
            assert v == b[k], k


def test_spilled_table_is_the_in_memory_one(both):
    held, spilled, d = both
    pd.testing.assert_frame_equal(held.transfers, spilled.transfers)
    a, b = (pd.read_parquet(d / x / "transfers.parquet") for x in ("held", "spilled"))
    pd.testing.assert_frame_equal(a, b)
    assert list(a.columns)[:2] == ["flow_name", "process"] and len(a) > 500


def test_spill_file_goes_with_its_result(tmp_path):
    saved = budget.SPILL_AFTER
    budget.SPILL_AFTER = 50
    try:
        r = simulate.run(qoslab.load_scenario(ARRIVALS), 1)
    finally:
        budget.SPILL_AFTER = saved
    path = r.spill.path
    assert path.exists() and path.stat().st_size == r.spill.rows * transfers.ROW.itemsize
    del r
    import gc

    gc.collect()
    assert not path.exists() and not path.parent.exists()


@pytest.mark.parametrize("n", [1, 2, 3, 7, 100, 101, 4097, 10_000])
def test_order_statistics_match_numpy(monkeypatch, n):
    """Radix selection over chunks gives numpy's median and 99th percentile bit for bit, with
    duplicates, negative values and zeros, also when a range must be narrowed several times."""
    monkeypatch.setattr(transfers, "COLLECT", 16)
    rng = np.random.default_rng(n)
    x = np.concatenate([rng.lognormal(0, 3, n // 2), -rng.exponential(1, n - n // 2)])
    x[: n // 5] = x[0]  # duplicates
    x[n // 5 : n // 4] = 0.0
    rng.shuffle(x)

    def streams():
        for i in range(0, n, 333):
            yield {"s": x[i : i + 333]}

    ranks = sorted({*transfers.median_ranks(n), *transfers.quantile_ranks(n, 0.99)})
    at = transfers.order_statistics(streams, {"s": ranks})["s"]
    srt = np.sort(x)
    assert all(at[k] == srt[k] for k in ranks)
    assert transfers.median_of(n, at) == float(np.median(x))
    assert transfers.quantile_of(n, 0.99, at) == float(np.quantile(x, 0.99))


def test_spill_that_would_fill_the_disk_is_refused(tmp_path):
    est = Estimate(0, 0.0, 0.0, 0, 0, transfers=1e16)
    with pytest.raises(qoslab.ScenarioError) as e:
        _check_spill("s.toml", est, tmp_path)
    msg = str(e.value)
    assert "key `arrivals`" in msg and "spill file" in msg and "\n" not in msg
    _check_spill("s.toml", est._replace(transfers=budget.SPILL_AFTER), tmp_path)  # held: no disk


def test_a_killed_runs_spill_file_is_removed_by_the_next_run(tmp_path):
    """A run SIGKILLed while it spills leaves its spill folder under $TMPDIR (nothing of it runs
    again); the next run that spills removes it, and keeps a folder whose process is alive."""
    import os
    import subprocess
    import sys
    import time

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp)}
    code = (
        "import qoslab, qoslab.budget as b\nb.SPILL_AFTER = 50\n"
        "qoslab.run(qoslab.load_scenario({!r}).with_overrides({!r}), 1)"
    )
    long = ["duration=100000s", "arrivals.web.stop=100000s"]
    killed = subprocess.Popen([sys.executable, "-c", code.format(str(ARRIVALS), long)], env=env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        spilled = [p for p in tmp.glob("qoslab-transfers-*/records.bin") if p.stat().st_size > 0]
        if spilled:
            break
        time.sleep(0.05)
    killed.kill()
    killed.wait()
    assert spilled and spilled[0].parent.name.startswith(f"qoslab-transfers-{killed.pid}-")
    alive = subprocess.Popen(["sleep", "60"])
    try:
        kept = tmp / f"qoslab-transfers-{alive.pid}-x1"
        kept.mkdir()
        p = subprocess.run([sys.executable, "-c", code.format(str(ARRIVALS), [])], env=env, timeout=120)
        assert p.returncode == 0
        assert not spilled[0].parent.exists() and kept.exists()
        assert [x.name for x in tmp.iterdir()] == [kept.name]  # the second run's went with its result
    finally:
        alive.kill()
        alive.wait()
