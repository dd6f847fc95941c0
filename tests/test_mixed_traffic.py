"""The ``mixed-traffic`` experiment (issue 19): quick end to end, and (slow) the full run. Its
findings are paired comparisons with RIO on the same seeds, asserted where they are robust."""

from __future__ import annotations

import matplotlib.image
import pandas as pd
import pytest

from qoslab import reproduction
from qoslab.studies.mixed_traffic.study import MECHANISMS, mix_scenario


def test_every_mechanism_builds_and_keeps_the_same_traffic() -> None:
    # Paired seeds need the same arrivals in every variant: only the bottleneck (and ARD's edge
    # marker) changes, never the flows or the arrival process.
    base = mix_scenario("rio", []).resolved
    for m in MECHANISMS:
        r = mix_scenario(m, []).resolved
        assert r["flows"] == base["flows"] and r["arrivals"] == base["arrivals"], m


def _check(rep: reproduction.Reproduction) -> pd.DataFrame:
    assert not rep.sweep.failed
    d = rep.out
    for stem in ("mix-summary", "mix-paired"):
        assert (d / f"{stem}.csv").stat().st_size > 0
    img = matplotlib.image.imread(d / "mix-overview.png")
    assert img.shape[1] > 1000 and img[..., :3].std() > 0.05
    runs = pd.read_csv(d / "mix-runs.csv")
    assert set(runs["mechanism"]) == set(MECHANISMS)
    return runs


def _per_seed(runs: pd.DataFrame, mech: str, metric: str) -> pd.Series:
    r = runs[runs["mechanism"] == mech]
    return pd.Series(r[metric].to_numpy(float), index=r["seed"].to_numpy(int)).sort_index()


def test_mixed_traffic_quick(tmp_path) -> None:
    rep = reproduction.reproduce(
        "mixed-traffic", quick=True, out=tmp_path, store=tmp_path / "s", progress=False
    )
    runs = _check(rep)
    # EF in a priority queue sees only the propagation and its own transmission (16 ms + a
    # few µs on this path) on every seed; in the shared RIO queue it waits behind the AF backlog.
    ef = _per_seed(runs, "ef-priority", "voice_delay_p99_s")
    rio = _per_seed(runs, "rio", "voice_delay_p99_s")
    assert (ef < 0.0175).all() and (rio > 2 * ef).all()
    # Every web transfer of the short run is accounted for, and some are short ones.
    assert (runs["transfers_<100KB"] > 50).all()


@pytest.mark.slow
def test_mixed_traffic_full(tmp_path) -> None:
    rep = reproduction.reproduce("mixed-traffic", out=tmp_path, store=tmp_path / "s", progress=False)
    runs = _check(rep)
    ef = _per_seed(runs, "ef-priority", "voice_delay_p99_s")
    assert (ef < _per_seed(runs, "rio", "voice_delay_p99_s")).all()
    # Tail drop's standing queue slows short transfers down on every seed.
    assert (
        _per_seed(runs, "droptail", "fct_s_mean_<100KB") > _per_seed(runs, "rio", "fct_s_mean_<100KB")
    ).all()
