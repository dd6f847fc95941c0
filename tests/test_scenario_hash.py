"""The scenario hash (summary.json's scenario_sha256, the store's key) and summary.json's text."""

import json
import math
from pathlib import Path

import qoslab
from qoslab import _core
from qoslab.scenario import load_scenario
from qoslab.simulate import summary_json

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"


def test_canonical_toml_is_the_resolved_table_written_as_toml():
    # The hash is computed from the core's canonical TOML directly; it must stay equal to the
    # TOML of the resolved table (the earlier definition), or stored runs would lose their keys.
    for p in sorted(SCENARIOS.glob("*.toml")):
        sc = load_scenario(p)
        assert sc.core.canonical_toml() == _core.table_to_toml(sc.resolved), p.name


def test_summary_json_reads_back_equal():
    res = qoslab.run(SCENARIOS / "fdd-red-s1.toml", seed=2)
    s = res.summary()
    s["nan_example"] = float("nan")  # allow_nan as before: NaN is written as NaN
    text = summary_json(s)
    back = json.loads(text)
    assert math.isnan(back.pop("nan_example")) and back == {k: v for k, v in s.items() if k != "nan_example"}
    # one flow per line
    assert sum(1 for line in text.splitlines() if line.startswith('    {"id": ')) == len(s["flows"])
