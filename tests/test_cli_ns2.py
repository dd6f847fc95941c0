"""`qoslab export-ns2` and `qoslab crosscheck`."""

import json
import subprocess

from conftest import QOSLAB, SCENARIOS, drr_scenario_file, require, run_window


def test_export_ns2_script_runs_in_ns2(tmp_path):
    ns = require("ns")
    out = tmp_path / "ard.tcl"
    p = subprocess.run(
        [
            QOSLAB,
            "export-ns2",
            str(SCENARIOS / "ard-rio-4flows.toml"),
            "--seed",
            "2",
            "--out",
            str(out),
            *run_window("20s", "5s"),
        ],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stderr
    run = subprocess.run([ns, str(out)], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert run.returncode == 0, run.stderr
    res = json.loads(out.with_suffix(".json").read_text())
    assert [f["name"] for f in res["flows"]] == ["tcp0", "tcp1", "tcp2", "tcp3"]
    assert sum(f["throughput_bps"] for f in res["flows"]) > 0.9 * 1.2e6


def test_export_ns2_short_option_relative_results_and_trace(tmp_path):
    """`-o` writes the script; its results and the optional trace land beside it whatever the
    working directory ns-2 runs in, and the script names no absolute path of the exporter's."""
    ns = require("ns")
    folder = tmp_path / "scripts"
    folder.mkdir()
    out = folder / "red.tcl"
    args = run_window("5s", "1s")
    p = subprocess.run(
        [
            QOSLAB,
            "export-ns2",
            str(SCENARIOS / "fdd-red-s1.toml"),
            "-o",
            str(out),
            "--trace",
            "red.tr",
            *args,
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stderr
    script = out.read_text()
    assert str(tmp_path) not in script and "trace-all" in script
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    run = subprocess.run([ns, str(out)], capture_output=True, text=True, cwd=elsewhere, timeout=120)
    assert run.returncode == 0, run.stderr
    assert not list(elsewhere.iterdir())
    res = json.loads((folder / "red.json").read_text())
    trace = (folder / "red.tr").read_text().splitlines()
    # ns-2's trace: one line per event, '+' enqueue, '-' dequeue, 'r' receive, 'd' drop; every
    # packet the sinks counted was received on the last hop, so the trace holds at least as
    # many receive events as delivered packets.
    assert {line[0] for line in trace} >= {"+", "-", "r"}
    delivered = sum(f.get("rx_packets", 0) for f in res["flows"])
    assert sum(1 for line in trace if line[0] == "r") >= delivered
    plain = subprocess.run(
        [QOSLAB, "export-ns2", str(SCENARIOS / "fdd-red-s1.toml"), *args], capture_output=True, text=True
    )
    assert "trace-all" not in plain.stdout and 'set qoslab_trace ""' in plain.stdout


def test_export_ns2_trace_is_a_plain_name_beside_the_script(tmp_path):
    """`--trace /etc/passwd` and `../x` were written into the script (ns-2 would open them
    wherever it ran), a quote would break its Tcl: the trace is a plain file name beside the
    script, not the script's own nor its results', not a folder there; one line each."""
    (tmp_path / "adir").mkdir()
    for trace, needle in [
        ("/etc/passwd", "not a path"),
        ("../escape.tr", "not a path"),
        ('a"b.tr', "not a path"),
        ("-x", "not a path"),
        ("adir", "is a folder"),
        ("s.tcl", "would be overwritten"),
        ("s.json", "would be overwritten"),
    ]:
        p = subprocess.run(
            [QOSLAB, "export-ns2", str(SCENARIOS / "fdd-red-s1.toml"), "-o", "s.tcl", f"--trace={trace}"],
            capture_output=True,
            text=True,
            cwd=tmp_path,
        )
        assert p.returncode == 1 and needle in p.stderr, (trace, p.stderr)
        assert len(p.stderr.strip().splitlines()) == 1 and p.stderr.startswith(f"error: --trace {trace!r}")
    assert sorted(x.name for x in tmp_path.iterdir()) == ["adir"]


def test_export_ns2_refuses_what_ns2_cannot_express(tmp_path):
    path = drr_scenario_file(tmp_path)
    p = subprocess.run([QOSLAB, "export-ns2", str(path)], capture_output=True, text=True)
    assert p.returncode == 1
    assert "ns-2 cannot express" in p.stderr and "Traceback" not in p.stderr


def test_crosscheck_prints_both_simulators(tmp_path):
    require("ns")
    csv = tmp_path / "x.csv"
    p = subprocess.run(
        [
            QOSLAB,
            "crosscheck",
            str(SCENARIOS / "fdd-red-s1.toml"),
            "--seeds",
            "2",
            "--csv",
            str(csv),
            "--set",
            "duration=30s",
            "--set",
            "measurement.end=30s",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode in (0, 1), p.stderr  # 1: a family disagrees (two seeds of 30 s)
    assert "jain index" in p.stdout and "ns-2" in p.stdout and "per-flow throughput: " in p.stdout
    rows = csv.read_text().splitlines()
    assert rows[0].startswith("metric,family,qoslab_mean") and rows[0].endswith(",verdict") and len(rows) > 6


def test_names_with_backslashes_and_quotes_export_to_a_working_script(tmp_path):
    """A name lands in Tcl comments and strings: a trailing backslash must not swallow the next
    line (`r\\` once removed the node's links from the script), nor a quote end a string."""
    ns = require("ns")
    src = (SCENARIOS / "fdd-red-s1.toml").read_text()
    odd = src.replace('"r1"', '"r\\\\"').replace('name = "fdd-red-s1"', 'name = "odd\\\\"')
    odd = odd.replace('name = "ftp{i}"', 'name = "ftp \\"{i}\\" \\\\"')
    results = []
    for name, text in (("plain", src), ("odd", odd)):
        path = tmp_path / f"{name}.toml"
        path.write_text(text)
        out = tmp_path / f"{name}.tcl"
        short = run_window("10s", "2s")
        p = subprocess.run(
            [QOSLAB, "export-ns2", str(path), "--seed", "1", "--out", str(out), *short],
            capture_output=True,
            text=True,
        )
        assert p.returncode == 0, p.stderr
        run = subprocess.run([ns, str(out)], capture_output=True, text=True, cwd=tmp_path, timeout=120)
        assert run.returncode == 0, run.stderr
        results.append(json.loads(out.with_suffix(".json").read_text()))
    plain, odd_res = results
    assert [f["name"] for f in odd_res["flows"]] == [f'ftp "{i}" \\' for i in range(len(plain["flows"]))]
    assert [f["throughput_bps"] for f in odd_res["flows"]] == [f["throughput_bps"] for f in plain["flows"]]


def test_export_ns2_refuses_a_linux_flavour_flow_in_one_line(tmp_path):
    """ns-2's agents are the ns2 flavour's: a linux-flavour sender (here Linux's reno, which
    would have been written as Agent/TCP/Reno with Linux's initial window and delayed ACKs) is
    refused, naming the flow and its flavour; an ns2 flow under a linux [tcp] exports with
    ns-2's own defaults."""
    src = (SCENARIOS / "linux" / "single.toml").read_text()
    path = tmp_path / "linux.toml"
    path.write_text(src.replace('tcp = { variant = "bbr" }', 'tcp = { variant = "reno" }'))
    p = subprocess.run([QOSLAB, "export-ns2", str(path)], capture_output=True, text=True)
    lines = [x for x in p.stderr.splitlines() if x.strip()]
    assert p.returncode == 1 and p.stdout == "", p
    assert len(lines) == 1 and "flow 'single'" in lines[0], lines
    assert 'the linux flavour\'s (tcp.flavour = "linux")' in lines[0], lines
    path.write_text(src.replace('tcp = { variant = "bbr" }', 'tcp = { flavour = "ns2" }'))
    p = subprocess.run([QOSLAB, "export-ns2", str(path)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "windowInit_ 2" in p.stdout and "DelAck" not in p.stdout
