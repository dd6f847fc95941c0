"""Records move only with the points they declare (rests_on.POINTS), checked against real
reproductions with one reading's points at fewer seeds. Apart from
tests/test_sequential_claims.py so that `make test`'s workers share the long reproductions;
probe-marker's runs at three seeds are those of tests/test_sequential_claims_probe.py, computed
once for both (conftest.quick_runs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import quick_runs
from qoslab.reproduction import dependence
from qoslab.reproduction.base import get
from qoslab.reproduction.remembered_plans import planned, remembered

#: One reading's points per figure, each at fewer seeds in one reproduction (rests_on.POINTS)
RIO_POINTS = {
    "fig7": ({"setting": "bucket4k", "w_q": 0.2, "subscription": 40},),
    "fig8": ({"setting": "bucket4k", "w_q": 0.002, "profile_mbps": 1.0},),
    "fig9": ({"setting": "bucket4k", "w_q": 0.2, "unit_mbps": 0.2, "kind": "rio"},),
}
PROBE_POINTS = {
    "frontier_1000B": ({"flows": 40, "diff": "soft", "marker": "probe"}, {"flows": 40, "marker": "none"}),
    "onoff": ({"on_off_s": 5.0},),
}


@pytest.mark.parametrize(("name", "points"), [("rio-plus-o", RIO_POINTS), ("probe-marker", PROBE_POINTS)])
def test_records_move_only_with_the_points_they_declare(
    name: str, points: dict[str, Any], tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """A reading's points at fewer seeds (the rest of their sweeps at more) move no record that
    does not declare one of them, so --sequential cannot stop a point an undecided record
    reads; each group moves a record that declares it (the check has power); and every record
    resting on the reduced points alone is the record a reproduction with every point at the
    fewer seeds gives, bit for bit (a reading's stopped points are analysed as if the whole
    experiment had stopped there)."""
    # figures drawn, never saved (a third of the analyses' time); every plan made once
    kw: dict[str, Any] = {"quick": True, "store": tmp_path / "s", "progress": False, "defer_figures": True}
    if name == "probe-marker":
        quick_runs(tmp_path_factory, name, 3, tmp_path / "s")
    moved, got = dependence.point_dependence(name, seeds=3, fewer=2, points=points, out=tmp_path / "a", **kw)
    fewer = dependence._readings(dependence.reproduce(get(name), seeds=2, out=tmp_path / "b", **kw))
    with remembered():
        _check(name, points, moved, got, fewer)


def _check(
    name: str, points: dict[str, Any], moved: dict[Any, bool], got: dict[Any, Any], fewer: dict[Any, Any]
) -> None:
    assert dependence.undeclared_points(name, points, moved, quick=True) == []
    for sweep, filters in points.items():
        one = {sweep: filters}
        mine = [
            k
            for k, changed in moved.items()
            if changed and not dependence.undeclared_points(name, one, {k: True}, quick=True)
        ]
        assert mine, (name, sweep)
    reduced = 0
    for k, changed in moved.items():
        r = {"claim": k[0], "section": k[1], "part": k[2], "reading": k[3], "borrowed_from": k[4]}
        deps = dependence.reading_points(name, r, quick=True)
        inside = deps and all(
            s in points and d is not None and d <= _indices(name, s, points[s]) for s, d in deps.items()
        )
        if inside:
            reduced += 1
            assert changed and got[k] == fewer[k], k
    # every group but rio-plus-o's Fig. 9 one (which takes one arm of its records, the other
    # arm's points growing with the other reading) holds a record's every point
    assert reduced >= len(points) - (name == "rio-plus-o"), reduced


def _indices(name: str, sweep: str, filters: Any) -> frozenset[int]:
    from qoslab.reproduction.rests_on import matches

    sw = next(s for s in planned(get(name), seeds=3, quick=True)[1] if s.name == sweep)
    return frozenset(i for i, (p, _) in enumerate(sw.points) if matches(p, filters))
