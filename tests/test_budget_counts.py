"""The memory budget counts everything a run can allocate (qoslab.budget): FQ-CoDel's flow
queues, trace rows (one shared copy per file), arrival processes' connection slots (built as
needed), packet captures (stopped at their limit as they are written) and the process's own
ceiling (``ulimit -v``, the cgroup's memory limit). Each estimate is checked against a peak
measured in a child process."""

import resource
import struct
import subprocess
import sys
from pathlib import Path

import pytest

import qoslab
from conftest import QOSLAB, one_line_error
from qoslab.budget import (
    RECORD_BYTES,
    ROW_BYTES,
    SLOT_FACTOR,
    SPILL_AFTER,
    Budget,
    _cgroup_limit,
    estimate,
)

TWO_NODES = """
name = "{name}"
duration = "{duration}"
[measurement]
bottleneck = "l"
interval = "100ms"
[[node]]
name = "a"
[[node]]
name = "b"
[[link]]
name = "l"
a = "a"
b = "b"
bandwidth = "{bandwidth}"
delay = "1ms"
"""


#: A child's run in the core alone (no numpy or pandas: their pages, which the kernel may drop
#: and read again under memory pressure, would blur a difference of peaks).
RUN_IN_CORE = (
    "import qoslab\nfrom qoslab import _core\n_core.simulate_resolved(qoslab.load_scenario({!r}).core, 1)"
)


#: Prints the peak RSS (kB) of the process's own memory: VmHWM, not getrusage's ru_maxrss, which
#: a child started by fork and exec inherits from its parent (here pytest, hundreds of MB).
_PRINT_HWM = "\nprint(next(x.split()[1] for x in open('/proc/self/status') if x.startswith('VmHWM:')))"


def _peak(code: str) -> tuple[float, list[str]]:
    """Runs ``code`` in a fresh interpreter; (its peak RSS in bytes, the lines it printed)."""
    p = subprocess.run(
        [sys.executable, "-c", code + _PRINT_HWM],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    lines = p.stdout.split()
    return float(lines[-1]) * 1024, lines[:-1]


def test_fq_codel_flow_queues_are_counted_as_they_are(tmp_path):
    """10 links with FQ-CoDel's largest `flows` (65,536 queues a direction): the estimate of
    what the queues add is within 25 % of the peak they add (it was 4 kB a direction)."""
    text = TWO_NODES.format(name="fq", duration="0.2s", bandwidth="10Mbps").replace(
        '[[link]]\nname = "l"\na = "a"\nb = "b"',
        '[[node]]\nname = "c{i}"\ncount = 10\n[[link]]\nname = "l"\na = "a"\nb = "b"',
    )
    text += '[[link]]\nname = "x{i}"\ncount = 10\na = "c{i}"\nb = "b"\nbandwidth = "10Mbps"\ndelay = "1ms"\n'
    text += 'queue = { type = "fq_codel", flows = 65536 }\n'
    text += '[[flow]]\nname = "f"\nsrc = "a"\ndst = "b"\ntype = "tcp"\n'
    p = tmp_path / "fq.toml"
    p.write_text(text)
    plain = tmp_path / "plain.toml"
    plain.write_text(text.replace('queue = { type = "fq_codel", flows = 65536 }\n', ""))
    code = RUN_IN_CORE
    with_fq, _ = _peak(code.format(str(p)))
    without, _ = _peak(code.format(str(plain)))
    sc = qoslab.load_scenario(p)
    est = estimate(sc.outline, [], sc.core)
    assert est.queue_bytes == 20 * 65536 * qoslab._core.FQ_CODEL_QUEUE_BYTES
    added = with_fq - without
    assert 0.75 * added <= est.queue_bytes <= 1.25 * added, (added, est.queue_bytes)
    assert est.memory_bytes - estimate(sc.outline, []).memory_bytes == est.queue_bytes


def test_a_trace_named_by_many_flows_is_held_once(tmp_path):
    """Eight trace flows naming one file (two of them spelling it differently) share one copy
    of its rows: the run's peak grows by less than one copy over a single flow's, and the
    estimate counts the rows once."""
    rows = 400_000
    with open(tmp_path / "t.csv", "w") as f:
        f.writelines(f"{i * 1e-6:.6f},100\n" for i in range(rows))
    base = TWO_NODES.format(name="tr", duration="0.01s", bandwidth="10Mbps")

    def flows(n: int) -> str:
        return "".join(
            f'[[flow]]\nname = "t{k}"\nsrc = "a"\ndst = "b"\ntype = "trace"\n'
            f'trace = "{"./t.csv" if k % 2 else "t.csv"}"\n'
            for k in range(n)
        )

    (tmp_path / "one.toml").write_text(base + flows(1))
    (tmp_path / "eight.toml").write_text(base + flows(8))
    code = RUN_IN_CORE
    one, _ = _peak(code.format(str(tmp_path / "one.toml")))
    eight, _ = _peak(code.format(str(tmp_path / "eight.toml")))
    copy = rows * 16  # a row: time (8 bytes) and size (4), padded
    assert eight - one < copy, (one, eight, copy)
    sc = qoslab.load_scenario(tmp_path / "eight.toml")
    assert estimate(sc.outline, [], sc.core).trace_bytes == copy


def test_arrival_slots_are_built_as_needed_and_counted_up_to_max_active(tmp_path):
    """`max_active = 1000000` (the schema's limit) with a handful of arrivals: the run builds
    only the slots it uses (it built all million, 2.5 GB, and sampled them all); the estimate
    counts every slot it could build; and the results are those of a small `max_active`."""
    text = TWO_NODES.format(name="act", duration="2s", bandwidth="10Mbps")
    text += '[[arrivals]]\nname = "web"\nsrc = "a"\ndst = "b"\narrival_rate = 5\nsize = "20KB"\n'
    small = tmp_path / "small.toml"
    small.write_text(text + "max_active = 64\n")
    big = tmp_path / "big.toml"
    big.write_text(text + "max_active = 1000000\n")
    code = (
        "import qoslab, numpy, pandas, time, json\nfrom qoslab.budget import Budget\n"
        "t = time.perf_counter(); r = qoslab.run({!r}, budget=Budget(max_memory=0))\n"
        "print(time.perf_counter() - t)\n"
        "print(json.dumps(r.summary()['transfers'], sort_keys=True).replace(' ', ''))\n"
        "print(r.columns('transfers')['fct_s'].tobytes().hex() or '-')"
    )
    small_rss, (small_wall, small_sum, small_fct) = _peak(code.format(str(small)))
    big_rss, (big_wall, big_sum, big_fct) = _peak(code.format(str(big)))
    assert (big_sum, big_fct) == (small_sum, small_fct)
    assert big_rss - small_rss < 20e6, (small_rss, big_rss)
    assert float(big_wall) < float(small_wall) + 2.0, (small_wall, big_wall)
    sc = qoslab.load_scenario(big)
    est = estimate(sc.outline, [], sc.core)
    assert est.slot_bytes == SLOT_FACTOR * 1_000_000 * sc.core.slot_bytes()[0]


def test_arrival_slot_estimate_bounds_what_busy_slots_take(tmp_path):
    """Every one of 20,000 slots busy at once (long transfers arriving far faster than they
    finish): what the slots add to the core's peak is at most the estimate and more than half
    of it."""
    text = TWO_NODES.format(name="busy", duration="0.4s", bandwidth="1Mbps")
    text += '[[arrivals]]\nname = "web"\nsrc = "a"\ndst = "b"\narrival_rate = 100000\nsize = "1MB"\n'
    busy = tmp_path / "busy.toml"
    busy.write_text(text + "max_active = 20000\n")
    few = tmp_path / "few.toml"
    few.write_text(text + "max_active = 10\n")
    code = (
        "import qoslab\nfrom qoslab import _core\n"
        "r = _core.simulate_resolved(qoslab.load_scenario({!r}).core, 1)\n"
        "print(int(r['processes']['peak_active'][0]))"
    )
    busy_rss, (peak,) = _peak(code.format(str(busy)))
    few_rss, _ = _peak(code.format(str(few)))
    assert int(peak) == 20_000
    sc = qoslab.load_scenario(busy)
    est = estimate(sc.outline, [], sc.core).slot_bytes
    added = busy_rss - few_rss
    assert est / 2 <= added <= est, (added, est)


def _pcap_records(path: Path) -> tuple[int, int]:
    """(records, bytes) of a pcap file, every record read through to the end (a valid file)."""
    data = path.read_bytes()
    assert struct.unpack_from("<I", data)[0] == 0xA1B23C4D
    at, n = 24, 0
    while at < len(data):
        caplen = struct.unpack_from("<I", data, at + 8)[0]
        assert at + 16 + caplen <= len(data), "a record cut short"
        at += 16 + caplen
        n += 1
    return n, len(data)


def test_a_capture_stops_at_its_limit_as_it_is_written(tmp_path):
    """100-byte packets from a trace filling a 100 Mbit/s link for 0.25 s: the up-front
    estimate (from the flow's nominal 1000-byte packets) passes 1 MB, the 31,250 packets would
    take 1.375 MB; the capture stops at 1 MB with a valid file and one warning line (before,
    nothing stopped it: 11 MB under `--max-capture 4MB` in 2 s), and the run goes on to its end."""
    with open(tmp_path / "t.csv", "w") as f:
        f.writelines(f"{i * 1e-6:.6f},100\n" for i in range(250_000))
    text = TWO_NODES.format(name="cap", duration="0.25s", bandwidth="100Mbps")
    text += '[[flow]]\nname = "t"\nsrc = "a"\ndst = "b"\ntype = "trace"\ntrace = "t.csv"\n'
    text += '[[capture]]\nlink = "l"\ndirection = "ab"\nfile = "l.pcap"\n'
    s = tmp_path / "cap.toml"
    s.write_text(text)
    out = tmp_path / "o"
    p = subprocess.run(
        [QOSLAB, "run", str(s), "--max-capture", "1MB", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    warn = [x for x in p.stderr.splitlines() if "captures stopped" in x]
    assert len(warn) == 1 and "1 MB (--max-capture)" in warn[0], p.stderr
    records, size = _pcap_records(out / "l.pcap")
    assert size <= 1_000_000 and size > 1_000_000 - 44 and records == (size - 24) // 44
    sc = qoslab.load_scenario(s)
    r = qoslab.run(sc, out=tmp_path / "o2", budget=Budget(max_capture=1e6))
    assert r.capture_stopped is not None and r.raw["capture_bytes"] == size
    assert int(r.raw["packet_hops"]) == 31_250  # the run itself went on: 0.25 s x 125,000 pkt/s


def test_ulimit_v_is_a_ceiling_and_a_huge_scenario_is_refused_in_one_line(tmp_path):
    """3 x 10^6 flows under a 1.5 GB ``ulimit -v``: `check` and `run` refuse in one line
    naming the largest group and the limit, before expanding anything (before: the core's
    allocation failed and aborted the process, or Python's MemoryError gave a traceback)."""
    text = TWO_NODES.format(name="huge", duration="1s", bandwidth="10Mbps")
    for k in range(3):
        text += f'[[flow]]\nname = "f{k}_{{i}}"\ncount = 1000000\nsrc = "a"\ndst = "b"\ntype = "tcp"\n'
    s = tmp_path / "huge.toml"
    s.write_text(text)
    limit = 1_500_000_000

    def under_limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    for cmd in ("check", "run"):
        p = subprocess.run(
            [QOSLAB, cmd, str(s)], capture_output=True, text=True, timeout=120, preexec_fn=under_limit
        )
        line = one_line_error(p)
        assert "huge.toml" in line and "key `flow[0].count`" in line and "ulimit -v" in line, line
    # A scenario that fits is not refused under the same limit, and its run's budget is the
    # room left under it.
    small = tmp_path / "small.toml"
    small.write_text(text.replace("count = 1000000", "count = 2"))
    p = subprocess.run([QOSLAB, "check", str(small)], capture_output=True, text=True, preexec_fn=under_limit)
    assert p.returncode == 0 and "6 flows" in p.stdout, p.stderr
    code = (
        "import resource; resource.setrlimit(resource.RLIMIT_AS, (1_500_000_000, 1_500_000_000))\n"
        "from qoslab.budget import Budget\nprint(*Budget(max_memory=100e9).memory_limit(), sep='|')"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    room, what = p.stdout.strip().split("|")
    assert 0 < float(room) < 1.5e9 and "ulimit -v" in what, p.stdout


@pytest.mark.parametrize("v2", [True, False])
def test_the_cgroup_memory_limit_is_a_ceiling(tmp_path, v2):
    """The tightest limit of the process's cgroup and its ancestors, less their usage (v2
    memory.max/current, v1 memory.limit_in_bytes/usage_in_bytes); "max" and v1's 2^63 are none."""
    proc = tmp_path / "cgroup"
    root = tmp_path / "fs"
    if v2:
        proc.write_text("0::/a/b\n")
        leaf, parent = root / "a" / "b", root / "a"
        names = ("memory.max", "memory.current")
    else:
        proc.write_text("4:memory:/a/b\n3:cpu:/x\n")
        leaf, parent = root / "memory" / "a" / "b", root / "memory" / "a"
        names = ("memory.limit_in_bytes", "memory.usage_in_bytes")
    leaf.mkdir(parents=True)
    (leaf / names[0]).write_text("max\n" if v2 else "9223372036854771712\n")
    (leaf / names[1]).write_text("100\n")
    assert _cgroup_limit(root, proc) is None
    (parent / names[0]).write_text("5000000000\n")
    (parent / names[1]).write_text("1000000000\n")
    assert _cgroup_limit(root, proc) == 4e9
    (leaf / names[0]).write_text("2000000000\n")
    assert _cgroup_limit(root, proc) == 2e9 - 100


def test_finished_transfers_memory_stays_flat(tmp_path):
    """Finished transfers' records past SPILL_AFTER go to a spill file: 10,000 and ~100,000
    transfers of 2 KB at 20,000 a second (spilling past 5,000), the peak of
    `qoslab.run(out=...)` (read back 4,096 rows at a time) grows by less than half of what
    the same runs add with every record held in memory (the mechanism off), and the estimate
    counts the held records only."""
    text = TWO_NODES.format(name="rec", duration="{}", bandwidth="1Gbps")
    text += '[[arrivals]]\nname = "web"\nsrc = "a"\ndst = "b"\narrival_rate = 20000\nsize = "2KB"\n'
    added = {}
    for after in (5_000, 10**12):
        peaks = []
        for d in ("0.5s", "5s"):
            s = tmp_path / f"rec{d}.toml"
            s.write_text(text.format(d))
            out = tmp_path / f"{after}-{d}"
            code = (  # chunks of 4,096 rows: below the 100,000 transfers the chunk would grow too
                "import qoslab, qoslab.budget, qoslab.runs.transfers\n"
                "qoslab.runs.transfers.CHUNK_ROWS = 4096\n"
                f"qoslab.budget.SPILL_AFTER = {after}\n"
            )
            rss, _ = _peak(code + f"qoslab.run({str(s)!r}, out={str(out)!r})")
            peaks.append(rss)
        added[after] = peaks[1] - peaks[0]
    assert added[5_000] < added[10**12] / 2, added
    # a million transfers (50 s) are counted as SPILL_AFTER held records, not a million
    (tmp_path / "long.toml").write_text(text.format("50s"))
    long, short = (qoslab.load_scenario(tmp_path / n) for n in ("long.toml", "rec0.5s.toml"))
    est, small = (estimate(x.outline, [], x.core) for x in (long, short))
    assert est.transfers > 10 * SPILL_AFTER
    series = ROW_BYTES * (est.series_rows - small.series_rows)
    assert est.memory_bytes - small.memory_bytes - series <= RECORD_BYTES * SPILL_AFTER


def _cbr_line(tmp_path: Path, name: str, duration: str, timing: str) -> Path:
    """One 1 Gbit/s link carrying a 1 Gbit/s CBR of 100-byte packets, the link's `timing`
    (delay or jitter) as given."""
    text = TWO_NODES.format(name=name, duration=duration, bandwidth="1Gbps").replace('delay = "1ms"', timing)
    text += (
        '[[flow]]\nname = "cbr"\nsrc = "a"\ndst = "b"\ntype = "cbr"\nrate = "1Gbps"\npacket_size = "100B"\n'
    )
    s = tmp_path / f"{name}.toml"
    s.write_text(text)
    return s


@pytest.mark.parametrize("timing", ['delay = "1000000s"', 'delay = "1ms"\njitter = "1000000s"'])
def test_packets_in_a_propagation_line_are_counted_and_refused_up_front(tmp_path, timing):
    """A 1 Gbit/s CBR of 100-byte packets over a link of 10^6 s of delay (or jitter) holds every
    packet it sends in the link's line: 2.5 million in 2 s. Under QOSLAB_MAX_MEMORY=300MB the run
    is refused in one line naming the file, the link's key, the estimate and the limit (it ran,
    peaking at 356 MB); under a `ulimit -v` the budget reads, a 20 s run is refused the same way
    (it aborted on a failed allocation of 2 GB)."""
    import os

    key = "link.jitter" if "jitter" in timing else "link.delay"
    s = _cbr_line(tmp_path, "line", "2s", timing)
    env = {**os.environ, "QOSLAB_MAX_MEMORY": "300MB"}
    line = one_line_error(
        subprocess.run([QOSLAB, "run", str(s)], capture_output=True, text=True, env=env, timeout=60)
    )
    assert "line.toml" in line and f"key `{key}`" in line and "link 'l'" in line, line
    assert "2.5e+06 packets" in line and "above 300 MB" in line, line
    long = _cbr_line(tmp_path, "long", "20s", timing)

    def under_limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2_000_000_000, 2_000_000_000))

    p = subprocess.run(
        [QOSLAB, "run", str(long)], capture_output=True, text=True, timeout=60, preexec_fn=under_limit
    )
    line = one_line_error(p)
    assert "long.toml" in line and f"key `{key}`" in line and "ulimit -v" in line, line


def test_the_line_estimate_bounds_what_the_lines_take(tmp_path):
    """What 625,000 packets held in a line add to the core's peak (against the same run with
    1 ms of delay) is at most the estimate and more than half of it; a packet's slot and line
    entry, as the core reports them, fit in LINE_PACKET_BYTES."""
    from qoslab.budget import LINE_FACTOR, LINE_PACKET_BYTES

    held = _cbr_line(tmp_path, "held", "0.5s", 'delay = "1000000s"')
    passing = _cbr_line(tmp_path, "passing", "0.5s", 'delay = "1ms"')
    held_rss, _ = _peak(RUN_IN_CORE.format(str(held)))
    passing_rss, _ = _peak(RUN_IN_CORE.format(str(passing)))
    sc = qoslab.load_scenario(held)
    est = estimate(sc.outline, [], sc.core)
    assert est.line_packets == 625_000 and est.line_link == "l" and est.line_key == "link.delay"
    counted = LINE_FACTOR * LINE_PACKET_BYTES * est.line_packets
    assert counted / 2 <= held_rss - passing_rss <= counted, (held_rss - passing_rss, counted)
    short = qoslab.load_scenario(passing)
    assert estimate(short.outline, [], short.core).line_packets <= 2 * 1_250  # each direction
    mem = qoslab.run(passing, budget=Budget(max_memory=0)).raw["memory_bytes"]
    assert mem["packet_slot"] + mem["line_entry"] <= LINE_PACKET_BYTES


def _cbr_into_a_queue(tmp_path: Path, name: str, limit: str) -> Path:
    """A 10 Gbit/s CBR of 100-byte packets into a 1 Mbit/s link whose drop-tail queue takes
    `limit`: 0.2 s of it are 2.5 million packets, nearly all waiting."""
    text = TWO_NODES.format(name=name, duration="0.2s", bandwidth="1Mbps")
    text += f'queue = {{ type = "droptail", limit = "{limit}" }}\n'
    text += '[[flow]]\nname = "cbr"\nsrc = "a"\ndst = "b"\ntype = "cbr"\n'
    text += 'rate = "10Gbps"\npacket_size = "100B"\n'
    s = tmp_path / f"{name}.toml"
    s.write_text(text)
    return s


def test_packets_waiting_in_a_queue_are_counted_and_refused_up_front(tmp_path):
    """A source faster than its link fills the queue up to its limit, which may be 2^32 packets:
    the estimate left them out, and a run it let through died on a failed allocation (a Rust
    abort, its results lost). What 2.5 million waiting packets add to the core's peak (against a
    queue of 50) is at most the estimate and more than a third of it; under
    QOSLAB_MAX_MEMORY=300MB the run is refused in one line naming the key."""
    import os

    from qoslab.budget import LINE_FACTOR, QUEUE_PACKET_BYTES

    deep = _cbr_into_a_queue(tmp_path, "deep", "4000000000pkts")
    shallow = _cbr_into_a_queue(tmp_path, "shallow", "50pkts")
    sc = qoslab.load_scenario(deep)
    est = estimate(sc.outline, [], sc.core)
    assert est.queued_packets == pytest.approx(2.5e6)
    small = qoslab.load_scenario(shallow)
    assert estimate(small.outline, [], small.core).queued_packets == 100  # both directions' limits
    deep_rss, _ = _peak(RUN_IN_CORE.format(str(deep)))
    shallow_rss, _ = _peak(RUN_IN_CORE.format(str(shallow)))
    counted = LINE_FACTOR * QUEUE_PACKET_BYTES * est.queued_packets
    assert counted / 3 <= deep_rss - shallow_rss <= counted, (deep_rss - shallow_rss, counted)
    print(f"waiting packets: {deep_rss - shallow_rss:.4g} bytes against {counted:.4g} counted")
    env = {**os.environ, "QOSLAB_MAX_MEMORY": "300MB"}
    line = one_line_error(
        subprocess.run([QOSLAB, "run", str(deep)], capture_output=True, text=True, env=env, timeout=60)
    )
    assert "deep.toml" in line and "key `link.queue.limit`" in line and "2.5e+06 packets waiting" in line
