"""Metric functions used by the sweep tests (imported by worker processes by name)."""

import os
import time
from pathlib import Path


def slow(res):
    """Makes every run last at least QOSLAB_TEST_SLEEP seconds (so a test can interrupt a sweep
    half-way whatever the speed of the core)."""
    time.sleep(float(os.environ.get("QOSLAB_TEST_SLEEP", "0.3")))
    return {"slept": 1.0}


def fail_on_seed_2(res):
    if res.seed == 2:
        raise ValueError("boom on seed 2")
    return {"checked": 1.0}


def die_on_seed_3(res):
    if res.seed == 3:
        os._exit(7)  # the worker process dies without a word
    return {"alive": 1.0}


def flaky_once(res):
    """Fails the first time it sees a seed (a marker file remembers), succeeds afterwards."""
    marker = Path(os.environ["QOSLAB_TEST_FLAKY_DIR"]) / f"seed{res.seed}"
    if not marker.exists():
        marker.write_text("x")
        raise RuntimeError(f"transient failure for seed {res.seed}")
    return {"flaky_ok": 1.0}


def queue_peak(res):
    """A real extra metric: the largest bottleneck queue sample."""
    q = res.series_queue
    return {"queue_peak_pkts": float(q[q["queue"] == "bottleneck:ab"]["queue_packets"].max())}
