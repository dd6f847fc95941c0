"""Issue 56's findings on what a scenario reads and writes, re-run as tests: files a scenario
names for reading stay in its folder (``--allow-path`` lets another in) and errors never echo
their content; a run writes only into its own folder, one run per ``--out`` unless
``--force``, which clears only a folder qoslab wrote; captures cannot collide."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

import qoslab
from conftest import QOSLAB, two_nodes
from qoslab.runs.rundir import FRESH_ROOT, MARKER

HEAD = 'name = "conf"\nduration = "50ms"\n' + two_nodes()
ARR = (
    '[[arrivals]]\nname = "w"\nsrc = "a"\ndst = "b"\narrival_rate = 50.0\n'
    'size = {{ dist = "empirical", cdf = "{}" }}\n'
)
TRACE = '[[flow]]\nsrc = "a"\ndst = "b"\ntype = "trace"\ntrace = "{}"\n'
FLOW = '[[flow]]\nsrc = "a"\ndst = "b"\n'
CAPTURE = '[[capture]]\nlink = "ab"\nfile = "{}"\n'


def qoslab_cli(
    *args: str | Path, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [QOSLAB, *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **(env or {})},
    )


def write(d: Path, text: str, name: str = "s.toml") -> Path:
    d.mkdir(parents=True, exist_ok=True)
    p = d / name
    p.write_text(text)
    return p


# -- inputs -------------------------------------------------------------------------------------


@pytest.mark.parametrize("target", ["/etc/passwd", "/proc/self/environ"])
@pytest.mark.parametrize("command", ["check", "run"])
def test_a_cdf_outside_the_folder_is_refused_in_one_line_without_its_content(tmp_path, target, command):
    p = write(tmp_path, HEAD + ARR.format(target))
    r = qoslab_cli(command, p, cwd=tmp_path, env={"QOSLAB_TOKEN_FOR_TEST": "tok-5ec2e7"})
    assert r.returncode == 1, r
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert "outside the scenario's folder" in lines[0] and "arrivals[0].size.cdf" in lines[0], lines[0]
    assert "root:" not in r.stderr and "tok-5ec2e7" not in r.stderr and "PATH=" not in r.stderr
    assert "Traceback" not in r.stderr and not r.stdout


@pytest.mark.parametrize("target", ["/etc/passwd", "/proc/self/environ", "../secret.cdf", "link.cdf"])
def test_the_python_api_refuses_files_outside_the_folder(tmp_path, target):
    (tmp_path / "secret.cdf").write_text("100 0.5\nSECRET-LINE x\n")
    scen = tmp_path / "scen"
    scen.mkdir()
    (scen / "link.cdf").symlink_to(tmp_path / "secret.cdf")
    p = write(scen, HEAD + TRACE.format(target))
    with pytest.raises(qoslab.ScenarioError) as e:
        qoslab.load_scenario(p)
    msg = str(e.value)
    assert "outside the scenario's folder" in msg and "flow[0].trace" in msg, msg
    assert "SECRET" not in msg and "root:" not in msg and "\n" not in msg.strip()
    if target == "link.cdf":
        assert "symbolic link" in msg, msg
    # the same through a table built in Python, relative to the working directory
    with pytest.raises(qoslab.ScenarioError):
        qoslab.Scenario.from_table(
            {
                **qoslab.load_scenario(write(scen, HEAD + FLOW, "ok.toml")).table(),
                "flow": [{"src": "a", "dst": "b", "type": "trace", "trace": str(tmp_path / "secret.cdf")}],
            }
        )


def test_allow_path_lets_a_folder_in_and_errors_name_the_line_not_the_content(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "good.cdf").write_text("100 0.5\n1000 1\n")
    (shared / "bad.cdf").write_text("100 0.5\nSECRET-WORD 1\n")
    scen = tmp_path / "scen"
    good = write(scen, HEAD + ARR.format("../shared/good.cdf"), "good.toml")
    bad = write(scen, HEAD + ARR.format(str(shared / "bad.cdf")), "bad.toml")
    r = qoslab_cli("check", good, cwd=tmp_path)
    assert r.returncode == 1 and "--allow-path" in r.stderr, r
    r = qoslab_cli("check", good, "--allow-path", shared, cwd=tmp_path)
    assert r.returncode == 0, r
    r = qoslab_cli("run", good, "--allow-path", shared, cwd=tmp_path)
    assert r.returncode == 0, r
    r = qoslab_cli("check", bad, "--allow-path", shared, cwd=tmp_path)
    assert r.returncode == 1 and "bad.cdf: line 2: the size is not a finite number" in r.stderr, r
    assert "SECRET" not in r.stderr
    sc = qoslab.load_scenario(good, allow_paths=[shared])
    assert sc.with_overrides(["duration=20ms"]).allow_paths == (str(shared),)
    import pickle

    assert pickle.loads(pickle.dumps(sc)).allow_paths == (str(shared),)


# -- outputs ------------------------------------------------------------------------------------


def test_a_capture_cannot_name_an_ssh_key_and_without_out_writes_into_a_fresh_folder(tmp_path):
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    keys = home / ".ssh" / "authorized_keys"
    keys.write_text("ssh-ed25519 AAAA user\n")
    bad = write(tmp_path / "shared", HEAD + FLOW + CAPTURE.format(".ssh/authorized_keys"), "bad.toml")
    for command in ("check", "run"):
        r = qoslab_cli(command, bad, cwd=home)
        assert r.returncode == 1 and "must end in .pcap" in r.stderr, r
    ok = write(tmp_path / "shared", HEAD + FLOW + CAPTURE.format(".ssh/authorized_keys.pcap"), "ok.toml")
    r = qoslab_cli("run", ok, cwd=home)
    assert r.returncode == 0, r
    assert keys.read_text() == "ssh-ed25519 AAAA user\n"
    assert sorted(p.name for p in (home / ".ssh").iterdir()) == ["authorized_keys"]
    (run_dir,) = (home / FRESH_ROOT).iterdir()
    assert (run_dir / ".ssh" / "authorized_keys.pcap").stat().st_size > 24
    assert (run_dir / "summary.json").is_file() and (run_dir / MARKER).is_file()
    assert f"wrote {FRESH_ROOT}/{run_dir.name}/summary.json" in r.stdout, r.stdout
    # the Python API the same way: a second fresh folder, nothing else written
    cwd = os.getcwd()
    os.chdir(home)
    try:
        res = qoslab.run(qoslab.load_scenario(ok))
    finally:
        os.chdir(cwd)
    assert res.out is not None and res.out.parent.name == FRESH_ROOT and res.out != run_dir
    assert sorted(p.name for p in home.iterdir()) == [".ssh", FRESH_ROOT]


@pytest.mark.parametrize(
    ("captures", "words"),
    [
        (["x.pcap", "x.pcap"], "collides with capture[0]"),
        (["x.pcap", "./x.pcap"], "collides with capture[0]"),
        (["x.pcap", "x.pcap/y.pcap"], "collides with capture[0]"),
        (["summary.json"], "must end in .pcap"),
        (["flows.parquet"], "must end in .pcap"),
        (["summary.json/x.pcap"], 'inside "summary.json", a file qoslab writes'),
        (["./scenario.toml/x.pcap"], 'inside "scenario.toml", a file qoslab writes'),
        (["series_queue.parquet/a/x.pcap"], 'inside "series_queue.parquet", a file qoslab writes'),
        ([".qoslab-run/x.pcap"], 'inside ".qoslab-run", a file qoslab writes'),
    ],
)
def test_colliding_captures_are_refused_at_check(tmp_path, captures, words):
    p = write(tmp_path, HEAD + FLOW + "".join(CAPTURE.format(c) for c in captures))
    r = qoslab_cli("check", p, cwd=tmp_path)
    assert r.returncode == 1 and words in r.stderr and len(r.stderr.strip().splitlines()) == 1, r


def test_both_directions_cannot_land_on_another_capture(tmp_path):
    text = (
        HEAD
        + FLOW
        + '[[capture]]\nlink = "ab"\ndirection = "both"\nfile = "x.pcap"\n'
        + CAPTURE.format("x.ba.pcap")
    )
    with pytest.raises(qoslab.ScenarioError, match="collides with capture"):
        qoslab.load_scenario(write(tmp_path, text))


def test_one_run_per_out_unless_force_which_clears_only_qoslab_folders(tmp_path):
    p = write(tmp_path, HEAD + FLOW)
    out = tmp_path / "out"
    assert qoslab_cli("run", p, "--out", out, cwd=tmp_path).returncode == 0
    (out / "stale.png").write_text("an old figure")
    r = qoslab_cli("run", p, "--out", out, "--seed", "2", cwd=tmp_path)
    assert r.returncode == 1 and "holds an earlier run" in r.stderr and "--force" in r.stderr, r
    assert len(r.stderr.strip().splitlines()) == 1
    assert '"seed": 1' in (out / "summary.json").read_text().replace('"seed":1', '"seed": 1')
    r = qoslab_cli("run", p, "--out", out, "--seed", "2", "--force", cwd=tmp_path)
    assert r.returncode == 0, r
    assert not (out / "stale.png").exists()
    assert '"seed": 2' in (out / "summary.json").read_text()
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "thesis.tex").write_text("precious")
    for extra in ([], ["--force"]):
        r = qoslab_cli("run", p, "--out", mine, *extra, cwd=tmp_path)
        assert r.returncode == 1 and "holds no qoslab run" in r.stderr, r
    assert sorted(x.name for x in mine.iterdir()) == ["thesis.tex"]
    with pytest.raises(OSError, match="holds an earlier run"):
        qoslab.run(qoslab.load_scenario(p), out=out)


def test_a_run_refused_before_it_starts_leaves_its_out_reusable(tmp_path):
    p = write(tmp_path, HEAD + FLOW)
    out = tmp_path / "o"
    r = qoslab_cli("run", p, "--out", out, "--max-memory", "1kB", cwd=tmp_path)
    assert r.returncode == 1, r
    assert qoslab_cli("run", p, "--out", out, cwd=tmp_path).returncode == 0
