"""``reproduce all``'s hand-over (qoslab.reproduction.handover): while one experiment finishes,
the next experiment's first runs are computed on the niced pool; the next experiment then finds
them stored and computes none of them itself, with the same results; nothing is handed over to
no experiment, or by an executor other than the local pool."""

from __future__ import annotations

from pathlib import Path

from qoslab.reproduction import reproduce
from qoslab.reproduction.base import get
from qoslab.reproduction.handover import HandOver
from qoslab.reproduction.remembered_plans import planned, remembered
from qoslab.runs.local_pool import LocalExecutor, SerialExecutor, kept_workers


def test_the_next_experiments_first_runs_are_computed_and_then_reused(tmp_path: Path) -> None:
    exp = get("mixed-traffic")
    store = tmp_path / "store"
    with kept_workers(), remembered():
        ho = HandOver(LocalExecutor(2), store, {"quick": True}, enabled=True)
        start = ho.starter(exp, None)
        assert start is not None
        start()
        assert ho.running is not None and ho.running._thread is not None
        ho.running._thread.join()  # let it finish, then stop as the next experiment would
        ho.stop()
        assert not ho.errors
        assert ho.computed == {s.key for s in planned(exp, quick=True)[2]}
        rep = reproduce(exp, quick=True, store=store, out=tmp_path / "out", progress=False)
    assert rep.sweep.computed == 0 and rep.sweep.reused == len(ho.computed)
    fresh = reproduce(exp, quick=True, store=tmp_path / "fresh", out=tmp_path / "out2", progress=False)
    assert fresh.sweep.computed == len(ho.computed)
    # the same tables from the runs handed over as from runs the experiment computed itself
    for name in ("mix-summary.csv", "mix-paired.csv"):
        assert (rep.out / name).read_text() == (fresh.out / name).read_text()


def test_nothing_is_handed_over_without_a_next_experiment_or_a_local_pool(tmp_path: Path) -> None:
    exp = get("mixed-traffic")
    assert HandOver(LocalExecutor(2), tmp_path, {}, enabled=True).starter(None, None) is None
    assert HandOver(SerialExecutor(), tmp_path, {}, enabled=True).starter(exp, None) is None
    assert HandOver(LocalExecutor(2), tmp_path, {}, enabled=False).starter(exp, None) is None
    ho = HandOver(None, tmp_path, {}, enabled=True)
    assert ho.starter(exp, None) is not None
    ho.stop()  # nothing running: nothing to wait for


# A sequential reproduction hands over once, when its verdicts are decided: asserted on the
# sequential reproductions of tests/test_prefetch.py (the same fdd-red, both with and without
# computing ahead), which ran the same reproduction again here for 45-110 s of the suite.
