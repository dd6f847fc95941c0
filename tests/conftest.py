import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "scenarios"
QOSLAB = str(Path(sys.executable).parent / "qoslab")


@pytest.fixture
def qoslab_cmd() -> str:
    return QOSLAB


def require(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        pytest.skip(f"{tool} is not installed (run `make ns2`, or apt-get install ns2 tshark)")
    return path
