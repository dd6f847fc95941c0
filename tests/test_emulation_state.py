"""A malformed emulation state file (STATE_DIR/qlab-….json) is one line naming the file and
the key, in `qoslab emulate --cleanup` and in every run's clean-up of earlier runs; nothing is
torn down from it. (Its keys' types raised ValueError, AttributeError or TypeError.)"""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from conftest import QOSLAB
from qoslab.emulation import state
from qoslab.emulation.machine import EmulationError

GOOD = {"prefix": "qlab-abcdef", "owner_pid": 999_999_999, "owner_start": "1", "namespaces": [], "pids": []}


@pytest.mark.parametrize(
    ("record", "words"),
    [
        ([1, 2], "expected a JSON object"),
        ({**GOOD, "owner_pid": "x"}, "key `owner_pid`: expected a process id"),
        ({**GOOD, "pids": [[1]]}, "key `pids`"),
        ({**GOOD, "pids": [["a", None]]}, "key `pids`"),
        ({**GOOD, "namespaces": "qlab-abcdef-x"}, "key `namespaces`"),
        ({**GOOD, "work": 3}, "key `work`"),
        ({**GOOD, "prefix": "other"}, "key `prefix`"),
    ],
)
def test_a_malformed_state_file_is_one_line(tmp_path, monkeypatch, record, words):
    (tmp_path / "qlab-abcdef.json").write_text(json.dumps(record))
    monkeypatch.setattr(state, "STATE_DIR", tmp_path)
    with pytest.raises(EmulationError) as e:
        state.cleanup_stale()
    msg = str(e.value)
    assert msg.startswith(f"{tmp_path / 'qlab-abcdef.json'}: not a qoslab emulation state file"), msg
    assert words in msg
    assert "\n" not in msg and (tmp_path / "qlab-abcdef.json").exists()
    if os.geteuid() == 0:  # the CLI's --cleanup needs root
        env = {**os.environ, "QOSLAB_EMU_STATE": str(tmp_path)}
        p = subprocess.run([QOSLAB, "emulate", "--cleanup"], capture_output=True, text=True, env=env)
        assert p.returncode == 1 and p.stderr.count("\n") == 1 and words in p.stderr, p.stderr


def test_a_record_without_its_owners_start_time_is_not_taken_for_a_live_run(tmp_path, monkeypatch):
    """`owner_start` missing: the owner was compared as alive (None == None) and its leftovers
    kept for ever; now it is torn down like any dead run's."""
    record = {"prefix": "qlab-abcdef", "owner_pid": 999_999_999}
    (tmp_path / "qlab-abcdef.json").write_text(json.dumps(record))
    monkeypatch.setattr(state, "STATE_DIR", tmp_path)
    monkeypatch.setattr(state, "list_namespaces", lambda: [])
    assert state.cleanup_stale() == [] and not (tmp_path / "qlab-abcdef.json").exists()
