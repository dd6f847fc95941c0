"""Series paths read from a store's database stay inside the store: a path elsewhere (absolute,
through `..`, through a symbolic link) is refused in one line, the same line whether or not a
file is there, before it is opened: no existence or hash oracle."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess

import pytest

import qoslab.report.results
from conftest import QOSLAB
from qoslab.store import StoreError
from test_store_integrity import _one_run


@pytest.fixture(scope="module")
def one_store(tmp_path_factory):
    st, _, _ = _one_run(tmp_path_factory.mktemp("store"))
    return st


def _point(st, rel: str, sha: str | None) -> None:
    c = sqlite3.connect(st / "results.db")
    c.execute("UPDATE runs SET series_flow = ?, series_flow_sha256 = ?", (rel, sha))
    c.commit()
    c.close()


@pytest.mark.parametrize("where", ["absolute", "dotdot", "missing", "symlink"])
def test_series_paths_in_the_database_are_confined_to_the_store(tmp_path, one_store, where):
    """A database pointing its series at a file outside the store, with that file's SHA-256:
    before, it was read and hashed (`--check` passed; a missing file said "missing", another
    "fails its checksum"). Now `--check`, `results --table` and the API refuse it in one line
    naming the path, whatever the file outside."""
    st = tmp_path / "st"
    shutil.copytree(one_store, st)
    secret = tmp_path / "secret.parquet"
    secret.write_bytes(b"PAR1 not the store's")
    sha = hashlib.sha256(secret.read_bytes()).hexdigest()
    rel = {
        "absolute": str(secret),
        "dotdot": "series/../../secret.parquet",
        "missing": str(tmp_path / "nothing.parquet"),
        "symlink": "series/ab/link.parquet",
    }[where]
    if where == "symlink":
        (st / "series" / "ab").mkdir()
        os.symlink(secret, st / rel)
    _point(st, rel, sha)
    p = subprocess.run([QOSLAB, "results", "--store", str(st), "--check"], capture_output=True, text=True)
    problems = [x for x in p.stderr.splitlines() if x.startswith("problem:")]
    assert p.returncode == 1 and len(problems) == 1 and "refused" in problems[0], p.stderr
    assert repr(rel) in problems[0] and "missing" not in p.stderr and "checksum (" not in p.stderr
    with pytest.raises(StoreError, match="refused") as e:
        qoslab.report.results.load(st, "series_flow")
    assert "\n" not in str(e.value)
    p = subprocess.run(
        [QOSLAB, "results", "--store", str(st), "--table", "series_flow"], capture_output=True, text=True
    )
    assert p.returncode == 1 and "refused" in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
