"""docs/models/tcp-linux.md's "Measured" section quotes docs/models/tcp-linux-measured.json:
that file is what the checkout's core simulates (tools/tcp_linux_measured.py, 33 runs of a few
hundredths of a second), and records that core."""

from __future__ import annotations

import importlib.util
import json

from conftest import ROOT
from qoslab.verdicts.currency import core_fingerprint


def test_the_measured_figures_are_the_checkouts() -> None:
    spec = importlib.util.spec_from_file_location("tlm", ROOT / "tools" / "tcp_linux_measured.py")
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    committed = json.loads((ROOT / "docs" / "models" / "tcp-linux-measured.json").read_text())
    assert committed["fingerprint"]["core"] == core_fingerprint(ROOT), (
        "simulated by another core: .venv/bin/python tools/tcp_linux_measured.py "
        "--out docs/models/tcp-linux-measured.json"
    )
    for part in ("bbr_beside_cubic", "alone", "five_cubic", "dctcp"):
        assert json.loads(json.dumps(getattr(tool, part)())) == committed[part], part
