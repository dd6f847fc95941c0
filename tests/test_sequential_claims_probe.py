"""probe-marker's records rest on their own packet size's sweep (rests_on.READING_SWEEPS),
checked against a real reproduction with one sweep at fewer seeds. Apart from
tests/test_sequential_claims.py so that `make test`'s workers share the long reproductions; its
runs at three seeds are those of probe-marker's case in tests/test_sequential_claims_points.py,
computed once for both (conftest.quick_runs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import quick_runs
from qoslab.reproduction import dependence, sequential_run
from qoslab.verdicts.magnitudes import DECLARED


def test_probe_markers_readings_rest_on_their_own_packet_sizes_sweeps(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """probe-marker's claims read one sweep per reading (rests_on.READING_SWEEPS): with the
    1000-byte frontier at fewer seeds, only "1000 B packets" records move, and each of them
    rests on it; no 1500-byte or ns-2 RIO record moves. Every reading the map names is one the
    experiment gives (the map is not stale)."""
    from qoslab.reproduction.rests_on import READING_SWEEPS

    moved = dependence.sweep_dependence(
        "probe-marker",
        seeds=3,
        fewer=2,
        quick=True,
        store=quick_runs(tmp_path_factory, "probe-marker", 3, tmp_path / "s"),
        out=tmp_path / "o",
        progress=False,
        defer_figures=True,  # drawn, never saved: the records are under test
        only=("frontier_1000B",),
    )["frontier_1000B"]
    readings = {k[3] for k in moved}
    assert set(READING_SWEEPS["probe-marker"]) <= readings
    assert any(moved.values())
    decls = DECLARED["probe-marker"]
    for k, changed in moved.items():
        r = {"claim": k[0], "section": k[1], "part": k[2], "reading": k[3], "borrowed_from": k[4]}
        deps = sequential_run.rests_on("probe-marker", decls, r)
        own = k[3] == "1000 B packets" or k[3].startswith("1000 B packets, high load")
        if changed:
            assert own and deps is not None and "frontier_1000B" in deps, k
        if not k[3].startswith("1000 B packets") or "ns2 RIO" in k[3]:
            assert not changed and deps is not None and "frontier_1000B" not in deps, k
