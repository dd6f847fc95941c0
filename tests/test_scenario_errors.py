"""Bad input gets one clear line naming the file and the key, exit code 1, no traceback."""

import json
import re
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
    # every error names a line of the file, also a semantic one about a key the file leaves out
    # (wred_without_in.toml: the line of the queue table that lacks it)
    m = re.match(rf"error: {re.escape(str(path))}:(\d+):(\d+): ", line)
    assert m, line
    assert 1 <= int(m.group(1)) <= len(path.read_text().splitlines()), line
    if name == "wred_without_in.toml":
        assert path.read_text().splitlines()[int(m.group(1)) - 1] == "[link.queue_ab]", line


def test_valid_scenarios_check_ok():
    p = subprocess.run(
        [QOSLAB, "check", *map(str, sorted(SCENARIOS.glob("*.toml")))], capture_output=True, text=True
    )
    assert p.returncode == 0, p.stderr


def test_check_counts_what_a_scenario_holds_in_words():
    """`qoslab check`'s line: singular for one, arrival processes named when there are any."""
    files = [SCENARIOS / "linux" / "single.toml", SCENARIOS / "examples" / "arrivals.toml"]
    p = subprocess.run([QOSLAB, "check", *map(str, files)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == [
        f"{files[0]}: ok (4 nodes, 3 links, 1 flow)",
        f"{files[1]}: ok (3 nodes, 2 links, 0 flows, 1 arrival process)",
    ], p.stdout


def test_python_api_raises_scenario_error_with_fields():
    with pytest.raises(qoslab.ScenarioError) as e:
        qoslab.load_scenario(BAD / "min_gt_max.toml")
    err = e.value
    assert err.file.endswith("min_gt_max.toml") and err.key == "link[1].queue_ab.min_th"
    assert err.line > 0 and "max_th" in err.message


def test_scenario_error_is_one_line_with_file_line_column_key_and_message():
    """str() is the one line the CLI prints (it printed the argument tuple); the parts are
    attributes; the class is a ValueError, so `except ValueError` catches it."""
    text = 'name = "x"\nduration = "5 parsecs"\n'
    with pytest.raises(ValueError) as e:
        qoslab.Scenario.from_toml(text, "a.toml")
    err = e.value
    assert isinstance(err, qoslab.ScenarioError)
    assert str(err) == f"a.toml:2:12: key `duration`: {err.message}" and "\n" not in str(err)
    assert (err.file, err.line, err.column, err.key) == ("a.toml", 2, 12, "duration")
    assert 'unknown time unit "parsecs"' in err.message
    assert repr(err) == f"ScenarioError({str(err)!r})"
    # raised by the Python side (a missing file) with the same attributes
    with pytest.raises(qoslab.ScenarioError) as e:
        qoslab.load_scenario("no/such.toml")
    assert e.value.file == "no/such.toml" and e.value.line is None and e.value.key is None
    assert str(e.value).startswith("no/such.toml: cannot read the scenario file")


def test_a_scenario_path_that_is_a_folder_endless_or_too_large_is_refused(tmp_path):
    """/dev/zero never ended its read and a huge file took several times its size to parse: the
    read stops at 64 MiB, one line; a folder and a path that is not UTF-8 (the core takes text)
    are one line too, from the CLI as well. A pipe is read as a file (`qoslab run <(gen)`)."""
    import os
    import threading

    huge = tmp_path / "huge.toml"
    with huge.open("wb") as f:
        f.truncate(qoslab.scenario.MAX_SCENARIO_BYTES + 1)
    for path, needle in [
        ("/dev/zero", "larger than 64 MiB, the most a scenario file may hold"),
        (huge, "larger than 64 MiB, the most a scenario file may hold"),
        (tmp_path, "a folder, not a scenario file"),
    ]:
        with pytest.raises(qoslab.ScenarioError) as e:
            qoslab.load_scenario(path)
        assert str(e.value) == f"{path}: {e.value.message}" and needle in e.value.message
    odd = os.fsdecode(bytes(tmp_path) + b"/bad\xffname.toml")
    Path(odd).write_text((SCENARIOS / "fdd-red-s1.toml").read_text())
    with pytest.raises(qoslab.ScenarioError, match="the file's path is not UTF-8 text"):
        qoslab.load_scenario(odd)
    fifo = tmp_path / "f.toml"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_text((SCENARIOS / "fdd-red-s1.toml").read_text()))
    writer.start()
    assert qoslab.load_scenario(fifo).name == "fdd-red-s1"
    writer.join()
    for cmd in ("check", "run"):
        p = subprocess.run([QOSLAB, cmd, str(tmp_path)], capture_output=True, text=True, timeout=60)
        assert p.returncode != 0 and p.stderr.strip() == f"error: {tmp_path}: a folder, not a scenario file"
        p = subprocess.run([QOSLAB, cmd, odd], capture_output=True, text=True, timeout=60)
        assert p.returncode != 0 and "the file's path is not UTF-8 text" in p.stderr
        assert len(p.stderr.strip().splitlines()) == 1, p.stderr


def test_a_named_pipe_nothing_is_written_to_is_refused_not_waited_on(tmp_path, monkeypatch):
    """A named pipe without a writer blocked `check` and `run` for ever (as `cat` would): it is
    refused after PIPE_WAIT_S, in one line; a writer that opens it late, within that time, is
    still read to its end."""
    import os
    import threading
    import time

    monkeypatch.setattr(qoslab.scenario, "PIPE_WAIT_S", 1.0)
    fifo = tmp_path / "f.toml"
    os.mkfifo(fifo)
    t0 = time.monotonic()
    with pytest.raises(qoslab.ScenarioError) as e:
        qoslab.load_scenario(fifo)
    assert time.monotonic() - t0 < 10
    why = "a named pipe nothing was written to in 1 s: start its writer first, or give a file"
    assert str(e.value) == f"{fifo}: {why}"

    def late() -> None:
        time.sleep(0.4)
        fifo.write_text((SCENARIOS / "fdd-red-s1.toml").read_text())

    writer = threading.Thread(target=late)
    writer.start()
    assert qoslab.load_scenario(fifo).name == "fdd-red-s1"
    writer.join()


def test_override_errors_name_the_override_not_a_line_of_generated_toml():
    """An override that the core rejects was located in TOML generated from the changed table
    (`:78:11` of a 68-line file): the error names the override and the key, and no line. The
    library says "override", the CLI "--set"."""
    sc = qoslab.load_scenario(SCENARIOS / "fdd-red-s1.toml")
    with pytest.raises(qoslab.ScenarioError) as e:
        sc.with_overrides(["link.bottleneck.bandwidth=fast"])
    err = e.value
    assert err.line is None and err.column is None and err.key == "link.bottleneck.bandwidth"
    label = f"{SCENARIOS / 'fdd-red-s1.toml'} (with override link.bottleneck.bandwidth=fast)"
    assert str(err).startswith(f"{label}: ")
    assert "--set" not in str(err)
    with pytest.raises(qoslab.ScenarioError) as e:
        sc.with_overrides(["link.nosuch.delay=1ms"], via="--set")
    assert str(e.value) == "--set: key `link.nosuch.delay`: no link named 'nosuch'", str(e.value)
    p = subprocess.run(
        [QOSLAB, "run", str(SCENARIOS / "fdd-red-s1.toml"), "--set", "link.bottleneck.bandwidth=fast"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 1 and "Traceback" not in p.stderr
    line = p.stderr.strip()
    assert line.startswith("error: ")
    assert "(with --set link.bottleneck.bandwidth=fast): key `link.bottleneck.bandwidth`" in line
    assert ".toml:" not in line.split("(with")[0][-6:]


def test_scenario_and_result_have_readable_reprs():
    sc = qoslab.load_scenario(SCENARIOS / "fdd-red-s1.toml")
    assert repr(sc) == (
        f"<Scenario 'fdd-red-s1' from {SCENARIOS / 'fdd-red-s1.toml'}: 12 nodes, 11 links, 5 flows, "
        f"100 s, sha256 {sc.sha256()[:12]}>"
    )
    r = qoslab.run(sc.with_overrides(["duration=30s", "measurement.end=30s"]), seed=2)
    assert repr(r).startswith("<Result 'fdd-red-s1' seed 2: 5 flows, ") and f"{r.events:,} events" in repr(r)


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


# -- the edges: encodings, overflowing numbers, --set into values, paths (issue 20) -------------


def test_a_file_that_is_not_utf8_is_one_line_and_check_goes_on_to_the_next(tmp_path):
    bad = tmp_path / "latin1.toml"
    bad.write_bytes(b'# ok\nname = "\xff"\n')
    good = SCENARIOS / "fdd-red-s1.toml"
    p = subprocess.run([QOSLAB, "check", str(bad), str(good)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert p.stderr.strip() == f"error: {bad}:2: not UTF-8 text: byte 0xff at offset 13 (line 2)"
    assert f"{good}: ok" in p.stdout
    with pytest.raises(qoslab.ScenarioError):
        qoslab.load_scenario(bad)


@pytest.mark.parametrize(
    "assignment, needle",
    [
        ('duration="1e12s"', "at most 2^53 ns"),
        ('link.bottleneck.bandwidth="1e19bps"', "at most 10 Tbps"),
        ("flow[0].count=4294967296", "count must be between 1 and 1000000"),
        ("tcp.window=9223372036854775808", "out of range"),
        ("name.x=1", "is a value"),
        ("link[0].queue.limit=0", "not a table"),
    ],
)
def test_overrides_that_overflow_or_index_into_values_raise_scenario_error(assignment, needle):
    sc = qoslab.load_scenario(SCENARIOS / "fdd-red-s1.toml")
    with pytest.raises(qoslab.ScenarioError) as e:
        sc.with_overrides(["link[0].queue=0", assignment] if "queue." in assignment else [assignment])
    assert needle in str(e.value) or needle in e.value.message, e.value


def test_a_capture_through_a_symlink_out_of_the_output_directory_is_refused(tmp_path):
    out, outside = tmp_path / "out", tmp_path / "outside"
    out.mkdir()
    outside.mkdir()
    (out / "link").symlink_to(outside)
    sc = qoslab.load_scenario(SCENARIOS / "fdd-red-s1.toml").with_overrides(
        ['duration="12s"', 'measurement.start="0s"', 'measurement.end="12s"']
    )
    t = sc.table()
    t["capture"] = [{"link": "bottleneck", "file": "link/escaped.pcap"}]
    # a folder holding anything but an earlier qoslab run is refused as a whole (issue 56) ...
    with pytest.raises(OSError, match="holds no qoslab run"):
        qoslab.run(qoslab.Scenario.from_table(t), seed=1, out=out)
    # ... and a capture path that leaves the run's folder through a symbolic link is refused
    from qoslab.runs.rundir import inside

    with pytest.raises(qoslab.ScenarioError, match="resolves outside the output directory"):
        inside(out, "link/escaped.pcap", "s.toml")
    assert not list(outside.iterdir())


def test_api_captures_name_a_known_link_and_direction(tmp_path):
    sc = qoslab.load_scenario(SCENARIOS / "fdd-red-s1.toml").with_overrides(
        ['duration="12s"', 'measurement.start="0s"', 'measurement.end="12s"']
    )
    for cap in [("bottleneck", "xx", str(tmp_path / "a.pcap")), ("nope", "ab", str(tmp_path / "b.pcap"))]:
        with pytest.raises(qoslab.ScenarioError):
            qoslab.run(sc, seed=1, captures=[cap])
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize(
    "assignment, key, got",
    [
        ('tcp.ack_size="0B"', "tcp.ack_size", "got 0"),
        ('tcp.ack_size="65536B"', "tcp.ack_size", "got 65536"),
        ('flow[0].tcp.ack_size="5GB"', "flow[0].tcp.ack_size", "got 5000000000"),
    ],
)
def test_an_ack_size_beyond_an_ip_packet_is_refused_naming_its_key(assignment, key, got):
    """An ACK is 1..65535 bytes on the wire: a larger size wrapped when narrowed to 32 bits
    (5 GB became 705 MB ACKs and the flow stalled without a word), and a link's line keeps
    sizes in 16 bits (docs/performance.md, thirteenth round). 65535 itself is accepted."""
    sc = qoslab.load_scenario(SCENARIOS / "fdd-red-s1.toml")
    with pytest.raises(qoslab.ScenarioError) as e:
        sc.with_overrides([assignment])
    assert e.value.key == key and got in e.value.message, e.value
    assert sc.with_overrides(['tcp.ack_size="65535B"']).resolved["flows"][0]["tcp"]["ack_size_bytes"] == 65535


# -- group members by their output names, one unit grammar, errors that say what to set --------


def test_a_group_member_is_addressed_by_its_output_name():
    sc = qoslab.load_scenario(SCENARIOS / "fdd-red-s1.toml")
    t = sc.with_overrides(["link.access0.delay=5ms", "flow.ftp3.start=2s"], via="--set").table()
    access = next(link for link in t["link"] if link["name"] == "access{i}")
    assert access["delay"] == ["5ms", "44ms", "44ms", "44ms", "44ms"]
    flows = t["flow"][0]
    assert flows["start"][3] == "2s" and flows["start"][0] == "uniform(0s, 1s)"
    # The member really is changed: its RTT, and so its throughput, moves; the others' starts,
    # drawn per member, are the same draws as before.
    base = qoslab.run(sc, seed=2, tables=False).summary()["flows"]
    same = qoslab.run(sc.with_overrides(['flow.ftp3.start="uniform(0s, 1s)"']), seed=2, tables=False)
    assert [f["throughput_bps"] for f in same.summary()["flows"]] == [f["throughput_bps"] for f in base]
    short = sc.with_overrides(["link.access0.delay=1ms"])
    delays = {link["name"]: link["delay_ns"] for link in short.resolved["links"]}
    assert delays["access0"] == 1_000_000 and delays["access1"] == 44_000_000
    thr = [f["throughput_bps"] for f in qoslab.run(short, seed=2, tables=False).summary()["flows"]]
    assert thr[0] == max(thr) and thr[0] > 1.2 * base[0]["throughput_bps"], thr


@pytest.mark.parametrize(
    "assignment, needle",
    [
        ("link.access0.queue.limit=5pkts", "set it for the whole group with `link.access{i}.queue.limit=…`"),
        ("link.access7.delay=1ms", "no link named 'access7'"),
        ("link.nosuch=5", "no link named 'nosuch'"),
        (
            "duration=10s",
            'set measurement.end (and measurement.start) within the duration, e.g. measurement.end = "10s"',
        ),
        ("tcp.window=abc", 'expected a whole number, got string "abc"'),
        ("tcp.window=1.5", "expected a whole number"),
        (
            "link.bottleneck.bandwidth=1MB/s",
            "bps, b/s, bit/s or bits/s, after an optional prefix k, M, G or T",
        ),
        # an element named whole: was accepted and left unchanged
        (
            'link.bottleneck={a="r1",b="r2",bandwidth="5Mbps",delay="1ms"}',
            "`link.bottleneck` names a whole [[link]] table, not one of its keys: set a key of it "
            "(`link.bottleneck.KEY=…`), or replace it by position (`link[1]=…`)",
        ),
        ("node.r1=5", "`node.r1` names a whole [[node]] table"),
        # each was accepted: `queue` beside both directions' tables applied to neither, an
        # infinite max_th made RED never drop early, a segment within its header sent nothing
        (
            "link.bottleneck.queue.limit=3pkts",
            "the link sets queue_ab and queue_ba, so `queue` applies to neither direction",
        ),
        (
            "link.bottleneck.queue_ab.max_th=inf",
            "key `link.bottleneck.queue_ab.max_th`: max_th must be finite",
        ),
        ("tcp.packet_size=40B", "TCP/IP header: at least 41 bytes, got 40"),
        ("link.access0=1", "`link.access0` names a whole [[link]] table"),
        ("flow.ftp2=1", "`flow.ftp2` names a whole [[flow]] table"),
    ],
)
def test_override_errors_say_what_to_set(assignment, needle):
    sc = qoslab.load_scenario(SCENARIOS / "fdd-red-s1.toml")
    with pytest.raises(qoslab.ScenarioError) as e:
        sc.with_overrides([assignment], via="--set")
    assert needle in str(e.value), e.value


@pytest.mark.parametrize(
    "assignment, key, needle",
    [
        # a curve's infinite max_th was accepted (that curve never dropped early)
        ("in.max_th=inf", "in.max_th", "max_th must be finite, got inf"),
        ("out.max_th=inf", "out.max_th", "max_th must be finite, got inf"),
        # each curve error names the field it is about (all were named min_th)
        ("in.max_p=2", "in.max_p", "max_p must be in (0, 1], got 2"),
        ("out.min_th=-1", "out.min_th", "min_th must be >= 0, got -1"),
        ("in.min_th=70", "in.min_th", "min_th (70) must be smaller than max_th (60)"),
    ],
)
def test_a_rio_curve_error_names_its_field(assignment, key, needle):
    sc = qoslab.load_scenario(SCENARIOS / "ard-rio-4flows.toml")
    with pytest.raises(qoslab.ScenarioError) as e:
        sc.with_overrides([f"link[2].queue_ab.{assignment}"], via="--set")
    assert e.value.key == f"link[2].queue_ab.{key}", e.value
    assert needle in str(e.value), e.value


def test_an_override_error_names_the_key_as_typed_and_what_a_direction_queue_needs():
    """The core names an array element by position (``link[1]``); the user typed its name."""
    sc = qoslab.load_scenario(SCENARIOS / "examples" / "udp-sources.toml")
    with pytest.raises(qoslab.ScenarioError) as e:
        sc.with_overrides(["link.bottleneck.queue_ab.max_p=0.1"], via="--set")
    assert e.value.key == "link.bottleneck.queue_ab"
    assert str(e.value).endswith(
        "key `link.bottleneck.queue_ab`: missing field `type`; `link.bottleneck.queue_ab` replaces the "
        "link's queue whole: give its type, or set `link.bottleneck.queue.KEY`"
    ), e.value
    with pytest.raises(qoslab.ScenarioError) as e:  # by position, the key stays as the core gives it
        sc.with_overrides(["link[1].queue_ab.max_p=0.1"], via="--set")
    assert e.value.key == "link[1].queue_ab", e.value


@pytest.mark.parametrize(
    "text", ["10Mbps", "10Mb/s", "10Mbit/s", "10mbps", "10MBIT/S".lower(), "0.01Gbits/s"]
)
def test_one_rate_grammar_everywhere(text):
    sc = qoslab.load_scenario(SCENARIOS / "fdd-red-s1.toml").with_overrides(
        [f"link.bottleneck.bandwidth={text}"]
    )
    bottleneck = next(link for link in sc.resolved["links"] if link["name"] == "bottleneck")
    assert bottleneck["bandwidth_bps"] == 10_000_000


OSC = "\x1b]0;PWNED\x07"  # a terminal's "set the window title"


@pytest.mark.parametrize(
    "args",
    [
        ["run", "{d}/no" + OSC + "\nsecond line.toml"],  # a scenario path
        ["check", "{d}/no" + OSC + ".toml"],
        ["run", str(SCENARIOS / "fdd-red-s1.toml"), "--set", "duration=1" + OSC + "s"],  # a --set value
        ["run", str(SCENARIOS / "fdd-red-s1.toml"), "--set", "duration=1\ns"],
        ["run", "{d}/node.toml"],  # a value inside the scenario, quoted by the core
        ["sweep", str(SCENARIOS / "fdd-red-s1.toml"), "--grid", f"duration=1{OSC}s", "--store", "{d}/st"],
    ],
)
def test_error_lines_escape_control_characters(tmp_path, args):
    """Newlines and terminal escape sequences in a path, an option or a scenario's value are
    shown escaped in the one error line (they went to the terminal raw: an OSC sequence set the
    window's title, a newline made a second line)."""
    text = (SCENARIOS / "fdd-red-s1.toml").read_text()
    (tmp_path / "node.toml").write_text(text.replace('dst = "d{i}"', 'dst = "d\\u001b]0;PWNED\\u0007"', 1))
    p = subprocess.run(
        [QOSLAB, *(a.format(d=tmp_path) for a in args)], capture_output=True, text=True, timeout=60
    )
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr
    assert p.stderr.count("\n") == 1 and p.stderr.startswith("error: "), repr(p.stderr)
    assert not re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f]", p.stderr), repr(p.stderr)
    assert "\\x1b]0;PWNED\\x07" in p.stderr or "\\n" in p.stderr or "\\u{1b}" in p.stderr, p.stderr


def test_printable_escapes_every_control_once():
    from qoslab.errors import printable

    s = "a\nb\r\t\x1b[31m\x07\x7f\x9b\u202e\u2066 é ✓"
    assert printable(s) == "a\\nb\\r\\t\\x1b[31m\\x07\\x7f\\x9b\\u202e\\u2066 é ✓"
    assert printable(printable(s)) == printable(s)
    e = qoslab.errors.scenario_error("f\x1b.toml", "bad", key="k\n")
    assert str(e) == "f\\x1b.toml: key `k\\n`: bad"


@pytest.mark.parametrize(
    "old, new, key, shown",
    [
        (
            'name = "fdd-red-s1"',
            'name = "t\\u001b]0;pwn\\u0007"',
            "name",
            'scenario name "t\\u{1b}]0;pwn\\u{7}"',
        ),
        ('name = "ftp{i}"', 'name = "f{i}\\u001b[31m"', "flow[0].name", 'flow name "f0\\u{1b}[31m"'),
        ('name = "bottleneck"', 'name = "b\\tn"', "link[1].name", 'link name "b\\tn"'),
        ('name = "r1"', 'name = ""', "node[1].name", "node names must not be empty"),
        ('name = "ftp{i}"', 'name = " "', "flow[0].name", "flow names must not be empty"),
    ],
)
def test_a_name_that_is_empty_or_holds_control_characters_is_refused(tmp_path, old, new, key, shown):
    """Every output that names a scenario's parts (tables, progress lines, ns-2 scripts) prints
    the names: one with a control character (a title-setting OSC, a colour) reached the terminal
    raw, and an empty flow name was accepted. One line from every command, escaped."""
    text = (SCENARIOS / "fdd-red-s1.toml").read_text()
    assert old in text
    path = tmp_path / "esc.toml"
    path.write_text(text.replace(old, new, 1))
    for args in (["check"], ["run"], ["export-ns2"]):
        p = subprocess.run([QOSLAB, *args, str(path)], capture_output=True, text=True, timeout=120)
        assert p.returncode != 0 and "\x1b" not in p.stderr and "Traceback" not in p.stderr
        line = p.stderr.strip()
        assert "\n" not in line and f"key `{key}`" in line and shown in line, line


def test_a_name_with_a_format_character_is_printed_escaped(tmp_path):
    """Names may hold format characters (U+202E, a bidirectional override: not a control
    character, which the core refuses); `run` and `export-ns2` print them escaped."""
    text = (SCENARIOS / "fdd-red-s1.toml").read_text().replace('name = "ftp{i}"', 'name = "f{i}\\u202e"')
    path = tmp_path / "bidi.toml"
    path.write_text(text)
    short = ["--set", "duration=2s", "--set", "measurement.start=0s", "--set", "measurement.end=2s"]
    for args in (["run", str(path), *short], ["export-ns2", str(path)]):
        p = subprocess.run([QOSLAB, *args], capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        assert "\u202e" not in p.stdout and ("f0\\u202e" in p.stdout or "f0/u202e" in p.stdout), p.stdout[
            :1500
        ]


@pytest.mark.parametrize(
    "where, value, needle",
    [
        ("tcp", "self", "key `tcp.tcp.tcp.tcp.tcp.tcp.tcp.tcp.tcp.tcp.…`: nested deeper than 64 levels"),
        ("description", "deep", "nested deeper than 64 levels"),
        ("description", "count", "key `description`: cannot represent a value of type count"),
        ("description", "generator", "cannot represent a value of type generator"),
        ("description", "set", "cannot represent a value of type set"),
        ("description", "bytes", "cannot represent a value of type bytes"),
    ],
)
def test_a_python_table_that_cannot_be_a_scenario_is_one_error_not_a_crash(where, value, needle):
    """A table containing itself or nested 100,000 deep overflowed the stack (a segfault); an
    endless iterator was read until memory ran out; a set or bytes became an array."""
    import itertools

    d = qoslab.load_scenario(SCENARIOS / "fdd-red-s1.toml").table()
    nested: list = []
    for _ in range(100_000):
        nested = [nested]
    d[where] = {
        "self": d,
        "deep": nested,
        "count": itertools.count(),
        "generator": (x for x in ["a"]),
        "set": {"a"},
        "bytes": b"a",
    }[value]
    with pytest.raises(qoslab.ScenarioError) as e:
        qoslab.Scenario.from_table(d)
    assert needle in str(e.value) and "\n" not in str(e.value)
    d[where] = ("a", "b") if where == "description" else None  # a tuple is an array
    if where == "description":
        with pytest.raises(qoslab.ScenarioError, match="key `description`") as e:
            qoslab.Scenario.from_table(d)
        assert "cannot represent" not in str(e.value)  # an array, refused as a description


def test_a_set_into_a_value_and_an_integer_beyond_64_bits_are_scenario_errors():
    """Both are ``ScenarioError``, an ``Exception`` that names the key (docs/robustness.md)."""
    sc = qoslab.load_scenario(SCENARIOS / "fdd-red-s1.toml")
    with pytest.raises(qoslab.ScenarioError) as e:
        sc.with_overrides(["duration.x=1"], via="--set")
    assert str(e.value) == "--set: key `duration.x`: `duration` is a value ('100s'), not a table with keys"
    d = sc.table()
    d["tcp"] = {"window": 2**70}
    assert issubclass(qoslab.ScenarioError, Exception)  # `except Exception` catches both
    with pytest.raises(qoslab.ScenarioError) as big:
        qoslab.Scenario.from_table(d)
    assert "key `tcp.window`: the integer 1180591620717411303424 is out of range" in str(big.value)


def test_the_library_names_the_argument_it_refuses(tmp_path):
    """Misused, the library raised AttributeError ('str' object has no attribute 'validate'),
    read an override string one character at a time, let a UnicodeEncodeError or a bare
    OSError or ValueError through: each is now one line naming the argument."""
    sc = qoslab.load_scenario(SCENARIOS / "fdd-red-s1.toml")
    with pytest.raises(TypeError, match=r"^budget: expected a qoslab.Budget .*got str '8GB'"):
        qoslab.run(sc, budget="8GB")
    with pytest.raises(qoslab.ScenarioError) as e:
        sc.with_overrides("duration=3s")  # type: ignore[arg-type]
    assert str(e.value) == (
        "override 'duration=3s': expected a list of KEY=VALUE strings, got one string: wrap it in a list"
    )
    with pytest.raises(qoslab.ScenarioError) as e:
        qoslab.Scenario.from_toml('name = "\udcff"\n', "mine")
    assert str(e.value) == "mine: not Unicode text: U+DCFF at offset 8"
    with pytest.raises(qoslab.ScenarioError) as e:
        qoslab.Scenario.from_toml(b"name = 'x'", "raw")  # type: ignore[arg-type]
    assert str(e.value) == "raw: expected the scenario's TOML text (str), got bytes"
    (tmp_path / "adir").mkdir()
    for captures, needle in [
        ([("bottleneck", "ab", str(tmp_path / "adir"))], f"captures[0]: {tmp_path / 'adir'} is a folder"),
        ([("bottleneck", "ab", str(tmp_path / "no" / "x.pcap"))], "its folder"),
        (["bottleneck"], "captures[0]: expected (link"),
    ]:
        with pytest.raises(ValueError, match=re.escape(needle)):
            qoslab.run(sc, captures=captures)  # type: ignore[arg-type]
    with pytest.raises(qoslab.ScenarioError) as e:
        qoslab.load_scenario("base\x00.toml")
    assert str(e.value) == "'base\\x00.toml': the path holds a NUL byte, which no file name can"
