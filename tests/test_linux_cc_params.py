"""The linux flavour's `tcp.cc` keys (the kernel modules' parameters) change a whole run: one
linux CUBIC flow alone on scenarios/linux/single.toml's 1-BDP pfifo, cwnd and ssthresh
sampled every 10 ms. At each loss (ssthresh set below the window just before) the window is
cut to beta/1024 of it: 717 keeps 0.7 (tcp_cubic.c's default), 512 halves it."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from qoslab import _core
from qoslab.runs.simulate import as_numpy
from qoslab.scenario import load_scenario

SINGLE = Path(__file__).resolve().parents[1] / "scenarios" / "linux" / "single.toml"


def _cuts(sets: list[str]) -> list[float]:
    """ssthresh / the window 10 ms before, at every loss of the run."""
    sc = load_scenario(SINGLE).with_overrides(
        ["flow.single.tcp.variant=cubic", 'measurement.start="0s"', 'measurement.interval="10ms"', *sets]
    )
    s = _core.simulate(sc.text, sc.source, 1, [], None)["series_flow"]
    cwnd, ssthresh = as_numpy(s["cwnd"]), as_numpy(s["ssthresh"])
    return [
        float(ssthresh[i] / cwnd[i - 1])
        for i in range(1, len(ssthresh))
        if ssthresh[i] != ssthresh[i - 1] and ssthresh[i] < cwnd[i - 1]
    ]


def test_cubic_beta_sets_the_cut_at_each_loss_of_a_run() -> None:
    default = _cuts([])
    half = _cuts(["tcp.cc={ cubic = { beta = 512 } }"])
    assert len(default) >= 2 and len(half) >= 2, (default, half)
    # the window 10 ms before the loss is within a segment or two of the window at it
    np.testing.assert_allclose(default, 717 / 1024, atol=0.02)
    np.testing.assert_allclose(half, 0.5, atol=0.02)
    # the kernel's default given explicitly is the same run
    assert _cuts(["tcp.cc={ cubic = { beta = 717 } }"]) == default
