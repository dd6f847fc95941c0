"""``qoslab bench``'s workloads and figures (docs/performance.md): the workloads build with the
keys they are named for, the reference simulators are n/a with one line of reason where they
cannot run, and ``--json`` holds every figure. Speed is never asserted here."""

from __future__ import annotations

import inspect
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import QOSLAB, one_line_error
from qoslab.bench import cache, hops, references, runner, workloads
from qoslab.bench import guards as bench_guards
from qoslab.ns2 import unsupported_reason as ns2_reason
from qoslab.ns3 import CONGESTION, ns3_missing, to_ns3_resolved
from qoslab.ns3 import unsupported_reason as ns3_reason
from qoslab.ns3.run import program_path
from qoslab.runs import huge_pages
from qoslab.scenario import to_ns2_resolved

SMALL = "red-5flows-1Mbps-100s"


def _workload(name: str) -> workloads.Workload:
    return next(w for w in workloads.WORKLOADS if w.name == name)


def test_the_cubic_and_fq_codel_workloads_run_what_they_are_named_for() -> None:
    scs = {
        name: _workload(name).build()
        for name in ("red-200flows-100Mbps-60s", "cubic-200flows-100Mbps-5s", "fqcodel-200flows-100Mbps-5s")
    }
    for name, sc in scs.items():
        r = sc.resolved
        bottleneck = next(lk for lk in r["links"] if lk["name"] == "bottleneck")
        variants = {f["tcp"]["variant"] for f in r["flows"]}
        assert len(r["flows"]) == 200, name
        assert variants == {"cubic" if name.startswith("cubic") else "reno"}, name
        assert bottleneck["queue_ab"]["type"] == ("fq_codel" if name.startswith("fqcodel") else "red"), name
        assert r["duration_ns"] == (60 if name.startswith("red") else 5) * 10**9, name
    fq = next(lk for lk in scs["fqcodel-200flows-100Mbps-5s"].resolved["links"] if lk["name"] == "bottleneck")
    assert fq["queue_ab"]["limit_pkts"] == 1500 and fq["queue_ab"]["ecn"] is False
    # the original workloads' scenario text is unchanged by the new parameters
    assert "variant" not in workloads.dumbbell(200, "100Mbps", "60s")["tcp"]


def test_ns2_refuses_the_new_workloads_and_ns3_takes_them() -> None:
    for name in ("cubic-200flows-100Mbps-5s", "fqcodel-200flows-100Mbps-5s"):
        sc = _workload(name).build()
        assert ns2_reason(to_ns2_resolved(sc.resolved, 1)), name
        assert ns3_reason(to_ns3_resolved(sc.resolved, 1)) is None, name
    # a DiffServ workload is refused by the ns-3 export, found from the scenario
    rio = _workload("tb-rio-20flows-6Mbps-200s").build()
    assert ns3_reason(to_ns3_resolved(rio.resolved, 1))


def test_the_ns3_input_carries_the_workloads_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(references, "ns3_program", lambda: (Path("/nonexistent/qoslab_ns3"), ""))
    for name, want in (
        ("cubic-200flows-100Mbps-5s", (CONGESTION["cubic"], "ns3::RedQueueDisc")),
        ("fqcodel-200flows-100Mbps-5s", (CONGESTION["reno"], "ns3::FqCoDelQueueDisc")),
    ):
        w = _workload(name)
        d = tmp_path / name
        d.mkdir()
        ref = references.prepare_ns3(w, w.build(), d, True, False)
        assert not ref.note and ref.full[1:] == ["ns3-full.json", "ns3-full-results.json"]
        full, setup = (json.loads((d / f"ns3-{k}.json").read_text()) for k in ("full", "setup"))
        assert {f["tcp"]["congestion"] for f in full["flows"]} == {want[0]}
        assert (
            next(lk for lk in full["links"] if lk["name"] == "bottleneck")["queue_ab"]["type_id"] == want[1]
        )
        assert full["duration_s"] == 5.0 and setup["duration_s"] == 0.001
        # ns-2 says why not, in one line
        ns2 = references.prepare_ns2(w, w.build(), d, True, False)
        assert ns2.note and "\n" not in ns2.note and not ns2.full
    # a workload too slow for ns-3 is noted, and --ns3-all runs it
    slow = _workload("red-200flows-100Mbps-60s")
    assert "--ns3-all" in references.prepare_ns3(slow, slow.build(), tmp_path, True, False).note
    assert not references.prepare_ns3(slow, slow.build(), tmp_path, True, True).note


def test_missing_ns3_is_a_one_line_note_and_the_rest_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        references, "ns3_program", lambda: (None, "ns-3 not available: libns3-core.so not found")
    )
    row = runner.measure(_workload(SMALL), repeat=1, ns2=False)
    assert row["ns3_note"] == "ns-3 not available: libns3-core.so not found"
    assert row["ns2_note"] == "not run (--no-ns2)"
    for k in ("ns2", "ns3"):
        for f in ("whole_s", "setup_s", "core_s", "core_ratio", "whole_ratio"):
            assert row[f"{k}_{f}"] is None
    assert row["qoslab_core_s"] > 0 and row["qoslab_whole_s"] > 0 and row["repeats"] == 1


def test_a_slow_reference_cuts_the_rounds_but_not_qoslabs_core_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """ns-2 taking over a minute (faked) leaves one round of whole processes, and qoslab's
    core is still measured ``repeat`` times, its median reported."""
    fake = references.Reference("ns2", full=["ns-full"], setup=["ns-setup"])
    monkeypatch.setattr(runner, "prepare_ns2", lambda *a: fake)
    timed = runner._timed

    def fake_timed(cmd: list[str], cwd: Path, timeout: float) -> tuple[float | None, str]:
        if cmd[0].startswith("ns-"):
            return (61.0 if cmd == fake.full else 0.5), ""
        return timed(cmd, cwd, timeout)

    monkeypatch.setattr(runner, "_timed", fake_timed)
    walls = iter([0.30, 0.10, 0.20, 0.40, 0.50])
    core = workloads.measure_core

    def fake_core(name: str, scale: float = 1.0) -> dict[str, object]:
        return {**core(name, scale), "wall_s": next(walls)}

    monkeypatch.setattr(runner, "measure_core", fake_core)
    row = runner.measure(_workload(SMALL), repeat=3, ns3=False)
    assert row["repeats"] == 1 and fake.whole_s == [61.0]
    # the first wall is the full-duration run, then half and setup-only (0.10, 0.20 unused
    # as core times), then two more full runs
    assert row["qoslab_core_runs"] == 3 and row["qoslab_core_s"] == 0.40
    assert row["ns2_core_s"] == pytest.approx(60.5) and row["ns2_core_ratio"] == pytest.approx(60.5 / 0.40)


def test_bench_json_has_every_figure_of_both_references(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    # ns-3 runs (about 3 s) if its program is compiled; compiling it is not this test's job
    ns3 = [] if ns3_missing() is None and program_path().exists() else ["--no-ns3"]
    p = subprocess.run(
        [QOSLAB, "bench", "--workload", SMALL, "--repeat", "1", "--no-ns2", *ns3, "--json", str(out)],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stderr
    assert "ns-3 whole s" in p.stdout and "ns-2 n/a on red-5flows-1Mbps-100s: not run (--no-ns2)" in p.stdout
    doc = json.loads(out.read_text())
    assert set(doc["references"]) == {"ns2", "ns3"} and doc["references"]["ns2"] is None
    # what the processes the call started were given (docs/performance.md, "Huge pages")
    assert doc["huge_pages"] == huge_pages.described()
    assert "glibc.malloc.hugetlb=" in doc["huge_pages"]["glibc_tunables"]
    assert (doc["references"]["ns3"] is None) == bool(ns3)
    (row,) = doc["workloads"]
    assert row["ns_per_hop"] > 0 and row["hop_cost_ratio"] is None  # the 200-flow base not in the call
    assert row["hop_cost_ratio_paired"] is None and row["hop_cost_pairs"] == []  # nor paired with it
    assert "ns/hop" in p.stdout and "× base" in p.stdout
    for k in ("ns2", "ns3"):
        for f in ("note", "whole_s", "setup_s", "core_s", "core_ratio", "whole_ratio"):
            assert f"{k}_{f}" in row
    if doc["references"]["ns3"]:  # ns-3 ran: its figures are there, or one line says why not
        assert (row["ns3_whole_s"] is not None and row["ns3_core_ratio"] is not None) or (
            row["ns3_note"] and "\n" not in row["ns3_note"]
        )
    else:
        assert row["ns3_note"] and row["ns3_whole_s"] is None
    # the guards: the 200-flow ones not judged in a call without those workloads, and said so
    assert doc["guards"] and doc["guards_verdict"] == bench_guards.verdict(doc["guards"])
    base = next(g for g in doc["guards"] if g["guard"] == "core vs ns-2")
    assert base["holds"] is None and base["note"] == "not measured in this call"
    assert "guards (docs/performance.md)" in p.stdout and "judged guards" in p.stdout


def test_hop_costs_of_the_ninth_rounds_call_are_the_figures_docs_give() -> None:
    """The cost per hop against the 200-flow workload, from the rows of docs/bench/round9.json
    (written before the bench computed it): 2.03× at 10,000 flows, 1.92× net of the set-up, as
    docs/performance.md says; the base is 1× of itself; without the base, no ratio."""
    rows = json.loads((Path(__file__).parents[1] / "docs/bench/round9.json").read_text())["workloads"]
    hops.hop_costs(rows)
    by = {r["workload"]: r for r in rows}
    big, base = by["red-10000flows-10Gbps-2s"], by[hops.HOP_COST_BASE]
    assert base["hop_cost_ratio"] == 1.0 and base["hop_cost_ratio_net"] == 1.0
    assert round(base["ns_per_hop"], 1) == 88.6 and round(big["ns_per_hop"], 1) == 179.9
    assert round(big["hop_cost_ratio"], 2) == 2.03 and round(big["hop_cost_ratio_net"], 2) == 1.92
    assert all(r["hop_cost_base"] == hops.HOP_COST_BASE for r in rows)
    alone = [r for r in rows if r["workload"] != hops.HOP_COST_BASE]
    hops.hop_costs(alone)
    assert all(r["hop_cost_ratio"] is None and r["hop_cost_base"] is None for r in alone)
    assert all(r["ns_per_hop_net"] < r["ns_per_hop"] for r in alone if r["flows"] >= 2000)


#: The other workload's hop against the base's on a quiet machine, round by round: 2× but in
#: the third round. The median of the rounds' ratios is 2×; the ratio of the rounds' medians
#: is not (3×, net of the setup).
ROUND_RATIOS = (2, 2, 3, 2, 2)


class _Drifting:
    """Core runs whose time grows with every round, as a shared machine's may: round ``i``'s
    runs take ``(1 + i)²`` times the quiet machine's. A base hop costs 100 ns there, a hop of
    the other workload ``ROUND_RATIOS[i]`` times that. Each run includes its workload's setup
    (:func:`_row`: 10 ms for the base, 30 ms for the other), which takes no hops."""

    def __init__(self, fail_at: int | None = None) -> None:
        self.calls: list[str] = []
        self.fail_at = fail_at

    def __call__(self, name: str) -> dict[str, Any]:
        self.calls.append(name)
        if len(self.calls) == self.fail_at:
            raise subprocess.CalledProcessError(
                1, ["worker"], stderr="Traceback …\nMemoryError: out of memory\n"
            )
        i = (len(self.calls) - 1) // 2
        slow = (1 + i) ** 2
        if name == hops.HOP_COST_BASE:
            return {"wall_s": 0.01 + 0.1 * slow, "hops": 1_000_000}
        return {"wall_s": 0.03 + 0.1 * ROUND_RATIOS[i % len(ROUND_RATIOS)] * slow, "hops": 1_000_000}


def _row(name: str, core_wall_s: float = 1.0) -> dict[str, Any]:
    setup = 0.01 if name == hops.HOP_COST_BASE else 0.03
    return {
        "workload": name,
        "qoslab_core": {"wall_s": core_wall_s, "hops": 1_000_000},
        "qoslab_core_setup": {"wall_s": setup, "hops": 0},
    }


def test_the_paired_cost_per_hop_divides_runs_of_the_same_round() -> None:
    """Each round runs both workloads, the base first in every other round, and divides the
    two runs of that round; the paired figure is the median of those ratios. With the machine
    slowing down every round (1, 4, 9, 16 and 25 times), every round's ratio net of each
    workload's own setup is the quiet machine's. Dividing runs of different rounds, the
    medians of the runs, or by the other workload's setup would give other figures."""
    fake = _Drifting()
    row, base = _row("red-10000flows-10Gbps-2s"), _row(hops.HOP_COST_BASE)
    hops.paired_hop_costs(row, base, 5, measure=fake)
    b, w = hops.HOP_COST_BASE, row["workload"]
    assert fake.calls == [b, w, w, b, b, w, w, b, b, w]
    gross = [
        (0.03 + 0.1 * r * k * k) / (0.01 + 0.1 * k * k)
        for r, k in zip(ROUND_RATIOS, range(1, 6), strict=True)
    ]
    assert row["hop_cost_pairs"] == pytest.approx(gross)
    assert row["hop_cost_ratio_paired"] == pytest.approx(sorted(gross)[2])
    assert row["hop_cost_ratio_paired_net"] == pytest.approx(2.0)
    assert row["hop_cost_pairs_note"] == ""


def test_a_failed_round_keeps_the_rounds_before_it() -> None:
    """A worker that fails in the third round (the fifth run) stops the rounds: the two
    before it are kept, and the row says which round failed and why, in one line."""
    row, base = _row("red-10000flows-10Gbps-2s"), _row(hops.HOP_COST_BASE)
    hops.paired_hop_costs(row, base, 5, measure=_Drifting(fail_at=5))
    assert len(row["hop_cost_pairs"]) == 2 and row["hop_cost_ratio_paired_net"] == pytest.approx(2.0)
    assert row["hop_cost_pairs_note"] == "round 3 of 5 failed: MemoryError: out of memory"


def test_rows_are_paired_with_the_base_only_when_the_call_measures_it() -> None:
    fake = _Drifting()
    rows = [_row(hops.HOP_COST_BASE), _row("red-10000flows-10Gbps-2s"), _row("slow", core_wall_s=31.0)]
    hops.pair_with_base(rows, 3, measure=fake)
    base, big, slow = rows
    assert base["hop_cost_ratio_paired"] == 1.0 and base["hop_cost_ratio_paired_net"] == 1.0
    assert base["hop_cost_pairs"] == []
    assert len(big["hop_cost_pairs"]) == 3 and big["hop_cost_ratio_paired_net"] == pytest.approx(2.0)
    assert slow["hop_cost_ratio_paired"] is None and "slow" not in fake.calls
    assert len(fake.calls) == 6
    for rows, pairs in (([_row(hops.HOP_COST_BASE), _row("big")], 0), ([_row("big")], 3)):
        hops.pair_with_base(rows, pairs, measure=fake)
        assert all(r["hop_cost_ratio_paired"] is None and r["hop_cost_pairs"] == [] for r in rows)
    assert len(fake.calls) == 6


def test_negative_pairs_is_a_one_line_error() -> None:
    p = subprocess.run(
        [QOSLAB, "bench", "--pairs", "-1", "--workload", SMALL, "--no-ns2", "--no-ns3"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "--pairs must be at least 0, got -1" in one_line_error(p)


def test_the_clis_default_pairs_is_the_benchs() -> None:
    """The CLI does not import the bench module at start-up, so it repeats the default."""
    from qoslab.cli import bench as command

    assert inspect.signature(command.bench).parameters["pairs"].default == hops.PAIRS


def test_an_unknown_workload_is_a_one_line_error() -> None:
    p = subprocess.run([QOSLAB, "bench", "--workload", "nope", "--no-ns3"], capture_output=True, text=True)
    assert "unknown workload 'nope'" in one_line_error(p)


def _sysfs(root: Path, caches: list[tuple[int, str, str, int]]) -> Path:
    """A Linux sysfs cache directory holding ``(level, type, size, ways)`` with 64-byte lines."""
    for i, (level, kind, size, ways) in enumerate(caches):
        d = root / f"index{i}"
        d.mkdir(parents=True)
        for key, value in {
            "level": level,
            "type": kind,
            "size": size,
            "ways_of_associativity": ways,
            "coherency_line_size": 64,
        }.items():
            (d / key).write_text(f"{value}\n")
    return root


def test_callgrind_simulates_the_caches_sysfs_describes(tmp_path: Path) -> None:
    """valgrind's own detection reads CPUID, which on the CI machine describes a 320 MB
    direct-mapped L3 (simulated as 256 MB): the bench passes the caches sysfs describes, the
    last level being the highest one holding data, and counts inside the event loop only."""
    ci = [
        (1, "Data", "32K", 8),
        (1, "Instruction", "32K", 8),
        (2, "Unified", "1024K", 8),
        (3, "Unified", "32768K", 16),
    ]
    caches = cache.cache_geometry(_sysfs(tmp_path / "ci", ci))
    assert caches is not None
    assert caches["LL"] == cache.Cache(32 * 2**20, 16, 64)
    assert caches["D1"] == caches["I1"] == cache.Cache(32 * 2**10, 8, 64)
    cmd = cache.callgrind_command(tmp_path / "cg.out", SMALL, 0.5, caches)
    assert {"--LL=33554432,16,64", "--D1=32768,8,64", "--I1=32768,8,64"} <= set(cmd)
    assert {"--tool=callgrind", "--cache-sim=yes", f"--toggle-collect={cache.EVENT_LOOP}"} <= set(cmd)
    assert cmd[-4:] == ["qoslab.bench", "--loop", SMALL, "0.5"]
    # Without an L3 the last level is the L2; without a first level, nothing is passed.
    two = cache.cache_geometry(_sysfs(tmp_path / "two", ci[:3]))
    assert two is not None and two["LL"] == cache.Cache(2**20, 8, 64)
    assert cache.cache_geometry(_sysfs(tmp_path / "no-l1d", ci[1:])) is None
    assert cache.cache_geometry(tmp_path / "absent") is None
    assert not any(a.startswith("--LL") for a in cache.callgrind_command(tmp_path / "o", SMALL, 1.0, None))


def test_a_call_records_the_caches_as_sysfs_describes_them(tmp_path: Path) -> None:
    """The bench's JSON carries the machine's caches unsimulated (a 12 MiB 12-way L3 stays
    12 MiB of 12 ways, where valgrind would be given 16 MiB-shaped sets): whether a
    backbone workload's state fits the last level is what its hop cost rests on."""
    levels = [(1, "Data", "48K", 12), (2, "Unified", "2048K", 16), (3, "Unified", "12288K", 12)]
    found = cache.described_caches(_sysfs(tmp_path / "m", levels))
    assert [(c["level"], c["type"], c["bytes"], c["ways"]) for c in found] == [
        (1, "Data", 48 * 2**10, 12),
        (2, "Unified", 2 * 2**20, 16),
        (3, "Unified", 12 * 2**20, 12),
    ]
    assert cache.described_caches(tmp_path / "absent") == []
    # A level described unreadably is left out, the others kept.
    (tmp_path / "m" / "index1" / "size").write_text("lots\n")
    assert [c["level"] for c in cache.described_caches(tmp_path / "m")] == [1, 3]


def test_the_event_loops_counts_simulate_the_machines_caches_and_record_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One callgrind run, with the caches :func:`cache.cache_geometry` finds, which the row
    records; the figures are its counts over its hops, nothing taken off. Where it counted
    nothing (no symbols), the row says why instead of giving figures."""
    caches = {
        "I1": cache.Cache(2**15, 8, 64),
        "D1": cache.Cache(2**15, 8, 64),
        "LL": cache.Cache(2**25, 16, 64),
    }
    geometry: dict[str, cache.Cache] | None = caches
    counts = "2000 500 50 200 40 0"
    cmds: list[list[str]] = []

    def fake_run(cmd: list[str], **_: object) -> subprocess.CompletedProcess[str]:
        cmds.append(cmd)
        out = Path(next(a for a in cmd if a.startswith("--callgrind-out-file=")).split("=", 1)[1])
        out.write_text(f"events: Ir D1mr D1mw DLmr DLmw ILmr\nsummary: {counts}\ntotals: {counts}\n")
        return subprocess.CompletedProcess(cmd, 0, stdout=json.dumps({"hops": 100}) + "\n")

    monkeypatch.setattr(cache.shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(cache, "cache_geometry", lambda: geometry)
    monkeypatch.setattr(cache.subprocess, "run", fake_run)
    row = cache.event_loop_counts(SMALL, 0.5)
    assert row is not None and "note" not in row
    assert [c[-1] for c in cmds] == ["0.5"]
    assert all("--LL=33554432,16,64" in c and "--D1=32768,8,64" in c for c in cmds)
    assert row["caches"] == {"I1": "32768,8,64", "D1": "32768,8,64", "LL": "33554432,16,64"}
    assert row["last_level"] == "32,768 KiB 16-way 64 B lines"
    assert row["scope"] == cache.EVENT_LOOP
    # 2000 / 100 instructions; (500 + 50) / 100 L1 misses; (200 + 40 + 0) / 100 last-level.
    assert (row["instructions_per_hop"], row["d1_misses_per_hop"]) == (20.0, 5.5)
    assert (row["ll_misses_per_hop"], row["ll_read_misses_per_hop"]) == (2.4, 2.0)
    # Without a description of the caches, valgrind detects them, and the row says so.
    geometry, cmds = None, []
    row = cache.event_loop_counts(SMALL, 0.5)
    assert row is not None and row["caches"] is None and row["last_level"] == "valgrind's detection"
    assert not any(a.startswith(("--LL", "--D1", "--I1")) for c in cmds for a in c)
    # Nothing counted in the loop: a note, and no figure that could be read as one.
    counts = "0 0 0 0 0 0"
    row = cache.event_loop_counts(SMALL, 0.5)
    assert row is not None and "stripped" in row["note"] and "instructions_per_hop" not in row


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_the_instruction_counts_are_the_event_loops_alone() -> None:
    """Counted in the loop only, a hop costs the same whether the run is short or long; with
    the interpreter's start-up and the scenario's parse counted too (about 240 M instructions
    here, which the loop's 150,000 hops at 5 flows would carry), the quarter-length run's hop
    would cost several times the full one's. And no count is negative, as they were when a
    set-up-only run was taken off (its second parse of the scenario came off with it)."""
    full = cache.event_loop_counts(SMALL, 1.0)
    quarter = cache.event_loop_counts(SMALL, 0.25)
    assert full is not None and quarter is not None
    assert "note" not in full, full.get("note")
    for row in (full, quarter):
        assert 100 < row["instructions_per_hop"] < 2000, row
        assert min(row["d1_misses_per_hop"], row["ll_misses_per_hop"], row["ll_read_misses_per_hop"]) >= 0
    assert quarter["instructions_per_hop"] / full["instructions_per_hop"] == pytest.approx(1.0, abs=0.15)


def test_the_count_of_the_loop_leaves_pandas_out_and_the_worker_loads_it() -> None:
    """Under callgrind pandas' import took 20 s of a 28 s count and enters no count, so
    ``--loop`` leaves it out; ``--worker``, whose peak the memory budget's checks compare with
    an estimate that counts pandas, loads it as a study's process does. Both make the same run."""
    seen = {}
    for mode in ("--loop", "--worker"):
        cmd = [sys.executable, "-X", "importtime", "-m", "qoslab.bench", mode, SMALL, "0.01"]
        p = subprocess.run(cmd, capture_output=True, text=True, check=True)
        pandas = any(line.rstrip().endswith("| pandas") for line in p.stderr.splitlines())
        seen[mode] = (pandas, json.loads(p.stdout.strip().splitlines()[-1])["hops"])
    assert seen["--loop"][0] is False and seen["--worker"][0] is True, seen
    assert seen["--loop"][1] == seen["--worker"][1] > 0, seen


def test_the_worker_names_an_unknown_workload_in_one_line() -> None:
    cmd = [sys.executable, "-m", "qoslab.bench", "--loop", "no-such-workload", "1"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    assert p.returncode != 0 and p.stdout == ""
    assert p.stderr.count("\n") == 1 and "no workload 'no-such-workload'" in p.stderr, p.stderr
    assert SMALL in p.stderr  # the known ones are named


@pytest.mark.parametrize(
    ("text", "size"), [("32K\n", 2**15), ("32768K", 2**25), ("32M", 2**25), ("1048576", 2**20)]
)
def test_sysfs_cache_sizes_are_read_with_their_units(text: str, size: int) -> None:
    assert cache._sysfs_size(text) == size


@pytest.mark.parametrize(
    ("size", "ways", "expected"),
    [
        (32 * 2**20, 16, (32 * 2**20, 16)),  # 32,768 sets: as it is
        (12 * 2**20, 16, (12 * 2**20, 24)),  # 12,288 sets -> 8,192 of 24 ways, the same size
        (48 * 2**10, 12, (48 * 2**10, 12)),  # 64 sets
        (5 * 2**20, 20, (5 * 2**20, 20)),  # 4,096 sets
        (3 * 2**20 + 2**19, 14, (3 * 2**20 + 2**19, 14)),  # 3.5 MiB 14-way: 4,096 sets
        (10 * 2**20, 16, (10 * 2**20, 20)),  # 10,240 sets -> 8,192 of 20 ways
        (192 * 2**10, 1, (192 * 2**10, 3)),  # 3,072 direct-mapped sets -> 1,024 of 3 ways
        (2**15, 0, (2**15, 512)),  # fully associative: one set
    ],
)
def test_a_cache_is_made_simulable_with_a_power_of_two_set_count(
    size: int, ways: int, expected: tuple[int, int]
) -> None:
    c = cache.simulable(size, ways, 64)
    sets = c.size // (c.assoc * c.line)
    assert (c.size, c.assoc) == expected
    assert sets & (sets - 1) == 0 and sets * c.assoc * c.line == c.size
    assert c.size == size
