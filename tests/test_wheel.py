"""The wheel: `make wheel` builds it, and it installs into a fresh virtual environment and runs
there with no Rust toolchain on the PATH and no checkout to import from."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

from conftest import ROOT, SCENARIOS


@pytest.fixture(scope="module")
def wheel():
    if shutil.which("cargo") is None:
        pytest.skip("building the wheel needs cargo (the test then installs it without)")
    p = subprocess.run(["make", "-s", "wheel"], cwd=ROOT, capture_output=True, text=True, timeout=1200)
    assert p.returncode == 0, p.stderr[-3000:]
    wheels = sorted((ROOT / "dist").glob("qoslab-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def test_the_wheel_is_abi3_manylinux_and_carries_the_link_daemon(wheel):
    assert "-cp311-abi3-manylinux_" in wheel.name, wheel.name
    names = zipfile.ZipFile(wheel).namelist()
    assert "qoslab/_core.abi3.so" in names and "qoslab/py.typed" in names and "qoslab/_core.pyi" in names
    assert any(n.endswith(".data/scripts/qoslab-linkd") for n in names), names
    assert "qoslab/_build_info.py" in names  # the git revision it was built from
    assert not (ROOT / "python" / "qoslab" / "_build_info.py").exists(), (
        "make wheel left its build info behind"
    )


def test_the_wheel_runs_in_a_fresh_venv_without_rust(wheel, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    bindir = venv / "bin"
    # nothing of the checkout or of Rust is reachable: only the new venv and the system's tools
    env = {
        "PATH": f"{bindir}:/usr/bin:/bin",
        "HOME": os.environ.get("HOME", "/root"),
        "LANG": "C.UTF-8",
        "MPLBACKEND": "Agg",
    }
    pip = subprocess.run(
        [str(bindir / "pip"), "install", "-q", f"{wheel}[dask]"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert pip.returncode == 0, pip.stderr[-3000:]
    assert shutil.which("cargo", path=env["PATH"]) is None and shutil.which("rustc", path=env["PATH"]) is None

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(list(args), env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)

    v = run(str(bindir / "qoslab"), "--version")
    assert v.returncode == 0, v.stderr
    from qoslab import _core

    assert f"version key of stored runs: {_core.__version__}" in v.stdout, v.stdout
    assert "(built into this wheel)" in v.stdout, v.stdout

    where = run(
        str(bindir / "python"),
        "-c",
        "import qoslab, qoslab.emulation, dask_jobqueue, distributed; "
        "print(qoslab.__file__); print(qoslab.emulation.linkd_path())",
    )
    assert where.returncode == 0, where.stderr
    pkg, linkd = where.stdout.split()
    assert pkg.startswith(str(venv)), pkg  # imported from the venv, not the checkout
    assert linkd == str(bindir / "qoslab-linkd"), linkd
    plan = run(linkd, "plan", str(SCENARIOS / "fdd-red-s1.toml"), "1")
    assert plan.returncode == 0 and json.loads(plan.stdout), plan.stderr

    out = tmp_path / "out"
    r = run(
        str(bindir / "qoslab"), "run", str(SCENARIOS / "fdd-red-s1.toml"), "--seed", "1", "--out", str(out)
    )
    assert r.returncode == 0, r.stderr
    summary = json.loads((out / "summary.json").read_text())
    # the wheel's core is the checkout's: the same run gives the same numbers
    import qoslab

    here = qoslab.run(qoslab.load_scenario(SCENARIOS / "fdd-red-s1.toml"), 1).summary()
    assert summary["version"] == _core.__version__
    assert summary["fairness_index"] == here["fairness_index"]
    assert summary["events"] == here["events"]
