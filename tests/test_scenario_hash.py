"""The scenario hash (summary.json's scenario_sha256, the store's key) and summary.json's text."""

import json
import math
from pathlib import Path

import qoslab
from qoslab import _core
from qoslab.runs.simulate import summary_json
from qoslab.scenario import load_scenario

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"


def test_canonical_toml_is_the_resolved_table_written_as_toml():
    # The hash is computed from the core's canonical TOML directly; it must stay equal to the
    # TOML of the resolved table (the earlier definition), or stored runs would lose their keys.
    for p in sorted(SCENARIOS.glob("*.toml")):
        sc = load_scenario(p)
        assert sc.core.canonical_toml() == _core.table_to_toml(sc.resolved), p.name


def _same(a: object, b: object, where: str = "") -> None:
    """``a`` and ``b`` are equal with the same types (True is not 1, 1.0 is not 1) and every
    dict of ``a`` has its keys in byte order, as the resolved table always had them."""
    assert type(a) is type(b), (where, a, b)
    if isinstance(a, dict):
        assert isinstance(b, dict)
        keys = list(a)
        assert keys == sorted(keys, key=str.encode), (where, keys)
        assert set(keys) == set(b), (where, set(keys) ^ set(b))
        for k in keys:
            _same(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _same(x, y, f"{where}[{i}]")
    else:
        assert a == b or (a != a and b != b), (where, a, b)


def test_resolved_table_is_its_canonical_toml_read_back():
    """The core builds the resolved dict straight from the typed scenario (crates/qoslab-py's
    topy): it must equal, key order and types included, the canonical TOML it hashes, read by
    Python's own TOML parser, for every scenario and a 300-flow workload."""
    import tomllib

    from qoslab.bench.workloads import dumbbell

    cases = [load_scenario(p) for p in sorted(SCENARIOS.glob("*.toml"))]
    cases.append(qoslab.Scenario.from_table(dumbbell(300, "100Mbps", "5s")))
    for sc in cases:
        _same(sc.resolved, tomllib.loads(sc.core.canonical_toml()), sc.name)


def test_summary_json_reads_back_equal():
    res = qoslab.run(SCENARIOS / "fdd-red-s1.toml", seed=2)
    s = res.summary()
    s["nan_example"] = float("nan")  # allow_nan as before: NaN is written as NaN
    text = summary_json(s)
    back = json.loads(text)
    assert math.isnan(back.pop("nan_example")) and back == {k: v for k, v in s.items() if k != "nan_example"}
    # one flow per line
    assert sum(1 for line in text.splitlines() if line.startswith('    {"id": ')) == len(s["flows"])


def test_a_large_run_hashes_its_scenario_beside_the_simulation():
    """A run of a scenario with at least HASH_BESIDE_FROM flows plus links hashes it on a
    second thread while the core simulates: the hash is there when run() returns (nothing else
    asked for it) and equals the hash computed afresh."""
    from qoslab.bench.workloads import dumbbell
    from qoslab.runs.simulate import HASH_BESIDE_FROM, run

    table = dumbbell(400, "100Mbps", "2s")
    sc = qoslab.Scenario.from_table(table)
    assert len(sc.resolved["flows"]) + len(sc.resolved["links"]) >= HASH_BESIDE_FROM
    assert sc._sha256 is None
    res = run(sc, seed=1)
    assert sc._sha256 is not None
    assert res.summary()["scenario_sha256"] == qoslab.Scenario.from_table(table).sha256()
    small = load_scenario(SCENARIOS / "fdd-red-s1.toml")
    run(small, seed=1)
    assert small._sha256 is None  # below the threshold: hashed only when asked


def test_canonical_toml_of_strings_toml_quotes_in_other_ways():
    # crates/qoslab-py's canon writes the canonical TOML itself, every scalar through toml's own
    # value writer: a string with quotes, a backslash, a line break or non-ASCII text comes out
    # as toml writes it (literal, multi-line, escaped), and so does a 300-flow workload.
    from qoslab.bench.workloads import dumbbell

    t = load_scenario(SCENARIOS / "fdd-red-s1.toml").table()
    t["name"] = 'it\'s "quoted"'
    t["description"] = "two\nlines, a \\ and é\ttab"
    t["flow"][0]["name"] = "ftp 'number' {i}"
    for table in (t, dumbbell(300, "100Mbps", "5s")):
        sc = qoslab.Scenario.from_table(table)
        assert sc.core.canonical_toml() == _core.table_to_toml(sc.resolved), sc.name


def test_the_outline_is_the_resolved_table_less_the_keys_a_run_does_not_read():
    """A run reads the outline (the resolved table whose flows and links keep only the keys in
    OUTLINE_FIELDS): the same objects, key order and types included, as the resolved table's."""
    from qoslab.bench.workloads import dumbbell
    from qoslab.scenario import OUTLINE_FIELDS

    keep = dict(OUTLINE_FIELDS)
    cases = [load_scenario(p) for p in sorted(SCENARIOS.glob("*.toml"))]
    cases.append(qoslab.Scenario.from_table(dumbbell(300, "100Mbps", "5s")))
    for sc in cases:
        full = sc.core.table()
        expected = {
            k: [{f: e[f] for f in e if f in keep[k]} for e in v] if k in keep else v for k, v in full.items()
        }
        assert set(keep["flows"]) <= set(full["flows"][0]) and set(keep["links"]) <= set(full["links"][0])
        _same(sc.outline, expected, sc.name)
        assert "resolved" not in sc.__dict__  # the outline did not build it
        assert sc.resolved == full and sc.outline is sc.resolved  # once built, it is the outline


def test_a_run_writes_its_outputs_without_the_resolved_table(tmp_path):
    """qoslab run's path (running, the tables, summary.json, the printout's summary of a few
    flows) reads only the outline; a summary of some flow rows is the summary with only those
    entries in ``flows``."""
    from qoslab.runs.simulate import run

    sc = load_scenario(SCENARIOS / "ard-rio-20flows.toml")
    res = run(sc, seed=3, out=tmp_path)
    assert "resolved" not in sc.__dict__
    s = res.summary()
    assert json.loads((tmp_path / "summary.json").read_text()) == json.loads(summary_json(s))
    part = res.summary(flow_rows=[7, 0, 19])
    assert part["flows"] == [s["flows"][7], s["flows"][0], s["flows"][19]]
    assert {**part, "flows": None} == {**s, "flows": None}
    assert [f["id"] for f in s["flows"]] == list(range(20)) and res.summary(flow_rows=[])["flows"] == []
