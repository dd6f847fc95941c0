"""The ``modern-aqm`` experiment (issue 22): quick end to end on paired seeds, and (slow) the full
run. Asserted only where a finding holds on every seed."""

from __future__ import annotations

import matplotlib.image
import pandas as pd
import pytest

from qoslab import reproduction
from qoslab.studies.modern_aqm.study import MECHANISMS, scenario, senders


def test_every_mechanism_and_sender_keeps_the_same_traffic() -> None:
    # Paired seeds: only the bottleneck (and ARD's edge marker) and the senders' congestion
    # control change between points, never the flows or the arrival process.
    base = scenario("rio", "reno", []).resolved
    for m in MECHANISMS:
        for s in senders():
            r = scenario(m, s, []).resolved
            assert [f["name"] for f in r["flows"]] == [f["name"] for f in base["flows"]], (m, s)
            assert r["arrivals"][0]["arrival_rate"] == base["arrivals"][0]["arrival_rate"]
            assert r["arrivals"][0]["tcp"]["variant"] == s
            assert {f["tcp"]["variant"] for f in r["flows"] if f.get("tcp")} == {s}


def _per_seed(runs: pd.DataFrame, mech: str, metric: str) -> pd.Series:
    r = runs[runs["mechanism"] == mech]
    return pd.Series(r[metric].to_numpy(float), index=r["seed"].to_numpy(int)).sort_index()


def _check(rep: reproduction.Reproduction, sender: str) -> pd.DataFrame:
    assert not rep.sweep.failed
    img = matplotlib.image.imread(rep.out / f"{sender}-overview.png")
    assert img.shape[1] > 1000 and img[..., :3].std() > 0.05
    return pd.read_csv(rep.out / f"{sender}-runs.csv")


def test_modern_aqm_quick(tmp_path) -> None:
    rep = reproduction.reproduce("modern-aqm", quick=True, out=tmp_path, store=tmp_path / "s", progress=False)
    for sender in senders():
        runs = _check(rep, sender)
        tail = _per_seed(runs, "droptail", "queue_delay_mean_s")
        # Against loss-based senders every AQM keeps the bottleneck's queueing delay below tail
        # drop's, on every seed. BBR v1 does not back off on loss: a finding, not asserted as an
        # advantage (CoDel's mean delay exceeded tail drop's on 2 of 3 quick seeds,
        # docs/experiments/modern-aqm.md).
        aqms = ("codel", "fq_codel", "pie", "rio") if sender != "bbr" else ("fq_codel",)
        for aqm in aqms:
            assert (_per_seed(runs, aqm, "queue_delay_mean_s") < tail).all(), (sender, aqm)
        # FQ-CoDel serves the sparse voice flows first: their delay tail is the shortest of all.
        fq = _per_seed(runs, "fq_codel", "voice_delay_p99_s")
        for other in ("droptail", "rio", "codel", "pie"):
            assert (fq < _per_seed(runs, other, "voice_delay_p99_s")).all(), (sender, other)


@pytest.mark.slow
def test_modern_aqm_full(tmp_path) -> None:
    rep = reproduction.reproduce("modern-aqm", out=tmp_path, store=tmp_path / "s", progress=False)
    for sender in senders():
        runs = _check(rep, sender)
        assert set(runs["mechanism"]) == set(MECHANISMS)
        fq = _per_seed(runs, "fq_codel", "voice_delay_p99_s")
        assert (fq < _per_seed(runs, "rio", "voice_delay_p99_s")).all()
