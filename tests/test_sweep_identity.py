"""A sweep name is one experiment: its scenario (by content hash), its ``--set`` assignments and its
grid. Another of any of these under a used name is refused in one line naming what differs, or
``--replace`` starts the name afresh (the runs stay in the store); the identical sweep resumes."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess

import qoslab.report.results
from conftest import QOSLAB, SCENARIOS, one_line_error

S1 = SCENARIOS / "fdd-red-s1.toml"
SHORT = ["duration=3s", "measurement.start=1s", "measurement.end=3s"]
GRID = "link.bottleneck.queue_ab.max_p=0.01,0.05"


def sweep(store, scenario, seeds, *extra):
    args = [QOSLAB, "sweep", str(scenario), "--store", str(store), "--executor", "serial", "--quiet"]
    args += ["--grid", GRID, "--seeds", str(seeds), *sum((["--set", s] for s in SHORT), []), *extra]
    return subprocess.run(args, capture_output=True, text=True, timeout=600)


def bandwidths(store):
    """The sweep's runs: {(params, seed): bottleneck rate in the run's scenario}."""
    runs = qoslab.report.results.load(store, sweep="fdd-red-s1")
    with sqlite3.connect(store / "results.db") as c:
        toml = dict(c.execute("SELECT sha256, toml FROM scenarios"))
    out = {}
    for params, seed, sha in zip(runs["params"], runs["seed"], runs["scenario_sha256"], strict=True):
        assert (params, seed) not in out, f"two runs of {params} seed {seed} in one sweep"
        out[(params, seed)] = "5Mbps" if 'bandwidth = "5Mbps"' in toml[sha] else "1Mbps"
    return out


def test_a_sweep_name_with_another_set_or_scenario_is_refused_and_replace_restarts_it(tmp_path):
    st = tmp_path / "st"
    assert sweep(st, S1, 1, "--set", "link.bottleneck.bandwidth=1Mbps").returncode == 0
    first = bandwidths(st)
    assert len(first) == 2 and set(first.values()) == {"1Mbps"}
    # the reproduction: the same name and grid, another --set
    msg = one_line_error(sweep(st, S1, 1, "--set", "link.bottleneck.bandwidth=5Mbps"))
    assert "sweep name 'fdd-red-s1'" in msg and "--replace" in msg, msg
    assert "'link.bottleneck.bandwidth=1Mbps'" in msg and "'link.bottleneck.bandwidth=5Mbps'" in msg, msg
    # a --set left out, or added
    assert "which this sweep lacks" in one_line_error(sweep(st, S1, 1))
    added = ["--set", "link.bottleneck.bandwidth=1Mbps", "--set", "tcp.window=30"]
    msg = one_line_error(sweep(st, S1, 1, *added))
    assert "without --set 'tcp.window=30'" in msg, msg
    # another scenario file (the same name inside), and the same content under another path
    other = tmp_path / "other.toml"
    other.write_text(S1.read_text().replace('bandwidth = "10Mbps"', 'bandwidth = "20Mbps"'))
    msg = one_line_error(sweep(st, other, 1, "--set", "link.bottleneck.bandwidth=1Mbps"))
    assert f"this sweep's is {str(other)!r}" in msg and "sha256" in msg, msg
    assert bandwidths(st) == first
    copy = tmp_path / "copy.toml"
    shutil.copy(S1, copy)
    p = sweep(st, copy, 2, "--set", " link.bottleneck.bandwidth = 1Mbps")  # resumed: more seeds
    assert p.returncode == 0 and "2 computed, 2 reused" in p.stdout, p
    assert len(bandwidths(st)) == 4
    # --replace: the name's memberships go, its runs stay in the store
    p = sweep(st, S1, 1, "--set", "link.bottleneck.bandwidth=5Mbps", "--replace")
    assert p.returncode == 0 and "dropped 4 run membership(s)" in p.stderr, p
    assert set(bandwidths(st).values()) == {"5Mbps"} and len(bandwidths(st)) == 2
    assert len(qoslab.report.results.load(st)) == 6
    # and the replaced sweep is now the one that resumes
    p = sweep(st, S1, 1, "--set", "link.bottleneck.bandwidth=5Mbps")
    assert p.returncode == 0 and "2 reused" in p.stdout, p


def test_a_sweep_name_stored_before_sweeps_kept_their_identity_takes_the_first_one_resumed(tmp_path):
    st = tmp_path / "st"
    assert sweep(st, S1, 1).returncode == 0
    c = sqlite3.connect(st / "results.db", isolation_level=None)
    c.executescript(
        "CREATE TABLE s2 (name TEXT PRIMARY KEY, grid TEXT NOT NULL, created REAL);"
        "INSERT INTO s2 SELECT name, grid, created FROM sweeps; DROP TABLE sweeps;"
        "ALTER TABLE s2 RENAME TO sweeps;"
    )
    c.close()
    assert sweep(st, S1, 1).returncode == 0
    assert "which this sweep adds" in one_line_error(sweep(st, S1, 1, "--set", "tcp.window=30"))
