"""Bad input gets one clear line naming the file and the key, exit code 1, no traceback."""

import json
import subprocess
from pathlib import Path

import pytest

import qoslab
from conftest import QOSLAB, SCENARIOS

BAD = Path(__file__).parent / "bad_scenarios"
EXPECTED = json.loads((BAD / "expected_keys.json").read_text())


def test_there_are_at_least_ten_broken_files():
    assert len(EXPECTED) >= 10


@pytest.mark.parametrize("name", sorted(EXPECTED))
@pytest.mark.parametrize("command", ["check", "run"])
def test_broken_scenario_gives_one_clear_line(name, command):
    path = BAD / name
    p = subprocess.run([QOSLAB, command, str(path)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 1, p.stderr
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, p.stderr
    assert "Traceback" not in p.stderr
    line = lines[0]
    assert line.startswith(f"error: {path}:"), line
    assert f"key `{EXPECTED[name]}`" in line or EXPECTED[name] == "", line


def test_valid_scenarios_check_ok():
    p = subprocess.run(
        [QOSLAB, "check", *map(str, sorted(SCENARIOS.glob("*.toml")))], capture_output=True, text=True
    )
    assert p.returncode == 0, p.stderr


def test_python_api_raises_scenario_error_with_fields():
    with pytest.raises(qoslab.ScenarioError) as e:
        qoslab.load_scenario(BAD / "min_gt_max.toml")
    msg, file, line, key, message = e.value.args
    assert file.endswith("min_gt_max.toml") and key == "link[1].queue_ab.min_th" and line > 0
    assert "max_th" in message


def test_missing_file_is_a_clear_error():
    p = subprocess.run([QOSLAB, "check", "no/such/file.toml"], capture_output=True, text=True)
    assert p.returncode == 1 and "cannot read" in p.stderr and "Traceback" not in p.stderr


def test_bad_set_override_is_a_clear_error():
    p = subprocess.run(
        [QOSLAB, "run", str(SCENARIOS / "fdd-red-s1.toml"), "--set", "link.bottleneck.bandwidth=-3Mbps"],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 1 and "negative" in p.stderr and "Traceback" not in p.stderr
